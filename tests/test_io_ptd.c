/* The binary dataset file (.ptd): round trips in both layouts, alignment, mapping without a
 * copy, reading into the other layout, version 1 files, and every way a file can be bad. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/data.h"
#include "testutil.h"

/* Offsets of the header fields (see the layout at the top of src/data/io_ptd.c). */
#define H_VERSION 8
#define H_N 16
#define H_D 24
#define H_STRIDE 32
#define H_SECTIONS 96
#define H_NNZ 48
#define H_LAYOUT 240
#define H_SUM 248
/* SEC_MATRIX is the dense matrix, or the sparse row offsets */
enum { SEC_CLASSES, SEC_LABELS, SEC_WSTAR, SEC_MATRIX, SEC_COL, SEC_VAL };

static uint64_t get64(const char *b, size_t at)
{
    uint64_t v;
    memcpy(&v, b + at, 8);
    return v;
}

static void put64(char *b, size_t at, uint64_t v) { memcpy(b + at, &v, 8); }
static uint64_t sec_off(const char *b, int s) { return get64(b, H_SECTIONS + 24 * s); }
static uint64_t sec_len(const char *b, int s) { return get64(b, H_SECTIONS + 24 * s + 8); }

/* Recompute a section's checksum, then the header's, as a crafted file would. */
static void fix_section_sum(char *b, int s)
{
    put64(b, H_SECTIONS + 24 * s + 16, pt_checksum(b + sec_off(b, s), sec_len(b, s)));
}

static void fix_header_sum(char *b) { put64(b, H_SUM, pt_checksum(b, H_SUM)); }

static int has(const char *msg, const char *part) { return strstr(msg, part) != NULL; }

#define ASSERT_ERR(st, want, path, part)                                                           \
    do {                                                                                           \
        ck_assert_int_eq((st), (want));                                                            \
        ck_assert_msg(has(pt_last_error(), (path)), "message lacks the path: %s", pt_last_error()); \
        ck_assert_msg(has(pt_last_error(), (part)), "message lacks '%s': %s", (part),              \
                      pt_last_error());                                                            \
    } while (0)

static int bits_eq(const void *a, const void *b, size_t len) { return memcmp(a, b, len) == 0; }

/* A generated two-class dataset with truth, written to a new .ptd path. */
static pt_dataset *generated(size_t n, size_t d)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_SEPARABLE;
    g.n = n;
    g.d = d;
    g.margin = 0.05;
    g.seed = 42;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    return ds;
}

static const char *write_ptd(const pt_dataset *ds)
{
    const char *p = tu_path("ds", ".ptd");
    ck_assert_int_eq(pt_dataset_write(ds, p, PT_FORMAT_PTD), PT_OK);
    return p;
}

static pt_dataset *read_ok(const char *p)
{
    pt_dataset *ds = NULL;
    pt_status s = pt_dataset_read(p, NULL, &ds);
    ck_assert_msg(s == PT_OK, "read %s: %s", p, pt_last_error());
    unlink(p); /* the mapping outlives the name */
    return ds;
}

static void assert_same(const pt_dataset *a, const pt_dataset *b)
{
    ck_assert_uint_eq(pt_dataset_n(a), pt_dataset_n(b));
    ck_assert_uint_eq(pt_dataset_d(a), pt_dataset_d(b));
    ck_assert_uint_eq(pt_dataset_stride(a), pt_dataset_stride(b));
    ck_assert_uint_eq(pt_dataset_nclass(a), pt_dataset_nclass(b));
    size_t n = a->n, k = a->nclass;
    ck_assert(bits_eq(a->class_values, b->class_values, k * sizeof(double)));
    ck_assert(bits_eq(a->cls, b->cls, n * sizeof(int32_t)));
    for (size_t i = 0; i < n; i++)
        ck_assert(bits_eq(pt_dataset_row_const(a, i), pt_dataset_row_const(b, i),
                          a->stride * sizeof(float)));
    ck_assert_int_eq(pt_dataset_y(a) != NULL, pt_dataset_y(b) != NULL);
    if (pt_dataset_y(a)) ck_assert(bits_eq(pt_dataset_y(a), pt_dataset_y(b), n * sizeof(float)));
    pt_dataset_info ia, ib;
    pt_dataset_get_info(a, &ia);
    pt_dataset_get_info(b, &ib);
    size_t nnz = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < a->d; j++) nnz += pt_dataset_row_const(a, i)[j] != 0.0f;
    ck_assert_uint_eq(ib.nnz, nnz); /* counted on write even where a's count is stale */
    ck_assert_int_eq(ia.has_truth, ib.has_truth);
    ck_assert_str_eq(ia.kind, ib.kind);
    double ra, ga, rb, gb;
    const double *wa = pt_dataset_truth(a, &ra, &ga), *wb = pt_dataset_truth(b, &rb, &gb);
    ck_assert(bits_eq(&ra, &rb, sizeof ra));
    ck_assert(bits_eq(&ga, &gb, sizeof ga));
    ck_assert_int_eq(wa != NULL, wb != NULL);
    if (wa) ck_assert(bits_eq(wa, wb, a->d * sizeof(double)));
}

