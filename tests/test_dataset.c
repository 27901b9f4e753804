/* The dense dataset: layout, label mapping, slices, info. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "testutil.h"

START_TEST(test_layout)
{
    for (size_t d = 1; d <= 40; d++) {
        pt_dataset *ds = pt_dataset_create(5, d);
        ck_assert_uint_eq(pt_dataset_stride(ds) % 16, 0);
        ck_assert_uint_ge(pt_dataset_stride(ds), d);
        ck_assert_uint_lt(pt_dataset_stride(ds), d + 16);
        for (size_t i = 0; i < 5; i++) {
            ck_assert_uint_eq((uintptr_t)pt_dataset_row(ds, i) % 64, 0);
            for (size_t j = 0; j < pt_dataset_stride(ds); j++) ck_assert_float_eq(pt_dataset_row(ds, i)[j], 0);
        }
        pt_dataset_free(ds);
    }
    pt_dataset_free(NULL);
}
END_TEST

START_TEST(test_label_mappings)
{
    const float x[] = {0, 0, 0, 0};
    struct { double in[4]; float y[4]; } cases[] = {
        {{-1, 1, 1, -1}, {-1, 1, 1, -1}},
        {{0, 1, 1, 0}, {-1, 1, 1, -1}},
        {{7, 3, 3, 7}, {1, -1, -1, 1}},
        {{-0.0, 0.0, 2, 2}, {-1, -1, 1, 1}}, /* -0 and +0 are one class */
    };
    for (size_t c = 0; c < 4; c++) {
        pt_dataset *ds = tu_dataset(4, 1, x, cases[c].in);
        ck_assert_uint_eq(pt_dataset_nclass(ds), 2);
        for (int i = 0; i < 4; i++) {
            ck_assert_float_eq(pt_dataset_y(ds)[i], cases[c].y[i]);
            ck_assert_double_eq(pt_dataset_label(ds, i), cases[c].in[i] == 0 ? 0.0 : cases[c].in[i]);
        }
        pt_dataset_free(ds);
    }
    const double three[] = {5, 1, 3, 1};
    pt_dataset *ds = tu_dataset(4, 1, x, three);
    ck_assert_uint_eq(pt_dataset_nclass(ds), 3);
    ck_assert_ptr_null(pt_dataset_y(ds));
    ck_assert_int_eq(pt_dataset_class(ds, 0), 2);
    ck_assert_int_eq(pt_dataset_class(ds, 1), 0);
    ck_assert_int_eq(pt_dataset_class(ds, 2), 1);
    pt_dataset_free(ds);
    const double bad[] = {1, NAN, 1, 0};
    ds = pt_dataset_create(4, 1);
    ck_assert_int_eq(pt_dataset_set_labels(ds, bad), PT_ERR_PARSE);
    pt_dataset_free(ds);
}
END_TEST

START_TEST(test_slice_and_info)
{
    float x[6 * 3];
    for (int i = 0; i < 18; i++) x[i] = (float)(i % 5) - 1.0f;
    const double y[] = {1, 2, 1, 2, 2, 2};
    pt_dataset *ds = tu_dataset(6, 3, x, y), *s;
    ck_assert_int_eq(pt_dataset_slice(ds, 3, 3, &s), PT_OK);
    /* a slice keeps the class table even when a class is absent from it */
    ck_assert_uint_eq(pt_dataset_nclass(s), 2);
    ck_assert_float_eq(pt_dataset_y(s)[0], 1.0f);
    ck_assert_mem_eq(pt_dataset_row(s, 0), x + 9, 3 * sizeof(float));
    pt_dataset *none;
    ck_assert_int_eq(pt_dataset_slice(ds, 4, 3, &none), PT_ERR_INVALID);
    pt_dataset_info in;
    ck_assert_int_eq(pt_dataset_count_nnz(ds, "t"), PT_OK);
    pt_dataset_get_info(ds, &in);
    ck_assert_uint_eq(in.n, 6);
    ck_assert_uint_eq(in.d, 3);
    size_t nnz = 0;
    double R = 0;
    for (int i = 0; i < 6; i++) {
        double r = 0;
        for (int j = 0; j < 3; j++) {
            nnz += x[i * 3 + j] != 0;
            r += x[i * 3 + j] * x[i * 3 + j];
        }
        R = fmax(R, sqrt(r));
    }
    ck_assert_uint_eq(in.nnz, nnz);
    ck_assert_double_eq_tol(in.density, nnz / 18.0, 1e-12);
    ck_assert_double_eq_tol(in.R, R, 1e-9);
    ck_assert_uint_eq(in.bytes, 6 * 16 * sizeof(float));
    pt_dataset_free(s);
    pt_dataset_free(ds);
}
END_TEST

