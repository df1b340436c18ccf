/* Passes and helpers shared by the policies: starting jobs in priority order,
 * backfilling, carrying out resizes, granting resize requests. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched_internal.h"

/* --- action output --- */

static void *grow_array(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap *= 2;
    void *np = realloc(p, ncap * elem);
    if (!np)
        abort(); /* out of memory in the middle of a decision: nothing sane to return */
    *cap = ncap;
    return np;
}

static void emit(sched_t *s, sched_op_t op, const sjob_t *j, int before, int after, const int *nodes,
                 int n, sched_reason_t why, int64_t for_job)
{
    s->acts = grow_array(s->acts, &s->capacts, s->nacts + 1, sizeof(*s->acts));
    s->actoff = grow_array(s->actoff, &s->capactoff, s->nacts + 1, sizeof(*s->actoff));
    s->actnodes = grow_array(s->actnodes, &s->capactnodes, s->nactnodes + (size_t)n, sizeof(int));
    memcpy(s->actnodes + s->nactnodes, nodes, (size_t)n * sizeof(int));
    s->actoff[s->nacts] = s->nactnodes;
    s->nactnodes += (size_t)n;
    s->acts[s->nacts++] = (sched_action_t){
        .op = op,
        .job = j->spec.id,
        .nodes_before = before,
        .nodes_after = after,
        .nodes = NULL,
        .nnodes = n,
        .reason = why,
        .for_job = for_job,
    };
}

/* --- sizes --- */

int core_min_start(const sjob_t *j, bool flexible)
{
    if (j->spec.type == SCHED_MOLDABLE ||
        (j->spec.type == SCHED_MALLEABLE && (flexible || j->restart_small)))
        return j->spec.min_nodes;
    return j->spec.nodes;
}

int core_max_start(const sjob_t *j, bool flexible)
{
    if (j->spec.type == SCHED_MOLDABLE)
        return j->spec.max_nodes;
    (void)flexible;
    return j->spec.nodes;
}

int core_fit_nodes(const sjob_t *j, int avail, bool flexible)
{
    int lo = core_min_start(j, flexible), hi = core_max_start(j, flexible);
    if (lo == hi)
        return lo <= avail ? lo : 0;
    return cons_largest_leq(avail, j->spec.constraint, lo, hi);
}

int core_fit(const sjob_t *j, int avail, bool flexible)
{
    return lim_fit(j, core_fit_nodes(j, avail, flexible), core_min_start(j, flexible));
}

bool core_unrunnable(const sched_t *s, const sjob_t *j, bool flexible)
{
    int need = core_min_start(j, flexible);
    return need > s->navail || (core_masked(s, j) && nodesel_unrunnable(s, j, need));
}

double core_walltime_at(const sjob_t *j, int size)
{
    if (!(j->spec.walltime > 0))
        return INFINITY;
    /* The walltime holds at the requested size. On fewer nodes the job does the same
     * work more slowly: at worst (perfect scaling) size/nodes as fast, and no slower
     * for any speedup whose efficiency does not grow with the size (Amdahl, power
     * laws), so the scaled walltime bounds its run. On more nodes it keeps the
     * walltime: the engine knows no speedup to shorten it by. */
    if (size > 0 && size < j->spec.nodes)
        return j->spec.walltime * j->spec.nodes / size;
    return j->spec.walltime;
}

double core_remaining(const sched_t *s, const sjob_t *j)
{
    return isinf(j->end_est) ? INFINITY : j->end_est - s->now;
}

bool core_resizable(const sjob_t *j)
{
    /* an operator's size holds (sched_set_hold), and so does a pending request of hers */
    return j->spec.type == SCHED_MALLEABLE && j->state == SCHED_RUNNING && !j->not_adaptive &&
           j->oper_hold_until <= 0 && !(j->request && j->request_op);
}

bool core_request_blocked(const sjob_t *j)
{
    /* A plain script never attaches: its steps follow the new node list at once. An
     * application that attached and now declines offers (or went away) gets the
     * operator's offer when it takes offers again. */
    return j->request_op && j->not_adaptive && j->was_adaptive;
}

/* --- allocation changes --- */

/* Appends k free nodes to j's node list: the lowest-numbered it may use, not in avoid
 * (nodesel_take). */
