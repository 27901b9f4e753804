/*
 * Model files: a text format a person can read (in the spirit of LIBLINEAR's), with a
 * checksum; version 1, and versions 2 to 4 only for what needs them, so that a final model
 * stays readable by older versions; a reader of a version reads every older file. The format,
 * every version and every key, is specified in docs/formats.md ("The model file"): a change
 * here changes that page in the same commit.
 *
 * Loading checks the checksum, then every field: its range, and its agreement with the other
 * fields and with the weights (check_header, check_votes; the run state's in parse_states),
 * each refusal naming the line. Numbers are written and read under the C locale
 * (pt_c_locale_enter), so a program that called setlocale for a decimal comma still writes
 * "0.5"; %.9g and strtof round-trip every finite float exactly, %.17g and strtod every double.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "features/expand.h"
#include "features/kernel_expr.h"
#include "model.h"

#define MODEL_VERSION 4 /* the newest version this ptron reads */
#define MODEL_MAGIC "ptron-model"
#define MAX_MODEL_BYTES ((uint64_t)16 << 30)
/* Features a model can have: a file of MAX_MODEL_BYTES holds at most this many weights of two
 * bytes ("0\n"). The body bounds d by the file itself wherever it holds vectors. */
#define MAX_MODEL_D (MAX_MODEL_BYTES / 2)
#define CHECKSUM_KEY "checksum "
#define CHECKSUM_LINE_LEN (sizeof CHECKSUM_KEY - 1 + 16) /* without the newline */

/* The header keys, in the order they are written. */
enum key {
    K_PATH, K_VARIANT, K_BIAS, K_D, K_NCLASS, K_LABELS, K_MULTICLASS,
    K_ETA, K_MARGIN, K_EPOCHS, K_SHUFFLE, K_SEED, K_LOSS, K_LAMBDA, K_SCHEDULE, K_BATCH_SIZE,
    K_TOL, K_AVERAGE_ITERATES, K_BATCH_IMPL, K_KERNEL, K_DEGREE, K_GAMMA, K_COEF0, K_CACHE_MB,
    K_GRAM_STORAGE, K_EPOCHS_RUN, K_B, NKEYS
};
static const char *const key_name[NKEYS] = {
    "path", "variant", "bias", "d", "nclass", "labels", "multiclass",
    "eta", "margin", "epochs", "shuffle", "seed", "loss", "lambda", "schedule", "batch_size",
    "tol", "average_iterates", "batch_impl", "kernel", "degree", "gamma", "coef0", "cache_mb",
    "gram_storage", "epochs_run", "b",
};

/* ---------------------------------------------------------------------------- saving */

static bool all_finite(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return false;
    return true;
}

static bool all_finite_d(const double *x, size_t n)
{
    for (size_t i = 0; x && i < n; i++)
        if (!isfinite(x[i])) return false;
    return true;
}

/* A run state whose numbers are not all finite could not be read back. */
static pt_status check_states(const pt_model *m)
{
    for (size_t k = 0; k < m->nstates; k++) {
        const pt_train_state *st = m->states[k];
        bool ok = isfinite(st->steps) && isfinite(st->avg_b) && isfinite(st->objective) &&
                  isfinite(st->epoch_objective) && isfinite(st->survived) &&
                  (!st->w || all_finite(st->w, st->len)) &&
                  (!st->u || all_finite(st->u, st->len)) &&
                  (!st->b || all_finite(st->b, st->nb)) &&
                  (!st->ub || all_finite(st->ub, st->nb)) &&
                  (!st->f || all_finite(st->f, st->n)) && all_finite_d(st->beta, st->n);
        if (!ok) return pt_fail(PT_ERR_NUMERIC, "cannot save a run state that is not finite");
    }
    return PT_OK;
}

static pt_status check_savable(const pt_model *m)
{
    const pt_train_params *p = &m->params;
    const char *names[] = {pt_path_name(m->path), pt_variant_name(m->variant),
                           pt_loss_name(p->batch.loss), pt_schedule_name(p->batch.schedule),
                           pt_batch_impl_name(p->batch.impl), pt_kernel_name(p->kernel.kind),
                           pt_gram_storage_name(p->kernel.gram_storage)};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i], "unknown") == 0)
            return pt_fail(PT_ERR_INVALID, "cannot save a model with an unknown enum value");
    PT_TRY(check_states(m));
    if (m->sub && !m->W) return PT_OK; /* kernel one-vs-rest: each class's model was checked by training */
    if (m->nclass < 2 || (m->nclass > 2 && (!m->W || !m->Bk || !m->labels)))
        return pt_fail(PT_ERR_UNSUPPORTED, "cannot save a %s model of %zu classes",
                       pt_path_name(m->path), m->nclass);
    for (size_t c = 0; c < m->nclass; c++)
        if (!isfinite(pt_model_class_value(m, c)))
            return pt_fail(PT_ERR_INVALID, "cannot save a model with a non-finite label");
    if (m->W && (!all_finite(m->W, m->nclass * pt_stride_for(m->d)) || !all_finite(m->Bk, m->nclass)))
        return pt_fail(PT_ERR_NUMERIC, "cannot save a model whose weights are not finite");
    if (
        !isfinite(p->eta) || !isfinite(p->margin) || !isfinite(p->batch.lambda) ||
        !isfinite(p->batch.tol) || !isfinite(p->kernel.gamma) || !isfinite(p->kernel.coef0) || !isfinite(m->b))
        return pt_fail(PT_ERR_INVALID, "cannot save a model with a non-finite label or parameter");
    if (m->W) return PT_OK;
    if (m->w ? !all_finite(m->w, m->d)
             : (m->n_sv && ((!m->sv && !m->sv_ptr) || !m->coef || !all_finite(m->coef, m->n_sv))))
        return pt_fail(PT_ERR_NUMERIC, "cannot save a model whose weights are not finite");
    if (!m->w && m->sv_ptr) {
        if (!all_finite(m->sv_val, (size_t)m->sv_ptr[m->n_sv]))
            return pt_fail(PT_ERR_NUMERIC,
                           "cannot save a model whose support vectors are not finite");
        return PT_OK;
    }
    for (size_t i = 0; !m->w && i < m->n_sv; i++)
        if (!all_finite(m->sv + i * pt_stride_for(m->d), m->d))
            return pt_fail(PT_ERR_NUMERIC,
                           "cannot save a model whose support vectors are not finite");
    return PT_OK;
}

/* What a model's run-state blocks hold, from its header (see print_state). */
typedef enum state_kind { ST_ONLINE, ST_BATCH, ST_KERNEL } state_kind;

typedef struct state_shape {
    state_kind kind;
    size_t d, nb;  /* linear: nb weight vectors of d (nb = classes of the multiclass perceptron) */
    bool sums;     /* live_u, live_ub: the averaged variant's lazy sums, the batch path's average */
    bool voted;    /* survived */
    bool dual_avg; /* beta */
    size_t blocks; /* one per problem: the classes of one-vs-rest, else one */
} state_shape;

static state_shape shape_of(pt_path path, pt_variant variant, pt_multiclass multiclass,
                            size_t nclass, int average_iterates, size_t d)
{
    bool ovr = nclass > 2 && multiclass == PT_MULTI_OVR;
    state_shape sh = {.d = d, .nb = 1, .blocks = ovr ? nclass : 1};
    if (path == PT_PATH_KERNEL) {
        sh.kind = ST_KERNEL;
        sh.dual_avg = variant == PT_VARIANT_AVERAGED;
    } else if (path == PT_PATH_BATCH) {
        sh.kind = ST_BATCH;
        sh.sums = average_iterates != 0;
    } else {
        sh.kind = ST_ONLINE;
        sh.nb = nclass > 2 && !ovr ? nclass : 1;
        sh.sums = variant == PT_VARIANT_AVERAGED;
        sh.voted = variant == PT_VARIANT_VOTED;
    }
    return sh;
}

/* nb vectors of d floats, each the first d of stride floats. */
static void print_vectors(FILE *f, const char *key, const float *v, size_t nb, size_t d)
{
    fputs(key, f);
    for (size_t c = 0; c < nb; c++)
        for (size_t j = 0; j < d; j++) fprintf(f, " %.9g", (double)v[c * pt_stride_for(d) + j]);
    fputc('\n', f);
}

/* One problem's run in progress (an interrupted run, a snapshot or a checkpoint), after the
 * weights (version 2; a one-vs-rest model has one block per class, in class order):
 *   resume N EPOCHS_DONE POSITION EPOCH_MISTAKES UPDATES STEPS FINISHED
 *   history M ...          mistakes of the last min(EPOCHS_DONE, 1000) epochs, oldest first
 * then, linear paths:
 *   live_w W ...           the live weights (the multiclass perceptron: every class's in turn)
 *   live_b B ...           and biases
 *   live_u U ...           averaged online: the lazy sums; batch --average-iterates: the average
 *   live_ub UB ...         of the iterates (its bias as a double)
 *   survived S             voted: samples the current vector has survived
 *   objective F_LAST F_SO_FAR   batch: the last epoch's objective, the next one's sum so far
 * the kernel path:
 *   alpha A1 ... AN        the dual coefficients (updates per sample)
 *   beta B1 ... BN         averaged: their lazy sums
 *   margins F1 ... FN      the margin vector as it stands
 * POSITION counts samples (batch: blocks) done in epoch EPOCHS_DONE + 1; STEPS the samples
 * visited (batch: the steps taken); FINISHED 1 when the run converged or met --tol. */
static void print_state(FILE *f, const pt_train_state *st, const state_shape *sh)
{
    fprintf(f, "resume %zu %d %zu %zu %zu %.17g %d\nhistory", st->n, st->epochs_done, st->pos,
            st->epoch_mistakes, st->updates, st->steps, st->finished ? 1 : 0);
    for (int e = 0; e < st->nhist; e++) fprintf(f, " %zu", st->hist[e]);
    fputc('\n', f);
    if (sh->kind == ST_KERNEL) {
        fputs("alpha", f);
        for (size_t i = 0; i < st->n; i++) fprintf(f, " %" PRIu32, st->alpha[i]);
        fputc('\n', f);
        if (sh->dual_avg) {
            fputs("beta", f);
            for (size_t i = 0; i < st->n; i++) fprintf(f, " %.17g", st->beta[i]);
            fputc('\n', f);
        }
        fputs("margins", f);
        for (size_t i = 0; i < st->n; i++) fprintf(f, " %.9g", (double)st->f[i]);
        fputc('\n', f);
        return;
    }
    print_vectors(f, "live_w", st->w, sh->nb, sh->d);
    print_vectors(f, "live_b", st->b, 1, sh->nb);
    if (sh->sums) {
        print_vectors(f, "live_u", st->u, sh->nb, sh->d);
        if (sh->kind == ST_BATCH) fprintf(f, "live_ub %.17g\n", st->avg_b);
        else print_vectors(f, "live_ub", st->ub, 1, sh->nb);
    }
    if (sh->voted) fprintf(f, "survived %.9g\n", (double)st->survived);
    if (sh->kind == ST_BATCH)
        fprintf(f, "objective %.17g %.17g\n", st->objective, st->epoch_objective);
}

static void print_states(FILE *f, const pt_model *m)
{
    state_shape sh = shape_of(m->path, m->variant, m->multiclass, m->nclass,
                              m->params.batch.average_iterates, m->d);
    for (size_t k = 0; k < m->nstates; k++) print_state(f, m->states[k], &sh);
}

/* A kernel model's support vectors: "n_sv N", then N lines of coef and the d values. */
static void print_support(FILE *f, const pt_model *m)
{
    size_t stride = pt_stride_for(m->d);
    if (m->sv_ptr) {
        /* version 3: the non-zeros only */
        fprintf(f, "n_sv %zu sparse\n", m->n_sv);
        for (size_t i = 0; i < m->n_sv; i++) {
            fprintf(f, "%.9g", (double)m->coef[i]);
            for (uint64_t z = m->sv_ptr[i]; z < m->sv_ptr[i + 1]; z++)
                fprintf(f, " %" PRIu32 ":%.9g", m->sv_col[z] + 1, (double)m->sv_val[z]);
            fputc('\n', f);
        }
        return;
    }
    fprintf(f, "n_sv %zu\n", m->n_sv);
    for (size_t i = 0; i < m->n_sv; i++) {
        const float *x = m->sv + i * stride;
        fprintf(f, "%.9g", (double)m->coef[i]);
        for (size_t j = 0; j < m->d; j++) fprintf(f, " %.9g", (double)x[j]);
        fputc('\n', f);
    }
}

