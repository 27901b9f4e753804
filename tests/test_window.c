/* Streamed datasets (src/data/window.c): a .ptd file over the memory budget is read streamed,
 * holds the same data, and trains the same model file, byte for byte, as the same file read
 * into memory, on every path that streams (online in all variants, one-vs-rest and the
 * multiclass perceptron, batch; the batch path on compact rows too), in both layouts, in order
 * and shuffled in chunks; the kernel path refuses it; its checksums are verified; the chunked
 * order is what ptron.h says. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/data.h"
#include "testutil.h"

static pt_dataset *generate(pt_gen_kind kind, size_t n, size_t d, size_t classes)
{
    pt_gen_params g;
    pt_gen_params_init(&g);
    g.kind = kind;
    g.n = n;
    g.d = d;
    g.seed = 11;
    g.noise = 0.05;
    if (classes) g.classes = classes;
    if (kind == PT_GEN_SPARSE) g.nnz = 12;
    pt_dataset *ds;
    ck_assert_msg(pt_generate(&g, &ds) == PT_OK, "%s", pt_last_error());
    return ds;
}

/* ds written to a .ptd file in layout l, and read back in memory (*mem) and streamed with a
 * budget of `budget` bytes (*str). */
static void both(const pt_dataset *ds, pt_layout l, size_t budget, pt_dataset **mem,
                 pt_dataset **str)
{
    pt_dataset *conv = NULL;
    if (pt_dataset_layout(ds) != l) ck_assert_int_eq(pt_dataset_convert(ds, l, 0, &conv), PT_OK);
    const char *p = tu_path("win", ".ptd");
    ck_assert_int_eq(pt_dataset_write(conv ? conv : ds, p, PT_FORMAT_PTD), PT_OK);
    pt_dataset_free(conv);
    ck_assert_int_eq(pt_dataset_read(p, NULL, mem), PT_OK);
    ck_assert_uint_eq(pt_dataset_streamed(*mem), 0);
    pt_read_options o;
    pt_read_options_init(&o);
    o.mem_budget_bytes = budget;
    ck_assert_msg(pt_dataset_read(p, &o, str) == PT_OK, "%s", pt_last_error());
    ck_assert_uint_gt(pt_dataset_streamed(*str), 0);
    ck_assert_int_eq(pt_dataset_layout(*str), l);
    unlink(p);
}

/* The model file of a run of p on ds. */
static void *model_bytes(const pt_dataset *ds, const pt_train_params *p, size_t *len)
{
    pt_model *m = NULL;
    ck_assert_msg(pt_train(ds, p, &m, NULL) == PT_OK, "%s", pt_last_error());
    void *buf = NULL;
    ck_assert_int_eq(pt_model_save_buffer(m, &buf, len), PT_OK);
    pt_model_free(m);
    return buf;
}

static void assert_same_model(const pt_dataset *mem, const pt_dataset *str,
                              const pt_train_params *p, const char *what)
{
    size_t la, lb;
    void *a = model_bytes(mem, p, &la), *b = model_bytes(str, p, &lb);
    ck_assert_msg(la == lb && memcmp(a, b, la) == 0, "%s: the streamed run's model differs", what);
    free(a);
    free(b);
}

/* Every streaming path and variant, in order and shuffled in chunks of 37 rows, with a
 * window of `budget` / 4 bytes. */
static void same_models(const pt_dataset *mem, const pt_dataset *str, const char *layout)
{
    char what[128];
    for (int shuffled = 0; shuffled < 2; shuffled++) {
        pt_train_params p;
        pt_train_params_init(&p);
        p.epochs = 4;
        p.threads = 2;
        p.shuffle = shuffled;
        p.online.shuffle_chunk = shuffled ? 37 : 0;
        p.seed = 9;
        const pt_variant variants[] = {PT_VARIANT_CLASSIC, PT_VARIANT_AVERAGED, PT_VARIANT_VOTED};
        for (size_t v = 0; v < 3; v++) {
            p.variant = variants[v];
            snprintf(what, sizeof what, "%s online %s shuffled %d", layout,
                     pt_variant_name(p.variant), shuffled);
            assert_same_model(mem, str, &p, what);
        }
        p.variant = PT_VARIANT_CLASSIC;
        if (pt_dataset_nclass(mem) > 2) {
            p.multiclass = PT_MULTI_DIRECT;
            snprintf(what, sizeof what, "%s multiclass perceptron shuffled %d", layout, shuffled);
            assert_same_model(mem, str, &p, what);
            p.multiclass = PT_MULTI_OVR;
        }
        p.path = PT_PATH_BATCH;
        p.batch.loss = PT_LOSS_HINGE;
        p.batch.lambda = 0.01f;
        p.batch.size = shuffled ? 50 : 0;
        snprintf(what, sizeof what, "%s batch shuffled %d", layout, shuffled);
        assert_same_model(mem, str, &p, what);
    }
}

