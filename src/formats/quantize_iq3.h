/* Weight quantizers of the 3-bit grid formats iq3_xxs and iq3_s: 32-value sub-blocks of
 * x = d (1 + 2 s_b) (2 l + 1) sign, with each group of 4 levels l in [0, 8) a point of the grid
 * (256 points for iq3_xxs, 512 for iq3_s).
 *
 * ggml's quantize_row_iq3_xxs_impl / quantize_row_iq3_s_impl: per sub-block, signs split off
 * (iq3_xxs keeps an even count of negatives, flipping the least important value), then 31
 * (iq3_xxs) or 19 (iq3_s) trial scales, each rounding the magnitudes to levels and snapping
 * every group of 4 that is off the grid to its best nearby grid point; the weighted
 * least-squares scale of the best trial is refitted once more.  The nearby points come from
 * ggml's iq3_init_impl tables (qgemv_iq3_tables below), built by quantize_init_<name>, which
 * the driver calls (through quantize_prepare, quantize_grids.h) with the GIL held before its
 * prange.  Weights: imatrix qw sqrt(sigma2 + x^2)
 * with sigma2 = 2 mean(x^2) of the 256-block, or x^2 without one (the grid searches' sub-block
 * preparation qgemv_weights_magnitudes_signs with sigma2 = 0; its sign split is iq3's).
 * Helpers: quantize_common.h, quantize_grids.h.
 */

#define QGEMV_IQ3_MAP_SIZE 4096          /* 4 levels of 3 bits */
#define QGEMV_IQ3_NEIGHBOURS_MAX 28317   /* iq3_s's lists (iq3_xxs: 22825), counts included */

/* ggml's iq3_init_impl for one grid.  grid[k]: point k as 4 bytes 2 l + 1.  map[u], u = the 4
 * levels as 3-bit fields: the grid point k >= 0, or -(1 + o) where neighbours[o] = m counts the
 * m grid points after it, those at the nwant smallest squared distances from u, in ggml's qsort
 * order (distance, then index). */
typedef struct {
    int ready;
    uint32_t grid[512];
    int32_t map[QGEMV_IQ3_MAP_SIZE];
    uint16_t neighbours[QGEMV_IQ3_NEIGHBOURS_MAX];
} qgemv_iq3_tables;

static qgemv_iq3_tables qgemv_iq3xxs_tables, qgemv_iq3s_tables;

/* build t from ggml's dequantization grid, whose bytes are level_base + level_step l */
static void qgemv_iq3_build(qgemv_iq3_tables *t, const uint32_t *dq_grid, int grid_size, int level_base,
                            int level_step, int nwant) {
    for (int u = 0; u < QGEMV_IQ3_MAP_SIZE; u++) t->map[u] = -1;
    for (int k = 0; k < grid_size; k++) {
        uint32_t point = 0;
        int u = 0;
        for (int i = 0; i < 4; i++) {
            const int l = ((int)(dq_grid[k] >> 8 * i & 0xff) - level_base) / level_step;
            point |= (uint32_t)(2 * l + 1) << 8 * i;
            u |= l << 3 * i;
        }
        t->grid[k] = point;
        t->map[u] = k;
    }
    int counter = 0;
    for (int u = 0; u < QGEMV_IQ3_MAP_SIZE; u++) {
        if (t->map[u] >= 0) continue;
        int d2[512];
        for (int k = 0; k < grid_size; k++) {
            d2[k] = 0;
            for (int i = 0; i < 4; i++) {
                const int diff = (int)(t->grid[k] >> 8 * i & 0xff) - (2 * (u >> 3 * i & 7) + 1);
                d2[k] += diff * diff;
            }
        }
        t->map[u] = -(counter + 1);
        const int start = counter++;
        int below = -1;   /* the distances taken so far are <= below */
        for (int have = 0; have < nwant; have++) {
            int next = INT32_MAX;
            for (int k = 0; k < grid_size; k++)
                if (d2[k] > below && d2[k] < next) next = d2[k];
            if (next == INT32_MAX) break;
            for (int k = 0; k < grid_size; k++)
                if (d2[k] == next) t->neighbours[counter++] = (uint16_t)k;
            below = next;
        }
        t->neighbours[start] = (uint16_t)(counter - start - 1);
    }
    t->ready = 1;
}

static void quantize_init_iq3_xxs(void) {
    if (!qgemv_iq3xxs_tables.ready) qgemv_iq3_build(&qgemv_iq3xxs_tables, iq3xxs_grid, 256, 4, 8, 2);
}

static void quantize_init_iq3_s(void) {
    if (!qgemv_iq3s_tables.ready) qgemv_iq3_build(&qgemv_iq3s_tables, iq3s_grid, 512, 1, 2, 3);
}

/* the values of levels 0..7 in iq3's searches: the odd values 2 l + 1 */
static const float qgemv_iq3_level_values[8] = {1.0f, 3.0f, 5.0f, 7.0f, 9.0f, 11.0f, 13.0f, 15.0f};

/* ggml's iq3_find_best_neighbour: of the neighbours of off-grid u, the first point minimising
 * sum w (scale q - x)^2 (q = 2 l + 1), its levels into L (quantize_grids.h) */
