/* The checkpoint service in the simulator (docs/simulator.md, "Checkpoint nodes").
 *
 * The service's nodes are cluster nodes the engine is told are unavailable: a node
 * lent is marked so at once when idle, or, when a job is shrunk for it, just before
 * the engine hears the shrink is done, so that no waiting job can take it in between.
 * The decisions are the engine's pure functions (ckpt.h); this file only feeds them
 * the model's state and carries out their answers. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim_internal.h"

/* A job with less than this share of its work left is in its final phase: shrinking
 * it frees its nodes for less time than the shrink costs it (seed 7.3.2). */
#define SIMCK_FINAL_SHARE 0.1

typedef struct icnode {
    int node;         /* cluster node index */
    double used;      /* MB */
    double used_prev; /* MB at the previous scaler pass, for the depletion rate */
    int agents;       /* jobs whose data it holds */
} icnode_t;

typedef struct simck {
    const sim_ckpt_t *cfg;
    icnode_t *ic;     /* the service's nodes, in the order they joined */
    int nic;
    bool *lent;       /* per cluster node */
    int *jnode;       /* per job: the node holding its data, -1 none */
    double *jmb;      /* per job: MB held there */
    int *owed;        /* per job: nodes to hand over when its shrink completes */
    ckpt_node_t *view;
    ckpt_mjob_t *mj;
    size_t *mj_job;   /* the workload index of each mj entry */
    int *shrink;
    ckpt_scaler_t st;
    ckpt_prio_t deferred; /* a request decided "next pass" because a job was resizing */
    double t_prev, t_acc;
} simck_t;

static double used_total(const simck_t *k)
{
    double u = 0;
    for (int i = 0; i < k->nic; i++)
        u += k->ic[i].used;
    return u;
}

/* Node-seconds are integrated up to t before the pool changes size. */
static void accrue(simctx_t *c, double t)
{
    simck_t *k = c->ck;
    if (t > k->t_acc)
        c->res->ckpt.node_seconds += k->nic * (t - k->t_acc);
    k->t_acc = t;
}

static void changed(simctx_t *c, double t)
{
    simck_t *k = c->ck;
    sim_ckpt_res_t *r = &c->res->ckpt;
    double u = used_total(k);
    if (k->nic > r->nodes_peak)
        r->nodes_peak = k->nic;
    if (u > r->used_peak_mb)
        r->used_peak_mb = u;
    if (k->cfg->on_change)
        k->cfg->on_change(k->cfg->change_arg, t, k->nic, u);
}

static void lend(simctx_t *c, int node, double t)
{
    simck_t *k = c->ck;
    accrue(c, t);
    sched_set_node_available(c->s, node, false);
    k->lent[node] = true;
    k->ic[k->nic++] = (icnode_t){.node = node};
}

/* The highest-numbered idle node, so that jobs keep the low end of the Gantt chart. */
static int idle_node(const simctx_t *c)
{
    for (int n = c->cfg->nodes - 1; n >= 0; n--)
        if (!c->ck->lent[n] && !sched_node_busy(c->s, n))
            return n;
    return -1;
}

int simck_init(simctx_t *c, double t0, char *err, size_t errlen)
{
    const sim_ckpt_t *cfg = c->cfg->ckpt;
    size_t nj = c->wl->njobs ? c->wl->njobs : 1, nn = (size_t)c->cfg->nodes;
    if (cfg->nodes < 1 || cfg->nodes >= c->cfg->nodes || !(cfg->node_mem_mb > 0) ||
        !(cfg->mb_per_node >= 0)) {
        snprintf(err, errlen, "checkpoint service: %d of %d nodes with %g MB each (and %g MB "
                 "per job node) make no sense: it needs 1 to %d nodes with memory", cfg->nodes,
                 c->cfg->nodes, cfg->node_mem_mb, cfg->mb_per_node, c->cfg->nodes - 1);
        return -EINVAL;
    }
    simck_t *k = calloc(1, sizeof(*k));
    c->ck = k;
    if (!k)
        return -ENOMEM;
    k->cfg = cfg;
    k->ic = calloc(nn, sizeof(*k->ic));
    k->view = calloc(nn, sizeof(*k->view));
    k->lent = calloc(nn, sizeof(*k->lent));
    k->jnode = malloc(nj * sizeof(*k->jnode));
    k->jmb = calloc(nj, sizeof(*k->jmb));
    k->owed = calloc(nj, sizeof(*k->owed));
    k->mj = calloc(nj, sizeof(*k->mj));
    k->mj_job = calloc(nj, sizeof(*k->mj_job));
    k->shrink = calloc(nj, sizeof(*k->shrink));
    if (!k->ic || !k->view || !k->lent || !k->jnode || !k->jmb || !k->owed || !k->mj ||
        !k->mj_job || !k->shrink)
        return -ENOMEM;
    for (size_t i = 0; i < nj; i++)
        k->jnode[i] = -1;
    k->t_prev = k->t_acc = t0;
    for (int i = 0; i < cfg->nodes; i++)
        lend(c, idle_node(c), t0);
    c->res->ckpt.nodes_start = cfg->nodes;
    changed(c, t0);
    return 0;
}

