/* q8_0 on 16 interleaved rows: the panels QMatrix prepares once per matrix (AVX-512 only).
 *
 * vec_dot_q8_0_q8_0 (q32.h) is ggml's AVX2 arithmetic: per row 8 float lanes,
 *     l_i = fma(d_x d_y, (float) sum_{j = 4i .. 4i + 3} q_j a_j, l_i)     blocks in order,
 *     result = hsum_float_8(l) = ((l_0 + l_4) + (l_2 + l_6)) + ((l_1 + l_5) + (l_3 + l_7)).
 * A panel block (block_q8_0x16, include/qgemv/blocks.h) holds block b of 16 rows with row r in
 * lane r, its levels as u = q + 128 (the sign bit flipped once, as the panels are made), so one
 * 64-byte load of group i is lane i's 4 values of each of the 16 rows.  vpdpbusd of u against
 * the column's values 4 i .. 4 i + 3 broadcast, started from -128 times their sum, is lane i's
 * exact int32 for 16 rows; then the same fma per lane into 8 accumulators per column, added at
 * the end in hsum_float_8's order.  Every row and column gets vec_dot's bits, whatever the batch
 * or the layout.  The avxvnni variant runs the same panels on 256-bit vectors (below); avx2 and
 * baseline read the GGUF rows (panel_tile_q8_0 NULL).
 *   The conversions are subtractions: each start also carries Q8_MAGIC_BITS, so that the int32
 * is the bits of the float 1.5 2^23 + sum q a (|sum q a| <= 4 128 127 < 2^22), and one exact
 * subtraction gives it as a float (vec_dot_tile_q8_0_q8_0's trick, q32.h; on AVX-VNNI vcvtdq2ps
 * shares ports 0 and 1 with vpdpbusd and the fmas).  With it, and a batch's later passes over a
 * group without the level lines' hints (panel_tile_q8_0), the AVX-512 pass from L1 (C harness,
 * 2 columns) ran 4.1-4.4 ns a block and column where it took 4.7-5.1 (either alone 4-5%); Intel
 * Xeon (AMX), 4096 x 4096 through QMatrix, builds alternating, medians of 5 processes: 2 threads
 * batch 32 2.96 -> 2.80 ms, batch 8 0.80 -> 0.78, 1 thread batch 32 5.63 -> 5.27; a single
 * column even.  (Its blocks' level vectors straddle lines every other block, 544 bytes each:
 * padded to 576, 2-4% faster in the same harness, not worth the copy's 6% more bytes.)
 *   Those 8 vpdpbusd, 8 conversions and 8 fmas a block, column and 16 rows are the floor of
 * that order (24 operations, 3.8 ns at the 6.3 a nanosecond this Xeon runs their chain); the
 * pass keeps to them: its 8 level vectors loaded once for both its columns and held in
 * registers (left to itself, GCC loaded them again for the second column), no sign flip, and
 * the columns' set-up (the offsets and d_y) made once per chunk for a group of panels, not per
 * panel.  Intel Xeon (AMX), 4096 x 4096 through QMatrix, builds alternating, against the
 * set-up per panel and the flip in the pass: 2 threads batch 8 1.00-1.03 -> 0.90-0.91 ms,
 * batch 32 3.62-3.74 -> 3.13-3.18; 1 thread batch 32 7.3-7.7 -> 6.1-6.2; a single column even
 * (in cache and out).  Tried beside: 3 or 4 columns a pass (their levels loaded again), even.
 */

/* ---------------------------------------------------------------- the layout */
static inline void x16_put_row_q8_0(block_q8_0x16 *p, int r, const block_q8_0 *x) {
    p->d[r] = x->d;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) p->u[64 * i + 4 * r + j] = (uint8_t)(x->qs[4 * i + j] ^ 0x80);
}
QGEMV_DEFINE_INTERLEAVE_X16(q8_0, 32)

