/* A malleable job's data moved at a resize: through the checkpoint path
 * (dt_ckpt_redistribute: the processes before commit, those after restore) against the
 * MPI layer's way (one MPI_Alltoallv of the overlapping blocks, what
 * dt_redistribute_block does). docs/BENCHMARKS.md, "A resize through the agents".
 *
 *   mpirun -np P bench_redist DIR P_OLD MIB...
 *
 * The P processes stand for the job after an expand from P_OLD (ranks below P_OLD are
 * the old ones, the others join) and before a shrink back to P_OLD; one array of
 * doubles of MIB MiB, block-distributed. With DUCTILE_CKPT_AGENTS set the checkpoint
 * path goes through those agents, else through the files in DIR. Prints, for each
 * size, seconds (median of 3) with a barrier at each end, and checks every element. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ductile.h"

#define REPEAT 3

static int rank, size, p_old;
static MPI_Comm world, half, inter;

static void die(const char *what, int rc)
{
    fprintf(stderr, "rank %d: %s: %d (%s)\n", rank, what, rc, dt_ckpt_strerror());
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* a block share of total over n processes, filled with its global indices */
static double *share(long total, int r, int n, long *count)
{
    long lo, hi;
    dt_block_range(total, r, n, &lo, &hi);
    *count = r < n ? hi - lo : 0;
    double *b = malloc((size_t)(*count + 1) * sizeof(double));
    for (long i = 0; i < *count; i++)
        b[i] = (double)(lo + i);
    return b;
}

static void check(const double *b, long total, int r, int n)
{
    long lo, hi, bad = 0, all = 0;
    dt_block_range(total, r, n, &lo, &hi);
    for (long i = 0; r < n && i < hi - lo; i++)
        bad += b[i] != (double)(lo + i);
    MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, world);
    if (all)
        die("elements differ after the move", (int)all);
}

/* The MPI way: from block over old_n to block over new_n, one Alltoallv over world. */
static double *mpi_move(const double *in, long total, int old_n, int new_n)
{
    int *sc = calloc((size_t)size, sizeof(int)), *sd = calloc((size_t)size, sizeof(int));
    int *rc = calloc((size_t)size, sizeof(int)), *rd = calloc((size_t)size, sizeof(int));
    long mlo = 0, mhi = 0, nlo = 0, nhi = 0;
    if (rank < old_n)
        dt_block_range(total, rank, old_n, &mlo, &mhi);
    if (rank < new_n)
        dt_block_range(total, rank, new_n, &nlo, &nhi);
    for (int p = 0; p < size; p++) {
        long lo, hi, a, b;
        if (p < new_n && rank < old_n) { /* what of mine p holds after */
            dt_block_range(total, p, new_n, &lo, &hi);
            a = lo > mlo ? lo : mlo, b = hi < mhi ? hi : mhi;
            if (b > a)
                sc[p] = (int)((b - a) * 8), sd[p] = (int)((a - mlo) * 8);
        }
        if (p < old_n && rank < new_n) { /* what of p's I hold after */
            dt_block_range(total, p, old_n, &lo, &hi);
            a = lo > nlo ? lo : nlo, b = hi < nhi ? hi : nhi;
            if (b > a)
                rc[p] = (int)((b - a) * 8), rd[p] = (int)((a - nlo) * 8);
        }
    }
    double *out = malloc((size_t)(nhi - nlo + 1) * sizeof(double));
    MPI_Alltoallv(in, sc, sd, MPI_BYTE, out, rc, rd, MPI_BYTE, world);
    free(sc), free(sd), free(rc), free(rd);
    return out;
}

