/* The report of a run: its epochs appended one by one, a resumed run's start, a later stretch
 * of the same run appended, and clearing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "paths.h"

void pt_train_report_clear(pt_train_report *r)
{
    if (!r) return;
    free(r->mistakes_per_epoch);
    free(r->objective_per_epoch);
    free(r->seconds_per_epoch);
    free(r->comm_seconds_per_epoch);
    memset(r, 0, sizeof *r);
}

pt_status pt_report_push_epoch(pt_train_report *r, size_t mistakes, double objective)
{
    int e = r->epochs_run - r->epochs_before; /* entries so far */
    size_t *m = realloc(r->mistakes_per_epoch, (size_t)(e + 1) * sizeof *m);
    if (!m) return pt_fail(PT_ERR_NOMEM, "cannot grow the epoch report");
    r->mistakes_per_epoch = m;
    m[e] = mistakes;
    if (!isnan(objective)) {
        double *o = realloc(r->objective_per_epoch, (size_t)(e + 1) * sizeof *o);
        if (!o) return pt_fail(PT_ERR_NOMEM, "cannot grow the epoch report");
        r->objective_per_epoch = o;
        o[e] = objective;
    }
    /* the time the epoch ended; pt_train turns these into durations. NULL after the first
     * entry means the timing was dropped (one-vs-rest merges) and stays so. */
    if (e == 0 || r->seconds_per_epoch) {
        double *t = realloc(r->seconds_per_epoch, (size_t)(e + 1) * sizeof *t);
        if (!t) return pt_fail(PT_ERR_NOMEM, "cannot grow the epoch report");
        r->seconds_per_epoch = t;
        t[e] = pt_now();
    }
    /* a distributed run: the communication seconds so far; pt_train turns them into each
     * epoch's */
    if (pt_dist_size() > 1 && (e == 0 || r->comm_seconds_per_epoch)) {
        double *c = realloc(r->comm_seconds_per_epoch, (size_t)(e + 1) * sizeof *c);
        if (!c) return pt_fail(PT_ERR_NOMEM, "cannot grow the epoch report");
        r->comm_seconds_per_epoch = c;
        c[e] = pt_dist_comm_seconds();
    }
    r->epochs_run++;
    return PT_OK;
}

void pt_report_resume(pt_train_report *r, const pt_train_state *from)
{
    r->epochs_before = r->epochs_run = from->epochs_done;
    r->updates = from->updates;
    r->converged = from->finished && from->nhist > 0 && from->hist[from->nhist - 1] == 0;
}

pt_status pt_report_append(pt_train_report *r, pt_train_report *part)
{
    if (!r->mistakes_per_epoch && r->epochs_run == 0) {
        /* nothing recorded yet: part is the whole report */
        *r = *part;
        memset(part, 0, sizeof *part);
        return PT_OK;
    }
    int add = part->epochs_run - part->epochs_before, have = r->epochs_run - r->epochs_before;
    for (int e = 0; e < add; e++) {
        double obj = part->objective_per_epoch ? part->objective_per_epoch[e] : NAN;
        PT_TRY(pt_report_push_epoch(r, part->mistakes_per_epoch[e], obj));
        if (r->seconds_per_epoch && part->seconds_per_epoch)
            r->seconds_per_epoch[have + e] = part->seconds_per_epoch[e];
    }
    r->updates = part->updates;
    r->converged = part->converged;
    pt_train_report_clear(part);
    return PT_OK;
}
