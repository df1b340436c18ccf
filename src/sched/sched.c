/* Engine state and events: what the caller tells the engine. The decisions live in
 * sched_core.c (shared passes) and policies/ (one file per policy). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_internal.h"

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

int sched_create(int nnodes, const char *spec, sched_t **out, char *err, size_t errlen)
{
    *out = NULL;
    if (nnodes < 1 || nnodes > (1 << 24))
        return ERR("cluster size %d out of range (1..%d)", nnodes, 1 << 24);
    sched_t *s = calloc(1, sizeof(*s));
    if (!s)
        return ERR("out of memory");
    int rc = policy_parse(spec ? spec : "fcfs", &s->policy, s->params, &s->tick,
                          &s->power_admit, s->spec, sizeof(s->spec), err, errlen);
    if (rc < 0) {
        free(s);
        return rc;
    }
    s->nnodes = nnodes;
    s->avail = nodeset_create(nnodes);
    s->freeset = nodeset_create(nnodes);
    s->jobs = idmap_create();
    if (!s->avail || !s->freeset || !s->jobs) {
        sched_destroy(s);
        return ERR("out of memory");
    }
    nodeset_set_all(s->avail);
    nodeset_set_all(s->freeset);
    s->nfree = s->navail = nnodes;
    sched_set_backoff(s, 10, 300);
    s->pw_upper = INFINITY;
    prio_init(s);
    *out = s;
    return 0;
}

/* Jobs come from slabs of JOB_SLAB. With 100,000 jobs queued, a pass that walks the
 * queue spent 85 % of its time waiting for each job's memory when the jobs were
 * allocated one by one among the controller's other allocations (bench/scale). Under
 * AddressSanitizer each job has its own allocation, so that a use after its end is
 * still caught. */
#define JOB_SLAB 1024
#if defined(__SANITIZE_ADDRESS__)
#define JOB_POOL 0
#else
#define JOB_POOL 1
#endif

static sjob_t *job_alloc(sched_t *s)
{
    if (!JOB_POOL)
        return calloc(1, sizeof(sjob_t));
    if (!s->job_free) {
        sjob_t **slabs = realloc(s->slabs, (size_t)(s->nslabs + 1) * sizeof(*slabs));
        if (!slabs)
            return NULL;
        s->slabs = slabs;
        sjob_t *slab = malloc(JOB_SLAB * sizeof(sjob_t));
        if (!slab)
            return NULL;
        s->slabs[s->nslabs++] = slab;
        for (int i = JOB_SLAB - 1; i >= 0; i--) {
            slab[i].qnext = s->job_free;
            s->job_free = &slab[i];
        }
    }
    sjob_t *j = s->job_free;
    s->job_free = j->qnext;
    memset(j, 0, sizeof(*j));
    return j;
}

static void job_release(sched_t *s, sjob_t *j)
{
    if (!j)
        return;
    free(j->nodes);
    free(j->io);
    s->nmasked -= j->allowed || j->required;
    s->npreempt -= j->spec.preempt;
    nodesel_release(s, j);
    if (!JOB_POOL) {
        free(j);
        return;
    }
    j->qnext = s->job_free;
    s->job_free = j;
}

static void free_job(int64_t key, void *val, void *arg)
{
    (void)key;
    job_release(arg, val);
}

void sched_destroy(sched_t *s)
{
    if (!s)
        return;
    if (s->jobs) {
        idmap_foreach(s->jobs, free_job, s);
        idmap_destroy(s->jobs);
    }
    prio_destroy(s);
    lim_free(s);
    resv_free(s);
    nodesel_destroy(s);
    nodeset_destroy(s->avail);
    nodeset_destroy(s->freeset);
    free(s->byend);
    free(s->acts);
    free(s->actnodes);
    free(s->actoff);
    free(s->tmp);
    for (int i = 0; i < s->nslabs; i++)
        free(s->slabs[i]);
    free(s->slabs);
    free(s);
}

int sched_nnodes(const sched_t *s) { return s->nnodes; }
const char *sched_policy_spec(const sched_t *s) { return s->spec; }
double sched_tick(const sched_t *s) { return s->tick; }

/* --- validation --- */

