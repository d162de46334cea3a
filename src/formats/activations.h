/* Activation quantizers: a float32 vector -> the format a weight format multiplies against.
 *
 * Portable C, which the compiler vectorizes, except where an AVX2 path is written out with
 * the same exact operations: every ISA variant produces the same activation bits.  The
 * arithmetic is that of ggml's x86 quantize_row_q8_0 / _q8_1: id = 127 / amax,
 * q = round-to-nearest-even(x id), d = amax / 127 stored as f16.
 */

/* bit 31 set iff float u is NaN or Inf: its exponent is all ones, and one more exponent ulp
 * carries out of it */
static inline uint32_t nonfinite_bit(uint32_t u) { return (u & 0x7f800000u) + 0x00800000u; }
#if defined(QGEMV_AVX2)
static inline __m256i nonfinite_bits_8(__m256i u) {
    return _mm256_add_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7f800000)), _mm256_set1_epi32(0x00800000));
}
#endif

/* dst[0:n] = src[0:n] (a row in L1) with non-temporal stores from dst's first 64-byte boundary
 * on, plain ones before it and for the tail: a large output written without reading its lines
 * first (QMatrix.dequantize, qgemv/_dispatch.py: dequant_stream) */
static void stream_f32(float *restrict dst, const float *restrict src, int64_t n) {
    int64_t i = 0;
#if defined(QGEMV_AVX2)
    for (; i < n && ((uintptr_t)(dst + i) & 63); i++) dst[i] = src[i];
#if defined(QGEMV_AVX512)
    for (; i + 16 <= n; i += 16) _mm512_stream_ps(dst + i, _mm512_loadu_ps(src + i));
#else
    for (; i + 8 <= n; i += 8) _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
#endif
    _mm_sfence();   /* the streamed lines are visible before the next row's plain stores */
#endif
    for (; i < n; i++) dst[i] = src[i];
}

/* 1 if no NaN or Inf among x[0:n] */
static int all_finite(const float *x, int64_t n) {
    int64_t i = 0;
    uint32_t carry = 0;
#if defined(QGEMV_AVX2)
    __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
    for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_or_si256(acc0, nonfinite_bits_8(_mm256_loadu_si256((const __m256i *)(x + i))));
        acc1 = _mm256_or_si256(acc1, nonfinite_bits_8(_mm256_loadu_si256((const __m256i *)(x + i + 8))));
    }
    carry = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_or_si256(acc0, acc1))) ? 0x80000000u : 0u;
#endif
    for (; i < n; i++) carry |= nonfinite_bit(qgemv_f32_to_bits(x[i]));
    return (carry & 0x80000000u) == 0;
}

#if defined(QGEMV_AVX2)
/* y[0:16] = x[0:16] (y 32-byte aligned), their non-finite bits or-ed into acc */
static inline void copy_check_16(const float *x, float *y, __m256i *acc) {
    const __m256i u0 = _mm256_loadu_si256((const __m256i *)x);
    const __m256i u1 = _mm256_loadu_si256((const __m256i *)(x + 8));
    _mm256_store_si256((__m256i *)y, u0);
    _mm256_store_si256((__m256i *)(y + 8), u1);
    *acc = _mm256_or_si256(*acc, _mm256_or_si256(nonfinite_bits_8(u0), nonfinite_bits_8(u1)));
}
#endif

/* y = x, and 1 if no NaN or Inf among x[0:n]: the copy and all_finite in one pass, at memcpy's
 * speed.  Stores are aligned; when y sits just above x modulo 4 KiB the copy runs from the end,
 * as memmove does, or every load would wait on the store before it that shares its low 12
 * address bits (4K aliasing) */
