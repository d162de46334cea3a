/* The ternary formats of BitNet b1.58 / TriLMs: tq1_0 and tq2_0, x = d (t - 1), t in {0, 1, 2}
 * (tq2_0 can also store t = 3), against q8_K activations.
 *
 * tq2_0 keeps t as 2-bit fields: byte qs[32 h + k] holds, in bits 2l..2l+1, value 128 h + 32 l + k.
 * tq1_0 keeps five trits per byte as a fixed-point fraction of 3^5 (its quantizer stores
 * ceil(256 n / 243)); trit l of byte b is the top of 3 ((b 3^l) mod 256), i.e.
 * ((uint8_t)(b 3^l) 3) >> 8.  qs[0..32) give values 32 l + m (l < 5), qs[32..48) give
 * 160 + 16 l + m, and the four qh bytes give 240 + 4 l + j with four trits each (l < 4).
 *
 * Each format is written as
 *   unpack_<name>_ref(b, q)    its 256 levels t - 1, portable C (dequantize and the portable dot),
 *   trits_<name>(b, t)         its 256 t as 8 x 32 unsigned bytes in value order (AVX2 and up),
 * and the rows around them: dequant_row_<name> (x = (float)(t - 1) d, ggml's order) and
 * vec_dot_<name>_q8_K = sum_b d_x d_y (sum_j t_j a_j - sum_j a_j), the second sum being the
 * q8_K block's bsums, so the AVX2 inner loop is unsigned x signed bytes only (maddubs).
 */

/* ---------------------------------------------------------------- tq1_0 */
static inline int tq_trit(uint8_t b, uint8_t pow3) {
    const uint8_t z = (uint8_t)(b * pow3);
    return (int)(((uint16_t)z * 3) >> 8);
}

static const uint8_t tq_pow3[5] = {1, 3, 9, 27, 81};

static inline void unpack_tq1_0_ref(const block_tq1_0 *b, int8_t q[QK_K]) {
    for (int l = 0; l < 5; l++)
        for (int m = 0; m < 32; m++) q[32 * l + m] = (int8_t)(tq_trit(b->qs[m], tq_pow3[l]) - 1);
    for (int l = 0; l < 5; l++)
        for (int m = 0; m < 16; m++) q[160 + 16 * l + m] = (int8_t)(tq_trit(b->qs[32 + m], tq_pow3[l]) - 1);
    for (int l = 0; l < 4; l++)
        for (int j = 0; j < 4; j++) q[240 + 4 * l + j] = (int8_t)(tq_trit(b->qh[j], tq_pow3[l]) - 1);
}

/* ---------------------------------------------------------------- tq2_0 */
/* 256 values' 2-bit fields t in tq2_0's order (byte 32 h + k, bits 2 l: value 128 h + 32 l + k;
 * q2_K's and q3_K's low bits and iq1_m's trit copy share it), read as q = t - 1 or written */
