/* The dense dataset: layout, label mapping, slices, info. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
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
    p.pass = PT_PASS_SEQUENTIAL;
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
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
