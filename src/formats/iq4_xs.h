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
 *     sum_ib (ls_ib - 32) sum_j kvalues[q_j] a_j     (exact int32 lanes), then one fma by d_x d_y,
 * each sub-block's levels looked up in value order (as the q8_K values lie) with their
 * magnitudes and scale once for all the columns; per column a sub-block costs sign, maddubs,
 * madd, add.  vec_dot is the CB = 1 case, so a batch gives vec_dot's bits.  Per sub-block pair
 * the decode takes 4 shuffle-port ops (2 lookups, 2 scale broadcasts), as the former vec_dot's
 * 5 (2 lookups, 2 activation permutes, 1 scale): GEMV as fast (C harness, 4096 x 4096, 1 thread,
 * 0.78-0.82 ms either way), batch 8 6.7 -> 4.4 ms, batch 32 26.8 -> 17.2 ms; putting the
 * levels in value order by 2 permutes after the lookups cost GEMV 10%.  The AVX-512 variant
 * adds each super-block's lanes up exactly and takes one scalar fma instead, the arithmetic of
 * its 16-row panels (superblocks_x16.h), which serve its products */
QGEMV_ALWAYS_INLINE void tile_iq4_xs(int64_t nb, const block_iq4_xs *x, const uint8_t *a, int64_t act_stride,
                                     const int CB, float *out) {
    const block_q8_K *y[QGEMV_TILE_COLS_MAX];
    qgemv_tile_columns_q8_K(a, act_stride, CB, y);
#if defined(QGEMV_AVX512)
    float sums[QGEMV_TILE_COLS_MAX] = {0};
#else
    __m256 acc[QGEMV_TILE_COLS_MAX];
    for (int c = 0; c < CB; c++) acc[c] = _mm256_setzero_ps();
#endif
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
        for (int c = 0; c < CB; c++)
#if defined(QGEMV_AVX512)
            sums[c] = qgemv_fma_total_i32x8(dx * y[c][i].d, sum[c], sums[c]);
#else
            acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(dx * y[c][i].d), _mm256_cvtepi32_ps(sum[c]), acc[c]);
#endif
    }
#if defined(QGEMV_AVX512)
    for (int c = 0; c < CB; c++) out[c] = sums[c];
#else
    for (int c = 0; c < CB; c++) out[c] = qgemv_hsum_f32x8(acc[c]);
#endif
}
QGEMV_DEFINE_VEC_DOT_AND_TILE_BY_KERNEL(iq4_xs, q8_K, tile_iq4_xs, QK_K, 8)
#define QGEMV_TILES_IQ4_XS(X) X(iq4_xs, q8_K)

#if defined(QGEMV_VNNI) && !defined(QGEMV_AVX512)
/* AVX-VNNI batches: vec_dot's int32 lane i of a super-block is
 *     sum_b ls_b (q_{32b+4i} a_{32b+4i} + ... + q_{32b+4i+3} a_{32b+4i+3})     (ls_b = its scale - 32),
 * and |ls_b q| <= 32 127 fits an int16.  So a row's super-block is decoded once for every column
 * into int16 ls_b q (iq4_xs_words) and the columns are packed once into int16 (block_q8_Kx16w), both
 * with lane i holding values 4i, 4i + 1 of a sub-block in one vector and 4i + 2, 4i + 3 in the
 * other: two vpdpwssd a sub-block add lane i's exact terms, scale included, where the per-column
 * kernel spends sign, maddubs, madd and add (tile_iq4_xs).  Then the same fma by d_x d_y per
 * super-block, and hsum_float_8: vec_dot's bits (a lane's sum stays below 16 2 4064 127 < 2^31).
 * Those 16 vpdpwssd a row, column and super-block are 8 cycles at two a cycle, and the pass runs
 * 9.5 in L1: batch 32 at about 1.6x the ggml built for AVX-VNNI, not 2x. */

/* the bytes of 32 values in value order, in each 128-bit half put as values 4 i, 4 i + 1 (i < 4)
 * then 4 i + 2, 4 i + 3: what iq4_xs_word_pairs widens */
static inline __m256i iq4_xs_split_quads(__m256i v) {
    const __m128i split = _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    return _mm256_shuffle_epi8(v, _mm256_broadcastsi128_si256(split));
}
/* split quads (above) -> int16 vectors e, o with, in int32 lane i, values 4 i, 4 i + 1 (e) and
 * 4 i + 2, 4 i + 3 (o) of 32 in value order: in-lane unpacks with the sign bytes */
static inline void iq4_xs_word_pairs(__m256i split, __m256i *e, __m256i *o) {
    const __m256i sign = _mm256_cmpgt_epi8(_mm256_setzero_si256(), split);
    *e = _mm256_unpacklo_epi8(split, sign);
    *o = _mm256_unpackhi_epi8(split, sign);
}

