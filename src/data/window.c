/*
 * The window of a streamed dataset (pt_dataset_streamed): a .ptd file's matrix mapped without
 * being read in, walked a window of rows at a time, so that what stays resident is about one
 * window per walker, whatever the file's size.
 *
 * Dense rows come in by copy: a window's rows are read (pread) into a buffer of the walker's,
 * and pt_window_row points there; a reader thread reads the next window (the rows after, or
 * the one the walker names) into a second buffer while the walker works on this one. A walk
 * in file order (no rows of its own) reads ahead only while the reader keeps up: once it
 * reaches a window not read yet (the reader thread has no core of its own on a busy machine,
 * or copies slower than the walker computes), it reads pieces of PIECE_BYTES in place for the
 * rest of the walk, each into the same buffer, which stays in the core's L2; a walk of a range
 * of rows (the batch path's chunks, shorter than a window or two) reads in place from the
 * start. On the 2-core VM at load 7-8 (online epoch, 205 MB, --mem-mb 64, one thread, 12
 * interleaved runs), reading ahead took 51 ms median, pieces of 256 KiB in place 41 ms, pieces
 * of 1 MiB read ahead 84 ms; when the second core was free, reading ahead matched the
 * in-memory epoch (16 ms).
 * Mapping the page cache's pages instead costs about 1 us a 4 KiB page on these virtual machines
 * (faults or MADV_POPULATE_READ alike), four to ten times what the copy costs; and moving a
 * buffer over the mapping (mremap) cost 0.5 us a page. The sparse arrays, and dense rows where
 * a copy cannot be made, come in by advice on the mapping: MADV_POPULATE_READ (WILLNEED where
 * the kernel lacks it) as a window begins, MADV_DONTNEED as it ends.
 *
 * Dropping file pages is always safe: the mapping is private and read-only, so a dropped page
 * holds nothing but the file's bytes, and a later read (another thread's at a window's edge, or
 * code that reads the rows in its own order) faults them back in from the page cache. So
 * advice ranges are rounded outward to whole pages, and threads may drop ranges that touch.
 */
#include <errno.h>
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

/* Buffers: each walker holds its window's and the next one's (the batch path's threads walk
 * at once). */
#define MAX_BUFFERS 16
/* The bytes of a piece read in place: within any core's L2 (256 KiB on the smallest). */
#define PIECE_BYTES ((size_t)256 << 10)

/* A buffer's state: free, held by a walker, queued for the reader thread, being read, read
 * (or not: failed) and waiting for its walker. */
enum { B_FREE, B_HELD, B_QUEUED, B_READING, B_READ, B_FAILED };

struct pt_window {
    size_t rows, page;
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
    pthread_t reader; /* reads the queued buffers: the next windows, while walkers compute */
    bool reader_started, quit;
    atomic_bool copy_fails; /* a read failed once: advice from then on */
};

pt_window *pt_window_new(size_t rows, size_t row_bytes, int fd)
{
    pt_window *w = calloc(1, sizeof *w);
    if (!w) {
        if (fd >= 0) close(fd);
        pt_fail(PT_ERR_NOMEM, "cannot allocate a stream window");
        return NULL;
    }
    w->rows = rows ? rows : 1;
    w->piece_rows = row_bytes ? PIECE_BYTES / row_bytes : w->rows;
    if (w->piece_rows < 1) w->piece_rows = 1;
    if (w->piece_rows > w->rows) w->piece_rows = w->rows;
    long page = sysconf(_SC_PAGESIZE);
    w->page = page > 0 ? (size_t)page : 4096;
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
    uintptr_t lo = (uintptr_t)p, hi = lo + bytes, base = (uintptr_t)ds->map,
              end = base + ds->map_len;
    if (bytes == 0 || hi <= base || lo >= end) return false;
    lo = lo < base ? base : lo - (lo - base) % page;
    hi = hi > end ? end : hi;
    *a = (unsigned char *)lo;
    *len = hi - lo;
    return true;
}

void pt_window_fetch(const pt_dataset *ds, const void *p, size_t bytes)
{
    unsigned char *a;
    size_t len;
    if (!ds->win || !pages(ds, p, bytes, &a, &len)) return;
    /* only advice: a failure leaves the faults to bring the pages in */
    if (atomic_load_explicit(&populate_works, memory_order_relaxed)) {
        if (madvise(a, len, MADV_POPULATE_READ) == 0) return;
        if (errno == EINVAL) atomic_store(&populate_works, false);
    }
    (void)madvise(a, len, MADV_WILLNEED);
}

void pt_window_drop(const pt_dataset *ds, const void *p, size_t bytes)
{
    unsigned char *a;
    size_t len;
    if (ds->win && pages(ds, p, bytes, &a, &len)) (void)madvise(a, len, MADV_DONTNEED);
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

/* The reader thread: reads queued buffers in turn, until pt_window_free. */
static void *reader_main(void *arg)
{
    pt_window *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->quit) {
        int b = -1;
        for (int k = 0; k < MAX_BUFFERS && b < 0; k++)
            if (w->state[k] == B_QUEUED) b = k;
        if (b < 0) {
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
                   (const unsigned char *)ds->map);
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

/* Queue the read of dense rows [lo, hi) as at's next window. Under the lock. */
static void queue_next(const pt_dataset *ds, pt_window_pos *at, size_t lo, size_t hi)
{
    pt_window *w = ds->win;
    size_t len = (hi - lo) * ds->stride * sizeof(float);
    if (hi <= lo) return;
    if (!w->reader_started) {
        if (pthread_create(&w->reader, NULL, reader_main, w) != 0) return;
        w->reader_started = true;
    }
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

/* Whether ds's rows come in by copy (dense float32 from a readable file). */
static bool copies(const pt_dataset *ds)
{
    return ds->win->fd >= 0 && ds->X && !atomic_load(&ds->win->copy_fails);
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
    if (next_lo < (at->to ? at->to : ds->n)) {
        const size_t rows = at->rows ? at->rows : w->rows, end = at->to ? at->to : ds->n;
        size_t lo = next_lo - next_lo % rows, hi = end - lo < rows ? end : lo + rows;
        if (lo < at->from) lo = at->from;
        pthread_mutex_lock(&w->lock);
        queue_next(ds, at, lo, hi);
        pthread_mutex_unlock(&w->lock);
    }
    return true;
}

/* Release at's window (its buffer, or its pages); the read-ahead stays. */
static void window_release(const pt_dataset *ds, pt_window_pos *at)
{
    if (at->buf) {
        pthread_mutex_lock(&ds->win->lock);
        ds->win->state[at->buf - 1] = B_FREE;
        pthread_mutex_unlock(&ds->win->lock);
    } else if (at->hi > at->lo) {
        pt_window_leave(ds, at->lo, at->hi - at->lo);
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
    if (!copy_in(ds, at, next)) pt_window_enter(ds, at->lo, at->hi - at->lo);
}

void pt_window_move(const pt_dataset *ds, pt_window_pos *at, size_t i)
{
    pt_window_move_to(ds, at, i, SIZE_MAX - 1);
}

void pt_window_end(const pt_dataset *ds, pt_window_pos *at)
{
    if (!ds->win) return;
    window_release(ds, at);
    pthread_mutex_lock(&ds->win->lock);
    drop_next(ds->win, at);
    pthread_mutex_unlock(&ds->win->lock);
}
