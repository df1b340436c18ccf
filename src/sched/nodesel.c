/* Node selection: jobs restricted to a subset of the nodes (docs/policies.md, "Node
 * selection"). The caller reduces features, GPUs, memory, --exclude and --nodelist to
 * two sets per job: allowed (the nodes it may ever use) and required (the nodes its
 * allocation must hold). Here: their validation, where a masked job's nodes come from,
 * and the counts the passes and policies compare sizes with. Correctness does not rest
 * on the policies: core_start and core_expand refuse a size the mask cannot hold. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sched_internal.h"

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

/* Check a list of node ids: their set in *out (the caller destroys it). */
static int check_ids(const sched_t *s, int64_t id, const char *what, const int *ids, int n,
                     nodeset_t **out, char *err, size_t errlen)
{
    if (n < 0 || (n > 0 && !ids))
        return ERR("job %lld: malformed %s node list", (long long)id, what);
    if (!(*out = nodeset_create(s->nnodes)))
        return snprintf(err, errlen, "out of memory"), -ENOMEM;
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= s->nnodes)
            return ERR("job %lld: %s node %d is not a node of the cluster (0..%d)", (long long)id,
                       what, ids[i], s->nnodes - 1);
        nodeset_set(*out, ids[i]);
    }
    return 0;
}

static int check_sets(const sched_t *s, sched_jobspec_t *v, const nodeset_t *allowed,
                      const nodeset_t *required, char *err, size_t errlen)
{
    int nallowed = allowed ? nodeset_count(allowed) : s->nnodes;
    int nreq = required ? nodeset_count(required) : 0;
    for (int i = 0; allowed && i < v->nrequired; i++)
        if (!nodeset_test(allowed, v->required[i]))
            return ERR("job %lld: required node %d is not one the job may use",
                       (long long)v->id, v->required[i]);
    /* it starts on its requested size unless moldable (or a flexible policy's choice) */
    int start = v->type == SCHED_MOLDABLE ? v->min_nodes : v->nodes;
    if (nallowed < start)
        return ERR("job %lld: needs at least %d nodes but only %d match its node selection",
                   (long long)v->id, start, nallowed);
    if (v->max_nodes > nallowed)
        v->max_nodes = nallowed;
    if (v->pref_nodes > nallowed)
        v->pref_nodes = nallowed;
    /* the required nodes hold the lowest ranks, which shrinks never release */
    if (nreq > v->min_nodes)
        return ERR("job %lld: its node list names %d nodes, more than its %d-node minimum",
                   (long long)v->id, nreq, v->min_nodes);
    return 0;
}

int nodesel_check(const sched_t *s, sched_jobspec_t *v, char *err, size_t errlen)
{
    nodeset_t *allowed = NULL, *required = NULL;
    int rc = 0;
    if (v->allowed)
        rc = check_ids(s, v->id, "allowed", v->allowed, v->nallowed, &allowed, err, errlen);
    if (rc == 0 && v->required)
        rc = check_ids(s, v->id, "required", v->required, v->nrequired, &required, err, errlen);
    if (rc == 0)
        rc = check_sets(s, v, allowed, required, err, errlen);
    nodeset_destroy(allowed);
    nodeset_destroy(required);
    return rc;
}

static nodeset_t *set_of(const sched_t *s, const int *ids, int n)
{
    nodeset_t *ns = nodeset_create(s->nnodes);
    if (ns)
        for (int i = 0; i < n; i++)
            nodeset_set(ns, ids[i]);
    return ns;
}

/* One copy of each distinct set, shared by the jobs that name it: 100,000 jobs waiting
 * for the GPU nodes of a 10,000-node cluster hold one set, not 125 MB of them. */
typedef struct mask {
    nodeset_t *set;
    int refs;
    struct mask *next; /* another set of the same hash */
} mask_t;

/* The shared copy of ns (which it takes), or NULL out of memory. */
static nodeset_t *intern(sched_t *s, nodeset_t *ns)
{
    if (!ns || (!s->masks && !(s->masks = idmap_create()))) {
        nodeset_destroy(ns);
        return NULL;
    }
    int64_t key = (int64_t)nodeset_hash(ns);
    mask_t *head = idmap_get(s->masks, key), *last = NULL;
    for (mask_t *m = head; m; last = m, m = m->next)
        if (nodeset_equal(m->set, ns)) {
            m->refs++;
            nodeset_destroy(ns);
            return m->set;
        }
    mask_t *m = malloc(sizeof(*m));
    if (!m || (!last && idmap_put(s->masks, key, m) < 0)) {
        free(m);
        nodeset_destroy(ns);
        return NULL;
    }
    *m = (mask_t){.set = ns, .refs = 1};
    if (last)
        last->next = m;
    return ns;
}

