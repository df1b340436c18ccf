/* Steps (`ductile run`): a command started on nodes of a running job, its output and
 * exit codes relayed to the client that asked. A client that goes away takes its step
 * with it; a client whose connection broke, or whose controller restarted, comes back
 * (step_attach) within StepReattachTime and has the step's output from where it had
 * written it out: a step is kept in the database (db_steps.c) and on its nodes until
 * its client has had all of it (step_close), docs/reliability-steps.md.
 *
 * Every task ends exactly once: by its node's report (step_exit), or because its node
 * lost it (the daemon restarted, or the node went down). A node that registers says
 * which tasks it still holds; the others are over (docs/reliability-steps.md).
 *
 * Output is flow-controlled end to end: a node daemon sends at most `window` bytes of a
 * task's output beyond what the client has acknowledged writing out (step_ack from the
 * client, relayed to the node as step_credit). A slow reader slows its task; the
 * controller never holds more than a window per task. */
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
    char *done;           /* per rank: its end is known */
    int64_t *acked;       /* per rank: output offset the client has written out */
    bool direct;          /* output goes from the tasks' nodes to the client's node */
    char *noeof;          /* direct: per rank, no end of output will come to the client's
                           * node: 1, a lost task (its length unknown); 2, its output came
                           * through us after the connection to that node broke */
    char error[200];      /* the first task lost with its node, for the client */
    conn_t *input;        /* who sent the step_input rank 0's node is writing (NULL once
                           * that connection closed: the write is still in flight) */
    bool input_busy;      /* a step_input is at the node, not answered yet */
    bool stdin_open;      /* rank 0 reads the client's standard input (run's "stdin") */
    char *name;           /* its command, for history */
    char *nodelist;
    double start;
    double cpu;           /* the tasks' CPU time so far, s; -1: none measured */
    long long mem;        /* the largest task's peak memory, bytes; -1: none measured */
    int64_t *out;         /* per rank, once ended: how much output it wrote; -1: unknown */
    bool finished;        /* every task has ended: kept until the client has it all */
    bool abandoned;       /* its client is gone for good: forgotten once finished */
    double detached;      /* when its client's link went (0: attached or abandoned) */
    json_t *home;         /* direct: where its client's node takes the output */
} step_t;

/* Its row in the steps table (history), as it starts and as it ends. */
static void step_record(ctld_t *c, const step_t *s, double end)
{
    step_rec_t r = {.job = s->job, .step = s->id, .name = s->name, .nodelist = s->nodelist,
                    .tasks = s->ntasks, .start = s->start, .end = end, .status = s->status,
                    .cpu = s->cpu, .mem = s->mem};
    db_step_put(c, &r);
}

/* Output a task may have in flight beyond the client's acknowledgement: enough to keep
 * a pipe busy, little enough that a step on many nodes stays small in the controller. */
#define STEP_WINDOW_TOTAL (8 << 20)
#define STEP_WINDOW_MIN (64 << 10)
#define STEP_WINDOW_MAX (1 << 20)

static int64_t step_window(int ntasks)
{
    int64_t w = STEP_WINDOW_TOTAL / (ntasks > 0 ? ntasks : 1);
    return w < STEP_WINDOW_MIN ? STEP_WINDOW_MIN : w > STEP_WINDOW_MAX ? STEP_WINDOW_MAX : w;
}

static int64_t key(int64_t job, int step) { return job * 65536 + step; }

static void step_free(step_t *s)
{
    free(s->nodes);
    free(s->done);
    free(s->acked);
    free(s->noeof);
    free(s->out);
    json_decref(s->home);
    free(s->name);
    free(s->nodelist);
    free(s);
}

/* The last task ended: tell the client (status, and what was lost) and forget it. */
static void input_answer(step_t *s, const char *error)
{
    s->input_busy = false;
    if (!s->input)
        return;
    conn_send_new(s->input, error ? proto_err_reply(PROTO_E_NONE, error)
                                  : json_pack("{s:b}", "ok", 1));
    s->input = NULL;
}

