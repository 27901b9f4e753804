/*
 * The online single-sample path: for each sample, s = w.x + b; if y s <= tau then
 * w += eta y x, b += eta y (the bias as a constant-1 coordinate). One epoch streams X once.
 *
 * Variants: classic (last iterate) and averaged. The average of all iterates uses the lazy
 * sum: with c the number of samples seen before an update of delta, keep u += c delta; the
 * average after T samples is w - u / T. No O(d) work per correct sample.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct online_state {
    float *w, *u; /* u: averaged variant only */
    float b, ub;
    double steps; /* samples seen (for the average); double: exact up to 2^53 */
} online_state;

static pt_status check_finite(const online_state *st, size_t len, int epoch)
{
    if (!isfinite(st->b)) goto bad;
    for (size_t j = 0; j < len; j++)
        if (!isfinite(st->w[j])) goto bad;
    return PT_OK;
bad:
    return pt_fail(PT_ERR_NUMERIC,
                   "weights became non-finite in epoch %d: lower --eta or rescale the features",
                   epoch);
}

pt_status pt_train_online(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                          pt_model *m, pt_train_report *r)
{
    const size_t n = ds->n, len = ds->stride;
    const float tau = p->margin, eta = p->eta, bias = p->bias ? 1.0f : 0.0f;
    const bool averaged = p->variant == PT_VARIANT_AVERAGED;
    if (p->variant == PT_VARIANT_VOTED)
        return pt_fail(PT_ERR_UNSUPPORTED, "the voted perceptron is not built yet");

    online_state st = {.w = m->w};
    uint32_t *order = NULL;
    pt_status s = PT_OK;
    if (averaged && !(st.u = pt_calloc(len * sizeof(float), "averaging buffer"))) return PT_ERR_NOMEM;
    if (p->shuffle) {
        if (n > UINT32_MAX) {
            s = pt_fail(PT_ERR_LIMIT, "--shuffle supports up to 2^32 rows (got %zu)", n);
            goto out;
        }
        if (!(order = pt_alloc((n ? n : 1) * sizeof *order, "sample order"))) {
            s = PT_ERR_NOMEM;
            goto out;
        }
        for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
    }
    pt_rng rng;
    pt_rng_seed(&rng, p->seed);
    const float *X = ds->X, *Y = ds->y;
    double t0 = pt_now();

    for (int epoch = 1; epoch <= p->epochs; epoch++) {
        if (order) pt_rng_shuffle(&rng, order, n);
        size_t mistakes = 0;
        for (size_t t = 0; t < n; t++) {
            size_t i = order ? order[t] : t;
            const float *x = X + i * len;
            const float y = Y[i];
            if (!averaged) {
                float score;
                mistakes += (size_t)k->step(st.w, &st.b, x, len, y, tau, eta, bias, &score);
            } else {
                float score = k->dot(st.w, x, len) + st.b * bias;
                if (y * score <= tau) {
                    float a = eta * y, c = (float)st.steps * a;
                    k->axpy2(a, c, x, st.w, st.u, len);
                    st.b += a * bias;
                    st.ub += c * bias;
                    mistakes++;
                }
                st.steps += 1.0;
            }
            if (pt_stop_requested) {
                s = pt_fail(PT_ERR_INTERRUPTED, "interrupted in epoch %d at sample %zu", epoch, t + 1);
                goto finish;
            }
        }
        r->updates += mistakes;
        if ((s = pt_report_push_epoch(r, mistakes, NAN)) != PT_OK) goto finish;
        if ((s = check_finite(&st, len, epoch)) != PT_OK) goto finish;
        if (p->progress && p->progress(epoch, mistakes, pt_now() - t0, p->progress_user)) {
            s = pt_fail(PT_ERR_INTERRUPTED, "stopped by the progress callback after epoch %d", epoch);
            goto finish;
        }
        if (mistakes == 0) {
            r->converged = 1;
            break;
        }
    }
finish:
    if (averaged && st.steps > 0) {
        /* average = w - u / T */
        float inv = (float)(1.0 / st.steps);
        k->scale_add(1.0f, st.w, -inv, st.u, st.w, len);
        st.b = st.b - st.ub * inv;
    }
    m->b = st.b;
out:
    pt_free(st.u);
    pt_free(order);
    return s;
}
