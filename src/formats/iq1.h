/* iq1_s and iq1_m: 256-value super-blocks of 8-value points from iq1s_grid (values -1, 0, 1),
 * each point shifted by +-1/8.
 *
 *   iq1_s  x = d (2 s + 1) (g + delta),  s 3-bit and delta = +-1/8 per 32 values;
 *          1.5625 bits per weight.  Group l of sub-block ib (values 32 ib + 8 l ..):
 *          g = iq1s_grid[qs[4 ib + l] | ((qh[ib] >> 3 l) & 7) << 8], s = qh[ib] >> 12 & 7,
 *          delta negative when bit 15 of qh[ib] is set.
 *   iq1_m  x = d (2 s + 1) (g + delta),  s 3-bit per 16 values, delta per 8 values;
 *          1.75 bits per weight.  Each group has a byte nibble of qh: three high index bits and
 *          a delta sign (bit 3); the 16 scales are 3-bit fields of the four uint16 words of
 *          `scales` (field k at bits 3 (k % 4) of word k / 4), and d is an f16 whose four
 *          nibbles are the top nibbles of those words.
 *
 * The products are integer within a super-block: with a the q8_K values,
 *   sum x a = d d_a / 8 * sum_k (2 s_k + 1) sum_j a_j (8 g_j + 8 delta_j)
 * where 8 delta = +-1, so the bracket is an exact int32 t, and per super-block
 * acc = fma(t (d / 8), d_a, acc) as for the IQ grids (src/tiles.h: qgemv_columns_step_q8_K).  iq1_s takes its delta terms from
 * q8_K's sums of 16 (sum_j a_j 8 delta = +-bsum) and folds its scale into the unsigned bytes
 * (2 s + 1) g + 16 (1 .. 31), so a column is one u8 x s8 product per value and no per-sub-block
 * step (batch 8, 1 thread: 3.3 -> 2.1 ms); iq1_m, whose delta changes every 8 values,
 * multiplies a_j by the unsigned u_j = 8 g_j + 8 delta_j + 9 (0 .. 18, one maddubs) and takes
 * 9 bsum back off per 16 values.  The grid points are gathered as 64-bit words, indexed by
 * 11-bit numbers assembled with pdep (BMI2, part of the avx2 build).
 *
 * iq1_m's products read a prepared copy of the rows instead (QMatrix's panels: interleave_x8_iq1_m,
 * block_iq1_mt in include/qgemv/blocks.h): since u = 8 t + e with t = g + 1 a trit and e = 8 delta
 * + 1 in {0, 2}, the trits in 2-bit fields and a sign bit per 8 values give the same u vectors with
 * a shift, a mask, a pshufb and an or per 32 values, in place of four gathers (GEMV 4096 x 4096,
 * 1 thread: 1.56 -> 0.93 ms), so the same integers and bits.  So do iq1_s's (interleave_x8_iq1_s,
 * block_iq1_st: the trits, then the GGUF block's qh words and d): g = t - 1 with a shift and a
 * mask per 32 values, then the GGUF rows' own steps (same process, set_repack off / on, 2
 * threads: GEMV 4096 x 4096 1.55x, 14336 x 4096 out of cache 1.50x, batch 8 1.35x, batch 32
 * 1.14x; 1.64x the memory; 3 ms to make for 14336 x 4096).
 */

/* ---------------------------------------------------------------- iq1_s */

static inline int grid_index_iq1_s(const block_iq1_s *b, int ib, int l) {
    return b->qs[4 * ib + l] | ((b->qh[ib] >> (3 * l)) & 7) << 8;
}
/* 2 s + 1 of sub-block ib */
/* of sub-block ib's qh word (a GGUF block's, or a trit block's copy) */
static inline int sub_scale_iq1_s_of(uint16_t qh) { return 2 * ((qh >> 12) & 7) + 1; }
static inline int delta_sign_iq1_s_of(uint16_t qh) { return qh & 0x8000 ? -1 : 1; }
static inline int sub_scale_iq1_s(const block_iq1_s *b, int ib) { return sub_scale_iq1_s_of(b->qh[ib]); }
static inline int delta_sign_iq1_s(const block_iq1_s *b, int ib) { return delta_sign_iq1_s_of(b->qh[ib]); }

/* ---------------------------------------------------------------- iq1_m */

/* word k of the scales (as stored: the GGUF block's, or a trit block's copy) */
static inline uint16_t scale_word_iq1_m(const uint8_t scales[QK_K / 32], int k) {
    uint16_t w;
    memcpy(&w, scales + 2 * k, 2);
    return w;
}
/* the f16 super-block scale: nibble k of its bits is the top nibble of word k */
static inline float scale_iq1_m_of(const uint8_t scales[QK_K / 32]) {
    uint16_t h = 0;
    for (int k = 0; k < 4; k++) h |= (uint16_t)((scale_word_iq1_m(scales, k) >> 12) << (4 * k));
    return qgemv_fp16_to_fp32(h);
}
static inline float scale_iq1_m(const block_iq1_m *b) { return scale_iq1_m_of(b->scales); }
/* 2 s + 1 of the 16 values 16 k .. 16 k + 15 */
static inline int sub_scale_iq1_m_of(const uint8_t scales[QK_K / 32], int k) {
    return 2 * ((scale_word_iq1_m(scales, k / 4) >> (3 * (k % 4))) & 7) + 1;
}
static inline int sub_scale_iq1_m(const block_iq1_m *b, int k) { return sub_scale_iq1_m_of(b->scales, k); }
/* the qh nibble of group g (values 8 g ..): index bits 0-2, delta sign bit 3 */
static inline int group_nibble_iq1_m(const block_iq1_m *b, int g) { return (b->qh[g / 2] >> (4 * (g % 2))) & 0x0f; }
static inline int grid_index_iq1_m(const block_iq1_m *b, int g) {
    return b->qs[g] | (group_nibble_iq1_m(b, g) & 7) << 8;
}
static inline int delta_sign_iq1_m(const block_iq1_m *b, int g) { return group_nibble_iq1_m(b, g) & 8 ? -1 : 1; }

