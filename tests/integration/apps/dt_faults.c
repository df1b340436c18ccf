/* dt_faults: a small malleable MPI program (the DMR-style layer) that makes, on request,
 * the mistakes and faults issue 9 names, for the integration tests
 * (tests/integration/test_mpi_faults.sh, test_mpi_misuse.sh).
 *
 *   ductile mpirun dt_faults [--iters N] [--ms M] [--until FILE] [--window-ms W]
 *       [--joiner-dies-ms D] [--joiner-uses-comm] [--skip-rank R --skip-iter K]
 *       [--bad-count R] [--fewer-vars R] [--limits MIN MAX PREF] [--early-limits]
 *       [--period S]
 *
 * A block-distributed vector of 1000 doubles (value = global index) and a replicated
 * iteration counter are registered; each iteration sleeps M ms and sums the vector over
 * dt_comm(). At the end rank 0 prints the number of processes, the global element count
 * and the sum (499500 when nothing was lost or invented).
 *   --window-ms W        staying processes spend W ms in each adaptation window
 *   --joiner-dies-ms D   a joining group's first process kills itself (SIGKILL) D ms
 *                        after its MPI_Init is done (its group's ready marker); -1:
 *                        before its MPI_Init
 *   --joiner-uses-comm   a joining process prints its rank and size in dt_comm() right
 *                        after dt_init_adapt
 *   --skip-rank R --skip-iter K   rank R calls MPI_Barrier instead of dt_reconfigure at
 *                        iteration K (a collective called by only some ranks)
 *   --bad-count R        rank R registers its block with 10 elements more than it has
 *   --fewer-vars R       rank R registers one variable fewer than the others
 *   --bad-register       registers a variable with a negative count first (and says
 *                        what dt_register returned)
 *   --limits MIN MAX PREF dt_set_limits (after dt_init_adapt; --early-limits: before)
 *   --period S           dt_set_sched_period(S) */
#define _GNU_SOURCE
#include <mpi.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ductile.h"

#define N 1000

static void sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)((ms - (double)(long)(ms / 1000) * 1000) * 1e6)};
    nanosleep(&ts, NULL);
}

static double die_ms = -2, window_ms;

/* The fault: this process dies D ms after its group's MPI_Init is done. */
static void *die_later(void *arg)
{
    (void)arg;
    char path[4200];
    snprintf(path, sizeof(path), "%s/ready.%s", getenv("DT_MPI_DIR"),
             getenv("DUCTILE_NODENAME") ? getenv("DUCTILE_NODENAME") : "");
    while (access(path, F_OK) != 0)
        sleep_ms(2);
    sleep_ms(die_ms);
    fprintf(stderr, "dt_faults: joining process %d kills itself\n", (int)getpid());
    raise(SIGKILL);
    return NULL;
}

