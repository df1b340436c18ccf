/* The node daemon's local socket for the processes of jobs and the users of this node.
 *
 * libductile: a process attaches to its job (the kernel tells us its uid: it must own
 * the job); the job's leader, on the batch node, receives the controller's resize
 * offers and answers them; any process may report its MTCT ratio or, for an evolving
 * job, ask for nodes.
 *
 * Every other request (the `ductile` commands: run, rsh, submit, queue...) is relayed
 * to the controller on our authenticated connection, as a channel of it (conn.h): the
 * controller serves it as the user the kernel says is on the other end, so that a
 * compute host needs neither the controller's local socket nor user credentials of
 * its own. The replies and a step's output come back the same way. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "noded.h"

typedef struct app {
    int64_t job;
    bool leader;
    int64_t chan;   /* relayed to the controller as this channel; 0: not (yet) */
    /* A step of this client (`ductile run`) whose tasks send their output here (peers.c):
     * which ranks' output has ended, and the step's end, held until it has. */
    int ntasks;
    char *eof;
    json_t *done;
    uint64_t done_at; /* uv_now() when it was held */
} app_t;

static void app_free(app_t *a)
{
    if (!a)
        return;
    free(a->eof);
    json_decref(a->done);
    free(a);
}

/* Has the output of every rank the controller names in step_done ended here? */
static bool outputs_ended(const app_t *a, const json_t *done)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(done, "eof"), i, r)
    {
        json_int_t k = json_integer_value(r);
        if (k >= 0 && k < a->ntasks && !a->eof[k])
            return false;
    }
    return true;
}

static void release_done(conn_t *c, app_t *a)
{
    conn_send(c, a->done);
    json_decref(a->done);
    a->done = NULL;
}

static void reply(conn_t *c, json_t *m) { conn_send_new(c, m); }

static void fail(conn_t *c, const char *why)
{
    reply(c, proto_err_reply(PROTO_E_NONE, why));
}

static void fail_code(conn_t *c, proto_err_t code, const char *why)
{
    reply(c, proto_err_reply(code, why));
}

static void forward(noded_t *d, const char *type, int64_t job, const json_t *extra)
{
    json_t *m = extra ? json_deep_copy(extra) : json_object();
    json_object_set_new(m, "type", json_string(type));
    json_object_set_new(m, "job", json_integer(job));
    noded_send(d, m);
}

/* limits: checked here (proto_limits) so that the controller gets only sane values.
 * NULL with err on a bad one. */
static json_t *limits_msg(const json_t *msg, char *err, size_t errlen)
{
    proto_limits_t l;
    return proto_limits(msg, &l, err, errlen) < 0 ? NULL : proto_limits_json(&l);
}

static void on_attach(noded_t *d, conn_t *c, app_t *a, const json_t *msg)
{
    char err[128];
    int64_t id;
    const char *role;
    if (proto_int(msg, "job", 1, INT64_MAX, &id, err, sizeof(err)) < 0 ||
        proto_str_opt(msg, "role", 16, "member", &role, err, sizeof(err)) < 0) {
        fail(c, err);
        return;
    }
    njob_t *j = idmap_get(d->jobs, id);
    if (!j) {
        fail_code(c, PROTO_E_NOT_FOUND, "the job does not run on this node");
        return;
    }
    if (conn_uid(c) != j->uid && conn_uid(c) != 0) {
        fail(c, "permission denied: not your job");
        return;
    }
    a->job = id;
    if (!strcmp(role, "leader")) {
        if (!j->batch) {
            fail(c, "the leader runs on the job's first node");
            return;
        }
        if (j->leader && j->leader != c)
            conn_close(j->leader); /* a restarted leader replaces the old one */
        j->leader = c;
        a->leader = true;
        /* limits set before the attach come with it: no offer goes out without them */
        json_t *x = NULL;
        json_decref(j->limits);
        j->limits = NULL;
        if (json_is_object(json_object_get(msg, "limits"))) {
            j->limits = limits_msg(json_object_get(msg, "limits"), err, sizeof(err));
            if (!j->limits) {
                fail(c, err);
                return;
            }
            x = json_pack("{s:O}", "limits", j->limits);
        }
        forward(d, "app_attached", id, x);
        json_decref(x);
    }
    reply(c, json_pack("{s:b,s:s,s:s}", "ok", 1, "node", d->name, "role", role));
}

