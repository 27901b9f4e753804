/* ptron expand FILE --degree D | --rff D -o OUT: materialise a feature expansion. */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int cmd_expand(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, argc, argv);
    pt_expand_params p;
    pt_expand_params_init(&p);
    const char *in = NULL, *out = NULL, *format = NULL, *to = NULL, *arg;
    long degree = 0;
    size_t rff = 0;
    bool json = false, quiet = false;
    while ((arg = cli_next(&a)) && !a.error) {
        if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) out = cli_value(&a, arg);
        else if (strcmp(arg, "--degree") == 0) cli_int(&a, arg, 1, 32, &degree);
        else if (strcmp(arg, "--coef0") == 0) cli_float(&a, arg, 0.0, 1e30, &p.coef0);
        else if (strcmp(arg, "--rff") == 0) cli_size(&a, arg, 1, (size_t)1 << 40, &rff);
        else if (strcmp(arg, "--gamma") == 0) cli_float(&a, arg, 1e-30, 1e30, &p.gamma);
        else if (strcmp(arg, "--seed") == 0) cli_u64(&a, arg, &p.seed);
        else if (strcmp(arg, "--hash-bits") == 0) {
            long hb = 0;
            if (cli_int(&a, arg, 1, 31, &hb)) p.hash_bits = (int)hb;
        }
        else if (strcmp(arg, "--max-features") == 0) cli_size(&a, arg, 1, SIZE_MAX, &p.max_features);
        else if (strcmp(arg, "--mem-mb") == 0) cli_size(&a, arg, 1, SIZE_MAX >> 21, &cli_mem_mb);
        else if (strcmp(arg, "--format") == 0) format = cli_value(&a, arg);
        else if (strcmp(arg, "--delimiter") == 0) cli_delimiter(&a, arg);
        else if (strcmp(arg, "--label-column") == 0) cli_label_column(&a, arg);
        else if (strcmp(arg, "--layout") == 0) cli_layout_opt(&a, arg);
        else if (strcmp(arg, "--to") == 0) to = cli_value(&a, arg);
        else if (strcmp(arg, "--json") == 0) json = true;
        else if (strcmp(arg, "--quiet") == 0 || strcmp(arg, "-q") == 0) quiet = true;
        else if (arg[0] == '-' && arg[1]) return cli_usage_error("expand", "unknown option %s", arg);
        else if (!in) in = arg;
        else return cli_usage_error("expand", "unexpected argument '%s'", arg);
    }
    if (a.error) return EXIT_USAGE;
    if (!in || !out) return cli_usage_error("expand", "needs FILE and -o OUT");
    if (cli_is_std(out))
        return cli_usage_error("expand", "-o -: standard output carries the report; write OUT "
                               "to a file (or pipe ptron convert OUT -o -)");
    int refused = cli_refuse_same_file("expand", (const cli_file[]){{"-o", out}, {NULL, NULL}},
                                       (const cli_file[]){{"FILE", in}, {NULL, NULL}});
    if (refused != EXIT_OK) return refused;
    if ((degree > 0) == (rff > 0)) return cli_usage_error("expand", "give one of --degree D or --rff D");
    if (p.hash_bits && rff) return cli_usage_error("expand", "--hash-bits goes with --degree D");
    pt_format out_format = PT_FORMAT_AUTO;
    if (to && pt_format_parse(to, &out_format) != PT_OK) return cli_usage_error("expand", "%s", pt_last_error());
    if (degree > 0) {
        p.kind = PT_EXPAND_POLY;
        p.degree = (int)degree;
    } else {
        p.kind = PT_EXPAND_RFF;
        p.rff_dim = rff;
    }
    if (cli_mem_mb) p.mem_budget_bytes = cli_mem_mb << 20;
    cli_install_log(quiet || json);

    pt_dataset *ds = NULL, *x = NULL;
    double load_s = 0.0;
    pt_status s = cli_read_dataset(in, format, 0, &ds, &load_s);
    if (s != PT_OK) return cli_fail(s);
    size_t n = pt_dataset_n(ds), d = pt_dataset_d(ds);
    size_t dim = pt_expand_dim(&p, d);
    size_t padded = dim == SIZE_MAX ? SIZE_MAX : (dim + 15) / 16 * 16;
    /* bytes of the padded float32 matrix; SIZE_MAX when it overflows */
    size_t bytes = SIZE_MAX;
    if (padded != SIZE_MAX && padded <= SIZE_MAX / sizeof(float) / (n ? n : 1))
        bytes = n * padded * sizeof(float);

    /* the dimension first, before any work */
    if (!json && !quiet) {
        if (p.kind == PT_EXPAND_POLY && p.hash_bits)
            printf("%s: %zu rows x %zu features -> degree-%d polynomial, coef0 %g, hashed to "
                   "2^%d = ", in, n, d, p.degree, (double)p.coef0, p.hash_bits);
        else if (p.kind == PT_EXPAND_POLY)
            printf("%s: %zu rows x %zu features -> degree-%d polynomial, coef0 %g: C(%zu + %d, %d) = ",
                   in, n, d, p.degree, (double)p.coef0, d, p.degree, p.degree);
        else
            printf("%s: %zu rows x %zu features -> random Fourier features, gamma %g, seed %llu: ",
                   in, n, d, (double)p.gamma, (unsigned long long)p.seed);
        if (dim == SIZE_MAX) printf("more than 2^64 features\n");
        else if (bytes == SIZE_MAX) printf("%zu features; the matrix overflows a byte count\n", dim);
        else if (p.kind == PT_EXPAND_POLY && pt_dataset_layout(ds) == PT_LAYOUT_SPARSE)
            printf("%zu features, sparse rows (the monomials of each row's non-zeros)\n", dim);
        else printf("%zu features, %zu bytes (%.1f MiB) materialised\n", dim, bytes, bytes / 1048576.0);
        fflush(stdout);
    }

    double t0 = now();
    s = pt_expand(ds, &p, &x);
    double expand_s = now() - t0, write_s = 0.0;
    if (s == PT_OK && pt_dataset_layout(x) == PT_LAYOUT_SPARSE) {
        pt_dataset_info xi;
        pt_dataset_get_info(x, &xi);
        bytes = xi.bytes; /* the CSR arrays made */
    }
    if (s == PT_OK) {
        t0 = now();
        s = pt_dataset_write(x, out, out_format);
        write_s = now() - t0;
    }
    int rc = s == PT_OK ? EXIT_OK : cli_exit_status(s);
    if (json) {
        /* also on a refusal: the dimension and bytes are what a script wants to know */
        json_out j;
        json_begin(&j, stdout);
        json_str(&j, "file", in);
        json_str(&j, "output", out);
        json_str(&j, "kind", p.kind == PT_EXPAND_POLY ? "poly" : "rff");
        if (p.kind == PT_EXPAND_POLY) {
            json_int(&j, "degree", p.degree);
            json_num(&j, "coef0", p.coef0);
        } else {
            json_num(&j, "gamma", p.gamma);
            json_int(&j, "seed", (long long)p.seed);
        }
        json_int(&j, "n", (long long)n);
        json_int(&j, "d", (long long)d);
        if (dim == SIZE_MAX) json_num(&j, "dim", (double)SIZE_MAX);
        else json_int(&j, "dim", (long long)dim);
        json_num(&j, "bytes", bytes == SIZE_MAX ? (double)SIZE_MAX : (double)bytes);
        json_bool(&j, "ok", s == PT_OK);
        if (s != PT_OK) json_str(&j, "error", cli_message(pt_last_error()));
        json_num(&j, "load_seconds", load_s);
        json_num(&j, "expand_seconds", expand_s);
        json_num(&j, "write_seconds", write_s);
        if (s == PT_OK && expand_s > 0) json_num(&j, "expand_gb_per_second", bytes / expand_s / 1e9);
        json_end(&j);
    }
    if (s != PT_OK) {
        cli_fail(s);
    } else if (!json && !quiet) {
        printf("%s: %zu rows x %zu features written (expand %.3f s, %.3g GB/s; write %.3f s)\n", out,
               n, dim, expand_s, expand_s > 0 ? bytes / expand_s / 1e9 : 0.0, write_s);
    }
    pt_dataset_free(x);
    pt_dataset_free(ds);
    return rc;
}
