/* Models: allocation, metadata, the warm start, copies, and what a model says of itself. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

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

pt_model *pt_model_alloc_multiclass(size_t d, size_t nclass, const double *labels)
{
    pt_model *m = calloc(1, sizeof *m);
    size_t len = pt_stride_for(d), cells;
    if (!m || !pt_mul_ok(len, nclass, &cells)) {
        free(m);
        pt_fail(PT_ERR_NOMEM, "cannot allocate a model of %zu classes x %zu features", nclass, d);
        return NULL;
    }
    m->d = d;
    m->nclass = nclass;
    m->W = pt_calloc(cells * sizeof(float), "class weight vectors");
    m->Bk = pt_calloc(nclass * sizeof(float), "class biases");
    m->labels = malloc(nclass * sizeof(double));
    if (!m->W || !m->Bk || !m->labels) {
        pt_model_free(m);
        pt_fail(PT_ERR_NOMEM, "cannot allocate a model of %zu classes x %zu features", nclass, d);
        return NULL;
    }
    memcpy(m->labels, labels, nclass * sizeof(double));
    return m;
}

void pt_model_set_meta(pt_model *m, const pt_dataset *ds, const pt_train_params *p)
{
    m->path = p->path;
    m->variant = p->variant;
    m->bias = p->bias;
    m->multiclass = p->multiclass;
    m->nclass = ds->nclass;
    if (ds->class_names && !m->label_names) m->label_names = pt_names_dup(ds->class_names, ds->nclass);
    if (ds->nclass == 2) {
        m->class_values[0] = ds->class_values[0];
        m->class_values[1] = ds->class_values[1];
    }
    m->params = *p;
    m->params.progress = NULL;
    m->params.progress_user = NULL;
    m->params.epoch_hook = NULL;
    m->params.epoch_user = NULL;
    m->params.stop = NULL;
    m->params.resume = NULL; /* the caller's models: never kept past the call */
    m->params.init = NULL;
    m->params.class_weight = NULL; /* the caller's array */
    m->params.class_weight_n = 0;
}

/* ------------------------------------------------------------------------- warm start */

/* The random start: per class (one for a binary model), d weights then the bias weight
 * (when on), each uniform in [0, 1) as the perceptron notebook draws its start
 * (np.random.random_sample). From a stream of its own, so the shuffle's orders are the same
 * with or without it. */
#define INIT_STREAM 0x696e6974ULL /* "init" */

void pt_random_start(uint64_t seed, size_t K, size_t d, int bias, float *W, size_t ld, float *B)
{
    pt_rng rng;
    pt_rng_seed(&rng, seed ^ INIT_STREAM);
    for (size_t c = 0; c < K; c++) {
        for (size_t j = 0; j < d; j++) W[c * ld + j] = (float)pt_rng_uniform(&rng);
        B[c] = bias ? (float)pt_rng_uniform(&rng) : 0.0f;
    }
}

pt_status pt_model_start(pt_model *m, const pt_train_params *p)
{
    const size_t len = pt_stride_for(m->d), K = m->W ? m->nclass : 1;
    float *W = m->W ? m->W : m->w, *B = m->W ? m->Bk : &m->b;
    if (p->init_random) {
        pt_random_start(p->seed, K, m->d, p->bias, W, len, B);
    } else if (p->init) {
        const pt_model *from = p->init;
        if (m->W && !from->W) return pt_fail(PT_ERR_INVALID, "the init model is not a model of %zu classes", K);
        memcpy(W, from->W ? from->W : from->w, K * len * sizeof(float));
        memcpy(B, from->W ? from->Bk : &from->b, K * sizeof(float));
    }
    return PT_OK;
}

/* Deep copy of a buffer of count elements of size sz allocated with pt_alloc (NULL stays NULL). */
static bool dup_buf(void **dst, const void *src, size_t count, size_t sz)
{
    *dst = NULL;
    if (!src) return true;
    if (!(*dst = pt_alloc((count ? count : 1) * sz, "model copy"))) return false;
    memcpy(*dst, src, count * sz);
    return true;
}

