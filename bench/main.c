/*
 * ptron-bench: the Google Benchmark suite (bodies in C, through bench/shim).
 *
 *   ptron-bench [--benchmark_filter=REGEX] [--benchmark_repetitions=N] [--benchmark_format=json]
 *               [--bs_smoke] ...
 *
 * Baselines run first so the figures after them can report ratios to what they measured.
 * The JSON context records the machine facts the report prints (CPU, cores, memory, OpenBLAS
 * core type, ISAs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "bench.h"

static void quiet_log(pt_log_level level, const char *msg, void *user)
{
    (void)user;
    if (level == PT_LOG_WARN) fprintf(stderr, "ptron: warning: %s\n", msg);
}

static void add_machine_context(void)
{
    char line[512], model[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            const char *v = strchr(line, ':');
            if (v) {
                snprintf(model, sizeof model, "%s", v + 2);
                model[strcspn(model, "\n")] = 0;
            }
            break;
        }
    if (f) fclose(f);
    bs_add_context("cpu_model", model);

    char buf[256];
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    snprintf(buf, sizeof buf, "%.1f GiB", (double)pages * (double)psize / (1024.0 * 1024 * 1024));
    bs_add_context("memory", buf);
    snprintf(buf, sizeof buf, "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    bs_add_context("cores", buf);
    const char *ct = getenv("OPENBLAS_CORETYPE");
    bs_add_context("openblas_coretype", ct && *ct ? ct : "(unset)");
    bs_add_context("openblas_core", openblas_get_corename());
    bs_add_context("openblas_config", openblas_get_config());

    pt_isa isas[4];
    int n = bt_isas(isas);
    buf[0] = 0;
    for (int i = 0; i < n; i++) {
        strcat(buf, i ? "," : "");
        strcat(buf, pt_isa_name(isas[i]));
    }
    bs_add_context("ptron_isas", buf);
    bs_add_context("ptron_isa_default", pt_isa_name(pt_isa_default()));
    bs_add_context("ptron_version", PT_VERSION_STRING);
    bs_add_context("smoke", bs_smoke() ? "1" : "0");
}

int main(int argc, char **argv)
{
    bs_init(&argc, argv);
    pt_set_log(quiet_log, NULL);
    add_machine_context();
    bt_register_baselines();
    bt_register_kernels();
    bt_register_online();
    bt_register_sparse_online();
    bt_register_compact();
    bt_register_batch();
    bt_register_gram();
    bt_register_expansion();
    bt_register_loading();
    return bs_run(argc, argv);
}
