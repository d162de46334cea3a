/* Element formats (block size 1): f32, f16, bf16, f64 and the integers.
 *
 * dequant_row_<name>: x -> float32, exact where float32 holds the value, otherwise rounded
 * to nearest even (f64, i32, i64), as numpy's astype(float32).
 * vec_dot_<name>_<name>: the float formats multiply against activations of their own type,
 * accumulating in float32 (ggml_vec_dot_f16 / _bf16 / _f32).
 * vec_dot_tile_<name>_<name> (AVX2, AVX-512): a batch of columns against a slab of rows, each
 * (row, column) running vec_dot's accumulators in vec_dot's order, so the tile gives vec_dot's
 * bits.
 * On the AVX-512 variants f32 and f16 take another order, their vec_dot and tiles included:
 * src/formats/float_panels.h; here the other variants' f32 and f16, and bf16 everywhere.
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
/* The float formats' SIMD dot, over the first nv = n / 64 * 64 values (a scalar tail after), in
 * steps of 2 L values, a step two madds, part(p, 0) then part(p, 1), into one accumulator.  A
 * vector holds L = 8 floats (AVX2) or 16 (AVX-512); part(p, j) is values p[L j .. L j + L - 1]
 * for f32 and f16, and for bf16 the even (j = 0) or odd values of p[0..2 L), which one load
 * widens with a shift or a mask and no shuffle.  On AVX512_BF16 a bf16 step is 64 values:
 * part(p, j) is p[32 j .. 32 j + 31] as stored, and vdpbf16ps adds its 32 products into the
 * accumulator's 16 lanes, in pairs (ggml's AVX512_BF16 vec_dot: twice fma's products an
 * instruction, and no widening).
 *   The accumulators (QGEMV_FLOAT_ACCS_<name>, below) and the steps each takes: with one, every
 * step front to back; with two, acc k the steps of spans k, k + 2, k + 4, ... of the values, and
 * the sum is hsum(acc0 + acc1).  The spans are the variant's:
 *   - AVX2, the two halves (QGEMV_FLOAT_HALVES): two read streams kept a row at memory speed on
 *     the Zen 3 these kernels were measured on.
 *   - AVX-512, spans of QGEMV_FLOAT_SPAN = 64 values, vec_dot walking span 2 m, then 2 m + 1:
 *     one read stream, its lines in order.  Streams apart ran slower on a Zen 4: halves 15-30%
 *     (C harness, 64 MiB of f32 rows: 18-20 against 23-28 GB/s), spans of 512 values side by
 *     side three times (f16 14336 x 4096, 1 thread: 4.1 -> 12.2 ms).  The two spans' steps
 *     side by side (lines 0, 2, 1, 3, ...) cost an Intel Xeon with AMX a third of its
 *     out-of-cache speed (f16 14336 x 4096: 1 thread 13.2 -> 9.5 ms, 2 threads 6.9 -> 4.8);
 *     the order of the madds into each accumulator, and so the bits, are the same either way.
 * A tile runs vec_dot's madds in vec_dot's order, accumulator after accumulator (pass k: acc k's
 * spans), one accumulator per (row, column) live, in blocks of rows x columns (below).  nv is a
 * multiple of 64 so that every span is whole 64-byte lines of 16-bit values and whole steps
 * (the tile's loop). */
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
/* vec_dot's accumulators.  AVX2: two, one per half.  AVX-512: one where one chain of madds
 * (fma 4 cycles, vdpbf16ps 6, on this Zen 4) still outruns a thread's memory: f32 and bf16 in
 * vdpbf16ps, 64 bytes a madd; two where one would not: f16 and widened bf16, 32 bytes a madd
 * (one chain: 8 bytes a cycle, 28 GB/s, a thread's bandwidth; f16 14336 x 4096 out of cache,
 * 1 thread, 4.0 -> 4.4 ms). */
