/* The end of an epoch, one function for every path: record it, check the weights, then the
 * caller's progress callback and epoch hook. */
#include <math.h>

#include "paths.h"

static bool all_finite(const pt_epoch_ending *e, double objective)
{
    if (e->check_objective && !isfinite(objective)) return false;
    for (size_t j = 0; j < e->nb; j++)
        if (!isfinite(e->b[j])) return false;
    for (size_t j = 0; j < e->nw; j++)
        if (!isfinite(e->w[j])) return false;
    return true;
}

pt_status pt_epoch_end(const pt_epoch_ending *e, int epoch, size_t mistakes, double objective,
                       bool finished, bool *done, bool *stop)
{
    *done = *stop = false;
    if (e->r) PT_TRY(pt_report_push_epoch(e->r, mistakes, objective));
    if (!all_finite(e, objective))
        return pt_fail(PT_ERR_NUMERIC, "%s became non-finite in epoch %d: %s", e->what, epoch,
                       e->hint);
    *done = true;
    const pt_train_params *p = e->p;
    if (!p) return PT_OK;
    if (p->progress && p->progress(epoch, mistakes, pt_now() - e->t0, p->progress_user))
        return pt_fail(PT_ERR_INTERRUPTED, "stopped by the progress callback after epoch %d",
                       epoch);
    if (!p->epoch_hook || !e->snapshot) return PT_OK;
    pt_model *m = NULL;
    PT_TRY(e->snapshot(e->path, epoch, finished, &m));
    *stop = p->epoch_hook(m, epoch, mistakes, p->epoch_user) != 0;
    if (e->release) e->release(e->path, m);
    return PT_OK;
}
