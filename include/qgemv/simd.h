/* qgemv/simd.h: the few SIMD building blocks the block kernels share.
 *
 * Which ones exist depends on the flags the including translation unit was compiled with
 * (src/kernels.c is built once per ISA): QGEMV_AVX512_BF16 (+ AVX512_BF16) implies
 * QGEMV_AVX512 (AVX-512 F/BW/VL + VNNI), which implies QGEMV_AVX2 (AVX2 + FMA + F16C); none
 * means portable C only.  QGEMV_VNNI: vpdpbusd and vpdpwssd on 256-bit vectors, from AVX-512 VNNI
 * or from AVX-VNNI (the avxvnni variant: AVX2 and AVX-VNNI alone).
 */
#ifndef QGEMV_SIMD_H
#define QGEMV_SIMD_H

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define QGEMV_AVX2 1
#include <immintrin.h>
#endif
#if defined(QGEMV_AVX2) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) \
    && defined(__AVX512VNNI__)
#define QGEMV_AVX512 1
#endif
#if defined(QGEMV_AVX512) && defined(__AVX512BF16__)
#define QGEMV_AVX512_BF16 1
#endif
/* VNNI on 256-bit vectors: AVX-512's (VL) or AVX-VNNI's (Alder Lake and later without AVX-512) */
#if defined(QGEMV_AVX512) || (defined(QGEMV_AVX2) && defined(__AVXVNNI__))
#define QGEMV_VNNI 1
#endif

/* v stays in a register where it is loaded, for every use after: GCC otherwise folds a vector
 * it can load again into each instruction that reads it (the float tiles' activations, 15
 * loads per 12 fmas; q8_0's levels, loaded again for a pass's second column) */
#if defined(__GNUC__) || defined(__clang__)
#define QGEMV_IN_REGISTER(v) __asm__("" : "+v"(v))
#else
#define QGEMV_IN_REGISTER(v) ((void)0)
#endif

/* A row's vec_dot reads its weights once, front to back: asking for the line QGEMV_STREAM_AHEAD
 * bytes ahead at every block keeps enough reads in flight for a GEMV streaming from DRAM (the
 * hardware prefetcher alone leaves a thread well short of its bandwidth).  A hint only: it
 * never faults, even past the end of the matrix, and never changes a result.
 * Two hints a line: the far one into L2 (prefetcht1), the line QGEMV_L1_AHEAD bytes on into L1
 * (prefetcht0).  On an Intel Xeon (AMX, a KVM guest) far lines asked into L1 held L1's few fill
 * buffers: 14336 x 4096 out of cache, 2 threads, q4_0 1.30 -> 1.08 ms, q4_1 1.78 -> 1.38, q8_0
 * 2.23 -> 1.91, q4_K 1.20 -> 1.04, q6_K 1.93 -> 1.64, iq4_xs 1.19 -> 1.02 (1.04-1.29x; nvfp4 and
 * iq2_xxs even), 1 thread 1.05-1.17x, in cache 0.96-1.04x.  The far hint alone, into L2, lost
 * in cache (0.96-0.99x) and q5_K and iq2_xxs out of it (benches/RESULTS.md, twenty-ninth session).
 * A single column's streams, rows and panels alike, ask for lines only where the CPU's own
 * prefetcher needs the help (qgemv_prefetch_one_column, src/kernels.c: a choice per CPU, made at
 * import by qgemv/_dispatch.py): a Zen 4 streams them faster alone (14336 x 4096 out of cache, 2
 * / 1 threads, builds alternating, the rows with the hints and without: mxfp4 1.13x / 1.06x,
 * tq1_0 1.10x / 1.08x, iq4_xs 1.06x / 1.05x, the others even; its avx2 variant q4_0 1.12x /
 * 1.47x, q8_0 1.20x / 1.23x, q6_K 1.23x / 1.18x, mxfp4 1.29x / 1.23x; in cache even). */
