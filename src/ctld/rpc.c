/* Requests from the ductile command. Who asks is known from the connection (the
 * kernel on the local socket, MUNGE on TCP), never from the message. Every field is
 * checked; a bad request gets {"ok": false, "error": "..."} and changes nothing. */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld.h"
#include "hostlist.h"

#define MAX_ENV 4096
#define MAX_ENV_LEN 131072
#define MAX_PATH 4096

static void user_name(uid_t uid, char *buf, size_t len)
{
    struct passwd pw, *res = NULL;
    char tmp[4096];
    if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) == 0 && res)
        snprintf(buf, len, "%s", pw.pw_name);
    else
        snprintf(buf, len, "uid%u", (unsigned)uid);
}

static bool is_operator(ctld_t *c, conn_t *conn)
{
    if (conn_uid(conn) == 0)
        return true;
    char name[256];
    user_name(conn_uid(conn), name, sizeof(name));
    return config_is_operator(&c->cfg, name);
}

/* Replies wait for the batch to commit whenever this request changed anything. */
static void reply(ctld_t *c, conn_t *conn, json_t *msg)
{
    if (c->in_batch)
        ctld_defer_send(c, conn, msg);
    else
        conn_send_new(conn, msg);
}

static void fail(ctld_t *c, conn_t *conn, const char *err)
{
    reply(c, conn, json_pack("{s:b,s:s}", "ok", 0, "error", err));
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void do_submit(ctld_t *c, conn_t *conn, const json_t *m)
{
    char err[512];
    const char *script, *name, *cwd, *out, *errp, *type, *cons;
    int64_t nodes, minn, maxn;
    double tlimit;
    bool requeue;
    const json_t *env;
    if (proto_str(m, "script", (size_t)c->cfg.max_script_size, &script, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "name", 128, "script", &name, err, sizeof(err)) < 0 ||
        proto_str(m, "cwd", MAX_PATH, &cwd, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "stdout", MAX_PATH, NULL, &out, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "stderr", MAX_PATH, NULL, &errp, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "job_type", 16, "rigid", &type, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "constraint", 16, "none", &cons, err, sizeof(err)) < 0 ||
        proto_int_opt(m, "nodes", 1, 1 << 24, 1, &nodes, err, sizeof(err)) < 0 ||
        proto_int_opt(m, "min_nodes", 0, 1 << 24, 0, &minn, err, sizeof(err)) < 0 ||
        proto_int_opt(m, "max_nodes", 0, 1 << 24, 0, &maxn, err, sizeof(err)) < 0 ||
        proto_num_opt(m, "time", 0, 1e9, 0, &tlimit, err, sizeof(err)) < 0 ||
        proto_bool_opt(m, "requeue", false, &requeue, err, sizeof(err)) < 0 ||
        proto_strarray_opt(m, "env", MAX_ENV, MAX_ENV_LEN, &env, err, sizeof(err)) < 0) {
        fail(c, conn, err);
        return;
    }
    if (cwd[0] != '/') {
        fail(c, conn, "the working directory must be an absolute path");
        return;
    }
    job_t *j = job_new();
    if (!j) {
        fail(c, conn, "out of memory");
        return;
    }
    if (sched_type_parse(type, &j->type) < 0 ||
        sched_constraint_parse(cons, &j->constraint) < 0) {
        job_free(j);
        fail(c, conn, "unknown job type or node constraint");
        return;
    }
    char user[256];
    user_name(conn_uid(conn), user, sizeof(user));
    j->name = strdup(name);
    j->user = strdup(user);
    j->uid = conn_uid(conn);
    j->gid = conn_gid(conn);
    j->nodes = (int)nodes;
    j->min_nodes = (int)minn;
    j->max_nodes = (int)maxn;
    j->time_limit = tlimit;
    j->requeue = requeue;
    j->script = strdup(script);
    j->cwd = strdup(cwd);
    j->env = env ? json_deep_copy(env) : json_array();
    j->out_path = dup_or_null(out);
    j->err_path = dup_or_null(errp);
    if (jobs_submit(c, j, err, sizeof(err)) < 0) {
        job_free(j);
        fail(c, conn, err);
        return;
    }
    reply(c, conn, json_pack("{s:b,s:I}", "ok", 1, "job", (json_int_t)j->id));
}

typedef struct collect {
    job_t **v;
    size_t n;
    const char *user;
    const char *state;
} collect_t;

static void collect_one(int64_t id, void *val, void *arg)
{
    (void)id;
    collect_t *x = arg;
    job_t *j = val;
    if (x->user && strcmp(j->user, x->user))
        return;
    if (x->state && strcasecmp(jstate_code(j->state), x->state) &&
        strcasecmp(jstate_name(j->state), x->state))
        return;
    x->v[x->n++] = j;
}

static int by_id(const void *a, const void *b)
{
    int64_t x = (*(job_t *const *)a)->id, y = (*(job_t *const *)b)->id;
    return (x > y) - (x < y);
}

/* The queue as text, the way `ductile queue` prints it. Rendering it here costs a
 * fraction of building (and parsing) a JSON object per job: with 100,000 queued jobs
 * the difference is seconds. */
typedef struct qrow {
    char id[24], t[24], nodes[16], st[4];
    const char *name, *user;
    char *last; /* nodelist, or (reason) */
} qrow_t;

static void fmt_elapsed(double secs, char *buf, size_t len)
{
    long s = secs > 0 ? (long)(secs + 0.5) : 0;
    long d = s / 86400, h = s % 86400 / 3600, mm = s % 3600 / 60, x = s % 60;
    if (d)
        snprintf(buf, len, "%ld-%02ld:%02ld:%02ld", d, h, mm, x);
    else if (h)
        snprintf(buf, len, "%ld:%02ld:%02ld", h, mm, x);
    else
        snprintf(buf, len, "%ld:%02ld", mm, x);
}

static char *render_queue(ctld_t *c, job_t **v, size_t n, size_t *len)
{
    static const char *hdr[] = {"JOBID", "NAME", "USER", "ST", "TIME", "NODES", "NODELIST(REASON)"};
    qrow_t *rows = calloc(n + 1, sizeof(qrow_t));
    if (!rows)
        return NULL;
    int w[6];
    for (int k = 0; k < 6; k++)
        w[k] = (int)strlen(hdr[k]);
    double now = ctld_now();
    size_t total = 128;
    for (size_t i = 0; i < n; i++) {
        job_t *j = v[i];
        qrow_t *r = &rows[i];
        snprintf(r->id, sizeof(r->id), "%lld", (long long)j->id);
        r->name = j->name ? j->name : "";
        r->user = j->user ? j->user : "";
        snprintf(r->st, sizeof(r->st), "%s", jstate_code(j->state));
        fmt_elapsed(j->start > 0 ? now - j->start : 0, r->t, sizeof(r->t));
        snprintf(r->nodes, sizeof(r->nodes), "%d", j->nalloc ? j->nalloc : j->nodes);
        if (j->state == JS_PENDING) {
            sched_jobinfo_t info;
            const char *why = sched_job_info(c->sched, j->id, &info) == 0
                                  ? sched_reason_name(info.reason) : j->reason;
            size_t l = strlen(why) + 3;
            r->last = malloc(l);
            if (r->last)
                snprintf(r->last, l, "(%s)", why);
        } else {
            r->last = nodes_format(c, j->alloc, j->nalloc);
        }
        int lens[6] = {(int)strlen(r->id), (int)strlen(r->name) > 20 ? 20 : (int)strlen(r->name),
                       (int)strlen(r->user), (int)strlen(r->st), (int)strlen(r->t),
                       (int)strlen(r->nodes)};
        for (int k = 0; k < 6; k++)
            if (lens[k] > w[k])
                w[k] = lens[k];
        total += (r->last ? strlen(r->last) : 0) + 16;
    }
    size_t linew = 0;
    for (int k = 0; k < 6; k++)
        linew += (size_t)w[k] + 2;
    total += (n + 1) * linew;
    char *buf = malloc(total);
    size_t pos = 0;
    if (buf) {
        pos += (size_t)snprintf(buf + pos, total - pos, "%-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s\n",
                                w[0], hdr[0], w[1], hdr[1], w[2], hdr[2], w[3], hdr[3], w[4], hdr[4],
                                w[5], hdr[5], hdr[6]);
        for (size_t i = 0; i < n; i++) {
            qrow_t *r = &rows[i];
            pos += (size_t)snprintf(buf + pos, total - pos,
                                    "%-*s  %-*.20s  %-*s  %-*s  %-*s  %-*s  %s\n", w[0], r->id, w[1],
                                    r->name, w[2], r->user, w[3], r->st, w[4], r->t, w[5], r->nodes,
                                    r->last ? r->last : "");
        }
    }
    for (size_t i = 0; i < n; i++)
        free(rows[i].last);
    free(rows);
    *len = pos;
    return buf;
}

static void do_queue(ctld_t *c, conn_t *conn, const json_t *m)
{
    char err[256];
    collect_t x = {0};
    const char *format;
    if (proto_str_opt(m, "user", 255, NULL, &x.user, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "state", 16, NULL, &x.state, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "format", 16, "json", &format, err, sizeof(err)) < 0) {
        fail(c, conn, err);
        return;
    }
    x.v = malloc((idmap_count(c->jobs) + 1) * sizeof(job_t *));
    if (!x.v) {
        fail(c, conn, "out of memory");
        return;
    }
    idmap_foreach(c->jobs, collect_one, &x);
    qsort(x.v, x.n, sizeof(job_t *), by_id);
    if (!strcmp(format, "table")) {
        size_t len;
        char *text = render_queue(c, x.v, x.n, &len);
        free(x.v);
        if (!text) {
            fail(c, conn, "out of memory");
            return;
        }
        reply(c, conn, json_pack("{s:b,s:s%}", "ok", 1, "text", text, len));
        free(text);
        return;
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < x.n; i++)
        json_array_append_new(arr, job_to_json(c, x.v[i], false));
    free(x.v);
    reply(c, conn, json_pack("{s:b,s:o}", "ok", 1, "jobs", arr));
}

static job_t *lookup(ctld_t *c, conn_t *conn, const json_t *m, bool *finished)
{
    char err[128];
    int64_t id;
    *finished = false;
    if (proto_int(m, "job", 1, INT64_MAX, &id, err, sizeof(err)) < 0) {
        fail(c, conn, err);
        return NULL;
    }
    job_t *j = idmap_get(c->jobs, id);
    if (!j && (j = db_job_find_finished(c, id)))
        *finished = true;
    if (!j) {
        snprintf(err, sizeof(err), "job %lld does not exist", (long long)id);
        fail(c, conn, err);
    }
    return j;
}

static void do_show(ctld_t *c, conn_t *conn, const json_t *m)
{
    bool finished;
    job_t *j = lookup(c, conn, m, &finished);
    if (!j)
        return;
    json_t *o = job_to_json(c, j, true);
    json_t *ev = json_array();
    db_job_events(c, j->id, ev);
    json_object_set_new(o, "events", ev);
    if (finished)
        job_free(j);
    reply(c, conn, json_pack("{s:b,s:o}", "ok", 1, "job", o));
}

static bool may_modify(ctld_t *c, conn_t *conn, const job_t *j)
{
    return conn_uid(conn) == j->uid || is_operator(c, conn);
}

/* A live job the caller may change (its owner or an operator), or NULL once the
 * caller has been told why not. */
static job_t *lookup_modifiable(ctld_t *c, conn_t *conn, const json_t *m)
{
    bool finished;
    job_t *j = lookup(c, conn, m, &finished);
    if (!j)
        return NULL;
    char err[160];
    if (finished) {
        snprintf(err, sizeof(err), "job %lld has already ended (%s)", (long long)j->id,
                 jstate_name(j->state));
        job_free(j);
        fail(c, conn, err);
        return NULL;
    }
    if (!may_modify(c, conn, j)) {
        snprintf(err, sizeof(err), "permission denied: job %lld belongs to %s", (long long)j->id,
                 j->user);
        fail(c, conn, err);
        return NULL;
    }
    return j;
}

static void do_cancel(ctld_t *c, conn_t *conn, const json_t *m)
{
    job_t *j = lookup_modifiable(c, conn, m);
    if (!j)
        return;
    int64_t id = j->id;
    jobs_cancel(c, j, "Cancelled");
    reply(c, conn, json_pack("{s:b,s:I}", "ok", 1, "job", (json_int_t)id));
}

static void do_resize(ctld_t *c, conn_t *conn, const json_t *m)
{
    job_t *j = lookup_modifiable(c, conn, m);
    if (!j)
        return;
    char err[256];
    int64_t nodes;
    if (proto_int(m, "nodes", 1, c->nnodes, &nodes, err, sizeof(err)) < 0 ||
        jobs_resize(c, j, (int)nodes, err, sizeof(err)) < 0) {
        fail(c, conn, err);
        return;
    }
    reply(c, conn, json_pack("{s:b,s:I}", "ok", 1, "job", (json_int_t)j->id));
}

static void do_nodes(ctld_t *c, conn_t *conn)
{
    json_t *arr = json_array();
    for (int i = 0; i < c->nnodes; i++) {
        node_t *n = &c->nodes[i];
        json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s,s:i,s:I}", "name", n->name,
                                             "state", node_state_name(n, c), "reason", n->reason,
                                             "addr", n->conn ? conn_peer(n->conn) : "", "cpus",
                                             n->cpus ? n->cpus : c->cfg.cores_per_node,
                                             "memory_mb", (json_int_t)(n->memory_mb ? n->memory_mb
                                                                       : c->cfg.memory_per_node)));
    }
    reply(c, conn, json_pack("{s:b,s:o}", "ok", 1, "nodes", arr));
}

