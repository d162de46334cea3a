/* Element formats (block size 1): f32, f16, bf16, f64 and the integers.
 *
 * dequant_row_<name>: x -> float32, exact where float32 holds the value, otherwise rounded
 * to nearest even (f64, i32, i64), as numpy's astype(float32).
 * vec_dot_<name>_<name>: the float formats multiply against activations of their own type,
 * accumulating in float32 (ggml_vec_dot_f16 / _bf16 / _f32).
 * vec_dot_tile_<name>_<name> (AVX2): a batch of columns against a slab of rows, each (row,
 * column) running vec_dot's accumulators in vec_dot's order, so the tile gives vec_dot's bits.
 * On the AVX-512 variants f32, f16 and bf16 take another order, their vec_dot and tiles
 * included: src/formats/float_panels.h; here the other variants' products.
 */

/* ---------------------------------------------------------------- dequantize */

static void dequant_row_f32(const void *restrict src, float *restrict dst, int64_t n) {
    memcpy(dst, src, (size_t)n * sizeof(float));
}

static void dequant_row_f16(const void *restrict src, float *restrict dst, int64_t n) {
    const uint16_t *x = (const uint16_t *)src;
    int64_t i = 0;
#if defined(QGEMV_AVX2)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i))));
#endif
    for (; i < n; i++) dst[i] = qgemv_fp16_to_fp32(x[i]);
}

static void dequant_row_bf16(const void *restrict src, float *restrict dst, int64_t n) {
    const uint16_t *x = (const uint16_t *)src;
    uint32_t *d = (uint32_t *)dst;   /* bf16 is the high half of a float32: a shift, exact */
    for (int64_t i = 0; i < n; i++) d[i] = (uint32_t)x[i] << 16;
}

#define QGEMV_DEFINE_DEQUANT_ROW_CAST(name, ctype)                                         \
    static void dequant_row_##name(const void *restrict src, float *restrict dst, int64_t n) { \
        const ctype *x = (const ctype *)src;                                               \
        for (int64_t i = 0; i < n; i++) dst[i] = (float)x[i];                              \
    }
QGEMV_DEFINE_DEQUANT_ROW_CAST(f64, double)
QGEMV_DEFINE_DEQUANT_ROW_CAST(i8, int8_t)
QGEMV_DEFINE_DEQUANT_ROW_CAST(i16, int16_t)
QGEMV_DEFINE_DEQUANT_ROW_CAST(i32, int32_t)
QGEMV_DEFINE_DEQUANT_ROW_CAST(i64, int64_t)

/* ---------------------------------------------------------------- dot products */

#if defined(QGEMV_AVX2) && !defined(QGEMV_AVX512)
/* The float formats' SIMD dot on AVX2 (the AVX-512 variants' f32, f16 and bf16:
 * src/formats/float_panels.h), over the first nv = n / 64 * 64 values (a scalar tail after):
 * two accumulators of 8 lanes, acc h through the steps of unit h of each pair of units (below:
 * f32 and bf16 the two halves of the values, f16 lines), and the sum hsum(acc0 + acc1).  A step
 * is 16 values, two madds, part(p, 0) then part(p, 1): values p[8 j .. 8 j + 7] for f32 and
 * f16, and for bf16 the even (j = 0) or odd values of p[0..16), which one load widens with a
 * shift or a mask and no shuffle.  A tile runs vec_dot's madds in vec_dot's order: a batch
 * accumulator after accumulator (pass h: acc h's units), one accumulator per (row, column)
 * live, in blocks of rows x columns; a single column of f16 both side by side (below). */
