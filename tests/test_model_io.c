/* Model files: exact round trips of linear and kernel models, and damaged files. */
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model.h"
#include "testutil.h"

static int has(const char *msg, const char *part) { return strstr(msg, part) != NULL; }

#define ASSERT_ERR(st, want, part)                                                                 \
    do {                                                                                           \
        ck_assert_int_eq((st), (want));                                                            \
        ck_assert_msg(has(pt_last_error(), (part)), "message lacks '%s': %s", (part),              \
                      pt_last_error());                                                            \
    } while (0)

static int bits_eq(const void *a, const void *b, size_t len) { return memcmp(a, b, len) == 0; }

static int exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

/* No temporary of path's writes ("PATH.tmp.*") left beside it. */
static void assert_no_temporary(const char *path)
{
    char dir[512], prefix[512];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    ck_assert_ptr_nonnull(slash);
    *slash = '\0';
    snprintf(prefix, sizeof prefix, "%s.tmp.", slash + 1);
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        ck_assert_msg(strncmp(e->d_name, prefix, strlen(prefix)) != 0, "%s/%s left behind", dir,
                      e->d_name);
    closedir(d);
}

/* Every field that the file carries, bit for bit. */
static void assert_same(const pt_model *a, const pt_model *b)
{
    ck_assert_int_eq(a->path, b->path);
    ck_assert_int_eq(a->variant, b->variant);
    ck_assert_uint_eq(a->d, b->d);
    ck_assert_int_eq(a->bias, b->bias);
    ck_assert(bits_eq(a->class_values, b->class_values, sizeof a->class_values));
    ck_assert_uint_eq(a->nclass, b->nclass);
    ck_assert_int_eq(a->epochs_run, b->epochs_run);
    ck_assert(bits_eq(&a->b, &b->b, sizeof a->b));
    const pt_train_params *p = &a->params, *q = &b->params;
    ck_assert_int_eq(p->epochs, q->epochs);
    ck_assert(bits_eq(&p->eta, &q->eta, sizeof p->eta));
    ck_assert(bits_eq(&p->margin, &q->margin, sizeof p->margin));
    ck_assert_int_eq(p->shuffle, q->shuffle);
    ck_assert(p->seed == q->seed);
    ck_assert_int_eq(p->batch.loss, q->batch.loss);
    ck_assert(bits_eq(&p->batch.lambda, &q->batch.lambda, sizeof p->batch.lambda));
    ck_assert_uint_eq(p->batch.size, q->batch.size);
    ck_assert_int_eq(p->batch.schedule, q->batch.schedule);
    ck_assert(bits_eq(&p->batch.tol, &q->batch.tol, sizeof p->batch.tol));
    ck_assert_int_eq(p->batch.impl, q->batch.impl);
    ck_assert_int_eq(p->batch.average_iterates, q->batch.average_iterates);
    ck_assert_int_eq(p->kernel.kind, q->kernel.kind);
    ck_assert_int_eq(p->kernel.degree, q->kernel.degree);
    ck_assert(bits_eq(&p->kernel.gamma, &q->kernel.gamma, sizeof p->kernel.gamma));
    ck_assert(bits_eq(&p->kernel.coef0, &q->kernel.coef0, sizeof p->kernel.coef0));
    ck_assert_uint_eq(p->kernel.cache_mb, q->kernel.cache_mb);
    ck_assert_int_eq(p->kernel.gram_storage, q->kernel.gram_storage);
    ck_assert_int_eq(q->path, b->path);
    ck_assert_int_eq(q->variant, b->variant);
    ck_assert_int_eq(q->bias, b->bias);
    size_t stride = pt_stride_for(a->d);
    ck_assert_int_eq(a->w != NULL, b->w != NULL);
    if (a->w) ck_assert(bits_eq(a->w, b->w, stride * sizeof(float))); /* padding zero too */
    ck_assert_uint_eq(a->n_sv, b->n_sv);
    ck_assert_int_eq(a->sv_ptr != NULL, b->sv_ptr != NULL);
    if (a->n_sv) ck_assert(bits_eq(a->coef, b->coef, a->n_sv * sizeof(float)));
    if (a->n_sv && a->sv_ptr) {
        ck_assert(bits_eq(a->sv_ptr, b->sv_ptr, (a->n_sv + 1) * sizeof *a->sv_ptr));
        size_t nnz = (size_t)a->sv_ptr[a->n_sv];
        ck_assert(bits_eq(a->sv_col, b->sv_col, nnz * sizeof *a->sv_col));
        ck_assert(bits_eq(a->sv_val, b->sv_val, nnz * sizeof *a->sv_val));
    } else if (a->n_sv) {
        ck_assert(bits_eq(a->sv, b->sv, a->n_sv * stride * sizeof(float)));
    }
}

static pt_model *save_load(const pt_model *m, const char **path)
{
    const char *p = tu_path("model", ".model");
    pt_status s = pt_model_save(m, p);
    ck_assert_msg(s == PT_OK, "save: %s", pt_last_error());
    pt_model *r = NULL;
    s = pt_model_load(p, &r);
    ck_assert_msg(s == PT_OK, "load: %s", pt_last_error());
    unlink(p);
    if (path) *path = p;
    return r;
}

/* Awkward floats: -0, subnormals, extremes, values with no short decimal form. */
static float awkward(size_t j)
{
    static const float v[] = {-0.0f, 1e-45f, 1.17549421e-38f, -3.40282347e38f, 0.1f,
                              1.0f / 3.0f, -2.71828183f, 123456.789f, 0.0f};
    return v[j % 9] / (1.0f + (float)j * 1e-3f);
}

static pt_model *hand_linear(size_t d)
{
    pt_model *m = pt_model_alloc_linear(d);
    ck_assert_ptr_nonnull(m);
    pt_train_params_init(&m->params);
    m->path = m->params.path = PT_PATH_BATCH;
    m->variant = m->params.variant = PT_VARIANT_AVERAGED;
    m->bias = m->params.bias = 0;
    m->class_values[0] = -0.1;
    m->class_values[1] = 1e300;
    pt_train_params *p = &m->params;
    p->epochs = 77;
    p->eta = 0.1f;
    p->margin = 1.0f / 3.0f;
    p->shuffle = 1;
    p->seed = UINT64_MAX;
    p->batch.loss = PT_LOSS_HINGE;
    p->batch.lambda = 1e-7f;
    p->batch.schedule = PT_SCHEDULE_PEGASOS;
    p->batch.size = 64;
    p->batch.tol = 1e-9 / 3.0;
    p->batch.impl = PT_BATCH_FUSED;
    p->batch.average_iterates = 1;
    p->kernel.kind = PT_KERNEL_RBF;
    p->kernel.degree = 5;
    p->kernel.gamma = 0.3f;
    p->kernel.coef0 = -2.5f;
    p->kernel.cache_mb = 123;
    p->kernel.gram_storage = PT_GRAM_ROWS;
    m->epochs_run = 12;
    m->b = -1e-40f;
    for (size_t j = 0; j < d; j++) m->w[j] = awkward(j);
    return m;
}

static pt_model *hand_kernel(void)
{
    size_t d = 5, n = 3, stride = pt_stride_for(d);
    pt_model *m = calloc(1, sizeof *m);
    ck_assert_ptr_nonnull(m);
    pt_train_params_init(&m->params);
    m->path = m->params.path = PT_PATH_KERNEL;
    m->params.kernel.kind = PT_KERNEL_POLY;
    m->params.kernel.degree = 3;
    m->params.kernel.gamma = 0.7f;
    m->params.kernel.coef0 = 1.5f;
    m->d = d;
    m->bias = 1;
    m->nclass = 2;
    m->class_values[0] = 0;
    m->class_values[1] = 1;
    m->epochs_run = 4;
    m->b = 2.0f;
    m->n_sv = n;
    m->sv = pt_calloc(n * stride * sizeof(float), "sv");
    m->coef = pt_alloc(n * sizeof(float), "coef");
    for (size_t i = 0; i < n; i++) {
        m->coef[i] = i == 1 ? -1.0f : 0.5f * (float)(i + 1);
        for (size_t j = 0; j < d; j++) m->sv[i * stride + j] = awkward(i * d + j);
    }
    return m;
}