static void do_drain(ctld_t *c, conn_t *conn, const json_t *m, bool drain)
{
    char err[256];
    const char *list, *why;
    if (!is_operator(c, conn)) {
        fail(c, conn, "permission denied: only operators may drain or resume nodes");
        return;
    }
    if (proto_str(m, "nodes", 65536, &list, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "reason", 120, NULL, &why, err, sizeof(err)) < 0) {
        fail(c, conn, err);
        return;
    }
    char **names_;
    int n;
    if (hostlist_expand(list, &names_, &n, err, sizeof(err)) < 0) {
        fail(c, conn, err);
        return;
    }
    for (int i = 0; i < n; i++)
        if (config_node_index(&c->cfg, names_[i]) < 0) {
            snprintf(err, sizeof(err), "unknown node '%s'", names_[i]);
            hostlist_free(names_, n);
            fail(c, conn, err);
            return;
        }
    for (int i = 0; i < n; i++)
        nodes_set_drain(c, &c->nodes[config_node_index(&c->cfg, names_[i])], drain, why);
    hostlist_free(names_, n);
    reply(c, conn, json_pack("{s:b}", "ok", 1));
}

static void do_history(ctld_t *c, conn_t *conn, const json_t *m)
{
    char err[256];
    const char *user, *state;
    double since;
    int64_t limit;
    if (proto_str_opt(m, "user", 255, NULL, &user, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "state", 16, NULL, &state, err, sizeof(err)) < 0 ||
        proto_num_opt(m, "since", 0, 1e12, 0, &since, err, sizeof(err)) < 0 ||
        proto_int_opt(m, "limit", 1, 1000000, 1000, &limit, err, sizeof(err)) < 0) {
        fail(c, conn, err);
        return;
    }
    jstate_t st;
    if (state && jstate_parse(state, &st) < 0) {
        fail(c, conn, "unknown state (use CD, F, CA, TO or NF)");
        return;
    }
    json_t *arr = json_array();
    if (db_history(c, user, state ? jstate_code(st) : NULL, since, (int)limit, arr, err,
                   sizeof(err)) < 0) {
        json_decref(arr);
        fail(c, conn, err);
        return;
    }
    reply(c, conn, json_pack("{s:b,s:o}", "ok", 1, "jobs", arr));
}

