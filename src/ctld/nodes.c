/* Node daemons as the controller sees them: registration (with reconciliation of the
 * jobs a node still runs), heartbeats, timeouts, and the messages that report what
 * happened to a job's processes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld.h"

void nodes_init(ctld_t *c)
{
    c->nnodes = c->cfg.nnodes;
    c->nodes = calloc((size_t)c->nnodes, sizeof(node_t));
    for (int i = 0; i < c->nnodes; i++) {
        c->nodes[i].index = i;
        c->nodes[i].name = c->cfg.nodes[i];
        c->nodes[i].state = NS_UNKNOWN;
        c->nodes[i].last_seen = ctld_mono(); /* a node that never comes back times out */
        c->nodes[i].stale = idmap_create();
        c->nodes[i].ckpt = c->cfg.ckpt_node && c->cfg.ckpt_node[i];
    }
}

void nodes_free(ctld_t *c)
{
    for (int i = 0; c->nodes && i < c->nnodes; i++)
        idmap_destroy(c->nodes[i].stale);
    free(c->nodes);
    c->nodes = NULL;
    free(c->sel_buf); /* nodesel.c's, as long as the nodes */
    c->sel_buf = NULL;
}

bool node_usable(const node_t *n)
{
    /* A node whose daemon is away (connection closed, NodeTimeout not yet reached) gets
     * no new job: its start could not reach it. */
    return n->state == NS_UP && n->conn && !n->report_awaited && !n->silent && !n->drain &&
           !n->ckpt && !n->lent &&
           (!n->stale || idmap_count(n->stale) == 0);
}

static bool node_allocated(const ctld_t *c, const node_t *n)
{
    return sched_node_busy(c->sched, n->index);
}

const char *node_state_name(const node_t *n, const ctld_t *c)
{
    if (n->state == NS_UNKNOWN)
        return "unknown";
    if (n->state == NS_DOWN)
        return n->drain ? "down+drain" : "down";
    bool busy = node_allocated(c, n) || (n->stale && idmap_count(n->stale) > 0);
    if (n->ckpt) /* holds checkpoint agents, never jobs */
        return n->drain ? "checkpoint+drain" : "checkpoint";
    if (n->lent) /* holds checkpoint agents until they stop */
        return n->drain ? "lent+drain" : "lent";
    if (n->drain)
        return busy ? "draining" : "drained";
    return busy ? "alloc" : "idle";
}

int nodes_send(ctld_t *c, int node, json_t *msg)
{
    node_t *n = &c->nodes[node];
    if (!msg)
        return -ENOMEM;
    if (!n->conn || n->state != NS_UP) {
        json_decref(msg);
        return -ENOTCONN;
    }
    ctld_defer_send(c, n->conn, msg);
    return 0;
}

static void set_available(ctld_t *c, node_t *n)
{
    sched_set_node_available(c->sched, n->index, node_usable(n));
}

int nodes_set_drain(ctld_t *c, node_t *n, bool drain, const char *reason)
{
    n->drain = drain;
    snprintf(n->reason, sizeof(n->reason), "%s", drain ? (reason ? reason : "drained") : "");
    set_available(c, n);
    int rc = db_node_save(c, n);
    jobs_want_schedule(c);
    return rc;
}

static node_t *node_of(ctld_t *c, conn_t *conn)
{
    (void)c;
    return conn_data(conn);
}

void nodes_end_stale(ctld_t *c, node_t *n, int64_t id, int64_t run)
{
    fprintf(stderr, "ductiled: node %s still has run %lld of job %lld: ending it\n", n->name,
            (long long)run, (long long)id);
    if (n->stale)
        idmap_put(n->stale, id, (void *)(intptr_t)(run + 1));
    set_available(c, n);
    nodes_send(c, n->index, json_pack("{s:s,s:I,s:I,s:f}",
                                      "type", "job_cleanup",
                                      "job", (json_int_t)id,
                                      "run", (json_int_t)run,
                                      "grace", 0.0));
}