START_TEST(dense_same_model)
{
    pt_dataset *ds = generate(PT_GEN_NOISY, 600, 40, 0), *mem, *str;
    both(ds, PT_LAYOUT_DENSE, 8192, &mem, &str); /* 1 KiB windows: 5 rows of 48 floats */
    ck_assert_uint_eq(pt_dataset_streamed(str), 5);
    tu_assert_same_data(mem, str, "dense streamed");
    same_models(mem, str, "dense");
    pt_dataset_free(mem);
    pt_dataset_free(str);
    pt_dataset_free(ds);
}
END_TEST

/* Windows larger than the pieces a walk in file order reads in place (256 KiB, window.c; the
 * batch path's chunks always, the online pass once its read-ahead is late): 16,000 rows of 64
 * floats (4 MiB) under a 3 MiB budget, windows of 1,536 rows and pieces of 1,024, which the
 * batch path's chunks of 1,000 rows cut at other rows. */
START_TEST(dense_pieces_same_model)
{
    pt_dataset *ds = generate(PT_GEN_NOISY, 16000, 60, 0), *mem, *str;
    both(ds, PT_LAYOUT_DENSE, (size_t)3 << 20, &mem, &str);
    ck_assert_uint_eq(pt_dataset_streamed(str), 1536);
    tu_assert_same_data(mem, str, "dense streamed in pieces");
    same_models(mem, str, "dense in pieces");
    pt_dataset_free(mem);
    pt_dataset_free(str);
    pt_dataset_free(ds);
}
END_TEST

/* However a window's pages arrive (window.c's probe keeps the cheapest of the three on the
 * file; each forced here), the walks read the same rows and train the same models: dense
 * float32 rows copied, faulted in and populated; sparse and compact rows, which have no copy,
 * faulted in and populated. */
START_TEST(every_arrival_same_model)
{
    static const char *ways[] = {"faulted", "populated", "copied"};
    for (int l = 0; l < 3; l++) {
        pt_dataset *ds = l == 1 ? generate(PT_GEN_SPARSE, 3000, 300, 0)
                                : generate(PT_GEN_NOISY, 16000, 60, 0),
                   *mem, *str, *compact = NULL;
        if (l == 2) {
            ck_assert_int_eq(pt_dataset_to_dtype(ds, PT_DTYPE_BF16, 0, &compact), PT_OK);
            pt_dataset_free(ds);
            ds = compact;
        }
        both(ds, l == 1 ? PT_LAYOUT_SPARSE : PT_LAYOUT_DENSE, l == 1 ? 60000 : (size_t)3 << 20,
             &mem, &str);
        const char *probed = pt_dataset_stream_pages(str);
        ck_assert_msg(probed && (strcmp(probed, "faulted") == 0 ||
                                 strcmp(probed, "populated") == 0 ||
                                 (l == 0 && strcmp(probed, "copied") == 0)),
                      "probed: %s", probed ? probed : "(none)");
        for (int k = 0; k < (l == 0 ? 3 : 2); k++) {
            pt_window_force_arrival(str, ways[k]);
            ck_assert_str_eq(pt_dataset_stream_pages(str), ways[k]);
            char what[64];
            snprintf(what, sizeof what, "%s rows %s", l == 1 ? "sparse" : l ? "bf16" : "dense",
                     ways[k]);
            if (l != 2) tu_assert_same_data(mem, str, what); /* (float32 rows only) */
            same_models(mem, str, what);
        }
        pt_dataset_free(mem);
        pt_dataset_free(str);
        pt_dataset_free(ds);
    }
}
END_TEST

