/* src/tiles.h: the loop structure of every product, once: tiles of weight rows x activation columns.
 *
 * A tile kernel computes, for r < nrows and c < ncols,
 *     out[r * out_stride + c] = sum_i W_r[i] A_c[i]      (row r at w + r * row_stride bytes,
 *                                                          column c at a + c * act_stride bytes,
 *                                                          A_c already in the format's act type),
 * so a driver can hand each thread a slab of rows and every column of the batch at once.
 *
 * Every format with "matmul" gets the generic tile below, composed from its vec_dot (one call per
 * row and column: what the per-row drivers did).  A family file may do better -- decode each
 * weight block once for all the columns, several rows per pass -- by defining
 * vec_dot_tile_<name>_<act> and listing it in its QGEMV_TILES_<FAMILY>(X) list; src/kernels.c
 * puts those after the generic entries, so they override them in the table.  A specialised tile
 * must give each (r, c) the same float operations whatever rows and columns share its tile, so
 * results never depend on the thread count or the batch size.
 */

/* QGEMV_NEVER_INLINE: a kernel kept out of its caller, whose other paths GCC would otherwise
 * lay out and allocate registers with it (src/formats/iquants.h) */
#if defined(__GNUC__) || defined(__clang__)
#define QGEMV_ALWAYS_INLINE static inline __attribute__((always_inline))
#define QGEMV_NEVER_INLINE static __attribute__((noinline))
#elif defined(_MSC_VER)
#define QGEMV_ALWAYS_INLINE static __forceinline
#define QGEMV_NEVER_INLINE static __declspec(noinline)
#else
#define QGEMV_ALWAYS_INLINE static inline
#define QGEMV_NEVER_INLINE static
#endif

/* A tile's walk over n items (rows, panels) k at a time.  A batch takes k adjacent items a
 * step.  A single column, which shares nothing between them, takes items s, s + stride, ...,
 * s + (k - 1) stride at step s, stride a k-th of the tile, so each of its k read streams runs on
 * through its part where k items side by side restarted k - 1 streams every k items (the AVX2
 * float tile's quarters, src/formats/elements.h; the AVX-512 float panels' halves or one stream,
 * float_panels.h).  for (s = 0; s < w.steps; s += w.step) takes qgemv_walk_items(n, s, w) <= k
 * items, s + i w.stride. */
typedef struct { int64_t stride, steps, step; } qgemv_walk;
static inline qgemv_walk qgemv_walk_of(int64_t n, int64_t k, int single_column, int64_t batch_step) {
    const int64_t part = (n + k - 1) / k;
    const qgemv_walk spread = {part, part, 1}, adjacent = {1, n, batch_step};
    return single_column ? spread : adjacent;
}
static inline int64_t qgemv_walk_items(int64_t n, int64_t s, qgemv_walk w) { return (n - s + w.stride - 1) / w.stride; }

/* the generic tile of (name, act): vec_dot per row and column */
#define QGEMV_DEFINE_VEC_DOT_TILE_GENERIC(id, name, act, act_id)                             \
    static void vec_dot_tile_generic_##name##_##act(                                        \
        int64_t n, const void *restrict w, int64_t row_stride, int64_t nrows,               \
        const void *restrict a, int64_t act_stride, int64_t ncols,                          \
        float *restrict out, int64_t out_stride) {                                          \
        for (int64_t r = 0; r < nrows; r++)                                                 \
            for (int64_t c = 0; c < ncols; c++)                                             \
                out[r * out_stride + c] = vec_dot_##name##_##act(                           \
                    n, (const uint8_t *)w + r * row_stride, (const uint8_t *)a + c * act_stride); \
    }

/* A prepared layout whose panel is 8 rows of another block type, one row after another (the IQ
 * grids' code blocks, iq1_s's and iq1_m's trit blocks): interleave_x8_<name> makes a panel from
 * GGUF rows 0..7 of w (row_stride bytes apart, n values each), block by block through
 * convert(GGUF block, panel block); panel_tile_<name> is tile (a vec_dot_tile over rows of panel
 * blocks) on npanels such panels back to back, 8 npanels rows panel_stride / 8 bytes apart;
 * QGEMV_ROWS_TILE_Q8_K(block name) names the tile of those rows: the family's where the variant
 * has one (AVX2 and up), else the generic one */
