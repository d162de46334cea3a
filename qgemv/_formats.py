"""The ggml format table: the single source of truth for every format qgemv knows.

Pure Python (no numpy, no compiled imports) so that ``setup.py``, the tests, the benchmarks
and the README generator can all read it.  Ids, names, block and byte sizes are ggml's
(ggml 0.25.3, see ``include/qgemv/blocks.h``); retired ids (4, 5, 31-33, 36-38) stay holes.

Columns
-------
id, name      ggml's type id and lowercase name (``q4_K``, ``iq2_xxs``).
block_size    values per block.
type_size     bytes per block (``sizeof(block_<name>)``).
act           the activation format ``m @ x`` quantizes ``x`` to (ggml's ``vec_dot_type``);
              None for formats that are only element types or only activations.
kind          "float" | "int" | "quant" | "activation".
ops           what qgemv implements for it today: "dequantize", "matmul" (``m @ x`` and
              ``m.matmul(act="f32")``), "activation" (usable as ``act``), "quantize"
              (``QMatrix.quantize``: ggml's own quantizer, byte for byte).
needs_imatrix ggml's quantizer refuses it without an importance matrix.
gguf_py       gguf-py 0.19 dequantizes it (the test oracle); otherwise known-answer vectors.
interleave    rows per panel of the layout ``m @ x`` prepares once per matrix (0: none; 8: the
              32-value formats but q8_0, ``block_<name>x8`` in include/qgemv/blocks.h, llama.cpp's
              repacked layout in spirit; iq1_s and iq1_m, whose panels hold their rows as trits, and the IQ
              grids, whose panels hold theirs as level codes; 16: the
              K-quants, iq4_xs, tq2_0 and q8_0, ``block_<name>x16``, a row per lane of a 512-bit vector,
              and the floats f32, f16 and bf16, 16 rows value by value: src/formats/float_panels.h).
panel_type_size  bytes of one row's block in those panels (0: type_size, the panels as large
              as the rows; the trit blocks ``block_iq1_st`` and ``block_iq1_mt`` take 82 bytes for
              iq1_s's 50 and 76 for iq1_m's 56; the IQ
              grids' code blocks, ``block_iq2_c`` and ``block_iq3_c``, 106 for 66, 74 or 82 and
              170 for 98 or 110).
ggml_repack   llama.cpp's CPU_REPACK rewrites this format's rows at load (q4_0, iq4_nl, mxfp4):
              its products follow ggml's repacked arithmetic, on any layout (src/formats/q32_x8.h);
              those of the other formats follow ggml's vec_dot (q32_pairs.h for their panels).
gemv_tiles    a single column streaming from memory (no panels) reads its rows through the format's
              tile, several rows per pass (src/tiles.h), rather than row after row through vec_dot:
              the ggml_repack formats (their vec_dot is one fma chain per row), nvfp4 and q1_0
              (their tiles prepare a column's scales, and q1_0's its activations, once for 16 rows),
              and the floats (AVX-512: their vec_dot is one scalar chain per row, their tile runs
              16 rows side by side, src/formats/float_panels.h; AVX2's 4, in vec_dot's order,
              src/formats/elements.h).
repack_as     the format whose layout ``m @ x`` rewrites the matrix into once (the same levels and
              scales, so the same results, from a layout that decodes faster: tq1_0's base-3
              trits become tq2_0's 2-bit fields, 22% more bytes, twice the speed); None: none.
"""
from __future__ import annotations

from typing import NamedTuple

DEQUANTIZE = "dequantize"
MATMUL = "matmul"
ACTIVATION = "activation"
QUANTIZE = "quantize"


class Format(NamedTuple):
    id: int
    name: str
    block_size: int
    type_size: int
    act: str | None
    kind: str
    ops: frozenset
    needs_imatrix: bool = False
    gguf_py: bool = True
    interleave: int = 0
    ggml_repack: bool = False
    gemv_tiles: bool = False
    repack_as: str | None = None
    panel_type_size: int = 0

    @property
    def bits_per_weight(self) -> float:
        return 8.0 * self.type_size / self.block_size

    @property
    def tolerance(self) -> float:
        """Bound on |m @ x - dequantize(m) @ x| / (|W| @ |x|) for ggml's arithmetic."""
        return ACT_TOLERANCE[self.act] if self.act else 0.0

    def row_nbytes(self, cols: int) -> int:
        return cols // self.block_size * self.type_size

    def panel_row_nbytes(self, cols: int) -> int:
        """Bytes of one row in the prepared panels (interleave)."""
        return cols // self.block_size * (self.panel_type_size or self.type_size)


