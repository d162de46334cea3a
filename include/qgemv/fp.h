/* qgemv/fp.h: the small float formats of ggml blocks, converted exactly.
 *
 * Every ISA variant decodes scales through these, and each conversion is exact (or correctly
 * rounded), so dequantize is bit-identical across variants.  Wide conversions live in simd.h.
 */
#ifndef QGEMV_FP_H
#define QGEMV_FP_H

#include <stdint.h>
#include <string.h>
#if defined(__F16C__)
#include <immintrin.h>
#endif

static inline float qgemv_bits_to_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t qgemv_f32_to_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* binary16 -> binary32, exact (subnormals and NaN payloads included); one F16C instruction
 * where the ISA variant has it, the bit manipulation below otherwise (same result) */
static inline float qgemv_fp16_to_fp32_portable(uint16_t h);
static inline float qgemv_fp16_to_fp32(uint16_t h) {
#if defined(__F16C__)
    return _cvtsh_ss(h);
#else
    return qgemv_fp16_to_fp32_portable(h);
#endif
}

static inline float qgemv_fp16_to_fp32_portable(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return qgemv_bits_to_f32(sign | 0x7f800000u | (mant << 13));   /* inf, nan */
    if (exp != 0) return qgemv_bits_to_f32(sign | ((exp + 112u) << 23) | (mant << 13));
    if (mant == 0) return qgemv_bits_to_f32(sign);                                  /* +-0 */
    /* subnormal: mant * 2^-24, exact in binary32 */
    const float m = (float)mant * qgemv_bits_to_f32(0x33800000u);
    return sign ? -m : m;
}

/* binary32 -> binary16, round to nearest even (as F16C's _cvtss_sh(x, 0)) */
static inline uint16_t qgemv_fp32_to_fp16(float f) {
    const uint32_t x = qgemv_f32_to_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));  /* nan */
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);   /* rounds to >= 65520: inf */
    if (ax < 0x38800000u) {                                       /* result subnormal or zero */
        /* value * 2^24 rounded to an integer (nearest even) is the subnormal mantissa */
        const float scaled = qgemv_bits_to_f32(ax) * 16777216.0f;   /* exact: power of two */
        const float r = (scaled + 8388608.0f) - 8388608.0f;          /* round to nearest even */
        return (uint16_t)(sign | (uint32_t)r);
    }
    const uint32_t round = 0xfffu + ((ax >> 13) & 1u);
    return (uint16_t)(sign | ((ax - 0x38000000u + round) >> 13));
}

/* bfloat16 -> binary32: the high half of the bits */
static inline float qgemv_bf16_to_fp32(uint16_t h) { return qgemv_bits_to_f32((uint32_t)h << 16); }

/* binary32 -> bfloat16, round to nearest even, nan kept quiet (ggml_compute_fp32_to_bf16) */
static inline uint16_t qgemv_fp32_to_bf16(float f) {
    const uint32_t u = qgemv_f32_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 64u);
    return (uint16_t)((u + (0x7fffu + ((u >> 16) & 1u))) >> 16);
}

/* E8M0 exponent e -> 2^(e - 128): half the MX scale 2^(e - 127), since ggml stores the
 * E2M1 values doubled (ggml_e8m0_to_fp32_half) */
static inline float qgemv_e8m0_to_fp32_half(uint8_t e) {
    const uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
    return qgemv_bits_to_f32(bits);
}

/* unsigned E4M3 (4 exponent bits, bias 7, 3 mantissa bits) -> value / 2 (the same halving
 * as above); 0x00 and 0x7f decode to 0 (ggml_ue4m3_to_fp32) */
static inline float qgemv_ue4m3_to_fp32_half(uint8_t x) {
    if (x == 0 || x == 0x7f) return 0.0f;
    const uint32_t exp = (x >> 3) & 0xfu, man = x & 7u;
    if (exp == 0) return (float)man * qgemv_bits_to_f32(0x3a800000u);   /* man * 2^-9 / 2 */
    return qgemv_bits_to_f32(((exp + 120u - 1u) << 23) | (man << 20));    /* (1 + man/8) 2^(exp-7) / 2 */
}

/* round to nearest, ties to even, for |x| < 2^22 (what _mm256_round_ps does in ggml's
 * quantize_row_q8_0), with no libm call */
static inline float qgemv_round_even(float x) {
    return (x + 12582912.0f) - 12582912.0f;
}

#endif /* QGEMV_FP_H */
