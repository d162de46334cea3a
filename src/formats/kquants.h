/* The K-quants: q2_K, q3_K, q4_K, q5_K, q6_K (256-value super-blocks, q8_K activations).
 *
 * A super-block holds 256 values in sub-blocks of 16 (q2_K, q3_K, q6_K) or 32 (q4_K, q5_K),
 * each with a small integer scale sc_s (and minimum m_s), times the block's f16 d (and dmin):
 *     x = (d sc_s) q - (dmin m_s)         q2_K, q4_K, q5_K
 *     x = (d sc_s) q                      q3_K (q in [-4, 3]), q6_K (q in [-32, 31])
 * Each format is written once as
 *   scale_<name>(b) [, min_<name>(b)]   d (and dmin) as float,
 *   scales_<name>(b, sc, mn)            the integer sub-block scales (and minimums),
 *   unpack_<name>_ref(b, q)             its 256 integer levels, portable C,
 * and the portable row loops (dequant_row_<name>, vec_dot_<name>_q8_K) are written once
 * around them.  Against q8_K activations (a = d_y p, p int8, bsums = sums of each 16 p):
 *     sum = d_y d sum_s sc_s (sum_j q_j p_j) - d_y dmin sum_s m_s (sum of p over s)
 *
 * Design:
 * 1. Dequantize is the portable loop in every ISA build: levels are unpacked to int8, then
 *    each value takes exactly ggml's two roundings (dl * q, then - ml), which the compiler
 *    vectorizes with the same bits (no contraction: -ffp-contract=off).
 * 2. The AVX2 products keep every level unsigned so one maddubs (u8 x s8 -> s16) does the
 *    multiply: q3_K stores q + 4, q6_K q + 32; the offsets come back out once per
 *    super-block as 4 (or 32) sum_s sc_s bsums_s, from the q8_K partial sums.  The s16
 *    pair sums go through madd with the sub-block scale (s16 -> s32).  No saturation:
 *    levels <= 63, |p| <= 127.
 * 3. Products finish each super-block's integer sums exactly per row (the AVX2 madd lanes
 *    added up: values 4k..4k+3 of every 32 in lane k), then take one scalar fma per float
 *    term (d, and dmin for q2_K, q4_K, q5_K), in the same order on every ISA: every ISA and
 *    every batch size gives the same bits.  ggml folds the lanes into float lanes instead and
 *    adds them last; the horizontal sums slow qgemv's row-by-row products (AVX2's q3_K and
 *    q6_K batch tiles form them four columns at a time, qgemv_k_fold_columns), and the panels
 *    (superblocks_x16.h, the default where a variant has them) keep 16 rows in lanes and
 *    need none.
 * 4. Byte layouts (ggml-common.h) assume a little-endian host, as ggml does.
 */

/* the 4 little-endian 32-bit words of a 12-byte packed-scales field (3 of them) */
static inline uint32_t qgemv_k_word(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

/* ---------------------------------------------------------------- q2_K: x = d sc q - dmin m, 16 per scale */
static inline float scale_q2_K(const block_q2_K *b) { return qgemv_fp16_to_fp32(b->d); }
static inline float min_q2_K(const block_q2_K *b) { return qgemv_fp16_to_fp32(b->dmin); }
static inline void scales_q2_K(const block_q2_K *b, int16_t sc[16], int16_t mn[16]) {
    for (int s = 0; s < 16; s++) { sc[s] = b->scales[s] & 0x0f; mn[s] = b->scales[s] >> 4; }
}
/* value 128 h + 32 j + l is bits 2j..2j+1 of qs[32 h + l] */
static inline void unpack_q2_K_ref(const block_q2_K *b, int8_t q[QK_K]) {
    for (int h = 0; h < 2; h++)
        for (int j = 0; j < 4; j++)
            for (int l = 0; l < 32; l++) q[128 * h + 32 * j + l] = (int8_t)((b->qs[32 * h + l] >> (2 * j)) & 3);
}

/* ---------------------------------------------------------------- q3_K: x = d (sc - 32) q, 16 per scale */
static inline float scale_q3_K(const block_q3_K *b) { return qgemv_fp16_to_fp32(b->d); }
static inline float min_q3_K(const block_q3_K *b) { (void)b; return 0.0f; }
/* 16 6-bit scales: low 4 bits in bytes 0-7 (low nibbles: 0-7, high nibbles: 8-15),
 * high 2 bits in bytes 8-11 (bits 2k..2k+1 of byte 8 + i%4 for scale i = 4k + i%4) */
static inline void scales_q3_K_bytes(const block_q3_K *b, int8_t out[16]) {
    const uint32_t s0 = qgemv_k_word(b->scales), s1 = qgemv_k_word(b->scales + 4),
                   s2 = qgemv_k_word(b->scales + 8);
    const uint32_t w[4] = {
        (s0 & 0x0f0f0f0f) | ((s2 & 0x03030303) << 4),
        (s1 & 0x0f0f0f0f) | (((s2 >> 2) & 0x03030303) << 4),
        ((s0 >> 4) & 0x0f0f0f0f) | (((s2 >> 4) & 0x03030303) << 4),
        ((s1 >> 4) & 0x0f0f0f0f) | (((s2 >> 6) & 0x03030303) << 4),
    };
    memcpy(out, w, 16);
    for (int s = 0; s < 16; s++) out[s] = (int8_t)(out[s] - 32);
}
static inline void scales_q3_K(const block_q3_K *b, int16_t sc[16], int16_t mn[16]) {
    int8_t s8[16];
    scales_q3_K_bytes(b, s8);
    for (int s = 0; s < 16; s++) { sc[s] = s8[s]; mn[s] = 0; }
}
/* value 128 h + 32 j + l: bits 2j..2j+1 of qs[32 h + l], minus 4 unless bit 4h + j of hmask[l] */
static inline void unpack_q3_K_ref(const block_q3_K *b, int8_t q[QK_K]) {
    for (int h = 0; h < 2; h++)
        for (int j = 0; j < 4; j++)
            for (int l = 0; l < 32; l++)
                q[128 * h + 32 * j + l] = (int8_t)(((b->qs[32 * h + l] >> (2 * j)) & 3)
                                                   - ((b->hmask[l] >> (4 * h + j)) & 1 ? 0 : 4));
}

/* ---------------------------------------------------------------- q4_K: x = d sc q - dmin m, 32 per scale */
/* 8 6-bit scales and 8 6-bit mins in 12 bytes (ggml's get_scale_min_k4), as 8 bytes each */
static inline void scale_min_k4(const uint8_t packed[K_SCALE_SIZE], uint8_t sc[8], uint8_t mn[8]) {
    const uint32_t s0 = qgemv_k_word(packed), s1 = qgemv_k_word(packed + 4), s2 = qgemv_k_word(packed + 8);
    const uint32_t w_sc[2] = {s0 & 0x3f3f3f3f, (s2 & 0x0f0f0f0f) | ((s0 >> 2) & 0x30303030)};
    const uint32_t w_mn[2] = {s1 & 0x3f3f3f3f, ((s2 >> 4) & 0x0f0f0f0f) | ((s1 >> 2) & 0x30303030)};
    memcpy(sc, w_sc, 8);
    memcpy(mn, w_mn, 8);
}
/* the same, widened to int16 (the sub-block scales and mins of q4_K and q5_K) */
static inline void scale_min_k4_i16(const uint8_t packed[K_SCALE_SIZE], int16_t sc[8], int16_t mn[8]) {
    uint8_t s8[8], m8[8];
    scale_min_k4(packed, s8, m8);
    for (int s = 0; s < 8; s++) { sc[s] = s8[s]; mn[s] = m8[s]; }
}
static inline float scale_q4_K(const block_q4_K *b) { return qgemv_fp16_to_fp32(b->d); }
static inline float min_q4_K(const block_q4_K *b) { return qgemv_fp16_to_fp32(b->dmin); }
static inline void scales_q4_K(const block_q4_K *b, int16_t sc[8], int16_t mn[8]) {
    scale_min_k4_i16(b->scales, sc, mn);
}
/* value 64 c + l is the low nibble of qs[32 c + l], value 64 c + 32 + l its high nibble */
static inline void unpack_q4_K_ref(const block_q4_K *b, int8_t q[QK_K]) {
    for (int c = 0; c < 4; c++)
        for (int l = 0; l < 32; l++) {
            q[64 * c + l] = (int8_t)(b->qs[32 * c + l] & 0x0f);
            q[64 * c + 32 + l] = (int8_t)(b->qs[32 * c + l] >> 4);
        }
}

/* ---------------------------------------------------------------- q5_K: x = d sc q - dmin m, 32 per scale */
static inline float scale_q5_K(const block_q5_K *b) { return qgemv_fp16_to_fp32(b->d); }
static inline float min_q5_K(const block_q5_K *b) { return qgemv_fp16_to_fp32(b->dmin); }
static inline void scales_q5_K(const block_q5_K *b, int16_t sc[8], int16_t mn[8]) {
    scale_min_k4_i16(b->scales, sc, mn);
}
/* as q4_K, plus the 5th bit of value 32 s + l in bit s of qh[l] */
static inline void unpack_q5_K_ref(const block_q5_K *b, int8_t q[QK_K]) {
    for (int c = 0; c < 4; c++)
        for (int l = 0; l < 32; l++) {
            q[64 * c + l] = (int8_t)((b->qs[32 * c + l] & 0x0f) | (((b->qh[l] >> (2 * c)) & 1) << 4));
            q[64 * c + 32 + l] = (int8_t)((b->qs[32 * c + l] >> 4) | (((b->qh[l] >> (2 * c + 1)) & 1) << 4));
        }
}

/* ---------------------------------------------------------------- q6_K: x = d sc (q - 32), 16 per scale */
static inline float scale_q6_K(const block_q6_K *b) { return qgemv_fp16_to_fp32(b->d); }
static inline float min_q6_K(const block_q6_K *b) { (void)b; return 0.0f; }
static inline void scales_q6_K(const block_q6_K *b, int16_t sc[16], int16_t mn[16]) {
    for (int s = 0; s < 16; s++) { sc[s] = b->scales[s]; mn[s] = 0; }
}
/* value 128 h + 32 j + l: a nibble of ql[64 h + 32 (j & 1) + l] (high one for j >= 2)
 * below bits 2j..2j+1 of qh[32 h + l] */
static inline void unpack_q6_K_ref(const block_q6_K *b, int8_t q[QK_K]) {
    for (int h = 0; h < 2; h++)
        for (int j = 0; j < 4; j++)
            for (int l = 0; l < 32; l++) {
                const uint8_t lo = b->ql[64 * h + 32 * (j & 1) + l] >> (4 * (j >> 1)) & 0x0f;
                const uint8_t hi = (b->qh[32 * h + l] >> (2 * j)) & 3;
                q[128 * h + 32 * j + l] = (int8_t)((lo | hi << 4) - 32);
            }
}

/* ---------------------------------------------------------------- the portable loops, once */

/* x = dl q - ml with dl = d sc_s, ml = dmin m_s: ggml's roundings, in its order */
#define QGEMV_DEFINE_DEQUANT_ROW_K(name, sub, has_min)                                     \
    static void dequant_row_##name(const void *restrict src, float *restrict dst, int64_t n) { \
        const block_##name *x = (const block_##name *)src;                                 \
        for (int64_t ib = 0; ib < n / QK_K; ib++, dst += QK_K) {                           \
            int8_t q[QK_K];                                                                \
            int16_t sc[16], mn[16];                                                        \
            unpack_##name##_ref(&x[ib], q);                                                \
            scales_##name(&x[ib], sc, mn);                                                 \
            const float d = scale_##name(&x[ib]), dmin = min_##name(&x[ib]);               \
            for (int s = 0; s < QK_K / (sub); s++) {                                       \
                const float dl = d * (float)sc[s];                                         \
                const float ml = dmin * (float)mn[s];                                      \
                float *y = dst + (sub) * s;                                                \
                const int8_t *qs = q + (sub) * s;                                          \
                if (has_min)                                                               \
                    for (int j = 0; j < (sub); j++) y[j] = dl * (float)qs[j] - ml;         \
                else                                                                       \
                    for (int j = 0; j < (sub); j++) y[j] = dl * (float)qs[j];              \
            }                                                                              \
        }                                                                                  \
    }

