/*
 * The window of a streamed dataset (pt_dataset_streamed): a .ptd file's matrix mapped without
 * being read in, walked a window of rows at a time, so that what stays resident is about one
 * window per walker, whatever the file's size.
 *
 * How a window's pages arrive is measured once per dataset (probe_arrival, on the first window:
 * each way timed on the same 4 MiB of the file, the cheapest kept), because which is cheapest
 * depends on the kernel more than on the hardware:
 *  - faults: the walker reads the mapping and the kernel maps the page cache's pages as it
 *    faults (MADV_WILLNEED as a window begins starts the read-ahead of a file not in the page
 *    cache), MADV_DONTNEED as it ends. On kernels where ext4 has large folios a fault maps a
 *    whole folio, and a walk of the page cache so runs close to the in-memory walk, well ahead
 *    of a copy (docs/design.md, "Streaming").
 *  - copied (dense float32 only): a window's rows are read (pread) into a buffer of the
 *    walker's, and pt_window_row points there; a reader thread reads the next window (the rows
 *    after, or the one the walker names) into a second buffer while the walker works on this
 *    one. A walk in file order (no rows of its own) reads ahead only while the reader keeps up:
 *    once it reaches a window not read yet (the reader thread has no core of its own on a busy
 *    machine, or copies slower than the walker computes), it reads pieces of PIECE_BYTES in
 *    place for the rest of the walk, each into the same buffer, which stays in the core's L2; a
 *    walk of a range of rows (the batch path's chunks, shorter than a window or two) reads in
 *    place from the start. Where the kernel maps the page cache a 4 KiB page at a time (faults
 *    or MADV_POPULATE_READ alike), mapping costs several times the copy, and this is the way.
 *  - populated: the walker reads the mapping, MADV_POPULATE_READ (WILLNEED where the kernel
 *    lacks it) as a window begins, MADV_DONTNEED as it ends: where faults cost more than one
 *    populate call and no copy can be made (sparse and compact rows).
 *
 * Dropping file pages is always safe: the mapping is private and read-only, so a dropped page
 * holds nothing but the file's bytes, and a later read (another thread's at a window's edge, or
 * code that reads the rows in its own order) faults them back in from the page cache. So
 * advice ranges are rounded outward to whole pages, and threads may drop ranges that touch.
 */
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "data.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/* Cleared when the kernel refuses MADV_POPULATE_READ (before Linux 5.14): WILLNEED then. */
static atomic_bool populate_works = true;

/* How a window's pages arrive (see the top); ARRIVE_UNKNOWN until the first window probes. */
enum { ARRIVE_UNKNOWN, ARRIVE_COPY, ARRIVE_POPULATE, ARRIVE_FAULT };
/* Map jobs waiting for the reader thread at most (queue_job). */
#define MAX_JOBS 4
#define DROPS_WAITING 2
/* The bytes the probe times each way: enough pages (1,024) for a fault's cost to show, few
 * enough to cost a few milliseconds once. */
#define PROBE_BYTES ((size_t)4 << 20)

/* Buffers: each walker holds its window's and the next one's (the batch path's threads walk
 * at once). */
#define MAX_BUFFERS 16
/* The bytes of a piece read in place: within any core's L2 (256 KiB on the smallest). */
#define PIECE_BYTES ((size_t)256 << 10)

/* A buffer's state: free, held by a walker, queued for the reader thread, being read, read
 * (or not: failed) and waiting for its walker. */
enum { B_FREE, B_HELD, B_QUEUED, B_READING, B_READ, B_FAILED };

