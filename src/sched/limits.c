/* Limits per user and per account (docs/accounts.md, "Limits"): running jobs, nodes
 * held, node-hours. A job that a limit keeps from starting waits out of the policies'
 * sight (it holds no reservation, so it delays no one), with the limit as its reason.
 *
 * At each pass the counters are made again from the running jobs: per user and per
 * account (an account's counts its sub-accounts' jobs too) the jobs running, the nodes
 * they hold and the node-seconds their time limits still allow them, beside the usage
 * the account or user has had (decayed, as fair share counts it). Waiting jobs that a
 * limit stops, even at their smallest start, are parked for the pass; each start and
 * expansion of the pass adds to the counters, and core_fit, core_start and
 * core_expand keep to what is left. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched_internal.h"

struct lim_state {
    sched_limits_t lim;
    lim_state_t *next_dropped; /* dropped, freed once no job points at it */
    int running, nodes;
    double run_ns;  /* node-seconds the running jobs may still use by their limits */
    double usage;   /* node-seconds used (decayed) */
};

static bool lim_set(const sched_limits_t *l)
{
    return l->max_running > 0 || l->max_nodes > 0 || l->max_node_seconds > 0;
}

static int check(const sched_limits_t *l)
{
    return l->max_running >= 0 && l->max_nodes >= 0 && l->max_node_seconds >= 0 &&
                   !isnan(l->max_node_seconds)
               ? 0
               : -EINVAL;
}

static void user_of(int64_t key, void *val, void *arg);

/* Each job's user limits, after they were set or dropped. */
static void resolve_jobs(int64_t key, void *val, void *arg)
{
    (void)key;
    sched_t *s = arg;
    sjob_t *j = val;
    j->ulim = s->lim_users ? idmap_get(s->lim_users, j->spec.user) : NULL;
}

static void free_dropped(sched_t *s)
{
    while (s->lim_dropped) {
        lim_state_t *d = s->lim_dropped;
        s->lim_dropped = d->next_dropped;
        free(d);
    }
}

/* The jobs see users' limits set or dropped since the last pass: one walk of the jobs
 * for any number of changes (one per change cost seconds with 1,000 users' limits and
 * 100,000 jobs). A dropped state lives until then: jobs still point at it. */
static void resolve_users(sched_t *s)
{
    if (!s->lim_resolve)
        return;
    idmap_foreach(s->jobs, resolve_jobs, s);
    free_dropped(s);
    s->lim_resolve = false;
}

int sched_set_user_limits(sched_t *s, uint32_t user, const sched_limits_t *l)
{
    if (check(l) < 0)
        return -EINVAL;
    if (!s->lim_users && !(s->lim_users = idmap_create()))
        return -ENOMEM;
    lim_state_t *st = idmap_get(s->lim_users, user);
    if (!lim_set(l)) {
        if (st) {
            idmap_del(s->lim_users, user);
            st->lim = *l; /* allows everything until the jobs forget it */
            st->next_dropped = s->lim_dropped;
            s->lim_dropped = st;
            s->nlimits--;
            s->lim_resolve = true;
        }
        return 0;
    }
    if (!st) {
        if (!(st = calloc(1, sizeof(*st))) || idmap_put(s->lim_users, user, st) < 0) {
            free(st);
            return -ENOMEM;
        }
        s->nlimits++;
        s->lim_resolve = true; /* new jobs get it at once (prio_attach), the others then */
    }
    st->lim = *l;
    return 0;
}

int sched_set_account_limits(sched_t *s, uint32_t account, const sched_limits_t *l)
{
    if (check(l) < 0 || account == 0)
        return -EINVAL;
    prio_node_t *a = prio_account(s, account);
    if (!a)
        return -ENOMEM;
    if (!lim_set(l)) {
        if (a->lim) {
            free(a->lim);
            a->lim = NULL;
            s->nlimits--;
        }
        return 0;
    }
    if (!a->lim) {
        if (!(a->lim = calloc(1, sizeof(*a->lim))))
            return -ENOMEM;
        s->nlimits++;
    }
    a->lim->lim = *l;
    return 0;
}