/* The step's end for its client: its status, what was lost, and how much output each
 * task wrote (it reads on until it has written that much: after a re-attach the output
 * sent again may come after this). */
static void send_done(step_t *s)
{
    json_t *m = json_pack("{s:s,s:i}", "type", "step_done", "status", s->status);
    if (m && s->error[0])
        json_object_set_new(m, "error", json_string(s->error));
    json_t *out = json_array();
    for (int r = 0; r < s->ntasks && out; r++)
        json_array_append_new(out, json_integer(s->noeof[r] == 1 ? -1 : s->out[r]));
    if (m)
        json_object_set_new(m, "out", out);
    else
        json_decref(out);
    if (m && s->direct) {
        /* the client's node holds this until the output of these ranks has ended */
        json_t *eof = json_array();
        for (int r = 0; r < s->ntasks; r++)
            if (!s->noeof[r])
                json_array_append_new(eof, json_integer(r));
        json_object_set_new(m, "eof", eof);
    }
    conn_send_new(s->client, m);
}

/* Every node of the step: step_kill (tasks still running end; ended ones, kept for a
 * re-attach, are dropped). */
static void step_kill_tasks(ctld_t *c, step_t *s, bool ended_too)
{
    for (int r = 0; r < s->ntasks; r++)
        if (ended_too || !s->done[r])
            nodes_send(c, s->nodes[r], json_pack("{s:s,s:I,s:i}", "type", "step_kill", "job",
                                                (json_int_t)s->job, "step", s->id));
}

/* Its client has had everything, or will never come back: the step is gone everywhere. */
static void step_forget(ctld_t *c, step_t *s)
{
    if (!s->finished) {
        s->status = s->status > 255 ? s->status : 255;
        step_record(c, s, ctld_now());
    }
    step_kill_tasks(c, s, true);
    db_step_live_del(c, s->job, s->id);
    idmap_del(c->steps, key(s->job, s->id));
    step_free(s);
}

static void step_finish(ctld_t *c, step_t *s)
{
    s->finished = true;
    step_record(c, s, ctld_now());
    input_answer(s, "the step has ended");
    if (s->client)
        send_done(s);
    else if (s->abandoned)
        step_forget(c, s);
}

static const char *node_name(const ctld_t *c, int i)
{
    return i >= 0 && i < c->nnodes ? c->nodes[i].name : "?";
}

/* Rank r ended with status st, having written out bytes (-1: unknown; why: a printf
 * format taking the node's name, for a task lost with its node). Returns true when
 * that ended the step (which may then be gone). */
static bool task_end(ctld_t *c, step_t *s, int r, int st, const char *why, int64_t out)
{
    if (r < 0 || r >= s->ntasks || s->done[r])
        return false; /* a duplicate report */
    s->done[r] = 1;
    if (why && s->noeof)
        s->noeof[r] = 1;
    s->out[r] = out;
    if (st > s->status)
        s->status = st;
    if (why && !s->error[0]) {
        char what[128];
        snprintf(what, sizeof(what), why, node_name(c, s->nodes[r]));
        snprintf(s->error, sizeof(s->error), "task %d: %s", r, what);
    }
    db_step_task_put(c, s->job, s->id, r, node_name(c, s->nodes[r]), true, st,
                     s->noeof[r] == 1 ? -1 : out);
    if (s->error[0]) /* (also set before, by a node whose output was lost) */
        db_step_live_put(c, s->job, s->id, s->error);
    if (--s->left > 0) {
        /* A step that lost a task is over, as with srun: its other tasks are killed
         * and report their ends (a node that cannot is lost in turn). */
        if (why)
            step_kill_tasks(c, s, false);
        return false;
    }
    step_finish(c, s);
    return true;
}

static void fail(conn_t *conn, const char *msg)
{
    conn_send_new(conn, proto_err_reply(PROTO_E_NONE, msg));
}

/* Where the client's node takes the step's output directly (docs/architecture.md,
 * "Step output"): the client is relayed by a node daemon that listens for other nodes.
 * NULL: the output comes through us (a client on the controller's or a login host). */
