/* src/packed_tile.h: batches of 8 columns and more (the table's packed_min_cols per type), the
 * columns in the lanes of VNNI vectors (AVX-512: 16 columns a 512-bit vector; AVX-VNNI and plain
 * AVX2: 8 a 256-bit one), for the formats whose levels are at most 63 in magnitude (the IQ grids, and
 * iq1_s and iq1_m with their levels times 8).
 *
 * The driver (qgemv/_kernels.pyx: _matmul_packed) packs the batch once for every thread
 * (pack_columns_q8_K: 16 columns a group, as block_q8_Kx16c, include/qgemv/blocks.h), and reads the GGUF rows or, where a QMatrix has
 * prepared them, its panels' rows (packed_panel_tile: the IQ grids' code blocks, iq1_s's and
 * iq1_m's trit blocks, whose decode needs no grid lookups).  A tile then decodes QGEMV_PACKED_ROWS rows at a time, a chunk of super-blocks each,
 * to biased bytes u = q + 64 (in [1, 127]) and int32 scales 2 s + 1
 * (decode(block, &qgemv_decoded_u8)), and for each 16 columns sums per row and super-block
 *     t = sum_k (2 s_k + 1) (sum_j u_j a_j - 64 sum_j a_j) = sum_k (2 s_k + 1) sum_j q_j a_j,
 * exactly: vpdpbusd adds 4 products u8 x s8 per lane to a chain that starts at the packed
 * nbias; then acc = fma(t d0, d_y, acc).  That is vec_dot's arithmetic for these formats
 * (src/formats/iquants.h), so every (row, column) gets vec_dot's bits.  The K-quants whose
 * levels fit too (on AVX-VNNI, and q3_K on AVX2: src/formats/kquants.h) take their vec_dot's
 * step instead (QGEMV_PACKED_STEP), s_k their scales.  One weight dword, broadcast, meets 16
 * columns (8 on AVX-VNNI) per instruction: 64 (32) products, where the per-row kernels (signs
 * onto the activations, maddubs, vpdpwssd) spend three instructions on 32.  Plain AVX2 has no
 * vpdpbusd: its maddubs pairs (|pair| <= 2 127 127 < 2^15, no saturation) go through a madd by
 * the rows' scales straight into t, and the offset comes once a super-block from the columns'
 * bsums (packed_rows_x8_scaled_madd): three instructions on 32 products like its own tiles, but
 * a block decoded once for all the columns where they decode it again for every 4 (the formats'
 * tables say from how many columns it wins there).  At the end:
 * AVX-VNNI's tile of the 32-value formats llama.cpp repacks, over packed q8_0 columns.
 */

#if defined(QGEMV_AVX2)

/* columns 16 g .. 16 g + 15 of q8_K activations a (act_stride bytes apart; zeros past ncols)
 * -> the n / QK_K blocks block_q8_Kx16c at packed */
static void pack_columns_q8_K(int64_t n, const void *restrict a, int64_t act_stride, int64_t ncols, int64_t g,
                              void *restrict packed) {
    block_q8_Kx16c *p = (block_q8_Kx16c *)packed;
    const int nc = ncols - 16 * g < 16 ? (int)(ncols - 16 * g) : 16;
    for (int64_t ib = 0; ib < n / QK_K; ib++) {
        if (nc < 16) memset(&p[ib], 0, sizeof(p[ib]));
        for (int c = 0; c < nc; c++) {
            const block_q8_K *y = (const block_q8_K *)((const uint8_t *)a + (16 * g + c) * act_stride) + ib;
            for (int k = 0; k < QK_K / 4; k++) memcpy(p[ib].qs[k][c], y->qs + 4 * k, 4);
            for (int k = 0; k < QK_K / 16; k++) {
                int32_t sum = 0;
                for (int j = 0; j < 16; j++) sum += y->qs[16 * k + j];
                p[ib].nbias[k][c] = -64 * sum;
            }
            p[ib].d[c] = y->d;
            for (int k = 0; k < QK_K / 32; k++) memcpy(p[ib].bsum2[k][c], y->bsums + 2 * k, 4);
        }
    }
}

#define QGEMV_PACKED_NBYTES_q8_K sizeof(block_q8_Kx16c)

/* the batch from which a format's packed tile beats its own tiles, on AVX-512, AVX-VNNI or plain
 * AVX2 (the formats' tables: iquants.h, grid_codes.h, iq1.h; 0 in a list a variant never reads) */
#if defined(QGEMV_AVX512)
#define QGEMV_PACKED_FROM(avx512, avxvnni, avx2) (avx512)
#elif defined(QGEMV_VNNI)
#define QGEMV_PACKED_FROM(avx512, avxvnni, avx2) (avxvnni)
#else
#define QGEMV_PACKED_FROM(avx512, avxvnni, avx2) (avx2)
#endif

/* plain AVX2 multiplies its maddubs pairs by the scales (packed_rows_x8_scaled_madd) */
#if !defined(QGEMV_AVX512) && !defined(QGEMV_VNNI)
#define QGEMV_PACKED_SCALED_MADD 1
#else
#define QGEMV_PACKED_SCALED_MADD 0
#endif