static int check_spec(const sched_t *s, const sched_jobspec_t *in, sched_jobspec_t *out, char *err,
                      size_t errlen)
{
    *out = *in;
    if (in->type < SCHED_RIGID || in->type > SCHED_EVOLVING)
        return ERR("job %lld: unknown job type %d", (long long)in->id, (int)in->type);
    if (in->constraint < SCHED_CONS_NONE || in->constraint > SCHED_CONS_SQUARE)
        return ERR("job %lld: unknown node constraint %d", (long long)in->id, (int)in->constraint);
    if (!isfinite(in->submit))
        return ERR("job %lld: submit time is not a number", (long long)in->id);
    if (in->nodes < 1)
        return ERR("job %lld: requested nodes must be at least 1 (got %d)", (long long)in->id,
                   in->nodes);
    if (in->min_nodes < 0 || in->max_nodes < 0 || in->pref_nodes < 0)
        return ERR("job %lld: negative node bound", (long long)in->id);
    if (isnan(in->walltime))
        return ERR("job %lld: walltime is not a number", (long long)in->id);
    if (!(in->io_intensity >= 0 && in->io_intensity <= 1))
        return ERR("job %lld: I/O intensity %g is not between 0 and 1", (long long)in->id,
                   in->io_intensity);
    if (in->type == SCHED_RIGID) {
        out->min_nodes = out->max_nodes = out->pref_nodes = in->nodes;
    } else {
        if (!out->min_nodes)
            out->min_nodes = in->nodes;
        if (!out->max_nodes)
            out->max_nodes = in->nodes;
        if (!out->pref_nodes)
            out->pref_nodes = in->nodes;
    }
    if (out->min_nodes > out->max_nodes)
        return ERR("job %lld: min nodes %d exceeds max nodes %d", (long long)in->id, out->min_nodes,
                   out->max_nodes);
    if (in->type != SCHED_MOLDABLE && (in->nodes < out->min_nodes || in->nodes > out->max_nodes))
        return ERR("job %lld: requested nodes %d outside [%d, %d]", (long long)in->id, in->nodes,
                   out->min_nodes, out->max_nodes);
    if (out->max_nodes > s->nnodes)
        out->max_nodes = s->nnodes;
    if (out->min_nodes > s->nnodes)
        return ERR("job %lld: needs at least %d nodes but the cluster has %d", (long long)in->id,
                   out->min_nodes, s->nnodes);
    if (out->pref_nodes < out->min_nodes)
        out->pref_nodes = out->min_nodes;
    if (out->pref_nodes > out->max_nodes)
        out->pref_nodes = out->max_nodes;
    int lo = cons_smallest_geq(out->min_nodes, in->constraint, out->min_nodes, out->max_nodes);
    if (!lo)
        return ERR("job %lld: no size in [%d, %d] satisfies constraint %s", (long long)in->id,
                   out->min_nodes, out->max_nodes, sched_constraint_name(in->constraint));
    if (in->type != SCHED_MOLDABLE && !cons_valid(in->nodes, in->constraint))
        return ERR("job %lld: %d nodes violates constraint %s", (long long)in->id, in->nodes,
                   sched_constraint_name(in->constraint));
    return nodesel_check(s, out, err, errlen);
}

int sched_check(const sched_t *s, const sched_jobspec_t *spec, char *err, size_t errlen)
{
    sched_jobspec_t v;
    return check_spec(s, spec, &v, err, errlen);
}

/* A job as submitted: every field zero but these. */
static void job_init(sjob_t *j, const sched_jobspec_t *spec)
{
    j->spec = *spec;
    j->mtct = -1;
    j->end_est = INFINITY;
    j->endpos = -1;
    j->reason = SCHED_R_PRIORITY;
    j->reason_job = -1;
    j->reserved_start = -1;
    j->not_adaptive = spec->wait_adaptive;
    j->last_resize = -INFINITY;
}

int sched_will_run(const sched_t *s, const sched_jobspec_t *spec, int ahead, double *start,
                   int *size, char *err, size_t errlen)
{
    sched_jobspec_t v;
    int rc = check_spec(s, spec, &v, err, errlen);
    if (rc < 0)
        return rc;
    sjob_t probe;
    memset(&probe, 0, sizeof(probe));
    job_init(&probe, &v);
    if (nodesel_attach_own(s, &probe) < 0) {
        nodesel_release_own(&probe);
        return snprintf(err, errlen, "out of memory"), -ENOMEM;
    }
    int avail = 0;
    /* (not counted in nmasked: core_will_run sees its sizes, not its nodes) */
    if ((probe.allowed || probe.required) &&
        nodesel_unrunnable(s, &probe, core_min_start(&probe, false))) {
        *start = -1;
        rc = 0;
    } else {
        rc = core_will_run(s, &probe, ahead, start, &avail);
        if (rc == 1 && (probe.allowed || probe.required)) { /* not before its own nodes */
            double at = nodesel_earliest(s, &probe, core_min_start(&probe, false));
            if (isinf(at))
                *start = -1, rc = 0;
            else if (*start < at)
                *start = at;
        }
    }
    nodesel_release_own(&probe);
    int fit = rc == 1 ? core_fit(&probe, avail, false) : 0; /* a moldable job: up to max */
    *size = fit > 0 ? fit : core_min_start(&probe, false);
    return rc;
}

