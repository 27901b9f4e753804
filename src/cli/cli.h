/* Shared pieces of the `ptron` command-line program. The library never prints; this does. */
#ifndef PT_CLI_H
#define PT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ptron.h"

/* The batch path's defaults in the CLI (train, bench): averaged mini-batches of this many rows
 * (ptron help train says why). */
#define CLI_BATCH_SIZE 256

/* Exit statuses of the CLI contract. */
enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_INPUT = 2, EXIT_SIGINT = 130, EXIT_SIGTERM = 143 };

/* Subcommands: argv[0] is the subcommand name. */
int cmd_gen(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_expand(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_scale(int argc, char **argv);

/* Usage text of a subcommand (NULL for the overview); false (and the overview) when cmd is
 * no subcommand. f NULL prints nothing: whether cmd has a usage text. */
bool cli_usage(FILE *f, const char *cmd);

/* The closest of the NULL-terminated names to word (edit distance, at most a third of its
 * length and at least 1, or a prefix of one), or NULL: "did you mean ...?". */
const char *cli_suggest(const char *word, const char *const *names);
/* The closest option to opt among those cmd's usage text lists (every --word in it), or NULL. */
const char *cli_suggest_option(const char *cmd, const char *opt);

/* A library message as the CLI shows it: each parameter the library names (a struct field
 * such as "pt_train_params.epochs", an enum value such as "PT_SCHEDULE_PEGASOS") replaced by
 * what a user types for it ("--epochs", "pegasos"). In a buffer of the calling thread, valid
 * until its next call. */
const char *cli_message(const char *msg);

/* Print "ptron CMD: message" (through cli_message) and the usage line; return EXIT_USAGE.
 * The message "unknown option %s" also says which listed option was probably meant. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print "ptron: <pt_last_error() or strerror>" (through cli_message) and return the exit
 * status for s. */
int cli_fail(pt_status s);
int cli_exit_status(pt_status s);

/* Option parsing over argv. An option takes its value from the next argument, or from the
 * same one as --opt=value: cli_next returns "--opt" (the '=' in argv cut to a NUL) and keeps
 * "value" for cli_value; a value given to an option that takes none is a usage error. */
typedef struct cli_args {
    int argc, i;
    char **argv;
    const char *cmd;
    bool error;
    const char *inline_value; /* the value after '=' in the last option, until taken */
    const char *inline_opt;   /* that option */
} cli_args;

void cli_args_init(cli_args *a, int argc, char **argv);
/* Next argument, or NULL at the end. */
const char *cli_next(cli_args *a);
/* The value after an option (error if missing). */
const char *cli_value(cli_args *a, const char *opt);
bool cli_int(cli_args *a, const char *opt, long lo, long hi, long *out);
bool cli_size(cli_args *a, const char *opt, size_t lo, size_t hi, size_t *out);
bool cli_u64(cli_args *a, const char *opt, uint64_t *out);
bool cli_double(cli_args *a, const char *opt, double lo, double hi, double *out);
bool cli_float(cli_args *a, const char *opt, double lo, double hi, float *out);

/* After a data output written to standard output ("-"): flush it and send what the command
 * prints from then on (its report) to stderr. EXIT_OK, or EXIT_INPUT with a message. */
int cli_report_to_stderr(void);
/* Whether path is "-" (standard input or output). */
bool cli_is_std(const char *path);
/* A file a command reads or writes, as the user named it: what ("-o", "DATA", "--params"),
 * and its path (NULL: not given). Lists end with what NULL. */
typedef struct cli_file {
    const char *what, *path;
} cli_file;
/* A usage error naming both when an output is one of the inputs (one regular file, symlinks
 * followed), which writing it would replace; else EXIT_OK. */
int cli_refuse_same_file(const char *cmd, const cli_file *outputs, const cli_file *inputs);

/* Log sink: warnings to stderr as "ptron: warning: ...", info only if verbose. */
void cli_install_log(bool quiet);

/* Minimal JSON writer on stdout: one object, keys in order. */
typedef struct json_out {
    FILE *f;
    bool first;
    int depth;
} json_out;

void json_begin(json_out *j, FILE *f);
void json_end(json_out *j);
void json_str(json_out *j, const char *key, const char *value);
void json_num(json_out *j, const char *key, double value);
void json_int(json_out *j, const char *key, long long value);
void json_bool(json_out *j, const char *key, bool value);
void json_size_array(json_out *j, const char *key, const size_t *v, size_t n);
void json_double_array(json_out *j, const char *key, const double *v, size_t n);
void json_object_begin(json_out *j, const char *key);
void json_object_end(json_out *j);

/* Progress on stderr, only when it is a terminal and not quiet. */
typedef struct progress {
    bool enabled;
    int epochs;
    size_t n;
} progress;

void progress_init(progress *p, bool quiet, int epochs, size_t n);
int progress_epoch(int epoch, size_t mistakes, double seconds, void *user);
void progress_done(progress *p);

/* --mem-mb of the running command (0: the library's default, half of RAM). */
extern size_t cli_mem_mb;
/* --delimiter of the running command: the CSV field separator (0: the library's, ','). */
extern char cli_csv_delimiter;
/* Parse --delimiter C (one character, or "tab") into cli_csv_delimiter. */
bool cli_delimiter(cli_args *a, const char *opt);
/* --label-column of the running command: a CSV input's label column as
 * pt_read_options.csv_label_column (0-based, or PT_CSV_LABEL_LAST) and csv_label_name. */
extern int cli_csv_label_column;
extern const char *cli_csv_label_name;
/* Parse --label-column N|last|NAME (N counts from 1, as cut -f and the messages do). */
bool cli_label_column(cli_args *a, const char *opt);
/* --layout of the running command: the layout datasets are read into (auto by default). */
extern pt_layout cli_layout;
/* Parse --layout auto|dense|sparse into cli_layout. */
bool cli_layout_opt(cli_args *a, const char *opt);
/* The options above back to their defaults: main runs this first, so that a command run
 * after another in one process (the CLI fuzz target) never sees the last one's options. */
void cli_globals_reset(void);

/* --threads T (T > 0) for everything the command runs: OpenMP's teams and OpenBLAS's. */
void cli_set_threads(int threads);

/* Monotonic seconds (the stages' timings). */
double cli_now(void);

/* Read a dataset, printing nothing; on failure the caller reports via cli_fail. */
pt_status cli_read_dataset(const char *path, const char *format, size_t max_features,
                           pt_dataset **out, double *seconds);
/* The same (CLI_READ_WHOLE), or under mpirun this rank's share (CLI_READ_SHARE,
 * pt_dataset_read_shard) or the whole data on every rank (CLI_READ_REPLICATED). */
enum { CLI_READ_WHOLE, CLI_READ_SHARE, CLI_READ_REPLICATED };
pt_status cli_read_data(const char *path, const char *format, size_t max_features, int share,
                        pt_dataset **out, double *seconds);

#endif
