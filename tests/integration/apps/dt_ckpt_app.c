/* Drives libductile's checkpoints for the tests (test_ckpt_files, test_ckpt_requeue).
 *
 *   dt_ckpt_app DIR write N     commits versions 1..N of three variables (with
 *                               DT_CKPT_APP_TRANSFER="pull shmr", after
 *                               dt_ckpt_set_transfer("pull", "shmr"); in every mode)
 *   dt_ckpt_app DIR write-async N  the same, asynchronous, changing the data as soon as
 *                               each commit returns
 *   dt_ckpt_app DIR write-release N  the same, blocking, ending with
 *                               dt_ckpt_finalize_release (the agents keep nothing)
 *   dt_ckpt_app DIR check       restarts, restores, checks every element, prints the version
 *   dt_ckpt_app DIR bad         commits with the last rank one element short (a mistake)
 *   dt_ckpt_app DIR run N SECS  a job: restarts where a checkpoint left it (or at 0), then
 *                               steps to N, committing every step, SECS seconds a step
 *   dt_ckpt_app DIR resize N SECS  a malleable job under `ductile mpirun` (test_ckpt_resize):
 *                               steps to version N, committing every step; at each resize
 *                               the data moves with dt_ckpt_redistribute (through the
 *                               agents) and every element is checked on the new processes,
 *                               and each process's own value (DT_VALUE_JOINING) with them
 *
 * With DT_CKPT_APP_PAD_KIB=K in its environment, each process also saves K KiB of
 * filler (a block variable, not checked), for tests that need checkpoints of a size
 * (test_ckpt_scaler, test_ckpt_placement).
 *
 * With DT_CKPT_APP_HURRY=FILE, run and resize stop waiting SECS between steps once FILE
 * exists: a test that has seen what it waited for lets the job finish its steps (every
 * one still committed and checked) instead of sleeping out a length chosen for the
 * slowest machine.
 *
 * Element g of version v is known: block[g] = g + v / 8.0, cyc[g] = 7 g + v,
 * rep = "version v"; so a restore on any process count can be checked in full. */
#include <mpi.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ductile.h"

#define NBLOCK 1003 /* not a multiple of any process count used */
#define NCYC 997
#define CYC_B 3

static int rank, size;
static MPI_Comm world; /* MPI_COMM_WORLD, or the malleable job's dt_comm() */

/* SECS between two steps, none once DT_CKPT_APP_HURRY's file exists (rank 0 looks, as
 * only its environment is sure to have the variable, and tells the others). A long wait
 * is cut short when the file appears (test_ckpt_auth holds a restarted run there). */
#define HURRY_SLICE 0.1
static void step_wait(double secs)
{
    static int hurried;
    const char *hurry = getenv("DT_CKPT_APP_HURRY");
    for (double left = secs;; left -= HURRY_SLICE) {
        int now = hurried || (rank == 0 && hurry && *hurry && access(hurry, F_OK) == 0);
        MPI_Bcast(&now, 1, MPI_INT, 0, world);
        hurried = now;
        if (hurried || left <= 0)
            return;
        usleep((useconds_t)((left < HURRY_SLICE ? left : HURRY_SLICE) * 1e6));
    }
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "rank %d: %s: %d (%s)\n", rank, what, rc, dt_ckpt_strerror());
    MPI_Abort(world, 2);
}

/* global index of local element i of a block-cyclic share */
static long cyc_global(long i) { return ((i / CYC_B) * size + rank) * CYC_B + i % CYC_B; }

typedef struct vars {
    double *block;
    int *cyc;
    char rep[32];
    long nb, nc, lo;
} vars_t;

static void shares(vars_t *v)
{
    long hi;
    dt_block_range(NBLOCK, rank, size, &v->lo, &hi);
    v->nb = hi - v->lo;
    v->nc = 0;
    for (long k = rank; k * CYC_B < NCYC; k += size)
        v->nc += (k + 1) * CYC_B <= NCYC ? CYC_B : NCYC - k * CYC_B;
    v->block = malloc((size_t)(v->nb + 1) * sizeof(double));
    v->cyc = malloc((size_t)(v->nc + 1) * sizeof(int));
}

static void fill(vars_t *v, long version)
{
    for (long i = 0; i < v->nb; i++)
        v->block[i] = (double)(v->lo + i) + (double)version / 8.0;
    for (long i = 0; i < v->nc; i++)
        v->cyc[i] = (int)(7 * cyc_global(i) + version);
    memset(v->rep, 0, sizeof(v->rep));
    snprintf(v->rep, sizeof(v->rep), "version %ld", version);
}