#if defined(QGEMV_AVX2)
#define QGEMV_ROWS_TILE_Q8_K(bname) vec_dot_tile_##bname##_q8_K
#else
#define QGEMV_ROWS_TILE_Q8_K(bname) vec_dot_tile_generic_##bname##_q8_K
#endif
#define QGEMV_DEFINE_ROW_PANELS(name, pblock, convert, tile)                                \
    static void interleave_x8_##name(const void *restrict w, int64_t row_stride, int64_t n, void *restrict panel) { \
        pblock *p = (pblock *)panel;                                                        \
        for (int r = 0; r < 8; r++)                                                         \
            for (int64_t b = 0; b < n / QK_K; b++)                                          \
                convert((const block_##name *)((const uint8_t *)w + r * row_stride) + b, p++); \
    }                                                                                       \
    static void panel_tile_##name(int64_t n, const void *restrict panels, int64_t panel_stride, int64_t npanels, \
                                  const void *restrict a, int64_t act_stride, int64_t ncols, float *restrict out, \
                                  int64_t out_stride) {                                     \
        tile(n, panels, panel_stride / 8, 8 * npanels, a, act_stride, ncols, out, out_stride); \
    }

/* vec_dot_<name>_<act> by vec_dot_row_<name>_<act>(n, w, a, hints) with its prefetch hints or
 * without, as the CPU asks (qgemv_prefetch_one_column, include/qgemv/simd.h), chosen once a row:
 * hints (a constant per instantiation) tests nothing in the loop, and a CPU that takes none
 * issues none (the macros aim them at the line being loaded there) */
#define QGEMV_VEC_DOT_BY_HINTS(name, act)                                                  \
    static float vec_dot_##name##_##act(int64_t n, const void *restrict w, const void *restrict a) { \
        return qgemv_prefetch_one_column ? vec_dot_row_##name##_##act(n, w, a, 1) : vec_dot_row_##name##_##act(n, w, a, 0); \
    }

/* in a tile: a single column (ncols == 1) goes row after row by vec_dot, and the tile returns:
 * each thread one read stream, which a family's multi-row passes do not beat for most formats
 * (benches/RESULTS.md) */
#define QGEMV_TILE_ONE_COLUMN(vec_dot, n, w, row_stride, nrows, a, ncols, out, out_stride)   \
    if ((ncols) == 1) {                                                                     \
        for (int64_t r_ = 0; r_ < (nrows); r_++)                                            \
            (out)[r_ * (out_stride)] = vec_dot((n), (const uint8_t *)(w) + r_ * (row_stride), (a)); \
        return;                                                                             \
    }

#if defined(QGEMV_AVX2)
/* a q8_K row kernel's columns: y[j] the activation blocks of column j */
QGEMV_ALWAYS_INLINE void qgemv_tile_columns_q8_K(const uint8_t *a, int64_t act_stride, int CB, const block_q8_K **y) {
    for (int j = 0; j < CB; j++) y[j] = (const block_q8_K *)(a + j * act_stride);
}
/* a super-block's float step against CB <= 8 q8_K columns, columns in lanes: column j's exact
 * integer total t_j (sum[j]'s lanes summed: integers, any order) in lane j of one vector,
 *     acc_j = fma(t_j d0, d_y_j, acc_j),
 * ggml's tiled kernels' arithmetic (ggml-cpu/tiled), which llama.cpp runs for batches of 8 and
 * more.  The IQ grids, iq1_s and iq1_m do this on every path to (row, column) -- vec_dot, their
 * tiles, the packed VNNI tile (src/packed_tile.h) -- so all give the same bits */