START_TEST(roundtrip_generated)
{
    pt_dataset *a = generated(300, 7);
    ck_assert_ptr_nonnull(a->wstar);
    const char *p = write_ptd(a);
    pt_dataset *b = read_ok(p);
    assert_same(a, b);
    pt_dataset_info ib;
    pt_dataset_get_info(b, &ib);
    ck_assert_int_eq(ib.has_truth, 1);
    ck_assert_str_eq(ib.kind, "separable");
    ck_assert(ib.truth_gamma > 0.0);
    ck_assert(a->nnz > 0 && b->nnz == a->nnz);
    pt_dataset_free(a);
    pt_dataset_free(b);
}
END_TEST

/* Awkward values keep their bits: -0, subnormals, extremes; labels {0, 1} stay {0, 1}. */
START_TEST(roundtrip_values)
{
    const float vals[] = {-0.0f, 1e-45f, -1.17549435e-38f, 3.40282347e38f, 0.1f, 1.0f / 3.0f, 0.0f};
    size_t n = 5, d = 21;
    pt_dataset *a = pt_dataset_create(n, d);
    ck_assert_ptr_nonnull(a);
    double labels[5] = {0, 1, 1, 0, 1};
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) pt_dataset_row(a, i)[j] = vals[(i * d + j) % 7];
    ck_assert_int_eq(pt_dataset_set_labels(a, labels), PT_OK);
    pt_dataset *b = read_ok(write_ptd(a));
    assert_same(a, b);
    ck_assert(pt_dataset_class_value(b, 0) == 0.0 && pt_dataset_class_value(b, 1) == 1.0);
    ck_assert(pt_dataset_y(b)[0] == -1.0f && pt_dataset_y(b)[1] == 1.0f);
    ck_assert(pt_dataset_label(b, 4) == 1.0);
    pt_dataset_free(a);
    pt_dataset_free(b);
}
END_TEST

START_TEST(multiclass)
{
    const float x[4 * 2] = {1, 2, 3, 4, 5, 6, 7, 8};
    const double labels[4] = {2.5, -1, 7, 2.5};
    pt_dataset *a = tu_dataset(4, 2, x, labels);
    pt_dataset *b = read_ok(write_ptd(a));
    assert_same(a, b);
    ck_assert_uint_eq(pt_dataset_nclass(b), 3);
    ck_assert_ptr_null(pt_dataset_y(b));
    ck_assert(pt_dataset_label(b, 0) == 2.5 && pt_dataset_label(b, 1) == -1 &&
              pt_dataset_label(b, 2) == 7);
    pt_dataset_free(a);
    pt_dataset_free(b);
}
END_TEST

START_TEST(empty_and_unlabelled)
{
    pt_dataset *a = pt_dataset_create(0, 3);
    pt_dataset *b = read_ok(write_ptd(a));
    ck_assert_uint_eq(pt_dataset_n(b), 0);
    ck_assert_uint_eq(pt_dataset_d(b), 3);
    pt_dataset_free(a);
    pt_dataset_free(b);
    /* labels never set: every label 0, one class */
    a = pt_dataset_create(3, 2);
    pt_dataset_row(a, 1)[0] = 5.0f;
    b = read_ok(write_ptd(a));
    ck_assert_uint_eq(pt_dataset_nclass(b), 1);
    ck_assert(pt_dataset_label(b, 2) == 0.0);
    ck_assert(pt_dataset_row_const(b, 1)[0] == 5.0f);
    pt_dataset_free(a);
    pt_dataset_free(b);
}
END_TEST

START_TEST(alignment_and_mapping)
{
    pt_dataset *a = generated(50, 3);
    pt_dataset *b = read_ok(write_ptd(a));
    ck_assert_uint_eq((uintptr_t)pt_dataset_row_const(b, 0) % 64, 0);
    ck_assert_uint_eq((uintptr_t)pt_dataset_row_const(b, 1) % 64, 0);
    ck_assert(!b->X_owned && b->map != NULL);
    ck_assert_ptr_null(pt_dataset_row(b, 0)); /* mapped read-only */
    pt_dataset_free(a);
    pt_dataset_free(b);
}
END_TEST

