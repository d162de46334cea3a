/* The 32-value formats whose ggml product is its vec_dot (q4_1, q5_0, q5_1): products on 8
 * interleaved rows, ggml's vec_dot bits.
 *
 * Per row and activation column, as vec_dot_<name>_<act> (q32.h):
 *     acc_i += (d_x d_y) sum_{j = 4i .. 4i + 3} q_j a_j       8 float lanes, blocks in order,
 *     result = hsum_float_8(acc) (+ sum_b m_x s_y)             (+: the formats with a minimum),
 * the integer lanes exact.  A panel (block_<name>x8, include/qgemv/blocks.h) holds block b of 8
 * rows together, which QMatrix prepares once per matrix (interleave_x8_<name>):
 *   - one 32-byte load of qs is a row pair, whose low nibbles (values 0..15 of both rows) and high
 *     nibbles (16..31) meet the activations' halves broadcast to both 128-bit lanes
 *     (tile_32_pair_dot, as q4_1's pair kernel in q32.h): 8 registers give the 8 rows' 8 lanes;
 *   - the 8 scales (minima) are one F16C conversion, times d_y (s_y) in one multiply;
 *   - q5's 5th bits are one 32-byte plane: bit R of byte j belongs to register R, one shift and
 *     one mask away from bit 4.
 * The levels meet maddubs unsigned: q4_1 and q5_1 as stored, q5_0 as q + 16, with
 * 16 sum_{j in lane} a_j taken off each lane once per activation block (shared by the 8 rows).
 * One column sweeps a panel front to back.  Several columns sweep it in chunks of X8P_CHUNK
 * blocks, one column after another, each column's accumulators kept between chunks, and the
 * chunk's levels decoded once into an L1 scratch (x8p_decoded) where that pays: q5's 5th bits
 * cost about what a column's dot does (4096 x 4096, 1 thread, C harness: batch 8 7.0-7.4 ->
 * 6.1-6.5 ms for q5_0, 6.9-7.1 -> 5.4-5.7 for q5_1; batch 32 27.5 -> 21.8 and 26.3 -> 18.9),
 * q4_1's nibbles only beyond 8 columns (batch 8 4.8-5.0 -> 5.4-5.5, batch 32 19.8 -> 17.1).
 * AVX-512 batches take 512-bit registers of 4 rows instead (x8p_batch_<name> below): half the
 * instructions for the same lanes, without the pairs' scale permutes (4096 x 4096, 2 threads,
 * through matmul: batch 8 1.9-2.5 -> 1.5-1.8 ms, batch 32 6.8-7.2 -> 5.4-6.3).  The GEMV keeps
 * the 256-bit pairs, which stream as fast.
 */

/* ---------------------------------------------------------------- the layout */
/* bits 0..3 of n, one per byte (bit k -> bit 0 of byte k): n's 4 copies 7 bits apart never overlap */
static inline uint32_t x8p_spread4(uint32_t n) { return (n & 15u) * 0x00204081u & 0x01010101u; }
/* the 5th bits of a row's 32 values <-> its bits in the panel's plane (blocks.h): values
 * 16 h + k go to bit R = 2 (r / 2) + h of bytes 16 (r % 2) + k, 4 bytes at a time (a bit at a
 * time, the first product of a 14336 x 4096 q5 matrix, layout included, took 80 ms; this way
 * 19 ms, q4_0's 10 ms) */
