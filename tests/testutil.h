/* Helpers shared by the check tests: temporary files, running the CLI. */
#ifndef PT_TESTUTIL_H
#define PT_TESTUTIL_H

#include <check.h>
#include <stddef.h>

#include "ptron.h"

/* A fresh path under the test temp dir: "<tmp>/<tag>-<pid>-<counter><ext>". Static buffer
 * rotation: valid for the next 8 calls. */
const char *tu_path(const char *tag, const char *ext);
/* Write text to a new file and return its path. */
const char *tu_write_file(const char *tag, const char *ext, const char *text);
/* Write len bytes. */
const char *tu_write_bytes(const char *tag, const char *ext, const void *data, size_t len);
/* Read a whole file into a malloc'd NUL-terminated buffer (NULL if unreadable). */
char *tu_read_file(const char *path, size_t *len);

/* Run "$PTRON_BIN args" through the shell; returns the exit status, or 1000 + the signal that
 * killed it, and stdout and stderr as malloc'd strings if out/err are not NULL. */
int tu_run_cli(const char *args, char **out, char **err);
/* The same after shell commands (prefix: "ulimit -v 1048576", "" for none): "PREFIX; exec
 * $PTRON_BIN ARGS". */
int tu_run_cli_sh(const char *prefix, const char *args, char **out, char **err);

/* Start "$PTRON_BIN args" in the background without a shell (args split at spaces), stdout and
 * stderr into the files named (NULL: /dev/null); returns its pid. */
int tu_spawn_cli(const char *args, const char *out_path, const char *err_path);
/* Wait for a spawned process: its exit status, or 1000 + the signal that killed it. */
int tu_wait_cli(int pid);
/* Wait until path exists: the event a test waits for before it sends a signal. Fails the test
 * if the process ends first (it could not have been interrupted). No clock is involved. */
void tu_wait_for_file(const char *path, int pid);

/* A small dataset from a dense array (row-major, n x d) and labels. */
pt_dataset *tu_dataset(size_t n, size_t d, const float *x, const double *labels);

/* Run a suite and return the number of failures (for main). */
int tu_run_suite(Suite *s);

#endif
