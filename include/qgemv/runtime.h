/* qgemv/runtime.h: what the Cython drivers ask of the machine and the build:
 * which kernel tables were compiled, which ones this CPU can run, and OpenMP.
 * Mirrored in qgemv/_kernels.pxd (must match).
 */
#ifndef QGEMV_RUNTIME_H
#define QGEMV_RUNTIME_H

#include <string.h>
#include "qgemv/kernels.h"

#ifdef _OPENMP
#include <omp.h>
static inline int qgemv_have_openmp(void) { return 1; }
static inline int qgemv_omp_max_threads(void) { return omp_get_max_threads(); }
#else
static inline int qgemv_have_openmp(void) { return 0; }
static inline int qgemv_omp_max_threads(void) { return 1; }
#endif

/* the compiled table of an ISA variant, or NULL */
static inline const qgemv_kernel_table *qgemv_table_for(const char *isa) {
    if (strcmp(isa, "baseline") == 0) return &qgemv_kernels_baseline;
#if defined(QGEMV_X86)
    if (strcmp(isa, "avx2") == 0) return &qgemv_kernels_avx2;
    if (strcmp(isa, "avx512") == 0) return &qgemv_kernels_avx512;
#endif
    return NULL;
}

/* 1 if this CPU (and OS) can execute the variant's instructions */
static inline int qgemv_cpu_runs(const char *isa) {
    if (strcmp(isa, "baseline") == 0) return 1;
#if defined(QGEMV_X86) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
                     && __builtin_cpu_supports("f16c") && __builtin_cpu_supports("bmi2");
    if (strcmp(isa, "avx2") == 0) return avx2;
    if (strcmp(isa, "avx512") == 0)
        return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
               && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")
               && __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512vnni");
#endif
    return 0;
}

#endif /* QGEMV_RUNTIME_H */
