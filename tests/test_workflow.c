/* The practitioner's workflow end to end through the CLI: the batch path's defaults, decision
 * values (predict --scores), class weights, cross-validation. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h" /* pt_checksum, to edit a model as a person who knows the format would */
#include "cli_test_util.h"


/* Run the CLI, expect exit 0, and forget its output. */
static void ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void ok(const char *fmt, ...)
{
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char *out, *err;
    int rc = tu_run_cli(args, &out, &err);
    ck_assert_msg(rc == 0, "ptron %s: exit %d: %s", args, rc, err);
    free(out);
    free(err);
}

/* The number after "key": in a JSON text. */
static double json_number(const char *json, const char *key)
{
    char k[128];
    snprintf(k, sizeof k, "\"%s\": ", key);
    const char *at = strstr(json, k);
    ck_assert_msg(at != NULL, "no %s in %s", k, json);
    return strtod(at + strlen(k), NULL);
}

static size_t json_array(const char *json, const char *key, double *v, size_t cap);

/* Held-out accuracy of MODEL on DATA, by predict --json. */
static double accuracy(const char *model, const char *data)
{
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "predict %s %s --json", model, data), 0);
    double a = json_number(out, "accuracy");
    free(out);
    free(err);
    return a;
}

/* The demo's noisy data (20,000 x 64, 10% of the labels flipped, 5,000 held out): the batch
 * path's defaults and the guide's Pegasos recipe reach the averaged online path's held-out
 * accuracy (within half a point), where a full batch with the last iterate does not. */
START_TEST(test_batch_defaults_converge)
{
    const char *data = keep(0, tu_path("bd", ".ptd")), *test = keep(1, tu_path("bdt", ".ptd"));
    const char *model = keep(2, tu_path("bd", ".model"));
    ok("gen noisy --n 20000 --d 64 --noise 0.1 --seed 2 -o %s --test-out %s --test-n 5000", data,
       test);
    ok("train %s -o %s --averaged --shuffle --quiet", data, model);
    double online = accuracy(model, test);
    ck_assert_msg(online > 0.85, "online averaged %g", online);
    ok("train %s -o %s --path batch --quiet", data, model);
    double batch = accuracy(model, test);
    ok("train %s -o %s --path batch --loss hinge --lambda 1e-4 --schedule pegasos "
       "--average-iterates --quiet", data, model);
    double recipe = accuracy(model, test);
    ok("train %s -o %s --path batch --loss hinge --lambda 1e-4 --schedule pegasos "
       "--batch-size 0 --last-iterate --quiet", data, model);
    double full = accuracy(model, test);
    ck_assert_msg(batch >= online - 0.005, "batch defaults %g, online averaged %g", batch, online);
    ck_assert_msg(recipe >= online - 0.005, "recipe %g, online averaged %g", recipe, online);
    ck_assert_msg(full < online - 0.02, "full-batch Pegasos %g (the help says it swings)", full);
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --path batch --average-iterates "
                                     "--last-iterate", data, model), 1);
    HAS(err, "exclude each other");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "help train"), 0);
    HAS(out, "--last-iterate");
    HAS(out, "Why averaged mini-batches by default");
    free(out);
    free(err);
}
END_TEST

/* The scores file of MODEL on DATA against its predictions file: two classes, the sign of the
 * score gives the predicted label (>= 0: the class the header names); more, the first column
 * of highest score is the predicted class. Returns the rows checked. */
static size_t check_scores(const char *model, const char *data, size_t nclass)
{
    const char *scores = keep(10, tu_path("sc", ".txt")), *pred = keep(11, tu_path("pr", ".txt"));
    ok("predict %s %s --scores %s -o %s --quiet", model, data, scores, pred);
    char *s = tu_read_file(scores, NULL), *p = tu_read_file(pred, NULL);
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(p);
    /* the header: '#' and the class of each column */
    ck_assert_int_eq(s[0], '#');
    double cls[64];
    size_t cols = 0;
    char *at = s + 1, *end;
    while (*at != '\n') {
        ck_assert(cols < 64);
        cls[cols++] = strtod(at, &end);
        ck_assert_ptr_ne(end, at);
        at = end;
    }
    ck_assert_uint_eq(cols, nclass > 2 ? nclass : 1);
    at++;
    size_t rows = 0, positive = 0;
    char *pa = p;
    while (*at) {
        double label = strtod(pa, &end), best = -INFINITY, sc[64];
        ck_assert_ptr_ne(end, pa);
        pa = end;
        size_t arg = 0;
        for (size_t k = 0; k < cols; k++) {
            sc[k] = strtod(at, &end);
            ck_assert_ptr_ne(end, at);
            at = end;
            if (sc[k] > best) best = sc[k], arg = k;
        }
        ck_assert_int_eq(*at, '\n');
        at++;
        if (cols == 1) {
            positive += sc[0] >= 0;
            ck_assert_msg((sc[0] >= 0) == (label == cls[0]), "row %zu: score %g, label %g",
                          rows, sc[0], label);
        } else {
            ck_assert_msg(label == cls[arg], "row %zu: argmax class %g, predicted %g", rows,
                          cls[arg], label);
        }
        rows++;
    }
    if (cols == 1) ck_assert(positive > 0 && positive < rows); /* both signs were checked */
    free(s);
    free(p);
    return rows;
}

