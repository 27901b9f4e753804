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

int main(void)
{
    Suite *s = suite_create("dataset");
    TCase *tc = tcase_create("dataset");
    tcase_add_test(tc, test_layout);
    tcase_add_test(tc, test_label_mappings);
    tcase_add_test(tc, test_slice_and_info);
    tcase_add_test(tc, test_budget);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
