/*
 * Models: struct pt_model, its allocation and metadata, the run states kept in it, and its
 * scores. Not installed.
 */
#ifndef PT_MODEL_H
#define PT_MODEL_H

#include <pthread.h>

#include "data/data.h"
#include "features/scale.h"
#include "kernels/kernels.h"

/* ---------------------------------------------------------- run states (train_state.c) */

/* Where a run stands, so that it can be resumed exactly: kept in interrupted
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
/* The same for an order shuffled by pt_rng_shuffle_chunks in chunks of `chunk` rows. */
void pt_train_state_order_chunks(const pt_train_state *from, uint64_t seed, uint32_t *order,
                                 size_t count, size_t chunk, pt_rng *rng, int *shuffles);
/* The chunk of p's shuffled order on ds: p->online.shuffle_chunk, else a streamed dataset's
 * window (0: the whole order). */
size_t pt_shuffle_chunk(const pt_train_params *p, const pt_dataset *ds);
/* Fill st->hist with the last epochs' mistakes up to st->epochs_done: those after
 * r->epochs_before from the report, the older ones from prev (the state the run started from,
 * or NULL). */
void pt_train_state_history(pt_train_state *st, const pt_train_state *prev,
                            const pt_train_report *r);
/* The last complete epoch's mistakes (n when none is recorded). */
size_t pt_train_state_last(const pt_train_state *st);

/* ------------------------------------------------------------------ models (model.c) */

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
    /* or, for a model trained on sparse data (sv NULL), the support vectors in CSR: n_sv + 1
     * offsets, then the columns (increasing in each row, below d) and values */
    uint64_t *sv_ptr;
    uint32_t *sv_col;
    float *sv_val;
    /* trained on a feature expansion (params.expand.kind != NONE): d is the expanded
     * dimension, expand_d_in the input features it expands; scoring expands each row */
    size_t expand_d_in;
    /* trained on scaled features (params.scale != NONE): the scaling, applied to the rows it
     * scores before anything else (owned) */
    pt_scaling *scale;
    /* two-class models with probabilities (pt_model_set_platt): P(+1 | f) =
     * 1 / (1 + exp(platt_a f + platt_b)) */
    int has_platt;
    double platt_a, platt_b;
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
 * weights, or random ones (p->init_random), or left at zero (pt_train has checked init
 * against the run). */
pt_status pt_model_start(pt_model *m, const pt_train_params *p);
/* The random start from seed: K classes of d weights (rows ld floats apart in W) and biases B
 * (0 without the bias), each uniform in [0, 1). */
void pt_random_start(uint64_t seed, size_t K, size_t d, int bias, float *W, size_t ld, float *B);
/* A linear model of nclass > 2 classes (W, Bk zeroed, labels copied). */
pt_model *pt_model_alloc_multiclass(size_t d, size_t nclass, const double *labels);
/* m records where its run (one problem) stands: st, which it takes in any case (NULL: an
 * allocation that failed, PT_ERR_NOMEM). */
pt_status pt_model_keep_run(pt_model *m, pt_train_state *st);

/* ------------------------------------------ the last epoch read whole (epoch_keep.c) */

/* A run on a dataset whose mapping is guarded (g, pt_guard): the model of the last epoch
 * read before the file shrank, if it did. pt_epoch_keep_start makes k the epoch hook of p
 * (the caller's hook is called from it, with the caller's user, while the data is whole);
 * pt_epoch_keep_take hands over the copy kept (NULL: none: no epoch ended with the data
 * whole, or none was copied), a checkpoint of its epoch (epochs_run; resumable). */
typedef struct pt_epoch_keep {
    const pt_guard *guard;
    pt_epoch_fn hook; /* the caller's */
    void *user;
    pt_model *kept;
    double t0, copy_seconds;
    pthread_mutex_t lock; /* (hooks may come from the threads of one-vs-rest's classes) */
} pt_epoch_keep;
void pt_epoch_keep_start(pt_epoch_keep *k, const pt_guard *g, pt_train_params *p);
int pt_epoch_keep_hook(const pt_model *m, int epoch, size_t mistakes, void *user);
pt_model *pt_epoch_keep_take(pt_epoch_keep *k);
void pt_epoch_keep_end(pt_epoch_keep *k);

