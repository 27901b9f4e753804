/* Compact storage (src/data/compact.c, the .ptd element type, the paths that read compact rows):
 * the type names, conversion to bf16 and u8 and back, the u8 divisors chosen, .ptd round trips
 * and damaged files, models trained on compact data against float32 (online, batch), scores of
 * compact rows against float32, and the CLI's convert --dtype, info and train within
 * --mem-mb. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "testutil.h"

static uint64_t seed = 88172645463325252ull;

static uint64_t next(void)
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
}

/* An n x d dataset of 8-bit pixels k / 255 (k uniform in 0..255, each a float correctly
 * rounded from k / 255), labelled by a random separator through the middle of the cube into
 * `classes` classes (2: +1/-1 by sign; more: by the score's band). */
static pt_dataset *pixels(size_t n, size_t d, size_t classes)
{
    float *x = malloc(n * d * sizeof *x), *w = malloc(d * sizeof *w);
    double *y = malloc(n * sizeof *y);
    ck_assert(x && w && y);
    for (size_t j = 0; j < d; j++) w[j] = (float)((double)(next() % 2001) / 1000.0 - 1.0);
    double lo = 1e300, hi = -1e300, *s = malloc(n * sizeof *s);
    ck_assert(s);
    for (size_t i = 0; i < n; i++) {
        s[i] = 0.0;
        for (size_t j = 0; j < d; j++) {
            x[i * d + j] = (float)(next() % 256) / 255.0f;
            s[i] += w[j] * (x[i * d + j] - 0.5);
        }
        lo = s[i] < lo ? s[i] : lo;
        hi = s[i] > hi ? s[i] : hi;
    }
    for (size_t i = 0; i < n; i++)
        y[i] = classes == 2 ? (s[i] >= 0 ? 1.0 : -1.0)
                            : floor((s[i] - lo) / (hi - lo + 1e-9) * (double)classes);
    pt_dataset *ds = tu_dataset(n, d, x, y);
    ck_assert_int_eq(pt_dataset_count_nnz(ds, "pixels"), PT_OK);
    free(x);
    free(w);
    free(y);
    free(s);
    return ds;
}

static pt_dataset *to(const pt_dataset *ds, pt_dtype t)
{
    pt_dataset *c = NULL;
    ck_assert_msg(pt_dataset_to_dtype(ds, t, 0, &c) == PT_OK, "%s", pt_last_error());
    ck_assert_int_eq(pt_dataset_dtype(c), t);
    return c;
}

/* Row i as float32 (any type). */
static const float *row(const pt_dataset *ds, size_t i, float *buf)
{
    return pt_compact_widen_row(ds, i, buf);
}

START_TEST(dtype_names)
{
    pt_dtype t = PT_DTYPE_U8;
    ck_assert_int_eq(pt_dtype_parse("f32", &t), PT_OK);
    ck_assert_int_eq(t, PT_DTYPE_F32);
    ck_assert_int_eq(pt_dtype_parse("float32", &t), PT_OK);
    ck_assert_int_eq(pt_dtype_parse("bf16", &t), PT_OK);
    ck_assert_int_eq(t, PT_DTYPE_BF16);
    ck_assert_int_eq(pt_dtype_parse("u8", &t), PT_OK);
    ck_assert_int_eq(t, PT_DTYPE_U8);
    const char *names[3] = {"f32", "bf16", "u8"};
    for (int k = 0; k < 3; k++) ck_assert_str_eq(pt_dtype_name((pt_dtype)k), names[k]);
    const char *bad[] = {"f16", "BF16", "", "uint8", "fp32"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        t = PT_DTYPE_U8;
        ck_assert_int_eq(pt_dtype_parse(bad[k], &t), PT_ERR_INVALID);
        ck_assert_int_eq(t, PT_DTYPE_U8);
        HAS(pt_last_error(), "choose f32, bf16 or u8");
    }
    ck_assert_int_eq(pt_dtype_size(PT_DTYPE_F32), 4);
    ck_assert_int_eq(pt_dtype_size(PT_DTYPE_BF16), 2);
    ck_assert_int_eq(pt_dtype_size(PT_DTYPE_U8), 1);
}
END_TEST

/* Pixels / 255: one divisor, 255, and the u8 copy widens to the float32 values exactly; the
 * float32 copy back is the original matrix bit for bit. */
START_TEST(u8_one_exact_divisor)
{
    pt_dataset *f = pixels(300, 37, 2), *q = to(f, PT_DTYPE_U8), *back = to(q, PT_DTYPE_F32);
    int single = 0;
    const float *m = pt_dataset_u8_divisors(q, &single);
    ck_assert(m && single);
    for (size_t j = 0; j < 37; j++) ck_assert_float_eq(m[j], 255.0f);
    ck_assert_int_eq(pt_dataset_nnz(q), pt_dataset_nnz(back));
    tu_assert_same_data(f, back, "u8 of pixels / 255, widened");
    pt_dataset_info in;
    pt_dataset_get_info(q, &in);
    ck_assert_int_eq(in.dtype, PT_DTYPE_U8);
    ck_assert(in.u8_single && in.u8_divisor == 255.0f);
    ck_assert_int_eq(in.bytes, 300 * 48);
    ck_assert_ptr_null(pt_dataset_row_const(q, 0));
    HAS(pt_last_error(), "stored as u8");
    ck_assert_ptr_null(pt_dataset_matrix(q));
    pt_dataset_free(f);
    pt_dataset_free(q);
    pt_dataset_free(back);
}
END_TEST

/* Features of different ranges that no one divisor represents: a divisor per feature,
 * 255 / max, and every value within max / 510 (half a step) of the original. */
