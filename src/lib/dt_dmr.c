/* libductile's DMR-style layer (seed 004 §3, Appendix A), on the MPI layer: limits,
 * inhibitors, registered data with predefined redistributions, user callbacks, and one
 * call at the top of an iteration that probes, moves the data and commits. */
#define _GNU_SOURCE
#include <mpi.h>

#include <errno.h>
#include <malloc.h>
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
static int limits_set, resent;     /* resent: after declining an offer outside them */
static double period, next_probe;
static long every = 1, calls;

/* The leader tells the controller (so that the scheduler offers only what this
 * application takes); the other processes keep the values for nothing. Before
 * dt_init_adapt every process hands them to the process layer, which sends them with
 * the leader's attach (before any offer can come). */
static int to_controller(void) { return !dt_mpi_started() || dt_mpi_leader_attached(); }

static int send_limits(void)
{
    if (!limits_set || !to_controller())
        return 0;
    /* (the node daemon takes sizes up to 2^24; beyond is no limit) */
    int rc = dt_set_size_limits(min_nodes, max_nodes > (1 << 24) ? 0 : max_nodes, pref_nodes);
    if (rc < 0)
        fprintf(stderr, "libductile: dt_set_limits: the scheduler was not told: %s\n", dt_strerror());
    return rc;
}

static int send_period(void)
{
    if (!to_controller())
        return 0;
    int rc = dt_set_offer_interval(period);
    if (rc < 0)
        fprintf(stderr, "libductile: dt_set_sched_period: the scheduler was not told: %s\n",
                dt_strerror());
    return rc;
}

/* The leader declined an offer outside the limits: it was made before the scheduler
 * had them (set after the attach, the offer already on its way), and the scheduler
 * now backs off from the job. Telling it the limits again ends the back-off, once per
 * dt_set_limits (a scheduler that keeps offering outside them is not answered so). */
void dt_dmr_declined_outside(void)
{
    if (limits_set && !resent) {
        resent = 1;
        send_limits();
    }
}

int dt_set_limits(int min, int max, int preferred)
{
    if (min < 1 || max < min || preferred < 0 || (preferred && (preferred < min || preferred > max))) {
        fprintf(stderr, "libductile: dt_set_limits(%d, %d, %d): need 1 <= min <= max and "
                        "preferred 0 or within [min, max]\n", min, max, preferred);
        return -EINVAL;
    }
    min_nodes = min;
    max_nodes = max;
    pref_nodes = preferred;
    limits_set = 1;
    resent = 0;
    return send_limits();
}