/* a weight super-block as the packed tile reads it */
typedef struct {
    _Alignas(64) uint8_t u[QK_K];   /* q + 64 */
    int32_t s[QK_K / 16];     /* 2 s + 1 of each 16 values (the K-quants: their scales) */
    float d0;                 /* d_x factor (the K-quants: d_x) */
    /* the K-quants with minimums: the m of values 32 p .. 32 p + 15 and of 32 p + 16 .. 32 p +
     * 31 as an int16 pair, and dmin */
    int32_t mpair[QK_K / 32];
    float dmin;
#if QGEMV_PACKED_SCALED_MADD
    /* plain AVX2 (packed_rows_x8_scaled_madd): (s, s) of each 16 values as an int16 pair, and
     * each 32 values' pair of scales (s of values 32 p .., s of 32 p + 16 ..) */
    int32_t spair[QK_K / 16], bpair[QK_K / 32];
#endif
} qgemv_decoded_u8;

enum {
    /* rows a pass: a chain of vpdpbusd, a sum and an accumulator each (AVX-VNNI has 16 vector
     * registers where AVX-512 has 32: 4 rows) */
#if defined(QGEMV_AVX512)
    QGEMV_PACKED_ROWS = 8,
#else
    QGEMV_PACKED_ROWS = 4,
#endif
    QGEMV_PACKED_CHUNK = 8,   /* super-blocks of each row decoded at a time (24 KiB for 8 rows) */
    QGEMV_PACKED_GROUPS = 4   /* groups of 16 columns per decode */
};

/* a super-block's step of the accumulators from its exact sums t (the format's vec_dot's): the
 * IQ formats' acc = fma(t d0, d_y, acc), the K-quants' acc = fma(t, d_y d0, acc), and with
 * minimums (q2_K, q4_K, q5_K) then acc = fma(-(d_y dmin), msum, acc), msum = sum_s m_s bsum_s
 * (kquants.h's).  KMIN_SCALED: the same, the levels carrying their scales, unbiased (u = s q:
 * q2_K's, s q <= 45), so each sub-block's sum goes into t as it is, without the packed nbias
 * start or a vpmulld */
