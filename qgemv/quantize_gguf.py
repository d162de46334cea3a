"""Quantize a whole GGUF model file the way llama.cpp's ``llama-quantize`` does.

:func:`quantize_gguf` rewrites the weights of a GGUF in a llama.cpp file type (``q4_0``,
``q4_K_M``, ...), copying everything else.  Which ggml type each tensor gets is decided as
``llama_tensor_get_type`` in llama.cpp's ``src/llama-quant.cpp`` decides it; the port is
:func:`plan_types` and the functions it calls, kept in the C's order so the two read side by
side:

1. ``tensor_allows_quantization``: only tensors of 2 or more dims whose name ends in
   ``weight`` and that are not norms, expert gates, positional embeddings, ... are quantized;
   everything else (1-D norms and biases) is copied unchanged.
2. ``llama_tensor_get_type_impl`` (skipped with ``pure=True``, and for the float file types):
   the per-tensor rules of every file type: ``output.weight`` (and ``token_embd.weight`` when
   the embeddings are tied) to q6_K; the ``*_M`` / ``*_S`` / ``*_L`` mixes raising attn_v,
   ffn_down, attn_output, attn_qkv in chosen layers (``use_more_bits``); the 70B, Falcon and
   8-expert special cases.  The counters ``i_attention_wv`` / ``i_ffn_down`` advance in
   llama.cpp's tensor order (``weight_name_comparer``: layer number, then name), which is also
   the order tensors are written in.
3. ``tensor_type_fallback``: a tensor whose row length is not a multiple of the chosen type's
   block size falls back (q4_K -> q5_0, q5_K -> q5_1, q6_K -> q8_0, q2_K/q3_K -> q4_0,
   256-block IQ types -> iq4_nl, then f16 when even that does not divide).

Like llama-quantize, the file gets ``general.file_type`` (the ``LLAMA_FTYPE`` value) and
``general.quantization_version`` (2), plus ``quantize.imatrix.*`` keys when an importance matrix
was used; every other key is copied with its exact GGUF type.

Importance matrices (``--imatrix``) are read in both of llama.cpp's formats
(:func:`load_imatrix`): the GGUF files of ``llama-imatrix`` (tensors ``<weight>.in_sum2`` and
``<weight>.counts``; the importance of a column is ``in_sum2 / counts``) and the legacy binary
``.dat`` files.
"""
from __future__ import annotations

import math
import os
import re
import struct
import sys
import time
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from . import _formats
from ._formats import QUANTIZE
from .gguf import GGUFFile, GGUFWriter, TensorInfo, ValueType, load_gguf
from .qmatrix import QMatrix

GGML_QNT_VERSION = 2             # general.quantization_version written by llama-quantize
CHUNK_FLOATS = 16 * 1024 * 1024  # rows are dequantized and quantized 64 MiB of float32 at a time


class FileType(NamedTuple):
    """A llama.cpp file type: ``general.file_type`` value and the default tensor type."""
    name: str      # llama-quantize's name in ggml's spelling: "q4_K_M"
    ftype: int     # LLAMA_FTYPE_* (include/llama.h)
    default: str   # llama_ftype_get_default_type


# llama-quantize's QUANT_OPTIONS, ggml spelling (include/llama.h values)
FILE_TYPES = {ft.name: ft for ft in (
    FileType("f32", 0, "f32"), FileType("f16", 1, "f16"), FileType("bf16", 32, "bf16"),
    FileType("q4_0", 2, "q4_0"), FileType("q4_1", 3, "q4_1"), FileType("q8_0", 7, "q8_0"),
    FileType("q5_0", 8, "q5_0"), FileType("q5_1", 9, "q5_1"),
    FileType("q2_K", 10, "q2_K"), FileType("q2_K_S", 21, "q2_K"),
    FileType("q3_K_S", 11, "q3_K"), FileType("q3_K_M", 12, "q3_K"), FileType("q3_K_L", 13, "q3_K"),
    FileType("q4_K_S", 14, "q4_K"), FileType("q4_K_M", 15, "q4_K"),
    FileType("q5_K_S", 16, "q5_K"), FileType("q5_K_M", 17, "q5_K"), FileType("q6_K", 18, "q6_K"),
    FileType("iq2_xxs", 19, "iq2_xxs"), FileType("iq2_xs", 20, "iq2_xs"),
    FileType("iq2_s", 28, "iq2_xs"), FileType("iq2_m", 29, "iq2_s"),
    FileType("iq3_xxs", 23, "iq3_xxs"), FileType("iq3_xs", 22, "iq3_s"),
    FileType("iq3_s", 26, "iq3_s"), FileType("iq3_m", 27, "iq3_s"),
    FileType("iq1_s", 24, "iq1_s"), FileType("iq1_m", 31, "iq1_m"),
    FileType("iq4_nl", 25, "iq4_nl"), FileType("iq4_xs", 30, "iq4_xs"),
    FileType("tq1_0", 36, "tq1_0"), FileType("tq2_0", 37, "tq2_0"),
    FileType("mxfp4_moe", 38, "mxfp4"), FileType("nvfp4", 39, "nvfp4"),
    FileType("q1_0", 40, "q1_0"), FileType("q2_0", 41, "q2_0"),
)}
# llama-quantize's aliases: a bare K type means its _M mix
FILE_TYPE_ALIASES = {"q3_K": "q3_K_M", "q4_K": "q4_K_M", "q5_K": "q5_K_M"}


