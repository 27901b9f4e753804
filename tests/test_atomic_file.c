/* Atomic writes (pt_write_atomic): a regular file is replaced whole or not at all, and what the
 * path is stays what it was: a symlink stays a link to new content, a FIFO or a device is
 * written through, a directory or socket is refused. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/common.h"
#include "testutil.h"

static pt_status write_hello(FILE *f, const void *ctx)
{
    (void)ctx;
    return fputs("hello\n", f) < 0 ? pt_fail(PT_ERR_IO, "write") : PT_OK;
}

static pt_status write_then_fail(FILE *f, const void *ctx)
{
    (void)ctx;
    fputs("partial", f);
    return pt_fail(PT_ERR_IO, "simulated failure");
}

/* The text a write leaves at path ("" if none); for assertions. */
static char *contents(const char *path)
{
    char *t = tu_read_file(path, NULL);
    return t ? t : strdup("");
}

static void assert_contents(const char *path, const char *want)
{
    char *t = contents(path);
    ck_assert_msg(strcmp(t, want) == 0, "%s holds '%s', want '%s'", path, t, want);
    free(t);
}

static mode_t kind_of(const char *path)
{
    struct stat sb;
    ck_assert_msg(lstat(path, &sb) == 0, "%s: %s", path, strerror(errno));
    return sb.st_mode & S_IFMT;
}

/* No "NAME.tmp.*" left beside name. */
static void assert_no_temporary(const char *name)
{
    char dir[1024], prefix[1024];
    snprintf(dir, sizeof dir, "%s", name);
    char *slash = strrchr(dir, '/');
    ck_assert_ptr_nonnull(slash);
    *slash = '\0';
    snprintf(prefix, sizeof prefix, "%s.tmp.", slash + 1);
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        ck_assert_msg(strncmp(e->d_name, prefix, strlen(prefix)) != 0, "%s/%s left behind", dir,
                      e->d_name);
    closedir(d);
}

/* A directory of its own for a test (unique under the test temp dir). */
static const char *fresh_dir(char *buf, size_t len)
{
    snprintf(buf, len, "%s", tu_path("atomic-dir", ""));
    ck_assert_int_eq(mkdir(buf, 0700), 0);
    return buf;
}

START_TEST(replaces_regular_file_or_keeps_it)
{
    char p[512];
    snprintf(p, sizeof p, "%s", tu_write_file("atomic", ".txt", "old contents\n"));
    /* a failing writer leaves the old file intact and no temporary behind */
    ck_assert_int_eq(pt_write_atomic(p, write_then_fail, NULL), PT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), p));
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "simulated failure"));
    assert_contents(p, "old contents\n");
    assert_no_temporary(p);
    /* success replaces it whole and keeps its permission bits */
    ck_assert_int_eq(chmod(p, 0640), 0);
    ck_assert_int_eq(pt_write_atomic(p, write_hello, NULL), PT_OK);
    assert_contents(p, "hello\n");
    struct stat sb;
    ck_assert_int_eq(stat(p, &sb), 0);
    ck_assert_int_eq(sb.st_mode & 07777, 0640);
    assert_no_temporary(p);
    unlink(p);
}
END_TEST

/* A directory that does not exist: the message names the user's path, not the temporary. */
START_TEST(missing_directory_names_the_path)
{
    char p[700], dir[600];
    snprintf(dir, sizeof dir, "%s", tu_path("nodir", ""));
    snprintf(p, sizeof p, "%s/x.model", dir);
    ck_assert_int_eq(pt_write_atomic(p, write_hello, NULL), PT_ERR_IO);
    char want[1400];
    snprintf(want, sizeof want, "%s: cannot create: the directory %s does not exist", p, dir);
    ck_assert_str_eq(pt_last_error(), want);
}
END_TEST

/* -o LINK: the link stays a link and its final target gets the content, through a chain of
 * relative links across directories; a dangling link's target is created. */