/* ---------------------------------------------------------------- products */
#if defined(QGEMV_VNNI)
#if defined(QGEMV_AVX512)
#define QGEMV_X16_COLS_Q8_0 2   /* columns a pass: 8 accumulators each and the 8 level vectors, in registers */
#define X16_Q8_0_SLAB 2        /* columns whose passes take a chunk before the next chunk: a pass's */
#define X16_Q8_0_BATCH_SIDE 64 /* blocks a batch's chunk */
typedef struct {
    __m512 l[8];   /* lane i of the 16 rows (row r in element r) */
} x16_sums_q8_0;
#else
/* AVX-VNNI (16 registers of 256 bits): one column a pass, lanes 4 g .. 4 g + 3 of both halves
 * of the 16 rows at a time (8 accumulators).  A block, column and 16 rows is 16 vpdpbusd, 16
 * subtractions, 16 fmas and the scales' conversions and products, the levels lifted and laid
 * out once per matrix, where that tile's row pairs lift, insert and shuffle theirs for every
 * block.  A batch takes 8 columns' passes over a chunk of 8 blocks of 4 panels (17 KiB, in L1)
 * before the next chunk: column after column over whole panels read them from L2 each time,
 * 0.54 against 0.45 ns a block, column and row (C harness, 256 x 4096, batch 8).  Intel Xeon,
 * QGEMV_ISA=avxvnni, 4096 x 4096 through QMatrix, builds alternating, against that tile: batch
 * 8, 1 / 2 threads 3.18-3.22 -> 2.20-2.23 / 1.61-1.69 -> 1.17-1.19 ms, batch 32 6.24-6.27 ->
 * 4.43-4.57, batch 3 0.94-0.97 -> 0.60-0.62; a single column even (in cache 0.64-0.68 ms,
 * 14336 x 4096 out of cache 1 thread 4.1-4.3 -> 3.9-4.0). */
#define QGEMV_X16_COLS_Q8_0 1
#define X16_Q8_0_SLAB 8        /* columns whose passes take a chunk (in L1) before the next chunk */
#define X16_Q8_0_BATCH_SIDE 8  /* blocks a batch's chunk: 4 panels' 17 KiB */
typedef struct {
    __m256 l[2][8];   /* rows 8 h .. 8 h + 7, lane i */
} x16_sums_q8_0;
#endif
#define X16_Q8_0_SIDE 64       /* blocks a chunk at most: the span of a column's set-up */
#define X16_Q8_0_PANELS 4      /* panels a batch's column set-up serves (a group) */
/* A single column takes 2 panels at a time in chunks of 8 blocks (4.3 KiB of each): two streams
 * from memory, which this Xeon reads faster than one (a C read loop, 1 / 2 threads: 18.2 ->
 * 20.5 / 34-35 -> 36 GB/s; chunks of 16 KiB and more, or 3-9 streams, gain less or nothing).
 * 14336 x 4096 out of cache through QMatrix, builds alternating: 2 threads 27.6-28.4 -> 28.8-29.4
 * GB/s, 1 thread 14.6-15.0 -> 15.0-15.1; in cache even.  (Session 35's trial of 2-8 panels kept
 * 64-block chunks, 35 KiB a stream: even.)  Each panel's accumulators carry over between chunks,
 * so the sums are the same.  A row of at most X16_Q8_0_SIDE blocks (2048 values) is one chunk,
 * so the pair's panels are read one after the other, one stream through the copy, which a second
 * stream starting afresh every two short panels had halved (Zen 4, out of cache, builds
 * alternating, 1 / 2 threads: 576 values 4.73 -> 2.59 / 2.38 -> 1.43 ms, 1152 3.75 -> 1.97 /
 * 2.48 -> 1.54, 2048 2.79 -> 2.31 / 1.70 -> 1.25; in cache, 3072 x 576, 0.044 -> 0.034); longer
 * rows in 64-block chunks ran slower (3072 values 2.55 -> 2.90). */
#define X16_Q8_0_ONE_COL_PANELS 2
#define X16_Q8_0_ONE_COL_SIDE 8

/* a column's set-up for a chunk of blocks, which the passes broadcast straight from memory (made
 * in registers, each took a shuffle on the pipes the fmas and vpdpbusd want): per block
 * vpdpbusd's start Q8_MAGIC_BITS - 128 sum_{j = 4i .. 4i + 3} a_j for each lane i, and d_y */
typedef struct {
    int32_t off[X16_Q8_0_SIDE][8];
    float dy[X16_Q8_0_SIDE];
} x16_column_q8_0;

static inline void x16_set_up_column_q8_0(const block_q8_0 *y, int64_t kn, x16_column_q8_0 *c) {
    for (int64_t k = 0; k < kn; k++) {
        _mm256_storeu_si256((__m256i *)c->off[k], q8_lane_starts_lifted_magic(y[k].qs));
        c->dy[k] = scale_q8_0(&y[k]);
    }
}

/* kn panel blocks against CB <= QGEMV_X16_COLS_Q8_0 columns (their blocks y[j], set-up c[j]):
 * acc[j][i] += lane i of the 16 rows' products, block after block; the pass asks for its lines
 * ahead only with hints: a single column where the CPU takes them (qgemv_prefetch_one_column,
 * made once per call: the idle hints of a Zen 4 cost it 13% in L2, 512 x 4096, 1 thread, 0.046
 * -> 0.040 ms), a batch in its group's first pass (panel_tile_q8_0); and each block asks for
 * ahead_lines lines from ahead on into L2 (panel_tile_q8_0's next group) */