/* KiB of the mapping that holds p resident in this process (/proc/self/smaps). */
static long mapped_kib(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    ck_assert(f);
    char line[512];
    long kib = -1;
    bool in = false;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            continue;
        }
        if (in && strncmp(line, "Rss:", 4) == 0) {
            kib = atol(line + 4);
            break;
        }
    }
    fclose(f);
    ck_assert_msg(kib >= 0, "no mapping holds %p", p);
    return kib;
}

/* A streamed run leaves nothing of the matrix mapped once its walks are done, whatever walks
 * it (one-vs-rest walks views of the dataset, which have their own labels but no mapping of
 * their own), and however its pages arrived: 4 MiB matrices in windows of 64 KiB. */
START_TEST(streamed_runs_drop_their_windows)
{
    for (int l = 0; l < 2; l++)
        for (int classes = 2; classes <= 4; classes += 2) {
            pt_dataset *ds = l ? generate(PT_GEN_SPARSE, 40000, 300, 0)
                               : classes > 2 ? generate(PT_GEN_BLOBS, 16000, 60, 4)
                                             : generate(PT_GEN_NOISY, 16000, 60, 0),
                       *mem, *str;
            if (l && classes > 2) {
                pt_dataset_free(ds);
                continue; /* (the sparse generator makes two classes) */
            }
            both(ds, l ? PT_LAYOUT_SPARSE : PT_LAYOUT_DENSE, (size_t)512 << 10, &mem, &str);
            const void *matrix;
            if (l) {
                const uint64_t *rp;
                const uint32_t *col;
                const float *val;
                ck_assert_int_eq(pt_dataset_csr(str, &rp, &col, &val), PT_OK);
                matrix = col;
            } else {
                matrix = pt_dataset_row_const(str, 0);
            }
            static const char *ways[] = {"faulted", "populated", "copied"};
            for (int k = 0; k < 3; k++)
                for (int path = 0; path < 2; path++) {
                    pt_window_force_arrival(str, ways[k]);
                    pt_train_params p;
                    pt_train_params_init(&p);
                    p.epochs = 2;
                    p.path = path ? PT_PATH_BATCH : PT_PATH_ONLINE;
                    pt_model *m = NULL;
                    ck_assert_msg(pt_train(str, &p, &m, NULL) == PT_OK, "%s", pt_last_error());
                    pt_model_free(m);
                    pt_window_settle(str);
                    long kib = mapped_kib(matrix);
                    ck_assert_msg(kib <= 1024, "%s %s, %d classes, pages %s: %ld KiB of the "
                                  "matrix still mapped", l ? "sparse" : "dense",
                                  path ? "batch" : "online", classes, ways[k], kib);
                }
            pt_dataset_free(mem);
            pt_dataset_free(str);
            pt_dataset_free(ds);
        }
}
END_TEST

START_TEST(sparse_same_model)
{
    pt_dataset *ds = generate(PT_GEN_SPARSE, 700, 300, 0), *mem, *str;
    both(ds, PT_LAYOUT_SPARSE, 6000, &mem, &str);
    tu_assert_same_data(mem, str, "sparse streamed");
    same_models(mem, str, "sparse");
    pt_dataset_free(mem);
    pt_dataset_free(str);
    pt_dataset_free(ds);
}
END_TEST

START_TEST(multiclass_same_model)
{
    pt_dataset *ds = generate(PT_GEN_BLOBS, 500, 20, 4), *mem, *str;
    for (int l = 0; l < 2; l++) {
        both(ds, l ? PT_LAYOUT_SPARSE : PT_LAYOUT_DENSE, 3000, &mem, &str);
        same_models(mem, str, l ? "sparse blobs" : "dense blobs");
        pt_dataset_free(mem);
        pt_dataset_free(str);
    }
    pt_dataset_free(ds);
}
END_TEST

/* Shuffled without a chunk, a streamed run takes its window's rows as the chunk: the same
 * weights as the in-memory run given that chunk. */
