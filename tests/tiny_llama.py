"""Tiny random llama-family GGUF files and an independent float64 forward pass (test helpers).

The reference reads the weights back through gguf-py (not qgemv), so a test comparing it with
qgemv.llama checks qgemv's reader, kernels and model at once.
"""
from __future__ import annotations

import string
from dataclasses import dataclass, field

import numpy as np

from qgemv import GGUFWriter


@dataclass
class TinyConfig:
    arch: str = "llama"
    dim: int = 64
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: int = 2
    ffn_dim: int = 128
    n_vocab: int = 80
    rope_base: float = 10000.0
    rms_eps: float = 1e-5
    context_length: int = 64
    tied: bool = False
    qtypes: dict = field(default_factory=dict)   # tensor-name suffix -> qtype (default f32)

    @property
    def head_dim(self) -> int:
        return self.dim // self.n_heads


VOCAB = ["<unk>", "<s>", "</s>"] + [f"▁{c}" for c in string.ascii_lowercase] + list(string.ascii_lowercase)


def _encode(w: np.ndarray, qtype: str):
    """(blocks or array, qtype) for the writer; quantized by gguf-py."""
    import gguf
    if qtype == "f32":
        return w.astype(np.float32), None
    if qtype == "f16":
        return w.astype(np.float16), None
    blocks = gguf.quants.quantize(w.astype(np.float32), gguf.GGMLQuantizationType[qtype.upper()])
    return blocks, qtype


def write_tiny_llama(path, cfg: TinyConfig, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    a = cfg.arch
    w = GGUFWriter(path)
    w.add_metadata("general.architecture", a)
    for key, value in [("embedding_length", cfg.dim), ("block_count", cfg.n_layers),
                       ("attention.head_count", cfg.n_heads), ("attention.head_count_kv", cfg.n_kv_heads),
                       ("feed_forward_length", cfg.ffn_dim), ("context_length", cfg.context_length),
                       ("rope.dimension_count", cfg.head_dim)]:
        w.add_metadata(f"{a}.{key}", value, type="uint32")
    w.add_metadata(f"{a}.rope.freq_base", cfg.rope_base, type="float32")
    w.add_metadata(f"{a}.attention.layer_norm_rms_epsilon", cfg.rms_eps, type="float32")
    vocab = (VOCAB + [f"<extra_{i}>" for i in range(cfg.n_vocab)])[:cfg.n_vocab]
    w.add_metadata("tokenizer.ggml.model", "llama")
    w.add_metadata("tokenizer.ggml.tokens", vocab)
    w.add_metadata("tokenizer.ggml.scores", -np.arange(cfg.n_vocab, dtype=np.float32))
    w.add_metadata("tokenizer.ggml.token_type", np.array([2, 3, 3] + [1] * (cfg.n_vocab - 3), np.int32))
    w.add_metadata("tokenizer.ggml.bos_token_id", 1, type="uint32")
    w.add_metadata("tokenizer.ggml.eos_token_id", 2, type="uint32")

    def mat(name, rows, cols, scale=0.15):
        qtype = next((q for suffix, q in cfg.qtypes.items() if name.endswith(suffix)), "f32")
        data, qt = _encode(rng.standard_normal((rows, cols)) * scale, qtype)
        if qt is None:
            w.add_tensor(name, data)
        else:
            w.add_tensor(name, data, qtype=qt, shape=(rows, cols))

    def vec(name, n, around=1.0):
        w.add_tensor(name, (around + 0.1 * rng.standard_normal(n)).astype(np.float32))

    hd, kv = cfg.head_dim, cfg.n_kv_heads * cfg.head_dim
    mat("token_embd.weight", cfg.n_vocab, cfg.dim, scale=1.0)
    for i in range(cfg.n_layers):
        p = f"blk.{i}."
        vec(p + "attn_norm.weight", cfg.dim)
        mat(p + "attn_q.weight", cfg.n_heads * hd, cfg.dim)
        mat(p + "attn_k.weight", kv, cfg.dim)
        mat(p + "attn_v.weight", kv, cfg.dim)
        if cfg.arch == "qwen2":
            vec(p + "attn_q.bias", cfg.n_heads * hd, 0.0)
            vec(p + "attn_k.bias", kv, 0.0)
            vec(p + "attn_v.bias", kv, 0.0)
        mat(p + "attn_output.weight", cfg.dim, cfg.n_heads * hd)
        vec(p + "ffn_norm.weight", cfg.dim)
        mat(p + "ffn_gate.weight", cfg.ffn_dim, cfg.dim)
        mat(p + "ffn_up.weight", cfg.ffn_dim, cfg.dim)
        mat(p + "ffn_down.weight", cfg.dim, cfg.ffn_dim)
    vec("output_norm.weight", cfg.dim)
    if not cfg.tied:
        mat("output.weight", cfg.n_vocab, cfg.dim)
    w.write()


def read_weights(path) -> dict[str, np.ndarray]:
    """Every tensor as float64 in numpy shape order, through gguf-py."""
    import gguf
    r = gguf.GGUFReader(str(path))
    out = {}
    for t in r.tensors:
        shape = tuple(int(d) for d in reversed(t.shape.tolist()))
        out[t.name] = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float64).reshape(shape)
    return out


