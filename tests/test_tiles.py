"""The tile kernels (src/tiles.h) against one vec_dot per row and column.

matmul_act hands tiles of rows x every batch column to each format's tile kernel (generic, or
specialised as the 32-value formats' in src/formats/q32.h); matmul_act_vec_dot is the plain loop.
Every tile keeps vec_dot's float operations per (row, column), so both give the same bits (and
vec_dot gives ggml's), and a tile kernel's result for (r, c) does not depend on which rows and
columns share its tile: not on the batch, the row offset or the threads.
"""
from __future__ import annotations

import numpy as np
import pytest

import qgemv
from qgemv import QMatrix, _dispatch, _formats, _kernels
from blocks import random_blocks

MATMUL = [f for f in qgemv.formats("matmul")]
BATCHES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 33]


def ids(fmt) -> str:
    return fmt.name


def _setup(fmt, rows, batch, seed):
    cols = 3 * max(fmt.block_size, 64)
    m = QMatrix(random_blocks(fmt.name, rows, cols, seed=seed, moderate=True), fmt.name, (rows, cols))
    x = np.random.default_rng(seed).standard_normal((batch, cols)).astype(np.float32)
    afmt = _formats.BY_NAME[fmt.act.lower()]
    xq = np.empty((batch, afmt.row_nbytes(cols)), dtype=np.uint8)
    _kernels.quantize_activations(_dispatch.isa, afmt.id, x, xq)
    return m, x, xq


def _tile(m, xq, rows, n_threads=1, row0=0):
    out = np.full((rows, xq.shape[0]), np.nan, dtype=np.float32)
    data = m._data[row0 * m._row_nbytes:(row0 + rows) * m._row_nbytes]
    _kernels.matmul_act(_dispatch.isa, m.format.id, data, m._row_nbytes, m.shape[1], xq, out, n_threads)
    return out


def _per_row(m, xq):
    out = np.full((m.shape[0], xq.shape[0]), np.nan, dtype=np.float32)
    _kernels.matmul_act_vec_dot(_dispatch.isa, m.format.id, m._data, m._row_nbytes, m.shape[1], xq, out, 1)
    return out


@pytest.mark.parametrize("fmt", MATMUL, ids=ids)
@pytest.mark.parametrize("batch", BATCHES)
def test_tile_matches_vec_dot(fmt, batch, isa):
    rows = 37   # odd: 4-row, 2-row and single-row passes, and a partial last tile
    m, x, xq = _setup(fmt, rows, batch, seed=fmt.id * 7 + batch)
    got, ref = _tile(m, xq, rows), _per_row(m, xq)
    assert np.isfinite(got).all()
    w = m.dequantize().astype(np.float64)
    bound = 1e-5 * (np.abs(w) @ np.abs(x.T.astype(np.float64))) + 1e-30   # float32 summation order
    err = np.abs(got.astype(np.float64) - ref)
    worst = np.unravel_index(np.argmax(err / bound), err.shape)
    assert (err <= bound).all(), f"{fmt.name} batch {batch}: {err[worst]:.3g} > {bound[worst]:.3g} at {worst}"


@pytest.mark.parametrize("fmt", MATMUL, ids=ids)
def test_tile_result_does_not_depend_on_its_neighbours(fmt, isa):
    """The same bits for (r, c) whatever the batch, the rows around it and the thread count."""
    rows, batch = 41, 9
    m, x, xq = _setup(fmt, rows, batch, seed=fmt.id + 1)
    full = _tile(m, xq, rows)
    for c in range(batch):   # each column alone, and columns 3.. as their own batch
        np.testing.assert_array_equal(_tile(m, xq[c:c + 1], rows)[:, 0], full[:, c], err_msg=f"column {c}")
    np.testing.assert_array_equal(_tile(m, np.ascontiguousarray(xq[3:]), rows), full[:, 3:])
    for row0 in (1, 2, 3, 5):   # shifted rows fall into other 4-row and 2-row groups
        np.testing.assert_array_equal(_tile(m, xq, rows - row0, row0=row0), full[row0:], err_msg=f"row0 {row0}")
    np.testing.assert_array_equal(_tile(m, xq, rows, n_threads=2), full)


