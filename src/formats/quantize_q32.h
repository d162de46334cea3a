/* Weight quantizers of the element formats and the 32-value block formats: f32, f16, bf16,
 * q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl, mxfp4 (and the activation formats q8_1, q8_K), and
 * iq4_xs, whose 256-value super-blocks are eight iq4_nl block searches under one f16 scale.
 *
 * quantize_<name>(x, y, n, imatrix) is ggml's quantize_<name> (what ggml_quantize_chunk
 * calls) for one row: without an imatrix the reference quantize_row_<name>_ref, with one the
 * importance-weighted search where ggml has one (q4_0, q4_1, q5_0, q5_1, iq4_nl, iq4_xs; the
 * others ignore it, as ggml does).  Arithmetic and helpers: quantize_common.h.
 */

/* L[j] = min(maxq, (int8_t)(int32_t)((x[j] - sub) id + add)) for 32 values: ggml's
 * "(int8_t)(v)" of q4_0 .. q5_1 is x86's truncating conversion, keeping the low byte (sub = 0
 * leaves x exact).  The AVX2 path does the same IEEE operations, 8 lanes at a time. */
static inline void qgemv_trunc_levels_32(const float *x, float sub, float id, float add, int8_t maxq,
                                         uint8_t L[32]) {
#if defined(QGEMV_AVX2)
    const __m256 vsub = _mm256_set1_ps(sub), vid = _mm256_set1_ps(id), vadd = _mm256_set1_ps(add);
    const __m256i low_byte = _mm256_set1_epi32(0xff);
    __m256i q[4];
    for (int k = 0; k < 4; k++) {
        const __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + 8 * k), vsub), vid), vadd);
        q[k] = _mm256_and_si256(_mm256_cvttps_epi32(v), low_byte);
    }
    /* packs interleave the 128-bit lanes; the permute puts values 0..31 back in order */
    const __m256i bytes = _mm256_packus_epi16(_mm256_packus_epi32(q[0], q[1]), _mm256_packus_epi32(q[2], q[3]));
    const __m256i ordered = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *)L, _mm256_min_epi8(ordered, _mm256_set1_epi8(maxq)));
#else
    for (int j = 0; j < 32; j++) {
        const int8_t q = (int8_t)(int32_t)((x[j] - sub) * id + add);
        L[j] = (uint8_t)(q < maxq ? q : maxq);
    }
#endif
}

/* 32 4-bit levels -> 16 bytes: value j in the low nibble of byte j, value j + 16 in the high
 * (ggml's "qs[j] = L[j]; qs[j] |= L[j + 16] << 4") */
static inline void qgemv_pack_nibbles_32(const uint8_t L[32], uint8_t qs[16]) {
#if defined(QGEMV_AVX2)
    const __m128i lo = _mm_loadu_si128((const __m128i *)L), hi = _mm_loadu_si128((const __m128i *)(L + 16));
    const __m128i hi4 = _mm_and_si128(_mm_slli_epi16(hi, 4), _mm_set1_epi8((char)0xf0));
    _mm_storeu_si128((__m128i *)qs, _mm_or_si128(lo, hi4));
#else
    for (int j = 0; j < 16; j++) qs[j] = (uint8_t)(L[j] | (L[j + 16] << 4));
#endif
}

/* 32 5-bit levels -> their low nibbles as above, bit 4 of value j in bit j of qh */
static inline void qgemv_pack_5bit_32(const uint8_t L[32], uint8_t qs[16], uint8_t qh_out[4]) {
#if defined(QGEMV_AVX2)
    const __m256i all = _mm256_loadu_si256((const __m256i *)L);
    const uint32_t qh = (uint32_t)_mm256_movemask_epi8(_mm256_slli_epi16(all, 3));   /* bit 4 -> bit 7 */
    const __m128i m = _mm_set1_epi8(0x0f);
    const __m128i lo = _mm_and_si128(_mm256_castsi256_si128(all), m);
    const __m128i hi = _mm_slli_epi16(_mm_and_si128(_mm256_extracti128_si256(all, 1), m), 4);
    _mm_storeu_si128((__m128i *)qs, _mm_or_si128(lo, hi));
#else
    uint32_t qh = 0;
    for (int j = 0; j < 16; j++) {
        qs[j] = (uint8_t)((L[j] & 0x0f) | ((L[j + 16] & 0x0f) << 4));
        qh |= (uint32_t)(L[j] >> 4 & 1) << j;
        qh |= (uint32_t)(L[j + 16] >> 4 & 1) << (j + 16);
    }
#endif
    memcpy(qh_out, &qh, 4);
}

