/* The grid maps and neighbour lists of ggml's 8-value grids (ggml's iq2_init_impl) and the
 * neighbour search over them, shared by the quantizers of iq2_xxs, iq2_xs, iq2_s
 * (quantize_iq2.h) and iq1_s / iq1_m (the iq1s grid, quantize_iq1.h); and the sub-block
 * preparation (weights, magnitudes, sign bits) and the neighbour search, which iq3's 4-value
 * grids use too.
 *
 * A grid point of g = QGEMV_GRID8_IQ2XXS (256 points), _IQ2XS (512), _IQ2S (1024) or _IQ1S
 * (2048) is 8 levels l_k in {0, 1, 2}, which ggml's searches use as the odd values 2 l_k + 1
 * (1, 3, 5); its key is u = sum_k l_k 4^k.  For every key u < QGEMV_GRID8_KEYS of 8 levels in
 * {0..3} (the rounded, clamped levels a search produces), the tables say where u lands:
 *
 *   map[u] = i >= 0          u is grid point i;
 *   map[u] = -(1 + o) < 0    u is off the grid: neighbours[o] = m, neighbours[o + 1 .. o + m]
 *                            are the grid points nearest u (squared distance of the odd values):
 *                            all points at the nwant smallest distinct distances, ordered by
 *                            (distance, index), which is the order ggml's qsort with
 *                            iq2_compare_func gives (a total order, so no ties to break).
 *                            nwant = 2 for iq2_xxs / iq2_xs, 1 for iq2_s, 3 for iq1_s / iq1_m.
 *
 * levels[i] holds point i's odd values 2 l_k + 1, byte k (ggml's kgrid_q2xs), decoded from the
 * grids of qgemv/grids.h (iq2 bytes 8, 25, 43 and iq1s bytes -1, 0, 1 are levels 0, 1, 2).
 * The lists are offsets and counts, exactly as ggml lays them out (u ascending).
 *
 * Thread safety: the tables of one grid are built once per process (per ISA variant, as this
 * file is compiled into each kernel table) by qgemv_grid8_build, which the Cython driver calls
 * through the kernel table's quantize_prepare(qtype) WITH THE GIL HELD, before its prange;
 * the quantizers then only read them, through qgemv_grid8_ready.  They live until the process
 * ends (ggml keeps its own until ggml_quantize_free); building twice is a no-op.
 *
 * To use a grid in a new quantizer (e.g. iq1_s): add its qtype to qgemv_quantize_prepare
 * below (iq1_s / iq1_m are already there), then in the quantizer
 *     const qgemv_grid8 *g = qgemv_grid8_ready(QGEMV_GRID8_IQ1S);
 *     int i = g->map[u];  if (i < 0) { const uint16_t *nb = g->neighbours - i - 1; ... }
 * and qgemv_grid_best_neighbour(nb, (const uint8_t *)g->levels, 8, ...) for ggml's
 * iq2_find_best_neighbour and iq1_find_best_neighbour2 (quantize_iq2.h and quantize_iq1.h show
 * the whole pattern).
 */

#include <stdlib.h>

static qgemv_grid8 qgemv_grid8_tables[QGEMV_GRID8_COUNT];

/* the grid points of g, its size and its neighbour-list depth nwant */
static void qgemv_grid8_source(int g, const uint64_t **points, int *size, int *nwant) {
    switch (g) {
    case QGEMV_GRID8_IQ2XXS: *points = iq2xxs_grid; *size = 256; *nwant = 2; break;
    case QGEMV_GRID8_IQ2XS: *points = iq2xs_grid; *size = 512; *nwant = 2; break;
    case QGEMV_GRID8_IQ2S: *points = iq2s_grid; *size = 1024; *nwant = 1; break;
    default: *points = iq1s_grid; *size = NGRID_IQ1S; *nwant = 3; break;
    }
}

/* the level 0, 1, 2 of a grid byte (iq2: 8, 25, 43; iq1s: -1, 0, 1), or -1 */
static inline int qgemv_grid8_level(int g, uint8_t b) {
    if (g == QGEMV_GRID8_IQ1S) return b == 0xff ? 0 : b == 0 ? 1 : b == 1 ? 2 : -1;
    return b == 8 ? 0 : b == 25 ? 1 : b == 43 ? 2 : -1;
}

/* sum_k (a_k - b_k)^2 over the 4 levels (2 bits each) of two half-keys: a quarter of the
 * squared distance of the odd values, so it orders distances as ggml's d2 does */