#ifndef QGEMV_STREAM_AHEAD
#define QGEMV_STREAM_AHEAD 4096
#endif
#define QGEMV_L1_AHEAD 1024
#if (defined(__GNUC__) || defined(__clang__)) && QGEMV_STREAM_AHEAD > 0
/* the line at p + ahead into L1 only */
#define QGEMV_PREFETCH_L1_AT(p, ahead) __builtin_prefetch((const char *)(p) + (ahead), 0, 3)
/* both hints, for a single column's stream: where the CPU asks for them (above); elsewhere to
 * the line at p itself, which the stream reads anyway.  A branch on the flag here cost the rows
 * with the hints on 2-10% in cache (Zen 4, QGEMV_GEMV_PREFETCH=1, 1 thread: q8_0's GGUF rows
 * 0.64 -> 0.66-0.69 ms, its avx2 rows 0.65 -> 0.70-0.73, q4_K 0.48 -> 0.49); this costs the
 * idle hints' issue alone, which only the 16-row panels' dense hints felt (2 a line, q8_0's 16 a
 * block beside 24 operations: 512 x 4096 in L2, 1 thread, 6-13%), so their passes take the
 * choice as a constant instead (superblocks_x16.h: QGEMV_X16_ONE_COLUMN; q8_0_x16.h); the other
 * single columns with every hint compiled out ran 0-3% faster */
#define QGEMV_PREFETCH_LINE_AT(p, ahead)                                                   \
    (__builtin_prefetch((const char *)(p) + qgemv_prefetch_one_column * (ahead), 0, 2),    \
     QGEMV_PREFETCH_L1_AT(p, qgemv_prefetch_one_column * QGEMV_L1_AHEAD))
#else
#define QGEMV_PREFETCH_L1_AT(p, ahead) ((void)(p))
#define QGEMV_PREFETCH_LINE_AT(p, ahead) ((void)(p))
#endif
#define QGEMV_PREFETCH_LINE(p) QGEMV_PREFETCH_LINE_AT(p, QGEMV_STREAM_AHEAD)
/* A pass over several columns spends long enough on each line that one hint, into L1, keeps up,
 * and a second costs: batch 8 in cache ran 0.91-0.96x with both (q4_0, q4_K, q6_K, iq3_xxs on
 * panels; nvfp4, q2_0, iq1_s 0.96-0.98x on GGUF rows; Intel Xeon, 2 threads).  A single column
 * streams: both hints. */
#define QGEMV_PREFETCH_COLS_AT(p, ahead, ncols)                                            \
    ((ncols) > 1 ? QGEMV_PREFETCH_L1_AT(p, ahead) : QGEMV_PREFETCH_LINE_AT(p, ahead))
#define QGEMV_PREFETCH_COLS_LINE(p, ncols) QGEMV_PREFETCH_COLS_AT(p, QGEMV_STREAM_AHEAD, ncols)
/* hint(line, ...) for each 64-byte line of the nbytes at p (a block, or a few): the loop behind
 * the stream macros below, one per hint */
#define QGEMV_PREFETCH_EACH_LINE(hint, p, nbytes, ...)                                     \
    do {                                                                                   \
        for (size_t o_ = 0; o_ < (size_t)(nbytes); o_ += 64) hint((const char *)(p) + o_, __VA_ARGS__); \
    } while (0)
/* the lines `ahead` bytes past the nbytes at p, both hints */
#define QGEMV_PREFETCH_STREAM_AT(p, nbytes, ahead)                                         \
    QGEMV_PREFETCH_EACH_LINE(QGEMV_PREFETCH_LINE_AT, p, nbytes, ahead)
#define QGEMV_PREFETCH_STREAM(p, nbytes) QGEMV_PREFETCH_STREAM_AT(p, nbytes, QGEMV_STREAM_AHEAD)
/* the same into L1 only: for a pass that spends long on each line, a batch's
 * (QGEMV_PREFETCH_COLS_AT) or a row decoded slower than memory streams it (the IQ grids, 6-8
 * GB/s a thread: 0.97-0.99x with both hints, Intel Xeon; their iq3 code rows, faster, take both:
 * src/formats/grid_codes.h), or a stream read out of its order */
#define QGEMV_PREFETCH_L1_STREAM_AT(p, nbytes, ahead)                                      \
    QGEMV_PREFETCH_EACH_LINE(QGEMV_PREFETCH_L1_AT, p, nbytes, ahead)
