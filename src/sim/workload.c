/* The job list shared by every loader, and the rule that turns rigid trace jobs
 * into malleable ones. */
#include "workload.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "constraint.h"
#include "rng.h"

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

int wl_append(workload_t *wl, const wl_job_t *job)
{
    if (job->nmtct < 0 || (job->nmtct > 0 && !job->mtct) || job->nreq < 0 ||
        (job->nreq > 0 && !job->req))
        return -EINVAL;
    if (wl->njobs == wl->cap) {
        size_t cap = wl->cap ? wl->cap * 2 : 64;
        wl_job_t *jobs = realloc(wl->jobs, cap * sizeof(*jobs));
        if (!jobs)
            return -ENOMEM;
        wl->jobs = jobs;
        wl->cap = cap;
    }
    wl_job_t copy = *job;
    copy.tag[sizeof(copy.tag) - 1] = '\0';
    copy.mtct = NULL;
    if (job->nmtct > 0) {
        copy.mtct = malloc((size_t)job->nmtct * sizeof(*copy.mtct));
        if (!copy.mtct)
            return -ENOMEM;
        memcpy(copy.mtct, job->mtct, (size_t)job->nmtct * sizeof(*copy.mtct));
    }
    copy.req = NULL;
    if (job->nreq > 0) {
        copy.req = malloc((size_t)job->nreq * sizeof(*copy.req));
        if (!copy.req) {
            free(copy.mtct);
            return -ENOMEM;
        }
        memcpy(copy.req, job->req, (size_t)job->nreq * sizeof(*copy.req));
    }
    wl->jobs[wl->njobs++] = copy;
    return 0;
}

typedef struct sort_key {
    double submit;
    int64_t id;
    size_t pos;
} sort_key_t;

static int cmp_double(double a, double b)
{
    /* NaN sorts last so that the order stays a total order. */
    if (isnan(a) || isnan(b))
        return isnan(a) - isnan(b);
    return (a > b) - (a < b);
}

static int cmp_key(const void *pa, const void *pb)
{
    const sort_key_t *a = pa, *b = pb;
    int c = cmp_double(a->submit, b->submit);
    if (c)
        return c;
    if (a->id != b->id)
        return a->id < b->id ? -1 : 1;
    /* The original position breaks the last ties: qsort is not stable, and equal
     * keys must come out the same way on every libc. */
    return (a->pos > b->pos) - (a->pos < b->pos);
}

static int cmp_job(const void *pa, const void *pb)
{
    const wl_job_t *a = pa, *b = pb;
    sort_key_t ka = {a->submit, a->id, 0}, kb = {b->submit, b->id, 0};
    return cmp_key(&ka, &kb);
}

void wl_sort(workload_t *wl)
{
    if (wl->njobs < 2)
        return;
    sort_key_t *keys = malloc(wl->njobs * sizeof(*keys));
    wl_job_t *sorted = malloc(wl->njobs * sizeof(*sorted));
    if (!keys || !sorted) {
        /* Without memory for the keys, sort in place: only jobs with the same
         * submit time and id can then come out in a libc-dependent order. */
        free(keys);
        free(sorted);
        qsort(wl->jobs, wl->njobs, sizeof(*wl->jobs), cmp_job);
        return;
    }
    for (size_t i = 0; i < wl->njobs; i++)
        keys[i] = (sort_key_t){wl->jobs[i].submit, wl->jobs[i].id, i};
    qsort(keys, wl->njobs, sizeof(*keys), cmp_key);
    for (size_t i = 0; i < wl->njobs; i++)
        sorted[i] = wl->jobs[keys[i].pos];
    free(keys);
    free(wl->jobs);
    wl->jobs = sorted;
    wl->cap = wl->njobs;
}

void wl_free(workload_t *wl)
{
    if (!wl)
        return;
    for (size_t i = 0; i < wl->njobs; i++) {
        free(wl->jobs[i].mtct);
        free(wl->jobs[i].req);
    }
    free(wl->jobs);
    memset(wl, 0, sizeof(*wl));
}

/* The malleability rule of the ElastiSim studies (research/anchors-simulators.md §4).
 * Their candidate parallel fractions, from best to worst scaling. */
