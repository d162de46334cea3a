/* Weight quantizers of the 1.5-bit grid formats iq1_s and iq1_m: sub-blocks (32 values for
 * iq1_s, 16 for iq1_m) of x = d s_b (q + shift), q in {-1, 0, 1}, each group of 8 q a point of
 * the 2048-point iq1s grid, shift = +-IQ1S_DELTA per sub-block (iq1_m: per group of 8).
 *
 * ggml's quantize_row_iq1_s_impl / quantize_row_iq1_m_impl: the values of a sub-block sorted
 * (ggml's qsort with iq1_sort_helper; glibc's qsort is a stable merge sort for arrays this
 * small, so ties stay in index order), then an exhaustive search of the two split points that
 * cut the sorted values into q = -1, 0, 1, for each shift, maximising (sum w x q')^2 / sum w q'^2
 * (q' = q + shift); groups of 8 off the grid snap to their best neighbour (ggml's
 * iq1_find_best_neighbour2: qgemv_grid_best_neighbour with the shifted level values) and the scale is refitted.  The grid map and neighbour lists are
 * ggml's iq2_init_impl tables of the iq1s grid (quantize_grids.h), which the driver builds
 * with the GIL held before its prange.  Weights: imatrix qw sqrt(sigma2 + x^2), sigma2 =
 * 2 mean(x^2) of the 256-block; iq1_s requires them (as ggml), iq1_m uses x^2 without.
 */

/* the order of n <= 32 values ascending, ties in index order (a stable sort) */
static inline void qgemv_iq1_sorted_order(const float *x, int n, int *order) {
    for (int j = 0; j < n; j++) {
        int i = j;
        while (i > 0 && x[order[i - 1]] > x[j]) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = j;
    }
}

/* the grid point of each group of 8 levels L (snapped to the best neighbour at scale when off
 * the grid, shift table xg[k] of group k); returns whether all were on the grid */
static int qgemv_iq1_snap(const qgemv_grid8 *g, int ngroups, const float *xb, const float *w, float scale,
                          const float *const *xg, int8_t *L, uint16_t *index) {
    int all_on_grid = 1;
    for (int k = 0; k < ngroups; k++) {
        int u = 0;
        for (int j = 0; j < 8; j++) u |= L[8 * k + j] << 2 * j;
        int grid_index = g->map[u];
        if (grid_index < 0) {
            all_on_grid = 0;
            grid_index = qgemv_grid_best_neighbour(g->neighbours - grid_index - 1, (const uint8_t *)g->levels, 8, xg[k],
                                                   3, xb + 8 * k, w + 8 * k, scale, L + 8 * k);
        }
        index[k] = (uint16_t)grid_index;
    }
    return all_on_grid;
}

/* the least-squares scale of the snapped groups, or scale when sum w x q' or sum w q'^2 <= 0 */
static float qgemv_iq1_refit(const qgemv_grid8 *g, int ngroups, const float *xb, const float *w, float scale,
                             const float *const *xg, const uint16_t *index) {
    float sumqx = 0.0f, sumq2 = 0.0f;
    for (int k = 0; k < ngroups; k++) {
        const uint64_t p = g->levels[index[k]];
        for (int j = 0; j < 8; j++) {
            const float q = xg[k][((int)(p >> 8 * j & 0xff) - 1) / 2];
            sumqx += w[8 * k + j] * q * xb[8 * k + j];
            sumq2 += w[8 * k + j] * q * q;
        }
    }
    return sumqx > 0.0f && sumq2 > 0.0f ? sumqx / sumq2 : scale;
}

/* levels 0, 1, 2 by sorted position: below i1, below i2, the rest */
static inline void qgemv_iq1_split_levels(const int *order, int n, int i1, int i2, int8_t *L) {
    for (int j = 0; j < n; j++) L[order[j]] = (int8_t)(j < i1 ? 0 : j < i2 ? 1 : 2);
}

static inline float qgemv_iq1_absmax(const float *xb, int n) {
    float max = fabsf(xb[0]);
    for (int i = 1; i < n; i++) max = max > fabsf(xb[i]) ? max : fabsf(xb[i]);
    return max;
}

