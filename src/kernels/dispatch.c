/*
 * Choosing the kernel table: once, at first use, from what the build has and what the CPU and
 * the OS can run.
 *
 * This file is compiled for the baseline ISA (no -mavx*): it runs on any x86-64 and must not
 * execute a wide instruction before the checks below. It depends on nothing in the library
 * but pt_fail and pt_log (error.c), so scripts/test-neon can build it with the kernels alone.
 *
 * - x86-64: CPUID says what the CPU has, XGETBV whether the OS saves the wide registers
 *   (XCR0 bits 1-2 for YMM; bits 5-7 too for ZMM and the opmask registers), after checking
 *   OSXSAVE. avx2 needs AVX, AVX2 and FMA. avx512 needs AVX-512F, and VL and DQ because
 *   avx512.c is compiled with -mavx512vl -mavx512dq (every AVX-512 CPU but the first
 *   many-core accelerators has them) and AVX2+FMA for its 256-bit code.
 * - aarch64: getauxval(AT_HWCAP) & HWCAP_ASIMD.
 * - PTRON_ISA=auto|scalar|avx2|avx512|neon forces the default; PTRON_ISA_DEBUG=1 logs the
 *   choice (PT_LOG_INFO). Both are read once, at the first call.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <stdint.h>
#define PT_X86 1
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1UL << 1)
#endif
#define PT_ARM64 1
#endif

#include "common/common.h"
#include "kernels.h"

#define ISA_BIT(isa) (1u << (unsigned)(isa))

/* Best first: the order pt_isa_choose walks. */
static const pt_isa preference[] = {PT_ISA_AVX512, PT_ISA_AVX2, PT_ISA_NEON, PT_ISA_SCALAR};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static unsigned cpu_mask;   /* ISAs the CPU and OS run, whether or not built */
static unsigned build_mask; /* ISAs compiled into this library */
static pt_isa chosen;       /* pt_isa_default() */

/* The table compiled in for an ISA, or NULL. */
static const pt_kernels *table_for(pt_isa isa)
{
    switch (isa) {
    case PT_ISA_SCALAR: return &pt_kernels_scalar;
#if defined(PT_HAVE_AVX2)
    case PT_ISA_AVX2: return &pt_kernels_avx2;
#endif
#if defined(PT_HAVE_AVX512)
    case PT_ISA_AVX512: return &pt_kernels_avx512;
#endif
#if defined(PT_HAVE_NEON)
    case PT_ISA_NEON: return &pt_kernels_neon;
#endif
    default: return NULL;
    }
}

#if defined(PT_X86)
/* XCR0, the register-state mask the OS enabled (XGETBV with ECX = 0). Inline assembly
 * because the _xgetbv intrinsic needs -mxsave, which this file must not be built with. */
static uint64_t read_xcr0(void)
{
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((uint64_t)edx << 32) | eax;
}

static unsigned detect_cpu(void)
{
    unsigned m = ISA_BIT(PT_ISA_SCALAR);
    unsigned a, b, c, d;
    /* Leaf 1: FMA (ECX 12), OSXSAVE (ECX 27), AVX (ECX 28). Without OSXSAVE, no XGETBV. */
    if (!__get_cpuid(1, &a, &b, &c, &d)) return m;
    const int fma = (c >> 12) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
    if (!osxsave || !avx) return m;
    /* The OS saves XMM+YMM (bits 1, 2), and opmask+ZMM (bits 5, 6, 7) for AVX-512. */
    const uint64_t xcr0 = read_xcr0();
    const int ymm = (xcr0 & 0x06) == 0x06, zmm = (xcr0 & 0xe6) == 0xe6;
    /* Leaf 7, subleaf 0: AVX2 (EBX 5), AVX512F (EBX 16), AVX512DQ (EBX 17), AVX512VL (EBX 31).
     * __get_cpuid_count fails when the CPU has no leaf 7. */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return m;
    const int avx2 = (b >> 5) & 1, f = (b >> 16) & 1, dq = (b >> 17) & 1, vl = (b >> 31) & 1;
    if (ymm && avx2 && fma) m |= ISA_BIT(PT_ISA_AVX2);
    if (ymm && zmm && avx2 && fma && f && dq && vl) m |= ISA_BIT(PT_ISA_AVX512);
    return m;
}
#elif defined(PT_ARM64)
static unsigned detect_cpu(void)
{
    unsigned m = ISA_BIT(PT_ISA_SCALAR);
    if (getauxval(AT_HWCAP) & HWCAP_ASIMD) m |= ISA_BIT(PT_ISA_NEON);
    return m;
}
#else
static unsigned detect_cpu(void) { return ISA_BIT(PT_ISA_SCALAR); }
#endif