START_TEST(roundtrip_trained)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.n = 200;
    g.d = 9;
    g.margin = 0.05;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    pt_train_params p;
    pt_train_params_init(&p);
    p.epochs = 5;
    p.eta = 0.3f;
    p.margin = 0.01f;
    p.shuffle = 1;
    p.seed = 7;
    p.variant = PT_VARIANT_AVERAGED;
    pt_model *m;
    pt_status s = pt_train(ds, &p, &m, NULL);
    ck_assert_msg(s == PT_OK, "%s", pt_last_error());
    pt_model *r = save_load(m, NULL);
    assert_same(m, r);
    float *sa = malloc(g.n * sizeof(float)), *sb = malloc(g.n * sizeof(float));
    ck_assert_int_eq(pt_model_scores(m, ds, sa), PT_OK);
    ck_assert_int_eq(pt_model_scores(r, ds, sb), PT_OK);
    ck_assert(bits_eq(sa, sb, g.n * sizeof(float)));
    free(sa);
    free(sb);
    pt_model_free(m);
    pt_model_free(r);
    pt_dataset_free(ds);
}
END_TEST

START_TEST(roundtrip_linear_hand)
{
    pt_model *m = hand_linear(40);
    pt_model *r = save_load(m, NULL);
    assert_same(m, r);
    pt_model_free(m);
    pt_model_free(r);
    m = hand_linear(0);
    r = save_load(m, NULL);
    assert_same(m, r);
    pt_model_free(m);
    pt_model_free(r);
}
END_TEST

START_TEST(roundtrip_kernel)
{
    pt_model *m = hand_kernel();
    pt_model *r = save_load(m, NULL);
    ck_assert_ptr_null(r->w);
    assert_same(m, r);
    pt_model_info info;
    pt_model_get_info(r, &info);
    ck_assert_uint_eq(info.n_support, 3);
    ck_assert_int_eq(info.kernel, PT_KERNEL_POLY);
    pt_model_free(m);
    pt_model_free(r);
}
END_TEST

/* The text a person reads, and the checksum over everything before its line. */
START_TEST(text_layout)
{
    pt_model_io_text_kernels(true); /* the text forms older files have */
    pt_model *m = hand_kernel();
    const char *p = tu_path("model", ".model");
    ck_assert_int_eq(pt_model_save(m, p), PT_OK);
    size_t len;
    char *t = tu_read_file(p, &len);
    ck_assert(strncmp(t, "ptron-model 1\npath kernel\n", 26) == 0);
    ck_assert(has(t, "\nkernel poly\ndegree 3\ngamma 0.699999988\ncoef0 1.5\n"));
    ck_assert(has(t, "\nlabels 0 1\n"));
    ck_assert(has(t, "\nn_sv 3\n0.5 -0 "));
    ck_assert(len > 26 && t[len - 1] == '\n');
    const char *last = t + len - 26;
    ck_assert(strncmp(last, "checksum ", 9) == 0);
    char want[32];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)pt_checksum(t, (size_t)(last - t)));
    ck_assert(strncmp(last + 9, want, 16) == 0);
    unlink(p);
    free(t);
    pt_model_free(m);
}
END_TEST

/* Save a model, return its text for a test to change. */
static char *model_text(const pt_model *m, size_t *len)
{
    const char *p = tu_path("model", ".model");
    ck_assert_int_eq(pt_model_save(m, p), PT_OK);
    char *t = tu_read_file(p, len);
    unlink(p);
    return t;
}

/* Replace the first occurrence of from by to and recompute the checksum line, as an editor
 * who knows the format would. Returns the new path. */
static const char *edit(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    ck_assert_msg(at != NULL, "'%s' not in the model text", from);
    size_t len = strlen(text), body_len = len - 26;
    char *out = malloc(len + strlen(to) + 64);
    size_t k = (size_t)(at - text);
    memcpy(out, text, k);
    strcpy(out + k, to);
    memcpy(out + k + strlen(to), at + strlen(from), body_len - k - strlen(from));
    size_t body = body_len - strlen(from) + strlen(to);
    snprintf(out + body, 64, "checksum %016llx\n", (unsigned long long)pt_checksum(out, body));
    const char *p = tu_write_file("edit", ".model", out);
    free(out);
    return p;
}

static pt_status load(const char *p)
{
    pt_model *m = (pt_model *)1;
    pt_status s = pt_model_load(p, &m);
    ck_assert_ptr_null(m);
    unlink(p);
    return s;
}

START_TEST(corrupted)
{
    pt_model *m = hand_linear(10);
    size_t len;
    char *t = model_text(m, &len);
    char *c = strstr(t, "\nw\n") + 3;
    *c = *c == '1' ? '2' : '1';
    const char *p = tu_write_bytes("corrupt", ".model", t, len);
    ASSERT_ERR(load(p), PT_ERR_CHECKSUM, "checksum mismatch (file corrupted or edited)");
    ck_assert(has(pt_last_error(), p));
    free(t);
    pt_model_free(m);
}
END_TEST

START_TEST(truncated)
{
    pt_model *m = hand_linear(10);
    size_t len;
    char *t = model_text(m, &len);
    size_t cuts[] = {len / 2, len - 1, len - 10, 20};
    for (size_t i = 0; i < 4; i++) {
        const char *p = tu_write_bytes("trunc", ".model", t, cuts[i]);
        ASSERT_ERR(load(p), PT_ERR_FORMAT, "truncated");
        ck_assert(has(pt_last_error(), p));
    }
    free(t);
    pt_model_free(m);
}
END_TEST

START_TEST(wrong_magic)
{
    const char *p = tu_write_file("magic", ".model", "+1 1:0.5\n-1 2:1\n");
    ASSERT_ERR(load(p), PT_ERR_FORMAT, ":1: not a ptron model");
    ck_assert(has(pt_last_error(), p));
    p = tu_write_file("magic", ".model", "");
    ASSERT_ERR(load(p), PT_ERR_FORMAT, ":1: not a ptron model");
    p = tu_write_file("magic", ".model", "ptron-model x\n");
    ASSERT_ERR(load(p), PT_ERR_FORMAT, ":1: not a ptron model");
    p = tu_path("absent", ".model");
    ASSERT_ERR(load(p), PT_ERR_IO, p);
}
END_TEST

START_TEST(newer_version)
{
    pt_model *m = hand_linear(3);
    size_t len;
    char *t = model_text(m, &len);
    const char *p = edit(t, "ptron-model 1\n", "ptron-model 5\n");
    ASSERT_ERR(load(p), PT_ERR_VERSION, "version 5");
    ck_assert(has(pt_last_error(), "version 4") && has(pt_last_error(), p));
    free(t);
    pt_model_free(m);
}
END_TEST

/* hand_kernel's model with its support vectors sparse (CSR; some values zero in the dense
 * form are absent here, one vector has none). */
static pt_model *hand_sparse_kernel(void)
{
    pt_model *m = hand_kernel();
    size_t d = m->d, stride = pt_stride_for(d), n = m->n_sv, z = 0;
    m->sv_ptr = pt_alloc((n + 1) * sizeof *m->sv_ptr, "ptr");
    m->sv_col = pt_alloc(n * d * sizeof *m->sv_col, "col");
    m->sv_val = pt_alloc(n * d * sizeof *m->sv_val, "val");
    m->sv_ptr[0] = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < d && i != 2; j++)
            if (j % 2 == i % 2 && m->sv[i * stride + j] != 0.0f) {
                m->sv_col[z] = (uint32_t)j;
                m->sv_val[z++] = m->sv[i * stride + j];
            }
        m->sv_ptr[i + 1] = z;
    }
    pt_free(m->sv);
    m->sv = NULL;
    return m;
}

/* Sparse support vectors (version 3): written as INDEX:VALUE, read back bit for bit, in a
 * binary model and a one-vs-rest one; a model trained on sparse rows round-trips and scores
 * the same; the dense models stay version 1. */
