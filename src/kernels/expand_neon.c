/* The feature-expansion kernels of expand_impl.h compiled for aarch64 (NEON). */
#define PT_EXPAND_TABLE pt_expand_kernels_neon
#include "expand_impl.h"
