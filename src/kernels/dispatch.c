/* Placeholder dispatch (scalar only); the kernels work (issue 3) replaces it with CPUID. */
#include <stdlib.h>
#include <string.h>

#include "../internal.h"

const char *pt_isa_name(pt_isa isa)
{
    switch (isa) {
    case PT_ISA_AUTO: return "auto";
    case PT_ISA_SCALAR: return "scalar";
    case PT_ISA_AVX2: return "avx2";
    case PT_ISA_AVX512: return "avx512";
    case PT_ISA_NEON: return "neon";
    }
    return "unknown";
}

pt_status pt_isa_parse(const char *name, pt_isa *out)
{
    for (int i = PT_ISA_AUTO; i <= PT_ISA_NEON; i++)
        if (strcmp(name, pt_isa_name((pt_isa)i)) == 0) {
            *out = (pt_isa)i;
            return PT_OK;
        }
    return pt_fail(PT_ERR_INVALID, "unknown ISA '%s' (auto, scalar, avx2, avx512, neon)", name);
}

int pt_isa_available(pt_isa isa) { return isa == PT_ISA_SCALAR; }

pt_isa pt_isa_default(void) { return PT_ISA_SCALAR; }

pt_status pt_kernels_get(pt_isa isa, const pt_kernels **out)
{
    if (isa == PT_ISA_AUTO) isa = pt_isa_default();
    if (!pt_isa_available(isa))
        return pt_fail(PT_ERR_UNSUPPORTED, "ISA %s is not available on this CPU or build",
                       pt_isa_name(isa));
    *out = &pt_kernels_scalar;
    return PT_OK;
}
