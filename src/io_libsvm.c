/* placeholder: the LIBSVM reader/writer (issue 2 helper) */
#include "internal.h"
pt_status pt_read_libsvm(const char *path, const pt_read_options *o, pt_dataset **out)
{
    (void)o; (void)out;
    return pt_fail(PT_ERR_UNSUPPORTED, "%s: LIBSVM reader not built yet", path);
}
pt_status pt_write_libsvm(FILE *f, const void *ds) { (void)f; (void)ds; return pt_fail(PT_ERR_UNSUPPORTED, "LIBSVM writer not built yet"); }