void lim_free(sched_t *s)
{
    free_dropped(s);
    if (s->lim_users) {
        idmap_foreach(s->lim_users, user_of, NULL);
        idmap_destroy(s->lim_users);
    }
}

static void user_of(int64_t key, void *val, void *arg)
{
    (void)key, (void)arg;
    free(val);
}

/* --- counting --- */

static void reset(lim_state_t *st)
{
    st->running = st->nodes = 0;
    st->run_ns = st->usage = 0;
}

static void reset_user(int64_t key, void *val, void *arg)
{
    (void)key, (void)arg;
    reset(val);
}

static void reset_account(int64_t key, void *val, void *arg)
{
    (void)key, (void)arg;
    prio_node_t *a = val;
    if (a->lim) {
        reset(a->lim);
        a->lim->usage = a->usage; /* at the last recalculation */
    }
}

static void leaf_usage(int64_t key, void *val, void *arg)
{
    (void)key;
    sched_t *s = arg;
    prio_node_t *l = val;
    lim_state_t *u = idmap_get(s->lim_users, l->user);
    if (u)
        u->usage += l->usage;
}

/* Adds to every state that counts j: its user's, its account's and those above. */
static void add(const sjob_t *j, int running, int nodes, double ns)
{
    if (j->ulim) {
        j->ulim->running += running;
        j->ulim->nodes += nodes;
        j->ulim->run_ns += ns;
    }
    for (prio_node_t *a = j->leaf ? j->leaf->parent : NULL; a; a = a->parent)
        if (a->lim) {
            a->lim->running += running;
            a->lim->nodes += nodes;
            a->lim->run_ns += ns;
        }
}

static bool limited(const sjob_t *j)
{
    if (j->ulim)
        return true;
    for (prio_node_t *a = j->leaf ? j->leaf->parent : NULL; a; a = a->parent)
        if (a->lim)
            return true;
    return false;
}

/* Node-seconds a start of j on n nodes may use by its time limit. */
static double start_ns(const sjob_t *j, int n)
{
    double w = core_walltime_at(j, n);
    return isinf(w) ? INFINITY : n * w;
}

/* What one state leaves for j: may it start (or grow) by n nodes? *why the limit. */
static bool state_allows(const lim_state_t *st, bool start, int n, double ns, sched_reason_t *why)
{
    const sched_limits_t *l = &st->lim;
    if (start && l->max_running > 0 && st->running + 1 > l->max_running) {
        *why = SCHED_R_LIMIT_JOBS;
        return false;
    }
    if (l->max_nodes > 0 && st->nodes + n > l->max_nodes) {
        *why = SCHED_R_LIMIT_NODES;
        return false;
    }
    if (l->max_node_seconds > 0 && st->usage + st->run_ns + ns > l->max_node_seconds) {
        *why = SCHED_R_LIMIT_NODE_HOURS;
        return false;
    }
    return true;
}

/* Does every limit that counts j allow it n more nodes (start: as a new running job,
 * using ns node-seconds)? *who: 0 its user's limit, else the account's id. */
static bool allows(const sjob_t *j, bool start, int n, double ns, sched_reason_t *why,
                   uint32_t *who)
{
    if (j->ulim && !state_allows(j->ulim, start, n, ns, why)) {
        *who = 0;
        return false;
    }
    for (prio_node_t *a = j->leaf ? j->leaf->parent : NULL; a; a = a->parent)
        if (a->lim && !state_allows(a->lim, start, n, ns, why)) {
            *who = a->account;
            return false;
        }
    return true;
}

int lim_fit(const sjob_t *j, int size, int lo)
{
    if (!j->lim_on || size <= 0)
        return size;
    sched_reason_t why;
    uint32_t who;
    if (lo < 1)
        lo = 1;
    /* the largest size the limits allow, down to the smallest the policy starts it on */
    for (int n = size; n >= lo; n--)
        if (cons_valid(n, j->spec.constraint) && allows(j, true, n, start_ns(j, n), &why, &who))
            return n;
    return 0;
}

sched_reason_t lim_reason(const sjob_t *j, int size)
{
    sched_reason_t why = SCHED_R_NONE;
    uint32_t who;
    if (j->lim_on)
        allows(j, true, size, start_ns(j, size), &why, &who);
    return why;
}

