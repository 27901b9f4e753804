/*
 * The bottom layer, what every other uses: errors, memory, threads, the clock, the C locale,
 * random numbers, atomic files and checksums, stop tokens, crews of threads. Not installed.
 */
#ifndef PT_COMMON_H
#define PT_COMMON_H

#include "ptron.h"

#include <locale.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ----------------------------------------------------------------- errors (error.c) */

/* Record the detailed message for pt_last_error() and return the status, so a failing
 * path reads `return pt_fail(PT_ERR_PARSE, "%s:%zu: bad index", path, line);`. */
pt_status pt_fail(pt_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefix the current message with "what: " (used when an inner call fails). */
pt_status pt_fail_prefix(pt_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pt_clear_error(void);
/* PT_OK if a parameter struct's struct_size is this library's, else PT_ERR_INVALID saying to
 * start it with its _init (see ptron.h). Read nothing else of a struct before this. */
pt_status pt_check_struct_size(const char *type, size_t got, size_t want);
#define PT_CHECK_STRUCT(p, type) pt_check_struct_size(#type, (p)->struct_size, sizeof(type))
void pt_log(pt_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define PT_TRY(expr)                                                                               \
    do {                                                                                           \
        pt_status pt_try_s_ = (expr);                                                              \
        if (pt_try_s_ != PT_OK) return pt_try_s_;                                                  \
    } while (0)

/* ------------------------------------------------------------------- memory (mem.c) */

/* 64-byte aligned allocation; large ones ask for transparent huge pages, because the first
 * touch of a fresh 4 KiB page is expensive under virtualisation (docs/design.md). what names the
 * buffer in the failure message ("feature matrix"). Returns NULL and sets pt_last_error on
 * failure. */
void *pt_alloc(size_t bytes, const char *what);
void *pt_calloc(size_t bytes, const char *what); /* zeroed */
void pt_free(void *p);
/* a * b with overflow check; returns false on overflow. */
bool pt_mul_ok(size_t a, size_t b, size_t *out);
size_t pt_round_up(size_t x, size_t to);
size_t pt_physical_memory(void);      /* bytes of RAM */
size_t pt_default_mem_budget(void);   /* half of RAM */
/* The least memory budget a run takes (pt_train_params.mem_budget_bytes): 1 MiB, the least
 * the CLI's --mem-mb can give. */
#define PT_MIN_MEM_BUDGET ((size_t)1 << 20)
/* The most threads a run takes (pt_train_params.threads), as the CLI's --threads. */
#define PT_MAX_THREADS 4096
int pt_threads_resolve(int requested); /* 0 -> all cores */
/* The thread counts a call runs with: the calling thread's OpenMP count (what its parallel
 * regions and OpenBLAS, built for OpenMP, use) and OpenBLAS's process-wide count, set by
 * pt_threads_enter and put back as they were by pt_threads_leave. Inside a parallel region
 * both do nothing (OpenBLAS runs on one thread there, and nested regions are off). */
typedef struct pt_thread_counts {
    int omp, blas;
    bool set;
} pt_thread_counts;
pt_thread_counts pt_threads_enter(int threads);
void pt_threads_leave(pt_thread_counts saved);

/* -------------------------------------------------------------------- clock (clock.c) */

double pt_now(void); /* monotonic seconds */

/* ----------------------------------------------------------- the C locale (locale.c) */

/* The "C" locale object, for strtof_l and strtod_l. */
locale_t pt_c_locale(void);
/* Switch the calling thread to the C locale, for printf and strtod; give the value returned
 * to pt_c_locale_leave to switch back. */
locale_t pt_c_locale_enter(void);
void pt_c_locale_leave(locale_t old);

/* ------------------------------------------------------- random numbers (rng.c) */

/* xoshiro256**: fast, and bit-identical on every machine. */
typedef struct pt_rng {
    uint64_t s[4];
} pt_rng;

void pt_rng_seed(pt_rng *r, uint64_t seed);
uint64_t pt_rng_next(pt_rng *r);
double pt_rng_uniform(pt_rng *r);               /* [0, 1) */
double pt_rng_normal(pt_rng *r);                /* N(0, 1), Box-Muller */
uint64_t pt_rng_below(pt_rng *r, uint64_t n);   /* [0, n), unbiased */
void pt_rng_shuffle(pt_rng *r, uint32_t *a, size_t n); /* Fisher-Yates */
/* The order of an epoch in chunks of `chunk` consecutive rows (pt_train_params.shuffle_chunk):
 * a[0..n) becomes a fresh order in which the chunks come in an order shuffled by r (Fisher-Yates
 * over the chunk indices) and then, chunk after chunk in that order, the rows of each chunk are
 * shuffled by r; the last chunk may be shorter. chunk 0: pt_rng_shuffle(r, a, n); a chunk of
 * n rows or more: one chunk, the whole order shuffled as by chunk n. */
void pt_rng_shuffle_chunks(pt_rng *r, uint32_t *a, size_t n, size_t chunk);

/* ------------------------------------------------------ atomic files (atomic_file.c) */

/* Write a file atomically without changing what path is: symlinks are followed to their final
 * target, and a regular file there (or none) is replaced whole: "TARGET.tmp.PID.N" (N unique
 * to each write of the process, threads included) is opened beside it, filled by write_fn,
 * every write checked, fflush + fsync, then renamed over it (and the directory fsync'd); an
 * existing file's permissions carry over. On any failure the temporary file is removed and
 * the target is left as it was. A character or block device or a FIFO is written through as
 * it is (no temporary file; opening a FIFO waits for a reader); a directory, socket or other
 * kind of file is refused. Messages name path, as given. Temporaries of TARGET that killed
 * writers left behind (named for a PID no process has, and unlocked: a writer holds flock on
 * its temporary) are removed before a write, a live writer's never. */
typedef pt_status (*pt_write_fn)(FILE *f, const void *ctx);
pt_status pt_write_atomic(const char *path, pt_write_fn fn, const void *ctx);

/* Checksum used by .ptd and model files (XXH3 64-bit). */
uint64_t pt_checksum(const void *data, size_t len);
/* The same checksum over bytes given piece by piece: begin (NULL when out of memory), update
 * with each piece in order, end (frees the state). */
void *pt_checksum_begin(void);
void pt_checksum_update(void *state, const void *data, size_t len);
uint64_t pt_checksum_end(void *state);

/* ---------------------------------------------------------------- crews (crew.c) */

/* A team of threads - 1 helper threads that sleep between jobs (not an OpenMP team: crew.c
 * says why), and the calling thread. A job runs fn(arg, k) for k in [0, ntasks), the tasks
 * taken in turn by whichever thread is free; pt_crew_run returns once every task is done.
 * pt_crew_start gives NULL for one thread, inside an OpenMP parallel region, or when out of
 * memory: pt_crew_run(NULL, ...) runs the tasks in order on the calling thread. */
typedef struct pt_crew pt_crew;
typedef void (*pt_crew_task)(void *arg, size_t k);
pt_crew *pt_crew_start(int threads);
void pt_crew_run(pt_crew *c, pt_crew_task fn, void *arg, size_t ntasks);
void pt_crew_stop(pt_crew *c); /* NULL: nothing */

/* ------------------------------------------------------ guarded mappings (guard.c) */

/* A file mapping the library reads as input, guarded against the file shrinking under it: a
 * read of the part that went (SIGBUS) marks it damaged and reads zeros instead of killing the
 * process (guard.c says how). NULL where it cannot be guarded (every function takes NULL:
 * never damaged). path names the file in messages. pt_guard_release before munmap. */
typedef struct pt_guard pt_guard;
pt_guard *pt_guard_map(const void *addr, size_t len, const char *path);
void pt_guard_release(pt_guard *g);
bool pt_guard_damaged(const pt_guard *g);
/* The mark itself (NULL for NULL), for a stop token to poll (pt_stop.fault). */
const atomic_int *pt_guard_flag(const pt_guard *g);
const char *pt_guard_path(const pt_guard *g);
/* PT_OK while undamaged; else PT_ERR_IO "PATH: file shrank while being read (...)". */
pt_status pt_guard_check(const pt_guard *g);

/* ---------------------------------------------------------------- stopping (stop.c) */

/* A stop token (ptron.h). Each pt_train call arms one of its own over the caller's token and
 * hands the paths params whose stop is that call's: the paths poll pt_stopping(p->stop)
 * between samples (or blocks, or kernel rows), and nothing else in the process stops them. */
struct pt_stop {
    atomic_int requested;  /* pt_stop_request on this token */
    const pt_stop *caller; /* a call's token: the caller's (pt_train_params.stop), or NULL */
    unsigned generation;   /* pt_request_stop's count when the token was made or armed */
    const atomic_int *fault; /* a call's: its data's damage mark (pt_guard_flag), or NULL */
};

/* How many times pt_request_stop was called: a call stops when it moves. */
extern atomic_uint pt_stop_generation;

/* Make *call a call's own token over the caller's (NULL: none). */
void pt_stop_arm(pt_stop *call, const pt_stop *caller);

/* Whether the call that owns this token must stop (NULL: a call that cannot be stopped). */
static inline bool pt_stopping(const pt_stop *s)
{
    return s && (atomic_load_explicit(&s->requested, memory_order_relaxed) ||
                 (s->caller && atomic_load_explicit(&s->caller->requested, memory_order_relaxed)) ||
                 (s->fault && atomic_load_explicit(s->fault, memory_order_relaxed)) ||
                 atomic_load_explicit(&pt_stop_generation, memory_order_relaxed) != s->generation);
}

#endif /* PT_COMMON_H */