static json_t *step_home(conn_t *conn)
{
    conn_t *carrier = conn_carrier(conn);
    node_t *h = carrier ? conn_data(carrier) : NULL;
    if (!h || h->conn != carrier || h->step_port <= 0)
        return NULL;
    char addr[64];
    if (!nodes_addr(h, addr, sizeof(addr)))
        return NULL;
    return json_pack("{s:s,s:s,s:i,s:I}", "node", h->name, "addr", addr, "port", h->step_port,
                     "chan", (json_int_t)conn_channel_id(conn));
}

void steps_run(ctld_t *c, conn_t *conn, const json_t *m)
{
    char err[256];
    int64_t id, n, um;
    const char *node, *cwd;
    const json_t *argv, *env;
    if (proto_int(m, "job", 1, INT64_MAX, &id, err, sizeof(err)) < 0 ||
        proto_int_opt(m, "umask", -1, 0777, -1, &um, err, sizeof(err)) < 0 ||
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
        job_t *done = j ? NULL : db_job_find_finished(c, id);
        snprintf(err, sizeof(err), j || done ? "job %lld is not running" : "job %lld does not exist",
                 (long long)id);
        job_free(done);
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
            char *nl = nodes_format(c, j->alloc, j->nalloc);
            snprintf(err, sizeof(err), "node %s is not in job %lld's allocation (%s)", node,
                     (long long)id, nl ? nl : "?");
            free(nl);
            fail(conn, err);
            return;
        }
    } else {
        int want = n > 0 && n < j->nalloc ? (int)n : j->nalloc;
        if (n > j->nalloc) {
            free(nodes);
            snprintf(err, sizeof(err), "job %lld has %d node%s, not %lld", (long long)id,
                     j->nalloc, j->nalloc == 1 ? "" : "s", (long long)n);
            fail(conn, err);
            return;
        }
        for (; k < want; k++)
            nodes[k] = j->alloc[k];
    }
    step_t *s = calloc(1, sizeof(*s));
    json_t *home = step_home(conn);
    if (s) {
        s->done = calloc((size_t)k, 1);
        s->acked = calloc((size_t)k, sizeof(int64_t));
        s->noeof = calloc((size_t)k, 1);
        s->out = malloc((size_t)k * sizeof(int64_t));
    }
    if (!s || !s->done || !s->acked || !s->noeof || !s->out) {
        if (s)
            step_free(s);
        json_decref(home);
        free(nodes);
        fail(conn, "out of memory");
        return;
    }
    s->job = id;
    s->id = ++j->nsteps;
    s->client = conn;
    s->ntasks = s->left = k;
    s->nodes = nodes;
    s->direct = home != NULL;
    s->home = json_incref(home);
    s->stdin_open = json_is_true(json_object_get(m, "stdin"));
    s->cpu = -1;
    s->mem = -1;
    s->start = ctld_now();
    const char *cmd = json_string_value(json_array_get(argv, 0)), *slash = strrchr(cmd, '/');
    s->name = strdup(slash ? slash + 1 : cmd);
    idmap_put(c->steps, key(id, s->id), s);
    char *nl = nodes_format(c, nodes, k);
    s->nodelist = nl ? strdup(nl) : NULL;
    step_record(c, s, 0);
    db_step_live_put(c, id, s->id, NULL);
    for (int r = 0; r < k; r++) {
        s->out[r] = -1;
        db_step_task_put(c, id, s->id, r, node_name(c, nodes[r]), false, 0, 0);
    }
    for (int r = 0; r < k; r++) {
        json_t *env2 = env ? json_deep_copy(env) : json_array();
        char buf[64];
        snprintf(buf, sizeof(buf), "DUCTILE_NPROCS=%d", k);
        json_array_append_new(env2, json_string(buf));
        json_t *msg = json_pack("{s:s,s:I,s:i,s:i,s:I,s:I,s:s,s:O,s:o,s:s,s:I}",
                                "type", "step_start",
                                "job", (json_int_t)id,
                                "step", s->id,
                                "rank", r,
                                "uid", (json_int_t)j->uid,
                                "gid", (json_int_t)j->gid,
                                "cwd", cwd,
                                "argv", argv,
                                "env", env2,
                                "nodelist", nl ? nl : "",
                                "window", (json_int_t)step_window(k));
        if (msg && home)
            json_object_set(msg, "home", home);
        if (msg && r == 0 && s->stdin_open)
            json_object_set_new(msg, "stdin", json_true());
        if (msg && um >= 0) /* the `ductile run` command's, for its tasks */
            json_object_set_new(msg, "umask", json_integer(um));
        if (nodes_send(c, nodes[r], msg) < 0)
            s->done[r] = 2; /* the node is unreachable: that task fails at once */
    }
    free(nl);
    json_t *rep = json_pack("{s:b,s:I,s:i,s:i,s:I}", "ok", 1, "job", (json_int_t)id, "step", s->id,
                            "tasks", k, "window", (json_int_t)step_window(k));
    if (rep && home)
        json_object_set_new(rep, "direct", json_true());
    json_decref(home);
    conn_send_new(conn, rep);
    for (int r = 0; r < k; r++)
        if (s->done[r] == 2) {
            s->done[r] = 0;
            if (task_end(c, s, r, 255, "node %s is not reachable", -1))
                return;
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
    if (rank >= s->ntasks || s->done[rank])
        return; /* not a rank of the step, or one that ended already */
    if (!strcmp(type, "step_output")) {
        const char *data = json_string_value(json_object_get(msg, "data"));
        c->step_bytes_relayed += data ? (int64_t)(strlen(data) / 4 * 3) : 0;
        if (s->client)
            conn_send(s->client, msg);
        return;
    }
    int64_t kind, code, mem;
    double cpu;
    if (proto_num_opt(msg, "cpu", 0, 1e12, -1, &cpu, err, sizeof(err)) == 0 && cpu >= 0)
        s->cpu = (s->cpu > 0 ? s->cpu : 0) + cpu;
    if (proto_int_opt(msg, "mem", 0, INT64_MAX, -1, &mem, err, sizeof(err)) == 0 && mem > s->mem)
        s->mem = mem;
    proto_int_opt(msg, "kind", 0, 2, 0, &kind, err, sizeof(err));
    proto_int_opt(msg, "code", -1000, 1000, 0, &code, err, sizeof(err));
    int st = kind == 1 ? 128 + (int)code : kind == 2 ? 127 : (int)code;
    if (json_is_false(json_object_get(msg, "eof")))
        s->noeof[rank] = 1; /* it never started: its message came through us */
    else if (json_is_true(json_object_get(msg, "indirect")) && !s->noeof[rank])
        s->noeof[rank] = 2; /* its output came through us: its length still counts */
    if (json_is_true(json_object_get(msg, "output_lost"))) {
        /* its node could not reach the client's node: what it printed is lost */
        s->noeof[rank] = 1;
        if (!s->error[0])
            snprintf(s->error, sizeof(s->error),
                     "task %d: its output was lost (node %s could not reach the client's node)",
                     (int)rank, c->nodes[s->nodes[rank]].name);
        if (st == 0)
            st = 255;
    }
    int64_t out;
    proto_int_opt(msg, "out", 0, INT64_MAX, -1, &out, err, sizeof(err));
    task_end(c, s, (int)rank, st, NULL, out);
}