static void unintern(sched_t *s, nodeset_t *ns)
{
    if (!ns)
        return;
    int64_t key = (int64_t)nodeset_hash(ns);
    mask_t *head = idmap_get(s->masks, key), *prev = NULL;
    for (mask_t *m = head; m; prev = m, m = m->next) {
        if (m->set != ns)
            continue;
        if (--m->refs > 0)
            return;
        if (prev)
            prev->next = m->next;
        else if (idmap_del(s->masks, key) && m->next)
            idmap_put(s->masks, key, m->next); /* a slot was just freed: no memory needed */
        nodeset_destroy(ns);
        free(m);
        return;
    }
}

static int attach(const sched_t *s, sjob_t *j, sched_t *shared)
{
    sched_jobspec_t *v = &j->spec;
    if (v->allowed) {
        j->allowed = set_of(s, v->allowed, v->nallowed);
        if (shared)
            j->allowed = intern(shared, j->allowed);
        if (!j->allowed)
            return -ENOMEM;
    }
    if (v->required && v->nrequired > 0) {
        j->required = set_of(s, v->required, v->nrequired);
        if (shared)
            j->required = intern(shared, j->required);
        if (!j->required)
            return -ENOMEM;
    }
    /* the caller's arrays need not outlive the call */
    v->allowed = v->required = NULL;
    return 0;
}

int nodesel_attach(sched_t *s, sjob_t *j) { return attach(s, j, s); }
int nodesel_attach_own(const sched_t *s, sjob_t *j) { return attach(s, j, NULL); }

void nodesel_release(sched_t *s, sjob_t *j)
{
    unintern(s, j->allowed);
    unintern(s, j->required);
    j->allowed = j->required = NULL;
}

void nodesel_release_own(sjob_t *j)
{
    nodeset_destroy(j->allowed);
    nodeset_destroy(j->required);
    j->allowed = j->required = NULL;
}

void nodesel_destroy(sched_t *s)
{
    idmap_destroy(s->masks); /* empty: every job gave its sets back */
    s->masks = NULL;
}

int core_free_for(const sched_t *s, const sjob_t *j)
{
    return j->allowed ? nodeset_count_in(s->freeset, j->allowed, NULL) : s->nfree;
}

static bool required_free(const sched_t *s, const sjob_t *j)
{
    return !j->required ||
           nodeset_count_in(j->required, s->freeset, NULL) == nodeset_count(j->required);
}

bool core_can_start(const sched_t *s, const sjob_t *j, int size)
{
    if (!core_masked(s, j))
        return size <= s->nfree;
    return required_free(s, j) && size <= core_free_for(s, j);
}

bool nodesel_unrunnable(const sched_t *s, const sjob_t *j, int need)
{
    if (j->required && nodeset_count_in(j->required, s->avail, NULL) < nodeset_count(j->required))
        return true;
    return j->allowed && nodeset_count_in(s->avail, j->allowed, NULL) < need;
}

const nodeset_t *nodesel_aside(const sched_t *s, const sjob_t *j)
{
    for (const sjob_t *w = s->nmasked ? s->qhead : NULL; w; w = w->qnext) {
        if (core_unrunnable(s, w, true))
            continue;
        if (w == j || !core_masked(s, w))
            return NULL;
        return w->allowed ? w->allowed : w->required;
    }
    return NULL;
}

int core_grow_room(const sched_t *s, const sjob_t *j)
{
    const nodeset_t *away = nodesel_aside(s, j);
    if (!j->allowed && !away)
        return s->nfree;
    return nodeset_count_in(s->freeset, j->allowed, away);
}

int nodesel_take(sched_t *s, sjob_t *j, int k, const nodeset_t *avoid)
{
    int *out = j->nodes + j->nalloc, got = 0;
    if (j->nalloc == 0 && j->required)
        for (int n = nodeset_next(j->required, 0); n >= 0 && got < k;
             n = nodeset_next(j->required, n + 1))
            if (nodeset_test(s->freeset, n)) {
                nodeset_clear(s->freeset, n);
                out[got++] = n;
            }
    return got + nodeset_take_lowest_in(s->freeset, j->allowed, avoid, k - got, out + got);
}

