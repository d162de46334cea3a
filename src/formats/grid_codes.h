/* The IQ grids' prepared layout: iq2_xxs, iq2_xs, iq2_s, iq3_xxs and iq3_s rows as level codes.
 *
 * The grids' points hold few magnitudes: 8, 25 and 43 for the three iq2 grids, 8 levels for each
 * iq3 grid.  So a row's block can store each value as a code (2 bits: block_iq2_c; 4 bits:
 * block_iq3_c, include/qgemv/blocks.h) and a sign bit, which decode with a shift, a mask and one
 * 16-byte lookup where grid_<name> (iquants.h) takes 4 or 8 table entries by index: 1.29-1.73x the
 * GGUF bytes.  A QMatrix makes these rows once, at its first product (_formats.py: interleave 8,
 * panel_type_size; a panel is 8 rows of code blocks, one row after another); its single columns
 * and small batches read them through iquants.h's kernels, batches of 8 and more on AVX-512
 * through the packed tile (src/packed_tile.h; below).
 *
 * The products are iquants.h's own, through the same macro (QGEMV_DEFINE_VEC_DOT_IQ: exact
 * integers per super-block, then acc = fma(t d_x factor, d_y, acc)), over the code blocks: every
 * (row, column) gets the GGUF rows' bits whichever layout it is read from.  Same process, GGUF
 * rows -> codes, GEMV 4096 x 4096 on 1 thread / 14336 x 4096 out of cache on 2 threads: iq2 grids
 * 1.44-1.61x / 1.43-1.51x, iq3_xxs 1.49x / 1.70x, iq3_s 2.47x / 2.29x.
 */

/* magnitudes by code (16 bytes: one vpshufb table) */
static const int8_t iq2_c_levels[16] = {8, 25, 43};
static const int8_t iq3_xxs_c_levels[16] = {4, 12, 20, 28, 36, 44, 52, 62};
static const int8_t iq3_s_c_levels[16] = {1, 3, 5, 7, 9, 11, 13, 15};

/* the code of value v, and setting it: iq2_c byte 32 h + k bits 2 l for v = 128 h + 32 l + k;
 * iq3_c byte 16 k + j, low nibble for v = 32 k + j, high for 32 k + 16 + j */
static inline int iq2_c_code(const block_iq2_c *b, int v) {
    return (b->codes[32 * (v / 128) + v % 32] >> (2 * (v % 128 / 32))) & 3;
}
static inline void iq2_c_put(block_iq2_c *y, int v, int c) {
    y->codes[32 * (v / 128) + v % 32] |= (uint8_t)(c << (2 * (v % 128 / 32)));
}
static inline int iq3_c_code(const block_iq3_c *b, int v) {
    return (b->codes[16 * (v / 32) + v % 16] >> (4 * (v % 32 / 16))) & 15;
}
static inline void iq3_c_put(block_iq3_c *y, int v, int c) {
    y->codes[16 * (v / 32) + v % 16] |= (uint8_t)(c << (4 * (v % 32 / 16)));
}

/* what iquants.h's macro reads of a code block: its scales, its levels (portable), and (AVX2)
 * no indices to prepare, the scales as int16 */
#if defined(QGEMV_AVX2)
#define QGEMV_CODES_AVX2(name)                                                             \
    static inline void grid_indices_##name(const block_##name *b, uint16_t *ix) { (void)b; (void)ix; } \
    static inline __m256i scales16_##name(const block_##name *b) { return iq_scales16_per16(b->scales); }
#else
#define QGEMV_CODES_AVX2(name)
#endif
#define QGEMV_DEFINE_CODES_READ(name, levels, code)                                        \
    static inline void sub_scales_##name(const block_##name *b, int ib32, int s[2]) {      \
        s[0] = b->scales[ib32] & 0x0f;                                                     \
        s[1] = b->scales[ib32] >> 4;                                                       \
    }                                                                                      \
    static inline void levels_##name##_ref(const block_##name *b, int ib32, int8_t q[32]) { \
        for (int j = 0; j < 32; j++) {                                                     \
            const int v = 32 * ib32 + j, m = (levels)[code(b, v)];                         \
            q[j] = (int8_t)((b->signs[v / 8] >> (v % 8)) & 1 ? -m : m);                    \
        }                                                                                  \
    }                                                                                      \
    QGEMV_CODES_AVX2(name)
