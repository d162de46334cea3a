/* Weight quantizers of the formats whose block spans several q8_0 blocks (fp4_bits.h): nvfp4,
 * q1_0, q2_0.  ggml's quantize_nvfp4 / quantize_q1_0 / quantize_q2_0 are their reference
 * quantizers whatever the imatrix (q1_0 and q2_0 take it only to walk rows), so the imatrix
 * is ignored here too.  Arithmetic and helpers: quantize_common.h, quantize_q32.h.
 */

/* ---------------------------------------------------------------- nvfp4: x = d_s kvalues_mxfp4[q] / 2 */

/* ggml_fp32_to_ue4m3 of x = amax / 6 (x >= 0): 0 for x = 0; subnormals (x < 2^-6) as
 * trunc(x 2^9 + 0.5) clamped to [1, 7] (0 below half the smallest); normals round their
 * 3-bit mantissa half up on bit 19, saturating at 0x7e (448) */
static inline uint8_t qgemv_fp32_to_ue4m3(float x) {
    if (!(x > 0.0f)) return 0;
    if (x > 448.0f) x = 448.0f;
    const uint32_t bits = qgemv_f32_to_bits(x);
    int exp = (int)((bits >> 23) & 0xff) - 127 + 7;
    if (exp <= 0) {
        const int man = (int)(x * 512.0f + 0.5f);
        return man < 1 ? 0 : (uint8_t)(man > 7 ? 7 : man);
    }
    if (exp >= 15) return 0x7e;
    int man = (int)((bits >> 20) & 7) + (int)((bits >> 19) & 1);
    if (man > 7) {
        man = 0;
        if (++exp >= 15) return 0x7e;
    }
    return (uint8_t)((exp << 3) | man);
}

#if defined(QGEMV_AVX2)
/* qgemv_nearest_mxfp4 of 8 values: the same |level e - x| per level, the first minimum kept */
static inline __m256i qgemv_nearest_mxfp4_8(const float *x, float e) {
    const __m256 xv = _mm256_loadu_ps(x), ve = _mm256_set1_ps(e);
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 best_err = _mm256_and_ps(_mm256_sub_ps(_mm256_mul_ps(_mm256_set1_ps((float)kvalues_mxfp4[0]), ve), xv), abs_mask);
    __m256i best = _mm256_setzero_si256();
    for (int i = 1; i < 16; i++) {
        const __m256 err = _mm256_and_ps(_mm256_sub_ps(_mm256_mul_ps(_mm256_set1_ps((float)kvalues_mxfp4[i]), ve), xv), abs_mask);
        const __m256 better = _mm256_cmp_ps(err, best_err, _CMP_LT_OQ);
        best_err = _mm256_blendv_ps(best_err, err, better);
        best = _mm256_blendv_epi8(best, _mm256_set1_epi32(i), _mm256_castps_si256(better));
    }
    return best;
}
#endif

/* per 16-value sub-block: d_s = ue4m3(amax / 6) (amax lands on the top level 6), then the
 * level nearest x / (d_s / 2), first on ties (qgemv_nearest_mxfp4) */
static void quantize_row_nvfp4_ref(const float *restrict x, block_nvfp4 *restrict y, int64_t n) {
    for (int64_t ib = 0; ib < n / QK_NVFP4; ib++) {
        for (int s = 0; s < QK_NVFP4 / QK_NVFP4_SUB; s++) {
            const float *xs = x + QK_NVFP4 * ib + QK_NVFP4_SUB * s;
            const uint8_t ue = qgemv_fp32_to_ue4m3(qgemv_absmax(xs, QK_NVFP4_SUB) / 6.0f);
            const float d = qgemv_ue4m3_to_fp32_half(ue);
            y[ib].d[s] = ue;
#if defined(QGEMV_AVX2)
            const __m256i lo = qgemv_nearest_mxfp4_8(xs, d), hi = qgemv_nearest_mxfp4_8(xs + 8, d);
            const __m256i both = _mm256_or_si256(lo, _mm256_slli_epi32(hi, 4));
            const __m128i b16 = _mm_packs_epi32(_mm256_castsi256_si128(both), _mm256_extracti128_si256(both, 1));
            _mm_storel_epi64((__m128i *)(y[ib].qs + 8 * s), _mm_packus_epi16(b16, b16));
#else
            for (int j = 0; j < QK_NVFP4_SUB / 2; j++)
                y[ib].qs[8 * s + j] = (uint8_t)(qgemv_nearest_mxfp4(xs[j], d) | qgemv_nearest_mxfp4(xs[8 + j], d) << 4);
#endif
        }
    }
}

static void quantize_nvfp4(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    (void)qw;
    quantize_row_nvfp4_ref(x, y, n);
}

/* ---------------------------------------------------------------- q1_0: x = b ? d : -d */

/* d = mean |x| (summed in order), bit j set where x[j] >= 0 (so -0 too) */
static void quantize_row_q1_0_ref(const float *restrict x, block_q1_0 *restrict y, int64_t n) {
    for (int64_t ib = 0; ib < n / QK1_0; ib++, x += QK1_0) {
        float sum_abs = 0.0f;
        for (int j = 0; j < QK1_0; j++) sum_abs += fabsf(x[j]);
        y[ib].d = qgemv_fp32_to_fp16(sum_abs / (float)QK1_0);
        for (int k = 0; k < QK1_0 / 8; k++) {
            uint8_t byte = 0;
            for (int j = 0; j < 8; j++) byte |= (uint8_t)((x[8 * k + j] >= 0.0f) << j);
            y[ib].qs[k] = byte;
        }
    }
}

static void quantize_q1_0(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    (void)qw;
    quantize_row_q1_0_ref(x, y, n);
}

/* ---------------------------------------------------------------- q2_0: x = (q - 1) d */

/* d = amax, q = clamp(roundf(x / d) + 1, 0, 3) (half away from zero; x / d as x (1 / d)) */
static void quantize_row_q2_0_ref(const float *restrict x, block_q2_0 *restrict y, int64_t n) {
    for (int64_t ib = 0; ib < n / QK2_0; ib++, x += QK2_0) {
        const float d = qgemv_absmax(x, QK2_0);
        const float id = d > 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = qgemv_fp32_to_fp16(d);
        for (int k = 0; k < QK2_0 / 4; k++) {
            uint8_t byte = 0;
            for (int j = 0; j < 4; j++) {
                const int q = qgemv_clamp_int(qgemv_round_half_away(x[4 * k + j] * id) + 1, 0, 3);
                byte |= (uint8_t)(q << 2 * j);
            }
            y[ib].qs[k] = byte;
        }
    }
}

static void quantize_q2_0(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    (void)qw;
    quantize_row_q2_0_ref(x, y, n);
}
