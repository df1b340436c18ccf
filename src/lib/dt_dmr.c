/* libductile's DMR-style layer (seed 004 §3, Appendix A), on the MPI layer: limits,
 * inhibitors, registered data with predefined redistributions, user callbacks, and one
 * call at the top of an iteration that probes, moves the data and commits. */
#define _GNU_SOURCE
#include <mpi.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ductile.h"
#include "dt_internal.h"

#define MAX_VARS 32

typedef struct var {
    void **data;
    long *count;
    MPI_Datatype type;
    dt_dist_t dist;
    long block;
} var_t;

static var_t vars[MAX_VARS];
static int nvars;
static dt_adapt_fn *callback;
static void *callback_arg;
static int min_nodes = 1, max_nodes = 1 << 30, pref_nodes;
static double period, next_probe;
static long every = 1, calls;

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int dt_set_limits(int min, int max, int preferred)
{
    if (min < 1 || max < min || (preferred && (preferred < min || preferred > max)))
        return -EINVAL;
    min_nodes = min;
    max_nodes = max;
    pref_nodes = preferred;
    return 0;
}

int dt_set_sched_period(double seconds)
{
    if (seconds < 0)
        return -EINVAL;
    period = seconds;
    return 0;
}

int dt_set_sched_iterations(long n)
{
    if (n < 1)
        return -EINVAL;
    every = n;
    return 0;
}

int dt_register(void **data, long *count, MPI_Datatype type, dt_dist_t dist, long block)
{
    if (nvars >= MAX_VARS || !data || !count ||
        (dist != DT_DIST_BLOCK && dist != DT_DIST_BLOCK_CYCLIC && dist != DT_DIST_REPLICATED) ||
        (dist == DT_DIST_BLOCK_CYCLIC && block < 1))
        return -EINVAL;
    vars[nvars++] = (var_t){data, count, type, dist, block};
    return 0;
}

void dt_on_adapt(dt_adapt_fn *fn, void *arg)
{
    callback = fn;
    callback_arg = arg;
}

/* The leader's side of the limits: offers that leave them are declined. */
int dt_dmr_offer_ok(const dt_offer_t *o)
{
    return o->after >= min_nodes && o->after <= max_nodes;
}

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

/* Block-cyclic: blocks of b elements dealt round-robin over the processes; a process
 * keeps its blocks in increasing order. Moves every block to its new owner. */
static int move_block_cyclic(const dt_window_t *w, var_t *v, long total)
{
    MPI_Aint ext = extent_of(v->type);
    long nblocks = (total + v->block - 1) / v->block;
    int n = w->cover_size, me = w->cover_rank;
    int *sc = calloc((size_t)n, sizeof(int)), *sd = calloc((size_t)n, sizeof(int));
    int *rc = calloc((size_t)n, sizeof(int)), *rd = calloc((size_t)n, sizeof(int));
    int my_old = w->old_of[me], my_new = w->new_of[me];
    long mine_new = 0;
    for (long k = my_new >= 0 ? my_new : nblocks; k < nblocks; k += w->new_size)
        mine_new += (k == nblocks - 1 ? total - k * v->block : v->block);
    char *out = malloc((size_t)(*v->count > 0 ? *v->count : 1) * (size_t)ext);
    char *in = malloc((size_t)(mine_new > 0 ? mine_new : 1) * (size_t)ext);
    char *fresh = malloc((size_t)(mine_new > 0 ? mine_new : 1) * (size_t)ext);
    int ret = 0;
    if (!sc || !sd || !rc || !rd || !out || !in || !fresh) {
        ret = -ENOMEM;
        goto done;
    }
    /* pack what I send, by destination, blocks in increasing order */
    long pos = 0;
    for (int p = 0; p < n; p++) {
        sd[p] = (int)(pos * ext);
        if (my_old >= 0 && w->new_of[p] >= 0)
            for (long k = my_old; k < nblocks; k += w->old_size) {
                if (k % w->new_size != w->new_of[p])
                    continue;
                long len = k == nblocks - 1 ? total - k * v->block : v->block;
                memcpy(out + pos * ext, (char *)*v->data + (k / w->old_size) * v->block * ext,
                       (size_t)(len * ext));
                pos += len;
            }
        sc[p] = (int)(pos * ext) - sd[p];
    }
    pos = 0;
    for (int p = 0; p < n; p++) {
        rd[p] = (int)(pos * ext);
        if (my_new >= 0 && w->old_of[p] >= 0)
            for (long k = w->old_of[p]; k < nblocks; k += w->old_size)
                if (k % w->new_size == my_new)
                    pos += k == nblocks - 1 ? total - k * v->block : v->block;
        rc[p] = (int)(pos * ext) - rd[p];
    }
    if (MPI_Alltoallv(out, sc, sd, MPI_BYTE, in, rc, rd, MPI_BYTE, w->cover) != MPI_SUCCESS) {
        ret = -EIO;
        goto done;
    }
    /* unpack: blocks arrive by source, each source's in increasing order */
    pos = 0;
    for (int p = 0; p < n; p++)
        if (my_new >= 0 && w->old_of[p] >= 0)
            for (long k = w->old_of[p]; k < nblocks; k += w->old_size) {
                if (k % w->new_size != my_new)
                    continue;
                long len = k == nblocks - 1 ? total - k * v->block : v->block;
                memcpy(fresh + (k / w->new_size) * v->block * ext, in + pos * ext,
                       (size_t)(len * ext));
                pos += len;
            }
    free(*v->data);
    *v->data = fresh;
    *v->count = mine_new;
    fresh = NULL;
done:
    free(sc), free(sd), free(rc), free(rd), free(out), free(in), free(fresh);
    return ret;
}

