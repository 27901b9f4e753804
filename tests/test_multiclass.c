/* More than two classes: one-vs-rest and the multiclass perceptron, the shipped real datasets
 * against scikit-learn's reference accuracies, label mapping through model files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "features/gram.h"
#include "multiclass/multiclass.h"
#include "testutil.h"

static pt_dataset *shipped(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/datasets/%s", getenv("PTRON_SRC"), name);
    pt_dataset *ds;
    ck_assert_msg(pt_dataset_read(path, NULL, &ds) == PT_OK, "%s", pt_last_error());
    return ds;
}

/* scikit-learn's Perceptron test accuracy on the same split, the mean over epoch budgets
 * 5..100 (datasets/sklearn_reference.tsv, measured by scripts/make-datasets): its last
 * iterate swings with the budget, so one budget alone would be a lottery. */
static double sklearn_reference(const char *name)
{
    char path[1024], line[256], n[64];
    snprintf(path, sizeof path, "%s/datasets/sklearn_reference.tsv", getenv("PTRON_SRC"));
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    double acc = -1;
    while (fgets(line, sizeof line, f)) {
        double a;
        if (line[0] != '#' && sscanf(line, "%63s %*d %*d %*d %*f %*f %*f %*f %*f %lf", n, &a) == 2 &&
            strcmp(n, name) == 0)
            acc = a;
    }
    fclose(f);
    ck_assert(acc >= 0);
    return acc;
}

static double test_accuracy(const char *name, pt_train_params *p)
{
    char tr[128], te[128];
    snprintf(tr, sizeof tr, "%s.train.svm", name);
    snprintf(te, sizeof te, "%s.test.svm", name);
    pt_dataset *train = shipped(tr), *test = shipped(te);
    pt_model *m;
    ck_assert_msg(pt_train(train, p, &m, NULL) == PT_OK, "%s", pt_last_error());
    pt_eval ev;
    ck_assert_int_eq(pt_model_evaluate(m, test, &ev), PT_OK);
    pt_model_free(m);
    pt_dataset_free(train);
    pt_dataset_free(test);
    return ev.accuracy;
}

/* A copy of ds's rows labelled +1 for class c and -1 for the rest: one-vs-rest's problem c
 * as a binary dataset of its own. */
static pt_dataset *one_vs_rest(const pt_dataset *ds, size_t c)
{
    const size_t n = pt_dataset_n(ds), d = pt_dataset_d(ds);
    double *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) y[i] = pt_dataset_class(ds, i) == (int32_t)c ? 1 : -1;
    pt_dataset *bin = pt_dataset_create(n, d);
    for (size_t i = 0; i < n; i++) memcpy(pt_dataset_row(bin, i), pt_dataset_row_const(ds, i), d * sizeof(float));
    ck_assert_int_eq(pt_dataset_set_labels(bin, y), PT_OK);
    free(y);
    return bin;
}

/* The averaged perceptron, same order (no shuffle), same 20 epochs, one-vs-rest like
 * scikit-learn: at least its test accuracy on every shipped dataset. */
START_TEST(test_shipped_vs_sklearn)
{
    const char *names[] = {"breast_cancer", "iris", "wine", "digits"};
    for (size_t i = 0; i < 4; i++) {
        pt_train_params p;
        pt_train_params_init(&p);
        p.variant = PT_VARIANT_AVERAGED;
        p.epochs = 20;
        double acc = test_accuracy(names[i], &p), ref = sklearn_reference(names[i]);
        fprintf(stderr, "%s: ptron averaged %.4f, sklearn Perceptron %.4f\n", names[i], acc, ref);
        /* the reference is printed with 6 decimals: allow that rounding */
        ck_assert_msg(acc >= ref - 1e-6, "%s: %.4f < sklearn %.4f", names[i], acc, ref);
    }
}
END_TEST

/* Three well separated blobs: both methods separate them. */
START_TEST(test_blobs_separated)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_BLOBS;
    g.n = 600;
    g.d = 10;
    g.classes = 4;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    for (int method = 0; method <= 1; method++)
        for (int path = 0; path <= 1; path++) {
            if (method == PT_MULTI_DIRECT && path == PT_PATH_BATCH) continue;
            pt_train_params p;
            pt_train_params_init(&p);
            p.multiclass = (pt_multiclass)method;
            p.path = (pt_path)path;
            p.epochs = 200;
            p.threads = 2;
            pt_model *m;
            pt_train_report r;
            ck_assert_msg(pt_train(ds, &p, &m, &r) == PT_OK, "%s", pt_last_error());
            pt_eval ev;
            ck_assert_int_eq(pt_model_evaluate(m, ds, &ev), PT_OK);
            ck_assert_msg(ev.accuracy > 0.99, "method %d path %d: %g", method, path, ev.accuracy);
            size_t conf[16], unknown;
            ck_assert_int_eq(pt_model_confusion(m, ds, conf, &unknown), PT_OK);
            size_t total = 0, diag = 0;
            for (int t = 0; t < 4; t++)
                for (int c = 0; c < 4; c++) {
                    total += conf[t * 4 + c];
                    diag += t == c ? conf[t * 4 + c] : 0;
                }
            ck_assert_uint_eq(total, 600);
            ck_assert_uint_eq(diag, ev.correct);
            ck_assert_uint_eq(unknown, 0);
            pt_train_report_clear(&r);
            pt_model_free(m);
        }
    pt_dataset_free(ds);
}
END_TEST

