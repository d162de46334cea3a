/* The 32-value block formats: q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl, mxfp4 (and q8_1).
 *
 * Each format is written once as
 *   scale_<name>(b) [, min_<name>(b)]   its float scale (and minimum),
 *   unpack_<name>_ref(b, q)             its 32 integer levels, portable C,
 *   unpack_<name>(b)                    the same 32 levels as one __m256i (AVX2 and up),
 * so that x[j] = scale * q[j] (+ min).  The row loops around them are written once, below:
 * dequant_row_<name>, and vec_dot_<name>_q8_0 (symmetric formats: sum d_x d_y sum_j q_j a_j)
 * or vec_dot_<name>_q8_1 (formats with a minimum: d_x d_y sum_j q_j a_j + m_x s_y).  The
 * products of q4_0, iq4_nl and mxfp4 follow ggml's repacked arithmetic instead: q32_x8.h.
 * q4_1, q5_0 and q5_1 multiply from 8 interleaved rows once a matrix has them (q32_pairs.h,
 * the same bits); the loops here serve their GGUF rows (the last rows % 8, set_repack(False)).
 */

/* ---------------------------------------------------------------- q4_0: x = d (q - 8) */
static inline float scale_q4_0(const block_q4_0 *b) { return qgemv_fp16_to_fp32(b->d); }
static inline void unpack_q4_0_ref(const block_q4_0 *b, int8_t q[32]) {
    for (int j = 0; j < 16; j++) {
        q[j] = (int8_t)((b->qs[j] & 0x0f) - 8);
        q[j + 16] = (int8_t)((b->qs[j] >> 4) - 8);
    }
}

/* ---------------------------------------------------------------- q4_1: x = d q + m */
static inline float scale_q4_1(const block_q4_1 *b) { return qgemv_fp16_to_fp32(b->d); }
static inline float min_q4_1(const block_q4_1 *b) { return qgemv_fp16_to_fp32(b->m); }
static inline void unpack_q4_1_ref(const block_q4_1 *b, int8_t q[32]) {
    for (int j = 0; j < 16; j++) {
        q[j] = (int8_t)(b->qs[j] & 0x0f);
        q[j + 16] = (int8_t)(b->qs[j] >> 4);
    }
}

/* ---------------------------------------------------------------- q5_0: x = d (q - 16) */
static inline uint32_t qgemv_load_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline float scale_q5_0(const block_q5_0 *b) { return qgemv_fp16_to_fp32(b->d); }
static inline void unpack_q5_0_ref(const block_q5_0 *b, int8_t q[32]) {
    const uint32_t qh = qgemv_load_u32(b->qh);   /* bit j: 5th bit of value j */
    for (int j = 0; j < 16; j++) {
        q[j] = (int8_t)(((b->qs[j] & 0x0f) | ((qh >> j) << 4 & 0x10)) - 16);
        q[j + 16] = (int8_t)(((b->qs[j] >> 4) | ((qh >> (j + 12)) & 0x10)) - 16);
    }
}

/* ---------------------------------------------------------------- q5_1: x = d q + m */
static inline float scale_q5_1(const block_q5_1 *b) { return qgemv_fp16_to_fp32(b->d); }
static inline float min_q5_1(const block_q5_1 *b) { return qgemv_fp16_to_fp32(b->m); }
static inline void unpack_q5_1_ref(const block_q5_1 *b, int8_t q[32]) {
    const uint32_t qh = qgemv_load_u32(b->qh);
    for (int j = 0; j < 16; j++) {
        q[j] = (int8_t)((b->qs[j] & 0x0f) | ((qh >> j) << 4 & 0x10));
        q[j + 16] = (int8_t)((b->qs[j] >> 4) | ((qh >> (j + 12)) & 0x10));
    }
}

/* ---------------------------------------------------------------- q8_0: x = d q */
static inline float scale_q8_0(const block_q8_0 *b) { return qgemv_fp16_to_fp32(b->d); }
static inline void unpack_q8_0_ref(const block_q8_0 *b, int8_t q[32]) { memcpy(q, b->qs, 32); }

#if defined(QGEMV_VNNI)
/* -128 sum_{j = 4i .. 4i + 3} a_j for each lane i of a q8 block's 32 values: vpdpbusd of levels
 * lifted by 128 (u = q + 128) against a, started from it, gives sum q a exactly (q8_0's panel
 * passes, the AVX-VNNI rows tile and q5_0's AVX-512 passes) */
static inline __m256i q8_lane_starts_lifted_128(const int8_t qs[32]) {
    const __m256i s = qgemv_dpbusd_256(_mm256_setzero_si256(), _mm256_set1_epi8((char)0x80),
                                       _mm256_loadu_si256((const __m256i *)qs));
    return _mm256_sub_epi32(_mm256_setzero_si256(), s);
}
/* 1.5 2^23 as float bits and as a float: an int32 s with |s| < 2^22 added to the bits is the
 * float 1.5 2^23 + s exactly, so one subtraction gives s as a float (the VNNI q8_0 tiles, whose
 * vpdpbusd starts from the bits) */
#define Q8_MAGIC_BITS 0x4B400000
#define Q8_MAGIC 12582912.0f
/* the starts above carrying Q8_MAGIC_BITS: vpdpbusd of u = q + 128 from them gives each lane's
 * sum q a as the bits of 1.5 2^23 + sum q a */
static inline __m256i q8_lane_starts_lifted_magic(const int8_t qs[32]) {
    return _mm256_add_epi32(_mm256_set1_epi32(Q8_MAGIC_BITS), q8_lane_starts_lifted_128(qs));
}
#endif

/* ---------------------------------------------------------------- q8_1: x = d q (s unused) */
static inline float scale_q8_1(const block_q8_1 *b) { return qgemv_fp16_to_fp32(b->d); }
static inline void unpack_q8_1_ref(const block_q8_1 *b, int8_t q[32]) { memcpy(q, b->qs, 32); }

/* ---------------------------------------------------------------- iq4_nl: x = d kvalues_iq4nl[q] */
static inline float scale_iq4_nl(const block_iq4_nl *b) { return qgemv_fp16_to_fp32(b->d); }
static inline void unpack_iq4_nl_ref(const block_iq4_nl *b, int8_t q[32]) {
    for (int j = 0; j < 16; j++) {
        q[j] = kvalues_iq4nl[b->qs[j] & 0x0f];
        q[j + 16] = kvalues_iq4nl[b->qs[j] >> 4];
    }
}