QGEMV_DEFINE_DEQUANT_ROW_K(q4_K, 32, 1)
QGEMV_DEFINE_DEQUANT_ROW_K(q5_K, 32, 1)
#if !defined(QGEMV_AVX2)   /* AVX2: from the products' level vectors, below */
QGEMV_DEFINE_DEQUANT_ROW_K(q2_K, 16, 1)
QGEMV_DEFINE_DEQUANT_ROW_K(q3_K, 16, 0)
QGEMV_DEFINE_DEQUANT_ROW_K(q6_K, 16, 0)
#endif

#if !defined(QGEMV_AVX2)
/* The portable products, once: per super-block the exact integer sums
 *     isum = sum_s sc_s sum_{i in s} q_i p_i,     msum = sum_s m_s (p summed over s),
 * then acc = fma(d_y d, isum, acc) and acc = fma(-(d_y dmin), msum, acc) (q3_K and q6_K have no
 * minimums: that fma adds -0, which leaves acc as it is).  Every ISA's product is these bits,
 * whatever the layout (the AVX2 kernels' horizontal sums, superblocks_x16.h's panels lane by
 * lane).  sub: values per sub-block. */
#define QGEMV_DEFINE_VEC_DOT_K(name, sub)                                                  \
    static float vec_dot_##name##_q8_K(int64_t n, const void *restrict w, const void *restrict a) { \
        const block_##name *x = (const block_##name *)w;                                   \
        const block_q8_K *y = (const block_q8_K *)a;                                       \
        float acc = 0.0f;                                                                  \
        for (int64_t ib = 0; ib < n / QK_K; ib++) {                                        \
            int8_t q[QK_K];                                                                \
            int16_t sc[16], mn[16];                                                        \
            unpack_##name##_ref(&x[ib], q);                                                \
            scales_##name(&x[ib], sc, mn);                                                 \
            int32_t is = 0, ms = 0;                                                        \
            for (int i = 0; i < QK_K; i++) is += sc[i / (sub)] * q[i] * y[ib].qs[i];       \
            for (int i = 0; i < QK_K / 16; i++) ms += mn[i * 16 / (sub)] * y[ib].bsums[i];  \
            acc = fmaf(y[ib].d * scale_##name(&x[ib]), (float)is, acc);                    \
            acc = fmaf(-(y[ib].d * min_##name(&x[ib])), (float)ms, acc);                   \
        }                                                                                  \
        return acc;                                                                        \
    }
QGEMV_DEFINE_VEC_DOT_K(q2_K, 16)
QGEMV_DEFINE_VEC_DOT_K(q3_K, 16)
QGEMV_DEFINE_VEC_DOT_K(q4_K, 32)
QGEMV_DEFINE_VEC_DOT_K(q5_K, 32)
QGEMV_DEFINE_VEC_DOT_K(q6_K, 16)
#define QGEMV_TILES_KQUANTS(X)   /* portable: the generic tiles (src/tiles.h) */
#else

/* ---------------------------------------------------------------- AVX2 products */

/* f16 -> f32 with F16C (exact, as qgemv_fp16_to_fp32) */
static inline float qgemv_k_half(qgemv_half h) { return _cvtsh_ss(h); }

/* a super-block's fma per column, acc[j] = fma(d_y,j dx, (float) total of lanes[j], acc[j]), the
 * exact totals four columns at a time (qgemv_totals4_i32), one column by its own horizontal sum:
 * the AVX2 batch tiles of q3_K and q6_K (a GEMV gathering 4 super-blocks this way ran slower:
 * q3_K 0.82 -> 0.97 ms on Zen 3) */
QGEMV_ALWAYS_INLINE void qgemv_k_fold_columns(const __m256i *lanes, const int CB, const block_q8_K *const *y, int64_t ib,
                                              float dx, float *acc) {
    if (CB == 1) {
        acc[0] = qgemv_fma_total_i32x8(y[0][ib].d * dx, lanes[0], acc[0]);
        return;
    }
    const __m256i z = _mm256_setzero_si256();
    for (int j0 = 0; j0 < CB; j0 += 4) {
        float s[4];
        _mm_storeu_ps(s, _mm_cvtepi32_ps(qgemv_totals4_i32(lanes[j0], j0 + 1 < CB ? lanes[j0 + 1] : z,
                                                           j0 + 2 < CB ? lanes[j0 + 2] : z, j0 + 3 < CB ? lanes[j0 + 3] : z)));
        for (int j = j0; j < CB && j < j0 + 4; j++) acc[j] = fmaf(y[j][ib].d * dx, s[j - j0], acc[j]);
    }
}

/* acc + sum_j sc_j u_j p_j in 8 lanes: u8 levels x s8 activations, pairs summed to s16 (maddubs),
 * then times the s16 scales, pairs summed to s32 and added (qgemv_madd_acc) */
static inline __m256i qgemv_k_dot_scaled_acc(__m256i acc, __m256i u, const int8_t *p, __m256i sc16) {
    return qgemv_madd_acc(acc, _mm256_maddubs_epi16(u, _mm256_loadu_si256((const __m256i *)p)), sc16);
}

/* Scale vectors for 16-value sub-blocks: 32 values = sub-blocks 2k (low 128-bit lane) and
 * 2k + 1 (high lane).  sc16 holds the 16 scales as s16; k selects a pair of them. */
typedef struct { __m256i lo, hi; } qgemv_k_scales16;
static inline qgemv_k_scales16 qgemv_k_scales16_from(__m256i sc16) {
    const qgemv_k_scales16 r = {_mm256_permute2x128_si256(sc16, sc16, 0x00),
                                _mm256_permute2x128_si256(sc16, sc16, 0x11)};
    return r;
}
static inline __m256i qgemv_k_scale_pair(qgemv_k_scales16 s, int k) {
    /* s16 element 2(k%4) across the low lane, 2(k%4) + 1 across the high lane */
    const int e = 2 * (k & 3);
    const __m256i mask = _mm256_setr_epi8(
        2 * e, 2 * e + 1, 2 * e, 2 * e + 1, 2 * e, 2 * e + 1, 2 * e, 2 * e + 1,
        2 * e, 2 * e + 1, 2 * e, 2 * e + 1, 2 * e, 2 * e + 1, 2 * e, 2 * e + 1,
        2 * e + 2, 2 * e + 3, 2 * e + 2, 2 * e + 3, 2 * e + 2, 2 * e + 3, 2 * e + 2, 2 * e + 3,
        2 * e + 2, 2 * e + 3, 2 * e + 2, 2 * e + 3, 2 * e + 2, 2 * e + 3, 2 * e + 2, 2 * e + 3);
    return _mm256_shuffle_epi8(k < 4 ? s.lo : s.hi, mask);
}
static inline __m256i qgemv_k_bsums(const block_q8_K *y) {
    return _mm256_loadu_si256((const __m256i *)y->bsums);
}
/* the 16-value partial sums of q8_K added in pairs: the 8 sums of 32 values, as s16 */
static inline __m128i qgemv_k_bsums32(const block_q8_K *y) {
    const __m256i b = qgemv_k_bsums(y);
    return _mm_hadd_epi16(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
}
/* bit `bit` of each byte moved to bit `to` (the rest cleared) */
#define QGEMV_K_BIT_TO(v, bit, to)                                                         \
    _mm256_and_si256((bit) >= (to) ? _mm256_srli_epi16(v, (bit) - (to)) : _mm256_slli_epi16(v, (to) - (bit)), \
                     _mm256_set1_epi8(1 << (to)))

/* the 2-bit field m (bits 2 m, 2 m + 1) of each byte: q2_K's levels of values 32 m .. 32 m + 31 of
 * a 128-value half, and the low bits of q3_K's */
QGEMV_ALWAYS_INLINE __m256i qgemv_k_low2(__m256i bits, int m) {
    return _mm256_and_si256(m ? _mm256_srli_epi16(bits, 2 * m) : bits, _mm256_set1_epi8(3));
}
/* q3_K's levels u = q + 4 of values 32 k .. 32 k + 31: the 2 low bits from qs, bit 2 from hmask bit k */
QGEMV_ALWAYS_INLINE __m256i qgemv_k3_levels(__m256i bits, __m256i hbits, int k) {
    return _mm256_or_si256(qgemv_k_low2(bits, k % 4), QGEMV_K_BIT_TO(hbits, k, 2));
}

/* scales_q3_K_bytes in SIMD (no round trip through memory): the 16 scales minus 32, as s8 */
static inline __m128i qgemv_k3_scales(const uint8_t packed[12]) {
    const __m128i lo8 = _mm_loadl_epi64((const __m128i *)packed);
    const __m128i hi4 = _mm_cvtsi32_si128((int)qgemv_k_word(packed + 8));
    const __m128i low = _mm_and_si128(_mm_unpacklo_epi64(lo8, _mm_srli_epi16(lo8, 4)), _mm_set1_epi8(0x0f));
    const __m128i high = _mm_and_si128(_mm_srlv_epi32(_mm_shuffle_epi32(hi4, 0), _mm_setr_epi32(0, 2, 4, 6)),
                                       _mm_set1_epi8(3));
    return _mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(high, 4)), _mm_set1_epi8(32));
}

/* q3_K's and q6_K's row products from lanes(block, y), a super-block's exact sums in 8 lanes:
 * vec_dot_<name>_q8_K (per super-block the horizontal total and the portable vec_dot's fma; its
 * hints chosen once a row, QGEMV_VEC_DOT_BY_HINTS) and, on a CPU whose prefetcher streams alone
 * (qgemv_prefetch_one_column off: a Zen 4), the single column two rows at a time: each row's
 * super-block as vec_dot takes it, both rows' totals at once and one fma on two lanes, lane r
 * fma(d_y d_r, isum_r, acc_r): the portable vec_dot's bits, where a row alone pays a horizontal
 * sum per super-block.  The rows are the 2 streams of qgemv_walk_of's
 * single column (src/tiles.h).  Zen 4, QGEMV_ISA=avx2, 4096 x 4096, medians of 6-8 processes
 * a build, builds alternating: q6_K 1 / 2 threads 0.552 -> 0.534 / 0.288 -> 0.262 ms (ggml's
 * 0.49 / 0.25), q3_K 1 thread 0.599 -> 0.561 (ggml's 0.59); 1024 x 4096 q6_K 0.139 -> 0.126,
 * q3_K 0.151 -> 0.142; 4 rows ran 0.59 (4 streams, their sums on the stack), 4 super-blocks of
 * a row gathered 0.54-0.60.  Out of cache the two streams ran slower than one row after another
 * (14336 x 4096: q6_K 2.0 -> 2.9 ms, so QMatrix keeps those rows, qgemv/qmatrix.py), and with the
 * hints on (QGEMV_GEMV_PREFETCH=1, where an Intel Xeon's tiles take them out of cache) q3_K 2.08
 * -> 2.38: such CPUs keep vec_dot row after row.  The walk stays out of its caller's tile
 * (inlined there, q6_K ran 0.52-0.53 ms against 0.50-0.52: within this host's noise); the
 * accumulator stays in its register (GCC had kept it on the stack, a store an iteration): q6_K
 * against the one-row build, 8 processes each, 0.558 -> 0.540 ms, where the stack's version ran
 * 0.547 -> 0.538 */
#define QGEMV_DEFINE_K_ROW_PRODUCTS(name, lanes)                                           \
    /* vec_dot: a row's super-blocks in turn, one fma each; its hints chosen once */       \
    QGEMV_ALWAYS_INLINE float vec_dot_row_##name##_q8_K(int64_t n, const void *restrict w, const void *restrict a, \
                                                        const int hints) {                 \
        const block_##name *x = (const block_##name *)w;                                   \
        const block_q8_K *y = (const block_q8_K *)a;                                       \
        float acc = 0.0f;                                                                  \
        for (int64_t ib = 0; ib < n / QK_K; ib++) {                                        \
            if (hints) QGEMV_PREFETCH_STREAM(&x[ib], sizeof(x[0]));                        \
            acc = qgemv_fma_total_i32x8(y[ib].d * qgemv_k_half(x[ib].d), lanes(&x[ib], &y[ib]), acc); \
        }                                                                                  \
        return acc;                                                                        \
    }                                                                                      \
    QGEMV_VEC_DOT_BY_HINTS(name, q8_K)                                                     \
    QGEMV_ALWAYS_INLINE void rows2_##name(int64_t nb, const block_##name *x0, const block_##name *x1, \
                                          const block_q8_K *y, float *o0, float *o1) {     \
        __m128 acc = _mm_setzero_ps();                                                     \
        for (int64_t ib = 0; ib < nb; ib++) {                                              \
            const __m256i s0 = lanes(&x0[ib], &y[ib]), s1 = lanes(&x1[ib], &y[ib]);        \
            const __m256i p = _mm256_add_epi32(_mm256_unpacklo_epi32(s0, s1), _mm256_unpackhi_epi32(s0, s1)); \
            const __m128i q = _mm_add_epi32(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1)); \
            const __m128 t = _mm_cvtepi32_ps(_mm_add_epi32(q, _mm_unpackhi_epi64(q, q)));   /* lane r: isum_r */ \
            const __m128 d = _mm_cvtph_ps(_mm_cvtsi32_si128((int)((uint32_t)x0[ib].d | (uint32_t)x1[ib].d << 16))); \
            acc = _mm_fmadd_ps(_mm_mul_ps(_mm_set1_ps(y[ib].d), d), t, acc);               \
            QGEMV_IN_REGISTER(acc);                                                        \
        }                                                                                  \
        *o0 = _mm_cvtss_f32(acc);                                                          \
        *o1 = _mm_cvtss_f32(_mm_movehdup_ps(acc));                                         \
    }                                                                                      \
    QGEMV_NEVER_INLINE void gemv_rows2_##name(int64_t n, const void *restrict w, int64_t row_stride, int64_t nrows, \
                                  const void *restrict a, float *restrict out, int64_t out_stride) { \
        const qgemv_walk walk = qgemv_walk_of(nrows, 2, 1, 2);                             \
        for (int64_t r = 0; r < walk.steps; r += walk.step) {                              \
            const block_##name *x0 = (const block_##name *)((const uint8_t *)w + r * row_stride); \
            const int two = qgemv_walk_items(nrows, r, walk) == 2;   /* else the last row twice */ \
            float o1;                                                                      \
            rows2_##name(n / QK_K, x0, two ? (const block_##name *)((const uint8_t *)w + (r + walk.stride) * row_stride) : x0, \
                         (const block_q8_K *)a, out + r * out_stride, two ? out + (r + walk.stride) * out_stride : &o1); \
        }                                                                                  \
    }
