/* jacobi2d: the 2-D heat equation by Jacobi iteration, malleable.
 *
 *   ductile mpirun jacobi2d [--n N] [--iters T] [--delay-us U] [--wait-for FILE]
 *
 * An N x N plate, its top edge held at 1.0 and the other edges at 0.0; T sweeps of
 * u'(i,j) = (u(i-1,j) + u(i+1,j) + u(i,j-1) + u(i,j+1)) / 4. The rows are split in
 * contiguous blocks over dt_comm(); when the job grows or shrinks, the blocks move to
 * the new distribution with dt_redistribute_block and the sweep goes on. The printed
 * checksum (the sum of the plate, added row by row in order on rank 0) is the same for
 * any number of processes and any sequence of resizes.
 *
 * --delay-us U sleeps U microseconds per sweep on every process (a heavier solver);
 * --wait-for FILE holds the last sweep until FILE exists, probing for resizes meanwhile
 * (tests use it so that their resizes happen while the job computes). Started without
 * `ductile mpirun`, it runs as a plain MPI program on MPI_COMM_WORLD. */
#include <mpi.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ductile.h"

static long n = 128, iters = 200, delay_us;
static const char *wait_for;

/* rows [lo, hi) of the plate, with one ghost row above and below */
static double *u, *v;
static long lo, hi;