#define QGEMV_PREFETCH_L1_STREAM(p, nbytes) QGEMV_PREFETCH_L1_STREAM_AT(p, nbytes, QGEMV_STREAM_AHEAD)
/* the same for a pass over ncols columns (QGEMV_PREFETCH_COLS_AT) */
#define QGEMV_PREFETCH_COLS_STREAM_AT(p, nbytes, ahead, ncols)                             \
    QGEMV_PREFETCH_EACH_LINE(QGEMV_PREFETCH_COLS_AT, p, nbytes, ahead, ncols)
#define QGEMV_PREFETCH_COLS_STREAM(p, nbytes, ncols)                                       \
    QGEMV_PREFETCH_COLS_STREAM_AT(p, nbytes, QGEMV_STREAM_AHEAD, ncols)

/* A pass over panels (the K-quants' 16-row passes, src/formats/superblocks_x16.h, and
 * q8_0_x16.h; the 8-row passes of q32_x8.h and q32_pairs.h) against ncols columns asks for its
 * level lines ahead when it has two columns or more, and with a single column where the CPU
 * asks for it (QGEMV_PREFETCH_LINE_AT, above): an Intel Xeon's prefetcher left the single
 * column waiting on memory, a Zen 4's streams the panels faster alone (superblocks_x16.h and
 * q32_x8.h have the figures).
 * A single column's 16-row panels ask for their far lines QGEMV_PANEL_AHEAD on, nearer than
 * the rows' QGEMV_STREAM_AHEAD, which ran faster (Intel Xeon, C harness on huge pages, 14336 x 4096 rotated through 470 MiB, 3072 against 4096, 1 / 2
 * threads: q6_K 15.2 -> 16.1 / 29.7 -> 31.8 GB/s, q3_K 13.8 -> 14.1 / 26.9 -> 27.9, q2_K 2
 * threads 24 -> 27, q4_K, q5_K and iq4_xs 1.01-1.04x, q8_0 even; the 8-row panels ran 4-7%
 * slower so and keep QGEMV_STREAM_AHEAD) */
#define QGEMV_PANEL_AHEAD 3072
#define QGEMV_PREFETCH_PASS_LINE(p, ncols)                                                 \
    ((ncols) > 1 ? QGEMV_PREFETCH_COLS_LINE(p, ncols) : QGEMV_PREFETCH_LINE_AT(p, QGEMV_PANEL_AHEAD))
/* the same in a pass that knows whether a single column wants its hints (hints, a constant per
 * instantiation: below, a single column's hints where the CPU streams alone are not issued at
 * all, rather than aimed at the line about to be loaded) */
#define QGEMV_PASS_HINTS(ncols, hints) ((ncols) > 1 || (hints))
#define QGEMV_PREFETCH_PASS_LINE_IF(hints, p, ncols)                                       \
    (QGEMV_PASS_HINTS(ncols, hints) ? QGEMV_PREFETCH_PASS_LINE(p, ncols) : (void)0)
#define QGEMV_PREFETCH_COLS_LINE_IF(hints, p, ncols)                                       \
    (QGEMV_PASS_HINTS(ncols, hints) ? QGEMV_PREFETCH_COLS_LINE(p, ncols) : (void)0)

/* AMX (Intel, from Sapphire Rapids): the avx512bf16 variant builds its tile paths on Linux with
 * GCC 11+ or clang 12+, as functions of their own target (QGEMV_AMX_TARGET), so nothing else in
 * the variant may use AMX; whether they run is chosen at import (qgemv/_dispatch.py: amx), after
 * Linux has granted the process the tile state (runtime.h: qgemv_amx_request). */
#if defined(QGEMV_AVX512_BF16) && defined(__linux__) && \
    ((defined(__clang__) && __clang_major__ >= 12) || (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 11))
#define QGEMV_AMX 1
#define QGEMV_AMX_TARGET __attribute__((target("amx-tile,amx-int8,avx512vbmi")))
#include <stdint.h>
#include <string.h>
/* ldtilecfg's 64 bytes */
typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} qgemv_tile_config;
/* ldtilecfg of the whole 64 bytes: GCC 12's _tile_loadconfig tells the compiler it reads only a
 * pointer's worth of them, and at -O2 the stores of the rest were dropped (tilezero then raised
 * #UD) */
