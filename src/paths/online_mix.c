/*
 * Iterative parameter mixing (McDonald, Hall and Mann, "Distributed training strategies for
 * the structured perceptron", NAACL 2010) for the online path on a share of a distributed
 * run: every rank runs one epoch over its rows from the same weights, then the weights are
 * replaced by their mixture sum_r mu_r w_r, the same on every rank. mu_r = 1/P (uniform,
 * the paper's IPM) or k_r / sum k (each rank's share of the epoch's k mistakes, the paper's
 * error-weighted mixing; uniform when no rank made one). On data separable with margin gamma
 * by a unit vector, with rows of norm <= R, the mixed mistakes sum_epochs sum_r mu_r k_r stay
 * within (R / gamma)^2 (their Theorem 3): with uniform mixing, at most P (R / gamma)^2 updates
 * in all.
 *
 * The averaged variant mixes its average too: each rank's average a_r = w_r - u_r / T_r
 * (online_snapshot) is mixed as w is, T becomes the ranks' mean of samples seen, and the lazy
 * sum is set to u = T (w - a), so that the average the next epoch extends is the mixed one,
 * weighing T samples against the epoch's.
 */
#include <string.h>

#include "dist/dist.h"
#include "online.h"

pt_status online_mix_init(online_mixer *mx, const online *o)
{
    memset(mx, 0, sizeof *mx);
    size_t len = o->len;
    if (!(mx->buf = pt_alloc(2 * len * sizeof(float), "mixing buffer")) ||
        !(mx->saved = pt_alloc(2 * len * sizeof(float), "last mixed weights")))
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the mixing buffers (%zu floats)", 4 * len);
    return PT_OK;
}

void online_mix_free(online_mixer *mx)
{
    pt_free(mx->buf);
    pt_free(mx->saved);
}

void online_mix_save(online_mixer *mx, const online *o)
{
    memcpy(mx->saved, o->w, o->len * sizeof(float));
    if (o->averaged) memcpy(mx->saved + o->len, o->u, o->len * sizeof(float));
    mx->b = o->b;
    mx->ub = o->ub;
    mx->steps = o->steps;
}

void online_mix_restore(const online_mixer *mx, online *o)
{
    memcpy(o->w, mx->saved, o->len * sizeof(float));
    if (o->averaged) memcpy(o->u, mx->saved + o->len, o->len * sizeof(float));
    o->b = mx->b;
    o->ub = mx->ub;
    o->steps = mx->steps;
}

size_t online_mix(online_mixer *mx, online *o, size_t mistakes, pt_mix how)
{
    const size_t len = o->len;
    const int P = pt_dist_size();
    uint64_t total = mistakes;
    pt_dist_sum_u64(&total, 1);
    double mu = how == PT_MIX_MISTAKES && total ? (double)mistakes / (double)total : 1.0 / P;
    float *w = mx->buf, *a = mx->buf + len, ab = 0.0f;
    if (o->averaged) online_snapshot(o, a, &ab);
    const float m = (float)mu;
    for (size_t j = 0; j < len; j++) w[j] = m * o->w[j];
    for (size_t j = 0; o->averaged && j < len; j++) a[j] *= m;
    pt_dist_sum_float(mx->buf, o->averaged ? 2 * len : len);
    double sc[3] = {mu * o->b, mu * ab, o->steps / P};
    pt_dist_sum_double(sc, 3);
    memcpy(o->w, w, len * sizeof(float));
    o->b = (float)sc[0];
    if (o->averaged) {
        o->steps = sc[2];
        for (size_t j = 0; j < len; j++)
            o->u[j] = (float)(o->steps * ((double)w[j] - (double)a[j]));
        o->ub = (float)(o->steps * (sc[0] - sc[1]));
    }
    return (size_t)total;
}