/* The client wrote out a rank's output up to offset: let its node send more. */
void steps_ack(ctld_t *c, conn_t *conn, const json_t *msg)
{
    char err[128];
    int64_t job, step, rank, offset;
    if (proto_int(msg, "job", 1, INT64_MAX, &job, err, sizeof(err)) < 0 ||
        proto_int(msg, "step", 1, 65535, &step, err, sizeof(err)) < 0 ||
        proto_int(msg, "rank", 0, 1 << 24, &rank, err, sizeof(err)) < 0 ||
        proto_int(msg, "offset", 0, INT64_MAX, &offset, err, sizeof(err)) < 0)
        return; /* acknowledgements get no reply: the client is reading its stream */
    step_t *s = idmap_get(c->steps, key(job, (int)step));
    if (!s || s->client != conn || rank >= s->ntasks || s->done[rank] ||
        offset <= s->acked[rank])
        return;
    s->acked[rank] = offset;
    nodes_send(c, s->nodes[rank], json_pack("{s:s,s:I,s:i,s:i,s:I}",
                                           "type", "step_credit",
                                           "job", (json_int_t)job,
                                           "step", (int)step,
                                           "rank", (int)rank,
                                           "offset", (json_int_t)offset));
}

/* --- tasks lost with their node ------------------------------------------------------ */

