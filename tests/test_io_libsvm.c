/* LIBSVM reader and writer: round trips, number parsing against strtof, every refused input,
 * the accepted oddities, long lines, limits, and the same result on any thread count; each in
 * both layouts (the test cases run once reading dense and once sparse), the two layouts' rows
 * equal, and auto's choice between them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

/* The layout the running test case reads into (its fixture sets it). */
static pt_layout layout = PT_LAYOUT_DENSE;
static void read_dense(void) { layout = PT_LAYOUT_DENSE; }
static void read_sparse(void) { layout = PT_LAYOUT_SPARSE; }

static pt_read_options opts(int threads)
{
    pt_read_options o;
    pt_read_options_init(&o);
    o.threads = threads;
    o.layout = layout;
    return o;
}

/* Feature j of row i, either layout. */
static float at(const pt_dataset *ds, size_t i, size_t j)
{
    float *x = malloc(pt_dataset_stride(ds) * sizeof *x);
    tu_row_dense(ds, i, x);
    float v = x[j];
    free(x);
    return v;
}

static pt_dataset *read_ok(const char *path, int threads)
{
    pt_read_options o = opts(threads);
    pt_dataset *ds = NULL;
    pt_status s = pt_dataset_read(path, &o, &ds);
    ck_assert_msg(s == PT_OK, "read %s: %s", path, pt_last_error());
    ck_assert(ds != NULL);
    ck_assert_int_eq(pt_dataset_layout(ds), layout);
    if (layout == PT_LAYOUT_SPARSE) tu_assert_clean_csr(ds);
    return ds;
}

/* The status, and a message naming the file, the line (if line > 0) and the key word. */
static void check_error(pt_status got, pt_status want, const char *path, long line, const char *key)
{
    const char *msg = pt_last_error();
    ck_assert_msg(got == want, "status %d, want %d: %s", got, want, msg);
    ck_assert_msg(strstr(msg, path) != NULL, "message lacks the path: %s", msg);
    if (line > 0) {
        char tag[48];
        snprintf(tag, sizeof tag, "%s:%ld: ", path, line);
        ck_assert_msg(strstr(msg, tag) != NULL, "message lacks '%s': %s", tag, msg);
    }
    ck_assert_msg(strstr(msg, key) != NULL, "message lacks '%s': %s", key, msg);
}

/* Read text as a LIBSVM file with options o and check the failure. */
static void expect_fail_o(const char *text, const pt_read_options *o, pt_status want, long line,
                          const char *key)
{
    const char *path = tu_write_file("bad", ".svm", text);
    char p[512];
    snprintf(p, sizeof p, "%s", path);
    pt_dataset *ds = (pt_dataset *)1;
    pt_status s = pt_dataset_read(p, o, &ds);
    ck_assert(ds == NULL);
    check_error(s, want, p, line, key);
    unlink(p);
}

