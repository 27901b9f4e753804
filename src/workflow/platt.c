/*
 * Probabilities for two-class models by Platt scaling (ptron train --proba): the sigmoid
 * P(+1 | f) = 1 / (1 + exp(A f + B)) fitted to decision values f the model never trained on,
 * those of each row from the model trained on the other folds (pt_cv_folds), with Platt's
 * regularised targets; the Newton method with backtracking of Lin, Lin and Weng (2007), as
 * libsvm's sigmoid_train.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "workflow.h"

/* Out-of-fold decision values: each fold's rows scored by the model of the other folds. */
static pt_status fold_scores(const pt_dataset *ds, const pt_train_params *p, size_t k,
                             uint64_t seed, float *f)
{
    const size_t n = pt_dataset_n(ds);
    int32_t *fold = malloc((n ? n : 1) * sizeof *fold);
    size_t *rows = malloc((n ? n : 1) * sizeof *rows);
    pt_status s = fold && rows ? pt_cv_folds(ds, k, seed, fold)
                               : pt_fail(PT_ERR_NOMEM, "cannot allocate the folds");
    pt_train_params q = *p;
    q.progress = NULL;
    q.epoch_hook = NULL;
    q.resume = NULL; /* each fold from the start */
    q.init = NULL;
    float *sc = s == PT_OK ? malloc((n ? n : 1) * sizeof *sc) : NULL;
    if (s == PT_OK && !sc) s = pt_fail(PT_ERR_NOMEM, "cannot allocate %zu scores", n);
    for (size_t c = 0; s == PT_OK && c < k; c++) {
        size_t ntrain = 0, ntest = 0;
        for (size_t i = 0; i < n; i++)
            if ((size_t)fold[i] != c) rows[ntrain++] = i;
        for (size_t i = 0; i < n; i++)
            if ((size_t)fold[i] == c) rows[ntrain + ntest++] = i;
        pt_dataset *train = NULL, *test = NULL;
        pt_model *m = NULL;
        s = pt_dataset_take(ds, rows, ntrain, &train);
        if (s == PT_OK) s = pt_dataset_take(ds, rows + ntrain, ntest, &test);
        if (s == PT_OK) s = pt_train(train, &q, &m, NULL);
        if (s == PT_OK) s = pt_model_scores(m, test, sc);
        for (size_t i = 0; s == PT_OK && i < ntest; i++) f[rows[ntrain + i]] = sc[i];
        pt_model_free(m);
        pt_dataset_free(train);
        pt_dataset_free(test);
    }
    free(sc);
    free(fold);
    free(rows);
    return s;
}

/* Platt's fit of A, B to decision values f and labels y (+1 / -1). */
static void sigmoid_fit(const float *f, const float *y, size_t n, double *A, double *B)
{
    double prior1 = 0, prior0 = 0;
    for (size_t i = 0; i < n; i++) {
        if (y[i] > 0) prior1++;
        else prior0++;
    }
    const double hi = (prior1 + 1.0) / (prior1 + 2.0), lo = 1.0 / (prior0 + 2.0);
    const double min_step = 1e-10, sigma = 1e-12, eps = 1e-5;
    double a = 0.0, b = log((prior0 + 1.0) / (prior1 + 1.0)), fval = 0.0;
    for (size_t i = 0; i < n; i++) {
        double t = y[i] > 0 ? hi : lo, fApB = f[i] * a + b;
        fval += fApB >= 0 ? t * fApB + log1p(exp(-fApB)) : (t - 1) * fApB + log1p(exp(fApB));
    }
    for (int it = 0; it < 100; it++) {
        double h11 = sigma, h22 = sigma, h21 = 0, g1 = 0, g2 = 0;
        for (size_t i = 0; i < n; i++) {
            double t = y[i] > 0 ? hi : lo, fApB = f[i] * a + b, p, q;
            if (fApB >= 0) {
                p = exp(-fApB) / (1.0 + exp(-fApB));
                q = 1.0 / (1.0 + exp(-fApB));
            } else {
                p = 1.0 / (1.0 + exp(fApB));
                q = exp(fApB) / (1.0 + exp(fApB));
            }
            double d2 = p * q;
            h11 += (double)f[i] * f[i] * d2;
            h22 += d2;
            h21 += f[i] * d2;
            double d1 = t - p;
            g1 += f[i] * d1;
            g2 += d1;
        }
        if (fabs(g1) < eps && fabs(g2) < eps) break;
        double det = h11 * h22 - h21 * h21;
        double dA = -(h22 * g1 - h21 * g2) / det, dB = -(-h21 * g1 + h11 * g2) / det;
        double gd = g1 * dA + g2 * dB, step = 1.0;
        while (step >= min_step) {
            double na = a + step * dA, nb = b + step * dB, nf = 0.0;
            for (size_t i = 0; i < n; i++) {
                double t = y[i] > 0 ? hi : lo, fApB = f[i] * na + nb;
                nf += fApB >= 0 ? t * fApB + log1p(exp(-fApB))
                                : (t - 1) * fApB + log1p(exp(fApB));
            }
            if (nf < fval + 1e-4 * step * gd) {
                a = na;
                b = nb;
                fval = nf;
                break;
            }
            step /= 2.0;
        }
        if (step < min_step) break; /* the line search failed: keep what we have */
    }
    *A = a;
    *B = b;
}

pt_status pt_platt_fit(const pt_dataset *ds, const pt_train_params *p, size_t k, uint64_t seed,
                       double *A, double *B)
{
    pt_clear_error();
    if (pt_dataset_nclass(ds) != 2)
        return pt_fail(PT_ERR_LABELS, "probabilities by Platt scaling are for two classes; the "
                       "data has %zu (use the scores of each class: predict --scores)",
                       pt_dataset_nclass(ds));
    pt_train_params q = *p;
    q.resume = NULL;
    q.init = NULL;
    PT_TRY(pt_train_check(ds, &q));
    const size_t n = pt_dataset_n(ds);
    float *f = malloc((n ? n : 1) * sizeof *f);
    if (!f) return pt_fail(PT_ERR_NOMEM, "cannot allocate %zu scores", n);
    pt_status s = fold_scores(ds, p, k, seed, f);
    if (s == PT_OK) sigmoid_fit(f, pt_dataset_y(ds), n, A, B);
    free(f);
    return s;
}
