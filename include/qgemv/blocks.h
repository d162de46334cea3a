/* qgemv/blocks.h: the on-disk block of every ggml format, declared once.
 *
 * Each struct is byte-for-byte ggml's (ggml/src/ggml-common.h, ggml 0.25.3): its block-size
 * macro just above it, a static size check just below.  Mirrored for Cython in
 * qgemv/_blocks.pxd (must match); tests/test_formats.py checks every size against
 * qgemv/_formats.py through the compiled module.
 *
 * Notation in the comments: x = reconstructed weight, d = block scale, m = block minimum,
 * q = stored quant, QK = values per block.
 */
#ifndef QGEMV_BLOCKS_H
#define QGEMV_BLOCKS_H

#include <stdint.h>
#include <assert.h>

#ifndef static_assert
#define static_assert _Static_assert
#endif

typedef uint16_t qgemv_half;   /* IEEE binary16 bits */
typedef uint16_t qgemv_bf16;   /* bfloat16 bits */

/* element formats: one value per "block" */
typedef float block_f32;
typedef qgemv_half block_f16;
typedef qgemv_bf16 block_bf16;
typedef double block_f64;
typedef int8_t block_i8;
typedef int16_t block_i16;
typedef int32_t block_i32;
typedef int64_t block_i64;

#define QK_K 256               /* super-block of the K, IQ and TQ formats */
#define K_SCALE_SIZE 12

/* ---------------------------------------------------------------- 32-value blocks */

/* x = d * (q - 8), q in [0, 15]; 4.5 bits per weight */
#define QK4_0 32
typedef struct {
    qgemv_half d;
    uint8_t qs[QK4_0 / 2];     /* value j in low nibble of qs[j], value j+16 in high nibble */
} block_q4_0;
static_assert(sizeof(block_q4_0) == 2 + QK4_0 / 2, "wrong q4_0 block size/padding");

/* x = d * q + m, q in [0, 15]; 5 bits per weight */
#define QK4_1 32
typedef struct {
    qgemv_half d;
    qgemv_half m;
    uint8_t qs[QK4_1 / 2];
} block_q4_1;
static_assert(sizeof(block_q4_1) == 2 * 2 + QK4_1 / 2, "wrong q4_1 block size/padding");

/* x = d * (q - 16), q in [0, 31], the 5th bit of value j is bit j of qh; 5.5 bits per weight */
#define QK5_0 32
typedef struct {
    qgemv_half d;
    uint8_t qh[4];
    uint8_t qs[QK5_0 / 2];
} block_q5_0;
static_assert(sizeof(block_q5_0) == 2 + 4 + QK5_0 / 2, "wrong q5_0 block size/padding");

/* x = d * q + m, q in [0, 31]; 6 bits per weight */
#define QK5_1 32
typedef struct {
    qgemv_half d;
    qgemv_half m;
    uint8_t qh[4];
    uint8_t qs[QK5_1 / 2];
} block_q5_1;
static_assert(sizeof(block_q5_1) == 2 * 2 + 4 + QK5_1 / 2, "wrong q5_1 block size/padding");

/* x = d * q, q in [-128, 127]; 8.5 bits per weight (also ggml's activation format) */
#define QK8_0 32
typedef struct {
    qgemv_half d;
    int8_t qs[QK8_0];
} block_q8_0;
static_assert(sizeof(block_q8_0) == 2 + QK8_0, "wrong q8_0 block size/padding");

/* x = d * q, s = d * sum(q): the activation format of q4_1 / q5_1 (ggml's 36 bytes) */
#define QK8_1 32
typedef struct {
    qgemv_half d;
    qgemv_half s;
    int8_t qs[QK8_1];
} block_q8_1;
static_assert(sizeof(block_q8_1) == 2 * 2 + QK8_1, "wrong q8_1 block size/padding");

/* x = d * kvalues_iq4nl[q], q in [0, 15], nibbles as in q4_0; 4.5 bits per weight */
#define QK4_NL 32
typedef struct {
    qgemv_half d;
    uint8_t qs[QK4_NL / 2];
} block_iq4_nl;
static_assert(sizeof(block_iq4_nl) == 2 + QK4_NL / 2, "wrong iq4_nl block size/padding");

