/* The kernel path's support vector budget (paths/kernel_budget.c, pt_train_params.budget):
 * at most N support vectors kept, binary and one-vs-rest, on both storages; a budget >= n is
 * the unbudgeted run bit for bit; the victim drawn uniformly; a resumed budgeted run is the
 * uninterrupted one; the averaged variant and other paths refused; the budget in the model
 * file and the CLI. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "model/model.h"
#include "paths/kernel_budget.h"
#include "testutil.h"


static pt_dataset *gen(pt_gen_kind kind, size_t n, size_t d)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = kind;
    g.n = n;
    g.d = d;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    return ds;
}

static void kernel_params(pt_train_params *p, pt_variant v, pt_gram_storage g, size_t budget)
{
    pt_train_params_init(p);
    p->path = PT_PATH_KERNEL;
    p->kernel.kind = PT_KERNEL_RBF;
    p->variant = v;
    p->kernel.gram_storage = g;
    p->kernel.budget = budget;
    p->epochs = 5;
    p->shuffle = 1;
}

/* Two models with the same support vectors and coefficients, bit for bit. */
static void assert_same_kernel_model(const pt_model *a, const pt_model *b)
{
    ck_assert_uint_eq(a->n_sv, b->n_sv);
    ck_assert_mem_eq(a->coef, b->coef, a->n_sv * sizeof(float));
    ck_assert_mem_eq(a->sv, b->sv, a->n_sv * pt_stride_for(a->d) * sizeof(float));
}

START_TEST(test_at_most_budget)
{
    pt_dataset *ds = gen(PT_GEN_CIRCLE, 600, 2), *blobs = gen(PT_GEN_BLOBS, 600, 4);
    const size_t budgets[] = {1, 7, 40};
    for (int g = 1; g <= 2; g++) /* full Gram, rows on demand */
        for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++) {
            pt_train_params p;
            kernel_params(&p, PT_VARIANT_CLASSIC, (pt_gram_storage)g, budgets[b]);
            pt_model *m;
            pt_train_report r;
            ck_assert_int_eq(pt_train(ds, &p, &m, &r), PT_OK);
            ck_assert_msg(m->n_sv <= budgets[b] && m->n_sv > 0, "%zu support vectors",
                          m->n_sv);
            /* more mistakes than the budget were made: vectors were removed */
            ck_assert_uint_gt(r.updates, budgets[b]);
            pt_train_report_clear(&r);
            pt_model_free(m);
            ck_assert_int_eq(pt_train(blobs, &p, &m, NULL), PT_OK); /* one-vs-rest */
            ck_assert_uint_eq(m->nclass, 3);
            for (size_t c = 0; c < m->nclass; c++)
                ck_assert_msg(m->sub[c]->n_sv <= budgets[b], "class %zu: %zu vectors", c,
                              m->sub[c]->n_sv);
            pt_model_free(m);
        }
    /* sparse rows (CSR): the same budget */
    pt_dataset *sp;
    ck_assert_int_eq(pt_dataset_convert(ds, PT_LAYOUT_SPARSE, 0, &sp), PT_OK);
    pt_train_params p;
    kernel_params(&p, PT_VARIANT_CLASSIC, PT_GRAM_AUTO, 9);
    pt_model *m;
    ck_assert_int_eq(pt_train(sp, &p, &m, NULL), PT_OK);
    ck_assert(m->n_sv <= 9 && m->n_sv > 0);
    pt_model_free(m);
    pt_dataset_free(sp);
    pt_dataset_free(blobs);
    pt_dataset_free(ds);
}
END_TEST

START_TEST(test_large_budget_is_unbudgeted)
{
    pt_dataset *ds = gen(PT_GEN_CIRCLE, 500, 2), *blobs = gen(PT_GEN_BLOBS, 300, 4);
    for (int g = 1; g <= 2; g++) {
        pt_train_params p, q;
        kernel_params(&p, PT_VARIANT_CLASSIC, (pt_gram_storage)g, 0);
        q = p;
        q.kernel.budget = ds->n;
        pt_model *a, *b;
        ck_assert_int_eq(pt_train(ds, &p, &a, NULL), PT_OK);
        ck_assert_int_eq(pt_train(ds, &q, &b, NULL), PT_OK);
        assert_same_kernel_model(a, b);
        pt_model_free(a);
        pt_model_free(b);
        q.kernel.budget = blobs->n + 5;
        ck_assert_int_eq(pt_train(blobs, &p, &a, NULL), PT_OK);
        ck_assert_int_eq(pt_train(blobs, &q, &b, NULL), PT_OK);
        for (size_t c = 0; c < 3; c++) assert_same_kernel_model(a->sub[c], b->sub[c]);
        pt_model_free(a);
        pt_model_free(b);
    }
    pt_dataset_free(blobs);
    pt_dataset_free(ds);
}
END_TEST