/* ---------------------------------------------------------------- scores (scores.c) */

/* The threshold unit's sign: sigma(s) = +1 for s >= 0, -1 below (a NaN score is -1). Every label
 * predicted from a score goes through it; the update rule y s <= tau is the paths' own. */
static inline bool pt_sign_positive(float s) { return s >= 0.0f; }
/* Scores of a kernel model. */
pt_status pt_model_kernel_scores(const pt_model *m, const pt_dataset *ds, float *scores);
/* pt_model_class_scores without the feature-count warning (callers scoring in blocks warn
 * once themselves). */
pt_status pt_class_scores(const pt_model *m, const pt_dataset *ds, float *out);
/* The rows a model scores: ds itself (compact rows too: scoring widens them where it reads
 * them), or for a model trained on scaled features (m->scale) their scaled float32 copy in
 * *tmp (free it with pt_dataset_free; NULL when there is none). */
pt_status pt_model_scaled(const pt_model *m, const pt_dataset *ds, const pt_dataset **use,
                          pt_dataset **tmp);
/* pt_model_scores on rows already scaled (no scaling, no error cleared). */
pt_status pt_model_scores_raw(const pt_model *m, const pt_dataset *ds, float *scores);
/* The warning that the data's features past the model's d are ignored (none if
 * data_d <= model_d). */
void pt_warn_extra_features(size_t model_d, size_t data_d);
/* Before a voted model scores ds: what the vote costs (pt_model_score_cost), logged as
 * information, as a warning from PT_SCORE_COST_WARN multiply-adds up (score_cost.c). */
void pt_vote_cost_log(const pt_model *m, const pt_dataset *ds);
/* The voted perceptron's score of row x: sum over the nv vectors (rows of V, ldv floats apart,
 * biases Vb, survival counts Vc) of Vc[v] sigma(V[v].x + Vb[v] bias), summed in double. */
float pt_vote_score(const pt_kernels *k, const float *V, size_t ldv, const float *Vb,
                    const float *Vc, size_t nv, const float *x, size_t len, float bias);

/* The distinct dense support vectors of a kernel one-vs-rest model m (m->sub[c]->sv, none
 * sparse), first seen first (sv_set.c): n of them (pointers into the classes' rows, not
 * copied), and each class's vectors as indices into them, in the class's order. */
typedef struct pt_sv_set {
    size_t n, total;    /* distinct vectors; the classes' vectors together */
    const float **row;  /* n rows of d floats */
    uint32_t **idx;     /* idx[c][i]: class c's vector i */
    size_t cap;         /* the hash table's slots (a power of two) */
    uint32_t *slot;     /* index + 1 into row, 0 empty */
} pt_sv_set;
pt_status pt_sv_set_build(pt_sv_set *u, const pt_model *m);
void pt_sv_set_free(pt_sv_set *u, size_t K);
/* Scoring a kernel one-vs-rest model through its set (scores.c) sums each class's kernel
 * values times coefficients a block of PT_SV_BLOCK vectors at a time, and is used when the
 * classes share enough vectors (n distinct of total, d features, K classes): the kernel path's
 * scores of its training rows (train_kernel.c) follow both, to equal it bit for bit. */
#define PT_SV_BLOCK 512
static inline bool pt_sv_set_shared(size_t n, size_t total, size_t d, size_t K)
{
    return n * (d + K) < total * (d + 1);
}

/* Tests of the older formats' reader only: with on, kernel models with dense support vectors
 * are written as before version 4 (text, one line a vector: version 1-3), so a test can edit
 * them as text; off (the default), in version 4's binary section. */
void pt_model_io_text_kernels(bool on);

#endif /* PT_MODEL_H */