static int ic_index(const simck_t *k, int node)
{
    for (int i = 0; i < k->nic; i++)
        if (k->ic[i].node == node)
            return i;
    return -1;
}

/* Alg. 6 with the memory strategy and one agent: the node with the most free memory.
 * What does not fit is counted, not kept: the service would write it to the file
 * system. */
void simck_job_start(simctx_t *c, size_t i, double t)
{
    simck_t *k = c->ck;
    const wl_job_t *j = &c->wl->jobs[i];
    double mb = j->ckpt_mb > 0 ? j->ckpt_mb : k->cfg->mb_per_node * c->rj[i].n;
    if (mb <= 0)
        return;
    int best = 0;
    for (int n = 1; n < k->nic; n++)
        if (k->ic[n].used < k->ic[best].used)
            best = n;
    double room = k->cfg->node_mem_mb - k->ic[best].used, kept = mb < room ? mb : room;
    c->res->ckpt.overflow_mb += mb - kept;
    k->ic[best].used += kept;
    k->ic[best].agents++;
    k->jnode[i] = k->ic[best].node;
    k->jmb[i] = kept;
    changed(c, t);
}

void simck_job_end(simctx_t *c, size_t i, double t)
{
    simck_t *k = c->ck;
    k->owed[i] = 0;
    int n = k->jnode[i] < 0 ? -1 : ic_index(k, k->jnode[i]);
    k->jnode[i] = -1;
    if (n < 0)
        return; /* no data, or its node was given back and the data flushed */
    k->ic[n].used -= k->jmb[i];
    if (k->ic[n].used < 0)
        k->ic[n].used = 0;
    k->ic[n].agents--;
    changed(c, t);
}

/* The engine releases a shrink's highest ranks: nodes[target..n) of its list. */
void simck_shrink_done(simctx_t *c, size_t i, double t)
{
    simck_t *k = c->ck;
    rjob_t *r = &c->rj[i];
    sched_jobinfo_t info;
    if (!k->owed[i] || r->target >= r->n ||
        sched_job_info(c->s, c->wl->jobs[i].id, &info) != 0)
        return;
    int give = r->n - r->target < k->owed[i] ? r->n - r->target : k->owed[i];
    for (int m = 0; m < give; m++)
        lend(c, info.nodes[r->target + m], t);
    c->res->ckpt.lent_jobs += give;
    k->owed[i] = 0;
    changed(c, t);
}

/* Eq. 6.5: how fast the free memory went down since the last pass. */
static void build_view(simck_t *k, double t)
{
    double dt = t - k->t_prev > 1 ? t - k->t_prev : 1;
    for (int n = 0; n < k->nic; n++) {
        icnode_t *ic = &k->ic[n];
        k->view[n] = (ckpt_node_t){.total_mem = k->cfg->node_mem_mb,
                                   .avail_mem = k->cfg->node_mem_mb - ic->used,
                                   .depletion = (ic->used - ic->used_prev) / dt,
                                   .bw_avail = INFINITY, .agents = ic->agents};
        ic->used_prev = ic->used;
    }
    k->t_prev = t;
}

static double remaining(const rjob_t *r, double t)
{
    return r->wref - (t - r->t_prog) * r->rate;
}

/* Running malleable jobs not already giving nodes to the service. */
static int collect_jobs(simctx_t *c, double t)
{
    simck_t *k = c->ck;
    int n = 0;
    for (size_t i = 0; i < c->wl->njobs; i++) {
        const rjob_t *r = &c->rj[i];
        const wl_job_t *j = &c->wl->jobs[i];
        sched_jobinfo_t info;
        if (r->state != RJ_RUNNING || j->type != SCHED_MALLEABLE || r->target || k->owed[i] ||
            sched_job_info(c->s, j->id, &info) != 0)
            continue;
        int mn = c->res->jobs[i].min_nodes;
        k->mj[n] = (ckpt_mjob_t){.id = j->id, .nodes = r->n, .min_nodes = mn < r->n ? mn : r->n,
                                 .mtct = info.mtct > 0 ? info.mtct : 0,
                                 .final_phase = remaining(r, t) < SIMCK_FINAL_SHARE * j->runtime};
        k->mj_job[n++] = i;
    }
    return n;
}

/* The largest size at or below want the engine accepts (the job's constraint may
 * rule want out); the job then releases a little more than the service gets. */
static bool ask_shrink(simctx_t *c, size_t i, int want, int give)
{
    char err[SCHED_ERRLEN];
    for (int n = want; n >= c->res->jobs[i].min_nodes && n >= 1; n--)
        if (sched_request_resize(c->s, c->wl->jobs[i].id, n, true, err, sizeof(err)) == 0) {
            c->ck->owed[i] = give;
            c->res->ckpt.jobs_shrunk++;
            return true;
        }
    return false;
}

