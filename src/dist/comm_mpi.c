/*
 * The communicator on Open MPI (MPI_COMM_WORLD). MPI is started only when the process was
 * launched by mpirun (Open MPI's launcher sets OMPI_COMM_WORLD_SIZE, PMIx's PMIX_RANK): a
 * plain `ptron` never loads the runtime's singleton machinery and behaves as a build without
 * MPI. Only the main thread calls MPI (MPI_THREAD_FUNNELED); the paths call the collectives
 * outside their OpenMP regions. A rank that dies, or a transport error, makes mpirun end every
 * rank (MPI_ERRORS_ARE_FATAL, the default): no rank is left waiting in a collective.
 */
#include <limits.h>
#include <stdlib.h>

#include <mpi.h>

#include "dist.h"

static int started, rank, size = 1;
static double comm_s;

pt_status pt_dist_init(int *argc, char ***argv)
{
    if (started || (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK"))) return PT_OK;
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return pt_fail(PT_ERR_IO, "MPI_Init_thread failed");
    started = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return PT_OK;
}

void pt_dist_finalize(void)
{
    if (!started) return;
    started = 0;
    MPI_Finalize();
}

int pt_dist_launched(void) { return started; }
int pt_dist_rank(void) { return rank; }
int pt_dist_size(void) { return size; }
int pt_dist_built(void) { return 1; }

void pt_dist_abort(int status)
{
    if (started && size > 1) MPI_Abort(MPI_COMM_WORLD, status);
    exit(status);
}

/* MPI counts are ints: large buffers go in pieces of at most 2^30 elements. */
#define PIECE ((size_t)1 << 30)

static void allreduce(void *v, size_t n, size_t elem, MPI_Datatype type, MPI_Op op)
{
    if (!started || size == 1) return;
    double t0 = MPI_Wtime();
    for (size_t i = 0; i < n; i += PIECE) {
        size_t m = n - i < PIECE ? n - i : PIECE;
        MPI_Allreduce(MPI_IN_PLACE, (char *)v + i * elem, (int)m, type, op, MPI_COMM_WORLD);
    }
    comm_s += MPI_Wtime() - t0;
}

void pt_dist_sum_double(double *v, size_t n) { allreduce(v, n, sizeof *v, MPI_DOUBLE, MPI_SUM); }
void pt_dist_sum_float(float *v, size_t n) { allreduce(v, n, sizeof *v, MPI_FLOAT, MPI_SUM); }
void pt_dist_sum_u64(uint64_t *v, size_t n) { allreduce(v, n, sizeof *v, MPI_UINT64_T, MPI_SUM); }
void pt_dist_max_u64(uint64_t *v, size_t n) { allreduce(v, n, sizeof *v, MPI_UINT64_T, MPI_MAX); }

void pt_dist_bcast(void *buf, size_t bytes, int root)
{
    if (!started || size == 1) return;
    double t0 = MPI_Wtime();
    for (size_t i = 0; i < bytes; i += PIECE) {
        size_t m = bytes - i < PIECE ? bytes - i : PIECE;
        MPI_Bcast((char *)buf + i, (int)m, MPI_BYTE, root, MPI_COMM_WORLD);
    }
    comm_s += MPI_Wtime() - t0;
}

int pt_dist_first_failed(bool failed)
{
    int first = failed ? rank : INT_MAX;
    if (started && size > 1) {
        double t0 = MPI_Wtime();
        MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        comm_s += MPI_Wtime() - t0;
    }
    return first == INT_MAX ? -1 : first;
}

double pt_dist_comm_seconds(void) { return comm_s; }
