/* Requests from the ductile command. Who asks is known from the connection (the
 * kernel on the local socket, MUNGE on TCP), never from the message. Every field is
 * checked; a bad request gets {"ok": false, "error": "..."} and changes nothing. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctld.h"
#include "hostlist.h"
#include "privacy.h"
#include "strparse.h"

#define MAX_ENV 4096
#define MAX_ENV_LEN 131072
#define MAX_PATH 4096
#define NICE_MAX 10000000
#define MAX_ARGS 4096 /* a script's arguments: as many as its environment's entries */

void ctld_user_name(uid_t uid, char *buf, size_t len)
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
    viewer_t v;
    privacy_viewer(c, conn, &v);
    return v.oper;
}

/* Replies wait for the batch to commit whenever this request changed anything. */
void rpc_reply(ctld_t *c, conn_t *conn, json_t *msg)
{
    /* a reply that could not be built (memory, text that is not UTF-8) still answers:
     * a command must not wait for its timeout */
    if (!msg)
        msg = json_pack("{s:b,s:s,s:s}", "ok", 0, "code", "internal",
                        "error", "the controller could not build its reply (see its log)");
    if (c->in_batch)
        ctld_defer_send(c, conn, msg);
    else
        conn_send_new(conn, msg);
}

void rpc_fail(ctld_t *c, conn_t *conn, const char *err)
{
    /* a message cut by its buffer may end inside a character of the user's text, and
     * JSON cannot carry half a character: it would not be sent at all */
    char *e = strdup(err ? err : "");
    if (e)
        strparse_utf8_fix(e);
    rpc_reply(c, conn, proto_err_reply(PROTO_E_NONE, e ? e : "out of memory"));
    free(e);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* A submission key: 1 to 64 of [A-Za-z0-9._-] (the CLI makes 32 hex digits). */
static bool key_ok(const char *k)
{
    size_t n = strlen(k);
    return n >= 1 && n <= 64 &&
           strspn(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* User text that other users will see (queue, history) or that names files: no
 * control characters, so a name cannot carry a newline or a terminal escape. */
static int check_text(const char *what, const char *v, char *err, size_t errlen)
{
    if (v && strparse_has_control(v)) {
        snprintf(err, errlen, "the %s contains a control character (newline, tab, escape...): "
                 "not allowed", what);
        return -EINVAL;
    }
    return 0;
}

#define ARRAY_MAX_ELEMENTS 10000
#define ARRAY_MAX_INDEX 4000000

/* A submission's "array": its indices, each once, in rising order; none: *out NULL. */
static int array_indices(const json_t *m, int **out, int *n, char *err, size_t errlen)
{
    const json_t *a = json_object_get(m, "array");
    *out = NULL;
    *n = 0;
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a) || !json_array_size(a) || json_array_size(a) > ARRAY_MAX_ELEMENTS) {
        snprintf(err, errlen, "an array has 1 to %d elements", ARRAY_MAX_ELEMENTS);
        return -1;
    }
    int *v = malloc(json_array_size(a) * sizeof(int));
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t k;
    json_t *e;
    json_array_foreach(a, k, e) {
        json_int_t x = json_is_integer(e) ? json_integer_value(e) : -1;
        if (x < 0 || x > ARRAY_MAX_INDEX || (k && x <= v[k - 1])) {
            free(v);
            snprintf(err, errlen, "array indices are 0 to %d, each once, in rising order",
                     ARRAY_MAX_INDEX);
            return -1;
        }
        v[k] = (int)x;
    }
    *out = v;
    *n = (int)json_array_size(a);
    return 0;
}

/* submit --test-only: what the submission would give, nothing recorded. A held job or
 * one with dependencies has no start to expect until it is released or they are met. */
static void will_run(ctld_t *c, conn_t *conn, job_t *j)
{
    char err[512];
    double start;
    int size;
    int rc = jobs_will_run(c, j, &start, &size, err, sizeof(err));
    if (rc < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    json_t *rep = json_pack("{s:b,s:b,s:i}", "ok", 1, "test_only", 1, "nodes", size);
    if (j->hold)
        json_object_set_new(rep, "waits_for", json_string("release"));
    else if (j->depend)
        json_object_set_new(rep, "waits_for", json_string("dependency"));
    else if (start >= 0)
        json_object_set_new(rep, "start", json_real(start));
    rpc_reply(c, conn, rep);
}

static void do_submit(ctld_t *c, conn_t *conn, const json_t *m)
{
    char err[512];
    const char *name, *cwd, *out, *errp, *type, *cons, *key;
    char *script = NULL;
    int64_t nodes, minn, maxn;
    double tlimit, io;
    bool requeue, ck_want, hold, test_only;
    double begin;
    const char *depend, *account, *partition, *reservation;
    int64_t nice, umask_;
    const json_t *env, *args;
    if (proto_str_opt(m, "key", 64, NULL, &key, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "name", 128, "script", &name, err, sizeof(err)) < 0 ||
        proto_str(m, "cwd", MAX_PATH, &cwd, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "stdout", MAX_PATH, NULL, &out, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "stderr", MAX_PATH, NULL, &errp, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "job_type", 16, "rigid", &type, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "constraint", 16, "none", &cons, err, sizeof(err)) < 0 ||
        proto_int_opt(m, "nodes", 1, 1 << 24, 1, &nodes, err, sizeof(err)) < 0 ||
        proto_int_opt(m, "min_nodes", 0, 1 << 24, 0, &minn, err, sizeof(err)) < 0 ||
        proto_int_opt(m, "max_nodes", 0, 1 << 24, 0, &maxn, err, sizeof(err)) < 0 ||
        proto_num_opt(m, "time", 0, STRPARSE_DURATION_MAX, 0, &tlimit, err, sizeof(err)) < 0 ||
        proto_num_opt(m, "io_intensity", -INFINITY, INFINITY, 0, &io, err, sizeof(err)) < 0 ||
        proto_bool_opt(m, "requeue", false, &requeue, err, sizeof(err)) < 0 ||
        proto_bool_opt(m, "checkpoint_agents", false, &ck_want, err, sizeof(err)) < 0 ||
        proto_bool_opt(m, "hold", false, &hold, err, sizeof(err)) < 0 ||
        proto_bool_opt(m, "test_only", false, &test_only, err, sizeof(err)) < 0 ||
        proto_num_opt(m, "begin", 0, 1e11, 0, &begin, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "dependency", 1024, NULL, &depend, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "account", 64, NULL, &account, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "partition", 256, NULL, &partition, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "reservation", 64, NULL, &reservation, err, sizeof(err)) < 0 ||
        proto_int_opt(m, "nice", -NICE_MAX, NICE_MAX, 0, &nice, err, sizeof(err)) < 0 ||
        proto_int_opt(m, "umask", -1, 0777, -1, &umask_, err, sizeof(err)) < 0 ||
        proto_strarray_opt(m, "env", MAX_ENV, MAX_ENV_LEN, &env, err, sizeof(err)) < 0 ||
        proto_strarray_opt(m, "args", MAX_ARGS, MAX_ENV_LEN, &args, err, sizeof(err)) < 0 ||
        check_text("job name", name, err, sizeof(err)) < 0 ||
        check_text("working directory", cwd, err, sizeof(err)) < 0 ||
        check_text("output path", out, err, sizeof(err)) < 0 ||
        check_text("error path", errp, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    if (key && !key_ok(key)) {
        rpc_fail(c, conn, "the submission key must be 1 to 64 letters, digits, '.', '_' or '-'");
        return;
    }
    if (nice < 0 && !is_operator(c, conn)) {
        rpc_fail(c, conn, "permission denied: only operators may give a negative --nice (a"
                          " higher priority)");
        return;
    }
    if (!(io >= 0 && io <= 1)) {
        snprintf(err, sizeof(err), "the I/O intensity must be a share from 0 to 1 (the part of "
                 "the job's run time spent in I/O), not %g", io);
        rpc_fail(c, conn, err);
        return;
    }
    double pmin = 0, pmax = 0;
    int declared = energy_declared(m, &pmin, &pmax, err, sizeof(err));
    if (declared < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    if (ck_want && !ckptsvc_nodes(c)) {
        rpc_fail(c, conn, "this cluster has no checkpoint nodes for --checkpoint-agents "
                      "(CheckpointNodes in ductile.conf)");
        return;
    }
    if (cwd[0] != '/') {
        rpc_fail(c, conn, "the working directory must be an absolute path");
        return;
    }
    int *idx = NULL, nidx = 0;
    int64_t amax = 0;
    if (array_indices(m, &idx, &nidx, err, sizeof(err)) < 0 ||
        proto_int_opt(m, "array_max", 0, ARRAY_MAX_ELEMENTS, 0, &amax, err, sizeof(err)) < 0) {
        free(idx);
        rpc_fail(c, conn, err);
        return;
    }
    if (depend && *depend) {
        char why[256];
        if (elig_check_dependency(c, depend, conn_uid(conn), name, why, sizeof(why)) < 0) {
            snprintf(err, sizeof(err), "--dependency=%.200s: %s", depend, why);
            rpc_fail(c, conn, err);
            return;
        }
    }
    /* A repeat of a submission already made (its reply was lost): the first job's id,
     * with the same reply. Looked up in the open batch too, so a repeat arriving before
     * the first one's commit waits for that commit like the first. */
    int64_t first;
    int found = key && !test_only ? db_submit_key_find(c, conn_uid(conn), key, &first) : 0;
    if (found < 0) {
        rpc_fail(c, conn, "cannot read the database");
        return;
    }
    if (found) { /* (an array still being made answers when it is) */
        if (!arrays_attach(c, first, conn))
            rpc_reply(c, conn, json_pack("{s:b,s:I}", "ok", 1, "job", (json_int_t)first));
        return;
    }
    /* the script last: it may be large, and base64 when it is not UTF-8 */
    if (proto_bytes(m, "script", (size_t)c->cfg.max_script_size, &script, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    job_t *j = job_new();
    if (!j) {
        free(script);
        rpc_fail(c, conn, "out of memory");
        return;
    }
    if (sched_type_parse(type, &j->type) < 0 ||
        sched_constraint_parse(cons, &j->constraint) < 0) {
        free(script);
        job_free(j);
        rpc_fail(c, conn, "unknown job type or node constraint");
        return;
    }
    if (nsel_from_request(m, &j->sel, err, sizeof(err)) < 0) {
        free(script);
        job_free(j);
        rpc_fail(c, conn, err);
        return;
    }
    char user[256];
    ctld_user_name(conn_uid(conn), user, sizeof(user));
    j->name = strdup(name);
    j->user = strdup(user);
    j->uid = conn_uid(conn);
    j->gid = conn_gid(conn);
    j->nodes = (int)nodes;
    j->min_nodes = (int)minn;
    j->max_nodes = (int)maxn;
    j->time_limit = tlimit;
    j->requeue = requeue;
    j->ck_want = ck_want;
    j->script = script; /* the exact bytes, UTF-8 or not */
    j->cwd = strdup(cwd);
    j->env = env ? json_deep_copy(env) : json_array();
    j->args = args && json_array_size(args) ? json_deep_copy(args) : NULL;
    j->hold = hold ? 1 : 0;
    j->begin = begin;
    j->depend = depend && *depend ? strdup(depend) : NULL;
    j->out_path = dup_or_null(out);
    j->err_path = dup_or_null(errp);
    j->nice = (int)nice;
    j->umask = (int)umask_;
    double retry = 0;
    if ((!test_only && quota_submit(c, j, is_operator(c, conn), idx ? nidx : 1, &retry, err,
                                    sizeof(err)) < 0) ||
        accounts_resolve(c, j, account, is_operator(c, conn), idx ? nidx : 1, err,
                         sizeof(err)) < 0 ||
        parts_submit(c, j, partition, is_operator(c, conn), err, sizeof(err)) < 0 ||
        resv_submit(c, j, reservation, is_operator(c, conn), err, sizeof(err)) < 0) {
        free(idx);
        job_free(j);
        if (retry > 0) /* the client waits as long and tries again (util.c) */
            rpc_reply(c, conn, json_pack("{s:b,s:s,s:s,s:f}", "ok", 0, "code", "try_later",
                                         "error", err, "retry_after", retry));
        else
            rpc_fail(c, conn, err);
        return;
    }
    energy_resolve(c, j, declared == 1, pmin, pmax);
    /* declared (even 0) wins; else its last run's measured intensity (iomeas.c) */
    iomeas_resolve(c, j, json_is_number(json_object_get(m, "io_intensity")), io);
    j->array_max = (int)amax;
    if (test_only) {
        free(idx);
        will_run(c, conn, j);
        job_free(j);
        return;
    }
    int made = idx ? arrays_submit(c, j, idx, nidx, conn, err, sizeof(err))
                   : jobs_submit(c, j, err, sizeof(err));
    if (made < 0) {
        free(idx);
        if (!idx || !j->id) /* (else it is the array's first element, now ended) */
            job_free(j);
        rpc_fail(c, conn, err);
        return;
    }
    free(idx);
    /* in the job's transaction: both are on disk when the reply goes, or neither */
    if (key && db_submit_key_put(c, conn_uid(conn), key, j->id, ctld_now()) < 0)
        fprintf(stderr, "ductiled: job %lld: cannot record its submission key\n",
                (long long)j->id);
    /* A test hook (test_cli_submit_key): the controller dies between the commit of a
     * submission and its reply, the case a client cannot tell from a lost request. */
    const char *crash = getenv("DUCTILE_TEST_CRASH_AFTER_SUBMIT");
    if (crash && !strcmp(crash, "1")) {
        db_commit(c);
        fprintf(stderr, "ductiled: test: exiting after the commit of job %lld\n",
                (long long)j->id);
        _exit(99);
    }
    if (made == 1)
        return; /* the array's other elements follow: the reply with the last (arrays.c) */
    json_t *rep = json_pack("{s:b,s:I}", "ok", 1, "job", (json_int_t)j->id);
    if (rep && j->array_id)
        json_object_set_new(rep, "array", json_integer(nidx));
    rpc_reply(c, conn, rep);
}

typedef struct collect {
    job_t **v;
    size_t n;
    const char *user;
    unsigned states;   /* bits of jstate_t; 0: every state */
    bool by_uid;       /* --me: the caller's own */
    uid_t uid;
    const json_t *ids; /* job ids (an array's id: all of it); NULL: every job */
    const char *partitions; /* "a,b" (queue -p); NULL: every job */
    const ctld_t *c;
} collect_t;

static bool listed(const json_t *ids, const job_t *j)
{
    size_t k;
    json_t *v;
    json_array_foreach(ids, k, v) {
        int64_t id = json_integer_value(v);
        if (id == j->id || (j->array_id && id == j->array_id))
            return true;
    }
    return false;
}

static void collect_one(int64_t id, void *val, void *arg)
{
    (void)id;
    collect_t *x = arg;
    job_t *j = val;
    if (x->user && strcmp(j->user, x->user))
        return;
    if (x->by_uid && j->uid != x->uid)
        return;
    if (x->states && !(x->states & (1u << j->state)))
        return;
    if (x->ids && !listed(x->ids, j))
        return;
    if (x->partitions && !parts_job_in(x->c, j, x->partitions))
        return;
    x->v[x->n++] = j;
}

/* "PD,R" or "pending,running" (squeue's -t) as bits of jstate_t; -1: a word that is no
 * state. */
static int state_bits(const char *list, unsigned *out)
{
    char copy[128];
    snprintf(copy, sizeof(copy), "%s", list);
    *out = 0;
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        jstate_t st;
        if (jstate_parse(t, &st) < 0)
            return -1;
        *out |= 1u << st;
        if (st == JS_RUNNING) /* a job being resized runs */
            *out |= 1u << JS_RESIZING;
    }
    return *out ? 0 : -1;
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
    char *name, *user;  /* escaped */
    char *last; /* nodelist, or (reason) */
    char *fold; /* the id of a line that stands for pending elements of an array */
    bool skip;  /* one of those elements, on its first one's line */
} qrow_t;

/* A folded list of indices, "3-5,7" or, for a stepped array, "0-1998:2" as squeue
 * writes it (listed one by one, a 1,000-element stepped array made every line of
 * everyone's queue 4,000 columns wide): the runs written so far, and the one under way
 * (from `start` by `step`, `n` of them, the last `last`). */
typedef struct fold {
    char *list;
    size_t len;
    int start, step, last, n;
    int count; /* indices in all */
} fold_t;

/* Writes the run under way; false when memory ran out. */
static bool fold_flush(fold_t *f)
{
    if (!f->n)
        return true;
    char *l = realloc(f->list, f->len + 48);
    if (!l)
        return false;
    f->list = l;
    const char *sep = f->len ? "," : "";
    if (f->n == 1)
        f->len += (size_t)snprintf(l + f->len, 48, "%s%d", sep, f->start);
    else if (f->step == 1)
        f->len += (size_t)snprintf(l + f->len, 48, "%s%d-%d", sep, f->start, f->last);
    else if (f->n == 2)
        f->len += (size_t)snprintf(l + f->len, 48, "%s%d,%d", sep, f->start, f->last);
    else
        f->len += (size_t)snprintf(l + f->len, 48, "%s%d-%d:%d", sep, f->start, f->last, f->step);
    f->n = 0;
    return true;
}

/* Appends index k (rising). */
static void fold_add(fold_t *f, int k)
{
    f->count++;
    if (f->n == 1 || (f->n > 1 && k - f->last == f->step)) {
        f->step = k - f->last;
        f->last = k;
        f->n++;
        return;
    }
    if (f->n == 2 && f->step > 1) { /* two by a step, then another step: start again from
                                     * the second ("1,3,4-6", not "1,3" then "4-6") */
        int second = f->last;
        f->n = 1;
        f->last = f->start;
        fold_flush(f);
        f->start = f->last = second;
        f->n = 1;
        fold_add(f, k);
        f->count--;
        return;
    }
    fold_flush(f);
    f->start = f->last = k;
    f->n = 1;
}

/* As squeue shows an array: its pending elements as one line, "12_[3-6,9%2]", where the
 * first of them is; running ones on their own, "12_1". */
static void fold_arrays(const job_t *const *v, size_t n, qrow_t *rows)
{
    idmap_t *lead = idmap_create(); /* array id -> its line's index + 1 */
    fold_t *f = calloc(n + 1, sizeof(fold_t));
    for (size_t i = 0; lead && f && i < n; i++) {
        const job_t *j = v[i];
        if (!j->array_id || j->state != JS_PENDING)
            continue;
        size_t at = (size_t)(intptr_t)idmap_get(lead, j->array_id);
        if (!at) {
            idmap_put(lead, j->array_id, (void *)(intptr_t)(i + 1));
            at = i + 1;
        } else {
            rows[i].skip = true;
        }
        fold_add(&f[at - 1], j->array_task);
    }
    for (size_t i = 0; f && i < n; i++) {
        if (f[i].count > 1 && fold_flush(&f[i]) && f[i].list) {
            char max[24] = "";
            if (v[i]->array_max)
                snprintf(max, sizeof(max), "%%%d", v[i]->array_max);
            size_t l = f[i].len + 64;
            rows[i].fold = malloc(l);
            if (rows[i].fold)
                snprintf(rows[i].fold, l, "%lld_[%s%s]", (long long)v[i]->array_id, f[i].list,
                         max);
        }
        free(f[i].list);
    }
    free(f);
    idmap_destroy(lead);
}

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

/* A long queue is answered a page at a time (QUEUE_PAGE lines, or what QUEUE_PAGE_MS
 * allows), from the first job after the `after` of the request, in id order: 100,000
 * jobs in one reply held the loop 0.8 s as a table and 2.9 s as JSON. */
#define QUEUE_PAGE 2000
#define QUEUE_PAGE_MS 20.0

static void free_rows(qrow_t *rows, size_t n)
{
    for (size_t k = 0; rows && k < n; k++) {
        free(rows[k].name);
        free(rows[k].user);
        free(rows[k].last);
        free(rows[k].fold);
    }
    free(rows);
}

/* The page of the table from v[from] on: its text, and in *next the index after its last
 * line (n: none left). The columns are as wide as the whole queue's would be (its
 * names, users and ids are measured, cheaply, over every job), so that pages put
 * together make one table; the header comes with the first page only. */
static char *render_queue(ctld_t *c, job_t **v, size_t n, size_t from, size_t *next,
                          size_t *len)
{
    static const char *hdr[] = {"JOBID", "NAME", "USER", "ST", "TIME", "NODES", "NODELIST(REASON)"};
    qrow_t *rows = calloc(n + 1, sizeof(qrow_t));
    if (!rows)
        return NULL;
    /* user text is escaped: names stored before submissions were checked may hold a
     * newline or a terminal escape */
    int w[6];
    for (int k = 0; k < 6; k++)
        w[k] = (int)strlen(hdr[k]);
    double now = ctld_now(), stop = stats_clock() + QUEUE_PAGE_MS;
    fold_arrays((const job_t *const *)v, n, rows);
    for (size_t i = 0; i < n; i++) { /* the widths, over every job */
        const job_t *j = v[i];
        if (rows[i].skip)
            continue;
        char id[24], t[24];
        arrays_name(j, id, sizeof(id));
        fmt_elapsed(j->start > 0 ? now - j->start : 0, t, sizeof(t));
        int nodes = j->nalloc ? j->nalloc : j->nodes;
        size_t name = strparse_utf8_chars(j->name ? j->name : "");
        int lens[6] = {(int)strlen(rows[i].fold ? rows[i].fold : id), name > 20 ? 20 : (int)name,
                       (int)strparse_utf8_chars(j->user ? j->user : ""), 2, (int)strlen(t),
                       nodes > 99999 ? 6 : nodes > 9999 ? 5 : nodes > 999 ? 4 : nodes > 99 ? 3
                                     : nodes > 9 ? 2 : 1};
        for (int k = 0; k < 6; k++)
            if (lens[k] > w[k])
                w[k] = lens[k];
    }
    size_t total = 128, linew = 0, lines = 0, i = from;
    for (int k = 0; k < 6; k++)
        linew += (size_t)w[k] + 2;
    total += linew; /* the header: as wide as the columns (a folded array's id widens the
                     * first: left out, it overran the buffer) */
    for (; i < n && lines < QUEUE_PAGE && (lines == 0 || stats_clock() < stop); i++) {
        job_t *j = v[i];
        qrow_t *r = &rows[i];
        if (r->skip)
            continue;
        lines++;
        arrays_name(j, r->id, sizeof(r->id));
        r->name = strparse_escape(j->name);
        r->user = strparse_escape(j->user);
        if (!r->name || !r->user) {
            free_rows(rows, n);
            return NULL;
        }
        /* the name cut to 20 characters (not bytes: 'ö' is two) */
        r->name[strparse_utf8_cut(r->name, 20, NULL)] = '\0';
        snprintf(r->st, sizeof(r->st), "%s", jstate_code(j->state));
        fmt_elapsed(j->start > 0 ? now - j->start : 0, r->t, sizeof(r->t));
        snprintf(r->nodes, sizeof(r->nodes), "%d", j->nalloc ? j->nalloc : j->nodes);
        if (j->state == JS_PENDING) {
            sched_jobinfo_t info;
            const char *why = sched_job_info(c->sched, j->id, &info) == 0
                                  ? sched_reason_name(info.reason) : j->reason;
            char *e = strparse_escape(why);
            size_t l = (e ? strlen(e) : 0) + 3;
            r->last = malloc(l);
            if (r->last)
                snprintf(r->last, l, "(%s)", e ? e : "");
            free(e);
        } else {
            r->last = nodes_format(c, j->alloc, j->nalloc);
        }
        total += linew + (r->last ? strlen(r->last) : 0) + strlen(r->name) + strlen(r->user) + 16;
    }
    *next = i;
    char *buf = malloc(total);
    size_t pos = 0;
    if (buf) {
        buf[0] = '\0';
        if (from == 0)
            pos += (size_t)snprintf(buf + pos, total - pos,
                                    "%-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s\n", w[0], hdr[0], w[1],
                                    hdr[1], w[2], hdr[2], w[3], hdr[3], w[4], hdr[4], w[5], hdr[5],
                                    hdr[6]);
        for (size_t q = from; q < i; q++) {
            qrow_t *r = &rows[q];
            if (r->skip)
                continue;
            const char *cells[6] = {r->fold ? r->fold : r->id, r->name, r->user, r->st, r->t,
                                    r->nodes};
            for (int k = 0; k < 6; k++) /* padded by characters: printf's %-*s counts bytes */
                pos += (size_t)snprintf(buf + pos, total - pos, "%s%*s", cells[k],
                                        w[k] - (int)strparse_utf8_chars(cells[k]) + 2, "");
            pos += (size_t)snprintf(buf + pos, total - pos, "%s\n", r->last ? r->last : "");
        }
    }
    free_rows(rows, n);
    *len = pos;
    return buf;
}

/* The jobs as JSON; with fold, the pending elements of an array as the table shows
 * them: their first one, whose "folded" is the line's id ("12_[3-6]"), for all. */
static json_t *queue_json(ctld_t *c, const viewer_t *who, job_t **v, size_t n, bool fold,
                          size_t from, size_t *next)
{
    json_t *arr = json_array();
    qrow_t *rows = fold ? calloc(n + 1, sizeof(qrow_t)) : NULL;
    if (rows)
        fold_arrays((const job_t *const *)v, n, rows);
    double stop = stats_clock() + QUEUE_PAGE_MS;
    size_t i = from;
    for (; i < n && json_array_size(arr) < QUEUE_PAGE &&
           (!json_array_size(arr) || stats_clock() < stop); i++) {
        if (rows && rows[i].skip)
            continue;
        json_t *o = job_to_json(c, v[i], false);
        privacy_trim(who, v[i]->user, o);
        if (o && rows && rows[i].fold)
            json_object_set_new(o, "folded", json_string(rows[i].fold));
        json_array_append_new(arr, o);
    }
    *next = i;
    free_rows(rows, n);
    return arr;
}

static void do_queue(ctld_t *c, conn_t *conn, const json_t *m)
{
    char err[256];
    collect_t x = {.uid = conn_uid(conn), .c = c};
    const char *format, *states;
    bool fold;
    viewer_t who;
    privacy_viewer(c, conn, &who);
    if (proto_str_opt(m, "user", 255, NULL, &x.user, err, sizeof(err)) < 0 ||
        proto_bool_opt(m, "fold", false, &fold, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "state", 120, NULL, &states, err, sizeof(err)) < 0 ||
        proto_bool_opt(m, "me", false, &x.by_uid, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "partition", 500, NULL, &x.partitions, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "format", 16, "json", &format, err, sizeof(err)) < 0 ||
        (x.partitions && parts_check_list(c, x.partitions, err, sizeof(err)) < 0)) {
        rpc_fail(c, conn, err);
        return;
    }
    int64_t after;
    if (proto_int_opt(m, "after", 0, INT64_MAX, 0, &after, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    if (states && state_bits(states, &x.states) < 0) {
        snprintf(err, sizeof(err), "'%.100s' is not a list of job states (PD, R, RS, CG, CD, F, "
                 "CA, TO, NF, or PENDING, RUNNING...)", states);
        rpc_fail(c, conn, err);
        return;
    }
    const json_t *refs = json_object_get(m, "jobs");
    if (refs && (!json_is_array(refs) || json_array_size(refs) > 10000)) {
        rpc_fail(c, conn, "field 'jobs' must be an array of at most 10000 job ids");
        return;
    }
    json_t *ids = refs ? json_array() : NULL; /* "12_3" found; unknown ones match nothing */
    size_t k;
    json_t *v;
    json_array_foreach(refs, k, v) {
        int64_t id;
        if (arrays_resolve(c, v, &id) == 0)
            json_array_append_new(ids, json_integer(id));
    }
    x.ids = ids;
    x.v = malloc((idmap_count(c->jobs) + 1) * sizeof(job_t *));
    if (!x.v) {
        json_decref(ids);
        rpc_fail(c, conn, "out of memory");
        return;
    }
    if (privacy_jobs_of(&who, x.user, &x.user)) /* else another's, hidden: none */
        idmap_foreach(c->jobs, collect_one, &x);
    qsort(x.v, x.n, sizeof(job_t *), by_id);
    size_t from = 0, next;
    while (from < x.n && x.v[from]->id <= after) /* the page starts after the last one's */
        from++;
    json_t *rep;
    if (!strcmp(format, "table")) {
        size_t len;
        char *text = render_queue(c, x.v, x.n, from, &next, &len);
        rep = text ? json_pack("{s:b,s:s%}", "ok", 1, "text", text, len) : NULL;
        free(text);
    } else {
        rep = json_pack("{s:b,s:o}", "ok", 1, "jobs",
                        queue_json(c, &who, x.v, x.n, fold, from, &next));
    }
    if (rep && next < x.n && next > from) /* where the next page starts */
        json_object_set_new(rep, "next", json_integer(x.v[next - 1]->id));
    free(x.v);
    json_decref(ids);
    if (!rep)
        rpc_fail(c, conn, "out of memory");
    else
        rpc_reply(c, conn, rep);
}

/* The answer about a job that does not exist, given also about one the caller may not
 * see (PrivateData=jobs): Slurm says "Invalid job id specified" for both, and so the
 * answer does not tell a hidden job from none. */
static void no_such_job(ctld_t *c, conn_t *conn, const json_t *ref, int64_t id)
{
    char err[128];
    if (json_is_string(ref))
        snprintf(err, sizeof(err), "job %.40s does not exist", json_string_value(ref));
    else
        snprintf(err, sizeof(err), "job %lld does not exist", (long long)id);
    rpc_fail(c, conn, err);
}

static job_t *lookup(ctld_t *c, conn_t *conn, const json_t *m, bool *finished)
{
    char err[128];
    int64_t id;
    *finished = false;
    const json_t *ref = json_object_get(m, "job");
    int rr = json_is_string(ref) ? arrays_resolve(c, ref, &id) : 0; /* "12_3" */
    if (rr == -ENOENT) {
        no_such_job(c, conn, ref, 0);
        return NULL;
    }
    if (rr < 0 || (!json_is_string(ref) &&
                   proto_int(m, "job", 1, INT64_MAX, &id, err, sizeof(err)) < 0)) {
        rpc_fail(c, conn, rr < 0 ? "field 'job' must be a job id or ARRAY_INDEX" : err);
        return NULL;
    }
    job_t *j = idmap_get(c->jobs, id);
    if (!j && (j = db_job_find_finished(c, id)))
        *finished = true;
    if (!j)
        no_such_job(c, conn, ref, id);
    return j;
}

static void do_show(ctld_t *c, conn_t *conn, const json_t *m)
{
    bool finished;
    job_t *j = lookup(c, conn, m, &finished);
    if (!j)
        return;
    viewer_t who;
    privacy_viewer(c, conn, &who);
    if (!privacy_sees(&who, CONFIG_PRIVATE_JOBS, j->user)) {
        no_such_job(c, conn, json_object_get(m, "job"), j->id);
        if (finished)
            job_free(j);
        return;
    }
    json_t *o = job_to_json(c, j, true);
    privacy_trim(&who, j->user, o);
    json_t *ev = json_array();
    db_job_events(c, j->id, ev);
    json_object_set_new(o, "events", ev);
    if (finished)
        job_free(j);
    rpc_reply(c, conn, json_pack("{s:b,s:o}", "ok", 1, "job", o));
}

static bool may_modify(ctld_t *c, conn_t *conn, const job_t *j)
{
    return conn_uid(conn) == j->uid || is_operator(c, conn);
}

static job_t *lookup_modifiable(ctld_t *c, conn_t *conn, const json_t *m);

static json_t *expand_refs(ctld_t *c, conn_t *conn, const json_t *refs, json_t *results);
static bool busy_array(ctld_t *c, conn_t *conn, const json_t *refs, const char *user);

/* An array's id updates every element of it that has not ended, as scontrol does; an
 * element that cannot take the change stops the request there (the reply names it). */
static void do_update(ctld_t *c, conn_t *conn, const json_t *m)
{
    job_t *j = lookup_modifiable(c, conn, m);
    if (!j)
        return;
    char err[256], msg[400];
    json_t *refs = json_pack("[O]", json_object_get(m, "job")), *res = json_array();
    if (busy_array(c, conn, refs, NULL)) {
        json_decref(refs);
        json_decref(res);
        return;
    }
    json_t *ids = refs && res ? expand_refs(c, conn, refs, res) : NULL;
    json_decref(refs);
    json_decref(res);
    if (!ids) {
        rpc_fail(c, conn, "out of memory");
        return;
    }
    size_t k, n = json_array_size(ids);
    json_t *v;
    json_array_foreach(ids, k, v)
    {
        job_t *e = k == 0 ? j : idmap_get(c->jobs, json_integer_value(v));
        if (!e)
            continue;
        if (jobs_update(c, e, m, is_operator(c, conn), err, sizeof(err)) < 0) {
            if (n > 1)
                snprintf(msg, sizeof(msg), "element %d of array %lld (%zu of %zu updated): %s",
                         e->array_task, (long long)j->id, k, n, err);
            rpc_fail(c, conn, n > 1 ? msg : err);
            json_decref(ids);
            return;
        }
    }
    json_decref(ids);
    json_t *rep = json_pack("{s:b,s:o}", "ok", 1, "job", job_to_json(c, j, false));
    if (rep && n > 1)
        json_object_set_new(rep, "elements", json_integer((json_int_t)n));
    rpc_reply(c, conn, rep);
}

/* A live job's checkpoint agents and their key, for its owner or an operator
 * (`ductile checkpoints --job`). */
static void do_job_agents(ctld_t *c, conn_t *conn, const json_t *m)
{
    job_t *j = lookup_modifiable(c, conn, m);
    if (!j)
        return;
    char err[200];
    if (!j->ck_want || !j->ck_agents || !*j->ck_agents) {
        snprintf(err, sizeof(err), "job %lld has no checkpoint agents (%s)", (long long)j->id,
                 !j->ck_want          ? "it was submitted without --checkpoint-agents"
                 : j->ck_agents       ? "none started: it checkpoints to its files"
                                      : "not started yet");
        rpc_fail(c, conn, err);
        return;
    }
    rpc_reply(c, conn, json_pack("{s:b,s:s,s:s}", "ok", 1, "agents", j->ck_agents, "key", j->ck_key));
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
        rpc_fail(c, conn, err);
        return NULL;
    }
    viewer_t who;
    privacy_viewer(c, conn, &who);
    if (!may_modify(c, conn, j)) {
        snprintf(err, sizeof(err), "permission denied: job %lld belongs to %s", (long long)j->id,
                 privacy_owner(&who, j));
        rpc_fail(c, conn, err);
        return NULL;
    }
    return j;
}

/* The filters of a cancel (scancel's --state, --user, --name): NULL matches all. */
typedef struct cfilter {
    const char *user, *name;
    bool has_state;
    jstate_t state;
} cfilter_t;

/* NULL when j matches every filter, else why not (into buf). "R" also matches a job
 * being resized: it is running. */
static const char *filter_miss(const cfilter_t *f, const job_t *j, char *buf, size_t len)
{
    if (f->has_state && j->state != f->state &&
        !(f->state == JS_RUNNING && j->state == JS_RESIZING)) {
        snprintf(buf, len, "its state is %s, not %s", jstate_code(j->state), jstate_code(f->state));
        return buf;
    }
    if (f->user && strcmp(j->user, f->user)) {
        snprintf(buf, len, "it belongs to %s, not %s", j->user, f->user);
        return buf;
    }
    if (f->name && strcmp(j->name ? j->name : "", f->name)) {
        snprintf(buf, len, "its name is not %s", f->name);
        return buf;
    }
    return NULL;
}

typedef struct cmatch {
    const cfilter_t *f;
    uid_t uid;       /* without --user: the caller's own jobs */
    bool by_uid;
    job_t **v;
    size_t n;
} cmatch_t;

/* Ending for good: a cancel has nothing to do. (A job ending to be requeued can still
 * be cancelled: it then does not run again.) */
static bool ending(const job_t *j) { return j->state == JS_COMPLETING && j->final != JS_PENDING; }

static void match_one(int64_t id, void *val, void *arg)
{
    (void)id;
    cmatch_t *x = arg;
    job_t *j = val;
    char why[160];
    if (x->by_uid && j->uid != x->uid)
        return;
    if (ending(j) || filter_miss(x->f, j, why, sizeof(why)))
        return;
    x->v[x->n++] = j;
}

static json_t *cancel_result(int64_t id, const char *result, const char *detail)
{
    json_t *r = json_pack("{s:I,s:s}", "job", (json_int_t)id, "result", result);
    if (detail)
        json_object_set_new(r, "detail", json_string(detail));
    return r;
}

/* NULL when ids is a list of at most 100000 job ids, else what is wrong with it. */
static const char *bad_ids(const json_t *ids)
{
    if (!json_is_array(ids) || json_array_size(ids) > 100000)
        return "field 'jobs' must be an array of at most 100000 job ids";
    size_t k;
    json_t *v;
    int64_t id;
    json_array_foreach(ids, k, v) if (!json_is_string(v) && arrays_resolve(NULL, v, &id) < 0)
        return "field 'jobs' must hold job ids (positive integers, or \"12_3\" for an element "
               "of an array)";
    return NULL;
}

typedef struct members {
    int64_t array;
    json_t *out;
    const job_t *first; /* the member of lowest id */
} members_t;

static void add_member(int64_t id, void *val, void *arg)
{
    members_t *x = arg;
    const job_t *j = val;
    if (j->array_id != x->array || id == x->array)
        return;
    json_array_append_new(x->out, json_integer(id));
    if (!x->first || id < x->first->id)
        x->first = j;
}

static void add_array(int64_t id, void *val, void *arg)
{
    (void)id;
    const job_t *j = val;
    if (j->array_id > 0)
        idmap_put(arg, j->array_id, (void *)1);
}

/* A request on jobs of an array still being made waits until it is: the ids or
 * "12_3" in refs, or (filters) user's jobs. True: answered "try later". */
static bool busy_array(ctld_t *c, conn_t *conn, const json_t *refs, const char *user)
{
    /* (another user's array: refused as not theirs, made or not) */
    uid_t who = is_operator(c, conn) ? (uid_t)-1 : conn_uid(conn);
    const array_build_t *b = NULL;
    size_t k;
    const json_t *v;
    json_array_foreach(refs, k, v)
    {
        long long a = 0;
        if (json_is_integer(v))
            a = json_integer_value(v);
        else if (json_is_string(v))
            sscanf(json_string_value(v), "%lld_", &a);
        if (a > 0 && (b = arrays_building(c, a, NULL, who)))
            break;
    }
    if (!b && user)
        b = arrays_building(c, 0, user, who);
    if (b)
        arrays_busy_reply(c, conn, b);
    return b != NULL;
}

/* The jobs a list of references names, as ids: ids, "12_3" for an element, and an
 * array's id (the id of its first element) for every live element of it, as scancel
 * takes it. A reference to nothing goes to results as "no such job". */
static json_t *expand_refs(ctld_t *c, conn_t *conn, const json_t *refs, json_t *results)
{
    json_t *out = json_array();
    idmap_t *arrays = NULL; /* the arrays of the live jobs, made when first needed */
    size_t k;
    json_t *v;
    json_array_foreach(refs, k, v)
    {
        int64_t id;
        if (arrays_resolve(c, v, &id) < 0) {
            json_t *r = json_pack("{s:O,s:s}", "job", v, "result", "no such job");
            json_array_append_new(results, r);
            continue;
        }
        json_array_append_new(out, json_integer(id));
        if (!json_is_integer(v))
            continue;
        /* an array's id: its live elements, also when its first has ended (they were
         * left alone) */
        const job_t *j = idmap_get(c->jobs, id);
        if (!j && !arrays && (arrays = idmap_create()))
            idmap_foreach(c->jobs, add_array, arrays);
        if (j ? j->array_id != id : !arrays || !idmap_get(arrays, id))
            continue;
        members_t x = {.array = id, .out = json_array()};
        idmap_foreach(c->jobs, add_member, &x);
        /* another user's array is refused once, for its id, not once per element */
        const job_t *owner = j ? j : x.first;
        size_t m = owner && may_modify(c, conn, owner) ? json_array_size(x.out) : 0, q;
        if (!j && !m && owner) { /* its first has ended: the refusal names a live one */
            json_array_remove(out, json_array_size(out) - 1);
            json_array_append_new(out, json_integer(owner->id));
        }
        int64_t *ids = malloc((m + 1) * sizeof(int64_t));
        json_t *e;
        json_array_foreach(x.out, q, e) if (ids && q < m) ids[q] = json_integer_value(e);
        if (ids) {
            qsort(ids, m, sizeof(int64_t), idmap_cmp_key);
            for (q = 0; q < m; q++)
                json_array_append_new(out, json_integer(ids[q]));
        }
        free(ids);
        json_decref(x.out);
    }
    idmap_destroy(arrays);
    return out;
}

/* One cancel request for a list of jobs and/or filters, applied at once: no scheduling
 * pass runs between two of its jobs (a pass runs from the loop's idle handle, after
 * this handler), so cancelling a queue never starts part of it first. The reply has a
 * result per job: "cancelled", "already ended", "not yours", "no such job", or
 * "skipped" (a filter did not match; the detail says which). With ids: only the
 * listed jobs that match every filter; without: every matching job of the caller, or
 * of --user (operators only for others). The older form {"job": ID} still works. */
/* A request on many jobs (cancel, hold, release, requeue of an array of 10,000, or
 * `cancel -u alice`) acts on at most OPS_PER_REQUEST of them and answers the others'
 * ids as `rest`, which the command sends again: each job costs its saves, and 10,000
 * releases held the loop 1.5 s. Between two parts a pass may run, as between two
 * commands. */
#define OPS_PER_REQUEST 250

/* The ids of named (job ids, in order) past the first OPS_PER_REQUEST, taken out of it
 * into a new array; NULL: none. */
static json_t *take_rest(json_t *named)
{
    size_t n = json_array_size(named);
    if (n <= OPS_PER_REQUEST)
        return NULL;
    json_t *rest = json_array();
    for (size_t k = OPS_PER_REQUEST; rest && k < n; k++)
        json_array_append(rest, json_array_get(named, k));
    while (json_array_size(named) > OPS_PER_REQUEST)
        json_array_remove(named, json_array_size(named) - 1);
    return rest;
}

static void reply_results(ctld_t *c, conn_t *conn, json_t *results, json_t *rest)
{
    json_t *rep = json_pack("{s:b,s:o}", "ok", 1, "results", results);
    if (rep && rest)
        json_object_set(rep, "rest", rest);
    json_decref(rest);
    rpc_reply(c, conn, rep);
}

static void do_cancel(ctld_t *c, conn_t *conn, const json_t *m)
{
    if (!json_object_get(m, "jobs")) { /* a client before the list form */
        job_t *j = lookup_modifiable(c, conn, m);
        if (!j)
            return;
        int64_t id = j->id;
        jobs_cancel(c, j, "Cancelled");
        rpc_reply(c, conn, json_pack("{s:b,s:I}", "ok", 1, "job", (json_int_t)id));
        return;
    }
    char err[256];
    const char *state;
    cfilter_t f = {0};
    int64_t sig, scope;
    const json_t *ids = json_object_get(m, "jobs");
    if (proto_int_opt(m, "signal", 1, 64, 0, &sig, err, sizeof(err)) < 0 ||
        proto_int_opt(m, "scope", 0, 2, 0, &scope, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "user", 255, NULL, &f.user, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "name", 128, NULL, &f.name, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "state", 16, NULL, &state, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    const char *bad = bad_ids(ids);
    if (bad) {
        rpc_fail(c, conn, bad);
        return;
    }
    size_t k;
    json_t *v;
    if (state) {
        if (jstate_parse(state, &f.state) < 0) {
            rpc_fail(c, conn, "unknown state (use PD, R, RS or CG, or PENDING, RUNNING...)");
            return;
        }
        f.has_state = true;
    }
    bool mine = json_is_true(json_object_get(m, "me"));
    if (!json_array_size(ids) && !state && !f.user && !f.name && !mine) {
        rpc_fail(c, conn, "give job ids or a filter (state, user, me, name)");
        return;
    }
    char me[256];
    ctld_user_name(conn_uid(conn), me, sizeof(me));
    if (mine && !f.user) /* scancel --me: the caller's, whoever the caller's $USER says */
        f.user = me;
    viewer_t who;
    privacy_viewer(c, conn, &who);
    bool op = who.oper;
    if (f.user && strcmp(f.user, me) && !op) {
        rpc_fail(c, conn, "permission denied: only operators may cancel other users' jobs");
        return;
    }
    if (busy_array(c, conn, ids, json_array_size(ids) ? NULL : f.user ? f.user : me))
        return;
    json_t *results = json_array(), *rest = NULL;
    char why[160];
    if (json_array_size(ids)) {
        json_t *named = expand_refs(c, conn, ids, results);
        rest = take_rest(named);
        json_array_foreach(named, k, v)
        {
            int64_t id = json_integer_value(v);
            job_t *j = idmap_get(c->jobs, id);
            if (!j) {
                job_t *done = db_job_find_finished(c, id);
                json_array_append_new(results, cancel_result(id, done ? "already ended"
                                                                      : "no such job", NULL));
                job_free(done);
            } else if (!may_modify(c, conn, j)) {
                snprintf(why, sizeof(why), "permission denied: it belongs to %s",
                         privacy_owner(&who, j));
                json_array_append_new(results, cancel_result(id, "not yours", why));
            } else if (ending(j)) {
                json_array_append_new(results, cancel_result(id, "already ended", "ending"));
            } else if (filter_miss(&f, j, why, sizeof(why))) {
                json_array_append_new(results, cancel_result(id, "skipped", why));
            } else if (sig) { /* --signal: the job goes on */
                bool ok = jobs_signal(c, j, (int)sig, (int)scope, why, sizeof(why)) == 0;
                json_array_append_new(results, cancel_result(id, ok ? "signalled" : "failed",
                                                             ok ? NULL : why));
            } else {
                jobs_cancel(c, j, "Cancelled"); /* j may be freed */
                json_array_append_new(results, cancel_result(id, "cancelled", NULL));
            }
        }
        json_decref(named);
    } else {
        cmatch_t x = {.f = &f, .uid = conn_uid(conn), .by_uid = !f.user};
        x.v = malloc((idmap_count(c->jobs) + 1) * sizeof(job_t *));
        if (!x.v) {
            json_decref(results);
            rpc_fail(c, conn, "out of memory");
            return;
        }
        idmap_foreach(c->jobs, match_one, &x);
        qsort(x.v, x.n, sizeof(job_t *), by_id);
        if (x.n > OPS_PER_REQUEST) { /* the others by id: they matched the filter */
            rest = json_array();
            for (size_t i = OPS_PER_REQUEST; rest && i < x.n; i++)
                json_array_append_new(rest, json_integer(x.v[i]->id));
            x.n = OPS_PER_REQUEST;
        }
        for (size_t i = 0; i < x.n; i++) {
            int64_t id = x.v[i]->id;
            if (sig) {
                bool ok = jobs_signal(c, x.v[i], (int)sig, (int)scope, why, sizeof(why)) == 0;
                json_array_append_new(results, cancel_result(id, ok ? "signalled" : "failed",
                                                             ok ? NULL : why));
                continue;
            }
            jobs_cancel(c, x.v[i], "Cancelled");
            json_array_append_new(results, cancel_result(id, "cancelled", NULL));
        }
        free(x.v);
    }
    reply_results(c, conn, results, rest);
}

/* ductile hold / release / requeue {"jobs": [ids]}: pending jobs kept out of the
 * engine, or let back in (eligible.c); running jobs ended to wait again. A user acts on
 * their own jobs; an operator's hold (any job) only an operator releases. One result per
 * job: "held" / "released" / "requeued", or "failed" with why. */
typedef enum { ACT_HOLD, ACT_RELEASE, ACT_REQUEUE } act_t;

static void do_hold(ctld_t *c, conn_t *conn, const json_t *m, act_t act)
{
    const json_t *ids = json_object_get(m, "jobs");
    const char *bad = bad_ids(ids);
    if (bad || !json_array_size(ids)) {
        rpc_fail(c, conn, bad ? bad : "give the ids of the jobs");
        return;
    }
    size_t k;
    json_t *v;
    viewer_t who;
    privacy_viewer(c, conn, &who);
    bool op = who.oper;
    if (busy_array(c, conn, ids, NULL))
        return;
    json_t *results = json_array();
    json_t *named = expand_refs(c, conn, ids, results);
    json_t *rest = take_rest(named);
    json_array_foreach(named, k, v)
    {
        int64_t id = json_integer_value(v);
        job_t *j = idmap_get(c->jobs, id);
        char why[256] = "";
        if (!j) {
            job_t *done = db_job_find_finished(c, id);
            snprintf(why, sizeof(why), "%s", done ? "it has ended" : "no such job");
            job_free(done);
        } else if (!may_modify(c, conn, j)) {
            snprintf(why, sizeof(why), "permission denied: it belongs to %s",
                     privacy_owner(&who, j));
        } else if (act == ACT_HOLD) {
            elig_hold(c, j, op, why, sizeof(why));
        } else if (act == ACT_RELEASE) {
            elig_release(c, j, op, why, sizeof(why));
        } else {
            jobs_requeue_by_hand(c, j, why, sizeof(why));
        }
        static const char *const done[] = {"held", "released", "requeued"};
        json_array_append_new(results, cancel_result(id, *why ? "failed" : done[act],
                                                     *why ? why : NULL));
    }
    json_decref(named);
    reply_results(c, conn, results, rest);
}

/* An operator's resize ({nodes}) or the release of one ({release: true}); the reply
 * has the job as `show` gives it (its operator_resize and hold), and for a release a
 * message. The client follows the outcome with `show`. */
static void do_resize(ctld_t *c, conn_t *conn, const json_t *m)
{
    job_t *j = lookup_modifiable(c, conn, m);
    if (!j)
        return;
    char err[256], msg[256] = "";
    bool release;
    int64_t nodes;
    if (proto_bool_opt(m, "release", false, &release, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    if (release) {
        jobs_resize_release(c, j, msg, sizeof(msg));
    } else {
        int rc = proto_int(m, "nodes", 1, INT_MAX, &nodes, err, sizeof(err));
        if (rc == 0)
            rc = jobs_resize(c, j, (int)nodes, err, sizeof(err));
        if (rc == -EBUSY) { /* not now: the command tries again (util.c) */
            rpc_reply(c, conn, json_pack("{s:b,s:s,s:s}", "ok", 0, "code", "try_later", "error",
                                         err));
            return;
        }
        if (rc < 0) {
            rpc_fail(c, conn, err);
            return;
        }
    }
    json_t *rep = json_pack("{s:b,s:o}", "ok", 1, "job", job_to_json(c, j, true));
    if (release)
        json_object_set_new(rep, "message", json_string(msg));
    rpc_reply(c, conn, rep);
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
        /* what jobs may ask of it (NodeFeatures, NodeGres, NodeMemory: nodesel.c) */
        json_t *o = json_array_get(arr, json_array_size(arr) - 1);
        if (c->cfg.node_features[i])
            json_object_set_new(o, "features", json_string(c->cfg.node_features[i]));
        if (c->cfg.node_gpus[i])
            json_object_set_new(o, "gpus", json_integer(c->cfg.node_gpus[i]));
        json_object_set_new(o, "sched_memory_mb", json_integer(c->cfg.node_memory[i]));
        /* the peers its daemon asks when it hears nothing from us (nodes.c) */
        json_object_set_new(o, "peers", json_integer(n->npeers));
        if (n->limits) /* which of a job's limits its cgroups enforce there */
            json_object_set_new(o, "limits",
                                json_pack("{s:b,s:b}", "memory", (n->limits & NODE_LIMITS_MEMORY) != 0,
                                          "pids", (n->limits & NODE_LIMITS_PIDS) != 0));
        /* its last power reading while it is fresh (a silent node's is not its draw) */
        if (n->power_at > 0 && ctld_mono() - n->power_at <= c->cfg.node_timeout) {
            json_object_set_new(o, "power", json_real(n->power_w));
            json_object_set_new(o, "power_source", json_string(n->power_src));
        }
        /* its checkpoint agents' measurements, while fresh (ckptmeas.c) */
        if (ckptmeas_fresh(c, n))
            json_object_set_new(o, "checkpoints",
                                json_pack("{s:f,s:f,s:f,s:f}",
                                          "held", n->ck_held,
                                          "traffic", n->ck_traffic,
                                          "ops", n->ck_ops,
                                          "depletion", n->ck_depletion));
    }
    rpc_reply(c, conn, json_pack("{s:b,s:o}", "ok", 1, "nodes", arr));
}

static void do_drain(ctld_t *c, conn_t *conn, const json_t *m, bool drain)
{
    char err[256];
    const char *list, *why;
    if (!is_operator(c, conn)) {
        rpc_fail(c, conn, "permission denied: only operators may drain or resume nodes");
        return;
    }
    if (proto_str(m, "nodes", 65536, &list, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "reason", 120, NULL, &why, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    char **names_;
    int n;
    if (hostlist_expand(list, &names_, &n, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    for (int i = 0; i < n; i++)
        if (config_node_index(&c->cfg, names_[i]) < 0) {
            snprintf(err, sizeof(err), "unknown node '%s'", names_[i]);
            hostlist_free(names_, n);
            rpc_fail(c, conn, err);
            return;
        }
    bool down = drain && json_is_true(json_object_get(m, "down"));
    for (int i = 0; i < n; i++) {
        node_t *nd = &c->nodes[config_node_index(&c->cfg, names_[i])];
        nodes_set_drain(c, nd, drain, why);
        if (down) /* an operator's word that it failed: its jobs are decided now */
            nodes_call_down(c, nd, why ? why : "called down by an operator");
    }
    hostlist_free(names_, n);
    rpc_reply(c, conn, json_pack("{s:b}", "ok", 1));
}

static void do_status(ctld_t *c, conn_t *conn)
{
    int up = 0;
    for (int i = 0; i < c->nnodes; i++)
        up += c->nodes[i].state == NS_UP;
    json_t *rep =
          json_pack("{s:b,s:s,s:s,s:i,s:i,s:I,s:i,s:I,s:o,s:o,s:o,s:f}", "ok", 1, "cluster",
                    c->cfg.cluster_name, "policy", sched_policy_spec(c->sched), "nodes",
                    c->nnodes, "nodes_up", up, "jobs", (json_int_t)c->njobs_live, "pending",
                    /* held and waiting ones too (out of the engine: eligible.c) */
                    sched_pending_count(c->sched) + (int)(c->waiting ? idmap_count(c->waiting) : 0),
                    "step_output_bytes",
                    (json_int_t)c->step_bytes_relayed, "passes", stats_json(&c->pass_stats),
                    "commits", stats_json(&c->commit_stats), "loop",
                    stats_loop_json(&c->loop_stats), "stalled_s", c->stalled);
    if (rep && c->suspect_since) /* nodes.c, check_self */
        json_object_set_new(rep, "suspect_s", json_real(ctld_mono() - c->suspect_since));
    rpc_reply(c, conn, rep);
}

static void do_reconfigure(ctld_t *c, conn_t *conn)
{
    if (!is_operator(c, conn)) {
        rpc_fail(c, conn, "permission denied: only operators may reconfigure the controller");
        return;
    }
    config_changes_t ch;
    char err[1024];
    if (ctld_reconfigure(c, &ch, err, sizeof(err)) < 0) {
        char msg[1100];
        snprintf(msg, sizeof(msg), "%s; nothing changed", err);
        rpc_fail(c, conn, msg);
        return;
    }
    rpc_reply(c, conn, json_pack("{s:b,s:s,s:s,s:s}", "ok", 1, "file", c->conf_path, "applied",
                             ch.applied, "restart", ch.restart));
}

static void do_shutdown(ctld_t *c, conn_t *conn)
{
    if (!is_operator(c, conn)) {
        rpc_fail(c, conn, "permission denied: only operators may stop the controller");
        return;
    }
    rpc_reply(c, conn, json_pack("{s:b}", "ok", 1));
    c->stopping = true;
}

void rpc_on_message(ctld_t *c, conn_t *conn, json_t *msg)
{
    char err[128];
    const char *type;
    if (proto_type(msg, &type, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    if (!strcmp(type, "submit"))
        do_submit(c, conn, msg);
    else if (!strcmp(type, "queue"))
        do_queue(c, conn, msg);
    else if (!strcmp(type, "show"))
        do_show(c, conn, msg);
    else if (!strcmp(type, "hold") || !strcmp(type, "release") || !strcmp(type, "requeue"))
        do_hold(c, conn, msg, !strcmp(type, "hold")      ? ACT_HOLD
                              : !strcmp(type, "release") ? ACT_RELEASE
                                                         : ACT_REQUEUE);
    else if (!strcmp(type, "cancel"))
        do_cancel(c, conn, msg);
    else if (!strcmp(type, "update"))
        do_update(c, conn, msg);
    else if (!strcmp(type, "resize"))
        do_resize(c, conn, msg);
    else if (!strcmp(type, "nodes"))
        do_nodes(c, conn);
    else if (!strcmp(type, "drain"))
        do_drain(c, conn, msg, true);
    else if (!strcmp(type, "resume"))
        do_drain(c, conn, msg, false);
    else if (!strcmp(type, "history"))
        history_rpc(c, conn, msg);
    else if (!strcmp(type, "account_add") || !strcmp(type, "account_modify") ||
             !strcmp(type, "account_list") || !strcmp(type, "account_user"))
        accounts_rpc(c, conn, msg, type, is_operator(c, conn));
    else if (!strcmp(type, "priority"))
        accounts_priority_rpc(c, conn, msg);
    else if (!strcmp(type, "partitions") || !strcmp(type, "partition_update"))
        parts_rpc(c, conn, msg, is_operator(c, conn));
    else if (!strcmp(type, "reservation_create") || !strcmp(type, "reservation_delete") ||
             !strcmp(type, "reservation_list")) {
        char by[256];
        ctld_user_name(conn_uid(conn), by, sizeof(by));
        resv_rpc(c, conn, msg, type, is_operator(c, conn), by);
    }
    else if (!strcmp(type, "run"))
        steps_run(c, conn, msg);
    else if (!strcmp(type, "step_ack"))
        steps_ack(c, conn, msg);
    else if (!strcmp(type, "backup"))
        backup_rpc(c, conn, msg, is_operator(c, conn));
    else if (!strcmp(type, "step_attach"))
        steps_attach(c, conn, msg);
    else if (!strcmp(type, "step_close"))
        steps_close(c, conn, msg);
    else if (!strcmp(type, "step_input"))
        steps_input(c, conn, msg);
    else if (!strcmp(type, "power"))
        energy_rpc_power(c, conn, msg);
    else if (!strcmp(type, "power_corridor"))
        energy_rpc_corridor(c, conn, msg, is_operator(c, conn));
    else if (!strcmp(type, "status"))
        do_status(c, conn);
    else if (!strcmp(type, "job_agents"))
        do_job_agents(c, conn, msg);
    else if (!strcmp(type, "reconfigure"))
        do_reconfigure(c, conn);
    else if (!strcmp(type, "shutdown"))
        do_shutdown(c, conn);
    else {
        snprintf(err, sizeof(err), "unknown request '%.40s'", type);
        rpc_fail(c, conn, err);
    }
}