QGEMV_DEFINE_CODES_READ(iq2_c, iq2_c_levels, iq2_c_code)
QGEMV_DEFINE_CODES_READ(iq3_xxs_c, iq3_xxs_c_levels, iq3_c_code)
QGEMV_DEFINE_CODES_READ(iq3_s_c, iq3_s_c_levels, iq3_c_code)

#if defined(QGEMV_AVX2)
/* sub-block ib32's 32 magnitudes and signs (qgemv_signs_32) */
static inline __m256i grid_iq2_c(const block_iq2_c *b, int ib32, qgemv_signs_32 *sgn, const uint16_t *ix) {
    (void)ix;   /* its codes: field ib32 % 4 of the 32 bytes of half ib32 / 4 */
    *sgn = qgemv_signs_of_bits_32(b->signs + 4 * ib32);
    const __m256i c = _mm256_loadu_si256((const __m256i *)(b->codes + 32 * (ib32 / 4)));
    const __m256i f = _mm256_and_si256(_mm256_srl_epi16(c, _mm_cvtsi32_si128(2 * (ib32 % 4))), _mm256_set1_epi8(3));
    return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)iq2_c_levels)), f);
}
#define QGEMV_DEFINE_GRID_IQ3_C(name)   /* its 16 code bytes as 32 nibbles in value order, looked up */ \
    static inline __m256i grid_##name(const block_##name *b, int ib32, qgemv_signs_32 *sgn, const uint16_t *ix) { \
        (void)ix;                                                                          \
        *sgn = qgemv_signs_of_bits_32(b->signs + 4 * ib32);                                \
        return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)name##_levels)), \
                                   qgemv_nibbles_32(b->codes + 16 * ib32));                \
    }
QGEMV_DEFINE_GRID_IQ3_C(iq3_xxs_c)
QGEMV_DEFINE_GRID_IQ3_C(iq3_s_c)
#endif

/* (code block, factor of d, stream): iquants.h's products over the code blocks.  The iq3 code
 * rows (170 bytes a super-block) stream a single column fast enough to want both hints where the
 * CPU takes them: Intel Xeon, through QMatrix, builds alternating, 14336 x 4096 out of cache, 2
 * / 1 threads, L1 hints -> both: avxvnni iq3_xxs 2.03-2.14 -> 1.53-1.60 / 4.05-4.52 ->
 * 3.0-4.1 ms, iq3_s 2.00-2.14 -> 1.50-1.59 / 3.73-3.86 -> 2.91-3.10; AVX-512 iq3_xxs
 * 1.57-1.65 -> 1.38-1.46, iq3_s 1.56-1.66 -> 1.39-1.42 / 3.02-3.13 -> 2.62-2.73; in cache even
 * (a Zen 4, hints off, asks for no lines now: unmeasured).  The iq2 ones (106 bytes) ran even to
 * 7% slower so (AVX-512 iq2_xxs 2 threads 1.06-1.08 -> 1.11-1.16, iq2_xs 1.07-1.10 ->
 * 1.10-1.13, avxvnni even; with their own code unchanged the builds moved iq2_xxs 2-3%) and keep
 * L1's */
QGEMV_DEFINE_VEC_DOT_IQ(iq2_c, 0.125f, QGEMV_IQ_L1_STREAM)
QGEMV_DEFINE_VEC_DOT_IQ(iq3_xxs_c, 0.25f, QGEMV_PREFETCH_COLS_STREAM)
QGEMV_DEFINE_VEC_DOT_IQ(iq3_s_c, 1.0f, QGEMV_PREFETCH_COLS_STREAM)
#if !defined(QGEMV_AVX2)
QGEMV_DEFINE_VEC_DOT_TILE_GENERIC(QGEMV_ID_iq2_xxs, iq2_c, q8_K, QGEMV_ID_q8_K)
QGEMV_DEFINE_VEC_DOT_TILE_GENERIC(QGEMV_ID_iq3_xxs, iq3_xxs_c, q8_K, QGEMV_ID_q8_K)
QGEMV_DEFINE_VEC_DOT_TILE_GENERIC(QGEMV_ID_iq3_s, iq3_s_c, q8_K, QGEMV_ID_q8_K)
#endif