START_TEST(u8_per_feature)
{
    size_t n = 200, d = 19;
    float *x = malloc(n * d * sizeof *x), scale[19];
    double *y = malloc(n * sizeof *y);
    for (size_t j = 0; j < d; j++) scale[j] = 0.1f + (float)j * 3.7f;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < d; j++)
            x[i * d + j] = j == 5 ? 0.0f : scale[j] * (float)(next() % 100000) / 99999.0f;
        y[i] = (double)(i % 2);
    }
    pt_dataset *f = tu_dataset(n, d, x, y), *q = to(f, PT_DTYPE_U8);
    int single = 1;
    const float *m = pt_dataset_u8_divisors(q, &single);
    ck_assert(!single);
    ck_assert_float_eq(m[5], 1.0f); /* an all-zero feature */
    float buf[32];
    for (size_t i = 0; i < n; i++) {
        const float *r = row(q, i, buf);
        for (size_t j = 0; j < d; j++) {
            float mx = 0.0f;
            for (size_t k = 0; k < n; k++) mx = x[k * d + j] > mx ? x[k * d + j] : mx;
            ck_assert_msg(fabsf(r[j] - x[i * d + j]) <= mx / 510.0f * 1.0001f + 1e-7f,
                          "row %zu feature %zu: %g for %g (max %g)", i, j, (double)r[j],
                          (double)x[i * d + j], (double)mx);
        }
        for (size_t j = d; j < 32; j++) ck_assert_float_eq(r[j], 0.0f);
    }
    pt_dataset_free(f);
    pt_dataset_free(q);
    free(x);
    free(y);
}
END_TEST

START_TEST(u8_negative_refused)
{
    float x[6] = {0.5f, 1.0f, 0.0f, 0.25f, -0.125f, 1.0f};
    double y[2] = {0, 1};
    pt_dataset *f = tu_dataset(2, 3, x, y), *q = (pt_dataset *)1;
    ck_assert_int_eq(pt_dataset_to_dtype(f, PT_DTYPE_U8, 0, &q), PT_ERR_INVALID);
    ck_assert_ptr_null(q);
    HAS(pt_last_error(), "row 2, feature 2: -0.125 is negative");
    /* a sparse dataset: compact storage is dense only */
    pt_dataset *s;
    ck_assert_int_eq(pt_dataset_convert(f, PT_LAYOUT_SPARSE, 0, &s), PT_OK);
    ck_assert_int_eq(pt_dataset_to_dtype(s, PT_DTYPE_BF16, 0, &q), PT_ERR_UNSUPPORTED);
    HAS(pt_last_error(), "dense layout only");
    /* the budget */
    ck_assert_int_eq(pt_dataset_to_dtype(f, PT_DTYPE_BF16, 16, &q), PT_ERR_LIMIT);
    HAS(pt_last_error(), "over the memory budget");
    pt_dataset_free(s);
    pt_dataset_free(f);
}
END_TEST

/* bf16: to nearest, ties to even; every value within 2^-8 relative of the original. */
START_TEST(bf16_rounding)
{
    float x[8] = {1.0f + 0x1p-8f, 1.0f + 0x3p-8f, 1.0f + 0x1p-7f + 0x1p-9f, -3.0f,
                  0.0f, 1e-30f, 3.0e38f, 0x1.fep127f};
    float want[8] = {1.0f, 1.0f + 0x1p-6f, 1.0f + 0x1p-7f, -3.0f, 0.0f, 0, 0, 0x1.fep127f};
    double y[1] = {1};
    pt_dataset *f = tu_dataset(1, 8, x, y), *h = to(f, PT_DTYPE_BF16);
    float buf[16];
    const float *r = row(h, 0, buf);
    for (int j = 0; j < 8; j++) {
        if (want[j] != 0.0f || j == 4) ck_assert_msg(r[j] == want[j], "%d: %a", j, (double)r[j]);
        ck_assert(fabsf(r[j] - x[j]) <= fabsf(x[j]) * 0x1p-8f);
    }
    /* beyond bf16's range: refused */
    float big[1] = {0x1.ffp127f};
    pt_dataset *g = tu_dataset(1, 1, big, y), *o = (pt_dataset *)1;
    ck_assert_int_eq(pt_dataset_to_dtype(g, PT_DTYPE_BF16, 0, &o), PT_ERR_INVALID);
    HAS(pt_last_error(), "beyond bf16's range");
    pt_dataset_free(f);
    pt_dataset_free(g);
    pt_dataset_free(h);
}
END_TEST

