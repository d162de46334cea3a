/* Element formats (block size 1): f32, f16, bf16, f64 and the integers.
 *
 * dequant_row_<name>: x -> float32, exact where float32 holds the value, otherwise rounded
 * to nearest even (f64, i32, i64), as numpy's astype(float32).
 * vec_dot_<name>_<name>: the float formats multiply against activations of their own type,
 * accumulating in float32 (ggml_vec_dot_f16 / _bf16 / _f32).
 * vec_dot_tile_<name>_<name> (AVX2): a batch of columns against a slab of rows with each
 * (row, column) keeping vec_dot's two accumulators, so the tile gives vec_dot's bits.
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

#if defined(QGEMV_AVX2)
/* The float formats' SIMD dot, over the first nv = n / 64 * 64 values (a scalar tail after),
 * 2 L values a step in two fmas, part(p, 0) into acc0 and part(p, 1) into acc1, and the sum is
 * hsum(acc0 + acc1).  A vector holds L = 8 floats (AVX2) or 16 (AVX-512); part(p, j) is values
 * p[L j .. L j + L - 1] for f32 and f16, and for bf16 the even (j = 0) or odd values of
 * p[0..2 L), which one load widens with a shift or a mask and no shuffle.  On AVX512_BF16 a
 * bf16 step is 64 values: part(p, j) is p[32 j .. 32 j + 31] as stored, and vdpbf16ps adds its
 * 32 products into the accumulator's 16 lanes, in pairs (ggml's AVX512_BF16 vec_dot: twice
 * fma's products an instruction, and no widening).
 *   The order of the steps is the variant's (QGEMV_FLOAT_HALVES):
 *   - AVX2, halves: acc0 steps through the first half of the values and acc1 through the second
 *     (both parts of a step into one accumulator).  Two read streams kept a row at memory speed
 *     on the Zen 3 these kernels were measured on, and a tile then needs one accumulator per
 *     (row, column), half after half.
 *   - AVX-512, front to back, one read stream: two streams ran 15-30% slower on this Zen 4 (C
 *     harness, 64 MiB of f32 rows: 18-20 against 23-28 GB/s), and so did a software prefetch.
 *     A tile keeps both accumulators per (row, column).
 * Either way a tile runs vec_dot's fmas in vec_dot's order, in blocks of rows x columns
 * (below).  nv is a multiple of 64 so that each half is whole 64-byte lines of 16-bit values
 * and whole steps (the tile's loop). */
#if defined(QGEMV_AVX512)
typedef __m512 qgemv_fvec;
#define QGEMV_FVEC_LANES 16
#define qgemv_fvec_zero _mm512_setzero_ps
#define qgemv_fvec_fmadd _mm512_fmadd_ps
#define qgemv_fvec_add _mm512_add_ps
static inline float qgemv_fvec_hsum(__m512 v) {
    return qgemv_hsum_f32x8(_mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1)));
}
static inline __m512 qgemv_part_f32(const float *p, int j) { return _mm512_loadu_ps(p + 16 * j); }
static inline __m512 qgemv_part_f16(const uint16_t *p, int j) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p + 16 * j)));
}
#if defined(QGEMV_AVX512_BF16)
/* AVX512_BF16: a bf16 part is 32 values as stored, and vdpbf16ps adds lane k's two products,
 * w[2k+1] a[2k+1] then w[2k] a[2k], each exact in float32, into the accumulator (subnormal
 * inputs read as 0, a subnormal sum is flushed to 0) */
#define QGEMV_BF16_DPBF16 1
typedef __m512bh qgemv_vec_bf16;
#define QGEMV_STEP_bf16 64
static inline __m512bh qgemv_part_bf16(const uint16_t *p, int j) {
    return (__m512bh)_mm512_loadu_si512((const void *)(p + 32 * j));
}
static inline __m512 qgemv_madd_bf16(__m512bh w, __m512bh a, __m512 acc) { return _mm512_dpbf16_ps(acc, w, a); }
#else
/* bf16 is the high half of a float32: a 32-bit lane holds value 2 k (low) and 2 k + 1 (high) */
static inline __m512 qgemv_part_bf16(const uint16_t *p, int j) {
    const __m512i v = _mm512_loadu_si512((const void *)p);
    return _mm512_castsi512_ps(j ? _mm512_and_si512(v, _mm512_set1_epi32((int)0xffff0000u)) : _mm512_slli_epi32(v, 16));
}
#endif
#else
typedef __m256 qgemv_fvec;
#define QGEMV_FVEC_LANES 8
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
#endif
#define QGEMV_FLOAT_STEP (2 * QGEMV_FVEC_LANES)   /* values a step: two parts */
/* per format: the vector a part loads, the multiply-add of a part into an accumulator, and
 * the values a step takes (bf16 on AVX512_BF16 differs, above) */
