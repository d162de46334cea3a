/* Weight quantizers of iq2_xxs, iq2_xs and iq2_s: groups of 8 magnitudes on a grid of 8-value
 * points (levels l in {0, 1, 2}, values 2 l + 1), signs apart, one 4-bit scale per 32 (xxs) or
 * 16 (xs, s) values under one f16 d: x = d (0.5 + s) / 4 * grid * sign.
 *
 * ggml's quantize_row_iq2_{xxs,xs,s}_impl: per sub-block, importance weights w (qw sqrt(sigma2
 * + x^2); iq2_s without an imatrix: sigma2 / 4 + x^2), magnitudes xval = |x| (xxs and xs keep
 * an even number of minus signs, flipping the least important value), then a search over
 * inverse scales: each group of 8 rounded to levels, the key looked up in the grid map and,
 * off the grid, replaced by the best of its listed neighbours (quantize_grids.h); the fit
 * (sum w xval q)^2 / sum w q^2 picks the scale.  The sub-block scales are then rounded
 * against the largest.  The arithmetic is ggml's to the operation (quantize_common.h).
 * iq2_xxs and iq2_xs require an importance matrix (QMatrix.quantize refuses without one).
 */

#define QGEMV_GROUP_MAX_EPS_IQ2_S 1e-8f

/* the levels of 8 magnitudes for the inverse scale id: clamp(nearest_int((id x - 1) / 2), 0, 2),
 * and their grid key sum l_k 4^k */
static inline unsigned qgemv_iq2_levels8(float id, const float *restrict xval, int8_t *restrict L) {
    unsigned u = 0;
    for (int i = 0; i < 8; i++) {
        const int l = qgemv_clamp_int(qgemv_nearest_int(0.5f * (id * xval[i] - 1.0f)), 0, 2);
        L[i] = (int8_t)l;
        u |= (unsigned)l << 2 * i;
    }
    return u;
}

/* the values of levels 0, 1, 2 in iq2's searches: the odd values 2 l + 1 */
static const float qgemv_iq2_level_values[3] = {1.0f, 3.0f, 5.0f};

/* L on the grid: kept if its key is a grid point, else the best listed neighbour for scale
 * (ggml's iq2_find_best_neighbour, which rewrites L).  Returns 1 if L was on the grid. */
static inline int qgemv_iq2_onto_grid(const qgemv_grid8 *g, unsigned u, const float *restrict xval,
                                      const float *restrict waux, float scale, int8_t *restrict L) {
    if (g->map[u] >= 0) return 1;
    qgemv_grid_best_neighbour(g->neighbours - g->map[u] - 1, (const uint8_t *)g->levels, 8, qgemv_iq2_level_values, 3,
                              xval, waux, scale, L);
    return 0;
}

/* the grid point of 8 levels (always one: the searches end on the grid; 0 otherwise, where
 * ggml would abort) */
static inline int qgemv_iq2_grid_index(const qgemv_grid8 *g, const int8_t *L) {
    unsigned u = 0;
    for (int i = 0; i < 8; i++) u |= (unsigned)(uint8_t)L[i] << 2 * i;
    return u < QGEMV_GRID8_KEYS && g->map[u] >= 0 ? g->map[u] : 0;
}

/* the fit of levels L: sumqx = sum (w xval) q, sumq2 = sum (w q) q, q = 2 L + 1, in order */
static inline void qgemv_iq2_fit(int n, const float *restrict w, const float *restrict xval,
                                 const int8_t *restrict L, float *sumqx, float *sumq2) {
    float sqx = 0.0f, sq2 = 0.0f;
    for (int i = 0; i < n; i++) {
        const float q = (float)(2 * L[i] + 1);
        sqx += w[i] * xval[i] * q;
        sq2 += w[i] * q * q;
    }
    *sumqx = sqx;
    *sumq2 = sq2;
}

/* The scale search of a 16-value sub-block (iq2_xs, iq2_s): 19 inverse scales (5 + 0.1 is) / max,
 * each group onto the grid for its scale, the best fit kept; groups that ended off the grid are
 * rounded again for the chosen scale and the scale refitted.  L: levels on the grid.  Returns
 * the scale (negative only if the fit is; the caller flips the signs then). */