/* QGEMV_DEFINE_TILE_BY_COLS_WITH's one-column statement for them */
#define QGEMV_K_ROWS2_ONE_COLUMN(name, act, n, w, row_stride, nrows, a, ncols, out, out_stride) \
    if ((ncols) == 1 && !qgemv_prefetch_one_column) {                                      \
        gemv_rows2_##name((n), (w), (row_stride), (nrows), (a), (out), (out_stride));       \
        return;                                                                            \
    }                                                                                      \
    QGEMV_TILE_ONE_COLUMN_OF(name, act, n, w, row_stride, nrows, a, ncols, out, out_stride)

/* q3_K: levels stored as u = q + 4 in [0, 7]; sum_s sc_s sum q p = sum_s sc_s (sum u p - 4 bsum_s),
 * a super-block's exact sums in 8 lanes, two chains each kept in its register as it goes */
QGEMV_ALWAYS_INLINE __m256i k3_lanes(const block_q3_K *b, const block_q8_K *y) {
    const __m256i sc16 = _mm256_cvtepi8_epi16(qgemv_k3_scales(b->scales));
    const qgemv_k_scales16 sc = qgemv_k_scales16_from(sc16);
    const __m256i hbits = _mm256_loadu_si256((const __m256i *)b->hmask);
    /* start from minus the offset, 4 sum_s sc_s bsum_s */
    __m256i sum0 = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(sc16, qgemv_k_bsums(y)), 2));
    __m256i sum1 = _mm256_setzero_si256();
    for (int h = 0; h < 2; h++) {
        const __m256i bits = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * h));
        for (int m = 0; m < 4; m++) {
            const int k = 4 * h + m;
            const __m256i u = qgemv_k3_levels(bits, hbits, k), s = qgemv_k_scale_pair(sc, k);
            if (m % 2 == 0) sum0 = qgemv_k_dot_scaled_acc(sum0, u, y->qs + 32 * k, s);
            else sum1 = qgemv_k_dot_scaled_acc(sum1, u, y->qs + 32 * k, s);
            QGEMV_IN_REGISTER(sum0);
            QGEMV_IN_REGISTER(sum1);
        }
    }
    return _mm256_add_epi32(sum0, sum1);
}

