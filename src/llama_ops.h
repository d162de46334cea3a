/* The reference model's non-matrix steps (qgemv/llama.py) in ggml's CPU arithmetic, so that
 * its logits are llama.cpp's to the bit: attention over the f16 KV cache without flash
 * attention, and SwiGLU.  Float operations are written one by one (the build sets
 * -ffp-contract=off): fmaf where ggml's vector code fuses, plain * and + where it does not.
 *
 *  - e^x: ggml's AVX2 vector exponential, one lane: x = n ln2 + b with n = round(x / ln2)
 *    and ln2 in two parts, e^b = 1 + b (c1 + b c2 + ...) (degree-5 polynomial), 2^n through
 *    the exponent bits; |n| > 126 scales in two steps, |n| > 192 saturates to 0 or inf.
 *  - dot products of f16 values (query . key, probabilities . value): every product is exact
 *    in float32, so only the order of the additions matters.  ggml_vec_dot_f16 (one query,
 *    decoding) keeps 32 partial sums (element i into sum i mod 32) and folds them as
 *    ((s[l] + s[16+l]) + (s[8+l] + s[24+l])) per lane l < 8, then lanes l + (l+4), then
 *    (0 + 1) + (2 + 3); the llamafile GEMM (several queries, the prompt) keeps 8 partial sums
 *    (i mod 8) and folds them as (l + (l+4)), then (0 + 2) + (1 + 3).
 *  - RMS norm: as ggml_compute_forward_rms_norm_f32, then the weight.
 *  - softmax: s * scale, minus the row maximum, e^x; the row sum is taken 8 values at a time
 *    (folded as the 8-lane sums above: (l + (l+4)), then (0 + 2) + (1 + 3)) and added up in
 *    double; probabilities are e^x times (float)(1 / sum), then rounded to f16.
 */
#ifndef QGEMV_LLAMA_OPS_H
#define QGEMV_LLAMA_OPS_H

#include <math.h>
#include <stdint.h>

#include "qgemv/fp.h"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define LLAMA_ALWAYS_INLINE static inline __attribute__((always_inline))
#define LLAMA_AVX2_CODE 1   /* the AVX2 + FMA + F16C code below is compiled, and chosen at run time */
#else
#define LLAMA_ALWAYS_INLINE static inline
#define LLAMA_AVX2_CODE 0
#endif