def file_type(name: str) -> FileType:
    """The llama.cpp file type called ``name`` (case-insensitive, llama-quantize's names)."""
    by_lower = {k.lower(): v for k, v in FILE_TYPES.items()}
    by_lower.update({k.lower(): FILE_TYPES[v] for k, v in FILE_TYPE_ALIASES.items()})
    ft = by_lower.get(str(name).lower())
    if ft is None:
        known = ", ".join(list(FILE_TYPES) + list(FILE_TYPE_ALIASES))
        raise ValueError(f"unknown file type {name!r}; llama-quantize's types are: {known}")
    return ft


# ---------------------------------------------------------------------------------------------
# tensor categories and the model facts the rules read


CAT_TOKEN_EMBD, CAT_ATTN_Q, CAT_ATTN_V, CAT_ATTN_K, CAT_ATTN_QKV, CAT_ATTN_KV_B = range(6)
CAT_ATTN_OUTPUT, CAT_FFN_UP, CAT_FFN_GATE, CAT_FFN_DOWN, CAT_OUTPUT, CAT_OTHER = range(6, 12)


def tensor_category(name: str) -> int:
    """llama.cpp's ``tensor_get_category``: broad roles by name (first match wins)."""
    if name == "output.weight":
        return CAT_OUTPUT
    if name in ("token_embd.weight", "per_layer_token_embd.weight"):
        return CAT_TOKEN_EMBD
    for needle, cat in (("attn_qkv.weight", CAT_ATTN_QKV), ("attn_kv_b.weight", CAT_ATTN_KV_B),
                        ("attn_v.weight", CAT_ATTN_V), ("attn_k.weight", CAT_ATTN_K),
                        ("attn_q.weight", CAT_ATTN_Q), ("attn_output.weight", CAT_ATTN_OUTPUT),
                        ("ffn_up", CAT_FFN_UP), ("ffn_gate", CAT_FFN_GATE),
                        ("ffn_down", CAT_FFN_DOWN)):
        if needle in name:
            return cat
    return CAT_OTHER


def _is_attn_v(cat: int) -> bool:
    return cat in (CAT_ATTN_V, CAT_ATTN_QKV, CAT_ATTN_KV_B)


@dataclass
class ModelFacts:
    """The hyperparameters ``llama_tensor_get_type`` looks at."""
    arch: str
    n_layer: int
    n_head: int
    n_head_kv: int
    n_expert: int

    @classmethod
    def from_gguf(cls, f: GGUFFile) -> ModelFacts:
        arch = f.architecture or ""

        def first(key, default=0):
            v = f.metadata.get(f"{arch}.{key}", default)
            if isinstance(v, (list, tuple, np.ndarray)):  # per-layer arrays: layer 0, as n_gqa()
                v = v[0] if len(v) else default
            return int(v)

        n_head = first("attention.head_count")
        return cls(arch, first("block_count"), n_head, first("attention.head_count_kv", n_head),
                   first("expert_count"))

    @property
    def n_gqa(self) -> int:
        return self.n_head // self.n_head_kv if self.n_head_kv else 0

    @property
    def is_70b(self) -> bool:
        # llama-model.cpp: a llama with 80 layers is LLM_TYPE_70B unless it has no GQA (65B)
        return self.arch == "llama" and self.n_layer == 80 and self.n_head != self.n_head_kv


def n_dims(info: TensorInfo) -> int:
    """``ggml_n_dims``: the rank without trailing dimensions of 1."""
    dims = list(info.dims)
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    return len(dims)


# names llama.cpp never quantizes (tensor_allows_quantization): substrings, then exact names
_KEEP_SUBSTRINGS = (
    "_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
    "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight",
    "indexer.q_proj.weight", "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight",
    "time_mix_w2.weight", "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight",
    "time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight",
    "time_mix_g2.weight", "time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
    "time_mix_lerp_fused.weight", "attn_rel_b.weight", ".position_embd", "sam.pos_embd",
    "sam.neck.", "sam.net_", ".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook",
    "mm.a.code_embd")