typedef struct collect {
    step_t **v;
    size_t n;
} collect_t;

static void collect_one(int64_t k, void *val, void *arg)
{
    (void)k;
    collect_t *cl = arg;
    cl->v[cl->n++] = val;
}

/* The steps, copied out: ending a task may free its step, and the map must not change
 * under idmap_foreach. NULL (with *n = 0) when there are none or memory ran out. */
static step_t **steps_snapshot(ctld_t *c, size_t *n)
{
    *n = 0;
    if (!c->steps || idmap_count(c->steps) == 0)
        return NULL;
    collect_t cl = {.v = malloc(idmap_count(c->steps) * sizeof(step_t *))};
    if (!cl.v)
        return NULL;
    idmap_foreach(c->steps, collect_one, &cl);
    *n = cl.n;
    return cl.v;
}

static bool node_reports(const json_t *held, const step_t *s, int rank)
{
    size_t i;
    const json_t *e;
    json_array_foreach(held, i, e)
    {
        if (json_integer_value(json_object_get(e, "job")) == s->job &&
            json_integer_value(json_object_get(e, "step")) == s->id &&
            json_integer_value(json_object_get(e, "rank")) == rank)
            return true;
    }
    return false;
}

/* Tasks the node holds that belong to no step of ours (a controller restarted, or their
 * client left while the node was away): nobody reads their output, so they end now,
 * instead of blocking on their output until their job ends. Step numbers go on after
 * the highest one held, so that a new step is never taken for an old one. */
static void end_unknown_tasks(ctld_t *c, node_t *n, const json_t *held)
{
    size_t i;
    const json_t *e;
    json_array_foreach(held, i, e)
    {
        int64_t job = json_integer_value(json_object_get(e, "job"));
        int64_t step = json_integer_value(json_object_get(e, "step"));
        int64_t rank = json_integer_value(json_object_get(e, "rank"));
        if (job < 1 || step < 1 || step > 65535 || rank < 0)
            continue;
        job_t *j = idmap_get(c->jobs, job);
        if (j && j->nsteps < step)
            j->nsteps = (int)step;
        step_t *s = idmap_get(c->steps, key(job, (int)step));
        if (s && rank < s->ntasks && !s->done[rank] && s->nodes[rank] == n->index)
            continue;
        nodes_send(c, n->index, json_pack("{s:s,s:I,s:I}", "type", "step_kill", "job",
                                          (json_int_t)job, "step", (json_int_t)step));
    }
}

/* Rank r's output again, from offset `from`, to the client (or its node's home). */
static void resend(ctld_t *c, step_t *s, int r, int64_t from)
{
    json_t *m = json_pack("{s:s,s:I,s:i,s:i,s:I}", "type", "step_resend", "job",
                          (json_int_t)s->job, "step", s->id, "rank", r, "from", (json_int_t)from);
    if (m && s->home)
        json_object_set(m, "home", s->home);
    nodes_send(c, s->nodes[r], m);
}