/* the best split candidate (i1, i2, shift k) so far: ggml's test sumqx^2 > best sumq2, then
 * scale = sumqx / sumq2, best = scale sumqx */
static inline void qgemv_iq1_consider(float sumqx, float sumq2, int i1, int i2, int k, float *best_score,
                                      float *scale, int *besti1, int *besti2, int *best_k) {
    if (sumq2 > 0.0f && sumqx * sumqx > *best_score * sumq2) {
        *scale = sumqx / sumq2;
        *best_score = *scale * sumqx;
        *besti1 = i1;
        *besti2 = i2;
        *best_k = k;
    }
}

/* The split search of an iq1_s sub-block: over i1 <= i2 (sorted values below i1 at level 0,
 * below i2 at level 1, the rest at 2) and shifts s (0: x_p, 1: x_m), the candidate maximising
 * sumqx^2 / sumq2 from the prefix sums sumx, sumw (33 of them, ggml's sumx/sumw), the first on
 * ties, scanned in ggml's order (i1, i2, s).  Returns the scale; besti1 = -1 if none fits.
 * The AVX2 path evaluates 4 consecutive i2 by 2 shifts at once (8 lanes, each with the scalar
 * operations in the scalar order) and scans them in order only when one of the 8 beats the
 * best so far under the same test (otherwise the scalar scan would keep none either). */
static float qgemv_iq1s_split_search(const float sumx[36], const float sumw[36], const float x_p[3],
                                     const float x_m[3], int *besti1, int *besti2, int *best_s) {
    float best_score = -FLT_MAX, scale = 0.0f;
    *besti1 = *besti2 = *best_s = -1;
    for (int i1 = 0; i1 <= 32; i1++) {
        int i2 = i1;
#if defined(QGEMV_AVX2)
        const __m256 v0 = _mm256_setr_ps(x_p[0], x_m[0], x_p[0], x_m[0], x_p[0], x_m[0], x_p[0], x_m[0]);
        const __m256 v1 = _mm256_setr_ps(x_p[1], x_m[1], x_p[1], x_m[1], x_p[1], x_m[1], x_p[1], x_m[1]);
        const __m256 v2 = _mm256_setr_ps(x_p[2], x_m[2], x_p[2], x_m[2], x_p[2], x_m[2], x_p[2], x_m[2]);
        const __m256i pairs = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
        const __m256 ax = _mm256_set1_ps(sumx[i1] - sumx[0]), aw = _mm256_set1_ps(sumw[i1] - sumw[0]);
        const __m256 x1 = _mm256_set1_ps(sumx[i1]), w1 = _mm256_set1_ps(sumw[i1]);
        const __m256 x32 = _mm256_set1_ps(sumx[32]), w32 = _mm256_set1_ps(sumw[32]);
        const __m256 tx = _mm256_mul_ps(ax, v0), tw = _mm256_mul_ps(_mm256_mul_ps(aw, v0), v0);
        for (; i2 <= 32; i2 += 4) {
            const __m256 x2 = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(sumx + i2)), pairs);
            const __m256 w2 = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(sumw + i2)), pairs);
            const __m256 sx = _mm256_add_ps(_mm256_add_ps(tx, _mm256_mul_ps(_mm256_sub_ps(x2, x1), v1)),
                                            _mm256_mul_ps(_mm256_sub_ps(x32, x2), v2));
            const __m256 s2 = _mm256_add_ps(
                _mm256_add_ps(tw, _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(w2, w1), v1), v1)),
                _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(w32, w2), v2), v2));
            const __m256 better = _mm256_and_ps(_mm256_cmp_ps(s2, _mm256_setzero_ps(), _CMP_GT_OQ),
                                                _mm256_cmp_ps(_mm256_mul_ps(sx, sx),
                                                              _mm256_mul_ps(_mm256_set1_ps(best_score), s2), _CMP_GT_OQ));
            const int lanes = 2 * (33 - i2 < 4 ? 33 - i2 : 4);
            if (_mm256_movemask_ps(better) & ((1 << lanes) - 1)) {
                float vx[8], v2s[8];
                _mm256_storeu_ps(vx, sx);
                _mm256_storeu_ps(v2s, s2);
                for (int lane = 0; lane < lanes; lane++)
                    qgemv_iq1_consider(vx[lane], v2s[lane], i1, i2 + lane / 2, lane % 2, &best_score, &scale, besti1,
                                       besti2, best_s);
            }
        }
