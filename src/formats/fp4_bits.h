/* Formats whose one block spans several q8_0 activation blocks: nvfp4 (64 values = 2 q8_0
 * blocks), q1_0 (128 = 4) and q2_0 (64 = 2).
 *
 *   nvfp4  x = d_s kvalues_mxfp4[q] / 2 per 16-value sub-block s, d_s unsigned E4M3; sub-block s
 *          has its 16 nibbles in qs[8 s .. 8 s + 8): low nibbles values 0-7, high nibbles 8-15.
 *   q1_0   x = b ? d : -d, bit j of the block (LSB first) for value j.
 *   q2_0   x = (q - 1) d, q the 2-bit field 2 (j mod 4) of byte j / 4 (LSB first).
 *
 * The products follow ggml's generic kernels: an integer dot per q8_0 block (per 16-value
 * sub-block for nvfp4), scaled by that q8_0 block's d times the weight scale.  The AVX2 loops
 * keep four q8_0 blocks' int16 partial sums in one register (qgemv_sum4_i16) so that the float
 * work is one convert and one fma per four q8_0 blocks.
 */

/* ---------------------------------------------------------------- nvfp4 */
static inline void unpack_nvfp4_ref(const block_nvfp4 *b, int8_t q[QK_NVFP4]) {
    for (int s = 0; s < 4; s++)
        for (int j = 0; j < 8; j++) {
            q[16 * s + j] = kvalues_mxfp4[b->qs[8 * s + j] & 0x0f];
            q[16 * s + 8 + j] = kvalues_mxfp4[b->qs[8 * s + j] >> 4];
        }
}

/* ---------------------------------------------------------------- q1_0 */
static inline int q1_0_bit(const block_q1_0 *b, int j) { return (b->qs[j >> 3] >> (j & 7)) & 1; }

/* ---------------------------------------------------------------- q2_0 */
static inline void unpack_q2_0_ref(const block_q2_0 *b, int8_t q[QK2_0]) {
    for (int j = 0; j < QK2_0; j++) q[j] = (int8_t)(((b->qs[j >> 2] >> (2 * (j & 3))) & 3) - 1);
}

#if defined(QGEMV_AVX2)
/* eight unsigned E4M3 bytes (one per int32 lane) -> value / 2, exactly as qgemv_ue4m3_to_fp32_half:
 * the bits placed under a float exponent biased by 119 give (1 + m/8) 2^(e-8); exponent 0
 * (subnormal) is read as exponent 1 minus the implicit 2^-7, which is exact; 0x7f is 0. */
static inline __m256 qgemv_ue4m3x8_to_fp32_half(__m256i u) {
    const __m256i sub = _mm256_cmpeq_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x78)), _mm256_setzero_si256());
    const __m256i bias = _mm256_add_epi32(_mm256_set1_epi32(119 << 23), _mm256_and_si256(sub, _mm256_set1_epi32(1 << 23)));
    const __m256i bits = _mm256_add_epi32(_mm256_slli_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7f)), 20), bias);
    const __m256 v = _mm256_sub_ps(_mm256_castsi256_ps(bits), _mm256_and_ps(_mm256_castsi256_ps(sub), _mm256_set1_ps(0x1p-7f)));
    return _mm256_andnot_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(u, _mm256_set1_epi32(0x7f))), v);
}

#if defined(QGEMV_AVX512)
/* the same on sixteen lanes */
static inline __m512 qgemv_ue4m3x16_to_fp32_half(__m512i u) {
    const __mmask16 sub = _mm512_cmpeq_epi32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x78)), _mm512_setzero_si512());
    const __m512i bias = _mm512_mask_add_epi32(_mm512_set1_epi32(119 << 23), sub, _mm512_set1_epi32(119 << 23), _mm512_set1_epi32(1 << 23));
    const __m512 v = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_slli_epi32(_mm512_and_si512(u, _mm512_set1_epi32(0x7f)), 20), bias));
    return _mm512_maskz_mov_ps(_mm512_cmpneq_epi32_mask(u, _mm512_set1_epi32(0x7f)), _mm512_mask_sub_ps(v, sub, v, _mm512_set1_ps(0x1p-7f)));
}
#endif

/* the 64 levels of an nvfp4 block as [sub-block 0 | sub-block 2] and [1 | 3], 16 per half */
static inline void levels_nvfp4(const block_nvfp4 *b, __m256i *k02, __m256i *k13) {
    const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)kvalues_mxfp4));
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i x = _mm256_loadu_si256((const __m256i *)b->qs);
    const __m256i lo = _mm256_and_si256(x, m4), hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), m4);
    *k02 = _mm256_shuffle_epi8(table, _mm256_unpacklo_epi64(lo, hi));
    *k13 = _mm256_shuffle_epi8(table, _mm256_unpackhi_epi64(lo, hi));
}

/* the 32 codes (0..3) of q8_0 block k (0 or 1) of a q2_0 block, in value order; qs2 holds
 * the block's 16 bytes in both halves.  Byte 4 l + i of each half takes byte i's field l
 * (one dword shift per field), then a 4x4 byte transpose puts value 4 i + l there. */
static inline __m256i codes_q2_0(__m256i qs2, int k) {
    const __m256i pick = _mm256_add_epi8(_mm256_setr_epi8(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3,
                                                          4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7),
                                         _mm256_set1_epi8((char)(8 * k)));
    const __m256i transpose = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                               0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m256i fields = _mm256_srlv_epi32(_mm256_shuffle_epi8(qs2, pick), _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
    return _mm256_shuffle_epi8(_mm256_and_si256(fields, _mm256_set1_epi8(3)), transpose);
}

static inline __m256i q2_0_broadcast_qs(const block_q2_0 *b) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)b->qs));
}

/* four vectors of int16 partial sums p0..p3 -> int32 lanes [S0 S1 S2 S3 | S0' S1' S2' S3'] times w,
 * S_k + S_k' = the sum of p_k's lanes (each int16 lane grows at most 4x on the way) */
static inline __m256i qgemv_sum4_i16_times(__m256i p0, __m256i p1, __m256i p2, __m256i p3, short w) {
    const __m256i a01 = _mm256_add_epi16(_mm256_unpacklo_epi32(p0, p1), _mm256_unpackhi_epi32(p0, p1));
    const __m256i a23 = _mm256_add_epi16(_mm256_unpacklo_epi32(p2, p3), _mm256_unpackhi_epi32(p2, p3));
    const __m256i b = _mm256_add_epi16(_mm256_unpacklo_epi64(a01, a23), _mm256_unpackhi_epi64(a01, a23));
    return _mm256_madd_epi16(b, _mm256_set1_epi16(w));
}
static inline __m256i qgemv_sum4_i16(__m256i p0, __m256i p1, __m256i p2, __m256i p3) {
    return qgemv_sum4_i16_times(p0, p1, p2, p3, 1);
}

/* s8 x s8 products summed in pairs into int16 */
static inline __m256i qgemv_dot_s8s8_i16x16(__m256i x, __m256i y) {
    return _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
}

/* 16 int8 levels times d into 16 floats */
static inline void qgemv_store_levels_16(__m128i q, float d, float *y) {
    const __m256 vd = _mm256_set1_ps(d);
    _mm256_storeu_ps(y, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), vd));
    _mm256_storeu_ps(y + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(q, 8))), vd));
}
#endif

/* ---------------------------------------------------------------- dequantize */

/* x = kvalues_mxfp4[q] d_s per 16 values */
static void dequant_row_nvfp4(const void *restrict src, float *restrict dst, int64_t n) {
    const block_nvfp4 *x = (const block_nvfp4 *)src;
    for (int64_t ib = 0; ib < n / QK_NVFP4; ib++, dst += QK_NVFP4) {
#if defined(QGEMV_AVX2)
        uint32_t d4;
        memcpy(&d4, x[ib].d, 4);
        float d[8];
        _mm256_storeu_ps(d, qgemv_ue4m3x8_to_fp32_half(_mm256_cvtepu8_epi32(_mm_cvtsi32_si128((int)d4))));
        __m256i k02, k13;
        levels_nvfp4(&x[ib], &k02, &k13);
        qgemv_store_levels_16(_mm256_castsi256_si128(k02), d[0], dst);
        qgemv_store_levels_16(_mm256_castsi256_si128(k13), d[1], dst + 16);
        qgemv_store_levels_16(_mm256_extracti128_si256(k02, 1), d[2], dst + 32);
        qgemv_store_levels_16(_mm256_extracti128_si256(k13, 1), d[3], dst + 48);
#else
        int8_t q[QK_NVFP4];
        unpack_nvfp4_ref(&x[ib], q);
        for (int j = 0; j < QK_NVFP4; j++) dst[j] = (float)q[j] * qgemv_ue4m3_to_fp32_half(x[ib].d[j / 16]);
#endif
    }
}

