/* I/O phases and the shared file system in the simulator (docs/simulator.md, "I/O and
 * the file system"; seed 003 §4.2.3).
 *
 * A job with phases alternates compute (runtime / iters seconds of work at its
 * requested size, faster or slower on other sizes by its speedup model) and a write of
 * io_gb GB. A node writes at most link GB/s and all writing nodes share the file
 * system's total equally, so every change in the set of writing jobs changes the rate
 * of each of them: their progress is brought up to date and their next event moved.
 * After each write comes a scheduling point: a malleable job can be resized there, and
 * only there (it is adaptive for the pass at that instant). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim_internal.h"

const sim_pfs_t sim_pfs_default = {.link_gbs = 12.5, .total_gbs = 48};

typedef struct simio {
    double link, total;
    size_t *set;       /* jobs writing now */
    int nset;
    int *slot;         /* per job: index in set, -1 */
    long nodes;        /* nodes writing now */
    double t_io;       /* the file system's use integrated up to here */
    size_t *points;    /* jobs at a scheduling point in this instant */
    int npoints;
    bool sampled;      /* the balance: since t_first, integrated up to t_gap */
    double t_first, t_gap, gap, gap_int;
} simio_t;

bool simio_phased(const simctx_t *c, size_t i)
{
    return c->wl->jobs[i].iters > 0;
}

static double speed(const rjob_t *r, int n, int nodes_ref)
{
    return n == nodes_ref ? 1.0 : speedup_eval(&r->sp, n) / r->s_ref;
}

/* GB/s of a job writing alone on n nodes. */
static double alone_rate(const simio_t *k, int n)
{
    double r = n * k->link;
    return r < k->total ? r : k->total;
}

/* Seconds of compute and of I/O of the whole job on n nodes, alone. */
static void job_times(const simctx_t *c, size_t i, int n, double *comp, double *io)
{
    const wl_job_t *j = &c->wl->jobs[i];
    *comp = j->runtime / speed(&c->rj[i], n, j->nodes);
    *io = j->iters * j->io_gb / alone_rate(c->io, n);
}

double simio_alone_seconds(const simctx_t *c, size_t i)
{
    double comp, io;
    job_times(c, i, c->wl->jobs[i].nodes, &comp, &io);
    return comp + io;
}

int simio_init(simctx_t *c, char *err, size_t errlen)
{
    const workload_t *wl = c->wl;
    size_t first = wl->njobs;
    for (size_t i = 0; i < wl->njobs && first == wl->njobs; i++)
        if (wl->jobs[i].iters > 0)
            first = i;
    if (first == wl->njobs)
        return 0;
    const sim_pfs_t *p = c->cfg->pfs ? c->cfg->pfs : &sim_pfs_default;
    if (!(p->link_gbs > 0) || !(p->total_gbs > 0) || !isfinite(p->link_gbs) ||
        !isfinite(p->total_gbs))
        return snprintf(err, errlen, "the file system's rates must be numbers > 0 (GB/s)"),
               -EINVAL;
    if (c->cfg->ckpt)
        return snprintf(err, errlen, "job %lld has I/O phases: they cannot be simulated with a "
                        "checkpoint service (--ckpt-nodes) yet", (long long)wl->jobs[first].id),
               -EINVAL;
    for (size_t i = 0; i < wl->njobs; i++)
        if (wl->jobs[i].iters > 0 && wl->jobs[i].nreq > 0)
            return snprintf(err, errlen, "job %lld: an evolving job's requests and I/O phases "
                            "cannot be simulated together yet", (long long)wl->jobs[i].id),
                   -EINVAL;
    simio_t *k = calloc(1, sizeof(*k));
    if (!k)
        return snprintf(err, errlen, "out of memory"), -ENOMEM;
    c->io = k;
    k->link = p->link_gbs;
    k->total = p->total_gbs;
    c->res->io_total_gbs = k->total;
    k->set = malloc(wl->njobs * sizeof(*k->set));
    k->points = malloc(wl->njobs * sizeof(*k->points));
    k->slot = malloc(wl->njobs * sizeof(*k->slot));
    if (!k->set || !k->points || !k->slot)
        return snprintf(err, errlen, "out of memory"), -ENOMEM;
    for (size_t i = 0; i < wl->njobs; i++) {
        k->slot[i] = -1;
        if (wl->jobs[i].iters > 0) /* slowdowns are against the time alone */
            c->res->jobs[i].runtime = simio_alone_seconds(c, i);
    }
    return 0;
}

void simio_finish(simctx_t *c)
{
    simio_t *k = c->io;
    if (!k)
        return;
    if (k->t_gap > k->t_first)
        c->res->io_gap = k->gap_int / (k->t_gap - k->t_first);
    free(k->set);
    free(k->points);
    free(k->slot);
    free(k);
    c->io = NULL;
}

void simio_submitted(simctx_t *c, size_t i)
{
    const wl_job_t *j = &c->wl->jobs[i];
    if (!c->io || j->iters <= 0 || j->io_intensity >= 0)
        return; /* a declared intensity went with the submission */
    int lo = c->res->jobs[i].min_nodes, hi = c->res->jobs[i].max_nodes;
    if (hi < lo)
        return; /* the engine refused it */
    double *v = malloc((size_t)(hi - lo + 1) * sizeof(*v));
    if (!v) {
        c->err = -ENOMEM;
        return;
    }
    for (int n = lo; n <= hi; n++) {
        double comp, io;
        job_times(c, i, n, &comp, &io);
        v[n - lo] = comp + io > 0 ? io / (comp + io) : 0;
    }
    sched_set_io_intensity(c->s, j->id, lo, v, hi - lo + 1);
    free(v);
}

