/* The K-quants (q2_K .. q6_K), iq4_xs and tq2_0 on 16 interleaved rows: the panels
 * QMatrix prepares once per matrix.
 *
 * A panel block (block_<name>x16, include/qgemv/blocks.h) holds one super-block of 16 rows with
 * row r in lane r of every field, so a 64-byte load gives 4 levels of each of the 16 rows.  Per
 * super-block and activation column the 16 rows' exact integer sums finish in lanes,
 *     isum_r = sum_s sc_rs sum_{i in s} u_ri p_i  (- the offset of unsigned levels u = q + c,
 *              c sum_s sc_rs bsum_s: q3_K's 4, q6_K's 32, iq4_xs's 128, where each
 *              sub-block's chain starts),
 *     msum_r = sum_s m_rs bsum_s                  (q2_K, q4_K, q5_K's minimums),
 * then the fmas of the format's row-by-row product run on 16 rows at once: acc_r =
 * fma(d_y d_r, isum_r, acc_r), then for q2_K / q4_K / q5_K fma(-(d_y dmin_r), msum_r, acc_r)
 * (kquants.h: QGEMV_DEFINE_VEC_DOT_K; iq4_xs.h's AVX-512 tile); tq2_0 (no scales: isum_r =
 * sum t_ri p_i - sum p_i) keeps ternary.h's four accumulators per row.  Each (row, column) gets
 * the row-by-row product's bits, whatever the batch or the layout.
 *   AVX-512 (VNNI)  4 levels x 16 rows per vpdpbusd against a column's 4 int8 activations
 *                   broadcast; each sub-block's sums times the rows' scales (vpmulld; q3_K's
 *                   two sub-blocks at a time as int16 pairs through vpdpwssd), the minimums as
 *                   int16 pairs through vpdpwssd against the column's bsums;
 *   AVX2            the K-quants and tq2_0 on 8 rows per vector, maddubs pairs summed in int16
 *                   while they fit (8 15 2 128 < 2^15 for q4_K's 4-bit levels, 4 groups at a
 *                   time for q5_K's 5-bit ones and the 16-value sub-blocks of q2_K and q3_K, 2
 *                   for q6_K's 6-bit ones, 8 for tq2_0's fields), then madd with the scales
 *                   (tq2_0: ones; q3_K's and q6_K's offsets once a super-block);
 *                   with AVX-VNNI their batches and q4_K's and q5_K's single column sum by vpdpbusd
 *                   (X16_DPBUSD_SUMS, X16_K45_DPBUSD), and iq4_xs runs as on AVX-512, 8 rows
 *                   per vector; without VNNI (its levels + 128 would overflow maddubs' int16
 *                   pairs) iq4_xs takes maddubs(|q|, a with q's sign), madd by the scales;
 *   portable        none: the formats' GGUF rows (panel_tile_<name> NULL, below).
 * The decode of a super-block (nibbles, scales) is shared by 16 rows and the columns of a pass,
 * and no horizontal sums are left, where a row-by-row product needs one per super-block.
 */

/* ---------------------------------------------------------------- the layout */
/* row r of a panel block from a GGUF block (the fields block_<name>x16 has) */
#define QGEMV_K_X16_NO_QH(...)
#define QGEMV_K_X16_QH(...) __VA_ARGS__
#define QGEMV_DEFINE_X16_PUT_ROW(name, QH)                                                       \
    static inline void x16_put_row_##name(block_##name##x16 *p, int r, const block_##name *x) { \
        p->d[r] = x->d;                                                                         \
        p->dmin[r] = x->dmin;                                                                   \
        for (int i = 0; i < K_SCALE_SIZE; i++) p->scales[16 * i + r] = x->scales[i];           \
        QH(for (int k = 0; k < 8; k++) memcpy(&p->qh[64 * k + 4 * r], &x->qh[4 * k], 4);)       \
        for (int g = 0; g < 32; g++) memcpy(&p->qs[64 * g + 4 * r], &x->qs[4 * g], 4);          \
    }
QGEMV_DEFINE_X16_PUT_ROW(q4_K, QGEMV_K_X16_NO_QH)
QGEMV_DEFINE_X16_PUT_ROW(q5_K, QGEMV_K_X16_QH)
/* q6_K's ql group g = 16 h + k and qh group 8 h + k (k < 8) in a panel block (blocks.h) */
static inline const uint8_t *x16_ql_q6_K(const block_q6_Kx16 *p, int g) {
    const int h = g / 16, k = g % 16;
    return p->q[h][k < 8 ? 2 * k : 8 + k];
}
static inline const uint8_t *x16_qh_q6_K(const block_q6_Kx16 *p, int h, int k) { return p->q[h][2 * k + 1]; }
static inline void x16_put_row_q6_K(block_q6_Kx16 *p, int r, const block_q6_K *x) {
    p->d[r] = x->d;
    for (int s = 0; s < 16; s++) p->scales[16 * s + r] = x->scales[s];
    for (int g = 0; g < 32; g++) memcpy((uint8_t *)x16_ql_q6_K(p, g) + 4 * r, &x->ql[4 * g], 4);
    for (int k = 0; k < 16; k++) memcpy((uint8_t *)x16_qh_q6_K(p, k / 8, k % 8) + 4 * r, &x->qh[4 * k], 4);
}

static inline void x16_put_row_q2_K(block_q2_Kx16 *p, int r, const block_q2_K *x) {
    p->d[r] = x->d;
    p->dmin[r] = x->dmin;
    for (int s = 0; s < 16; s++) p->scales[16 * s + r] = x->scales[s];
    for (int g = 0; g < 16; g++) memcpy(&p->qs[64 * g + 4 * r], &x->qs[4 * g], 4);
}
static inline void x16_put_row_q3_K(block_q3_Kx16 *p, int r, const block_q3_K *x) {
    p->d[r] = x->d;
    for (int i = 0; i < 12; i++) p->scales[16 * i + r] = x->scales[i];
    for (int m = 0; m < 8; m++) memcpy(&p->hmask[64 * m + 4 * r], &x->hmask[4 * m], 4);
    for (int g = 0; g < 16; g++) memcpy(&p->qs[64 * g + 4 * r], &x->qs[4 * g], 4);
}
static inline void x16_put_row_iq4_xs(block_iq4_xsx16 *p, int r, const block_iq4_xs *x) {
    p->d[r] = x->d;
    p->scales_h[r] = x->scales_h;
    memcpy(&p->scales_l[4 * r], x->scales_l, 4);
    for (int g = 0; g < 32; g++) memcpy(&p->qs[64 * g + 4 * r], &x->qs[4 * g], 4);
}

static inline void x16_put_row_tq2_0(block_tq2_0x16 *p, int r, const block_tq2_0 *x) {
    p->d[r] = x->d;
    for (int g = 0; g < 16; g++) memcpy(&p->qs[64 * g + 4 * r], &x->qs[4 * g], 4);
}

/* rows 0..15 of w (row_stride bytes apart), n values each -> n / 256 panel blocks */
#define QGEMV_DEFINE_INTERLEAVE_X16(name, block_size)                                            \
    static void interleave_x16_##name(const void *restrict w, int64_t row_stride, int64_t n,    \
                                      void *restrict panel) {                                   \
        block_##name##x16 *p = (block_##name##x16 *)panel;                                      \
        for (int64_t b = 0; b < n / (block_size); b++)                                          \
            for (int r = 0; r < 16; r++)                                                        \
                x16_put_row_##name(&p[b], r, (const block_##name *)((const uint8_t *)w + r * row_stride) + b); \
    }
QGEMV_DEFINE_INTERLEAVE_X16(q2_K, QK_K)
QGEMV_DEFINE_INTERLEAVE_X16(q3_K, QK_K)
QGEMV_DEFINE_INTERLEAVE_X16(q4_K, QK_K)
QGEMV_DEFINE_INTERLEAVE_X16(q5_K, QK_K)
QGEMV_DEFINE_INTERLEAVE_X16(q6_K, QK_K)
QGEMV_DEFINE_INTERLEAVE_X16(iq4_xs, QK_K)
QGEMV_DEFINE_INTERLEAVE_X16(tq2_0, QK_K)

/* ---------------------------------------------------------------- the panel tiles */
/* every pass of two columns or more prefetches each level line it loads QGEMV_STREAM_AHEAD
 * bytes ahead (batch 8 10-30% faster on a Zen 4).  A single column's passes (and q8_0_x16.h's)
 * do so only where the CPU needs it (QGEMV_PREFETCH_PASS_LINE, include/qgemv/simd.h; chosen at
 * import).  An Intel Xeon (AMX, a KVM guest) needs it: without,
 * the panels' GEMV waited on memory (14336 x 4096 out of cache, 2 threads: q3_K 2.26 -> 1.19 ms
 * with, q2_K 1.17 -> 0.96, q5_K 1.91 -> 1.68, q4_K and q6_K even or better).  A Zen 4 streams
 * them faster without (prefetch on -> off, same run, 1 / 2 threads: q8_0 4.8-5.1 -> 3.4-3.6 /
 * 2.5-3.0 -> 1.4-2.2 ms, q2_K 1.4-1.7 -> 1.0-1.6 / 0.78-0.95 -> 0.66-0.82, q5_K 2.3-2.8 ->
 * 2.1-2.4 / 1.5-2.4 -> 1.3-2.3; q3_K, q4_K, q6_K even), and so do the AVX2 passes (QGEMV_ISA=
 * avx2, 14336 x 4096 out of cache, 1 / 2 threads: q4_K 2.21 -> 1.36 / 1.13 -> 0.79 ms, q2_K 1.65
 * -> 1.32 / 0.82 -> 0.68, q5_K 3.09 -> 2.86 / 1.67 -> 1.47), and iq4_xs's and tq2_0's (once
 * measured even or slower without, in an earlier build: iq4_xs 2 threads 1.12-1.47 ->
 * 1.17-1.92 ms; now, 2 / 1 threads, iq4_xs 0.78 -> 0.74 / 1.29 -> 1.26 ms, tq2_0 0.36 -> 0.26
 * / 0.70 -> 0.52, its 3 copies of 14336 x 4096 45 MiB). */

/* a pass's hints: 0 none, 1 a single column's (as above), X16_PAIRED_HINTS those of a single
 * column's pairs (x16_pairs_run below), where AVX2's q4_K and q5_K also make the column opaque
 * to each half (QGEMV_DEFINE_X16_SUPERBLOCK_K45) */
#define X16_PAIRED_HINTS 2
/* a super-block's nlines level lines at qs hinted before a pass reads them (hints as above):
 * q2_K's.  Hinted inside its unrolled loops, the hints' addresses took the registers q2_K's AVX2
 * pass needed and its single column spilled (C harness, 8 rows x 256 values: 38 ns without
 * hints, 48 with).  Intel Xeon, builds alternating, single column, 1 / 2 threads: avxvnni
 * 4096 x 4096 0.50 -> 0.38-0.40 / 0.28-0.33 -> 0.205-0.21 ms, 14336 x 4096 out of cache
 * 2.04-2.05 -> 1.76-1.82 / 1.03-1.08 -> 0.92-0.98 (avx2 alike); AVX-512 in cache 0.30-0.32 ->
 * 0.28-0.30 / 0.17-0.19 -> 0.14-0.16, out of cache even; batches even.  iq4_xs's AVX-VNNI pass,
 * which does not spill, ran 1.16-1.28x slower so than hinted line by line, in and out of cache */
QGEMV_ALWAYS_INLINE void x16_hint_lines(const uint8_t *qs, const int nlines, const int CB, const int hints) {
    for (int g = 0; g < nlines; g++) QGEMV_PREFETCH_PASS_LINE_IF(hints, qs + 64 * g, CB);
}

/* columns per pass, their integer sums in registers: 8 in AVX-512's 32 (q5_K batch 32 8% faster
 * than 4, q4_K even), 4 in AVX2's 16 */
#if defined(QGEMV_AVX512)
#define QGEMV_X16_COLS 8
#else
#define QGEMV_X16_COLS 4
#endif

/* groups of 4 levels whose maddubs pair sums add up in int16 (AVX2): 8 15 2 128 < 2^15 for q4_K,
 * 4 31 2 128 for q5_K */
#define QGEMV_X16_INT16_GROUPS_q4_K 8
#define QGEMV_X16_INT16_GROUPS_q5_K 4

#if defined(QGEMV_AVX2)
/* the 16 rows' 6-bit scales and minimums of a panel block as bytes, sc[16 s + r] and
 * mn[16 s + r] (scale_min_k4 on every row at once) */
static inline void x16_scales_mins(const uint8_t scales[16 * K_SCALE_SIZE], uint8_t sc[128], uint8_t mn[128]) {
    const __m256i low6 = _mm256_set1_epi8(0x3f), low4 = _mm256_set1_epi8(0x0f), top2 = _mm256_set1_epi8(0x30);
    for (int h = 0; h < 2; h++) {   /* bytes i = 2 h, 2 h + 1 of the 12 (and 4 + i, 8 + i) */
        const __m256i s0 = _mm256_loadu_si256((const __m256i *)(scales + 32 * h));
        const __m256i s1 = _mm256_loadu_si256((const __m256i *)(scales + 64 + 32 * h));
        const __m256i s2 = _mm256_loadu_si256((const __m256i *)(scales + 128 + 32 * h));
        _mm256_storeu_si256((__m256i *)(sc + 32 * h), _mm256_and_si256(s0, low6));
        _mm256_storeu_si256((__m256i *)(mn + 32 * h), _mm256_and_si256(s1, low6));
        _mm256_storeu_si256((__m256i *)(sc + 64 + 32 * h),
                            _mm256_or_si256(_mm256_and_si256(s2, low4), _mm256_and_si256(_mm256_srli_epi16(s0, 2), top2)));
        _mm256_storeu_si256((__m256i *)(mn + 64 + 32 * h),
                            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(s2, 4), low4),
                                            _mm256_and_si256(_mm256_srli_epi16(s1, 2), top2)));
    }
}
/* 8 rows' bytes a[r], b[r] (the low 8 of each) as int16 pairs (a[r], b[r]), one per int32 lane:
 * madd's operand (a row's scale twice, (sc, sc), or a pair of minimums) */
static inline __m256i x16_pairs8_u8(__m128i a, __m128i b) { return _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(a, b)); }
/* 8 bytes at p */
static inline __m128i x16_load8(const void *p) { return _mm_loadl_epi64((const __m128i *)p); }
/* column j's q8_K blocks at a + j act_stride and its accumulators at zero: both halves of the 16
 * rows on 8-lane vectors (x16_columns_512: all 16 on one) */
static inline void x16_columns_256(const uint8_t *a, int64_t act_stride, int CB, const block_q8_K **y,
                                   __m256 acc[2][QGEMV_X16_COLS]) {
    for (int j = 0; j < CB; j++) {
        y[j] = (const block_q8_K *)(a + j * act_stride);
        acc[0][j] = acc[1][j] = _mm256_setzero_ps();
    }
}
/* acc[j] = fma(d d_y, isum[j], acc[j]) on 8 rows, every format's first fma (x16_fold_512's) */
static inline void x16_fold_256(__m256 *acc, __m256 d, const block_q8_K *const *y, int64_t ib, const __m256i *isum,
                                int CB) {
    for (int j = 0; j < CB; j++)
        acc[j] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(y[j][ib].d)), _mm256_cvtepi32_ps(isum[j]), acc[j]);
}
/* x16_fold_256, then fma(-(dmin d_y), msum[j], acc[j]): the two fmas of q2_K, q4_K and q5_K on 8
 * rows */
static inline void x16_fold_min_256(__m256 *acc, __m256 d, __m256 dmin, const block_q8_K *const *y, int64_t ib,
                                    const __m256i *isum, const __m256i *msum, int CB) {
    x16_fold_256(acc, d, y, ib, isum, CB);
    for (int j = 0; j < CB; j++)
        acc[j] = _mm256_fnmadd_ps(_mm256_mul_ps(dmin, _mm256_set1_ps(y[j][ib].d)), _mm256_cvtepi32_ps(msum[j]), acc[j]);
}
/* -2^shift bsum_s of a column's block over its 32-value sub-blocks s (lane s): where the chains
 * of levels stored as q + 2^shift start (x16_chain_starts, below) */
static inline __m256i x16_pair_starts(const block_q8_K *y, const int shift) {
    const __m256i bs = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)y->bsums), _mm256_set1_epi16(1));
    return _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(bs, shift));
}
/* the 16 rows' q3_K scales minus 32, sc[16 s + r] (scales_q3_K_bytes on every row at once):
 * scale 4 w + k takes its low 4 bits from a nibble of byte k (w = 0, 2) or 4 + k (w = 1, 3),
 * its high 2 from bits 2 w, 2 w + 1 of byte 8 + k */
static inline void x16_scales_q3_K(const uint8_t scales[16 * 12], int8_t sc[256]) {
    const __m128i low4 = _mm_set1_epi8(0x0f), low2 = _mm_set1_epi8(3);
    for (int k = 0; k < 4; k++) {
        const __m128i a = _mm_loadu_si128((const __m128i *)(scales + 16 * k));
        const __m128i b = _mm_loadu_si128((const __m128i *)(scales + 16 * (4 + k)));
        const __m128i c = _mm_loadu_si128((const __m128i *)(scales + 16 * (8 + k)));
        const __m128i lo[4] = {_mm_and_si128(a, low4), _mm_and_si128(b, low4), _mm_and_si128(_mm_srli_epi16(a, 4), low4),
                               _mm_and_si128(_mm_srli_epi16(b, 4), low4)};
        for (int w = 0; w < 4; w++) {
            const __m128i hi = _mm_and_si128(w ? _mm_srli_epi16(c, 2 * w) : c, low2);
            _mm_storeu_si128((__m128i *)(sc + 16 * (4 * w + k)),
                             _mm_sub_epi8(_mm_or_si128(lo[w], _mm_slli_epi16(hi, 4)), _mm_set1_epi8(32)));
        }
    }
}
/* a column's 32-value sums of p as int16 pairs, pair k = (sum over sub-block 2k, over 2k + 1) */
static inline __m128i x16_bsum_pairs(const block_q8_K *y) {
    const __m256i s = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)y->bsums), _mm256_set1_epi16(1));
    return _mm_packs_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
}
#endif

/* A pass: the panels' 16 rows against CB columns (y[j]: column j's blocks), out[r * out_stride
 * + j], for a format with a super-block kernel x16_superblock_<name> (b, dec, y, ib, CB, acc;
 * x16_acc, the ISA's: AVX-512's 16 rows a vector, AVX2's two halves of 8): its super-blocks in
 * order into the columns' sums; and a single column against npanels
 * panels two at a time, their super-blocks in turn, so that a thread reads two streams
 * (x16_single_column_pairs_<name>: how many panels it did; each panel keeps its own sums, so
 * the same bits).  Intel Xeon (AMX), 14336 x 4096 out of cache through QMatrix, builds
 * alternating, 2 / 1 threads: q4_K 27.3-29.9 -> 30.8-33.7 / 14.5-15.3 -> 15.2-17.3 GB/s, q5_K
 * 27.3-28.8 -> 29.2-33.6 / 14.5-15.4 -> 16.2-17.7, q6_K 27.6-28.7 -> 28.8-29.8 / 14.3-15.1 ->
 * 15.0-15.2, iq4_xs even; the same code one panel at a time ran as before.  In cache even (q4_K
 * 1 thread 0.34-0.35 -> 0.35-0.36 ms).  A C read loop read two 4 KiB-chunk streams 5-12%
 * faster than one with the two hints a line, even without them (benches/RESULTS.md, 36th
 * session). */
#define QGEMV_DEFINE_X16_PASS_OF_SUPERBLOCK(name)                                                \
    QGEMV_ALWAYS_INLINE void x16_pass_##name(int64_t nb, const block_##name##x16 *p, const uint8_t *a, \
                                             int64_t act_stride, const int CB, const int hints, float *out, \
                                             int64_t out_stride) {                              \
        const block_q8_K *y[QGEMV_X16_COLS];                                                    \
        x16_acc acc;                                                                            \
        x16_columns(a, act_stride, CB, y, acc);                                                 \
        for (int64_t ib = 0; ib < nb; ib++) x16_superblock_##name(p + ib, NULL, y, ib, CB, hints, acc); \
        x16_store(acc, CB, out, out_stride);                                                    \
    }                                                                                           \
    QGEMV_ALWAYS_INLINE int64_t x16_pairs_run_##name(int64_t n, const void *panels, int64_t panel_stride, \
                                                     int64_t npanels, const void *a, float *out, int64_t out_stride, \
                                                     const int hints) {                         \
        const int64_t nb = n / QK_K;                                                            \
        int64_t i = 0;                                                                          \
        for (; i + 2 <= npanels; i += 2) {                                                      \
            const block_##name##x16 *p0 = (const block_##name##x16 *)((const uint8_t *)panels + i * panel_stride); \
            const block_##name##x16 *p1 = (const block_##name##x16 *)((const uint8_t *)panels + (i + 1) * panel_stride); \
            const block_q8_K *y[QGEMV_X16_COLS];                                                \
            x16_acc acc0, acc1;                                                                 \
            x16_columns((const uint8_t *)a, 0, 1, y, acc0);                                     \
            x16_columns((const uint8_t *)a, 0, 1, y, acc1);                                     \
            for (int64_t ib = 0; ib < nb; ib++) {                                               \
                x16_superblock_##name(p0 + ib, NULL, y, ib, 1, hints ? X16_PAIRED_HINTS : 0, acc0); \
                x16_superblock_##name(p1 + ib, NULL, y, ib, 1, hints ? X16_PAIRED_HINTS : 0, acc1); \
            }                                                                                   \
            x16_store(acc0, 1, out + 16 * i * out_stride, out_stride);                          \
            x16_store(acc1, 1, out + 16 * (i + 1) * out_stride, out_stride);                    \
        }                                                                                       \
        return i;                                                                               \
    }                                                                                           \
    static int64_t x16_single_column_pairs_##name(int64_t n, const void *panels, int64_t panel_stride, \
                                                  int64_t npanels, const void *a, float *out, int64_t out_stride) { \
        return qgemv_prefetch_one_column ? x16_pairs_run_##name(n, panels, panel_stride, npanels, a, out, out_stride, 1) \
                                         : x16_pairs_run_##name(n, panels, panel_stride, npanels, a, out, out_stride, 0); \
    }