/* e^x as one lane of ggml's AVX2 vector exponential */
LLAMA_ALWAYS_INLINE float llama_expf(float x) {
    const float shift = 0x1.8p23f;
    const float z = fmaf(x, 0x1.715476p+0f, shift);            /* shift + round(x / ln2) */
    const float n = z - shift;
    const float b = fmaf(-n, 0x1.7f7d1cp-20f, fmaf(-n, 0x1.62e4p-1f, x));   /* x - n ln2 */
    const uint32_t e = qgemv_f32_to_bits(z) << 23;              /* n in the exponent field */
    const float k = qgemv_bits_to_f32(e + 0x3f800000u);          /* 2^n */
    const float u = b * b;
    const float j = fmaf(fmaf(fmaf(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u,
                              fmaf(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
                         u, 0x1.ffffecp-1f * b);                 /* e^b - 1 */
    if (!(fabsf(n) > 126.0f))
        return fmaf(j, k, k);
    const uint32_t g = n <= 0.0f ? 0x82000000u : 0u;
    const float s1 = qgemv_bits_to_f32(g + 0x7f000000u);
    const float s2 = qgemv_bits_to_f32(e - g);
    if (fabsf(n) > 192.0f)
        return s1 * s1;
    return fmaf(s2, j, s2) * s1;
}

/* out[i] = silu(g[i]) * u[i], silu(x) = x / (1 + e^-x) */
LLAMA_ALWAYS_INLINE void llama_swiglu_impl(int64_t n, const float *g, const float *u, float *out) {
    for (int64_t i = 0; i < n; i++)
        out[i] = (g[i] / (1.0f + llama_expf(0.0f - g[i]))) * u[i];
}

/* The lane sums of the two orders folded into one float: 32 lanes as ggml_vec_dot_f16, 8 as the
 * llamafile GEMM (and as ggml's 8-wide softmax sums) */
LLAMA_ALWAYS_INLINE float llama_fold32(const float s[32]) {
    float x[8], t[4];
    for (int l = 0; l < 8; l++)
        x[l] = (s[l] + s[16 + l]) + (s[8 + l] + s[24 + l]);
    for (int l = 0; l < 4; l++)
        t[l] = x[l] + x[l + 4];
    return (t[0] + t[1]) + (t[2] + t[3]);
}
LLAMA_ALWAYS_INLINE float llama_fold8(const float s[8]) {
    float t[4];
    for (int l = 0; l < 4; l++)
        t[l] = s[l + 4] + s[l];
    return (t[0] + t[2]) + (t[1] + t[3]);
}

/* sum_i a[i] b[i] for f16-valued a, b, in ggml_vec_dot_f16's order (decode) or the llamafile
 * GEMM's (batch): element i goes to lane i mod 32 (i mod 8) */
LLAMA_ALWAYS_INLINE float llama_dot_f16(int64_t n, const float *a, const float *b, int batch_order) {
    float s[32] = {0};
    int64_t i0 = 0;
    if (batch_order) {
        for (; i0 + 8 <= n; i0 += 8)
            for (int l = 0; l < 8; l++)
                s[l] += a[i0 + l] * b[i0 + l];
        for (int l = 0; i0 + l < n; l++)
            s[l] += a[i0 + l] * b[i0 + l];
        return llama_fold8(s);
    }
    for (; i0 + 32 <= n; i0 += 32)
        for (int l = 0; l < 32; l++)
            s[l] += a[i0 + l] * b[i0 + l];
    for (int l = 0; i0 + l < n; l++)
        s[l] += a[i0 + l] * b[i0 + l];
    return llama_fold32(s);
}

/* x rounded to f16 and back (if f16), as stored in llama.cpp's f16 KV cache */
static inline float llama_round(float x, int f16) {
    return f16 ? qgemv_fp16_to_fp32(qgemv_fp32_to_fp16(x)) : x;
}
static void llama_round_row_impl(int64_t n, const float *x, int f16, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = llama_round(x[i], f16);
}

/* One query row of one head: p[0:len] = softmax(scale * (q . k_s)) (rounded to f16 if p_f16),
 * k_s = k + s * stride, then out[0:d] = sum_s p[s] v_s (v_s = v + s * stride).  acc is scratch
 * of 32 * d floats, p of len.  With f16-valued q, k, v and p_f16 this is ggml's arithmetic;
 * with float32 values, float32 attention. */
LLAMA_ALWAYS_INLINE void llama_attend_row_impl(int64_t len, int64_t d, const float *q, const float *k,
                                    const float *v, int64_t stride, float scale, int batch_order,
                                    int p_f16, float *p, float *acc, float *out) {
    float max = -INFINITY;
    for (int64_t s = 0; s < len; s++) {
        p[s] = llama_dot_f16(d, q, k + s * stride, batch_order) * scale;
        max = p[s] > max ? p[s] : max;
    }
    double sum = 0.0;
    for (int64_t s0 = 0; s0 < len; s0 += 8) {
        float c[8];
        for (int l = 0; l < 8; l++) {
            c[l] = s0 + l < len ? llama_expf(p[s0 + l] - max) : 0.0f;
            if (s0 + l < len)
                p[s0 + l] = c[l];
        }
        sum += (double)llama_fold8(c);
    }
    const float inv = (float)(1.0 / sum);
    for (int64_t s = 0; s < len; s++)
        p[s] = llama_round(p[s] * inv, p_f16);
    /* out[i] = sum_s p[s] v_s[i]: lane (s mod 32 or 8) of every i at once, in s order */
    const int lanes = batch_order ? 8 : 32;
    for (int64_t j = 0; j < lanes * d; j++)
        acc[j] = 0.0f;
    for (int64_t s = 0; s < len; s++) {
        float *a = acc + (s % lanes) * d;
        const float *vs = v + s * stride;
        for (int64_t i = 0; i < d; i++)
            a[i] += p[s] * vs[i];
    }
    for (int64_t i = 0; i < d; i++) {
        float lane[32];
        for (int l = 0; l < lanes; l++)
            lane[l] = acc[l * d + i];
        out[i] = batch_order ? llama_fold8(lane) : llama_fold32(lane);
    }
}

/* y = (x * (1 / sqrt(mean(x^2) + eps))) * w, ggml's rms_norm then mul: squares in float added
 * up in double in order, the mean rounded to float, the scale in float */
static inline void llama_rms_norm(int64_t n, const float *x, const float *w, float eps, float *y) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += (double)(x[i] * x[i]);
    const float mean = (float)(sum / (double)n);
    const float scale = 1.0f / sqrtf(mean + eps);
    for (int64_t i = 0; i < n; i++)
        y[i] = (x[i] * scale) * w[i];
}

/* ---------------------------------------------------------------- AVX2 + FMA + F16C
 * The same operations, 8 lanes at a time: each lane of each vector op is one of the scalar
 * steps above (a lane sum of the dot products is one vector of lanes, the folds are the same
 * additions, e^x is ggml's vector code itself), so the results are the same bits.  Used where
 * the CPU has the instructions and the caller asks for them (vector: the ISA variant is not
 * baseline), else the portable code above. */
#if LLAMA_AVX2_CODE
#include <immintrin.h>
#define LLAMA_AVX2 __attribute__((target("avx2,fma,f16c")))

/* e^x of 8 lanes, llama_expf's steps; lanes past |n| > 126 (rare: x < -87 or x > 88) are
 * redone one by one by llama_expf */
LLAMA_AVX2 static inline __m256 llama_expf8(__m256 x) {
    const __m256 shift = _mm256_set1_ps(0x1.8p23f);
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), shift);
    const __m256 n = _mm256_sub_ps(z, shift);
    const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f),
                                      _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
    const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
    const __m256 k = _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_set1_epi32(0x3f800000)));
    const __m256 u = _mm256_mul_ps(b, b);
    const __m256 j = _mm256_fmadd_ps(
        _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
                        _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
        u, _mm256_mul_ps(_mm256_set1_ps(0x1.ffffecp-1f), b));
    __m256 r = _mm256_fmadd_ps(j, k, k);
    const __m256 far = _mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), n), _mm256_set1_ps(126.0f), _CMP_GT_OQ);
    if (_mm256_movemask_ps(far)) {
        float xs[8], rs[8];
        _mm256_storeu_ps(xs, x);
        _mm256_storeu_ps(rs, r);
        for (int l = 0; l < 8; l++) rs[l] = llama_expf(xs[l]);
        r = _mm256_loadu_ps(rs);
    }
    return r;
}

