"""tq1_0, tq2_0, nvfp4, q1_0, q2_0: the formats whose blocks are not one activation block.

Oracles: gguf-py (tq1_0, tq2_0, nvfp4), libgguf (quantizes and dequantizes all but q2_0), the
known-answer vectors made with ggml 0.25.3 in ../shared/vectors (q1_0, q2_0, nvfp4), and a
numpy reading of the q1_0 / q2_0 layouts as ggml-quants.c writes them.  The products are checked
against ggml's own arithmetic: the exact sum of dequantized weights times dequantized
activations, which a float32 kernel can only miss by its roundings.
"""
from __future__ import annotations

import numpy as np
import pytest

from qgemv import QMatrix, _dispatch, _formats, _kernels
from blocks import random_blocks

gguf = pytest.importorskip("gguf")
libgguf = pytest.importorskip("libgguf")

NAMES = ["tq1_0", "tq2_0", "nvfp4", "q1_0", "q2_0"]
IN_GGUF_PY = ["tq1_0", "tq2_0", "nvfp4"]
IN_LIBGGUF = ["tq1_0", "tq2_0", "nvfp4", "q1_0"]
VECTORS = ["q1_0", "q2_0", "nvfp4"]
# float32 roundings of a kernel's sums, relative to sum |w| |a|: ~1e-8 measured, bound 1e-6
ROUNDING = 1e-6


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)


def weight_rows(cols: int) -> np.ndarray:
    """smooth, noisy, heavy-tailed, all-zero and tiny rows"""
    rng = np.random.default_rng(11)
    t = np.arange(cols, dtype=np.float32)
    return np.stack([np.cos(0.37 * t + 1) * 2 + 0.1, rng.standard_normal(cols), rng.standard_t(2, cols),
                     np.zeros(cols), rng.standard_normal(cols) * 1e-6]).astype(np.float32)


# ---------------------------------------------------------------------- the layouts, read in numpy
def numpy_dequantize(name: str, blocks: np.ndarray) -> np.ndarray:
    """q1_0 / q2_0 as ggml-quants.c's dequantize_row_q1_0 / _q2_0 write them."""
    fmt = _formats.lookup(name)
    b = blocks.reshape(-1, fmt.type_size)
    d = b[:, :2].copy().view(np.float16).astype(np.float32)
    if name == "q1_0":   # bit j (LSB first): +d, else -d
        bit = (b[:, 2:, None] >> np.arange(8, dtype=np.uint8)) & 1
        return np.where(bit.reshape(len(b), -1) == 1, d, -d)
    if name == "q2_0":   # field j, 2 bits LSB first: (q - 1) d
        q = (b[:, 2:, None] >> np.array([0, 2, 4, 6], np.uint8)) & 3
        return (q.reshape(len(b), -1).astype(np.int32) - 1).astype(np.float32) * d
    raise ValueError(name)


@pytest.mark.parametrize("name", ["q1_0", "q2_0"])
@pytest.mark.parametrize("moderate", [False, True], ids=["any-scales", "moderate-scales"])
def test_q1_q2_dequantize_bit_exact_random_blocks(name, moderate, isa):
    blocks = random_blocks(name, 8, 512, seed=5, moderate=moderate)
    got = QMatrix(blocks, name, (8, 512)).dequantize()
    np.testing.assert_array_equal(bits(got), bits(numpy_dequantize(name, blocks).reshape(8, 512)))


@pytest.mark.parametrize("name", IN_LIBGGUF)
def test_dequantize_matches_libgguf_on_random_blocks(name, isa):
    blocks = random_blocks(name, 8, 512, seed=6)
    want = libgguf.dequantize_rows(blocks, libgguf.GGMLQuantizationType[name.upper()], 512)
    np.testing.assert_array_equal(bits(QMatrix(blocks, name, (8, 512)).dequantize()), bits(want))


