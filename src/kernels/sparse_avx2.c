/*
 * AVX2 + FMA sparse-row kernels: the x86 forms of sparse_x86.h (which says why they load w's
 * entries into the lanes one by one rather than gather), compiled with avx2.c's flags into its
 * library (src/meson.build).
 */
#include "sparse_x86.h"

PT_SPARSE_X86_KERNELS(avx2)
