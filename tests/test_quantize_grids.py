"""The grid maps and neighbour lists of ggml's iq2_init_impl (src/formats/quantize_grids.h),
against a direct numpy transcription of ggml's construction: squared distances of the odd
values 2 l + 1 to every grid point, ordered as ggml's qsort on (distance, index) pairs, cut
after the nwant-th distinct distance.  The grids come from gguf-py (decoded independently of
include/qgemv/grids.h)."""
import functools

import numpy as np
import pytest

import gguf.quants as gq

from qgemv import _kernels

KEYS = 43692
# grid id in quantize_grids.h -> (gguf-py class, nwant)
GRIDS = {0: (gq.IQ2_XXS, 2), 1: (gq.IQ2_XS, 2), 2: (gq.IQ2_S, 1), 3: (gq.IQ1_S, 3)}


@functools.cache
def ggml_tables(cls, nwant):
    """(levels, map, neighbours) as ggml's iq2_init_impl lays them out."""
    cls.init_grid()
    values = cls.grid.reshape(-1, 8)
    levels = np.searchsorted(np.array(cls.grid_map, np.float32), values).astype(np.int64)   # 0, 1, 2
    odd = 2 * levels + 1
    keys = (levels << (2 * np.arange(8))).sum(1)
    kmap = np.full(KEYS, -1, np.int64)
    kmap[keys] = np.arange(len(keys))
    off = np.flatnonzero(kmap < 0)
    pos = (2 * ((off[:, None] >> (2 * np.arange(8))) & 3) + 1).astype(np.float32)
    g = odd.astype(np.float32)
    rows, cols, dist = [], [], []
    for first in range(0, len(off), 4096):
        p = pos[first:first + 4096]
        # squared distances, exact in float32 (small integers): |p|^2 + |g|^2 - 2 p.g
        d2 = ((p ** 2).sum(1)[:, None] + (g ** 2).sum(1)[None, :] - 2 * p @ g.T).astype(np.int32)
        cut = d2.min(1)
        for _ in range(nwant - 1):   # the nwant-th smallest distinct distance (or the largest)
            above = np.where(d2 > cut[:, None], d2, np.iinfo(np.int32).max).min(1)
            cut = np.where(above == np.iinfo(np.int32).max, cut, above)
        r, c = np.nonzero(d2 <= cut[:, None])
        rows.append(r + first)
        cols.append(c)
        dist.append(d2[r, c])
    rows, cols, dist = map(np.concatenate, (rows, cols, dist))
    order = np.lexsort((cols, dist, rows))   # per key: ggml's qsort on (d2, index)
    counts = np.bincount(rows, minlength=len(off))
    starts = np.cumsum(counts + 1) - (counts + 1)       # offset of each list's count
    neighbours = np.empty(len(rows) + len(off), np.int64)
    is_count = np.zeros(len(neighbours), bool)
    is_count[starts] = True
    neighbours[is_count] = counts
    neighbours[~is_count] = cols[order]
    kmap[off] = -(starts + 1)
    packed_odd = (odd.astype(np.uint64) << (8 * np.arange(8, dtype=np.uint64))).sum(1)
    return packed_odd, kmap, neighbours


@pytest.mark.parametrize("grid", list(GRIDS), ids=["iq2xxs", "iq2xs", "iq2s", "iq1s"])
def test_grid_tables_match_ggml_construction(grid, isa):
    levels, kmap, neighbours = _kernels.grid8_tables(isa, grid)
    want_levels, want_map, want_neighbours = ggml_tables(*GRIDS[grid])
    np.testing.assert_array_equal(np.frombuffer(levels, np.uint64), want_levels)
    np.testing.assert_array_equal(np.frombuffer(kmap, np.int32), want_map)
    np.testing.assert_array_equal(np.frombuffer(neighbours, np.uint16), want_neighbours)


def test_grid_tables_built_once():
    first = _kernels.grid8_tables("baseline", 2)
    assert _kernels.grid8_tables("baseline", 2) == first


def test_unknown_grid_refused():
    with pytest.raises(ValueError, match="no 8-value grid 4"):
        _kernels.grid8_tables("baseline", 4)
