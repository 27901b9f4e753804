/* The communicator of a build without MPI: one rank, every collective the identity. */
#include <stdlib.h>

#include "dist.h"

pt_status pt_dist_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return PT_OK;
}

void pt_dist_finalize(void) {}
int pt_dist_launched(void) { return 0; }
int pt_dist_rank(void) { return 0; }
int pt_dist_size(void) { return 1; }
int pt_dist_built(void) { return 0; }

void pt_dist_abort(int status) { exit(status); }

void pt_dist_sum_double(double *v, size_t n) { (void)v, (void)n; }
void pt_dist_sum_float(float *v, size_t n) { (void)v, (void)n; }
void pt_dist_sum_u64(uint64_t *v, size_t n) { (void)v, (void)n; }
void pt_dist_max_u64(uint64_t *v, size_t n) { (void)v, (void)n; }
void pt_dist_bcast(void *buf, size_t bytes, int root) { (void)buf, (void)bytes, (void)root; }
int pt_dist_first_failed(bool failed) { return failed ? 0 : -1; }
double pt_dist_comm_seconds(void) { return 0.0; }