/* Write and read back: the type, the divisors, the rows; slices and takes keep them. */
START_TEST(ptd_round_trip)
{
    pt_dataset *f = pixels(100, 21, 2);
    for (int t = 1; t <= 2; t++) {
        pt_dataset *c = to(f, (pt_dtype)t), *r;
        const char *p = tu_path("cmp", ".ptd");
        ck_assert_int_eq(pt_dataset_write(c, p, PT_FORMAT_AUTO), PT_OK);
        ck_assert_msg(pt_dataset_read(p, NULL, &r) == PT_OK, "%s", pt_last_error());
        ck_assert_int_eq(pt_dataset_dtype(r), t);
        pt_dataset *wc = to(c, PT_DTYPE_F32), *wr = to(r, PT_DTYPE_F32);
        tu_assert_same_data(wc, wr, "read back");
        pt_dataset_free(wc);
        pt_dataset_free(wr);
        pt_dataset_info a, b;
        pt_dataset_get_info(c, &a);
        pt_dataset_get_info(r, &b);
        ck_assert(a.nnz == b.nnz && a.bytes == b.bytes && a.R == b.R);
        ck_assert(a.u8_single == b.u8_single && a.u8_divisor == b.u8_divisor);
        size_t len;
        char *bytes = tu_read_file(p, &len);
        ck_assert_uint_eq(*(uint32_t *)(void *)(bytes + 8), 3);     /* version */
        ck_assert_uint_eq(*(uint32_t *)(void *)(bytes + 244), t);   /* element type */
        /* a damaged byte of the matrix, or of the divisors, is a checksum mismatch */
        uint64_t moff, doff;
        memcpy(&moff, bytes + 96 + 24 * 3, 8);
        memcpy(&doff, bytes + 96 + 24 * 4, 8);
        for (int s = 0; s < (t == 2 ? 2 : 1); s++) {
            char *bad = malloc(len);
            memcpy(bad, bytes, len);
            bad[s ? doff + 2 : moff + 5] ^= 0x01;
            const char *q = tu_write_bytes("cmpbad", ".ptd", bad, len);
            pt_dataset *z = (pt_dataset *)1;
            ck_assert_int_eq(pt_dataset_read(q, NULL, &z), PT_ERR_CHECKSUM);
            ck_assert_ptr_null(z);
            HAS(pt_last_error(), s ? "u8 divisors" : "matrix");
            free(bad);
        }
        if (t == 2) {
            /* a divisor so small that 255 / m overflows: refused, naming it */
            char *bad = malloc(len);
            memcpy(bad, bytes, len);
            float tiny = 1e-38f;
            memcpy(bad + doff + 4 * 3, &tiny, 4);
            uint64_t dsum = pt_checksum(bad + doff, 4 * 32);
            memcpy(bad + 96 + 24 * 4 + 16, &dsum, 8);
            uint64_t hsum = pt_checksum(bad, 248);
            memcpy(bad + 248, &hsum, 8);
            const char *q = tu_write_bytes("cmpbad", ".ptd", bad, len);
            pt_dataset *z = (pt_dataset *)1;
            ck_assert_int_eq(pt_dataset_read(q, NULL, &z), PT_ERR_FORMAT);
            HAS(pt_last_error(), "u8 divisor 4 is 1e-38");
            free(bad);
        }
        /* an element type the format does not have */
        bytes[244] = 7;
        pt_dataset *z = (pt_dataset *)1;
        uint64_t sum = pt_checksum(bytes, 248);
        memcpy(bytes + 248, &sum, 8);
        const char *q = tu_write_bytes("cmpbad", ".ptd", bytes, len);
        ck_assert_int_eq(pt_dataset_read(q, NULL, &z), PT_ERR_FORMAT);
        HAS(pt_last_error(), "unknown element type 7");
        free(bytes);
        /* slice and take stay compact, with the divisors */
        pt_dataset *sl, *tk;
        size_t rows[3] = {7, 3, 7};
        ck_assert_int_eq(pt_dataset_slice(r, 10, 5, &sl), PT_OK);
        ck_assert_int_eq(pt_dataset_take(r, rows, 3, &tk), PT_OK);
        ck_assert(pt_dataset_dtype(sl) == (pt_dtype)t && pt_dataset_dtype(tk) == (pt_dtype)t);
        float b1[32], b2[32];
        ck_assert(!memcmp(row(sl, 2, b1), row(r, 12, b2), 32 * sizeof(float)));
        ck_assert(!memcmp(row(tk, 1, b1), row(r, 3, b2), 32 * sizeof(float)));
        pt_dataset_free(sl);
        pt_dataset_free(tk);
        pt_dataset_free(c);
        pt_dataset_free(r);
    }
    pt_dataset_free(f);
}
END_TEST

/* The model file bytes of a run. */
static void *model_bytes(const pt_dataset *ds, const pt_train_params *p, size_t *len)
{
    pt_model *m;
    ck_assert_msg(pt_train(ds, p, &m, NULL) == PT_OK, "%s", pt_last_error());
    void *b;
    ck_assert_int_eq(pt_model_save_buffer(m, &b, len), PT_OK);
    pt_model_free(m);
    return b;
}

/* u8 holding the float32 values exactly trains the same model file as float32, on every path
 * and variant, at every ISA the machine runs. */