/* Compact rows streamed (bf16 of noisy data, u8 of its absolute values; read in the mapping,
 * window by window): the batch path trains the model file of the same file in memory and of
 * its float32 copy, fused and gemv, 1 and 2 threads, full batch and shuffled mini-batches, and
 * one-vs-rest over 3 classes; predictions and scores walk the windows and give the float32
 * copy's. */
START_TEST(compact_batch_same_model)
{
    for (int t = 0; t < 4; t++) {
        const bool three = t >= 2;
        const pt_dtype dtype = t % 2 ? PT_DTYPE_U8 : PT_DTYPE_BF16;
        pt_dataset *ds = generate(three ? PT_GEN_BLOBS : PT_GEN_NOISY, 12000, 60, three ? 3 : 0);
        for (size_t i = 0; dtype == PT_DTYPE_U8 && i < pt_dataset_n(ds); i++) {
            float *x = pt_dataset_row(ds, i);
            for (size_t j = 0; j < 60; j++) x[j] = x[j] < 0.0f ? -x[j] : x[j];
        }
        pt_dataset *c, *mem, *str, *wide;
        ck_assert_int_eq(pt_dataset_to_dtype(ds, dtype, 0, &c), PT_OK);
        /* windows of an eighth of the budget: a quarter of the rows' bytes */
        both(c, PT_LAYOUT_DENSE, 12000 * 64 * pt_dtype_size(dtype) / 2, &mem, &str);
        ck_assert_int_eq(pt_dataset_dtype(str), dtype);
        ck_assert_int_eq(pt_dataset_to_dtype(mem, PT_DTYPE_F32, 0, &wide), PT_OK);
        char what[128];
        for (int impl = PT_BATCH_GEMV; impl <= PT_BATCH_FUSED; impl++)
            for (int threads = 1; threads <= 2; threads++)
                for (int mini = 0; mini < 2; mini++) {
                    pt_train_params p;
                    pt_train_params_init(&p);
                    p.path = PT_PATH_BATCH;
                    p.batch.loss = PT_LOSS_HINGE;
                    p.batch.lambda = 0.01f;
                    p.epochs = 3;
                    p.batch.impl = (pt_batch_impl)impl;
                    p.threads = threads;
                    p.batch.size = mini ? 1300 : 0;
                    p.shuffle = mini;
                    p.seed = 3;
                    snprintf(what, sizeof what, "%s%s %s %d threads%s", pt_dtype_name(dtype),
                             three ? " 3 classes" : "", pt_batch_impl_name(p.batch.impl),
                             threads, mini ? " mini-batches" : "");
                    assert_same_model(mem, str, &p, what);
                    assert_same_model(wide, str, &p, what);
                }
        pt_train_params p;
        pt_train_params_init(&p);
        p.path = PT_PATH_BATCH;
        p.epochs = 3;
        pt_model *m = NULL;
        ck_assert_int_eq(pt_train(wide, &p, &m, NULL), PT_OK);
        const size_t n = pt_dataset_n(str), K = three ? 3 : 1;
        double *la = malloc(n * sizeof *la), *lb = malloc(n * sizeof *lb);
        float *sa = malloc(n * K * sizeof *sa), *sb = malloc(n * K * sizeof *sb);
        ck_assert_int_eq(pt_model_predict(m, str, la), PT_OK);
        ck_assert_int_eq(pt_model_predict(m, wide, lb), PT_OK);
        ck_assert_msg(memcmp(la, lb, n * sizeof *la) == 0, "%s: streamed predictions differ",
                      pt_dtype_name(dtype));
        if (three) {
            ck_assert_int_eq(pt_model_class_scores(m, str, sa), PT_OK);
            ck_assert_int_eq(pt_model_class_scores(m, wide, sb), PT_OK);
        } else {
            ck_assert_int_eq(pt_model_scores(m, str, sa), PT_OK);
            ck_assert_int_eq(pt_model_scores(m, wide, sb), PT_OK);
        }
        ck_assert(memcmp(sa, sb, n * K * sizeof *sa) == 0);
        pt_eval a, b;
        ck_assert_int_eq(pt_model_evaluate(m, str, &a), PT_OK);
        ck_assert_int_eq(pt_model_evaluate(m, wide, &b), PT_OK);
        ck_assert(a.correct == b.correct && a.n == b.n);
        free(la);
        free(lb);
        free(sa);
        free(sb);
        pt_model_free(m);
        pt_dataset_free(ds);
        pt_dataset_free(c);
        pt_dataset_free(mem);
        pt_dataset_free(str);
        pt_dataset_free(wide);
    }
}
END_TEST

