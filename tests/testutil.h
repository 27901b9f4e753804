/* Helpers shared by the check tests: temporary files, running the CLI. */
#ifndef PT_TESTUTIL_H
#define PT_TESTUTIL_H

#include <check.h>
#include <stddef.h>
#include <string.h>

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

/* Assert that the text s holds sub, printing s if not. */
#define HAS(s, sub) ck_assert_msg(strstr((s), (sub)) != NULL, "'%s' not in: %s", (sub), (s))

/* Run "$PTRON_BIN args" through the shell; returns the exit status, or 1000 + the signal that
 * killed it, and stdout and stderr as malloc'd strings if out/err are not NULL. */
int tu_run_cli(const char *args, char **out, char **err);
/* The same after shell commands (prefix: "ulimit -v 1048576", "" for none): "PREFIX; exec
 * $PTRON_BIN ARGS". */
int tu_run_cli_sh(const char *prefix, const char *args, char **out, char **err);
/* "[FEED |] exec $PTRON_BIN ARGS" (FEED: a shell command whose output is ptron's standard
 * input; NULL: /dev/null), and the peak resident memory of ptron in KiB (*peak_kib: wait4's
 * ru_maxrss of the shell, the largest of its own and its children's, so FEED's too). */
int tu_run_cli_peak(const char *feed, const char *args, char **out, char **err, long *peak_kib);

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

/* Row i of ds in either layout as its stride floats (a sparse row's absent features 0). */
void tu_row_dense(const pt_dataset *ds, size_t i, float *out);
/* a and b hold the same rows: n, d, every row's label value and feature values (bit for bit,
 * except that -0 and +0 are both an absent zero), whatever their layouts; aborts the test
 * naming what, the row and the column on the first difference. */
void tu_assert_same_data(const pt_dataset *a, const pt_dataset *b, const char *what);
/* A sparse dataset's arrays as the readers make them: offsets from 0 not decreasing, columns
 * increasing and below d, values finite and non-zero, nnz = the entries. */
void tu_assert_clean_csr(const pt_dataset *ds);

/* Run a suite and return the number of failures (for main). */
int tu_run_suite(Suite *s);

#endif