/* x = 2^(e - 128) * kvalues_mxfp4[q] (E2M1 values doubled, halved back by the scale),
 * nibbles as in q4_0; 4.25 bits per weight */
#define QK_MXFP4 32
typedef struct {
    uint8_t e;                 /* E8M0 shared exponent */
    uint8_t qs[QK_MXFP4 / 2];
} block_mxfp4;
static_assert(sizeof(block_mxfp4) == 1 + QK_MXFP4 / 2, "wrong mxfp4 block size/padding");

/* ---------------------------------------------------------------- other small blocks */

/* x = d * kvalues_mxfp4[q] / 2 per 16-value sub-block, d an unsigned E4M3 (UE4M3) scale;
 * 4.5 bits per weight */
#define QK_NVFP4 64
#define QK_NVFP4_SUB 16
typedef struct {
    uint8_t d[QK_NVFP4 / QK_NVFP4_SUB];
    uint8_t qs[QK_NVFP4 / 2];
} block_nvfp4;
static_assert(sizeof(block_nvfp4) == QK_NVFP4 / QK_NVFP4_SUB + QK_NVFP4 / 2, "wrong nvfp4 block size/padding");

/* x = d * (2 b - 1), one bit b per value; 1.125 bits per weight */
#define QK1_0 128
typedef struct {
    qgemv_half d;
    uint8_t qs[QK1_0 / 8];
} block_q1_0;
static_assert(sizeof(block_q1_0) == 2 + QK1_0 / 8, "wrong q1_0 block size/padding");

/* x = d * (q - 1), q in [0, 3] two bits per value, LSB first; 2.25 bits per weight */
#define QK2_0 64
typedef struct {
    qgemv_half d;
    uint8_t qs[QK2_0 / 4];
} block_q2_0;
static_assert(sizeof(block_q2_0) == 2 + QK2_0 / 4, "wrong q2_0 block size/padding");

/* ---------------------------------------------------------------- ternary */

/* x = d * (t - 1), t in {0, 1, 2}: five trits per byte in qs (as a fixed-point fraction of
 * 3^5), four per byte in qh; 1.6875 bits per weight */
typedef struct {
    uint8_t qs[(QK_K - 4 * QK_K / 64) / 5];
    uint8_t qh[QK_K / 64];
    qgemv_half d;
} block_tq1_0;
static_assert(sizeof(block_tq1_0) == 2 + QK_K / 64 + (QK_K - 4 * QK_K / 64) / 5, "wrong tq1_0 block size/padding");

/* x = d * (q - 1), q in [0, 3] two bits per value; 2.0625 bits per weight */
typedef struct {
    uint8_t qs[QK_K / 4];
    qgemv_half d;
} block_tq2_0;
static_assert(sizeof(block_tq2_0) == 2 + QK_K / 4, "wrong tq2_0 block size/padding");

/* ---------------------------------------------------------------- K-quants (256 values) */

/* x = d * sc * q - dmin * m per 16 values, sc and m 4-bit, q 2-bit; 2.625 bits per weight */
typedef struct {
    uint8_t scales[QK_K / 16]; /* low nibble scale, high nibble min */
    uint8_t qs[QK_K / 4];
    qgemv_half d;
    qgemv_half dmin;
} block_q2_K;
static_assert(sizeof(block_q2_K) == 2 * 2 + QK_K / 16 + QK_K / 4, "wrong q2_K block size/padding");

/* x = d * (sc - 32) * (q - 4 * !hbit) per 16 values, sc 6-bit, q 2-bit + high bit;
 * 3.4375 bits per weight */
typedef struct {
    uint8_t hmask[QK_K / 8];
    uint8_t qs[QK_K / 4];
    uint8_t scales[12];
    qgemv_half d;
} block_q3_K;
static_assert(sizeof(block_q3_K) == 2 + QK_K / 4 + QK_K / 8 + 12, "wrong q3_K block size/padding");