/* q3_K's batch tile: one row against CB <= 8 columns, a super-block's 256 levels and 16 scales
 * decoded once for all of them; per column the lanes' integer sums are exact and its float work
 * is vec_dot's one fma per super-block, so every column gets vec_dot's bits.  vec_dot stays
 * written out above (its levels never leave registers), as q2_K's */
QGEMV_ALWAYS_INLINE void tile_k3(int64_t nb, const block_q3_K *x, const uint8_t *a, int64_t act_stride,
                                 const int CB, float *out) {
    const block_q8_K *y[QGEMV_TILE_COLS_MAX];
    float acc[QGEMV_TILE_COLS_MAX];
    for (int j = 0; j < CB; j++) {
        y[j] = (const block_q8_K *)(a + j * act_stride);
        acc[j] = 0.0f;
    }
    for (int64_t ib = 0; ib < nb; ib++) {
        QGEMV_PREFETCH_COLS_STREAM(&x[ib], sizeof(x[0]), CB);
        const __m256i sc16 = _mm256_cvtepi8_epi16(qgemv_k3_scales(x[ib].scales));
        const qgemv_k_scales16 sc = qgemv_k_scales16_from(sc16);
        const __m256i hbits = _mm256_loadu_si256((const __m256i *)x[ib].hmask);
        const float dx = qgemv_k_half(x[ib].d);
        __m256i lanes[QGEMV_TILE_COLS_MAX];
        for (int j = 0; j < CB; j++)   /* start from minus the offset, 4 sum_s sc_s bsum_s */
            lanes[j] = _mm256_sub_epi32(_mm256_setzero_si256(),
                                        _mm256_slli_epi32(_mm256_madd_epi16(sc16, qgemv_k_bsums(&y[j][ib])), 2));
        /* the levels of values 32 k .. 32 k + 31 and their scale pair, then every column's
         * products with them: 8 levels vectors and 8 scale pairs live across the columns took
         * every register, and GCC stored each product to the stack (Zen 4, QGEMV_ISA=avx2, 4096
         * x 4096, 2 threads, batch 8 1.50 -> 1.20 ms, batch 32 6.06 -> 4.98) */
        for (int h = 0; h < 2; h++) {
            const __m256i bits = _mm256_loadu_si256((const __m256i *)(x[ib].qs + 32 * h));
            for (int m = 0; m < 4; m++) {
                const int k = 4 * h + m;
                const __m256i u = qgemv_k3_levels(bits, hbits, k), s = qgemv_k_scale_pair(sc, k);
                for (int j = 0; j < CB; j++)
                    lanes[j] = qgemv_k_dot_scaled_acc(lanes[j], u, y[j][ib].qs + 32 * k, s);
            }
        }
        qgemv_k_fold_columns(lanes, CB, y, ib, dx, acc);
    }
    for (int j = 0; j < CB; j++) out[j] = acc[j];
}
QGEMV_DEFINE_K_ROW_PRODUCTS(q3_K, k3_lanes)
QGEMV_DEFINE_TILE_BY_COLS_WITH(q3_K, q8_K, tile_k3, QK_K, 8, QGEMV_K_ROWS2_ONE_COLUMN)

/* scale_min_k4 in SIMD: the 8 scales and 8 mins of q4_K / q5_K as the bytes
 * [sc0..3, mn0..3, sc4..7, mn4..7] (the 16-byte load reads 4 bytes of qs too: ignored) */
