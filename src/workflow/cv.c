/*
 * Cross-validation (ptron train --cv K): stratified folds drawn from a seed, one training run a
 * fold, the folds in parallel (OpenMP, one thread each, so a fold's model is the one a single
 * run on its training rows gives), each fold's held-out accuracy, their mean and spread.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "workflow.h"

pt_status pt_cv_folds(const pt_dataset *ds, size_t k, uint64_t seed, int32_t *fold)
{
    pt_clear_error();
    const size_t n = pt_dataset_n(ds), K = pt_dataset_nclass(ds);
    if (k < 2 || k > n || k > INT32_MAX)
        return pt_fail(PT_ERR_INVALID, "cross-validation needs 2 to n = %zu folds (got %zu)", n, k);
    if (n > UINT32_MAX)
        return pt_fail(PT_ERR_LIMIT, "cross-validation supports up to 2^32 rows (got %zu)", n);
    uint32_t *rows = malloc((n ? n : 1) * sizeof *rows);
    size_t *start = calloc(K + 1, sizeof *start);
    if (!rows || !start) {
        free(rows);
        free(start);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the folds of %zu rows", n);
    }
    /* the rows of each class together, in row order (a counting sort) */
    for (size_t i = 0; i < n; i++) start[pt_dataset_class(ds, i) + 1]++;
    for (size_t c = 0; c < K; c++) start[c + 1] += start[c];
    size_t *next = calloc(K ? K : 1, sizeof *next);
    if (!next) {
        free(rows);
        free(start);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the folds of %zu classes", K);
    }
    for (size_t i = 0; i < n; i++) {
        size_t c = (size_t)pt_dataset_class(ds, i);
        rows[start[c] + next[c]++] = (uint32_t)i;
    }
    /* each class shuffled from the seed and dealt round the folds, each class starting where
     * the last one stopped: every fold gets floor or ceil of n_c / k rows of class c, and the
     * folds' sizes differ by at most one */
    pt_rng rng;
    pt_rng_seed(&rng, seed);
    size_t at = 0;
    for (size_t c = 0; c < K; c++) {
        size_t nc = start[c + 1] - start[c];
        pt_rng_shuffle(&rng, rows + start[c], nc);
        for (size_t j = 0; j < nc; j++) fold[rows[start[c] + j]] = (int32_t)((at + j) % k);
        at = (at + nc) % k;
    }
    free(next);
    free(rows);
    free(start);
    return PT_OK;
}

/* One fold: train on the other folds' rows, count the held-out rows predicted right. */
static pt_status run_fold(const pt_dataset *ds, const pt_train_params *p, const int32_t *fold,
                          size_t f, size_t *rows, pt_cv_fold *out)
{
    const size_t n = pt_dataset_n(ds);
    size_t ntrain = 0, ntest = 0;
    for (size_t i = 0; i < n; i++)
        if ((size_t)fold[i] != f) rows[ntrain++] = i;
    for (size_t i = 0; i < n; i++)
        if ((size_t)fold[i] == f) rows[ntrain + ntest++] = i;
    pt_dataset *train = NULL, *test = NULL;
    pt_model *m = NULL;
    pt_train_report rep = {0};
    pt_status s = pt_dataset_take(ds, rows, ntrain, &train);
    if (s == PT_OK) s = pt_dataset_take(ds, rows + ntrain, ntest, &test);
    if (s == PT_OK) s = pt_train(train, p, &m, &rep);
    pt_eval ev = {0};
    if (s == PT_OK) s = pt_model_evaluate(m, test, &ev);
    if (s == PT_OK)
        *out = (pt_cv_fold){.n_train = ntrain, .n_test = ntest, .correct = ev.correct,
                            .accuracy = ev.accuracy, .epochs_run = rep.epochs_run};
    pt_train_report_clear(&rep);
    pt_model_free(m);
    pt_dataset_free(train);
    pt_dataset_free(test);
    return s;
}

pt_status pt_cross_validate(const pt_dataset *ds, const pt_train_params *p, size_t k,
                            uint64_t seed, pt_cv_fold *folds, double *mean, double *std)
{
    pt_clear_error();
    PT_TRY(pt_train_check(ds, p));
    if (p->resume || p->init)
        return pt_fail(PT_ERR_INVALID, "cross-validation trains each fold from the start: "
                       "pt_train_params.resume and pt_train_params.init do not apply");
    const size_t n = pt_dataset_n(ds);
    int32_t *fold = malloc((n ? n : 1) * sizeof *fold);
    if (!fold) return pt_fail(PT_ERR_NOMEM, "cannot allocate the folds of %zu rows", n);
    pt_status s = pt_cv_folds(ds, k, seed, fold);
    if (s != PT_OK) {
        free(fold);
        return s;
    }
    /* the folds in parallel, each run on one thread; a lone fold (one thread) takes them all */
    int threads = pt_threads_resolve(p->threads);
    if ((size_t)threads > k) threads = (int)k;
    /* no fold's share of the memory budget below the least a run takes */
    if (threads > 1 && p->mem_budget_bytes / (size_t)threads < PT_MIN_MEM_BUDGET)
        threads = p->mem_budget_bytes / PT_MIN_MEM_BUDGET > 1
                      ? (int)(p->mem_budget_bytes / PT_MIN_MEM_BUDGET) : 1;
    pt_train_params q = *p;
    q.threads = threads > 1 ? 1 : p->threads;
    if (threads > 1) {
        /* the folds at once share the memory budgets a single run would have */
        q.mem_budget_bytes = p->mem_budget_bytes / (size_t)threads;
        size_t cache = p->kernel.cache_mb ? p->kernel.cache_mb : pt_default_mem_budget() >> 20;
        q.kernel.cache_mb = cache / (size_t)threads ? cache / (size_t)threads : 1;
    }
    q.progress = NULL;
    q.progress_user = NULL;
    q.epoch_hook = NULL;
    q.epoch_user = NULL;
    pt_status *st = calloc(k, sizeof *st);
    char(*msg)[512] = calloc(k, sizeof *msg);
    if (!st || !msg) {
        free(fold);
        free(st);
        free(msg);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the results of %zu folds", k);
    }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
    for (long f = 0; f < (long)k; f++) {
        size_t *rows = malloc((n ? n : 1) * sizeof *rows);
        st[f] = rows ? run_fold(ds, &q, fold, (size_t)f, rows, &folds[f]) : PT_ERR_NOMEM;
        /* the message is the worker thread's: carried over to the caller's below */
        if (st[f] != PT_OK)
            snprintf(msg[f], sizeof msg[f], "%s", rows ? pt_last_error() : "out of memory");
        free(rows);
    }
    s = PT_OK;
    for (size_t f = 0; f < k && s == PT_OK; f++)
        if (st[f] != PT_OK) s = pt_fail(st[f], "cross-validation, fold %zu of %zu: %s", f + 1, k,
                                        msg[f]);
    if (s == PT_OK) s = pt_dataset_intact(ds); /* (the folds were copied from its rows) */
    if (s == PT_OK) {
        double sum = 0.0, sq = 0.0;
        for (size_t f = 0; f < k; f++) sum += folds[f].accuracy;
        *mean = sum / (double)k;
        for (size_t f = 0; f < k; f++) {
            double e = folds[f].accuracy - *mean;
            sq += e * e;
        }
        *std = sqrt(sq / (double)(k - 1));
    }
    free(fold);
    free(st);
    free(msg);
    return s;
}