/* columns 16 g .. 16 g + 15 of q8_K activations a -> the n / QK_K blocks block_q8_Kx16w at packed */
static void pack_columns_q8_K_words(int64_t n, const void *restrict a, int64_t act_stride, int64_t ncols, int64_t g,
                                    void *restrict packed) {
    block_q8_Kx16w *p = (block_q8_Kx16w *)packed;
    const int nc = ncols - 16 * g < 16 ? (int)(ncols - 16 * g) : 16;
    for (int64_t ib = 0; ib < n / QK_K; ib++) {
        if (nc < 16) memset(&p[ib], 0, sizeof(p[ib]));
        for (int c = 0; c < nc; c++) {
            const block_q8_K *y = (const block_q8_K *)((const uint8_t *)a + (16 * g + c) * act_stride) + ib;
            for (int b = 0; b < QK_K / 32; b++) {
                __m256i e, o;
                iq4_xs_word_pairs(iq4_xs_split_quads(_mm256_loadu_si256((const __m256i *)(y->qs + 32 * b))), &e, &o);
                _mm256_store_si256((__m256i *)p[ib].w[c][2 * b], e);
                _mm256_store_si256((__m256i *)p[ib].w[c][2 * b + 1], o);
            }
            p[ib].d[c] = y->d;
        }
    }
}
#define QGEMV_PACKED_NBYTES_q8_K_words sizeof(block_q8_Kx16w)

/* a row's super-block as the tile reads it: ls_b q in block_q8_Kx16w's order, and d_x */
typedef struct {
    _Alignas(32) int16_t w[QK_K / 16][16];
    float d;
} iq4_xs_words;

static inline void iq4_xs_decode_words(const block_iq4_xs *x, iq4_xs_words *out) {
    const __m128i kv = _mm_loadu_si128((const __m128i *)kvalues_iq4nl);
    const __m256i table = _mm256_set_m128i(kv, kv), scales = sub_scales_iq4_xs(x);
    for (int b = 0; b < QK_K / 32; b++) {
        /* the 16 bytes split as iq4_xs_split_quads puts values, then looked up as levels_iq4_xs:
         * the levels come split */
        const __m256i src = iq4_xs_split_quads(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(x->qs + 16 * b))));
        const __m256i nib = _mm256_and_si256(_mm256_srlv_epi32(src, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)),
                                             _mm256_set1_epi8(0x0f));
        const __m256i ls = _mm256_shuffle_epi8(scales, _mm256_set1_epi16((short)(2 * b | (2 * b + 1) << 8)));
        __m256i e, o;
        iq4_xs_word_pairs(_mm256_shuffle_epi8(table, nib), &e, &o);
        _mm256_store_si256((__m256i *)out->w[2 * b], _mm256_mullo_epi16(e, ls));
        _mm256_store_si256((__m256i *)out->w[2 * b + 1], _mm256_mullo_epi16(o, ls));
    }
    out->d = qgemv_fp16_to_fp32(x->d);
}

/* R <= 3 decoded rows (x[r]) x CB <= 4 columns (a[c]: column c's words of this super-block, dy[c]
 * its scale): acc[r][c] += the super-block's lanes, as vec_dot's step.  12 chains of 16 vpdpwssd,
 * so their latency hides behind the others' work (2 rows x 2 columns, two chains each, waited on
 * it: C harness, 1 thread, 3.6 against 2.7 ns a row, column and super-block); out of line, else
 * GCC hoisted the columns' words out of the row loop and spilled them */
enum { IQ4_XS_WORDS_ROWS = 16, IQ4_XS_WORDS_COLS = 32 };
QGEMV_ALWAYS_INLINE void iq4_xs_words_pass(const iq4_xs_words *x, const int16_t *const *a, const float *dy,
                                          const int R, const int CB, __m256 (*acc)[IQ4_XS_WORDS_COLS]) {
    __m256i s[3][4];
    for (int r = 0; r < R; r++)
        for (int c = 0; c < CB; c++) s[r][c] = _mm256_setzero_si256();
    _Pragma("GCC unroll 16")
    for (int v = 0; v < QK_K / 16; v++) {
        __m256i wv[3];
        for (int r = 0; r < R; r++) wv[r] = _mm256_load_si256((const __m256i *)x[r].w[v]);
        for (int c = 0; c < CB; c++) {
            const __m256i av = _mm256_load_si256((const __m256i *)(a[c] + 16 * v));
            for (int r = 0; r < R; r++) s[r][c] = qgemv_dpwssd_256(s[r][c], wv[r], av);
        }
    }
    for (int r = 0; r < R; r++)
        for (int c = 0; c < CB; c++)
            acc[r][c] = _mm256_fmadd_ps(_mm256_set1_ps(x[r].d * dy[c]), _mm256_cvtepi32_ps(s[r][c]), acc[r][c]);
}
/* one out-of-line function per shape, iq4_xs_words_passes[R - 1][CB - 1] */
typedef void (*iq4_xs_words_pass_fn)(const iq4_xs_words *, const int16_t *const *, const float *, __m256 (*)[IQ4_XS_WORDS_COLS]);
#define IQ4_XS_DEFINE_WORDS_PASS(R, CB)                                                          \
    QGEMV_NEVER_INLINE void iq4_xs_words_pass_##R##x##CB(const iq4_xs_words *x, const int16_t *const *a, const float *dy, \
                                                        __m256 (*acc)[IQ4_XS_WORDS_COLS]) {    \
        iq4_xs_words_pass(x, a, dy, R, CB, acc);                                                \
    }