/* ---------------------------------------------------------------- dequantize */

/* y[j] = dl (g[j] + delta) for the 8 values of one grid point: one add (exact), one product */
static inline void dequant_group_iq1(uint64_t point, float dl, float delta, float *y) {
#if defined(QGEMV_AVX2)
    const __m256 g = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128((long long)point)));
    _mm256_storeu_ps(y, _mm256_mul_ps(_mm256_set1_ps(dl), _mm256_add_ps(g, _mm256_set1_ps(delta))));
#else
    int8_t g[8];
    memcpy(g, &point, 8);
    for (int j = 0; j < 8; j++) y[j] = dl * ((float)g[j] + delta);
#endif
}

static void dequant_row_iq1_s(const void *restrict src, float *restrict dst, int64_t n) {
    const block_iq1_s *x = (const block_iq1_s *)src;
    for (int64_t i = 0; i < n / QK_K; i++) {
        const float d = qgemv_fp16_to_fp32(x[i].d);
        for (int ib = 0; ib < QK_K / 32; ib++) {
            const float dl = d * (float)sub_scale_iq1_s(&x[i], ib);
            const float delta = delta_sign_iq1_s(&x[i], ib) < 0 ? -IQ1S_DELTA : IQ1S_DELTA;
            for (int l = 0; l < 4; l++, dst += 8)
                dequant_group_iq1(iq1s_grid[grid_index_iq1_s(&x[i], ib, l)], dl, delta, dst);
        }
    }
}

#if !defined(QGEMV_AVX2)   /* AVX2: after levels_iq1_m, below */
static void dequant_row_iq1_m(const void *restrict src, float *restrict dst, int64_t n) {
    const block_iq1_m *x = (const block_iq1_m *)src;
    for (int64_t i = 0; i < n / QK_K; i++) {
        const float d = scale_iq1_m(&x[i]);
        for (int g = 0; g < QK_K / 8; g++, dst += 8) {
            const float dl = d * (float)sub_scale_iq1_m(&x[i], g / 2);
            const float delta = delta_sign_iq1_m(&x[i], g) < 0 ? -IQ1M_DELTA : IQ1M_DELTA;
            dequant_group_iq1(iq1s_grid[grid_index_iq1_m(&x[i], g)], dl, delta, dst);
        }
    }
}
#endif

/* ---------------------------------------------------------------- products */

#if defined(QGEMV_AVX2)

/* the four grid points of one sub-block, indices packed as four uint16 in a word */
static inline __m256i gather_points_iq1(uint64_t idx) {
    return _mm256_set_epi64x((long long)iq1s_grid[idx >> 48], (long long)iq1s_grid[(idx >> 32) & 0xffff],
                             (long long)iq1s_grid[(idx >> 16) & 0xffff], (long long)iq1s_grid[idx & 0xffff]);
}
static inline uint32_t qgemv_load_u32_iq1(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

/* sum_k (2 s_k + 1) sum_j u_j a_j over a block's 16 groups of 16 values, as 8 int32 lanes: u the
 * unsigned levels (iq1_m's u = 8 g + 8 delta + 9), 32 per vector, the scale of each 16 picked from
 * ls (int16 lanes, two per sub-block pair in the order the loop takes them) */
QGEMV_ALWAYS_INLINE __m256i iq1_scaled_dot(const __m256i v[QK_K / 32], const int8_t *aq, __m256i ls) {
    __m256i pick = _mm256_set1_epi16(0x0100);
    __m256i sum0 = _mm256_setzero_si256(), sum1 = _mm256_setzero_si256();
    for (int ib = 0; ib < QK_K / 32; ib += 2) {
        const __m256i p0 = _mm256_maddubs_epi16(v[ib], _mm256_loadu_si256((const __m256i *)(aq + 32 * ib)));
        const __m256i p1 = _mm256_maddubs_epi16(v[ib + 1], _mm256_loadu_si256((const __m256i *)(aq + 32 * ib + 32)));
        const __m256i sc0 = _mm256_shuffle_epi8(ls, pick);
        pick = _mm256_add_epi8(pick, _mm256_set1_epi8(2));
        const __m256i sc1 = _mm256_shuffle_epi8(ls, pick);
        pick = _mm256_add_epi8(pick, _mm256_set1_epi8(2));
        sum0 = qgemv_madd_acc(sum0, p0, sc0);
        sum1 = qgemv_madd_acc(sum1, p1, sc1);
    }
    return _mm256_add_epi32(sum0, sum1);
}

/* a block decoded for the columns: its 256 values as the unsigned bytes w = (2 s + 1) g + 16
 * (1 .. 31, 32 per vector in value order), the bsums' coefficients c = (+-1)(2 s + 1) - 128
 * (one per 16 values: 8 * 16 sum_j a_j = 128 sum bsum takes the 16 back off), d.  The scale
 * folded into the byte, a column costs one product per 4 values and no per-sub-block step */
typedef struct {
    __m256i w[QK_K / 32], delta_scales;
    float d;
} iq1_s_decoded;
/* the grid values g (-1, 0, 1) of a GGUF block's 8 sub-blocks, 32 per vector in value order */
static inline void grid_values_iq1_s(const block_iq1_s *b, __m256i g[QK_K / 32]) {
    for (int ib = 0; ib < QK_K / 32; ib++)
        g[ib] = gather_points_iq1(_pdep_u64(qgemv_load_u32_iq1(b->qs + 4 * ib), 0x00ff00ff00ff00ffULL)
                                  | _pdep_u64(b->qh[ib], 0x0700070007000700ULL));
}
/* the same from a trit block (include/qgemv/blocks.h): g = t - 1, a shift and a mask a vector */
static inline void grid_values_iq1_st(const block_iq1_st *b, __m256i g[QK_K / 32]) {
    const __m256i three = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
    for (int h = 0; h < 2; h++) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(b->t + 32 * h));
        for (int l = 0; l < 4; l++)
            g[4 * h + l] = _mm256_sub_epi8(_mm256_and_si256(_mm256_srli_epi16(x, 2 * l), three), one);
    }
}
/* a block decoded from its grid values g, its qh words (scales, delta signs) and d */
static inline void decode_iq1_s_of(const __m256i g[QK_K / 32], const uint16_t qh_words[QK_K / 32], qgemv_half d,
                                   iq1_s_decoded *dec) {
    const __m128i qh = _mm_loadu_si128((const __m128i *)qh_words);
    const __m128i ls = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(qh, 11), _mm_set1_epi16(0x0e)), _mm_set1_epi16(1));
    const __m128i neg = _mm_srai_epi16(qh, 15);
    const __m128i dls = _mm_sub_epi16(_mm_sub_epi16(_mm_xor_si128(ls, neg), neg), _mm_set1_epi16(128));
    dec->delta_scales = _mm256_set_m128i(_mm_unpackhi_epi16(dls, dls), _mm_unpacklo_epi16(dls, dls));
    const __m256i ls_bytes = _mm256_broadcastsi128_si256(ls);   /* byte 2 ib: 2 s + 1 of sub-block ib */
    for (int ib = 0; ib < QK_K / 32; ib++)   /* (2 s + 1) g = sign_epi8(2 s + 1, g), g in {-1, 0, 1} */
        dec->w[ib] = _mm256_add_epi8(_mm256_sign_epi8(_mm256_shuffle_epi8(ls_bytes, _mm256_set1_epi8((char)(2 * ib))), g[ib]),
                                     _mm256_set1_epi8(16));
    dec->d = qgemv_fp16_to_fp32(d);
}
static inline void decode_iq1_s(const block_iq1_s *b, iq1_s_decoded *dec) {
    __m256i g[QK_K / 32];
    grid_values_iq1_s(b, g);
    decode_iq1_s_of(g, b->qh, b->d, dec);
}
static inline void decode_iq1_st(const block_iq1_st *b, iq1_s_decoded *dec) {
    __m256i g[QK_K / 32];
    grid_values_iq1_st(b, g);
    decode_iq1_s_of(g, b->qh, b->d, dec);
}
/* per column of a decoded block:
 *   t = 8 sum_j w_j a_j + sum_k c_k bsum_k,  acc = fma(t d / 8, d_a, acc)
 * (t as int32 lanes, summed and stepped by qgemv_columns_step_q8_K, src/tiles.h)
 * sum_j w_j a_j by vpdpbusd (u8 x s8, 4 products per int32 lane, two chains), or on AVX2 by
 * maddubs (|pair| <= 2 * 31 * 128, four summed still int16) and a madd by ones */
