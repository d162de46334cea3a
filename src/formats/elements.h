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
/* The float formats' SIMD dot, over the first nv = n / 64 * 64 values (a scalar tail after):
 * accumulator h sums half h of them (values h nv/2 .. (h + 1) nv/2 - 1), 16 a step in two
 * fmas, half16(p, 0) then half16(p, 1), and the sum is hsum(acc0 + acc1).  half16(p, j) is
 * values p[8 j .. 8 j + 7] for f32 and f16, and for bf16 the even (j = 0) or odd values of
 * p[0..16), which one load widens with a shift or a mask and no shuffle.  Two chains (two
 * read streams) keep a row at memory speed; splitting the row by halves, not by alternate
 * vectors, lets a tile keep one accumulator per (row, column) and half after half run
 * vec_dot's fmas in vec_dot's order, in blocks of 4 rows x 3 columns (below).  nv is a
 * multiple of 64 so that each half is whole 64-byte lines of 16-bit values (the tile's loop). */
#define QGEMV_DOT_FLOAT_HALVES(T, half16, x, y)                                            \
    const int64_t nv_ = n / 64 * 64, nh_ = nv_ / 2;                                        \
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();                        \
    for (; i < nh_; i += 16) {                                                             \
        if (sizeof(T) < 4 && !(i & 31)) {   /* f32: the hardware's prefetch alone is faster */ \
            QGEMV_PREFETCH_LINE((x) + i);                                                  \
            QGEMV_PREFETCH_LINE((x) + nh_ + i);                                            \
        }                                                                                  \
        acc0 = _mm256_fmadd_ps(half16((x) + i, 0), half16((y) + i, 0), acc0);              \
        acc1 = _mm256_fmadd_ps(half16((x) + nh_ + i, 0), half16((y) + nh_ + i, 0), acc1);  \
        acc0 = _mm256_fmadd_ps(half16((x) + i, 1), half16((y) + i, 1), acc0);              \
        acc1 = _mm256_fmadd_ps(half16((x) + nh_ + i, 1), half16((y) + nh_ + i, 1), acc1);  \
    }                                                                                      \
    i = nv_;                                                                               \
    sum = qgemv_hsum_f32x8(_mm256_add_ps(acc0, acc1));
static inline __m256 qgemv_half16_f32(const float *p, int h) { return _mm256_loadu_ps(p + 8 * h); }
#endif

/* sum a[i] b[i], float32: independent accumulators (AVX2: vec_dot's two, QGEMV_DOT_FLOAT_HALVES) */
static float dot_f32(int64_t n, const float *restrict a, const float *restrict b) {
    int64_t i = 0;
    float sum = 0.0f;
#if defined(QGEMV_AVX512)
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (; i + 64 <= n; i += 64)
        for (int k = 0; k < 4; k++)
            acc[k] = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16 * k), _mm512_loadu_ps(b + i + 16 * k), acc[k]);
    sum = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
#elif defined(QGEMV_AVX2)
    QGEMV_DOT_FLOAT_HALVES(float, qgemv_half16_f32, a, b)
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
#define QGEMV_DEFINE_VEC_DOT_HALF(name, to_f32, half16)                                     \
    static float vec_dot_##name##_##name(int64_t n, const void *restrict w, const void *restrict a) { \
        const uint16_t *x = (const uint16_t *)w, *y = (const uint16_t *)a;                 \
        int64_t i = 0;                                                                     \
        float sum = 0.0f;                                                                  \
        QGEMV_VEC_DOT_HALF_SIMD(half16)                                                    \
        for (; i < n; i++) sum += to_f32(x[i]) * to_f32(y[i]);                             \
        return sum;                                                                        \
    }

#if defined(QGEMV_AVX2)
static inline __m256 qgemv_half16_f16(const uint16_t *p, int h) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + 8 * h)));
}
/* bf16 is the high half of a float32: a 32-bit lane holds value 2 k (low) and 2 k + 1 (high) */
static inline __m256 qgemv_half16_bf16(const uint16_t *p, int h) {
    const __m256i v = _mm256_loadu_si256((const __m256i *)p);
    return _mm256_castsi256_ps(h ? _mm256_and_si256(v, _mm256_set1_epi32((int)0xffff0000u)) : _mm256_slli_epi32(v, 16));
}
#define QGEMV_VEC_DOT_HALF_SIMD(half16) QGEMV_DOT_FLOAT_HALVES(uint16_t, half16, x, y)
#else
#define QGEMV_VEC_DOT_HALF_SIMD(half16)                                                    \
    float acc[8] = {0};                                                                    \
    for (; i + 8 <= n; i += 8)                                                             \
        for (int k = 0; k < 8; k++) acc[k] += half16(x[i + k]) * half16(y[i + k]);         \
    for (int k = 0; k < 8; k++) sum += acc[k];
#define qgemv_half16_f16 qgemv_fp16_to_fp32   /* portable: one value at a time */
#define qgemv_half16_bf16 qgemv_bf16_to_fp32
#endif

