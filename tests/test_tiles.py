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


def _setup(fmt, rows, batch, seed, cols=None):
    cols = cols or 3 * max(fmt.block_size, 64)
    m = QMatrix(random_blocks(fmt.name, rows, cols, seed=seed, moderate=True), fmt.name, (rows, cols))
    x = np.random.default_rng(seed).standard_normal((batch, cols)).astype(np.float32)
    afmt = _formats.BY_NAME[fmt.act.lower()]
    xq = np.empty((batch, afmt.row_nbytes(cols)), dtype=np.uint8)
    _kernels.quantize_activations(_dispatch.isa, afmt.id, x, xq)
    return m, x, xq


def _tile(m, xq, rows, n_threads=1, row0=0, **kw):
    out = np.full((rows, xq.shape[0]), np.nan, dtype=np.float32)
    data = m._data[row0 * m._row_nbytes:(row0 + rows) * m._row_nbytes]
    _kernels.matmul_act(_dispatch.isa, m.format.id, data, m._row_nbytes, m.shape[1], xq, out, n_threads, **kw)
    return out


def _per_row(m, xq):
    out = np.full((m.shape[0], xq.shape[0]), np.nan, dtype=np.float32)
    _kernels.matmul_act_vec_dot(_dispatch.isa, m.format.id, m._data, m._row_nbytes, m.shape[1], xq, out, 1)
    return out


@pytest.mark.parametrize("fmt", MATMUL, ids=ids)
@pytest.mark.parametrize("rows", [5, 301])
def test_long_single_column_tiles_give_vec_dot_bits(fmt, rows, isa):
    """A single column in tiles of up to TILE_GEMV_FLOAT_ROWS rows (what QMatrix gives the
    floats: AVX2's tile runs its 4 streams through quarters of a tile, the last quarter short):
    vec_dot's bits, on any thread count (301 rows, 2 threads: tiles of 160 and 141)."""
    m, x, xq = _setup(fmt, rows, 1, seed=rows + fmt.id)
    ref = _per_row(m, xq)
    for n_threads in (1, 2):
        got = _tile(m, xq, rows, n_threads, row_multiple=fmt.interleave or 2,
                    gemv_tile_rows=_kernels.TILE_GEMV_FLOAT_ROWS)
        np.testing.assert_array_equal(got, ref, err_msg=f"{n_threads} threads")


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
    m, x, xq = _setup(fmt, rows, batch, seed=fmt.id + blocks, cols=cols)
    np.testing.assert_array_equal(_tile(m, xq, rows), _per_row(m, xq))


@pytest.mark.parametrize("fmt", [f for f in MATMUL if f.block_size == 1], ids=ids)
@pytest.mark.parametrize("cols", [37, 96, 293, 600, 1000, 2600])
@pytest.mark.parametrize("batch", [1, 2, 3, 7, 8, 11, 25, 33])
@pytest.mark.parametrize("rows", [37, 38, 39])
def test_float_tiles_are_vec_dot_bits_over_long_rows(fmt, cols, batch, rows, isa):
    """The float formats' tiles run blocks of 4 rows x 3 columns (AVX2) over one accumulator's
    units (f32, bf16: a half; f16: every other line, 512 values at a time; whole 64-byte lines:
    96 and 1000 leave a 32- and a 40-value scalar tail), then the other's, with 1, 2 or 3 rows
    and fewer columns left over, and a single column of f16 both side by side over 2 rows
    (src/formats/elements.h); the
    AVX-512 variants' copy 16 rows at a time into a panel (the last 5-7 repeating a row) and run
    chains of 128 values (a last short one) in blocks of up to 8 columns, 32 a pass
    (float_panels.h): across blocks, halves, chunks, short blocks and the scalar tail every
    (r, c) is still vec_dot's bits."""
    m, x, xq = _setup(fmt, rows, batch, seed=cols + batch, cols=cols)
    got = _tile(m, xq, rows)
    assert np.isfinite(got).all()
    np.testing.assert_array_equal(got.view(np.uint32), _per_row(m, xq).view(np.uint32))


def _flush(v: np.ndarray) -> np.ndarray:
    """float32's subnormals as 0 (vdpbf16ps's inputs and outputs)."""
    return np.where(np.abs(v) < np.finfo(np.float32).tiny, np.float32(0) * np.sign(v), v).astype(np.float32)


def _dot_in_chunk_chains(w: np.ndarray, a: np.ndarray, chunk: int = 128, pairs: bool = False) -> np.ndarray:
    """w (rows, n) . a (n,) in float32 as the AVX-512 variants order f32, f16 and bf16
    (src/formats/float_panels.h): per chunk of 128 values one chain s = fma(w_i, a_i, s) from 0,
    in order, the chunks' sums added in order from 0.  fma emulated in float64: the product is
    exact there (at most 48 bits), the sum rounded once to float64 and once to float32.
    pairs: as bf16 runs where _dispatch.bf16_pairs is on (vdpbf16ps's arithmetic): each chain
    over the value pairs (2k, 2k + 1), s = flush(fma(w_2k, a_2k, flush(fma(w_2k+1, a_2k+1, s)))),
    inputs flushed, a last odd value paired with 0; the chunks' sums still not flushed."""
    rows, n = w.shape
    if pairs:
        w, a = _flush(w), _flush(a)
    w64, a64 = w.astype(np.float64), a.astype(np.float64)
    step = (lambda s: _flush(s.astype(np.float32))) if pairs else (lambda s: s.astype(np.float32))
    total = np.zeros(rows, np.float32)
    for k0 in range(0, n, chunk):
        k1 = min(n, k0 + chunk)
        s = np.zeros(rows, np.float32)
        for i in range(k0, k1, 2 if pairs else 1):
            if pairs:   # the odd value first (0 past the end)
                s = step(s.astype(np.float64) + (w64[:, i + 1] * a64[i + 1] if i + 1 < k1 else 0.0))
            s = step(s.astype(np.float64) + w64[:, i] * a64[i])
        total = total + s
    return total


# each float format's values: exactly (as float32) and as its bits
_FLOAT_VALUES = {
    "f32": (lambda v: v.astype(np.float32), lambda v: v.astype(np.float32)),
    "f16": (lambda v: v.astype(np.float16).astype(np.float32), lambda v: v.astype(np.float16)),
    "bf16": (lambda v: (v.astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32),
             lambda v: (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)),
}