/* The victim is the r-th support vector, r uniform: every one drawn about equally often. */
START_TEST(test_victim_uniform)
{
    enum { N = 50, DRAWS = 50000 };
    uint32_t alpha[N] = {0};
    size_t count[N] = {0}, nsv = 0;
    for (size_t j = 0; j < N; j += 2) alpha[j] = 1 + (uint32_t)j, nsv++;
    for (uint64_t t = 0; t < DRAWS; t++) {
        size_t j = pt_budget_victim(alpha, N, nsv, 7, t);
        ck_assert_uint_lt(j, N);
        ck_assert(alpha[j] != 0);
        count[j]++;
    }
    for (size_t j = 0; j < N; j += 2) /* 2000 expected; 5 sigma is about 220 */
        ck_assert_msg(count[j] > 1750 && count[j] < 2250, "vector %zu drawn %zu times", j,
                      count[j]);
    /* the same seed and visit: the same draw */
    ck_assert_uint_eq(pt_budget_victim(alpha, N, nsv, 7, 123),
                      pt_budget_victim(alpha, N, nsv, 7, 123));
}
END_TEST

static int stop_after(const pt_model *m, int epoch, size_t mistakes, void *user)
{
    (void)m;
    (void)mistakes;
    pt_model **keep = user;
    if (epoch == 2) *keep = pt_model_clone(m);
    return 0;
}

/* A budgeted run resumed from its epoch-2 snapshot ends where the uninterrupted run does. */
START_TEST(test_resume_same)
{
    pt_dataset *ds = gen(PT_GEN_CIRCLE, 400, 2);
    pt_train_params p;
    kernel_params(&p, PT_VARIANT_CLASSIC, PT_GRAM_ROWS, 12);
    pt_model *snap = NULL, *full, *resumed;
    p.epoch_hook = stop_after;
    p.epoch_user = &snap;
    ck_assert_int_eq(pt_train(ds, &p, &full, NULL), PT_OK);
    ck_assert_ptr_nonnull(snap);
    pt_train_params q;
    pt_train_params_init(&q);
    pt_model_get_params(snap, &q);
    ck_assert_uint_eq(q.kernel.budget, 12);
    q.resume = snap;
    ck_assert_int_eq(pt_train(ds, &q, &resumed, NULL), PT_OK);
    assert_same_kernel_model(full, resumed);
    q.kernel.budget = 13; /* another budget is another run */
    pt_model *other = NULL;
    ck_assert_int_eq(pt_train(ds, &q, &other, NULL), PT_ERR_INVALID);
    HAS(pt_last_error(), "another budget");
    pt_model_free(resumed);
    pt_model_free(full);
    pt_model_free(snap);
    pt_dataset_free(ds);
}
END_TEST

/* m through its file's bytes (as a checkpoint or an interrupted run is written and read). */
static pt_model *through_file(const pt_model *m)
{
    void *buf;
    size_t len;
    ck_assert_int_eq(pt_model_save_buffer(m, &buf, &len), PT_OK);
    pt_model *back = NULL;
    pt_status s = pt_model_load_buffer(buf, len, "snapshot.model", &back);
    ck_assert_msg(s == PT_OK, "%s", pt_last_error());
    pt_buffer_free(buf);
    return back;
}

/* The text of m's file with the first alpha value that is v replaced by w (same width), and
 * its checksum made right again: only the loader's checks of the run state can refuse it. */
static char *edited_alpha(const pt_model *m, char v, char w, size_t *len)
{
    void *buf;
    ck_assert_int_eq(pt_model_save_buffer(m, &buf, len), PT_OK);
    char *t = malloc(*len + 1);
    memcpy(t, buf, *len);
    t[*len] = '\0';
    pt_buffer_free(buf);
    char *a = memmem(t, *len, "\nalpha ", 7); /* past the binary section's NUL bytes */
    ck_assert_ptr_nonnull(a);
    char pat[4] = {' ', v, ' ', 0}, *at = strstr(a, pat);
    ck_assert_ptr_nonnull(at);
    at[1] = w;
    char *sum = strstr(a, "\nchecksum ") + 1;
    snprintf(sum, 27, "checksum %016llx\n",
             (unsigned long long)pt_checksum(t, (size_t)(sum - t)));
    return t;
}

/* A budgeted run's snapshots after the budget removed support vectors (fewer alphas than
 * updates) are written and read back, binary and one-vs-rest, and resume from the file to the
 * uninterrupted run's model; a state whose alphas the budget cannot have left is refused. */