#endif
        for (; i2 <= 32; i2++) {
            for (int s = 0; s < 2; s++) {
                const float *v = s == 0 ? x_p : x_m;
                const float sumqx = (sumx[i1] - sumx[0]) * v[0] + (sumx[i2] - sumx[i1]) * v[1] + (sumx[32] - sumx[i2]) * v[2];
                const float sumq2 = (sumw[i1] - sumw[0]) * v[0] * v[0] + (sumw[i2] - sumw[i1]) * v[1] * v[1] +
                                    (sumw[32] - sumw[i2]) * v[2] * v[2];
                qgemv_iq1_consider(sumqx, sumq2, i1, i2, s, &best_score, &scale, besti1, besti2, best_s);
            }
        }
    }
    return scale;
}

/* iq1_s: per 32-value sub-block 4 grid indices (low 8 bits in qs, high 3 in qh bits 3k..3k+3),
 * its 3-bit scale in qh bits 12..15 and the shift sign in bit 15 */
static void quantize_iq1_s(const float *restrict x, void *restrict vy, int64_t n, const float *restrict qw) {
    const qgemv_grid8 *g = qgemv_grid8_ready(QGEMV_GRID8_IQ1S);
    const float x_p[3] = {-1 + IQ1S_DELTA, IQ1S_DELTA, 1 + IQ1S_DELTA};
    const float x_m[3] = {-1 - IQ1S_DELTA, -IQ1S_DELTA, 1 - IQ1S_DELTA};
    block_iq1_s *y = vy;
    if (!qw) return;   /* ggml refuses iq1_s without an imatrix; qmatrix.py refuses it first */
    for (int64_t ibl = 0; ibl < n / QK_K; ibl++, x += QK_K) {
        memset(&y[ibl], 0, sizeof(y[ibl]));
        float scales[QK_K / 32], max_scale = 0.0f;
        int shifts[QK_K / 32];
        const float sigma2 = 2 * qgemv_sum_squares_256(x) / QK_K;
        for (int ib = 0; ib < QK_K / 32; ib++) {
            const float *xb = x + 32 * ib;
            float w[32], sumx[36] = {0}, sumw[36] = {0};   /* 33 prefix sums, padded for loads of 4 */
            int order[32];
            int8_t L[32];
            uint16_t index[4];
            qgemv_search_weights(xb, qw + QK_K * ibl + 32 * ib, sigma2, w, 32);
            scales[ib] = 0.0f;
            shifts[ib] = 1;
            if (qgemv_iq1_absmax(xb, 32) < 1e-12f) continue;   /* ggml's GROUP_MAX_EPS_IQ1_S */
            qgemv_iq1_sorted_order(xb, 32, order);
            sumx[0] = sumw[0] = 0.0f;
            for (int j = 0; j < 32; j++) {
                sumx[j + 1] = sumx[j] + w[order[j]] * xb[order[j]];
                sumw[j + 1] = sumw[j] + w[order[j]];
            }
            int besti1, besti2, best_s;
            float scale = qgemv_iq1s_split_search(sumx, sumw, x_p, x_m, &besti1, &besti2, &best_s);
            int best_shift = best_s == 0 ? 1 : -1;
            if (besti1 < 0) continue;
            qgemv_iq1_split_levels(order, 32, besti1, besti2, L);
            if (scale < 0.0f) {
                for (int j = 0; j < 32; j++) L[j] = (int8_t)(2 - L[j]);
                scale = -scale;
                best_shift = -best_shift;
            }
            const float *xx = best_shift == 1 ? x_p : x_m;
            const float *const xg[4] = {xx, xx, xx, xx};
            if (!qgemv_iq1_snap(g, 4, xb, w, scale, xg, L, index)) scale = qgemv_iq1_refit(g, 4, xb, w, scale, xg, index);
            uint16_t h = 0;
            for (int k = 0; k < 4; k++) {
                y[ibl].qs[4 * ib + k] = (uint8_t)(index[k] & 255);
                h |= (uint16_t)((index[k] >> 8) << 3 * k);
            }
            y[ibl].qh[ib] = h;
            scales[ib] = scale;
            shifts[ib] = best_shift;
            max_scale = max_scale > scale ? max_scale : scale;
        }
        if (max_scale == 0.0f) continue;
        const float d = max_scale / 15.0f;
        y[ibl].d = qgemv_fp32_to_fp16(d * 1.125f);
        const float id = 1.0f / d;
        for (int ib = 0; ib < QK_K / 32; ib++) {
            int l = qgemv_clamp_int(qgemv_nearest_int(0.5f * (id * scales[ib] - 1.0f)), 0, 7);
            if (shifts[ib] == -1) l |= 8;
            y[ibl].qh[ib] |= (uint16_t)(l << 12);
        }
    }
}

