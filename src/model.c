/* Models: allocation, scoring, prediction and evaluation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

pt_model *pt_model_alloc_linear(size_t d)
{
    pt_model *m = calloc(1, sizeof *m);
    if (!m) {
        pt_fail(PT_ERR_NOMEM, "cannot allocate model");
        return NULL;
    }
    m->d = d;
    m->nclass = 2;
    m->w = pt_calloc(pt_stride_for(d) * sizeof(float), "weight vector");
    if (!m->w) {
        free(m);
        return NULL;
    }
    return m;
}

void pt_model_free(pt_model *m)
{
    if (!m) return;
    pt_free(m->w);
    pt_free(m->sv);
    pt_free(m->coef);
    free(m);
}

void pt_model_get_info(const pt_model *m, pt_model_info *info)
{
    memset(info, 0, sizeof *info);
    info->path = m->path;
    info->variant = m->variant;
    info->kernel = m->params.kernel;
    info->d = m->d;
    info->nclass = m->nclass;
    info->class_values[0] = m->class_values[0];
    info->class_values[1] = m->class_values[1];
    info->bias = m->bias;
    info->eta = m->params.eta;
    info->margin = m->params.margin;
    info->epochs_run = m->epochs_run;
    info->n_support = m->n_sv;
}

const float *pt_model_weights(const pt_model *m, float *bias)
{
    if (!m->w) return NULL;
    if (bias) *bias = m->b;
    return m->w;
}

pt_status pt_model_scores(const pt_model *m, const pt_dataset *ds, float *scores)
{
    pt_clear_error();
    if (ds->d > m->d)
        pt_log(PT_LOG_WARN, "model has %zu features, data has %zu: features %zu..%zu ignored",
               m->d, ds->d, m->d + 1, ds->d);
    if (!m->w) return pt_model_kernel_scores(m, ds, scores);
    const pt_kernels *k;
    PT_TRY(pt_kernels_get(PT_ISA_AUTO, &k));
    /* w is zero past the model's d and x is zero past the data's d, so a dot over the shorter
     * padded length ignores the features the model never saw and counts missing ones as 0. */
    size_t mstride = pt_stride_for(m->d);
    size_t len = mstride < ds->stride ? mstride : ds->stride;
    float bias = m->bias ? 1.0f : 0.0f;
#pragma omp parallel for schedule(static) if (ds->n > 4096)
    for (size_t i = 0; i < ds->n; i++)
        scores[i] = k->dot(m->w, ds->X + i * ds->stride, len) + m->b * bias;
    return PT_OK;
}

pt_status pt_model_predict(const pt_model *m, const pt_dataset *ds, double *labels)
{
    float *s = pt_alloc((ds->n ? ds->n : 1) * sizeof(float), "scores");
    if (!s) return PT_ERR_NOMEM;
    pt_status st = pt_model_scores(m, ds, s);
    if (st == PT_OK)
        for (size_t i = 0; i < ds->n; i++) labels[i] = m->class_values[s[i] > 0.0f ? 1 : 0];
    pt_free(s);
    return st;
}

pt_status pt_model_evaluate(const pt_model *m, const pt_dataset *ds, pt_eval *out)
{
    memset(out, 0, sizeof *out);
    double *pred = malloc((ds->n ? ds->n : 1) * sizeof *pred);
    if (!pred) return pt_fail(PT_ERR_NOMEM, "cannot allocate %zu predictions", ds->n);
    pt_status st = pt_model_predict(m, ds, pred);
    if (st == PT_OK) {
        size_t correct = 0;
        for (size_t i = 0; i < ds->n; i++) correct += pred[i] == pt_dataset_label(ds, i);
        out->n = ds->n;
        out->correct = correct;
        out->accuracy = ds->n ? (double)correct / (double)ds->n : 0.0;
    }
    free(pred);
    return st;
}