static void on_adapt(int role, MPI_Comm inter, MPI_Comm next, void *arg)
{
    (void)inter;
    int *was = arg, size;
    if (role == DT_ROLE_STAYING && window_ms > 0)
        sleep_ms(window_ms);
    if (next == MPI_COMM_NULL || role == DT_ROLE_JOINING)
        return;
    MPI_Comm_size(next, &size);
    if (dt_next_rank() == 0) {
        printf("dt_faults: resized %d -> %d processes\n", *was, size);
        fflush(stdout);
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: dt_faults [--iters N] [--ms M] [--until FILE] [--window-ms W] "
                    "[--joiner-dies-ms D] [--joiner-uses-comm] [--skip-rank R --skip-iter K] "
                    "[--bad-count R] [--fewer-vars R] [--bad-register] [--limits MIN MAX PREF] "
                    "[--early-limits] "
                    "[--period S]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    long iters = 20, skip_iter = -1;
    double ms = 100, period = -1;
    const char *until = NULL;
    int bad_register = 0, uses_comm = 0, skip_rank = -1, bad_rank = -1, fewer_rank = -1, early = 0, lim[3] = {0, 0, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--iters") && more)
            iters = atol(argv[++i]);
        else if (!strcmp(a, "--ms") && more)
            ms = atof(argv[++i]);
        else if (!strcmp(a, "--until") && more)
            until = argv[++i];
        else if (!strcmp(a, "--window-ms") && more)
            window_ms = atof(argv[++i]);
        else if (!strcmp(a, "--joiner-dies-ms") && more)
            die_ms = atof(argv[++i]);
        else if (!strcmp(a, "--joiner-uses-comm"))
            uses_comm = 1;
        else if (!strcmp(a, "--skip-rank") && more)
            skip_rank = atoi(argv[++i]);
        else if (!strcmp(a, "--skip-iter") && more)
            skip_iter = atol(argv[++i]);
        else if (!strcmp(a, "--bad-count") && more)
            bad_rank = atoi(argv[++i]);
        else if (!strcmp(a, "--fewer-vars") && more)
            fewer_rank = atoi(argv[++i]);
        else if (!strcmp(a, "--limits") && i + 3 < argc) {
            for (int k = 0; k < 3; k++)
                lim[k] = atoi(argv[++i]);
        } else if (!strcmp(a, "--bad-register"))
            bad_register = 1;
        else if (!strcmp(a, "--early-limits"))
            early = 1;
        else if (!strcmp(a, "--period") && more)
            period = atof(argv[++i]);
        else
            usage();
    }
    const char *grank = getenv("OMPI_COMM_WORLD_RANK");
    if (die_ms == -1 && getenv("DT_MPI_JOIN") && grank && !strcmp(grank, "0")) {
        fprintf(stderr, "dt_faults: joining process %d kills itself before MPI_Init\n", (int)getpid());
        raise(SIGKILL);
    }
    if (die_ms >= 0 && getenv("DT_MPI_JOIN") && grank && !strcmp(grank, "0")) {
        pthread_t t;
        pthread_create(&t, NULL, die_later, NULL);
        pthread_detach(t);
    }
    if (lim[0] && early && dt_set_limits(lim[0], lim[1], lim[2]) < 0)
        fprintf(stderr, "dt_faults: dt_set_limits refused %d %d %d\n", lim[0], lim[1], lim[2]);
    int status;
    if (dt_init_adapt(&argc, &argv, &status) < 0)
        return 1;
    if (status == DT_STATUS_JOINING && uses_comm) {
        int r = -1, n = -1;
        MPI_Comm_rank(dt_comm(), &r);
        MPI_Comm_size(dt_comm(), &n);
        printf("dt_faults: joined as rank %d of %d\n", r, n);
        fflush(stdout);
    }
    if (lim[0] && !early && dt_set_limits(lim[0], lim[1], lim[2]) < 0)
        fprintf(stderr, "dt_faults: dt_set_limits refused %d %d %d\n", lim[0], lim[1], lim[2]);
    if (period >= 0)
        dt_set_sched_period(period);
    double *x = NULL;
    long nx = 0, *iter = NULL, niter = 0, reg = 0;
    int rank = dt_next_rank(), size = dt_next_size();
    if (status == DT_STATUS_NEW) {
        long lo, hi;
        dt_block_range(N, rank, size, &lo, &hi);
        nx = hi - lo;
        x = malloc((size_t)(nx > 0 ? nx : 1) * sizeof(double));
        for (long i = lo; i < hi; i++)
            x[i - lo] = (double)i;
        iter = calloc(1, sizeof(long));
        niter = 1;
        if (rank == 0) {
            printf("dt_faults: started on %d processes\n", size);
            fflush(stdout);
        }
    }
    if (bad_register) {
        long neg = -1;
        double *none = NULL;
        printf("dt_faults: dt_register with count -1: %d\n",
               dt_register((void **)&none, &neg, MPI_DOUBLE, DT_DIST_BLOCK, 0));
        fflush(stdout);
    }
    reg = rank == bad_rank && status == DT_STATUS_NEW ? 10 : 0;
    nx += reg;
    dt_register((void **)&x, &nx, MPI_DOUBLE, DT_DIST_BLOCK, 0);
    if (!(rank == fewer_rank && status == DT_STATUS_NEW))
        dt_register((void **)&iter, &niter, MPI_LONG, DT_DIST_REPLICATED, 0);
    int was = size;
    dt_on_adapt(on_adapt, &was);
    for (;;) {
        was = dt_next_size();
        if (skip_rank >= 0 && dt_next_rank() == skip_rank && iter[0] == skip_iter) {
            printf("dt_faults: rank %d skips dt_reconfigure at iteration %ld\n", skip_rank, iter[0]);
            fflush(stdout);
            MPI_Barrier(dt_comm());
        } else {
            int rc = dt_reconfigure();
            if (rc < 0) {
                /* (the errors made here come on every rank: all end the same way) */
                fprintf(stderr, "dt_faults: rank %d: dt_reconfigure failed (%d)\n", dt_next_rank(), rc);
                dt_finalize();
                return 3;
            }
        }
        int stop = 0;
        if (dt_next_rank() == 0)
            stop = until ? access(until, F_OK) == 0 : iter[0] >= iters;
        MPI_Bcast(&stop, 1, MPI_INT, 0, dt_comm());
        if (stop)
            break;
        sleep_ms(ms);
        iter[0]++;
    }
    double sum = 0, all = 0;
    long cnt = nx, total = 0;
    for (long i = 0; i < nx; i++)
        sum += x[i];
    MPI_Reduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, 0, dt_comm());
    MPI_Reduce(&cnt, &total, 1, MPI_LONG, MPI_SUM, 0, dt_comm());
    if (dt_next_rank() == 0)
        printf("dt_faults: done on %d processes after %ld iterations: %ld elements, sum %.0f\n",
               dt_next_size(), iter[0], total, all);
    free(x);
    free(iter);
    dt_finalize();
    return 0;
}