/* x = d * sc * q - dmin * m per 32 values, sc and m 6-bit, q 4-bit; 4.5 bits per weight */
typedef struct {
    qgemv_half d;
    qgemv_half dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qs[QK_K / 2];
} block_q4_K;
static_assert(sizeof(block_q4_K) == 2 * 2 + K_SCALE_SIZE + QK_K / 2, "wrong q4_K block size/padding");

/* x = d * sc * q - dmin * m per 32 values, sc and m 6-bit, q 5-bit; 5.5 bits per weight */
typedef struct {
    qgemv_half d;
    qgemv_half dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
} block_q5_K;
static_assert(sizeof(block_q5_K) == 2 * 2 + K_SCALE_SIZE + QK_K / 2 + QK_K / 8, "wrong q5_K block size/padding");

/* x = d * sc * (q - 32) per 16 values, sc int8, q 6-bit; 6.5625 bits per weight */
typedef struct {
    uint8_t ql[QK_K / 2];
    uint8_t qh[QK_K / 4];
    int8_t scales[QK_K / 16];
    qgemv_half d;
} block_q6_K;
static_assert(sizeof(block_q6_K) == 2 + QK_K / 16 + 3 * QK_K / 4, "wrong q6_K block size/padding");

/* x = d * q with an f32 scale and the sums of each 16 quants: the activation format of the
 * 256-value formats */
typedef struct {
    float d;
    int8_t qs[QK_K];
    int16_t bsums[QK_K / 16];
} block_q8_K;
static_assert(sizeof(block_q8_K) == 4 + QK_K + QK_K / 16 * 2, "wrong q8_K block size/padding");

/* ---------------------------------------------------------------- IQ formats (256 values) */

/* x = d * (0.5 + s) / 4 * sign * iq2xxs_grid[g] per 8 values; 2.0625 bits per weight */
typedef struct {
    qgemv_half d;
    uint16_t qs[QK_K / 8];
} block_iq2_xxs;
static_assert(sizeof(block_iq2_xxs) == 2 + QK_K / 8 * 2, "wrong iq2_xxs block size/padding");

/* 2.3125 bits per weight */
typedef struct {
    qgemv_half d;
    uint16_t qs[QK_K / 8];
    uint8_t scales[QK_K / 32];
} block_iq2_xs;
static_assert(sizeof(block_iq2_xs) == 2 + QK_K / 8 * 2 + QK_K / 32, "wrong iq2_xs block size/padding");

/* 2.5625 bits per weight */
typedef struct {
    qgemv_half d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t scales[QK_K / 32];
} block_iq2_s;
static_assert(sizeof(block_iq2_s) == 2 + QK_K / 4 + QK_K / 16, "wrong iq2_s block size/padding");

/* 3.0625 bits per weight */
typedef struct {
    qgemv_half d;
    uint8_t qs[3 * QK_K / 8];
} block_iq3_xxs;
static_assert(sizeof(block_iq3_xxs) == 2 + 3 * (QK_K / 8), "wrong iq3_xxs block size/padding");

/* 3.4375 bits per weight */
#define IQ3S_N_SCALE (QK_K / 64)
typedef struct {
    qgemv_half d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t signs[QK_K / 8];
    uint8_t scales[IQ3S_N_SCALE];
} block_iq3_s;
static_assert(sizeof(block_iq3_s) == 2 + 13 * (QK_K / 32) + IQ3S_N_SCALE, "wrong iq3_s block size/padding");

/* 1.5625 bits per weight */
typedef struct {
    qgemv_half d;
    uint8_t qs[QK_K / 8];
    uint16_t qh[QK_K / 32];
} block_iq1_s;
static_assert(sizeof(block_iq1_s) == 2 + QK_K / 8 + QK_K / 16, "wrong iq1_s block size/padding");

/* 1.75 bits per weight; the f16 super-block scale is spread over the top nibbles of scales */
typedef struct {
    uint8_t qs[QK_K / 8];
    uint8_t qh[QK_K / 16];
    uint8_t scales[QK_K / 32];
} block_iq1_m;
static_assert(sizeof(block_iq1_m) == QK_K / 8 + QK_K / 16 + QK_K / 32, "wrong iq1_m block size/padding");