#if defined(QGEMV_AVX512)
/* out[r * out_stride + j] = lane r of acc[j]: a pass's 16 rows x CB columns */
static inline void x16_store_512(const __m512 *acc, int CB, float *out, int64_t out_stride) {
    for (int j = 0; j < CB; j++) {
        float o[16];
        _mm512_storeu_ps(o, acc[j]);
        for (int r = 0; r < 16; r++) out[r * out_stride + j] = o[r];
    }
}
/* a panel block's 16 f16 factors (d or dmin) as float32, lane r: row r's */
static inline __m512 x16_factors(const qgemv_half *f) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)f));
}
/* 16 rows' bytes a[r], b[r] as int16 pairs (a[r], b[r]), one per int32 lane: vpdpwssd's operand */
static inline __m512i x16_pairs16_u8(__m128i a, __m128i b) {
    return _mm512_cvtepu8_epi16(_mm256_set_m128i(_mm_unpackhi_epi8(a, b), _mm_unpacklo_epi8(a, b)));
}
static inline __m512i x16_pairs16_i8(__m128i a, __m128i b) {
    return _mm512_cvtepi8_epi16(_mm256_set_m128i(_mm_unpackhi_epi8(a, b), _mm_unpacklo_epi8(a, b)));
}
/* per lane sum_i pairs[i] . (the int16 pair at words + 4 i): the rows' scale or minimum pairs
 * against a column's bsums (exact int32) */
static inline __m512i x16_dot_pairs(const __m512i *pairs, int n, const void *words) {
    __m512i s = _mm512_setzero_si512();
    for (int i = 0; i < n; i++)
        s = _mm512_dpwssd_epi32(s, pairs[i], _mm512_set1_epi32((int)qgemv_k_word((const uint8_t *)words + 4 * i)));
    return s;
}
/* lane r: the int16 pairs (m_r,2k, m_r,2k+1) of 16 rows' minimums (bytes mn[16 s + r], s < 2 n) */
static inline void x16_min_pairs(const uint8_t *mn, int n, __m512i *mpair) {
    for (int k = 0; k < n; k++)
        mpair[k] = x16_pairs16_u8(_mm_loadu_si128((const __m128i *)(mn + 32 * k)),
                                  _mm_loadu_si128((const __m128i *)(mn + 32 * k + 16)));
}
/* q2_K's minimums, the high nibbles of its 16 scale bytes a row, as x16_min_pairs' 8 pairs */
static inline void x16_min_pairs_q2_K(const uint8_t scales[256], __m512i mpair[8]) {
    const __m128i low4 = _mm_set1_epi8(0x0f);
    for (int i = 0; i < 8; i++) {
        const __m128i m0 = _mm_and_si128(_mm_srli_epi16(_mm_loadu_si128((const __m128i *)(scales + 32 * i)), 4), low4);
        const __m128i m1 = _mm_and_si128(_mm_srli_epi16(_mm_loadu_si128((const __m128i *)(scales + 32 * i + 16)), 4), low4);
        mpair[i] = x16_pairs16_u8(m0, m1);
    }
}
/* where a column's sub-block chains start, for levels stored as u = q + 2^shift: start[s] =
 * -2^shift bsum_s, so a chain of vpdpbusd ends at sum_{i in s} u_i p_i - 2^shift bsum_s = sum q p,
 * the offset gone without an instruction per row; s over 16-value sub-blocks (q3_K, q6_K) or,
 * with pairs, over 32-value ones (iq4_xs) */
QGEMV_ALWAYS_INLINE void x16_chain_starts(const block_q8_K *const *y, int64_t ib, const int CB, const int shift,
                                          const int pairs, int32_t start[][16]) {
    for (int j = 0; j < CB; j++) {
        if (pairs) {
            _mm256_storeu_si256((__m256i *)start[j], x16_pair_starts(&y[j][ib], shift));
        } else {
            const __m512i bs = _mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)y[j][ib].bsums));
            _mm512_storeu_si512((void *)start[j], _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(bs, shift)));
        }
    }
}
static inline void x16_columns_512(const uint8_t *a, int64_t act_stride, int CB, const block_q8_K **y, __m512 *acc) {
    for (int j = 0; j < CB; j++) {
        y[j] = (const block_q8_K *)(a + j * act_stride);
        acc[j] = _mm512_setzero_ps();
    }
}
/* a pass's accumulators (QGEMV_DEFINE_X16_PASS_OF_SUPERBLOCK): column j's 16 rows in acc[j] */
typedef __m512 x16_acc[QGEMV_X16_COLS];
#define x16_columns x16_columns_512
#define x16_store x16_store_512
/* acc[j] = fma(d d_y, isum[j], acc[j]), every format's first fma, on 16 rows; x16_fold_min_512
 * then fma(-(dmin d_y), msum[j], acc[j]) */
static inline void x16_fold_512(__m512 *acc, __m512 d, const block_q8_K *const *y, int64_t ib, const __m512i *isum,
                                int CB) {
    for (int j = 0; j < CB; j++)
        acc[j] = _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(y[j][ib].d)), _mm512_cvtepi32_ps(isum[j]), acc[j]);
}
static inline void x16_fold_min_512(__m512 *acc, __m512 dmin, const block_q8_K *const *y, int64_t ib,
                                    const __m512i *msum, int CB) {
    for (int j = 0; j < CB; j++)
        acc[j] = _mm512_fnmadd_ps(_mm512_mul_ps(dmin, _mm512_set1_ps(y[j][ib].d)), _mm512_cvtepi32_ps(msum[j]), acc[j]);
}
/* a q4_K / q5_K pass's step k of values 64 c ..: the levels of sub-block 2 c + half (the low
 * nibbles of the 64-byte group, half 0, or the high ones), for halves h0 .. h0 + nh - 1, plus
 * q5_K's 5th bit (qh: bit 2 c of byte 4 k + i is value 64 c + 4 k + i's, bit 2 c + 1 that of 32
 * more; qh NULL for q4_K), against the CB columns' 4 activations: t[hh][j] += their products */
QGEMV_ALWAYS_INLINE void x16_k45_step(const uint8_t *qs, const uint8_t *qh, const int c, const int k, const int h0,
                                      const int nh, const block_q8_K *const *y, int64_t ib, const int CB, const int hints,
                                      __m512i t[2][QGEMV_X16_COLS]) {
    if (!h0) QGEMV_PREFETCH_PASS_LINE_IF(hints, qs + 64 * (8 * c + k), CB);   /* once a line */
    const __m512i v = _mm512_loadu_si512((const void *)(qs + 64 * (8 * c + k)));
    const __m512i hv = qh ? _mm512_loadu_si512((const void *)(qh + 64 * k)) : _mm512_setzero_si512();
    const __m512i h = nh == 2 ? _mm512_srli_epi32(hv, 2 * c) : hv;
    for (int hh = 0; hh < nh; hh++) {
        const int half = h0 + hh;
        __m512i u = _mm512_and_si512(half ? _mm512_srli_epi32(v, 4) : v, _mm512_set1_epi8(0x0f));
        /* one half: bit 2 c + half of each byte to bit 4 in one shift (the bits stay in their
         * bytes); both: bit half of h to bit 4 */
        const int sh = nh == 2 ? 4 - half : 4 - 2 * c - half;
        if (qh) u = _mm512_ternarylogic_epi32(u, sh >= 0 ? _mm512_slli_epi32(h, sh) : _mm512_srli_epi32(h, -sh),
                                              _mm512_set1_epi8(0x10), 0xf8);   /* u | (h & 0x10) */
        for (int j = 0; j < CB; j++) {
            const uint8_t *q = (const uint8_t *)y[j][ib].qs + 64 * c + 32 * half + 4 * k;
            t[hh][j] = qgemv_dpbusd_bcst_512(t[hh][j], u, q);
        }
    }
}
/* isum[j] += t[j] times the 16 rows' scales of a sub-block (bytes at sc) */
QGEMV_ALWAYS_INLINE void x16_k45_scale(const uint8_t *sc, const __m512i *t, const int CB, __m512i *isum) {
    const __m512i s = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)sc));
    for (int j = 0; j < CB; j++) isum[j] = _mm512_add_epi32(isum[j], _mm512_mullo_epi32(t[j], s));
}
/* q4_K / q5_K super-block b against CB <= 8 columns (y[j]'s block ib) into acc[j] (dec unused:
 * q5_K's wide passes decode on their own) */
#define QGEMV_DEFINE_X16_SUPERBLOCK_K45(name, HIGH_BIT)                                         \
    QGEMV_ALWAYS_INLINE void x16_superblock_##name(const block_##name##x16 *b, const void *dec, \
                                                   const block_q8_K *const *y, int64_t ib, const int CB, const int hints, \
                                                   __m512 *acc) {                               \
        (void)dec;                                                                              \
        uint8_t sc[128], mn[128];                                                               \
        x16_scales_mins(b->scales, sc, mn);                                                     \
        __m512i isum[QGEMV_X16_COLS], msum[QGEMV_X16_COLS];                                     \
        __m512i mpair[4];                                                                       \
        x16_min_pairs(mn, 4, mpair);                                                            \
        for (int j = 0; j < CB; j++) {                                                          \
            uint8_t bp[16];   /* the column's 32-value sums, in int16 pairs */                  \
            _mm_storeu_si128((__m128i *)bp, x16_bsum_pairs(&y[j][ib]));                         \
            msum[j] = x16_dot_pairs(mpair, 4, bp);                                              \
        }                                                                                       \
        for (int j = 0; j < CB; j++) isum[j] = _mm512_setzero_si512();                          \
        /* values 64 c ..: sub-block 2 c (the low nibbles) and 2 c + 1 (the high), the 8        \
         * steps unrolled.  Up to 4 columns take both in one sweep; 8 take one at a time,       \
         * their 8 sums in 8 registers (both at once, beside the totals and the minimums'       \
         * sums, took more than the 32 registers: GCC spilled sums to the stack and copied      \
         * the rest every step; q4_K batch 8 and 32 11-19% faster, q5_K 6-11%).  The            \
         * minimums' sums come first: formed after the loop, q5_K's GEMV ran 1.3x slower */     \
        const int nh = CB > 4 ? 1 : 2;                                                          \
        for (int c = 0; c < 4; c++)                                                             \
            for (int h0 = 0; h0 < 2; h0 += nh) {                                                \
                __m512i t[2][QGEMV_X16_COLS];                                                   \
                for (int hh = 0; hh < nh; hh++)                                                 \
                    for (int j = 0; j < CB; j++) t[hh][j] = _mm512_setzero_si512();             \
                _Pragma("GCC unroll 8")                                                         \
                for (int k = 0; k < 8; k++) x16_k45_step(b->qs, HIGH_BIT(b->qh +) 0, c, k, h0, nh, y, ib, CB, hints, t); \
                for (int hh = 0; hh < nh; hh++) x16_k45_scale(sc + 32 * c + 16 * (h0 + hh), t[hh], CB, isum); \
            }                                                                                   \
        const __m512 d = x16_factors(b->d);                                                     \
        const __m512 dmin = x16_factors(b->dmin);                                               \
        x16_fold_512(acc, d, y, ib, isum, CB);                                                  \
        x16_fold_min_512(acc, dmin, y, ib, msum, CB);                                           \
    }
QGEMV_DEFINE_X16_SUPERBLOCK_K45(q4_K, QGEMV_K_NO_HIGH_BIT)
QGEMV_DEFINE_X16_SUPERBLOCK_K45(q5_K, QGEMV_K_HIGH_BIT)
QGEMV_DEFINE_X16_PASS_OF_SUPERBLOCK(q4_K)
QGEMV_DEFINE_X16_PASS_OF_SUPERBLOCK(q5_K)

/* Batches of 9 to 32 columns (QGEMV_X16_WIDE_COLS) of q5_K decode each super-block's levels once
 * for all their passes of 8 columns: the 64 vectors of a panel block's levels (sub-block 2 c +
 * half, group k: x16_k45_step's u) go to memory once, and each pass reads them from L1 (a load
 * where the fifth bit took 4-5 instructions), its accumulators kept in memory between super-
 * blocks.  Every column's integer sums and fmas are the pass's: the same bits.  C harness, Intel
 * Xeon (AMX), 4096 x 4096: batch 32 1 thread 3.63 -> 3.00 ms, 2 threads 1.76 -> 1.47, 2.44 ->
 * 2.21; 16 and 9 1.07-1.10x.  q4_K's nibbles take one or two instructions: it ran even or
 * slower that way (batch 32 2.85 -> 2.90 ms, 9 0.96 -> 1.09) and keeps its passes. */
#define QGEMV_X16_WIDE_COLS 32
/* q5_K's levels of sub-block 2 c + half, group k of a panel block (x16_k45_step's u, one half) */
QGEMV_ALWAYS_INLINE __m512i x16_k45_levels(const uint8_t *qs, const uint8_t *qh, const int c, const int k,
                                           const int half) {
    const __m512i v = _mm512_loadu_si512((const void *)(qs + 64 * (8 * c + k)));
    const __m512i u = _mm512_and_si512(half ? _mm512_srli_epi32(v, 4) : v, _mm512_set1_epi8(0x0f));
    const __m512i h = _mm512_loadu_si512((const void *)(qh + 64 * k));
    const int sh = 4 - 2 * c - half;   /* bit 2 c + half of each byte to bit 4 */
    return _mm512_ternarylogic_epi32(u, sh >= 0 ? _mm512_slli_epi32(h, sh) : _mm512_srli_epi32(h, -sh),
                                     _mm512_set1_epi8(0x10), 0xf8);   /* u | (h & 0x10) */
}
/* a q5_K super-block decoded for a wide pass: its levels u[c][half][k] (sub-block 2 c + half,
 * group k), scales, minimums' pairs and factors */
typedef struct {
    __m512i u[4][2][8];
    __m512i mpair[4];   /* lane r: int16 (m_r,2k, m_r,2k+1) */
    uint8_t sc[128], mn[128];
    __m512 d, dmin;
} x16_decoded_q5_K;
QGEMV_ALWAYS_INLINE void x16_decode_q5_K(const block_q5_Kx16 *b, const int W, x16_decoded_q5_K *dec) {
    x16_scales_mins(b->scales, dec->sc, dec->mn);
    x16_min_pairs(dec->mn, 4, dec->mpair);
    for (int c = 0; c < 4; c++)
        for (int k = 0; k < 8; k++) {
            QGEMV_PREFETCH_PASS_LINE(b->qs + 64 * (8 * c + k), W);
            for (int half = 0; half < 2; half++) dec->u[c][half][k] = x16_k45_levels(b->qs, b->qh, c, k, half);
        }
    dec->d = x16_factors(b->d);
    dec->dmin = x16_factors(b->dmin);
}
/* one pass of a decoded super-block ib against CB <= 8 columns (y[j]): acc[j] (in memory) gets
 * the pass's two fmas */
QGEMV_ALWAYS_INLINE void x16_wide_group_q5_K(const x16_decoded_q5_K *dec, const block_q8_K *const *y, int64_t ib,
                                             const int CB, __m512 *acc) {
    __m512i isum[QGEMV_X16_COLS], msum[QGEMV_X16_COLS];
    for (int j = 0; j < CB; j++) {
        uint8_t bp[16];   /* the column's 32-value sums, in int16 pairs */
        _mm_storeu_si128((__m128i *)bp, x16_bsum_pairs(&y[j][ib]));
        msum[j] = x16_dot_pairs(dec->mpair, 4, bp);
        isum[j] = _mm512_setzero_si512();
    }
    for (int c = 0; c < 4; c++)
        for (int half = 0; half < 2; half++) {
            __m512i t[QGEMV_X16_COLS];
            for (int j = 0; j < CB; j++) t[j] = _mm512_setzero_si512();
            _Pragma("GCC unroll 8")
            for (int k = 0; k < 8; k++)
                for (int j = 0; j < CB; j++)
                    t[j] = qgemv_dpbusd_bcst_512(t[j], dec->u[c][half][k], (const uint8_t *)y[j][ib].qs + 64 * c + 32 * half + 4 * k);
            x16_k45_scale(dec->sc + 32 * c + 16 * half, t, CB, isum);
        }
    x16_fold_512(acc, dec->d, y, ib, isum, CB);
    x16_fold_min_512(acc, dec->dmin, y, ib, msum, CB);
}

/* q6_K: levels u = q + 32 in [0, 63] (a nibble of ql below 2 bits of qh), 4 groups per 16-value
 * sub-block, whose chains start at -32 bsum_s (x16_chain_starts; the offset's 8 vpdpwssd per
 * super-block and column before: C harness, 4096 x 4096, 1 thread, batch 8 1.06x, 32 1.03x, 1
 * and 2 1.02x), times the rows' scales (vpmulld: |sum q p| up to 16 32 128, no int16 pairs), then
 * one fma */
/* the levels of group k of half h (values 128 h + 4 k .. and 64 more): u0 from the low nibbles,
 * u1 from the high ones, qh bits 0-1 (k < 8) or 2-3 above the low nibble, bits 4-5 or 6-7 above
 * the high */
QGEMV_ALWAYS_INLINE void x16_levels_q6_K(const block_q6_Kx16 *b, const int h, const int k, __m512i *u0,
                                         __m512i *u1) {
    const __m512i low4 = _mm512_set1_epi8(0x0f), bits45 = _mm512_set1_epi8(0x30);
    const __m512i l = _mm512_loadu_si512((const void *)x16_ql_q6_K(b, 16 * h + k));
    const __m512i q = _mm512_loadu_si512((const void *)x16_qh_q6_K(b, h, k % 8));
    *u0 = _mm512_or_si512(_mm512_and_si512(l, low4), _mm512_and_si512(_mm512_slli_epi32(q, k < 8 ? 4 : 2), bits45));
    *u1 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(l, 4), low4),
                          _mm512_and_si512(k < 8 ? q : _mm512_srli_epi32(q, 2), bits45));
}
/* q6_K's batches of 9-32 columns as q5_K's (above): a super-block's levels decoded once
 * (x16_decode_q6_K), each pass of 8 columns the same sums from them.  C harness, Intel Xeon
 * (AMX), 4096 x 4096: batch 32 1 thread 3.68-3.72 -> 3.20-3.30 ms, 2 threads 1.82-2.01 ->
 * 1.56-1.67; 16 and 9 1.00-1.14x; 8 and under the passes, unchanged. */
typedef struct {
    const block_q6_Kx16 *b;
    __m512i u[2][16][2];   /* group k of half h: from the low nibbles, the high */
} x16_decoded_q6_K;
QGEMV_ALWAYS_INLINE void x16_decode_q6_K(const block_q6_Kx16 *b, const int W, x16_decoded_q6_K *dec) {
    dec->b = b;
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < 16; k++) {
            QGEMV_PREFETCH_PASS_LINE(x16_ql_q6_K(b, 16 * h + k), W);
            if (k < 8) QGEMV_PREFETCH_PASS_LINE(x16_qh_q6_K(b, h, k), W);
            x16_levels_q6_K(b, h, k, &dec->u[h][k][0], &dec->u[h][k][1]);
        }
}
/* super-block b against CB <= 8 columns (y[j]'s block ib) into acc[j]: its levels from dec (a
 * wide pass's, decoded once) or, dec NULL (a pass's: a constant), decoded here as they are met */
QGEMV_ALWAYS_INLINE void x16_superblock_q6_K(const block_q6_Kx16 *b, const x16_decoded_q6_K *dec,
                                             const block_q8_K *const *y, int64_t ib, const int CB, const int hints,
                                             __m512 *acc) {
    __m512i isum[QGEMV_X16_COLS];
    int32_t start[QGEMV_X16_COLS][16];
    x16_chain_starts(y, ib, CB, 5, 0, start);
    for (int j = 0; j < CB; j++) isum[j] = _mm512_setzero_si512();
    for (int h = 0; h < 2; h++)
        for (int s = 0; s < 4; s++) {   /* sub-blocks 8 h + s (low nibbles) and 8 h + 4 + s (high) */
            __m512i t0[QGEMV_X16_COLS], t1[QGEMV_X16_COLS];
            for (int j = 0; j < CB; j++) {
                t0[j] = _mm512_set1_epi32(start[j][8 * h + s]);
                t1[j] = _mm512_set1_epi32(start[j][8 * h + 4 + s]);
            }
            /* unrolled: rolled, GCC copied the 16 sums from register to register every step
             * (batch 32 1.3x slower, batch 8 1.14x) */
            _Pragma("GCC unroll 4")
            for (int kk = 0; kk < 4; kk++) {
                const int k = 4 * s + kk, g = 16 * h + k;   /* values 128 h + 4 k .., 64 more */
                __m512i u0, u1;
                if (dec) {
                    u0 = dec->u[h][k][0];
                    u1 = dec->u[h][k][1];
                } else {
                    QGEMV_PREFETCH_PASS_LINE_IF(hints, x16_ql_q6_K(b, g), CB);
                    if (k < 8) QGEMV_PREFETCH_PASS_LINE_IF(hints, x16_qh_q6_K(b, h, k), CB);
                    x16_levels_q6_K(b, h, k, &u0, &u1);
                }
                for (int j = 0; j < CB; j++) {
                    const uint8_t *x = (const uint8_t *)y[j][ib].qs + 128 * h + 4 * k;
                    t0[j] = qgemv_dpbusd_bcst_512(t0[j], u0, x);
                    t1[j] = qgemv_dpbusd_bcst_512(t1[j], u1, x + 64);
                }
            }
            const __m512i s0 = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(b->scales + 16 * (8 * h + s))));
            const __m512i s1 = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(b->scales + 16 * (8 * h + 4 + s))));
            for (int j = 0; j < CB; j++)
                isum[j] = _mm512_add_epi32(isum[j], _mm512_add_epi32(_mm512_mullo_epi32(t0[j], s0),
                                                                     _mm512_mullo_epi32(t1[j], s1)));
        }
    x16_fold_512(acc, x16_factors(b->d), y, ib, isum, CB);
}
/* a wide pass's group of a format whose super-block kernel x16_superblock_<name> reads its
 * levels either decoded (dec) or from the panel (dec NULL) */