START_TEST(test_budget)
{
    ck_assert_int_eq(pt_check_dense_budget("big.svm", 1000000, 1000, 1 << 20), PT_ERR_LIMIT);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "big.svm"));
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "3845.2 MiB"));
    ck_assert_int_eq(pt_check_dense_budget("ok.svm", 10, 10, 1 << 20), PT_OK);
    ck_assert_uint_eq(pt_dense_bytes(SIZE_MAX / 2, 1000), SIZE_MAX);
}
END_TEST

/* An aligned n x stride matrix with row i, feature j = 1 + i + j / 8 (never zero) and zero
 * padding. */
static float *wrap_matrix(size_t n, size_t d, size_t stride)
{
    size_t cells = n * stride > 0 ? n * stride : 1;
    float *X = aligned_alloc(64, cells * sizeof(float));
    ck_assert_ptr_nonnull(X);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < stride; j++) X[i * stride + j] = j < d ? 1.0f + (float)i + (float)j / 8 : 0.0f;
    return X;
}

START_TEST(test_wrap_in_place)
{
    const size_t n = 7, d = 5, stride = 16;
    float *X = wrap_matrix(n, d, stride);
    X[3 * stride + 2] = 0.0f; /* one zero: nnz counts it out */
    X[4 * stride + 1] = -0.0f;
    pt_dataset *ds;
    ck_assert_int_eq(pt_dataset_wrap(X, n, d, stride, &ds), PT_OK);
    ck_assert_uint_eq(pt_dataset_n(ds), n);
    ck_assert_uint_eq(pt_dataset_d(ds), d);
    ck_assert_uint_eq(pt_dataset_stride(ds), stride);
    /* the caller's memory itself, read-only to the library */
    ck_assert_ptr_eq(pt_dataset_matrix(ds), X);
    ck_assert_ptr_eq(pt_dataset_row_const(ds, 3), X + 3 * stride);
    ck_assert_ptr_null(pt_dataset_row(ds, 0));
    pt_dataset_info in;
    pt_dataset_get_info(ds, &in);
    ck_assert_uint_eq(in.nnz, n * d - 2);
    ck_assert_uint_eq(in.stride, stride);
    for (size_t i = 0; i < n; i++) ck_assert_int_eq(pt_dataset_class(ds, i), 0);
    /* labels as for any dataset; training reads X where it is */
    double y[7] = {1, -1, 1, -1, 1, -1, 1};
    ck_assert_int_eq(pt_dataset_set_labels(ds, y), PT_OK);
    ck_assert_uint_eq(pt_dataset_nclass(ds), 2);
    pt_dataset *copy = pt_dataset_create(n, d);
    for (size_t i = 0; i < n; i++) memcpy(pt_dataset_row(copy, i), X + i * stride, d * sizeof(float));
    ck_assert_int_eq(pt_dataset_set_labels(copy, y), PT_OK);
    pt_train_params p;
    pt_train_params_init(&p);
    p.online.pass = PT_PASS_SEQUENTIAL;
    pt_model *a, *b;
    ck_assert_int_eq(pt_train(ds, &p, &a, NULL), PT_OK);
    ck_assert_int_eq(pt_train(copy, &p, &b, NULL), PT_OK);
    float ba, bb;
    ck_assert_mem_eq(pt_model_weights(a, &ba), pt_model_weights(b, &bb), d * sizeof(float));
    ck_assert_float_eq(ba, bb);
    pt_model_free(a);
    pt_model_free(b);
    pt_dataset_free(copy);
    pt_dataset_free(ds);
    /* no rows: nothing to read; no features: the whole row is padding, so zeros only */
    ck_assert_int_eq(pt_dataset_wrap(NULL, 0, 3, 16, &ds), PT_OK);
    ck_assert_uint_eq(pt_dataset_n(ds), 0);
    pt_dataset_free(ds);
    ck_assert_int_eq(pt_dataset_wrap(X, 2, 0, 16, &ds), PT_ERR_INVALID);
    ck_assert_ptr_null(ds);
    free(X);
}
END_TEST

