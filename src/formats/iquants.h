/* The grid formats: iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s (256-value blocks, q8_K activations).
 *
 * Each 32-value sub-block stores indices into a grid of points (8 magnitudes per point for the
 * iq2 formats, 4 for the iq3 formats; include/qgemv/grids.h), one sign bit per value and 4-bit
 * scales s (one per 32 values, or one per 16 for iq2_xs / iq2_s):
 *   x = db(s) * sign * grid[idx][j]
 * with db(s) = d (0.5 + s) / 4 (iq2_*), d (0.5 + s) / 2 (iq3_xxs), d (1 + 2 s) (iq3_s): in
 * every case d (2 s + 1) * factor, factor = 1/8, 1/4, 1.  Signs come either as 7 bits whose
 * 8th is the parity (ksigns_iq2xs / ksigns64) or as raw bytes.
 *
 * Each format is written once as
 *   sub_scales_<name>(b, ib32, s[2])     the 4-bit scales of the sub-block's two halves,
 *   levels_<name>_ref(b, ib32, q)        its 32 signed levels, portable C,
 *   grid_<name>(b, ib32, &sgn)           its 32 magnitudes as one __m256i, sgn a
 *                                        _mm256_sign_epi8 operand: a negative byte where the
 *                                        value is negative, never 0 (AVX2 and up),
 * and the loops around them once, below: dequant_row_<name> (ggml's rounding: y = db * q,
 * db as ggml computes it; the sign flip is exact) and vec_dot_<name>_q8_K:
 *   acc += (t d0) d_y per super-block, t = sum_sub (2 s + 1) sum_j q_j a_j exact, d0 = d_x factor,
 * one fma (as ggml's tiled kernels, which llama.cpp runs for batches of 8 and more).
 */