/* x = +d or -d */
static void dequant_row_q1_0(const void *restrict src, float *restrict dst, int64_t n) {
    const block_q1_0 *x = (const block_q1_0 *)src;
    for (int64_t ib = 0; ib < n / QK1_0; ib++, dst += QK1_0) {
        const float d = qgemv_fp16_to_fp32(x[ib].d);
#if defined(QGEMV_AVX2)
        const __m256 pos = _mm256_set1_ps(d), neg = _mm256_set1_ps(-d);
        const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
        for (int k = 0; k < QK1_0 / 8; k++) {
            const __m256i set = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(x[ib].qs[k]), bit), bit);
            _mm256_storeu_ps(dst + 8 * k, _mm256_blendv_ps(neg, pos, _mm256_castsi256_ps(set)));
        }
#else
        for (int j = 0; j < QK1_0; j++) dst[j] = q1_0_bit(&x[ib], j) ? d : -d;
#endif
    }
}

/* x = (q - 1) d */
static void dequant_row_q2_0(const void *restrict src, float *restrict dst, int64_t n) {
    const block_q2_0 *x = (const block_q2_0 *)src;
    for (int64_t ib = 0; ib < n / QK2_0; ib++, dst += QK2_0) {
        const float d = qgemv_fp16_to_fp32(x[ib].d);
#if defined(QGEMV_AVX2)
        const __m256i qs2 = q2_0_broadcast_qs(&x[ib]), one = _mm256_set1_epi8(1);
        qgemv_store_levels_32(_mm256_sub_epi8(codes_q2_0(qs2, 0), one), d, 0.0f, 0, dst);
        qgemv_store_levels_32(_mm256_sub_epi8(codes_q2_0(qs2, 1), one), d, 0.0f, 0, dst + 32);
#else
        int8_t q[QK2_0];
        unpack_q2_0_ref(&x[ib], q);
        for (int j = 0; j < QK2_0; j++) dst[j] = (float)q[j] * d;
#endif
    }
}

/* ---------------------------------------------------------------- products with q8_0 */

/* one nvfp4 block against its two q8_0 blocks, ggml's generic order: per 16-value
 * sub-block s, d_y d_s isum_s */
static inline float block_dot_nvfp4_q8_0_ref(const block_nvfp4 *x, const block_q8_0 *y) {
    int8_t q[QK_NVFP4];
    unpack_nvfp4_ref(x, q);
    float sum = 0.0f;
    for (int s = 0; s < 4; s++) {
        const block_q8_0 *yb = &y[s / 2];
        int32_t isum = 0;
        for (int j = 0; j < 16; j++) isum += q[16 * s + j] * yb->qs[16 * (s % 2) + j];
        sum += qgemv_fp16_to_fp32(yb->d) * qgemv_ue4m3_to_fp32_half(x->d[s]) * (float)isum;
    }
    return sum;
}

/* one q2_0 block against its two q8_0 blocks, ggml's generic order: d_x (sum_k d_y(k) isum_k) */
static inline float block_dot_q2_0_q8_0_ref(const block_q2_0 *x, const block_q8_0 *y) {
    int8_t q[QK2_0];
    unpack_q2_0_ref(x, q);
    float sumi = 0.0f;
    for (int k = 0; k < 2; k++) {
        int32_t isum = 0;
        for (int j = 0; j < 32; j++) isum += q[32 * k + j] * y[k].qs[j];
        sumi += qgemv_fp16_to_fp32(y[k].d) * (float)isum;
    }
    return qgemv_fp16_to_fp32(x->d) * sumi;
}

#if defined(QGEMV_AVX2)
/* the E4M3 scales of a block pair x[0], x[1] in lanes [b0s0 b0s1 b1s0 b1s1 | b0s2 b0s3 b1s2 b1s3] */
static inline __m256 pair_dx_nvfp4(const block_nvfp4 *x) {
    /* scale bytes [b0 d0 d1 d2 d3 b1 d0 d1 d2 d3] -> [b0d0 b0d1 b1d0 b1d1 | b0d2 b0d3 b1d2 b1d3] */
    const __m128i scale_order = _mm_setr_epi8(0, 1, 4, 5, 2, 3, 6, 7, -1, -1, -1, -1, -1, -1, -1, -1);
    uint32_t d0, d1;
    memcpy(&d0, x[0].d, 4);
    memcpy(&d1, x[1].d, 4);
    const __m128i d8 = _mm_shuffle_epi8(_mm_set_epi32(0, 0, (int)d1, (int)d0), scale_order);
    return qgemv_ue4m3x8_to_fp32_half(_mm256_cvtepu8_epi32(d8));
}
/* the block pair against its four q8_0 blocks y[0..3]: the 8 sub-blocks' integer sums in those
 * lanes, and the pair's scales (*dx) */
QGEMV_ALWAYS_INLINE __m256i pair_sums_nvfp4(const block_nvfp4 *x, const block_q8_0 *y, __m256 *dx) {
    __m256i k02[2], k13[2], p[4];
    for (int h = 0; h < 2; h++) {
        levels_nvfp4(&x[h], &k02[h], &k13[h]);
        const __m256i y0 = _mm256_loadu_si256((const __m256i *)y[2 * h].qs);
        const __m256i y1 = _mm256_loadu_si256((const __m256i *)y[2 * h + 1].qs);
        p[2 * h] = qgemv_dot_s8s8_i16x16(k02[h], _mm256_permute2x128_si256(y0, y1, 0x20));
        p[2 * h + 1] = qgemv_dot_s8s8_i16x16(k13[h], _mm256_permute2x128_si256(y0, y1, 0x31));
    }
    *dx = pair_dx_nvfp4(x);
    return qgemv_sum4_i16(p[0], p[1], p[2], p[3]);
}
/* the four q8_0 scales of a block pair in those lanes: b0 (s0 s1), b1 (s0 s1), b0 (s2 s3), b1 (s2 s3) */
static inline __m256 pair_dy_nvfp4(const block_q8_0 *y) {
    const __m128 dy4 = qgemv_f16x4(y[0].d, y[2].d, y[1].d, y[3].d);
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(dy4), _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
}

/* vec_dot: sum_b sum_s d_s d_y(s) sum_j q_j a_j, two nvfp4 blocks (four q8_0 blocks) per step,
 * the integer sums exact; the batch tile (below) runs the same operations per column */
static float vec_dot_nvfp4_q8_0(int64_t n, const void *restrict w, const void *restrict a) {
    const block_nvfp4 *x = (const block_nvfp4 *)w;
    const block_q8_0 *y = (const block_q8_0 *)a;
    const int64_t nb = n / QK_NVFP4;
    __m256 acc = _mm256_setzero_ps();
    int64_t ib = 0;
    for (; ib + 2 <= nb; ib += 2) {
        QGEMV_PREFETCH_STREAM(&x[ib], 2 * sizeof(x[0]));
        __m256 dx;
        const __m256i sums = pair_sums_nvfp4(&x[ib], &y[2 * ib], &dx);
        acc = _mm256_fmadd_ps(_mm256_mul_ps(dx, pair_dy_nvfp4(&y[2 * ib])), _mm256_cvtepi32_ps(sums), acc);
    }
    float sum = qgemv_hsum_f32x8(acc);
    for (; ib < nb; ib++) sum += block_dot_nvfp4_q8_0_ref(&x[ib], &y[2 * ib]);
    return sum;
}

/* GEMV over rows of nvfp4 (the tile's one-column case; AVX-512 has its own, below): per row,
 * vec_dot's operations in its order, so its bits; the column's q8_0 scales become vec_dot's dy
 * vectors once per chunk of NVFP4_GEMV_PAIRS block pairs for NVFP4_GEMV_ROWS rows, instead of
 * once per row (a fifth of a pair's work: 512 x 4096 in L2, 1 thread, 0.166 -> 0.131 ms; 4096
 * rows 1.48 -> 1.27 ms) */
