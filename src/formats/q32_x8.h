/* The 4-bit 32-value formats q4_0, iq4_nl and mxfp4: products, on 8 interleaved rows.
 *
 * Every product of these formats computes, per row r and activation column, blocks in order,
 *     acc_r = fma((float) sum_j q_rj a_j, d_r d_a, acc_r)
 * with the integer dot exact: ggml's arithmetic on its repacked layout (llama.cpp's CPU_REPACK,
 * what llama.cpp runs for these formats), to the bit (tests/test_benches.py).  Three paths give
 * those same bits:
 *   - panel_tile_<name>: a panel of 8 rows interleaved (block_<name>x8, include/qgemv/blocks.h),
 *     which QMatrix prepares once per matrix (interleave_x8_<name>); one 32-byte load gives an
 *     int32 lane per row, so the 8 rows' integer dots finish in lanes, and one fma per block
 *     updates 8 rows;
 *   - vec_dot_tile_<name>_q8_0: the GGUF layout (matrices not prepared, and the last rows % 8),
 *     8 rows at a time, each block of the 8 rows transposed in registers into a panel block
 *     (x8_from_rows), then the same pass; for more than 4 columns a chunk of blocks is
 *     transposed once into a scratch for all of them.  Interleaving the rows with scalar copies
 *     first ran this path's GEMV at 0.65-0.76x ggml's plain vec_dot; transposed in registers,
 *     1.2-1.7x (C harness, 2048 x 4096, 1 thread);
 *   - vec_dot_<name>_q8_0: one row;
 *   and on AVX-VNNI, batches of 16 columns and more from packed columns (src/packed_tile.h:
 *     packed_tile_<name>, packed_panel_tile_<name>), the columns in the lanes.
 * The integer dot meets maddubs (u8 x s8) in the way each format allows:
 *   q4_0   the nibble q + 8 in [0, 15]: all 8 products of a block summed in int16 lanes
 *          (16 |(q + 8) a| <= 16 15 127 < 2^15), minus 8 sum_j a_j once per activation block;
 *   mxfp4  kvalues_mxfp4[nibble] + 12 in [0, 24]: int16 sums of 4 products (8 24 127 < 2^15),
 *          minus 12 sum_j a_j;
 *   iq4_nl kvalues_iq4nl[nibble] in [-127, 113]: |q| . (a with q's sign), int32 per product pair;
 * with VNNI (AVX-512's or AVX-VNNI) every format's levels are unsigned bytes u = q + o (o = 8, 12, 128) and
 * vpdpbusd sums 4 products in int32, minus o sum_j a_j: the same isum, so the same bits.
 */

/* ---------------------------------------------------------------- the layout */
/* row r of a panel block from a GGUF block, and back */
#define QGEMV_DEFINE_X8_PUT_ROW(name, scale_field)                                              \
    static inline void x8_put_row_##name(block_##name##x8 *p, int r, const block_##name *x) {   \
        p->scale_field[r] = x->scale_field;                                                     \
        for (int g = 0; g < 4; g++) memcpy(&p->qs[32 * g + 4 * r], &x->qs[4 * g], 4);           \
    }                                                                                           \
    static inline void x8_get_row_##name(const block_##name##x8 *p, int r, block_##name *x) {   \
        x->scale_field = p->scale_field[r];                                                     \
        for (int g = 0; g < 4; g++) memcpy(&x->qs[4 * g], &p->qs[32 * g + 4 * r], 4);           \
    }
QGEMV_DEFINE_X8_PUT_ROW(q4_0, d)
QGEMV_DEFINE_X8_PUT_ROW(iq4_nl, d)
QGEMV_DEFINE_X8_PUT_ROW(mxfp4, e)

/* rows 0..7 of w (row_stride bytes apart), n values each -> n / 32 panel blocks */
#define QGEMV_DEFINE_INTERLEAVE_X8(name)                                                        \
    static void interleave_x8_##name(const void *restrict w, int64_t row_stride, int64_t n,     \
                                     void *restrict panel) {                                    \
        block_##name##x8 *p = (block_##name##x8 *)panel;                                        \
        for (int64_t b = 0; b < n / 32; b++)                                                    \
            for (int r = 0; r < 8; r++)                                                         \
                x8_put_row_##name(&p[b], r, (const block_##name *)((const uint8_t *)w + r * row_stride) + b); \
    }
QGEMV_DEFINE_INTERLEAVE_X8(q4_0)
QGEMV_DEFINE_INTERLEAVE_X8(iq4_nl)
QGEMV_DEFINE_INTERLEAVE_X8(mxfp4)

/* ---------------------------------------------------------------- one row */
#if defined(QGEMV_AVX2)
#define X8_BLOCK_DOT(name, x, y) qgemv_hsum_i32x8(qgemv_dot_s8s8_i32x8(unpack_##name(x), unpack_q8_0(y)))
#else
#define X8_BLOCK_DOT(name, x, y) dot_ref_32_##name(x, (y)->qs)
#endif
#define QGEMV_DEFINE_VEC_DOT_X8(name)                                                           \
    static float vec_dot_##name##_q8_0(int64_t n, const void *restrict w, const void *restrict a) { \
        const block_##name *x = (const block_##name *)w;                                        \
        const block_q8_0 *y = (const block_q8_0 *)a;                                            \
        float acc = 0.0f;                                                                       \
        for (int64_t b = 0; b < n / 32; b++) {                                                  \
            QGEMV_PREFETCH_STREAM(&x[b], sizeof(x[0]));                                         \
            acc = fmaf((float)X8_BLOCK_DOT(name, &x[b], &y[b]), scale_##name(&x[b]) * scale_q8_0(&y[b]), acc); \
        }                                                                                       \
        return acc;                                                                             \
    }
