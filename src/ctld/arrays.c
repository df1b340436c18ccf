/* Job arrays (`submit --array=1-100%10`, as Slurm's): one submission, one job per
 * element. Every element is a job of its own (its state, its run, its cancel), with the
 * id of the array's first element as its array_id and its index as array_task; "12_3"
 * names element 3 of array 12, and 12 the whole array. A throttle (%10) keeps the
 * elements past it out of the engine (eligible.c, JobArrayTaskLimit). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctld.h"
#include "strparse.h"

static char *dup_opt(const char *s) { return s ? strdup(s) : NULL; }

/* Another element like t: everything the submission gave, nothing of a run. */
static job_t *clone(const job_t *t)
{
    job_t *j = job_new();
    if (!j)
        return NULL;
    j->name = dup_opt(t->name);
    j->user = dup_opt(t->user);
    j->uid = t->uid;
    j->gid = t->gid;
    j->type = t->type;
    j->nodes = t->nodes;
    j->min_nodes = t->min_nodes;
    j->max_nodes = t->max_nodes;
    j->constraint = t->constraint;
    j->time_limit = t->time_limit;
    j->requeue = t->requeue;
    j->ck_want = t->ck_want;
    j->script = dup_opt(t->script);
    j->cwd = dup_opt(t->cwd);
    /* shared, not copied: never changed once submitted (10,000 copies of a 2 KB
     * environment were most of an array's memory) */
    j->env = json_incref(t->env);
    j->args = json_incref(t->args);
    j->out_path = dup_opt(t->out_path);
    j->err_path = dup_opt(t->err_path);
    j->umask = t->umask;
    j->hold = t->hold;
    j->begin = t->begin;
    j->depend = dup_opt(t->depend);
    j->power_min = t->power_min;
    j->power_max = t->power_max;
    memcpy(j->power_from, t->power_from, sizeof(j->power_from));
    j->io_intensity = t->io_intensity;
    memcpy(j->io_from, t->io_from, sizeof(j->io_from));
    j->array_max = t->array_max;
    j->account = dup_opt(t->account); /* accounts.c, partitions.c */
    j->account_id = t->account_id;
    j->nice = t->nice;
    j->partition = dup_opt(t->partition);
    j->tier = t->tier;
    j->reservation = dup_opt(t->reservation);
    j->resv_id = t->resv_id;
    if (nsel_copy_request(&t->sel, &j->sel) < 0 || !j->name || !j->user || !j->script ||
        !j->cwd || !j->env || (t->account && !j->account) || (t->partition && !j->partition) ||
        (t->reservation && !j->reservation) ||
        (t->out_path && !j->out_path) || (t->err_path && !j->err_path) ||
        (t->depend && !j->depend) || (t->args && !j->args)) {
        job_free(j);
        return NULL;
    }
    return j;
}

/* An array's elements are made a part per turn of the loop: made at once, 10,000 of
 * them held the loop for 0.4-0.8 s (each costs its row, its event and its checks), and
 * every other request and every node's heartbeat waited (issue 34). Between two parts
 * the loop serves everyone else and the engine may start the elements already made.
 * The submitter's reply waits for the last part. The indices still to make are on disk
 * (db_arrays.c) with each part, so a controller stopped or killed in the middle makes
 * the rest when it starts again, and the client's retry of the same submission (its
 * key) waits for them too. Requests on an array still being made are answered "try
 * later" (arrays_busy): a cancel must not miss the elements made after it. */
#define ARRAY_PART 500 /* elements a turn: 26-30 ms here (bench/dos) */

struct array_build {
    array_build_t *next;
    int64_t id;         /* the array's (its first element's) */
    job_t *tmpl;        /* what each element is made from */
    int *idx, n, made;  /* idx[made..n-1] are still to make */
    conn_t *conn;       /* the submitter, waiting for the reply; NULL: gone */
    json_t *answer;     /* ended (made, or failed): the reply, sent once the batch that
                         * ended it has committed (arrays_committed). A batch that fails
                         * brings the build back from the database instead (reload,
                         * arrays_restore), and this reply is never sent: a submitter
                         * told "failed" while its array was then made ran it twice */
};

static int part_size(void)
{
    const char *e = getenv("DUCTILE_TEST_ARRAY_PART"); /* a test hook: smaller parts */
    long v;
    return e && strparse_long(e, 1, 1000000, &v) == 0 ? (int)v : ARRAY_PART;
}

/* The elements a build has not made yet count against MaxJobs and MaxJobsPerUser as if
 * they were there. */