/* lanes l < m all ones: the first m of 8 floats */
LLAMA_AVX2 static inline __m256i llama_mask8(int64_t m) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)m), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* the first m (up to 8) lanes of v to p (a masked store: microcoded, slow, on AMD's CPUs) */
LLAMA_AVX2 static inline void llama_store8(float *p, int64_t m, __m256 v) {
    if (m >= 8) {
        _mm256_storeu_ps(p, v);
    } else {
        float t[8];
        _mm256_storeu_ps(t, v);
        memcpy(p, t, (size_t)m * sizeof(float));
    }
}

/* llama_fold32 of s (lane l of s[j]: sum 8 j + l), llama_fold8 of one vector of 8 sums */
LLAMA_AVX2 static inline __m128 llama_fold32_x(const __m256 s[4]) {   /* t[l] = x[l] + x[l + 4] */
    const __m256 x = _mm256_add_ps(_mm256_add_ps(s[0], s[2]), _mm256_add_ps(s[1], s[3]));
    return _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
}
LLAMA_AVX2 static inline float llama_fold32_v(const __m256 s[4]) {   /* (t0 + t1) + (t2 + t3) */
    const __m128 h = _mm_hadd_ps(llama_fold32_x(s), _mm_setzero_ps());
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}
LLAMA_AVX2 static inline float llama_fold8_v(__m256 s) {              /* (t0 + t2) + (t1 + t3) */
    const __m128 t = _mm_add_ps(_mm256_extractf128_ps(s, 1), _mm256_castps256_ps128(s));
    const __m128 h = _mm_add_ps(t, _mm_movehl_ps(t, t));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}

/* llama_dot_f16: lane sums s[l] as vectors, the last n % 8 values masked (their lanes add +0,
 * which leaves a lane as it was: a sum from +0 is never -0) */
LLAMA_AVX2 static inline __m256 llama_dot_step(__m256 s, const float *a, const float *b, int64_t m) {
    if (m >= 8)
        return _mm256_add_ps(s, _mm256_mul_ps(_mm256_loadu_ps(a), _mm256_loadu_ps(b)));
    const __m256i k = llama_mask8(m);
    return _mm256_add_ps(s, _mm256_mul_ps(_mm256_maskload_ps(a, k), _mm256_maskload_ps(b, k)));
}
LLAMA_AVX2 static inline float llama_dot_f16_v(int64_t n, const float *a, const float *b, int batch_order) {
    __m256 s[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int64_t i = 0;
    if (batch_order) {
        for (; i < n; i += 8) s[0] = llama_dot_step(s[0], a + i, b + i, n - i);
        return llama_fold8_v(s[0]);
    }
    for (; i + 32 <= n; i += 32)
        for (int j = 0; j < 4; j++) s[j] = llama_dot_step(s[j], a + i + 8 * j, b + i + 8 * j, 8);
    for (int j = 0; i + 8 * j < n; j++) s[j] = llama_dot_step(s[j], a + i + 8 * j, b + i + 8 * j, n - i - 8 * j);
    return llama_fold32_v(s);
}

/* llama_round of 8 lanes */
LLAMA_AVX2 static inline __m256 llama_round8(__m256 v, int f16) {
    return f16 ? _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)) : v;
}
/* y = x rounded to f16 and back (if f16), n values */
LLAMA_AVX2 static void llama_round_row_avx2(int64_t n, const float *x, int f16, float *y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, llama_round8(_mm256_loadu_ps(x + i), f16));
    llama_round_row_impl(n - i, x + i, f16, y + i);
}