/* x = d * (ls - 32) * kvalues_iq4nl[q] per 32 values, ls 6-bit; 4.25 bits per weight */
typedef struct {
    qgemv_half d;
    uint16_t scales_h;
    uint8_t scales_l[QK_K / 64];
    uint8_t qs[QK_K / 2];
} block_iq4_xs;
static_assert(sizeof(block_iq4_xs) == 2 + 2 + QK_K / 64 + QK_K / 2, "wrong iq4_xs block size/padding");

/* ---------------------------------------------------------------- 8 rows interleaved
 *
 * The layout qgemv prepares once per matrix for the 4-bit 32-value formats that llama.cpp
 * repacks (qgemv/_formats.py: interleave = 8, ggml_repack; QMatrix keeps its GGUF bytes and
 * builds this beside them): a panel of 8 rows
 * stores block b of all 8 rows together, the scales first, then the nibbles in 4 groups of 32
 * bytes, group g holding bytes 4g .. 4g + 3 of row 0, then of row 1, ... row 7
 *     qs[32 g + 4 r + j] = row r's qs[4 g + j]      (g < 4, r < 8, j < 4),
 * so one 32-byte load gives one int32 lane per row (values 4g .. 4g + 3 in the low nibbles,
 * 16 + 4g .. 16 + 4g + 3 in the high ones).  A panel block is 8 blocks' bytes: the same
 * traffic as the rows it holds. */
typedef struct {
    qgemv_half d[8];
    uint8_t qs[8 * QK4_0 / 2];
} block_q4_0x8;
static_assert(sizeof(block_q4_0x8) == 8 * sizeof(block_q4_0), "wrong q4_0x8 block size/padding");

typedef struct {
    qgemv_half d[8];
    uint8_t qs[8 * QK4_NL / 2];
} block_iq4_nlx8;
static_assert(sizeof(block_iq4_nlx8) == 8 * sizeof(block_iq4_nl), "wrong iq4_nlx8 block size/padding");

typedef struct {
    uint8_t e[8];
    uint8_t qs[8 * QK_MXFP4 / 2];
} block_mxfp4x8;
static_assert(sizeof(block_mxfp4x8) == 8 * sizeof(block_mxfp4), "wrong mxfp4x8 block size/padding");

/* The same idea for the 32-value formats whose products keep ggml's vec_dot arithmetic (q4_1,
 * q5_0, q5_1; src/formats/q32_pairs.h): a panel block holds block b of 8 rows, the scales (and
 * minima) of rows 0..7 first, then
 *     qh[j] bit R  = the 5th bit of byte j of register R      (R = 2 p + h, j < 32),
 *     qs[16 r + j] = row r's qs[j]                             (r < 8, j < 16),
 * so one 32-byte load of qs gives the row pair 2p, 2p + 1 (row 2p in bytes 0..15), its low
 * nibbles (values 0..15 of both rows) making register 2p and its high nibbles (values 16..31)
 * register 2p + 1; byte j of a register is row 2p + j / 16's value 16 h + j % 16. */
typedef struct {
    qgemv_half d[8];
    qgemv_half m[8];
    uint8_t qs[8 * QK4_1 / 2];
} block_q4_1x8;
static_assert(sizeof(block_q4_1x8) == 8 * sizeof(block_q4_1), "wrong q4_1x8 block size/padding");

typedef struct {
    qgemv_half d[8];
    uint8_t qh[8 * QK5_0 / 8];
    uint8_t qs[8 * QK5_0 / 2];
} block_q5_0x8;
static_assert(sizeof(block_q5_0x8) == 8 * sizeof(block_q5_0), "wrong q5_0x8 block size/padding");

typedef struct {
    qgemv_half d[8];
    qgemv_half m[8];
    uint8_t qh[8 * QK5_1 / 8];
    uint8_t qs[8 * QK5_1 / 2];
} block_q5_1x8;
static_assert(sizeof(block_q5_1x8) == 8 * sizeof(block_q5_1), "wrong q5_1x8 block size/padding");