/* The split search of an iq1_m sub-block: over i1 <= i2 (sorted values below i1 at level 0,
 * below i2 at level 1, the rest at 2) and shift patterns k, the candidate maximising
 * sumqx^2 / sumq2, the first on ties, scanned in ggml's order (i1, i2, k).  term[j][r][k]:
 * sorted value j at level r under pattern k, as (w v) x (tqx) and (w v) v (tq2).  Each
 * candidate sums its 16 terms in sorted order, as ggml, the sums over j < i1 and then j < i2
 * shared by the candidates they begin.  Returns the scale; besti1 = -1 if none fits.
 * The AVX2 path sums the 4 patterns of two consecutive i2 at once (8 lanes, each with the
 * scalar operations in the scalar order) and scans them in order only when one of the 8 beats
 * the best so far under the same test (otherwise the scalar scan would keep it too). */
static float qgemv_iq1m_split_search(const float tqx[16][3][4], const float tq2[16][3][4], int *besti1,
                                     int *besti2, int *best_k) {
    float best_score = -FLT_MAX, scale = 0.0f;
    *besti1 = *besti2 = *best_k = -1;
#if defined(QGEMV_AVX2)
    __m128 hx1 = _mm_setzero_ps(), h21 = _mm_setzero_ps();   /* j < i1 at level 0 */
    for (int i1 = 0; i1 <= 16; i1++) {
        if (i1 > 0) {
            hx1 = _mm_add_ps(hx1, _mm_loadu_ps(tqx[i1 - 1][0]));
            h21 = _mm_add_ps(h21, _mm_loadu_ps(tq2[i1 - 1][0]));
        }
        __m128 hx2 = hx1, h22 = h21;   /* then i1 <= j < i2 at level 1, for the pair's first i2 */
        for (int i2 = i1; i2 <= 16; i2 += 2) {
            const int pair = i2 < 16;   /* the second candidate i2 + 1 exists */
            __m128 ax = hx2, a2 = h22, bx = _mm_setzero_ps(), b2 = _mm_setzero_ps();
            if (pair) {
                bx = _mm_add_ps(hx2, _mm_loadu_ps(tqx[i2][1]));
                b2 = _mm_add_ps(h22, _mm_loadu_ps(tq2[i2][1]));
                ax = _mm_add_ps(ax, _mm_loadu_ps(tqx[i2][2]));
                a2 = _mm_add_ps(a2, _mm_loadu_ps(tq2[i2][2]));
            }
            __m256 sx = _mm256_set_m128(bx, ax), s2 = _mm256_set_m128(b2, a2);
            for (int j = i2 + 1; j < 16; j++) {   /* then j >= i2 at level 2 */
                sx = _mm256_add_ps(sx, _mm256_broadcast_ps((const __m128 *)tqx[j][2]));
                s2 = _mm256_add_ps(s2, _mm256_broadcast_ps((const __m128 *)tq2[j][2]));
            }
            const __m256 better = _mm256_and_ps(_mm256_cmp_ps(s2, _mm256_setzero_ps(), _CMP_GT_OQ),
                                                _mm256_cmp_ps(_mm256_mul_ps(sx, sx),
                                                              _mm256_mul_ps(_mm256_set1_ps(best_score), s2), _CMP_GT_OQ));
            if (_mm256_movemask_ps(better) & (pair ? 0xff : 0x0f)) {
                float vx[8], v2[8];
                _mm256_storeu_ps(vx, sx);
                _mm256_storeu_ps(v2, s2);
                for (int lane = 0; lane < (pair ? 8 : 4); lane++)
                    qgemv_iq1_consider(vx[lane], v2[lane], i1, i2 + lane / 4, lane % 4, &best_score, &scale, besti1,
                                        besti2, best_k);
            }
            if (i2 + 2 <= 16) {
                hx2 = _mm_add_ps(bx, _mm_loadu_ps(tqx[i2 + 1][1]));
                h22 = _mm_add_ps(b2, _mm_loadu_ps(tq2[i2 + 1][1]));
            }
        }
    }
#else
    float hx1[4] = {0, 0, 0, 0}, h21[4] = {0, 0, 0, 0};   /* j < i1 at level 0 */
    for (int i1 = 0; i1 <= 16; i1++) {
        if (i1 > 0)
            for (int k = 0; k < 4; k++) { hx1[k] += tqx[i1 - 1][0][k]; h21[k] += tq2[i1 - 1][0][k]; }
        float hx2[4], h22[4];   /* then i1 <= j < i2 at level 1 */
        memcpy(hx2, hx1, sizeof(hx2));
        memcpy(h22, h21, sizeof(h22));
        for (int i2 = i1; i2 <= 16; i2++) {
            if (i2 > i1)
                for (int k = 0; k < 4; k++) { hx2[k] += tqx[i2 - 1][1][k]; h22[k] += tq2[i2 - 1][1][k]; }
            float sumqx[4], sumq2[4];   /* then j >= i2 at level 2 */
            memcpy(sumqx, hx2, sizeof(sumqx));
            memcpy(sumq2, h22, sizeof(sumq2));
            for (int j = i2; j < 16; j++)
                for (int k = 0; k < 4; k++) { sumqx[k] += tqx[j][2][k]; sumq2[k] += tq2[j][2][k]; }
            for (int k = 0; k < 4; k++)
                qgemv_iq1_consider(sumqx[k], sumq2[k], i1, i2, k, &best_score, &scale, besti1, besti2, best_k);
        }
    }
#endif
    return scale;
}