static int copy_all_finite(const float *restrict x, float *restrict y, int64_t n) {
    uint32_t carry = 0;
    int64_t lo = 0, hi = 0;
#if defined(QGEMV_AVX2)
    while (lo < n && ((uintptr_t)(y + lo) & 31)) lo++;
    hi = lo + (n - lo) / 16 * 16;
    __m256i acc = _mm256_setzero_si256();
    if (((((uintptr_t)y - (uintptr_t)x) & 4095) - 1) < 511) {
        for (int64_t i = hi - 16; i >= lo; i -= 16) copy_check_16(x + i, y + i, &acc);
    } else {
        for (int64_t i = lo; i < hi; i += 16) copy_check_16(x + i, y + i, &acc);
    }
    if (_mm256_movemask_ps(_mm256_castsi256_ps(acc))) carry = 0x80000000u;
#endif
    for (int64_t i = 0; i < lo; i++) {
        y[i] = x[i];
        carry |= nonfinite_bit(qgemv_f32_to_bits(x[i]));
    }
    for (int64_t i = hi; i < n; i++) {
        y[i] = x[i];
        carry |= nonfinite_bit(qgemv_f32_to_bits(x[i]));
    }
    return (carry & 0x80000000u) == 0;
}

/* columns 0 .. nc - 1 (nc <= 8) of a row-major float32 matrix of n rows, ld floats apart, as nc
 * rows of n values, dst_stride floats apart (dst[c dst_stride + i] = x[i ld + c]), and 1 if no
 * NaN or Inf among them: how the activation quantizers read a batch given as numpy's (cols,
 * batch) array, a few KiB at a time, without numpy's transposed copy of all of it first (a
 * batch of 32 columns of 4096, just evicted from the caches by the product before: 80-210 us,
 * as long as the quantizers themselves took before they were vectorised).  AVX2: 8 x 8 blocks
 * transposed in registers; a group of fewer than 8 columns loads them masked. */
static int gather_columns_f32(const float *restrict x, int64_t ld, int64_t n, int nc, float *restrict dst,
                              int64_t dst_stride) {
    int64_t i = 0;
    uint32_t carry = 0;
#if defined(QGEMV_AVX2)
    const __m256i lanes = _mm256_cmpgt_epi32(_mm256_set1_epi32(nc), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256i acc = _mm256_setzero_si256();
    for (; i + 8 <= n; i += 8) {
        __m256 r[8], t[8], u[8];
        for (int k = 0; k < 8; k++) {
            r[k] = nc == 8 ? _mm256_loadu_ps(x + (i + k) * ld) : _mm256_maskload_ps(x + (i + k) * ld, lanes);
            acc = _mm256_or_si256(acc, nonfinite_bits_8(_mm256_castps_si256(r[k])));
        }
        for (int k = 0; k < 8; k += 2) {
            t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
            t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
        }
        for (int k = 0; k < 8; k += 4) {
            u[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
            u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xee);
            u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
            u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xee);
        }
        /* column c: rows i .. i + 7, the low halves of u[c], u[4 + c] for c < 4, the high halves
         * of u[c - 4], u[c] after (two loops: the permute's selector must be a constant, which a
         * ternary on c is only where the compiler unrolls the loop, not in a sanitizer build) */
        for (int c = 0; c < nc && c < 4; c++)
            _mm256_storeu_ps(dst + c * dst_stride + i, _mm256_permute2f128_ps(u[c], u[4 + c], 0x20));
        for (int c = 4; c < nc; c++)
            _mm256_storeu_ps(dst + c * dst_stride + i, _mm256_permute2f128_ps(u[c - 4], u[c], 0x31));
    }
    /* masked-off lanes load as 0.0, which is finite */
    if (_mm256_movemask_ps(_mm256_castsi256_ps(acc))) carry = 0x80000000u;
#endif
    for (; i < n; i++)
        for (int c = 0; c < nc; c++) {
            dst[c * dst_stride + i] = x[i * ld + c];
            carry |= nonfinite_bit(qgemv_f32_to_bits(x[i * ld + c]));
        }
    return (carry & 0x80000000u) == 0;
}

static inline float qgemv_absmax(const float *x, int n) {
    float amax = 0.0f;
    for (int j = 0; j < n; j++) {
        const float a = fabsf(x[j]);
        amax = a > amax ? a : amax;
    }
    return amax;
}

#if defined(QGEMV_AVX2)
/* The q8 quantizers on 8-lane vectors, their operations those of the scalar code below, each
 * exact or one rounding, so the same bits (what ggml's AVX2 quantize_row_q8_0 does too): the
 * largest magnitude by max (exact in any order; max(|x|, m) keeps m where x is NaN, as the
 * scalar compare does), products by one multiply each, round to nearest even, the int8 packs
 * saturating values already in [-127, 127].  The scalar loops took 3 cycles a value: 32
 * columns of 4096 on 1 thread, q8_K 105-110 -> 34-35 us, q8_0 60-90 -> 28, q8_1 100-128 -> 45-51
 * (C harness, the same bytes). */