QGEMV_AMX_TARGET static inline void qgemv_tile_load_config(const qgemv_tile_config *cfg) {
    __asm__ volatile("ldtilecfg %0" : : "m"(*cfg));
}
/* palette 1, tile t rows[t] rows of 64 bytes (0: unused) */
QGEMV_AMX_TARGET static inline void qgemv_tile_configure(const uint8_t rows[8]) {
    qgemv_tile_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) {
        cfg.rows[t] = rows[t];
        cfg.colsb[t] = rows[t] ? 64 : 0;
    }
    qgemv_tile_load_config(&cfg);
}
/* Signed bytes q times f (int16, the same in both 16-bit words of a pair of bytes) as 64 H + L,
 * byte for byte: H = floor(q f / 64) (int8 while |q f| <= 8128), L = q f & 63 (0..63): the
 * two B or A tiles of tdpbssd and tdpbsud whose sums give 64 C_H + C_L = sum q f p exactly,
 * where q f itself does not fit a byte */
QGEMV_AMX_TARGET static inline void qgemv_amx_split_hl(__m512i q, __m512i f, __m512i *H, __m512i *L) {
    const __m512i pe = _mm512_mullo_epi16(_mm512_srai_epi16(_mm512_slli_epi16(q, 8), 8), f);   /* even bytes */
    const __m512i po = _mm512_mullo_epi16(_mm512_srai_epi16(q, 8), f);                         /* odd bytes */
    *H = _mm512_mask_blend_epi8(0xAAAAAAAAAAAAAAAAull, _mm512_srai_epi16(pe, 6), _mm512_slli_epi16(_mm512_srai_epi16(po, 6), 8));
    *L = _mm512_ternarylogic_epi32(_mm512_slli_epi16(po, 8), _mm512_set1_epi16(0x3f00),
                                   _mm512_and_si512(pe, _mm512_set1_epi16(0x003f)), 0xEA);   /* (po << 8 & 0x3f00) | (pe & 63) */
}
/* int32 lanes -> the same value in both 16-bit words (qgemv_amx_split_hl's f for dword rows) */
static inline __m512i qgemv_amx_words(__m512i v) {
    return _mm512_or_si512(_mm512_and_si512(v, _mm512_set1_epi32(0xffff)), _mm512_slli_epi32(v, 16));
}
#endif

#if defined(QGEMV_AVX2)

/* sum of the 8 lanes */
static inline float qgemv_hsum_f32x8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* the exact total of v's 8 int32 lanes, in every lane of the result */
static inline __m128i qgemv_total_i32x8(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
}
static inline int qgemv_hsum_i32x8(__m256i v) { return _mm_cvtsi128_si32(qgemv_total_i32x8(v)); }

/* the exact total t of v's 8 int32 lanes as (float) t in lane 0, and fma(s, (float) t, acc):
 * a row's per-block float step, its total kept in the vector unit.  Through a general register
 * (qgemv_hsum_i32x8, then a scalar conversion) the step held the row's chain, and GCC kept the
 * accumulator in memory: the AVX2 q6_K GEMV (4096 x 4096, 1 thread, Zen 4) 0.59 -> 0.54 ms */
static inline __m128 qgemv_total_i32x8_ps(__m256i v) { return _mm_cvtepi32_ps(qgemv_total_i32x8(v)); }
static inline float qgemv_fma_total_i32x8(float s, __m256i v, float acc) {
    return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(s), qgemv_total_i32x8_ps(v), _mm_set_ss(acc)));
}

/* four vectors of int32 lanes -> the four exact totals (7 operations for all four, where
 * qgemv_hsum_i32x8 takes 6 for one) */
static inline __m128i qgemv_totals4_i32(__m256i p0, __m256i p1, __m256i p2, __m256i p3) {
    const __m256i a01 = _mm256_add_epi32(_mm256_unpacklo_epi32(p0, p1), _mm256_unpackhi_epi32(p0, p1));
    const __m256i a23 = _mm256_add_epi32(_mm256_unpacklo_epi32(p2, p3), _mm256_unpackhi_epi32(p2, p3));
    const __m256i b = _mm256_add_epi32(_mm256_unpacklo_epi64(a01, a23), _mm256_unpackhi_epi64(a01, a23));
    return _mm_add_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
}

