/*
 * AVX-512 sparse-row kernels: the x86 forms of sparse_x86.h, as sparse_avx2.c's, compiled with
 * avx512.c's flags into its library (src/meson.build). No 16-lane form of its own: where they
 * were measured, vgatherdps and vscatterdps (16 lanes, masked tails) ran slower than loading
 * w's entries one by one into 8 lanes (sparse_x86.h; bench sparse/dot/form:vgatherdps-zmm).
 */
#include "sparse_x86.h"

PT_SPARSE_X86_KERNELS(avx512)