/* predict --scores: the sign of a binary score matches the predicted label, the argmax of the
 * multiclass scores does, on the online, batch and kernel paths. */
START_TEST(test_scores_file)
{
    const char *two = keep(0, tu_path("s2", ".ptd")), *four = keep(1, tu_path("s4", ".svm"));
    const char *model = keep(2, tu_path("s", ".model"));
    ok("gen noisy --n 600 --d 5 --seed 3 -o %s", two);
    ok("gen blobs --n 400 --d 3 --classes 4 --seed 3 -o %s", four);
    const char *opts[] = {"--averaged", "--path batch", "--path kernel --kernel rbf --epochs 3"};
    for (size_t i = 0; i < 3; i++) {
        ok("train %s -o %s %s --quiet", two, model, opts[i]);
        ck_assert_uint_eq(check_scores(model, two, 2), 600);
        ok("train %s -o %s %s --quiet", four, model, opts[i]);
        ck_assert_uint_eq(check_scores(model, four, 4), 400);
    }
    ok("train %s -o %s --multiclass direct --quiet", four, model);
    ck_assert_uint_eq(check_scores(model, four, 4), 400);
    /* a directory that does not exist: exit 2, the path named */
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "predict %s %s --scores /nonexistent/dir/s.txt", model,
                         four), 2);
    HAS(err, "/nonexistent/dir/s.txt");
    free(out);
    free(err);
}
END_TEST

/* n rows of d features with small dyadic values (k/8, |k| <= 8: every sum of a few epochs of
 * updates is exact in float) and labels +-1, imbalanced (about 1 in 3 positive), as LIBSVM
 * text; dup: the same with every row of class +1 written twice in a row. */
static void dyadic_data(const char *path, const char *dup, size_t n, size_t d)
{
    FILE *f = fopen(path, "w"), *g = fopen(dup, "w");
    ck_assert(f && g);
    unsigned long long r = 12345;
    for (size_t i = 0; i < n; i++) {
        char line[512];
        int at = 0;
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        int y = (r >> 33) % 3 == 0 ? 1 : -1;
        at += snprintf(line + at, sizeof line - (size_t)at, "%d", y);
        for (size_t j = 0; j < d; j++) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            int k = (int)((r >> 33) % 17) - 8;
            if (k) at += snprintf(line + at, sizeof line - (size_t)at, " %zu:%g", j + 1, k / 8.0);
        }
        fprintf(f, "%s\n", line);
        fprintf(g, "%s\n", line);
        if (y == 1) fprintf(g, "%s\n", line);
    }
    ck_assert(fclose(f) == 0 && fclose(g) == 0);
}

/* The scores file of MODEL on DATA, as text. */
static char *scores_of(const char *model, const char *data)
{
    const char *scores = tu_path("cws", ".txt");
    ok("predict %s %s --scores %s --quiet", model, data, scores);
    char *s = tu_read_file(scores, NULL);
    ck_assert_ptr_nonnull(s);
    return s;
}

/* Class weights: weight 2 on a class equals duplicating its rows on the online path without
 * shuffling (a margin every row violates, so both runs update on the same rows: the weighted
 * update 2 eta y x is the duplicate's two updates, exactly in these dyadic values); balanced
 * is n / (K n_k); the weights change the model; the kernel path with the linear kernel still
 * makes the online path's mistakes under weights; bad weights are usage errors. */
