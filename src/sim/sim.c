#include "sim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/idmap.h"
#include "../sched/constraint.h"
#include "evq.h"
#include "sim_internal.h"

const sim_reconf_t sim_reconf_default = {
    .expand_fixed = 0.026,
    .expand_per_node = 0.084,
    .shrink_fixed = 0.0,
    .shrink_per_node = 0.14,
};

enum { EV_END, EV_RESIZE, EV_TICK, EV_CORRIDOR, EV_FAIL, EV_UP, EV_REQUEST };
/* EV_FAIL's job field: an index into the trace, or DRAWN with the node in ver */
#define DRAWN UINT32_MAX
/* At one instant: ends, resize completions and nodes coming back (CHANGE), then
 * failures (a job that ends as its node fails has ended), then arrivals, then ticks. */
enum { CLS_CHANGE = 0, CLS_FAIL = 1, CLS_TICK = 2 };
static double rate_at(const rjob_t *r, int n, int nodes_ref)
{
    if (n == nodes_ref)
        return 1.0; /* exact: an unresized job ends at start + runtime to the bit */
    return speedup_eval(&r->sp, n) / r->s_ref;
}

void sim_progress(rjob_t *r, double t)
{
    r->wref -= (t - r->t_prog) * r->rate;
    if (r->wref < 0)
        r->wref = 0;
    r->t_prog = t;
}

/* W per node a job draws in the model: the mean of what it declares. */
static double job_watts(const sim_power_t *pw, const wl_job_t *j)
{
    double a = j->power_min, b = j->power_max;
    if (a <= 0 && b <= 0)
        return pw->default_w;
    if (a <= 0 || b <= 0)
        return a > b ? a : b;
    return (a + b) / 2;
}

/* The job holds new_alloc nodes from now (the power model's sums follow). */
static void set_alloc(simctx_t *c, size_t i, int new_alloc)
{
    rjob_t *r = &c->rj[i];
    if (c->cfg->power) {
        c->held += new_alloc - r->alloc;
        c->held_w += (new_alloc - r->alloc) * job_watts(c->cfg->power, &c->wl->jobs[i]);
    }
    r->alloc = new_alloc;
}

static void account(simctx_t *c, size_t i, double t, int new_alloc)
{
    rjob_t *r = &c->rj[i];
    double ns = (double)r->alloc * (t - r->t_alloc);
    c->res->jobs[i].node_seconds += ns;
    c->res->busy_node_seconds += ns;
    set_alloc(c, i, new_alloc);
    r->t_alloc = t;
}

static double mtct_of(const wl_job_t *j, const rjob_t *r, int n)
{
    if (j->nmtct == 0)
        return speedup_mtct(&r->sp, n);
    /* Linear interpolation in the profile, clamped at its ends. */
    if (n <= j->mtct[0].nodes)
        return j->mtct[0].mtct;
    for (int k = 1; k < j->nmtct; k++)
        if (n <= j->mtct[k].nodes) {
            const mtct_point_t *a = &j->mtct[k - 1], *b = &j->mtct[k];
            return a->mtct + (b->mtct - a->mtct) * (n - a->nodes) / (double)(b->nodes - a->nodes);
        }
    return j->mtct[j->nmtct - 1].mtct;
}

/* Reports an allocation change. The node list is the job's, in rank order, right
 * after this change: for a start it is the action's own list, because a later action
 * of the same pass (an expand) may already have grown the engine's view of the job. */
static void emit(simctx_t *c, double t, size_t i, sim_op_t op, int before, int after,
                 const int *start_nodes)
{
    if (!c->cfg->on_event)
        return;
    sim_alloc_event_t ev = {.t = t, .job = c->wl->jobs[i].id, .op = op, .before = before,
                            .after = after};
    sched_jobinfo_t info;
    if (start_nodes) {
        ev.nodes = start_nodes;
        ev.n = after;
    } else if (!sim_op_ends(op) && sched_job_info(c->s, ev.job, &info) == 0) {
        ev.nodes = info.nodes;
        ev.n = after <= info.nalloc ? after : info.nalloc;
    }
    c->cfg->on_event(c->cfg->event_arg, &ev);
}