static inline uint64_t iq_load_u64(const void *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t iq_load_u32(const void *p) { uint32_t v; memcpy(&v, p, 4); return v; }

/* 8 values of a grid point (byte j of the entry is value j) with signs (bit j: value j < 0) */
static inline void iq_signed_8(uint64_t point, uint8_t signs, int8_t q[8]) {
    for (int j = 0; j < 8; j++) {
        const int v = (int)((point >> (8 * j)) & 0xff);
        q[j] = (int8_t)((signs >> j) & 1 ? -v : v);
    }
}

/* ---------------------------------------------------------------- iq2_xxs
 * per 32 values: 4 grid bytes (iq2xxs_grid), then 4 x 7 sign bits and s in the top 4 bits */
static inline void sub_scales_iq2_xxs(const block_iq2_xxs *b, int ib32, int s[2]) {
    s[0] = s[1] = (int)(iq_load_u32(b->qs + 4 * ib32 + 2) >> 28);
}
static inline float db_iq2_xxs(float d, int s) { return d * (0.5f + (float)s) * 0.25f; }
static inline void levels_iq2_xxs_ref(const block_iq2_xxs *b, int ib32, int8_t q[32]) {
    const uint32_t idx = iq_load_u32(b->qs + 4 * ib32), sg = iq_load_u32(b->qs + 4 * ib32 + 2);
    for (int l = 0; l < 4; l++)
        iq_signed_8(iq2xxs_grid[(idx >> (8 * l)) & 0xff], ksigns_iq2xs[(sg >> (7 * l)) & 127], q + 8 * l);
}

/* ---------------------------------------------------------------- iq2_xs
 * per 8 values: uint16 = 9-bit index into iq2xs_grid | 7 sign bits << 9; s per 16 values */
static inline void sub_scales_iq2_xs(const block_iq2_xs *b, int ib32, int s[2]) {
    s[0] = b->scales[ib32] & 0x0f;
    s[1] = b->scales[ib32] >> 4;
}
static inline float db_iq2_xs(float d, int s) { return d * (0.5f + (float)s) * 0.25f; }
static inline void levels_iq2_xs_ref(const block_iq2_xs *b, int ib32, int8_t q[32]) {
    for (int l = 0; l < 4; l++) {
        const uint16_t v = b->qs[4 * ib32 + l];
        iq_signed_8(iq2xs_grid[v & 511], ksigns_iq2xs[v >> 9], q + 8 * l);
    }
}

/* ---------------------------------------------------------------- iq2_s
 * per 8 values: index = qs byte | 2 bits of qh << 8 into iq2s_grid, one raw sign byte
 * (qs[32 + ...]); s per 16 values */
static inline void sub_scales_iq2_s(const block_iq2_s *b, int ib32, int s[2]) {
    s[0] = b->scales[ib32] & 0x0f;
    s[1] = b->scales[ib32] >> 4;
}
static inline float db_iq2_s(float d, int s) { return d * (0.5f + (float)s) * 0.25f; }
static inline int iq2_s_index(const block_iq2_s *b, int ib32, int l) {
    return b->qs[4 * ib32 + l] | ((b->qh[ib32] >> (2 * l)) & 3) << 8;
}
static inline void levels_iq2_s_ref(const block_iq2_s *b, int ib32, int8_t q[32]) {
    const uint8_t *signs = b->qs + QK_K / 8;
    for (int l = 0; l < 4; l++)
        iq_signed_8(iq2s_grid[iq2_s_index(b, ib32, l)], signs[4 * ib32 + l], q + 8 * l);
}

/* ---------------------------------------------------------------- iq3_xxs
 * per 4 values: a byte index into iq3xxs_grid (qs[0..63]); per 32 values a uint32 of
 * 4 x 7 sign bits and s in the top 4 bits (qs[64..95]) */
static inline void sub_scales_iq3_xxs(const block_iq3_xxs *b, int ib32, int s[2]) {
    s[0] = s[1] = (int)(iq_load_u32(b->qs + QK_K / 4 + 4 * ib32) >> 28);
}
static inline float db_iq3_xxs(float d, int s) { return d * (0.5f + (float)s) * 0.5f; }
static inline void levels_iq3_xxs_ref(const block_iq3_xxs *b, int ib32, int8_t q[32]) {
    const uint8_t *idx = b->qs + 8 * ib32;
    const uint32_t sg = iq_load_u32(b->qs + QK_K / 4 + 4 * ib32);
    for (int l = 0; l < 4; l++) {
        const uint64_t point = iq3xxs_grid[idx[2 * l]] | (uint64_t)iq3xxs_grid[idx[2 * l + 1]] << 32;
        iq_signed_8(point, ksigns_iq2xs[(sg >> (7 * l)) & 127], q + 8 * l);
    }
}

/* ---------------------------------------------------------------- iq3_s
 * per 4 values: index = qs byte | 1 bit of qh << 8 into iq3s_grid; raw sign bytes; one s per
 * 32 values (a nibble of scales[ib32 / 2]) */
static inline void sub_scales_iq3_s(const block_iq3_s *b, int ib32, int s[2]) {
    s[0] = s[1] = (b->scales[ib32 / 2] >> (4 * (ib32 & 1))) & 0x0f;
}
static inline float db_iq3_s(float d, int s) { return d * (float)(1 + 2 * s); }
static inline int iq3_s_index(const block_iq3_s *b, int ib32, int k) {
    return b->qs[8 * ib32 + k] | ((b->qh[ib32] >> k) & 1) << 8;
}
static inline void levels_iq3_s_ref(const block_iq3_s *b, int ib32, int8_t q[32]) {
    for (int l = 0; l < 4; l++) {
        const uint64_t point = iq3s_grid[iq3_s_index(b, ib32, 2 * l)]
                             | (uint64_t)iq3s_grid[iq3_s_index(b, ib32, 2 * l + 1)] << 32;
        iq_signed_8(point, b->signs[4 * ib32 + l], q + 8 * l);
    }
}

#if defined(QGEMV_AVX2)
/* the sign bytes (ksigns_iq2xs) of bytes s holding 7 sign bits each: bit 7 set to their parity,
 * by a nibble-parity lookup of bits 0-3 xor bits 4-6 */
static inline __m256i iq_with_parity(__m256i s) {
    const __m256i parity = _mm256_broadcastsi128_si256(_mm_setr_epi8(
        0, (char)0x80, (char)0x80, 0, (char)0x80, 0, 0, (char)0x80, (char)0x80, 0, 0, (char)0x80, 0, (char)0x80, (char)0x80, 0));
    const __m256i nib = _mm256_and_si256(_mm256_xor_si256(s, _mm256_srli_epi16(s, 4)), _mm256_set1_epi8(0x0f));
    return _mm256_or_si256(s, _mm256_shuffle_epi8(parity, nib));
}
/* the 8 sub-blocks' uint32 words sg (lane k: sub-block k; bits 7 l .. 7 l + 6: the signs of
 * values 8 l .. 8 l + 6) -> their 32 sign bytes, byte 4 k + l of group l of sub-block k */
static inline void iq_sign_bytes7(__m256i sg, uint8_t out[32]) {
    const __m256i b = _mm256_or_si256(
        _mm256_or_si256(_mm256_and_si256(sg, _mm256_set1_epi32(0x7f)),
                        _mm256_and_si256(_mm256_slli_epi32(sg, 1), _mm256_set1_epi32(0x7f00))),
        _mm256_or_si256(_mm256_and_si256(_mm256_slli_epi32(sg, 2), _mm256_set1_epi32(0x7f0000)),
                        _mm256_and_si256(_mm256_slli_epi32(sg, 3), _mm256_set1_epi32(0x7f000000))));
    _mm256_storeu_si256((__m256i *)out, iq_with_parity(b));
}
#if defined(QGEMV_AVX512)
/* 8 uint32 / 4 uint64 table entries (e0 in lane 0), each by one EVEX broadcast load merged under
 * a mask: AVX2's VEX blends cannot reach ymm16-31, so GCC copied registers around them */
static inline __m256i iq_set8_u32(const uint32_t *p7, const uint32_t *p6, const uint32_t *p5, const uint32_t *p4,
                                  const uint32_t *p3, const uint32_t *p2, const uint32_t *p1, const uint32_t *p0) {
    __m256i a = _mm256_set1_epi32((int)*p0);
    __m256i b = _mm256_set1_epi32((int)*p4);
    a = _mm256_mask_set1_epi32(a, 0x02, (int)*p1);
    b = _mm256_mask_set1_epi32(b, 0x20, (int)*p5);
    a = _mm256_mask_set1_epi32(a, 0x04, (int)*p2);
    b = _mm256_mask_set1_epi32(b, 0x40, (int)*p6);
    a = _mm256_mask_set1_epi32(a, 0x08, (int)*p3);
    b = _mm256_mask_set1_epi32(b, 0x80, (int)*p7);
    return _mm256_mask_blend_epi32(0xf0, a, b);
}
static inline __m256i iq_set4_u64(const uint64_t *p3, const uint64_t *p2, const uint64_t *p1, const uint64_t *p0) {
    const __m256i a = _mm256_mask_set1_epi64(_mm256_set1_epi64x((long long)*p0), 0x2, (long long)*p1);
    const __m256i b = _mm256_mask_set1_epi64(_mm256_set1_epi64x((long long)*p2), 0x8, (long long)*p3);
    return _mm256_mask_blend_epi64(0xc, a, b);
}
#else
/* 8 uint32 table entries (e0 in lane 0) by broadcast loads and blends, no shuffle-port inserts */
static inline __m256i iq_set8_u32(const uint32_t *p7, const uint32_t *p6, const uint32_t *p5, const uint32_t *p4,
                                  const uint32_t *p3, const uint32_t *p2, const uint32_t *p1, const uint32_t *p0) {
    const __m256i a = _mm256_blend_epi32(_mm256_castsi128_si256(_mm_cvtsi32_si128((int)*p0)), _mm256_set1_epi32((int)*p1), 0x02);
    const __m256i b = _mm256_blend_epi32(_mm256_set1_epi32((int)*p2), _mm256_set1_epi32((int)*p3), 0x08);
    const __m256i c = _mm256_blend_epi32(_mm256_set1_epi32((int)*p4), _mm256_set1_epi32((int)*p5), 0x20);
    const __m256i d = _mm256_blend_epi32(_mm256_set1_epi32((int)*p6), _mm256_set1_epi32((int)*p7), 0x80);
    return _mm256_blend_epi32(_mm256_blend_epi32(a, b, 0x0c), _mm256_blend_epi32(c, d, 0xc0), 0xf0);
}

/* 4 uint64 table entries (e0 in lane 0) by broadcast loads and blends, as iq_set8_u32 */
static inline __m256i iq_set4_u64(const uint64_t *p3, const uint64_t *p2, const uint64_t *p1, const uint64_t *p0) {
    const __m256i a = _mm256_blend_epi32(_mm256_set1_epi64x((long long)*p0), _mm256_set1_epi64x((long long)*p1), 0x0c);
    const __m256i b = _mm256_blend_epi32(_mm256_set1_epi64x((long long)*p2), _mm256_set1_epi64x((long long)*p3), 0xc0);
    return _mm256_blend_epi32(a, b, 0xf0);
}
#endif

/* ix itself, hidden from the optimiser, so that the indices and signs grid_<name> reads from it
 * come from memory (one load each, an address or a mask register) and not out of the vector
 * registers grid_indices_<name> stored (GCC's forwarding: a 2-uop vpextrw per index) */
static inline const uint16_t *iq_indices_in_memory(const uint16_t ix[QK_K / 4]) {
    const uint16_t *p = ix;
    __asm__("" : "+r"(p) : "m"(*(const uint16_t(*)[QK_K / 4])ix));
    return p;
}

/* the same sub-blocks as 32 magnitudes (u8) and their 32 signs (qgemv_signs_32: AVX2 a
 * _mm256_sign_epi8 operand, AVX-512 a mask), 32 lanes at a time */
static inline __m256i grid_iq2_xxs(const block_iq2_xxs *b, int ib32, qgemv_signs_32 *sgn, const uint16_t *ix) {
    const uint32_t idx = iq_load_u32(b->qs + 4 * ib32);
    *sgn = qgemv_signs_of_bits_32((const uint8_t *)ix + 4 * ib32);   /* grid_indices_iq2_xxs */
    return iq_set4_u64(&iq2xxs_grid[idx >> 24], &iq2xxs_grid[(idx >> 16) & 0xff], &iq2xxs_grid[(idx >> 8) & 0xff],
                       &iq2xxs_grid[idx & 0xff]);
}
static inline __m256i grid_iq2_xs(const block_iq2_xs *b, int ib32, qgemv_signs_32 *sgn, const uint16_t *ix) {
    (void)b;   /* grid_indices_iq2_xs: the 9-bit indices in ix[0..31], the sign bytes after them */
    /* the 4 indices in one load, taken apart in general registers: GEMV 5-8% faster, 2-4
     * columns 4-6% slower (iq2_s: 5-14% faster, 4 columns even) */
    const uint64_t w = iq_load_u64(ix + 4 * ib32);
    *sgn = qgemv_signs_of_bits_32((const uint8_t *)(ix + QK_K / 8) + 4 * ib32);
    return iq_set4_u64(&iq2xs_grid[w >> 48], &iq2xs_grid[(w >> 32) & 0xffff], &iq2xs_grid[(w >> 16) & 0xffff],
                       &iq2xs_grid[w & 0xffff]);
}
static inline __m256i grid_iq2_s(const block_iq2_s *b, int ib32, qgemv_signs_32 *sgn, const uint16_t *ix) {
    *sgn = qgemv_signs_of_bits_32(b->qs + QK_K / 8 + 4 * ib32);
    const uint64_t w = iq_load_u64(ix + 4 * ib32);   /* one load, as iq2_xs */
    return iq_set4_u64(&iq2s_grid[w >> 48], &iq2s_grid[(w >> 32) & 0xffff], &iq2s_grid[(w >> 16) & 0xffff],
                       &iq2s_grid[w & 0xffff]);
}
static inline __m256i grid_iq3_xxs(const block_iq3_xxs *b, int ib32, qgemv_signs_32 *sgn, const uint16_t *ix) {
    const uint8_t *idx = b->qs + 8 * ib32;
    *sgn = qgemv_signs_of_bits_32((const uint8_t *)ix + 4 * ib32);   /* grid_indices_iq3_xxs */
    return iq_set8_u32(&iq3xxs_grid[idx[7]], &iq3xxs_grid[idx[6]], &iq3xxs_grid[idx[5]], &iq3xxs_grid[idx[4]],
                       &iq3xxs_grid[idx[3]], &iq3xxs_grid[idx[2]], &iq3xxs_grid[idx[1]], &iq3xxs_grid[idx[0]]);
}
static inline __m256i grid_iq3_s(const block_iq3_s *b, int ib32, qgemv_signs_32 *sgn, const uint16_t *ix) {
    *sgn = qgemv_signs_of_bits_32(b->signs + 4 * ib32);
    const uint16_t *i = ix + 8 * ib32;
    return iq_set8_u32(&iq3s_grid[i[7]], &iq3s_grid[i[6]], &iq3s_grid[i[5]], &iq3s_grid[i[4]],
                       &iq3s_grid[i[3]], &iq3s_grid[i[2]], &iq3s_grid[i[1]], &iq3s_grid[i[0]]);
}

/* a block's grid indices, all at once where they need bits from two places (iq2_s, iq3_s: the
 * qs byte | qh bits << 8), by vector ops instead of scalar shifts per index: 16-bit lane i
 * gets its qh byte by pshufb, a multiply moves the lane's bits to bit 8 (and 9), a mask keeps them */
/* iq2_xxs / iq3_xxs: the sign bytes of all 32 groups at once (bytes 0..31 of ix), from the
 * sub-blocks' words of 4 x 7 sign bits (iq2_xxs: the odd uint32 of qs; iq3_xxs: after the indices) */
static inline void grid_indices_iq2_xxs(const block_iq2_xxs *b, uint16_t *ix) {
    const __m256i q0 = _mm256_loadu_si256((const __m256i *)b->qs), q1 = _mm256_loadu_si256((const __m256i *)(b->qs + 16));
    const __m256i odd = _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7);
    iq_sign_bytes7(_mm256_blend_epi32(_mm256_permutevar8x32_epi32(q0, odd), _mm256_permutevar8x32_epi32(q1, odd), 0xf0),
                   (uint8_t *)ix);
}
static inline void grid_indices_iq3_xxs(const block_iq3_xxs *b, uint16_t *ix) {
    iq_sign_bytes7(_mm256_loadu_si256((const __m256i *)(b->qs + QK_K / 4)), (uint8_t *)ix);
}
/* iq2_xs: the 32 uint16 of a block split at once into their 9-bit grid indices (ix[0..31]) and
 * sign bytes (bytes of ix[32..47]: the 7 stored bits and their parity) */