QGEMV_DEFINE_VEC_DOT_X8(q4_0)
QGEMV_DEFINE_VEC_DOT_X8(iq4_nl)
QGEMV_DEFINE_VEC_DOT_X8(mxfp4)

/* ---------------------------------------------------------------- panels */
#define X8_SIDE 512    /* column-blocks of activation set-up (scale, offset sum) a pass keeps */
#define X8_CHUNK 32    /* blocks of GGUF rows a batch's pass transposes into a scratch at once */
/* panels (8 rows each) whose accumulators a tile keeps, and so which share each column's per-block
 * set-up (scale, offset sum: about a third of the pair pass's instructions at 4 panels): 4 -> 16
 * panels, C harness, 4096 x 4096, 1 thread, batch 32 / 8: q4_0 1.05-1.14x / 1.08x; with the
 * driver's tiles of 128 rows (qgemv/_kernels.pyx: _TILE_PANEL_ROWS) */
#define X8_PANELS 16
#define X8_COLS 32     /* columns likewise */
/* a single column's panels (here and in q32_pairs.h) are prefetched QGEMV_STREAM_AHEAD ahead
 * where the CPU asks for it (include/qgemv/simd.h: QGEMV_PREFETCH_LINE_AT): on an Intel Xeon
 * (AMX, a KVM guest) whose hardware prefetcher left them waiting on memory, 14336 x 4096 out of
 * cache, 2 threads, q4_0 1.60-1.65 -> 1.25 ms, iq4_nl 1.58-1.64 -> 1.15-1.19, mxfp4 1.37-1.60 ->
 * 1.21-1.27, q4_1 1.53-1.70 -> 1.36-1.42, q5_1 1.82-1.99 -> 1.48-1.50, q5_0 even; 1 thread up to
 * 12% faster; in cache even (on a Zen 3 the prefetch at QGEMV_STREAM_AHEAD gave 1.0-1.2x against
 * none).  A Zen 4 streams them faster alone, as its 16-row panels: without, same process, 1 / 2
 * threads, q4_0 2.20 -> 1.84 / 1.77 -> 1.34 ms, iq4_nl 1.40 -> 1.22 / 1.33 -> 1.11, mxfp4 1.85
 * -> 1.65 / 1.28 -> 1.13, q4_1 1.58 -> 1.30 / 1.48 -> 1.25, q5_0 1.82 -> 1.57 / 0.97 -> 0.80,
 * q5_1 2.10 -> 1.82 / 1.43 -> 1.41.  A Zen 3, which runs the AVX2 variant natively, was measured
 * faster with it (above), so the choice follows the CPU's generation (qgemv/_dispatch.py); the
 * AVX2 code on a Zen 4 ran 1.22-1.30x faster without (QGEMV_ISA=avx2, 1 thread).  The Xeon's
 * figures above were 4 times that far ahead, before the hints went two a line
 * (include/qgemv/simd.h); since, QGEMV_STREAM_AHEAD ran faster (C harness on huge pages as
 * numpy's, 14336 x 4096 rotated through 470 MiB, 1 / 2 threads: q5_0 12.1 -> 13.3 / 23.5 -> 26.3
 * GB/s, q4_0 and iq4_nl 1.02-1.04x) */
#define X8_STREAM_AHEAD QGEMV_STREAM_AHEAD
#define X8_PREFETCH_PASS(p, nbytes, ncols)                                                      \
    QGEMV_PREFETCH_COLS_STREAM_AT(p, nbytes, X8_STREAM_AHEAD, ncols)

#if defined(QGEMV_AVX2)
enum { X8_OFFSET_ALL, X8_OFFSET_HALF, X8_SIGNED, X8_VNNI };   /* how the levels meet maddubs (above) */
#if defined(QGEMV_VNNI)
/* VNNI: every format's levels as unsigned bytes u = q + o (iq4_nl: kvalues_iq4nl + 128 in
 * [1, 241]), vpdpbusd summing 4 products exactly in int32 from -o sum_j a_j: the same isum */
#define X8_KIND_q4_0 X8_VNNI
#define X8_KIND_mxfp4 X8_VNNI
#define X8_KIND_iq4_nl X8_VNNI
#define X8_OFFSET_iq4_nl 128
#else
#define X8_KIND_q4_0 X8_OFFSET_ALL
#define X8_KIND_mxfp4 X8_OFFSET_HALF
#define X8_KIND_iq4_nl X8_SIGNED
#define X8_OFFSET_iq4_nl 0
#endif
#define X8_OFFSET_q4_0 8
#define X8_OFFSET_mxfp4 12

