/* src/formats/float_panels.h: f32, f16 and bf16 products on the AVX-512 variants, from panels
 * that hold 16 rows value by value (block_f32x16, block_f16x16, block_bf16x16:
 * include/qgemv/blocks.h).
 *
 * Their order, on every path of these variants (panels, GGUF rows, vec_dot):
 *     out[r][c] = ((0 + s_0) + s_1) + ... ,   s_j = fma(w[r][i], a[c][i], s) over chunk j's
 *     values i in order, from s = 0, chunks of QGEMV_FLOAT_CHUNK values
 * (f16 and bf16 weights and activations widened exactly first).  One vector holds the 16 rows'
 * value i, one broadcast the column's, and one fma moves 16 (row, column) chains on: a block of
 * 3 panels x 8 columns keeps 24 chains in registers and takes 3 loads and 8 broadcasts per 24
 * fmas, the shape of a BLAS micro-kernel.  vec_dot's lanes along the values (elements.h, the
 * AVX2 variant's order, and these variants' before) load both operands, 10 vectors per 24 fmas
 * in a 4 x 6 block, and keep 16 lanes of sums per (row, column), so their batches streamed rows
 * and columns from L2 or parked sums between slabs: 2.6-3 G fmas a second a thread (Intel Xeon,
 * 4096 x 4096, 2 threads); these blocks run 4.2-4.7 (benches/RESULTS.md, 35th session).  A
 * chunk bounds each chain to 128 products, less than vec_dot's 16 lanes took over 4096 values.
 * bf16 widened takes the same fmas as f16's; where qgemv_bf16_pairs is on (the avx512bf16 variant
 * on a CPU that runs vdpbf16ps at fma's instruction rate, a Zen 4: qgemv/_dispatch.py), it takes
 * vdpbf16ps's arithmetic instead, ggml's own on such CPUs, on every path: the chains run over the
 * chunk's value pairs (2k, 2k + 1), s = ftz(fma(w_2k, a_2k, ftz(fma(w_2k+1, a_2k+1, s)))) with
 * subnormal inputs read as 0 (a last odd value paired with a 0), 32 products an instruction
 * where an fma makes 16 (Zen 4, 4096 x 4096, 2 threads: batch 32 5.3-5.5 -> 3.0-3.1 ms, batch 8
 * 1.39-1.40 -> 0.83-1.00).
 *
 * vec_dot itself, one row, is one chain a chunk, scalar fmas: what the tile and the panels do to
 * that row, not fast; the GGUF rows' tile (the last rows % 16, matrices of fewer rows, products
 * with set_repack(False)) transposes 48 rows a chunk at a time into panels first, a single
 * column 16 rows at a time in registers, which costs it 1.2-1.7x the old order's time there
 * (4096 x 4096: f16 2 threads 0.61 -> 1.05 ms, f32 1 thread 2.4 -> 2.95-3.3).
 */

#define QGEMV_FLOAT_CHUNK 128   /* values a chain runs before its sum joins the total */

#if defined(QGEMV_AVX512)
/* v[j] = row j's 16 values (32-bit lanes) -> v[k] = value k of the 16 rows: 32-, 64- and 128-bit
 * interleaves, then the 128-bit quarters */
static inline void float_transpose_16x16(__m512 v[16]) {
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(v[i], v[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(v[i], v[i + 1]);
    }
    for (int i = 0; i < 16; i += 4)
        for (int h = 0; h < 2; h++) {
            const __m512d a = _mm512_castps_pd(t[i + h]), b = _mm512_castps_pd(t[i + h + 2]);
            v[i + 2 * h] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
            v[i + 2 * h + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
        }
    for (int i = 0; i < 16; i += 8)
        for (int j = 0; j < 4; j++) {
            t[i + j] = _mm512_shuffle_f32x4(v[i + j], v[i + j + 4], 0x88);
            t[i + j + 4] = _mm512_shuffle_f32x4(v[i + j], v[i + j + 4], 0xdd);
        }
    for (int j = 0; j < 8; j++) {
        v[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
        v[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xdd);
    }
}
/* 16 values of a row as 32-bit lanes, and back (16-bit values zero-extended: bits, not numbers) */
static inline __m512 float_panel_load_f32(const float *p) { return _mm512_loadu_ps(p); }
#define float_lanes_load_f32 float_panel_load_f32
static inline __m512 float_lanes_load_f16(const uint16_t *p) {
    return _mm512_castsi512_ps(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)));
}
static inline void float_lanes_store_f32(float *p, __m512 v) { _mm512_storeu_ps(p, v); }
static inline void float_lanes_store_f16(uint16_t *p, __m512 v) {
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(_mm512_castps_si512(v)));
}
#define float_lanes_load_bf16 float_lanes_load_f16
#define float_lanes_store_bf16 float_lanes_store_f16
/* panel blocks i .. of 16 rows x[r], 16 values at a time through the transpose (a value at a
 * time left the GGUF rows' tile 10x slower than vec_dot's lanes: f16 4096 x 4096, 2 threads,
 * 0.61 -> 6.3 ms) */