/* The scans below give ggml's answers (rows are finite) through integer maxima, which
 * vectorize where its float "if (v < min) min = v" scans do not: the magnitude bits of a
 * float order as its |value|, and bits ^ (sign ? 0x7fffffff : 0) as its value. */

/* the value of largest magnitude of 32, the first one on ties, +0 if all are zero (ggml's
 * "if (amax < |v|) { amax = |v|; max = v; }" of q4_0 / q5_0) */
static inline float qgemv_signed_absmax_32(const float *x) {
    uint32_t amax = 0;
    for (int j = 0; j < 32; j++) {
        const uint32_t a = qgemv_f32_to_bits(x[j]) & 0x7fffffffu;
        amax = a > amax ? a : amax;
    }
    if (amax == 0) return 0.0f;
    int first = 32;
    for (int j = 31; j >= 0; j--) first = (qgemv_f32_to_bits(x[j]) & 0x7fffffffu) == amax ? j : first;
    return x[first];
}

static inline int32_t qgemv_ordered_bits(uint32_t u) {
    return (int32_t)(u ^ ((uint32_t)((int32_t)u >> 31) & 0x7fffffffu));
}

/* the first of the zeros of x when v is a zero (+0 and -0 compare equal, and ggml keeps the
 * first value it meets), else v */
static inline float qgemv_first_zero_32(const float *x, float v) {
    if (v != 0.0f) return v;
    int j = 0;
    while (x[j] != 0.0f) j++;
    return x[j];
}

/* min and max of 32 values as ggml's "if (v < min) min = v; if (v > max) max = v;" */
static inline void qgemv_min_max_32(const float *x, float *min_out, float *max_out) {
    int32_t kmin = INT32_MAX, kmax = INT32_MIN;
    for (int j = 0; j < 32; j++) {
        const int32_t k = qgemv_ordered_bits(qgemv_f32_to_bits(x[j]));
        kmin = k < kmin ? k : kmin;
        kmax = k > kmax ? k : kmax;
    }
    *min_out = qgemv_first_zero_32(x, qgemv_bits_to_f32((uint32_t)qgemv_ordered_bits((uint32_t)kmin)));
    *max_out = qgemv_first_zero_32(x, qgemv_bits_to_f32((uint32_t)qgemv_ordered_bits((uint32_t)kmax)));
}

/* ---------------------------------------------------------------- element formats */

static void quantize_f32(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    (void)qw;
    quantize_row_f32(x, y, n);
}

/* f32 checked as it is copied, one pass (src/kernels.c: overrides quantize_checked_f32) */
static int quantize_fused_f32(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    (void)qw;
    return copy_all_finite(x, (float *)y, n);
}
#define QGEMV_QUANTIZE_FUSED(X) X(f32)

static void quantize_f16(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    (void)qw;
    quantize_row_f16(x, y, n);
}

static void quantize_bf16(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    (void)qw;
    quantize_row_bf16(x, y, n);
}

/* ---------------------------------------------------------------- q4_0: x = d (q - 8) */

/* d = max / -8 (max: the value of largest magnitude, so it lands on q = 0),
 * q = min(15, trunc(x / d + 8.5)) */
static void quantize_row_q4_0_ref(const float *restrict x, block_q4_0 *restrict y, int64_t n) {
    for (int64_t ib = 0; ib < n / QK4_0; ib++, x += QK4_0) {
        const float d = qgemv_signed_absmax_32(x) / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = qgemv_fp32_to_fp16(d);
        uint8_t L[32];
        qgemv_trunc_levels_32(x, 0.0f, id, 8.5f, 15, L);
        qgemv_pack_nibbles_32(L, y[ib].qs);
    }
}

/* weighted least-squares levels in [0, 16) per block, w = qw sqrt(sigma2 + x^2) */
static void quantize_row_q4_0_imatrix(const float *restrict x, block_q4_0 *restrict y, int64_t n,
                                      const float *restrict qw) {
    const float sigma2 = qgemv_mean_square(x, n);
    for (int64_t ib = 0; ib < n / QK4_0; ib++, x += QK4_0, qw += QK4_0) {
        float w[32];
        int8_t L[32];
        qgemv_importance(x, qw, sigma2, w, 32);
        y[ib].d = qgemv_fp32_to_fp16(qgemv_make_qx_quants(32, 8, x, L, w));
        qgemv_pack_nibbles_32((const uint8_t *)L, y[ib].qs);
    }
}

