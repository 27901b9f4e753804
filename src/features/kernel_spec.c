/* layers: reads rows by form until ported to data/rows.h */
/*
 * The gamma rules: scikit-learn's gamma='scale' is 1 / (n_features X.var()), the variance over
 * every entry of X (zeros of a sparse X included), and gamma='auto' is 1 / n_features. The
 * variance is computed in two passes (mean, then squared deviations) in double, so that data
 * far from 0 does not cancel.
 */
#include <float.h>
#include <math.h>

#include "kernel_spec.h"

#define PIECE 256

/* Elements [k0, k0 + m) of dense row i as float32: in the matrix, or widened into piece. */
static const float *row_piece(const pt_kernels *k, const pt_dataset *ds, size_t i, size_t k0,
                              size_t m, float *piece)
{
    if (ds->dtype == PT_DTYPE_F32) return ds->X + i * ds->stride + k0;
    const size_t at = i * ds->stride + k0;
    if (ds->dtype == PT_DTYPE_BF16)
        k->compact->widen_bf16((const uint16_t *)ds->Xc + at, piece, m);
    else
        k->compact->widen_u8((const uint8_t *)ds->Xc + at, ds->u8_rh + k0, ds->u8_rl + k0, piece,
                             m);
    return piece;
}

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
    /* compact rows: PIECE elements at a time widened on the stack (the float32 copy's values,
     * summed in the same order; no row buffer to allocate) */
    const pt_kernels *kt = NULL;
    if (ds->dtype != PT_DTYPE_F32 && pt_kernels_get(PT_ISA_AUTO, &kt) != PT_OK) return NAN;
    float piece[PIECE];
    for (size_t i = 0; i < n; i++)
        for (size_t k0 = 0; k0 < d; k0 += PIECE) {
            size_t m = d - k0 < PIECE ? d - k0 : PIECE;
            const float *x = row_piece(kt, ds, i, k0, m, piece);
            for (size_t k = 0; k < m; k++) sum += x[k];
        }
    const double mean = sum / count;
    for (size_t i = 0; i < n; i++)
        for (size_t k0 = 0; k0 < d; k0 += PIECE) {
            size_t m = d - k0 < PIECE ? d - k0 : PIECE;
            const float *x = row_piece(kt, ds, i, k0, m, piece);
            for (size_t k = 0; k < m; k++) dev += ((double)x[k] - mean) * ((double)x[k] - mean);
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
