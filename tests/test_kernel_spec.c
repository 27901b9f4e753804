/* The kernel's defaults (features/kernel_spec.c and their use by pt_train and the CLI):
 * gamma 'scale' and 'auto' as scikit-learn computes them, recorded in the model, by name in
 * the parameters and the CLI; a --cache-mb the memory budget cannot honour is refused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "features/kernel_spec.h"
#include "testutil.h"


/* A small dataset with known entries: 4 rows x 3 features, half of the entries zero. */
static pt_dataset *small(void)
{
    static const float x[] = {1, 0, 2, 0, 3, 0, 4, 0, 0, 0, -2, 6};
    static const double y[] = {1, -1, 1, -1};
    return tu_dataset(4, 3, x, y);
}

START_TEST(test_variance_and_rules)
{
    pt_dataset *ds = small(), *sp = NULL;
    /* mean 14/12, variance (sum x^2)/12 - mean^2 = 70/12 - (14/12)^2 */
    const double mean = 14.0 / 12.0, var = 70.0 / 12.0 - mean * mean;
    ck_assert_double_eq_tol(pt_dataset_variance(ds), var, 1e-12);
    ck_assert_int_eq(pt_dataset_convert(ds, PT_LAYOUT_SPARSE, 0, &sp), PT_OK);
    ck_assert_double_eq_tol(pt_dataset_variance(sp), var, 1e-12); /* the zeros counted */
    ck_assert_float_eq(pt_gamma_resolve(PT_GAMMA_SCALE, ds), (float)(1.0 / (3.0 * var)));
    ck_assert_float_eq(pt_gamma_resolve(PT_GAMMA_SCALE, sp), (float)(1.0 / (3.0 * var)));
    ck_assert_float_eq(pt_gamma_resolve(PT_GAMMA_AUTO, ds), 1.0f / 3.0f);
    ck_assert_float_eq(pt_gamma_resolve(0.25f, ds), 0.25f);
    ck_assert(pt_gamma_is_rule(PT_GAMMA_SCALE) && pt_gamma_is_rule(PT_GAMMA_AUTO));
    ck_assert(!pt_gamma_is_rule(-1.0f) && !pt_gamma_is_rule(1.0f));
    /* constant data: scikit-learn's 1 */
    static const float c[] = {2, 2, 2, 2};
    static const double y[] = {1, -1};
    pt_dataset *cd = tu_dataset(2, 2, c, y);
    ck_assert_float_eq(pt_gamma_resolve(PT_GAMMA_SCALE, cd), 1.0f);
    pt_dataset_free(cd);
    pt_dataset_free(sp);
    pt_dataset_free(ds);
}
END_TEST

/* pt_train resolves the rule on the kernel path, the model records the number (and gives the
 * same decisions as a run given that number); a negative gamma is still refused. */
START_TEST(test_model_records_gamma)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_CIRCLE;
    g.n = 300;
    g.d = 4;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    const float want = pt_gamma_resolve(PT_GAMMA_SCALE, ds);
    for (int k = 0; k < 2; k++) {
        pt_train_params p;
        pt_train_params_init(&p);
        ck_assert(p.kernel.gamma == PT_GAMMA_SCALE); /* the default */
        p.path = PT_PATH_KERNEL;
        p.kernel.kind = k ? PT_KERNEL_RBF : PT_KERNEL_POLY;
        p.kernel.degree = 3;
        pt_model *m, *m2;
        ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_OK);
        pt_train_params q;
        pt_model_get_params(m, &q);
        ck_assert_float_eq(q.kernel.gamma, want);
        p.kernel.gamma = want;
        ck_assert_int_eq(pt_train(ds, &p, &m2, NULL), PT_OK);
        double *a = malloc(ds->n * sizeof *a), *b = malloc(ds->n * sizeof *b);
        ck_assert_int_eq(pt_model_predict(m, ds, a), PT_OK);
        ck_assert_int_eq(pt_model_predict(m2, ds, b), PT_OK);
        ck_assert_mem_eq(a, b, ds->n * sizeof *a);
        free(a);
        free(b);
        pt_model_free(m);
        pt_model_free(m2);
        p.kernel.gamma = PT_GAMMA_AUTO;
        ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_OK);
        pt_model_get_params(m, &q);
        ck_assert_float_eq(q.kernel.gamma, 0.25f);
        pt_model_free(m);
        p.kernel.gamma = -1.0f;
        ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_INVALID);
        HAS(pt_last_error(), "pt_train_params.gamma must be a positive number");
    }
    pt_dataset_free(ds);
}
END_TEST

