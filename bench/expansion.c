/*
 * Explicit feature expansion through pt_expand: polynomial degree 2 (561 features) and 1,024 random Fourier features of a
 * 20,000 x 32 set. (Degree 3 gives 6,545 features, 524 MB: mostly first touch.)
 * The output is a fresh allocation per call, so its first touch is part of the cost; vs_touch is
 * the time to allocate and touch as many bytes (the floor of any materialised expansion on these
 * machines) over the expansion's time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"

typedef struct expand_case {
    pt_expand_kind kind;
    int degree;
    size_t rff_dim;
} expand_case;

static const expand_case cases[] = {
    {PT_EXPAND_POLY, 2, 0}, {PT_EXPAND_RFF, 0, 1024}};

/* Seconds to allocate bytes as pt_alloc does (2 MiB aligned, huge-page advice) and touch them. */
static double touch_seconds(size_t bytes)
{
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        double t0 = bt_now();
        size_t len = (bytes + ((size_t)2 << 20) - 1) / ((size_t)2 << 20) * ((size_t)2 << 20);
        void *p = NULL;
        if (posix_memalign(&p, (size_t)2 << 20, len) != 0) return 0.0;
#ifdef MADV_HUGEPAGE
        madvise(p, len, MADV_HUGEPAGE);
#endif
        memset(p, 0, len);
        bs_clobber_memory();
        free(p);
        double t = bt_now() - t0;
        if (t < best) best = t;
    }
    return best;
}

static void bm_expand(bs_state *st, const void *arg)
{
    const expand_case *c = arg;
    const pt_dataset *ds = bt_dataset_or_skip(st, BT_SEP_EXPAND);
    if (!ds) return;
    pt_expand_params ep;
    pt_expand_params_init(&ep);
    ep.kind = c->kind;
    if (c->degree) ep.degree = c->degree;
    if (c->rff_dim) ep.rff_dim = c->rff_dim;
    size_t dout = pt_expand_dim(&ep, pt_dataset_d(ds)), out_bytes = 0;
    double el = 0.0;
    while (bs_keep_running(st)) {
        pt_dataset *out = NULL;
        double t0 = bt_now();
        pt_status s = pt_expand(ds, &ep, &out);
        el += bt_now() - t0;
        if (s != PT_OK) {
            bt_skip(st, s, "pt_expand");
            break;
        }
        out_bytes = bt_bytes(out);
        bs_pause_timing(st);
        pt_dataset_free(out);
        bs_resume_timing(st);
    }
    if (bs_error_occurred(st)) return;
    const double it = (double)bs_iterations(st);
    bs_counter(st, "rows/s", (double)pt_dataset_n(ds) * it, BS_RATE);
    bs_counter(st, "out_GB/s", (double)out_bytes * it / 1e9, BS_RATE);
    bs_counter(st, "d_out", (double)dout, BS_PLAIN);
    bs_set_bytes_processed(st, (int64_t)((double)out_bytes * it));
    double touch = touch_seconds(out_bytes);
    if (touch > 0) bs_counter(st, "vs_touch", touch / (el / it), BS_PLAIN);
}

void bt_register_expansion(void)
{
    char name[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const expand_case *c = &cases[i];
        if (c->kind == PT_EXPAND_POLY)
            snprintf(name, sizeof name, "expand/poly/degree:%d/data:expand", c->degree);
        else
            snprintf(name, sizeof name, "expand/rff/dim:%zu/data:expand", c->rff_dim);
        bs_bench *b = bs_register(name, bm_expand, c);
        bs_use_real_time(b);
        bs_min_time(b, 0.2);
        bs_time_unit(b, BS_MS);
    }
}
