/* qgemv/kernels.h: what one ISA variant of the kernels offers the Cython drivers.
 *
 * src/kernels.c is compiled once per ISA (baseline, avx2, avx512); each build defines one
 * qgemv_kernel_table, indexed by ggml type id and filled from the format table
 * (qgemv/_formats.py -> generated qgemv_formats.h).  Mirrored in qgemv/_kernels.pxd
 * (must match).
 */
#ifndef QGEMV_KERNELS_H
#define QGEMV_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#define QGEMV_N_TYPES 43   /* ggml type ids 0 .. 42; must match _formats.N_TYPES */

/* n values of a row of blocks -> n floats */
typedef void (*qgemv_dequant_row_fn)(const void *blocks, float *dst, int64_t n);
/* n floats -> a row of activation blocks */
typedef void (*qgemv_quantize_row_fn)(const float *src, void *blocks, int64_t n);
/* one row of n floats -> a row of weight blocks, as ggml's quantize_<name> (imatrix: n
 * importance weights, or NULL); 1, or 0 when the row holds NaN or Inf (ggml refuses those
 * rows; the blocks are then unspecified) */
typedef int (*qgemv_quantize_weights_fn)(const float *src, void *blocks, int64_t n, const float *imatrix);
/* sum over n values of weight row w times activation row a (a in the weight format's act) */
typedef float (*qgemv_vec_dot_fn)(int64_t n, const void *w, const void *a);
/* a tile of rows x columns (src/tiles.h): for r < nrows, c < ncols,
 * out[r * out_stride + c] = vec_dot(n, w + r * row_stride, a + c * act_stride) (strides in bytes
 * for w and a, in floats for out), up to float summation order */
typedef void (*qgemv_vec_dot_tile_fn)(int64_t n, const void *w, int64_t row_stride, int64_t nrows,
                                      const void *a, int64_t act_stride, int64_t ncols,
                                      float *out, int64_t out_stride);
/* rows 0..R-1 of w (row_stride bytes apart), n values each -> one panel of the format's interleaved
 * layout, R = panel_rows[type] (block_<name>x8, block_<name>x16, or iq1_m's rows of block_iq1_mt,
 * include/qgemv/blocks.h; _formats.py: interleave, panel_type_size) */
typedef void (*qgemv_interleave_fn)(const void *w, int64_t row_stride, int64_t n, void *panel);
/* vec_dot_tile over npanels such panels (panel_stride bytes apart): out[r * out_stride + c] for
 * r < R npanels, the same bits as vec_dot_tile on the rows they hold */
typedef void (*qgemv_panel_tile_fn)(int64_t n, const void *panels, int64_t panel_stride, int64_t npanels,
                                    const void *a, int64_t act_stride, int64_t ncols,
                                    float *out, int64_t out_stride);
/* columns 16 g .. 16 g + 15 of ncols activations (act_stride bytes apart), n values each, ->
 * what a packed_tile reads for them: n / QK_K blocks block_q8_Kx16c (q8_K, src/packed_tile.h) */
typedef void (*qgemv_pack_columns_fn)(int64_t n, const void *a, int64_t act_stride, int64_t ncols, int64_t g,
                                      void *packed);
/* vec_dot_tile's result, the same bits, from ncols columns packed by pack_columns: group g at
 * packed + g * ceil(n / QK_K) * packed_nbytes (64-byte aligned) */
typedef void (*qgemv_packed_tile_fn)(int64_t n, const void *w, int64_t row_stride, int64_t nrows,
                                     const void *packed, int64_t ncols, float *out, int64_t out_stride);
/* one row of n values -> the same row in the format's repack_as format (_formats.py): the same
 * levels and scales, so every product gives the same bits on either */
typedef void (*qgemv_repack_row_fn)(const void *src, void *dst, int64_t n);
/* sum over n of a[i] * b[i] in float32 */
typedef float (*qgemv_dot_f32_fn)(int64_t n, const float *a, const float *b);
/* 1 if no NaN or Inf among x[0:n], else 0 */
typedef int (*qgemv_all_finite_fn)(const float *x, int64_t n);
/* dst[0:n] = src[0:n], dst's lines written without being read first (non-temporal stores) */
typedef void (*qgemv_stream_f32_fn)(float *dst, const float *src, int64_t n);
/* dst[c dst_stride + i] = x[i ld + c] for i < n, c < nc <= 8 (nc columns of a row-major matrix
 * as rows), and 1 if all of them are finite, else 0 */
typedef int (*qgemv_gather_columns_fn)(const float *x, int64_t ld, int64_t n, int nc, float *dst, int64_t dst_stride);