static void take_free(sched_t *s, sjob_t *j, int k, const nodeset_t *avoid)
{
    prio_charge(s, j);
    if (j->nalloc + k > j->cap) {
        int ncap = j->cap ? j->cap : 4;
        while (ncap < j->nalloc + k)
            ncap *= 2;
        int *nn = realloc(j->nodes, (size_t)ncap * sizeof(int));
        if (!nn)
            abort();
        j->nodes = nn;
        j->cap = ncap;
    }
    if (core_masked(s, j) || avoid)
        k = nodesel_take(s, j, k, avoid);
    else
        nodeset_take_lowest(s->freeset, k, j->nodes + j->nalloc);
    j->nalloc += k;
    s->nfree -= k;
}

/* The predicted draw follows starts and expands within a pass. */
static void draw_add(sched_t *s, const sjob_t *j, int k)
{
    double pl, ph;
    core_job_power(s, j, &pl, &ph);
    s->pw_lo += k * (pl - s->pw_idle);
    s->pw_hi += k * (ph - s->pw_idle);
}

void core_start_avoiding(sched_t *s, sjob_t *j, int size, sched_reason_t why,
                         const nodeset_t *avoid)
{
    if (!lim_start_ok(j, size))
        return; /* a limit reached earlier in this pass */
    if (!core_can_start(s, j, size))
        return; /* a policy that did not look at the job's nodes: it waits */
    lim_started(j, size);
    draw_add(s, j, size);
    take_free(s, j, size, avoid);
    j->ncommit = size;
    j->state = SCHED_RUNNING;
    j->start = s->now;
    j->end_est = s->now + core_walltime_at(j, size);
    j->reason = why;
    j->reason_job = -1;
    j->reserved_start = -1;
    j->cls = SCHED_CLASS_NORMAL; /* the class orders the waiting only */
    j->steal_due = j->steal_wait = j->restart_small = false;
    core_running_add(s, j);
    emit(s, SCHED_OP_START, j, 0, size, j->nodes, size, why, -1);
}

void core_start(sched_t *s, sjob_t *j, int size, sched_reason_t why)
{
    core_start_avoiding(s, j, size, why, NULL);
}

void core_expand(sched_t *s, sjob_t *j, int newsize, sched_reason_t why)
{
    int k = newsize - j->ncommit;
    if (k <= 0 || k > core_grow_room(s, j) || j->state != SCHED_RUNNING)
        return;
    int room = lim_grow_room(s, j, k);
    if (room < k) {
        newsize = cons_largest_leq(j->ncommit + room, j->spec.constraint, j->ncommit + 1,
                                   j->spec.max_nodes);
        k = newsize - j->ncommit;
        if (k <= 0)
            return;
    }
    lim_grown(s, j, k);
    draw_add(s, j, k);
    take_free(s, j, k, nodesel_aside(s, j));
    j->state = SCHED_RESIZING;
    j->target = newsize;
    j->reason = why;
    j->reason_job = -1;
    s->nresizing++;
    core_resize_began(s, j);
    emit(s, SCHED_OP_EXPAND, j, j->ncommit, newsize, j->nodes + j->ncommit, k, why, -1);
}

void core_shrink(sched_t *s, sjob_t *j, int newsize, sched_reason_t why, int64_t for_job)
{
    /* The first node never leaves; the highest ranks leave first. */
    if (newsize < 1 || newsize >= j->ncommit || j->state != SCHED_RUNNING)
        return;
    j->state = SCHED_RESIZING;
    j->target = newsize;
    j->reason = why;
    j->reason_job = for_job;
    s->nresizing++;
    core_resize_began(s, j);
    emit(s, SCHED_OP_SHRINK, j, j->ncommit, newsize, j->nodes + newsize, j->ncommit - newsize, why,
         for_job);
}

void core_stop(sched_t *s, sjob_t *j)
{
    j->state = SCHED_STOPPING;
    s->nstopping++;
    j->end_est = s->now; /* its nodes come free as soon as the caller has stopped it */
    core_byend_update(s, j);
}

void core_interrupt(sched_t *s, sjob_t *j, int64_t for_job, sched_reason_t why)
{
    emit(s, SCHED_OP_INTERRUPT, j, j->ncommit, 0, j->nodes, j->nalloc, why, for_job);
    core_stop(s, j);
    j->reason = why;
    j->reason_job = for_job;
}