static int carry_shrinks(simctx_t *c, int njobs)
{
    simck_t *k = c->ck;
    int got = 0;
    for (int m = 0; m < njobs; m++)
        if (k->shrink[m] > 0 &&
            ask_shrink(c, k->mj_job[m], k->mj[m].nodes - k->shrink[m], k->shrink[m]))
            got += k->shrink[m];
    return got;
}

static void drop_node(simctx_t *c, int n)
{
    simck_t *k = c->ck;
    int node = k->ic[n].node;
    for (size_t i = 0; i < c->wl->njobs; i++)
        if (k->jnode[i] == node)
            k->jnode[i] = -1; /* its data was flushed to the file system */
    sched_set_node_available(c->s, node, true);
    k->lent[node] = false;
    k->ic[n] = k->ic[--k->nic];
}

/* Favour-app gives nodes back only when a job waits for them; Alg. 9 picks which,
 * from the view the decision saw (nview nodes). */
static int give_back(simctx_t *c, int nview, int want, double t)
{
    simck_t *k = c->ck;
    if (want <= 0 || !sched_pending_count(c->s))
        return 0;
    int *out = malloc((size_t)want * sizeof(*out)), nout = 0;
    if (!out || ckpt_removal(k->view, nview, want, out, &nout, NULL, 0) != 0 || nout == 0) {
        free(out);
        return 0;
    }
    accrue(c, t);
    /* Highest index first, so that removing one does not move the others. */
    for (int a = 0; a < nout; a++)
        for (int b = a + 1; b < nout; b++)
            if (out[b] > out[a]) {
                int x = out[a];
                out[a] = out[b];
                out[b] = x;
            }
    for (int a = 0; a < nout; a++)
        drop_node(c, out[a]);
    free(out);
    c->res->ckpt.reclaimed += nout;
    changed(c, t);
    return nout;
}

static void count_request(sim_ckpt_res_t *r, ckpt_prio_t prio, bool served)
{
    if (prio == CKPT_PRIO_HIGH)
        *(served ? &r->high_served : &r->high_refused) += 1;
    else if (prio == CKPT_PRIO_LOW)
        *(served ? &r->low_served : &r->low_refused) += 1;
}

static ckpt_prio_t ask(simck_t *k)
{
    ckpt_scale_t act;
    int node;
    ckpt_scaler_cfg_t cfg = {0};
    if (ckpt_scaler_pass(k->view, k->nic, &cfg, &k->st, &act, &node, NULL, 0) != 0)
        return CKPT_PRIO_NONE;
    return act == CKPT_SCALE_HIGH ? CKPT_PRIO_HIGH
           : act == CKPT_SCALE_LOW ? CKPT_PRIO_LOW : CKPT_PRIO_NONE;
}

bool simck_pass(simctx_t *c, double t)
{
    simck_t *k = c->ck;
    build_view(k, t);
    ckpt_prio_t prio = ask(k);
    /* The memory that raised a deferred request no longer grows, so the scaler would
     * not raise it again: it is carried here until it is decided. */
    if (prio == CKPT_PRIO_NONE)
        prio = k->deferred;
    k->deferred = CKPT_PRIO_NONE;
    int njobs = collect_jobs(c, t);
    ckpt_sched_in_t in = {.favor = k->cfg->favor, .prio = prio,
                          .requested = prio == CKPT_PRIO_NONE ? 0 : 1,
                          .idle = sched_free_nodes(c->s), .adapting = sched_any_resizing(c->s),
                          .jobs = k->mj, .njobs = njobs, .ic_nodes = k->view, .n_ic = k->nic};
    ckpt_sched_out_t out = {.shrink = k->shrink};
    if (ckpt_sched_decide(&in, &out, NULL, 0) != 0)
        return false;
    if (in.adapting) {
        k->deferred = prio;
        return false;
    }
    int got = 0;
    for (int m = 0; m < out.from_idle; m++) {
        int node = idle_node(c);
        if (node < 0)
            break;
        lend(c, node, t);
        got++;
    }
    c->res->ckpt.lent_idle += got;
    if (got)
        changed(c, t);
    int from_jobs = carry_shrinks(c, njobs);
    count_request(&c->res->ckpt, prio, got + from_jobs > 0);
    return from_jobs > 0 || give_back(c, in.n_ic, out.reclaim, t) > 0;
}

/* Up to the last job end, as the makespan: the event loop's last time may be a stale
 * end event of a job that was resized. */
void simck_finish(simctx_t *c)
{
    simck_t *k = c->ck;
    if (!k)
        return;
    double last = k->t_acc;
    for (size_t i = 0; i < c->res->njobs; i++)
        if (c->res->jobs[i].end > last)
            last = c->res->jobs[i].end;
    accrue(c, last);
    c->res->ckpt.nodes_end = k->nic;
    free(k->ic);
    free(k->view);
    free(k->lent);
    free(k->jnode);
    free(k->jmb);
    free(k->owed);
    free(k->mj);
    free(k->mj_job);
    free(k->shrink);
    free(k);
    c->ck = NULL;
}
