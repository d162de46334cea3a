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
 *  - softmax: s * scale, minus the row maximum, e^x; the row sum is taken 8 values at a time
 *    (folded as the 8-lane sums above: (l + (l+4)), then (0 + 2) + (1 + 3)) and added up in
 *    double; probabilities are e^x times (float)(1 / sum), then rounded to f16.
 */
#ifndef QGEMV_LLAMA_OPS_H
#define QGEMV_LLAMA_OPS_H

#include <math.h>
#include <stdint.h>

#include "qgemv/fp.h"

/* e^x as one lane of ggml's AVX2 vector exponential */
static inline float llama_expf(float x) {
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
static inline void llama_swiglu(int64_t n, const float *g, const float *u, float *out) {
    for (int64_t i = 0; i < n; i++)
        out[i] = (g[i] / (1.0f + llama_expf(0.0f - g[i]))) * u[i];
}

/* sum_i a[i * sa] b[i * sb] for f16-valued a, b, in ggml_vec_dot_f16's order (decode) or the
 * llamafile GEMM's (batch) */
static inline float llama_dot_f16(int64_t n, const float *a, int64_t sa, const float *b, int64_t sb,
                                  int batch_order) {
    float s[32] = {0};
    if (batch_order) {
        for (int64_t i = 0; i < n; i++)
            s[i & 7] += a[i * sa] * b[i * sb];
        float t[4];
        for (int l = 0; l < 4; l++)
            t[l] = s[l + 4] + s[l];
        return (t[0] + t[2]) + (t[1] + t[3]);
    }
    for (int64_t i = 0; i < n; i++)
        s[i & 31] += a[i * sa] * b[i * sb];
    float x[8], t[4];
    for (int l = 0; l < 8; l++)
        x[l] = (s[l] + s[16 + l]) + (s[8 + l] + s[24 + l]);
    for (int l = 0; l < 4; l++)
        t[l] = x[l] + x[l + 4];
    return (t[0] + t[1]) + (t[2] + t[3]);
}

/* One query row of one head: p[0:len] = softmax(scale * (q . k_s)) (rounded to f16 if p_f16),
 * k_s = k + s * k_stride, then out[0:d] = sum_s p[s] v_s (v_s at v + s * v_stride, element
 * stride 1).  p is scratch of len floats.  With f16-valued q, k, v and p_f16 this is ggml's
 * arithmetic; with float32 values, float32 attention. */
static inline void llama_attend_row(int64_t len, int64_t d, const float *q, const float *k,
                                    int64_t k_stride, const float *v, int64_t v_stride, float scale,
                                    int batch_order, int p_f16, float *p, float *out) {
    float max = -INFINITY;
    for (int64_t s = 0; s < len; s++) {
        p[s] = llama_dot_f16(d, q, 1, k + s * k_stride, 1, batch_order) * scale;
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
        float t[4];
        for (int l = 0; l < 4; l++)
            t[l] = c[l + 4] + c[l];
        sum += (double)((t[0] + t[2]) + (t[1] + t[3]));
    }
    const float inv = (float)(1.0 / sum);
    for (int64_t s = 0; s < len; s++)
        p[s] = p_f16 ? qgemv_fp16_to_fp32(qgemv_fp32_to_fp16(p[s] * inv)) : p[s] * inv;
    for (int64_t i = 0; i < d; i++)
        out[i] = llama_dot_f16(len, p, 1, v + i, v_stride, batch_order);
}

#endif