START_TEST(test_snapshot_file_resumes)
{
    pt_dataset *sets[2] = {gen(PT_GEN_CIRCLE, 400, 2), gen(PT_GEN_BLOBS, 300, 4)};
    for (int k = 0; k < 2; k++) {
        pt_train_params p;
        kernel_params(&p, PT_VARIANT_CLASSIC, PT_GRAM_ROWS, 12);
        pt_model *snap = NULL, *full, *resumed;
        p.epoch_hook = stop_after;
        p.epoch_user = &snap;
        ck_assert_int_eq(pt_train(sets[k], &p, &full, NULL), PT_OK);
        ck_assert_ptr_nonnull(snap);
        pt_model *back = through_file(snap);
        pt_train_params q;
        pt_train_params_init(&q);
        pt_model_get_params(back, &q);
        q.resume = back;
        ck_assert_int_eq(pt_train(sets[k], &q, &resumed, NULL), PT_OK);
        if (k == 0) assert_same_kernel_model(full, resumed);
        else
            for (size_t c = 0; c < 3; c++) assert_same_kernel_model(full->sub[c], resumed->sub[c]);
        void *a, *b;
        size_t la, lb;
        ck_assert_int_eq(pt_model_save_buffer(full, &a, &la), PT_OK);
        ck_assert_int_eq(pt_model_save_buffer(resumed, &b, &lb), PT_OK);
        ck_assert(la == lb && memcmp(a, b, la) == 0);
        pt_buffer_free(a);
        pt_buffer_free(b);
        pt_model_free(resumed);
        pt_model_free(back);
        pt_model_free(full);
        if (k == 0) {
            /* the budget did remove vectors by epoch 2: 12 vectors, more updates */
            ck_assert_uint_eq(snap->n_sv, 12);
            ck_assert_uint_gt(snap->states[0]->updates, 12);
            size_t len;
            char *t = edited_alpha(snap, '1', '0', &len); /* 11 vectors kept: never */
            ck_assert_int_eq(pt_model_load_buffer(t, len, "bad.model", &back), PT_ERR_PARSE);
            HAS(pt_last_error(), "only 11 support vectors");
            free(t);
            t = edited_alpha(snap, '0', '1', &len); /* 13 vectors: over the budget */
            ck_assert_int_eq(pt_model_load_buffer(t, len, "bad.model", &back), PT_ERR_PARSE);
            HAS(pt_last_error(), "13 support vectors, over the budget of 12");
            free(t);
        }
        pt_model_free(snap);
        pt_dataset_free(sets[k]);
    }
}
END_TEST

START_TEST(test_refusals_and_file)
{
    pt_dataset *ds = gen(PT_GEN_CIRCLE, 300, 2);
    pt_train_params p;
    pt_train_params_init(&p);
    p.kernel.budget = 10; /* the online path has no support vectors */
    pt_model *m = NULL;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_INVALID);
    HAS(pt_last_error(), "pt_train_params.budget");
    kernel_params(&p, PT_VARIANT_AVERAGED, PT_GRAM_AUTO, 10);
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_INVALID);
    HAS(pt_last_error(), "has no budgeted form");
    kernel_params(&p, PT_VARIANT_CLASSIC, PT_GRAM_AUTO, 10);
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_OK);
    void *buf;
    size_t len;
    ck_assert_int_eq(pt_model_save_buffer(m, &buf, &len), PT_OK);
    ck_assert(memmem(buf, len, "\nbudget 10\n", 11) != NULL);
    pt_model *back;
    ck_assert_int_eq(pt_model_load_buffer(buf, len, "budget.model", &back), PT_OK);
    pt_train_params q;
    pt_model_get_params(back, &q);
    ck_assert_uint_eq(q.kernel.budget, 10);
    assert_same_kernel_model(m, back);
    pt_buffer_free(buf);
    pt_model_free(back);
    pt_model_free(m);
    pt_dataset_free(ds);
}
END_TEST

START_TEST(test_cli)
{
    char data[512], model[512], args[1400], *out, *err;
    snprintf(data, sizeof data, "%s", tu_path("budget", ".svm"));
    snprintf(model, sizeof model, "%s", tu_path("budget", ".model"));
    snprintf(args, sizeof args, "gen circle -o %s --n 1000", data);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "train %s -o %s --path kernel --kernel rbf --budget 30 --json",
             data, model);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
    HAS(out, "\"budget\": 30,");
    char *sv = strstr(out, "\"support_vectors\": ");
    ck_assert_ptr_nonnull(sv);
    ck_assert_int_le(atoi(sv + 19), 30);
    free(out);
    free(err);
    snprintf(args, sizeof args, "train %s -o %s --budget 30", data, model);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 1);
    HAS(err, "--budget (support vectors) applies to the kernel path (--path kernel)");
    free(out);
    free(err);
    unlink(model);
    unlink(data);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kernel_budget");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_at_most_budget);
    tcase_add_test(tc, test_large_budget_is_unbudgeted);
    tcase_add_test(tc, test_victim_uniform);
    tcase_add_test(tc, test_resume_same);
    tcase_add_test(tc, test_snapshot_file_resumes);
    tcase_add_test(tc, test_refusals_and_file);
    tcase_add_test(tc, test_cli);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