START_TEST(test_class_weight)
{
    const char *data = keep(0, tu_path("cw", ".svm")), *dup = keep(1, tu_path("cwd", ".svm"));
    const char *a = keep(2, tu_path("cwa", ".model")), *b = keep(3, tu_path("cwb", ".model"));
    dyadic_data(data, dup, 60, 4);
    const char *run_opts = "--margin 1000000 --epochs 3 --quiet";
    ok("train %s -o %s %s --class-weight 1:2", data, a, run_opts);
    ok("train %s -o %s %s", dup, b, run_opts);
    char *sa = scores_of(a, data), *sb = scores_of(b, data);
    ck_assert_str_eq(sa, sb);
    free(sb);
    ok("train %s -o %s %s", data, b, run_opts);
    sb = scores_of(b, data);
    ck_assert_str_ne(sa, sb); /* unweighted: another model */
    free(sa);
    free(sb);

    /* balanced: n / (K n_k), by hand from the labels */
    size_t pos = 0, n = 0;
    char *text = tu_read_file(data, NULL);
    for (char *line = text; *line; n++) {
        pos += strncmp(line, "1 ", 2) == 0 || strncmp(line, "1\n", 2) == 0;
        line = strchr(line, '\n') + 1;
    }
    free(text);
    ck_assert(pos > 5 && pos < n - 5);
    const char *paths[] = {"", "--path batch", "--path kernel"};
    for (size_t i = 0; i < 3; i++) {
        ok("train %s -o %s --class-weight balanced --epochs 4 %s --quiet", data, a, paths[i]);
        ok("train %s -o %s --class-weight 1:%.9g,-1:%.9g --epochs 4 %s --quiet", data, b,
           (double)n / (2.0 * (double)pos), (double)n / (2.0 * (double)(n - pos)), paths[i]);
        sa = scores_of(a, data);
        sb = scores_of(b, data);
        ck_assert_msg(strcmp(sa, sb) == 0, "balanced is not n / (K n_k) %s", paths[i]);
        free(sa);
        free(sb);
    }

    /* the linear kernel makes the online path's mistakes, weighted too */
    char *out, *err, *out2;
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --class-weight -1:3 --epochs 5 --json",
                         data, a), 0);
    free(err);
    ck_assert_int_eq(run(&out2, &err, "train %s -o %s --class-weight -1:3 --epochs 5 --json "
                                      "--path kernel", data, b), 0);
    free(err);
    const char *m1 = strstr(out, "\"mistakes_per_epoch\"");
    const char *m2 = strstr(out2, "\"mistakes_per_epoch\"");
    ck_assert(m1 && m2);
    ck_assert_int_eq(strcspn(m1, "]"), strcspn(m2, "]"));
    ck_assert_msg(strncmp(m1, m2, strcspn(m1, "]")) == 0, "%s vs %s", m1, m2);
    free(out);
    free(out2);

    /* more than two classes: a heavier class is recalled more, one-vs-rest and direct alike */
    const char *three = keep(4, tu_path("cw3", ".svm"));
    ok("gen blobs --n 600 --d 3 --classes 3 --seed 2 -o %s", three);
    const char *multi[] = {"", "--multiclass direct", "--path batch", "--path kernel"};
    for (size_t i = 0; i < 4; i++) {
        double r[2][3];
        for (int w = 0; w < 2; w++) {
            ok("train %s -o %s %s %s --quiet", three, a, multi[i], w ? "--class-weight 0:5" : "");
            ck_assert_int_eq(run(&out, &err, "predict %s %s --json", a, three), 0);
            ck_assert_uint_eq(json_array(out, "recall", r[w], 3), 3);
            free(out);
            free(err);
        }
        ck_assert_msg(r[1][0] > r[0][0], "%s: recall of class 0 %g weighted, %g not", multi[i],
                      r[1][0], r[0][0]);
    }

    /* sparse rows weigh alike: the dense layout's mistakes on every path and multiclass way */
    const char *layouts[][2] = {{"", ""},
                                {"--averaged", ""},
                                {"--path batch", ""},
                                {"--path kernel", ""},
                                {"", "3"},
                                {"--multiclass direct", "3"},
                                {"--path batch", "3"}};
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        const char *file = layouts[i][1][0] ? three : data;
        const char *w = layouts[i][1][0] ? "0:3,2:0.5" : "-1:3";
        const char *cmd = "train %s -o %s --class-weight %s --epochs 4 %s --layout %s --json";
        ck_assert_int_eq(run(&out, &err, cmd, file, a, w, layouts[i][0], "dense"), 0);
        free(err);
        ck_assert_int_eq(run(&out2, &err, cmd, file, b, w, layouts[i][0], "sparse"), 0);
        free(err);
        HAS(out2, "\"layout\": \"sparse\"");
        m1 = strstr(out, "\"mistakes_per_epoch\"");
        m2 = strstr(out2, "\"mistakes_per_epoch\"");
        ck_assert(m1 && m2);
        ck_assert_msg(strncmp(m1, m2, strcspn(m1, "]")) == 0, "%s %s: %s vs %s", layouts[i][0],
                      file, m1, m2);
        free(out);
        free(out2);
    }

    ck_assert_int_eq(run(&out, &err, "train %s -o %s --class-weight 7:2", data, a), 1);
    HAS(err, "the data has no class '7'");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --class-weight 1:-2", data, a), 1);
    HAS(err, "positive number");
    free(out);
    free(err);
}
END_TEST

/* The numbers of a JSON array "key": [a, b, ...] into v (at most cap); returns how many. */
static size_t json_array(const char *json, const char *key, double *v, size_t cap)
{
    char k[128];
    snprintf(k, sizeof k, "\"%s\": [", key);
    const char *at = strstr(json, k);
    ck_assert_msg(at != NULL, "no %s in %s", k, json);
    at += strlen(k);
    size_t n = 0;
    while (*at != ']') {
        char *end;
        ck_assert(n < cap);
        v[n++] = strtod(at, &end);
        ck_assert_ptr_ne(end, at);
        at = end;
        if (*at == ',') at++;
    }
    return n;
}

