# cython: language_level=3
"""Row drivers of qgemv: validated buffers in, parallel loops over rows, kernels of one ISA.

Design:
1. The block kernels are C (src/formats/*.h), compiled once per ISA variant into a
   qgemv_kernel_table indexed by ggml type id (src/kernels.c).  Everything here is the loops
   around them, written once for every format: dequantize rows, quantize activations, and
   the two products (ggml's quantized activations, or float32 activations).
2. Callers (qgemv/qmatrix.py) validate every argument first; these functions trust shapes,
   strides and type ids, release the GIL and never raise from inside a loop.
3. Parallelism is `prange` over rows (a batch: over tiles of TILE_ROWS rows, each handed to
   the format's tile kernel with every column of the batch, src/tiles.h).  The products take
   a guided schedule: each thread starts on one long contiguous slab of the weight matrix
   (what a memory-bound GEMV wants), and the last rows go in ever smaller chunks to whichever
   thread is free, so a thread that was held up (a shared machine's other jobs) does not keep
   the other waiting.  Against static, in one process on a shared 2-core Zen 4 (three runs):
   0.75x to 1.03x (q5_0 batch 8 0.75-1.03, q8_0 out of cache 0.87-0.94, the others 0.86-1.03;
   1 thread even).  Each row's result does not depend on which thread computes it.
   `n_threads` is always resolved by the caller (qgemv/_threads.py).  One thread runs the
   same loop as a plain `range`: an OpenMP region of one thread still builds a team (libgomp,
   ~0.8 us a call here, a single column's activations paid it at every product), and so does
   prange's `use_threads_if=n_threads > 1` (`omp parallel if(...)`: 1.02 against 0.21 us a
   call over 16 values), hence the written-out pairs.
4. Weight rows are addressed as base + r * row_nbytes; a row is a whole number of blocks.
"""
from cython.parallel cimport parallel, prange, threadid
from libc.math cimport cosf, sinf
from libc.stdlib cimport free, malloc
from libc.stdint cimport int64_t, uint8_t, uint32_t

from qgemv._kernels cimport (
    QGEMV_N_TYPES, QGEMV_GRID8_COUNT, QGEMV_GRID8_KEYS, qgemv_grid8, QGEMV_ISAS, QGEMV_BUILD_INFO, qgemv_kernel_table, qgemv_table_for,
    qgemv_amx_request, qgemv_cpu_runs, qgemv_cpu_vendor, qgemv_have_openmp, qgemv_omp_max_threads,
)
from qgemv._kernels cimport (
    kmask_iq2xs, ksigns_iq2xs, ksigns64, iq2xxs_grid, iq2xs_grid, iq2s_grid, iq3xxs_grid,
    iq3s_grid, iq1s_grid, kvalues_iq4nl, kvalues_mxfp4,
)

N_TYPES = QGEMV_N_TYPES
COMPILED_ISAS = tuple((<bytes>QGEMV_ISAS).decode().split(","))
BUILD_INFO = (<bytes>QGEMV_BUILD_INFO).decode()


cdef const qgemv_kernel_table *_table(str isa) except NULL:
    cdef const qgemv_kernel_table *t = qgemv_table_for(isa.encode())
    if t == NULL:
        raise ValueError(f"ISA variant {isa!r} was not compiled; compiled: {COMPILED_ISAS}")
    return t


def cpu_runs(str isa):
    """True if this CPU can execute the given variant's instructions."""
    return bool(qgemv_cpu_runs(isa.encode()))


def cpu_vendor():
    """The CPU's CPUID vendor string ("AuthenticAMD", "GenuineIntel", ...), "" off x86."""
    cdef char out[13]
    qgemv_cpu_vendor(out)
    return (<bytes>out).decode("ascii", "replace")


def set_prefetch_one_column(bint on):
    """Whether a single column's passes over 16-row panels prefetch, in every compiled variant
    (include/qgemv/simd.h: QGEMV_PREFETCH_PASS_LINE).  Speed only: results never change."""
    for isa in COMPILED_ISAS:
        _table(isa).prefetch_one_column[0] = on


def prefetch_one_column(str isa):
    """The variant's single-column panel prefetch (set_prefetch_one_column)."""
    return bool(_table(isa).prefetch_one_column[0])


def amx_request():
    """Whether this process may run AMX-INT8 tiles: the CPU has them and Linux grants their
    state (include/qgemv/runtime.h: qgemv_amx_request; asking again is harmless)."""
    return bool(qgemv_amx_request())


def set_amx_tiles(bint on):
    """Whether batches may run on AMX tiles, in every compiled variant (only the avx512bf16
    variant, built with them, has any: include/qgemv/simd.h, QGEMV_AMX).  Speed only: results
    never change.  Callers turn it on only after amx_request()."""
    for isa in COMPILED_ISAS:
        _table(isa).amx_tiles[0] = on


def amx_tiles(str isa):
    """The variant's AMX switch (set_amx_tiles)."""
    return bool(_table(isa).amx_tiles[0])


def set_bf16_pairs(bint on):
    """Whether bf16 products run vdpbf16ps's arithmetic (pairs, subnormals flushed:
    src/formats/float_panels.h) in the avx512bf16 variant, the one that has the instruction;
    the other variants keep their order.  Results change (in the last bits), not only speed."""
    for isa in COMPILED_ISAS:
        _table(isa).bf16_pairs[0] = on and isa == "avx512bf16"


