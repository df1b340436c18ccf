/* ductile update (scontrol update): a live job's time limit, name, nice and, while it
 * waits, node counts. Its owner lowers its time limit; only an operator raises one (or takes
 * it away). A running job's new limit goes to the node that runs its script, which
 * enforces it; when that node cannot be told now, nothing changes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld.h"
#include "strparse.h"

/* Raising a limit: a larger one, or none at all. */
static bool raises(double old, double new_)
{
    return old > 0 && (!(new_ > 0) || new_ > old);
}

static int set_time(ctld_t *c, job_t *j, double t, char *err, size_t len)
{
    char a[32], b[32];
    strparse_fmt_limit(j->time_limit, a, sizeof(a));
    strparse_fmt_limit(t, b, sizeof(b));
    if (j->state == JS_RUNNING || j->state == JS_RESIZING) {
        /* the batch node enforces it: told first, or nothing changes */
        json_t *m = j->nalloc ? json_pack("{s:s,s:I,s:i,s:f}", "type", "job_limit", "job",
                                          (json_int_t)j->id, "run", j->run, "time_limit", t)
                              : NULL;
        if (!m || nodes_send(c, j->alloc[0], m) < 0) {
            snprintf(err, len, "the node that runs job %lld's script cannot be reached now: "
                     "its time limit is unchanged (try again)", (long long)j->id);
            return -EAGAIN;
        }
    }
    j->time_limit = t;
    if (!j->waiting && sched_set_walltime(c->sched, j->id, t) < 0)
        fprintf(stderr, "ductiled: job %lld: the engine does not know it\n", (long long)j->id);
    char what[96];
    snprintf(what, sizeof(what), "time limit %s -> %s", a, b);
    db_job_event(c, j->id, ctld_now(), "update", j->nalloc, j->nalloc, NULL, 0, what);
    return 0;
}

static int set_sizes(ctld_t *c, job_t *j, int64_t nodes, int64_t minn, int64_t maxn, char *err,
                     size_t len)
{
    if (j->state != JS_PENDING) {
        snprintf(err, len, "job %lld is %s: only a waiting job's node counts change%s",
                 (long long)j->id, jstate_name(j->state),
                 j->type == SCHED_MALLEABLE ? " (ductile resize asks a malleable job to grow "
                                              "or shrink)"
                                            : "");
        return -EINVAL;
    }
    if ((minn || maxn) && j->type == SCHED_RIGID) {
        snprintf(err, len, "job %lld is rigid: it has one size (give --nodes N)",
                 (long long)j->id);
        return -EINVAL;
    }
    job_t was = *j;
    if (minn)
        j->min_nodes = (int)minn;
    if (maxn)
        j->max_nodes = (int)maxn;
    if (nodes)
        j->nodes = (int)nodes;
    else if (minn || maxn) /* a range: a moldable job asks for its top, others start low */
        j->nodes = j->type == SCHED_MOLDABLE ? j->max_nodes : j->min_nodes;
    sched_jobspec_t spec;
    int rc = jobs_check_shape(c, j, &spec, err, len);
    if (rc < 0) {
        j->nodes = was.nodes;
        j->min_nodes = was.min_nodes;
        j->max_nodes = was.max_nodes;
        return rc;
    }
    if (!j->waiting) { /* the engine takes it again in its place (its submission time) */
        sched_remove(c->sched, j->id);
        jobs_to_engine(c, j);
    }
    char what[96];
    snprintf(what, sizeof(what), "nodes %d [%d-%d] -> %d [%d-%d]", was.nodes, was.min_nodes,
             was.max_nodes, j->nodes, j->min_nodes, j->max_nodes);
    db_job_event(c, j->id, ctld_now(), "update", 0, 0, NULL, 0, what);
    return 0;
}

int jobs_update(ctld_t *c, job_t *j, const json_t *m, bool op, char *err, size_t len)
{
    const char *name;
    double t;
    int64_t nodes, minn, maxn, nice;
    bool has_nice = json_is_integer(json_object_get(m, "nice"));
    if (proto_str_opt(m, "name", 128, NULL, &name, err, len) < 0 ||
        proto_num_opt(m, "time", 0, STRPARSE_DURATION_MAX, -1, &t, err, len) < 0 ||
        proto_int_opt(m, "nodes", 1, 1 << 24, 0, &nodes, err, len) < 0 ||
        proto_int_opt(m, "min_nodes", 1, 1 << 24, 0, &minn, err, len) < 0 ||
        proto_int_opt(m, "max_nodes", 1, 1 << 24, 0, &maxn, err, len) < 0 ||
        proto_int_opt(m, "nice", -10000000, 10000000, 0, &nice, err, len) < 0)
        return -EINVAL;
    if (name && (!*name || strparse_has_control(name))) {
        snprintf(err, len, "a job name must be 1 to 128 characters, none of them a control "
                           "character");
        return -EINVAL;
    }
    if (!name && t < 0 && !nodes && !minn && !maxn && !has_nice) {
        snprintf(err, len, "nothing to change: give a time limit, a name, node counts or a"
                           " nice");
        return -EINVAL;
    }
    if (j->state == JS_COMPLETING) {
        snprintf(err, len, "job %lld is ending", (long long)j->id);
        return -EINVAL;
    }
    if (t >= 0 && raises(j->time_limit, t) && !op) {
        char a[32], b[32];
        strparse_fmt_limit(j->time_limit, a, sizeof(a));
        strparse_fmt_limit(t, b, sizeof(b));
        snprintf(err, len, "permission denied: only an operator may raise a time limit (job "
                 "%lld's is %s; you asked for %s); you may lower it", (long long)j->id, a, b);
        return -EPERM;
    }
    if (has_nice && nice < 0 && !op) {
        snprintf(err, len, "permission denied: only an operator may give a negative nice (a"
                 " higher priority); job %lld's nice may be 0 or more", (long long)j->id);
        return -EPERM;
    }
    /* node counts (a waiting job's) and a new limit (sent first to a running job's node)
     * can each fail; they never both apply to one job */
    if ((nodes || minn || maxn) && set_sizes(c, j, nodes, minn, maxn, err, len) < 0)
        return -EINVAL;
    if (t >= 0 && t != j->time_limit) {
        int rc = set_time(c, j, t, err, len);
        if (rc < 0)
            return rc;
    }
    if (has_nice && nice != j->nice) {
        char what[64];
        snprintf(what, sizeof(what), "nice %d -> %lld", j->nice, (long long)nice);
        j->nice = (int)nice;
        if (!j->waiting)
            sched_set_nice(c->sched, j->id, j->nice);
        db_job_event(c, j->id, ctld_now(), "update", j->nalloc, j->nalloc, NULL, 0, what);
    }
    if (name && strcmp(name, j->name)) {
        char *n = strdup(name);
        if (!n) {
            snprintf(err, len, "out of memory");
            return -ENOMEM;
        }
        free(j->name);
        j->name = n;
        char what[160];
        snprintf(what, sizeof(what), "name %s", name);
        db_job_event(c, j->id, ctld_now(), "update", j->nalloc, j->nalloc, NULL, 0, what);
    }
    db_job_save(c, j);
    jobs_want_schedule(c);
    return 0;
}