static const double parallel_fractions[] = {0.999, 0.995, 0.99, 0.98, 0.97, 0.96, 0.95};
#define NFRACTIONS (sizeof(parallel_fractions) / sizeof(parallel_fractions[0]))

static double efficiency(const speedup_t *m, int n) { return speedup_eval(m, n) / n; }

/* A model for a job that has none: the worst-scaling Amdahl curve that still runs
 * the job at more than 80 % efficiency on its trace size, so that the trace size is
 * a sensible choice and not an accident. E(pref) grows with p, so the smallest
 * efficiency above 0.8 belongs to the smallest qualifying p. */
static speedup_t pick_amdahl(int pref)
{
    speedup_t m = {SPEEDUP_AMDAHL, 0, 0};
    /* On one node every p is 100 % efficient; the studies then take the smallest p. */
    double p = parallel_fractions[NFRACTIONS - 1];
    if (pref > 1) {
        /* When even the best p falls below 80 % (very wide jobs), the job still gets
         * the best-scaling curve rather than an arbitrary one. */
        p = parallel_fractions[0];
        for (size_t i = NFRACTIONS; i-- > 0;) {
            speedup_t t = {SPEEDUP_AMDAHL, 1.0 - parallel_fractions[i], 0};
            if (efficiency(&t, pref) > 0.8) {
                p = parallel_fractions[i];
                break;
            }
        }
    }
    m.a = 1.0 - p;
    return m;
}

/* Largest n in [lo, hi] with E(n) > 0.5, or lo. Every model we have has an
 * efficiency that never grows with n, so a binary search finds it without
 * evaluating every size of a large machine for every job. */
static int widest_efficient(const speedup_t *m, int lo, int hi)
{
    int best = lo;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (efficiency(m, mid) > 0.5) {
            best = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return best;
}

static void make_one_malleable(const workload_t *wl, wl_job_t *j, int machine_nodes)
{
    speedup_t model;
    if (j->has_speedup) {
        model = j->speedup;
    } else if (wl->has_speedup) {
        model = wl->speedup;
    } else {
        model = pick_amdahl(j->nodes);
        j->speedup = model;
        j->has_speedup = true;
    }
    int maxn = j->nodes;
    if (machine_nodes > j->nodes)
        maxn = widest_efficient(&model, j->nodes, machine_nodes);
    int minn = (int)floor(0.2 * j->nodes);
    if (minn < 1)
        minn = 1;
    /* Keep the bounds on sizes the job may take, so reports show real limits; the
     * trace size itself satisfies the constraint, so both searches succeed for it. */
    int v = cons_largest_leq(maxn, j->constraint, j->nodes, maxn);
    if (v)
        maxn = v;
    v = cons_smallest_geq(minn, j->constraint, minn, j->nodes);
    if (v)
        minn = v;
    j->type = SCHED_MALLEABLE;
    j->pref_nodes = j->nodes;
    j->min_nodes = minn;
    j->max_nodes = maxn;
}

int wl_make_malleable(workload_t *wl, double fraction, uint64_t seed, int machine_nodes,
                      char *err, size_t errlen)
{
    if (!(fraction >= 0 && fraction <= 1))
        return ERR("malleable fraction must be in [0, 1] (got %g)", fraction);
    if (machine_nodes <= 0)
        machine_nodes = wl->machine_nodes;
    size_t nrigid = 0;
    for (size_t i = 0; i < wl->njobs; i++)
        nrigid += wl->jobs[i].type == SCHED_RIGID;
    size_t k = (size_t)llround(fraction * (double)nrigid);
    if (k == 0)
        return 0;
    if (machine_nodes <= 0)
        return ERR("cannot make jobs malleable: the machine size is unknown (give --nodes)");
    size_t *idx = malloc(nrigid * sizeof(*idx));
    if (!idx)
        return ERR("out of memory");
    size_t n = 0;
    for (size_t i = 0; i < wl->njobs; i++)
        if (wl->jobs[i].type == SCHED_RIGID)
            idx[n++] = i;
    rng_t r;
    rng_seed(&r, seed);
    rng_shuffle(&r, idx, n, sizeof(*idx));
    for (size_t i = 0; i < k; i++)
        make_one_malleable(wl, &wl->jobs[idx[i]], machine_nodes);
    free(idx);
    return 0;
}