#define IQ4_XS_DEFINE_WORDS_PASSES(R)                                                             \
    IQ4_XS_DEFINE_WORDS_PASS(R, 1) IQ4_XS_DEFINE_WORDS_PASS(R, 2) IQ4_XS_DEFINE_WORDS_PASS(R, 3) IQ4_XS_DEFINE_WORDS_PASS(R, 4)
IQ4_XS_DEFINE_WORDS_PASSES(1)
IQ4_XS_DEFINE_WORDS_PASSES(2)
IQ4_XS_DEFINE_WORDS_PASSES(3)
static const iq4_xs_words_pass_fn iq4_xs_words_passes[3][4] = {
    {iq4_xs_words_pass_1x1, iq4_xs_words_pass_1x2, iq4_xs_words_pass_1x3, iq4_xs_words_pass_1x4},
    {iq4_xs_words_pass_2x1, iq4_xs_words_pass_2x2, iq4_xs_words_pass_2x3, iq4_xs_words_pass_2x4},
    {iq4_xs_words_pass_3x1, iq4_xs_words_pass_3x2, iq4_xs_words_pass_3x3, iq4_xs_words_pass_3x4}};

/* packed_tile_iq4_xs: tiles of 16 rows (the driver's) x slabs of 32 columns, the rows' accumulators
 * (16 KiB) and decoded super-blocks in L1, a super-block at a time, in passes of 3 rows */
static void packed_tile_iq4_xs(int64_t n, const void *restrict w, int64_t row_stride, int64_t nrows,
                               const void *restrict packed, int64_t ncols, float *restrict out, int64_t out_stride) {
    enum { RT = IQ4_XS_WORDS_ROWS, CS = IQ4_XS_WORDS_COLS };
    const int64_t nb = n / QK_K;
    const block_q8_Kx16w *yp = (const block_q8_Kx16w *)packed;
    __m256 acc[RT][CS];
    for (int64_t c0 = 0; c0 < ncols; c0 += CS) {
        const int ncs = ncols - c0 < CS ? (int)(ncols - c0) : CS;
        for (int64_t r0 = 0; r0 < nrows; r0 += RT) {
            const int nr = nrows - r0 < RT ? (int)(nrows - r0) : RT;
            for (int r = 0; r < nr; r++)
                for (int c = 0; c < ncs; c++) acc[r][c] = _mm256_setzero_ps();
            for (int64_t k = 0; k < nb; k++) {
                iq4_xs_words dec[RT];
                for (int r = 0; r < nr; r++) {
                    const block_iq4_xs *x = (const block_iq4_xs *)((const uint8_t *)w + (r0 + r) * row_stride) + k;
                    QGEMV_PREFETCH_L1_STREAM(x, sizeof(*x));
                    iq4_xs_decode_words(x, &dec[r]);
                }
                for (int cq = 0; cq < ncs; cq += 4) {
                    const int16_t *a[4];
                    float dy[4];
                    const int cb = ncs - cq < 4 ? ncs - cq : 4;
                    for (int c = 0; c < cb; c++) {
                        const block_q8_Kx16w *y = yp + (c0 + cq + c) / 16 * nb + k;
                        a[c] = y->w[(c0 + cq + c) % 16][0];
                        dy[c] = y->d[(c0 + cq + c) % 16];
                    }
                    for (int p = 0, rr; p < nr; p += rr) {   /* 16 rows: 3, 3, 3, 3, 2, 2 */
                        rr = nr - p == 4 ? 2 : nr - p < 3 ? nr - p : 3;
                        iq4_xs_words_passes[rr - 1][cb - 1](&dec[p], a, dy, (__m256 (*)[CS])&acc[p][cq]);
                    }
                }
            }
            for (int r = 0; r < nr; r++)
                for (int c = 0; c < ncs; c++) out[(r0 + r) * out_stride + c0 + c] = qgemv_hsum_f32x8(acc[r][c]);
        }
    }
}
/* from 10 columns: 4096 x 4096, 2 threads, against tile_iq4_xs: batch 10 / 12 / 16 / 32 1.53-1.57 /
 * 1.85-1.93 / 2.33-2.35 / 4.66-4.70 -> 1.48-1.49 / 1.58 / 1.96-1.99 / 3.50 ms; batch 8 1.15-1.17 ->
 * 1.20-1.24 (the decode, 32 cycles a row and super-block, paid for fewer columns) */
#define QGEMV_PACKED_TILES_IQ4_XS(X) X(iq4_xs, 10, q8_K_words)
#endif
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
#ifndef QGEMV_PACKED_TILES_IQ4_XS
#define QGEMV_PACKED_TILES_IQ4_XS(X)
#endif
