/* libductile's MPI profiling wrappers: the time each process spends inside MPI
 * communication, for the MTCT ratio (MPI time / wall time over a window, averaged over
 * the job's processes; seed 000 §5.3, §6.2) that the `perf` policy uses.
 *
 * An application linked with -lductile calls these instead of Open MPI's (they are
 * found first) and they call the PMPI_ entry points. Each costs two reads of the
 * monotonic clock; bench/resize measures it. dt_mpi.c collects the windows at its
 * probes and the leader reports the job's average. */
#include <mpi.h>

#include <time.h>

#include "dt_internal.h"

static double in_mpi;       /* seconds inside MPI since the window began */
static double window_start; /* 0: not started */

static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

double dt_pmpi_window(double *mpi)
{
    double t = now(), wall = window_start > 0 ? t - window_start : 0;
    *mpi = in_mpi;
    in_mpi = 0;
    window_start = t;
    return wall;
}

#define TIMED(call)                                                                        \
    do {                                                                                   \
        double t0_ = now();                                                                \
        int rc_ = call;                                                                    \
        in_mpi += now() - t0_;                                                             \
        return rc_;                                                                        \
    } while (0)

int MPI_Send(const void *b, int n, MPI_Datatype t, int dst, int tag, MPI_Comm c)
{
    TIMED(PMPI_Send(b, n, t, dst, tag, c));
}

int MPI_Recv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Status *s)
{
    TIMED(PMPI_Recv(b, n, t, src, tag, c, s));
}

int MPI_Sendrecv(const void *sb, int sn, MPI_Datatype st, int dst, int stag, void *rb, int rn,
                 MPI_Datatype rt, int src, int rtag, MPI_Comm c, MPI_Status *s)
{
    TIMED(PMPI_Sendrecv(sb, sn, st, dst, stag, rb, rn, rt, src, rtag, c, s));
}

int MPI_Isend(const void *b, int n, MPI_Datatype t, int dst, int tag, MPI_Comm c, MPI_Request *r)
{
    TIMED(PMPI_Isend(b, n, t, dst, tag, c, r));
}

int MPI_Irecv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Request *r)
{
    TIMED(PMPI_Irecv(b, n, t, src, tag, c, r));
}

int MPI_Wait(MPI_Request *r, MPI_Status *s) { TIMED(PMPI_Wait(r, s)); }

int MPI_Waitall(int n, MPI_Request r[], MPI_Status s[]) { TIMED(PMPI_Waitall(n, r, s)); }

int MPI_Barrier(MPI_Comm c) { TIMED(PMPI_Barrier(c)); }

int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    TIMED(PMPI_Bcast(b, n, t, root, c));
}

int MPI_Reduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c)
{
    TIMED(PMPI_Reduce(sb, rb, n, t, op, root, c));
}

int MPI_Allreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    TIMED(PMPI_Allreduce(sb, rb, n, t, op, c));
}

int MPI_Gather(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,
               int root, MPI_Comm c)
{
    TIMED(PMPI_Gather(sb, sn, st, rb, rn, rt, root, c));
}

int MPI_Gatherv(const void *sb, int sn, MPI_Datatype st, void *rb, const int rn[],
                const int displs[], MPI_Datatype rt, int root, MPI_Comm c)
{
    TIMED(PMPI_Gatherv(sb, sn, st, rb, rn, displs, rt, root, c));
}

int MPI_Scatter(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,
                int root, MPI_Comm c)
{
    TIMED(PMPI_Scatter(sb, sn, st, rb, rn, rt, root, c));
}

int MPI_Allgather(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,
                  MPI_Comm c)
{
    TIMED(PMPI_Allgather(sb, sn, st, rb, rn, rt, c));
}

int MPI_Alltoall(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,
                 MPI_Comm c)
{
    TIMED(PMPI_Alltoall(sb, sn, st, rb, rn, rt, c));
}

int MPI_Alltoallv(const void *sb, const int sn[], const int sd[], MPI_Datatype st, void *rb,
                  const int rn[], const int rd[], MPI_Datatype rt, MPI_Comm c)
{
    TIMED(PMPI_Alltoallv(sb, sn, sd, st, rb, rn, rd, rt, c));
}
