#define _GNU_SOURCE
/* Tasks of `ductile run` on this node: started on the controller's word, their output
 * read from FIFOs and forwarded, their end reported. They belong to a job: the job's
 * clean-up signals them and waits for them like its batch script.
 *
 * Flow control: each chunk of output carries its offset in the task's output; we send
 * at most `window` bytes beyond the offset the client acknowledged (step_credit), then
 * stop reading the FIFOs, so the task blocks in write() instead of the cluster
 * buffering its output. While the controller is away we stop reading too and keep the
 * task's end until we are registered again: a reconnection loses neither.
 *
 * Re-attaching (docs/reliability-steps.md): what we sent and the client has not
 * acknowledged is kept (a window at most), and a task that ended stays, with its end,
 * until the controller forgets its step (step_kill), so that a client that lost its
 * connection, or a controller that restarted, can have it again from any offset
 * (step_resend); the client drops what it had already written. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "b64.h"
#include "noded.h"

typedef struct task task_t;

typedef struct outpipe {
    uv_pipe_t pipe;
    task_t *t;
    int stream; /* 1 stdout, 2 stderr; 0: the standard input (rank 0, ductile run) */
    bool open;
    char path[4200];
} outpipe_t;

struct task {
    noded_t *d;
    task_t *next;
    int64_t job;
    int step, rank;
    launch_proc_t *proc;
    outpipe_t out[2];
    outpipe_t in;      /* its standard input, written from the client's (rank 0) */
    bool in_writing;   /* a step_input is being written into it (one at a time) */
    bool reaped, reported;
    bool forgotten;    /* unlinked: freed once its handles have closed */
    int kind, code;
    int handles_open;
    int64_t sent;      /* bytes of output read and sent (the next chunk's offset) */
    int64_t acked;     /* the client wrote out everything before this offset */
    int64_t window;    /* 0: no flow control */
    bool reading;      /* the FIFOs are being read */
    json_t *held;      /* chunks read while the controller was away (an array, at most one
                          per stream: reading stops at the first), sent on its return */
    json_t *unacked;   /* chunks sent that the client has not acknowledged, in order (only
                          under flow control: a window at most) */
    json_t *exit_msg;  /* its step_exit once sent: sent again at each registration */
    /* Direct output (peers.c): to the daemon of the client's node, not the controller */
    int64_t home_chan; /* the client's channel there; 0: output goes to the controller */
    int64_t peer;      /* our connection to that daemon (peers_find) */
    bool home_lost;    /* it broke: the output is read and dropped, the loss reported */
    bool eof_sent;
};

static void report_if_done(task_t *t);

static void unlink_task(noded_t *d, task_t *t)
{
    for (task_t **p = &d->tasks; *p; p = &(*p)->next)
        if (*p == t) {
            *p = t->next;
            return;
        }
}

static void free_task(task_t *t)
{
    launch_cleanup(t->proc);
    json_decref(t->held);
    json_decref(t->unacked);
    json_decref(t->exit_msg);
    free(t);
}

/* A chunk's decoded length, from its base64 text. */
static int64_t chunk_len(const json_t *m)
{
    const char *data = json_string_value(json_object_get(m, "data"));
    size_t n = data ? strlen(data) : 0;
    int64_t len = (int64_t)(n / 4 * 3);
    if (n >= 1 && data[n - 1] == '=')
        len--;
    if (n >= 2 && data[n - 2] == '=')
        len--;
    return len;
}

/* m went out: keep it until the client acknowledges it. */
static void sent_chunk(task_t *t, json_t *m)
{
    if (t->window <= 0)
        return; /* no flow control (a killed step's drain): nobody will ask again */
    if (!t->unacked)
        t->unacked = json_array();
    if (t->unacked)
        json_array_append(t->unacked, m);
}

/* Chunks wholly before the acknowledged offset are written out: dropped. */
static void trim_unacked(task_t *t)
{
    while (t->unacked && json_array_size(t->unacked) > 0) {
        const json_t *m = json_array_get(t->unacked, 0);
        if (json_integer_value(json_object_get(m, "offset")) + chunk_len(m) > t->acked)
            break;
        json_array_remove(t->unacked, 0);
    }
}

