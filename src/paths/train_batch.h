/* Internals of the batch subgradient path (train_batch.c) that the tests call directly. */
#ifndef PT_TRAIN_BATCH_H
#define PT_TRAIN_BATCH_H

#include "paths.h"

/* What one pass over a block of rows saw, at the iterate it was given. */
typedef struct pt_batch_eval {
    size_t mistakes; /* rows with y m <= 0 */
    size_t active;   /* rows with g != 0 */
    double loss;     /* sum of the loss over the rows */
    double gsum;     /* sum of g: the bias gradient times the rows */
} pt_batch_eval;

/* The implementation PT_BATCH_AUTO resolves to for this kernel table and row length (the
 * dataset's stride in floats); GEMV and FUSED are returned as they are. */
pt_batch_impl pt_batch_impl_resolve(pt_batch_impl impl, const pt_kernels *k, size_t len);

/* The subgradient of the batch objective at (w, b) over all n rows of ds, by the same pass the
 * training loop uses (impl GEMV or FUSED; AUTO resolves):
 *     gw = X^T g / n + lambda w   (stride floats, zero past d)
 *     gb = sum(g) / n             (0 when p->bias is off)
 * with g_i the loss subgradient at m_i = x_i.w + b. ev (may be NULL) gets the pass's counts.
 * Threads from p->threads. */
pt_status pt_batch_subgradient(const pt_dataset *ds, const pt_train_params *p,
                               const pt_kernels *k, pt_batch_impl impl, const float *w, float b,
                               float *gw, float *gb, pt_batch_eval *ev);

#endif /* PT_TRAIN_BATCH_H */
