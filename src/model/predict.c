/* layers: reads rows by form until ported to data/rows.h */
/* Predictions and their counts: the class of each row (sigma(0) = +1, argmax with ties to the
 * lowest class), the labels, the confusion matrix, per-class counts and accuracy. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "model.h"

/* More than two classes are scored in blocks of rows of at most this many bytes of scores, so
 * that a model of many classes does not multiply the memory a large dataset needs. */
#define CLASS_SCORE_BLOCK_BYTES ((size_t)64 << 20)

/* Predicted class index of every row. */
static pt_status predict_raw(const pt_model *m, const pt_dataset *ds, int32_t *pred);

/* Predicted class index of every row: the model's scaling first, if it has one. A file that
 * shrank under ds meanwhile fails the call (its rows read as zeros: pt_dataset_intact). */
static pt_status predict_classes(const pt_model *m, const pt_dataset *ds, int32_t *pred)
{
    const pt_dataset *use;
    pt_dataset *tmp;
    PT_TRY(pt_model_scaled(m, ds, &use, &tmp));
    pt_vote_cost_log(m, use);
    pt_status s = predict_raw(m, use, pred);
    pt_dataset_free(tmp);
    return s == PT_OK ? pt_dataset_intact(ds) : s;
}

static pt_status predict_raw(const pt_model *m, const pt_dataset *ds, int32_t *pred)
{
    size_t K = m->nclass, n = ds->n;
    size_t rows = K > 2 ? CLASS_SCORE_BLOCK_BYTES / sizeof(float) / K : n;
    /* streamed: a window at a time, each dropped once scored */
    const size_t win = pt_dataset_streamed(ds);
    const bool blocks = K > 2 || win;
    if (win && rows > win) rows = win;
    rows = rows < 1 ? 1 : rows > n ? (n ? n : 1) : rows;
    float *s = pt_alloc(rows * (K > 2 ? K : 1) * sizeof(float), "scores");
    if (!s) return PT_ERR_NOMEM;
    if (K > 2) pt_warn_extra_features(m->d, ds->d);
    pt_status st = blocks ? PT_OK : pt_model_scores_raw(m, ds, s);
    /* sigma(0) = +1 */
    for (size_t i = 0; !blocks && st == PT_OK && i < n; i++) pred[i] = pt_sign_positive(s[i]);
    /* streamed: each block is a window (its rows copied, or read in the mapping), the next
     * one brought in while this one is scored */
    pt_window_pos at = {.rows = rows};
    for (size_t i0 = 0; blocks && st == PT_OK && i0 < n; i0 += rows) {
        /* rows [i0, i0 + block) as a dataset of their own (shares X, or the CSR arrays: the
         * offsets index the whole of them) */
        pt_dataset block = *ds;
        block.n = rows < n - i0 ? rows : n - i0;
        pt_window_at(ds, &at, i0);
        block.win = NULL; /* its rows are where block.X (or block.Xc) says */
        if (ds->layout == PT_LAYOUT_SPARSE) block.rowptr = ds->rowptr + i0;
        else if (ds->dtype != PT_DTYPE_F32) block.Xc = (void *)pt_compact_row(ds, i0);
        else block.X = (float *)pt_window_row(ds, &at, i0);
        block.cls = ds->cls ? ds->cls + i0 : NULL;
        block.y = ds->y ? ds->y + i0 : NULL;
        st = K > 2 ? pt_class_scores(m, &block, s) : pt_model_scores_raw(m, &block, s);
        if (st != PT_OK) break;
        for (size_t i = 0; K == 2 && i < block.n; i++) pred[i0 + i] = pt_sign_positive(s[i]);
        for (size_t i = 0; K > 2 && i < block.n; i++) {
            /* argmax; a tie goes to the lowest class index (the smallest label) */
            const float *r = s + i * K;
            size_t best = 0;
            for (size_t c = 1; c < K; c++)
                if (r[c] > r[best]) best = c;
            pred[i0 + i] = (int32_t)best;
        }
    }
    pt_window_end(ds, &at);
    pt_free(s);
    return st;
}

pt_status pt_model_set_platt(pt_model *m, double a, double b)
{
    pt_clear_error();
    if (m->nclass != 2)
        return pt_fail(PT_ERR_INVALID, "probabilities by Platt scaling are for two-class models "
                       "(this one has %zu classes)", m->nclass);
    if (!isfinite(a) || !isfinite(b))
        return pt_fail(PT_ERR_INVALID, "Platt's A and B must be finite (got %g, %g)", a, b);
    m->has_platt = 1;
    m->platt_a = a;
    m->platt_b = b;
    return PT_OK;
}

int pt_model_platt(const pt_model *m, double *a, double *b)
{
    if (!m->has_platt) return 0;
    if (a) *a = m->platt_a;
    if (b) *b = m->platt_b;
    return 1;
}

pt_status pt_model_proba(const pt_model *m, const pt_dataset *ds, double *p)
{
    pt_clear_error();
    if (!m->has_platt)
        return pt_fail(PT_ERR_UNSUPPORTED, "the model has no probabilities: train it with "
                       "probabilities (pt_platt_fit, pt_model_set_platt)");
    float *s = pt_alloc((ds->n ? ds->n : 1) * sizeof *s, "scores");
    if (!s) return PT_ERR_NOMEM;
    pt_status st = pt_model_scores(m, ds, s);
    for (size_t i = 0; st == PT_OK && i < ds->n; i++) {
        double z = m->platt_a * s[i] + m->platt_b;
        p[i] = z >= 0 ? exp(-z) / (1.0 + exp(-z)) : 1.0 / (1.0 + exp(z));
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
    size_t correct = 0;
    for (size_t c = 0; st == PT_OK && c < K; c++) correct += counts[2 * K + c];
    free(counts);
    /* a share of a distributed run: the whole data's counts, every rank taking part */
    uint64_t all[3] = {st != PT_OK, ds->n, correct};
    if (ds->shard_count) pt_dist_sum_u64(all, 3);
    if (st == PT_OK && all[0])
        return pt_fail(PT_ERR_NOMEM, "another rank failed to evaluate its share");
    if (st == PT_OK) {
        out->n = (size_t)all[1];
        out->correct = (size_t)all[2];
        out->accuracy = all[1] ? (double)all[2] / (double)all[1] : 0.0;
    }
    return st;
}