@pytest.mark.parametrize("name", IN_LIBGGUF)
def test_dequantize_bit_exact_on_libgguf_blocks(name, isa):
    w = weight_rows(1024)
    qt = libgguf.GGMLQuantizationType[name.upper()]
    blocks = libgguf.quantize_rows(w, qt)
    got = QMatrix(blocks, name, w.shape).dequantize()
    np.testing.assert_array_equal(bits(got), bits(libgguf.dequantize_rows(blocks, qt, w.shape[1])))
    if name in IN_GGUF_PY:
        want = gguf.quants.dequantize(blocks, gguf.GGMLQuantizationType[name.upper()])
        np.testing.assert_array_equal(bits(got), bits(want))
    assert np.abs(got - w).max() <= np.abs(w).max()   # the blocks are a quantization of w


def test_nvfp4_every_scale_byte(isa):
    """all 256 UE4M3 bytes (subnormals, 0x7f = 0, 0x80, 0xff) decode as gguf-py decodes them"""
    blocks = random_blocks("nvfp4", 1, 64 * 64, seed=8).reshape(64, 36)
    blocks[:, :4] = np.arange(256, dtype=np.uint8).reshape(64, 4)
    got = QMatrix(blocks.reshape(1, -1), "nvfp4", (1, 64 * 64)).dequantize()
    want = gguf.quants.dequantize(blocks.reshape(1, -1), gguf.GGMLQuantizationType.NVFP4)
    np.testing.assert_array_equal(bits(got), bits(want))


def test_tq1_0_every_byte(isa):
    """every qs / qh byte value (trits of fractions past 242 included) as gguf-py reads it"""
    blocks = random_blocks("tq1_0", 1, 256 * 6, seed=9).reshape(6, 54)
    blocks[:, :52] = np.resize(np.arange(256, dtype=np.uint8), 6 * 52).reshape(6, 52)
    got = QMatrix(blocks.reshape(1, -1), "tq1_0", (1, 256 * 6)).dequantize()
    want = gguf.quants.dequantize(blocks.reshape(1, -1), gguf.GGMLQuantizationType.TQ1_0)
    np.testing.assert_array_equal(bits(got), bits(want))


# ---------------------------------------------------------------------- ggml's known answers
@pytest.mark.parametrize("name", VECTORS)
def test_known_answer_vectors(name, shared_dir, isa):
    path = shared_dir / "vectors" / f"{name}.npz"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    v = np.load(path)
    fmt = _formats.lookup(name)
    assert (int(v["type_id"]), int(v["block_size"]), int(v["type_size"])) == (fmt.id, fmt.block_size, fmt.type_size)
    rows, cols = v["dequant"].shape
    m = QMatrix(v["blocks"], name, (rows, cols))
    np.testing.assert_array_equal(bits(m.dequantize()), bits(v["dequant"]))
    # the same arithmetic as ggml's CPU mul_mat (q8_0 activations): only float roundings differ
    y = m @ v["x"]
    scale = np.abs(v["dequant"].astype(np.float64)) @ np.abs(v["x"].astype(np.float64))
    assert (np.abs(y - v["y"]) <= ROUNDING * scale).all(), np.abs(y - v["y"]) / scale


# ---------------------------------------------------------------------- ggml's arithmetic
def quantized_activations(fmt, x: np.ndarray) -> np.ndarray:
    act = _formats.lookup(fmt.act)
    xq = np.empty((1, act.row_nbytes(x.size)), np.uint8)
    _kernels.quantize_activations(_dispatch.isa, act.id, x[None], xq)
    return QMatrix(xq, act.name, (1, x.size)).dequantize()[0]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n_blocks", [1, 3, 8])   # odd counts take the kernels' tail paths