enum { QGEMV_PACKED_STEP_IQ = 0, QGEMV_PACKED_STEP_K = 1, QGEMV_PACKED_STEP_KMIN = 2, QGEMV_PACKED_STEP_KMIN_SCALED = 3 };
/* the steps plain AVX2 takes with the scales in the madd (packed_rows_x8_scaled_madd) */
#define QGEMV_PACKED_STEP_SCALES_IN_MADD(step) ((step) == QGEMV_PACKED_STEP_IQ || (step) == QGEMV_PACKED_STEP_K)
#define QGEMV_PACKED_STEP(pfx, step, t, d0, dy, acc)                                           \
    ((step) != QGEMV_PACKED_STEP_IQ                                                            \
         ? pfx##_fmadd_ps(pfx##_cvtepi32_ps(t), pfx##_mul_ps(dy, pfx##_set1_ps(d0)), acc)      \
         : pfx##_fmadd_ps(pfx##_mul_ps(pfx##_cvtepi32_ps(t), pfx##_set1_ps(d0)), dy, acc))

/* packed_rows_x<W>: QGEMV_PACKED_ROWS decoded rows x W columns of a packed group (from column
 * c0: 0, or 8 for a 256-bit vector's second half) over nbc super-blocks, acc[r] the rows'
 * accumulators (columns in lanes); sub = values per scale, 16 or 32; step: QGEMV_PACKED_STEP's.
 * W = 16 in a 512-bit vector; W = 8 in a 256-bit one: AVX-VNNI's, and AVX-512's for a last group of at most 8
 * columns (a batch of 8: two 256-bit vpdpbusd a cycle where the CPU has them, half the work
 * of the 512-bit kernel with 8 lanes idle) */
#define QGEMV_DEFINE_PACKED_ROWS(W, pfx, vi, vf, load, loadps, dpbusd, dpwssd)                 \
    QGEMV_ALWAYS_INLINE void packed_rows_x##W(const qgemv_decoded_u8 (*dec)[QGEMV_PACKED_CHUNK], \
                                              const block_q8_Kx16c *y, int64_t nbc, const int sub, \
                                              const int step, const int c0, vf *acc) {      \
        enum { R = QGEMV_PACKED_ROWS };                                                     \
        for (int64_t k = 0; k < nbc; k++) {                                                 \
            vi t[R];                                                                        \
            for (int r = 0; r < R; r++) t[r] = pfx##_set1_epi32(0);                         \
            for (int sb = 0; sb < QK_K / sub; sb++) {                                       \
                const int scaled = step == QGEMV_PACKED_STEP_KMIN_SCALED;                   \
                vi start = scaled ? pfx##_set1_epi32(0) : load(&y[k].nbias[sub / 16 * sb][c0]); \
                if (sub == 32) start = pfx##_add_epi32(start, load(&y[k].nbias[2 * sb + 1][c0])); \
                vi s[R];                                                                    \
                for (int r = 0; r < R; r++) s[r] = start;                                   \
                /* whole: else GCC copies the 8 chains from register to register per step */ \
                _Pragma("GCC unroll 8")                                                     \
                for (int j = 0; j < sub / 4; j++) {                                         \
                    const int q = sub / 4 * sb + j;                                         \
                    const vi a = load(y[k].qs[q][c0]);                                      \
                    for (int r = 0; r < R; r++) {                                           \
                        int32_t u4;                                                         \
                        memcpy(&u4, dec[r][k].u + 4 * q, 4);                                \
                        s[r] = dpbusd(s[r], pfx##_set1_epi32(u4), a);                       \
                    }                                                                       \
                }                                                                           \
                for (int r = 0; r < R; r++)                                                 \
                    t[r] = pfx##_add_epi32(t[r], scaled ? s[r] : pfx##_mullo_epi32(s[r], pfx##_set1_epi32(dec[r][k].s[sub / 16 * sb]))); \
            }                                                                               \
            const vf dy = loadps(&y[k].d[c0]);                                              \
            for (int r = 0; r < R; r++)                                                     \
                acc[r] = QGEMV_PACKED_STEP(pfx, step, t[r], dec[r][k].d0, dy, acc[r]);     \
            if (step >= QGEMV_PACKED_STEP_KMIN) {                                           \
                /* msum: the columns' bsum pairs against the rows' minimum pairs (vpdpwssd), \
                 * then fnmadd: -(msum (d_y dmin)) + acc, one rounding */                   \
                vi m[R];                                                                    \
                for (int r = 0; r < R; r++) m[r] = pfx##_set1_epi32(0);                     \
                for (int p = 0; p < QK_K / 32; p++) {                                       \
                    const vi pair = load(y[k].bsum2[p][c0]);                                \
                    for (int r = 0; r < R; r++) m[r] = dpwssd(m[r], pfx##_set1_epi32(dec[r][k].mpair[p]), pair); \
                }                                                                           \
                for (int r = 0; r < R; r++)                                                 \
                    acc[r] = pfx##_fnmadd_ps(pfx##_cvtepi32_ps(m[r]), pfx##_mul_ps(dy, pfx##_set1_ps(dec[r][k].dmin)), acc[r]); \
            }                                                                               \
        }                                                                                   \
    }
#define QGEMV_LOAD_512(p) _mm512_load_si512(p)
#define QGEMV_LOAD_256(p) _mm256_load_si256((const __m256i *)(p))
#if defined(QGEMV_AVX512)
QGEMV_DEFINE_PACKED_ROWS(16, _mm512, __m512i, __m512, QGEMV_LOAD_512, _mm512_load_ps, _mm512_dpbusd_epi32,
                         _mm512_dpwssd_epi32)
#endif
QGEMV_DEFINE_PACKED_ROWS(8, _mm256, __m256i, __m256, QGEMV_LOAD_256, _mm256_load_ps, qgemv_dot_u8s8_acc, qgemv_madd_acc)

#if defined(QGEMV_AMX)
/* On AMX (qgemv_amx_tiles), the groups of 16 columns take each super-block's t from tiles:
 * A holds the 8 rows' q (2 s + 1), 64 values a row as decoded, split as 64 H + L
 * (qgemv_amx_split_hl: |q (2 s + 1)| <= 63 31), B the group's packed values (qs[16 c ..], the
 * activations in tdpbssd's layout already), and
 *     t = 64 C_H + C_L,  C_H = sum q' p (tdpbssd), C_L = sum L p (tdpbusd),
 * the same exact t, then the same fma: vec_dot's bits.  The split is made once a super-block
 * for every group, and costs what one group's tiles save: 4096 x 4096, 2 threads, through
 * QMatrix, VNNI -> tiles, batch 16 0.83-0.94x, batch 32 1.09-1.31x (iq2_xxs 1.16, iq2_xs 1.28,
 * iq2_s 1.30, iq3_xxs 1.17, iq3_s 1.15, iq1_s 1.09, iq1_m 1.31), so from 32 columns. */
#define QGEMV_PACKED_AMX_MIN_COLS 32
/* tiles 0, 1: C_H, C_L (8 rows x 16 int32); 2, 3: A_H, A_L (8 rows x 64 values); 4: B (16 x 64) */
QGEMV_AMX_TARGET static void packed_amx_configure(void) {
    const uint8_t rows[8] = {QGEMV_PACKED_ROWS, QGEMV_PACKED_ROWS, QGEMV_PACKED_ROWS, QGEMV_PACKED_ROWS, 16, 0, 0, 0};
    qgemv_tile_configure(rows);
}
/* the 8 decoded rows against ng full groups of 16 columns (y + g nb: group g's blocks) over nbc
 * super-blocks, acc[g][r] as packed_rows_x16's (the IQ formats' and K steps: no format with
 * minimums takes the packed tile on AVX-512) */
QGEMV_AMX_TARGET static void packed_rows_amx(const qgemv_decoded_u8 (*dec)[QGEMV_PACKED_CHUNK], const block_q8_Kx16c *y,
                                             int64_t nb, int ng, int64_t nbc, const int step,
                                             __m512 (*acc)[QGEMV_PACKED_ROWS]) {
    enum { R = QGEMV_PACKED_ROWS };
    _Alignas(64) int8_t H[R][QK_K];
    _Alignas(64) uint8_t L[R][QK_K];
    /* word w of values 64 c ..: the scale of its 16 values, 4 c + w / 8 */
    const __m512i spread = _mm512_set_epi16(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1,
                                            0, 0, 0, 0, 0, 0, 0, 0);
    for (int64_t k = 0; k < nbc; k++) {
        for (int r = 0; r < R; r++) {
            const __m512i s16 = _mm512_castsi256_si512(_mm512_cvtepi32_epi16(_mm512_loadu_si512((const void *)dec[r][k].s)));
            for (int c = 0; c < 4; c++) {
                const __m512i q = _mm512_sub_epi8(_mm512_load_si512((const void *)(dec[r][k].u + 64 * c)), _mm512_set1_epi8(64));
                const __m512i f = _mm512_permutexvar_epi16(_mm512_add_epi16(spread, _mm512_set1_epi16((short)(4 * c))), s16);
                __m512i h, l;
                qgemv_amx_split_hl(q, f, &h, &l);
                _mm512_store_si512((void *)(H[r] + 64 * c), h);
                _mm512_store_si512((void *)(L[r] + 64 * c), l);
            }
        }
        for (int g = 0; g < ng; g++) {
            const block_q8_Kx16c *yk = y + g * nb + k;
            _tile_zero(0);
            _tile_zero(1);
            for (int c = 0; c < 4; c++) {
                _tile_loadd(2, H[0] + 64 * c, QK_K);
                _tile_loadd(3, L[0] + 64 * c, QK_K);
                _tile_loadd(4, yk->qs[16 * c], 64);
                _tile_dpbssd(0, 2, 4);
                _tile_dpbusd(1, 3, 4);
            }
            _Alignas(64) int32_t sums[2][R][16];
            _tile_stored(0, sums[0], 64);
            _tile_stored(1, sums[1], 64);
            const __m512 dy = _mm512_load_ps(yk->d);
            for (int r = 0; r < R; r++) {
                const __m512i t = _mm512_add_epi32(_mm512_slli_epi32(_mm512_load_si512((const void *)sums[0][r]), 6),
                                                   _mm512_load_si512((const void *)sums[1][r]));
                acc[g][r] = QGEMV_PACKED_STEP(_mm512, step, t, dec[r][k].d0, dy, acc[g][r]);
            }
        }
    }
}
QGEMV_AMX_TARGET static void packed_amx_release(void) { _tile_release(); }
#define QGEMV_PACKED_AMX 1
#else
#define QGEMV_PACKED_AMX 0
#define QGEMV_PACKED_AMX_MIN_COLS 0
#define packed_amx_configure() ((void)0)
#define packed_rows_amx(...) ((void)0)
#define packed_amx_release() ((void)0)
#endif

/* The accumulators of QGEMV_PACKED_ROWS rows x QGEMV_PACKED_GROUPS groups of 16 columns, and
 * the kernels that move them on over a chunk of decoded super-blocks (y: the first group's
 * blocks of the chunk, nb apart a group; ncols: the columns of these groups, ng of them) */
#if defined(QGEMV_AVX512)
typedef struct {
    __m512 g[QGEMV_PACKED_GROUPS][QGEMV_PACKED_ROWS];
    __m256 last8[QGEMV_PACKED_ROWS];   /* a last group of at most 8 columns */
} qgemv_packed_sums;
QGEMV_ALWAYS_INLINE void packed_groups(const qgemv_decoded_u8 (*dec)[QGEMV_PACKED_CHUNK], const block_q8_Kx16c *y,
                                       int64_t nb, int ng, int64_t ncols, int64_t nbc, const int sub, const int step, int amx,
                                       qgemv_packed_sums *acc) {
    const int narrow = ncols - 16 * (ng - 1) <= 8;
    if (amx)
        packed_rows_amx(dec, y, nb, ng - narrow, nbc, step, acc->g);
    else
        for (int g = 0; g < ng - narrow; g++) packed_rows_x16(dec, y + g * nb, nbc, sub, step, 0, acc->g[g]);
    if (narrow) packed_rows_x8(dec, y + (ng - 1) * nb, nbc, sub, step, 0, acc->last8);
}
/* row r's nc <= 16 sums of group g */
static inline void packed_sums_store(const qgemv_packed_sums *acc, int g, int r, int nc, float *out) {
    float v[16];
    if (nc <= 8) _mm256_storeu_ps(v, acc->last8[r]);
    else _mm512_storeu_ps(v, acc->g[g][r]);
    memcpy(out, v, (size_t)nc * sizeof(float));
}
#else
#if QGEMV_PACKED_SCALED_MADD
/* Plain AVX2, the IQ and K steps (no minimums): each sub-block's maddubs pairs times the rows'
 * (s, s) by madd straight into t, and the offset once a super-block from the columns' bsum pairs,
 *     t = sum_k s_k sum_j u_j a_j - 64 sum_k s_k bsum_k,
 * the same exact t as packed_rows_x8's, where vpdpbusd's emulation (maddubs, a madd by ones, an
 * add) and a vpmulld per 16 values spent two more uops on ports 0 and 1 per 128 products.  The
 * pairs are formed with the decode (packed_scale_pairs: as scalar loops, batch 8 ran 1.15x
 * slower).  Intel Xeon, QGEMV_ISA=avx2, builds alternating, 4096 x 4096, 2 threads: batch 32
 * iq2_xxs 5.61 -> 5.26 ms, iq2_xs 5.53 -> 5.17, iq2_s 5.33 -> 5.06, iq3_xxs 5.52 -> 5.13, iq3_s
 * 5.60 -> 5.18, iq1_m 5.21 -> 4.75, q3_K 5.38 -> 4.97; batch 16 1.03-1.10x faster, 8 even */
static inline void packed_scale_pairs(qgemv_decoded_u8 *dec, const int sub) {
    /* each 16 values' scale as int16 bits (|s| < 2^15: q3_K's are signed), s[2 p] twice for sub 32 */
    __m256i v[2];
    for (int h = 0; h < 2; h++) {
        v[h] = _mm256_loadu_si256((const __m256i *)(dec->s + 8 * h));
        if (sub == 32) v[h] = _mm256_shuffle_epi32(v[h], _MM_SHUFFLE(2, 2, 0, 0));
        v[h] = _mm256_and_si256(v[h], _mm256_set1_epi32(0xffff));
        _mm256_storeu_si256((__m256i *)(dec->spair + 8 * h), _mm256_or_si256(v[h], _mm256_slli_epi32(v[h], 16)));
        /* the low dword of each qword: s[2 p] | s[2 p + 1] << 16 */
        const __m256i b = _mm256_or_si256(v[h], _mm256_srli_epi64(v[h], 16));
        _mm_storeu_si128((__m128i *)(dec->bpair + 4 * h),
                         _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6))));
    }
}
QGEMV_ALWAYS_INLINE void packed_rows_x8_scaled_madd(const qgemv_decoded_u8 (*dec)[QGEMV_PACKED_CHUNK],
                                                    const block_q8_Kx16c *y, int64_t nbc, const int sub, const int step,
                                                    const int c0, __m256 *acc) {
    enum { R = QGEMV_PACKED_ROWS };
    for (int64_t k = 0; k < nbc; k++) {
        __m256i t[R];
        for (int r = 0; r < R; r++) {   /* -64 sum_k s_k bsum_k */
            __m256i m = _mm256_setzero_si256();
            for (int p = 0; p < QK_K / 32; p++)
                m = qgemv_madd_acc(m, _mm256_set1_epi32(dec[r][k].bpair[p]), QGEMV_LOAD_256(y[k].bsum2[p][c0]));
            t[r] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(m, 6));
        }
        for (int sb = 0; sb < QK_K / 16; sb++) {
            __m256i sp[R];
            for (int r = 0; r < R; r++) sp[r] = _mm256_set1_epi32(dec[r][k].spair[sb]);
            _Pragma("GCC unroll 4")
            for (int j = 0; j < 4; j++) {
                const int q = 4 * sb + j;
                const __m256i a = QGEMV_LOAD_256(y[k].qs[q][c0]);
                for (int r = 0; r < R; r++) {
                    int32_t u4;
                    memcpy(&u4, dec[r][k].u + 4 * q, 4);
                    t[r] = qgemv_madd_acc(t[r], _mm256_maddubs_epi16(_mm256_set1_epi32(u4), a), sp[r]);
                }
            }
        }
        const __m256 dy = _mm256_load_ps(&y[k].d[c0]);
        for (int r = 0; r < R; r++) acc[r] = QGEMV_PACKED_STEP(_mm256, step, t[r], dec[r][k].d0, dy, acc[r]);
    }
}
#endif
typedef struct {
    __m256 g[QGEMV_PACKED_GROUPS][2][QGEMV_PACKED_ROWS];   /* columns 0-7 and 8-15 of a group */
} qgemv_packed_sums;
QGEMV_ALWAYS_INLINE void packed_groups(const qgemv_decoded_u8 (*dec)[QGEMV_PACKED_CHUNK], const block_q8_Kx16c *y,
                                       int64_t nb, int ng, int64_t ncols, int64_t nbc, const int sub, const int step, int amx,
                                       qgemv_packed_sums *acc) {
    (void)amx;
    for (int g = 0; g < ng; g++)
        for (int h = 0; h < 2 && 16 * g + 8 * h < ncols; h++) {
#if QGEMV_PACKED_SCALED_MADD
            if (QGEMV_PACKED_STEP_SCALES_IN_MADD(step)) {
                packed_rows_x8_scaled_madd(dec, y + g * nb, nbc, sub, step, 8 * h, acc->g[g][h]);
                continue;
            }
#endif
            packed_rows_x8(dec, y + g * nb, nbc, sub, step, 8 * h, acc->g[g][h]);
        }
}
static inline void packed_sums_store(const qgemv_packed_sums *acc, int g, int r, int nc, float *out) {
    float v[16];
    _mm256_storeu_ps(v, acc->g[g][0][r]);
    _mm256_storeu_ps(v + 8, acc->g[g][1][r]);
    memcpy(out, v, (size_t)nc * sizeof(float));
}
#endif

