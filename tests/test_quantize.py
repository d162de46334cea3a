"""QMatrix.quantize: byte-identical to ggml's quantizers (gguf-py and libgguf), within bounds.

Parametrized over the format table: a format joins once its row lists "quantize".
"""
from __future__ import annotations

import numpy as np
import pytest

import qgemv
from qgemv import QMatrix, _formats
from qgemv.qmatrix import _check_imatrix

gguf_quants = pytest.importorskip("gguf.quants")
libgguf = pytest.importorskip("libgguf")
from gguf import GGMLQuantizationType  # noqa: E402

QUANTIZE = qgemv.formats("quantize")
# gguf-py 0.19 has a quantizer for these (the others raise NotImplementedError)
GGUF_PY_QUANTIZES = {"f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "tq1_0", "tq2_0", "mxfp4"}
# ggml's quantizer searches with the importance weights; the others ignore them
USES_IMATRIX = {"q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl", "iq4_xs", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K",
                "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s", "iq1_m"}

# |dequantize(quantize(x)) - x| <= BLOCK_ERROR * max |x| of the block, for ggml's reference
# quantizers (no imatrix): half a step, or the clipped end of the range for the symmetric
# formats whose largest magnitude lands on -8 (q4_0) / -16 (q5_0), plus the f16 rounding of
# the stored scale and minimum.
F16_SCALE = 2.0 ** -10
BLOCK_ERROR = {
    "f32": 0.0, "f16": 2.0 ** -11, "bf16": 2.0 ** -8,
    "q4_0": 1 / 8 + F16_SCALE, "q5_0": 1 / 16 + F16_SCALE,
    "q4_1": 1 / 15 + 2 * F16_SCALE, "q5_1": 1 / 31 + 2 * F16_SCALE,
    "q8_0": 1 / 254 + F16_SCALE, "q8_1": 1 / 254 + F16_SCALE, "q8_K": 1 / 254 + 2.0 ** -20,
    "iq4_nl": 3 / 16,   # levels 24 apart at most, for a scale near amax / 120
    "mxfp4": 1 / 4 + 2.0 ** -20,   # amax / scale in [8, 16) against levels 8, 12
    # as iq4_nl: the 6-bit sub-block scales move a level by at most 1/64 of the largest scale
    "iq4_xs": 3 / 16,
    "q2_0": 1 / 2 + F16_SCALE,   # d = amax, levels -d, 0, d
    "q1_0": 1 + F16_SCALE,       # d = mean |x| <= amax, so x is within amax of +-d
    # nvfp4 has none: ggml flushes small sub-block scales and saturates large ones
    # (test_small_formats.py bounds the range in between)
}


def rows_of(kind: str, rows: int, cols: int, seed: int = 0) -> np.ndarray:
    """Test inputs: smooth, random, heavy-tailed, all-zero, and a mix with zero blocks."""
    rng = np.random.default_rng(seed)
    if kind == "smooth":
        a = np.sin(np.linspace(0, 40, rows * cols)).reshape(rows, cols) * 3
    elif kind == "random":
        a = rng.standard_normal((rows, cols))
    elif kind == "heavy":
        a = rng.standard_t(1.5, (rows, cols))
    elif kind == "zero":
        a = np.zeros((rows, cols))
    elif kind == "mixed":   # zero blocks, one-value blocks, tiny and huge magnitudes, ties
        a = rng.standard_normal((rows, cols)) * np.float32(10.0) ** rng.integers(-6, 4, (rows, 1))
        a[:, : cols // 4] = 0
        a[0, cols // 2] = 5.0
        a[1] = np.round(a[1] * 4) / 4
    else:
        raise ValueError(kind)
    return a.astype(np.float32)


KINDS = ["smooth", "random", "heavy", "zero", "mixed"]


def libgguf_blocks(fmt, a: np.ndarray, imatrix=None) -> np.ndarray:
    raw = libgguf.quantize_rows_raw(fmt.id, a, a.shape[0], a.shape[1], imatrix)
    return np.frombuffer(raw, np.uint8).reshape(a.shape[0], -1)


def cols_for(fmt) -> int:
    return max(fmt.block_size, 256) * 2


def weightings(formats):
    """(fmt, weighted) pairs: plain and imatrix, imatrix only where ggml requires one."""
    return [pytest.param(f, w, id=f"{f.name}-{'imatrix' if w else 'plain'}")
            for f in formats for w in (False, True) if w or not f.needs_imatrix]


def plain_imatrix(fmt, cols: int):
    """The imatrix of an unweighted call: None, or uniform weights where ggml requires one."""
    return np.ones(cols, np.float32) if fmt.needs_imatrix else None


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", [f for f in QUANTIZE if f.name in GGUF_PY_QUANTIZES], ids=lambda f: f.name)
def test_matches_gguf_py(fmt, kind):
    # + 0: gguf-py differs from ggml on blocks of -0.0 only (its max keeps the sign, so d = +0)
    a = rows_of(kind, 8, cols_for(fmt)) + np.float32(0)
    expect = gguf_quants.quantize(a, GGMLQuantizationType[fmt.name.upper()]).view(np.uint8)
    np.testing.assert_array_equal(QMatrix.quantize(a, fmt.name).data.reshape(expect.shape), expect)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt, weighted", weightings([f for f in QUANTIZE if f.id in libgguf._SUPPORTED_ROW_QTYPES]))
def test_matches_libgguf(fmt, kind, weighted):
    """Byte for byte ggml_quantize_chunk, with and without importance weights."""
    a = rows_of(kind, 8, cols_for(fmt))
    qw = np.random.default_rng(7).random(a.shape[1]).astype(np.float32) * 3 if weighted else None
    if weighted:
        qw[:5] = 0   # columns ggml was told do not matter
    np.testing.assert_array_equal(QMatrix.quantize(a, fmt.name, imatrix=qw).data.reshape(a.shape[0], -1),
                                  libgguf_blocks(fmt, a, qw))


@pytest.mark.parametrize("fmt", [f for f in QUANTIZE if f.name in USES_IMATRIX
                                 and f.id in libgguf._SUPPORTED_ROW_QTYPES], ids=lambda f: f.name)
def test_zero_importance_blocks_match_libgguf(fmt):
    """Blocks whose importance weights are all zero take ggml's guards (iq2: the sub-block
    left at zero, or at grid point 0), not a search over nothing."""
    a = np.random.default_rng(4).standard_normal((3, 512)).astype(np.float32)
    qw = np.random.default_rng(5).random(512).astype(np.float32)
    qw[:64] = 0
    qw[300:316] = 0
    np.testing.assert_array_equal(QMatrix.quantize(a, fmt.name, imatrix=qw).data.reshape(3, -1),
                                  libgguf_blocks(fmt, a, qw))


# formats with a per-block worst-case bound (the K and ternary formats have RMS bounds below)
@pytest.mark.parametrize("fmt", [f for f in QUANTIZE if _formats.DEQUANTIZE in f.ops and f.name in BLOCK_ERROR],
                         ids=lambda f: f.name)
def test_round_trip_within_bounds(fmt):
    a = np.concatenate([rows_of(k, 4, cols_for(fmt), seed=3) for k in KINDS])
    back = QMatrix.quantize(a, fmt.name).dequantize()
    if fmt.block_size == 1:   # element formats: one rounding per value (f16: or half a subnormal step)
        floor = 2.0 ** -25 if fmt.name == "f16" else 0.0
        assert (np.abs(back - a) <= BLOCK_ERROR[fmt.name] * np.abs(a) + floor).all()
        return
    blocks = a.reshape(a.shape[0], -1, fmt.block_size)
    amax = np.abs(blocks).max(axis=2, keepdims=True)
    err = np.abs(back.reshape(blocks.shape) - blocks)
    assert (err <= BLOCK_ERROR[fmt.name] * amax).all()


# rms(dequantize(quantize(x)) - x) / rms(x) for gaussian rows, plain or with an imatrix
RMS_ERROR = {
    "q4_0": 0.095, "q4_1": 0.095, "q5_0": 0.048, "q5_1": 0.048, "q8_0": 0.006, "iq4_nl": 0.09,
    "mxfp4": 0.16, "tq1_0": 0.85, "tq2_0": 0.85,   # ternary with d = amax: most of a gaussian rounds to 0
    "q2_K": 0.32, "q3_K": 0.165, "q4_K": 0.08, "q5_K": 0.04, "q6_K": 0.02,
    "iq4_xs": 0.09, "nvfp4": 0.11,
    "q1_0": 0.62,   # d = mean |x|: sqrt(1 - 2 / pi) = 0.60 of a gaussian
    "q2_0": 0.75,   # d = amax of 64 values: most of a gaussian rounds to 0
    "iq2_xxs": 0.37, "iq2_xs": 0.32, "iq2_s": 0.28,   # measured 0.352, 0.306, 0.263 (imatrix: 0.253)
    "iq3_xxs": 0.23, "iq3_s": 0.18,   # measured 0.212, 0.164 (imatrix: 0.188, 0.139)
    "iq1_s": 0.53, "iq1_m": 0.62,     # measured 0.500 (imatrix only), 0.579 (imatrix: 0.471)
}


def dequantize(m: QMatrix) -> np.ndarray:
    """qgemv's dequantize, or libgguf's for formats qgemv only quantizes so far."""
    if _formats.DEQUANTIZE in m.format.ops:
        return m.dequantize()
    return libgguf.dequantize_rows(m.data.reshape(m.shape[0], -1), m.format.id, m.shape[1])


def test_every_quantized_format_has_an_error_bound():
    assert {f.name for f in QUANTIZE if f.kind == "quant"} <= set(RMS_ERROR)


@pytest.mark.parametrize("fmt, weighted", weightings([f for f in QUANTIZE if f.name in RMS_ERROR]))
def test_rms_error_within_the_formats_bound(fmt, weighted):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((32, 1024)).astype(np.float32)
    qw = rng.random(1024).astype(np.float32) + 0.1 if weighted else None
    back = dequantize(QMatrix.quantize(a, fmt.name, imatrix=qw))
    assert np.sqrt(((back - a) ** 2).mean() / (a ** 2).mean()) <= RMS_ERROR[fmt.name]


@pytest.mark.parametrize("fmt", [f for f in QUANTIZE if f.name in USES_IMATRIX], ids=lambda f: f.name)
def test_imatrix_lowers_the_weighted_error(fmt):
    """On mixed-sign random rows, ggml's weighted search beats the plain quantizer in the
    error it minimises, sum qw (x - x~)^2 (uniform weights where ggml requires an imatrix)."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((16, 1024)).astype(np.float32)
    qw = (rng.random(1024) ** 4 * 10).astype(np.float32)
    plain = dequantize(QMatrix.quantize(a, fmt.name, imatrix=plain_imatrix(fmt, 1024)))
    weighted = dequantize(QMatrix.quantize(a, fmt.name, imatrix=qw))
    assert (qw * (weighted - a) ** 2).sum() < (qw * (plain - a) ** 2).sum()


@pytest.mark.parametrize("fmt", [f for f in QUANTIZE if f.name not in USES_IMATRIX], ids=lambda f: f.name)
def test_imatrix_ignored_where_ggml_ignores_it(fmt):
    a = rows_of("random", 4, cols_for(fmt))
    qw = np.linspace(0, 2, a.shape[1], dtype=np.float32)
    np.testing.assert_array_equal(QMatrix.quantize(a, fmt.name, imatrix=qw).data,
                                  QMatrix.quantize(a, fmt.name).data)


def test_q8_0_rounds_half_away_from_zero():
    """ggml's quantize_row_q8_0_ref: d = amax / 127, roundf (not the activations' half-even)."""
    x = np.zeros((1, 32), np.float32)
    x[0, :4] = [127.0, 2.5, -2.5, 3.5]          # d = 1: the ties stay ties
    m = QMatrix.quantize(x, "q8_0")
    assert m.data[:2].view(np.float16)[0] == 1.0
    np.testing.assert_array_equal(m.data[2:6].view(np.int8), [127, 3, -3, 4])


@pytest.mark.parametrize("fmt", QUANTIZE, ids=lambda f: f.name)
def test_threads_and_isas_agree(fmt, isa):
    a = rows_of("heavy", 37, cols_for(fmt), seed=11)
    qw = np.random.default_rng(2).random(a.shape[1]).astype(np.float32)
    one = QMatrix.quantize(a, fmt.name, imatrix=qw, n_threads=1).data
    two = QMatrix.quantize(a, fmt.name, imatrix=qw, n_threads=2).data
    np.testing.assert_array_equal(one, two)
    if fmt.id in libgguf._SUPPORTED_ROW_QTYPES:
        np.testing.assert_array_equal(one, libgguf_blocks(fmt, a, qw).ravel())


@pytest.mark.parametrize("fmt", QUANTIZE, ids=lambda f: f.name)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("rows, first, n_threads", [(9, 4, 1), (130, 70, 1), (130, 70, 2)])
def test_non_finite_rows_refused_by_index(fmt, bad, rows, first, n_threads):
    """The first bad row is named whether one thread stops at it or a team finds it among
    others (130 rows: the second thread's slab holds both bad rows)."""
    a = rows_of("random", rows, cols_for(fmt))
    a[first + 2, 3] = bad
    a[first, -1] = bad
    with pytest.raises(ValueError, match=rf"{fmt.name}: row {first} of a holds NaN or Inf"):
        QMatrix.quantize(a, fmt.name, imatrix=plain_imatrix(fmt, a.shape[1]), n_threads=n_threads)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
def test_non_finite_found_at_every_position(bad, isa):
    """The finiteness check's vector body and its tail both see every column."""
    for col in range(40):
        a = np.full((1, 40), 3.0e38, np.float32)
        a[0, col] = bad
        with pytest.raises(ValueError, match="row 0 of a holds NaN or Inf"):
            QMatrix.quantize(a, "f32")
    assert QMatrix.quantize(np.full((1, 40), 3.4e38, np.float32), "f32").nbytes == 160


@pytest.mark.parametrize("shift", [0, 1, 4, 7, 8, 100, 127, 128, 1000, 1023])
def test_f32_copy_and_check_at_every_alignment(isa, shift):
    """f32's quantizer copies and checks in one pass, with aligned stores, running from the end
    when the output sits just above the input modulo 4 KiB (shift: that distance in floats):
    every value copied and a bad value found at any position, in either direction."""
    from qgemv import _kernels
    page = np.zeros(3 * 1024 + 64, np.float32)
    base = -page.ctypes.data % 4096 // 4           # page[base] starts a 4 KiB page
    n = 203
    for x_at in (base + 1, base + 3, base + 8):
        x = page[x_at:x_at + n].reshape(1, n)
        x[...] = np.arange(1, n + 1, dtype=np.float32)
        out_buf = np.zeros(2 * 1024 + 512, np.float32)
        o = -out_buf.ctypes.data % 4096 // 4 + (x_at - base) + shift
        out = out_buf[o:o + n].reshape(1, n)
        assert _kernels.quantize(isa, 0, x, None, out.view(np.uint8), 1) == -1
        np.testing.assert_array_equal(out, x)
        for col in (0, 1, 5, 8, 17, 100, n - 9, n - 1):
            x[0, col] = np.nan
            assert _kernels.quantize(isa, 0, x, None, out.view(np.uint8), 1) == 0
            x[0, col] = col + 1


def test_float16_and_strided_inputs():
    a = rows_of("random", 6, 128)
    expect = QMatrix.quantize(a.astype(np.float16).astype(np.float32), "q4_0").data
    np.testing.assert_array_equal(QMatrix.quantize(a.astype(np.float16), "q4_0").data, expect)
    wide = np.zeros((6, 256), np.float32)
    wide[:, ::2] = a
    np.testing.assert_array_equal(QMatrix.quantize(wide[:, ::2], "q8_0").data, QMatrix.quantize(a, "q8_0").data)
    m = QMatrix.quantize(np.asfortranarray(a), "q5_1")
    assert m.shape == (6, 128) and m.qtype == "q5_1" and m.nbytes == 6 * 4 * 24
    np.testing.assert_array_equal(m.data, QMatrix.quantize(a, "q5_1").data)


def test_empty_matrices():
    assert QMatrix.quantize(np.zeros((0, 64), np.float32), "q4_0").nbytes == 0
    assert QMatrix.quantize(np.zeros((3, 0), np.float32), "q8_0").shape == (3, 0)


@pytest.mark.parametrize("a, error, match", [
    (np.zeros((2, 32)), TypeError, "float32 or float16, not float64"),
    (np.zeros((2, 32), np.int32), TypeError, "float32 or float16"),
    (np.zeros(32, np.float32), ValueError, "2-D"),
    (np.zeros((2, 48), np.float32), ValueError, "not a multiple of the block size 32"),
])
def test_input_refused(a, error, match):
    with pytest.raises(error, match=match):
        QMatrix.quantize(a, "q4_0")


@pytest.mark.parametrize("qw, error, match", [
    (np.ones(31, np.float32), ValueError, r"shape \(31,\), expected \(32,\)"),
    (np.ones((1, 32), np.float32), ValueError, "expected"),
    (np.arange(32, dtype=np.int32), TypeError, "float32"),
    (np.where(np.arange(32) == 9, np.nan, 1).astype(np.float32), ValueError, "NaN or Inf .* column 9"),
    (np.where(np.arange(32) == 3, -1, 1).astype(np.float32), ValueError, "negative weight .* column 3"),
])
def test_imatrix_refused(qw, error, match):
    with pytest.raises(error, match=match):
        QMatrix.quantize(np.ones((2, 32), np.float32), "q4_0", imatrix=qw)


def test_formats_ggml_quantizes_only_with_an_imatrix():
    needs = {f.name for f in _formats.FORMATS if f.needs_imatrix}
    assert needs == {"iq1_s", "iq2_xxs", "iq2_xs"}
    assert needs == {f.name for f in _formats.FORMATS if f.id in libgguf._SUPPORTED_ROW_QTYPES
                     and libgguf.quantize_requires_imatrix(f.id)}
    for name in needs:
        with pytest.raises(ValueError, match=f"{name}: ggml quantizes this format only with an importance"):
            _check_imatrix(None, 256, _formats.lookup(name))


def test_unsupported_format_refused():
    missing = next(f for f in _formats.FORMATS if _formats.QUANTIZE not in f.ops)
    with pytest.raises(NotImplementedError, match=f"cannot quantize to {missing.name}"):
        QMatrix.quantize(np.zeros((1, missing.block_size), np.float32), missing.name)