void steps_node_registered(ctld_t *c, node_t *n, const json_t *reg)
{
    const json_t *held = json_object_get(reg, "steps");
    bool first = json_is_true(json_object_get(reg, "first"));
    size_t ns;
    step_t **v = steps_snapshot(c, &ns);
    for (size_t k = 0; k < ns; k++) {
        step_t *s = v[k];
        /* its answer to a step_input may have been lost while it was away: the sender
         * stops waiting (and ends the input, which the node takes even mid-write) */
        if (s->input_busy && s->nodes[0] == n->index)
            input_answer(s, "the node of the step's first task was away: input may be lost");
        for (int r = 0; r < s->ntasks; r++) {
            if (s->done[r] || s->nodes[r] != n->index)
                continue;
            if (json_is_array(held) && node_reports(held, s, r)) {
                /* Still there: output sent as its connection went may be lost, and
                 * credits sent while it was away: again from what the client has
                 * acknowledged (it drops what it has already written). */
                if (s->client)
                    resend(c, s, r, s->acked[r]);
                continue;
            }
            if (task_end(c, s, r, 255,
                         first ? "node %s restarted" : "node %s no longer has the task", -1))
                break; /* the step is over */
        }
    }
    free(v);
    end_unknown_tasks(c, n, held);
}

void steps_node_lost(ctld_t *c, node_t *n)
{
    size_t ns;
    step_t **v = steps_snapshot(c, &ns);
    for (size_t k = 0; k < ns; k++) {
        step_t *s = v[k];
        for (int r = 0; r < s->ntasks; r++)
            if (!s->done[r] && s->nodes[r] == n->index && task_end(c, s, r, 255, "node %s is down", -1))
                break;
    }
    free(v);
}

typedef struct gone {
    ctld_t *c;
    conn_t *conn;
} gone_t;

/* Its client is gone for good: its tasks end, and once they have it is forgotten. */
static void abandon(ctld_t *c, step_t *s)
{
    s->client = NULL;
    s->abandoned = true;
    s->detached = 0;
    if (s->finished)
        step_forget(c, s);
    else
        step_kill_tasks(c, s, false); /* their reports are dropped */
}

void steps_conn_closed(ctld_t *c, conn_t *conn)
{
    size_t ns;
    step_t **v = steps_snapshot(c, &ns);
    for (size_t k = 0; k < ns; k++) {
        step_t *s = v[k];
        if (s->input == conn)
            s->input = NULL; /* its input's sender went away: nothing to answer */
        if (s->client != conn)
            continue;
        if (conn_link_lost(conn) && c->cfg.step_reattach_time > 0) {
            /* a reset, or the node daemon it came through lost us: it may come back */
            s->client = NULL;
            s->detached = ctld_now();
            continue;
        }
        abandon(c, s); /* it closed its connection: it ended (or was killed) */
    }
    free(v);
}

/* Steps whose client has not come back within StepReattachTime are abandoned. */
void steps_tick(ctld_t *c, double now)
{
    size_t ns;
    step_t **v = steps_snapshot(c, &ns);
    for (size_t k = 0; k < ns; k++) {
        step_t *s = v[k];
        if (s->client || !s->detached || now - s->detached < c->cfg.step_reattach_time)
            continue;
        fprintf(stderr, "ductiled: step %d of job %lld: its client did not come back within "
                "StepReattachTime (%g s): %s\n", s->id, (long long)s->job,
                c->cfg.step_reattach_time, s->finished ? "forgotten" : "its tasks are ended");
        abandon(c, s);
    }
    free(v);
}

/* Does job j hold node i (committed, or joining an expand)? */
static bool job_on_node(const job_t *j, int i)
{
    int n = j->nalloc + (j->state == JS_RESIZING && j->resize_target > j->nalloc ? j->nresize : 0);
    for (int q = 0; q < n; q++)
        if (j->alloc[q] == i)
            return true;
    return false;
}

/* step_attach {job, step, offsets: [per rank, how much output the client has written
 * out]}: a client whose connection broke takes its step up again. */
