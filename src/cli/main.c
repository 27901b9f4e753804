/* ptron: the command-line program. One file per subcommand; this one dispatches and holds the
 * process-wide settings (BLAS core type, thread counts). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#include <cblas.h>

#include "cli.h"

void cli_set_threads(int threads)
{
    if (threads <= 0) return;
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    openblas_set_num_threads(threads);
}

/* OpenBLAS 0.3.21 (Debian) takes some AVX-512 CPUs for an AVX2 core and runs its AVX2
 * kernels there; OPENBLAS_CORETYPE=SkylakeX gives its AVX-512 ones, much faster in ssyrk,
 * sgemm and sgemv (bench gram/build and baseline/sgemv, the report's columns marked SKX). The
 * variable is read when the library loads, so when it is unset and the CPU has AVX-512, the
 * commands that use BLAS start again with it set. A value the user set is respected. */
static void prefer_skylakex_blas(char **argv)
{
#if defined(__x86_64__)
    if (getenv("OPENBLAS_CORETYPE") || getenv("PTRON_KEEP_BLAS_CORETYPE")) return;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f")) return;
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
    execv("/proc/self/exe", argv);
    /* exec failed: carry on with the default kernels */
#else
    (void)argv;
#endif
}

static const struct {
    const char *name;
    int (*fn)(int, char **);
} commands[] = {
    {"gen", cmd_gen},     {"info", cmd_info},       {"convert", cmd_convert},
    {"train", cmd_train}, {"predict", cmd_predict}, {"expand", cmd_expand},
    {"bench", cmd_bench},   {"scale", cmd_scale},
};

/* "ptron: unknown command 'X' (did you mean Y?)" and the overview on stderr. */
static int unknown_command(const char *what, const char *cmd)
{
    const char *names[sizeof commands / sizeof commands[0] + 3];
    size_t k = 0;
    for (; k < sizeof commands / sizeof commands[0]; k++) names[k] = commands[k].name;
    names[k++] = "help";
    names[k++] = "version";
    names[k] = NULL;
    const char *near = cli_suggest(cmd, names);
    if (near) fprintf(stderr, "ptron: %s '%s' (did you mean %s?)\n", what, cmd, near);
    else fprintf(stderr, "ptron: %s '%s'\n", what, cmd);
    cli_usage(stderr, NULL);
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    cli_globals_reset();
    if (argc < 2) {
        cli_usage(stderr, NULL);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("ptron %s\n", PT_VERSION_STRING);
        return EXIT_OK;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        /* help COMMAND: its options; a name that is no command is a usage error */
        const char *topic = argc > 2 ? argv[2] : NULL;
        if (topic && (strcmp(topic, "-h") == 0 || strcmp(topic, "--help") == 0 ||
                      strcmp(topic, "help") == 0))
            topic = NULL;
        if (argc > 3) {
            fprintf(stderr, "ptron help: unexpected argument '%s'\n", argv[3]);
            return EXIT_USAGE;
        }
        if (topic && !cli_usage(NULL, topic)) return unknown_command("help: no command", topic);
        cli_usage(stdout, topic);
        return EXIT_OK;
    }
    if (strcmp(cmd, "train") == 0 || strcmp(cmd, "bench") == 0 || strcmp(cmd, "expand") == 0)
        prefer_skylakex_blas(argv);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(cmd, commands[i].name) != 0) continue;
        /* ptron CMD --help (or -h): the same text as ptron help CMD */
        for (int a = 2; a < argc; a++)
            if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
                cli_usage(stdout, cmd);
                return EXIT_OK;
            }
        /* under mpirun: MPI from here (after the exec above), ended once the command is */
        if (pt_dist_init(&argc, &argv) != PT_OK) return cli_fail(PT_ERR_IO);
        int rc = commands[i].fn(argc - 1, argv + 1);
        pt_dist_finalize();
        return rc;
    }
    return unknown_command("unknown command", cmd);
}
