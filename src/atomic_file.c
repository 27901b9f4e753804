/* Atomic file replacement (temporary file, fsync, rename) and the file checksum. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "internal.h"

uint64_t pt_checksum(const void *data, size_t len) { return XXH3_64bits(data, len); }

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

pt_status pt_write_atomic(const char *path, pt_write_fn fn, const void *ctx)
{
    size_t len = strlen(path) + 32;
    char *tmp = malloc(len);
    if (!tmp) return pt_fail(PT_ERR_NOMEM, "%s: cannot allocate a file name", path);
    snprintf(tmp, len, "%s.tmp.%ld", path, (long)getpid());

    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        pt_status s = pt_fail(PT_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
        free(tmp);
        return s;
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        unlink(tmp);
        free(tmp);
        return pt_fail(PT_ERR_IO, "%s: %s", path, strerror(errno));
    }
    setvbuf(f, NULL, _IOFBF, 1 << 20);

    pt_status s = fn(f, ctx);
    if (s != PT_OK) pt_fail_prefix(s, "%s", path); /* writers do not know the file's name */
    if (s == PT_OK && (fflush(f) != 0 || ferror(f)))
        s = pt_fail(PT_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    if (s == PT_OK && fsync(fileno(f)) != 0)
        s = pt_fail(PT_ERR_IO, "%s: fsync failed: %s", path, strerror(errno));
    if (fclose(f) != 0 && s == PT_OK)
        s = pt_fail(PT_ERR_IO, "%s: close failed: %s", path, strerror(errno));
    if (s == PT_OK && rename(tmp, path) != 0)
        s = pt_fail(PT_ERR_IO, "%s: cannot rename %s over it: %s", path, tmp, strerror(errno));
    if (s != PT_OK) unlink(tmp);
    else fsync_parent_dir(path);
    free(tmp);
    return s;
}
