/* The IQ2 grids' prepared layout: iq2_xxs, iq2_xs and iq2_s rows as 2-bit codes.
 *
 * The three grids' points hold the magnitudes 8, 25 and 43 only, so a row's block can store each
 * value as a code c (0, 1, 2) and a sign bit (block_iq2_c, include/qgemv/blocks.h: 106 bytes for
 * the GGUF block's 66, 74 or 82).  A sub-block of 32 values then decodes with a shift, a mask and
 * a 16-byte lookup where grid_<name> (iquants.h) takes four table entries by index.  A QMatrix
 * makes these rows once, at its first product (_formats.py: interleave 8, panel_type_size 106;
 * a panel is 8 rows of code blocks, one row after another), and its single columns and small
 * batches read them; batches of 8 and more on AVX-512 take the packed tile over the GGUF rows
 * (src/packed_tile.h).
 *
 * The products are iquants.h's own, through the same macro (QGEMV_DEFINE_VEC_DOT_IQ: exact
 * integers per super-block, then acc = fma(t d_x / 8, d_y, acc)), so every (row, column) gets
 * the GGUF rows' bits whichever layout it is read from.
 */

static const int8_t iq2_c_levels[16] = {8, 25, 43};   /* by code; 16 bytes: one vpshufb table */

static inline void sub_scales_iq2_c(const block_iq2_c *b, int ib32, int s[2]) {
    s[0] = b->scales[ib32] & 0x0f;
    s[1] = b->scales[ib32] >> 4;
}
/* the code of value v: byte 32 h + k, bits 2 l, for v = 128 h + 32 l + k */
static inline int iq2_c_code(const block_iq2_c *b, int v) {
    return (b->codes[32 * (v / 128) + v % 32] >> (2 * (v % 128 / 32))) & 3;
}
static inline void levels_iq2_c_ref(const block_iq2_c *b, int ib32, int8_t q[32]) {
    for (int j = 0; j < 32; j++) {
        const int v = 32 * ib32 + j, m = iq2_c_levels[iq2_c_code(b, v)];
        q[j] = (int8_t)((b->signs[v / 8] >> (v % 8)) & 1 ? -m : m);
    }
}

#if defined(QGEMV_AVX2)
/* no indices to prepare: grid_iq2_c reads the codes where they lie */
static inline void grid_indices_iq2_c(const block_iq2_c *b, uint16_t *ix) { (void)b; (void)ix; }
/* sub-block ib32's 32 magnitudes: its codes are field ib32 % 4 of the 32 bytes of half ib32 / 4 */
static inline __m256i grid_iq2_c(const block_iq2_c *b, int ib32, qgemv_signs_32 *sgn, const uint16_t *ix) {
    (void)ix;
    *sgn = qgemv_signs_of_bits_32(b->signs + 4 * ib32);
    const __m256i c = _mm256_loadu_si256((const __m256i *)(b->codes + 32 * (ib32 / 4)));
    const __m256i f = _mm256_and_si256(_mm256_srl_epi16(c, _mm_cvtsi32_si128(2 * (ib32 % 4))), _mm256_set1_epi8(3));
    return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)iq2_c_levels)), f);
}
static inline __m256i scales16_iq2_c(const block_iq2_c *b) { return iq_scales16_per16(b->scales); }
#if defined(QGEMV_AVX512)
/* sub-blocks 2 p and 2 p + 1 as 64 magnitudes: half p / 2's codes in both 256-bit halves, shifted
 * to fields 2 (p % 2) and 2 (p % 2) + 1 */
static inline __m512i grid64_iq2_c(const block_iq2_c *b, int p, const uint16_t *ix, __mmask64 *sgn) {
    (void)ix;
    *sgn = iq_load_u64(b->signs + 8 * p);
    const __m512i c = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(b->codes + 32 * (p / 2))));
    const __m512i shift = _mm512_inserti64x4(_mm512_set1_epi16((short)(4 * (p % 2))), _mm256_set1_epi16((short)(4 * (p % 2) + 2)), 1);
    const __m512i f = _mm512_and_si512(_mm512_srlv_epi16(c, shift), _mm512_set1_epi8(3));
    return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)iq2_c_levels)), f);
}
#endif
#endif

QGEMV_DEFINE_VEC_DOT_IQ(iq2_c, 0.125f, 16)
#if !defined(QGEMV_AVX2)
QGEMV_DEFINE_VEC_DOT_TILE_GENERIC(QGEMV_ID_iq2_xxs, iq2_c, q8_K, QGEMV_ID_q8_K)
#define QGEMV_IQ2_C_TILE vec_dot_tile_generic_iq2_c_q8_K
#else
#define QGEMV_IQ2_C_TILE vec_dot_tile_iq2_c_q8_K
#endif

/* a GGUF block -> its code block; rows 0..7 of w (row_stride bytes apart), n values each -> a
 * panel (8 rows of code blocks, one row after another); vec_dot_tile over npanels panels: they are
 * 8 npanels rows of code blocks, panel_stride / 8 bytes apart */
#define QGEMV_DEFINE_CODES_IQ2(name)                                                       \
    static void codes_of_##name(const block_##name *x, block_iq2_c *y) {                   \
        memset(y, 0, sizeof(*y));                                                          \
        y->d = x->d;                                                                       \
        for (int ib32 = 0; ib32 < QK_K / 32; ib32++) {                                     \
            int s[2];                                                                      \
            int8_t q[32];                                                                  \
            sub_scales_##name(x, ib32, s);                                                 \
            y->scales[ib32] = (uint8_t)(s[0] | s[1] << 4);                                 \
            levels_##name##_ref(x, ib32, q);                                               \
            for (int j = 0; j < 32; j++) {                                                 \
                const int v = 32 * ib32 + j, m = q[j] < 0 ? -q[j] : q[j];                  \
                y->codes[32 * (v / 128) + v % 32] |= (uint8_t)((m == 8 ? 0 : m == 25 ? 1 : 2) << (2 * (v % 128 / 32))); \
                if (q[j] < 0) y->signs[v / 8] |= (uint8_t)(1 << (v % 8));                  \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    static void interleave_x8_##name(const void *restrict w, int64_t row_stride, int64_t n, void *restrict panel) { \
        block_iq2_c *p = (block_iq2_c *)panel;                                             \
        for (int r = 0; r < 8; r++)                                                        \
            for (int64_t b = 0; b < n / QK_K; b++)                                         \
                codes_of_##name((const block_##name *)((const uint8_t *)w + r * row_stride) + b, p++); \
    }                                                                                      \
    static void panel_tile_##name(int64_t n, const void *restrict panels, int64_t panel_stride, int64_t npanels, \
                                  const void *restrict a, int64_t act_stride, int64_t ncols, float *restrict out, \
                                  int64_t out_stride) {                                    \
        QGEMV_IQ2_C_TILE(n, panels, panel_stride / 8, 8 * npanels, a, act_stride, ncols, out, out_stride); \
    }
QGEMV_DEFINE_CODES_IQ2(iq2_xxs)
QGEMV_DEFINE_CODES_IQ2(iq2_xs)
QGEMV_DEFINE_CODES_IQ2(iq2_s)
