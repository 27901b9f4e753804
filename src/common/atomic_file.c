/* Writing a file whole or not at all (temporary file, fsync, rename), without changing what
 * the path names: a symlink stays a link (its final target is replaced), a device or FIFO is
 * written through, anything else that is not a regular file is refused; a killed writer's
 * temporaries are removed by the next write of the same file. And the checksum. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common.h"

uint64_t pt_checksum(const void *data, size_t len) { return XXH3_64bits(data, len); }

void *pt_checksum_begin(void)
{
    XXH3_state_t *st = XXH3_createState();
    if (st) XXH3_64bits_reset(st);
    return st;
}

void pt_checksum_update(void *state, const void *data, size_t len)
{
    XXH3_64bits_update(state, data, len);
}

uint64_t pt_checksum_end(void *state)
{
    uint64_t h = XXH3_64bits_digest(state);
    XXH3_freeState(state);
    return h;
}

#define MAX_LINK_HOPS 40 /* as the kernel's ELOOP limit */

static void fsync_parent_dir(const char *path)
{
    char *copy = strdup(path);
    if (!copy) return;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd); /* best effort: some file systems refuse fsync on directories */
        close(fd);
    }
    free(copy);
}

/* The path that path finally names, following symlinks (malloc'd; the last one need not exist
 * yet: writing creates it). A relative link is relative to the directory of the link. */
static pt_status resolve_links(const char *path, char **out)
{
    char *cur = strdup(path);
    if (!cur) return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate a file name", path);
    for (int hop = 0;; hop++) {
        struct stat sb;
        if (lstat(cur, &sb) != 0 || !S_ISLNK(sb.st_mode)) break; /* open reports what stat hit */
        if (hop == MAX_LINK_HOPS) {
            free(cur);
            return pt_fail(PT_ERR_IO, "%s: cannot write: %s", path, strerror(ELOOP));
        }
        char target[PATH_MAX];
        ssize_t len = readlink(cur, target, sizeof target - 1);
        if (len < 0) {
            pt_status s = pt_fail(PT_ERR_IO, "%s: cannot read the link %s: %s", path, cur,
                                  strerror(errno));
            free(cur);
            return s;
        }
        target[len] = '\0';
        char *next;
        if (target[0] == '/') {
            next = strdup(target);
        } else {
            char *dir = strdup(cur);
            size_t size = (dir ? strlen(dir) : 0) + (size_t)len + 2;
            if ((next = dir ? malloc(size) : NULL) != NULL)
                snprintf(next, size, "%s/%s", dirname(dir), target);
            free(dir);
        }
        free(cur);
        if (!(cur = next)) return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate a file name", path);
    }
    *out = cur;
    return PT_OK;
}

/* A file's stream buffer (the caller's, freed after fclose): glibc ignores setvbuf's size
 * unless it is given the buffer, and wrote a large .ptd as alternating 4 KiB and 252 KiB
 * writes; the page cache then held the file in small folios, which a streamed read (window.c)
 * copied out far slower than a file written in 1 MiB writes (docs/design.md, "Streaming").
 * Writes of 8 MiB at offsets that are multiples of it leave the file in 2 MiB folios on an
 * ext4 with large folios (1 MiB writes: none), which the kernel maps whole: a streamed epoch
 * then faults and drops far fewer pages (window.c), and a mapped read into memory populates
 * faster. */
#define WRITE_BUFFER ((size_t)8 << 20)

/* fn's output into f (through buf, WRITE_BUFFER bytes, where not NULL), then flushed and
 * checked; messages name the user's path. */
static pt_status fill(FILE *f, char *buf, const char *path, pt_write_fn fn, const void *ctx)
{
    if (buf) setvbuf(f, buf, _IOFBF, WRITE_BUFFER);
    pt_status s = fn(f, ctx);
    if (s != PT_OK) pt_fail_prefix(s, "%s", path); /* writers do not know the file's name */
    if (s == PT_OK && (fflush(f) != 0 || ferror(f)))
        s = pt_fail(PT_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    return s;
}

/* A device or a FIFO: write into it as it is (opening a FIFO waits for its reader). */
static pt_status write_through(const char *path, pt_write_fn fn, const void *ctx)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return pt_fail(PT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        return pt_fail(PT_ERR_IO, "%s: %s", path, strerror(errno));
    }
    char *buf = malloc(WRITE_BUFFER); /* none: stdio's own */
    pt_status s = fill(f, buf, path, fn, ctx);
    if (fclose(f) != 0 && s == PT_OK)
        s = pt_fail(PT_ERR_IO, "%s: close failed: %s", path, strerror(errno));
    free(buf);
    return s;
}

/* Temporary names: "TARGET.tmp.PID.N", N counting this process's writes, so that no two
 * writes share one (threads of one process, or a write and a leftover of an earlier process
 * that had the same PID), and the PID says which process a leftover is from. */
static atomic_ulong temp_serial;

#define TEMP_TRIES 100 /* names taken by leftovers before giving up (EEXIST) */

/* The writer's PID in a temporary's name past "TARGET.tmp." ("PID.N", or "PID" as earlier
 * versions named them); 0 when rest is not such a name. */
static pid_t temporary_pid(const char *rest)
{
    if (*rest < '0' || *rest > '9') return 0;
    char *end;
    errno = 0;
    long pid = strtol(rest, &end, 10);
    if (errno || pid <= 0 || pid > INT_MAX) return 0;
    if (*end == '.') {
        const char *q = ++end;
        while (*q >= '0' && *q <= '9') q++;
        if (q == end || *q) return 0;
    } else if (*end) {
        return 0;
    }
    return (pid_t)pid;
}

