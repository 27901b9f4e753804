/* Crews: a fixed team of helper threads that sleep between jobs, for passes that run many
 * times a run (the batch path's fused pass, once per block).
 *
 * Not an OpenMP team: libgomp's threads spin before they sleep (300,000 rounds, milliseconds)
 * at a region's end and between regions, and on a machine shared with other work a spinning
 * thread holds the core that the thread with the last task waits for: two threads then took
 * longer than one on the fused batch pass (bench batch/iteration/impl:fused/threads:2 on a
 * loaded machine; docs/design.md, "The batch path"). A helper here sleeps at once and leaves
 * its core to the others. A job's tasks are taken in turn (a dynamic schedule: a thread that
 * loses its core leaves its tasks to the others), and the caller goes on once every task is
 * done, whether or not a helper has woken up meanwhile. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "common.h"

#define MAX_HELPERS 63

struct pt_crew {
    pthread_mutex_t lock;
    pthread_cond_t posted; /* a job was posted, or quit */
    pthread_cond_t ended;  /* the job's last task is done */
    /* the job's number (high 32 bits) and its next task (low 32): a helper still in an
     * earlier job can take no task of this one */
    _Atomic uint64_t take;
    atomic_size_t done;    /* tasks of the job done */
    uint32_t job;          /* jobs posted (under the lock, as is the job below) */
    pt_crew_task fn;
    void *arg;
    size_t ntasks;
    bool quit;
    int helpers;
    pthread_t th[MAX_HELPERS];
};

/* The next task of job j (n tasks), or SIZE_MAX when none is left. */
static size_t crew_take(pt_crew *c, uint32_t j, size_t n)
{
    uint64_t v = atomic_load(&c->take);
    for (;;) {
        if ((uint32_t)(v >> 32) != j || (v & UINT32_MAX) >= n) return SIZE_MAX;
        if (atomic_compare_exchange_weak(&c->take, &v, v + 1)) return (size_t)(v & UINT32_MAX);
    }
}

/* Take and run tasks of job j until none is left; the last one done wakes the caller. */
static void crew_work(pt_crew *c, uint32_t j, pt_crew_task fn, void *arg, size_t n)
{
    for (size_t k; (k = crew_take(c, j, n)) != SIZE_MAX;) {
        fn(arg, k);
        if (atomic_fetch_add(&c->done, 1) + 1 == n) {
            pthread_mutex_lock(&c->lock);
            pthread_cond_signal(&c->ended);
            pthread_mutex_unlock(&c->lock);
        }
    }
}

static void *crew_main(void *self)
{
    pt_crew *c = self;
    uint32_t seen = 0;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (!c->quit && c->job == seen) pthread_cond_wait(&c->posted, &c->lock);
        if (c->quit) break;
        seen = c->job;
        pt_crew_task fn = c->fn;
        void *arg = c->arg;
        const size_t n = c->ntasks;
        pthread_mutex_unlock(&c->lock);
        crew_work(c, seen, fn, arg, n);
        pthread_mutex_lock(&c->lock);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

pt_crew *pt_crew_start(int threads)
{
    int helpers = threads - 1;
#ifdef _OPENMP
    /* nested threads would oversubscribe the cores, as OpenMP's default of no nesting avoids */
    if (omp_in_parallel()) helpers = 0;
#endif
    if (helpers > MAX_HELPERS) helpers = MAX_HELPERS;
    if (helpers < 1) return NULL;
    pt_crew *c = calloc(1, sizeof *c);
    if (!c) return NULL; /* the jobs run on the calling thread alone */
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->posted, NULL);
    pthread_cond_init(&c->ended, NULL);
    while (c->helpers < helpers && pthread_create(&c->th[c->helpers], NULL, crew_main, c) == 0)
        c->helpers++;
    return c;
}

void pt_crew_stop(pt_crew *c)
{
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    c->quit = true;
    pthread_cond_broadcast(&c->posted);
    pthread_mutex_unlock(&c->lock);
    for (int h = 0; h < c->helpers; h++) pthread_join(c->th[h], NULL);
    pthread_cond_destroy(&c->ended);
    pthread_cond_destroy(&c->posted);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

void pt_crew_run(pt_crew *c, pt_crew_task fn, void *arg, size_t ntasks)
{
    if (!c || ntasks < 2) {
        for (size_t k = 0; k < ntasks; k++) fn(arg, k);
        return;
    }
    pthread_mutex_lock(&c->lock);
    c->fn = fn;
    c->arg = arg;
    c->ntasks = ntasks;
    atomic_store(&c->done, 0);
    const uint32_t j = ++c->job;
    atomic_store(&c->take, (uint64_t)j << 32);
    pthread_cond_broadcast(&c->posted);
    pthread_mutex_unlock(&c->lock);
    crew_work(c, j, fn, arg, ntasks);
    if (atomic_load(&c->done) < ntasks) {
        pthread_mutex_lock(&c->lock);
        while (atomic_load(&c->done) < ntasks) pthread_cond_wait(&c->ended, &c->lock);
        pthread_mutex_unlock(&c->lock);
    }
}