START_TEST(symlink_stays_a_link)
{
    char dir[512], sub[600], target[700], link1[700], link2[700];
    fresh_dir(dir, sizeof dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    snprintf(target, sizeof target, "%s/real.txt", sub);
    snprintf(link1, sizeof link1, "%s/l1", dir);
    snprintf(link2, sizeof link2, "%s/l2", dir);
    FILE *f = fopen(target, "w");
    fputs("old\n", f);
    fclose(f);
    ck_assert_int_eq(symlink("sub/real.txt", link1), 0); /* relative to dir */
    ck_assert_int_eq(symlink("l1", link2), 0);

    ck_assert_int_eq(pt_write_atomic(link2, write_hello, NULL), PT_OK);
    ck_assert_int_eq(kind_of(link2), S_IFLNK);
    ck_assert_int_eq(kind_of(link1), S_IFLNK);
    ck_assert_int_eq(kind_of(target), S_IFREG);
    assert_contents(target, "hello\n");
    assert_no_temporary(target);

    /* a failing write through the link keeps the target's content */
    ck_assert_int_eq(pt_write_atomic(link1, write_then_fail, NULL), PT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), link1));
    ck_assert_int_eq(kind_of(link1), S_IFLNK);
    assert_contents(target, "hello\n");
    assert_no_temporary(target);

    /* a dangling link: its target is created, the link kept */
    ck_assert_int_eq(unlink(target), 0);
    ck_assert_int_eq(pt_write_atomic(link2, write_hello, NULL), PT_OK);
    ck_assert_int_eq(kind_of(link2), S_IFLNK);
    assert_contents(target, "hello\n");

    /* a loop of links is an error, not a hang */
    char loop_a[700], loop_b[700];
    snprintf(loop_a, sizeof loop_a, "%s/a", dir);
    snprintf(loop_b, sizeof loop_b, "%s/b", dir);
    ck_assert_int_eq(symlink("b", loop_a), 0);
    ck_assert_int_eq(symlink("a", loop_b), 0);
    ck_assert_int_eq(pt_write_atomic(loop_a, write_hello, NULL), PT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), loop_a));
    ck_assert_int_eq(kind_of(loop_a), S_IFLNK);
}
END_TEST

/* -o FIFO: the bytes go into the FIFO, read by a child process, and it stays a FIFO. The
 * child gives up after 20 s, so a write that misses the FIFO fails the test instead of
 * hanging it. */
START_TEST(fifo_gets_the_bytes)
{
    char dir[512], fifo[600], got[600];
    fresh_dir(dir, sizeof dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(got, sizeof got, "%s/got", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        alarm(20);
        int in = open(fifo, O_RDONLY), out = open(got, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        char buf[256];
        ssize_t r;
        while (in >= 0 && out >= 0 && (r = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)r) != r) _exit(2);
        _exit(in >= 0 && out >= 0 ? 0 : 3);
    }
    ck_assert_msg(pt_write_atomic(fifo, write_hello, NULL) == PT_OK, "%s", pt_last_error());
    int st = 0;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "reader: status %d", st);
    assert_contents(got, "hello\n");
    ck_assert_int_eq(kind_of(fifo), S_IFIFO);
    assert_no_temporary(fifo);

    /* a pipe through a link whose text is no path, as -o /dev/stdout is when piped */
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    char link[64], buf[64] = "";
    snprintf(link, sizeof link, "/proc/self/fd/%d", fds[1]);
    ck_assert_msg(pt_write_atomic(link, write_hello, NULL) == PT_OK, "%s", pt_last_error());
    close(fds[1]);
    ck_assert_int_eq(read(fds[0], buf, sizeof buf - 1), 6);
    ck_assert_str_eq(buf, "hello\n");
    close(fds[0]);
}
END_TEST

/* -o /dev/full: ENOSPC is an I/O error naming the path, and /dev/full stays a character
 * device (as root, a rename would have replaced it). /dev/null takes the bytes and stays. */
START_TEST(devices_are_written_through)
{
    ck_assert_msg(access("/dev/full", W_OK) == 0, "/dev/full: %s", strerror(errno));
    ck_assert_int_eq(pt_write_atomic("/dev/full", write_hello, NULL), PT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "/dev/full: write failed"));
    ck_assert_ptr_nonnull(strstr(pt_last_error(), strerror(ENOSPC)));
    ck_assert_int_eq(kind_of("/dev/full"), S_IFCHR);
    assert_no_temporary("/dev/full");

    ck_assert_int_eq(pt_write_atomic("/dev/null", write_hello, NULL), PT_OK);
    ck_assert_int_eq(kind_of("/dev/null"), S_IFCHR);
    assert_no_temporary("/dev/null");
    /* the writer's own failure on a device is reported too */
    ck_assert_int_eq(pt_write_atomic("/dev/null", write_then_fail, NULL), PT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "/dev/null"));
}
END_TEST

