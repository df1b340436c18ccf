/* io-aware: I/O-intensity-aware scheduling (seed 003 §4.2.4, Algorithms 2 and 3), with
 * the corrections docs/policies.md lists. The aim is to keep the node-weighted I/O
 * intensity of the running jobs (S) close to that of the whole workload (W), so that
 * I/O-heavy jobs run beside compute-heavy ones instead of congesting the file system
 * together.
 *   - Admission (Alg. 3): every size of every waiting job is a candidate, scored
 *     wp = (1 - alpha) * lambda + alpha * norm(delta), lambda its place in the queue
 *     scaled to [0, 1] and delta the distance |W - S| if it started at that size
 *     (Eq. 4.5-4.11); the lowest wp starts, and so on while a waiting job fits.
 *     fit=1 scores only the sizes that fit the free nodes; fit=0 scores every size and
 *     stops when the best does not fit (alpha=0 is then strict first come, first served).
 *   - Reconfiguration (Alg. 2, Eq. 4.12-4.13): a running malleable job that can be
 *     resized now (in the simulator: at a scheduling point, between its phases) goes
 *     to the size that brings S closest to W: an expand whenever it helps, a shrink
 *     only when a waiting job would fit in the nodes it frees.
 * Ties: a size that fits, then lower lambda, then the larger size, then queue order. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policies.h"

enum { P_ALPHA, P_WMEAN, P_FIT, P_WINDOW };

/* A job with a wider range of sizes competes with this many of them, spread evenly
 * over the range (its preferred size among them): a pass stays bounded whatever the
 * cluster's size. */
#define IO_MAX_SIZES 32

typedef struct cand {
    sjob_t *j;
    int n;
    double lambda, delta;
} cand_t;

/* The sizes a waiting job may start with: none above the nodes that are up. */
static void start_sizes(const sched_t *s, const sjob_t *j, int *lo, int *hi)
{
    if (j->spec.type == SCHED_MALLEABLE || j->spec.type == SCHED_MOLDABLE) {
        *lo = j->spec.min_nodes;
        *hi = j->spec.max_nodes < s->navail ? j->spec.max_nodes : s->navail;
    } else {
        *lo = *hi = j->spec.nodes;
    }
}

/* The sizes in [lo, hi] that meet cons, ascending, in out[IO_MAX_SIZES + 1]: all of
 * them, or for a wider range IO_MAX_SIZES spread evenly over it and `keep` (when it
 * is in the range and meets cons). */
static int spread(int lo, int hi, sched_constraint_t cons, int keep, int *out)
{
    int n = 0;
    if (hi - lo < IO_MAX_SIZES) {
        for (int v = lo; v <= hi; v++)
            if (cons_valid(v, cons))
                out[n++] = v;
        return n;
    }
    for (int k = 0; k < IO_MAX_SIZES; k++) {
        int at = lo + (int)((long)(hi - lo) * k / (IO_MAX_SIZES - 1));
        int v = cons_largest_leq(at, cons, lo, hi);
        if (!v)
            v = cons_smallest_geq(at, cons, lo, hi);
        if (v && (!n || v > out[n - 1]))
            out[n++] = v;
    }
    int at = 0;
    if (keep < lo || keep > hi || !cons_valid(keep, cons))
        return n;
    while (at < n && out[at] < keep)
        at++;
    if (at < n && out[at] == keep)
        return n;
    for (int k = n; k > at; k--)
        out[k] = out[k - 1];
    out[at] = keep;
    return n + 1;
}

/* The sizes j competes with at admission (its preferred one among them). */
static int sizes_of(const sched_t *s, const sjob_t *j, int *out)
{
    int lo, hi;
    start_sizes(s, j, &lo, &hi);
    return spread(lo, hi, j->spec.constraint, j->spec.pref_nodes, out);
}

static double workload(const sched_t *s, const io_sums_t *m)
{
    return core_io_workload(s, m, s->params[P_WMEAN] == 0);
}

/* |W - S| if job j ran on n nodes in place of its size in m (was: its nodes in the
 * running sums, 0 if it is not running). */
static double distance(const sched_t *s, const io_sums_t *m, const sjob_t *j, int was, int n)
{
    double w = workload(s, m);
    double num = m->run_w - core_io_of(j, was) * was + core_io_of(j, n) * n;
    double den = m->run_n - was + n;
    return fabs(w - (den > 0 ? num / den : 0));
}

