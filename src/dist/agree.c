/*
 * What the ranks of a run must have in common: each rank's key (its options, or what
 * identifies the file it reads) compared with rank 0's, over the communicator's sums and
 * broadcasts, so that a rank given something else fails every rank with a message naming it,
 * before any collective whose sizes would follow from what differs (which MPI would end in
 * MPI_ERR_TRUNCATE, or not at all).
 */
#include <stdlib.h>
#include <string.h>

#include "dist.h"

/* Bytes at r's label broadcast from r into a buffer of len + 1 on every rank. */
static void bcast_label(char *buf, size_t len, const char *label, int r)
{
    if (pt_dist_rank() == r) memcpy(buf, label, len);
    pt_dist_bcast(buf, len, r);
    buf[len] = '\0';
}

pt_status pt_dist_compare(const void *key, size_t key_len, const char *label, int *rank,
                          char **label0, char **label_rank)
{
    const int P = pt_dist_size(), me = pt_dist_rank();
    *rank = -1;
    *label0 = *label_rank = NULL;
    if (P < 2) return PT_OK;
    /* each rank's key checksum and length, and its label's length, in its own slots */
    uint64_t *all = calloc(3 * (size_t)P, sizeof *all);
    if (pt_dist_first_failed(!all) >= 0) {
        free(all);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the ranks' agreement");
    }
    all[3 * me] = pt_checksum(key, key_len);
    all[3 * me + 1] = key_len;
    all[3 * me + 2] = strlen(label);
    pt_dist_sum_u64(all, 3 * (size_t)P);
    int r = 1;
    while (r < P && all[3 * r] == all[0] && all[3 * r + 1] == all[1]) r++;
    if (r == P) {
        free(all);
        return PT_OK;
    }
    size_t len0 = (size_t)all[2], lenr = (size_t)all[3 * r + 2];
    free(all);
    char *a = malloc(len0 + 1), *b = malloc(lenr + 1);
    if (pt_dist_first_failed(!a || !b) >= 0) {
        free(a);
        free(b);
        return pt_fail(PT_ERR_NOMEM, "cannot allocate the ranks' agreement");
    }
    bcast_label(a, len0, label, 0);
    bcast_label(b, lenr, label, r);
    *rank = r;
    *label0 = a;
    *label_rank = b;
    return PT_OK;
}

/* The line of text at *at (its length into *len), and *at past it; "" past the end. */
static const char *next_line(const char **at, size_t *len)
{
    const char *s = *at, *e = strchr(s, '\n');
    *len = e ? (size_t)(e - s) : strlen(s);
    *at = e ? e + 1 : s + *len;
    return s;
}

pt_status pt_dist_agree_text(const char *what, const char *text)
{
    pt_clear_error();
    int r;
    char *t0, *tr;
    PT_TRY(pt_dist_compare(text, strlen(text), text, &r, &t0, &tr));
    if (r < 0) return PT_OK;
    /* the first line that differs (texts with other checksums differ somewhere) */
    const char *p0 = t0, *pr = tr, *l0, *lr;
    size_t n0, nr;
    do {
        l0 = next_line(&p0, &n0);
        lr = next_line(&pr, &nr);
    } while ((n0 || nr || *p0 || *pr) && n0 == nr && memcmp(l0, lr, n0) == 0);
    if (!nr) lr = "(nothing)", nr = strlen(lr);
    if (!n0) l0 = "(nothing)", n0 = strlen(l0);
    pt_status s = pt_fail(PT_ERR_INVALID, "the ranks were given different %s: rank %d of %d "
                          "has %.*s, rank 0 %.*s", what, r, pt_dist_size(),
                          (int)(nr < 300 ? nr : 300), lr, (int)(n0 < 300 ? n0 : 300), l0);
    free(t0);
    free(tr);
    return s;
}
