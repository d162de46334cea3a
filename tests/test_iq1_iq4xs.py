"""iq1_s, iq1_m and iq4_xs on blocks made by ggml's own quantizer (libgguf), and on hand-built blocks.

test_qmatrix.py covers random valid blocks of every format; gguf-py cannot quantize the IQ
formats, so here libgguf (ggml) quantizes weights of several shapes, with an importance matrix
(the mean of w**2 per column, as a calibration pass over inputs like w would give) where ggml
requires one, and qgemv must decode those blocks bit for bit as gguf-py and ggml do.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

from qgemv import QMatrix, _formats
from blocks import random_blocks

gguf = pytest.importorskip("gguf")
libgguf = pytest.importorskip("libgguf")

FORMATS = ["iq4_xs", "iq1_s", "iq1_m"]
# ggml builds its iq1 quantizer's neighbour tables on first use: about a minute
QUANTIZED = [pytest.param(f, marks=pytest.mark.slow) if f.startswith("iq1") else f for f in FORMATS]
COLS = 1024


def weights(cols: int = COLS) -> np.ndarray:
    """Smooth, gaussian, heavy-tailed, tiny, large, one-spike and all-zero rows."""
    rng = np.random.default_rng(7)
    t = np.arange(cols, dtype=np.float32)
    spike = np.zeros(cols)
    spike[cols // 3] = 5.0
    rows = [np.cos(0.37 * t + 1) * 2 + 0.1, rng.standard_normal(cols), rng.standard_t(2, cols),
            rng.standard_normal(cols) * 1e-4, rng.standard_normal(cols) * 300, spike, np.zeros(cols)]
    return np.stack(rows).astype(np.float32)


@functools.lru_cache(maxsize=None)
def ggml_quantized(name: str) -> np.ndarray:
    """weights() quantized by ggml (cached: the IQ quantizers are slow), read-only."""
    blocks = ggml_quantize(weights(), name)
    blocks.flags.writeable = False
    return blocks


def ggml_quantize(w: np.ndarray, name: str) -> np.ndarray:
    qt = libgguf.GGMLQuantizationType[name.upper()]
    imatrix = np.mean(w.astype(np.float64) ** 2, axis=0).astype(np.float32) + 1e-6
    blocks = libgguf.quantize_rows(w, qt, imatrix=imatrix)
    assert blocks.shape == (w.shape[0], _formats.lookup(name).row_nbytes(w.shape[1]))
    return blocks


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)


@pytest.mark.parametrize("name", QUANTIZED)
def test_dequantize_ggml_quantized_blocks_bit_exact(name, isa):
    w = weights()
    blocks = ggml_quantized(name)
    got = QMatrix(blocks, name, w.shape).dequantize()
    qt = gguf.GGMLQuantizationType[name.upper()]
    np.testing.assert_array_equal(bits(got), bits(gguf.quants.dequantize(blocks, qt).reshape(w.shape)))
    ggml = libgguf.dequantize_rows(blocks, libgguf.GGMLQuantizationType[name.upper()], w.shape[1])
    np.testing.assert_array_equal(bits(got), bits(ggml))
    # the quantizer did its job (so the blocks are not degenerate): the smooth row is close
    assert np.abs(got[0] - w[0]).mean() < 0.5 * np.abs(w[0]).mean()


@pytest.mark.parametrize("name", QUANTIZED)
@pytest.mark.parametrize("act", ["ggml", "f32"])
def test_products_on_ggml_quantized_blocks(name, act, isa):
    w = weights()
    m = QMatrix(ggml_quantized(name), name, w.shape)
    x = np.random.default_rng(3).standard_normal((COLS, 3)).astype(np.float32)
    x[:, 2] = np.abs(x[:, 2]) * np.sign(np.cos(np.arange(COLS)))   # a different sign pattern
    y = m @ x if act == "ggml" else m.matmul(x, act="f32")
    wd = m.dequantize().astype(np.float64)
    ref = wd @ x.astype(np.float64)
    bound = _formats.F32_TOLERANCE * (np.abs(wd) @ np.abs(x.astype(np.float64)))
    if act == "ggml":
        # q8_K moves each x_j by at most half its step, amax(block of j) / 254; a bound that
        # also holds for the one-spike row (unlike the table's relative tolerance)
        half_step = np.repeat(np.abs(x).reshape(-1, 256, x.shape[1]).max(axis=1) / 254, 256, axis=0)
        bound += 1.001 * (np.abs(wd) @ half_step)
    assert (np.abs(y - ref) <= bound).all(), np.max(np.abs(y - ref) - bound)
    assert (y[-1] == 0).all()   # the all-zero row


def _block_iq4_xs(d: float, ls: list[int], nibbles: np.ndarray) -> np.ndarray:
    scales_l = [(ls[2 * k] & 15) | (ls[2 * k + 1] & 15) << 4 for k in range(4)]
    scales_h = sum((s >> 4) << (2 * ib) for ib, s in enumerate(ls))
    qs = (nibbles.reshape(8, 2, 16)[:, 0] | nibbles.reshape(8, 2, 16)[:, 1] << 4).astype(np.uint8)
    return np.concatenate([np.array([d], "<f2").view(np.uint8), np.array([scales_h], "<u2").view(np.uint8),
                           np.array(scales_l, np.uint8), qs.ravel()])


def test_iq4_xs_hand_built_block():
    """x = d (ls - 32) kvalues[q]: every level and the extreme scales 0 and 63."""
    kvalues = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113])
    ls = [0, 63, 33, 31, 32, 1, 40, 17]
    nibbles = np.arange(256) % 16
    block = _block_iq4_xs(0.5, ls, nibbles)
    want = 0.5 * (np.repeat(ls, 32) - 32) * kvalues[nibbles]
    np.testing.assert_array_equal(QMatrix(block[None], "iq4_xs", (1, 256)).dequantize()[0], want)


def test_iq1_m_scale_spread_over_scale_words():
    """d's nibbles are the top nibbles of the scale words; the rest of the words are the 3-bit scales."""
    d = np.float16(-0.375)
    h = int(np.array([d]).view(np.uint16)[0])
    s = [5, 0, 7, 2] * 4                          # field k of word k // 4
    words = [sum(s[4 * w + j] << (3 * j) for j in range(4)) | ((h >> (4 * w)) & 15) << 12 for w in range(4)]
    qs = np.zeros(32, np.uint8)                   # grid point 0: eight -1
    qh = np.full(16, 0x80, np.uint8)              # odd groups: delta = -1/8
    block = np.concatenate([qs, qh, np.array(words, "<u2").view(np.uint8)])
    got = QMatrix(block[None], "iq1_m", (1, 256)).dequantize()[0]
    delta = np.where(np.arange(32) % 2 == 1, -0.125, 0.125)
    want = np.float32(d) * (2 * np.repeat(s, 16) + 1) * (-1 + np.repeat(delta, 8))
    np.testing.assert_array_equal(got, want.astype(np.float32))
    assert np.array_equal(bits(got), bits(gguf.quants.dequantize(block[None], gguf.GGMLQuantizationType.IQ1_M)[0]))


@pytest.mark.parametrize("moderate", [False, True])
def test_random_iq1_m_blocks_have_finite_scales(moderate):
    """blocks.py writes iq1_m's scattered f16 so that it is finite (and small when moderate)."""
    blocks = random_blocks("iq1_m", 64, 256, seed=4, moderate=moderate)
    words = blocks[:, 48:56].copy().view("<u2")
    h = sum(((words[:, k] >> 12) & 15) << (4 * k) for k in range(4)).astype(np.uint16)
    d = h.view(np.float16)
    assert np.isfinite(d).all()
    if moderate:
        assert (np.abs(d) < 1).all()
    assert len(np.unique(words & 0x0FFF)) > 32     # the scale fields stay random