/* The node confirmed that a run we asked it to end is gone: is that a stale one? */
static bool stale_done(ctld_t *c, node_t *n, int64_t id, int64_t run)
{
    intptr_t v = n->stale ? (intptr_t)idmap_get(n->stale, id) : 0;
    if (!v || v - 1 != run)
        return false;
    idmap_del(n->stale, id);
    set_available(c, n);
    if (idmap_count(n->stale) == 0)
        jobs_want_schedule(c);
    return true;
}

static void node_down(ctld_t *c, node_t *n, const char *why)
{
    if (n->state == NS_DOWN)
        return;
    fprintf(stderr, "ductiled: node %s is down: %s\n", n->name, why);
    n->state = NS_DOWN;
    c->peers_dirty = true;
    if (!n->drain)
        snprintf(n->reason, sizeof(n->reason), "%s", why);
    if (n->stale) {
        idmap_destroy(n->stale); /* it reports what it has when it registers again */
        n->stale = idmap_create();
    }
    set_available(c, n);
    if (n->conn) {
        conn_set_data(n->conn, NULL);
        conn_close(n->conn);
        n->conn = NULL;
    }
    jobs_node_failed(c, n);
    steps_node_lost(c, n);
}

void nodes_call_down(ctld_t *c, node_t *n, const char *why) { node_down(c, n, why); }

bool nodes_addr(const node_t *n, char *buf, size_t len)
{
    if (!n->conn || len == 0)
        return false;
    snprintf(buf, len, "%s", conn_peer(n->conn));
    char *colon = strrchr(buf, ':'); /* "10.0.0.2:40312", "::ffff:10.0.0.2:40312" */
    if (!colon)
        return false;
    *colon = '\0';
    return true;
}

/* The daemons a node's daemon asks, when it hears nothing from us, whether they still
 * do (noded peers.c, "cut off, or the controller?"): NODE_PEERS up nodes spread over the
 * whole of Nodes, the first up one in each of NODE_PEERS equal stretches after it, so
 * that a rack cut off together does not ask only itself (review of b51f072: neighbours
 * in Nodes' order, a cut-off half-rack judged the controller cut off while it called
 * them down). Told in `registered`, and in a `peers` message when the list changes
 * (peers_sweep). */
#define NODE_PEERS 8

static bool peer_ok(const node_t *p) { return p->state == NS_UP && p->step_port > 0 && p->conn; }

/* n's peers' indices into out; their count. Stretch k of the others is offsets
 * [k N / 9, (k+1) N / 9) after n (the last runs to N - 1). */
static int peers_pick(const ctld_t *c, const node_t *n, int *out)
{
    int N = c->nnodes, got = 0;
    for (int k = 1; k <= NODE_PEERS; k++) {
        int from = (int)((long)k * N / (NODE_PEERS + 1));
        int to = k == NODE_PEERS ? N : (int)((long)(k + 1) * N / (NODE_PEERS + 1));
        for (int m = from < 1 ? 1 : from; m < to; m++)
            if (peer_ok(&c->nodes[(n->index + m) % N])) {
                out[got++] = (n->index + m) % N;
                break;
            }
    }
    return got;
}

/* n's peers as a message's array, or NULL when its daemon has them already */
static json_t *peers_if_changed(ctld_t *c, node_t *n)
{
    int idx[NODE_PEERS];
    int np = peers_pick(c, n, idx);
    char addr[NODE_PEERS][64];
    uint64_t sig = 1469598103934665603ULL; /* FNV-1a over the peers' indices and ports */
    for (int i = 0; i < np; i++) {
        node_t *p = &c->nodes[idx[i]];
        if (!nodes_addr(p, addr[i], sizeof(addr[i])))
            addr[i][0] = '\0';
        sig = (sig ^ (uint64_t)p->index) * 1099511628211ULL;
        sig = (sig ^ (uint64_t)p->step_port) * 1099511628211ULL;
        for (const char *q = addr[i]; *q; q++)
            sig = (sig ^ (uint8_t)*q) * 1099511628211ULL;
    }
    if (sig == n->peers_sig)
        return NULL;
    json_t *a = json_array();
    for (int i = 0; a && i < np; i++)
        if (addr[i][0])
            json_array_append_new(a, json_pack("{s:s,s:s,s:i}", "node", c->nodes[idx[i]].name,
                                               "addr", addr[i], "port", c->nodes[idx[i]].step_port));
    if (a) {
        n->peers_sig = sig;
        n->npeers = (int)json_array_size(a);
    }
    return a;
}

