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

#define AGENT_START_TIMEOUT 10.0 /* seconds a launch waits for its agents */
#define AGENTS_MAX 16            /* per job */

int ckptsvc_nodes(const ctld_t *c)
{
    int k = 0;
    for (int i = 0; i < c->nnodes; i++)
        k += c->nodes[i].ckpt;
    return k;
}

/* The checkpoint nodes up now, and what Algorithm 6 looks at on each. */
static int up_nodes(const ctld_t *c, int *idx, ckpt_node_t *cn)
{
    int k = 0;
    for (int i = 0; i < c->nnodes; i++) {
        const node_t *n = &c->nodes[i];
        if (!n->ckpt || n->state != NS_UP || !n->conn || n->drain)
            continue;
        double mem = (double)(n->memory_mb > 0 ? n->memory_mb : c->cfg.memory_per_node) * 1048576.0;
        /* no measurement of what agents hold yet: each agent counts as an equal share */
        cn[k] = (ckpt_node_t){.total_mem = mem, .avail_mem = mem / (1 + n->agents),
                              .agents = n->agents};
        idx[k++] = i;
    }
    return k;
}

static void count_agents(ctld_t *c, const job_t *j, int delta)
{
    if (!j->ck_where)
        return;
    char *w = strdup(j->ck_where), *save = NULL;
    for (char *t = w ? strtok_r(w, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
        int i = config_node_index(&c->cfg, t);
        if (i >= 0 && c->nodes[i].agents + delta >= 0)
            c->nodes[i].agents += delta;
    }
    free(w);
}

void ckptsvc_restored(ctld_t *c, job_t *j) { count_agents(c, j, +1); }

/* Asks the managers for the job's agents; false when there is nothing to wait for. */
static bool ask(ctld_t *c, job_t *j)
{
    int idx[c->nnodes > 0 ? c->nnodes : 1];
    ckpt_node_t cn[c->nnodes > 0 ? c->nnodes : 1];
    int nn = up_nodes(c, idx, cn);
    if (nn == 0) {
        fprintf(stderr, "ductiled: job %lld: no checkpoint node is up: it checkpoints to its "
                "files\n", (long long)j->id);
        return false;
    }
    char err[256];
    ckpt_app_t app = {0};
    ckpt_count_req_t req = {.num_nodes = j->nalloc, .num_processes = j->nalloc,
                            .mode = CKPT_SHMR, .t_sync = -1};
    int count = 0;
    if (ckpt_agent_count(&app, &req, &count, err, sizeof(err)) < 0 || count < 1)
        count = 1;
    if (count > AGENTS_MAX)
        count = AGENTS_MAX;
    int where[AGENTS_MAX];
    ckpt_place_cfg_t pc = {.select = CKPT_SEL_MEMORY, .dist = CKPT_DIST_ROUNDROBIN,
                           .candidate_count = nn};
    if (ckpt_place(cn, nn, count, &pc, where, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductiled: job %lld: no room for checkpoint agents (%s): it checkpoints "
                "to its files\n", (long long)j->id, err);
        return false;
    }
    if (rng_secret_hex(j->ck_key, sizeof(j->ck_key), 32) < 0) {
        fprintf(stderr, "ductiled: job %lld: cannot make a key for its checkpoint agents\n",
                (long long)j->id);
        return false;
    }
    j->ck_addr = calloc((size_t)count, sizeof(char *));
    size_t wl = (size_t)count * 72 + 1;
    char *wh = calloc(wl, 1);
    if (!j->ck_addr || !wh) {
        free(wh);
        return false;
    }
    j->ck_n = count;
    for (int a = 0; a < count; a++) {
        node_t *n = &c->nodes[idx[where[a]]];
        snprintf(wh + strlen(wh), wl - strlen(wh), "%s%s", a ? "," : "", n->name);
        /* the agent listens on the address its node reached us from */
        char addr[128];
        snprintf(addr, sizeof(addr), "%s", conn_peer(n->conn));
        char *colon = strrchr(addr, ':');
        if (colon && addr[0] != '[')
            *colon = '\0';
        json_t *m = json_pack("{s:s,s:I,s:i,s:I,s:I,s:s,s:s,s:s}", "type", "agent_start", "job",
                              (json_int_t)j->id, "slot", a, "uid", (json_int_t)j->uid, "gid",
                              (json_int_t)j->gid, "user", j->user, "key", j->ck_key, "addr", addr);
        if (nodes_send(c, n->index, m) == 0)
            j->ck_waiting++;
    }
    free(j->ck_where);
    j->ck_where = wh;
    count_agents(c, j, +1);
    j->ck_asked = ctld_mono();
    fprintf(stderr, "ductiled: job %lld: %d checkpoint agent%s asked for on %s\n",
            (long long)j->id, count, count > 1 ? "s" : "", wh);
    return j->ck_waiting > 0;
}

bool ckptsvc_before_launch(ctld_t *c, job_t *j)
{
    if (!j->ck_want || j->ck_agents || j->ck_n > 0)
        return false; /* none wanted, or it has them (a requeued run keeps its agents) */
    if (ask(c, j))
        return true;
    j->ck_agents = strdup(""); /* asked, none: the files */
    db_job_save(c, j);
    return false;
}

/* Every answer is in, or the wait is over: the agents that answered are the job's. */
static void settle(ctld_t *c, job_t *j)
{
    size_t len = 1;
    for (int a = 0; a < j->ck_n; a++)
        len += j->ck_addr[a] ? strlen(j->ck_addr[a]) + 1 : 0;
    char *s = calloc(len, 1);
    for (int a = 0; s && a < j->ck_n; a++)
        if (j->ck_addr[a])
            snprintf(s + strlen(s), len - strlen(s), "%s%s", *s ? "," : "", j->ck_addr[a]);
    for (int a = 0; a < j->ck_n; a++)
        free(j->ck_addr[a]);
    free(j->ck_addr);
    j->ck_addr = NULL;
    j->ck_n = j->ck_waiting = 0;
    free(j->ck_agents);
    j->ck_agents = s ? s : strdup("");
    fprintf(stderr, "ductiled: job %lld: checkpoint agents %s\n", (long long)j->id,
            j->ck_agents && *j->ck_agents ? j->ck_agents : "none (it checkpoints to its files)");
    db_job_save(c, j);
    if (j->state == JS_RUNNING && !j->launched)
        jobs_launch(c, j);
}

void ckptsvc_on_message(ctld_t *c, node_t *n, const char *type, const json_t *msg)
{
    char err[128];
    int64_t id, slot;
    const char *addr = NULL, *why = NULL;
    if (proto_int(msg, "job", 1, INT64_MAX, &id, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "slot", 0, AGENTS_MAX - 1, 0, &slot, err, sizeof(err)) < 0 ||
        proto_str_opt(msg, "addr", 127, NULL, &addr, err, sizeof(err)) < 0 ||
        proto_str_opt(msg, "why", 255, NULL, &why, err, sizeof(err)) < 0)
        return;
    job_t *j = idmap_get(c->jobs, id);
    if (!strcmp(type, "agent_exited")) {
        fprintf(stderr, "ductiled: job %lld: its checkpoint agent on %s ended: %s\n",
                (long long)id, n->name, why ? why : "?");
        return;
    }
    if (!j || !j->ck_addr || slot >= j->ck_n || j->ck_waiting <= 0)
        return; /* late: the job ended, or its launch stopped waiting */
    if (!strcmp(type, "agent_ready") && addr && !j->ck_addr[slot])
        j->ck_addr[slot] = strdup(addr);
    else if (!strcmp(type, "agent_failed"))
        fprintf(stderr, "ductiled: job %lld: its checkpoint agent on %s did not start: %s\n",
                (long long)id, n->name, why ? why : "?");
    else
        return;
    if (--j->ck_waiting == 0)
        settle(c, j);
}

typedef struct late {
    ctld_t *c;
    double now;
} late_t;

static void check_one(int64_t id, void *val, void *arg)
{
    (void)id;
    job_t *j = val;
    late_t *x = arg;
    if (j->ck_addr && j->ck_waiting > 0 && x->now - j->ck_asked > AGENT_START_TIMEOUT) {
        fprintf(stderr, "ductiled: job %lld: %d of its checkpoint agents did not answer in "
                "%.0f s: it starts without them\n", (long long)j->id, j->ck_waiting,
                AGENT_START_TIMEOUT);
        settle(x->c, j);
    }
}

void ckptsvc_check(ctld_t *c)
{
    late_t x = {c, ctld_mono()};
    idmap_foreach(c->jobs, check_one, &x);
}

void ckptsvc_job_ended(ctld_t *c, job_t *j)
{
    if (!j->ck_where)
        return;
    count_agents(c, j, -1);
    char *w = strdup(j->ck_where), *save = NULL;
    bool told[c->nnodes > 0 ? c->nnodes : 1];
    memset(told, 0, sizeof(told));
    for (char *t = w ? strtok_r(w, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
        int i = config_node_index(&c->cfg, t);
        if (i >= 0 && !told[i]) /* a node away: its manager stops them when it registers */
            nodes_send(c, i, json_pack("{s:s,s:I}", "type", "agent_stop", "job", (json_int_t)j->id));
        if (i >= 0)
            told[i] = true;
    }
    free(w);
}

void ckptsvc_start_fields(const job_t *j, json_t *m)
{
    if (j->ck_want && j->ck_agents && *j->ck_agents)
        json_object_set_new(m, "ckpt", json_pack("{s:s,s:s}", "agents", j->ck_agents, "key",
                                                 j->ck_key));
}

void ckptsvc_reconcile(ctld_t *c, node_t *n, const json_t *jobs)
{
    size_t i;
    const json_t *v;
    if (!json_is_array(jobs))
        return;
    json_array_foreach(jobs, i, v) {
        json_int_t id = json_integer_value(v);
        job_t *j = id > 0 ? idmap_get(c->jobs, id) : NULL;
        if (!j || !j->ck_where) /* ended while the node was away */
            nodes_send(c, n->index, json_pack("{s:s,s:I}", "type", "agent_stop", "job", id));
    }
}