static inline float qgemv_absmax_8x(const float *x, int nvec) {
    __m256 m = _mm256_setzero_ps();
    for (int i = 0; i < nvec; i++) m = _mm256_max_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_loadu_ps(x + 8 * i)), m);
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}
/* round(x[0:8] s) to the nearest integer, ties to even, as int32 lanes */
static inline __m256i qgemv_round_scaled_8(const float *x, __m256 s) {
    return _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x), s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
/* 32 int32 lanes in [-128, 127], q[0] first, -> 32 int8 at y */
static inline void qgemv_store_i8x32(int8_t *y, const __m256i q[4]) {
    const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
    _mm256_storeu_si256((__m256i *)y, _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}
#endif

/* q = round(x 127 / amax) per 32 values, d = amax / 127; q8_1 also sum(q) */
QGEMV_ALWAYS_INLINE float qgemv_absmax_32(const float *x) {
#if defined(QGEMV_AVX2)
    return qgemv_absmax_8x(x, 4);
#else
    return qgemv_absmax(x, 32);
#endif
}
QGEMV_ALWAYS_INLINE int32_t qgemv_quantize_32(const float *x, float id, int8_t *q) {
#if defined(QGEMV_AVX2)
    __m256i v[4];
    for (int k = 0; k < 4; k++) v[k] = qgemv_round_scaled_8(x + 8 * k, _mm256_set1_ps(id));
    qgemv_store_i8x32(q, v);
    return qgemv_hsum_i32x8(_mm256_add_epi32(_mm256_add_epi32(v[0], v[1]), _mm256_add_epi32(v[2], v[3])));
#else
    int32_t sum = 0;
    for (int j = 0; j < 32; j++) {
        q[j] = (int8_t)qgemv_round_even(x[j] * id);
        sum += q[j];
    }
    return sum;
#endif
}
static void quantize_row_q8_0(const float *restrict x, void *restrict dst, int64_t n) {
    block_q8_0 *y = (block_q8_0 *)dst;
    for (int64_t ib = 0; ib < n / QK8_0; ib++, x += QK8_0) {
        const float amax = qgemv_absmax_32(x);
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[ib].d = qgemv_fp32_to_fp16(amax / 127.0f);
        qgemv_quantize_32(x, id, y[ib].qs);
    }
}

/* as q8_0, plus s = d sum(q) for the minimum term of q4_1 / q5_1 */
static void quantize_row_q8_1(const float *restrict x, void *restrict dst, int64_t n) {
    block_q8_1 *y = (block_q8_1 *)dst;
    for (int64_t ib = 0; ib < n / QK8_1; ib++, x += QK8_1) {
        const float amax = qgemv_absmax_32(x);
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        const int32_t sum = qgemv_quantize_32(x, id, y[ib].qs);
        y[ib].d = qgemv_fp32_to_fp16(d);
        y[ib].s = qgemv_fp32_to_fp16(d * (float)sum);
    }
}

static void quantize_row_f32(const float *restrict x, void *restrict dst, int64_t n) {
    memcpy(dst, x, (size_t)n * sizeof(float));
}

/* binary32 -> binary16, round to nearest even (F16C does exactly qgemv_fp32_to_fp16) */
static void quantize_row_f16(const float *restrict x, void *restrict dst, int64_t n) {
    uint16_t *y = (uint16_t *)dst;
    int64_t i = 0;
#if defined(QGEMV_AVX2)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(y + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
    for (; i < n; i++) y[i] = qgemv_fp32_to_fp16(x[i]);
}

/* binary32 -> bfloat16: (u + 0x7fff + lsb) >> 16, a NaN kept quiet (qgemv_fp32_to_bf16) */
static void quantize_row_bf16(const float *restrict x, void *restrict dst, int64_t n) {
    uint16_t *y = (uint16_t *)dst;
    int64_t i = 0;
#if defined(QGEMV_AVX2)
    const __m256i abs = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    const __m256i half = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1), quiet = _mm256_set1_epi32(64);
    for (; i + 16 <= n; i += 16) {
        __m256i h[2];
        for (int k = 0; k < 2; k++) {
            const __m256i u = _mm256_loadu_si256((const __m256i *)(x + i + 8 * k));
            const __m256i hi = _mm256_srli_epi32(u, 16);
            const __m256i rounded = _mm256_srli_epi32(
                _mm256_add_epi32(u, _mm256_add_epi32(half, _mm256_and_si256(hi, one))), 16);
            const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs), inf);
            h[k] = _mm256_blendv_epi8(rounded, _mm256_or_si256(hi, quiet), nan);
        }
        /* packus works per 128-bit lane: put the 4 quarters back in order */
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(h[0], h[1]), 0xd8);
        _mm256_storeu_si256((__m256i *)(y + i), packed);
    }