/* The share of an evolving job's work done (its runs' lost work aside). */
static double done_share(const simctx_t *c, size_t i)
{
    const rjob_t *r = &c->rj[i];
    double rt = c->wl->jobs[i].runtime;
    if (!(rt > 0) || !(r->eff0 > 0))
        return 1;
    return 1 - (r->wref / r->eff0) * (r->left / rt);
}

/* An evolving job's next request, at the point of its progress where it comes: an
 * event valid while the job's rate holds (its END's version). */
static void next_request(simctx_t *c, size_t i, double t)
{
    const wl_job_t *j = &c->wl->jobs[i];
    rjob_t *r = &c->rj[i];
    if (!j->nreq || !(r->rate > 0))
        return;
    double done = done_share(c, i);
    int k = 0;
    while (k < j->nreq && j->req[k].at <= done + 1e-9)
        k++;
    if (k == j->nreq)
        return;
    double wref_at = (1 - j->req[k].at) * j->runtime * r->eff0 / r->left;
    double at = t + (r->wref - wref_at) / r->rate;
    if (evq_push(&c->q, at, CLS_CHANGE, EV_REQUEST, (uint32_t)i, r->ver) < 0)
        c->err = -ENOMEM;
}

static void request_closed(simctx_t *c, rjob_t *r, double t, bool granted)
{
    if (r->req_t < 0)
        return;
    if (!granted) {
        c->res->req_never++;
    } else if (t > r->req_t) {
        c->res->req_later++;
        c->res->req_wait += t - r->req_t;
    } else {
        c->res->req_at_once++;
    }
    r->req_t = -1;
}

/* The request an evolving job makes now. */
static void make_request(simctx_t *c, size_t i, double t)
{
    const wl_job_t *j = &c->wl->jobs[i];
    rjob_t *r = &c->rj[i];
    sim_progress(r, t);
    double done = done_share(c, i);
    int k = 0;
    while (k + 1 < j->nreq && j->req[k + 1].at <= done + 1e-9)
        k++;
    c->res->req_made++;
    request_closed(c, r, t, false); /* one not granted yet is replaced */
    char err[SCHED_ERRLEN];
    if (j->req[k].nodes == r->n) {
        c->res->req_at_once++; /* it has that size already */
    } else if (sched_request_resize(c->s, j->id, j->req[k].nodes, false, err, sizeof(err)) < 0) {
        c->res->req_never++;
    } else {
        r->req_t = t;
    }
    next_request(c, i, t);
}

/* The job now runs undisturbed on r->n nodes from t: schedule its end, tell the engine. */
void sim_settle(simctx_t *c, size_t i, double t)
{
    rjob_t *r = &c->rj[i];
    const wl_job_t *j = &c->wl->jobs[i];
    bool phased = c->io && simio_phased(c, i);
    r->rate = phased && r->phase % 2 ? simio_rate(c, i) : rate_at(r, r->n, j->nodes);
    r->t_prog = t;
    r->ver++;
    double end = t + r->wref / r->rate; /* of the job, or of its phase */
    if (evq_push(&c->q, end, CLS_CHANGE, EV_END, (uint32_t)i, r->ver) < 0)
        c->err = -ENOMEM;
    if (j->type == SCHED_MALLEABLE) {
        sched_set_mtct(c->s, j->id, mtct_of(j, r, r->n));
        sched_set_end_estimate(c->s, j->id, phased ? t + simio_remaining(c, i)
                                                   : t + (end - t) * r->est_ratio);
    }
    next_request(c, i, t);
}

static double reconf_cost(const sim_reconf_t *m, sched_op_t op, int before)
{
    if (op == SCHED_OP_EXPAND)
        return m->expand_fixed + m->expand_per_node * before;
    return m->shrink_fixed + m->shrink_per_node * before;
}

/* The work a run does to finish `left`: its checkpoints pause it for `cost` after every
 * `every` seconds of work (none after the last piece). */
static double run_work(const rjob_t *r, double left)
{
    if (!(r->every > 0) || left <= r->every)
        return left;
    return left + r->cost * (ceil(left / r->every - 1e-9) - 1);
}

