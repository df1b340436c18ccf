/* libductile's process layer: the connection to the node daemon and the offers. */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "errors.h"
#include "ductile.h"
#include "dt_internal.h"

static client_t *conn;
static long long job_id;
static char last_error[512];
/* Replies to requests and offers share one connection: offers that arrive while we
 * wait for a reply are kept here, in order. */
static json_t *pending;
static json_t *early_limits; /* set before dt_attach */
/* The MPI layer's watchdog (dt_mpi.c) may report a failed resize from its thread while
 * the main thread uses the connection: one request at a time. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int fail(int rc, const char *msg)
{
    snprintf(last_error, sizeof(last_error), "%s", msg);
    return rc;
}

const char *dt_strerror(void) { return last_error; }

static bool is_offer(const json_t *m)
{
    const char *t = json_string_value(json_object_get(m, "type"));
    return t && (!strcmp(t, "resize_offer") || !strcmp(t, "resize_withdraw") ||
                 !strcmp(t, "nodes_lost"));
}

/* Sends a request and waits for its reply (kept in *reply when asked, to free);
 * offers meanwhile are queued. */
static int request_reply_locked(json_t *req, json_t **reply)
{
    char err[512];
    if (!conn) {
        json_decref(req);
        return fail(-ENOTCONN, "not attached (dt_attach first)");
    }
    int rc = client_send(conn, req, err, sizeof(err));
    json_decref(req);
    if (rc < 0)
        return fail(rc, err);
    for (;;) {
        json_t *m;
        rc = client_recv(conn, &m, 30, err, sizeof(err));
        if (rc < 0)
            return fail(rc, err);
        if (is_offer(m)) {
            json_array_append_new(pending, m);
            continue;
        }
        bool ok = json_is_true(json_object_get(m, "ok"));
        rc = 0;
        if (!ok) { /* the refusal's code as an errno (docs/protocol.md, "Errors") */
            const char *words = json_string_value(json_object_get(m, "error"));
            const char *code = json_string_value(json_object_get(m, "code"));
            proto_err_t e = code ? proto_err_parse(code) : proto_err_classify(words ? words : "");
            rc = fail(proto_err_errno(e), words ? words : "refused");
        }
        if (ok && reply)
            *reply = m;
        else
            json_decref(m);
        return rc;
    }
}

static int request_locked(json_t *req) { return request_reply_locked(req, NULL); }

static int request(json_t *req)
{
    pthread_mutex_lock(&mu);
    int rc = request_locked(req);
    pthread_mutex_unlock(&mu);
    return rc;
}

int dt_attach(int leader)
{
    if (conn)
        return 0;
    const char *sock = getenv("DUCTILE_NODED_SOCKET"), *id = getenv("DUCTILE_JOB_ID");
    if (!sock || !id)
        return fail(-ENOENT, "not inside a Ductile job (DUCTILE_NODED_SOCKET, DUCTILE_JOB_ID)");
    job_id = atoll(id);
    char err[512];
    int rc = client_open_unix(sock, &conn, err, sizeof(err));
    if (rc < 0)
        return fail(rc, err);
    pending = json_array();
    json_t *req = json_pack("{s:s,s:I,s:s}", "type", "attach", "job", (json_int_t)job_id, "role",
                            leader ? "leader" : "member");
    if (leader && early_limits)
        json_object_set(req, "limits", early_limits);
    rc = request(req);
    if (rc < 0) {
        client_close(conn);
        conn = NULL;
    }
    return rc;
}

void dt_detach(void)
{
    client_close(conn);
    conn = NULL;
    json_decref(pending);
    pending = NULL;
}

static void fill(dt_offer_t *o, const json_t *m)
{
    memset(o, 0, sizeof(*o));
    const char *type = json_string_value(json_object_get(m, "type"));
    const char *op = json_string_value(json_object_get(m, "op"));
    o->id = (long)json_integer_value(json_object_get(m, "offer"));
    o->op = !strcmp(type, "resize_withdraw") ? DT_WITHDRAWN
            : !strcmp(type, "nodes_lost")    ? DT_LOST
            : op && !strcmp(op, "expand")    ? DT_EXPAND
                                             : DT_SHRINK;
    o->before = (int)json_integer_value(json_object_get(m, "before"));
    o->after = (int)json_integer_value(json_object_get(m, "after"));
    o->timeout = json_number_value(json_object_get(m, "timeout"));
    o->window = json_number_value(json_object_get(m, "window"));
    const json_t *nodes = json_object_get(m, "nodes");
    o->nnodes = json_is_array(nodes) ? (int)json_array_size(nodes) : 0;
    for (int i = 0; i < o->nnodes && i < 64; i++)
        snprintf(o->nodes[i], DT_NAME_MAX, "%s", json_string_value(json_array_get(nodes, (size_t)i)));
    const char *nl = json_string_value(json_object_get(m, "nodelist"));
    snprintf(o->nodelist, sizeof(o->nodelist), "%s", nl ? nl : "");
}

static int wait_offer_locked(dt_offer_t *offer, double timeout)
{
    if (!conn)
        return fail(-ENOTCONN, "not attached (dt_attach first)");
    if (json_array_size(pending)) {
        fill(offer, json_array_get(pending, 0));
        json_array_remove(pending, 0);
        return 1;
    }
    char err[512];
    json_t *m;
    int rc = client_recv(conn, &m, timeout, err, sizeof(err));
    if (rc == -ETIMEDOUT)
        return 0;
    if (rc < 0)
        return fail(rc, err);
    if (!is_offer(m)) {
        json_decref(m); /* a stray reply: nothing to do with it */
        return 0;
    }
    fill(offer, m);
    json_decref(m);
    return 1;
}