START_TEST(window_is_the_default_chunk)
{
    pt_dataset *ds = generate(PT_GEN_NOISY, 500, 30, 0), *mem, *str;
    both(ds, PT_LAYOUT_DENSE, 8192, &mem, &str);
    pt_train_params p;
    pt_train_params_init(&p);
    p.epochs = 3;
    p.shuffle = 1;
    pt_model *a = NULL, *b = NULL;
    ck_assert_int_eq(pt_train(str, &p, &b, NULL), PT_OK);
    p.online.shuffle_chunk = pt_dataset_streamed(str);
    ck_assert_int_eq(pt_train(mem, &p, &a, NULL), PT_OK);
    const size_t d = 30;
    float ba, bb, bc;
    ck_assert(memcmp(pt_model_weights(a, &ba), pt_model_weights(b, &bb), d * sizeof(float)) == 0);
    ck_assert(ba == bb);
    /* and not the whole-order shuffle's */
    pt_model *c = NULL;
    p.online.shuffle_chunk = 0;
    ck_assert_int_eq(pt_train(mem, &p, &c, NULL), PT_OK);
    ck_assert(memcmp(pt_model_weights(a, &ba), pt_model_weights(c, &bc), d * sizeof(float)) != 0);
    pt_model_free(a);
    pt_model_free(b);
    pt_model_free(c);
    pt_dataset_free(mem);
    pt_dataset_free(str);
    pt_dataset_free(ds);
}
END_TEST

START_TEST(kernel_path_refuses)
{
    pt_dataset *ds = generate(PT_GEN_NOISY, 200, 10, 0), *mem, *str;
    both(ds, PT_LAYOUT_DENSE, 2048, &mem, &str);
    pt_train_params p;
    pt_train_params_init(&p);
    p.path = PT_PATH_KERNEL;
    pt_model *m = NULL;
    ck_assert_int_eq(pt_train(str, &p, &m, NULL), PT_ERR_LIMIT);
    HAS(pt_last_error(), "kernel path needs every row");
    HAS(pt_last_error(), "online or batch path");
    ck_assert_ptr_null(m);
    pt_dataset_free(mem);
    pt_dataset_free(str);
    pt_dataset_free(ds);
}
END_TEST

/* A streamed read verifies what an in-memory read does: a flipped byte anywhere in the matrix
 * (the last row, of float32 or bf16 rows; a sparse file's values) is a checksum mismatch. */
START_TEST(streamed_checksums)
{
    for (int l = 0; l < 3; l++) {
        pt_dataset *ds = generate(l == 1 ? PT_GEN_SPARSE : PT_GEN_NOISY, 300, 50, 0), *conv = NULL;
        if (l == 1) ck_assert_int_eq(pt_dataset_convert(ds, PT_LAYOUT_SPARSE, 0, &conv), PT_OK);
        if (l == 2) ck_assert_int_eq(pt_dataset_to_dtype(ds, PT_DTYPE_BF16, 0, &conv), PT_OK);
        const char *p = tu_path("win", ".ptd");
        ck_assert_int_eq(pt_dataset_write(conv ? conv : ds, p, PT_FORMAT_PTD), PT_OK);
        size_t len;
        char *b = tu_read_file(p, &len);
        /* bf16: the matrix's last bytes (its offset and length in the header's section table),
         * hashed window by window as the rows are checked */
        uint64_t moff, mlen;
        memcpy(&moff, b + 96 + 24 * 3, 8);
        memcpy(&mlen, b + 96 + 24 * 3 + 8, 8);
        b[l == 2 ? moff + mlen - 5 : len - 5] ^= 0x10;
        const char *q = tu_write_bytes("win", ".ptd", b, len);
        pt_read_options o;
        pt_read_options_init(&o);
        o.mem_budget_bytes = 4096;
        pt_dataset *r = NULL;
        ck_assert_int_eq(pt_dataset_read(q, &o, &r), PT_ERR_CHECKSUM);
        HAS(pt_last_error(), l == 1 ? "values section" : "matrix section");
        ck_assert_ptr_null(r);
        unlink(p);
        unlink(q);
        free(b);
        pt_dataset_free(conv);
        pt_dataset_free(ds);
    }
}
END_TEST