/* The multiclass perceptron's update, replayed by hand on three points. */
START_TEST(test_direct_update_rule)
{
    const float x[] = {1, 0, 0, 1, -1, -1};
    const double y[] = {10, 20, 30};
    pt_dataset *ds = tu_dataset(3, 2, x, y);
    pt_train_params p;
    pt_train_params_init(&p);
    p.multiclass = PT_MULTI_DIRECT;
    p.bias = 0;
    p.epochs = 1;
    pt_model *m;
    pt_train_report r;
    ck_assert_int_eq(pt_train(ds, &p, &m, &r), PT_OK);
    /* sample 1 (class 0): all scores 0, rival class 1: W0 += x, W1 -= x -> W0=(1,0) W1=(-1,0)
     * sample 2 (class 1): s = (0, 0, 0), rival class 0 (first max): W1 += (0,1), W0 -= (0,1)
     *   -> W0 = (1,-1), W1 = (-1,1)
     * sample 3 (class 2): s = (0, 0, 0), rival 0: W2 += (-1,-1), W0 -= (-1,-1) -> W0 = (2, 0) */
    ck_assert_uint_eq(r.mistakes_per_epoch[0], 3);
    const float want[3][2] = {{2, 0}, {-1, 1}, {-1, -1}};
    for (int c = 0; c < 3; c++)
        for (int j = 0; j < 2; j++) ck_assert_float_eq(m->W[c * pt_stride_for(2) + j], want[c][j]);
    pt_train_report_clear(&r);
    pt_model_free(m);
    pt_dataset_free(ds);
}
END_TEST

/* Labels survive the model file; predictions give them back. */
START_TEST(test_label_mapping_round_trip)
{
    const float x[] = {0, 0, 5, 5, 0, 5, 5, 0};
    const double y[] = {-3, 7.5, 11, 1e6};
    pt_dataset *ds = tu_dataset(4, 2, x, y);
    for (int method = 0; method <= 1; method++) {
        pt_train_params p;
        pt_train_params_init(&p);
        p.multiclass = (pt_multiclass)method;
        p.epochs = 500;
        pt_model *m, *back;
        ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_OK);
        const char *path = tu_path("mc", ".model");
        ck_assert_msg(pt_model_save(m, path) == PT_OK, "%s", pt_last_error());
        ck_assert_msg(pt_model_load(path, &back) == PT_OK, "%s", pt_last_error());
        pt_model_info info;
        pt_model_get_info(back, &info);
        ck_assert_uint_eq(info.nclass, 4);
        ck_assert_int_eq(info.multiclass, method);
        for (size_t c = 0; c < 4; c++) ck_assert_double_eq(pt_model_class_value(back, c), y[c]);
        ck_assert_mem_eq(back->W, m->W, 4 * pt_stride_for(2) * sizeof(float));
        double pred[4];
        ck_assert_int_eq(pt_model_predict(back, ds, pred), PT_OK);
        for (int i = 0; i < 4; i++) ck_assert_double_eq(pred[i], y[i]);
        pt_model_free(m);
        pt_model_free(back);
    }
    pt_dataset_free(ds);
}
END_TEST

/* One-vs-rest is deterministic whatever the thread count (each class its own problem). */
START_TEST(test_ovr_threads_identical)
{
    pt_dataset *train = shipped("digits.train.svm");
    pt_model *m[2];
    for (int t = 0; t < 2; t++) {
        pt_train_params p;
        pt_train_params_init(&p);
        p.threads = t + 1;
        p.shuffle = 1;
        p.epochs = 5;
        ck_assert_int_eq(pt_train(train, &p, &m[t], NULL), PT_OK);
    }
    ck_assert_mem_eq(m[0]->W, m[1]->W, 10 * pt_stride_for(64) * sizeof(float));
    pt_model_free(m[0]);
    pt_model_free(m[1]);
    pt_dataset_free(train);
}
END_TEST

/* One-vs-rest in lockstep equals K separate binary runs, bit for bit (classic and averaged,
 * shuffled), whatever the thread count. */
