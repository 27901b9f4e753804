/* The practitioner's workflow end to end through the CLI: the batch path's defaults, decision
 * values (predict --scores), class weights, cross-validation. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define HAS(s, sub) ck_assert_msg(strstr((s), (sub)) != NULL, "'%s' not in: %s", (sub), (s))

static char path_buf[16][512];
static const char *keep(int slot, const char *p)
{
    snprintf(path_buf[slot], sizeof path_buf[slot], "%s", p);
    return path_buf[slot];
}

static int run(char **out, char **err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int run(char **out, char **err, const char *fmt, ...)
{
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    return tu_run_cli(args, out, err);
}

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
 * path's defaults and the README's Pegasos recipe reach the averaged online path's held-out
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

int main(void)
{
    Suite *s = suite_create("workflow");
    TCase *tc = tcase_create("workflow");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_batch_defaults_converge);
    tcase_add_test(tc, test_scores_file);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