/* The file as bytes, for a test to damage and write back under a new name. */
static char *sample_bytes(size_t *len)
{
    pt_dataset *a = generated(40, 5);
    const char *p = write_ptd(a);
    pt_dataset_free(a);
    char *b = tu_read_file(p, len);
    ck_assert_ptr_nonnull(b);
    unlink(p);
    return b;
}

static pt_status read_bytes(const void *b, size_t len, const char **path)
{
    *path = tu_write_bytes("bad", ".ptd", b, len);
    pt_dataset *ds = (pt_dataset *)1;
    pt_status s = pt_dataset_read(*path, NULL, &ds);
    ck_assert_ptr_null(ds);
    unlink(*path); /* the name stays valid for the message checks */
    return s;
}

START_TEST(bad_magic)
{
    size_t len;
    char *b = sample_bytes(&len);
    b[0] = 'X';
    const char *p;
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "not a ptron dataset (bad magic)");
    const char *text = "+1 1:0.5 2:1\n";
    ASSERT_ERR(read_bytes(text, strlen(text), &p), PT_ERR_FORMAT, p, "bad magic");
    ASSERT_ERR(read_bytes("", 0, &p), PT_ERR_FORMAT, p, "bad magic");
    free(b);
}
END_TEST

START_TEST(truncated)
{
    size_t len;
    char *b = sample_bytes(&len);
    const char *p;
    /* in the header */
    ASSERT_ERR(read_bytes(b, 100, &p), PT_ERR_FORMAT, p, "truncated");
    ck_assert(has(pt_last_error(), "256") && has(pt_last_error(), "100"));
    ASSERT_ERR(read_bytes(b, 5, &p), PT_ERR_FORMAT, p, "truncated");
    /* in the labels, mid-matrix, one byte short: expected and actual sizes named */
    size_t cuts[] = {(size_t)sec_off(b, SEC_LABELS) + 3, (size_t)sec_off(b, SEC_MATRIX) + 333,
                     len - 1};
    for (size_t c = 0; c < 3; c++) {
        ASSERT_ERR(read_bytes(b, cuts[c], &p), PT_ERR_FORMAT, p, "truncated");
        char want[64];
        snprintf(want, sizeof want, "%zu bytes, the file has %zu", len, cuts[c]);
        ck_assert_msg(has(pt_last_error(), want), "%s", pt_last_error());
    }
    /* and the other way: trailing bytes */
    char *longer = calloc(1, len + 8);
    memcpy(longer, b, len);
    ASSERT_ERR(read_bytes(longer, len + 8, &p), PT_ERR_FORMAT, p, "trailing");
    free(longer);
    free(b);
}
END_TEST

START_TEST(checksum_matrix)
{
    size_t len;
    char *b = sample_bytes(&len);
    b[sec_off(b, SEC_MATRIX) + 4 * 16 * 7 + 2] ^= 0x01;
    const char *p;
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_CHECKSUM, p, "matrix");
    /* a flip that makes a NaN is still reported as corruption */
    b[sec_off(b, SEC_MATRIX) + 4 * 16 * 7 + 2] ^= 0x01;
    b[sec_off(b, SEC_MATRIX) + 3] = 0x7f;
    b[sec_off(b, SEC_MATRIX) + 2] = (char)0xc0;
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_CHECKSUM, p, "matrix");
    free(b);
}
END_TEST

START_TEST(checksum_labels)
{
    size_t len;
    char *b = sample_bytes(&len);
    b[sec_off(b, SEC_LABELS) + 4 * 3] ^= 0x01;
    const char *p;
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_CHECKSUM, p, "labels");
    free(b);
}
END_TEST

START_TEST(checksum_header)
{
    size_t len;
    char *b = sample_bytes(&len);
    b[H_N] ^= 0x01;
    const char *p;
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_CHECKSUM, p, "header");
    free(b);
}
END_TEST

START_TEST(newer_version)
{
    size_t len;
    char *b = sample_bytes(&len);
    uint32_t v = 4;
    memcpy(b + H_VERSION, &v, 4);
    const char *p;
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_VERSION, p, "version 4");
    ck_assert_msg(has(pt_last_error(), "version 3"), "%s", pt_last_error());
    free(b);
}
END_TEST