bool lim_reason_is(sched_reason_t r)
{
    return r == SCHED_R_LIMIT_JOBS || r == SCHED_R_LIMIT_NODES || r == SCHED_R_LIMIT_NODE_HOURS;
}

bool lim_start_ok(sjob_t *j, int size)
{
    if (!j->lim_on)
        return true;
    uint32_t who;
    sched_reason_t why;
    if (allows(j, true, size, start_ns(j, size), &why, &who))
        return true;
    j->reason = why;
    j->reason_job = -1;
    j->limit_account = who;
    return false;
}

void lim_started(sjob_t *j, int size)
{
    if (j->lim_on)
        add(j, 1, size, start_ns(j, size));
}

int lim_grow_room(const sched_t *s, const sjob_t *j, int k)
{
    if (!j->lim_on)
        return k;
    double left = j->end_est > s->now ? j->end_est - s->now : 0;
    sched_reason_t why;
    uint32_t who;
    while (k > 0 && !allows(j, false, k, isinf(left) ? INFINITY : k * left, &why, &who))
        k--;
    return k;
}

void lim_grown(const sched_t *s, sjob_t *j, int k)
{
    if (!j->lim_on)
        return;
    double left = j->end_est > s->now ? j->end_est - s->now : 0;
    add(j, 0, k, isinf(left) ? INFINITY : k * left);
}

/* --- the pass --- */

void lim_pass_begin(sched_t *s)
{
    s->lim_parked = NULL;
    resolve_users(s);
    if (!s->nlimits)
        return;
    if (s->lim_users) {
        idmap_foreach(s->lim_users, reset_user, NULL);
        if (s->prio_leaves)
            idmap_foreach(s->prio_leaves, leaf_usage, s);
    }
    if (s->prio_accounts)
        idmap_foreach(s->prio_accounts, reset_account, NULL);
    for (sjob_t *j = s->rhead; j; j = j->rnext) {
        j->lim_on = limited(j);
        if (!j->lim_on)
            continue;
        double left = j->end_est > s->now ? j->end_est - s->now : 0;
        add(j, 1, j->nalloc, isinf(left) ? INFINITY : j->nalloc * left);
    }
    /* park the waiting jobs a limit stops even at their smallest start */
    sjob_t *tail = NULL, *next;
    for (sjob_t *j = s->qhead; j; j = next) {
        next = j->qnext;
        j->lim_on = limited(j);
        j->limit_account = 0;
        if (!j->lim_on)
            continue;
        int lo = core_min_start(j, true);
        sched_reason_t why;
        uint32_t who;
        if (allows(j, true, lo, start_ns(j, lo), &why, &who))
            continue;
        core_queue_park(s, j);
        j->reason = why;
        j->reason_job = -1;
        j->reserved_start = -1;
        j->limit_account = who;
        j->qprev = tail;
        j->qnext = NULL;
        if (tail)
            tail->qnext = j;
        else
            s->lim_parked = j;
        tail = j;
    }
}

/* The parked jobs back in their places: both lists are in priority order, so one walk
 * of the queue merges them (putting each back from the queue's tail cost a walk per
 * job: seconds a pass with thousands parked; bench_sim prio). */
void lim_pass_end(sched_t *s)
{
    sjob_t *p = s->lim_parked, *next, *q = s->qhead;
    s->lim_parked = NULL;
    for (; p; p = next) {
        next = p->qnext;
        while (q && core_before(q, p))
            q = q->qnext;
        core_queue_unpark(s, p, q);
    }
}

bool sched_limited(const sched_t *s, int64_t id, uint32_t *account)
{
    const sjob_t *j = idmap_get(s->jobs, id);
    if (!j || j->state != SCHED_PENDING || !lim_reason_is(j->reason))
        return false;
    /* which one, by the counters as the last pass left them */
    sched_reason_t why;
    uint32_t who = j->limit_account;
    int lo = core_min_start(j, true);
    if (j->lim_on && !allows(j, true, lo, start_ns(j, lo), &why, &who))
        *account = who;
    else
        *account = j->limit_account;
    return true;
}