static inline void grid_indices_iq2_xs(const block_iq2_xs *b, uint16_t ix[QK_K / 4]) {
    __m256i sb[2];
    for (int q = 0; q < 2; q++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(b->qs + 16 * q));
        _mm256_storeu_si256((__m256i *)(ix + 16 * q), _mm256_and_si256(v, _mm256_set1_epi16(511)));
        sb[q] = iq_with_parity(_mm256_srli_epi16(v, 9));   /* high bytes 0: they stay 0 */
    }
    /* packus works per 128-bit lane: put the 4 quarters back in order */
    _mm256_storeu_si256((__m256i *)(ix + QK_K / 8),
                        _mm256_permute4x64_epi64(_mm256_packus_epi16(sb[0], sb[1]), _MM_SHUFFLE(3, 1, 2, 0)));
}
/* 16 indices qs[i] | h_i << 8: h_i the qh bits of lane i, from the qh byte pick puts in it,
 * moved to bit 8 (and 9) by mul, kept by mask */
static inline __m256i iq_indices_16(const uint8_t *qs, __m256i qh, __m256i pick, __m256i mul, __m256i mask) {
    const __m256i hi = _mm256_and_si256(_mm256_mullo_epi16(_mm256_shuffle_epi8(qh, pick), mul), mask);
    return _mm256_or_si256(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)qs)), hi);
}
static inline void grid_indices_iq2_s(const block_iq2_s *b, uint16_t ix[QK_K / 8]) {
    const __m256i qh = _mm256_set1_epi64x((long long)iq_load_u64(b->qh));
    const __m256i mul = _mm256_setr_epi16(256, 64, 16, 4, 256, 64, 16, 4, 256, 64, 16, 4, 256, 64, 16, 4);
    const __m256i pick = _mm256_setr_epi8(0, -1, 0, -1, 0, -1, 0, -1, 1, -1, 1, -1, 1, -1, 1, -1,
                                          2, -1, 2, -1, 2, -1, 2, -1, 3, -1, 3, -1, 3, -1, 3, -1);
    for (int q = 0; q < 2; q++)   /* sub-blocks 4 q .. 4 q + 3 */
        _mm256_storeu_si256((__m256i *)(ix + 16 * q),
                            iq_indices_16(b->qs + 16 * q, qh, _mm256_add_epi8(pick, _mm256_set1_epi16((short)(4 * q))),
                                          mul, _mm256_set1_epi16(0x300)));
}
static inline void grid_indices_iq3_s(const block_iq3_s *b, uint16_t ix[QK_K / 4]) {
    const __m256i qh = _mm256_set1_epi64x((long long)iq_load_u64(b->qh));
    const __m256i mul = _mm256_setr_epi16(256, 128, 64, 32, 16, 8, 4, 2, 256, 128, 64, 32, 16, 8, 4, 2);
    const __m256i pick = _mm256_setr_epi8(0, -1, 0, -1, 0, -1, 0, -1, 0, -1, 0, -1, 0, -1, 0, -1,
                                          1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1);
    for (int q = 0; q < 4; q++)   /* sub-blocks 2 q, 2 q + 1 */
        _mm256_storeu_si256((__m256i *)(ix + 16 * q),
                            iq_indices_16(b->qs + 16 * q, qh, _mm256_add_epi8(pick, _mm256_set1_epi16((short)(2 * q))),
                                          mul, _mm256_set1_epi16(0x100)));
}