static sjob_t *new_job(sched_t *s, const sched_jobspec_t *spec)
{
    sjob_t *j = job_alloc(s);
    if (j) {
        job_init(j, spec);
        s->npreempt += spec->preempt;
    }
    return j;
}

bool core_before(const sjob_t *a, const sjob_t *b)
{
    if (a->cls != b->cls)
        return a->cls > b->cls;
    if (a->spec.tier != b->spec.tier) /* a higher partition tier first (Slurm's PriorityTier) */
        return a->spec.tier > b->spec.tier;
    if (a->prio != b->prio)
        return a->prio > b->prio;
    if (a->spec.submit != b->spec.submit)
        return a->spec.submit < b->spec.submit;
    return a->spec.id < b->spec.id;
}

/* out of the list, still in s->pend */
static void list_unlink(sched_t *s, sjob_t *j)
{
    if (j->qprev)
        j->qprev->qnext = j->qnext;
    else
        s->qhead = j->qnext;
    if (j->qnext)
        j->qnext->qprev = j->qprev;
    else
        s->qtail = j->qprev;
    j->qprev = j->qnext = NULL;
    s->npending--;
}

void core_queue_unlink(sched_t *s, sjob_t *j)
{
    list_unlink(s, j);
    prio_pend_del(s, j);
}

void core_queue_park(sched_t *s, sjob_t *j) { list_unlink(s, j); }

/* into the list before at (NULL: at its end), s->pend left alone */
static void list_link_before(sched_t *s, sjob_t *j, sjob_t *at)
{
    j->qnext = at;
    j->qprev = at ? at->qprev : s->qtail;
    if (j->qprev)
        j->qprev->qnext = j;
    else
        s->qhead = j;
    if (at)
        at->qprev = j;
    else
        s->qtail = j;
    s->npending++;
}

void core_queue_unpark(sched_t *s, sjob_t *j, sjob_t *at)
{
    list_link_before(s, j, at);
    /* back between the neighbours it had in s->pend, or the two orders now differ */
    if ((j->qprev && j->qprev->pidx >= j->pidx) || (j->qnext && j->qnext->pidx <= j->pidx))
        s->pend_moved = true;
}

void core_queue_link_before(sched_t *s, sjob_t *j, sjob_t *at)
{
    list_link_before(s, j, at);
    s->pend_moved = s->pend_moved || at; /* in the list elsewhere than at its tail */
    prio_pend_add(s, j);
}

void core_queue_insert(sched_t *s, sjob_t *j)
{
    /* Arrivals come almost always in order, so search from the tail. */
    sjob_t *p = s->qtail;
    while (p && core_before(j, p))
        p = p->qprev;
    core_queue_link_before(s, j, p ? p->qnext : s->qhead);
}

int sched_submit(sched_t *s, const sched_jobspec_t *spec, char *err, size_t errlen)
{
    sched_jobspec_t v;
    int rc = check_spec(s, spec, &v, err, errlen);
    if (rc < 0)
        return rc;
    if (idmap_get(s->jobs, v.id))
        return snprintf(err, errlen, "job %lld exists already", (long long)v.id), -EEXIST;
    sjob_t *j = new_job(s, &v);
    int arc = j ? nodesel_attach(s, j) : -ENOMEM;
    if (j)
        s->nmasked += j->allowed || j->required; /* job_release counts it out */
    if (!j || arc < 0 || idmap_put(s->jobs, v.id, j) < 0) {
        job_release(s, j);
        return snprintf(err, errlen, "out of memory"), -ENOMEM;
    }
    prio_attach(s, j);
    if (prio_active(s)) {
        /* its place is found at the next pass, one sort for a burst of submissions */
        prio_job_set(s, j);
        core_queue_link_before(s, j, NULL);
        s->prio_dirty = true;
    } else {
        prio_job_set(s, j);
        core_queue_insert(s, j);
    }
    return 0;
}

/* --- the by-end index: running jobs ordered by expected end, for backfilling --- */

static bool end_before(const sjob_t *a, const sjob_t *b)
{
    if (a->end_est != b->end_est)
        return a->end_est < b->end_est;
    return a->spec.id < b->spec.id;
}

static void byend_remove(sched_t *s, sjob_t *j)
{
    if (j->endpos < 0)
        return;
    int i = j->endpos;
    memmove(&s->byend[i], &s->byend[i + 1], (size_t)(s->nbyend - i - 1) * sizeof(sjob_t *));
    s->nbyend--;
    for (int k = i; k < s->nbyend; k++)
        s->byend[k]->endpos = k;
    j->endpos = -1;
}