/* ---------------------------------------------------------------- mxfp4: x = 2^(e-128) kvalues_mxfp4[q] */
static inline float scale_mxfp4(const block_mxfp4 *b) { return qgemv_e8m0_to_fp32_half(b->e); }
static inline void unpack_mxfp4_ref(const block_mxfp4 *b, int8_t q[32]) {
    for (int j = 0; j < 16; j++) {
        q[j] = kvalues_mxfp4[b->qs[j] & 0x0f];
        q[j + 16] = kvalues_mxfp4[b->qs[j] >> 4];
    }
}

#if defined(QGEMV_AVX2)
/* the same levels, 32 lanes at a time */
static inline __m256i unpack_q4_0(const block_q4_0 *b) {
    return _mm256_sub_epi8(qgemv_nibbles_32(b->qs), _mm256_set1_epi8(8));
}
static inline __m256i unpack_q4_1(const block_q4_1 *b) { return qgemv_nibbles_32(b->qs); }
static inline __m256i unpack_q5_0(const block_q5_0 *b) {
    /* q | 0xf0 where the 5th bit is clear: (q + 16 h - 16) in two's complement */
    const __m256i hi = _mm256_andnot_si256(qgemv_bits_to_bytes_32(b->qh), _mm256_set1_epi8((char)0xf0));
    return _mm256_or_si256(qgemv_nibbles_32(b->qs), hi);
}
static inline __m256i unpack_q5_1(const block_q5_1 *b) {
    const __m256i hi = _mm256_and_si256(qgemv_bits_to_bytes_32(b->qh), _mm256_set1_epi8(0x10));
    return _mm256_or_si256(qgemv_nibbles_32(b->qs), hi);
}
static inline __m256i unpack_q8_0(const block_q8_0 *b) { return _mm256_loadu_si256((const __m256i *)b->qs); }
static inline __m256i unpack_q8_1(const block_q8_1 *b) { return _mm256_loadu_si256((const __m256i *)b->qs); }
static inline __m256i qgemv_lookup16(const int8_t table[16], __m256i idx) {
    const __m128i t = _mm_loadu_si128((const __m128i *)table);
    return _mm256_shuffle_epi8(_mm256_set_m128i(t, t), idx);
}
static inline __m256i unpack_iq4_nl(const block_iq4_nl *b) {
    return qgemv_lookup16(kvalues_iq4nl, qgemv_nibbles_32(b->qs));
}
/* kvalues_iq4nl + 128 in [1, 241], the sign bit flipped: iq4_nl's and iq4_xs's levels as the
 * unsigned bytes vpdpbusd takes (a pshufb table) */
static inline __m128i kvalues_iq4nl_u8(void) {
    return _mm_xor_si128(_mm_loadu_si128((const __m128i *)kvalues_iq4nl), _mm_set1_epi8((char)0x80));
}
static inline __m256i unpack_mxfp4(const block_mxfp4 *b) {
    return qgemv_lookup16(kvalues_mxfp4, qgemv_nibbles_32(b->qs));
}
#endif

/* ---------------------------------------------------------------- the loops, once */

/* sum_j q_j a_j of one block against 32 int8 activations, exact, portable C */
#define QGEMV_DEFINE_DOT_REF_32(name)                                                      \
    static inline int32_t dot_ref_32_##name(const block_##name *x, const int8_t *aq) {    \
        int8_t q[32];                                                                      \
        unpack_##name##_ref(x, q);                                                         \
        int32_t s = 0;                                                                     \
        for (int j = 0; j < 32; j++) s += q[j] * aq[j];                                    \
        return s;                                                                          \
    }
QGEMV_DEFINE_DOT_REF_32(q4_0)
QGEMV_DEFINE_DOT_REF_32(q4_1)
QGEMV_DEFINE_DOT_REF_32(q5_0)
QGEMV_DEFINE_DOT_REF_32(q5_1)
QGEMV_DEFINE_DOT_REF_32(q8_0)
QGEMV_DEFINE_DOT_REF_32(iq4_nl)
QGEMV_DEFINE_DOT_REF_32(mxfp4)

#if defined(QGEMV_AVX2)
/* 32 int8 levels times d0 (values 0-15) and d1 (values 16-31), plus m0 / m1 where has_min:
 * exact int -> float, then the portable path's roundings (the product, then the sum; a format
 * that subtracts its minimum passes it negated, a - b being a + (-b) exactly) */
static inline void qgemv_store_levels_16x2(__m256i q, float d0, float m0, float d1, float m1, int has_min, float *y) {
    const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
    const __m128i parts[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
    for (int k = 0; k < 4; k++) {
        const __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(parts[k])), _mm256_set1_ps(k < 2 ? d0 : d1));
        _mm256_storeu_ps(y + 8 * k, has_min ? _mm256_add_ps(v, _mm256_set1_ps(k < 2 ? m0 : m1)) : v);
    }
}
/* the same with one scale (and minimum) for the 32 */
static inline void qgemv_store_levels_32(__m256i q, float d, float m, int has_min, float *y) {
    qgemv_store_levels_16x2(q, d, m, d, m, has_min, y);
}
#define QGEMV_DEQUANT_BLOCK_32(name, b, d, m, has_min, y) qgemv_store_levels_32(unpack_##name(b), d, m, has_min, y)
#else
#define QGEMV_DEQUANT_BLOCK_32(name, b, d, m, has_min, y)                                  \
    do {                                                                                   \
        int8_t q_[32];                                                                     \
        unpack_##name##_ref(b, q_);                                                        \
        for (int j_ = 0; j_ < 32; j_++) (y)[j_] = (has_min) ? (float)q_[j_] * (d) + (m) : (float)q_[j_] * (d); \
    } while (0)
#endif

/* x[j] = d q[j] (+ m): one rounding for the product, one for the sum, as ggml */
#define QGEMV_DEFINE_DEQUANT_ROW_32(name, min_of, has_min)                                 \
    static void dequant_row_##name(const void *restrict src, float *restrict dst, int64_t n) { \
        const block_##name *x = (const block_##name *)src;                                 \
        for (int64_t ib = 0; ib < n / 32; ib++)                                            \
            QGEMV_DEQUANT_BLOCK_32(name, &x[ib], scale_##name(&x[ib]), min_of(&x[ib]), has_min, dst + 32 * ib); \
    }
static inline float qgemv_no_min(const void *b) { (void)b; return 0.0f; }

#if defined(QGEMV_AVX2)
/* the scales (minima) of 4 blocks as one vector: one F16C conversion for 4 f16 */
#define TILE_32_F16_SCALES4(name, field, fn)                                                  \
    static inline __m128 fn##_##name(const block_##name *x0, const block_##name *x1,          \
                                     const block_##name *x2, const block_##name *x3) {        \
        return qgemv_f16x4(x0->field, x1->field, x2->field, x3->field);                       \
    }