static float qgemv_iq2_search16(const qgemv_grid8 *g, const float *restrict xval, const float *restrict w,
                                const float *restrict waux, float max, int8_t *restrict L) {
    enum { KMAXQ = 3 };
    int8_t Laux[16];
    int on_grid[2] = {1, 1}, on_grid_aux[2];
    float best = 0.0f, scale = max / (2 * KMAXQ - 1);
    memset(L, 0, 16);   /* kept (grid point 0) if no candidate fits: all importance weights zero */
    for (int is = -9; is <= 9; is++) {
        const float id = ((float)(2 * KMAXQ - 1) + (float)is * 0.1f) / max;
        const float this_scale = 1.0f / id;
        for (int k = 0; k < 2; k++) {
            const unsigned u = qgemv_iq2_levels8(id, xval + 8 * k, Laux + 8 * k);
            on_grid_aux[k] = qgemv_iq2_onto_grid(g, u, xval + 8 * k, waux + 8 * k, this_scale, Laux + 8 * k);
        }
        float sumqx, sumq2;
        qgemv_iq2_fit(16, w, xval, Laux, &sumqx, &sumq2);
        if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            memcpy(L, Laux, 16);
            on_grid[0] = on_grid_aux[0];
            on_grid[1] = on_grid_aux[1];
        }
    }
    if ((!on_grid[0] || !on_grid[1]) && scale > 0.0f) {
        const float id = 1.0f / scale;
        for (int k = 0; k < 2; k++) {
            if (on_grid[k]) continue;
            const unsigned u = qgemv_iq2_levels8(id, xval + 8 * k, L + 8 * k);
            qgemv_iq2_onto_grid(g, u, xval + 8 * k, waux + 8 * k, scale, L + 8 * k);
        }
        float sumqx, sumq2;
        qgemv_iq2_fit(16, w, xval, L, &sumqx, &sumq2);
        if (sumq2 > 0.0f) scale = sumqx / sumq2;
    }
    return scale;
}

/* the 4-bit code of a sub-block scale against d = max_scale / 31: clamp(nearest_int((s / d - 1) / 2), 0, 15) */
static inline int qgemv_iq2_scale_code(float id, float scale) {
    return qgemv_clamp_int(qgemv_nearest_int(0.5f * (id * scale - 1.0f)), 0, 15);
}

/* the 16 scale codes of a super-block against d = max_scale / 31, two 4-bit codes a byte
 * (iq2_xs, iq2_s); returns d */
static inline float qgemv_iq2_pack_scales16(const float *restrict scales, float max_scale, uint8_t *restrict out) {
    const float d = max_scale / 31;
    const float id = 1.0f / d;
    for (int ib = 0; ib < QK_K / 16; ib++) out[ib / 2] |= (uint8_t)(qgemv_iq2_scale_code(id, scales[ib]) << 4 * (ib % 2));
    return d;
}

/* ---------------------------------------------------------------- iq2_xxs: 32-value sub-blocks */

/* qs as 16 words: word 2 ib holds the 4 grid indices (8 bits each) of sub-block ib, word
 * 2 ib + 1 its 4 sign groups (7 bits each) and its scale code in the top 4 bits */