static void byend_insert(sched_t *s, sjob_t *j)
{
    if (s->nbyend == s->capbyend) {
        int ncap = s->capbyend ? s->capbyend * 2 : 64;
        sjob_t **nb = realloc(s->byend, (size_t)ncap * sizeof(*nb));
        if (!nb)
            abort(); /* the engine cannot continue without its index */
        s->byend = nb;
        s->capbyend = ncap;
    }
    int lo = 0, hi = s->nbyend;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (end_before(s->byend[mid], j))
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(&s->byend[lo + 1], &s->byend[lo], (size_t)(s->nbyend - lo) * sizeof(sjob_t *));
    s->byend[lo] = j;
    s->nbyend++;
    for (int k = lo; k < s->nbyend; k++)
        s->byend[k]->endpos = k;
}

void core_byend_update(sched_t *s, sjob_t *j)
{
    if (!s->policy->needs_end_order)
        return;
    byend_remove(s, j);
    if (j->state != SCHED_PENDING)
        byend_insert(s, j);
}

/* --- running list, kept in start order --- */

void core_running_add(sched_t *s, sjob_t *j)
{
    j->rprev = s->rtail;
    j->rnext = NULL;
    if (s->rtail)
        s->rtail->rnext = j;
    else
        s->rhead = j;
    s->rtail = j;
    s->nrunning++;
    core_queue_unlink(s, j);
    core_byend_update(s, j);
}

static void running_unlink(sched_t *s, sjob_t *j)
{
    if (j->rprev)
        j->rprev->rnext = j->rnext;
    else
        s->rhead = j->rnext;
    if (j->rnext)
        j->rnext->rprev = j->rprev;
    else
        s->rtail = j->rprev;
    j->rprev = j->rnext = NULL;
    s->nrunning--;
    byend_remove(s, j);
}

/* Nodes leave a job: those still available become free. */
static void release_nodes(sched_t *s, const int *nodes, int n)
{
    /* With every node up (the usual case) no availability mask is needed. */
    s->nfree += nodeset_set_ids(s->freeset, s->navail == s->nnodes ? NULL : s->avail, nodes, n);
}

int sched_remove(sched_t *s, int64_t id)
{
    sjob_t *j = idmap_del(s->jobs, id);
    if (!j)
        return -ENOENT;
    if (j->state == SCHED_PENDING) {
        core_queue_unlink(s, j);
    } else {
        prio_charge(s, j);
        release_nodes(s, j->nodes, j->nalloc);
        if (j->state == SCHED_RESIZING)
            s->nresizing--;
        if (j->state == SCHED_STOPPING)
            s->nstopping--;
        running_unlink(s, j);
    }
    if (j->request)
        s->nrequests--;
    if (j->oper_hold_until > 0)
        s->nholds--;
    job_release(s, j);
    return 0;
}

void core_requeue(sched_t *s, sjob_t *j, sched_class_t cls)
{
    prio_charge(s, j);
    release_nodes(s, j->nodes, j->nalloc);
    if (j->state == SCHED_RESIZING)
        s->nresizing--;
    if (j->state == SCHED_STOPPING)
        s->nstopping--;
    running_unlink(s, j);
    if (j->request) {
        j->request = 0;
        s->nrequests--;
    }
    if (j->oper_hold_until > 0) {
        j->oper_hold_until = 0;
        s->nholds--;
    }
    /* the next run starts as a new submission would: what the last run's application
     * accepted, its back-offs and measurements do not carry over */
    sched_jobspec_t spec = j->spec;
    if (j->app_limits) {
        spec.min_nodes = j->sub_min;
        spec.max_nodes = j->sub_max;
        spec.pref_nodes = j->sub_pref;
    }
    int *nodes = j->nodes, cap = j->cap, exp = j->expansions, shr = j->shrinks;
    double *io = j->io, prio = j->prio, prio_at = j->prio_at, prio_fs = j->prio_fs;
    prio_node_t *leaf = j->leaf;
    lim_state_t *ulim = j->ulim;
    int io_lo = j->io_lo, io_n = j->io_n;
    nodeset_t *allowed = j->allowed, *required = j->required;
    memset(j, 0, sizeof(*j));
    job_init(j, &spec);
    j->allowed = allowed; /* the nodes it asked for, as its sizes (nodesel.c) */
    j->required = required;
    j->io = io; /* a property of the application, as its sizes are */
    j->io_lo = io_lo;
    j->io_n = io_n;
    j->nodes = nodes;
    j->cap = cap;
    j->expansions = exp;
    j->shrinks = shr;
    j->cls = cls;
    j->steal_due = cls == SCHED_CLASS_FAILED;
    j->leaf = leaf; /* still its user's and account's */
    j->ulim = ulim;
    j->prio = prio; /* and what it was computed from (sched_job_priority) */
    j->prio_at = prio_at;
    j->prio_fs = prio_fs;
    core_queue_insert(s, j);
}

