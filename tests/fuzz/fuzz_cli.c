/* libFuzzer target: the CLI's argument parsing, through the real main (src/cli compiled with
 * -Dmain=ptron_main). The input is argv after "ptron", split on NUL bytes.
 *
 * Runs happen in a private directory holding a small dataset in each format and a model
 * (d.svm, d.csv, d.ptd, m.model), recreated before every run, so parsed options can reach
 * real (tiny) work. To keep a run short and confined to that directory, the harness skips
 * inputs with an argument containing '/', a run of 3+ digits (no --n/--epochs/... above 99)
 * or --threads other than 1 or 2. stdout and stderr go to /dev/null (sanitizer reports use
 * the file descriptor and still show). */
#include <dirent.h>
#include <signal.h>
#include <stdbool.h>

#include "cli.h"
#include "fuzz_util.h"

int ptron_main(int argc, char **argv);

#define MAX_ARGS 48

static char dir[256];
static struct sigaction fuzzer_int, fuzzer_term;

static void put_file(const char *name, const void *text, size_t len)
{
    FILE *f = fopen(name, "wb");
    if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) abort();
}

static const char svm[] = "1 1:0.5 2:-1\n-1 1:-0.5 3:2\n1 2:1 3:0.25\n-1 1:-1\n";
static const char csv[] = "y,a,b,c\n1,0.5,-1,0\n-1,-0.5,0,2\n1,0,1,0.25\n-1,-1,0,0\n";
static unsigned char *ptd, *model;
static size_t ptd_len, model_len;

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) abort();
    unsigned char *b = malloc(1 << 16);
    *len = fread(b, 1, 1 << 16, f);
    fclose(f);
    return b;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* main starts train, bench and expand again with OPENBLAS_CORETYPE set (an exec of
     * /proc/self/exe) on an AVX-512 CPU: here that would replace the fuzzer with a new one
     * taking "train" for its corpus directory */
    setenv("PTRON_KEEP_BLAS_CORETYPE", "1", 1);
    snprintf(dir, sizeof dir, "%s", fuzz_scratch_dir());
    if (chdir(dir) != 0) abort();
    sigaction(SIGINT, NULL, &fuzzer_int); /* `ptron train` installs its own */
    sigaction(SIGTERM, NULL, &fuzzer_term);
    /* The .ptd and the model come from the library itself, once. */
    put_file("d.svm", svm, sizeof svm - 1);
    pt_dataset *ds;
    if (pt_dataset_read("d.svm", NULL, &ds) != PT_OK) abort();
    if (pt_dataset_write(ds, "d.ptd", PT_FORMAT_PTD) != PT_OK) abort();
    pt_train_params p;
    pt_train_params_init(&p);
    p.threads = 1;
    pt_model *m;
    if (pt_train(ds, &p, &m, NULL) != PT_OK || pt_model_save(m, "m.model") != PT_OK) abort();
    pt_model_free(m);
    pt_dataset_free(ds);
    ptd = slurp("d.ptd", &ptd_len);
    model = slurp("m.model", &model_len);
    /* The CLI's chatter goes nowhere; libFuzzer kept its own copy of the stderr stream. */
    FILE *null = fopen("/dev/null", "w");
    if (!null) abort();
    stdout = null;
    stderr = null;
    return 0;
}

/* Empty the directory, then put the fixtures back. */
static void reset_dir(void)
{
    DIR *d = opendir(".");
    if (!d) abort();
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) unlink(e->d_name);
    closedir(d);
    put_file("d.svm", svm, sizeof svm - 1);
    put_file("d.csv", csv, sizeof csv - 1);
    put_file("d.ptd", ptd, ptd_len);
    put_file("m.model", model, model_len);
}

static bool acceptable(char **argv, int argc)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strchr(a, '/')) return false;
        int run = 0;
        for (const char *p = a; *p; p++)
            if ((run = *p >= '0' && *p <= '9' ? run + 1 : 0) >= 3) return false;
        if (strcmp(a, "--threads") == 0 && i + 1 < argc && strcmp(argv[i + 1], "1") != 0 &&
            strcmp(argv[i + 1], "2") != 0)
            return false;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1024) return 0;
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "ptron";
    for (size_t at = 0; at < size && argc <= MAX_ARGS; at += strlen(buf + at) + 1)
        argv[argc++] = buf + at;
    argv[argc] = NULL;
    if (acceptable(argv, argc)) {
        reset_dir();
        int rc = ptron_main(argc, argv);
        FUZZ_CHECK(rc == 0 || rc == 1 || rc == 2, "exit status %d is not 0, 1 or 2", rc);
        fflush(stdout);
        sigaction(SIGINT, &fuzzer_int, NULL);
        sigaction(SIGTERM, &fuzzer_term, NULL);
    }
    free(buf);
    return 0;
}