START_TEST(test_ovr_equals_binary_runs)
{
    pt_dataset *train = shipped("wine.train.svm");
    size_t d = pt_dataset_d(train), K = pt_dataset_nclass(train);
    for (int variant = 0; variant <= 1; variant++)
        for (int threads = 1; threads <= 3; threads++) {
            pt_train_params p;
            pt_train_params_init(&p);
            p.variant = variant ? PT_VARIANT_AVERAGED : PT_VARIANT_CLASSIC;
            p.shuffle = 1;
            p.epochs = 15;
            p.threads = threads;
            pt_model *m;
            ck_assert_int_eq(pt_train(train, &p, &m, NULL), PT_OK);
            for (size_t c = 0; c < K; c++) {
                pt_dataset *bin = one_vs_rest(train, c);
                pt_train_params q = p;
                q.threads = 1;
                pt_model *mb;
                ck_assert_int_eq(pt_train(bin, &q, &mb, NULL), PT_OK);
                float b;
                const float *w = pt_model_weights(mb, &b);
                ck_assert_msg(memcmp(w, m->W + c * pt_stride_for(d), d * sizeof(float)) == 0,
                              "variant %d threads %d class %zu differs", variant, threads, c);
                ck_assert_float_eq(b, m->Bk[c]);
                pt_model_free(mb);
                pt_dataset_free(bin);
            }
            pt_model_free(m);
        }
    pt_dataset_free(train);
}
END_TEST

/* Text labels (from a CSV) train, survive the model file by name, and are matched by name
 * when evaluating another file whose classes come in another order. */
START_TEST(test_text_labels_round_trip)
{
    const char *train = tu_write_file("txt", ".csv",
                                      "cat,0,0\ndog,5,5\nemu,0,5\ncat,0.5,0\ndog,5,4.5\nemu,0,4.5\n");
    char tpath[512];
    snprintf(tpath, sizeof tpath, "%s", train);
    const char *test = tu_write_file("txt2", ".csv", "emu,0,5\ncat,0,0\nyak,1,1\n");
    pt_dataset *ds, *te;
    ck_assert_int_eq(pt_dataset_read(tpath, NULL, &ds), PT_OK);
    ck_assert_int_eq(pt_dataset_read(test, NULL, &te), PT_OK);
    pt_train_params p;
    pt_train_params_init(&p);
    p.epochs = 200;
    pt_model *m, *back;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_OK);
    const char *path = tu_path("txt", ".model");
    ck_assert_int_eq(pt_model_save(m, path), PT_OK);
    ck_assert_msg(pt_model_load(path, &back) == PT_OK, "%s", pt_last_error());
    ck_assert_str_eq(pt_model_class_name(back, 0), "cat");
    ck_assert_str_eq(pt_model_class_name(back, 2), "emu");
    size_t conf[9], unknown;
    ck_assert_int_eq(pt_model_confusion(back, te, conf, &unknown), PT_OK);
    ck_assert_uint_eq(unknown, 1); /* yak */
    ck_assert_uint_eq(conf[0 * 3 + 0], 1); /* cat as cat */
    ck_assert_uint_eq(conf[2 * 3 + 2], 1); /* emu as emu */
    pt_eval ev;
    ck_assert_int_eq(pt_model_evaluate(back, te, &ev), PT_OK);
    ck_assert_uint_eq(ev.correct, 2);
    pt_model_free(m);
    pt_model_free(back);
    pt_dataset_free(ds);
    pt_dataset_free(te);
}
END_TEST

/* One-vs-rest with the linear kernel makes the same mistakes per epoch as one-vs-rest on the
 * online path (digits are integer-valued: every score is exact), and predicts the same. A
 * kernel one-vs-rest model survives its file. */
START_TEST(test_kernel_ovr_equals_online_ovr)
{
    pt_dataset *train = shipped("digits.train.svm"), *test = shipped("digits.test.svm");
    pt_train_params p;
    pt_train_params_init(&p);
    p.epochs = 4;
    pt_train_report ro, rk;
    pt_model *mo, *mk, *back;
    ck_assert_int_eq(pt_train(train, &p, &mo, &ro), PT_OK);
    p.path = PT_PATH_KERNEL;
    p.kernel.kind = PT_KERNEL_LINEAR;
    ck_assert_msg(pt_train(train, &p, &mk, &rk) == PT_OK, "%s", pt_last_error());
    ck_assert_int_eq(ro.epochs_run, rk.epochs_run);
    ck_assert_mem_eq(ro.mistakes_per_epoch, rk.mistakes_per_epoch, (size_t)ro.epochs_run * sizeof(size_t));
    double *a = malloc(pt_dataset_n(test) * sizeof *a), *b = malloc(pt_dataset_n(test) * sizeof *b);
    ck_assert_int_eq(pt_model_predict(mo, test, a), PT_OK);
    ck_assert_int_eq(pt_model_predict(mk, test, b), PT_OK);
    size_t same = 0;
    for (size_t i = 0; i < pt_dataset_n(test); i++) same += a[i] == b[i];
    /* scores equal up to float summation order: ties may break differently */
    ck_assert_uint_ge(same, pt_dataset_n(test) - 2);
    const char *path = tu_path("kovr", ".model");
    ck_assert_msg(pt_model_save(mk, path) == PT_OK, "%s", pt_last_error());
    ck_assert_msg(pt_model_load(path, &back) == PT_OK, "%s", pt_last_error());
    ck_assert_int_eq(pt_model_predict(back, test, a), PT_OK);
    ck_assert_mem_eq(a, b, pt_dataset_n(test) * sizeof *a);
    free(a);
    free(b);
    pt_train_report_clear(&ro);
    pt_train_report_clear(&rk);
    pt_model_free(mo);
    pt_model_free(mk);
    pt_model_free(back);
    pt_dataset_free(train);
    pt_dataset_free(test);
}
END_TEST