TILE_32_F16_SCALES4(q4_1, d, tile_scales4)
TILE_32_F16_SCALES4(q5_0, d, tile_scales4)
TILE_32_F16_SCALES4(q5_1, d, tile_scales4)
TILE_32_F16_SCALES4(q8_0, d, tile_scales4)
TILE_32_F16_SCALES4(q4_1, m, tile_mins4)
TILE_32_F16_SCALES4(q5_1, m, tile_mins4)
#endif

/* sum_b d_x d_y sum_j q_j a_j over the row's blocks, against q8_0 activations, in ggml's AVX2
 * order: per block 8 int32 lanes (lane i: values 4i .. 4i + 3) -> float, fma'd into one 8-lane
 * accumulator in block order (q5_0, q8_0), then hsum_float_8 */
#if defined(QGEMV_AVX2)
/* vec_dot by its row with the hints chosen once (QGEMV_VEC_DOT_BY_HINTS, src/tiles.h): a Zen 4
 * issued 2 idle hints a block, 8 of q8_0's 75 instructions for 4 blocks.  Zen 4,
 * QGEMV_ISA=avx2, q8_0 one row after another (QMatrix's path past STREAMING_BYTES), 5 processes
 * a build: 4096 x 4096 0.649 -> 0.635 ms, 57344 x 768 out of cache 2.19 -> 2.09 */
/* The product d_x d_y of each block is formed 4 blocks at a time (one F16C conversion per
 * side), the same float as one at a time */