/* --- starting jobs --- */

sjob_t *core_pass_fcfs(sched_t *s, bool flexible)
{
    sjob_t *next;
    for (sjob_t *j = s->qhead; j; j = next) {
        next = j->qnext;
        if (core_unrunnable(s, j, flexible)) {
            j->reason = SCHED_R_NODES_UNAVAILABLE;
            continue;
        }
        sched_reason_t why;
        int size = core_fit_now(s, j, s->nfree, flexible, &why);
        if (!size) {
            j->reason = why;
            j->reason_job = -1;
            if (lim_reason_is(why))
                continue; /* a limit reached in this pass: out of the order, as if parked */
            return j;
        }
        core_start(s, j, size, SCHED_R_ORDER);
    }
    return NULL;
}

/* When a running job's nodes come back by its estimate: its end, or now if overdue. */
static double end_or_now(const sched_t *s, const sjob_t *r)
{
    return r->end_est > s->now ? r->end_est : s->now;
}

void core_easy_shadow(sched_t *s, sjob_t *head, bool flexible, easy_plan_t *plan)
{
    if (core_masked(s, head)) {
        nodesel_shadow(s, head, flexible, plan);
        return;
    }
    int need = core_min_start(head, flexible);
    int avail = s->nfree;
    plan->head = head;
    plan->shadow = INFINITY;
    plan->extra = 0;
    if (avail >= need) {
        plan->shadow = s->now;
        plan->extra = avail - need;
        return;
    }
    int k = 0;
    while (k < s->nbyend && avail < need)
        avail += s->byend[k++]->nalloc;
    if (avail >= need) {
        /* Every job ending at the shadow time frees its nodes then, not only those
         * counted before the total was reached: the by-end order among equal ends
         * (job id) must not change the extra nodes. */
        plan->shadow = end_or_now(s, s->byend[k - 1]);
        while (k < s->nbyend && end_or_now(s, s->byend[k]) == plan->shadow)
            avail += s->byend[k++]->nalloc;
        plan->extra = avail - need;
    }
    head->reserved_start = isinf(plan->shadow) ? -1 : plan->shadow;
}

void core_pass_easy(sched_t *s, bool flexible, easy_plan_t *plan)
{
    sjob_t *head = core_pass_fcfs(s, flexible);
    plan->head = NULL;
    plan->shadow = INFINITY;
    plan->extra = 0;
    if (!head)
        return;
    core_easy_shadow(s, head, flexible, plan);
    bool beside = core_masked(s, head); /* jobs may start beside its nodes (nodesel.c) */
    sjob_t *next;
    for (sjob_t *j = head->qnext; j && s->nfree > 0; j = next) {
        next = j->qnext;
        if (core_unrunnable(s, j, flexible)) {
            j->reason = SCHED_R_NODES_UNAVAILABLE;
            continue;
        }
        if (beside && nodesel_backfill_beside(s, j, plan->head, flexible))
            continue;
        sched_reason_t why;
        int size = core_fit_now(s, j, s->nfree, flexible, &why);
        if (!size) {
            if (why == SCHED_R_POWER)
                j->reason = why;
            continue;
        }
        double dur = core_walltime_at(j, size);
        if (s->now + dur <= plan->shadow) {
            core_start(s, j, size, SCHED_R_BACKFILL);
            continue;
        }
        int lim = s->nfree < plan->extra ? s->nfree : plan->extra;
        size = core_fit_now(s, j, lim, flexible, &why);
        if (size) {
            core_start(s, j, size, SCHED_R_BACKFILL);
            plan->extra -= size;
        }
    }
}

/* --- conservative backfilling: a step function of free nodes over time --- */

typedef struct profile {
    double *t;  /* breakpoints, ascending; t[0] = now */
    int *f;     /* free nodes on [t[i], t[i+1]) */
    int n, cap;
} profile_t;

static void prof_reserve(profile_t *p, int extra)
{
    if (p->n + extra <= p->cap)
        return;
    int ncap = p->cap ? p->cap * 2 : 64;
    while (ncap < p->n + extra)
        ncap *= 2;
    double *nt = realloc(p->t, (size_t)ncap * sizeof(double));
    if (!nt)
        abort();
    p->t = nt;
    int *nf = realloc(p->f, (size_t)ncap * sizeof(int));
    if (!nf)
        abort();
    p->f = nf;
    p->cap = ncap;
}

