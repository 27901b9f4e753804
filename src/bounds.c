/*
 * The mistake bounds of the notes for a reference separator w*:
 *  - separable (Block/Novikoff): updates <= (R / gamma)^2 with gamma the margin of unit w*;
 *  - any data: updates <= min over c > 0 of R^2 |c u|^2 + 2 L_hinge(c u, S), with u the unit vector along w*.
 * The second is a convex piecewise quadratic in c, minimised exactly by walking the points'
 * breakpoints c = 1 / m_i in order. R and the margins are over the vectors training sees:
 * (x, 1) when the bias is on.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

pt_status pt_bounds_compute(const pt_dataset *ds, const float *wstar, float wbias, int bias,
                            pt_bounds *out)
{
    pt_clear_error();
    memset(out, 0, sizeof *out);
    if (ds->nclass != 2) return pt_fail(PT_ERR_LABELS, "bounds need two classes (got %zu)", ds->nclass);
    size_t n = ds->n, d = ds->d;
    double bb = bias ? 1.0 : 0.0, wn2 = bias ? (double)wbias * wbias : 0.0;
    for (size_t j = 0; j < d; j++) wn2 += (double)wstar[j] * wstar[j];
    if (!(wn2 > 0.0)) return pt_fail(PT_ERR_INVALID, "the reference separator is zero");
    double wn = sqrt(wn2);
    double *m = malloc((n ? n : 1) * sizeof *m);
    if (!m) return pt_fail(PT_ERR_NOMEM, "cannot allocate %zu margins", n);
    double R2 = 0.0, gamma = INFINITY;
    for (size_t i = 0; i < n; i++) {
        const float *x = ds->X + i * ds->stride;
        double s = wbias * bb, r2 = bb;
        for (size_t j = 0; j < d; j++) {
            s += (double)wstar[j] * x[j];
            r2 += (double)x[j] * x[j];
        }
        m[i] = ds->y[i] * s / wn;
        if (m[i] < gamma) gamma = m[i];
        if (r2 > R2) R2 = r2;
    }
    out->R = sqrt(R2);
    out->gamma = n ? gamma : 0.0;
    out->mistake_bound = gamma > 0.0 ? R2 / (gamma * gamma) : INFINITY;

    /* f(c) = R^2 c^2 + 2 sum_i max(0, 1 - c m_i); f'(c) = 2 R^2 c - 2 S(c), S(c) the sum of
     * m_i over points still inside the margin (c m_i < 1). Positive m_i leave at c = 1/m_i,
     * largest m_i first. */
    qsort(m, n, sizeof *m, cmp_desc);
    double S = 0.0;
    for (size_t i = 0; i < n; i++) S += m[i];
    double prev = 0.0, c = 0.0;
    size_t k = 0;
    for (;;) {
        double next = (k < n && m[k] > 0.0) ? 1.0 / m[k] : INFINITY;
        double cand = R2 > 0.0 ? S / R2 : INFINITY;
        if (cand <= next) {
            c = cand > prev ? cand : prev;
            break;
        }
        S -= m[k];
        prev = next;
        k++;
    }
    double hinge = 0.0;
    for (size_t i = 0; i < n; i++) {
        double l = 1.0 - c * m[i];
        if (l > 0.0) hinge += l;
    }
    out->wstar_norm = c;
    out->hinge_loss = hinge;
    out->hinge_mistake_bound = R2 * c * c + 2.0 * hinge;
    free(m);
    return PT_OK;
}