static void do_status(ctld_t *c, conn_t *conn)
{
    int up = 0;
    for (int i = 0; i < c->nnodes; i++)
        up += c->nodes[i].state == NS_UP;
    reply(c, conn, json_pack("{s:b,s:s,s:s,s:i,s:i,s:I,s:i}", "ok", 1, "cluster",
                             c->cfg.cluster_name, "policy", sched_policy_spec(c->sched), "nodes",
                             c->nnodes, "nodes_up", up, "jobs", (json_int_t)c->njobs_live,
                             "pending", sched_pending_count(c->sched)));
}

static void do_shutdown(ctld_t *c, conn_t *conn)
{
    if (!is_operator(c, conn)) {
        fail(c, conn, "permission denied: only operators may stop the controller");
        return;
    }
    reply(c, conn, json_pack("{s:b}", "ok", 1));
    c->stopping = true;
}

void rpc_on_message(ctld_t *c, conn_t *conn, json_t *msg)
{
    char err[128];
    const char *type;
    if (proto_type(msg, &type, err, sizeof(err)) < 0) {
        fail(c, conn, err);
        return;
    }
    if (!strcmp(type, "submit"))
        do_submit(c, conn, msg);
    else if (!strcmp(type, "queue"))
        do_queue(c, conn, msg);
    else if (!strcmp(type, "show"))
        do_show(c, conn, msg);
    else if (!strcmp(type, "cancel"))
        do_cancel(c, conn, msg);
    else if (!strcmp(type, "resize"))
        do_resize(c, conn, msg);
    else if (!strcmp(type, "nodes"))
        do_nodes(c, conn);
    else if (!strcmp(type, "drain"))
        do_drain(c, conn, msg, true);
    else if (!strcmp(type, "resume"))
        do_drain(c, conn, msg, false);
    else if (!strcmp(type, "history"))
        do_history(c, conn, msg);
    else if (!strcmp(type, "run"))
        steps_run(c, conn, msg);
    else if (!strcmp(type, "step_ack"))
        steps_ack(c, conn, msg);
    else if (!strcmp(type, "status"))
        do_status(c, conn);
    else if (!strcmp(type, "shutdown"))
        do_shutdown(c, conn);
    else {
        snprintf(err, sizeof(err), "unknown request '%.40s'", type);
        fail(c, conn, err);
    }
}
