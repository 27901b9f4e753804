/* Parameters by name: every key reads back what it sets, into the struct's field. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "testutil.h"

START_TEST(test_keys_round_trip)
{
    pt_train_params *p = pt_train_params_create();
    ck_assert_ptr_nonnull(p);
    pt_train_params init;
    pt_train_params_init(&init);
    ck_assert_mem_eq(p, &init, sizeof init);
    size_t count = 0;
    char buf[64], again[64];
    for (const char *key; (key = pt_train_params_key(count)) != NULL; count++) {
        /* what get writes, set reads back to the same value */
        ck_assert_int_eq(pt_train_params_get(p, key, buf, sizeof buf), PT_OK);
        ck_assert_int_eq(pt_train_params_set(p, key, buf), PT_OK);
        ck_assert_int_eq(pt_train_params_get(p, key, again, sizeof again), PT_OK);
        ck_assert_str_eq(buf, again);
        for (size_t j = 0; j < count; j++) ck_assert_str_ne(pt_train_params_key(j), key);
    }
    ck_assert_uint_ge(count, 30);
    ck_assert_mem_eq(p, &init, sizeof init);
    pt_train_params_free(p);
    pt_train_params_free(NULL);
}
END_TEST

START_TEST(test_set_reaches_fields)
{
    pt_train_params p;
    pt_train_params_init(&p);
    struct { const char *key, *value; } sets[] = {
        {"path", "kernel"}, {"epochs", "37"}, {"eta", "0.1"}, {"margin", "2.5"},
        {"variant", "voted"}, {"shuffle", "1"}, {"seed", "18446744073709551615"}, {"bias", "0"},
        {"pass", "blocked"}, {"isa", "scalar"}, {"threads", "3"}, {"mem_budget_bytes", "12345"},
        {"loss", "hinge"}, {"lambda", "1e-4"}, {"batch_size", "64"}, {"schedule", "pegasos"},
        {"tol", "0.001"}, {"batch_impl", "gemv"}, {"average_iterates", "1"}, {"kernel", "rbf"},
        {"degree", "3"}, {"gamma", "0.25"}, {"coef0", "-1.5"}, {"cache_mb", "100"},
        {"gram_storage", "rows"}, {"multiclass", "direct"}, {"expand.kind", "rff"},
        {"expand.degree", "4"}, {"expand.coef0", "2"}, {"expand.rff_dim", "512"},
        {"expand.gamma", "0.5"}, {"expand.seed", "9"}, {"expand.max_features", "1000"},
        {"expand.mem_budget_bytes", "4096"}, {"init_random", "1"}, {"expand.hash_bits", "18"},
        {"voted_max_vectors", "1000"},
    };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        ck_assert_msg(pt_train_params_set(&p, sets[i].key, sets[i].value) == PT_OK, "%s: %s",
                      sets[i].key, pt_last_error());
    ck_assert_int_eq(p.path, PT_PATH_KERNEL);
    ck_assert_int_eq(p.epochs, 37);
    ck_assert_float_eq(p.eta, 0.1f);
    ck_assert_float_eq(p.margin, 2.5f);
    ck_assert_int_eq(p.variant, PT_VARIANT_VOTED);
    ck_assert_int_eq(p.shuffle, 1);
    ck_assert_uint_eq(p.seed, UINT64_MAX);
    ck_assert_int_eq(p.bias, 0);
    ck_assert_int_eq(p.online.pass, PT_PASS_BLOCKED);
    ck_assert_int_eq(p.isa, PT_ISA_SCALAR);
    ck_assert_int_eq(p.threads, 3);
    ck_assert_uint_eq(p.mem_budget_bytes, 12345);
    ck_assert_int_eq(p.batch.loss, PT_LOSS_HINGE);
    ck_assert_float_eq(p.batch.lambda, 1e-4f);
    ck_assert_uint_eq(p.batch.size, 64);
    ck_assert_int_eq(p.batch.schedule, PT_SCHEDULE_PEGASOS);
    ck_assert_double_eq(p.batch.tol, 0.001);
    ck_assert_int_eq(p.batch.impl, PT_BATCH_GEMV);
    ck_assert_int_eq(p.batch.average_iterates, 1);
    ck_assert_int_eq(p.kernel.kind, PT_KERNEL_RBF);
    ck_assert_int_eq(p.kernel.degree, 3);
    ck_assert_float_eq(p.kernel.gamma, 0.25f);
    ck_assert_float_eq(p.kernel.coef0, -1.5f);
    ck_assert_uint_eq(p.kernel.cache_mb, 100);
    ck_assert_int_eq(p.kernel.gram_storage, PT_GRAM_ROWS);
    ck_assert_int_eq(p.multiclass, PT_MULTI_DIRECT);
    ck_assert_int_eq(p.expand.kind, PT_EXPAND_RFF);
    ck_assert_int_eq(p.expand.degree, 4);
    ck_assert_float_eq(p.expand.coef0, 2.0f);
    ck_assert_uint_eq(p.expand.rff_dim, 512);
    ck_assert_float_eq(p.expand.gamma, 0.5f);
    ck_assert_uint_eq(p.expand.seed, 9);
    ck_assert_uint_eq(p.expand.max_features, 1000);
    ck_assert_uint_eq(p.expand.mem_budget_bytes, 4096);
    ck_assert_int_eq(p.expand.hash_bits, 18);
    ck_assert_int_eq(p.init_random, 1);
    ck_assert_uint_eq(p.online.voted_max_vectors, 1000);
    char buf[32];
    ck_assert_int_eq(pt_train_params_get(&p, "eta", buf, sizeof buf), PT_OK);
    ck_assert_str_eq(buf, "0.100000001"); /* the float nearest 0.1, %.9g */
    ck_assert_int_eq(pt_train_params_get(&p, "variant", buf, sizeof buf), PT_OK);
    ck_assert_str_eq(buf, "voted");
    ck_assert_int_eq(pt_train_params_get(&p, "voted_max_vectors", buf, sizeof buf), PT_OK);
    ck_assert_str_eq(buf, "1000");
}
END_TEST