typedef __m256 qgemv_fvec;
#define qgemv_fvec_zero _mm256_setzero_ps
#define qgemv_fvec_fmadd _mm256_fmadd_ps
#define qgemv_fvec_add _mm256_add_ps
#define qgemv_fvec_hsum qgemv_hsum_f32x8
static inline __m256 qgemv_part_f32(const float *p, int j) { return _mm256_loadu_ps(p + 8 * j); }
static inline __m256 qgemv_part_f16(const uint16_t *p, int j) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + 8 * j)));
}
/* bf16 is the high half of a float32: a 32-bit lane holds value 2 k (low) and 2 k + 1 (high) */
static inline __m256 qgemv_part_bf16(const uint16_t *p, int j) {
    const __m256i v = _mm256_loadu_si256((const __m256i *)p);
    return _mm256_castsi256_ps(j ? _mm256_and_si256(v, _mm256_set1_epi32((int)0xffff0000u)) : _mm256_slli_epi32(v, 16));
}
#define QGEMV_FLOAT_STEP 16   /* values a step: two parts */
/* The units: f16's are lines (64 bytes, 32 values), so a row is one read stream, which a single column
 * reads two rows at a time (Zen 4, QGEMV_ISA=avx2, builds alternating, 1 thread: 4096 x 4096
 * 1.08 -> 0.86 ms, 14336 x 4096 out of cache 4.29 -> 3.95, 0.91-0.93x -> 1.00-1.01x ggml; the
 * halves' 4 rows side by side made 8 streams, 2 rows of halves 4, as slow).  f32's and bf16's
 * are the halves: on lines their batches ran 3-40% slower (f32 4096 x 4096 batch 32 13.0 ->
 * 16.8-18 ms, bf16 GCC spilling its sums), and bf16's single column ran 1.02-1.11x ggml there,
 * 0.87-0.93x here: left. */
#define QGEMV_FLOAT_LINE_UNITS_f32 0
#define QGEMV_FLOAT_LINE_UNITS_f16 1
#define QGEMV_FLOAT_LINE_UNITS_bf16 0
/* f16's widenings (vcvtph2ps) go to fresh registers, which GCC had hoisted from the next part
 * into the 16 a 4 x 3 block fills, and kept 2 of its 12 sums on the stack (a store and a
 * reload a step on their chains): its sums are pinned in registers at each part's end.  Zen 3,
 * AVX2, C harness of the tile, 4096 x 4096, 1 thread, mins: batch 32 19.3 -> 16.3 ms (f16
 * columns 17.0 -> 14.0), batch 8 4.68 -> 4.33; through QMatrix, 2 threads, builds alternating,
 * medians of 4: batch 8 3.7 -> 2.4 ms, batch 32 10.0 -> 8.8 (ggml 0.25.3: 2.0, 7.0).  f32's
 * block keeps its sums in registers without it; bf16's ran no faster with it (a noisy host:
 * 24 -> 29 ms at batch 32). */
#define QGEMV_FLOAT_PINS_f32 0
#define QGEMV_FLOAT_PINS_f16 1
#define QGEMV_FLOAT_PINS_bf16 0
#define qgemv_float_unit(name, T, nv) (QGEMV_FLOAT_LINE_UNITS_##name ? (int64_t)(64 / sizeof(T)) : (nv) / 2)
/* one step of values at p into acc: both parts, in order */
#define QGEMV_FLOAT_STEP_INTO(name, acc, x, y, p)                                          \
    for (int j_ = 0; j_ < 2; j_++)                                                         \
        acc = qgemv_fvec_fmadd(qgemv_part_##name((x) + (p), j_), qgemv_part_##name((y) + (p), j_), acc)
#define QGEMV_DOT_FLOAT_SIMD(T, name, x, y)                                                \
    const int64_t nv_ = n / 64 * 64, unit_ = qgemv_float_unit(name, T, nv_);               \
    qgemv_fvec acc0 = qgemv_fvec_zero(), acc1 = qgemv_fvec_zero();                         \
    for (int64_t p_ = 0; p_ < nv_; p_ += 2 * unit_)   /* acc h: unit h of each pair */     \
        for (int64_t u_ = p_; u_ < p_ + unit_; u_ += QGEMV_FLOAT_STEP) {                   \
            /* f16 and bf16: both units' lines a stream ahead; f32 reads faster on the     \
             * hardware's prefetch alone */                                                \
            if (sizeof(T) < 4 && !((u_ - p_) & 31)) {                                      \
                QGEMV_PREFETCH_LINE((x) + u_);                                             \
                QGEMV_PREFETCH_LINE((x) + u_ + unit_);                                     \
            }                                                                              \
            QGEMV_FLOAT_STEP_INTO(name, acc0, x, y, u_);                                   \
            QGEMV_FLOAT_STEP_INTO(name, acc1, x, y, u_ + unit_);                           \
        }                                                                                  \
    sum = qgemv_fvec_hsum(qgemv_fvec_add(acc0, acc1));                                     \
    i = nv_;
#endif

/* sum a[i] b[i], float32 (the act="f32" products' dot): AVX-512 one accumulator of 16 lanes
 * through the first n / 64 * 64 values front to back, then its lanes' sum and the scalar tail;
 * AVX2 QGEMV_DOT_FLOAT_SIMD's order; else 8 lanes */
static float dot_f32(int64_t n, const float *restrict a, const float *restrict b) {
    int64_t i = 0;
    float sum = 0.0f;
#if defined(QGEMV_AVX512)
    __m512 acc = _mm512_setzero_ps();
    for (const int64_t nv = n / 64 * 64; i < nv; i += 32) {
        acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc);
        acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), acc);
    }
    sum = qgemv_hsum_f32x8(_mm256_add_ps(_mm512_castps512_ps256(acc), _mm512_extractf32x8_ps(acc, 1)));