int sched_set_class(sched_t *s, int64_t id, sched_class_t cls)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    if (j->state != SCHED_PENDING || cls < SCHED_CLASS_NORMAL || cls > SCHED_CLASS_FAILED)
        return -EINVAL;
    core_queue_unlink(s, j);
    j->cls = cls;
    core_queue_insert(s, j);
    return 0;
}

int sched_set_interruptible(sched_t *s, int64_t id, bool interruptible)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    j->spec.no_interrupt = !interruptible;
    return 0;
}

int sched_set_stopping(sched_t *s, int64_t id)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    if (j->state != SCHED_RUNNING)
        return -EINVAL;
    core_stop(s, j);
    return 0;
}

int sched_requeue(sched_t *s, int64_t id, sched_class_t cls)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    if (j->state == SCHED_PENDING || cls < SCHED_CLASS_NORMAL || cls > SCHED_CLASS_FAILED)
        return -EINVAL;
    core_requeue(s, j, cls);
    return 0;
}

/* The job holding node (NULL if none), its index there, and what a failure of the
 * node does to it. */
static sjob_t *failure_of(const sched_t *s, int node, int *at, sched_failure_t *what)
{
    *what = SCHED_FAIL_IDLE;
    for (sjob_t *j = s->rhead; j; j = j->rnext)
        for (int i = 0; i < j->nalloc; i++)
            if (j->nodes[i] == node) {
                *at = i;
                bool runs_on = j->spec.type == SCHED_MALLEABLE && j->state == SCHED_RUNNING &&
                               i > 0 && j->ncommit > j->spec.min_nodes &&
                               cons_valid(j->ncommit - 1, j->spec.constraint) &&
                               !(j->required && nodeset_test(j->required, node));
                *what = runs_on ? SCHED_FAIL_SHRUNK : SCHED_FAIL_REQUEUED;
                return j;
            }
    return NULL;
}

sched_failure_t sched_failure_outcome(const sched_t *s, int node, int64_t *job)
{
    int at;
    sched_failure_t what;
    const sjob_t *j = node >= 0 && node < s->nnodes ? failure_of(s, node, &at, &what) : NULL;
    *job = j ? j->spec.id : -1;
    return j ? what : SCHED_FAIL_IDLE;
}

int sched_node_failed(sched_t *s, int node, int64_t *job, sched_failure_t *what)
{
    *job = -1;
    *what = SCHED_FAIL_IDLE;
    if (node < 0 || node >= s->nnodes)
        return -EINVAL;
    int at = -1;
    sjob_t *owner = failure_of(s, node, &at, what);
    sched_set_node_available(s, node, false);
    if (!owner)
        return 0;
    *job = owner->spec.id;
    if (*what == SCHED_FAIL_SHRUNK) {
        prio_charge(s, owner);
        memmove(&owner->nodes[at], &owner->nodes[at + 1],
                (size_t)(owner->nalloc - at - 1) * sizeof(int));
        owner->ncommit--;
        owner->nalloc--;
        return 0;
    }
    core_requeue(s, owner, SCHED_CLASS_FAILED);
    return 0;
}

int sched_resize_done(sched_t *s, int64_t id, bool ok)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    if (j->state != SCHED_RESIZING)
        return -EINVAL;
    prio_charge(s, j);
    if (j->target > j->ncommit) { /* expand */
        if (ok) {
            j->ncommit = j->nalloc;
            j->expansions++;
        } else {
            release_nodes(s, j->nodes + j->ncommit, j->nalloc - j->ncommit);
            j->nalloc = j->ncommit;
        }
    } else if (ok) { /* shrink */
        release_nodes(s, j->nodes + j->target, j->ncommit - j->target);
        j->ncommit = j->nalloc = j->target;
        j->shrinks++;
    }
    if (ok)
        j->ndeclines = 0;
    j->state = SCHED_RUNNING;
    j->target = 0;
    s->nresizing--;
    return 0;
}

int sched_set_mtct(sched_t *s, int64_t id, double mtct)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    j->mtct = isfinite(mtct) && mtct >= 0 ? mtct : -1;
    return 0;
}

int sched_set_adaptive(sched_t *s, int64_t id, bool adaptive)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    j->not_adaptive = !adaptive;
    j->was_adaptive |= adaptive;
    return 0;
}

