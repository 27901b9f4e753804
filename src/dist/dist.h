/*
 * The communicator of a distributed run (Open MPI when built with it, else one process):
 * sums over the ranks, a broadcast, and the agreement on a failure. Every call here is
 * collective: all ranks make it, in the same order, from their main thread. Outside mpirun
 * (or without MPI) the run has one rank and every collective returns its input. Not
 * installed; the public part (init, rank, size, abort, the communication seconds) is in
 * include/ptron.h.
 */
#ifndef PT_DIST_H
#define PT_DIST_H

#include "common/common.h"

/* Element-wise sums over the ranks, in place: every rank gets the same result, from the same
 * order of additions for a given number of ranks (Open MPI's reduction order depends only on
 * the ranks and the message size), so a rerun with the same ranks gives the same bits. */
void pt_dist_sum_double(double *v, size_t n);
void pt_dist_sum_float(float *v, size_t n);
void pt_dist_sum_u64(uint64_t *v, size_t n);
/* Element-wise maximum over the ranks, in place. */
void pt_dist_max_u64(uint64_t *v, size_t n);
/* bytes at buf on rank root copied to buf on every rank. */
void pt_dist_bcast(void *buf, size_t bytes, int root);
/* The lowest rank whose `failed` is true, or -1 when none is: every rank learns of a failure
 * on any (collective, so a rank that failed still takes part). */
int pt_dist_first_failed(bool failed);
/* Whether every rank's key (key_len bytes) is rank 0's (agree.c): *rank -1 when it is, else
 * the lowest rank whose key differs, and every rank gets malloc'd copies of rank 0's label and
 * that rank's (the caller frees them): what a message names. PT_ERR_NOMEM on every rank when
 * any cannot allocate. */
pt_status pt_dist_compare(const void *key, size_t key_len, const char *label, int *rank,
                          char **label0, char **label_rank);

#endif /* PT_DIST_H */
