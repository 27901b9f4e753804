/*
 * The training paths: online (sequential and blocked passes, one-vs-rest in lockstep), batch
 * and kernel, each an epoch loop over one step, and the report they fill. Not installed.
 */
#ifndef PT_PATHS_H
#define PT_PATHS_H

#include "features/expand.h"
#include "model/model.h"

/* ---------------------------------------------------------------- reports (report.c) */

/* Append one epoch's mistakes to the report (grows the array). */
pt_status pt_report_push_epoch(pt_train_report *r, size_t mistakes, double objective);

/* A run that starts from a state: the report takes over its epochs and updates. */
void pt_report_resume(pt_train_report *r, const pt_train_state *from);
/* Append part, a later stretch of the same run (it begins where r ends), to r; a zeroed r
 * becomes part. part is cleared. */
pt_status pt_report_append(pt_train_report *r, pt_train_report *part);

/* --------------------------------------------------------------- epoch end (epoch.c) */

/* What the end of an epoch does on a path: the report it records into, the floats that must
 * stay finite, and the epoch hook's model. */
typedef struct pt_epoch_ending {
    const pt_train_params *p; /* the progress callback and the epoch hook (NULL: none) */
    pt_train_report *r;       /* the epochs are recorded here (NULL: by the paths underneath) */
    double t0;                /* when the run began (the progress callback's seconds) */
    /* must stay finite: nw floats at w and nb at b, and the objective when check_objective;
     * what names them in the message, and what to change */
    const float *w, *b;
    size_t nw, nb;
    bool check_objective;
    const char *what, *hint;
    /* the epoch hook's model as the run stands after `epoch` (finished: it has nothing more to
     * do), made by the path in *model; release (if set) is called with it after the hook */
    pt_status (*snapshot)(void *path, int epoch, bool finished, pt_model **model);
    void (*release)(void *path, pt_model *model);
    void *path;
} pt_epoch_ending;

/* The end of an epoch, the same on every path: its mistakes (and objective, else NaN) are
 * recorded, the weights checked (non-finite: PT_ERR_NUMERIC, naming the epoch), then the
 * progress callback runs (non-zero: PT_ERR_INTERRUPTED) and the epoch hook on the path's
 * snapshot (non-zero: *stop). *done says whether the epoch counts as complete (recorded and
 * finite), whatever the status: the path then books it before it stops. */
pt_status pt_epoch_end(const pt_epoch_ending *e, int epoch, size_t mistakes, double objective,
                       bool finished, bool *done, bool *stop);

/* Iterative parameter mixing on a share of a distributed run (online_mix.c), for a linear
 * online learner: what it mixes, in place. */
typedef struct pt_mix_target {
    float *w, *b;   /* nw weights, nb biases */
    size_t nw, nb;
    float *u, *ub;  /* the averaged variant's lazy sums (NULL: not averaged) */
    double *steps;  /* the samples the average counts (set by the mixer: seen / ranks) */
    const pt_kernels *k;
} pt_mix_target;
typedef struct pt_mixer {
    pt_mix_target t;
    size_t rows;  /* the rows of all shares: what one epoch of all ranks visits */
    double seen;  /* samples all ranks have visited (a run state's steps) */
    float *buf, *saved;
    double *bias;
    double saved_steps;
} pt_mixer;
/* Start from `seen` samples visited (0, or a resumed state's steps): sets *t->steps. */
pt_status pt_mixer_init(pt_mixer *mx, const pt_mix_target *t, size_t rows, double seen);
void pt_mixer_free(pt_mixer *mx);
/* Keep the target as it stands (the last mixed state, before an epoch), or go back to it. */
void pt_mixer_save(pt_mixer *mx);
void pt_mixer_restore(const pt_mixer *mx);
/* After an epoch with `mistakes` on this rank (collective): the target becomes the ranks'
 * mixture (how: pt_train_params.mix); returns the epoch's mistakes on all ranks. */
size_t pt_mixer_mix(pt_mixer *mx, size_t mistakes, pt_mix how);

/* ------------------------------------------------------------------------------ paths */

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
/* The kernel path on K binary problems over the rows of ds (one-vs-rest): view_of(user, c, y,
 * view) turns *view, a copy of *ds, into problem c (its labels, written into y, n floats,
 * when y is not NULL; NULL view_of: ds itself). The packed rows and the storage of K (the
 * Gram, or the row cache) are set up once and kept from one problem to the next, since no
 * kernel value depends on the labels: K classes cost one Gram. With two threads or more the
 * problems train at once, one a thread, on the shared storage (except where AUTO storage may
 * switch to the full Gram mid-run), each exactly as alone.
 * states[c]: where problem c starts (NULL: from scratch), replaced by where it then stands
 * (every problem has one on PT_OK and PT_ERR_INTERRUPTED); reps[c] its report (zeroed on
 * entry). Without round, the problems run in turn to the last epoch; with round, in rounds:
 * every problem up to epoch E, then round(round_user, E), which returns non-zero to stop. On
 * an error, *failed is the problem it came in (SIZE_MAX: in the setup, before any).
 * train_correct (NULL: not asked): for K one-vs-rest classes of dense rows, the training rows
 * the final models predict right (argmax of the classes' scores, equal to pt_class_scores'),
 * summed from the kernel rows the storage still holds; SIZE_MAX when it does not hold them. */
typedef void (*pt_view_fn)(void *user, size_t c, float *y, pt_dataset *view);
typedef int (*pt_round_fn)(void *user, int epoch);
pt_status pt_train_kernel_problems(const pt_dataset *ds, size_t K, pt_view_fn view_of, void *user,
                                   const pt_train_params *p, const pt_kernels *k,
                                   pt_train_state **states, pt_train_report *reps,
                                   pt_round_fn round, void *round_user, size_t *failed,
                                   size_t *train_correct);
/* A kernel problem's model as its state stands (view: the problem's rows and labels). */
pt_status pt_kernel_model_from_state(const pt_dataset *view, const pt_train_params *p,
                                     const pt_train_state *st, pt_model **out);
/* One-vs-rest on the online path in lockstep: classes [c0, c1) from one pass over X per
 * epoch; W holds (c1 - c0) weight vectors of ds->stride floats, B their biases; reps one report
 * per class. states: one per class, where it starts (NULL: from scratch); on
 * PT_OK or PT_ERR_INTERRUPTED each is replaced by where the class then stands. */
pt_status pt_train_online_ovr(const pt_dataset *ds, const pt_train_params *p, const pt_kernels *k,
                              size_t c0, size_t c1, float *W, float *B, pt_train_report *reps,
                              pt_train_state **states);

/* The kernel path's AUTO storage (train_kernel.c) switches from rows to the full Gram when
 * the seconds spent on rows reach the Gram's estimated cost; seconds >= 0 replaces that
 * estimate in every later run of the process (the tests force the switch mid-epoch with it);
 * -1, the default, gives the estimate back. A test hook: not part of the public API. */
void pt_gram_set_switch_seconds(double seconds);

#endif /* PT_PATHS_H */
