/* A file of a training layer that reads rows through data/rows.h only: scripts/check-layers
 * --form must pass it (the layers_selftest_clean test). The form's names below sit in comments
 * and strings only, which the check leaves out: PT_LAYOUT_SPARSE, PT_DTYPE_F32, pt_csr_row,
 * ->ds_. Not compiled. */
#include "data/rows.h"

// PT_DTYPE_U8 and pt_window_at in a line comment
static const char *says = "pt_row_f32 reads PT_LAYOUT_DENSE rows (->form_)";
static const char quote = '"', apostrophe = '\'';

static size_t dense(pt_cursor *c, const pt_block *b) { return b->rows + (c->to > 0); }
static size_t csr(pt_cursor *c, const pt_block *b) { return b->rowptr[b->rows] + (c->from > 0); }

size_t pass(const pt_rows *src);
size_t pass(const pt_rows *src)
{
    size_t (*fn)(pt_cursor *, const pt_block *) =
        PT_ROWS_PICK(src, PT_READ_FLOAT, dense, NULL, csr);
    if (!fn) return pt_rows_refuse(src, says) == PT_OK ? (size_t)(quote + apostrophe) : 0;
    pt_cursor c;
    if (pt_cursor_open(&c, src, &(pt_cursor_opts){.window_rows = pt_rows_window(src)}) != PT_OK)
        return 0;
    size_t done = 0;
    for (size_t t = 0; t < src->n;) {
        pt_block b;
        pt_cursor_block(&c, t, 8192, &b);
        done += fn(&c, &b);
        t += b.rows;
    }
    pt_cursor_close(&c);
    return done;
}