START_TEST(inconsistent_stride)
{
    size_t len;
    char *b = sample_bytes(&len);
    put64(b, H_STRIDE, 32);
    fix_header_sum(b);
    const char *p;
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "stride 32");
    ck_assert_msg(has(pt_last_error(), "expected 16"), "%s", pt_last_error());
    /* a d whose stride would wrap around */
    put64(b, H_D, UINT64_MAX - 3);
    put64(b, H_STRIDE, 0);
    fix_header_sum(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "stride 0");
    put64(b, H_D, 5);
    /* sizes that overflow */
    put64(b, H_STRIDE, 16);
    put64(b, H_N, UINT64_MAX / 8);
    fix_header_sum(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "overflow");
    free(b);
}
END_TEST

/* Crafted files with valid checksums but bad contents. */
START_TEST(crafted_contents)
{
    size_t len;
    char *b = sample_bytes(&len);
    const char *p;
    int32_t bad = 5;
    memcpy(b + sec_off(b, SEC_LABELS) + 4 * 2, &bad, 4);
    fix_section_sum(b, SEC_LABELS);
    fix_header_sum(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "row 3: class index 5 out of range");
    free(b);

    b = sample_bytes(&len);
    float inf = INFINITY;
    memcpy(b + sec_off(b, SEC_MATRIX) + 4 * (16 * 9 + 4), &inf, 4);
    fix_section_sum(b, SEC_MATRIX);
    fix_header_sum(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "row 10, feature 5: value is not finite");
    free(b);

    b = sample_bytes(&len);
    float one = 1.0f;
    memcpy(b + sec_off(b, SEC_MATRIX) + 4 * (16 * 2 + 9), &one, 4); /* padding of row 3 */
    fix_section_sum(b, SEC_MATRIX);
    fix_header_sum(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "row 3: non-zero padding");
    free(b);
}
END_TEST

START_TEST(memory_budget)
{
    pt_dataset *a = generated(100, 30);
    const char *p = write_ptd(a);
    pt_read_options o;
    pt_read_options_init(&o);
    o.mem_budget_bytes = 1000;
    pt_dataset *b = NULL;
    /* over the budget: streamed, 1000 / 8 bytes a window: at least one row (128 bytes) */
    ck_assert_int_eq(pt_dataset_read(p, &o, &b), PT_OK);
    ck_assert_uint_eq(pt_dataset_streamed(b), 1);
    assert_same(a, b);
    pt_dataset_info info;
    pt_dataset_get_info(b, &info);
    ck_assert(info.streamed && info.stream_rows == 1);
    pt_dataset_free(b);
    /* asked for the other layout, which does not fit either: refused */
    o.layout = PT_LAYOUT_SPARSE;
    ASSERT_ERR(pt_dataset_read(p, &o, &b), PT_ERR_LIMIT, p, "memory budget");
    ck_assert_ptr_null(b);
    o.layout = PT_LAYOUT_AUTO;
    o.mem_budget_bytes = 100 * 32 * 4; /* exactly enough */
    ck_assert_int_eq(pt_dataset_read(p, &o, &b), PT_OK);
    ck_assert_uint_eq(pt_dataset_streamed(b), 0);
    unlink(p);
    pt_dataset_free(a);
    pt_dataset_free(b);
}
END_TEST

START_TEST(writer_refuses_nonfinite)
{
    pt_dataset *a = pt_dataset_create(3, 4);
    double labels[3] = {1, -1, 1};
    ck_assert_int_eq(pt_dataset_set_labels(a, labels), PT_OK);
    pt_dataset_row(a, 2)[3] = NAN;
    const char *p = tu_path("nan", ".ptd");
    pt_status s = pt_dataset_write(a, p, PT_FORMAT_PTD);
    ck_assert_int_eq(s, PT_ERR_INVALID);
    ck_assert_msg(has(pt_last_error(), "row 3, feature 4"), "%s", pt_last_error());
    struct stat sb;
    ck_assert_int_ne(stat(p, &sb), 0);
    pt_dataset_free(a);
}
END_TEST

/* A caller that wrote into the padding still gets a file with zero padding. */
START_TEST(writer_clears_padding)
{
    pt_dataset *a = pt_dataset_create(2, 3);
    double labels[2] = {1, -1};
    ck_assert_int_eq(pt_dataset_set_labels(a, labels), PT_OK);
    pt_dataset_row(a, 1)[0] = 2.0f;
    pt_dataset_row(a, 1)[7] = 9.0f;
    pt_dataset *b = read_ok(write_ptd(a));
    ck_assert(pt_dataset_row_const(b, 1)[0] == 2.0f);
    ck_assert(pt_dataset_row_const(b, 1)[7] == 0.0f);
    pt_dataset_free(a);
    pt_dataset_free(b);
}
END_TEST

/* ------------------------------------------------------------------ the sparse layout */