static inline __m128i qgemv_k4_scales_mins(const uint8_t packed[K_SCALE_SIZE]) {
    const __m128i v = _mm_loadu_si128((const __m128i *)packed);
    const __m128i low6 = _mm_and_si128(v, _mm_setr_epi32(0x3f3f3f3f, 0x3f3f3f3f, 0, 0));
    const __m128i s2 = _mm_srlv_epi32(_mm_shuffle_epi32(v, _MM_SHUFFLE(2, 2, 0, 0)), _mm_setr_epi32(0, 0, 0, 4));
    const __m128i low4 = _mm_and_si128(s2, _mm_setr_epi32(0, 0, 0x0f0f0f0f, 0x0f0f0f0f));
    const __m128i top2 = _mm_and_si128(_mm_srli_epi32(_mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 0, 0)), 2),
                                       _mm_setr_epi32(0, 0, 0x30303030, 0x30303030));
    return _mm_or_si128(low6, _mm_or_si128(low4, top2));
}
/* sub-block s's scale (byte s, or s + 4 for s >= 4, of the above) as s16 in every lane */
static inline __m256i qgemv_k4_scale(__m256i scales_mins, int s) {
    const int byte = s < 4 ? s : s + 4;
    return _mm256_shuffle_epi8(scales_mins, _mm256_set1_epi16((short)(byte | 0x8000)));
}
/* q5_K's 5th bits (its qh; q4_K has none) */
static inline __m256i qgemv_k4_hbits_q4_K(const block_q4_K *b) { (void)b; return _mm256_setzero_si256(); }
static inline __m256i qgemv_k4_hbits_q5_K(const block_q5_K *b) { return _mm256_loadu_si256((const __m256i *)b->qh); }
/* q4_K's / q5_K's levels of sub-blocks 2 c (u[0], values 64 c .. 64 c + 31: the low nibbles of qs
 * 32 c ..) and 2 c + 1 (u[1]: the high nibbles), q5_K's 5th bit from hbits (its qh) where high */
QGEMV_ALWAYS_INLINE void qgemv_k4_levels(const uint8_t *qs, __m256i hbits, int c, const int high, __m256i u[2]) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const __m256i bits = _mm256_loadu_si256((const __m256i *)(qs + 32 * c));
    u[0] = _mm256_and_si256(bits, low4);
    u[1] = _mm256_and_si256(_mm256_srli_epi16(bits, 4), low4);
    if (high) {
        u[0] = _mm256_or_si256(u[0], QGEMV_K_BIT_TO(hbits, 2 * c, 4));
        u[1] = _mm256_or_si256(u[1], QGEMV_K_BIT_TO(hbits, 2 * c + 1, 4));
    }
}


/* q2_K in 8 lanes (see the portable vec_dot_q2_K_q8_K): per super-block, the scale bytes are
 * broadcast to both 128-bit lanes and each 32 values' pair of scales is one shuffle that also
 * zero-extends them to s16; d_y d and d_y dmin come from one f16x2 conversion */
static inline __m256i qgemv_q2_K_scale_pair(__m256i scale_bytes, int k) {
    const char e = (char)(2 * k), f = (char)(2 * k + 1), z = (char)0x80;
    return _mm256_shuffle_epi8(scale_bytes, _mm256_setr_epi8(e, z, e, z, e, z, e, z, e, z, e, z, e, z, e, z,
                                                             f, z, f, z, f, z, f, z, f, z, f, z, f, z, f, z));
}
/* a super-block's (d, dmin) in lanes 0 and 1 (adjacent f16 fields, one conversion), its 16
 * scales broadcast to both 128-bit lanes (for qgemv_q2_K_scale_pair) and its 16 mins as s16 */
static inline __m128 qgemv_q2_K_scales(const block_q2_K *b, __m256i *scale_bytes, __m256i *mins16) {
    const __m128i low4 = _mm_set1_epi8(0x0f), packed = _mm_loadu_si128((const __m128i *)b->scales);
    *scale_bytes = _mm256_broadcastsi128_si256(_mm_and_si128(packed, low4));
    *mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), low4));
    return _mm_cvtph_ps(_mm_cvtsi32_si128((int)qgemv_k_word((const uint8_t *)&b->d)));
}
/* q2_K's float work per super-block and column, from its integer lanes isum (sum sc q p), msum
 * (sum m bsum) and dm = (d_y d, d_y dmin): the lanes added up exactly, then two scalar fmas, the
 * portable vec_dot's (and the panels') arithmetic */
static inline float qgemv_k2_step(float acc, __m128 dm, __m256i isum, __m256i msum) {
    acc = qgemv_fma_total_i32x8(_mm_cvtss_f32(dm), isum, acc);
    return qgemv_fma_total_i32x8(-_mm_cvtss_f32(_mm_movehdup_ps(dm)), msum, acc);
}
static float vec_dot_q2_K_q8_K(int64_t n, const void *restrict w, const void *restrict a) {
    const block_q2_K *x = (const block_q2_K *)w;
    const block_q8_K *y = (const block_q8_K *)a;
    float acc = 0.0f;
    for (int64_t ib = 0; ib < n / QK_K; ib++) {
        QGEMV_PREFETCH_STREAM(x + ib, sizeof(x[0]));
        __m256i scale_bytes, mins16;
        /* (d_y d, d_y dmin) */
        const __m128 dm = _mm_mul_ps(qgemv_q2_K_scales(&x[ib], &scale_bytes, &mins16), _mm_set1_ps(y[ib].d));
        const __m256i msum = _mm256_madd_epi16(mins16, qgemv_k_bsums(&y[ib]));
        __m256i sum0 = _mm256_setzero_si256(), sum1 = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            const __m256i bits = _mm256_loadu_si256((const __m256i *)(x[ib].qs + 32 * h));
            const int8_t *p = y[ib].qs + 128 * h;
            for (int j = 0; j < 4; j += 2) {
                const __m256i u0 = qgemv_k_low2(bits, j), u1 = qgemv_k_low2(bits, j + 1);
                sum0 = qgemv_k_dot_scaled_acc(sum0, u0, p + 32 * j, qgemv_q2_K_scale_pair(scale_bytes, 4 * h + j));
                sum1 = qgemv_k_dot_scaled_acc(sum1, u1, p + 32 * j + 32, qgemv_q2_K_scale_pair(scale_bytes, 4 * h + j + 1));
            }
        }
        acc = qgemv_k2_step(acc, dm, _mm256_add_epi32(sum0, sum1), msum);
    }
    return acc;
}

/* q2_K's batch tile: one row against CB <= 8 columns, a super-block's levels and scale pairs
 * decoded once for all of them; per column its lanes' integer sums are exact and its float work
 * is vec_dot's two fmas per super-block, so every column gets vec_dot's bits.  vec_dot stays
 * written out above: as this kernel's CB = 1 case it ran a GEMV 10-20% slower (the decoded
 * arrays spill) */
QGEMV_ALWAYS_INLINE void tile_k2(int64_t nb, const block_q2_K *x, const uint8_t *a, int64_t act_stride,
                                 const int CB, float *out) {
    const block_q8_K *y[QGEMV_TILE_COLS_MAX];
    float acc[QGEMV_TILE_COLS_MAX];
    for (int j = 0; j < CB; j++) {
        y[j] = (const block_q8_K *)(a + j * act_stride);
        acc[j] = 0.0f;
    }
    for (int64_t ib = 0; ib < nb; ib++) {
        QGEMV_PREFETCH_COLS_STREAM(x + ib, sizeof(x[0]), CB);
        __m256i scale_bytes, mins16;
        const __m128 dx = qgemv_q2_K_scales(&x[ib], &scale_bytes, &mins16);   /* (d, dmin) */
        __m256i u[8], sp[8];   /* levels of values 32 k .. 32 k + 31, and their two scales */
        for (int h = 0; h < 2; h++) {
            const __m256i bits = _mm256_loadu_si256((const __m256i *)(x[ib].qs + 32 * h));
            for (int m = 0; m < 4; m++) {
                u[4 * h + m] = qgemv_k_low2(bits, m);
                sp[4 * h + m] = qgemv_q2_K_scale_pair(scale_bytes, 4 * h + m);
            }
        }
        for (int j = 0; j < CB; j++) {
            const __m128 dm = _mm_mul_ps(dx, _mm_set1_ps(y[j][ib].d));   /* (d_y d, d_y dmin) */
            const __m256i msum = _mm256_madd_epi16(mins16, qgemv_k_bsums(&y[j][ib]));
            __m256i sum0 = _mm256_setzero_si256(), sum1 = _mm256_setzero_si256();
            for (int k = 0; k < 8; k += 2) {
                const int8_t *p = y[j][ib].qs + 32 * k;
                sum0 = qgemv_k_dot_scaled_acc(sum0, u[k], p, sp[k]);
                sum1 = qgemv_k_dot_scaled_acc(sum1, u[k + 1], p + 32, sp[k + 1]);
            }
            acc[j] = qgemv_k2_step(acc[j], dm, _mm256_add_epi32(sum0, sum1), msum);
        }
    }
    for (int j = 0; j < CB; j++) out[j] = acc[j];
}
QGEMV_DEFINE_TILE_BY_COLS(q2_K, q8_K, tile_k2, QK_K, 8)

