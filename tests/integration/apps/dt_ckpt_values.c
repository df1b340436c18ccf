/* Drives the checkpoints' values and manual data for test_ckpt_values (seed 002's
 * SIZE, RANK, DEFAULT, DEFAULT..JOINING, VOLATILE and MANUAL; docs/checkpointing.md).
 *
 *   dt_ckpt_values DIR write        saves one version from every kind on N processes
 *   dt_ckpt_values DIR check OLDN   restarts on M processes and checks each kind as a
 *                                   restart from OLDN processes must give it back
 *   dt_ckpt_values DIR norecalc     restores the recalculated value unregistered (a mistake)
 *   dt_ckpt_values DIR badsize      registers a process count as a double (a mistake)
 *   dt_ckpt_values DIR badjoin      the last rank's joining value has 2 elements, not 1
 *
 * What is saved on N processes: nprocs = N (SIZE), me = rank (RANK), tol = {5, 6}
 * with the default {1e-6, 2} (DEFAULT), mine = 100 + rank with the default -1
 * (JOINING), len = 1000 / N (RECALC: 1000 / M after), and items: rank r holds r + 1
 * doubles, element g of the whole being g (MANUAL; root M - 1 at the restore, whose
 * function spreads the whole in blocks over every process). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ductile.h"

static int rank, size;
static long len_seen = -1; /* the saved len the recalculation was given */
static int manual_calls;   /* how many times the manual function ran here */
static int items_ok = 1;   /* the block of items the manual function gave this process */

static void die(const char *what, int rc)
{
    fprintf(stderr, "rank %d: %s: %d (%s)\n", rank, what, rc, dt_ckpt_strerror());
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static int recalc_len(void *data, long count, void *arg)
{
    (void)arg;
    if (count != 1)
        return -22;
    len_seen = *(long *)data;
    *(long *)data = 1000 / size;
    return 0;
}

/* Every process: the root's whole array, spread in blocks by hand. */
static int spread_items(void *data, long count, void *arg)
{
    int root = *(int *)arg;
    long total = count;
    manual_calls++;
    MPI_Bcast(&total, 1, MPI_LONG, root, MPI_COMM_WORLD);
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; r++) {
        long lo, hi;
        dt_block_range(total, r, size, &lo, &hi);
        counts[r] = (int)(hi - lo);
        displs[r] = (int)lo;
    }
    double *mine = malloc(sizeof(double) * (size_t)(counts[rank] + 1));
    MPI_Scatterv(data, counts, displs, MPI_DOUBLE, mine, counts[rank], MPI_DOUBLE, root,
                 MPI_COMM_WORLD);
    for (int i = 0; i < counts[rank]; i++)
        if (mine[i] != (double)(displs[rank] + i))
            items_ok = 0;
    free(mine);
    free(counts);
    free(displs);
    return 0;
}

static int write_version(int bad_join)
{
    int nprocs = size, mine[2] = {100 + rank, 100 + rank}, no = -1;
    long me = rank, len = 1000 / size;
    double tol[2] = {5, 6}, dflt[2] = {1e-6, 2};
    long n = rank + 1, first = (long)rank * (rank + 1) / 2;
    double *items = malloc(sizeof(double) * (size_t)n);
    for (long i = 0; i < n; i++)
        items[i] = (double)(first + i);
    int rc;
    long join = bad_join && rank == size - 1 ? 2 : 1;
    int dfl2[2] = {-1, -1};
    if ((rc = dt_ckpt_add_value("nprocs", &nprocs, 1, MPI_INT, DT_VALUE_SIZE, NULL, NULL, NULL)) < 0 ||
        (rc = dt_ckpt_add_value("me", &me, 1, MPI_LONG, DT_VALUE_RANK, NULL, NULL, NULL)) < 0 ||
        (rc = dt_ckpt_add_value("tol", tol, 2, MPI_DOUBLE, DT_VALUE_DEFAULT, dflt, NULL, NULL)) < 0 ||
        (rc = dt_ckpt_add_value("mine", mine, join, MPI_INT, DT_VALUE_JOINING,
                                join == 1 ? (void *)&no : (void *)dfl2, NULL, NULL)) < 0 ||
        (rc = dt_ckpt_add_value("len", &len, 1, MPI_LONG, DT_VALUE_RECALC, NULL, recalc_len,
                                NULL)) < 0 ||
        (rc = dt_ckpt_add_manual("items", items, n, MPI_DOUBLE, 0, NULL, NULL)) < 0)
        die("dt_ckpt_add_value", rc);
    rc = dt_ckpt_commit();
    free(items);
    return rc;
}