#define QGEMV_DEFINE_X16_PASSES_OF_SUPERBLOCK(name)                                              \
    QGEMV_DEFINE_X16_PASS_OF_SUPERBLOCK(name)                                                    \
    QGEMV_ALWAYS_INLINE void x16_wide_group_##name(const x16_decoded_##name *dec, const block_q8_K *const *y, \
                                                   int64_t ib, const int CB, __m512 *acc) {     \
        x16_superblock_##name(dec->b, dec, y, ib, CB, 1, acc);                                  \
    }
QGEMV_DEFINE_X16_PASSES_OF_SUPERBLOCK(q6_K)
/* q2_K: levels in 2-bit fields (bits 2 f, 2 f + 1 of qs group g: values 128 (g / 8) + 32 f +
 * 4 (g % 8) ..), 4 groups per 16-value sub-block, times the rows' 4-bit scales; the minimums'
 * sum m bsum through vpdpwssd of the rows' minimum pairs against the column's 16-value bsums;
 * then two fmas as q4_K's.  The scales: up to 3 columns a pass, each sub-block's 4 vpdpbusd
 * sums times them (vpmulld); from 4 columns on, in the levels themselves, sc q <= 45 a byte, by
 * vpshufb from a table per sub-block (x16_scaled_levels_q2_K), so the sub-blocks' vpdpbusd run
 * into isum directly: the same exact integer, no vpmulld, no add.  C harness, 4096 x 4096, 1
 * thread, vpmulld / table: batch 4 0.507 / 0.477 ms, 8 0.94 / 0.84, 16 1.87-1.94 / 1.68-1.72,
 * 32 3.79-3.84 / 3.39-3.54; the table's decode costs more than the vpmulld it saves below 4
 * (batch 1 0.205 / 0.324, 2 0.299 / 0.361). */
enum { QGEMV_Q2_K_TABLE_COLS = 4 };
/* lane L, byte 4 j + q of the table: row 4 L + j's 4-bit scale (16 bytes at scales, row r's
 * at byte r) times q, for q < 4 */
static inline __m512i x16_scale_table_q2_K(const uint8_t *scales) {
    const __m512i row_of_byte = _mm512_set_epi8(15, 15, 15, 15, 14, 14, 14, 14, 13, 13, 13, 13, 12, 12, 12, 12,
                                                11, 11, 11, 11, 10, 10, 10, 10, 9, 9, 9, 9, 8, 8, 8, 8,
                                                7, 7, 7, 7, 6, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4,
                                                3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    const __m512i sc = _mm512_and_si512(_mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)scales)),
                                                            row_of_byte), _mm512_set1_epi8(0x0f));
    /* sc q = (q & 1) sc + (q & 2) sc: bytes q = 1, 3 take sc, bytes q = 2, 3 take 2 sc */
    return _mm512_add_epi8(_mm512_and_si512(sc, _mm512_set1_epi32((int)0xff00ff00u)),
                           _mm512_and_si512(_mm512_add_epi8(sc, sc), _mm512_set1_epi32((int)0xffff0000u)));
}
/* the 16 rows' levels u (4 a row in lane L's bytes 4 j ..: row 4 L + j's) times their scales:
 * table[4 j + u] within each 128-bit lane */
static inline __m512i x16_scaled_levels_q2_K(__m512i table, __m512i u) {
    const __m512i four_j = _mm512_set_epi32(0x0c0c0c0c, 0x08080808, 0x04040404, 0, 0x0c0c0c0c, 0x08080808, 0x04040404, 0,
                                            0x0c0c0c0c, 0x08080808, 0x04040404, 0, 0x0c0c0c0c, 0x08080808, 0x04040404, 0);
    return _mm512_shuffle_epi8(table, _mm512_or_si512(u, four_j));
}
QGEMV_ALWAYS_INLINE void x16_pass_q2_K(int64_t nb, const block_q2_Kx16 *p, const uint8_t *a, int64_t act_stride,
                                       const int CB, const int hints, float *out, int64_t out_stride) {
    const __m512i low2 = _mm512_set1_epi8(3);
    const block_q8_K *y[QGEMV_X16_COLS];
    __m512 acc[QGEMV_X16_COLS];
    x16_columns_512(a, act_stride, CB, y, acc);
    for (int64_t ib = 0; ib < nb; ib++) {
        const block_q2_Kx16 *b = p + ib;
        x16_hint_lines(b->qs, 16, CB, hints);
        __m512i isum[QGEMV_X16_COLS], msum[QGEMV_X16_COLS];
        {
            __m512i mpair[8];
            x16_min_pairs_q2_K(b->scales, mpair);
            for (int j = 0; j < CB; j++) {
                isum[j] = _mm512_setzero_si512();
                msum[j] = x16_dot_pairs(mpair, 8, y[j][ib].bsums);
            }
        }
        for (int h = 0; h < 2; h++)
            for (int f = 0; f < 4; f++)
                for (int gg = 0; gg < 2; gg++) {   /* sub-block 8 h + 2 f + gg: groups 8 h + 4 gg .. + 3 */
                    const uint8_t *scales = b->scales + 16 * (8 * h + 2 * f + gg);
                    const int scaled = CB >= QGEMV_Q2_K_TABLE_COLS;   /* a constant per pass */
                    const __m512i table = scaled ? x16_scale_table_q2_K(scales) : _mm512_setzero_si512();
                    __m512i t[QGEMV_X16_COLS];
                    for (int j = 0; j < CB; j++) t[j] = _mm512_setzero_si512();
                    for (int kk = 0; kk < 4; kk++) {
                        const int g = 8 * h + 4 * gg + kk;
                        const __m512i v = _mm512_loadu_si512((const void *)(b->qs + 64 * g));
                        const __m512i u = _mm512_and_si512(f ? _mm512_srli_epi32(v, 2 * f) : v, low2);
                        const __m512i w = scaled ? x16_scaled_levels_q2_K(table, u) : u;
                        for (int j = 0; j < CB; j++) {
                            const uint8_t *x = (const uint8_t *)y[j][ib].qs + 128 * h + 32 * f + 4 * (4 * gg + kk);
                            if (scaled) isum[j] = qgemv_dpbusd_bcst_512(isum[j], w, x);
                            else t[j] = qgemv_dpbusd_bcst_512(t[j], w, x);
                        }
                    }
                    if (!scaled) {
                        const __m512i sc = _mm512_and_si512(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)scales)),
                                                            _mm512_set1_epi32(0x0f));
                        for (int j = 0; j < CB; j++) isum[j] = _mm512_add_epi32(isum[j], _mm512_mullo_epi32(t[j], sc));
                    }
                }
        const __m512 d = x16_factors(b->d);
        const __m512 dmin = x16_factors(b->dmin);
        x16_fold_512(acc, d, y, ib, isum, CB);
        x16_fold_min_512(acc, dmin, y, ib, msum, CB);
    }
    x16_store_512(acc, CB, out, out_stride);
}
/* q2_K's batches of 13-32 columns as q5_K's: a super-block's levels, each times its scale by
 * the table (x16_scaled_levels_q2_K, whatever the pass's width), and its minimums' pairs made
 * once, each pass of 8 columns summing straight into isum.  C harness, Intel Xeon (AMX), 4096 x
 * 4096, 1 thread: batch 32 2.91-3.08 -> 2.32-2.35 ms, 16 1.57 -> 1.28-1.41, 13 1.36 -> 1.18;
 * 12 even, 9 slower (1.00 -> 1.09-1.14: a pass of 8 and one of a single column, which takes no
 * table), so from 13 on. */
typedef struct {
    __m512i w[2][4][2][4];   /* sub-block 8 h + 2 f + gg, group kk: levels times their scales */
    __m512i mpair[8];        /* lane r: int16 (m_r,2i, m_r,2i+1), the scales' high nibbles */
    __m512 d, dmin;
} x16_decoded_q2_K;
QGEMV_ALWAYS_INLINE void x16_decode_q2_K(const block_q2_Kx16 *b, const int W, x16_decoded_q2_K *dec) {
    const __m512i low2 = _mm512_set1_epi8(3);
    x16_min_pairs_q2_K(b->scales, dec->mpair);
    for (int h = 0; h < 2; h++)
        for (int f = 0; f < 4; f++)
            for (int gg = 0; gg < 2; gg++) {
                const __m512i table = x16_scale_table_q2_K(b->scales + 16 * (8 * h + 2 * f + gg));
                for (int kk = 0; kk < 4; kk++) {
                    const int g = 8 * h + 4 * gg + kk;
                    if (f == 0) QGEMV_PREFETCH_PASS_LINE(b->qs + 64 * g, W);
                    const __m512i v = _mm512_loadu_si512((const void *)(b->qs + 64 * g));
                    dec->w[h][f][gg][kk] = x16_scaled_levels_q2_K(table, _mm512_and_si512(f ? _mm512_srli_epi32(v, 2 * f) : v, low2));
                }
            }
    dec->d = x16_factors(b->d);
    dec->dmin = x16_factors(b->dmin);
}
QGEMV_ALWAYS_INLINE void x16_wide_group_q2_K(const x16_decoded_q2_K *dec, const block_q8_K *const *y, int64_t ib,
                                             const int CB, __m512 *acc) {
    __m512i isum[QGEMV_X16_COLS], msum[QGEMV_X16_COLS];
    for (int j = 0; j < CB; j++) {
        isum[j] = _mm512_setzero_si512();
        msum[j] = x16_dot_pairs(dec->mpair, 8, y[j][ib].bsums);
    }
    for (int h = 0; h < 2; h++)
        for (int f = 0; f < 4; f++)
            for (int gg = 0; gg < 2; gg++)
                for (int kk = 0; kk < 4; kk++)
                    for (int j = 0; j < CB; j++) {
                        const uint8_t *x = (const uint8_t *)y[j][ib].qs + 128 * h + 32 * f + 4 * (4 * gg + kk);
                        isum[j] = qgemv_dpbusd_bcst_512(isum[j], dec->w[h][f][gg][kk], x);
                    }
    x16_fold_512(acc, dec->d, y, ib, isum, CB);
    x16_fold_min_512(acc, dec->dmin, y, ib, msum, CB);
}

/* q3_K: levels u = q + 4 in [0, 7] (2 bits of qs below a bit of hmask: value 128 h + 32 f + l takes
 * bit 4 h + f of hmask byte l), 4 groups per 16-value sub-block.  A sub-block's vpdpbusd chain
 * starts at the column's -4 bsum_s, so it ends at t_s = sum q a exactly (|t_s| <= 16 4 128 <
 * 2^15); two sub-blocks' t_s as an int16 pair per lane meet the rows' scale pair in one vpdpwssd:
 *     isum_r = sum_s sc_rs t_s = sum_s sc_rs sum u a - 4 sum_s sc_rs bsum_s,
 * the same integer as 16 vpmulld and 8 vpdpwssd for the offset per super-block and column did
 * (C harness, 4096 x 4096, 1 thread: batch 1 1.25x, 2 1.17x, 8 1.09x, 32 1.07-1.08x); then one fma */
/* the levels of field f of qs group 8 h + m with their hmask bit (bit 4 h + f of hmask group m) */
QGEMV_ALWAYS_INLINE __m512i x16_levels_q3_K(const block_q3_Kx16 *b, const int h, const int f, const int m) {
    const __m512i low2 = _mm512_set1_epi8(3), bit2 = _mm512_set1_epi8(4);
    const __m512i v = _mm512_loadu_si512((const void *)(b->qs + 64 * (8 * h + m)));
    const __m512i hm = _mm512_loadu_si512((const void *)(b->hmask + 64 * m));
    return _mm512_or_si512(_mm512_and_si512(f ? _mm512_srli_epi32(v, 2 * f) : v, low2),
                           _mm512_and_si512(_mm512_slli_epi32(_mm512_srli_epi32(hm, 4 * h + f), 2), bit2));
}
/* q3_K's batches of 9-32 columns as q5_K's: a super-block's levels (6 instructions a vector)
 * and scales decoded once (x16_decode_q3_K), each pass of 8 columns the same sums from them.
 * C harness, Intel Xeon (AMX), 4096 x 4096, 1 thread: batch 32 3.40-3.83 -> 2.62-2.85 ms, 16
 * 1.72-2.07 -> 1.48-1.56, 9 1.30 -> 1.00-1.08; 8 and under the passes, unchanged. */
typedef struct {
    const block_q3_Kx16 *b;
    __m512i u[2][4][8];   /* field f of qs group 8 h + m with its hmask bit */
    int8_t sc[256];
} x16_decoded_q3_K;
QGEMV_ALWAYS_INLINE void x16_decode_q3_K(const block_q3_Kx16 *b, const int W, x16_decoded_q3_K *dec) {
    dec->b = b;
    x16_scales_q3_K(b->scales, dec->sc);
    for (int h = 0; h < 2; h++)
        for (int m = 0; m < 8; m++) {
            QGEMV_PREFETCH_PASS_LINE(b->qs + 64 * (8 * h + m), W);
            if (h == 0) QGEMV_PREFETCH_PASS_LINE(b->hmask + 64 * m, W);
            for (int f = 0; f < 4; f++) dec->u[h][f][m] = x16_levels_q3_K(b, h, f, m);
        }
}
/* super-block b against CB <= 8 columns into acc[j]: levels and scales from dec, or, dec NULL
 * (a pass's), decoded here (x16_superblock_q6_K's arrangement) */
QGEMV_ALWAYS_INLINE void x16_superblock_q3_K(const block_q3_Kx16 *b, const x16_decoded_q3_K *dec,
                                             const block_q8_K *const *y, int64_t ib, const int CB, const int hints,
                                             __m512 *acc) {
    int8_t own[256];
    const int8_t *sc = dec ? dec->sc : own;
    if (!dec) x16_scales_q3_K(b->scales, own);
    __m512i isum[QGEMV_X16_COLS];
    int32_t start[QGEMV_X16_COLS][16];
    x16_chain_starts(y, ib, CB, 2, 0, start);
    for (int j = 0; j < CB; j++) isum[j] = _mm512_setzero_si512();
    for (int h = 0; h < 2; h++)
        for (int f = 0; f < 4; f++) {   /* sub-blocks 8 h + 2 f + gg: qs groups 8 h + 4 gg .. + 3 */
            __m512i t[2][QGEMV_X16_COLS];
            _Pragma("GCC unroll 2")
            for (int gg = 0; gg < 2; gg++) {
                for (int j = 0; j < CB; j++) t[gg][j] = _mm512_set1_epi32(start[j][8 * h + 2 * f + gg]);
                /* unrolled as q6_K's (even to 0.85x) */
                _Pragma("GCC unroll 4")
                for (int kk = 0; kk < 4; kk++) {
                    const int m = 4 * gg + kk, g = 8 * h + m;
                    if (!dec && f == 0) {
                        QGEMV_PREFETCH_PASS_LINE_IF(hints, b->qs + 64 * g, CB);
                        if (h == 0) QGEMV_PREFETCH_PASS_LINE_IF(hints, b->hmask + 64 * m, CB);
                    }
                    const __m512i u = dec ? dec->u[h][f][m] : x16_levels_q3_K(b, h, f, m);
                    for (int j = 0; j < CB; j++) {
                        const uint8_t *x = (const uint8_t *)y[j][ib].qs + 128 * h + 32 * f + 4 * m;
                        t[gg][j] = qgemv_dpbusd_bcst_512(t[gg][j], u, x);
                    }
                }
            }
            /* lane r: the int16 pair (t_2i, t_2i+1) against (sc_r,2i, sc_r,2i+1), i = 4 h + f */
            const __m512i sp = x16_pairs16_i8(_mm_loadu_si128((const __m128i *)(sc + 32 * (4 * h + f))),
                                              _mm_loadu_si128((const __m128i *)(sc + 32 * (4 * h + f) + 16)));
            for (int j = 0; j < CB; j++)
                isum[j] = _mm512_dpwssd_epi32(isum[j], _mm512_mask_mov_epi16(t[0][j], 0xaaaaaaaau, _mm512_slli_epi32(t[1][j], 16)), sp);
        }
    x16_fold_512(acc, x16_factors(b->d), y, ib, isum, CB);
}
QGEMV_DEFINE_X16_PASSES_OF_SUPERBLOCK(q3_K)

/* iq4_xs: levels kvalues_iq4nl[q] + 128 in [1, 241] (one vpshufb per nibble vector), 8 groups per
 * 32-value sub-block, whose chains start at -128 bsum_s (x16_chain_starts; the offset's 4
 * vpdpwssd per super-block and column before: C harness, 4096 x 4096, 1 thread, batch 1 1.20x,
 * 2 1.15x, 8 1.14x, 32 1.07-1.12x), each sub-block's sums times the rows' ls - 32 (vpmulld), then
 * one fma */
/* lane r: row r's ls - 32 of sub-block s, from its scales_l (sub-block s in bits 4 s .. 4 s + 3
 * of lane r of sl) and scales_h (bits 2 s, 2 s + 1 of lane r of sh) */
static inline __m512i x16_scale_iq4_xs(__m512i sl, __m512i sh, int s) {
    const __m512i low = _mm512_and_si512(_mm512_srli_epi32(sl, 4 * s), _mm512_set1_epi32(0x0f));
    const __m512i high = _mm512_and_si512(_mm512_srli_epi32(sh, 2 * s), _mm512_set1_epi32(3));
    return _mm512_sub_epi32(_mm512_or_si512(low, _mm512_slli_epi32(high, 4)), _mm512_set1_epi32(32));
}
/* iq4_xs super-block b against CB <= 8 columns into acc[j] (dec unused) */
QGEMV_ALWAYS_INLINE void x16_superblock_iq4_xs(const block_iq4_xsx16 *b, const void *dec, const block_q8_K *const *y,
                                               int64_t ib, const int CB, const int hints, __m512 *acc) {
    (void)dec;
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    const __m512i table = _mm512_broadcast_i32x4(kvalues_iq4nl_u8());
    /* lane r: row r's scales_l (sub-block s in bits 4 s .. 4 s + 3) and scales_h (bits 2 s, 2 s + 1) */
    const __m512i sl = _mm512_loadu_si512((const void *)b->scales_l);
    const __m512i sh = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)b->scales_h));
    __m512i isum[QGEMV_X16_COLS];
    int32_t start[QGEMV_X16_COLS][16];
    x16_chain_starts(y, ib, CB, 7, 1, start);
    for (int j = 0; j < CB; j++) isum[j] = _mm512_setzero_si512();
    for (int s = 0; s < 8; s++) {   /* sub-block s: qs groups 4 s .. 4 s + 3 */
        __m512i t[QGEMV_X16_COLS];
        for (int j = 0; j < CB; j++) t[j] = _mm512_set1_epi32(start[j][s]);
        for (int k = 0; k < 4; k++) {
            QGEMV_PREFETCH_COLS_LINE_IF(hints, b->qs + 64 * (4 * s + k), CB);
            const __m512i v = _mm512_loadu_si512((const void *)(b->qs + 64 * (4 * s + k)));
            const __m512i u0 = _mm512_shuffle_epi8(table, _mm512_and_si512(v, low4));
            const __m512i u1 = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi32(v, 4), low4));
            for (int j = 0; j < CB; j++) {
                const uint8_t *x = (const uint8_t *)y[j][ib].qs + 32 * s + 4 * k;
                t[j] = qgemv_dpbusd_bcst_512(t[j], u0, x);
                t[j] = qgemv_dpbusd_bcst_512(t[j], u1, x + 16);
            }
        }
        const __m512i sc = x16_scale_iq4_xs(sl, sh, s);
        for (int j = 0; j < CB; j++) isum[j] = _mm512_add_epi32(isum[j], _mm512_mullo_epi32(t[j], sc));
    }
    const __m512 d = x16_factors(b->d);
    x16_fold_512(acc, d, y, ib, isum, CB);
}
QGEMV_DEFINE_X16_PASS_OF_SUPERBLOCK(iq4_xs)
#elif defined(QGEMV_AVX2)
/* out[r * out_stride + j] = lane r % 8 of acc[r / 8][j] */
static inline void x16_store_256(const __m256 acc[2][QGEMV_X16_COLS], int CB, float *out, int64_t out_stride) {
    for (int j = 0; j < CB; j++) {
        float o[16];
        _mm256_storeu_ps(o, acc[0][j]);
        _mm256_storeu_ps(o + 8, acc[1][j]);
        for (int r = 0; r < 16; r++) out[r * out_stride + j] = o[r];
    }
}
/* a pass's accumulators (QGEMV_DEFINE_X16_PASS_OF_SUPERBLOCK): rows 8 h .. of column j in acc[h][j] */
typedef __m256 x16_acc[2][QGEMV_X16_COLS];
#define x16_columns x16_columns_256
#define x16_store x16_store_256
/* the columns' pointers made opaque to each half of a panel, so that GCC does not hoist every
 * broadcast of the activations out of the halves' loop into stack slots (64 of them for q6_K:
 * 1 thread 0.73 ms instead of 0.61) */