double simio_start(simctx_t *c, size_t i)
{
    const wl_job_t *j = &c->wl->jobs[i];
    c->rj[i].phase = 2 * c->rj[i].iters_kept;
    return j->runtime / j->iters;
}

double simio_rate(const simctx_t *c, size_t i)
{
    const simio_t *k = c->io;
    double share = k->nodes > 0 ? k->total / (double)k->nodes : k->link;
    return c->rj[i].n * (share < k->link ? share : k->link);
}

double simio_remaining(const simctx_t *c, size_t i)
{
    const wl_job_t *j = &c->wl->jobs[i];
    const rjob_t *r = &c->rj[i];
    double comp, io;
    job_times(c, i, r->n, &comp, &io);
    int left = 2 * j->iters - r->phase - 1; /* phases after this one */
    double now = r->rate > 0 ? r->wref / r->rate : 0;
    int comps = left / 2, ios = left - comps; /* they alternate, starting with a write */
    if (r->phase % 2)
        ios = comps, comps = left - ios;
    return now + comps * comp / j->iters + ios * io / j->iters;
}

/* The file system's use up to t, before the set of writers changes. */
static void use_to(simctx_t *c, double t)
{
    simio_t *k = c->io;
    double dt = t - k->t_io;
    if (dt > 0 && k->nodes > 0) {
        c->res->io_busy_seconds += dt;
        double r = k->nodes * k->link;
        c->res->io_gb += (r < k->total ? r : k->total) * dt;
    }
    k->t_io = t;
}

/* Every writer's rate follows the new share. */
static void rebalance(simctx_t *c, double t)
{
    simio_t *k = c->io;
    for (int s = 0; s < k->nset; s++) {
        sim_progress(&c->rj[k->set[s]], t);
        sim_settle(c, k->set[s], t);
    }
}

static void writer_add(simctx_t *c, size_t i, double t)
{
    simio_t *k = c->io;
    use_to(c, t);
    for (int s = 0; s < k->nset; s++)
        sim_progress(&c->rj[k->set[s]], t); /* at the old share */
    k->slot[i] = k->nset;
    k->set[k->nset++] = i;
    c->rj[i].io_nodes = c->rj[i].n;
    k->nodes += c->rj[i].io_nodes;
    c->rj[i].t_phase = t;
}

/* The job stops writing: its write done, or (done false) dropped. */
static void writer_remove(simctx_t *c, size_t i, double t, bool done)
{
    simio_t *k = c->io;
    int s = k->slot[i];
    if (s < 0)
        return;
    use_to(c, t);
    for (int x = 0; x < k->nset; x++)
        sim_progress(&c->rj[k->set[x]], t);
    k->set[s] = k->set[--k->nset];
    k->slot[k->set[s]] = s;
    k->slot[i] = -1;
    k->nodes -= c->rj[i].io_nodes; /* what it added, whatever its size now */
    c->rj[i].io_nodes = 0;
    const wl_job_t *j = &c->wl->jobs[i];
    if (done) {
        c->res->io_phases++;
        c->res->io_seconds += t - c->rj[i].t_phase;
        c->res->io_alone_seconds += j->io_gb / alone_rate(k, c->rj[i].n);
    }
    rebalance(c, t);
}

bool simio_next_phase(simctx_t *c, size_t i, double t, bool *point)
{
    const wl_job_t *j = &c->wl->jobs[i];
    rjob_t *r = &c->rj[i];
    *point = false;
    sim_progress(r, t);
    bool wrote = r->phase % 2;
    if (wrote) { /* a checkpoint: a failure from now on resumes after it */
        writer_remove(c, i, t, true);
        r->ns_kept = c->res->jobs[i].node_seconds + (double)r->alloc * (t - r->t_alloc);
    }
    if (++r->phase >= 2 * j->iters)
        return false;
    if (r->phase % 2) {
        if (r->at_point) { /* a compute phase of no length: no resize during the write */
            sched_set_adaptive(c->s, j->id, false);
            r->at_point = false;
        }
        r->wref = j->io_gb;
        writer_add(c, i, t);
        rebalance(c, t);
        return true;
    }
    r->wref = j->runtime / j->iters;
    sim_settle(c, i, t);
    if (j->type == SCHED_MALLEABLE && !r->at_point) { /* resizable for this instant */
        sched_set_adaptive(c->s, j->id, true);
        r->at_point = true;
        if (!r->listed) /* each job once: the list has room for every job, no more */
            c->io->points[c->io->npoints++] = i;
        r->listed = true;
    }
    *point |= r->at_point;
    return true;
}

void simio_job_end(simctx_t *c, size_t i, double t)
{
    writer_remove(c, i, t, true);
}

double simio_run_lost(simctx_t *c, size_t i, double t)
{
    rjob_t *r = &c->rj[i];
    writer_remove(c, i, t, false);
    r->iters_kept = r->phase / 2; /* the iteration under way is lost, with its write */
    double ns = c->res->jobs[i].node_seconds, from = r->ns_kept > r->ns_run ? r->ns_kept : r->ns_run;
    return ns > from ? ns - from : 0;
}

void simio_after_pass(simctx_t *c, double t)
{
    simio_t *k = c->io;
    for (int p = 0; p < k->npoints; p++) {
        rjob_t *r = &c->rj[k->points[p]];
        if (r->at_point) /* else its next write closed it */
            sched_set_adaptive(c->s, c->wl->jobs[k->points[p]].id, false);
        r->at_point = r->listed = false;
    }
    k->npoints = 0;
    if (!k->sampled) {
        k->sampled = true;
        k->t_first = k->t_gap = t;
    }
    k->gap_int += k->gap * (t - k->t_gap);
    k->t_gap = t;
    double w, sys;
    sched_io_balance(c->s, false, &w, &sys);
    k->gap = fabs(w - sys);
}