static void reserve(ctld_t *c, array_build_t *b, int d)
{
    c->array_reserved += d;
    quota_count(c, b->tmpl, d);
}

static void build_free(ctld_t *c, array_build_t *b)
{
    reserve(c, b, -(b->n - b->made));
    json_decref(b->answer);
    job_free(b->tmpl);
    free(b->idx);
    free(b);
}

static void on_part(uv_idle_t *h);

static void build_add(ctld_t *c, array_build_t *b)
{
    array_build_t **pp = &c->builds;
    while (*pp)
        pp = &(*pp)->next;
    *pp = b;
    if (!c->loop)
        return; /* no loop (unit tests): made as the loop would when one runs */
    if (!c->array_idle.data) {
        uv_idle_init(c->loop, &c->array_idle);
        c->array_idle.data = c;
    }
    /* an idle handle runs once a turn, and the turn's batch commits after it (a
     * repeating timer ran several parts in one turn) */
    uv_idle_start(&c->array_idle, on_part);
}

static void build_unlink(ctld_t *c, array_build_t *b)
{
    for (array_build_t **pp = &c->builds; *pp; pp = &(*pp)->next)
        if (*pp == b) {
            *pp = b->next;
            break;
        }
    if (!c->builds && c->array_idle.data)
        uv_idle_stop(&c->array_idle);
}

typedef struct elements {
    int64_t array;
    int64_t *ids;
    size_t n, cap;
} elements_t;

static void add_element(int64_t id, void *val, void *arg)
{
    elements_t *x = arg;
    if (((const job_t *)val)->array_id != x->array)
        return;
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 64;
        int64_t *v = realloc(x->ids, cap * sizeof(int64_t));
        if (!v)
            return;
        x->ids = v;
        x->cap = cap;
    }
    x->ids[x->n++] = id;
}

/* The build has ended with answer: out of the line, its reply after the commit. */
static void build_end(ctld_t *c, array_build_t *b, json_t *answer)
{
    build_unlink(c, b);
    b->answer = answer;
    b->next = c->array_ended;
    c->array_ended = b;
}

void arrays_committed(ctld_t *c)
{
    while (c->array_ended) {
        array_build_t *b = c->array_ended;
        c->array_ended = b->next;
        if (b->conn && b->answer)
            rpc_reply(c, b->conn, json_incref(b->answer));
        build_free(c, b);
    }
}

/* All or none: the elements made so far are cancelled, the submitter hears why. */
static void build_fail(ctld_t *c, array_build_t *b, const char *why)
{
    fprintf(stderr, "ductiled: array %lld: %d of %d elements made, then: %s; the array is "
            "cancelled\n", (long long)b->id, b->made, b->n, why);
    elements_t x = {.array = b->id};
    idmap_foreach(c->jobs, add_element, &x); /* collected first: a cancel may free it */
    for (size_t k = 0; k < x.n; k++) {
        job_t *o = idmap_get(c->jobs, x.ids[k]);
        if (o)
            jobs_cancel(c, o, "ArraySubmitFailed");
    }
    free(x.ids);
    db_array_build_del(c, b->id);
    build_end(c, b, proto_err_reply(PROTO_E_NONE, why));
}

static void on_retry(uv_timer_t *t)
{
    ctld_t *c = t->data;
    c->array_try = true;
    if (c->builds)
        uv_idle_start(&c->array_idle, on_part);
}

/* The next part of the first build in line, which then goes to the back of the line.
 * While the disk refuses the batches (db_degraded: each failed commit reloads the
 * controller), a part a second, not a part a turn. */