#if QGEMV_PACKED_SCALED_MADD
#define QGEMV_PACKED_SCALE_PAIRS(dec, sub, step) \
    (QGEMV_PACKED_STEP_SCALES_IN_MADD(step) ? packed_scale_pairs(dec, sub) : (void)0)
#else
#define QGEMV_PACKED_SCALE_PAIRS(dec, sub, step) ((void)0)
#endif
/* packed_tile_<name>: vec_dot_tile_<name>_q8_K's result from the packed columns (ceil(ncols / 16)
 * groups of n / QK_K blocks, group after group); rows past nrows in a pass repeat the last
 * row, their results unused.  The decode is a function of its own: inlined, GCC allocated its
 * registers with the kernel's and iq2_s, iq2_xs and iq3_s ran 10-25% slower */
#define QGEMV_DEFINE_PACKED_TILE(name, decode, sub) QGEMV_DEFINE_PACKED_TILE_OVER(name, block_##name, decode, sub)
/* packed_tile_<fname> over rows of `block` (a prepared layout's: grid_codes.h, iq1.h) */
#define QGEMV_DEFINE_PACKED_TILE_OVER(fname, block, decode, sub)                              \
    QGEMV_DEFINE_PACKED_TILE_STEP(fname, block, decode, sub, QGEMV_PACKED_STEP_IQ)