/* four f16 -> four floats (exact) */
static inline __m128 qgemv_f16x4(qgemv_half a, qgemv_half b, qgemv_half c, qgemv_half d) {
    return _mm_cvtph_ps(_mm_setr_epi16((short)a, (short)b, (short)c, (short)d, 0, 0, 0, 0));
}

#if defined(QGEMV_VNNI)
/* acc + u8 x s8 products summed in groups of 4 (vpdpbusd), and acc + s16 x s16 pairs (vpdpwssd) */
#if defined(QGEMV_AVX512)
#define qgemv_dpbusd_256 _mm256_dpbusd_epi32
#define qgemv_dpwssd_256 _mm256_dpwssd_epi32
#else
#define qgemv_dpbusd_256 _mm256_dpbusd_avx_epi32
#define qgemv_dpwssd_256 _mm256_dpwssd_avx_epi32
#endif
#endif
/* acc + u8 x s8 products summed in groups of 4 into 8 int32 lanes (VNNI: one vpdpbusd) */
static inline __m256i qgemv_dot_u8s8_acc(__m256i acc, __m256i u, __m256i s) {
#if defined(QGEMV_VNNI)
    return qgemv_dpbusd_256(acc, u, s);
#else
    /* maddubs cannot saturate here: |u| <= 127 or u <= 31 with |s| <= 127 in every caller */
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#endif
}
/* u8 x s8 products summed in groups of 4 into 8 int32 lanes */
static inline __m256i qgemv_dot_u8s8_i32x8(__m256i u, __m256i s) {
#if defined(QGEMV_VNNI)
    return qgemv_dpbusd_256(_mm256_setzero_si256(), u, s);
#else
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));   /* as above, no add */
#endif
}
/* acc + s16 x s16 products summed in pairs into 8 int32 lanes (madd and add; VNNI: one vpdpwssd,
 * the same int32) */
static inline __m256i qgemv_madd_acc(__m256i acc, __m256i a, __m256i b) {
#if defined(QGEMV_VNNI)
    return qgemv_dpwssd_256(acc, a, b);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
#endif
}

#if defined(QGEMV_AVX512)
/* acc + u . (the 4 bytes at p in every lane): vpdpbusd with an embedded broadcast ({1to16},
 * {1to8}), which GCC does not form by itself (it emits a vpbroadcastd, a vector uop more, per
 * product; the panels' batch passes ran 3-18% faster without them on a Zen 4).  The operand
 * is read as char[4], which may alias the int8 activations */
#if defined(__GNUC__) || defined(__clang__)
#define QGEMV_DEFINE_DPBUSD_BCST(bits, lanes)                                                 \
    static inline __m##bits##i qgemv_dpbusd_bcst_##bits(__m##bits##i acc, __m##bits##i u, const void *p) { \
        __asm__("vpdpbusd %2%{1to" #lanes "%}, %1, %0" : "+v"(acc) : "v"(u), "m"(*(const char(*)[4])p)); \
        return acc;                                                                         \
    }
#else
#define QGEMV_DEFINE_DPBUSD_BCST(bits, lanes)                                                 \
    static inline __m##bits##i qgemv_dpbusd_bcst_##bits(__m##bits##i acc, __m##bits##i u, const void *p) { \
        int32_t v;                                                                          \
        memcpy(&v, p, 4);                                                                   \
        return _mm##bits##_dpbusd_epi32(acc, u, _mm##bits##_set1_epi32(v));                  \
    }
#endif
QGEMV_DEFINE_DPBUSD_BCST(512, 16)
QGEMV_DEFINE_DPBUSD_BCST(256, 8)
#elif defined(QGEMV_VNNI)
/* AVX-VNNI has no embedded broadcast: a vpbroadcastd from memory, then the VEX vpdpbusd */
static inline __m256i qgemv_dpbusd_bcst_256(__m256i acc, __m256i u, const void *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm256_dpbusd_avx_epi32(acc, u, _mm256_set1_epi32(v));
}
#endif