static inline int qgemv_iq3_best_neighbour(const qgemv_iq3_tables *t, int u, const float *xval, const float *w,
                                           float scale, int8_t *L) {
    return qgemv_grid_best_neighbour(t->neighbours + (-t->map[u] - 1), (const uint8_t *)t->grid, 4,
                                     qgemv_iq3_level_values, 8, xval, w, scale, L);
}

/* the 4 levels of x at inverse scale id: clamp(nearest_int((id x - 1) / 2), 0, 7), and their
 * map index */
static inline int qgemv_iq3_round4(const float *xval, float id, int8_t *L) {
    int u = 0;
    for (int i = 0; i < 4; i++) {
        L[i] = (int8_t)qgemv_clamp_int(qgemv_nearest_int(0.5f * (id * xval[i] - 1.0f)), 0, 7);
        u |= L[i] << 3 * i;
    }
    return u;
}

/* sum w x q and sum w q^2 over 32 values, q = 2 L + 1, in ggml's order */
static inline void qgemv_iq3_sums(const float *xval, const float *w, const int8_t *L, float *sumqx, float *sumq2) {
    float sx = 0.0f, s2 = 0.0f;
    for (int i = 0; i < 32; i++) {
        const float q = (float)(2 * L[i] + 1);
        sx += w[i] * xval[i] * q;
        s2 += w[i] * q * q;
    }
    *sumqx = sx;
    *sumq2 = s2;
}

/* The scale search of one 32-value sub-block of magnitudes xval (max > 0): trial inverse
 * scales (15 + 0.2 is) / max for |is| <= nstep, keeping the levels that maximise
 * (sum w x q)^2 / sum w q^2, then the groups off the grid (all groups: refit_all) re-rounded at
 * the fitted scale and the scale refitted.  Returns the scale; L the 32 levels, on the grid. */
static float qgemv_iq3_search_32(const qgemv_iq3_tables *t, const float *xval, const float *weight,
                                 const float *waux, float max, int nstep, int on_grid_init, int refit_all,
                                 int8_t L[32]) {
    int8_t Laux[32];
    int on_grid[8], on_grid_aux[8];
    float best = 0.0f, scale = max / 15.0f;
    memset(L, 0, 32);
    for (int k = 0; k < 8; k++) on_grid[k] = on_grid_init;
    for (int is = -nstep; is <= nstep; is++) {
        const float id = (15.0f + (float)is * 0.2f) / max;
        const float this_scale = 1.0f / id;
        for (int k = 0; k < 8; k++) {
            const int u = qgemv_iq3_round4(xval + 4 * k, id, Laux + 4 * k);
            on_grid_aux[k] = t->map[u] >= 0;
            if (!on_grid_aux[k]) qgemv_iq3_best_neighbour(t, u, xval + 4 * k, waux + 4 * k, this_scale, Laux + 4 * k);
        }
        float sumqx, sumq2;
        qgemv_iq3_sums(xval, weight, Laux, &sumqx, &sumq2);
        if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            memcpy(L, Laux, 32);
            memcpy(on_grid, on_grid_aux, sizeof(on_grid));
        }
    }
    int n_off_grid = 0;
    for (int k = 0; k < 8; k++) n_off_grid += !on_grid[k];
    if (n_off_grid > 0 && scale > 0.0f) {
        const float id = 1.0f / scale;
        for (int k = 0; k < 8; k++) {
            if (on_grid[k] && !refit_all) continue;
            const int u = qgemv_iq3_round4(xval + 4 * k, id, L + 4 * k);
            if (t->map[u] < 0) qgemv_iq3_best_neighbour(t, u, xval + 4 * k, waux + 4 * k, scale, L + 4 * k);
        }
        float sumqx, sumq2;
        qgemv_iq3_sums(xval, weight, L, &sumqx, &sumq2);
        if (sumq2 > 0.0f) scale = sumqx / sumq2;
    }
    return scale;
}

/* the grid point of 4 levels already on the grid */
static inline int qgemv_iq3_grid_index(const qgemv_iq3_tables *t, const int8_t *L) {
    return t->map[L[0] | L[1] << 3 | L[2] << 6 | L[3] << 9];
}

/* the sub-block scales as 4-bit s with scale ~ d (2 s + 1), d = max_scale / 31 */
static inline int qgemv_iq3_scale4(float id, float scale) {
    return qgemv_clamp_int(qgemv_nearest_int(0.5f * (id * scale - 1.0f)), 0, 15);
}

/* iq3_xxs: 8 grid indices per sub-block in qs[0..64), then per sub-block a uint32 of four
 * 7-bit sign groups (bits 0..28) and its 4-bit scale (bits 28..32) */