static void expect_fail(const char *text, long line, const char *key)
{
    pt_read_options o = opts(1);
    expect_fail_o(text, &o, PT_ERR_PARSE, line, key);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static double unif(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

/* A finite float from random bits (any exponent, subnormals included). */
static float random_bits_float(void)
{
    for (;;) {
        uint32_t b = (uint32_t)rnd();
        float f;
        memcpy(&f, &b, sizeof f);
        if (isfinite(f)) return f;
    }
}

/* (Element loops test with `if` and abort on failure: every ck_assert is a syscall.) */
static void assert_same_rows(const pt_dataset *a, const pt_dataset *b, size_t d)
{
    ck_assert_uint_eq(pt_dataset_n(a), pt_dataset_n(b));
    float *x = malloc(pt_dataset_stride(a) * sizeof *x),
          *y = malloc(pt_dataset_stride(b) * sizeof *y);
    for (size_t i = 0; i < pt_dataset_n(a); i++) {
        tu_row_dense(a, i, x);
        tu_row_dense(b, i, y);
        for (size_t j = 0; j < d; j++)
            if (memcmp(&x[j], &y[j], sizeof(float)) != 0)
                ck_abort_msg("row %zu col %zu: %.9g vs %.9g", i, j, x[j], y[j]);
        for (size_t j = d; j < pt_dataset_stride(b); j++)
            if (y[j] != 0.0f) ck_abort_msg("row %zu: padding at %zu is not zero", i, j);
        if (pt_dataset_label(a, i) != pt_dataset_label(b, i))
            ck_abort_msg("row %zu: label %g vs %g", i, pt_dataset_label(a, i), pt_dataset_label(b, i));
    }
    free(x);
    free(y);
}

/* ------------------------------------------------------------------ round trips */

START_TEST(roundtrip_dense)
{
    size_t n = 200, d = 37;
    pt_dataset *ds = pt_dataset_create(n, d);
    double *lab = malloc(n * sizeof *lab);
    for (size_t i = 0; i < n; i++) {
        float *x = pt_dataset_row(ds, i);
        for (size_t j = 0; j < d; j++) {
            uint64_t k = rnd() % 4;
            float v = k == 0 ? random_bits_float() : k == 1 ? (float)(unif() * 2 - 1)
                    : k == 2 ? (float)(int)(rnd() % 2001) - 1000.0f : (float)(unif() * 1e6);
            x[j] = v == 0.0f ? 0.0f : v; /* -0 is written as an absent zero */
        }
        x[d - 1] = 1.5f + (float)i;
        lab[i] = i % 3 ? 1.0 : -1.0;
    }
    ck_assert_int_eq(pt_dataset_set_labels(ds, lab), PT_OK);
    const char *path = tu_path("rt", ".svm");
    ck_assert_msg(pt_dataset_write(ds, path, PT_FORMAT_LIBSVM) == PT_OK, "%s", pt_last_error());
    pt_dataset *back = read_ok(path, 1);
    ck_assert_uint_eq(pt_dataset_d(back), d);
    ck_assert_uint_eq(pt_dataset_nclass(back), 2);
    assert_same_rows(ds, back, d);
    pt_dataset_free(back);
    back = read_ok(path, 4);
    assert_same_rows(ds, back, d);
    pt_dataset_free(back);
    pt_dataset_free(ds);
    free(lab);
    unlink(path);
}
END_TEST

START_TEST(roundtrip_sparse_trailing_zero_columns)
{
    size_t n = 300, d = 20, nnz = 0;
    pt_dataset *ds = pt_dataset_create(n, d);
    double *lab = malloc(n * sizeof *lab);
    static const double classes[] = {0.0, 1.0, 2.0, 7.5};
    for (size_t i = 0; i < n; i++) {
        float *x = pt_dataset_row(ds, i);
        for (size_t j = 0; j < 17; j++) /* columns 18..20 stay all zero */
            if (i % 10 != 3 && rnd() % 5 == 0) {
                x[j] = (float)(unif() * 200 - 100);
                nnz += x[j] != 0.0f;
            }
        lab[i] = classes[i % 4];
    }
    pt_dataset_row(ds, 7)[16] = 3.25f; /* column 17 is the last one present */
    nnz++;
    ck_assert_int_eq(pt_dataset_set_labels(ds, lab), PT_OK);
    const char *path = tu_path("rts", ".libsvm");
    ck_assert_int_eq(pt_dataset_write(ds, path, PT_FORMAT_LIBSVM), PT_OK);
    pt_dataset *back = read_ok(path, 2);
    ck_assert_uint_eq(pt_dataset_d(back), 17);
    ck_assert_uint_eq(pt_dataset_nclass(back), 4);
    for (size_t k = 0; k < 4; k++) ck_assert(pt_dataset_class_value(back, k) == classes[k]);
    assert_same_rows(ds, back, 17);
    pt_dataset_info info;
    pt_dataset_get_info(back, &info);
    ck_assert_uint_eq(info.nnz, nnz);
    pt_dataset_free(back);
    pt_dataset_free(ds);
    free(lab);
    unlink(path);
}
END_TEST

START_TEST(writer_text)
{
    const float x[] = {0.5f, 0.0f, 2.0f, 0.0f, -1.25f, 0.0f, 0.0f, 0.0f, 0.0f, 1e-7f, 123456789.0f, 1e9f};
    const double lab[] = {1.0, -1.0, 1.0, 0.1};
    pt_dataset *ds = tu_dataset(4, 3, x, lab);
    const char *path = tu_path("wt", ".svm");
    ck_assert_int_eq(pt_dataset_write(ds, path, PT_FORMAT_LIBSVM), PT_OK);
    char *text = tu_read_file(path, NULL);
    ck_assert_str_eq(text, "1 1:0.5 3:2\n-1 2:-1.25\n1\n0.1 1:1.00000001e-07 2:123456792 3:1e+09\n");
    free(text);
    pt_dataset_free(ds);
    unlink(path);
}
END_TEST

/* ------------------------------------------------------------- number parsing */

/* Values as text, each compared bit for bit with strtof on the same text. */
#define NVAL 24000
static char vals[NVAL][64];

static void fill_values(size_t *count)
{
    static const char *odd[] = {
        "1e-45", "3.4028235e38", "-0.0", "1e+10", ".5", "5.", "1E5", "+1.5", "-.25", "0x1p3",
        "1.17549435e-38", "1.4e-45", "7e-46", "3.40282356e38", "1e-50", "0.000000000000000000000000000001",
        "123456789012345678901234567890", "16777217", "16777219", "33554435", "-16777217",
        "0.5000000298023223876953125", "16777217.000000001", "0", "00000000000000000000001.5",
        "9007199254740993", "1e22", "1e23", "1e-22", "1e-23", "4.2E+3", "2.", "0e999", "1.5e-0",
        "0.1", "0.2", "0.3", "1.00000005960464477539", "0.99999997", "8388608.5", "8388609.5",
    };
    size_t n = 0;
    for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++) snprintf(vals[n++], 64, "%s", odd[k]);
    static const char *fmts[] = {"%.9g", "%.6g", "%.12g", "%.17g", "%.3e", "%.15g", "%.16g", "%.8g"};
    while (n < NVAL) {
        uint64_t kind = rnd() % 6;
        const char *fmt = fmts[rnd() % 8];
        double v;
        if (kind == 0) v = random_bits_float();
        else if (kind == 1) v = unif() * 2 - 1;
        else if (kind == 2) v = (unif() - 0.5) * pow(10.0, (double)(rnd() % 40) - 20);
        else if (kind == 3) { /* exactly between two floats, then rounded to 15-17 digits */
            float f = (float)((unif() + 0.01) * pow(10.0, (double)(rnd() % 20) - 10));
            v = ((double)f + (double)nextafterf(f, INFINITY)) / 2;
            fmt = fmts[3 + rnd() % 2 * 3]; /* %.17g or %.16g */
        } else if (kind == 4) {
            v = (double)(rnd() % 100000000) * pow(10.0, -(double)(rnd() % 23));
        } else {
            v = (float)(unif() * 2 - 1);
            fmt = "%.9g";
        }
        snprintf(vals[n++], 64, fmt, v);
    }
    *count = n;
}

START_TEST(parse_matches_strtof)
{
    size_t count, per_line = 100;
    fill_values(&count);
    size_t cap = count * 80 + 1024, len = 0;
    char *text = malloc(cap);
    for (size_t i = 0; i < count; i++) {
        if (i % per_line == 0) len += (size_t)snprintf(text + len, cap - len, "%s1", i ? "\n" : "");
        len += (size_t)snprintf(text + len, cap - len, " %zu:%s", i % per_line + 1, vals[i]);
    }
    text[len++] = '\n';
    const char *path = tu_write_bytes("num", ".svm", text, len);
    for (int threads = 1; threads <= 2; threads++) {
        pt_dataset *ds = read_ok(path, threads);
        float *row = malloc(pt_dataset_stride(ds) * sizeof *row);
        for (size_t i = 0; i < count; i++) {
            if (i % per_line == 0) tu_row_dense(ds, i / per_line, row);
            float want = strtof(vals[i], NULL);
            float got = row[i % per_line];
            /* the sparse layout stores no zero: -0 reads as absent */
            if (layout == PT_LAYOUT_SPARSE && want == 0.0f) want = 0.0f;
            if (memcmp(&want, &got, sizeof want) != 0)
                ck_abort_msg("'%s': got %a, strtof %a", vals[i], (double)got, (double)want);
        }
        free(row);
        pt_dataset_free(ds);
    }
    free(text);
    unlink(path);
}
END_TEST

START_TEST(labels_any_numbers)
{
    const char *path = tu_write_file("lab", ".svm", "+1 1:1\n-1 1:2\n1.0 1:3\n-1e0 1:4\n");
    pt_dataset *ds = read_ok(path, 1);
    ck_assert_uint_eq(pt_dataset_nclass(ds), 2);
    ck_assert(pt_dataset_label(ds, 0) == 1.0 && pt_dataset_label(ds, 3) == -1.0);
    ck_assert(pt_dataset_y(ds)[2] == 1.0f && pt_dataset_y(ds)[1] == -1.0f);
    pt_dataset_free(ds);
    unlink(path);
}
END_TEST

/* ------------------------------------------------------------- refused inputs */

START_TEST(err_missing_file)
{
    pt_read_options o = opts(1);
    pt_dataset *ds;
    const char *path = tu_path("missing", ".svm");
    check_error(pt_dataset_read(path, &o, &ds), PT_ERR_IO, path, 0, "No such file");
}
END_TEST

START_TEST(err_directory)
{
    pt_read_options o = opts(1);
    pt_dataset *ds;
    const char *dir = getenv("PTRON_TEST_TMP") ? getenv("PTRON_TEST_TMP") : "/tmp";
    o.format = PT_FORMAT_LIBSVM;
    check_error(pt_dataset_read(dir, &o, &ds), PT_ERR_IO, dir, 0, "directory");
}
END_TEST

START_TEST(err_empty_file) { expect_fail("", 0, "no data rows"); }
END_TEST

START_TEST(err_only_comments) { expect_fail("# nothing\n\n   \n# more\n", 0, "no data rows"); }
END_TEST

START_TEST(err_label_not_number) { expect_fail("1 1:2\nabc 1:2\n", 2, "label 'abc' is not a number"); }
END_TEST

START_TEST(err_label_nan) { expect_fail("# c\n1 1:2\nnan 1:2\n", 3, "label 'nan' is not finite"); }
END_TEST

START_TEST(err_label_inf) { expect_fail("-inf 1:2\n", 1, "not finite"); }
END_TEST

START_TEST(err_missing_label) { expect_fail("1 1:1\n1:2 3:4\n", 2, "label '1:2' is not a number"); }
END_TEST

START_TEST(err_index_zero) { expect_fail("1 1:1\n\n1 0:1 2:3\n", 3, "feature index 0 must be >= 1"); }
END_TEST

START_TEST(err_index_negative) { expect_fail("1 -2:1\n", 1, "feature index -2 must be >= 1"); }
END_TEST

START_TEST(err_index_not_increasing)
{
    expect_fail("1 1:1 2:2\n1 3:1 2:1\n", 2, "strictly increasing");
}
END_TEST

START_TEST(err_index_repeated) { expect_fail("1 2:1 2:3\n", 1, "strictly increasing"); }
END_TEST

/* A large index before a small one on the same line: must not write past the row. */
START_TEST(err_large_index_then_small)
{
    expect_fail("1 1:1\n1 100000:1 3:1\n1 5:1\n", 2, "strictly increasing");
}
END_TEST

START_TEST(err_index_over_max_features)
{
    pt_read_options o = opts(1);
    o.max_features = 10;
    expect_fail_o("1 1:1 10:1\n1 11:1\n", &o, PT_ERR_PARSE, 2, "pt_read_options.max_features");
    expect_fail_o("1 1:1 99999999999999999999999999:1\n", &o, PT_ERR_PARSE, 1, "limit of 10");
}
END_TEST

START_TEST(max_features_at_limit)
{
    pt_read_options o = opts(1);
    o.max_features = 5;
    const char *path = tu_write_file("maxf", ".svm", "1 5:1\n-1 2:1\n");
    pt_dataset *ds;
    ck_assert_int_eq(pt_dataset_read(path, &o, &ds), PT_OK);
    ck_assert_uint_eq(pt_dataset_d(ds), 5);
    pt_dataset_free(ds);
    unlink(path);
}
END_TEST

START_TEST(err_missing_value)
{
    expect_fail("1 1:1\n1 3:\n", 2, "missing value after '3:'");
    expect_fail("1 3: 4:1\n", 1, "missing value");
    expect_fail("1 3:#x\n", 1, "missing value");
}
END_TEST

START_TEST(err_value_not_number)
{
    expect_fail("1 1:1\n-1 2:1 3:abc\n", 2, "value 'abc' of feature 3 is not a number");
    expect_fail("1 2:1.5.5\n", 1, "not a number");
    expect_fail("1 2:1e\n", 1, "not a number");
    expect_fail("1 2:1,5\n", 1, "not a number");
}
END_TEST

START_TEST(err_value_nan) { expect_fail("1 1:1 2:nan\n", 1, "value 'nan' of feature 2 is not finite"); }
END_TEST

START_TEST(err_value_inf)
{
    expect_fail("1 1:inf\n", 1, "not finite");
    expect_fail("1 1:-Infinity\n", 1, "not finite");
    expect_fail("1 1:1e39\n", 1, "not finite"); /* overflows float */
}
END_TEST

START_TEST(err_token_without_colon) { expect_fail("1 3 4:1\n", 1, "expected INDEX:VALUE, got '3'"); }
END_TEST

START_TEST(err_garbage_token) { expect_fail("1 1:2 foo\n", 1, "got 'foo'"); }
END_TEST

START_TEST(err_nul_byte)
{
    const char *path = tu_write_bytes("nul", ".svm", "1 1:2\n1 1:2\0 2:1\n", 17);
    char p[512];
    snprintf(p, sizeof p, "%s", path);
    pt_read_options o = opts(1);
    pt_dataset *ds;
    check_error(pt_dataset_read(p, &o, &ds), PT_ERR_PARSE, p, 2, "not a number");
    unlink(p);
}
END_TEST

START_TEST(err_error_line_counts_comments_and_crlf)
{
    expect_fail("# a\r\n\r\n1 1:1\r\n   # b\r\n\t\r\n1 1:x\r\n", 6, "not a number");
}
END_TEST

/* ------------------------------------------------------------- accepted oddities */

START_TEST(accepts_oddities)
{
    const char *text = "# header comment\n"
                       "\n"
                       "1 1:0.5 3:1 # trailing comment\r\n"
                       "-1 qid:3 2:2\t \r\n"
                       "   \t\n"
                       "#\n"
                       "+1 1:1e1 2:.5 3:5.#glued comment\n"
                       "0 1:-0 3:1E-1";
    const char *path = tu_write_file("odd", ".svm", text);
    for (int threads = 1; threads <= 2; threads++) {
        pt_dataset *ds = read_ok(path, threads);
        ck_assert_uint_eq(pt_dataset_n(ds), 4);
        ck_assert_uint_eq(pt_dataset_d(ds), 3);
        ck_assert_uint_eq(pt_dataset_nclass(ds), 3);
        const float want[4][3] = {{0.5f, 0, 1}, {0, 2, 0}, {10, 0.5f, 5}, {0, 0, 0.1f}};
        const double labels[4] = {1, -1, 1, 0};
        for (size_t i = 0; i < 4; i++) {
            for (size_t j = 0; j < 3; j++) ck_assert(at(ds, i, j) == want[i][j]);
            ck_assert(pt_dataset_label(ds, i) == labels[i]);
        }
        pt_dataset_info info;
        pt_dataset_get_info(ds, &info);
        ck_assert_uint_eq(info.nnz, 7);
        pt_dataset_free(ds);
    }
    unlink(path);
}
END_TEST

START_TEST(label_only_rows)
{
    const char *path = tu_write_file("lo", ".svm", "1\n-1 2:3\n1 # c\n");
    pt_dataset *ds = read_ok(path, 1);
    ck_assert_uint_eq(pt_dataset_n(ds), 3);
    ck_assert_uint_eq(pt_dataset_d(ds), 2);
    ck_assert(at(ds, 1, 1) == 3.0f);
    pt_dataset_free(ds);
    unlink(path);
}
END_TEST

START_TEST(reads_from_pipe)
{
    int fds[2];
    ck_assert(pipe(fds) == 0);
    const char *text = "1 1:1 2:2\n-1 2:3\n";
    ck_assert(write(fds[1], text, strlen(text)) == (ssize_t)strlen(text));
    close(fds[1]);
    char path[64];
    snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
    pt_dataset *ds = read_ok(path, 2);
    ck_assert_uint_eq(pt_dataset_n(ds), 2);
    ck_assert(at(ds, 1, 1) == 3.0f);
    pt_dataset_free(ds);
    close(fds[0]);
}
END_TEST

START_TEST(very_long_line)
{
    size_t d = 200000, cap = d * 24 + 64, len = 0;
    char *text = malloc(cap);
    len += (size_t)snprintf(text, cap, "-1 1:7\n1");
    for (size_t j = 1; j <= d; j++)
        len += (size_t)snprintf(text + len, cap - len, " %zu:%.9g", j, (double)(float)(j * 0.25 + 0.1));
    len += (size_t)snprintf(text + len, cap - len, "\n-1 3:2");
    const char *path = tu_write_bytes("long", ".svm", text, len);
    for (int threads = 1; threads <= 3; threads += 2) {
        pt_dataset *ds = read_ok(path, threads);
        ck_assert_uint_eq(pt_dataset_n(ds), 3);
        ck_assert_uint_eq(pt_dataset_d(ds), d);
        float *x = malloc(pt_dataset_stride(ds) * sizeof *x);
        tu_row_dense(ds, 1, x);
        for (size_t j = 1; j <= d; j++)
            if (x[j - 1] != (float)(j * 0.25 + 0.1)) ck_abort_msg("feature %zu: %.9g", j, x[j - 1]);
        free(x);
        ck_assert(at(ds, 0, 0) == 7.0f && at(ds, 2, 2) == 2.0f);
        pt_dataset_free(ds);
    }
    free(text);
    unlink(path);
}
END_TEST

START_TEST(memory_budget_refused)
{
    pt_read_options o = opts(1);
    o.mem_budget_bytes = 1000;
    /* 100 rows x 10 features need 100 * 16 * 4 = 6400 bytes dense, (100 + 1) * 8 + 100 * 8 =
     * 1608 sparse (the first pass counts entries, the explicit zero of the first row too) */
    size_t cap = 100 * 16, len = 0;
    char text[100 * 16];
    for (int i = 0; i < 100; i++) len += (size_t)snprintf(text + len, cap - len, "1 10:%d\n", i);
    const char *path = tu_write_file("budget", ".svm", text);
    char p[512];
    snprintf(p, sizeof p, "%s", path);
    pt_dataset *ds = (pt_dataset *)1;
    check_error(pt_dataset_read(p, &o, &ds), PT_ERR_LIMIT, p, 0, "budget");
    ck_assert(ds == NULL);
    ck_assert(strstr(pt_last_error(), layout == PT_LAYOUT_DENSE ? "MiB dense" : "MiB sparse"));
    size_t need = layout == PT_LAYOUT_DENSE ? 6400 : 1608;
    o.mem_budget_bytes = need - 1;
    check_error(pt_dataset_read(p, &o, &ds), PT_ERR_LIMIT, p, 0, "budget");
    o.mem_budget_bytes = need;
    ck_assert_int_eq(pt_dataset_read(p, &o, &ds), PT_OK);
    ck_assert_uint_eq(pt_dataset_nnz(ds), 99);
    pt_dataset_free(ds);
    unlink(p);
}
END_TEST

/* ------------------------------------------------------------- threads */

/* About 10,000 lines of mixed content (comments with ':' in them, blanks, CRLF, sparse rows,
 * explicit zeros and qid: tokens, which the first pass counts as entries and the second
 * leaves out of the sparse layout). */
static char *mixed_text(size_t lines, size_t *len)
{
    size_t cap = lines * 240, n = 0;
    char *t = malloc(cap);
    for (size_t i = 1; i <= lines; i++) {
        uint64_t k = rnd() % 20;
        if (k == 0) n += (size_t)snprintf(t + n, cap - n, "# comment %zu: a:b\n", i);
        else if (k == 1) n += (size_t)snprintf(t + n, cap - n, "  \n");
        else {
            n += (size_t)snprintf(t + n, cap - n, "%d", (int)(rnd() % 3) - 1);
            if (k == 3) n += (size_t)snprintf(t + n, cap - n, " qid:%zu", i);
            for (size_t j = 1; j <= 60; j++)
                if (rnd() % 6 == 0) {
                    uint64_t z = rnd() % 16;
                    if (z < 2)
                        n += (size_t)snprintf(t + n, cap - n, " %zu:%s", j, z ? "-0" : "0.0");
                    else
                        n += (size_t)snprintf(t + n, cap - n, " %zu:%.9g", j,
                                              (double)(float)(unif() * 4 - 2));
                }
            n += (size_t)snprintf(t + n, cap - n, k == 2 ? " #x:1\r\n" : "\n");
        }
    }
    *len = n;
    return t;
}

START_TEST(threads_same_result)
{
    size_t len;
    char *text = mixed_text(10000, &len);
    const char *path = tu_write_bytes("thr", ".svm", text, len);
    char p[512];
    snprintf(p, sizeof p, "%s", path);
    pt_dataset *one = read_ok(p, 1);
    pt_dataset_info i1, ik;
    pt_dataset_get_info(one, &i1);
    for (int threads = 2; threads <= 8; threads += 3) {
        pt_dataset *ds = read_ok(p, threads);
        ck_assert_uint_eq(pt_dataset_d(ds), pt_dataset_d(one));
        assert_same_rows(one, ds, pt_dataset_d(one));
        pt_dataset_get_info(ds, &ik);
        ck_assert_uint_eq(ik.nnz, i1.nnz);
        pt_dataset_free(ds);
    }
    pt_dataset_free(one);
    free(text);
    unlink(p);
}
END_TEST

/* Start of line `line` (1-based) in text. */
static char *line_at(char *text, size_t line)
{
    char *p = text;
    for (size_t i = 1; i < line; i++) p = strchr(p, '\n') + 1;
    return p;
}

/* Replace the first character of a line (its label or '#' or a blank) to break it. */
static void break_line(char *text, size_t line, char c)
{
    char *p = line_at(text, line);
    if (*p == '#' || *p == ' ') p[1] = c; /* a comment or blank line: make it data */
    p[0] = c;
}

START_TEST(threads_first_error_wins)
{
    size_t len;
    char *text = mixed_text(10000, &len), *orig = malloc(len);
    memcpy(orig, text, len);
    break_line(text, 9000, 'x');
    break_line(text, 5000, 'y');
    break_line(text, 2500, 'z');
    const char *path = tu_write_bytes("thre", ".svm", text, len);
    char p[512], first[1024];
    snprintf(p, sizeof p, "%s", path);
    pt_read_options o = opts(1);
    pt_dataset *ds;
    check_error(pt_dataset_read(p, &o, &ds), PT_ERR_PARSE, p, 2500, "not a number");
    snprintf(first, sizeof first, "%s", pt_last_error());
    for (int threads = 2; threads <= 8; threads += 3) {
        o.threads = threads;
        check_error(pt_dataset_read(p, &o, &ds), PT_ERR_PARSE, p, 2500, "not a number");
        ck_assert_str_eq(pt_last_error(), first);
    }
    /* Only the error in the last part of the file left. */
    memcpy(text, orig, len);
    break_line(text, 9000, 'x');
    const char *path2 = tu_write_bytes("thre2", ".svm", text, len);
    char p2[512];
    snprintf(p2, sizeof p2, "%s", path2);
    for (int threads = 1; threads <= 8; threads += 7) {
        o.threads = threads;
        check_error(pt_dataset_read(p2, &o, &ds), PT_ERR_PARSE, p2, 9000, "not a number");
    }
    free(text);
    free(orig);
    unlink(p);
    unlink(p2);
}
END_TEST

/* ------------------------------------------------------------- the two layouts */

static pt_dataset *read_as(const char *path, pt_layout l, int threads, size_t budget)
{
    pt_read_options o;
    pt_read_options_init(&o);
    o.layout = l;
    o.threads = threads;
    if (budget) o.mem_budget_bytes = budget;
    pt_dataset *ds = NULL;
    ck_assert_msg(pt_dataset_read(path, &o, &ds) == PT_OK, "%s: %s", path, pt_last_error());
    return ds;
}

/* The same file read dense and sparse, on 1, 2 and 5 threads (chunks whose entries came out
 * fewer than counted, and the gaps between them closed): the same rows, a clean sparse layout
 * with no explicit zero. */
START_TEST(layouts_agree)
{
    size_t len;
    char *text = mixed_text(20000, &len);
    const char *path = tu_write_bytes("lay", ".svm", text, len);
    char p[512];
    snprintf(p, sizeof p, "%s", path);
    pt_dataset *dense = read_as(p, PT_LAYOUT_DENSE, 1, 0);
    for (int threads = 1; threads <= 5; threads += threads == 1 ? 1 : 3) {
        pt_dataset *sp = read_as(p, PT_LAYOUT_SPARSE, threads, 0);
        tu_assert_clean_csr(sp);
        tu_assert_same_data(dense, sp, "dense vs sparse");
        pt_dataset_info a, b;
        pt_dataset_get_info(dense, &a);
        pt_dataset_get_info(sp, &b);
        ck_assert(a.R == b.R && a.density == b.density && b.layout == PT_LAYOUT_SPARSE);
        pt_dataset_free(sp);
    }
    pt_dataset_free(dense);
    free(text);
    unlink(p);
}
END_TEST

START_TEST(explicit_zeros_left_out)
{
    const char *path =
        tu_write_file("zero", ".svm", "1 1:0 2:3 3:-0 4:0.0e5 6:0\n-1 5:-2\n1 2:0\n");
    pt_dataset *ds = read_as(path, PT_LAYOUT_SPARSE, 1, 0);
    const uint64_t *rowptr;
    const uint32_t *col;
    const float *val;
    ck_assert_int_eq(pt_dataset_csr(ds, &rowptr, &col, &val), PT_OK);
    ck_assert_uint_eq(pt_dataset_d(ds), 6); /* the largest index read, a zero's too */
    ck_assert_uint_eq(pt_dataset_nnz(ds), 2);
    ck_assert(rowptr[1] == 1 && rowptr[2] == 2 && rowptr[3] == 2);
    ck_assert(col[0] == 1 && val[0] == 3.0f && col[1] == 4 && val[1] == -2.0f);
    pt_dataset_free(ds);
    unlink(path);
}
END_TEST

/* Text of n rows: row i holds k features (1..k) when i < rich, else one (feature d). */
static const char *rows_file(size_t n, size_t rich, size_t k, size_t d)
{
    size_t cap = n * (k * 12 + 24), len = 0;
    char *t = malloc(cap);
    for (size_t i = 0; i < n; i++) {
        len += (size_t)snprintf(t + len, cap - len, "%d", i % 2 ? 1 : -1);
        if (i < rich)
            for (size_t j = 1; j <= k; j++)
                len += (size_t)snprintf(t + len, cap - len, " %zu:1", j);
        else
            len += (size_t)snprintf(t + len, cap - len, " %zu:2", d);
        t[len++] = '\n';
    }
    const char *p = tu_write_bytes("auto", ".svm", t, len);
    free(t);
    return p;
}

/* auto: sparse below density 1/4, dense from it; the other layout when only it fits the budget;
 * both sizes named when neither does. */
START_TEST(auto_layout_choice)
{
    /* 8 rows x 8 features: 16 non-zeros (density 1/4) is dense, 15 sparse */
    ck_assert_int_eq(pt_layout_choose(8, 8, 16, 0), PT_LAYOUT_DENSE);
    ck_assert_int_eq(pt_layout_choose(8, 8, 15, 0), PT_LAYOUT_SPARSE);
    ck_assert_int_eq(pt_layout_choose(8, 0, 0, 0), PT_LAYOUT_DENSE);
    ck_assert_int_eq(pt_layout_choose(8, (size_t)UINT32_MAX + 1, 1, 0), PT_LAYOUT_DENSE);
    /* dense 8 x 8 is 512 bytes, sparse with 40 non-zeros 72 + 320 = 392 */
    ck_assert_int_eq(pt_layout_choose(8, 8, 40, 511), PT_LAYOUT_SPARSE);
    ck_assert_int_eq(pt_layout_choose(8, 8, 40, 512), PT_LAYOUT_DENSE);
    ck_assert_int_eq(pt_layout_choose(8, 8, 40, 100), PT_LAYOUT_DENSE);

    /* 8 rows, 1 with features 1..8 and 7 with feature 8: 15 of 64 (sparse); 2 rich rows: 22
     * of 64 (dense) */
    const char *sp = rows_file(8, 1, 8, 8);
    char p[512];
    snprintf(p, sizeof p, "%s", sp);
    pt_dataset *ds = read_as(p, PT_LAYOUT_AUTO, 1, 0);
    ck_assert_int_eq(pt_dataset_layout(ds), PT_LAYOUT_SPARSE);
    pt_dataset_free(ds);
    unlink(p);
    const char *dn = rows_file(8, 2, 8, 8);
    snprintf(p, sizeof p, "%s", dn);
    ds = read_as(p, PT_LAYOUT_AUTO, 2, 0);
    ck_assert_int_eq(pt_dataset_layout(ds), PT_LAYOUT_DENSE);
    pt_dataset_free(ds);
    /* the dense one needs 512 bytes, sparse 72 + 22 * 8 = 248: a budget between flips it */
    ds = read_as(p, PT_LAYOUT_AUTO, 1, 511);
    ck_assert_int_eq(pt_dataset_layout(ds), PT_LAYOUT_SPARSE);
    pt_dataset_free(ds);
    ds = read_as(p, PT_LAYOUT_AUTO, 1, 248);
    ck_assert_int_eq(pt_dataset_layout(ds), PT_LAYOUT_SPARSE);
    pt_dataset_free(ds);
    pt_read_options o;
    pt_read_options_init(&o);
    o.mem_budget_bytes = 247;
    check_error(pt_dataset_read(p, &o, &ds), PT_ERR_LIMIT, p, 0, "MiB sparse (22 non-zeros)");
    ck_assert(strstr(pt_last_error(), "MiB dense") && strstr(pt_last_error(), "either way"));
    unlink(p);
}
END_TEST

/* The sparse layout takes any index below 2^32 (with --max-features raised): d = 2^32 - 1
 * costs nothing, while dense is refused; an index past 32 bits is refused sparse. */
START_TEST(sparse_wide_index)
{
    const char *path = tu_write_file("wide", ".svm", "1 3:1 4294967295:2\n-1 7:1\n");
    char p[512];
    snprintf(p, sizeof p, "%s", path);
    pt_read_options o;
    pt_read_options_init(&o);
    o.max_features = (size_t)1 << 40;
    pt_dataset *ds;
    ck_assert_int_eq(pt_dataset_read(p, &o, &ds), PT_OK);
    ck_assert_int_eq(pt_dataset_layout(ds), PT_LAYOUT_SPARSE);
    ck_assert_uint_eq(pt_dataset_d(ds), UINT32_MAX);
    const uint64_t *rowptr;
    const uint32_t *col;
    const float *val;
    ck_assert_int_eq(pt_dataset_csr(ds, &rowptr, &col, &val), PT_OK);
    ck_assert(rowptr[2] == 3 && col[1] == UINT32_MAX - 1 && val[1] == 2.0f && col[2] == 6);
    pt_dataset_free(ds);
    o.layout = PT_LAYOUT_DENSE;
    check_error(pt_dataset_read(p, &o, &ds), PT_ERR_LIMIT, p, 0, "MiB dense");
    unlink(p);

    path = tu_write_file("wider", ".svm", "1 3:1 4294967296:2\n");
    snprintf(p, sizeof p, "%s", path);
    o.layout = PT_LAYOUT_SPARSE;
    check_error(pt_dataset_read(p, &o, &ds), PT_ERR_LIMIT, p, 0, "32-bit");
    unlink(p);
}
END_TEST

/* The writer from the sparse layout: the same text as from the dense copy; read back sparse,
 * the same arrays bit for bit (values are written to round trip); a caller's explicit zero is
 * not written. */
START_TEST(writer_from_sparse)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_SPARSE;
    g.n = 2000;
    g.d = 300; /* every column is drawn in 2000 rows of about 20 */
    g.nnz = 20;
    g.seed = 11;
    pt_dataset *sp, *dense;
    ck_assert_msg(pt_generate(&g, &sp) == PT_OK, "%s", pt_last_error());
    ck_assert_int_eq(pt_dataset_convert(sp, PT_LAYOUT_DENSE, 0, &dense), PT_OK);
    char p1[512], p2[512];
    snprintf(p1, sizeof p1, "%s", tu_path("wsp", ".svm"));
    snprintf(p2, sizeof p2, "%s", tu_path("wsd", ".svm"));
    ck_assert_msg(pt_dataset_write(sp, p1, PT_FORMAT_LIBSVM) == PT_OK, "%s", pt_last_error());
    ck_assert_int_eq(pt_dataset_write(dense, p2, PT_FORMAT_LIBSVM), PT_OK);
    size_t l1, l2;
    char *t1 = tu_read_file(p1, &l1), *t2 = tu_read_file(p2, &l2);
    ck_assert(l1 == l2 && memcmp(t1, t2, l1) == 0);
    free(t1);
    free(t2);
    pt_dataset *back = read_as(p1, PT_LAYOUT_SPARSE, 2, 0);
    size_t n = pt_dataset_n(sp), nnz = pt_dataset_nnz(sp);
    ck_assert(pt_dataset_n(back) == n && pt_dataset_d(back) == pt_dataset_d(sp) &&
              pt_dataset_nnz(back) == nnz);
    const uint64_t *ra, *rb;
    const uint32_t *ca, *cb;
    const float *va, *vb;
    ck_assert_int_eq(pt_dataset_csr(sp, &ra, &ca, &va), PT_OK);
    ck_assert_int_eq(pt_dataset_csr(back, &rb, &cb, &vb), PT_OK);
    ck_assert(memcmp(ra, rb, (n + 1) * sizeof *ra) == 0);
    ck_assert(memcmp(ca, cb, nnz * sizeof *ca) == 0 && memcmp(va, vb, nnz * sizeof *va) == 0);
    tu_assert_same_data(sp, back, "sparse written, read sparse");
    pt_dataset_free(back);
    back = read_as(p1, PT_LAYOUT_DENSE, 2, 0);
    tu_assert_same_data(sp, back, "sparse written, read dense");
    pt_dataset_free(back);
    pt_dataset_free(dense);
    pt_dataset_free(sp);

    const uint64_t rowptr[] = {0, 2, 3, 3};
    const uint32_t col[] = {0, 4, 1};
    const float val[] = {1.5f, 0.0f, -2.0f};
    const double labels[] = {1, -1, 1};
    ck_assert_int_eq(pt_dataset_from_csr(3, 5, rowptr, col, val, &sp), PT_OK);
    ck_assert_int_eq(pt_dataset_set_labels(sp, labels), PT_OK);
    ck_assert_int_eq(pt_dataset_write(sp, p1, PT_FORMAT_LIBSVM), PT_OK);
    t1 = tu_read_file(p1, NULL);
    ck_assert_str_eq(t1, "1 1:1.5\n-1 2:-2\n1\n");
    free(t1);
    pt_dataset_free(sp);
    unlink(p1);
    unlink(p2);
}
END_TEST