/* ---------------------------------------------------------------- tiles (src/tiles.h)
 * q4_K / q5_K against a batch: each super-block's levels and scales are decoded once for up to
 * 4 columns, each column in its own lanes; vec_dot is the one-column case, so a batch gives
 * vec_dot's bits. */
/* q5_K's 5th bit, or nothing for q4_K (the panels' passes, superblocks_x16.h) */
#define QGEMV_K_NO_HIGH_BIT(...)
#define QGEMV_K_HIGH_BIT(...) __VA_ARGS__
/* a super-block's integer sums are added up exactly (isum = sum_s sc_s sum_{i in s} u_i a_i,
 * msum = sum_s mn_s sum_{i in s} a_i) and its float work is two scalar fmas, as the portable
 * vec_dot's: acc = fma(d d_y, isum, acc), then fma(-(dmin d_y), msum, acc); the panels of
 * superblocks_x16.h do the same with 16 rows in the lanes of a vector */
#define QGEMV_K4_FLOAT_STEP(acc, dm, isum8, msum4)                                         \
    do {                                                                                   \
        const __m128 t_ = qgemv_k4_totals(isum8, msum4);   /* (isum, msum) */              \
        (acc) = fmaf(_mm_cvtss_f32(dm), _mm_cvtss_f32(t_), (acc));                         \
        (acc) = fmaf(-_mm_cvtss_f32(_mm_movehdup_ps(dm)), _mm_cvtss_f32(_mm_movehdup_ps(t_)), (acc)); \
    } while (0)
/* both integer totals of a super-block at once, as floats (lane 0: the 8 lanes of i, lane 1:
 * the 4 of m), exact sums converted once */
static inline __m128 qgemv_k4_totals(__m256i i, __m128i m) {
    const __m128i i4 = _mm_add_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
    const __m128i h = _mm_hadd_epi32(i4, m);   /* (i0+i1, i2+i3, m0+m1, m2+m3) */
    return _mm_cvtepi32_ps(_mm_hadd_epi32(h, h));   /* lanes 0, 1: i, m */
}
/* (name, whether it has a 5th bit) */
#define QGEMV_DEFINE_TILE_K4_AVX2(name, HIGH)                                              \
    QGEMV_ALWAYS_INLINE void tile_k4_##name(int64_t nb, const block_##name *x, const uint8_t *a, \
                                            int64_t act_stride, const int CB, float *out) { \
        const __m128i mins_to_s16 = _mm_setr_epi8(4, -1, 5, -1, 6, -1, 7, -1, 12, -1, 13, -1, 14, -1, 15, -1); \
        const block_q8_K *y[4];                                                            \
        float acc[4];                                                                      \
        for (int j = 0; j < CB; j++) {                                                     \
            y[j] = (const block_q8_K *)(a + j * act_stride);                               \
            acc[j] = 0.0f;                                                                 \
        }                                                                                  \
        for (int64_t ib = 0; ib < nb; ib++) {                                              \
            QGEMV_PREFETCH_COLS_STREAM(x + ib, sizeof(x[0]), CB);                          \
            /* (d, dmin): adjacent f16 fields */                                           \
            const __m128 dx = _mm_cvtph_ps(_mm_cvtsi32_si128((int)qgemv_k_word((const uint8_t *)&x[ib].d))); \
            const __m128i sm = qgemv_k4_scales_mins(x[ib].scales);                         \
            const __m128i mins16 = _mm_shuffle_epi8(sm, mins_to_s16);                      \
            const __m256i sc = _mm256_broadcastsi128_si256(sm);                            \
            __m256i sum0[4], sum1[4];                                                      \
            for (int j = 0; j < CB; j++) sum0[j] = sum1[j] = _mm256_setzero_si256();       \
            const __m256i hbits = qgemv_k4_hbits_##name(&x[ib]);                           \
            for (int c = 0; c < 4; c++) {                                                  \
                __m256i u[2];                                                              \
                qgemv_k4_levels(x[ib].qs, hbits, c, HIGH, u);                              \
                const __m256i s0 = qgemv_k4_scale(sc, 2 * c), s1 = qgemv_k4_scale(sc, 2 * c + 1); \
                for (int j = 0; j < CB; j++) {                                             \
                    const int8_t *p = y[j][ib].qs + 64 * c;                                \
                    sum0[j] = qgemv_k_dot_scaled_acc(sum0[j], u[0], p, s0);                \
                    sum1[j] = qgemv_k_dot_scaled_acc(sum1[j], u[1], p + 32, s1);           \
                }                                                                          \
            }                                                                              \
            for (int j = 0; j < CB; j++) {   /* (d_y d, d_y dmin) */                       \
                const __m128 dm = _mm_mul_ps(dx, _mm_set1_ps(y[j][ib].d));                 \
                const __m128i msum4 = _mm_madd_epi16(mins16, qgemv_k_bsums32(&y[j][ib]));  \
                QGEMV_K4_FLOAT_STEP(acc[j], dm, _mm256_add_epi32(sum0[j], sum1[j]), msum4);  \
            }                                                                              \
        }                                                                                  \
        for (int j = 0; j < CB; j++) out[j] = acc[j];                                      \
    }                                                                                      \
    /* vec_dot is the one-column case (the portable vec_dot's bits) */                     \
    QGEMV_DEFINE_VEC_DOT_AND_TILE_BY_KERNEL(name, q8_K, tile_k4_##name, QK_K, 4)
QGEMV_DEFINE_TILE_K4_AVX2(q4_K, 0)
QGEMV_DEFINE_TILE_K4_AVX2(q5_K, 1)

/* q6_K's levels u = q + 32 of the 128 values 128 h .., 32 per vector in value order: a nibble of
 * ql below two bits of qh */
QGEMV_ALWAYS_INLINE void qgemv_k6_levels(const block_q6_K *b, int h, __m256i u[4]) {
    const __m256i low4 = _mm256_set1_epi8(0x0f), bits45 = _mm256_set1_epi8(0x30);
    const __m256i l0 = _mm256_loadu_si256((const __m256i *)(b->ql + 64 * h));
    const __m256i l1 = _mm256_loadu_si256((const __m256i *)(b->ql + 64 * h + 32));
    const __m256i hb = _mm256_loadu_si256((const __m256i *)(b->qh + 32 * h));
    u[0] = _mm256_or_si256(_mm256_and_si256(l0, low4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), bits45));
    u[1] = _mm256_or_si256(_mm256_and_si256(l1, low4), _mm256_and_si256(_mm256_slli_epi16(hb, 2), bits45));
    u[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4), _mm256_and_si256(hb, bits45));
    u[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4), _mm256_and_si256(_mm256_srli_epi16(hb, 2), bits45));
}

/* q6_K's super-block ib (levels stored as u = q + 32 in [0, 63], the offset taken out through the
 * bsums) against CB <= 8 columns: levels and scale vectors decoded once, lanes[j] column j's exact
 * integer sum in 8 lanes (two chains for one or two columns, one past; each chain kept in its
 * register as it goes, which GCC otherwise re-associated through the stack beside a second row).
 * 4 columns a pass with two chains each decoded a batch of 8 twice: Zen 4, QGEMV_ISA=avx2,
 * 4096 x 4096, 2 threads, batch 8 1.31 -> 1.13 ms, batch 32 5.67 -> 4.76 */