/* The job's run ends by a failure or an interruption: the engine has requeued it. It
 * starts again after its last checkpoint (or from scratch): the rest of the run is
 * lost, in the same proportion of its node-seconds. */
static void run_lost(simctx_t *c, size_t i, double t, sim_op_t op)
{
    rjob_t *r = &c->rj[i];
    sim_jobres_t *jr = &c->res->jobs[i];
    int held = r->n;
    sim_progress(r, t);
    account(c, i, t, 0);
    double done = r->eff0 - r->wref, kept = 0;
    bool phased = c->io && simio_phased(c, i);
    if (r->every > 0 && done > 0 && !phased) {
        double k = floor(done / (r->every + r->cost) + 1e-9);
        double most = ceil(r->left / r->every - 1e-9) - 1; /* the run's checkpoints */
        if (k > most)
            k = most > 0 ? most : 0;
        r->left -= k * r->every;
        kept = k * (r->every + r->cost) / done;
    }
    double lost = phased ? simio_run_lost(c, i, t)
                         : (jr->node_seconds - r->ns_run) * (1 - (kept < 1 ? kept : 1));
    jr->lost_node_seconds += lost;
    c->res->lost_node_seconds += lost;
    jr->restarts++;
    r->state = RJ_WAITING;
    request_closed(c, r, t, false);
    r->wref = r->left;
    r->rate = 0;
    r->target = 0;
    r->ver++;   /* its END no longer holds */
    r->epoch++; /* nor a resize under way */
    emit(c, t, i, op, held, 0, NULL);
    if (c->ck)
        simck_job_end(c, i, t);
}

static void apply(simctx_t *c, const sched_action_t *a, double t)
{
    rjob_t *r = idmap_get(c->byid, a->job);
    if (!r)
        return;
    size_t i = (size_t)(r - c->rj);
    sim_jobres_t *jr = &c->res->jobs[i];
    if (a->op == SCHED_OP_START) {
        r->state = RJ_RUNNING;
        r->n = a->nnodes;
        set_alloc(c, i, a->nnodes);
        r->t_alloc = t;
        r->ns_run = jr->node_seconds;
        r->eff0 = r->wref = c->io && simio_phased(c, i) ? simio_start(c, i)
                                                        : run_work(r, r->left);
        jr->start = t; /* a restarted job: the start of its last run */
        jr->nodes_start = a->nnodes;
        sim_settle(c, i, t);
        if (c->ck)
            simck_job_start(c, i, t);
        emit(c, t, i, SIM_OP_START, 0, a->nnodes, a->nodes);
        return;
    }
    if (a->op == SCHED_OP_INTERRUPT) { /* stopped at once: it waits again */
        c->res->interrupts++;
        run_lost(c, i, t, SIM_OP_INTERRUPT);
        sched_requeue(c->s, a->job, a->reason == SCHED_R_PREEMPTED ? SCHED_CLASS_NORMAL
                                                                   : SCHED_CLASS_INTERRUPTED);
        return;
    }
    sim_progress(r, t);
    if (a->reason == SCHED_R_REQUESTED)
        request_closed(c, r, t, true);
    r->rate = 0;
    r->ver++; /* the pending END no longer holds */
    r->target = a->nodes_after;
    double cost = reconf_cost(&c->cfg->reconf, a->op, a->nodes_before);
    if (a->op == SCHED_OP_EXPAND) {
        account(c, i, t, a->nodes_after); /* new nodes are held from now */
        emit(c, t, i, SIM_OP_EXPAND, a->nodes_before, a->nodes_after, NULL);
    }
    double rns = (double)r->alloc * cost;
    jr->reconf_node_seconds += rns;
    c->res->reconf_node_seconds += rns;
    if (evq_push(&c->q, t + cost, CLS_CHANGE, EV_RESIZE, (uint32_t)i, r->epoch) < 0)
        c->err = -ENOMEM;
}

static void resize_done(simctx_t *c, size_t i, double t)
{
    rjob_t *r = &c->rj[i];
    sim_jobres_t *jr = &c->res->jobs[i];
    int before = r->n, after = r->target;
    if (c->ck)
        simck_shrink_done(c, i, t);
    sched_resize_done(c->s, c->wl->jobs[i].id, true);
    if (after < before) {
        account(c, i, t, after);
        jr->shrinks++;
        c->res->shrinks++;
        emit(c, t, i, SIM_OP_SHRINK, before, after, NULL);
    } else {
        jr->expansions++;
        c->res->expansions++;
    }
    r->n = after;
    r->target = 0;
    sim_settle(c, i, t);
}