/* voted_max_vectors: a count (0: no cap), and the voted variant's only */
START_TEST(test_voted_max_vectors_range)
{
    pt_train_params p;
    pt_train_params_init(&p);
    ck_assert_uint_eq(p.online.voted_max_vectors, 0);
    ck_assert_int_eq(pt_train_params_set(&p, "voted_max_vectors", "-3"), PT_ERR_INVALID);
    ck_assert_int_eq(pt_train_params_set(&p, "voted_max_vectors", "2.5"), PT_ERR_INVALID);
    ck_assert_uint_eq(p.online.voted_max_vectors, 0);
    ck_assert_int_eq(pt_train_params_set(&p, "voted_max_vectors", "64"), PT_OK);
    ck_assert_int_eq(pt_train_params_check(&p), PT_ERR_INVALID); /* classic */
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "pt_train_params.voted_max_vectors caps the voted"));
    p.variant = PT_VARIANT_AVERAGED;
    ck_assert_int_eq(pt_train_params_check(&p), PT_ERR_INVALID);
    p.variant = PT_VARIANT_VOTED;
    ck_assert_int_eq(pt_train_params_check(&p), PT_OK);
    p.online.voted_max_vectors = SIZE_MAX;
    ck_assert_int_eq(pt_train_params_check(&p), PT_OK);
}
END_TEST