static void quantize_q4_0(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    if (qw) quantize_row_q4_0_imatrix(x, y, n, qw);
    else quantize_row_q4_0_ref(x, y, n);
}

/* ---------------------------------------------------------------- q4_1: x = d q + m */

/* m = min, d = (max - min) / 15, q = min(15, trunc((x - m) / d + 0.5)) */
static void quantize_row_q4_1_ref(const float *restrict x, block_q4_1 *restrict y, int64_t n) {
    for (int64_t ib = 0; ib < n / QK4_1; ib++, x += QK4_1) {
        float min, max;
        qgemv_min_max_32(x, &min, &max);
        const float d = (max - min) / 15.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = qgemv_fp32_to_fp16(d);
        y[ib].m = qgemv_fp32_to_fp16(min);
        uint8_t L[32];
        qgemv_trunc_levels_32(x, min, id, 0.5f, 15, L);
        qgemv_pack_nibbles_32(L, y[ib].qs);
    }
}

/* weighted least-squares scale and minimum per block (make_qkx3_quants), m = -the_min */
static void quantize_row_q4_1_imatrix(const float *restrict x, block_q4_1 *restrict y, int64_t n,
                                      const float *restrict qw) {
    const float sigma2 = qgemv_mean_square(x, n);
    for (int64_t ib = 0; ib < n / QK4_1; ib++, x += QK4_1, qw += QK4_1) {
        float w[32], the_min;
        uint8_t L[32];
        qgemv_importance(x, qw, sigma2, w, 32);
        const float d = qgemv_make_qkx3_quants(32, 15, x, w, L, &the_min, -0.9f, 0.05f, 36, 0);
        y[ib].d = qgemv_fp32_to_fp16(d);
        y[ib].m = qgemv_fp32_to_fp16(-the_min);
        qgemv_pack_nibbles_32(L, y[ib].qs);
    }
}

static void quantize_q4_1(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    if (qw) quantize_row_q4_1_imatrix(x, y, n, qw);
    else quantize_row_q4_1_ref(x, y, n);
}

/* ---------------------------------------------------------------- q5_0: x = d (q - 16) */

/* d = max / -16, q = min(31, trunc(x / d + 16.5)) */
static void quantize_row_q5_0_ref(const float *restrict x, block_q5_0 *restrict y, int64_t n) {
    for (int64_t ib = 0; ib < n / QK5_0; ib++, x += QK5_0) {
        const float d = qgemv_signed_absmax_32(x) / -16.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = qgemv_fp32_to_fp16(d);
        uint8_t L[32];
        qgemv_trunc_levels_32(x, 0.0f, id, 16.5f, 31, L);
        qgemv_pack_5bit_32(L, y[ib].qs, y[ib].qh);
    }
}

static void quantize_row_q5_0_imatrix(const float *restrict x, block_q5_0 *restrict y, int64_t n,
                                      const float *restrict qw) {
    const float sigma2 = qgemv_mean_square(x, n);
    for (int64_t ib = 0; ib < n / QK5_0; ib++, x += QK5_0, qw += QK5_0) {
        float w[32];
        int8_t L[32];
        qgemv_importance(x, qw, sigma2, w, 32);
        y[ib].d = qgemv_fp32_to_fp16(qgemv_make_qx_quants(32, 16, x, L, w));
        qgemv_pack_5bit_32((const uint8_t *)L, y[ib].qs, y[ib].qh);
    }
}

static void quantize_q5_0(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    if (qw) quantize_row_q5_0_imatrix(x, y, n, qw);
    else quantize_row_q5_0_ref(x, y, n);
}

/* ---------------------------------------------------------------- q5_1: x = d q + m */