QGEMV_ALWAYS_INLINE void x16_opaque_columns(const block_q8_K *const *y, const int CB, const block_q8_K **yh) {
    for (int j = 0; j < CB; j++) {
        yh[j] = y[j];
        __asm__("" : "+r"(yh[j]));
    }
}
/* whether a pass sums its products in int32 by vpdpbusd (VNNI) rather than in int16 by maddubs:
 * q2_K's and tq2_0's batches (CB > 1; their single column keeps maddubs, one vpdpbusd chain
 * waiting on its latency), q4_K's and q5_K's passes all (a single column in two chains) */
#if defined(QGEMV_VNNI)
#define X16_DPBUSD_SUMS(CB) ((CB) > 1)
#define X16_K45_DPBUSD 1
#else
#define X16_DPBUSD_SUMS(CB) 0
#define X16_K45_DPBUSD 0
#endif
/* bit `bit` of each byte of x moved to bit 4 (the other bits anywhere): one shift or none,
 * bit a constant where the loops are unrolled */
static inline __m256i x16_bit_to_4(__m256i x, const int bit) {
    return bit < 4 ? _mm256_slli_epi32(x, 4 - bit) : bit > 4 ? _mm256_srli_epi32(x, bit - 4) : x;
}
/* sum + t sc: a sub-block's int32 sums t (lane r: row r) times the 8 rows' scale bytes at sc */
static inline __m256i x16_add_scaled_256(__m256i sum, __m256i t, __m128i sc) {
    return _mm256_add_epi32(sum, _mm256_mullo_epi32(t, _mm256_cvtepu8_epi32(sc)));
}
/* the same on 8 rows per vector, both halves of the panel in turn per sub-block pair, as a
 * function fn whose levels come from LEVELS (the panel block's, or decoded once for a wide pass:
 * below); the levels are at most 15 (q4_K: 8 maddubs of pairs sum in int16) or 31 (q5_K: 4 at a
 * time).  With VNNI a batch's sub-block sums run in int32 by vpdpbusd, a sub-block's 8 groups
 * in one chain, then
 * times the scales by vpmulld: 16 vpdpbusd and 2 vpmulld where maddubs took 16 maddubs, 16
 * int16 adds and 2 vpdpwssd (C harness, 4096 x 4096 in L3, 1 thread, 4 columns a pass: q4_K
 * 0.67-0.69 -> 0.59-0.60 ms, q5_K 0.91-0.94 -> 0.83-0.88); a single column's too, its even and
 * odd groups in two chains, and q5_K's fifth bits each by one shift or none (its sub-block
 * pairs' loop unrolled: x16_bit_to_4).  Intel Xeon (AMX), builds alternating: C harness, 1
 * thread, single column in L2 / L3, q5_K 0.0339 / 0.590 -> 0.0317 / 0.547 ms, q4_K 0.0189 /
 * 0.378 -> 0.0162 / 0.361, q5_K batch 8 0.452 -> 0.422, 32 1.69 -> 1.53 (q4_K's batches even,
 * which ran 1.3x slower with the loop unrolled); through QMatrix, avxvnni, 14336 x 4096 out of
 * cache, 2 / 1 threads, q5_K 1.55-1.62 -> 1.49-1.59 / 2.94-3.13 -> 2.79-3.01 ms, q4_K 1-2%; the
 * avx2 variant's q5_K (the shifts alone) 5-8% in the harness */
#define QGEMV_DEFINE_X16_SUPERBLOCK_K45(fn, name, HIGH_BIT, LEVELS)                              \
    QGEMV_ALWAYS_INLINE void fn(const block_##name##x16 *b, const void *dec,                    \
                                const block_q8_K *const *y, int64_t ib, const int CB, const int hints, \
                                x16_acc acc) {                                                  \
        (void)dec;                                                                              \
        const int per_int16 = X16_K45_DPBUSD ? 8 : QGEMV_X16_INT16_GROUPS_##name;               \
        uint8_t sc[128], mn[128];                                                               \
        x16_scales_mins(b->scales, sc, mn);                                                     \
        __m128i bp[QGEMV_X16_COLS];                                                             \
        for (int j = 0; j < CB; j++) bp[j] = x16_bsum_pairs(&y[j][ib]);                         \
        for (int h = 0; h < 2; h++) {   /* rows 8 h .. 8 h + 7 */                               \
            /* the int32 sums in memory, the int16 ones pinned in registers: with both there    \
             * GCC stored every maddubs product to the stack (Zen 4: batch 8 0.90 -> 0.74 ms,   \
             * a single column 0.294 -> 0.274).  A single column with the hints (the Xeon)      \
             * leaves the int16 ones unpinned: pinned it ran 9% slower out of cache (14336 x    \
             * 4096, 2 threads, builds alternating: 1.21 -> 1.12 ms; in cache even; its int32   \
             * sums in registers instead of memory ran even with this) */                       \
            const int pinned = CB > 1 || !hints;                                                \
            /* a single column's pairs read it through a pointer opaque to each half            \
             * (x16_opaque_columns), and in a function of their own (x16_pairs_where_hinted):   \
             * Intel Xeon, builds alternating, q5_K 1 thread 4096 x 4096 avx2 / avxvnni 0.66 -> \
             * 0.60 / 0.66 -> 0.57 ms, 14336 x 4096 out of cache 2 threads 1.85 -> 1.73 / 1.77 \
             * -> 1.66; q4_K even.  Either alone gained 0-1.5%; opaque in the panels' own single \
             * column (case 1) cost the batches' code in the same function 6-8% */              \
            const int opaque = hints == X16_PAIRED_HINTS;                                       \
            const block_q8_K *yh[1];                                                            \
            if (opaque) x16_opaque_columns(y, 1, yh);                                           \
            __m256i isum[QGEMV_X16_COLS], msum[QGEMV_X16_COLS];                                 \
            int32_t isum_m[QGEMV_X16_COLS][8];                                                  \
            for (int j = 0; j < CB; j++) {                                                      \
                msum[j] = _mm256_setzero_si256();                                               \
                _mm256_storeu_si256((__m256i *)isum_m[j], _mm256_setzero_si256());              \
            }                                                                                   \
            for (int k = 0; k < 4; k++) {   /* lane r: int16 (m_r,2k, m_r,2k+1) */              \
                const __m256i mp = x16_pairs8_u8(x16_load8(mn + 32 * k + 8 * h), x16_load8(mn + 32 * k + 16 + 8 * h)); \
                for (int j = 0; j < CB; j++)                                                    \
                    msum[j] = _mm256_add_epi32(msum[j], _mm256_madd_epi16(mp, _mm256_set1_epi32(_mm_extract_epi32(bp[j], k)))); \
            }                                                                                   \
            HIGH_BIT(_Pragma("GCC unroll 4"))   /* x16_bit_to_4's shifts constant */            \
            for (int c = 0; c < 4; c++) {                                                       \
                /* the rows' scales of sub-blocks 2 c and 2 c + 1 as int16 pairs (sc, sc) */    \
                const __m128i sc0 = x16_load8(sc + 32 * c + 8 * h), sc1 = x16_load8(sc + 32 * c + 16 + 8 * h); \
                const __m256i s0 = x16_pairs8_u8(sc0, sc0), s1 = x16_pairs8_u8(sc1, sc1);       \
                for (int k0 = 0; k0 < 8; k0 += per_int16) {                                     \
                    __m256i t0[QGEMV_X16_COLS], t1[QGEMV_X16_COLS];                             \
                    for (int j = 0; j < (X16_K45_DPBUSD && CB == 1 ? 2 : CB); j++)   /* a single column: 2 chains */ \
                        t0[j] = t1[j] = _mm256_setzero_si256();                                 \
                    for (int k = k0; k < k0 + per_int16; k++) {                                 \
                        __m256i u0, u1;                                                         \
                        LEVELS(HIGH_BIT, u0, u1);                                               \
                        for (int j = 0; j < CB; j++) {                                          \
                            const uint8_t *q = (const uint8_t *)(opaque ? yh[0] : y[j])[ib].qs + 64 * c + 4 * k; \
                            const __m256i p0 = _mm256_set1_epi32((int)qgemv_k_word(q));         \
                            const __m256i p1 = _mm256_set1_epi32((int)qgemv_k_word(q + 32));    \
                            if (X16_K45_DPBUSD) {                                               \
                                const int jc = CB == 1 ? (k & 1) : j;   /* one column: two chains */ \
                                t0[jc] = qgemv_dot_u8s8_acc(t0[jc], u0, p0);   /* vpdpbusd */   \
                                t1[jc] = qgemv_dot_u8s8_acc(t1[jc], u1, p1);                    \
                            } else {                                                            \
                                t0[j] = _mm256_add_epi16(t0[j], _mm256_maddubs_epi16(u0, p0));  \
                                t1[j] = _mm256_add_epi16(t1[j], _mm256_maddubs_epi16(u1, p1));  \
                            }                                                                   \
                            if (pinned) {                                                       \
                                QGEMV_IN_REGISTER(t0[j]);                                       \
                                QGEMV_IN_REGISTER(t1[j]);                                       \
                            }                                                                   \
                        }                                                                       \
                    }                                                                           \
                    if (X16_K45_DPBUSD && CB == 1) {                                            \
                        t0[0] = _mm256_add_epi32(t0[0], t0[1]);                                 \
                        t1[0] = _mm256_add_epi32(t1[0], t1[1]);                                 \
                    }                                                                           \
                    for (int j = 0; j < CB; j++) {                                              \
                        const __m256i sum = _mm256_loadu_si256((const __m256i *)isum_m[j]);     \
                        _mm256_storeu_si256((__m256i *)isum_m[j],                               \
                                            X16_K45_DPBUSD                                      \
                                                ? x16_add_scaled_256(x16_add_scaled_256(sum, t0[j], sc0), t1[j], sc1) \
                                                : qgemv_madd_acc(qgemv_madd_acc(sum, t0[j], s0), t1[j], s1)); \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
            for (int j = 0; j < CB; j++) isum[j] = _mm256_loadu_si256((const __m256i *)isum_m[j]); \
            const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b->d + 8 * h))); \
            const __m256 dmin = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b->dmin + 8 * h))); \
            x16_fold_min_256(acc[h], d, dmin, y, ib, isum, msum, CB);                           \
        }                                                                                       \
    }
/* the levels of sub-block 2 c + e, group k, rows 8 h .. of a q4_K / q5_K panel block: its low
 * (e = 0) or high nibbles of qs, with q5_K's qh (NULL for q4_K) bit 2 c + e of qh's byte (the
 * value's fifth bit) moved to bit 4 */
QGEMV_ALWAYS_INLINE __m256i x16_k45_levels8(const uint8_t *qs, const uint8_t *qh, const int c, const int k, const int h,
                                            const int e) {
    const __m256i v = _mm256_loadu_si256((const __m256i *)(qs + 64 * (8 * c + k) + 32 * h));
    const __m256i u = _mm256_and_si256(e ? _mm256_srli_epi32(v, 4) : v, _mm256_set1_epi8(0x0f));
    if (!qh) return u;
    const __m256i hq = _mm256_loadu_si256((const __m256i *)(qh + 64 * k + 32 * h));
    return _mm256_or_si256(u, _mm256_and_si256(x16_bit_to_4(hq, 2 * c + e), _mm256_set1_epi8(0x10)));
}
/* a pass's levels: from the panel block, its lines hinted first (as the passes ask) */
#define X16_K45_LEVELS_OF_BLOCK(HIGH_BIT, u0, u1)                                                  \
    do {                                                                                           \
        if (h == 0) QGEMV_PREFETCH_PASS_LINE_IF(hints, b->qs + 64 * (8 * c + k), CB);             \
        u0 = x16_k45_levels8(b->qs, HIGH_BIT(b->qh +) 0, c, k, h, 0);                              \
        u1 = x16_k45_levels8(b->qs, HIGH_BIT(b->qh +) 0, c, k, h, 1);                              \
    } while (0)
QGEMV_DEFINE_X16_SUPERBLOCK_K45(x16_superblock_q4_K, q4_K, QGEMV_K_NO_HIGH_BIT, X16_K45_LEVELS_OF_BLOCK)
QGEMV_DEFINE_X16_SUPERBLOCK_K45(x16_superblock_q5_K, q5_K, QGEMV_K_HIGH_BIT, X16_K45_LEVELS_OF_BLOCK)
QGEMV_DEFINE_X16_PASS_OF_SUPERBLOCK(q4_K)
QGEMV_DEFINE_X16_PASS_OF_SUPERBLOCK(q5_K)
#if !defined(QGEMV_VNNI)
/* a q4_K or q5_K super-block's levels decoded once for a wide pass's groups of columns:
 * u[c][k][h][e] (x16_k45_levels8's; qh NULL for q4_K) */
typedef struct {
    __m256i u[4][8][2][2];
} x16_decoded_k45;
typedef x16_decoded_k45 x16_decoded_q4_K;
typedef x16_decoded_k45 x16_decoded_q5_K;
QGEMV_ALWAYS_INLINE void x16_decode_k45(const uint8_t *qs, const uint8_t *qh, const int W, x16_decoded_k45 *dec) {
    _Pragma("GCC unroll 4")   /* x16_bit_to_4's shifts constant */
    for (int c = 0; c < 4; c++)
        for (int k = 0; k < 8; k++) {
            QGEMV_PREFETCH_PASS_LINE(qs + 64 * (8 * c + k), W);
            for (int h = 0; h < 2; h++)
                for (int e = 0; e < 2; e++) dec->u[c][k][h][e] = x16_k45_levels8(qs, qh, c, k, h, e);
        }
}
QGEMV_ALWAYS_INLINE void x16_decode_q4_K(const block_q4_Kx16 *b, const int W, x16_decoded_q4_K *dec) {
    x16_decode_k45(b->qs, NULL, W, dec);
}
QGEMV_ALWAYS_INLINE void x16_decode_q5_K(const block_q5_Kx16 *b, const int W, x16_decoded_q5_K *dec) {
    x16_decode_k45(b->qs, b->qh, W, dec);
}
/* a wide pass's levels: decoded once for its groups (dec: an x16_decoded_k45) */
#define X16_K45_LEVELS_DECODED(HIGH_BIT, u0, u1)                                                   \
    do {                                                                                           \
        u0 = ((const x16_decoded_k45 *)dec)->u[c][k][h][0];                                       \
        u1 = ((const x16_decoded_k45 *)dec)->u[c][k][h][1];                                       \
    } while (0)
QGEMV_DEFINE_X16_SUPERBLOCK_K45(x16_superblock_decoded_q4_K, q4_K, QGEMV_K_NO_HIGH_BIT, X16_K45_LEVELS_DECODED)
QGEMV_DEFINE_X16_SUPERBLOCK_K45(x16_superblock_decoded_q5_K, q5_K, QGEMV_K_HIGH_BIT, X16_K45_LEVELS_DECODED)
/* Batches of 12 to 32 columns (QGEMV_X16_WIDE_COLS) of q5_K without VNNI decode each super-block's
 * levels once for all their passes of 4 columns (AVX-512's wide passes, on 8-row halves): the
 * 128 vectors of levels to memory (x16_decode_q5_K), then each pass reads them from L1 where the
 * fifth bits took 5 instructions a vector pair; the same integers and fmas, so the same bits.
 * Intel Xeon, QGEMV_ISA=avx2, builds alternating, 4096 x 4096, 2 threads: batch 12 1.64 -> 1.47
 * ms, 16 2.14 -> 1.89, 32 4.11 -> 3.31 (1 thread 8.8 -> 6.9); batch 8 even, 6 1.06-1.09x slower,
 * so from 12.  avxvnni's vpdpbusd passes ran batch 8 1.25x slower so, batch 32 even: not there */
#define QGEMV_X16_WIDE_COLS 32
#define QGEMV_X16_WIDE_MIN_COLS_q5_K 12
/* x16_wide_pass_<name>: W <= QGEMV_X16_WIDE_COLS columns against super-blocks decoded once each
 * (x16_decode_<name>), by superblock(block, &decoded, ...) 4 columns at a time */
#define QGEMV_DEFINE_X16_WIDE_PASS_256(name, superblock)                                         \
    static void x16_wide_pass_##name(int64_t nb, const block_##name##x16 *p, const uint8_t *a, int64_t act_stride, \
                                     const int W, float *out, int64_t out_stride) {             \
        const block_q8_K *y[QGEMV_X16_WIDE_COLS];                                               \
        x16_acc acc[QGEMV_X16_WIDE_COLS / QGEMV_X16_COLS];                                      \
        for (int g = 0; g < W; g += QGEMV_X16_COLS)                                             \
            x16_columns_256(a + g * act_stride, act_stride, W - g < QGEMV_X16_COLS ? W - g : QGEMV_X16_COLS, y + g, \
                            acc[g / QGEMV_X16_COLS]);                                           \
        for (int64_t ib = 0; ib < nb; ib++) {                                                   \
            x16_decoded_##name dec;                                                             \
            x16_decode_##name(p + ib, W, &dec);                                                 \
            for (int g = 0; g < W; g += QGEMV_X16_COLS)                                         \
                switch (W - g) {                                                                \
                case 1: superblock(p + ib, &dec, y + g, ib, 1, 1, acc[g / QGEMV_X16_COLS]); break; \
                case 2: superblock(p + ib, &dec, y + g, ib, 2, 1, acc[g / QGEMV_X16_COLS]); break; \
                case 3: superblock(p + ib, &dec, y + g, ib, 3, 1, acc[g / QGEMV_X16_COLS]); break; \
                default: superblock(p + ib, &dec, y + g, ib, 4, 1, acc[g / QGEMV_X16_COLS]); break; \
                }                                                                               \
        }                                                                                       \
        for (int g = 0; g < W; g += QGEMV_X16_COLS)                                             \
            x16_store_256(acc[g / QGEMV_X16_COLS], W - g < QGEMV_X16_COLS ? W - g : QGEMV_X16_COLS, out + g, out_stride); \
    }
QGEMV_DEFINE_X16_WIDE_PASS_256(q5_K, x16_superblock_decoded_q5_K)
/* q4_K's batches of 24 columns and more as q5_K's: its nibbles cost one or two instructions a
 * vector, so less is saved.  Intel Xeon, QGEMV_ISA=avx2, builds alternating, 4096 x 4096, 2
 * threads: batch 32 3.25 -> 3.12 ms, 3.51 -> 3.34; 24 2.62 -> 2.54; 16 and 12 1.04-1.05x slower */
#define QGEMV_X16_WIDE_MIN_COLS_q4_K 24
QGEMV_DEFINE_X16_WIDE_PASS_256(q4_K, x16_superblock_decoded_q4_K)
#endif

/* q2_K on 8 rows per vector: maddubs pairs of 2-bit levels summed in int16 over a sub-block's
 * 4 groups (4 2 3 128 < 2^15), then madd with the rows' scale pairs; the minimums' sum by madd
 * of the rows' minimum pairs against the column's 16-value bsums.  With VNNI a level times its
 * row's scale fits a byte (3 15 = 45), so the levels are scaled once for all the columns (a
 * vpmullw by the scale pairs: no carry crosses a byte) and each column's 4 values take one
 * vpdpbusd into the int32 sum, where maddubs, the int16 add and a share of the madd took 2.5:
 * avxvnni, Intel Xeon, 4096 x 4096, 2 threads, builds alternating, batch 8 0.93-1.08 -> 0.78-0.89
 * ms, batch 32 3.68-4.12 -> 3.10-3.39.  A single column keeps maddubs: one chain of vpdpbusd, the
 * multiply not shared, ran 0.44 -> 0.55-0.57 ms in cache (1 thread) */
/* a q2_K super-block decoded once for a wide pass's groups of columns (without VNNI): its levels
 * u[g][f][half] (group g's field f, rows 8 half ..), and the rows' pairs of scales sp[half][s]
 * (sub-block s's (sc, sc)) and of minimums mp[half][i] (the passes' sp and mp) */
typedef struct {
    __m256i u[16][4][2];
    __m256i sp[2][16], mp[2][8];
} x16_decoded_q2_K;
/* the rows' (sc, sc) of sub-block s and (m_2i, m_2i+1), rows 8 half .. */
static inline __m256i x16_scale_pair_q2_K(const block_q2_Kx16 *b, int s, int half) {
    const __m128i sc = _mm_and_si128(x16_load8(b->scales + 16 * s + 8 * half), _mm_set1_epi8(0x0f));
    return x16_pairs8_u8(sc, sc);
}
static inline __m256i x16_min_pair_q2_K(const block_q2_Kx16 *b, int i, int half) {
    const __m128i low4 = _mm_set1_epi8(0x0f);
    const __m128i m0 = _mm_and_si128(_mm_srli_epi16(x16_load8(b->scales + 32 * i + 8 * half), 4), low4);
    const __m128i m1 = _mm_and_si128(_mm_srli_epi16(x16_load8(b->scales + 32 * i + 16 + 8 * half), 4), low4);
    return x16_pairs8_u8(m0, m1);
}
/* field f of group g, rows 8 half .. */
static inline __m256i x16_levels8_q2_K(const block_q2_Kx16 *b, int g, int f, int half) {
    const __m256i v = _mm256_loadu_si256((const __m256i *)(b->qs + 64 * g + 32 * half));
    return _mm256_and_si256(f ? _mm256_srli_epi32(v, 2 * f) : v, _mm256_set1_epi8(3));
}
#if !defined(QGEMV_VNNI)   /* the wide passes' (VNNI keeps its passes) */
QGEMV_ALWAYS_INLINE void x16_decode_q2_K(const block_q2_Kx16 *b, const int W, x16_decoded_q2_K *dec) {
    for (int g = 0; g < 16; g++) {
        QGEMV_PREFETCH_PASS_LINE(b->qs + 64 * g, W);
        for (int f = 0; f < 4; f++)
            for (int half = 0; half < 2; half++) dec->u[g][f][half] = x16_levels8_q2_K(b, g, f, half);
    }
    for (int half = 0; half < 2; half++) {
        for (int s = 0; s < 16; s++) dec->sp[half][s] = x16_scale_pair_q2_K(b, s, half);
        for (int i = 0; i < 8; i++) dec->mp[half][i] = x16_min_pair_q2_K(b, i, half);
    }
}
#endif
/* super-block b against CB <= 4 columns into acc: levels and pairs from dec (a wide pass's
 * x16_decoded_q2_K) or, dec NULL, from the block */