/* iq1_m: per 16-value sub-block 2 grid indices (low 8 bits in qs, high 3 in the nibbles of
 * qh[ib], whose bits 3 and 7 are the two groups' shift signs), its 3-bit scale in scales, and
 * the f16 super-block scale in the top nibbles of the four uint16 of scales.  Each group of 8
 * has its own shift: pattern k = 0 (+, +), 1 (+, -), 2 (-, +), 3 (-, -).  The split search
 * sums each candidate afresh in sorted order, as ggml 0.25's does (later ggml keeps per-half
 * prefix sums, which rounds differently; libgguf matches the former). */
static void quantize_iq1_m(const float *restrict x, void *restrict vy, int64_t n, const float *restrict qw) {
    const qgemv_grid8 *g = qgemv_grid8_ready(QGEMV_GRID8_IQ1S);
    const float x_p[3] = {-1 + IQ1M_DELTA, IQ1M_DELTA, 1 + IQ1M_DELTA};
    const float x_m[3] = {-1 - IQ1M_DELTA, -IQ1M_DELTA, 1 - IQ1M_DELTA};
    const uint8_t masks[4] = {0x00, 0x80, 0x08, 0x88};
    block_iq1_m *y = vy;
    for (int64_t ibl = 0; ibl < n / QK_K; ibl++, x += QK_K) {
        memset(&y[ibl], 0, sizeof(y[ibl]));
        float scales[QK_K / 16], max_scale = 0.0f;
        int shifts[QK_K / 16];
        const float sigma2 = 2 * qgemv_sum_squares_256(x) / QK_K;
        for (int ib = 0; ib < QK_K / 16; ib++) {
            const float *xb = x + 16 * ib;
            const float *qwb = qw ? qw + QK_K * ibl + 16 * ib : NULL;
            float w[16];
            int order[16];
            int8_t L[16];
            uint16_t index[2];
            qgemv_search_weights(xb, qwb, qwb ? sigma2 : 0.0f, w, 16);
            scales[ib] = 0.0f;
            shifts[ib] = 0;
            if (qgemv_iq1_absmax(xb, 16) < 1e-7f) continue;   /* ggml's GROUP_MAX_EPS_IQ1_M */
            qgemv_iq1_sorted_order(xb, 16, order);
            /* term[j][r][k]: value order[j] at level r (0, 1, 2) under shift pattern k, as
             * (w v) x and (w v) v (qgemv_iq1m_split_search) */
            float tqx[16][3][4], tq2[16][3][4];
            for (int j = 0; j < 16; j++) {
                const int i = order[j];
                for (int r = 0; r < 3; r++)
                    for (int k = 0; k < 4; k++) {
                        const float v = (i < 8 ? k < 2 : k % 2 == 0) ? x_p[r] : x_m[r];
                        tqx[j][r][k] = w[i] * v * xb[i];
                        tq2[j][r][k] = w[i] * v * v;
                    }
            }
            int besti1, besti2, best_k;
            float scale = qgemv_iq1m_split_search(tqx, tq2, &besti1, &besti2, &best_k);
            if (besti1 < 0) continue;
            qgemv_iq1_split_levels(order, 16, besti1, besti2, L);
            if (scale < 0.0f) {
                for (int j = 0; j < 16; j++) L[j] = (int8_t)(2 - L[j]);
                scale = -scale;
                best_k = 3 - best_k;
            }
            const float *const xg[2] = {best_k < 2 ? x_p : x_m, best_k % 2 == 0 ? x_p : x_m};
            if (!qgemv_iq1_snap(g, 2, xb, w, scale, xg, L, index)) scale = qgemv_iq1_refit(g, 2, xb, w, scale, xg, index);
            y[ibl].qs[2 * ib + 0] = (uint8_t)(index[0] & 255);
            y[ibl].qs[2 * ib + 1] = (uint8_t)(index[1] & 255);
            y[ibl].qh[ib] = (uint8_t)((index[0] >> 8) | ((index[1] >> 8) << 4));
            scales[ib] = scale;
            shifts[ib] = best_k;
            max_scale = max_scale > scale ? max_scale : scale;
        }
        if (max_scale == 0.0f) continue;
        /* the 3-bit sub-block scales s, then d refitted over all the values at those scales */
        uint16_t sc[4] = {0, 0, 0, 0};
        float d = max_scale / 15.0f;
        const float id = 1.0f / d;
        float sumqx = 0.0f, sumq2 = 0.0f;
        for (int ib = 0; ib < QK_K / 16; ib++) {
            const int l = qgemv_clamp_int(qgemv_nearest_int(0.5f * (id * scales[ib] - 1.0f)), 0, 7);
            sc[ib / 4] |= (uint16_t)(l << 3 * (ib % 4));
            y[ibl].qh[ib] |= masks[shifts[ib]];
            const float *xb = x + 16 * ib;
            float w[16];
            const float *qwb = qw ? qw + QK_K * ibl + 16 * ib : NULL;
            qgemv_search_weights(xb, qwb, qwb ? sigma2 : 0.0f, w, 16);
            for (int k = 0; k < 2; k++) {
                const float *xx = (k == 0 ? shifts[ib] < 2 : shifts[ib] % 2 == 0) ? x_p : x_m;
                const uint64_t p = g->levels[y[ibl].qs[2 * ib + k] | (y[ibl].qh[ib] >> 4 * k & 7) << 8];
                for (int j = 0; j < 8; j++) {
                    const float q = xx[((int)(p >> 8 * j & 0xff) - 1) / 2] * (float)(2 * l + 1);
                    sumqx += w[8 * k + j] * q * xb[8 * k + j];
                    sumq2 += w[8 * k + j] * q * q;
                }
            }
        }
        if (sumq2 > 0.0f) d = sumqx / sumq2;
        const uint16_t h = qgemv_fp32_to_fp16(d * 1.1125f);
        sc[0] |= (uint16_t)((h & 0x000f) << 12);
        sc[1] |= (uint16_t)((h & 0x00f0) << 8);
        sc[2] |= (uint16_t)((h & 0x0f00) << 4);
        sc[3] |= (uint16_t)(h & 0xf000);
        for (int k = 0; k < 4; k++) {
            y[ibl].scales[2 * k] = (uint8_t)(sc[k] & 0xff);
            y[ibl].scales[2 * k + 1] = (uint8_t)(sc[k] >> 8);
        }
    }
}
