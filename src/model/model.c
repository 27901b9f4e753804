/* Models: allocation, scoring, prediction and evaluation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expand.h"
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
}

/* ------------------------------------------------------------------------- warm start */

/* The random start: per class (one for a binary model), d weights then the bias weight
 * (when on), each uniform in [0, 1) as the notes' notebook draws its start
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
    c->w = c->W = c->Bk = c->sv = c->coef = NULL;
    c->labels = NULL;
    c->states = NULL;
    c->nstates = 0;
    c->label_names = NULL;
    c->sub = NULL;
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
    info->multiclass = m->multiclass;
    info->class_values[0] = m->class_values[0];
    info->class_values[1] = m->class_values[1];
    info->bias = m->bias;
    info->eta = m->params.eta;
    info->margin = m->params.margin;
    info->epochs_run = m->epochs_run;
    info->n_support = m->n_sv;
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

float pt_vote_score(const pt_kernels *k, const float *V, size_t ldv, const float *Vb,
                    const float *Vc, size_t nv, const float *x, size_t len, float bias)
{
    double vote = 0.0;
    for (size_t v = 0; v < nv; v++) {
        float s = k->dot(V + v * ldv, x, len) + Vb[v] * bias;
        vote += pt_sign_positive(s) ? Vc[v] : -Vc[v];
    }
    return (float)vote;
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

static pt_status binary_scores(const pt_model *m, const pt_dataset *ds, float *scores);

pt_status pt_model_scores(const pt_model *m, const pt_dataset *ds, float *scores)
{
    pt_clear_error();
    PT_TRY(pt_require_dense(ds, "scoring"));
    if (m->nclass > 2)
        return pt_fail(PT_ERR_INVALID, "a %zu-class model has one score per class: use "
                                       "pt_model_class_scores", m->nclass);
    /* trained on an expansion: expand the rows (block-wise) before the dot */
    if (m->params.expand.kind != PT_EXPAND_NONE && m->w) return pt_expand_model_scores(m, ds, scores);
    if (ds->d > m->d)
        pt_log(PT_LOG_WARN, "model has %zu features, data has %zu: features %zu..%zu ignored",
               m->d, ds->d, m->d + 1, ds->d);
    return binary_scores(m, ds, scores);
}

/* Scores of a binary model on the rows as they are (no expansion, no warning). */
static pt_status binary_scores(const pt_model *m, const pt_dataset *ds, float *scores)
{
    if (!m->w) return pt_model_kernel_scores(m, ds, scores);
    const pt_kernels *k;
    PT_TRY(pt_kernels_get(PT_ISA_AUTO, &k));
    /* w is zero past the model's d and x is zero past the data's d, so a dot over the shorter
     * padded length ignores the features the model never saw and counts missing ones as 0. */
    size_t mstride = pt_stride_for(m->d);
    size_t len = mstride < ds->stride ? mstride : ds->stride;
    float bias = m->bias ? 1.0f : 0.0f;
    if (m->n_votes) {
#pragma omp parallel for schedule(static) if (ds->n * m->n_votes > 65536)
        for (size_t i = 0; i < ds->n; i++)
            scores[i] = pt_vote_score(k, m->votes, mstride, m->vote_b, m->vote_c, m->n_votes,
                                      ds->X + i * ds->stride, len, bias);
        return PT_OK;
    }
#pragma omp parallel for schedule(static) if (ds->n > 4096)
    for (size_t i = 0; i < ds->n; i++)
        scores[i] = k->dot(m->w, ds->X + i * ds->stride, len) + m->b * bias;
    return PT_OK;
}

/* pt_model_class_scores without the feature-count warning (callers scoring in blocks warn
 * once themselves). */
