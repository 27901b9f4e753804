/* placeholder: the kernel (dual) path (issue 5) */
#include "internal.h"
pt_status pt_train_kernel(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                          pt_model **m, pt_train_report *r)
{
    (void)ds; (void)p; (void)k; (void)m; (void)r;
    return pt_fail(PT_ERR_UNSUPPORTED, "the kernel path is not built yet");
}
pt_status pt_model_kernel_scores(const pt_model *m, const pt_dataset *ds, float *scores)
{
    (void)m; (void)ds; (void)scores;
    return pt_fail(PT_ERR_UNSUPPORTED, "kernel models are not built yet");
}