static inline void levels_2bit_ref(const uint8_t qs[QK_K / 4], int8_t q[QK_K]) {
    for (int h = 0; h < 2; h++)
        for (int l = 0; l < 4; l++)
            for (int k = 0; k < 32; k++) q[128 * h + 32 * l + k] = (int8_t)(((qs[32 * h + k] >> (2 * l)) & 3) - 1);
}
static inline void qgemv_pack_2bit_256(const uint8_t *restrict L, uint8_t *restrict qs) {   /* fields t = L */
    for (int j = 0; j < QK_K; j += 128)
        for (int l = 0; l < 32; l++)
            qs[j / 4 + l] = (uint8_t)(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}
static inline void pack_2bit_ref(const int8_t q[QK_K], uint8_t qs[QK_K / 4]) {   /* fields t = q + 1 */
    uint8_t t[QK_K];
    for (int v = 0; v < QK_K; v++) t[v] = (uint8_t)(q[v] + 1);
    qgemv_pack_2bit_256(t, qs);
}
static inline void unpack_tq2_0_ref(const block_tq2_0 *b, int8_t q[QK_K]) { levels_2bit_ref(b->qs, q); }

#if defined(QGEMV_AVX2)
/* 3 z mod 256 per byte */
static inline __m256i tq_times3(__m256i z) { return _mm256_add_epi8(z, _mm256_add_epi8(z, z)); }

/* trit of each byte from s = z ^ 0x80 (z = b 3^l mod 256): t = (3 z) >> 8 = [z >= 86] + [z >= 171],
 * two signed compares since z >= c <=> s > c - 129.  Multiplying by 3 commutes with the xor
 * (3 (z + 128) = 3 z + 128 mod 256), so the next power of 3 is tq_times3(s). */
static inline __m256i tq_trits_of(__m256i s) {
    const __m256i m1 = _mm256_cmpgt_epi8(s, _mm256_set1_epi8(86 - 129));
    const __m256i m2 = _mm256_cmpgt_epi8(s, _mm256_set1_epi8(171 - 129));
    return _mm256_abs_epi8(_mm256_add_epi8(m1, m2));
}

/* the 256 trits of a tq1_0 block, 32 per vector, in value order.  The 16 bytes qs[32..48) and
 * the 4 qh bytes (broadcast) share one vector x0, so one chain of tq_times3 gives both their
 * powers: x_l = x0 3^l; trits 160.. come from the low halves of x0..x4 taken two at a time, and
 * the qh trits from byte j of the high half of x_l, dword 4 + l */
static inline void trits_tq1_0(const block_tq1_0 *b, __m256i t[8]) {
    const __m256i flip = _mm256_set1_epi8((char)0x80);
    __m256i s = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)b->qs), flip);
    for (int l = 0; l < 5; l++, s = tq_times3(s)) t[l] = tq_trits_of(s);
    uint32_t qh;
    memcpy(&qh, b->qh, 4);
    const __m128i q = _mm_loadu_si128((const __m128i *)(b->qs + 32));
    const __m256i x0 = _mm256_xor_si256(_mm256_inserti128_si256(_mm256_castsi128_si256(q), _mm_set1_epi32((int)qh), 1), flip);
    const __m256i x1 = tq_times3(x0), x2 = tq_times3(x1), x3 = tq_times3(x2), x4 = tq_times3(x3);
    const __m256i h = _mm256_blend_epi32(_mm256_blend_epi32(x0, x1, 0x20), _mm256_blend_epi32(x2, x3, 0x80), 0xC0);
    t[5] = tq_trits_of(_mm256_permute2x128_si256(x0, x1, 0x20));
    t[6] = tq_trits_of(_mm256_permute2x128_si256(x2, x3, 0x20));
    t[7] = tq_trits_of(_mm256_blend_epi32(x4, h, 0xF0));
}

/* 256 t <= 3, 32 per vector in value order -> their 2-bit fields in tq2_0's order (t << 6 stays
 * inside its byte) */
static inline void pack_2bit(const __m256i t[8], uint8_t qs[QK_K / 4]) {
    for (int h = 0; h < 2; h++) {
        const __m256i lo = _mm256_or_si256(t[4 * h], _mm256_slli_epi16(t[4 * h + 1], 2));
        const __m256i hi = _mm256_or_si256(_mm256_slli_epi16(t[4 * h + 2], 4), _mm256_slli_epi16(t[4 * h + 3], 6));
        _mm256_storeu_si256((__m256i *)(qs + 32 * h), _mm256_or_si256(lo, hi));
    }
}

/* the 256 t of a tq2_0 block, 32 per vector, in value order */
static inline void trits_tq2_0(const block_tq2_0 *b, __m256i t[8]) {
    const __m256i three = _mm256_set1_epi8(3);
    for (int h = 0; h < 2; h++) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * h));
        for (int l = 0; l < 4; l++) t[4 * h + l] = _mm256_and_si256(_mm256_srli_epi16(x, 2 * l), three);
    }
}
/* the same fields masked where they lie, for the dot: vector 4 h + l holds 4^l t (l < 3: one and
 * each, no shift) and t (l = 3: 64 t would leave maddubs' int16); tq_block_dot_q8_K scales back */
static inline void fields_tq2_0(const block_tq2_0 *b, __m256i f[8]) {
    for (int h = 0; h < 2; h++) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * h));
        for (int l = 0; l < 3; l++) f[4 * h + l] = _mm256_and_si256(x, _mm256_set1_epi8((char)(3 << (2 * l))));
        f[4 * h + 3] = _mm256_and_si256(_mm256_srli_epi16(x, 6), _mm256_set1_epi8(3));
    }
}
#endif