static void add(vars_t *v)
{
    int rc;
    const char *pad_kib = getenv("DT_CKPT_APP_PAD_KIB");
    long pad = pad_kib ? atol(pad_kib) * 1024 : 0;
    static char *filler;
    if (pad > 0 && !filler && !(filler = malloc((size_t)pad)))
        die("the filler", -ENOMEM);
    if (pad > 0) {
        memset(filler, 'p', (size_t)pad);
        if ((rc = dt_ckpt_add("pad", filler, pad, MPI_CHAR, DT_DIST_BLOCK, 0)) < 0)
            die("dt_ckpt_add", rc);
    }
    if ((rc = dt_ckpt_add("block", v->block, v->nb, MPI_DOUBLE, DT_DIST_BLOCK, 0)) < 0 ||
        (rc = dt_ckpt_add("cyc", v->cyc, v->nc, MPI_INT, DT_DIST_BLOCK_CYCLIC, CYC_B)) < 0 ||
        (rc = dt_ckpt_add("rep", v->rep, sizeof(v->rep), MPI_CHAR, DT_DIST_REPLICATED, 0)) < 0)
        die("dt_ckpt_add", rc);
}

/* Restores the version restarted from into v and checks every element. */
static void load(vars_t *v, long version)
{
    long n;
    int rc;
    if ((rc = dt_ckpt_count("block", &n, NULL)) < 0 || n != v->nb)
        die("dt_ckpt_count block", rc < 0 ? rc : (int)n);
    if ((rc = dt_ckpt_restore("block", v->block, v->nb)) < 0 ||
        (rc = dt_ckpt_restore("cyc", v->cyc, v->nc)) < 0 ||
        (rc = dt_ckpt_restore("rep", v->rep, sizeof(v->rep))) < 0)
        die("dt_ckpt_restore", rc);
    vars_t want;
    shares(&want);
    fill(&want, version);
    long bad = 0;
    for (long i = 0; i < v->nb; i++)
        bad += v->block[i] != want.block[i];
    for (long i = 0; i < v->nc; i++)
        bad += v->cyc[i] != want.cyc[i];
    bad += strcmp(v->rep, want.rep) != 0;
    free(want.block);
    free(want.cyc);
    long all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, world);
    if (all) {
        if (rank == 0)
            fprintf(stderr, "version %ld restored on %d processes: %ld elements differ\n", version,
                    size, all);
        MPI_Abort(world, 3);
    }
}

/* Restores and checks; returns the version (0: none). */
static long restore(vars_t *v)
{
    long version = 0;
    int rc = dt_ckpt_restart(&version);
    if (rc < 0)
        die("dt_ckpt_restart", rc);
    if (rc > 0)
        load(v, version);
    return version;
}

/* A malleable run's value of each process's own (DT_VALUE_JOINING): the version it was
 * born at and its rank then, unique; a resize must give every staying process its own
 * back (a shrink renumbers them) and a joining one the default, -1. */
static long birth;

static void add_birth(void)
{
    long none = -1;
    int rc = dt_ckpt_add_value("birth", &birth, 1, MPI_LONG, DT_VALUE_JOINING, &none, NULL, NULL);
    if (rc < 0)
        die("dt_ckpt_add_value", rc);
}

/* The adaptation window: the data through the checkpoint path to the new processes. */
static void adapt(const char *dir, vars_t *v, long *version)
{
    MPI_Comm inter, next;
    int was = size, rc = dt_adapt_begin(&inter, &next);
    if (rc == -EAGAIN)
        return;
    if (rc < 0)
        die("dt_adapt_begin", rc);
    if (v->block) /* the data at the resize, as the next version */
        fill(v, *version + 1);
    double t0 = MPI_Wtime();
    rc = dt_ckpt_redistribute("app", dir, inter, next, version);
    if (rc < 0)
        die("dt_ckpt_redistribute", rc);
    if (rc == 0)
        dt_adapt_commit(); /* a leaving process ends here */
    world = next;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    long own = 0, want = v->block ? birth : -1;
    if ((rc = dt_ckpt_restore("birth", &own, 1)) < 0)
        die("dt_ckpt_restore birth", rc);
    if (own != want) {
        fprintf(stderr, "rank %d: its own value after the resize is %ld, not %ld\n", rank, own,
                want);
        MPI_Abort(world, 3);
    }
    if (!v->block)
        birth = *version * 10000 + rank;
    free(v->block);
    free(v->cyc);
    shares(v);
    load(v, *version);
    add(v);
    add_birth();
    double t = MPI_Wtime() - t0;
    dt_adapt_commit();
    world = dt_comm();
    if (rank == 0) {
        printf("resized %d -> %d processes through the checkpoint path: version %ld checked "
               "(%.3f s)\n", was, size, *version, t);
        fflush(stdout);
    }
}