/* A generated sparse dataset (truth included). */
static pt_dataset *generated_sparse(size_t n, size_t d, size_t nnz)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_SPARSE;
    g.n = n;
    g.d = d;
    g.nnz = nnz;
    g.margin = 0.0;
    g.seed = 5;
    pt_dataset *ds;
    ck_assert_msg(pt_generate(&g, &ds) == PT_OK, "%s", pt_last_error());
    return ds;
}

/* Both sparse: the same arrays, bit for bit, and the same labels and truth. */
static void assert_same_sparse(const pt_dataset *a, const pt_dataset *b)
{
    ck_assert_int_eq(pt_dataset_layout(b), PT_LAYOUT_SPARSE);
    ck_assert(a->n == b->n && a->d == b->d && a->stride == b->stride && a->nnz == b->nnz);
    size_t e = (size_t)a->rowptr[a->n];
    ck_assert(bits_eq(a->rowptr, b->rowptr, (a->n + 1) * sizeof(uint64_t)));
    ck_assert(bits_eq(a->col, b->col, e * sizeof(uint32_t)));
    ck_assert(bits_eq(a->val, b->val, e * sizeof(float)));
    ck_assert(a->nclass == b->nclass && bits_eq(a->class_values, b->class_values,
                                                a->nclass * sizeof(double)));
    ck_assert(bits_eq(a->cls, b->cls, a->n * sizeof(int32_t)));
    ck_assert_int_eq(a->wstar != NULL, b->wstar != NULL);
    if (a->wstar) ck_assert(bits_eq(a->wstar, b->wstar, a->d * sizeof(double)));
    ck_assert(a->truth_R == b->truth_R && a->truth_gamma == b->truth_gamma);
    ck_assert_str_eq(a->kind, b->kind);
}

/* Whether p lies inside b's mapping. */
static int in_mapping(const pt_dataset *b, const void *p)
{
    const char *m = b->map;
    return m && (const char *)p >= m && (const char *)p < m + b->map_len;
}

START_TEST(sparse_roundtrip)
{
    pt_dataset *a = generated_sparse(300, 500, 10);
    const char *p = write_ptd(a);
    pt_dataset *b = read_ok(p);
    assert_same_sparse(a, b);
    /* the arrays are the mapping's, page aligned: nothing was copied */
    ck_assert(in_mapping(b, b->rowptr) && in_mapping(b, b->col) && in_mapping(b, b->val));
    ck_assert(((uintptr_t)b->rowptr | (uintptr_t)b->col | (uintptr_t)b->val) % 4096 == 0);
    ck_assert_ptr_null(pt_dataset_row_const(b, 0));
    pt_dataset_info info;
    pt_dataset_get_info(b, &info);
    ck_assert(info.layout == PT_LAYOUT_SPARSE && info.has_truth && info.nnz == a->nnz);
    ck_assert_str_eq(info.kind, "sparse");
    pt_dataset_free(a);
    pt_dataset_free(b);

    /* explicit zeros (a caller's arrays) are kept and not counted; empty rows; no rows */
    const uint64_t rowptr[] = {0, 2, 2, 4};
    const uint32_t col[] = {0, 6, 1, 2};
    const float val[] = {1.5f, 0.0f, -0.0f, 3.0f};
    ck_assert_int_eq(pt_dataset_from_csr(3, 7, rowptr, col, val, &a), PT_OK);
    const double labels[] = {1, -1, 1};
    ck_assert_int_eq(pt_dataset_set_labels(a, labels), PT_OK);
    b = read_ok(write_ptd(a));
    assert_same_sparse(a, b);
    ck_assert_uint_eq(pt_dataset_nnz(b), 2);
    pt_dataset_free(a);
    pt_dataset_free(b);
    const uint64_t none[] = {0};
    ck_assert_int_eq(pt_dataset_from_csr(0, 4, none, NULL, NULL, &a), PT_OK);
    b = read_ok(write_ptd(a));
    ck_assert(pt_dataset_n(b) == 0 && pt_dataset_d(b) == 4 && pt_dataset_layout(b) == PT_LAYOUT_SPARSE);
    pt_dataset_free(a);
    pt_dataset_free(b);
}
END_TEST

static pt_dataset *read_layout(const char *p, pt_layout l, size_t budget)
{
    pt_read_options o;
    pt_read_options_init(&o);
    o.layout = l;
    if (budget) o.mem_budget_bytes = budget;
    pt_dataset *ds = NULL;
    ck_assert_msg(pt_dataset_read(p, &o, &ds) == PT_OK, "%s: %s", p, pt_last_error());
    return ds;
}

/* A file read into the other layout is a copy with the same rows; auto keeps the file's
 * layout unless only the other fits the budget. */
