/*
 * Loading through pt_dataset_read: LIBSVM and CSV text and the .ptd binary, written once per run
 * by pt_dataset_write into the suite's temporary directory (so they sit in the page cache: this
 * is parsing and copying, not the disk). Text files hold 10,000 x 256 (about 40 MB); .ptd files
 * hold the same rows and the whole 200,000 x 256 set. Figures: MB/s of file, rows/s, and
 * vs_fileread: the time of read(2) of the same file into a touched buffer over the load's.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

enum { F_SVM, F_CSV, F_PTD, F_PTD_BIG, NFILES };
static const char *const file_names[NFILES] = {"rows10k.svm", "rows10k.csv", "rows10k.ptd",
                                                "big.ptd"};
static const char *const file_labels[NFILES] = {"libsvm", "csv", "ptd", "ptd"};
static const char *const file_data[NFILES] = {"rows10k", "rows10k", "rows10k", "big"};
static const pt_format file_formats[NFILES] = {PT_FORMAT_LIBSVM, PT_FORMAT_CSV, PT_FORMAT_PTD,
                                                PT_FORMAT_PTD};

static char paths[NFILES][4200];
static char write_err[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void write_files(void)
{
    const char *err;
    const pt_dataset *big = bt_dataset(BT_SEP_BIG, &err);
    const char *dir = bt_tmpdir();
    if (!big || !dir) {
        snprintf(write_err, sizeof write_err, "%s",
                 !big ? err : "cannot create a temporary directory");
        return;
    }
    size_t rows = pt_dataset_n(big) < 10000 ? pt_dataset_n(big) : 10000;
    pt_dataset *small = NULL;
    if (pt_dataset_slice(big, 0, rows, &small) != PT_OK) {
        snprintf(write_err, sizeof write_err, "slice: %s", pt_last_error());
        return;
    }
    for (int f = 0; f < NFILES; f++) {
        snprintf(paths[f], sizeof paths[f], "%s/%s", dir, file_names[f]);
        if (pt_dataset_write(f == F_PTD_BIG ? big : small, paths[f], file_formats[f]) != PT_OK) {
            snprintf(write_err, sizeof write_err, "writing %s: %.300s", file_names[f],
                     pt_last_error());
            break;
        }
    }
    pt_dataset_free(small);
}

/* Seconds to read(2) the whole file into a touched buffer: best of 3. */
static double fileread_seconds(const char *path, size_t size)
{
    char *buf = bt_alloc_touched(size + 1);
    int fd = open(path, O_RDONLY);
    double best = 0.0;
    if (buf && fd >= 0) {
        best = 1e30;
        for (int r = 0; r < 3; r++) {
            double t0 = bt_now();
            size_t got = 0;
            ssize_t k;
            lseek(fd, 0, SEEK_SET);
            while (got < size && (k = read(fd, buf + got, size - got)) > 0) got += (size_t)k;
            double t = bt_now() - t0;
            if (t < best) best = t;
        }
    }
    if (fd >= 0) close(fd);
    free(buf);
    return best;
}

static void bm_load(bs_state *st, const void *arg)
{
    const int f = (int)(intptr_t)arg;
    pthread_once(&once, write_files);
    struct stat sb;
    if (write_err[0] || stat(paths[f], &sb) != 0) {
        while (bs_keep_running(st)) {}
        bs_skip_with_error(st, write_err[0] ? write_err : "the file was not written");
        return;
    }
    pt_read_options o;
    pt_read_options_init(&o);
    o.format = file_formats[f];
    size_t n = 0;
    double el = 0.0;
    while (bs_keep_running(st)) {
        pt_dataset *ds = NULL;
        double t0 = bt_now();
        pt_status s = pt_dataset_read(paths[f], &o, &ds);
        el += bt_now() - t0;
        if (s != PT_OK) {
            bt_skip(st, s, "pt_dataset_read");
            break;
        }
        n = pt_dataset_n(ds);
        bs_pause_timing(st);
        pt_dataset_free(ds);
        bs_resume_timing(st);
    }
    if (bs_error_occurred(st)) return;
    const double it = (double)bs_iterations(st), size = (double)sb.st_size;
    bs_counter(st, "MB/s", size * it / 1e6, BS_RATE);
    bs_counter(st, "rows/s", (double)n * it, BS_RATE);
    bs_counter(st, "file_MB", size / 1e6, BS_PLAIN);
    bs_set_bytes_processed(st, (int64_t)(size * it));
    double fr = fileread_seconds(paths[f], (size_t)sb.st_size);
    if (fr > 0) bs_counter(st, "vs_fileread", fr / (el / it), BS_PLAIN);
}

void bt_register_loading(void)
{
    char name[128];
    for (int f = 0; f < NFILES; f++) {
        snprintf(name, sizeof name, "load/format:%s/data:%s", file_labels[f], file_data[f]);
        bs_bench *b = bs_register(name, bm_load, (const void *)(intptr_t)f);
        bs_use_real_time(b);
        bs_min_time(b, 0.3);
        bs_time_unit(b, BS_MS);
    }
}
