/* Element formats (block size 1): f32, f16, bf16, f64 and the integers.
 *
 * dequant_row_<name>: x -> float32, exact where float32 holds the value, otherwise rounded
 * to nearest even (f64, i32, i64), as numpy's astype(float32).
 * vec_dot_<name>_<name>: the float formats multiply against activations of their own type,
 * accumulating in float32 (ggml_vec_dot_f16 / _bf16 / _f32).
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

/* sum a[i] b[i], float32, four independent accumulators */
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
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++)
            acc[k] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8 * k), _mm256_loadu_ps(b + i + 8 * k), acc[k]);
    sum = qgemv_hsum_f32x8(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
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
#define QGEMV_DEFINE_VEC_DOT_HALF(name, to_f32, load8)                                      \
    static float vec_dot_##name##_##name(int64_t n, const void *restrict w, const void *restrict a) { \
        const uint16_t *x = (const uint16_t *)w, *y = (const uint16_t *)a;                 \
        int64_t i = 0;                                                                     \
        float sum = 0.0f;                                                                  \
        QGEMV_VEC_DOT_HALF_SIMD(load8)                                                     \
        for (; i < n; i++) sum += to_f32(x[i]) * to_f32(y[i]);                             \
        return sum;                                                                        \
    }

#if defined(QGEMV_AVX2)
static inline __m256 qgemv_load8_f16(const uint16_t *p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
static inline __m256 qgemv_load8_bf16(const uint16_t *p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}
#define QGEMV_VEC_DOT_HALF_SIMD(load8)                                                     \
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()}; \
    for (; i + 32 <= n; i += 32) {                                                         \
        QGEMV_PREFETCH_STREAM(x + i, 64);                                                  \
        for (int k = 0; k < 4; k++)                                                        \
            acc[k] = _mm256_fmadd_ps(load8(x + i + 8 * k), load8(y + i + 8 * k), acc[k]);  \
    }                                                                                      \
    sum = qgemv_hsum_f32x8(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
#else
#define QGEMV_VEC_DOT_HALF_SIMD(load8)                                                     \
    float acc[8] = {0};                                                                    \
    for (; i + 8 <= n; i += 8)                                                             \
        for (int k = 0; k < 8; k++) acc[k] += load8(x[i + k]) * load8(y[i + k]);           \
    for (int k = 0; k < 8; k++) sum += acc[k];
#define qgemv_load8_f16 qgemv_fp16_to_fp32
#define qgemv_load8_bf16 qgemv_bf16_to_fp32
#endif

QGEMV_DEFINE_VEC_DOT_HALF(f16, qgemv_fp16_to_fp32, qgemv_load8_f16)
QGEMV_DEFINE_VEC_DOT_HALF(bf16, qgemv_bf16_to_fp32, qgemv_load8_bf16)