/* Kernel one-vs-rest trains its classes on one kernel storage (the Gram built once, or the row
 * cache kept from class to class): each class model must be the binary kernel run's on that
 * class's +-1 labels, bit for bit, on every storage: full, rows with a cache that evicts,
 * rows with none, and auto switching to the Gram in the first class or in a later one. */
START_TEST(test_kernel_ovr_equals_binary_kernel_runs)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_BLOBS;
    g.classes = 4;
    g.n = 700; /* kernel rows of 2,816 bytes: 1 MiB of cache holds 372 */
    g.d = 2;   /* blobs that overlap: mistakes in every epoch */
    g.seed = 9;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    const size_t d = pt_dataset_d(ds), K = pt_dataset_nclass(ds);
    const struct {
        pt_gram_storage storage;
        size_t cache_mb;
        double switch_seconds;
    } runs[] = {{PT_GRAM_FULL, 0, -1.0}, {PT_GRAM_ROWS, 1, -1.0}, {PT_GRAM_ROWS, 0, -1.0},
                {PT_GRAM_AUTO, 0, 0.0},  {PT_GRAM_AUTO, 0, 2e-3}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++)
        for (int variant = 0; variant <= 1; variant++) {
            pt_train_params p;
            pt_train_params_init(&p);
            p.path = PT_PATH_KERNEL;
            p.kernel.kind = PT_KERNEL_RBF;
            p.kernel.gamma = 2.0f;
            p.variant = variant ? PT_VARIANT_AVERAGED : PT_VARIANT_CLASSIC;
            p.shuffle = 1;
            p.seed = 3;
            p.epochs = 6;
            p.kernel.gram_storage = runs[r].storage;
            p.kernel.cache_mb = runs[r].cache_mb;
            p.threads = 2;
            /* rows, no cache: 1 MiB leaves room for under 256 rows (two blocks), so none */
            if (runs[r].storage == PT_GRAM_ROWS && runs[r].cache_mb == 0) p.mem_budget_bytes = 1 << 20;
            pt_gram_set_switch_seconds(runs[r].switch_seconds);
            pt_model *m;
            pt_train_report rep;
            ck_assert_msg(pt_train(ds, &p, &m, &rep) == PT_OK, "%s", pt_last_error());
            ck_assert_uint_gt(rep.updates, 100);
            for (size_t c = 0; c < K; c++) {
                pt_dataset *bin = one_vs_rest(ds, c);
                pt_model *mb;
                ck_assert_msg(pt_train(bin, &p, &mb, NULL) == PT_OK, "%s", pt_last_error());
                const pt_model *sub = m->sub[c];
                ck_assert_msg(sub->n_sv == mb->n_sv, "run %zu variant %d class %zu: %zu vs %zu vectors", r,
                              variant, c, sub->n_sv, mb->n_sv);
                ck_assert_mem_eq(sub->coef, mb->coef, mb->n_sv * sizeof(float));
                ck_assert_mem_eq(sub->sv, mb->sv, mb->n_sv * pt_stride_for(d) * sizeof(float));
                pt_model_free(mb);
                pt_dataset_free(bin);
            }
            pt_train_report_clear(&rep);
            pt_model_free(m);
        }
    pt_gram_set_switch_seconds(-1.0);
    pt_dataset_free(ds);
}
END_TEST

static int count_rounds(int epoch, size_t mistakes, double seconds, void *user)
{
    (void)epoch;
    (void)mistakes;
    (void)seconds;
    ++*(int *)user;
    return 0;
}

/* With two threads kernel one-vs-rest trains two classes at once on the shared storage of K
 * (train_kernel.c's workers); every class must come out as with one thread: the same model
 * file, byte for byte, and the same mistakes in every epoch, dense and sparse rows, on the
 * full Gram, rows behind a cache that fills up (shared, it then keeps no more) and rows
 * without one, classic (with and without a support-vector budget) and averaged, in one
 * round and in rounds (a progress callback). */