QGEMV_ALWAYS_INLINE void columns_of_block_iq1_s(const iq1_s_decoded *dec, const block_q8_K *const *y, int64_t ib,
                                                const int CB, __m256 *acc) {
    __m256i sumi[QGEMV_TILE_COLS_MAX];
    for (int c = 0; c < CB; c++) {
        const block_q8_K *yc = &y[c][ib];
        const __m256i *aq = (const __m256i *)yc->qs;
#if defined(QGEMV_VNNI)
        __m256i s0 = qgemv_dpbusd_256(_mm256_setzero_si256(), dec->w[0], _mm256_loadu_si256(aq));
        __m256i s1 = qgemv_dpbusd_256(_mm256_setzero_si256(), dec->w[1], _mm256_loadu_si256(aq + 1));
        for (int v = 2; v < QK_K / 32; v += 2) {
            s0 = qgemv_dpbusd_256(s0, dec->w[v], _mm256_loadu_si256(aq + v));
            s1 = qgemv_dpbusd_256(s1, dec->w[v + 1], _mm256_loadu_si256(aq + v + 1));
        }
        const __m256i dot = _mm256_add_epi32(s0, s1);
#else
        __m256i h[2];
        for (int half = 0; half < 2; half++) {
            const int v = 4 * half;
            h[half] = _mm256_add_epi16(
                _mm256_add_epi16(_mm256_maddubs_epi16(dec->w[v], _mm256_loadu_si256(aq + v)),
                                 _mm256_maddubs_epi16(dec->w[v + 1], _mm256_loadu_si256(aq + v + 1))),
                _mm256_add_epi16(_mm256_maddubs_epi16(dec->w[v + 2], _mm256_loadu_si256(aq + v + 2)),
                                 _mm256_maddubs_epi16(dec->w[v + 3], _mm256_loadu_si256(aq + v + 3))));
        }
        const __m256i ones = _mm256_set1_epi16(1);
        const __m256i dot = _mm256_add_epi32(_mm256_madd_epi16(h[0], ones), _mm256_madd_epi16(h[1], ones));
#endif
        const __m256i bsums = _mm256_loadu_si256((const __m256i *)yc->bsums);
        sumi[c] = _mm256_add_epi32(_mm256_slli_epi32(dot, 3), _mm256_madd_epi16(bsums, dec->delta_scales));
    }
    qgemv_columns_step_q8_K(dec->d * 0.125f, y, ib, CB, sumi, acc);
}
/* CB <= 8 columns against nbc decoded blocks from block ib0 on, their accumulators in the lanes
 * of *acc */
