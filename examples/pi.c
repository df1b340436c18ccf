/* pi: computes pi as the integral of 4 / (1 + x^2) over [0, 1], a chunk of intervals
 * per iteration shared by all current processes of a malleable job.
 *
 *   ductile mpirun pi [--intervals N] [--chunks K]
 *
 * Nothing needs to move when the job resizes: each iteration splits its chunk over
 * the processes there are. Prints the value and its error. */
#include <mpi.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ductile.h"

static long intervals = 100000000, chunks = 1000;

static void usage(FILE *f)
{
    fprintf(f, "usage: pi [--intervals N] [--chunks K]\n"
               "Computes pi by the midpoint rule on N intervals (default 100000000), in K\n"
               "chunks (default 1000) shared by the processes there are at each chunk.\n"
               "Malleable under `ductile mpirun pi ...` in a job; elsewhere a plain MPI\n"
               "program (`mpirun -np P pi ...`, or alone).\n"
               "  --intervals N  intervals (N >= 1)\n"
               "  --chunks K     chunks, each a chance to resize (1 <= K <= N)\n"
               "  -h, --help     this text\n");
}

/* The value of option argv[*i], a whole number >= 1; -1 after a message if not. */
static int long_arg(int argc, char **argv, int *i, long *out)
{
    const char *opt = argv[*i];
    char *end;
    if (*i + 1 >= argc) {
        fprintf(stderr, "pi: %s needs a value\n", opt);
        return -1;
    }
    errno = 0;
    *out = strtol(argv[++*i], &end, 10);
    if (errno || end == argv[*i] || *end || *out < 1) {
        fprintf(stderr, "pi: %s '%s': not a whole number >= 1\n", opt, argv[*i]);
        return -1;
    }
    return 0;
}

/* Before MPI starts: -1 to go on, else the exit status (0 after --help). */
static int parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        int bad = 0;
        if (!strcmp(argv[i], "--intervals"))
            bad = long_arg(argc, argv, &i, &intervals);
        else if (!strcmp(argv[i], "--chunks"))
            bad = long_arg(argc, argv, &i, &chunks);
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "pi: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
        if (bad)
            return 2;
    }
    if (chunks > intervals) {
        fprintf(stderr, "pi: --chunks %ld is more than the %ld intervals\n", chunks, intervals);
        return 2;
    }
    return -1;
}

int main(int argc, char **argv)
{
    int status, done = parse(argc, argv);
    if (done >= 0)
        return done;
    if (dt_init_adapt(&argc, &argv, &status) < 0)
        return 1;
    double h = 1.0 / (double)intervals, total = 0;
    long k = 0;
    while (k < chunks) {
        int pending, role;
        dt_probe_adapt(&pending, &role);
        if (pending) {
            MPI_Comm inter, next;
            int rc = dt_adapt_begin(&inter, &next);
            if (rc == 0) {
                if (next != MPI_COMM_NULL) { /* the newcomers learn where we are */
                    MPI_Bcast(&k, 1, MPI_LONG, 0, next);
                    MPI_Bcast(&total, 1, MPI_DOUBLE, 0, next);
                }
                dt_adapt_commit();
            } else if (rc != -EAGAIN) {
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        long first, last, a, b;
        dt_block_range(intervals, (int)k, (int)chunks, &first, &last);
        dt_block_range(last - first, dt_next_rank(), dt_next_size(), &a, &b);
        double part = 0, sum = 0;
        for (long i = first + a; i < first + b; i++) {
            double x = h * ((double)i + 0.5);
            part += 4.0 / (1.0 + x * x);
        }
        MPI_Reduce(&part, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, dt_comm());
        total += sum * h;
        k++;
    }
    if (dt_next_rank() == 0)
        printf("pi: %.15f (error %.2e) on %d processes\n", total, fabs(total - M_PI),
               dt_next_size());
    dt_finalize();
    return 0;
}