/* A GGUF block -> its code block: the scales as read, the sign bits, and each magnitude's code,
 * which is its index in the levels and, for these grids, the magnitude shifted right (iq2: 8, 25,
 * 43 >> 4 = 0, 1, 2; iq3_xxs: 4 .. 62 >> 3 = 0 .. 7; iq3_s: 1 .. 15 >> 1).  With AVX2 and up each
 * sub-block comes from grid_<name>, 32 values at once: a 14336 x 4096 matrix's first product
 * (conversion included) took 520-770 ms value by value, 6-45 ms so, as iq1_m's trits (4-8 ms);
 * the portable build keeps the scalar loop. */
#if defined(QGEMV_AVX2)
static inline uint32_t iq_negative_bits_32(qgemv_signs_32 s) {
#if defined(QGEMV_AVX512)
    return (uint32_t)s;
#else
    return (uint32_t)_mm256_movemask_epi8(s);   /* negative bytes where a value is */
#endif
}
/* sub-block ib32's 32 codes (bytes) into the block: iq2 field ib32 % 4 of half ib32 / 4's 32
 * bytes; iq3 low nibbles of its 16 bytes, then high nibbles */
static inline void iq2_c_put32(block_iq2_c *y, int ib32, __m256i c) {
    __m256i *dst = (__m256i *)(y->codes + 32 * (ib32 / 4));
    _mm256_storeu_si256(dst, _mm256_or_si256(_mm256_loadu_si256(dst), _mm256_sll_epi16(c, _mm_cvtsi32_si128(2 * (ib32 % 4)))));
}
static inline void iq3_c_put32(block_iq3_c *y, int ib32, __m256i c) {
    const __m128i lo = _mm256_castsi256_si128(c), hi = _mm256_extracti128_si256(c, 1);
    _mm_storeu_si128((__m128i *)(y->codes + 16 * ib32), _mm_or_si128(lo, _mm_slli_epi16(hi, 4)));
}
#define QGEMV_CODES_OF_SUB(name, x, ib32, ix, y, shift, mask, put)                          \
    do {                                                                                   \
        qgemv_signs_32 sg_;                                                                \
        const __m256i m_ = grid_##name(x, ib32, &sg_, ix);                                 \
        const uint32_t neg_ = iq_negative_bits_32(sg_);                                    \
        memcpy((y)->signs + 4 * (ib32), &neg_, 4);                                         \
        put##32(y, ib32, _mm256_and_si256(_mm256_srli_epi16(m_, shift), _mm256_set1_epi8(mask))); \
    } while (0)
#else
#define QGEMV_CODES_OF_SUB(name, x, ib32, ix, y, shift, mask, put)                          \
    do {                                                                                   \
        int8_t q_[32];                                                                     \
        (void)(ix);                                                                        \
        levels_##name##_ref(x, ib32, q_);                                                  \
        for (int j_ = 0; j_ < 32; j_++) {                                                  \
            const int v_ = 32 * (ib32) + j_, m_ = q_[j_] < 0 ? -q_[j_] : q_[j_];           \
            put(y, v_, (m_ >> (shift)) & (mask));                                          \
            if (q_[j_] < 0) (y)->signs[v_ / 8] |= (uint8_t)(1 << (v_ % 8));                \
        }                                                                                  \
    } while (0)
#endif

