/* ptron train's hooks into a run: SIGINT and SIGTERM as a stop request, the per-epoch hook
 * (checkpoints, held-out evaluation, early stopping) and the test hooks of the suites. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

/* SIGINT and SIGTERM request a stop of the run's token: one that comes before training
 * starts stops it at once, one that comes after is seen once the model is saved. */
static volatile sig_atomic_t got_signal;
static pt_stop *stop_token;

static void on_signal(int sig)
{
    got_signal = sig;
    if (stop_token) pt_stop_request(stop_token);
}

pt_status train_signals_install(pt_train_params *p)
{
    if (!(stop_token = pt_stop_create())) return PT_ERR_NOMEM;
    p->stop = stop_token;
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return PT_OK;
}

void train_signals_release(void)
{
    /* the handler (still installed) finds no token once it is gone */
    pt_stop *token = stop_token;
    stop_token = NULL;
    pt_stop_free(token);
}

int train_signal(void) { return got_signal; }

int train_signal_status(void) { return got_signal == SIGTERM ? EXIT_SIGTERM : EXIT_SIGINT; }

/* A checkpoint that cannot be written does not stop a long run: a warning names the file and
 * the reason (once, and again when the reason changes), training goes on, and the end of the
 * run says how many were lost. */
static void write_checkpoint(heldout *h, const pt_model *m, int epoch)
{
    if (pt_model_save(m, h->checkpoint) == PT_OK) {
        if (h->failed_checkpoints && h->checkpoint_error[0])
            fprintf(stderr, "ptron: checkpoint of epoch %d written to %s again\n", epoch,
                    h->checkpoint);
        h->checkpoints++;
        h->checkpoint_error[0] = '\0';
        return;
    }
    h->failed_checkpoints++;
    if (strcmp(h->checkpoint_error, cli_message(pt_last_error())) != 0) {
        snprintf(h->checkpoint_error, sizeof h->checkpoint_error, "%s", cli_message(pt_last_error()));
        fprintf(stderr, "ptron: warning: checkpoint of epoch %d not written: %s; training goes "
                        "on (the model is still written to -o at the end)\n",
                epoch, h->checkpoint_error);
    }
}

int train_on_epoch(const pt_model *m, int epoch, size_t mistakes, void *user)
{
    (void)mistakes;
    heldout *h = user;
    /* under mpirun every rank holds the same model here: rank 0 writes it */
    if (h->checkpoint && epoch % h->every == 0 && pt_dist_rank() == 0)
        write_checkpoint(h, m, epoch);
    if (!h->data) return 0;
    pt_eval ev;
    pt_status s = pt_model_evaluate(m, h->data, &ev);
    if (!h->epochs) h->first_epoch = epoch;
    double *a = s == PT_OK ? realloc(h->acc, (size_t)(h->epochs + 1) * sizeof *a) : NULL;
    if (s != PT_OK || !a) {
        h->error = s != PT_OK ? s : PT_ERR_NOMEM;
        return 1;
    }
    h->acc = a;
    h->acc[h->epochs++] = ev.accuracy;
    if (h->epochs == 1 || ev.accuracy > h->best) {
        h->best = ev.accuracy;
        h->best_epoch = epoch;
        if (h->patience > 0) {
            pt_model_free(h->best_model);
            if (!(h->best_model = pt_model_clone(m))) {
                h->error = PT_ERR_NOMEM;
                return 1;
            }
            pt_model_clear_run(h->best_model); /* the model kept is final, not a checkpoint */
        }
    }
    return h->patience > 0 && epoch - h->best_epoch >= h->patience;
}

/* Test hooks (tests/mpi/mpi.sh), not part of the CLI: PTRON_TEST_KILL_RANK=R:E kills rank R
 * with SIGKILL at the end of its epoch E, while the other ranks go on into the next epoch's
 * collectives: the run must end on every rank, with no model written. PTRON_TEST_STOP_RANK=R:E
 * makes rank R alone act as if SIGINT came at the end of epoch E: every rank must stop and
 * rank 0 write the model of the last mixed epoch. */
static int kill_rank = -1, kill_epoch, stop_rank = -1, stop_epoch;

static int progress_or_kill(int epoch, size_t mistakes, double seconds, void *user)
{
    if (epoch == kill_epoch && pt_dist_rank() == kill_rank) raise(SIGKILL);
    if (epoch == stop_epoch && pt_dist_rank() == stop_rank) on_signal(SIGINT);
    return progress_epoch(epoch, mistakes, seconds, user);
}

void train_test_hooks(pt_train_params *p)
{
    const char *kill_at = getenv("PTRON_TEST_KILL_RANK"), *stop_at = getenv("PTRON_TEST_STOP_RANK");
    if ((kill_at && sscanf(kill_at, "%d:%d", &kill_rank, &kill_epoch) == 2) ||
        (stop_at && sscanf(stop_at, "%d:%d", &stop_rank, &stop_epoch) == 2))
        p->progress = progress_or_kill;
}

/* Test hook (tests/test_cli.c), not part of the CLI: a signal that arrives once training is
 * over, during the final evaluation and save. */
void train_test_late_signal(void)
{
    const char *late = getenv("PTRON_TEST_SIGNAL_AFTER_TRAINING");
    if (late) raise(strcmp(late, "TERM") == 0 ? SIGTERM : SIGINT);
}
