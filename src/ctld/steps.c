/* Steps (`ductile run`): a command started on nodes of a running job, its output and
 * exit codes relayed to the client that asked. A client that goes away takes its step
 * with it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld.h"
#include "hostlist.h"

typedef struct step {
    int64_t job;
    int id;
    conn_t *client;
    int ntasks, left;
    int status;           /* the largest exit status of the tasks */
    int *nodes;
} step_t;

static int64_t key(int64_t job, int step) { return job * 65536 + step; }

static void fail(conn_t *conn, const char *msg)
{
    conn_send_new(conn, json_pack("{s:b,s:s}", "ok", 0, "error", msg));
}

void steps_run(ctld_t *c, conn_t *conn, const json_t *m)
{
    char err[256];
    int64_t id, n;
    const char *node, *cwd;
    const json_t *argv, *env;
    if (proto_int(m, "job", 1, INT64_MAX, &id, err, sizeof(err)) < 0 ||
        proto_int_opt(m, "nodes", 0, 1 << 24, 0, &n, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "node", 63, NULL, &node, err, sizeof(err)) < 0 ||
        proto_str(m, "cwd", 4096, &cwd, err, sizeof(err)) < 0 ||
        proto_strarray_opt(m, "argv", 4096, 131072, &argv, err, sizeof(err)) < 0 ||
        proto_strarray_opt(m, "env", 4096, 131072, &env, err, sizeof(err)) < 0) {
        fail(conn, err);
        return;
    }
    if (!argv || json_array_size(argv) == 0) {
        fail(conn, "no command to run");
        return;
    }
    job_t *j = idmap_get(c->jobs, id);
    if (!j || (j->state != JS_RUNNING && j->state != JS_RESIZING)) {
        snprintf(err, sizeof(err), "job %lld is not running", (long long)id);
        fail(conn, err);
        return;
    }
    if (conn_uid(conn) != j->uid && conn_uid(conn) != 0) {
        fail(conn, "permission denied: not your job");
        return;
    }
    /* While an expand waits for the application, its new nodes already hold the job:
     * the application starts its new processes there before it commits. */
    int usable = j->nalloc;
    if (j->state == JS_RESIZING && j->resize_target > j->nalloc)
        usable += j->nresize;
    int *nodes = malloc((size_t)usable * sizeof(int)), k = 0;
    if (!nodes) {
        fail(conn, "out of memory");
        return;
    }
    if (node) {
        int i = config_node_index(&c->cfg, node);
        for (int q = 0; q < usable && i >= 0; q++)
            if (j->alloc[q] == i)
                nodes[k++] = i;
        if (!k) {
            free(nodes);
            snprintf(err, sizeof(err), "node %s is not in job %lld's allocation", node,
                     (long long)id);
            fail(conn, err);
            return;
        }
    } else {
        int want = n > 0 && n < j->nalloc ? (int)n : j->nalloc;
        if (n > j->nalloc) {
            free(nodes);
            snprintf(err, sizeof(err), "job %lld has %d nodes, not %lld", (long long)id,
                     j->nalloc, (long long)n);
            fail(conn, err);
            return;
        }
        for (; k < want; k++)
            nodes[k] = j->alloc[k];
    }
    step_t *s = calloc(1, sizeof(*s));
    if (!s) {
        free(nodes);
        fail(conn, "out of memory");
        return;
    }
    s->job = id;
    s->id = ++j->nsteps;
    s->client = conn;
    s->ntasks = s->left = k;
    s->nodes = nodes;
    idmap_put(c->steps, key(id, s->id), s);
    char *nl = nodes_format(c, nodes, k);
    for (int r = 0; r < k; r++) {
        json_t *env2 = env ? json_deep_copy(env) : json_array();
        char buf[64];
        snprintf(buf, sizeof(buf), "DUCTILE_NPROCS=%d", k);
        json_array_append_new(env2, json_string(buf));
        json_t *msg = json_pack("{s:s,s:I,s:i,s:i,s:I,s:I,s:s,s:O,s:o,s:s}", "type",
                                "step_start", "job", (json_int_t)id, "step", s->id, "rank", r,
                                "uid", (json_int_t)j->uid, "gid", (json_int_t)j->gid, "cwd", cwd,
                                "argv", argv, "env", env2, "nodelist", nl ? nl : "");
        if (nodes_send(c, nodes[r], msg) < 0) {
            /* the node is unreachable: that task fails at once */
            s->left--;
            s->status = 255;
        }
    }
    free(nl);
    conn_send_new(conn, json_pack("{s:b,s:i,s:i}", "ok", 1, "step", s->id, "tasks", k));
    if (s->left == 0) {
        conn_send_new(conn, json_pack("{s:s,s:i}", "type", "step_done", "status", s->status));
        idmap_del(c->steps, key(id, s->id));
        free(s->nodes);
        free(s);
    }
}

void steps_on_node_message(ctld_t *c, const json_t *msg, const char *type)
{
    char err[128];
    int64_t job, step, rank;
    if (proto_int(msg, "job", 1, INT64_MAX, &job, err, sizeof(err)) < 0 ||
        proto_int(msg, "step", 1, 65535, &step, err, sizeof(err)) < 0 ||
        proto_int(msg, "rank", 0, 1 << 24, &rank, err, sizeof(err)) < 0)
        return;
    step_t *s = idmap_get(c->steps, key(job, (int)step));
    if (!s)
        return; /* its client is gone */
    if (!strcmp(type, "step_output")) {
        if (s->client)
            conn_send(s->client, msg);
        return;
    }
    int64_t kind, code;
    proto_int_opt(msg, "kind", 0, 2, 0, &kind, err, sizeof(err));
    proto_int_opt(msg, "code", -1000, 1000, 0, &code, err, sizeof(err));
    int st = kind == 1 ? 128 + (int)code : kind == 2 ? 127 : (int)code;
    if (st > s->status)
        s->status = st;
    if (--s->left > 0)
        return;
    if (s->client)
        conn_send_new(s->client, json_pack("{s:s,s:i}", "type", "step_done", "status", s->status));
    idmap_del(c->steps, key(job, (int)step));
    free(s->nodes);
    free(s);
}

typedef struct gone {
    ctld_t *c;
    conn_t *conn;
} gone_t;

static void kill_if_client(int64_t k, void *val, void *arg)
{
    (void)k;
    gone_t *g = arg;
    step_t *s = val;
    if (s->client != g->conn)
        return;
    s->client = NULL; /* the step's tasks are killed; their reports are dropped */
    for (int r = 0; r < s->ntasks; r++)
        nodes_send(g->c, s->nodes[r], json_pack("{s:s,s:I,s:i}", "type", "step_kill", "job",
                                                (json_int_t)s->job, "step", s->id));
}

void steps_conn_closed(ctld_t *c, conn_t *conn)
{
    if (!c->steps)
        return;
    gone_t g = {.c = c, .conn = conn};
    idmap_foreach(c->steps, kill_if_client, &g);
}