#define NVFP4_GEMV_ROWS 16
#if !defined(QGEMV_AVX512)
#define NVFP4_GEMV_PAIRS 64   /* 2 KB of dy vectors */
static void gemv_rows_nvfp4(int64_t n, const uint8_t *w, int64_t row_stride, int64_t nrows, const block_q8_0 *y,
                            float *out, int64_t out_stride) {
    const int64_t nb = n / QK_NVFP4, npairs = nb / 2;
    __m256 dyv[NVFP4_GEMV_PAIRS];
    for (int64_t r0 = 0; r0 < nrows; r0 += NVFP4_GEMV_ROWS) {
        const int nr = (int)(nrows - r0 < NVFP4_GEMV_ROWS ? nrows - r0 : NVFP4_GEMV_ROWS);
        __m256 acc[NVFP4_GEMV_ROWS];
        for (int r = 0; r < nr; r++) acc[r] = _mm256_setzero_ps();
        for (int64_t p0 = 0; p0 < npairs; p0 += NVFP4_GEMV_PAIRS) {
            const int kp = (int)(npairs - p0 < NVFP4_GEMV_PAIRS ? npairs - p0 : NVFP4_GEMV_PAIRS);
            for (int k = 0; k < kp; k++) dyv[k] = pair_dy_nvfp4(y + 4 * (p0 + k));
            for (int r = 0; r < nr; r++) {
                const block_nvfp4 *x = (const block_nvfp4 *)(w + (r0 + r) * row_stride) + 2 * p0;
                const block_q8_0 *yr = y + 4 * p0;
                __m256 a = acc[r];
                for (int k = 0; k < kp; k++) {
                    QGEMV_PREFETCH_STREAM(&x[2 * k], 2 * sizeof(x[0]));
                    __m256 dx;
                    const __m256i sums = pair_sums_nvfp4(&x[2 * k], yr + 4 * k, &dx);
                    a = _mm256_fmadd_ps(_mm256_mul_ps(dx, dyv[k]), _mm256_cvtepi32_ps(sums), a);
                }
                acc[r] = a;
            }
        }
        for (int r = 0; r < nr; r++) {
            float sum = qgemv_hsum_f32x8(acc[r]);
            const block_nvfp4 *x = (const block_nvfp4 *)(w + (r0 + r) * row_stride);
            for (int64_t ib = 2 * npairs; ib < nb; ib++) sum += block_dot_nvfp4_q8_0_ref(&x[ib], &y[2 * ib]);
            out[(r0 + r) * out_stride] = sum;
        }
    }
}

#endif
/* the tile's one column: gemv_rows_nvfp4 */
#define NVFP4_ONE_COLUMN(vec_dot, n, w, row_stride, nrows, a, ncols, out, out_stride)        \
    if ((ncols) == 1) {                                                                     \
        gemv_rows_nvfp4((n), (const uint8_t *)(w), (row_stride), (nrows), (const block_q8_0 *)(a), (out), (out_stride)); \
        return;                                                                             \
    }
#if !defined(QGEMV_AVX512)   /* AVX-512: column pairs (vec_dot_tile_pairs_nvfp4, below) */
/* A batch: vec_dot's arithmetic, 4 columns a pass, each block pair's levels (as magnitudes and
 * signs) and E4M3 scales decoded once for them, and each column's side of a block pair prepared
 * once for the tile's rows (NVFP4_GEMV_ROWS at a time): the four q8_0 blocks' values in the
 * order the pair's level vectors take them and their scales as pair_dy_nvfp4 gives them.  Per
 * row, those were a third of a column's work a pair: Zen 4, QGEMV_ISA=avx2, 4096 x 4096, 2
 * threads, batch 8 2.60 -> 1.91 ms, batch 32 9.6 -> 7.9.  Per (row, column) the same
 * operations in the same order: vec_dot's bits. */
#define NVFP4_BATCH_PAIRS 16   /* block pairs a chunk prepares: 4 columns x 16 x 160 bytes */
typedef struct {
    __m256i q[4];   /* [b0 s0|s2], [b0 s1|s3], [b1 s0|s2], [b1 s1|s3]: levels_nvfp4's order */
    __m256 dy;      /* pair_dy_nvfp4 */
} nvfp4_column_pair;
static inline void nvfp4_prepare_column_pair(const block_q8_0 *yb, nvfp4_column_pair *c) {
    for (int h = 0; h < 2; h++) {
        const __m256i y0 = _mm256_loadu_si256((const __m256i *)yb[2 * h].qs);
        const __m256i y1 = _mm256_loadu_si256((const __m256i *)yb[2 * h + 1].qs);
        c->q[2 * h] = _mm256_permute2x128_si256(y0, y1, 0x20);
        c->q[2 * h + 1] = _mm256_permute2x128_si256(y0, y1, 0x31);
    }
    c->dy = pair_dy_nvfp4(yb);
}
/* one row's block pairs x[0 .. 2 kp) against CB prepared columns (cp[j * NVFP4_BATCH_PAIRS + k]) */
QGEMV_ALWAYS_INLINE void nvfp4_row_prepared(int64_t kp, const block_nvfp4 *x, const nvfp4_column_pair *cp,
                                            const int CB, __m256 *acc) {
    __m256 a[4];
    for (int j = 0; j < CB; j++) a[j] = acc[j];
    for (int64_t k = 0; k < kp; k++) {
        __m256i q[4], mag[4];
        levels_nvfp4(&x[2 * k], &q[0], &q[1]);
        levels_nvfp4(&x[2 * k + 1], &q[2], &q[3]);
        for (int v = 0; v < 4; v++) mag[v] = _mm256_sign_epi8(q[v], q[v]);
        const __m256 dx = pair_dx_nvfp4(&x[2 * k]);
        for (int j = 0; j < CB; j++) {
            const nvfp4_column_pair *c = &cp[j * NVFP4_BATCH_PAIRS + k];
            __m256i p[4];
            for (int v = 0; v < 4; v++) p[v] = _mm256_maddubs_epi16(mag[v], _mm256_sign_epi8(c->q[v], q[v]));
            const __m256i sums = qgemv_sum4_i16(p[0], p[1], p[2], p[3]);
            a[j] = _mm256_fmadd_ps(_mm256_mul_ps(dx, c->dy), _mm256_cvtepi32_ps(sums), a[j]);
        }
    }
    for (int j = 0; j < CB; j++) acc[j] = a[j];
}
static void vec_dot_tile_nvfp4_q8_0(int64_t n, const void *restrict w, int64_t row_stride, int64_t nrows,
                                    const void *restrict a, int64_t act_stride, int64_t ncols, float *restrict out,
                                    int64_t out_stride) {
    NVFP4_ONE_COLUMN(vec_dot_nvfp4_q8_0, n, w, row_stride, nrows, a, ncols, out, out_stride)
    const int64_t nb = n / QK_NVFP4, npairs = nb / 2;
    nvfp4_column_pair cp[4 * NVFP4_BATCH_PAIRS];
    for (int64_t r0 = 0; r0 < nrows; r0 += NVFP4_GEMV_ROWS) {
        const int nr = (int)(nrows - r0 < NVFP4_GEMV_ROWS ? nrows - r0 : NVFP4_GEMV_ROWS);
        for (int64_t c0 = 0; c0 < ncols; c0 += 4) {
            const int CB = (int)(ncols - c0 < 4 ? ncols - c0 : 4);
            const block_q8_0 *y[4];
            for (int j = 0; j < CB; j++) y[j] = (const block_q8_0 *)((const uint8_t *)a + (c0 + j) * act_stride);
            __m256 acc[NVFP4_GEMV_ROWS][4];
            for (int r = 0; r < nr; r++)
                for (int j = 0; j < 4; j++) acc[r][j] = _mm256_setzero_ps();
            for (int64_t p0 = 0; p0 < npairs; p0 += NVFP4_BATCH_PAIRS) {
                const int64_t kp = npairs - p0 < NVFP4_BATCH_PAIRS ? npairs - p0 : NVFP4_BATCH_PAIRS;
                for (int j = 0; j < CB; j++)
                    for (int64_t k = 0; k < kp; k++) nvfp4_prepare_column_pair(y[j] + 4 * (p0 + k), &cp[j * NVFP4_BATCH_PAIRS + k]);
                for (int r = 0; r < nr; r++) {
                    const block_nvfp4 *x = (const block_nvfp4 *)((const uint8_t *)w + (r0 + r) * row_stride) + 2 * p0;
                    switch (CB) {   /* CB as a constant */
                    case 1: nvfp4_row_prepared(kp, x, cp, 1, acc[r]); break;
                    case 2: nvfp4_row_prepared(kp, x, cp, 2, acc[r]); break;
                    case 3: nvfp4_row_prepared(kp, x, cp, 3, acc[r]); break;
                    default: nvfp4_row_prepared(kp, x, cp, 4, acc[r]); break;
                    }
                }
            }
            for (int r = 0; r < nr; r++) {
                const block_nvfp4 *x = (const block_nvfp4 *)((const uint8_t *)w + (r0 + r) * row_stride);
                for (int j = 0; j < CB; j++) {
                    float sum = qgemv_hsum_f32x8(acc[r][j]);
                    for (int64_t ib = 2 * npairs; ib < nb; ib++) sum += block_dot_nvfp4_q8_0_ref(&x[ib], &y[j][2 * ib]);
                    out[(r0 + r) * out_stride + c0 + j] = sum;
                }
            }
        }
    }
}
#endif