/* The folds are stratified (every fold floor or ceil of n_c / k rows of each class, sizes
 * within one), the same for a seed and others for another seed. */
START_TEST(test_cv_folds)
{
    const char *data = keep(0, tu_path("cvf", ".ptd"));
    ok("gen blobs --n 1003 --d 3 --classes 3 --seed 5 -o %s", data);
    pt_dataset *ds;
    ck_assert_int_eq(pt_dataset_read(data, NULL, &ds), PT_OK);
    size_t n = pt_dataset_n(ds), K = pt_dataset_nclass(ds);
    int32_t *f1 = malloc(n * sizeof *f1), *f2 = malloc(n * sizeof *f2);
    for (size_t k = 2; k <= 7; k++) {
        ck_assert_int_eq(pt_cv_folds(ds, k, 9, f1), PT_OK);
        size_t count[8][3] = {{0}}, size[8] = {0}, nc[3] = {0};
        for (size_t i = 0; i < n; i++) {
            ck_assert(f1[i] >= 0 && (size_t)f1[i] < k);
            count[f1[i]][pt_dataset_class(ds, i)]++;
            size[f1[i]]++;
            nc[pt_dataset_class(ds, i)]++;
        }
        for (size_t f = 0; f < k; f++) {
            ck_assert(size[f] == n / k || size[f] == n / k + 1);
            for (size_t c = 0; c < K; c++)
                ck_assert_msg(count[f][c] == nc[c] / k || count[f][c] == nc[c] / k + 1,
                              "k %zu fold %zu class %zu: %zu of %zu", k, f, c, count[f][c], nc[c]);
        }
        ck_assert_int_eq(pt_cv_folds(ds, k, 9, f2), PT_OK);
        ck_assert_mem_eq(f1, f2, n * sizeof *f1);
        ck_assert_int_eq(pt_cv_folds(ds, k, 10, f2), PT_OK);
        ck_assert(memcmp(f1, f2, n * sizeof *f1) != 0);
    }
    ck_assert_int_eq(pt_cv_folds(ds, 1, 9, f1), PT_ERR_INVALID);
    ck_assert_int_eq(pt_cv_folds(ds, n + 1, 9, f1), PT_ERR_INVALID);
    free(f1);
    free(f2);
    pt_dataset_free(ds);
}
END_TEST

/* Folds in parallel share the memory budget: with the least budget (1 MiB) no fold gets less,
 * so the folds run one at a time, with the results of one thread; the CLI's --mem-mb 1 too. */
START_TEST(test_cv_least_budget)
{
    const char *data = keep(0, tu_path("cvb", ".ptd"));
    ok("gen noisy --n 600 --d 5 --seed 2 -o %s", data);
    pt_dataset *ds;
    ck_assert_int_eq(pt_dataset_read(data, NULL, &ds), PT_OK);
    pt_train_params p;
    pt_train_params_init(&p);
    p.variant = PT_VARIANT_VOTED;
    p.shuffle = 1;
    p.threads = 1;
    pt_cv_fold one[4], four[4];
    double mean1, std1, mean4, std4;
    ck_assert_int_eq(pt_cross_validate(ds, &p, 4, 3, one, &mean1, &std1), PT_OK);
    p.threads = 4;
    p.mem_budget_bytes = (size_t)1 << 20;
    pt_status s = pt_cross_validate(ds, &p, 4, 3, four, &mean4, &std4);
    ck_assert_msg(s == PT_OK, "%s", pt_last_error());
    for (int f = 0; f < 4; f++) ck_assert_uint_eq(one[f].correct, four[f].correct);
    ck_assert_double_eq(mean1, mean4);
    pt_dataset_free(ds);
    ok("train %s --cv 4 --threads 4 --mem-mb 1 --voted --quiet", data);
}
END_TEST

/* train --cv K: each fold's accuracy is what train and predict give by hand on the fold's
 * files (the rows of pt_cv_folds, in row order), and the CV accuracy is their mean, on the
 * online, batch and kernel paths, two classes and four. */