static void on_pipe_closed(uv_handle_t *h)
{
    outpipe_t *o = h->data;
    task_t *t = o->t;
    if (--t->handles_open == 0 && t->forgotten)
        free_task(t);
}

static void close_out(outpipe_t *o)
{
    if (!o->open)
        return;
    o->open = false;
    unlink(o->path);
    noded_close((uv_handle_t *)&o->pipe, on_pipe_closed);
}

/* --- standard input: step_input from the client, through the controller --- */

typedef struct inreq {
    uv_write_t req;
    noded_t *d;
    task_t *t; /* alive until the write's callback: its pipe is closed before it is freed */
    int64_t job;
    int step;
    char *buf;
} inreq_t;

static void send_input_ack(noded_t *d, int64_t job, int step, const char *error)
{
    json_t *m = json_pack("{s:s,s:I,s:i}", "type", "step_input_ack", "job", (json_int_t)job,
                          "step", step);
    if (m && error)
        json_object_set_new(m, "error", json_string(error));
    noded_send(d, m);
}

static void on_input_written(uv_write_t *req, int status)
{
    inreq_t *r = (inreq_t *)req;
    r->t->in_writing = false;
    send_input_ack(r->d, r->job, r->step,
                   status < 0 ? "the task no longer reads its standard input" : NULL);
    free(r->buf);
    free(r);
}

/* A FIFO the task reads as its standard input: we hold it open for reading and writing
 * (neither open blocks), so the task sees its end only once we close it. */
static int open_input(noded_t *d, task_t *t, uid_t uid, gid_t gid)
{
    outpipe_t *o = &t->in;
    o->t = t;
    o->stream = 0;
    snprintf(o->path, sizeof(o->path), "%s/step%lld.%d.%d.0", d->spool, (long long)t->job,
             t->step, t->rank);
    if (mkfifo(o->path, 0600) < 0 && errno != EEXIST)
        return -errno;
    if (geteuid() == 0 && chown(o->path, uid, gid) < 0) {
        int e = errno;
        unlink(o->path);
        return -e;
    }
    int fd = open(o->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        unlink(o->path);
        return -e;
    }
    uv_pipe_init(d->loop, &o->pipe, 0);
    o->pipe.data = o;
    o->open = true; /* closed by close_out, which unlinks it, whatever follows */
    t->handles_open++;
    if (uv_pipe_open(&o->pipe, fd) < 0) {
        close(fd);
        close_out(o);
        return -EIO;
    }
    return 0;
}

static task_t *find_task(noded_t *d, int64_t job, int step, int rank);

void steps_on_input(noded_t *d, const json_t *msg)
{
    char err[128];
    int64_t job, step;
    if (proto_int(msg, "job", 1, INT64_MAX, &job, err, sizeof(err)) < 0 ||
        proto_int(msg, "step", 1, 65535, &step, err, sizeof(err)) < 0)
        return;
    task_t *t = find_task(d, job, (int)step, 0);
    if (!t || !t->in.open) {
        send_input_ack(d, job, (int)step, "the task has ended");
        return;
    }
    if (json_is_true(json_object_get(msg, "eof"))) {
        /* the task reads its end once the data before it is read (a write still under
         * way is cancelled: its sender gave up on it) */
        close_out(&t->in);
        send_input_ack(d, job, (int)step, NULL);
        return;
    }
    if (t->in_writing) { /* the controller sends one at a time: a repeat, not queued */
        send_input_ack(d, job, (int)step, "one chunk of input at a time");
        return;
    }
    const char *data = json_string_value(json_object_get(msg, "data"));
    size_t len = data ? strlen(data) : 0;
    inreq_t *r = data ? calloc(1, sizeof(*r)) : NULL;
    char *buf = r && len <= (1u << 20) ? malloc(len / 4 * 3 + 3) : NULL;
    long n = buf ? b64_decode(data, buf) : -1;
    if (n < 0) {
        free(buf);
        free(r);
        send_input_ack(d, job, (int)step, "bad input data");
        return;
    }
    *r = (inreq_t){.d = d, .t = t, .job = job, .step = (int)step, .buf = buf};
    uv_buf_t b = uv_buf_init(buf, (unsigned)n);
    if (uv_write(&r->req, (uv_stream_t *)&t->in.pipe, &b, 1, on_input_written) < 0) {
        free(buf);
        free(r);
        send_input_ack(d, job, (int)step, "the task no longer reads its standard input");
        return;
    }
    t->in_writing = true;
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    (void)suggested;
    buf->base = malloc(32768);
    buf->len = buf->base ? 32768 : 0;
}