static void job_end(simctx_t *c, size_t i, double t)
{
    rjob_t *r = &c->rj[i];
    sim_jobres_t *jr = &c->res->jobs[i];
    sim_progress(r, t);
    account(c, i, t, 0);
    jr->end = t;
    jr->nodes_final = r->n;
    r->state = RJ_DONE;
    c->fails_since_end = 0;
    if (c->io)
        simio_job_end(c, i, t);
    request_closed(c, r, t, false);
    emit(c, t, i, SIM_OP_END, r->n, 0, NULL);
    sched_remove(c->s, c->wl->jobs[i].id);
    if (c->ck)
        simck_job_end(c, i, t);
}

static void submit(simctx_t *c, size_t i)
{
    const wl_job_t *j = &c->wl->jobs[i];
    rjob_t *r = &c->rj[i];
    sched_jobspec_t spec = {
        .id = j->id,
        .submit = j->submit,
        .user = j->user,
        .account = j->account,
        .type = j->type,
        .nodes = j->nodes,
        .min_nodes = j->min_nodes,
        .max_nodes = j->max_nodes,
        .pref_nodes = j->pref_nodes,
        .constraint = j->constraint,
        .walltime = j->walltime,
        .power_min = j->power_min,
        .power_max = j->power_max,
        .io_intensity = j->io_intensity > 0 ? j->io_intensity : 0,
    };
    if (c->io && simio_phased(c, i)) {
        /* resized only at its scheduling points; estimated at least its time alone */
        spec.wait_adaptive = j->type == SCHED_MALLEABLE;
        double alone = simio_alone_seconds(c, i);
        if (spec.walltime < alone)
            spec.walltime = alone;
    }
    char err[SCHED_ERRLEN];
    if (sched_submit(c->s, &spec, err, sizeof(err)) != 0) {
        r->state = RJ_REJECTED;
        c->res->rejected++;
    } else if (c->io) {
        simio_submitted(c, i);
    }
}

static void init_job(simctx_t *c, size_t i)
{
    const wl_job_t *j = &c->wl->jobs[i];
    const sim_config_t *cfg = c->cfg;
    rjob_t *r = &c->rj[i];
    sim_jobres_t *jr = &c->res->jobs[i];
    if (cfg->force_speedup)
        r->sp = cfg->speedup;
    else if (j->has_speedup)
        r->sp = j->speedup;
    else if (c->wl->has_speedup)
        r->sp = c->wl->speedup;
    else
        r->sp = cfg->speedup;
    r->s_ref = speedup_eval(&r->sp, j->nodes);
    r->left = r->wref = j->runtime;
    const sim_failures_t *f = cfg->failures;
    r->every = j->ckpt_every > 0 ? j->ckpt_every : f ? f->ckpt_every : 0;
    r->cost = j->ckpt_every > 0 ? j->ckpt_cost : f ? f->ckpt_cost : 0;
    r->est_ratio = (j->runtime > 0 && j->walltime > j->runtime) ? j->walltime / j->runtime : 1.0;
    r->state = RJ_WAITING;
    r->req_t = -1;
    jr->id = j->id;
    jr->user = j->user;
    jr->account = j->account;
    jr->submit = j->submit;
    jr->start = jr->end = -1;
    jr->runtime = j->runtime;
    int mn = j->min_nodes ? j->min_nodes : j->nodes, mx = j->max_nodes ? j->max_nodes : j->nodes;
    if (j->type == SCHED_RIGID)
        mn = mx = j->nodes;
    jr->min_nodes = mn;
    jr->max_nodes = mx > cfg->nodes ? cfg->nodes : mx;
}

/* Integrates the draw since the last sample up to t, against the corridor in force
 * over that time (so before a corridor change takes effect). An idle cluster after the
 * last job is not outside, as it is no violation. */