/* iq1_m as trits, larger than the rows it holds (src/formats/iq1.h): its grid points hold values
 * g in {-1, 0, 1}, so a row's block stores t = g + 1 as 2-bit fields in tq2_0's order, which
 * decode with a shift and a mask instead of 32 grid gathers,
 *     t[32 h + k] bits 2 l, 2 l + 1 = t of value 128 h + 32 l + k    (h < 2, l < 4, k < 32),
 *     neg bit j = 1: the 8 values 8 j .. 8 j + 7 take delta = -1/8, else +1/8,
 *     scales    = the GGUF block's scales (the sub-block scales and d, as stored),
 * 76 bytes for the GGUF block's 56; a panel is 8 rows of these, one row after another. */
typedef struct {
    uint8_t t[QK_K / 4];
    uint32_t neg;
    uint8_t scales[QK_K / 32];
} block_iq1_mt;
static_assert(sizeof(block_iq1_mt) == QK_K / 4 + 4 + QK_K / 32, "wrong iq1_mt block size/padding");

/* iq1_s as trits likewise (src/formats/iq1.h): t = g + 1 in block_iq1_mt's 2-bit fields, then the
 * GGUF block's qh (of which the products read bits 12-14, sub-block ib's 3-bit scale, and bit 15,
 * its delta sign) and d, 82 bytes for the GGUF block's 50; a panel is 8 rows of these, one row
 * after another. */
typedef struct {
    uint8_t t[QK_K / 4];
    uint16_t qh[QK_K / 32];
    qgemv_half d;
} block_iq1_st;
static_assert(sizeof(block_iq1_st) == QK_K / 4 + 2 * (QK_K / 32) + 2, "wrong iq1_st block size/padding");

/* iq2_xxs, iq2_xs and iq2_s as 2-bit codes, larger than the rows they hold (src/formats/grid_codes.h):
 * the three grids' points hold the magnitudes 8, 25 and 43 only, so a value is its code c (0, 1,
 * 2: 8, 25, 43) and a sign bit, which decode with a shift, a mask and a 16-byte lookup instead of
 * grid gathers,
 *     codes[32 h + k] bits 2 l, 2 l + 1 = c of value 128 h + 32 l + k    (h < 2, l < 4, k < 32),
 *     signs bit j of byte i = 1: value 8 i + j is negative,
 *     scales[k]  = the 4-bit s of sub-block k's first 16 values (low nibble) and last 16 (high;
 *                  iq2_xxs: both its one s), x = d (0.5 + s) / 4 sign level,
 * 106 bytes for the GGUF block's 66 (iq2_xxs), 74 (iq2_xs) or 82 (iq2_s); a panel is 8 rows of
 * these, one row after another. */
typedef struct {
    qgemv_half d;
    uint8_t scales[QK_K / 32];
    uint8_t codes[QK_K / 4];
    uint8_t signs[QK_K / 8];
} block_iq2_c;
static_assert(sizeof(block_iq2_c) == 2 + QK_K / 32 + QK_K / 4 + QK_K / 8, "wrong iq2_c block size/padding");

/* iq3_xxs and iq3_s as 4-bit codes, the same for their 8-level grids (iq3_xxs: 4, 12, .., 52, 62;
 * iq3_s: 1, 3, .., 15; src/formats/grid_codes.h): c the level's index,
 *     codes[16 k + j] = c of value 32 k + j (low nibble), of value 32 k + 16 + j (high nibble),
 *     signs and scales as block_iq2_c's (x = d (0.5 + s) / 2 sign level for iq3_xxs, d (1 + 2 s)
 *     sign level for iq3_s; both halves of a sub-block hold its one s),
 * 170 bytes for the GGUF block's 98 (iq3_xxs) or 110 (iq3_s); each format reads its own alias
 * (its levels and scale factor). */
typedef struct {
    qgemv_half d;
    uint8_t scales[QK_K / 32];
    uint8_t codes[QK_K / 2];
    uint8_t signs[QK_K / 8];
} block_iq3_c;
static_assert(sizeof(block_iq3_c) == 2 + QK_K / 32 + QK_K / 2 + QK_K / 8, "wrong iq3_c block size/padding");
typedef block_iq3_c block_iq3_xxs_c;
typedef block_iq3_c block_iq3_s_c;