/* m = min, d = (max - min) / 31, q = trunc((x - m) / d + 0.5) */
static void quantize_row_q5_1_ref(const float *restrict x, block_q5_1 *restrict y, int64_t n) {
    for (int64_t ib = 0; ib < n / QK5_1; ib++, x += QK5_1) {
        float min, max;
        qgemv_min_max_32(x, &min, &max);
        const float d = (max - min) / 31.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = qgemv_fp32_to_fp16(d);
        y[ib].m = qgemv_fp32_to_fp16(min);
        uint8_t L[32];
        qgemv_trunc_levels_32(x, min, id, 0.5f, 127, L);   /* ggml does not clamp q5_1 */
        qgemv_pack_5bit_32(L, y[ib].qs, y[ib].qh);
    }
}

static void quantize_row_q5_1_imatrix(const float *restrict x, block_q5_1 *restrict y, int64_t n,
                                      const float *restrict qw) {
    const float sigma2 = qgemv_mean_square(x, n);
    for (int64_t ib = 0; ib < n / QK5_1; ib++, x += QK5_1, qw += QK5_1) {
        float w[32], the_min;
        uint8_t L[32];
        qgemv_importance(x, qw, sigma2, w, 32);
        const float d = qgemv_make_qkx3_quants(32, 31, x, w, L, &the_min, -0.9f, 0.05f, 36, 0);
        y[ib].d = qgemv_fp32_to_fp16(d);
        y[ib].m = qgemv_fp32_to_fp16(-the_min);
        qgemv_pack_5bit_32(L, y[ib].qs, y[ib].qh);
    }
}

static void quantize_q5_1(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    if (qw) quantize_row_q5_1_imatrix(x, y, n, qw);
    else quantize_row_q5_1_ref(x, y, n);
}

/* ---------------------------------------------------------------- q8_0: x = d q */

/* d = amax / 127, q = roundf(x / d), half away from zero (ggml's quantize_row_q8_0_ref:
 * not the activation quantizer, which rounds x 127 / amax half to even) */
static void quantize_row_q8_0_ref(const float *restrict x, block_q8_0 *restrict y, int64_t n) {
    for (int64_t ib = 0; ib < n / QK8_0; ib++, x += QK8_0) {
        const float d = qgemv_absmax(x, QK8_0) / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = qgemv_fp32_to_fp16(d);
        for (int j = 0; j < QK8_0; j++) y[ib].qs[j] = (int8_t)qgemv_round_half_away(x[j] * id);
    }
}

static void quantize_q8_0(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    (void)qw;
    quantize_row_q8_0_ref(x, y, n);
}

/* q8_1 and q8_K have no ggml_quantize_chunk path: they quantize as ggml's CPU backend
 * quantizes activations (activations.h) */
static void quantize_q8_1(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    (void)qw;
    quantize_row_q8_1(x, y, n);
}

static void quantize_q8_K(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    (void)qw;
    quantize_row_q8_K(x, y, n);
}

/* ---------------------------------------------------------------- iq4_nl: x = d kvalues_iq4nl[q] */

/* ggml's quantize_row_iq4_nl_impl, shared by iq4_nl (super-block of 32) and iq4_xs (256):
 * sigma2 = 2 mean(x^2) over the super-block; w = x^2 without an imatrix, qw sqrt(sigma2 + x^2)
 * with one. */
static inline void qgemv_iq4_weights(const float *restrict x, const float *restrict qw, float sigma2,
                                     float *restrict w) {
    if (qw) qgemv_importance(x, qw, sigma2, w, 32);
    else for (int j = 0; j < 32; j++) w[j] = x[j] * x[j];
}

static inline float qgemv_iq4_sigma2(const float *x, int n) {
    float sigma2 = 0.0f;
    for (int j = 0; j < n; j++) sigma2 += x[j] * x[j];
    return sigma2 * (2.0f / (float)n);
}

/* For 32 values at inverse scale id: the level index nearest id x (qgemv_nearest_level16 of
 * kvalues_iq4nl) into L when L is not NULL, and the terms (w q) x and (w q) q of ggml's sums
 * into tqx, tq2 when w is not NULL.  The AVX2 path counts the midpoints 2 id x reaches (the
 * comparisons of the binary search, the midpoints being sorted) and permutes the level in. */
