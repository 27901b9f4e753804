/*
 * The gamma rules: scikit-learn's gamma='scale' is 1 / (n_features X.var()), the variance over
 * every entry of X (zeros of a sparse X included), and gamma='auto' is 1 / n_features. The
 * variance is computed in two passes (mean, then squared deviations) in double, so that data
 * far from 0 does not cancel.
 */
#include <float.h>
#include <math.h>

#include "kernel_spec.h"

int pt_gamma_is_rule(float g) { return g == PT_GAMMA_SCALE || g == PT_GAMMA_AUTO; }

double pt_dataset_variance(const pt_dataset *ds)
{
    const size_t n = ds->n, d = ds->d;
    const double count = (double)n * (double)d;
    if (count == 0.0) return 0.0;
    double sum = 0.0, dev = 0.0;
    if (ds->layout == PT_LAYOUT_SPARSE) {
        const size_t nnz = (size_t)ds->rowptr[n] - (size_t)ds->rowptr[0];
        const float *v = ds->val + ds->rowptr[0];
        for (size_t k = 0; k < nnz; k++) sum += v[k];
        const double mean = sum / count;
        for (size_t k = 0; k < nnz; k++) dev += ((double)v[k] - mean) * ((double)v[k] - mean);
        dev += (count - (double)nnz) * mean * mean; /* the zeros */
        return dev / count;
    }
    for (size_t i = 0; i < n; i++) {
        const float *x = ds->X + i * ds->stride;
        for (size_t k = 0; k < d; k++) sum += x[k];
    }
    const double mean = sum / count;
    for (size_t i = 0; i < n; i++) {
        const float *x = ds->X + i * ds->stride;
        for (size_t k = 0; k < d; k++) dev += ((double)x[k] - mean) * ((double)x[k] - mean);
    }
    return dev / count;
}

float pt_gamma_resolve(float gamma, const pt_dataset *ds)
{
    if (!pt_gamma_is_rule(gamma)) return gamma;
    const double d = ds->d ? (double)ds->d : 1.0;
    double g = 1.0 / d;
    if (gamma == PT_GAMMA_SCALE) { /* scikit-learn: 1 when the variance is 0 */
        const double var = pt_dataset_variance(ds);
        g = var > 0.0 && isfinite(var) ? 1.0 / (d * var) : 1.0;
    }
    if (!(g <= FLT_MAX)) g = FLT_MAX;
    float f = (float)g;
    return f > 0.0f ? f : FLT_MIN;
}