static pt_status class_scores(const pt_model *m, const pt_dataset *ds, float *out)
{
    if (m->sub) {
        /* one-vs-rest with each class's own binary model (kernel, or voted): its score */
        float *s = pt_alloc((ds->n ? ds->n : 1) * sizeof(float), "class scores");
        if (!s) return PT_ERR_NOMEM;
        pt_status st = PT_OK;
        for (size_t c = 0; c < m->nclass && st == PT_OK; c++) {
            st = binary_scores(m->sub[c], ds, s);
            for (size_t i = 0; st == PT_OK && i < ds->n; i++) out[i * m->nclass + c] = s[i];
        }
        pt_free(s);
        return st;
    }
    if (!m->W)
        return pt_fail(PT_ERR_UNSUPPORTED, "class scores of a %s model with %zu classes are not "
                       "available", pt_path_name(m->path), m->nclass);
    const pt_kernels *k;
    PT_TRY(pt_kernels_get(PT_ISA_AUTO, &k));
    size_t mstride = pt_stride_for(m->d), K = m->nclass;
    size_t len = mstride < ds->stride ? mstride : ds->stride;
    float bias = m->bias ? 1.0f : 0.0f;
#pragma omp parallel for schedule(static) if (ds->n * K > 4096)
    for (size_t i = 0; i < ds->n; i++) {
        const float *x = ds->X + i * ds->stride;
        k->dot_many(m->W, mstride, K, x, len, out + i * K);
        for (size_t c = 0; c < K; c++) out[i * K + c] += m->Bk[c] * bias;
    }
    return PT_OK;
}

pt_status pt_model_class_scores(const pt_model *m, const pt_dataset *ds, float *out)
{
    pt_clear_error();
    PT_TRY(pt_require_dense(ds, "scoring"));
    if (ds->d > m->d)
        pt_log(PT_LOG_WARN, "model has %zu features, data has %zu: features %zu..%zu ignored",
               m->d, ds->d, m->d + 1, ds->d);
    return class_scores(m, ds, out);
}

/* More than two classes are scored in blocks of rows of at most this many bytes of scores, so
 * that a model of many classes does not multiply the memory a large dataset needs. */
#define CLASS_SCORE_BLOCK_BYTES ((size_t)64 << 20)

/* Predicted class index of every row. */
static pt_status predict_classes(const pt_model *m, const pt_dataset *ds, int32_t *pred)
{
    PT_TRY(pt_require_dense(ds, "prediction"));
    size_t K = m->nclass, n = ds->n;
    size_t rows = K > 2 ? CLASS_SCORE_BLOCK_BYTES / sizeof(float) / K : n;
    rows = rows < 1 ? 1 : rows > n ? (n ? n : 1) : rows;
    float *s = pt_alloc(rows * (K > 2 ? K : 1) * sizeof(float), "scores");
    if (!s) return PT_ERR_NOMEM;
    if (K > 2 && ds->d > m->d)
        pt_log(PT_LOG_WARN, "model has %zu features, data has %zu: features %zu..%zu ignored",
               m->d, ds->d, m->d + 1, ds->d);
    pt_status st = K > 2 ? PT_OK : pt_model_scores(m, ds, s);
    /* sigma(0) = +1 */
    for (size_t i = 0; K == 2 && st == PT_OK && i < n; i++) pred[i] = pt_sign_positive(s[i]);
    for (size_t i0 = 0; K > 2 && st == PT_OK && i0 < n; i0 += rows) {
        /* rows [i0, i0 + block) as a dataset of their own (shares X) */
        pt_dataset block = *ds;
        block.n = rows < n - i0 ? rows : n - i0;
        block.X = ds->X + i0 * ds->stride;
        block.cls = ds->cls ? ds->cls + i0 : NULL;
        block.y = ds->y ? ds->y + i0 : NULL;
        if ((st = class_scores(m, &block, s)) != PT_OK) break;
        for (size_t i = 0; i < block.n; i++) {
            /* argmax; a tie goes to the lowest class index (the smallest label) */
            const float *r = s + i * K;
            size_t best = 0;
            for (size_t c = 1; c < K; c++)
                if (r[c] > r[best]) best = c;
            pred[i0 + i] = (int32_t)best;
        }
    }
    pt_free(s);
    return st;
}

pt_status pt_model_predict_class(const pt_model *m, const pt_dataset *ds, int32_t *cls)
{
    pt_clear_error();
    return predict_classes(m, ds, cls);
}

