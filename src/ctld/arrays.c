/* Job arrays (`submit --array=1-100%10`, as Slurm's): one submission, one job per
 * element. Every element is a job of its own (its state, its run, its cancel), with the
 * id of the array's first element as its array_id and its index as array_task; "12_3"
 * names element 3 of array 12, and 12 the whole array. A throttle (%10) keeps the
 * elements past it out of the engine (eligible.c, JobArrayTaskLimit). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld.h"

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

int arrays_submit(ctld_t *c, job_t *t, const int *idx, int n, char *err, size_t errlen)
{
    if (c->njobs_live + n > c->cfg.max_jobs) {
        snprintf(err, errlen, "the queue is full: %d more jobs would pass MaxJobs=%d", n,
                 c->cfg.max_jobs);
        return -EAGAIN;
    }
    /* the others are made before the first is given away (its id names them) */
    job_t **more = calloc((size_t)n, sizeof(job_t *));
    for (int k = 1; more && k < n; k++)
        if (!(more[k] = clone(t))) {
            for (int q = 1; q < k; q++)
                job_free(more[q]);
            free(more);
            more = NULL;
        }
    if (!more) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    t->array_task = idx[0];
    int rc = jobs_submit(c, t, err, errlen); /* checks the shape, once for all */
    if (rc == 0) {
        t->array_id = t->id;
        db_job_save(c, t);
    }
    for (int k = 1; k < n; k++) {
        if (rc == 0) {
            more[k]->array_id = t->id;
            more[k]->array_task = idx[k];
            rc = jobs_submit(c, more[k], err, errlen);
            if (rc == 0)
                continue;
            /* the elements made so far are cancelled with it: all or none */
            for (int64_t id = t->id; id < t->id + k; id++) { /* ids follow each other */
                job_t *o = idmap_get(c->jobs, id);
                if (o && o->array_id == t->id)
                    jobs_cancel(c, o, "ArraySubmitFailed");
            }
        }
        job_free(more[k]);
    }
    free(more);
    return rc;
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