START_TEST(test_wrap_refusals)
{
    /* large enough for the scan to split the rows over threads */
    const size_t n = 40000, d = 20, stride = 32;
    float *X = wrap_matrix(n, d, stride);
    pt_dataset *ds = (pt_dataset *)&ds;
    /* layout */
    ck_assert_int_eq(pt_dataset_wrap(X, n, d, 24, &ds), PT_ERR_INVALID);
    ck_assert_ptr_null(ds);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "must be 32 (the features rounded up to a "
                                                  "multiple of 16)"));
    ck_assert_int_eq(pt_dataset_wrap(X, n, d, 16, &ds), PT_ERR_INVALID);
    /* a wider stride is refused too: weights and loops have pt_stride_for(d) floats */
    ck_assert_int_eq(pt_dataset_wrap(X, n / 2, 10, 64, &ds), PT_ERR_INVALID);
    ck_assert_int_eq(pt_dataset_wrap(X, n, 0, 0, &ds), PT_ERR_INVALID);
    ck_assert_int_eq(pt_dataset_wrap(X + 4, n - 1, d, stride, &ds), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "64-byte aligned"));
    ck_assert_int_eq(pt_dataset_wrap(NULL, n, d, stride, &ds), PT_ERR_INVALID);
    ck_assert_int_eq(pt_dataset_wrap(X, SIZE_MAX / 8, d, stride, &ds), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "overflows"));
    /* values: the first bad row and column are named, whichever thread found them */
    const float bad[] = {NAN, INFINITY, -INFINITY};
    for (size_t b = 0; b < 3; b++) {
        X[250 * stride + 7] = bad[b];
        X[251 * stride + 3] = bad[b];
        ck_assert_int_eq(pt_dataset_wrap(X, n, d, stride, &ds), PT_ERR_INVALID);
        ck_assert_ptr_null(ds);
        ck_assert_str_eq(pt_last_error(), "row 251, feature 8: NaN or infinity (every value must be "
                                          "finite)");
        X[250 * stride + 7] = 1.0f;
        X[251 * stride + 3] = 1.0f;
    }
    X[39000 * stride + 19] = NAN;
    X[20001 * stride] = NAN;
    ck_assert_int_eq(pt_dataset_wrap(X, n, d, stride, &ds), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "row 20002, feature 1:"));
    X[20001 * stride] = 1.0f;
    ck_assert_int_eq(pt_dataset_wrap(X, n, d, stride, &ds), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "row 39001, feature 20:"));
    X[39000 * stride + 19] = 1.0f;
    /* a non-finite float past the features is padding, and padding must be zero */
    X[39999 * stride + 31] = NAN;
    ck_assert_int_eq(pt_dataset_wrap(X, n, d, stride, &ds), PT_ERR_INVALID);
    X[39999 * stride + 31] = 0.0f;
    X[17 * stride + 20] = 2.5f;
    ck_assert_int_eq(pt_dataset_wrap(X, n, d, stride, &ds), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "row 18, padding float 21"));
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "2.5"));
    X[17 * stride + 20] = -0.0f; /* a zero all the same */
    ck_assert_int_eq(pt_dataset_wrap(X, n, d, stride, &ds), PT_OK);
    pt_dataset_free(ds);
    free(X);
}
END_TEST

