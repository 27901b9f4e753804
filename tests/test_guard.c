/* Guarded mappings (src/common/guard.c): a mapped file that shrinks under its readers reads as
 * zeros and is marked damaged, instead of killing the process with SIGBUS; a fault anywhere
 * else still goes where it went before (the handler there, or the default: death by SIGBUS). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/common.h"
#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define PAGES 8

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* A file of PAGES pages, page k filled with the byte 'a' + k, mapped read-only; its path. */
static const char *mapped_file(unsigned char **map)
{
    size_t page = page_size();
    unsigned char *bytes = malloc(PAGES * page);
    for (size_t k = 0; k < PAGES; k++) memset(bytes + k * page, 'a' + (int)k, page);
    const char *path = tu_write_bytes("guard", ".bin", bytes, PAGES * page);
    free(bytes);
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    *map = mmap(NULL, PAGES * page, PROT_READ, MAP_PRIVATE, fd, 0);
    ck_assert_ptr_ne(*map, MAP_FAILED);
    close(fd);
    return path;
}

static unsigned char read_byte(const unsigned char *p) { return *(const volatile unsigned char *)p; }

/* Truncated under a guarded mapping: what stayed reads as before, what went reads as zeros,
 * the guard says so, and the message names the file. */
START_TEST(shrunk_file_reads_zeros)
{
    unsigned char *map;
    char path[512];
    snprintf(path, sizeof path, "%s", mapped_file(&map));
    const size_t page = page_size();
    pt_guard *g = pt_guard_map(map, PAGES * page, path);
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(read_byte(map + 5 * page), 'f');
    ck_assert(!pt_guard_damaged(g));
    ck_assert_int_eq(pt_guard_check(g), PT_OK);
    ck_assert_int_eq(truncate(path, (off_t)(2 * page)), 0);
    ck_assert_int_eq(read_byte(map + 5 * page + 7), 0);
    ck_assert(pt_guard_damaged(g));
    ck_assert_int_eq(read_byte(map + 7 * page), 0);
    ck_assert_int_eq(read_byte(map + 3 * page), 0); /* before the page that faulted, past the end */
    ck_assert_int_eq(read_byte(map + page + 9), 'b');
    ck_assert_int_eq(read_byte(map), 'a');
    ck_assert_int_eq(pt_guard_check(g), PT_ERR_IO);
    char want[600];
    snprintf(want, sizeof want, "%s: file shrank while being read", path);
    HAS(pt_last_error(), want);
    ck_assert_int_eq(*pt_guard_flag(g), 1);
    pt_guard_release(g);
    munmap(map, PAGES * page);
    unlink(path);
}
END_TEST

typedef struct reader_arg {
    const unsigned char *map;
    size_t from;
    unsigned sum;
} reader_arg;

static void *read_pages(void *arg)
{
    reader_arg *a = arg;
    size_t page = page_size();
    for (size_t k = a->from; k < PAGES; k++) a->sum += read_byte(a->map + k * page + k);
    return NULL;
}

/* Several threads fault on the part that went at once: each reads zeros there. */
START_TEST(threads_fault_at_once)
{
    unsigned char *map;
    char path[512];
    snprintf(path, sizeof path, "%s", mapped_file(&map));
    const size_t page = page_size();
    pt_guard *g = pt_guard_map(map, PAGES * page, path);
    ck_assert_int_eq(truncate(path, (off_t)page), 0);
    pthread_t t[4];
    reader_arg a[4];
    for (int k = 0; k < 4; k++) {
        a[k] = (reader_arg){map, (size_t)(1 + k), 0};
        ck_assert_int_eq(pthread_create(&t[k], NULL, read_pages, &a[k]), 0);
    }
    for (int k = 0; k < 4; k++) {
        pthread_join(t[k], NULL);
        ck_assert_uint_eq(a[k].sum, 0);
    }
    ck_assert(pt_guard_damaged(g));
    ck_assert_int_eq(read_byte(map + 11), 'a');
    pt_guard_release(g);
    munmap(map, PAGES * page);
    unlink(path);
}
END_TEST

/* In a child: a guarded mapping and an unguarded one, both truncated; reading the unguarded
 * one's part that went. Returns the child's wait status. */
static int fault_outside(void (*before)(void))
{
    unsigned char *guarded, *other;
    char gpath[512], opath[512];
    snprintf(gpath, sizeof gpath, "%s", mapped_file(&guarded));
    snprintf(opath, sizeof opath, "%s", mapped_file(&other));
    const size_t page = page_size();
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (before) before();
        pt_guard *g = pt_guard_map(guarded, PAGES * page, gpath);
        if (!g || truncate(gpath, 0) != 0 || truncate(opath, 0) != 0) _exit(90);
        if (read_byte(guarded + page) != 0 || !pt_guard_damaged(g)) _exit(91);
        (void)read_byte(other + page); /* not guarded: SIGBUS, as without the library */
        _exit(92);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    unlink(gpath);
    unlink(opath);
    return st;
}

/* With no handler before: a fault outside the guarded mappings kills as SIGBUS does. (Under
 * AddressSanitizer its own handler was there before: it reports the fault and ends the child,
 * by abort or its exit code, never reaching the child's own exits.) */
START_TEST(fault_elsewhere_still_kills)
{
    int st = fault_outside(NULL);
    if (UNDER_ASAN)
        ck_assert_msg((WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT) ||
                      (WIFEXITED(st) && WEXITSTATUS(st) != 0 && WEXITSTATUS(st) < 90),
                      "status 0x%x, expected the sanitizer's report of the fault", st);
    else
        ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS, "status 0x%x, expected death "
                      "by SIGBUS", st);
}
END_TEST

static void users_handler(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)si;
    (void)ctx;
    _exit(42);
}

static void install_users_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = users_handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGBUS, &sa, NULL);
}

/* A handler installed before the library's gets the faults outside its mappings. */
START_TEST(fault_elsewhere_goes_to_the_handler_before)
{
    int st = fault_outside(install_users_handler);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 42, "status 0x%x, expected exit 42 from "
                  "the handler installed before", st);
}
END_TEST

/* The handler is the library's only while a mapping is guarded: then the one before again. */
START_TEST(handler_put_back)
{
    install_users_handler();
    unsigned char *map;
    char path[512];
    snprintf(path, sizeof path, "%s", mapped_file(&map));
    const size_t page = page_size();
    pt_guard *a = pt_guard_map(map, page, path), *b = pt_guard_map(map + page, page, path);
    struct sigaction now;
    sigaction(SIGBUS, NULL, &now);
    ck_assert_ptr_ne((void *)now.sa_sigaction, (void *)users_handler);
    pt_guard_release(a);
    sigaction(SIGBUS, NULL, &now);
    ck_assert_ptr_ne((void *)now.sa_sigaction, (void *)users_handler);
    pt_guard_release(b);
    sigaction(SIGBUS, NULL, &now);
    ck_assert_ptr_eq((void *)now.sa_sigaction, (void *)users_handler);
    ck_assert(!pt_guard_damaged(NULL));
    ck_assert_int_eq(pt_guard_check(NULL), PT_OK);
    munmap(map, PAGES * page);
    unlink(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("guard");
    TCase *t = tcase_create("guard");
    tcase_add_test(t, shrunk_file_reads_zeros);
    tcase_add_test(t, threads_fault_at_once);
    tcase_add_test(t, fault_elsewhere_still_kills);
    tcase_add_test(t, fault_elsewhere_goes_to_the_handler_before);
    tcase_add_test(t, handler_put_back);
    suite_add_tcase(s, t);
    return tu_run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