/* The cases that read, once per layout. */
/* A case's name, kept for the suite's life (check keeps the pointer). */
static const char *case_name(const char *what, const char *layout)
{
    static char names[8][64];
    static int used;
    if (used == 8) abort(); /* more cases than names: enlarge names */
    snprintf(names[used], sizeof names[used], "%s %s", what, layout);
    return names[used++];
}

static void add_layout_cases(Suite *s, void (*fixture)(void), const char *name)
{
    TCase *t = tcase_create(case_name("roundtrip", name));
    tcase_add_checked_fixture(t, fixture, NULL);
    tcase_add_test(t, roundtrip_dense);
    tcase_add_test(t, roundtrip_sparse_trailing_zero_columns);
    tcase_add_test(t, writer_text);
    tcase_add_test(t, parse_matches_strtof);
    tcase_add_test(t, labels_any_numbers);
    suite_add_tcase(s, t);

    t = tcase_create(case_name("errors", name));
    tcase_add_checked_fixture(t, fixture, NULL);
    tcase_add_test(t, err_missing_file);
    tcase_add_test(t, err_directory);
    tcase_add_test(t, err_empty_file);
    tcase_add_test(t, err_only_comments);
    tcase_add_test(t, err_label_not_number);
    tcase_add_test(t, err_label_nan);
    tcase_add_test(t, err_label_inf);
    tcase_add_test(t, err_missing_label);
    tcase_add_test(t, err_index_zero);
    tcase_add_test(t, err_index_negative);
    tcase_add_test(t, err_index_not_increasing);
    tcase_add_test(t, err_index_repeated);
    tcase_add_test(t, err_large_index_then_small);
    tcase_add_test(t, err_index_over_max_features);
    tcase_add_test(t, max_features_at_limit);
    tcase_add_test(t, err_missing_value);
    tcase_add_test(t, err_value_not_number);
    tcase_add_test(t, err_value_nan);
    tcase_add_test(t, err_value_inf);
    tcase_add_test(t, err_token_without_colon);
    tcase_add_test(t, err_garbage_token);
    tcase_add_test(t, err_nul_byte);
    tcase_add_test(t, err_error_line_counts_comments_and_crlf);
    tcase_add_test(t, memory_budget_refused);
    suite_add_tcase(s, t);

    t = tcase_create(case_name("oddities", name));
    tcase_add_checked_fixture(t, fixture, NULL);
    tcase_add_test(t, accepts_oddities);
    tcase_add_test(t, label_only_rows);
    tcase_add_test(t, reads_from_pipe);
    tcase_add_test(t, very_long_line);
    tcase_set_timeout(t, 60);
    suite_add_tcase(s, t);

    t = tcase_create(case_name("threads", name));
    tcase_add_checked_fixture(t, fixture, NULL);
    tcase_add_test(t, threads_same_result);
    tcase_add_test(t, threads_first_error_wins);
    tcase_set_timeout(t, 60);
    suite_add_tcase(s, t);
}

static Suite *suite(void)
{
    Suite *s = suite_create("io_libsvm");
    add_layout_cases(s, read_dense, "dense");
    add_layout_cases(s, read_sparse, "sparse");
    TCase *t = tcase_create("layouts");
    tcase_add_test(t, layouts_agree);
    tcase_add_test(t, explicit_zeros_left_out);
    tcase_add_test(t, auto_layout_choice);
    tcase_add_test(t, sparse_wide_index);
    tcase_add_test(t, writer_from_sparse);
    tcase_set_timeout(t, 60);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return tu_run_suite(suite()); }