/* ggml's iq2_init_impl tables of an 8-value grid (src/formats/quantize_grids.h) */
enum { QGEMV_GRID8_IQ2XXS, QGEMV_GRID8_IQ2XS, QGEMV_GRID8_IQ2S, QGEMV_GRID8_IQ1S, QGEMV_GRID8_COUNT };
#define QGEMV_GRID8_KEYS 43692   /* keys u = sum l_k 4^k of 8 levels in {0..3} that can occur */
typedef struct {
    int size;                  /* grid points */
    int64_t n_neighbours;      /* entries of neighbours */
    const uint64_t *levels;    /* [size]: point i's 8 odd values 2 l_k + 1, byte k */
    const int32_t *map;        /* [QGEMV_GRID8_KEYS]: grid point of key u, or -(1 + offset) */
    const uint16_t *neighbours; /* at an offset: count m, then m grid points, nearest first */
} qgemv_grid8;

typedef struct {
    const char *isa;                                    /* "baseline", "avx2", "avx512", ... */
    qgemv_dequant_row_fn dequant_row[QGEMV_N_TYPES];    /* NULL: not implemented */
    qgemv_vec_dot_fn vec_dot[QGEMV_N_TYPES];            /* weight type -> dot with its act (_formats.py) */
    qgemv_vec_dot_tile_fn vec_dot_tile[QGEMV_N_TYPES];  /* weight type -> tile of rows x columns */
    qgemv_quantize_row_fn quantize_act[QGEMV_N_TYPES];  /* act type -> quantizer */
    qgemv_quantize_weights_fn quantize_row[QGEMV_N_TYPES]; /* type -> ggml's weight quantizer, checked */
    size_t block_nbytes[QGEMV_N_TYPES];                 /* sizeof(block_<name>), 0: no such id */
    size_t block_align[QGEMV_N_TYPES];                  /* _Alignof(block_<name>) */
    qgemv_interleave_fn interleave[QGEMV_N_TYPES];      /* NULL: no interleaved layout */
    qgemv_panel_tile_fn panel_tile[QGEMV_N_TYPES];      /* NULL: this variant reads the GGUF rows */
    int panel_rows[QGEMV_N_TYPES];                      /* rows per panel (_formats.py: interleave) */
    qgemv_repack_row_fn repack_row[QGEMV_N_TYPES];      /* NULL: no repack_as format */
    qgemv_packed_tile_fn packed_tile[QGEMV_N_TYPES];    /* NULL: batches go to vec_dot_tile */
    qgemv_packed_tile_fn packed_panel_tile[QGEMV_N_TYPES];  /* the same over the rows of the type's panels
                                                         * (8 a panel, one after another); NULL:
                                                         * packed batches read the GGUF rows */
    int packed_panel_min_cols[QGEMV_N_TYPES];           /* the smallest batch that takes that */
    qgemv_pack_columns_fn pack_columns[QGEMV_N_TYPES];  /* what the type's packed_tile reads */
    size_t packed_nbytes[QGEMV_N_TYPES];                /* its bytes per 16 columns and QK_K values */
    int packed_min_cols[QGEMV_N_TYPES];                 /* the smallest batch that takes it */
    int *prefetch_one_column;                           /* 1: a single column's panel passes prefetch
                                                         * (simd.h: QGEMV_PREFETCH_PASS_LINE) */
    int *amx_tiles;                                     /* 1: batches may run on AMX tiles (simd.h:
                                                         * QGEMV_AMX; 0 where the variant has none) */
    int *bf16_pairs;                                    /* 1: bf16 products in vdpbf16ps's arithmetic
                                                         * (float_panels.h; avx512bf16 alone) */
    int *widen_f16;                                     /* 1: f16 batches widen their columns once
                                                         * (elements.h; avx2 and avxvnni) */
    qgemv_dot_f32_fn dot_f32;
    qgemv_stream_f32_fn stream_f32;
    qgemv_all_finite_fn all_finite;
    qgemv_gather_columns_fn gather_columns;
    /* builds what quantize_row[qtype] reads (ggml's quantize_init): 0, or -1 out of memory;
     * call with the GIL held, before the prange */
    int (*quantize_prepare)(int qtype);
    const qgemv_grid8 *(*grid8)(int grid);   /* an 8-value grid's tables, built if need be (GIL held) */
} qgemv_kernel_table;

extern const qgemv_kernel_table qgemv_kernels_baseline;
#if defined(__x86_64__) || defined(_M_X64)
extern const qgemv_kernel_table qgemv_kernels_avx2;
extern const qgemv_kernel_table qgemv_kernels_avxvnni;   /* where the compiler has -mavxvnni */
extern const qgemv_kernel_table qgemv_kernels_avx512;
extern const qgemv_kernel_table qgemv_kernels_avx512bf16;   /* not built by MSVC */
#define QGEMV_X86 1
#endif

#endif /* QGEMV_KERNELS_H */