_KEEP_NAMES = ("position_embd.weight", "token_types.weight")


def allows_quantization(info: TensorInfo) -> bool:
    """llama.cpp's ``tensor_allows_quantization`` (default params: the output is quantized)."""
    name = info.name
    if n_dims(info) < 2 or not name.endswith("weight") or name in _KEEP_NAMES:
        return False
    return not any(s in name for s in _KEEP_SUBSTRINGS)


def llama_order(names) -> list[str]:
    """llama.cpp's ``weight_name_comparer`` order: layer number (none first), then name."""
    def key(name):
        m = re.match(r"blk\.(-?\d+)\.", name)
        return (int(m.group(1)) if m else -1, name)
    return sorted(names, key=key)


# ---------------------------------------------------------------------------------------------
# llama_tensor_get_type


class _Counters:
    """quantize_state_impl's counters, advanced as tensors are visited."""

    def __init__(self, names: list[str], n_layer: int):
        cats = [tensor_category(n) for n in names]
        self.n_attention_wv = sum(_is_attn_v(c) for c in cats)
        self.n_ffn_down = self.n_ffn_gate = self.n_ffn_up = n_layer
        self.i_attention_wv = self.i_ffn_down = self.i_ffn_gate = self.i_ffn_up = 0
        self.has_tied_embeddings = CAT_OUTPUT not in cats