/* the block's 16 scales 2 s + 1 as int16: lane 0 holds sub-block k's first half at k, lane 1 its
 * second half at k, so one pshufb per sub-block spreads them (iq_scales_of_sub) */
static inline __m256i iq_scales16_per32(__m128i v) {   /* one s per 32 values, bytes 0-7 of v */
    const __m128i ls = _mm_add_epi8(_mm_add_epi8(v, v), _mm_set1_epi8(1));
    return _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(ls));
}
static inline __m256i iq_scales16_per16(const uint8_t scales[8]) { /* low nibble: 1st half, high: 2nd */
    const __m128i v = _mm_loadl_epi64((const __m128i *)scales);
    const __m128i m4 = _mm_set1_epi8(0x0f);
    const __m128i s = _mm_unpacklo_epi64(_mm_and_si128(v, m4), _mm_and_si128(_mm_srli_epi16(v, 4), m4));
    return _mm256_cvtepu8_epi16(_mm_add_epi8(_mm_add_epi8(s, s), _mm_set1_epi8(1)));
}
/* 8 scales 2 s + 1 as int32, sub-block k in lane k -> iq_scales16_per32's layout */
static inline __m256i iq_scales16_of_i32(__m256i s) {
    const __m256i ls = _mm256_add_epi32(_mm256_add_epi32(s, s), _mm256_set1_epi32(1));
    const __m256i p = _mm256_packs_epi32(ls, ls);   /* int16: lane 0 sub-blocks 0-3 twice, lane 1 4-7 */
    return _mm256_permute4x64_epi64(p, _MM_SHUFFLE(2, 0, 2, 0));
}
static inline __m256i scales16_iq2_xxs(const block_iq2_xxs *b) {   /* the top nibble of each 8 bytes */
    const __m256i s03 = _mm256_srli_epi64(_mm256_loadu_si256((const __m256i *)b->qs), 60);
    const __m256i s47 = _mm256_srli_epi64(_mm256_loadu_si256((const __m256i *)(b->qs + 16)), 60);
    const __m256i s = _mm256_permutevar8x32_epi32(_mm256_or_si256(s03, _mm256_slli_epi64(s47, 32)),
                                                  _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
    return iq_scales16_of_i32(s);
}
static inline __m256i scales16_iq2_xs(const block_iq2_xs *b) { return iq_scales16_per16(b->scales); }
static inline __m256i scales16_iq2_s(const block_iq2_s *b) { return iq_scales16_per16(b->scales); }
static inline __m256i scales16_iq3_xxs(const block_iq3_xxs *b) {   /* the top nibbles of 8 uint32 */
    return iq_scales16_of_i32(_mm256_srli_epi32(_mm256_loadu_si256((const __m256i *)(b->qs + QK_K / 4)), 28));
}
static inline __m256i scales16_iq3_s(const block_iq3_s *b) {   /* nibbles of 4 bytes, low first */
    const __m128i v = _mm_cvtsi32_si128((int)iq_load_u32(b->scales)), m4 = _mm_set1_epi8(0x0f);
    return iq_scales16_per32(_mm_unpacklo_epi8(_mm_and_si128(v, m4), _mm_and_si128(_mm_srli_epi16(v, 4), m4)));
}
/* sub-block k's scales: element k of each lane, in all 8 int16 of that lane */
static inline __m256i iq_scales_of_sub(__m256i scales16, int k) {
    return _mm256_shuffle_epi8(scales16, _mm256_set1_epi16((short)(0x0100 + 0x0202 * k)));
}

/* acc + sum_j |q_j| (a_j negated where signs_j < 0), times the scale of each 16 values, in 8 int32
 * lanes.  maddubs cannot saturate: magnitudes <= 127 (the grids' <= 62, iq4_xs's levels), |a| <=
 * 127, 2 127 127 < 2^15 */
static inline __m256i iq_dot_sub_acc(__m256i acc, __m256i mag, qgemv_signs_32 signs, const int8_t *a, __m256i ls) {
    const __m256i sa = qgemv_with_signs_32(_mm256_loadu_si256((const __m256i *)a), signs);
    return qgemv_madd_acc(acc, _mm256_maddubs_epi16(mag, sa), ls);
}

/* the block's grid indices stored in ix, and the pointer grid_<name> reads them through */
#define QGEMV_GRID_INDICES_IQ(name, b, ix) (grid_indices_##name(b, ix), iq_indices_in_memory(ix))
#define QGEMV_DEQUANT_SUB_IQ(name, b, ib32, ix, d0, d1, y)                                     \
    do {                                                                                   \
        qgemv_signs_32 sgn_;                                                               \
        const __m256i mag_ = grid_##name(b, ib32, &sgn_, ix);                              \
        qgemv_store_levels_16x2(qgemv_with_signs_32(mag_, sgn_), d0, 0.0f, d1, 0.0f, 0, y); \
    } while (0)

/* the columns' step of one decoded sub-block: its 32 products into each column's int32 lanes */
QGEMV_ALWAYS_INLINE void iq_sub_columns(__m256i mag, qgemv_signs_32 g, __m256i ls, const block_q8_K *const *y,
                                        int64_t ib, int ib32, const int CB, __m256i *sum) {
    for (int j = 0; j < CB; j++) sum[j] = iq_dot_sub_acc(sum[j], mag, g, y[j][ib].qs + 32 * ib32, ls);
}
/* a super-block decoded for many columns: per sub-block its magnitudes, signs and scales */
typedef struct {
    __m256i mag[QK_K / 32], ls[QK_K / 32];
    qgemv_signs_32 sgn[QK_K / 32];
    float d;   /* d0 = d_x factor */
} iq_decoded;
/* CB <= 8 columns against nbc decoded super-blocks from super-block ib0 on, their accumulators
 * in the lanes of *acc */
QGEMV_ALWAYS_INLINE void iq_decoded_columns(const iq_decoded *dec, int64_t ib0, int64_t nbc, const block_q8_K *const *y,
                                            const int CB, __m256 *acc) {
    for (int64_t k = 0; k < nbc; k++) {
        __m256i sum[QGEMV_TILE_COLS_MAX];
        for (int j = 0; j < CB; j++) sum[j] = _mm256_setzero_si256();
        for (int ib32 = 0; ib32 < QK_K / 32; ib32++)
            iq_sub_columns(dec[k].mag[ib32], dec[k].sgn[ib32], dec[k].ls[ib32], y, ib0 + k, ib32, CB, sum);
        qgemv_columns_step_q8_K(dec[k].d, y, ib0 + k, CB, sum, acc);
    }
}

/* one row against CB <= 8 columns: each sub-block's magnitudes, signs and scales are decoded
 * once for all the columns, in registers; per column the integer sums of a super-block are exact
 * and its float work is the same fma into the same accumulator whatever CB is, so every column
 * gets vec_dot's bits (vec_dot is this with CB = 1).  More than 8 columns: iq_decode_<name>
 * into L1 and iq_decoded_columns, the same steps (QGEMV_DEFINE_VEC_DOT_AND_WIDE_TILE).
 * stream(p, nbytes, ncols) asks for the blocks ahead: QGEMV_IQ_L1_STREAM, into L1 whatever the
 * columns (a row decoded slower than memory streams it: include/qgemv/simd.h), or
 * QGEMV_PREFETCH_COLS_STREAM, a single column's both hints where the CPU takes them */
#define QGEMV_IQ_L1_STREAM(p, nbytes, ncols) QGEMV_PREFETCH_L1_STREAM(p, nbytes)
#define QGEMV_DEFINE_VEC_DOT_IQ(name, factor, stream)                                      \
    QGEMV_ALWAYS_INLINE void tile_iq_##name(int64_t nb, const block_##name *x, const uint8_t *a, \
                                            int64_t act_stride, const int CB, float *out) { \
        const block_q8_K *y[QGEMV_TILE_COLS_MAX];                                           \
        __m256 acc = _mm256_setzero_ps();   /* columns in lanes */                         \
        qgemv_tile_columns_q8_K(a, act_stride, CB, y);                                     \
        for (int64_t ib = 0; ib < nb; ib++) {                                              \
            stream(&x[ib], sizeof(x[0]), CB);                                              \
            const __m256i sc = scales16_##name(&x[ib]);                                    \
            uint16_t ix_[QK_K / 4];                                                        \
            const uint16_t *ix = QGEMV_GRID_INDICES_IQ(name, &x[ib], ix_);                 \
            __m256i sum[QGEMV_TILE_COLS_MAX];                                               \
            for (int j = 0; j < CB; j++) sum[j] = _mm256_setzero_si256();                  \
            for (int ib32 = 0; ib32 < QK_K / 32; ib32++) {                                 \
                qgemv_signs_32 signs;                                                      \
                const __m256i mag = grid_##name(&x[ib], ib32, &signs, ix);                 \
                iq_sub_columns(mag, signs, iq_scales_of_sub(sc, ib32), y, ib, ib32, CB, sum); \
            }                                                                              \
            qgemv_columns_step_q8_K(qgemv_fp16_to_fp32(x[ib].d) * (factor), y, ib, CB, sum, &acc); \
        }                                                                                  \
        qgemv_columns_store(acc, CB, out);                                                 \
    }                                                                                      \
    static void iq_decode_##name(const block_##name *b, iq_decoded *dec) {   /* d: d0 */   \
        const __m256i sc = scales16_##name(b);                                             \
        uint16_t ix_[QK_K / 4];                                                            \
        const uint16_t *ix = QGEMV_GRID_INDICES_IQ(name, b, ix_);                          \
        for (int ib32 = 0; ib32 < QK_K / 32; ib32++) {                                     \
            dec->mag[ib32] = grid_##name(b, ib32, &dec->sgn[ib32], ix);                    \
            dec->ls[ib32] = iq_scales_of_sub(sc, ib32);                                    \
        }                                                                                  \
        dec->d = qgemv_fp16_to_fp32(b->d) * (factor);                                      \
    }                                                                                      \
    QGEMV_DEFINE_VEC_DOT_AND_WIDE_TILE(name, tile_iq_##name, iq_decoded, iq_decode_##name, iq_decoded_columns, 1)

#if defined(QGEMV_AVX2)
/* scales16_<name>'s 16 scales (first halves in lane 0, second halves in lane 1) -> s[2 k + h] */
static inline void iq_store_scales_i32(__m256i scales16, int32_t s[QK_K / 16]) {
    const __m128i first = _mm256_castsi256_si128(scales16), second = _mm256_extracti128_si256(scales16, 1);
    _mm256_storeu_si256((__m256i *)s, _mm256_cvtepi16_epi32(_mm_unpacklo_epi16(first, second)));
    _mm256_storeu_si256((__m256i *)(s + 8), _mm256_cvtepi16_epi32(_mm_unpackhi_epi16(first, second)));
}
/* iq_decode_u8_<name>: a super-block as the packed VNNI tile reads it (src/packed_tile.h), u = q +
 * 64 from grid_<name>'s 32 magnitudes and signs at a time, the scales 2 s + 1 per 16 values, d0 =
 * d_x factor: a GGUF block's on AVX-VNNI, a code block's (grid_codes.h) everywhere */
#define QGEMV_DEFINE_DECODE_U8_BY_GRID(name, factor)                                       \
    static void iq_decode_u8_##name(const block_##name *b, qgemv_decoded_u8 *dec) {        \
        uint16_t ix_[QK_K / 4];                                                            \
        const uint16_t *ix = QGEMV_GRID_INDICES_IQ(name, b, ix_);                          \
        for (int ib32 = 0; ib32 < QK_K / 32; ib32++) {                                     \
            qgemv_signs_32 sgn;                                                            \
            const __m256i mag = grid_##name(b, ib32, &sgn, ix);                            \
            _mm256_storeu_si256((__m256i *)(dec->u + 32 * ib32),                           \
                                _mm256_add_epi8(qgemv_with_signs_32(mag, sgn), _mm256_set1_epi8(64))); \
        }                                                                                  \
        iq_store_scales_i32(scales16_##name(b), dec->s);                                   \
        dec->d0 = qgemv_fp16_to_fp32(b->d) * (factor);                                     \
    }
#endif
#if defined(QGEMV_AVX512)
/* sub-blocks 2 p and 2 p + 1 as 64 magnitudes by one gather, sgn their 64 sign bits (the
 * packed tile's decode: a gather for 8 or 16 table entries where grid_<name> extracts each
 * index and blends its entry in, 3 operations an entry) */
static inline __m512i grid64_iq2_xxs(const block_iq2_xxs *b, int p, const uint16_t *ix, __mmask64 *sgn) {
    *sgn = iq_load_u64((const uint8_t *)ix + 8 * p);   /* grid_indices_iq2_xxs */
    const __m128i i = _mm_set_epi32(0, 0, (int)iq_load_u32(b->qs + 8 * p + 4), (int)iq_load_u32(b->qs + 8 * p));
    return _mm512_i32gather_epi64(_mm256_cvtepu8_epi32(i), (const long long *)iq2xxs_grid, 8);
}
static inline __m512i grid64_iq2_xs(const block_iq2_xs *b, int p, const uint16_t *ix, __mmask64 *sgn) {
    (void)b;   /* grid_indices_iq2_xs: the 9-bit indices in ix[0..31], the sign bytes after them */
    *sgn = iq_load_u64((const uint8_t *)(ix + QK_K / 8) + 8 * p);
    const __m256i i = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(ix + 8 * p)));
    return _mm512_i32gather_epi64(i, (const long long *)iq2xs_grid, 8);
}
static inline __m512i grid64_iq2_s(const block_iq2_s *b, int p, const uint16_t *ix, __mmask64 *sgn) {
    *sgn = iq_load_u64(b->qs + QK_K / 8 + 8 * p);
    const __m256i i = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(ix + 8 * p)));
    return _mm512_i32gather_epi64(i, (const long long *)iq2s_grid, 8);
}
static inline __m512i grid64_iq3_xxs(const block_iq3_xxs *b, int p, const uint16_t *ix, __mmask64 *sgn) {
    *sgn = iq_load_u64((const uint8_t *)ix + 8 * p);   /* grid_indices_iq3_xxs */
    const __m512i i = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(b->qs + 16 * p)));
    return _mm512_i32gather_epi32(i, (const int *)iq3xxs_grid, 4);
}
static inline __m512i grid64_iq3_s(const block_iq3_s *b, int p, const uint16_t *ix, __mmask64 *sgn) {
    *sgn = iq_load_u64(b->signs + 8 * p);
    const __m512i i = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(ix + 16 * p)));
    return _mm512_i32gather_epi32(i, (const int *)iq3s_grid, 4);
}
/* a super-block as the packed VNNI tile reads it (src/packed_tile.h): u = q + 64, the scales
 * 2 s + 1 per 16 values, d0 = d_x factor; the tile takes sub values per scale (16 or 32) */
