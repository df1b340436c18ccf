/* synthetic: a malleable MPI job with a chosen share of communication, so that its MTCT
 * ratio (MPI time / wall time) is known and the `perf` policy has something to choose.
 *
 *   ductile mpirun synthetic [--compute-ms C] [--comm-ms M] [--iters N] [--until FILE]
 *
 * Each iteration computes for C ms (floating-point work, timed by the clock) and then
 * communicates for M ms (allreduces over dt_comm() until M ms have passed): the MTCT
 * ratio is about M / (C + M). It runs N iterations, or with --until until FILE exists.
 * It is also the example of the DMR-style layer (seed 004): three registered variables,
 * one per predefined redistribution (block, block-cyclic, replicated), a callback that
 * announces each resize, and one dt_reconfigure() per iteration. At the end every
 * process checks that each value sits where its distribution says. */
#include <mpi.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ductile.h"

#define STATE 4096
#define CYC 1000
#define CYC_B 7

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

/* The callback of the DMR-style layer: runs inside each adaptation window. */
static void announce(int role, MPI_Comm inter, MPI_Comm next, void *arg)
{
    (void)inter;
    int *was = arg, now_size;
    if (next == MPI_COMM_NULL || role == DT_ROLE_JOINING)
        return;
    MPI_Comm_size(next, &now_size);
    if (dt_next_rank() == 0) {
        printf("synthetic: %d -> %d processes\n", *was, now_size);
        fflush(stdout);
    }
}

static double compute_ms = 50, comm_ms = 0;
static long iters = 100;
static const char *until;

static void usage(FILE *f)
{
    fprintf(f, "usage: synthetic [--compute-ms C] [--comm-ms M] [--iters N] [--until FILE]\n"
               "Iterations of C ms of computation (default 50) then M ms of allreduces\n"
               "(default 0): an MTCT ratio of about M / (C + M). Malleable under `ductile\n"
               "mpirun synthetic ...` in a job (DMR-style layer: registered data, one\n"
               "dt_reconfigure() per iteration); elsewhere a plain MPI program.\n"
               "  --compute-ms C  milliseconds of computation per iteration (C >= 0)\n"
               "  --comm-ms M     milliseconds of communication per iteration (M >= 0)\n"
               "  --iters N       iterations (default 100)\n"
               "  --until FILE    iterate until FILE exists instead\n"
               "  -h, --help      this text\n");
}

/* The value of option argv[*i], a number >= 0 (whole if whole); -1 after a message. */
static int num_arg(int argc, char **argv, int *i, int whole, double *out)
{
    const char *opt = argv[*i];
    char *end;
    if (*i + 1 >= argc) {
        fprintf(stderr, "synthetic: %s needs a value\n", opt);
        return -1;
    }
    errno = 0;
    *out = whole ? (double)strtol(argv[++*i], &end, 10) : strtod(argv[++*i], &end);
    if (errno || end == argv[*i] || *end || !(*out >= 0)) {
        fprintf(stderr, "synthetic: %s '%s': not a %snumber >= 0\n", opt, argv[*i],
                whole ? "whole " : "");
        return -1;
    }
    return 0;
}

/* Before MPI starts: -1 to go on, else the exit status (0 after --help). */
static int parse(int argc, char **argv)
{
    double v = 0;
    for (int i = 1; i < argc; i++) {
        int bad = 0;
        if (!strcmp(argv[i], "--compute-ms"))
            bad = num_arg(argc, argv, &i, 0, &compute_ms);
        else if (!strcmp(argv[i], "--comm-ms"))
            bad = num_arg(argc, argv, &i, 0, &comm_ms);
        else if (!strcmp(argv[i], "--iters")) {
            bad = num_arg(argc, argv, &i, 1, &v);
            iters = (long)v;
        } else if (!strcmp(argv[i], "--until") && i + 1 < argc)
            until = argv[++i];
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            if (!strcmp(argv[i], "--until"))
                fprintf(stderr, "synthetic: --until needs a value\n");
            else
                fprintf(stderr, "synthetic: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
        if (bad)
            return 2;
    }
    return -1;
}

int main(int argc, char **argv)
{
    int status, rc = parse(argc, argv);
    if (rc >= 0)
        return rc;
    if (dt_init_adapt(&argc, &argv, &status) < 0)
        return 1;
    /* three registered variables, one per predefined redistribution */
    double *state = NULL;      /* block: STATE values 0 .. STATE-1 */
    long *cyclic = NULL;       /* block-cyclic, blocks of CYC_B: CYC values 0 .. CYC-1 */
    long *iter = NULL;         /* replicated: the iteration, for the newcomers */
    long nstate = 0, ncyclic = 0, niter = 0;
    int rank = dt_next_rank(), size = dt_next_size();
    if (status == DT_STATUS_NEW) {
        long lo, hi;
        dt_block_range(STATE, rank, size, &lo, &hi);
        nstate = hi - lo;
        state = malloc((size_t)(nstate + 1) * sizeof(double));
        for (long i = lo; i < hi; i++)
            state[i - lo] = (double)i;
        cyclic = malloc((CYC / CYC_B + 1) * CYC_B * sizeof(long));
        for (long k = rank; k * CYC_B < CYC; k += size)
            for (long i = k * CYC_B; i < CYC && i < (k + 1) * CYC_B; i++)
                cyclic[ncyclic++] = i;
        iter = calloc(1, sizeof(long));
        niter = 1;
        if (rank == 0) {
            printf("synthetic: started on %d processes\n", size);
            fflush(stdout);
        }
    }
    dt_register((void **)&state, &nstate, MPI_DOUBLE, DT_DIST_BLOCK, 0);
    dt_register((void **)&cyclic, &ncyclic, MPI_LONG, DT_DIST_BLOCK_CYCLIC, CYC_B);
    dt_register((void **)&iter, &niter, MPI_LONG, DT_DIST_REPLICATED, 0);
    int was = size;
    dt_on_adapt(announce, &was);
    dt_set_limits(1, 64, 0);
    for (;;) {
        was = dt_next_size();
        if (dt_reconfigure() < 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
        int stop = 0;
        if (dt_next_rank() == 0)
            stop = until ? access(until, F_OK) == 0 : iter[0] >= iters;
        MPI_Bcast(&stop, 1, MPI_INT, 0, dt_comm());
        if (stop)
            break;
        compute(compute_ms);
        communicate(comm_ms);
        iter[0]++;
    }
    /* every value where the distributions say it must be */
    rank = dt_next_rank();
    size = dt_next_size();
    long lo, hi, bad = 0, all_bad = 0;
    dt_block_range(STATE, rank, size, &lo, &hi);
    bad += nstate != hi - lo;
    for (long i = 0; i < nstate && !bad; i++)
        bad += state[i] != (double)(lo + i);
    long j = 0;
    for (long k = rank; k * CYC_B < CYC; k += size)
        for (long i = k * CYC_B; i < CYC && i < (k + 1) * CYC_B; i++, j++)
            bad += j >= ncyclic || cyclic[j] != i;
    bad += j != ncyclic;
    MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, dt_comm());
    if (rank == 0)
        printf("synthetic: done on %d processes after %ld iterations, data %s\n", size, iter[0],
               all_bad ? "MISPLACED" : "in place");
    free(state);
    free(cyclic);
    free(iter);
    dt_finalize();
    return 0;
}