/* The job whose cgroup holds process pid (its leaf is job_<id>_<tag> under ours), or 0. */
static int64_t job_of_pid(const noded_t *d, pid_t pid)
{
    if (pid <= 0 || !d->cgroup_parent[0])
        return 0;
    char path[64], line[4096], pat[300];
    snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
    snprintf(pat, sizeof(pat), "/%s/job_", d->cgroup_parent);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    long long id = 0;
    while (!id && fgets(line, sizeof(line), f)) {
        char *p = strncmp(line, "0::", 3) ? NULL : strstr(line, pat);
        if (p)
            id = strtoll(p + strlen(pat), NULL, 10);
    }
    fclose(f);
    return id > 0 ? id : 0;
}

static bool app_message(const char *type)
{
    return !strcmp(type, "resize_answer") || !strcmp(type, "resize_commit") ||
           !strcmp(type, "inhibit") || !strcmp(type, "mtct") || !strcmp(type, "request") ||
           !strcmp(type, "limits") || !strcmp(type, "resize_failed") ||
           !strcmp(type, "ckpt_agents");
}

/* A client's request for the controller: its channel opens with the first one. */
static void relay_out(noded_t *d, conn_t *c, app_t *a, const json_t *msg)
{
    if (!d->ctl || !d->registered) {
        /* "try_later": the command tries again (client_retryable) */
        reply(c, json_pack("{s:b,s:s,s:s}", "ok", 0, "code", "try_later", "error",
                           "this node's daemon is not connected to the controller: try again "
                           "shortly"));
        return;
    }
    bool first = !a->chan;
    int64_t chan = first ? d->next_chan + 1 : a->chan;
    json_t *m = json_pack("{s:s,s:I,s:O}", "type", "relay", "chan", (json_int_t)chan, "msg", msg);
    if (m && first) {
        json_object_set_new(m, "uid", json_integer(conn_uid(c)));
        json_object_set_new(m, "gid", json_integer(conn_gid(c)));
        int64_t job = job_of_pid(d, conn_pid(c));
        if (job)
            json_object_set_new(m, "from_job", json_integer(job));
    }
    /* The controller takes frames up to what we take from a client, and the envelope
     * (or a re-encoding: 1e9 comes back as 1000000000.0) makes one larger: it would
     * drop our connection, and every user's channel on it, for one user's request. */
    size_t size = m ? json_dumpb(m, NULL, 0, JSON_COMPACT) : 0;
    size_t limit = (size_t)d->cfg.max_script_size + (1u << 20);
    if (size == 0 || size > limit) {
        json_decref(m);
        char why[160];
        snprintf(why, sizeof(why), "request too large: %zu bytes once relayed to the controller, "
                 "which takes at most %zu (MaxScriptSize + 1 MiB)", size, limit);
        fail(c, size ? why : "out of memory");
        return;
    }
    if (first) {
        a->chan = ++d->next_chan;
        idmap_put(d->chans, a->chan, c);
    }
    conn_send_new(d->ctl, m); /* a failure closes the connection: apps_ctl_lost */
}

