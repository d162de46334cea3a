/* Weight quantizers of the K-quants q2_K .. q6_K: 256-value super-blocks of 16 or 32-value
 * sub-blocks, each with its own quantized scale (and minimum) under one f16 d (and dmin).
 *
 * Each format's quantize_<name>(x, y, n, imatrix) is ggml's: quantize_row_<name>_ref
 * without an imatrix (a least-squares search per sub-block, then the sub-block scales rounded
 * against the largest), quantize_row_<name>_imatrix with one (sub-blocks fitted with weights
 * qw sqrt(sigma2 + x^2), their scales fitted again with make_qp_quants / make_qx_quants).
 * After the scales are stored, every value is re-quantized against its stored, rounded scale.
 * The arithmetic is ggml's to the operation (quantize_common.h).
 */

/* ---------------------------------------------------------------- the K-quant searches */

/* ggml's make_qkx2_quants: make_qkx3_quants without its rounding guard (quantize_common.h) */
static inline float qgemv_make_qkx2_quants(int n, int nmax, const float *restrict x, const float *restrict weights,
                                           uint8_t *restrict L, float *restrict the_min, float rmin,
                                           float rdelta, int nstep, int use_mad) {
    return qgemv_make_qkx_quants(n, nmax, x, weights, L, the_min, rmin, rdelta, nstep, use_mad, 0);
}

#define QGEMV_Q3_MAX 16

/* the move make_q3_quants considers for values i0 .. n-1 given the sums: slx = sumlx - (w x) l,
 * sl2 = suml2 - (w l) l, l' = clamp(nearest_int(x sl2 / slx)); 8 at a time in AVX2, the same
 * IEEE operations per value */
static inline void qgemv_q3_candidates(int i0, int n, int nmax, float sumlx, float suml2,
                                       const float *restrict x, const float *restrict w,
                                       const float *restrict wx, const float *restrict lf,
                                       float *restrict cslx, float *restrict csl2, int *restrict cl) {
    int i = i0;
#if defined(QGEMV_AVX2)
    const __m256 vsumlx = _mm256_set1_ps(sumlx), vsuml2 = _mm256_set1_ps(suml2);
    const __m256 magic = _mm256_set1_ps(12582912.0f);
    const __m256i lo = _mm256_set1_epi32(-nmax), hi = _mm256_set1_epi32(nmax - 1);
    for (; i < n; i += 8) {   /* lanes past n read the callers' zero padding and are never used */
        const __m256 l = _mm256_loadu_ps(lf + i);
        const __m256 slx = _mm256_sub_ps(vsumlx, _mm256_mul_ps(_mm256_loadu_ps(wx + i), l));
        const __m256 sl2 = _mm256_sub_ps(vsuml2, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(w + i), l), l));
        const __m256 v = _mm256_div_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), sl2), slx);
        __m256i li = _mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(_mm256_add_ps(v, magic)),
                                                       _mm256_set1_epi32(0x007fffff)),
                                      _mm256_set1_epi32(0x00400000));
        li = _mm256_min_epi32(_mm256_max_epi32(li, lo), hi);
        _mm256_storeu_ps(cslx + i, slx);
        _mm256_storeu_ps(csl2 + i, sl2);
        _mm256_storeu_si256((__m256i *)(cl + i), li);
    }
#endif
    for (; i < n; i++) {
        cslx[i] = sumlx - wx[i] * lf[i];
        csl2[i] = suml2 - w[i] * lf[i] * lf[i];
        const int l = qgemv_nearest_int(x[i] * csl2[i] / cslx[i]);
        cl[i] = l < -nmax ? -nmax : l > nmax - 1 ? nmax - 1 : l;
    }
}

/* Symmetric levels L in [0, 2 nmax) for x = scale (L - nmax), from -nmax / max, then up to 5
 * rounds of moving single values to the level that raises (sum w x l)^2 / sum w l^2, w = x^2
 * (ggml's make_q3_quants with do_rmse) */