/* A directory or a socket at the path: refused, left as it was, nothing created beside it. */
START_TEST(other_kinds_refused)
{
    char dir[512], sock[600];
    fresh_dir(dir, sizeof dir);
    ck_assert_int_eq(pt_write_atomic(dir, write_hello, NULL), PT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), dir));
    ck_assert_ptr_nonnull(strstr(pt_last_error(), "directory"));
    ck_assert_int_eq(kind_of(dir), S_IFDIR);
    assert_no_temporary(dir);

    snprintf(sock, sizeof sock, "%s/s", dir);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    ck_assert_uint_lt(strlen(sock), sizeof sa.sun_path);
    strcpy(sa.sun_path, sock);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(pt_write_atomic(sock, write_hello, NULL), PT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(pt_last_error(), sock));
    ck_assert_int_eq(kind_of(sock), S_IFSOCK);
    assert_no_temporary(sock);
    close(fd);
}
END_TEST

/* The PID of a process that has exited and been waited for: no process has it. */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) _exit(0);
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    return pid;
}

/* A child that lives until *release is closed (it reads the other end of a pipe). */
static pid_t live_child(int *release)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[1]);
        char c;
        _exit(read(fds[0], &c, 1) == 0 ? 0 : 1);
    }
    close(fds[0]);
    *release = fds[1];
    return pid;
}

/* A file at dir/name (its path in out). */
static void make_file(char *out, size_t len, const char *dir, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
    int fd = open(out, O_WRONLY | O_CREAT | O_EXCL, 0644);
    ck_assert_msg(fd >= 0, "%s: %s", out, strerror(errno));
    ck_assert_int_eq(write(fd, "half", 4), 4);
    close(fd);
}

/* A writer killed mid-write leaves TARGET.tmp.PID[.N]: the next write of TARGET removes those
 * of processes that are gone, and keeps a live writer's (by its PID, or by the lock it holds
 * on its temporary, as a writer in another PID namespace would), other targets' and names of
 * another form. Once the live writer is gone, the next write removes its temporary too. */
START_TEST(stale_temporaries_removed)
{
    char dir[512], target[600], name[128], gone1[700], gone2[700], live[700], locked[700],
        other[700], odd[700];
    fresh_dir(dir, sizeof dir);
    snprintf(target, sizeof target, "%s/m.model", dir);
    long dead = (long)dead_pid();
    int release;
    pid_t alive = live_child(&release);
    snprintf(name, sizeof name, "m.model.tmp.%ld", dead); /* earlier versions' name */
    make_file(gone1, sizeof gone1, dir, name);
    snprintf(name, sizeof name, "m.model.tmp.%ld.7", dead);
    make_file(gone2, sizeof gone2, dir, name);
    snprintf(name, sizeof name, "m.model.tmp.%ld.0", (long)alive);
    make_file(live, sizeof live, dir, name);
    snprintf(name, sizeof name, "m.model.tmp.%ld.9", dead);
    make_file(locked, sizeof locked, dir, name);
    snprintf(name, sizeof name, "n.model.tmp.%ld.1", dead);
    make_file(other, sizeof other, dir, name);
    snprintf(name, sizeof name, "m.model.tmp.%ld.1x", dead);
    make_file(odd, sizeof odd, dir, name);
    int lock_fd = open(locked, O_RDONLY);
    ck_assert_int_eq(flock(lock_fd, LOCK_EX), 0);

    ck_assert_int_eq(pt_write_atomic(target, write_hello, NULL), PT_OK);
    assert_contents(target, "hello\n");
    ck_assert_msg(access(gone1, F_OK) != 0, "%s kept", gone1);
    ck_assert_msg(access(gone2, F_OK) != 0, "%s kept", gone2);
    const char *kept[] = {live, locked, other, odd};
    for (int k = 0; k < 4; k++) ck_assert_msg(access(kept[k], F_OK) == 0, "%s removed", kept[k]);

    /* the live writer ends, the lock is let go: the next write removes both */
    close(release);
    ck_assert_int_eq(waitpid(alive, NULL, 0), alive);
    close(lock_fd);
    ck_assert_int_eq(pt_write_atomic(target, write_hello, NULL), PT_OK);
    ck_assert_msg(access(live, F_OK) != 0, "%s kept", live);
    ck_assert_msg(access(locked, F_OK) != 0, "%s kept", locked);
    ck_assert_int_eq(access(other, F_OK), 0);
    ck_assert_int_eq(access(odd, F_OK), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("atomic_file");
    TCase *tc = tcase_create("atomic_file");
    tcase_add_test(tc, replaces_regular_file_or_keeps_it);
    tcase_add_test(tc, missing_directory_names_the_path);
    tcase_add_test(tc, symlink_stays_a_link);
    tcase_add_test(tc, fifo_gets_the_bytes);
    tcase_add_test(tc, devices_are_written_through);
    tcase_add_test(tc, other_kinds_refused);
    tcase_add_test(tc, stale_temporaries_removed);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