/* Whether the writer of the temporary `name` in dirfd, named for pid, is gone: no process has
 * that PID, and the file is a regular one no process holds the lock of (a live writer locks
 * its temporary: one in another PID namespace, sharing the directory, has a PID this process
 * cannot see). */
static bool writer_gone(int dirfd, const char *name, pid_t pid)
{
    if (pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH) return false;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return false;
    struct stat sb;
    bool gone = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
                (flock(fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK);
    close(fd);
    return gone;
}

/* Temporaries of target that a killed writer left behind (SIGKILL, power loss): removed, each
 * one whose writer is gone; never a live writer's. Best effort: a directory that cannot be
 * read is left as it is. */
static void remove_stale_temporaries(const char *target)
{
    const char *slash = strrchr(target, '/');
    char *dir = slash ? strndup(target, (size_t)(slash - target) + 1) : strdup(".");
    const char *base = slash ? slash + 1 : target;
    size_t plen = strlen(base) + 5;
    char *prefix = malloc(plen + 1);
    DIR *d = dir && prefix ? opendir(dir) : NULL;
    if (d) snprintf(prefix, plen + 1, "%s.tmp.", base);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, prefix, plen) != 0) continue;
        pid_t pid = temporary_pid(e->d_name + plen);
        if (pid && writer_gone(dirfd(d), e->d_name, pid) && unlinkat(dirfd(d), e->d_name, 0) == 0)
            pt_log(PT_LOG_INFO, "%s: removed %s%s, left by process %ld, which is gone", target,
                   slash ? dir : "", e->d_name, (long)pid);
    }
    if (d) closedir(d);
    free(prefix);
    free(dir);
}

/* A temporary of its own beside target, opened for writing and locked (so that no other
 * process takes it for a leftover), its name in *tmp (malloc'd); -1 with errno set when none
 * can be made. */
static int open_temporary(const char *target, char **tmp)
{
    size_t len = strlen(target) + 48;
    if (!(*tmp = malloc(len))) return errno = ENOMEM, -1;
    /* O_EXCL | O_NOFOLLOW: never write through something left at the temporary name */
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    for (int i = 0; i < TEMP_TRIES; i++) {
        unsigned long serial = atomic_fetch_add(&temp_serial, 1);
        snprintf(*tmp, len, "%s.tmp.%ld.%lu", target, (long)getpid(), serial);
        int fd = open(*tmp, flags, 0644);
        if (fd >= 0) (void)flock(fd, LOCK_EX | LOCK_NB); /* best effort: see writer_gone */
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

/* A regular file, or none yet: a temporary beside it (open_temporary), then rename over it.
 * An existing file's permission bits (and, where allowed, owner) carry over to the new one. */
static pt_status replace(const char *path, const char *target, const struct stat *old,
                         pt_write_fn fn, const void *ctx)
{
    remove_stale_temporaries(target);
    char *tmp = NULL;
    int fd = open_temporary(target, &tmp);
    if (fd < 0) {
        int e = errno;
        /* name the directory that is missing, not the temporary file that could not be made */
        char *copy = strdup(target), *dir = copy ? dirname(copy) : NULL;
        struct stat sd;
        pt_status s = e == ENOENT && dir && stat(dir, &sd) != 0
                          ? pt_fail(PT_ERR_IO, "%s: cannot create: the directory %s does not exist",
                                    path, dir)
                          : pt_fail(PT_ERR_IO, "%s: cannot create: %s", path, strerror(e));
        free(copy);
        free(tmp);
        return s;
    }
    if (old) {
        /* best effort: only root may give a file to another owner */
        if (old->st_uid != geteuid() || old->st_gid != getegid())
            (void)!fchown(fd, old->st_uid, old->st_gid);
        (void)!fchmod(fd, old->st_mode & 07777);
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        unlink(tmp);
        free(tmp);
        return pt_fail(PT_ERR_IO, "%s: %s", path, strerror(errno));
    }
    char *buf = malloc(WRITE_BUFFER); /* none: stdio's own */
    pt_status s = fill(f, buf, path, fn, ctx);
    if (s == PT_OK && fsync(fileno(f)) != 0)
        s = pt_fail(PT_ERR_IO, "%s: fsync failed: %s", path, strerror(errno));
    if (fclose(f) != 0 && s == PT_OK)
        s = pt_fail(PT_ERR_IO, "%s: close failed: %s", path, strerror(errno));
    free(buf);
    if (s == PT_OK && rename(tmp, target) != 0)
        s = pt_fail(PT_ERR_IO, "%s: cannot replace: %s", path, strerror(errno));
    if (s != PT_OK) unlink(tmp);
    else fsync_parent_dir(target);
    free(tmp);
    return s;
}

pt_status pt_write_atomic(const char *path, pt_write_fn fn, const void *ctx)
{
    /* "-": standard output, written through and flushed (the caller keeps it open) */
    if (strcmp(path, "-") == 0) return fill(stdout, NULL, "standard output", fn, ctx);
    struct stat sb;
    bool exists = stat(path, &sb) == 0; /* links followed */
    /* a device or FIFO is opened by the user's path, which also works for links whose text is
     * no path (/dev/stdout to a pipe) */
    if (exists && (S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) || S_ISFIFO(sb.st_mode)))
        return write_through(path, fn, ctx);
    if (exists && !S_ISREG(sb.st_mode))
        return pt_fail(PT_ERR_IO, "%s: cannot write: %s", path,
                       S_ISDIR(sb.st_mode) ? "it is a directory"
                                           : "it is not a regular file, a device or a FIFO");
    /* a regular file, or nothing yet: replace (or create) the file the links end at */
    char *target = NULL;
    PT_TRY(resolve_links(path, &target));
    pt_status s = replace(path, target, exists ? &sb : NULL, fn, ctx);
    free(target);
    return s;
}