static void quantize_iq2_xxs(const float *restrict x, void *restrict vy, int64_t n, const float *qw) {
    enum { KMAXQ = 3 };
    const qgemv_grid8 *g = qgemv_grid8_ready(QGEMV_GRID8_IQ2XXS);
    block_iq2_xxs *y = vy;
    float scales[QK_K / 32], weight[32], waux[32], xval[32];
    int8_t L[32], Laux[32];
    uint8_t signs[4];
    uint32_t q2[2 * (QK_K / 32)];
    for (int64_t ibl = 0; ibl < n / QK_K; ibl++, x += QK_K, qw += QK_K) {
        y[ibl].d = qgemv_fp32_to_fp16(0.0f);
        memset(q2, 0, sizeof q2);
        float max_scale = 0.0f;
        const float sigma2 = qgemv_sum_squares_256(x) / QK_K;
        for (int ib = 0; ib < QK_K / 32; ib++) {
            const float max = qgemv_weights_magnitudes_signs(32, x + 32 * ib, qw + 32 * ib, sigma2, 1, weight, waux, xval, signs);
            if (max < QGEMV_GROUP_MAX_EPS) {
                scales[ib] = 0.0f;
                continue;
            }
            float scale = qgemv_make_qp_quants(32, KMAXQ + 1, xval, (uint8_t *)L, weight);
            const float eff_max = scale * KMAXQ;
            if (eff_max <= 0.0f) {   /* all importance weights zero: left as an all-zero sub-block */
                scales[ib] = 0.0f;
                continue;
            }
            float best = 0.0f;
            for (int is = -6; is <= 6; is++) {
                const float id = ((float)(2 * KMAXQ - 1) + (float)is * 0.1f) / eff_max;
                const float this_scale = 1.0f / id;
                for (int k = 0; k < 4; k++) {
                    const unsigned u = qgemv_iq2_levels8(id, xval + 8 * k, Laux + 8 * k);
                    qgemv_iq2_onto_grid(g, u, xval + 8 * k, waux + 8 * k, this_scale, Laux + 8 * k);
                }
                float sumqx, sumq2;
                qgemv_iq2_fit(32, weight, xval, Laux, &sumqx, &sumq2);
                if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
                    scale = sumqx / sumq2;
                    best = scale * sumqx;
                    memcpy(L, Laux, 32);
                }
            }
            if (scale > 0.0f) {   /* every group rounded again for the chosen scale */
                const float id = 1.0f / scale;
                for (int k = 0; k < 4; k++) {
                    const unsigned u = qgemv_iq2_levels8(id, xval + 8 * k, L + 8 * k);
                    qgemv_iq2_onto_grid(g, u, xval + 8 * k, waux + 8 * k, scale, L + 8 * k);
                }
                float sumqx, sumq2;
                qgemv_iq2_fit(32, weight, xval, L, &sumqx, &sumq2);
                if (sumq2 > 0.0f) scale = sumqx / sumq2;
            }
            if (scale < 0.0f) {
                scale = -scale;
                for (int k = 0; k < 4; k++) signs[k] = (uint8_t)(~signs[k] & 127);
            }
            for (int k = 0; k < 4; k++) {
                q2[2 * ib] |= (uint32_t)qgemv_iq2_grid_index(g, L + 8 * k) << 8 * k;
                q2[2 * ib + 1] |= (uint32_t)signs[k] << 7 * k;
            }
            scales[ib] = scale;
            max_scale = max_scale > scale ? max_scale : scale;
        }
        if (max_scale == 0.0f) {
            memset(y[ibl].qs, 0, sizeof y[ibl].qs);
            continue;
        }
        const float d = max_scale / 31;
        y[ibl].d = qgemv_fp32_to_fp16(d);
        const float id = 1.0f / d;
        for (int ib = 0; ib < QK_K / 32; ib++) q2[2 * ib + 1] |= (uint32_t)qgemv_iq2_scale_code(id, scales[ib]) << 28;
        memcpy(y[ibl].qs, q2, sizeof q2);
    }
}

/* ---------------------------------------------------------------- iq2_xs, iq2_s: 16-value sub-blocks */

