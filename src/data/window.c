/*
 * The window of a streamed dataset (pt_dataset_streamed): a .ptd file's matrix mapped without
 * being read in, walked a window of rows at a time, so that what stays resident is about one
 * window per walker, whatever the file's size.
 *
 * Dense rows come in by copy: a window's rows are read (pread) into a buffer of the walker's,
 * small enough to stay in cache while the walker reads them, and pt_window_row points there.
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

/* Buffers, one per walker at a time (the batch path's threads walk at once). */
#define MAX_BUFFERS 16

struct pt_window {
    size_t rows, page;
    size_t row_bytes; /* a dense row's bytes (0: sparse, no copies) */
    int fd;           /* the file, for the copies (-1: advice only) */
    pthread_mutex_t lock;
    float *buf[MAX_BUFFERS];
    size_t cap[MAX_BUFFERS]; /* bytes */
    bool busy[MAX_BUFFERS];
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
    long page = sysconf(_SC_PAGESIZE);
    w->page = page > 0 ? (size_t)page : 4096;
    w->row_bytes = row_bytes;
    w->fd = fd;
    pthread_mutex_init(&w->lock, NULL);
    return w;
}

void pt_window_free(pt_window *w)
{
    if (!w) return;
    for (size_t b = 0; b < MAX_BUFFERS; b++) pt_free(w->buf[b]);
    if (w->fd >= 0) close(w->fd);
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

/* The byte ranges of rows [r0, r0 + rows): the dense rows, or the offsets, columns and
 * values of the sparse ones. */
static void each_range(const pt_dataset *ds, size_t r0, size_t rows,
                       void (*fn)(const pt_dataset *, const void *, size_t))
{
    if (rows == 0) return;
    if (ds->layout != PT_LAYOUT_SPARSE) {
        fn(ds, ds->X + r0 * ds->stride, rows * ds->stride * sizeof(float));
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

/* A free buffer of at least bytes (made, or grown, on first use; its pages touched once), or
 * -1. */
static int take_buffer(pt_window *w, size_t bytes)
{
    int got = -1, spare = -1;
    pthread_mutex_lock(&w->lock);
    for (int b = 0; b < MAX_BUFFERS && got < 0; b++) {
        if (w->busy[b]) continue;
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
    if (got >= 0) w->busy[got] = true;
    pthread_mutex_unlock(&w->lock);
    return got;
}

static void give_buffer(pt_window *w, int b)
{
    pthread_mutex_lock(&w->lock);
    w->busy[b] = false;
    pthread_mutex_unlock(&w->lock);
}

/* Dense rows [lo, hi) copied into a buffer; false (nothing taken) where that cannot be done. */
static bool copy_in(const pt_dataset *ds, pt_window_pos *at)
{
    pt_window *w = ds->win;
    if (w->fd < 0 || ds->layout == PT_LAYOUT_SPARSE || atomic_load(&w->copy_fails)) return false;
    const size_t len = (at->hi - at->lo) * ds->stride * sizeof(float);
    const off_t off = (off_t)((const unsigned char *)(ds->X + at->lo * ds->stride) -
                              (const unsigned char *)ds->map);
    int b = len ? take_buffer(w, len) : -1;
    if (b < 0) return false;
    unsigned char *to = (unsigned char *)w->buf[b];
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(w->fd, to + got, len - got, off + (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    if (got < len) {
        atomic_store(&w->copy_fails, true);
        give_buffer(w, b);
        return false;
    }
    at->buf = b + 1;
    at->copy = w->buf[b];
    return true;
}

void pt_window_move(const pt_dataset *ds, pt_window_pos *at, size_t i)
{
    const size_t rows = at->rows ? at->rows : ds->win->rows;
    pt_window_end(ds, at);
    const size_t end = at->to ? at->to : ds->n;
    at->lo = i - i % rows;
    at->hi = end - at->lo < rows ? end : at->lo + rows;
    if (at->lo < at->from) at->lo = at->from;
    if (!copy_in(ds, at)) pt_window_enter(ds, at->lo, at->hi - at->lo);
}

void pt_window_end(const pt_dataset *ds, pt_window_pos *at)
{
    if (ds->win && at->buf) give_buffer(ds->win, at->buf - 1);
    else if (ds->win) pt_window_leave(ds, at->lo, at->hi - at->lo);
    at->buf = 0;
    at->copy = NULL;
    at->lo = at->hi = 0;
}
