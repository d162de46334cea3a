"""The grid formats (iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s) against ggml itself.

libgguf (ggml's C quantizer and dequantizer) makes blocks as a real model has them; dequantize
must match ggml's dequantize_row_<fmt> (through libgguf) and gguf-py bit for bit, on those and
on random valid blocks dense enough to reach every grid point.  The products are checked
against float64 sums of the dequantized operands, with the activations taken after their q8_K
quantization, so the bound is float32 rounding only (far tighter than the q8_K tolerance).
"""
from __future__ import annotations

import numpy as np
import pytest

from qgemv import QMatrix, _dispatch, _formats, _kernels
from blocks import random_blocks

gguf = pytest.importorskip("gguf")
libgguf = pytest.importorskip("libgguf")

NAMES = ["iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s"]


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)


def qtype(name):
    return gguf.GGMLQuantizationType[name.upper()]


def weights(cols: int, seed: int = 7) -> np.ndarray:
    """Smooth, gaussian, heavy-tailed, tiny, huge and all-zero rows."""
    rng = np.random.default_rng(seed)
    t = np.arange(cols, dtype=np.float32)
    return np.stack([
        np.cos(0.37 * t + 1) * 2 + 0.1,
        rng.standard_normal(cols),
        rng.standard_t(2, cols),
        rng.standard_normal(cols) * 1e-4,
        rng.standard_normal(cols) * 3e3,
        np.zeros(cols),
    ]).astype(np.float32)


def libgguf_blocks(name: str, w: np.ndarray, imatrix: bool = True) -> np.ndarray:
    """ggml's quantization of w; with imatrix, x**2 column means (what llama-imatrix estimates)."""
    im = np.mean(w.astype(np.float64) ** 2, axis=0).astype(np.float32) + 1e-6 if imatrix else None
    return libgguf.quantize_rows(w, libgguf.GGMLQuantizationType[name.upper()], imatrix=im)


def ggml_dequantize(name: str, blocks: np.ndarray, cols: int) -> np.ndarray:
    return libgguf.dequantize_rows(blocks, libgguf.GGMLQuantizationType[name.upper()], cols).reshape(-1, cols)


# ---------------------------------------------------------------------- dequantize
@pytest.mark.parametrize("imatrix", [True, False], ids=["imatrix", "no-imatrix"])
@pytest.mark.parametrize("name", NAMES)
def test_dequantize_libgguf_blocks_bit_exact(name, imatrix, isa):
    cols = 2048
    w = weights(cols)
    blocks = libgguf_blocks(name, w, imatrix)
    m = QMatrix(blocks, name, w.shape)
    got = bits(m.dequantize())
    np.testing.assert_array_equal(got, bits(ggml_dequantize(name, blocks, cols)))
    np.testing.assert_array_equal(got, bits(gguf.quants.dequantize(blocks, qtype(name)).reshape(w.shape)))
    # and the blocks are a real quantization: the gaussian row comes back close
    assert np.corrcoef(m.dequantize()[1], w[1])[0, 1] > 0.85


@pytest.mark.parametrize("name", NAMES)
def test_dequantize_every_grid_point_bit_exact(name, isa):
    """64 x 4096 random blocks draw each grid index ~8 times or more: every point and sign."""
    rows, cols = 64, 4096
    blocks = random_blocks(name, rows, cols, seed=31, moderate=False)
    got = bits(QMatrix(blocks, name, (rows, cols)).dequantize())
    np.testing.assert_array_equal(got, bits(ggml_dequantize(name, blocks, cols)))


@pytest.mark.parametrize("name", NAMES)
def test_isas_agree(name):
    rows, cols = 16, 1024
    blocks = random_blocks(name, rows, cols, seed=2, moderate=True)
    x = np.random.default_rng(4).standard_normal(cols).astype(np.float32)
    results = {}
    for isa in _dispatch.runnable():
        old, _dispatch.isa = _dispatch.isa, isa
        try:
            m = QMatrix(blocks, name, (rows, cols))
            results[isa] = (m.dequantize(), m @ x)
        finally:
            _dispatch.isa = old
    ref_deq, ref_y = results["baseline"]
    for isa, (deq, y) in results.items():
        np.testing.assert_array_equal(bits(deq), bits(ref_deq), err_msg=isa)
        assert (np.abs(y - ref_y) <= 1e-6 * (np.abs(ref_deq) @ np.abs(x))).all(), isa


# ---------------------------------------------------------------------- products
def quantized_activations(x: np.ndarray) -> np.ndarray:
    """x after q8_K quantization (qgemv's, = ggml's quantize_row_q8_K_ref), as float64."""
    cols = x.shape[0]
    q8k = _formats.lookup("q8_K")
    xq = np.empty((1, q8k.row_nbytes(cols)), np.uint8)
    _kernels.quantize_activations(_dispatch.isa, q8k.id, x.reshape(1, -1), xq)
    return QMatrix(xq, "q8_K", (1, cols)).dequantize()[0].astype(np.float64)


@pytest.mark.parametrize("source", ["libgguf", "random"])
@pytest.mark.parametrize("name", NAMES)
def test_matmul_is_exact_up_to_float32_rounding(name, source, isa):
    """m @ x = sum_blocks d_w d_x sum (2s+1) q a: equal to dequantize(W) . dequantize(q8_K(x))
    in float64, up to float32 rounding of the block scales and the final sums."""
    cols = 2048
    rng = np.random.default_rng(3)
    if source == "libgguf":
        w = weights(cols)
        blocks = libgguf_blocks(name, w)
        shape = w.shape
    else:
        shape = (40, cols)
        blocks = random_blocks(name, *shape, seed=8, moderate=True)
    m = QMatrix(blocks, name, shape)
    W = m.dequantize().astype(np.float64)
    for x in (rng.standard_normal(cols), rng.standard_t(3, cols), np.linspace(-1, 3, cols)):
        x = x.astype(np.float32)
        xa = quantized_activations(x)
        ref = W @ xa
        bound = 1e-5 * (np.abs(W) @ np.abs(xa)) + 1e-30
        err = np.abs((m @ x).astype(np.float64) - ref)
        assert (err <= bound).all(), f"{name}: max err/bound {np.max(err / bound):.3g}"


@pytest.mark.parametrize("name", NAMES)
def test_matmul_within_q8_K_tolerance_of_float64(name, isa):
    cols = 2048
    w = weights(cols)
    m = QMatrix(libgguf_blocks(name, w), name, w.shape)
    W = m.dequantize().astype(np.float64)
    x = np.random.default_rng(5).standard_normal((cols, 3)).astype(np.float32)
    for y, tol in ((m @ x, _formats.lookup(name).tolerance), (m.matmul(x, act="f32"), _formats.F32_TOLERANCE)):
        err = np.abs(y - W @ x)
        assert (err <= tol * (np.abs(W) @ np.abs(x)) + 1e-30).all()


@pytest.mark.parametrize("name", NAMES)
def test_matmul_all_zero_rows_and_activations(name, isa):
    cols = 512
    w = np.zeros((3, cols), np.float32)
    w[1] = np.random.default_rng(0).standard_normal(cols)
    m = QMatrix(libgguf_blocks(name, w), name, w.shape)
    y = m @ np.ones(cols, np.float32)
    assert y[0] == 0 and y[2] == 0 and y[1] != 0
    np.testing.assert_array_equal(m @ np.zeros(cols, np.float32), np.zeros(3, np.float32))