START_TEST(test_kernel_ovr_workers_identical)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_BLOBS;
    g.classes = 5;
    g.n = 700;
    g.d = 2;
    g.seed = 9;
    pt_dataset *dense, *sparse;
    ck_assert_int_eq(pt_generate(&g, &dense), PT_OK);
    ck_assert_int_eq(pt_dataset_convert(dense, PT_LAYOUT_SPARSE, 0, &sparse), PT_OK);
    const struct {
        pt_gram_storage storage;
        size_t cache_mb, budget_bytes;
    } runs[] = {{PT_GRAM_FULL, 0, 0}, {PT_GRAM_ROWS, 1, 0}, {PT_GRAM_ROWS, 0, 1 << 20}};
    for (int l = 0; l < 2; l++)
        for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++)
            for (int v = 0; v < 3; v++)
                for (int rounds = 0; rounds < 2; rounds++) {
                    void *buf[2];
                    size_t len[2];
                    size_t mist[2][8] = {{0}};
                    for (int t = 0; t < 2; t++) {
                        pt_train_params p;
                        pt_train_params_init(&p);
                        p.path = PT_PATH_KERNEL;
                        p.kernel.kind = PT_KERNEL_RBF;
                        p.kernel.gamma = 2.0f;
                        p.variant = v == 1 ? PT_VARIANT_AVERAGED : PT_VARIANT_CLASSIC;
                        p.kernel.budget = v == 2 ? 60 : 0;
                        p.shuffle = 1;
                        p.seed = 3;
                        p.epochs = 6;
                        p.kernel.gram_storage = runs[r].storage;
                        p.kernel.cache_mb = runs[r].cache_mb;
                        if (runs[r].budget_bytes) p.mem_budget_bytes = runs[r].budget_bytes;
                        p.threads = t + 1;
                        int calls = 0;
                        if (rounds) {
                            p.progress = count_rounds;
                            p.progress_user = &calls;
                        }
                        pt_model *m;
                        pt_train_report rep;
                        ck_assert_msg(pt_train(l ? sparse : dense, &p, &m, &rep) == PT_OK, "%s",
                                      pt_last_error());
                        ck_assert_uint_gt(rep.updates, 100);
                        ck_assert_int_eq(rep.epochs_run, 6);
                        for (int e = 0; e < 6; e++) mist[t][e] = rep.mistakes_per_epoch[e];
                        if (rounds) ck_assert_int_eq(calls, 6);
                        ck_assert_int_eq(pt_model_save_buffer(m, &buf[t], &len[t]), PT_OK);
                        pt_train_report_clear(&rep);
                        pt_model_free(m);
                    }
                    ck_assert_msg(len[0] == len[1] && memcmp(buf[0], buf[1], len[0]) == 0,
                                  "%s run %zu variant %d rounds %d: the 2-thread model differs",
                                  l ? "sparse" : "dense", r, v, rounds);
                    ck_assert_mem_eq(mist[0], mist[1], sizeof mist[0]);
                    free(buf[0]);
                    free(buf[1]);
                }
    pt_dataset_free(sparse);
    pt_dataset_free(dense);
}
END_TEST

/* The voted perceptron one-vs-rest keeps each class's votes: a class's score is the vote of the
 * binary voted perceptron trained on that class's view, bit for bit, whatever the thread
 * count; the model file keeps them (format version 2, only for such models); each class may
 * store vectors within 1/K of the memory budget. */