def bf16_pairs(str isa):
    """The variant's bf16 arithmetic switch (set_bf16_pairs)."""
    return bool(_table(isa).bf16_pairs[0])


def set_widen_f16(bint on):
    """Whether f16 batches widen their columns to float32 once per product in every compiled
    variant (src/formats/elements.h: packed_tile_f16; the avx2 and avxvnni variants read it).
    Speed only: the same values meet the same fmas either way."""
    for isa in COMPILED_ISAS:
        _table(isa).widen_f16[0] = on


def widen_f16(str isa):
    """The variant's f16 column switch (set_widen_f16)."""
    return bool(_table(isa).widen_f16[0])


def openmp():
    """(built with OpenMP, omp_get_max_threads())."""
    return bool(qgemv_have_openmp()), qgemv_omp_max_threads()


def table_info(str isa):
    """What a variant's table holds per type id:
    (dequantize, matmul, activation, nbytes, align, quantize)."""
    cdef const qgemv_kernel_table *t = _table(isa)
    return {
        i: (t.dequant_row[i] != NULL, t.vec_dot[i] != NULL, t.quantize_act[i] != NULL,
            t.block_nbytes[i], t.block_align[i], t.quantize_row[i] != NULL)
        for i in range(QGEMV_N_TYPES)
    }


def dequantize(str isa, int qtype, const uint8_t[::1] data, Py_ssize_t row_nbytes,
               float[:, ::1] out, int n_threads, float[:, ::1] scratch=None):
    """out[r, :] = dequantize(row r); data holds out.shape[0] rows of row_nbytes.  With scratch
    (a row per thread), each row is decoded into the thread's row and copied out with
    non-temporal stores (stream_f32): the same bits, for outputs too large to stay in cache on
    CPUs whose plain stores read each line first (qgemv/_dispatch.py: dequant_stream)."""  # IN data; OUT out
    cdef const qgemv_kernel_table *t = _table(isa)
    cdef Py_ssize_t rows = out.shape[0], cols = out.shape[1], r
    cdef const uint8_t *base = &data[0]
    if scratch is not None and (scratch.shape[0] < n_threads or scratch.shape[1] < cols):
        raise ValueError(f"scratch {scratch.shape[0]} x {scratch.shape[1]}: not a row of {cols} per thread")
    if scratch is None:
        with nogil:
            for r in prange(rows, schedule="static", num_threads=n_threads):
                t.dequant_row[qtype](base + r * row_nbytes, &out[r, 0], cols)
        return
    with nogil:
        for r in prange(rows, schedule="static", num_threads=n_threads):
            t.dequant_row[qtype](base + r * row_nbytes, &scratch[threadid(), 0], cols)
            t.stream_f32(&out[r, 0], &scratch[threadid(), 0], cols)


def dequantize_rows(str isa, int qtype, const uint8_t[::1] data, Py_ssize_t row_nbytes,
                    const int64_t[::1] ids, float[:, ::1] out, int n_threads):
    """out[i, :] = dequantize(row ids[i]); only those rows are read."""  # IN data, ids; OUT out
    cdef const qgemv_kernel_table *t = _table(isa)
    cdef Py_ssize_t n = ids.shape[0], cols = out.shape[1], i
    cdef const uint8_t *base = &data[0]
    with nogil:
        for i in prange(n, schedule="static", num_threads=n_threads):
            t.dequant_row[qtype](base + ids[i] * row_nbytes, &out[i, 0], cols)


# values of each column a gathering pass of quantize_activations reads (a multiple of every
# activation format's block size), and columns at most: 16 KiB of scratch rows, in L1
cdef enum: _GATHER_VALUES = 256, _GATHER_COLUMNS = 16