/* s8 x s8 products summed in groups of 4: |x| * (y with x's sign) keeps maddubs' u8 x s8 */
static inline __m256i qgemv_dot_s8s8_i32x8(__m256i x, __m256i y) {
    return qgemv_dot_u8s8_i32x8(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
}
/* the same, as float partial sums */
static inline __m256 qgemv_dot_s8s8_f32x8(__m256i x, __m256i y) {
    return _mm256_cvtepi32_ps(qgemv_dot_s8s8_i32x8(x, y));
}

static inline __m256 qgemv_dot_u8s8_f32x8(__m256i u, __m256i s) {
    return _mm256_cvtepi32_ps(qgemv_dot_u8s8_i32x8(u, s));
}

/* 16 bytes of nibbles -> 32 bytes: low nibbles first, then high nibbles (one broadcast load,
 * one shift of the upper half, one mask) */
static inline __m256i qgemv_nibbles_32(const uint8_t *qs) {
    const __m256i b = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)qs));
    return _mm256_and_si256(_mm256_srlv_epi64(b, _mm256_setr_epi64x(0, 0, 4, 4)), _mm256_set1_epi8(0x0f));
}

/* 32 bits (4 bytes) -> byte j of qword k holds byte k of the bits (bit j of it is value 8 k + j) */
static inline __m256i qgemv_spread_bits_32(const uint8_t *bits4) {
    uint32_t bits;
    memcpy(&bits, bits4, 4);
    const __m256i shuf = _mm256_setr_epi64x(0x0000000000000000LL, 0x0101010101010101LL,
                                            0x0202020202020202LL, 0x0303030303030303LL);
    return _mm256_shuffle_epi8(_mm256_set1_epi32((int)bits), shuf);
}
/* 32 bits -> 32 bytes, 0xff where the bit is set (bit j -> byte j) */
static inline __m256i qgemv_bits_to_bytes_32(const uint8_t *bits4) {
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    return _mm256_cmpeq_epi8(_mm256_and_si256(qgemv_spread_bits_32(bits4), bit), bit);
}
/* bit j of byte j of each qword (set: negative) -> a _mm256_sign_epi8 operand: byte j AND 2^j,
 * plus 0x80 - 2^j (j < 7) or 1 (j = 7), is 0x80 or 0x81 when the bit is set and a positive byte
 * otherwise; one add where a 0/0xff mask takes a compare and an or */
static inline __m256i qgemv_bit_signs(__m256i spread) {
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    return _mm256_add_epi8(_mm256_and_si256(spread, bit), _mm256_set1_epi64x((long long)0x01406070787c7e7fULL));
}
/* 32 sign bits (4 bytes, bit j: value j < 0) -> sign operand (iq2_s, iq3_s, the xxs formats, q1_0) */
static inline __m256i qgemv_bits_to_signs_32(const uint8_t *bits4) {
    return qgemv_bit_signs(qgemv_spread_bits_32(bits4));
}
/* 32 signs (bits, bit j: value j < 0; or the signs of 32 nonzero bytes) as qgemv_signs_32, and
 * v negated where they are set (-128 stays -128, as _mm256_sign_epi8 leaves it): AVX-512 a mask
 * register and one masked subtract, where AVX2 spreads bits into a _mm256_sign_epi8 operand
 * (4 operations) */
#if defined(QGEMV_AVX512)
typedef __mmask32 qgemv_signs_32;
static inline qgemv_signs_32 qgemv_signs_of_bits_32(const uint8_t *bits4) {
    uint32_t bits;
    memcpy(&bits, bits4, 4);
    return (__mmask32)bits;
}
static inline qgemv_signs_32 qgemv_signs_of_bytes_32(__m256i w) { return _mm256_movepi8_mask(w); }
static inline __m256i qgemv_with_signs_32(__m256i v, qgemv_signs_32 s) {
    return _mm256_mask_sub_epi8(v, s, _mm256_setzero_si256(), v);
}
#else
typedef __m256i qgemv_signs_32;
#define qgemv_signs_of_bits_32 qgemv_bits_to_signs_32
#define qgemv_signs_of_bytes_32(w) (w)   /* bytes never 0: _mm256_sign_epi8 would zero there */
#define qgemv_with_signs_32 _mm256_sign_epi8
#endif

#endif /* QGEMV_AVX2 */
#endif /* QGEMV_SIMD_H */
