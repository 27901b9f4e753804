/* ptron convert IN -o OUT: between LIBSVM, CSV and .ptd. */
#include <string.h>

#include "cli.h"

int cmd_convert(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, argc, argv);
    const char *in = NULL, *out = NULL, *format = NULL, *to = NULL, *dtype = NULL, *arg;
    size_t max_features = 0;
    while ((arg = cli_next(&a)) && !a.error) {
        if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) out = cli_value(&a, arg);
        else if (strcmp(arg, "--format") == 0) format = cli_value(&a, arg);
        else if (strcmp(arg, "--delimiter") == 0) cli_delimiter(&a, arg);
        else if (strcmp(arg, "--label-column") == 0) cli_label_column(&a, arg);
        else if (strcmp(arg, "--layout") == 0) cli_layout_opt(&a, arg);
        else if (strcmp(arg, "--to") == 0) to = cli_value(&a, arg);
        else if (strcmp(arg, "--dtype") == 0) dtype = cli_value(&a, arg);
        else if (strcmp(arg, "--max-features") == 0) cli_size(&a, arg, 1, SIZE_MAX, &max_features);
        else if (strcmp(arg, "--mem-mb") == 0) cli_size(&a, arg, 1, SIZE_MAX >> 21, &cli_mem_mb);
        else if (arg[0] == '-' && arg[1]) return cli_usage_error("convert", "unknown option %s", arg);
        else if (!in) in = arg;
        else return cli_usage_error("convert", "unexpected argument '%s'", arg);
    }
    if (a.error) return EXIT_USAGE;
    if (!in || !out) return cli_usage_error("convert", "needs IN and -o OUT");
    int rc = cli_refuse_same_file("convert", (const cli_file[]){{"-o", out}, {NULL, NULL}},
                                  (const cli_file[]){{"IN", in}, {NULL, NULL}});
    if (rc != EXIT_OK) return rc;
    pt_format out_format = PT_FORMAT_AUTO;
    if (to && pt_format_parse(to, &out_format) != PT_OK) return cli_usage_error("convert", "%s", pt_last_error());
    pt_dtype want = PT_DTYPE_F32;
    if (dtype && pt_dtype_parse(dtype, &want) != PT_OK)
        return cli_usage_error("convert", "--dtype: %s", pt_last_error());
    if (dtype && pt_format_from_path(out) != PT_FORMAT_PTD && out_format != PT_FORMAT_PTD &&
        want != PT_DTYPE_F32)
        return cli_usage_error("convert", "--dtype %s: only a .ptd file stores compact rows (text "
                               "holds numbers)", dtype);
    pt_format in_format = PT_FORMAT_AUTO;
    if (format && pt_format_parse(format, &in_format) != PT_OK)
        return cli_usage_error("convert", "--format: %s", pt_last_error());
    if (in_format == PT_FORMAT_AUTO) in_format = pt_format_from_path(in);
    if (out_format == PT_FORMAT_AUTO) out_format = pt_format_from_path(out);
    if ((in_format == PT_FORMAT_LIBSVM || in_format == PT_FORMAT_CSV) &&
        out_format == PT_FORMAT_PTD && want == PT_DTYPE_F32) {
        /* text to float32 .ptd: within --mem-mb however large the text (bounded convert) */
        cli_install_log(false); /* PTRON_VERBOSE shows which way it converts */
        pt_read_options o;
        pt_read_options_init(&o);
        o.format = in_format;
        if (max_features) o.max_features = max_features;
        if (cli_csv_delimiter) o.csv_delimiter = cli_csv_delimiter;
        o.csv_label_column = cli_csv_label_column;
        o.csv_label_name = cli_csv_label_name;
        if (cli_mem_mb) o.mem_budget_bytes = cli_mem_mb << 20;
        o.layout = cli_layout;
        pt_status s = pt_dataset_convert_file(in, &o, out);
        return s == PT_OK ? EXIT_OK : cli_fail(s);
    }
    pt_dataset *ds;
    pt_status s = cli_read_dataset(in, format, max_features, &ds, NULL);
    if (s != PT_OK) return cli_fail(s);
    if (dtype && want != pt_dataset_dtype(ds)) {
        pt_dataset *c;
        s = pt_dataset_to_dtype(ds, want, cli_mem_mb << 20, &c);
        pt_dataset_free(ds);
        if (s != PT_OK) return cli_fail(s);
        ds = c;
    }
    s = pt_dataset_write(ds, out, out_format);
    pt_dataset_free(ds);
    return s == PT_OK ? EXIT_OK : cli_fail(s);
}