static void read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);

static bool may_read(const task_t *t)
{
    if (t->home_chan) /* credits still come from the controller */
        return t->home_lost || t->window <= 0 || t->sent - t->acked < t->window;
    return t->d->registered && !t->held && (t->window <= 0 || t->sent - t->acked < t->window);
}

/* Start or stop reading the task's output as the window and the connection allow. */
static void update_reading(task_t *t)
{
    bool want = may_read(t);
    if (want == t->reading)
        return;
    t->reading = want;
    for (int k = 0; k < 2; k++) {
        if (!t->out[k].open)
            continue;
        if (want)
            uv_read_start((uv_stream_t *)&t->out[k].pipe, alloc_cb, read_cb);
        else
            uv_read_stop((uv_stream_t *)&t->out[k].pipe);
    }
}

static void read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    outpipe_t *o = s->data;
    task_t *t = o->t;
    if (n > 0) {
        char *enc = malloc(b64_encoded_len((size_t)n) + 1);
        json_t *m = NULL;
        if (enc) {
            b64_encode(buf->base, (size_t)n, enc);
            m = json_pack("{s:s,s:I,s:i,s:i,s:i,s:I,s:s}",
                          "type", "step_output",
                          "job", (json_int_t)t->job,
                          "step", t->step,
                          "rank", t->rank,
                          "stream", o->stream,
                          "offset", (json_int_t)t->sent,
                          "data", enc);
            free(enc);
        }
        t->sent += n;
        if (t->home_chan) {
            conn_t *home = t->home_lost ? NULL : peers_find(t->d, t->peer);
            if (m)
                json_object_set_new(m, "chan", json_integer(t->home_chan));
            if (!home || !m || conn_send(home, m) < 0)
                t->home_lost = true;
            else
                sent_chunk(t, m);
            json_decref(m);
        } else if (m && !t->held && t->d->registered && t->d->ctl && conn_send(t->d->ctl, m) == 0) {
            sent_chunk(t, m);
            json_decref(m);
        } else if (m) {
            /* the controller is away: keep it, in order, for its return */
            if (!t->held)
                t->held = json_array();
            json_array_append_new(t->held, m);
        }
    }
    free(buf->base);
    if (n < 0) {
        close_out(o);
        report_if_done(t);
    } else if (!t->reported) {
        update_reading(t);
    }
}

/* To the client's node: this task's output has ended. */
static void send_eof(task_t *t)
{
    conn_t *home = t->home_lost ? NULL : peers_find(t->d, t->peer);
    if (!home || conn_send_new(home, json_pack("{s:s,s:I,s:I,s:i,s:i}", "type", "step_eof",
                                               "chan", (json_int_t)t->home_chan, "job",
                                               (json_int_t)t->job, "step", t->step,
                                               "rank", t->rank)) < 0)
        t->home_lost = true;
    t->eof_sent = true;
}

/* The task is over once its main process is reaped and its output has ended. */
static void report_if_done(task_t *t)
{
    if (t->reaped)
        close_out(&t->in); /* nobody reads it any more */
    if (t->reported || !t->reaped || t->out[0].open || t->out[1].open || t->held)
        return;
    if (t->home_chan && !t->eof_sent)
        send_eof(t); /* the home hands the client the step's end only after every output */
    /* Kept until the controller has heard it: it may be away for a moment. */
    json_t *ex = json_pack("{s:s,s:I,s:i,s:i,s:i,s:i}", "type", "step_exit", "job",
                           (json_int_t)t->job, "step", t->step, "rank", t->rank, "kind",
                           t->kind, "code", t->code);
    if (ex && t->home_chan && t->home_lost)
        json_object_set_new(ex, "output_lost", json_true());
    double cpu;
    long long mem;
    launch_usage(t->proc, &cpu, &mem); /* for history: the task's use */
    if (ex && cpu >= 0)
        json_object_set_new(ex, "cpu", json_real(cpu));
    if (ex && mem >= 0)
        json_object_set_new(ex, "mem", json_integer(mem));
    if (ex) /* how much it wrote: its client waits for all of it */
        json_object_set_new(ex, "out", json_integer(t->sent));
    if (!ex || noded_send(t->d, json_incref(ex)) < 0) {
        json_decref(ex);
        return;
    }
    /* It stays, ended, until the controller forgets its step (step_kill): its end and
     * its unacknowledged output may be asked for again. */
    t->reported = true;
    t->exit_msg = ex;
}