#if defined(QGEMV_AVX512)
/* the 128 activations of four q8_0 blocks (a q1_0 block's, an nvfp4 block pair's) as two vectors of 64 */
static inline void q8_0x4_activations_512(const block_q8_0 *yb, __m512i qa[2]) {
    for (int h = 0; h < 2; h++)
        qa[h] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)yb[2 * h].qs)),
                                   _mm256_loadu_si256((const __m256i *)yb[2 * h + 1].qs), 1);
}
#if defined(QGEMV_AVX512)
/* AVX-512: two rows a register, A in lanes 0-7 and B in 8-15, each lane one of vec_dot's 16-value
 * sub-block sums.  A row's block pair (64 bytes of qs) is one register whose dword d holds
 * sub-block d / 2's values 4 (d % 2) .. + 3 (low nibbles) and 8 more (high): its levels + 12 as
 * two registers meet the step's activations laid out alike (prepared once per chunk for all the
 * rows) in two vpdpbusd from -12 times those activations' sum, one add of the lanes' odd
 * neighbours finishes each sub-block's exact sum, and one permute of both rows' puts them in
 * vec_dot's lanes; then vec_dot's fma(d_x d_y, sums, acc) on both rows at once: its bits.  C
 * harness, 1 thread, against the AVX2 rows above: 4096 x 4096 1.51-1.77x (0.70-0.97 -> 0.45-0.58
 * ms); 14336 x 4096 out of cache (8 copies) 1.36-1.41x (2.5 -> 1.8 ms). */
#define NVFP4_GEMV_STEPS 32   /* block pairs per chunk: 8 KB of prepared activations */
typedef struct {
    __m512i a[2];    /* lanes 2 i, 2 i + 1: sub-block i's activations 0-3, 4-7 (a[0]); 8-11, 12-15 (a[1]) */
    __m512i start;   /* -12 times each lane's 8 activations */
    __m512 dy;       /* vec_dot's dy lanes, for both rows */
} nvfp4_gemv_step;
static inline void prepare_nvfp4_gemv_step(const block_q8_0 *yb, nvfp4_gemv_step *p) {
    __m512i qa[2];   /* 16-byte chunk i: sub-block i (block i / 4 of the pair, sub-block i % 4) */
    q8_0x4_activations_512(yb, qa);
    p->a[0] = _mm512_permutex2var_epi64(qa[0], _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), qa[1]);
    p->a[1] = _mm512_permutex2var_epi64(qa[0], _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), qa[1]);
    const __m512i sum = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(1), p->a[0]),
                                            _mm512_set1_epi8(1), p->a[1]);
    p->start = _mm512_mullo_epi32(sum, _mm512_set1_epi32(-12));
    const __m256 dy = pair_dy_nvfp4(yb);
    p->dy = _mm512_insertf32x8(_mm512_castps256_ps512(dy), dy, 1);
}
/* the E4M3 scales of rows A's and B's block pairs in vec_dot's lanes, A's then B's (pair_dx_nvfp4
 * for two rows) */
static inline __m512 pair_dx2_nvfp4(const block_nvfp4 *xa, const block_nvfp4 *xb) {
    uint32_t d[4];
    memcpy(&d[0], xa[0].d, 4); memcpy(&d[1], xa[1].d, 4); memcpy(&d[2], xb[0].d, 4); memcpy(&d[3], xb[1].d, 4);
    const __m128i order = _mm_setr_epi8(0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15);
    return qgemv_ue4m3x16_to_fp32_half(_mm512_cvtepu8_epi32(_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)d), order)));
}
/* a row's block pair x[0], x[1] against a prepared step: each lane's even dword after the add
 * holds sub-block d / 2's sum */
QGEMV_ALWAYS_INLINE __m512i gemv_step_nvfp4(const block_nvfp4 *x, const nvfp4_gemv_step *p) {
    const __m512i table = _mm512_broadcast_i32x4(_mm_add_epi8(_mm_loadu_si128((const __m128i *)kvalues_mxfp4), _mm_set1_epi8(12)));
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)x[0].qs)),
                                         _mm256_loadu_si256((const __m256i *)x[1].qs), 1);
    const __m512i lo = _mm512_shuffle_epi8(table, _mm512_and_si512(q, m4));
    const __m512i hi = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(q, 4), m4));
    const __m512i t = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(p->start, lo, p->a[0]), hi, p->a[1]);
    return _mm512_add_epi32(t, _mm512_srli_epi64(t, 32));
}
static void gemv_rows_nvfp4(int64_t n, const uint8_t *w, int64_t row_stride, int64_t nrows, const block_q8_0 *y,
                            float *out, int64_t out_stride) {
    const int64_t nb = n / QK_NVFP4, npairs = nb / 2;
    /* vec_dot's lanes [b0s0 b0s1 b1s0 b1s1 | b0s2 b0s3 b1s2 b1s3]: sub-blocks 0 1 4 5 2 3 6 7, rows A and B */
    const __m512i to_lanes = _mm512_setr_epi32(0, 2, 8, 10, 4, 6, 12, 14, 16, 18, 24, 26, 20, 22, 28, 30);
    nvfp4_gemv_step st[NVFP4_GEMV_STEPS];
    for (int64_t r0 = 0; r0 < nrows; r0 += NVFP4_GEMV_ROWS) {
        const int nr = (int)(nrows - r0 < NVFP4_GEMV_ROWS ? nrows - r0 : NVFP4_GEMV_ROWS);
        __m512 acc[NVFP4_GEMV_ROWS / 2];
        for (int r = 0; r < nr; r += 2) acc[r / 2] = _mm512_setzero_ps();
        for (int64_t p0 = 0; p0 < npairs; p0 += NVFP4_GEMV_STEPS) {
            const int kp = (int)(npairs - p0 < NVFP4_GEMV_STEPS ? npairs - p0 : NVFP4_GEMV_STEPS);
            for (int k = 0; k < kp; k++) prepare_nvfp4_gemv_step(y + 4 * (p0 + k), &st[k]);
            for (int r = 0; r < nr; r += 2) {   /* rows A = r, B = r + 1 (A again for an odd last row) */
                const block_nvfp4 *xa = (const block_nvfp4 *)(w + (r0 + r) * row_stride) + 2 * p0;
                const block_nvfp4 *xb = r + 1 < nr ? (const block_nvfp4 *)(w + (r0 + r + 1) * row_stride) + 2 * p0 : xa;
                __m512 s = acc[r / 2];
                for (int k = 0; k < kp; k++) {
                    /* the next row pair's lines, 4 blocks' worth a step: one stream through memory
                     * (each row's own lines a stream ahead, two streams of a row's length: out of
                     * cache 0.83-0.91x the AVX2 rows; this way 1.36-1.41x), into L1: the pair is
                     * read out of the stream's order, so QGEMV_PREFETCH_STREAM_AT's near hint would
                     * miss it (in cache 0.91x, Intel Xeon) */
                    QGEMV_PREFETCH_L1_STREAM_AT(w + (r0 + r) * row_stride + 4 * sizeof(xa[0]) * (p0 + k),
                                                4 * sizeof(xa[0]), 2 * row_stride);
                    const __m512i sums = _mm512_permutex2var_epi32(gemv_step_nvfp4(&xa[2 * k], &st[k]), to_lanes,
                                                                   gemv_step_nvfp4(&xb[2 * k], &st[k]));
                    const __m512 dx = pair_dx2_nvfp4(&xa[2 * k], &xb[2 * k]);
                    s = _mm512_fmadd_ps(_mm512_mul_ps(dx, st[k].dy), _mm512_cvtepi32_ps(sums), s);
                }
                acc[r / 2] = s;
            }
        }
        for (int r = 0; r < nr; r++) {
            const __m512 v = acc[r / 2];
            float sum = qgemv_hsum_f32x8(r % 2 ? _mm512_extractf32x8_ps(v, 1) : _mm512_castps512_ps256(v));
            const block_nvfp4 *x = (const block_nvfp4 *)(w + (r0 + r) * row_stride);
            for (int64_t ib = 2 * npairs; ib < nb; ib++) sum += block_dot_nvfp4_q8_0_ref(&x[ib], &y[2 * ib]);
            out[(r0 + r) * out_stride] = sum;
        }
    }
}
#endif
/* sum_j (bit_j ? -a_j : a_j) per 16 values in qgemv_sum4_i16's lanes [S0 S1 S2 S3 | S0' S1' S2'
 * S3'] (S_k: values 0-15 of q8_0 block k, S_k': 16-31): the bits as masks negate the
 * activations, vpdpbusd sums them 4 to a lane, two adds of shuffled lanes finish each 128-bit
 * chunk's 16 values (chunk c of qa[h]: q8_0 block 2 h + c / 2, half c % 2), one permute puts them
 * in place.  Exact integers, so vec_dot's bits, in 11 operations where AVX2 takes 24 */