@pytest.mark.parametrize("fmt", MATMUL, ids=ids)
def test_tile_single_row_and_wide_batch(fmt, isa):
    m, x, xq = _setup(fmt, 1, 33, seed=3)
    np.testing.assert_allclose(_tile(m, xq, 1), _per_row(m, xq), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("fmt", MATMUL, ids=ids)
@pytest.mark.parametrize("batch", [1, 5, 9])
@pytest.mark.parametrize("blocks", [3, 4], ids=["odd_blocks", "even_blocks"])
def test_tiles_are_vec_dot_bits(fmt, batch, blocks, isa):
    """Every format's tile keeps vec_dot's arithmetic per column: the same bits, also for an odd
    number of blocks per row (iq4_nl and mxfp4 end such rows with ggml's scalar last block)."""
    rows, cols = 7, blocks * fmt.block_size
    m = QMatrix(random_blocks(fmt.name, rows, cols, seed=fmt.id + blocks, moderate=True), fmt.name, (rows, cols))
    x = np.random.default_rng(fmt.id).standard_normal((batch, cols)).astype(np.float32)
    afmt = _formats.BY_NAME[fmt.act.lower()]
    xq = np.empty((batch, afmt.row_nbytes(cols)), dtype=np.uint8)
    _kernels.quantize_activations(_dispatch.isa, afmt.id, x, xq)
    np.testing.assert_array_equal(_tile(m, xq, rows), _per_row(m, xq))


@pytest.mark.parametrize("fmt", [f for f in MATMUL if f.block_size == 1], ids=ids)
@pytest.mark.parametrize("cols", [37, 293, 600])
@pytest.mark.parametrize("batch", [2, 3, 8, 11])
def test_float_tiles_are_vec_dot_bits_over_long_rows(fmt, cols, batch, isa):
    """The float formats' tiles run rows in passes of 256 values and columns in groups of 8
    and 3 (src/formats/elements.h): across passes, groups and the scalar tail every (r, c) is
    still vec_dot's bits."""
    rows = 37
    m = QMatrix(random_blocks(fmt.name, rows, cols, seed=cols + batch, moderate=True), fmt.name, (rows, cols))
    x = np.random.default_rng(cols).standard_normal((batch, cols)).astype(np.float32)
    afmt = _formats.BY_NAME[fmt.act.lower()]
    xq = np.empty((batch, afmt.row_nbytes(cols)), dtype=np.uint8)
    _kernels.quantize_activations(_dispatch.isa, afmt.id, x, xq)
    got = _tile(m, xq, rows)
    assert np.isfinite(got).all()
    np.testing.assert_array_equal(got.view(np.uint32), _per_row(m, xq).view(np.uint32))


@pytest.mark.parametrize("fmt", MATMUL, ids=ids)
@pytest.mark.parametrize("cols", [1, 2, 4])
@pytest.mark.parametrize("batch", [2, 5, 9, 33])
def test_tiles_are_vec_dot_bits_for_any_shape(fmt, cols, batch, isa):
    """The same bits per (row, column) for rows of one block (or chunk) and several, element
    formats with a scalar tail, and batches past a tile's columns; rows pass through every row
    group of a tile (19 rows: fours, pairs and a single row)."""
    n = cols * fmt.block_size if fmt.block_size > 1 else {1: 7, 2: 96, 4: 600}[cols]
    rng = np.random.default_rng(fmt.id * 31 + cols + batch)
    rows = 19
    m = QMatrix(random_blocks(fmt.name, rows, n, seed=fmt.id + cols, moderate=True), fmt.name, (rows, n))
    x = rng.standard_normal((batch, n)).astype(np.float32)
    afmt = _formats.BY_NAME[fmt.act.lower()]
    xq = np.empty((batch, afmt.row_nbytes(n)), dtype=np.uint8)
    _kernels.quantize_activations(_dispatch.isa, afmt.id, x, xq)
    got = _tile(m, xq, rows)
    assert np.isfinite(got).all()
    np.testing.assert_array_equal(got, _per_row(m, xq))