static void on_part(uv_idle_t *h)
{
    ctld_t *c = h->data;
    array_build_t *b = c->builds;
    if (!b) {
        uv_idle_stop(h);
        return;
    }
    if (db_degraded(c) && !c->array_try) {
        uv_idle_stop(h);
        if (!c->array_retry.data) {
            uv_timer_init(c->loop, &c->array_retry);
            c->array_retry.data = c;
        }
        if (!uv_is_active((uv_handle_t *)&c->array_retry))
            uv_timer_start(&c->array_retry, on_retry, 1000, 0);
        return;
    }
    c->array_try = false;
    double t0 = stats_clock();
    char err[1024];
    for (int k = part_size(); k > 0 && b->made < b->n; k--) {
        job_t *e = clone(b->tmpl);
        if (!e) {
            build_fail(c, b, "out of memory");
            return;
        }
        reserve(c, b, -1); /* made: counted as a job from here */
        e->array_id = b->id;
        e->array_task = b->idx[b->made++];
        if (jobs_submit(c, e, err, sizeof(err)) < 0) {
            job_free(e);
            b->made--; /* not made after all: build_free gives its place back */
            reserve(c, b, 1);
            build_fail(c, b, err);
            return;
        }
    }
    build_unlink(c, b);
    if (b->made < b->n) {
        db_array_build_made(c, b->id, b->made);
        build_add(c, b);
    } else {
        db_array_build_del(c, b->id);
        /* a test hook (test_array_build): the last part's batch fails, once */
        static bool failed_once;
        if (!failed_once && getenv("DUCTILE_TEST_ARRAY_FAIL_LAST")) {
            failed_once = true;
            db_batch_fail(c, "test: the last part's batch fails");
        }
        build_end(c, b, json_pack("{s:b,s:I,s:i}", "ok", 1, "job", (json_int_t)b->id, "array",
                                  b->n));
    }
    stats_loop_work(&c->loop_stats, "array", stats_clock() - t0, ctld_now());
    /* a test hook (test_array_build): the controller dies after a part is on disk */
    const char *crash = getenv("DUCTILE_TEST_ARRAY_CRASH");
    long after;
    if (crash && strparse_long(crash, 1, 1000000, &after) == 0 && ++c->array_parts >= after) {
        db_commit(c);
        fprintf(stderr, "ductiled: test: exiting after part %ld of an array\n", after);
        _exit(99);
    }
}