int sched_set_end_estimate(sched_t *s, int64_t id, double t)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j || j->state == SCHED_PENDING)
        return j ? -EINVAL : -ENOENT;
    if (j->state == SCHED_STOPPING)
        return 0; /* it ends now, whatever it was expected to do */
    j->end_est = isnan(t) ? INFINITY : t;
    core_byend_update(s, j);
    return 0;
}

int sched_set_walltime(sched_t *s, int64_t id, double walltime)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    if (isnan(walltime) || walltime < 0)
        return -EINVAL;
    double old = j->spec.walltime;
    j->spec.walltime = walltime;
    if (j->state == SCHED_PENDING || j->state == SCHED_STOPPING)
        return 0;
    /* its estimate moves by the change (a resized job's was scaled from its sizes) */
    if (!(walltime > 0))
        j->end_est = INFINITY;
    else if (!(old > 0) || isinf(j->end_est))
        j->end_est = j->start + walltime;
    else
        j->end_est += walltime - old;
    core_byend_update(s, j);
    return 0;
}

int sched_request_resize(sched_t *s, int64_t id, int nodes, bool op, char *err, size_t errlen)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return snprintf(err, errlen, "job %lld not found", (long long)id), -ENOENT;
    if (j->state == SCHED_PENDING)
        return ERR("job %lld is not running", (long long)id);
    if (j->state == SCHED_STOPPING)
        return ERR("job %lld is being stopped to run again later", (long long)id);
    if (!op && j->spec.type != SCHED_EVOLVING)
        return ERR("job %lld is not an evolving job", (long long)id);
    if (op && j->spec.type == SCHED_RIGID)
        return ERR("job %lld is rigid: its size cannot change", (long long)id);
    if (op && j->spec.type == SCHED_MOLDABLE)
        return ERR("job %lld is moldable: its size was fixed when it started (only malleable "
                   "and evolving jobs are resized)", (long long)id);
    int lo = j->app_limits ? j->sub_min : j->spec.min_nodes;
    int hi = j->app_limits ? j->sub_max : j->spec.max_nodes;
    if (nodes < lo || nodes > hi)
        return ERR("job %lld: %d nodes is outside its [%d, %d] (--min-nodes, --max-nodes)",
                   (long long)id, nodes, lo, hi);
    if (nodes < j->spec.min_nodes || nodes > j->spec.max_nodes)
        return ERR("job %lld: its application accepts only %d to %d nodes (dt_set_size_limits)",
                   (long long)id, j->spec.min_nodes, j->spec.max_nodes);
    if (!cons_valid(nodes, j->spec.constraint))
        return ERR("job %lld: %d nodes violates constraint %s", (long long)id, nodes,
                   sched_constraint_name(j->spec.constraint));
    if (!j->request)
        s->nrequests++;
    j->request = nodes;
    j->request_op = op;
    return 0;
}

int sched_cancel_request(sched_t *s, int64_t id)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    if (!j->request)
        return 0;
    j->request = 0;
    s->nrequests--;
    return 1;
}

int sched_set_hold(sched_t *s, int64_t id, double until)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    if (j->state == SCHED_PENDING)
        return -EINVAL;
    if (isnan(until) || until < 0)
        until = 0;
    if (j->oper_hold_until > 0 && until <= 0)
        s->nholds--;
    else if (j->oper_hold_until <= 0 && until > 0)
        s->nholds++;
    j->oper_hold_until = until;
    if (until > 0 && (s->nholds == 1 || until < s->hold_next))
        s->hold_next = until;
    return 0;
}

bool sched_hold_due(const sched_t *s, double now) { return s->nholds > 0 && now >= s->hold_next; }

/* Holds that ended by now are dropped; hold_next becomes the earliest one left. */
static void expire_holds(sched_t *s)
{
    double next = INFINITY;
    for (sjob_t *j = s->rhead; j; j = j->rnext) {
        if (j->oper_hold_until <= 0)
            continue;
        if (s->now >= j->oper_hold_until) {
            j->oper_hold_until = 0;
            s->nholds--;
        } else if (j->oper_hold_until < next) {
            next = j->oper_hold_until;
        }
    }
    s->hold_next = next;
}

