/*
 * The kernel path's support vector budget (pt_train_params.budget): which support vector a
 * full budget gives up. Private to src/paths/.
 */
#ifndef PT_KERNEL_BUDGET_H
#define PT_KERNEL_BUDGET_H

#include <stddef.h>
#include <stdint.h>

/* The support vector to remove: the r-th sample with alpha != 0 in index order, r drawn
 * uniformly from [0, nsv) by a hash of seed and visit (the sample visits before this one), so
 * that the draw depends on nothing a resumed run could lose. nsv >= 1 samples of alpha[0..n)
 * are non-zero. */
size_t pt_budget_victim(const uint32_t *alpha, size_t n, size_t nsv, uint64_t seed,
                        uint64_t visit);

#endif /* PT_KERNEL_BUDGET_H */
