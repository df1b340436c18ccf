/* ckptsvc: the checkpoint controller (seed 002's iCheck controller; docs/checkpointing.md).
 *
 * A job submitted with --checkpoint-agents gets agents on the checkpoint nodes
 * (CheckpointNodes in ductile.conf) before its script starts: the controller chooses how
 * many (Algorithm 5, a rigid application at its start) and where (Algorithm 6: the
 * nodes with the fewest agents, round-robin), makes a key for the job and asks each
 * node's daemon, the manager, to start `ductile-agent` as the job's user with it. The
 * launch waits for their answers (AgentStartTimeout at most); the job's environment
 * then names the agents that answered (DUCTILE_CKPT_AGENTS) and holds the key in a file
 * (DUCTILE_CKPT_KEY_FILE), and libductile commits through them. An agent that did not
 * start is left out: the library writes that part to the files, as when an agent fails
 * later. The agents outlive a requeue (the next run restores from their memory) and are
 * stopped, after they flush, when the job ends for good. What a job has is in the
 * database with the job. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld.h"
#include "ckpt.h"
#include "proto.h"
#include "rng.h"

#define AGENT_START_TIMEOUT 15.0 /* seconds a launch waits for its agents (the managers
                                   * give up on an agent after 10) */
#define AGENTS_MAX 16             /* per job */
#define GEN_LEN 8                 /* the key's first digits: this asking's tag */
#define SLOT_MAX 1023             /* an agent's slot on its node (the managers' bound) */
#define RETIRE_WAIT 300.0         /* seconds agents that left a job at a shrink wait for
                                   * its application to take the new list */

/* A checkpoint node that can be given agents now (room aside). */
static bool usable(const node_t *n)
{
    return (n->ckpt || n->lent) && !n->reclaim && n->state == NS_UP && n->conn && !n->drain;
}

/* Checkpoint nodes up now, full or not. */
static bool ckptsvc_up(const ctld_t *c)
{
    for (int i = 0; i < c->nnodes; i++)
        if (usable(&c->nodes[i]))
            return true;
    return false;
}

int ckptsvc_nodes(const ctld_t *c)
{
    int k = 0;
    for (int i = 0; i < c->nnodes; i++)
        k += c->nodes[i].ckpt;
    return k;
}