#elif defined(QGEMV_AVX2)
    QGEMV_DOT_FLOAT_SIMD(float, f32, a, b)
#else
    float acc[8] = {0};
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) acc[k] += a[i + k] * b[i + k];
    for (int k = 0; k < 8; k++) sum += acc[k];
#endif
    for (; i < n; i++) sum += a[i] * b[i];
    return sum;
}

#if !defined(QGEMV_AVX512)   /* AVX-512: the panels' order, src/formats/float_panels.h */
static float vec_dot_f32_f32(int64_t n, const void *restrict w, const void *restrict a) {
    return dot_f32(n, (const float *)w, (const float *)a);
}
#endif

/* sum w[i] a[i] over f16 (or bf16) pairs, each widened exactly to float32 */
#define QGEMV_DEFINE_VEC_DOT_HALF(name, to_f32)                                            \
    static float vec_dot_##name##_##name(int64_t n, const void *restrict w, const void *restrict a) { \
        const uint16_t *x = (const uint16_t *)w, *y = (const uint16_t *)a;                 \
        int64_t i = 0;                                                                     \
        float sum = 0.0f;                                                                  \
        QGEMV_VEC_DOT_HALF_SIMD(name, to_f32)                                              \
        for (; i < n; i++) sum += to_f32(x[i]) * to_f32(y[i]);                             \
        return sum;                                                                        \
    }

#if defined(QGEMV_AVX2)
#define QGEMV_VEC_DOT_HALF_SIMD(name, to_f32) QGEMV_DOT_FLOAT_SIMD(uint16_t, name, x, y)
#else   /* portable: one value at a time */
#define QGEMV_VEC_DOT_HALF_SIMD(name, to_f32)                                              \
    float acc[8] = {0};                                                                    \
    for (; i + 8 <= n; i += 8)                                                             \
        for (int k = 0; k < 8; k++) acc[k] += to_f32(x[i + k]) * to_f32(y[i + k]);         \
    for (int k = 0; k < 8; k++) sum += acc[k];
#endif

#if !defined(QGEMV_AVX512)
QGEMV_DEFINE_VEC_DOT_HALF(f16, qgemv_fp16_to_fp32)
QGEMV_DEFINE_VEC_DOT_HALF(bf16, qgemv_bf16_to_fp32)
#endif

static inline float qgemv_f32_itself(float v) { return v; }

