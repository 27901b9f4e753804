/*
 * The window of a streamed dataset (pt_dataset_streamed): a .ptd file's matrix mapped without
 * being read in, walked a window of rows at a time. A window's pages are read ahead when it
 * begins (MADV_POPULATE_READ: the page tables filled in one call, which costs far less than a
 * fault per 64 KiB; MADV_WILLNEED where the kernel lacks it) and dropped when it ends
 * (MADV_DONTNEED), so what stays resident is about one window, whatever the file's size.
 *
 * Dropping is always safe: the mapping is private and read-only, so a dropped page holds
 * nothing but the file's bytes, and a later read (another thread's at a window's edge, or code
 * that reads the rows in its own order) faults them back in from the page cache. So ranges are
 * rounded outward to whole pages, and threads may drop ranges that touch.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "data.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/* Cleared when the kernel refuses MADV_POPULATE_READ (before Linux 5.14): WILLNEED then. */
static atomic_bool populate_works = true;

pt_window *pt_window_new(size_t rows)
{
    pt_window *w = calloc(1, sizeof *w);
    if (!w) {
        pt_fail(PT_ERR_NOMEM, "cannot allocate a stream window");
        return NULL;
    }
    w->rows = rows ? rows : 1;
    long page = sysconf(_SC_PAGESIZE);
    w->page = page > 0 ? (size_t)page : 4096;
    return w;
}

void pt_window_free(pt_window *w) { free(w); }

size_t pt_dataset_streamed(const pt_dataset *ds) { return ds && ds->win ? ds->win->rows : 0; }

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

void pt_window_move(const pt_dataset *ds, pt_window_pos *at, size_t i)
{
    const size_t rows = at->rows ? at->rows : ds->win->rows;
    pt_window_leave(ds, at->lo, at->hi - at->lo);
    const size_t end = at->to ? at->to : ds->n;
    at->lo = i - i % rows;
    at->hi = end - at->lo < rows ? end : at->lo + rows;
    if (at->lo < at->from) at->lo = at->from;
    pt_window_enter(ds, at->lo, at->hi - at->lo);
}

void pt_window_end(const pt_dataset *ds, pt_window_pos *at)
{
    if (ds->win) pt_window_leave(ds, at->lo, at->hi - at->lo);
    at->lo = at->hi = 0;
}