/* the 8 rows' scales of a panel block, lane r: row r */
static inline __m256 x8_scales8_q4_0(const block_q4_0x8 *p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p->d));
}
static inline __m256 x8_scales8_iq4_nl(const block_iq4_nlx8 *p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p->d));
}
/* qgemv_e8m0_to_fp32_half of 8 exponents: (e - 1) << 23, or 2^21 << e below e = 2 */
static inline __m256 x8_scales8_mxfp4(const block_mxfp4x8 *p) {
    const __m256i e = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p->e));
    const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
    const __m256i subnormal = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
    return _mm256_castsi256_ps(_mm256_blendv_epi8(normal, subnormal, _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e)));
}
/* nibbles -> what maddubs takes as its unsigned operand (q4_0: the nibble itself) */
static inline __m256i x8_levels_q4_0(__m256i nib) { return nib; }
/* the unsigned levels u = q + o of the 16 nibbles, a pshufb table (both vector widths; iq4_nl's:
 * kvalues_iq4nl_u8, q32.h) */
static inline __m128i x8_table_mxfp4(void) {   /* kvalues_mxfp4 + 12 */
    return _mm_add_epi8(_mm_loadu_si128((const __m128i *)kvalues_mxfp4), _mm_set1_epi8(12));
}
static inline __m256i x8_levels_mxfp4(__m256i nib) {
    return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(x8_table_mxfp4()), nib);
}
#if defined(QGEMV_VNNI)
static inline __m256i x8_levels_iq4_nl(__m256i nib) {
    return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(kvalues_iq4nl_u8()), nib);
}
#else
static inline __m256i x8_levels_iq4_nl(__m256i nib) { return qgemv_lookup16(kvalues_iq4nl, nib); }  /* signed */
#endif
/* a panel group's 32 bytes (4 of each row) -> the levels of their low nibbles (values 4 g ..
 * 4 g + 3 of each row) and of their high ones (16 + 4 g ..) */
#define QGEMV_DEFINE_X8_NIBBLE_LEVELS(name)                                                     \
    static inline void x8_nibble_levels_##name(__m256i v, __m256i *lo, __m256i *hi) {          \
        const __m256i m4 = _mm256_set1_epi8(0x0f);                                              \
        *lo = x8_levels_##name(_mm256_and_si256(v, m4));                                        \
        *hi = x8_levels_##name(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4));                 \
    }
QGEMV_DEFINE_X8_NIBBLE_LEVELS(q4_0)
QGEMV_DEFINE_X8_NIBBLE_LEVELS(iq4_nl)
QGEMV_DEFINE_X8_NIBBLE_LEVELS(mxfp4)

/* o sum_j a_j of an activation block: 8 lanes of o (4 values each), then summed */
static inline int32_t x8_offset_sum(int o, const block_q8_0 *y) {
    if (!o) return 0;
    return qgemv_hsum_i32x8(qgemv_dot_u8s8_i32x8(_mm256_set1_epi8((char)o), unpack_q8_0(y)));
}

/* a panel block's 8 integer dots with one activation block, lane r: row r.  u[2g], u[2g + 1]:
 * the levels of nibble group g, low and high (unsigned, or signed q for X8_SIGNED with
 * |q| in au[]); corr: o sum_j a_j */
QGEMV_ALWAYS_INLINE __m256i x8_dot(const int kind, const __m256i *u, const __m256i *au, const int8_t *aq,
                                   int32_t corr) {
    __m256i s16a = _mm256_setzero_si256(), s16b = _mm256_setzero_si256(), s32 = _mm256_setzero_si256();
    const __m256i ones = _mm256_set1_epi16(1);
#if defined(QGEMV_VNNI)
    if (kind == X8_VNNI) {   /* two chains, summed: a GEMV's blocks overlap better */
        __m256i s0 = _mm256_set1_epi32(-corr), s1 = _mm256_setzero_si256();
        for (int g = 0; g < 4; g++) {
            s0 = qgemv_dpbusd_bcst_256(s0, u[2 * g], aq + 4 * g);
            s1 = qgemv_dpbusd_bcst_256(s1, u[2 * g + 1], aq + 16 + 4 * g);
        }
        return _mm256_add_epi32(s0, s1);
    }
#endif
    for (int g = 0; g < 4; g++) {
        int32_t lo, hi;
        memcpy(&lo, aq + 4 * g, 4);
        memcpy(&hi, aq + 16 + 4 * g, 4);
        const __m256i alo = _mm256_set1_epi32(lo), ahi = _mm256_set1_epi32(hi);
        if (kind == X8_SIGNED) {
            s32 = _mm256_add_epi32(s32, _mm256_madd_epi16(_mm256_maddubs_epi16(au[2 * g], _mm256_sign_epi8(alo, u[2 * g])), ones));
            s32 = _mm256_add_epi32(s32, _mm256_madd_epi16(_mm256_maddubs_epi16(au[2 * g + 1], _mm256_sign_epi8(ahi, u[2 * g + 1])), ones));
        } else {
            s16a = _mm256_add_epi16(s16a, _mm256_maddubs_epi16(u[2 * g], alo));
            s16b = _mm256_add_epi16(s16b, _mm256_maddubs_epi16(u[2 * g + 1], ahi));
        }
    }
    if (kind == X8_SIGNED) return s32;
    __m256i s;
    if (kind == X8_OFFSET_ALL)
        s = _mm256_madd_epi16(_mm256_add_epi16(s16a, s16b), ones);
    else
        s = _mm256_add_epi32(_mm256_madd_epi16(s16a, ones), _mm256_madd_epi16(s16b, ones));
    return _mm256_sub_epi32(s, _mm256_set1_epi32(corr));
}