static bool better(const cand_t *a, double wa, const cand_t *b, double wb, int nfree)
{
    if (fabs(wa - wb) > 1e-12)
        return wa < wb;
    if ((a->n <= nfree) != (b->n <= nfree))
        return a->n <= nfree; /* fit=0: a size that fits before one that does not */
    if (a->lambda != b->lambda)
        return a->lambda < b->lambda;
    return a->n > b->n;
}

/* j counts at size `to` in the sums instead of `from` (0: not running before). */
static void sums_move(io_sums_t *m, const sjob_t *j, int from, int to)
{
    int was = from ? from : core_io_size(j); /* a waiting job counts in W at its preferred */
    m->all_w += core_io_of(j, to) * to - core_io_of(j, was) * was;
    m->all_n += to - was;
    m->run_w += core_io_of(j, to) * to - (from ? core_io_of(j, from) * from : 0);
    m->run_n += to - from;
}

/* Algorithm 3: start jobs, best weighted priority first, while one fits. */
static void admit(sched_t *s, io_sums_t *m)
{
    double alpha = s->params[P_ALPHA];
    bool fit = s->params[P_FIT] != 0;
    int window = (int)s->params[P_WINDOW];
    core_tmp_reserve(s, (size_t)s->npending + 1);
    int np = 0; /* every job that can run, in queue order; the first `window` compete */
    for (sjob_t *j = s->qhead; j; j = j->qnext) {
        if (core_unrunnable(s, j, true))
            j->reason = SCHED_R_NODES_UNAVAILABLE;
        else
            s->tmp[np++] = j;
    }
    int w = np < window ? np : window;
    /* the competitors' sizes, once each; then every candidate, scored again after each
     * start (W and S change with it) */
    const size_t rowlen = IO_MAX_SIZES + 2;
    cand_t *c = malloc((size_t)w * (IO_MAX_SIZES + 1) * sizeof(*c) + 1);
    int *sz = malloc((size_t)w * rowlen * sizeof(*sz) + 1);
    if (!c || !sz)
        abort(); /* as the core's arrays: no sane decision without memory */
    for (int k = 0; k < w; k++)
        sz[k * rowlen] = sizes_of(s, s->tmp[k], sz + k * rowlen + 1);
    sjob_t *blocked = NULL;
    while (w > 0 && s->nfree > 0) {
        int nc = 0;
        double dmin = INFINITY, dmax = -INFINITY;
        for (int k = 0; k < w; k++) {
            sjob_t *j = s->tmp[k];
            const int *row = sz + k * rowlen;
            for (int x = 0; x < row[0]; x++) {
                int n = row[1 + x];
                if (fit && !core_can_start(s, j, n)) /* its own nodes (nodesel.c) */
                    continue;
                double d = distance(s, m, j, 0, n);
                c[nc++] = (cand_t){j, n, w > 1 ? (double)k / (w - 1) : 0, d};
                dmin = d < dmin ? d : dmin;
                dmax = d > dmax ? d : dmax;
            }
        }
        int best = -1;
        double wbest = INFINITY;
        for (int k = 0; k < nc; k++) {
            double norm = dmax > dmin ? (c[k].delta - dmin) / (dmax - dmin) : 0;
            double wp = (1 - alpha) * c[k].lambda + alpha * norm;
            if (best < 0 || better(&c[k], wp, &c[best], wbest, s->nfree)) {
                best = k;
                wbest = wp;
            }
        }
        if (best < 0 || !core_can_start(s, c[best].j, c[best].n)) {
            blocked = best < 0 ? NULL : c[best].j; /* fit=0: the best waits for nodes */
            break;
        }
        sjob_t *j = c[best].j;
        sums_move(m, j, 0, c[best].n);
        core_start(s, j, c[best].n, j == s->tmp[0] ? SCHED_R_ORDER : SCHED_R_IO_BALANCE);
        int k = 0;
        while (s->tmp[k] != j)
            k++;
        /* out of the queue and the window; the next waiting job enters the window */
        memmove(s->tmp + k, s->tmp + k + 1, (size_t)(np - k - 1) * sizeof(*s->tmp));
        memmove(sz + k * rowlen, sz + (k + 1) * rowlen, (size_t)(w - k - 1) * rowlen * sizeof(*sz));
        np--;
        if (np >= w)
            sz[(w - 1) * rowlen] = sizes_of(s, s->tmp[w - 1], sz + (w - 1) * rowlen + 1);
        else
            w--;
    }
    free(c);
    free(sz);
    /* fit=1: whoever still competes does not fit; fit=0: the blocked job waits for nodes
     * and the others behind it; beyond the window, every job waits its turn */
    for (int k = 0; k < np; k++) {
        sjob_t *j = s->tmp[k];
        j->reason = k >= w ? SCHED_R_PRIORITY
                    : fit || !blocked || j == blocked ? SCHED_R_RESOURCES
                                                      : SCHED_R_PRIORITY;
        j->reason_job = -1;
    }
}