typedef qgemv_fvec qgemv_vec_f32;
typedef qgemv_fvec qgemv_vec_f16;
#define qgemv_madd_f32 qgemv_fvec_fmadd
#define qgemv_madd_f16 qgemv_fvec_fmadd
#define QGEMV_STEP_f32 QGEMV_FLOAT_STEP
#define QGEMV_STEP_f16 QGEMV_FLOAT_STEP
#if !defined(QGEMV_BF16_DPBF16)
typedef qgemv_fvec qgemv_vec_bf16;
#define qgemv_madd_bf16 qgemv_fvec_fmadd
#define QGEMV_STEP_bf16 QGEMV_FLOAT_STEP
#endif
/* AVX-512: vec_dot's accumulators (AVX2: one per half, QGEMV_FLOAT_HALVES).  One chain of
 * madds whose latency (fma 4 cycles, vdpbf16ps 6, on this Zen 4) still outruns a thread's
 * memory: f32 64 bytes a madd, bf16 in vdpbf16ps 64; two where one would not: f16 and
 * widened bf16, 32 bytes a madd (one chain: 8 bytes a cycle, 28 GB/s, a thread's bandwidth;
 * f16 14336 x 4096 out of cache, 1 thread, 4.0 -> 4.4 ms).  A tile keeps them all per (row,
 * column), so one accumulator leaves room for larger blocks (below). */