#endif
    for (; i < n; i++) y[i] = qgemv_fp32_to_bf16(x[i]);
}

/* q8_K, the activations of the 256-value formats (ggml's quantize_row_q8_K_ref):
 * iscale = -127 / x_max, where x_max is the value of largest magnitude (with its sign),
 * q = min(127, round(iscale x)), d = 1 / iscale, bsums = sums of each 16 quants */
static void quantize_row_q8_K(const float *restrict x, void *restrict dst, int64_t n) {
    block_q8_K *y = (block_q8_K *)dst;
    for (int64_t ib = 0; ib < n / QK_K; ib++, x += QK_K) {
        float amax = 0.0f, max = 0.0f;
#if defined(QGEMV_AVX2)
        amax = qgemv_absmax_8x(x, QK_K / 8);   /* then the first value of that magnitude */
        for (int i = 0; i < QK_K / 8 && amax != 0.0f; i++) {
            const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_loadu_ps(x + 8 * i));
            const int hit = _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(amax), _CMP_EQ_OQ));
            if (hit) {
                max = x[8 * i + __builtin_ctz((unsigned)hit)];
                break;
            }
        }
#else
        for (int j = 0; j < QK_K; j++) {
            const float ax = fabsf(x[j]);
            if (ax > amax) { amax = ax; max = x[j]; }
        }
#endif
        if (amax == 0.0f) {
            memset(&y[ib], 0, sizeof(block_q8_K));
            continue;
        }
        const float iscale = -127.0f / max;
#if defined(QGEMV_AVX2)
        __m256i sums[QK_K / 16];   /* lanes of each 16 values' sum */
        for (int g = 0; g < QK_K / 32; g++) {
            __m256i v[4];
            for (int k = 0; k < 4; k++)
                v[k] = _mm256_min_epi32(qgemv_round_scaled_8(x + 32 * g + 8 * k, _mm256_set1_ps(iscale)), _mm256_set1_epi32(127));
            qgemv_store_i8x32(y[ib].qs + 32 * g, v);
            sums[2 * g] = _mm256_add_epi32(v[0], v[1]);
            sums[2 * g + 1] = _mm256_add_epi32(v[2], v[3]);
        }
        for (int j = 0; j < QK_K / 16; j += 4) {
            const __m128i t = qgemv_totals4_i32(sums[j], sums[j + 1], sums[j + 2], sums[j + 3]);
            _mm_storel_epi64((__m128i *)(y[ib].bsums + j), _mm_packs_epi32(t, t));
        }
#else
        for (int j = 0; j < QK_K; j++) {
            const float v = qgemv_round_even(iscale * x[j]);
            y[ib].qs[j] = (int8_t)(v < 127.0f ? v : 127.0f);
        }
        for (int j = 0; j < QK_K / 16; j++) {
            int sum = 0;
            for (int k = 0; k < 16; k++) sum += y[ib].qs[16 * j + k];
            y[ib].bsums[j] = (int16_t)sum;
        }
#endif
        y[ib].d = 1.0f / iscale;
    }
}

/* q8_K as a matrix (x = d q, an f32 scale): dequantize only, for tests and inspection */
static void dequant_row_q8_K(const void *restrict src, float *restrict dst, int64_t n) {
    const block_q8_K *x = (const block_q8_K *)src;
    for (int64_t ib = 0; ib < n / QK_K; ib++)
        for (int j = 0; j < QK_K; j++) dst[QK_K * ib + j] = (float)x[ib].qs[j] * x[ib].d;
}