/* An ended task the controller no longer needs: gone. */
static void forget_task(task_t *t)
{
    unlink_task(t->d, t);
    t->forgotten = true;
    if (t->handles_open == 0)
        free_task(t);
}

/* A line for the client's stderr ("ductile run: why"), as the task's own output would
 * be. The buffer is sized from the line itself: sizing it from `why` alone overflowed
 * it by the prefix (found by tests/fuzz/fuzz_noded.c). */
static void send_error_line(noded_t *d, int64_t job, int step, int rank, const char *why)
{
    char line[LAUNCH_ERRLEN + 64];
    snprintf(line, sizeof(line), "ductile run: %s\n", why);
    char *enc = malloc(b64_encoded_len(strlen(line)) + 1);
    if (!enc)
        return;
    b64_encode(line, strlen(line), enc);
    noded_send(d, json_pack("{s:s,s:I,s:i,s:i,s:i,s:s}",
                            "type", "step_output",
                            "job", (json_int_t)job,
                            "step", step,
                            "rank", rank,
                            "stream", 2,
                            "data", enc));
    free(enc);
}

static void fail_start(noded_t *d, int64_t job, int step, int rank, const char *why)
{
    send_error_line(d, job, step, rank, why);
    /* its message went through the controller: no end of output to wait for elsewhere */
    noded_send(d, json_pack("{s:s,s:I,s:i,s:i,s:i,s:i,s:b}", "type", "step_exit", "job",
                            (json_int_t)job, "step", step, "rank", rank, "kind", 2, "code", 127,
                            "eof", 0));
}

/* A FIFO the task writes and we read; a dummy writer keeps it from reading as ended
 * before the task has opened it. */