QGEMV_ALWAYS_INLINE void x16_superblock_q2_K(const block_q2_Kx16 *b, const void *dec, const block_q8_K *const *y,
                                             int64_t ib, const int CB, const int hints, x16_acc acc) {
    const x16_decoded_q2_K *decoded = (const x16_decoded_q2_K *)dec;
    if (!decoded) x16_hint_lines(b->qs, 16, CB, hints);
    for (int half = 0; half < 2; half++) {   /* rows 8 half .. 8 half + 7 */
        __m256i isum[QGEMV_X16_COLS], msum[QGEMV_X16_COLS];
        for (int j = 0; j < CB; j++) isum[j] = msum[j] = _mm256_setzero_si256();
        for (int i = 0; i < 8; i++) {   /* lane r: int16 (m_r,2i, m_r,2i+1) */
            const __m256i mp = decoded ? decoded->mp[half][i] : x16_min_pair_q2_K(b, i, half);
            for (int j = 0; j < CB; j++)
                msum[j] = _mm256_add_epi32(msum[j], _mm256_madd_epi16(mp, _mm256_set1_epi32((int)qgemv_k_word((const uint8_t *)(y[j][ib].bsums + 2 * i)))));
        }
        for (int h = 0; h < 2; h++)
            for (int f = 0; f < 4; f++)
                for (int gg = 0; gg < 2; gg++) {   /* sub-block 8 h + 2 f + gg */
                    const int sb = 8 * h + 2 * f + gg;
                    const __m256i sp = decoded ? decoded->sp[half][sb] : x16_scale_pair_q2_K(b, sb, half);   /* (sc, sc) */
                    __m256i t[QGEMV_X16_COLS];
                    for (int j = 0; j < CB; j++) t[j] = _mm256_setzero_si256();
                    for (int kk = 0; kk < 4; kk++) {
                        const int g = 8 * h + 4 * gg + kk;
                        const __m256i u = decoded ? decoded->u[g][f][half] : x16_levels8_q2_K(b, g, f, half);
#if defined(QGEMV_VNNI)
                        const __m256i w = _mm256_mullo_epi16(u, sp);   /* the levels times the scales */
#endif
                        for (int j = 0; j < CB; j++) {
                            const uint8_t *x = (const uint8_t *)y[j][ib].qs + 128 * h + 32 * f + 4 * (4 * gg + kk);
#if defined(QGEMV_VNNI)
                            if (X16_DPBUSD_SUMS(CB)) {
                                isum[j] = qgemv_dpbusd_256(isum[j], w, _mm256_set1_epi32((int)qgemv_k_word(x)));
                                continue;
                            }
#endif
                            t[j] = _mm256_add_epi16(t[j], _mm256_maddubs_epi16(u, _mm256_set1_epi32((int)qgemv_k_word(x))));
                        }
                    }
                    if (!X16_DPBUSD_SUMS(CB))
                        for (int j = 0; j < CB; j++) isum[j] = _mm256_add_epi32(isum[j], _mm256_madd_epi16(t[j], sp));
                }
        const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b->d + 8 * half)));
        const __m256 dmin = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b->dmin + 8 * half)));
        x16_fold_min_256(acc[half], d, dmin, y, ib, isum, msum, CB);
    }
}
QGEMV_DEFINE_X16_PASS_OF_SUPERBLOCK(q2_K)
#if !defined(QGEMV_VNNI)
/* q2_K's batches of 5 columns and more without VNNI as q5_K's: the levels and the rows' pairs
 * decoded once for the passes of 4 columns.  Intel Xeon, QGEMV_ISA=avx2, builds alternating,
 * 4096 x 4096, 2 threads: batch 32 4.90 -> 4.39 ms, 16 2.49 -> 2.31, 12 1.88 -> 1.74, 8 1.30 ->
 * 1.24, 5-7 1.03-1.04x faster; 3 and 4 1.04-1.07x slower.  The pass as a super-block kernel (for
 * the wide passes) ran even, avx2 and avxvnni, 1 to 32 columns */
#define QGEMV_X16_WIDE_MIN_COLS_q2_K 5
QGEMV_DEFINE_X16_WIDE_PASS_256(q2_K, x16_superblock_q2_K)
#endif
/* 8 rows' int8 scales a[r], b[r] as int16 pairs (a[r], b[r]), one per int32 lane */
static inline __m256i x16_pairs8_i8(__m128i a, __m128i b) { return _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(a, b)); }
/* the rows' scale pairs (sc_2i, sc_2i+1) that x16_offset_start multiplies */
static inline void x16_offset_pairs(const int8_t *sc, __m256i pairs[8]) {
    for (int i = 0; i < 8; i++) pairs[i] = x16_pairs8_i8(x16_load8(sc + 32 * i), x16_load8(sc + 32 * i + 16));
}
/* x16_offset_start from the pairs (formed once for a wide pass's groups) */
QGEMV_ALWAYS_INLINE __m256i x16_offset_start_of_pairs(const __m256i pairs[8], const block_q8_K *y, const int shift) {
    __m256i corr = _mm256_setzero_si256();
    for (int i = 0; i < 8; i++)
        corr = qgemv_madd_acc(corr, pairs[i], _mm256_set1_epi32((int)qgemv_k_word((const uint8_t *)(y->bsums + 2 * i))));
    return _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(corr, shift));
}
/* -2^shift sum_s sc_s bsum_s of 8 rows (lane r; int8 scales sc[16 s + r], s < 16) against a
 * column's 16-value bsums: the offset of levels stored as u = q + 2^shift, as madds of the rows'
 * scale pairs against the column's bsum pairs */
QGEMV_ALWAYS_INLINE __m256i x16_offset_start(const int8_t *sc, const block_q8_K *y, const int shift) {
    __m256i pairs[8];
    x16_offset_pairs(sc, pairs);
    return x16_offset_start_of_pairs(pairs, y, shift);
}
/* q6_K on 8 rows per vector: levels u = q + 32 in [0, 63] (x16_levels_q6_K's bits), two groups'
 * maddubs pairs summed in int16 (2 2 63 127 < 2^15), then madd by the rows' (sc, sc) into the
 * super-block's int32 sum; the offset, -32 sum_s sc_s bsum_s, by madd of the rows' scale pairs
 * against the column's 16-value bsum pairs.  The same exact isum as the AVX-512 pass's, so the
 * same bits.  Against the GGUF rows' tile, Intel Xeon, builds alternating, 4096 x 4096: avx2 1
 * thread 0.69 -> 0.61 ms; 2 threads batch 2 0.52 -> 0.44, 4 0.75 -> 0.61, 8 1.46 -> 1.18, 12
 * 2.52 -> 1.76 (from 16 the packed tile, on the GGUF rows); out of cache (14336 x 4096) 2 / 1
 * threads 1.88 -> 1.95 / 3.77 -> 3.69; avxvnni alike (1 thread 0.67 -> 0.61, batch 4 0.69 ->
 * 0.57, out of cache 2 threads 1.86 -> 1.94).  A single column one panel at a time: two at once
 * ran 1.02x / 1.06x slower in and out of cache */
QGEMV_ALWAYS_INLINE void x16_levels8_q6_K(const block_q6_Kx16 *b, const int h, const int k, const int half,
                                          __m256i *u0, __m256i *u1) {
    const __m256i low4 = _mm256_set1_epi8(0x0f), bits45 = _mm256_set1_epi8(0x30);
    const __m256i l = _mm256_loadu_si256((const __m256i *)(x16_ql_q6_K(b, 16 * h + k) + 32 * half));
    const __m256i q = _mm256_loadu_si256((const __m256i *)(x16_qh_q6_K(b, h, k % 8) + 32 * half));
    *u0 = _mm256_or_si256(_mm256_and_si256(l, low4), _mm256_and_si256(_mm256_slli_epi32(q, k < 8 ? 4 : 2), bits45));
    *u1 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(l, 4), low4),
                          _mm256_and_si256(k < 8 ? q : _mm256_srli_epi32(q, 2), bits45));
}
/* a q6_K super-block decoded once for a wide pass's groups of columns: its levels u[h][k][half][e]
 * (x16_levels8_q6_K's u0, u1) and the rows' scale pairs, the products' sp and the offset's op */
typedef struct {
    __m256i u[2][16][2][2];
    __m256i sp[2][16];   /* [half][s]: the rows' (sc_s, sc_s) */
    __m256i op[2][8];    /* [half][i]: the rows' (sc_2i, sc_2i+1) */
} x16_decoded_q6_K;
#if !defined(QGEMV_VNNI)   /* the wide passes' (VNNI keeps its passes) */
QGEMV_ALWAYS_INLINE void x16_decode_q6_K(const block_q6_Kx16 *b, const int W, x16_decoded_q6_K *dec) {
    _Pragma("GCC unroll 16")   /* x16_levels8_q6_K's shifts constant */
    for (int k = 0; k < 16; k++)
        for (int h = 0; h < 2; h++) {
            QGEMV_PREFETCH_PASS_LINE(x16_ql_q6_K(b, 16 * h + k), W);
            if (k < 8) QGEMV_PREFETCH_PASS_LINE(x16_qh_q6_K(b, h, k), W);
            for (int half = 0; half < 2; half++)
                x16_levels8_q6_K(b, h, k, half, &dec->u[h][k][half][0], &dec->u[h][k][half][1]);
        }
    for (int half = 0; half < 2; half++) {
        const int8_t *sc = b->scales + 8 * half;
        for (int s = 0; s < 16; s++) dec->sp[half][s] = x16_pairs8_i8(x16_load8(sc + 16 * s), x16_load8(sc + 16 * s));
        x16_offset_pairs(sc, dec->op[half]);
    }
}
#endif
/* super-block b against CB <= 4 columns into acc: levels and scale pairs from dec (a wide pass's
 * x16_decoded_q6_K) or, dec NULL, from the block */
QGEMV_ALWAYS_INLINE void x16_superblock_q6_K(const block_q6_Kx16 *b, const void *dec, const block_q8_K *const *y,
                                             int64_t ib, const int CB, const int hints, x16_acc acc) {
    const x16_decoded_q6_K *decoded = (const x16_decoded_q6_K *)dec;
    for (int half = 0; half < 2; half++) {   /* rows 8 half .. 8 half + 7 */
        const int8_t *sc = b->scales + 8 * half;   /* sub-block s of row r: sc[16 s + r] */
        const block_q8_K *yh[QGEMV_X16_COLS];
        x16_opaque_columns(y, CB, yh);
        __m256i isum[QGEMV_X16_COLS];
        for (int j = 0; j < CB; j++)   /* -32 sum_s sc_s bsum_s */
            isum[j] = decoded ? x16_offset_start_of_pairs(decoded->op[half], &yh[j][ib], 5)
                              : x16_offset_start(sc, &yh[j][ib], 5);
        /* unrolled, so that each group's shifts are constants */
        _Pragma("GCC unroll 2")
        for (int h = 0; h < 2; h++)
            _Pragma("GCC unroll 4")
            for (int s = 0; s < 4; s++) {   /* sub-blocks 8 h + s (low nibbles) and 8 h + 4 + s (high) */
                const __m128i sc0 = x16_load8(sc + 16 * (8 * h + s)), sc1 = x16_load8(sc + 16 * (8 * h + 4 + s));
                const __m256i s0 = decoded ? decoded->sp[half][8 * h + s] : x16_pairs8_i8(sc0, sc0);
                const __m256i s1 = decoded ? decoded->sp[half][8 * h + 4 + s] : x16_pairs8_i8(sc1, sc1);
                _Pragma("GCC unroll 2")
                for (int kk = 0; kk < 4; kk += 2) {
                    const int k = 4 * s + kk;
                    __m256i u0a, u1a, u0b, u1b;
                    if (decoded) {
                        u0a = decoded->u[h][k][half][0], u1a = decoded->u[h][k][half][1];
                        u0b = decoded->u[h][k + 1][half][0], u1b = decoded->u[h][k + 1][half][1];
                    } else {
                        if (half == 0)
                            for (int e = 0; e < 2; e++) {
                                QGEMV_PREFETCH_PASS_LINE_IF(hints, x16_ql_q6_K(b, 16 * h + k + e), CB);
                                if (k + e < 8) QGEMV_PREFETCH_PASS_LINE_IF(hints, x16_qh_q6_K(b, h, k + e), CB);
                            }
                        x16_levels8_q6_K(b, h, k, half, &u0a, &u1a);
                        x16_levels8_q6_K(b, h, k + 1, half, &u0b, &u1b);
                    }
                    for (int j = 0; j < CB; j++) {
                        const uint8_t *x = (const uint8_t *)yh[j][ib].qs + 128 * h + 4 * k;
                        const __m256i t0 = _mm256_add_epi16(_mm256_maddubs_epi16(u0a, _mm256_set1_epi32((int)qgemv_k_word(x))),
                                                            _mm256_maddubs_epi16(u0b, _mm256_set1_epi32((int)qgemv_k_word(x + 4))));
                        const __m256i t1 = _mm256_add_epi16(_mm256_maddubs_epi16(u1a, _mm256_set1_epi32((int)qgemv_k_word(x + 64))),
                                                            _mm256_maddubs_epi16(u1b, _mm256_set1_epi32((int)qgemv_k_word(x + 68))));
                        isum[j] = qgemv_madd_acc(qgemv_madd_acc(isum[j], t0, s0), t1, s1);
                    }
                }
            }
        x16_fold_256(acc[half], _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b->d + 8 * half))), y, ib, isum, CB);
    }
}
QGEMV_DEFINE_X16_PASS_OF_SUPERBLOCK(q6_K)
#if !defined(QGEMV_VNNI)
/* q6_K's batches of 16 columns and more without VNNI as q5_K's: each super-block's levels and the
 * rows' scale pairs (the products' and the offset's) decoded once for the passes of 4 columns.
 * Intel Xeon, QGEMV_ISA=avx2, builds alternating, 4096 x 4096: 2 threads batch 32 4.77 -> 4.37
 * ms (the levels alone: 4.66 -> 4.39), 1 thread 10.0 -> 9.05; batch 16 even, 12 1.02x slower */
#define QGEMV_X16_WIDE_MIN_COLS_q6_K 16
QGEMV_DEFINE_X16_WIDE_PASS_256(q6_K, x16_superblock_q6_K)
#endif
/* q3_K on 8 rows per vector: levels u = q + 4 in [0, 7] (2 bits of qs below a bit of hmask, as
 * x16_levels_q3_K), a 16-value sub-block's 4 groups of maddubs pairs summed in int16 (4 2 7 127
 * < 2^15), then madd by the rows' (sc, sc); the offset -4 sum_s sc_s bsum_s as q6_K's.  The same
 * exact isum as the AVX-512 pass's, so the same bits.  Against the GGUF rows' tile, Intel Xeon,
 * builds alternating, 4096 x 4096: avx2 1 thread 0.73 -> 0.60 ms; 2 threads batch 4 0.91 -> 0.70,
 * 8 1.61 -> 1.40, 12 2.66 -> 2.03; out of cache (14336 x 4096) 2 threads 1.59 -> 1.44; avxvnni 1
 * thread 0.68 -> 0.58, out of cache 1.40 -> 1.35 (its batches from 8 the packed tile, as before) */
QGEMV_ALWAYS_INLINE __m256i x16_levels8_q3_K(const block_q3_Kx16 *b, const int h, const int f, const int m,
                                             const int half) {
    const __m256i low2 = _mm256_set1_epi8(3), bit2 = _mm256_set1_epi8(4);
    const __m256i v = _mm256_loadu_si256((const __m256i *)(b->qs + 64 * (8 * h + m) + 32 * half));
    const __m256i hm = _mm256_loadu_si256((const __m256i *)(b->hmask + 64 * m + 32 * half));
    const int up = 4 * h + f - 2;   /* hmask bit 4 h + f to bit 2 */
    return _mm256_or_si256(_mm256_and_si256(f ? _mm256_srli_epi32(v, 2 * f) : v, low2),
                           _mm256_and_si256(up > 0 ? _mm256_srli_epi32(hm, up) : _mm256_slli_epi32(hm, -up), bit2));
}
QGEMV_ALWAYS_INLINE void x16_superblock_q3_K(const block_q3_Kx16 *b, const void *dec, const block_q8_K *const *y,
                                             int64_t ib, const int CB, const int hints, x16_acc acc) {
    (void)dec;
    int8_t scales[256];   /* sub-block s of row r: scales[16 s + r] */
    x16_scales_q3_K(b->scales, scales);
    for (int half = 0; half < 2; half++) {   /* rows 8 half .. 8 half + 7 */
        const int8_t *sc = scales + 8 * half;
        const block_q8_K *yh[QGEMV_X16_COLS];
        x16_opaque_columns(y, CB, yh);
        __m256i isum[QGEMV_X16_COLS];
        for (int j = 0; j < CB; j++) isum[j] = x16_offset_start(sc, &yh[j][ib], 2);   /* -4 sum_s sc_s bsum_s */
        _Pragma("GCC unroll 2")
        for (int h = 0; h < 2; h++)
            _Pragma("GCC unroll 4")
            for (int f = 0; f < 4; f++)
                _Pragma("GCC unroll 2")
                for (int gg = 0; gg < 2; gg++) {   /* sub-block 8 h + 2 f + gg: qs groups 8 h + 4 gg .. + 3 */
                    const int s = 8 * h + 2 * f + gg;
                    const __m128i sc8 = x16_load8(sc + 16 * s);
                    const __m256i sp = x16_pairs8_i8(sc8, sc8);
                    __m256i t[QGEMV_X16_COLS];
                    for (int j = 0; j < CB; j++) t[j] = _mm256_setzero_si256();
                    _Pragma("GCC unroll 4")
                    for (int kk = 0; kk < 4; kk++) {
                        const int m = 4 * gg + kk;
                        if (half == 0 && f == 0) {
                            QGEMV_PREFETCH_PASS_LINE_IF(hints, b->qs + 64 * (8 * h + m), CB);
                            if (h == 0) QGEMV_PREFETCH_PASS_LINE_IF(hints, b->hmask + 64 * m, CB);
                        }
                        const __m256i u = x16_levels8_q3_K(b, h, f, m, half);
                        for (int j = 0; j < CB; j++) {
                            const uint8_t *x = (const uint8_t *)yh[j][ib].qs + 128 * h + 32 * f + 4 * m;
                            t[j] = _mm256_add_epi16(t[j], _mm256_maddubs_epi16(u, _mm256_set1_epi32((int)qgemv_k_word(x))));
                        }
                    }
                    for (int j = 0; j < CB; j++) isum[j] = qgemv_madd_acc(isum[j], t[j], sp);
                }
        x16_fold_256(acc[half], _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b->d + 8 * half))), y, ib, isum, CB);
    }
}
QGEMV_DEFINE_X16_PASS_OF_SUPERBLOCK(q3_K)
/* ls - 32 of sub-block s for 8 rows (x16_scale_iq4_xs on 8 lanes): lane r holds row r's scales_l
 * (sub-block s in bits 4 s ..) in sl and its scales_h (bits 2 s, 2 s + 1) in sh */
static inline __m256i x16_scale8_iq4_xs(__m256i sl, __m256i sh, int s) {
    const __m256i low = _mm256_and_si256(_mm256_srli_epi32(sl, 4 * s), _mm256_set1_epi32(0x0f));
    const __m256i high = _mm256_and_si256(_mm256_srli_epi32(sh, 2 * s), _mm256_set1_epi32(3));
    return _mm256_sub_epi32(_mm256_or_si256(low, _mm256_slli_epi32(high, 4)), _mm256_set1_epi32(32));
}
#if defined(QGEMV_VNNI)
/* iq4_xs on 8 rows per vector, the AVX-512 pass's arithmetic (levels + 128 by vpshufb, each
 * 32-value sub-block's vpdpbusd chain from -128 bsum_s, times the rows' ls - 32 by vpmulld, one
 * fma a super-block), both halves of the panel in turn.  Against the GGUF rows' tile (and, from
 * 10 columns, int16 columns through vpdpwssd, 16 a row, column and super-block where this takes
 * 8 vpdpbusd), avxvnni, Intel Xeon, builds alternating, 4096 x 4096, 1 / 2 threads: 0.59-0.60 ->
 * 0.42-0.44 / 0.33-0.34 -> 0.23-0.26 ms; out of cache (14336 x 4096) 2.47-2.68 -> 2.27-2.36 /
 * 1.35-1.37 -> 1.15-1.21; 2 threads, batch 8 1.25-1.30 -> 0.74-0.75, 10 1.60-1.68 -> 0.93-1.02,
 * 16 2.22-2.30 -> 1.44-1.50, 32 3.84-4.26 -> 2.73-2.90.  A super-block kernel, as AVX-512's,
 * so that a single column reads two panels at a time (QGEMV_DEFINE_X16_PASS_OF_SUPERBLOCK's
 * pairs): out of cache 2 threads 1.07-1.19 -> 1.04-1.14 ms (1 thread 2.17-2.31 -> 2.15-2.20), in
 * cache even */
