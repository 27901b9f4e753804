/* The reference feature-expansion kernels: expand_impl.h at the baseline ISA (x86-64: SSE2),
 * what the other ISAs are tested against. */
#define PT_EXPAND_TABLE pt_expand_kernels_scalar
#include "expand_impl.h"
