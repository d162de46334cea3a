"""Activation quantizers (q8_0, q8_1, q8_K, f16, bf16): ggml's arithmetic, within their bounds."""
from __future__ import annotations

import numpy as np
import pytest

import qgemv
from qgemv import QMatrix, _dispatch, _kernels

ACTS = [f for f in qgemv.formats("activation") if f.name != "f32"]


def quantize(fmt, x: np.ndarray) -> np.ndarray:
    out = np.empty((x.shape[0], fmt.row_nbytes(x.shape[1])), np.uint8)
    _kernels.quantize_activations(_dispatch.isa, fmt.id, np.ascontiguousarray(x, np.float32), out)
    return out


@pytest.mark.parametrize("fmt", ACTS, ids=lambda f: f.name)
def test_round_trip_within_half_a_step(fmt, isa):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal((3, 512)) * 10, np.zeros((1, 512)),
                        rng.standard_t(1.5, (1, 512))]).astype(np.float32)
    back = QMatrix(quantize(fmt, x), fmt.name, x.shape).dequantize()
    if fmt.block_size == 1:   # f16 / bf16: one rounding of each value
        rel = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}[fmt.name]
        assert (np.abs(back - x) <= rel * np.abs(x)).all()
        return
    blocks = x.reshape(x.shape[0], -1, fmt.block_size)
    step = np.abs(blocks).max(axis=2, keepdims=True) / 127        # d, before its f16 rounding
    err = np.abs(back.reshape(blocks.shape) - blocks)
    assert (err <= step * (0.5 + 2.0 ** -10 * 128) + 1e-30).all()


def test_q8_0_matches_ggml_formula():
    """id = 127 / amax, round half to even, d = amax / 127 in f16 (ggml's x86 quantize_row_q8_0)."""
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    x[5] = 0.5 * 3 / 127 * 3      # a value landing near a tie
    q = quantize(qgemv._formats.lookup("q8_0"), x[None])[0].reshape(2, 34)
    for b in range(2):
        xb = x[32 * b:32 * b + 32]
        amax = np.abs(xb).max()
        assert q[b, :2].view(np.float16)[0] == np.float16(amax / np.float32(127))
        expect = np.rint(xb * (np.float32(127) / amax)).astype(np.int8)
        np.testing.assert_array_equal(q[b, 2:].view(np.int8), expect)


def test_q8_K_bsums_and_sign_convention():
    """q8_K scales by -127 / x_max (x_max signed), keeps q <= 127, and stores 16-value sums."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 512)).astype(np.float32)
    x[0, 7] = -50.0                      # the value of largest magnitude always lands on -127
    raw = quantize(qgemv._formats.lookup("q8_K"), x)[0].reshape(2, 292)
    d = raw[0, :4].view(np.float32)[0]
    qs = raw[0, 4:260].view(np.int8)
    bsums = raw[0, 260:].view(np.int16)
    assert qs[7] == -127 and d == np.float32(1) / (np.float32(-127) / np.float32(-50))
    np.testing.assert_array_equal(bsums, qs.reshape(16, 16).sum(axis=1))
    zero = quantize(qgemv._formats.lookup("q8_K"), np.zeros((1, 256), np.float32))
    assert not zero.any()


def _awkward_rows(rng, n: int) -> np.ndarray:
    """Rows that probe a vectorised quantizer where it could part from the scalar code: the
    largest magnitude reached by both signs (q8_K keeps the first), zeros and -0 (a block of
    zeros, a block whose largest value is -0), products that land on .5 after scaling, tiny and
    huge scales, and plain noise."""
    rows = []
    for scale in (2.0 ** -30, 1.0, 3.0, 2.0 ** 30):
        tie = rng.choice([-1.0, 0.0, 1.0], n) * scale
        tie[n // 2] = -scale                                   # first of the largest: negative
        rows += [tie, -tie,
                 rng.integers(-254, 255, n) / 254.0 * scale,   # halves after x 127 / amax
                 rng.standard_normal(n) * scale]
    zeros = np.zeros(n)
    zeros[QK:2 * QK] = -0.0
    zeros[2 * QK + 3] = 1e-3                                   # one lone value
    rows.append(zeros)
    return np.array(rows, np.float32)


QK = 256


@pytest.mark.parametrize("fmt", [f for f in ACTS if f.block_size > 1], ids=lambda f: f.name)
def test_every_variant_quantizes_to_the_same_bytes(fmt):
    """The AVX2 / AVX-512 quantizers (vectors of 8) are the portable loops' arithmetic: every
    variant gives the baseline's bytes."""
    x = _awkward_rows(np.random.default_rng(7), 4 * QK)
    out = {}
    for isa_name in _dispatch.runnable():
        out[isa_name] = np.empty((x.shape[0], fmt.row_nbytes(x.shape[1])), np.uint8)
        _kernels.quantize_activations(isa_name, fmt.id, x, out[isa_name])
    for isa_name, got in out.items():
        np.testing.assert_array_equal(got, out["baseline"], err_msg=f"{fmt.name} on {isa_name}")


@pytest.mark.parametrize("fmt", ACTS, ids=lambda f: f.name)
def test_a_batch_in_numpy_order_is_read_in_place(fmt, isa):
    """matmul's x is numpy's (cols, batch): the quantizers read its columns from it as they go
    (gather_columns, 8 x 8 blocks and a masked last group) and give what they give for the
    transposed copy, on every thread count; a NaN anywhere is reported."""
    rng = np.random.default_rng(11)
    cols = 2 * QK + {1: 11, 32: 32}.get(fmt.block_size, 0)   # f16 / bf16: rows past the 8 x 8 blocks
    for batch in (1, 3, 6, 8, 9, 17):   # 6: a last group past its first 4 columns
        x = (rng.standard_normal((cols, batch)) * 4).astype(np.float32)
        want = quantize(fmt, x.T)
        for threads in (1, 2, 3):
            got = np.zeros_like(want)
            assert _kernels.quantize_activations(isa, fmt.id, x.T, got, threads)
            np.testing.assert_array_equal(got, want, err_msg=f"batch {batch}, {threads} threads")
            bad = x.copy()
            bad[rng.integers(cols), rng.integers(batch)] = np.nan
            assert not _kernels.quantize_activations(isa, fmt.id, bad.T, got, threads)