/* The voted perceptron's vectors: "votes N", then N lines of survival count, bias, d weights. */
static void print_votes(FILE *f, const pt_model *m)
{
    size_t stride = pt_stride_for(m->d);
    fprintf(f, "votes %zu\n", m->n_votes);
    for (size_t v = 0; v < m->n_votes; v++) {
        fprintf(f, "%.9g %.9g", (double)m->vote_c[v], (double)m->vote_b[v]);
        for (size_t j = 0; j < m->d; j++) fprintf(f, " %.9g", (double)m->votes[v * stride + j]);
        fputc('\n', f);
    }
}

/* Linear one-vs-rest models with a binary model per class (the voted perceptron's vectors). */
static bool has_ovr_votes(const pt_model *m) { return m->W && m->sub; }

/* Little-endian float32 and uint32 (the binary section's byte order) in place. */
static void to_le32(void *p, size_t count)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    uint32_t *u = p;
    for (size_t i = 0; i < count; i++) u[i] = __builtin_bswap32(u[i]);
#else
    (void)p;
    (void)count;
#endif
}

/* count 32-bit values (float or uint32) to f in little-endian order. */
static void put_le32(FILE *f, const void *v, size_t count)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    const uint32_t *u = v;
    for (size_t i = 0; i < count; i++) {
        uint32_t x = __builtin_bswap32(u[i]);
        fwrite(&x, 4, 1, f);
    }
#else
    fwrite(v, 4, count, f);
#endif
}

/* Version 4, a two-class kernel model's dense support vectors: "n_sv N binary", then the
 * section (the N x d values, the N coefficients). */
static void print_support_binary(FILE *f, const pt_model *m)
{
    const size_t stride = pt_stride_for(m->d), n = m->n_sv;
    fprintf(f, "n_sv %zu binary\nbinary %zu\n", n, n * (m->d + 1) * 4);
    for (size_t i = 0; i < n; i++) put_le32(f, m->sv + i * stride, m->d);
    put_le32(f, m->coef, n);
    fputc('\n', f);
}

/* Version 4, kernel one-vs-rest with dense support vectors: one set for every class (see the
 * format above). False when out of memory. */
static bool print_ovr_kernel_binary(FILE *f, const pt_model *m)
{
    const size_t K = m->nclass, d = m->d;
    pt_sv_set u;
    if (pt_sv_set_build(&u, m) != PT_OK) return false;
    size_t bytes = u.n * d * 4;
    fprintf(f, "ovr_kernel shared %zu\nclass_sv", u.n);
    for (size_t c = 0; c < K; c++) {
        fprintf(f, " %zu", m->sub[c]->n_sv);
        bytes += m->sub[c]->n_sv * 8;
    }
    fprintf(f, "\nbinary %zu\n", bytes);
    for (size_t i = 0; i < u.n; i++) put_le32(f, u.row[i], d);
    for (size_t c = 0; c < K; c++) {
        put_le32(f, u.idx[c], m->sub[c]->n_sv);
        put_le32(f, m->sub[c]->coef, m->sub[c]->n_sv);
    }
    fputc('\n', f);
    pt_sv_set_free(&u, K);
    return true;
}

/* Kernel models whose support vectors are sparse (version 3). */
static bool has_sparse_sv(const pt_model *m)
{
    bool any = m->sv_ptr != NULL;
    for (size_t c = 0; !m->W && m->sub && c < m->nclass; c++) any |= m->sub[c]->sv_ptr != NULL;
    return any;
}

static _Atomic bool text_kernels; /* pt_model_io_text_kernels */

void pt_model_io_text_kernels(bool on) { text_kernels = on; }

/* Kernel models with dense support vectors: a binary section (version 4). */
static bool has_binary_sv(const pt_model *m)
{
    return m->path == PT_PATH_KERNEL && !m->W && !m->w && !has_sparse_sv(m) && !text_kernels;
}

/* False when out of memory. */
static bool print_model(FILE *f, const pt_model *m)
{
    const pt_train_params *p = &m->params;
    /* version 2 only where the file needs it (voted one-vs-rest, a run in progress), so that
     * older ptron still reads the others */
    fprintf(f, "%s %d\n", MODEL_MAGIC,
            has_binary_sv(m) ? 4
            : has_sparse_sv(m) || m->scale || m->has_platt || p->expand.hash_bits
                ? 3
                : has_ovr_votes(m) || m->nstates ? 2 : 1);
    fprintf(f, "path %s\nvariant %s\nbias %d\nd %zu\nnclass %zu\nlabels",
            pt_path_name(m->path), pt_variant_name(m->variant), m->bias ? 1 : 0, m->d, m->nclass);
    for (size_t c = 0; c < m->nclass; c++) fprintf(f, " %.17g", pt_model_class_value(m, c));
    fprintf(f, "\nmulticlass %s\n", pt_multiclass_name(m->multiclass));
    if (m->label_names) {
        fputs("names", f);
        for (size_t c = 0; c < m->nclass; c++) {
            fputc(' ', f);
            for (const unsigned char *q = (const unsigned char *)m->label_names[c]; *q; q++)
                if (*q <= ' ' || *q == '%' || *q == 0x7f) fprintf(f, "%%%02X", *q);
                else fputc(*q, f);
        }
        fputc('\n', f);
    }
    fprintf(f, "eta %.9g\nmargin %.9g\nepochs %d\nshuffle %d\nseed %" PRIu64 "\n", (double)p->eta,
            (double)p->margin, p->epochs, p->shuffle ? 1 : 0, p->seed);
    fprintf(f, "loss %s\nlambda %.9g\nschedule %s\nbatch_size %zu\ntol %.17g\n",
            pt_loss_name(p->batch.loss), (double)p->batch.lambda, pt_schedule_name(p->batch.schedule), p->batch.size,
            p->batch.tol);
    fprintf(f, "average_iterates %d\nbatch_impl %s\n", p->batch.average_iterates ? 1 : 0,
            pt_batch_impl_name(p->batch.impl));
    /* gamma: the number a kernel run used, or a rule (models trained off the kernel path by
     * hand-made parameters) by its name */
    char gamma[32];
    if (p->kernel.gamma == PT_GAMMA_SCALE || p->kernel.gamma == PT_GAMMA_AUTO)
        snprintf(gamma, sizeof gamma, "%s", p->kernel.gamma == PT_GAMMA_SCALE ? "scale" : "auto");
    else snprintf(gamma, sizeof gamma, "%.9g", (double)p->kernel.gamma);
    fprintf(f, "kernel %s\ndegree %d\ngamma %s\ncoef0 %.9g\ncache_mb %zu\ngram_storage %s\n",
            pt_kernel_name(p->kernel.kind), p->kernel.degree, gamma, (double)p->kernel.coef0, p->kernel.cache_mb,
            pt_gram_storage_name(p->kernel.gram_storage));
    if (p->kernel.budget) fprintf(f, "budget %zu\n", p->kernel.budget); /* optional: 0 without it */
    if (p->online.voted_max_vectors) /* optional, as budget */
        fprintf(f, "voted_max_vectors %zu\n", p->online.voted_max_vectors);
    if (p->kernel.kind == PT_KERNEL_EXPR) { /* optional: the expression, canonical (no spaces) */
        pt_kexpr e;
        char canon[sizeof p->kernel.expr];
        bool ok = pt_kexpr_parse(p->kernel.expr, &e) == PT_OK &&
                  pt_kexpr_format(&e, canon, sizeof canon) == PT_OK;
        fprintf(f, "kernel_expr %s\n", ok ? canon : "?");
    }
    const pt_expand_params *ex = &p->expand;
    if (ex->kind != PT_EXPAND_NONE) {
        fprintf(f, "expand %s degree %d coef0 %.9g rff_dim %zu gamma %.9g seed %" PRIu64
                " d_in %zu", ex->kind == PT_EXPAND_POLY ? "poly" : "rff", ex->degree,
                (double)ex->coef0, ex->rff_dim, (double)ex->gamma, ex->seed, m->expand_d_in);
        if (ex->hash_bits) fprintf(f, " hash_bits %d", ex->hash_bits); /* version 3 */
        fputc('\n', f);
    }
    if (m->scale) {
        fprintf(f, "scale %s %zu", pt_scale_kind_name(m->scale->kind), m->scale->d);
        for (size_t j = 0; j < m->scale->d; j++)
            fprintf(f, " %.17g %.17g", m->scale->offset[j], m->scale->factor[j]);
        fputc('\n', f);
    }
    if (m->has_platt) fprintf(f, "platt %.17g %.17g\n", m->platt_a, m->platt_b);
    fprintf(f, "epochs_run %d\nb %.9g\n", m->epochs_run, (double)m->b);
    if (m->W) {
        size_t stride = pt_stride_for(m->d);
        fputs("W\n", f);
        for (size_t c = 0; c < m->nclass; c++) {
            fprintf(f, "%.9g", (double)m->Bk[c]);
            for (size_t j = 0; j < m->d; j++) fprintf(f, " %.9g", (double)m->W[c * stride + j]);
            fputc('\n', f);
        }
        if (has_ovr_votes(m)) {
            /* version 2: each class's voted vectors in turn */
            fputs("ovr_votes\n", f);
            for (size_t c = 0; c < m->nclass; c++) print_votes(f, m->sub[c]);
        }
    } else if (m->w) {
        fputs("w\n", f);
        for (size_t j = 0; j < m->d; j++) fprintf(f, "%.9g\n", (double)m->w[j]);
        if (m->n_votes) print_votes(f, m);
    } else if (m->sub && has_binary_sv(m)) {
        if (!print_ovr_kernel_binary(f, m)) return false;
    } else if (m->sub) {
        /* kernel one-vs-rest: each class's support vectors in turn */
        fputs("ovr_kernel\n", f);
        for (size_t c = 0; c < m->nclass; c++) print_support(f, m->sub[c]);
    } else if (has_binary_sv(m)) {
        print_support_binary(f, m);
    } else {
        print_support(f, m);
    }
    print_states(f, m);
    return true;
}

/* The model file's text in a malloc'd buffer; what names the model in messages. */
static pt_status model_text(const pt_model *m, const char *what, char **buf, size_t *len)
{
    PT_TRY(check_savable(m));
    /* The whole text goes to memory first: the checksum line covers every byte before it. */
    *buf = NULL;
    *len = 0;
    FILE *f = open_memstream(buf, len);
    if (!f) return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate the model text", what);
    locale_t loc = pt_c_locale_enter();
    bool ok = print_model(f, m);
    ok = fflush(f) == 0 && !ferror(f) && ok;
    if (ok) ok = fprintf(f, CHECKSUM_KEY "%016" PRIx64 "\n", pt_checksum(*buf, *len)) > 0;
    pt_c_locale_leave(loc);
    if (fclose(f) != 0 || !ok) {
        free(*buf);
        *buf = NULL;
        return pt_fail(PT_ERR_NOMEM, "%s: cannot build the model text in memory", what);
    }
    return PT_OK;
}

/* A stream that checksums what passes through it on its way to out. */
typedef struct hashed {
    FILE *out;
    void *sum;
} hashed;

static ssize_t hashed_write(void *cookie, const char *buf, size_t size)
{
    hashed *h = cookie;
    pt_checksum_update(h->sum, buf, size);
    return fwrite(buf, 1, size, h->out) == size ? (ssize_t)size : -1;
}

/* The model straight into the file, checksummed on the way (no copy of a large binary section
 * in memory), then the checksum line. */
static pt_status write_model(FILE *out, const void *ctx)
{
    const pt_model *m = ctx;
    hashed h = {out, pt_checksum_begin()};
    FILE *f = h.sum ? fopencookie(&h, "w", (cookie_io_functions_t){.write = hashed_write}) : NULL;
    if (!f) {
        if (h.sum) pt_checksum_end(h.sum);
        return pt_fail(PT_ERR_NOMEM, "cannot set up the model's checksum");
    }
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    locale_t loc = pt_c_locale_enter();
    bool printed = print_model(f, m); /* false: out of memory (said) */
    bool ok = fflush(f) == 0 && !ferror(f);
    fclose(f);
    uint64_t sum = pt_checksum_end(h.sum);
    if (ok && printed) ok = fprintf(out, CHECKSUM_KEY "%016" PRIx64 "\n", sum) > 0;
    pt_c_locale_leave(loc);
    if (!printed) return PT_ERR_NOMEM;
    return ok ? PT_OK : pt_fail(PT_ERR_IO, "writing the model: %s", strerror(errno));
}

pt_status pt_model_save(const pt_model *m, const char *path)
{
    pt_clear_error();
    PT_TRY(check_savable(m));
    return pt_write_atomic(path, write_model, m);
}

pt_status pt_model_save_buffer(const pt_model *m, void **buf, size_t *len)
{
    pt_clear_error();
    char *b = NULL;
    size_t n = 0;
    pt_status s = model_text(m, "model", &b, &n);
    *buf = b;
    *len = n;
    return s;
}

void pt_buffer_free(void *buf) { free(buf); }

