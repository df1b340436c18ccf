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
 * (step_resend); the client drops what it had already written.
 *
 * Surviving our own restart: each task has a record in the spool (task.JOB.STEP.RANK),
 * its shepherd writes its status beside it (.status) and holds its output FIFOs open,
 * so the task neither dies of SIGPIPE nor loses what waits in them while no daemon
 * reads, and what we read and the client has not acknowledged is appended to a log
 * beside it (.log) before it is sent. A daemon that starts again takes the task up from
 * those (steps_recover): its offsets go on, what was unacknowledged can be sent again. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
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
    bool adopted;      /* taken up from an earlier incarnation's record (steps_recover) */
    bool went_indirect; /* the connection to the client's node broke: output went through
                          the controller, which the end says (that node waits for none) */
    bool with_stdin;   /* its standard input comes from the client (rank 0) */
    const char *lost;  /* taken up but it cannot go on (why): killed, ended with 255 */
    bool lost_said;    /* that line went to the client */
    bool forgotten;    /* unlinked: freed once its handles have closed */
    int log_fd;        /* the log of output read and not acknowledged; -1: none */
    int64_t log_size;
    int kind, code;
    int handles_open;
    int64_t sent;      /* bytes of output read and sent (the next chunk's offset) */
    int64_t acked;     /* the client wrote out everything before this offset */
    int64_t window;    /* 0: no flow control */
    bool reading;      /* the FIFOs are being read */
    json_t *held;      /* chunks read while the controller was away (an array: reading
                          stops at the first, but chunks to send again may join it), sent
                          on its return */
    json_t *unacked;   /* chunks sent that the client has not acknowledged, in order (only
                          under flow control: a window at most) */
    json_t *exit_msg;  /* its step_exit once sent: sent again at each registration */
    /* Direct output (peers.c): to the daemon of the client's node, not the controller.
     * When that connection breaks (the daemon restarted, or cannot be reached), the
     * output goes through the controller again, from what the client acknowledged. */
    int64_t home_chan; /* the client's channel there; 0: output goes to the controller */
    int64_t peer;      /* our connection to that daemon (peers_find) */
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

/* Its files in the spool: the record (suffix ""), ".status", ".log". */
static void task_file(const noded_t *d, int64_t job, int step, int rank, const char *suffix,
                      char *buf, size_t len)
{
    snprintf(buf, len, "%s/task.%lld.%d.%d%s", d->spool, (long long)job, step, rank, suffix);
}

static void task_forget_files(const task_t *t)
{
    static const char *const suffixes[] = {"", ".status", ".log", ".log.tmp", ".tmp"};
    char path[4400];
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(*suffixes); i++) {
        task_file(t->d, t->job, t->step, t->rank, suffixes[i], path, sizeof(path));
        unlink(path);
    }
}

static void free_task(task_t *t)
{
    if (t->log_fd >= 0)
        close(t->log_fd);
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

/* --- the log of unacknowledged output (survives our restart) --- */

struct logrec {
    int64_t offset;
    int32_t stream;
    int32_t len;
};

static void log_drop(task_t *t, const char *why)
{
    if (t->log_fd < 0)
        return;
    char path[4400];
    task_file(t->d, t->job, t->step, t->rank, ".log", path, sizeof(path));
    fprintf(stderr, "ductile-noded %s: step %d of job %lld: cannot keep task %d's output in "
            "%s (%s): a restart of this daemon would now lose the step\n", t->d->name, t->step,
            (long long)t->job, t->rank, path, why);
    close(t->log_fd);
    t->log_fd = -1;
    unlink(path);
}

static int log_write(int fd, int64_t offset, int stream, const char *data, size_t n)
{
    struct logrec h = {offset, stream, (int32_t)n};
    struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)data, n}};
    ssize_t w = writev(fd, iov, 2);
    if (w < 0)
        return -errno;
    return w == (ssize_t)(sizeof(h) + n) ? 0 : -ENOSPC;
}

/* A chunk read from the task, before it goes out. */
static void log_chunk(task_t *t, int stream, const char *data, size_t n)
{
    if (t->log_fd < 0)
        return;
    int rc = log_write(t->log_fd, t->sent, stream, data, n);
    if (rc < 0)
        log_drop(t, strerror(-rc));
    else
        t->log_size += (int64_t)(sizeof(struct logrec) + n);
}