START_TEST(read_other_layout)
{
    pt_dataset *a = generated_sparse(200, 64, 8);
    const char *p = write_ptd(a);
    pt_dataset *b = read_layout(p, PT_LAYOUT_DENSE, 0);
    ck_assert_int_eq(pt_dataset_layout(b), PT_LAYOUT_DENSE);
    ck_assert(b->X_owned && !b->map);
    tu_assert_same_data(a, b, "sparse file read dense");
    double R, g;
    ck_assert(pt_dataset_truth(b, &R, &g) && R == a->truth_R && g == a->truth_gamma);
    /* its dense .ptd, read back sparse */
    const char *q = write_ptd(b);
    pt_dataset *c = read_layout(q, PT_LAYOUT_SPARSE, 0);
    assert_same_sparse(a, c);
    pt_dataset_free(b);
    pt_dataset_free(c);
    /* auto on the sparse file: sparse while it fits (200 * 64 * 4 = 51200 bytes dense) */
    size_t sparse_bytes = 201 * 8 + (size_t)a->rowptr[200] * 8;
    b = read_layout(p, PT_LAYOUT_AUTO, sparse_bytes);
    ck_assert_int_eq(pt_dataset_layout(b), PT_LAYOUT_SPARSE);
    pt_dataset_free(b);
    /* auto on the dense file: dense while it fits, sparse when only that fits */
    b = read_layout(q, PT_LAYOUT_AUTO, 51200);
    ck_assert_int_eq(pt_dataset_layout(b), PT_LAYOUT_DENSE);
    pt_dataset_free(b);
    b = read_layout(q, PT_LAYOUT_AUTO, 51199);
    ck_assert_int_eq(pt_dataset_layout(b), PT_LAYOUT_SPARSE);
    tu_assert_same_data(a, b, "dense file read sparse");
    pt_dataset_free(b);
    /* neither fits: streamed in the file's layout; the other layout asked for that does not
     * fit: refused */
    pt_read_options o;
    pt_read_options_init(&o);
    o.mem_budget_bytes = 1000;
    ck_assert_int_eq(pt_dataset_read(q, &o, &b), PT_OK);
    ck_assert_int_eq(pt_dataset_layout(b), PT_LAYOUT_DENSE);
    ck_assert_uint_gt(pt_dataset_streamed(b), 0);
    tu_assert_same_data(a, b, "dense file streamed");
    pt_dataset_free(b);
    o.layout = PT_LAYOUT_DENSE;
    o.mem_budget_bytes = 51199;
    ASSERT_ERR(pt_dataset_read(p, &o, &b), PT_ERR_LIMIT, p, "MiB dense");
    unlink(p);
    unlink(q);
    pt_dataset_free(a);

    /* full rows of 64 features: sparse (520 bytes a row) is larger than dense (256), so auto
     * reads such a sparse file dense when only dense fits */
    a = pt_dataset_create(10, 64);
    for (size_t i = 0; i < 10; i++)
        for (size_t j = 0; j < 64; j++) pt_dataset_row(a, i)[j] = (float)(i + j + 1);
    const double lab[10] = {1, 2, 1, 2, 1, 2, 1, 2, 1, 2};
    ck_assert_int_eq(pt_dataset_set_labels(a, lab), PT_OK);
    pt_dataset *sp;
    ck_assert_int_eq(pt_dataset_convert(a, PT_LAYOUT_SPARSE, 0, &sp), PT_OK);
    p = write_ptd(sp);
    b = read_layout(p, PT_LAYOUT_AUTO, 3000);
    ck_assert_int_eq(pt_dataset_layout(b), PT_LAYOUT_DENSE);
    tu_assert_same_data(sp, b, "full sparse file read dense");
    unlink(p);
    pt_dataset_free(a);
    pt_dataset_free(sp);
    pt_dataset_free(b);
}
END_TEST

/* A file written by version 1 (tests/data/v1-separable.ptd: `ptron gen separable --n 6 --d 3
 * --seed 7`, before the sparse layout) still reads, as the same generator's data. */
START_TEST(version_1_reads)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/v1-separable.ptd", getenv("PTRON_SRC"));
    pt_dataset *old = NULL;
    ck_assert_msg(pt_dataset_read(path, NULL, &old) == PT_OK, "%s", pt_last_error());
    size_t len;
    char *bytes = tu_read_file(path, &len);
    uint32_t version;
    memcpy(&version, bytes + H_VERSION, 4);
    ck_assert_uint_eq(version, 1);
    free(bytes);
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.n = 6;
    g.d = 3;
    g.seed = 7;
    pt_dataset *now;
    ck_assert_int_eq(pt_generate(&g, &now), PT_OK);
    ck_assert_int_eq(pt_dataset_layout(old), PT_LAYOUT_DENSE);
    assert_same(now, old);
    /* and read sparse */
    pt_dataset *sp = read_layout(path, PT_LAYOUT_SPARSE, 0);
    tu_assert_same_data(now, sp, "version 1 read sparse");
    pt_dataset_free(sp);
    pt_dataset_free(now);
    pt_dataset_free(old);
}
END_TEST