def test_product_is_ggml_arithmetic(name, n_blocks, isa):
    """m @ x = sum_j w_j a_j with a the quantized activations, up to float32 roundings"""
    fmt = _formats.lookup(name)
    cols = max(n_blocks * fmt.block_size, _formats.QK_K)
    cols -= cols % fmt.block_size
    rng = np.random.default_rng(n_blocks)
    x = (rng.standard_normal(cols) * np.exp(rng.standard_normal(cols))).astype(np.float32)
    for blocks in (random_blocks(name, 16, cols, seed=n_blocks, moderate=True),
                   libgguf.quantize_rows(weight_rows(cols), libgguf.GGMLQuantizationType[name.upper()])
                   if name in IN_LIBGGUF else random_blocks(name, 4, cols, seed=99, moderate=True)):
        m = QMatrix(blocks, name, (len(blocks), cols))
        w = m.dequantize().astype(np.float64)
        a = quantized_activations(fmt, x).astype(np.float64)
        y = m @ x
        assert (np.abs(y - w @ a) <= ROUNDING * (np.abs(w) @ np.abs(a)) + 1e-30).all()


@pytest.mark.parametrize("name", NAMES)
def test_variants_agree_on_products(name):
    """every ISA variant computes the same sums (orders differ: float roundings only)"""
    fmt = _formats.lookup(name)
    cols = 3 * max(fmt.block_size, _formats.QK_K)
    blocks = random_blocks(name, 8, cols, seed=4, moderate=True)
    x = np.random.default_rng(4).standard_normal(cols).astype(np.float32)
    saved, ys = _dispatch.isa, {}
    try:
        for isa in _dispatch.runnable():
            _dispatch.isa = isa
            ys[isa] = QMatrix(blocks, name, (8, cols)) @ x
            w = np.abs(QMatrix(blocks, name, (8, cols)).dequantize().astype(np.float64))
    finally:
        _dispatch.isa = saved
    scale = w @ np.abs(x.astype(np.float64))
    first = next(iter(ys.values()))
    for isa, y in ys.items():
        assert (np.abs(y - first) <= 2 * ROUNDING * scale).all(), isa


@pytest.mark.parametrize("name", ["q1_0", "nvfp4"])
def test_vector_variants_give_the_same_bits(name):
    """q1_0's and nvfp4's AVX2 and AVX-512 kernels form the same exact sums in the same float
    lanes (AVX-512: q1_0's GEMV rows prepare a column per 32 blocks and 16 rows, both formats'
    batches go as column pairs prepared per 8 steps): the same bits, single column or batch,
    past those chunks, with remainders and an odd nvfp4 block count."""
    vector = [isa for isa in _dispatch.runnable() if isa != "baseline"]
    if len(vector) < 2:
        pytest.skip("this CPU runs fewer than two vector variants")
    rows, cols = 40, 37 * _formats.lookup(name).block_size
    m = QMatrix(random_blocks(name, rows, cols, seed=7, moderate=True), name, (rows, cols))
    x = np.random.default_rng(7).standard_normal((cols, 11)).astype(np.float32)
    saved, got = _dispatch.isa, {}
    try:
        for isa in vector:
            _dispatch.isa = isa
            got[isa] = [bits(m @ x[:, 0])] + [bits(m @ x[:, :batch]) for batch in (2, 3, 11)]
    finally:
        _dispatch.isa = saved
    for isa in vector[1:]:
        for want, have in zip(got[vector[0]], got[isa]):
            np.testing.assert_array_equal(have, want, err_msg=isa)


# ---------------------------------------------------------------------- ggml's quantizers
def vector_input() -> np.ndarray:
    """The input of rows 0-7 of the known-answer vectors: 0.1 + 2 cos(0.37 i + 1) for
    i = 0 .. 4095 (row-major), in float32 with a correctly rounded cos (ggml's cosf)."""
    t = np.float32(0.37) * np.arange(8 * 512, dtype=np.float32).reshape(8, 512) + np.float32(1)
    return np.float32(0.1) + np.float32(2) * np.cos(t.astype(np.float64)).astype(np.float32)