/* After a node registered or was lost: every daemon whose list changed hears it (once a
 * second at most: 10,000 nodes registering at once are one sweep a second). */
static void peers_sweep(ctld_t *c)
{
    if (!c->peers_dirty)
        return;
    c->peers_dirty = false;
    for (int i = 0; i < c->nnodes; i++) {
        node_t *n = &c->nodes[i];
        if (n->state != NS_UP || !n->conn || n->report_awaited)
            continue;
        json_t *peers = peers_if_changed(c, n);
        if (peers)
            conn_send_new(n->conn, json_pack("{s:s,s:o}", "type", "peers", "peers", peers));
    }
}

typedef struct unreported {
    ctld_t *c;
    node_t *n;
    idmap_t *reported;
    job_t **v;
    int nv;
} unreported_t;

static void find_unreported(int64_t id, void *val, void *arg)
{
    unreported_t *u = arg;
    job_t *j = val;
    if (j->state == JS_PENDING || idmap_get(u->reported, id))
        return;
    for (int k = 0; k < j->nalloc; k++)
        if (j->alloc[k] == u->n->index) {
            u->v[u->nv++] = j;
            return;
        }
}

/* Jobs we place on this node that it no longer has: a completing job is clean there;
 * a running job whose batch script was here is lost. */
static void settle_unreported(ctld_t *c, node_t *n, idmap_t *reported)
{
    /* the placed jobs, not every live one: with 100,000 queued, each of 10,000 nodes
     * registering after a restart walked them all (bench/scale: every node back after
     * 28-48 s, 71 % of the controller's time here) */
    unreported_t u = {.c = c, .n = n, .reported = reported,
                      .v = malloc((idmap_count(c->placed) + 1) * sizeof(job_t *))};
    if (!u.v)
        return;
    idmap_foreach(c->placed, find_unreported, &u);
    for (int k = 0; k < u.nv; k++) {
        job_t *j = u.v[k];
        if (jobs_cleaning_on(j, n->index))
            jobs_cleanup_done(c, j, n); /* nothing of it left there: clean */
        else if (j->state == JS_COMPLETING)
            continue; /* this node had confirmed already */
        else if (j->alloc[0] == n->index && !j->launched)
            jobs_requeue(c, j, "LaunchLost"); /* the start never reached the node */
        else if (j->alloc[0] == n->index)
            jobs_script_ended(c, j, 2, 0, false, false, "the node no longer had the job", true, 0);
    }
    free(u.v);
}

/* What the node says it runs, against what we believe: a run we still assign to this
 * node is adopted, anything else is ended before the node takes new work. */
