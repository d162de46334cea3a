/* Weight quantizers of the element formats and the 32-value block formats: f32, f16, bf16,
 * q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl, mxfp4 (and the activation formats q8_1, q8_K).
 *
 * quantize_<name>(x, y, n, imatrix) is ggml's quantize_<name> (what ggml_quantize_chunk
 * calls) for one row: without an imatrix the reference quantize_row_<name>_ref, with one the
 * importance-weighted search where ggml has one (q4_0, q4_1, q5_0, q5_1, iq4_nl; the others
 * ignore it, as ggml does).  Arithmetic and helpers: quantize_common.h.
 */

/* 32 4-bit levels -> 16 bytes: value j in the low nibble of byte j, value j + 16 in the high */
static inline void qgemv_pack_nibbles_32(const uint8_t L[32], uint8_t qs[16]) {
    for (int j = 0; j < 16; j++) qs[j] = (uint8_t)(L[j] | (L[j + 16] << 4));
}

/* 32 5-bit levels -> low nibbles as above, bit 4 of value j in bit j of qh */
static inline void qgemv_pack_5bit_32(const uint8_t L[32], uint8_t qs[16], uint8_t qh_out[4]) {
    uint32_t qh = 0;
    for (int j = 0; j < 16; j++) {
        qs[j] = (uint8_t)((L[j] & 0x0f) | ((L[j + 16] & 0x0f) << 4));
        qh |= (uint32_t)(L[j] >> 4 & 1) << j;
        qh |= (uint32_t)(L[j + 16] >> 4 & 1) << (j + 16);
    }
    memcpy(qh_out, &qh, 4);
}

/* the value of largest magnitude of 32 (the first one, on ties), as ggml's q4_0 / q5_0 */
static inline float qgemv_signed_absmax_32(const float *x) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; j++) {
        if (amax < fabsf(x[j])) { amax = fabsf(x[j]); max = x[j]; }
    }
    return max;
}

static inline void qgemv_min_max_32(const float *x, float *min_out, float *max_out) {
    float min = FLT_MAX, max = -FLT_MAX;
    for (int j = 0; j < 32; j++) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
    *min_out = min;
    *max_out = max;
}

/* ---------------------------------------------------------------- element formats */

static void quantize_f32(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    (void)qw;
    quantize_row_f32(x, y, n);
}

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
        for (int j = 0; j < 32; j++) {
            const int8_t q = (int8_t)(x[j] * id + 8.5f);
            L[j] = (uint8_t)(q < 15 ? q : 15);
        }
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
        for (int j = 0; j < 32; j++) {
            const int8_t q = (int8_t)((x[j] - min) * id + 0.5f);
            L[j] = (uint8_t)(q < 15 ? q : 15);
        }
        qgemv_pack_nibbles_32(L, y[ib].qs);
    }
}

/* weighted least-squares scale and minimum per block (make_qkx3_quants), m = -the_min */
static void quantize_row_q4_1_imatrix(const float *restrict x, block_q4_1 *restrict y, int64_t n,
                                      const float *restrict qw) {
    const float sigma2 = qgemv_mean_square(x, n);
    for (int64_t ib = 0; ib < n / QK4_1; ib++, x += QK4_1, qw += QK4_1) {
        float w[32], the_min;
        uint8_t L[32], Laux[32];
        qgemv_importance(x, qw, sigma2, w, 32);
        const float d = qgemv_make_qkx3_quants(32, 15, x, w, L, &the_min, Laux, -0.9f, 0.05f, 36, 0);
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
        for (int j = 0; j < 32; j++) {
            const int8_t q = (int8_t)(x[j] * id + 16.5f);
            L[j] = (uint8_t)(q < 31 ? q : 31);
        }
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
        for (int j = 0; j < 32; j++) L[j] = (uint8_t)((x[j] - min) * id + 0.5f);
        qgemv_pack_5bit_32(L, y[ib].qs, y[ib].qh);
    }
}

static void quantize_row_q5_1_imatrix(const float *restrict x, block_q5_1 *restrict y, int64_t n,
                                      const float *restrict qw) {
    const float sigma2 = qgemv_mean_square(x, n);
    for (int64_t ib = 0; ib < n / QK5_1; ib++, x += QK5_1, qw += QK5_1) {
        float w[32], the_min;
        uint8_t L[32], Laux[32];
        qgemv_importance(x, qw, sigma2, w, 32);
        const float d = qgemv_make_qkx3_quants(32, 31, x, w, L, &the_min, Laux, -0.9f, 0.05f, 36, 0);
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
        for (int j = 0; j < QK8_0; j++) y[ib].qs[j] = (int8_t)roundf(x[j] * id);
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

/* One 32-block of ggml's quantize_iq4_nl (quantize_row_iq4_nl_impl with ntry = 7): levels
 * nearest x / d for d = -max / -127, then 15 inverse scales (t - 127) / max, keeping the d
 * that maximises (sum w q x)^2 / sum w q^2; the levels are then re-chosen for the final d.
 * w = x^2 without an imatrix, qw sqrt(sigma2 + x^2) with one (sigma2 = 2 mean(x^2) of the
 * block). */
static void quantize_block_iq4_nl(const float *restrict x, block_iq4_nl *restrict y, const float *restrict qw) {
    const int8_t *values = kvalues_iq4nl;
    float w[32];
    float sigma2 = 0.0f;
    for (int j = 0; j < 32; j++) sigma2 += x[j] * x[j];
    sigma2 *= 2.0f / 32.0f;
    if (qw) qgemv_importance(x, qw, sigma2, w, 32);
    else for (int j = 0; j < 32; j++) w[j] = x[j] * x[j];

    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; j++) {
        const float ax = fabsf(x[j]);
        if (ax > amax) { amax = ax; max = x[j]; }
    }
    float d = 0.0f;
    if (amax >= QGEMV_GROUP_MAX_EPS) {
        d = -max / (float)values[0];
        float id = 1.0f / d;
        float sumqx = 0.0f, sumq2 = 0.0f;
        for (int j = 0; j < 32; j++) {
            const float q = (float)values[qgemv_nearest_level16(values, id * x[j])];
            sumqx += w[j] * q * x[j];
            sumq2 += w[j] * q * q;
        }
        d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
        float best = d * sumqx;
        for (int itry = -7; itry <= 7; itry++) {
            id = (float)(itry + values[0]) / max;
            sumqx = sumq2 = 0.0f;
            for (int j = 0; j < 32; j++) {
                const float q = (float)values[qgemv_nearest_level16(values, id * x[j])];
                sumqx += w[j] * q * x[j];
                sumq2 += w[j] * q * q;
            }
            if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
                d = sumqx / sumq2;
                best = d * sumqx;
            }
        }
    }
    y->d = qgemv_fp32_to_fp16(d);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint8_t L[32];
    for (int j = 0; j < 32; j++) L[j] = (uint8_t)qgemv_nearest_level16(values, id * x[j]);
    qgemv_pack_nibbles_32(L, y->qs);
}

static void quantize_iq4_nl(const float *restrict x, void *restrict dst, int64_t n, const float *qw) {
    block_iq4_nl *y = (block_iq4_nl *)dst;
    for (int64_t ib = 0; ib < n / QK4_NL; ib++)
        quantize_block_iq4_nl(x + QK4_NL * ib, &y[ib], qw ? qw + QK4_NL * ib : NULL);
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