/* The fewest nodes a job of the window can start on (INT_MAX when none can). */
static int queue_need(const sched_t *s)
{
    int need = INT_MAX, seen = 0, window = (int)s->params[P_WINDOW];
    for (const sjob_t *j = s->qhead; j && seen < window; j = j->qnext) {
        if (core_unrunnable(s, j, true))
            continue;
        seen++;
        if (core_min_start(j, true) < need)
            need = core_min_start(j, true);
    }
    return need;
}

/* Algorithm 2's reconfiguration (Eq. 4.12-4.13) of the jobs that can be resized now. */
static void reconfigure(sched_t *s, io_sums_t *m)
{
    int n = core_collect_resizable(s, false);
    /* while a resize is under way no job grows: the nodes a shrink will join to the
     * free ones are the waiting job's, and the free ones with them */
    int free_left = s->nresizing ? 0 : s->nfree, need = n ? queue_need(s) : INT_MAX;
    for (int i = 0; i < n; i++) {
        sjob_t *j = s->tmp[i];
        int cur = j->ncommit, best = cur;
        double dbest = distance(s, m, j, cur, cur);
        int hi = j->spec.max_nodes < cur + free_left ? j->spec.max_nodes : cur + free_left;
        /* a shrink to v frees enough for the queue only when v <= cur + free - need */
        long shrink_to = need == INT_MAX ? 0 : (long)cur + free_left - need;
        if (hi <= cur && shrink_to < j->spec.min_nodes)
            continue; /* neither grows nor shrinks: the common case, kept cheap */
        int sz[IO_MAX_SIZES + 1], ns = spread(j->spec.min_nodes, hi, j->spec.constraint, cur, sz);
        for (int x = 0; x < ns; x++) {
            int v = sz[x];
            if (v == cur)
                continue;
            if (v < cur && need > free_left + cur - v)
                continue; /* a shrink only for a waiting job that then fits */
            double d = distance(s, m, j, cur, v);
            if (d < dbest - 1e-12 || (fabs(d - dbest) <= 1e-12 && abs(v - cur) < abs(best - cur))) {
                best = v;
                dbest = d;
            }
        }
        if (best == cur || core_resize_held(s, j, best))
            continue;
        j->newsize = best;
        sums_move(m, j, cur, best);
        if (best > cur)
            free_left -= best - cur;
        else
            free_left = 0; /* the free nodes wait with the shrink for the queue */
    }
    core_apply_targets(s, n, SCHED_R_IO_BALANCE, SCHED_R_IO_BALANCE, -1);
}

static void pass(sched_t *s)
{
    io_sums_t m;
    core_io_sums(s, &m);
    admit(s, &m);
    reconfigure(s, &m);
}

const sched_policy_t policy_ioaware = {
    .name = "io-aware",
    .summary = "seed 003: keeps the running jobs' I/O intensity at the workload's",
    .params = (const sched_param_def_t[]){
        {"alpha", 0.5, 0, 1, "job reordering intensity: 0 keeps queue order, 1 balances I/O only",
         false},
        {"wmean", 1, 0, 1, "workload intensity: 1 node-weighted mean, 0 divided by the cluster",
         true},
        {"fit", 0, 0, 1,
         "0: the best size waits when it does not fit; 1: only sizes that fit compete", true},
        {"window", 1000, 1, 1e9, "waiting jobs that compete, from the head of the queue", true},
        {0}},
    .no_power_admit = true,
    .pass = pass,
};