@pytest.mark.parametrize("name", VECTORS)
def test_quantize_reproduces_ggmls_vectors(name, shared_dir, isa):
    """ggml's own bytes for the input it quantized: for q2_0, which libgguf cannot quantize,
    the only ggml oracle (the recipe is checked through libgguf on q1_0 and nvfp4)."""
    path = shared_dir / "vectors" / f"{name}.npz"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    blocks = np.load(path)["blocks"][:8]
    a = vector_input()
    if name in IN_LIBGGUF:
        np.testing.assert_array_equal(libgguf.quantize_rows(a, libgguf.GGMLQuantizationType[name.upper()]), blocks)
    np.testing.assert_array_equal(QMatrix.quantize(a, name).data.reshape(blocks.shape), blocks)


def numpy_quantize_q2_0(a: np.ndarray) -> np.ndarray:
    """ggml's quantize_row_q2_0_ref in numpy: d = amax, q = clamp(roundf(x (1 / d)) + 1, 0, 3)."""
    b = a.reshape(-1, 64)
    d = np.abs(b).max(axis=1, keepdims=True)
    v = b * np.where(d > 0, np.float32(1) / np.where(d > 0, d, 1), 0).astype(np.float32)
    v = v.astype(np.float64)   # |v| + 0.5 exact: 0.49999997 stays below the tie
    q = np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5) + 1, 0, 3).astype(np.uint8).reshape(len(b), 16, 4)
    qs = q[..., 0] | q[..., 1] << 2 | q[..., 2] << 4 | q[..., 3] << 6
    return np.concatenate([d.astype(np.float16).view(np.uint8), qs], axis=1).reshape(a.shape[0], -1)


def test_q2_0_quantize_matches_ggmls_reference(isa):
    rng = np.random.default_rng(4)
    a = np.concatenate([weight_rows(512), rng.standard_t(1.5, (3, 512)).astype(np.float32)])
    a[-1, :64] = [1.0, 0.5, -0.5, 0.49999997, -0.50000006] + [0.0] * 59   # roundf's ties, away from 0
    got = QMatrix.quantize(a, "q2_0").data.reshape(len(a), -1)
    np.testing.assert_array_equal(got, numpy_quantize_q2_0(a))
    # fields LSB first: q = 2, 2, 0, 1 | 0, 1, 1, 1
    np.testing.assert_array_equal(got[-1, 2:4], [0b01_00_10_10, 0b01_01_01_00])


def test_nvfp4_quantize_bound_and_scale_range(isa):
    """Where amax / 6 is a normal unsigned E4M3 below 256, the stored scale is amax / 6 within
    1/16 and a value is at most half the top gap (levels 4 and 6) from its level; ggml stores
    larger scales as 448 (0x7e) and flushes those below 2^-10 to 0, as libgguf shows."""
    rng = np.random.default_rng(6)
    a = (rng.standard_normal((32, 512)) * np.exp(rng.uniform(-3, 9, (32, 1)))).astype(np.float32)
    m = QMatrix.quantize(a, "nvfp4")
    np.testing.assert_array_equal(m.data.reshape(32, -1), libgguf.quantize_rows(a, libgguf.GGMLQuantizationType.NVFP4))
    sub = a.reshape(-1, 16)
    amax = np.abs(sub).max(axis=1)
    err = np.abs(m.dequantize().reshape(-1, 16) - sub).max(axis=1)
    normal = (amax / 6 >= 2.0 ** -6) & (amax / 6 < 256)
    assert normal.sum() > 500 and (~normal).sum() > 50
    assert (err[normal] <= amax[normal] * (1 + 1 / 16) / 6).all()
    scales = m.data.reshape(32, -1, 36)[:, :, :4].reshape(-1)
    np.testing.assert_array_equal(scales[amax / 6 >= 256], 0x7e)
    np.testing.assert_array_equal(scales[amax / 6 < 2.0 ** -10], 0)
