/* Aligned allocation with huge-page advice, overflow-checked sizes, machine facts, thread
 * counts. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cblas.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "common.h"

/* Below this, huge pages buy nothing and waste memory. */
#define HUGE_ADVICE_MIN (4u << 20)
#define HUGE_PAGE (2u << 20)

bool pt_mul_ok(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

size_t pt_round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

void *pt_alloc(size_t bytes, const char *what)
{
    if (bytes == 0) bytes = PT_ALIGN_BYTES;
    size_t align = bytes >= HUGE_ADVICE_MIN ? HUGE_PAGE : PT_ALIGN_BYTES;
    if (bytes > SIZE_MAX - align) {
        pt_fail(PT_ERR_NOMEM, "cannot allocate %s: size overflows", what);
        return NULL;
    }
    void *p = NULL;
    if (posix_memalign(&p, align, pt_round_up(bytes, align)) != 0) {
        pt_fail(PT_ERR_NOMEM, "cannot allocate %zu bytes (%.1f MiB) for %s", bytes,
                bytes / 1048576.0, what);
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    /* The first touch of fresh 4 KiB pages is slow under virtualisation; 2 MiB pages cut it
     * several times over (docs/design.md, "Memory"). */
    if (align == HUGE_PAGE) madvise(p, pt_round_up(bytes, align), MADV_HUGEPAGE);
#endif
    return p;
}

void *pt_calloc(size_t bytes, const char *what)
{
    void *p = pt_alloc(bytes, what);
    if (p) memset(p, 0, bytes ? bytes : PT_ALIGN_BYTES);
    return p;
}

void pt_free(void *p) { free(p); }

size_t pt_physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0) return (size_t)8 << 30;
    return (size_t)pages * (size_t)size;
}

size_t pt_default_mem_budget(void) { return pt_physical_memory() / 2; }

int pt_threads_resolve(int requested)
{
    if (requested > 0) return requested;
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

pt_thread_counts pt_threads_enter(int threads)
{
    pt_thread_counts saved = {0, 0, false};
#ifdef _OPENMP
    if (omp_in_parallel()) return saved;
    saved.omp = omp_get_max_threads();
#endif
    saved.blas = openblas_get_num_threads();
    saved.set = true;
    openblas_set_num_threads(threads);
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    return saved;
}

void pt_threads_leave(pt_thread_counts saved)
{
    if (!saved.set) return;
    /* OpenBLAS's setter also sets the calling thread's OpenMP count: OpenMP's goes second */
    openblas_set_num_threads(saved.blas);
#ifdef _OPENMP
    omp_set_num_threads(saved.omp);
#endif
}