START_TEST(test_refusals_keep_value)
{
    pt_train_params p, before;
    pt_train_params_init(&p);
    before = p;
    struct { const char *key, *value, *msg; } bad[] = {
        {"eta", "nan", "not a finite number"}, {"eta", "1e60", "not a finite number"},
        {"eta", "0.5x", "not a finite number"}, {"eta", "", "not a finite number"},
        {"tol", "inf", "not a finite number"}, {"epochs", "1.5", "not an integer"},
        {"epochs", "99999999999", "not an integer"}, {"batch_size", "-1", "non-negative"},
        {"seed", "18446744073709551616", "non-negative"}, {"shuffle", "2", "not 0 or 1"},
        {"shuffle", "true", "not 0 or 1"}, {"variant", "average", "classic, averaged, voted"},
        {"loss", "", "unknown value"}, {"expand.kind", "cubic", "none, poly, rff"},
        {"no_such_key", "1", "unknown training parameter 'no_such_key'"},
        {"epoch_hook", "0", "unknown training parameter"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(pt_train_params_set(&p, bad[i].key, bad[i].value), PT_ERR_INVALID);
        ck_assert_msg(strstr(pt_last_error(), bad[i].msg) != NULL, "%s=%s: %s", bad[i].key,
                      bad[i].value, pt_last_error());
    }
    ck_assert_int_eq(pt_train_params_set(&p, NULL, "1"), PT_ERR_INVALID);
    ck_assert_int_eq(pt_train_params_set(&p, "eta", NULL), PT_ERR_INVALID);
    ck_assert_mem_eq(&p, &before, sizeof p);
    char tiny[3];
    ck_assert_int_eq(pt_train_params_get(&p, "variant", tiny, sizeof tiny), PT_ERR_INVALID);
    ck_assert_int_eq(pt_train_params_get(&p, "nope", tiny, sizeof tiny), PT_ERR_INVALID);
}
END_TEST

/* shuffle_chunk near SIZE_MAX, by field or by name: refused by the check and by pt_train,
 * naming the field; the largest allowed trains. */
START_TEST(test_shuffle_chunk_bounded)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.n = 200;
    g.d = 4;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    pt_train_params p;
    pt_train_params_init(&p);
    p.shuffle = 1;
    p.epochs = 2;
    const char *huge[] = {"18446744073709551615", "18446744073709551600", "4294967296"};
    for (size_t k = 0; k < 3; k++) {
        ck_assert_int_eq(pt_train_params_set(&p, "shuffle_chunk", huge[k]), PT_OK);
        ck_assert_int_eq(pt_train_params_check(&p), PT_ERR_INVALID);
        ck_assert_msg(strstr(pt_last_error(), "pt_train_params.shuffle_chunk must be at most "
                             "4294967295 rows") != NULL, "%s", pt_last_error());
        pt_model *m = NULL;
        ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_INVALID);
        ck_assert_ptr_null(m);
    }
    p.online.shuffle_chunk = SIZE_MAX;
    ck_assert_int_eq(pt_train_params_check(&p), PT_ERR_INVALID);
    p.online.shuffle_chunk = UINT32_MAX; /* more rows than the data: one chunk, the whole order */
    pt_model *m = NULL, *whole = NULL;
    ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_OK);
    p.online.shuffle_chunk = ds->n;
    ck_assert_int_eq(pt_train(ds, &p, &whole, NULL), PT_OK);
    ck_assert_mem_eq(pt_model_weights(m, NULL), pt_model_weights(whole, NULL), 4 * sizeof(float));
    pt_model_free(m);
    pt_model_free(whole);
    pt_dataset_free(ds);
}
END_TEST

/* Every enum field out of its range, every flag other than 0 or 1, a memory budget under
 * 1 MiB and more threads than 4096: refused by the check and by pt_train, naming the field
 * (they trained before, and then the model could not be saved). */