START_TEST(test_cv_equals_by_hand)
{
    const char *sets[] = {keep(0, tu_path("cv2", ".svm")), keep(1, tu_path("cv4", ".svm"))};
    ok("gen noisy --n 500 --d 4 --seed 6 -o %s", sets[0]);
    ok("gen blobs --n 400 --d 3 --classes 4 --seed 6 -o %s", sets[1]);
    const char *opts[] = {"--averaged --shuffle --seed 3", "--path batch --loss hinge --lambda "
                          "0.001 --seed 3", "--path kernel --kernel rbf --epochs 4 --seed 3"};
    const size_t k = 4;
    for (size_t d = 0; d < 2; d++) {
        pt_dataset *ds;
        ck_assert_int_eq(pt_dataset_read(sets[d], NULL, &ds), PT_OK);
        size_t n = pt_dataset_n(ds);
        int32_t *fold = malloc(n * sizeof *fold);
        ck_assert_int_eq(pt_cv_folds(ds, k, 3, fold), PT_OK);
        pt_dataset_free(ds);
        /* the fold files, line by line from the LIBSVM text */
        char *text = tu_read_file(sets[d], NULL);
        const char *trainf[4], *testf[4];
        FILE *tr[4], *te[4];
        for (size_t f = 0; f < k; f++) {
            trainf[f] = keep(2 + (int)f, tu_path("cvtr", ".svm"));
            testf[f] = keep(6 + (int)f, tu_path("cvte", ".svm"));
            tr[f] = fopen(trainf[f], "w");
            te[f] = fopen(testf[f], "w");
            ck_assert(tr[f] && te[f]);
        }
        size_t i = 0;
        for (char *line = text; *line; i++) {
            char *nl = strchr(line, '\n');
            for (size_t f = 0; f < k; f++)
                fprintf((size_t)fold[i] == f ? te[f] : tr[f], "%.*s\n", (int)(nl - line), line);
            line = nl + 1;
        }
        ck_assert_uint_eq(i, n);
        for (size_t f = 0; f < k; f++) ck_assert(fclose(tr[f]) == 0 && fclose(te[f]) == 0);
        free(text);
        free(fold);
        for (size_t o = 0; o < 3; o++) {
            char *out, *err;
            ck_assert_int_eq(run(&out, &err, "train %s --cv %zu %s --json", sets[d], k, opts[o]),
                             0);
            ck_assert_str_eq(err, "");
            double acc[8], sum = 0.0;
            ck_assert_uint_eq(json_array(out, "cv_accuracy", acc, 8), k);
            const char *model = tu_path("cvm", ".model");
            for (size_t f = 0; f < k; f++) {
                ok("train %s -o %s %s --quiet", trainf[f], model, opts[o]);
                double by_hand = accuracy(model, testf[f]);
                ck_assert_msg(fabs(by_hand - acc[f]) < 1e-8, "%s %s fold %zu: cv %.9g, by hand "
                              "%.9g", sets[d], opts[o], f + 1, acc[f], by_hand);
                sum += by_hand;
            }
            ck_assert_double_eq_tol(json_number(out, "cv_mean_accuracy"), sum / (double)k, 1e-8);
            free(out);
            free(err);
        }
    }
}
END_TEST

/* CSV rows "label,x1,...,xd" of a noisy two-class set whose features have ranges orders of
 * magnitude apart (x2 a thousand times, x3 a hundredth and shifted by 5). */
static void uneven_csv(const char *path, size_t n, unsigned seed)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    unsigned long long r = seed;
    for (size_t i = 0; i < n; i++) {
        double x[4], s = 0.0, w[4] = {0.5, -0.3, 0.8, 0.1};
        for (int j = 0; j < 4; j++) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            x[j] = (double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0;
            s += w[j] * x[j];
        }
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        int y = (s >= 0) != ((r >> 33) % 10 == 0) ? 1 : -1;
        fprintf(f, "%d,%.6g,%.6g,%.6g,%.6g\n", y, x[0], 1000.0 * x[1], 5.0 + 0.01 * x[2], x[3]);
    }
    ck_assert(fclose(f) == 0);
}

/* The smallest and largest value of column j (1-based features) of a CSV of numbers. */
static void column_range(const char *path, int j, double *lo, double *hi)
{
    char *text = tu_read_file(path, NULL);
    ck_assert_ptr_nonnull(text);
    *lo = INFINITY;
    *hi = -INFINITY;
    for (char *line = text; *line;) {
        char *at = line;
        for (int c = 0; c < j; c++) at = strchr(at, ',') + 1;
        double v = strtod(at, NULL);
        if (v < *lo) *lo = v;
        if (v > *hi) *hi = v;
        line = strchr(line, '\n') + 1;
    }
    free(text);
}

/* ptron scale: every feature to [-1, 1] (its ends reached) or [0, 1]; the saved parameters
 * scale the data again to the same bytes; info warns about the uneven ranges and not about
 * the scaled ones. */