void nodes_reconcile(ctld_t *c, node_t *n, const json_t *jobs)
{
    /* What the node reports is all it has: a stale run it no longer reports is gone
     * (its cleanup_done may have been lost with the connection). */
    if (n->stale && idmap_count(n->stale) > 0) {
        idmap_destroy(n->stale);
        n->stale = idmap_create();
        set_available(c, n);
    }
    idmap_t *reported = idmap_create();
    size_t i;
    const json_t *e;
    json_array_foreach(jobs, i, e)
    {
        char err[128];
        int64_t id, run, code;
        const char *st;
        bool timed_out;
        double t_end;
        if (proto_int(e, "job", 1, INT64_MAX, &id, err, sizeof(err)) < 0 ||
            proto_int_opt(e, "run", 0, INT32_MAX, 0, &run, err, sizeof(err)) < 0 ||
            proto_str(e, "state", 16, &st, err, sizeof(err)) < 0)
            continue;
        job_t *j = jobs_msg_current(c, id, run, n);
        if (!j) {
            /* A run that ended (or never was ours) while the node kept it. */
            nodes_end_stale(c, n, id, run);
            continue;
        }
        if (reported)
            idmap_put(reported, id, (void *)1);
        if (j->alloc[0] == n->index) {
            bool attached;
            j->unconfirmed = false;
            jobs_launched(c, j); /* the batch node has it: it started */
            proto_bool_opt(e, "attached", false, &attached, err, sizeof(err));
            if (attached)
                jobs_app_message(c, j, "app_attached", e);
            /* the job's nodes again: a resize may have been committed while the node
             * was away (its host files follow) */
            if (!strcmp(st, "running")) {
                jobs_send_nodes(c, j);
                ckptsvc_tell(c, j); /* and its checkpoint agents, which may have changed */
                /* and its time limit, which ductile update may have changed meanwhile */
                nodes_send(c, n->index, json_pack("{s:s,s:I,s:i,s:f}", "type", "job_limit",
                                                  "job", (json_int_t)j->id, "run", j->run,
                                                  "time_limit", j->time_limit));
            }
        }
        if (!strcmp(st, "ended")) {
            int64_t kind;
            proto_int_opt(e, "kind", 0, 3, 0, &kind, err, sizeof(err));
            proto_int_opt(e, "code", -1000, 1000, 0, &code, err, sizeof(err));
            proto_bool_opt(e, "timed_out", false, &timed_out, err, sizeof(err));
            proto_num_opt(e, "end", 0, 1e12, 0, &t_end, err, sizeof(err));
            const char *why = NULL;
            bool oom;
            proto_str_opt(e, "error", 255, NULL, &why, err, sizeof(err));
            proto_bool_opt(e, "oom", false, &oom, err, sizeof(err));
            jobs_script_ended(c, j, (int)kind, (int)code, timed_out, oom, why, false, t_end);
        }
        /* still to clean there (its daemon was away or down when we asked) */
        jobs_clean_again(c, j, n);
    }
    if (reported)
        settle_unreported(c, n, reported);
    idmap_destroy(reported);
}