pt_status pt_model_predict(const pt_model *m, const pt_dataset *ds, double *labels)
{
    int32_t *pred = pt_alloc((ds->n ? ds->n : 1) * sizeof *pred, "predictions");
    if (!pred) return PT_ERR_NOMEM;
    pt_status st = predict_classes(m, ds, pred);
    if (st == PT_OK)
        for (size_t i = 0; i < ds->n; i++) labels[i] = pt_model_class_value(m, (size_t)pred[i]);
    pt_free(pred);
    return st;
}

/* The model's class index of the data's class c (by value, or by name for text labels), or
 * -1 if the model never saw it. */
static long model_class_of(const pt_model *m, const pt_dataset *ds, size_t c)
{
    if ((m->label_names != NULL) != (ds->class_names != NULL)) return -1;
    for (size_t k = 0; k < m->nclass; k++)
        if (m->label_names ? strcmp(m->label_names[k], ds->class_names[c]) == 0
                           : pt_model_class_value(m, k) == ds->class_values[c])
            return (long)k;
    return -1;
}

/* Predict every row, then count(user, true class or -1 if the model never saw it, predicted
 * class) for each. */
static pt_status tally(const pt_model *m, const pt_dataset *ds,
                       void (*count)(void *user, long truth, size_t pred), void *user)
{
    int32_t *pred = pt_alloc((ds->n ? ds->n : 1) * sizeof *pred, "predictions");
    if (!pred) return PT_ERR_NOMEM;
    pt_status st = predict_classes(m, ds, pred);
    /* map the data's class table to the model's once */
    long *map = st == PT_OK ? malloc((ds->nclass ? ds->nclass : 1) * sizeof *map) : NULL;
    if (st == PT_OK && !map) st = pt_fail(PT_ERR_NOMEM, "cannot allocate the class map");
    for (size_t c = 0; map && c < ds->nclass; c++) map[c] = model_class_of(m, ds, c);
    for (size_t i = 0; map && i < ds->n; i++) count(user, map[ds->cls[i]], (size_t)pred[i]);
    free(map);
    pt_free(pred);
    return st;
}

typedef struct confusion {
    size_t K, *conf, *unknown;
} confusion;

static void count_confusion(void *user, long truth, size_t pred)
{
    confusion *c = user;
    if (truth < 0) (*c->unknown)++;
    else c->conf[(size_t)truth * c->K + pred]++;
}

pt_status pt_model_confusion(const pt_model *m, const pt_dataset *ds, size_t *conf, size_t *unknown)
{
    size_t K = m->nclass;
    memset(conf, 0, K * K * sizeof *conf);
    *unknown = 0;
    confusion c = {K, conf, unknown};
    return tally(m, ds, count_confusion, &c);
}

typedef struct class_counts {
    size_t *rows, *predicted, *correct, *unknown;
} class_counts;

static void count_classes(void *user, long truth, size_t pred)
{
    class_counts *c = user;
    c->predicted[pred]++;
    if (truth < 0) {
        (*c->unknown)++;
        return;
    }
    c->rows[truth]++;
    c->correct[truth] += (size_t)truth == pred;
}

pt_status pt_model_class_counts(const pt_model *m, const pt_dataset *ds, size_t *rows,
                                size_t *predicted, size_t *correct, size_t *unknown)
{
    size_t K = m->nclass;
    memset(rows, 0, K * sizeof *rows);
    memset(predicted, 0, K * sizeof *predicted);
    memset(correct, 0, K * sizeof *correct);
    *unknown = 0;
    class_counts c = {rows, predicted, correct, unknown};
    return tally(m, ds, count_classes, &c);
}

pt_status pt_model_evaluate(const pt_model *m, const pt_dataset *ds, pt_eval *out)
{
    memset(out, 0, sizeof *out);
    size_t K = m->nclass, unknown;
    size_t *counts = calloc(3 * K, sizeof *counts);
    if (!counts) return pt_fail(PT_ERR_NOMEM, "cannot allocate the counts of %zu classes", K);
    pt_status st = pt_model_class_counts(m, ds, counts, counts + K, counts + 2 * K, &unknown);
    if (st == PT_OK) {
        size_t correct = 0;
        for (size_t c = 0; c < K; c++) correct += counts[2 * K + c];
        out->n = ds->n;
        out->correct = correct;
        out->accuracy = ds->n ? (double)correct / (double)ds->n : 0.0;
    }
    free(counts);
    return st;
}