static float qgemv_make_q3_quants(int n, int nmax, const float *restrict x, int8_t *restrict L) {
    float max = 0.0f, amax = 0.0f;
    for (int i = 0; i < n; i++) {
        const float ax = fabsf(x[i]);
        if (ax > amax) { amax = ax; max = x[i]; }
    }
    if (amax < QGEMV_GROUP_MAX_EPS) {
        memset(L, 0, (size_t)n);
        return 0.0f;
    }
    const float iscale = (float)-nmax / max;
    /* per value: w = x^2, w x, the level as a float, and the candidate move of the pass below
     * (n <= 16, padded for 8-wide loads) */
    float xs[QGEMV_Q3_MAX + 8] = {0}, w[QGEMV_Q3_MAX + 8] = {0}, wx[QGEMV_Q3_MAX + 8] = {0};
    float lf[QGEMV_Q3_MAX + 8] = {0}, cand_slx[QGEMV_Q3_MAX + 8], cand_sl2[QGEMV_Q3_MAX + 8];
    int cand_l[QGEMV_Q3_MAX + 8];
    memcpy(xs, x, (size_t)n * sizeof(float));
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; i++) {
        int l = qgemv_nearest_int(iscale * x[i]);
        l = l < -nmax ? -nmax : l > nmax - 1 ? nmax - 1 : l;
        L[i] = (int8_t)l;
        w[i] = x[i] * x[i];
        wx[i] = w[i] * x[i];
        lf[i] = (float)l;
        sumlx += wx[i] * lf[i];
        suml2 += w[i] * lf[i] * lf[i];
    }
    for (int itry = 0; itry < 5; itry++) {
        int n_changed = 0, stale = 1;
        for (int i = 0; i < n; i++) {
            /* each value's move depends on the sums only: computed for the values still to
             * come (several at once), again whenever a move changes the sums */
            if (stale) {
                qgemv_q3_candidates(i, n, nmax, sumlx, suml2, xs, w, wx, lf, cand_slx, cand_sl2, cand_l);
                stale = 0;
            }
            float slx = cand_slx[i];
            if (slx > 0.0f) {
                float sl2 = cand_sl2[i];
                const int new_l = cand_l[i];
                if (new_l != L[i]) {
                    slx += wx[i] * (float)new_l;
                    sl2 += w[i] * (float)new_l * (float)new_l;
                    if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = (int8_t)new_l;
                        lf[i] = (float)new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        n_changed++;
                        stale = 1;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    for (int i = 0; i < n; i++) L[i] = (int8_t)(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/* Levels L in [0, nmax] for non-negative x = scale L (the sub-block scales and minimums of the
 * imatrix K-quants), weighted by quant_weights: the best of 9 inverse scales, then up to 5
 * rounds of single-value moves (ggml's make_qp_quants) */
static float qgemv_make_qp_quants(int n, int nmax, const float *restrict x, uint8_t *restrict L,
                                  const float *restrict quant_weights) {
    float max = 0.0f;
    for (int i = 0; i < n; i++) max = max > x[i] ? max : x[i];
    if (max < QGEMV_GROUP_MAX_EPS) {
        memset(L, 0, (size_t)n);
        return 0.0f;
    }
    float iscale = (float)nmax / max;
    for (int i = 0; i < n; i++) L[i] = (uint8_t)qgemv_nearest_int(iscale * x[i]);
    const float scale = 1.0f / iscale;
    float best_mse = 0.0f;
    for (int i = 0; i < n; i++) {
        const float diff = x[i] - scale * (float)L[i];
        best_mse += quant_weights[i] * diff * diff;
    }
    for (int is = -4; is <= 4; is++) {
        if (is == 0) continue;
        const float iscale_is = (0.1f * (float)is + (float)nmax) / max;
        const float scale_is = 1.0f / iscale_is;
        float mse = 0.0f;
        for (int i = 0; i < n; i++) {
            int l = qgemv_nearest_int(iscale_is * x[i]);
            l = l < nmax ? l : nmax;
            const float diff = x[i] - scale_is * (float)l;
            mse += quant_weights[i] * diff * diff;
        }
        if (mse < best_mse) {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; i++) {
        int l = qgemv_nearest_int(iscale * x[i]);
        l = l < nmax ? l : nmax;
        L[i] = (uint8_t)l;
        const float w = quant_weights[i];
        sumlx += w * x[i] * (float)l;
        suml2 += w * (float)l * (float)l;
    }
    for (int itry = 0; itry < 5; itry++) {
        int n_changed = 0;
        for (int i = 0; i < n; i++) {
            const float w = quant_weights[i];
            float slx = sumlx - w * x[i] * (float)L[i];
            float sl2 = suml2 - w * (float)L[i] * (float)L[i];
            if (slx > 0.0f && sl2 > 0.0f) {
                int new_l = qgemv_nearest_int(x[i] * sl2 / slx);
                new_l = new_l < nmax ? new_l : nmax;
                if (new_l != L[i]) {
                    slx += w * x[i] * (float)new_l;
                    sl2 += w * (float)new_l * (float)new_l;
                    if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = (uint8_t)new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        n_changed++;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/* the sum of x^2 over a super-block, in order */
static inline float qgemv_sum_squares_256(const float *x) {
    float sum = 0.0f;
    for (int j = 0; j < QK_K; j++) sum += x[j] * x[j];
    return sum;
}

/* ---------------------------------------------------------------- q2_K: x = d sc q - dmin m */

/* levels for the stored scales: q = clamp(round((x + dmin m) / (d sc)), 0, 3), or the search's
 * levels where d sc is 0; then packed */
static inline void qgemv_finish_q2_K(const float *restrict x, block_q2_K *restrict y, uint8_t *restrict L) {
    const float dd = qgemv_fp16_to_fp32(y->d), dmin = qgemv_fp16_to_fp32(y->dmin);
    for (int j = 0; j < QK_K / 16; j++) {
        const float d = dd * (float)(y->scales[j] & 0xf);
        if (d == 0.0f) continue;
        const float dm = dmin * (float)(y->scales[j] >> 4);
        for (int ii = 0; ii < 16; ii++) {
            const int l = qgemv_nearest_int((x[16 * j + ii] + dm) / d);
            L[16 * j + ii] = (uint8_t)(l < 0 ? 0 : l > 3 ? 3 : l);
        }
    }
    qgemv_pack_2bit_256(L, y->qs);
}

/* sub-blocks of 16 fitted by make_qkx2_quants (w = |x|, absolute error), 4-bit scales and
 * minimums against the largest of each */
static void quantize_row_q2_K_ref(const float *restrict x, block_q2_K *restrict y, int64_t n) {
    const float q4scale = 15.0f;
    for (int64_t i = 0; i < n / QK_K; i++, x += QK_K) {
        uint8_t L[QK_K];
        float weights[16], mins[QK_K / 16], scales[QK_K / 16];
        float max_scale = 0.0f, max_min = 0.0f;
        for (int j = 0; j < QK_K / 16; j++) {
            for (int l = 0; l < 16; l++) weights[l] = fabsf(x[16 * j + l]);
            scales[j] = qgemv_make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j],
                                               -0.5f, 0.1f, 15, 1);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        if (max_scale > 0.0f) {
            const float iscale = q4scale / max_scale;
            for (int j = 0; j < QK_K / 16; j++) y[i].scales[j] = (uint8_t)qgemv_nearest_int(iscale * scales[j]);
            y[i].d = qgemv_fp32_to_fp16(max_scale / q4scale);
        } else {
            memset(y[i].scales, 0, QK_K / 16);
            y[i].d = qgemv_fp32_to_fp16(0.0f);
        }
        if (max_min > 0.0f) {
            const float iscale = q4scale / max_min;
            for (int j = 0; j < QK_K / 16; j++)
                y[i].scales[j] = (uint8_t)(y[i].scales[j] | qgemv_nearest_int(iscale * mins[j]) << 4);
            y[i].dmin = qgemv_fp32_to_fp16(max_min / q4scale);
        } else {
            y[i].dmin = qgemv_fp32_to_fp16(0.0f);
        }
        qgemv_finish_q2_K(x, &y[i], L);
    }
}

/* sub-blocks fitted by make_qkx3_quants with w = qw sqrt(sigma2 + x^2), then their scales
 * and minimums by make_qp_quants weighted by each sub-block's total weight */
static void quantize_row_q2_K_imatrix(const float *restrict x, block_q2_K *restrict y, int64_t n,
                                      const float *restrict qw) {
    for (int64_t i = 0; i < n / QK_K; i++, x += QK_K, qw += QK_K) {
        uint8_t L[QK_K], Ls[QK_K / 16], Lm[QK_K / 16];
        float weight[16], mins[QK_K / 16], scales[QK_K / 16], sw[QK_K / 16];
        const float sigma2 = qgemv_sum_squares_256(x) / (float)QK_K;
        for (int j = 0; j < QK_K / 16; j++) {
            qgemv_importance(x + 16 * j, qw + 16 * j, sigma2, weight, 16);
            sw[j] = qgemv_sum_in_order(weight, 16);
            scales[j] = qgemv_make_qkx3_quants(16, 3, x + 16 * j, weight, L + 16 * j, &mins[j],
                                               -0.9f, 0.05f, 36, 0);
        }
        y[i].d = qgemv_fp32_to_fp16(qgemv_make_qp_quants(QK_K / 16, 15, scales, Ls, sw));
        y[i].dmin = qgemv_fp32_to_fp16(qgemv_make_qp_quants(QK_K / 16, 15, mins, Lm, sw));
        for (int j = 0; j < QK_K / 16; j++) y[i].scales[j] = (uint8_t)(Ls[j] | (Lm[j] << 4));
        qgemv_finish_q2_K(x, &y[i], L);
    }
}

static void quantize_q2_K(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    if (qw) quantize_row_q2_K_imatrix(x, y, n, qw);
    else quantize_row_q2_K_ref(x, y, n);
}

/* ---------------------------------------------------------------- q3_K: x = d (sc - 32) q */

/* the 16 6-bit scales l in [0, 64): low nibbles in scales[0..8), top two bits in scales[8..12) */
static inline void qgemv_pack_scales_q3_K(const int l_of[16], uint8_t scales[12]) {
    memset(scales, 0, 12);
    for (int j = 0; j < QK_K / 16; j++) {
        const int l = l_of[j];
        if (j < 8) scales[j] = (uint8_t)(l & 0xf);
        else scales[j - 8] = (uint8_t)(scales[j - 8] | (l & 0xf) << 4);
        scales[j % 4 + 8] = (uint8_t)(scales[j % 4 + 8] | (l >> 4) << (2 * (j / 4)));
    }
}

/* levels for the stored scales, q = clamp(round(x / (d (sc - 32))), -4, 3) + 4, the high bit of
 * each in hmask (values 0-31 in bit 0, 32-63 in bit 1, ...), the low two bits packed */
static inline void qgemv_finish_q3_K(const float *restrict x, block_q3_K *restrict y, int8_t *restrict L) {
    const float dd = qgemv_fp16_to_fp32(y->d);
    for (int j = 0; j < QK_K / 16; j++) {
        int8_t sc = (int8_t)(j < 8 ? y->scales[j] & 0xf : y->scales[j - 8] >> 4);
        sc = (int8_t)((sc | ((y->scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4) - 32);
        const float d = dd * (float)sc;
        if (d == 0.0f) continue;
        int ii = 0;
#if defined(QGEMV_AVX2)
        for (; ii < 16; ii += 8) {   /* the same division and rounding, 8 at a time */
            const __m256 v = _mm256_div_ps(_mm256_loadu_ps(x + 16 * j + ii), _mm256_set1_ps(d));
            __m256i l = _mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(_mm256_add_ps(v, _mm256_set1_ps(12582912.0f))),
                                                          _mm256_set1_epi32(0x007fffff)),
                                         _mm256_set1_epi32(0x00400000));
            l = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(l, _mm256_set1_epi32(-4)), _mm256_set1_epi32(3)),
                                 _mm256_set1_epi32(4));
            const __m128i l16 = _mm_packs_epi32(_mm256_castsi256_si128(l), _mm256_extracti128_si256(l, 1));
            _mm_storel_epi64((__m128i *)(L + 16 * j + ii), _mm_packs_epi16(l16, l16));
        }
#endif
        for (; ii < 16; ii++) {
            const int l = qgemv_nearest_int(x[16 * j + ii] / d);
            L[16 * j + ii] = (int8_t)((l < -4 ? -4 : l > 3 ? 3 : l) + 4);
        }
    }
    memset(y->hmask, 0, QK_K / 8);
    for (int j = 0; j < QK_K; j++) {
        if (L[j] > 3) {
            y->hmask[j % (QK_K / 8)] = (uint8_t)(y->hmask[j % (QK_K / 8)] | 1 << (j / (QK_K / 8)));
            L[j] = (int8_t)(L[j] - 4);
        }
    }
    qgemv_pack_2bit_256((const uint8_t *)L, y->qs);
}

/* sub-blocks of 16 by make_q3_quants, 6-bit scales against the largest magnitude (-32 .. 31) */
static void quantize_row_q3_K_ref(const float *restrict x, block_q3_K *restrict y, int64_t n) {
    for (int64_t i = 0; i < n / QK_K; i++, x += QK_K) {
        int8_t L[QK_K];
        float scales[QK_K / 16];
        float max_scale = 0.0f, amax = 0.0f;
        for (int j = 0; j < QK_K / 16; j++) {
            scales[j] = qgemv_make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
            const float scale = fabsf(scales[j]);
            if (scale > amax) { amax = scale; max_scale = scales[j]; }
        }
        if (max_scale != 0.0f) {
            const float iscale = -32.0f / max_scale;
            int l_of[QK_K / 16];
            for (int j = 0; j < QK_K / 16; j++) {
                int8_t l = (int8_t)qgemv_nearest_int(iscale * scales[j]);
                l = (int8_t)((l < -32 ? -32 : l > 31 ? 31 : l) + 32);
                l_of[j] = l;
            }
            qgemv_pack_scales_q3_K(l_of, y[i].scales);
            y[i].d = qgemv_fp32_to_fp16(1.0f / iscale);
        } else {
            memset(y[i].scales, 0, 12);
            y[i].d = qgemv_fp32_to_fp16(0.0f);
        }
        qgemv_finish_q3_K(x, &y[i], L);
    }
}

/* sub-blocks by make_qx_quants with w = qw sqrt(sigma2 + x^2), sigma2 = 2 mean(x^2); the
 * scales by make_qx_quants again, weighted by each sub-block's total weight */
static void quantize_row_q3_K_imatrix(const float *restrict x, block_q3_K *restrict y, int64_t n,
                                      const float *restrict qw) {
    for (int64_t i = 0; i < n / QK_K; i++, x += QK_K, qw += QK_K) {
        int8_t L[QK_K], Ls[QK_K / 16];
        float scales[QK_K / 16], weight[16], sw[QK_K / 16];
        const float sigma2 = 2.0f * qgemv_sum_squares_256(x) / (float)QK_K;
        for (int j = 0; j < QK_K / 16; j++) {
            qgemv_importance(x + 16 * j, qw + 16 * j, sigma2, weight, 16);
            sw[j] = qgemv_sum_in_order(weight, 16);
            scales[j] = qgemv_make_qx_quants(16, 4, x + 16 * j, L + 16 * j, weight);
        }
        const float d_block = qgemv_make_qx_quants(QK_K / 16, 32, scales, Ls, sw);
        int l_of[QK_K / 16];
        for (int j = 0; j < QK_K / 16; j++) l_of[j] = Ls[j];
        qgemv_pack_scales_q3_K(l_of, y[i].scales);
        y[i].d = qgemv_fp32_to_fp16(d_block);
        qgemv_finish_q3_K(x, &y[i], L);
    }
}

static void quantize_q3_K(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    if (qw) quantize_row_q3_K_imatrix(x, y, n, qw);
    else quantize_row_q3_K_ref(x, y, n);
}

/* ---------------------------------------------------------------- q4_K, q5_K: x = d sc q - dmin m */

/* 8 6-bit scales and minimums -> 12 bytes (ggml's layout, read back by get_scale_min_k4) */
static inline void qgemv_pack_scale_min_k4(const uint8_t ls[8], const uint8_t lm[8], uint8_t scales[12]) {
    for (int j = 0; j < QK_K / 32; j++) {
        if (j < 4) {
            scales[j] = ls[j];
            scales[j + 4] = lm[j];
        } else {
            scales[j + 4] = (uint8_t)((ls[j] & 0xf) | ((lm[j] & 0xf) << 4));
            scales[j - 4] = (uint8_t)(scales[j - 4] | (ls[j] >> 4) << 6);
            scales[j] = (uint8_t)(scales[j] | (lm[j] >> 4) << 6);
        }
    }
}

static inline void qgemv_scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (uint8_t)((q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

/* levels for the stored scales: q = clamp(round((x + dmin m) / (d sc)), 0, nmax) */
static inline void qgemv_requantize_k4(const float *restrict x, qgemv_half d16, qgemv_half dmin16,
                                       const uint8_t *restrict scales, int nmax, uint8_t *restrict L) {
    for (int j = 0; j < QK_K / 32; j++) {
        uint8_t sc, m;
        qgemv_scale_min_k4(j, scales, &sc, &m);
        const float d = qgemv_fp16_to_fp32(d16) * (float)sc;
        if (d == 0.0f) continue;
        const float dm = qgemv_fp16_to_fp32(dmin16) * (float)m;
        for (int ii = 0; ii < 32; ii++) {
            const int l = qgemv_nearest_int((x[32 * j + ii] + dm) / d);
            L[32 * j + ii] = (uint8_t)(l < 0 ? 0 : l > nmax ? nmax : l);
        }
    }
}

/* the reference sub-block fits of q4_K / q5_K: make_qkx2_quants with w = rms(x) + |x| per 32,
 * then 6-bit scales and minimums against the largest of each */
static inline void qgemv_fit_k4_ref(const float *restrict x, int nmax, float rmin, int nstep, uint8_t *restrict L,
                                    uint8_t scales_out[12], qgemv_half *d_out, qgemv_half *dmin_out) {
    uint8_t ls[8], lm[8];
    float weights[32], mins[QK_K / 32], scales[QK_K / 32];
    float max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < QK_K / 32; j++) {
        float sum_x2 = 0.0f;
        for (int l = 0; l < 32; l++) sum_x2 += x[32 * j + l] * x[32 * j + l];
        const float av_x = sqrtf(sum_x2 / 32.0f);
        for (int l = 0; l < 32; l++) weights[l] = av_x + fabsf(x[32 * j + l]);
        scales[j] = qgemv_make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j],
                                           rmin, 0.1f, nstep, 0);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
    for (int j = 0; j < QK_K / 32; j++) {
        const uint8_t s = (uint8_t)qgemv_nearest_int(inv_scale * scales[j]);
        const uint8_t m = (uint8_t)qgemv_nearest_int(inv_min * mins[j]);
        ls[j] = s < 63 ? s : 63;
        lm[j] = m < 63 ? m : 63;
    }
    qgemv_pack_scale_min_k4(ls, lm, scales_out);
    *d_out = qgemv_fp32_to_fp16(max_scale / 63.0f);
    *dmin_out = qgemv_fp32_to_fp16(max_min / 63.0f);
    qgemv_requantize_k4(x, *d_out, *dmin_out, scales_out, nmax, L);
}

/* the imatrix sub-block fits of q4_K / q5_K: make_qkx3_quants with w = qw sqrt(sigma2 + x^2)
 * (sigma2 = 2 mean(x^2) of the super-block), scales and minimums by make_qp_quants */
static inline void qgemv_fit_k4_imatrix(const float *restrict x, const float *restrict qw, int nmax,
                                        uint8_t *restrict L, uint8_t scales_out[12], qgemv_half *d_out,
                                        qgemv_half *dmin_out) {
    uint8_t Ls[8], Lm[8];
    float weights[32], sw[QK_K / 32], mins[QK_K / 32], scales[QK_K / 32];
    const float sigma2 = 2.0f * qgemv_sum_squares_256(x) / (float)QK_K;
    for (int j = 0; j < QK_K / 32; j++) {
        qgemv_importance(x + 32 * j, qw + 32 * j, sigma2, weights, 32);
        sw[j] = qgemv_sum_in_order(weights, 32);
        scales[j] = qgemv_make_qkx3_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j],
                                           -0.9f, 0.05f, 36, 0);
    }
    const float d_block = qgemv_make_qp_quants(QK_K / 32, 63, scales, Ls, sw);
    const float m_block = qgemv_make_qp_quants(QK_K / 32, 63, mins, Lm, sw);
    qgemv_pack_scale_min_k4(Ls, Lm, scales_out);
    *d_out = qgemv_fp32_to_fp16(d_block);
    *dmin_out = qgemv_fp32_to_fp16(m_block);
    qgemv_requantize_k4(x, *d_out, *dmin_out, scales_out, nmax, L);
}

/* q4_K: byte l of each 32 holds values l (low nibble) and l + 32 (high) of its 64 */
static inline void qgemv_pack_q4_K(const uint8_t *restrict L, uint8_t *restrict q) {
    for (int j = 0; j < QK_K; j += 64, q += 32)
        for (int l = 0; l < 32; l++) q[l] = (uint8_t)(L[j + l] | (L[j + l + 32] << 4));
}

static void quantize_q4_K(const float *restrict x, void *restrict dst, int64_t n, const float *qw) {
    block_q4_K *y = (block_q4_K *)dst;
    for (int64_t i = 0; i < n / QK_K; i++, x += QK_K) {
        uint8_t L[QK_K];
        if (qw) qgemv_fit_k4_imatrix(x, qw + QK_K * i, 15, L, y[i].scales, &y[i].d, &y[i].dmin);
        else qgemv_fit_k4_ref(x, 15, -1.0f, 20, L, y[i].scales, &y[i].d, &y[i].dmin);
        qgemv_pack_q4_K(L, y[i].qs);
    }
}

/* q5_K: low nibbles as q4_K, bit 4 of values l and l + 32 of the k-th 64 in bits 2k, 2k + 1
 * of qh[l] */
static inline void qgemv_pack_q5_K(const uint8_t *restrict L, uint8_t *restrict ql, uint8_t *restrict qh) {
    memset(qh, 0, QK_K / 8);
    uint8_t m1 = 1, m2 = 2;
    for (int j = 0; j < QK_K; j += 64, ql += 32, m1 <<= 2, m2 <<= 2) {
        for (int l = 0; l < 32; l++) {
            int l1 = L[j + l], l2 = L[j + l + 32];
            if (l1 > 15) { l1 -= 16; qh[l] |= m1; }
            if (l2 > 15) { l2 -= 16; qh[l] |= m2; }
            ql[l] = (uint8_t)(l1 | (l2 << 4));
        }
    }
}

static void quantize_q5_K(const float *restrict x, void *restrict dst, int64_t n, const float *qw) {
    block_q5_K *y = (block_q5_K *)dst;
    for (int64_t i = 0; i < n / QK_K; i++, x += QK_K) {
        uint8_t L[QK_K];
        if (qw) qgemv_fit_k4_imatrix(x, qw + QK_K * i, 31, L, y[i].scales, &y[i].d, &y[i].dmin);
        else qgemv_fit_k4_ref(x, 31, -0.5f, 15, L, y[i].scales, &y[i].d, &y[i].dmin);
        qgemv_pack_q5_K(L, y[i].qs, y[i].qh);
    }
}

/* ---------------------------------------------------------------- q6_K: x = d sc (q - 32) */

/* sub-blocks of 16 by make_qx_quants (w = qw, or x^2: ggml's reference and imatrix paths
 * differ only there), int8 scales against the largest magnitude (-128), then re-quantized;
 * ql holds the low nibbles (values l, l + 64 in byte l; l + 32, l + 96 in byte l + 32 of each
 * 128), qh the top two bits of values l, l + 32, l + 64, l + 96 */
static void quantize_q6_K(const float *restrict x, void *restrict dst, int64_t n, const float *qw) {
    block_q6_K *y = (block_q6_K *)dst;
    for (int64_t i = 0; i < n / QK_K; i++, x += QK_K) {
        int8_t L[QK_K];
        float scales[QK_K / 16];
        float max_scale = 0.0f, max_abs_scale = 0.0f;
        for (int ib = 0; ib < QK_K / 16; ib++) {
            scales[ib] = qgemv_make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib, qw ? qw + QK_K * i + 16 * ib : NULL);
            const float abs_scale = fabsf(scales[ib]);
            if (abs_scale > max_abs_scale) { max_abs_scale = abs_scale; max_scale = scales[ib]; }
        }
        if (max_abs_scale < QGEMV_GROUP_MAX_EPS) {
            memset(&y[i], 0, sizeof(block_q6_K));
            continue;
        }
        const float iscale = -128.0f / max_scale;
        y[i].d = qgemv_fp32_to_fp16(1.0f / iscale);
        for (int ib = 0; ib < QK_K / 16; ib++) {
            const int l = qgemv_nearest_int(iscale * scales[ib]);
            y[i].scales[ib] = (int8_t)(l < 127 ? l : 127);
        }
        const float dd = qgemv_fp16_to_fp32(y[i].d);
        for (int j = 0; j < QK_K / 16; j++) {
            const float d = dd * (float)y[i].scales[j];
            if (d == 0.0f) continue;
            for (int ii = 0; ii < 16; ii++) {
                const int l = qgemv_nearest_int(x[16 * j + ii] / d);
                L[16 * j + ii] = (int8_t)((l < -32 ? -32 : l > 31 ? 31 : l) + 32);
            }
        }
        uint8_t *ql = y[i].ql, *qh = y[i].qh;
        for (int j = 0; j < QK_K; j += 128, ql += 64, qh += 32) {
            for (int l = 0; l < 32; l++) {
                const uint8_t *q = (const uint8_t *)L + j + l;
                ql[l] = (uint8_t)((q[0] & 0xf) | (q[64] & 0xf) << 4);
                ql[l + 32] = (uint8_t)((q[32] & 0xf) | (q[96] & 0xf) << 4);
                qh[l] = (uint8_t)((q[0] >> 4) | (q[32] >> 4) << 2 | (q[64] >> 4) << 4 | (q[96] >> 4) << 6);
            }
        }
    }
}
