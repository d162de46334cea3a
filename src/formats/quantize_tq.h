/* Weight quantizers of the ternary formats tq1_0 and tq2_0: x = d (t - 1), t in {0, 1, 2}.
 *
 * ggml's quantize_row_tq1_0_ref / _tq2_0_ref: d = amax of the 256 values, t = lroundf(x / d) + 1
 * (half away from zero); an imatrix is ignored, as ggml does.  Helpers: quantize_common.h.
 */

/* the trits of x / d, 0, 1 or 2 */
static inline int qgemv_trit(float x, float id) { return qgemv_round_half_away(x * id) + 1; }

/* five trits t_k = trit(x[k g]) as the fraction sum t_k 3^(4-k) / 3^5, rounded up to 8 bits */
static inline uint8_t qgemv_pack_trits5(const float *x, int g, float id) {
    unsigned q = 0;
    for (int k = 0; k < 5; k++) q = q * 3 + (unsigned)qgemv_trit(x[k * g], id);
    return (uint8_t)((q * 256 + 242) / 243);
}

/* tq1_0: qs[0..32) hold values m + 32k of the first 160, qs[32..48) values m + 16k of the
 * next 80 (k < 5), qh[j] values j + 4k of the last 16 (k < 4, shifted up one trit) */
static void quantize_row_tq1_0_ref(const float *restrict x, block_tq1_0 *restrict y, int64_t n) {
    enum { QS_32 = sizeof(y->qs) - sizeof(y->qs) % 32, NQH = sizeof(y->qh) };
    for (int64_t ib = 0; ib < n / QK_K; ib++) {
        const float d = qgemv_absmax(x, QK_K);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = qgemv_fp32_to_fp16(d);
        for (int j = 0; j < QS_32; j += 32, x += 5 * 32)
            for (int m = 0; m < 32; m++) y[ib].qs[j + m] = qgemv_pack_trits5(x + m, 32, id);
        for (int j = QS_32; j < (int)sizeof(y->qs); j += 16, x += 5 * 16)
            for (int m = 0; m < 16; m++) y[ib].qs[j + m] = qgemv_pack_trits5(x + m, 16, id);
        for (int j = 0; j < NQH; j++) {
            unsigned q = 0;
            for (int k = 0; k < 4; k++) q = q * 3 + (unsigned)qgemv_trit(x[j + k * NQH], id);
            q *= 3;
            y[ib].qh[j] = (uint8_t)((q * 256 + 242) / 243);
        }
        x += 4 * NQH;
    }
}

static void quantize_tq1_0(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    (void)qw;
    quantize_row_tq1_0_ref(x, y, n);
}

/* tq2_0: two bits per trit in tq2_0's fields (qgemv_pack_2bit_256, src/formats/ternary.h) */
static void quantize_row_tq2_0_ref(const float *restrict x, block_tq2_0 *restrict y, int64_t n) {
    for (int64_t ib = 0; ib < n / QK_K; ib++, x += QK_K) {
        const float d = qgemv_absmax(x, QK_K);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        uint8_t t[QK_K];
        for (int j = 0; j < QK_K; j++) t[j] = (uint8_t)(qgemv_trit(x[j], id) & 3);
        y[ib].d = qgemv_fp32_to_fp16(d);
        qgemv_pack_2bit_256(t, y[ib].qs);
    }
}

static void quantize_tq2_0(const float *restrict x, void *restrict y, int64_t n, const float *qw) {
    (void)qw;
    quantize_row_tq2_0_ref(x, y, n);
}