/* From the controller: a message for a relayed client, or the end of its channel. */
void apps_on_relay(noded_t *d, const json_t *msg, bool closed)
{
    char err[64];
    int64_t chan;
    if (proto_int(msg, "chan", 1, INT64_MAX, &chan, err, sizeof(err)) < 0)
        return;
    conn_t *c = d->chans ? idmap_get(d->chans, chan) : NULL;
    json_t *inner = json_object_get(msg, "msg");
    if (!c)
        return;
    app_t *a = conn_data(c);
    if (closed) {
        idmap_del(d->chans, chan);
        if (a)
            a->chan = 0; /* the controller knows: no relay_close back */
        conn_close_flushed(c);
        return;
    }
    if (!json_is_object(inner) || !a)
        return;
    const char *type = json_string_value(json_object_get(inner, "type"));
    int64_t ntasks = json_integer_value(json_object_get(inner, "tasks"));
    if (json_is_true(json_object_get(inner, "direct")) && ntasks > 0 && ntasks <= (1 << 24)) {
        /* a step started: its output comes from the tasks' nodes (apps_on_step_io) */
        free(a->eof);
        json_decref(a->done);
        a->done = NULL;
        a->eof = calloc((size_t)ntasks, 1);
        a->ntasks = a->eof ? (int)ntasks : 0;
    } else if (type && !strcmp(type, "step_done") && a->eof && !outputs_ended(a, inner)) {
        json_decref(a->done);
        a->done = json_incref(inner);
        a->done_at = uv_now(d->loop);
        return;
    }
    conn_send(c, inner);
}

void apps_on_step_io(noded_t *d, const json_t *msg)
{
    char err[64];
    int64_t chan, rank;
    if (!d->chans || proto_int(msg, "chan", 1, INT64_MAX, &chan, err, sizeof(err)) < 0)
        return;
    conn_t *c = idmap_get(d->chans, chan);
    app_t *a = c ? conn_data(c) : NULL;
    if (!a)
        return; /* the client left: its step is being ended */
    if (!strcmp(json_string_value(json_object_get(msg, "type")), "step_output")) {
        conn_send(c, msg);
        return;
    }
    if (!a->eof || proto_int(msg, "rank", 0, a->ntasks - 1, &rank, err, sizeof(err)) < 0)
        return;
    a->eof[rank] = 1;
    if (a->done && outputs_ended(a, a->done))
        release_done(c, a);
}

typedef struct overdue {
    noded_t *d;
    conn_t *list[16];
    int n;
} overdue_t;

static void find_overdue(int64_t chan, void *val, void *arg)
{
    (void)chan;
    overdue_t *o = arg;
    app_t *a = conn_data(val);
    /* how long a step's end waits for the end of its tasks' output from their nodes (it
     * left them before their end reached the controller and came back here) */
    uint64_t wait_ms = (uint64_t)(o->d->cfg.step_output_wait * 1000);
    if (a && a->done && o->n < 16 && uv_now(o->d->loop) - a->done_at > wait_ms)
        o->list[o->n++] = val;
}

void apps_check_pending(noded_t *d)
{
    if (!d->chans)
        return;
    overdue_t o = {.d = d};
    idmap_foreach(d->chans, find_overdue, &o);
    for (int i = 0; i < o.n; i++) {
        app_t *a = conn_data(o.list[i]);
        if (!json_object_get(a->done, "error"))
            json_object_set_new(a->done, "error",
                                json_string("the end of some tasks' output never arrived "
                                            "from their nodes: it may be incomplete"));
        /* as when a task's node says its output was lost (ctld/steps.c): not a success */
        if (json_integer_value(json_object_get(a->done, "status")) == 0)
            json_object_set_new(a->done, "status", json_integer(255));
        release_done(o.list[i], a);
    }
}

static void collect(int64_t chan, void *val, void *arg)
{
    (void)chan;
    conn_t ***p = arg;
    *(*p)++ = val;
}

/* The connection to the controller is gone, and with it every channel on it: their
 * clients see their connection close (`ductile run` reports the step lost). */
void apps_ctl_lost(noded_t *d)
{
    size_t n = d->chans ? idmap_count(d->chans) : 0;
    conn_t **all = n ? calloc(n, sizeof(*all)) : NULL, **p = all;
    if (!all)
        return;
    idmap_foreach(d->chans, collect, &p);
    for (size_t i = 0; i < n; i++) {
        app_t *a = conn_data(all[i]);
        if (a) {
            idmap_del(d->chans, a->chan);
            a->chan = 0;
        }
        conn_close_flushed(all[i]);
    }
    free(all);
}