static void power_integrate(simctx_t *c, double t)
{
    sim_result_t *res = c->res;
    double dt = t - c->t_draw;
    if (dt > 0) {
        res->energy_j += c->draw * dt;
        double o = c->draw > c->upper ? c->draw - c->upper
                   : c->draw < c->lower ? c->lower - c->draw : 0;
        if (o > 0 && c->busy) {
            res->outside_seconds += dt;
            res->outside_ws += o * dt;
        }
        c->t_draw = t;
    }
}

/* Integrates the draw up to t, then takes the draw now. */
static void power_sample(simctx_t *c, double t)
{
    const sim_power_t *pw = c->cfg->power;
    if (!pw)
        return;
    sim_result_t *res = c->res;
    power_integrate(c, t);
    c->draw = c->held_w + (c->cfg->nodes - c->held) * pw->idle_w;
    c->t_draw = t;
    if (c->draw > res->power_peak)
        res->power_peak = c->draw;
    /* an idle cluster after the last job is no violation */
    c->busy = sched_pending_count(c->s) || sched_running_count(c->s);
    bool out = (c->draw > c->upper + 1e-9 || c->draw < c->lower - 1e-9) && c->busy;
    if (out && !c->out)
        res->violations++;
    c->out = out;
    if (pw->on_sample)
        pw->on_sample(pw->sample_arg, t, c->draw, c->lower, c->upper, c->busy);
}

static int set_corridor(simctx_t *c, int k, char *err, size_t errlen)
{
    const sim_power_t *pw = c->cfg->power;
    c->lower = k >= 0 ? pw->corridor[k].lower : 0;
    c->upper = k >= 0 ? pw->corridor[k].upper : INFINITY;
    return sched_set_power(c->s, c->lower, c->upper, pw->idle_w, pw->default_w, err, errlen);
}

/* Do drawn failures still matter: jobs to come, running, or waiting for a node that
 * is down? (Jobs that wait with every node up would wait for ever.) */
static bool work_left(const simctx_t *c, size_t next, double t)
{
    if (next < c->wl->njobs || sched_running_count(c->s))
        return true;
    if (!sched_pending_count(c->s))
        return false;
    for (int k = 0; k < c->cfg->nodes; k++)
        if (c->down_until[k] > t)
            return true;
    return false;
}

static void push_drawn(simctx_t *c, double t)
{
    const sim_failures_t *f = c->cfg->failures;
    double at = t + rng_exp(&c->frng, f->mtbf / c->cfg->nodes);
    uint32_t node = (uint32_t)rng_below(&c->frng, (uint64_t)c->cfg->nodes);
    if (evq_push(&c->q, at, CLS_FAIL, EV_FAIL, DRAWN, node) < 0)
        c->err = -ENOMEM;
}

/* A node fails at t for down seconds (counted unless no job is left to run). */
static void node_fail(simctx_t *c, int node, double down, double t, bool count)
{
    if (node < 0 || node >= c->cfg->nodes || t < c->down_until[node])
        return;
    c->res->failures += count;
    c->down_until[node] = t + down;
    if (evq_push(&c->q, t + down, CLS_CHANGE, EV_UP, (uint32_t)node, 0) < 0)
        c->err = -ENOMEM;
    int64_t id;
    sched_failure_t what;
    sched_node_failed(c->s, node, &id, &what);
    rjob_t *r = what == SCHED_FAIL_IDLE ? NULL : idmap_get(c->byid, id);
    if (!r)
        return;
    size_t i = (size_t)(r - c->rj);
    if (what == SCHED_FAIL_REQUEUED) {
        c->res->failed_jobs++;
        run_lost(c, i, t, SIM_OP_FAIL);
        return;
    }
    /* it runs on without the node, at once (docs/simulator.md) */
    c->res->failure_shrinks++;
    sim_progress(r, t);
    r->ver++;
    account(c, i, t, r->alloc - 1);
    emit(c, t, i, SIM_OP_SHRINK, r->n, r->n - 1, NULL);
    r->n--;
    sim_settle(c, i, t);
}