static void on_register(ctld_t *c, conn_t *conn, const json_t *msg)
{
    char err[256];
    const char *name;
    int64_t cpus, mem, step_port;
    const json_t *jobs = json_object_get(msg, "jobs");
    if (proto_str(msg, "node", 63, &name, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "step_port", 0, 65535, 0, &step_port, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "cpus", 0, 1 << 20, 0, &cpus, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "memory_mb", 0, INT64_MAX, 0, &mem, err, sizeof(err)) < 0 ||
        (jobs && !json_is_array(jobs))) {
        conn_send_new(conn, proto_err_reply(PROTO_E_NONE, err));
        return;
    }
    int i = config_node_index(&c->cfg, name);
    if (i < 0) {
        /* a node taken out of Nodes whose daemon still runs (issue 35: neither log said a
         * word, the refusal was closed away before it was written); once a minute here */
        static char last[64];
        static double last_at;
        if (strcmp(last, name) || ctld_mono() - last_at > 60) {
            fprintf(stderr, "ductiled: refusing the node daemon of %s (%s): %s is not in Nodes\n",
                    name, conn_peer(conn), name);
            snprintf(last, sizeof(last), "%s", name);
            last_at = ctld_mono();
        }
        char why[160];
        snprintf(why, sizeof(why), "node %s is not in this cluster's Nodes: the controller "
                 "refuses it (taken out of the configuration?)", name);
        conn_send_new(conn, proto_err_reply(PROTO_E_NONE, why));
        conn_close_flushed(conn);
        return;
    }
    if (!json_is_true(json_object_get(msg, "runs"))) {
        /* its messages would all look stale: every job it runs would be ended */
        fprintf(stderr, "ductiled: refusing node %s: its ductile-noded is older than this "
                "controller (no run numbers); upgrade it\n", name);
        conn_send_new(conn, proto_err_reply(PROTO_E_NONE,
                                      "this ductile-noded is older than the controller: "
                                      "upgrade it"));
        conn_close(conn);
        return;
    }
    node_t *n = &c->nodes[i];
    if (n->conn && n->conn != conn) {
        conn_set_data(n->conn, NULL);
        conn_close(n->conn); /* a restarted daemon replaces its old connection */
    }
    n->conn = conn;
    conn_set_data(conn, n);
    n->state = NS_UP;
    n->report_awaited = false;
    n->silent = false;
    n->last_seen = ctld_mono();
    n->stalled_seen = c->stalled;
    n->cpus = (int)cpus;
    n->memory_mb = mem;
    /* for `ductile nodes`: where --mem and MaxProcessesPerJob are not enforced */
    const json_t *lim = json_object_get(msg, "limits");
    n->limits = !json_is_object(lim) ? 0
                : NODE_LIMITS_TOLD |
                      (json_is_true(json_object_get(lim, "memory")) ? NODE_LIMITS_MEMORY : 0) |
                      (json_is_true(json_object_get(lim, "pids")) ? NODE_LIMITS_PIDS : 0);
    n->step_port = (int)step_port;
    if (!n->drain)
        n->reason[0] = '\0';
    set_available(c, n);
    n->peers_sig = 0; /* a new daemon, or one that forgot: it gets its peers again */
    json_t *reg = json_pack("{s:b,s:s,s:f}", "ok", 1, "type", "registered",
                            "heartbeat", c->cfg.heartbeat_interval);
    json_t *peers = peers_if_changed(c, n);
    if (reg && peers)
        json_object_set_new(reg, "peers", peers);
    else
        json_decref(peers);
    conn_send_new(conn, reg);
    c->peers_dirty = true; /* the others whose lists it joins (peers_sweep) */
    json_t *none = json_array();
    nodes_reconcile(c, n, jobs ? jobs : none);
    json_decref(none);
    steps_node_registered(c, n, msg);
    ckptsvc_reconcile(c, n, json_object_get(msg, "agents")); /* a checkpoint node, or lent */
    jobs_want_schedule(c);
}