START_TEST(test_ovr_voted_keeps_votes)
{
    pt_dataset *train = shipped("wine.train.svm");
    const size_t n = pt_dataset_n(train), d = pt_dataset_d(train), K = pt_dataset_nclass(train);
    float *cs = malloc(n * K * sizeof *cs), *cs2 = malloc(n * K * sizeof *cs2), *bs = malloc(n * sizeof *bs);
    pt_train_params p;
    pt_train_params_init(&p);
    p.variant = PT_VARIANT_VOTED;
    p.shuffle = 1;
    p.epochs = 8;
    for (int threads = 1; threads <= 3; threads++) {
        p.threads = threads;
        pt_model *m;
        ck_assert_msg(pt_train(train, &p, &m, NULL) == PT_OK, "%s", pt_last_error());
        ck_assert_int_eq(pt_model_class_scores(m, train, cs), PT_OK);
        size_t differs_from_last = 0; /* rows where the vote and the last iterate disagree */
        for (size_t c = 0; c < K; c++) {
            pt_dataset *bin = one_vs_rest(train, c);
            pt_train_params q = p;
            q.threads = 1;
            pt_model *mb;
            ck_assert_int_eq(pt_train(bin, &q, &mb, NULL), PT_OK);
            ck_assert_uint_gt(mb->n_votes, 1);
            ck_assert_int_eq(pt_model_scores(mb, bin, bs), PT_OK);
            for (size_t i = 0; i < n; i++) {
                ck_assert_msg(memcmp(&bs[i], &cs[i * K + c], sizeof(float)) == 0,
                              "threads %d class %zu row %zu: vote %g, binary %g", threads, c, i,
                              (double)cs[i * K + c], (double)bs[i]);
                const float *x = pt_dataset_row_const(train, i), *w = m->W + c * pt_stride_for(d);
                double last = m->Bk[c];
                for (size_t j = 0; j < d; j++) last += (double)w[j] * x[j];
                differs_from_last += (last >= 0) != (bs[i] >= 0);
            }
            pt_model_free(mb);
            pt_dataset_free(bin);
        }
        ck_assert_uint_gt(differs_from_last, 0); /* so the votes, not W, made the scores */
        /* saved and loaded: the same scores, in a version-2 file */
        const char *path = tu_path("ovr-voted", ".model");
        pt_model *back;
        ck_assert_int_eq(pt_model_save(m, path), PT_OK);
        char *text = tu_read_file(path, NULL);
        ck_assert_ptr_nonnull(text);
        ck_assert_int_eq(strncmp(text, "ptron-model 2\n", 14), 0);
        ck_assert_ptr_nonnull(strstr(text, "\novr_votes\nvotes "));
        free(text);
        ck_assert_msg(pt_model_load(path, &back) == PT_OK, "%s", pt_last_error());
        ck_assert_int_eq(pt_model_class_scores(back, train, cs2), PT_OK);
        ck_assert_mem_eq(cs, cs2, n * K * sizeof(float));
        pt_model *copy = pt_model_clone(back);
        ck_assert_int_eq(pt_model_class_scores(copy, train, cs2), PT_OK);
        ck_assert_mem_eq(cs, cs2, n * K * sizeof(float));
        pt_model_free(copy);
        pt_model_free(back);
        pt_model_free(m);
    }
    /* models without class votes stay version 1 */
    p.variant = PT_VARIANT_AVERAGED;
    pt_model *m;
    ck_assert_int_eq(pt_train(train, &p, &m, NULL), PT_OK);
    const char *path = tu_path("ovr-avg", ".model");
    ck_assert_int_eq(pt_model_save(m, path), PT_OK);
    char *text = tu_read_file(path, NULL);
    ck_assert_int_eq(strncmp(text, "ptron-model 1\n", 14), 0);
    free(text);
    pt_model_free(m);
    free(cs);
    free(cs2);
    free(bs);
    pt_dataset_free(train);
    /* a budget that holds the vectors of any one class, but not K classes' within 1/K each:
     * on labels no separator fits (so many vectors), wide rows (so a budget of at least 1 MiB) */
    const size_t rn = 1500, rd = 100, vector_bytes = (pt_stride_for(rd) + 2) * sizeof(float);
    float *x = malloc(rn * rd * sizeof *x);
    double *labels = malloc(rn * sizeof *labels);
    uint64_t u = 7;
    for (size_t i = 0; i < rn * rd; i++) {
        u = u * 6364136223846793005u + 1442695040888963407u;
        x[i] = (float)(u >> 40) / (float)(1u << 24) - 0.5f;
    }
    for (size_t i = 0; i < rn; i++) labels[i] = (double)((i * 7 + i / 3) % 3);
    pt_dataset *noise = tu_dataset(rn, rd, x, labels);
    free(x);
    free(labels);
    p.variant = PT_VARIANT_VOTED;
    p.threads = 1;
    p.epochs = 2;
    size_t votes = 0; /* the most of any class */
    for (size_t c = 0; c < 3; c++) {
        pt_dataset *bin = one_vs_rest(noise, c);
        pt_model *mb;
        ck_assert_int_eq(pt_train(bin, &p, &mb, NULL), PT_OK);
        if (mb->n_votes > votes) votes = mb->n_votes;
        pt_model_free(mb);
        pt_dataset_free(bin);
    }
    p.mem_budget_bytes = votes * vector_bytes > PT_MIN_MEM_BUDGET ? votes * vector_bytes
                                                                 : PT_MIN_MEM_BUDGET;
    ck_assert_msg(votes * vector_bytes > p.mem_budget_bytes / 3, "%zu vectors", votes);
    for (size_t c = 0; c < 3; c++) {
        pt_dataset *bin = one_vs_rest(noise, c);
        pt_model *mb;
        ck_assert_int_eq(pt_train(bin, &p, &mb, NULL), PT_OK);
        pt_model_free(mb);
        pt_dataset_free(bin);
    }
    ck_assert_int_eq(pt_train(noise, &p, &m, NULL), PT_ERR_LIMIT);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "1/K of the budget"));
    pt_dataset_free(noise);
}
END_TEST

/* Four classes of integer-valued data, about 3 values in 4 zero: the class of the highest
 * integer score (5% relabelled at random), in the sparse layout and its dense copy. */