static inline __m256i q1_0_sums_512(const block_q1_0 *x, const __m512i qa[2]) {
    const __m512i ones8 = _mm512_set1_epi8(1);
    uint64_t m[2];
    memcpy(m, x->qs, 16);
    const __m512i p0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones8, _mm512_mask_sub_epi8(qa[0], m[0], _mm512_setzero_si512(), qa[0]));
    const __m512i p1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones8, _mm512_mask_sub_epi8(qa[1], m[1], _mm512_setzero_si512(), qa[1]));
    const __m512i t = _mm512_add_epi32(_mm512_unpacklo_epi32(p0, p1), _mm512_unpackhi_epi32(p0, p1));
    const __m512i u = _mm512_add_epi32(t, _mm512_shuffle_epi32(t, _MM_PERM_BADC));   /* chunk c: (qa[0]'s, qa[1]'s) */
    return _mm512_castsi512_si256(_mm512_permutexvar_epi32(_mm512_setr_epi32(0, 8, 1, 9, 4, 12, 5, 13, 0, 0, 0, 0, 0, 0, 0, 0), u));
}
#endif

/* sum_b d_x sum_k d_y(k) sum_j (+-a_j); the signs come negated (-1 for a set bit), so the
 * scale does too */
static float vec_dot_q1_0_q8_0(int64_t n, const void *restrict w, const void *restrict a) {
    const block_q1_0 *x = (const block_q1_0 *)w;
    const block_q8_0 *y = (const block_q8_0 *)a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t ib = 0; ib < n / QK1_0; ib++) {
        QGEMV_PREFETCH_STREAM(&x[ib], sizeof(x[0]));
        const block_q8_0 *yb = &y[4 * ib];
#if defined(QGEMV_AVX512)
        __m512i qa[2];
        q8_0x4_activations_512(yb, qa);
        const __m256i sums = q1_0_sums_512(&x[ib], qa);
#else
        __m256i p[4];
        for (int k = 0; k < 4; k++) {
            const __m256i ay = _mm256_loadu_si256((const __m256i *)yb[k].qs);
            p[k] = _mm256_maddubs_epi16(_mm256_set1_epi8(1), _mm256_sign_epi8(ay, qgemv_bits_to_signs_32(x[ib].qs + 4 * k)));
        }
        const __m256i sums = qgemv_sum4_i16(p[0], p[1], p[2], p[3]);
#endif
        const __m128 d4 = _mm_mul_ps(qgemv_f16x4(yb[0].d, yb[1].d, yb[2].d, yb[3].d), _mm_set1_ps(-_cvtsh_ss(x[ib].d)));
        acc = _mm256_fmadd_ps(_mm256_set_m128(d4, d4), _mm256_cvtepi32_ps(sums), acc);
    }
    return qgemv_hsum_f32x8(acc);
}

#if defined(QGEMV_AVX512)
/* GEMV over rows of q1_0 (the tile's one-column case): per row vec_dot's operations in its order,
 * so its bits, with what depends on the column alone -- its activations as q1_0_sums_512 reads
 * them and its scales d_y(k) as vec_dot's dy lanes -- prepared once per chunk of Q1_0_GEMV_BLOCKS
 * blocks for Q1_0_GEMV_ROWS rows instead of once per row (4096 x 4096, 1 thread, C harness: 1.25-1.3x
 * the 16-row tile's single column; one row per chunk gains nothing: the preparation is the saving) */
#define Q1_0_GEMV_ROWS 16
#define Q1_0_GEMV_BLOCKS 32   /* 4 KB of activations, 1 KB of dy lanes */
static void gemv_rows_q1_0(int64_t n, const uint8_t *w, int64_t row_stride, int64_t nrows, const block_q8_0 *y,
                           float *out, int64_t out_stride) {
    const int64_t nb = n / QK1_0;
    __m512i qa[Q1_0_GEMV_BLOCKS][2];
    __m256 dy[Q1_0_GEMV_BLOCKS];   /* d_y(k) in lanes k and 4 + k */
    for (int64_t r0 = 0; r0 < nrows; r0 += Q1_0_GEMV_ROWS) {
        const int nr = (int)(nrows - r0 < Q1_0_GEMV_ROWS ? nrows - r0 : Q1_0_GEMV_ROWS);
        __m256 acc[Q1_0_GEMV_ROWS];
        for (int r = 0; r < nr; r++) acc[r] = _mm256_setzero_ps();
        for (int64_t b0 = 0; b0 < nb; b0 += Q1_0_GEMV_BLOCKS) {
            const int kb = (int)(nb - b0 < Q1_0_GEMV_BLOCKS ? nb - b0 : Q1_0_GEMV_BLOCKS);
            for (int k = 0; k < kb; k++) {
                const block_q8_0 *yb = &y[4 * (b0 + k)];
                const __m128 d4 = qgemv_f16x4(yb[0].d, yb[1].d, yb[2].d, yb[3].d);
                q8_0x4_activations_512(yb, qa[k]);
                dy[k] = _mm256_set_m128(d4, d4);
            }
            for (int r = 0; r < nr; r++) {
                const block_q1_0 *x = (const block_q1_0 *)(w + (r0 + r) * row_stride) + b0;
                __m256 s = acc[r];
                for (int k = 0; k < kb; k++) {
                    QGEMV_PREFETCH_STREAM(&x[k], sizeof(x[0]));
                    const __m256 d = _mm256_mul_ps(dy[k], _mm256_set1_ps(-_cvtsh_ss(x[k].d)));   /* vec_dot's d4, twice */
                    s = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(q1_0_sums_512(&x[k], qa[k])), s);
                }
                acc[r] = s;
            }
        }
        for (int r = 0; r < nr; r++) out[(r0 + r) * out_stride] = qgemv_hsum_f32x8(acc[r]);
    }
}
#endif

#if !defined(QGEMV_AVX512)
/* ---------------------------------------------------------------- q1_0 tiles (src/tiles.h), AVX2
 * Rows x up to 4 columns: each block's bits are decoded once for all the columns, and once per
 * chunk of blocks, for all the rows of the tile, each column's q8_0 scales are converted to float
 * and its sums of a_j are formed.  With u_j the bits as 0/1 bytes, the signs are 1 - 2 u_j (-1
 * for a set bit): sum_j (1 - 2 u_j) a_j = sum_j a_j - 2 sum_j u_j a_j, one maddubs per 32 values
 * instead of vec_dot's sign and maddubs, and each int32 lane is vec_dot's (the a_j sums in
 * qgemv_sum4_i16's lanes, minus twice the u_j a_j sums in the same lanes).  Per (row, column) the float operations are vec_dot_q1_0_q8_0's, in its order
 * (d4 = d_y(k) * -d_x, one fma per block into one accumulator, one hsum): the results are its bits. */
#define Q1_0_TILE_ROWS 16
#define Q1_0_TILE_BLOCKS 64   /* q1_0 blocks per chunk: 256 q8_0 scales per column */
#if defined(QGEMV_VNNI)
/* AVX-VNNI: the 16-value sums straight in vec_dot's lanes, as the AVX-512 column pairs below
 * take them: lane L's 4 dwords of its group g(L) (values 32 L .. 32 L + 15 for L < 4, 32 (L - 4)
 * + 16 .. after) brought into lane L of 4 vectors, the weights' once per row and block for all
 * the columns, the activations' once per column and chunk for all the rows, so 4 vpdpbusd
 * chained from -sum_j a_j give sum_j u_j a_j - sum_j a_j = -S (u_j = 2 for a set bit, 0 else):
 * vec_dot's sums negated, and d_x d_y for its d_y (-d_x), the same fma on the same product's
 * sign flipped: its bits.  Per column and block 7 operations where maddubs and the sums' tree
 * took 14 */
/* v[k] (32 values each) -> t[m] lane L = dword m of lane L's group: a 4 x 4 dword transpose in
 * each 128-bit half */
