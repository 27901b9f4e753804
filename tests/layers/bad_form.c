/* A file of a training layer that reads rows by their form: scripts/check-layers --form must
 * fail on it, one line per read below (the layers_selftest test, should_fail). Not compiled. */
#include "data/data.h"
#include "data/rows.h"

float first(const pt_dataset *ds, const pt_rows *src, pt_cursor *c);
float first(const pt_dataset *ds, const pt_rows *src, pt_cursor *c)
{
    if (ds->layout == PT_LAYOUT_SPARSE) return 0.0f;             /* a layout */
    if (pt_dataset_dtype(ds) != PT_DTYPE_F32) return 1.0f;       /* an element type */
    pt_window_pos at = {0};                                      /* the window walk */
    pt_window_at(ds, &at, 0);
    const uint32_t *col;
    const float *val;
    (void)pt_csr_row(ds, 0, &col, &val);                         /* CSR rows */
    (void)pt_dataset_streamed(ds);                               /* the streaming mode */
    if (src->form_ == PT_FORM_CSR) return 2.0f;                  /* the source's privates */
    return c->at_.lo + src -> e_.row_bytes;
}
