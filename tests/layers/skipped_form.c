/* layers: reads rows by form until ported to data/rows.h */
/* A file that still reads rows by form, with the skip line first: scripts/check-layers --form
 * leaves it out (the layers_selftest_clean test). Not compiled. */
#include "data/data.h"

static int sparse(const pt_dataset *ds) { return ds->layout == PT_LAYOUT_SPARSE; }
