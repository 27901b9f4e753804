/* The feature-expansion kernels of expand_impl.h compiled with avx512.c's flags. */
#define PT_EXPAND_TABLE pt_expand_kernels_avx512
#include "expand_impl.h"
