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
#define LLAMA_FMA_CLONES 1  /* the same code compiled again for FMA + AVX2 CPUs (fmaf inlined) */
#else
#define LLAMA_ALWAYS_INLINE static inline
#define LLAMA_FMA_CLONES 0
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
        p[s] = p_f16 ? qgemv_fp16_to_fp32(qgemv_fp32_to_fp16(p[s] * inv)) : p[s] * inv;
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

/* x rounded to f16 and back (if f16), as stored in llama.cpp's f16 KV cache */
static inline float llama_round(float x, int f16) {
    return f16 ? qgemv_fp16_to_fp32(qgemv_fp32_to_fp16(x)) : x;
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

/* The entry points: the FMA + AVX2 build of the code above where the CPU has it (fmaf is then
 * one instruction rather than a library call; the results are the same bits either way). */
#define LLAMA_SWIGLU_ARGS int64_t n, const float *g, const float *u, float *out
#define LLAMA_ATTEND_ARGS int64_t len, int64_t d, const float *q, const float *k, const float *v, \
    int64_t stride, float scale, int batch_order, int p_f16, float *p, float *acc, float *out
static void llama_swiglu_base(LLAMA_SWIGLU_ARGS) { llama_swiglu_impl(n, g, u, out); }
static void llama_attend_row_base(LLAMA_ATTEND_ARGS) {
    llama_attend_row_impl(len, d, q, k, v, stride, scale, batch_order, p_f16, p, acc, out);
}
#if LLAMA_FMA_CLONES
__attribute__((target("avx2,fma"))) static void llama_swiglu_fma(LLAMA_SWIGLU_ARGS) {
    llama_swiglu_impl(n, g, u, out);
}
__attribute__((target("avx2,fma"))) static void llama_attend_row_fma(LLAMA_ATTEND_ARGS) {
    llama_attend_row_impl(len, d, q, k, v, stride, scale, batch_order, p_f16, p, acc, out);
}
static int llama_cpu_fma(void) {
    static int have = -1;
    if (have < 0)
        have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return have;
}
#else
#define llama_swiglu_fma llama_swiglu_base
#define llama_attend_row_fma llama_attend_row_base
static int llama_cpu_fma(void) { return 0; }
#endif
static void llama_swiglu(LLAMA_SWIGLU_ARGS) {
    (llama_cpu_fma() ? llama_swiglu_fma : llama_swiglu_base)(n, g, u, out);
}
static void llama_attend_row(LLAMA_ATTEND_ARGS) {
    (llama_cpu_fma() ? llama_attend_row_fma : llama_attend_row_base)(len, d, q, k, v, stride, scale,
                                                                      batch_order, p_f16, p, acc, out);
}

#endif