/* A failure event at t; 0 or a negative errno with err set. */
static int on_failure(simctx_t *c, const evq_item_t *it, size_t next, double t, char *err,
                      size_t errlen)
{
    const sim_failures_t *f = c->cfg->failures;
    bool left = work_left(c, next, t);
    if (it->job != DRAWN) { /* a trace's node is down whatever runs */
        const sim_failure_t *e = &f->trace[it->job];
        node_fail(c, e->node, e->down, t, left);
        return 0;
    }
    if (!left)
        return 0; /* the drawn failures end with the work */
    /* failures so frequent that no job ever finishes would run for ever */
    if (++c->fails_since_end > 100000L + 100L * c->cfg->nodes)
        return snprintf(err, errlen,
                        "no job could finish: %ld failures since the last job ended (one "
                        "every %g s on average on %d nodes, --mtbf %g): raise --mtbf or let "
                        "the jobs checkpoint (--checkpoint-every)",
                        c->fails_since_end, f->mtbf / c->cfg->nodes, c->cfg->nodes, f->mtbf),
               -ELOOP;
    node_fail(c, (int)it->ver, f->downtime, t, true);
    push_drawn(c, t);
    return 0;
}

static int failures_init(simctx_t *c, double t0, char *err, size_t errlen)
{
    const sim_failures_t *f = c->cfg->failures;
    c->down_until = calloc((size_t)c->cfg->nodes, sizeof(double));
    if (!c->down_until)
        return snprintf(err, errlen, "out of memory"), -ENOMEM;
    for (int k = 0; k < f->ntrace; k++) {
        const sim_failure_t *e = &f->trace[k];
        if (e->node < 0 || e->node >= c->cfg->nodes)
            return snprintf(err, errlen, "failure %d: node %d is not in the cluster (0 to %d)",
                            k + 1, e->node, c->cfg->nodes - 1), -EINVAL;
        if (!(e->down > 0) || !isfinite(e->t) || (k && e->t < f->trace[k - 1].t))
            return snprintf(err, errlen, "failure %d: needs a time in order and a down time > 0",
                            k + 1), -EINVAL;
        if (evq_push(&c->q, e->t, CLS_FAIL, EV_FAIL, (uint32_t)k, 0) < 0)
            return -ENOMEM;
    }
    if (f->mtbf > 0) {
        if (!(f->downtime > 0))
            return snprintf(err, errlen, "drawn failures need a down time > 0"), -EINVAL;
        rng_seed(&c->frng, f->seed);
        push_drawn(c, t0);
    }
    return c->err;
}

/* A pass, and another at once when it stopped jobs: their nodes are free now. */
static void pass(simctx_t *c, double t)
{
    bool again;
    do {
        const sched_action_t *acts;
        size_t n;
        sched_schedule(c->s, t, &acts, &n);
        c->res->passes++;
        again = false;
        for (size_t k = 0; k < n; k++) {
            again |= acts[k].op == SCHED_OP_INTERRUPT;
            apply(c, &acts[k], t);
        }
    } while (again);
}