#define QGEMV_FLOAT_ACCS_f32 1
#define QGEMV_FLOAT_ACCS_f16 2
#if defined(QGEMV_BF16_DPBF16)
#define QGEMV_FLOAT_ACCS_bf16 1
#else
#define QGEMV_FLOAT_ACCS_bf16 2
#endif
#if defined(QGEMV_AVX512)
#define QGEMV_FLOAT_HALVES 0
#define QGEMV_DOT_FLOAT_SIMD(T, name, x, y)                                                \
    const int64_t nv_ = n / 64 * 64;                                                       \
    qgemv_fvec acc_[QGEMV_FLOAT_ACCS_##name];   /* part j of a step into acc_[j % accs] */  \
    for (int k_ = 0; k_ < QGEMV_FLOAT_ACCS_##name; k_++) acc_[k_] = qgemv_fvec_zero();     \
    for (; i < nv_; i += QGEMV_STEP_##name)                                                \
        for (int j_ = 0; j_ < 2; j_++)                                                     \
            acc_[j_ % QGEMV_FLOAT_ACCS_##name] = qgemv_madd_##name(qgemv_part_##name((x) + i, j_), \
                qgemv_part_##name((y) + i, j_), acc_[j_ % QGEMV_FLOAT_ACCS_##name]);       \
    i = nv_;                                                                               \
    sum = qgemv_fvec_hsum(QGEMV_FLOAT_ACCS_##name == 2 ? qgemv_fvec_add(acc_[0], acc_[QGEMV_FLOAT_ACCS_##name - 1]) \
                                                     : acc_[0]);
#else
#define QGEMV_FLOAT_HALVES 1
#define QGEMV_DOT_FLOAT_SIMD(T, name, x, y)                                                \
    const int64_t nv_ = n / 64 * 64, nh_ = nv_ / 2;                                        \
    qgemv_fvec acc0 = qgemv_fvec_zero(), acc1 = qgemv_fvec_zero();                         \
    for (; i < nh_; i += QGEMV_STEP_##name) {                                              \
        if (sizeof(T) < 4 && !(i & 31)) {   /* f32: the hardware's prefetch alone is faster */ \
            QGEMV_PREFETCH_LINE((x) + i);                                                  \
            QGEMV_PREFETCH_LINE((x) + nh_ + i);                                            \
        }                                                                                  \
        acc0 = qgemv_fvec_fmadd(qgemv_part_##name((x) + i, 0), qgemv_part_##name((y) + i, 0), acc0); \
        acc1 = qgemv_fvec_fmadd(qgemv_part_##name((x) + nh_ + i, 0), qgemv_part_##name((y) + nh_ + i, 0), acc1); \
        acc0 = qgemv_fvec_fmadd(qgemv_part_##name((x) + i, 1), qgemv_part_##name((y) + i, 1), acc0); \
        acc1 = qgemv_fvec_fmadd(qgemv_part_##name((x) + nh_ + i, 1), qgemv_part_##name((y) + nh_ + i, 1), acc1); \
    }                                                                                      \
    i = nv_;                                                                               \
    sum = qgemv_fvec_hsum(qgemv_fvec_add(acc0, acc1));
#endif
#endif

/* sum a[i] b[i], float32: vec_dot's two accumulators (QGEMV_DOT_FLOAT_SIMD) */
static float dot_f32(int64_t n, const float *restrict a, const float *restrict b) {
    int64_t i = 0;
    float sum = 0.0f;
#if defined(QGEMV_AVX2)
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

static float vec_dot_f32_f32(int64_t n, const void *restrict w, const void *restrict a) {
    return dot_f32(n, (const float *)w, (const float *)a);
}

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

QGEMV_DEFINE_VEC_DOT_HALF(f16, qgemv_fp16_to_fp32)
QGEMV_DEFINE_VEC_DOT_HALF(bf16, qgemv_bf16_to_fp32)

/* ---------------------------------------------------------------- tiles (src/tiles.h)
 * AVX2: a batch against a slab of rows, by blocks of 4 rows x 3 columns: a block runs half 0 of
 * the rows, then half 1, with one accumulator per (row, column) in registers: 12 accumulators, 7
 * loads (f16, bf16: widenings) per 12 fmas, which fills the 16 registers exactly.  That holds
 * only with the prefetches outside the loop that does the work (one per 64-byte line, its own
 * loop level): with a prefetch branch inside it, GCC kept 3 of f16's 12 accumulators on the
 * stack, and f16 and bf16 had to take 2 columns.  C harness, 4096 x 4096, 2 threads, 2 -> 3
 * columns: f16 batch 32 11.4-12.2 -> 9.3-9.8 ms, batch 8 3.0-3.6 -> 2.7-2.8 ms; bf16 batch 32
 * 12.7-15.7 -> 11.8 ms; f32 batch 32 15.6-17.5 -> 14.7-15.8 ms.  The 4 rows, prefetched by
 * their first column block, stay in L1 while they meet every column block; the later blocks
 * share out the next 4 rows among them and prefetch those into L2 a line as they read one, so
 * the memory streams while the cache serves (the first block alone left it idle three quarters
 * of the time at batch 8).
 * AVX-512 (32 registers, vec_dot front to back): with two accumulators (f16, widened bf16),
 * blocks of 3 rows x 4 columns with both, 24, in one pass.  This Zen 4, 4096 x 4096, 1 thread,
 * batch 8 against the AVX2 shape run on 16-lane vectors (4 x 4 by halves, whose vec_dot ran at
 * half speed, above): f32 5.0-6.5 against 3.8-5.3 ms, f16 3.5-3.9 against 3.0-3.7, bf16 3.1-3.8
 * against 2.8-3.7; 4 x 3 and 2 x 4 blocks were no faster, nor was an order by alternate steps.
 * With one (f32, bf16 in vdpbf16ps), blocks of 4 rows x 6 columns: 10 loads per 24 madds where
 * 3 x 4 x 2 took 14 per 24, which the L2 could not feed (4096 x 4096, 1 thread, 3 x 4 x 2 ->
 * 4 x 6 x 1: f32 batch 32 14.7 -> 10.8 ms, batch 8 4.1-4.4 -> 3.8-3.9; bf16 in vdpbf16ps batch
 * 32 7.8 -> 5.9-6.3), and a single column takes 4 x 1 blocks, 4 chains, not vec_dot's one.
 * The fmas, the sum and the scalar tail of every (row, column) are vec_dot's: the tile gives
 * vec_dot's bits. */
#if defined(QGEMV_AVX2)
/* a column's vector loaded once into a register for all the block's rows: left to itself, GCC
 * folded f32's activation loads into every fma, 15 loads per 12 fmas */
#if defined(__GNUC__) || defined(__clang__)
#define QGEMV_IN_REGISTER(v) __asm__("" : "+v"(v))
#else
#define QGEMV_IN_REGISTER(v) ((void)0)
#endif
#define QGEMV_FLOAT_AHEAD 512    /* values a row block's first column block prefetches ahead */
/* a (row, column)'s accumulators live at once: AVX2 one, the halves one after the other;
 * AVX-512 vec_dot's, in one pass */
#define QGEMV_FLOAT_PASSES (1 + QGEMV_FLOAT_HALVES)
#if QGEMV_FLOAT_HALVES
#define QGEMV_FLOAT_LIVE_f32 1
#define QGEMV_FLOAT_LIVE_f16 1
#define QGEMV_FLOAT_LIVE_bf16 1
#else
#define QGEMV_FLOAT_LIVE_f32 QGEMV_FLOAT_ACCS_f32
#define QGEMV_FLOAT_LIVE_f16 QGEMV_FLOAT_ACCS_f16
#define QGEMV_FLOAT_LIVE_bf16 QGEMV_FLOAT_ACCS_bf16
#endif
/* a block's rows RB, columns CB and the (RB, CB) its switch meets (below), by the live
 * accumulators: RB x CB x live + CB + 1 operands in the registers, AVX2 4 x 3 x 1 of 16,
 * AVX-512 4 x 6 x 1 or 3 x 4 x 2 of 32 */
#if defined(QGEMV_AVX512)
#define QGEMV_FLOAT_RB_LIVE1 4
#define QGEMV_FLOAT_CB_LIVE1 6
#define QGEMV_FLOAT_CASES_LIVE1 QGEMV_FLOAT_CASES_4x6
#define QGEMV_FLOAT_RB_LIVE2 3
#define QGEMV_FLOAT_CB_LIVE2 4
#define QGEMV_FLOAT_CASES_LIVE2 QGEMV_FLOAT_CASES_3x4
#else
#define QGEMV_FLOAT_RB_LIVE1 4
#define QGEMV_FLOAT_CB_LIVE1 3
#define QGEMV_FLOAT_CASES_LIVE1 QGEMV_FLOAT_CASES_4x3
#endif
#define QGEMV_FLOAT_CAT_(a, b) a##b
#define QGEMV_FLOAT_CAT(a, b) QGEMV_FLOAT_CAT_(a, b)   /* b macro-expanded first: LIVE_<name> -> 1 or 2 */
#define QGEMV_FLOAT_RB(name) QGEMV_FLOAT_CAT(QGEMV_FLOAT_RB_LIVE, QGEMV_FLOAT_LIVE_##name)
#define QGEMV_FLOAT_CB(name) QGEMV_FLOAT_CAT(QGEMV_FLOAT_CB_LIVE, QGEMV_FLOAT_LIVE_##name)
#define QGEMV_FLOAT_CASES(name) QGEMV_FLOAT_CAT(QGEMV_FLOAT_CASES_LIVE, QGEMV_FLOAT_LIVE_##name)(name)
#define QGEMV_DEFINE_FLOAT_TILE(name, T, to_f32)                                           \
    QGEMV_ALWAYS_INLINE void float_block_##name(int64_t n, const T *const x[QGEMV_FLOAT_RB(name)], \
                                                const T *const y[QGEMV_FLOAT_CB(name)], const int RB, const int CB, \
                                                const int prefetch, const T *const next[QGEMV_FLOAT_RB(name)], \
                                                const int nnext, float *out, int64_t out_stride) { \
        const int64_t nv = n / 64 * 64, np = nv / QGEMV_FLOAT_PASSES;                      \
        qgemv_fvec s0[QGEMV_FLOAT_RB(name)][QGEMV_FLOAT_CB(name)];                         \
        qgemv_fvec s[QGEMV_FLOAT_LIVE_##name][QGEMV_FLOAT_RB(name)][QGEMV_FLOAT_CB(name)]; \
        for (int h = 0; h < QGEMV_FLOAT_PASSES; h++) {                                     \
            for (int k = 0; k < QGEMV_FLOAT_LIVE_##name; k++)                              \
                for (int r = 0; r < RB; r++)                                               \
                    for (int c = 0; c < CB; c++) s[k][r][c] = qgemv_fvec_zero();           \
            const int64_t end = (h + 1) * np, line = 64 / (int64_t)sizeof(T);              \
            const int64_t chunk = line > QGEMV_STEP_##name ? line : QGEMV_STEP_##name;     \
            for (int64_t i0 = h * np; i0 < end; i0 += chunk) {   /* np: whole chunks */    \
                /* a prefetch per 64 bytes, outside the loop that does the work: a branch in \
                 * it cost f16's 4 x 3 blocks 3 of their accumulators */                   \
                for (int64_t l = 0; l < chunk; l += line) {                                \
                    if (prefetch)                                                          \
                        for (int r = 0; r < RB; r++) _mm_prefetch((const char *)(x[r] + i0 + l + QGEMV_FLOAT_AHEAD), _MM_HINT_T0); \
                    else                                                                   \
                        for (int k = 0; k < nnext; k++) _mm_prefetch((const char *)(next[k] + i0 + l), _MM_HINT_T1); \
                }                                                                          \
                _Pragma("GCC unroll 1")                                                    \
                for (int64_t i = i0; i < i0 + chunk; i += QGEMV_STEP_##name)               \
                    for (int j = 0; j < 2; j++) {                                          \
                        qgemv_vec_##name av[QGEMV_FLOAT_CB(name)];                         \
                        for (int c = 0; c < CB; c++) {                                     \
                            av[c] = qgemv_part_##name(y[c] + i, j);                        \
                            QGEMV_IN_REGISTER(av[c]);                                      \
                        }                                                                  \
                        for (int r = 0; r < RB; r++) {                                     \
                            const qgemv_vec_##name wv = qgemv_part_##name(x[r] + i, j);    \
                            for (int c = 0; c < CB; c++)                                   \
                                s[j % QGEMV_FLOAT_LIVE_##name][r][c] = qgemv_madd_##name(wv, av[c], s[j % QGEMV_FLOAT_LIVE_##name][r][c]); \
                        }                                                                  \
                    }                                                                      \
            }                                                                              \
            if (QGEMV_FLOAT_PASSES == 2 && h == 0)                                         \
                for (int r = 0; r < RB; r++)                                               \
                    for (int c = 0; c < CB; c++) s0[r][c] = s[0][r][c];                    \
        }                                                                                  \
        for (int r = 0; r < RB; r++)                                                       \
            for (int c = 0; c < CB; c++) {                                                 \
                /* acc0 + acc1: the first half's and the second's, or the two parts' */    \
                const qgemv_fvec v = QGEMV_FLOAT_PASSES == 2 ? qgemv_fvec_add(s0[r][c], s[0][r][c]) \
                                     : QGEMV_FLOAT_LIVE_##name == 2 ? qgemv_fvec_add(s[0][r][c], s[1][r][c]) \
                                     : s[0][r][c];                                         \
                float sum = qgemv_fvec_hsum(v);                                            \
                for (int64_t i = nv; i < n; i++) sum += to_f32(x[r][i]) * to_f32(y[c][i]); \
                out[r * out_stride + c] = sum;                                             \
            }                                                                              \
    }                                                                                      \
    static void vec_dot_tile_##name##_##name(int64_t n, const void *restrict w, int64_t row_stride, \
                                             int64_t nrows, const void *restrict a, int64_t act_stride, \
                                             int64_t ncols, float *restrict out, int64_t out_stride) { \
        if (QGEMV_FLOAT_LIVE_##name == 2 || QGEMV_FLOAT_PASSES == 2) {   /* else 4 x 1 blocks */ \
            QGEMV_TILE_ONE_COLUMN(vec_dot_##name##_##name, n, w, row_stride, nrows, a, ncols, out, out_stride); \
        }                                                                                  \
        const int64_t passes = (ncols + QGEMV_FLOAT_CB(name) - 1) / QGEMV_FLOAT_CB(name);  \
        for (int64_t r = 0; r < nrows; r += QGEMV_FLOAT_RB(name)) {                        \
            const int RB = nrows - r >= QGEMV_FLOAT_RB(name) ? QGEMV_FLOAT_RB(name) : (int)(nrows - r); \
            const T *x[QGEMV_FLOAT_RB(name)];                                              \
            for (int k = 0; k < QGEMV_FLOAT_RB(name); k++)                                 \
                x[k] = (const T *)((const uint8_t *)w + (r + (k < RB ? k : RB - 1)) * row_stride); \
            for (int64_t p = 0; p < passes; p++) {                                         \
                /* the columns in passes of near-equal counts (8 as 4 + 4, not 6 + 2); block \
                 * p > 0 prefetches its share of the next rows (past the tile's end too: the \
                 * next tile's first rows) into L2, a line as it reads one */              \
                const int64_t c = p * ncols / passes;                                      \
                const int k0 = p ? (int)((p - 1) * QGEMV_FLOAT_RB(name) / (passes - 1)) : 0; \
                const int k1 = p ? (int)(p * QGEMV_FLOAT_RB(name) / (passes - 1)) : 0;     \
                const T *next[QGEMV_FLOAT_RB(name)];                                       \
                for (int k = k0; k < k1; k++) next[k - k0] = (const T *)((const uint8_t *)w + (r + RB + k) * row_stride); \
                const int CB = (int)((p + 1) * ncols / passes - c);                        \
                const T *y[QGEMV_FLOAT_CB(name)];                                          \
                for (int k = 0; k < QGEMV_FLOAT_CB(name); k++)                             \
                    y[k] = (const T *)((const uint8_t *)a + (c + (k < CB ? k : CB - 1)) * act_stride); \
                float *o = out + r * out_stride + c;                                       \
                switch (RB * 8 + CB) {  /* (RB, CB) as constants, each block compiled once */ \
                QGEMV_FLOAT_CASES(name)                                                    \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }
#define QGEMV_FLOAT_BLOCK_CASE(name, rb, cb)                                                 \
    case rb * 8 + cb: float_block_##name(n, x, y, rb, cb, c == 0, next, k1 - k0, o, out_stride); break;
/* the blocks a tile can meet: 1-RB rows x 1-CB columns */
#define QGEMV_FLOAT_CASES_ROW_3(name, rb) QGEMV_FLOAT_BLOCK_CASE(name, rb, 3) \
    QGEMV_FLOAT_BLOCK_CASE(name, rb, 2) QGEMV_FLOAT_BLOCK_CASE(name, rb, 1)
#define QGEMV_FLOAT_CASES_ROW_4(name, rb) QGEMV_FLOAT_BLOCK_CASE(name, rb, 4) QGEMV_FLOAT_CASES_ROW_3(name, rb)
#define QGEMV_FLOAT_CASES_ROW_6(name, rb) QGEMV_FLOAT_BLOCK_CASE(name, rb, 6) QGEMV_FLOAT_BLOCK_CASE(name, rb, 5) \
    QGEMV_FLOAT_CASES_ROW_4(name, rb)
#define QGEMV_FLOAT_CASES_4x3(name) QGEMV_FLOAT_CASES_ROW_3(name, 4) QGEMV_FLOAT_CASES_ROW_3(name, 3) \
    QGEMV_FLOAT_CASES_ROW_3(name, 2) QGEMV_FLOAT_CASES_ROW_3(name, 1)
#define QGEMV_FLOAT_CASES_3x4(name) QGEMV_FLOAT_CASES_ROW_4(name, 3) QGEMV_FLOAT_CASES_ROW_4(name, 2) \
    QGEMV_FLOAT_CASES_ROW_4(name, 1)
#define QGEMV_FLOAT_CASES_4x6(name) QGEMV_FLOAT_CASES_ROW_6(name, 4) QGEMV_FLOAT_CASES_ROW_6(name, 3) \
    QGEMV_FLOAT_CASES_ROW_6(name, 2) QGEMV_FLOAT_CASES_ROW_6(name, 1)
static inline float qgemv_f32_itself(float v) { return v; }
QGEMV_DEFINE_FLOAT_TILE(f16, uint16_t, qgemv_fp16_to_fp32)
QGEMV_DEFINE_FLOAT_TILE(bf16, uint16_t, qgemv_bf16_to_fp32)
QGEMV_DEFINE_FLOAT_TILE(f32, float, qgemv_f32_itself)
#define QGEMV_TILES_ELEMENTS(X) X(f32, f32) X(f16, f16) X(bf16, bf16)
#else
#define QGEMV_TILES_ELEMENTS(X)   /* portable: the generic tiles (src/tiles.h) */
#endif
