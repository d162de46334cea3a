/* q8_0 on 16 interleaved rows: the panels QMatrix prepares once per matrix (AVX-512 only).
 *
 * vec_dot_q8_0_q8_0 (q32.h) is ggml's AVX2 arithmetic: per row 8 float lanes,
 *     l_i = fma(d_x d_y, (float) sum_{j = 4i .. 4i + 3} q_j a_j, l_i)     blocks in order,
 *     result = hsum_float_8(l) = ((l_0 + l_4) + (l_2 + l_6)) + ((l_1 + l_5) + (l_3 + l_7)).
 * A panel block (block_q8_0x16, include/qgemv/blocks.h) holds block b of 16 rows with row r in
 * lane r, so one 64-byte load of group i is lane i's 4 values of each of the 16 rows.  vpdpbusd
 * of u = q + 128 (the sign bit flipped) against the column's values 4 i .. 4 i + 3 broadcast,
 * started from -128 times their sum, is lane i's exact int32 for 16 rows; then the same fma per
 * lane into 8 accumulators per column, added at the end in hsum_float_8's order.  Every row and
 * column gets vec_dot's bits, whatever the batch or the layout.  The other variants read the
 * GGUF rows (panel_tile_q8_0 NULL).
 */

/* ---------------------------------------------------------------- the layout */
static inline void x16_put_row_q8_0(block_q8_0x16 *p, int r, const block_q8_0 *x) {
    p->d[r] = x->d;
    for (int i = 0; i < 8; i++) memcpy(&p->qs[64 * i + 4 * r], &x->qs[4 * i], 4);
}
QGEMV_DEFINE_INTERLEAVE_X16(q8_0, 32)

/* ---------------------------------------------------------------- products */
#if defined(QGEMV_AVX512)
#define QGEMV_X16_COLS_Q8_0 2   /* columns per pass: 8 accumulators each, in registers */
#define X16_Q8_0_SIDE 64       /* blocks whose column set-up a pass makes at once */

/* nb panel blocks against CB <= QGEMV_X16_COLS_Q8_0 columns (q8_0 blocks at a + j act_stride):
 * out[r * out_stride + j] for the 16 rows */
QGEMV_ALWAYS_INLINE void x16_pass_q8_0(int64_t nb, const block_q8_0x16 *p, const uint8_t *a, int64_t act_stride,
                                       const int CB, float *out, int64_t out_stride) {
    const block_q8_0 *y[QGEMV_X16_COLS_Q8_0];
    __m512 acc[QGEMV_X16_COLS_Q8_0][8];
    for (int j = 0; j < CB; j++) {
        y[j] = (const block_q8_0 *)(a + j * act_stride);
        for (int i = 0; i < 8; i++) acc[j][i] = _mm512_setzero_ps();
    }
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    for (int64_t k0 = 0; k0 < nb; k0 += X16_Q8_0_SIDE) {
        const int64_t kn = nb - k0 < X16_Q8_0_SIDE ? nb - k0 : X16_Q8_0_SIDE;
        /* each column's per-block set-up first, in memory: -128 times the sum of each lane's 4
         * activations, and d_y; the block loop then broadcasts them straight from memory
         * (loads), where made in registers each took a shuffle, on the pipes the fmas and
         * vpdpbusd want (C harness, 4096 x 4096, 1 thread: batch 32 1.22-1.32x, 16 1.08x, 8
         * 1.16x, 2 1.06x, 1 even) */
        int32_t off[QGEMV_X16_COLS_Q8_0][X16_Q8_0_SIDE][8];
        float dy[QGEMV_X16_COLS_Q8_0][X16_Q8_0_SIDE];
        for (int j = 0; j < CB; j++)
            for (int64_t k = 0; k < kn; k++) {
                const block_q8_0 *yb = &y[j][k0 + k];
                const __m256i s4 = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8((char)0x80),
                                                       _mm256_loadu_si256((const __m256i *)yb->qs));
                _mm256_storeu_si256((__m256i *)off[j][k], _mm256_sub_epi32(_mm256_setzero_si256(), s4));
                dy[j][k] = scale_q8_0(yb);
            }
        for (int64_t k = 0; k < kn; k++) {
            const block_q8_0x16 *b = p + k0 + k;
            __m512i u[8];   /* lane r: row r's q + 128, values 4 i .. 4 i + 3 */
            for (int i = 0; i < 8; i++) {
                QGEMV_PREFETCH_PASS_LINE(b->qs + 64 * i, CB);
                u[i] = _mm512_xor_si512(_mm512_loadu_si512((const void *)(b->qs + 64 * i)), flip);
            }
            const __m512 dw = x16_factors(b->d);
            for (int j = 0; j < CB; j++) {
                const int8_t *aq = y[j][k0 + k].qs;
                const __m512 d = _mm512_mul_ps(dw, _mm512_set1_ps(dy[j][k]));
                for (int i = 0; i < 8; i++) {
                    const __m512i s = qgemv_dpbusd_bcst_512(_mm512_set1_epi32(off[j][k][i]), u[i], aq + 4 * i);
                    acc[j][i] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(s), acc[j][i]);
                }
            }
        }
    }
    for (int j = 0; j < CB; j++) {
        const __m512 *l = acc[j];
        const __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(l[0], l[4]), _mm512_add_ps(l[2], l[6])),
                                         _mm512_add_ps(_mm512_add_ps(l[1], l[5]), _mm512_add_ps(l[3], l[7])));
        float o[16];
        _mm512_storeu_ps(o, sum);
        for (int r = 0; r < 16; r++) out[r * out_stride + j] = o[r];
    }
}
QGEMV_DEFINE_X16_TILE_BY_PASSES(q8_0, 32, QGEMV_X16_COLS_Q8_0)
#else
#define panel_tile_q8_0 NULL   /* the table's entry (QGEMV_FOR_EACH_INTERLEAVED) */
#endif