QGEMV_ALWAYS_INLINE void x16_pass_q8_0(int64_t kn, const block_q8_0x16 *p, const block_q8_0 *const *y,
                                       const x16_column_q8_0 *c, const int CB, const int hints, const int one_column,
                                       x16_sums_q8_0 *acc_, const uintptr_t ahead, const int64_t ahead_lines) {
#if defined(QGEMV_AVX512)
    (void)one_column;
    const __m512 magic = _mm512_set1_ps(Q8_MAGIC);
    __m512 acc[QGEMV_X16_COLS_Q8_0][8];
    for (int j = 0; j < CB; j++)
        for (int i = 0; i < 8; i++) acc[j][i] = acc_[j].l[i];
    for (int64_t k = 0; k < kn; k++) {
        const block_q8_0x16 *b = p + k;
        for (int64_t l = 0; l < ahead_lines; l++) __builtin_prefetch((const void *)(ahead + 64 * (k * ahead_lines + l)), 0, 2);
        __m512i u[8];   /* lane r: row r's q + 128, values 4 i .. 4 i + 3 */
        for (int i = 0; i < 8; i++) {
            if (hints) QGEMV_PREFETCH_PASS_LINE(b->u + 64 * i, CB);
            u[i] = _mm512_loadu_si512((const void *)(b->u + 64 * i));
            QGEMV_IN_REGISTER(u[i]);
        }
        const __m512 dw = x16_factors(b->d);
        for (int j = 0; j < CB; j++) {
            const int8_t *aq = y[j][k].qs;
            const __m512 d = _mm512_mul_ps(dw, _mm512_set1_ps(c[j].dy[k]));
            for (int i = 0; i < 8; i++) {
                const __m512i s = qgemv_dpbusd_bcst_512(_mm512_set1_epi32(c[j].off[k][i]), u[i], aq + 4 * i);
                acc[j][i] = _mm512_fmadd_ps(d, _mm512_sub_ps(_mm512_castsi512_ps(s), magic), acc[j][i]);
            }
        }
    }
    for (int j = 0; j < CB; j++)
        for (int i = 0; i < 8; i++) acc_[j].l[i] = acc[j][i];
#else
    /* lanes 4 g .. 4 g + 3 of both halves at a time: their 8 accumulators, and each lane's start
     * and activations broadcast once for both halves (all 8 lanes of one half a time loaded
     * them twice as often: C loop, 0.42 against 0.39 ns a block, column and row) */
    (void)CB;
    const __m256 magic = _mm256_set1_ps(Q8_MAGIC);
    /* a single column streams: both lane groups of a block before the next (its accumulators
     * through L1), as the lane groups over whole chunks read each block's lines out of order
     * (14336 x 4096 out of cache, 1 thread: 3.9 -> 4.3 ms) */
    for (int64_t k0 = 0; k0 < kn; k0 += one_column ? 1 : kn)
    _Pragma("GCC unroll 2")
    for (int g = 0; g < 2; g++) {
        __m256 acc[2][4];
        for (int h = 0; h < 2; h++)
            for (int i = 0; i < 4; i++) acc[h][i] = acc_->l[h][4 * g + i];
        for (int64_t k = k0; k < (one_column ? k0 + 1 : kn); k++) {
            const block_q8_0x16 *b = p + k;
            if (g == 0) {   /* the block's lines in order, the next group's share */
                for (int i = 0; i < 8; i++) QGEMV_PREFETCH_PASS_LINE_IF(hints, b->u + 64 * i, 1);
                for (int64_t l = 0; l < ahead_lines; l++) __builtin_prefetch((const void *)(ahead + 64 * (k * ahead_lines + l)), 0, 2);
            }
            const __m256 dy = _mm256_set1_ps(c->dy[k]);
            const __m256 d[2] = {_mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)b->d)), dy),
                                 _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b->d + 8))), dy)};
            for (int i = 0; i < 4; i++) {
                const int lane = 4 * g + i;
                const __m256i start = _mm256_set1_epi32(c->off[k][lane]),
                              a = _mm256_set1_epi32((int)qgemv_load_u32((const uint8_t *)y[0][k].qs + 4 * lane));
                for (int h = 0; h < 2; h++) {
                    const __m256i s = qgemv_dpbusd_256(start, _mm256_loadu_si256((const __m256i *)(b->u + 64 * lane + 32 * h)), a);
                    acc[h][i] = _mm256_fmadd_ps(d[h], _mm256_sub_ps(_mm256_castsi256_ps(s), magic), acc[h][i]);
                }
            }
        }
        for (int h = 0; h < 2; h++)
            for (int i = 0; i < 4; i++) acc_->l[h][4 * g + i] = acc[h][i];
    }
