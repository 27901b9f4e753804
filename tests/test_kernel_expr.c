/* Kernel expressions (features/kernel_expr.c, PT_KERNEL_EXPR): the closure rules of kernels
 * (docs/theory.md) enforced with reasons, the canonical text, every form against a direct
 * evaluation (and the Gram built from them), the identities K + K = 2K = K in mistakes,
 * linear * linear = poly(degree=2,gamma=1,coef0=0) and normalize(rbf) = rbf, the model file
 * and the CLI. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "features/gram.h"
#include "features/kernel_expr.h"
#include "features/kernel_spec.h"
#include "model/model.h"
#include "testutil.h"


static void refused(const char *text, const char *why)
{
    pt_kexpr e;
    ck_assert_msg(pt_kexpr_parse(text, &e) == PT_ERR_INVALID, "'%s' accepted", text);
    HAS(pt_last_error(), why);
}

START_TEST(test_parse_and_refusals)
{
    pt_kexpr e;
    char buf[256];
    const char *canon[][2] = {
        {"linear", "linear"},
        {" 2 * rbf ( gamma = 0.5 ) ", "2*rbf(gamma=0.5)"},
        {"rbf", "rbf(gamma=scale)"},
        {"poly", "poly(degree=2,gamma=scale,coef0=1)"},
        {"poly(degree=3, coef0=0, gamma=auto)", "poly(degree=3,gamma=auto,coef0=0)"},
        {"geometric(degree=4)", "geometric(degree=4,gamma=1)"},
        {"(linear+1)*rbf(gamma=2)", "(linear+1)*rbf(gamma=2)"},
        {"normalize(poly(degree=2,gamma=1,coef0=1)+linear)",
         "normalize(poly(degree=2,gamma=1,coef0=1)+linear)"},
        {"linear()*rbf(gamma=0.25)*3", "linear*rbf(gamma=0.25)*3"},
    };
    for (size_t i = 0; i < sizeof canon / sizeof canon[0]; i++) {
        ck_assert_msg(pt_kexpr_parse(canon[i][0], &e) == PT_OK, "%s: %s", canon[i][0],
                      pt_last_error());
        ck_assert_int_eq(pt_kexpr_format(&e, buf, sizeof buf), PT_OK);
        ck_assert_str_eq(buf, canon[i][1]);
        pt_kexpr f; /* the canonical text parses back to the same kernel */
        ck_assert_int_eq(pt_kexpr_parse(buf, &f), PT_OK);
        ck_assert(pt_kexpr_same(&e, &f));
    }
    refused("poly(coef0=-1)", "kernel only for coef0 >= 0");
    refused("-2*rbf", "a negative constant or factor is not a kernel");
    refused("rbf*-1", "a negative constant or factor is not a kernel");
    refused("rbf-linear", "K1 - K2 is not a kernel in general");
    refused("rbf/linear", "K1 / K2 is not a kernel in general");
    refused("0*rbf", "a zero constant or factor");
    refused("sigmoid", "unknown kernel 'sigmoid': a name (linear, poly, rbf) or an expression");
    refused("rbf(gamma=0)", "gamma must be > 0");
    refused("rbf(gamma=-1)", "gamma must be > 0");
    refused("poly(degree=33)", "degree must be in 1..32");
    refused("poly(degree=2.5)", "degree must be in 1..32");
    refused("rbf(degree=2)", "no such argument of rbf");
    refused("normalize(rbf", "expected ')'");
    refused("rbf linear", "unexpected text after the kernel");
    refused("", "expected a kernel");
    char big[400] = "linear";
    for (int i = 0; i < 30; i++) strcat(big, "+linear");
    refused(big, "more than 48 terms and operators");
    /* 3^7 evaluations of rbf for one value: refused before it could stall a prediction */
    refused("normalize(normalize(normalize(normalize(normalize(normalize(normalize(rbf)))))))",
            "more than 1024 base kernels to evaluate for one value");
    ck_assert_int_eq(pt_kexpr_parse("normalize(normalize(rbf))", &e), PT_OK);
}
END_TEST