#if defined(QGEMV_AVX512)
#define QGEMV_FLOAT_HALVES 0
#define QGEMV_FLOAT_ACCS_f32 1
#define QGEMV_FLOAT_ACCS_f16 2
#if defined(QGEMV_BF16_DPBF16)
#define QGEMV_FLOAT_ACCS_bf16 1
#else
#define QGEMV_FLOAT_ACCS_bf16 2
#endif
#define QGEMV_FLOAT_SPAN 64
/* the values of a span, of the first nv (a multiple of 32): all of them with one accumulator,
 * else QGEMV_FLOAT_SPAN (AVX-512) or half (AVX2) */
#define QGEMV_FLOAT_SPAN_OF(name, nv) (QGEMV_FLOAT_ACCS_##name == 1 ? (nv) : (int64_t)QGEMV_FLOAT_SPAN)
#else
#define QGEMV_FLOAT_HALVES 1
#define QGEMV_FLOAT_ACCS_f32 2
#define QGEMV_FLOAT_ACCS_f16 2
#define QGEMV_FLOAT_ACCS_bf16 2
#define QGEMV_FLOAT_SPAN_OF(name, nv) ((nv) / 2)
#endif
/* whether a row of element type T asks for its lines ahead: the 16-bit ones (f16, bf16), where
 * the CPU's prefetcher leaves a single column waiting (qgemv_prefetch_one_column) */
#define QGEMV_FLOAT_ROW_HINTS(T) (sizeof(T) < 4 && qgemv_prefetch_one_column)
/* one step of values at p into acc: both parts, in order */
#define QGEMV_FLOAT_STEP_INTO(name, acc, x, y, p)                                          \
    for (int j_ = 0; j_ < 2; j_++)                                                         \
        acc = qgemv_madd_##name(qgemv_part_##name((x) + (p), j_), qgemv_part_##name((y) + (p), j_), acc)