static void allocate(void)
{
    free(u);
    free(v);
    long rows = hi - lo + 2;
    u = calloc((size_t)(rows * n), sizeof(double));
    v = calloc((size_t)(rows * n), sizeof(double));
    if (!u || !v) {
        fprintf(stderr, "jacobi2d: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void initial(void)
{
    for (long i = lo; i < hi; i++)
        for (long j = 0; j < n; j++)
            u[(i - lo + 1) * n + j] = i == 0 ? 1.0 : 0.0;
}

static void sweep(MPI_Comm c)
{
    int r, size;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &size);
    int up = r > 0 ? r - 1 : MPI_PROC_NULL, down = r + 1 < size ? r + 1 : MPI_PROC_NULL;
    long rows = hi - lo;
    if (rows > 0) {
        MPI_Sendrecv(u + n, (int)n, MPI_DOUBLE, up, 1, u + (rows + 1) * n, (int)n, MPI_DOUBLE,
                     down, 1, c, MPI_STATUS_IGNORE);
        MPI_Sendrecv(u + rows * n, (int)n, MPI_DOUBLE, down, 2, u, (int)n, MPI_DOUBLE, up, 2, c,
                     MPI_STATUS_IGNORE);
    }
    for (long i = lo; i < hi; i++) {
        double *out = v + (i - lo + 1) * n, *in = u + (i - lo + 1) * n;
        if (i == 0 || i == n - 1) {
            memcpy(out, in, (size_t)n * sizeof(double));
            continue;
        }
        out[0] = in[0];
        out[n - 1] = in[n - 1];
        for (long j = 1; j < n - 1; j++)
            out[j] = 0.25 * (in[j - n] + in[j + n] + in[j - 1] + in[j + 1]);
    }
    double *t = u;
    u = v;
    v = t;
    if (delay_us > 0) {
        struct timespec ts = {delay_us / 1000000, (delay_us % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Rank 0 adds the rows in order: the same sum whatever the distribution. */
static double checksum(MPI_Comm c)
{
    int r, size;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &size);
    double *mine = calloc((size_t)(hi - lo + 1), sizeof(double)), *all = NULL;
    for (long i = lo; i < hi; i++)
        for (long j = 0; j < n; j++)
            mine[i - lo] += u[(i - lo + 1) * n + j];
    int *counts = NULL, *displs = NULL;
    if (r == 0) {
        all = calloc((size_t)n, sizeof(double));
        counts = calloc((size_t)size, sizeof(int));
        displs = calloc((size_t)size, sizeof(int));
        for (int p = 0; p < size; p++) {
            long a, b;
            dt_block_range(n, p, size, &a, &b);
            counts[p] = (int)(b - a);
            displs[p] = (int)a;
        }
    }
    MPI_Gatherv(mine, (int)(hi - lo), MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, c);
    double s = 0;
    for (long i = 0; r == 0 && i < n; i++)
        s += all[i];
    free(mine);
    free(all);
    free(counts);
    free(displs);
    return s;
}

/* The adaptation window: the rows move to their new owners; the joining processes
 * learn the iteration. */
static void adapt(long *iter)
{
    MPI_Comm inter, next;
    int was = dt_next_size();
    int rc = dt_adapt_begin(&inter, &next);
    if (rc == -EAGAIN)
        return; /* the new nodes could not be used: carry on as we are */
    if (rc < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    long nlo = 0, nhi = 0;
    int nr = dt_next_rank(), ns = dt_next_size();
    if (nr >= 0)
        dt_block_range(n, nr, ns, &nlo, &nhi);
    double *fresh = calloc((size_t)((nhi - nlo + 2) * n), sizeof(double));
    if (dt_redistribute_block(u ? u + n : NULL, fresh + n, n, (int)(n * sizeof(double))) < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (next != MPI_COMM_NULL) {
        MPI_Bcast(iter, 1, MPI_LONG, 0, next);
        if (nr == 0)
            printf("jacobi2d: %d -> %d processes at iteration %ld\n", was, ns, *iter);
        fflush(stdout);
    }
    lo = nlo;
    hi = nhi;
    free(u);
    free(v);
    u = fresh;
    v = calloc((size_t)((hi - lo + 2) * n), sizeof(double));
    dt_adapt_commit(); /* leaving processes end here */
}

static void usage(FILE *f)
{
    fprintf(f, "usage: jacobi2d [--n N] [--iters T] [--delay-us U] [--wait-for FILE]\n"
               "The heat equation on an N x N plate (default 128) by T Jacobi sweeps (default\n"
               "200); prints the plate's checksum, the same for any number of processes and\n"
               "any resizes. Malleable under `ductile mpirun jacobi2d ...` in a job; elsewhere\n"
               "a plain MPI program (`mpirun -np P jacobi2d ...`, or alone).\n"
               "  --n N            plate size (N >= 3)\n"
               "  --iters T        sweeps (T >= 0)\n"
               "  --delay-us U     sleep U microseconds per sweep (a heavier solver)\n"
               "  --wait-for FILE  hold the last sweep until FILE exists, resizing meanwhile\n"
               "  -h, --help       this text\n");
}

/* The value of option argv[*i], a whole number >= min; -1 after a message if not. */
static int long_arg(int argc, char **argv, int *i, long min, long *out)
{
    const char *opt = argv[*i];
    char *end;
    if (*i + 1 >= argc) {
        fprintf(stderr, "jacobi2d: %s needs a value\n", opt);
        return -1;
    }
    errno = 0;
    *out = strtol(argv[++*i], &end, 10);
    if (errno || end == argv[*i] || *end || *out < min) {
        fprintf(stderr, "jacobi2d: %s '%s': not a whole number >= %ld\n", opt, argv[*i], min);
        return -1;
    }
    return 0;
}

/* Before MPI starts: -1 to go on, else the exit status (0 after --help). Every process
 * has the same arguments (the joining ones too), so all stop or none. */
static int parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        int bad = 0;
        if (!strcmp(argv[i], "--n"))
            bad = long_arg(argc, argv, &i, 3, &n);
        else if (!strcmp(argv[i], "--iters"))
            bad = long_arg(argc, argv, &i, 0, &iters);
        else if (!strcmp(argv[i], "--delay-us"))
            bad = long_arg(argc, argv, &i, 0, &delay_us);
        else if (!strcmp(argv[i], "--wait-for") && i + 1 < argc)
            wait_for = argv[++i];
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            if (!strcmp(argv[i], "--wait-for"))
                fprintf(stderr, "jacobi2d: --wait-for needs a value\n");
            else
                fprintf(stderr, "jacobi2d: unknown option '%s'\n", argv[i]);
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
    long iter = 0;
    if (status == DT_STATUS_NEW) {
        dt_block_range(n, dt_next_rank(), dt_next_size(), &lo, &hi);
        allocate();
        initial();
        if (dt_next_rank() == 0) {
            printf("jacobi2d: started on %d process%s\n", dt_next_size(),
                   dt_next_size() == 1 ? "" : "es");
            fflush(stdout);
        }
    }
    for (;;) {
        int pending, role;
        dt_probe_adapt(&pending, &role);
        if (pending)
            adapt(&iter);
        if (iter == iters)
            break;
        if (iter == iters - 1 && wait_for) {
            /* hold the last sweep until the file exists, resizing meanwhile */
            int go = 0;
            if (dt_next_rank() == 0)
                go = access(wait_for, F_OK) == 0;
            MPI_Bcast(&go, 1, MPI_INT, 0, dt_comm());
            if (!go) {
                usleep(10000);
                continue;
            }
        }
        sweep(dt_comm());
        iter++;
    }
    double s = checksum(dt_comm());
    int size;
    MPI_Comm_size(dt_comm(), &size);
    if (dt_next_rank() == 0)
        printf("jacobi2d: n=%ld iters=%ld processes=%d checksum=%.17g\n", n, iters, size, s);
    dt_finalize();
    return 0;
}