/* Direct evaluation (double) of the expressions below at x, z. */
static double direct(int which, const double *x, const double *z, size_t d)
{
    double dot = 0, xx = 0, zz = 0, dist = 0;
    for (size_t k = 0; k < d; k++) {
        dot += x[k] * z[k];
        xx += x[k] * x[k];
        zz += z[k] * z[k];
        dist += (x[k] - z[k]) * (x[k] - z[k]);
    }
    switch (which) {
    case 0: return 2 * exp(-0.5 * dist) + pow(0.25 * dot + 1, 3) * dot;
    case 1: return pow(dot + 1, 2) / sqrt(pow(xx + 1, 2) * pow(zz + 1, 2));
    case 2: {
        double t = 0.5 * dot, s = 0;
        for (int k = 0; k <= 4; k++) s += pow(t, k);
        return s;
    }
    case 3: return (dot + 1.5) * exp(-2 * dist);
    default: {
        double k = exp(-0.375 * dist) + dot * dot, kx = 1 + xx * xx, kz = 1 + zz * zz;
        return k / sqrt(kx * kz);
    }
    }
}

static const char *const exprs[] = {
    "2*rbf(gamma=0.5)+poly(degree=3,gamma=0.25,coef0=1)*linear",
    "normalize(poly(degree=2,gamma=1,coef0=1))",
    "geometric(degree=4,gamma=0.5)",
    "(linear+1.5)*rbf(gamma=2)",
    "normalize(rbf(gamma=0.375)+linear*linear)",
};

START_TEST(test_against_direct)
{
    enum { N = 40, D = 5 };
    float X[N * 16];
    double xd[N][D];
    unsigned s = 12345;
    for (size_t i = 0; i < N; i++)
        for (size_t k = 0; k < 16; k++) {
            s = s * 1103515245u + 12345u;
            float v = k < D ? (float)((s >> 8) % 2001) / 1000.0f - 1.0f : 0.0f;
            X[i * 16 + k] = v;
            if (k < D) xd[i][k] = v;
        }
    const pt_kernels *kt;
    ck_assert_int_eq(pt_kernels_get(PT_ISA_AUTO, &kt), PT_OK);
    for (size_t w = 0; w < sizeof exprs / sizeof exprs[0]; w++) {
        pt_train_params p;
        pt_train_params_init(&p);
        p.kernel.kind = PT_KERNEL_EXPR;
        p.bias = 0;
        snprintf(p.kernel.expr, sizeof p.kernel.expr, "%s", exprs[w]);
        ck_assert_int_eq(pt_train_params_check(&p), PT_OK);
        pt_kfun kf;
        pt_kfun_from_params(&kf, &p);
        /* the evaluator from exact inputs */
        for (size_t i = 0; i < N; i++)
            for (size_t j = 0; j < N; j++) {
                double dot = 0, xx = 0, zz = 0;
                for (size_t k = 0; k < D; k++) {
                    dot += xd[i][k] * xd[j][k];
                    xx += xd[i][k] * xd[i][k];
                    zz += xd[j][k] * xd[j][k];
                }
                double want = direct((int)w, xd[i], xd[j], D);
                ck_assert_msg(fabs(pt_kexpr_eval(&kf.expr, dot, xx, zz) - want) <=
                                  1e-12 * (1 + fabs(want)),
                              "%s at (%zu, %zu)", exprs[w], i, j);
            }
        /* the Gram from float32 inner products, and kernel rows: the same values, close to
         * the direct ones */
        pt_gram_rows r;
        ck_assert_int_eq(pt_gram_rows_init(&r, X, N, D, 16, D, PT_KERNEL_EXPR, kt, 1), PT_OK);
        float *G = pt_alloc(N * 48 * sizeof(float), "test Gram"), row[48];
        ck_assert_int_eq(pt_gram_full(&r, &kf, kt, G, 48, 2), PT_OK);
        for (size_t i = 0; i < N; i++) {
            pt_gram_row(&r, &kf, kt, i, row, 0.0f, NULL, 1);
            ck_assert_mem_eq(row, G + i * 48, N * sizeof(float));
            for (size_t j = 0; j < N; j++) {
                double want = direct((int)w, xd[i], xd[j], D);
                ck_assert_msg(fabs(G[i * 48 + j] - want) <= 1e-5 * (1 + fabs(want)),
                              "%s Gram (%zu, %zu): %g, want %g", exprs[w], i, j,
                              (double)G[i * 48 + j], want);
                ck_assert_float_eq(G[i * 48 + j], G[j * 48 + i]);
            }
        }
        pt_free(G);
        pt_gram_rows_free(&r);
    }
}
END_TEST