static void quantize_iq3_xxs(const float *restrict x, void *restrict vy, int64_t n, const float *restrict qw) {
    const qgemv_iq3_tables *t = &qgemv_iq3xxs_tables;
    block_iq3_xxs *y = vy;
    for (int64_t ibl = 0; ibl < n / QK_K; ibl++, x += QK_K) {
        uint32_t scales_and_signs[QK_K / 32] = {0};
        float scales[QK_K / 32];
        float max_scale = 0.0f;
        const float sigma2 = 2 * qgemv_sum_squares_256(x) / QK_K;
        memset(y[ibl].qs, 0, sizeof(y[ibl].qs));
        for (int ib = 0; ib < QK_K / 32; ib++) {
            const float *xb = x + 32 * ib;
            float weight[32], waux[32], xval[32];
            int8_t L[32];
            uint8_t block_signs[4];
            const float *qwb = qw ? qw + QK_K * ibl + 32 * ib : NULL;
            const float max = qgemv_weights_magnitudes_signs(32, xb, qwb, qwb ? sigma2 : 0.0f, 1, weight, waux, xval, block_signs);
            if (max < 1e-8f) {   /* ggml's GROUP_MAX_EPS_IQ3_XXS */
                scales[ib] = 0.0f;
                continue;
            }
            float scale = qgemv_iq3_search_32(t, xval, weight, waux, max, 15, 1, 0, L);
            if (scale < 0.0f) {
                scale = -scale;
                for (int k = 0; k < 4; k++) block_signs[k] = (uint8_t)(~block_signs[k] & 127);
            }
            for (int k = 0; k < 8; k++) y[ibl].qs[8 * ib + k] = (uint8_t)qgemv_iq3_grid_index(t, L + 4 * k);
            scales_and_signs[ib] = block_signs[0] | (uint32_t)block_signs[1] << 7 | (uint32_t)block_signs[2] << 14 |
                                   (uint32_t)block_signs[3] << 21;
            scales[ib] = scale;
            max_scale = max_scale > scale ? max_scale : scale;
        }
        if (max_scale == 0.0f) {
            y[ibl].d = qgemv_fp32_to_fp16(0.0f);
            memset(y[ibl].qs, 0, sizeof(y[ibl].qs));
            continue;
        }
        const float d = max_scale / 31.0f;
        y[ibl].d = qgemv_fp32_to_fp16(d * 1.0125f);
        const float id = 1.0f / d;
        for (int ib = 0; ib < QK_K / 32; ib++) scales_and_signs[ib] |= (uint32_t)qgemv_iq3_scale4(id, scales[ib]) << 28;
        memcpy(y[ibl].qs + QK_K / 4, scales_and_signs, sizeof(scales_and_signs));
    }
}

/* iq3_s: per sub-block 8 grid indices (low 8 bits in qs, bit 8 in qh[ib]), 4 sign bytes and a
 * 4-bit scale (two per byte of scales).  As in ggml, an all-zero sub-block does not advance the
 * qs and signs positions: the next sub-block's go where its would have. */
static void quantize_iq3_s(const float *restrict x, void *restrict vy, int64_t n, const float *restrict qw) {
    const qgemv_iq3_tables *t = &qgemv_iq3s_tables;
    block_iq3_s *y = vy;
    for (int64_t ibl = 0; ibl < n / QK_K; ibl++, x += QK_K) {
        block_iq3_s *b = &y[ibl];
        memset(b, 0, sizeof(*b));
        uint8_t *qs = b->qs, *signs = b->signs;
        float scales[QK_K / 32];
        float max_scale = 0.0f;
        const float sigma2 = 2 * qgemv_sum_squares_256(x) / QK_K;
        for (int ib = 0; ib < QK_K / 32; ib++) {
            const float *xb = x + 32 * ib;
            float weight[32], waux[32], xval[32];
            int8_t L[32];
            uint8_t block_signs[4];
            const float *qwb = qw ? qw + QK_K * ibl + 32 * ib : NULL;
            const float max = qgemv_weights_magnitudes_signs(32, xb, qwb, qwb ? sigma2 : 0.0f, 0, weight, waux, xval, block_signs);
            if (max == 0.0f) {
                scales[ib] = 0.0f;
                continue;
            }
            float scale = qgemv_iq3_search_32(t, xval, weight, waux, max, 9, 0, 1, L);
            if (scale < 0.0f) {
                scale = -scale;
                for (int k = 0; k < 4; k++) block_signs[k] = (uint8_t)~block_signs[k];
            }
            for (int k = 0; k < 8; k++) {
                const int grid_index = qgemv_iq3_grid_index(t, L + 4 * k);
                qs[k] = (uint8_t)(grid_index & 255);
                b->qh[ib] |= (uint8_t)((grid_index >> 8) << k);
            }
            qs += 8;
            memcpy(signs, block_signs, 4);
            signs += 4;
            scales[ib] = scale;
            max_scale = max_scale > scale ? max_scale : scale;
        }
        if (max_scale == 0.0f) continue;
        const float d = max_scale / 31.0f;
        b->d = qgemv_fp32_to_fp16(d * 1.033f);
        const float id = 1.0f / d;
        for (int ib = 0; ib < QK_K / 32; ib += 2)
            b->scales[ib / 2] = (uint8_t)(qgemv_iq3_scale4(id, scales[ib]) | qgemv_iq3_scale4(id, scales[ib + 1]) << 4);
    }
}