static inline void q1_0_vnni_lanes(const __m256i v[4], __m256i t[4]) {
    const __m256i a = _mm256_unpacklo_epi32(v[0], v[1]), b = _mm256_unpackhi_epi32(v[0], v[1]);
    const __m256i c = _mm256_unpacklo_epi32(v[2], v[3]), d = _mm256_unpackhi_epi32(v[2], v[3]);
    t[0] = _mm256_unpacklo_epi64(a, c);
    t[1] = _mm256_unpackhi_epi64(a, c);
    t[2] = _mm256_unpacklo_epi64(b, d);
    t[3] = _mm256_unpackhi_epi64(b, d);
}
typedef struct {
    __m256i am[4];   /* the block's activations, q1_0_vnni_lanes */
    __m256i nsum;    /* -sum_j a_j of each lane's 16 */
} q1_0_vnni_column;
#endif
QGEMV_ALWAYS_INLINE void tile_q1_0(int64_t nb, const uint8_t *w, int64_t row_stride, int64_t nrows,
                                   const uint8_t *a, int64_t act_stride, const int CB, float *out,
                                   int64_t out_stride) {
    const __m256i ones8 = _mm256_set1_epi8(1), bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    float dy[4][4 * Q1_0_TILE_BLOCKS];
    __m256i asum[4][Q1_0_TILE_BLOCKS];   /* qgemv_sum4_i16 lanes of sum_j a_j */
#if defined(QGEMV_VNNI)
    /* a single column keeps maddubs (the lanes' set-up per column ran 0.448 -> 0.461 ms, 4096 x
     * 4096, 1 thread) */
    const int vnni = CB > 1;
    q1_0_vnni_column col[4][Q1_0_TILE_BLOCKS];
#endif
    __m256 acc[Q1_0_TILE_ROWS][4];
    for (int64_t r0 = 0; r0 < nrows; r0 += Q1_0_TILE_ROWS) {
        const int nr = (int)(nrows - r0 < Q1_0_TILE_ROWS ? nrows - r0 : Q1_0_TILE_ROWS);
        for (int r = 0; r < nr; r++)
            for (int j = 0; j < CB; j++) acc[r][j] = _mm256_setzero_ps();
        for (int64_t b0 = 0; b0 < nb; b0 += Q1_0_TILE_BLOCKS) {
            const int kb = (int)(nb - b0 < Q1_0_TILE_BLOCKS ? nb - b0 : Q1_0_TILE_BLOCKS);
            for (int j = 0; j < CB; j++) {
                const block_q8_0 *y = (const block_q8_0 *)(a + j * act_stride) + 4 * b0;
                for (int k = 0; k < 4 * kb; k += 4) {
                    _mm_storeu_ps(&dy[j][k], qgemv_f16x4(y[k].d, y[k + 1].d, y[k + 2].d, y[k + 3].d));
#if defined(QGEMV_VNNI)
                    if (vnni) {
                        __m256i v[4];
                        for (int q = 0; q < 4; q++) v[q] = _mm256_loadu_si256((const __m256i *)y[k + q].qs);
                        q1_0_vnni_column *c = &col[j][k / 4];
                        q1_0_vnni_lanes(v, c->am);
                        __m256i sum = _mm256_setzero_si256();
                        for (int m = 0; m < 4; m++) sum = qgemv_dpbusd_256(sum, ones8, c->am[m]);
                        c->nsum = _mm256_sub_epi32(_mm256_setzero_si256(), sum);
                        continue;
                    }
#endif
                    __m256i p[4];
                    for (int q = 0; q < 4; q++)
                        p[q] = _mm256_maddubs_epi16(ones8, _mm256_loadu_si256((const __m256i *)y[k + q].qs));
                    asum[j][k / 4] = qgemv_sum4_i16(p[0], p[1], p[2], p[3]);
                }
            }
            for (int r = 0; r < nr; r++) {
                const block_q1_0 *x = (const block_q1_0 *)(w + (r0 + r) * row_stride) + b0;
                __m256 accr[4];
                for (int j = 0; j < CB; j++) accr[j] = acc[r][j];
                for (int ib = 0; ib < kb; ib++) {
                    QGEMV_PREFETCH_COLS_STREAM(&x[ib], sizeof(x[0]), CB);
#if defined(QGEMV_VNNI)
                    if (vnni) {
                        __m256i u[4], wm[4];   /* 0 / 2 bytes: bit j of the block; then in lanes */
                        for (int k = 0; k < 4; k++)
                            u[k] = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qgemv_spread_bits_32(x[ib].qs + 4 * k), bit), bit),
                                                    _mm256_set1_epi8(2));
                        q1_0_vnni_lanes(u, wm);
                        const __m128 dx = _mm_set1_ps(_cvtsh_ss(x[ib].d));
                        for (int j = 0; j < CB; j++) {
                            const q1_0_vnni_column *c = &col[j][ib];
                            __m256i t = c->nsum;
                            for (int m = 0; m < 4; m++) t = qgemv_dpbusd_256(t, wm[m], c->am[m]);
                            const __m128 d4 = _mm_mul_ps(_mm_loadu_ps(&dy[j][4 * ib]), dx);
                            accr[j] = _mm256_fmadd_ps(_mm256_set_m128(d4, d4), _mm256_cvtepi32_ps(t), accr[j]);
                        }
                        continue;
                    }
#endif
                    __m256i u[4];   /* 0/1 bytes: bit j of the block */
                    for (int k = 0; k < 4; k++)
                        u[k] = _mm256_min_epu8(_mm256_and_si256(qgemv_spread_bits_32(x[ib].qs + 4 * k), bit), ones8);
                    const __m128 dneg = _mm_set1_ps(-_cvtsh_ss(x[ib].d));
                    for (int j = 0; j < CB; j++) {
                        const block_q8_0 *yb = (const block_q8_0 *)(a + j * act_stride) + 4 * (b0 + ib);
                        __m256i p[4];
                        for (int k = 0; k < 4; k++)
                            p[k] = _mm256_maddubs_epi16(u[k], _mm256_loadu_si256((const __m256i *)yb[k].qs));
                        const __m256i sums = _mm256_sub_epi32(asum[j][ib], qgemv_sum4_i16_times(p[0], p[1], p[2], p[3], 2));
                        const __m128 d4 = _mm_mul_ps(_mm_loadu_ps(&dy[j][4 * ib]), dneg);
                        accr[j] = _mm256_fmadd_ps(_mm256_set_m128(d4, d4), _mm256_cvtepi32_ps(sums), accr[j]);
                    }
                }
                for (int j = 0; j < CB; j++) acc[r][j] = accr[j];
            }
        }
        for (int r = 0; r < nr; r++)
            for (int j = 0; j < CB; j++) out[(r0 + r) * out_stride + j] = qgemv_hsum_f32x8(acc[r][j]);
    }
}
#else
/* ---------------------------------------------------------------- column pairs on AVX-512
 * The batches of q1_0 and nvfp4, in steps of 128 weights against four q8_0 blocks (a q1_0 block,
 * an nvfp4 block pair), rows x column pairs, a pair's two columns in the halves of one 512-bit
 * accumulator.  Per (row, step) the weights become u8 codes u = q + bias in value order (q1_0:
 * u = 2 for a set bit, 0 else, the "level" -2 u; nvfp4: kvalues + 12) and the step's scales dx
 * (vec_dot's 8 lanes, twice), once for all the columns (pair_step_<name>), then permuted into
 * the lanes of the result (q8_0_pair_step, below).  Per pair four vpdpbusd chained into one
 * register sum u_j a_j 16 to a lane, from the pair's -bias sum_j a_j (prepared with the
 * activations once per chunk of steps for all the rows): vec_dot's exact 16-value sums (q1_0:
 * negated), already in vec_dot's lanes for both columns.  Then fma(d_y d_x, sums, acc), vec_dot's
 * float step (q1_0's fma(d_y (-d_x), S) with both signs flipped: exact), so every (row, column)
 * gets vec_dot's bits.  C harness, 4096 x 4096, 1 thread, against the AVX2 tiles: q1_0 batch 2
 * 1.2x, 8 1.25-1.4x, 32 1.26-1.4x, 3 even (its second pair has one column).  Against native ggml
 * 0.25.3 (compare.py, 2 threads), batch 8 / 32: q1_0 2.0-2.2x / 2.1-2.2x (the AVX2 tile: 1.2-1.6x
 * / 1.6x), nvfp4 2.9x / 3.1x (1.5x / 1.7x).  Those sums first came 4 to a lane in value order,
 * finished by a tree of shuffled adds and a permute per pair and row; laid out as now (the same
 * harness, the same bits): q1_0 batch 2 1.15x, 3 1.28x, 8 1.27-1.29x, 32 1.33-1.34x; nvfp4 2
 * 1.08x, 8 1.15-1.21x, 32 1.23-1.35x.  A single column takes gemv_rows_<name> instead: this
 * tile with one pair half empty ran 0.7x. */
#define Q8_0_PAIR_ROWS 16
#define Q8_0_PAIR_STEPS 8   /* steps per chunk: 3.5 KB of prepared columns per pair */
#define Q8_0_PAIRS 4        /* column pairs per pass */
/* A pair's step in the lanes of its result: lane L holds the exact 16-value sum that vec_dot
 * puts in its lane L % 8 of column L / 8's accumulator (the pick of the tile's definition), so
 * four vpdpbusd chained into one register finish them: am[m] lane L is dword 4 g + m of its
 * column's 128 activations (g: the lane's group of 16 values), and the row's weights are
 * permuted alike once per step for all the pairs (q8_0_pair_lanes).  No tree of shuffled adds
 * per pair and row, and no permute of the sums after it. */
typedef struct {
    __m512i am[4];      /* m = 0..3: each lane's 4 activations 4 m .. 4 m + 3 of its 16 */
    __m512i nsum;       /* -bias times each lane's 16 activations' sum: the chain's start */
    __m512 dy;          /* the q8_0 scales in vec_dot's lanes: first column 0-7, second 8-15 */
} q8_0_pair_step;
typedef struct {
    __m512i dword[4];   /* lane L: dword 4 g + m of a step's 32 (two registers of 16), g lane L's
                         * group: for the row's weights and each column's activations alike */
    __mmask16 second;   /* the lanes of the pair's second column */
} q8_0_pair_lanes;
/* the lanes' groups from pick (lane L: the code pick[L] = 4 q + i, column i / 2's values
 * 64 (i % 2) + 16 q .. + 15) */