static int open_fifo(noded_t *d, outpipe_t *o, uid_t uid, gid_t gid, int *dummy)
{
    if (mkfifo(o->path, 0600) < 0 && errno != EEXIST)
        return -errno;
    if (geteuid() == 0 && chown(o->path, uid, gid) < 0)
        return -errno;
    int fd = open(o->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    *dummy = open(o->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    uv_pipe_init(d->loop, &o->pipe, 0);
    o->pipe.data = o;
    if (uv_pipe_open(&o->pipe, fd) < 0) {
        close(fd);
        return -EIO;
    }
    o->open = true;
    o->t->handles_open++;
    return 0;
}

/* step_start's "home": the output goes to the daemon of the client's node. */
static void set_home(noded_t *d, task_t *t, const json_t *home)
{
    char err[64];
    const char *addr;
    int64_t port, chan;
    if (!json_is_object(home) ||
        proto_str(home, "addr", 63, &addr, err, sizeof(err)) < 0 ||
        proto_int(home, "port", 1, 65535, &port, err, sizeof(err)) < 0 ||
        proto_int(home, "chan", 1, INT64_MAX, &chan, err, sizeof(err)) < 0)
        return;
    t->home_chan = chan;
    t->peer = peers_get(d, addr, (int)port);
    t->home_lost = t->peer == 0;
}

void steps_on_start(noded_t *d, const json_t *msg)
{
    char err[LAUNCH_ERRLEN];
    int64_t job, step, rank, uid, gid, window;
    const char *cwd;
    const json_t *argv_j, *env_j;
    if (proto_int(msg, "job", 1, INT64_MAX, &job, err, sizeof(err)) < 0 ||
        proto_int(msg, "step", 1, 65535, &step, err, sizeof(err)) < 0 ||
        proto_int(msg, "rank", 0, 1 << 24, &rank, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "uid", 0, UINT32_MAX - 1, 0, &uid, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "gid", 0, UINT32_MAX - 1, 0, &gid, err, sizeof(err)) < 0 ||
        proto_int_opt(msg, "window", 0, INT64_MAX, 0, &window, err, sizeof(err)) < 0 ||
        proto_str(msg, "cwd", 4096, &cwd, err, sizeof(err)) < 0 ||
        proto_strarray_opt(msg, "argv", 4096, 131072, &argv_j, err, sizeof(err)) < 0 ||
        proto_strarray_opt(msg, "env", 4096, 131072, &env_j, err, sizeof(err)) < 0 || !argv_j ||
        json_array_size(argv_j) == 0) {
        fprintf(stderr, "ductile-noded %s: bad step_start: %s\n", d->name, err);
        return;
    }
    const njob_t *nj = idmap_get(d->jobs, job);
    if (!nj) {
        fail_start(d, job, (int)step, (int)rank, "the job does not run on this node");
        return;
    }
    uid_t ruid = geteuid() == 0 ? (uid_t)uid : geteuid();
    gid_t rgid = geteuid() == 0 ? (gid_t)gid : getegid();
    task_t *t = calloc(1, sizeof(*t));
    if (!t)
        return;
    t->d = d;
    t->job = job;
    t->step = (int)step;
    t->rank = (int)rank;
    t->window = window;
    set_home(d, t, json_object_get(msg, "home"));
    int dummy[2] = {-1, -1};
    for (int s = 0; s < 2; s++) {
        t->out[s].t = t;
        t->out[s].stream = s + 1;
        snprintf(t->out[s].path, sizeof(t->out[s].path), "%s/step%lld.%d.%d.%d", d->spool,
                 (long long)job, (int)step, (int)rank, s + 1);
    }
    size_t na = json_array_size(argv_j), ne = env_j ? json_array_size(env_j) : 0;
    char **argv = calloc(na + 1, sizeof(char *));
    char **env = calloc(ne + 1, sizeof(char *));
    for (size_t i = 0; i < na; i++)
        argv[i] = (char *)json_string_value(json_array_get(argv_j, i));
    size_t k = 0;
    for (size_t i = 0; i < ne; i++) {
        const char *e = json_string_value(json_array_get(env_j, i));
        if (strchr(e, '='))
            env[k++] = (char *)e;
    }
    char tag[48];
    snprintf(tag, sizeof(tag), "step%d.%d", (int)step, (int)rank);
    char kv[5 + SLURMENV_STEP_MAX][SLURMENV_STEP_LEN];
    snprintf(kv[0], sizeof(kv[0]), "DUCTILE_STEP_ID=%d", (int)step);
    snprintf(kv[1], sizeof(kv[1]), "DUCTILE_PROCID=%d", (int)rank);
    snprintf(kv[2], sizeof(kv[2]), "DUCTILE_NODENAME=%s", d->name);
    snprintf(kv[3], sizeof(kv[3]), "DUCTILE_NODED_SOCKET=%s", d->app_socket);
    /* a step started from outside the job (a login host) is inside it all the same */
    snprintf(kv[4], sizeof(kv[4]), "DUCTILE_JOB_ID=%lld", (long long)job);
    int um = noded_umask(msg);
    int nkv = 5 + slurmenv_step(d, job, (int)step, (int)rank, um, kv + 5);
    const char *extra[5 + SLURMENV_STEP_MAX];
    for (int q = 0; q < nkv; q++)
        extra[q] = kv[q];
    char **fenv = launch_env_build(env, extra, (size_t)nkv);
    int rc = -EIO;
    bool want_in = rank == 0 && json_is_true(json_object_get(msg, "stdin"));
    if (fenv && open_fifo(d, &t->out[0], ruid, rgid, &dummy[0]) == 0 &&
        open_fifo(d, &t->out[1], ruid, rgid, &dummy[1]) == 0 &&
        (!want_in || open_input(d, t, ruid, rgid) == 0)) {
        launch_spec_t spec = {
            .argv = argv,
            .envp = fenv,
            .cwd = cwd,
            .stdout_path = t->out[0].path,
            .stderr_path = t->out[1].path,
            .stdin_path = want_in ? t->in.path : NULL,
            .job_id = job,
            .node_name = d->name,
            .tag = tag,
            .uid = ruid,
            .gid = rgid,
            .set_umask = um >= 0,
            .umask = (mode_t)(um >= 0 ? um : 0),
            .cgroup_parent = d->cgroup_parent[0] ? d->cgroup_parent : NULL,
            /* each task's cgroup, as the script's (none where the node has no such
             * controller: `ductile nodes` says so, each start need not find out) */
            .mem_max = d->limits & LAUNCH_LIMIT_MEMORY ? nj->mem_mb << 20 : 0,
            .pids_max = d->limits & LAUNCH_LIMIT_PIDS ? d->cfg.max_procs_per_job : 0,
        };
        rc = launch_start(&spec, &t->proc, err, sizeof(err));
    } else {
        snprintf(err, sizeof(err), "cannot set up the task's output: %s", strerror(errno));
    }
    for (int s = 0; s < 2; s++)
        if (dummy[s] >= 0)
            close(dummy[s]);
    launch_env_free(fenv);
    free(argv);
    free(env);
    t->next = d->tasks;
    d->tasks = t;
    if (rc < 0) {
        t->reaped = true;
        t->kind = 2;
        t->code = 127;
        send_error_line(d, job, t->step, t->rank, err);
        close_out(&t->out[0]);
        close_out(&t->out[1]);
        close_out(&t->in);
        report_if_done(t);
        return;
    }
    update_reading(t);
}

static task_t *find_task(noded_t *d, int64_t job, int step, int rank)
{
    for (task_t *t = d->tasks; t; t = t->next)
        if (t->job == job && t->step == step && t->rank == rank)
            return t;
    return NULL;
}

void steps_on_credit(noded_t *d, const json_t *msg)
{
    char err[128];
    int64_t job, step, rank, offset;
    if (proto_int(msg, "job", 1, INT64_MAX, &job, err, sizeof(err)) < 0 ||
        proto_int(msg, "step", 1, 65535, &step, err, sizeof(err)) < 0 ||
        proto_int(msg, "rank", 0, 1 << 24, &rank, err, sizeof(err)) < 0 ||
        proto_int(msg, "offset", 0, INT64_MAX, &offset, err, sizeof(err)) < 0)
        return;
    task_t *t = find_task(d, job, (int)step, (int)rank);
    if (!t)
        return;
    if (offset > t->sent)
        offset = t->sent; /* nobody acknowledges what we never sent */
    if (offset > t->acked)
        t->acked = offset;
    trim_unacked(t);
    if (!t->reported)
        update_reading(t);
}

/* step_resend: the step's client came back (or the controller did): its output again
 * from offset `from` (the client has written out what came before), to its new home
 * when it has one; the end of the output to that home again when it has ended. */
void steps_on_resend(noded_t *d, const json_t *msg)
{
    char err[128];
    int64_t job, step, rank, from;
    if (proto_int(msg, "job", 1, INT64_MAX, &job, err, sizeof(err)) < 0 ||
        proto_int(msg, "step", 1, 65535, &step, err, sizeof(err)) < 0 ||
        proto_int(msg, "rank", 0, 1 << 24, &rank, err, sizeof(err)) < 0 ||
        proto_int(msg, "from", 0, INT64_MAX, &from, err, sizeof(err)) < 0)
        return;
    task_t *t = find_task(d, job, (int)step, (int)rank);
    const json_t *home = json_object_get(msg, "home");
    if (!t) {
        /* gone with its job's part here (a shrink cleaned it up): nothing more of its
         * output will come, which its client's node must hear, or it waits for it */
        task_t gone = {.d = d, .job = job, .step = (int)step, .rank = (int)rank};
        set_home(d, &gone, home);
        if (gone.home_chan)
            send_eof(&gone);
        return;
    }
    if (json_is_object(home)) {
        t->home_chan = 0;
        set_home(d, t, home);
    } else {
        t->home_chan = 0, t->home_lost = false;
    }
    if (from > t->sent)
        from = t->sent;
    if (from > t->acked)
        t->acked = from;
    trim_unacked(t);
    conn_t *to = t->home_chan ? (t->home_lost ? NULL : peers_find(d, t->peer)) : d->ctl;
    size_t i;
    json_t *m;
    json_array_foreach(t->unacked, i, m)
    {
        json_t *c = json_deep_copy(m);
        if (c && t->home_chan)
            json_object_set_new(c, "chan", json_integer(t->home_chan));
        else if (c)
            json_object_del(c, "chan");
        if (!to || !c || conn_send(to, c) < 0) {
            json_decref(c);
            if (t->home_chan)
                t->home_lost = true;
            break;
        }
        json_decref(c);
    }
    if (t->home_chan && t->reported)
        send_eof(t); /* its output had ended: say so to the new home */
    else if (t->home_chan)
        t->eof_sent = false; /* (the new home hears it when the task is reported) */
    if (!t->reported)
        update_reading(t);
}

json_t *steps_report(noded_t *d)
{
    json_t *arr = json_array();
    for (task_t *t = d->tasks; t && arr; t = t->next)
        json_array_append_new(arr, json_pack("{s:I,s:i,s:i,s:b}",
                                             "job", (json_int_t)t->job,
                                             "step", t->step,
                                             "rank", t->rank,
                                             "ended", t->reported));
    return arr;
}

void steps_on_registered(noded_t *d)
{
    task_t *next;
    for (task_t *t = d->tasks; t; t = next) {
        next = t->next;
        while (t->held && json_array_size(t->held) > 0 &&
               noded_send(d, json_incref(json_array_get(t->held, 0))) == 0) {
            sent_chunk(t, json_array_get(t->held, 0));
            json_array_remove(t->held, 0);
        }
        if (t->held && json_array_size(t->held) == 0) {
            json_decref(t->held);
            t->held = NULL;
        }
        if (t->reported) /* it may not have reached the controller before it went */
            noded_send(d, json_incref(t->exit_msg));
        else
            report_if_done(t);
    }
    for (task_t *t = d->tasks; t; t = t->next)
        update_reading(t);
}

void steps_signal(noded_t *d, int64_t job, int step, int sig)
{
    task_t *next;
    for (task_t *t = d->tasks; t; t = next) {
        next = t->next;
        if (t->job != job || (step != 0 && t->step != step))
            continue;
        if (t->reported) {
            if (sig == SIGKILL) /* its step is over for the controller too */
                forget_task(t);
            continue;
        }
        if (t->proc)
            launch_signal(t->proc, sig);
        if (sig == SIGKILL) {
            /* Nobody will read its output any more: drain it so the task can end. */
            t->window = 0;
            update_reading(t);
        }
    }
}

void steps_on_kill(noded_t *d, const json_t *msg)
{
    char err[128];
    int64_t job, step;
    if (proto_int(msg, "job", 1, INT64_MAX, &job, err, sizeof(err)) < 0 ||
        proto_int(msg, "step", 1, 65535, &step, err, sizeof(err)) < 0)
        return;
    steps_signal(d, job, (int)step, SIGKILL);
}

void steps_forget_job(noded_t *d, int64_t job)
{
    task_t *next;
    for (task_t *t = d->tasks; t; t = next) {
        next = t->next;
        if (t->job == job && t->reported)
            forget_task(t);
    }
}

bool steps_job_gone(noded_t *d, int64_t job)
{
    for (task_t *t = d->tasks; t; t = t->next)
        if (t->job == job && !(t->reaped && (!t->proc || launch_all_gone(t->proc))))
            return false;
    return true;
}

bool steps_owns_pid(noded_t *d, pid_t pid)
{
    for (task_t *t = d->tasks; t; t = t->next)
        if (t->proc && launch_pid(t->proc) == pid)
            return true;
    return false;
}

void steps_reap(noded_t *d)
{
    task_t *next;
    for (task_t *t = d->tasks; t; t = next) {
        next = t->next;
        int status;
        if (t->reaped || !t->proc || launch_reap(t->proc, &status) != 1)
            continue;
        t->reaped = true;
        t->kind = WIFSIGNALED(status) ? 1 : 0;
        t->code = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
        report_if_done(t);
    }
}