QGEMV_ALWAYS_INLINE void k6_superblock(const block_q6_K *b, const block_q8_K *const *y, int64_t ib, const int CB,
                                       __m256i *lanes) {
    const int two = CB <= 2;
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)b->scales));
    const qgemv_k_scales16 sc = qgemv_k_scales16_from(sc16);
    __m256i sum0[8], sum1[8];
    for (int j = 0; j < CB; j++) {
        sum0[j] = _mm256_sub_epi32(_mm256_setzero_si256(),
                                   _mm256_slli_epi32(_mm256_madd_epi16(sc16, qgemv_k_bsums(&y[j][ib])), 5));
        sum1[j] = _mm256_setzero_si256();
    }
    for (int h = 0; h < 2; h++) {
        __m256i u[4];
        qgemv_k6_levels(b, h, u);
        for (int k = 0; k < 4; k++) {
            const __m256i s = qgemv_k_scale_pair(sc, 4 * h + k);
            for (int j = 0; j < CB; j++) {
                const int8_t *p = y[j][ib].qs + 128 * h + 32 * k;
                if (k % 2 == 0 || !two) sum0[j] = qgemv_k_dot_scaled_acc(sum0[j], u[k], p, s);
                else sum1[j] = qgemv_k_dot_scaled_acc(sum1[j], u[k], p, s);
                QGEMV_IN_REGISTER(sum0[j]);
                if (two) QGEMV_IN_REGISTER(sum1[j]);
            }
        }
    }
    for (int j = 0; j < CB; j++) lanes[j] = two ? _mm256_add_epi32(sum0[j], sum1[j]) : sum0[j];
}
/* q6_K against up to 8 columns, each column's sums added up exactly per super-block for the
 * portable vec_dot's one fma */
QGEMV_ALWAYS_INLINE void tile_k6(int64_t nb, const block_q6_K *x, const uint8_t *a, int64_t act_stride,
                                 const int CB, float *out) {
    const block_q8_K *y[8];
    float acc[8];
    for (int j = 0; j < CB; j++) {
        y[j] = (const block_q8_K *)(a + j * act_stride);
        acc[j] = 0.0f;
    }
    for (int64_t ib = 0; ib < nb; ib++) {
        QGEMV_PREFETCH_COLS_STREAM(&x[ib], sizeof(x[0]), CB);
        __m256i lanes[8];
        k6_superblock(&x[ib], y, ib, CB, lanes);
        qgemv_k_fold_columns(lanes, CB, y, ib, qgemv_k_half(x[ib].d), acc);
    }
    for (int j = 0; j < CB; j++) out[j] = acc[j];
}
QGEMV_ALWAYS_INLINE __m256i k6_lanes(const block_q6_K *b, const block_q8_K *y) {
    __m256i lanes;
    k6_superblock(b, &y, 0, 1, &lanes);
    return lanes;
}
QGEMV_DEFINE_K_ROW_PRODUCTS(q6_K, k6_lanes)
/* a single column two rows at a time */
QGEMV_DEFINE_TILE_BY_COLS_WITH(q6_K, q8_K, tile_k6, QK_K, 8, QGEMV_K_ROWS2_ONE_COLUMN)

/* dequantize q2_K, q3_K, q6_K from the products' level vectors, 32 values at a time: x = dl q
 * (- ml), dl = d sc_s and ml = dmin m_s as the portable loops form them (ggml's roundings), where
 * those loops unpacked the levels value by value (q4_K and q5_K keep them: their nibbles
 * vectorize as they stand) */
static void dequant_row_q2_K(const void *restrict src, float *restrict dst, int64_t n) {
    const block_q2_K *x = (const block_q2_K *)src;
    for (int64_t ib = 0; ib < n / QK_K; ib++, dst += QK_K) {
        const float d = scale_q2_K(&x[ib]), dmin = min_q2_K(&x[ib]);
        int16_t sc[16], mn[16];
        scales_q2_K(&x[ib], sc, mn);
        for (int h = 0; h < 2; h++) {
            const __m256i bits = _mm256_loadu_si256((const __m256i *)(x[ib].qs + 32 * h));
            for (int m = 0; m < 4; m++) {
                const int s = 8 * h + 2 * m;
                qgemv_store_levels_16x2(qgemv_k_low2(bits, m), d * (float)sc[s], -(dmin * (float)mn[s]),
                                        d * (float)sc[s + 1], -(dmin * (float)mn[s + 1]), 1, dst + 128 * h + 32 * m);
            }
        }
    }
}
static void dequant_row_q3_K(const void *restrict src, float *restrict dst, int64_t n) {
    const block_q3_K *x = (const block_q3_K *)src;
    const __m256i four = _mm256_set1_epi8(4);
    for (int64_t ib = 0; ib < n / QK_K; ib++, dst += QK_K) {
        int8_t sc[16];
        _mm_storeu_si128((__m128i *)sc, qgemv_k3_scales(x[ib].scales));
        const float d = scale_q3_K(&x[ib]);
        const __m256i hbits = _mm256_loadu_si256((const __m256i *)x[ib].hmask);
        for (int h = 0; h < 2; h++) {
            const __m256i bits = _mm256_loadu_si256((const __m256i *)(x[ib].qs + 32 * h));
            for (int k = 4 * h; k < 4 * h + 4; k++)
                qgemv_store_levels_16x2(_mm256_sub_epi8(qgemv_k3_levels(bits, hbits, k), four), d * (float)sc[2 * k], 0.0f,
                                        d * (float)sc[2 * k + 1], 0.0f, 0, dst + 32 * k);
        }
    }
}
static void dequant_row_q6_K(const void *restrict src, float *restrict dst, int64_t n) {
    const block_q6_K *x = (const block_q6_K *)src;
    const __m256i offset = _mm256_set1_epi8(32);
    for (int64_t ib = 0; ib < n / QK_K; ib++, dst += QK_K) {
        const float d = scale_q6_K(&x[ib]);
        for (int h = 0; h < 2; h++) {
            __m256i u[4];
            qgemv_k6_levels(&x[ib], h, u);
            for (int k = 0; k < 4; k++) {
                const int s = 8 * h + 2 * k;
                qgemv_store_levels_16x2(_mm256_sub_epi8(u[k], offset), d * (float)x[ib].scales[s], 0.0f,
                                        d * (float)x[ib].scales[s + 1], 0.0f, 0, dst + 128 * h + 32 * k);
            }
        }
    }
}

#if defined(QGEMV_AVX2) && !defined(QGEMV_AVX512)
/* q3_K's and q6_K's super-blocks as the packed tile reads them (src/packed_tile.h; q6_K's on AVX-VNNI only:
 * their levels fit its bytes u = q + 64, [60, 67] and [32, 95]): their 16 scales as int32, d0 = d,
 * and the K-quants' step acc = fma((float) t, d_y d, acc) on the same exact t = sum_s sc_s sum q p:
 * vec_dot's bits (q2_K's, q4_K's and q5_K's below, with their minimums).  One weight dword meets
 * 8 columns a vpdpbusd where the batch tiles above spend maddubs and vpdpwssd on a column's 32
 * values (the AVX-512 variants take panels and AMX tiles) */
/* 16 int8 scales -> int32 s[16] */
static inline void k_store_scales_i32(__m128i sc8, int32_t s[QK_K / 16]) {
    _mm256_storeu_si256((__m256i *)s, _mm256_cvtepi8_epi32(sc8));
    _mm256_storeu_si256((__m256i *)(s + 8), _mm256_cvtepi8_epi32(_mm_srli_si128(sc8, 8)));
}
static void k_decode_u8_q3_K(const block_q3_K *b, qgemv_decoded_u8 *dec) {
    const __m256i hbits = _mm256_loadu_si256((const __m256i *)b->hmask), lift = _mm256_set1_epi8(60);
    for (int h = 0; h < 2; h++) {
        const __m256i bits = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * h));
        for (int m = 0; m < 4; m++)
            _mm256_storeu_si256((__m256i *)(dec->u + 128 * h + 32 * m),
                                _mm256_add_epi8(qgemv_k3_levels(bits, hbits, 4 * h + m), lift));
    }
    k_store_scales_i32(qgemv_k3_scales(b->scales), dec->s);
    dec->d0 = qgemv_k_half(b->d);
}
#if defined(QGEMV_VNNI)
static void k_decode_u8_q6_K(const block_q6_K *b, qgemv_decoded_u8 *dec) {
    for (int h = 0; h < 2; h++) {
        __m256i u[4];
        qgemv_k6_levels(b, h, u);
        for (int k = 0; k < 4; k++)
            _mm256_storeu_si256((__m256i *)(dec->u + 128 * h + 32 * k), _mm256_add_epi8(u[k], _mm256_set1_epi8(32)));
    }
    k_store_scales_i32(_mm_loadu_si128((const __m128i *)b->scales), dec->s);
    dec->d0 = qgemv_k_half(b->d);
}
/* q2_K, q4_K and q5_K (AVX-VNNI): u = q + 64 ([64, 79], [64, 95]; q2_K: s q, below), their scales (q4_K's and
 * q5_K's each twice, per 16 values), and their minimums for the K-quants' second fma as int16 pairs
 * against the packed columns' bsum pairs (a 32-value sub-block's m twice).  Their own panel
 * batches (int16 sums; q2_K's levels scaled in bytes once for all columns) run 8 columns as
 * fast or faster: the packed tile pays from 24 columns for q2_K and q4_K, from 16 for q5_K
 * (Intel Xeon as AVX-VNNI, 4096 x 4096, 2 threads, panels against the packed tile, batch 8 /
 * 16 / 24 / 32: q2_K 0.80 / 1.58 / 2.35-2.58 / 3.11-3.12 ms against 0.99-1.01 / 1.60-1.64 /
 * 2.26-2.28 / 2.90-2.95, q4_K 0.73 / 1.36-1.44 / 2.07-2.18 / 2.72-2.88 against 0.85 / 1.41-1.43
 * / 2.03-2.04 / 2.54-2.61; q5_K batch 12 1.35-1.40 against 1.57, 16 1.83-1.86 against
 * 1.53-1.56, 32 3.61-3.66 against 2.62-2.73).  Since q4_K's and q5_K's panel batches sum in
 * int32 by vpdpbusd (superblocks_x16.h) q4_K's panels are the faster through 40 columns (builds
 * alternating, batch 24 / 32 / 40: 2.01-2.13 / 2.60-2.68 / 3.17-3.33 against the packed tile's
 * 2.05-2.32 / 2.66-2.92 / 3.39-3.51), so its packed tile takes batches from 48 */