QGEMV_ALWAYS_INLINE void x16_superblock_iq4_xs(const block_iq4_xsx16 *b, const void *dec, const block_q8_K *const *y,
                                               int64_t ib, const int CB, const int hints, x16_acc acc) {
    (void)dec;
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const __m256i table = _mm256_broadcastsi128_si256(kvalues_iq4nl_u8());
    int32_t start[QGEMV_X16_COLS][8];   /* -128 bsum_s over the 32-value sub-blocks */
    for (int j = 0; j < CB; j++) _mm256_storeu_si256((__m256i *)start[j], x16_pair_starts(&y[j][ib], 7));
    for (int half = 0; half < 2; half++) {   /* rows 8 half .. 8 half + 7 */
        /* lane r: the row's scales_l (sub-block s in bits 4 s ..) and scales_h (bits 2 s, 2 s + 1) */
        const __m256i sl = _mm256_loadu_si256((const __m256i *)(b->scales_l + 32 * half));
        const __m256i sh = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(b->scales_h + 8 * half)));
        __m256i isum[QGEMV_X16_COLS];
        for (int j = 0; j < CB; j++) isum[j] = _mm256_setzero_si256();
        for (int s = 0; s < 8; s++) {   /* sub-block s: qs groups 4 s .. 4 s + 3 */
            __m256i t[QGEMV_X16_COLS];
            for (int j = 0; j < CB; j++) t[j] = _mm256_set1_epi32(start[j][s]);
            for (int k = 0; k < 4; k++) {
                if (half == 0) QGEMV_PREFETCH_PASS_LINE_IF(hints, b->qs + 64 * (4 * s + k), CB);
                const __m256i v = _mm256_loadu_si256((const __m256i *)(b->qs + 64 * (4 * s + k) + 32 * half));
                const __m256i u0 = _mm256_shuffle_epi8(table, _mm256_and_si256(v, low4));
                const __m256i u1 = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi32(v, 4), low4));
                for (int j = 0; j < CB; j++) {
                    const uint8_t *x = (const uint8_t *)y[j][ib].qs + 32 * s + 4 * k;
                    t[j] = qgemv_dpbusd_256(t[j], u0, _mm256_set1_epi32((int)qgemv_k_word(x)));
                    t[j] = qgemv_dpbusd_256(t[j], u1, _mm256_set1_epi32((int)qgemv_k_word(x + 16)));
                }
            }
            const __m256i sc = x16_scale8_iq4_xs(sl, sh, s);
            for (int j = 0; j < CB; j++) isum[j] = _mm256_add_epi32(isum[j], _mm256_mullo_epi32(t[j], sc));
        }
        x16_fold_256(acc[half], _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b->d + 8 * half))), y, ib, isum, CB);
    }
}
QGEMV_DEFINE_X16_PASS_OF_SUPERBLOCK(iq4_xs)
#else
/* iq4_xs on 8 rows per vector without VNNI (the avx2 variant): the signed levels q =
 * kvalues_iq4nl[nibble] and their magnitudes |q| by two vpshufb, and per column maddubs(|q|, a
 * with q's sign) = the products in exact int16 pairs (|q|, |a| <= 127: 2 127 127 < 2^15), each
 * pair times the row's ls - 32 by madd into the super-block's int32 sum: the same isum as the
 * VNNI pass's, so the same bits, with no offset to take back.  Against the GGUF rows' tile (one
 * row, 8 columns), Intel Xeon, QGEMV_ISA=avx2, builds alternating, 4096 x 4096: 1 thread 0.67
 * -> 0.57 ms; 2 threads batch 8 1.65 -> 1.27, batch 32 6.63 -> 4.90; out of cache (14336 x
 * 4096) 2 threads 1.52 -> 1.39 */
QGEMV_ALWAYS_INLINE void x16_superblock_iq4_xs(const block_iq4_xsx16 *b, const void *dec, const block_q8_K *const *y,
                                               int64_t ib, const int CB, const int hints, x16_acc acc) {
    (void)dec;
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const __m128i kv = _mm_loadu_si128((const __m128i *)kvalues_iq4nl);
    const __m256i table = _mm256_broadcastsi128_si256(kv), mag_table = _mm256_broadcastsi128_si256(_mm_abs_epi8(kv));
    /* each int32 lane's low int16 twice: the row's scale as madd's pair (sc, sc) */
    const __m256i pair = _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13,
                                          0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13);
    for (int half = 0; half < 2; half++) {   /* rows 8 half .. 8 half + 7 */
        const __m256i sl = _mm256_loadu_si256((const __m256i *)(b->scales_l + 32 * half));
        const __m256i sh = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(b->scales_h + 8 * half)));
        __m256i isum[QGEMV_X16_COLS];
        for (int j = 0; j < CB; j++) isum[j] = _mm256_setzero_si256();
        for (int s = 0; s < 8; s++) {   /* sub-block s: qs groups 4 s .. 4 s + 3 */
            const __m256i sc = _mm256_shuffle_epi8(x16_scale8_iq4_xs(sl, sh, s), pair);   /* (ls - 32) twice */
            for (int k = 0; k < 4; k++) {
                if (half == 0) QGEMV_PREFETCH_PASS_LINE_IF(hints, b->qs + 64 * (4 * s + k), CB);
                const __m256i v = _mm256_loadu_si256((const __m256i *)(b->qs + 64 * (4 * s + k) + 32 * half));
                const __m256i n0 = _mm256_and_si256(v, low4), n1 = _mm256_and_si256(_mm256_srli_epi32(v, 4), low4);
                const __m256i q0 = _mm256_shuffle_epi8(table, n0), q1 = _mm256_shuffle_epi8(table, n1);
                const __m256i u0 = _mm256_shuffle_epi8(mag_table, n0), u1 = _mm256_shuffle_epi8(mag_table, n1);
                for (int j = 0; j < CB; j++) {
                    const uint8_t *x = (const uint8_t *)y[j][ib].qs + 32 * s + 4 * k;
                    const __m256i p0 = _mm256_sign_epi8(_mm256_set1_epi32((int)qgemv_k_word(x)), q0);
                    const __m256i p1 = _mm256_sign_epi8(_mm256_set1_epi32((int)qgemv_k_word(x + 16)), q1);
                    isum[j] = qgemv_madd_acc(qgemv_madd_acc(isum[j], _mm256_maddubs_epi16(u0, p0), sc),
                                             _mm256_maddubs_epi16(u1, p1), sc);
                }
            }
        }
        x16_fold_256(acc[half], _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b->d + 8 * half))), y, ib, isum, CB);
    }
}
QGEMV_DEFINE_X16_PASS_OF_SUPERBLOCK(iq4_xs)
#endif
#endif

#if defined(QGEMV_AVX512)
/* tq2_0, x = d (t - 1) with t the 2-bit fields: a super-block's exact
 *     isum_r = sum_i t_ri p_i - sum_i p_i
 * by vpdpbusd of the fields against 4 activations broadcast (in 4 / CB chains per column, so one
 * column is not bound by vpdpbusd's latency), less the column's bsums total; then
 * vec_dot_tq2_0_q8_K's float steps (ternary.h) on 16 rows: super-block 4 m + q into accumulator
 * q by fma(d_r d_y, isum_r), the four added as (q0 + q2) + (q1 + q3), the last nb % 4 added one
 * by one as products.  One row's levels cost a shift and a mask per 64 values where its row
 * kernel decodes and reduces them per column */
#define QGEMV_X16_COLS_TQ2_0 4   /* columns per pass: 4 float accumulators each */
QGEMV_ALWAYS_INLINE void x16_isums_tq2_0(const block_tq2_0x16 *b, const block_q8_K *const *y, int64_t ib, const int CB,
                                         const int hints, __m512i *isum) {
    const int chains = CB == 1 ? 4 : CB == 2 ? 2 : 1;
    const __m512i low2 = _mm512_set1_epi8(3);
    __m512i s[QGEMV_X16_COLS_TQ2_0][4];
    for (int j = 0; j < CB; j++) {
        const int tot = qgemv_hsum_i32x8(_mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)y[j][ib].bsums),
                                                           _mm256_set1_epi16(1)));
        s[j][0] = _mm512_set1_epi32(-tot);
        for (int c = 1; c < chains; c++) s[j][c] = _mm512_setzero_si512();
    }
    for (int g = 0; g < 16; g++) {
        QGEMV_PREFETCH_COLS_LINE_IF(hints, b->qs + 64 * g, CB);
        const __m512i v = _mm512_loadu_si512((const void *)(b->qs + 64 * g));
        for (int f = 0; f < 4; f++) {
            const __m512i u = _mm512_and_si512(f ? _mm512_srli_epi32(v, 2 * f) : v, low2);
            for (int j = 0; j < CB; j++) {
                const uint8_t *x = (const uint8_t *)y[j][ib].qs + 128 * (g / 8) + 32 * f + 4 * (g % 8);
                s[j][f % chains] = qgemv_dpbusd_bcst_512(s[j][f % chains], u, x);
            }
        }
    }
    for (int j = 0; j < CB; j++) {
        __m512i t = s[j][0];
        for (int c = 1; c < chains; c++) t = _mm512_add_epi32(t, s[j][c]);
        isum[j] = t;
    }
}
QGEMV_ALWAYS_INLINE void x16_pass_tq2_0(int64_t nb, const block_tq2_0x16 *p, const uint8_t *a, int64_t act_stride,
                                        const int CB, const int hints, float *out, int64_t out_stride) {
    const block_q8_K *y[QGEMV_X16_COLS_TQ2_0];
    __m512 acc[QGEMV_X16_COLS_TQ2_0][4], res[QGEMV_X16_COLS_TQ2_0];
    for (int j = 0; j < CB; j++) {
        y[j] = (const block_q8_K *)(a + j * act_stride);
        for (int q = 0; q < 4; q++) acc[j][q] = _mm512_setzero_ps();
    }
    __m512i isum[QGEMV_X16_COLS_TQ2_0];
    int64_t ib = 0;
    for (; ib + 4 <= nb; ib += 4)
        for (int q = 0; q < 4; q++) {
            const block_tq2_0x16 *b = p + ib + q;
            x16_isums_tq2_0(b, y, ib + q, CB, hints, isum);
            const __m512 d = x16_factors(b->d);
            for (int j = 0; j < CB; j++)
                acc[j][q] = _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(y[j][ib + q].d)), _mm512_cvtepi32_ps(isum[j]),
                                            acc[j][q]);
        }
    for (int j = 0; j < CB; j++)
        res[j] = _mm512_add_ps(_mm512_add_ps(acc[j][0], acc[j][2]), _mm512_add_ps(acc[j][1], acc[j][3]));
    for (; ib < nb; ib++) {
        const block_tq2_0x16 *b = p + ib;
        x16_isums_tq2_0(b, y, ib, CB, hints, isum);
        const __m512 d = x16_factors(b->d);
        for (int j = 0; j < CB; j++)
            res[j] = _mm512_add_ps(res[j], _mm512_mul_ps(_mm512_cvtepi32_ps(isum[j]), _mm512_mul_ps(d, _mm512_set1_ps(y[j][ib].d))));
    }
    x16_store_512(res, CB, out, out_stride);
}
#elif defined(QGEMV_AVX2)
/* tq2_0 on 8 rows per vector, both halves of the panel in turn: maddubs pairs of fields (<= 3)
 * against 4 activations broadcast, summed in int16 over half a super-block's 16 groups (8 4 2 3
 * 128 < 2^15), then madd with ones; vec_dot_tq2_0_q8_K's float steps as on AVX-512, the four
 * accumulators of each (half, column) in memory (a store and a load per super-block, beside 64
 * maddubs), and the halves' int32 sums too, so that the 16 registers hold the int16 ones (GCC
 * spilled 3 of 4 columns' inside the loop).  Zen 4, QGEMV_ISA=avx2, builds alternating, 4096 x
 * 4096, 2 threads, row tiles -> panels: batch 8 0.91-0.99 -> 0.58 ms, batch 32 3.5-3.9 -> 2.3;
 * a single column 0.237 -> 0.245 in cache (1 thread), 0.92 -> 0.71 on short rows (57344 x 768,
 * out of cache), even on long ones.  A single column takes field 1 where it lies (one and, no
 * shift: 4 t, its own int16 sums, brought back by an exact shift; 8 12 2 128 < 2^15): builds
 * alternating, 1 thread, 4096 x 4096 0.247 -> 0.230 ms (0.95x -> 1.02x ggml), 57344 x 768
 * 0.93-1.02 -> 0.67 (0.80x -> 1.13x), 2 threads out of cache 0.55-0.58 -> 0.37-0.39; a batch so
 * ran 6% slower (batch 8 1.09 -> 1.16 ms), so its fields keep the shifts.  With VNNI a batch sums
 * its fields straight into int32 by vpdpbusd (X16_DPBUSD_SUMS), one instruction a field vector and
 * column for maddubs and the int16 add: avxvnni, Intel Xeon, 2 threads, batch 8 0.575 -> 0.53 ms,
 * batch 32 2.30 -> 2.13; in two chains a column (odd fields apart), so 4 columns' chains do not
 * wait on vpdpbusd's latency: batch 8 0.64-0.67 -> 0.57-0.58 ms, 32 2.39-2.54 -> 2.21-2.39, 3
 * 0.31-0.32 -> 0.26-0.27 (builds alternating) */
#define QGEMV_X16_COLS_TQ2_0 4
QGEMV_ALWAYS_INLINE void x16_pass_tq2_0(int64_t nb, const block_tq2_0x16 *p, const uint8_t *a, int64_t act_stride,
                                        const int CB, const int hints, float *out, int64_t out_stride) {
    const __m256i low2 = _mm256_set1_epi8(3), field1 = _mm256_set1_epi8(0x0c), ones = _mm256_set1_epi16(1);
    const int in_place = CB == 1;   /* field 1 where it lies, 4 t, into t4 (above) */
    const block_q8_K *y[QGEMV_X16_COLS_TQ2_0];
    __m256 acc[2][QGEMV_X16_COLS_TQ2_0][4], res[2][QGEMV_X16_COLS_TQ2_0];
    int32_t tot[QGEMV_X16_COLS_TQ2_0];
    for (int j = 0; j < CB; j++) {
        y[j] = (const block_q8_K *)(a + j * act_stride);
        for (int h = 0; h < 2; h++)
            for (int q = 0; q < 4; q++) acc[h][j][q] = _mm256_setzero_ps();
    }
    for (int64_t ib = 0; ib < nb; ib++) {
        const block_tq2_0x16 *b = p + ib;
        const int q = (int)(ib & 3), tail = ib >= nb / 4 * 4;
        for (int j = 0; j < CB; j++)   /* sum_i p_i, the fields' offset */
            tot[j] = qgemv_hsum_i32x8(_mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)y[j][ib].bsums), ones));
        for (int half = 0; half < 2; half++) {   /* rows 8 half .. 8 half + 7 */
            int32_t sums[2][QGEMV_X16_COLS_TQ2_0][8];   /* in memory: the 16 registers hold t */
            for (int h = 0; h < 2; h++) {   /* values 128 h .. 128 h + 127 */
                /* t: int16 sums, or int32 ones by vpdpbusd (X16_DPBUSD_SUMS); t4: field 1 in place, 4 t,
                 * or with vpdpbusd the odd fields' sums, a second chain */
                __m256i t[QGEMV_X16_COLS_TQ2_0], t4[QGEMV_X16_COLS_TQ2_0];
                for (int j = 0; j < CB; j++) t[j] = t4[j] = _mm256_setzero_si256();
                for (int k = 0; k < 8; k++) {
                    const int g = 8 * h + k;
                    if (half == 0) QGEMV_PREFETCH_PASS_LINE_IF(hints, b->qs + 64 * g, CB);
                    const __m256i v = _mm256_loadu_si256((const __m256i *)(b->qs + 64 * g + 32 * half));
                    for (int f = 0; f < 4; f++) {
                        const __m256i u = f == 1 && in_place ? _mm256_and_si256(v, field1)
                                                             : _mm256_and_si256(f ? _mm256_srli_epi32(v, 2 * f) : v, low2);
                        for (int j = 0; j < CB; j++) {
                            const uint8_t *x = (const uint8_t *)y[j][ib].qs + 128 * h + 32 * f + 4 * k;
#if defined(QGEMV_VNNI)
                            if (X16_DPBUSD_SUMS(CB) && f & 1) {   /* two chains a column: fields 1, 3 in t4 */
                                t4[j] = qgemv_dpbusd_256(t4[j], u, _mm256_set1_epi32((int)qgemv_k_word(x)));
                                QGEMV_IN_REGISTER(t4[j]);
                                continue;
                            }
                            if (X16_DPBUSD_SUMS(CB)) {   /* fields 0, 2 in t */
                                t[j] = qgemv_dpbusd_256(t[j], u, _mm256_set1_epi32((int)qgemv_k_word(x)));
                                QGEMV_IN_REGISTER(t[j]);
                                continue;
                            }
#endif
                            const __m256i p = _mm256_maddubs_epi16(u, _mm256_set1_epi32((int)qgemv_k_word(x)));
                            if (f == 1 && in_place) t4[j] = _mm256_add_epi16(t4[j], p);
                            else t[j] = _mm256_add_epi16(t[j], p);
                            QGEMV_IN_REGISTER(t[j]);
                            if (in_place) QGEMV_IN_REGISTER(t4[j]);
                        }
                    }
                }
                for (int j = 0; j < CB; j++)
                    _mm256_storeu_si256((__m256i *)sums[h][j],
                                        X16_DPBUSD_SUMS(CB) ? _mm256_add_epi32(t[j], t4[j])
                                        : _mm256_madd_epi16(in_place ? _mm256_add_epi16(t[j], _mm256_srai_epi16(t4[j], 2)) : t[j],
                                                            ones));
            }
            __m256i isum[QGEMV_X16_COLS_TQ2_0];
            for (int j = 0; j < CB; j++)
                isum[j] = _mm256_sub_epi32(_mm256_add_epi32(_mm256_loadu_si256((const __m256i *)sums[0][j]),
                                                            _mm256_loadu_si256((const __m256i *)sums[1][j])),
                                           _mm256_set1_epi32(tot[j]));
            const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b->d + 8 * half)));
            for (int j = 0; j < CB; j++) {
                const __m256 dd = _mm256_mul_ps(d, _mm256_set1_ps(y[j][ib].d));
                if (!tail)   /* super-block 4 m + q into accumulator q */
                    acc[half][j][q] = _mm256_fmadd_ps(dd, _mm256_cvtepi32_ps(isum[j]), acc[half][j][q]);
                else {       /* the last nb % 4, one by one as products, after the four's sum */
                    if (ib == nb / 4 * 4)
                        res[half][j] = _mm256_add_ps(_mm256_add_ps(acc[half][j][0], acc[half][j][2]),
                                                     _mm256_add_ps(acc[half][j][1], acc[half][j][3]));
                    res[half][j] = _mm256_add_ps(res[half][j], _mm256_mul_ps(_mm256_cvtepi32_ps(isum[j]), dd));
                }
            }
        }
    }
    if (nb % 4 == 0)
        for (int h = 0; h < 2; h++)
            for (int j = 0; j < CB; j++)
                res[h][j] = _mm256_add_ps(_mm256_add_ps(acc[h][j][0], acc[h][j][2]), _mm256_add_ps(acc[h][j][1], acc[h][j][3]));
    x16_store_256(res, CB, out, out_stride);
}
#endif

#if defined(QGEMV_AVX2)
/* a single column's pass with its hints or without, as the CPU asks (qgemv_prefetch_one_column,
 * chosen once per pass: the idle hints of a Zen 4, both a line at the line about to be loaded,
 * cost its panels' GEMV in L2, 512 x 4096, 1 thread, q6_K 10%, q4_K 6%) */