/* ---------------------------------------------------------------- tiles (src/tiles.h)
 * AVX2: a batch against a slab of rows, by blocks of 4 rows x 3 columns: a block runs units 0 of
 * the rows, then units 1, with one accumulator per (row, column) in registers: 12 accumulators, 7
 * loads (f16, bf16: widenings) per 12 fmas, which fills the 16 registers exactly.  That holds
 * only with the prefetches outside the loop that does the work (one per 64-byte line, its own
 * loop level): with a prefetch branch inside it, GCC kept 3 of f16's 12 accumulators on the
 * stack, and f16 and bf16 had to take 2 columns.  C harness, 4096 x 4096, 2 threads, 2 -> 3
 * columns: f16 batch 32 11.4-12.2 -> 9.3-9.8 ms, batch 8 3.0-3.6 -> 2.7-2.8 ms; bf16 batch 32
 * 12.7-15.7 -> 11.8 ms; f32 batch 32 15.6-17.5 -> 14.7-15.8 ms.  The 4 rows, prefetched by
 * their first column block, stay in L1 while they meet every column block; the later blocks
 * share out the next 4 rows among them and prefetch those into L2 a line as they read one, so
 * the memory streams while the cache serves (the first block alone left it idle three quarters
 * of the time at batch 8).  A single column takes the same blocks, 4 rows x 1 column (f16: 2
 * rows, both units side by side, 4 chains; units above): vec_dot row after row waits on its 2
 * madds a step into the same accumulator, 4 rows' chains do not;
 * f32's rows ask for their lines as vec_dot's streams do, in L2 far ahead and in L1 near, which
 * f16 and bf16 ran slower in cache (Intel Xeon, QMatrix with QGEMV_ISA=avx2, builds alternating,
 * 4096 x 4096 1 thread: f16 1.49-1.60 -> 1.17-1.20 ms (both hints 1.31-1.32), bf16 1.64 ->
 * 1.17, f32 2.42-2.56 -> 2.42; 14336 x 4096 out of cache, 1 / 2 threads: f16 15.4-15.8 ->
 * 14.5-14.9 / 31.0-31.6 -> 29.9-30.3 GB/s, f32 14.7-15.1 -> 17.6-17.8 / 29.8-30.1 -> 34.2-35.2).
 * The floats' single column comes here on every CPU, in cache and out (gemv_tiles in their
 * table rows, qgemv/_formats.py); where the CPU's prefetcher streams alone
 * (qgemv_prefetch_one_column off: a Zen 4) it asks for no lines: Zen 4, QGEMV_ISA=avx2, builds
 * alternating, 14336 x 4096 out of cache, 1 / 2 threads: f16 6.9-7.0 -> 5.6-5.7 / 3.93-4.06 ->
 * 3.72-3.77 ms, bf16 7.4-7.5 -> 5.9-6.2 / 3.94-4.40 -> 3.39-3.56, f32 1.03-1.1x / even; in cache
 * f16 and bf16 1.04-1.13x, f32 even.
 * The fmas, the sum and the scalar tail of every (row, column) are vec_dot's: the tile gives
 * vec_dot's bits.  (The AVX-512 variants: src/formats/float_panels.h.) */
#if defined(QGEMV_AVX2) && !defined(QGEMV_AVX512)
#define QGEMV_FLOAT_AHEAD 512    /* values a row block's first column block prefetches ahead */
#define QGEMV_FLOAT_SPAN 512     /* values of line units a batch's pass takes before the other's */
enum { QGEMV_FLOAT_RB = 4, QGEMV_FLOAT_CB = 3 };   /* 4 x 3 accumulators + 3 + 1 of 16 registers */
/* float_block_<bname>: RB rows of T (widened by to_f32) x CB columns of CT, read as colname's
 * parts (col_to_f32 for the scalar tail): the GGUF activations (CT = T) or f16's columns
 * widened once to float32 (QGEMV_FLOAT_WIDE_COLS, below) */