QGEMV_DEFINE_VEC_DOT_HALF(f16, qgemv_fp16_to_fp32, qgemv_half16_f16)
QGEMV_DEFINE_VEC_DOT_HALF(bf16, qgemv_bf16_to_fp32, qgemv_half16_bf16)

/* ---------------------------------------------------------------- tiles (src/tiles.h)
 * A batch against a slab of rows, by blocks of 4 rows x 3 columns: a block runs half 0 of the
 * rows, then half 1, with one accumulator per (row, column) in registers: 12 accumulators, 7
 * loads (f16, bf16: widenings) per 12 fmas, which fills the 16 registers exactly.  That holds
 * only with the prefetches outside the loop that does the work (one per 64-byte line, its own
 * loop level): with a prefetch branch inside it, GCC kept 3 of f16's 12 accumulators on the
 * stack, and f16 and bf16 had to take 2 columns.  C harness, 4096 x 4096, 2 threads, 2 -> 3
 * columns: f16 batch 32 11.4-12.2 -> 9.3-9.8 ms, batch 8 3.0-3.6 -> 2.7-2.8 ms; bf16 batch 32
 * 12.7-15.7 -> 11.8 ms; f32 batch 32 15.6-17.5 -> 14.7-15.8 ms.  The 4 rows, prefetched by
 * their first column block, stay in L1 while they meet every column block; the later blocks share out the next 4 rows among
 * them and prefetch those into L2 a line as they read one, so the memory streams while the
 * cache serves (the first block alone left it idle three quarters of the time at batch 8).
 * The fmas, the sum and the scalar tail of every (row, column) are vec_dot's: the tile gives
 * vec_dot's bits. */
