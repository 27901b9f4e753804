/* Stop tokens: the stop state each pt_train call polls, and the process-wide request. */
#include <stdlib.h>

#include "common.h"

/* A signal handler may request a stop: that takes lock-free atomics. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "pt_stop_request needs lock-free atomic ints");

atomic_uint pt_stop_generation;

void pt_request_stop(void)
{
    atomic_fetch_add_explicit(&pt_stop_generation, 1, memory_order_relaxed);
}

void pt_stop_arm(pt_stop *call, const pt_stop *caller)
{
    atomic_init(&call->requested, 0);
    call->caller = caller;
    call->fault = NULL;
    call->generation = atomic_load_explicit(&pt_stop_generation, memory_order_relaxed);
}

pt_stop *pt_stop_create(void)
{
    pt_stop *s = malloc(sizeof *s);
    if (!s) {
        pt_fail(PT_ERR_NOMEM, "cannot allocate a stop token");
        return NULL;
    }
    pt_stop_arm(s, NULL);
    return s;
}

void pt_stop_free(pt_stop *s) { free(s); }

void pt_stop_request(pt_stop *s) { atomic_store_explicit(&s->requested, 1, memory_order_relaxed); }

int pt_stop_is_requested(const pt_stop *s)
{
    return atomic_load_explicit(&s->requested, memory_order_relaxed);
}

void pt_stop_reset(pt_stop *s) { atomic_store_explicit(&s->requested, 0, memory_order_relaxed); }