pt_model *pt_model_clone(const pt_model *m)
{
    pt_model *c = calloc(1, sizeof *c);
    if (!c) {
        pt_fail(PT_ERR_NOMEM, "cannot copy the model");
        return NULL;
    }
    *c = *m;
    c->w = c->W = c->Bk = c->sv = c->coef = c->sv_val = NULL;
    c->sv_ptr = NULL;
    c->sv_col = NULL;
    c->labels = NULL;
    c->states = NULL;
    c->nstates = 0;
    c->label_names = NULL;
    c->sub = NULL;
    c->scale = NULL;
    if (m->scale && !(c->scale = pt_scaling_clone(m->scale))) {
        pt_model_free(c);
        return NULL;
    }
    if (m->sub) {
        if (!(c->sub = calloc(m->nclass, sizeof *c->sub))) {
            pt_model_free(c);
            pt_fail(PT_ERR_NOMEM, "cannot copy the model");
            return NULL;
        }
        for (size_t k = 0; k < m->nclass; k++)
            if (!(c->sub[k] = pt_model_clone(m->sub[k]))) {
                pt_model_free(c);
                return NULL;
            }
    }
    c->votes = c->vote_b = c->vote_c = NULL;
    c->vote_cap = 0; /* the copies hold n_votes vectors */
    size_t len = pt_stride_for(m->d);
    bool ok = dup_buf((void **)&c->w, m->w, len, sizeof(float)) &&
              dup_buf((void **)&c->W, m->W, len * m->nclass, sizeof(float)) &&
              dup_buf((void **)&c->Bk, m->Bk, m->nclass, sizeof(float)) &&
              dup_buf((void **)&c->sv, m->sv, len * m->n_sv, sizeof(float)) &&
              dup_buf((void **)&c->coef, m->coef, m->n_sv * (m->W || !m->labels ? 1 : m->nclass), sizeof(float));
    if (ok && m->sv_ptr) {
        size_t nnz = (size_t)m->sv_ptr[m->n_sv];
        ok = dup_buf((void **)&c->sv_ptr, m->sv_ptr, m->n_sv + 1, sizeof *m->sv_ptr) &&
             dup_buf((void **)&c->sv_col, m->sv_col, nnz ? nnz : 1, sizeof *m->sv_col) &&
             dup_buf((void **)&c->sv_val, m->sv_val, nnz ? nnz : 1, sizeof *m->sv_val);
    }
    ok = ok && dup_buf((void **)&c->votes, m->votes, len * m->n_votes, sizeof(float)) &&
         dup_buf((void **)&c->vote_b, m->vote_b, m->n_votes, sizeof(float)) &&
         dup_buf((void **)&c->vote_c, m->vote_c, m->n_votes, sizeof(float));
    if (ok && m->label_names) ok = (c->label_names = pt_names_dup(m->label_names, m->nclass)) != NULL;
    if (ok && m->nstates) {
        ok = (c->states = calloc(m->nstates, sizeof *c->states)) != NULL;
        if (ok) c->nstates = m->nstates;
        for (size_t k = 0; ok && k < m->nstates; k++)
            ok = !m->states[k] || (c->states[k] = pt_train_state_clone(m->states[k])) != NULL;
    }
    if (ok && m->labels) {
        c->labels = malloc(m->nclass * sizeof(double));
        if ((ok = c->labels != NULL)) memcpy(c->labels, m->labels, m->nclass * sizeof(double));
    }
    if (!ok) {
        pt_model_free(c);
        pt_fail(PT_ERR_NOMEM, "cannot copy the model");
        return NULL;
    }
    return c;
}

const char *pt_model_class_name(const pt_model *m, size_t k)
{
    return m->label_names ? m->label_names[k] : NULL;
}

double pt_model_class_value(const pt_model *m, size_t k)
{
    return m->labels ? m->labels[k] : m->class_values[k];
}

void pt_model_get_params(const pt_model *m, pt_train_params *p) { *p = m->params; }