def quantize_activations(str isa, int act_type, const float[:, :] x, uint8_t[:, ::1] out, int n_threads=1):
    """out[j] = x[j] quantized to act_type (one row of activation blocks per column j of the
    batch), the columns shared among n_threads.  x is (batch, cols) with its rows contiguous, or
    the transposed view of numpy's (cols, batch) array (its columns contiguous): then each
    thread takes a group of up to 16 columns and reads them 256 values at a time into scratch
    rows (gather_columns, 8 at a time) to quantize there, so x is read once, in whole lines,
    with no transposed copy of it first.

    Returns False when x holds NaN or Inf (no int8 format holds them); out is then not all
    written.
    """  # IN x; OUT out
    cdef const qgemv_kernel_table *t = _table(isa)
    cdef Py_ssize_t j, g, c, h, c0, nc, k, k0, kn, batch = x.shape[0], cols = x.shape[1]
    cdef Py_ssize_t width, groups, ld, chunk_nbytes
    cdef bint finite = True
    cdef int nonfinite = 0, no_memory = 0, ok
    cdef float *rows = NULL
    if batch == 0 or cols == 0:
        return True
    if x.strides[1] == sizeof(float):   # rows contiguous
        with nogil:
            for j in range(batch):
                finite = finite and t.all_finite(&x[j, 0], cols)
            if finite and min(n_threads, batch) == 1:
                for j in range(batch):
                    t.quantize_act[act_type](&x[j, 0], &out[j, 0], cols)
            elif finite:
                for j in prange(batch, schedule="static", num_threads=min(n_threads, batch)):
                    t.quantize_act[act_type](&x[j, 0], &out[j, 0], cols)
        return finite
    if x.strides[0] != sizeof(float) or x.strides[1] % sizeof(float):
        raise ValueError("x must have its rows or its columns contiguous")
    ld = x.strides[1] // <Py_ssize_t>sizeof(float)
    chunk_nbytes = _GATHER_VALUES * out.shape[1] // cols   # out's bytes per 256 values
    # 16 columns a group, fewer where that would leave a thread without one (batch 8 on 2 threads)
    width = min(<Py_ssize_t>_GATHER_COLUMNS, max(1, (batch + n_threads - 1) // max(1, n_threads)))
    groups = (batch + width - 1) // width
    with nogil, parallel(num_threads=min(n_threads, groups)):
        rows = <float *>malloc(_GATHER_COLUMNS * _GATHER_VALUES * sizeof(float))
        for g in prange(groups, schedule="static"):
            if rows == NULL:
                no_memory += 1
                continue
            c0 = width * g
            nc = min(width, batch - c0)
            for k in range((cols + _GATHER_VALUES - 1) // _GATHER_VALUES):
                k0 = k * _GATHER_VALUES
                kn = min(<Py_ssize_t>_GATHER_VALUES, cols - k0)
                ok = 1
                for h in range((nc + 7) // 8):
                    ok = ok & t.gather_columns(&x[c0 + 8 * h, k0], ld, kn, <int>min(8, nc - 8 * h),
                                               rows + 8 * h * _GATHER_VALUES, _GATHER_VALUES)
                if not ok:
                    nonfinite += 1
                    continue
                for c in range(nc):
                    t.quantize_act[act_type](rows + c * _GATHER_VALUES, &out[c0 + c, 0] + k * chunk_nbytes, kn)
        free(rows)
    if no_memory:
        raise MemoryError("no memory for the activation quantizer's scratch rows")
    return nonfinite == 0


# rows per tile of matmul_act, at most: a few KiB of weights, so a tile kernel's passes over the
# batch columns find its rows in L1 and its per-tile set-up is shared by enough rows
cdef enum: _TILE_ROWS = 16
TILE_ROWS = _TILE_ROWS
# ... and of the floats' single column, which shares nothing between rows: AVX2's float tile runs
# its 4 streams through quarters of a tile (src/formats/elements.h), 4 rows a stream in a tile of
# 16 (Zen 4, QGEMV_ISA=avx2, 1 thread, 16 -> 256 rows: f16 57344 x 768 out of cache 5.19 -> 3.07
# ms, bf16 5.52 -> 3.16, f32 7.77 -> 5.97; 4096 x 4096 f16 1.16 -> 0.99; 512 and 1024 even with
# 256; the other formats' row tiles even with 256 and no faster, so left at 16)
cdef enum: _TILE_GEMV_FLOAT_ROWS = 256
TILE_GEMV_FLOAT_ROWS = _TILE_GEMV_FLOAT_ROWS


cdef inline Py_ssize_t _per_tile(Py_ssize_t n, int n_threads, Py_ssize_t most, Py_ssize_t multiple) noexcept nogil:
    """Items (rows, panels) per tile: at most `most`, a multiple of `multiple` when less (the
    pair kernels take rows in twos, the interleaved formats' tiles in eights), and such that
    the tiles split evenly over the threads (a static schedule would give each the same number)."""
    cdef Py_ssize_t per_thread = (n + n_threads - 1) // n_threads
    cdef Py_ssize_t tiles = (per_thread + most - 1) // most
    cdef Py_ssize_t t = (per_thread + tiles - 1) // tiles
    return min(most, (t + multiple - 1) // multiple * multiple)


def matmul_act(str isa, int qtype, const uint8_t[::1] data, Py_ssize_t row_nbytes, Py_ssize_t cols,
               const uint8_t[:, ::1] xq, float[:, ::1] out, int n_threads, Py_ssize_t row_multiple=2,
               Py_ssize_t gemv_tile_rows=_TILE_ROWS):
    """out[r, j] = row r . xq[j]: weights times activations already in the act format, by tiles of
    rows x every column (src/tiles.h), in a guided schedule (above); a tile's rows are
    a multiple of row_multiple unless it is the last, and at most TILE_ROWS (a single column:
    gemv_tile_rows)."""  # IN data, xq; OUT out
    cdef const qgemv_kernel_table *t = _table(isa)
    cdef Py_ssize_t rows = out.shape[0], batch = out.shape[1], tile
    cdef Py_ssize_t tile_rows, n_tiles
    cdef const uint8_t *base = &data[0]
    if rows == 0 or batch == 0:
        return
    tile_rows = _per_tile(rows, n_threads, _TILE_ROWS if batch > 1 else max(1, gemv_tile_rows), row_multiple)
    n_tiles = (rows + tile_rows - 1) // tile_rows
    if _packs(t, qtype, batch) and _matmul_packed(t, qtype, base, row_nbytes, cols, xq, out, n_threads, tile_rows):
        return
    with nogil:
        if n_threads == 1:
            for tile in range(n_tiles):
                _vec_dot_tile(t, qtype, cols, base, row_nbytes, tile * tile_rows, tile_rows, xq, out)
        else:
            for tile in prange(n_tiles, schedule="guided", num_threads=n_threads):
                _vec_dot_tile(t, qtype, cols, base, row_nbytes, tile * tile_rows, tile_rows, xq, out)


cdef inline void _vec_dot_tile(const qgemv_kernel_table *t, int qtype, Py_ssize_t cols, const uint8_t *base,
                               Py_ssize_t row_nbytes, Py_ssize_t r0, Py_ssize_t tile_rows,
                               const uint8_t[:, ::1] xq, float[:, ::1] out) noexcept nogil:
    """out[r0 : r0 + tile_rows] (fewer at the end) by the type's tile kernel, from the GGUF rows at base."""
    t.vec_dot_tile[qtype](cols, base + r0 * row_nbytes, row_nbytes, min(tile_rows, out.shape[0] - r0),
                          &xq[0, 0], xq.shape[1], out.shape[1], &out[r0, 0], out.shape[1])


cdef inline bint _packs(const qgemv_kernel_table *t, int qtype, Py_ssize_t batch) noexcept:
    """The variant multiplies this type from packed columns (src/packed_tile.h) at this batch."""
    return t.packed_tile[qtype] != NULL and batch >= t.packed_min_cols[qtype]


cdef bint _matmul_packed(const qgemv_kernel_table *t, int qtype, const uint8_t *base, Py_ssize_t row_nbytes,
                         Py_ssize_t cols, const uint8_t[:, ::1] xq, float[:, ::1] out, int n_threads,
                         Py_ssize_t tile_rows, const uint8_t *panels=NULL, Py_ssize_t panel_rows=0,
                         Py_ssize_t panel_row_nbytes=0) noexcept:
    """matmul_act by packed_tile: the batch packed once, 16 columns a group (each thread some
    groups), then the tiles of rows against all of it; the first panel_rows rows, when given,
    from the rows of their panels (packed_panel_tile, panel_row_nbytes apart), the rest from
    base.  False (nothing done) when the packed columns' memory is not to be had: the caller
    then takes the plain tiles."""
    cdef Py_ssize_t rows = out.shape[0], batch = out.shape[1], tile, g
    cdef Py_ssize_t n_groups = (batch + 15) // 16
    cdef size_t group_nbytes = <size_t>((cols + 255) // 256) * t.packed_nbytes[qtype]
    cdef Py_ssize_t n_tiles = (rows + tile_rows - 1) // tile_rows
    cdef uint8_t *mem = <uint8_t *>malloc(n_groups * group_nbytes + 64)
    cdef uint8_t *packed
    if mem == NULL:
        return False
    packed = mem + (-<size_t>mem & 63)   # 64-byte aligned: the tile's aligned loads
    with nogil:
        if n_threads == 1:
            for g in range(n_groups):
                t.pack_columns[qtype](cols, &xq[0, 0], xq.shape[1], batch, g, packed + g * group_nbytes)
            for tile in range(n_tiles):
                _packed_tile(t, qtype, cols, base, row_nbytes, panels, panel_rows, panel_row_nbytes,
                             tile * tile_rows, tile_rows, packed, out)
        else:
            for g in prange(n_groups, schedule="static", num_threads=n_threads):
                t.pack_columns[qtype](cols, &xq[0, 0], xq.shape[1], batch, g, packed + g * group_nbytes)
            for tile in prange(n_tiles, schedule="guided", num_threads=n_threads):
                _packed_tile(t, qtype, cols, base, row_nbytes, panels, panel_rows, panel_row_nbytes,
                             tile * tile_rows, tile_rows, packed, out)
    free(mem)
    return True


cdef inline void _packed_tile(const qgemv_kernel_table *t, int qtype, Py_ssize_t cols, const uint8_t *base,
                              Py_ssize_t row_nbytes, const uint8_t *panels, Py_ssize_t panel_rows,
                              Py_ssize_t panel_row_nbytes, Py_ssize_t r0, Py_ssize_t tile_rows,
                              const uint8_t *packed, float[:, ::1] out) noexcept nogil:
    """out[r0 : r0 + tile_rows] (fewer at the end) by packed_tile against the packed columns:
    the rows below panel_rows from their panels, the others from base."""
    cdef Py_ssize_t r1 = min(r0 + tile_rows, out.shape[0]), batch = out.shape[1]
    if r0 < panel_rows:   # a tile across the panels' end takes both
        t.packed_panel_tile[qtype](cols, panels + r0 * panel_row_nbytes, panel_row_nbytes,
                                   min(r1, panel_rows) - r0, packed, batch, &out[r0, 0], batch)
    if r1 > panel_rows:
        r0 = max(r0, panel_rows)
        t.packed_tile[qtype](cols, base + r0 * row_nbytes, row_nbytes, r1 - r0, packed, batch, &out[r0, 0], batch)


cdef inline bint _has_panels(const qgemv_kernel_table *t, int qtype) noexcept:
    """The variant interleaves the type and multiplies from its panels (a NULL panel_tile: it
    reads the GGUF rows)."""
    return 0 <= qtype < QGEMV_N_TYPES and t.interleave[qtype] != NULL and t.panel_tile[qtype] != NULL


def packed_min_cols(str isa, int qtype):
    """The batch from which this variant multiplies the type from packed columns
    (src/packed_tile.h), or 0: never."""
    cdef const qgemv_kernel_table *t = _table(isa)
    return t.packed_min_cols[qtype] if 0 <= qtype < QGEMV_N_TYPES and t.packed_tile[qtype] != NULL else 0


def packed_panel_min_cols(str isa, int qtype):
    """The batch from which this variant multiplies the type's prepared panels from packed
    columns (their rows through packed_panel_tile), or 0: never."""
    cdef const qgemv_kernel_table *t = _table(isa)
    return t.packed_panel_min_cols[qtype] if 0 <= qtype < QGEMV_N_TYPES and t.packed_panel_tile[qtype] != NULL else 0


def panel_rows(str isa, int qtype):
    """Rows per panel of the type's interleaved layout in this variant (the table's interleave),
    or 0: the variant multiplies it from its GGUF rows."""
    cdef const qgemv_kernel_table *t = _table(isa)
    return t.panel_rows[qtype] if _has_panels(t, qtype) else 0


cdef int _check_panel_rows(const qgemv_kernel_table *t, int qtype, Py_ssize_t panel_rows) except -1:
    if not _has_panels(t, qtype):
        raise ValueError(f"type {qtype} has no interleaved layout in the {t.isa.decode()} variant")
    if t.panel_rows[qtype] != panel_rows:
        raise ValueError(f"type {qtype}'s panels hold {t.panel_rows[qtype]} rows, not {panel_rows}")
    return 0


# rows per tile of matmul_panels, at most: a tile shares each column's per-block set-up (scale,
# offset sum) among its panels (16 of 8 rows: what q32_x8.h's tile keeps accumulators for; 32
# rows a tile redid it for every 4 panels, a third of a batch pass's instructions)
cdef enum: _TILE_PANEL_ROWS = 128
# ... and of a single column's, which shares nothing between panels: the float panels' single
# column runs 3 streams through thirds of a tile (src/formats/float_panels.h), which a longer
# tile keeps going (f16 57344 x 768 out of cache, 1 thread: 128 -> 512 rows 1.23x; the other
# formats' panels even)
cdef enum: _TILE_GEMV_PANEL_ROWS = 512


def interleave(str isa, int qtype, Py_ssize_t panel_rows, const uint8_t[::1] data, Py_ssize_t row_nbytes,
               Py_ssize_t cols, uint8_t[::1] panels, Py_ssize_t panel_row_nbytes, int n_threads):
    """panels <- rows 0 .. panel_rows npanels - 1 of data in the format's interleaved layout
    (panel_rows rows per panel: _formats.py's interleave; include/qgemv/blocks.h;
    panel_row_nbytes bytes per row there, _formats.py: panel_row_nbytes),
    npanels = panels.size / (panel_rows panel_row_nbytes)."""  # IN data; OUT panels
    cdef const qgemv_kernel_table *t = _table(isa)
    cdef Py_ssize_t panel_nbytes = panel_rows * panel_row_nbytes, npanels, p
    cdef const uint8_t *base = &data[0]
    _check_panel_rows(t, qtype, panel_rows)
    if row_nbytes == 0 or panel_row_nbytes == 0 or panels.shape[0] == 0:
        return
    npanels = panels.shape[0] // panel_nbytes
    if npanels * panel_rows * row_nbytes > data.shape[0]:
        raise ValueError(f"{npanels} panels need {npanels * panel_rows} rows, data holds {data.shape[0] // row_nbytes}")
    with nogil:
        for p in prange(npanels, schedule="static", num_threads=n_threads):
            t.interleave[qtype](base + p * panel_rows * row_nbytes, row_nbytes, cols, &panels[p * panel_nbytes])


def repack_rows(str isa, int qtype, const uint8_t[::1] data, Py_ssize_t row_nbytes, Py_ssize_t cols,
                uint8_t[::1] out, Py_ssize_t out_row_nbytes, int n_threads):
    """out <- every row of data in the format's repack_as format, out_row_nbytes bytes per row
    (_formats.py; the same levels and scales)."""  # IN data; OUT out
    cdef const qgemv_kernel_table *t = _table(isa)
    cdef Py_ssize_t rows, r
    cdef const uint8_t *base = &data[0]
    if t.repack_row[qtype] == NULL:
        raise ValueError(f"type {qtype} has no repack_as format")
    if row_nbytes == 0 or out_row_nbytes == 0:
        return
    rows = data.shape[0] // row_nbytes
    if out.shape[0] != rows * out_row_nbytes:
        raise ValueError(f"out holds {out.shape[0]} bytes, not {rows} rows of {out_row_nbytes}")
    with nogil:
        for r in prange(rows, schedule="static", num_threads=n_threads):
            t.repack_row[qtype](base + r * row_nbytes, &out[r * out_row_nbytes], cols)


def matmul_panels(str isa, int qtype, Py_ssize_t panel_rows, const uint8_t[::1] panels,
                  Py_ssize_t panel_row_nbytes, const uint8_t[::1] data, Py_ssize_t row_nbytes, Py_ssize_t cols,
                  const uint8_t[:, ::1] xq, float[:, ::1] out, int n_threads):
    """As matmul_act (the same bits), the first panel_rows npanels rows read from their
    interleaved panels (panel_row_nbytes bytes per row there; tiles of up to TILE_PANEL_ROWS
    rows, split evenly over the threads), the last rows % panel_rows from data.  A batch that
    takes packed columns reads the panels' rows by packed_panel_tile where the variant has one,
    else the GGUF rows."""  # IN panels, data, xq; OUT out
    cdef const qgemv_kernel_table *t = _table(isa)
    cdef Py_ssize_t rows = out.shape[0], batch = out.shape[1], panel_nbytes = panel_rows * panel_row_nbytes
    cdef Py_ssize_t npanels, per_tile, n_tiles, tile, r0, most
    _check_panel_rows(t, qtype, panel_rows)
    npanels = rows // panel_rows
    r0 = panel_rows * npanels
    if rows == 0 or batch == 0:
        return
    if panels.shape[0] < npanels * panel_nbytes or data.shape[0] < rows * row_nbytes:
        raise ValueError(f"panels hold {panels.shape[0]} bytes and data {data.shape[0]}: too few for {rows} rows")
    if (npanels and t.packed_panel_tile[qtype] != NULL and t.packed_tile[qtype] != NULL
            and batch >= t.packed_panel_min_cols[qtype]):
        if _matmul_packed(t, qtype, &data[0], row_nbytes, cols, xq, out, n_threads,
                          _per_tile(rows, n_threads, _TILE_ROWS, panel_rows), &panels[0], r0, panel_row_nbytes):
            return   # the panels' rows (the IQ grids' codes, iq1_s's and iq1_m's trits), the last rows % R the GGUF rows
    elif _packs(t, qtype, batch) and _matmul_packed(t, qtype, &data[0], row_nbytes, cols, xq, out, n_threads,
                                                    _per_tile(rows, n_threads, _TILE_ROWS, 1)):
        return   # batches that take packed columns read the GGUF rows where the panels offer nothing faster
    with nogil:
        if npanels:
            most = (_TILE_PANEL_ROWS if batch > 1 else _TILE_GEMV_PANEL_ROWS) // panel_rows
            per_tile = _per_tile(npanels, n_threads, max(1, most), 1)
            n_tiles = (npanels + per_tile - 1) // per_tile
            if n_threads == 1:
                for tile in range(n_tiles):
                    _panel_tile(t, qtype, cols, &panels[0], panel_rows, panel_nbytes, tile * per_tile, per_tile, xq, out)
            else:
                for tile in prange(n_tiles, schedule="guided", num_threads=n_threads):
                    _panel_tile(t, qtype, cols, &panels[0], panel_rows, panel_nbytes, tile * per_tile, per_tile, xq, out)
        if r0 < rows:
            t.vec_dot_tile[qtype](cols, &data[r0 * row_nbytes], row_nbytes, rows - r0,
                                  &xq[0, 0], xq.shape[1], batch, &out[r0, 0], batch)


cdef inline void _panel_tile(const qgemv_kernel_table *t, int qtype, Py_ssize_t cols, const uint8_t *panels,
                             Py_ssize_t panel_rows, Py_ssize_t panel_nbytes, Py_ssize_t p0, Py_ssize_t per_tile,
                             const uint8_t[:, ::1] xq, float[:, ::1] out) noexcept nogil:
    """The rows of panels p0 .. p0 + per_tile (fewer at the end) by the type's panel tile."""
    t.panel_tile[qtype](cols, panels + p0 * panel_nbytes, panel_nbytes, min(per_tile, out.shape[0] // panel_rows - p0),
                        &xq[0, 0], xq.shape[1], out.shape[1], &out[panel_rows * p0, 0], out.shape[1])


def matmul_act_vec_dot(str isa, int qtype, const uint8_t[::1] data, Py_ssize_t row_nbytes, Py_ssize_t cols,
                       const uint8_t[:, ::1] xq, float[:, ::1] out, int n_threads):
    """As matmul_act, one vec_dot per row and column, rows in order: the single-column product of a
    matrix streaming from memory (each thread reads its slab front to back, vec_dot prefetching
    ahead) and the reference the tile kernels are tested against."""  # IN data, xq; OUT out
    cdef const qgemv_kernel_table *t = _table(isa)
    cdef Py_ssize_t rows = out.shape[0], r
    cdef const uint8_t *base = &data[0]
    with nogil:
        if n_threads == 1:
            for r in range(rows):
                _vec_dot_row(t, qtype, cols, base + r * row_nbytes, xq, out, r)
        else:
            for r in prange(rows, schedule="guided", num_threads=n_threads):
                _vec_dot_row(t, qtype, cols, base + r * row_nbytes, xq, out, r)


cdef inline void _vec_dot_row(const qgemv_kernel_table *t, int qtype, Py_ssize_t cols, const uint8_t *row,
                              const uint8_t[:, ::1] xq, float[:, ::1] out, Py_ssize_t r) noexcept nogil:
    """out[r, j] = row . xq[j] for every column j, by vec_dot."""
    cdef Py_ssize_t j
    for j in range(out.shape[1]):
        out[r, j] = t.vec_dot[qtype](cols, row, &xq[j, 0])


def matmul_f32(str isa, int qtype, const uint8_t[::1] data, Py_ssize_t row_nbytes,
               const float[:, ::1] x, float[:, ::1] out, float[:, ::1] scratch, int n_threads):
    """out[r, j] = dequantize(row r) . x[j] in float32; scratch holds one row per thread."""  # IN data, x; OUT out
    cdef const qgemv_kernel_table *t = _table(isa)
    cdef Py_ssize_t rows = out.shape[0], r
    cdef const uint8_t *base = &data[0]
    with nogil:
        if n_threads == 1:
            for r in range(rows):
                _dot_row_f32(t, qtype, base + r * row_nbytes, &scratch[0, 0], x, out, r)
        else:
            for r in prange(rows, schedule="guided", num_threads=n_threads):
                _dot_row_f32(t, qtype, base + r * row_nbytes, &scratch[threadid(), 0], x, out, r)


cdef inline void _dot_row_f32(const qgemv_kernel_table *t, int qtype, const uint8_t *row, float *scratch,
                              const float[:, ::1] x, float[:, ::1] out, Py_ssize_t r) noexcept nogil:
    """out[r, j] = row . x[j] for every column j: the row dequantized once into scratch."""
    cdef Py_ssize_t j, cols = x.shape[1]
    t.dequant_row[qtype](row, scratch, cols)
    for j in range(out.shape[1]):
        out[r, j] = t.dot_f32(cols, scratch, &x[j, 0])


def grid_table(str name):
    """The compiled lookup table ``name`` of include/qgemv/grids.h, as a typed memoryview copy."""
    cdef const void *p
    cdef Py_ssize_t nbytes
    if name == "kmask_iq2xs": p, nbytes, fmt = kmask_iq2xs, sizeof(kmask_iq2xs), "B"
    elif name == "ksigns_iq2xs": p, nbytes, fmt = ksigns_iq2xs, sizeof(ksigns_iq2xs), "B"
    elif name == "ksigns64": p, nbytes, fmt = ksigns64, sizeof(ksigns64), "Q"
    elif name == "iq2xxs_grid": p, nbytes, fmt = iq2xxs_grid, sizeof(iq2xxs_grid), "Q"
    elif name == "iq2xs_grid": p, nbytes, fmt = iq2xs_grid, sizeof(iq2xs_grid), "Q"
    elif name == "iq2s_grid": p, nbytes, fmt = iq2s_grid, sizeof(iq2s_grid), "Q"
    elif name == "iq3xxs_grid": p, nbytes, fmt = iq3xxs_grid, sizeof(iq3xxs_grid), "I"
    elif name == "iq3s_grid": p, nbytes, fmt = iq3s_grid, sizeof(iq3s_grid), "I"
    elif name == "iq1s_grid": p, nbytes, fmt = iq1s_grid, sizeof(iq1s_grid), "Q"
    elif name == "kvalues_iq4nl": p, nbytes, fmt = kvalues_iq4nl, sizeof(kvalues_iq4nl), "b"
    elif name == "kvalues_mxfp4": p, nbytes, fmt = kvalues_mxfp4, sizeof(kvalues_mxfp4), "b"
    else:
        raise ValueError(f"no lookup table {name!r} in qgemv/grids.h")
    return memoryview((<const char *>p)[:nbytes]).cast(fmt)


def quantize(str isa, int qtype, const float[:, ::1] a, const float[::1] imatrix,
             uint8_t[:, ::1] out, int n_threads):
    """out[r] = ggml's quantization of row a[r] (importance weights imatrix, or None).

    Returns the first row holding NaN or Inf (rows from it on may be left unwritten), or -1.
    """  # IN a, imatrix; OUT out
    cdef const qgemv_kernel_table *t = _table(isa)
    cdef Py_ssize_t rows = a.shape[0], cols = a.shape[1], r, n_bad = 0, first_bad = -1
    cdef const float *qw = &imatrix[0] if imatrix is not None else NULL
    if t.quantize_prepare(qtype) != 0:   # ggml's quantize_init: shared tables, built once, GIL held
        raise MemoryError(f"no memory for the quantization tables of type {qtype}")
    with nogil:
        if n_threads == 1:               # no thread team to wake: f32 rows are a memcpy's worth
            for r in range(rows):
                if not t.quantize_row[qtype](&a[r, 0], &out[r, 0], cols, qw):
                    first_bad = r
                    break
        else:
            for r in prange(rows, schedule="static", num_threads=n_threads):
                if not t.quantize_row[qtype](&a[r, 0], &out[r, 0], cols, qw):
                    n_bad += 1
            if n_bad:
                for r in range(rows):
                    if not t.all_finite(&a[r, 0], cols):
                        first_bad = r
                        break
    return first_bad


def grid8_tables(str isa, int grid):
    """Copies of ggml's iq2_init_impl tables of 8-value grid `grid` (0 iq2_xxs, 1 iq2_xs,
    2 iq2_s, 3 iq1s; src/formats/quantize_grids.h)."""
    cdef const qgemv_kernel_table *t = _table(isa)
    if not 0 <= grid < QGEMV_GRID8_COUNT:
        raise ValueError(f"no 8-value grid {grid}")
    cdef const qgemv_grid8 *g = t.grid8(grid)
    if g == NULL:
        raise MemoryError("no memory for the grid tables")
    # bytes copies (native byte order): levels uint64, map int32, neighbours uint16
    return ((<const char *>g.levels)[:g.size * 8], (<const char *>g.map)[:QGEMV_GRID8_KEYS * 4],
            (<const char *>g.neighbours)[:g.n_neighbours * 2])


def cos_sin_f32(const float[::1] angle, float[::1] cos_out, float[::1] sin_out):
    """cos_out[i], sin_out[i] = cosf(angle[i]), sinf(angle[i]): the C library's float functions,
    the ones ggml's rotary-embedding cache calls (numpy's float32 cos and sin differ by an ulp)."""  # IN angle; OUT cos_out, sin_out
    cdef Py_ssize_t i
    if cos_out.shape[0] != angle.shape[0] or sin_out.shape[0] != angle.shape[0]:
        raise ValueError("cos_sin_f32: shapes do not agree")
    for i in range(angle.shape[0]):
        cos_out[i] = cosf(angle[i])
        sin_out[i] = sinf(angle[i])


cdef extern from "llama_ops.h" nogil:
    void llama_swiglu(int vector, int64_t n, const float *g, const float *u, float *out)
    void llama_attend_row(int vector, int64_t len, int64_t d, const float *q, const float *k, const float *v,
                          int64_t stride, float scale, int batch_order, int p_f16, float *p,
                          float *acc, float *out)
    void llama_round_row(int vector, int64_t n, const float *x, int f16, float *y)
    void llama_rms_norm(int64_t n, const float *x, const float *w, float eps, float *y)


def swiglu_f32(str isa, const float[:, :] g, const float[:, :] u, float[:, ::1] out):
    """out = silu(g) * u row by row, in ggml's arithmetic (src/llama_ops.h; the portable code for
    isa "baseline", else AVX2's where the CPU has it: the same bits); g and u may be column
    slices of a wider array (rows contiguous)."""  # IN g, u; OUT out
    if (u.shape[0] != g.shape[0] or u.shape[1] != g.shape[1] or out.shape[0] != g.shape[0]
            or out.shape[1] != g.shape[1]):
        raise ValueError("swiglu_f32: shapes do not agree")
    if g.shape[1] and (g.strides[1] != 4 or u.strides[1] != 4):
        raise ValueError("swiglu_f32 needs contiguous rows")
    cdef Py_ssize_t r
    cdef bint vector = isa != "baseline"
    with nogil:
        for r in range(g.shape[0]):
            llama_swiglu(vector, g.shape[1], &g[r, 0], &u[r, 0], &out[r, 0])


def attention(str isa, const float[:, :, :] q, const float[:, :, :] k, const float[:, :, :] v,
              float[:, :, ::1] k_cache, float[:, :, ::1] v_cache, Py_ssize_t start, float scale,
              bint batch_order, bint f16, float[:, ::1] out, int n_threads=1):
    """Causal grouped-query attention of queries q (n, heads, d) at positions start..: the new
    keys and values k, v (n, kv_heads, d) go into the caches (kv_heads, capacity, d) at
    start.., then every query attends to positions 0 .. its own; out (n, heads * d).  With f16
    (k, v, q and the probabilities rounded to f16) it is ggml's arithmetic (src/llama_ops.h;
    batch_order: the prompt GEMM's order of additions; isa "baseline": the portable code, else
    AVX2's where the CPU has it, the same bits).  The (query, head) pairs are shared among
    n_threads."""  # IN q, k, v; OUT k_cache, v_cache, out
    cdef Py_ssize_t n = q.shape[0], heads = q.shape[1], d = q.shape[2], kv_heads = k_cache.shape[0]
    cdef Py_ssize_t group = heads // kv_heads, cap = k_cache.shape[1], t, h, it
    cdef Py_ssize_t per = start + n + 33 * d   # a thread's scratch: acc (32 d), scores (start + n), query (d)
    cdef bint vector = isa != "baseline"
    cdef float *scratch
    cdef float *mine
    if (start < 0 or start + n > cap or v_cache.shape[1] != cap or k_cache.shape[2] != d or v_cache.shape[2] != d
            or k.shape[0] != n or v.shape[0] != n or k.shape[1] != kv_heads or v.shape[1] != kv_heads
            or k.shape[2] != d or v.shape[2] != d or out.shape[0] != n or out.shape[1] != heads * d
            or kv_heads == 0 or heads % kv_heads):
        raise ValueError("attention: shapes do not agree")
    if d and (q.strides[2] != 4 or k.strides[2] != 4 or v.strides[2] != 4):
        raise ValueError("attention: q, k and v need their last axis contiguous")
    if n == 0 or heads == 0 or d == 0:
        return
    n_threads = max(1, min(n_threads, n * heads))
    scratch = <float *>malloc(n_threads * per * sizeof(float))
    if scratch == NULL:
        raise MemoryError()
    with nogil:
        for t in range(n):
            for h in range(kv_heads):
                llama_round_row(vector, d, &k[t, h, 0], f16, &k_cache[h, start + t, 0])
                llama_round_row(vector, d, &v[t, h, 0], f16, &v_cache[h, start + t, 0])
        for it in prange(n * heads, schedule="static", chunksize=1, num_threads=n_threads):
            t = it // heads
            h = it % heads
            mine = scratch + threadid() * per
            llama_round_row(vector, d, &q[t, h, 0], f16, mine + 32 * d + start + n)
            llama_attend_row(vector, start + t + 1, d, mine + 32 * d + start + n, &k_cache[h // group, 0, 0],
                             &v_cache[h // group, 0, 0], d, scale, batch_order, f16, mine + 32 * d, mine,
                             &out[t, h * d])
    free(scratch)


def rms_norm_f32(const float[:, ::1] x, const float[::1] w, float eps, float[:, ::1] out):
    """out = x * (1 / sqrt(mean(x^2) + eps)) * w row by row, in ggml's arithmetic
    (src/llama_ops.h)."""  # IN x, w; OUT out
    if w.shape[0] != x.shape[1] or out.shape[1] != x.shape[1] or out.shape[0] != x.shape[0]:
        raise ValueError("rms_norm_f32: shapes do not agree")
    cdef Py_ssize_t r
    with nogil:
        for r in range(x.shape[0]):
            llama_rms_norm(x.shape[1], &x[r, 0], &w[0], eps, &out[r, 0])
