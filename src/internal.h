/* Internal definitions shared by the library's source files. Not installed. */
#ifndef PT_INTERNAL_H
#define PT_INTERNAL_H

#include "ptron.h"

#include <locale.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ----------------------------------------------------------------- errors (error.c) */

/* Record the detailed message for pt_last_error() and return the status, so a failing
 * path reads `return pt_fail(PT_ERR_PARSE, "%s:%zu: bad index", path, line);`. */
pt_status pt_fail(pt_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefix the current message with "what: " (used when an inner call fails). */
pt_status pt_fail_prefix(pt_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pt_clear_error(void);
/* PT_OK if a parameter struct's struct_size is this library's, else PT_ERR_INVALID saying to
 * start it with its _init (see ptron.h). Read nothing else of a struct before this. */
pt_status pt_check_struct_size(const char *type, size_t got, size_t want);
#define PT_CHECK_STRUCT(p, type) pt_check_struct_size(#type, (p)->struct_size, sizeof(type))
void pt_log(pt_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define PT_TRY(expr)                                                                               \
    do {                                                                                           \
        pt_status pt_try_s_ = (expr);                                                              \
        if (pt_try_s_ != PT_OK) return pt_try_s_;                                                  \
    } while (0)

/* ------------------------------------------------------------------- memory (mem.c) */

/* 64-byte aligned allocation; large ones ask for transparent huge pages, because first
 * touch of 4 KiB pages costs ~10 us each on these machines. what names the buffer in the
 * failure message ("feature matrix"). Returns NULL and sets pt_last_error on failure. */
void *pt_alloc(size_t bytes, const char *what);
void *pt_calloc(size_t bytes, const char *what); /* zeroed */
void pt_free(void *p);
/* a * b with overflow check; returns false on overflow. */
bool pt_mul_ok(size_t a, size_t b, size_t *out);
size_t pt_round_up(size_t x, size_t to);
size_t pt_physical_memory(void);      /* bytes of RAM */
size_t pt_default_mem_budget(void);   /* half of RAM */
int pt_threads_resolve(int requested); /* 0 -> all cores */
/* The thread counts a call runs with: the calling thread's OpenMP count (what its parallel
 * regions and OpenBLAS, built for OpenMP, use) and OpenBLAS's process-wide count, set by
 * pt_threads_enter and put back as they were by pt_threads_leave. Inside a parallel region
 * both do nothing (OpenBLAS runs on one thread there, and nested regions are off). */
typedef struct pt_thread_counts {
    int omp, blas;
    bool set;
} pt_thread_counts;
pt_thread_counts pt_threads_enter(int threads);
void pt_threads_leave(pt_thread_counts saved);
double pt_now(void);                  /* monotonic seconds (clock.c) */

/* ----------------------------------------------------------- the C locale (locale.c) */

/* The "C" locale object, for strtof_l and strtod_l. */
locale_t pt_c_locale(void);
/* Switch the calling thread to the C locale, for printf and strtod; give the value returned
 * to pt_c_locale_leave to switch back. */
locale_t pt_c_locale_enter(void);
void pt_c_locale_leave(locale_t old);

/* ------------------------------------------------------- random numbers (rng.c) */

/* xoshiro256**: fast, and bit-identical on every machine. */
typedef struct pt_rng {
    uint64_t s[4];
} pt_rng;

void pt_rng_seed(pt_rng *r, uint64_t seed);
uint64_t pt_rng_next(pt_rng *r);
double pt_rng_uniform(pt_rng *r);               /* [0, 1) */
double pt_rng_normal(pt_rng *r);                /* N(0, 1), Box-Muller */
uint64_t pt_rng_below(pt_rng *r, uint64_t n);   /* [0, n), unbiased */
void pt_rng_shuffle(pt_rng *r, uint32_t *a, size_t n); /* Fisher-Yates */

/* -------------------------------------------------------------- datasets (dataset.c) */

struct pt_dataset {
    size_t n, d, stride;  /* stride: floats of a dense row (and of a weight vector), both layouts */
    pt_layout layout;
    float *X;            /* dense: n * stride floats, 64-byte aligned, zero padding past d; NULL
                          * for sparse */
    /* sparse (CSR, see pt_layout in ptron.h): n + 1 offsets, then nnz columns and values */
    uint64_t *rowptr;
    uint32_t *col;
    float *val;
    int32_t *cls;        /* n class indices */
    float *y;            /* n floats +1/-1 when nclass == 2, else NULL */
    size_t nclass;
    double *class_values; /* nclass, ascending */
    char **class_names;   /* text labels (nclass, strcmp order; class_values are 0..K-1) or NULL */
    size_t nnz;
    /* generator truth (kind[0] != 0 when present) */
    char kind[16];
    double *wstar;       /* d doubles, unit norm, or NULL */
    double truth_R, truth_gamma;
    /* storage: the matrix (X, or rowptr/col/val) either owned (pt_alloc), inside a read-only
     * mapping, or the caller's (pt_dataset_wrap, pt_dataset_wrap_csr) */
    bool X_owned;
    void *map;
    size_t map_len;
};

/* Allocate an n x d dataset with zeroed matrix and labels; NULL + error on failure. */
pt_dataset *pt_dataset_alloc(size_t n, size_t d);
/* The same with the matrix left unwritten, for readers that write every row (padding too)
 * themselves, in parallel: first touch of fresh pages is slow and better spread over threads. */
pt_dataset *pt_dataset_alloc_uninit(size_t n, size_t d);
/* An n x d sparse dataset with room for nnz non-zeros (rowptr zeroed, col and val unwritten,
 * owned) and zeroed labels; NULL + error on failure. */
pt_dataset *pt_dataset_alloc_sparse(size_t n, size_t d, size_t nnz);
/* Bytes of the CSR arrays of n rows and nnz non-zeros, or SIZE_MAX on overflow. */
size_t pt_sparse_bytes(size_t n, size_t nnz);
/* Check CSR arrays (see pt_layout): the first offset out of order, column not increasing or
 * >= d, or non-finite value is a PT_ERR_INVALID naming row and entry, prefixed by what. */
pt_status pt_csr_check(size_t n, size_t d, const uint64_t *rowptr, const uint32_t *col,
                       const float *val, const char *what);
/* Row i of a sparse dataset: its columns and values, and the count. */
static inline size_t pt_csr_row(const pt_dataset *ds, size_t i, const uint32_t **col,
                                const float **val)
{
    uint64_t a = ds->rowptr[i];
    *col = ds->col + a;
    *val = ds->val + a;
    return (size_t)(ds->rowptr[i + 1] - a);
}
/* PT_OK for a dense dataset; for a sparse one PT_ERR_UNSUPPORTED saying that `what` reads
 * dense data only (the entry points whose code has no sparse form yet call it). */
pt_status pt_require_dense(const pt_dataset *ds, const char *what);
size_t pt_stride_for(size_t d);
/* Bytes of the padded matrix for n x d, or SIZE_MAX on overflow. */
size_t pt_dense_bytes(size_t n, size_t d);
/* Refuse a dense n x d load above budget with the bytes it needs. */
pt_status pt_check_dense_budget(const char *path, size_t n, size_t d, size_t budget);
/* Build cls, class_values and y from raw per-row label values. */
pt_status pt_dataset_set_class_table(pt_dataset *ds, const double *raw);
/* Text labels: build cls, class_values (0..K-1), class_names (sorted by strcmp) and y from
 * each row's label text (n strings). */
pt_status pt_dataset_set_class_names(pt_dataset *ds, char *const *text);
/* Copy K names (NULL in, NULL out). */
char **pt_names_dup(char *const *names, size_t K);
void pt_names_free(char **names, size_t K);
/* Copy into dst (n rows, matrix filled) the class table, the classes and +1/-1 labels of
 * src's rows [start, start + dst->n) and src's generator truth. */
pt_status pt_dataset_copy_meta(pt_dataset *dst, const pt_dataset *src, size_t start);
/* Scan the matrix for non-zeros (and non-finite values: an error naming row and column). */
pt_status pt_dataset_count_nnz(pt_dataset *ds, const char *path);

/* Readers and writers (io_libsvm.c, io_csv.c, io_ptd.c). Writers write to an open FILE. */
pt_status pt_read_libsvm(const char *path, const pt_read_options *o, pt_dataset **out);
pt_status pt_read_csv(const char *path, const pt_read_options *o, pt_dataset **out);
pt_status pt_read_ptd(const char *path, const pt_read_options *o, pt_dataset **out);
/* Writers: fill an open stream (ctx is the const pt_dataset *); pt_dataset_write wraps them
 * in pt_write_atomic. Numbers as %.9g under the C locale, so floats round-trip exactly. */
pt_status pt_write_libsvm(FILE *f, const void *ds);
pt_status pt_write_csv(FILE *f, const void *ds);
pt_status pt_write_ptd(FILE *f, const void *ds);

/* ------------------------------------------------------ atomic files (atomic_file.c) */

/* Write a file atomically without changing what path is: symlinks are followed to their final
 * target, and a regular file there (or none) is replaced whole: "TARGET.tmp.PID" is opened
 * beside it, filled by write_fn, every write checked, fflush + fsync, then renamed over it (and
 * the directory fsync'd); an existing file's permissions carry over. On any failure the
 * temporary file is removed and the target is left as it was. A character or block device or
 * a FIFO is written through as it is (no temporary file; opening a FIFO waits for a reader);
 * a directory, socket or other kind of file is refused. Messages name path, as given. */
typedef pt_status (*pt_write_fn)(FILE *f, const void *ctx);
pt_status pt_write_atomic(const char *path, pt_write_fn fn, const void *ctx);

/* Checksum used by .ptd and model files (XXH3 64-bit). */
uint64_t pt_checksum(const void *data, size_t len);

/* ------------------------------------------------------------------ SIMD kernel table */

#include "kernels/kernels.h"

/* --------------------------------------------------------------------- models (model.c) */

/* Where a run stands, so that it can be resumed exactly (train_state.c): kept in interrupted
 * models, epoch snapshots and checkpoints, saved by model_io.c. One per problem: a binary run,
 * the multiclass perceptron, or each class of one-vs-rest. A final model holds none. */

/* The epochs whose mistakes a state keeps, the last ones: resume needs only the last, the rest
 * is for a person reading the file; the state never grows with the epochs run. */
#define PT_STATE_HISTORY 1000

typedef struct pt_train_state {
    size_t n;              /* rows of the dataset it ran on */
    int epochs_done;       /* complete epochs */
    size_t pos;            /* samples (batch path: blocks) done in epoch epochs_done + 1 */
    size_t epoch_mistakes; /* mistakes so far in that epoch */
    size_t updates;        /* updates of the whole run */
    double steps;          /* online, kernel: samples visited; batch: steps taken */
    bool finished;         /* converged, or stopped by --tol: nothing is left to do */
    int nhist;             /* mistakes of the last nhist complete epochs, oldest first: */
    size_t hist[PT_STATE_HISTORY]; /* nhist = min(epochs_done, PT_STATE_HISTORY) */
    /* linear paths: the live iterate (nb vectors of stride floats in len, nb biases) */
    size_t len, nb;
    float *w, *b;
    float *u, *ub;         /* the averaged variant's lazy sums; batch: the average of iterates */
    double avg_b;          /* batch: the average of the biases */
    double objective;      /* batch: the last complete epoch's objective */
    double epoch_objective; /* batch: the next epoch's sum so far */
    float survived;        /* voted: samples the current vector has survived */
    /* kernel path: the dual coefficients, their lazy sums (averaged) and the margins */
    uint32_t *alpha;
    double *beta;
    float *f;
    /* in memory only, never saved (a loaded state replays the shuffles from the seed): the
     * sample (or block) order after `shuffles` shuffles and the generator after them */
    uint32_t *order;
    size_t norder;
    int shuffles;
    pt_rng rng;
} pt_train_state;

/* What a state holds besides its counters. */
enum {
    PT_STATE_LINEAR = 1,   /* w, b */
    PT_STATE_SUMS = 2,     /* u, ub */
    PT_STATE_DUAL = 4,     /* alpha, f */
    PT_STATE_DUAL_AVG = 8  /* beta */
};

/* A zeroed state of n rows with the parts asked for: len floats and nb biases for the linear
 * parts, n entries for the dual ones. NULL (and pt_last_error) on allocation failure. */
pt_train_state *pt_train_state_new(size_t n, size_t len, size_t nb, unsigned parts);
void pt_train_state_free(pt_train_state *st);
pt_train_state *pt_train_state_clone(const pt_train_state *st);
/* Keep the shuffled order (count entries, after `shuffles` shuffles) and the generator. */
pt_status pt_train_state_keep_order(pt_train_state *st, const uint32_t *order, size_t count,
                                    int shuffles, const pt_rng *rng);
/* Set the order and generator for the epoch after from's position: from's own if it kept them,
 * else replayed from the seed. *shuffles: how many shuffles order has had (the epoch loop
 * shuffles until it has had one per epoch). */
void pt_train_state_order(const pt_train_state *from, uint64_t seed, uint32_t *order,
                          size_t count, pt_rng *rng, int *shuffles);
/* Fill st->hist with the last epochs' mistakes up to st->epochs_done: those after
 * r->epochs_before from the report, the older ones from prev (the state the run started from,
 * or NULL). */
void pt_train_state_history(pt_train_state *st, const pt_train_state *prev,
                            const pt_train_report *r);
/* m records where its run (one problem) stands: st, which it takes in any case (NULL: an
 * allocation that failed, PT_ERR_NOMEM). */
pt_status pt_model_keep_run(pt_model *m, pt_train_state *st);
/* The last complete epoch's mistakes (n when none is recorded). */
size_t pt_train_state_last(const pt_train_state *st);
/* A run that starts from a state: the report takes over its epochs and updates. */
void pt_report_resume(pt_train_report *r, const pt_train_state *from);
/* Append part, a later stretch of the same run (it begins where r ends), to r; a zeroed r
 * becomes part. part is cleared. */
pt_status pt_report_append(pt_train_report *r, pt_train_report *part);

struct pt_model {
    pt_path path;
    pt_variant variant;
    size_t d;              /* feature count */
    int bias;
    double class_values[2]; /* label of -1 and of +1 */
    size_t nclass;
    pt_train_params params; /* as trained (callbacks cleared) */
    int epochs_run;
    /* linear models (online, batch) */
    float *w;              /* pt_stride_for(d) floats, zero padded */
    float b;
    /* more than two classes: nclass labels (ascending); linear models keep one weight vector
     * per class in W (nclass x pt_stride_for(d)) and biases in Bk; kernel models keep
     * coef as n_sv x nclass (one column per one-vs-rest problem). Binary models leave these
     * NULL and use class_values, w, b. */
    pt_multiclass multiclass;
    double *labels;
    float *W, *Bk;
    char **label_names; /* text labels (nclass) or NULL */
    /* more than two classes, one-vs-rest, where a class's score needs more than a weight
     * vector: one binary model per class (labels 0 and 1), whose score is the class's. The
     * kernel path (support vectors; W is NULL) and the voted perceptron (its vectors; W and Bk
     * hold the last iterates as well). */
    pt_model **sub;
    /* kernel models: n_sv support vectors (rows of stride floats) with coefficients
     * coef = alpha * y (signed) */
    size_t n_sv;
    float *sv;
    float *coef;
    /* trained on a feature expansion (params.expand.kind != NONE): d is the expanded
     * dimension, expand_d_in the input features it expands; scoring expands each row */
    size_t expand_d_in;
    /* interrupted runs, epoch snapshots and checkpoints: where each problem's run stands
     * (one state, or one per class for one-vs-rest); NULL in a final model */
    pt_train_state **states;
    size_t nstates;
    /* the voted perceptron: every intermediate vector (n_votes rows of pt_stride_for(d)
     * floats), its bias and the number of samples it survived; w, b hold the last one */
    size_t n_votes;
    size_t vote_cap; /* vectors the three arrays have room for, when more than n_votes */
    float *votes, *vote_b, *vote_c;
};

pt_model *pt_model_alloc_linear(size_t d);
/* Record what a model was trained on and with (path, labels, parameters; callbacks and the
 * caller's models, resume and init, cleared). */
void pt_model_set_meta(pt_model *m, const pt_dataset *ds, const pt_train_params *p);
/* The warm start of a freshly allocated linear model (w, b or W, Bk of m->d features): p->init's
 * weights, or random ones (p->init_random), or left at zero (train.c; pt_train has checked
 * init against the run). */
pt_status pt_model_start(pt_model *m, const pt_train_params *p);
/* The random start from seed: K classes of d weights (rows ld floats apart in W) and biases B
 * (0 without the bias), each uniform in [0, 1). */
void pt_random_start(uint64_t seed, size_t K, size_t d, int bias, float *W, size_t ld, float *B);
/* A linear model of nclass > 2 classes (W, Bk zeroed, labels copied). */
pt_model *pt_model_alloc_multiclass(size_t d, size_t nclass, const double *labels);
/* One-vs-rest on the online path in lockstep: classes [c0, c1) from one pass over X per
 * epoch; W holds (c1 - c0) weight vectors of ds->stride floats, B their biases; reps one report
 * per class (train_online.c). states: one per class, where it starts (NULL: from scratch); on
 * PT_OK or PT_ERR_INTERRUPTED each is replaced by where the class then stands. */
pt_status pt_train_online_ovr(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                              size_t c0, size_t c1, float *W, float *B, pt_train_report *reps,
                              pt_train_state **states);
/* One-vs-rest on the online or batch path (multiclass/ovr.c): m, a multiclass model with its
 * metadata and warm start, gets every class's weights. */
pt_status pt_train_ovr(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                       pt_model *m, pt_train_report *r);
/* One-vs-rest on the kernel path (multiclass/ovr.c): one binary kernel model per class, in
 * m->sub of the model made in *out. */
pt_status pt_train_ovr_kernel(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                              pt_model **out, pt_train_report *r);
/* The multiclass perceptron (multiclass/direct.c) into m, as pt_train_ovr. */
pt_status pt_train_direct(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                          pt_model *m, pt_train_report *r);
/* A view of a multiclass dataset as the binary problem "class k against the rest": shares X,
 * owns nothing; y must hold n floats (+1 for class k). */
void pt_dataset_binary_view(const pt_dataset *ds, size_t k, float *y, pt_dataset *view);
/* The notes' sign: sigma(s) = +1 for s >= 0, -1 below (a NaN score is -1). Every label
 * predicted from a score goes through it; the update rule y s <= tau is the paths' own. */
static inline bool pt_sign_positive(float s) { return s >= 0.0f; }
/* Scores of a kernel model (scores.c). */
pt_status pt_model_kernel_scores(const pt_model *m, const pt_dataset *ds, float *scores);
/* pt_model_class_scores without the feature-count warning (callers scoring in blocks warn
 * once themselves). */
pt_status pt_class_scores(const pt_model *m, const pt_dataset *ds, float *out);
/* The warning that the data's features past the model's d are ignored (none if data_d <= model_d). */
void pt_warn_extra_features(size_t model_d, size_t data_d);
/* The voted perceptron's score of row x: sum over the nv vectors (rows of V, ldv floats apart,
 * biases Vb, survival counts Vc) of Vc[v] sigma(V[v].x + Vb[v] bias), summed in double. */
float pt_vote_score(const pt_kernels *k, const float *V, size_t ldv, const float *Vb,
                    const float *Vc, size_t nv, const float *x, size_t len, float bias);

/* --------------------------------------------------------------- training paths */

/* A row transformation applied on the fly (streamed feature expansion): map writes the
 * d_out mapped features of x, zero padded to pt_stride_for(d_out) floats, into out. */
typedef struct pt_row_map {
    size_t d_out;
    void (*map)(const void *ctx, const float *x, float *out);
    const void *ctx;
} pt_row_map;

/* The online path over mapped rows (the model m has d = map->d_out); sequential pass. */
pt_status pt_train_online_mapped(const pt_dataset *ds, const pt_row_map *map,
                                 const pt_train_params *p, const pt_kernels *k, pt_model *m,
                                 pt_train_report *r);
pt_status pt_train_online(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                          pt_model *m, pt_train_report *r);
pt_status pt_train_batch(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                         pt_model *m, pt_train_report *r);
pt_status pt_train_kernel(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                          pt_model **m, pt_train_report *r);
/* The kernel path on K binary problems over the rows of ds (one-vs-rest): view_of(user, c,
 * view) turns *view, a copy of *ds, into problem c (its labels; NULL: ds itself). The packed
 * rows and the storage of K (the Gram, or the row cache) are set up once and kept from one
 * problem to the next, since no kernel value depends on the labels: K classes cost one Gram.
 * states[c]: where problem c starts (NULL: from scratch), replaced by where it then stands
 * (every problem has one on PT_OK and PT_ERR_INTERRUPTED); reps[c] its report (zeroed on
 * entry). Without round, the problems run in turn to the last epoch; with round, in rounds:
 * every problem up to epoch E, then round(round_user, E), which returns non-zero to stop. On
 * an error, *failed is the problem it came in (SIZE_MAX: in the setup, before any). */
typedef void (*pt_view_fn)(void *user, size_t c, pt_dataset *view);
typedef int (*pt_round_fn)(void *user, int epoch);
pt_status pt_train_kernel_problems(const pt_dataset *ds, size_t K, pt_view_fn view_of, void *user,
                                   const pt_train_params *p, const pt_kernels *k,
                                   pt_train_state **states, pt_train_report *reps,
                                   pt_round_fn round, void *round_user, size_t *failed);
/* A kernel problem's model as its state stands (view: the problem's rows and labels). */
pt_status pt_kernel_model_from_state(const pt_dataset *view, const pt_train_params *p,
                                     const pt_train_state *st, pt_model **out);


/* ----------------------------------------------------------- stopping (common/stop.c) */

/* A stop token (ptron.h). Each pt_train call arms one of its own over the caller's token and
 * hands the paths params whose stop is that call's: the paths poll pt_stopping(p->stop)
 * between samples (or blocks, or kernel rows), and nothing else in the process stops them. */
struct pt_stop {
    atomic_int requested;  /* pt_stop_request on this token */
    const pt_stop *caller; /* a call's token: the caller's (pt_train_params.stop), or NULL */
    unsigned generation;   /* pt_request_stop's count when the token was made or armed */
};

/* How many times pt_request_stop was called: a call stops when it moves. */
extern atomic_uint pt_stop_generation;

/* Make *call a call's own token over the caller's (NULL: none). */
void pt_stop_arm(pt_stop *call, const pt_stop *caller);

/* Whether the call that owns this token must stop (NULL: a call that cannot be stopped). */
static inline bool pt_stopping(const pt_stop *s)
{
    return s && (atomic_load_explicit(&s->requested, memory_order_relaxed) ||
                 (s->caller && atomic_load_explicit(&s->caller->requested, memory_order_relaxed)) ||
                 atomic_load_explicit(&pt_stop_generation, memory_order_relaxed) != s->generation);
}

/* Append one epoch's mistakes to the report (grows the array). */
pt_status pt_report_push_epoch(pt_train_report *r, size_t mistakes, double objective);

#endif /* PT_INTERNAL_H */