/* ---------------------------------------------------------------- the loops */

#if defined(QGEMV_AVX2)
#define QGEMV_DEFINE_DEQUANT_ROW_TQ(name)                                                  \
    static void dequant_row_##name(const void *restrict src, float *restrict dst, int64_t n) { \
        const block_##name *x = (const block_##name *)src;                                 \
        const __m256i one = _mm256_set1_epi8(1);                                           \
        for (int64_t ib = 0; ib < n / QK_K; ib++) {                                        \
            __m256i t[8];                                                                  \
            trits_##name(&x[ib], t);                                                       \
            const float d = qgemv_fp16_to_fp32(x[ib].d);                                   \
            for (int v = 0; v < 8; v++)                                                    \
                qgemv_store_levels_32(_mm256_sub_epi8(t[v], one), d, 0.0f, 0, dst + QK_K * ib + 32 * v); \
        }                                                                                  \
    }
#else
#define QGEMV_DEFINE_DEQUANT_ROW_TQ(name)                                                  \
    static void dequant_row_##name(const void *restrict src, float *restrict dst, int64_t n) { \
        const block_##name *x = (const block_##name *)src;                                 \
        for (int64_t ib = 0; ib < n / QK_K; ib++) {                                        \
            int8_t q[QK_K];                                                                \
            unpack_##name##_ref(&x[ib], q);                                                \
            const float d = qgemv_fp16_to_fp32(x[ib].d);                                   \
            for (int j = 0; j < QK_K; j++) dst[QK_K * ib + j] = (float)q[j] * d;           \
        }                                                                                  \
    }
#endif

#if defined(QGEMV_AVX2)
/* sum_j t_j a_j - bsums of one block in 8 int32 lanes, from the 8 vectors of t (scaled = 0) or
 * of fields_tq2_0 (scaled = 1: vectors l = 1, 2 hold 4^l t).  maddubs pairs of 32 values l and
 * 128 + 32 l summed (|.| <= 2 * 2 * 3 * 16 * 128 < 2^15), the scaled sums brought back by
 * arithmetic shifts of exact multiples, the four added, minus the bsums, stay inside int16.  Only
 * the lanes' total is meaningful (the bsums do not line up with the lanes), so it is formed
 * exactly, in integers, before any float rounding: a lane alone can be far larger than the sum. */
QGEMV_ALWAYS_INLINE __m256i tq_block_dot_q8_K(const __m256i t[8], const block_q8_K *y, const int scaled) {
    const __m256i *ay = (const __m256i *)y->qs;
#if defined(QGEMV_VNNI)
    /* vpdpbusd: 4 products into each int32 lane, the scaled vectors (4 t, 16 t) in chains of their
     * own, brought back by shifts of exact multiples */
    __m256i q[4];
    for (int l = 0; l < 4; l++)
        q[l] = qgemv_dpbusd_256(qgemv_dpbusd_256(_mm256_setzero_si256(), t[l], _mm256_loadu_si256(ay + l)),
                                   t[4 + l], _mm256_loadu_si256(ay + 4 + l));
    const __m256i q12 = scaled ? _mm256_add_epi32(_mm256_srai_epi32(q[1], 2), _mm256_srai_epi32(q[2], 4))
                               : _mm256_add_epi32(q[1], q[2]);
    const __m256i bsums = _mm256_loadu_si256((const __m256i *)y->bsums);
    return _mm256_sub_epi32(_mm256_add_epi32(_mm256_add_epi32(q[0], q[3]), q12), _mm256_madd_epi16(bsums, _mm256_set1_epi16(1)));
#else
    __m256i p[4];
    for (int l = 0; l < 4; l++)
        p[l] = _mm256_add_epi16(_mm256_maddubs_epi16(t[l], _mm256_loadu_si256(ay + l)),
                                _mm256_maddubs_epi16(t[4 + l], _mm256_loadu_si256(ay + 4 + l)));
    const __m256i p12 = scaled ? _mm256_srai_epi16(_mm256_add_epi16(p[1], _mm256_srai_epi16(p[2], 2)), 2)
                               : _mm256_add_epi16(p[1], p[2]);
    const __m256i bsums = _mm256_loadu_si256((const __m256i *)y->bsums);
    const __m256i s = _mm256_add_epi16(_mm256_add_epi16(p[0], p12), _mm256_sub_epi16(p[3], bsums));
    return _mm256_madd_epi16(s, _mm256_set1_epi16(1));
#endif
}

