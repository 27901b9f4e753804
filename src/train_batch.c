/* placeholder: the batch subgradient path (issue 4) */
#include "internal.h"
pt_status pt_train_batch(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                         pt_model *m, pt_train_report *r)
{
    (void)ds; (void)p; (void)k; (void)m; (void)r;
    return pt_fail(PT_ERR_UNSUPPORTED, "the batch path is not built yet");
}
