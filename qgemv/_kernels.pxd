# Declarations of the C side: mirrors include/qgemv/kernels.h and runtime.h (must match).
from libc.stdint cimport int64_t

cdef extern from "qgemv/kernels.h" nogil:
    enum: QGEMV_N_TYPES
    ctypedef void (*qgemv_dequant_row_fn)(const void *blocks, float *dst, int64_t n) noexcept nogil
    ctypedef void (*qgemv_quantize_row_fn)(const float *src, void *blocks, int64_t n) noexcept nogil
    ctypedef void (*qgemv_quantize_weights_fn)(const float *src, void *blocks, int64_t n,
                                               const float *imatrix) noexcept nogil
    ctypedef float (*qgemv_vec_dot_fn)(int64_t n, const void *w, const void *a) noexcept nogil
    ctypedef float (*qgemv_dot_f32_fn)(int64_t n, const float *a, const float *b) noexcept nogil
    ctypedef struct qgemv_kernel_table:
        const char *isa
        qgemv_dequant_row_fn dequant_row[QGEMV_N_TYPES]
        qgemv_vec_dot_fn vec_dot[QGEMV_N_TYPES]
        qgemv_quantize_row_fn quantize_act[QGEMV_N_TYPES]
        qgemv_quantize_weights_fn quantize_row[QGEMV_N_TYPES]
        size_t block_nbytes[QGEMV_N_TYPES]
        size_t block_align[QGEMV_N_TYPES]
        qgemv_dot_f32_fn dot_f32

cdef extern from "qgemv/runtime.h" nogil:
    int qgemv_have_openmp()
    int qgemv_omp_max_threads()
    const qgemv_kernel_table *qgemv_table_for(const char *isa)
    int qgemv_cpu_runs(const char *isa)

cdef extern from "qgemv_build_info.h":
    const char *QGEMV_ISAS        # compiled variants, comma separated
    const char *QGEMV_BUILD_INFO  # compiler flags per variant, for show_config()