/* A kernel run: mistakes per epoch and the model. */
typedef struct run {
    size_t mistakes[20], updates;
    int epochs;
    pt_model *m;
} run;

static run train_expr(const pt_dataset *ds, const char *expr, pt_gram_storage g, int bias)
{
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = PT_PATH_KERNEL;
    p.kernel.kind = PT_KERNEL_EXPR;
    p.bias = bias;
    p.epochs = 8;
    p.kernel.gram_storage = g;
    snprintf(p.kernel.expr, sizeof p.kernel.expr, "%s", expr);
    run out = {0};
    pt_train_report r;
    ck_assert_msg(pt_train(ds, &p, &out.m, &r) == PT_OK, "%s: %s", expr, pt_last_error());
    out.epochs = r.epochs_run;
    out.updates = r.updates;
    for (int e = 0; e < r.epochs_run && e < 20; e++) out.mistakes[e] = r.mistakes_per_epoch[e];
    pt_train_report_clear(&r);
    return out;
}

static void same_mistakes(const run *a, const run *b, const char *what)
{
    ck_assert_msg(a->epochs == b->epochs && a->updates == b->updates &&
                      memcmp(a->mistakes, b->mistakes, sizeof a->mistakes) == 0,
                  "%s: %zu against %zu updates", what, a->updates, b->updates);
}

START_TEST(test_identities)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_CIRCLE;
    g.n = 500;
    g.d = 3;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    for (int st = 1; st <= 2; st++) { /* full Gram, rows on demand */
        pt_gram_storage gs = (pt_gram_storage)st;
        /* K + K and 2K make the mistakes of K (no bias: K + 1 is not a multiple of K) */
        run k = train_expr(ds, "rbf(gamma=0.7)", gs, 0);
        run kk = train_expr(ds, "rbf(gamma=0.7)+rbf(gamma=0.7)", gs, 0);
        run k2 = train_expr(ds, "2*rbf(gamma=0.7)", gs, 0);
        ck_assert_uint_gt(k.updates, 0);
        same_mistakes(&k, &kk, "K + K");
        same_mistakes(&k, &k2, "2K");
        ck_assert_mem_eq(kk.m->coef, k2.m->coef, kk.m->n_sv * sizeof(float));
        /* linear * linear is poly(degree=2,gamma=1,coef0=0) bit for bit; normalize(rbf) rbf */
        const char *pairs[][2] = {{"linear*linear", "poly(degree=2,gamma=1,coef0=0)"},
                                  {"normalize(rbf(gamma=0.7))", "rbf(gamma=0.7)"}};
        for (int q = 0; q < 2; q++)
            for (int bias = 0; bias < 2; bias++) {
                run a = train_expr(ds, pairs[q][0], gs, bias);
                run b = train_expr(ds, pairs[q][1], gs, bias);
                same_mistakes(&a, &b, pairs[q][0]);
                ck_assert_uint_eq(a.m->n_sv, b.m->n_sv);
                ck_assert_mem_eq(a.m->coef, b.m->coef, a.m->n_sv * sizeof(float));
                double *pa = malloc(ds->n * sizeof *pa), *pb = malloc(ds->n * sizeof *pb);
                ck_assert_int_eq(pt_model_predict(a.m, ds, pa), PT_OK);
                ck_assert_int_eq(pt_model_predict(b.m, ds, pb), PT_OK);
                ck_assert_mem_eq(pa, pb, ds->n * sizeof *pa);
                free(pa);
                free(pb);
                pt_model_free(a.m);
                pt_model_free(b.m);
            }
        pt_model_free(k.m);
        pt_model_free(kk.m);
        pt_model_free(k2.m);
    }
    /* rows on demand and the full Gram: the same model */
    run f = train_expr(ds, exprs[0], PT_GRAM_FULL, 1);
    run r = train_expr(ds, exprs[0], PT_GRAM_ROWS, 1);
    same_mistakes(&f, &r, "full against rows");
    ck_assert_mem_eq(f.m->coef, r.m->coef, f.m->n_sv * sizeof(float));
    pt_model_free(f.m);
    pt_model_free(r.m);
    pt_dataset_free(ds);
}
END_TEST

