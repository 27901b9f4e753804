/*
 * The model of the last epoch a run read whole, for a run on a mapped dataset whose file may
 * shrink under it (pt_guard: the part that went then reads as zeros). The run's epoch hook is
 * this file's: at the end of every epoch the data was still whole at, it copies the hook's
 * model (a checkpoint of that epoch: resumable), then calls the caller's hook; once the data
 * is damaged it does neither (an epoch that read zeros is no checkpoint, and the caller would
 * write it as one). pt_train hands the copy back when the file shrank, never the model trained
 * on zeros.
 *
 * A copy costs what the model holds: nothing to speak of for a linear model, more for the
 * voted perceptron's vectors or a kernel model's. So an epoch is copied only while the copies
 * so far took at most COPY_SHARE of the run's time: the model kept may then be a few epochs
 * older than the last whole one, and says which it is (its epochs_run).
 */
#include <stdlib.h>

#include "model.h"

#define COPY_SHARE (1.0 / 16.0)

void pt_epoch_keep_start(pt_epoch_keep *k, const pt_guard *g, pt_train_params *p)
{
    *k = (pt_epoch_keep){.guard = g, .hook = p->epoch_hook, .user = p->epoch_user,
                         .t0 = pt_now()};
    pthread_mutex_init(&k->lock, NULL);
    p->epoch_hook = pt_epoch_keep_hook;
    p->epoch_user = k;
}

int pt_epoch_keep_hook(const pt_model *m, int epoch, size_t mistakes, void *user)
{
    pt_epoch_keep *k = user;
    if (pt_guard_damaged(k->guard)) return 0; /* (the run stops on its own: pt_stop.fault) */
    pthread_mutex_lock(&k->lock);
    const double t = pt_now();
    if (!k->kept || k->copy_seconds <= (t - k->t0) * COPY_SHARE) {
        pt_model *c = pt_model_clone(m);
        if (c) { /* (out of memory: the older copy stays) */
            pt_model_free(k->kept);
            k->kept = c;
        }
        k->copy_seconds += pt_now() - t;
    }
    pthread_mutex_unlock(&k->lock);
    return k->hook ? k->hook(m, epoch, mistakes, k->user) : 0;
}

pt_model *pt_epoch_keep_take(pt_epoch_keep *k)
{
    pt_model *m = k->kept;
    k->kept = NULL;
    return m;
}

void pt_epoch_keep_end(pt_epoch_keep *k)
{
    pt_model_free(k->kept);
    k->kept = NULL;
    pthread_mutex_destroy(&k->lock);
}