#define QGEMV_DEFINE_PACKED_TILE_IQ(name, factor, sub)                                     \
    static void iq_decode_u8_##name(const block_##name *b, qgemv_decoded_u8 *dec) {        \
        uint16_t ix[QK_K / 4];                                                             \
        grid_indices_##name(b, ix);                                                        \
        for (int p = 0; p < QK_K / 64; p++) {                                              \
            __mmask64 sgn;                                                                 \
            const __m512i mag = grid64_##name(b, p, ix, &sgn);                             \
            _mm512_storeu_si512(dec->u + 64 * p, _mm512_add_epi8(                          \
                _mm512_mask_sub_epi8(mag, sgn, _mm512_setzero_si512(), mag), _mm512_set1_epi8(64))); \
        }                                                                                  \
        iq_store_scales_i32(scales16_##name(b), dec->s);                                   \
        dec->d0 = qgemv_fp16_to_fp32(b->d) * (factor);                                     \
    }                                                                                      \
    QGEMV_DEFINE_PACKED_TILE(name, iq_decode_u8_##name, sub)
#elif defined(QGEMV_AVX2)
#define QGEMV_DEFINE_PACKED_TILE_IQ(name, factor, sub)                                     \
    QGEMV_DEFINE_DECODE_U8_BY_GRID(name, factor)                                           \
    QGEMV_DEFINE_PACKED_TILE(name, iq_decode_u8_##name, sub)
#else
#define QGEMV_DEFINE_PACKED_TILE_IQ(name, factor, sub)
#endif
#else
#define QGEMV_DEFINE_PACKED_TILE_IQ(name, factor, sub)
#define QGEMV_GRID_INDICES_IQ(name, b, ix) ((void)(b), (const uint16_t *)(ix))
#define QGEMV_DEQUANT_SUB_IQ(name, b, ib32, ix, d0, d1, y)                                     \
    do {                                                                                   \
        int8_t q_[32];                                                                     \
        (void)(ix);                                                                        \
        levels_##name##_ref(b, ib32, q_);                                                  \
        for (int j_ = 0; j_ < 16; j_++) (y)[j_] = (d0) * (float)q_[j_];                    \
        for (int j_ = 16; j_ < 32; j_++) (y)[j_] = (d1) * (float)q_[j_];                   \
    } while (0)

#define QGEMV_DEFINE_VEC_DOT_IQ(name, factor, stream)   /* stream: unused */               \
    static float vec_dot_##name##_q8_K(int64_t n, const void *restrict w, const void *restrict a) { \
        const block_##name *x = (const block_##name *)w;                                   \
        const block_q8_K *y = (const block_q8_K *)a;                                       \
        float sum = 0.0f;                                                                  \
        for (int64_t ib = 0; ib < n / QK_K; ib++) {                                        \
            int32_t bsum = 0;                                                              \
            for (int ib32 = 0; ib32 < QK_K / 32; ib32++) {                                 \
                int8_t q[32];                                                              \
                int s[2];                                                                  \
                int32_t half[2] = {0, 0};                                                  \
                levels_##name##_ref(&x[ib], ib32, q);                                      \
                sub_scales_##name(&x[ib], ib32, s);                                        \
                for (int j = 0; j < 32; j++) half[j / 16] += q[j] * y[ib].qs[32 * ib32 + j]; \
                bsum += half[0] * (2 * s[0] + 1) + half[1] * (2 * s[1] + 1);               \
            }                                                                              \
            sum = fmaf((float)bsum * (qgemv_fp16_to_fp32(x[ib].d) * (factor)), y[ib].d, sum); \
        }                                                                                  \
        return sum;                                                                        \
    }
#endif

/* y = db(s) q per sub-block, db computed as ggml's dequantize_row_<name> */
#define QGEMV_DEFINE_DEQUANT_ROW_IQ(name)                                                  \
    static void dequant_row_##name(const void *restrict src, float *restrict dst, int64_t n) { \
        const block_##name *x = (const block_##name *)src;                                 \
        for (int64_t ib = 0; ib < n / QK_K; ib++) {                                        \
            const float d = qgemv_fp16_to_fp32(x[ib].d);                                   \
            uint16_t ix_[QK_K / 4];   /* the block's grid indices where precomputed (AVX2) */ \
            const uint16_t *ix = QGEMV_GRID_INDICES_IQ(name, &x[ib], ix_);                 \
            for (int ib32 = 0; ib32 < QK_K / 32; ib32++) {                                 \
                int s[2];                                                                  \
                sub_scales_##name(&x[ib], ib32, s);                                        \
                QGEMV_DEQUANT_SUB_IQ(name, &x[ib], ib32, ix, db_##name(d, s[0]), db_##name(d, s[1]), \
                                     dst + QK_K * ib + 32 * ib32);                         \
            }                                                                              \
        }                                                                                  \
    }