int sched_set_node_available(sched_t *s, int node, bool available)
{
    if (node < 0 || node >= s->nnodes)
        return -EINVAL;
    bool was = nodeset_test(s->avail, node);
    if (was == available)
        return 0;
    bool allocated = was && !nodeset_test(s->freeset, node);
    if (!available && !was)
        return 0;
    if (available) {
        nodeset_set(s->avail, node);
        s->navail++;
        /* Free unless some job still holds it. */
        bool held = false;
        for (sjob_t *j = s->rhead; j && !held; j = j->rnext)
            for (int i = 0; i < j->nalloc; i++)
                if (j->nodes[i] == node) {
                    held = true;
                    break;
                }
        if (!held) {
            nodeset_set(s->freeset, node);
            s->nfree++;
        }
    } else {
        nodeset_clear(s->avail, node);
        s->navail--;
        if (!allocated) {
            nodeset_clear(s->freeset, node);
            s->nfree--;
        }
    }
    return 0;
}

int sched_restore_running(sched_t *s, const sched_jobspec_t *spec, double start, const int *nodes,
                          int n, char *err, size_t errlen)
{
    sched_jobspec_t v;
    int rc = check_spec(s, spec, &v, err, errlen);
    if (rc < 0)
        return rc;
    if (n < 1)
        return ERR("job %lld: a running job needs at least one node", (long long)v.id);
    if (idmap_get(s->jobs, v.id))
        return snprintf(err, errlen, "job %lld exists already", (long long)v.id), -EEXIST;
    int *copy = malloc((size_t)n * sizeof(int));
    if (!copy)
        return snprintf(err, errlen, "out of memory"), -ENOMEM;
    /* Take the nodes one by one; a node that is not free (or listed twice) undoes it. */
    for (int i = 0; i < n; i++) {
        if (nodes[i] < 0 || nodes[i] >= s->nnodes || !nodeset_test(s->freeset, nodes[i])) {
            nodeset_set_ids(s->freeset, NULL, copy, i);
            free(copy);
            return ERR("job %lld: node %d is not free", (long long)v.id, nodes[i]);
        }
        nodeset_clear(s->freeset, nodes[i]);
        copy[i] = nodes[i];
    }
    rc = sched_submit(s, &v, err, errlen);
    if (rc < 0) {
        nodeset_set_ids(s->freeset, NULL, copy, n);
        free(copy);
        return rc;
    }
    sjob_t *j = idmap_get(s->jobs, v.id);
    j->nodes = copy;
    s->nfree -= n;
    j->cap = j->ncommit = j->nalloc = n;
    j->charged_at = s->now > start ? s->now : start;
    j->state = SCHED_RUNNING;
    j->start = start;
    j->end_est = v.walltime > 0 ? start + v.walltime : INFINITY;
    j->reason = SCHED_R_ORDER;
    core_running_add(s, j);
    return 0;
}

/* --- the decision --- */

int sched_schedule(sched_t *s, double now, const sched_action_t **actions, size_t *nactions)
{
    s->now = now;
    s->nacts = 0;
    s->nactnodes = 0;
    prio_pass(s);
    lim_pass_begin(s);
    resv_pass_begin(s);
    if (s->power_admit || s->policy->uses_power)
        sched_power_estimate(s, &s->pw_lo, &s->pw_hi);
    if (sched_hold_due(s, now))
        expire_holds(s);
    if (s->nrequests)
        core_grant_requests(s);
    /* A malleable job requeued by a failure restarts on the nodes that survive when
     * they cannot hold the size it asked for: anywhere down to its minimum (seed 003's
     * next step, for a job that could not run on in place). */
    for (sjob_t *j = s->qhead; j && j->cls == SCHED_CLASS_FAILED; j = j->qnext)
        j->restart_small = j->spec.type == SCHED_MALLEABLE && j->spec.nodes > s->navail;
    s->policy->pass(s);
    preempt_pass(s);
    resv_pass_end(s);
    lim_pass_end(s);
    /* Node lists were appended to one growing buffer: fix the pointers now. */
    for (size_t i = 0; i < s->nacts; i++)
        s->acts[i].nodes = s->actnodes + s->actoff[i];
    *actions = s->acts;
    *nactions = s->nacts;
    return 0;
}

/* --- queries --- */

int sched_job_info(const sched_t *s, int64_t id, sched_jobinfo_t *out)
{
    const sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    memset(out, 0, sizeof(*out));
    out->state = j->state;
    out->reason = j->reason;
    out->reason_job = j->reason_job;
    out->start = j->start;
    out->reserved_start = j->state == SCHED_PENDING ? j->reserved_start : -1;
    out->end_estimate = j->end_est;
    out->nnodes = j->ncommit;
    out->target = j->state == SCHED_RESIZING ? j->target : j->ncommit;
    out->nodes = j->nodes;
    out->nalloc = j->nalloc;
    out->expansions = j->expansions;
    out->shrinks = j->shrinks;
    out->mtct = j->mtct;
    out->request = j->request;
    out->request_op = j->request_op;
    out->hold_until = j->oper_hold_until;
    out->app_limits = j->app_limits || j->interval > 0;
    out->app_min = j->spec.min_nodes;
    out->app_max = j->spec.max_nodes;
    out->app_pref = j->spec.pref_nodes;
    out->app_interval = j->interval;
    if (j->request) {
        int room = core_grow_room(s, j); /* the free nodes it may grow onto */
        if (j->state == SCHED_RESIZING)
            out->request_wait = SCHED_W_RESIZING;
        else if (j->request > j->ncommit && j->request - j->ncommit > room)
            out->request_wait = SCHED_W_NODES;
        else if (core_request_blocked(j))
            out->request_wait = SCHED_W_NOT_ADAPTIVE;
        out->request_free = room;
    }
    return 0;
}