/* iq2_xs: qs[2 ib + k] = grid index (9 bits) | 7 sign bits << 9; scales: two 4-bit codes a byte */
static void quantize_iq2_xs(const float *restrict x, void *restrict vy, int64_t n, const float *qw) {
    const qgemv_grid8 *g = qgemv_grid8_ready(QGEMV_GRID8_IQ2XS);
    block_iq2_xs *y = vy;
    float scales[QK_K / 16], weight[16], waux[16], xval[16];
    int8_t L[16];
    uint8_t signs[2];
    for (int64_t ibl = 0; ibl < n / QK_K; ibl++, x += QK_K, qw += QK_K) {
        y[ibl].d = qgemv_fp32_to_fp16(0.0f);
        memset(y[ibl].qs, 0, sizeof y[ibl].qs);
        memset(y[ibl].scales, 0, sizeof y[ibl].scales);
        float max_scale = 0.0f;
        const float sigma2 = qgemv_sum_squares_256(x) / QK_K;
        for (int ib = 0; ib < QK_K / 16; ib++) {
            const float max = qgemv_weights_magnitudes_signs(16, x + 16 * ib, qw + 16 * ib, sigma2, 1, weight, waux, xval, signs);
            if (max < QGEMV_GROUP_MAX_EPS) {
                scales[ib] = 0.0f;
                continue;
            }
            float scale = qgemv_iq2_search16(g, xval, weight, waux, max, L);
            if (scale < 0.0f) {
                scale = -scale;
                for (int k = 0; k < 2; k++) signs[k] = (uint8_t)(~signs[k] & 127);
            }
            for (int k = 0; k < 2; k++)
                y[ibl].qs[2 * ib + k] = (uint16_t)(qgemv_iq2_grid_index(g, L + 8 * k) | signs[k] << 9);
            scales[ib] = scale;
            max_scale = max_scale > scale ? max_scale : scale;
        }
        if (max_scale == 0.0f) {
            memset(y[ibl].qs, 0, sizeof y[ibl].qs);
            continue;
        }
        y[ibl].d = qgemv_fp32_to_fp16(qgemv_iq2_pack_scales16(scales, max_scale, y[ibl].scales));
    }
}

/* iq2_s: qs[0..32) the low 8 bits of the 32 grid indices, qs[32..64) their 8 sign bits, qh the
 * top 2 bits of each index; d stored as 0.9875 of max_scale / 31.  Without an imatrix the
 * weights are sigma2 / 4 + x^2 (sigma2 = 2 mean x^2). */
static void quantize_iq2_s(const float *restrict x, void *restrict vy, int64_t n, const float *qw) {
    const qgemv_grid8 *g = qgemv_grid8_ready(QGEMV_GRID8_IQ2S);
    block_iq2_s *y = vy;
    float scales[QK_K / 16], weight[16], waux[16], xval[16];
    int8_t L[16];
    uint8_t signs[2];
    for (int64_t ibl = 0; ibl < n / QK_K; ibl++, x += QK_K) {
        memset(&y[ibl], 0, sizeof y[ibl]);
        float max_scale = 0.0f;
        const float sigma2 = 2 * qgemv_sum_squares_256(x) / QK_K;
        for (int ib = 0; ib < QK_K / 16; ib++) {
            const float *qwb = qw ? qw + QK_K * ibl + 16 * ib : NULL;
            const float max = qgemv_weights_magnitudes_signs(16, x + 16 * ib, qwb, sigma2, 0, weight, waux, xval, signs);
            if (max < QGEMV_GROUP_MAX_EPS_IQ2_S) {
                scales[ib] = 0.0f;
                continue;
            }
            float scale = qgemv_iq2_search16(g, xval, weight, waux, max, L);
            if (scale < 0.0f) {
                scale = -scale;
                for (int k = 0; k < 2; k++) signs[k] = (uint8_t)~signs[k];
            }
            for (int k = 0; k < 2; k++) {
                const int i8 = 2 * ib + k, index = qgemv_iq2_grid_index(g, L + 8 * k);
                y[ibl].qs[i8] = (uint8_t)(index & 255);
                y[ibl].qh[i8 / 4] |= (uint8_t)((index >> 8) << 2 * (i8 % 4));
                y[ibl].qs[QK_K / 8 + i8] = signs[k];
            }
            scales[ib] = scale;
            max_scale = max_scale > scale ? max_scale : scale;
        }
        if (max_scale == 0.0f) continue;
        y[ibl].d = qgemv_fp32_to_fp16(qgemv_iq2_pack_scales16(scales, max_scale, y[ibl].scales) * 0.9875f);
    }
}