#define QGEMV_FLOAT_ROWS_TO_PANEL_16(name)                                                    \
    for (; i + 16 <= n; i += 16) {                                                           \
        __m512 v[16];                                                                        \
        for (int r = 0; r < 16; r++) v[r] = float_lanes_load_##name(x[r] + i);               \
        float_transpose_16x16(v);                                                            \
        for (int k = 0; k < 16; k++) float_lanes_store_##name(p[i + k].v, v[k]);             \
    }
#else
#define QGEMV_FLOAT_ROWS_TO_PANEL_16(name)
#endif
/* rows 0..nrows-1 of w (row_stride bytes apart, nrows <= 16), n values each -> n panel blocks,
 * block i = the rows' value i; rows past nrows repeat the last */
#define QGEMV_DEFINE_FLOAT_PANEL(name)                                                        \
    static void float_rows_to_panel_##name(const void *restrict w, int64_t row_stride, int nrows, int64_t n, \
                                           block_##name##x16 *restrict p) {                  \
        const block_##name *x[16];                                                           \
        for (int r = 0; r < 16; r++)                                                         \
            x[r] = (const block_##name *)((const uint8_t *)w + (r < nrows ? r : nrows - 1) * row_stride); \
        int64_t i = 0;                                                                       \
        QGEMV_FLOAT_ROWS_TO_PANEL_16(name)                                                   \
        for (; i < n; i++)                                                                   \
            for (int r = 0; r < 16; r++) p[i].v[r] = x[r][i];                                \
    }                                                                                        \
    static void interleave_x16_##name(const void *restrict w, int64_t row_stride, int64_t n, void *restrict panel) { \
        float_rows_to_panel_##name(w, row_stride, 16, n, (block_##name##x16 *)panel);       \
    }
QGEMV_DEFINE_FLOAT_PANEL(f32)
QGEMV_DEFINE_FLOAT_PANEL(f16)
QGEMV_DEFINE_FLOAT_PANEL(bf16)

#if defined(QGEMV_AVX512)
/* one row against one column in the order above */
#define QGEMV_DEFINE_VEC_DOT_CHAINS(fn, name, to_f32)                                         \
    static float fn(int64_t n, const void *restrict w, const void *restrict a) {             \
        const block_##name *x = (const block_##name *)w, *y = (const block_##name *)a;       \
        float total = 0.0f;                                                                  \
        for (int64_t k0 = 0; k0 < n; k0 += QGEMV_FLOAT_CHUNK) {                              \
            const int64_t k1 = n - k0 < QGEMV_FLOAT_CHUNK ? n : k0 + QGEMV_FLOAT_CHUNK;      \
            float s = 0.0f;                                                                  \
            for (int64_t i = k0; i < k1; i++) s = fmaf(to_f32(x[i]), to_f32(y[i]), s);       \
            total += s;                                                                      \
        }                                                                                    \
        return total;                                                                        \
    }
QGEMV_DEFINE_VEC_DOT_CHAINS(vec_dot_f32_f32, f32, qgemv_f32_itself)
QGEMV_DEFINE_VEC_DOT_CHAINS(vec_dot_f16_f16, f16, qgemv_fp16_to_fp32)
#if defined(QGEMV_AVX512_BF16)
#define QGEMV_FLOAT_PAIRS_bf16 qgemv_bf16_pairs
QGEMV_DEFINE_VEC_DOT_CHAINS(vec_dot_bf16_fmas, bf16, qgemv_bf16_to_fp32)
/* x with float32's subnormals read as 0 (vdpbf16ps's inputs, its outputs) */
static inline float bf16_pair_flush(float x) { return fabsf(x) < 0x1p-126f ? copysignf(0.0f, x) : x; }
/* one row against one column in vdpbf16ps's arithmetic (the header) */
static float vec_dot_bf16_pairs(int64_t n, const void *restrict w, const void *restrict a) {
    const block_bf16 *x = (const block_bf16 *)w, *y = (const block_bf16 *)a;
    float total = 0.0f;
    for (int64_t k0 = 0; k0 < n; k0 += QGEMV_FLOAT_CHUNK) {
        const int64_t k1 = n - k0 < QGEMV_FLOAT_CHUNK ? n : k0 + QGEMV_FLOAT_CHUNK;
        float s = 0.0f;
        for (int64_t i = k0; i < k1; i += 2) {
            const int odd = i + 1 < k1;   /* a last odd value pairs with 0 */
            const float x1 = odd ? qgemv_bf16_to_fp32(x[i + 1]) : 0.0f, y1 = odd ? qgemv_bf16_to_fp32(y[i + 1]) : 0.0f;
            const float x0 = qgemv_bf16_to_fp32(x[i]), y0 = qgemv_bf16_to_fp32(y[i]);
            s = bf16_pair_flush(fmaf(bf16_pair_flush(x1), bf16_pair_flush(y1), s));
            s = bf16_pair_flush(fmaf(bf16_pair_flush(x0), bf16_pair_flush(y0), s));
        }
        total += s;
    }
    return total;
}
static float vec_dot_bf16_bf16(int64_t n, const void *restrict w, const void *restrict a) {
    return qgemv_bf16_pairs ? vec_dot_bf16_pairs(n, w, a) : vec_dot_bf16_fmas(n, w, a);
}
#else
#define QGEMV_FLOAT_PAIRS_bf16 0
QGEMV_DEFINE_VEC_DOT_CHAINS(vec_dot_bf16_bf16, bf16, qgemv_bf16_to_fp32)
#endif
#define QGEMV_FLOAT_PAIRS_f32 0   /* whether the format's products run vdpbf16ps's pairs (above) */
#define QGEMV_FLOAT_PAIRS_f16 0