START_TEST(test_scale_round_trip)
{
    const char *raw = keep(0, tu_path("scr", ".csv")), *s1 = keep(1, tu_path("sc1", ".csv"));
    const char *s2 = keep(2, tu_path("sc2", ".csv")), *par = keep(3, tu_path("scp", ".txt"));
    uneven_csv(raw, 500, 7);
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "info %s", raw), 0);
    HAS(err, "feature ranges differ by");
    free(out);
    free(err);
    const char *ranges[] = {"-1,1", "0,1"};
    for (int r = 0; r < 2; r++) {
        ok("scale %s -o %s --range %s --save-params %s", raw, s1, ranges[r], par);
        for (int j = 1; j <= 4; j++) {
            double lo, hi;
            column_range(s1, j, &lo, &hi);
            ck_assert_double_eq_tol(lo, r == 0 ? -1.0 : 0.0, 1e-6);
            ck_assert_double_eq_tol(hi, 1.0, 1e-6);
        }
        ok("scale %s -o %s --params %s", raw, s2, par);
        char *a = tu_read_file(s1, NULL), *b = tu_read_file(s2, NULL);
        ck_assert_str_eq(a, b);
        free(a);
        free(b);
    }
    ck_assert_int_eq(run(&out, &err, "info %s", s1), 0);
    ck_assert_msg(strstr(err, "feature ranges differ") == NULL, "%s", err);
    free(out);
    free(err);
    ok("scale %s -o %s --standardize", raw, s1);
    pt_dataset *ds;
    ck_assert_int_eq(pt_dataset_read(s1, NULL, &ds), PT_OK);
    for (size_t j = 0; j < 4; j++) {
        double sum = 0.0, sq = 0.0;
        for (size_t i = 0; i < 500; i++) sum += pt_dataset_row_const(ds, i)[j];
        for (size_t i = 0; i < 500; i++) {
            double e = pt_dataset_row_const(ds, i)[j] - sum / 500.0;
            sq += e * e;
        }
        ck_assert_double_eq_tol(sum / 500.0, 0.0, 1e-5);
        ck_assert_double_eq_tol(sqrt(sq / 500.0), 1.0, 1e-5);
    }
    pt_dataset_free(ds);
    ck_assert_int_eq(run(&out, &err, "scale %s -o %s --range 2,3", raw, s1), 1);
    free(out);
    free(err);
    const char *bad = tu_write_file("scb", ".txt", "ptron-scale 1\nkind 0,1\nd 2\n1 x\n");
    ck_assert_int_eq(run(&out, &err, "scale %s -o %s --params %s", raw, s1, bad), 2);
    HAS(err, ":4: expected 'OFFSET FACTOR'");
    free(out);
    free(err);
}
END_TEST

/* train --scale: the model keeps the scaling (a version 3 file) and predicts raw data with the
 * scores the plain model trained on the pre-scaled data gives on pre-scaled data, on every
 * path; the held-out accuracy on the uneven data improves; --cv fits each fold's own. */
START_TEST(test_scale_in_model)
{
    const char *raw = keep(0, tu_path("smr", ".csv")), *rawt = keep(1, tu_path("smt", ".csv"));
    const char *s = keep(2, tu_path("sms", ".csv")), *st = keep(3, tu_path("smst", ".csv"));
    const char *par = keep(4, tu_path("smp", ".txt"));
    const char *a = keep(5, tu_path("sma", ".model")), *b = keep(6, tu_path("smb", ".model"));
    uneven_csv(raw, 800, 11);
    uneven_csv(rawt, 400, 12);
    const char *kinds[] = {"-1,1", "0,1", "standardize"};
    const char *paths[] = {"--averaged --shuffle", "--path batch", "--path kernel --kernel rbf"};
    for (int k = 0; k < 3; k++) {
        ok("scale %s -o %s --save-params %s %s%s", raw, s, par,
           k == 2 ? "--standardize" : "--range ", k == 2 ? "" : kinds[k]);
        ok("scale %s -o %s --params %s", rawt, st, par);
        for (int p = 0; p < 3; p++) {
            ok("train %s -o %s --scale %s %s --quiet", raw, a, kinds[k], paths[p]);
            ok("train %s -o %s %s --quiet", s, b, paths[p]);
            char *sa = scores_of(a, rawt), *sb = scores_of(b, st);
            ck_assert_msg(strcmp(sa, sb) == 0, "--scale %s %s: scores differ", kinds[k],
                          paths[p]);
            free(sa);
            free(sb);
        }
    }
    /* more than two classes: one-vs-rest (voted too), the multiclass perceptron, kernels */
    const char *three = keep(7, tu_path("sm3", ".csv"));
    const char *three_s = keep(8, tu_path("sm3s", ".csv"));
    ok("gen blobs --n 300 --d 3 --classes 3 --seed 2 -o %s", three);
    ok("scale %s -o %s --standardize", three, three_s);
    const char *multi[] = {"--voted", "--multiclass direct", "--path batch",
                           "--path kernel --kernel rbf"};
    for (int p = 0; p < 4; p++) {
        ok("train %s -o %s --scale standardize %s --quiet", three, a, multi[p]);
        ok("train %s -o %s %s --quiet", three_s, b, multi[p]);
        char *sa = scores_of(a, three), *sb = scores_of(b, three_s);
        ck_assert_msg(strcmp(sa, sb) == 0, "three classes, %s: scores differ", multi[p]);
        free(sa);
        free(sb);
    }
    ok("train %s -o %s --scale standardize --quiet", raw, a);
    char *text = tu_read_file(a, NULL);
    ck_assert(strncmp(text, "ptron-model 3\n", 14) == 0);
    HAS(text, "\nscale standardize 4 ");
    free(text);
    ok("train %s -o %s --averaged --shuffle --quiet", raw, b);
    text = tu_read_file(b, NULL);
    ck_assert(strncmp(text, "ptron-model 1\n", 14) == 0); /* no scaling: the old version */
    free(text);
    double plain = accuracy(b, rawt);
    ok("train %s -o %s --averaged --shuffle --scale -1,1 --quiet", raw, a);
    double scaled = accuracy(a, rawt);
    ck_assert_msg(scaled > plain + 0.05, "scaled %g, plain %g", scaled, plain);
    char *out, *err;
    ck_assert_int_eq(run(&out, &err, "info %s", a), 0);
    HAS(out, "scales the features it scores (-1,1)");
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s --cv 3 --scale -1,1 --averaged --json", raw), 0);
    ck_assert(json_number(out, "cv_mean_accuracy") > plain + 0.05);
    free(out);
    free(err);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --scale 2,3", raw, a), 1);
    HAS(err, "unknown scaling");
    free(out);
    free(err);
    /* --cv, --search and --proba: what does not apply is a usage error */
    const char *bad[] = {"--cv 3 -o %s", "--search -o %s", "--cv 3 --proba --quiet %.0s"};
    for (int i = 0; i < 3; i++) {
        char opts[256];
        snprintf(opts, sizeof opts, bad[i], a);
        ck_assert_int_eq(run(&out, &err, "train %s %s", raw, opts), 1);
        HAS(err, "write");
        free(out);
        free(err);
    }
}
END_TEST