LLAMA_AVX2 static void llama_swiglu_avx2(int64_t n, const float *g, const float *u, float *out) {
    int64_t i = 0;
    const __m256 one = _mm256_set1_ps(1.0f);
    for (; i + 8 <= n; i += 8) {
        const __m256 gv = _mm256_loadu_ps(g + i);
        const __m256 e = llama_expf8(_mm256_sub_ps(_mm256_setzero_ps(), gv));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_div_ps(gv, _mm256_add_ps(one, e)), _mm256_loadu_ps(u + i)));
    }
    llama_swiglu_impl(n - i, g + i, u + i, out + i);
}

LLAMA_AVX2 static void llama_attend_row_avx2(int64_t len, int64_t d, const float *q, const float *k,
                                             const float *v, int64_t stride, float scale, int batch_order,
                                             int p_f16, float *p, float *acc, float *out) {
    float max = -INFINITY;
    int64_t s = 0;
    if (batch_order)   /* one chain of 8 lanes a position: 4 positions side by side */
        for (; s + 4 <= len; s += 4) {
            __m256 a[4];
            for (int j = 0; j < 4; j++) a[j] = _mm256_setzero_ps();
            for (int64_t i = 0; i < d; i += 8)
                for (int j = 0; j < 4; j++) a[j] = llama_dot_step(a[j], q + i, k + (s + j) * stride + i, d - i);
            for (int j = 0; j < 4; j++) {
                p[s + j] = llama_fold8_v(a[j]) * scale;
                max = p[s + j] > max ? p[s + j] : max;
            }
        }
    for (; s < len; s++) {
        p[s] = llama_dot_f16_v(d, q, k + s * stride, batch_order) * scale;
        max = p[s] > max ? p[s] : max;
    }
    double sum = 0.0;
    const __m256 vmax = _mm256_set1_ps(max);
    for (int64_t s0 = 0; s0 < len; s0 += 8) {   /* lanes past len: e^x 0, p untouched */
        const __m256i m = llama_mask8(len - s0);
        const __m256 c = _mm256_and_ps(llama_expf8(_mm256_sub_ps(_mm256_maskload_ps(p + s0, m), vmax)),
                                       _mm256_castsi256_ps(m));
        llama_store8(p + s0, len - s0, c);
        sum += (double)llama_fold8_v(c);
    }
    const float inv = (float)(1.0 / sum);
    {
        const __m256 vinv = _mm256_set1_ps(inv);
        int64_t s = 0;
        for (; s + 8 <= len; s += 8) {
            const __m256 x = _mm256_mul_ps(_mm256_loadu_ps(p + s), vinv);
            _mm256_storeu_ps(p + s, llama_round8(x, p_f16));
        }
        for (; s < len; s++)
            p[s] = llama_round(p[s] * inv, p_f16);
    }
    /* out[i] = sum_s p[s] v_s[i]: row l of acc holds lane l (positions s = l mod lanes, in
     * order) of every i, summed in registers 64 values of i at a time */
    const int64_t lanes = batch_order ? 8 : 32;
    const __m256i tail = llama_mask8(d % 8);
    for (int64_t i0 = 0; i0 < d; i0 += 64) {
        const int64_t w = d - i0 < 64 ? d - i0 : 64;
        const int nv = (int)((w + 7) / 8);
        for (int64_t l = 0; l < lanes; l++) {
            __m256 r[8];
            for (int j = 0; j < 8; j++) r[j] = _mm256_setzero_ps();
            for (int64_t s = l; s < len; s += lanes) {
                const __m256 ps = _mm256_set1_ps(p[s]);
                const float *vs = v + s * stride + i0;
                for (int j = 0; j < 8; j++)
                    if (j < nv)   /* a last part vector's lanes past d are not stored */
                        r[j] = _mm256_add_ps(r[j], _mm256_mul_ps(ps, 8 * j + 8 <= w ? _mm256_loadu_ps(vs + 8 * j)
                                                                               : _mm256_maskload_ps(vs + 8 * j, tail)));
            }
            for (int j = 0; j < nv; j++) llama_store8(acc + l * d + i0 + 8 * j, w - 8 * j, r[j]);
        }
    }
    for (int64_t i = 0; i < d; i += 8) {   /* the folds over the rows, 8 values of i at once */
        const float *r = acc + i;   /* a last part vector masked (plain loads forward from the stores) */
        const int part = i + 8 > d;
#define LLAMA_ROW(l) (part ? _mm256_maskload_ps(r + (l) * d, tail) : _mm256_loadu_ps(r + (l) * d))
        __m256 res;
        if (batch_order) {   /* t[l] = s[l + 4] + s[l]; (t0 + t2) + (t1 + t3) */
            __m256 t[4];
            for (int l = 0; l < 4; l++) t[l] = _mm256_add_ps(LLAMA_ROW(l + 4), LLAMA_ROW(l));
            res = _mm256_add_ps(_mm256_add_ps(t[0], t[2]), _mm256_add_ps(t[1], t[3]));
        } else {             /* x[l] = (s[l] + s[16 + l]) + (s[8 + l] + s[24 + l]); t[l] = x[l] + x[l + 4]; (t0 + t1) + (t2 + t3) */
            __m256 x[8], t[4];
            for (int l = 0; l < 8; l++)
                x[l] = _mm256_add_ps(_mm256_add_ps(LLAMA_ROW(l), LLAMA_ROW(16 + l)), _mm256_add_ps(LLAMA_ROW(8 + l), LLAMA_ROW(24 + l)));
            for (int l = 0; l < 4; l++) t[l] = _mm256_add_ps(x[l], x[l + 4]);
            res = _mm256_add_ps(_mm256_add_ps(t[0], t[1]), _mm256_add_ps(t[2], t[3]));
        }
#undef LLAMA_ROW
        llama_store8(out + i, d - i, res);
    }
}