/* the same with a step of QGEMV_PACKED_STEP's (the K-quants': kquants.h) */
#define QGEMV_DEFINE_PACKED_TILE_STEP(fname, block, decode, sub, step)                        \
    QGEMV_NEVER_INLINE void packed_decode_##fname(const block *x, int64_t nbc, qgemv_decoded_u8 *dec) { \
        for (int64_t k = 0; k < nbc; k++) {                                                 \
            QGEMV_PREFETCH_L1_STREAM(&x[k], sizeof(x[0]));                                  \
            decode(&x[k], &dec[k]);                                                         \
            QGEMV_PACKED_SCALE_PAIRS(&dec[k], sub, step);                                   \
        }                                                                                   \
    }                                                                                       \
    static void packed_tile_##fname(int64_t n, const void *restrict w, int64_t row_stride, int64_t nrows, \
                                   const void *restrict packed, int64_t ncols, float *restrict out, \
                                   int64_t out_stride) {                                    \
        enum { R = QGEMV_PACKED_ROWS, CH = QGEMV_PACKED_CHUNK, G = QGEMV_PACKED_GROUPS };   \
        const int64_t nb = n / QK_K, ngroups = (ncols + 15) / 16;                           \
        const block_q8_Kx16c *yp = (const block_q8_Kx16c *)packed;                          \
        const int amx = QGEMV_PACKED_AMX && qgemv_amx_tiles && ncols >= QGEMV_PACKED_AMX_MIN_COLS; \
        if (amx) packed_amx_configure();                                                    \
        for (int64_t r0 = 0; r0 < nrows; r0 += R) {                                         \
            const int nr = nrows - r0 < R ? (int)(nrows - r0) : R;                          \
            for (int64_t g0 = 0; g0 < ngroups; g0 += G) {                                   \
                const int ng = ngroups - g0 < G ? (int)(ngroups - g0) : G;                  \
                qgemv_packed_sums acc;                                                      \
                memset(&acc, 0, sizeof(acc));                                              \
                for (int64_t ib0 = 0; ib0 < nb; ib0 += CH) {                                \
                    const int64_t nbc = nb - ib0 < CH ? nb - ib0 : CH;                      \
                    qgemv_decoded_u8 dec[R][CH];                                            \
                    for (int r = 0; r < R; r++)                                             \
                        packed_decode_##fname((const block *)((const uint8_t *)w +          \
                                             (r0 + (r < nr ? r : nr - 1)) * row_stride) + ib0, nbc, dec[r]); \
                    packed_groups(dec, yp + g0 * nb + ib0, nb, ng, ncols - 16 * g0, nbc, (sub), (step), amx, &acc); \
                }                                                                           \
                for (int g = 0; g < ng; g++) {                                              \
                    const int64_t c0 = 16 * (g0 + g);                                       \
                    const int nc = ncols - c0 < 16 ? (int)(ncols - c0) : 16;                \
                    for (int r = 0; r < nr; r++) packed_sums_store(&acc, g, r, nc, out + (r0 + r) * out_stride + c0); \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
        if (amx) packed_amx_release();                                                      \
    }

#if !defined(QGEMV_AVX512) && defined(QGEMV_VNNI)
/* AVX-VNNI: the 4-bit 32-value formats llama.cpp repacks (q4_0, iq4_nl, mxfp4: src/formats/q32_x8.h)
 * from packed q8_0 columns.  Their arithmetic is per block,
 *     acc = fma((float) (sum_j u_j a_j - o sum_j a_j), d_x d_y, acc)   (u = q + o),
 * so here too the columns can take the lanes: one weight dword, broadcast, meets 8 columns, and
 * the set-up per block (the columns' offset sums and scales) is a vector for 8.  Panels of 8
 * rows (GGUF rows transposed into one on the way) are decoded a chunk of blocks at a time for
 * every column; a batch's last columns short of 8 take the rows in the lanes instead, a column
 * at a time (x8_pass's way), from the same decode.  4096 x 4096, 2 threads, against x8_pass:
 * batch 16 / 32 q4_0 1.17 / 2.42 -> 1.06 / 2.06 ms, iq4_nl 1.28 / 2.47 -> 1.09 / 2.04, mxfp4
 * 1.34 / 2.68 -> 1.09 / 2.05; batch 8 even (the thresholds: q32_x8.h).  The AVX-512 variants
 * keep x8_pass's pairs: there this tile (16 columns a vector) ran batch 32 16% faster but batch
 * 8 and 24 10-50% slower.  A vector's 4 chains of 8 vpdpbusd take about 28 cycles a block where
 * the ports would allow 17; two chains a row, against vpdpbusd's latency, gained nothing. */

/* columns 16 g .. 16 g + 15 of q8_0 activations a -> the n / 32 blocks block_q8_0x16c at packed */
static void pack_columns_q8_0(int64_t n, const void *restrict a, int64_t act_stride, int64_t ncols, int64_t g,
                              void *restrict packed) {
    block_q8_0x16c *p = (block_q8_0x16c *)packed;
    const int nc = ncols - 16 * g < 16 ? (int)(ncols - 16 * g) : 16;
    for (int64_t ib = 0; ib < n / QK8_0; ib++) {
        if (nc < 16) memset(&p[ib], 0, sizeof(p[ib]));
        for (int c = 0; c < nc; c++) {
            const block_q8_0 *y = (const block_q8_0 *)((const uint8_t *)a + (16 * g + c) * act_stride) + ib;
            int32_t sum = 0;
            for (int j = 0; j < QK8_0; j++) sum += y->qs[j];
            for (int j = 0; j < QK8_0 / 4; j++) memcpy(p[ib].qs[j][c], y->qs + 4 * j, 4);
            p[ib].sum[c] = sum;
            p[ib].d[c] = qgemv_fp16_to_fp32(y->d);
        }
    }
}
/* the driver sizes a group's packed columns by QK_K values of a row ((n + QK_K - 1) / QK_K of
 * QGEMV_PACKED_NBYTES_q8_0), so a group's q8_0 blocks lie QGEMV_PACKED_Q8_0_STRIDE(n) apart */
#define QGEMV_PACKED_NBYTES_q8_0 (QK_K / QK8_0 * sizeof(block_q8_0x16c))
#define QGEMV_PACKED_Q8_0_STRIDE(n) (((n) + QK_K - 1) / QK_K * (QK_K / QK8_0))

/* a block of a panel of 8 rows as the tile reads it: u[j][r] the levels u = q + o of row r's
 * values 4 j .. 4 j + 3, d[r] the row's scale */
typedef struct {
    _Alignas(32) uint8_t u[QK8_0 / 4][8][4];
    float d[8];
} qgemv_decoded_x8;

/* rows r0 .. r0 + 3 of nbc decoded blocks x the 8 columns c0 .. c0 + 7 of a packed group, acc[r]
 * (columns in lanes) */
QGEMV_ALWAYS_INLINE void packed_x8_rows(const qgemv_decoded_x8 *dec, const int r0, const block_q8_0x16c *y,
                                        int64_t nbc, const int o, const int c0, __m256 *acc) {
    enum { R = QGEMV_PACKED_ROWS };
    for (int64_t k = 0; k < nbc; k++) {
        const __m256i start = _mm256_mullo_epi32(QGEMV_LOAD_256(&y[k].sum[c0]), _mm256_set1_epi32(-o));
        __m256i s[R];
        for (int r = 0; r < R; r++) s[r] = start;
        _Pragma("GCC unroll 8")
        for (int j = 0; j < QK8_0 / 4; j++) {
            const __m256i a = QGEMV_LOAD_256(y[k].qs[j][c0]);
            for (int r = 0; r < R; r++) {
                int32_t u4;
                memcpy(&u4, dec[k].u[j][r0 + r], 4);
                s[r] = qgemv_dpbusd_256(s[r], _mm256_set1_epi32(u4), a);
            }
        }
        const __m256 dy = _mm256_load_ps(&y[k].d[c0]);
        for (int r = 0; r < R; r++)
            acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[r]), _mm256_mul_ps(dy, _mm256_set1_ps(dec[k].d[r0 + r])), acc[r]);
    }
}
/* columns c0 .. c0 + nc - 1 (nc < 8) against the 8 decoded rows, the rows in the lanes (x8_pass's
 * way): a block's levels loaded once for the columns, two chains a column (even and odd j, as
 * x8_pass: one chain of 8 ran 3% slower at batch 12), acc[c] */