static inline void x8p_put_qh(uint8_t plane[32], int r, const uint8_t qh[4]) {
    const uint32_t bits = qgemv_load_u32(qh);
    for (int h = 0; h < 2; h++) {
        const int R = 2 * (r / 2) + h;
        for (int q = 0; q < 4; q++) {
            uint8_t *p = plane + 16 * (r % 2) + 4 * q;
            const uint32_t w = (qgemv_load_u32(p) & ~(0x01010101u << R)) | x8p_spread4(bits >> (16 * h + 4 * q)) << R;
            memcpy(p, &w, 4);
        }
    }
}
static inline void x8p_get_qh(const uint8_t plane[32], int r, uint8_t qh[4]) {
    uint32_t bits = 0;
    for (int v = 0; v < 32; v++) {
        const int R = 2 * (r / 2) + v / 16, j = 16 * (r % 2) + v % 16;
        bits |= (uint32_t)(plane[j] >> R & 1u) << v;
    }
    memcpy(qh, &bits, 4);
}
/* row r of a panel block from a GGUF block, and back */
static inline void x8_put_row_q4_1(block_q4_1x8 *p, int r, const block_q4_1 *x) {
    p->d[r] = x->d; p->m[r] = x->m; memcpy(&p->qs[16 * r], x->qs, 16);
}
static inline void x8_get_row_q4_1(const block_q4_1x8 *p, int r, block_q4_1 *x) {
    x->d = p->d[r]; x->m = p->m[r]; memcpy(x->qs, &p->qs[16 * r], 16);
}
static inline void x8_put_row_q5_0(block_q5_0x8 *p, int r, const block_q5_0 *x) {
    p->d[r] = x->d; x8p_put_qh(p->qh, r, x->qh); memcpy(&p->qs[16 * r], x->qs, 16);
}
static inline void x8_get_row_q5_0(const block_q5_0x8 *p, int r, block_q5_0 *x) {
    x->d = p->d[r]; x8p_get_qh(p->qh, r, x->qh); memcpy(x->qs, &p->qs[16 * r], 16);
}
static inline void x8_put_row_q5_1(block_q5_1x8 *p, int r, const block_q5_1 *x) {
    p->d[r] = x->d; p->m[r] = x->m; x8p_put_qh(p->qh, r, x->qh); memcpy(&p->qs[16 * r], x->qs, 16);
}
static inline void x8_get_row_q5_1(const block_q5_1x8 *p, int r, block_q5_1 *x) {
    x->d = p->d[r]; x->m = p->m[r]; x8p_get_qh(p->qh, r, x->qh); memcpy(x->qs, &p->qs[16 * r], 16);
}
QGEMV_DEFINE_INTERLEAVE_X8(q4_1)
QGEMV_DEFINE_INTERLEAVE_X8(q5_0)
QGEMV_DEFINE_INTERLEAVE_X8(q5_1)

#define X8P_CHUNK 32   /* blocks per pass when several columns share a panel (q5_1: 6 KiB; decoded 10 KiB) */
#define X8P_COLS 16    /* columns whose accumulators a panel pass keeps (16 x 9 vectors, 4.5 KiB) */

#if defined(QGEMV_AVX2)
/* per format: 5th bits (q5), offset o (q5_0: levels q + 16), minimum (q4_1, q5_1) */
#define X8P_QH_q4_1 0
#define X8P_QH_q5_0 1
#define X8P_QH_q5_1 1
#define X8P_OFFSET_q4_1 0
#define X8P_OFFSET_q5_0 16
#define X8P_OFFSET_q5_1 0
#define X8P_MIN_q4_1 1
#define X8P_MIN_q5_0 0
#define X8P_MIN_q5_1 1
#define X8P_MINS(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)->m))
#define X8P_MINS_q4_1(p) X8P_MINS(p)
#define X8P_MINS_q5_0(p) _mm256_setzero_ps()
#define X8P_MINS_q5_1(p) X8P_MINS(p)
#define X8P_PLANE(p) _mm256_loadu_si256((const __m256i *)(p)->qh)
#define X8P_PLANE_q4_1(p) _mm256_setzero_si256()
#define X8P_PLANE_q5_0(p) X8P_PLANE(p)
#define X8P_PLANE_q5_1(p) X8P_PLANE(p)

/* a panel block's 8 registers of levels and its 8 scales (minima) as floats: a chunk's blocks
 * decoded once for every column of a batch */
typedef struct {
    __m256i lev[8];
    __m256 d, m;
} x8p_decoded;

/* bit R of each byte of the plane -> bit 4 (0x10): R <= 4 shifts left, R > 4 right, within bytes */
QGEMV_ALWAYS_INLINE __m256i x8p_fifth_bits(__m256i plane, const int R) {
    const __m256i t = R <= 4 ? _mm256_slli_epi16(plane, 4 - R) : _mm256_srli_epi16(plane, R - 4);
    return _mm256_and_si256(t, _mm256_set1_epi8(0x10));
}

/* a panel block's register pair p: the levels of its low nibbles (values 0..15 of rows 2p and
 * 2p + 1) and its high nibbles (16..31), as maddubs takes them */
#define QGEMV_DEFINE_X8P_LEVELS(name)                                                            \
    QGEMV_ALWAYS_INLINE void x8p_levels_##name(const block_##name##x8 *b, __m256i plane, const int p, \
                                               __m256i *lo, __m256i *hi) {                      \
        const __m256i m4 = _mm256_set1_epi8(0x0f);                                              \
        const __m256i v = _mm256_loadu_si256((const __m256i *)&b->qs[32 * p]);                  \
        *lo = _mm256_and_si256(v, m4);                                                          \
        *hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);                                    \
        if (X8P_QH_##name) {                                                                    \
            *lo = _mm256_or_si256(*lo, x8p_fifth_bits(plane, 2 * p));                           \
            *hi = _mm256_or_si256(*hi, x8p_fifth_bits(plane, 2 * p + 1));                       \
        }                                                                                       \
    }                                                                                           \