/* ---------------------------------------------------------------- 16 rows interleaved
 *
 * f32, f16 and bf16 (qgemv/_formats.py: interleave = 16; src/formats/float_panels.h): panel block i
 * holds value i of 16 rows, v[r] = row r's value i, one vector of the 16 rows a value.
 */
typedef struct {
    block_f32 v[16];
} block_f32x16;
static_assert(sizeof(block_f32x16) == 16 * sizeof(block_f32), "wrong f32x16 block size/padding");
typedef struct {
    block_f16 v[16];
} block_f16x16;
static_assert(sizeof(block_f16x16) == 16 * sizeof(block_f16), "wrong f16x16 block size/padding");
typedef struct {
    block_bf16 v[16];
} block_bf16x16;
static_assert(sizeof(block_bf16x16) == 16 * sizeof(block_bf16), "wrong bf16x16 block size/padding");

/*
 *
 * the K-quants, iq4_xs and tq2_0 (qgemv/_formats.py: interleave = 16; src/formats/superblocks_x16.h): a panel
 * block holds super-block b of 16 rows, every field transposed so row r sits in lane r,
 *     d[r], dmin[r]                  row r's d and dmin (no dmin: q6_K),
 *     scales[16 i + r]             = row r's scales[i]          (i < 12; q6_K: i < 16),
 *     qh[64 k + 4 r + j]           = row r's qh[4 k + j]        (k < 8, j < 4; q6_K: k < 16),
 *     qs[64 g + 4 r + j]           = row r's qs[4 g + j]        (g < 32, j < 4; q6_K: ql,
 *                                                                 and qh and ql in another order),
 * so one 64-byte load gives a uint32 lane per row: of q4_K's qs group g = 8 c + k, the low
 * nibbles are values 64 c + 4 k .. + 3 (sub-block 2 c), the high ones 32 more (sub-block
 * 2 c + 1); of q6_K's ql group g = 16 h + k, values 128 h + 4 k .. and 64 more.
 * A panel block is 16 blocks' bytes: the same traffic as the rows it holds. */
typedef struct {
    qgemv_half d[16];
    qgemv_half dmin[16];
    uint8_t scales[16 * K_SCALE_SIZE];
    uint8_t qs[16 * QK_K / 2];
} block_q4_Kx16;
static_assert(sizeof(block_q4_Kx16) == 16 * sizeof(block_q4_K), "wrong q4_Kx16 block size/padding");

typedef struct {
    qgemv_half d[16];
    qgemv_half dmin[16];
    uint8_t scales[16 * K_SCALE_SIZE];
    uint8_t qh[16 * QK_K / 8];
    uint8_t qs[16 * QK_K / 2];
} block_q5_Kx16;
static_assert(sizeof(block_q5_Kx16) == 16 * sizeof(block_q5_K), "wrong q5_Kx16 block size/padding");

/* q6_K's levels come in the order its products read them, so a panel streams front to back:
 * half h holds ql group 16 h + k, then qh group 8 h + k, for k < 8, then ql groups 16 h + 8 ..
 * 16 h + 15 (which take the same qh groups' other bits), each group 16 rows x 4 bytes */
typedef struct {
    qgemv_half d[16];
    int8_t scales[16 * QK_K / 16];
    uint8_t q[2][24][64];
} block_q6_Kx16;
static_assert(sizeof(block_q6_Kx16) == 16 * sizeof(block_q6_K), "wrong q6_Kx16 block size/padding");

/* q2_K: d[r], dmin[r], scales[16 s + r] = row r's scales[s] (s < 16), qs[64 g + 4 r + j] = row
 * r's qs[4 g + j] (g < 16: values 128 (g / 8) + 32 f + 4 (g % 8) .. + 3 in bits 2 f, 2 f + 1) */
typedef struct {
    qgemv_half d[16];
    qgemv_half dmin[16];
    uint8_t scales[16 * QK_K / 16];
    uint8_t qs[16 * QK_K / 4];
} block_q2_Kx16;
static_assert(sizeof(block_q2_Kx16) == 16 * sizeof(block_q2_K), "wrong q2_Kx16 block size/padding");