#endif
}

/* the 16 rows' results (row r at out[r out_stride]): each row's lanes in hsum_float_8's order */
static inline void x16_finish_q8_0(const x16_sums_q8_0 *s, float *out, int64_t out_stride) {
#if defined(QGEMV_AVX512)
    const __m512 *l = s->l;
    const __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(l[0], l[4]), _mm512_add_ps(l[2], l[6])),
                                     _mm512_add_ps(_mm512_add_ps(l[1], l[5]), _mm512_add_ps(l[3], l[7])));
    float o[16];
    _mm512_storeu_ps(o, sum);
#else
    float o[16];
    for (int h = 0; h < 2; h++) {
        const __m256 *l = s->l[h];
        _mm256_storeu_ps(o + 8 * h, _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(l[0], l[4]), _mm256_add_ps(l[2], l[6])),
                                                  _mm256_add_ps(_mm256_add_ps(l[1], l[5]), _mm256_add_ps(l[3], l[7]))));
    }
#endif
    for (int r = 0; r < 16; r++) out[r * out_stride] = o[r];
}

/* vec_dot_tile over npanels panels: by groups of X16_Q8_0_PANELS panels (X16_Q8_0_ONE_COL_PANELS
 * for a single column), slabs of X16_Q8_0_SLAB columns and chunks of X16_Q8_0_BATCH_SIDE blocks
 * (a single column's X16_Q8_0_SIDE or X16_Q8_0_ONE_COL_SIDE): per chunk, for each pass's
 * QGEMV_X16_COLS_Q8_0 columns of the slab, their set-up once, then each panel's pass over the
 * chunk, its accumulators kept between chunks.
 *   A group is read from memory by its first pair of columns and from L2 by the others, which
 * ran at the first's cost again where they had to wait for it: 4096 x 4096 batch 8, 1 thread,
 * 4.5 ns a block, column and 16 rows when the matrix stayed in L2 (256 rows), 6.7 when each
 * group came from L3.  So the later pairs' passes ask for the next group's panels into L2, a
 * share of each panel's lines every block (the first pair's own lines stay with the pass's
 * L1 hints).  The next group of the last in a tile is the next tile's first, which this
 * thread runs next most of the time (tiles in order, or prange's runs of them); past the
 * copy's end the hints ask for nothing a program owns, and never fault.  Groups of 4 panels
 * keep this group and the next (280 KiB each at 4096 values) inside a 1 MiB L2 (Zen 4's);
 * 8 ran even here.  Intel Xeon, 4096 x 4096 through QMatrix, builds alternating: batch 8,
 * 1 thread 1.77-1.84 -> 1.53-1.64 ms (fastest calls), 2 threads 0.94-1.02 -> 0.85-0.93;
 * batch 32, 2 threads 3.27-3.50 -> 3.20-3.28; a single column and batch 2 unchanged (no later
 * pair).  Where the later passes are one or two (AVX-512 batches of 3 to 6, AVX-VNNI's of 2
 * and 3), the first pass takes a share too (its own lines with the L1 hints, the next group's
 * into L2): the later passes alone left the next group's first pass reading at L3's pace.
 * Through QMatrix, 4096 x 4096, 2 threads, builds alternating, medians of 4 processes: batch 3
 * 0.55-0.56 -> 0.47-0.48 ms, batch 4 0.59-0.61 -> 0.51-0.53 (1 thread 1.14 -> 1.01), batch 6
 * 0.77 -> 0.71, avxvnni batch 2 0.54-0.56 -> 0.49-0.51, batch 3 0.65 -> 0.61; with 3 later
 * passes and more, a share for the first ran even at 2 threads and 4% slower at 1 (batch 8);
 * batch 2 on AVX-512, one pair, asks for no next group (C harness 0.34-0.35 -> 0.36-0.38 ms
 * when it did). */
