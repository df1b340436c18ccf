/* bench_resize_mpi OUT: the MPI application of bench_resize (started by `ductile
 * mpirun`, one process per node). Rank 0 writes to OUT the cost of a probe when
 * nothing is pending, the cost of libductile's profiling wrapper per MPI call, and for
 * every resize the time the application spent managing processes (dt_adapt_begin:
 * starting and joining the new groups; dt_adapt_commit: the leaving groups finalize).
 * It ends when OUT.stop exists. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ductile.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int status, pending, role;
    if (dt_init_adapt(&argc, &argv, &status) < 0 || argc < 2)
        return 1;
    FILE *f = NULL;
    if (status == DT_STATUS_NEW && dt_next_rank() == 0) {
        f = fopen(argv[1], "w");
        if (!f)
            MPI_Abort(MPI_COMM_WORLD, 1);
        int n = 20000;
        double t0 = now();
        for (int i = 0; i < n; i++)
            dt_probe_adapt(&pending, &role);
        fprintf(f, "probe %.3f\n", (now() - t0) / n * 1e6);
        /* the wrapper's cost: the same call through it and straight to PMPI */
        n = 200000;
        t0 = now();
        for (int i = 0; i < n; i++)
            MPI_Barrier(MPI_COMM_SELF);
        double wrapped = now() - t0;
        t0 = now();
        for (int i = 0; i < n; i++)
            PMPI_Barrier(MPI_COMM_SELF);
        double bare = now() - t0;
        fprintf(f, "pmpi %.3f\n", (wrapped - bare) / n * 1e6);
        fflush(f);
    }
    char stop[4200];
    snprintf(stop, sizeof(stop), "%s.stop", argv[1]);
    for (;;) {
        dt_probe_adapt(&pending, &role);
        if (pending) {
            MPI_Comm inter, next;
            int before = dt_next_size();
            double t0 = now();
            if (dt_adapt_begin(&inter, &next) < 0)
                MPI_Abort(MPI_COMM_WORLD, 1);
            int after = dt_next_size();
            dt_adapt_commit();
            if (f) {
                fprintf(f, "%s %d %d %.6f\n", after > before ? "expand" : "shrink", before, after,
                        now() - t0);
                fflush(f);
            }
        }
        int end = dt_next_rank() == 0 && access(stop, F_OK) == 0;
        MPI_Bcast(&end, 1, MPI_INT, 0, dt_comm());
        if (end)
            break;
        usleep(1000);
    }
    if (f)
        fclose(f);
    dt_finalize();
    return 0;
}
