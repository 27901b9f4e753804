/* placeholder: the CSV reader/writer (issue 2 helper) */
#include "internal.h"
pt_status pt_read_csv(const char *path, const pt_read_options *o, pt_dataset **out)
{
    (void)o; (void)out;
    return pt_fail(PT_ERR_UNSUPPORTED, "%s: CSV reader not built yet", path);
}
pt_status pt_write_csv(FILE *f, const void *ds) { (void)f; (void)ds; return pt_fail(PT_ERR_UNSUPPORTED, "CSV writer not built yet"); }