START_TEST(test_ranges_checked)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.n = 100;
    g.d = 3;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    const struct {
        size_t offset;
        int value;
        const char *msg;
    } ints[] = {
        {offsetof(pt_train_params, variant), 77, "pt_train_params.variant is not one of classic, "
                                                 "averaged, voted (got 77)"},
        {offsetof(pt_train_params, path), -1, "pt_train_params.path is not one of online, batch, "
                                              "kernel (got -1)"},
        {offsetof(pt_train_params, batch.loss), 99, "pt_train_params.loss is not one of"},
        {offsetof(pt_train_params, kernel.kind), 99, "pt_train_params.kernel is not one of linear, "
                                                "poly, rbf, expr (got 99)"},
        {offsetof(pt_train_params, online.pass), 3, "pt_train_params.pass is not one of"},
        {offsetof(pt_train_params, isa), 5, "pt_train_params.isa is not one of"},
        {offsetof(pt_train_params, batch.schedule), -2, "pt_train_params.schedule is not one of"},
        {offsetof(pt_train_params, batch.impl), 3, "pt_train_params.batch_impl is not one of"},
        {offsetof(pt_train_params, kernel.gram_storage), 3, "pt_train_params.gram_storage is not one of"},
        {offsetof(pt_train_params, multiclass), 2, "pt_train_params.multiclass is not one of"},
        {offsetof(pt_train_params, expand.kind), 3, "pt_train_params.expand.kind is not one of "
                                                    "none, poly, rff (got 3)"},
        {offsetof(pt_train_params, online.mix), 2, "pt_train_params.mix is not one of uniform, mistakes"},
        {offsetof(pt_train_params, scale), 4, "pt_train_params.scale"},
        {offsetof(pt_train_params, shuffle), 2, "pt_train_params.shuffle must be 0 or 1 (got 2)"},
        {offsetof(pt_train_params, bias), -1, "pt_train_params.bias must be 0 or 1"},
        {offsetof(pt_train_params, batch.average_iterates), 7, "pt_train_params.average_iterates must"},
        {offsetof(pt_train_params, init_random), 3, "pt_train_params.init_random must be 0 or 1"},
        {offsetof(pt_train_params, threads), 4097, "pt_train_params.threads must be at most 4096"},
    };
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
        pt_train_params p;
        pt_train_params_init(&p);
        memcpy((char *)&p + ints[k].offset, &ints[k].value, sizeof(int));
        ck_assert_int_eq(pt_train_params_check(&p), PT_ERR_INVALID);
        ck_assert_msg(strstr(pt_last_error(), ints[k].msg), "case %zu: %s", k, pt_last_error());
        pt_model *m = NULL;
        ck_assert_msg(pt_train(ds, &p, &m, NULL) == PT_ERR_INVALID, "case %zu trained", k);
        ck_assert_ptr_null(m);
    }
    /* the memory budget: at least 1 MiB */
    const size_t budgets[] = {0, 1, ((size_t)1 << 20) - 1};
    for (size_t k = 0; k < 3; k++) {
        pt_train_params p;
        pt_train_params_init(&p);
        p.mem_budget_bytes = budgets[k];
        ck_assert_int_eq(pt_train_params_check(&p), PT_ERR_INVALID);
        ck_assert_msg(strstr(pt_last_error(), "pt_train_params.mem_budget_bytes must be at least "
                             "1048576 bytes"), "%s", pt_last_error());
        pt_model *m = NULL;
        ck_assert_int_eq(pt_train(ds, &p, &m, NULL), PT_ERR_INVALID);
    }
    pt_train_params p;
    pt_train_params_init(&p);
    p.mem_budget_bytes = (size_t)1 << 20;
    p.threads = 4096;
    ck_assert_int_eq(pt_train_params_check(&p), PT_OK);
    /* the expansion's kind, through pt_expand too */
    pt_expand_params e;
    pt_expand_params_init(&e);
    e.kind = (pt_expand_kind)77;
    pt_dataset *x = NULL;
    ck_assert_int_eq(pt_expand(ds, &e, &x), PT_ERR_INVALID);
    ck_assert_msg(strstr(pt_last_error(), "pt_expand_params.kind is not one of none, poly, rff "
                         "(got 77)"), "%s", pt_last_error());
    pt_dataset_free(ds);
}
END_TEST

static int hook_calls;
static int count_epochs(const pt_model *m, int epoch, size_t mistakes, void *user)
{
    (void)m, (void)mistakes;
    hook_calls++;
    return epoch == *(int *)user;
}

START_TEST(test_params_train)
{
    /* a run set up by name alone equals the same run set up by fields */
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_NOISY;
    g.n = 500;
    g.d = 6;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    pt_train_params *byname = pt_train_params_create(), fields;
    pt_train_params_init(&fields);
    fields.variant = PT_VARIANT_AVERAGED;
    fields.eta = 0.5f;
    fields.shuffle = 1;
    fields.seed = 4;
    fields.epochs = 6;
    ck_assert_int_eq(pt_train_params_set(byname, "variant", "averaged"), PT_OK);
    ck_assert_int_eq(pt_train_params_set(byname, "eta", "0.5"), PT_OK);
    ck_assert_int_eq(pt_train_params_set(byname, "shuffle", "1"), PT_OK);
    ck_assert_int_eq(pt_train_params_set(byname, "seed", "4"), PT_OK);
    ck_assert_int_eq(pt_train_params_set(byname, "epochs", "6"), PT_OK);
    int stop_at = 2;
    pt_train_params_set_epoch_hook(byname, count_epochs, &stop_at);
    pt_model *a, *b;
    pt_train_report r;
    ck_assert_int_eq(pt_train(ds, byname, &a, &r), PT_OK);
    ck_assert_int_eq(hook_calls, 2); /* the hook stopped the run after epoch 2 */
    ck_assert_int_eq(r.epochs_run, 2);
    pt_train_report_clear(&r);
    fields.epochs = 2;
    ck_assert_int_eq(pt_train(ds, &fields, &b, NULL), PT_OK);
    ck_assert_mem_eq(pt_model_weights(a, NULL), pt_model_weights(b, NULL), 6 * sizeof(float));
    pt_model_free(a);
    pt_model_free(b);
    /* a warm start set by its setter continues the run: 2 + 3 epochs are the 5-epoch run's
     * (classic variant, no shuffle) */
    pt_train_params *cont = pt_train_params_create();
    pt_model *two, *five, *more;
    ck_assert_int_eq(pt_train_params_set(cont, "epochs", "2"), PT_OK);
    ck_assert_int_eq(pt_train(ds, cont, &two, NULL), PT_OK);
    ck_assert_int_eq(pt_train_params_set(cont, "epochs", "5"), PT_OK);
    ck_assert_int_eq(pt_train(ds, cont, &five, NULL), PT_OK);
    ck_assert_int_eq(pt_train_params_set(cont, "epochs", "3"), PT_OK);
    pt_train_params_set_init(cont, two);
    ck_assert_int_eq(pt_train(ds, cont, &more, NULL), PT_OK);
    float b5, bm;
    ck_assert_mem_eq(pt_model_weights(five, &b5), pt_model_weights(more, &bm), 6 * sizeof(float));
    ck_assert_float_eq(b5, bm);
    pt_model_free(two);
    pt_model_free(five);
    pt_model_free(more);
    pt_train_params_free(cont);
    /* a requested stop token set by its setter stops the call at once */
    pt_stop *stop = pt_stop_create();
    pt_stop_request(stop);
    pt_train_params_set_epoch_hook(byname, NULL, NULL);
    pt_train_params_set_stop(byname, stop);
    ck_assert_int_eq(pt_train(ds, byname, &a, NULL), PT_ERR_INTERRUPTED);
    pt_model_free(a);
    pt_stop_reset(stop);
    ck_assert_int_eq(pt_train(ds, byname, &a, NULL), PT_OK);
    pt_model_free(a);
    pt_stop_free(stop);
    pt_train_params_free(byname);
    pt_dataset_free(ds);
}
END_TEST