#define QGEMV_DEFINE_VEC_DOT_32_Q8_0(name)                                                 \
    QGEMV_ALWAYS_INLINE float vec_dot_row_##name##_q8_0(int64_t n, const void *restrict w, const void *restrict a, \
                                                        const int hints) {                 \
        const block_##name *x = (const block_##name *)w;                                   \
        const block_q8_0 *y = (const block_q8_0 *)a;                                       \
        const int64_t nb = n / 32;                                                         \
        __m256 acc = _mm256_setzero_ps();                                                  \
        int64_t ib = 0;                                                                    \
        for (; ib + 4 <= nb; ib += 4) {                                                    \
            float d[4];                                                                    \
            _mm_storeu_ps(d, _mm_mul_ps(tile_scales4_##name(&x[ib], &x[ib + 1], &x[ib + 2], &x[ib + 3]), \
                                        qgemv_f16x4(y[ib].d, y[ib + 1].d, y[ib + 2].d, y[ib + 3].d))); \
            for (int k = 0; k < 4; k++) {                                                  \
                if (hints) QGEMV_PREFETCH_STREAM(&x[ib + k], sizeof(x[0]));                \
                const __m256 p = qgemv_dot_s8s8_f32x8(unpack_##name(&x[ib + k]), unpack_q8_0(&y[ib + k])); \
                acc = _mm256_fmadd_ps(_mm256_set1_ps(d[k]), p, acc);                       \
            }                                                                              \
        }                                                                                  \
        for (; ib < nb; ib++) {                                                            \
            const __m256 p = qgemv_dot_s8s8_f32x8(unpack_##name(&x[ib]), unpack_q8_0(&y[ib])); \
            acc = _mm256_fmadd_ps(_mm256_set1_ps(scale_##name(&x[ib]) * scale_q8_0(&y[ib])), p, acc); \
        }                                                                                  \
        return qgemv_hsum_f32x8(acc);                                                      \
    }                                                                                      \
    QGEMV_VEC_DOT_BY_HINTS(name, q8_0)
/* sum_b (d_x d_y sum_j q_j a_j + m_x s_y), against q8_1 activations */
#define QGEMV_DEFINE_VEC_DOT_32_Q8_1(name)                                                 \
    QGEMV_ALWAYS_INLINE float vec_dot_row_##name##_q8_1(int64_t n, const void *restrict w, const void *restrict a, \
                                                        const int hints) {                 \
        const block_##name *x = (const block_##name *)w;                                   \
        const block_q8_1 *y = (const block_q8_1 *)a;                                       \
        __m256 acc = _mm256_setzero_ps();                                                  \
        float summ = 0.0f;                                                                 \
        for (int64_t ib = 0; ib < n / 32; ib++) {                                          \
            if (hints) QGEMV_PREFETCH_STREAM(&x[ib], sizeof(x[0]));                        \
            const __m256 p = qgemv_dot_u8s8_f32x8(unpack_##name(&x[ib]), unpack_q8_1(&y[ib])); \
            acc = _mm256_fmadd_ps(_mm256_set1_ps(scale_##name(&x[ib]) * scale_q8_1(&y[ib])), p, acc); \
            summ += min_##name(&x[ib]) * qgemv_fp16_to_fp32(y[ib].s);                      \
        }                                                                                  \
        return qgemv_hsum_f32x8(acc) + summ;                                               \
    }                                                                                      \
    QGEMV_VEC_DOT_BY_HINTS(name, q8_1)
#else
/* one block's term of the portable sum: d_x d_y dot(q, a) (+ m_x s_y) */
#define QGEMV_DOT_32_TERM_q8_0(name, x, y) ((float)dot_ref_32_##name(x, (y)->qs) * (scale_##name(x) * scale_q8_0(y)))
#define QGEMV_DOT_32_TERM_q8_1(name, x, y) \
    ((float)dot_ref_32_##name(x, (y)->qs) * (scale_##name(x) * scale_q8_1(y)) + min_##name(x) * qgemv_fp16_to_fp32((y)->s))
#define QGEMV_DEFINE_VEC_DOT_32(name, act)                                                 \
    static float vec_dot_##name##_##act(int64_t n, const void *restrict w, const void *restrict a) { \
        const block_##name *x = (const block_##name *)w;                                   \
        const block_##act *y = (const block_##act *)a;                                     \
        float sum = 0.0f;                                                                  \
        for (int64_t ib = 0; ib < n / 32; ib++) sum += QGEMV_DOT_32_TERM_##act(name, &x[ib], &y[ib]); \
        return sum;                                                                        \
    }
#define QGEMV_DEFINE_VEC_DOT_32_Q8_0(name) QGEMV_DEFINE_VEC_DOT_32(name, q8_0)
#define QGEMV_DEFINE_VEC_DOT_32_Q8_1(name) QGEMV_DEFINE_VEC_DOT_32(name, q8_1)
#endif

QGEMV_DEFINE_DEQUANT_ROW_32(q4_0, qgemv_no_min, 0)
QGEMV_DEFINE_DEQUANT_ROW_32(q4_1, min_q4_1, 1)
QGEMV_DEFINE_DEQUANT_ROW_32(q5_0, qgemv_no_min, 0)
QGEMV_DEFINE_DEQUANT_ROW_32(q5_1, min_q5_1, 1)
QGEMV_DEFINE_DEQUANT_ROW_32(q8_0, qgemv_no_min, 0)
QGEMV_DEFINE_DEQUANT_ROW_32(q8_1, qgemv_no_min, 0)
QGEMV_DEFINE_DEQUANT_ROW_32(iq4_nl, qgemv_no_min, 0)
QGEMV_DEFINE_DEQUANT_ROW_32(mxfp4, qgemv_no_min, 0)

QGEMV_DEFINE_VEC_DOT_32_Q8_0(q5_0)
QGEMV_DEFINE_VEC_DOT_32_Q8_0(q8_0)
QGEMV_DEFINE_VEC_DOT_32_Q8_1(q4_1)
QGEMV_DEFINE_VEC_DOT_32_Q8_1(q5_1)


/* ---------------------------------------------------------------- tiles of rows x columns
 *
 * vec_dot_tile_<name>_<act> (src/tiles.h), AVX2 and up.  Per block pair, as vec_dot:
 *     acc(r, c) += (d_x d_y) dot(q_x, q_y)     (+ m_x s_y for the formats with a minimum),
 * with one accumulator per (r, c) fed blocks in order, whichever path runs, so a result never
 * depends on the rows and columns sharing its tile (nor on the thread count or the batch).
 *   - one column (GEMV): row by row through vec_dot (QGEMV_TILE_ONE_COLUMN), except for q4_1's
 *     pair kernel below, whose 4 rows per pass win while the weights come from cache (a
 *     streaming GEMV takes the per-row driver instead, qgemv/qmatrix.py);
 *   - a batch: blocks of 2 rows x 4 columns over whole rows, 8 accumulators in registers (q8_0:
 *     row pairs against a column set-up, vec_dot_tile_q8_0_q8_0 below); each
 *     weight block is decoded once for the 4 columns and each activation block read once for
 *     the 2 rows, from sequential streams that the first column group prefetches (q4_1: a row
 *     pair in one register, its pair kernel's lanes, against 4 columns).  At 4096 x 4096, batch 8,
 *     2 threads, blocks over whole rows ran 1.3-1.5x the chunked passes (q8_0 0.75-0.79 of
 *     ggml's llamafile sgemm -> 1.04, q5_0 0.91 -> 1.16, q5_1 1.44 -> 1.67); 4 x 2 blocks, which
 *     decode a weight block for 2 columns only, lost on q5_0 and q5_1.
 * The dot uses unsigned levels where the format has them, through
 *     sum_j q_j a_j = sum_j (q_j + o) a_j - o sum_j a_j
 * (q5_0: o = 16; q4_1, q5_1: o = 0), the last term once per activation block.
 */
#if defined(QGEMV_AVX2)
static inline __m256i tile_levels_q5_0(const block_q5_0 *b) {                                       /* q + 16 */
    const __m256i hi = _mm256_and_si256(qgemv_bits_to_bytes_32(b->qh), _mm256_set1_epi8(0x10));
    return _mm256_or_si256(qgemv_nibbles_32(b->qs), hi);
}
static inline __m256i tile_levels_q5_1(const block_q5_1 *b) {
    const __m256i hi = _mm256_and_si256(qgemv_bits_to_bytes_32(b->qh), _mm256_set1_epi8(0x10));
    return _mm256_or_si256(qgemv_nibbles_32(b->qs), hi);
}

/* dot(q, a) of one block pair as 8 int32 partial sums, from the levels u = q + o;
 * corr = dot(o, a) */
QGEMV_ALWAYS_INLINE __m256i tile_32_dot(const int offset, __m256i u, __m256i av, __m256i corr) {
    const __m256i p = qgemv_dot_u8s8_i32x8(u, av);
    return offset ? _mm256_sub_epi32(p, corr) : p;
}

#define TILE_32_RB 2       /* a batch block: 2 rows x 4 columns, 8 accumulators in registers */
#define TILE_32_CB 4

/* offset: o above; has_min: act is q8_1 */
#define QGEMV_DEFINE_TILE_32(name, act, offset, has_min, min_of)                                \
    /* a batch: rows x[0:RB] against columns y[0:CB] over all nb blocks, RB x CB accumulators \
     * in registers; each weight block is decoded once for the CB columns, each activation     \
     * block read once for the RB rows; the first column group prefetches the rows ahead */    \
    QGEMV_ALWAYS_INLINE void tile_32_block_##name(int64_t nb, const block_##name *const x[TILE_32_RB], \
                                                  const block_##act *const y[TILE_32_CB],      \
                                                  const int RB, const int CB, const int prefetch, \
                                                  float *out, int64_t out_stride) {            \
        __m256 acc[TILE_32_RB][TILE_32_CB];                                                     \
        float summ[TILE_32_RB][TILE_32_CB];                                                     \
        for (int r = 0; r < RB; r++)                                                            \
            for (int c = 0; c < CB; c++) { acc[r][c] = _mm256_setzero_ps(); summ[r][c] = 0.0f; } \
        for (int64_t k = 0; k < nb; k++) {                                                      \
            __m256i u[TILE_32_RB];                                                              \
            float dx[TILE_32_RB], mx[TILE_32_RB];                                               \
            for (int r = 0; r < RB; r++) {                                                      \
                if (prefetch) QGEMV_PREFETCH_LINE(&x[r][k]);   /* QGEMV_STREAM_AHEAD bytes on */ \
                u[r] = tile_levels_##name(&x[r][k]);                                            \
                dx[r] = scale_##name(&x[r][k]);                                                 \
                mx[r] = min_of(&x[r][k]);                                                       \
            }                                                                                   \
            for (int c = 0; c < CB; c++) {                                                      \
                const __m256i av = unpack_##act(&y[c][k]);                                      \
                const float dy = scale_##act(&y[c][k]);                                         \
                const __m256i corr = offset ? qgemv_dot_u8s8_i32x8(_mm256_set1_epi8(offset), av) \
                                            : _mm256_setzero_si256();                           \
                const float sy = has_min ? qgemv_fp16_to_fp32(((const block_q8_1 *)&y[c][k])->s) : 0.0f; \
                for (int r = 0; r < RB; r++) {                                                  \
                    const __m256i p = tile_32_dot(offset, u[r], av, corr);                      \
                    acc[r][c] = _mm256_fmadd_ps(_mm256_set1_ps(dx[r] * dy), _mm256_cvtepi32_ps(p), acc[r][c]); \
                    if (has_min) summ[r][c] += mx[r] * sy;                                      \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
        for (int r = 0; r < RB; r++)                                                            \
            for (int c = 0; c < CB; c++)                                                        \
                out[r * out_stride + c] = has_min ? qgemv_hsum_f32x8(acc[r][c]) + summ[r][c]    \
                                                  : qgemv_hsum_f32x8(acc[r][c]);                \
    }                                                                                           \
    static void tile_32_##name##_##act(int64_t n, const void *restrict w, int64_t row_stride,  \
                                       int64_t nrows, const void *restrict a, int64_t act_stride, \
                                       int64_t ncols, float *restrict out, int64_t out_stride) { \
        const int64_t nb = n / 32;                                                              \
        QGEMV_TILE_ONE_COLUMN(vec_dot_##name##_##act, n, w, row_stride, nrows, a, ncols, out, out_stride); \
        for (int64_t r = 0; r < nrows; r += TILE_32_RB) {                                       \
            const int RB = nrows - r >= TILE_32_RB ? TILE_32_RB : (int)(nrows - r);             \
            const block_##name *x[TILE_32_RB];                                                  \
            for (int j = 0; j < TILE_32_RB; j++)                                                \
                x[j] = (const block_##name *)((const uint8_t *)w + (r + (j < RB ? j : 0)) * row_stride); \
            for (int64_t c = 0; c < ncols; c += TILE_32_CB) {                                   \
                const int CB = ncols - c >= TILE_32_CB ? TILE_32_CB : (int)(ncols - c);         \
                const block_##act *y[TILE_32_CB];                                               \
                for (int j = 0; j < TILE_32_CB; j++)                                            \
                    y[j] = (const block_##act *)((const uint8_t *)a + (c + (j < CB ? j : 0)) * act_stride); \
                float *o = out + r * out_stride + c;                                            \
                if (RB == TILE_32_RB && CB == TILE_32_CB)                                       \
                    tile_32_block_##name(nb, x, y, TILE_32_RB, TILE_32_CB, c == 0, o, out_stride); \
                else if (CB == TILE_32_CB)                                                      \
                    tile_32_block_##name(nb, x, y, RB, TILE_32_CB, c == 0, o, out_stride);      \
                else                                                                            \
                    tile_32_block_##name(nb, x, y, RB, CB, c == 0, o, out_stride);              \
            }                                                                                   \
        }                                                                                       \
    }

/* the pair kernel's pieces, shared by its GEMV and batch paths so both compute the same.
 * A pair's int32 lanes are ggml's: *plo holds lanes 0..3 of each row (values 0..15, row a in the
 * low half, row b in the high half), *phi lanes 4..7 (values 16..31); each float lane then sees
 * ggml's fma sequence, so tile_32_hsum_pair_row gives ggml's hsum_float_8 bits */
/* *plo += the pair's lanes 0..3, *phi += lanes 4..7 (exact int32) */
QGEMV_ALWAYS_INLINE void tile_32_pair_dot_add(__m256i lo, __m256i hi, const int8_t *aq,
                                              __m256i *plo, __m256i *phi) {
    const __m256i alo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)aq));
    const __m256i ahi = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(aq + 16)));
    *plo = qgemv_dot_u8s8_acc(*plo, lo, alo);
    *phi = qgemv_dot_u8s8_acc(*phi, hi, ahi);
}
QGEMV_ALWAYS_INLINE void tile_32_pair_dot(__m256i lo, __m256i hi, const int8_t *aq,
                                          __m256i *plo, __m256i *phi) {
    *plo = *phi = _mm256_setzero_si256();
    tile_32_pair_dot_add(lo, hi, aq, plo, phi);
}
/* hsum_float_8 of one row's lanes (half 0: row a, 1: row b): lanes 4..7 + lanes 0..3, then pairs */
static inline float tile_32_hsum_pair_row(__m256 acc_lo, __m256 acc_hi, int half) {
    const __m128 l = half ? _mm256_extractf128_ps(acc_lo, 1) : _mm256_castps256_ps128(acc_lo);
    const __m128 h = half ? _mm256_extractf128_ps(acc_hi, 1) : _mm256_castps256_ps128(acc_hi);
    __m128 t = _mm_add_ps(h, l);
    t = _mm_add_ps(t, _mm_movehl_ps(t, t));
    t = _mm_add_ss(t, _mm_movehdup_ps(t));
    return _mm_cvtss_f32(t);
}

/* The 4-bit nibble format with a minimum (q4_1: x = d q + m, against q8_1), two rows per 256-bit
 * register: one load brings block ib of rows r and r + 1 (16 bytes each), and their low nibbles
 * (values 0..15) meet the activations' first 16 values broadcast to both halves, their high
 * nibbles (16..31) the last 16, each into its own int32 lanes (tile_32_pair_dot), so every row
 * keeps ggml's 8 float lanes: accumulator "lo" of a pair holds lanes 0..3 of rows r (low half)
 * and r + 1 (high half), "hi" lanes 4..7; the minimum's term m_x s_y adds per block, as ggml's.
 * A lone last row is paired with itself. */
#define QGEMV_DEFINE_TILE_32_PAIRS(name, act)                                                   \
    /* GEMV, one block of 4 rows: acc = {lo01, hi01, lo23, hi23} */                           \
    QGEMV_ALWAYS_INLINE void tile_32_pairs_step_##name(const block_##name *x0, const block_##name *x1, \
                                                       const block_##name *x2, const block_##name *x3, \
                                                       const block_##act *y, __m256 acc[4], __m128 *summ) { \
        const __m256i m4 = _mm256_set1_epi8(0x0f);                                             \
        const __m256i idx01 = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);                        \
        const __m256i idx23 = _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3);                        \
        const __m256 s = _mm256_castps128_ps256(_mm_mul_ps(tile_scales4_##name(x0, x1, x2, x3), \
                                                           _mm_set1_ps(scale_##act(y))));       \
        *summ = _mm_add_ps(*summ, _mm_mul_ps(tile_mins4_##name(x0, x1, x2, x3),                 \
                                             _mm_set1_ps(qgemv_fp16_to_fp32(y->s))));           \
        QGEMV_PREFETCH_STREAM(x0, sizeof(*x0)); QGEMV_PREFETCH_STREAM(x1, sizeof(*x1));         \
        QGEMV_PREFETCH_STREAM(x2, sizeof(*x2)); QGEMV_PREFETCH_STREAM(x3, sizeof(*x3));         \
        const __m256i v01 = _mm256_loadu2_m128i((const __m128i *)x1->qs, (const __m128i *)x0->qs); \
        const __m256i v23 = _mm256_loadu2_m128i((const __m128i *)x3->qs, (const __m128i *)x2->qs); \
        __m256i plo01, phi01, plo23, phi23;                                                     \
        tile_32_pair_dot(_mm256_and_si256(v01, m4), _mm256_and_si256(_mm256_srli_epi16(v01, 4), m4), \
                         y->qs, &plo01, &phi01);                                                 \
        tile_32_pair_dot(_mm256_and_si256(v23, m4), _mm256_and_si256(_mm256_srli_epi16(v23, 4), m4), \
                         y->qs, &plo23, &phi23);                                                 \
        const __m256 s01 = _mm256_permutevar8x32_ps(s, idx01), s23 = _mm256_permutevar8x32_ps(s, idx23); \
        acc[0] = _mm256_fmadd_ps(s01, _mm256_cvtepi32_ps(plo01), acc[0]);                       \
        acc[1] = _mm256_fmadd_ps(s01, _mm256_cvtepi32_ps(phi01), acc[1]);                       \
        acc[2] = _mm256_fmadd_ps(s23, _mm256_cvtepi32_ps(plo23), acc[2]);                       \
        acc[3] = _mm256_fmadd_ps(s23, _mm256_cvtepi32_ps(phi23), acc[3]);                       \
    }                                                                                           \
    /* GEMV: 4 rows against one column */                                                      \
    QGEMV_ALWAYS_INLINE void tile_32_pairs_##name(int64_t nb, const block_##name *x0, const block_##name *x1, \
                                                  const block_##name *x2, const block_##name *x3, \
                                                  const uint8_t *a, float out[4]) {             \
        const block_##act *y = (const block_##act *)a;                                          \
        __m256 acc[4];                                                                          \
        for (int k = 0; k < 4; k++) acc[k] = _mm256_setzero_ps();                               \
        __m128 summ = _mm_setzero_ps();                                                         \
        for (int64_t ib = 0; ib < nb; ib++)                                                     \
            tile_32_pairs_step_##name(&x0[ib], &x1[ib], &x2[ib], &x3[ib], &y[ib], acc, &summ);  \
        float sm[4];                                                                            \
        _mm_storeu_ps(sm, summ);                                                                \
        for (int r = 0; r < 4; r++)                                                             \
            out[r] = tile_32_hsum_pair_row(acc[2 * (r / 2)], acc[2 * (r / 2) + 1], r % 2) + sm[r]; \
    }                                                                                           \
    /* a batch: the row pair x0, x1 against CB <= 4 columns over all nb blocks, each column's     \
     * {lo, hi} accumulators and the pair's m_x s_y sums (lane c: column c) in registers; the   \
     * first column group prefetches the rows */                                                \
    QGEMV_ALWAYS_INLINE void tile_32_pblock_##name(int64_t nb, const block_##name *x0, const block_##name *x1, \
                                                   const uint8_t *a, int64_t act_stride, const int CB, \
                                                   const int prefetch, __m256 acc[4][2], __m128 summ[2]) { \
        const __m256i m4 = _mm256_set1_epi8(0x0f);                                             \
        const block_##act *y[4];                                                                \
        for (int c = 0; c < CB; c++) {                                                          \
            y[c] = (const block_##act *)(a + c * act_stride);                                   \
            acc[c][0] = acc[c][1] = _mm256_setzero_ps();                                        \
        }                                                                                       \
        __m128 sm0 = _mm_setzero_ps(), sm1 = _mm_setzero_ps();                                  \
        for (int64_t k = 0; k < nb; k++) {                                                      \
            if (prefetch) { QGEMV_PREFETCH_LINE(&x0[k]); QGEMV_PREFETCH_LINE(&x1[k]); }         \
            const __m256i v = _mm256_loadu2_m128i((const __m128i *)x1[k].qs, (const __m128i *)x0[k].qs); \
            const __m256i lo = _mm256_and_si256(v, m4);                                         \
            const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);                   \
            /* the pair's scales: row a in lanes 0..3, row b in 4..7 */                         \
            const __m256 dx = _mm256_setr_m128(_mm_set1_ps(scale_##name(&x0[k])), _mm_set1_ps(scale_##name(&x1[k]))); \
            float s4[4] = {0.0f, 0.0f, 0.0f, 0.0f};                                             \
            for (int c = 0; c < CB; c++) {                                                      \
                __m256i plo, phi;                                                               \
                tile_32_pair_dot(lo, hi, y[c][k].qs, &plo, &phi);                               \
                const __m256 d = _mm256_mul_ps(dx, _mm256_set1_ps(scale_##act(&y[c][k])));     \
                acc[c][0] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(plo), acc[c][0]);             \
                acc[c][1] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(phi), acc[c][1]);             \
                s4[c] = qgemv_fp16_to_fp32(y[c][k].s);                                          \
            }                                                                                   \
            /* m_x s_y: a product and a sum per block, as ggml */                               \
            const __m128 sa = _mm_loadu_ps(s4);                                                 \
            sm0 = _mm_add_ps(sm0, _mm_mul_ps(_mm_set1_ps(min_##name(&x0[k])), sa));             \
            sm1 = _mm_add_ps(sm1, _mm_mul_ps(_mm_set1_ps(min_##name(&x1[k])), sa));             \
        }                                                                                       \
        summ[0] = sm0;                                                                          \
        summ[1] = sm1;                                                                          \
    }                                                                                           \
    static void vec_dot_tile_##name##_##act(int64_t n, const void *restrict w, int64_t row_stride, \
                                            int64_t nrows, const void *restrict a, int64_t act_stride, \
                                            int64_t ncols, float *restrict out, int64_t out_stride) { \
        const uint8_t *wr = (const uint8_t *)w;                                                \
        if (ncols > 1) {                                                                        \
            for (int64_t r = 0; r < nrows; r += 2) {  /* a lone last row pairs with itself */    \
                const int rb = nrows - r >= 2 ? 2 : 1;                                          \
                const block_##name *x0 = (const block_##name *)(wr + r * row_stride);          \
                const block_##name *x1 = (const block_##name *)(wr + (r + rb - 1) * row_stride); \
                for (int64_t c = 0; c < ncols; c += 4) {                                        \
                    const uint8_t *a_ = (const uint8_t *)a + c * act_stride;                    \
                    const int cb = ncols - c >= 4 ? 4 : (int)(ncols - c);                       \
                    __m256 acc[4][2];                                                           \
                    __m128 summ[2];                                                             \
                    if (cb == 4) tile_32_pblock_##name(n / 32, x0, x1, a_, act_stride, 4, c == 0, acc, summ); \
                    else tile_32_pblock_##name(n / 32, x0, x1, a_, act_stride, cb, c == 0, acc, summ); \
                    for (int h = 0; h < rb; h++) {                                              \
                        float sm[4];                                                            \
                        _mm_storeu_ps(sm, summ[h]);                                             \
                        for (int j = 0; j < cb; j++)                                            \
                            out[(r + h) * out_stride + c + j] = tile_32_hsum_pair_row(acc[j][0], acc[j][1], h) + sm[j]; \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
            return;                                                                             \
        }                                                                                       \
        for (int64_t r = 0; r < nrows; r += 4) {                                                \
            const block_##name *x[4];                                                           \
            for (int j = 0; j < 4; j++)  /* past the last row: repeat it (results unused) */    \
                x[j] = (const block_##name *)(wr + (r + j < nrows ? r + j : nrows - 1) * row_stride); \
            float o[4];                                                                         \
            tile_32_pairs_##name(n / 32, x[0], x[1], x[2], x[3], (const uint8_t *)a, o);        \
            for (int j = 0; j < 4 && r + j < nrows; j++) out[(r + j) * out_stride] = o[j];      \
        }                                                                                       \
    }
/* the tile of a format without a pair kernel */
#define QGEMV_DEFINE_TILE_32_SINGLE(name, act)                                                 \
    static void vec_dot_tile_##name##_##act(int64_t n, const void *restrict w, int64_t row_stride, \
                                            int64_t nrows, const void *restrict a, int64_t act_stride, \
                                            int64_t ncols, float *restrict out, int64_t out_stride) { \
        tile_32_##name##_##act(n, w, row_stride, nrows, a, act_stride, ncols, out, out_stride); \
    }

/* the formats without a pair kernel (q4_1 has it; q4_0, iq4_nl and mxfp4 are in q32_x8.h) */
QGEMV_DEFINE_TILE_32(q5_0, q8_0, 16, 0, qgemv_no_min)
QGEMV_DEFINE_TILE_32(q5_1, q8_1, 0, 1, min_q5_1)
QGEMV_DEFINE_TILE_32_PAIRS(q4_1, q8_1)

QGEMV_DEFINE_TILE_32_SINGLE(q5_0, q8_0)
QGEMV_DEFINE_TILE_32_SINGLE(q5_1, q8_1)
/* q8_0's batch: a row pair per register (row a's 16 bytes of a half block in the low 128 bits,
 * row b's in the high: q4_1's pair lanes, so tile_32_hsum_pair_row gives vec_dot's bits) against
 * a set-up of 4 columns made once per chunk of TILE_Q8_0_SIDE blocks for TILE_Q8_0_PAIRS row
 * pairs; d_x d_y of the pair and the 4 columns is one product, each column's lane pair picked by
 * a vpermilps (port 5).  With VNNI the levels are lifted by 128 (u = q + 128) and vpdpbusd
 * starts from the set-up's
 *     start_i = 0x4B400000 - 128 sum_{j = 4i .. 4i + 3} a_j,
 * so that each int32 is the bits of the float 1.5 2^23 + sum q a (|sum q a| <= 4 128 127 < 2^22)
 * and one exact subtraction gives vec_dot's (float) sum, on the adders (Golden Cove: ports 1 and
 * 5) where vcvtdq2ps shares ports 0 and 1 with the fmas and vpdpbusd.  A row and column costs
 * vpdpbusd, the subtraction, the fma and half a vpermilps, where tile_32 took the sign trick's
 * two instructions and vpdpbusd, a conversion, the fma and d_x d_y's product.  AVX2 takes
 * vec_dot's sign trick: |q| once a block for the columns, each column's values with q's signs,
 * maddubs, madd (the 8 int32 lanes) and the conversion, 5 instructions a half, where tile_32
 * also took d_x d_y's scalar product and broadcast per row and column and d_y's widening per
 * column and block.  Intel Xeon, QGEMV_ISA=avx2, 4096 x 4096, 2 threads, builds alternating:
 * batch 32 7.37 -> 6.40 ms, batch 8 1.91 -> 1.69 (ggml 0.25.3 for AVX2: 6.66, 1.72).  Not kept:
 * the roles swapped, |a| from the set-up (all 8 accumulators then stay in registers, where this
 * spills 2): even, and q with the signs of a wraps at a level of -128; the sums' magic bits
 * added and subtracted in place of the conversion (off ports 0 and 1): 1.07x slower. */
#define TILE_Q8_0_SIDE 64    /* blocks a chunk's set-up covers */
#define TILE_Q8_0_PAIRS 16   /* row pairs that share it, their accumulators kept between chunks */
typedef struct {
#if defined(QGEMV_VNNI)
    __m256i start[4][TILE_Q8_0_SIDE][2];   /* column, block, values 0..15 / 16..31: both halves */
#endif
    __m256 dy[TILE_Q8_0_SIDE];             /* d_y of columns 0..3, in each half */
} tile_q8_0_columns;

/* every one of the 4 columns (a group of fewer repeats its first: y[c] valid, results unused); d_y
 * built in registers (through memory, as 4 floats, it stalled on store forwarding every block) */
static inline void tile_q8_0_set_up(const block_q8_0 *const y[4], int64_t kn, tile_q8_0_columns *s) {
    for (int64_t k = 0; k < kn; k++) {
#if defined(QGEMV_VNNI)
        for (int c = 0; c < 4; c++) {
            const __m256i st = q8_lane_starts_lifted_magic(y[c][k].qs);
            s->start[c][k][0] = _mm256_permute2x128_si256(st, st, 0x00);
            s->start[c][k][1] = _mm256_permute2x128_si256(st, st, 0x11);
        }
#endif
        const __m128 d4 = _mm_setr_ps(scale_q8_0(&y[0][k]), scale_q8_0(&y[1][k]), scale_q8_0(&y[2][k]), scale_q8_0(&y[3][k]));
        s->dy[k] = _mm256_setr_m128(d4, d4);
    }
}
/* column c's d_x d_y in each half of d8 (c a constant once inlined) */
QGEMV_ALWAYS_INLINE __m256 tile_q8_0_column_scale(__m256 d8, const int c) {
    switch (c) {
    case 0: return _mm256_permute_ps(d8, 0x00);
    case 1: return _mm256_permute_ps(d8, 0x55);
    case 2: return _mm256_permute_ps(d8, 0xaa);
    default: return _mm256_permute_ps(d8, 0xff);
    }
}
/* the row pair x0, x1 against CB <= 4 columns y[] over kn blocks (their set-up s), each column's
 * {lo, hi} accumulators in acc[c] */
QGEMV_ALWAYS_INLINE void tile_q8_0_pair(int64_t kn, const block_q8_0 *x0, const block_q8_0 *x1,
                                        const block_q8_0 *const y[4], const tile_q8_0_columns *s,
                                        const int CB, const int prefetch, __m256 acc_[4][2]) {
    __m256 acc[4][2];
    for (int c = 0; c < CB; c++) acc[c][0] = acc_[c][0], acc[c][1] = acc_[c][1];
    for (int64_t k = 0; k < kn; k++) {
        if (prefetch) { QGEMV_PREFETCH_LINE(&x0[k]); QGEMV_PREFETCH_LINE(&x1[k]); }
        const __m256i qlo = _mm256_loadu2_m128i((const __m128i *)x1[k].qs, (const __m128i *)x0[k].qs);
        const __m256i qhi = _mm256_loadu2_m128i((const __m128i *)(x1[k].qs + 16), (const __m128i *)(x0[k].qs + 16));
#if defined(QGEMV_VNNI)
        const __m256i lift = _mm256_set1_epi8((char)0x80);
        const __m256i ulo = _mm256_xor_si256(qlo, lift), uhi = _mm256_xor_si256(qhi, lift);   /* q + 128 */
#else
        const __m256i ulo = _mm256_sign_epi8(qlo, qlo), uhi = _mm256_sign_epi8(qhi, qhi);     /* |q| */
#endif
        const __m256 dx = _mm256_setr_m128(_mm_set1_ps(scale_q8_0(&x0[k])), _mm_set1_ps(scale_q8_0(&x1[k])));
        const __m256 d8 = _mm256_mul_ps(dx, s->dy[k]);
        for (int c = 0; c < CB; c++) {
            const __m256i alo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)y[c][k].qs));
            const __m256i ahi = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(y[c][k].qs + 16)));
#if defined(QGEMV_VNNI)
            const __m256 magic = _mm256_set1_ps(Q8_MAGIC);
            const __m256 flo = _mm256_sub_ps(_mm256_castsi256_ps(qgemv_dpbusd_256(s->start[c][k][0], ulo, alo)), magic);
            const __m256 fhi = _mm256_sub_ps(_mm256_castsi256_ps(qgemv_dpbusd_256(s->start[c][k][1], uhi, ahi)), magic);
#else
            const __m256 flo = _mm256_cvtepi32_ps(qgemv_dot_u8s8_i32x8(ulo, _mm256_sign_epi8(alo, qlo)));
            const __m256 fhi = _mm256_cvtepi32_ps(qgemv_dot_u8s8_i32x8(uhi, _mm256_sign_epi8(ahi, qhi)));
#endif
            const __m256 d = tile_q8_0_column_scale(d8, c);
            acc[c][0] = _mm256_fmadd_ps(d, flo, acc[c][0]);
            acc[c][1] = _mm256_fmadd_ps(d, fhi, acc[c][1]);
        }
    }
    for (int c = 0; c < CB; c++) acc_[c][0] = acc[c][0], acc_[c][1] = acc[c][1];
}
static void vec_dot_tile_q8_0_q8_0(int64_t n, const void *restrict w, int64_t row_stride, int64_t nrows,
                                   const void *restrict a, int64_t act_stride, int64_t ncols,
                                   float *restrict out, int64_t out_stride) {
    QGEMV_TILE_ONE_COLUMN(vec_dot_q8_0_q8_0, n, w, row_stride, nrows, a, ncols, out, out_stride);
    const int64_t nb = n / 32;
    tile_q8_0_columns set;
    __m256 acc[TILE_Q8_0_PAIRS][4][2];
    for (int64_t r0 = 0; r0 < nrows; r0 += 2 * TILE_Q8_0_PAIRS) {
        const int64_t pairs = (nrows - r0 + 1) / 2, pn = pairs < TILE_Q8_0_PAIRS ? pairs : TILE_Q8_0_PAIRS;
        for (int64_t c0 = 0; c0 < ncols; c0 += 4) {
            const int CB = ncols - c0 >= 4 ? 4 : (int)(ncols - c0);
            for (int64_t p = 0; p < pn; p++)
                for (int c = 0; c < 4; c++) acc[p][c][0] = acc[p][c][1] = _mm256_setzero_ps();
            for (int64_t k0 = 0; k0 < nb; k0 += TILE_Q8_0_SIDE) {
                const int64_t kn = nb - k0 < TILE_Q8_0_SIDE ? nb - k0 : TILE_Q8_0_SIDE;
                const block_q8_0 *y[4];
                for (int c = 0; c < 4; c++)
                    y[c] = (const block_q8_0 *)((const uint8_t *)a + (c0 + (c < CB ? c : 0)) * act_stride) + k0;
                tile_q8_0_set_up(y, kn, &set);
                for (int64_t p = 0; p < pn; p++) {   /* a lone last row pairs with itself */
                    const int64_t r = r0 + 2 * p, r1 = r + 1 < nrows ? r + 1 : r;
                    const block_q8_0 *x0 = (const block_q8_0 *)((const uint8_t *)w + r * row_stride) + k0;
                    const block_q8_0 *x1 = (const block_q8_0 *)((const uint8_t *)w + r1 * row_stride) + k0;
                    if (CB == 4) tile_q8_0_pair(kn, x0, x1, y, &set, 4, c0 == 0, acc[p]);
                    else tile_q8_0_pair(kn, x0, x1, y, &set, CB, c0 == 0, acc[p]);
                }
            }
            for (int64_t p = 0; p < pn; p++)
                for (int h = 0; h < 2 && r0 + 2 * p + h < nrows; h++)
                    for (int c = 0; c < CB; c++)
                        out[(r0 + 2 * p + h) * out_stride + c0 + c] = tile_32_hsum_pair_row(acc[p][c][0], acc[p][c][1], h);
        }
    }
}

/* the specialised tiles of this family (src/kernels.c puts them in the table) */
#define QGEMV_TILES_Q32(X) X(q4_1, q8_1) X(q5_0, q8_0) X(q5_1, q8_1) X(q8_0, q8_0)
#else
#define QGEMV_TILES_Q32(X)
#endif