struct pt_window {
    const void *map; /* the file's mapping, map_len bytes */
    size_t map_len;
    size_t rows, page, huge;
    size_t piece_rows; /* the rows of a piece read in place (at most rows) */
    int fd;           /* the file, for the copies (-1: advice only) */
    pthread_mutex_t lock;
    pthread_cond_t cv; /* a buffer was queued, or read; or quit */
    float *buf[MAX_BUFFERS];
    size_t cap[MAX_BUFFERS]; /* bytes */
    int state[MAX_BUFFERS];
    bool orphan[MAX_BUFFERS]; /* its walker went elsewhere: free once read */
    off_t off[MAX_BUFFERS];
    size_t len[MAX_BUFFERS];
    pthread_t reader; /* reads the queued buffers (the next windows, while walkers compute),
                       * and runs the map jobs */
    bool reader_started, quit;
    bool idle; /* the reader thread waits with nothing queued */
    /* the rows the reader thread is bringing in now (running_hi > running_lo), and whether a
     * walker dropped some of them meanwhile (they are dropped again once brought in) */
    size_t running_lo, running_hi;
    bool running_dropped;
    size_t left_lo, left_hi; /* rows walkers left, not yet handed on to be dropped (drop_later) */
    /* map jobs, in order (a ring): drop rows [drop_lo, drop_hi), then bring [lo, hi) in */
    struct map_job {
        size_t drop_lo, drop_hi, lo, hi;
    } jobs[MAX_JOBS];
    size_t job_head, jobs_queued;
    /* the matrix the jobs walk: a copy of the first walker's dataset, whose matrix, mapping
     * and window every view of it shares (a view, such as one class's labels, may be gone by
     * the time its jobs run) */
    bool have_matrix;
    pt_dataset matrix;
    atomic_bool copy_fails; /* a read failed once: advice from then on */
    atomic_int arrive;      /* ARRIVE_*: chosen by probe_arrival, or forced */
    double probe_ms[4];     /* the probe's times for 4 MiB, by ARRIVE_* (0: not timed) */
};

/* The size of a page mapped whole (a transparent huge page), for rounding drops: the
 * kernel's, when it says one and it is a small multiple of the page; else the page. */
static size_t huge_page_bytes(size_t page)
{
    size_t huge = 0;
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
    if (f) {
        unsigned long long v;
        if (fscanf(f, "%llu", &v) == 1) huge = (size_t)v;
        fclose(f);
    }
    return huge >= page && huge <= ((size_t)32 << 20) && huge % page == 0 ? huge : page;
}

pt_window *pt_window_new(const void *map, size_t map_len, size_t rows, size_t row_bytes, int fd)
{
    pt_window *w = calloc(1, sizeof *w);
    if (!w) {
        if (fd >= 0) close(fd);
        pt_fail(PT_ERR_NOMEM, "cannot allocate a stream window");
        return NULL;
    }
    w->map = map;
    w->map_len = map_len;
    w->rows = rows ? rows : 1;
    w->piece_rows = row_bytes ? PIECE_BYTES / row_bytes : w->rows;
    if (w->piece_rows < 1) w->piece_rows = 1;
    if (w->piece_rows > w->rows) w->piece_rows = w->rows;
    long page = sysconf(_SC_PAGESIZE);
    w->page = page > 0 ? (size_t)page : 4096;
    w->huge = huge_page_bytes(w->page);
    w->fd = fd;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cv, NULL);
    return w;
}

void pt_window_free(pt_window *w)
{
    if (!w) return;
    if (w->reader_started) {
        pthread_mutex_lock(&w->lock);
        w->quit = true;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->lock);
        pthread_join(w->reader, NULL);
    }
    for (size_t b = 0; b < MAX_BUFFERS; b++) pt_free(w->buf[b]);
    if (w->fd >= 0) close(w->fd);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

size_t pt_dataset_streamed(const pt_dataset *ds) { return ds && ds->win ? ds->win->rows : 0; }

size_t pt_window_rows(const pt_window *w) { return w->rows; }

/* The whole pages of [p, p + bytes), clipped to the mapping of ds; false if none. */
static bool pages(const pt_dataset *ds, const void *p, size_t bytes, unsigned char **a,
                  size_t *len)
{
    const size_t page = ds->win->page;
    /* (the window's own record of the mapping: a view of the dataset, such as one class's
     * labels, has no map of its own) */
    uintptr_t lo = (uintptr_t)p, hi = lo + bytes, base = (uintptr_t)ds->win->map,
              end = base + ds->win->map_len;
    if (bytes == 0 || hi <= base || lo >= end) return false;
    lo = lo < base ? base : lo - (lo - base) % page;
    hi = hi > end ? end : hi;
    *a = (unsigned char *)lo;
    *len = hi - lo;
    return true;
}

static int arrival(const pt_dataset *ds);