static int malleable(int argc, char **argv)
{
    int status, rc;
    if (argc < 5 || dt_init_adapt(&argc, &argv, &status) < 0)
        return 2;
    world = dt_comm();
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    const char *dir = argv[1];
    long steps = atol(argv[3]), version = 0;
    double secs = atof(argv[4]);
    vars_t v = {0};
    if (status == DT_STATUS_NEW) {
        if ((rc = dt_ckpt_init("app", dir, world)) < 0)
            die("dt_ckpt_init", rc);
        shares(&v);
        fill(&v, 0);
        add(&v);
        birth = rank;
        add_birth();
        if (rank == 0)
            printf("started on %d processes\n", size);
    }
    while (version < steps) {
        int pending, role;
        dt_probe_adapt(&pending, &role);
        if (pending)
            adapt(dir, &v, &version);
        step_wait(secs);
        fill(&v, ++version);
        if ((rc = dt_ckpt_commit()) < 0)
            die("dt_ckpt_commit", rc);
        if (rank == 0) {
            printf("step %ld on %d processes\n", version, size);
            fflush(stdout);
        }
    }
    if (rank == 0)
        printf("done at version %ld on %d processes\n", version, size);
    free(v.block);
    free(v.cyc);
    dt_ckpt_finalize_release();
    dt_finalize();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[2], "resize"))
        return malleable(argc, argv);
    MPI_Init(&argc, &argv);
    world = MPI_COMM_WORLD;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        fprintf(stderr, "usage: dt_ckpt_app DIR write N | check | run N SECS | resize N SECS\n");
        return 2;
    }
    int rc = dt_ckpt_init("app", argv[1], MPI_COMM_WORLD);
    if (rc < 0)
        die("dt_ckpt_init", rc);
    /* DT_CKPT_APP_TRANSFER="pull shmr": the transfer mode set by the call rather than
     * the environment (test_ckpt_transfer) */
    char t[16], r[16];
    const char *xf = getenv("DT_CKPT_APP_TRANSFER");
    if (xf && sscanf(xf, "%15s %15s", t, r) == 2 && (rc = dt_ckpt_set_transfer(t, r)) < 0)
        die("dt_ckpt_set_transfer", rc);
    vars_t v;
    shares(&v);
    int async = !strcmp(argv[2], "write-async"), release = !strcmp(argv[2], "write-release");
    if ((!strcmp(argv[2], "write") || async || release) && argc > 3) {
        long base = 0; /* versions go on from the last one in DIR */
        if ((rc = dt_ckpt_restart(&base)) < 0)
            die("dt_ckpt_restart", rc);
        add(&v);
        for (long k = base + 1; k <= base + atol(argv[3]); k++) {
            fill(&v, k);
            dt_ckpt_set_async(async);
            if ((rc = dt_ckpt_commit()) < 0)
                die("dt_ckpt_commit", rc);
            if (async) /* the data changes while the commit is written */
                fill(&v, -1);
        }
        if ((rc = dt_ckpt_wait()) < 0)
            die("dt_ckpt_wait", rc);
    } else if (!strcmp(argv[2], "bad")) { /* the last rank registers one element short */
        if (rank == size - 1)
            v.nb--;
        add(&v);
        fill(&v, 1);
        rc = dt_ckpt_commit();
        if (rank == 0)
            printf("commit: %d\n", rc);
    } else if (!strcmp(argv[2], "check")) {
        long version = restore(&v);
        if (rank == 0)
            printf("restored version %ld on %d processes\n", version, size);
    } else if (!strcmp(argv[2], "run") && argc > 4) {
        long start = restore(&v), steps = atol(argv[3]);
        double secs = atof(argv[4]);
        if (rank == 0)
            printf("starting at step %ld on %d processes\n", start, size);
        add(&v);
        for (long k = start + 1; k <= steps; k++) {
            step_wait(secs);
            fill(&v, k);
            if ((rc = dt_ckpt_commit()) < 0)
                die("dt_ckpt_commit", rc);
            if (rank == 0) {
                printf("step %ld\n", k);
                fflush(stdout);
            }
        }
        if (rank == 0)
            printf("done at step %ld\n", steps);
    } else {
        fprintf(stderr, "usage: dt_ckpt_app DIR write N | check | run N SECS | resize N SECS\n");
        return 2;
    }
    free(v.block);
    free(v.cyc);
    if (release)
        dt_ckpt_finalize_release();
    else
        dt_ckpt_finalize();
    MPI_Finalize();
    return 0;
}
