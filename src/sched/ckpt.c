#include "ckpt.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

static int imin(int a, int b)
{
    return a < b ? a : b;
}

static int imax(int a, int b)
{
    return a > b ? a : b;
}

/* A zero field means the seed's default, a negative one is a mistake. */
static int or_default(int v, int def)
{
    return v ? v : def;
}

/* <0: a goes first. */
typedef int (*ckpt_cmp_fn)(const void *ctx, int a, int b);

/* Stable, so that equal keys keep the caller's order: the index order the tests and
 * the docs promise as the tie-break. The lists are a few hundred entries at most. */
static void sort_idx(int *idx, int n, const void *ctx, ckpt_cmp_fn cmp)
{
    for (int i = 1; i < n; i++) {
        int v = idx[i], j = i;
        while (j > 0 && cmp(ctx, v, idx[j - 1]) < 0) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
}

static int cmp_dbl(double a, double b)
{
    return (a > b) - (a < b);
}

/* ---- Algorithm 5 --------------------------------------------------------------- */

static int agent_ceiling(const ckpt_count_req_t *r)
{
    int hi = r->mode == CKPT_SHMR ? r->num_nodes : r->num_processes;
    return imin(hi, or_default(r->max_agents_app, CKPT_DEFAULT_MAX_AGENTS_APP));
}

static int clamp_agents(int n, const ckpt_count_req_t *r)
{
    return imax(1, imin(n, agent_ceiling(r)));
}

/* The seed's MA-RA remapping assumes the first mapping splits the resources evenly
 * (7.2.1): the largest count <= n that divides them. */
static int even_divisor(int resources, int n)
{
    while (n > 1 && resources % n)
        n--;
    return n;
}

/* +1 more agents, -1 fewer, 0 leave it. The pseudocode compares only the two times,
 * which after a decrease that helped would grow the count again; the prose keeps a
 * direction ("an increase that made it slower is followed by a decrease"), so a
 * change that helped is repeated and one that hurt is reversed. The first change is
 * an increase. */
static int probe_direction(const ckpt_app_t *app, const ckpt_count_req_t *r)
{
    if (r->t_sync < 0)
        return 0;
    if (!app->has_t_sync)
        return +1;
    if (fabs(r->t_sync - app->old_t_sync) <= r->tolerance * app->old_t_sync)
        return 0;
    int dir = app->last_dir ? app->last_dir : +1;
    return r->t_sync < app->old_t_sync ? dir : -dir;
}

static int probe_count(const ckpt_app_t *app, const ckpt_count_req_t *r)
{
    int factor = or_default(r->factor, CKPT_DEFAULT_FACTOR);
    int n = app->num_agents, dir = probe_direction(app, r);
    if (dir > 0)
        n = n > agent_ceiling(r) / factor ? agent_ceiling(r) : n * factor;
    else if (dir < 0)
        n /= factor;
    return clamp_agents(n, r);
}

static int check_count_req(const ckpt_count_req_t *r, char *err, size_t errlen)
{
    if (r->num_nodes < 1 || r->num_processes < 1)
        return fail(err, errlen, -EINVAL, "agent count: %d nodes, %d processes make no sense",
                    r->num_nodes, r->num_processes);
    if (r->mode != CKPT_MR && r->mode != CKPT_SHMR)
        return fail(err, errlen, -EINVAL, "agent count: unknown mode %d", (int)r->mode);
    if (r->factor < 0 || r->factor == 1 || r->max_agents_app < 0 || !(r->tolerance >= 0))
        return fail(err, errlen, -EINVAL, "agent count: factor %d or max_agents_app %d makes no "
                    "sense", r->factor, r->max_agents_app);
    if (isnan(r->t_sync))
        return fail(err, errlen, -EINVAL, "agent count: t_sync is not a number");
    return 0;
}

int ckpt_agent_count(ckpt_app_t *app, const ckpt_count_req_t *req, int *num_agents, char *err,
                     size_t errlen)
{
    if (!app || !req || !num_agents)
        return fail(err, errlen, -EINVAL, "agent count: NULL argument");
    int rc = check_count_req(req, err, errlen);
    if (rc)
        return rc;
    int n;
    if (!app->exists) {
        int resources = req->mode == CKPT_SHMR ? req->num_nodes : req->num_processes;
        n = even_divisor(resources, clamp_agents(req->num_nodes, req));
        *app = (ckpt_app_t){.exists = true};
    } else if (!req->active) {
        /* A restart may come back on another size: the old count, within the new limits. */
        n = clamp_agents(app->num_agents, req);
    } else {
        n = probe_count(app, req);
        if (n != app->num_agents)
            app->last_dir = n > app->num_agents ? +1 : -1;
    }
    app->num_agents = n;
    if (req->t_sync >= 0) {
        app->old_t_sync = req->t_sync;
        app->has_t_sync = true;
    }
    *num_agents = n;
    return 0;
}

/* ---- Algorithm 7 --------------------------------------------------------------- */

int ckpt_malleable_count(ckpt_ma_t strategy, int cur_agents, int cur_res, int new_res,
                         int max_agents, int *num_agents, char *err, size_t errlen)
{
    if (!num_agents)
        return fail(err, errlen, -EINVAL, "malleable count: NULL argument");
    if (cur_agents < 1 || cur_res < cur_agents || new_res < 1 || max_agents < 0)
        return fail(err, errlen, -EINVAL, "malleable count: %d agents for %d -> %d resources "
                    "(at most %d agents) make no sense", cur_agents, cur_res, new_res, max_agents);
    int n;
    if (strategy == CKPT_MA_RA)
        n = cur_agents;
    else if (strategy == CKPT_MA_MA)
        n = (int)((long long)cur_agents * new_res / cur_res); /* 1:1 gives new_res */
    else
        return fail(err, errlen, -EINVAL, "malleable count: unknown strategy %d", (int)strategy);
    /* More agents than resources leaves some idle, which the seed forbids (7.2.1). */
    n = imin(n, imin(new_res, or_default(max_agents, CKPT_DEFAULT_MAX_AGENTS_APP)));
    *num_agents = imax(1, n);
    return 0;
}

int ckpt_remap(int n_res, int m, int *per_agent, int *owner, int *m_used, char *err,
               size_t errlen)
{
    if (!per_agent || !m_used)
        return fail(err, errlen, -EINVAL, "remap: NULL argument");
    if (n_res < 1 || m < 1)
        return fail(err, errlen, -EINVAL, "remap: %d resources onto %d agents", n_res, m);
    int used = imin(m, n_res), q = n_res / used, r = n_res % used, next = 0;
    for (int a = 0; a < m; a++) {
        /* The remainder goes one each to the first agents: round-robin from agent 1. */
        per_agent[a] = a < used ? q + (a < r) : 0;
        for (int k = 0; owner && k < per_agent[a]; k++)
            owner[next++] = a;
    }
    *m_used = used;
    return 0;
}

/* ---- Algorithm 6 --------------------------------------------------------------- */

typedef struct sel_ctx {
    const ckpt_node_t *nodes;
    ckpt_select_t select;
} sel_ctx_t;

/* Smaller is better: memory is the one metric where more is better. */
static double sel_key(const ckpt_node_t *n, ckpt_select_t s)
{
    switch (s) {
    case CKPT_SEL_MEMORY:
        return -n->avail_mem;
    case CKPT_SEL_BANDWIDTH:
        return n->traffic;
    case CKPT_SEL_FREQUENCY:
        return n->cp_ops;
    case CKPT_SEL_POWER:
        return n->power;
    }
    return 0;
}

static int cmp_select(const void *ctx, int a, int b)
{
    const sel_ctx_t *c = ctx;
    return cmp_dbl(sel_key(&c->nodes[a], c->select), sel_key(&c->nodes[b], c->select));
}

static bool node_sane(const ckpt_node_t *n)
{
    return n->total_mem > 0 && n->avail_mem >= 0 && n->avail_mem <= n->total_mem &&
           !isnan(n->depletion) && n->traffic >= 0 && n->bw_avail >= 0 && n->cp_ops >= 0 &&
           n->power >= 0 && n->agents >= 0;
}

static int check_nodes(const ckpt_node_t *nodes, int nnodes, int min_nodes, char *err,
                       size_t errlen)
{
    if (!nodes || nnodes < min_nodes)
        return fail(err, errlen, -EINVAL, "need at least %d checkpoint node(s), got %d", min_nodes,
                    nodes ? nnodes : 0);
    for (int i = 0; i < nnodes; i++)
        if (!node_sane(&nodes[i]))
            return fail(err, errlen, -EINVAL, "checkpoint node %d: metrics make no sense", i);
    return 0;
}

int ckpt_candidates(const ckpt_node_t *nodes, int nnodes, ckpt_select_t select, int count,
                    int max_agents_node, int *cand, int *ncand, char *err, size_t errlen)
{
    int rc = check_nodes(nodes, nnodes, 1, err, errlen);
    if (rc)
        return rc;
    if (!cand || !ncand || count < 0 || max_agents_node < 0 || (unsigned)select > CKPT_SEL_POWER)
        return fail(err, errlen, -EINVAL, "candidates: bad arguments");
    int cap = or_default(max_agents_node, CKPT_DEFAULT_MAX_AGENTS_NODE);
    int *idx = malloc((size_t)nnodes * sizeof *idx), n = 0;
    if (!idx)
        return fail(err, errlen, -ENOMEM, "candidates: out of memory");
    for (int i = 0; i < nnodes; i++)
        if (nodes[i].agents < cap)
            idx[n++] = i;
    sort_idx(idx, n, &(sel_ctx_t){nodes, select}, cmp_select);
    n = imin(n, or_default(count, CKPT_DEFAULT_CANDIDATES));
    for (int i = 0; i < n; i++)
        cand[i] = idx[i];
    free(idx);
    *ncand = n;
    return 0;
}

typedef struct dist {
    const int *cand;
    int *room;   /* free agent slots per candidate */
    int ncand, nagents, block;
} dist_t;

/* A block's length on candidate c: the configured size, or an even split whose first
 * nagents % ncand candidates take one more. Never 0, so that a spill always moves on. */
static int block_len(const dist_t *d, int c)
{
    if (d->block)
        return d->block;
    return imax(1, d->nagents / d->ncand + (c < d->nagents % d->ncand));
}

/* Each scheme is a rule for how many agents a candidate takes before the next one's
 * turn; a full candidate passes its turn on. */
static int turn_len(const dist_t *d, ckpt_dist_t how, int c)
{
    switch (how) {
    case CKPT_DIST_ROUNDROBIN:
        return 1;
    case CKPT_DIST_FILL:
        return d->room[c];
    case CKPT_DIST_BLOCK:
        break;
    }
    return block_len(d, c);
}

static void distribute(dist_t *d, ckpt_dist_t how, int *agent_node)
{
    int c = 0, left = turn_len(d, how, 0);
    for (int j = 0; j < d->nagents; j++) {
        while (left == 0 || d->room[c] == 0) {
            c = (c + 1) % d->ncand;
            left = turn_len(d, how, c);
        }
        agent_node[j] = d->cand[c];
        d->room[c]--;
        left--;
    }
}

static int check_place_cfg(const ckpt_place_cfg_t *cfg, int nagents, char *err, size_t errlen)
{
    if (!cfg || nagents < 1)
        return fail(err, errlen, -EINVAL, "placement: no configuration or %d agents", nagents);
    if ((unsigned)cfg->dist > CKPT_DIST_FILL || cfg->candidate_count < 0 || cfg->block_size < 0)
        return fail(err, errlen, -EINVAL, "placement: bad distribution, candidate count or block "
                    "size");
    return 0;
}

int ckpt_place(const ckpt_node_t *nodes, int nnodes, int nagents, const ckpt_place_cfg_t *cfg,
               int *agent_node, char *err, size_t errlen)
{
    int rc = check_place_cfg(cfg, nagents, err, errlen);
    if (!rc)
        rc = check_nodes(nodes, nnodes, 1, err, errlen);
    if (rc || !agent_node)
        return rc ? rc : fail(err, errlen, -EINVAL, "placement: NULL argument");
    int *cand = malloc(2 * (size_t)nnodes * sizeof *cand), ncand = 0, room_sum = 0;
    if (!cand)
        return fail(err, errlen, -ENOMEM, "placement: out of memory");
    int cap = or_default(cfg->max_agents_node, CKPT_DEFAULT_MAX_AGENTS_NODE);
    rc = ckpt_candidates(nodes, nnodes, cfg->select, cfg->candidate_count, cap, cand, &ncand, err,
                         errlen);
    int *room = cand + nnodes;
    for (int c = 0; !rc && c < ncand; c++)
        room_sum += room[c] = cap - nodes[cand[c]].agents;
    if (!rc && room_sum < nagents)
        rc = fail(err, errlen, -ENOSPC, "placement: %d candidate node(s) have room for %d of %d "
                  "agents", ncand, room_sum, nagents);
    if (!rc)
        distribute(&(dist_t){cand, room, ncand, nagents, cfg->block_size}, cfg->dist, agent_node);
    free(cand);
    return rc;
}

/* ---- Algorithm 8 --------------------------------------------------------------- */

static double used_mem(const ckpt_node_t *n)
{
    return n->total_mem - n->avail_mem;
}

static double frac_or(double v, double def)
{
    return v ? v : def;
}

/* The first pass of the pseudocode: nodes over the lower mark are "flagged", the
 * others pool their free memory; a flagged node over the upper mark that fills fast
 * asks for a node, HIGH when the pool cannot take its whole memory (the seed's
 * conservative estimate), LOW when it can. A flagged node below that spends its
 * memory's worth of the pool. */
static bool memory_pass(const ckpt_node_t *nodes, int nnodes, const ckpt_scaler_cfg_t *cfg,
                        ckpt_scale_t *action, int *node)
{
    double lower = frac_or(cfg->lower, CKPT_DEFAULT_LOWER);
    double upper = frac_or(cfg->upper, CKPT_DEFAULT_UPPER), pool = 0;
    for (int i = 0; i < nnodes; i++)
        if (used_mem(&nodes[i]) <= lower * nodes[i].total_mem)
            pool += nodes[i].avail_mem;
    for (int i = 0; i < nnodes; i++) {
        const ckpt_node_t *n = &nodes[i];
        if (used_mem(n) <= lower * n->total_mem)
            continue;
        if (used_mem(n) > upper * n->total_mem && n->depletion > cfg->depletion_min) {
            *action = pool < n->total_mem ? CKPT_SCALE_HIGH : CKPT_SCALE_LOW;
            *node = i;
            return true;
        }
        pool -= n->total_mem;
    }
    return false;
}

/* The pseudocode's test (low available bandwidth), not the prose's "exceeds". */
static bool any_slow(const ckpt_node_t *nodes, int nnodes, const ckpt_scaler_cfg_t *cfg)
{
    for (int i = 0; i < nnodes; i++)
        if (nodes[i].bw_avail < cfg->bw_min && nodes[i].cp_ops > cfg->cp_max)
            return true;
    return false;
}

/* Not urgent, so asked in two passes: a Query first, a LOW request the pass after if
 * the resource manager said it has an idle node. When no node is slow any more the
 * pending query is dropped, so that a later slow spell asks afresh rather than
 * acting on an answer to an old question. */
static ckpt_scale_t bandwidth_pass(bool slow, ckpt_scaler_t *st)
{
    if (!slow) {
        st->pending_query = false;
        return CKPT_SCALE_NONE;
    }
    if (st->pending_query && st->idle_answer >= 1) {
        st->pending_query = false;
        return CKPT_SCALE_LOW;
    }
    st->pending_query = true;
    st->idle_answer = 0;
    return CKPT_SCALE_QUERY;
}

static int check_scaler_cfg(const ckpt_scaler_cfg_t *c, char *err, size_t errlen)
{
    double lo = frac_or(c->lower, CKPT_DEFAULT_LOWER), hi = frac_or(c->upper, CKPT_DEFAULT_UPPER);
    if (!(lo > 0 && lo <= hi && hi <= 1))
        return fail(err, errlen, -EINVAL, "scaler: thresholds %g, %g must be 0 < lower <= upper "
                    "<= 1", lo, hi);
    if (isnan(c->depletion_min) || isnan(c->bw_min) || isnan(c->cp_max))
        return fail(err, errlen, -EINVAL, "scaler: a threshold is not a number");
    return 0;
}

int ckpt_scaler_pass(const ckpt_node_t *nodes, int nnodes, const ckpt_scaler_cfg_t *cfg,
                     ckpt_scaler_t *st, ckpt_scale_t *action, int *node, char *err,
                     size_t errlen)
{
    if (!cfg || !st || !action || !node)
        return fail(err, errlen, -EINVAL, "scaler: NULL argument");
    int rc = check_nodes(nodes, nnodes, 1, err, errlen);
    if (!rc)
        rc = check_scaler_cfg(cfg, err, errlen);
    if (rc)
        return rc;
    *node = -1;
    if (!memory_pass(nodes, nnodes, cfg, action, node))
        *action = bandwidth_pass(any_slow(nodes, nnodes, cfg), st);
    return 0;
}

/* ---- Algorithm 9 --------------------------------------------------------------- */

/* Most free memory first (least checkpoint data to flush), then fewest agents
 * (fastest to move). */
static int cmp_removal(const void *ctx, int a, int b)
{
    const ckpt_node_t *n = ctx;
    int c = cmp_dbl(n[b].avail_mem, n[a].avail_mem);
    return c ? c : n[a].agents - n[b].agents;
}

int ckpt_removal(const ckpt_node_t *nodes, int nnodes, int k, int *out, int *nout, char *err,
                 size_t errlen)
{
    int rc = check_nodes(nodes, nnodes, 1, err, errlen);
    if (rc)
        return rc;
    if (!out || !nout || k < 0)
        return fail(err, errlen, -EINVAL, "removal: bad arguments (k %d)", k);
    int *idx = malloc((size_t)nnodes * sizeof *idx);
    if (!idx)
        return fail(err, errlen, -ENOMEM, "removal: out of memory");
    for (int i = 0; i < nnodes; i++)
        idx[i] = i;
    sort_idx(idx, nnodes, nodes, cmp_removal);
    *nout = imin(k, nnodes - 1);
    for (int i = 0; i < *nout; i++)
        out[i] = idx[i];
    free(idx);
    return 0;
}

/* ---- Algorithms 10 and 11 ------------------------------------------------------ */

static bool shrinkable(const ckpt_mjob_t *j)
{
    return !j->final_phase && j->nodes > j->min_nodes;
}

/* Worst performers first: the highest MTCT, as the prose and 4.1 say (the
 * pseudocode's "lowest" would shrink the most efficient job). */
static int cmp_mtct(const void *ctx, int a, int b)
{
    const ckpt_mjob_t *j = ctx;
    return cmp_dbl(j[b].mtct, j[a].mtct);
}

static int shrink_jobs(const ckpt_sched_in_t *in, int want, int *shrink)
{
    int *idx = malloc((size_t)imax(1, in->njobs) * sizeof *idx), n = 0, got = 0;
    if (!idx)
        return -ENOMEM;
    for (int i = 0; i < in->njobs; i++)
        if (shrinkable(&in->jobs[i]))
            idx[n++] = i;
    sort_idx(idx, n, in->jobs, cmp_mtct);
    for (int i = 0; i < n && got < want; i++) {
        const ckpt_mjob_t *j = &in->jobs[idx[i]];
        shrink[idx[i]] = imin(want - got, j->nodes - j->min_nodes);
        got += shrink[idx[i]];
    }
    free(idx);
    return got;
}

/* Favour-app: checkpoint nodes that are nearly empty, unless the service is short of
 * memory itself; it keeps one node whatever happens. */
static int reclaimable(const ckpt_sched_in_t *in)
{
    int n = 0;
    for (int i = 0; i < in->n_ic; i++)
        if (in->ic_nodes[i].avail_mem > CKPT_RECLAIM_FREE * in->ic_nodes[i].total_mem)
            n++;
    return imin(n, imax(0, in->n_ic - 1));
}

static int check_sched_in(const ckpt_sched_in_t *in, char *err, size_t errlen)
{
    if (in->requested < 0 || in->idle < 0 || in->njobs < 0 || (in->njobs && !in->jobs) ||
        (unsigned)in->prio > CKPT_PRIO_HIGH || (unsigned)in->favor > CKPT_FAVOR_APP)
        return fail(err, errlen, -EINVAL, "scheduler: bad request or counts");
    for (int i = 0; i < in->njobs; i++) {
        const ckpt_mjob_t *j = &in->jobs[i];
        if (j->min_nodes < 1 || j->nodes < j->min_nodes || !(j->mtct >= 0))
            return fail(err, errlen, -EINVAL, "scheduler: job %lld: %d nodes (min %d), MTCT %g "
                        "make no sense", (long long)j->id, j->nodes, j->min_nodes, j->mtct);
    }
    if (in->n_ic > 0)
        return check_nodes(in->ic_nodes, in->n_ic, 1, err, errlen);
    return in->n_ic < 0 ? fail(err, errlen, -EINVAL, "scheduler: %d checkpoint nodes", in->n_ic)
                        : 0;
}

/* Favour-iCheck: idle nodes first; a HIGH shortfall comes out of running jobs, a
 * LOW one waits. Favour-app: LOW is dropped; HIGH gets idle nodes only, the rest is
 * dropped too (the scheduler keeps no memory of it). */
static int serve_request(const ckpt_sched_in_t *in, ckpt_sched_out_t *out)
{
    if (in->favor == CKPT_FAVOR_APP && in->prio == CKPT_PRIO_LOW) {
        out->unmet = in->requested;
        return 0;
    }
    out->from_idle = imin(in->requested, in->idle);
    int rest = in->requested - out->from_idle;
    if (in->favor == CKPT_FAVOR_ICHECK && in->prio == CKPT_PRIO_HIGH && rest > 0) {
        out->from_jobs = shrink_jobs(in, rest, out->shrink);
        if (out->from_jobs < 0)
            return out->from_jobs;
    }
    out->unmet = rest - out->from_jobs;
    return 0;
}

int ckpt_sched_decide(const ckpt_sched_in_t *in, ckpt_sched_out_t *out, char *err,
                      size_t errlen)
{
    if (!in || !out || (in->njobs > 0 && !out->shrink))
        return fail(err, errlen, -EINVAL, "scheduler: NULL argument");
    int rc = check_sched_in(in, err, errlen);
    if (rc)
        return rc;
    int *shrink = out->shrink;
    *out = (ckpt_sched_out_t){.shrink = shrink};
    for (int i = 0; i < in->njobs; i++)
        shrink[i] = 0;
    if (in->adapting) {
        /* Sizes are moving: the whole decision waits a pass, as in both algorithms. */
        out->unmet = in->prio == CKPT_PRIO_NONE ? 0 : in->requested;
        return 0;
    }
    if (in->favor == CKPT_FAVOR_APP && in->prio != CKPT_PRIO_HIGH)
        out->reclaim = reclaimable(in);
    if (in->prio == CKPT_PRIO_NONE)
        return 0;
    rc = serve_request(in, out);
    return rc ? fail(err, errlen, rc, "scheduler: out of memory") : 0;
}