enum {
    QGEMV_FLOAT_PANELS = 3,      /* panels a block: 48 rows */
    QGEMV_FLOAT_COLS = 8,        /* columns a block: 3 x 8 chains + 3 + 1 operands of 32 registers */
    QGEMV_FLOAT_GROUPS = 3,      /* groups of 3 panels that share each chunk's widened columns */
    QGEMV_FLOAT_COLS_CHUNK = 32, /* columns whose totals those keep at once */
    QGEMV_FLOAT_HINTED_SPAN = 8  /* f32's single column with the hints: panels side by side a pass */
};
static inline __m512 float_panel_load_f16(const uint16_t *p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}
static inline __m512 float_panel_load_bf16(const uint16_t *p) {   /* bf16: a float32's high half */
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16));
}
/* tot[q tot_stride + c] += the chains of panels p[q] (q < P) against columns y + c
 * QGEMV_FLOAT_CHUNK (c < C) over len values, from 0; with pf, each panel line asked for ahead
 * (the first column block's pass).  The columns at constant offsets from one pointer leave the
 * loop its general registers (8 pointers of their own and the panels' took all 16, and GCC
 * reloaded 6 of them from the stack every value: bf16 batch 32 4-13% slower, Xeon) */
#define QGEMV_DEFINE_FLOAT_BLOCK(name)                                                        \
    QGEMV_ALWAYS_INLINE void float_block_##name(const block_##name *const *p, const float *y, int64_t len,        \
                                                const int P, const int C, __m512 *tot, int64_t tot_stride, \
                                                const int pf, const int64_t ncols, float *keep) { \
        enum { LINE = 64 / (16 * (int)sizeof(block_##name)) };   /* values a panel line holds */ \
        __m512 acc[QGEMV_FLOAT_PANELS][QGEMV_FLOAT_COLS];                                    \
        for (int q = 0; q < P; q++)                                                          \
            for (int c = 0; c < C; c++) acc[q][c] = _mm512_setzero_ps();                     \
        const int64_t whole = len / LINE * LINE;                                             \
        for (int64_t i0 = 0; i0 < len; i0 += LINE) {                                         \
            /* the hints outside the loop that does the work (elements.h: a branch in it cost \
             * accumulators their registers); a block of C > 1 columns is a batch's, known so at \
             * compile time (a single column's flag, tested in every batch block, cost f16 batch \
             * 32 8%: Xeon, 2 threads) */                                                     \
            if (pf)                                                                          \
                for (int q = 0; q < P; q++) QGEMV_PREFETCH_COLS_LINE(p[q] + 16 * i0, C > 1 ? C : ncols); \
            const int64_t i1 = i0 < whole ? i0 + LINE : len;                                 \
            for (int64_t i = i0; i < i1; i++) {                                              \
                __m512 wv[QGEMV_FLOAT_PANELS];                                               \
                for (int q = 0; q < P; q++) {                                                \
                    wv[q] = float_panel_load_##name(p[q] + 16 * i);                          \
                    if (keep) _mm512_store_ps(keep + 16 * (q * QGEMV_FLOAT_CHUNK + i), wv[q]); \
                }                                                                            \
                for (int c = 0; c < C; c++) {                                                \
                    const __m512 b = _mm512_set1_ps(y[c * QGEMV_FLOAT_CHUNK + i]);          \
                    for (int q = 0; q < P; q++) acc[q][c] = _mm512_fmadd_ps(wv[q], b, acc[q][c]); \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        for (int q = 0; q < P; q++)                                                          \
            for (int c = 0; c < C; c++) tot[q * tot_stride + c] = _mm512_add_ps(tot[q * tot_stride + c], acc[q][c]); \
    }
#if defined(QGEMV_AVX512_BF16)
/* the block above in vdpbf16ps's pairs (the header), with the columns' chunks as their bf16
 * values: a panel line holds values i and i + 1 of the 16 rows, which one vpermw turns into
 * row r's pair in dword r, met by the column's pair broadcast; a last odd value as (value, 0) */
static const uint16_t float_pair_rows[32] = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23,
                                             8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
QGEMV_ALWAYS_INLINE void float_pair_block_bf16(const block_bf16 *const *p, const float *y, int64_t len,
                                               const int P, const int C, __m512 *tot, int64_t tot_stride,
                                               const int pf, const int64_t ncols) {
    const __m512i pair_rows = _mm512_loadu_si512(float_pair_rows);
    __m512 acc[QGEMV_FLOAT_PANELS][QGEMV_FLOAT_COLS];
    for (int q = 0; q < P; q++)
        for (int c = 0; c < C; c++) acc[q][c] = _mm512_setzero_ps();
    const int64_t even = len & ~(int64_t)1;
    for (int64_t i = 0; i < even; i += 2) {
        if (pf)
            for (int q = 0; q < P; q++) QGEMV_PREFETCH_COLS_LINE(p[q] + 16 * i, C > 1 ? C : ncols);
        __m512bh wv[QGEMV_FLOAT_PANELS];
        for (int q = 0; q < P; q++) wv[q] = (__m512bh)_mm512_permutexvar_epi16(pair_rows, _mm512_loadu_si512(p[q] + 16 * i));
        for (int c = 0; c < C; c++) {
            uint32_t pair;   /* the column's values i, i + 1 (its chunk copied raw into a float buffer) */
            memcpy(&pair, (const uint16_t *)(y + c * QGEMV_FLOAT_CHUNK) + i, sizeof pair);
            const __m512bh b = (__m512bh)_mm512_set1_epi32((int)pair);
            for (int q = 0; q < P; q++) acc[q][c] = _mm512_dpbf16_ps(acc[q][c], wv[q], b);
        }
    }
    if (len & 1) {
        __m512bh wv[QGEMV_FLOAT_PANELS];
        for (int q = 0; q < P; q++)
            wv[q] = (__m512bh)_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p[q] + 16 * even)));
        for (int c = 0; c < C; c++) {
            uint16_t last;
            memcpy(&last, (const uint16_t *)(y + c * QGEMV_FLOAT_CHUNK) + even, sizeof last);
            const __m512bh b = (__m512bh)_mm512_set1_epi32((int)last);
            for (int q = 0; q < P; q++) acc[q][c] = _mm512_dpbf16_ps(acc[q][c], wv[q], b);
        }
    }
    for (int q = 0; q < P; q++)
        for (int c = 0; c < C; c++) tot[q * tot_stride + c] = _mm512_add_ps(tot[q * tot_stride + c], acc[q][c]);
}
#define QGEMV_FLOAT_PAIR_BLOCK_bf16(P, C)                                                      \
    if (qgemv_bf16_pairs) {                                                                   \
        float_pair_block_bf16(p, y, len, P, C, tot, QGEMV_FLOAT_COLS_CHUNK, pf, ncols);       \
        break;                                                                                \
    }
/* a single column from GGUF rows in the same pairs: 16 rows' 32 values at a time, each row's
 * 16 pairs a dword apiece, turned in registers into pair k of the 16 rows (the widened values'
 * transpose, on pairs), met by the column's pair k; a chunk's last values % 32 a pair at a time */
static void float_rows_gemv_pairs_bf16(int64_t n, const void *restrict w, int64_t row_stride, int64_t nrows,
                                       const void *restrict a, float *restrict out, int64_t out_stride) {
    const block_bf16 *y = (const block_bf16 *)a;
    for (int64_t r0 = 0; r0 < nrows; r0 += 16) {
        const int nr = nrows - r0 < 16 ? (int)(nrows - r0) : 16;
        const block_bf16 *x[16];
        for (int r = 0; r < 16; r++)
            x[r] = (const block_bf16 *)((const uint8_t *)w + (r0 + (r < nr ? r : nr - 1)) * row_stride);
        __m512 total = _mm512_setzero_ps();
        for (int64_t k0 = 0; k0 < n; k0 += QGEMV_FLOAT_CHUNK) {
            const int64_t k1 = n - k0 < QGEMV_FLOAT_CHUNK ? n : k0 + QGEMV_FLOAT_CHUNK;
            __m512 acc = _mm512_setzero_ps();
            int64_t i = k0;
            for (; i + 32 <= k1; i += 32) {
                if (qgemv_prefetch_one_column)
                    for (int r = 0; r < 16; r++) QGEMV_PREFETCH_LINE(x[r] + i);
                __m512 v[16];
                for (int r = 0; r < 16; r++) v[r] = _mm512_loadu_ps(x[r] + i);   /* bits, not numbers */
                float_transpose_16x16(v);
                for (int k = 0; k < 16; k++) {
                    uint32_t pair;
                    memcpy(&pair, y + i + 2 * k, sizeof pair);
                    acc = _mm512_dpbf16_ps(acc, (__m512bh)_mm512_castps_si512(v[k]), (__m512bh)_mm512_set1_epi32((int)pair));
                }
            }
            for (; i < k1; i += 2) {   /* (value i, value i + 1 or 0) of each row */
                uint32_t t[16];
                for (int r = 0; r < 16; r++) t[r] = x[r][i] | (i + 1 < k1 ? (uint32_t)x[r][i + 1] << 16 : 0);
                const uint32_t pair = y[i] | (i + 1 < k1 ? (uint32_t)y[i + 1] << 16 : 0);
                acc = _mm512_dpbf16_ps(acc, (__m512bh)_mm512_loadu_si512(t), (__m512bh)_mm512_set1_epi32((int)pair));
            }
            total = _mm512_add_ps(total, acc);
        }
        float v[16];
        _mm512_storeu_ps(v, total);
        for (int r = 0; r < nr; r++) out[(r0 + r) * out_stride] = v[r];
    }
}
#define QGEMV_FLOAT_ROWS_GEMV_PAIRS_bf16                                                       \
    if (qgemv_bf16_pairs) {                                                                   \
        float_rows_gemv_pairs_bf16(n, w, row_stride, nrows, a, out, out_stride);              \
        return;                                                                               \
    }
#else
#define QGEMV_FLOAT_PAIR_BLOCK_bf16(P, C)
#define QGEMV_FLOAT_ROWS_GEMV_PAIRS_bf16
#endif
#define QGEMV_FLOAT_PAIR_BLOCK_f32(P, C)
#define QGEMV_FLOAT_PAIR_BLOCK_f16(P, C)
#define QGEMV_FLOAT_ROWS_GEMV_PAIRS_f32
#define QGEMV_FLOAT_ROWS_GEMV_PAIRS_f16
#define QGEMV_FLOAT_PANEL_CASE(name, P, C)                                                    \
    case 16 * P + C:                                                                          \
        QGEMV_FLOAT_PAIR_BLOCK_##name(P, C)                                                   \
        float_block_##name(p, y, len, P, C, tot, QGEMV_FLOAT_COLS_CHUNK, pf, ncols, NULL);     \
        break;
#define QGEMV_FLOAT_PANEL_CASES_OF_P(name, P)                                                 \
    QGEMV_FLOAT_PANEL_CASE(name, P, 1) QGEMV_FLOAT_PANEL_CASE(name, P, 2) QGEMV_FLOAT_PANEL_CASE(name, P, 3) \
    QGEMV_FLOAT_PANEL_CASE(name, P, 4) QGEMV_FLOAT_PANEL_CASE(name, P, 5) QGEMV_FLOAT_PANEL_CASE(name, P, 6) \
    QGEMV_FLOAT_PANEL_CASE(name, P, 7) QGEMV_FLOAT_PANEL_CASE(name, P, 8)
/* float_blocks_<name>: the block of P panels and C columns at p and y (its P and C constants in
 * each case), added to tot; out of line, so each block's loop has the registers to itself
 * (inlined in the tile beside the pairs' branch, GCC spilled its pointers: float_block's note) */
#define QGEMV_DEFINE_FLOAT_BLOCKS(name)                                                       \
    QGEMV_DEFINE_FLOAT_BLOCK(name)                                                            \
    QGEMV_NEVER_INLINE void float_blocks_##name(const block_##name *const *p, const float *y, int64_t len,       \
                                                int P, int C, __m512 *tot, int pf, int64_t ncols) { \
        switch (16 * P + C) {                                                                 \
        QGEMV_FLOAT_PANEL_CASES_OF_P(name, 1)                                                 \
        QGEMV_FLOAT_PANEL_CASES_OF_P(name, 2)                                                 \
        QGEMV_FLOAT_PANEL_CASES_OF_P(name, 3)                                                 \
        }                                                                                     \
    }                                                                                         \
    /* the block of P panels and QGEMV_FLOAT_COLS columns that also stores the panels' values \
     * widened, value i of panel q at keep + 16 (q QGEMV_FLOAT_CHUNK + i) */                 \
    QGEMV_NEVER_INLINE void float_block_keep_##name(const block_##name *const *p, const float *y, int64_t len, \
                                                    int P, __m512 *tot, int pf, int64_t ncols, float *keep) { \
        enum { C = QGEMV_FLOAT_COLS, T = QGEMV_FLOAT_COLS_CHUNK };                            \
        switch (P) {                                                                          \
        case 1: float_block_##name(p, y, len, 1, C, tot, T, pf, ncols, keep); break;          \
        case 2: float_block_##name(p, y, len, 2, C, tot, T, pf, ncols, keep); break;          \
        default: float_block_##name(p, y, len, 3, C, tot, T, pf, ncols, keep);                \
        }                                                                                     \
    }

/* panel_tile_<name>: npanels panels (panel_stride bytes apart) against ncols columns of
 * activations (act_stride bytes apart): 3 panels at a time, their chains' totals kept for up to
 * 32 columns while the chunks go by, each chunk's columns copied once as float32 (widened:
 * f16, bf16) and met by blocks of 8 columns.  f16's and bf16's panels are widened once a chunk
 * when more than one block meets them: the first block stores its values as float32 (24 KiB for
 * 3 panels, beside the columns' 16 KiB) and the others run f32's block on them, without the
 * conversions, the same bits (Intel Xeon, 4096 x 4096, builds alternating, medians of 6
 * processes: 2 threads f16 batch 32 3.42 -> 3.17 ms, bf16 3.63 -> 3.43, 1 thread bf16 6.86 ->
 * 6.15; batch 16 even; a first block that widened the whole chunk before any product waited on
 * the panels' lines: 1.06-1.13x slower).  vec_dot_tile_<name>_<name>: the same on GGUF
 * rows, 48 at a time copied into 3 panels chunk by chunk, each chunk's chains added to the
 * totals in order, so the same sums (vec_dot per row and column where the memory for them is
 * not to be had), a single column 16 rows at a time through float_rows_gemv_<name> (bf16's
 * pairs: float_rows_gemv_pairs_bf16) */
#define QGEMV_DEFINE_FLOAT_PANEL_TILES(name, to_f32)                                          \
    QGEMV_DEFINE_FLOAT_BLOCKS(name)                                                           \
    static void panel_tile_##name(int64_t n, const void *restrict panels, int64_t panel_stride, int64_t npanels, \
                                  const void *restrict a, int64_t act_stride, int64_t ncols, float *restrict out, \
                                  int64_t out_stride) {                                      \
        enum { PG = QGEMV_FLOAT_PANELS, GS = QGEMV_FLOAT_GROUPS, CB = QGEMV_FLOAT_COLS, CC = QGEMV_FLOAT_COLS_CHUNK, \
               S = QGEMV_FLOAT_CHUNK };                                                      \
        _Alignas(64) float buf[CC][S];                                                       \
        _Alignas(64) float wide[sizeof(block_##name) < 4 ? PG : 1][S][16];                   \
        __m512 tot[GS * PG][CC];                                                             \
        const int hints = QGEMV_PASS_HINTS(ncols, qgemv_prefetch_one_column);                \
        /* panels a pass over the chunks: a single column's k (below) run every chunk before   \
         * the next k (streams a panel long, which a Zen 4's prefetcher follows unasked; 9 in 4 KiB \
         * pieces, a page each, it did not: 4096 x 4096, 1 thread, f16 1.39 -> 0.86 ms, f32    \
         * 2.8 -> 1.6); a batch's groups share each chunk's widened columns */               \
        const int streams = 4 / (int)sizeof(block_##name);   /* 64 bytes a chain's fma */     \
        /* ... and a single column's k streams are a k-th of the tile's panels apart, each     \
         * running on through its part of the tile (3 streams side by side, two restarted        \
         * every 3 panels: short rows, out of cache, 1 thread, 57344 x 768 against matmul_panels' \
         * single-column tiles of 512 rows: f16 3.9-4.2 -> 3.2-3.4 ms, bf16 3.6 -> 3.2, f32 7.1 \
         * -> 6.1; 14336 x 4096 f16 4.45 -> 4.0; 2 threads and in cache even).  As many streams \
         * as make 64 bytes an fma, past a thread's bandwidth: f32 one (the panels one after     \
         * another), f16 and bf16 two (halves); fewer left f16 and bf16 latency-bound (one       \
         * stream: 14336 x 4096, 1 thread, 0.94-0.98x ggml), more restart more streams a tile.   \
         * Against 3, same minutes: f32 short rows 1 / 2 threads 0.97x / 0.96x -> 1.00x / 0.99x \
         * ggml, in cache 1 thread 1.19x -> 1.38-1.44x; bf16 short rows 1 thread 0.97x -> 0.98-  \
         * 0.99x, in cache 1.11x -> 1.16-1.18x; f16 short rows 0.99-1.00x -> 1.04-1.05x; 14336 x  \
         * 4096 and 2 threads even).  Except f32's one stream where the CPU takes the hints (the \
         * Xeon): there 8 panels side by side a pass ran faster (builds alternating, 1 thread   \
         * 4096 x 4096 2.43-2.49 -> 2.36-2.41 ms, 57344 x 768 10.1-10.6 -> 9.6-10.2; 14336 x     \
         * 4096 2 threads 6.9-7.2 -> 6.5-6.95); f16's and bf16's halves there beat it on short   \
         * rows by 4-10% and lost 3-4% on 14336 x 4096, so they keep their halves */          \
        const int spread = ncols == 1 && !(streams == 1 && qgemv_prefetch_one_column);       \
        const int span = ncols > 1 ? GS * PG : spread ? streams : QGEMV_FLOAT_HINTED_SPAN;   \
        const qgemv_walk walk = qgemv_walk_of(npanels, streams, spread, span);               \
        const int64_t qstride = walk.stride;                                                 \
        for (int64_t s0 = 0; s0 < walk.steps; s0 += walk.step) {                             \
            const int64_t left = qgemv_walk_items(npanels, s0, walk);                        \
            const int ns = left < span ? (int)left : span;   /* panels s0 + q qstride */    \
            for (int64_t c0 = 0; c0 < ncols; c0 += CC) {                                     \
                const int nc = ncols - c0 < CC ? (int)(ncols - c0) : CC;                     \
                for (int q = 0; q < ns; q++)                                                 \
                    for (int c = 0; c < nc; c++) tot[q][c] = _mm512_setzero_ps();            \
                for (int64_t k0 = 0; k0 < n; k0 += S) {                                      \
                    const int64_t len = n - k0 < S ? n - k0 : S;                             \
                    /* the chunk of each column as float32, copied for f32 too: the columns' \
                     * rows lie multiples of 4 KiB apart, one set of L1's (f32 batch 32 5.1 -> \
                     * 4.2 ms, batch 8 1.6 -> 1.26) */                                        \
                    for (int c = 0; c < nc; c++) {                                           \
                        const block_##name *col = (const block_##name *)((const uint8_t *)a + (c0 + c) * act_stride) + k0; \
                        if (QGEMV_FLOAT_PAIRS_##name)   /* its values as they are */        \
                            memcpy(buf[c], col, (size_t)len * sizeof(block_##name));         \
                        else                                                                 \
                            dequant_row_##name(col, buf[c], len);                            \
                    }                                                                        \
                    for (int g0 = 0; g0 < ns; g0 += PG) {                                    \
                        const int P = ns - g0 < PG ? ns - g0 : PG;                           \
                        const block_##name *p[PG];                                           \
                        for (int q = 0; q < P; q++)                                          \
                            p[q] = (const block_##name *)((const uint8_t *)panels + (s0 + (g0 + q) * qstride) * panel_stride) + 16 * k0; \
                        if (sizeof(block_##name) < 4 && nc > CB && !QGEMV_FLOAT_PAIRS_##name) { \
                            /* f16, bf16: the first column block widens the panels' values    \
                             * once for the others, which run on float32 */                   \
                            float_block_keep_##name(p, buf[0], len, P, &tot[g0][0], hints, ncols, &wide[0][0][0]); \
                            const block_f32 *pw[PG];                                         \
                            for (int q = 0; q < P; q++) pw[q] = wide[q][0];                  \
                            for (int cb = CB; cb < nc; cb += CB)                             \
                                float_blocks_f32(pw, buf[cb], len, P, nc - cb < CB ? nc - cb : CB, &tot[g0][cb], 0, ncols); \
                            continue;                                                        \
                        }                                                                    \
                        for (int cb = 0; cb < nc; cb += CB) {                                \
                            const int C = nc - cb < CB ? nc - cb : CB, pf = hints && cb == 0; \
                            float_blocks_##name(p, buf[cb], len, P, C, &tot[g0][cb], pf, ncols); \
                        }                                                                    \
                    }                                                                        \
                }                                                                            \
                for (int q = 0; q < ns; q++)   /* lane r of a total: row 16 (s0 + q qstride) + r */ \
                    for (int c = 0; c < nc; c++) {                                           \
                        float v[16];                                                         \
                        _mm512_storeu_ps(v, tot[q][c]);                                      \
                        for (int r = 0; r < 16; r++) out[(16 * (s0 + q * qstride) + r) * out_stride + c0 + c] = v[r]; \
                    }                                                                        \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
    /* a single column from GGUF rows: 16 rows at a time, 16 values of each widened and turned  \
     * in registers into the 16 rows' value k, then the chains as a panel runs them */        \
    static void float_rows_gemv_##name(int64_t n, const void *restrict w, int64_t row_stride, int64_t nrows, \
                                       const void *restrict a, float *restrict out, int64_t out_stride) { \
        enum { S = QGEMV_FLOAT_CHUNK };                                                      \
        _Alignas(64) float y[S];                                                             \
        for (int64_t r0 = 0; r0 < nrows; r0 += 16) {                                         \
            const int nr = nrows - r0 < 16 ? (int)(nrows - r0) : 16;                         \
            const block_##name *x[16];                                                       \
            for (int r = 0; r < 16; r++)                                                     \
                x[r] = (const block_##name *)((const uint8_t *)w + (r0 + (r < nr ? r : nr - 1)) * row_stride); \
            __m512 total = _mm512_setzero_ps();                                              \
            for (int64_t k0 = 0; k0 < n; k0 += S) {                                          \
                const int64_t len = n - k0 < S ? n - k0 : S;                                 \
                dequant_row_##name((const block_##name *)a + k0, y, len);                    \
                __m512 acc = _mm512_setzero_ps();                                            \
                int64_t i = 0;                                                               \
                for (; i + 16 <= len; i += 16) {                                             \
                    /* each row's lines ahead, once a line (32 values of 16 bits) */         \
                    if (qgemv_prefetch_one_column && !((k0 + i) * sizeof(block_##name) & 63)) \
                        for (int r = 0; r < 16; r++) QGEMV_PREFETCH_LINE(x[r] + k0 + i);     \
                    __m512 v[16];                                                            \
                    for (int r = 0; r < 16; r++) v[r] = float_panel_load_##name(x[r] + k0 + i); \
                    float_transpose_16x16(v);                                                \
                    for (int k = 0; k < 16; k++) acc = _mm512_fmadd_ps(v[k], _mm512_set1_ps(y[i + k]), acc); \
                }                                                                            \
                for (; i < len; i++) {                                                       \
                    float t[16];                                                             \
                    for (int r = 0; r < 16; r++) t[r] = to_f32(x[r][k0 + i]);                 \
                    acc = _mm512_fmadd_ps(_mm512_loadu_ps(t), _mm512_set1_ps(y[i]), acc);     \
                }                                                                            \
                total = _mm512_add_ps(total, acc);                                           \
            }                                                                                \
            float v[16];                                                                     \
            _mm512_storeu_ps(v, total);                                                      \
            for (int r = 0; r < nr; r++) out[(r0 + r) * out_stride] = v[r];                  \
        }                                                                                    \
    }                                                                                        \
    static void vec_dot_tile_##name##_##name(int64_t n, const void *restrict w, int64_t row_stride, int64_t nrows, \
                                             const void *restrict a, int64_t act_stride, int64_t ncols, \
                                             float *restrict out, int64_t out_stride) {      \
        enum { PG = QGEMV_FLOAT_PANELS, S = QGEMV_FLOAT_CHUNK };                             \
        if (ncols == 1) {                                                                    \
            QGEMV_FLOAT_ROWS_GEMV_PAIRS_##name                                               \
            float_rows_gemv_##name(n, w, row_stride, nrows, a, out, out_stride);             \
            return;                                                                          \
        }                                                                                    \
        _Alignas(64) block_##name##x16 panel[PG][S];                                         \
        float *part = (float *)malloc((size_t)(16 * PG * ncols) * sizeof(float));           \
        if (part == NULL) {                                                                  \
            for (int64_t r = 0; r < nrows; r++)                                              \
                for (int64_t c = 0; c < ncols; c++)                                          \
                    out[r * out_stride + c] = vec_dot_##name##_##name(n, (const uint8_t *)w + r * row_stride, \
                                                                      (const uint8_t *)a + c * act_stride); \
            return;                                                                          \
        }                                                                                    \
        for (int64_t r0 = 0; r0 < nrows; r0 += 16 * PG) {   /* 3 panels' rows, chunk by chunk */ \
            const int nr = nrows - r0 < 16 * PG ? (int)(nrows - r0) : 16 * PG, np = (nr + 15) / 16; \
            for (int64_t k0 = 0; k0 < n; k0 += S) {                                          \
                const int64_t len = n - k0 < S ? n - k0 : S;                                 \
                for (int q = 0; q < np; q++)                                                 \
                    float_rows_to_panel_##name((const block_##name *)((const uint8_t *)w + (r0 + 16 * q) * row_stride) + k0, \
                                               row_stride, nr - 16 * q < 16 ? nr - 16 * q : 16, len, panel[q]); \
                /* each (row, column)'s chain over this chunk, 0 + s_j, added to its total */ \
                panel_tile_##name(len, panel, sizeof(panel[0]), np, (const block_##name *)a + k0, act_stride, ncols, \
                                  part, ncols);                                              \
                for (int r = 0; r < nr; r++)                                                 \
                    for (int64_t c = 0; c < ncols; c++) {                                    \
                        float *o = out + (r0 + r) * out_stride + c;                          \
                        *o = (k0 ? *o : 0.0f) + part[r * ncols + c];                         \
                    }                                                                        \
            }                                                                                \
        }                                                                                    \
        free(part);                                                                          \
    }
QGEMV_DEFINE_FLOAT_PANEL_TILES(f32, qgemv_f32_itself)
QGEMV_DEFINE_FLOAT_PANEL_TILES(f16, qgemv_fp16_to_fp32)
QGEMV_DEFINE_FLOAT_PANEL_TILES(bf16, qgemv_bf16_to_fp32)
#else
#define panel_tile_f32 NULL   /* the table's entries (QGEMV_FOR_EACH_INTERLEAVED): GGUF rows */
#define panel_tile_f16 NULL
#define panel_tile_bf16 NULL
#endif