static int by_offset(const void *a, const void *b)
{
    json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "offset"));
    json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "offset"));
    return x < y ? -1 : x > y;
}

/* The log grew well past what is unacknowledged: written again with that only (the
 * chunks sent and not acknowledged, and those held for the controller's return, in the
 * order of their offsets). */
static void log_compact(task_t *t)
{
    int64_t cap = 4 * t->window > (1 << 20) ? 4 * t->window : (1 << 20);
    if (t->log_fd < 0 || t->log_size <= cap)
        return;
    char path[4400], tmp[4400];
    task_file(t->d, t->job, t->step, t->rank, ".log", path, sizeof(path));
    task_file(t->d, t->job, t->step, t->rank, ".log.tmp", tmp, sizeof(tmp));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    int64_t size = 0;
    int rc = fd < 0 ? -errno : 0;
    size_t nu = json_array_size(t->unacked), nh = json_array_size(t->held), nk = nu + nh;
    json_t **keep = nk ? malloc(nk * sizeof(*keep)) : NULL;
    if (nk && !keep)
        rc = -ENOMEM;
    for (size_t i = 0; keep && i < nk; i++)
        keep[i] = i < nu ? json_array_get(t->unacked, i) : json_array_get(t->held, i - nu);
    if (keep)
        qsort(keep, nk, sizeof(*keep), by_offset);
    for (size_t i = 0; rc == 0 && i < nk; i++) {
        const json_t *m = keep[i];
        const char *data = json_string_value(json_object_get(m, "data"));
        char *buf = rc == 0 && data ? malloc(strlen(data) / 4 * 3 + 3) : NULL;
        long n = buf ? b64_decode(data, buf) : -1;
        rc = n < 0 ? -EIO
                   : log_write(fd, json_integer_value(json_object_get(m, "offset")),
                               (int)json_integer_value(json_object_get(m, "stream")), buf,
                               (size_t)n);
        size += (int64_t)sizeof(struct logrec) + (n > 0 ? n : 0);
        free(buf);
    }
    free(keep);
    if (rc == 0 && nk == 0) { /* where the output stands */
        rc = log_write(fd, t->sent, 1, "", 0);
        size = (int64_t)sizeof(struct logrec);
    }
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    if (rc < 0) { /* the old one stands: it holds all of this and more */
        if (fd >= 0)
            close(fd);
        unlink(tmp);
        return;
    }
    close(t->log_fd);
    t->log_fd = fd;
    t->log_size = size;
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
    log_compact(t);
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
        return t->window <= 0 || t->sent - t->acked < t->window;
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

/* m to the controller, or kept, in order, for its return. */
static void send_via_controller(task_t *t, json_t *m)
{
    if (!t->held && t->d->registered && t->d->ctl && conn_send(t->d->ctl, m) == 0) {
        sent_chunk(t, m);
        json_decref(m);
        return;
    }
    if (!t->held)
        t->held = json_array();
    json_array_append_new(t->held, m);
}

static void send_output(task_t *t, json_t *m);

/* What the client has not acknowledged, again, to where its output goes now (each chunk
 * kept again as it goes). */
static void send_unacked(task_t *t)
{
    json_t *again = t->unacked;
    t->unacked = NULL;
    size_t i;
    json_t *m;
    json_array_foreach(again, i, m)
    {
        json_t *c = json_deep_copy(m);
        if (c) {
            json_object_del(c, "chan");
            send_output(t, c);
        }
    }
    json_decref(again);
}

/* The connection to the client's node broke (its daemon restarted, or this node cannot
 * reach it): the output goes through the controller, from what the client acknowledged
 * (a chunk sent there may not have arrived; the client drops what it has). The client's
 * node is asked for again when the client re-attaches (step_resend). */
static void home_broke(task_t *t)
{
    t->home_chan = 0;
    t->went_indirect = true;
    send_unacked(t);
}

/* A chunk of the task's output, to where its client reads it. */
static void send_output(task_t *t, json_t *m)
{
    if (t->home_chan) {
        conn_t *home = peers_find(t->d, t->peer);
        json_object_set_new(m, "chan", json_integer(t->home_chan));
        if (home && conn_send(home, m) == 0) {
            sent_chunk(t, m);
            json_decref(m);
            return;
        }
        home_broke(t);
        json_object_del(m, "chan");
    }
    send_via_controller(t, m);
}

/* A step_output message of n bytes of the task's output at offset. */
static json_t *output_msg(const task_t *t, int stream, int64_t offset, const char *data, size_t n)
{
    char *enc = malloc(b64_encoded_len(n) + 1);
    if (!enc)
        return NULL;
    b64_encode(data, n, enc);
    json_t *m = json_pack("{s:s,s:I,s:i,s:i,s:i,s:I,s:s}",
                          "type", "step_output",
                          "job", (json_int_t)t->job,
                          "step", t->step,
                          "rank", t->rank,
                          "stream", stream,
                          "offset", (json_int_t)offset,
                          "data", enc);
    free(enc);
    return m;
}

/* n bytes read from one of the task's streams: logged, then sent. */
static void take_output(task_t *t, int stream, const char *data, size_t n)
{
    json_t *m = output_msg(t, stream, t->sent, data, n);
    if (t->window > 0) /* (a killed step's drain: nobody will ask again) */
        log_chunk(t, stream, data, n);
    t->sent += (int64_t)n;
    if (m)
        send_output(t, m);
}

static void read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    outpipe_t *o = s->data;
    task_t *t = o->t;
    if (n > 0)
        take_output(t, o->stream, buf->base, (size_t)n);
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
    conn_t *home = peers_find(t->d, t->peer);
    if (!home || conn_send_new(home, json_pack("{s:s,s:I,s:I,s:i,s:i}", "type", "step_eof",
                                               "chan", (json_int_t)t->home_chan, "job",
                                               (json_int_t)t->job, "step", t->step,
                                               "rank", t->rank)) < 0)
        home_broke(t); /* (the end says "indirect": that node waits for no end from it) */
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
    double cpu;
    long long mem;
    launch_usage(t->proc, &cpu, &mem); /* for history: the task's use */
    if (ex && cpu >= 0)
        json_object_set_new(ex, "cpu", json_real(cpu));
    if (ex && mem >= 0)
        json_object_set_new(ex, "mem", json_integer(mem));
    if (ex && t->lost) /* where its output stands is not known: not waited for */
        json_object_set_new(ex, "eof", json_false());
    else if (ex) /* how much it wrote: its client waits for all of it */
        json_object_set_new(ex, "out", json_integer(t->sent));
    if (ex && !t->lost && t->went_indirect && !t->home_chan)
        json_object_set_new(ex, "indirect", json_true());
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
    task_forget_files(t);
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
    t->peer = peers_get(d, addr, (int)port);
    t->home_chan = t->peer ? chan : 0; /* unreachable: through the controller */
}