/* one row against CB <= 4 columns: sum_b d_x d_y isum_b, four blocks per step.  Each block's
 * trits are decoded once for all the columns; per column the integer totals are exact and the
 * float work is vec_dot's, in its order, whatever CB is: the tile gives vec_dot's bits. */
#define QGEMV_DEFINE_VEC_DOT_TQ_Q8_K(name, decode, scaled)                                 \
    QGEMV_ALWAYS_INLINE void tile_##name(int64_t nb, const block_##name *x, const uint8_t *a, \
                                         int64_t act_stride, const int CB, float *out) {   \
        const block_q8_K *y[4];                                                            \
        __m128 acc[4];                                                                     \
        float sum[4];                                                                      \
        for (int j = 0; j < CB; j++) {                                                     \
            y[j] = (const block_q8_K *)(a + j * act_stride);                               \
            acc[j] = _mm_setzero_ps();                                                     \
        }                                                                                  \
        int64_t ib = 0;                                                                    \
        for (; ib + 4 <= nb; ib += 4) {                                                    \
            __m256i p[4][4];                                                               \
            for (int q = 0; q < 4; q++) {                                                  \
                __m256i t[8];                                                              \
                decode(&x[ib + q], t);                                                     \
                for (int j = 0; j < CB; j++) p[j][q] = tq_block_dot_q8_K(t, &y[j][ib + q], scaled); \
            }                                                                              \
            const __m128 dx = qgemv_f16x4(x[ib].d, x[ib + 1].d, x[ib + 2].d, x[ib + 3].d); \
            for (int j = 0; j < CB; j++) {                                                 \
                const __m128i isum = qgemv_totals4_i32(p[j][0], p[j][1], p[j][2], p[j][3]); \
                const __m128 dy = _mm_setr_ps(y[j][ib].d, y[j][ib + 1].d, y[j][ib + 2].d, y[j][ib + 3].d); \
                acc[j] = _mm_fmadd_ps(_mm_mul_ps(dx, dy), _mm_cvtepi32_ps(isum), acc[j]);  \
            }                                                                              \
        }                                                                                  \
        for (int j = 0; j < CB; j++) {                                                     \
            const __m128 s = _mm_add_ps(acc[j], _mm_movehl_ps(acc[j], acc[j]));            \
            sum[j] = _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));                     \
        }                                                                                  \
        for (; ib < nb; ib++) {                                                            \
            __m256i t[8];                                                                  \
            decode(&x[ib], t);                                                             \
            for (int j = 0; j < CB; j++)                                                   \
                sum[j] += (float)qgemv_hsum_i32x8(tq_block_dot_q8_K(t, &y[j][ib], scaled)) * (_cvtsh_ss(x[ib].d) * y[j][ib].d); \
        }                                                                                  \
        for (int j = 0; j < CB; j++) out[j] = sum[j];                                      \
    }                                                                                      \
    /* vec_dot: the same arithmetic, four blocks per step, each decoded just before its dot \
     * (decoding all four first keeps 32 vectors live, which spill); written out rather than \
     * as the tile's CB = 1 case, which ran tq2_0 4% slower (C harness, 64-512 rows in L2) */ \
    static float vec_dot_##name##_q8_K(int64_t n, const void *restrict w, const void *restrict a) { \
        const block_##name *x = (const block_##name *)w;                                   \
        const block_q8_K *y = (const block_q8_K *)a;                                       \
        const int64_t nb = n / QK_K;                                                       \
        __m128 acc = _mm_setzero_ps();                                                     \
        int64_t ib = 0;                                                                    \
        for (; ib + 4 <= nb; ib += 4) {                                                    \
            QGEMV_PREFETCH_STREAM(&x[ib], 4 * sizeof(x[0]));                               \
            __m256i p[4];                                                                  \
            for (int q = 0; q < 4; q++) {                                                  \
                __m256i t[8];                                                              \
                decode(&x[ib + q], t);                                                     \
                p[q] = tq_block_dot_q8_K(t, &y[ib + q], scaled);                           \
            }                                                                              \
            const __m128i isum = qgemv_totals4_i32(p[0], p[1], p[2], p[3]);                \
            const __m128 dx = qgemv_f16x4(x[ib].d, x[ib + 1].d, x[ib + 2].d, x[ib + 3].d); \
            const __m128 dy = _mm_setr_ps(y[ib].d, y[ib + 1].d, y[ib + 2].d, y[ib + 3].d);  \
            acc = _mm_fmadd_ps(_mm_mul_ps(dx, dy), _mm_cvtepi32_ps(isum), acc);            \
        }                                                                                  \
        const __m128 s = _mm_add_ps(acc, _mm_movehl_ps(acc, acc));                         \
        float sum = _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));                      \
        for (; ib < nb; ib++) {                                                            \
            __m256i t[8];                                                                  \
            decode(&x[ib], t);                                                             \
            sum += (float)qgemv_hsum_i32x8(tq_block_dot_q8_K(t, &y[ib], scaled)) * (_cvtsh_ss(x[ib].d) * y[ib].d); \
        }                                                                                  \
        return sum;                                                                        \
    }                                                                                      \
    QGEMV_DEFINE_TILE_BY_COLS(name, q8_K, tile_##name, QK_K, 4)
#else
#define QGEMV_DEFINE_VEC_DOT_TQ_Q8_K(name, decode, scaled)                                 \
    static float vec_dot_##name##_q8_K(int64_t n, const void *restrict w, const void *restrict a) { \
        const block_##name *x = (const block_##name *)w;                                   \
        const block_q8_K *y = (const block_q8_K *)a;                                       \
        float sum = 0.0f;                                                                  \
        for (int64_t ib = 0; ib < n / QK_K; ib++) {                                        \
            int8_t q[QK_K];                                                                \
            unpack_##name##_ref(&x[ib], q);                                                \
            int32_t s = 0;                                                                 \
            for (int j = 0; j < QK_K; j++) s += q[j] * y[ib].qs[j];                        \
            sum += (float)s * (qgemv_fp16_to_fp32(x[ib].d) * y[ib].d);                     \
        }                                                                                  \
        return sum;                                                                        \
    }