START_TEST(test_set_classes)
{
    const float x[] = {1, 2, 3, 4};
    const double raw[] = {0, 0, 0, 0};
    pt_dataset *ds = tu_dataset(4, 1, x, raw);
    /* a chunk in which only the second of three classes appears keeps all three */
    const double values[] = {-2, 0.5, 7};
    const int32_t one[] = {1, 1, 1, 1};
    ck_assert_int_eq(pt_dataset_set_classes(ds, 3, values, NULL, one), PT_OK);
    ck_assert_uint_eq(pt_dataset_nclass(ds), 3);
    ck_assert_double_eq(pt_dataset_class_value(ds, 2), 7);
    ck_assert_double_eq(pt_dataset_label(ds, 0), 0.5);
    for (int i = 0; i < 4; i++) ck_assert_int_eq(pt_dataset_classes(ds)[i], 1);
    ck_assert_ptr_null(pt_dataset_y(ds));
    ck_assert_ptr_null(pt_dataset_class_name(ds, 0));
    /* two classes, one of them absent: the sides are the table's, not the rows' */
    const int32_t zeros[] = {0, 0, 0, 0}, mixed[] = {1, 0, 1, 1};
    ck_assert_int_eq(pt_dataset_set_classes(ds, 2, values, NULL, zeros), PT_OK);
    for (int i = 0; i < 4; i++) ck_assert_float_eq(pt_dataset_y(ds)[i], -1.0f);
    ck_assert_int_eq(pt_dataset_set_classes(ds, 2, values, NULL, mixed), PT_OK);
    ck_assert_float_eq(pt_dataset_y(ds)[0], 1.0f);
    ck_assert_float_eq(pt_dataset_y(ds)[1], -1.0f);
    ck_assert_mem_eq(pt_dataset_classes(ds), mixed, sizeof mixed);
    /* text labels: values 0..K-1, names kept */
    const char *names[] = {"cat", "dog", "owl"};
    ck_assert_int_eq(pt_dataset_set_classes(ds, 3, NULL, names, mixed), PT_OK);
    ck_assert_str_eq(pt_dataset_class_name(ds, 2), "owl");
    ck_assert_double_eq(pt_dataset_class_value(ds, 1), 1);
    ck_assert_double_eq(pt_dataset_label(ds, 0), 1);
    /* refusals leave the table as it was */
    const double unsorted[] = {1, 0}, nonfinite[] = {0, INFINITY}, dup[] = {-0.0, 0.0};
    const char *unsorted_names[] = {"b", "a"};
    const int32_t out_of_range[] = {0, 3, 0, 0};
    ck_assert_int_eq(pt_dataset_set_classes(ds, 2, unsorted, NULL, zeros), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "ascending"));
    ck_assert_int_eq(pt_dataset_set_classes(ds, 2, dup, NULL, zeros), PT_ERR_INVALID);
    ck_assert_int_eq(pt_dataset_set_classes(ds, 2, nonfinite, NULL, zeros), PT_ERR_INVALID);
    ck_assert_int_eq(pt_dataset_set_classes(ds, 2, NULL, unsorted_names, zeros), PT_ERR_INVALID);
    ck_assert_int_eq(pt_dataset_set_classes(ds, 3, values, NULL, out_of_range), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "row 2: class 3"));
    ck_assert_int_eq(pt_dataset_set_classes(ds, 3, values, names, mixed), PT_ERR_INVALID);
    ck_assert_int_eq(pt_dataset_set_classes(ds, 3, NULL, NULL, mixed), PT_ERR_INVALID);
    ck_assert_int_eq(pt_dataset_set_classes(ds, 0, values, NULL, mixed), PT_ERR_INVALID);
    ck_assert_uint_eq(pt_dataset_nclass(ds), 3);
    ck_assert_str_eq(pt_dataset_class_name(ds, 0), "cat");
    pt_dataset_free(ds);
}
END_TEST

/* A 4 x 6 sparse set: rows with 2, 0, 3 and 1 non-zeros, one explicit zero. */
static const uint64_t sp_rowptr[5] = {0, 2, 2, 5, 6};
static const uint32_t sp_col[6] = {0, 5, 1, 2, 4, 3};
static const float sp_val[6] = {1.5f, -2.0f, 0.25f, 0.0f, 3.0f, -1.0f};
static const double sp_labels[4] = {1, -1, 1, -1};