/* kn panel blocks against one column of ncols, read from the panel (dec NULL) or from their
 * decoded levels and scales: acc[2p], acc[2p + 1] get the lanes 0..3 and 4..7 of the row pair
 * 2p, 2p + 1 (row 2p in the low half), *summ (lane r: row r) the minima's terms.  All 8 rows in
 * one pass, though GCC may keep some accumulators on the stack (q5_0 kept 4 of 8 where
 * measured): 2 passes of 4 rows, each block's set-up made twice, ran 1.15x (q4_1) to 1.5x (q5_1)
 * slower */
#define QGEMV_DEFINE_X8P_RUN(name, act)                                                          \
    QGEMV_DEFINE_X8P_LEVELS(name)                                                               \
    QGEMV_ALWAYS_INLINE void x8p_run_##name(const block_##name##x8 *restrict xp, const x8p_decoded *restrict dec, \
                                            const block_##act *restrict y, int64_t kn, int64_t ncols, \
                                            __m256 acc[8], __m256 *summ) {                       \
        __m256 ac[8], sm = *summ;                                                               \
        for (int i = 0; i < 8; i++) ac[i] = acc[i];                                             \
        for (int64_t k = 0; k < kn; k++) {                                                      \
            if (!dec) X8_PREFETCH_PASS(&xp[k], sizeof(xp[0]), ncols);                            \
            const __m256 dx = dec ? dec[k].d : _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)xp[k].d)); \
            const __m256 d = _mm256_mul_ps(dx, _mm256_set1_ps(scale_##act(&y[k])));             \
            if (X8P_MIN_##name)                                                                 \
                sm = _mm256_add_ps(sm, _mm256_mul_ps(dec ? dec[k].m : X8P_MINS_##name(&xp[k]),  \
                                                     _mm256_set1_ps(qgemv_fp16_to_fp32(((const block_q8_1 *)&y[k])->s)))); \
            const __m256i plane = dec ? _mm256_setzero_si256() : X8P_PLANE_##name(&xp[k]);      \
            __m256i clo = _mm256_setzero_si256(), chi = _mm256_setzero_si256();  /* -o sum a */ \
            if (X8P_OFFSET_##name) {                                                            \
                const __m256i o = _mm256_set1_epi8(X8P_OFFSET_##name);                          \
                tile_32_pair_dot(o, o, y[k].qs, &clo, &chi);                                    \
                clo = _mm256_sub_epi32(_mm256_setzero_si256(), clo);                            \
                chi = _mm256_sub_epi32(_mm256_setzero_si256(), chi);                            \
            }                                                                                   \
            _Pragma("GCC unroll 4")                                                             \
            for (int p = 0; p < 4; p++) {                                                       \
                __m256i lo, hi, plo, phi;                                                       \
                if (dec) { lo = dec[k].lev[2 * p]; hi = dec[k].lev[2 * p + 1]; }                \
                else x8p_levels_##name(&xp[k], plane, p, &lo, &hi);                             \
                plo = clo; phi = chi;                                                           \
                tile_32_pair_dot_add(lo, hi, y[k].qs, &plo, &phi);                              \
                const __m256 dp = _mm256_permutevar8x32_ps(d, _mm256_setr_epi32(2 * p, 2 * p, 2 * p, 2 * p, \
                                                           2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p + 1)); \
                ac[2 * p] = _mm256_fmadd_ps(dp, _mm256_cvtepi32_ps(plo), ac[2 * p]);            \
                ac[2 * p + 1] = _mm256_fmadd_ps(dp, _mm256_cvtepi32_ps(phi), ac[2 * p + 1]);    \
            }                                                                                   \
        }                                                                                       \
        for (int i = 0; i < 8; i++) acc[i] = ac[i];                                             \
        *summ = sm;                                                                             \
    }
/* the 8 rows' results of one column: hsum_float_8 of each row's lanes, plus its minima's sum */
static inline void x8p_finish(const __m256 acc[8], __m256 summ, float *out, int64_t out_stride) {
    float sm[8];
    _mm256_storeu_ps(sm, summ);
    for (int r = 0; r < 8; r++)
        out[r * out_stride] = tile_32_hsum_pair_row(acc[2 * (r / 2)], acc[2 * (r / 2) + 1], r % 2) + sm[r];
}
#if defined(QGEMV_AVX512)
/* AVX-512 batches: a panel block's levels as 4 registers of 4 rows, z = 2 q + h holding rows
 * 4 q .. 4 q + 3 (128-bit lane r: row 4 q + r) and half h (low nibbles, values 0..15: lanes
 * 0..3; high, 16..31: lanes 4..7), so one vpdpbusd gives 16 of the 8 x 8 int32 lanes and the
 * scales come spread [d_r x 4] per quad.  q5_0's levels are lifted to q + 128 (unsigned) and
 * vpdpbusd starts each lane from -128 sum_{j in lane} a_j: the same exact int32.  That start,
 * d_y (and q8_1's s_y) are a column's set-up (x8p_column_zmm), made once per chunk for a group
 * of X8P_GROUP panels and broadcast from memory, so a block, column and 8 rows is 4 vpdpbusd,
 * 4 conversions, 4 fmas and 2 multiplies, where flipping the activations to a + 128 and widening
 * d_y for each panel took 6 more (Intel Xeon, q5_0 4096 x 4096 through QMatrix, 2 threads, builds
 * alternating: batch 8 1.12-1.21 -> 1.03-1.11 ms, batch 32 4.23-4.49 -> 3.73-3.92; q4_1 and
 * q5_1 even to 1.04x).  The conversions are subtractions: each start carries Q8_MAGIC_BITS
 * (q32.h), so the int32 is the bits of 1.5 2^23 + sum q a, and subtracting 1.5 2^23 gives it
 * exactly (|sum q a| <= 4 31 128 < 2^22), as vcvtdq2ps did (Intel Xeon, the same, builds
 * alternating: q5_0 batch 32 3.37-3.65 -> 3.16-3.46 ms, batch 8 0.89-0.98 -> 0.86-0.98, q5_1
 * batch 32 even to 1.02x).  A chunk of X8P_ZMM_CHUNK blocks is decoded once for X8P_COLS
 * columns (32 columns a pass, 8 KiB of accumulators, ran q5_0 1.1-1.3x slower).  Groups of 8
 * panels rather than 4 halve the set-up's share (Intel Xeon, 4096 x 4096 through QMatrix,
 * builds alternating, medians of 5 processes: q5_0 2 threads batch 8 0.98 -> 0.94 ms, batch 32
 * 3.50 -> 3.29, 1 thread batch 8 1.90 -> 1.83; q4_1 batch 8 even to 1% faster). */
#define X8P_ZMM_CHUNK 16   /* blocks per pass (7 KiB decoded) */
#define X8P_GROUP 8        /* panels that share a chunk's column set-up (32 KiB of accumulators) */
typedef struct {
    __m512i lev[4];     /* z = 2 q + h */
    __m512 d[2];        /* quad q: d_x of its 4 rows, 4 lanes each */
    __m256 m;           /* minima, lane r: row r (q4_1, q5_1) */
} x8p_decoded_zmm;
typedef struct {
    int32_t start[8];   /* lane i's vpdpbusd start: Q8_MAGIC_BITS, q5_0's less 128 (a_4i + .. + a_4i+3) */
    float dy, sy;       /* d_y, and s_y for the formats with a minimum */
} x8p_column_zmm;

#define QGEMV_DEFINE_X8P_BATCH(name, act)                                                        \
    static void x8p_decode_##name(const block_##name##x8 *restrict xp, int64_t kn, x8p_decoded_zmm *restrict dec, \
                                  uintptr_t next) {                                              \
        const __m512i m4 = _mm512_set1_epi8(0x0f);                                               \
        for (int64_t k = 0; k < kn; k++) {                                                       \
            QGEMV_PREFETCH_EACH_LINE(QGEMV_PREFETCH_L1_AT, (const void *)(next + k * sizeof(xp[0])), sizeof(xp[0]), 0); \
            const __m512i plane = X8P_QH_##name ? _mm512_broadcast_i64x4(X8P_PLANE_##name(&xp[k])) \
                                                : _mm512_setzero_si512();                        \
            const __m256 d8 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)xp[k].d));        \
            _Pragma("GCC unroll 2")                                                              \
            for (int q = 0; q < 2; q++) {                                                        \
                const __m512i v = _mm512_loadu_si512((const void *)&xp[k].qs[64 * q]);           \
                /* nibble + lift as nibble | lift, one vpternlogd: q5_0's levels lifted to    \
                 * q + 128 by 128 - o = 0x70 (its 5th bit adds 16 after), the others' by 0 */     \
                const __m512i lift = _mm512_set1_epi8(X8P_OFFSET_##name ? 128 - X8P_OFFSET_##name : 0); \
                __m512i lev[2] = {_mm512_ternarylogic_epi32(v, m4, lift, 0xEA),                  \
                                  _mm512_ternarylogic_epi32(_mm512_srli_epi16(v, 4), m4, lift, 0xEA)}; \
                for (int h = 0; h < 2; h++) {                                                    \
                    if (X8P_QH_##name) {   /* rows 4 q + r: 5th bit R = 4 q + 2 (r / 2) + h */   \
                        const __m512i sel = _mm512_inserti64x4(                                  \
                            _mm512_castsi256_si512(_mm256_set1_epi8((char)(1 << (4 * q + h)))),  \
                            _mm256_set1_epi8((char)(1 << (4 * q + 2 + h))), 1);                  \
                        lev[h] = _mm512_mask_add_epi8(lev[h], _mm512_test_epi8_mask(plane, sel), \
                                                      lev[h], _mm512_set1_epi8(0x10));           \
                    }                                                                            \
                    dec[k].lev[2 * q + h] = lev[h];                                              \
                }                                                                                \
                const __m512i spread = _mm512_setr_epi32(4 * q, 4 * q, 4 * q, 4 * q, 4 * q + 1, 4 * q + 1, \
                    4 * q + 1, 4 * q + 1, 4 * q + 2, 4 * q + 2, 4 * q + 2, 4 * q + 2, 4 * q + 3, 4 * q + 3, \
                    4 * q + 3, 4 * q + 3);                                                       \
                dec[k].d[q] = _mm512_permutexvar_ps(spread, _mm512_castps256_ps512(d8));         \
            }                                                                                    \
            dec[k].m = X8P_MINS_##name(&xp[k]);                                                  \
        }                                                                                        \
    }                                                                                            \
    /* a column's set-up for kn blocks */                                                        \
    static void x8p_set_up_column_##name(const block_##act *restrict y, int64_t kn, x8p_column_zmm *restrict c) { \
        for (int64_t k = 0; k < kn; k++) {                                                       \
            _mm256_storeu_si256((__m256i *)c[k].start, X8P_OFFSET_##name ? q8_lane_starts_lifted_magic(y[k].qs) \
                                                                         : _mm256_set1_epi32(Q8_MAGIC_BITS)); \
            c[k].dy = scale_##act(&y[k]);                                                        \
            c[k].sy = X8P_MIN_##name ? qgemv_fp16_to_fp32(((const block_q8_1 *)&y[k])->s) : 0.0f; \
        }                                                                                        \
    }                                                                                            \
    /* kn decoded blocks against CB <= 2 columns (their blocks y[j], set-ups col[j]): acc[j][z] +=  \
     * d (float) lanes, summ[j] += m_x s_y.  Both columns in one sweep, each block's levels and     \
     * scales loaded once for them: one column a sweep reloaded them, 11 loads a block and column  \
     * beside 14 vector operations, and ran at the load ports' pace (a C loop: 10.6 cycles a block \
     * and column against 7 for the operations alone) */                                          \
    QGEMV_ALWAYS_INLINE void x8p_run_z_##name(const x8p_decoded_zmm *restrict dec, x8p_column_zmm (*col)[X8P_ZMM_CHUNK], \
                                              const block_##act *const *y, int64_t kn, const int CB,   \
                                              __m512 (*acc)[4], __m256 *summ) {                        \
        __m512 ac[2][4];                                                                         \
        __m256 sm[2];                                                                            \
        for (int j = 0; j < CB; j++) {                                                           \
            sm[j] = summ[j];                                                                     \
            for (int z = 0; z < 4; z++) ac[j][z] = acc[j][z];                                    \
        }                                                                                        \
        for (int64_t k = 0; k < kn; k++) {                                                       \
            __m512i lev[4];                                                                      \
            __m512 dx[2];                                                                        \
            for (int z = 0; z < 4; z++) {                                                        \
                lev[z] = dec[k].lev[z];                                                          \
                QGEMV_IN_REGISTER(lev[z]);                                                       \
            }                                                                                    \
            for (int q = 0; q < 2; q++) {                                                        \
                dx[q] = dec[k].d[q];                                                             \
                QGEMV_IN_REGISTER(dx[q]);                                                        \
            }                                                                                    \
            for (int j = 0; j < CB; j++) {                                                       \
                const x8p_column_zmm *c = &col[j][k];                                            \
                const __m512 dy = _mm512_set1_ps(c->dy);                                         \
                if (X8P_MIN_##name) sm[j] = _mm256_add_ps(sm[j], _mm256_mul_ps(dec[k].m, _mm256_set1_ps(c->sy))); \
                const __m512i a[2] = {_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)y[j][k].qs)), \
                                      _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(y[j][k].qs + 16)))}; \
                const __m512 d[2] = {_mm512_mul_ps(dx[0], dy), _mm512_mul_ps(dx[1], dy)};       \
                _Pragma("GCC unroll 4")                                                          \
                for (int z = 0; z < 4; z++) {                                                    \
                    const __m512i start = X8P_OFFSET_##name                                      \
                        ? _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)&c->start[4 * (z % 2)])) \
                        : _mm512_set1_epi32(Q8_MAGIC_BITS);                                      \
                    const __m512i s = _mm512_dpbusd_epi32(start, lev[z], a[z % 2]);              \
                    const __m512 f = _mm512_sub_ps(_mm512_castsi512_ps(s), _mm512_set1_ps(Q8_MAGIC)); \
                    ac[j][z] = _mm512_fmadd_ps(d[z / 2], f, ac[j][z]);                           \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
        for (int j = 0; j < CB; j++) {                                                           \
            summ[j] = sm[j];                                                                     \
            for (int z = 0; z < 4; z++) acc[j][z] = ac[j][z];                                    \
        }                                                                                        \
    }                                                                                            \
    /* kn decoded blocks against nc columns, two a sweep, out of line: inlined in the batch loop \
     * below, GCC kept the decoding's constants in registers and 3 of the 4 accumulators on the  \
     * stack (q5_0, batch 8 and 32: 1.1-1.2x slower) */                                          \
    QGEMV_NEVER_INLINE void x8p_run_columns_##name(const x8p_decoded_zmm *restrict dec, x8p_column_zmm (*col)[X8P_ZMM_CHUNK], \
                                                   const block_##act *const *y, int64_t kn, int64_t nc, \
                                                   __m512 (*acc)[4], __m256 *summ) {            \
        int64_t c = 0;                                                                           \
        for (; c + 2 <= nc; c += 2) x8p_run_z_##name(dec, col + c, y + c, kn, 2, acc + c, summ + c); \
        if (c < nc) x8p_run_z_##name(dec, col + c, y + c, kn, 1, acc + c, summ + c);              \
    }                                                                                            \
    /* npanels panels against ncols columns: groups of X8P_GROUP panels, X8P_COLS columns'        \
     * accumulators each, chunk by chunk: the columns' set-up once a chunk for the group, each    \
     * panel's chunk decoded once for the columns */                                             \
    static void x8p_batch_##name(int64_t nb, const void *restrict panels, int64_t panel_stride, int64_t npanels, \
                                 const void *restrict a, int64_t act_stride, int64_t ncols, float *restrict out, \
                                 int64_t out_stride) {                                           \
        __m512 acc[X8P_GROUP][X8P_COLS][4];                                                      \
        __m256 summ[X8P_GROUP][X8P_COLS];                                                        \
        x8p_decoded_zmm dec[X8P_ZMM_CHUNK];                                                      \
        x8p_column_zmm col[X8P_COLS][X8P_ZMM_CHUNK];                                             \
        for (int64_t g0 = 0; g0 < npanels; g0 += X8P_GROUP) {                                    \
            const int64_t gn = npanels - g0 < X8P_GROUP ? npanels - g0 : X8P_GROUP;              \
            for (int64_t c0 = 0; c0 < ncols; c0 += X8P_COLS) {                                   \
                const int64_t nc = ncols - c0 < X8P_COLS ? ncols - c0 : X8P_COLS;                \
                for (int64_t g = 0; g < gn; g++)                                                 \
                    for (int64_t c = 0; c < nc; c++) {                                           \
                        summ[g][c] = _mm256_setzero_ps();                                        \
                        for (int z = 0; z < 4; z++) acc[g][c][z] = _mm512_setzero_ps();          \
                    }                                                                            \
                for (int64_t k0 = 0; k0 < nb; k0 += X8P_ZMM_CHUNK) {                             \
                    const int64_t kn = nb - k0 < X8P_ZMM_CHUNK ? nb - k0 : X8P_ZMM_CHUNK;        \
                    const block_##act *y[X8P_COLS];                                              \
                    for (int64_t c = 0; c < nc; c++) {                                           \
                        y[c] = (const block_##act *)((const uint8_t *)a + (c0 + c) * act_stride) + k0; \
                        x8p_set_up_column_##name(y[c], kn, col[c]);                              \
                    }                                                                            \
                    for (int64_t g = 0; g < gn; g++) {                                           \
                        /* the chunk decoded next: the next panel's, the group's next chunk, or \
                         * the next group's first (an address, maybe past the panels) */        \
                        const int64_t ng = g + 1 < gn ? g0 + g + 1 : k0 + kn < nb ? g0 : g0 + gn; \
                        const int64_t nk = g + 1 < gn ? k0 : k0 + kn < nb ? k0 + kn : 0;          \
                        const uintptr_t next = (uintptr_t)panels + (uintptr_t)(ng * panel_stride)  \
                                               + (uintptr_t)nk * sizeof(block_##name##x8);       \
                        x8p_decode_##name((const block_##name##x8 *)((const uint8_t *)panels + (g0 + g) * panel_stride) + k0, \
                                          kn, dec, next);                                        \
                        x8p_run_columns_##name(dec, col, y, kn, nc, acc[g], summ[g]);            \
                    }                                                                            \
                }                                                                                \
                for (int64_t g = 0; g < gn; g++)                                                 \
                    for (int64_t c = 0; c < nc; c++)                                             \
                        x8p_finish_zmm(acc[g][c], summ[g][c], out + 8 * (g0 + g) * out_stride + c0 + c, out_stride); \
            }                                                                                    \
        }                                                                                        \
    }

/* the 8 rows' results of one column: per 128-bit lane hsum_float_8's (l_i + l_i+4), then pairs */
static inline void x8p_finish_zmm(const __m512 acc[4], __m256 summ, float *out, int64_t out_stride) {
    float sm[8], h[2][16];
    _mm256_storeu_ps(sm, summ);
    for (int q = 0; q < 2; q++) {
        const __m512 t = _mm512_add_ps(acc[2 * q + 1], acc[2 * q]);
        const __m512 u = _mm512_add_ps(t, _mm512_permute_ps(t, _MM_SHUFFLE(3, 2, 3, 2)));
        _mm512_storeu_ps(h[q], _mm512_add_ps(u, _mm512_movehdup_ps(u)));
    }
    for (int r = 0; r < 8; r++) out[r * out_stride] = h[r / 4][4 * (r % 4)] + sm[r];
}
#else
#define QGEMV_DEFINE_X8P_BATCH(name, act)                                                        \
    /* kn panel blocks decoded once, for the columns of a batch to share */                      \
    static void x8p_decode_##name(const block_##name##x8 *restrict xp, int64_t kn, x8p_decoded *restrict dec) { \
        for (int64_t k = 0; k < kn; k++) {                                                       \
            QGEMV_PREFETCH_L1_STREAM(&xp[k], sizeof(xp[0]));                                     \
            const __m256i plane = X8P_PLANE_##name(&xp[k]);                                      \
            _Pragma("GCC unroll 4")                                                              \
            for (int p = 0; p < 4; p++) x8p_levels_##name(&xp[k], plane, p, &dec[k].lev[2 * p], &dec[k].lev[2 * p + 1]); \
            dec[k].d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)xp[k].d));               \
            dec[k].m = X8P_MINS_##name(&xp[k]);                                                  \
        }                                                                                        \
    }                                                                                            \
    /* one panel against ncols columns: X8P_COLS columns' accumulators, chunk by chunk */        \
    static void x8p_batch_panel_##name(int64_t nb, const block_##name##x8 *restrict xp, const void *restrict a, \
                                       int64_t act_stride, int64_t ncols, float *restrict o, int64_t out_stride) { \
        for (int64_t c0 = 0; c0 < ncols; c0 += X8P_COLS) {                                       \
            const int64_t nc = ncols - c0 < X8P_COLS ? ncols - c0 : X8P_COLS;                    \
            __m256 acc[X8P_COLS][8], summ[X8P_COLS];                                             \
            x8p_decoded dec[X8P_CHUNK];                                                          \
            const int decode = X8P_QH_##name || nc > 8;   /* where decoding once pays (above) */ \
            for (int64_t c = 0; c < nc; c++) {                                                   \
                summ[c] = _mm256_setzero_ps();                                                   \
                for (int i = 0; i < 8; i++) acc[c][i] = _mm256_setzero_ps();                     \
            }                                                                                    \
            for (int64_t k0 = 0; k0 < nb; k0 += X8P_CHUNK) {                                     \
                const int64_t kn = nb - k0 < X8P_CHUNK ? nb - k0 : X8P_CHUNK;                    \
                if (decode) x8p_decode_##name(xp + k0, kn, dec);                                 \
                for (int64_t c = 0; c < nc; c++) {                                               \
                    const block_##act *y = (const block_##act *)((const uint8_t *)a + (c0 + c) * act_stride) + k0; \
                    if (decode) x8p_run_##name(xp + k0, dec, y, kn, ncols, acc[c], &summ[c]);    \
                    else x8p_run_##name(xp + k0, NULL, y, kn, ncols, acc[c], &summ[c]);          \
                }                                                                                \
            }                                                                                    \
            for (int64_t c = 0; c < nc; c++) x8p_finish(acc[c], summ[c], o + c0 + c, out_stride); \
        }                                                                                        \
    }                                                                                            \
    static void x8p_batch_##name(int64_t nb, const void *restrict panels, int64_t panel_stride, int64_t npanels, \
                                 const void *restrict a, int64_t act_stride, int64_t ncols, float *restrict out, \
                                 int64_t out_stride) {                                           \
        for (int64_t pi = 0; pi < npanels; pi++)                                                 \
            x8p_batch_panel_##name(nb, (const block_##name##x8 *)((const uint8_t *)panels + pi * panel_stride), a, \
                                   act_stride, ncols, out + 8 * pi * out_stride, out_stride);   \
    }