#define QGEMV_X16_ONE_COLUMN(name, nb, p, a_, s, o, os)                                          \
    (qgemv_prefetch_one_column ? x16_pass_##name(nb, p, a_, s, 1, 1, o, os) : x16_pass_##name(nb, p, a_, s, 1, 0, o, os))
#define QGEMV_X16_CASES_2(name, nb, p, a_, s, o, os)                                             \
    case 1: QGEMV_X16_ONE_COLUMN(name, nb, p, a_, s, o, os); break;                              \
    default: x16_pass_##name(nb, p, a_, s, 2, 1, o, os); break;
#define QGEMV_X16_CASES_4(name, nb, p, a_, s, o, os)                                             \
    case 1: QGEMV_X16_ONE_COLUMN(name, nb, p, a_, s, o, os); break;                              \
    case 2: x16_pass_##name(nb, p, a_, s, 2, 1, o, os); break;                                   \
    case 3: x16_pass_##name(nb, p, a_, s, 3, 1, o, os); break;                                   \
    default: x16_pass_##name(nb, p, a_, s, 4, 1, o, os); break;
#define QGEMV_X16_CASES_8(name, nb, p, a_, s, o, os)                                             \
    case 1: QGEMV_X16_ONE_COLUMN(name, nb, p, a_, s, o, os); break;                              \
    case 2: x16_pass_##name(nb, p, a_, s, 2, 1, o, os); break;                                   \
    case 3: x16_pass_##name(nb, p, a_, s, 3, 1, o, os); break;                                   \
    case 4: x16_pass_##name(nb, p, a_, s, 4, 1, o, os); break;                                   \
    case 5: x16_pass_##name(nb, p, a_, s, 5, 1, o, os); break;                                   \
    case 6: x16_pass_##name(nb, p, a_, s, 6, 1, o, os); break;                                   \
    case 7: x16_pass_##name(nb, p, a_, s, 7, 1, o, os); break;                                   \
    default: x16_pass_##name(nb, p, a_, s, 8, 1, o, os); break;
#define QGEMV_X16_CASES_(cols, ...) QGEMV_X16_CASES_##cols(__VA_ARGS__)
#define QGEMV_X16_CASES(cols, ...) QGEMV_X16_CASES_(cols, __VA_ARGS__)
#endif
/* ---------------------------------------------------------------- AMX tiles (Intel) */
/* On CPUs with AMX-INT8 (qgemv_amx_tiles: qgemv/_dispatch.py, amx), batches of
 * QGEMV_X16_AMX_MIN_COLS columns and more of q2_K, q4_K and q5_K (here), iq4_xs and q6_K
 * (below) take a super-block's integer sums for 16 rows x up to 16 columns from tdpbsud, 16 x
 * 16 x 64 products an instruction (vpdpbusd: 16 x 4): tile A holds a column per row, 64 of its
 * int8 activations as stored (act_stride apart); tile B 16 rows of 64 bytes, row k values 4 k
 * .. 4 k + 3 of each panel row, a dword per row (vpdpbusd's layout, the panels' own).  tdpbsud adds into C[j][r] sum_k p_jk B_kr, so the rows' scales
 * must be in B: a scale sc (6 bits) is 8 sc_hi + sc_lo (3 bits each), u sc_lo and u sc_hi fit
 * a byte (<= 105), and three tiles sum a whole super-block, exactly:
 *     C_lo = sum_i p_i u_i sc_lo,  C_hi = sum_i p_i u_i sc_hi,  C_m = sum_i p_i m_s(i),
 *     isum = 8 C_hi + C_lo,  msum = C_m  (the passes' sum_s sc_s sum u p and sum_s m_s bsum_s),
 * then the passes' two fmas: the same exact integers, the same fmas, the same bits.  The scaled
 * levels come from a 128-byte table, u f at 16 f + u (vpermt2b), once per super-block for every
 * group of columns.  C harness, Intel Xeon (AMX), 4096 x 4096, 1 thread, VNNI passes -> tiles:
 * batch 32 2.5-3.6 -> 1.67-1.8 ms (each sub-block's sums from its own tile, scaled by vpmulld
 * after a tile store: 2.3-2.45); through QMatrix, 1 / 2 threads, batch 16 1.34 / 1.33x, 32 1.64 /
 * 1.60x, 64 1.75x.  A group costs the tiles about the same for 4 columns as for 16 (0.78-0.95 ms
 * a batch, 1 thread), so from 12 columns on (12: 0.94-1.05 -> 0.86-0.89 ms; 8: 0.72-0.75 ->
 * 0.81-0.95).  q5_K's fifth bits take a fourth tile, C_5 = sum_i p_i b_i sc (isum = C_lo +
 * 8 C_hi + 16 C_5), against its wide passes: batch 32 2.5 -> 1.95-2.05 ms (C harness), through
 * QMatrix 1 / 2 threads batch 12 1.05x, 16 1.28 / 1.26x, 32 1.38 / 1.30x. */
#if defined(QGEMV_AMX)
#define QGEMV_X16_AMX_MIN_COLS 12
/* tiles 0, 1, 2: C_lo, C_hi, C_m; 3: q5_K's C_5, q4_K's second tile A (G rows, the columns, of
 * 64 bytes: 16 int32 sums, one per panel row, or 64 activations); 4: tile A; 5, 6, 7: the B of
 * C_lo, C_hi and C_m, then q5_K's B of C_5 in 5 (16 x 64 bytes) */
QGEMV_AMX_TARGET static void x16_amx_configure(int G) {
    const uint8_t rows[8] = {(uint8_t)G, (uint8_t)G, (uint8_t)G, (uint8_t)G, (uint8_t)G, 16, 16, 16};
    qgemv_tile_configure(rows);
}
/* 16 rows' bytes (row r's at byte r) -> each in every byte of the row's dword (B's layout) */
QGEMV_AMX_TARGET static inline __m512i x16_amx_per_row(__m128i bytes) {
    const __m512i spread = _mm512_set_epi32(0x0f0f0f0f, 0x0e0e0e0e, 0x0d0d0d0d, 0x0c0c0c0c, 0x0b0b0b0b, 0x0a0a0a0a,
                                            0x09090909, 0x08080808, 0x07070707, 0x06060606, 0x05050505, 0x04040404,
                                            0x03030303, 0x02020202, 0x01010101, 0x00000000);
    return _mm512_permutexvar_epi8(spread, _mm512_castsi128_si512(bytes));
}
/* u f for f < 8 and u < 16, at 16 f + u */
#define X16_AMX_TIMES(f) 0 * f, 1 * f, 2 * f, 3 * f, 4 * f, 5 * f, 6 * f, 7 * f, 8 * f, 9 * f, 10 * f, 11 * f, \
    12 * f, 13 * f, 14 * f, 15 * f
static const uint8_t x16_amx_times[128] = {X16_AMX_TIMES(0), X16_AMX_TIMES(1), X16_AMX_TIMES(2), X16_AMX_TIMES(3),
                                           X16_AMX_TIMES(4), X16_AMX_TIMES(5), X16_AMX_TIMES(6), X16_AMX_TIMES(7)};
/* a super-block's B tiles, values 64 c .. 64 c + 63 (sub-blocks 2 c, 2 c + 1) in each [c]: the
 * levels' low 4 bits u times sc_lo and times sc_hi, the rows' minimums, and q5_K's fifth bits
 * times sc (the levels u + 16 b: (u + 16 b) sc = u sc_lo + 8 u sc_hi + 16 b sc) */
typedef struct {
    _Alignas(64) uint8_t lo[4][16][64], hi[4][16][64], mins[4][16][64], fifth[4][16][64];
} x16_amx_operands;
/* the B tiles of a q4_K (qh NULL) or q5_K super-block's scales, levels qs and fifth bits qh
 * (bit 2 c + half of qh line k's bytes: sub-block 2 c + half's, as x16_k45_step) */
QGEMV_AMX_TARGET static inline void x16_amx_operands_k45(const uint8_t *scales, const uint8_t *qs, const uint8_t *qh,
                                                         x16_amx_operands *o) {
    uint8_t sc[128], mn[128];
    x16_scales_mins(scales, sc, mn);
    const __m512i t0 = _mm512_loadu_si512((const void *)x16_amx_times), t1 = _mm512_loadu_si512((const void *)(x16_amx_times + 64));
    const __m512i nibble = _mm512_set1_epi8(0x0f), f3 = _mm512_set1_epi8(0x70);
    for (int s = 0; s < 8; s++) {
        const __m512i scs = x16_amx_per_row(_mm_loadu_si128((const __m128i *)(sc + 16 * s)));
        const __m512i flo = _mm512_and_si512(_mm512_slli_epi32(scs, 4), f3);   /* 16 sc_lo: bits 0-2 -> 4-6 */
        const __m512i fhi = _mm512_and_si512(_mm512_slli_epi32(scs, 1), f3);   /* 16 sc_hi: bits 3-5 -> 4-6 */
        const __m512i m = x16_amx_per_row(_mm_loadu_si128((const __m128i *)(mn + 16 * s)));
        const int c = s / 2, half = s % 2;   /* qs group 8 c + k: sub-block 2 c low nibbles, 2 c + 1 high */
        for (int k = 0; k < 8; k++) {
            const __m512i v = _mm512_loadu_si512((const void *)(qs + 64 * (8 * c + k)));
            const __m512i u = half ? _mm512_srli_epi32(v, 4) : v;
            /* (u & 0x0f) | 16 f: the table's index */
            const __m512i ilo = _mm512_ternarylogic_epi32(u, nibble, flo, 0xEA);
            const __m512i ihi = _mm512_ternarylogic_epi32(u, nibble, fhi, 0xEA);
            _mm512_store_si512((void *)o->lo[c][8 * half + k], _mm512_permutex2var_epi8(t0, ilo, t1));
            _mm512_store_si512((void *)o->hi[c][8 * half + k], _mm512_permutex2var_epi8(t0, ihi, t1));
            _mm512_store_si512((void *)o->mins[c][8 * half + k], m);
            if (qh) {
                const __mmask64 b = _mm512_test_epi8_mask(_mm512_loadu_si512((const void *)(qh + 64 * k)),
                                                          _mm512_set1_epi8((char)(1 << s)));
                _mm512_store_si512((void *)o->fifth[c][8 * half + k], _mm512_maskz_mov_epi8(b, scs));
            }
        }
    }
}
/* values 64 c ..: tile A (ta) from the columns' activations, and the products into C_lo, C_m,
 * and, with_hi, C_hi, and, with5, C_5 */
#define X16_AMX_STEP(ta, c, qa, act_stride, o, with_hi, with5)                                  \
    do {                                                                                         \
        _tile_loadd(ta, (qa) + 64 * (c), act_stride);                                           \
        _tile_loadd(5, (o)->lo[c], 64);                                                          \
        _tile_loadd(7, (o)->mins[c], 64);                                                        \
        _tile_dpbsud(0, ta, 5);                                                                  \
        _tile_dpbsud(2, ta, 7);                                                                  \
        if (with_hi) {                                                                           \
            _tile_loadd(6, (o)->hi[c], 64);                                                      \
            _tile_dpbsud(1, ta, 6);                                                              \
        }                                                                                        \
        if (with5) {                                                                             \
            _tile_loadd(5, (o)->fifth[c], 64);                                                   \
            _tile_dpbsud(3, ta, 5);                                                              \
        }                                                                                        \
    } while (0)
/* super-block ib (factors d, dmin) against G columns (column j's q8_K blocks at a + j
 * act_stride): acc[j] (lane r: panel row r) gets the passes' two fmas; isum = C_lo (q2_K, whose
 * scaled levels fit a byte whole), + 8 C_hi (q4_K), + 16 C_5 (q5_K) */
QGEMV_AMX_TARGET static inline void x16_amx_group_k(const qgemv_half *dq, const qgemv_half *dmq, int64_t ib,
                                                    const uint8_t *a, int64_t act_stride, const int G,
                                                    const x16_amx_operands *o, const int with_hi, const int fifth,
                                                    float acc[16][16]) {
    const uint8_t *qa = a + ib * (int64_t)sizeof(block_q8_K) + offsetof(block_q8_K, qs);
    _tile_zero(0);
    if (with_hi) _tile_zero(1);
    _tile_zero(2);
    if (fifth) {
        _tile_zero(3);
        X16_AMX_STEP(4, 0, qa, act_stride, o, 1, 1);
        X16_AMX_STEP(4, 1, qa, act_stride, o, 1, 1);
        X16_AMX_STEP(4, 2, qa, act_stride, o, 1, 1);
        X16_AMX_STEP(4, 3, qa, act_stride, o, 1, 1);
    } else {   /* tile 3 free: tile A in turns */
        X16_AMX_STEP(3, 0, qa, act_stride, o, with_hi, 0);
        X16_AMX_STEP(4, 1, qa, act_stride, o, with_hi, 0);
        X16_AMX_STEP(3, 2, qa, act_stride, o, with_hi, 0);
        X16_AMX_STEP(4, 3, qa, act_stride, o, with_hi, 0);
    }
    _Alignas(64) int32_t sums[4][16][16];   /* C_lo, C_hi, C_m, C_5 */
    _tile_stored(0, sums[0], 64);
    if (with_hi) _tile_stored(1, sums[1], 64);
    _tile_stored(2, sums[2], 64);
    if (fifth) _tile_stored(3, sums[3], 64);
    const __m512 d = x16_factors(dq), dmin = x16_factors(dmq);
    for (int j = 0; j < G; j++) {
        const block_q8_K *y = (const block_q8_K *)(a + j * act_stride);
        __m512i isum = _mm512_load_si512((const void *)sums[0][j]);
        if (with_hi) isum = _mm512_add_epi32(isum, _mm512_slli_epi32(_mm512_load_si512((const void *)sums[1][j]), 3));
        if (fifth) isum = _mm512_add_epi32(isum, _mm512_slli_epi32(_mm512_load_si512((const void *)sums[3][j]), 4));
        const __m512i msum = _mm512_load_si512((const void *)sums[2][j]);
        __m512 s = _mm512_load_ps(acc[j]);
        x16_fold_512(&s, d, &y, ib, &isum, 1);
        x16_fold_min_512(&s, dmin, &y, ib, &msum, 1);
        _mm512_store_ps(acc[j], s);
    }
}
/* q2_K's B tiles: row k of values 64 c .. is qs group 8 h + 4 gg + kk's field f (h = c / 2, f =
 * 2 (c % 2) + k / 8, gg = k / 4 % 2, kk = k % 4: values 128 h + 32 f + 16 gg + 4 kk ..), its levels
 * times the scale of sub-block 8 h + 2 f + gg (x16_scaled_levels_q2_K, <= 45), and the rows'
 * minimums (the scale bytes' high nibbles), each sub-block's table and minimums made once for
 * its 4 rows.  Against its wide passes (C harness, 4096 x 4096, 1 thread, batch 32): 2.52-2.57 ->
 * 1.48 ms (1.98-2.08 with the table and minimums remade for every row); through QMatrix, 2
 * threads, batch 16 1.70x, 32 1.67x. */
QGEMV_AMX_TARGET static inline void x16_amx_operands_q2_K(const block_q2_Kx16 *b, x16_amx_operands *o) {
    for (int c = 0; c < 4; c++)
        for (int k4 = 0; k4 < 4; k4++) {   /* rows 4 k4 .. 4 k4 + 3: one sub-block's table and minimums */
            const int h = c / 2, f = 2 * (c % 2) + k4 / 2, gg = k4 % 2;
            const uint8_t *scales = b->scales + 16 * (8 * h + 2 * f + gg);
            const __m512i table = x16_scale_table_q2_K(scales);
            const __m512i m = x16_amx_per_row(_mm_and_si128(_mm_srli_epi16(_mm_loadu_si128((const __m128i *)scales), 4),
                                                            _mm_set1_epi8(0x0f)));
            for (int kk = 0; kk < 4; kk++) {
                const __m512i v = _mm512_loadu_si512((const void *)(b->qs + 64 * (8 * h + 4 * gg + kk)));
                const __m512i u = _mm512_and_si512(_mm512_srli_epi32(v, 2 * f), _mm512_set1_epi8(3));
                _mm512_store_si512((void *)o->lo[c][4 * k4 + kk], x16_scaled_levels_q2_K(table, u));
                _mm512_store_si512((void *)o->mins[c][4 * k4 + kk], m);
            }
        }
}
/* panel_tile_<name> on AMX: columns in chunks of up to 64, each in groups of G <= 16 (the last
 * group ends at the chunk's end, overlapping the one before: its columns' sums again, the same
 * bits), every group of a panel block against its B tiles (operands_type, made once by
 * MAKE(b, &o)), GROUP(b, ib, columns, act_stride, G, &o, acc) for each */
#define QGEMV_DEFINE_X16_AMX_TILE(name, operands_type)                              \
    QGEMV_AMX_TARGET static void x16_amx_tile_##name(int64_t n, const void *restrict panels, int64_t panel_stride, \
                                                     int64_t npanels, const void *restrict a, int64_t act_stride, \
                                                     int64_t ncols, float *restrict out, int64_t out_stride) { \
        operands_type o;                                                                        \
        _Alignas(64) float acc[4][16][16];                                                      \
        int configured = 0;                                                                     \
        for (int64_t c0 = 0; c0 < ncols; c0 += 64) {                                            \
            const int64_t w = ncols - c0 < 64 ? ncols - c0 : 64, groups = (w + 15) / 16, G = (w + groups - 1) / groups; \
            if (G != configured) x16_amx_configure(configured = (int)G);                        \
            for (int64_t i = 0; i < npanels; i++) {                                             \
                const block_##name##x16 *p = (const block_##name##x16 *)((const uint8_t *)panels + i * panel_stride); \
                memset(acc, 0, sizeof acc);                                                     \
                for (int64_t ib = 0; ib < n / QK_K; ib++) {                                     \
                    x16_amx_make_##name(p + ib, &o);                                            \
                    for (int64_t g = 0; g < groups; g++) {                                      \
                        const int64_t cg = g + 1 < groups ? g * G : w - G;                      \
                        x16_amx_group_##name(p + ib, ib, (const uint8_t *)a + (c0 + cg) * act_stride, act_stride, \
                                             (int)G, &o, acc[g]);                                \
                    }                                                                           \
                }                                                                               \
                for (int64_t g = 0; g < groups; g++) {                                          \
                    const int64_t cg = g + 1 < groups ? g * G : w - G;                          \
                    for (int64_t j = 0; j < G; j++)                                             \
                        for (int r = 0; r < 16; r++) out[(16 * i + r) * out_stride + c0 + cg + j] = acc[g][j][r]; \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
        _tile_release();                                                                        \
    }
#define QGEMV_DEFINE_X16_AMX_FORMAT(name, operands_type, make, group_call)                       \
    QGEMV_AMX_TARGET static inline void x16_amx_make_##name(const block_##name##x16 *b, operands_type *o) { make; } \
    QGEMV_AMX_TARGET static inline void x16_amx_group_##name(const block_##name##x16 *b, int64_t ib, const uint8_t *a, \
                                                             int64_t act_stride, int G, const operands_type *o, \
                                                             float acc[16][16]) { group_call; }  \
    QGEMV_DEFINE_X16_AMX_TILE(name, operands_type)
/* iq4_xs and q6_K: signed levels q times signed scales sc per 32 (iq4_xs: ls - 32, 6 bits) or
 * 16 values (q6_K: int8), |q sc| <= 4096, so the product is 64 H + L with H = its floor / 64
 * in [-64, 64] (int8) and L its remainder in [0, 63], and two tiles sum a whole super-block:
 *     C_H = sum_i p_i H_i (tdpbssd),  C_L = sum_i p_i L_i (tdpbsud),  isum = 64 C_H + C_L,
 * the passes' sum_s sc_s sum q p, exactly, then their one fma.  The products come from 16-bit
 * multiplies of the even and the odd bytes, once per super-block for every group of columns.
 * C harness, Intel Xeon (AMX), 4096 x 4096, 1 thread, batch 32: iq4_xs passes 2.5-2.7 -> tiles
 * 1.74-1.9 ms (the products packed back to bytes by vpmovwb: 2.18-2.3), q6_K 3.0 -> 1.85-1.92;
 * through QMatrix, 2 threads, batch 12 0.94x / 1.04x, 16 1.08x / 1.20x, 32 1.39-1.47x / 1.50x. */
typedef struct {
    _Alignas(64) int8_t hi[4][16][64];
    _Alignas(64) uint8_t lo[4][16][64];
} x16_amx_operands_hl;
/* iq4_xs's operands: values 64 c .. of tile B, row 8 h + k of sub-block 2 c + h, are qs group
 * 4 (2 c + h) + k's low nibbles (k < 4) or group 4 (2 c + h) + k - 4's high ones (values 16 on) */
QGEMV_AMX_TARGET static inline void x16_amx_operands_iq4_xs(const block_iq4_xsx16 *b, x16_amx_operands_hl *o) {
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    const __m512i table = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)kvalues_iq4nl));
    const __m512i sl = _mm512_loadu_si512((const void *)b->scales_l);
    const __m512i sh = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)b->scales_h));
    for (int s = 0; s < 8; s++) {
        const __m512i f = qgemv_amx_words(x16_scale_iq4_xs(sl, sh, s));
        const int c = s / 2, h = s % 2;
        for (int k = 0; k < 8; k++) {
            const __m512i v = _mm512_loadu_si512((const void *)(b->qs + 64 * (4 * s + k % 4)));
            const __m512i q = _mm512_shuffle_epi8(table, _mm512_and_si512(k < 4 ? v : _mm512_srli_epi32(v, 4), low4));
            __m512i H, L;
            qgemv_amx_split_hl(q, f, &H, &L);
            _mm512_store_si512((void *)o->hi[c][8 * h + k], H);
            _mm512_store_si512((void *)o->lo[c][8 * h + k], L);
        }
    }
}
/* q6_K's operands: group k of half h (x16_levels_q6_K) is row k of tile B for values 128 h ..
 * (c = 2 h, its low nibbles) and 128 h + 64 .. (c = 2 h + 1, its high ones), q = u - 32, times
 * the scale of sub-block 8 h + k / 4 or 8 h + 4 + k / 4 */
QGEMV_AMX_TARGET static inline void x16_amx_operands_q6_K(const block_q6_Kx16 *b, x16_amx_operands_hl *o) {
    const __m512i offset = _mm512_set1_epi8(32);
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < 16; k++) {
            __m512i u[2];
            x16_levels_q6_K(b, h, k, &u[0], &u[1]);
            for (int e = 0; e < 2; e++) {
                const __m512i f = qgemv_amx_words(_mm512_cvtepi8_epi32(
                    _mm_loadu_si128((const __m128i *)(b->scales + 16 * (8 * h + 4 * e + k / 4)))));
                __m512i H, L;
                qgemv_amx_split_hl(_mm512_sub_epi8(u[e], offset), f, &H, &L);
                _mm512_store_si512((void *)o->hi[2 * h + e][k], H);
                _mm512_store_si512((void *)o->lo[2 * h + e][k], L);
            }
        }
}
#define X16_AMX_STEP_HL(ta, c, qa, act_stride, o)                                               \
    do {                                                                                         \
        _tile_loadd(ta, (qa) + 64 * (c), act_stride);                                           \
        _tile_loadd(5, (o)->hi[c], 64);                                                          \
        _tile_loadd(6, (o)->lo[c], 64);                                                          \
        _tile_dpbssd(0, ta, 5);                                                                  \
        _tile_dpbsud(1, ta, 6);                                                                  \
    } while (0)