/* q8_0 (src/formats/q8_0_x16.h): d[r], u[64 i + 4 r + j] = row r's qs[4 i + j] + 128 (i < 8, j < 4:
 * the sign bit flipped, vpdpbusd's unsigned operand), so one 64-byte load gives lane i of ggml's
 * AVX2 dot (values 4 i .. 4 i + 3) for 16 rows */
typedef struct {
    qgemv_half d[16];
    uint8_t u[16 * 32];
} block_q8_0x16;
static_assert(sizeof(block_q8_0x16) == 16 * sizeof(block_q8_0), "wrong q8_0x16 block size/padding");

/* q3_K: d[r], scales[16 i + r] = row r's scales[i] (i < 12), hmask[64 m + 4 r + j] = row r's
 * hmask[4 m + j] (m < 8), qs as q2_K's */
typedef struct {
    qgemv_half d[16];
    uint8_t scales[16 * 12];
    uint8_t hmask[16 * QK_K / 8];
    uint8_t qs[16 * QK_K / 4];
} block_q3_Kx16;
static_assert(sizeof(block_q3_Kx16) == 16 * sizeof(block_q3_K), "wrong q3_Kx16 block size/padding");

/* iq4_xs: d[r], scales_h[r], scales_l[4 r + j] = row r's scales_l[j], then qs as q4_K's (group
 * g = 4 s + k: values 32 s + 4 k .. + 3 in the low nibbles, 16 more in the high ones) */
typedef struct {
    qgemv_half d[16];
    uint16_t scales_h[16];
    uint8_t scales_l[16 * QK_K / 64];
    uint8_t qs[16 * QK_K / 2];
} block_iq4_xsx16;
static_assert(sizeof(block_iq4_xsx16) == 16 * sizeof(block_iq4_xs), "wrong iq4_xsx16 block size/padding");

/* tq2_0: d[r], qs as q2_K's (qs[64 g + 4 r + j] = row r's qs[4 g + j], g < 16: values 128 (g / 8)
 * + 32 f + 4 (g % 8) .. + 3 in bits 2 f, 2 f + 1) */
typedef struct {
    qgemv_half d[16];
    uint8_t qs[16 * QK_K / 4];
} block_tq2_0x16;
static_assert(sizeof(block_tq2_0x16) == 16 * sizeof(block_tq2_0), "wrong tq2_0x16 block size/padding");

/* ---------------------------------------------------------------- packed activations */

/* 16 columns of q8_K activations, one super-block, columns in the lanes of a 512-bit vector
 * (src/packed_tile.h): qs[g][c] = column c's values 4 g .. 4 g + 3, nbias[k][c] = -64 times the
 * sum of column c's values 16 k .. 16 k + 15 (what the weights' bias of 64 adds), d[c] its
 * scale, bsum2[p][c] its bsums 2 p and 2 p + 1 as an int16 pair (a K-quant's minimums); columns
 * past the batch are zeros */
typedef struct {
    int8_t qs[QK_K / 4][16][4];
    int32_t nbias[QK_K / 16][16];
    float d[16];
    int16_t bsum2[QK_K / 32][16][2];
} block_q8_Kx16c;
static_assert(sizeof(block_q8_Kx16c) == 16 * (QK_K + QK_K / 16 * 4 + 4 + QK_K / 32 * 4), "wrong q8_Kx16c block size/padding");

/* 16 columns of q8_0 activations, one block, the same way (the 4-bit formats llama.cpp repacks,
 * src/formats/q32_x8.h): qs[j][c] = column c's values 4 j .. 4 j + 3, sum[c] the sum of its 32
 * values, d[c] its scale as a float; columns past the batch are zeros */
typedef struct {
    int8_t qs[QK8_0 / 4][16][4];
    int32_t sum[16];
    float d[16];
} block_q8_0x16c;
static_assert(sizeof(block_q8_0x16c) == 16 * (QK8_0 + 4 + 4), "wrong q8_0x16c block size/padding");

#endif /* QGEMV_BLOCKS_H */