/* Predictions and the evaluation walk a streamed dataset window by window: the same answers. */
START_TEST(streamed_predictions)
{
    pt_dataset *ds = generate(PT_GEN_BLOBS, 400, 12, 3), *mem, *str;
    both(ds, PT_LAYOUT_DENSE, 2048, &mem, &str);
    pt_train_params p;
    pt_train_params_init(&p);
    pt_model *m = NULL;
    ck_assert_int_eq(pt_train(mem, &p, &m, NULL), PT_OK);
    pt_eval a, b;
    ck_assert_int_eq(pt_model_evaluate(m, mem, &a), PT_OK);
    ck_assert_int_eq(pt_model_evaluate(m, str, &b), PT_OK);
    ck_assert_uint_eq(a.correct, b.correct);
    ck_assert_uint_eq(a.n, b.n);
    pt_dataset_info ia, ib;
    pt_dataset_get_info(mem, &ia);
    pt_dataset_get_info(str, &ib);
    ck_assert(ia.R == ib.R && !ia.streamed && ib.streamed && ib.stream_rows > 0);
    pt_model_free(m);
    pt_dataset_free(mem);
    pt_dataset_free(str);
    pt_dataset_free(ds);
}
END_TEST

/* pt_rng_shuffle_chunks: a permutation whose chunks are whole, each chunk's rows contiguous,
 * the chunk order and the rows within shuffled; chunk 0 is pt_rng_shuffle. */
START_TEST(chunked_order)
{
    const size_t n = 1003, chunk = 50, C = (n + chunk - 1) / chunk;
    uint32_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    char *seen = calloc(n, 1);
    pt_rng r;
    pt_rng_seed(&r, 3);
    pt_rng_shuffle_chunks(&r, a, n, chunk);
    size_t moved = 0, chunks_moved = 0;
    for (size_t t = 0, k = 0; t < n; k++) {
        size_t c = a[t] / chunk, rows = c == C - 1 ? n - c * chunk : chunk;
        chunks_moved += c != k;
        for (size_t j = 0; j < rows; j++, t++) {
            ck_assert_uint_lt(a[t], n);
            ck_assert_uint_eq(a[t] / chunk, c); /* the chunk's rows together */
            ck_assert(!seen[a[t]]);
            seen[a[t]] = 1;
            moved += a[t] != c * chunk + j;
        }
    }
    ck_assert_uint_gt(chunks_moved, C / 2);
    ck_assert_uint_gt(moved, n / 2);
    /* the same seed, the same order; chunk 0 is the whole-order shuffle */
    pt_rng_seed(&r, 3);
    pt_rng_shuffle_chunks(&r, b, n, chunk);
    ck_assert(memcmp(a, b, n * sizeof *a) == 0);
    for (size_t i = 0; i < n; i++) a[i] = b[i] = (uint32_t)i;
    pt_rng_seed(&r, 4);
    pt_rng_shuffle_chunks(&r, a, n, 0);
    pt_rng_seed(&r, 4);
    pt_rng_shuffle(&r, b, n);
    ck_assert(memcmp(a, b, n * sizeof *a) == 0);
    /* a chunk of n rows or more, up to SIZE_MAX (where n + chunk - 1 wraps), is one chunk of n */
    const size_t huge[] = {n, n + 1, (size_t)UINT32_MAX, SIZE_MAX - n + 1, SIZE_MAX - 1, SIZE_MAX};
    pt_rng_seed(&r, 5);
    pt_rng_shuffle_chunks(&r, b, n, n);
    for (size_t k = 0; k < sizeof huge / sizeof huge[0]; k++) {
        pt_rng_seed(&r, 5);
        pt_rng_shuffle_chunks(&r, a, n, huge[k]);
        ck_assert_msg(memcmp(a, b, n * sizeof *a) == 0, "chunk %zu", huge[k]);
    }
    free(a);
    free(b);
    free(seen);
}
END_TEST