START_TEST(u8_exact_same_model)
{
    pt_dataset *f2 = pixels(400, 40, 2), *f3 = pixels(300, 24, 3);
    pt_dataset *q2 = to(f2, PT_DTYPE_U8), *q3 = to(f3, PT_DTYPE_U8);
    struct {
        const char *what;
        pt_path path;
        pt_variant variant;
        int shuffle, three, direct;
        pt_isa isa;
    } runs[] = {
        {"classic", PT_PATH_ONLINE, PT_VARIANT_CLASSIC, 0, 0, 0, PT_ISA_SCALAR},
        {"classic", PT_PATH_ONLINE, PT_VARIANT_CLASSIC, 0, 0, 0, PT_ISA_AVX2},
        {"classic", PT_PATH_ONLINE, PT_VARIANT_CLASSIC, 0, 0, 0, PT_ISA_AVX512},
        {"classic", PT_PATH_ONLINE, PT_VARIANT_CLASSIC, 0, 0, 0, PT_ISA_NEON},
        {"classic shuffled", PT_PATH_ONLINE, PT_VARIANT_CLASSIC, 1, 0, 0, PT_ISA_AUTO},
        {"averaged shuffled", PT_PATH_ONLINE, PT_VARIANT_AVERAGED, 1, 0, 0, PT_ISA_AUTO},
        {"voted", PT_PATH_ONLINE, PT_VARIANT_VOTED, 0, 0, 0, PT_ISA_AUTO},
        {"batch", PT_PATH_BATCH, PT_VARIANT_CLASSIC, 0, 0, 0, PT_ISA_AUTO},
        {"kernel", PT_PATH_KERNEL, PT_VARIANT_CLASSIC, 0, 0, 0, PT_ISA_AUTO},
        {"one-vs-rest", PT_PATH_ONLINE, PT_VARIANT_CLASSIC, 1, 1, 0, PT_ISA_AUTO},
        {"one-vs-rest averaged", PT_PATH_ONLINE, PT_VARIANT_AVERAGED, 0, 1, 0, PT_ISA_AUTO},
        {"multiclass perceptron", PT_PATH_ONLINE, PT_VARIANT_AVERAGED, 1, 1, 1, PT_ISA_AUTO},
    };
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        if (!pt_isa_available(runs[k].isa)) continue;
        pt_train_params p;
        pt_train_params_init(&p);
        p.path = runs[k].path;
        p.variant = runs[k].variant;
        p.shuffle = runs[k].shuffle;
        p.seed = 5;
        p.epochs = 4;
        p.isa = runs[k].isa;
        if (runs[k].direct) p.multiclass = PT_MULTI_DIRECT;
        size_t la, lb;
        void *a = model_bytes(runs[k].three ? f3 : f2, &p, &la);
        void *b = model_bytes(runs[k].three ? q3 : q2, &p, &lb);
        ck_assert_msg(la == lb && memcmp(a, b, la) == 0, "%s (%s): the u8 model differs",
                      runs[k].what, pt_isa_name(runs[k].isa));
        pt_buffer_free(a);
        pt_buffer_free(b);
    }
    /* and the same predictions on the compact rows as on the float32 ones */
    pt_train_params p;
    pt_train_params_init(&p);
    pt_model *m;
    ck_assert_int_eq(pt_train(f2, &p, &m, NULL), PT_OK);
    pt_eval e1, e2;
    ck_assert_int_eq(pt_model_evaluate(m, f2, &e1), PT_OK);
    ck_assert_int_eq(pt_model_evaluate(m, q2, &e2), PT_OK);
    ck_assert(e1.correct == e2.correct && e1.n == e2.n);
    pt_model_free(m);
    pt_dataset_free(f2);
    pt_dataset_free(f3);
    pt_dataset_free(q2);
    pt_dataset_free(q3);
}
END_TEST

/* bf16 rows train exactly as their float32 copy (the rounded values) do; against the
 * original float32 data the averaged model is within one point of held-out accuracy (the
 * stated tolerance: bf16 rounds each value by at most 2^-8 relative). */
START_TEST(bf16_within_tolerance)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.n = 3000;
    g.d = 50;
    g.seed = 11;
    pt_dataset *all, *tr, *te;
    ck_assert_int_eq(pt_generate(&g, &all), PT_OK);
    ck_assert_int_eq(pt_dataset_slice(all, 0, 2000, &tr), PT_OK);
    ck_assert_int_eq(pt_dataset_slice(all, 2000, 1000, &te), PT_OK);
    pt_dataset *h = to(tr, PT_DTYPE_BF16), *hw = to(h, PT_DTYPE_F32);
    pt_train_params p;
    pt_train_params_init(&p);
    p.variant = PT_VARIANT_AVERAGED;
    p.shuffle = 1;
    p.epochs = 10;
    size_t la, lb;
    void *a = model_bytes(h, &p, &la), *b = model_bytes(hw, &p, &lb);
    ck_assert_msg(la == lb && memcmp(a, b, la) == 0, "bf16 differs from its float32 copy");
    pt_buffer_free(a);
    pt_buffer_free(b);
    pt_model *mf, *mh;
    ck_assert_int_eq(pt_train(tr, &p, &mf, NULL), PT_OK);
    ck_assert_int_eq(pt_train(h, &p, &mh, NULL), PT_OK);
    pt_eval ef, eh;
    ck_assert_int_eq(pt_model_evaluate(mf, te, &ef), PT_OK);
    ck_assert_int_eq(pt_model_evaluate(mh, te, &eh), PT_OK);
    ck_assert_msg(fabs(ef.accuracy - eh.accuracy) <= 0.01, "float32 %.4f, bf16 %.4f",
                  ef.accuracy, eh.accuracy);
    ck_assert(ef.accuracy > 0.9);
    pt_model_free(mf);
    pt_model_free(mh);
    pt_dataset_free(all);
    pt_dataset_free(tr);
    pt_dataset_free(te);
    pt_dataset_free(h);
    pt_dataset_free(hw);
}
END_TEST

/* ds with feature j times 1 + j % 5 (u8 then needs a divisor per feature). */
static pt_dataset *ranged(const pt_dataset *ds)
{
    pt_dataset *r;
    ck_assert_int_eq(pt_dataset_slice(ds, 0, pt_dataset_n(ds), &r), PT_OK);
    for (size_t i = 0; i < pt_dataset_n(r); i++) {
        float *x = pt_dataset_row(r, i);
        for (size_t j = 0; j < pt_dataset_d(r); j++) x[j] *= (float)(1 + j % 5);
    }
    return r;
}

/* The batch path reads compact rows, widened where it reads them: bf16 and u8 (one divisor,
 * and one per feature) train the model file their float32 copy trains, byte for byte, for
 * every loss and schedule, full batch and mini-batches (in order and shuffled; blocks of 1,300
 * rows, whose last block of 800 has longer chunks than the full ones), class weights, averaged
 * iterates, fused and gemv, 1 and 2 threads; and one-vs-rest over 3 classes; and with scaled
 * features (batch and online). 6,000 rows of 64 floats: 6 chunks a full batch, so both threads
 * take some. */