/* ------------------------------------------------------------------ predictions files */

typedef struct predictions {
    const pt_model *m;
    const double *labels;
    size_t n;
} predictions;

static pt_status print_predictions(FILE *f, const void *ctx)
{
    const predictions *p = ctx;
    bool names = pt_model_class_name(p->m, 0) != NULL;
    for (size_t i = 0; i < p->n; i++) {
        /* text-label models predict class indices 0..K-1 */
        double v = p->labels[i];
        if (names && !(v >= 0 && v < (double)p->m->nclass && v == (double)(size_t)v))
            return pt_fail(PT_ERR_INVALID, "row %zu: %g is no class of the model", i + 1, v);
        if ((names ? fprintf(f, "%s\n", pt_model_class_name(p->m, (size_t)v))
                   : fprintf(f, "%.17g\n", v)) < 0)
            return pt_fail(PT_ERR_IO, "write failed: %s", strerror(errno));
    }
    return PT_OK;
}

pt_status pt_predictions_write(const pt_model *m, const double *labels, size_t n, const char *path)
{
    pt_clear_error();
    predictions p = {m, labels, n};
    locale_t loc = pt_c_locale_enter();
    pt_status s = pt_write_atomic(path, print_predictions, &p);
    pt_c_locale_leave(loc);
    return s;
}

/* --------------------------------------------------------------------------- loading */

typedef struct parser {
    const char *path;
    int version;   /* of the file's format */
    char *p, *end; /* unread part of the body (before the checksum line) */
    size_t line;   /* number of the line last returned */
} parser;

static pt_status vperr(const parser *r, size_t line, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return pt_fail(PT_ERR_PARSE, "%s:%zu: %s", r->path, line, msg);
}

