/* The bounded convert (LIBSVM and CSV to .ptd over the memory budget,
 * pt_dataset_convert_file): the file it writes window by window is the in-memory convert's,
 * byte for byte, in both layouts; a bad line still names file:line and leaves no output; text
 * read once (a pipe, gzip) is refused over the budget. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

/* A budget the test files exceed (so the bounded path runs, in several windows) but that
 * holds their labels and text buffers. */
#define SMALL_BUDGET (3u << 20)

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 33;
}

/* n rows of LIBSVM text: dense rows of d features (some explicit zeros), or sparse rows of a
 * few of d features (explicit zeros and svmlight's qid too); three classes, comments and blank
 * lines between. bad_line (0: none) is replaced by a line with a bad value. */
static const char *libsvm_file(size_t n, size_t d, bool sparse, size_t bad_line)
{
    const char *path = tu_path("convert", ".svm");
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    uint64_t s = 42;
    size_t line = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % 97 == 5) {
            fputs(i % 2 ? "# a comment\n" : "\n", f);
            line++;
        }
        if (++line == bad_line) {
            fputs("1 1:0.5 2:x\n", f);
            continue;
        }
        fprintf(f, "%d", (int)(lcg(&s) % 3) - 1);
        if (sparse && i % 7 == 0) fputs(" qid:3", f);
        for (size_t j = 1; j <= d; j++) {
            if (sparse && lcg(&s) % 100 >= 3) continue;
            long v = (long)(lcg(&s) % 2001) - 1000;
            if (lcg(&s) % 10 == 0) v = 0; /* an explicit zero */
            fprintf(f, " %zu:%.3f", j, (double)v / 250.0);
        }
        fputc('\n', f);
    }
    ck_assert_int_eq(fclose(f), 0);
    return path;
}

static void assert_same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = tu_read_file(a, &la), *y = tu_read_file(b, &lb);
    ck_assert_ptr_nonnull(x);
    ck_assert_ptr_nonnull(y);
    ck_assert_uint_eq(la, lb);
    ck_assert_msg(memcmp(x, y, la) == 0, "%s and %s differ", a, b);
    free(x);
    free(y);
}

/* Bounded and in-memory converts of path in layout l give the same bytes; the in-memory read
 * with the small budget is refused, so the bounded path did run. */
static void check_same(const char *in, pt_layout l)
{
    pt_read_options o;
    pt_read_options_init(&o);
    o.layout = l;
    o.threads = 2;
    const char *whole = tu_path("convert-mem", ".ptd");
    ck_assert_int_eq(pt_dataset_convert_file(in, &o, whole), PT_OK);
    o.mem_budget_bytes = SMALL_BUDGET;
    pt_dataset *ds = NULL;
    ck_assert_int_eq(pt_dataset_read(in, &o, &ds), PT_ERR_LIMIT);
    const char *bounded = tu_path("convert-bounded", ".ptd");
    pt_status s = pt_dataset_convert_file(in, &o, bounded);
    ck_assert_msg(s == PT_OK, "bounded convert: %s", pt_last_error());
    assert_same_file(whole, bounded);
    /* and it reads back */
    o.mem_budget_bytes = 0;
    ck_assert_int_eq(pt_dataset_read(bounded, &o, &ds), PT_OK);
    pt_dataset_free(ds);
}

START_TEST(dense_same_bytes)
{
    const char *in = libsvm_file(60000, 16, false, 0);
    check_same(in, PT_LAYOUT_DENSE);
    check_same(in, PT_LAYOUT_AUTO);
}
END_TEST

START_TEST(sparse_same_bytes)
{
    const char *in = libsvm_file(20000, 1000, true, 0);
    check_same(in, PT_LAYOUT_SPARSE);
    check_same(in, PT_LAYOUT_AUTO);
}
END_TEST

/* A bad line in a late window: file:line, and no output file (nor a temporary one). */
START_TEST(bad_line_no_output)
{
    const char *in = libsvm_file(60000, 16, false, 59000);
    pt_read_options o;
    pt_read_options_init(&o);
    o.mem_budget_bytes = SMALL_BUDGET;
    const char *out = tu_path("convert-bad", ".ptd");
    ck_assert_int_eq(pt_dataset_convert_file(in, &o, out), PT_ERR_PARSE);
    char want[4096];
    snprintf(want, sizeof want, "%s:59000: value 'x' of feature 2 is not a number", in);
    HAS(pt_last_error(), want);
    ck_assert_int_ne(access(out, F_OK), 0);
}
END_TEST

/* Standard input from a pipe cannot be read twice: over the budget the text at in (format:
 * "" or the --format option) is refused, naming the fix; the same text by its path converts. */
static void check_stdin_refused(const char *in, const char *format)
{
    const char *out = tu_path("convert-stdin", ".ptd");
    char errf[1024], pipe[4096], args[4096];
    snprintf(errf, sizeof errf, "%s", tu_path("convert-stdin", ".err"));
    snprintf(pipe, sizeof pipe, "cat %s | %s convert - %s -o %s --mem-mb 3 2>%s", in,
             getenv("PTRON_BIN"), format, out, errf);
    ck_assert_int_eq(tu_run_cli_sh(pipe, "--version", NULL, NULL), 0);
    char *err = tu_read_file(errf, NULL);
    ck_assert_ptr_nonnull(err);
    HAS(err, "give the path of"); /* an uncompressed file, or a file holding the text */
    free(err);
    ck_assert_int_ne(access(out, F_OK), 0);
    snprintf(args, sizeof args, "convert %s -o %s --mem-mb 3", in, out);
    ck_assert_int_eq(tu_run_cli(args, NULL, NULL), 0);
    ck_assert_int_eq(access(out, F_OK), 0);
}

