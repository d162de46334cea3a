/* The searches behind ggml's weight quantizers, shared by every quantize_*.h family file.
 *
 * Bytes must equal ggml's (ggml-quants.c), so the float arithmetic is ggml's to the
 * operation: the same accumulation order (sequential sums, never reassociated),
 * nearest_int's round-half-even through the 1.5 * 2^23 magic number, half away from zero
 * where ggml calls roundf / lroundf, and GROUP_MAX_EPS for "all zero".  Portable C, with AVX2
 * paths for the per-value loops that do the same IEEE operations: every ISA variant
 * quantizes to the same bytes (the tests run each).  Naming: quantize_<name>(x, y, n, imatrix)
 * is ggml's quantize_<name> for one row of n values (imatrix: n importance weights, or NULL
 * for ggml's path without them); quantize_row_<name>_ref / _imatrix are its two halves.
 */

#include <float.h>

#define QGEMV_GROUP_MAX_EPS 1e-15f

/* round half to even of |v| < 2^22, as an int (ggml's nearest_int) */
static inline int qgemv_nearest_int(float v) {
    const float shifted = v + 12582912.0f;
    int32_t bits;
    memcpy(&bits, &shifted, 4);
    return (bits & 0x007fffff) - 0x00400000;
}

/* round half away from zero of |v| < 2^31, as an int: roundf / lroundf without a libm call
 * (truncate, then the fraction v - trunc(v) is exact) */
static inline int qgemv_round_half_away(float v) {
    const int i = (int)v;
    const float frac = v - (float)i;
    return i + (frac >= 0.5f) - (frac <= -0.5f);
}

/* the index of the level of the 16 sorted levels nearest x, ties to the upper one
 * (ggml's best_index_int8): x picks level j once 2x reaches val[j-1] + val[j], exactly */
static inline int qgemv_nearest_level16(const int8_t *val, float x) {
    const float x2 = x + x;
    int idx = 0;
    for (int step = 8; step > 0; step >>= 1) {
        const int j = idx + step;
        idx = x2 >= (float)(val[j - 1] + val[j]) ? j : idx;
    }
    return idx;
}

/* The searches below evaluate each candidate scale in two passes: every per-value term in a
 * loop the compiler vectorizes, then ggml's sums of those terms in ggml's order (a float sum
 * is never reassociated).  Each term is rounded exactly as in ggml's single loop:
 * w x l = (w x) l and w l l = (w l) l.  n <= QGEMV_SEARCH_MAX. */
#define QGEMV_SEARCH_MAX 32

static inline int qgemv_clamp_int(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static inline void qgemv_sum2_in_order(const float *a, const float *b, int n, float *sa, float *sb) {
    float s0 = 0.0f, s1 = 0.0f;
    for (int i = 0; i < n; i++) { s0 += a[i]; s1 += b[i]; }
    *sa = s0;
    *sb = s1;
}

/* the terms of one candidate inverse scale: l = clamp(nearest_int(iscale x), -nmax, nmax - 1),
 * tlx = (w x) l, tl2 = (w l) l; n a multiple of 8 in the AVX2 path */
static inline void qgemv_qx_terms(int n, int nmax, float iscale, const float *restrict x, const float *restrict w,
                                  const float *restrict wx, int *restrict l, float *restrict tlx,
                                  float *restrict tl2) {
    int i = 0;
#if defined(QGEMV_AVX2)
    const __m256 vis = _mm256_set1_ps(iscale), magic = _mm256_set1_ps(12582912.0f);
    const __m256i lo = _mm256_set1_epi32(-nmax), hi = _mm256_set1_epi32(nmax - 1);
    for (; i + 8 <= n; i += 8) {
        const __m256i bits = _mm256_castps_si256(_mm256_add_ps(_mm256_mul_ps(vis, _mm256_loadu_ps(x + i)), magic));
        __m256i li = _mm256_sub_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x00400000));
        li = _mm256_min_epi32(_mm256_max_epi32(li, lo), hi);
        const __m256 lf = _mm256_cvtepi32_ps(li);
        _mm256_storeu_si256((__m256i *)(l + i), li);
        _mm256_storeu_ps(tlx + i, _mm256_mul_ps(_mm256_loadu_ps(wx + i), lf));
        _mm256_storeu_ps(tl2 + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(w + i), lf), lf));
    }
#endif
    for (; i < n; i++) {
        l[i] = qgemv_clamp_int(qgemv_nearest_int(iscale * x[i]), -nmax, nmax - 1);
        tlx[i] = wx[i] * (float)l[i];
        tl2[i] = w[i] * (float)l[i] * (float)l[i];
    }
}

/* Symmetric levels L in [0, 2 nmax) for x = scale (L - nmax), fitted by weighted least
 * squares: start from -nmax / max, try 18 nearby inverse scales, keep the one that maximises
 * (sum w x l)^2 / sum w l^2.  w = qw, or x^2 without it (ggml's make_qx_quants, rmse_type 1). */