/* The CLI: train and info say the data was streamed; the streamed run's model file is the
 * in-memory run's, shuffled (the window's rows given to the in-memory run) and not. */
START_TEST(cli_streamed)
{
    /* (tu_path's buffers are reused by tu_run_cli) */
    char data[512], m1[512], m2[512];
    snprintf(data, sizeof data, "%s", tu_path("win", ".ptd"));
    snprintf(m1, sizeof m1, "%s", tu_path("win", ".model"));
    snprintf(m2, sizeof m2, "%s", tu_path("win", ".model"));
    char cmd[2048], *out = NULL;
    snprintf(cmd, sizeof cmd, "gen noisy --n 30000 --d 60 --seed 4 -o %s", data);
    ck_assert_int_eq(tu_run_cli(cmd, NULL, NULL), 0);
    snprintf(cmd, sizeof cmd, "train %s -o %s --mem-mb 1 --epochs 3 --shuffle --json", data, m1);
    ck_assert_int_eq(tu_run_cli(cmd, &out, NULL), 0);
    HAS(out, "\"data_mode\": \"streamed\"");
    HAS(out, "\"stream_rows\": 512"); /* 128 KiB windows of 256-byte rows */
    HAS(out, "\"shuffle_chunk\": 512");
    HAS(out, "\"bytes_per_epoch\": 7680000");
    HAS(out, "\"stream_pages\": \"");
    free(out);
    snprintf(cmd, sizeof cmd, "train %s -o %s --epochs 3 --shuffle --shuffle-chunk 512 --json",
             data, m2);
    ck_assert_int_eq(tu_run_cli(cmd, &out, NULL), 0);
    HAS(out, "\"data_mode\": \"in memory\"");
    free(out);
    size_t l1, l2;
    char *b1 = tu_read_file(m1, &l1), *b2 = tu_read_file(m2, &l2);
    ck_assert_msg(b1 && b2 && l1 == l2 && memcmp(b1, b2, l1) == 0, "the model files differ");
    free(b1);
    free(b2);
    snprintf(cmd, sizeof cmd, "info %s --mem-mb 1", data);
    char *err = NULL;
    int rc = tu_run_cli(cmd, &out, &err);
    ck_assert_msg(rc == 0, "info: %d: %s", rc, err);
    free(err);
    HAS(out, "streamed");
    free(out);
    /* a chunk of rows that, held twice, exceeds the budget: refused before training */
    snprintf(cmd, sizeof cmd, "train %s -o %s --mem-mb 1 --shuffle --shuffle-chunk 4096", data,
             m1);
    ck_assert_int_eq(tu_run_cli(cmd, NULL, &err), 2);
    HAS(err, "--shuffle-chunk");
    free(err);
    snprintf(cmd, sizeof cmd, "train %s -o %s --mem-mb 1 --path kernel", data, m1);
    ck_assert_int_eq(tu_run_cli(cmd, NULL, &err), 2);
    HAS(err, "--mem-mb");
    free(err);
    unlink(data);
    unlink(m1);
    unlink(m2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("window");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, dense_same_model);
    tcase_add_test(tc, dense_pieces_same_model);
    tcase_add_test(tc, every_arrival_same_model);
    tcase_add_test(tc, streamed_runs_drop_their_windows);
    tcase_add_test(tc, sparse_same_model);
    tcase_add_test(tc, multiclass_same_model);
    tcase_add_test(tc, compact_batch_same_model);
    tcase_add_test(tc, window_is_the_default_chunk);
    tcase_add_test(tc, kernel_path_refuses);
    tcase_add_test(tc, streamed_checksums);
    tcase_add_test(tc, streamed_predictions);
    tcase_add_test(tc, chunked_order);
    tcase_add_test(tc, cli_streamed);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run_suite(suite()); }
