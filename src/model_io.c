/* placeholder: model files (issue 2 helper) */
#include "internal.h"
pt_status pt_model_save(const pt_model *m, const char *path) { (void)m; return pt_fail(PT_ERR_UNSUPPORTED, "%s: model writer not built yet", path); }
pt_status pt_model_load(const char *path, pt_model **out) { *out = NULL; return pt_fail(PT_ERR_UNSUPPORTED, "%s: model reader not built yet", path); }