START_TEST(roundtrip_sparse_kernel)
{
    pt_model *m = hand_sparse_kernel();
    size_t len;
    char *t = model_text(m, &len);
    ck_assert(strncmp(t, "ptron-model 3\n", 14) == 0);
    ck_assert_msg(has(t, "\nn_sv 3 sparse\n"), "%s", t);
    ck_assert(has(t, "\n1.5\n")); /* the vector with no non-zero: its coefficient alone */
    free(t);
    pt_model *r = save_load(m, NULL);
    ck_assert_ptr_null(r->sv);
    assert_same(m, r);
    pt_model_free(r);
    pt_model *k = hand_kernel();
    t = model_text(k, &len);
    ck_assert(strncmp(t, "ptron-model 4\n", 14) == 0); /* the dense one: a binary section */
    free(t);
    pt_model_free(k);

    /* trained: binary and one-vs-rest */
    for (size_t classes = 2; classes <= 3; classes++) {
        pt_gen_params g;
        pt_gen_params_init(&g);
        g.kind = classes == 2 ? PT_GEN_SPARSE : PT_GEN_BLOBS;
        g.n = 300;
        g.d = classes == 2 ? 500 : 8;
        g.nnz = 10;
        g.margin = classes == 2 ? 0.001 : 0.1;
        pt_dataset *ds, *sp;
        ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
        ck_assert_int_eq(pt_dataset_convert(ds, PT_LAYOUT_SPARSE, 0, &sp), PT_OK);
        pt_train_params p;
        pt_train_params_init(&p);
        p.path = PT_PATH_KERNEL;
        p.kernel.kind = PT_KERNEL_RBF;
        p.epochs = 3;
        pt_model *tm = NULL;
        ck_assert_int_eq(pt_train(sp, &p, &tm, NULL), PT_OK);
        const char *path;
        r = save_load(tm, &path);
        if (classes == 2) {
            assert_same(tm, r);
        } else {
            for (size_t c = 0; c < classes; c++) {
                const pt_model *x = tm->sub[c], *y = r->sub[c];
                ck_assert_uint_eq(x->n_sv, y->n_sv);
                ck_assert_ptr_nonnull(y->sv_ptr);
                size_t nnz = (size_t)x->sv_ptr[x->n_sv];
                ck_assert(bits_eq(x->sv_ptr, y->sv_ptr, (x->n_sv + 1) * sizeof *x->sv_ptr));
                ck_assert(bits_eq(x->sv_col, y->sv_col, nnz * sizeof *x->sv_col));
                ck_assert(bits_eq(x->sv_val, y->sv_val, nnz * sizeof *x->sv_val));
                ck_assert(bits_eq(x->coef, y->coef, x->n_sv * sizeof(float)));
            }
        }
        double *a = malloc(300 * sizeof *a), *b = malloc(300 * sizeof *b);
        ck_assert_int_eq(pt_model_predict(tm, sp, a), PT_OK);
        ck_assert_int_eq(pt_model_predict(r, sp, b), PT_OK);
        ck_assert(bits_eq(a, b, 300 * sizeof *a));
        free(a);
        free(b);
        pt_model_free(tm);
        pt_model_free(r);
        pt_dataset_free(ds);
        pt_dataset_free(sp);
    }
    pt_model_free(m);
}
END_TEST

/* A class's support vectors and coefficients, bit for bit (padding included). */
static void same_vectors(const pt_model *a, const pt_model *b)
{
    ck_assert_uint_eq(a->n_sv, b->n_sv);
    ck_assert_ptr_null(b->sv_ptr);
    ck_assert(bits_eq(a->coef, b->coef, a->n_sv * sizeof(float)));
    ck_assert(bits_eq(a->sv, b->sv, a->n_sv * pt_stride_for(a->d) * sizeof(float)));
}

/* Version 4: dense support vectors in the binary section, one set for one-vs-rest's classes.
 * A two-class model round-trips bit for bit (awkward floats, -0 and subnormals included) under
 * a readable header; a trained one-vs-rest model stores fewer vectors than its classes hold
 * together, loads back with each class's vectors and coefficients in its own order, and
 * predicts the same labels and scores, bit for bit. */
START_TEST(roundtrip_binary_section)
{
    pt_model *m = hand_kernel();
    size_t len;
    char *t = model_text(m, &len);
    ck_assert(strncmp(t, "ptron-model 4\npath kernel\n", 26) == 0);
    ck_assert(has(t, "\nkernel poly\ndegree 3\n"));
    ck_assert(has(t, "\nn_sv 3 binary\nbinary 72\n")); /* 3 x 5 values + 3 coefficients */
    free(t);
    pt_model *r = save_load(m, NULL);
    assert_same(m, r);
    pt_model_free(r);
    pt_model_free(m);

    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_BLOBS;
    g.n = 400;
    g.d = 32;
    g.margin = 0.05;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    ck_assert_uint_ge(pt_dataset_nclass(ds), 3);
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = PT_PATH_KERNEL;
    p.kernel.kind = PT_KERNEL_RBF;
    p.variant = PT_VARIANT_AVERAGED;
    p.epochs = 3;
    pt_model *tm = NULL;
    ck_assert_int_eq(pt_train(ds, &p, &tm, NULL), PT_OK);
    const size_t K = tm->nclass;
    size_t total = 0, most = 0;
    for (size_t c = 0; c < K; c++) {
        total += tm->sub[c]->n_sv;
        if (tm->sub[c]->n_sv > most) most = tm->sub[c]->n_sv;
    }
    t = model_text(tm, &len);
    const char *at = strstr(t, "\novr_kernel shared ");
    ck_assert_ptr_nonnull(at);
    size_t shared = strtoul(at + 19, NULL, 10);
    ck_assert_msg(shared >= most && shared < total, "set %zu, classes %zu (largest %zu)", shared,
                  total, most);
    free(t);
    r = save_load(tm, NULL);
    ck_assert_uint_eq(r->nclass, K);
    pt_model_info info;
    pt_model_get_info(r, &info);
    ck_assert_uint_eq(info.n_support, total); /* the classes' vectors together */
    for (size_t c = 0; c < K; c++) same_vectors(tm->sub[c], r->sub[c]);
    size_t n = pt_dataset_n(ds);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    float *sa = malloc(n * K * sizeof *sa), *sb = malloc(n * K * sizeof *sb);
    ck_assert_int_eq(pt_model_predict(tm, ds, a), PT_OK);
    ck_assert_int_eq(pt_model_predict(r, ds, b), PT_OK);
    ck_assert(bits_eq(a, b, n * sizeof *a));
    ck_assert_int_eq(pt_model_class_scores(tm, ds, sa), PT_OK);
    ck_assert_int_eq(pt_model_class_scores(r, ds, sb), PT_OK);
    ck_assert(bits_eq(sa, sb, n * K * sizeof *sa));
    /* the classes' scores through the shared set (taken: it computes fewer kernel values)
     * equal each class's own model's to rounding: |error| <= 1e-5 of the largest score, the
     * sum of |coefficients| times the largest kernel value (1 + 1 for RBF with the bias) */
    ck_assert(shared * (g.d + K) < total * (g.d + 1));
    float *bs = malloc(n * sizeof *bs);
    for (size_t c = 0; c < K; c++) {
        const pt_model *sub = tm->sub[c];
        double bound = 0.0;
        for (size_t i = 0; i < sub->n_sv; i++) bound += fabs(sub->coef[i]) * 2.0;
        ck_assert_int_eq(pt_model_kernel_scores(sub, ds, bs), PT_OK);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(fabs((double)bs[i] - sa[i * K + c]) <= 1e-5 * bound,
                          "class %zu row %zu: shared %.9g, alone %.9g", c, i,
                          (double)sa[i * K + c], (double)bs[i]);
    }
    free(bs);
    free(a);
    free(b);
    free(sa);
    free(sb);
    pt_model_free(tm);
    pt_model_free(r);
    pt_dataset_free(ds);
}
END_TEST

/* Bytes of a saved model with [at, at + count) replaced and the checksum recomputed (the
 * binary section may hold any byte, so no string functions). Returns the path written. */
static const char *edit_bytes(const char *t, size_t len, size_t at, const void *bytes,
                              size_t count)
{
    char *out = malloc(len);
    memcpy(out, t, len);
    memcpy(out + at, bytes, count);
    size_t body = len - 26;
    char line[32];
    snprintf(line, sizeof line, "checksum %016llx\n", (unsigned long long)pt_checksum(out, body));
    memcpy(out + body, line, 26);
    const char *p = tu_write_bytes("edit", ".model", out, len);
    free(out);
    return p;
}

/* edit() on a file that may hold NUL bytes (a binary section): len bytes at t. */
static const char *edit_len(const char *t, size_t len, const char *from, const char *to)
{
    const char *at = memmem(t, len, from, strlen(from));
    ck_assert_msg(at != NULL, "'%s' not in the model", from);
    size_t k = (size_t)(at - t), body = len - 26 - strlen(from) + strlen(to);
    char *out = malloc(body + 26 + 1);
    memcpy(out, t, k);
    memcpy(out + k, to, strlen(to));
    memcpy(out + k + strlen(to), at + strlen(from), len - 26 - k - strlen(from));
    snprintf(out + body, 27, "checksum %016llx\n", (unsigned long long)pt_checksum(out, body));
    const char *p = tu_write_bytes("edit", ".model", out, body + 26);
    free(out);
    return p;
}

