/* Checkpoint cost (docs/checkpointing.md): libductile's dt_ckpt_commit
 * and dt_ckpt_restart + restore against the same bytes written with POSIX (a file per
 * process, write + fsync) and with MPI-IO (one shared file, write_at_all + sync), for
 * the total sizes given. Run with mpirun; rank 0 prints one line per size and method:
 *
 *   mpirun -np 4 build/bench_ckpt DIR 8 64 256      (sizes in MiB, the job's total)
 *
 * The first commit and the steady state (the mean of the 4th and 5th) are separate: the
 * seed measures the first one 5-10x slower with its agents (memory registration). With
 * DUCTILE_CKPT_AGENTS and DUCTILE_CKPT_KEY_FILE set, the commits and the restart go
 * through the checkpoint agents (docs/checkpointing.md, "Agents"). */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ductile.h"

static int rank, size;

static double timed_barrier(double t0)
{
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static void report(const char *what, double mib, double secs)
{
    if (rank == 0)
        printf("%-24s %8.0f MiB %10.4f s %10.1f MiB/s\n", what, mib, secs, mib / secs);
}

static void posix_write(const char *dir, const char *buf, long n)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/posix.%d", dir, rank);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    for (long at = 0; fd >= 0 && at < n;) {
        ssize_t w = write(fd, buf + at, (size_t)(n - at));
        if (w <= 0)
            break;
        at += w;
    }
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

static void mpiio_write(const char *dir, const char *buf, long n)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/mpiio.dat", dir);
    MPI_File f;
    if (MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &f))
        return;
    /* in pieces under 2 GiB: MPI-IO counts are ints */
    for (long at = 0; at < n; at += 1L << 30) {
        long len = n - at < (1L << 30) ? n - at : 1L << 30;
        MPI_File_write_at_all(f, (MPI_Offset)rank * n + at, buf + at, (int)len, MPI_BYTE,
                              MPI_STATUS_IGNORE);
    }
    MPI_File_sync(f);
    MPI_File_close(&f);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: bench_ckpt DIR MiB...\n");
        MPI_Finalize();
        return 2;
    }
    const char *dir = argv[1];
    if (rank == 0)
        printf("%d processes; sizes are the job's total\n", size);
    for (int a = 2; a < argc; a++) {
        double mib = atof(argv[a]);
        long total = (long)(mib * 1048576.0) / 8, lo, hi;
        dt_block_range(total, rank, size, &lo, &hi);
        long n = hi - lo;
        double *x = malloc((size_t)(n + 1) * sizeof(double));
        for (long i = 0; i < n; i++)
            x[i] = (double)(lo + i);
        char app[32];
        snprintf(app, sizeof(app), "b%s", argv[a]);
        dt_ckpt_init(app, dir, MPI_COMM_WORLD);
        dt_ckpt_add("x", x, n, MPI_DOUBLE, DT_DIST_BLOCK, 0);
        double t = MPI_Wtime();
        dt_ckpt_commit();
        report("dt_ckpt_commit first", mib, timed_barrier(t));
        /* steady: after two more, as many versions as are kept exist and the next ones
         * reuse what the dropped ones held (an agent's registered regions) */
        dt_ckpt_commit();
        dt_ckpt_commit();
        t = MPI_Wtime();
        dt_ckpt_commit();
        dt_ckpt_commit();
        report("dt_ckpt_commit steady", mib, timed_barrier(t) / 2);
        /* asynchronous: what the application waits for, then what the write takes;
         * the first and the next (which reuses the first one's copy buffer) */
        dt_ckpt_set_async(1);
        t = MPI_Wtime();
        dt_ckpt_commit();
        report("dt_ckpt_commit async", mib, timed_barrier(t));
        dt_ckpt_wait();
        report("  ... and its write", mib, timed_barrier(t));
        t = MPI_Wtime();
        dt_ckpt_commit();
        report("dt_ckpt_commit async next", mib, timed_barrier(t));
        dt_ckpt_wait();
        report("  ... and its write", mib, timed_barrier(t));
        dt_ckpt_set_async(0);
        memset(x, 0, (size_t)n * sizeof(double));
        t = MPI_Wtime();
        long v;
        dt_ckpt_restart(&v);
        dt_ckpt_restore("x", x, n);
        report("dt_ckpt restart+restore", mib, timed_barrier(t));
        long bad = 0;
        for (long i = 0; i < n; i++)
            bad += x[i] != (double)(lo + i);
        if (bad)
            fprintf(stderr, "rank %d: %ld elements restored wrong\n", rank, bad);
        dt_ckpt_finalize();
        t = MPI_Wtime();
        posix_write(dir, (const char *)x, n * 8);
        report("POSIX file per process", mib, timed_barrier(t));
        t = MPI_Wtime();
        mpiio_write(dir, (const char *)x, n * 8);
        report("MPI-IO write_at_all", mib, timed_barrier(t));
        free(x);
    }
    MPI_Finalize();
    return 0;
}