void nodes_on_message(ctld_t *c, conn_t *conn, json_t *msg, const char *type)
{
    if (!strcmp(type, "register")) {
        on_register(c, conn, msg);
        return;
    }
    node_t *n = node_of(c, conn);
    if (!n)
        return; /* not registered: ignore */
    n->last_seen = ctld_mono();
    n->stalled_seen = c->stalled;
    if (!strcmp(type, "ping")) {
        /* the node's proof that we still hear it: a daemon that hears nothing for
         * NodeTimeout ends its requeueable jobs (noded main.c, on_heartbeat) */
        conn_send_new(conn, json_pack("{s:s}", "type", "pong"));
        energy_on_ping(c, n, msg);
        iomeas_on_ping(c, n, msg);
        ckptmeas_on_ping(c, n, msg);
        return;
    }
    if (!strcmp(type, "step_output") || !strcmp(type, "step_exit")) {
        steps_on_node_message(c, msg, type);
        return;
    }
    if (!strcmp(type, "step_input_ack")) {
        steps_on_input_ack(c, n, msg);
        return;
    }
    if (!strncmp(type, "agent_", 6)) {
        ckptsvc_on_message(c, n, type, msg);
        return;
    }
    char err[128];
    int64_t id, run;
    if (proto_int(msg, "job", 1, INT64_MAX, &id, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "run", 0, INT32_MAX, 0, &run, err, sizeof(err)) < 0)
        return;
    /* Every message about a job names its run: one about another run, or from a node
     * that is not the job's, must not touch the current run. */
    job_t *j = jobs_msg_current(c, id, run, n);
    if (!strcmp(type, "job_ended")) {
        int64_t kind, code;
        bool timed_out;
        double t_end;
        if (proto_int_opt(msg, "kind", 0, 3, 0, &kind, err, sizeof(err)) < 0 ||
            proto_int_opt(msg, "code", -1000, 1000, 0, &code, err, sizeof(err)) < 0 ||
            proto_bool_opt(msg, "timed_out", false, &timed_out, err, sizeof(err)) < 0 ||
            proto_num_opt(msg, "end", 0, 1e12, 0, &t_end, err, sizeof(err)) < 0)
            return;
        const char *error = NULL;
        bool clean, oom;
        proto_str_opt(msg, "error", 255, NULL, &error, err, sizeof(err));
        proto_bool_opt(msg, "clean", false, &clean, err, sizeof(err));
        proto_bool_opt(msg, "oom", false, &oom, err, sizeof(err));
        if (j && j->alloc[0] == n->index) {
            double cpu;
            int64_t mem;
            if (proto_num_opt(msg, "cpu", 0, 1e12, -1, &cpu, err, sizeof(err)) < 0)
                cpu = -1;
            if (proto_int_opt(msg, "mem", 0, INT64_MAX, -1, &mem, err, sizeof(err)) < 0)
                mem = -1;
            char nl[64];
            snprintf(nl, sizeof(nl), "%s", n->name);
            step_rec_t r = {.job = j->id, .step = 0, .name = "batch", .nodelist = nl,
                            .tasks = 1, .start = j->start, .end = t_end > 0 ? t_end : ctld_now(),
                            .status = kind == 1 ? 128 + (int)code : kind == 2 ? 127 : (int)code,
                            .cpu = cpu, .mem = (long long)mem};
            db_step_put(c, &r); /* step 0: the batch script (history --steps) */
            jobs_script_ended(c, j, (int)kind, (int)code, timed_out, oom, error, clean, t_end);
        }
        else if (!j && !clean)
            nodes_end_stale(c, n, id, run); /* what is left of an old run must go */
        if (!j) /* an end from before its node was called down: the record set right */
            jobs_late_end(c, n, id, run, (int)kind, (int)code, timed_out, t_end);
        /* The node keeps the result until it knows we have it on disk. */
        ctld_defer_send(c, conn, json_pack("{s:s,s:I,s:I}",
                                           "type", "job_ended_ack",
                                           "job", (json_int_t)id,
                                           "run", (json_int_t)run));
    } else if (!strcmp(type, "cleanup_done")) {
        if (!stale_done(c, n, id, run) && j)
            jobs_cleanup_done(c, j, n);
    } else if (!j) {
        /* job_started, job_ready, app_*: the node runs something we do not. */
        if (!strcmp(type, "job_started") || !strcmp(type, "job_ready"))
            nodes_end_stale(c, n, id, run);
    } else if (!strncmp(type, "app_", 4)) {
        if (j->alloc[0] == n->index) /* only the batch node speaks for it */
            jobs_app_message(c, j, type, msg);
    } else if (!strcmp(type, "job_started")) {
        jobs_launched(c, j);
    } else if (!strcmp(type, "job_ready")) {
        jobs_node_ready(c, j, n);
    }
}

void nodes_conn_closed(ctld_t *c, conn_t *conn)
{
    node_t *n = node_of(c, conn);
    if (n && n->conn == conn) {
        n->conn = NULL; /* it may come back before NodeTimeout */
        c->peers_dirty = true;
        fprintf(stderr, "ductiled: node %s: its daemon disconnected\n", n->name);
        set_available(c, n);
    }
}

static double silence_of(const ctld_t *c, const node_t *n, double now)
{
    /* its silence while the controller was not listening does not count */
    return now - n->last_seen - (c->stalled - n->stalled_seen);
}