static float qgemv_make_qx_quants(int n, int nmax, const float *restrict x, int8_t *restrict L,
                                  const float *restrict qw) {
    float max = 0.0f, amax = 0.0f;
    for (int i = 0; i < n; i++) {
        const float ax = fabsf(x[i]);
        if (ax > amax) { amax = ax; max = x[i]; }
    }
    if (amax < QGEMV_GROUP_MAX_EPS) {
        memset(L, 0, (size_t)n);
        return 0.0f;
    }
    float w[QGEMV_SEARCH_MAX], wx[QGEMV_SEARCH_MAX], tlx[QGEMV_SEARCH_MAX], tl2[QGEMV_SEARCH_MAX];
    int l[QGEMV_SEARCH_MAX];
    for (int i = 0; i < n; i++) {
        w[i] = qw ? qw[i] : x[i] * x[i];
        wx[i] = w[i] * x[i];
    }
    float iscale = (float)-nmax / max;
    qgemv_qx_terms(n, nmax, iscale, x, w, wx, l, tlx, tl2);
    for (int i = 0; i < n; i++) L[i] = (int8_t)(l[i] + nmax);
    float sumlx, suml2;
    qgemv_sum2_in_order(tlx, tl2, n, &sumlx, &suml2);
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; is++) {
        if (is == 0) continue;
        iscale = -((float)nmax + 0.1f * (float)is) / max;
        qgemv_qx_terms(n, nmax, iscale, x, w, wx, l, tlx, tl2);
        qgemv_sum2_in_order(tlx, tl2, n, &sumlx, &suml2);
        if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; i++) L[i] = (int8_t)(l[i] + nmax);
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

/* the terms of one candidate of make_qkx2/qkx3_quants: l = nearest_int(iscale (x - min))
 * clamped to [0, nmax] (guarded, as make_qkx3_quants: v = iscale (x - min) <= 0 or NaN gives
 * 0, v > nmax rounds nmax), tl = w l, tl2 = (w l) l, txl = (w l) x */
static inline void qgemv_qkx_terms(int n, int nmax, float iscale, float min, int guarded,
                                   const float *restrict x, const float *restrict w, int *restrict l,
                                   float *restrict tl, float *restrict tl2, float *restrict txl) {
    int i = 0;
#if defined(QGEMV_AVX2)
    const __m256 vis = _mm256_set1_ps(iscale), vmin = _mm256_set1_ps(min), magic = _mm256_set1_ps(12582912.0f);
    const __m256 vnmax = _mm256_set1_ps((float)nmax);
    const __m256i zero = _mm256_setzero_si256(), inmax = _mm256_set1_epi32(nmax);
    for (; i + 8 <= n; i += 8) {
        const __m256 xv = _mm256_loadu_ps(x + i), wv = _mm256_loadu_ps(w + i);
        const __m256 v = _mm256_mul_ps(vis, _mm256_sub_ps(xv, vmin));
        const __m256 r = guarded ? _mm256_min_ps(v, vnmax) : v;   /* v < nmax ? v : nmax */
        const __m256i bits = _mm256_castps_si256(_mm256_add_ps(r, magic));
        __m256i li = _mm256_sub_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x00400000));
        if (guarded) li = _mm256_and_si256(li, _mm256_castps_si256(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GT_OQ)));
        else li = _mm256_min_epi32(_mm256_max_epi32(li, zero), inmax);
        const __m256 lf = _mm256_cvtepi32_ps(li), wl = _mm256_mul_ps(wv, lf);
        _mm256_storeu_si256((__m256i *)(l + i), li);
        _mm256_storeu_ps(tl + i, wl);
        _mm256_storeu_ps(tl2 + i, _mm256_mul_ps(wl, lf));
        _mm256_storeu_ps(txl + i, _mm256_mul_ps(wl, xv));
    }
#endif
    for (; i < n; i++) {
        const float v = iscale * (x[i] - min);
        if (guarded) l[i] = v > 0.0f ? qgemv_nearest_int(v < (float)nmax ? v : (float)nmax) : 0;
        else l[i] = qgemv_clamp_int(qgemv_nearest_int(v), 0, nmax);
        tl[i] = w[i] * (float)l[i];
        tl2[i] = w[i] * (float)l[i] * (float)l[i];
        txl[i] = w[i] * (float)l[i] * x[i];
    }
}

/* the terms w f(scale l + min - x) of a candidate's error, f = |.| (use_mad) or square */
static inline void qgemv_qkx_error_terms(int n, float scale, float min, int use_mad, const float *restrict x,
                                         const float *restrict w, const int *restrict l, float *restrict e) {
    int i = 0;
#if defined(QGEMV_AVX2)
    const __m256 vs = _mm256_set1_ps(scale), vm = _mm256_set1_ps(min);
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    for (; i + 8 <= n; i += 8) {
        const __m256 lf = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(l + i)));
        __m256 diff = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(vs, lf), vm), _mm256_loadu_ps(x + i));
        diff = use_mad ? _mm256_and_ps(diff, abs_mask) : _mm256_mul_ps(diff, diff);
        _mm256_storeu_ps(e + i, _mm256_mul_ps(_mm256_loadu_ps(w + i), diff));
    }
#endif
    for (; i < n; i++) {
        float diff = scale * (float)l[i] + min - x[i];
        diff = use_mad ? fabsf(diff) : diff * diff;
        e[i] = w[i] * diff;
    }
}