#endif

/* tq1_0 -> tq2_0 (tq1_0's repack_as): the same t and d, t now in 2-bit fields, which decode in
 * two operations per 32 values instead of six */
static void repack_row_tq1_0_as_tq2_0(const void *restrict src, void *restrict dst, int64_t n) {
    const block_tq1_0 *x = (const block_tq1_0 *)src;
    block_tq2_0 *y = (block_tq2_0 *)dst;
    for (int64_t ib = 0; ib < n / QK_K; ib++) {
#if defined(QGEMV_AVX2)
        __m256i t[8];
        trits_tq1_0(&x[ib], t);
        pack_2bit(t, y[ib].qs);
#else
        int8_t q[QK_K];
        unpack_tq1_0_ref(&x[ib], q);
        pack_2bit_ref(q, y[ib].qs);
#endif
        y[ib].d = x[ib].d;
    }
}

QGEMV_DEFINE_DEQUANT_ROW_TQ(tq1_0)
QGEMV_DEFINE_DEQUANT_ROW_TQ(tq2_0)
QGEMV_DEFINE_VEC_DOT_TQ_Q8_K(tq1_0, trits_tq1_0, 0)
QGEMV_DEFINE_VEC_DOT_TQ_Q8_K(tq2_0, fields_tq2_0, 1)

/* the specialised tiles of this family (src/kernels.c puts them in the table) */
#if defined(QGEMV_AVX2)
#define QGEMV_TILES_TERNARY(X) X(tq1_0, q8_K) X(tq2_0, q8_K)
#else
#define QGEMV_TILES_TERNARY(X)   /* portable: the generic tiles (src/tiles.h) */
#endif
