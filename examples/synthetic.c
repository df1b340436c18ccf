/* synthetic: a malleable MPI job with a chosen share of communication, so that its MTCT
 * ratio (MPI time / wall time) is known and the `perf` policy has something to choose.
 *
 *   ductile mpirun synthetic [--compute-ms C] [--comm-ms M] [--iters N] [--until FILE]
 *
 * Each iteration computes for C ms (floating-point work, timed by the clock) and then
 * communicates for M ms (allreduces over dt_comm() until M ms have passed): the MTCT
 * ratio is about M / (C + M). It runs N iterations, or with --until until FILE exists.
 * A block-distributed state vector follows every resize (dt_redistribute_block), and
 * its checksum is printed at the end: it must not change. */
#include <mpi.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ductile.h"

#define STATE 4096

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static volatile double sink;

static void compute(double ms)
{
    double x = 1.0, end = now() + ms / 1e3;
    while (now() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

static void communicate(double ms)
{
    double end = now() + ms / 1e3;
    int go = 1;
    while (go) {
        double v = 1.0, sum;
        MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, dt_comm());
        if (dt_next_rank() == 0)
            go = now() < end;
        MPI_Bcast(&go, 1, MPI_INT, 0, dt_comm());
    }
}

int main(int argc, char **argv)
{
    int status;
    if (dt_init_adapt(&argc, &argv, &status) < 0)
        return 1;
    double compute_ms = 50, comm_ms = 0;
    long iters = 100;
    const char *until = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--compute-ms") && i + 1 < argc)
            compute_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--comm-ms") && i + 1 < argc)
            comm_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "--until") && i + 1 < argc)
            until = argv[++i];
        else {
            fprintf(stderr, "usage: synthetic [--compute-ms C] [--comm-ms M] [--iters N] [--until FILE]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    long lo = 0, hi = 0;
    double *state = NULL;
    if (status == DT_STATUS_NEW) {
        dt_block_range(STATE, dt_next_rank(), dt_next_size(), &lo, &hi);
        state = malloc((size_t)(hi - lo + 1) * sizeof(double));
        for (long i = lo; i < hi; i++)
            state[i - lo] = (double)i;
        if (dt_next_rank() == 0) {
            printf("synthetic: started on %d processes\n", dt_next_size());
            fflush(stdout);
        }
    }
    for (long it = 0;; it++) {
        int pending, role;
        dt_probe_adapt(&pending, &role);
        if (pending) {
            MPI_Comm inter, next;
            int was = dt_next_size(), rc = dt_adapt_begin(&inter, &next);
            if (rc == 0) {
                long nlo = 0, nhi = 0;
                if (dt_next_rank() >= 0)
                    dt_block_range(STATE, dt_next_rank(), dt_next_size(), &nlo, &nhi);
                double *fresh = malloc((size_t)(nhi - nlo + 1) * sizeof(double));
                dt_redistribute_block(state, fresh, STATE, sizeof(double));
                if (next != MPI_COMM_NULL) {
                    MPI_Bcast(&it, 1, MPI_LONG, 0, next);
                    if (dt_next_rank() == 0) {
                        printf("synthetic: %d -> %d processes at iteration %ld\n", was,
                               dt_next_size(), it);
                        fflush(stdout);
                    }
                }
                free(state);
                state = fresh;
                lo = nlo;
                hi = nhi;
                dt_adapt_commit();
            } else if (rc != -EAGAIN) {
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        int stop = 0;
        if (dt_next_rank() == 0)
            stop = until ? access(until, F_OK) == 0 : it >= iters;
        MPI_Bcast(&stop, 1, MPI_INT, 0, dt_comm());
        if (stop)
            break;
        compute(compute_ms);
        communicate(comm_ms);
    }
    double mine = 0, sum = 0;
    for (long i = lo; i < hi; i++)
        mine += state[i - lo];
    MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, dt_comm());
    if (dt_next_rank() == 0)
        printf("synthetic: done on %d processes, state checksum %.1f\n", dt_next_size(), sum);
    free(state);
    dt_finalize();
    return 0;
}