QGEMV_ALWAYS_INLINE void packed_x8_columns(const qgemv_decoded_x8 *dec, const block_q8_0x16c *y, int64_t nbc,
                                           const int o, const int c0, const int nc, __m256 *acc) {
    for (int64_t k = 0; k < nbc; k++) {
        __m256i u[QK8_0 / 4];
        for (int j = 0; j < QK8_0 / 4; j++) u[j] = _mm256_load_si256((const __m256i *)dec[k].u[j]);
        const __m256 dx = _mm256_load_ps(dec[k].d);
        for (int c = 0; c < nc; c++) {
            __m256i s[2] = {_mm256_set1_epi32(-o * y[k].sum[c0 + c]), _mm256_setzero_si256()};
            for (int j = 0; j < QK8_0 / 4; j++) {
                int32_t a4;
                memcpy(&a4, y[k].qs[j][c0 + c], 4);
                s[j & 1] = qgemv_dpbusd_256(s[j & 1], u[j], _mm256_set1_epi32(a4));
            }
            acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(s[0], s[1])),
                                     _mm256_mul_ps(_mm256_set1_ps(y[k].d[c0 + c]), dx), acc[c]);
        }
    }
}

/* the accumulators of a panel's 8 rows x QGEMV_PACKED_GROUPS groups: the full halves' (rows 0-3
 * and 4-7, columns in lanes) and the last columns' (rows in lanes) */