#define QGEMV_DOT_FLOAT_SIMD(T, name, x, y)                                                \
    const int64_t nv_ = n / 64 * 64;                                                       \
    if (QGEMV_FLOAT_ACCS_##name == 1) {                                                    \
        qgemv_fvec acc_ = qgemv_fvec_zero();                                               \
        for (; i < nv_; i += QGEMV_STEP_##name) {                                          \
            /* bf16 in vdpbf16ps: each step's lines a stream ahead, as f16's spans below */ \
            if (QGEMV_FLOAT_ROW_HINTS(T))                                                  \
                QGEMV_PREFETCH_STREAM((x) + i, QGEMV_STEP_##name * (int64_t)sizeof(T));    \
            QGEMV_FLOAT_STEP_INTO(name, acc_, x, y, i);                                    \
        }                                                                                  \
        sum = qgemv_fvec_hsum(acc_);                                                       \
    } else {                                                                               \
        const int64_t span_ = QGEMV_FLOAT_SPAN_OF(name, nv_);                              \
        qgemv_fvec acc0 = qgemv_fvec_zero(), acc1 = qgemv_fvec_zero();                     \
        for (int64_t c_ = 0; c_ < nv_; c_ += 2 * span_) {   /* spans c_ and c_ + span_ */ \
            const int64_t n1_ = nv_ - c_ - span_ < span_ ? nv_ - c_ - span_ : span_;       \
            int64_t k_ = 0;                                                                \
            if (!QGEMV_FLOAT_HALVES) {   /* AVX-512: span c_, then c_ + span_: lines in order */ \
                /* each span's lines a stream ahead as it starts (QGEMV_FLOAT_ROW_HINTS:     \
                 * Intel Xeon, f16 14336 x 4096 out of cache, 1 / 2 threads 8.1 -> 6.8 / 3.9 -> \
                 * 3.5 ms, in cache even; both spans' lines at once ran 8% slower) */        \
                const int hint_ = QGEMV_FLOAT_ROW_HINTS(T);                                \
                if (hint_) QGEMV_PREFETCH_STREAM((x) + c_, span_ * (int64_t)sizeof(T));    \
                for (; k_ < span_ && c_ + k_ < nv_; k_ += QGEMV_STEP_##name) QGEMV_FLOAT_STEP_INTO(name, acc0, x, y, c_ + k_); \
                if (hint_) QGEMV_PREFETCH_STREAM((x) + c_ + span_, span_ * (int64_t)sizeof(T)); \
                for (k_ = 0; k_ < n1_; k_ += QGEMV_STEP_##name) QGEMV_FLOAT_STEP_INTO(name, acc1, x, y, c_ + span_ + k_); \
                continue;                                                                  \
            }                                                                              \
            for (; k_ < n1_; k_ += QGEMV_STEP_##name) {   /* AVX2: the halves side by side */ \
                /* f16 and bf16: the two halves' lines a stream ahead; f32 reads faster on \
                 * the hardware's prefetch alone */                                        \
                if (sizeof(T) < 4 && !(k_ & 31)) {                                         \
                    QGEMV_PREFETCH_LINE((x) + c_ + k_);                                    \
                    QGEMV_PREFETCH_LINE((x) + c_ + span_ + k_);                            \
                }                                                                          \
                QGEMV_FLOAT_STEP_INTO(name, acc0, x, y, c_ + k_);                          \
                QGEMV_FLOAT_STEP_INTO(name, acc1, x, y, c_ + span_ + k_);                  \
            }                                                                              \
            for (; k_ < span_ && c_ + k_ < nv_; k_ += QGEMV_STEP_##name)   /* the last spans */ \
                QGEMV_FLOAT_STEP_INTO(name, acc0, x, y, c_ + k_);                          \
        }                                                                                  \
        sum = qgemv_fvec_hsum(qgemv_fvec_add(acc0, acc1));                                 \
    }                                                                                      \
    i = nv_;
#endif

/* sum a[i] b[i], float32, in QGEMV_DOT_FLOAT_SIMD's order */
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
#endif
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
 * AVX-512 (32 registers; bf16 alone since f32 and f16 took panels, float_panels.h; the figures
 * below are from when they ran here too): blocks of 4 rows x 6 columns, one accumulator each: 10 loads per 24
 * madds.  Before, 3 x 4 blocks kept both of a (row, column)'s accumulators live, which took 14
 * loads per 24 madds, 7 of them f16's conversions, more than the L2 fed (4096 x 4096, 1 thread:
 * f32 batch 32 14.7 -> 10.8 ms, batch 8 4.1-4.4 -> 3.8-3.9; bf16 in vdpbf16ps batch 32 7.8 ->
 * 5.9-6.3; f16 by spans of 64, batch 32 14.6-14.8 -> 11.3-11.4, batch 8 3.8-4.0 -> 3.3-3.5,
 * where spans of 32 read every other line a pass and ran batch 8 at 3.5-4.3).  Two passes read
 * each line once: the first column block's first pass prefetches the other pass's lines too.
 * They go slab by slab (QGEMV_FLOAT_SLAB values of the rows and columns, both passes while it
 * is in L1): on an Intel Xeon with AMX, whole rows a pass ran f16 batch 8 at 3.5 ms and slabs of
 * 1024 at 3.15 (512: 3.3, 2048: 3.35; 4096 x 4096, 1 thread), out of cache 7.9 -> 7.3 (14336
 * x 4096, batch 8, 2 threads).
 * With one accumulator a single column takes 4 x 1 blocks, 4 chains, not vec_dot's one.
 * The fmas, the sum and the scalar tail of every (row, column) are vec_dot's: the tile gives
 * vec_dot's bits. */
#if defined(QGEMV_AVX2)
#define QGEMV_FLOAT_AHEAD 512    /* values a row block's first column block prefetches ahead */
#define QGEMV_FLOAT_SLAB 1024    /* values of AVX-512's two-pass slabs: a multiple of 2 spans */
/* the MXCSR a family's madds run under: 0, the caller's own, for all but one (bf16_odd_even,
 * below); qgemv_mxcsr_swap sets one and returns the one before.  The fences tie the sums to
 * the switches: a volatile asm that takes and gives each, so no madd moves past the switch
 * back and no sum or tail moves before it (volatile asms keep their order). */
#define QGEMV_FLOAT_MXCSR_f32 0u
#define QGEMV_FLOAT_MXCSR_f16 0u
#define QGEMV_FLOAT_MXCSR_bf16 0u
#if defined(__GNUC__) || defined(__clang__)
static inline unsigned qgemv_mxcsr_swap(unsigned csr) {
    unsigned before;
    __asm__ volatile("stmxcsr %0" : "=m"(before));
    __asm__ volatile("ldmxcsr %0" : : "m"(csr));
    return before;
}
#define QGEMV_FLOAT_FENCE(sums, passes, RB, CB)                                            \
    for (int h_ = 0; h_ < (passes); h_++)                                                  \
        for (int r_ = 0; r_ < (RB); r_++)                                                  \
            for (int c_ = 0; c_ < (CB); c_++) __asm__ volatile("" : "+v"(sums[h_][r_][c_]))
#else   /* no family sets one here (bf16_odd_even is GCC's and clang's) */
static inline unsigned qgemv_mxcsr_swap(unsigned csr) { (void)csr; return 0; }
#define QGEMV_FLOAT_FENCE(sums, passes, RB, CB) ((void)0)
#endif
/* a block's rows RB and columns CB, one live accumulator each: RB x CB + CB + 1 operands in the
 * registers, AVX2 4 x 3 of 16, AVX-512 4 x 6 of 32 */
#if defined(QGEMV_AVX512)
#define QGEMV_FLOAT_RB 4
#define QGEMV_FLOAT_CB 6
#define QGEMV_FLOAT_CASES QGEMV_FLOAT_CASES_4x6
#else
#define QGEMV_FLOAT_RB 4
#define QGEMV_FLOAT_CB 3
#define QGEMV_FLOAT_CASES QGEMV_FLOAT_CASES_4x3
#endif
/* vec_dot_tile_<name>_<act>: weights of element type T (to_f32 widens one), activations of
 * TA (act_to_f32); one_column: the tile's single-column statement (QGEMV_TILE_ONE_COLUMN, or
 * QGEMV_TILE_NO_ONE_COLUMN where no vec_dot takes these activations) */
#define QGEMV_DEFINE_FLOAT_TILE(name, T, to_f32, act, TA, act_to_f32, one_column)          \
    QGEMV_ALWAYS_INLINE void float_block_##name##_##act(int64_t n, const T *const x[QGEMV_FLOAT_RB], \
                                                const TA *const y[QGEMV_FLOAT_CB], const int RB, const int CB, \
                                                const int prefetch, const T *const next[QGEMV_FLOAT_RB], \
                                                const int nnext, float *out, int64_t out_stride) { \
        enum { passes = QGEMV_FLOAT_ACCS_##name };   /* pass k: accumulator k's spans */  \
        const int64_t nv = n / 64 * 64, span = QGEMV_FLOAT_SPAN_OF(name, nv);              \
        const int64_t line = 64 / (int64_t)sizeof(T);                                      \
        const int64_t chunk = line > QGEMV_STEP_##name ? line : QGEMV_STEP_##name;         \
        /* the first column block prefetches its rows AHEAD values on, AVX-512's first pass \
         * the other pass's lines too */                                                   \
        const int both = passes == 2 && !QGEMV_FLOAT_HALVES;                               \
        /* AVX-512's two passes go slab by slab, each slab's rows and columns read by both \
         * while in L1 (pass k's sums kept in sums[k] between slabs) */                    \
        const int64_t slab = both ? QGEMV_FLOAT_SLAB : nv;                                 \
        qgemv_fvec sums[passes][QGEMV_FLOAT_RB][QGEMV_FLOAT_CB];                           \
        for (int h = 0; h < passes; h++)                                                   \
            for (int r = 0; r < RB; r++)                                                   \
                for (int c = 0; c < CB; c++) sums[h][r][c] = qgemv_fvec_zero();            \
        /* the madds under the family's MXCSR, if it has one (QGEMV_FLOAT_MXCSR_<name>) */ \
        const unsigned caller_mxcsr = QGEMV_FLOAT_MXCSR_##name ? qgemv_mxcsr_swap(QGEMV_FLOAT_MXCSR_##name) : 0; \
        if (QGEMV_FLOAT_MXCSR_##name) QGEMV_FLOAT_FENCE(sums, passes, RB, CB);             \
        for (int64_t k0 = 0; k0 < nv; k0 += slab)                                          \
        for (int h = 0; h < passes; h++) {                                                 \
            qgemv_fvec s[QGEMV_FLOAT_RB][QGEMV_FLOAT_CB];                                  \
            for (int r = 0; r < RB; r++)                                                   \
                for (int c = 0; c < CB; c++) s[r][c] = sums[h][r][c];                      \
            const int64_t k1 = nv - k0 < slab ? nv : k0 + slab;                            \
            for (int64_t c0 = k0 + h * span; c0 < k1; c0 += passes * span) {               \
                const int64_t end = nv - c0 < span ? nv : c0 + span;                       \
                for (int64_t i0 = c0; i0 < end; i0 += chunk) {   /* spans: whole chunks */ \
                    /* a prefetch per 64 bytes, outside the loop that does the work: a branch \
                     * in it cost f16's 4 x 3 blocks 3 of their accumulators */            \
                    for (int64_t l = 0; l < chunk; l += line) {                            \
                        if (prefetch)                                                      \
                            for (int r = 0; r < RB; r++) {                                 \
                                _mm_prefetch((const char *)(x[r] + i0 + l + QGEMV_FLOAT_AHEAD), _MM_HINT_T0); \
                                if (both && h == 0)                                        \
                                    _mm_prefetch((const char *)(x[r] + i0 + l + QGEMV_FLOAT_AHEAD + span), _MM_HINT_T0); \
                            }                                                              \
                        else                                                               \
                            for (int k = 0; k < nnext; k++) _mm_prefetch((const char *)(next[k] + i0 + l), _MM_HINT_T1); \
                    }                                                                      \
                    _Pragma("GCC unroll 1")                                                \
                    for (int64_t i = i0; i < i0 + chunk; i += QGEMV_STEP_##name)           \
                        for (int j = 0; j < 2; j++) {                                      \
                            qgemv_vec_##name av[QGEMV_FLOAT_CB];                           \
                            for (int c = 0; c < CB; c++) {                                 \
                                av[c] = qgemv_part_##act(y[c] + i, j);                     \
                                QGEMV_IN_REGISTER(av[c]);                                  \
                            }                                                              \
                            for (int r = 0; r < RB; r++) {                                 \
                                const qgemv_vec_##name wv = qgemv_part_##name(x[r] + i, j); \
                                for (int c = 0; c < CB; c++) s[r][c] = qgemv_madd_##name(wv, av[c], s[r][c]); \
                            }                                                              \
                        }                                                                  \
                }                                                                          \
            }                                                                              \
            for (int r = 0; r < RB; r++)                                                   \
                for (int c = 0; c < CB; c++) sums[h][r][c] = s[r][c];                      \
        }                                                                                  \
        if (QGEMV_FLOAT_MXCSR_##name) {   /* the sums and the tail under the caller's */  \
            QGEMV_FLOAT_FENCE(sums, passes, RB, CB);                                       \
            qgemv_mxcsr_swap(caller_mxcsr);                                                \
            QGEMV_FLOAT_FENCE(sums, passes, RB, CB);                                       \
        }                                                                                  \
        for (int r = 0; r < RB; r++)                                                       \
            for (int c = 0; c < CB; c++) {                                                 \
                float sum = qgemv_fvec_hsum(passes == 2 ? qgemv_fvec_add(sums[0][r][c], sums[passes - 1][r][c]) : sums[0][r][c]); \
                for (int64_t i = nv; i < n; i++) sum += to_f32(x[r][i]) * act_to_f32(y[c][i]); \
                out[r * out_stride + c] = sum;                                             \
            }                                                                              \
    }                                                                                      \
    static void vec_dot_tile_##name##_##act(int64_t n, const void *restrict w, int64_t row_stride, \
                                            int64_t nrows, const void *restrict a, int64_t act_stride, \
                                            int64_t ncols, float *restrict out, int64_t out_stride) { \
        /* a single column by vec_dot rows where it takes two accumulators, and for bf16 in \
         * vdpbf16ps where its rows prefetch (Intel Xeon, 14336 x 4096 out of cache, 1 / 2 \
         * threads, against 4 x 1 blocks: 7.5-7.8 -> 7.0-7.3 / 3.9 -> 3.4-3.6 ms, in cache \
         * even; f32's rows ran 3-8% slower so); else 4 x 1 blocks, 4 chains */            \
        if (QGEMV_FLOAT_ACCS_##name == 2 || QGEMV_FLOAT_ROW_HINTS(T)) {                    \
            one_column(vec_dot_##name##_##act, n, w, row_stride, nrows, a, ncols, out, out_stride); \
        }                                                                                  \
        const int64_t passes = (ncols + QGEMV_FLOAT_CB - 1) / QGEMV_FLOAT_CB;              \
        for (int64_t r = 0; r < nrows; r += QGEMV_FLOAT_RB) {                              \
            const int RB = nrows - r >= QGEMV_FLOAT_RB ? QGEMV_FLOAT_RB : (int)(nrows - r); \
            const T *x[QGEMV_FLOAT_RB];                                                    \
            for (int k = 0; k < QGEMV_FLOAT_RB; k++)                                       \
                x[k] = (const T *)((const uint8_t *)w + (r + (k < RB ? k : RB - 1)) * row_stride); \
            for (int64_t p = 0; p < passes; p++) {                                         \
                /* the columns in passes of near-equal counts (8 as 4 + 4, not 6 + 2); block \
                 * p > 0 prefetches its share of the next rows (past the tile's end too: the \
                 * next tile's first rows) into L2, a line as it reads one */              \
                const int64_t c = p * ncols / passes;                                      \
                const int k0 = p ? (int)((p - 1) * QGEMV_FLOAT_RB / (passes - 1)) : 0;     \
                const int k1 = p ? (int)(p * QGEMV_FLOAT_RB / (passes - 1)) : 0;           \
                const T *next[QGEMV_FLOAT_RB];                                             \
                for (int k = k0; k < k1; k++) next[k - k0] = (const T *)((const uint8_t *)w + (r + RB + k) * row_stride); \
                const int CB = (int)((p + 1) * ncols / passes - c);                        \
                const TA *y[QGEMV_FLOAT_CB];                                               \
                for (int k = 0; k < QGEMV_FLOAT_CB; k++)                                   \
                    y[k] = (const TA *)((const uint8_t *)a + (c + (k < CB ? k : CB - 1)) * act_stride); \
                float *o = out + r * out_stride + c;                                       \
                switch (RB * 8 + CB) {  /* (RB, CB) as constants, each block compiled once */ \
                QGEMV_FLOAT_CASES(name##_##act)                                            \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }
#define QGEMV_FLOAT_BLOCK_CASE(name, rb, cb)                                                 \
    case rb * 8 + cb: float_block_##name(n, x, y, rb, cb, c == 0, next, k1 - k0, o, out_stride); break;
/* the blocks a tile can meet: 1-RB rows x 1-CB columns, CASE(name, rb, cb) each */
#define QGEMV_FLOAT_CASES_ROW_3(CASE, name, rb) CASE(name, rb, 3) CASE(name, rb, 2) CASE(name, rb, 1)
#define QGEMV_FLOAT_CASES_ROW_4(CASE, name, rb) CASE(name, rb, 4) QGEMV_FLOAT_CASES_ROW_3(CASE, name, rb)
#define QGEMV_FLOAT_CASES_ROW_6(CASE, name, rb) CASE(name, rb, 6) CASE(name, rb, 5) QGEMV_FLOAT_CASES_ROW_4(CASE, name, rb)
#define QGEMV_FLOAT_CASES_4x3_OF(CASE, name) QGEMV_FLOAT_CASES_ROW_3(CASE, name, 4) QGEMV_FLOAT_CASES_ROW_3(CASE, name, 3) \
    QGEMV_FLOAT_CASES_ROW_3(CASE, name, 2) QGEMV_FLOAT_CASES_ROW_3(CASE, name, 1)
#define QGEMV_FLOAT_CASES_4x6_OF(CASE, name) QGEMV_FLOAT_CASES_ROW_6(CASE, name, 4) QGEMV_FLOAT_CASES_ROW_6(CASE, name, 3) \
    QGEMV_FLOAT_CASES_ROW_6(CASE, name, 2) QGEMV_FLOAT_CASES_ROW_6(CASE, name, 1)
#define QGEMV_FLOAT_CASES_4x3(name) QGEMV_FLOAT_CASES_4x3_OF(QGEMV_FLOAT_BLOCK_CASE, name)
#define QGEMV_FLOAT_CASES_4x6(name) QGEMV_FLOAT_CASES_4x6_OF(QGEMV_FLOAT_BLOCK_CASE, name)
static inline float qgemv_f32_itself(float v) { return v; }
QGEMV_DEFINE_FLOAT_TILE(bf16, uint16_t, qgemv_bf16_to_fp32, bf16, uint16_t, qgemv_bf16_to_fp32, QGEMV_TILE_ONE_COLUMN)
#if !defined(QGEMV_AVX512)   /* AVX-512: f32's and f16's from float_panels.h */
QGEMV_DEFINE_FLOAT_TILE(f16, uint16_t, qgemv_fp16_to_fp32, f16, uint16_t, qgemv_fp16_to_fp32, QGEMV_TILE_ONE_COLUMN)
QGEMV_DEFINE_FLOAT_TILE(f32, float, qgemv_f32_itself, f32, float, qgemv_f32_itself, QGEMV_TILE_ONE_COLUMN)
#endif
#define QGEMV_TILES_ELEMENTS(X) X(f32, f32) X(f16, f16) X(bf16, bf16)
#else
#define QGEMV_TILES_ELEMENTS(X)   /* portable: the generic tiles (src/tiles.h) */
#endif

#if defined(QGEMV_AVX512)
/* the f32 values a packed column takes: n rounded up to whole QK_K, zeros past n */
#define QGEMV_PACKED_VALUES_FLOAT(n) (((n) + QK_K - 1) / QK_K * QK_K)
#define QGEMV_PACKED_NBYTES_FLOAT (16 * QK_K * sizeof(float))   /* 16 columns, QK_K values */
#if defined(QGEMV_BF16_DPBF16)
/* bf16 batches in fmas, where the CPU runs two fmas faster than one vdpbf16ps (_dispatch.py:
 * bf16_fma; on for Intel).  vdpbf16ps is, per lane k of a 32-value part (Intel SDM), two fp32
 * fmas, w[2k+1] a[2k+1] then w[2k] a[2k], under round-to-nearest-even with subnormal inputs
 * read as 0 (DAZ) and subnormal results flushed to 0 (FTZ), the MXCSR neither read nor
 * written.  So the same fmas, under an MXCSR of RNE + DAZ + FTZ with every exception masked
 * (QGEMV_FLOAT_MXCSR_bf16_odd_even; the caller's back for the sums and the tail), are its
 * bits: vec_dot's.  A step is 32 values: part 0 the odd ones widened (the high halves, a mask),
 * part 1 the even ones (a shift); the columns come packed once per product as float32, each
 * 32 values' odd ones then their even ones (pack_columns_bf16), a load a part.  Intel Xeon
 * (AMX), 4096 x 4096, 2 threads (C harness): batch 32 5.2-5.6 -> 4.1-4.6 ms, 16 2.8 -> 2.1-2.2,
 * 8 1.40-1.50 -> 1.25-1.33, 2-6 even (memory-bound). */
#define QGEMV_FLOAT_MXCSR_bf16_odd_even 0x9FC0u   /* FTZ 0x8000, RNE (0 in 0x6000), masks 0x1F80, DAZ 0x40 */
typedef __m512 qgemv_vec_bf16_odd_even;
#define QGEMV_STEP_bf16_odd_even 32
#define QGEMV_FLOAT_ACCS_bf16_odd_even 1
#define qgemv_madd_bf16_odd_even qgemv_fvec_fmadd
static inline __m512 qgemv_part_bf16_odd_even(const uint16_t *p, int j) {
    const __m512i v = _mm512_loadu_si512((const void *)p);
    return _mm512_castsi512_ps(j ? _mm512_slli_epi32(v, 16) : _mm512_and_si512(v, _mm512_set1_epi32((int)0xffff0000u)));
}
static inline __m512 qgemv_part_f32_odd_even(const float *p, int j) { return _mm512_loadu_ps(p + 16 * j); }
QGEMV_DEFINE_FLOAT_TILE(bf16_odd_even, uint16_t, qgemv_bf16_to_fp32, f32_odd_even, float, qgemv_f32_itself,
                        QGEMV_TILE_NO_ONE_COLUMN)
#define QGEMV_PACKED_VALUES_bf16(n) QGEMV_PACKED_VALUES_FLOAT(n)
#define QGEMV_PACKED_NBYTES_bf16 QGEMV_PACKED_NBYTES_FLOAT
/* columns 16 g .. 16 g + 15 (those below ncols) of bf16 activations -> float32, column after
 * column, QGEMV_PACKED_VALUES_bf16(n) each: of the first n / 64 * 64 values each 32's odd
 * ones then their even ones, the rest in order (the tile's scalar tail) */
static void pack_columns_bf16(int64_t n, const void *restrict a, int64_t act_stride, int64_t ncols, int64_t g,
                              void *restrict packed) {
    const int64_t np = QGEMV_PACKED_VALUES_bf16(n), nv = n / 64 * 64;
    for (int64_t c = 16 * g; c < ncols && c < 16 * g + 16; c++) {
        const uint16_t *y = (const uint16_t *)((const uint8_t *)a + c * act_stride);
        float *dst = (float *)packed + (c - 16 * g) * np;
        for (int64_t i = 0; i < nv; i += 32)
            for (int k = 0; k < 16; k++) {
                dst[i + k] = qgemv_bf16_to_fp32(y[i + 2 * k + 1]);
                dst[i + 16 + k] = qgemv_bf16_to_fp32(y[i + 2 * k]);
            }
        dequant_row_bf16(y + nv, dst + nv, n - nv);
        memset(dst + n, 0, (size_t)(np - n) * sizeof(float));
    }
}
static void packed_tile_bf16(int64_t n, const void *restrict w, int64_t row_stride, int64_t nrows,
                             const void *restrict packed, int64_t ncols, float *restrict out, int64_t out_stride) {
    vec_dot_tile_bf16_odd_even_f32_odd_even(n, w, row_stride, nrows, packed,
                                            QGEMV_PACKED_VALUES_bf16(n) * (int64_t)sizeof(float), ncols, out, out_stride);
}
#endif
/* (name, from how many columns, act); f32 and f16 take their panels (float_panels.h) */
#if defined(QGEMV_BF16_DPBF16)   /* bf16 from 8 columns: below, at the memory's pace either way */
#define QGEMV_PACKED_TILES_ELEMENTS(X) X(bf16, 8, bf16)
#else
#define QGEMV_PACKED_TILES_ELEMENTS(X)
#endif
#else
#define QGEMV_PACKED_TILES_ELEMENTS(X)
#endif