QGEMV_ALWAYS_INLINE void decoded_columns_iq1_s(const iq1_s_decoded *dec, int64_t ib0, int64_t nbc,
                                               const block_q8_K *const *y, const int CB, __m256 *acc) {
    for (int64_t k = 0; k < nbc; k++) columns_of_block_iq1_s(&dec[k], y, ib0 + k, CB, acc);
}
/* one row against CB <= 8 columns: each block decoded once for all the columns, the same integer
 * and float steps whatever CB is (vec_dot is the CB = 1 case); past 8 columns 4 rows' blocks are
 * decoded at a time, once for up to 32 (QGEMV_DEFINE_VEC_DOT_AND_WIDE_TILE).  Over GGUF blocks
 * (iq1_s) or trit blocks (iq1_st, iq1_s's prepared rows): vec_dot_<name>_q8_K, vec_dot_tile_<name>_q8_K */
#define QGEMV_DEFINE_TILE_IQ1_S(name)                                                       \
    QGEMV_ALWAYS_INLINE void tile_##name(int64_t nb, const block_##name *x, const uint8_t *a, int64_t act_stride, \
                                         const int CB, float *out) {                        \
        const block_q8_K *y[QGEMV_TILE_COLS_MAX];                                           \
        __m256 acc = _mm256_setzero_ps();   /* columns in lanes */                          \
        qgemv_tile_columns_q8_K(a, act_stride, CB, y);                                      \
        for (int64_t i = 0; i < nb; i++) {                                                  \
            QGEMV_PREFETCH_COLS_STREAM(&x[i], sizeof(x[0]), CB);                            \
            iq1_s_decoded dec;                                                              \
            decode_##name(&x[i], &dec);                                                     \
            columns_of_block_iq1_s(&dec, y, i, CB, &acc);                                   \
        }                                                                                   \
        qgemv_columns_store(acc, CB, out);                                                  \
    }                                                                                       \
    QGEMV_DEFINE_VEC_DOT_AND_WIDE_TILE(name, tile_##name, iq1_s_decoded, decode_##name, decoded_columns_iq1_s, 4)
QGEMV_DEFINE_TILE_IQ1_S(iq1_s)
QGEMV_DEFINE_TILE_IQ1_S(iq1_st)

/* 3-bit fields sitting on bits 13..15 of each int16 -> 2 s + 1 */
static inline __m256i odd_scales_iq1_m(__m256i fields) {
    return _mm256_or_si256(_mm256_slli_epi16(_mm256_srli_epi16(fields, 13), 1), _mm256_set1_epi16(1));
}
/* the 16 scales 2 s_k + 1 as int16, k in lane k, from the four scale words (each 64-bit lane of
 * words holds all four): field k of word k / 4, shifted so that its 3 bits land on bits 13..15
 * (a multiply by 2^(13 - 3 (k % 4))), then brought down */
static inline __m256i scales_by_k_iq1_m(__m256i words) {
    const __m256i word_of_k = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3,
                                               4, 5, 4, 5, 4, 5, 4, 5, 6, 7, 6, 7, 6, 7, 6, 7);
    const __m256i shift_of_k = _mm256_setr_epi16(1 << 13, 1 << 10, 1 << 7, 1 << 4, 1 << 13, 1 << 10, 1 << 7, 1 << 4,
                                                 1 << 13, 1 << 10, 1 << 7, 1 << 4, 1 << 13, 1 << 10, 1 << 7, 1 << 4);
    return odd_scales_iq1_m(_mm256_mullo_epi16(_mm256_shuffle_epi8(words, word_of_k), shift_of_k));
}

/* the u = 8 g + 8 delta + 9 of a GGUF block's 256 values, 32 per vector in value order: the grid
 * points gathered, 9 + 8 delta added per group (10, or 8 where the sign bit is set) */
static inline void levels_iq1_m(const block_iq1_m *x, __m256i u[QK_K / 32]) {
    const __m256i eight = _mm256_set1_epi8(8);
    /* bytes of the per-group u offsets: groups 0, 1 | 2, 3 of the first sub-block, 4, 5 | 6, 7 of the second */
    const __m256i group_bytes0 = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                                  2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i group_bytes1 = _mm256_add_epi8(group_bytes0, _mm256_set1_epi8(4));
    for (int ib = 0; ib < QK_K / 32; ib += 2) {
        const uint32_t qh4 = qgemv_load_u32_iq1(x->qh + 2 * ib);
        const uint64_t idx0 = _pdep_u64(qgemv_load_u32_iq1(x->qs + 4 * ib), 0x00ff00ff00ff00ffULL)
                            | _pdep_u64(qh4 & 0x7777, 0x0f000f000f000f00ULL);
        const uint64_t idx1 = _pdep_u64(qgemv_load_u32_iq1(x->qs + 4 * ib + 4), 0x00ff00ff00ff00ffULL)
                            | _pdep_u64((qh4 >> 16) & 0x7777, 0x0f000f000f000f00ULL);
        const uint64_t offs = 0x0a0a0a0a0a0a0a0aULL - _pdep_u64(_pext_u32(qh4, 0x88888888u), 0x0202020202020202ULL);
        const __m256i offv = _mm256_set1_epi64x((long long)offs);
        u[ib] = _mm256_add_epi8(_mm256_sign_epi8(eight, gather_points_iq1(idx0)), _mm256_shuffle_epi8(offv, group_bytes0));
        u[ib + 1] = _mm256_add_epi8(_mm256_sign_epi8(eight, gather_points_iq1(idx1)), _mm256_shuffle_epi8(offv, group_bytes1));
    }
}

/* y = dl (g + delta) = (dl / 8) (u - 9): u - 9 = 8 (g + delta) is exact in int8 and dl / 8 in
 * float, so the one rounding, of the product, is the portable path's and ggml's; 32 values per
 * levels vector instead of a scalar scale, sign and grid index per 8 (4096 x 4096, 1 thread:
 * 20.0 -> 10.1 ms) */
