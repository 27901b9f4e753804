/* More than two classes: one-vs-rest on every path, and the multiclass perceptron. Not
 * installed. */
#ifndef PT_MULTICLASS_H
#define PT_MULTICLASS_H

#include "paths/paths.h"

/* One-vs-rest on the online or batch path: m, a multiclass model with its metadata and warm
 * start, gets every class's weights. */
pt_status pt_train_ovr(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                       pt_model *m, pt_train_report *r);
/* One-vs-rest on the kernel path: one binary kernel model per class, in m->sub of the model
 * made in *out. */
pt_status pt_train_ovr_kernel(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                              pt_model **out, pt_train_report *r);
/* The multiclass perceptron into m, as pt_train_ovr. */
pt_status pt_train_direct(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                          pt_model *m, pt_train_report *r);

#endif /* PT_MULTICLASS_H */