void pt_window_fetch(const pt_dataset *ds, const void *p, size_t bytes)
{
    unsigned char *a;
    size_t len;
    if (!ds->win || !pages(ds, p, bytes, &a, &len)) return;
    /* only advice: a failure leaves the faults to bring the pages in */
    if (arrival(ds) != ARRIVE_FAULT &&
        atomic_load_explicit(&populate_works, memory_order_relaxed)) {
        if (madvise(a, len, MADV_POPULATE_READ) == 0) return;
        if (errno == EINVAL) atomic_store(&populate_works, false);
    }
    (void)madvise(a, len, MADV_WILLNEED);
}

/* Drops are rounded outward to whole huge pages: a drop that ends inside a page mapped whole
 * (a 2 MiB folio of the page cache) would split its mapping first, a TLB flush on every CPU
 * of the process each time (that split, its interprocessor interrupts and the faults waiting
 * on it took a large share of a streamed batch pass, docs/design.md). A neighbouring window
 * that loses a page this way faults it back in. */
void pt_window_drop(const pt_dataset *ds, const void *p, size_t bytes)
{
    unsigned char *a;
    size_t len;
    if (!ds->win || !pages(ds, p, bytes, &a, &len)) return;
    const uintptr_t huge = ds->win->huge, base = (uintptr_t)ds->win->map,
                    end = base + ds->win->map_len;
    uintptr_t lo = (uintptr_t)a, hi = lo + len;
    lo -= lo % huge;
    hi += (huge - hi % huge) % huge;
    lo = lo < base ? base : lo;
    hi = hi > end ? end : hi;
    (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* The byte ranges of rows [r0, r0 + rows): the dense rows (any element type), or the offsets, columns and
 * values of the sparse ones. */
static void each_range(const pt_dataset *ds, size_t r0, size_t rows,
                       void (*fn)(const pt_dataset *, const void *, size_t))
{
    if (rows == 0) return;
    if (ds->layout != PT_LAYOUT_SPARSE) {
        /* float32 rows, or compact ones (bf16, u8) */
        fn(ds, ds->X ? (const void *)(ds->X + r0 * ds->stride) : pt_compact_row(ds, r0),
           rows * ds->stride * pt_elem_bytes(ds->dtype));
        return;
    }
    const uint64_t a = ds->rowptr[r0], b = ds->rowptr[r0 + rows];
    fn(ds, ds->rowptr + r0, (rows + 1) * sizeof(uint64_t));
    fn(ds, ds->col + a, (size_t)(b - a) * sizeof(uint32_t));
    fn(ds, ds->val + a, (size_t)(b - a) * sizeof(float));
}

void pt_window_enter(const pt_dataset *ds, size_t r0, size_t rows)
{
    if (ds->win) each_range(ds, r0, rows, pt_window_fetch);
}

void pt_window_leave(const pt_dataset *ds, size_t r0, size_t rows)
{
    if (ds->win) each_range(ds, r0, rows, pt_window_drop);
}

/* len bytes of the file at off into to; false on an error or a short file. */
static bool read_at(int fd, void *to, size_t len, off_t off)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(fd, (unsigned char *)to + got, len - got, off + (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        got += (size_t)r;
    }
    return true;
}

/* One read every TOUCH_STEP bytes of [p, p + bytes) inside ds's mapping: each fault maps the
 * page cache's pages around it (Linux's fault-around: 64 KiB by default, or the whole large
 * folio); what a read leaves unmapped the walker's own faults map. */
#define TOUCH_STEP ((size_t)64 << 10)
static void touch_pages(const pt_dataset *ds, const void *p, size_t bytes)
{
    unsigned char *a;
    size_t len;
    if (!pages(ds, p, bytes, &a, &len)) return;
    unsigned char sink = 0;
    for (size_t k = 0; k < len; k += TOUCH_STEP) sink ^= *(const volatile unsigned char *)(a + k);
    sink ^= *(const volatile unsigned char *)(a + len - 1);
    (void)sink;
}

static void populate_pages(const pt_dataset *ds, const void *p, size_t bytes)
{
    unsigned char *a;
    size_t len;
    if (!pages(ds, p, bytes, &a, &len)) return;
    if (atomic_load_explicit(&populate_works, memory_order_relaxed)) {
        if (madvise(a, len, MADV_POPULATE_READ) == 0) return;
        if (errno == EINVAL) atomic_store(&populate_works, false);
    }
    (void)madvise(a, len, MADV_WILLNEED);
}

/* A map job: the rows to drop (a window's worth or more of rows walkers left together:
 * drop_later), then the rows to bring in. */
static void run_map_job(const pt_dataset *ds, const struct map_job *j)
{
    if (j->drop_hi > j->drop_lo)
        each_range(ds, j->drop_lo, j->drop_hi - j->drop_lo, pt_window_drop);
    if (j->hi > j->lo)
        each_range(ds, j->lo, j->hi - j->lo,
                   atomic_load(&ds->win->arrive) == ARRIVE_FAULT ? touch_pages : populate_pages);
}

static bool start_reader(pt_window *w);

/* A walker drops rows [lo, hi) itself (the reader thread has too many jobs waiting): the
 * jobs waiting that would bring some of them in are cancelled, and one the reader thread is
 * running is dropped again once done, so that nothing the walker dropped stays mapped. */
static void drop_now(const pt_dataset *ds, size_t lo, size_t hi)
{
    pt_window *w = ds->win;
    pthread_mutex_lock(&w->lock);
    for (size_t q = 0; q < w->jobs_queued; q++) {
        struct map_job *j = &w->jobs[(w->job_head + q) % MAX_JOBS];
        if (j->lo < hi && lo < j->hi) j->lo = j->hi = 0;
    }
    if (w->running_lo < hi && lo < w->running_hi) w->running_dropped = true;
    pthread_mutex_unlock(&w->lock);
    pt_window_leave(ds, lo, hi - lo);
}

/* Queue a map job (rows [drop_lo, drop_hi) to drop, [lo, hi) to bring in); false when the
 * ring is full or no reader thread runs (the caller then drops what it must itself). */
static bool queue_job(const pt_dataset *ds, size_t drop_lo, size_t drop_hi, size_t lo, size_t hi)
{
    pt_window *w = ds->win;
    bool ok = false;
    pthread_mutex_lock(&w->lock);
    /* Jobs wait for the reader thread only while it keeps up, so that what stays mapped is a
     * few windows besides the walkers': past DROPS_WAITING a walker drops what it left
     * itself, past MAX_JOBS it brings nothing in ahead. */
    const bool drop_only = hi <= lo;
    if (w->jobs_queued < (drop_only ? DROPS_WAITING : MAX_JOBS) && start_reader(w)) {
        if (!w->have_matrix) {
            w->matrix = *ds;
            w->have_matrix = true;
        }
        w->jobs[(w->job_head + w->jobs_queued) % MAX_JOBS] =
            (struct map_job){.drop_lo = drop_lo, .drop_hi = drop_hi, .lo = lo, .hi = hi};
        w->jobs_queued++;
        pthread_cond_broadcast(&w->cv);
        ok = true;
    }
    pthread_mutex_unlock(&w->lock);
    return ok;
}

/* The reader thread: reads queued buffers in turn, and runs the map jobs, until
 * pt_window_free. */
static void *reader_main(void *arg)
{
    pt_window *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->quit) {
        int b = -1;
        for (int k = 0; k < MAX_BUFFERS && b < 0; k++)
            if (w->state[k] == B_QUEUED) b = k;
        w->idle = false;
        if (b < 0 && w->jobs_queued) {
            struct map_job j = w->jobs[w->job_head];
            w->job_head = (w->job_head + 1) % MAX_JOBS;
            w->jobs_queued--;
            w->running_lo = j.lo;
            w->running_hi = j.hi;
            pthread_mutex_unlock(&w->lock);
            run_map_job(&w->matrix, &j);
            pthread_mutex_lock(&w->lock);
            const bool again = w->running_dropped;
            w->running_lo = w->running_hi = 0;
            w->running_dropped = false;
            if (again) {
                pthread_mutex_unlock(&w->lock);
                each_range(&w->matrix, j.lo, j.hi - j.lo, pt_window_drop);
                pthread_mutex_lock(&w->lock);
            }
            continue;
        }
        if (b < 0) {
            w->idle = true;
            pthread_cond_broadcast(&w->cv); /* (pt_window_settle) */
            pthread_cond_wait(&w->cv, &w->lock);
            continue;
        }
        w->state[b] = B_READING;
        pthread_mutex_unlock(&w->lock);
        bool ok = read_at(w->fd, w->buf[b], w->len[b], w->off[b]);
        pthread_mutex_lock(&w->lock);
        w->state[b] = w->orphan[b] ? B_FREE : ok ? B_READ : B_FAILED;
        w->orphan[b] = false;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* A free buffer of at least bytes, held (made, or grown, on first use; its pages touched
 * once), or -1. Under the lock. */
static int take_buffer(pt_window *w, size_t bytes)
{
    int got = -1, spare = -1;
    for (int b = 0; b < MAX_BUFFERS && got < 0; b++) {
        if (w->state[b] != B_FREE) continue;
        if (w->cap[b] >= bytes) got = b;
        else if (spare < 0) spare = b;
    }
    if (got < 0 && spare >= 0) {
        pt_free(w->buf[spare]);
        w->cap[spare] = 0;
        if ((w->buf[spare] = pt_alloc(bytes, "stream window"))) {
            memset(w->buf[spare], 0, bytes);
            w->cap[spare] = bytes;
            got = spare;
        }
    }
    if (got >= 0) w->state[got] = B_HELD;
    return got;
}

/* The file offset and bytes of dense rows [lo, hi). */
static off_t rows_off(const pt_dataset *ds, size_t lo)
{
    return (off_t)((const unsigned char *)(ds->X + lo * ds->stride) -
                   (const unsigned char *)ds->win->map);
}

/* Give up the read-ahead of at (its buffer freed once the reader is done with it). Under the
 * lock. */
static void drop_next(pt_window *w, pt_window_pos *at)
{
    if (!at->next_buf) return;
    int b = at->next_buf - 1;
    if (w->state[b] == B_QUEUED || w->state[b] == B_READING) w->orphan[b] = true;
    else w->state[b] = B_FREE;
    at->next_buf = 0;
}

/* The reader thread, started on first use; false if it cannot be. Under the lock. */
static bool start_reader(pt_window *w)
{
    if (!w->reader_started && pthread_create(&w->reader, NULL, reader_main, w) == 0)
        w->reader_started = true;
    return w->reader_started;
}

/* Queue the read of dense rows [lo, hi) as at's next window. Under the lock. */
static void queue_next(const pt_dataset *ds, pt_window_pos *at, size_t lo, size_t hi)
{
    pt_window *w = ds->win;
    size_t len = (hi - lo) * ds->stride * sizeof(float);
    if (hi <= lo || !start_reader(w)) return;
    int b = take_buffer(w, len);
    if (b < 0) return;
    w->state[b] = B_QUEUED;
    w->off[b] = rows_off(ds, lo);
    w->len[b] = len;
    at->next_buf = b + 1;
    at->next_lo = lo;
    at->next_hi = hi;
    pthread_cond_broadcast(&w->cv);
}

/* Whether a copy can be made of ds's rows (dense float32 from a readable file). */
static bool can_copy(const pt_dataset *ds)
{
    return ds->win->fd >= 0 && ds->X && !atomic_load(&ds->win->copy_fails);
}

/* Reads every cache line of [a, a + len) (the walker's reads, for the probe). */
static uint64_t read_lines(const unsigned char *a, size_t len)
{
    uint64_t sum = 0;
    for (size_t k = 0; k + sizeof sum <= len; k += 64) sum += *(const volatile uint64_t *)(a + k);
    return sum;
}

/* Seconds for the pages of [a, a + len) to arrive one way and be read once, from the page
 * cache (the mapping's pages dropped first). */
static double time_arrival(const pt_dataset *ds, int how, unsigned char *a, size_t len,
                           unsigned char *scratch, uint64_t *sink)
{
    pt_window *w = ds->win;
    (void)madvise(a, len, MADV_DONTNEED);
    double t0 = pt_now();
    if (how == ARRIVE_COPY) {
        if (!read_at(w->fd, scratch, len, (off_t)(a - (const unsigned char *)w->map))) return -1.0;
        *sink += read_lines(scratch, len);
    } else {
        if (how == ARRIVE_POPULATE && madvise(a, len, MADV_POPULATE_READ) != 0) return -1.0;
        *sink += read_lines(a, len);
    }
    double dt = pt_now() - t0;
    (void)madvise(a, len, MADV_DONTNEED);
    return dt;
}

/* Times each way a window's pages can arrive on up to PROBE_BYTES at the matrix's start (read
 * once first, so the page cache holds them: the probe compares the ways, not the disk), three
 * rounds, and keeps the fastest of each; returns the cheapest way. Under w->lock. */
static int probe_arrival(const pt_dataset *ds)
{
    pt_window *w = ds->win;
    const void *start = ds->layout == PT_LAYOUT_SPARSE ? (const void *)ds->col
                        : ds->X                      ? (const void *)ds->X
                                                     : pt_compact_row(ds, 0);
    size_t bytes = ds->layout == PT_LAYOUT_SPARSE
                       ? (size_t)ds->rowptr[ds->n] * sizeof(uint32_t)
                       : ds->n * ds->stride * pt_elem_bytes(ds->dtype);
    unsigned char *a;
    size_t len;
    /* whole huge pages where the matrix has them (a drop inside one would split its mapping) */
    uintptr_t lo = (uintptr_t)start, hi = lo + bytes, al = lo + (w->huge - lo % w->huge) % w->huge;
    if (hi > al && hi - al >= PROBE_BYTES) {
        start = (const void *)al;
        bytes = PROBE_BYTES;
    } else if (bytes > PROBE_BYTES) {
        bytes = PROBE_BYTES;
    }
    if (!pages(ds, start, bytes, &a, &len) || len < 16 * w->page) return ARRIVE_POPULATE;
    const bool copy = can_copy(ds);
    unsigned char *scratch = copy ? pt_alloc(len, "stream probe") : NULL;
    uint64_t sink = read_lines(a, len); /* into the page cache */
    if (scratch) sink += read_lines(memset(scratch, 0, len), len);
    double best[4] = {0};
    for (int round = 0; round < 3; round++)
        for (int how = ARRIVE_COPY; how <= ARRIVE_FAULT; how++) {
            if (how == ARRIVE_COPY && !scratch) continue;
            double t = time_arrival(ds, how, a, len, scratch, &sink);
            if (t >= 0.0 && (best[how] == 0.0 || t < best[how])) best[how] = t > 0.0 ? t : 1e-9;
        }
    pt_free(scratch);
    int pick = ARRIVE_FAULT;
    for (int how = ARRIVE_COPY; how <= ARRIVE_FAULT; how++) {
        if (best[how] > 0.0 && best[how] < best[pick]) pick = how;
        w->probe_ms[how] = best[how] * 1e3 * (double)PROBE_BYTES / (double)len;
    }
    pt_log(PT_LOG_INFO,
           "streamed windows: pages %s (for 4 MiB: copied %.2f ms, populated %.2f ms, faulted "
           "%.2f ms)",
           pick == ARRIVE_COPY ? "copied" : pick == ARRIVE_POPULATE ? "populated" : "faulted in",
           w->probe_ms[ARRIVE_COPY], w->probe_ms[ARRIVE_POPULATE], w->probe_ms[ARRIVE_FAULT]);
    (void)sink;
    return pick;
}

/* How ds's window pages arrive: probed on the first call. */
static int arrival(const pt_dataset *ds)
{
    pt_window *w = ds->win;
    int a = atomic_load_explicit(&w->arrive, memory_order_acquire);
    if (a != ARRIVE_UNKNOWN) return a;
    pthread_mutex_lock(&w->lock);
    a = atomic_load(&w->arrive);
    if (a == ARRIVE_UNKNOWN) {
        a = probe_arrival(ds);
        atomic_store_explicit(&w->arrive, a, memory_order_release);
    }
    pthread_mutex_unlock(&w->lock);
    return a;
}

void pt_window_force_arrival(const pt_dataset *ds, const char *how)
{
    if (!ds->win) return;
    int a = strcmp(how, "copied") == 0      ? ARRIVE_COPY
            : strcmp(how, "populated") == 0 ? ARRIVE_POPULATE
                                             : ARRIVE_FAULT;
    atomic_store(&ds->win->arrive, a);
}

const char *pt_dataset_stream_pages(const pt_dataset *ds)
{
    if (!ds->win) return NULL;
    switch (arrival(ds)) {
    case ARRIVE_COPY:
        return can_copy(ds) ? "copied" : "populated";
    case ARRIVE_POPULATE:
        return "populated";
    default:
        return "faulted";
    }
}

void pt_window_settle(const pt_dataset *ds)
{
    pt_window *w = ds->win;
    if (!w) return;
    pthread_mutex_lock(&w->lock);
    const size_t lo = w->left_lo, hi = w->left_hi;
    w->left_lo = w->left_hi = 0;
    pthread_mutex_unlock(&w->lock);
    if (hi > lo && !queue_job(ds, lo, hi, 0, 0)) drop_now(ds, lo, hi);
    pthread_mutex_lock(&w->lock);
    while (w->reader_started && (!w->idle || w->jobs_queued))
        pthread_cond_wait(&w->cv, &w->lock);
    pthread_mutex_unlock(&w->lock);
}

/* Whether ds's rows come in by copy. */
static bool copies(const pt_dataset *ds)
{
    return can_copy(ds) && arrival(ds) == ARRIVE_COPY;
}

/* Whether at's read-ahead holds row i and is not read yet. */
static bool ahead_late(pt_window *w, const pt_window_pos *at, size_t i)
{
    if (!at->next_buf || i < at->next_lo || i >= at->next_hi) return false;
    pthread_mutex_lock(&w->lock);
    const int st = w->state[at->next_buf - 1];
    pthread_mutex_unlock(&w->lock);
    return st == B_QUEUED || st == B_READING;
}

/* The window after at's that holds row next_lo, [*lo, *hi), clipped to the walk's range; false
 * if next_lo is past it (SIZE_MAX: none). */
static bool next_window(const pt_dataset *ds, const pt_window_pos *at, size_t next_lo, size_t *lo,
                        size_t *hi)
{
    const size_t end = at->to ? at->to : ds->n, rows = at->rows ? at->rows : ds->win->rows;
    if (next_lo >= end) return false;
    *lo = next_lo - next_lo % rows;
    *hi = end - *lo < rows ? end : *lo + rows;
    if (*lo < at->from) *lo = at->from;
    return true;
}

/* Dense rows [lo, hi) in a buffer: the read-ahead's when it read them, else read now; then
 * the next window queued (next_lo: its first row, SIZE_MAX: none). False (nothing held) where
 * no copy can be made. */
static bool copy_in(const pt_dataset *ds, pt_window_pos *at, size_t next_lo)
{
    pt_window *w = ds->win;
    if (!copies(ds)) return false; /* sparse, compact */
    const size_t len = (at->hi - at->lo) * ds->stride * sizeof(float);
    if (len == 0) return false;
    pthread_mutex_lock(&w->lock);
    int b = -1;
    bool ready = false;
    if (at->next_buf && at->next_lo == at->lo && at->next_hi == at->hi) {
        b = at->next_buf - 1;
        at->next_buf = 0;
        while (w->state[b] == B_QUEUED || w->state[b] == B_READING)
            pthread_cond_wait(&w->cv, &w->lock);
        ready = w->state[b] == B_READ;
        w->state[b] = B_HELD;
    } else {
        drop_next(w, at);
        b = take_buffer(w, len);
    }
    pthread_mutex_unlock(&w->lock);
    if (b < 0) return false;
    if (!ready && !read_at(w->fd, w->buf[b], len, rows_off(ds, at->lo))) {
        atomic_store(&w->copy_fails, true);
        pthread_mutex_lock(&w->lock);
        w->state[b] = B_FREE;
        pthread_mutex_unlock(&w->lock);
        return false;
    }
    at->buf = b + 1;
    at->copy = w->buf[b];
    size_t lo, hi;
    if (next_window(ds, at, next_lo, &lo, &hi)) {
        pthread_mutex_lock(&w->lock);
        queue_next(ds, at, lo, hi);
        pthread_mutex_unlock(&w->lock);
    }
    return true;
}

/* Rows read in the mapping (no copy): the reader thread brings the next window's pages in
 * (next_lo: its first row, SIZE_MAX: none) while the walker works on this one, the walker's own
 * faults taking whatever it has not reached; a window brought in that the walker did not take
 * is dropped. Where faults cost more than a populate call (ARRIVE_POPULATE), a window not
 * brought in ahead is populated now. */
static void map_in(const pt_dataset *ds, pt_window_pos *at, size_t next_lo)
{
    const bool ahead = at->ahead && at->next_lo == at->lo && at->next_hi == at->hi;
    if (at->ahead && !ahead && !queue_job(ds, at->next_lo, at->next_hi, 0, 0))
        drop_now(ds, at->next_lo, at->next_hi);
    at->ahead = false;
    if (!ahead && arrival(ds) != ARRIVE_FAULT) pt_window_enter(ds, at->lo, at->hi - at->lo);
    /* (a walk of a range brings nothing in past it: the batch path's chunks, a few hundred
     * rows each, would leave what the reader thread brought in late mapped behind them) */
    size_t lo, hi;
    if (next_window(ds, at, next_lo, &lo, &hi) && queue_job(ds, 0, 0, lo, hi)) {
        at->ahead = true;
        at->next_lo = lo;
        at->next_hi = hi;
    }
}

/* Release at's window (its buffer, or its pages); the read-ahead stays. */
/* Rows [lo, hi) a walker left, dropped once the rows left next to them reach a window
 * (w->left_lo, left_hi: the batch path's chunks are a few hundred rows, and each job wakes the
 * reader thread, an interprocessor interrupt under virtualisation); at most a window
 * and a walk's rows stay mapped so. Then by the reader thread, in order, or by the walker
 * when it has too many waiting. */
static void drop_later(const pt_dataset *ds, size_t lo, size_t hi)
{
    pt_window *w = ds->win;
    size_t flo = 0, fhi = 0;
    pthread_mutex_lock(&w->lock);
    if (w->left_hi > w->left_lo && (lo == w->left_hi || hi == w->left_lo)) {
        if (lo < w->left_lo) w->left_lo = lo;
        if (hi > w->left_hi) w->left_hi = hi;
    } else {
        flo = w->left_lo;
        fhi = w->left_hi;
        w->left_lo = lo;
        w->left_hi = hi;
    }
    if (w->left_hi - w->left_lo >= w->rows) {
        if (fhi > flo) { /* (two to go: the older one now) */
            pthread_mutex_unlock(&w->lock);
            if (!queue_job(ds, flo, fhi, 0, 0)) drop_now(ds, flo, fhi);
            pthread_mutex_lock(&w->lock);
        }
        flo = w->left_lo;
        fhi = w->left_hi;
        w->left_lo = w->left_hi = 0;
    }
    pthread_mutex_unlock(&w->lock);
    if (fhi > flo && !queue_job(ds, flo, fhi, 0, 0)) drop_now(ds, flo, fhi);
}

static void window_release(const pt_dataset *ds, pt_window_pos *at)
{
    if (at->buf) {
        pthread_mutex_lock(&ds->win->lock);
        ds->win->state[at->buf - 1] = B_FREE;
        pthread_mutex_unlock(&ds->win->lock);
    } else if (at->hi > at->lo) {
        drop_later(ds, at->lo, at->hi);
    }
    at->buf = 0;
    at->copy = NULL;
    at->lo = at->hi = 0;
}

void pt_window_move_to(const pt_dataset *ds, pt_window_pos *at, size_t i, size_t next)
{
    pt_window *w = ds->win;
    /* in file order over copied rows: in place from the start over a range, else once the
     * read-ahead is late (see the top) */
    const bool ordered = !at->rows && copies(ds);
    if (ordered && (at->to || ahead_late(w, at, i))) at->in_place = true;
    const bool piece = ordered && at->in_place;
    const size_t rows = at->rows ? at->rows : piece ? w->piece_rows : w->rows;
    window_release(ds, at);
    const size_t end = at->to ? at->to : ds->n;
    at->lo = i - i % rows;
    at->hi = end - at->lo < rows ? end : at->lo + rows;
    if (at->lo < at->from) at->lo = at->from;
    if (next == SIZE_MAX - 1) next = piece ? SIZE_MAX : at->hi; /* in order: the rows after */
    if (!copy_in(ds, at, next)) map_in(ds, at, next);
}

void pt_window_move(const pt_dataset *ds, pt_window_pos *at, size_t i)
{
    pt_window_move_to(ds, at, i, SIZE_MAX - 1);
}

void pt_window_end(const pt_dataset *ds, pt_window_pos *at)
{
    if (!ds->win) return;
    window_release(ds, at);
    if (at->ahead && !queue_job(ds, at->next_lo, at->next_hi, 0, 0))
        drop_now(ds, at->next_lo, at->next_hi);
    at->ahead = false;
    pthread_mutex_lock(&ds->win->lock);
    drop_next(ds->win, at);
    pthread_mutex_unlock(&ds->win->lock);
}