int sched_free_nodes(const sched_t *s) { return s->nfree; }

bool sched_node_busy(const sched_t *s, int node)
{
    if (node < 0 || node >= s->nnodes)
        return false;
    if (nodeset_test(s->avail, node))
        return !nodeset_test(s->freeset, node);
    for (const sjob_t *j = s->rhead; j; j = j->rnext)
        for (int i = 0; i < j->nalloc; i++)
            if (j->nodes[i] == node)
                return true;
    return false;
}
int sched_pending_count(const sched_t *s) { return s->npending; }

int sched_pending_need(const sched_t *s)
{
    const sjob_t *j = s->qhead;
    bool for_nodes = j && (j->reason == SCHED_R_RESOURCES ||
                           j->reason == SCHED_R_NODES_UNAVAILABLE);
    return for_nodes ? core_min_start(j, true) : 0;
}

int sched_running_count(const sched_t *s) { return s->nrunning; }
bool sched_any_resizing(const sched_t *s) { return s->nresizing > 0; }

/* --- names --- */

static const char *const reason_names[SCHED_R__COUNT] = {
    [SCHED_R_NONE] = "None",
    [SCHED_R_PRIORITY] = "Priority",
    [SCHED_R_RESOURCES] = "Resources",
    [SCHED_R_RESERVED] = "Reserved",
    [SCHED_R_NODES_UNAVAILABLE] = "NodesUnavailable",
    [SCHED_R_RESIZE_PENDING] = "ResizePending",
    [SCHED_R_ORDER] = "Order",
    [SCHED_R_BACKFILL] = "Backfill",
    [SCHED_R_IDLE_NODES] = "IdleNodes",
    [SCHED_R_EFFICIENT] = "LowMTCT",
    [SCHED_R_BELOW_PREFERRED] = "BelowPreferred",
    [SCHED_R_EQUAL_SHARE] = "EqualShare",
    [SCHED_R_MAKE_ROOM] = "MakeRoom",
    [SCHED_R_INEFFICIENT] = "HighMTCT",
    [SCHED_R_REQUESTED] = "Requested",
    [SCHED_R_OPERATOR] = "Operator",
    [SCHED_R_POWER] = "Power",
    [SCHED_R_POWER_CORRIDOR] = "PowerCorridor",
    [SCHED_R_STOLEN] = "NodeStolen",
    [SCHED_R_IO_BALANCE] = "IOBalance",
    [SCHED_R_LIMIT_JOBS] = "JobsLimit",
    [SCHED_R_LIMIT_NODES] = "NodesLimit",
    [SCHED_R_LIMIT_NODE_HOURS] = "NodeHoursLimit",
    [SCHED_R_RESV_WAIT] = "Reservation",
    [SCHED_R_RESV_NODES] = "ReservedNodes",
    [SCHED_R_RESERVATION] = "ReservationBegins",
    [SCHED_R_PREEMPTED] = "Preempted",
    [SCHED_R_PREEMPTING] = "Preempting",
};

const char *sched_reason_name(sched_reason_t r)
{
    return (r >= 0 && r < SCHED_R__COUNT && reason_names[r]) ? reason_names[r] : "Unknown";
}

const char *sched_op_name(sched_op_t op)
{
    static const char *const n[] = {"start", "expand", "shrink", "interrupt"};
    return (op >= 0 && op <= SCHED_OP_INTERRUPT) ? n[op] : "unknown";
}

static const char *const type_names[] = {"rigid", "moldable", "malleable", "evolving"};

const char *sched_type_name(sched_jobtype_t t)
{
    return (t >= 0 && t <= SCHED_EVOLVING) ? type_names[t] : "unknown";
}

int sched_type_parse(const char *name, sched_jobtype_t *out)
{
    for (int i = 0; i <= SCHED_EVOLVING; i++)
        if (!strcmp(name, type_names[i])) {
            *out = (sched_jobtype_t)i;
            return 0;
        }
    return -EINVAL;
}