static void sparse_classes(size_t n, size_t d, uint64_t seed, pt_dataset **dense,
                           pt_dataset **sparse)
{
    enum { K = 4 };
    pt_rng rng;
    pt_rng_seed(&rng, seed);
    float *x = calloc(n * d, sizeof *x);
    double *y = malloc(n * sizeof *y);
    int *w = malloc(K * d * sizeof *w);
    for (size_t j = 0; j < K * d; j++) w[j] = (int)pt_rng_below(&rng, 7) - 3;
    for (size_t i = 0; i < n; i++) {
        long sc[K] = {0};
        for (size_t j = 0; j < d; j++) {
            if (pt_rng_below(&rng, 4) != 0) continue;
            int v = (int)pt_rng_below(&rng, 9) - 4;
            x[i * d + j] = (float)v;
            for (int c = 0; c < K; c++) sc[c] += (long)v * w[c * d + j];
        }
        int best = 0;
        for (int c = 1; c < K; c++)
            if (sc[c] > sc[best]) best = c;
        y[i] = pt_rng_uniform(&rng) < 0.05 ? (double)pt_rng_below(&rng, K) : (double)best;
    }
    *dense = tu_dataset(n, d, x, y);
    ck_assert_int_eq(pt_dataset_convert(*dense, PT_LAYOUT_SPARSE, 0, sparse), PT_OK);
    ck_assert_int_eq(pt_dataset_layout(*sparse), PT_LAYOUT_SPARSE);
    free(x);
    free(y);
    free(w);
}

/* One-vs-rest (classic, averaged, voted; 1 and 2 threads) and the multiclass perceptron
 * (classic, averaged) on sparse data equal the runs on the dense copy: the same mistakes in
 * every epoch, the same model file (integer-valued data), the same predictions. */
START_TEST(test_sparse_equals_dense)
{
    pt_dataset *dn, *sp;
    sparse_classes(1200, 45, 17, &dn, &sp);
    const size_t n = 1200;
    double *l1 = malloc(n * sizeof *l1), *l2 = malloc(n * sizeof *l2);
    for (int direct = 0; direct <= 1; direct++)
        for (int variant = PT_VARIANT_CLASSIC; variant <= (direct ? PT_VARIANT_AVERAGED
                                                                   : PT_VARIANT_VOTED);
             variant++)
            for (int shuffle = 0; shuffle <= 1; shuffle++)
                for (int threads = 1; threads <= 2; threads++) {
                    pt_train_params p;
                    pt_train_params_init(&p);
                    p.epochs = 4;
                    p.multiclass = direct ? PT_MULTI_DIRECT : PT_MULTI_OVR;
                    p.variant = (pt_variant)variant;
                    p.shuffle = shuffle;
                    p.threads = threads;
                    char what[96];
                    snprintf(what, sizeof what, "direct %d variant %d shuffle %d threads %d",
                             direct, variant, shuffle, threads);
                    pt_train_report rd, rs;
                    pt_model *md, *ms;
                    ck_assert_msg(pt_train(dn, &p, &md, &rd) == PT_OK, "%s", pt_last_error());
                    ck_assert_msg(pt_train(sp, &p, &ms, &rs) == PT_OK, "%s", pt_last_error());
                    ck_assert_int_eq(rs.epochs_run, rd.epochs_run);
                    ck_assert_msg(memcmp(rs.mistakes_per_epoch, rd.mistakes_per_epoch,
                                         (size_t)rd.epochs_run * sizeof(size_t)) == 0,
                                  "%s: mistakes", what);
                    const char *fa = tu_path("spm_a", ".model"), *fb = tu_path("spm_b", ".model");
                    ck_assert_int_eq(pt_model_save(ms, fa), PT_OK);
                    ck_assert_int_eq(pt_model_save(md, fb), PT_OK);
                    size_t la, lb;
                    char *ba = tu_read_file(fa, &la), *bb = tu_read_file(fb, &lb);
                    ck_assert_msg(la == lb && memcmp(ba, bb, la) == 0, "%s: model files", what);
                    free(ba);
                    free(bb);
                    remove(fa);
                    remove(fb);
                    /* predicted from either layout (the average's scores only to rounding) */
                    ck_assert_int_eq(pt_model_predict(ms, sp, l1), PT_OK);
                    ck_assert_int_eq(pt_model_predict(ms, dn, l2), PT_OK);
                    if (variant != PT_VARIANT_AVERAGED) ck_assert_mem_eq(l1, l2, n * sizeof *l1);
                    pt_train_report_clear(&rd);
                    pt_train_report_clear(&rs);
                    pt_model_free(md);
                    pt_model_free(ms);
                }
    free(l1);
    free(l2);
    pt_dataset_free(dn);
    pt_dataset_free(sp);
}
END_TEST