QGEMV_ALWAYS_INLINE void qgemv_columns_step_q8_K(float d0, const block_q8_K *const *y, int64_t ib, const int CB,
                                                 const __m256i *sum, __m256 *acc) {
    if (CB == 1) {   /* vec_dot: lane 0 alone, by scalar operations */
        const __m128 t = qgemv_total_i32x8_ps(sum[0]);
        *acc = _mm256_zextps128_ps256(_mm_fmadd_ss(_mm_mul_ss(t, _mm_set_ss(d0)), _mm_set_ss(y[0][ib].d),
                                                   _mm256_castps256_ps128(*acc)));
        return;
    }
    const __m256i z = _mm256_setzero_si256();
    const __m256i t = CB <= 4
        ? _mm256_zextsi128_si256(qgemv_totals4_i32(sum[0], sum[1], CB > 2 ? sum[2] : z, CB > 3 ? sum[3] : z))
        : _mm256_set_m128i(qgemv_totals4_i32(sum[4], CB > 5 ? sum[5] : z, CB > 6 ? sum[6] : z, CB > 7 ? sum[7] : z),
                           qgemv_totals4_i32(sum[0], sum[1], sum[2], sum[3]));
#define QGEMV_DY(j) (CB > (j) ? y[j][ib].d : 0.0f)
    const __m256 dy = _mm256_setr_ps(QGEMV_DY(0), QGEMV_DY(1), QGEMV_DY(2), QGEMV_DY(3), QGEMV_DY(4), QGEMV_DY(5),
                                     QGEMV_DY(6), QGEMV_DY(7));
#undef QGEMV_DY
    *acc = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(t), _mm256_set1_ps(d0)), dy, *acc);
}
/* out[j] = acc_j for the CB columns in acc's lanes */
QGEMV_ALWAYS_INLINE void qgemv_columns_store(__m256 acc, const int CB, float *out) {
    float a[8];
    _mm256_storeu_ps(a, acc);
    for (int j = 0; j < CB; j++) out[j] = a[j];
}
#endif

/* vec_dot_tile_<name>_<act> by a row kernel that takes one row and up to `cols` columns (4 or
 * 8, at most QGEMV_TILE_COLS_MAX; the kernel sizes its per-column state to match),
 * kernel(nb, row's blocks, columns' activations, act_stride, CB, out), CB a constant per call
 * (so an always-inline kernel is compiled once per column count); a single column goes row by
 * row through vec_dot_<name>_<act> (QGEMV_TILE_ONE_COLUMN).  More columns per pass share a
 * decode among more of them, at the cost of per-column sums that no longer fit in registers:
 * the kernels whose decode is costly (the IQ2/IQ3 grids, iq1_s, iq1_m, q2_K and q3_K) take 8
 * (benches/RESULTS.md) */
#define QGEMV_TILE_COLS_MAX 8
#define QGEMV_TILE_CASES_4(kernel, nb, x, a_, s, o)                                        \
    case 1: kernel(nb, x, a_, s, 1, o); break;                                              \
    case 2: kernel(nb, x, a_, s, 2, o); break;                                              \
    case 3: kernel(nb, x, a_, s, 3, o); break;                                              \
    default: kernel(nb, x, a_, s, 4, o); break;
#define QGEMV_TILE_CASES_8(kernel, nb, x, a_, s, o)                                        \
    case 1: kernel(nb, x, a_, s, 1, o); break;                                              \
    case 2: kernel(nb, x, a_, s, 2, o); break;                                              \
    case 3: kernel(nb, x, a_, s, 3, o); break;                                              \
    case 4: kernel(nb, x, a_, s, 4, o); break;                                              \
    case 5: kernel(nb, x, a_, s, 5, o); break;                                              \
    case 6: kernel(nb, x, a_, s, 6, o); break;                                              \
    case 7: kernel(nb, x, a_, s, 7, o); break;                                              \
    default: kernel(nb, x, a_, s, 8, o); break;
#define QGEMV_DEFINE_TILE_BY_COLS(name, act, kernel, block_values, cols)                      \
    QGEMV_DEFINE_TILE_BY_COLS_WITH(name, act, kernel, block_values, cols, QGEMV_TILE_ONE_COLUMN_OF)