/* A damaged or edited binary section is refused with the line and the reason; nothing loads. */
START_TEST(edited_binary_section)
{
    pt_model *m = hand_kernel();
    size_t len;
    char *t = model_text(m, &len);
    const char *sec = strstr(t, "\nbinary 72\n") + 11;
    size_t off = (size_t)(sec - t);
    /* a flipped bit without a new checksum */
    char *c = malloc(len);
    memcpy(c, t, len);
    c[off + 5] ^= 0x10;
    const char *p = tu_write_bytes("corrupt", ".model", c, len);
    ASSERT_ERR(load(p), PT_ERR_CHECKSUM, "checksum mismatch");
    free(c);
    /* a NaN in a vector, an infinite coefficient */
    const uint32_t nan = 0x7fc00000u, inf = 0x7f800000u;
    p = edit_bytes(t, len, off + 4 * 7, &nan, 4);
    ASSERT_ERR(load(p), PT_ERR_PARSE, "binary: support vector value 2 is not a finite number");
    p = edit_bytes(t, len, off + 4 * 16, &inf, 4);
    ASSERT_ERR(load(p), PT_ERR_PARSE, "binary: coefficient 1 is not a finite number");
    /* the size line against the counts; a section cut short */
    p = edit_len(t, len, "\nbinary 72\n", "\nbinary 71\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":30: binary: 71 bytes, where the counts above make 72");
    p = edit_len(t, len, "\nn_sv 3 binary\n", "\nn_sv 9 binary\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, "binary: 72 bytes, where the counts above make 216");
    p = edit_len(t, len, "\nn_sv 3 binary\nbinary 72\n", "\nn_sv 4 binary\nbinary 96\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, "the section of 96 bytes and its newline do not fit");
    p = edit_len(t, len, "\nn_sv 3 binary\n", "\nn_sv 999999999999999999 binary\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, "support vectors of 5 features overflow");
    p = edit_len(t, len, "ptron-model 4\n", "ptron-model 3\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, "binary support vectors need model format version 4");
    free(t);
    pt_model_free(m);

    /* one-vs-rest: an index past the set */
    pt_model *o = calloc(1, sizeof *o);
    *o = (pt_model){.path = PT_PATH_KERNEL, .d = 5, .bias = 1, .nclass = 3};
    pt_train_params_init(&o->params);
    o->params.path = PT_PATH_KERNEL;
    o->labels = malloc(3 * sizeof(double));
    o->sub = calloc(3, sizeof *o->sub);
    for (size_t k = 0; k < 3; k++) {
        o->labels[k] = (double)k;
        o->sub[k] = hand_kernel();
    }
    t = model_text(o, &len);
    ck_assert_msg(has(t, "\novr_kernel shared 3\nclass_sv 3 3 3\nbinary 132\n"), "%s", t);
    sec = strstr(t, "\nbinary 132\n") + 12;
    const uint32_t past = 3;
    p = edit_bytes(t, len, (size_t)(sec - t) + 60 + 4, &past, 4);
    ASSERT_ERR(load(p), PT_ERR_PARSE, "binary: class 0's vector 1 is 3, past the set's 3");
    p = edit_len(t, len, "\nclass_sv 3 3 3\n", "\nclass_sv 3 3\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, "class_sv: expected 3 counts, found 2");
    free(t);
    pt_model *r = save_load(o, NULL);
    for (size_t k = 0; k < 3; k++) same_vectors(o->sub[k], r->sub[k]);
    pt_model_free(r);
    pt_model_free(o);
}
END_TEST

/* Sparse support vectors edited into what no model could hold: a parse error naming the line. */
START_TEST(edited_sparse_kernel)
{
    pt_model *m = hand_sparse_kernel();
    size_t len;
    char *t = model_text(m, &len);
    const char *line = strstr(t, "\nn_sv 3 sparse\n") + 16, *eol = strchr(line, '\n');
    char first[256];
    snprintf(first, sizeof first, "%.*s", (int)(eol - line + 1), line); /* "0.5 1:.. 3:.. 5:..\n" */
    const struct { const char *to, *want; } cases[] = {
        {"0.5 3:1 1:2\n", "index 1: indices start at 1 and increase"},
        {"0.5 0:1\n", "index 0: indices start at 1 and increase"},
        {"0.5 6:1\n", "index: '6' is not an integer in 0..5"},
        {"0.5 2\n", "'2': expected INDEX:VALUE"},
        {"0.5 2:nan\n", "value: 'nan' is not a finite number"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *p = edit(t, first, cases[c].to);
        ASSERT_ERR(load(p), PT_ERR_PARSE, cases[c].want);
        ck_assert(has(pt_last_error(), p));
    }
    const char *p = edit(t, "ptron-model 3\n", "ptron-model 2\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, "sparse support vectors need model format version 3");
    p = edit(t, "\nn_sv 3 sparse\n", "\nn_sv 3 dense\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, "n_sv: expected a count, and 'sparse', 'binary' or nothing");
    p = edit(t, "\nn_sv 3 sparse\n", "\nn_sv 4 sparse\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, "n_sv: found 3 of 4 support vectors");
    free(t);
    pt_model_free(m);
}
END_TEST

/* Edited files with a valid checksum: the error names the line, nothing huge is allocated. */
START_TEST(edited_counts)
{
    pt_model_io_text_kernels(true); /* the text forms older files have */
    pt_model *m = hand_kernel();
    size_t len;
    char *t = model_text(m, &len);
    const char *p = edit(t, "\nn_sv 3\n", "\nn_sv 999999999999999\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":29: n_sv: 999999999999999 support vectors");
    ck_assert(has(pt_last_error(), p));
    p = edit(t, "\nn_sv 3\n", "\nn_sv 18446744073709551615\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":29: n_sv");
    p = edit(t, "\nn_sv 3\n", "\nn_sv 4\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":33: n_sv: found 3 of 4 support vectors");
    p = edit(t, "\nn_sv 3\n", "\nn_sv 2\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":32: unexpected line");
    p = edit(t, "\nd 5\n", "\nd 6\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":30: expected 7 values, found 6");
    free(t);
    pt_model_free(m);

    m = hand_linear(4);
    t = model_text(m, &len);
    p = edit(t, "\nd 4\n", "\nd 999999999\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":29: w: 999999999 weights cannot fit");
    p = edit(t, "\nd 4\n", "\nd 9999999999999\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":5: d: 9999999999999 features are more than a model file");
    p = edit(t, "\nd 4\n", "\nd 5\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":34: w: found 4 of 5 weights");
    free(t);
    pt_model_free(m);
}
END_TEST

START_TEST(edited_keys)
{
    pt_model *m = hand_linear(4);
    size_t len;
    char *t = model_text(m, &len);
    const char *p = edit(t, "\nbias 0\n", "\nbias 0\nfoo 1\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":5: unknown key 'foo'");
    ck_assert(has(pt_last_error(), p));
    p = edit(t, "\neta 0.100000001\n", "\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, "missing key 'eta'");
    p = edit(t, "\neta 0.100000001\n", "\neta nan\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":9: eta: 'nan' is not a finite number");
    p = edit(t, "\neta 0.100000001\n", "\neta 1e39\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":9: eta");
    p = edit(t, "\nloss hinge\n", "\nloss cubic\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":14: loss: unknown value 'cubic'");
    p = edit(t, "\nbias 0\n", "\nbias 0\nbias 1\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":5: key 'bias' given twice");
    p = edit(t, "\nseed 18446744073709551615\n", "\nseed 18446744073709551616\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":13: seed");
    p = edit(t, "\nlabels -0.10000000000000001 1.0000000000000001e+300\n", "\nlabels 1\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":7: labels: expected 2 values");
    p = edit(t, "\nnclass 2\n", "\nnclass 3\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":7: labels: expected 3 values");
    /* a class count is bounded by the file: each label takes two bytes at least */
    p = edit(t, "\nnclass 2\n", "\nnclass 15000\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":6: nclass 15000: the labels of that many classes cannot fit");
    p = edit(t, "\nw\n", "\nw\n1 2\n");
    ASSERT_ERR(load(p), PT_ERR_PARSE, ":30: expected 1 values, found more");
    /* keys may come in another order */
    p = edit(t, "\nbias 0\nd 4\n", "\nd 4\nbias 0\n");
    pt_model *r = NULL;
    ck_assert_int_eq(pt_model_load(p, &r), PT_OK);
    unlink(p);
    assert_same(m, r);
    pt_model_free(r);
    free(t);
    pt_model_free(m);
}
END_TEST

/* text with the line that starts with "key " set to "key value", and the checksum line
 * recomputed (malloc'd). */
static char *with_line(const char *text, const char *key, const char *value)
{
    char from[64];
    snprintf(from, sizeof from, "\n%s ", key);
    const char *at = strstr(text, from);
    ck_assert_msg(at != NULL, "no line '%s' in the model text", key);
    const char *eol = strchr(at + 1, '\n');
    size_t len = strlen(text), body_len = len - 26, head = (size_t)(at - text) + 1;
    char *out = malloc(len + strlen(key) + strlen(value) + 64);
    memcpy(out, text, head);
    size_t k = head + (size_t)sprintf(out + head, "%s %s", key, value);
    size_t tail = body_len - (size_t)(eol - text);
    memcpy(out + k, eol, tail);
    k += tail;
    snprintf(out + k, 64, "checksum %016llx\n", (unsigned long long)pt_checksum(out, k));
    return out;
}

/* Load text (with its checksum right): the status, a message naming the file and want. */
static void refused(char *text, const char *want)
{
    const char *p = tu_write_file("contra", ".model", text);
    char path[512];
    snprintf(path, sizeof path, "%s", p);
    ASSERT_ERR(load(path), PT_ERR_PARSE, want);
    ck_assert(has(pt_last_error(), path));
    free(text);
}

/* Models with a valid checksum whose fields are out of range or contradict each other or the
 * body are refused, naming the line of the field and why; none loads. */
START_TEST(contradictory_fields)
{
    pt_model_io_text_kernels(true); /* the text forms older files have */
    /* the kernel model: 2 path, 3 variant, 5 d, 11 epochs, 21 kernel poly, 22 degree, 23 gamma,
     * 24 coef0, 27 epochs_run (of 10 epochs), 29 n_sv */
    pt_model *k = hand_kernel();
    k->params.epochs = 10;
    size_t len;
    char *t = model_text(k, &len);
    refused(with_line(t, "degree", "0"), ":22: degree: 0 is outside 1..32");
    refused(with_line(t, "degree", "2147483647"), ":22: degree: 2147483647 is outside 1..32");
    refused(with_line(t, "degree", "2147483648"), ":22: degree: '2147483648' is not an integer");
    refused(with_line(t, "gamma", "-0.5"), ":23: gamma: -0.5 must be > 0");
    refused(with_line(t, "gamma", "0"), ":23: gamma: 0 must be > 0");
    refused(with_line(t, "coef0", "-1"), ":24: coef0 -1: (gamma x.z + c)^k is a kernel only for c >= 0");
    refused(with_line(t, "path", "online"), ":2: path online: an online model holds weights ('w' or 'W'), not 'n_sv'");
    refused(with_line(t, "variant", "voted"), ":3: variant voted: the kernel path has no voted variant");
    refused(with_line(t, "epochs_run", "11"), ":27: epochs_run 11: more than the 10 epochs");
    refused(with_line(t, "d", "1152921504606846976"), ":5: d: 1152921504606846976 features are more than a model file can hold");
    /* what the kernel path never reads is not checked: coef0 < 0 with the RBF kernel loads */
    char *rbf = with_line(t, "kernel", "rbf"), *neg = with_line(rbf, "coef0", "-1");
    const char *p = tu_write_file("contra", ".model", neg);
    pt_model *m = NULL;
    ck_assert_msg(pt_model_load(p, &m) == PT_OK, "%s", pt_last_error());
    pt_model_free(m);
    unlink(p);
    free(rbf);
    free(neg);
    free(t);
    pt_model_free(k);

    /* a linear model: 2 path, 9 eta, 10 margin, 11 epochs, 15 lambda, 16 schedule pegasos,
     * 18 tol */
    pt_model *l = hand_linear(4);
    t = model_text(l, &len);
    refused(with_line(t, "eta", "0"), ":9: eta: 0 must be > 0");
    refused(with_line(t, "eta", "-1"), ":9: eta: -1 must be > 0");
    refused(with_line(t, "margin", "-0.5"), ":10: margin: -0.5 must be >= 0");
    refused(with_line(t, "epochs", "0"), ":11: epochs: a run has at least one epoch");
    refused(with_line(t, "lambda", "-1"), ":15: lambda: -1 must be >= 0");
    refused(with_line(t, "lambda", "0"), ":16: schedule pegasos: steps 1/(lambda t) need lambda > 0");
    refused(with_line(t, "tol", "-1e-9"), ":18: tol: -1e-9 must be >= 0");
    refused(with_line(t, "path", "kernel"), ":2: path kernel: a kernel model holds support vectors ('n_sv' or 'ovr_kernel'), not 'w'");
    /* earlier versions wrote the batch path's plain iterate under --voted: it loads as that */
    char *batch_voted = with_line(t, "variant", "voted");
    p = tu_write_file("contra", ".model", batch_voted);
    ck_assert_msg(pt_model_load(p, &m) == PT_OK, "%s", pt_last_error());
    ck_assert_uint_eq(m->n_votes, 0);
    pt_model_free(m);
    unlink(p);
    free(batch_voted);
    /* a cap on the voted vectors only where there are voted vectors */
    p = edit(t, "\ngram_storage", "\nvoted_max_vectors 3\ngram_storage");
    ASSERT_ERR(load(p), PT_ERR_PARSE, "pt_train_params.voted_max_vectors caps the voted "
                                      "perceptron's vectors (PT_VARIANT_VOTED); the classic");
    /* the voted variant of the online path without its vectors */
    char *online = with_line(t, "path", "online");
    refused(with_line(online, "variant", "voted"), ":3: variant voted: the file holds no voted vectors");
    free(online);
    free(t);

    /* votes: on the voted online model they load; on another path, or with a count of 0, not */
    size_t stride = pt_stride_for(l->d);
    l->path = l->params.path = PT_PATH_ONLINE;
    l->variant = l->params.variant = PT_VARIANT_VOTED;
    l->n_votes = 2;
    l->votes = pt_calloc(2 * stride * sizeof(float), "votes");
    l->vote_b = pt_alloc(2 * sizeof(float), "votes");
    l->vote_c = pt_alloc(2 * sizeof(float), "votes");
    for (size_t v = 0; v < 2; v++) {
        l->vote_b[v] = (float)v;
        l->vote_c[v] = 3.0f + (float)v;
        l->votes[v * stride] = 1.0f;
    }
    t = model_text(l, &len);
    p = tu_write_file("voted", ".model", t);
    ck_assert_msg(pt_model_load(p, &m) == PT_OK, "%s", pt_last_error());
    ck_assert_uint_eq(m->n_votes, 2);
    pt_model_free(m);
    unlink(p);
    /* a cap (voted_max_vectors) kept in the file, and no fewer than the vectors listed */
    l->params.online.voted_max_vectors = 2;
    size_t capped_len;
    char *capped = model_text(l, &capped_len);
    ck_assert(has(capped, "\nvoted_max_vectors 2\n"));
    p = tu_write_file("voted", ".model", capped);
    ck_assert_msg(pt_model_load(p, &m) == PT_OK, "%s", pt_last_error());
    ck_assert_uint_eq(m->params.online.voted_max_vectors, 2);
    ck_assert_uint_eq(m->n_votes, 2);
    pt_model_free(m);
    unlink(p);
    refused(with_line(capped, "voted_max_vectors", "1"),
            ":35: votes: 2 vectors, over the cap of voted_max_vectors 1");
    refused(with_line(capped, "voted_max_vectors", "0"),
            ":27: voted_max_vectors: 0 is written as no such line");
    free(capped);
    l->params.online.voted_max_vectors = 0;
    /* lines: 28 b, 29 w, 30..33 the weights, 34 votes, 35 and 36 the vectors */
    ck_assert(has(t, "\nvotes 2\n3 0 1 0 0 0\n4 1 1 0 0 0\n"));
    refused(with_line(t, "path", "batch"), ":34: votes: only the voted variant of the online path");
    char *avg = with_line(t, "variant", "averaged");
    refused(avg, ":34: votes: only the voted variant");
    char *zero = malloc(len + 1);
    memcpy(zero, t, len + 1);
    memcpy(strstr(zero, "\n4 1 1 0 0 0\n") + 1, "0", 1);
    size_t body = len - 26;
    snprintf(zero + body, 27, "checksum %016llx\n", (unsigned long long)pt_checksum(zero, body));
    refused(zero, ":36: votes: vector 2 survived 0 samples: a count must be > 0");
    free(t);
    pt_model_free(l);

    /* the direct multiclass method is the online path's */
    const double labels[3] = {1, 2, 3};
    pt_model *mc = pt_model_alloc_multiclass(2, 3, labels);
    pt_train_params_init(&mc->params);
    mc->path = mc->params.path = PT_PATH_BATCH;
    mc->multiclass = mc->params.multiclass = PT_MULTI_DIRECT;
    mc->bias = mc->params.bias = 1;
    t = model_text(mc, &len);
    refused(with_line(t, "multiclass", "direct"),
            ":8: multiclass direct: the multiclass perceptron runs on the online path, not batch");
    char *fine = with_line(t, "path", "online");
    p = tu_write_file("direct", ".model", fine);
    ck_assert_msg(pt_model_load(p, &m) == PT_OK, "%s", pt_last_error());
    pt_model_free(m);
    unlink(p);
    free(fine);
    /* the voted variant of more classes: one-vs-rest keeps each class's vectors
     * ('ovr_votes'); the multiclass perceptron has none */
    online = with_line(t, "path", "online");
    char *voted = with_line(online, "variant", "voted"), *ovr = with_line(voted, "multiclass", "ovr");
    refused(with_line(ovr, "epochs_run", "3"),
            ":3: variant voted: the file holds no voted vectors ('ovr_votes' after the weights)");
    refused(with_line(voted, "epochs_run", "3"),
            ":3: variant voted: the multiclass perceptron (multiclass direct) has no voted variant");
    free(online);
    free(voted);
    free(ovr);
    free(t);
    /* text labels: the labels are the class indices 0..K-1 */
    mc->multiclass = mc->params.multiclass = PT_MULTI_OVR;
    char *names[3] = {"a", "b", "c"};
    mc->label_names = pt_names_dup(names, 3);
    t = model_text(mc, &len);
    refused(with_line(t, "names", "a b c"), ":9: names: a model of text labels has labels 0..2");
    fine = with_line(t, "labels", "0 1 2");
    p = tu_write_file("names", ".model", fine);
    ck_assert_msg(pt_model_load(p, &m) == PT_OK, "%s", pt_last_error());
    ck_assert_str_eq(pt_model_class_name(m, 2), "c");
    pt_model_free(m);
    unlink(p);
    free(fine);
    free(t);
    pt_model_free(mc);

    /* a model trained on an expansion (27: the expand line): its own parameters' ranges */
    l = hand_linear(6);
    l->params.expand.kind = PT_EXPAND_POLY;
    l->params.expand.degree = 2;
    l->params.expand.coef0 = 1.0f;
    l->expand_d_in = 2; /* C(2 + 2, 2) = 6 features */
    t = model_text(l, &len);
    ck_assert(has(t, "\ngram_storage rows\nexpand poly degree 2 "));
    refused(with_line(t, "expand", "poly degree 0 coef0 1 rff_dim 1024 gamma 1 seed 1 d_in 2"),
            ":27: expand: expansion degree must be in 1..32");
    refused(with_line(t, "expand", "poly degree 2 coef0 -1 rff_dim 1024 gamma 1 seed 1 d_in 2"),
            ":27: expand: expansion coef0 must be >= 0");
    refused(with_line(t, "expand", "rff degree 2 coef0 1 rff_dim 6 gamma -1 seed 1 d_in 2"),
            ":27: expand: RFF gamma must be a positive number");
    free(t);
    pt_model_free(l);
}
END_TEST

/* ------------------------------------------------------------------- run states */

/* Noisy two-class data (labels that no separator fits) of n rows, d features. */
static pt_dataset *noisy(size_t n, size_t d, uint64_t seed)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = PT_GEN_NOISY;
    g.n = n;
    g.d = d;
    g.noise = 0.3;
    g.seed = seed;
    pt_dataset *ds;
    ck_assert_int_eq(pt_generate(&g, &ds), PT_OK);
    return ds;
}

static int stop_at_end_of(const pt_model *m, int epoch, size_t mistakes, void *user)
{
    (void)m;
    (void)mistakes;
    if (epoch == *(const int *)user) pt_request_stop();
    return 0;
}

/* A run of p stopped in the middle of the epoch after `at`. */
static pt_model *interrupted(const pt_dataset *ds, const pt_train_params *p, int at)
{
    pt_train_params q = *p;
    q.epoch_hook = stop_at_end_of;
    q.epoch_user = &at;
    pt_model *m = NULL;
    ck_assert_int_eq(pt_train(ds, &q, &m, NULL), PT_ERR_INTERRUPTED);
    ck_assert(pt_model_resumable(m));
    return m;
}

/* The text with the line that starts with `key` replaced by `line` (NULL: removed), and the
 * checksum recomputed. */
static char *with_state_line(const char *text, const char *key, const char *line)
{
    size_t len = strlen(text), body = len - 26;
    char *out = malloc(len + (line ? strlen(line) : 0) + 64);
    const char *at = text;
    while (strncmp(at, key, strlen(key)) != 0) {
        at = strchr(at, '\n');
        ck_assert_msg(at != NULL, "no line '%s'", key);
        at++;
    }
    const char *next = strchr(at, '\n') + 1;
    size_t k = (size_t)(at - text), o = k;
    memcpy(out, text, k);
    if (line) o += (size_t)sprintf(out + o, "%s\n", line);
    memcpy(out + o, next, body - (size_t)(next - text));
    o += body - (size_t)(next - text);
    snprintf(out + o, 64, "checksum %016llx\n", (unsigned long long)pt_checksum(out, o));
    return out;
}

/* The first line of text starting with key, without the newline (static buffer). */
static const char *line_of(const char *text, const char *key)
{
    static char buf[1 << 16];
    const char *at = text;
    while (strncmp(at, key, strlen(key)) != 0) at = strchr(at, '\n') + 1;
    size_t n = (size_t)(strchr(at, '\n') - at);
    ck_assert(n < sizeof buf);
    memcpy(buf, at, n);
    buf[n] = '\0';
    return buf;
}

static pt_status load_text(const char *text, pt_model **m)
{
    const char *p = tu_write_file("state", ".model", text);
    pt_status s = pt_model_load(p, m);
    unlink(p);
    return s;
}

/* A run state written by version 1 (every epoch in its history; b and ub on the resume line)
 * still loads, and resumes to the uninterrupted run's model. */
START_TEST(v1_run_state_loads)
{
    pt_dataset *ds = noisy(150, 3, 4);
    pt_train_params p;
    pt_train_params_init(&p);
    p.epochs = 40;
    p.shuffle = 1;
    p.variant = PT_VARIANT_AVERAGED;
    pt_model *full, *part = interrupted(ds, &p, 17);
    ck_assert_int_eq(pt_train(ds, &p, &full, NULL), PT_OK);
    size_t len;
    char *t = model_text(part, &len);
    ck_assert(strncmp(t, "ptron-model 2\n", 14) == 0);
    /* the same run state as version 1 wrote it */
    unsigned long long n, e, pos, em, upd;
    char steps[64], v1[256], b[64], ub[64];
    ck_assert_int_eq(sscanf(line_of(t, "resume "), "resume %llu %llu %llu %llu %llu %63s", &n, &e,
                            &pos, &em, &upd, steps), 6);
    ck_assert_int_eq(sscanf(line_of(t, "live_b "), "live_b %63s", b), 1);
    ck_assert_int_eq(sscanf(line_of(t, "live_ub "), "live_ub %63s", ub), 1);
    snprintf(v1, sizeof v1, "resume %llu %llu %llu %llu %llu %s %s %s", n, e, pos, em, upd, steps, b, ub);
    char *a = with_state_line(t, "resume ", v1), *c = with_state_line(a, "live_b ", NULL);
    free(a);
    a = with_state_line(c, "live_ub ", NULL);
    free(c);
    c = with_state_line(a, "ptron-model ", "ptron-model 1");
    pt_model *m1;
    ck_assert_msg(load_text(c, &m1) == PT_OK, "%s", pt_last_error());
    pt_train_params q = p;
    q.resume = m1;
    pt_model *rest;
    ck_assert_int_eq(pt_train(ds, &q, &rest, NULL), PT_OK);
    assert_same(rest, full);
    pt_model_free(rest);
    pt_model_free(m1);
    free(a);
    free(c);

    /* a history of 322,534 epochs (a long run's version 1 file): loads, keeps the last 1000 */
    const int E = 322534;
    pt_model *classic;
    p.variant = PT_VARIANT_CLASSIC;
    classic = interrupted(ds, &p, 5);
    free(t);
    t = model_text(classic, &len);
    char *hist = malloc((size_t)E * 8 + 16), *h = hist;
    h += sprintf(h, "history");
    for (int k = 0; k < E; k++) h += sprintf(h, " %d", k % 7);
    unsigned long long sum = 0;
    for (int k = 0; k < E; k++) sum += (unsigned long long)(k % 7);
    ck_assert_int_eq(sscanf(line_of(t, "resume "), "resume %llu %llu %llu %llu %llu %63s", &n, &e,
                            &pos, &em, &upd, steps), 6);
    snprintf(v1, sizeof v1, "resume %llu %d %llu %llu %llu %s %s 0", n, E, pos, em, sum + em, steps,
             line_of(t, "live_b ") + 7);
    char epochs_run[64], epochs[64];
    snprintf(epochs_run, sizeof epochs_run, "epochs_run %d", E);
    snprintf(epochs, sizeof epochs, "epochs %d", E + 5);
    a = with_state_line(t, "resume ", v1);
    c = with_state_line(a, "history", hist);
    free(a);
    a = with_state_line(c, "live_b ", NULL);
    free(c);
    c = with_state_line(a, "epochs_run ", epochs_run);
    free(a);
    a = with_state_line(c, "epochs ", epochs);
    free(c);
    c = with_state_line(a, "ptron-model ", "ptron-model 1");
    ck_assert_msg(load_text(c, &m1) == PT_OK, "%s", pt_last_error());
    pt_model_info info;
    pt_model_get_info(m1, &info);
    ck_assert_int_eq(info.run_epochs_done, E);
    ck_assert_int_eq(info.run_recent_epochs, 1000);
    for (int k = 0; k < 1000; k++) ck_assert_uint_eq(info.run_recent_mistakes[k], (size_t)((E - 1000 + k) % 7));
    /* and continues */
    pt_model_get_params(m1, &q);
    q.resume = m1;
    pt_train_report r;
    ck_assert_msg(pt_train(ds, &q, &rest, &r) == PT_OK, "%s", pt_last_error());
    ck_assert_int_eq(r.epochs_run, E + 5);
    ck_assert_int_eq(r.epochs_before, E);
    pt_train_report_clear(&r);
    pt_model_free(rest);
    pt_model_free(m1);
    free(a);
    free(c);
    free(hist);
    free(t);
    pt_model_free(classic);
    pt_model_free(part);
    pt_model_free(full);
    pt_dataset_free(ds);
}
END_TEST

/* A run state edited into something no run could have left (a valid checksum): a parse error
 * that names the file and the line. */
START_TEST(edited_run_state)
{
    pt_model_io_text_kernels(true); /* the text forms older files have */
    pt_dataset *ds = noisy(150, 3, 4);
    pt_train_params p;
    pt_train_params_init(&p);
    p.epochs = 40;
    p.shuffle = 1;
    p.variant = PT_VARIANT_AVERAGED;
    pt_model *part = interrupted(ds, &p, 17);
    size_t len;
    char *t = model_text(part, &len);
    unsigned long long n, e, pos, em, upd;
    double steps;
    int fin;
    ck_assert_int_eq(sscanf(line_of(t, "resume "), "resume %llu %llu %llu %llu %llu %lf %d", &n, &e,
                            &pos, &em, &upd, &steps, &fin), 7);
    ck_assert(e == 17 && pos > 0 && fin == 0);
    /* the line numbers: resume, history, live_w, live_b, live_u, live_ub */
    int resume_line = 1;
    for (const char *q = t; q < strstr(t, "\nresume ") + 1; q++) resume_line += *q == '\n';
    char hist[8192];
    snprintf(hist, sizeof hist, "%s", line_of(t, "history"));
    struct {
        const char *key;
        char line[8300];
        int at;
        const char *msg;
    } cases[16];
    int nc = 0;
#define CASE(k, at_, msg_, ...)                                                                    \
    do {                                                                                           \
        cases[nc].key = (k);                                                                       \
        snprintf(cases[nc].line, sizeof cases[nc].line, __VA_ARGS__);                              \
        cases[nc].at = resume_line + (at_);                                                        \
        cases[nc].msg = (msg_);                                                                    \
        nc++;                                                                                      \
    } while (0)
    CASE("resume ", 0, "position", "resume %llu %llu %llu %llu %llu %.17g 0", n, e, n + 1, em, upd, steps);
    CASE("resume ", 0, "epochs done", "resume %llu %llu %llu %llu %llu %.17g 0", n, 41ull, pos, em, upd, steps);
    CASE("resume ", 0, "the model ran", "resume %llu %llu %llu %llu %llu %.17g 0", n, 30ull, pos, em, upd, steps);
    CASE("resume ", 0, "finished", "resume %llu %llu %llu %llu %llu %.17g 1", n, e, pos, em, upd, steps);
    CASE("resume ", 0, "mistakes in", "resume %llu %llu %llu %llu %llu %.17g 0", n, e, pos, pos + 1, upd, steps);
    CASE("resume ", 0, "samples visited", "resume %llu %llu %llu %llu %llu %.17g 0", n, e, pos, em, upd, steps + 1);
    CASE("resume ", 0, "rows", "resume 1 %llu %llu %llu %llu %.17g 0", e, pos, em, upd, steps);
    CASE("resume ", 0, "expected 7 values", "resume %llu %llu %llu %llu %llu %.17g", n, e, pos, em, upd, steps);
    CASE("resume ", 1, "updates", "resume %llu %llu %llu %llu %llu %.17g 0", n, e, pos, em, upd + 1, steps);
    CASE("history", 1, "expected 17 values, found 16", "%.*s", (int)(strrchr(hist, ' ') - hist), hist);
    CASE("history", 1, "expected 17 values, found more", "%s 3", hist);
    CASE("history", 1, "history", "history 999%s", strchr(hist + 8, ' '));
    CASE("live_w", 2, "live_w: expected 3 values, found 2", "live_w 1 2");
    CASE("live_w", 2, "'x' is not a finite number", "live_w 1 2 x");
    CASE("live_ub", 5, "expected 'live_ub'", "live_u 1 2 3");
#undef CASE
    for (int k = 0; k < nc; k++) {
        char *edited = with_state_line(t, cases[k].key, cases[k].line);
        const char *path = tu_write_file("state", ".model", edited);
        pt_model *m = NULL;
        pt_status s = pt_model_load(path, &m);
        char want[600];
        snprintf(want, sizeof want, "%s:%d: ", path, cases[k].at);
        ck_assert_msg(s == PT_ERR_PARSE && strstr(pt_last_error(), want) && strstr(pt_last_error(), cases[k].msg),
                      "'%s': status %d, '%s' (want '%s' and '%s')", cases[k].line, (int)s,
                      pt_last_error(), want, cases[k].msg);
        ck_assert_ptr_null(m);
        unlink(path);
        free(edited);
    }
    free(t);
    pt_model_free(part);

    /* the kernel path's dual lines */
    p.path = PT_PATH_KERNEL;
    p.kernel.kind = PT_KERNEL_RBF;
    part = interrupted(ds, &p, 5);
    t = model_text(part, &len);
    char alpha[8192];
    snprintf(alpha, sizeof alpha, "%s", line_of(t, "alpha "));
    char *edited = with_state_line(t, "alpha ", "alpha 1");
    pt_model *m = NULL;
    ck_assert_int_eq(load_text(edited, &m), PT_ERR_PARSE);
    ck_assert_msg(strstr(pt_last_error(), "alpha: expected 150 values, found 1"), "%s", pt_last_error());
    free(edited);
    alpha[strlen(alpha) - 1] = alpha[strlen(alpha) - 1] == '0' ? '1' : '0'; /* one update more or less */
    edited = with_state_line(t, "alpha ", alpha);
    ck_assert_int_eq(load_text(edited, &m), PT_ERR_PARSE);
    ck_assert_msg(strstr(pt_last_error(), "updates in all"), "%s", pt_last_error());
    free(edited);
    /* rows that cannot fit: refused before anything is allocated */
    ck_assert_int_eq(sscanf(line_of(t, "resume "), "resume %llu %llu %llu %llu %llu %lf %d", &n, &e,
                            &pos, &em, &upd, &steps, &fin), 7);
    char big[256];
    snprintf(big, sizeof big, "resume 9999999999999 %llu %llu %llu %llu %.17g 0", e, pos, em, upd, steps);
    edited = with_state_line(t, "resume ", big);
    ck_assert_int_eq(load_text(edited, &m), PT_ERR_PARSE);
    ck_assert_msg(strstr(pt_last_error(), "cannot fit"), "%s", pt_last_error());
    free(edited);
    free(t);
    pt_model_free(part);
    pt_dataset_free(ds);
}
END_TEST

/* Saving into a directory that does not exist fails and creates nothing. */
START_TEST(save_missing_dir)
{
    pt_model *m = hand_linear(3);
    char dir[512], p[600];
    snprintf(dir, sizeof dir, "%s", tu_path("nodir", ""));
    snprintf(p, sizeof p, "%s/m.model", dir);
    ASSERT_ERR(pt_model_save(m, p), PT_ERR_IO, dir);
    ck_assert(!exists(dir) && !exists(p));
    pt_model_free(m);
}
END_TEST

START_TEST(save_replaces_whole)
{
    pt_model *big = hand_linear(500), *small = hand_kernel();
    const char *p0 = tu_path("replace", ".model");
    char p[512];
    snprintf(p, sizeof p, "%s", p0);
    ck_assert_int_eq(pt_model_save(big, p), PT_OK);
    ck_assert_int_eq(pt_model_save(small, p), PT_OK);
    assert_no_temporary(p);
    pt_model *r = NULL;
    ck_assert_int_eq(pt_model_load(p, &r), PT_OK);
    assert_same(small, r);
    unlink(p);
    pt_model_free(r);
    pt_model_free(big);
    pt_model_free(small);
}
END_TEST

/* A save that fails leaves the old file as it was: (1) the temporary file cannot be created
 * (the target's name is as long as a name can be: the temporary's is longer), (2) the model
 * cannot be written (non-finite weights). */
START_TEST(failed_save_keeps_old)
{
    pt_model *old = hand_linear(8), *other = hand_kernel();
    const char *p0 = tu_path("keep", ".model");
    char p[512], longest[1024];
    snprintf(p, sizeof p, "%s", p0);
    ck_assert_int_eq(pt_model_save(old, p), PT_OK);
    size_t len0, len1;
    char *before = tu_read_file(p, &len0);

    snprintf(longest, sizeof longest, "%s", p);
    size_t base = (size_t)(strrchr(longest, '/') + 1 - longest);
    memset(longest + base, 'm', NAME_MAX);
    longest[base + NAME_MAX] = '\0';
    ck_assert_int_eq(link(p, longest), 0);
    ASSERT_ERR(pt_model_save(other, longest), PT_ERR_IO, longest);
    char *after = tu_read_file(longest, &len1);
    ck_assert(len0 == len1 && memcmp(before, after, len0) == 0);
    free(after);
    unlink(longest);

    other->coef[1] = NAN;
    ck_assert_int_ne(pt_model_save(other, p), PT_OK);
    assert_no_temporary(p);
    after = tu_read_file(p, &len1);
    ck_assert(len0 == len1 && memcmp(before, after, len0) == 0);
    free(after);
    free(before);
    unlink(p);
    pt_model_free(old);
    pt_model_free(other);
}
END_TEST

/* Two threads saving to one path while a third loads it. */
typedef struct save_race {
    const char *path;
    const pt_model *models[2];
    void *bytes[2]; /* each model's file */
    size_t len[2];
    atomic_int savers_left;
    atomic_int failed_saves;
    int loads, failed_loads, strangers; /* the reader's counts */
    char first_error[512];
} save_race;

enum { RACE_SAVES = 150 };

typedef struct saver {
    save_race *race;
    int which;
} saver;

static void *save_loop(void *arg)
{
    const saver *sv = arg;
    save_race *r = sv->race;
    for (int i = 0; i < RACE_SAVES; i++)
        if (pt_model_save(r->models[sv->which], r->path) != PT_OK) atomic_fetch_add(&r->failed_saves, 1);
    atomic_fetch_sub(&r->savers_left, 1);
    return NULL;
}

/* Loads until both savers are done (and once after): each load must be one of the two
 * models whole. */
static void *load_loop(void *arg)
{
    save_race *r = arg;
    for (bool last = false; !last;) {
        last = atomic_load(&r->savers_left) == 0;
        pt_model *m = NULL;
        r->loads++;
        if (pt_model_load(r->path, &m) != PT_OK) {
            if (!r->failed_loads++) snprintf(r->first_error, sizeof r->first_error, "%s", pt_last_error());
            continue;
        }
        void *buf;
        size_t len;
        ck_assert_int_eq(pt_model_save_buffer(m, &buf, &len), PT_OK);
        bool known = false;
        for (int k = 0; k < 2; k++) known |= len == r->len[k] && memcmp(buf, r->bytes[k], len) == 0;
        r->strangers += !known;
        pt_buffer_free(buf);
        pt_model_free(m);
    }
    return NULL;
}

/* pt_model_save from two threads of one process to one path, a third thread loading it: every
 * save succeeds and every load is one of the two models (each write has its own temporary). */
START_TEST(threads_save_one_path)
{
    pt_model *a = hand_linear(20000), *b = hand_kernel();
    char path[512];
    snprintf(path, sizeof path, "%s", tu_path("race", ".model"));
    save_race r = {.path = path, .models = {a, b}};
    for (int k = 0; k < 2; k++)
        ck_assert_int_eq(pt_model_save_buffer(r.models[k], &r.bytes[k], &r.len[k]), PT_OK);
    ck_assert_int_eq(pt_model_save(a, r.path), PT_OK);
    atomic_init(&r.savers_left, 2);
    atomic_init(&r.failed_saves, 0);
    saver sv[2] = {{&r, 0}, {&r, 1}};
    pthread_t t[3];
    for (int k = 0; k < 2; k++) ck_assert_int_eq(pthread_create(&t[k], NULL, save_loop, &sv[k]), 0);
    ck_assert_int_eq(pthread_create(&t[2], NULL, load_loop, &r), 0);
    for (int k = 0; k < 3; k++) pthread_join(t[k], NULL);
    const int failed_saves = atomic_load(&r.failed_saves);
    ck_assert_msg(failed_saves == 0 && r.failed_loads == 0 && r.strangers == 0,
                  "%d of %d saves failed; %d of %d loads failed (the first: %s), %d were neither "
                  "model", failed_saves, 2 * RACE_SAVES, r.failed_loads, r.loads, r.first_error,
                  r.strangers);
    assert_no_temporary(r.path);
    unlink(r.path);
    for (int k = 0; k < 2; k++) pt_buffer_free(r.bytes[k]);
    pt_model_free(a);
    pt_model_free(b);
}
END_TEST

/* Through memory: the same bytes as the file, the same model back, the same checks. */
START_TEST(memory_buffers)
{
    pt_model *models[] = {hand_linear(40), hand_kernel()};
    for (size_t k = 0; k < 2; k++) {
        pt_model *m = models[k];
        const char *p = tu_path("buffer", ".model");
        ck_assert_int_eq(pt_model_save(m, p), PT_OK);
        size_t flen;
        char *file = tu_read_file(p, &flen);
        void *buf;
        size_t len;
        ck_assert_int_eq(pt_model_save_buffer(m, &buf, &len), PT_OK);
        ck_assert_uint_eq(len, flen);
        ck_assert(bits_eq(buf, file, len));
        pt_model *r;
        ck_assert_int_eq(pt_model_load_buffer(buf, len, "pickle", &r), PT_OK);
        assert_same(m, r);
        pt_model_free(r);
        /* the caller's bytes are only read */
        ck_assert(bits_eq(buf, file, len));
        /* damaged bytes: the same messages, with the given name where a path would be */
        ((char *)buf)[len / 2] ^= 1;
        ASSERT_ERR(pt_model_load_buffer(buf, len, "pickle", &r), PT_ERR_CHECKSUM,
                   "pickle: checksum mismatch");
        ck_assert_ptr_null(r);
        ASSERT_ERR(pt_model_load_buffer(buf, len - 3, NULL, &r), PT_ERR_FORMAT, "model:");
        ASSERT_ERR(pt_model_load_buffer("", 0, "empty", &r), PT_ERR_FORMAT, "empty:1: not a ptron model");
        ASSERT_ERR(pt_model_load_buffer(NULL, 5, "none", &r), PT_ERR_INVALID, "none");
        pt_buffer_free(buf);
        free(file);
        unlink(p);
        pt_model_free(m);
    }
    pt_buffer_free(NULL);
    /* what cannot be saved cannot be serialised either */
    pt_model *bad = hand_linear(4);
    bad->w[2] = NAN;
    void *buf = (void *)&buf;
    size_t len = 7;
    ASSERT_ERR(pt_model_save_buffer(bad, &buf, &len), PT_ERR_NUMERIC, "not finite");
    ck_assert_ptr_null(buf);
    ck_assert_uint_eq(len, 0);
    pt_model_free(bad);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("model_io");
    TCase *t = tcase_create("core");
    tcase_add_test(t, roundtrip_trained);
    tcase_add_test(t, roundtrip_linear_hand);
    tcase_add_test(t, roundtrip_kernel);
    tcase_add_test(t, roundtrip_sparse_kernel);
    tcase_add_test(t, roundtrip_binary_section);
    tcase_add_test(t, edited_binary_section);
    tcase_add_test(t, edited_sparse_kernel);
    tcase_add_test(t, text_layout);
    tcase_add_test(t, corrupted);
    tcase_add_test(t, truncated);
    tcase_add_test(t, wrong_magic);
    tcase_add_test(t, newer_version);
    tcase_add_test(t, edited_counts);
    tcase_add_test(t, edited_keys);
    tcase_add_test(t, contradictory_fields);
    tcase_add_test(t, save_missing_dir);
    tcase_add_test(t, save_replaces_whole);
    tcase_add_test(t, failed_save_keeps_old);
    tcase_add_test(t, v1_run_state_loads);
    tcase_add_test(t, edited_run_state);
    tcase_add_test(t, memory_buffers);
    suite_add_tcase(s, t);
    TCase *race = tcase_create("threads"); /* hundreds of fsyncs: more than the default 4 s */
    tcase_set_timeout(race, 300);
    tcase_add_test(race, threads_save_one_path);
    suite_add_tcase(s, race);
    return s;
}

int main(void) { return tu_run_suite(suite()); }