#if defined(QGEMV_AVX2)
#define QGEMV_FLOAT_AHEAD 512    /* values a row block's first column block prefetches ahead */
#define QGEMV_FLOAT_TILE_RB 4
#define QGEMV_FLOAT_TILE_CB 3
#define QGEMV_DEFINE_FLOAT_TILE(name, T, half16, to_f32)                                     \
    QGEMV_ALWAYS_INLINE void float_block_##name(int64_t n, const T *const x[QGEMV_FLOAT_TILE_RB], \
                                                const T *const y[QGEMV_FLOAT_TILE_CB], const int RB, const int CB, \
                                                const int prefetch, const T *const next[QGEMV_FLOAT_TILE_RB], \
                                                const int nnext, float *out, int64_t out_stride) { \
        const int64_t nv = n / 64 * 64, nh = nv / 2;                                       \
        __m256 s0[QGEMV_FLOAT_TILE_RB][QGEMV_FLOAT_TILE_CB], s[QGEMV_FLOAT_TILE_RB][QGEMV_FLOAT_TILE_CB]; \
        for (int h = 0; h < 2; h++) {                                                      \
            for (int r = 0; r < RB; r++)                                                   \
                for (int c = 0; c < CB; c++) s[r][c] = _mm256_setzero_ps();                \
            const int64_t end = (h + 1) * nh, line = 64 / (int64_t)sizeof(T);             \
            for (int64_t i0 = h * nh; i0 < end; i0 += line) {   /* nh: whole lines */       \
                /* a prefetch per 64 bytes, outside the loop that does the work: a branch in  \
                 * it cost f16's 4 x 3 blocks 3 of their accumulators */                   \
                if (prefetch)                                                              \
                    for (int r = 0; r < RB; r++) _mm_prefetch((const char *)(x[r] + i0 + QGEMV_FLOAT_AHEAD), _MM_HINT_T0); \
                else                                                                       \
                    for (int k = 0; k < nnext; k++) _mm_prefetch((const char *)(next[k] + i0), _MM_HINT_T1); \
                _Pragma("GCC unroll 1")                                                    \
                for (int64_t i = i0; i < i0 + line; i += 16)                               \
                    for (int j = 0; j < 2; j++) {                                          \
                        __m256 av[QGEMV_FLOAT_TILE_CB];                                \
                        for (int c = 0; c < CB; c++) av[c] = half16(y[c] + i, j);          \
                        for (int r = 0; r < RB; r++) {                                     \
                            const __m256 wv = half16(x[r] + i, j);                         \
                            for (int c = 0; c < CB; c++) s[r][c] = _mm256_fmadd_ps(wv, av[c], s[r][c]); \
                        }                                                                  \
                    }                                                                      \
            }                                                                              \
            if (h == 0)                                                                    \
                for (int r = 0; r < RB; r++)                                               \
                    for (int c = 0; c < CB; c++) s0[r][c] = s[r][c];                       \
        }                                                                                  \
        for (int r = 0; r < RB; r++)                                                       \
            for (int c = 0; c < CB; c++) {                                                 \
                float sum = qgemv_hsum_f32x8(_mm256_add_ps(s0[r][c], s[r][c]));            \
                for (int64_t i = nv; i < n; i++) sum += to_f32(x[r][i]) * to_f32(y[c][i]);  \
                out[r * out_stride + c] = sum;                                             \
            }                                                                              \
    }                                                                                      \
    static void vec_dot_tile_##name##_##name(int64_t n, const void *restrict w, int64_t row_stride, \
                                             int64_t nrows, const void *restrict a, int64_t act_stride, \
                                             int64_t ncols, float *restrict out, int64_t out_stride) { \
        QGEMV_TILE_ONE_COLUMN(vec_dot_##name##_##name, n, w, row_stride, nrows, a, ncols, out, out_stride); \
        const int64_t passes = (ncols + QGEMV_FLOAT_TILE_CB - 1) / QGEMV_FLOAT_TILE_CB;          \
        for (int64_t r = 0; r < nrows; r += QGEMV_FLOAT_TILE_RB) {                         \
            const int RB = nrows - r >= QGEMV_FLOAT_TILE_RB ? QGEMV_FLOAT_TILE_RB : (int)(nrows - r); \
            const T *x[QGEMV_FLOAT_TILE_RB];                                               \
            for (int k = 0; k < QGEMV_FLOAT_TILE_RB; k++)                                  \
                x[k] = (const T *)((const uint8_t *)w + (r + (k < RB ? k : RB - 1)) * row_stride); \
            for (int64_t c = 0; c < ncols; c += QGEMV_FLOAT_TILE_CB) {                        \
                /* block p > 0 prefetches its share of the next 4 rows (past the tile's end too: \
                 * the next tile's first rows) into L2, a line as it reads one */          \
                const int64_t p = c / QGEMV_FLOAT_TILE_CB;                                    \
                const int k0 = p ? (int)((p - 1) * QGEMV_FLOAT_TILE_RB / (passes - 1)) : 0;  \
                const int k1 = p ? (int)(p * QGEMV_FLOAT_TILE_RB / (passes - 1)) : 0;        \
                const T *next[QGEMV_FLOAT_TILE_RB];                                        \
                for (int k = k0; k < k1; k++) next[k - k0] = (const T *)((const uint8_t *)w + (r + RB + k) * row_stride); \
                const int CB = ncols - c >= QGEMV_FLOAT_TILE_CB ? QGEMV_FLOAT_TILE_CB : (int)(ncols - c); \
                const T *y[QGEMV_FLOAT_TILE_CB];                                       \
                for (int k = 0; k < QGEMV_FLOAT_TILE_CB; k++)                          \
                    y[k] = (const T *)((const uint8_t *)a + (c + (k < CB ? k : CB - 1)) * act_stride); \
                float *o = out + r * out_stride + c;                                       \
                switch (RB * 4 + CB) {  /* (RB, CB) as constants, each block compiled once */ \
                QGEMV_FLOAT_BLOCK_CASES(name)                             \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }
#define QGEMV_FLOAT_BLOCK_CASE(name, rb, cb)                                                 \
    case rb * 4 + cb: float_block_##name(n, x, y, rb, cb, c == 0, next, k1 - k0, o, out_stride); break;
/* the blocks a tile can meet: 1-4 rows x 1-3 columns */
#define QGEMV_FLOAT_BLOCK_CASES(name)                                                        \
    QGEMV_FLOAT_BLOCK_CASE(name, 4, 3) QGEMV_FLOAT_BLOCK_CASE(name, 4, 2) QGEMV_FLOAT_BLOCK_CASE(name, 4, 1) \
    QGEMV_FLOAT_BLOCK_CASE(name, 3, 3) QGEMV_FLOAT_BLOCK_CASE(name, 3, 2) QGEMV_FLOAT_BLOCK_CASE(name, 3, 1) \
    QGEMV_FLOAT_BLOCK_CASE(name, 2, 3) QGEMV_FLOAT_BLOCK_CASE(name, 2, 2) QGEMV_FLOAT_BLOCK_CASE(name, 2, 1) \
    QGEMV_FLOAT_BLOCK_CASE(name, 1, 3) QGEMV_FLOAT_BLOCK_CASE(name, 1, 2) QGEMV_FLOAT_BLOCK_CASE(name, 1, 1)
static inline float qgemv_f32_itself(float v) { return v; }
QGEMV_DEFINE_FLOAT_TILE(f16, uint16_t, qgemv_half16_f16, qgemv_fp16_to_fp32)
QGEMV_DEFINE_FLOAT_TILE(bf16, uint16_t, qgemv_half16_bf16, qgemv_bf16_to_fp32)
#if defined(QGEMV_AVX512)
/* dot_f32 runs 16-lane accumulators here: f32 keeps the generic tile */
#define QGEMV_TILES_ELEMENTS(X) X(f16, f16) X(bf16, bf16)
#else
QGEMV_DEFINE_FLOAT_TILE(f32, float, qgemv_half16_f32, qgemv_f32_itself)
#define QGEMV_TILES_ELEMENTS(X) X(f32, f32) X(f16, f16) X(bf16, bf16)
#endif
#else
#define QGEMV_TILES_ELEMENTS(X)   /* portable: the generic tiles (src/tiles.h) */
#endif