/* The file of a small sparse dataset as bytes. */
static char *sparse_bytes(size_t *len)
{
    pt_dataset *a = generated_sparse(40, 50, 5);
    const char *p = write_ptd(a);
    pt_dataset_free(a);
    char *b = tu_read_file(p, len);
    ck_assert_ptr_nonnull(b);
    unlink(p);
    return b;
}

/* The entries of row i of a sparse file's bytes. */
static uint64_t *offsets(char *b) { return (uint64_t *)(void *)(b + sec_off(b, SEC_MATRIX)); }
static uint32_t *columns(char *b) { return (uint32_t *)(void *)(b + sec_off(b, SEC_COL)); }
static float *values(char *b) { return (float *)(void *)(b + sec_off(b, SEC_VAL)); }

static void fix_sparse_sums(char *b)
{
    for (int s = SEC_MATRIX; s <= SEC_VAL; s++) fix_section_sum(b, s);
    fix_header_sum(b);
}

START_TEST(sparse_checksums_and_truncation)
{
    size_t len;
    char *b = sparse_bytes(&len);
    const char *p;
    static const char *const names[] = {"row offsets", "column indices", "values"};
    for (int s = SEC_MATRIX; s <= SEC_VAL; s++) {
        b[sec_off(b, s) + 9] ^= 0x10;
        ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_CHECKSUM, p, names[s - SEC_MATRIX]);
        b[sec_off(b, s) + 9] ^= 0x10;
    }
    pt_dataset *ok = read_ok(tu_write_bytes("ok", ".ptd", b, len));
    ck_assert_ptr_nonnull(ok);
    pt_dataset_free(ok);
    size_t cuts[] = {(size_t)sec_off(b, SEC_MATRIX) + 5, (size_t)sec_off(b, SEC_COL) + 1,
                     (size_t)sec_off(b, SEC_VAL) + 17, len - 1};
    for (size_t c = 0; c < 4; c++) {
        ASSERT_ERR(read_bytes(b, cuts[c], &p), PT_ERR_FORMAT, p, "truncated");
        char want[64];
        snprintf(want, sizeof want, "%zu bytes, the file has %zu", len, cuts[c]);
        ck_assert_msg(has(pt_last_error(), want), "%s", pt_last_error());
    }
    free(b);
}
END_TEST

/* Crafted sparse files, checksums repaired: every broken invariant named, never read past. */
START_TEST(sparse_crafted)
{
    size_t len;
    char *b = sparse_bytes(&len), *orig = malloc(len);
    memcpy(orig, b, len);
    const char *p;
    uint64_t entries = sec_len(b, SEC_COL) / 4;
#define RESET() memcpy(b, orig, len)

    offsets(b)[7] = offsets(b)[6] - 1; /* decreasing */
    fix_sparse_sums(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "row offset 7");
    RESET();
    offsets(b)[3] = entries + 1000; /* a row reaching past the arrays, then back */
    fix_sparse_sums(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "row offset 3");
    RESET();
    offsets(b)[0] = 1;
    fix_sparse_sums(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "row offset 0");
    RESET();
    offsets(b)[40] = entries - 1; /* the last offset short of the entries */
    fix_sparse_sums(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "end at");
    RESET();
    columns(b)[offsets(b)[2]] = 50; /* >= d */
    fix_sparse_sums(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "row 3, entry 1: column 50");
    RESET();
    uint64_t at = offsets(b)[4];
    columns(b)[at + 1] = columns(b)[at]; /* not increasing */
    fix_sparse_sums(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "row 5, entry 2");
    ck_assert_msg(has(pt_last_error(), "increase"), "%s", pt_last_error());
    RESET();
    values(b)[5] = NAN;
    fix_sparse_sums(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "not finite");
    RESET();
    values(b)[5] = 0.0f; /* one non-zero fewer than the header says */
    fix_sparse_sums(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "non-zeros");
    RESET();
    uint32_t bad_layout = 7;
    memcpy(b + H_LAYOUT, &bad_layout, 4);
    fix_header_sum(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "unknown layout 7");
    RESET();
    b[H_LAYOUT + 4] = 1; /* the element type: compact storage is dense only */
    fix_header_sum(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "compact storage is dense only");
    RESET();
    put64(b, H_SECTIONS + 24 * SEC_VAL + 8, sec_len(b, SEC_VAL) - 4); /* col and val differ */
    fix_header_sum(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "column indices of");
    RESET();
    put64(b, H_SECTIONS + 24 * SEC_COL, sec_off(b, SEC_COL) + 4096); /* a moved section */
    fix_header_sum(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "column indices section at offset");
    RESET();
    put64(b, H_D, (uint64_t)UINT32_MAX + 1);
    put64(b, H_STRIDE, (uint64_t)UINT32_MAX + 1);
    fix_header_sum(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "32-bit column indices");
    RESET();
    /* a dense file that says sparse: its sections do not fit the sparse plan */
    free(b);
    b = sample_bytes(&len);
    uint32_t sparse = 1;
    memcpy(b + H_LAYOUT, &sparse, 4);
    fix_header_sum(b);
    ASSERT_ERR(read_bytes(b, len, &p), PT_ERR_FORMAT, p, "inconsistent header");
#undef RESET
    free(b);
    free(orig);
}
END_TEST