static void dequant_row_iq1_m(const void *restrict src, float *restrict dst, int64_t n) {
    const block_iq1_m *x = (const block_iq1_m *)src;
    const __m256i nine = _mm256_set1_epi8(9);
    for (int64_t i = 0; i < n / QK_K; i++) {
        __m256i u[QK_K / 32];
        levels_iq1_m(&x[i], u);
        const float d = scale_iq1_m(&x[i]);
        for (int ib = 0; ib < QK_K / 32; ib++)
            qgemv_store_levels_16x2(_mm256_sub_epi8(u[ib], nine), d * (float)sub_scale_iq1_m(&x[i], 2 * ib) * 0.125f, 0.0f,
                                    d * (float)sub_scale_iq1_m(&x[i], 2 * ib + 1) * 0.125f, 0.0f, 0, dst + QK_K * i + 32 * ib);
    }
}

/* the same u from the trit layout (include/qgemv/blocks.h): u = 8 t + e, e = 2 (delta > 0) or 0,
 * the 8 t a shift and a mask of the 2-bit field, e a byte per group spread by pshufb */
static inline void levels_iq1_mt(const block_iq1_mt *b, __m256i u[QK_K / 32]) {
    const __m256i m = _mm256_set1_epi8(0x18);
    /* e of the 32 groups, byte j: 2 unless bit j of neg is set; each half of the groups in both lanes */
    const __m256i bits = _mm256_shuffle_epi8(_mm256_set1_epi32((int)b->neg),
                                             _mm256_setr_epi64x(0, 0x0101010101010101LL, 0x0202020202020202LL, 0x0303030303030303LL));
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    const __m256i e = _mm256_andnot_si256(_mm256_cmpeq_epi8(_mm256_and_si256(bits, bit), bit), _mm256_set1_epi8(2));
    const __m256i e_lo = _mm256_permute2x128_si256(e, e, 0x00), e_hi = _mm256_permute2x128_si256(e, e, 0x11);
    for (int h = 0; h < 2; h++) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(b->t + 32 * h));
        const __m256i t8[4] = {_mm256_and_si256(_mm256_slli_epi16(x, 3), m), _mm256_and_si256(_mm256_slli_epi16(x, 1), m),
                               _mm256_and_si256(_mm256_srli_epi16(x, 1), m), _mm256_and_si256(_mm256_srli_epi16(x, 3), m)};
        for (int l = 0; l < 4; l++) {
            const int v = 4 * h + l, g = (4 * v) % 16;   /* groups 4 v .. 4 v + 3: 2 per 128-bit lane */
            const __m256i pick = _mm256_setr_epi8(g, g, g, g, g, g, g, g, g + 1, g + 1, g + 1, g + 1, g + 1, g + 1, g + 1, g + 1,
                                                  g + 2, g + 2, g + 2, g + 2, g + 2, g + 2, g + 2, g + 2,
                                                  g + 3, g + 3, g + 3, g + 3, g + 3, g + 3, g + 3, g + 3);
            u[v] = _mm256_or_si256(t8[l], _mm256_shuffle_epi8(v < 4 ? e_lo : e_hi, pick));
        }
    }
}

/* one row against CB <= 8 columns, GGUF blocks (trits 0) or trit blocks (trits 1), each block's u
 * decoded once for all the columns; per column
 *   sum_b d d_a / 8 sum_k (2 s_k + 1) [sum_j u_j a_j - 9 bsum_k],  u = 8 g + 8 delta + 9,
 * the same u, integers and float steps from either layout and whatever CB is (vec_dot is the
 * GGUF CB = 1 case) */
QGEMV_ALWAYS_INLINE void tile_iq1_m_rows(int64_t nb, const void *row, const int trits, const uint8_t *a,
                                         int64_t act_stride, const int CB, float *out) {
    const block_iq1_m *x = (const block_iq1_m *)row;
    const block_iq1_mt *xt = (const block_iq1_mt *)row;
    const block_q8_K *y[QGEMV_TILE_COLS_MAX];
    __m256 acc = _mm256_setzero_ps();   /* columns in lanes */
    qgemv_tile_columns_q8_K(a, act_stride, CB, y);
    /* the scale fields, even k in the low half (lane k / 2) and odd k in the high half, even k in the low half (lane k / 2) and odd k in the high half */
    const __m256i word_of_pair = _mm256_setr_epi8(0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7,
                                                  0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7);
    const __m256i shift_of_pair = _mm256_setr_epi16(1 << 13, 1 << 7, 1 << 13, 1 << 7, 1 << 13, 1 << 7, 1 << 13, 1 << 7,
                                                    1 << 10, 1 << 4, 1 << 10, 1 << 4, 1 << 10, 1 << 4, 1 << 10, 1 << 4);
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *scales = trits ? xt[i].scales : x[i].scales;
        if (trits) QGEMV_PREFETCH_COLS_STREAM(&xt[i], sizeof(xt[0]), CB);
        else QGEMV_PREFETCH_COLS_STREAM(&x[i], sizeof(x[0]), CB);
        uint64_t sc;
        memcpy(&sc, scales, 8);
        const __m256i words = _mm256_set1_epi64x((long long)sc);
        const __m256i ls_k = scales_by_k_iq1_m(words);
        const __m256i ls_pair = odd_scales_iq1_m(_mm256_mullo_epi16(_mm256_shuffle_epi8(words, word_of_pair), shift_of_pair));
        /* 9 sum_k (2 s_k + 1) bsum_k, taken off at the end */
        const __m256i ls9 = _mm256_add_epi16(_mm256_slli_epi16(ls_k, 3), ls_k);
        __m256i u[QK_K / 32];
        if (trits) levels_iq1_mt(&xt[i], u);
        else levels_iq1_m(&x[i], u);
        __m256i sumi[QGEMV_TILE_COLS_MAX];
        for (int c = 0; c < CB; c++) {
            const block_q8_K *yc = &y[c][i];
            const __m256i bsums = _mm256_loadu_si256((const __m256i *)yc->bsums);
            sumi[c] = _mm256_sub_epi32(iq1_scaled_dot(u, yc->qs, ls_pair), _mm256_madd_epi16(bsums, ls9));
        }
        qgemv_columns_step_q8_K(scale_iq1_m_of(scales) * 0.125f, y, i, CB, sumi, &acc);
    }
    qgemv_columns_store(acc, CB, out);
}
QGEMV_ALWAYS_INLINE void tile_iq1_m(int64_t nb, const block_iq1_m *x, const uint8_t *a, int64_t act_stride,
                                    const int CB, float *out) {
    tile_iq1_m_rows(nb, x, 0, a, act_stride, CB, out);
}
QGEMV_ALWAYS_INLINE void tile_iq1_mt(int64_t nb, const block_iq1_mt *x, const uint8_t *a, int64_t act_stride,
                                     const int CB, float *out) {
    tile_iq1_m_rows(nb, x, 1, a, act_stride, CB, out);
}
QGEMV_DEFINE_VEC_DOT_AND_TILE_BY_KERNEL(iq1_m, q8_K, tile_iq1_m, QK_K, 8)
/* vec_dot_iq1_mt_q8_K and vec_dot_tile_iq1_mt_q8_K: the same over rows of trit blocks */
QGEMV_DEFINE_VEC_DOT_AND_TILE_BY_KERNEL(iq1_mt, q8_K, tile_iq1_mt, QK_K, 8)

