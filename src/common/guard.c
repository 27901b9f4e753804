/*
 * Guarded mappings: files the library maps as inputs (.ptd datasets, CSV text), kept from
 * killing the process when they shrink under it.
 *
 * Reading a page of a file mapping past the file's end raises SIGBUS, which by default ends the
 * process with nothing said and nothing saved. Another process that truncates or rewrites the
 * file (a new write of it through O_TRUNC, a `truncate`) causes exactly that, at any time. While
 * a mapping is registered here, the SIGBUS handler this file installs takes a fault inside it:
 * it marks the mapping damaged, then maps zero pages (anonymous, MAP_FIXED) over the mapping
 * from the faulting page to its end, and returns, so the read that faulted reads zeros and so
 * does every later one of the part that went. The readers and pt_train look at the mark and fail
 * naming the file; what was computed from the zeros is never handed out as the data's (see
 * pt_train in ptron.h). Threads that fault at once each map the zeros; that is the same result.
 *
 * The handler is installed when the first mapping is registered and put back as it was when
 * the last one goes (unless another handler was installed over it meanwhile: it then stays, and
 * keeps chaining). A SIGBUS outside every registered mapping goes to the handler that was there
 * before, or, where there was none, ends the process as it would have.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

/* The handler reads the slots: that takes lock-free atomics. */
_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
               "the SIGBUS handler needs lock-free atomics");

/* Mappings registered at once at most (datasets and texts open together); one more is left
 * unguarded, as every mapping was before. */
#define MAX_GUARDS 256

/* A slot: the mapping [lo, hi) while used. The handler reads it without a lock (a signal
 * handler cannot take one), so lo and hi change only under a sequence count (odd while they
 * change; a seqlock): a reader that saw the count move, or odd, skips the slot, which is then
 * no mapping that can fault (it is being registered or released). */
static struct slot {
    atomic_uint seq;
    atomic_uintptr_t lo, hi;
    atomic_int damaged;
    atomic_bool used;
} slots[MAX_GUARDS];

/* Set a slot's range (0, 0: none). Under install_lock. */
static void set_range(struct slot *s, uintptr_t lo, uintptr_t hi)
{
    atomic_fetch_add(&s->seq, 1);
    atomic_store(&s->lo, lo);
    atomic_store(&s->hi, hi);
    atomic_fetch_add(&s->seq, 1);
}

/* Whether a lies in slot s's mapping, read whole (*lo, *hi set then). */
static bool slot_holds(struct slot *s, uintptr_t a, uintptr_t *lo, uintptr_t *hi)
{
    const unsigned before_seq = atomic_load(&s->seq);
    if ((before_seq & 1) || !atomic_load(&s->used)) return false;
    *lo = atomic_load(&s->lo);
    *hi = atomic_load(&s->hi);
    return atomic_load(&s->seq) == before_seq && a >= *lo && a < *hi;
}

struct pt_guard {
    struct slot *slot;
    char *path;
};

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t registered;       /* under install_lock */
static struct sigaction before; /* the SIGBUS action replaced (read by the handler) */

/* A fault that is not in a guarded mapping: as the handler before would have taken it. */
static void chain(int sig, siginfo_t *si, void *ctx)
{
    if (before.sa_flags & SA_SIGINFO) {
        before.sa_sigaction(sig, si, ctx);
        return;
    }
    if (before.sa_handler != SIG_DFL && before.sa_handler != SIG_IGN) {
        before.sa_handler(sig);
        return;
    }
    /* the default: back to it, and the fault repeats on return (a signal sent by kill is
     * raised again: it stays blocked until the handler returns) */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGBUS, &dfl, NULL);
    if (si->si_code <= 0) raise(sig);
}

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
    const int saved_errno = errno;
    const uintptr_t a = (uintptr_t)si->si_addr;
    const long pg = sysconf(_SC_PAGESIZE);
    const uintptr_t page = pg > 0 ? (uintptr_t)pg : 4096;
    for (size_t k = 0; si->si_code > 0 && k < MAX_GUARDS; k++) {
        struct slot *s = &slots[k];
        uintptr_t lo, hi;
        if (!slot_holds(s, a, &lo, &hi)) continue;
        /* marked first: whoever reads a zero from here on finds the mark set */
        atomic_store(&s->damaged, 1);
        const uintptr_t from = a - (a - lo) % page;
        void *z = mmap((void *)from, hi - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                       -1, 0);
        errno = saved_errno;
        if (z != MAP_FAILED) return;
        break; /* (cannot map: the fault stays fatal) */
    }
    errno = saved_errno;
    chain(sig, si, ctx);
}

/* Install the handler (the first mapping), or put the one before back (the last). Under
 * install_lock. */
static void install(bool on)
{
    struct sigaction sa, now;
    if (on) {
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGBUS, &sa, &before);
        return;
    }
    if (sigaction(SIGBUS, NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
        now.sa_sigaction == on_sigbus)
        sigaction(SIGBUS, &before, NULL);
}

pt_guard *pt_guard_map(const void *addr, size_t len, const char *path)
{
    if (!addr || len == 0) return NULL;
    pt_guard *g = calloc(1, sizeof *g);
    char *name = strdup(path ? path : "");
    if (!g || !name) {
        free(g);
        free(name);
        return NULL; /* (unguarded: as before) */
    }
    pthread_mutex_lock(&install_lock);
    for (size_t k = 0; k < MAX_GUARDS && !g->slot; k++) {
        struct slot *s = &slots[k];
        if (atomic_load(&s->used)) continue;
        atomic_store(&s->damaged, 0);
        set_range(s, (uintptr_t)addr, (uintptr_t)addr + len);
        atomic_store(&s->used, true);
        g->slot = s;
    }
    if (g->slot && registered++ == 0) install(true);
    pthread_mutex_unlock(&install_lock);
    if (!g->slot) {
        free(name);
        free(g);
        return NULL;
    }
    g->path = name;
    return g;
}

void pt_guard_release(pt_guard *g)
{
    if (!g) return;
    pthread_mutex_lock(&install_lock);
    atomic_store(&g->slot->used, false);
    set_range(g->slot, 0, 0);
    if (--registered == 0) install(false);
    pthread_mutex_unlock(&install_lock);
    free(g->path);
    free(g);
}

bool pt_guard_damaged(const pt_guard *g)
{
    return g && atomic_load_explicit(&g->slot->damaged, memory_order_acquire);
}

const atomic_int *pt_guard_flag(const pt_guard *g) { return g ? &g->slot->damaged : NULL; }

const char *pt_guard_path(const pt_guard *g) { return g ? g->path : ""; }

pt_status pt_guard_check(const pt_guard *g)
{
    if (!pt_guard_damaged(g)) return PT_OK;
    return pt_fail(PT_ERR_IO, "%s: file shrank while being read (truncated or rewritten by "
                   "another process?)", g->path);
}
