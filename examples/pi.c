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

int main(int argc, char **argv)
{
    int status;
    if (dt_init_adapt(&argc, &argv, &status) < 0)
        return 1;
    long intervals = 100000000, chunks = 1000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--intervals") && i + 1 < argc)
            intervals = atol(argv[++i]);
        else if (!strcmp(argv[i], "--chunks") && i + 1 < argc)
            chunks = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: pi [--intervals N] [--chunks K]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (chunks < 1 || chunks > intervals)
        chunks = 1;
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