static int move_var(const dt_window_t *w, var_t *v)
{
    MPI_Aint ext = extent_of(v->type);
    long total = 0, mine = w->old_of[w->cover_rank] >= 0 ? *v->count : 0;
    if (v->dist == DT_DIST_REPLICATED) {
        /* the new processes get rank 0's copy */
        if (w->next == MPI_COMM_NULL)
            return 0;
        long count = *v->count;
        MPI_Bcast(&count, 1, MPI_LONG, 0, w->next);
        if (w->role == DT_ROLE_JOINING) {
            free(*v->data);
            *v->data = malloc((size_t)(count > 0 ? count : 1) * (size_t)ext);
            if (!*v->data)
                return -ENOMEM;
            *v->count = count;
        }
        return MPI_Bcast(*v->data, (int)(count * ext), MPI_BYTE, 0, w->next) == MPI_SUCCESS
                   ? 0
                   : -EIO;
    }
    MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, w->cover);
    if (v->dist == DT_DIST_BLOCK_CYCLIC)
        return move_block_cyclic(w, v, total);
    long lo = 0, hi = 0;
    if (w->new_of[w->cover_rank] >= 0)
        dt_block_range(total, w->new_of[w->cover_rank], w->new_size, &lo, &hi);
    void *fresh = malloc((size_t)(hi - lo > 0 ? hi - lo : 1) * (size_t)ext);
    if (!fresh)
        return -ENOMEM;
    int rc = dt_redistribute_block(*v->data, fresh, total, (int)ext);
    if (rc < 0) {
        free(fresh);
        return rc;
    }
    free(*v->data);
    *v->data = fresh;
    *v->count = hi - lo;
    return 0;
}

int dt_reconfigure(void)
{
    int pending, role;
    int joining = dt_comm() == MPI_COMM_NULL;
    if (!joining) {
        /* the iteration inhibitor: every process counts the same calls */
        if (++calls % every != 0)
            return 0;
    }
    dt_mpi_set_poll(period <= 0 || mono() >= next_probe);
    int rc = dt_probe_adapt(&pending, &role);
    if (rc < 0 || !pending)
        return rc;
    if (period > 0)
        next_probe = mono() + period;
    MPI_Comm inter, next;
    rc = dt_adapt_begin(&inter, &next);
    if (rc == -EAGAIN)
        return 0;
    if (rc < 0)
        return rc;
    dt_window_t w;
    dt_mpi_window(&w);
    for (int i = 0; i < nvars && rc == 0; i++)
        rc = move_var(&w, &vars[i]);
    if (rc == 0 && callback)
        callback(role, inter, next, callback_arg);
    dt_mpi_window_free(&w);
    if (rc < 0) {
        fprintf(stderr, "libductile: redistribution failed: %s\n", strerror(-rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    calls = 0;
    dt_adapt_commit(); /* leaving processes end here */
    return 1;
}