/* q2_K's levels times their scales, u = s q <= 45 (QGEMV_PACKED_STEP_KMIN_SCALED): 32 values of
 * two sub-blocks as 16 words times [s_a x 8 | s_b x 8], each byte's product below 256 so no carry
 * into its neighbour.  Against u = q + 64 and a vpmulld per sub-block and row (the figures above),
 * 4096 x 4096, 2 threads, batch 16 / 24 / 32: 1.61-1.69 / 2.29-2.33 / 2.93-2.96 (the panels at
 * 16) -> 1.38-1.42 / 1.90-1.94 / 2.35-2.37 ms, so from 16 columns (8 even, 12 slower: half a
 * group's lanes idle) */
static void k_decode_u8_q2_K(const block_q2_K *b, qgemv_decoded_u8 *dec) {
    const __m128i sc8 = _mm_and_si128(_mm_loadu_si128((const __m128i *)b->scales), _mm_set1_epi8(0x0f));
    const __m256i sc32[2] = {_mm256_cvtepu8_epi32(sc8), _mm256_cvtepu8_epi32(_mm_srli_si128(sc8, 8))};
    for (int h = 0; h < 2; h++) {
        const __m256i bits = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * h));
        const __m256i sw = _mm256_or_si256(sc32[h], _mm256_slli_epi32(sc32[h], 16));   /* s in both words */
        for (int m = 0; m < 4; m++) {
            const __m256i pair = _mm256_permutevar8x32_epi32(sw, _mm256_setr_epi32(2 * m, 2 * m, 2 * m, 2 * m, 2 * m + 1,
                                                                                    2 * m + 1, 2 * m + 1, 2 * m + 1));
            _mm256_storeu_si256((__m256i *)(dec->u + 128 * h + 32 * m), _mm256_mullo_epi16(qgemv_k_low2(bits, m), pair));
        }
    }
    for (int p = 0; p < QK_K / 32; p++) dec->mpair[p] = (b->scales[2 * p] >> 4) | (b->scales[2 * p + 1] >> 4) << 16;
    dec->d0 = qgemv_k_half(b->d);
    dec->dmin = qgemv_k_half(b->dmin);
}
#define QGEMV_DEFINE_K_DECODE_U8_K4(name, HIGH)                                            \
    static void k_decode_u8_##name(const block_##name *b, qgemv_decoded_u8 *dec) {         \
        const __m256i lift = _mm256_set1_epi8(64), hbits = qgemv_k4_hbits_##name(b);       \
        for (int c = 0; c < 4; c++) {                                                      \
            __m256i u[2];                                                                  \
            qgemv_k4_levels(b->qs, hbits, c, HIGH, u);                                     \
            _mm256_storeu_si256((__m256i *)(dec->u + 64 * c), _mm256_add_epi8(u[0], lift)); \
            _mm256_storeu_si256((__m256i *)(dec->u + 64 * c + 32), _mm256_add_epi8(u[1], lift)); \
        }                                                                                  \
        uint8_t sm[16];   /* sc0..3, mn0..3, sc4..7, mn4..7 */                             \
        _mm_storeu_si128((__m128i *)sm, qgemv_k4_scales_mins(b->scales));                  \
        for (int s = 0; s < QK_K / 32; s++) {                                              \
            const int sc = sm[s < 4 ? s : s + 4], mn = sm[s < 4 ? s + 4 : s + 8];          \
            dec->s[2 * s] = dec->s[2 * s + 1] = sc;                                        \
            dec->mpair[s] = mn | mn << 16;                                                 \
        }                                                                                  \
        dec->d0 = qgemv_k_half(b->d);                                                      \
        dec->dmin = qgemv_k_half(b->dmin);                                                 \
    }
QGEMV_DEFINE_K_DECODE_U8_K4(q4_K, 0)
QGEMV_DEFINE_K_DECODE_U8_K4(q5_K, 1)
QGEMV_DEFINE_PACKED_TILE_STEP(q2_K, block_q2_K, k_decode_u8_q2_K, 16, QGEMV_PACKED_STEP_KMIN_SCALED)
QGEMV_DEFINE_PACKED_TILE_STEP(q4_K, block_q4_K, k_decode_u8_q4_K, 32, QGEMV_PACKED_STEP_KMIN)
QGEMV_DEFINE_PACKED_TILE_STEP(q5_K, block_q5_K, k_decode_u8_q5_K, 32, QGEMV_PACKED_STEP_KMIN)
QGEMV_DEFINE_PACKED_TILE_STEP(q6_K, block_q6_K, k_decode_u8_q6_K, 16, QGEMV_PACKED_STEP_K)
/* (name, from how many columns, act) */
#define QGEMV_PACKED_TILES_KQUANTS(X) X(q2_K, 16, q8_K) X(q3_K, 8, q8_K) X(q4_K, 48, q8_K) X(q5_K, 16, q8_K) X(q6_K, 8, q8_K)
#else
/* plain AVX2, without vpdpbusd (packed_tile.h): q3_K from 16 columns (Intel Xeon, QGEMV_ISA=avx2,
 * 4096 x 4096, 2 threads, builds alternating: its GGUF rows' tile at batch 8 / 16 / 32 1.54 /
 * 3.55 / 6.96 ms, packed 1.52 / 2.80 / 5.15; its panels at 16 / 32 / 64 2.63 / 5.24 / 10.55,
 * packed 2.77 / 5.19 / 10.10 with vpdpbusd as maddubs, a madd by ones and an add; with the
 * scales in the madd, batch 16 / 24 2.62 / 3.89 on its panels, 2.57 / 3.72 packed); q2_K's,
 * q4_K's, q5_K's and q6_K's panel passes stay ahead (q5_K batch 32 1.4x slower packed; q6_K
 * batch 16 / 32 / 64 2.44 / 5.08 / 9.71 ms on its panels, 2.95 / 5.61 / 11.15 packed) */
#define QGEMV_PACKED_TILES_KQUANTS(X) X(q3_K, 16, q8_K)
#endif
QGEMV_DEFINE_PACKED_TILE_STEP(q3_K, block_q3_K, k_decode_u8_q3_K, 16, QGEMV_PACKED_STEP_K)
#endif

/* the specialised tiles of this family (src/kernels.c puts them in the table) */
#define QGEMV_TILES_KQUANTS(X) X(q2_K, q8_K) X(q3_K, q8_K) X(q4_K, q8_K) X(q5_K, q8_K) X(q6_K, q8_K)
#endif /* QGEMV_AVX2 */
#ifndef QGEMV_PACKED_TILES_KQUANTS
#define QGEMV_PACKED_TILES_KQUANTS(X)
#endif