/* "scalar, avx2, ..." for the ISAs in mask, into buf. */
static const char *isa_list(unsigned mask, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = PT_ISA_SCALAR; i <= PT_ISA_NEON; i++) {
        if (!(mask & ISA_BIT(i))) continue;
        int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", pt_isa_name((pt_isa)i));
        if (w < 0 || (size_t)w >= len - used) break;
        used += (size_t)w;
    }
    return buf;
}

static pt_isa choose(const char *forced);

/* Detect, choose the default, and log the choice if asked: run once. */
static void init(void)
{
    build_mask = 0;
    for (int i = PT_ISA_SCALAR; i <= PT_ISA_NEON; i++)
        if (table_for((pt_isa)i)) build_mask |= ISA_BIT(i);
    cpu_mask = detect_cpu();

    const char *forced = getenv("PTRON_ISA");
    chosen = choose(forced);

    const char *debug = getenv("PTRON_ISA_DEBUG");
    if (debug && *debug && strcmp(debug, "0") != 0) {
        char cpu[64], built[64];
        pt_log(PT_LOG_INFO, "ISA %s chosen (CPU runs: %s; built: %s; PTRON_ISA=%s)",
               pt_isa_name(chosen), isa_list(cpu_mask, cpu, sizeof cpu),
               isa_list(build_mask, built, sizeof built), forced ? forced : "(unset)");
    }
}

static void ensure_init(void) { pthread_once(&once, init); }

const char *pt_isa_name(pt_isa isa)
{
    switch (isa) {
    case PT_ISA_AUTO: return "auto";
    case PT_ISA_SCALAR: return "scalar";
    case PT_ISA_AVX2: return "avx2";
    case PT_ISA_AVX512: return "avx512";
    case PT_ISA_NEON: return "neon";
    }
    return "unknown";
}

pt_status pt_isa_parse(const char *name, pt_isa *out)
{
    if (name)
        for (int i = PT_ISA_AUTO; i <= PT_ISA_NEON; i++)
            if (strcmp(name, pt_isa_name((pt_isa)i)) == 0) {
                *out = (pt_isa)i;
                return PT_OK;
            }
    return pt_fail(PT_ERR_INVALID, "unknown ISA '%s' (auto, scalar, avx2, avx512, neon)",
                   name ? name : "(null)");
}

int pt_isa_available(pt_isa isa)
{
    /* auto always resolves to something available. */
    if (isa == PT_ISA_AUTO) return 1;
    if (isa < PT_ISA_SCALAR || isa > PT_ISA_NEON) return 0;
    ensure_init();
    return (cpu_mask & build_mask & ISA_BIT(isa)) != 0;
}

/* pt_isa_choose without the init (init calls it: pthread_once must not nest). */
static pt_isa choose(const char *forced)
{
    pt_isa best = PT_ISA_SCALAR;
    for (size_t i = 0; i < sizeof preference / sizeof preference[0]; i++)
        if (cpu_mask & build_mask & ISA_BIT(preference[i])) {
            best = preference[i];
            break;
        }
    /* Unset, empty or "auto": the best. */
    if (!forced || !*forced || strcmp(forced, "auto") == 0) return best;
    /* A known name the build and the CPU have: that one. */
    for (int i = PT_ISA_SCALAR; i <= PT_ISA_NEON; i++) {
        if (strcmp(forced, pt_isa_name((pt_isa)i)) != 0) continue;
        if (cpu_mask & build_mask & ISA_BIT(i)) return (pt_isa)i;
        char have[64];
        pt_log(PT_LOG_WARN, "PTRON_ISA=%s is not available %s (it has: %s); using %s", forced,
               (cpu_mask & ISA_BIT(i)) ? "in this build" : "on this CPU",
               isa_list(cpu_mask & build_mask, have, sizeof have), pt_isa_name(best));
        return best;
    }
    /* Anything else: warn and use the best. */
    pt_log(PT_LOG_WARN, "PTRON_ISA=%s is not an ISA (auto, scalar, avx2, avx512, neon); using %s",
           forced, pt_isa_name(best));
    return best;
}

pt_isa pt_isa_choose(const char *forced)
{
    ensure_init();
    return choose(forced);
}

pt_isa pt_isa_default(void)
{
    ensure_init();
    return chosen;
}

pt_status pt_kernels_get(pt_isa isa, const pt_kernels **out)
{
    if (isa == PT_ISA_AUTO) isa = pt_isa_default();
    if (isa < PT_ISA_SCALAR || isa > PT_ISA_NEON)
        return pt_fail(PT_ERR_INVALID, "unknown ISA value %d", (int)isa);
    ensure_init();
    const unsigned bit = ISA_BIT(isa);
    if (!(cpu_mask & build_mask & bit)) {
        char have[64];
        return pt_fail(PT_ERR_UNSUPPORTED, "ISA %s is not available %s (it has: %s)",
                       pt_isa_name(isa), (cpu_mask & bit) ? "in this build" : "on this CPU",
                       isa_list(cpu_mask & build_mask, have, sizeof have));
    }
    *out = table_for(isa);
    return PT_OK;
}