/* Truncates the file named by user when the reader says it streams it: before the pass that
 * verifies the checksums, so that pass reads the part that went, certainly. */
static void shrink_on_stream(pt_log_level level, const char *msg, void *user)
{
    (void)level;
    if (strstr(msg, "streamed from the file")) ck_assert_int_eq(truncate(user, 4096), 0);
}

/* A streamed file (dense, compact, sparse) truncated while the reader verifies it: no SIGBUS,
 * PT_ERR_IO "FILE: file shrank while being read", no dataset. */
START_TEST(shrinks_while_read)
{
    const pt_layout layouts[] = {PT_LAYOUT_DENSE, PT_LAYOUT_DENSE, PT_LAYOUT_SPARSE};
    const pt_dtype types[] = {PT_DTYPE_F32, PT_DTYPE_BF16, PT_DTYPE_F32};
    for (int k = 0; k < 3; k++) {
        pt_gen_params g;
        pt_gen_params_init(&g);
        g.kind = PT_GEN_NOISY;
        g.n = 4000;
        g.d = 60;
        pt_dataset *ds, *c;
        ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
        if (layouts[k] == PT_LAYOUT_SPARSE)
            ck_assert_int_eq(pt_dataset_convert(ds, PT_LAYOUT_SPARSE, 0, &c), PT_OK);
        else ck_assert_int_eq(pt_dataset_to_dtype(ds, types[k], 0, &c), PT_OK);
        char path[512];
        snprintf(path, sizeof path, "%s", tu_path("shrink", ".ptd"));
        ck_assert_int_eq(pt_dataset_write(c, path, PT_FORMAT_PTD), PT_OK);
        pt_dataset_free(c);
        pt_dataset_free(ds);
        pt_read_options o;
        pt_read_options_init(&o);
        o.mem_budget_bytes = 64 << 10; /* streamed */
        pt_set_log(shrink_on_stream, path);
        pt_dataset *got = (pt_dataset *)1;
        pt_status s = pt_dataset_read(path, &o, &got);
        pt_set_log(NULL, NULL);
        ck_assert_msg(s == PT_ERR_IO, "case %d: status %d: %s", k, s, pt_last_error());
        ck_assert_ptr_null(got);
        char want[600];
        snprintf(want, sizeof want, "%s: file shrank while being read", path);
        HAS(pt_last_error(), want);
        unlink(path);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("io_ptd");
    TCase *t = tcase_create("core");
    tcase_add_test(t, roundtrip_generated);
    tcase_add_test(t, roundtrip_values);
    tcase_add_test(t, multiclass);
    tcase_add_test(t, empty_and_unlabelled);
    tcase_add_test(t, alignment_and_mapping);
    tcase_add_test(t, bad_magic);
    tcase_add_test(t, truncated);
    tcase_add_test(t, checksum_matrix);
    tcase_add_test(t, checksum_labels);
    tcase_add_test(t, checksum_header);
    tcase_add_test(t, newer_version);
    tcase_add_test(t, inconsistent_stride);
    tcase_add_test(t, crafted_contents);
    tcase_add_test(t, memory_budget);
    tcase_add_test(t, writer_refuses_nonfinite);
    tcase_add_test(t, writer_clears_padding);
    tcase_add_test(t, sparse_roundtrip);
    tcase_add_test(t, read_other_layout);
    tcase_add_test(t, version_1_reads);
    tcase_add_test(t, sparse_checksums_and_truncation);
    tcase_add_test(t, sparse_crafted);
    tcase_add_test(t, shrinks_while_read);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return tu_run_suite(suite()); }
