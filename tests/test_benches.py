"""The benchmark harness's ggml binding (benches/ggml_ref.py) computes what ggml computes.

Skipped when no ggml library is installed (libggml-python or QGEMV_GGML_LIB).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import qgemv
from qgemv import QMatrix

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))
import ggml_ref  # noqa: E402

ggml = ggml_ref.load()
pytestmark = pytest.mark.skipif(ggml is None, reason="no ggml library (pip install libggml-python)")

ROWS, COLS = 48, 256


def _weights(seed=0):
    return np.random.default_rng(seed).standard_normal((ROWS, COLS)).astype(np.float32)


def test_type_sizes_match_the_format_table():
    for f in qgemv.formats():
        assert ggml.row_size(f.id, COLS) == f.row_nbytes(COLS), f.name


@pytest.mark.parametrize("name", ["q8_0", "q4_0"])
def test_to_float_is_qgemv_dequantize(name):
    fmt = next(f for f in qgemv.formats() if f.name == name)
    blocks = ggml.quantize(fmt.id, _weights())
    got = ggml.to_float(fmt.id, blocks, ROWS * COLS).reshape(ROWS, COLS)
    want = QMatrix(blocks, fmt.id, (ROWS, COLS)).dequantize()
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("name", ["q8_0", "q4_0"])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_mul_mat_agrees_with_qgemv(name, batch, n_threads):
    fmt = next(f for f in qgemv.formats() if f.name == name)
    blocks = ggml.quantize(fmt.id, _weights())
    x = np.random.default_rng(1).standard_normal((COLS, batch)).astype(np.float32)
    got, times = ggml.mul_mat(fmt.id, blocks, ROWS, COLS, x, n_threads=n_threads, repeat=2)
    want = QMatrix(blocks, fmt.id, (ROWS, COLS)) @ x
    assert got.shape == (ROWS, batch) and len(times) == 2
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_mul_mat_vector_and_repacked_layout():
    blocks = ggml.quantize(2, _weights())                      # q4_0: ggml repacks it on AVX2
    x = np.random.default_rng(2).standard_normal(COLS).astype(np.float32)
    plain, _ = ggml.mul_mat(2, blocks, ROWS, COLS, x)
    assert plain.shape == (ROWS,)
    mm = ggml_ref.MulMat(ggml, 2, [blocks, blocks.copy()], ROWS, COLS, 1, 1,
                         repack=ggml.repack_buft is not None)
    try:
        mm.set_x(x[:, None])
        for _ in range(2):                                     # both weight copies
            mm.run()
            np.testing.assert_allclose(mm.result()[:, 0], plain, rtol=1e-5,
                                       atol=1e-5 * np.abs(plain).max())
    finally:
        mm.close()