/* Sparse rows (CSR) evaluate the expression too: the same mistakes as their dense copy, on
 * both storages, and predictions that agree; two different expressions differ. */
START_TEST(test_sparse_rows)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_CIRCLE;
    g.n = 400;
    g.d = 3;
    pt_dataset *ds, *sp;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    ck_assert_int_eq(pt_dataset_convert(ds, PT_LAYOUT_SPARSE, 0, &sp), PT_OK);
    const char *list[] = {"normalize(poly(degree=2,gamma=1,coef0=1))", "2*rbf(gamma=0.7)+linear",
                          "rbf(gamma=0.5)*poly(degree=2,gamma=1,coef0=1)"};
    size_t first_updates = 0;
    for (size_t q = 0; q < sizeof list / sizeof list[0]; q++)
        for (int st = 1; st <= 2; st++) {
            run a = train_expr(ds, list[q], (pt_gram_storage)st, 1);
            run b = train_expr(sp, list[q], (pt_gram_storage)st, 1);
            same_mistakes(&a, &b, list[q]);
            if (q == 0) first_updates = a.updates;
            else ck_assert_uint_ne(a.updates, first_updates); /* not one kernel for all */
            double *pa = malloc(ds->n * sizeof *pa), *pb = malloc(ds->n * sizeof *pb);
            ck_assert_int_eq(pt_model_predict(a.m, ds, pa), PT_OK);
            ck_assert_int_eq(pt_model_predict(b.m, sp, pb), PT_OK);
            size_t agree = 0;
            for (size_t i = 0; i < ds->n; i++) agree += pa[i] == pb[i];
            ck_assert_msg(agree >= ds->n - 2, "%s: %zu of %zu predictions agree", list[q], agree,
                          ds->n);
            free(pa);
            free(pb);
            pt_model_free(a.m);
            pt_model_free(b.m);
        }
    pt_dataset_free(sp);
    pt_dataset_free(ds);
}
END_TEST

/* The model records the expression with gamma resolved; the file round-trips; predictions
 * evaluate the expression; multiclass one-vs-rest too. */
START_TEST(test_model_file)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_BLOBS;
    g.n = 300;
    g.d = 3;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    run a = train_expr(ds, "normalize(rbf + 0.5*linear)", PT_GRAM_AUTO, 1);
    pt_train_params q;
    pt_model_get_params(a.m, &q);
    ck_assert_int_eq(q.kernel.kind, PT_KERNEL_EXPR);
    char want[256];
    snprintf(want, sizeof want, "normalize(rbf(gamma=%.9g)+0.5*linear)",
             (double)pt_gamma_resolve(PT_GAMMA_SCALE, ds));
    ck_assert_str_eq(q.kernel.expr, want);
    void *buf;
    size_t len;
    ck_assert_int_eq(pt_model_save_buffer(a.m, &buf, &len), PT_OK);
    pt_model *back;
    ck_assert_int_eq(pt_model_load_buffer(buf, len, "expr.model", &back), PT_OK);
    pt_buffer_free(buf);
    size_t n = ds->n;
    double *pa = malloc(n * sizeof *pa), *pb = malloc(n * sizeof *pb);
    ck_assert_int_eq(pt_model_predict(a.m, ds, pa), PT_OK);
    ck_assert_int_eq(pt_model_predict(back, ds, pb), PT_OK);
    ck_assert_mem_eq(pa, pb, n * sizeof *pa);
    pt_eval ev;
    ck_assert_int_eq(pt_model_evaluate(back, ds, &ev), PT_OK);
    ck_assert(ev.accuracy > 0.9);
    free(pa);
    free(pb);
    pt_model_free(back);
    pt_model_free(a.m);
    pt_dataset_free(ds);
}
END_TEST