def reference_forward(weights: dict, cfg: TinyConfig, tokens) -> np.ndarray:
    """Logits (n, vocab) in float64: the textbook llama block, written independently."""
    n, hd = len(tokens), cfg.head_dim
    x = weights["token_embd.weight"][np.asarray(tokens)]

    def norm(v, g):
        return v / np.sqrt(np.mean(v * v, axis=-1, keepdims=True) + cfg.rms_eps) * g

    def rope(v):   # v (n, heads, hd): rotate complex pairs by pos * base^(-2i/hd)
        theta = cfg.rope_base ** (-np.arange(hd // 2) * 2.0 / hd)
        rot = np.exp(1j * np.arange(n)[:, None] * theta[None, :])[:, None, :]
        if cfg.arch == "qwen2":                      # halves: (i, i + hd/2)
            z = (v[..., : hd // 2] + 1j * v[..., hd // 2:]) * rot
            return np.concatenate([z.real, z.imag], axis=-1)
        z = (v[..., 0::2] + 1j * v[..., 1::2]) * rot  # adjacent pairs: (2i, 2i+1)
        out = np.empty_like(v)
        out[..., 0::2], out[..., 1::2] = z.real, z.imag
        return out

    for i in range(cfg.n_layers):
        p = f"blk.{i}."
        h = norm(x, weights[p + "attn_norm.weight"])
        proj = {}
        for name in "qkv":
            y = h @ weights[p + f"attn_{name}.weight"].T
            proj[name] = y + weights.get(p + f"attn_{name}.bias", 0.0)
        q = rope(proj["q"].reshape(n, cfg.n_heads, hd))
        k = rope(proj["k"].reshape(n, cfg.n_kv_heads, hd))
        v = proj["v"].reshape(n, cfg.n_kv_heads, hd)
        group = cfg.n_heads // cfg.n_kv_heads
        out = np.empty((n, cfg.n_heads, hd))
        for head in range(cfg.n_heads):
            s = q[:, head] @ k[:, head // group].T / np.sqrt(hd)
            s[np.triu_indices(n, 1)] = -np.inf
            pr = np.exp(s - s.max(axis=1, keepdims=True))
            out[:, head] = (pr / pr.sum(axis=1, keepdims=True)) @ v[:, head // group]
        x = x + out.reshape(n, -1) @ weights[p + "attn_output.weight"].T
        h = norm(x, weights[p + "ffn_norm.weight"])
        g, u = h @ weights[p + "ffn_gate.weight"].T, h @ weights[p + "ffn_up.weight"].T
        x = x + (g / (1 + np.exp(-g)) * u) @ weights[p + "ffn_down.weight"].T
    out_w = weights.get("output.weight", weights["token_embd.weight"])
    return norm(x, weights["output_norm.weight"]) @ out_w.T