/* The task's record, for a daemon that starts again while it runs: written whole then
 * renamed (a kill mid-write leaves no half record). 0, or -errno (the task is then
 * ended: without a record no restart of this daemon could find it). */
static int record_task(task_t *t)
{
    char path[4400], tmp[4400], boot[64];
    task_file(t->d, t->job, t->step, t->rank, "", path, sizeof(path));
    task_file(t->d, t->job, t->step, t->rank, ".tmp", tmp, sizeof(tmp));
    runs_boot_id(boot, sizeof(boot));
    json_t *r = json_pack("{s:I,s:i,s:i,s:I,s:I,s:s*,s:s,s:I,s:b,s:b}",
                          "job", (json_int_t)t->job,
                          "step", t->step,
                          "rank", t->rank,
                          "pid", (json_int_t)launch_pid(t->proc),
                          "pgid", (json_int_t)launch_pgid(t->proc),
                          "cgroup", launch_cgroup(t->proc),
                          "boot", boot,
                          "window", (json_int_t)t->window,
                          "log", t->log_fd >= 0,
                          "stdin", t->with_stdin);
    int rc = 0;
    if (!r || json_dump_file(r, tmp, JSON_COMPACT) < 0 || rename(tmp, path) < 0) {
        rc = errno ? -errno : -EIO;
        unlink(tmp);
    }
    json_decref(r);
    return rc;
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
    t->log_fd = -1;
    set_home(d, t, json_object_get(msg, "home"));
    /* Its files in the spool, without which a restart of this daemon would lose it (or
     * its output): a spool that cannot take them fails the start. */
    char spath[4400];
    task_file(d, job, (int)step, (int)rank, ".status", spath, sizeof(spath));
    int status_fd = runs_status_file_open(spath); /* its shepherd writes how it ended */
    int spool_err = status_fd < 3 ? errno : 0;
    if (window > 0 && !spool_err) {
        task_file(d, job, (int)step, (int)rank, ".log", spath, sizeof(spath));
        t->log_fd = open(spath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
        spool_err = t->log_fd < 0 ? errno : 0;
    }
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
    t->with_stdin = want_in;
    if (spool_err) {
        snprintf(err, sizeof(err), "cannot keep the task's state in %.300s: %s", d->spool,
                 strerror(spool_err ? spool_err : EIO));
    } else if (fenv && open_fifo(d, &t->out[0], ruid, rgid, &dummy[0]) == 0 &&
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
            .status_fd = status_fd,
            .hold_output = true,
        };
        rc = launch_start(&spec, &t->proc, err, sizeof(err));
        int rrc = rc == 0 ? record_task(t) : 0;
        if (rrc < 0) { /* (it has started: killed, its end reported as a failed start) */
            snprintf(err, sizeof(err), "cannot record the task in %.300s: %s", d->spool,
                     strerror(-rrc));
            launch_signal(t->proc, SIGKILL);
            rc = rrc;
        }
    } else {
        snprintf(err, sizeof(err), "cannot set up the task's output: %s", strerror(errno));
    }
    for (int s = 0; s < 2; s++)
        if (dummy[s] >= 0)
            close(dummy[s]);
    if (status_fd >= 0)
        close(status_fd); /* (its shepherd's now) */
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
        if (t->log_fd >= 0)
            close(t->log_fd);
        t->log_fd = -1;
        task_forget_files(t);
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
    t->home_chan = 0;
    if (json_is_object(home))
        set_home(d, t, home);
    if (from > t->sent)
        from = t->sent;
    if (from > t->acked)
        t->acked = from;
    trim_unacked(t);
    send_unacked(t);
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
        if (t->lost && !t->lost_said) { /* (its end follows) */
            send_error_line(d, t->job, t->step, t->rank, t->lost);
            t->lost_said = true;
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

/* A task taken up again has nothing of it left: what is still in its FIFOs is its last
 * output, and their end. (Opened once its writers had opened them, they never show
 * their end to epoll: the kernel tells a reader of a FIFO of the writers that come
 * after its open only.) */
static void drain_adopted(task_t *t)
{
    static char buf[32768];
    for (int k = 0; k < 2; k++) {
        outpipe_t *o = &t->out[k];
        uv_os_fd_t fd;
        if (!o->open || uv_fileno((uv_handle_t *)&o->pipe, &fd) < 0)
            continue;
        ssize_t n;
        while ((n = read(fd, buf, sizeof(buf))) > 0)
            take_output(t, o->stream, buf, (size_t)n);
        close_out(o);
    }
}

/* How it ended, from its wait status. */
static void set_status(task_t *t, int status)
{
    t->reaped = true;
    t->kind = WIFSIGNALED(status) ? 1 : 0;
    t->code = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
    if (t->lost) /* (killed at our restart: its status is not its own) */
        t->kind = 0, t->code = 255;
}

/* A task taken up from an earlier incarnation is not our child: it is over once nothing
 * of it is left, and its shepherd wrote how it ended (without that, the shepherd was
 * killed with it). */
static void set_adopted_status(task_t *t)
{
    char path[4400];
    int status;
    task_file(t->d, t->job, t->step, t->rank, ".status", path, sizeof(path));
    if (runs_status_file_read(path, &status) == 0)
        set_status(t, status);
    else
        set_status(t, SIGKILL); /* (a wait status: killed by SIGKILL) */
}

void steps_reap(noded_t *d)
{
    task_t *next;
    bool watching = false;
    for (task_t *t = d->tasks; t; t = next) {
        next = t->next;
        int status;
        if (t->reaped || !t->proc)
            continue;
        if (t->adopted) {
            if (!launch_all_gone(t->proc)) {
                watching = true;
                continue;
            }
            drain_adopted(t);
            set_adopted_status(t);
        } else if (launch_reap(t->proc, &status) == 1) {
            /* the task's own status, as its shepherd wrote it: the shepherd's may be
             * another (killed while it waited for its output to be read) */
            char path[4400];
            int own;
            task_file(d, t->job, t->step, t->rank, ".status", path, sizeof(path));
            set_status(t, launch_shepherded(t->proc) && runs_status_file_read(path, &own) == 0
                              ? own
                              : status);
        } else {
            continue;
        }
        report_if_done(t);
    }
    if (!watching)
        uv_timer_stop(&d->tasks_poll);
}

static void on_tasks_poll(uv_timer_t *h) { steps_reap(h->data); }

bool steps_owns_cgroup(noded_t *d, const char *leaf)
{
    for (task_t *t = d->tasks; t; t = t->next) {
        const char *cg = t->proc ? launch_cgroup(t->proc) : NULL;
        const char *slash = cg ? strrchr(cg, '/') : NULL;
        if (slash && !strcmp(slash + 1, leaf))
            return true;
    }
    return false;
}

/* --- taking tasks up again after our restart --- */

/* The log of what was read and not acknowledged: the offsets go on after it, and what it
 * holds can be sent again. -1 when it cannot be read whole. */
static int load_log(task_t *t, const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    struct logrec h;
    int rc = 0;
    bool first = true;
    t->unacked = json_array();
    while (fread(&h, sizeof(h), 1, f) == 1) {
        char *buf = h.len >= 0 && h.len <= (1 << 24) ? malloc((size_t)h.len + 1) : NULL;
        if (!buf || fread(buf, 1, (size_t)h.len, f) != (size_t)h.len || h.offset < t->sent ||
            (h.stream != 1 && h.stream != 2)) {
            free(buf);
            rc = first || !feof(f) ? -1 : 0; /* a record cut short: the last write's */
            break;
        }
        if (first)
            t->acked = h.offset; /* (the client has everything before the log's start) */
        first = false;
        if (h.len > 0)
            json_array_append_new(t->unacked, output_msg(t, h.stream, h.offset, buf, (size_t)h.len));
        t->sent = h.offset + h.len;
        free(buf);
    }
    fclose(f);
    if (first && rc == 0) /* empty: nothing was read yet */
        t->acked = t->sent = 0;
    return rc;
}

/* Its output FIFO again, if it is still there (an output that has ended is unlinked). */
static void reopen_out(task_t *t, int k)
{
    outpipe_t *o = &t->out[k];
    o->t = t;
    o->stream = k + 1;
    snprintf(o->path, sizeof(o->path), "%s/step%lld.%d.%d.%d", t->d->spool, (long long)t->job,
             t->step, t->rank, k + 1);
    int fd = open(o->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return;
    uv_pipe_init(t->d->loop, &o->pipe, 0);
    o->pipe.data = o;
    if (uv_pipe_open(&o->pipe, fd) < 0) {
        close(fd);
        return;
    }
    o->open = true;
    t->handles_open++;
}

static void recover_task(noded_t *d, const char *path, int64_t job, int step, int rank)
{
    json_t *r = json_load_file(path, 0, NULL);
    json_int_t pid = 0, pgid = 0, window = 0;
    const char *cg = NULL, *boot = NULL;
    int has_log = 0, with_stdin = 0;
    task_t *t = calloc(1, sizeof(*t));
    if (!t || !r ||
        json_unpack(r, "{s:I,s:I,s?s,s?s,s:I,s:b,s?b}", "pid", &pid, "pgid", &pgid, "cgroup",
                    &cg, "boot", &boot, "window", &window, "log", &has_log, "stdin",
                    &with_stdin) < 0) {
        fprintf(stderr, "ductile-noded %s: ignoring unreadable task record %s\n", d->name, path);
        free(t);
        json_decref(r);
        unlink(path);
        return;
    }
    *t = (task_t){.d = d, .job = job, .step = step, .rank = rank, .log_fd = -1,
                  .window = window, .adopted = true, .with_stdin = with_stdin};
    char now_boot[64];
    runs_boot_id(now_boot, sizeof(now_boot));
    bool other_boot = boot && now_boot[0] && strcmp(boot, now_boot);
    t->proc = other_boot ? NULL : runs_still_alive(cg, (pid_t)pid, (pid_t)pgid);
    json_decref(r);
    if (!jobs_find(d, job)) { /* its job ended here: whatever is left of it goes too */
        launch_cleanup(t->proc); /* (without a cgroup, its session: end_unrecorded cannot) */
        task_forget_files(t);
        free(t);
        return;
    }
    if (t->proc)
        launch_set_shepherded(t->proc, true);
    char lpath[4400], in_fifo[4300];
    task_file(d, job, step, rank, ".log", lpath, sizeof(lpath));
    snprintf(in_fifo, sizeof(in_fifo), "%s/step%lld.%d.%d.0", d->spool, (long long)job, step, rank);
    if (window > 0 && (!has_log || load_log(t, lpath) < 0))
        t->lost = "its output could not be kept in the node's spool across the restart";
    else if (with_stdin && access(in_fifo, F_OK) == 0) /* (unlinked once its input ended) */
        t->lost = "its standard input was cut when the node daemon restarted";
    if (has_log && !t->lost) { /* appended to from here on */
        t->log_fd = open(lpath, O_WRONLY | O_APPEND | O_CLOEXEC);
        struct stat st;
        t->log_size = t->log_fd >= 0 && fstat(t->log_fd, &st) == 0 ? (int64_t)st.st_size : 0;
    }
    for (int k = 0; k < 2 && !t->lost; k++)
        reopen_out(t, k);
    unlink(in_fifo); /* its standard input ended with the daemon that wrote it */
    t->next = d->tasks;
    d->tasks = t;
    if (t->lost) {
        /* It cannot go on as it was: ended, never counted a success (its output, unread,
         * goes with its pipes; the client is told why when we have registered). */
        fprintf(stderr, "ductile-noded %s: step %d of job %lld: task %d is ended: %s\n", d->name,
                step, (long long)job, rank, t->lost);
        if (t->proc)
            launch_signal(t->proc, SIGKILL);
        for (int k = 0; k < 2; k++) {
            char fifo[4300];
            snprintf(fifo, sizeof(fifo), "%s/step%lld.%d.%d.%d", d->spool, (long long)job, step,
                     rank, k + 1);
            unlink(fifo);
        }
    }
    if (!t->proc) {
        drain_adopted(t);
        set_adopted_status(t);
    } else
        uv_timer_start(&d->tasks_poll, on_tasks_poll, 250, 250);
    fprintf(stderr, "ductile-noded %s: took up task %d of step %d of job %lld from an earlier "
            "start: %s\n", d->name, rank, step, (long long)job,
            t->lost ? "to end it" : t->proc ? "still running" : "ended meanwhile");
}

void steps_recover(noded_t *d)
{
    DIR *dp = opendir(d->spool);
    if (!dp)
        return;
    struct dirent *e;
    while ((e = readdir(dp))) {
        long long job;
        int step, rank, end = 0;
        if (sscanf(e->d_name, "task.%lld.%d.%d%n", &job, &step, &rank, &end) != 3)
            continue;
        char path[4400];
        snprintf(path, sizeof(path), "%s/%s", d->spool, e->d_name);
        if (e->d_name[end] == '\0') {
            if (job > 0 && step > 0 && step <= 65535 && rank >= 0)
                recover_task(d, path, job, step, rank);
            else
                unlink(path);
        } else if (!strcmp(e->d_name + end, ".tmp")) {
            unlink(path); /* a record's write cut short: the one before it stands */
        }
    }
    closedir(dp);
    /* files of tasks without a record (the record could not be written) */
    dp = opendir(d->spool);
    while (dp && (e = readdir(dp))) {
        long long job;
        int step, rank, end = 0;
        if (sscanf(e->d_name, "task.%lld.%d.%d%n", &job, &step, &rank, &end) != 3 ||
            e->d_name[end] == '\0' || find_task(d, job, step, rank))
            continue;
        char path[4400];
        snprintf(path, sizeof(path), "%s/%s", d->spool, e->d_name);
        unlink(path);
    }
    if (dp)
        closedir(dp);
}