int sim_run(const workload_t *wl, const sim_config_t *cfg, sim_result_t *res, char *err,
            size_t errlen)
{
    memset(res, 0, sizeof(*res));
    simctx_t c = {.wl = wl, .cfg = cfg, .res = res};
    int rc = sched_create(cfg->nodes, cfg->policy, &c.s, err, errlen);
    if (rc < 0)
        return rc;
    snprintf(res->policy, sizeof(res->policy), "%s", sched_policy_spec(c.s));
    if (cfg->priority && (rc = sched_set_priority(c.s, cfg->priority, err, errlen)) < 0) {
        sched_destroy(c.s);
        return rc;
    }
    for (int k = 0; k < cfg->nresv; k++) {
        const sim_resv_t *r = &cfg->resv[k];
        double end = r->start + r->duration;
        int *ids = r->nodes > 0 ? malloc((size_t)r->nodes * sizeof(int)) : NULL;
        int got = ids ? sched_pick_reservation_nodes(c.s, r->start, end, r->nodes, ids) : 0;
        if (got < r->nodes) {
            snprintf(err, errlen, "reservation %d: only %d of the %d nodes asked for are free of "
                     "other reservations then", k + 1, got, r->nodes);
            rc = -EINVAL;
        } else {
            rc = sched_add_reservation(c.s, k + 1, r->start, end, ids, got, true, err, errlen);
        }
        free(ids);
        if (rc < 0) {
            sched_destroy(c.s);
            return rc;
        }
    }
    size_t nj = wl->njobs;
    res->jobs = calloc(nj ? nj : 1, sizeof(*res->jobs));
    c.rj = calloc(nj ? nj : 1, sizeof(*c.rj));
    c.byid = idmap_create();
    if (!res->jobs || !c.rj || !c.byid) {
        rc = -ENOMEM;
        goto out;
    }
    res->njobs = nj;
    for (size_t i = 0; i < nj; i++) {
        init_job(&c, i);
        /* a request the engine can never grant is a mistake in the workload */
        const wl_job_t *j = &wl->jobs[i];
        for (int k = 0; k < j->nreq; k++) {
            int want = j->req[k].nodes;
            const char *why = want > cfg->nodes ? "more than the cluster has"
                              : want < res->jobs[i].min_nodes || want > res->jobs[i].max_nodes
                                  ? "outside the job's min-max"
                              : !cons_valid(want, j->constraint) ? "against the job's constraint"
                                                                 : NULL;
            if (why) {
                snprintf(err, errlen, "job %lld: request %d asks for %d nodes, %s (%d-%d, "
                         "constraint %s, %d nodes in the cluster)", (long long)j->id, k + 1,
                         want, why, res->jobs[i].min_nodes, res->jobs[i].max_nodes,
                         sched_constraint_name(j->constraint), cfg->nodes);
                rc = -EINVAL;
                goto out;
            }
        }
        if (idmap_put(c.byid, wl->jobs[i].id, &c.rj[i]) < 0) {
            snprintf(err, errlen, "duplicate job id %lld in the workload",
                     (long long)wl->jobs[i].id);
            rc = -EINVAL;
            goto out;
        }
    }
    double tick = sched_tick(c.s);
    if (tick > 0 && nj > 0)
        evq_push(&c.q, wl->jobs[0].submit + tick, CLS_TICK, EV_TICK, 0, 0);
    if (cfg->power) {
        const sim_power_t *pw = cfg->power;
        int first = pw->ncorridor > 0 && pw->corridor[0].t <= (nj ? wl->jobs[0].submit : 0) ? 0 : -1;
        for (int k = 1; k < pw->ncorridor; k++)
            if (!(pw->corridor[k].t > pw->corridor[k - 1].t)) {
                snprintf(err, errlen, "corridor changes must come in ascending time order");
                rc = -EINVAL;
                goto out;
            }
        for (int k = 0; k < pw->ncorridor; k++)
            if (k != first && evq_push(&c.q, pw->corridor[k].t, CLS_CHANGE, EV_CORRIDOR,
                                       (uint32_t)k, 0) < 0) {
                rc = -ENOMEM;
                goto out;
            }
        if ((rc = set_corridor(&c, first, err, errlen)) < 0)
            goto out;
        c.t_draw = nj ? wl->jobs[0].submit : 0;
        power_sample(&c, c.t_draw);
    }
    if (cfg->ckpt && (rc = simck_init(&c, nj ? wl->jobs[0].submit : 0, err, errlen)) < 0) {
        if (rc == -ENOMEM)
            snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (cfg->failures && cfg->ckpt) {
        snprintf(err, errlen, "node failures and a checkpoint service (--ckpt-nodes) cannot be "
                              "simulated together yet: the service's nodes do not fail");
        rc = -EINVAL;
        goto out;
    }
    if (cfg->failures && (rc = failures_init(&c, nj ? wl->jobs[0].submit : 0, err, errlen)) < 0)
        goto out;
    if ((rc = simio_init(&c, err, errlen)) < 0)
        goto out;
    size_t next = 0, reported = 0, same_instant = 0;
    double last_t = -INFINITY;
    for (;;) {
        double ta = next < nj ? wl->jobs[next].submit : INFINITY;
        double th = c.q.n ? evq_top(&c.q)->t : INFINITY;
        double t = ta < th ? ta : th;
        if (isinf(t))
            break;
        /* fair-share usage is charged up to the time of the ends and resizes that follow */
        sched_clock(c.s, t);
        bool changed = false;
        while (c.q.n && evq_top(&c.q)->t == t && evq_top(&c.q)->cls == CLS_CHANGE) {
            evq_item_t it = *evq_top(&c.q);
            evq_pop(&c.q);
            if (it.kind == EV_CORRIDOR) {
                /* once every job is done, the corridor no longer matters */
                if (next >= nj && !sched_pending_count(c.s) && !sched_running_count(c.s))
                    continue;
                power_integrate(&c, t);
                if ((rc = set_corridor(&c, (int)it.job, err, errlen)) < 0)
                    goto out;
                changed = true;
            } else if (it.kind == EV_RESIZE) {
                if (it.ver != c.rj[it.job].epoch)
                    continue; /* the run it belonged to was lost */
                resize_done(&c, it.job, t);
                changed = true;
            } else if (it.kind == EV_REQUEST) {
                if (it.ver != c.rj[it.job].ver || c.rj[it.job].state != RJ_RUNNING ||
                    c.rj[it.job].target != 0)
                    continue; /* its rate changed since: a newer event stands */
                make_request(&c, it.job, t);
                changed = true;
            } else if (it.kind == EV_UP) {
                if (c.down_until[it.job] > t)
                    continue; /* it failed again since: a later EV_UP brings it back */
                sched_set_node_available(c.s, (int)it.job, true);
                changed = true;
            } else if (it.ver == c.rj[it.job].ver && c.rj[it.job].state == RJ_RUNNING &&
                       c.rj[it.job].target == 0) {
                bool point = false;
                if (c.io && simio_phased(&c, it.job) && simio_next_phase(&c, it.job, t, &point)) {
                    changed |= point; /* a phase ended, another began */
                    continue;
                }
                job_end(&c, it.job, t);
                changed = true;
            }
        }
        while (c.q.n && evq_top(&c.q)->t == t && evq_top(&c.q)->cls == CLS_FAIL) {
            evq_item_t it = *evq_top(&c.q);
            evq_pop(&c.q);
            if ((rc = on_failure(&c, &it, next, t, err, errlen)) < 0)
                goto out;
            changed = true;
        }
        while (next < nj && wl->jobs[next].submit == t) {
            submit(&c, next++);
            changed = true;
        }
        while (c.q.n && evq_top(&c.q)->t == t && evq_top(&c.q)->cls == CLS_TICK) {
            evq_pop(&c.q);
            if (next < nj || sched_pending_count(c.s) || sched_running_count(c.s))
                evq_push(&c.q, t + tick, CLS_TICK, EV_TICK, 0, 0);
            changed = true;
        }
        if (c.err) {
            rc = c.err;
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        /* A policy that keeps resizing at one instant (zero-cost resizes that undo each
         * other) would never let time advance: stop with an error instead. */
        same_instant = t == last_t ? same_instant + 1 : 0;
        last_t = t;
        if (same_instant > 1000000) {
            snprintf(err, errlen, "policy %s does not settle: over a million passes at t=%g",
                     res->policy, t);
            rc = -ELOOP;
            goto out;
        }
        if (changed) {
            pass(&c, t);
            if (c.ck && simck_pass(&c, t))
                pass(&c, t);
            power_sample(&c, t);
            if (c.io)
                simio_after_pass(&c, t);
        }
        if (cfg->on_progress && next - reported >= 4096) {
            reported = next;
            cfg->on_progress(cfg->progress_arg, next, nj);
        }
    }
    for (size_t i = 0; i < nj; i++)
        if (c.rj[i].state == RJ_WAITING || c.rj[i].state == RJ_RUNNING)
            res->unfinished++;
    simck_finish(&c);
    if (cfg->on_progress)
        cfg->on_progress(cfg->progress_arg, nj, nj);
    rc = 0;
out:
    simck_finish(&c);
    simio_finish(&c);
    evq_free(&c.q);
    free(c.down_until);
    idmap_destroy(c.byid);
    free(c.rj);
    sched_destroy(c.s);
    if (rc < 0) {
        free(res->jobs);
        res->jobs = NULL;
    }
    return rc;
}

void sim_result_free(sim_result_t *res)
{
    free(res->jobs);
    res->jobs = NULL;
}