/* What a binding reads of a model: class weights, class scores, predicted class indices. */
START_TEST(test_class_access)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_BLOBS;
    g.n = 400;
    g.d = 5;
    g.classes = 4;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    const size_t n = g.n, d = g.d, K = 4;
    float *scores = malloc(n * K * sizeof *scores);
    int32_t *cls = malloc(n * sizeof *cls);
    double *labels = malloc(n * sizeof *labels);
    for (int run = 0; run < 3; run++) {
        pt_train_params p;
        pt_train_params_init(&p);
        p.epochs = 3;
        p.multiclass = run == 1 ? PT_MULTI_DIRECT : PT_MULTI_OVR;
        p.path = run == 2 ? PT_PATH_KERNEL : PT_PATH_ONLINE;
        pt_model *m;
        pt_train_report r;
        ck_assert_msg(pt_train(ds, &p, &m, &r) == PT_OK, "%s", pt_last_error());
        ck_assert_uint_eq(pt_model_nclass(m), K);
        ck_assert_uint_eq(pt_model_features(m), d);
        ck_assert_int_eq(pt_model_epochs_run(m), r.epochs_run);
        pt_train_report_clear(&r);
        ck_assert_ptr_null(pt_model_weights(m, NULL));
        ck_assert_ptr_null(pt_model_class_weights(m, K, NULL));
        ck_assert_int_eq(pt_model_class_scores(m, ds, scores), PT_OK);
        for (size_t k = 0; run < 2 && k < K; k++) {
            float b;
            const float *w = pt_model_class_weights(m, k, &b);
            ck_assert_ptr_eq(w, m->W + k * pt_stride_for(d));
            ck_assert_float_eq(b, m->Bk[k]);
            for (size_t i = 0; i < n; i++) {
                double s = b;
                for (size_t j = 0; j < d; j++) s += (double)w[j] * pt_dataset_row_const(ds, i)[j];
                ck_assert_double_eq_tol(scores[i * K + k], s, 1e-4 * (1 + fabs(s)));
            }
        }
        if (run == 2) ck_assert_ptr_null(pt_model_class_weights(m, 0, NULL));
        ck_assert_int_eq(pt_model_predict_class(m, ds, cls), PT_OK);
        ck_assert_int_eq(pt_model_predict(m, ds, labels), PT_OK);
        for (size_t i = 0; i < n; i++) {
            size_t best = 0;
            for (size_t k = 1; k < K; k++)
                if (scores[i * K + k] > scores[i * K + best]) best = k;
            ck_assert_int_eq(cls[i], (int32_t)best);
            ck_assert_double_eq(labels[i], pt_model_class_value(m, (size_t)cls[i]));
        }
        pt_model_free(m);
    }
    /* a binary model has one score a row, and is read by pt_model_weights */
    double *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) y[i] = pt_dataset_class(ds, i) < 2 ? 4 : 9;
    pt_dataset *bin = pt_dataset_create(n, d);
    for (size_t i = 0; i < n; i++) memcpy(pt_dataset_row(bin, i), pt_dataset_row_const(ds, i), d * sizeof(float));
    ck_assert_int_eq(pt_dataset_set_labels(bin, y), PT_OK);
    pt_train_params p;
    pt_train_params_init(&p);
    p.expand.kind = PT_EXPAND_POLY; /* and d is the expansion's, the features the input's */
    pt_model *m;
    ck_assert_int_eq(pt_train(bin, &p, &m, NULL), PT_OK);
    ck_assert_uint_eq(pt_model_nclass(m), 2);
    ck_assert_uint_eq(pt_model_features(m), d);
    pt_model_info info;
    pt_model_get_info(m, &info);
    ck_assert_uint_eq(info.d, 21); /* C(5 + 2, 2) */
    ck_assert_ptr_null(pt_model_class_weights(m, 0, NULL));
    ck_assert_int_eq(pt_model_class_scores(m, bin, scores), PT_ERR_UNSUPPORTED);
    ck_assert_int_eq(pt_model_scores(m, bin, scores), PT_OK);
    ck_assert_int_eq(pt_model_predict_class(m, bin, cls), PT_OK);
    ck_assert_int_eq(pt_model_predict(m, bin, labels), PT_OK);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(cls[i], scores[i] >= 0 ? 1 : 0); /* sigma(0) = +1 */
        ck_assert_double_eq(labels[i], cls[i] ? 9 : 4);
    }
    pt_model_free(m);
    pt_dataset_free(bin);
    free(y);
    free(labels);
    free(cls);
    free(scores);
    pt_dataset_free(ds);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("multiclass");
    TCase *tc = tcase_create("multiclass");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_shipped_vs_sklearn);
    tcase_add_test(tc, test_blobs_separated);
    tcase_add_test(tc, test_direct_update_rule);
    tcase_add_test(tc, test_label_mapping_round_trip);
    tcase_add_test(tc, test_ovr_threads_identical);
    tcase_add_test(tc, test_kernel_ovr_workers_identical);
    tcase_add_test(tc, test_ovr_equals_binary_runs);
    tcase_add_test(tc, test_text_labels_round_trip);
    tcase_add_test(tc, test_kernel_ovr_equals_online_ovr);
    tcase_add_test(tc, test_kernel_ovr_equals_binary_kernel_runs);
    tcase_add_test(tc, test_ovr_voted_keeps_votes);
    tcase_add_test(tc, test_class_access);
    tcase_add_test(tc, test_sparse_equals_dense);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
