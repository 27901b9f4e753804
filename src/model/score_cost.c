/* layers: reads rows by form until ported to data/rows.h */
/*
 * What scoring costs: the multiply-adds of a model's dot products over a dataset's rows, and
 * the log line that says so before a voted model's vote, whose cost grows with every update
 * of its training (one stored vector each) where other models' does not.
 */
#include "model.h"

/* Vectors that take a dot with each row: the weight vectors, the voted perceptron's stored
 * vectors, or the support vectors (a kernel value costs about a dot). */
static double vectors_of(const pt_model *m)
{
    if (m->sub) { /* one-vs-rest with a binary model per class (voted, kernel) */
        double v = 0.0;
        for (size_t c = 0; c < m->nclass; c++) v += vectors_of(m->sub[c]);
        return v;
    }
    if (m->n_votes) return (double)m->n_votes;
    if (m->W) return (double)m->nclass;
    if (m->w) return 1.0;
    return (double)m->n_sv;
}

/* The voted vectors of m (every class's for one-vs-rest): 0 for any other model. */
static size_t votes_of(const pt_model *m)
{
    size_t v = m->n_votes;
    for (size_t c = 0; m->sub && m->W && c < m->nclass; c++) v += m->sub[c]->n_votes;
    return v;
}

/* Multiply-adds of one vector's dot with every row: the features a dense row's dot covers
 * (the model's, at most the data's, unless the rows are expanded to the model's first), or
 * the sparse rows' non-zeros. */
static double rows_cost(const pt_model *m, const pt_dataset *ds)
{
    if (ds->layout == PT_LAYOUT_SPARSE) return (double)ds->nnz;
    size_t d = m->params.expand.kind != PT_EXPAND_NONE || m->d < ds->d ? m->d : ds->d;
    return (double)ds->n * (double)d;
}

double pt_model_score_cost(const pt_model *m, const pt_dataset *ds)
{
    return vectors_of(m) * rows_cost(m, ds);
}

void pt_vote_cost_log(const pt_model *m, const pt_dataset *ds)
{
    const size_t nv = votes_of(m);
    if (!nv || !ds->n) return;
    const double cost = pt_model_score_cost(m, ds);
    char terms[128];
    if (ds->layout == PT_LAYOUT_SPARSE)
        snprintf(terms, sizeof terms, "%zu vectors x %zu non-zeros", nv, ds->nnz);
    else
        snprintf(terms, sizeof terms, "%zu vectors x %zu rows x %.0f features", nv, ds->n,
                 rows_cost(m, ds) / (double)ds->n);
    const size_t linear = m->W ? m->nclass : 1;
    pt_log(cost >= PT_SCORE_COST_WARN ? PT_LOG_WARN : PT_LOG_INFO,
           "scoring %zu rows by the vote of %zu vectors costs %.3g multiply-adds (%s), %.3g "
           "times a linear model's; pt_train_params.voted_max_vectors caps the vectors",
           ds->n, nv, cost, terms, (double)nv / (double)linear);
}