#endif

#define QGEMV_DEFINE_X8P_TILE(name, act)                                                         \
    QGEMV_DEFINE_X8P_RUN(name, act)                                                             \
    QGEMV_DEFINE_X8P_BATCH(name, act)                                                           \
    static void panel_tile_##name(int64_t n, const void *restrict panels, int64_t panel_stride, \
                                  int64_t npanels, const void *restrict a, int64_t act_stride,  \
                                  int64_t ncols, float *restrict out, int64_t out_stride) {     \
        const int64_t nb = n / 32;                                                              \
        if (ncols > 1) {                                                                        \
            x8p_batch_##name(nb, panels, panel_stride, npanels, a, act_stride, ncols, out, out_stride); \
            return;                                                                             \
        }                                                                                       \
        for (int64_t pi = 0; pi < npanels; pi++) {   /* GEMV: the accumulators stay in registers */ \
            const block_##name##x8 *xp = (const block_##name##x8 *)((const uint8_t *)panels + pi * panel_stride); \
            __m256 acc[8], summ = _mm256_setzero_ps();                                          \
            for (int i = 0; i < 8; i++) acc[i] = _mm256_setzero_ps();                           \
            x8p_run_##name(xp, NULL, (const block_##act *)a, nb, 1, acc, &summ);                \
            x8p_finish(acc, summ, out + 8 * pi * out_stride, out_stride);                      \
        }                                                                                       \
    }