/* block k of 8 GGUF rows as the registers of a panel block: qs[g] the 32 bytes of nibble group
 * g (bytes 4 g .. 4 g + 3 of row r at bytes 4 r), a 4 x 8 transpose of the rows' dwords; the
 * scales by way of a panel block's scale field (only that field of *p is written) */
#define QGEMV_DEFINE_X8_FROM_ROWS(name, scale_field)                                            \
    QGEMV_ALWAYS_INLINE void x8_from_rows_##name(const uint8_t *const *rows, int64_t k, __m256i qs[4], \
                                                 block_##name##x8 *p) {                         \
        __m256i t[4];   /* rows r and r + 4: dwords g = 0..3 of each */                         \
        for (int r = 0; r < 4; r++) {                                                           \
            const block_##name *lo = (const block_##name *)rows[r] + k, *hi = (const block_##name *)rows[r + 4] + k; \
            t[r] = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)lo->qs)), \
                                           _mm_loadu_si128((const __m128i *)hi->qs), 1);        \
        }                                                                                       \
        for (int r = 0; r < 8; r++) p->scale_field[r] = ((const block_##name *)rows[r] + k)->scale_field; \
        const __m256i a01 = _mm256_unpacklo_epi32(t[0], t[1]), b01 = _mm256_unpackhi_epi32(t[0], t[1]); \
        const __m256i a23 = _mm256_unpacklo_epi32(t[2], t[3]), b23 = _mm256_unpackhi_epi32(t[2], t[3]); \
        qs[0] = _mm256_unpacklo_epi64(a01, a23);                                                \
        qs[1] = _mm256_unpackhi_epi64(a01, a23);                                                \
        qs[2] = _mm256_unpacklo_epi64(b01, b23);                                                \
        qs[3] = _mm256_unpackhi_epi64(b01, b23);                                                \
    }
QGEMV_DEFINE_X8_FROM_ROWS(q4_0, d)
QGEMV_DEFINE_X8_FROM_ROWS(iq4_nl, d)
QGEMV_DEFINE_X8_FROM_ROWS(mxfp4, e)

#if defined(QGEMV_VNNI) && !defined(QGEMV_AVX512)
/* AVX-VNNI's batches of 16 columns and more, from packed columns (src/packed_tile.h): a panel
 * block's levels u = q + o (as x8_pass's) and scales as that tile reads them, from a panel or
 * from 8 GGUF rows */
#define QGEMV_DEFINE_X8_DECODE(name, scale_field)                                               \
    QGEMV_ALWAYS_INLINE void x8_decode_levels_##name(const __m256i qs[4], const block_##name##x8 *scales, \
                                                     qgemv_decoded_x8 *dec) {                   \
        for (int g = 0; g < 4; g++) {                                                           \
            __m256i lo, hi;                                                                     \
            x8_nibble_levels_##name(qs[g], &lo, &hi);                                           \
            _mm256_store_si256((__m256i *)dec->u[g], lo);                                       \
            _mm256_store_si256((__m256i *)dec->u[4 + g], hi);                                   \
        }                                                                                       \
        _mm256_storeu_ps(dec->d, x8_scales8_##name(scales));                                    \
    }                                                                                           \
    static inline void x8_decode_panel_##name(const block_##name##x8 *p, qgemv_decoded_x8 *dec) { \
        QGEMV_PREFETCH_L1_STREAM(p, sizeof(*p));                                                \
        __m256i qs[4];                                                                          \
        for (int g = 0; g < 4; g++) qs[g] = _mm256_loadu_si256((const __m256i *)(p->qs + 32 * g)); \
        x8_decode_levels_##name(qs, p, dec);                                                    \
    }                                                                                           \
    static inline void x8_decode_rows_##name(const uint8_t *const *rows, int64_t k, qgemv_decoded_x8 *dec) { \
        for (int r = 0; r < 8; r++) QGEMV_PREFETCH_L1_STREAM((const block_##name *)rows[r] + k, sizeof(block_##name)); \
        block_##name##x8 scales;                                                                \
        __m256i qs[4];                                                                          \
        x8_from_rows_##name(rows, k, qs, &scales);                                              \
        x8_decode_levels_##name(qs, &scales, dec);                                              \
    }
QGEMV_DEFINE_X8_DECODE(q4_0, d)
QGEMV_DEFINE_X8_DECODE(iq4_nl, d)
QGEMV_DEFINE_X8_DECODE(mxfp4, e)
QGEMV_DEFINE_PACKED_TILE_X8(q4_0, X8_OFFSET_q4_0)
QGEMV_DEFINE_PACKED_TILE_X8(iq4_nl, X8_OFFSET_iq4_nl)
QGEMV_DEFINE_PACKED_TILE_X8(mxfp4, X8_OFFSET_mxfp4)
/* (name, from how many columns, activations) and (name, over panels' rows, from how many): from
 * 16 columns (4096 x 4096, 2 threads, against x8_pass: batch 16 / 24 / 32 q4_0 1.10-1.16 /
 * 1.66-1.76 / 2.3-2.4 -> 1.08-1.10 / 1.58-1.61 / 2.06-2.10 ms); at 8 about even, and from 9 to
 * 15 columns the last ones, a column at a time, cost more than x8_pass's (q4_0 batch 12
 * 0.87 -> 0.95) */
#define QGEMV_PACKED_TILES_X8(X) X(q4_0, 16, q8_0) X(iq4_nl, 16, q8_0) X(mxfp4, 16, q8_0)
#define QGEMV_PACKED_PANEL_TILES_X8(X) X(q4_0, packed_panel_tile_q4_0, 16) X(iq4_nl, packed_panel_tile_iq4_nl, 16) \
    X(mxfp4, packed_panel_tile_mxfp4, 16)
#endif

/* kn panel blocks against CB columns: acc[c] (lane r: row r) gets blocks k0 .. k0 + kn - 1 of
 * column c (y[c] points at its block k0); da[k * stride + c], corr[k * stride + c]: the columns'
 * scales and offset sums.  The blocks are xp[0 .. kn), or, with rows (xp NULL), blocks
 * k0 .. k0 + kn - 1 of 8 GGUF rows, transposed on the way in (x8_from_rows) */
#define QGEMV_DEFINE_X8_PASS(name)                                                              \
    QGEMV_ALWAYS_INLINE void x8_pass_##name(const block_##name##x8 *restrict xp, const uint8_t *const *rows, \
                                            int64_t k0, int64_t kn,                             \
                                            const block_q8_0 *const *y, const float *da,        \
                                            const int32_t *corr, int64_t stride, const int CB, __m256 *acc) { \
        __m256 ac[4];                                                                           \
        for (int c = 0; c < CB; c++) ac[c] = acc[c];                                            \
        for (int64_t k = 0; k < kn; k++) {                                                      \
            block_##name##x8 scales;                                                            \
            __m256i qs[4];                                                                      \
            if (xp) {                                                                           \
                X8_PREFETCH_PASS(&xp[k], sizeof(xp[0]), CB);                                    \
                for (int g = 0; g < 4; g++) qs[g] = _mm256_loadu_si256((const __m256i *)(xp[k].qs + 32 * g)); \
            } else {                                                                            \
                for (int r = 0; r < 8; r++)                                                     \
                    QGEMV_PREFETCH_STREAM((const block_##name *)rows[r] + k0 + k, sizeof(block_##name)); \
                x8_from_rows_##name(rows, k0 + k, qs, &scales);                                 \
            }                                                                                   \
            const __m256 dw = x8_scales8_##name(xp ? &xp[k] : &scales);                         \
            __m256i u[8], au[8];                                                                \
            for (int g = 0; g < 4; g++) {                                                       \
                const __m256i v = qs[g];                                                        \
                x8_nibble_levels_##name(v, &u[2 * g], &u[2 * g + 1]);                           \
                if (X8_KIND_##name == X8_SIGNED) {                                              \
                    au[2 * g] = _mm256_abs_epi8(u[2 * g]);                                      \
                    au[2 * g + 1] = _mm256_abs_epi8(u[2 * g + 1]);                              \
                }                                                                               \
            }                                                                                   \
            for (int c = 0; c < CB; c++) {                                                      \
                const __m256i isum = x8_dot(X8_KIND_##name, u, au, y[c][k].qs, corr[k * stride + c]); \
                ac[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(dw, _mm256_set1_ps(da[k * stride + c])), ac[c]); \
            }                                                                                   \
        }                                                                                       \
        for (int c = 0; c < CB; c++) acc[c] = ac[c];                                            \
    }
QGEMV_DEFINE_X8_PASS(q4_0)
QGEMV_DEFINE_X8_PASS(iq4_nl)
QGEMV_DEFINE_X8_PASS(mxfp4)

#if defined(QGEMV_AVX512)
/* Batches on AVX-512 take two panels per pass, 16 rows on the lanes of a zmm (0-7 the first
 * panel's rows, 8-15 the second's), and 8 columns: batch 8 and 32 ran 1.3-2x faster than one
 * panel per pass.  A single column keeps one panel per pass where the CPU streams alone (a Zen
 * 4 then: two panels at once read it 25-40% slower out of cache, 14336 x 4096, 1 thread) and
 * takes the pair pass where it takes the hints (the tile loop, below).  Levels and isums as the
 * 8-lane VNNI dot's (x8_dot), so the same bits. */
/* the 16 rows' scales of two panel blocks, lane r: row r of p0, lane 8 + r: row r of p1 */
static inline __m512 x8_scales16_q4_0(const block_q4_0x8 *p0, const block_q4_0x8 *p1) {
    return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p0->d)),
                                                   _mm_loadu_si128((const __m128i *)p1->d), 1));
}
static inline __m512 x8_scales16_iq4_nl(const block_iq4_nlx8 *p0, const block_iq4_nlx8 *p1) {
    return x8_scales16_q4_0((const block_q4_0x8 *)p0, (const block_q4_0x8 *)p1);   /* same fields */
}
/* qgemv_e8m0_to_fp32_half of 16 exponents: (e - 1) << 23, or 2^21 << e below e = 2 */
static inline __m512 x8_scales16_mxfp4(const block_mxfp4x8 *p0, const block_mxfp4x8 *p1) {
    const __m512i e = _mm512_cvtepu8_epi32(_mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)p0->e),
                                                              _mm_loadl_epi64((const __m128i *)p1->e)));
    const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
    const __m512i subnormal = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
    return _mm512_castsi512_ps(_mm512_mask_blend_epi32(_mm512_cmplt_epi32_mask(e, _mm512_set1_epi32(2)), normal, subnormal));
}
/* nibbles -> u = q + o */
static inline __m512i x8_levels16_q4_0(__m512i nib) { return nib; }
static inline __m512i x8_levels16_mxfp4(__m512i nib) {
    return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(x8_table_mxfp4()), nib);
}
static inline __m512i x8_levels16_iq4_nl(__m512i nib) {
    return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(kvalues_iq4nl_u8()), nib);
}
/* a pair of 256-bit accumulators (rows of panel p, of panel p + 1) as one zmm, and back */
static inline __m512 x8_join(__m256 lo, __m256 hi) {
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
}
static inline void x8_split(__m512 v, __m256 *lo, __m256 *hi) {
    *lo = _mm512_castps512_ps256(v);
    *hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

/* kn blocks of the panels xp[0], xp[1] against CB columns: acc[c] (panel p's rows) and
 * acc[X8_COLS + c] (panel p + 1's) get blocks k0 .. k0 + kn - 1 of column c (y[c] points at its
 * block k0); da[k * stride + c], corr[k * stride + c]: the columns' scales and offset sums.  GGUF
 * rows come through the tile's scratch, so rows is unused here.  Each panel's lines are asked
 * for as the one-panel pass asks (a single column: both hints, X8_PREFETCH_PASS). */
#define QGEMV_DEFINE_X8_PASS_PAIR(name)                                                         \
    QGEMV_ALWAYS_INLINE void x8_pass_pair_##name(const block_##name##x8 *const *xp, const uint8_t *const *rows, \
                                            int64_t k0, int64_t kn,                             \
                                            const block_q8_0 *const *y, const float *da,        \
                                            const int32_t *corr, int64_t stride, const int CB, __m256 *acc) { \
        (void)rows; (void)k0;                                                                   \
        const __m512i m4 = _mm512_set1_epi8(0x0f);                                              \
        __m512 ac[8];                                                                           \
        for (int c = 0; c < CB; c++) ac[c] = x8_join(acc[c], acc[X8_COLS + c]);                 \
        for (int64_t k = 0; k < kn; k++) {                                                      \
            X8_PREFETCH_PASS(&xp[0][k], sizeof(xp[0][0]), CB);                                  \
            X8_PREFETCH_PASS(&xp[1][k], sizeof(xp[1][0]), CB);                                  \
            __m512i u[8];                                                                       \
            for (int g = 0; g < 4; g++) {                                                       \
                const __m512i v = _mm512_inserti64x4(                                           \
                    _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(xp[0][k].qs + 32 * g))), \
                    _mm256_loadu_si256((const __m256i *)(xp[1][k].qs + 32 * g)), 1);            \
                u[2 * g] = x8_levels16_##name(_mm512_and_si512(v, m4));                         \
                u[2 * g + 1] = x8_levels16_##name(_mm512_and_si512(_mm512_srli_epi16(v, 4), m4)); \
            }                                                                                   \
            const __m512 dw = x8_scales16_##name(&xp[0][k], &xp[1][k]);                         \
            /* the columns' chains side by side, each column's 8 vpdpbusd in one int32 chain  \
             * (exact, so any order gives the same isum): one chain after another left them   \
             * waiting on each other's latency (q4_0 batch 8 / 32: 1.06 / 1.05x) */           \
            __m512i s[8];                                                                       \
            for (int c = 0; c < CB; c++) s[c] = _mm512_set1_epi32(-corr[k * stride + c]);      \
            for (int g = 0; g < 8; g++)   /* u[g]: nibble group g / 2, low (g even) or high */  \
                for (int c = 0; c < CB; c++)                                                    \
                    s[c] = qgemv_dpbusd_bcst_512(s[c], u[g], y[c][k].qs + (g & 1) * 16 + 4 * (g >> 1)); \
            for (int c = 0; c < CB; c++)                                                        \
                ac[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[c]), _mm512_mul_ps(dw, _mm512_set1_ps(da[k * stride + c])), ac[c]); \
        }                                                                                       \
        for (int c = 0; c < CB; c++) x8_split(ac[c], &acc[c], &acc[X8_COLS + c]);               \
    }