static void on_message(conn_t *c, json_t *msg, void *arg)
{
    noded_t *d = arg;
    app_t *a = conn_data(c);
    const char *type;
    char err[128];
    if (!a || proto_type(msg, &type, err, sizeof(err)) < 0) {
        fail(c, err);
        return;
    }
    if (!strcmp(type, "attach")) {
        on_attach(d, c, a, msg);
        return;
    }
    if (!app_message(type)) {
        relay_out(d, c, a, msg);
        return;
    }
    if (!a->job) {
        fail(c, "attach first");
        return;
    }
    if (!strcmp(type, "ckpt_agents")) { /* any process of the job may ask */
        njob_t *j = idmap_get(d->jobs, a->job);
        json_t *r = json_pack("{s:b}", "ok", 1);
        double t_sync;
        char terr[128];
        if (j && j->ck_agents && proto_num_opt(msg, "t_sync", 0, 1e9, -1, &t_sync, terr,
                                               sizeof(terr)) == 0 && t_sync >= 0) {
            /* Algorithm 5 while the job runs: the controller revises its agent count */
            json_t *x = json_pack("{s:f}", "t_sync", t_sync);
            forward(d, "app_ckpt_sync", a->job, x);
            json_decref(x);
        }
        if (j && j->ck_agents) { /* unknown here (a restarted daemon): the library keeps its */
            json_object_set_new(r, "agents", json_string(j->ck_agents));
            if (!j->ck_seen || strcmp(j->ck_seen, j->ck_agents)) {
                /* the controller stops the agents the job left once it has the list */
                json_t *x = json_pack("{s:s}", "agents", j->ck_agents);
                forward(d, "app_ckpt_seen", a->job, x);
                json_decref(x);
                free(j->ck_seen);
                j->ck_seen = strdup(j->ck_agents);
            }
        }
        reply(c, r);
        return;
    }
    /* Everything but reports (mtct, from any process of the job) is the leader's. */
    if (strcmp(type, "mtct") && !a->leader) {
        fail_code(c, PROTO_E_DENIED, "only the job's leader may do that");
        return;
    }
    int64_t offer, nodes;
    double value;
    bool on;
    const char *answer;
    if (!strcmp(type, "resize_answer")) {
        if (proto_int(msg, "offer", 1, INT64_MAX, &offer, err, sizeof(err)) < 0 ||
            proto_str(msg, "answer", 16, &answer, err, sizeof(err)) < 0 ||
            (strcmp(answer, "accept") && strcmp(answer, "decline"))) {
            fail(c, "resize_answer: offer and answer (accept or decline) required");
            return;
        }
        json_t *x = json_pack("{s:I,s:s}", "offer", (json_int_t)offer, "answer", answer);
        forward(d, "app_answer", a->job, x);
        json_decref(x);
    } else if (!strcmp(type, "resize_commit")) {
        if (proto_int(msg, "offer", 1, INT64_MAX, &offer, err, sizeof(err)) < 0) {
            fail(c, err);
            return;
        }
        json_t *x = json_pack("{s:I}", "offer", (json_int_t)offer);
        forward(d, "app_commit", a->job, x);
        json_decref(x);
    } else if (!strcmp(type, "inhibit")) {
        if (proto_bool_opt(msg, "on", true, &on, err, sizeof(err)) < 0) {
            fail(c, err);
            return;
        }
        json_t *x = json_pack("{s:b}", "on", on);
        forward(d, "app_inhibit", a->job, x);
        json_decref(x);
    } else if (!strcmp(type, "mtct")) {
        if (proto_num_opt(msg, "value", 0, 1e6, 0, &value, err, sizeof(err)) < 0) {
            fail(c, err);
            return;
        }
        json_t *x = json_pack("{s:f}", "value", value);
        forward(d, "app_mtct", a->job, x);
        json_decref(x);
    } else if (!strcmp(type, "request")) {
        if (proto_int(msg, "nodes", 1, 1 << 24, &nodes, err, sizeof(err)) < 0) {
            fail(c, err);
            return;
        }
        json_t *x = json_pack("{s:I}", "nodes", (json_int_t)nodes);
        forward(d, "app_request", a->job, x);
        json_decref(x);
    } else if (!strcmp(type, "limits")) {
        json_t *x = limits_msg(msg, err, sizeof(err));
        if (!x) {
            fail(c, err);
            return;
        }
        forward(d, "app_limits", a->job, x);
        njob_t *j = idmap_get(d->jobs, a->job);
        if (j) { /* kept for the controller's next registration of this node */
            if (!j->limits)
                j->limits = json_object();
            json_object_update(j->limits, x);
        }
        json_decref(x);
    } else if (!strcmp(type, "resize_failed")) {
        const char *why;
        if (proto_int(msg, "offer", 1, INT64_MAX, &offer, err, sizeof(err)) < 0 ||
            proto_str(msg, "reason", 200, &why, err, sizeof(err)) < 0) {
            fail(c, err);
            return;
        }
        json_t *x = json_pack("{s:I,s:s}", "offer", (json_int_t)offer, "reason", why);
        forward(d, "app_resize_failed", a->job, x);
        json_decref(x);
    } else {
        fail(c, "unknown request");
        return;
    }
    reply(c, json_pack("{s:b}", "ok", 1));
}