#if defined(QGEMV_AVX2)
/* blocks as the packed tile reads them (src/packed_tile.h): u = 8 g + 8 delta + 64 (55 .. 73),
 * the scales 2 s + 1 per 16 values, d0 = d / 8; iq1_s's scale covers 32 values, iq1_m's 16.
 * iq1_s's only where VNNI is (plain AVX2 keeps its own tiles: the table below) */
#if defined(QGEMV_VNNI)
static inline void iq1_decode_u8_iq1_s_of(const __m256i g[QK_K / 32], const uint16_t qh[QK_K / 32], qgemv_half d,
                                          qgemv_decoded_u8 *dec) {
    for (int ib = 0; ib < QK_K / 32; ib++) {
        const __m256i base = _mm256_set1_epi8((char)(64 + delta_sign_iq1_s_of(qh[ib])));   /* 64 + 8 delta */
        _mm256_storeu_si256((__m256i *)(dec->u + 32 * ib), _mm256_add_epi8(_mm256_sign_epi8(_mm256_set1_epi8(8), g[ib]), base));
        dec->s[2 * ib] = dec->s[2 * ib + 1] = sub_scale_iq1_s_of(qh[ib]);
    }
    dec->d0 = qgemv_fp16_to_fp32(d) * 0.125f;
}
static void iq1_decode_u8_iq1_s(const block_iq1_s *b, qgemv_decoded_u8 *dec) {
    __m256i g[QK_K / 32];
    grid_values_iq1_s(b, g);
    iq1_decode_u8_iq1_s_of(g, b->qh, b->d, dec);
}
static void iq1_decode_u8_iq1_st(const block_iq1_st *b, qgemv_decoded_u8 *dec) {
    __m256i g[QK_K / 32];
    grid_values_iq1_st(b, g);
    iq1_decode_u8_iq1_s_of(g, b->qh, b->d, dec);
}
QGEMV_DEFINE_PACKED_TILE(iq1_s, iq1_decode_u8_iq1_s, 32)
QGEMV_DEFINE_PACKED_TILE_OVER(iq1_s_trits, block_iq1_st, iq1_decode_u8_iq1_st, 32)
#endif
/* iq1_m from its u = 8 g + 8 delta + 9 (a GGUF block's or a trit block's) and its scale words */
static inline void iq1_decode_u8_iq1_m_levels(const __m256i u[QK_K / 32], const uint8_t scales[QK_K / 32],
                                              qgemv_decoded_u8 *dec) {
    for (int v = 0; v < QK_K / 32; v++)
        _mm256_storeu_si256((__m256i *)(dec->u + 32 * v), _mm256_add_epi8(u[v], _mm256_set1_epi8(55)));
    uint64_t sc;
    memcpy(&sc, scales, 8);
    const __m256i s16 = scales_by_k_iq1_m(_mm256_set1_epi64x((long long)sc));
    _mm256_storeu_si256((__m256i *)dec->s, _mm256_cvtepi16_epi32(_mm256_castsi256_si128(s16)));
    _mm256_storeu_si256((__m256i *)(dec->s + 8), _mm256_cvtepi16_epi32(_mm256_extracti128_si256(s16, 1)));
    dec->d0 = scale_iq1_m_of(scales) * 0.125f;
}
static void iq1_decode_u8_iq1_m(const block_iq1_m *b, qgemv_decoded_u8 *dec) {
    __m256i u[QK_K / 32];
    levels_iq1_m(b, u);
    iq1_decode_u8_iq1_m_levels(u, b->scales, dec);
}
/* the same u from a trit block: a shift, a mask and a pshufb per 32 values where the GGUF block
 * takes four grid entries (batches that take packed columns read iq1_m's panels this way) */
static void iq1_decode_u8_iq1_mt(const block_iq1_mt *b, qgemv_decoded_u8 *dec) {
    __m256i u[QK_K / 32];
    levels_iq1_mt(b, u);
    iq1_decode_u8_iq1_m_levels(u, b->scales, dec);
}
QGEMV_DEFINE_PACKED_TILE(iq1_m, iq1_decode_u8_iq1_m, 16)
QGEMV_DEFINE_PACKED_TILE_OVER(iq1_m_trits, block_iq1_mt, iq1_decode_u8_iq1_mt, 16)
#endif

/* a GGUF block -> its trit block: t = u >> 3 (u = 8 t + e, e <= 2) packed as tq2_0's fields
 * (ternary.h); the delta signs (bit 3 of each qh nibble) gathered by pext */