QGEMV_DEFINE_X8_PASS_PAIR(q4_0)
QGEMV_DEFINE_X8_PASS_PAIR(iq4_nl)
QGEMV_DEFINE_X8_PASS_PAIR(mxfp4)
#endif

/* The tile loop, once for both layouts and both passes: rows in groups of up to X8_PANELS
 * panels, columns in slabs of X8_COLS, blocks in chunks of X8_SIDE / columns (the columns' scales
 * and offset sums made once per chunk for all the group's panels, each panel chunk then swept by
 * every group of 4 or 8 columns: a single column's chunk is 512 blocks, so its panels are read
 * one after another, or on AVX-512, where the CPU takes the hints (qgemv_prefetch_one_column),
 * two at a time by the pair pass, two streams a thread as the 16-row panels' single columns
 * read (Intel Xeon, through QMatrix, builds alternating, 14336 x 4096 out of cache, 2 / 1
 * threads: q4_0 1.15-1.19 -> 1.14-1.17 / 2.24-2.35 -> 2.19-2.23 ms, iq4_nl 1.21-1.22 ->
 * 1.14-1.17 / 2.24-2.35 -> 2.12-2.23, mxfp4 1.12-1.25 -> 1.05-1.16 / 2.27-2.31 -> 2.08-2.18;
 * 57344 x 768 even to 1.1x faster, in cache even); 32 columns' is 16 blocks, 2.3 KiB of a
 * panel, reused from L1).  plain: src holds nrows GGUF rows (stride: row bytes), read 8 at a
 * time (a last group short of 8 rows repeats its last row); the one-panel pass takes up to 4
 * columns straight from the rows (x8_from_rows in the pass), more go through a scratch of
 * X8_CHUNK blocks transposed once per chunk (redone per group of 4 columns, batch 32 ran 5-8%
 * slower); else src holds nrows / 8 panels (stride: panel bytes).  A pair's missing second
 * panel is its first again, those lanes dropped. */