void steps_attach(ctld_t *c, conn_t *conn, const json_t *m)
{
    char err[256];
    int64_t job, step;
    if (proto_int(m, "job", 1, INT64_MAX, &job, err, sizeof(err)) < 0 ||
        proto_int(m, "step", 1, 65535, &step, err, sizeof(err)) < 0) {
        fail(conn, err);
        return;
    }
    const json_t *offsets = json_object_get(m, "offsets");
    step_t *s = idmap_get(c->steps, key(job, (int)step));
    job_t *j = idmap_get(c->jobs, job);
    if (!s || s->abandoned) {
        snprintf(err, sizeof(err), "step %d of job %lld is no longer known: %s", (int)step,
                 (long long)job,
                 j ? "its client was away longer than StepReattachTime, and it was ended"
                   : "the job has ended");
        fail(conn, err);
        return;
    }
    if (!j || (conn_uid(conn) != j->uid && conn_uid(conn) != 0)) {
        fail(conn, "permission denied: not your job");
        return;
    }
    if (offsets && (!json_is_array(offsets) || json_array_size(offsets) > (size_t)s->ntasks)) {
        fail(conn, "offsets: one per task of the step");
        return;
    }
    if (s->client && s->client != conn)
        fprintf(stderr, "ductiled: step %d of job %lld: its client came back on a new "
                "connection\n", s->id, (long long)s->job);
    s->client = conn;
    s->detached = 0;
    json_decref(s->home);
    s->home = step_home(conn);
    s->direct = s->home != NULL; /* where this client is */
    json_t *rep = json_pack("{s:b,s:I,s:i,s:i,s:I}", "ok", 1, "job", (json_int_t)job, "step",
                            s->id, "tasks", s->ntasks, "window",
                            (json_int_t)step_window(s->ntasks));
    if (rep && s->direct)
        json_object_set_new(rep, "direct", json_true());
    conn_send_new(conn, rep);
    for (int r = 0; r < s->ntasks; r++) {
        json_int_t from = json_integer_value(json_array_get(offsets, (size_t)r));
        if (from < 0)
            from = 0;
        if (from > s->acked[r])
            s->acked[r] = from;
        if (s->done[r] && !job_on_node(j, s->nodes[r]))
            s->noeof[r] = 1; /* its node left the job (a shrink): it kept nothing of it */
        else if (!s->noeof[r])
            resend(c, s, r, s->acked[r]);
    }
    if (s->finished)
        send_done(s);
}

/* step_close: the client has had the step's end and all its output. */
void steps_close(ctld_t *c, conn_t *conn, const json_t *m)
{
    char err[128];
    int64_t job, step;
    if (proto_int(m, "job", 1, INT64_MAX, &job, err, sizeof(err)) < 0 ||
        proto_int(m, "step", 1, 65535, &step, err, sizeof(err)) < 0)
        return; /* no reply: the client is on its way out */
    step_t *s = idmap_get(c->steps, key(job, (int)step));
    if (s && s->client == conn && s->finished)
        step_forget(c, s);
}

/* At start: the steps that ran (or had not been had whole by their client) when the
 * controller stopped, taken up again for their clients to re-attach; those of jobs that
 * no longer run are forgotten. */
