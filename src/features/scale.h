/* Feature scaling inside the library (features/scale.c): per-feature x' = (x - offset) factor,
 * fitted on a dataset, kept in models trained with it (pt_train_params.scale) and applied to
 * the rows they score. */
#ifndef PT_SCALE_H
#define PT_SCALE_H

#include "data/data.h"

struct pt_scaling {
    pt_scale_kind kind;
    size_t d;               /* features it scales; features past d are left as they are */
    double *offset, *factor; /* d each (double: the ends of a range map to -1, 0, 1 exactly) */
};

/* A deep copy (NULL, with the error set, on allocation failure). */
pt_scaling *pt_scaling_clone(const pt_scaling *s);
/* A scaling of d features from the arrays (copied), checked: finite offsets and factors. */
pt_status pt_scaling_make(pt_scale_kind kind, size_t d, const double *offset,
                          const double *factor, pt_scaling **out);

#endif