START_TEST(test_csr_round_trip)
{
    pt_dataset *ds, *dense, *back;
    ck_assert_int_eq(pt_dataset_from_csr(4, 6, sp_rowptr, sp_col, sp_val, &ds), PT_OK);
    ck_assert_int_eq(pt_dataset_set_labels(ds, sp_labels), PT_OK);
    ck_assert_int_eq(pt_dataset_layout(ds), PT_LAYOUT_SPARSE);
    ck_assert_uint_eq(pt_dataset_nnz(ds), 5); /* the explicit zero is stored, not counted */
    ck_assert_uint_eq(pt_dataset_stride(ds), 16);
    /* dense rows are refused with a message; the CSR arrays are views of the copy */
    ck_assert_ptr_null(pt_dataset_row_const(ds, 0));
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "sparse"));
    ck_assert_ptr_null(pt_dataset_matrix(ds));
    const uint64_t *rp;
    const uint32_t *col;
    const float *val;
    ck_assert_int_eq(pt_dataset_csr(ds, &rp, &col, &val), PT_OK);
    ck_assert_mem_eq(rp, sp_rowptr, sizeof sp_rowptr);
    ck_assert_mem_eq(col, sp_col, sizeof sp_col);
    ck_assert_mem_eq(val, sp_val, sizeof sp_val);
    ck_assert_ptr_ne(col, sp_col);

    ck_assert_int_eq(pt_dataset_convert(ds, PT_LAYOUT_DENSE, 0, &dense), PT_OK);
    ck_assert_int_eq(pt_dataset_layout(dense), PT_LAYOUT_DENSE);
    ck_assert_int_eq(pt_dataset_csr(dense, &rp, &col, &val), PT_ERR_INVALID);
    float want[4][6] = {{1.5f, 0, 0, 0, 0, -2.0f}, {0}, {0, 0.25f, 0, 0, 3.0f, 0}, {0, 0, 0, -1.0f, 0, 0}};
    for (size_t i = 0; i < 4; i++) {
        ck_assert_mem_eq(pt_dataset_row_const(dense, i), want[i], sizeof want[i]);
        ck_assert(pt_dataset_label(dense, i) == sp_labels[i]);
    }
    ck_assert_uint_eq(pt_dataset_nnz(dense), 5);

    /* back to sparse: the explicit zero is dropped, everything else equal */
    ck_assert_int_eq(pt_dataset_convert(dense, PT_LAYOUT_SPARSE, 0, &back), PT_OK);
    ck_assert_int_eq(pt_dataset_csr(back, &rp, &col, &val), PT_OK);
    const uint64_t rp2[5] = {0, 2, 2, 4, 5};
    const uint32_t col2[5] = {0, 5, 1, 4, 3};
    const float val2[5] = {1.5f, -2.0f, 0.25f, 3.0f, -1.0f};
    ck_assert_mem_eq(rp, rp2, sizeof rp2);
    ck_assert_mem_eq(col, col2, sizeof col2);
    ck_assert_mem_eq(val, val2, sizeof val2);
    ck_assert_uint_eq(pt_dataset_nclass(back), 2);
    ck_assert(pt_dataset_y(back)[0] == 1.0f && pt_dataset_y(back)[1] == -1.0f);

    pt_dataset_info a, b;
    pt_dataset_get_info(ds, &a);
    pt_dataset_get_info(dense, &b);
    ck_assert_int_eq(a.layout, PT_LAYOUT_SPARSE);
    ck_assert_int_eq(b.layout, PT_LAYOUT_DENSE);
    ck_assert(a.R == b.R && a.R == sqrt(0.25 * 0.25 + 9.0));
    ck_assert_uint_eq(a.nnz, 5);
    ck_assert_uint_eq(a.bytes, 5 * 8 + 6 * 8); /* offsets, then 8 bytes a stored entry */
    ck_assert_uint_eq(b.bytes, 4 * 16 * 4);
    pt_dataset_free(ds);
    pt_dataset_free(dense);
    pt_dataset_free(back);
}
END_TEST

START_TEST(test_csr_slice_and_wrap)
{
    pt_dataset *ds, *s;
    ck_assert_int_eq(pt_dataset_wrap_csr(4, 6, sp_rowptr, sp_col, sp_val, &ds), PT_OK);
    ck_assert_int_eq(pt_dataset_set_labels(ds, sp_labels), PT_OK);
    const uint64_t *rp;
    const uint32_t *col;
    const float *val;
    ck_assert_int_eq(pt_dataset_csr(ds, &rp, &col, &val), PT_OK);
    ck_assert_ptr_eq(rp, sp_rowptr); /* no copy */
    ck_assert_ptr_eq(col, sp_col);
    ck_assert_int_eq(pt_dataset_slice(ds, 1, 3, &s), PT_OK);
    ck_assert_int_eq(pt_dataset_layout(s), PT_LAYOUT_SPARSE);
    ck_assert_int_eq(pt_dataset_csr(s, &rp, &col, &val), PT_OK);
    const uint64_t want_rp[4] = {0, 0, 3, 4};
    ck_assert_mem_eq(rp, want_rp, sizeof want_rp);
    ck_assert_mem_eq(col, sp_col + 2, 4 * sizeof *col);
    ck_assert(pt_dataset_label(s, 0) == -1.0 && pt_dataset_label(s, 1) == 1.0);
    ck_assert_uint_eq(pt_dataset_nnz(s), 3);
    pt_dataset_free(s);
    pt_dataset_free(ds); /* frees none of the caller's arrays (ASan would see it) */
}
END_TEST

