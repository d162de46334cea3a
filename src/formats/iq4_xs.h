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
 * with dequant_row_iq4_xs and vec_dot_iq4_xs_q8_K around them.  The AVX2 product works on two
 * sub-blocks (64 values, one 32-byte load of qs) at a time: the low nibbles of both go into one
 * register, the high nibbles into another, and the q8_K values are permuted to match, so the
 * per-sub-block scale is simply the low or high 128-bit half of one int16 vector.
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

/* sum_j q_j a_j over 16 lanes of int16 pairs, for signed q and a (|q|, |a| <= 127) */
static inline __m256i qgemv_maddubs_s8s8(__m256i q, __m256i a) {
    return _mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(a, q));
}

/* sum_b d_x d_y sum_ib (ls_ib - 32) sum_j kvalues[q_j] a_j: integer within a super-block */
static float vec_dot_iq4_xs_q8_K(int64_t n, const void *restrict w, const void *restrict a) {
    const block_iq4_xs *x = (const block_iq4_xs *)w;
    const block_q8_K *y = (const block_q8_K *)a;
    const __m128i kv = _mm_loadu_si128((const __m128i *)kvalues_iq4nl);
    const __m256i table = _mm256_set_m128i(kv, kv);
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / QK_K; i++) {
        QGEMV_PREFETCH_STREAM(&x[i], sizeof(x[0]));
        const __m256i scales = sub_scales_iq4_xs(&x[i]);
        /* word index of sub-block 2p in the low half, 2p + 1 in the high half */
        __m256i pick = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                                        2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
        __m256i sum0 = _mm256_setzero_si256(), sum1 = _mm256_setzero_si256();
        for (int p = 0; p < QK_K / 64; p++) {
            const __m256i qs = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * p));
            const __m256i q_lo = _mm256_shuffle_epi8(table, _mm256_and_si256(qs, low4));
            const __m256i q_hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(qs, 4), low4));
            const __m256i a0 = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * p));
            const __m256i a1 = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * p + 32));
            /* values 0..15 of both sub-blocks, then values 16..31 of both */
            const __m256i a_lo = _mm256_permute2x128_si256(a0, a1, 0x20);
            const __m256i a_hi = _mm256_permute2x128_si256(a0, a1, 0x31);
            const __m256i sc = _mm256_shuffle_epi8(scales, pick);
            pick = _mm256_add_epi8(pick, _mm256_set1_epi8(4));
            sum0 = _mm256_add_epi32(sum0, _mm256_madd_epi16(qgemv_maddubs_s8s8(q_lo, a_lo), sc));
            sum1 = _mm256_add_epi32(sum1, _mm256_madd_epi16(qgemv_maddubs_s8s8(q_hi, a_hi), sc));
        }
        const float d = qgemv_fp16_to_fp32(x[i].d) * y[i].d;
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(_mm256_add_epi32(sum0, sum1)), acc);
    }
    return qgemv_hsum_f32x8(acc);
}
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
#endif
