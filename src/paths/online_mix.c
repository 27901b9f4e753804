/*
 * Iterative parameter mixing (McDonald, Hall and Mann, "Distributed training strategies for
 * the structured perceptron", NAACL 2010) for the online learners on a share of a distributed
 * run (the binary learner, and the multiclass perceptron's weight matrix as a whole): every
 * rank runs one epoch over its rows from the same weights, then the weights are replaced by
 * their mixture sum_r mu_r w_r, the same on every rank. mu_r = 1/P (uniform, the paper's IPM)
 * or k_r / sum k (each rank's share of the epoch's k mistakes, the paper's error-weighted
 * mixing; uniform when no rank made one). On data separable with margin gamma by a unit
 * vector, with rows of norm <= R, the mixed mistakes sum_epochs sum_r mu_r k_r stay within
 * (R / gamma)^2 (their Theorem 3): with uniform mixing, at most P (R / gamma)^2 updates in all.
 *
 * The averaged variant mixes its average too: each rank's average a_r = w_r - u_r / T_r is
 * mixed as w is, T becomes the samples all ranks have seen over P (seen / P, computed from
 * the integer count, so a run resumed from its state's count gets the same T), and the lazy
 * sum is set to u = T (w - a), so that the average the next epoch extends is the mixed one,
 * weighing T samples against the epoch's.
 */
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "online.h"

pt_status pt_mixer_init(pt_mixer *mx, const pt_mix_target *t, size_t rows, double seen)
{
    memset(mx, 0, sizeof *mx);
    mx->t = *t;
    mx->rows = rows;
    mx->seen = seen;
    const size_t m = t->nw + t->nb;
    if (!(mx->buf = pt_alloc(2 * m * sizeof(float), "mixing buffer")) ||
        !(mx->saved = pt_alloc(2 * m * sizeof(float), "last mixed weights")) ||
        !(mx->bias = malloc(2 * (t->nb ? t->nb : 1) * sizeof(double))))
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the mixing buffers (%zu floats)", 4 * m);
    *t->steps = seen / pt_dist_size();
    return PT_OK;
}

void pt_mixer_free(pt_mixer *mx)
{
    pt_free(mx->buf);
    pt_free(mx->saved);
    free(mx->bias);
}

void pt_mixer_save(pt_mixer *mx)
{
    const pt_mix_target *t = &mx->t;
    float *s = mx->saved;
    memcpy(s, t->w, t->nw * sizeof(float));
    memcpy(s + t->nw, t->b, t->nb * sizeof(float));
    if (t->u) {
        memcpy(s + t->nw + t->nb, t->u, t->nw * sizeof(float));
        memcpy(s + 2 * t->nw + t->nb, t->ub, t->nb * sizeof(float));
    }
    mx->saved_steps = *t->steps;
}

void pt_mixer_restore(const pt_mixer *mx)
{
    const pt_mix_target *t = &mx->t;
    const float *s = mx->saved;
    memcpy(t->w, s, t->nw * sizeof(float));
    memcpy(t->b, s + t->nw, t->nb * sizeof(float));
    if (t->u) {
        memcpy(t->u, s + t->nw + t->nb, t->nw * sizeof(float));
        memcpy(t->ub, s + 2 * t->nw + t->nb, t->nb * sizeof(float));
    }
    *t->steps = mx->saved_steps;
}

size_t pt_mixer_mix(pt_mixer *mx, size_t mistakes, pt_mix how)
{
    const pt_mix_target *t = &mx->t;
    const size_t nw = t->nw, nb = t->nb;
    const int P = pt_dist_size();
    const bool avg = t->u != NULL;
    uint64_t total = mistakes;
    pt_dist_sum_u64(&total, 1);
    double mu = how == PT_MIX_MISTAKES && total ? (double)mistakes / (double)total : 1.0 / P;
    /* the weights, then the averages (a = w - u / T, as online_snapshot); the biases in double */
    float *w = mx->buf, *a = mx->buf + nw;
    double *bw = mx->bias, *ba = mx->bias + nb;
    const float m = (float)mu;
    const double T = *t->steps;
    const float inv = avg && T != 0.0 ? (float)(1.0 / T) : 0.0f;
    if (avg && T != 0.0) t->k->scale_add(1.0f, t->w, -inv, t->u, a, nw);
    else if (avg) memcpy(a, t->w, nw * sizeof(float));
    for (size_t j = 0; j < nw; j++) w[j] = m * t->w[j];
    for (size_t j = 0; avg && j < nw; j++) a[j] *= m;
    for (size_t c = 0; c < nb; c++) {
        bw[c] = mu * t->b[c];
        ba[c] = avg ? mu * (double)(t->b[c] - t->ub[c] * inv) : 0.0;
    }
    pt_dist_sum_float(mx->buf, avg ? 2 * nw : nw);
    pt_dist_sum_double(mx->bias, avg ? 2 * nb : nb);
    memcpy(t->w, w, nw * sizeof(float));
    for (size_t c = 0; c < nb; c++) t->b[c] = (float)bw[c];
    /* every rank has visited its rows: all ranks, every row */
    mx->seen += (double)mx->rows;
    *t->steps = mx->seen / P;
    if (avg) {
        const double S = *t->steps;
        for (size_t j = 0; j < nw; j++) t->u[j] = (float)(S * ((double)w[j] - (double)a[j]));
        for (size_t c = 0; c < nb; c++) t->ub[c] = (float)(S * (bw[c] - ba[c]));
    }
    return (size_t)total;
}