START_TEST(batch_same_model)
{
    pt_dataset *f2 = pixels(6000, 60, 2), *f3 = pixels(1500, 30, 3), *r2 = ranged(f2);
    struct {
        const char *what;
        pt_dataset *c, *w;
        bool three;
    } data[5] = {{"bf16", to(f2, PT_DTYPE_BF16), NULL, false},
                 {"u8", to(f2, PT_DTYPE_U8), NULL, false},
                 {"u8 per feature", to(r2, PT_DTYPE_U8), NULL, false},
                 {"bf16 3 classes", to(f3, PT_DTYPE_BF16), NULL, true},
                 {"u8 3 classes", to(f3, PT_DTYPE_U8), NULL, true}};
    int single = 1;
    ck_assert_ptr_nonnull(pt_dataset_u8_divisors(data[2].c, &single));
    ck_assert(!single);
    const pt_loss losses[3] = {PT_LOSS_PERCEPTRON, PT_LOSS_HINGE, PT_LOSS_SQUARED};
    const float cw[3] = {0.5f, 2.0f, 1.25f};
    size_t runs = 0;
    for (int di = 0; di < 5; di++) {
        data[di].w = to(data[di].c, PT_DTYPE_F32);
        for (int impl = PT_BATCH_GEMV; impl <= PT_BATCH_FUSED; impl++)
            for (int threads = 1; threads <= 2; threads++)
                for (int li = 0; li < 3; li++)
                    for (int v = 0; v < 3; v++) {
                        if (data[di].three && (li == 2 || v == 2)) continue;
                        pt_train_params p;
                        pt_train_params_init(&p);
                        p.path = PT_PATH_BATCH;
                        p.batch.impl = (pt_batch_impl)impl;
                        p.threads = threads;
                        p.batch.loss = losses[li];
                        p.batch.lambda = 0.01f;
                        p.eta = li == 2 ? 0.01f : 0.1f;
                        p.epochs = 3;
                        p.seed = 7;
                        /* v 0: full batch, constant steps; 1: shuffled blocks, 1/sqrt(t),
                         * averaged; 2: blocks in order, Pegasos, class weights */
                        p.batch.schedule = v == 0 ? PT_SCHEDULE_CONSTANT
                                     : v == 1 ? PT_SCHEDULE_INVSQRT : PT_SCHEDULE_PEGASOS;
                        p.batch.size = v ? 1300 : 0;
                        p.shuffle = v == 1;
                        p.batch.average_iterates = v == 1;
                        if (v == 2) {
                            p.class_weight = cw;
                            p.class_weight_n = data[di].three ? 3 : 2;
                        }
                        size_t la, lb;
                        void *a = model_bytes(data[di].w, &p, &la);
                        void *b = model_bytes(data[di].c, &p, &lb);
                        ck_assert_msg(la == lb && memcmp(a, b, la) == 0,
                                      "%s: %s, %d threads, loss %s, case %d: the model differs "
                                      "from the float32 copy's", data[di].what,
                                      pt_batch_impl_name(p.batch.impl), threads,
                                      pt_loss_name(p.batch.loss), v);
                        pt_buffer_free(a);
                        pt_buffer_free(b);
                        runs++;
                    }
    }
    ck_assert_uint_eq(runs, 3 * 36 + 2 * 16);
    /* scaled features, fitted on the compact rows and applied to them (the scaled copy is
     * float32): the float32 copy's model, on the batch and online paths */
    for (int di = 0; di < 5; di++)
        for (int path = 0; path < 2; path++) {
            pt_train_params p;
            pt_train_params_init(&p);
            p.path = path ? PT_PATH_ONLINE : PT_PATH_BATCH;
            p.scale = PT_SCALE_STANDARDIZE;
            p.epochs = 3;
            size_t la, lb;
            void *a = model_bytes(data[di].w, &p, &la), *b = model_bytes(data[di].c, &p, &lb);
            ck_assert_msg(la == lb && memcmp(a, b, la) == 0, "%s, %s path, scaled: the model "
                          "differs from the float32 copy's", data[di].what,
                          pt_path_name(p.path));
            pt_buffer_free(a);
            pt_buffer_free(b);
        }
    for (int di = 0; di < 5; di++) {
        pt_dataset_free(data[di].c);
        pt_dataset_free(data[di].w);
    }
    pt_dataset_free(f2);
    pt_dataset_free(f3);
    pt_dataset_free(r2);
}
END_TEST

/* Expansions of compact rows (each row, or block of rows, widened before it is expanded, no
 * float32 copy): pt_expand gives the float32 copy's expansion, and the online path (streamed
 * through the expansion, classic and averaged shuffled) and the batch path (materialised)
 * train its model file; polynomial, and random Fourier features narrower than the input. */