#define X8_PASS_CASE(pass, xp, rows, cbmax, cb)                                                 \
    case cb: pass(xp, rows, k0, kn, yc, dac, cc, nc, cb < cbmax ? cb : cbmax, &acc[p][cg]); break;
#define X8_PASS_CASES(pass, xp, rows, cbmax)                                                    \
    for (int64_t cg = 0; cg < nc; cg += cbmax) {                                                \
        const block_q8_0 *const *yc = y + cg;                                                   \
        const float *dac = da + cg;                                                             \
        const int32_t *cc = corr + cg;                                                          \
        switch (nc - cg < cbmax ? nc - cg : cbmax) {                                            \
        X8_PASS_CASE(pass, xp, rows, cbmax, 1) X8_PASS_CASE(pass, xp, rows, cbmax, 2)           \
        X8_PASS_CASE(pass, xp, rows, cbmax, 3) X8_PASS_CASE(pass, xp, rows, cbmax, 4)           \
        X8_PASS_CASE(pass, xp, rows, cbmax, 5) X8_PASS_CASE(pass, xp, rows, cbmax, 6)           \
        X8_PASS_CASE(pass, xp, rows, cbmax, 7) X8_PASS_CASE(pass, xp, rows, cbmax, 8)           \
        }                                                                                       \
    }
