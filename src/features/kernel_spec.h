/*
 * The kernel as a user specifies it, made concrete for one dataset: the gamma rules of
 * pt_train_params.gamma (scikit-learn's 'scale' and 'auto') resolved to a number.
 */
#ifndef PT_KERNEL_SPEC_H
#define PT_KERNEL_SPEC_H

#include "data/data.h"

/* 1 if g is one of the rules PT_GAMMA_SCALE, PT_GAMMA_AUTO. */
int pt_gamma_is_rule(float g);

/* The variance of all n d entries of the first d features (dense or CSR; two passes, in
 * double). 0 for an empty dataset. */
double pt_dataset_variance(const pt_dataset *ds);

/* gamma for ds: a positive number as given; PT_GAMMA_SCALE 1 / (d Var(X)) (1 when the variance
 * is 0, as scikit-learn); PT_GAMMA_AUTO 1 / d (1 when d is 0). The result
 * is rounded to float and is positive and finite (clamped to FLT_MAX). */
float pt_gamma_resolve(float gamma, const pt_dataset *ds);

#endif /* PT_KERNEL_SPEC_H */