START_TEST(expansion_same_model)
{
    pt_dataset *f = pixels(800, 20, 2);
    for (int t = 1; t <= 2; t++) {
        pt_dataset *c = to(f, (pt_dtype)t), *w = to(c, PT_DTYPE_F32);
        for (int kind = PT_EXPAND_POLY; kind <= PT_EXPAND_RFF; kind++) {
            pt_expand_params ep;
            pt_expand_params_init(&ep);
            ep.kind = (pt_expand_kind)kind;
            ep.rff_dim = 12;
            pt_dataset *xc, *xw;
            ck_assert_int_eq(pt_expand(c, &ep, &xc), PT_OK);
            ck_assert_int_eq(pt_expand(w, &ep, &xw), PT_OK);
            tu_assert_same_data(xc, xw, "the expansion of compact rows");
            pt_dataset_free(xc);
            pt_dataset_free(xw);
            for (int run = 0; run < 3; run++) {
                pt_train_params p;
                pt_train_params_init(&p);
                p.expand = ep;
                p.path = run == 2 ? PT_PATH_BATCH : PT_PATH_ONLINE;
                p.variant = run == 1 ? PT_VARIANT_AVERAGED : PT_VARIANT_CLASSIC;
                p.shuffle = run == 1;
                p.epochs = 3;
                size_t la, lb;
                void *a = model_bytes(w, &p, &la), *b = model_bytes(c, &p, &lb);
                ck_assert_msg(la == lb && memcmp(a, b, la) == 0, "%s, expansion %d, run %d: the "
                              "model differs from the float32 copy's", pt_dtype_name(t), kind,
                              run);
                pt_buffer_free(a);
                pt_buffer_free(b);
            }
        }
        pt_dataset_free(c);
        pt_dataset_free(w);
    }
    pt_dataset_free(f);
}
END_TEST

/* The mistake bounds of compact rows (each row widened as it is read) are those of the float32
 * copy: R and gamma of a linear w*, and of a run with a linear reference, over the expansion,
 * and with a kernel reference whose gamma is the rule 'scale' (the data's variance). */
START_TEST(bounds_same_as_f32)
{
    pt_dataset *f = pixels(500, 16, 2);
    float wstar[16];
    for (size_t j = 0; j < 16; j++) wstar[j] = (float)j / 8.0f - 1.0f;
    for (int t = 1; t <= 2; t++) {
        pt_dataset *c = to(f, (pt_dtype)t), *w = to(c, PT_DTYPE_F32);
        pt_bounds a, b;
        ck_assert_int_eq(pt_bounds_compute(c, wstar, 0.5f, 1, &a), PT_OK);
        ck_assert_int_eq(pt_bounds_compute(w, wstar, 0.5f, 1, &b), PT_OK);
        ck_assert(memcmp(&a, &b, sizeof a) == 0);
        for (int run = 0; run < 3; run++) {
            pt_train_params p;
            pt_train_params_init(&p);
            p.epochs = 2;
            if (run == 1) p.expand.kind = PT_EXPAND_POLY;
            if (run == 2) {
                p.path = PT_PATH_KERNEL;
                p.kernel.kind = PT_KERNEL_RBF;
            }
            pt_model *ref;
            ck_assert_int_eq(pt_train(w, &p, &ref, NULL), PT_OK);
            if (run == 2) p.kernel.gamma = PT_GAMMA_SCALE; /* resolved from each dataset */
            pt_run_bounds ra, rb;
            ck_assert_msg(pt_bounds_for_run(c, &p, ref, 2, &ra) == PT_OK, "%s",
                          pt_last_error());
            ck_assert_int_eq(pt_bounds_for_run(w, &p, ref, 2, &rb), PT_OK);
            ck_assert_msg(ra.covered && isfinite(ra.R) && memcmp(&ra, &rb, sizeof ra) == 0,
                          "%s run %d: the bounds differ (R %g, %g)", pt_dtype_name(t), run,
                          ra.R, rb.R);
            pt_model_free(ref);
        }
        pt_dataset_free(c);
        pt_dataset_free(w);
    }
    pt_dataset_free(f);
}
END_TEST

/* Scores of compact rows equal their float32 copy's, bit for bit, for every kind of model:
 * linear, voted, one-vs-rest linear and kernel, the multiclass perceptron, kernel models with
 * dense and sparse support vectors, a model trained on an expansion, one trained on scaled
 * features; and the predictions. */