static void panel_tile_q8_0(int64_t n, const void *restrict panels, int64_t panel_stride, int64_t npanels,
                            const void *restrict a, int64_t act_stride, int64_t ncols, float *restrict out,
                            int64_t out_stride) {
    const int64_t nb = n / 32, group = ncols > 1 ? X16_Q8_0_PANELS : X16_Q8_0_ONE_COL_PANELS,
                  side = ncols > 1 ? X16_Q8_0_BATCH_SIDE : nb <= X16_Q8_0_SIDE ? X16_Q8_0_SIDE : X16_Q8_0_ONE_COL_SIDE;
    x16_column_q8_0 col[QGEMV_X16_COLS_Q8_0];
    const int64_t npairs = (ncols + QGEMV_X16_COLS_Q8_0 - 1) / QGEMV_X16_COLS_Q8_0,
                  panel_lines = (nb * (int64_t)sizeof(block_q8_0x16) + 63) / 64,
                  /* the passes that ask for the next group: the later ones, and the first where
                   * the later are few (above) */
                  first_shares = npairs <= 3, sharers = npairs > 1 ? npairs - !first_shares : 0,
                  /* lines a block of those passes asks for: a panel's over their blocks */
                  ahead_per_block = sharers ? (panel_lines + sharers * nb - 1) / (sharers * nb) : 0;
    x16_sums_q8_0 acc[X16_Q8_0_PANELS][X16_Q8_0_SLAB];
    for (int64_t i0 = 0; i0 < npanels; i0 += group) {
        const int64_t pn = npanels - i0 < group ? npanels - i0 : group;
        for (int64_t s0 = 0; s0 < ncols; s0 += X16_Q8_0_SLAB) {
            const int64_t s1 = ncols - s0 < X16_Q8_0_SLAB ? ncols : s0 + X16_Q8_0_SLAB;
            for (int64_t i = 0; i < pn; i++)
                for (int64_t c = s0; c < s1; c++) memset(&acc[i][c - s0], 0, sizeof(acc[i][c - s0]));
            for (int64_t k0 = 0; k0 < nb; k0 += side) {
                const int64_t kn = nb - k0 < side ? nb - k0 : side;
                for (int64_t c0 = s0; c0 < s1; c0 += QGEMV_X16_COLS_Q8_0) {
                    const int CB = s1 - c0 < QGEMV_X16_COLS_Q8_0 ? (int)(s1 - c0) : QGEMV_X16_COLS_Q8_0;
                    const block_q8_0 *y[QGEMV_X16_COLS_Q8_0];
                    for (int j = 0; j < CB; j++) {
                        y[j] = (const block_q8_0 *)((const uint8_t *)a + (c0 + j) * act_stride) + k0;
                        x16_set_up_column_q8_0(y[j], kn, &col[j]);
                    }
                    for (int64_t i = 0; i < pn; i++) {
                        const block_q8_0x16 *p = (const block_q8_0x16 *)((const uint8_t *)panels + (i0 + i) * panel_stride) + k0;
                        /* this pass's share of panel i of the next group (an address, which may
                         * lie past the copy) */
                        const int64_t lines = c0 > 0 || first_shares ? ahead_per_block : 0;
                        const uintptr_t ahead = lines ? (uintptr_t)panels + (uintptr_t)((i0 + pn + i) * panel_stride)
                                                            + (uintptr_t)(64 * lines * ((c0 / QGEMV_X16_COLS_Q8_0 - !first_shares) * nb + k0))
                                                      : 0;
                        x16_sums_q8_0 *sums = &acc[i][c0 - s0];
                        if (CB > 1 && c0 == 0)   /* the group's lines from memory: hints */
                            x16_pass_q8_0(kn, p, y, col, QGEMV_X16_COLS_Q8_0, 1, 0, sums, ahead, lines);
                        else if (CB > 1)   /* the same lines again, from L2 */
                            x16_pass_q8_0(kn, p, y, col, QGEMV_X16_COLS_Q8_0, 0, 0, sums, ahead, lines);
                        else if (ncols > 1)   /* a batch's lone column (AVX-VNNI: each): no hints */
                            x16_pass_q8_0(kn, p, y, col, 1, 0, 0, sums, ahead, lines);
                        else if (qgemv_prefetch_one_column) x16_pass_q8_0(kn, p, y, col, 1, 1, 1, sums, ahead, lines);
                        else x16_pass_q8_0(kn, p, y, col, 1, 0, 1, sums, ahead, lines);
                    }
                }
            }
            for (int64_t i = 0; i < pn; i++)
                for (int64_t c = s0; c < s1; c++) x16_finish_q8_0(&acc[i][c - s0], out + 16 * (i0 + i) * out_stride + c, out_stride);
        }
    }
}
#else
#define panel_tile_q8_0 NULL   /* the table's entry (QGEMV_FOR_EACH_INTERLEAVED) */
#endif