typedef struct {
    qgemv_packed_sums full[2];
    __m256 last[7];
} qgemv_packed_x8_sums;

/* packed_tile_<name> (GGUF rows, row_stride apart, a last panel short of 8 repeating its last
 * row) and packed_panel_tile_<name> (rows of panels, row_stride bytes a row) from
 * decode_rows_<name> / decode_panel_<name>; o: the levels' offset */
#define QGEMV_PACKED_X8_CHUNK 16   /* blocks decoded at a time: 4.5 KiB, against a group's 10 KiB of columns */
#define QGEMV_DEFINE_PACKED_TILE_X8(name, o)                                                   \
    static void packed_x8_tile_##name(int64_t n, const uint8_t *src, int64_t stride, int64_t nrows, int plain, \
                                      const void *restrict packed, int64_t ncols, float *restrict out, \
                                      int64_t out_stride) {                                 \
        enum { CH = QGEMV_PACKED_X8_CHUNK, G = QGEMV_PACKED_GROUPS, R = QGEMV_PACKED_ROWS }; \
        const int64_t nb = n / QK8_0, nbg = QGEMV_PACKED_Q8_0_STRIDE(n), ngroups = (ncols + 15) / 16; \
        const int64_t nfull = ncols / 8;   /* vectors of 8 columns */                      \
        const block_q8_0x16c *yp = (const block_q8_0x16c *)packed;                          \
        for (int64_t r0 = 0; r0 < nrows; r0 += 8) {                                         \
            const int nr = nrows - r0 < 8 ? (int)(nrows - r0) : 8;                          \
            const uint8_t *rows[8];   /* GGUF rows; a panel's rows lie at its start, xp */  \
            for (int r = 0; plain && r < 8; r++) rows[r] = src + (r0 + (r < nr ? r : nr - 1)) * stride; \
            const block_##name##x8 *xp = (const block_##name##x8 *)(src + r0 * stride);      \
            for (int64_t g0 = 0; g0 < ngroups; g0 += G) {                                   \
                const int ng = ngroups - g0 < G ? (int)(ngroups - g0) : G;                  \
                const int64_t v1 = 2 * (g0 + ng) < nfull ? 2 * (g0 + ng) : nfull;   /* full vectors 2 g0 .. v1 */ \
                const int nlast = v1 < 2 * (g0 + ng) ? (int)(ncols - 8 * v1) : 0;           \
                qgemv_packed_x8_sums acc;                                                   \
                memset(&acc, 0, sizeof(acc));                                              \
                for (int64_t ib0 = 0; ib0 < nb; ib0 += CH) {                                \
                    const int64_t nbc = nb - ib0 < CH ? nb - ib0 : CH;                      \
                    qgemv_decoded_x8 dec[CH];                                               \
                    for (int64_t k = 0; k < nbc; k++) {                                     \
                        if (plain) x8_decode_rows_##name(rows, ib0 + k, &dec[k]);           \
                        else x8_decode_panel_##name(&xp[ib0 + k], &dec[k]);                 \
                    }                                                                       \
                    /* each vector's blocks, in L1, for both halves of the panel */         \
                    for (int64_t v = 2 * g0; v < v1; v++)                                   \
                        for (int h = 0; h < 2; h++)                                         \
                            packed_x8_rows(dec, R * h, yp + v / 2 * nbg + ib0, nbc, (o), 8 * (v % 2), \
                                           acc.full[h].g[v / 2 - g0][v % 2]);               \
                    if (nlast)                                                              \
                        packed_x8_columns(dec, yp + v1 / 2 * nbg + ib0, nbc, (o), 8 * (v1 % 2), nlast, acc.last); \
                }                                                                           \
                for (int g = 0; g < ng; g++) {                                              \
                    const int64_t c0 = 16 * (g0 + g);                                       \
                    const int nc = ncols - c0 < 16 ? (int)(ncols - c0) : 16;                \
                    for (int r = 0; r < nr; r++)                                            \
                        packed_sums_store(&acc.full[r / R], g, r % R, nc, out + (r0 + r) * out_stride + c0); \
                }                                                                           \
                for (int c = 0; c < nlast; c++) {   /* over the zeros stored above */       \
                    float v[8];                                                             \
                    _mm256_storeu_ps(v, acc.last[c]);                                       \
                    for (int r = 0; r < nr; r++) out[(r0 + r) * out_stride + 8 * v1 + c] = v[r]; \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
    static void packed_tile_##name(int64_t n, const void *restrict w, int64_t row_stride, int64_t nrows, \
                                   const void *restrict packed, int64_t ncols, float *restrict out, \
                                   int64_t out_stride) {                                    \
        packed_x8_tile_##name(n, (const uint8_t *)w, row_stride, nrows, 1, packed, ncols, out, out_stride); \
    }                                                                                       \
    static void packed_panel_tile_##name(int64_t n, const void *restrict panels, int64_t row_stride, int64_t nrows, \
                                         const void *restrict packed, int64_t ncols, float *restrict out, \
                                         int64_t out_stride) {                              \
        packed_x8_tile_##name(n, (const uint8_t *)panels, row_stride, nrows, 0, packed, ncols, out, out_stride); \
    }
#endif /* !QGEMV_AVX512 */
#endif /* QGEMV_AVX2 */