#define QGEMV_DEFINE_FLOAT_BLOCK(bname, name, T, to_f32, CT, colname, col_to_f32)               \
    QGEMV_ALWAYS_INLINE void float_block_##bname(int64_t n, const T *const x[QGEMV_FLOAT_RB], \
                                                const CT *const y[QGEMV_FLOAT_CB], const int RB, const int CB, \
                                                const int prefetch, const T *const next[QGEMV_FLOAT_RB], \
                                                const int nnext, float *out, int64_t out_stride) { \
        const int64_t nv = n / 64 * 64, unit = qgemv_float_unit(name, T, nv);              \
        const int64_t line = 64 / (int64_t)sizeof(T), chunk = line;   /* chunk | unit */   \
        /* a single column runs both accumulators side by side, a batch one after the other */ \
        const int NP = CB == 1 && QGEMV_FLOAT_LINE_UNITS_##name ? 2 : 1;                   \
        qgemv_fvec park[2][QGEMV_FLOAT_RB * QGEMV_FLOAT_CB];                               \
        for (int k = 0; k < NP * RB * CB; k++) park[0][k] = park[1][k] = qgemv_fvec_zero(); \
        /* a batch's passes over line units take QGEMV_FLOAT_SPAN values at a time, sums   \
         * parked between, so the second finds the first's lines in L1 (f16 batch 32, 2     \
         * threads, 10.6-11.0 -> 9.1-10.1 ms; without, 3-9% slower than the halves) */      \
        const int64_t span = NP == 2 || !QGEMV_FLOAT_LINE_UNITS_##name ? nv : QGEMV_FLOAT_SPAN; \
        for (int64_t k0 = 0; k0 < nv; k0 += span)   /* a span, then its passes: */         \
        for (int h0 = 0; h0 < 2; h0 += NP) {        /* accumulators h0 .. h0 + NP - 1 */   \
            /* (h, r, c)'s chain in s[(h RB + r) CB + c]: NP RB CB <= 12 (CB = 1 when NP = 2) */ \
            qgemv_fvec s[QGEMV_FLOAT_RB * QGEMV_FLOAT_CB];                                 \
            for (int k = 0; k < NP * RB * CB; k++) s[k] = park[h0][k];                     \
            for (int64_t p0 = k0; p0 < (nv - k0 < span ? nv : k0 + span); p0 += 2 * unit) \
                for (int64_t i0 = p0 + h0 * unit; i0 < p0 + (h0 + 1) * unit; i0 += chunk) { \
                    /* a prefetch per 64 bytes, outside the loop that does the work: a     \
                     * branch in it cost f16's 4 x 3 blocks 3 of their accumulators; the   \
                     * first column block's rows AHEAD values on, the others' share of the \
                     * next rows */                                                        \
                    for (int h = 0; h < NP; h++) {                                         \
                        const int64_t l = i0 + h * unit;                                   \
                        if (prefetch == 2)   /* f32's single column: both stream hints */  \
                            for (int r = 0; r < RB; r++) QGEMV_PREFETCH_LINE(x[r] + l);    \
                        else if (prefetch)                                                 \
                            for (int r = 0; r < RB; r++)                                   \
                                _mm_prefetch((const char *)(x[r] + l + QGEMV_FLOAT_AHEAD), _MM_HINT_T0); \
                        else                                                               \
                            for (int k = 0; k < nnext; k++) _mm_prefetch((const char *)(next[k] + l), _MM_HINT_T1); \
                    }                                                                      \
                    for (int64_t q = 0; q < chunk; q += QGEMV_FLOAT_STEP)                  \
                        for (int h = 0; h < NP; h++)   /* accumulator h0 + h */            \
                            for (int j = 0; j < 2; j++) {                                  \
                                const int64_t i = i0 + h * unit + q;                       \
                                qgemv_fvec av[QGEMV_FLOAT_CB];                             \
                                for (int c = 0; c < CB; c++) {                             \
                                    av[c] = qgemv_part_##colname(y[c] + i, j);             \
                                    QGEMV_IN_REGISTER(av[c]);                              \
                                }                                                          \
                                for (int r = 0; r < RB; r++) {                             \
                                    const qgemv_fvec wv = qgemv_part_##name(x[r] + i, j);  \
                                    for (int c = 0; c < CB; c++) {                         \
                                        qgemv_fvec *acc = &s[(h * RB + r) * CB + c];       \
                                        *acc = qgemv_fvec_fmadd(wv, av[c], *acc);          \
                                    }                                                      \
                                }                                                          \
                                if (QGEMV_FLOAT_PINS_##name)   /* (above) */               \
                                    for (int k = 0; k < NP * RB * CB; k++) QGEMV_IN_REGISTER(s[k]); \
                            }                                                              \
                }                                                                          \
            for (int k = 0; k < NP * RB * CB; k++) park[h0][k] = s[k];                     \
        }                                                                                  \
        for (int r = 0; r < RB; r++)                                                       \
            for (int c = 0; c < CB; c++) {   /* hsum(acc 0 + acc 1) */                     \
                float sum = qgemv_fvec_hsum(NP == 2 ? qgemv_fvec_add(park[0][r], park[0][RB + r]) \
                                                    : qgemv_fvec_add(park[0][r * CB + c], park[1][r * CB + c])); \
                for (int64_t i = nv; i < n; i++) sum += to_f32(x[r][i]) * col_to_f32(y[c][i]); \
                out[r * out_stride + c] = sum;                                             \
            }                                                                              \
    }
/* float_tile_<name>: the tile over nrows rows of w against ncols columns, column c at cols +
 * (c / 16) group_stride + (c % 16) col_stride (the GGUF activations: act_stride and 16 times it),
 * as T (wide 0) or widened to float32 (wide 1: f16's) */
#define QGEMV_DEFINE_FLOAT_TILE(name, T, to_f32)                                           \
    QGEMV_DEFINE_FLOAT_BLOCK(name, name, T, to_f32, T, name, to_f32)                       \
    QGEMV_FLOAT_WIDE_BLOCK_##name                                                          \
    QGEMV_ALWAYS_INLINE void float_tile_##name(int64_t n, const void *restrict w, int64_t row_stride, int64_t nrows, \
                                              const uint8_t *restrict cols, int64_t col_stride, int64_t group_stride, \
                                              const int wide, int64_t ncols, float *restrict out, int64_t out_stride) { \
        const int64_t passes = (ncols + QGEMV_FLOAT_CB - 1) / QGEMV_FLOAT_CB;              \
        /* the first block's hints: a batch's near L1 one; a single column's per CPU (above) */ \
        const int first = ncols > 1 ? 1 : !qgemv_prefetch_one_column ? 0 : sizeof(T) == 4 ? 2 : 1; \
        /* a single column's block b holds rows b, b + q, b + 2 q, b + 3 q (q: a quarter of   \
         * the tile's rows), so each of its 4 streams runs on through a quarter, where 4 rows   \
         * side by side restarted 3 streams every 4 rows (Zen 4, QGEMV_ISA=avx2, builds          \
         * alternating, 1 thread: 57344 x 768 out of cache f16 8.1-8.6 -> 5.2 ms, bf16 10.0 ->  \
         * 6.1, f32 12.9 -> 8.7, 2 threads f16 4.8 -> 3.7; 14336 x 4096 f16 6.1 -> 5.5; in cache \
         * 4096 x 4096 f16 1.67 -> 1.33, f32 3.00 -> 2.60) */                                   \
        /* f16's single column: 2 rows, 2 streams (its units, above) */                    \
        const int rows = ncols > 1 || !QGEMV_FLOAT_LINE_UNITS_##name ? QGEMV_FLOAT_RB : 2;  \
        const qgemv_walk walk = qgemv_walk_of(nrows, rows, ncols == 1, QGEMV_FLOAT_RB);   \
        const int64_t rstride = walk.stride;                                               \
        for (int64_t r = 0; r < walk.steps; r += walk.step) {   /* rows r + k rstride */   \
            const int64_t left = qgemv_walk_items(nrows, r, walk);                          \
            const int RB = left >= rows ? rows : (int)left;                                \
            const T *x[QGEMV_FLOAT_RB];                                                    \
            for (int k = 0; k < QGEMV_FLOAT_RB; k++)                                       \
                x[k] = (const T *)((const uint8_t *)w + (r + (k < RB ? k : RB - 1) * rstride) * row_stride); \
            for (int64_t p = 0; p < passes; p++) {                                         \
                /* the columns in passes of near-equal counts (8 as 2 + 3 + 3, not 3 + 3 + \
                 * 2); block p > 0 prefetches its share of the next rows (past the tile's   \
                 * end too: the next tile's first rows) into L2, a line as it reads one */ \
                const int64_t c = p * ncols / passes;                                      \
                const int k0 = p ? (int)((p - 1) * QGEMV_FLOAT_RB / (passes - 1)) : 0;     \
                const int k1 = p ? (int)(p * QGEMV_FLOAT_RB / (passes - 1)) : 0;           \
                const T *next[QGEMV_FLOAT_RB];                                             \
                for (int k = k0; k < k1; k++) next[k - k0] = (const T *)((const uint8_t *)w + (r + RB + k) * row_stride); \
                const int CB = (int)((p + 1) * ncols / passes - c);                        \
                const T *y[QGEMV_FLOAT_CB];                                                \
                const float *yw[QGEMV_FLOAT_CB];                                           \
                for (int k = 0; k < QGEMV_FLOAT_CB; k++) {                                 \
                    const int64_t cc = c + (k < CB ? k : CB - 1);                          \
                    const uint8_t *col = cols + cc / 16 * group_stride + cc % 16 * col_stride; \
                    y[k] = (const T *)col;                                                 \
                    yw[k] = (const float *)col;                                            \
                }                                                                          \
                float *o = out + r * out_stride + c;   /* rows rstride apart */            \
                (void)yw;                                                                  \
                if (wide) {                                                                \
                    switch (RB * 8 + CB) {                                                 \
                    QGEMV_FLOAT_WIDE_CASES_##name(yw)                                      \
                    }                                                                      \
                } else {                                                                   \
                    switch (RB * 8 + CB) {  /* (RB, CB) as constants, each block compiled once */ \
                    QGEMV_FLOAT_CASES_4x3(name, y)                                         \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    static void vec_dot_tile_##name##_##name(int64_t n, const void *restrict w, int64_t row_stride, \
                                             int64_t nrows, const void *restrict a, int64_t act_stride, \
                                             int64_t ncols, float *restrict out, int64_t out_stride) { \
        float_tile_##name(n, w, row_stride, nrows, (const uint8_t *)a, act_stride, 16 * act_stride, 0, ncols, \
                          out, out_stride);                                                \
    }
#define QGEMV_FLOAT_BLOCK_CASE(bname, ys, rb, cb)                                            \
    case rb * 8 + cb: float_block_##bname(n, x, ys, rb, cb, c ? 0 : first, next, k1 - k0, o, rstride * out_stride); break;
/* the blocks a tile can meet: 1-4 rows x 1-3 columns */
#define QGEMV_FLOAT_CASES_ROW_3(bname, ys, rb) QGEMV_FLOAT_BLOCK_CASE(bname, ys, rb, 3) \
    QGEMV_FLOAT_BLOCK_CASE(bname, ys, rb, 2) QGEMV_FLOAT_BLOCK_CASE(bname, ys, rb, 1)
#define QGEMV_FLOAT_CASES_4x3(bname, ys) QGEMV_FLOAT_CASES_ROW_3(bname, ys, 4) QGEMV_FLOAT_CASES_ROW_3(bname, ys, 3) \
    QGEMV_FLOAT_CASES_ROW_3(bname, ys, 2) QGEMV_FLOAT_CASES_ROW_3(bname, ys, 1)
/* f16's blocks against widened columns (below; f32 takes its activations as they are, bf16 as
 * its GGUF bf16) */
#define QGEMV_FLOAT_WIDE_BLOCK_f32
#define QGEMV_FLOAT_WIDE_BLOCK_bf16
#define QGEMV_FLOAT_WIDE_BLOCK_f16 QGEMV_DEFINE_FLOAT_BLOCK(f16_wide, f16, uint16_t, qgemv_fp16_to_fp32, float, f32, qgemv_f32_itself)
#define QGEMV_FLOAT_WIDE_CASES_f32(ys)
#define QGEMV_FLOAT_WIDE_CASES_bf16(ys)
#define QGEMV_FLOAT_WIDE_CASES_f16(ys) QGEMV_FLOAT_CASES_4x3(f16_wide, ys)
QGEMV_DEFINE_FLOAT_TILE(f32, float, qgemv_f32_itself)
QGEMV_DEFINE_FLOAT_TILE(f16, uint16_t, qgemv_fp16_to_fp32)
QGEMV_DEFINE_FLOAT_TILE(bf16, uint16_t, qgemv_bf16_to_fp32)

/* f16 batches from their columns widened to float32 once per product (the packed columns'
 * driver, _matmul_packed in qgemv/_kernels.pyx: 16 columns a group, QGEMV_FLOAT_WIDE_COLS(n)
 * floats apart), so a block's 3 columns are plain loads and only its 4 rows are widened: 4
 * vcvtph2ps (2 operations each) per 12 fmas instead of 7; the same exact values in the same
 * fmas, so the same bits.  Intel Xeon, 4096 x 4096 through
 * QMatrix, 2 threads, builds alternating: QGEMV_ISA=avxvnni batch 8 2.14-2.15 -> 1.90-2.00 ms,
 * batch 32 8.0-8.25 -> 7.19-7.27; avx2 2.11-2.18 -> 1.97-1.98, 8.08-8.38 -> 7.16-7.56.  bf16's
 * widening is one shift or mask: its columns widened (in its parts' order) ran 1.05x in a C
 * loop and even or slower through QMatrix, so it keeps its bf16 columns.
 * Where the CPU runs vcvtph2ps beside its fmas (qgemv_widen_f16 off: an AMD's, qgemv/_dispatch.py)
 * the columns stay f16, copied to the same places: the 7 widenings cost nothing there and the
 * columns half the bytes.  Zen 3 (AVX2 only), C harness of the tile, 4096 x 4096, 1 thread,
 * medians: batch 32 17.9-21.6 ms widened, 14.4-15.1 as f16 (ggml 0.25.3 13.4); batch 8 4.9-5.3
 * either way; widened 16 columns at a time, 18.3-19.8; through QMatrix, the fastest calls of 6
 * processes each, batch 32, 1 / 2 threads: 17.8 / 10.7 -> 14.6 / 9.0 ms (processes spread over
 * 15-27 ms either way, a loud host).  Both read the flag, set between products. */
#define QGEMV_FLOAT_WIDE_COLS(n) (((n) + 255) / 256 * 256)
#define QGEMV_PACKED_NBYTES_f16_wide (16 * 256 * sizeof(float))
static void pack_columns_f16_wide(int64_t n, const void *restrict a, int64_t act_stride, int64_t ncols, int64_t g,
                                  void *restrict packed) {
    const int nc = ncols - 16 * g < 16 ? (int)(ncols - 16 * g) : 16;
    for (int c = 0; c < nc; c++) {
        const uint8_t *col = (const uint8_t *)a + (16 * g + c) * act_stride;
        float *to = (float *)packed + c * QGEMV_FLOAT_WIDE_COLS(n);
        if (qgemv_widen_f16)
            dequant_row_f16(col, to, n);
        else
            memcpy(to, col, (size_t)n * sizeof(uint16_t));
    }
}
static void packed_tile_f16(int64_t n, const void *restrict w, int64_t row_stride, int64_t nrows, const void *restrict packed,
                            int64_t ncols, float *restrict out, int64_t out_stride) {
    const int64_t col_stride = QGEMV_FLOAT_WIDE_COLS(n) * (int64_t)sizeof(float);
    float_tile_f16(n, w, row_stride, nrows, (const uint8_t *)packed, col_stride, 16 * col_stride, qgemv_widen_f16, ncols,
                   out, out_stride);
}
#define QGEMV_PACKED_TILES_ELEMENTS(X) X(f16, 2, f16_wide)
#endif
#ifndef QGEMV_PACKED_TILES_ELEMENTS
#define QGEMV_PACKED_TILES_ELEMENTS(X)
#endif
#if defined(QGEMV_AVX2)   /* AVX-512's from float_panels.h */
#define QGEMV_TILES_ELEMENTS(X) X(f32, f32) X(f16, f16) X(bf16, bf16)
#else
#define QGEMV_TILES_ELEMENTS(X)   /* portable: the generic tiles (src/tiles.h) */
#endif