int pt_model_resumable(const pt_model *m) { return m->nstates > 0; }

void pt_model_clear_run(pt_model *m)
{
    for (size_t k = 0; k < m->nstates; k++) pt_train_state_free(m->states[k]);
    free(m->states);
    m->states = NULL;
    m->nstates = 0;
}

pt_status pt_model_keep_run(pt_model *m, pt_train_state *st)
{
    if (!st) return PT_ERR_NOMEM; /* its allocation failed and said so */
    pt_train_state **a = malloc(sizeof *a);
    if (!a) {
        pt_train_state_free(st);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the run state");
    }
    pt_model_clear_run(m);
    a[0] = st;
    m->states = a;
    m->nstates = 1;
    return PT_OK;
}

void pt_model_free(pt_model *m)
{
    if (!m) return;
    pt_model_clear_run(m);
    for (size_t c = 0; m->sub && c < m->nclass; c++) pt_model_free(m->sub[c]);
    free(m->sub);
    pt_free(m->votes);
    pt_free(m->vote_b);
    pt_free(m->vote_c);
    pt_free(m->W);
    pt_free(m->Bk);
    pt_names_free(m->label_names, m->nclass);
    free(m->labels); /* malloc'd */
    pt_free(m->w);
    pt_free(m->sv);
    pt_free(m->sv_ptr);
    pt_free(m->sv_col);
    pt_free(m->sv_val);
    pt_free(m->coef);
    pt_scaling_free(m->scale);
    free(m);
}

const pt_scaling *pt_model_scaling(const pt_model *m) { return m->scale; }

void pt_model_get_info(const pt_model *m, pt_model_info *info)
{
    memset(info, 0, sizeof *info);
    info->path = m->path;
    info->variant = m->variant;
    info->kernel = m->params.kernel.kind;
    info->d = m->d;
    info->nclass = m->nclass;
    info->multiclass = m->multiclass;
    info->class_values[0] = m->class_values[0];
    info->class_values[1] = m->class_values[1];
    info->bias = m->bias;
    info->eta = m->params.eta;
    info->margin = m->params.margin;
    info->epochs_run = m->epochs_run;
    info->n_support = m->n_sv;
    /* kernel one-vs-rest: every class's support vectors (a vector two classes share counts
     * twice; the model file keeps it once) */
    for (size_t c = 0; m->sub && !m->W && c < m->nclass; c++) info->n_support += m->sub[c]->n_sv;
    if (!m->nstates) return;
    /* one-vs-rest: the class furthest behind among those still running */
    const pt_train_state *at = NULL;
    for (size_t k = 0; k < m->nstates; k++) {
        const pt_train_state *st = m->states[k];
        info->run_updates += st->updates;
        if (!at || (at->finished && !st->finished) ||
            (at->finished == st->finished &&
             (st->finished ? st->epochs_done > at->epochs_done
                           : st->epochs_done < at->epochs_done ||
                                 (st->epochs_done == at->epochs_done && st->pos < at->pos))))
            at = st;
    }
    info->resumable = 1;
    info->run_epochs_done = at->epochs_done;
    info->run_position = at->pos;
    info->run_rows = at->n;
    if (m->nstates == 1) {
        info->run_recent_mistakes = at->hist;
        info->run_recent_epochs = at->nhist;
    }
}

const float *pt_model_weights(const pt_model *m, float *bias)
{
    if (!m->w) return NULL;
    if (bias) *bias = m->b;
    return m->w;
}

const float *pt_model_class_weights(const pt_model *m, size_t k, float *bias)
{
    if (!m->W || k >= m->nclass) return NULL;
    if (bias) *bias = m->Bk[k];
    return m->W + k * pt_stride_for(m->d);
}

size_t pt_model_nclass(const pt_model *m) { return m->nclass; }

size_t pt_model_features(const pt_model *m)
{
    return m->params.expand.kind != PT_EXPAND_NONE ? m->expand_d_in : m->d;
}

int pt_model_epochs_run(const pt_model *m) { return m->epochs_run; }
