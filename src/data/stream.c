/* A streaming read of a dataset's matrix by the kernel table's dot, the SIMD loads every path
 * uses: the memory bus's rate for this matrix, the baseline `ptron bench` divides the paths'
 * GB/s by. SIMD code stays in src/kernels/; this file only shares the bytes among threads. */
#include <omp.h>

#include "data.h"
#include "kernels/kernels.h"

/* Integer arrays (the CSR offsets and columns) are read word by word: the paths read them so. */
static uint64_t sum_words(const uint32_t *x, size_t m)
{
    uint64_t s = 0;
    for (size_t k = 0; k < m; k++) s += x[k];
    return s;
}

double pt_dataset_read_pass(const pt_dataset *ds, int threads, int passes)
{
    const pt_kernels *k;
    if (pt_kernels_get(PT_ISA_AUTO, &k) != PT_OK) return 0.0;
    const bool sparse = ds->layout == PT_LAYOUT_SPARSE;
    /* a compact matrix's bytes are read as floats: the same bytes, the same loads */
    const float *val = sparse ? ds->val : ds->X ? ds->X : (const float *)ds->Xc;
    const size_t m = sparse ? (size_t)ds->rowptr[ds->n]
                            : ds->n * ds->stride * pt_dtype_size(ds->dtype) / sizeof(float);
    /* the offsets as 32-bit words, twice as many as the 64-bit offsets */
    const uint32_t *words[2] = {sparse ? ds->col : NULL,
                                sparse ? (const uint32_t *)(const void *)ds->rowptr : NULL};
    const size_t nwords[2] = {sparse ? m : 0, sparse ? 2 * (ds->n + 1) : 0};
    if (!val && m) return 0.0;
    double sum = 0.0;
    uint64_t isum = 0;
#pragma omp parallel num_threads(threads > 0 ? threads : omp_get_max_threads()) \
    reduction(+ : sum, isum)
    {
        const size_t T = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
        for (int p = 0; p < passes; p++) {
            /* x . x reads each value once (both operands come from the same load) */
            const size_t a = m / T * t + (t < m % T ? t : m % T), len = m / T + (t < m % T);
            sum += k->dot(val + a, val + a, len);
            for (int w = 0; w < 2; w++) {
                const size_t n = nwords[w], b = n / T * t + (t < n % T ? t : n % T);
                isum += sum_words(words[w] ? words[w] + b : NULL, n / T + (t < n % T));
            }
        }
    }
    return sum + (double)(isum & 1);
}
