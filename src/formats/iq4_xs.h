/* iq4_xs: 256-value super-blocks of the iq4_nl levels with a 6-bit scale per 32 values.
 *
 *   x[32 ib + j] = d * (ls[ib] - 32) * kvalues_iq4nl[q[32 ib + j]],   4.25 bits per weight
 *
 * d is an f16; ls[ib] is 6 bits: its low nibble in scales_l (sub-block 2k in the low nibble of
 * scales_l[k], 2k+1 in the high one), its two high bits at bits 2 ib of scales_h.  Within a
 * sub-block, qs[16 ib + j] holds value j (low nibble) and value j + 16 (high nibble), as iq4_nl.
 *
 * Written once as
 *   sub_scale_iq4_xs(b, ib)   ls[ib] - 32,
 *   unpack_iq4_xs_ref(b, ib, q)  the 32 int8 levels of sub-block ib (portable),
 * with dequant_row_iq4_xs and vec_dot_iq4_xs_q8_K around them.  The AVX2 product (tile_iq4_xs,
 * one row against up to 8 columns) puts each sub-block's levels in value order, one register
 * per sub-block, as the q8_K values lie.
 */

/* ls - 32 for sub-block ib: the signed 6-bit scale */
static inline int sub_scale_iq4_xs(const block_iq4_xs *b, int ib) {
    const int lo = (b->scales_l[ib / 2] >> (4 * (ib % 2))) & 0x0f;
    const int hi = (b->scales_h >> (2 * ib)) & 3;
    return (lo | hi << 4) - 32;
}

static inline void unpack_iq4_xs_ref(const block_iq4_xs *b, int ib, int8_t q[32]) {
    const uint8_t *qs = b->qs + 16 * ib;
    for (int j = 0; j < 16; j++) {
        q[j] = kvalues_iq4nl[qs[j] & 0x0f];
        q[j + 16] = kvalues_iq4nl[qs[j] >> 4];
    }
}

/* x = (d (ls - 32)) kvalues[q]: the sub-block scale rounded once, then one product, as ggml */
static void dequant_row_iq4_xs(const void *restrict src, float *restrict dst, int64_t n) {
    const block_iq4_xs *x = (const block_iq4_xs *)src;
    for (int64_t i = 0; i < n / QK_K; i++, dst += QK_K) {
        const float d = qgemv_fp16_to_fp32(x[i].d);
        for (int ib = 0; ib < QK_K / 32; ib++) {
            const float dl = d * (float)sub_scale_iq4_xs(&x[i], ib);
#if defined(QGEMV_AVX2)
            qgemv_store_levels_32(qgemv_lookup16(kvalues_iq4nl, qgemv_nibbles_32(x[i].qs + 16 * ib)),
                                  dl, 0.0f, 0, dst + 32 * ib);
#else
            int8_t q[32];
            unpack_iq4_xs_ref(&x[i], ib, q);
            for (int j = 0; j < 32; j++) dst[32 * ib + j] = dl * (float)q[j];
#endif
        }
    }
}

#if defined(QGEMV_AVX2)
/* the eight ls - 32 of a super-block as int16, in both 128-bit halves:
 * low nibbles spread one per byte, the 2-bit high parts put above them */
static inline __m256i sub_scales_iq4_xs(const block_iq4_xs *b) {
    uint32_t lo;
    memcpy(&lo, b->scales_l, 4);
    const uint64_t ls = _pdep_u64(lo, 0x0f0f0f0f0f0f0f0fULL) | _pdep_u64(b->scales_h, 0x3030303030303030ULL);
    const __m128i s8 = _mm_sub_epi8(_mm_cvtsi64_si128((long long)ls), _mm_set1_epi8(32));
    return _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(s8));
}

/* the 32 levels of a sub-block in value order: its 16 bytes in both halves, the high half shifted
 * down a nibble (a per-lane shift, not a shuffle), then looked up */
static inline __m256i levels_iq4_xs(const uint8_t qs[16], __m256i table) {
    const __m256i b = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)qs));
    const __m256i nib = _mm256_and_si256(_mm256_srlv_epi32(b, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)),
                                         _mm256_set1_epi8(0x0f));
    return _mm256_shuffle_epi8(table, nib);
}

