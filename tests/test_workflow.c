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

int main(void)
{
    Suite *s = suite_create("workflow");
    TCase *tc = tcase_create("workflow");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_batch_defaults_converge);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
