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

#if defined(QGEMV_X86) && defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#include <immintrin.h>
/* MSVC has no __builtin_cpu_supports: the same checks from CPUID leaves 1 and 7, and from XCR0
 * that the OS saves the YMM (bits 1-2) and ZMM / opmask (bits 5-7) state */
static inline int qgemv_msvc_cpu_runs(const char *isa) {
    int r1[4], r7[4];
    __cpuid(r1, 0);
    const int max_leaf = r1[0];
    __cpuid(r1, 1);
    if (max_leaf >= 7) __cpuidex(r7, 7, 0); else r7[0] = r7[1] = r7[2] = r7[3] = 0;
    const unsigned ecx1 = (unsigned)r1[2], ebx7 = (unsigned)r7[1], ecx7 = (unsigned)r7[2];
    const unsigned long long xcr0 = (ecx1 >> 27 & 1u) ? _xgetbv(0) : 0;   /* OSXSAVE */
    const int avx2 = (xcr0 & 0x6) == 0x6 && (ecx1 >> 28 & 1u) /* AVX */ && (ecx1 >> 12 & 1u) /* FMA */
                     && (ecx1 >> 29 & 1u) /* F16C */ && (ebx7 >> 5 & 1u) /* AVX2 */
                     && (ebx7 >> 8 & 1u) /* BMI2 */;
    if (strcmp(isa, "avx2") == 0) return avx2;
    if (strcmp(isa, "avx512") == 0)
        return avx2 && (xcr0 & 0xe6) == 0xe6 && (ebx7 >> 16 & 1u) /* F */ && (ebx7 >> 30 & 1u) /* BW */
               && (ebx7 >> 31 & 1u) /* VL */ && (ebx7 >> 17 & 1u) /* DQ */ && (ebx7 >> 28 & 1u) /* CD */
               && (ecx7 >> 11 & 1u) /* VNNI */;
    return 0;
}
#endif

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
#elif defined(QGEMV_X86) && defined(_MSC_VER)
    return qgemv_msvc_cpu_runs(isa);
#endif
    return 0;
}

#endif /* QGEMV_RUNTIME_H */