#if defined(QGEMV_AVX512)
#define X8_PAIRS 1
static_assert(X8_PANELS % 2 == 0, "a pair's second panel must have accumulators in the tile");
#define X8_PASS_PAIR_CASES(name) if (pair) X8_PASS_CASES(x8_pass_pair_##name, xp, rows, 8) else
#else
#define X8_PAIRS 0
#define X8_PASS_PAIR_CASES(name)
#endif
#define QGEMV_DEFINE_X8_TILE(name)                                                              \
    static void x8_tile_##name(int64_t n, const uint8_t *src, int64_t stride, int64_t nrows, int plain, \
                               const uint8_t *a, int64_t act_stride, int64_t ncols, float *out, \
                               int64_t out_stride) {                                            \
        const int64_t nb = n / 32;                                                              \
        block_##name##x8 scratch[1 + X8_PAIRS][X8_CHUNK];                                       \
        float da[X8_SIDE];                                                                      \
        int32_t corr[X8_SIDE];                                                                  \
        __m256 acc[X8_PANELS][X8_COLS];                                                         \
        for (int64_t c0 = 0; c0 < ncols; c0 += X8_COLS) {                                       \
            const int64_t nc = ncols - c0 < X8_COLS ? ncols - c0 : X8_COLS;                     \
            const int pair = X8_PAIRS && (nc > 1 || (!plain && qgemv_prefetch_one_column));     \
            const int scratched = plain && (pair || nc > 4);                                    \
            const int64_t chunk = scratched && X8_SIDE / nc > X8_CHUNK ? X8_CHUNK : X8_SIDE / nc; \
            for (int64_t r0 = 0; r0 < nrows; r0 += 8 * X8_PANELS) {                             \
                const int64_t nr = nrows - r0 < 8 * X8_PANELS ? nrows - r0 : 8 * X8_PANELS;     \
                const int64_t np = (nr + 7) / 8;                                                \
                for (int64_t p = 0; p < X8_PANELS; p++)                                         \
                    for (int64_t c = 0; c < nc; c++) acc[p][c] = _mm256_setzero_ps();           \
                for (int64_t k0 = 0; k0 < nb; k0 += chunk) {                                    \
                    const int64_t kn = nb - k0 < chunk ? nb - k0 : chunk;                       \
                    const block_q8_0 *y[X8_COLS];                                               \
                    for (int64_t c = 0; c < nc; c++) {                                          \
                        y[c] = (const block_q8_0 *)(a + (c0 + c) * act_stride) + k0;            \
                        for (int64_t k = 0; k < kn; k++) {                                      \
                            da[k * nc + c] = scale_q8_0(&y[c][k]);                              \
                            corr[k * nc + c] = x8_offset_sum(X8_OFFSET_##name, &y[c][k]);       \
                        }                                                                       \
                    }                                                                           \
                    for (int64_t p = 0; p < np; p += 1 + pair) {                                \
                        const uint8_t *rows[8] = {NULL};                                        \
                        const block_##name##x8 *xp[2] = {NULL, NULL};                           \
                        for (int h = 0; h <= pair; h++) {                                       \
                            const int64_t q = p + h < np ? p + h : p;                           \
                            if (!plain) {                                                       \
                                xp[h] = (const block_##name##x8 *)(src + (r0 / 8 + q) * stride) + k0; \
                                continue;                                                       \
                            }                                                                   \
                            for (int r = 0; r < 8; r++) {                                       \
                                const int64_t rr = r0 + 8 * q + r < nrows ? r0 + 8 * q + r : nrows - 1; \
                                rows[r] = src + rr * stride;                                    \
                            }                                                                   \
                            if (!scratched) continue;   /* transposed once for all the column groups */ \
                            for (int64_t k = 0; k < kn; k++) {                                  \
                                __m256i qs[4];                                                  \
                                x8_from_rows_##name(rows, k0 + k, qs, &scratch[h][k]);          \
                                for (int g = 0; g < 4; g++) _mm256_storeu_si256((__m256i *)(scratch[h][k].qs + 32 * g), qs[g]); \
                            }                                                                   \
                            xp[h] = scratch[h];                                                 \
                        }                                                                       \
                        X8_PASS_PAIR_CASES(name)                                                \
                        if (xp[0]) X8_PASS_CASES(x8_pass_##name, xp[0], rows, 4)                \
                        else X8_PASS_CASES(x8_pass_##name, NULL, rows, 4)                       \
                    }                                                                           \
                }                                                                               \
                for (int64_t p = 0; p < np; p++)                                                \
                    for (int64_t c = 0; c < nc; c++) {                                          \
                        float o[8];                                                             \
                        _mm256_storeu_ps(o, acc[p][c]);                                         \
                        for (int64_t r = 0; r < 8 && r0 + 8 * p + r < nrows; r++)               \
                            out[(r0 + 8 * p + r) * out_stride + c0 + c] = o[r];                 \
                    }                                                                           \
            }                                                                                   \
        }                                                                                       \
    }
#else
/* portable: the same arithmetic, row by row */
#define QGEMV_DEFINE_X8_TILE(name)                                                              \
    static void x8_tile_##name(int64_t n, const uint8_t *src, int64_t stride, int64_t nrows, int plain, \
                               const uint8_t *a, int64_t act_stride, int64_t ncols, float *out, \
                               int64_t out_stride) {                                            \
        for (int64_t r = 0; r < nrows; r++)                                                     \
            for (int64_t c = 0; c < ncols; c++) {                                               \
                const block_q8_0 *y = (const block_q8_0 *)(a + c * act_stride);                 \
                float acc = 0.0f;                                                               \
                if (plain) {                                                                    \
                    acc = vec_dot_##name##_q8_0(n, src + r * stride, y);                        \
                } else {                                                                        \
                    const block_##name##x8 *xp = (const block_##name##x8 *)(src + r / 8 * stride); \
                    for (int64_t b = 0; b < n / 32; b++) {   /* vec_dot's step on the row's block */ \
                        block_##name x;                                                         \
                        x8_get_row_##name(&xp[b], (int)(r % 8), &x);                            \
                        acc = fmaf((float)dot_ref_32_##name(&x, y[b].qs), scale_##name(&x) * scale_q8_0(&y[b]), acc); \
                    }                                                                           \
                }                                                                               \
                out[r * out_stride + c] = acc;                                                  \
            }                                                                                   \
    }
#endif

QGEMV_DEFINE_X8_TILE(q4_0)
QGEMV_DEFINE_X8_TILE(iq4_nl)
QGEMV_DEFINE_X8_TILE(mxfp4)

/* the table's entries: panel_tile_<name> over prepared panels, vec_dot_tile_<name>_q8_0 over
 * GGUF rows */
#define QGEMV_DEFINE_X8_ENTRIES(name)                                                           \
    static void panel_tile_##name(int64_t n, const void *restrict panels, int64_t panel_stride, \
                                  int64_t npanels, const void *restrict a, int64_t act_stride,  \
                                  int64_t ncols, float *restrict out, int64_t out_stride) {     \
        x8_tile_##name(n, (const uint8_t *)panels, panel_stride, 8 * npanels, 0, (const uint8_t *)a, \
                       act_stride, ncols, out, out_stride);                                     \
    }                                                                                           \
    static void vec_dot_tile_##name##_q8_0(int64_t n, const void *restrict w, int64_t row_stride, \
                                           int64_t nrows, const void *restrict a, int64_t act_stride, \
                                           int64_t ncols, float *restrict out, int64_t out_stride) { \
        x8_tile_##name(n, (const uint8_t *)w, row_stride, nrows, 1, (const uint8_t *)a, act_stride, \
                       ncols, out, out_stride);                                                 \
    }
QGEMV_DEFINE_X8_ENTRIES(q4_0)
QGEMV_DEFINE_X8_ENTRIES(iq4_nl)
QGEMV_DEFINE_X8_ENTRIES(mxfp4)

#define QGEMV_TILES_X8(X) X(q4_0, q8_0) X(iq4_nl, q8_0) X(mxfp4, q8_0)
#ifndef QGEMV_PACKED_TILES_X8
#define QGEMV_PACKED_TILES_X8(X)
#define QGEMV_PACKED_PANEL_TILES_X8(X)
#endif