/* A model's text edited (from -> to) with its checksum made right again; loading it fails with
 * a message holding want. */
static void load_edited(const char *text, const char *from, const char *to, const char *want)
{
    const char *at = strstr(text, from), *ck = strstr(text, "checksum ");
    ck_assert(at && ck);
    size_t body = (size_t)(ck - text), k = (size_t)(at - text);
    char *out = malloc(strlen(text) + strlen(to) + 64);
    memcpy(out, text, k);
    strcpy(out + k, to);
    memcpy(out + k + strlen(to), at + strlen(from), body - k - strlen(from));
    size_t nb = body - strlen(from) + strlen(to);
    snprintf(out + nb, 64, "checksum %016llx\n", (unsigned long long)pt_checksum(out, nb));
    const char *p = tu_write_file("edited", ".model", out);
    free(out);
    pt_model *m = NULL;
    ck_assert_int_eq(pt_model_load(p, &m), PT_ERR_PARSE);
    ck_assert_ptr_null(m);
    ck_assert_msg(strstr(pt_last_error(), want) != NULL, "'%s' not in %s", want, pt_last_error());
}

/* The model file's scale line is checked: only in version 3, of the model's features. */
START_TEST(test_scale_model_file)
{
    const char *raw = keep(0, tu_path("smf", ".csv")), *a = keep(1, tu_path("smf", ".model"));
    uneven_csv(raw, 100, 13);
    ok("train %s -o %s --scale 0,1 --quiet", raw, a);
    char *text = tu_read_file(a, NULL);
    load_edited(text, "ptron-model 3\n", "ptron-model 2\n", ":");
    load_edited(text, "ptron-model 3\n", "ptron-model 2\n", "scale: a version 3 key");
    load_edited(text, "scale 0,1 4 ", "scale 0,1 3 ", "scale: expected 6 values, found more");
    load_edited(text, "scale 0,1 4 ", "scale 2,3 4 ", "scale: kind must be");
    free(text);
}
END_TEST

/* train --search: every row of the grid is the --cv run of its options, and the best is the
 * row of highest mean (the first of equals), on each path. */
START_TEST(test_search)
{
    const char *data = keep(0, tu_path("se", ".svm"));
    ok("gen noisy --n 300 --d 4 --seed 9 -o %s", data);
    const char *paths[] = {"", "--path batch", "--path kernel"};
    const size_t points[] = {12, 9, 12};
    for (int p = 0; p < 3; p++) {
        char *out, *err;
        ck_assert_int_eq(run(&out, &err, "train %s --search --cv 3 %s --json", data, paths[p]),
                         0);
        ck_assert_str_eq(err, "");
        const char *at = strstr(out, "\"grid\": {");
        ck_assert_ptr_nonnull(at);
        at += strlen("\"grid\": {");
        size_t rows = 0;
        double best = -1.0;
        char best_opts[256] = "";
        while (*at == '"') {
            const char *end = strchr(at + 1, '"');
            char opts[256];
            snprintf(opts, sizeof opts, "%.*s", (int)(end - at - 1), at + 1);
            double mean = strtod(end + 4, NULL); /* '": [' */
            if (mean > best) {
                best = mean;
                snprintf(best_opts, sizeof best_opts, "%s", opts);
            }
            if (rows % 4 == 0) { /* a few rows against --cv by hand */
                char *o2, *e2;
                ck_assert_int_eq(run(&o2, &e2, "train %s --cv 3 %s %s --json", data, paths[p],
                                     opts), 0);
                ck_assert_double_eq_tol(json_number(o2, "cv_mean_accuracy"), mean, 1e-8);
                free(o2);
                free(e2);
            }
            rows++;
            at = strchr(end, ']') + 1;
            if (*at == ',') at += 2;
        }
        ck_assert_uint_eq(rows, points[p]);
        char want[300];
        snprintf(want, sizeof want, "\"best\": \"%s\"", best_opts);
        HAS(out, want);
        ck_assert_double_eq_tol(json_number(out, "best_cv_mean_accuracy"), best, 1e-9);
        free(out);
        free(err);
    }
}
END_TEST