/* The checkpoint path, from the processes in the session to those of next. */
static double *ckpt_move(const char *dir, MPI_Comm next)
{
    long v = 0, n = 0;
    int rc = dt_ckpt_redistribute("redist", dir, inter, next, &v);
    if (rc < 0)
        die("dt_ckpt_redistribute", rc);
    if (rc == 0)
        return NULL;
    if ((rc = dt_ckpt_count("a", &n, NULL)) < 0)
        die("dt_ckpt_count", rc);
    double *b = malloc((size_t)(n + 1) * sizeof(double));
    if ((rc = dt_ckpt_restore("a", b, n)) < 0)
        die("dt_ckpt_restore", rc);
    if ((rc = dt_ckpt_add("a", b, n, MPI_DOUBLE, DT_DIST_BLOCK, 0)) < 0)
        die("dt_ckpt_add", rc);
    return b;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t)
{
    qsort(t, REPEAT, sizeof(double), cmp);
    return t[REPEAT / 2];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    world = MPI_COMM_WORLD;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    if (argc < 4 || (p_old = atoi(argv[2])) < 1 || p_old >= size) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np P bench_redist DIR P_OLD MIB... (P_OLD < P)\n");
        MPI_Finalize();
        return 2;
    }
    const char *dir = argv[1];
    int old = rank < p_old;
    MPI_Comm_split(world, old ? 0 : 1, rank, &half);
    MPI_Intercomm_create(half, 0, world, old ? p_old : 0, 7, &inter);
    if (rank == 0)
        printf("%d -> %d -> %d processes; %s; seconds, median of %d\n"
               "MiB  expand: MPI  expand: checkpoint path  shrink: MPI  shrink: checkpoint path\n",
               p_old, size, p_old, getenv("DUCTILE_CKPT_AGENTS") ? "through the agents" : "files",
               REPEAT);
    for (int k = 3; k < argc; k++) {
        long total = atol(argv[k]) * 1048576L / 8, n;
        double te[2][REPEAT], ts[2][REPEAT];
        for (int r = 0; r < REPEAT; r++) {
            /* MPI: expand, then shrink */
            double *a = share(total, rank, p_old, &n), t0;
            MPI_Barrier(world);
            t0 = MPI_Wtime();
            double *b = mpi_move(a, total, p_old, size);
            MPI_Barrier(world);
            te[0][r] = MPI_Wtime() - t0;
            check(b, total, rank, size);
            free(a);
            MPI_Barrier(world);
            t0 = MPI_Wtime();
            a = mpi_move(b, total, size, p_old);
            MPI_Barrier(world);
            ts[0][r] = MPI_Wtime() - t0;
            check(a, total, rank, p_old);
            free(a), free(b);
            /* the checkpoint path: the old processes' session has committed before
             * (steady state: the agents reuse its regions), then expand, then shrink */
            a = NULL;
            int rc;
            if (old) {
                if ((rc = dt_ckpt_init("redist", dir, half)) < 0)
                    die("dt_ckpt_init", rc);
                a = share(total, rank, p_old, &n);
                if ((rc = dt_ckpt_add("a", a, n, MPI_DOUBLE, DT_DIST_BLOCK, 0)) < 0 ||
                    (rc = dt_ckpt_commit()) < 0 || (rc = dt_ckpt_commit()) < 0)
                    die("dt_ckpt_commit", rc);
            }
            MPI_Barrier(world);
            t0 = MPI_Wtime();
            b = ckpt_move(dir, world);
            MPI_Barrier(world);
            te[1][r] = MPI_Wtime() - t0;
            check(b, total, rank, size);
            free(a);
            if ((rc = dt_ckpt_commit()) < 0) /* the new session, as it would go on */
                die("dt_ckpt_commit", rc);
            MPI_Barrier(world);
            t0 = MPI_Wtime();
            a = ckpt_move(dir, old ? half : MPI_COMM_NULL);
            MPI_Barrier(world);
            ts[1][r] = MPI_Wtime() - t0;
            if (old) {
                long lo, hi, bad = 0;
                dt_block_range(total, rank, p_old, &lo, &hi);
                for (long i = 0; i < hi - lo; i++)
                    bad += a[i] != (double)(lo + i);
                if (bad)
                    die("elements differ after the shrink", (int)bad);
                dt_ckpt_finalize_release();
            }
            free(a), free(b);
        }
        if (rank == 0)
            printf("%-4s %-12.4f %-24.4f %-12.4f %.4f\n", argv[k], median(te[0]), median(te[1]),
                   median(ts[0]), median(ts[1]));
        fflush(stdout);
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0;
}