/* super-block ib (factors d) against G columns (column j's q8_K blocks at a + j act_stride):
 * acc[j] (lane r: panel row r) gets the passes' fma */
QGEMV_AMX_TARGET static inline void x16_amx_group_hl(const qgemv_half *dq, int64_t ib, const uint8_t *a,
                                                     int64_t act_stride, const int G, const x16_amx_operands_hl *o,
                                                     float acc[16][16]) {
    const uint8_t *qa = a + ib * (int64_t)sizeof(block_q8_K) + offsetof(block_q8_K, qs);
    _tile_zero(0);
    _tile_zero(1);
    X16_AMX_STEP_HL(3, 0, qa, act_stride, o);
    X16_AMX_STEP_HL(4, 1, qa, act_stride, o);
    X16_AMX_STEP_HL(3, 2, qa, act_stride, o);
    X16_AMX_STEP_HL(4, 3, qa, act_stride, o);
    _Alignas(64) int32_t sums[2][16][16];   /* C_H, C_L */
    _tile_stored(0, sums[0], 64);
    _tile_stored(1, sums[1], 64);
    const __m512 d = x16_factors(dq);
    for (int j = 0; j < G; j++) {
        const block_q8_K *y = (const block_q8_K *)(a + j * act_stride);
        const __m512i isum = _mm512_add_epi32(_mm512_slli_epi32(_mm512_load_si512((const void *)sums[0][j]), 6),
                                              _mm512_load_si512((const void *)sums[1][j]));
        __m512 s = _mm512_load_ps(acc[j]);
        x16_fold_512(&s, d, &y, ib, &isum, 1);
        _mm512_store_ps(acc[j], s);
    }
}
QGEMV_DEFINE_X16_AMX_FORMAT(q2_K, x16_amx_operands, x16_amx_operands_q2_K(b, o),
                            x16_amx_group_k(b->d, b->dmin, ib, a, act_stride, G, o, 0, 0, acc))
QGEMV_DEFINE_X16_AMX_FORMAT(q4_K, x16_amx_operands, x16_amx_operands_k45(b->scales, b->qs, NULL, o),
                            x16_amx_group_k(b->d, b->dmin, ib, a, act_stride, G, o, 1, 0, acc))
QGEMV_DEFINE_X16_AMX_FORMAT(q5_K, x16_amx_operands, x16_amx_operands_k45(b->scales, b->qs, b->qh, o),
                            x16_amx_group_k(b->d, b->dmin, ib, a, act_stride, G, o, 1, 1, acc))
QGEMV_DEFINE_X16_AMX_FORMAT(iq4_xs, x16_amx_operands_hl, x16_amx_operands_iq4_xs(b, o),
                            x16_amx_group_hl(b->d, ib, a, act_stride, G, o, acc))
QGEMV_DEFINE_X16_AMX_FORMAT(q6_K, x16_amx_operands_hl, x16_amx_operands_q6_K(b, o),
                            x16_amx_group_hl(b->d, ib, a, act_stride, G, o, acc))
/* the formats' panel tiles ask first whether AMX takes the batch (1: done) */
#define QGEMV_X16_AMX_TRY_q4_K(...) (qgemv_amx_tiles && ncols >= QGEMV_X16_AMX_MIN_COLS ? (x16_amx_tile_q4_K(__VA_ARGS__), 1) : 0)
#define QGEMV_X16_AMX_TRY_q5_K(...) (qgemv_amx_tiles && ncols >= QGEMV_X16_AMX_MIN_COLS ? (x16_amx_tile_q5_K(__VA_ARGS__), 1) : 0)
#define QGEMV_X16_AMX_TRY_iq4_xs(...) (qgemv_amx_tiles && ncols >= QGEMV_X16_AMX_MIN_COLS ? (x16_amx_tile_iq4_xs(__VA_ARGS__), 1) : 0)
#define QGEMV_X16_AMX_TRY_q6_K(...) (qgemv_amx_tiles && ncols >= QGEMV_X16_AMX_MIN_COLS ? (x16_amx_tile_q6_K(__VA_ARGS__), 1) : 0)
#define QGEMV_X16_AMX_TRY_q2_K(...) (qgemv_amx_tiles && ncols >= QGEMV_X16_AMX_MIN_COLS ? (x16_amx_tile_q2_K(__VA_ARGS__), 1) : 0)
#else
#define QGEMV_X16_AMX_TRY_q2_K(...) 0
#define QGEMV_X16_AMX_TRY_q6_K(...) 0
#define QGEMV_X16_AMX_TRY_iq4_xs(...) 0
#define QGEMV_X16_AMX_TRY_q4_K(...) 0
#define QGEMV_X16_AMX_TRY_q5_K(...) 0
#endif
#define QGEMV_X16_NO_AMX(...) 0
#define QGEMV_X16_AMX_TRY_tq2_0(...) 0
#define QGEMV_X16_AMX_TRY_q3_K(...) 0

/* rows shorter than this read a single column's panels one at a time whatever the format's pairs:
 * one stream through the prepared copy, where a pair's second stream starts afresh every two
 * short panels.  Zen 4, out of cache, builds alternating, pairs -> one at a time, 1 / 2 threads:
 * 768 values q5_K 3.98 -> 1.76 / 2.04 -> 1.09 ms, iq4_xs 3.05 -> 1.35 / 1.57 -> 0.73, q3_K 3.36
 * -> 1.57 (1 thread); 2048 values q3_K 2.30 -> 1.85, q5_K 2.26 -> 1.71; 3072 q3_K 1.94 -> 1.66;
 * but 4096 q3_K 1.76 -> 1.85 / 0.99 -> 1.11 (iq4_xs 1.48 -> 1.37); in cache (2048 x 768) q5_K
 * and q3_K 5% slower */
#define X16_PAIRS_MIN_VALUES 4096
/* a driver's pairs for a format without x16_single_column_pairs_<name>: none, one panel at a time */
static inline int64_t x16_no_pairs(int64_t n, const void *panels, int64_t panel_stride, int64_t npanels,
                                   const void *a, float *out, int64_t out_stride) {
    (void)n, (void)panels, (void)panel_stride, (void)npanels, (void)a, (void)out, (void)out_stride;
    return 0;
}
/* the panels a single column's pairs did first (0: a batch, or rows shorter than
 * X16_PAIRS_MIN_VALUES), for the drivers below */
typedef int64_t (*x16_pairs_fn)(int64_t n, const void *panels, int64_t panel_stride, int64_t npanels,
                                const void *a, float *out, int64_t out_stride);
static inline int64_t x16_pairs_first(x16_pairs_fn pairs, int64_t n, const void *panels, int64_t panel_stride,
                                      int64_t npanels, const void *a, int64_t ncols, float *out, int64_t out_stride) {
    return ncols == 1 && n >= X16_PAIRS_MIN_VALUES ? pairs(n, panels, panel_stride, npanels, a, out, out_stride) : 0;
}
/* vec_dot_tile over npanels panels (panel_stride bytes apart) by the format's pass: each panel
 * against the columns, cols (2, 4 or 8) at a time; block_values values per panel block; a
 * single column first through pairs (x16_single_column_pairs_<name>, or x16_no_pairs) */
#define QGEMV_DEFINE_X16_TILE_BY_PASSES(name, block_values, cols, pairs)                         \
    QGEMV_DEFINE_X16_TILE_BY_PASSES_AS(panel_tile_##name, name, block_values, cols, pairs)
#define QGEMV_DEFINE_X16_TILE_BY_PASSES_AS(fn, name, block_values, cols, pairs)                  \
    static void fn(int64_t n, const void *restrict panels, int64_t panel_stride,                \
                   int64_t npanels, const void *restrict a, int64_t act_stride,                 \
                   int64_t ncols, float *restrict out, int64_t out_stride) {                    \
        if (QGEMV_X16_AMX_TRY_##name(n, panels, panel_stride, npanels, a, act_stride, ncols, out, out_stride)) \
            return;                                                                             \
        const int64_t i0 = x16_pairs_first(pairs, n, panels, panel_stride, npanels, a, ncols, out, out_stride); \
        for (int64_t i = i0; i < npanels; i++) {                                                \
            const block_##name##x16 *p = (const block_##name##x16 *)((const uint8_t *)panels + i * panel_stride); \
            for (int64_t c0 = 0; c0 < ncols; c0 += (cols)) {                                    \
                const uint8_t *a_ = (const uint8_t *)a + c0 * act_stride;                       \
                float *o = out + 16 * i * out_stride + c0;                                      \
                switch (ncols - c0) {                                                           \
                QGEMV_X16_CASES(cols, name, n / (block_values), p, a_, act_stride, o, out_stride) \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }
/* q2_K, q3_K, q5_K and q6_K on AVX-512: from min_cols columns on, by up to QGEMV_X16_WIDE_COLS
 * columns at a time, each super-block decoded once for them (x16_wide_pass_<name>); fewer by
 * passes of 8 */
#define QGEMV_X16_WIDE_GROUP_CASE(name, cb) case cb: x16_wide_group_##name(&dec, y + g, ib, cb, acc + g); break;
#define QGEMV_DEFINE_X16_WIDE_PASS(name)                                                          \
    /* W <= QGEMV_X16_WIDE_COLS columns: each super-block decoded once (x16_decode_<name>), then \
     * passes of up to 8 columns from it (x16_wide_group_<name>), their accumulators in memory */ \
    static void x16_wide_pass_##name(int64_t nb, const block_##name##x16 *p, const uint8_t *a, int64_t act_stride, \
                                     const int W, float *out, int64_t out_stride) {             \
        const block_q8_K *y[QGEMV_X16_WIDE_COLS];                                               \
        __m512 acc[QGEMV_X16_WIDE_COLS];                                                        \
        x16_columns_512(a, act_stride, W, y, acc);                                              \
        for (int64_t ib = 0; ib < nb; ib++) {                                                   \
            x16_decoded_##name dec;                                                             \
            x16_decode_##name(p + ib, W, &dec);                                                 \
            for (int g = 0; g < W; g += QGEMV_X16_COLS)                                         \
                switch (W - g < QGEMV_X16_COLS ? W - g : QGEMV_X16_COLS) {                      \
                QGEMV_X16_WIDE_GROUP_CASE(name, 1) QGEMV_X16_WIDE_GROUP_CASE(name, 2)           \
                QGEMV_X16_WIDE_GROUP_CASE(name, 3) QGEMV_X16_WIDE_GROUP_CASE(name, 4)           \
                QGEMV_X16_WIDE_GROUP_CASE(name, 5) QGEMV_X16_WIDE_GROUP_CASE(name, 6)           \
                QGEMV_X16_WIDE_GROUP_CASE(name, 7)                                              \
                default: x16_wide_group_##name(&dec, y + g, ib, QGEMV_X16_COLS, acc + g); break; \
                }                                                                               \
        }                                                                                       \
        x16_store_512(acc, W, out, out_stride);                                                 \
    }
#define QGEMV_DEFINE_X16_TILE_WIDE(name, min_cols, pairs)                                        \
    QGEMV_DEFINE_X16_TILE_WIDE_AS(panel_tile_##name, name, min_cols, pairs, QGEMV_X16_AMX_TRY_##name)
/* the same as a function fn, asking take (QGEMV_X16_AMX_TRY_<name> or _NONE) first */
#define QGEMV_DEFINE_X16_TILE_WIDE_AS(fn, name, min_cols, pairs, take)                            \
    static void fn(int64_t n, const void *restrict panels, int64_t panel_stride,                \
                   int64_t npanels, const void *restrict a, int64_t act_stride,                 \
                   int64_t ncols, float *restrict out, int64_t out_stride) {                    \
        if (take(n, panels, panel_stride, npanels, a, act_stride, ncols, out, out_stride))      \
            return;                                                                             \
        const int64_t i0 = x16_pairs_first(pairs, n, panels, panel_stride, npanels, a, ncols, out, out_stride); \
        for (int64_t i = i0; i < npanels; i++) {                                                \
            const block_##name##x16 *p = (const block_##name##x16 *)((const uint8_t *)panels + i * panel_stride); \
            for (int64_t c0 = 0; c0 < ncols; c0 += QGEMV_X16_WIDE_COLS) {                       \
                const int64_t w = ncols - c0 < QGEMV_X16_WIDE_COLS ? ncols - c0 : QGEMV_X16_WIDE_COLS; \
                if (w >= (min_cols)) {                                                          \
                    x16_wide_pass_##name(n / QK_K, p, (const uint8_t *)a + c0 * act_stride, act_stride, (int)w, \
                                         out + 16 * i * out_stride + c0, out_stride);           \
                    continue;                                                                   \
                }                                                                               \
                for (int64_t c1 = c0; c1 < c0 + w; c1 += QGEMV_X16_COLS) {                      \
                    const uint8_t *a_ = (const uint8_t *)a + c1 * act_stride;                   \
                    float *o = out + 16 * i * out_stride + c1;                                  \
                    switch (c0 + w - c1) {                                                      \
                    QGEMV_X16_CASES(QGEMV_X16_COLS, name, n / QK_K, p, a_, act_stride, o, out_stride) \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }
/* AVX2's panel_tile_<name> with wide passes: batches of QGEMV_X16_WIDE_MIN_COLS_<name> columns and
 * more by them, the others by the passes (a single column first through pairs), each in a
 * function of its own: either in the other's function ran q5_K's batch of 2 1.06-1.11x slower */
#define QGEMV_DEFINE_X16_TILE_WIDE_OR_PASSES(name, pairs)                                         \
    static __attribute__((noinline)) void x16_wide_tile_##name(                                   \
        int64_t n, const void *restrict panels, int64_t panel_stride, int64_t npanels, const void *restrict a, \
        int64_t act_stride, int64_t ncols, float *restrict out, int64_t out_stride);              \
    static __attribute__((noinline)) void x16_passes_tile_##name(                                 \
        int64_t n, const void *restrict panels, int64_t panel_stride, int64_t npanels, const void *restrict a, \
        int64_t act_stride, int64_t ncols, float *restrict out, int64_t out_stride);              \
    QGEMV_DEFINE_X16_TILE_WIDE_AS(x16_wide_tile_##name, name, QGEMV_X16_WIDE_MIN_COLS_##name, x16_no_pairs, \
                                  QGEMV_X16_NO_AMX)                                             \
    QGEMV_DEFINE_X16_TILE_BY_PASSES_AS(x16_passes_tile_##name, name, QK_K, QGEMV_X16_COLS, pairs) \
    static void panel_tile_##name(int64_t n, const void *restrict panels, int64_t panel_stride, int64_t npanels, \
                                  const void *restrict a, int64_t act_stride, int64_t ncols, float *restrict out, \
                                  int64_t out_stride) {                                         \
        (ncols >= QGEMV_X16_WIDE_MIN_COLS_##name ? x16_wide_tile_##name : x16_passes_tile_##name)( \
            n, panels, panel_stride, npanels, a, act_stride, ncols, out, out_stride);           \
    }
/* the portable variant uses no panels: their panel_tile is NULL, which _kernels.panel_rows
 * reports as 0 (_check_panel_rows refuses them, QMatrix reads their GGUF rows), as rebuilding
 * each row from its panel costs what the panels save.  (The AVX2 variants' first 8-row passes
 * of q3_K and q6_K ran the GEMV slower than their row tiles: 4096 x 4096, 1 thread, 0.61 ->
 * 0.77 ms, 0.49 -> 0.63; the ones above run it faster.) */
/* q4_K and q6_K read a single column's panels in pairs (two streams a thread) where the CPU
 * wants the hints (an Intel Xeon: the figures at x16_single_column_pairs) and one at a time
 * where its prefetcher streams alone (a Zen 4, 14336 x 4096 out of cache, builds alternating, 1
 * / 2 threads: q6_K 2.18-2.29 -> 1.72-1.86 / 1.25-1.53 -> 0.93-1.45 ms, q4_K 1.36-1.37 ->
 * 1.20-1.24 / 0.76-1.00 -> 0.67-0.95; in cache 1 thread q6_K 0.34 -> 0.33, q4_K 0.178 ->
 * 0.184).  q5_K ran even out of cache and 6% slower in cache so, and q3_K and iq4_xs, whose
 * decoding weighs, ran faster in pairs (benches/RESULTS.md, 38th session): pairs on every CPU
 * (all on rows of X16_PAIRS_MIN_VALUES and more).  AVX2's q4_K and q5_K take pairs where
 * hinted (unmeasured where not): Intel Xeon, avxvnni, through QMatrix, builds alternating,
 * 14336 x 4096 out of cache, 2 / 1 threads, q5_K 1.48-1.53 -> 1.38-1.48 / even ms, q4_K
 * 1.20-1.25 -> 1.14-1.22 / 2.23-2.33 -> 2.08-2.26, the avx2 variant's 2 threads q5_K
 * 1.48-1.51 -> 1.42-1.46; in cache (4096 x 4096, 1 thread) q5_K 0.49-0.52 -> 0.52-0.55 (still
 * 1.4x ggml's speed), q4_K even */
#define QGEMV_DEFINE_X16_PAIRS_WHERE_HINTED(name)                                                \
    static __attribute__((noinline)) int64_t x16_pairs_where_hinted_##name(int64_t n, const void *panels, int64_t panel_stride, \
                                                 int64_t npanels, const void *a, float *out, int64_t out_stride) { \
        return qgemv_prefetch_one_column                                                        \
                   ? x16_pairs_run_##name(n, panels, panel_stride, npanels, a, out, out_stride, 1) \
                   : 0;                                                                         \
    }
#if defined(QGEMV_AVX512)
QGEMV_DEFINE_X16_PAIRS_WHERE_HINTED(q4_K)
QGEMV_DEFINE_X16_PAIRS_WHERE_HINTED(q6_K)
QGEMV_DEFINE_X16_WIDE_PASS(q2_K)
QGEMV_DEFINE_X16_WIDE_PASS(q3_K)
QGEMV_DEFINE_X16_WIDE_PASS(q5_K)
QGEMV_DEFINE_X16_WIDE_PASS(q6_K)
QGEMV_DEFINE_X16_TILE_WIDE(q2_K, 13, x16_no_pairs)
QGEMV_DEFINE_X16_TILE_WIDE(q3_K, 9, x16_single_column_pairs_q3_K)
QGEMV_DEFINE_X16_TILE_BY_PASSES(q4_K, QK_K, QGEMV_X16_COLS, x16_pairs_where_hinted_q4_K)
QGEMV_DEFINE_X16_TILE_WIDE(q5_K, 9, x16_single_column_pairs_q5_K)
QGEMV_DEFINE_X16_TILE_WIDE(q6_K, 9, x16_pairs_where_hinted_q6_K)
QGEMV_DEFINE_X16_TILE_BY_PASSES(iq4_xs, QK_K, QGEMV_X16_COLS, x16_single_column_pairs_iq4_xs)
QGEMV_DEFINE_X16_TILE_BY_PASSES(tq2_0, QK_K, QGEMV_X16_COLS_TQ2_0, x16_no_pairs)
#elif defined(QGEMV_AVX2)
#if defined(QGEMV_VNNI)
QGEMV_DEFINE_X16_TILE_BY_PASSES(q2_K, QK_K, QGEMV_X16_COLS, x16_no_pairs)
#else
QGEMV_DEFINE_X16_TILE_WIDE_OR_PASSES(q2_K, x16_no_pairs)
#endif
QGEMV_DEFINE_X16_PAIRS_WHERE_HINTED(q4_K)
QGEMV_DEFINE_X16_PAIRS_WHERE_HINTED(q5_K)
#if defined(QGEMV_VNNI)
QGEMV_DEFINE_X16_TILE_BY_PASSES(q4_K, QK_K, QGEMV_X16_COLS, x16_pairs_where_hinted_q4_K)
#else
QGEMV_DEFINE_X16_TILE_WIDE_OR_PASSES(q4_K, x16_pairs_where_hinted_q4_K)
#endif
#if defined(QGEMV_VNNI)
QGEMV_DEFINE_X16_TILE_BY_PASSES(q5_K, QK_K, QGEMV_X16_COLS, x16_pairs_where_hinted_q5_K)
#else
QGEMV_DEFINE_X16_TILE_WIDE_OR_PASSES(q5_K, x16_pairs_where_hinted_q5_K)
#endif
QGEMV_DEFINE_X16_TILE_BY_PASSES(tq2_0, QK_K, QGEMV_X16_COLS_TQ2_0, x16_no_pairs)
QGEMV_DEFINE_X16_TILE_BY_PASSES(iq4_xs, QK_K, QGEMV_X16_COLS, x16_single_column_pairs_iq4_xs)
#if defined(QGEMV_VNNI)
QGEMV_DEFINE_X16_TILE_BY_PASSES(q6_K, QK_K, QGEMV_X16_COLS, x16_no_pairs)
#else
QGEMV_DEFINE_X16_TILE_WIDE_OR_PASSES(q6_K, x16_no_pairs)
#endif
QGEMV_DEFINE_X16_TILE_BY_PASSES(q3_K, QK_K, QGEMV_X16_COLS, x16_no_pairs)
#else
#define panel_tile_q2_K NULL
#define panel_tile_q3_K NULL
#define panel_tile_q4_K NULL
#define panel_tile_q5_K NULL
#define panel_tile_q6_K NULL
#define panel_tile_iq4_xs NULL
#define panel_tile_tq2_0 NULL
#endif
