/* The feature-expansion kernels of expand_impl.h compiled with avx2.c's flags (-mavx2 -mfma). */
#define PT_EXPAND_TABLE pt_expand_kernels_avx2
#include "expand_impl.h"