START_TEST(test_expand_params)
{
    pt_expand_params *x = pt_expand_params_create(), init;
    pt_expand_params_init(&init);
    ck_assert_mem_eq(x, &init, sizeof init);
    size_t count = 0;
    char buf[64];
    for (const char *key; (key = pt_expand_params_key(count)) != NULL; count++) {
        ck_assert_int_eq(pt_expand_params_get(x, key, buf, sizeof buf), PT_OK);
        ck_assert_int_eq(pt_expand_params_set(x, key, buf), PT_OK);
    }
    ck_assert_uint_eq(count, 9);
    ck_assert_mem_eq(x, &init, sizeof init);
    struct { const char *key, *value; } sets[] = {
        {"kind", "rff"}, {"degree", "3"}, {"coef0", "0.5"}, {"rff_dim", "40"}, {"gamma", "2"},
        {"seed", "11"}, {"max_features", "77"}, {"mem_budget_bytes", "1048576"},
        {"hash_bits", "5"},
    };
    for (size_t i = 0; i < 9; i++)
        ck_assert_int_eq(pt_expand_params_set(x, sets[i].key, sets[i].value), PT_OK);
    ck_assert_int_eq(x->kind, PT_EXPAND_RFF);
    ck_assert_int_eq(x->degree, 3);
    ck_assert_float_eq(x->coef0, 0.5f);
    ck_assert_uint_eq(x->rff_dim, 40);
    ck_assert_float_eq(x->gamma, 2.0f);
    ck_assert_uint_eq(x->seed, 11);
    ck_assert_uint_eq(x->max_features, 77);
    ck_assert_uint_eq(x->mem_budget_bytes, 1048576);
    ck_assert_int_eq(x->hash_bits, 5);
    ck_assert_uint_eq(pt_expand_dim(x, 5), 40); /* RFF: hashing is the polynomial's */
    ck_assert_int_eq(pt_expand_params_set(x, "kind", "cubic"), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "none, poly, rff"));
    ck_assert_int_eq(pt_expand_params_set(x, "expand.kind", "poly"), PT_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "unknown expansion parameter 'expand.kind'"));
    ck_assert_int_eq(pt_expand_params_get(x, "kind", buf, sizeof buf), PT_OK);
    ck_assert_str_eq(buf, "rff");
    pt_expand_params_free(x);
    pt_expand_params_free(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("params");
    TCase *tc = tcase_create("params");
    tcase_add_test(tc, test_keys_round_trip);
    tcase_add_test(tc, test_set_reaches_fields);
    tcase_add_test(tc, test_refusals_keep_value);
    tcase_add_test(tc, test_voted_max_vectors_range);
    tcase_add_test(tc, test_params_train);
    tcase_add_test(tc, test_expand_params);
    tcase_add_test(tc, test_shuffle_chunk_bounded);
    tcase_add_test(tc, test_ranges_checked);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