START_TEST(stdin_refused)
{
    check_stdin_refused(libsvm_file(60000, 16, false, 0), "");
}
END_TEST

/* n rows of CSV text: a header, d features (a third of them zero, or with sparse 97% zero),
 * the label in the first column (numbers) or the last (words, one of them a number, one
 * quoted), blank lines between; bad_line (0: none) is replaced by a row with a bad value. */
static const char *csv_file(size_t n, size_t d, bool sparse, bool words, size_t bad_line)
{
    static const char *const names[] = {"cat", "dog", "\"bird\"", "7"};
    const char *path = tu_path("convert", ".csv");
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    uint64_t s = 7;
    size_t line = 1;
    fputs(words ? "" : "label", f);
    for (size_t j = 0; j < d; j++) fprintf(f, "%sf%zu", j || !words ? "," : "", j);
    fputs(words ? ",class\n" : "\n", f);
    for (size_t i = 0; i < n; i++) {
        if (i % 97 == 5) {
            fputs("\n", f);
            line++;
        }
        bool bad = ++line == bad_line;
        if (!words) fprintf(f, "%d", (int)(lcg(&s) % 3) - 1);
        for (size_t j = 0; j < d; j++) {
            long v = (long)(lcg(&s) % 2001) - 1000;
            if (lcg(&s) % 100 < (sparse ? 97u : 33u)) v = 0;
            const char *sep = j || !words ? "," : "";
            if (bad && j == d / 2) fprintf(f, "%sx", sep);
            else fprintf(f, "%s%.3f", sep, (double)v / 250.0);
        }
        if (words) fprintf(f, ",%s", names[lcg(&s) % 4]);
        fputc('\n', f);
    }
    ck_assert_int_eq(fclose(f), 0);
    return path;
}

static void check_same_csv(const char *in, pt_layout l, int label_column)
{
    pt_read_options o;
    pt_read_options_init(&o);
    o.layout = l;
    o.csv_label_column = label_column;
    const char *whole = tu_path("convert-mem", ".ptd");
    ck_assert_int_eq(pt_dataset_convert_file(in, &o, whole), PT_OK);
    o.mem_budget_bytes = SMALL_BUDGET;
    pt_dataset *ds = NULL;
    ck_assert_int_eq(pt_dataset_read(in, &o, &ds), PT_ERR_LIMIT);
    const char *bounded = tu_path("convert-bounded", ".ptd");
    pt_status s = pt_dataset_convert_file(in, &o, bounded);
    ck_assert_msg(s == PT_OK, "bounded convert: %s", pt_last_error());
    assert_same_file(whole, bounded);
    o.mem_budget_bytes = 0;
    ck_assert_int_eq(pt_dataset_read(bounded, &o, &ds), PT_OK);
    ck_assert_uint_eq(pt_dataset_n(ds), 60000);
    pt_dataset_free(ds);
}

/* CSV over the budget converts in bounded memory to the in-memory convert's bytes: dense
 * with a header and numeric labels, labels that are words (the class values their ranks),
 * sparse by auto and forced layouts. */
START_TEST(csv_same_bytes)
{
    check_same_csv(csv_file(60000, 16, false, false, 0), PT_LAYOUT_AUTO, 0);
    check_same_csv(csv_file(60000, 12, false, true, 0), PT_LAYOUT_DENSE, PT_CSV_LABEL_LAST);
    const char *sparse = csv_file(60000, 200, true, false, 0);
    check_same_csv(sparse, PT_LAYOUT_AUTO, 0);
    check_same_csv(sparse, PT_LAYOUT_SPARSE, 0);
}
END_TEST

/* A bad CSV value in a late window: file:line as the in-memory read says it, no output. */
START_TEST(csv_bad_line_no_output)
{
    const char *in = csv_file(60000, 16, false, false, 59000);
    pt_read_options o;
    pt_read_options_init(&o);
    pt_dataset *ds = NULL;
    ck_assert_int_eq(pt_dataset_read(in, &o, &ds), PT_ERR_PARSE);
    char want[4096];
    snprintf(want, sizeof want, "%s", pt_last_error());
    HAS(want, ":59000: column 10: 'x' is not a number");
    o.mem_budget_bytes = SMALL_BUDGET;
    const char *out = tu_path("convert-bad", ".ptd");
    ck_assert_int_eq(pt_dataset_convert_file(in, &o, out), PT_ERR_PARSE);
    ck_assert_str_eq(pt_last_error(), want);
    ck_assert_int_ne(access(out, F_OK), 0);
}
END_TEST

/* CSV from a pipe over the budget is refused with the fix; by its path it converts. */
START_TEST(csv_stdin_refused)
{
    check_stdin_refused(csv_file(60000, 16, false, false, 0), "--format csv");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("convert");
    TCase *tc = tcase_create("bounded");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, dense_same_bytes);
    tcase_add_test(tc, sparse_same_bytes);
    tcase_add_test(tc, bad_line_no_output);
    tcase_add_test(tc, stdin_refused);
    tcase_add_test(tc, csv_same_bytes);
    tcase_add_test(tc, csv_bad_line_no_output);
    tcase_add_test(tc, csv_stdin_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run_suite(suite()); }