START_TEST(test_params_by_name)
{
    pt_train_params p;
    pt_train_params_init(&p);
    char buf[64];
    ck_assert_int_eq(pt_train_params_get(&p, "gamma", buf, sizeof buf), PT_OK);
    ck_assert_str_eq(buf, "scale");
    ck_assert_int_eq(pt_train_params_set(&p, "gamma", "auto"), PT_OK);
    ck_assert(p.kernel.gamma == PT_GAMMA_AUTO);
    ck_assert_int_eq(pt_train_params_get(&p, "gamma", buf, sizeof buf), PT_OK);
    ck_assert_str_eq(buf, "auto");
    ck_assert_int_eq(pt_train_params_set(&p, "gamma", "0.5"), PT_OK);
    ck_assert_float_eq(p.kernel.gamma, 0.5f);
    ck_assert_int_eq(pt_train_params_set(&p, "gamma", "wide"), PT_ERR_INVALID);
    ck_assert_float_eq(p.kernel.gamma, 0.5f);
}
END_TEST

/* A cache the budget cannot hold is an error naming both options, never a smaller cache. */
START_TEST(test_cache_above_budget_refused)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_CIRCLE;
    g.n = 4000;
    g.d = 2;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = PT_PATH_KERNEL;
    p.kernel.kind = PT_KERNEL_RBF;
    p.epochs = 2;
    p.kernel.gram_storage = PT_GRAM_ROWS;
    p.mem_budget_bytes = (size_t)8 << 20; /* 8 MiB: under the 61 MiB of 4000 rows */
    p.kernel.cache_mb = 60;
    pt_model *m = NULL;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_LIMIT);
    ck_assert_ptr_null(m);
    HAS(pt_last_error(), "raise pt_train_params.mem_budget_bytes");
    HAS(pt_last_error(), "lower pt_train_params.cache_mb");
    p.kernel.gram_storage = PT_GRAM_AUTO; /* the Gram does not fit either: the same refusal */
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_LIMIT);
    p.kernel.cache_mb = 4; /* what the budget holds: trains */
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_OK);
    pt_model_free(m);
    p.kernel.cache_mb = 0; /* the default adapts to the budget */
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_OK);
    pt_model_free(m);
    pt_dataset_free(ds);
}
END_TEST

/* The number after "KEY": in a JSON object (-1 when the key is missing). */
static double json_number(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *at = strstr(json, pat);
    return at ? strtod(at + strlen(pat), NULL) : -1.0;
}

START_TEST(test_cli)
{
    char data[512], model[512], args[1400], *out, *err;
    snprintf(data, sizeof data, "%s", tu_path("spec", ".svm")); /* tu_path's buffer is reused */
    snprintf(model, sizeof model, "%s", tu_path("spec", ".model"));
    snprintf(args, sizeof args, "gen circle -o %s --n 2000 --d 4", data);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "train %s -o %s --path kernel --kernel poly --degree 3 --json",
             data, model);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
    HAS(out, "\"kernel\": \"poly\"");
    HAS(out, "\"gamma_rule\": \"scale\"");
    HAS(out, "\"coef0\": 1");
    free(out);
    free(err);
    snprintf(args, sizeof args, "train %s -o %s --path kernel --kernel rbf --gamma auto", data,
             model);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
    HAS(out, "gamma 0.25 (auto)");
    free(out);
    free(err);
    snprintf(args, sizeof args, "train %s -o %s --path kernel --kernel rbf --gamma 0.5 --json",
             data, model);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
    HAS(out, "\"gamma\": 0.5,");
    HAS(out, "\"gamma_rule\": \"given\"");
    /* the stages: the kernel values' seconds are part of training's */
    double train_s = json_number(out, "train_seconds"), gram_s = json_number(out, "gram_seconds");
    ck_assert(gram_s > 0.0 && gram_s <= train_s);
    ck_assert(json_number(out, "evaluate_seconds") >= 0.0);
    ck_assert(json_number(out, "write_seconds") >= 0.0);
    free(out);
    free(err);
    snprintf(args, sizeof args,
             "train %s -o %s --path kernel --kernel rbf --gram rows --cache-mb 60 --mem-mb 2",
             data, model);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 2);
    HAS(err, "--cache-mb 60 asks for");
    HAS(err, "raise --mem-mb");
    free(out);
    free(err);
    unlink(model);
    unlink(data);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kernel_spec");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_variance_and_rules);
    tcase_add_test(tc, test_model_records_gamma);
    tcase_add_test(tc, test_params_by_name);
    tcase_add_test(tc, test_cache_above_budget_refused);
    tcase_add_test(tc, test_cli);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
