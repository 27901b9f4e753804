/* ptron train's own pieces, shared by its files only (cmd_train.c runs a call through them):
 *   train_args.c    the command line into train_opts and pt_train_params
 *   train_resume.c  the options that contradict the run --resume continues
 *   train_setup.c   what a run starts from (--resume, --init, --class-weight, --bounds), the
 *                   checks of a distributed run, --search and --cv
 *   train_hooks.c   signals, the per-epoch hook (checkpoints, --test, --early-stop), test hooks
 *   train_output.c  the report of a run that trained (--json or the text summary) */
#ifndef PT_CLI_TRAIN_H
#define PT_CLI_TRAIN_H

#include "cli.h"

/* The options of ptron train given explicitly on the command line, as typed (train_resume.c):
 * an option of a run parameter given with --resume must agree with the saved run. */
#define TRAIN_GIVEN_MAX 128
typedef struct train_option_given {
    const char *opt, *value; /* value NULL for a flag */
} train_option_given;
typedef struct train_given {
    int n;
    train_option_given at[TRAIN_GIVEN_MAX];
} train_given;

/* The options of the call that are not training parameters. */
typedef struct train_opts {
    const char *file, *model, *format, *reference, *test, *checkpoint, *resume, *init;
    const char *class_weight; /* --class-weight balanced|LABEL:W,... */
    size_t max_features;
    size_t cv; /* --cv K: K-fold cross-validation, no model written */
    long early_stop, checkpoint_every;
    bool epochs_given, batch_size_given, last_iterate, search, proba;
    bool json, quiet, bounds;
    bool train_accuracy; /* --train-accuracy: even where it would cost more than training */
    train_given given; /* the options as typed: --resume checks them against the saved run */
} train_opts;

/* Held-out evaluation after each epoch (--test), and early stopping (--early-stop N): stop
 * when the held-out accuracy has not improved for N epochs, and keep the best model. The same
 * hook writes the checkpoints. */
typedef struct heldout {
    const char *checkpoint; /* --checkpoint FILE, written every `every` epochs */
    long every;
    int checkpoints, failed_checkpoints; /* written, and not written (warned) */
    char checkpoint_error[512];
    pt_dataset *data;
    long patience;
    double *acc;     /* per epoch from first_epoch */
    int first_epoch; /* the first epoch evaluated (a resumed run starts after its earlier ones) */
    int epochs;      /* evaluated */
    double best;
    int best_epoch;
    pt_model *best_model;
    pt_status error;
    bool at_end; /* evaluated once after training, not per epoch */
} heldout;

/* What a run that trained reports (--json or the text summary). */
typedef struct train_result {
    const train_opts *o;
    const pt_train_params *p;
    float gamma_asked; /* p->gamma as given: a number or a rule (p->gamma: the number used) */
    size_t n_support;  /* kernel models: support vectors (all classes) */
    const pt_train_report *rep;
    size_t n, d;
    pt_dataset_info data; /* the training data as read: layout, nnz, density, bytes */
    double load_s;
    double eval_s, write_s; /* the training accuracy's pass; the model's save */
    const pt_eval *ev;     /* on the training data */
    const char *ev_skipped; /* why the training accuracy was not computed, or NULL */
    const heldout *held;   /* --test */
    bool interrupted, stopped_early;
    const pt_run_bounds *b; /* --bounds, or NULL */
    const pt_model *m;      /* the model written */
} train_result;

/* train_args.c: the command line into o and p, checked (p by pt_train_params_check too).
 * Returns EXIT_OK to go on, else the exit status (a usage error printed). */
int train_parse(int argc, char **argv, train_opts *o, pt_train_params *p);

/* train_resume.c */
void train_given_note(train_given *g, const char *opt, const char *value);
/* EXIT_OK when every option given sets its run parameter (in asked, the parameters the command
 * line made) to the saved run's value (saved, from the model file resume), else a usage error
 * naming the option and the saved value. */
int train_resume_agrees(const train_given *g, const pt_train_params *asked,
                        const pt_train_params *saved, const char *resume);

/* train_setup.c: each returns EXIT_OK to go on, else the exit status (its message printed). */
int train_load_resume(const train_opts *o, pt_train_params *p, pt_model **resume);
int train_class_weights(const train_opts *o, const pt_dataset *ds, pt_train_params *p,
                        float **weights);
int train_load_init(const train_opts *o, const pt_dataset *ds, pt_train_params *p,
                    pt_model **init);
int train_bounds_reference(const pt_dataset *ds, const pt_train_params *p, const train_opts *o,
                           pt_model **ref, bool *want);
int train_refuse_distributed(const train_opts *o, const pt_train_params *p);
int train_agree_options(const train_opts *o, const pt_train_params *p, int rc);
/* --search and --cv: the whole call (no model); the exit status. */
int train_search(const train_opts *o, const pt_dataset *ds, const pt_train_params *base);
int train_cross_validate(const train_opts *o, const pt_dataset *ds, const pt_train_params *p);

/* train_hooks.c */
/* From here on SIGINT and SIGTERM ask the run of p to stop (p->stop); PT_ERR_NOMEM if the
 * stop token cannot be made. train_signals_release drops the token (the handlers stay). */
pt_status train_signals_install(pt_train_params *p);
void train_signals_release(void);
/* The signal that asked the run to stop (SIGINT or SIGTERM), 0 if none came. */
int train_signal(void);
/* The exit status of a run stopped by a signal. */
int train_signal_status(void);
/* pt_train_params.epoch_hook with a heldout as user: checkpoints, --test, --early-stop. */
int train_on_epoch(const pt_model *m, int epoch, size_t mistakes, void *user);
/* The test hooks of the environment (tests/mpi, tests/test_cli.c), not part of the CLI:
 * PTRON_TEST_KILL_RANK and PTRON_TEST_STOP_RANK wrap p->progress; the signal of
 * PTRON_TEST_SIGNAL_AFTER_TRAINING is raised by train_test_late_signal. */
void train_test_hooks(pt_train_params *p);
void train_test_late_signal(void);

/* train_output.c */
void train_print_json(const train_result *t);
void train_print_text(const train_result *t);

#endif