# Relative error an activation format adds to a dot product, as a bound on
# |sum w x - sum w x~| / sum |w| |x|: half a quantization step of the block maximum
# (1/254 for the int8 formats) plus the rounding of the stored scales, with margin.
ACT_TOLERANCE = {
    "f32": 1e-5,
    "f16": 2.0 ** -10,
    "bf16": 2.0 ** -7,
    "q8_0": 1.0 / 127,
    "q8_1": 1.0 / 127,
    "q8_K": 1.0 / 127,
}
# Bound for ``m.matmul(x, act="f32")``: float32 accumulation only.
F32_TOLERANCE = 1e-5

_D, _M, _A = DEQUANTIZE, MATMUL, ACTIVATION
_Q = QUANTIZE
_ELEM = frozenset({_D})
_PROD = frozenset({_D, _M})
_NONE = frozenset()


def _f(id, name, block_size, type_size, act, kind, ops, **kw):
    return Format(id, name, block_size, type_size, act, kind, frozenset(ops), **kw)


# block sizes written as arithmetic mirroring the struct fields (see blocks.h)
QK_K = 256
# the IQ grids' prepared rows (src/formats/grid_codes.h): d, 4-bit scales, level codes, sign bits;
# 2-bit codes for the iq2 grids (block_iq2_c), 4-bit for the iq3 grids (block_iq3_c)
_IQ2_CODES = 2 + QK_K // 32 + QK_K // 4 + QK_K // 8
_IQ3_CODES = 2 + QK_K // 32 + QK_K // 2 + QK_K // 8
FORMATS: tuple[Format, ...] = (
    _f(0, "f32", 1, 4, "f32", "float", {_D, _M, _A, _Q}, interleave=16, gemv_tiles=True),
    _f(1, "f16", 1, 2, "f16", "float", {_D, _M, _A, _Q}, interleave=16, gemv_tiles=True),
    _f(2, "q4_0", 32, 2 + 16, "q8_0", "quant", _PROD | {_Q}, interleave=8, ggml_repack=True, gemv_tiles=True),
    _f(3, "q4_1", 32, 2 + 2 + 16, "q8_1", "quant", _PROD | {_Q}, interleave=8),
    _f(6, "q5_0", 32, 2 + 4 + 16, "q8_0", "quant", _PROD | {_Q}, interleave=8),
    _f(7, "q5_1", 32, 2 + 2 + 4 + 16, "q8_1", "quant", _PROD | {_Q}, interleave=8),
    _f(8, "q8_0", 32, 2 + 32, "q8_0", "quant", {_D, _M, _A, _Q}, interleave=16),
    _f(9, "q8_1", 32, 2 + 2 + 32, None, "activation", {_D, _A, _Q}, gguf_py=False),
    _f(10, "q2_K", QK_K, QK_K // 16 + QK_K // 4 + 2 + 2, "q8_K", "quant", _PROD | {_Q}, interleave=16),
    _f(11, "q3_K", QK_K, QK_K // 8 + QK_K // 4 + 12 + 2, "q8_K", "quant", _PROD | {_Q}, interleave=16),
    _f(12, "q4_K", QK_K, 2 + 2 + 12 + QK_K // 2, "q8_K", "quant", _PROD | {_Q}, interleave=16),
    _f(13, "q5_K", QK_K, 2 + 2 + 12 + QK_K // 8 + QK_K // 2, "q8_K", "quant", _PROD | {_Q}, interleave=16),
    _f(14, "q6_K", QK_K, QK_K // 2 + QK_K // 4 + QK_K // 16 + 2, "q8_K", "quant", _PROD | {_Q}, interleave=16),
    _f(15, "q8_K", QK_K, 4 + QK_K + QK_K // 16 * 2, None, "activation", {_D, _A, _Q}, gguf_py=False),
    _f(16, "iq2_xxs", QK_K, 2 + QK_K // 8 * 2, "q8_K", "quant", _PROD | {_Q}, needs_imatrix=True,
       interleave=8, panel_type_size=_IQ2_CODES),
    _f(17, "iq2_xs", QK_K, 2 + QK_K // 8 * 2 + QK_K // 32, "q8_K", "quant", _PROD | {_Q}, needs_imatrix=True,
       interleave=8, panel_type_size=_IQ2_CODES),
    _f(18, "iq3_xxs", QK_K, 2 + 3 * QK_K // 8, "q8_K", "quant", _PROD | {_Q}, interleave=8,
       panel_type_size=_IQ3_CODES),
    _f(19, "iq1_s", QK_K, 2 + QK_K // 8 + QK_K // 16, "q8_K", "quant", _PROD | {_Q}, needs_imatrix=True,
       interleave=8, panel_type_size=QK_K // 4 + 2 * (QK_K // 32) + 2),
    _f(20, "iq4_nl", 32, 2 + 16, "q8_0", "quant", _PROD | {_Q}, interleave=8, ggml_repack=True, gemv_tiles=True),
    _f(21, "iq3_s", QK_K, 2 + QK_K // 4 + QK_K // 32 + QK_K // 8 + QK_K // 64, "q8_K", "quant", _PROD | {_Q},
       interleave=8, panel_type_size=_IQ3_CODES),
    _f(22, "iq2_s", QK_K, 2 + QK_K // 4 + QK_K // 32 + QK_K // 32, "q8_K", "quant", _PROD | {_Q},
       interleave=8, panel_type_size=_IQ2_CODES),
    _f(23, "iq4_xs", QK_K, 2 + 2 + QK_K // 64 + QK_K // 2, "q8_K", "quant", _PROD | {_Q}, interleave=16),
    _f(24, "i8", 1, 1, None, "int", _ELEM),
    _f(25, "i16", 1, 2, None, "int", _ELEM),
    _f(26, "i32", 1, 4, None, "int", _ELEM),
    _f(27, "i64", 1, 8, None, "int", _ELEM),
    _f(28, "f64", 1, 8, None, "float", _ELEM),
    _f(29, "iq1_m", QK_K, QK_K // 8 + QK_K // 16 + QK_K // 32, "q8_K", "quant", _PROD | {_Q},
       interleave=8, panel_type_size=QK_K // 4 + 4 + QK_K // 32),
    _f(30, "bf16", 1, 2, "bf16", "float", {_D, _M, _A, _Q}, interleave=16, gemv_tiles=True),
    _f(34, "tq1_0", QK_K, (QK_K - 4 * QK_K // 64) // 5 + QK_K // 64 + 2, "q8_K", "quant", _PROD | {_Q},
       repack_as="tq2_0"),
    _f(35, "tq2_0", QK_K, QK_K // 4 + 2, "q8_K", "quant", _PROD | {_Q}, interleave=16),
    _f(39, "mxfp4", 32, 1 + 16, "q8_0", "quant", _PROD | {_Q}, interleave=8, ggml_repack=True, gemv_tiles=True),
    _f(40, "nvfp4", 64, 4 + 32, "q8_0", "quant", _PROD | {_Q}, gemv_tiles=True),
    _f(41, "q1_0", 128, 2 + 128 // 8, "q8_0", "quant", _PROD | {_Q}, gguf_py=False, gemv_tiles=True),
    _f(42, "q2_0", 64, 2 + 64 // 4, "q8_0", "quant", _PROD | {_Q}, gguf_py=False),
)

RETIRED_IDS = (4, 5, 31, 32, 33, 36, 37, 38)
N_TYPES = 43  # ids 0 .. 42; must match QGEMV_N_TYPES in include/qgemv/kernels.h

BY_ID: dict[int, Format] = {f.id: f for f in FORMATS}
BY_NAME: dict[str, Format] = {f.name.lower(): f for f in FORMATS}


def lookup(qtype) -> Format:
    """The table row for a ggml type name (case-insensitive) or id; ValueError if unknown."""
    if isinstance(qtype, Format):
        return qtype
    if isinstance(qtype, str):
        f = BY_NAME.get(qtype.lower())
        if f is None:
            raise ValueError(f"unknown qtype {qtype!r}; known: {', '.join(f.name for f in FORMATS)}")
        return f
    if isinstance(qtype, bool) or not isinstance(qtype, int):
        if hasattr(qtype, "__index__") and not isinstance(qtype, bool):
            qtype = qtype.__index__()
        else:
            raise TypeError(f"qtype must be a ggml type name or id, not {type(qtype).__name__}")
    f = BY_ID.get(qtype)
    if f is None:
        why = "a retired ggml type id" if qtype in RETIRED_IDS else "not a ggml type id qgemv knows"
        raise ValueError(f"qtype {qtype} is {why}")
    return f


def with_op(op: str) -> tuple[Format, ...]:
    """Every format that implements ``op``."""
    return tuple(f for f in FORMATS if op in f.ops)