static inline void q8_0_pair_lanes_of(__m512i pick, q8_0_pair_lanes *l) {
    int32_t pk[16], idx[4][16];
    _mm512_storeu_si512((void *)pk, pick);
    l->second = 0;
    for (int L = 0; L < 16; L++) {
        const int q = pk[L] / 4, i = pk[L] % 4, g = 4 * (i % 2) + q;
        if (i / 2) l->second |= (__mmask16)(1u << L);
        for (int m = 0; m < 4; m++) idx[m][L] = 4 * g + m;
    }
    for (int m = 0; m < 4; m++) l->dword[m] = _mm512_loadu_si512((const void *)idx[m]);
}
/* a pair's view of one step (yb[c]: column c's four q8_0 blocks; NULL: no column, zeros); dy_lanes
 * places d_y(0..3) in vec_dot's 8 lanes */
static void prepare_q8_0_pair(const block_q8_0 *const yb[2], int bias, __m256i dy_lanes, const q8_0_pair_lanes *l,
                              q8_0_pair_step *p) {
    __m512i qa[2][2];
    __m256 dy[2];
    for (int c = 0; c < 2; c++) {
        if (!yb[c]) {
            qa[c][0] = qa[c][1] = _mm512_setzero_si512();
            dy[c] = _mm256_setzero_ps();
            continue;
        }
        q8_0x4_activations_512(yb[c], qa[c]);
        dy[c] = _mm256_permutexvar_ps(dy_lanes, _mm256_castps128_ps256(qgemv_f16x4(yb[c][0].d, yb[c][1].d, yb[c][2].d, yb[c][3].d)));
    }
    __m512i sum = _mm512_setzero_si512();
    for (int m = 0; m < 4; m++) {
        p->am[m] = _mm512_mask_blend_epi32(l->second, _mm512_permutex2var_epi32(qa[0][0], l->dword[m], qa[0][1]),
                                           _mm512_permutex2var_epi32(qa[1][0], l->dword[m], qa[1][1]));
        sum = _mm512_dpbusd_epi32(sum, _mm512_set1_epi8(1), p->am[m]);
    }
    p->nsum = _mm512_mullo_epi32(sum, _mm512_set1_epi32(-bias));
    p->dy = _mm512_insertf32x8(_mm512_castps256_ps512(dy[0]), dy[1], 1);
}

/* q1_0's step: the bits as 0 / 2 bytes, d_x (vec_dot's -d_x negated) */
static inline void pair_step_q1_0(const block_q1_0 *x, __m512i u[2], __m512 *dx) {
    uint64_t m[2];
    memcpy(m, x->qs, 16);
    for (int h = 0; h < 2; h++) u[h] = _mm512_maskz_mov_epi8(m[h], _mm512_set1_epi8(2));
    *dx = _mm512_set1_ps(_cvtsh_ss(x->d));
}
/* nvfp4's step, a block pair: each block's 64 levels + 12 in value order (qword 2 s and 2 s + 1
 * both sub-block s's 8 bytes, the second shifted down a nibble), pair_dx_nvfp4 twice */
static inline void pair_step_nvfp4(const block_nvfp4 *x, __m512i u[2], __m512 *dx) {
    const __m512i table = _mm512_broadcast_i32x4(_mm_add_epi8(_mm_loadu_si128((const __m128i *)kvalues_mxfp4), _mm_set1_epi8(12)));
    for (int h = 0; h < 2; h++) {
        const __m512i q = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3),
                                                   _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)x[h].qs)));
        const __m512i nib = _mm512_and_si512(_mm512_srlv_epi64(q, _mm512_setr_epi64(0, 4, 0, 4, 0, 4, 0, 4)), _mm512_set1_epi8(0x0f));
        u[h] = _mm512_shuffle_epi8(table, nib);
    }
    const __m256 d = pair_dx_nvfp4(x);
    *dx = _mm512_insertf32x8(_mm512_castps256_ps512(d), d, 1);
}

/* tile_pairs_<name>: rows of nb blocks (block_values values each), nb / step_blocks steps against NP <= Q8_0_PAIRS
 * column pairs (ncols <= 2 NP columns at a, act_stride apart); pick: the 16-value group of
 * each of vec_dot's lanes, first column's 8 then the second's, as 4 q + i: the column's values
 * 64 (i % 2) + 16 q .. + 15 of a step, column i / 2 (q8_0_pair_lanes_of); tail(x, nb, y, sum):
 * the row's blocks past its steps, after the lanes' sum */