/* Index of the segment starting exactly at t, splitting one if needed. */
static int prof_split(profile_t *p, double t)
{
    int lo = 0, hi = p->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (p->t[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < p->n && p->t[lo] == t)
        return lo;
    prof_reserve(p, 1);
    memmove(p->t + lo + 1, p->t + lo, (size_t)(p->n - lo) * sizeof(double));
    memmove(p->f + lo + 1, p->f + lo, (size_t)(p->n - lo) * sizeof(int));
    p->t[lo] = t;
    p->f[lo] = p->f[lo - 1]; /* lo > 0: t[0] = now <= t */
    p->n++;
    return lo;
}

static void prof_take(profile_t *p, double from, double dur, int k)
{
    int a = prof_split(p, from);
    int b = isinf(dur) ? p->n : prof_split(p, from + dur);
    for (int i = a; i < b; i++)
        p->f[i] -= k;
}

/* Earliest segment i >= from with at least need free nodes for dur seconds from t[i];
 * -1 if none. *minfree receives the fewest free nodes over that window. */
static int prof_find_from(const profile_t *p, int from, int need, double dur, int *minfree)
{
    int i = from;
    while (i < p->n) {
        if (p->f[i] < need) {
            i++;
            continue;
        }
        int k = i, mf = p->f[i];
        double end = p->t[i] + dur;
        while (k < p->n && p->t[k] < end && p->f[k] >= need) {
            if (p->f[k] < mf)
                mf = p->f[k];
            k++;
        }
        if (k == p->n || p->t[k] >= end) {
            *minfree = mf;
            return i;
        }
        i = k + 1;
    }
    return -1;
}

static int prof_find(const profile_t *p, int need, double dur, int *minfree)
{
    return prof_find_from(p, 0, need, dur, minfree);
}

/* Whether need nodes are free for dur seconds from now (the window prof_find would find
 * at segment 0), and the fewest free over it. */
static bool prof_fits_now(const profile_t *p, int need, double dur, int *minfree)
{
    double end = p->t[0] + dur;
    int mf = p->f[0];
    for (int k = 0; k < p->n && (k == 0 || p->t[k] < end); k++) {
        if (p->f[k] < need)
            return false;
        if (p->f[k] < mf)
            mf = p->f[k];
    }
    *minfree = mf;
    return true;
}

/* Free nodes from now on as the running jobs end by their estimates (a job without
 * one keeps its nodes for good). */
static void prof_running(const sched_t *s, sjob_t *const *byend, int nbyend, profile_t *p)
{
    prof_reserve(p, nbyend + 1);
    p->t[0] = s->now;
    p->f[0] = s->nfree;
    p->n = 1;
    for (int k = 0; k < nbyend; k++) {
        const sjob_t *r = byend[k];
        if (isinf(r->end_est))
            break;
        double t = end_or_now(s, r);
        if (t == p->t[p->n - 1]) {
            p->f[p->n - 1] += r->nalloc;
        } else {
            p->t[p->n] = t;
            p->f[p->n] = p->f[p->n - 1] + r->nalloc;
            p->n++;
        }
    }
}

static int by_end(const void *a, const void *b)
{
    const sjob_t *x = *(sjob_t *const *)a, *y = *(sjob_t *const *)b;
    return x->end_est < y->end_est ? -1 : x->end_est > y->end_est;
}

/* prof_running for any policy: the end order kept by those that need it (byend), made
 * here from the running jobs for the others. */
static void prof_ends(const sched_t *s, profile_t *p)
{
    if (s->policy->needs_end_order) {
        prof_running(s, s->byend, s->nbyend, p);
        return;
    }
    sjob_t **v = malloc(((size_t)s->nrunning + 1) * sizeof(*v));
    if (!v)
        abort();
    int n = 0;
    for (sjob_t *r = s->rhead; r; r = r->rnext)
        v[n++] = r;
    qsort(v, (size_t)n, sizeof(*v), by_end);
    prof_running(s, v, n, p);
    free(v);
}

int core_will_run(const sched_t *s, const sjob_t *probe, int ahead, double *start, int *avail)
{
    int need = core_min_start(probe, false);
    *start = -1;
    if (core_unrunnable(s, probe, false))
        return 0;
    profile_t p = {0};
    prof_ends(s, &p);
    /* the waiting jobs in their order, each at its earliest slot (conservative
     * backfilling, whatever the policy); the probe comes after them */
    int n = 0, minfree = 0;
    for (const sjob_t *j = s->qhead; j && n < ahead; j = j->qnext) {
        if (core_unrunnable(s, j, false))
            continue;
        int jn = core_min_start(j, false);
        double dur = core_walltime_at(j, jn);
        int i = prof_find(&p, jn, dur, &minfree);
        if (i >= 0)
            prof_take(&p, p.t[i], dur, jn);
        n++;
    }
    int i = prof_find(&p, need, core_walltime_at(probe, need), &minfree);
    *start = i < 0 ? -1 : p.t[i];
    *avail = i < 0 ? 0 : minfree;
    free(p.t);
    free(p.f);
    return i < 0 ? 0 : 1;
}

void core_pass_conservative(sched_t *s, int depth)
{
    profile_t p = {0};
    prof_running(s, s->byend, s->nbyend, &p);
    bool first_waiting = true;
    int reserved = 0;
    sjob_t *next;
    for (sjob_t *j = s->qhead; j; j = next) {
        next = j->qnext;
        if (core_unrunnable(s, j, false)) {
            j->reason = SCHED_R_NODES_UNAVAILABLE;
            continue;
        }
        /* on its smallest size a job runs longest: a slot for that holds any size */
        int need = core_min_start(j, false), minfree = 0;
        double dur = core_walltime_at(j, need);
        bool deep = depth > 0 && reserved >= depth;
        /* past the depth: no reservation, only a start now that delays none of them;
         * finding each job's earliest slot in a profile that grows with every
         * reservation made a pass over 100,000 waiting jobs take 16 s (bench_pass) */
        int i = deep ? (s->nfree >= need && prof_fits_now(&p, need, dur, &minfree) ? 0 : -1)
                     : prof_find(&p, need, dur, &minfree);
        if (i >= 0 && !deep && core_masked(s, j)) {
            /* not before its own nodes are free (the counts do not know which nodes) */
            double at = nodesel_earliest(s, j, need);
            i = isinf(at)        ? -1
                : p.t[i] >= at ? i
                               : prof_find_from(&p, prof_split(&p, at), need, dur, &minfree);
        }
        if (i == 0 && s->nfree >= need) {
            sched_reason_t why;
            int size = core_fit_now(s, j, minfree < s->nfree ? minfree : s->nfree, false, &why);
            if (size) {
                core_start(s, j, size, first_waiting ? SCHED_R_ORDER : SCHED_R_BACKFILL);
                prof_take(&p, s->now, core_walltime_at(j, size), size);
                continue;
            }
            if (why != SCHED_R_RESOURCES) {
                /* held for power: no reservation (when power allows it is not known) */
                j->reason = why;
                first_waiting = false;
                continue;
            }
            /* masked, its own nodes not free: the next slot the counts give (nodesel.c;
             * an approximation, docs/policies.md) */
            i = deep ? -1 : prof_find_from(&p, 1, need, dur, &minfree);
        }
        j->reason = deep ? SCHED_R_PRIORITY : first_waiting ? SCHED_R_RESOURCES : SCHED_R_RESERVED;
        j->reason_job = -1;
        first_waiting = false;
        if (i < 0) {
            j->reserved_start = -1;
            continue;
        }
        j->reserved_start = p.t[i];
        prof_take(&p, p.t[i], dur, need);
        reserved++;
    }
    free(p.t);
    free(p.f);
}

/* --- requests from evolving jobs and operators --- */

void core_grant_requests(sched_t *s)
{
    /* nodes that shrinks gave a failed job (sfsj) are not for growing another one */
    bool hold_grow = false;
    for (const sjob_t *f = s->qhead; f && f->cls == SCHED_CLASS_FAILED && !hold_grow; f = f->qnext)
        hold_grow = f->steal_wait;
    for (sjob_t *j = s->rhead; j && s->nrequests; j = j->rnext) {
        if (!j->request || j->state != SCHED_RUNNING)
            continue;
        sched_reason_t why = j->request_op ? SCHED_R_OPERATOR : SCHED_R_REQUESTED;
        int want = j->request;
        if (want > j->ncommit && (hold_grow || want - j->ncommit > core_grow_room(s, j)))
            continue; /* not enough free nodes yet: keep asking */
        if (core_request_blocked(j))
            continue;
        if (want < j->ncommit)
            core_shrink(s, j, want, why, -1);
        else if (want > j->ncommit)
            core_expand(s, j, want, why);
        j->request = 0;
        s->nrequests--;
    }
}

/* --- helpers for the malleable policies --- */

void core_tmp_reserve(sched_t *s, size_t n)
{
    s->tmp = grow_array(s->tmp, &s->captmp, n, sizeof(sjob_t *));
}

int core_collect_resizable(sched_t *s, bool latest_first)
{
    core_tmp_reserve(s, (size_t)s->nrunning + 1);
    int n = 0;
    if (latest_first) {
        for (sjob_t *j = s->rtail; j; j = j->rprev)
            if (core_resizable(j))
                s->tmp[n++] = j;
    } else {
        for (sjob_t *j = s->rhead; j; j = j->rnext)
            if (core_resizable(j))
                s->tmp[n++] = j;
    }
    /* With priorities, the order of priority replaces the order of start: the first
     * grown is the first in priority, the first shrunk the last */
    if (prio_active(s))
        core_sort_tmp(s, n, latest_first ? core_lowest_priority_first : core_highest_priority_first);
    core_reset_targets(s, n);
    return n;
}

void core_apply_targets(sched_t *s, int n, sched_reason_t grow_why, sched_reason_t shrink_why,
                        int64_t for_job)
{
    for (int i = 0; i < n; i++) {
        sjob_t *j = s->tmp[i];
        if (j->newsize < j->ncommit && !core_resize_held(s, j, j->newsize))
            core_shrink(s, j, j->newsize, shrink_why, for_job);
    }
    for (int i = 0; i < n; i++) {
        sjob_t *j = s->tmp[i];
        if (j->newsize <= j->ncommit || j->state != SCHED_RUNNING)
            continue;
        int target = j->newsize, room = core_grow_room(s, j);
        if (target - j->ncommit > room)
            target = cons_largest_leq(j->ncommit + room, j->spec.constraint, j->ncommit + 1,
                                      j->spec.max_nodes);
        if (target > j->ncommit && !core_resize_held(s, j, target))
            core_expand(s, j, target, j->newwhy ? j->newwhy : grow_why);
    }
}

int core_lowest_priority_first(const void *a, const void *b)
{
    const sjob_t *x = *(sjob_t *const *)a, *y = *(sjob_t *const *)b;
    return core_before(x, y) ? 1 : -1;
}

int core_highest_priority_first(const void *a, const void *b)
{
    const sjob_t *x = *(sjob_t *const *)a, *y = *(sjob_t *const *)b;
    return core_before(x, y) ? -1 : 1;
}

int core_largest_key_first(const void *a, const void *b)
{
    const sjob_t *x = *(sjob_t *const *)a, *y = *(sjob_t *const *)b;
    if (x->key != y->key)
        return x->key < y->key ? 1 : -1;
    return core_before(x, y) ? -1 : 1;
}

void core_sort_tmp(sched_t *s, int n, int (*cmp)(const void *, const void *))
{
    qsort(s->tmp, (size_t)n, sizeof(sjob_t *), cmp);
}

void core_reset_targets(sched_t *s, int n)
{
    for (int i = 0; i < n; i++) {
        s->tmp[i]->newsize = s->tmp[i]->ncommit;
        s->tmp[i]->newwhy = SCHED_R_NONE;
    }
}

int core_begin_resizes(sched_t *s)
{
    if (s->nresizing > 0)
        return 0;
    return core_collect_resizable(s, false);
}

bool core_make_room(sched_t *s, int n, sjob_t *waiting, bool flexible)
{
    if (core_masked(s, waiting) && !nodesel_room_enough(s, n, waiting, flexible)) {
        core_reset_targets(s, n);
        return false;
    }
    core_apply_targets(s, n, SCHED_R_IDLE_NODES, SCHED_R_MAKE_ROOM, waiting->spec.id);
    waiting->reason = SCHED_R_RESIZE_PENDING;
    return true;
}