static int check(int oldn)
{
    int bad = 0, nprocs = 0, mine = 0, root = size - 1;
    long me = -1, len = 0, n = -1;
    double tol[2] = {0, 0};
    long v;
    int rc;
    if ((rc = dt_ckpt_restart(&v)) != 1)
        die("dt_ckpt_restart", rc);
    /* the functions are the application's: registered before the restore, as seed 002's
     * listing does */
    if ((rc = dt_ckpt_add_value("len", &len, 1, MPI_LONG, DT_VALUE_RECALC, NULL, recalc_len,
                                NULL)) < 0 ||
        (rc = dt_ckpt_add_manual("items", NULL, 0, MPI_DOUBLE, root, spread_items, &root)) < 0)
        die("dt_ckpt_add", rc);
    if ((rc = dt_ckpt_count("items", &n, NULL)) < 0)
        die("dt_ckpt_count", rc);
    double *items = malloc(sizeof(double) * (size_t)(n + 1));
    if ((rc = dt_ckpt_restore("nprocs", &nprocs, 1)) < 0 ||
        (rc = dt_ckpt_restore("me", &me, 1)) < 0 || (rc = dt_ckpt_restore("tol", tol, 2)) < 0 ||
        (rc = dt_ckpt_restore("mine", &mine, 1)) < 0 || (rc = dt_ckpt_restore("len", &len, 1)) < 0 ||
        (rc = dt_ckpt_restore("items", items, n)) < 0)
        die("dt_ckpt_restore", rc);
    free(items);
    long whole = (long)oldn * (oldn + 1) / 2;
    if (nprocs != size || me != rank || tol[0] != 1e-6 || tol[1] != 2 ||
        mine != (rank < oldn ? 100 + rank : -1) || len != 1000 / size || len_seen != 1000 / oldn ||
        n != (rank == root ? whole : 0) || manual_calls != 1 || !items_ok) {
        fprintf(stderr,
                "rank %d: nprocs %d me %ld tol %g,%g mine %d len %ld (saw %ld) items %ld "
                "calls %d ok %d\n",
                rank, nprocs, me, tol[0], tol[1], mine, len, len_seen, n, manual_calls, items_ok);
        bad = 1;
    }
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf(anybad ? "values differ on %d processes\n" : "values ok on %d processes\n", size);
    return anybad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        fprintf(stderr, "usage: dt_ckpt_values DIR write|check OLDN|norecalc|badsize|badjoin\n");
        MPI_Finalize();
        return 2;
    }
    int rc = dt_ckpt_init("vals", argv[1], MPI_COMM_WORLD), out = 0;
    if (rc < 0)
        die("dt_ckpt_init", rc);
    const char *what = argv[2];
    if (!strcmp(what, "write")) {
        if ((rc = write_version(0)) < 0)
            die("dt_ckpt_commit", rc);
    } else if (!strcmp(what, "badjoin")) {
        rc = write_version(1);
        if (rank == 0)
            printf("commit: %d\n", rc);
    } else if (!strcmp(what, "check") && argc > 3) {
        out = check(atoi(argv[3]));
    } else if (!strcmp(what, "norecalc")) {
        long v, len = 0;
        if ((rc = dt_ckpt_restart(&v)) != 1)
            die("dt_ckpt_restart", rc);
        rc = dt_ckpt_restore("len", &len, 1);
        if (rank == 0)
            printf("restore len: %d\n", rc);
    } else if (!strcmp(what, "badsize")) {
        double d = 0;
        rc = dt_ckpt_add_value("nprocs", &d, 1, MPI_DOUBLE, DT_VALUE_SIZE, NULL, NULL, NULL);
        if (rank == 0)
            printf("add: %d\n", rc);
    }
    if ((rc = dt_ckpt_finalize()) < 0)
        die("dt_ckpt_finalize", rc);
    MPI_Finalize();
    return out;
}