static inline float qgemv_sum_in_order(const float *a, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += a[i];
    return s;
}

/* The weighted least-squares search of make_qkx2_quants (guarded = 0) and make_qkx3_quants
 * (guarded = 1), from the first fit L, scale, min and its error: nstep + 1 inverse scales
 * (rmin + rdelta is + nmax) / (max - min), each refitted in closed form, the lowest error kept.
 * (min is updated as the search goes, as in ggml.) */
static float qgemv_qkx_search(int n, int nmax, const float *restrict x, const float *restrict w,
                              float sum_w, float sum_x, float max, float min, float scale, float best_error,
                              uint8_t *restrict L, float *restrict the_min, float rmin, float rdelta, int nstep,
                              int use_mad, int guarded) {
    int l[QGEMV_SEARCH_MAX];
    float tl[QGEMV_SEARCH_MAX], tl2[QGEMV_SEARCH_MAX], txl[QGEMV_SEARCH_MAX];
    for (int is = 0; is <= nstep; is++) {
        const float iscale = (rmin + rdelta * (float)is + (float)nmax) / (max - min);
        qgemv_qkx_terms(n, nmax, iscale, min, guarded, x, w, l, tl, tl2, txl);
        float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
        for (int i = 0; i < n; i++) { sum_l += tl[i]; sum_l2 += tl2[i]; sum_xl += txl[i]; }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0.0f) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0.0f) {
                this_min = 0.0f;
                this_scale = sum_xl / sum_l2;
            }
            qgemv_qkx_error_terms(n, this_scale, this_min, use_mad, x, w, l, tl);
            const float cur_error = qgemv_sum_in_order(tl, n);
            if (cur_error < best_error) {
                for (int i = 0; i < n; i++) L[i] = (uint8_t)l[i];
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

/* Asymmetric levels L in [0, nmax] for x = scale L - the_min (the_min >= 0), fitted by
 * weighted least squares over nstep + 1 inverse scales (rmin + rdelta is + nmax) / (max - min),
 * keeping the smallest weighted squared (or absolute, use_mad) error.  weights NULL: x^2.
 * guarded: ggml's make_qkx3_quants, whose search guards the rounding (min may sit at or near
 * max, so iscale (x - min) can be inf, nan or out of nearest_int's range); unguarded: its
 * make_qkx2_quants.  (Their flat-block tests, max == min and max <= min, agree: min <= 0 <= max
 * or min = min(x) <= max.) */
static float qgemv_make_qkx_quants(int n, int nmax, const float *restrict x, const float *restrict weights,
                                   uint8_t *restrict L, float *restrict the_min, float rmin, float rdelta,
                                   int nstep, int use_mad, int guarded) {
    float min = x[0], max = x[0];
    float sum_w = weights ? weights[0] : x[0] * x[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; i++) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weights ? weights[i] : x[i] * x[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0.0f) min = 0.0f;
    if (max <= min) {
        memset(L, 0, (size_t)n);
        *the_min = -min;
        return 0.0f;
    }
    float iscale = (float)nmax / (max - min);
    float scale = 1.0f / iscale;
    float best_mad = 0.0f;
    for (int i = 0; i < n; i++) {
        const int l = qgemv_nearest_int(iscale * (x[i] - min));
        L[i] = (uint8_t)(l < 0 ? 0 : l > nmax ? nmax : l);
        float diff = scale * (float)L[i] + min - x[i];
        diff = use_mad ? fabsf(diff) : diff * diff;
        const float w = weights ? weights[i] : x[i] * x[i];
        best_mad += w * diff;
    }
    if (nstep < 1) {
        *the_min = -min;
        return scale;
    }
    float w[QGEMV_SEARCH_MAX];
    for (int i = 0; i < n; i++) w[i] = weights ? weights[i] : x[i] * x[i];
    return qgemv_qkx_search(n, nmax, x, w, sum_w, sum_x, max, min, scale, best_mad, L, the_min,
                            rmin, rdelta, nstep, use_mad, guarded);
}
static inline float qgemv_make_qkx3_quants(int n, int nmax, const float *restrict x, const float *restrict weights,
                                           uint8_t *restrict L, float *restrict the_min, float rmin,
                                           float rdelta, int nstep, int use_mad) {
    return qgemv_make_qkx_quants(n, nmax, x, weights, L, the_min, rmin, rdelta, nstep, use_mad, 1);
}

/* the mean of x^2 over a row of n values (sigma2 of ggml's importance-weighted 32-blocks) */
static inline float qgemv_mean_square(const float *x, int64_t n) {
    float sum = 0.0f;
    for (int64_t j = 0; j < n; j++) sum += x[j] * x[j];
    return sum / (float)n;
}

/* ggml's importance weight of value x: qw sqrt(sigma2 + x^2) */
static inline void qgemv_importance(const float *restrict x, const float *restrict qw, float sigma2,
                                    float *restrict w, int n) {
    for (int j = 0; j < n; j++) w[j] = qw[j] * sqrtf(sigma2 + x[j] * x[j]);
}