static inline int qgemv_grid8_half_distance(int a, int b) {
    int s = 0;
    for (int k = 0; k < 4; k++) {
        const int d = ((a >> 2 * k) & 3) - ((b >> 2 * k) & 3);
        s += d * d;
    }
    return s;
}

/* Builds the tables of grid g (see the top of the file) unless built: 0, or -1 when out of
 * memory (nothing kept).  Call with the GIL held, never from inside a prange. */
static int qgemv_grid8_build(int g) {
    if (g < 0 || g >= QGEMV_GRID8_COUNT) return -1;
    qgemv_grid8 *t = &qgemv_grid8_tables[g];
    if (t->neighbours) return 0;
    const uint64_t *points;
    int size, nwant;
    qgemv_grid8_source(g, &points, &size, &nwant);

    uint64_t *levels = malloc((size_t)size * sizeof *levels);
    int32_t *map = malloc(QGEMV_GRID8_KEYS * sizeof *map);
    /* the distance of a key u to point j, in quarter units (< 8 * 9 + 1): lo[(u & 255) size + j]
     * + hi[(u >> 8) size + j], the two halves' distances to the point's halves */
    uint8_t *lo = malloc((size_t)256 * size), *hi = malloc((size_t)256 * size);
    uint16_t *key = malloc((size_t)size * sizeof *key);
    uint8_t *dist = malloc((size_t)size);
    uint16_t *near = malloc((size_t)size * sizeof *near);
    size_t cap = (size_t)QGEMV_GRID8_KEYS * 8, used = 0;
    uint16_t *nb = malloc(cap * sizeof *nb);
    if (!levels || !map || !lo || !hi || !key || !dist || !near || !nb) goto fail;

    for (int u = 0; u < QGEMV_GRID8_KEYS; u++) map[u] = -1;
    for (int i = 0; i < size; i++) {
        unsigned u = 0;
        uint64_t odd = 0;
        for (int k = 0; k < 8; k++) {
            const int l = qgemv_grid8_level(g, (uint8_t)(points[i] >> 8 * k));
            if (l < 0) goto fail;
            u |= (unsigned)l << 2 * k;
            odd |= (uint64_t)(2 * l + 1) << 8 * k;
        }
        levels[i] = odd;
        key[i] = (uint16_t)u;
        map[u] = i;
    }
    for (int a = 0; a < 256; a++)
        for (int j = 0; j < size; j++) {
            lo[(size_t)a * size + j] = (uint8_t)qgemv_grid8_half_distance(a, key[j] & 255);
            hi[(size_t)a * size + j] = (uint8_t)qgemv_grid8_half_distance(a, key[j] >> 8);
        }

    for (int u = 0; u < QGEMV_GRID8_KEYS; u++) {
        if (map[u] >= 0) continue;
        const uint8_t *dlo = lo + (size_t)(u & 255) * size, *dhi = hi + (size_t)(u >> 8) * size;
        for (int j = 0; j < size; j++) dist[j] = (uint8_t)(dlo[j] + dhi[j]);
        /* the nwant smallest distinct distances (fewer if there are fewer) */
        int want[3], nd = 0;
        for (uint8_t floor = 0; nd < nwant;) {
            uint8_t m = 255;   /* the least dist - floor, mod 256: those below floor wrap above 72 */
            for (int j = 0; j < size; j++) {
                const uint8_t d = (uint8_t)(dist[j] - floor);
                m = d < m ? d : m;
            }
            if (m > 8 * 9) break;
            want[nd++] = m + floor;
            floor = (uint8_t)(m + floor + 1);
        }
        /* the points within the cut, in index order (8 distances at a time skipped unless one
         * byte is below cut + 1: the has-less-than test, bytes < 128), then emitted by distance */
        const uint64_t ones = 0x0101010101010101u, cut1 = ones * (uint64_t)(want[nd - 1] + 1);
        int n = 0;
        for (int j = 0; j < size; j += 8) {
            uint64_t v;
            memcpy(&v, dist + j, 8);
            if (!((v - cut1) & ~v & ones * 0x80)) continue;
            for (int k = j; k < j + 8; k++)
                if (dist[k] <= want[nd - 1]) near[n++] = (uint16_t)k;
        }
        if (used + 1 + (size_t)n > cap) {
            cap = 2 * cap + (size_t)n + 1;
            uint16_t *grown = realloc(nb, cap * sizeof *nb);
            if (!grown) goto fail;
            nb = grown;
        }
        map[u] = -(int32_t)(used + 1);
        nb[used++] = (uint16_t)n;
        for (int w = 0; w < nd; w++)
            for (int k = 0; k < n; k++)
                if (dist[near[k]] == want[w]) nb[used++] = near[k];
    }
    free(lo);
    free(hi);
    free(key);
    free(dist);
    free(near);
    uint16_t *fitted = realloc(nb, used * sizeof *nb);
    t->levels = levels;
    t->map = map;
    t->neighbours = fitted ? fitted : nb;
    t->size = size;
    t->n_neighbours = (int64_t)used;
    return 0;
fail:
    free(levels);
    free(map);
    free(lo);
    free(hi);
    free(key);
    free(dist);
    free(near);
    free(nb);
    return -1;
}

