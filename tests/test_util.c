/* Small shared pieces: random numbers, checksums, allocation, errors. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "testutil.h"

START_TEST(test_rng_reference_stream)
{
    /* xoshiro256** seeded by splitmix64(0): the published first output of splitmix64(0)
     * is 0xe220a8397b1dcdaf; our stream must stay fixed across machines and versions. */
    uint64_t sm = 0, z = (sm += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    ck_assert_uint_eq(z ^ (z >> 31), 0xe220a8397b1dcdafull);
    pt_rng a, b;
    pt_rng_seed(&a, 42);
    pt_rng_seed(&b, 42);
    for (int i = 0; i < 1000; i++) ck_assert_uint_eq(pt_rng_next(&a), pt_rng_next(&b));
    pt_rng_seed(&b, 43);
    ck_assert_uint_ne(pt_rng_next(&a), pt_rng_next(&b));
}
END_TEST

START_TEST(test_rng_distributions)
{
    pt_rng r;
    pt_rng_seed(&r, 1);
    double sum = 0, sum2 = 0;
    size_t counts[7] = {0};
    const int N = 200000;
    for (int i = 0; i < N; i++) {
        double u = pt_rng_uniform(&r);
        ck_assert(u >= 0 && u < 1);
        double g = pt_rng_normal(&r);
        sum += g;
        sum2 += g * g;
        counts[pt_rng_below(&r, 7)]++;
    }
    ck_assert(fabs(sum / N) < 0.01);
    ck_assert(fabs(sum2 / N - 1) < 0.02);
    for (int k = 0; k < 7; k++) ck_assert(fabs(counts[k] / (double)N - 1.0 / 7) < 0.005);
    uint32_t perm[100];
    for (uint32_t i = 0; i < 100; i++) perm[i] = i;
    pt_rng_shuffle(&r, perm, 100);
    int seen[100] = {0}, moved = 0;
    for (int i = 0; i < 100; i++) {
        seen[perm[i]]++;
        moved += perm[i] != (uint32_t)i;
    }
    for (int i = 0; i < 100; i++) ck_assert_int_eq(seen[i], 1);
    ck_assert_int_gt(moved, 50);
}
END_TEST

START_TEST(test_checksum)
{
    const char a[] = "perceptron", b[] = "perceptroN";
    ck_assert_uint_ne(pt_checksum(a, 10), pt_checksum(b, 10));
    ck_assert_uint_eq(pt_checksum(a, 10), pt_checksum("perceptron", 10));
}
END_TEST

START_TEST(test_alloc)
{
    float *p = pt_alloc(1000, "test buffer");
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % 64, 0);
    pt_free(p);
    p = pt_alloc((size_t)8 << 20, "big buffer");
    ck_assert_uint_eq((uintptr_t)p % 64, 0);
    pt_free(p);
    /* an impossible size fails cleanly, naming the buffer */
    ck_assert_ptr_null(pt_alloc(SIZE_MAX - 10, "impossible buffer"));
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "impossible buffer"));
    size_t out;
    ck_assert(!pt_mul_ok(SIZE_MAX / 2, 3, &out));
    ck_assert(pt_mul_ok(1000, 1000, &out) && out == 1000000);
    ck_assert_uint_eq(pt_round_up(17, 16), 32);
}
END_TEST

START_TEST(test_errors_and_names)
{
    for (int s = PT_OK; s <= PT_ERR_INTERRUPTED; s++) ck_assert_ptr_nonnull(pt_strerror((pt_status)s));
    ck_assert_str_eq(pt_strerror(PT_ERR_CHECKSUM), "checksum mismatch");
    pt_fail(PT_ERR_PARSE, "f.svm:%d: bad", 3);
    ck_assert_str_eq(pt_last_error(), "f.svm:3: bad");
    pt_path path;
    ck_assert_int_eq(pt_path_parse("kernel", &path), PT_OK);
    ck_assert_int_eq(path, PT_PATH_KERNEL);
    ck_assert_int_eq(pt_path_parse("dual", &path), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "online, batch, kernel"));
    pt_format f;
    ck_assert_int_eq(pt_format_parse("csv", &f), PT_OK);
    ck_assert_int_eq(pt_format_from_path("a/b.PTD"), PT_FORMAT_PTD);
    ck_assert_int_eq(pt_format_from_path("a.csv"), PT_FORMAT_CSV);
    ck_assert_int_eq(pt_format_from_path("a.dir/b"), PT_FORMAT_LIBSVM);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("util");
    TCase *tc = tcase_create("util");
    tcase_add_test(tc, test_rng_reference_stream);
    tcase_add_test(tc, test_rng_distributions);
    tcase_add_test(tc, test_checksum);
    tcase_add_test(tc, test_alloc);
    tcase_add_test(tc, test_errors_and_names);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