/* More than half the up nodes silent at once: it is more likely that this host lost the
 * network than that they all failed together (a host that loses its power, like a cut,
 * closes no connection; a daemon killed alone leaves its jobs running), and calling them
 * down would end or requeue every job on the cluster (issue 35: a switch reboot). The
 * controller suspects itself: it calls none of them down, places nothing on them, until
 * it hears from most of them again, or an operator calls nodes down (`ductile drain
 * --down`). Their daemons make the same judgement from the other side (noded peers.c). */
static void check_self(ctld_t *c, double now)
{
    int up = 0, lost = 0, due = 0;
    double after = config_lost_after(&c->cfg);
    for (int i = 0; i < c->nnodes; i++) {
        node_t *n = &c->nodes[i];
        if (n->state != NS_UP)
            continue;
        up++;
        /* the nodes cut off with us went silent within a heartbeat of each other: the
         * first passes NodeTimeout when all have passed config_lost_after */
        double s = silence_of(c, n, now);
        lost += s > after;
        due += s > c->cfg.node_timeout;
    }
    bool suspect = lost >= 2 && 2 * lost > up;
    if (suspect && !c->suspect_since && due > 0) { /* one would be called down now */
        fprintf(stderr, "ductiled: %d of %d up nodes fell silent at once: this controller "
                "suspects its own network and calls none of them down until it hears from "
                "them again; their jobs stay as they are (an operator who knows the nodes "
                "failed says so with `ductile drain NODES --down`)\n", lost, up);
        c->suspect_since = now;
    }
    if (!suspect && c->suspect_since) {
        /* Those still silent get a whole NodeTimeout from now, as their daemons, told by
         * the peers that hear us again, wait as long before they end anything. */
        int still = 0;
        for (int i = 0; i < c->nnodes; i++) {
            node_t *n = &c->nodes[i];
            if (n->state == NS_UP && silence_of(c, n, now) > c->cfg.node_timeout) {
                n->last_seen = now;
                n->stalled_seen = c->stalled;
                still++;
            }
        }
        fprintf(stderr, "ductiled: most nodes are heard again after %.0f s of silence; %d "
                "still silent are called down if they stay so for NodeTimeout (%.0f s)\n",
                now - c->suspect_since, still, c->cfg.node_timeout);
        c->suspect_since = 0;
    }
    for (int i = 0; i < c->nnodes; i++) { /* no new work on those we do not hear */
        node_t *n = &c->nodes[i];
        bool silent = c->suspect_since && n->state == NS_UP && silence_of(c, n, now) > after;
        if (silent != n->silent) {
            n->silent = silent;
            set_available(c, n);
        }
    }
}

bool nodes_reports_pending(ctld_t *c)
{
    if (!c->reports_pending)
        return false;
    for (int i = 0; i < c->nnodes; i++)
        if (c->nodes[i].report_awaited && c->nodes[i].conn)
            return true;
    c->reports_pending = false;
    return false;
}

void nodes_check_timeouts(ctld_t *c)
{
    double now = ctld_mono();
    check_self(c, now);
    peers_sweep(c);
    for (int i = 0; i < c->nnodes; i++) {
        node_t *n = &c->nodes[i];
        if (n->report_awaited && n->conn && (n->report_asked == 0 || now - n->report_asked > 10)) {
            /* after a reload (ctld main.c): its report, on the connection it has; a daemon
             * older than register_again that says nothing in 10 s is disconnected (and
             * registers on its new connection) */
            if (n->report_asked > 0) {
                fprintf(stderr, "ductiled: node %s did not report again when asked: "
                        "disconnecting it\n", n->name);
                conn_set_data(n->conn, NULL);
                conn_close(n->conn);
                n->conn = NULL;
                set_available(c, n);
                continue;
            }
            n->report_asked = now;
            conn_send_new(n->conn, json_pack("{s:s}", "type", "register_again"));
        }
        if (c->suspect_since && n->state == NS_UP)
            continue; /* see check_self */
        if ((n->state == NS_UP || n->state == NS_UNKNOWN) && silence_of(c, n, now) > c->cfg.node_timeout)
            node_down(c, n, n->state == NS_UP ? "not responding" : "never registered");
    }
}