QGEMV_DEFINE_DEQUANT_ROW_IQ(iq2_xxs)
QGEMV_DEFINE_DEQUANT_ROW_IQ(iq2_xs)
QGEMV_DEFINE_DEQUANT_ROW_IQ(iq2_s)
QGEMV_DEFINE_DEQUANT_ROW_IQ(iq3_xxs)
QGEMV_DEFINE_DEQUANT_ROW_IQ(iq3_s)

/* (name, factor, stream): vec_dot and the row tiles; (name, factor, values per scale): the packed VNNI
 * tile (AVX-512, AVX-VNNI) over the GGUF rows (grid_codes.h's code blocks have both their own) */
QGEMV_DEFINE_VEC_DOT_IQ(iq2_xxs, 0.125f, QGEMV_IQ_L1_STREAM)
QGEMV_DEFINE_VEC_DOT_IQ(iq2_xs, 0.125f, QGEMV_IQ_L1_STREAM)
QGEMV_DEFINE_VEC_DOT_IQ(iq2_s, 0.125f, QGEMV_IQ_L1_STREAM)
QGEMV_DEFINE_VEC_DOT_IQ(iq3_xxs, 0.25f, QGEMV_IQ_L1_STREAM)
QGEMV_DEFINE_VEC_DOT_IQ(iq3_s, 1.0f, QGEMV_IQ_L1_STREAM)
QGEMV_DEFINE_PACKED_TILE_IQ(iq2_xxs, 0.125f, 32)
QGEMV_DEFINE_PACKED_TILE_IQ(iq2_xs, 0.125f, 16)
QGEMV_DEFINE_PACKED_TILE_IQ(iq2_s, 0.125f, 16)
QGEMV_DEFINE_PACKED_TILE_IQ(iq3_xxs, 0.25f, 32)
QGEMV_DEFINE_PACKED_TILE_IQ(iq3_s, 1.0f, 32)