static void on_close(conn_t *c, void *arg)
{
    noded_t *d = arg;
    app_t *a = conn_data(c);
    if (a && a->chan) {
        idmap_del(d->chans, a->chan);
        if (d->ctl)
            conn_send_new(d->ctl, json_pack("{s:s,s:I}", "type", "relay_close", "chan",
                                            (json_int_t)a->chan));
    }
    if (a && a->leader) {
        njob_t *j = idmap_get(d->jobs, a->job);
        if (j && j->leader == c) {
            j->leader = NULL;
            json_decref(j->limits); /* the next leader says its own */
            j->limits = NULL;
            forward(d, "app_detached", a->job, NULL);
        }
    }
    app_free(a);
}

static const conn_ops_t ops = {.on_message = on_message, .on_close = on_close};

static void on_connection(uv_stream_t *server, int status)
{
    noded_t *d = server->data;
    if (status < 0)
        return;
    /* as large as the controller takes: a job may submit a job */
    conn_cfg_t cc = {.auth = PROTO_AUTH_NONE,
                     .max_payload = (size_t)d->cfg.max_script_size + (1u << 20),
                     /* every user of the node may connect: at most MaxConnectionsPerUser
                      * each, or one user takes every descriptor the daemon has */
                     .guard = peers_guard(d)};
    conn_t *c = conn_accept(server, &cc, &ops, d);
    if (c) {
        app_t *a = calloc(1, sizeof(*a));
        if (!a) {
            conn_close(c);
            return;
        }
        conn_set_data(c, a);
    }
}

int apps_init(noded_t *d, char *err, size_t errlen)
{
    snprintf(d->app_socket, sizeof(d->app_socket), "%s/noded.sock", d->spool);
    unlink(d->app_socket);
    uv_pipe_init(d->loop, &d->apps, 0);
    d->apps.data = d;
    int rc = uv_pipe_bind(&d->apps, d->app_socket);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&d->apps, 128, on_connection);
    if (rc < 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", d->app_socket, uv_strerror(rc));
        return rc;
    }
    chmod(d->app_socket, 0666); /* jobs of every user; the kernel says who connects */
    return 0;
}

/* The controller's offer or withdrawal, for the job's leader. */
void apps_relay(noded_t *d, const json_t *msg)
{
    char err[128];
    int64_t id;
    if (proto_int(msg, "job", 1, INT64_MAX, &id, err, sizeof(err)) < 0)
        return;
    njob_t *j = idmap_get(d->jobs, id);
    if (j && j->leader)
        conn_send(j->leader, msg);
    else if (!strcmp(json_string_value(json_object_get(msg, "type")), "resize_offer"))
        /* nobody to ask: the offer is declined at once */
        noded_send(d, json_pack("{s:s,s:I,s:O,s:s}", "type", "app_answer", "job", (json_int_t)id,
                                "offer", json_object_get(msg, "offer"), "answer", "decline"));
}