/* A parse error on the line last read. */
static pt_status perr(const parser *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static pt_status perr(const parser *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pt_status s = vperr(r, r->line, fmt, ap);
    va_end(ap);
    return s;
}

/* A parse error on an earlier line (a field that contradicts what came after it). */
static pt_status perr_at(const parser *r, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static pt_status perr_at(const parser *r, size_t line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pt_status s = vperr(r, line, fmt, ap);
    va_end(ap);
    return s;
}

/* The next line, NUL-terminated in place; NULL at the end of the body. */
static char *next_line(parser *r)
{
    if (r->p >= r->end) return NULL;
    char *s = r->p, *nl = memchr(s, '\n', (size_t)(r->end - s));
    *nl = '\0'; /* the body ends with a newline: the checksum line follows it */
    r->p = nl + 1;
    r->line++;
    return s;
}

static char *skip_blanks(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

/* Split off the next whitespace-separated token (NUL-terminating it); NULL if none. */
static char *token(char **s)
{
    char *t = skip_blanks(*s);
    if (!*t) return NULL;
    char *e = t;
    while (*e && *e != ' ' && *e != '\t') e++;
    if (*e) *e++ = '\0';
    *s = e;
    return t;
}

static pt_status parse_f32(const parser *r, const char *what, const char *t, float *out)
{
    char *e;
    float v = strtof(t, &e);
    /* errno is not consulted: glibc sets ERANGE for subnormal results, which are exact. */
    if (e == t || *e || !isfinite(v)) return perr(r, "%s: '%s' is not a finite number", what, t);
    *out = v;
    return PT_OK;
}

static pt_status parse_f64(const parser *r, const char *what, const char *t, double *out)
{
    char *e;
    double v = strtod(t, &e);
    if (e == t || *e || !isfinite(v)) return perr(r, "%s: '%s' is not a finite number", what, t);
    *out = v;
    return PT_OK;
}

static pt_status parse_u64(const parser *r, const char *what, const char *t, uint64_t max,
                           uint64_t *out)
{
    char *e;
    errno = 0;
    unsigned long long v = strtoull(t, &e, 10);
    if (*t < '0' || *t > '9' || *e || errno == ERANGE || v > max)
        return perr(r, "%s: '%s' is not an integer in 0..%" PRIu64, what, t, max);
    *out = v;
    return PT_OK;
}

static pt_status parse_int(const parser *r, const char *what, const char *t, int max, int *out)
{
    uint64_t v = 0;
    PT_TRY(parse_u64(r, what, t, (uint64_t)max, &v));
    *out = (int)v;
    return PT_OK;
}

/* An enum from its name: table of names indexed by value. */
static pt_status parse_enum(const parser *r, const char *what, const char *t,
                            const char *(*name)(int), int count, int *out)
{
    char list[128] = "";
    for (int v = 0; v < count; v++) {
        if (strcmp(t, name(v)) == 0) {
            *out = v;
            return PT_OK;
        }
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", v ? ", " : "", name(v));
    }
    return perr(r, "%s: unknown value '%s' (%s)", what, t, list);
}

static const char *path_name(int v) { return pt_path_name((pt_path)v); }
static const char *variant_name(int v) { return pt_variant_name((pt_variant)v); }
static const char *loss_name(int v) { return pt_loss_name((pt_loss)v); }
static const char *schedule_name(int v) { return pt_schedule_name((pt_schedule)v); }
static const char *batch_impl_name(int v) { return pt_batch_impl_name((pt_batch_impl)v); }
static const char *kernel_name(int v) { return pt_kernel_name((pt_kernel)v); }
static const char *gram_storage_name(int v) { return pt_gram_storage_name((pt_gram_storage)v); }
static const char *multiclass_name(int v) { return pt_multiclass_name((pt_multiclass)v); }

/* What the header lines give, before the weights. */
typedef struct fields {
    pt_path path;
    pt_variant variant;
    int bias;
    uint64_t d, nclass;
    double *labels; /* nclass values, malloc'd */
    char **names;   /* text labels (nclass), malloc'd, or NULL */
    pt_multiclass multiclass;
    pt_train_params p;
    int epochs_run;
    float b;
    uint64_t expand_d_in; /* the optional 'expand' line (p.expand.kind NONE without it) */
    pt_scaling *scale;    /* the optional 'scale' line (version 3), or NULL */
    int has_platt;        /* the optional 'platt A B' line (version 3) */
    double platt[2];
    size_t at_platt;
    /* the line of each key, of 'names' and of 'votes' (0: absent), for checks after them */
    size_t at[NKEYS], at_names, at_votes;
} fields;

/* Parse the value(s) of one header key; line holds what follows the key. */
static pt_status parse_key(const parser *r, enum key k, char *line, fields *f)
{
    const char *name = key_name[k];
    char *t = token(&line), *t2 = t ? token(&line) : NULL;
    if (k == K_LABELS) {
        if (!f->nclass) return perr(r, "labels: 'nclass' must come first");
        if (f->labels) return perr(r, "key 'labels' given twice");
        f->labels = malloc((size_t)f->nclass * sizeof(double));
        if (!f->labels) return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate %" PRIu64 " labels", r->path, f->nclass);
        for (uint64_t c = 0; c < f->nclass; c++) {
            const char *v = c == 0 ? t : c == 1 ? t2 : token(&line);
            if (!v) return perr(r, "labels: expected %" PRIu64 " values, found %" PRIu64, f->nclass, c);
            PT_TRY(parse_f64(r, name, v, &f->labels[c]));
            if (c && !(f->labels[c] > f->labels[c - 1])) return perr(r, "labels: not ascending");
        }
        if (f->nclass > 2 ? token(&line) != NULL : (f->nclass == 2 && line && token(&line)))
            return perr(r, "labels: expected %" PRIu64 " values, found more", f->nclass);
        return PT_OK;
    }
    int want = 1, have = !t ? 0 : !t2 ? 1 : 2;
    if (have != want)
        return perr(r, "%s: expected %d value%s, found %s", name, want, want > 1 ? "s" : "",
                    have > want ? "more" : have ? "one" : "none");
    int e = 0;
    uint64_t u = 0;
    pt_status s = PT_OK;
    pt_train_params *p = &f->p;
    switch (k) {
    case K_PATH: s = parse_enum(r, name, t, path_name, 3, &e); f->path = (pt_path)e; break;
    case K_VARIANT:
        s = parse_enum(r, name, t, variant_name, 3, &e);
        f->variant = (pt_variant)e;
        break;
    case K_BIAS: s = parse_int(r, name, t, 1, &f->bias); break;
    case K_D:
        if ((s = parse_u64(r, name, t, UINT64_MAX, &f->d)) == PT_OK && f->d > MAX_MODEL_D)
            s = perr(r, "d: %s features are more than a model file can hold (%" PRIu64 ")", t,
                     (uint64_t)MAX_MODEL_D);
        break;
    case K_NCLASS:
        /* each label takes at least two bytes: bound the count by the file */
        s = parse_u64(r, name, t, UINT64_MAX, &f->nclass);
        if (s == PT_OK && f->nclass < 2) s = perr(r, "nclass %" PRIu64 ": a model has at least two classes", f->nclass);
        if (s == PT_OK && f->nclass > (uint64_t)(r->end - r->p) / 2)
            s = perr(r, "nclass %" PRIu64 ": the labels of that many classes cannot fit in the "
                     "%zu bytes left", f->nclass, (size_t)(r->end - r->p));
        break;
    case K_LABELS: break; /* above */
    case K_MULTICLASS:
        s = parse_enum(r, name, t, multiclass_name, 2, &e);
        f->multiclass = (pt_multiclass)e;
        break;
    case K_ETA:
        if ((s = parse_f32(r, name, t, &p->eta)) == PT_OK && !(p->eta > 0.0f))
            s = perr(r, "eta: %s must be > 0", t);
        break;
    case K_MARGIN:
        if ((s = parse_f32(r, name, t, &p->margin)) == PT_OK && p->margin < 0.0f)
            s = perr(r, "margin: %s must be >= 0", t);
        break;
    case K_EPOCHS:
        if ((s = parse_int(r, name, t, INT32_MAX, &p->epochs)) == PT_OK && p->epochs < 1)
            s = perr(r, "epochs: a run has at least one epoch");
        break;
    case K_SHUFFLE: s = parse_int(r, name, t, 1, &p->shuffle); break;
    case K_SEED: s = parse_u64(r, name, t, UINT64_MAX, &p->seed); break;
    case K_LOSS: s = parse_enum(r, name, t, loss_name, 3, &e); p->batch.loss = (pt_loss)e; break;
    case K_LAMBDA:
        if ((s = parse_f32(r, name, t, &p->batch.lambda)) == PT_OK && p->batch.lambda < 0.0f)
            s = perr(r, "lambda: %s must be >= 0", t);
        break;
    case K_SCHEDULE:
        s = parse_enum(r, name, t, schedule_name, 3, &e);
        p->batch.schedule = (pt_schedule)e;
        break;
    case K_BATCH_SIZE: s = parse_u64(r, name, t, SIZE_MAX, &u); p->batch.size = (size_t)u; break;
    case K_TOL:
        if ((s = parse_f64(r, name, t, &p->batch.tol)) == PT_OK && p->batch.tol < 0.0)
            s = perr(r, "tol: %s must be >= 0", t);
        break;
    case K_AVERAGE_ITERATES: s = parse_int(r, name, t, 1, &p->batch.average_iterates); break;
    case K_BATCH_IMPL:
        s = parse_enum(r, name, t, batch_impl_name, 3, &e);
        p->batch.impl = (pt_batch_impl)e;
        break;
    case K_KERNEL: s = parse_enum(r, name, t, kernel_name, 4, &e); p->kernel.kind = (pt_kernel)e; break;
    case K_DEGREE:
        if ((s = parse_int(r, name, t, INT32_MAX, &p->kernel.degree)) == PT_OK &&
            (p->kernel.degree < 1 || p->kernel.degree > 32))
            s = perr(r, "degree: %s is outside 1..32", t);
        break;
    case K_GAMMA:
        if (strcmp(t, "scale") == 0 || strcmp(t, "auto") == 0)
            p->kernel.gamma = t[0] == 's' ? PT_GAMMA_SCALE : PT_GAMMA_AUTO;
        else if ((s = parse_f32(r, name, t, &p->kernel.gamma)) == PT_OK && !(p->kernel.gamma > 0.0f))
            s = perr(r, "gamma: %s must be > 0", t);
        break;
    case K_COEF0: s = parse_f32(r, name, t, &p->kernel.coef0); break;
    case K_CACHE_MB: s = parse_u64(r, name, t, SIZE_MAX, &u); p->kernel.cache_mb = (size_t)u; break;
    case K_GRAM_STORAGE:
        s = parse_enum(r, name, t, gram_storage_name, 3, &e);
        p->kernel.gram_storage = (pt_gram_storage)e;
        break;
    case K_EPOCHS_RUN: s = parse_int(r, name, t, INT32_MAX, &f->epochs_run); break;
    case K_B: s = parse_f32(r, name, t, &f->b); break;
    case NKEYS: break;
    }
    return s;
}

/* Exactly count numbers on the line into out. */
static pt_status parse_floats(const parser *r, char *line, size_t count, float *out)
{
    for (size_t k = 0; k < count; k++) {
        char *t = token(&line);
        if (!t) return perr(r, "expected %zu values, found %zu", count, k);
        PT_TRY(parse_f32(r, "value", t, &out[k]));
    }
    if (token(&line)) return perr(r, "expected %zu values, found more", count);
    return PT_OK;
}

static pt_status parse_linear(parser *r, const fields *f, pt_model **out)
{
    /* Each weight takes at least two bytes ("0\n"): bound d by what is left before allocating. */
    if (f->d > (uint64_t)(r->end - r->p) / 2)
        return perr(r, "w: %" PRIu64 " weights cannot fit in the %zu bytes left", f->d,
                    (size_t)(r->end - r->p));
    pt_model *m = *out = pt_model_alloc_linear((size_t)f->d);
    if (!m) return PT_ERR_NOMEM;
    for (size_t j = 0; j < f->d; j++) {
        char *line = next_line(r);
        if (!line) {
            r->line++; /* the checksum line came instead */
            return perr(r, "w: found %zu of %" PRIu64 " weights", j, f->d);
        }
        PT_TRY(parse_floats(r, line, 1, &m->w[j]));
    }
    return PT_OK;
}

static pt_status parse_multiclass(parser *r, const fields *f, pt_model **out)
{
    size_t K = (size_t)f->nclass, stride = pt_stride_for((size_t)f->d);
    /* K lines of d + 1 numbers of at least two bytes each: bound by the bytes left */
    uint64_t min_bytes;
    if (__builtin_mul_overflow((uint64_t)K, 2 * (f->d + 1), &min_bytes) ||
        min_bytes > (uint64_t)(r->end - r->p))
        return perr(r, "W: %zu classes of %" PRIu64 " weights cannot fit in the %zu bytes left", K,
                    f->d, (size_t)(r->end - r->p));
    pt_model *m = *out = pt_model_alloc_multiclass((size_t)f->d, K, f->labels);
    float *vals = malloc(((size_t)f->d + 1) * sizeof(float));
    if (!m || !vals) {
        free(vals);
        return m ? pt_fail(PT_ERR_NOMEM, "%s: cannot allocate a row", r->path) : PT_ERR_NOMEM;
    }
    pt_status s = PT_OK;
    for (size_t c = 0; c < K && s == PT_OK; c++) {
        char *line = next_line(r);
        if (!line) {
            r->line++;
            s = perr(r, "W: found %zu of %zu class rows", c, K);
            break;
        }
        s = parse_floats(r, line, (size_t)f->d + 1, vals);
        if (s != PT_OK) break;
        m->Bk[c] = vals[0];
        memcpy(m->W + c * stride, vals + 1, (size_t)f->d * sizeof(float));
    }
    free(vals);
    return s;
}

/* Sparse support vectors (version 3): n lines of a coefficient and INDEX:VALUE pairs. */
static pt_status parse_kernel_sparse(parser *r, const fields *f, size_t n, pt_model *m)
{
    size_t cap = 0, nnz = 0;
    m->sv_ptr = pt_alloc((n + 1) * sizeof *m->sv_ptr, "support vector offsets");
    m->coef = pt_alloc((n ? n : 1) * sizeof(float), "support vector coefficients");
    if (!m->sv_ptr || !m->coef) return PT_ERR_NOMEM;
    m->sv_ptr[0] = 0;
    for (size_t i = 0; i < n; i++) {
        char *line = next_line(r), *t;
        if (!line) {
            r->line++;
            return perr(r, "n_sv: found %zu of %zu support vectors", i, n);
        }
        if (!(t = token(&line))) return perr(r, "expected a coefficient");
        PT_TRY(parse_f32(r, "coefficient", t, &m->coef[i]));
        uint64_t last = 0;
        while ((t = token(&line))) {
            char *colon = strchr(t, ':');
            if (!colon) return perr(r, "'%s': expected INDEX:VALUE", t);
            *colon = '\0';
            uint64_t idx = 0;
            PT_TRY(parse_u64(r, "index", t, f->d < UINT32_MAX ? f->d : UINT32_MAX, &idx));
            if (idx <= last)
                return perr(r, "index %" PRIu64 ": indices start at 1 and increase", idx);
            last = idx;
            float v = 0.0f;
            PT_TRY(parse_f32(r, "value", colon + 1, &v));
            if (nnz == cap) {
                cap = cap ? 2 * cap : 1024;
                uint32_t *c = realloc(m->sv_col, cap * sizeof *c);
                if (c) m->sv_col = c;
                float *vv = c ? realloc(m->sv_val, cap * sizeof *vv) : NULL;
                if (vv) m->sv_val = vv;
                if (!c || !vv)
                    return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate support vectors", r->path);
            }
            m->sv_col[nnz] = (uint32_t)(idx - 1);
            m->sv_val[nnz++] = v;
        }
        m->sv_ptr[i + 1] = nnz;
    }
    if (!m->sv_col && (!(m->sv_col = malloc(sizeof *m->sv_col)) ||
                       !(m->sv_val = malloc(sizeof *m->sv_val))))
        return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate support vectors", r->path);
    return PT_OK;
}

/* Version 4's binary section: the line "binary BYTES" (BYTES must be expect), then the bytes
 * and a newline; *out points at them. */
static pt_status take_binary(parser *r, uint64_t expect, const unsigned char **out)
{
    char *line = next_line(r), *rest = line, *key = line ? token(&rest) : NULL, *t;
    if (!key || strcmp(key, "binary") != 0 || !(t = token(&rest)) || token(&rest)) {
        if (!line) r->line++;
        return perr(r, "expected 'binary BYTES', the binary section's size");
    }
    uint64_t bytes = 0;
    PT_TRY(parse_u64(r, "binary", t, UINT64_MAX, &bytes));
    if (bytes != expect)
        return perr(r, "binary: %" PRIu64 " bytes, where the counts above make %" PRIu64, bytes,
                    expect);
    if ((uint64_t)(r->end - r->p) <= bytes || r->p[bytes] != '\n')
        return perr(r, "binary: the section of %" PRIu64 " bytes and its newline do not fit in "
                    "the %zu bytes left", bytes, (size_t)(r->end - r->p));
    *out = (const unsigned char *)r->p;
    r->p += bytes + 1;
    r->line++; /* the section counts as a line in messages */
    return PT_OK;
}

/* count little-endian float32 values from src into dst; each must be finite. */
static pt_status binary_floats(const parser *r, const char *what, const unsigned char *src,
                               size_t count, float *dst)
{
    memcpy(dst, src, count * sizeof(float));
    to_le32(dst, count);
    for (size_t i = 0; i < count; i++)
        if (!isfinite(dst[i])) return perr(r, "binary: %s %zu is not a finite number", what, i);
    return PT_OK;
}

/* A kernel model of n dense support vectors, its rows zero padded (coef and sv allocated). */
static pt_model *kernel_model_alloc(const parser *r, size_t n, size_t d)
{
    pt_model *m = calloc(1, sizeof *m);
    if (!m) {
        pt_fail(PT_ERR_NOMEM, "%s: cannot allocate the model", r->path);
        return NULL;
    }
    m->n_sv = n;
    /* n rows (bounded by the file's bytes); no support vector: one float, whatever d says */
    m->sv = pt_alloc((n ? n * pt_stride_for(d) : 1) * sizeof(float), "support vectors");
    m->coef = pt_alloc((n ? n : 1) * sizeof(float), "support vector coefficients");
    if (!m->sv || !m->coef) {
        pt_model_free(m);
        return NULL;
    }
    return m;
}

/* One support vector from the section into its padded row. */
static pt_status binary_row(const parser *r, const unsigned char *src, size_t d, float *row)
{
    PT_TRY(binary_floats(r, "support vector value", src, d, row));
    memset(row + d, 0, (pt_stride_for(d) - d) * sizeof(float));
    return PT_OK;
}

/* Version 4: "n_sv N binary", then the section of the N x d values and N coefficients. */
static pt_status parse_kernel_binary(parser *r, const fields *f, uint64_t n_sv, pt_model **out)
{
    uint64_t bytes;
    if (__builtin_mul_overflow(n_sv, (f->d + 1) * 4, &bytes))
        return perr(r, "n_sv: %" PRIu64 " support vectors of %" PRIu64 " features overflow",
                    n_sv, f->d);
    const unsigned char *b;
    PT_TRY(take_binary(r, bytes, &b)); /* bounds n_sv and d by the file */
    const size_t n = (size_t)n_sv, d = (size_t)f->d, stride = pt_stride_for(d);
    pt_model *m = *out = kernel_model_alloc(r, n, d);
    if (!m) return PT_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) PT_TRY(binary_row(r, b + i * d * 4, d, m->sv + i * stride));
    return binary_floats(r, "coefficient", b + n * d * 4, n, m->coef);
}

/* Version 4, kernel one-vs-rest: "ovr_kernel shared N" (rest holds what follows "ovr_kernel"),
 * "class_sv" with each class's count, then the section: the N vectors, then each class's
 * indices and coefficients. Each class's model gets its own rows, in its own order. */
static pt_status parse_ovr_kernel_binary(parser *r, const fields *f, char *rest, pt_model *m)
{
    const size_t K = (size_t)f->nclass, d = (size_t)f->d, stride = pt_stride_for(d);
    char *t = token(&rest);
    uint64_t nset = 0, bytes, total = 0;
    if (!t || token(&rest)) return perr(r, "ovr_kernel shared: expected the number of vectors");
    PT_TRY(parse_u64(r, "ovr_kernel shared", t, UINT32_MAX, &nset));
    char *line = next_line(r), *key = line ? token(&line) : NULL;
    if (!key || strcmp(key, "class_sv") != 0) {
        if (!key) r->line++;
        return perr(r, "ovr_kernel shared: expected 'class_sv' and each class's count");
    }
    uint64_t *count = malloc(K * sizeof *count);
    if (!count) return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate the class counts", r->path);
    pt_status s = PT_OK;
    for (size_t c = 0; c < K && s == PT_OK; c++) {
        if (!(t = token(&line))) s = perr(r, "class_sv: expected %zu counts, found %zu", K, c);
        else s = parse_u64(r, "class_sv", t, UINT32_MAX, &count[c]);
        total += s == PT_OK ? count[c] : 0;
    }
    if (s == PT_OK && token(&line)) s = perr(r, "class_sv: expected %zu counts, found more", K);
    if (s == PT_OK && (__builtin_mul_overflow(nset, (uint64_t)d * 4, &bytes) ||
                       __builtin_add_overflow(bytes, total * 8, &bytes)))
        s = perr(r, "ovr_kernel shared: %" PRIu64 " vectors of %zu features overflow", nset, d);
    const unsigned char *b = NULL;
    if (s == PT_OK) s = take_binary(r, bytes, &b); /* bounds every count by the file */
    const unsigned char *at = b ? b + nset * d * 4 : NULL;
    for (size_t c = 0; c < K && s == PT_OK; c++) {
        const size_t n = (size_t)count[c];
        pt_model *sub = m->sub[c] = kernel_model_alloc(r, n, d);
        uint32_t *idx = malloc((n ? n : 1) * sizeof *idx);
        if (!sub || !idx) {
            free(idx);
            s = sub ? pt_fail(PT_ERR_NOMEM, "%s: cannot allocate indices", r->path) : PT_ERR_NOMEM;
            break;
        }
        memcpy(idx, at, n * 4);
        to_le32(idx, n);
        for (size_t i = 0; i < n && s == PT_OK; i++)
            s = idx[i] >= nset
                    ? perr(r, "binary: class %zu's vector %zu is %" PRIu32 ", past the set's %"
                           PRIu64, c, i, idx[i], nset)
                    : binary_row(r, b + (size_t)idx[i] * d * 4, d, sub->sv + i * stride);
        free(idx);
        if (s == PT_OK) s = binary_floats(r, "coefficient", at + n * 4, n, sub->coef);
        at += n * 8;
    }
    free(count);
    return s;
}

static pt_status parse_kernel(parser *r, const fields *f, char *rest, pt_model **out)
{
    char *t = token(&rest), *form = token(&rest);
    uint64_t n_sv = 0;
    if (!t || (form && strcmp(form, "sparse") != 0 && strcmp(form, "binary") != 0) ||
        token(&rest))
        return perr(r, "n_sv: expected a count, and 'sparse', 'binary' or nothing");
    bool binary = form && strcmp(form, "binary") == 0;
    if (form && r->version < (binary ? 4 : 3))
        return perr(r, "n_sv: %s support vectors need model format version %d (this file says "
                    "%d)", form, binary ? 4 : 3, r->version);
    PT_TRY(parse_u64(r, "n_sv", t, UINT64_MAX, &n_sv));
    if (binary) return parse_kernel_binary(r, f, n_sv, out);
    if (form) {
        /* each line at least two bytes */
        if (n_sv > (uint64_t)(r->end - r->p) / 2)
            return perr(r, "n_sv: %" PRIu64 " support vectors cannot fit in the %zu bytes left",
                        n_sv, (size_t)(r->end - r->p));
        pt_model *m = *out = calloc(1, sizeof *m);
        if (!m) return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate the model", r->path);
        m->n_sv = (size_t)n_sv;
        return parse_kernel_sparse(r, f, (size_t)n_sv, m);
    }
    /* Each line holds d + 1 numbers of at least two bytes each: bound n_sv by the bytes left. */
    uint64_t min_bytes, left = (uint64_t)(r->end - r->p);
    if (__builtin_mul_overflow(n_sv, 2 * (f->d + 1), &min_bytes) || min_bytes > left)
        return perr(r, "n_sv: %" PRIu64 " support vectors of %" PRIu64
                    " features cannot fit in the %" PRIu64 " bytes left",
                    n_sv, f->d, left);
    size_t stride = pt_stride_for((size_t)f->d), n = (size_t)n_sv;
    pt_model *m = *out = calloc(1, sizeof *m);
    if (!m) return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate the model", r->path);
    m->n_sv = n;
    m->sv = pt_calloc(n * stride * sizeof(float), "support vectors"); /* zero padding */
    m->coef = pt_alloc(n * sizeof(float), "support vector coefficients");
    /* the row buffer only when there are rows: with n_sv 0 nothing bounds d by the file */
    float *vals = n ? malloc(((size_t)f->d + 1) * sizeof(float)) : NULL;
    pt_status s = m->sv && m->coef && (vals || !n) ? PT_OK
                  : (vals || !n) ? PT_ERR_NOMEM
                         : pt_fail(PT_ERR_NOMEM, "%s: cannot allocate a row", r->path);
    for (size_t i = 0; i < n && s == PT_OK; i++) {
        char *line = next_line(r);
        if (!line) {
            r->line++;
            s = perr(r, "n_sv: found %zu of %zu support vectors", i, n);
            break;
        }
        s = parse_floats(r, line, (size_t)f->d + 1, vals);
        if (s != PT_OK) break;
        m->coef[i] = vals[0];
        memcpy(m->sv + i * stride, vals + 1, (size_t)f->d * sizeof(float));
    }
    free(vals);
    return s;
}

static pt_status parse_kernel(parser *r, const fields *f, char *rest, pt_model **out);

/* Kernel one-vs-rest: nclass blocks "n_sv N" + support vectors, one binary model each (or,
 * version 4, "ovr_kernel shared N": one set for all); rest holds what follows "ovr_kernel". */
static pt_status parse_ovr_kernel(parser *r, const fields *f, char *rest, pt_model **out)
{
    pt_model *m = *out = calloc(1, sizeof *m);
    if (!m || !(m->sub = calloc((size_t)f->nclass, sizeof *m->sub)) ||
        !(m->labels = malloc((size_t)f->nclass * sizeof(double))))
        return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate the model", r->path);
    m->nclass = (size_t)f->nclass;
    memcpy(m->labels, f->labels, m->nclass * sizeof(double));
    char *form = token(&rest);
    if (form && strcmp(form, "shared") != 0)
        return perr(r, "ovr_kernel: expected 'shared N' or nothing after it");
    if (form && r->version < 4)
        return perr(r, "ovr_kernel shared: needs model format version 4 (this file says %d)",
                    r->version);
    if (form) PT_TRY(parse_ovr_kernel_binary(r, f, rest, m));
    for (size_t c = 0; c < m->nclass; c++) {
        if (!form) {
            char *line = next_line(r), *key = line ? token(&line) : NULL;
            if (!key || strcmp(key, "n_sv") != 0)
                return perr(r, "ovr_kernel: expected 'n_sv' of class %zu", c);
            PT_TRY(parse_kernel(r, f, line, &m->sub[c]));
        }
        pt_model *s = m->sub[c];
        s->path = PT_PATH_KERNEL;
        s->variant = f->variant;
        s->bias = f->bias;
        s->d = (size_t)f->d;
        s->nclass = 2;
        s->class_values[0] = 0.0;
        s->class_values[1] = 1.0;
        s->params = f->p;
        s->params.path = PT_PATH_KERNEL;
        s->params.variant = f->variant;
        s->params.bias = f->bias;
    }
    return PT_OK;
}

/* The voted perceptron's vectors; line holds what follows "votes ". */
static pt_status parse_votes(parser *r, char *line, size_t d, pt_model *m)
{
    char *t = token(&line);
    uint64_t nv = 0;
    if (!t || token(&line)) return perr(r, "votes: expected one value");
    PT_TRY(parse_u64(r, "votes", t, UINT64_MAX, &nv));
    uint64_t min_bytes; /* d + 2 numbers of at least two bytes a line */
    if (__builtin_mul_overflow(nv, 2 * ((uint64_t)d + 2), &min_bytes) || min_bytes > (uint64_t)(r->end - r->p))
        return perr(r, "votes: %" PRIu64 " vectors cannot fit in the bytes left", nv);
    size_t stride = pt_stride_for(d), n = (size_t)nv;
    m->votes = pt_calloc((n ? n : 1) * stride * sizeof(float), "voted vectors");
    m->vote_b = pt_alloc((n ? n : 1) * sizeof(float), "voted vectors");
    m->vote_c = pt_alloc((n ? n : 1) * sizeof(float), "voted vectors");
    float *vals = malloc((d + 2) * sizeof(float));
    pt_status s = m->votes && m->vote_b && m->vote_c && vals ? PT_OK : PT_ERR_NOMEM;
    if (s == PT_OK) m->n_votes = n;
    for (size_t v = 0; v < n && s == PT_OK; v++) {
        char *l = next_line(r);
        if (!l) {
            r->line++;
            s = perr(r, "votes: found %zu of %zu vectors", v, n);
            break;
        }
        if ((s = parse_floats(r, l, d + 2, vals)) != PT_OK) break;
        if (!(vals[0] > 0.0f)) {
            s = perr(r, "votes: vector %zu survived %g samples: a count must be > 0", v + 1,
                     (double)vals[0]);
            break;
        }
        m->vote_c[v] = vals[0];
        m->vote_b[v] = vals[1];
        memcpy(m->votes + v * stride, vals + 2, d * sizeof(float));
    }
    free(vals);
    return s;
}

/* Voted one-vs-rest (after "ovr_votes"): each class's "votes" block, into a binary voted
 * model per class whose last vector is the class's row of W. */
static pt_status parse_ovr_votes(parser *r, const fields *f, pt_model *m)
{
    size_t K = m->nclass, stride = pt_stride_for(m->d);
    if (f->variant != PT_VARIANT_VOTED || f->multiclass != PT_MULTI_OVR)
        return perr(r, "ovr_votes: only a voted one-vs-rest model keeps votes (this one is %s, %s)",
                    pt_variant_name(f->variant), pt_multiclass_name(f->multiclass));
    if (!(m->sub = calloc(K, sizeof *m->sub)))
        return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate %zu class models", r->path, K);
    for (size_t c = 0; c < K; c++) {
        char *line = next_line(r);
        if (!line || strncmp(line, "votes ", 6) != 0) {
            if (!line) r->line++;
            return perr(r, "ovr_votes: expected 'votes' of class %zu of %zu", c + 1, K);
        }
        pt_model *mc = m->sub[c] = pt_model_alloc_linear(m->d);
        if (!mc) return PT_ERR_NOMEM;
        PT_TRY(parse_votes(r, line + 6, m->d, mc));
        memcpy(mc->w, m->W + c * stride, stride * sizeof(float));
        mc->b = m->Bk[c];
        mc->path = f->path;
        mc->variant = f->variant;
        mc->bias = f->bias;
        mc->multiclass = f->multiclass;
        mc->nclass = 2;
        mc->class_values[0] = 0.0;
        mc->class_values[1] = 1.0;
        mc->params = f->p;
        mc->params.path = f->path;
        mc->params.variant = f->variant;
        mc->params.bias = f->bias;
    }
    return PT_OK;
}

/* ------------------------------------------------------------------- run states */

/* The next line of a run-state block, which must start with key; *rest is what follows. */
static pt_status state_line(parser *r, const char *key, char **rest)
{
    char *l = next_line(r), *k = l ? token(&l) : NULL;
    if (!l) r->line++; /* the checksum line came instead */
    if (!k || strcmp(k, key) != 0) return perr(r, "expected '%s' (where the run stands)", key);
    *rest = l;
    return PT_OK;
}

/* Exactly nb vectors of d floats from the line into v (each of stride floats). */
static pt_status parse_vectors(const parser *r, const char *key, char *line, size_t nb, size_t d,
                               float *v)
{
    for (size_t c = 0; c < nb; c++)
        for (size_t j = 0; j < d; j++) {
            char *t = token(&line);
            if (!t) return perr(r, "%s: expected %zu values, found %zu", key, nb * d, c * d + j);
            PT_TRY(parse_f32(r, key, t, &v[c * pt_stride_for(d) + j]));
        }
    if (token(&line)) return perr(r, "%s: expected %zu values, found more", key, nb * d);
    return PT_OK;
}

/* a * b + c, or UINT64_MAX if it overflows. */
static uint64_t mul_add_sat(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t x;
    if (__builtin_mul_overflow(a, b, &x) || __builtin_add_overflow(x, c, &x)) return UINT64_MAX;
    return x;
}

/* The history line: the mistakes of the last epochs (at most keep in a version 2 file; a version
 * 1 file lists every epoch and only the last PT_STATE_HISTORY are kept), each at most n. */
static pt_status parse_history(parser *r, pt_train_state *st, int expect, uint64_t *sum)
{
    char *h;
    PT_TRY(state_line(r, "history", &h));
    int count = 0;
    *sum = 0;
    for (char *t; (t = token(&h)) != NULL; count++) {
        if (count == expect) return perr(r, "history: expected %d values, found more", expect);
        uint64_t x = 0;
        PT_TRY(parse_u64(r, "history", t, st->n, &x));
        if (count >= expect - PT_STATE_HISTORY) st->hist[st->nhist++] = (size_t)x;
        *sum = *sum + x < *sum ? UINT64_MAX : *sum + x;
    }
    if (count != expect) return perr(r, "history: expected %d values, found %d", expect, count);
    return PT_OK;
}

/* The counters every block checks the same way: position, mistakes, updates, steps. */
static pt_status check_counters(const parser *r, const pt_train_state *st, const state_shape *sh,
                                const fields *f, size_t blocks_per_epoch)
{
    if (st->epochs_done > f->epochs_run)
        return perr(r, "resume: %d epochs done, but the model ran %d", st->epochs_done,
                    f->epochs_run);
    if (st->epochs_done > f->p.epochs)
        return perr(r, "resume: %d epochs done, more than its epochs %d", st->epochs_done,
                    f->p.epochs);
    if (st->pos > blocks_per_epoch)
        return perr(r, "resume: position %zu beyond the %zu %s of an epoch", st->pos,
                    blocks_per_epoch, sh->kind == ST_BATCH ? "blocks" : "samples");
    if (st->finished && st->pos)
        return perr(r, "resume: a finished run stands at the start of an epoch (position %zu)",
                    st->pos);
    if (st->epoch_mistakes > (sh->kind == ST_BATCH ? st->n : st->pos))
        return perr(r, "resume: %zu mistakes in %zu %s", st->epoch_mistakes, st->pos,
                    sh->kind == ST_BATCH ? "blocks" : "samples");
    uint64_t visits = mul_add_sat((uint64_t)st->epochs_done, st->n, st->pos);
    if (sh->kind == ST_BATCH) {
        uint64_t steps = mul_add_sat((uint64_t)st->epochs_done, blocks_per_epoch, st->pos);
        if (st->steps != floor(st->steps) || st->steps < 0 || st->steps > (double)steps ||
            (double)st->updates != st->steps)
            return perr(r, "resume: %zu updates and %.17g steps for %d epochs and %zu blocks of "
                        "%zu", st->updates, st->steps, st->epochs_done, st->pos, blocks_per_epoch);
        return PT_OK;
    }
    /* every sample counts towards the average (the voted survival, the kernel path's average) */
    bool counted = sh->kind == ST_KERNEL || sh->sums || sh->voted || sh->nb > 1;
    if (counted && (double)visits != st->steps)
        return perr(r, "resume: %.17g samples visited, but %d epochs and %zu samples make %" PRIu64,
                    st->steps, st->epochs_done, st->pos, visits);
    if (st->updates > visits)
        return perr(r, "resume: %zu updates in %" PRIu64 " samples", st->updates, visits);
    return PT_OK;
}

/* A version 1 block, the online path's only: line holds what follows "resume ". */
static pt_status parse_state_v1(parser *r, char *line, const fields *f, const state_shape *sh,
                                pt_train_state **out)
{
    uint64_t v[5];
    const char *names[5] = {"rows", "epochs done", "sample", "epoch mistakes", "updates"};
    for (int i = 0; i < 5; i++) {
        char *t = token(&line);
        if (!t) return perr(r, "resume: expected 8 values");
        uint64_t max = i == 0 ? SIZE_MAX / 16 : i == 1 ? INT32_MAX : SIZE_MAX;
        PT_TRY(parse_u64(r, names[i], t, max, &v[i]));
    }
    char *ts = token(&line), *tb = ts ? token(&line) : NULL, *tub = tb ? token(&line) : NULL;
    if (!tub || token(&line)) return perr(r, "resume: expected 8 values");
    if (sh->kind != ST_ONLINE || sh->nb != 1 || sh->blocks != 1 || sh->voted)
        return perr(r, "resume: a version 1 run state is the binary online path's (classic or "
                    "averaged)");
    if (v[0] < 2) return perr(r, "resume: %" PRIu64 " rows", v[0]);
    size_t len = pt_stride_for(sh->d);
    unsigned parts = PT_STATE_LINEAR | (sh->sums ? PT_STATE_SUMS : 0);
    pt_train_state *st = *out = pt_train_state_new((size_t)v[0], len, 1, parts);
    if (!st) return PT_ERR_NOMEM;
    PT_TRY(parse_f64(r, "steps", ts, &st->steps));
    PT_TRY(parse_f32(r, "b", tb, &st->b[0]));
    if (sh->sums) PT_TRY(parse_f32(r, "ub", tub, &st->ub[0]));
    st->epochs_done = (int)v[1];
    st->pos = (size_t)v[2];
    st->epoch_mistakes = (size_t)v[3];
    st->updates = (size_t)v[4];
    PT_TRY(check_counters(r, st, sh, f, st->n));
    uint64_t sum;
    PT_TRY(parse_history(r, st, st->epochs_done, &sum));
    if (sum + st->epoch_mistakes != st->updates)
        return perr(r, "history: %" PRIu64 " mistakes in all, but %zu updates",
                    sum + st->epoch_mistakes, st->updates);
    st->finished = st->pos == 0 && st->nhist > 0 && st->hist[st->nhist - 1] == 0;
    char *l;
    PT_TRY(state_line(r, "live_w", &l));
    PT_TRY(parse_vectors(r, "live_w", l, 1, sh->d, st->w));
    if (sh->sums) {
        PT_TRY(state_line(r, "live_u", &l));
        PT_TRY(parse_vectors(r, "live_u", l, 1, sh->d, st->u));
    }
    return PT_OK;
}

/* The kernel path's alpha line: each sample's updates. Every update adds one to an alpha, so
 * they sum to the updates, until a support vector budget removes one (kernel_budget.c): a
 * removal makes room for a new support vector, so from the first one on the run holds exactly
 * budget support vectors, and its alphas sum to fewer than its updates. */
static pt_status parse_alpha(parser *r, pt_train_state *st, size_t budget)
{
    char *l;
    PT_TRY(state_line(r, "alpha", &l));
    const size_t n = st->n;
    uint64_t total = 0, nsv = 0;
    for (size_t i = 0; i < n; i++) {
        char *t = token(&l);
        uint64_t a = 0;
        if (!t) return perr(r, "alpha: expected %zu values, found %zu", n, i);
        PT_TRY(parse_u64(r, "alpha", t, (uint64_t)st->epochs_done + 1, &a));
        st->alpha[i] = (uint32_t)a;
        total += a;
        nsv += a != 0;
    }
    if (token(&l)) return perr(r, "alpha: expected %zu values, found more", n);
    if (budget && nsv > budget)
        return perr(r, "alpha: %" PRIu64 " support vectors, over the budget of %zu", nsv, budget);
    if (total == st->updates) return PT_OK;
    if (!budget || total > st->updates)
        return perr(r, "alpha: %" PRIu64 " updates in all, not %zu", total, st->updates);
    if (nsv != budget)
        return perr(r, "alpha: %" PRIu64 " of %zu updates kept, but only %" PRIu64 " support "
                    "vectors: the budget removes one only when all %zu are held", total,
                    st->updates, nsv, budget);
    return PT_OK;
}

/* A version 2 block (see print_state): line holds what follows "resume ". */
static pt_status parse_state_v2(parser *r, char *line, const fields *f, const state_shape *sh,
                                pt_train_state **out)
{
    uint64_t v[5];
    const char *names[5] = {"rows", "epochs done", "position", "epoch mistakes", "updates"};
    for (int i = 0; i < 5; i++) {
        char *t = token(&line);
        if (!t) return perr(r, "resume: expected 7 values");
        uint64_t max = i == 0 ? SIZE_MAX / 16 : i == 1 ? INT32_MAX : SIZE_MAX;
        PT_TRY(parse_u64(r, names[i], t, max, &v[i]));
    }
    char *ts = token(&line), *tf = ts ? token(&line) : NULL;
    if (!tf || token(&line)) return perr(r, "resume: expected 7 values");
    if (v[0] < 2) return perr(r, "resume: %" PRIu64 " rows", v[0]);
    size_t n = (size_t)v[0];
    /* the kernel path's three lines of n numbers (at least two bytes each) must fit */
    if (sh->kind == ST_KERNEL && v[0] > (uint64_t)(r->end - r->p) / 4)
        return perr(r, "resume: %zu rows of dual coefficients cannot fit in the bytes left", n);
    unsigned parts = sh->kind == ST_KERNEL ? PT_STATE_DUAL | (sh->dual_avg ? PT_STATE_DUAL_AVG : 0)
                                           : PT_STATE_LINEAR | (sh->sums ? PT_STATE_SUMS : 0);
    size_t len = sh->nb * pt_stride_for(sh->d);
    pt_train_state *st = *out = pt_train_state_new(n, len, sh->nb, parts);
    if (!st) return PT_ERR_NOMEM;
    int fin = 0;
    PT_TRY(parse_f64(r, "steps", ts, &st->steps));
    PT_TRY(parse_int(r, "finished", tf, 1, &fin));
    st->finished = fin != 0;
    st->epochs_done = (int)v[1];
    st->pos = (size_t)v[2];
    st->epoch_mistakes = (size_t)v[3];
    st->updates = (size_t)v[4];
    size_t B = f->p.batch.size == 0 || f->p.batch.size >= n ? n : f->p.batch.size;
    PT_TRY(check_counters(r, st, sh, f, sh->kind == ST_BATCH ? (n + B - 1) / B : n));
    uint64_t sum;
    int keep = st->epochs_done < PT_STATE_HISTORY ? st->epochs_done : PT_STATE_HISTORY;
    PT_TRY(parse_history(r, st, keep, &sum));
    if (sh->kind != ST_BATCH) {
        /* each update is a mistake: all of them when every epoch is listed */
        uint64_t all = sum + st->epoch_mistakes;
        if (keep == st->epochs_done ? all != st->updates : all > st->updates)
            return perr(r, "history: %" PRIu64 " mistakes%s, but %zu updates", all,
                        keep == st->epochs_done ? " in all" : " in the last epochs", st->updates);
    }
    if (st->finished && keep == 0) return perr(r, "resume: finished before its first epoch");
    char *l;
    if (sh->kind == ST_KERNEL) {
        PT_TRY(parse_alpha(r, st, f->p.kernel.budget));
        if (sh->dual_avg) {
            PT_TRY(state_line(r, "beta", &l));
            for (size_t i = 0; i < n; i++) {
                char *t = token(&l);
                if (!t) return perr(r, "beta: expected %zu values, found %zu", n, i);
                PT_TRY(parse_f64(r, "beta", t, &st->beta[i]));
                if (st->beta[i] < 0 || st->beta[i] > st->steps * st->alpha[i])
                    return perr(r, "beta: %.17g is not a sum of %" PRIu32 " sample counts up to "
                                "%.17g", st->beta[i], st->alpha[i], st->steps);
            }
            if (token(&l)) return perr(r, "beta: expected %zu values, found more", n);
        }
        PT_TRY(state_line(r, "margins", &l));
        for (size_t i = 0; i < n; i++) {
            char *t = token(&l);
            if (!t) return perr(r, "margins: expected %zu values, found %zu", n, i);
            PT_TRY(parse_f32(r, "margins", t, &st->f[i]));
        }
        if (token(&l)) return perr(r, "margins: expected %zu values, found more", n);
        return PT_OK;
    }
    PT_TRY(state_line(r, "live_w", &l));
    PT_TRY(parse_vectors(r, "live_w", l, sh->nb, sh->d, st->w));
    PT_TRY(state_line(r, "live_b", &l));
    PT_TRY(parse_vectors(r, "live_b", l, 1, sh->nb, st->b));
    if (sh->sums) {
        PT_TRY(state_line(r, "live_u", &l));
        PT_TRY(parse_vectors(r, "live_u", l, sh->nb, sh->d, st->u));
        PT_TRY(state_line(r, "live_ub", &l));
        if (sh->kind == ST_BATCH) {
            char *t = token(&l);
            if (!t || token(&l)) return perr(r, "live_ub: expected one value");
            PT_TRY(parse_f64(r, "live_ub", t, &st->avg_b));
        } else {
            PT_TRY(parse_vectors(r, "live_ub", l, 1, sh->nb, st->ub));
        }
    }
    if (sh->voted) {
        PT_TRY(state_line(r, "survived", &l));
        char *t = token(&l);
        if (!t || token(&l)) return perr(r, "survived: expected one value");
        PT_TRY(parse_f32(r, "survived", t, &st->survived));
        if (st->survived < 0 || st->survived != floorf(st->survived) || st->survived > st->steps)
            return perr(r, "survived: %g is not a count of samples up to %.17g",
                        (double)st->survived, st->steps);
    }
    if (sh->kind == ST_BATCH) {
        PT_TRY(state_line(r, "objective", &l));
        char *t1 = token(&l), *t2 = t1 ? token(&l) : NULL;
        if (!t2 || token(&l)) return perr(r, "objective: expected two values");
        PT_TRY(parse_f64(r, "objective", t1, &st->objective));
        PT_TRY(parse_f64(r, "objective", t2, &st->epoch_objective));
        if (st->objective < 0 || st->epoch_objective < 0)
            return perr(r, "objective: a sum of losses is not negative");
    }
    return PT_OK;
}

/* The run-state blocks after the weights: one, or one per class of one-vs-rest; line holds
 * what follows the first "resume ". */
static pt_status parse_states(parser *r, char *line, const fields *f, pt_model *m)
{
    state_shape sh = shape_of(f->path, f->variant, f->multiclass, (size_t)f->nclass,
                              f->p.batch.average_iterates, (size_t)f->d);
    if (!(m->states = calloc(sh.blocks, sizeof *m->states)))
        return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate %zu training states", r->path, sh.blocks);
    m->nstates = sh.blocks;
    for (size_t k = 0; k < sh.blocks; k++) {
        if (k > 0) {
            char *l = next_line(r);
            if (!l || strncmp(l, "resume ", 7) != 0) {
                if (!l) r->line++;
                return perr(r, "expected 'resume' of class %zu (one per class)", k);
            }
            line = l + 7;
        }
        PT_TRY(r->version == 1 ? parse_state_v1(r, line, f, &sh, &m->states[k])
                               : parse_state_v2(r, line, f, &sh, &m->states[k]));
        if (k > 0 && m->states[k]->n != m->states[0]->n)
            return perr(r, "resume: class %zu ran on %zu rows, class 0 on %zu", k,
                        m->states[k]->n, m->states[0]->n);
    }
    return PT_OK;
}

/* Header lines, then the weights; on success *out is the model. */
/* The optional line "expand KIND degree D coef0 C rff_dim N gamma G seed S d_in K". */
static pt_status parse_expand(const parser *r, char *line, fields *f)
{
    static const char *const names[] = {"degree", "coef0", "rff_dim", "gamma", "seed", "d_in"};
    pt_expand_params *e = &f->p.expand;
    pt_expand_params_init(e);
    const char *kind = token(&line);
    if (!kind || (strcmp(kind, "poly") != 0 && strcmp(kind, "rff") != 0))
        return perr(r, "expand: kind must be poly or rff (got '%s')", kind ? kind : "");
    uint64_t u = 0;
    for (int i = 0; i < 6; i++) {
        const char *name = token(&line), *v = name ? token(&line) : NULL;
        if (!name || strcmp(name, names[i]) != 0 || !v)
            return perr(r, "expand: expected '%s VALUE' as item %d", names[i], i + 1);
        switch (i) {
        case 0: PT_TRY(parse_int(r, "expand degree", v, 32, &e->degree)); break;
        case 1: PT_TRY(parse_f32(r, "expand coef0", v, &e->coef0)); break;
        case 2: PT_TRY(parse_u64(r, "expand rff_dim", v, SIZE_MAX / 16, &u)); e->rff_dim = (size_t)u; break;
        case 3: PT_TRY(parse_f32(r, "expand gamma", v, &e->gamma)); break;
        case 4: PT_TRY(parse_u64(r, "expand seed", v, UINT64_MAX, &e->seed)); break;
        case 5: PT_TRY(parse_u64(r, "expand d_in", v, SIZE_MAX / 16, &f->expand_d_in)); break;
        }
    }
    const char *hb = token(&line), *hv = hb ? token(&line) : NULL;
    if (hb && (strcmp(hb, "hash_bits") != 0 || !hv || r->version < 3))
        return perr(r, "expand: unexpected value after d_in%s",
                    hb && !strcmp(hb, "hash_bits") && r->version < 3
                        ? " (hash_bits needs model format version 3)" : "");
    if (hb) PT_TRY(parse_int(r, "expand hash_bits", hv, 31, &e->hash_bits));
    if (token(&line)) return perr(r, "expand: unexpected value after hash_bits");
    e->kind = strcmp(kind, "poly") == 0 ? PT_EXPAND_POLY : PT_EXPAND_RFF;
    if (pt_expand_check_params(e) != PT_OK) return perr(r, "expand: %s", pt_last_error());
    return PT_OK;
}

static pt_status parse_fields(parser *r, fields *f, pt_model **out);

/* The optional line "scale KIND D_IN OFFSET FACTOR ..." (version 3). */
static pt_status parse_scale(const parser *r, char *line, fields *f)
{
    if (r->version < 3) return perr(r, "scale: a version 3 key in a version %d file", r->version);
    char *kind = token(&line), *dt = kind ? token(&line) : NULL;
    pt_scale_kind k;
    if (!kind || pt_scale_kind_parse(kind, &k) != PT_OK || k == PT_SCALE_NONE)
        return perr(r, "scale: kind must be -1,1, 0,1 or standardize (got '%s')",
                    kind ? kind : "");
    uint64_t d = 0;
    if (!dt) return perr(r, "scale: expected the features after the kind");
    PT_TRY(parse_u64(r, "scale d_in", dt, MAX_MODEL_D, &d));
    double *off = malloc((d ? d : 1) * sizeof *off), *fac = malloc((d ? d : 1) * sizeof *fac);
    pt_status s = off && fac ? PT_OK : pt_fail(PT_ERR_NOMEM, "%s: cannot allocate a scaling",
                                               r->path);
    for (size_t j = 0; s == PT_OK && j < 2 * d; j++) {
        char *t = token(&line);
        if (!t) s = perr(r, "scale: expected %" PRIu64 " values, found %zu", 2 * d, j);
        else s = parse_f64(r, "scale value", t, j % 2 ? &fac[j / 2] : &off[j / 2]);
    }
    if (s == PT_OK && token(&line)) s = perr(r, "scale: expected %" PRIu64 " values, found more",
                                             2 * d);
    if (s == PT_OK && pt_scaling_make(k, (size_t)d, off, fac, &f->scale) != PT_OK)
        s = perr(r, "scale: %s", pt_last_error());
    if (s == PT_OK) f->p.scale = k;
    free(off);
    free(fac);
    return s;
}

/* "names": nclass percent-encoded class names (after "nclass"). */
static pt_status parse_names(const parser *r, char *line, fields *f)
{
    if (!f->nclass) return perr(r, "names: 'nclass' must come first");
    if (f->names) return perr(r, "key 'names' given twice");
    if (!(f->names = calloc((size_t)f->nclass, sizeof *f->names)))
        return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate %" PRIu64 " names", r->path, f->nclass);
    for (uint64_t c = 0; c < f->nclass; c++) {
        char *t = token(&line);
        if (!t) return perr(r, "names: expected %" PRIu64 " names, found %" PRIu64, f->nclass, c);
        char *out = f->names[c] = malloc(strlen(t) + 1);
        if (!out) return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate a name", r->path);
        for (const char *q = t; *q; q++) {
            unsigned v;
            if (*q == '%') {
                if (!q[1] || !q[2] || sscanf(q + 1, "%2x", &v) != 1 || v == 0)
                    return perr(r, "names: bad escape in '%s'", t);
                *out++ = (char)v;
                q += 2;
            } else {
                *out++ = *q;
            }
        }
        *out = '\0';
        if (c && strcmp(f->names[c - 1], f->names[c]) >= 0) return perr(r, "names: not in order");
    }
    if (token(&line)) return perr(r, "names: expected %" PRIu64 " names, found more", f->nclass);
    return PT_OK;
}

/* What the header says against itself and against the weights that follow (key: 'w', 'W',
 * 'n_sv' or 'ovr_kernel'), before they are read: each range and agreement training itself
 * ensures, reported on the line of the field that breaks it. */
static pt_status check_header(const parser *r, const fields *f, const char *key)
{
    const pt_train_params *p = &f->p;
    bool kernel_body = strcmp(key, "n_sv") == 0 || strcmp(key, "ovr_kernel") == 0;
    if (kernel_body != (f->path == PT_PATH_KERNEL))
        return perr_at(r, f->at[K_PATH], "path %s: %s %s model holds %s, not '%s'",
                       pt_path_name(f->path), f->path == PT_PATH_ONLINE ? "an" : "a",
                       pt_path_name(f->path),
                       f->path == PT_PATH_KERNEL ? "support vectors ('n_sv' or 'ovr_kernel')"
                                                 : "weights ('w' or 'W')", key);
    if (f->path == PT_PATH_KERNEL && f->variant == PT_VARIANT_VOTED)
        return perr_at(r, f->at[K_VARIANT], "variant voted: the kernel path has no voted variant");
    if (f->multiclass == PT_MULTI_DIRECT && f->nclass > 2 && f->path != PT_PATH_ONLINE)
        return perr_at(r, f->at[K_MULTICLASS], "multiclass direct: the multiclass perceptron "
                       "runs on the online path, not %s", pt_path_name(f->path));
    if (f->multiclass == PT_MULTI_DIRECT && f->nclass > 2 && f->variant == PT_VARIANT_VOTED)
        return perr_at(r, f->at[K_VARIANT], "variant voted: the multiclass perceptron "
                       "(multiclass direct) has no voted variant");
    if (f->epochs_run > p->epochs)
        return perr_at(r, f->at[K_EPOCHS_RUN], "epochs_run %d: more than the %d epochs of the run",
                       f->epochs_run, p->epochs);
    if (p->batch.schedule == PT_SCHEDULE_PEGASOS && !(p->batch.lambda > 0.0f))
        return perr_at(r, f->at[K_SCHEDULE], "schedule pegasos: steps 1/(lambda t) need lambda > 0");
    if ((p->kernel.kind == PT_KERNEL_EXPR) != (p->kernel.expr[0] != 0))
        return perr_at(r, f->at[K_KERNEL], "kernel %s: %s", pt_kernel_name(p->kernel.kind),
                       p->kernel.expr[0] ? "a 'kernel_expr' line belongs to kernel expr"
                                         : "kernel expr needs its 'kernel_expr' line");
    if (f->path == PT_PATH_KERNEL && p->kernel.kind != PT_KERNEL_LINEAR &&
        (p->kernel.gamma == PT_GAMMA_SCALE || p->kernel.gamma == PT_GAMMA_AUTO))
        return perr_at(r, f->at[K_GAMMA], "gamma %s: a kernel model records the number its run "
                       "used", p->kernel.gamma == PT_GAMMA_SCALE ? "scale" : "auto");
    if (f->path == PT_PATH_KERNEL && p->kernel.kind == PT_KERNEL_POLY && p->kernel.coef0 < 0.0f)
        return perr_at(r, f->at[K_COEF0], "coef0 %g: (gamma x.z + c)^k is a kernel only for c >= 0",
                       (double)p->kernel.coef0);
    for (uint64_t c = 0; f->names && c < f->nclass; c++)
        if (f->labels[c] != (double)c)
            return perr_at(r, f->at_names, "names: a model of text labels has labels 0..%" PRIu64,
                           f->nclass - 1);
    /* anything else training refuses (a field the checks above do not know yet). Earlier
     * versions wrote the batch path's plain iterate under the averaged or voted variant it
     * ignored: such files load as the plain model they hold. */
    pt_train_params q = *p;
    q.path = f->path;
    q.variant = f->path == PT_PATH_BATCH ? PT_VARIANT_CLASSIC : f->variant;
    q.bias = f->bias;
    q.multiclass = f->multiclass;
    if (pt_train_params_check(&q) != PT_OK)
        return perr(r, "the parameters above cannot have trained a model: %s", pt_last_error());
    return PT_OK;
}

/* The voted perceptron's vectors against the variant: a model of the online path's voted
 * variant keeps them ('votes' after w, or 'ovr_votes' after W for one-vs-rest) once a vector
 * has survived a sample (a run stopped in its first epoch may have none yet); no other model
 * has any. */
static pt_status check_votes(const parser *r, const fields *f, const pt_model *m)
{
    bool voted = f->variant == PT_VARIANT_VOTED, online = f->path == PT_PATH_ONLINE;
    bool has_votes = m->n_votes || (m->W && m->sub);
    if (has_votes && !(voted && online))
        return perr_at(r, f->at_votes, "%s: only the voted variant of the online path keeps "
                       "vectors (this model: %s path, %s)", m->W ? "ovr_votes" : "votes",
                       pt_path_name(f->path), pt_variant_name(f->variant));
    if (!has_votes && voted && online && f->epochs_run > 0)
        return perr_at(r, f->at[K_VARIANT], "variant voted: the file holds no voted vectors "
                       "('%s' after the weights) for a run of %d epochs",
                       m->W ? "ovr_votes" : "votes", f->epochs_run);
    const size_t cap = f->p.online.voted_max_vectors;
    for (size_t c = 0; cap && c < (m->W && m->sub ? m->nclass : 1); c++) {
        size_t nv = m->W && m->sub ? m->sub[c]->n_votes : m->n_votes;
        if (nv > cap)
            return perr_at(r, f->at_votes, "votes: %zu vectors%s, over the cap of "
                           "voted_max_vectors %zu", nv, m->W ? " for a class" : "", cap);
    }
    return PT_OK;
}

static pt_status parse_body(parser *r, pt_model **out)
{
    fields f;
    memset(&f, 0, sizeof f);
    pt_status s = parse_fields(r, &f, out);
    free(f.labels);
    pt_names_free(f.names, (size_t)f.nclass);
    pt_scaling_free(f.scale);
    return s;
}

static pt_status parse_fields(parser *r, fields *fp, pt_model **out)
{
#define f (*fp)
    pt_train_params_init(&f.p);
    bool seen[NKEYS] = {false};
    pt_model *m = NULL;
    pt_status s = PT_OK;
    char *line;
    for (;;) {
        if (!(line = next_line(r))) {
            r->line++; /* the checksum line */
            return perr(r, "no weights ('w' or 'n_sv') before the checksum");
        }
        char *rest = line, *key = token(&rest);
        if (!key) return perr(r, "empty line");
        bool linear = strcmp(key, "w") == 0, kernel = strcmp(key, "n_sv") == 0,
             multi = strcmp(key, "W") == 0, ovr_kernel = strcmp(key, "ovr_kernel") == 0;
        if (linear || kernel || multi || ovr_kernel) {
            for (int k = 0; k < NKEYS; k++)
                if (!seen[k]) return perr(r, "missing key '%s' before the weights", key_name[k]);
            PT_TRY(check_header(r, &f, key));
        }
        if (ovr_kernel) {
            if (f.nclass < 3) return perr(r, "ovr_kernel: a model of %" PRIu64 " classes", f.nclass);
            s = parse_ovr_kernel(r, &f, rest, &m);
            break;
        }
        if (linear || kernel || multi) {
            if ((linear || multi) && token(&rest)) return perr(r, "%s: expected nothing after it", key);
            if (multi != (f.nclass > 2))
                return perr(r, "%s: a model of %" PRIu64 " classes keeps its weights in %s", key,
                            f.nclass, f.nclass > 2 ? "'W'" : "'w' or 'n_sv'");
            s = linear ? parse_linear(r, &f, &m)
                : multi ? parse_multiclass(r, &f, &m)
                        : parse_kernel(r, &f, rest, &m);
            break;
        }
        if (strcmp(key, "platt") == 0) {
            if (r->version < 3) return perr(r, "platt: a version 3 key in a version %d file",
                                            r->version);
            if (f.has_platt) return perr(r, "key 'platt' given twice");
            char *a = token(&rest), *b = a ? token(&rest) : NULL;
            if (!b || token(&rest)) return perr(r, "platt: expected A and B");
            PT_TRY(parse_f64(r, "platt A", a, &f.platt[0]));
            PT_TRY(parse_f64(r, "platt B", b, &f.platt[1]));
            f.has_platt = 1;
            f.at_platt = r->line;
            continue;
        }
        if (strcmp(key, "scale") == 0) {
            if (f.scale) return perr(r, "key 'scale' given twice");
            PT_TRY(parse_scale(r, rest, &f));
            continue;
        }
        if (strcmp(key, "expand") == 0) {
            if (f.p.expand.kind != PT_EXPAND_NONE) return perr(r, "key 'expand' given twice");
            PT_TRY(parse_expand(r, rest, &f));
            continue;
        }
        if (strcmp(key, "kernel_expr") == 0) { /* optional (kernel expr) */
            char *t = token(&rest);
            pt_kexpr e;
            if (f.p.kernel.expr[0]) return perr(r, "key 'kernel_expr' given twice");
            if (!t || token(&rest) || strlen(t) >= sizeof f.p.kernel.expr)
                return perr(r, "kernel_expr: expected one expression of at most %zu bytes",
                            sizeof f.p.kernel.expr - 1);
            if (pt_kexpr_parse(t, &e) != PT_OK) return perr(r, "%s", pt_last_error());
            if (pt_kexpr_has_rule(&e))
                return perr(r, "kernel_expr %s: a model records the gamma numbers its run used", t);
            memcpy(f.p.kernel.expr, t, strlen(t) + 1);
            continue;
        }
        if (strcmp(key, "budget") == 0) { /* optional (a kernel run's support vector budget) */
            uint64_t u = 0;
            char *t = token(&rest);
            if (f.p.kernel.budget) return perr(r, "key 'budget' given twice");
            if (!t || token(&rest)) return perr(r, "budget: expected one value");
            PT_TRY(parse_u64(r, key, t, SIZE_MAX, &u));
            if (u == 0) return perr(r, "budget: 0 is written as no 'budget' line");
            f.p.kernel.budget = (size_t)u;
            continue;
        }
        if (strcmp(key, "voted_max_vectors") == 0) { /* optional (a voted run's cap) */
            uint64_t u = 0;
            char *t = token(&rest);
            if (f.p.online.voted_max_vectors) return perr(r, "key 'voted_max_vectors' given twice");
            if (!t || token(&rest)) return perr(r, "voted_max_vectors: expected one value");
            PT_TRY(parse_u64(r, key, t, SIZE_MAX, &u));
            if (u == 0) return perr(r, "voted_max_vectors: 0 is written as no such line");
            f.p.online.voted_max_vectors = (size_t)u;
            continue;
        }
        if (strcmp(key, "names") == 0) {
            f.at_names = r->line;
            PT_TRY(parse_names(r, rest, &f));
            continue;
        }
        int k = 0;
        while (k < NKEYS && strcmp(key, key_name[k]) != 0) k++;
        if (k == NKEYS) return perr(r, "unknown key '%s'", key);
        if (seen[k]) return perr(r, "key '%s' given twice", key);
        seen[k] = true;
        f.at[k] = r->line;
        PT_TRY(parse_key(r, (enum key)k, rest, &f));
    }
    char *extra = s == PT_OK ? next_line(r) : NULL;
    if (extra && m->w && strncmp(extra, "votes ", 6) == 0) {
        f.at_votes = r->line;
        s = parse_votes(r, extra + 6, (size_t)f.d, m);
        extra = s == PT_OK ? next_line(r) : NULL;
    }
    if (extra && m->W && strcmp(extra, "ovr_votes") == 0) {
        f.at_votes = r->line;
        s = parse_ovr_votes(r, &f, m);
        extra = s == PT_OK ? next_line(r) : NULL;
    }
    if (extra && strncmp(extra, "resume ", 7) == 0) {
        s = parse_states(r, extra + 7, &f, m);
        extra = s == PT_OK ? next_line(r) : NULL;
    }
    if (extra) s = perr(r, "unexpected line after the weights");
    if (s == PT_OK && f.p.expand.kind != PT_EXPAND_NONE) {
        size_t dim = pt_expand_dim(&f.p.expand, (size_t)f.expand_d_in);
        if (!m->w || f.nclass != 2)
            s = perr(r, "expand: only two-class linear models are trained on an expansion");
        else if (dim != f.d)
            s = perr(r, "expand: it gives %zu features from d_in %" PRIu64 ", but d is %" PRIu64,
                     dim, f.expand_d_in, f.d);
    }
    if (s == PT_OK && f.scale) {
        uint64_t d_in = f.p.expand.kind != PT_EXPAND_NONE ? f.expand_d_in : f.d;
        if (f.scale->d != d_in)
            s = perr(r, "scale: it scales %zu features, the model takes %" PRIu64, f.scale->d,
                     d_in);
    }
    if (s == PT_OK && f.has_platt && f.nclass != 2)
        s = perr_at(r, f.at_platt, "platt: probabilities are for two-class models");
    if (s == PT_OK) s = check_votes(r, &f, m);
    if (s != PT_OK) {
        pt_model_free(m);
        return s;
    }
    m->path = f.path;
    m->variant = f.variant;
    m->bias = f.bias;
    m->d = (size_t)f.d;
    m->nclass = (size_t)f.nclass;
    m->multiclass = f.multiclass;
    m->label_names = f.names;
    f.names = NULL;
    if (f.nclass == 2) {
        m->class_values[0] = f.labels[0];
        m->class_values[1] = f.labels[1];
    }
    m->params = f.p;
    m->params.path = f.path;
    m->params.variant = f.variant;
    m->params.bias = f.bias;
    m->params.multiclass = f.multiclass;
    m->epochs_run = f.epochs_run;
    m->b = f.b;
    m->expand_d_in = (size_t)f.expand_d_in;
    m->scale = f.scale;
    f.scale = NULL;
    m->has_platt = f.has_platt;
    m->platt_a = f.platt[0];
    m->platt_b = f.platt[1];
    *out = m;
    return PT_OK;
#undef f
}

static pt_status read_all(const char *path, char **buf, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return pt_fail(PT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    pt_status s = PT_OK;
    char *b = NULL;
    size_t n = 0;
    if (fstat(fd, &sb) != 0) {
        s = pt_fail(PT_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
    } else if ((uint64_t)sb.st_size > MAX_MODEL_BYTES) {
        s = pt_fail(PT_ERR_LIMIT, "%s: %.1f GiB is larger than a model file can be (16 GiB)", path,
                    (double)sb.st_size / (1u << 30));
    } else if (!(b = malloc((size_t)sb.st_size + 1))) {
        s = pt_fail(PT_ERR_NOMEM, "%s: cannot allocate %zu bytes", path, (size_t)sb.st_size + 1);
    } else {
        size_t cap = (size_t)sb.st_size;
        while (n < cap) {
            ssize_t r = read(fd, b + n, cap - n);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) {
                s = pt_fail(PT_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
                break;
            }
            if (r == 0) break;
            n += (size_t)r;
        }
        b[n] = '\0';
    }
    close(fd);
    if (s != PT_OK) {
        free(b);
        return s;
    }
    *buf = b;
    *len = n;
    return PT_OK;
}

/* 1 + the newlines in [s, end): the number of the line that end is on. */
static size_t line_of(const char *s, const char *end)
{
    size_t n = 1;
    while ((s = memchr(s, '\n', (size_t)(end - s))) != NULL) s++, n++;
    return n;
}

/* The first line: magic and version. */
static pt_status check_first_line(const char *path, const char *buf, size_t len, int *version)
{
    const size_t ml = sizeof MODEL_MAGIC - 1;
    if (len < ml + 2 || memcmp(buf, MODEL_MAGIC " ", ml + 1) != 0)
        return pt_fail(PT_ERR_FORMAT, "%s:1: not a ptron model", path);
    const char *t = buf + ml + 1;
    char *e;
    errno = 0;
    unsigned long v = strtoul(t, &e, 10);
    if (*t < '0' || *t > '9' || (*e != '\n' && *e != '\0') || errno == ERANGE)
        return pt_fail(PT_ERR_FORMAT, "%s:1: not a ptron model", path);
    if (v > MODEL_VERSION)
        return pt_fail(PT_ERR_VERSION, "%s:1: model format version %lu is newer than this ptron "
                       "reads (version %d); upgrade ptron", path, v, MODEL_VERSION);
    if (v < 1) return pt_fail(PT_ERR_FORMAT, "%s:1: unknown model format version %lu", path, v);
    *version = (int)v;
    return PT_OK;
}

/* Check and parse a model file's len bytes at buf, followed by a NUL (buf is changed: the
 * parser cuts lines in place); path names the model in messages. */
static pt_status load_text(const char *path, char *buf, size_t len, pt_model **out)
{
    int version = 0;
    pt_status s = check_first_line(path, buf, len, &version);

    /* The last line must be the checksum of everything before it. The magic and version come
     * first so that a file that is no model, or a newer one, says so rather than "checksum". */
    size_t body = 0;
    if (s == PT_OK) {
        const size_t cl = CHECKSUM_LINE_LEN;
        const char *last = len >= cl + 1 ? buf + len - cl - 1 : NULL;
        char *e = NULL;
        uint64_t stored = 0;
        if (last && buf[len - 1] == '\n' && (last == buf || last[-1] == '\n') &&
            memcmp(last, CHECKSUM_KEY, sizeof CHECKSUM_KEY - 1) == 0) {
            const char *hex = last + sizeof CHECKSUM_KEY - 1;
            errno = 0;
            stored = strtoull(hex, &e, 16);
            bool digits = true;
            for (int i = 0; i < 16; i++)
                digits &= (hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f');
            if (!digits || e != hex + 16) e = NULL;
        }
        if (!e) {
            s = pt_fail(PT_ERR_FORMAT,
                        "%s:%zu: truncated or damaged: the last line is not 'checksum' and 16 "
                        "hex digits",
                        path, len ? line_of(buf, buf + len - 1) : 1);
        } else {
            body = (size_t)(last - buf);
            if (pt_checksum(buf, body) != stored)
                s = pt_fail(PT_ERR_CHECKSUM, "%s: checksum mismatch (file corrupted or edited)",
                            path);
        }
    }
    if (s == PT_OK) {
        locale_t loc = pt_c_locale_enter();
        parser r = {.path = path, .version = version, .p = buf, .end = buf + body, .line = 0};
        next_line(&r); /* the magic line, checked above */
        s = parse_body(&r, out);
        pt_c_locale_leave(loc);
    }
    return s;
}

/* A private, writable mapping of the file (the parser cuts lines in place: only the pages it
 * writes are copied), or NULL to read it instead: when the file fills its last page, the byte
 * after it would not be the NUL the parser needs (past the end of a file, only the rest of its
 * last page reads as zeros). A large binary section is then neither copied nor its memory
 * zeroed first. */
static char *map_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat sb;
    long page = sysconf(_SC_PAGESIZE);
    void *p = MAP_FAILED;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 && page > 0 &&
        (uint64_t)sb.st_size <= MAX_MODEL_BYTES && sb.st_size % page != 0)
        p = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_POPULATE,
                 fd, 0);
    close(fd);
    if (p == MAP_FAILED) return NULL;
    *len = (size_t)sb.st_size;
    return p;
}

pt_status pt_model_load(const char *path, pt_model **out)
{
    pt_clear_error();
    *out = NULL;
    char *buf = NULL;
    size_t len = 0;
    if ((buf = map_file(path, &len)) != NULL) {
        pt_status s = load_text(path, buf, len, out);
        munmap(buf, len);
        return s;
    }
    PT_TRY(read_all(path, &buf, &len));
    pt_status s = load_text(path, buf, len, out);
    free(buf);
    return s;
}

pt_status pt_model_load_buffer(const void *buf, size_t len, const char *name, pt_model **out)
{
    pt_clear_error();
    *out = NULL;
    if (!name) name = "model";
    if (len && !buf) return pt_fail(PT_ERR_INVALID, "%s: no bytes", name);
    if ((uint64_t)len > MAX_MODEL_BYTES)
        return pt_fail(PT_ERR_LIMIT, "%s: %.1f GiB is larger than a model can be (16 GiB)", name,
                       (double)len / (1u << 30));
    /* a private copy: the parser cuts lines in place and needs a NUL after the last byte */
    char *copy = malloc(len + 1);
    if (!copy) return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate %zu bytes", name, len + 1);
    if (len) memcpy(copy, buf, len);
    copy[len] = '\0';
    pt_status s = load_text(name, copy, len, out);
    free(copy);
    return s;
}