#else
/* portable: vec_dot's step on each row's blocks, read back from the panel */
#define QGEMV_DEFINE_X8P_TILE(name, act)                                                         \
    static void panel_tile_##name(int64_t n, const void *restrict panels, int64_t panel_stride,  \
                                  int64_t npanels, const void *restrict a, int64_t act_stride,  \
                                  int64_t ncols, float *restrict out, int64_t out_stride) {     \
        for (int64_t r = 0; r < 8 * npanels; r++) {                                             \
            const block_##name##x8 *xp = (const block_##name##x8 *)((const uint8_t *)panels + r / 8 * panel_stride); \
            for (int64_t c = 0; c < ncols; c++) {                                               \
                const block_##act *y = (const block_##act *)((const uint8_t *)a + c * act_stride); \
                float sum = 0.0f;                                                               \
                for (int64_t b = 0; b < n / 32; b++) {                                          \
                    block_##name x;                                                             \
                    x8_get_row_##name(&xp[b], (int)(r % 8), &x);                                \
                    sum += QGEMV_DOT_32_TERM_##act(name, &x, &y[b]);                            \
                }                                                                               \
                out[r * out_stride + c] = sum;                                                  \
            }                                                                                   \
        }                                                                                       \
    }
#endif

QGEMV_DEFINE_X8P_TILE(q4_1, q8_1)
QGEMV_DEFINE_X8P_TILE(q5_0, q8_0)
QGEMV_DEFINE_X8P_TILE(q5_1, q8_1)