#define QGEMV_DEFINE_PAIRS_TILE_Q8_0(name, block_values, step_blocks, bias, dy_lanes, pick, tail)           \
    QGEMV_ALWAYS_INLINE void tile_pairs_##name(int64_t nb, const uint8_t *w, int64_t row_stride, int64_t nrows, \
                                               const uint8_t *a, int64_t act_stride, int64_t ncols, float *out, \
                                               int64_t out_stride, const int NP) {              \
        enum { R = Q8_0_PAIR_ROWS, CH = Q8_0_PAIR_STEPS };                                      \
        const int64_t nsteps = nb / (step_blocks);                                              \
        q8_0_pair_step pb[Q8_0_PAIRS][CH];                                                      \
        q8_0_pair_lanes lanes;                                                                  \
        q8_0_pair_lanes_of((pick), &lanes);                                                     \
        __m512 acc[R][Q8_0_PAIRS];                                                              \
        for (int64_t r0 = 0; r0 < nrows; r0 += R) {                                             \
            const int nr = (int)(nrows - r0 < R ? nrows - r0 : R);                              \
            for (int r = 0; r < nr; r++)                                                        \
                for (int p = 0; p < NP; p++) acc[r][p] = _mm512_setzero_ps();                   \
            for (int64_t k0 = 0; k0 < nsteps; k0 += CH) {                                       \
                const int kc = (int)(nsteps - k0 < CH ? nsteps - k0 : CH);                      \
                for (int p = 0; p < NP; p++)                                                    \
                    for (int k = 0; k < kc; k++) {                                              \
                        const block_q8_0 *yb[2];                                                \
                        for (int c = 0; c < 2; c++)                                             \
                            yb[c] = 2 * p + c < ncols ? (const block_q8_0 *)(a + (2 * p + c) * act_stride) + 4 * (k0 + k) : NULL; \
                        prepare_q8_0_pair(yb, (bias), (dy_lanes), &lanes, &pb[p][k]);           \
                    }                                                                           \
                for (int r = 0; r < nr; r++) {                                                  \
                    const block_##name *x = (const block_##name *)(w + (r0 + r) * row_stride) + (step_blocks) * k0; \
                    __m512 s[Q8_0_PAIRS];                                                       \
                    for (int p = 0; p < NP; p++) s[p] = acc[r][p];                              \
                    for (int k = 0; k < kc; k++) {                                              \
                        QGEMV_PREFETCH_L1_STREAM(&x[(step_blocks) * k], (step_blocks) * sizeof(x[0])); \
                        __m512i u[2], wm[4];                                                    \
                        __m512 dx;                                                              \
                        pair_step_##name(&x[(step_blocks) * k], u, &dx);                        \
                        for (int m = 0; m < 4; m++) wm[m] = _mm512_permutex2var_epi32(u[0], lanes.dword[m], u[1]); \
                        for (int p = 0; p < NP; p++) {                                          \
                            const q8_0_pair_step *b = &pb[p][k];                                \
                            __m512i t = b->nsum;                                                \
                            for (int m = 0; m < 4; m++) t = _mm512_dpbusd_epi32(t, wm[m], b->am[m]); \
                            s[p] = _mm512_fmadd_ps(_mm512_mul_ps(b->dy, dx), _mm512_cvtepi32_ps(t), s[p]); \
                        }                                                                       \
                    }                                                                           \
                    for (int p = 0; p < NP; p++) acc[r][p] = s[p];                              \
                }                                                                               \
            }                                                                                   \
            for (int r = 0; r < nr; r++) {                                                      \
                const block_##name *x = (const block_##name *)(w + (r0 + r) * row_stride);      \
                for (int c = 0; c < ncols; c++) {                                               \
                    const __m512 v = acc[r][c / 2];                                             \
                    float sum = qgemv_hsum_f32x8(c % 2 ? _mm512_extractf32x8_ps(v, 1) : _mm512_castps512_ps256(v)); \
                    tail(x, nb, (const block_q8_0 *)(a + c * act_stride), sum);                 \
                    out[(r0 + r) * out_stride + c] = sum;                                       \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
    static void vec_dot_tile_pairs_##name(int64_t n, const void *restrict w, int64_t row_stride, int64_t nrows, \
                                          const void *restrict a, int64_t act_stride, int64_t ncols, \
                                          float *restrict out, int64_t out_stride) {            \
        const int64_t nb = n / (block_values);                                                  \
        for (int64_t c0 = 0; c0 < ncols; c0 += 2 * Q8_0_PAIRS) {                                \
            const uint8_t *a_ = (const uint8_t *)a + c0 * act_stride;                           \
            const int64_t nc = ncols - c0 < 2 * Q8_0_PAIRS ? ncols - c0 : 2 * Q8_0_PAIRS;       \
            switch ((nc + 1) / 2) {                                                             \
            case 1: tile_pairs_##name(nb, (const uint8_t *)w, row_stride, nrows, a_, act_stride, nc, out + c0, out_stride, 1); break; \
            case 2: tile_pairs_##name(nb, (const uint8_t *)w, row_stride, nrows, a_, act_stride, nc, out + c0, out_stride, 2); break; \
            case 3: tile_pairs_##name(nb, (const uint8_t *)w, row_stride, nrows, a_, act_stride, nc, out + c0, out_stride, 3); break; \
            default: tile_pairs_##name(nb, (const uint8_t *)w, row_stride, nrows, a_, act_stride, nc, out + c0, out_stride, 4); break; \
            }                                                                                   \
        }                                                                                       \
    }
#define QGEMV_PAIRS_NO_TAIL(x, nb, y, sum) (void)(x)
/* nvfp4: an odd last block by ggml's generic order, as vec_dot */
#define QGEMV_PAIRS_TAIL_NVFP4(x, nb, y, sum)                                                  \
    if ((nb) % 2) (sum) += block_dot_nvfp4_q8_0_ref(&(x)[(nb) - 1], &(y)[2 * ((nb) - 1)])
QGEMV_DEFINE_PAIRS_TILE_Q8_0(q1_0, QK1_0, 1, 1, _mm256_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3),
                             _mm512_setr_epi32(0, 8, 1, 9, 4, 12, 5, 13, 2, 10, 3, 11, 6, 14, 7, 15), QGEMV_PAIRS_NO_TAIL)
QGEMV_DEFINE_PAIRS_TILE_Q8_0(nvfp4, QK_NVFP4, 2, 12, _mm256_setr_epi32(0, 0, 2, 2, 1, 1, 3, 3),
                             _mm512_setr_epi32(0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15), QGEMV_PAIRS_TAIL_NVFP4)
static void vec_dot_tile_nvfp4_q8_0(int64_t n, const void *restrict w, int64_t row_stride, int64_t nrows,
                                    const void *restrict a, int64_t act_stride, int64_t ncols,
                                    float *restrict out, int64_t out_stride) {
    NVFP4_ONE_COLUMN(vec_dot_nvfp4_q8_0, n, w, row_stride, nrows, a, ncols, out, out_stride);
    vec_dot_tile_pairs_nvfp4(n, w, row_stride, nrows, a, act_stride, ncols, out, out_stride);
}
#endif

static void vec_dot_tile_q1_0_q8_0(int64_t n, const void *restrict w, int64_t row_stride, int64_t nrows,
                                   const void *restrict a, int64_t act_stride, int64_t ncols,
                                   float *restrict out, int64_t out_stride) {
#if defined(QGEMV_AVX512)
    if (ncols == 1) {
        gemv_rows_q1_0(n, (const uint8_t *)w, row_stride, nrows, (const block_q8_0 *)a, out, out_stride);
        return;
    }
    vec_dot_tile_pairs_q1_0(n, w, row_stride, nrows, a, act_stride, ncols, out, out_stride);
#else
    for (int64_t c0 = 0; c0 < ncols; c0 += 4) {
        const uint8_t *a_ = (const uint8_t *)a + c0 * act_stride;
        float *o_ = out + c0;
        switch (ncols - c0) {
        case 1: tile_q1_0(n / QK1_0, (const uint8_t *)w, row_stride, nrows, a_, act_stride, 1, o_, out_stride); break;
        case 2: tile_q1_0(n / QK1_0, (const uint8_t *)w, row_stride, nrows, a_, act_stride, 2, o_, out_stride); break;
        case 3: tile_q1_0(n / QK1_0, (const uint8_t *)w, row_stride, nrows, a_, act_stride, 3, o_, out_stride); break;
        default: tile_q1_0(n / QK1_0, (const uint8_t *)w, row_stride, nrows, a_, act_stride, 4, o_, out_stride); break;
        }
    }
#endif
}

/* sum_b d_x sum_k d_y(k) (sum_j q_j a_j - sum_j a_j); two q2_0 blocks (four q8_0) per step */
static inline __m256i q2_0_dot_i16x16(__m256i codes, const block_q8_0 *yb) {
    const __m256i ay = _mm256_loadu_si256((const __m256i *)yb->qs);
    return _mm256_sub_epi16(_mm256_maddubs_epi16(codes, ay), _mm256_maddubs_epi16(_mm256_set1_epi8(1), ay));
}

static float vec_dot_q2_0_q8_0(int64_t n, const void *restrict w, const void *restrict a) {
    const block_q2_0 *x = (const block_q2_0 *)w;
    const block_q8_0 *y = (const block_q8_0 *)a;
    const int64_t nb = n / QK2_0;
    __m256 acc = _mm256_setzero_ps();
    int64_t ib = 0;
    for (; ib + 2 <= nb; ib += 2) {
        QGEMV_PREFETCH_STREAM(&x[ib], 2 * sizeof(x[0]));
        const __m256i qs0 = q2_0_broadcast_qs(&x[ib]), qs1 = q2_0_broadcast_qs(&x[ib + 1]);
        const block_q8_0 *yb = &y[2 * ib];
        const __m256i sums = qgemv_sum4_i16(q2_0_dot_i16x16(codes_q2_0(qs0, 0), &yb[0]),
                                            q2_0_dot_i16x16(codes_q2_0(qs0, 1), &yb[1]),
                                            q2_0_dot_i16x16(codes_q2_0(qs1, 0), &yb[2]),
                                            q2_0_dot_i16x16(codes_q2_0(qs1, 1), &yb[3]));
        const __m128 d4 = _mm_mul_ps(qgemv_f16x4(yb[0].d, yb[1].d, yb[2].d, yb[3].d),
                                     qgemv_f16x4(x[ib].d, x[ib].d, x[ib + 1].d, x[ib + 1].d));
        acc = _mm256_fmadd_ps(_mm256_set_m128(d4, d4), _mm256_cvtepi32_ps(sums), acc);
    }
    float sum = qgemv_hsum_f32x8(acc);
    for (; ib < nb; ib++) sum += block_dot_q2_0_q8_0_ref(&x[ib], &y[2 * ib]);
    return sum;
}
#else
/* ggml's generic order, block after block (block_dot_nvfp4_q8_0_ref) */
static float vec_dot_nvfp4_q8_0(int64_t n, const void *restrict w, const void *restrict a) {
    const block_nvfp4 *x = (const block_nvfp4 *)w;
    const block_q8_0 *y = (const block_q8_0 *)a;
    float sum = 0.0f;
    for (int64_t ib = 0; ib < n / QK_NVFP4; ib++) sum += block_dot_nvfp4_q8_0_ref(&x[ib], &y[2 * ib]);
    return sum;
}

/* ggml's generic order: d_x (sum_k d_y(k) isum_k) */
static float vec_dot_q1_0_q8_0(int64_t n, const void *restrict w, const void *restrict a) {
    const block_q1_0 *x = (const block_q1_0 *)w;
    const block_q8_0 *y = (const block_q8_0 *)a;
    float sum = 0.0f;
    for (int64_t ib = 0; ib < n / QK1_0; ib++) {
        float sumi = 0.0f;
        for (int k = 0; k < 4; k++) {
            const block_q8_0 *yb = &y[4 * ib + k];
            int32_t isum = 0;
            for (int j = 0; j < 32; j++) isum += q1_0_bit(&x[ib], 32 * k + j) ? yb->qs[j] : -yb->qs[j];
            sumi += qgemv_fp16_to_fp32(yb->d) * (float)isum;
        }
        sum += qgemv_fp16_to_fp32(x[ib].d) * sumi;
    }
    return sum;
}

static float vec_dot_q2_0_q8_0(int64_t n, const void *restrict w, const void *restrict a) {
    const block_q2_0 *x = (const block_q2_0 *)w;
    const block_q8_0 *y = (const block_q8_0 *)a;
    float sum = 0.0f;
    for (int64_t ib = 0; ib < n / QK2_0; ib++) sum += block_dot_q2_0_q8_0_ref(&x[ib], &y[2 * ib]);
    return sum;
}
#endif

/* the specialised tiles of this family (src/kernels.c puts them in the table) */
#if defined(QGEMV_AVX2)
#define QGEMV_TILES_FP4_BITS(X) X(q1_0, q8_0) X(nvfp4, q8_0)
#else
#define QGEMV_TILES_FP4_BITS(X)   /* portable: the generic tiles (src/tiles.h) */
#endif