int dt_set_sched_period(double seconds)
{
    if (!(seconds >= 0 && seconds <= 1e7)) {
        fprintf(stderr, "libductile: dt_set_sched_period(%g): seconds must be between 0 and 1e7\n",
                seconds);
        return -EINVAL;
    }
    period = seconds;
    return send_period();
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
    const char *why = nvars >= MAX_VARS ? "too many variables (at most 32)"
                      : !data || !count ? "data and count must not be NULL"
                      : dist != DT_DIST_BLOCK && dist != DT_DIST_BLOCK_CYCLIC &&
                              dist != DT_DIST_REPLICATED
                          ? "dist must be DT_DIST_BLOCK, DT_DIST_BLOCK_CYCLIC or DT_DIST_REPLICATED"
                      : dist == DT_DIST_BLOCK_CYCLIC && block < 1 ? "a block-cyclic block must be >= 1"
                      : *count < 0 || (*count > 0 && !*data) ? "count must be >= 0, with data for it"
                                                              : NULL;
    if (why) {
        fprintf(stderr, "libductile: dt_register (variable %d): %s\n", nvars + 1, why);
        return -EINVAL;
    }
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

MPI_Aint dt_extent(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

long dt_cyclic_count(long total, long b, int r, int n)
{
    long nblocks = (total + b - 1) / b, c = 0;
    for (long k = r; k < nblocks; k += n)
        c += k == nblocks - 1 ? total - k * b : b;
    return c;
}

/* Block-cyclic: blocks of b elements dealt round-robin over the processes; a process
 * keeps its blocks in increasing order. Moves every block to its new owner. */
static int move_block_cyclic(const dt_window_t *w, var_t *v, long total)
{
    MPI_Aint ext = dt_extent(v->type);
    long nblocks = (total + v->block - 1) / v->block;
    int n = w->cover_size, me = w->cover_rank;
    int *sc = calloc((size_t)n, sizeof(int)), *sd = calloc((size_t)n, sizeof(int));
    int *rc = calloc((size_t)n, sizeof(int)), *rd = calloc((size_t)n, sizeof(int));
    int my_old = w->old_of[me], my_new = w->new_of[me];
    long mine_new = my_new >= 0 ? dt_cyclic_count(total, v->block, my_new, w->new_size) : 0;
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
    MPI_Aint ext = dt_extent(v->type);
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
    int rc = dt_mpi_redistribute(*v->data, fresh, total, (int)ext);
    if (rc < 0) {
        free(fresh);
        return rc;
    }
    free(*v->data);
    *v->data = fresh;
    *v->count = hi - lo;
    return 0;
}

static const char *dist_name(int d)
{
    return d == DT_DIST_BLOCK ? "block" : d == DT_DIST_BLOCK_CYCLIC ? "block-cyclic" : "replicated";
}

/* Per rank and variable, what the check compares. */
enum { F_DIST, F_BLOCK, F_EXT, F_COUNT, F_CAP, NF };
#define ROW (1 + MAX_VARS * NF) /* a rank's row: nvars, then NF fields per variable */
#define F(r, i, k) all[(size_t)(r) * ROW + 1 + (size_t)(i) * NF + (k)]

/* Variable i as every rank of n registered it (all: the rows of check_registrations):
 * 1 (and rank 0 says why, say) when it does not fit, else 0. */
static int check_var(const long *all, int n, int i, int say)
{
    int bad = 0;
    long total = 0;
    int differ = 0;
    for (int r = 0; r < n; r++) {
        if (F(r, i, F_DIST) != F(0, i, F_DIST) || F(r, i, F_BLOCK) != F(0, i, F_BLOCK) ||
            F(r, i, F_EXT) != F(0, i, F_EXT)) {
            differ = 1;
            if (say)
                fprintf(stderr, "libductile: dt_register: variable %d on rank %d is %s (block %ld, "
                                "%ld-byte elements), on rank 0 %s (block %ld, %ld-byte elements): "
                                "every process registers the same variables in the same order\n",
                        i + 1, r, dist_name((int)F(r, i, F_DIST)), F(r, i, F_BLOCK), F(r, i, F_EXT),
                        dist_name((int)F(0, i, F_DIST)), F(0, i, F_BLOCK), F(0, i, F_EXT));
        }
        total += F(r, i, F_COUNT);
    }
    if (differ)
        return 1;
    for (int r = 0; r < n; r++) {
        long cnt = F(r, i, F_COUNT), want, lo, hi;
        const char *d = dist_name((int)F(r, i, F_DIST));
        if (F(r, i, F_DIST) == DT_DIST_REPLICATED) {
            if (cnt != F(0, i, F_COUNT)) {
                bad = 1;
                if (say)
                    fprintf(stderr, "libductile: dt_register: variable %d (replicated) on rank %d: "
                                    "%ld elements registered, rank 0 has %ld: every process holds "
                                    "all of a replicated variable\n",
                            i + 1, r, cnt, F(0, i, F_COUNT));
            }
        } else {
            if (F(r, i, F_DIST) == DT_DIST_BLOCK) {
                dt_block_range(total, r, n, &lo, &hi);
                want = hi - lo;
            } else {
                want = dt_cyclic_count(total, F(r, i, F_BLOCK), r, n);
            }
            if (cnt != want) {
                bad = 1;
                if (say)
                    fprintf(stderr, "libductile: dt_register: variable %d (%s) on rank %d: %ld "
                                    "elements registered, the %s distribution of %ld elements "
                                    "over %d ranks gives it %ld\n",
                            i + 1, d, r, cnt, d, total, n, want);
            }
        }
        if (F(r, i, F_CAP) >= 0 && cnt > F(r, i, F_CAP)) {
            bad = 1;
            if (say)
                fprintf(stderr, "libductile: dt_register: variable %d (%s) on rank %d: %ld "
                                "elements registered, but its buffer holds %ld\n",
                        i + 1, d, r, cnt, F(r, i, F_CAP));
        }
    }
    return bad;
}

/* Before any data moves (an offer is pending, nothing started): every rank registered
 * the same variables, and each count fits its distribution and its buffer. Collective
 * over dt_comm(); 0 on every rank, or -EINVAL on every rank (rank 0 says why). */
static int check_registrations(void)
{
    MPI_Comm c = dt_comm();
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    long mine[ROW], *all = calloc((size_t)n * ROW, sizeof(long));
    int ok = all != NULL, all_ok;
    memset(mine, 0, sizeof(mine));
    mine[0] = nvars;
    for (int i = 0; i < nvars; i++) {
        long *f = mine + 1 + i * NF;
        MPI_Aint ext = dt_extent(vars[i].type);
        f[F_DIST] = vars[i].dist;
        f[F_BLOCK] = vars[i].block;
        f[F_EXT] = (long)ext;
        f[F_COUNT] = *vars[i].count;
        /* what the buffer holds (-1: cannot tell) */
        f[F_CAP] = !*vars[i].data ? 0 : ext > 0 ? (long)(malloc_usable_size(*vars[i].data) / (size_t)ext) : -1;
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, c);
    if (!ok) {
        free(all);
        return -ENOMEM;
    }
    MPI_Allgather(mine, ROW, MPI_LONG, all, ROW, MPI_LONG, c);
    int bad = 0, bad_nvars = 0, say = me == 0;
    /* every rank judges from the gathered rows alone (rank 0's count the reference),
     * so that all of them come to the same answer */
    for (int r = 1; r < n; r++)
        if (all[(size_t)r * ROW] != all[0]) {
            bad = bad_nvars = 1;
            if (say)
                fprintf(stderr, "libductile: dt_register: rank %d registered %ld variables, rank 0 "
                                "%ld: every process registers the same variables in the same order\n",
                        r, all[(size_t)r * ROW], all[0]);
        }
    for (int i = 0; i < nvars && !bad_nvars; i++)
        bad |= check_var(all, n, i, say);
    free(all);
    all_ok = !bad;
    if (!all_ok && me == 0)
        fprintf(stderr, "libductile: dt_reconfigure: the resize is declined: the registered data "
                        "does not match (above); nothing moved\n");
    return all_ok ? 0 : -EINVAL;
}

int dt_reconfigure(void)
{
    int pending, role;
    if (!dt_mpi_joining()) {
        /* the iteration inhibitor: every process counts the same calls */
        if (++calls % every != 0)
            return 0;
    }
    dt_mpi_set_poll(period <= 0 || dt_mono() >= next_probe);
    int rc = dt_mpi_probe(&pending, &role, "dt_reconfigure");
    if (rc < 0 || !pending)
        return rc;
    if (period > 0)
        next_probe = dt_mono() + period;
    if (role != DT_ROLE_JOINING && (rc = check_registrations()) < 0) {
        dt_mpi_decline_pending();
        return rc;
    }
    MPI_Comm inter, next;
    rc = dt_adapt_begin(&inter, &next);
    if (rc == -EAGAIN)
        return 0;
    if (rc < 0)
        return rc;
    dt_window_t w;
    dt_mpi_window(&w);
    for (int i = 0; i < nvars && rc == 0; i++) {
        char what[96];
        snprintf(what, sizeof(what), "moving registered variable %d (%s)", i + 1,
                 dist_name(vars[i].dist));
        dt_mpi_phase(what);
        rc = move_var(&w, &vars[i]);
    }
    if (rc == 0 && callback) {
        dt_mpi_phase("the dt_on_adapt callback");
        callback(role, inter, next, callback_arg);
    }
    dt_mpi_window_free(&w);
    if (rc < 0) {
        fprintf(stderr, "libductile: redistribution failed: %s\n", strerror(-rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    calls = 0;
    dt_adapt_commit(); /* leaving processes end here */
    return 1;
}