@pytest.mark.parametrize("isa_name", ["avx512", "avx512bf16"])
@pytest.mark.parametrize("name", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("cols, rows, batch", [(64, 19, 1), (129, 35, 1), (202, 21, 1), (200, 40, 5),
                                              (600, 49, 9), (4096 + 37, 19, 33)])
def test_floats_on_avx512_are_chunk_chains_in_their_documented_order(isa_name, name, cols, rows, batch,
                                                                     monkeypatch):
    """f32, f16 and bf16 on AVX-512: vec_dot, the GGUF rows' tile and the panels (a prepared
    matrix: whole panels and the last rows % 16 from the GGUF rows; 3-panel groups and a short
    one; columns by 8 and 32) give the chains of float_panels.h, to the bit (numpy emulation
    above), bf16 in the avx512bf16 variant both ways (_dispatch.bf16_pairs: its pairs where on).
    Row 0's weights are scaled into float32's subnormals (f32, bf16): kept, not flushed, as the
    caller's MXCSR (numpy's) says, or flushed by vdpbf16ps's arithmetic."""
    if not _kernels.cpu_runs(isa_name) or isa_name not in _kernels.COMPILED_ISAS:
        pytest.skip(f"this CPU (or build) does not run the {isa_name} variant")
    monkeypatch.setattr(_dispatch, "isa", isa_name)
    exact, raw = _FLOAT_VALUES[name]
    rng = np.random.default_rng(cols + batch)
    w = rng.standard_normal((rows, cols))
    if name != "f16":   # bf16's subnormals end at 2^-133
        w[0] *= 2.0 ** (-136 if name == "f32" else -131)
    w = exact(w)
    x = exact(rng.standard_normal((cols, batch)))        # the activation type already: exact
    was = _dispatch.bf16_pairs
    for pairs in ([False, True] if name == "bf16" and isa_name == "avx512bf16" else [False]):
        _dispatch.set_bf16_pairs(pairs)
        try:
            want = np.stack([_dot_in_chunk_chains(w, x[:, c], pairs=pairs) for c in range(batch)], axis=1)
            m = QMatrix(raw(w), name, w.shape)
            np.testing.assert_array_equal((m @ x).reshape(want.shape).view(np.uint32), want.view(np.uint32))
            assert m._prepared is not None or rows < 16                 # from the panels
            xq = np.ascontiguousarray(raw(x.T)).view(np.uint8)
            np.testing.assert_array_equal(_tile(m, xq, rows).view(np.uint32), want.view(np.uint32))
            np.testing.assert_array_equal(_per_row(m, xq).view(np.uint32), want.view(np.uint32))
        finally:
            _dispatch.set_bf16_pairs(was)
        if pairs:
            assert (want[0] == 0).all()                                 # subnormal inputs, flushed
        elif name != "f16":
            assert (want[0] != 0).all() and (np.abs(want[0]) < np.finfo(np.float32).tiny).any()   # subnormal, kept


# the formats whose tiles decode a row once for up to 32 columns (QGEMV_DEFINE_VEC_DOT_AND_WIDE_TILE)
WIDE_TILE_FORMATS = [f for f in MATMUL if f.name in ("iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s")]


@pytest.mark.parametrize("fmt", WIDE_TILE_FORMATS, ids=ids)
@pytest.mark.parametrize("batch", [6, 9, 15, 16, 17, 32, 45, 80])
@pytest.mark.parametrize("rows", [5, 19])
def test_wide_tiles_decode_long_rows_once_for_many_columns(fmt, batch, rows, isa):
    """Past 8 columns the IQ grid and iq1_s tiles decode a row's super-blocks once, 16 at a time
    (iq1_s: 4 rows of 4), for up to 32 columns (src/tiles.h); on AVX-512 the IQ grids take 8
    columns and more from packed columns, 8 rows by 8 super-blocks decoded for up to 64 columns
    (src/packed_tile.h), on AVX-VNNI 6 and more (plain AVX2: 8), 4 rows at a time, 8 columns a
    vector.  5 and 19
    rows (passes of 4 or 8 rows and what is left, repeated rows filling a pass) of 37 super-blocks
    (full chunks and a partial one) against batches on both sides of 8, 16 and 64 (a vector with
    one column, groups past the first decode) still give every column vec_dot's bits."""
    cols = 37 * fmt.block_size
    m, x, xq = _setup(fmt, rows, batch, seed=batch, cols=cols)
    np.testing.assert_array_equal(_tile(m, xq, rows).view(np.uint32), _per_row(m, xq).view(np.uint32))


def test_variants_multiply_from_packed_columns_where_that_is_faster():
    """The tests above with 8 columns and more (iq1_m's GGUF rows: 16, below which its own tile
    is faster) run the packed VNNI tile on the AVX-512 and AVX-VNNI variants (and on plain AVX2,
    its vpdpbusd as maddubs and a madd by the scales, where that is faster); so do
    test_panels_give_vec_dot_bits' batches of 8 and more over a prepared matrix's panels, iq1_s's
    and iq1_m's included.  The floats take none on AVX-512: their panels and their GGUF rows'
    tile meet every batch as it comes (src/formats/float_panels.h); on the AVX2 variants (avx2,
    avxvnni) f16 batches take their columns widened to float32 once (src/formats/elements.h)."""
    grids = ("iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s")
    # (from the GGUF rows, from a prepared matrix's panels: the IQ grids' codes, iq1's trits)
    avx512 = {**{g: (8, 8) for g in grids}, "iq1_s": (8, 8), "iq1_m": (16, 8)}
    # AVX-VNNI's own tiles have 16 vector registers, not 32: the packed tile pays sooner, and
    # takes the K-quants' GGUF rows too (the AVX-512 variants have panels and AMX for them)
    avxvnni = {**{g: (6, 6) for g in grids}, "iq1_s": (8, 12), "iq1_m": (6, 6),
               "q2_K": (16, 0), "q3_K": (8, 0), "q4_K": (48, 0), "q5_K": (16, 0), "q6_K": (8, 0),
               # and the formats llama.cpp repacks, from their GGUF rows and from their panels
               "q4_0": (16, 16), "iq4_nl": (16, 16), "mxfp4": (16, 16)}
    # plain AVX2 runs AVX-VNNI's packed tile with maddubs and a madd by the scales: it pays from 8
    # for the grids and iq1_m, from 16 for q3_K, never for iq1_s, q2_K, q4_K, q5_K and q6_K
    widened = {"f16": (2, 0)}
    avx2 = {**{g: (8, 8) for g in grids}, "iq1_m": (8, 8), "q3_K": (16, 0), **widened}
    avxvnni.update(widened)
    for isa in _kernels.COMPILED_ISAS:
        packed = avx512 if isa.startswith("avx512") else avxvnni if isa == "avxvnni" else avx2 if isa == "avx2" else {}
        assert {f.name: _kernels.packed_min_cols(isa, f.id) for f in MATMUL} == {
            f.name: packed.get(f.name, (0, 0))[0] for f in MATMUL}, isa
        assert {f.name: _kernels.packed_panel_min_cols(isa, f.id) for f in MATMUL} == {
            f.name: packed.get(f.name, (0, 0))[1] for f in MATMUL}, isa


@pytest.mark.parametrize("fmt", [f for f in MATMUL if f.ggml_repack], ids=ids)
@pytest.mark.parametrize("batch", [16, 23, 31, 40, 71])
def test_repacked_formats_batches_from_packed_columns_are_vec_dot_bits(fmt, batch, isa):
    """On AVX-VNNI, q4_0's, iq4_nl's and mxfp4's batches of 16 and more take packed columns
    (src/packed_tile.h): vectors of 8 columns, and the last columns short of 8 a column at a time
    (71: groups of 64 columns, the second with only those).  13 rows (a panel, and 5 GGUF rows
    repeated to fill one) of 70 blocks (decoded 16 at a time: 4 chunks and a partial one) give
    vec_dot's bits from the GGUF rows and from the panels, on 1 and 2 threads."""
    rows, cols = 13, 70 * fmt.block_size
    m, x, xq = _setup(fmt, rows, batch, seed=batch, cols=cols)
    ref = _per_row(m, xq)
    for n_threads in (1, 2):
        np.testing.assert_array_equal(_tile(m, xq, rows, n_threads=n_threads), ref)
        out = np.full((rows, batch), np.nan, dtype=np.float32)
        _matmul_panels(m, xq, out, n_threads)
        np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("batch", [1, 3, 8, 13, 37])
@pytest.mark.parametrize("rows", [5, 16, 35])
def test_iq4_xs_at_its_largest_terms_is_vec_dot_bits(batch, rows, isa):
    """Every scale -32, every level -127, activations +-127 (32 127 127 a product): iq4_xs's
    panels where the variant has them (VNNI: levels + 128 through vpdpbusd, each sub-block's
    chain from -128 bsum; plain AVX2: |q| against a with q's sign through maddubs,
    src/formats/superblocks_x16.h; 35 rows: two panels and 3 GGUF rows) and
    its GGUF rows' tile still give vec_dot's bits, on one thread and two."""
    fmt = _formats.BY_NAME["iq4_xs"]
    m, x, xq = _setup(fmt, rows, batch, seed=batch * 7 + rows, cols=3 * fmt.block_size)
    blocks = np.frombuffer(m._data, dtype=np.uint8).copy().reshape(rows * 3, fmt.type_size)
    blocks[:, 2:8] = 0       # scales_h and scales_l: every ls 0, a scale of -32
    blocks[:, 8:] = 0        # every nibble 0: kvalues_iq4nl[0] = -127
    m = QMatrix(blocks.reshape(rows, -1), "iq4_xs", (rows, 3 * fmt.block_size))
    x = np.where(np.random.default_rng(batch).random(x.shape) < 0.5, -1.0, 1.0).astype(np.float32)
    _kernels.quantize_activations(_dispatch.isa, _formats.BY_NAME[fmt.act.lower()].id, x, xq)
    ref = _per_row(m, xq)
    assert np.isfinite(ref).all()
    for n_threads in (1, 2):
        np.testing.assert_array_equal(_tile(m, xq, rows, n_threads=n_threads).view(np.uint32), ref.view(np.uint32))
        if _kernels.panel_rows(_dispatch.isa, fmt.id):
            out = np.full((rows, batch), np.nan, dtype=np.float32)
            _matmul_panels(m, xq, out, n_threads)
            np.testing.assert_array_equal(out.view(np.uint32), ref.view(np.uint32))


@pytest.mark.parametrize("fmt", MATMUL, ids=ids)
@pytest.mark.parametrize("cols", [1, 2, 4])
@pytest.mark.parametrize("batch", [2, 5, 9, 33])
def test_tiles_are_vec_dot_bits_for_any_shape(fmt, cols, batch, isa):
    """The same bits per (row, column) for rows of one block (or chunk) and several, element
    formats with a scalar tail, and batches past a tile's columns; rows pass through every row
    group of a tile (19 rows: fours, pairs and a single row)."""
    n = cols * fmt.block_size if fmt.block_size > 1 else {1: 7, 2: 96, 4: 600}[cols]
    rows = 19
    m, x, xq = _setup(fmt, rows, batch, seed=fmt.id * 31 + cols + batch, cols=n)
    got = _tile(m, xq, rows)
    assert np.isfinite(got).all()
    np.testing.assert_array_equal(got, _per_row(m, xq))


@pytest.mark.parametrize("name, blocks", [("nvfp4", 75), ("q1_0", 37)])
@pytest.mark.parametrize("rows", [5, 19])
def test_single_column_rows_are_vec_dot_bits_past_a_chunk(name, blocks, rows, isa):
    """nvfp4's and q1_0's GEMV rows prepare the column once per chunk of blocks (32 nvfp4 block
    pairs, 32 q1_0 blocks; src/formats/fp4_bits.h) for a group of rows, AVX-512's nvfp4 two rows
    a register: rows longer than a chunk (a full chunk and a partial one, nvfp4 with an odd last
    block), in odd and even counts, still give vec_dot's bits."""
    fmt = _formats.BY_NAME[name]
    m, x, xq = _setup(fmt, rows, 1, seed=blocks + rows, cols=blocks * fmt.block_size)
    np.testing.assert_array_equal(_tile(m, xq, rows).view(np.uint32), _per_row(m, xq).view(np.uint32))


# ---------------------------------------------------------------------- interleaved layouts
INTERLEAVED = [f for f in MATMUL if f.interleave]


def test_interleaved_formats_are_the_32_value_formats_the_iq_grids_iq1_the_k_quants_iq4_xs_tq2_0_and_floats():
    assert [f.name for f in INTERLEAVED] == ["f32", "f16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_K", "q3_K", "q4_K", "q5_K",
                                             "q6_K", "iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s", "iq4_nl", "iq3_s",
                                             "iq2_s", "iq4_xs", "iq1_m", "bf16", "tq2_0", "mxfp4"]
    # 8 rows per panel, but 16 for q8_0, the K-quants, iq4_xs, tq2_0 and the floats (a row per lane
    # of a 512-bit vector)
    assert {f.name: f.interleave for f in INTERLEAVED if f.interleave != 8} == {
        "f32": 16, "f16": 16, "bf16": 16, "q8_0": 16, "q2_K": 16, "q3_K": 16, "q4_K": 16, "q5_K": 16, "q6_K": 16, "iq4_xs": 16, "tq2_0": 16}
    assert [f.name for f in INTERLEAVED if f.ggml_repack] == ["q4_0", "iq4_nl", "mxfp4"]
    assert not any(f.ggml_repack for f in MATMUL if not f.interleave)
    # only iq1_s's, iq1_m's and the IQ grids' panels are larger than their rows: trit blocks of 82
    # bytes (block_iq1_st) for 50 and of 76 (block_iq1_mt) for 56, code blocks of 106 bytes
    # (block_iq2_c) for 66, 74 and 82 and of 170 (block_iq3_c) for 98 and 110
    assert [(f.name, f.panel_type_size) for f in INTERLEAVED if f.panel_type_size] == [
        ("iq2_xxs", 106), ("iq2_xs", 106), ("iq3_xxs", 170), ("iq1_s", 82), ("iq3_s", 170), ("iq2_s", 106),
        ("iq1_m", 76)]


def _skip_without_panels(fmt):
    if not _kernels.panel_rows(_dispatch.isa, fmt.id):   # no panel_tile in this variant (superblocks_x16.h)
        pytest.skip(f"the {_dispatch.isa} variant multiplies {fmt.name} from its GGUF rows")


def _panels(m, n_threads=1):
    rows, cols = m.shape
    R = m.format.interleave
    panels = np.empty(rows // R * R * m.format.panel_row_nbytes(cols), dtype=np.uint8)
    _kernels.interleave(_dispatch.isa, m.format.id, R, m._data, m.row_nbytes, cols, panels,
                        m.format.panel_row_nbytes(cols), n_threads)
    return panels


def _matmul_panels(m, xq, out, n_threads):
    fmt, cols = m.format, m.shape[1]
    _kernels.matmul_panels(_dispatch.isa, fmt.id, fmt.interleave, _panels(m), fmt.panel_row_nbytes(cols), m._data,
                           m.row_nbytes, cols, xq, out, n_threads)


def _documented_trit_block(block):
    """include/qgemv/blocks.h's block_iq1_mt from an iq1_m block: t = g + 1 (gguf-py's grid) in
    2-bit fields, byte 32 h + k bits 2 l for value 128 h + 32 l + k; the delta signs; the scales."""
    import gguf.quants
    if gguf.quants.IQ1_S.grid is None:
        gguf.quants.IQ1_S.init_grid()
    grid = np.rint(gguf.quants.IQ1_S.grid.reshape(-1, 8)).astype(np.int64)
    qs, qh, scales = block[:32], block[32:48], block[48:56]
    t, neg = np.zeros(64, np.uint8), 0
    for g in range(32):
        nib = int(qh[g // 2]) >> (4 * (g % 2)) & 15
        for j, value in enumerate(grid[int(qs[g]) | (nib & 7) << 8]):
            v = 8 * g + j
            t[32 * (v // 128) + v % 32] |= (value + 1) << (2 * (v % 128 // 32))
        neg |= (nib >> 3) << g
    return np.concatenate([t, np.array([neg], "<u4").view(np.uint8), scales])


def _documented_trit_block_iq1_s(block):
    """include/qgemv/blocks.h's block_iq1_st from an iq1_s block (d, qs[32], qh[8] uint16): t = g + 1
    (gguf-py's grid) in block_iq1_mt's 2-bit fields, then qh and d as stored."""
    import gguf.quants
    if gguf.quants.IQ1_S.grid is None:
        gguf.quants.IQ1_S.init_grid()
    grid = np.rint(gguf.quants.IQ1_S.grid.reshape(-1, 8)).astype(np.int64)
    d, qs, qh = block[0:2], block[2:34], block[34:50]
    words = qh.copy().view("<u2")
    t = np.zeros(64, np.uint8)
    for g in range(32):
        for j, value in enumerate(grid[int(qs[g]) | (int(words[g // 4]) >> (3 * (g % 4)) & 7) << 8]):
            v = 8 * g + j
            t[32 * (v // 128) + v % 32] |= (value + 1) << (2 * (v % 128 // 32))
    return np.concatenate([t, qh, d])


def _documented_code_block(fmt, block):
    """include/qgemv/blocks.h's block_iq2_c (iq2_xxs, iq2_xs, iq2_s) or block_iq3_c (iq3_xxs, iq3_s)
    from a GGUF block: gguf-py's dequantize of the block with d = 1 gives sign level db(s) exactly,
    s the 4-bit scale of each 16 values (iq2_xxs, iq3_xxs: the top nibble of their sub-block's
    uint32 of signs; iq2_xs, iq2_s: scales bytes, low nibble first; iq3_s: a nibble per
    sub-block); the code is the level's index in the grid's magnitudes; iq2: byte 32 h + k bits
    2 l for value 128 h + 32 l + k; iq3: byte 16 k + j, low nibble value 32 k + j, high 32 k + 16 + j;
    sign bit j of byte i for value 8 i + j; scales[k] = s of values 32 k .. + 15 | of 32 k + 16 .. << 4."""
    import gguf.quants
    u32 = lambda b: b.copy().view("<u4")
    if fmt.name == "iq2_xxs":
        s, db, mags = np.repeat(u32(block[2:])[1::2] >> 28, 2), lambda s: (0.5 + s) / 4, [8, 25, 43]
    elif fmt.name in ("iq2_xs", "iq2_s"):   # scales last
        s, db, mags = np.stack([block[-8:] & 15, block[-8:] >> 4], 1).reshape(-1), lambda s: (0.5 + s) / 4, [8, 25, 43]
    elif fmt.name == "iq3_xxs":             # d, 64 index bytes, 8 uint32 of signs and scale
        s, db, mags = np.repeat(u32(block[66:98]) >> 28, 2), lambda s: (0.5 + s) / 2, [4, 12, 20, 28, 36, 44, 52, 62]
    else:                                   # iq3_s: d, qs[64], qh[8], signs[32], scales[4]
        nib = np.stack([block[106:110] & 15, block[106:110] >> 4], 1).reshape(-1)
        s, db, mags = np.repeat(nib, 2), lambda s: 1.0 + 2 * s, list(range(1, 16, 2))
    one = block.copy()
    one[:2] = np.array([1.0], np.float16).view(np.uint8)
    y = gguf.quants.dequantize(one, gguf.GGMLQuantizationType[fmt.name.upper()]).astype(np.float64)
    level = y / np.repeat(db(s.astype(np.float64)), 16)
    assert set(np.unique(np.abs(level))) <= set(map(float, mags))
    code = np.searchsorted(mags, np.abs(level)).astype(np.uint8)
    if len(mags) == 3:
        codes = np.zeros(64, np.uint8)
        for v in range(256):
            codes[32 * (v // 128) + v % 32] |= code[v] << (2 * (v % 128 // 32))
    else:
        codes = np.zeros(128, np.uint8)
        for v in range(256):
            codes[16 * (v // 32) + v % 16] |= code[v] << (4 * (v % 32 // 16))
    packed_scales = (s[0::2] | s[1::2] << 4).astype(np.uint8)
    return np.concatenate([block[:2], packed_scales, codes, np.packbits(level < 0, bitorder="little")])


def _documented_panel(fmt, rows8):
    """include/qgemv/blocks.h's panel from a panel's rows' GGUF blocks (R, blocks, type_size)."""
    if fmt.name in ("iq1_s", "iq1_m"):   # the rows' trit blocks, row after row
        trits = _documented_trit_block_iq1_s if fmt.name == "iq1_s" else _documented_trit_block
        return np.concatenate([trits(b) for row in rows8 for b in row])
    if fmt.name in ("iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s"):   # the rows' code blocks, row after row
        return np.concatenate([_documented_code_block(fmt, b) for row in rows8 for b in row])
    block = _documented_x16_block if fmt.interleave == 16 else _documented_panel_block
    return np.concatenate([block(fmt, rows8[:, b]) for b in range(rows8.shape[1])])


def _documented_x16_block(fmt, rows16):
    """block_f32x16 / block_f16x16 from 16 rows' values: v[r] = row r's value;
    block_q8_0x16 from 16 rows' blocks (16, type_size): d[16], u[64 i + 4 r + j] = row r's qs[4 i + j] + 128;
    block_q4_Kx16 / block_q5_Kx16 from 16 rows' super-blocks: d[16], dmin[16],
    scales[16 i + r], (q5_K) qh[64 k + 4 r + j], qs[64 g + 4 r + j] = row r's byte i, 4 k + j, 4 g + j;
    block_q2_Kx16: d[16], dmin[16], scales[16 s + r], qs[64 g + 4 r + j];
    block_q3_Kx16: d[16], scales[16 i + r], hmask[64 m + 4 r + j], qs[64 g + 4 r + j];
    block_iq4_xsx16: d[16], scales_h[16], scales_l[4 r + j], qs as q4_K's;
    block_tq2_0x16: d[16], qs[64 g + 4 r + j] = row r's qs[4 g + j];
    block_q6_Kx16: d[16], scales[16 s + r], then per half h the ql and qh groups (16 rows x 4 bytes) in
    the order its products read them: (ql 16 h + k, qh 8 h + k) for k < 8, then ql 16 h + 8 .. 16 h + 15."""
    if fmt.block_size == 1:    # block_f32x16 / block_f16x16: v[r] = row r's value
        return rows16.reshape(-1)
    def lanes(field, width):   # (16, nbytes) -> groups of `width` bytes, row r's group in lane r
        return field.reshape(16, -1, width).transpose(1, 0, 2).reshape(-1)
    if fmt.name == "q8_0":     # block_q8_0: d, qs[32]
        return np.concatenate([rows16[:, 0:2].reshape(-1), lanes(rows16[:, 2:34] ^ 0x80, 4)])
    if fmt.name == "q2_K":     # block_q2_K: scales[16], qs[64], d, dmin
        return np.concatenate([rows16[:, 80:82].reshape(-1), rows16[:, 82:84].reshape(-1), lanes(rows16[:, 0:16], 1),
                               lanes(rows16[:, 16:80], 4)])
    if fmt.name == "q3_K":     # block_q3_K: hmask[32], qs[64], scales[12], d
        return np.concatenate([rows16[:, 108:110].reshape(-1), lanes(rows16[:, 96:108], 1), lanes(rows16[:, 0:32], 4),
                               lanes(rows16[:, 32:96], 4)])
    if fmt.name == "tq2_0":    # block_tq2_0: qs[64], d
        return np.concatenate([rows16[:, 64:66].reshape(-1), lanes(rows16[:, 0:64], 4)])
    if fmt.name == "iq4_xs":   # block_iq4_xs: d, scales_h, scales_l[4], qs[128]
        return np.concatenate([rows16[:, 0:2].reshape(-1), rows16[:, 2:4].reshape(-1), lanes(rows16[:, 4:8], 4),
                               lanes(rows16[:, 8:], 4)])
    if fmt.name == "q6_K":     # block_q6_K: ql[128], qh[64], scales[16], d
        ql = lanes(rows16[:, 0:128], 4).reshape(32, 64)
        qh = lanes(rows16[:, 128:192], 4).reshape(16, 64)
        order = [part for h in range(2) for part in
                 [g for k in range(8) for g in (ql[16 * h + k], qh[8 * h + k])] + list(ql[16 * h + 8:16 * h + 16])]
        return np.concatenate([rows16[:, 208:210].reshape(-1), lanes(rows16[:, 192:208], 1)] + order)
    parts = [rows16[:, 0:2].reshape(-1), rows16[:, 2:4].reshape(-1), lanes(rows16[:, 4:16], 1)]
    if fmt.name == "q5_K":
        parts.append(lanes(rows16[:, 16:48], 4))
    parts.append(lanes(rows16[:, -128:], 4))
    return np.concatenate(parts)


def _documented_panel_block(fmt, rows8):
    """include/qgemv/blocks.h's panel block from 8 rows' GGUF blocks (8, type_size)."""
    if fmt.ggml_repack:      # the 8 scales (f16 d or e8m0 e), then qs[32 g + 4 r + j] = row r's qs[4 g + j]
        scale = fmt.type_size - 16
        qs = rows8[:, scale:].reshape(8, 4, 4).transpose(1, 0, 2).reshape(-1)
        return np.concatenate([rows8[:, :scale].reshape(-1), qs])
    # d[8], m[8] (q4_1, q5_1), the 5th-bit plane (q5), then qs[16 r + j] = row r's qs[j]
    has_min, has_qh = fmt.name in ("q4_1", "q5_1"), fmt.name.startswith("q5")
    parts = [rows8[:, 0:2].reshape(-1)] + ([rows8[:, 2:4].reshape(-1)] if has_min else [])
    if has_qh:
        at = 4 if has_min else 2
        qh = rows8[:, at:at + 4].copy().view("<u4").reshape(8)
        plane = np.zeros(32, np.uint8)
        for R in range(8):                                   # register R = 2 p + h
            p, h = divmod(R, 2)
            for j in range(32):                              # byte j: row 2p + j // 16, value 16 h + j % 16
                bit = int(qh[2 * p + j // 16]) >> (16 * h + j % 16) & 1
                plane[j] |= bit << R
        parts.append(plane)
    parts.append(rows8[:, -16:].reshape(-1))
    return np.concatenate(parts)


@pytest.mark.parametrize("fmt", INTERLEAVED, ids=ids)
def test_interleaved_layout_is_the_documented_one(fmt, isa):
    """include/qgemv/blocks.h: per panel block, the 8 rows' scales, then their levels, as the
    format's layout documents it."""
    _skip_without_panels(fmt)
    R = fmt.interleave
    rows, cols = 3 * R, 5 * fmt.block_size
    m = QMatrix(random_blocks(fmt.name, rows, cols, seed=5), fmt.name, (rows, cols))
    blocks = m.data.reshape(rows, cols // fmt.block_size, fmt.type_size)
    want = [_documented_panel(fmt, blocks[R * p:R * p + R]) for p in range(rows // R)]
    np.testing.assert_array_equal(_panels(m, n_threads=2), np.concatenate(want))


@pytest.mark.parametrize("fmt", INTERLEAVED, ids=ids)
@pytest.mark.parametrize("rows", [8, 13, 40, 77, 150])
@pytest.mark.parametrize("batch", [1, 2, 5, 7, 12, 33])
def test_panels_give_vec_dot_bits(fmt, rows, batch, isa):
    """matmul_panels (prepared panels, the last rows % 8 from the GGUF rows; on AVX-512 the
    IQ grids', iq1_s's and iq1_m's batches of 8 on from packed columns against the panels' rows,
    tiles across the panels' end included) and matmul_act (panels made on the fly) give vec_dot's
    bits, on any thread count."""
    _skip_without_panels(fmt)
    m, x, xq = _setup(fmt, rows, batch, seed=rows * 31 + batch)
    ref = _per_row(m, xq)
    for n_threads in (1, 2):
        out = np.full((rows, batch), np.nan, dtype=np.float32)
        _matmul_panels(m, xq, out, n_threads)
        np.testing.assert_array_equal(out, ref, err_msg=f"panels, {n_threads} threads")
        np.testing.assert_array_equal(_tile(m, xq, rows, n_threads=n_threads), ref,
                                      err_msg=f"GGUF rows, {n_threads} threads")


@pytest.mark.parametrize("fmt", INTERLEAVED, ids=ids)
@pytest.mark.parametrize("batch", [1, 3, 17])
def test_panels_give_vec_dot_bits_on_long_rows(fmt, batch, isa):
    """Rows of 70 blocks: a batch sweeps the panels in chunks (2 full and a partial one for the
    32-block chunks of q32_pairs.h, 4 and a partial one for its 16-block AVX-512 chunks), keeping
    each column's accumulators between them; batch 17 spans two groups of 16 columns; a single
    column reads two panels at a time on such rows (q8_0_x16.h, superblocks_x16.h' pairs)."""
    _skip_without_panels(fmt)
    rows, cols = 40, 70 * fmt.block_size
    m, x, xq = _setup(fmt, rows, batch, seed=batch, cols=cols)
    out = np.full((rows, batch), np.nan, dtype=np.float32)
    _matmul_panels(m, xq, out, 1)
    np.testing.assert_array_equal(out, _per_row(m, xq))


@pytest.mark.parametrize("fmt", INTERLEAVED, ids=ids)
def test_qmatrix_prepares_the_layout_once_and_keeps_its_bytes(fmt, isa):
    rows, cols = 29, 4 * fmt.block_size
    blocks = random_blocks(fmt.name, rows, cols, seed=9)
    x = np.random.default_rng(9).standard_normal((cols, 3)).astype(np.float32)
    m = QMatrix(blocks, fmt.name, (rows, cols))
    assert m._prepared is None                                   # nothing before the first product
    m.dequantize()
    assert m._prepared is None
    y = m @ x
    if not _kernels.panel_rows(isa, fmt.id):                    # this variant reads the GGUF rows
        assert m._prepared is None
        return
    panels = m._prepared
    full = rows // fmt.interleave * fmt.interleave                # 16 or 24 of the 29 rows
    assert panels is not None and panels.nbytes == full * fmt.panel_row_nbytes(cols) and not panels.flags.writeable
    assert panels.ctypes.data % 64 == 0                           # on a cache line
    np.testing.assert_array_equal(m @ x, y)
    assert m._prepared is panels                                 # made once
    np.testing.assert_array_equal(m.data, blocks.reshape(-1))  # m.data stays the GGUF bytes
    assert QMatrix(blocks[:7], fmt.name, (7, cols)).matmul(x[:, 0]).shape == (7,)   # no panel: plain rows
    assert qgemv.get_repack() is True
    qgemv.set_repack(False)
    try:
        plain = QMatrix(blocks, fmt.name, (rows, cols))
        np.testing.assert_array_equal(plain @ x, y)           # the same bits without the layout
        assert plain._prepared is None
        np.testing.assert_array_equal(m @ x, y)                # a prepared matrix keeps its panels
    finally:
        qgemv.set_repack(True)


def test_a_variant_without_a_formats_panels_reads_its_gguf_rows(monkeypatch):
    """A matrix whose panels one variant prepared multiplies from its GGUF rows in a variant that
    does not use them (no panel_tile there, superblocks_x16.h), with that variant's row-by-row bits."""
    pairs = [(f, a, b) for f in INTERLEAVED for a in _dispatch.runnable() for b in _dispatch.runnable()
             if _kernels.panel_rows(a, f.id) and not _kernels.panel_rows(b, f.id)]
    if not pairs:
        pytest.skip("every variant this CPU runs uses every format's panels")
    for fmt, with_panels, without in pairs:
        m, x, xq = _setup(fmt, 40, 3, seed=fmt.id)
        monkeypatch.setattr(_dispatch, "isa", with_panels)
        m.matmul(x.T)
        assert m._prepared is not None
        monkeypatch.setattr(_dispatch, "isa", without)
        np.testing.assert_array_equal(m.matmul(x.T), _per_row(m, xq), err_msg=f"{fmt.name}: {without}")


def test_set_repack_takes_a_bool():
    with pytest.raises(TypeError, match="bool"):
        qgemv.set_repack(1)


# ---------------------------------------------------------------------- repack_as formats
REPACKED = [f for f in MATMUL if f.repack_as]


def test_repack_as_formats_share_block_and_activation():
    assert [(f.name, f.repack_as) for f in REPACKED] == [("tq1_0", "tq2_0")]
    for f in REPACKED:
        twin = _formats.BY_NAME[f.repack_as]
        assert (twin.block_size, twin.act) == (f.block_size, f.act) and _formats.MATMUL in twin.ops


def _repacked(m, n_threads=1):
    twin = _formats.BY_NAME[m.format.repack_as]
    out = np.empty(m.shape[0] * twin.row_nbytes(m.shape[1]), dtype=np.uint8)
    _kernels.repack_rows(_dispatch.isa, m.format.id, m._data, m.row_nbytes, m.shape[1], out,
                         twin.row_nbytes(m.shape[1]), n_threads)
    return QMatrix(out, twin.name, m.shape)


@pytest.mark.parametrize("fmt", REPACKED, ids=ids)
def test_repacked_rows_hold_the_same_levels_and_scales(fmt, isa):
    """Every byte value of the format (random blocks: scales, trits and the unused codes)
    dequantizes to the same floats from the repacked rows, which the products then read."""
    rows, cols = 21, 5 * fmt.block_size
    m = QMatrix(random_blocks(fmt.name, rows, cols, seed=21), fmt.name, (rows, cols))
    twin = _repacked(m, n_threads=2)
    np.testing.assert_array_equal(twin.dequantize().view(np.uint32), m.dequantize().view(np.uint32))
    m, x, xq = _setup(fmt, rows, 5, seed=3)
    np.testing.assert_array_equal(_per_row(_repacked(m), xq), _per_row(m, xq))   # same bits


@pytest.mark.parametrize("fmt", REPACKED, ids=ids)
@pytest.mark.parametrize("act", [None, "f32"])
def test_qmatrix_repacks_once_and_keeps_its_bytes(fmt, act):
    rows, cols = 19, 2 * fmt.block_size
    blocks = random_blocks(fmt.name, rows, cols, seed=4)
    x = np.random.default_rng(4).standard_normal((cols, 3)).astype(np.float32)
    m = QMatrix(blocks, fmt.name, (rows, cols))
    m.dequantize()
    assert m._prepared is None                                 # nothing before the first product
    y = m.matmul(x, act=act)
    copy = m._prepared
    twin = _formats.BY_NAME[fmt.repack_as]
    assert copy is not None and copy.nbytes == rows * twin.row_nbytes(cols) and not copy.flags.writeable
    assert copy.ctypes.data % 64 == 0                           # on a cache line
    np.testing.assert_array_equal(m.matmul(x, act=act), y)
    assert m._prepared is copy                                 # made once
    np.testing.assert_array_equal(m.data, blocks.reshape(-1))  # m.data stays the GGUF bytes
    qgemv.set_repack(False)
    try:
        plain = QMatrix(blocks, fmt.name, (rows, cols))
        np.testing.assert_array_equal(plain.matmul(x, act=act), y)   # the same bits from the GGUF rows
        assert plain._prepared is None
    finally:
        qgemv.set_repack(True)


@pytest.mark.parametrize("fmt", [f for f in INTERLEAVED if f.interleave == 16 and f.kind == "quant"], ids=ids)
@pytest.mark.parametrize("sign", [1.0, -1.0, 0.0])
@pytest.mark.parametrize("batch", [1, 5])
def test_sixteen_row_panels_at_their_largest_levels_and_scales(fmt, sign, batch):
    """The panels of the K-quants, iq4_xs, tq2_0 (superblocks_x16.h; AVX2 adds maddubs pairs in
    int16, its single column of tq2_0 a field in place, 4 t) and q8_0 (q8_0_x16.h) sum 16 rows'
    integers in lanes: every level, scale and minimum at its largest, against activations all of
    one sign (the largest int16 sums) or alternating (sign 0), give vec_dot's bits, and every
    ISA variant the same ones (exact integers, then the same fmas); a single column and a batch."""
    rows, cols = 40, 3 * 256
    blocks = np.full((rows, cols // fmt.block_size, fmt.type_size), 0xFF, np.uint8)
    if fmt.name == "q8_0":   # levels -128 and 127 in turn (u = q + 128 at 0 and 255); finite d
        blocks[:, :, 0:2] = np.array([1e-3], np.float16).view(np.uint8)
        blocks[:, :, 2:] = np.array([0x80, 0x7F] * 16, np.uint8)
    elif fmt.name == "q6_K":   # levels 63 - 32 = 31; the int8 scales at -128 and 127, in turn; finite d
        blocks[:, :, 192:208] = np.array([0x80, 0x7F] * 8, np.uint8)
        blocks[:, :, 208:210] = np.array([1e-3], np.float16).view(np.uint8)
    elif fmt.name == "q2_K":   # levels 3, scales and minimums 15; finite d and dmin
        blocks[:, :, 80:84] = np.array([1e-3, 2e-3], np.float16).view(np.uint8)
    elif fmt.name == "q3_K":   # levels 3 (u = 7), scales 63 - 32 = 31; finite d
        blocks[:, :, 108:110] = np.array([1e-3], np.float16).view(np.uint8)
    elif fmt.name == "iq4_xs":   # ls - 32 = 31, levels kvalues[15] = 113, and -127 in every other row
        blocks[:, :, 0:2] = np.array([1e-3], np.float16).view(np.uint8)
        blocks[1::2, :, 8:] = 0
    elif fmt.name == "tq2_0":   # levels t = 3 (x = 2 d); finite d
        blocks[:, :, 64:66] = np.array([1e-3], np.float16).view(np.uint8)
    else:
        blocks[:, :, 0:4] = np.array([1e-3, 2e-3], np.float16).view(np.uint8)   # finite d and dmin
    m = QMatrix(blocks.reshape(rows, -1), fmt.name, (rows, cols))
    x = np.where(np.arange(cols) % 2, 1.0, -1.0) if sign == 0 else np.full(cols, sign)
    x = (x[None, :] * np.linspace(1, 2, batch)[:, None]).astype(np.float32)
    afmt = _formats.BY_NAME[fmt.act.lower()]
    xq = np.empty((batch, afmt.row_nbytes(cols)), np.uint8)
    variants = [i for i in _dispatch.runnable() if _kernels.panel_rows(i, fmt.id)]
    if not variants:
        pytest.skip(f"no variant this CPU runs has {fmt.name}'s panels")
    results = []
    for isa_name in variants:
        _kernels.quantize_activations(isa_name, afmt.id, x, xq)
        want = np.full((rows, batch), np.nan, np.float32)
        _kernels.matmul_act_vec_dot(isa_name, fmt.id, m._data, m._row_nbytes, cols, xq, want, 1)
        panels = np.empty(32 * fmt.panel_row_nbytes(cols), np.uint8)
        _kernels.interleave(isa_name, fmt.id, 16, m._data, m._row_nbytes, cols, panels, fmt.panel_row_nbytes(cols), 1)
        for n_threads in (1, 2):
            got = np.full((rows, batch), np.nan, np.float32)
            _kernels.matmul_panels(isa_name, fmt.id, 16, panels, fmt.panel_row_nbytes(cols), m._data, m._row_nbytes,
                                   cols, xq, got, n_threads)
            np.testing.assert_array_equal(got, want, err_msg=f"{isa_name}, {n_threads} threads")
        results.append(want)
    for other in results[1:]:
        np.testing.assert_array_equal(other, results[0])
    ref = m.dequantize().astype(np.float64) @ x.T.astype(np.float64)
    assert np.allclose(results[0], ref, rtol=fmt.tolerance, atol=0)


def test_panel_functions_refuse_a_wrong_row_count(isa):
    fmt = _formats.BY_NAME["q4_k"]
    data = np.zeros(16 * fmt.type_size, np.uint8)
    panels = np.empty_like(data)
    # a variant without q4_K's panels (baseline) says so instead
    match = "hold 16 rows, not 8" if _kernels.panel_rows(isa, fmt.id) else "no interleaved layout"
    with pytest.raises(ValueError, match=match):
        _kernels.interleave(_dispatch.isa, fmt.id, 8, data, fmt.type_size, 256, panels, fmt.type_size, 1)
    with pytest.raises(ValueError, match="no interleaved layout"):
        _kernels.interleave(_dispatch.isa, _formats.BY_NAME["nvfp4"].id, 16, data, fmt.type_size, 256, panels,
                            fmt.type_size, 1)


# the formats whose batches run on AMX tiles where the CPU has them (src/formats/superblocks_x16.h)
AMX_FORMATS = [_formats.BY_NAME[name] for name in ("q2_k", "q4_k", "q5_k", "q6_k", "iq4_xs")]


@pytest.mark.parametrize("fmt", AMX_FORMATS, ids=ids)
@pytest.mark.parametrize("batch", [12, 16, 17, 31, 32, 40, 64, 70])
@pytest.mark.parametrize("largest", [False, True])
def test_amx_tiles_give_the_passes_bits(fmt, batch, largest, monkeypatch):
    """On AMX, batches of 12 columns and more take a super-block's integer sums from tdpbsud
    (chunks of 64 columns, groups of up to 16, the last overlapping the one before); the same
    exact integers and fmas as the VNNI passes: vec_dot's bits, with the tiles on or off, on any
    thread count; levels, scales and minimums at their largest against activations of one sign
    too (the largest sums)."""
    if not _kernels.amx_request() or "avx512bf16" not in _dispatch.runnable():
        pytest.skip("this CPU or OS offers no AMX-INT8 tiles")
    rows, cols = 40, 3 * 256
    if largest:
        blocks = np.full((rows, cols // fmt.block_size, fmt.type_size), 0xFF, np.uint8)
        if fmt.name == "iq4_xs":   # d finite; every other row levels -127 at scale -32 (q ls 4064)
            blocks[:, :, 0:2] = np.array([1e-3], np.float16).view(np.uint8)
            blocks[1::2, :, 2:] = 0
        elif fmt.name == "q2_K":   # levels 3, scales and minimums 15; finite d and dmin
            blocks[:, :, 80:84] = np.array([1e-3, 2e-3], np.float16).view(np.uint8)
        elif fmt.name == "q6_K":   # levels 31, every other row -32; scales -128 and 127 in turn; finite d
            blocks[:, :, 192:208] = np.array([0x80, 0x7F] * 8, np.uint8)
            blocks[:, :, 208:210] = np.array([1e-3], np.float16).view(np.uint8)
            blocks[1::2, :, 0:192] = 0
        else:   # finite d and dmin
            blocks[:, :, 0:4] = np.array([1e-3, 2e-3], np.float16).view(np.uint8)
        m = QMatrix(blocks.reshape(rows, -1), fmt.name, (rows, cols))
        x = np.full((batch, cols), 3.0, np.float32) * np.linspace(1, 2, batch, dtype=np.float32)[:, None]
    else:
        m = QMatrix(random_blocks(fmt.name, rows, cols, seed=batch, moderate=True), fmt.name, (rows, cols))
        x = np.random.default_rng(batch).standard_normal((batch, cols)).astype(np.float32)
    monkeypatch.setattr(_dispatch, "isa", "avx512bf16")
    afmt = _formats.BY_NAME[fmt.act.lower()]
    xq = np.empty((batch, afmt.row_nbytes(cols)), np.uint8)
    _kernels.quantize_activations("avx512bf16", afmt.id, x, xq)
    want = _per_row(m, xq)
    try:
        for amx in (True, False):
            _kernels.set_amx_tiles(amx)
            for n_threads in (1, 2):
                got = np.full((rows, batch), np.nan, np.float32)
                _matmul_panels(m, xq, got, n_threads)
                np.testing.assert_array_equal(got, want, err_msg=f"amx {amx}, {n_threads} threads")
    finally:
        _kernels.set_amx_tiles(_dispatch.amx)


@pytest.mark.parametrize("name", ["iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s", "iq1_m"])
@pytest.mark.parametrize("batch", [32, 40, 72])
def test_amx_packed_tiles_give_vec_dot_bits(name, batch, monkeypatch):
    """On AMX, batches of 32 columns and more of the packed-column formats (src/packed_tile.h)
    take each super-block's t from tdpbssd / tdpbusd (the rows' q (2 s + 1) split as 64 H + L),
    a last group of 8 or fewer columns from the VNNI kernel: vec_dot's bits, tiles on or off,
    from the GGUF rows and from the prepared code rows, on any thread count."""
    if not _kernels.amx_request() or "avx512bf16" not in _dispatch.runnable():
        pytest.skip("this CPU or OS offers no AMX-INT8 tiles")
    fmt = _formats.BY_NAME[name]
    monkeypatch.setattr(_dispatch, "isa", "avx512bf16")
    rows = 21   # two passes of 8 rows and a partial one
    m, x, xq = _setup(fmt, rows, batch, seed=batch + fmt.id, cols=2 * 256)
    want = _per_row(m, xq)
    try:
        for amx in (True, False):
            _kernels.set_amx_tiles(amx)
            for n_threads in (1, 2):
                np.testing.assert_array_equal(_tile(m, xq, rows, n_threads=n_threads), want,
                                              err_msg=f"GGUF rows, amx {amx}, {n_threads} threads")
                got = np.full((rows, batch), np.nan, np.float32)
                _matmul_panels(m, xq, got, n_threads)
                np.testing.assert_array_equal(got, want, err_msg=f"code rows, amx {amx}, {n_threads} threads")
    finally:
        _kernels.set_amx_tiles(_dispatch.amx)