#define QGEMV_TILE_ONE_COLUMN_OF(name, act, n, w, row_stride, nrows, a, ncols, out, out_stride) \
    QGEMV_TILE_ONE_COLUMN(vec_dot_##name##_##act, n, w, row_stride, nrows, a, ncols, out, out_stride)
/* the same with the format's own one-column statement (one_column: name, act, then
 * QGEMV_TILE_ONE_COLUMN's arguments after vec_dot; returning when it handled the call) */
#define QGEMV_DEFINE_TILE_BY_COLS_WITH(name, act, kernel, block_values, cols, one_column)     \
    static void vec_dot_tile_##name##_##act(int64_t n, const void *restrict w, int64_t row_stride, \
                                            int64_t nrows, const void *restrict a, int64_t act_stride, \
                                            int64_t ncols, float *restrict out, int64_t out_stride) { \
        one_column(name, act, n, w, row_stride, nrows, a, ncols, out, out_stride);           \
        for (int64_t r = 0; r < nrows; r++) {                                               \
            const block_##name *x = (const block_##name *)((const uint8_t *)w + r * row_stride); \
            for (int64_t c0 = 0; c0 < ncols; c0 += (cols)) {                                \
                const uint8_t *a_ = (const uint8_t *)a + c0 * act_stride;                   \
                float *o = out + r * out_stride + c0;                                       \
                switch (ncols - c0) {                                                       \
                QGEMV_TILE_CASES_##cols(kernel, n / (block_values), x, a_, act_stride, o)   \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }

/* The same for a q8_K row kernel whose decode is costly, with a second path past 8 columns:
 * `rows` rows (1, 2 or 4) are decoded at a time, QGEMV_DECODE_CHUNK / rows super-blocks of each
 * into L1 (decode(block, &dec[k]), dec a decoded_t[]), for up to QGEMV_WIDE_COLS columns that
 * columns(dec, ib0, nbc, y, CB, acc) takes 8 at a time with the kernel's own steps, so the bits
 * stay vec_dot's (before, each 8 columns decoded the row again: a quarter of the IQ grids' time
 * at batch 32).  Several rows a pass read each chunk of activations from L1 once per row rather
 * than from L2 (iq1_s, whose columns step is short: batch 32 8.1 -> 7.2 ms; the grids' longer
 * steps gain nothing).  columns() keeps 8 columns' accumulators in the lanes of one vector and
 * steps them by qgemv_columns_step_q8_K, as the kernel does.  Up to 8 columns
 * take the kernel in a function of its own: inlined beside the wide path, GCC's layout cost it
 * 5-15% at batch 4 and 8 (src/formats/iquants.h) */
#define QGEMV_WIDE_COLS 32
#define QGEMV_DECODE_CHUNK 16
#define QGEMV_DEFINE_VEC_DOT_AND_WIDE_TILE(name, kernel, decoded_t, decode, columns, rows)   \
    static float vec_dot_##name##_q8_K(int64_t n, const void *restrict w, const void *restrict a) { \
        float o;                                                                            \
        kernel(n / QK_K, (const block_##name *)w, (const uint8_t *)a, 0, 1, &o);            \
        return o;                                                                           \
    }                                                                                       \
    QGEMV_NEVER_INLINE void vec_dot_tile_narrow_##name(int64_t n, const void *restrict w, int64_t row_stride, \
                                                       int64_t nrows, const void *restrict a, int64_t act_stride, \
                                                       int64_t ncols, float *restrict out, int64_t out_stride) { \
        QGEMV_TILE_ONE_COLUMN(vec_dot_##name##_q8_K, n, w, row_stride, nrows, a, ncols, out, out_stride); \
        for (int64_t r = 0; r < nrows; r++) {                                               \
            const block_##name *x = (const block_##name *)((const uint8_t *)w + r * row_stride); \
            switch (ncols) { QGEMV_TILE_CASES_8(kernel, n / QK_K, x, (const uint8_t *)a, act_stride, out + r * out_stride) } \
        }                                                                                   \
    }                                                                                       \
    static void vec_dot_tile_##name##_q8_K(int64_t n, const void *restrict w, int64_t row_stride, \
                                           int64_t nrows, const void *restrict a, int64_t act_stride, \
                                           int64_t ncols, float *restrict out, int64_t out_stride) { \
        enum { R = (rows), CHUNK = QGEMV_DECODE_CHUNK / (rows) };                           \
        if (ncols <= QGEMV_TILE_COLS_MAX) {                                                 \
            vec_dot_tile_narrow_##name(n, w, row_stride, nrows, a, act_stride, ncols, out, out_stride); \
            return;                                                                         \
        }                                                                                   \
        const int64_t nb = n / QK_K;                                                        \
        for (int64_t r0 = 0; r0 < nrows; r0 += R) {                                         \
            const int nr = nrows - r0 < R ? (int)(nrows - r0) : R;                          \
            for (int64_t c0 = 0; c0 < ncols; c0 += QGEMV_WIDE_COLS) {                       \
                const int nc = ncols - c0 < QGEMV_WIDE_COLS ? (int)(ncols - c0) : QGEMV_WIDE_COLS; \
                const block_q8_K *y[QGEMV_WIDE_COLS];                                       \
                __m256 acc[R][QGEMV_WIDE_COLS / QGEMV_TILE_COLS_MAX];   /* columns in lanes */ \
                qgemv_tile_columns_q8_K((const uint8_t *)a + c0 * act_stride, act_stride, nc, y); \
                for (int rr = 0; rr < nr; rr++)                                             \
                    for (int g = 0; g < QGEMV_WIDE_COLS / QGEMV_TILE_COLS_MAX; g++) acc[rr][g] = _mm256_setzero_ps(); \
                for (int64_t ib0 = 0; ib0 < nb; ib0 += CHUNK) {                             \
                    const int64_t nbc = nb - ib0 < CHUNK ? nb - ib0 : CHUNK;                \
                    decoded_t dec[R][CHUNK];                                                \
                    for (int rr = 0; rr < nr; rr++) {                                       \
                        const block_##name *x = (const block_##name *)((const uint8_t *)w + (r0 + rr) * row_stride); \
                        for (int64_t k = 0; k < nbc; k++) {                                 \
                            QGEMV_PREFETCH_L1_STREAM(&x[ib0 + k], sizeof(x[0]));            \
                            decode(&x[ib0 + k], &dec[rr][k]);                               \
                        }                                                                   \
                    }                                                                       \
                    for (int g = 0; g < nc; g += QGEMV_TILE_COLS_MAX)                       \
                        for (int rr = 0; rr < nr; rr++)                                     \
                            switch (nc - g) { QGEMV_TILE_CASES_8(columns, dec[rr], ib0, nbc, y + g, \
                                                                 acc[rr] + g / QGEMV_TILE_COLS_MAX) } \
                }                                                                           \
                for (int rr = 0; rr < nr; rr++)                                             \
                    for (int g = 0; g < nc; g += QGEMV_TILE_COLS_MAX)                       \
                        qgemv_columns_store(acc[rr][g / QGEMV_TILE_COLS_MAX],               \
                                            nc - g < QGEMV_TILE_COLS_MAX ? nc - g : QGEMV_TILE_COLS_MAX, \
                                            out + (r0 + rr) * out_stride + c0 + g);         \
            }                                                                               \
        }                                                                                   \
    }

/* vec_dot_<name>_<act> as the one-column case of such a row kernel, and its tile: a batch then
 * gives vec_dot's bits by construction */
#define QGEMV_DEFINE_VEC_DOT_AND_TILE_BY_KERNEL(name, act, kernel, block_values, cols)        \
    static float vec_dot_##name##_##act(int64_t n, const void *restrict w, const void *restrict a) { \
        float o;                                                                            \
        kernel(n / (block_values), (const block_##name *)w, (const uint8_t *)a, 0, 1, &o);  \
        return o;                                                                           \
    }                                                                                       \
    QGEMV_DEFINE_TILE_BY_COLS(name, act, kernel, block_values, cols)