/* one row against CB <= 8 columns: per super-block and column
 *     sum_ib (ls_ib - 32) sum_j kvalues[q_j] a_j     (exact int32 lanes, then their exact total),
 * then one scalar fma by d_x d_y,
 * each sub-block's levels looked up in value order (as the q8_K values lie) with their
 * magnitudes and scale once for all the columns; per column a sub-block costs sign, maddubs,
 * madd, add.  vec_dot is the CB = 1 case, so a batch gives vec_dot's bits.  Per sub-block pair
 * the decode takes 4 shuffle-port ops (2 lookups, 2 scale broadcasts), as the former vec_dot's
 * 5 (2 lookups, 2 activation permutes, 1 scale): GEMV as fast (C harness, 4096 x 4096, 1 thread,
 * 0.78-0.82 ms either way), batch 8 6.7 -> 4.4 ms, batch 32 26.8 -> 17.2 ms; putting the
 * levels in value order by 2 permutes after the lookups cost GEMV 10%.  The one fma a super-block
 * is the arithmetic of the 16-row panels (superblocks_x16.h) that serve every x86 variant's
 * products of prepared matrices (ggml's AVX2 code keeps 8 float lanes instead), so the GGUF rows
 * and the panels give the same bits */
QGEMV_ALWAYS_INLINE void tile_iq4_xs(int64_t nb, const block_iq4_xs *x, const uint8_t *a, int64_t act_stride,
                                     const int CB, float *out) {
    const block_q8_K *y[QGEMV_TILE_COLS_MAX];
    qgemv_tile_columns_q8_K(a, act_stride, CB, y);
    float sums[QGEMV_TILE_COLS_MAX] = {0};
    const __m128i kv = _mm_loadu_si128((const __m128i *)kvalues_iq4nl);
    const __m256i table = _mm256_set_m128i(kv, kv);
    for (int64_t i = 0; i < nb; i++) {
        QGEMV_PREFETCH_COLS_STREAM(&x[i], sizeof(x[0]), CB);
        const __m256i scales = sub_scales_iq4_xs(&x[i]);
        __m256i sum[QGEMV_TILE_COLS_MAX];
        for (int c = 0; c < CB; c++) sum[c] = _mm256_setzero_si256();
        for (int p = 0; p < QK_K / 64; p++) {
            const __m256i w0 = levels_iq4_xs(x[i].qs + 32 * p, table), w1 = levels_iq4_xs(x[i].qs + 32 * p + 16, table);
            const __m256i u0 = _mm256_sign_epi8(w0, w0), u1 = _mm256_sign_epi8(w1, w1);
            const qgemv_signs_32 s0 = qgemv_signs_of_bytes_32(w0), s1 = qgemv_signs_of_bytes_32(w1);
            /* the scales as iquants.h's layout has them: element ib in both halves */
            const __m256i sc0 = iq_scales_of_sub(scales, 2 * p), sc1 = iq_scales_of_sub(scales, 2 * p + 1);
            for (int c = 0; c < CB; c++) {
                const int8_t *aq = y[c][i].qs + 64 * p;
                sum[c] = iq_dot_sub_acc(iq_dot_sub_acc(sum[c], u0, s0, aq, sc0), u1, s1, aq + 32, sc1);
            }
        }
        const float dx = qgemv_fp16_to_fp32(x[i].d);
        for (int c = 0; c < CB; c++) sums[c] = qgemv_fma_total_i32x8(dx * y[c][i].d, sum[c], sums[c]);
    }
    for (int c = 0; c < CB; c++) out[c] = sums[c];
}
QGEMV_DEFINE_VEC_DOT_AND_TILE_BY_KERNEL(iq4_xs, q8_K, tile_iq4_xs, QK_K, 8)
#define QGEMV_TILES_IQ4_XS(X) X(iq4_xs, q8_K)

#else
static float vec_dot_iq4_xs_q8_K(int64_t n, const void *restrict w, const void *restrict a) {
    const block_iq4_xs *x = (const block_iq4_xs *)w;
    const block_q8_K *y = (const block_q8_K *)a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / QK_K; i++) {
        int32_t sumi = 0;
        for (int ib = 0; ib < QK_K / 32; ib++) {
            int8_t q[32];
            unpack_iq4_xs_ref(&x[i], ib, q);
            int32_t s = 0;
            for (int j = 0; j < 32; j++) s += q[j] * y[i].qs[32 * ib + j];
            sumi += sub_scale_iq4_xs(&x[i], ib) * s;
        }
        sum += qgemv_fp16_to_fp32(x[i].d) * y[i].d * (float)sumi;
    }
    return sum;
}
#define QGEMV_TILES_IQ4_XS(X)   /* portable: the generic tile (src/tiles.h) */
#endif