START_TEST(scores_same_as_f32)
{
    pt_dataset *f2 = pixels(700, 20, 2), *f3 = pixels(600, 20, 3), *r2 = ranged(f2);
    pt_dataset *sparse2;
    ck_assert_int_eq(pt_dataset_convert(f2, PT_LAYOUT_SPARSE, 0, &sparse2), PT_OK);
    struct {
        const char *what;
        pt_path path;
        pt_variant variant;
        int three, direct, sparse;
        pt_kernel kernel;
        pt_expand_kind expand;
        pt_scale_kind scale;
    } models[] = {
        {"linear", PT_PATH_ONLINE, PT_VARIANT_AVERAGED, 0, 0, 0, 0, PT_EXPAND_NONE, 0},
        {"voted", PT_PATH_ONLINE, PT_VARIANT_VOTED, 0, 0, 0, 0, PT_EXPAND_NONE, 0},
        {"batch", PT_PATH_BATCH, PT_VARIANT_CLASSIC, 0, 0, 0, 0, PT_EXPAND_NONE, 0},
        {"one-vs-rest", PT_PATH_ONLINE, PT_VARIANT_CLASSIC, 1, 0, 0, 0, PT_EXPAND_NONE, 0},
        {"multiclass perceptron", PT_PATH_ONLINE, PT_VARIANT_CLASSIC, 1, 1, 0, 0,
         PT_EXPAND_NONE, 0},
        {"kernel rbf", PT_PATH_KERNEL, PT_VARIANT_CLASSIC, 0, 0, 0, PT_KERNEL_RBF,
         PT_EXPAND_NONE, 0},
        {"kernel poly, sparse support vectors", PT_PATH_KERNEL, PT_VARIANT_CLASSIC, 0, 0, 1,
         PT_KERNEL_POLY, PT_EXPAND_NONE, 0},
        {"kernel one-vs-rest", PT_PATH_KERNEL, PT_VARIANT_CLASSIC, 1, 0, 0, PT_KERNEL_RBF,
         PT_EXPAND_NONE, 0},
        {"expanded", PT_PATH_ONLINE, PT_VARIANT_CLASSIC, 0, 0, 0, 0, PT_EXPAND_POLY, 0},
        {"scaled", PT_PATH_BATCH, PT_VARIANT_CLASSIC, 0, 0, 0, 0, PT_EXPAND_NONE,
         PT_SCALE_STANDARDIZE},
    };
    pt_dataset *c[3][3]; /* [data: f2, ranged f2, f3][bf16, u8, their float32 copy of u8] */
    pt_dataset *base[3] = {f2, r2, f3};
    for (int di = 0; di < 3; di++) {
        c[di][0] = to(base[di], PT_DTYPE_BF16);
        c[di][1] = to(base[di], PT_DTYPE_U8);
    }
    for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
        pt_train_params p;
        pt_train_params_init(&p);
        p.path = models[k].path;
        p.variant = models[k].variant;
        p.epochs = 3;
        p.kernel.kind = models[k].kernel;
        p.expand.kind = models[k].expand;
        p.scale = models[k].scale;
        if (models[k].direct) p.multiclass = PT_MULTI_DIRECT;
        pt_model *m;
        const pt_dataset *tr = models[k].three ? f3 : models[k].sparse ? sparse2 : f2;
        ck_assert_msg(pt_train(tr, &p, &m, NULL) == PT_OK, "%s: %s", models[k].what,
                      pt_last_error());
        const size_t K = models[k].three ? 3 : 1;
        for (int di = models[k].three ? 2 : 0; di < (models[k].three ? 3 : 2); di++)
            for (int t = 0; t < 2; t++) {
                pt_dataset *cd = c[di][t], *wd = to(cd, PT_DTYPE_F32);
                const size_t n = pt_dataset_n(cd);
                float *sa = malloc(n * K * sizeof *sa), *sb = malloc(n * K * sizeof *sb);
                double *la = malloc(n * sizeof *la), *lb = malloc(n * sizeof *lb);
                if (K == 1) {
                    ck_assert_int_eq(pt_model_scores(m, cd, sa), PT_OK);
                    ck_assert_int_eq(pt_model_scores(m, wd, sb), PT_OK);
                } else {
                    ck_assert_int_eq(pt_model_class_scores(m, cd, sa), PT_OK);
                    ck_assert_int_eq(pt_model_class_scores(m, wd, sb), PT_OK);
                }
                ck_assert_msg(memcmp(sa, sb, n * K * sizeof *sa) == 0,
                              "%s on %s rows (data %d): the scores differ from the float32 "
                              "copy's", models[k].what, t ? "u8" : "bf16", di);
                ck_assert_int_eq(pt_model_predict(m, cd, la), PT_OK);
                ck_assert_int_eq(pt_model_predict(m, wd, lb), PT_OK);
                ck_assert(memcmp(la, lb, n * sizeof *la) == 0);
                free(sa);
                free(sb);
                free(la);
                free(lb);
                pt_dataset_free(wd);
            }
        pt_model_free(m);
    }
    for (int di = 0; di < 3; di++) {
        pt_dataset_free(c[di][0]);
        pt_dataset_free(c[di][1]);
    }
    pt_dataset_free(sparse2);
    pt_dataset_free(f2);
    pt_dataset_free(f3);
    pt_dataset_free(r2);
}
END_TEST

/* The CLI trains the batch path on compact data whose float32 copy exceeds --mem-mb: 20,000 x
 * 256 pixels, 5 MB as u8 and 10 MB as bf16, streamed under --mem-mb 8 (the reader judges a
 * file by its float32 size), against a float32 copy of 20 MB. The u8 model is the float32
 * file's (its values exactly), the streamed bf16 run's the in-memory one's; both report their
 * accuracy, and predict within the budget gives the float32 file's. */