/* the tables of grid g, built (qgemv_grid8_build) or NULL; safe inside a prange */
static inline const qgemv_grid8 *qgemv_grid8_ready(int g) {
    return qgemv_grid8_tables[g].neighbours ? &qgemv_grid8_tables[g] : NULL;
}

/* the tables of grid g, built now if they were not: the kernel table's grid8 entry (tests
 * read them through it); NULL when out of memory.  GIL held. */
static const qgemv_grid8 *qgemv_grid8_get(int g) {
    return qgemv_grid8_build(g) == 0 ? &qgemv_grid8_tables[g] : NULL;
}

/* Builds whatever ggml's quantize_init builds for qtype before quantize_row[qtype] runs: the
 * kernel table's quantize_prepare, called by the Cython driver with the GIL held before its
 * prange.  0, or -1 when out of memory. */
static void quantize_init_iq3_xxs(void);   /* quantize_iq3.h, included later */
static void quantize_init_iq3_s(void);

static int qgemv_quantize_prepare(int qtype) {
    switch (qtype) {
    case QGEMV_ID_iq2_xxs: return qgemv_grid8_build(QGEMV_GRID8_IQ2XXS);
    case QGEMV_ID_iq2_xs: return qgemv_grid8_build(QGEMV_GRID8_IQ2XS);
    case QGEMV_ID_iq2_s: return qgemv_grid8_build(QGEMV_GRID8_IQ2S);
    case QGEMV_ID_iq1_s:
    case QGEMV_ID_iq1_m: return qgemv_grid8_build(QGEMV_GRID8_IQ1S);
    case QGEMV_ID_iq3_xxs: quantize_init_iq3_xxs(); return 0;   /* quantize_iq3.h */
    case QGEMV_ID_iq3_s: quantize_init_iq3_s(); return 0;
    default: return 0;
    }
}

/* ---------------------------------------------------------------- the sub-block preparation shared by the grid searches */

/* The weights of a grid search over n values: qw sqrt(sigma2 + x^2) with an importance matrix
 * (ggml's), else sigma2 / 4 + x^2 (iq2_s; the others pass sigma2 = 0, which gives x^2 exactly) */
static inline void qgemv_search_weights(const float *restrict xb, const float *restrict qw, float sigma2,
                                        float *restrict w, int n) {
    if (qw) qgemv_importance(xb, qw, sigma2, w, n);
    else for (int i = 0; i < n; i++) w[i] = 0.25f * sigma2 + xb[i] * xb[i];
}

/* magnitudes xval = |x| of a group of 8 and its sign bits; with even_signs (iq2_xxs, iq2_xs)
 * an odd count of minus signs is made even by flipping the value of least w x^2 (the first
 * on ties), which then enters xval negated; the sign byte keeps 7 bits */
static inline uint8_t qgemv_split_signs8(const float *restrict x, const float *restrict w, int even_signs,
                                       float *restrict xval) {
    unsigned s = 0;
    int nflip = 0;
    for (int i = 0; i < 8; i++) {
        if (x[i] >= 0.0f) {
            xval[i] = x[i];
        } else {
            xval[i] = -x[i];
            nflip++;
            s |= 1u << i;
        }
    }
    if (!even_signs) return (uint8_t)s;
    if (nflip % 2) {
        int imin = 0;
        float min = w[0] * x[0] * x[0];
        for (int i = 1; i < 8; i++) {
            const float ax = w[i] * x[i] * x[i];
            if (ax < min) { min = ax; imin = i; }
        }
        xval[imin] = -xval[imin];
        s ^= 1u << imin;
    }
    return (uint8_t)(s & 127);
}