int core_room_gain(const sjob_t *waiting, const sjob_t *j, int newsize)
{
    if (!waiting->allowed)
        return j->ncommit - newsize;
    int g = 0;
    for (int i = newsize; i < j->ncommit; i++)
        g += nodeset_test(waiting->allowed, j->nodes[i]);
    return g;
}

int core_room_need(const sched_t *s, const sjob_t *waiting, bool flexible)
{
    return core_min_start(waiting, flexible) - core_free_for(s, waiting);
}

/* Nodes of r that count for head: in its allowed set; *req: its required ones. */
static int overlap(const sjob_t *head, const sjob_t *r, int *req)
{
    int g = 0;
    for (int i = 0; i < r->nalloc; i++) {
        g += !head->allowed || nodeset_test(head->allowed, r->nodes[i]);
        *req += head->required && nodeset_test(head->required, r->nodes[i]);
    }
    return g;
}

static double end_or_now(const sched_t *s, const sjob_t *r)
{
    return r->end_est > s->now ? r->end_est : s->now;
}

/* When need of j's own nodes, and every required one, are first free by the running
 * jobs' estimates: now when they are, INFINITY when no estimate frees them. *avail: its
 * nodes free then; *reqfree: its required nodes free now. */
static double own_nodes_free_at(const sched_t *s, const sjob_t *j, int need, int *avail,
                                int *reqfree)
{
    int nreq = j->required ? nodeset_count(j->required) : 0;
    *reqfree = j->required ? nodeset_count_in(j->required, s->freeset, NULL) : 0;
    *avail = core_free_for(s, j);
    int missing = nreq - *reqfree, k = 0, got = 0;
    if (*avail >= need && missing <= 0)
        return s->now;
    while (k < s->nbyend && (*avail < need || got < missing))
        *avail += overlap(j, s->byend[k++], &got);
    if (*avail < need || got < missing)
        return INFINITY;
    /* every job ending then frees its nodes then (the order among equal ends is ids') */
    double at = end_or_now(s, s->byend[k - 1]);
    while (k < s->nbyend && end_or_now(s, s->byend[k]) == at)
        *avail += overlap(j, s->byend[k++], &got);
    return at;
}

double nodesel_earliest(const sched_t *s, const sjob_t *j, int need)
{
    int avail, reqfree;
    return own_nodes_free_at(s, j, need, &avail, &reqfree);
}

void nodesel_shadow(sched_t *s, sjob_t *head, bool flexible, easy_plan_t *plan)
{
    int need = core_min_start(head, flexible), avail, reqfree;
    plan->head = head;
    plan->shadow = own_nodes_free_at(s, head, need, &avail, &reqfree);
    /* a job backfilled past the shadow takes at most its size of the head's nodes; it
     * could take a required node that is free now, so none may then */
    plan->extra = isinf(plan->shadow) || reqfree > 0 ? 0 : avail - need;
    head->reserved_start = isinf(plan->shadow) ? -1 : plan->shadow;
}

bool nodesel_room_enough(const sched_t *s, int n, const sjob_t *waiting, bool flexible)
{
    int got = core_free_for(s, waiting), req = 0, nreq = 0;
    if (waiting->required) {
        nreq = nodeset_count(waiting->required);
        req = nodeset_count_in(waiting->required, s->freeset, NULL);
    }
    for (int i = 0; i < n; i++) {
        const sjob_t *j = s->tmp[i];
        if (j->newsize >= j->ncommit || core_resize_held(s, j, j->newsize))
            continue;
        got += core_room_gain(waiting, j, j->newsize);
        for (int k = j->newsize; k < j->ncommit && waiting->required; k++)
            req += nodeset_test(waiting->required, j->nodes[k]);
    }
    return got >= core_min_start(waiting, flexible) && req >= nreq;
}

bool nodesel_backfill_beside(sched_t *s, sjob_t *j, const sjob_t *head, bool flexible)
{
    if (!core_masked(s, head) || j->required)
        return false;
    const nodeset_t *theirs = head->allowed ? head->allowed : head->required;
    int beside = nodeset_count_in(s->freeset, j->allowed, theirs);
    sched_reason_t why;
    int size = beside > 0 ? core_fit_now(s, j, beside, flexible, &why) : 0;
    if (!size)
        return false;
    core_start_avoiding(s, j, size, SCHED_R_BACKFILL, theirs);
    return j->state == SCHED_RUNNING;
}