/* fn(node index) for each node the job's agents are (were) on, by its ck_where. */
static void each_where(const job_t *j, void (*fn)(ctld_t *, int, void *), ctld_t *c, void *arg)
{
    for (int r = 0; r < j->ck_nretire; r++) /* until they are stopped */
        fn(c, j->ck_rnode[r], arg);
    if (!j->ck_where)
        return;
    char *w = strdup(j->ck_where), *save = NULL;
    for (char *t = w ? strtok_r(w, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
        int i = config_node_index(&c->cfg, t);
        if (i >= 0)
            fn(c, i, arg);
    }
    free(w);
}

/* ---- the job's agents as aligned lists: address, node, slot ---------------------- */

typedef struct roster {
    int n;
    char *addr[AGENTS_MAX], *node[AGENTS_MAX];
    int slot[AGENTS_MAX];
} roster_t;

static int split(const char *s, char **out, int max)
{
    int n = 0;
    char *w = s ? strdup(s) : NULL, *save = NULL;
    for (char *t = w ? strtok_r(w, ",", &save) : NULL; t && n < max; t = strtok_r(NULL, ",", &save))
        out[n++] = strdup(t);
    free(w);
    return n;
}

static void roster_free(roster_t *r)
{
    for (int a = 0; a < r->n; a++) {
        free(r->addr[a]);
        free(r->node[a]);
    }
    r->n = 0;
}

/* The agents the job has (settled); false if its record does not hold together. */
static bool roster_load(const job_t *j, roster_t *r)
{
    memset(r, 0, sizeof(*r));
    char *sl[AGENTS_MAX] = {0};
    int na = split(j->ck_agents, r->addr, AGENTS_MAX);
    int nw = split(j->ck_where, r->node, AGENTS_MAX);
    int ns = split(j->ck_slots, sl, AGENTS_MAX);
    r->n = na > nw ? na : nw;
    for (int a = 0; a < AGENTS_MAX; a++) {
        r->slot[a] = a < ns && sl[a] ? atoi(sl[a]) : a; /* an older record: 0, 1, ... */
        free(sl[a]);
    }
    bool ok = na == nw && (ns == 0 || ns == na);
    for (int a = 0; a < r->n; a++)
        ok = ok && r->addr[a] && r->node[a];
    if (!ok)
        roster_free(r);
    return ok;
}

static void roster_store(job_t *j, const roster_t *r)
{
    size_t la = 1, lw = 1;
    for (int a = 0; a < r->n; a++) {
        la += strlen(r->addr[a]) + 1;
        lw += strlen(r->node[a]) + 1;
    }
    char *sa = calloc(la, 1), *sw = calloc(lw, 1), *ss = calloc((size_t)r->n * 12 + 1, 1);
    if (!sa || !sw || !ss) {
        free(sa);
        free(sw);
        free(ss);
        return;
    }
    for (int a = 0; a < r->n; a++) {
        snprintf(sa + strlen(sa), la - strlen(sa), "%s%s", a ? "," : "", r->addr[a]);
        snprintf(sw + strlen(sw), lw - strlen(sw), "%s%s", a ? "," : "", r->node[a]);
        snprintf(ss + strlen(ss), (size_t)r->n * 12 + 1 - strlen(ss), "%s%d", a ? "," : "",
                 r->slot[a]);
    }
    free(j->ck_agents);
    free(j->ck_where);
    free(j->ck_slots);
    j->ck_agents = sa;
    j->ck_where = sw;
    j->ck_slots = ss;
}

/* The first of k slots none of the job's agents has (slots name their directories). */
static int free_base(const roster_t *r, int k)
{
    for (int base = 0;; base++) {
        bool clash = false;
        for (int a = 0; a < r->n && !clash; a++)
            clash = r->slot[a] >= base && r->slot[a] < base + k;
        if (!clash)
            return base;
    }
}

static void add_one(ctld_t *c, int i, void *arg)
{
    (void)c;
    ((int *)arg)[i]++;
}

typedef struct counting {
    ctld_t *c;
    int *per;
} counting_t;

static void count_job(int64_t id, void *val, void *arg)
{
    (void)id;
    counting_t *x = arg;
    const job_t *j = val;
    each_where(j, add_one, x->c, x->per);
    for (int a = 0; j->ck_more && j->ck_addr && a < j->ck_n; a++)
        x->per[j->ck_node[a]]++; /* asked for at a resize: not in its list yet */
}

/* What an agent may hold on node n, MiB: CheckpointAgentMemory, else a quarter of the
 * node's memory (CheckpointNodeMemory, else its own); a node takes as many agents as
 * their budgets fit in its memory. */
#define MIB 1048576.0

static long agent_budget(const ctld_t *c, const node_t *n)
{
    long q = ckptmeas_node_mb(c, n) / 4;
    return c->cfg.agent_memory > 0 ? c->cfg.agent_memory : q > 0 ? q : 1;
}

/* How many agents node n takes in all. */
static int node_takes(const ctld_t *c, const node_t *n)
{
    return (int)(ckptmeas_node_mb(c, n) / agent_budget(c, n));
}

/* Node n as Algorithm 6 and 8 see it, with `agents` agents: its manager's last
 * measurements (ckptmeas.c; none: no traffic, no commits, its memory all free), its
 * power reading (none: IdlePower). */
static ckpt_node_t measured(const ctld_t *c, const node_t *n, int agents)
{
    bool fresh = ckptmeas_fresh(c, n);
    double total = (double)ckptmeas_node_mb(c, n) * MIB, held = fresh ? n->ck_held : 0;
    return (ckpt_node_t){.total_mem = total, .avail_mem = held < total ? total - held : 0,
                         .depletion = fresh ? n->ck_depletion : 0,
                         .traffic = fresh ? n->ck_traffic : 0, .cp_ops = fresh ? n->ck_ops : 0,
                         .agents = agents,
                         .power = n->power_at > 0 ? n->power_w : c->cfg.idle_power};
}

/* The checkpoint nodes up now with room for an agent, what Algorithm 6 looks at on
 * each, and the most agents any of them takes (*cap, for ckpt_place: a node that takes
 * fewer counts the difference as agents it has). Returns how many nodes; *room: how
 * many agents they take in all. */
static int up_nodes(ctld_t *c, int *idx, ckpt_node_t *cn, int *cap, int *room)
{
    int *per = calloc((size_t)c->nnodes, sizeof(int));
    *cap = *room = 0;
    if (!per)
        return 0;
    counting_t x = {c, per};
    idmap_foreach(c->jobs, count_job, &x);
    int k = 0;
    for (int i = 0; i < c->nnodes; i++) {
        const node_t *n = &c->nodes[i];
        int takes = node_takes(c, n);
        if (!usable(n) || takes <= per[i])
            continue;
        cn[k] = measured(c, n, per[i]);
        /* a node yet to report what its agents hold counts each as holding its budget;
         * the agents' budgets stay the bound of how many it takes either way */
        if (!ckptmeas_fresh(c, n))
            cn[k].avail_mem = (takes - per[i]) * (double)agent_budget(c, n) * MIB;
        idx[k++] = i;
        *room += takes - per[i];
        if (takes > *cap)
            *cap = takes;
    }
    for (int a = 0; a < k; a++)
        cn[a].agents += *cap - node_takes(c, &c->nodes[idx[a]]);
    free(per);
    return k;
}

typedef struct charging {
    ctld_t *c;
    const int *per; /* agents on each node */
    double now;
    job_t *j;       /* the job being charged */
} charging_t;

static void charge_one(ctld_t *c, int i, void *arg)
{
    (void)c;
    const charging_t *x = arg;
    if (x->per[i] > 0)
        x->j->ck_node_s += (x->now - x->j->ck_acct_at) / x->per[i];
}

static void charge_job(int64_t id, void *val, void *arg)
{
    (void)id;
    charging_t *x = arg;
    x->j = val;
    if (x->j->ck_acct_at <= 0 || x->now <= x->j->ck_acct_at)
        return;
    each_where(x->j, charge_one, x->c, x);
    x->j->ck_acct_at = x->now;
}

void ckptsvc_account(ctld_t *c)
{
    int *per = calloc((size_t)c->nnodes, sizeof(int));
    if (!per)
        return;
    counting_t cnt = {c, per};
    idmap_foreach(c->jobs, count_job, &cnt);
    charging_t x = {c, per, ctld_now(), NULL};
    idmap_foreach(c->jobs, charge_job, &x);
    free(per);
}

static json_t *stop_msg(int64_t job, const char *gen, int slot)
{
    json_t *m = json_pack("{s:s,s:I}", "type", "agent_stop", "job", (json_int_t)job);
    if (m && gen) /* only the agents of that asking (and slot): else all of the job's */
        json_object_set_new(m, "gen", json_stringn(gen, GEN_LEN));
    if (m && slot >= 0)
        json_object_set_new(m, "slot", json_integer(slot));
    return m;
}

/* Every agent of the job, of every asking, on the nodes it has (had) them on; a node
 * away stops them when it registers again (ckptsvc_reconcile). */
static void mark(ctld_t *c, int i, void *arg)
{
    (void)c;
    ((bool *)arg)[i] = true;
}

static void stop_all(ctld_t *c, job_t *j)
{
    bool *on = calloc((size_t)c->nnodes, sizeof(bool));
    if (!on)
        return;
    each_where(j, mark, c, on);
    for (int i = 0; i < c->nnodes; i++)
        if (on[i])
            nodes_send(c, i, stop_msg(j->id, NULL, -1));
    free(on);
}

static void waiting_free(job_t *j)
{
    for (int a = 0; j->ck_addr && a < j->ck_n; a++)
        free(j->ck_addr[a]);
    free(j->ck_addr);
    free(j->ck_node);
    free(j->ck_done);
    j->ck_addr = NULL;
    j->ck_node = NULL;
    j->ck_done = NULL;
    j->ck_n = j->ck_waiting = 0;
}

/* CheckpointLending = idle (seed 002's Algorithm 11, "favour the application": the
 * service's request served from idle nodes only): lends idle nodes for jobs to the
 * checkpoint service until they take short_by more agents, saying who asked and why;
 * by_scaler: Algorithm 8 asked before any agent needs them. Returns how many. */
static int lend(ctld_t *c, int short_by, const char *who, const char *why, bool by_scaler)
{
    int lent = 0;
    /* never a node the first waiting job needs to start (it would be taken back) */
    int spare = sched_free_nodes(c->sched) - sched_pending_need(c->sched);
    for (int i = 0; c->cfg.ckpt_lending > 0 && i < c->nnodes && short_by > 0 && spare > 0; i++) {
        node_t *n = &c->nodes[i];
        if (!node_usable(n) || sched_node_busy(c->sched, i) || node_takes(c, n) < 1)
            continue;
        spare--;
        n->lent = true;
        n->scaler_lent = by_scaler;
        sched_set_node_available(c->sched, i, false); /* no job starts there meanwhile */
        short_by -= node_takes(c, n);
        lent++;
        fprintf(stderr, "ductiled: %snode %s lent to the checkpoint service (%s)\n", who,
                n->name, why);
    }
    return lent;
}

/* For job j's agents, which have no room on the service's nodes. */
static int lend_for(ctld_t *c, const job_t *j, int short_by)
{
    char who[32];
    snprintf(who, sizeof(who), "job %lld: ", (long long)j->id);
    return lend(c, short_by, who, "the checkpoint nodes are full", false);
}

typedef struct victims {
    ctld_t *c;
    const job_t *for_job;
    ckpt_mjob_t *m;
    int n;
} victims_t;

static void add_victim(int64_t id, void *val, void *arg)
{
    victims_t *v = arg;
    const job_t *j = val;
    sched_jobinfo_t info;
    if (j == v->for_job || j->type != SCHED_MALLEABLE || j->state != JS_RUNNING ||
        j->nalloc <= j->min_nodes || sched_job_info(v->c->sched, id, &info) < 0 || info.request)
        return;
    v->m[v->n++] = (ckpt_mjob_t){.id = id, .nodes = j->nalloc, .min_nodes = j->min_nodes,
                                 .mtct = info.mtct > 0 ? info.mtct : 0};
}

/* CheckpointLending = shrink, no idle node left (seed 002's Algorithm 10, favouring the
 * service: a HIGH request shrinks the malleable job that uses its nodes worst, by MTCT):
 * asks the engine to shrink running malleable jobs by the nodes short_by agents need.
 * The nodes they give up are lent once the shrinks commit (ckptsvc_resized). */
/* Agents a node for jobs takes (what a node given up brings the service). */
static int job_node_takes(const ctld_t *c)
{
    int per = 0;
    for (int i = 0; i < c->nnodes && per < 1; i++)
        per = c->nodes[i].ckpt ? 0 : node_takes(c, &c->nodes[i]);
    return per;
}

/* A HIGH request served by shrinking (Algorithm 10): running malleable jobs other than
 * for_job (NULL: any) are asked to give up `nodes` nodes in all, the one using MPI worst
 * first; the log names each, after `who` and with `why`. Returns how many were asked. */
static int shrink_for(ctld_t *c, const job_t *for_job, int nodes, const char *who,
                      const char *why)
{
    victims_t v = {c, for_job, calloc((size_t)c->njobs_live + 1, sizeof(ckpt_mjob_t)), 0};
    int *take = v.m ? calloc((size_t)c->njobs_live + 1, sizeof(int)) : NULL, asked = 0;
    if (take)
        idmap_foreach(c->jobs, add_victim, &v);
    ckpt_sched_in_t in = {.favor = CKPT_FAVOR_ICHECK, .prio = CKPT_PRIO_HIGH,
                          .requested = nodes, .jobs = v.m, .njobs = v.n};
    ckpt_sched_out_t out = {.shrink = take};
    char err[200];
    if (take && v.n > 0 && ckpt_sched_decide(&in, &out, err, sizeof(err)) == 0)
        for (int k = 0; k < v.n; k++) {
            job_t *x = take[k] > 0 ? idmap_get(c->jobs, v.m[k].id) : NULL;
            if (!x || sched_request_resize(c->sched, x->id, x->nalloc - take[k], true, err,
                                           sizeof(err)) < 0)
                continue;
            asked++;
            fprintf(stderr, "ductiled: %sjob %lld asked to give up %d node%s %s\n", who,
                    (long long)x->id, take[k], take[k] > 1 ? "s" : "", why);
            jobs_want_schedule(c);
        }
    free(take);
    free(v.m);
    return asked;
}

static void take_from_jobs(ctld_t *c, job_t *j, int short_by)
{
    int per = job_node_takes(c);
    if (c->cfg.ckpt_lending < 2 || per < 1 || j->ck_short > 0)
        return;
    char who[32];
    snprintf(who, sizeof(who), "job %lld: ", (long long)j->id);
    if (shrink_for(c, j, (short_by + per - 1) / per, who,
                   "for its checkpoint agents (the checkpoint nodes are full)") > 0)
        j->ck_short = short_by;
}

/* ---- Algorithm 8 on the cluster --------------------------------------------------- */

/* A measured node of the service holds more than CheckpointScalerLower of its memory. */
static bool above_lower(const ctld_t *c)
{
    for (int i = 0; i < c->nnodes; i++) {
        const node_t *n = &c->nodes[i];
        if (usable(n) && ckptmeas_fresh(c, n) &&
            n->ck_held > c->cfg.scaler_lower / 100.0 * (double)ckptmeas_node_mb(c, n) * MIB)
            return true;
    }
    return false;
}

/* Seed 002's Algorithm 8 (the proactive scaler), with CheckpointLending: asks for a node
 * before the service's nodes are full, when one holds more than CheckpointScalerUpper of
 * its memory and its agents still take more. The request is served as a job's agents'
 * would be from idle nodes (Algorithm 11: LOW and HIGH alike), and with none idle a
 * HIGH one, with CheckpointLending = shrink, has a malleable job give up a node
 * (Algorithm 10), lent once given up. The node stays lent, empty, while a node of the
 * service is above CheckpointScalerLower; no new request is made while it waits for
 * agents or for the shrink (at most twice ResizeTimeout). The
 * half of the algorithm driven by bandwidth is not wired: the managers do not know
 * their links' capacity, so no node counts as short of bandwidth. It runs at each
 * measurement (a heartbeat of the service's nodes): the memory's depletion is the
 * change between two of them. */
void ckptsvc_scale(ctld_t *c)
{
    int *per = calloc((size_t)c->nnodes, sizeof(int));
    if (!per)
        return;
    idmap_foreach(c->jobs, count_job, &(counting_t){c, per});
    /* a node a job was asked to give up for an earlier request, not given up yet */
    bool waiting = c->ck_scaler_shrink > ctld_mono();
    for (int i = 0; i < c->nnodes; i++) {
        node_t *n = &c->nodes[i];
        if (n->scaler_lent && per[i] > 0)
            n->scaler_lent = false; /* in use: given back once empty, as any lent node */
        waiting = waiting || (n->scaler_lent && usable(n)); /* not taken back, nor down */
    }
    if (c->cfg.ckpt_lending == 0 || waiting) {
        free(per);
        return;
    }
    int *idx = calloc((size_t)c->nnodes, sizeof(int)), nn = 0;
    ckpt_node_t *cn = calloc((size_t)c->nnodes, sizeof(ckpt_node_t));
    for (int i = 0; idx && cn && i < c->nnodes; i++)
        if (usable(&c->nodes[i]) && ckptmeas_fresh(c, &c->nodes[i])) {
            cn[nn] = measured(c, &c->nodes[i], per[i]);
            idx[nn++] = i;
        }
    ckpt_scaler_cfg_t sc = {.lower = c->cfg.scaler_lower / 100.0,
                            .upper = c->cfg.scaler_upper / 100.0};
    ckpt_scaler_t st = {0}; /* its bandwidth half only: unused (above) */
    ckpt_scale_t act = CKPT_SCALE_NONE;
    int k = -1;
    char err[200];
    if (nn > 0 && ckpt_scaler_pass(cn, nn, &sc, &st, &act, &k, err, sizeof(err)) < 0)
        fprintf(stderr, "ductiled: the checkpoint scaler: %s\n", err);
    else if ((act == CKPT_SCALE_HIGH || act == CKPT_SCALE_LOW) && k >= 0) {
        const node_t *n = &c->nodes[idx[k]];
        char why[256];
        snprintf(why, sizeof(why), "Algorithm 8: %s's agents hold %.0f%% of its %ld MiB, above "
                 "%d%%, %.1f MiB/s more: %s priority", n->name,
                 100.0 * n->ck_held / cn[k].total_mem, ckptmeas_node_mb(c, n), c->cfg.scaler_upper,
                 n->ck_depletion / MIB, act == CKPT_SCALE_HIGH ? "HIGH" : "LOW");
        if (lend(c, 1, "", why, true) == 0 && act == CKPT_SCALE_HIGH &&
            c->cfg.ckpt_lending == 2 && job_node_takes(c) > 0) {
            char for_[300];
            snprintf(for_, sizeof(for_), "for the checkpoint service (%s)", why);
            if (shrink_for(c, NULL, 1, "", for_) > 0) /* lent once given up: ckptsvc_resized */
                c->ck_scaler_shrink = ctld_mono() + 2 * c->cfg.resize_timeout;
        }
    }
    free(idx);
    free(cn);
    free(per);
}

/* Lent nodes no agent is on any more (nor asked for) go back to jobs. */
static void give_back(ctld_t *c)
{
    int *per = NULL;
    for (int i = 0; i < c->nnodes; i++) {
        node_t *n = &c->nodes[i];
        if (!n->lent)
            continue;
        if (!per) {
            if (!(per = calloc((size_t)c->nnodes, sizeof(int))))
                return;
            counting_t x = {c, per};
            idmap_foreach(c->jobs, count_job, &x);
        }
        if (per[i] > 0)
            continue;
        if (n->scaler_lent && !n->reclaim && c->cfg.ckpt_lending > 0 && above_lower(c))
            continue; /* the room Algorithm 8 asked for, before any agent needs it */
        n->lent = n->reclaim = n->scaler_lent = false;
        sched_set_node_available(c->sched, i, node_usable(n));
        fprintf(stderr, "ductiled: node %s given back to jobs (no checkpoint agent left on it)\n",
                n->name);
        jobs_want_schedule(c);
    }
    free(per);
}

static void lent_one(ctld_t *c, int i, void *arg)
{
    (void)arg;
    c->nodes[i].lent = !c->nodes[i].ckpt;
}

static void restore_lent(int64_t id, void *val, void *arg)
{
    (void)id;
    job_t *j = val;
    if (j->ck_want && j->state < JS_COMPLETED)
        each_where(j, lent_one, arg, NULL);
    if (j->ck_nretire) /* agents that left it: its application may not have the list yet */
        j->ck_retire_at = ctld_mono() + RETIRE_WAIT;
}

void ckptsvc_after_restore(ctld_t *c) { idmap_foreach(c->jobs, restore_lent, c); }

/* Asks the managers for the job's agents (want 0: as many as Algorithm 5 gives at its
 * start; more: want agents beside those it has); false when there is nothing to wait
 * for. */
/* Algorithm 6 as configured (CheckpointPlacement, CheckpointDistribution,
 * CheckpointCandidates; ductile reconfigure changes them) over nn nodes. */
static ckpt_place_cfg_t place_cfg(const ctld_t *c, int nn, int cap)
{
    int want = c->cfg.ckpt_candidates;
    return (ckpt_place_cfg_t){
        .select = c->cfg.ckpt_select == CONFIG_CKPT_SEL_POWER       ? CKPT_SEL_POWER
                  : c->cfg.ckpt_select == CONFIG_CKPT_SEL_BANDWIDTH ? CKPT_SEL_BANDWIDTH
                  : c->cfg.ckpt_select == CONFIG_CKPT_SEL_FREQUENCY ? CKPT_SEL_FREQUENCY
                                                                    : CKPT_SEL_MEMORY,
        .dist = c->cfg.ckpt_dist == CONFIG_CKPT_DIST_BLOCK  ? CKPT_DIST_BLOCK
                : c->cfg.ckpt_dist == CONFIG_CKPT_DIST_FILL ? CKPT_DIST_FILL
                                                            : CKPT_DIST_ROUNDROBIN,
        .candidate_count = want > 0 && want < nn ? want : nn,
        .max_agents_node = cap};
}

/* How many agents the nodes Algorithm 6 picks among take. */
static int candidates_room(const ckpt_node_t *cn, int nn, const ckpt_place_cfg_t *pc)
{
    int *cand = calloc((size_t)nn, sizeof(int)), ncand = 0, room = 0;
    char err[160];
    if (cand && ckpt_candidates(cn, nn, pc->select, pc->candidate_count, pc->max_agents_node,
                                cand, &ncand, err, sizeof(err)) == 0)
        for (int k = 0; k < ncand; k++)
            room += pc->max_agents_node - cn[cand[k]].agents;
    free(cand);
    return room;
}

static bool ask(ctld_t *c, job_t *j, int want, bool more)
{
    /* the job's key, even if no agent has room now: agents may join it later */
    if (!more && rng_secret_hex(j->ck_key, sizeof(j->ck_key), 32) < 0) {
        fprintf(stderr, "ductiled: job %lld: cannot make a key for its checkpoint agents: it "
                "checkpoints to its files\n", (long long)j->id);
        return false;
    }
    int *idx = calloc((size_t)c->nnodes, sizeof(int));
    ckpt_node_t *cn = calloc((size_t)c->nnodes, sizeof(ckpt_node_t));
    int cap = 0, room = 0, nn = idx && cn ? up_nodes(c, idx, cn, &cap, &room) : 0;
    char err[256];
    ckpt_app_t app = {0};
    /* SHMR's bound (one agent per node) in every transfer mode: libductile keeps one
     * file per node in MR too, node file f on agent f mod M, so an agent beyond the
     * node count would hold nothing (docs/checkpointing.md, "Transfer modes") */
    ckpt_count_req_t req = {.num_nodes = j->nalloc, .num_processes = j->nalloc,
                            .mode = CKPT_SHMR, .t_sync = -1};
    int count = want, where[AGENTS_MAX];
    if (want <= 0 && (ckpt_agent_count(&app, &req, &count, err, sizeof(err)) < 0 || count < 1))
        count = 1;
    if (count > AGENTS_MAX)
        count = AGENTS_MAX;
    if (count > room && idx && cn && lend_for(c, j, count - room) > 0)
        nn = up_nodes(c, idx, cn, &cap, &room);
    if (count > room && !more)
        take_from_jobs(c, j, count - room);
    ckpt_place_cfg_t pc = place_cfg(c, nn, cap);
    if (nn > 0)
        room = candidates_room(cn, nn, &pc);
    const char *why = NULL;
    if (nn == 0)
        why = ckptsvc_up(c) ? "the checkpoint nodes have no room for another agent"
                            : "no checkpoint node is up";
    if (!why && count > room) {
        fprintf(stderr, "ductiled: job %lld: room for %d of its %d checkpoint agents\n",
                (long long)j->id, room, count);
        count = room;
    }
    if (!why && ckpt_place(cn, nn, count, &pc, where, err, sizeof(err)) < 0)
        why = "no room for checkpoint agents";
    else if (!why && (!(j->ck_addr = calloc((size_t)count, sizeof(char *))) ||
                      !(j->ck_node = calloc((size_t)count, sizeof(int))) ||
                      !(j->ck_done = calloc((size_t)count, 1))))
        why = "out of memory";
    if (why) {
        fprintf(stderr, "ductiled: job %lld: %s: it checkpoints to its %s\n", (long long)j->id,
                why, more ? "agents as they are"
                     : j->ck_short > 0 ? "files until the node given up for them is lent"
                                       : "files");
        waiting_free(j);
        free(idx);
        free(cn);
        return false;
    }
    roster_t have = {0};
    if (more)
        roster_load(j, &have);
    else
        stop_all(c, j); /* an earlier asking's agents (a run requeued while it waited) */
    j->ck_base = more ? free_base(&have, count) : 0;
    j->ck_more = more;
    roster_free(&have);
    ckptsvc_account(c); /* the shares change from here */
    if (j->ck_acct_at <= 0)
        j->ck_acct_at = ctld_now();
    size_t wl = (size_t)count * 72 + 1;
    char *wh = calloc(wl, 1);
    j->ck_n = count;
    for (int a = 0; a < count; a++) {
        node_t *n = &c->nodes[idx[where[a]]];
        j->ck_node[a] = n->index;
        if (wh)
            snprintf(wh + strlen(wh), wl - strlen(wh), "%s%s", a ? "," : "", n->name);
        /* the agent listens on the address its node reached us from */
        char addr[128];
        snprintf(addr, sizeof(addr), "%s", conn_peer(n->conn));
        char *colon = strrchr(addr, ':');
        if (colon && addr[0] != '[')
            *colon = '\0';
        json_t *m = json_pack("{s:s,s:I,s:i,s:I,s:I,s:s,s:s,s:s,s:I}", "type", "agent_start",
                              "job", (json_int_t)j->id, "slot", j->ck_base + a,
                              "uid", (json_int_t)j->uid,
                              "gid", (json_int_t)j->gid, "user", j->user, "key", j->ck_key,
                              "addr", addr, "memory_mb", (json_int_t)agent_budget(c, n));
        if (nodes_send(c, n->index, m) == 0)
            j->ck_waiting++;
        else
            j->ck_done[a] = 1;
    }
    j->ck_asked = ctld_mono();
    fprintf(stderr, "ductiled: job %lld: %d %scheckpoint agent%s asked for on %s\n",
            (long long)j->id, count, more ? "more " : "", count > 1 ? "s" : "", wh ? wh : "?");
    if (more) { /* its list stays as it is until they answer */
        free(wh);
    } else {
        free(j->ck_where);
        free(j->ck_slots);
        j->ck_where = wh;
        j->ck_slots = NULL;
        db_job_save(c, j); /* where they are asked for: a restart stops them if need be */
    }
    free(idx);
    free(cn);
    if (j->ck_waiting == 0)
        waiting_free(j);
    return j->ck_waiting > 0;
}

bool ckptsvc_before_launch(ctld_t *c, job_t *j)
{
    if (!j->ck_want || j->ck_agents)
        return false; /* none wanted, or it has them (a requeued run keeps its agents) */
    if (j->ck_addr)
        return true;  /* still waiting (a run requeued meanwhile): they launch it */
    if (ask(c, j, 0, false))
        return true;
    j->ck_agents = strdup(""); /* asked, none: the files */
    db_job_save(c, j);
    return false;
}

void ckptsvc_tell(ctld_t *c, const job_t *j)
{
    if (j->ck_want && j->ck_agents && j->nalloc > 0 && j->alloc &&
        (j->state == JS_RUNNING || j->state == JS_RESIZING))
        nodes_send(c, j->alloc[0], json_pack("{s:s,s:I,s:s}", "type", "ckpt_agents", "job",
                                             (json_int_t)j->id, "agents",
                                             j->ck_agents ? j->ck_agents : ""));
}

/* Every answer is in, or the wait is over: the agents that answered are the job's
 * (beside those it had, for a resize's asking); those that did not are told to stop. */
static void leave_node(ctld_t *c, job_t *j, roster_t *r, int i);

static void settle(ctld_t *c, job_t *j)
{
    ckptsvc_account(c); /* the shares change from here */
    roster_t r = {0};
    bool more = j->ck_more;
    if (more)
        roster_load(j, &r);
    for (int a = 0; a < j->ck_n; a++) {
        if (j->ck_addr[a] && r.n < AGENTS_MAX) {
            r.addr[r.n] = strdup(j->ck_addr[a]);
            r.node[r.n] = strdup(c->nodes[j->ck_node[a]].name);
            r.slot[r.n++] = j->ck_base + a;
        } else if (!j->ck_done[a]) {
            nodes_send(c, j->ck_node[a], stop_msg(j->id, j->ck_key, j->ck_base + a));
        }
    }
    roster_store(j, &r); /* the nodes of the agents it has (a late one elsewhere is stopped) */
    waiting_free(j);
    j->ck_more = false;
    if (j->ck_move_from > 0) /* their places taken: those on the reclaimed node leave */
        leave_node(c, j, &r, j->ck_move_from - 1);
    roster_free(&r);
    if (!j->ck_agents)
        j->ck_agents = strdup("");
    fprintf(stderr, "ductiled: job %lld: checkpoint agents %s\n", (long long)j->id,
            j->ck_agents && *j->ck_agents ? j->ck_agents : "none (it checkpoints to its files)");
    db_job_save(c, j);
    if (more)
        ckptsvc_tell(c, j);
    if (j->state == JS_RUNNING && !j->launched)
        jobs_launch(c, j);
}

void ckptsvc_on_message(ctld_t *c, node_t *n, const char *type, const json_t *msg)
{
    char err[128];
    int64_t id, slot;
    const char *addr = NULL, *why = NULL, *gen = NULL;
    if (proto_int(msg, "job", 1, INT64_MAX, &id, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "slot", 0, SLOT_MAX, 0, &slot, err, sizeof(err)) < 0 ||
        proto_str_opt(msg, "gen", GEN_LEN, NULL, &gen, err, sizeof(err)) < 0 ||
        proto_str_opt(msg, "addr", 127, NULL, &addr, err, sizeof(err)) < 0 ||
        proto_str_opt(msg, "why", 255, NULL, &why, err, sizeof(err)) < 0)
        return;
    job_t *j = idmap_get(c->jobs, id);
    bool current = j && gen && !strncmp(gen, j->ck_key, GEN_LEN) && strlen(gen) == GEN_LEN;
    if (!strcmp(type, "agent_exited")) {
        fprintf(stderr, "ductiled: job %lld: its checkpoint agent on %s ended: %s\n",
                (long long)id, n->name, why ? why : "?");
        return;
    }
    /* an answer of this asking, from the node its slot went to, not answered yet */
    slot -= j ? j->ck_base : 0; /* its index in the asking */
    if (!current || !j->ck_addr || slot < 0 || slot >= j->ck_n || j->ck_node[slot] != n->index ||
        j->ck_done[slot])
        return;
    if (!strcmp(type, "agent_ready") && addr && *addr)
        j->ck_addr[slot] = strdup(addr);
    else if (!strcmp(type, "agent_failed"))
        fprintf(stderr, "ductiled: job %lld: its checkpoint agent on %s did not start: %s\n",
                (long long)id, n->name, why ? why : "?");
    else
        return;
    j->ck_done[slot] = 1;
    if (--j->ck_waiting == 0)
        settle(c, j);
}

typedef struct late {
    ctld_t *c;
    double now;
} late_t;

/* The agents that left the job at a shrink: they flush, then exit. */
static void retire_stop(ctld_t *c, job_t *j, const char *why)
{
    if (j->ck_nretire == 0)
        return;
    ckptsvc_account(c); /* their share ends here */
    int left = 0; /* those whose node is away: told at a later check */
    for (int r = 0; r < j->ck_nretire; r++)
        if (nodes_send(c, j->ck_rnode[r], stop_msg(j->id, j->ck_key, j->ck_rslot[r])) < 0) {
            j->ck_rnode[left] = j->ck_rnode[r];
            j->ck_rslot[left++] = j->ck_rslot[r];
        }
    int stopped = j->ck_nretire - left;
    j->ck_nretire = left;
    if (stopped == 0)
        return;
    fprintf(stderr, "ductiled: job %lld: %d checkpoint agent%s it left stopped (%s)\n",
            (long long)j->id, stopped, stopped > 1 ? "s" : "", why);
    db_job_save(c, j);
}

/* Agent a leaves the roster r of job j (its name added to gone); it runs until the
 * job's application has the new list (its commits under way may still go to it). */
static void drop(ctld_t *c, job_t *j, roster_t *r, int a, char *gone, size_t len)
{
    int node = config_node_index(&c->cfg, r->node[a]);
    snprintf(gone + strlen(gone), len - strlen(gone), "%s%s", *gone ? "," : "", r->addr[a]);
    if (node >= 0 && j->ck_nretire < (int)(sizeof(j->ck_rnode) / sizeof(int))) {
        j->ck_rnode[j->ck_nretire] = node;
        j->ck_rslot[j->ck_nretire++] = r->slot[a];
    } else if (node >= 0) {
        nodes_send(c, node, stop_msg(j->id, j->ck_key, r->slot[a]));
    }
    free(r->addr[a]);
    free(r->node[a]);
    for (int b = a + 1; b < r->n; b++) {
        r->addr[b - 1] = r->addr[b];
        r->node[b - 1] = r->node[b];
        r->slot[b - 1] = r->slot[b];
    }
    r->n--;
}

/* The new list after drops: kept, told to the job's batch node; those that left are
 * stopped once its application has it, at the latest wait seconds later. */
static void dropped(ctld_t *c, job_t *j, roster_t *r, const char *gone, double wait, int had)
{
    double by = ctld_mono() + wait;
    if (had == 0 || by < j->ck_retire_at)
        j->ck_retire_at = by;
    roster_store(j, r);
    fprintf(stderr, "ductiled: job %lld: checkpoint agents %s leave it; its agents now: %s\n",
            (long long)j->id, gone, j->ck_agents && *j->ck_agents ? j->ck_agents
                                                                 : "none (its files)");
    db_job_save(c, j);
    ckptsvc_tell(c, j);
}

/* The last k of its agents leave the job (a shrink, Algorithm 7); one stays. */
static void retire(ctld_t *c, job_t *j, roster_t *r, int k)
{
    ckptsvc_account(c);
    char gone[256] = "";
    int had = j->ck_nretire;
    for (; k > 0 && r->n > 1; k--)
        drop(c, j, r, r->n - 1, gone, sizeof(gone));
    dropped(c, j, r, gone, RETIRE_WAIT, had);
}

/* Its agents on node i leave the job (a lent node taken back): within
 * CheckpointReclaimWait, for the node's sake. */
static void leave_node(ctld_t *c, job_t *j, roster_t *r, int i)
{
    ckptsvc_account(c);
    char gone[256] = "";
    int had = j->ck_nretire;
    for (int a = r->n - 1; a >= 0; a--)
        if (config_node_index(&c->cfg, r->node[a]) == i)
            drop(c, j, r, a, gone, sizeof(gone));
    j->ck_move_from = 0;
    if (*gone)
        dropped(c, j, r, gone, c->cfg.reclaim_wait, had);
}

/* A job with agents on the reclaimed node i: as many are asked for on the other
 * checkpoint nodes (none lent for it), and those on i leave once they answered; at
 * once when there is no room elsewhere (its other agents, or its files, take over). */
static void move_off(ctld_t *c, job_t *j, int i)
{
    roster_t r;
    if (j->ck_addr || j->ck_move_from || !j->ck_agents || !roster_load(j, &r))
        return; /* an asking under way: after it */
    int k = 0;
    for (int a = 0; a < r.n; a++)
        k += config_node_index(&c->cfg, r.node[a]) == i;
    if (k > 0) {
        fprintf(stderr, "ductiled: job %lld: %d checkpoint agent%s move%s off %s\n",
                (long long)j->id, k, k > 1 ? "s" : "", k > 1 ? "" : "s", c->nodes[i].name);
        j->ck_move_from = i + 1;
        if (!ask(c, j, k, true))
            leave_node(c, j, &r, i);
    }
    roster_free(&r);
}

typedef struct moving {
    ctld_t *c;
    int node;
} moving_t;

static void move_job(int64_t id, void *val, void *arg)
{
    (void)id;
    moving_t *m = arg;
    job_t *j = val;
    if (j->ck_want && (j->state == JS_RUNNING || j->state == JS_RESIZING))
        move_off(m->c, j, m->node);
}

/* A lent node that would run jobs once given back. */
static bool back_usable(const node_t *n)
{
    return n->state == NS_UP && n->conn && !n->drain && !n->ckpt;
}

/* CheckpointLending = idle (Algorithm 11's reclaim, favouring the application): the
 * first waiting job would start with the lent nodes: they are taken back, those with
 * the fewest agents first. Their agents move or leave (move_off), and give_back
 * returns each once none is left on it. */
static void reclaim(ctld_t *c)
{
    if (c->cfg.ckpt_lending == 2)
        return; /* favouring the service: its nodes stay until empty */
    int need = sched_pending_need(c->sched), free_ = sched_free_nodes(c->sched), lent = 0;
    for (int i = 0; i < c->nnodes; i++) {
        const node_t *n = &c->nodes[i];
        if (n->lent && back_usable(n))
            lent++;
        if (n->reclaim)
            free_++; /* on its way back */
    }
    int *per = NULL;
    if (c->cfg.ckpt_lending == 0) /* lending turned off (ductile reconfigure): all back */
        need = free_ + lent;
    if (need > free_ && need <= free_ + lent && (per = calloc((size_t)c->nnodes, sizeof(int)))) {
        counting_t x = {c, per};
        idmap_foreach(c->jobs, count_job, &x);
    }
    while (per && need > free_) {
        int best = -1;
        for (int i = 0; i < c->nnodes; i++) {
            const node_t *n = &c->nodes[i];
            if (n->lent && !n->reclaim && back_usable(n) &&
                (best < 0 || per[i] < per[best]))
                best = i;
        }
        if (best < 0)
            break;
        c->nodes[best].reclaim = true;
        free_++;
        fprintf(stderr, "ductiled: node %s taken back from the checkpoint service (%s)\n",
                c->nodes[best].name, c->cfg.ckpt_lending ? "a waiting job needs it"
                                                         : "CheckpointLending is none now");
    }
    free(per);
    for (int i = 0; i < c->nnodes; i++)
        if (c->nodes[i].reclaim)
            idmap_foreach(c->jobs, move_job, &(moving_t){c, i});
}

static void serve_short(int64_t id, void *val, void *arg)
{
    (void)id;
    ctld_t *c = arg;
    job_t *j = val;
    if (j->ck_short <= 0 || j->state != JS_RUNNING || !j->ck_agents || j->ck_addr)
        return;
    int want = j->ck_short;
    if (lend_for(c, j, want) > 0) {
        j->ck_short = 0; /* what has room now: the rest stays in its files */
        ask(c, j, want, true);
    }
}

static void scale_with(ctld_t *c, job_t *j, int before)
{
    if (!j->ck_want || !c->cfg.agents_scale || !j->ck_agents || !*j->ck_agents || j->ck_addr)
        return; /* none, MA-RA (the count stays), or an asking under way */
    roster_t r;
    if (!roster_load(j, &r))
        return;
    int want = 0, res = before > r.n ? before : r.n;
    char err[200];
    if (ckpt_malleable_count(CKPT_MA_MA, r.n, res, j->nalloc, AGENTS_MAX, &want, err,
                             sizeof(err)) < 0)
        fprintf(stderr, "ductiled: job %lld: %s\n", (long long)j->id, err);
    else if (want > r.n)
        ask(c, j, want - r.n, true);
    else if (want < r.n)
        retire(c, j, &r, r.n - want);
    roster_free(&r);
}

void ckptsvc_resized(ctld_t *c, job_t *j, int before)
{
    scale_with(c, j, before);
    if (j->nalloc >= before)
        return;
    idmap_foreach(c->jobs, serve_short, c); /* what a job's agents wait for, first */
    if (c->ck_scaler_shrink > 0) { /* then what Algorithm 8 asked for */
        c->ck_scaler_shrink = 0;
        lend(c, 1, "", "Algorithm 8: the node a job gave up for it", true);
    }
}

/* Commit times within this fraction of each other count as equal: without it every
 * slower commit of a noisy machine halves the count. */
#define TSYNC_TOLERANCE 0.2

void ckptsvc_app_sync(ctld_t *c, job_t *j, double t_sync)
{
    if (!c->cfg.agent_scaling || !j->ck_want || j->ck_settled || j->ck_addr || j->ck_move_from ||
        j->ck_nretire)
        return; /* off, done, or a change under way (its new list not taken yet) */
    roster_t r;
    if (!j->ck_agents || !*j->ck_agents || !roster_load(j, &r))
        return;
    ckpt_app_t *app = &j->ck_app;
    if (!app->exists)
        *app = (ckpt_app_t){.exists = true};
    app->num_agents = r.n; /* what it has (room may have given it fewer) */
    int last_dir = app->last_dir;
    bool had = app->has_t_sync;
    bool slower = had && t_sync > app->old_t_sync * (1 + TSYNC_TOLERANCE);
    ckpt_count_req_t req = {.num_nodes = j->nalloc, .num_processes = j->nalloc,
                            .mode = CKPT_SHMR, .active = true, .t_sync = t_sync,
                            .max_agents_app = AGENTS_MAX, .tolerance = TSYNC_TOLERANCE};
    int want = r.n;
    char err[200];
    if (ckpt_agent_count(app, &req, &want, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductiled: job %lld: %s\n", (long long)j->id, err);
    } else if (want != r.n) {
        fprintf(stderr, "ductiled: job %lld: its commits took %.3f s (%s): %d checkpoint "
                "agent%s instead of %d (Algorithm 5)\n", (long long)j->id, t_sync,
                !had ? "its first measure" : slower ? "slower than before" : "faster than before",
                want, want > 1 ? "s" : "", r.n);
        /* a rigid job whose last change made things worse has it undone, then keeps
         * that count; a malleable one stays eligible (its size changes anyway) */
        if (slower && last_dir != 0 && j->type != SCHED_MALLEABLE)
            j->ck_settled = true;
        if (want > r.n)
            ask(c, j, want - r.n, true);
        else
            retire(c, j, &r, r.n - want);
    }
    roster_free(&r);
}

void ckptsvc_app_seen(ctld_t *c, job_t *j, const char *agents)
{
    if (j->ck_nretire && agents && j->ck_agents && !strcmp(agents, j->ck_agents))
        retire_stop(c, j, "its application has the new list");
}

static void check_one(int64_t id, void *val, void *arg)
{
    job_t *j = val;
    late_t *x = arg;
    if (j->ck_addr && x->now - j->ck_asked > AGENT_START_TIMEOUT) {
        fprintf(stderr, "ductiled: job %lld: %d of its checkpoint agents did not answer in "
                "%.0f s: it %s without them\n", (long long)j->id, j->ck_waiting,
                AGENT_START_TIMEOUT, j->ck_more ? "goes on" : "starts");
        settle(x->c, j);
    }
    if (j->ck_nretire && x->now > j->ck_retire_at)
        retire_stop(x->c, j, "its application did not ask for the new list in time");
    serve_short(id, j, x->c); /* a node a shrink gave up, once it is clean */
}

void ckptsvc_check(ctld_t *c)
{
    late_t x = {c, ctld_mono()};
    idmap_foreach(c->jobs, check_one, &x);
    ckptsvc_account(c);
    reclaim(c);
    give_back(c);
}

void ckptsvc_job_ended(ctld_t *c, job_t *j)
{
    if (!j->ck_want)
        return;
    ckptsvc_account(c); /* up to their stop */
    j->ck_acct_at = 0;
    stop_all(c, j); /* those that left it too */
    j->ck_nretire = 0;
    j->ck_short = 0;
    j->ck_move_from = 0;
    waiting_free(j);
    j->ck_more = false;
    memset(j->ck_key, 0, sizeof(j->ck_key)); /* not kept with the finished job */
}

void ckptsvc_start_fields(const job_t *j, json_t *m)
{
    if (j->ck_want && j->ck_agents && j->ck_key[0]) /* none yet: the key for later ones */
        json_object_set_new(m, "ckpt", json_pack("{s:s,s:s}", "agents", j->ck_agents, "key",
                                                 j->ck_key));
}

typedef struct lookfor {
    int node;
    bool found;
} lookfor_t;

static void is_it(ctld_t *c, int i, void *arg)
{
    (void)c;
    lookfor_t *l = arg;
    l->found = l->found || i == l->node;
}

/* The job's agents were placed on node n. */
static bool listed(ctld_t *c, const job_t *j, const node_t *n)
{
    lookfor_t l = {n->index, false};
    each_where(j, is_it, c, &l);
    return l.found;
}

void ckptsvc_reconcile(ctld_t *c, node_t *n, const json_t *agents)
{
    size_t i;
    const json_t *v;
    if (!json_is_array(agents))
        return;
    json_array_foreach(agents, i, v) {
        json_int_t id = json_integer_value(json_object_get(v, "job"));
        const char *gen = json_string_value(json_object_get(v, "gen"));
        job_t *j = id > 0 ? idmap_get(c->jobs, id) : NULL;
        /* ended while the node was away, asked for again, or not placed here */
        if (id > 0 && (!j || !gen || strlen(gen) != GEN_LEN || strncmp(gen, j->ck_key, GEN_LEN) ||
                       !listed(c, j, n)))
            nodes_send(c, n->index, stop_msg(id, gen && strlen(gen) == GEN_LEN ? gen : NULL, -1));
    }
}