START_TEST(cli_batch_within_budget)
{
    pt_dataset *f = pixels(20000, 256, 2);
    char src[512], u8[512], bf[512], m1[512], m2[512], m3[512], m4[512], args[3000];
    snprintf(src, sizeof src, "%s", tu_path("cmpbig", ".ptd"));
    snprintf(u8, sizeof u8, "%s", tu_path("cmpbig8", ".ptd"));
    snprintf(bf, sizeof bf, "%s", tu_path("cmpbig16", ".ptd"));
    snprintf(m1, sizeof m1, "%s", tu_path("cmpm1", ".model"));
    snprintf(m2, sizeof m2, "%s", tu_path("cmpm2", ".model"));
    snprintf(m3, sizeof m3, "%s", tu_path("cmpm3", ".model"));
    snprintf(m4, sizeof m4, "%s", tu_path("cmpm4", ".model"));
    ck_assert_int_eq(pt_dataset_write(f, src, PT_FORMAT_AUTO), PT_OK);
    pt_dataset_free(f);
    char *out, *err;
    const char *conv[2][2] = {{u8, "u8"}, {bf, "bf16"}};
    for (int t = 0; t < 2; t++) {
        snprintf(args, sizeof args, "convert %s -o %s --dtype %s", src, conv[t][0], conv[t][1]);
        ck_assert_int_eq(tu_run_cli(args, NULL, NULL), 0);
    }
    const char *run = "--path batch --loss hinge --lambda 0.001 --epochs 4 --threads 2";
    struct {
        const char *data, *model, *mem, *mode;
    } runs[4] = {{src, m1, "", "in memory"},
                 {u8, m2, "--mem-mb 8", "streamed"},
                 {bf, m3, "--mem-mb 8", "streamed"},
                 {bf, m4, "", "in memory"}};
    for (int r = 0; r < 4; r++) {
        snprintf(args, sizeof args, "train %s -o %s %s %s --json", runs[r].data, runs[r].model,
                 run, runs[r].mem);
        int rc = tu_run_cli(args, &out, &err);
        ck_assert_msg(rc == 0, "%s: %d: %s", args, rc, err);
        char mode[64];
        snprintf(mode, sizeof mode, "\"data_mode\": \"%s\"", runs[r].mode);
        HAS(out, mode);
        HAS(out, "\"train_accuracy\": ");
        free(out);
        free(err);
    }
    size_t l1, l2, l3, l4;
    char *b1 = tu_read_file(m1, &l1), *b2 = tu_read_file(m2, &l2), *b3 = tu_read_file(m3, &l3),
         *b4 = tu_read_file(m4, &l4);
    ck_assert_msg(b1 && b2 && l1 == l2 && memcmp(b1, b2, l1) == 0, "u8 differs from float32");
    ck_assert_msg(b3 && b4 && l3 == l4 && memcmp(b3, b4, l3) == 0,
                  "streamed bf16 differs from in-memory bf16");
    free(b1);
    free(b2);
    free(b3);
    free(b4);
    /* predict within the budget too: the same accuracy as the float32 file's */
    char *o1, *o2;
    snprintf(args, sizeof args, "predict %s %s --mem-mb 8 --json", m2, u8);
    ck_assert_int_eq(tu_run_cli(args, &o1, NULL), 0);
    snprintf(args, sizeof args, "predict %s %s --json", m1, src);
    ck_assert_int_eq(tu_run_cli(args, &o2, NULL), 0);
    const char *a1 = strstr(o1, "\"accuracy\""), *a2 = strstr(o2, "\"accuracy\"");
    ck_assert(a1 && a2 && strncmp(a1, a2, 30) == 0);
    free(o1);
    free(o2);
    const char *files[] = {src, u8, bf, m1, m2, m3, m4};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) remove(files[i]);
}
END_TEST

START_TEST(cli_convert_and_info)
{
    pt_dataset *f = pixels(50, 9, 2);
    char src[512]; /* tu_path's buffers rotate */
    snprintf(src, sizeof src, "%s", tu_path("cmpsrc", ".ptd"));
    ck_assert_int_eq(pt_dataset_write(f, src, PT_FORMAT_AUTO), PT_OK);
    char path[512], args[1200], *out, *err;
    snprintf(path, sizeof path, "%s", tu_path("cmpu8", ".ptd"));
    snprintf(args, sizeof args, "convert %s -o %s --dtype f16", src, path);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 1);
    HAS(err, "--dtype: unknown storage type 'f16' (choose f32, bf16 or u8)");
    free(out);
    free(err);
    snprintf(args, sizeof args, "convert %s -o %s.svm --dtype u8", src, path);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 1);
    HAS(err, "only a .ptd file stores compact rows");
    free(out);
    free(err);
    snprintf(args, sizeof args, "convert %s -o %s --dtype=u8", src, path);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "info %s", path);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
    HAS(out, "(u8, rows padded to 16; x = q / 255)");
    free(out);
    free(err);
    snprintf(args, sizeof args, "info %s --json", path);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
    HAS(out, "\"dtype\": \"u8\", \"u8_divisors\": \"one\", \"u8_divisor\": 255");
    free(out);
    free(err);
    /* back to text (CSV, LIBSVM): the widened values, each row widened as it is written, the
     * same as the float32 file's text */
    for (int fmt = 0; fmt < 2; fmt++) {
        const char *ext = fmt ? ".svm" : ".csv";
        char t1[512], t2[512];
        snprintf(t1, sizeof t1, "%s", tu_path("cmpt1", ext));
        snprintf(t2, sizeof t2, "%s", tu_path("cmpt2", ext));
        snprintf(args, sizeof args, "convert %s -o %s", path, t1);
        ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
        free(out);
        free(err);
        snprintf(args, sizeof args, "convert %s -o %s", src, t2);
        int rc = tu_run_cli(args, &out, &err);
        ck_assert_msg(rc == 0, "%s", err);
        free(out);
        free(err);
        size_t l1, l2;
        char *a = tu_read_file(t1, &l1), *b = tu_read_file(t2, &l2);
        ck_assert_msg(a && b && l1 == l2 && memcmp(a, b, l1) == 0, "%s text differs", ext);
        free(a);
        free(b);
    }
    /* train --json says what it read */
    snprintf(args, sizeof args, "train %s -o %s.model --json", path, path);
    ck_assert_int_eq(tu_run_cli(args, &out, &err), 0);
    HAS(out, "\"dtype\": \"u8\"");
    free(out);
    free(err);
    pt_dataset_free(f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("compact");
    TCase *tc = tcase_create("compact");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, dtype_names);
    tcase_add_test(tc, u8_one_exact_divisor);
    tcase_add_test(tc, u8_per_feature);
    tcase_add_test(tc, u8_negative_refused);
    tcase_add_test(tc, bf16_rounding);
    tcase_add_test(tc, ptd_round_trip);
    tcase_add_test(tc, u8_exact_same_model);
    tcase_add_test(tc, bf16_within_tolerance);
    tcase_add_test(tc, batch_same_model);
    tcase_add_test(tc, expansion_same_model);
    tcase_add_test(tc, scores_same_as_f32);
    tcase_add_test(tc, bounds_same_as_f32);
    tcase_add_test(tc, cli_batch_within_budget);
    tcase_add_test(tc, cli_convert_and_info);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