static int keep_epoch_2(const pt_model *m, int epoch, size_t mistakes, void *user)
{
    (void)mistakes;
    if (epoch == 2) *(pt_model **)user = pt_model_clone(m);
    return 0;
}

/* A run resumed from its epoch-2 snapshot (the expression recorded with gamma resolved) ends
 * where the uninterrupted run does. */
START_TEST(test_resume)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_CIRCLE;
    g.n = 300;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = PT_PATH_KERNEL;
    p.kernel.kind = PT_KERNEL_EXPR;
    p.epochs = 6;
    p.shuffle = 1;
    snprintf(p.kernel.expr, sizeof p.kernel.expr, "rbf*geometric(degree=2)+0.5");
    pt_model *snap = NULL, *full, *resumed;
    p.epoch_hook = keep_epoch_2;
    p.epoch_user = &snap;
    ck_assert_int_eq(pt_train(ds, &p, &full, NULL), PT_OK);
    ck_assert_ptr_nonnull(snap);
    pt_train_params q;
    pt_train_params_init(&q);
    pt_model_get_params(snap, &q);
    q.resume = snap;
    ck_assert_int_eq(pt_train(ds, &q, &resumed, NULL), PT_OK);
    ck_assert_uint_eq(full->n_sv, resumed->n_sv);
    ck_assert_mem_eq(full->coef, resumed->coef, full->n_sv * sizeof(float));
    snprintf(q.kernel.expr, sizeof q.kernel.expr, "rbf*geometric(degree=3)+0.5");
    pt_model *other = NULL;
    ck_assert_int_eq(pt_train(ds, &q, &other, NULL), PT_ERR_INVALID);
    HAS(pt_last_error(), "another kernel expression");
    pt_model_free(resumed);
    pt_model_free(full);
    pt_model_free(snap);
    pt_dataset_free(ds);
}
END_TEST

START_TEST(test_cli)
{
    char data[512], model[512], args[1400], *out, *err;
    snprintf(data, sizeof data, "%s", tu_path("expr", ".svm"));
    snprintf(model, sizeof model, "%s", tu_path("expr", ".model"));
    snprintf(args, sizeof args, "gen circle -o %s --n 600", data);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args,
             "train %s -o %s --path kernel --kernel '2*rbf(gamma=1)+geometric(degree=3)' --json",
             data, model);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
    HAS(out, "\"kernel\": \"expr\"");
    HAS(out, "\"kernel_expr\": \"2*rbf(gamma=1)+geometric(degree=3,gamma=1)\"");
    free(out);
    free(err);
    snprintf(args, sizeof args, "info %s --json", model);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
    HAS(out, "\"kernel_expr\": \"2*rbf(gamma=1)+geometric(degree=3,gamma=1)\"");
    free(out);
    free(err);
    snprintf(args, sizeof args, "predict %s %s --json", model, data);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
    HAS(out, "\"accuracy\": ");
    free(out);
    free(err);
    snprintf(args, sizeof args, "train %s -o %s --path kernel --kernel 'poly(coef0=-1)'", data,
             model);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 1);
    HAS(err, "--kernel 'poly(coef0=-1)' at 12: a negative coef0");
    free(out);
    free(err);
    unlink(model);
    unlink(data);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kernel_expr");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_parse_and_refusals);
    tcase_add_test(tc, test_against_direct);
    tcase_add_test(tc, test_identities);
    tcase_add_test(tc, test_sparse_rows);
    tcase_add_test(tc, test_model_file);
    tcase_add_test(tc, test_resume);
    tcase_add_test(tc, test_cli);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