/* the specialised tiles of this family (src/kernels.c puts them in the table) */
#if defined(QGEMV_AVX2)
#define QGEMV_TILES_IQUANTS(X) X(iq2_xxs, q8_K) X(iq2_xs, q8_K) X(iq2_s, q8_K) X(iq3_xxs, q8_K) X(iq3_s, q8_K)
#else
#define QGEMV_TILES_IQUANTS(X)   /* portable: the generic tiles (src/tiles.h) */
#endif
#if defined(QGEMV_AVX2)
/* (name, from how many columns, the activations packed); below, the GGUF rows' tiles or the
 * code blocks' (grid_codes.h).  On AVX-512 the packed tile over the code blocks beats the code
 * blocks' own tiles from 8 columns on (C harness, 4096 x 4096, 1 thread, batch 8: iq3_xxs
 * 1.11-1.26x, iq3_s 1.01-1.11x; batch 6: 0.92x), and at 32 columns every code tile ran 2x slower
 * than the packed one over the GGUF rows.  AVX-VNNI's tiles, in 16 registers, lose from 6 on
 * (Intel Xeon as AVX-VNNI, 4096 x 4096, 2 threads, batch 6: the code blocks' 0.94-1.19 ms, packed
 * 0.84-0.98; the GGUF rows' 1.24-1.28, packed 1.01-1.17; batch 5 0.73-0.97 against 0.80-0.94) */
#define QGEMV_PACKED_TILES_IQUANTS(X) X(iq2_xxs, QGEMV_PACKED_FROM(8, 6, 8), q8_K) X(iq2_xs, QGEMV_PACKED_FROM(8, 6, 8), q8_K) \
    X(iq2_s, QGEMV_PACKED_FROM(8, 6, 8), q8_K) X(iq3_xxs, QGEMV_PACKED_FROM(8, 6, 8), q8_K) X(iq3_s, QGEMV_PACKED_FROM(8, 6, 8), q8_K)
#else
#define QGEMV_PACKED_TILES_IQUANTS(X)
#endif