static inline void qgemv_iq4_terms_32(const float *restrict x, const float *restrict w, float id,
                                      uint8_t *restrict L, float *restrict tqx, float *restrict tq2) {
    const int8_t *values = kvalues_iq4nl;
#if defined(QGEMV_AVX2)
    const __m256 vid = _mm256_set1_ps(id);
    const __m256 lo = _mm256_setr_ps(values[0], values[1], values[2], values[3], values[4], values[5], values[6], values[7]);
    const __m256 hi = _mm256_setr_ps(values[8], values[9], values[10], values[11], values[12], values[13], values[14], values[15]);
    for (int k = 0; k < 32; k += 8) {
        const __m256 xv = _mm256_loadu_ps(x + k);
        const __m256 al = _mm256_mul_ps(vid, xv);
        const __m256 x2 = _mm256_add_ps(al, al);
        __m256i idx = _mm256_setzero_si256();
        for (int j = 1; j < 16; j++) {   /* idx -= (all ones where x2 >= midpoint j) */
            const __m256 mid = _mm256_set1_ps((float)(values[j - 1] + values[j]));
            idx = _mm256_sub_epi32(idx, _mm256_castps_si256(_mm256_cmp_ps(x2, mid, _CMP_GE_OQ)));
        }
        if (w) {
            const __m256 q = _mm256_blendv_ps(_mm256_permutevar8x32_ps(lo, idx), _mm256_permutevar8x32_ps(hi, idx),
                                              _mm256_castsi256_ps(_mm256_slli_epi32(idx, 28)));
            const __m256 wq = _mm256_mul_ps(_mm256_loadu_ps(w + k), q);
            _mm256_storeu_ps(tqx + k, _mm256_mul_ps(wq, xv));
            _mm256_storeu_ps(tq2 + k, _mm256_mul_ps(wq, q));
        }
        if (L) {
            const __m128i i16 = _mm_packs_epi32(_mm256_castsi256_si128(idx), _mm256_extracti128_si256(idx, 1));
            _mm_storel_epi64((__m128i *)(L + k), _mm_packus_epi16(i16, i16));
        }
    }
#else
    for (int j = 0; j < 32; j++) {
        const int l = qgemv_nearest_level16(values, id * x[j]);
        const float q = (float)values[l];
        if (L) L[j] = (uint8_t)l;
        if (w) {
            tqx[j] = w[j] * q * x[j];
            tq2[j] = w[j] * q * q;
        }
    }
#endif
}

/* The scale of one 32-value block (ntry = 7): levels nearest x / d for d = -max / -127, then
 * 15 inverse scales (t - 127) / max, keeping the d that maximises (sum w q x)^2 / sum w q^2;
 * 0 for a block below GROUP_MAX_EPS. */
static float qgemv_iq4_block_scale(const float *restrict x, const float *restrict w) {
    const int8_t *values = kvalues_iq4nl;
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; j++) {
        const float ax = fabsf(x[j]);
        if (ax > amax) { amax = ax; max = x[j]; }
    }
    if (amax < QGEMV_GROUP_MAX_EPS) return 0.0f;
    float tqx[32], tq2[32], sumqx, sumq2;
    float d = -max / (float)values[0];
    qgemv_iq4_terms_32(x, w, 1.0f / d, NULL, tqx, tq2);
    qgemv_sum2_in_order(tqx, tq2, 32, &sumqx, &sumq2);
    d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
    float best = d * sumqx;
    for (int itry = -7; itry <= 7; itry++) {
        qgemv_iq4_terms_32(x, w, (float)(itry + values[0]) / max, NULL, tqx, tq2);
        qgemv_sum2_in_order(tqx, tq2, 32, &sumqx, &sumq2);
        if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    return d;
}

/* the 32 levels nearest x / dl (all level 0's neighbour of 0 when dl = 0), packed */
static inline void qgemv_iq4_levels_32(const float *restrict x, float dl, uint8_t qs[16]) {
    uint8_t L[32];
    qgemv_iq4_terms_32(x, NULL, dl != 0.0f ? 1.0f / dl : 0.0f, L, NULL, NULL);
    qgemv_pack_nibbles_32(L, qs);
}

/* one block: d from the search (over the block alone), levels re-chosen for the final d */
static void quantize_block_iq4_nl(const float *restrict x, block_iq4_nl *restrict y, const float *restrict qw) {
    float w[32];
    qgemv_iq4_weights(x, qw, qgemv_iq4_sigma2(x, 32), w);
    const float d = qgemv_iq4_block_scale(x, w);
    y->d = qgemv_fp32_to_fp16(d);
    qgemv_iq4_levels_32(x, d, y->qs);
}