START_TEST(test_csr_refusals)
{
    pt_dataset *ds = NULL;
    const uint64_t bad_first[3] = {1, 1, 2};
    const uint64_t down[3] = {0, 2, 1};
    const uint32_t col[2] = {3, 2}, col_ok[2] = {2, 3}, col_dup[2] = {2, 2}, col_wide[2] = {2, 6};
    const float val[2] = {1, 2}, val_nan[2] = {1, NAN};
    const uint64_t rp[3] = {0, 2, 2};
    struct {
        const uint64_t *rp;
        const uint32_t *col;
        const float *val;
        const char *says;
    } cases[] = {
        {bad_first, col_ok, val, "first row offset"},
        {down, col_ok, val, "row 2: offset 1 after 2"},
        {rp, col, val, "row 1, entry 2: column 2 after 3"},
        {rp, col_dup, val, "column 2 after 2"},
        {rp, col_wide, val, "column 6 is not below d = 6"},
        {rp, col_ok, val_nan, "row 1, column 3: the value is not finite"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int wrap = 0; wrap < 2; wrap++) {
            pt_status s = wrap ? pt_dataset_wrap_csr(2, 6, cases[c].rp, cases[c].col, cases[c].val, &ds)
                               : pt_dataset_from_csr(2, 6, cases[c].rp, cases[c].col, cases[c].val, &ds);
            ck_assert_int_eq(s, PT_ERR_INVALID);
            ck_assert_ptr_null(ds);
            ck_assert_msg(strstr(pt_last_error(), cases[c].says), "case %zu: '%s' lacks '%s'", c,
                          pt_last_error(), cases[c].says);
        }
    }
    ck_assert_int_eq(pt_dataset_from_csr(2, (size_t)UINT32_MAX + 1, rp, col_ok, val, &ds),
                     PT_ERR_INVALID);
    /* a dense copy over the budget is refused with the bytes it needs */
    ck_assert_int_eq(pt_dataset_from_csr(2, 6, rp, col_ok, val, &ds), PT_OK);
    pt_dataset *dense = NULL;
    ck_assert_int_eq(pt_dataset_convert(ds, PT_LAYOUT_DENSE, 64, &dense), PT_ERR_LIMIT);
    ck_assert_ptr_null(dense);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "MiB"));
    pt_dataset_free(ds);
}
END_TEST

START_TEST(test_layout_names)
{
    pt_layout l;
    ck_assert_int_eq(pt_layout_parse("sparse", &l), PT_OK);
    ck_assert_int_eq(l, PT_LAYOUT_SPARSE);
    ck_assert_int_eq(pt_layout_parse("dense", &l), PT_OK);
    ck_assert_int_eq(l, PT_LAYOUT_DENSE);
    ck_assert_int_eq(pt_layout_parse("auto", &l), PT_OK);
    ck_assert_int_eq(l, PT_LAYOUT_AUTO);
    ck_assert_int_eq(pt_layout_parse("csc", &l), PT_ERR_INVALID);
    ck_assert_str_eq(pt_layout_name(PT_LAYOUT_SPARSE), "sparse");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dataset");
    TCase *tc = tcase_create("dataset");
    tcase_add_test(tc, test_layout);
    tcase_add_test(tc, test_label_mappings);
    tcase_add_test(tc, test_slice_and_info);
    tcase_add_test(tc, test_budget);
    tcase_add_test(tc, test_wrap_in_place);
    tcase_add_test(tc, test_wrap_refusals);
    tcase_add_test(tc, test_set_classes);
    tcase_add_test(tc, test_csr_round_trip);
    tcase_add_test(tc, test_csr_slice_and_wrap);
    tcase_add_test(tc, test_csr_refusals);
    tcase_add_test(tc, test_layout_names);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