/* The numbers of a file after its header line (at most cap). */
static size_t read_column(const char *path, double *v, size_t cap)
{
    char *text = tu_read_file(path, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(text[0], '#');
    size_t n = 0;
    for (char *at = strchr(text, '\n') + 1; *at; n++) {
        char *end;
        ck_assert(n < cap);
        v[n] = strtod(at, &end);
        ck_assert_ptr_ne(end, at);
        at = end + 1;
    }
    free(text);
    return n;
}

/* train --proba, predict --proba: probabilities in (0, 1), increasing with the score (A < 0),
 * kept in the model file; on held-out data their log loss beats the base rate's; refused for
 * more than two classes and for a model trained without them. */
START_TEST(test_proba)
{
    const char *data = keep(0, tu_path("pb", ".svm")), *test = keep(1, tu_path("pbt", ".svm"));
    const char *model = keep(2, tu_path("pb", ".model")), *pr = keep(3, tu_path("pr", ".txt"));
    const char *sc = keep(4, tu_path("psc", ".txt")), *lab = keep(5, tu_path("pl", ".txt"));
    ok("gen noisy --n 2000 --d 8 --noise 0.1 --seed 4 -o %s --test-out %s --test-n 1000", data,
       test);
    const char *paths[] = {"--averaged --shuffle", "--path batch", "--path kernel --kernel rbf"};
    static double p[1000], f[1000];
    for (int k = 0; k < 3; k++) {
        ok("train %s -o %s %s --proba --quiet", data, model, paths[k]);
        char *text = tu_read_file(model, NULL);
        HAS(text, "\nplatt -");
        free(text);
        ok("predict %s %s --proba %s --scores %s -o %s --quiet", model, test, pr, sc, lab);
        ck_assert_uint_eq(read_column(pr, p, 1000), 1000);
        ck_assert_uint_eq(read_column(sc, f, 1000), 1000);
        char *labels = tu_read_file(test, NULL);
        double loss = 0.0, base = 0.0, pos = 0.0;
        char *line = labels;
        for (size_t i = 0; i < 1000; i++) {
            ck_assert(p[i] > 0.0 && p[i] < 1.0);
            for (size_t j = 0; j < 1000; j++)
                if (f[j] < f[i]) ck_assert_msg(p[j] <= p[i], "not increasing in the score");
            int y = strtol(line, NULL, 10) > 0;
            pos += y;
            loss -= log(y ? p[i] : 1.0 - p[i]);
            line = strchr(line, '\n') + 1;
        }
        for (char *l2 = labels; *l2; l2 = strchr(l2, '\n') + 1) {
            double q = pos / 1000.0;
            base -= log(strtol(l2, NULL, 10) > 0 ? q : 1.0 - q);
        }
        free(labels);
        ck_assert_msg(loss < 0.8 * base, "%s: log loss %g, the base rate's %g", paths[k], loss,
                      base);
    }
    char *out, *err;
    const char *four = tu_path("pb4", ".svm");
    ok("gen blobs --n 200 --d 2 --classes 4 -o %s", four);
    ck_assert_int_eq(run(&out, &err, "train %s -o %s --proba", four, model), 2);
    HAS(err, "for two classes");
    free(out);
    free(err);
    ok("train %s -o %s --quiet", data, model);
    ck_assert_int_eq(run(&out, &err, "predict %s %s --proba %s", model, test, pr), 2);
    HAS(err, "has no probabilities");
    free(out);
    free(err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("workflow");
    TCase *tc = tcase_create("workflow");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_batch_defaults_converge);
    tcase_add_test(tc, test_scores_file);
    tcase_add_test(tc, test_class_weight);
    tcase_add_test(tc, test_cv_folds);
    tcase_add_test(tc, test_cv_least_budget);
    tcase_add_test(tc, test_cv_equals_by_hand);
    tcase_add_test(tc, test_scale_round_trip);
    tcase_add_test(tc, test_scale_in_model);
    tcase_add_test(tc, test_scale_model_file);
    tcase_add_test(tc, test_search);
    tcase_add_test(tc, test_proba);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