/* codes_of_<name>, and the panels of 8 rows of code blocks (src/tiles.h: QGEMV_DEFINE_ROW_PANELS) */
#define QGEMV_DEFINE_GRID_CODES(name, cname, shift, mask, put)                             \
    static void codes_of_##name(const block_##name *x, block_##cname *y) {                 \
        memset(y, 0, sizeof(*y));                                                          \
        y->d = x->d;                                                                       \
        uint16_t ix_[QK_K / 4];                                                            \
        const uint16_t *ix = QGEMV_GRID_INDICES_IQ(name, x, ix_);                          \
        for (int ib32 = 0; ib32 < QK_K / 32; ib32++) {                                     \
            int s[2];                                                                      \
            sub_scales_##name(x, ib32, s);                                                 \
            y->scales[ib32] = (uint8_t)(s[0] | s[1] << 4);                                 \
            QGEMV_CODES_OF_SUB(name, x, ib32, ix, y, shift, mask, put);                    \
        }                                                                                  \
    }                                                                                      \
    QGEMV_DEFINE_ROW_PANELS(name, block_##cname, codes_of_##name, QGEMV_ROWS_TILE_Q8_K(cname))
/* (name, code block, magnitude >> shift & mask = code, how codes are stored) */
#define QGEMV_PANEL_BLOCK_iq2_xxs block_iq2_c
#define QGEMV_PANEL_BLOCK_iq2_xs block_iq2_c
#define QGEMV_PANEL_BLOCK_iq2_s block_iq2_c
#define QGEMV_PANEL_BLOCK_iq3_xxs block_iq3_c
#define QGEMV_PANEL_BLOCK_iq3_s block_iq3_c
QGEMV_DEFINE_GRID_CODES(iq2_xxs, iq2_c, 4, 3, iq2_c_put)
QGEMV_DEFINE_GRID_CODES(iq2_xs, iq2_c, 4, 3, iq2_c_put)
QGEMV_DEFINE_GRID_CODES(iq2_s, iq2_c, 4, 3, iq2_c_put)
QGEMV_DEFINE_GRID_CODES(iq3_xxs, iq3_xxs_c, 3, 7, iq3_c_put)
QGEMV_DEFINE_GRID_CODES(iq3_s, iq3_s_c, 1, 7, iq3_c_put)

/* Batches that take packed columns (src/packed_tile.h) read the code blocks too: a sub-block's u
 * = sign level + 64 comes from grid_<cname>'s one lookup, where the GGUF rows' decode gathers
 * 4-8 grid entries (Zen 4's gathers: 35-45% of the packed tile's time at batch 32, C harness).
 * The same u, scales 2 s + 1 and d0 as the GGUF rows' decode, so the same bits; the tile takes
 * the GGUF format's values per scale (32 where both halves of a code block's sub-block hold its
 * one s).  Same process (set_repack off / on), 4096 x 4096, 2 threads, batch 8 / 16 / 32:
 * iq2_xxs 1.57 / 1.20 / 1.29x, iq2_xs 1.33 / 1.25 / 1.12x, iq2_s 1.48 / 1.32 / 1.16x, iq3_xxs
 * - / 1.54 / 1.32x, iq3_s - / 1.50 / 1.34x (iq1_m's trits, iq1.h: 1.19x at 16, 1.16x at 32). */
#if defined(QGEMV_AVX2)
QGEMV_DEFINE_DECODE_U8_BY_GRID(iq2_c, 0.125f)
QGEMV_DEFINE_DECODE_U8_BY_GRID(iq3_xxs_c, 0.25f)
QGEMV_DEFINE_DECODE_U8_BY_GRID(iq3_s_c, 1.0f)
/* (GGUF format, code block, values per scale): packed_tile_<name>_codes; the table's entries
 * (format, tile, from how many columns: as over the GGUF rows, iquants.h) */
QGEMV_DEFINE_PACKED_TILE_OVER(iq2_xxs_codes, block_iq2_c, iq_decode_u8_iq2_c, 32)
QGEMV_DEFINE_PACKED_TILE_OVER(iq2_xs_codes, block_iq2_c, iq_decode_u8_iq2_c, 16)
QGEMV_DEFINE_PACKED_TILE_OVER(iq2_s_codes, block_iq2_c, iq_decode_u8_iq2_c, 16)
QGEMV_DEFINE_PACKED_TILE_OVER(iq3_xxs_codes, block_iq3_c, iq_decode_u8_iq3_xxs_c, 32)
QGEMV_DEFINE_PACKED_TILE_OVER(iq3_s_codes, block_iq3_c, iq_decode_u8_iq3_s_c, 32)
#define QGEMV_PACKED_CODES_FROM QGEMV_PACKED_FROM(8, 6, 8)
#define QGEMV_PACKED_PANEL_TILES_CODES(X) X(iq2_xxs, packed_tile_iq2_xxs_codes, QGEMV_PACKED_CODES_FROM) \
    X(iq2_xs, packed_tile_iq2_xs_codes, QGEMV_PACKED_CODES_FROM) X(iq2_s, packed_tile_iq2_s_codes, QGEMV_PACKED_CODES_FROM) \
    X(iq3_xxs, packed_tile_iq3_xxs_codes, QGEMV_PACKED_CODES_FROM) X(iq3_s, packed_tile_iq3_s_codes, QGEMV_PACKED_CODES_FROM)
#else
#define QGEMV_PACKED_PANEL_TILES_CODES(X)
#endif