/* A sub-block of n values (32 or 16) made ready for a grid search (iq2, iq3): weights w
 * (qgemv_search_weights), waux = sqrt(w), magnitudes xval and a sign byte per 8 values
 * (qgemv_split_signs8).  Returns the largest xval. */
static inline float qgemv_weights_magnitudes_signs(int n, const float *restrict xb, const float *restrict qw, float sigma2,
                                        int even_signs, float *restrict w, float *restrict waux,
                                        float *restrict xval, uint8_t *restrict signs) {
    qgemv_search_weights(xb, qw, sigma2, w, n);
    for (int i = 0; i < n; i++) waux[i] = sqrtf(w[i]);
    for (int k = 0; k < n / 8; k++) signs[k] = qgemv_split_signs8(xb + 8 * k, w + 8 * k, even_signs, xval + 8 * k);
    float max = xval[0];
    for (int i = 1; i < n; i++) max = max > xval[i] ? max : xval[i];
    return max;
}

/* ---------------------------------------------------------------- the neighbour search */

/* ggml's iq2_find_best_neighbour, iq1_find_best_neighbour2 and iq3_find_best_neighbour, one
 * search: among the m = nb[0] grid points nb[1..m] (point k: the n = 4 or 8 bytes
 * points[n k ..], each an odd value 2 l + 1) the one nearest x, level l taking the value xg[l]
 * (iq2, iq3: the odd value itself; iq1: shifted -1, 0, 1; n_levels <= 8 of them) scaled by
 * scale, distance weighted by w: sum_i (w_i diff_i) diff_i in order i, diff_i = scale xg[l_i]
 * - x_i; the first one on ties.  L = its n levels.  Returns the grid index.  The AVX2 path
 * takes 8 neighbours at once, one lane each (their points gathered as 32-bit words, xg looked
 * up by permute), with the same operations in the same order, and scans the lanes in order as
 * the scalar loop does. */
static inline int qgemv_grid_best_neighbour(const uint16_t *restrict nb, const uint8_t *restrict points, int n,
                                            const float *restrict xg, int n_levels, const float *restrict x,
                                            const float *restrict w, float scale, int8_t *restrict L) {
    const int m = nb[0];
    float best_d2 = FLT_MAX;
    int best = nb[1];   /* ggml asserts one is found (d2 finite) */
    int j = 1;
#if defined(QGEMV_AVX2)
    float xg8[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    memcpy(xg8, xg, (size_t)n_levels * sizeof *xg);
    const __m256 vscale = _mm256_set1_ps(scale), vxg = _mm256_loadu_ps(xg8);
    const __m256i seven = _mm256_set1_epi32(7);
    const int *words = (const int *)points;
    for (; j + 8 <= m + 1; j += 8) {
        const __m256i idx = _mm256_mullo_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(nb + j))),
                                               _mm256_set1_epi32(n / 4));
        __m256i word[2];
        for (int h = 0; h < n / 4; h++) word[h] = _mm256_i32gather_epi32(words + h, idx, 4);
        __m256 d2 = _mm256_setzero_ps();
        for (int i = 0; i < n; i++) {
            /* byte i of the point is 2 l + 1: l = its bits 1..3 */
            const __m256i l = _mm256_and_si256(_mm256_srli_epi32(word[i / 4], 8 * (i % 4) + 1), seven);
            const __m256 q = _mm256_permutevar8x32_ps(vxg, l);
            const __m256 diff = _mm256_sub_ps(_mm256_mul_ps(vscale, q), _mm256_set1_ps(x[i]));
            d2 = _mm256_add_ps(d2, _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(w[i]), diff), diff));
        }
        float d2s[8];
        _mm256_storeu_ps(d2s, d2);
        for (int k = 0; k < 8; k++)
            if (d2s[k] < best_d2) { best_d2 = d2s[k]; best = nb[j + k]; }
    }
#else
    (void)n_levels;
#endif
    for (; j <= m; j++) {
        const uint8_t *p = points + (size_t)n * nb[j];
        float d2 = 0.0f;
        for (int i = 0; i < n; i++) {
            const float diff = scale * xg[p[i] >> 1] - x[i];
            d2 += w[i] * diff * diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            best = nb[j];
        }
    }
    for (int i = 0; i < n; i++) L[i] = (int8_t)(points[(size_t)n * best + i] >> 1);
    return best;
}