def use_more_bits(i_layer: int, n_layers: int) -> bool:
    """The layers the _M mixes give more bits: the first and last eighth, and every third."""
    return (i_layer < n_layers // 8 or i_layer >= 7 * n_layers // 8
            or _cmod(i_layer - n_layers // 8, 3) == 2)


def _cmod(a: int, b: int) -> int:
    return int(math.fmod(a, b))  # C's %: the sign of the dividend


def _layer_info(i_layer: int, n_layer: int, name: str, m: ModelFacts) -> tuple[int, int]:
    if m.n_expert > 1:  # experts are not consecutive: read the layer from the name
        found = re.match(r"blk\.(-?\d+)\.", name)
        if not found:
            raise ValueError(f"failed to determine layer for tensor {name}")
        i_layer = int(found.group(1))
        if not 0 <= i_layer < n_layer:
            raise ValueError(f"bad layer {i_layer} for tensor {name}; must be in [0, {n_layer})")
    return i_layer, n_layer


def _block_size(qtype: str) -> int:
    return _formats.lookup(qtype).block_size


def _type_impl(qs: _Counters, new_type: str, info: TensorInfo, ft: str, cat: int,
               m: ModelFacts, has_imatrix: bool) -> str:
    """``llama_tensor_get_type_impl``, branch for branch."""
    name, arch, nx = info.name, m.arch, info.dims[0]
    iq12 = ("iq2_xxs", "iq2_xs", "iq1_s", "iq2_s", "iq2_m", "iq1_m")
    if cat == CAT_OUTPUT or (qs.has_tied_embeddings and cat == CAT_TOKEN_EMBD):
        if ft == "mxfp4_moe" or arch == "falcon" or nx % _block_size(new_type):
            new_type = "q8_0"
        elif ft in ("iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s", "iq2_s", "iq2_m", "iq1_m"):
            new_type = "q5_K"
        elif new_type != "q8_0":
            new_type = "q6_K"
    elif ft == "mxfp4_moe":
        moe_role = cat in (CAT_FFN_UP, CAT_FFN_GATE, CAT_FFN_DOWN)
        expert = len(info.dims) > 2 and info.dims[2] > 1
        new_type = "mxfp4" if expert and (arch != "bailingmoe3" or moe_role) else "q8_0"
    elif cat == CAT_TOKEN_EMBD:
        if ft in ("iq2_xxs", "iq2_xs", "iq1_s", "iq1_m"):
            new_type = "q2_K"
        elif ft in ("iq2_s", "iq2_m", "iq3_xxs"):
            new_type = "iq3_s"
        elif ft in ("tq1_0", "tq2_0", "q2_0"):
            new_type = "q4_K"
    elif ft in iq12:
        iq3s_or_q2k = "iq3_s" if ft in ("iq2_s", "iq2_m") else "q2_K"
        if _is_attn_v(cat):
            new_type = "q4_K" if (m.n_gqa >= 4 or m.n_expert >= 4) else iq3s_or_q2k
            qs.i_attention_wv += 1
        elif m.n_expert == 8 and cat == CAT_ATTN_K:
            new_type = "q4_K"
        elif cat == CAT_FFN_DOWN:
            if qs.i_ffn_down < qs.n_ffn_down // 8:
                new_type = iq3s_or_q2k
            qs.i_ffn_down += 1
        elif cat == CAT_ATTN_OUTPUT:
            if m.n_expert == 8:
                new_type = "q5_K"
            elif ft in ("iq1_s", "iq1_m"):
                new_type = "iq2_xxs"
            elif ft in ("iq2_s", "iq2_m"):
                new_type = "iq3_s"
    elif _is_attn_v(cat):
        if ft == "q2_K":
            new_type = "q4_K" if m.n_gqa >= 4 else "q3_K"
        elif ft == "q2_K_S" and m.n_gqa >= 4:
            new_type = "q4_K"
        elif ft == "iq3_xxs":
            new_type = "q4_K" if m.n_gqa >= 4 else ("iq3_s" if not has_imatrix else "iq3_xxs")
        elif ft in ("iq3_xs", "iq3_s") and m.n_gqa >= 4:
            new_type = "q4_K"
        elif ft == "iq3_m":
            new_type = "q4_K"
        elif ft == "q3_K_M":
            new_type = "q5_K" if qs.i_attention_wv < 2 else "q4_K"
        elif ft == "q3_K_L":
            new_type = "q5_K"
        elif ft in ("iq4_nl", "iq4_xs") and m.n_gqa >= 4:
            new_type = "q5_K"
        elif ft in ("q4_K_M", "q5_K_M") and use_more_bits(qs.i_attention_wv, qs.n_attention_wv):
            new_type = "q6_K"
        elif ft == "q4_K_S" and qs.i_attention_wv < 4:
            new_type = "q5_K"
        if m.is_70b and new_type in ("q3_K", "q4_K"):
            new_type = "q5_K"  # 8 heads share attn_v: more bits for little size
        if m.n_expert == 8:
            new_type = "q8_0"
        qs.i_attention_wv += 1
    elif cat == CAT_ATTN_K:
        if m.n_expert == 8:
            new_type = "q8_0"
        elif ft == "iq3_xs":
            new_type = "iq3_xxs"
        elif ft == "iq3_xxs":
            new_type = "iq2_s"
    elif cat == CAT_ATTN_Q:
        if ft == "iq3_xs":
            new_type = "iq3_xxs"
        elif ft == "iq3_xxs":
            new_type = "iq2_s"
    elif cat == CAT_FFN_DOWN:
        i_layer, n_layer = _layer_info(qs.i_ffn_down, qs.n_ffn_down, name, m)
        if ft == "q2_K":
            new_type = "q3_K"
        elif ft == "q2_K_S":
            if i_layer < n_layer // 8:
                new_type = "q4_K"
        elif ft == "iq3_xxs" and not has_imatrix:
            new_type = "q4_K" if i_layer < n_layer // 8 else "q3_K"
        elif ft == "q3_K_M":
            new_type = ("q5_K" if i_layer < n_layer // 16 else
                        "q4_K" if arch != "falcon" or use_more_bits(i_layer, n_layer) else "q3_K")
        elif ft == "iq3_m" and (i_layer < n_layer // 8 or
                                (m.n_expert == 8 and use_more_bits(i_layer, n_layer))):
            new_type = "q4_K"
        elif ft == "q3_K_L":
            new_type = "q4_K" if arch == "falcon" else "q5_K"
        elif ft == "q4_K_M":
            if arch == "falcon":
                new_type = ("q6_K" if i_layer < n_layer // 16 else
                            "q5_K" if use_more_bits(i_layer, n_layer) else "q4_K")
            elif use_more_bits(i_layer, n_layer):
                new_type = "q6_K"
        elif i_layer < n_layer // 8 and ft in ("iq4_nl", "iq4_xs") and not has_imatrix:
            new_type = "q5_K"
        elif ft == "q5_K_M" and use_more_bits(i_layer, n_layer):
            new_type = "q6_K"
        elif ft == "q4_K_S" and arch != "falcon" and i_layer < n_layer // 8:
            new_type = "q5_K"
        elif ft in ("q4_0", "q5_0") and has_imatrix and i_layer < n_layer // 8:
            new_type = "q4_1" if ft == "q4_0" else "q5_1"  # guards the first ffn_down layers
        qs.i_ffn_down += 1
    elif cat == CAT_ATTN_OUTPUT:
        if arch != "falcon":
            if m.n_expert == 8:
                if ft in ("q2_K", "iq3_xs", "iq3_xxs", "q3_K_S", "q3_K_M", "iq4_nl", "q4_K_S",
                          "q4_K_M", "iq3_s", "iq3_m", "iq4_xs"):
                    new_type = "q5_K"
            else:
                new_type = {"q2_K": "q3_K", "iq3_xxs": "iq3_s", "q3_K_M": "q4_K",
                            "q3_K_L": "q5_K", "iq3_m": "q4_K"}.get(ft, new_type)
        elif ft == "q3_K_L":
            new_type = "q4_K"
    elif cat == CAT_ATTN_QKV:
        if ft in ("q3_K_M", "q3_K_L", "iq3_m"):
            new_type = "q4_K"
        elif ft == "q4_K_M":
            new_type = "q5_K"
        elif ft == "q5_K_M":
            new_type = "q6_K"
    elif cat in (CAT_FFN_GATE, CAT_FFN_UP):
        if cat == CAT_FFN_GATE:
            i_layer, n_layer = _layer_info(qs.i_ffn_gate, qs.n_ffn_gate, name, m)
            qs.i_ffn_gate += 1
        else:
            i_layer, n_layer = _layer_info(qs.i_ffn_up, qs.n_ffn_up, name, m)
            qs.i_ffn_up += 1
        if ft == "iq3_xs" and n_layer // 8 <= i_layer < 7 * n_layer // 8:
            new_type = "iq3_xxs"
    return new_type


# tensor_type_fallback: the 32-block type for a tensor too narrow for a 256-block type
FALLBACK = {"iq1_s": "iq4_nl", "iq1_m": "iq4_nl", "iq2_xxs": "iq4_nl", "iq2_xs": "iq4_nl",
            "iq2_s": "iq4_nl", "iq3_xxs": "iq4_nl", "iq3_s": "iq4_nl", "iq4_xs": "iq4_nl",
            "q2_0": "q4_0", "q2_K": "q4_0", "q3_K": "q4_0", "tq1_0": "q4_0", "tq2_0": "q4_0",
            "q4_K": "q5_0", "q5_K": "q5_1", "q6_K": "q8_0"}


def fallback_type(info: TensorInfo, qtype: str) -> str:
    """``tensor_type_fallback``: ``qtype`` if the row length divides its block, else a fallback."""
    ncols = info.dims[0]
    if ncols % _block_size(qtype) == 0:
        return qtype
    if qtype not in FALLBACK:
        raise ValueError(f"tensor {info.name!r}: {ncols} columns are not a multiple of "
                         f"{_block_size(qtype)} ({qtype}) and llama.cpp defines no fallback")
    new = FALLBACK[qtype]
    return new if ncols % _block_size(new) == 0 else "f16"


def plan_types(f: GGUFFile, ftype: str | FileType, *, pure: bool = False,
               has_imatrix: bool = False) -> dict[str, str]:
    """The ggml type llama-quantize gives each tensor of ``f``, in llama.cpp's tensor order.

    Tensors that are not quantized keep their own type.
    """
    ft = ftype if isinstance(ftype, FileType) else file_type(ftype)
    m = ModelFacts.from_gguf(f)
    names = llama_order(f.tensors)
    qs = _Counters(names, m.n_layer)
    default_quantized = _formats.lookup(ft.default).kind == "quant"
    plan = {}
    for name in names:
        info = f.tensors[name]
        if not allows_quantization(info):
            plan[name] = info.qtype
            continue
        new_type = ft.default
        if default_quantized:
            if not pure:
                new_type = _type_impl(qs, new_type, info, ft.name, tensor_category(name), m,
                                      has_imatrix)
            new_type = fallback_type(info, new_type)
        plan[name] = new_type
    return plan


# file types llama-quantize refuses outright without an importance matrix
IMATRIX_FILE_TYPES = ("iq2_xxs", "iq2_xs", "iq2_s", "q2_K_S", "iq1_s", "iq1_m")


def requires_imatrix(name: str, qtype: str, ftype: str) -> bool:
    """llama.cpp's ``tensor_requires_imatrix``."""
    if name in ("token_embd.weight", "per_layer_token_embd.weight", "output.weight"):
        return False
    if qtype in ("iq3_xxs", "iq2_xxs", "iq2_xs", "iq2_s", "iq1_m", "iq1_s"):
        return True
    return qtype == "q2_K" and ftype == "q2_K_S"


# ---------------------------------------------------------------------------------------------
# importance matrices


@dataclass
class Imatrix:
    """Per-weight column importances (``in_sum2 / counts``), as llama-quantize computes them."""
    values: dict[str, np.ndarray]  # weight name -> float32 (n_mat * ne0,)
    datasets: list[str]
    chunk_count: int


def load_imatrix(path) -> Imatrix:
    """Read a llama.cpp importance matrix: a ``llama-imatrix`` GGUF or a legacy ``.dat`` file.

    GGUF: per weight ``<name>.in_sum2`` (f32, ne = [ne0, n_mat]) and ``<name>.counts`` (f32,
    ne = [1, n_mat]), with ``imatrix.datasets`` / ``imatrix.chunk_count`` /
    ``imatrix.chunk_size`` required as llama-quantize requires them.  The importance is
    ``in_sum2 / lround(counts)`` per matrix, 1 where the count is 0.

    Legacy ``.dat`` (little-endian int32s): ``n_entries``, then per entry ``name_len, name,
    ncall, nval, nval float32 sums``, then optionally ``chunk_count, dataset_len, dataset``.
    The importance is ``sums / ncall`` (the raw sums when ``ncall`` is 0).
    """
    with open(path, "rb") as fh:
        magic = fh.read(4)
    if magic == b"GGUF":
        return _load_imatrix_gguf(path)
    return _load_imatrix_legacy(path)


def _load_imatrix_gguf(path) -> Imatrix:
    with load_gguf(path) as f:
        meta = ("imatrix.datasets", "imatrix.chunk_count", "imatrix.chunk_size")
        if not all(k in f.metadata for k in meta):
            raise ValueError(f"{path}: missing imatrix metadata ({', '.join(meta)})")
        sums, counts = {}, {}
        for name in f.tensors:
            for suffix, into in ((".in_sum2", sums), (".counts", counts)):
                if name.endswith(suffix):
                    into[name[:-len(suffix)]] = f.tensors[name]
        values = {}
        for base in sorted(set(sums) | set(counts)):
            s, c = sums.get(base), counts.get(base)
            if s is None or c is None:
                raise ValueError(f"{path}: mismatched sums and counts for {base}")
            if s.qtype != "f32" or c.qtype != "f32":
                raise ValueError(f"{path}: sums and counts for {base} must be f32")
            s_arr = np.array(f.array(s.name), np.float32).reshape(-1)
            c_arr = np.array(f.array(c.name), np.float64).reshape(-1)
            n = np.sign(c_arr) * np.floor(np.abs(c_arr) + 0.5)  # lround: halves away from 0
            if n.size == 0 or s_arr.size == 0:
                continue
            v = s_arr.reshape(n.size, -1).copy()
            count = n.astype(np.float32)[:, None]
            v = np.where(count > 0, v / np.where(count > 0, count, 1), np.float32(1))
            values[base] = v.astype(np.float32).reshape(-1)
        datasets = list(f.metadata["imatrix.datasets"])
        return Imatrix(values, datasets, int(f.metadata["imatrix.chunk_count"]))


def _load_imatrix_legacy(path) -> Imatrix:
    with open(path, "rb") as fh:
        buf = fh.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        size = struct.calcsize(fmt)
        if pos + size > len(buf):
            raise ValueError(f"{path}: truncated legacy imatrix at byte {pos}")
        out = struct.unpack_from(fmt, buf, pos)
        pos += size
        return out

    (n_entries,) = take("<i")
    if n_entries < 1:
        raise ValueError(f"{path}: no data in imatrix file")
    values = {}
    for i in range(n_entries):
        (length,) = take("<i")
        name = buf[pos:pos + length].decode("utf-8", "replace").split("\0")[0]
        take(f"<{length}s")
        ncall, nval = take("<ii")
        if nval < 1:
            raise ValueError(f"{path}: entry {i} ({name}) has {nval} values")
        sums = np.frombuffer(buf, "<f4", nval, pos).astype(np.float32)
        take(f"<{4 * nval}s")
        values[name] = sums / np.float32(ncall) if ncall > 0 else sums.copy()
    chunk_count, datasets = 0, []
    if pos + 4 <= len(buf):
        (chunk_count,) = take("<i")
        if pos + 4 <= len(buf):
            (length,) = take("<i")
            if length > 0 and pos + length <= len(buf):
                datasets.append(buf[pos:pos + length].decode("utf-8", "replace"))
    return Imatrix(values, datasets, chunk_count)


# ---------------------------------------------------------------------------------------------
# progress


class TextProgress:
    """A plain-text progress bar on a stream: ``[ 3/12] name q4_K  1.2/4.0 MiB  ETA 5s``."""

    def __init__(self, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.monotonic()
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def __call__(self, i: int, n: int, name: str, qtype: str, done: int, total: int) -> None:
        elapsed = time.monotonic() - self.start
        eta = elapsed * (total - done) / done if done else 0.0
        width = len(str(n))
        line = (f"[{i:{width}d}/{n}] {name:<32} {qtype:<7} {done / 2**20:8.1f}/"
                f"{total / 2**20:.1f} MiB  ETA {eta:5.0f} s")
        if self.tty:
            end = "\n" if i == n else ""
            self.stream.write("\r" + line + "\x1b[K" + end)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


# ---------------------------------------------------------------------------------------------
# the driver


def _float_rows(f: GGUFFile, info: TensorInfo, r0: int, r1: int) -> np.ndarray:
    """Rows [r0, r1) of ``info`` seen as a (rows, ne0) matrix, as float32."""
    cols = info.dims[0]
    row_nbytes = info.format.row_nbytes(cols)
    raw = f.tensor_data(info.name)[r0 * row_nbytes:r1 * row_nbytes]
    name = info.qtype
    if name == "f32":
        return raw.view("<f4").reshape(r1 - r0, cols)
    if name == "f16":
        return raw.view("<f2").astype(np.float32).reshape(r1 - r0, cols)
    if name == "bf16":
        return (raw.view("<u2").astype(np.uint32) << 16).view(np.float32).reshape(r1 - r0, cols)
    return QMatrix(raw, name, (r1 - r0, cols)).dequantize()


def _quantized_pieces(f: GGUFFile, info: TensorInfo, qtype: str, imatrix, n_threads):
    """``info`` in ``qtype``, piece by piece (at most CHUNK_FLOATS inputs each): each
    (ne0, ne1) matrix with its own imatrix slice.  Only one piece is in memory at a time."""
    cols = info.dims[0]
    rows_per_mat = info.dims[1] if len(info.dims) > 1 else 1
    n_rows = math.prod(info.dims[1:])
    chunk = max(1, CHUNK_FLOATS // cols)
    for r0 in range(0, n_rows, rows_per_mat):  # one matrix (expert) at a time
        i_mat = r0 // rows_per_mat
        qw = None if imatrix is None else imatrix[i_mat * cols:(i_mat + 1) * cols]
        for c0 in range(r0, r0 + rows_per_mat, chunk):
            c1 = min(c0 + chunk, r0 + rows_per_mat)
            a = _float_rows(f, info, c0, c1)
            try:
                yield QMatrix.quantize(a, qtype, imatrix=qw, n_threads=n_threads).data
            except ValueError as e:
                raise ValueError(f"tensor {info.name!r} (rows {c0}..{c1 - 1}): {e}") from None


def quantize_gguf(in_path, out_path, qtype: str, imatrix=None, n_threads: int | None = None,
                  progress: Callable | None = None, *, pure: bool = False,
                  allow_requantize: bool = False) -> dict[str, str]:
    """Quantize the GGUF model ``in_path`` into ``out_path`` as llama-quantize does.

    Parameters
    ----------
    in_path, out_path : str or os.PathLike
    qtype : str
        A llama.cpp file type in ggml's spelling (llama-quantize's names, any case): a plain
        type (``"q4_0"``, ``"q8_0"``, ``"q6_K"``, ``"f16"``, ``"iq4_nl"``, ...) or a mix
        (``"q4_K_M"``, ``"q5_K_M"``, ``"q3_K_L"``, ...; ``"q4_K"`` means ``"q4_K_M"``).
    imatrix : str, os.PathLike or Imatrix, optional
        A llama.cpp importance matrix file (GGUF or legacy ``.dat``), passed per tensor to the
        quantizers that use one.  Required when a tensor's type needs one (iq1_s, iq2_xxs, ...).
    n_threads : int, optional
        Threads per quantization call (default: ``qgemv.get_num_threads()``).
    progress : callable, optional
        Called after each tensor as ``progress(i, n, name, qtype, bytes_done, bytes_total)``
        (source bytes); :class:`TextProgress` prints a bar on stderr.
    pure : bool
        llama-quantize's ``--pure``: no mix rules, every quantized tensor in the file type's
        default type (narrow tensors still fall back).
    allow_requantize : bool
        Allow quantized source tensors (dequantized, then quantized again: a quality loss);
        refused by default, as llama-quantize refuses them.

    Returns
    -------
    dict
        Tensor name -> the ggml type written, in file order.

    Raises
    ------
    ValueError
        An unknown file type, a tensor type qgemv cannot quantize to, a missing or mismatched
        importance matrix, NaN/Inf in a weight.  Nothing is written then: ``out_path`` is only
        created (atomically, by rename) once every tensor is quantized.
    """
    ft = file_type(qtype)
    if imatrix is None and (ft.name in IMATRIX_FILE_TYPES or
                            _formats.lookup(ft.default).needs_imatrix):
        raise ValueError(f"{ft.name} requires an importance matrix (--imatrix FILE): without one "
                         f"its very-low-bit quantization is garbage, so llama-quantize refuses it")
    if os.path.exists(out_path) and os.path.samefile(in_path, out_path):
        raise ValueError(f"input and output are the same file: {os.fspath(in_path)!r}")
    im = imatrix if isinstance(imatrix, Imatrix) or imatrix is None else load_imatrix(imatrix)
    if im is not None:
        for name, v in im.values.items():
            if not np.isfinite(v).all():
                raise ValueError(f"imatrix entry {name!r} holds a non-finite value")
    with load_gguf(in_path) as f:
        plan = plan_types(f, ft, pure=pure, has_imatrix=im is not None)
        _check_plan(f, plan, ft, im, allow_requantize)
        w = GGUFWriter(out_path, alignment=f.alignment)
        _copy_metadata(f, w, ft, im, imatrix)
        total = sum(f.tensors[n].nbytes for n in plan)
        done = 0

        def producer(i, name, new_type):
            """The tensor's bytes, made while the writer streams the file; then progress."""
            def pieces():
                nonlocal done
                info = f.tensors[name]
                if new_type == info.qtype:
                    yield f.tensor_data(name)
                else:
                    qw = _imatrix_for(im, info) if im is not None else None
                    yield from _quantized_pieces(f, info, new_type, qw, n_threads)
                done += info.nbytes
                if progress is not None:
                    progress(i, len(plan), name, new_type, done, total)
            return pieces

        for i, (name, new_type) in enumerate(plan.items(), 1):
            w.add_tensor(name, producer(i, name, new_type), qtype=new_type,
                         shape=f.tensors[name].shape)
        w.write()
    return plan


def _check_plan(f: GGUFFile, plan: dict, ft: FileType, im, allow_requantize: bool) -> None:
    """Every refusal before any work: unquantizable types, missing imatrix, requantizing."""
    for name, qtype in plan.items():
        info = f.tensors[name]
        if qtype == info.qtype:
            continue
        fmt = _formats.lookup(qtype)
        needs = requires_imatrix(name, qtype, ft.name) or fmt.needs_imatrix
        if needs and (im is None or _imatrix_for(im, info) is None):
            what = "no importance matrix was given" if im is None else "the imatrix has no entry"
            raise ValueError(f"tensor {name!r} in {qtype} requires an importance matrix, but "
                             f"{what} (pass --imatrix FILE)")
        if QUANTIZE not in fmt.ops:
            raise ValueError(f"{ft.name} puts tensor {name!r} in {qtype}, which qgemv cannot "
                             f"quantize to yet (it can: "
                             f"{', '.join(x.name for x in _formats.with_op(QUANTIZE))})")
        src = info.format
        if src.kind == "quant" and not allow_requantize:
            raise ValueError(f"tensor {name!r} is already quantized ({src.name}); requantizing "
                             f"to {qtype} loses quality, allow it with allow_requantize=True "
                             f"(--allow-requantize)")
        if src.kind not in ("quant", "float"):
            raise ValueError(f"tensor {name!r} has type {src.name}, which cannot be quantized")


def _imatrix_for(im: Imatrix, info: TensorInfo):
    """The importances for ``info`` (ne0 * ne2 values), None if the imatrix has none for it."""
    v = im.values.get(info.name)
    if v is None:
        return None
    want = info.dims[0] * (info.dims[2] if len(info.dims) > 2 else 1)
    if v.size != want:
        if tensor_category(info.name) == CAT_TOKEN_EMBD:
            return None  # llama.cpp ignores a mismatched token_embd entry
        raise ValueError(f"imatrix size {v.size} is different from tensor size {want} for "
                         f"{info.name}")
    return v


def _copy_metadata(f: GGUFFile, w: GGUFWriter, ft: FileType, im, imatrix_arg) -> None:
    """Every key exactly as in ``f`` (same GGUF types, same order), then llama-quantize's own."""
    ours = {"general.quantization_version": GGML_QNT_VERSION, "general.file_type": ft.ftype}
    if im is not None:
        if not isinstance(imatrix_arg, Imatrix):
            ours["quantize.imatrix.file"] = os.fspath(imatrix_arg)[:127]
        if im.datasets:
            ours["quantize.imatrix.dataset"] = im.datasets[0][:127]
        ours["quantize.imatrix.entries_count"] = len(im.values)
        if im.chunk_count > 0:
            ours["quantize.imatrix.chunks_count"] = im.chunk_count
    for key in f.metadata:
        if key in ours or key in ("split.no", "split.count", "split.tensors.count"):
            continue
        fld = f.fields[key]
        w.add_metadata(key, f.metadata[key], fld.type, fld.element_type)
    for key, value in ours.items():
        w.add_metadata(key, value, ValueType.STRING if isinstance(value, str) else ValueType.UINT32)