static void quantize_iq4_nl(const float *restrict x, void *restrict dst, int64_t n, const float *qw) {
    block_iq4_nl *y = (block_iq4_nl *)dst;
    for (int64_t ib = 0; ib < n / QK4_NL; ib++)
        quantize_block_iq4_nl(x + QK4_NL * ib, &y[ib], qw ? qw + QK4_NL * ib : NULL);
}

/* ---------------------------------------------------------------- iq4_xs: x = d (ls - 32) kvalues_iq4nl[q] */

/* One super-block: the 8 block scales of the iq4_nl search (sigma2 over all 256 values),
 * d = -(the scale of largest magnitude) / 32 (-0 when all are 0, as ggml), each scale as
 * ls = clamp(nearest_int(scale / d), -32, 31) + 32, levels re-chosen for d (ls - 32). */
static void quantize_block_iq4_xs(const float *restrict x, block_iq4_xs *restrict y, const float *restrict qw) {
    const float sigma2 = qgemv_iq4_sigma2(x, QK_K);
    float scales[QK_K / 32];
    float max_scale = 0.0f, amax_scale = 0.0f;
    for (int ib = 0; ib < QK_K / 32; ib++) {
        float w[32];
        qgemv_iq4_weights(x + 32 * ib, qw ? qw + 32 * ib : NULL, sigma2, w);
        scales[ib] = qgemv_iq4_block_scale(x + 32 * ib, w);
        if (fabsf(scales[ib]) > amax_scale) { amax_scale = fabsf(scales[ib]); max_scale = scales[ib]; }
    }
    const float d = -max_scale / 32.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y->d = qgemv_fp32_to_fp16(d);
    uint16_t scales_h = 0;
    for (int ib = 0; ib < QK_K / 32; ib++) {
        const int l = qgemv_clamp_int(qgemv_nearest_int(id * scales[ib]), -32, 31);
        qgemv_iq4_levels_32(x + 32 * ib, d * (float)l, y->qs + 16 * ib);
        const int ls = l + 32;
        if (ib % 2 == 0) y->scales_l[ib / 2] = (uint8_t)(ls & 0xf);
        else y->scales_l[ib / 2] |= (uint8_t)((ls & 0xf) << 4);
        scales_h |= (uint16_t)((ls >> 4) << 2 * (ib % 8));
    }
    y->scales_h = scales_h;
}

static void quantize_iq4_xs(const float *restrict x, void *restrict dst, int64_t n, const float *qw) {
    block_iq4_xs *y = (block_iq4_xs *)dst;
    for (int64_t ib = 0; ib < n / QK_K; ib++)
        quantize_block_iq4_xs(x + QK_K * ib, &y[ib], qw ? qw + QK_K * ib : NULL);
}

/* ---------------------------------------------------------------- mxfp4: x = 2^(e-128) kvalues_mxfp4[q] */

/* the index of the first of the 16 levels nearest x / e (ggml's best_index_mxfp4) */
static inline int qgemv_nearest_mxfp4(float x, float e) {
    int best = 0;
    float best_err = fabsf((float)kvalues_mxfp4[0] * e - x);
    for (int i = 1; i < 16; i++) {
        const float err = fabsf((float)kvalues_mxfp4[i] * e - x);
        if (err < best_err) { best = i; best_err = err; }
    }
    return best;
}

/* e = floor(log2(amax)) - 2 + 127 (amax lands on the top level 6 = 12 / 2), nearest level */
static void quantize_row_mxfp4_ref(const float *restrict x, block_mxfp4 *restrict y, int64_t n) {
    for (int64_t ib = 0; ib < n / QK_MXFP4; ib++, x += QK_MXFP4) {
        float amax = 0.0f;
        for (int j = 0; j < QK_MXFP4; j++)
            if (amax < fabsf(x[j])) amax = fabsf(x[j]);
        const uint8_t e = amax > 0.0f ? (uint8_t)(int)(floorf(log2f(amax)) - 2.0f + 127.0f) : 0;
        const float d = qgemv_e8m0_to_fp32_half(e);
        y[ib].e = e;
        uint8_t L[32];
        for (int j = 0; j < 32; j++) L[j] = (uint8_t)qgemv_nearest_mxfp4(x[j], d);
        qgemv_pack_nibbles_32(L, y[ib].qs);
    }
}

static void quantize_mxfp4(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    (void)qw;
    quantize_row_mxfp4_ref(x, y, n);
}