static int llama_cpu_avx2(void) {
    static int have = -1;
    if (have < 0)
        have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    return have;
}
#else
#define llama_swiglu_avx2 llama_swiglu_impl
#define llama_attend_row_avx2 llama_attend_row_impl
#define llama_round_row_avx2 llama_round_row_impl
static int llama_cpu_avx2(void) { return 0; }
#endif

/* The entry points: with vector set (the caller's ISA variant is not baseline) the AVX2 code
 * where the CPU runs it, else the portable code; the same bits either way. */
static void llama_swiglu(int vector, int64_t n, const float *g, const float *u, float *out) {
    if (vector && llama_cpu_avx2())
        llama_swiglu_avx2(n, g, u, out);
    else
        llama_swiglu_impl(n, g, u, out);
}
static void llama_round_row(int vector, int64_t n, const float *x, int f16, float *y) {
    if (vector && llama_cpu_avx2())
        llama_round_row_avx2(n, x, f16, y);
    else
        llama_round_row_impl(n, x, f16, y);
}
static void llama_attend_row(int vector, int64_t len, int64_t d, const float *q, const float *k, const float *v,
                             int64_t stride, float scale, int batch_order, int p_f16, float *p, float *acc,
                             float *out) {
    if (vector && llama_cpu_avx2())
        llama_attend_row_avx2(len, d, q, k, v, stride, scale, batch_order, p_f16, p, acc, out);
    else
        llama_attend_row_impl(len, d, q, k, v, stride, scale, batch_order, p_f16, p, acc, out);
}

#endif