int dt_wait_offer(dt_offer_t *offer, double timeout)
{
    pthread_mutex_lock(&mu);
    int rc = wait_offer_locked(offer, timeout);
    pthread_mutex_unlock(&mu);
    return rc;
}

int dt_poll_offer(dt_offer_t *offer) { return dt_wait_offer(offer, 0); }

static int answer(const dt_offer_t *o, const char *what)
{
    return request(json_pack("{s:s,s:I,s:I,s:s}", "type", "resize_answer", "job",
                             (json_int_t)job_id, "offer", (json_int_t)o->id, "answer", what));
}

int dt_offer_accept(const dt_offer_t *o) { return answer(o, "accept"); }
int dt_offer_decline(const dt_offer_t *o) { return answer(o, "decline"); }

int dt_offer_commit(const dt_offer_t *o)
{
    return request(json_pack("{s:s,s:I,s:I}", "type", "resize_commit", "job", (json_int_t)job_id,
                             "offer", (json_int_t)o->id));
}

/* A member's connection of its own, for a process that never attached (a rigid
 * application checkpointing through agents): attaching as a member changes nothing
 * for the job, and never receives offers. */
static client_t *probe_conn;

static int member_call(json_t *req, json_t **reply)
{
    char err[256];
    const char *sock = getenv("DUCTILE_NODED_SOCKET"), *id = getenv("DUCTILE_JOB_ID");
    int rc = 0;
    if (!probe_conn) {
        json_t *att = sock && id ? json_pack("{s:s,s:I,s:s}", "type", "attach", "job",
                                             (json_int_t)atoll(id), "role", "member") : NULL;
        json_t *r = NULL;
        rc = !att ? -ENOENT : client_open_unix(sock, &probe_conn, err, sizeof(err));
        if (rc == 0)
            rc = client_call(probe_conn, att, &r, 10, err, sizeof(err));
        json_decref(att);
        json_decref(r);
        if (rc < 0 && probe_conn) {
            client_close(probe_conn);
            probe_conn = NULL;
        }
    }
    if (rc == 0 && id)
        json_object_set_new(req, "job", json_integer(atoll(id)));
    if (rc == 0 && (rc = client_call(probe_conn, req, reply, 10, err, sizeof(err))) < 0) {
        client_close(probe_conn); /* a new one next time */
        probe_conn = NULL;
    }
    json_decref(req);
    return rc;
}

int dt_agents_query(char *list, size_t len, double t_sync)
{
    pthread_mutex_lock(&mu);
    json_t *r = NULL, *req = json_pack("{s:s,s:I}", "type", "ckpt_agents", "job",
                                       (json_int_t)job_id);
    if (t_sync >= 0) /* the controller revises the agent count by it (Algorithm 5) */
        json_object_set_new(req, "t_sync", json_real(t_sync));
    int rc = conn ? request_reply_locked(req, &r) : member_call(req, &r);
    if (rc == 0) {
        const char *a = json_string_value(json_object_get(r, "agents"));
        if (a && strlen(a) < len) {
            memcpy(list, a, strlen(a) + 1);
            rc = 1;
        }
    }
    json_decref(r);
    pthread_mutex_unlock(&mu);
    return rc;
}

int dt_set_inhibit(int on)
{
    return request(json_pack("{s:s,s:I,s:b}", "type", "inhibit", "job", (json_int_t)job_id, "on", on));
}

int dt_report_mtct(double mtct)
{
    return request(json_pack("{s:s,s:I,s:f}", "type", "mtct", "job", (json_int_t)job_id, "value", mtct));
}

int dt_request_nodes(int nodes)
{
    return request(json_pack("{s:s,s:I,s:i}", "type", "request", "job", (json_int_t)job_id, "nodes",
                             nodes));
}

/* Limits set before dt_attach go with the attach, so that no offer precedes them. */
static int send_limits(json_t *fields)
{
    if (!conn) {
        if (!early_limits)
            early_limits = json_object();
        json_object_update(early_limits, fields);
        json_decref(fields);
        return 0;
    }
    json_object_set_new(fields, "type", json_string("limits"));
    json_object_set_new(fields, "job", json_integer(job_id));
    return request(fields);
}

int dt_set_size_limits(int min_nodes, int max_nodes, int preferred)
{
    if (min_nodes < 1 || max_nodes < 0 || (max_nodes && max_nodes < min_nodes) || preferred < 0 ||
        (preferred && (preferred < min_nodes || (max_nodes && preferred > max_nodes))))
        return fail(-EINVAL, "size limits: need 1 <= min <= preferred <= max (max 0: none, "
                             "preferred 0: none)");
    return send_limits(json_pack("{s:i,s:i,s:i}", "min", min_nodes, "max", max_nodes, "preferred",
                                 preferred));
}

int dt_set_survive_loss(int on)
{
    return send_limits(json_pack("{s:i}", "survive", on ? 1 : 0));
}

int dt_set_offer_interval(double seconds)
{
    if (!(seconds >= 0 && seconds <= 1e7))
        return fail(-EINVAL, "offer interval: seconds must be between 0 and 1e7");
    return send_limits(json_pack("{s:f}", "interval", seconds));
}

int dt_resize_failed(const dt_offer_t *o, const char *why)
{
    return request(json_pack("{s:s,s:I,s:I,s:s}", "type", "resize_failed", "job",
                             (json_int_t)job_id, "offer", (json_int_t)o->id, "reason",
                             why && *why ? why : "the application could not adapt"));
}