static inline void trits_of_iq1_m(const block_iq1_m *x, block_iq1_mt *y) {
    __m256i u[QK_K / 32];
    levels_iq1_m(x, u);
    for (int v = 0; v < QK_K / 32; v++) u[v] = _mm256_and_si256(_mm256_srli_epi16(u[v], 3), _mm256_set1_epi8(3));
    pack_2bit(u, y->t);
    uint64_t qh[2];
    memcpy(qh, x->qh, 16);
    y->neg = (uint32_t)(_pext_u64(qh[0], 0x8888888888888888ULL) | _pext_u64(qh[1], 0x8888888888888888ULL) << 16);
    memcpy(y->scales, x->scales, sizeof(y->scales));
}
/* a GGUF iq1_s block -> its trit block: t = g + 1 of the gathered points, qh and d as stored */
static inline void trits_of_iq1_s(const block_iq1_s *x, block_iq1_st *y) {
    __m256i g[QK_K / 32];
    grid_values_iq1_s(x, g);
    for (int v = 0; v < QK_K / 32; v++) g[v] = _mm256_add_epi8(g[v], _mm256_set1_epi8(1));
    pack_2bit(g, y->t);
    memcpy(y->qh, x->qh, sizeof(y->qh));
    y->d = x->d;
}


#else

static inline int32_t dot_point_iq1(uint64_t point, const int8_t *a) {
    int8_t g[8];
    memcpy(g, &point, 8);
    int32_t s = 0;
    for (int j = 0; j < 8; j++) s += g[j] * a[j];
    return s;
}

static float vec_dot_iq1_s_q8_K(int64_t n, const void *restrict w, const void *restrict a) {
    const block_iq1_s *x = (const block_iq1_s *)w;
    const block_q8_K *y = (const block_q8_K *)a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / QK_K; i++) {
        int32_t sumi = 0;
        for (int ib = 0; ib < QK_K / 32; ib++) {
            int32_t s = 0;
            for (int l = 0; l < 4; l++)
                s += dot_point_iq1(iq1s_grid[grid_index_iq1_s(&x[i], ib, l)], y[i].qs + 32 * ib + 8 * l);
            const int bsum = y[i].bsums[2 * ib] + y[i].bsums[2 * ib + 1];
            sumi += sub_scale_iq1_s(&x[i], ib) * (8 * s + delta_sign_iq1_s(&x[i], ib) * bsum);
        }
        sum = fmaf((float)sumi * (qgemv_fp16_to_fp32(x[i].d) * 0.125f), y[i].d, sum);
    }
    return sum;
}

/* a GGUF block's 256 grid values g (-1, 0, 1) and its delta signs (bit j: group j negative) */
static inline uint32_t grid_values_iq1_m(const block_iq1_m *x, int8_t q[QK_K]) {
    uint32_t neg = 0;
    for (int g = 0; g < QK_K / 8; g++) {
        const uint64_t point = iq1s_grid[grid_index_iq1_m(x, g)];
        memcpy(q + 8 * g, &point, 8);
        if (delta_sign_iq1_m(x, g) < 0) neg |= 1u << g;
    }
    return neg;
}
/* sum_k (2 s_k + 1) sum_{groups g of k} (8 sum_j g_j a_j + (+-1) sum_j a_j): a block's exact integer */
static int32_t block_sumi_iq1_m(const int8_t q[QK_K], uint32_t neg, const uint8_t scales[QK_K / 32], const int8_t *aq) {
    int32_t sumi = 0;
    for (int k = 0; k < QK_K / 16; k++) {
        int32_t s = 0;
        for (int g = 2 * k; g < 2 * k + 2; g++) {
            int32_t asum = 0, dot = 0;
            for (int j = 0; j < 8; j++) {
                asum += aq[8 * g + j];
                dot += q[8 * g + j] * aq[8 * g + j];
            }
            s += 8 * dot + (neg >> g & 1 ? -asum : asum);
        }
        sumi += sub_scale_iq1_m_of(scales, k) * s;
    }
    return sumi;
}

static float vec_dot_iq1_m_q8_K(int64_t n, const void *restrict w, const void *restrict a) {
    const block_iq1_m *x = (const block_iq1_m *)w;
    const block_q8_K *y = (const block_q8_K *)a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / QK_K; i++) {
        int8_t q[QK_K];
        const uint32_t neg = grid_values_iq1_m(&x[i], q);
        sum = fmaf((float)block_sumi_iq1_m(q, neg, x[i].scales, y[i].qs) * (scale_iq1_m(&x[i]) * 0.125f), y[i].d, sum);
    }
    return sum;
}

/* vec_dot_iq1_m_q8_K's arithmetic on trit blocks: the same integers, the same float steps */
static float vec_dot_iq1_mt_q8_K(int64_t n, const void *restrict w, const void *restrict a) {
    const block_iq1_mt *x = (const block_iq1_mt *)w;
    const block_q8_K *y = (const block_q8_K *)a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / QK_K; i++) {
        int8_t q[QK_K];
        levels_2bit_ref(x[i].t, q);   /* the grid values t - 1 */
        sum = fmaf((float)block_sumi_iq1_m(q, x[i].neg, x[i].scales, y[i].qs) * (scale_iq1_m_of(x[i].scales) * 0.125f),
                   y[i].d, sum);
    }
    return sum;
}

