/*
 * The randomized budget perceptron (Cavallanti, Cesa-Bianchi and Gentile, "Tracking the best
 * hyperplane with a simple budget Perceptron", Machine Learning 69, 2007): when a mistake on a
 * sample that is not a support vector finds the budget full, a support vector drawn uniformly
 * at random is removed first. Their analysis bounds its mistakes against any sequence of
 * slowly moving comparators; here it keeps memory and prediction cost at the budget.
 *
 * The draw is a hash of the run's seed and the visit count (splitmix64), not a generator
 * stream: the state a run records (alpha, the visit count) then determines every later draw,
 * so a resumed run removes what the uninterrupted run removes. Finding the r-th support vector
 * scans alpha, O(n): a mistake already costs O(n) (the kernel row applied to the margins).
 */
#include "kernel_budget.h"

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

size_t pt_budget_victim(const uint32_t *alpha, size_t n, size_t nsv, uint64_t seed,
                        uint64_t visit)
{
    const uint64_t h = splitmix64(seed ^ splitmix64(visit ^ 0x6275646765740000ULL)); /* "budget" */
    /* uniform in [0, nsv) (nsv < 2^32: the kernel path has at most 2^31 rows) */
    size_t r = (size_t)(((h >> 32) * (uint64_t)nsv) >> 32), last = 0;
    for (size_t j = 0; j < n; j++) {
        if (!alpha[j]) continue;
        if (r-- == 0) return j;
        last = j;
    }
    return last; /* not reached when nsv counts alpha's non-zeros */
}