int arrays_submit(ctld_t *c, job_t *t, const int *idx, int n, conn_t *conn, char *err,
                  size_t errlen)
{
    if (c->njobs_live + c->array_reserved + n > c->cfg.max_jobs) {
        snprintf(err, errlen, "the queue is full: %d more jobs would pass MaxJobs=%d", n,
                 c->cfg.max_jobs);
        return -EAGAIN;
    }
    array_build_t *b = n > 1 ? calloc(1, sizeof(*b)) : NULL;
    if (n > 1 && (!b || !(b->tmpl = clone(t)) ||
                  !(b->idx = malloc((size_t)n * sizeof(int))))) {
        if (b)
            job_free(b->tmpl);
        free(b);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    t->array_task = idx[0];
    int rc = jobs_submit(c, t, err, errlen); /* checks the shape, once for all */
    if (rc < 0) {
        if (b)
            job_free(b->tmpl);
        free(b);
        return rc;
    }
    t->array_id = t->id;
    db_job_save(c, t);
    if (!b)
        return 0;
    memcpy(b->idx, idx, (size_t)n * sizeof(int));
    *b = (array_build_t){.id = t->id, .tmpl = b->tmpl, .idx = b->idx, .n = n, .made = 1,
                         .conn = conn};
    db_array_build_put(c, b->id, b->idx, b->n, b->made);
    reserve(c, b, n - 1);
    build_add(c, b);
    return 1;
}

/* At start, and after a batch that did not commit: the builds are what the database
 * says. One still in memory keeps its waiting submitter; one the database does not
 * have (its first element's batch was rolled back) tells its submitter why. */
static void restore_one(ctld_t *c, int64_t array, int *idx, int n, int made)
{
    array_build_t *b = calloc(1, sizeof(*b));
    job_t *first = idmap_get(c->jobs, array);
    job_t *ended = first ? NULL : db_job_find_finished(c, array);
    if (b && (first || ended))
        b->tmpl = clone(first ? first : ended);
    job_free(ended);
    if (!b || !b->tmpl) {
        fprintf(stderr, "ductiled: array %lld: %d of its %d elements made, and the rest cannot "
                "be made (%s): it keeps those it has\n", (long long)array, made, n,
                b ? "its first element is not in the database" : "out of memory");
        free(b);
        free(idx);
        db_array_build_del(c, array);
        return;
    }
    *b = (array_build_t){.id = array, .tmpl = b->tmpl, .idx = idx, .n = n, .made = made};
    for (array_build_t *o = c->restoring; o; o = o->next)
        if (o->id == array) {
            b->conn = o->conn;
            o->conn = NULL;
        }
    fprintf(stderr, "ductiled: array %lld: %d of its %d elements made, making the rest\n",
            (long long)array, made, n);
    reserve(c, b, n - made);
    build_add(c, b);
}

void arrays_restore(ctld_t *c)
{
    /* the counts were zeroed with the jobs (main.c's reload): nothing to give back */
    c->restoring = c->builds;
    c->builds = NULL;
    array_build_t **tail = &c->restoring; /* and those ended in the failed batch */
    while (*tail)
        tail = &(*tail)->next;
    *tail = c->array_ended;
    c->array_ended = NULL;
    c->array_reserved = 0;
    db_array_builds(c, restore_one);
    while (c->restoring) {
        array_build_t *o = c->restoring;
        c->restoring = o->next;
        if (o->conn)
            rpc_fail(c, o->conn, db_error(c) ? db_error(c) : "the controller could not record "
                     "the array");
        json_decref(o->answer);
        job_free(o->tmpl);
        free(o->idx);
        free(o);
    }
    if (!c->builds && c->array_idle.data)
        uv_idle_stop(&c->array_idle);
}

bool arrays_attach(ctld_t *c, int64_t array, conn_t *conn)
{
    array_build_t *lists[] = {c->builds, c->array_ended};
    for (int k = 0; k < 2; k++)
        for (array_build_t *b = lists[k]; b; b = b->next)
            if (b->id == array) {
                b->conn = conn; /* an earlier attempt's connection is gone or will be */
                return true;
            }
    return false;
}

void arrays_forget_conn(ctld_t *c, conn_t *conn)
{
    array_build_t *lists[] = {c->builds, c->array_ended};
    for (int k = 0; k < 2; k++)
        for (array_build_t *b = lists[k]; b; b = b->next)
            if (b->conn == conn)
                b->conn = NULL;
}

const array_build_t *arrays_building(const ctld_t *c, int64_t array, const char *user,
                                     uid_t uid)
{
    for (const array_build_t *b = c->builds; b; b = b->next)
        if ((b->id == array || (user && !strcmp(b->tmpl->user, user))) &&
            (uid == (uid_t)-1 || b->tmpl->uid == uid))
            return b;
    return NULL;
}

void arrays_unmade(const ctld_t *c, void (*fn)(const job_t *tmpl, int unmade, void *arg),
                   void *arg)
{
    for (const array_build_t *b = c->builds; b; b = b->next)
        fn(b->tmpl, b->n - b->made, arg);
}

void arrays_busy_reply(ctld_t *c, conn_t *conn, const array_build_t *b)
{
    char err[256];
    /* (the command adds "trying again for up to 30 s") */
    snprintf(err, sizeof(err), "array %lld is still being made (%d of %d elements)",
             (long long)b->id, b->made, b->n);
    rpc_reply(c, conn, json_pack("{s:b,s:s,s:s,s:f}", "ok", 0, "code", "try_later", "error", err,
                                 "retry_after", 0.2));
}

typedef struct count {
    int64_t array;
    int64_t self;
    int n;
} count_t;

static void count_active(int64_t id, void *val, void *arg)
{
    count_t *x = arg;
    const job_t *j = val;
    if (j->array_id == x->array && id != x->self && !j->waiting &&
        !(j->state == JS_COMPLETING && j->final != JS_PENDING))
        x->n++;
}

bool arrays_throttled(ctld_t *c, const job_t *j)
{
    if (j->array_max <= 0 || j->array_id <= 0)
        return false;
    count_t x = {.array = j->array_id, .self = j->id};
    idmap_foreach(c->jobs, count_active, &x);
    return x.n >= j->array_max;
}

void arrays_name(const job_t *j, char *buf, size_t len)
{
    if (j->array_id > 0)
        snprintf(buf, len, "%lld_%d", (long long)j->array_id, j->array_task);
    else
        snprintf(buf, len, "%lld", (long long)j->id);
}

typedef struct find {
    int64_t array;
    int task;
    int64_t id;
} find_t;

static void find_element(int64_t id, void *val, void *arg)
{
    find_t *f = arg;
    const job_t *j = val;
    if (j->array_id == f->array && j->array_task == f->task)
        f->id = id;
}

int arrays_resolve(ctld_t *c, const json_t *ref, int64_t *id)
{
    if (json_is_integer(ref)) {
        *id = json_integer_value(ref);
        return *id >= 1 ? 0 : -EINVAL;
    }
    const char *s = json_string_value(ref);
    long long a;
    int t, used = 0;
    if (!s || strlen(s) != json_string_length(ref) || /* "12_3\u0000x" is not 12_3 */
        sscanf(s, "%lld_%d%n", &a, &t, &used) != 2 || s[used] || a < 1 || t < 0)
        return -EINVAL;
    find_t f = {.array = a, .task = t};
    idmap_foreach(c->jobs, find_element, &f);
    if (f.id) {
        *id = f.id;
        return 0;
    }
    return db_array_element(c, a, t, id) == 1 ? 0 : -ENOENT;
}