/* a GGUF block -> its trit block (include/qgemv/blocks.h) */
static inline void trits_of_iq1_m(const block_iq1_m *x, block_iq1_mt *y) {
    int8_t q[QK_K];
    y->neg = grid_values_iq1_m(x, q);
    pack_2bit_ref(q, y->t);
    memcpy(y->scales, x->scales, sizeof(y->scales));
}
/* vec_dot_iq1_s_q8_K's arithmetic on trit blocks: the same integers, the same float steps */
static float vec_dot_iq1_st_q8_K(int64_t n, const void *restrict w, const void *restrict a) {
    const block_iq1_st *x = (const block_iq1_st *)w;
    const block_q8_K *y = (const block_q8_K *)a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / QK_K; i++) {
        int8_t q[QK_K];
        levels_2bit_ref(x[i].t, q);   /* the grid values t - 1 */
        int32_t sumi = 0;
        for (int ib = 0; ib < QK_K / 32; ib++) {
            int32_t s = 0;
            for (int j = 0; j < 32; j++) s += q[32 * ib + j] * y[i].qs[32 * ib + j];
            const int bsum = y[i].bsums[2 * ib] + y[i].bsums[2 * ib + 1];
            sumi += sub_scale_iq1_s_of(x[i].qh[ib]) * (8 * s + delta_sign_iq1_s_of(x[i].qh[ib]) * bsum);
        }
        sum = fmaf((float)sumi * (qgemv_fp16_to_fp32(x[i].d) * 0.125f), y[i].d, sum);
    }
    return sum;
}
/* a GGUF iq1_s block -> its trit block */
static inline void trits_of_iq1_s(const block_iq1_s *x, block_iq1_st *y) {
    int8_t q[QK_K];
    for (int ib = 0; ib < QK_K / 32; ib++)
        for (int l = 0; l < 4; l++) {
            const uint64_t point = iq1s_grid[grid_index_iq1_s(x, ib, l)];
            memcpy(q + 32 * ib + 8 * l, &point, 8);
        }
    pack_2bit_ref(q, y->t);
    memcpy(y->qh, x->qh, sizeof(y->qh));
    y->d = x->d;
}
QGEMV_DEFINE_VEC_DOT_TILE_GENERIC(QGEMV_ID_iq1_s, iq1_st, q8_K, QGEMV_ID_q8_K)
QGEMV_DEFINE_VEC_DOT_TILE_GENERIC(QGEMV_ID_iq1_m, iq1_mt, q8_K, QGEMV_ID_q8_K)

#endif

/* the panels of iq1_s's and iq1_m's prepared layouts (_formats.py: interleave, panel_type_size): 8
 * rows of trit blocks (src/tiles.h: QGEMV_DEFINE_ROW_PANELS); every row and column gets
 * vec_dot_<name>_q8_K's bits */
#define QGEMV_PANEL_BLOCK_iq1_s block_iq1_st
#define QGEMV_PANEL_BLOCK_iq1_m block_iq1_mt
QGEMV_DEFINE_ROW_PANELS(iq1_s, block_iq1_st, trits_of_iq1_s, QGEMV_ROWS_TILE_Q8_K(iq1_st))
QGEMV_DEFINE_ROW_PANELS(iq1_m, block_iq1_mt, trits_of_iq1_m, QGEMV_ROWS_TILE_Q8_K(iq1_mt))

/* the specialised tiles of this family (src/kernels.c puts them in the table) */
#if defined(QGEMV_AVX2)
/* (name, from how many columns, act): on AVX-512 from the GGUF rows iq1_m's packed tile waits for
 * 16 columns; on AVX-VNNI, whose own tiles run in 16 registers, it beats them from 6 (Intel Xeon
 * as AVX-VNNI, 4096 x 4096, 2 threads, batch 6 / 8: 1.24 -> 1.15 / 1.69 -> 1.17 ms; iq1_s
 * 0.89 -> 1.03 / 1.10 -> 1.02).  On plain AVX2 (vpdpbusd as three instructions: packed_tile.h)
 * iq1_m's from 8 (Intel Xeon, QGEMV_ISA=avx2, 4096 x 4096, 2 threads, builds alternating, its
 * trit blocks' tile against the packed one, batch 6 / 8 / 16 / 32: 1.46 / 1.72 / 3.65 / 7.65 ->
 * 1.52 / 1.51 / 2.65 / 5.17 ms); iq1_s's own tiles stay ahead there (batch 8 / 32: 1.26 / 4.63
 * -> 2.21 / 5.20), so its packed tiles are the VNNI variants' alone */
#if defined(QGEMV_VNNI)
#define QGEMV_PACKED_IQ1_S(...) __VA_ARGS__
#else
#define QGEMV_PACKED_IQ1_S(...)
#endif
#define QGEMV_PACKED_TILES_IQ1(X) QGEMV_PACKED_IQ1_S(X(iq1_s, 8, q8_K)) X(iq1_m, QGEMV_PACKED_FROM(16, 6, 8), q8_K)
/* (name, over its panels' rows, from how many columns): on AVX-512 the packed tile beats the trit
 * blocks' own tile from 8 columns on (C harness, 4096 x 4096, 1 thread, batch 6 / 7 / 8 / 12 /
 * 16: 1.04 / 1.21 / 1.20 / 1.41-1.49 / 1.80-1.87x).  On AVX-VNNI (as above) iq1_m's from 6
 * (1.09 -> 0.91 ms), iq1_s's from 12 (its own tile 0.84-0.85 ms at batch 8, the packed one's 16
 * lanes 1.33-1.63 from 9 to 16 columns, its own tile 1.36-1.76 at 12, 1.65-1.89 at 16) */
#define QGEMV_PACKED_PANEL_TILES_IQ1(X) QGEMV_PACKED_IQ1_S(X(iq1_s, packed_tile_iq1_s_trits, QGEMV_PACKED_FROM(8, 12, 0))) \
    X(iq1_m, packed_tile_iq1_m_trits, QGEMV_PACKED_FROM(8, 6, 8))
#else
#define QGEMV_PACKED_TILES_IQ1(X)
#define QGEMV_PACKED_PANEL_TILES_IQ1(X)
#endif
#if defined(QGEMV_AVX2)
#define QGEMV_TILES_IQ1(X) X(iq1_s, q8_K) X(iq1_m, q8_K)
#else
#define QGEMV_TILES_IQ1(X)   /* portable: the generic tiles (src/tiles.h) */
#endif