void steps_restore(ctld_t *c)
{
    json_t *all = db_steps_live(c);
    size_t i;
    json_t *o;
    int n = 0;
    json_array_foreach(all, i, o)
    {
        int64_t job = json_integer_value(json_object_get(o, "job"));
        int id = (int)json_integer_value(json_object_get(o, "step"));
        const json_t *tasks = json_object_get(o, "tasks");
        int k = (int)json_array_size(tasks);
        job_t *j = idmap_get(c->jobs, job);
        step_t *s = k > 0 && j && (j->state == JS_RUNNING || j->state == JS_RESIZING)
                        ? calloc(1, sizeof(*s))
                        : NULL;
        if (s) {
            s->done = calloc((size_t)k, 1);
            s->acked = calloc((size_t)k, sizeof(int64_t));
            s->noeof = calloc((size_t)k, 1);
            s->out = calloc((size_t)k, sizeof(int64_t));
            s->nodes = calloc((size_t)k, sizeof(int));
        }
        if (!s || !s->done || !s->acked || !s->noeof || !s->out || !s->nodes) {
            if (s)
                step_free(s);
            db_step_live_del(c, job, id); /* (db_steps_close_open ends its history row) */
            continue;
        }
        s->job = job;
        s->id = id;
        s->ntasks = k;
        s->name = strdup(json_string_value(json_object_get(o, "name")));
        s->nodelist = strdup(json_string_value(json_object_get(o, "nodelist")));
        s->start = json_real_value(json_object_get(o, "start"));
        s->cpu = json_real_value(json_object_get(o, "cpu"));
        s->mem = (long long)json_integer_value(json_object_get(o, "mem"));
        snprintf(s->error, sizeof(s->error), "%s",
                 json_string_value(json_object_get(o, "error")) ?: "");
        s->detached = ctld_now();
        for (int r = 0; r < k; r++) {
            const json_t *t = json_array_get(tasks, (size_t)r);
            s->nodes[r] = config_node_index(&c->cfg, json_string_value(json_object_get(t, "node")));
            const json_t *st = json_object_get(t, "status");
            if (json_is_integer(st)) {
                s->done[r] = 1;
                s->out[r] = json_integer_value(json_object_get(t, "out"));
                s->noeof[r] = s->out[r] < 0;
                if (json_integer_value(st) > s->status)
                    s->status = (int)json_integer_value(st);
            } else {
                s->out[r] = -1;
                s->left++;
            }
        }
        s->finished = s->left == 0;
        if (j->nsteps < id)
            j->nsteps = id;
        idmap_put(c->steps, key(job, id), s);
        /* a task whose node is no longer configured is lost with it */
        for (int r = 0; r < k; r++)
            if (!s->done[r] && s->nodes[r] < 0 &&
                task_end(c, s, r, 255, "node %s is no longer configured", -1))
                break;
        n++;
    }
    json_decref(all);
    if (n)
        fprintf(stderr, "ductiled: %d step%s taken up again: %s clients may re-attach within "
                "StepReattachTime (%g s)\n", n, n > 1 ? "s" : "", n > 1 ? "their" : "its",
                c->cfg.step_reattach_time);
}

void steps_input(ctld_t *c, conn_t *conn, const json_t *m)
{
    char err[128];
    int64_t job, step;
    bool eof;
    const char *data;
    if (proto_int(m, "job", 1, INT64_MAX, &job, err, sizeof(err)) < 0 ||
        proto_int(m, "step", 1, 65535, &step, err, sizeof(err)) < 0 ||
        proto_bool_opt(m, "eof", false, &eof, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "data", 1 << 20, NULL, &data, err, sizeof(err)) < 0) {
        fail(conn, err);
        return;
    }
    if (eof == (data != NULL)) {
        fail(conn, "give either data or eof");
        return;
    }
    step_t *s = idmap_get(c->steps, key(job, (int)step));
    job_t *j = idmap_get(c->jobs, job);
    if (!s || !j || s->done[0] || !s->stdin_open) {
        fail(conn, "the step's first task has ended or reads no input");
        return;
    }
    if (conn_uid(conn) != j->uid && conn_uid(conn) != 0) {
        fail(conn, "permission denied: not your job");
        return;
    }
    if (s->input_busy) { /* (even when its sender has gone: its write is in flight) */
        fail(conn, "one chunk of input at a time: wait for the answer to the last");
        return;
    }
    json_t *msg = json_pack("{s:s,s:I,s:i}", "type", "step_input", "job", (json_int_t)job, "step",
                            (int)step);
    if (msg && eof)
        json_object_set_new(msg, "eof", json_true());
    else if (msg && data)
        json_object_set_new(msg, "data", json_string(data));
    if (nodes_send(c, s->nodes[0], msg) < 0) {
        fail(conn, "the node of the step's first task is not reachable");
        return;
    }
    if (eof)
        s->stdin_open = false;
    s->input = conn;
    s->input_busy = true;
}

void steps_on_input_ack(ctld_t *c, node_t *n, const json_t *msg)
{
    char err[128];
    int64_t job, step;
    if (proto_int(msg, "job", 1, INT64_MAX, &job, err, sizeof(err)) < 0 ||
        proto_int(msg, "step", 1, 65535, &step, err, sizeof(err)) < 0)
        return;
    step_t *s = idmap_get(c->steps, key(job, (int)step));
    if (!s || s->nodes[0] != n->index)
        return;
    input_answer(s, json_string_value(json_object_get(msg, "error")));
}
