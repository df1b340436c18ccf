/* Multifactor priority and fair share (docs/policies.md, "Priority and fair share").
 *
 * A job's priority is a weighted sum of factors between 0 and 1, less its nice:
 *   age        time waited / max_age, at most 1
 *   size       nodes asked / nodes of the cluster
 *   fairshare  2^(-effective usage / normalised shares) of its association
 *   tier       its partition's tier / the highest tier
 * With every weight 0 (the default) the priority is -nice and the queue keeps the
 * order of submission, as before priorities existed.
 *
 * Fair share. An association is an (account, user) pair: a leaf of the account tree.
 * Usage is node-seconds, charged as jobs hold nodes and decayed by half every
 * half_life. An account's usage is its leaves' sum. Shares are normalised down the
 * tree (a node's shares over its siblings', times its parent's normalised shares);
 * effective usage is the classic multifactor rule: a node's own normalised usage,
 * pulled towards its parent's effective usage by its share of its siblings, so that
 * the users of an account that used much wait behind those of an account that used
 * little. Recomputed at most every calc_period seconds, at a pass. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_internal.h"

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)


#define PRIO_ACCOUNT UINT32_MAX
#define LN2 0.69314718055994530942

static int64_t leaf_key(uint32_t account, uint32_t user)
{
    return (int64_t)(((uint64_t)account << 32) | user);
}

void prio_init(sched_t *s)
{
    s->prio.max_age = 7 * 86400;
    s->prio.half_life = 7 * 86400;
    s->prio.calc_period = 300;
    s->prio_last = -INFINITY;
    s->prio_root.account = 0;
    s->prio_root.user = PRIO_ACCOUNT;
    s->prio_root.shares = 1;
}

static void free_node(int64_t key, void *val, void *arg)
{
    (void)key, (void)arg;
    prio_node_t *n = val;
    free(n->lim);
    free(n);
}

void prio_destroy(sched_t *s)
{
    if (s->prio_accounts) {
        idmap_foreach(s->prio_accounts, free_node, NULL);
        idmap_destroy(s->prio_accounts);
    }
    if (s->prio_leaves) {
        idmap_foreach(s->prio_leaves, free_node, NULL);
        idmap_destroy(s->prio_leaves);
    }
    free(s->pend);
    free(s->pkeys);
}

bool prio_active(const sched_t *s)
{
    return s->prio.w_age > 0 || s->prio.w_size > 0 || s->prio.w_fairshare > 0 ||
           s->prio.w_tier > 0;
}

int sched_set_priority(sched_t *s, const sched_prio_config_t *c, char *err, size_t errlen)
{
    const double w[] = {c->w_age, c->w_size, c->w_fairshare, c->w_tier};
    for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
        if (!(w[i] >= 0 && w[i] <= 1e9))
            return ERR("a priority weight must be between 0 and 1e9 (got %g)", w[i]);
    if (!(c->max_age > 0 && c->max_age <= 1e9))
        return ERR("the age that gives the whole age factor must be above 0 seconds (got %g)",
                   c->max_age);
    if (!(c->half_life >= 0 && c->half_life <= 1e10))
        return ERR("the fair-share half-life must be 0 (no decay) or more seconds (got %g)",
                   c->half_life);
    if (!(c->calc_period >= 0 && c->calc_period <= 1e7))
        return ERR("the priority recalculation period must be 0 or more seconds (got %g)",
                   c->calc_period);
    if (c->tier_max < 0)
        return ERR("the highest partition tier must not be negative (got %d)", c->tier_max);
    s->prio = *c;
    s->prio_last = -INFINITY; /* the next pass recomputes */
    s->prio_dirty = true;
    return 0;
}

void sched_get_priority(const sched_t *s, sched_prio_config_t *out) { *out = s->prio; }

uint64_t sched_usage_version(const sched_t *s) { return s->prio_charges; }


void sched_clock(sched_t *s, double now)
{
    if (now > s->now)
        s->now = now;
}

/* --- the tree --- */

static prio_node_t *account_get(sched_t *s, uint32_t id, bool create);
prio_node_t *prio_account(sched_t *s, uint32_t id) { return account_get(s, id, true); }

static prio_node_t *account_get(sched_t *s, uint32_t id, bool create)
{
    if (id == 0)
        return &s->prio_root;
    if (!s->prio_accounts) {
        if (!create || !(s->prio_accounts = idmap_create()))
            return NULL;
    }
    prio_node_t *a = idmap_get(s->prio_accounts, id);
    if (a || !create)
        return a;
    a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->account = id;
    a->user = PRIO_ACCOUNT;
    a->parent = &s->prio_root;
    a->shares = 1;
    if (idmap_put(s->prio_accounts, id, a) < 0) {
        free(a);
        return NULL;
    }
    return a;
}

static prio_node_t *leaf_get(sched_t *s, uint32_t account, uint32_t user, bool create)
{
    if (!s->prio_leaves) {
        if (!create || !(s->prio_leaves = idmap_create()))
            return NULL;
    }
    prio_node_t *l = idmap_get(s->prio_leaves, leaf_key(account, user));
    if (l || !create)
        return l;
    prio_node_t *a = account_get(s, account, true);
    if (!a || !(l = calloc(1, sizeof(*l))))
        return NULL;
    l->account = account;
    l->user = user;
    l->parent = a;
    l->shares = 1;
    l->usage_at = s->now;
    if (idmap_put(s->prio_leaves, leaf_key(account, user), l) < 0) {
        free(l);
        return NULL;
    }
    /* its factor and its siblings' shares change: the next pass recomputes (until then
     * a new user's first job had a factor of 0) */
    s->prio_last = -INFINITY;
    return l;
}

static bool is_ancestor(const prio_node_t *a, const prio_node_t *of)
{
    for (const prio_node_t *p = of; p; p = p->parent)
        if (p == a)
            return true;
    return false;
}

int sched_set_account(sched_t *s, uint32_t id, uint32_t parent, double shares, char *err,
                      size_t errlen)
{
    if (id == 0 || id == PRIO_ACCOUNT)
        return ERR("account id %u is reserved", id);
    if (!(shares >= 0 && shares <= 1e9))
        return ERR("shares must be between 0 and 1e9 (got %g)", shares);
    prio_node_t *a = account_get(s, id, true), *p = account_get(s, parent, true);
    if (!a || !p)
        return snprintf(err, errlen, "out of memory"), -ENOMEM;
    if (is_ancestor(a, p))
        return ERR("account %u cannot be under %u: %u is under it", id, parent, parent);
    a->parent = p;
    a->shares = shares;
    s->prio_last = -INFINITY;
    return 0;
}

int sched_set_user_shares(sched_t *s, uint32_t account, uint32_t user, double shares)
{
    if (!(shares >= 0 && shares <= 1e9) || user == PRIO_ACCOUNT)
        return -EINVAL;
    prio_node_t *l = leaf_get(s, account, user, true);
    if (!l)
        return -ENOMEM;
    l->shares = shares;
    s->prio_last = -INFINITY;
    return 0;
}

/* A leaf's usage brought to time t (decay only). */
static void leaf_decay(const sched_t *s, prio_node_t *l, double t)
{
    if (t <= l->usage_at)
        return;
    if (s->prio.half_life > 0)
        l->usage *= exp2(-(t - l->usage_at) / s->prio.half_life);
    l->usage_at = t;
}

/* Node-seconds of n nodes held from t0 to t1, as they count at t1 (decayed). */
static double decayed_hold(const sched_t *s, int n, double t0, double t1)
{
    double dt = t1 - t0;
    if (dt <= 0 || n <= 0)
        return 0;
    if (s->prio.half_life <= 0)
        return n * dt;
    double hl = s->prio.half_life;
    return n * hl / LN2 * (1 - exp2(-dt / hl));
}

void prio_attach(sched_t *s, sjob_t *j)
{
    j->leaf = leaf_get(s, j->spec.account, j->spec.user, true);
    j->ulim = s->lim_users ? idmap_get(s->lim_users, j->spec.user) : NULL;
    j->charged_at = s->now;
}

int sched_restore_charged(sched_t *s, int64_t id, double t)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j || j->state == SCHED_PENDING)
        return -ENOENT;
    j->charged_at = t < j->start ? j->start : t > s->now ? s->now : t;
    return 0;
}

void prio_charge(sched_t *s, sjob_t *j)
{
    double now = s->now;
    if (j->leaf && j->nalloc > 0 && now > j->charged_at) {
        leaf_decay(s, j->leaf, now);
        j->leaf->usage += decayed_hold(s, j->nalloc, j->charged_at, now);
        s->prio_charges++;
    }
    if (now > j->charged_at)
        j->charged_at = now;
}

/* --- recalculation --- */

static void sum_leaf(int64_t key, void *val, void *arg)
{
    (void)key;
    sched_t *s = arg;
    prio_node_t *l = val;
    leaf_decay(s, l, s->now);
    for (prio_node_t *p = l->parent; p; p = p->parent)
        p->usage += l->usage;
    l->parent->child_shares += l->shares;
}

static void reset_account(int64_t key, void *val, void *arg)
{
    (void)key, (void)arg;
    prio_node_t *a = val;
    a->usage = 0;
    a->child_shares = 0;
}

static void add_account_shares(int64_t key, void *val, void *arg)
{
    (void)key, (void)arg;
    prio_node_t *a = val;
    a->parent->child_shares += a->shares;
}

/* norm_shares, norm_usage, eff_usage of n (its parent's first). */
static void compute_node(const sched_t *s, prio_node_t *n)
{
    if (n->stamp == s->prio_stamp)
        return;
    n->stamp = s->prio_stamp;
    double total = s->prio_root.usage;
    n->norm_usage = total > 0 ? n->usage / total : 0;
    if (!n->parent) { /* the root */
        n->norm_shares = 1;
        n->eff_usage = n->norm_usage;
        n->fairshare = 1;
        return;
    }
    compute_node(s, n->parent);
    double sib = n->parent->child_shares;
    double frac = sib > 0 ? n->shares / sib : 0;
    n->norm_shares = n->parent->norm_shares * frac;
    /* pulled towards the parent's effective usage, but under the root by nothing (the
     * classic rule: the root's own would give an association that used nothing the
     * factor of one that used its share) */
    n->eff_usage = n->parent == &s->prio_root
                       ? n->norm_usage
                       : n->norm_usage + (n->parent->eff_usage - n->norm_usage) * frac;
    n->fairshare = n->norm_shares > 0 ? exp2(-n->eff_usage / n->norm_shares) : 0;
}

static void compute_leaf(int64_t key, void *val, void *arg)
{
    (void)key;
    compute_node(arg, val);
}

/* A job's factors, each 0..1 (the priority's terms before their weights), at time t
 * with its association's fair-share factor fs. */
static void factors(const sched_t *s, const sjob_t *j, double t, double fs,
                    sched_prio_info_t *f)
{
    const sched_prio_config_t *c = &s->prio;
    double since = j->spec.eligible > 0 ? j->spec.eligible : j->spec.submit;
    double age = (t - since) / c->max_age;
    f->age = age < 0 ? 0 : age > 1 ? 1 : age;
    f->size = (double)j->spec.nodes / s->nnodes;
    f->fairshare = fs;
    f->tier = c->tier_max <= 0               ? 0
              : j->spec.tier >= c->tier_max ? 1.0
                                             : (double)j->spec.tier / c->tier_max;
    f->nice = j->spec.nice;
}

static double job_priority(const sched_t *s, const sjob_t *j)
{
    const sched_prio_config_t *c = &s->prio;
    sched_prio_info_t f;
    factors(s, j, s->now, j->leaf ? j->leaf->fairshare : 0, &f);
    return c->w_age * f.age + c->w_size * f.size + c->w_fairshare * f.fairshare +
           c->w_tier * f.tier - f.nice;
}

void prio_job_set(sched_t *s, sjob_t *j)
{
    j->prio_at = s->now;
    j->prio_fs = j->leaf ? j->leaf->fairshare : 0;
    j->prio = prio_active(s) ? job_priority(s, j) : -(double)j->spec.nice;
}

/* The pending queue sorted again by core_before: a natural merge sort of the list,
 * linear when the order holds already. queue_sort's fallback (no memory for keys). */
static sjob_t *merge(sjob_t *a, sjob_t *b)
{
    sjob_t head = {0}, *t = &head;
    while (a && b) {
        if (core_before(b, a)) {
            t->qnext = b;
            b = b->qnext;
        } else {
            t->qnext = a;
            a = a->qnext;
        }
        t = t->qnext;
    }
    t->qnext = a ? a : b;
    return head.qnext;
}

static void list_sort(sched_t *s)
{
    sjob_t *list = s->qhead;
    for (;;) {
        /* one sweep: merge consecutive ascending runs in pairs */
        sjob_t *out = NULL, *tail = NULL;
        int runs = 0;
        while (list) {
            sjob_t *a = list, *e = a;
            while (e->qnext && !core_before(e->qnext, e))
                e = e->qnext;
            sjob_t *b = e->qnext;
            e->qnext = NULL;
            sjob_t *rest = NULL;
            if (b) {
                sjob_t *f = b;
                while (f->qnext && !core_before(f->qnext, f))
                    f = f->qnext;
                rest = f->qnext;
                f->qnext = NULL;
            }
            sjob_t *m = b ? merge(a, b) : a;
            runs++;
            if (tail)
                tail->qnext = m;
            else
                out = m;
            tail = m;
            while (tail->qnext)
                tail = tail->qnext;
            list = rest;
        }
        list = out;
        if (runs <= 1)
            break;
    }
    /* the back links and the tail */
    sjob_t *prev = NULL;
    for (sjob_t *j = list; j; j = j->qnext) {
        j->qprev = prev;
        prev = j;
    }
    s->qhead = list;
    s->qtail = prev;
}

/* --- the array of waiting jobs --- */

void prio_pend_add(sched_t *s, sjob_t *j)
{
    j->pidx = -1;
    if (s->pend_lost)
        return;
    if (s->npend == s->cappend) {
        size_t cap = s->cappend ? 2 * s->cappend : 1024;
        sjob_t **p = realloc(s->pend, cap * sizeof(*p));
        if (!p) { /* the sort walks the list until it can rebuild the array */
            free(s->pend);
            s->pend = NULL;
            s->npend = s->cappend = s->pend_holes = 0;
            s->pend_lost = true;
            return;
        }
        s->pend = p;
        s->cappend = cap;
    }
    j->pidx = (int)s->npend;
    s->pend[s->npend++] = j;
}

/* the holes closed up, the order kept */
static void pend_compact(sched_t *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->npend; i++)
        if (s->pend[i]) {
            s->pend[i]->pidx = (int)n;
            s->pend[n++] = s->pend[i];
        }
    s->npend = n;
    s->pend_holes = 0;
}

void prio_pend_del(sched_t *s, sjob_t *j)
{
    if (s->pend_lost || j->pidx < 0 || (size_t)j->pidx >= s->npend || s->pend[j->pidx] != j)
        return;
    s->pend[j->pidx] = NULL;
    j->pidx = -1;
    /* a queue that mostly left between two sorts: closed up now and then, each job
     * moved once per hole made */
    if (++s->pend_holes > 1024 && s->pend_holes > s->npend / 2)
        pend_compact(s);
}

/* The array again from the list (after running out of memory). */
static bool pend_rebuild(sched_t *s)
{
    size_t n = (size_t)s->npending;
    sjob_t **p = malloc((n ? n : 1) * sizeof(*p));
    if (!p)
        return false;
    size_t i = 0;
    for (sjob_t *j = s->qhead; j && i < n; j = j->qnext, i++) {
        j->pidx = (int)i;
        p[i] = j;
    }
    s->pend = p;
    s->npend = i;
    s->cappend = n ? n : 1;
    s->pend_holes = 0;
    s->pend_lost = false;
    s->pend_moved = false;
    return i == n;
}

/* What core_before reads of a queued job, copied into an array: the sort then reads
 * memory in sequence instead of the jobs, each a cache miss once the queue's order is
 * far from their order in memory (bench_sim prio). */
typedef struct prio_key {
    double prio, submit;
    int64_t id;
    sjob_t *j;
    int cls, tier;
} prio_key_t;

/* core_before on the copies */
static bool key_before(const prio_key_t *a, const prio_key_t *b)
{
    if (a->cls != b->cls)
        return a->cls > b->cls;
    if (a->tier != b->tier)
        return a->tier > b->tier;
    if (a->prio != b->prio)
        return a->prio > b->prio;
    if (a->submit != b->submit)
        return a->submit < b->submit;
    return a->id < b->id;
}

static size_t run_end(const prio_key_t *k, size_t i, size_t n)
{
    while (i + 1 < n && !key_before(&k[i + 1], &k[i]))
        i++;
    return i + 1;
}

/* A natural merge sort of n keys, from k with tmp beside it; returns the sorted copy. */
static prio_key_t *merge_sort(prio_key_t *k, prio_key_t *tmp, size_t n)
{
    for (;;) {
        size_t runs = 0;
        for (size_t i = 0; i < n; runs++) {
            size_t m = run_end(k, i, n), e = m < n ? run_end(k, m, n) : n, a = i, b = m;
            while (a < m && b < e)
                tmp[i++] = key_before(&k[b], &k[a]) ? k[b++] : k[a++];
            while (a < m)
                tmp[i++] = k[a++];
            while (b < e)
                tmp[i++] = k[b++];
        }
        prio_key_t *t = k;
        k = tmp;
        tmp = t;
        if (runs <= 1)
            return k;
    }
}

/* The n keys k sorted, tmp (n more) beside them; returns where they are. The keys
 * come in the last sort's order and a recalculation moves few jobs far: one walk
 * keeps an ordered sequence in k and puts aside each key out of it (the one that
 * breaks the order, or the one before it when that one alone is out of place: a job
 * whose priority fell), the few put aside are sorted and merged in from the end. A
 * merge sort of the whole when many moved. */
static prio_key_t *keys_sort(prio_key_t *k, prio_key_t *tmp, size_t n)
{
    size_t nm = 0, ns = 0, most = n / 8, i;
    for (i = 0; i < n && ns <= most; i++) {
        if (nm == 0 || !key_before(&k[i], &k[nm - 1]))
            k[nm++] = k[i];
        else if (nm >= 2 && !key_before(&k[i], &k[nm - 2])) {
            tmp[ns++] = k[nm - 1];
            k[nm - 1] = k[i];
        } else
            tmp[ns++] = k[i];
    }
    if (ns > most) {
        /* many out of place: the first i keys are the nm kept and the ns aside, so
         * those aside go back in the gap and the whole is merge-sorted */
        memcpy(k + nm, tmp, ns * sizeof(*k));
        return merge_sort(k, tmp, n);
    }
    prio_key_t *side = merge_sort(tmp, tmp + ns, ns);
    /* merge from the end: k has room for n, its first nm are the kept ones */
    size_t w = n, a = nm, b = ns;
    while (b > 0) {
        if (a > 0 && key_before(&side[b - 1], &k[a - 1]))
            k[--w] = k[--a];
        else
            k[--w] = side[--b];
    }
    return k;
}

/* The list and the array in the order of the n keys k. */
static void relink(sched_t *s, const prio_key_t *k, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sjob_t *j = k[i].j;
        j->qprev = i ? k[i - 1].j : NULL;
        j->qnext = i + 1 < n ? k[i + 1].j : NULL;
        j->pidx = (int)i;
        s->pend[i] = j;
    }
    s->qhead = k[0].j;
    s->qtail = k[n - 1].j;
    s->npend = n;
    s->pend_holes = 0;
    s->pend_moved = false;
}

/* The pending queue in core_before's order again, each job's priority first
 * recomputed when `recompute`. Reads the array of waiting jobs, not the list; sorts
 * only when that array is out of order, and relinks only then or when the list's
 * order may differ from the array's (a job put in its place by core_queue_insert). */
static void queue_sort(sched_t *s, bool recompute)
{
    size_t n = (size_t)s->npending;
    if (n == 0)
        return;
    if (s->pend_lost && !pend_rebuild(s))
        goto fallback;
    if (s->cappkeys < 2 * n) {
        size_t cap = 2 * n + n / 4;
        prio_key_t *k = realloc(s->pkeys, cap * sizeof(*k));
        if (!k)
            goto fallback;
        s->pkeys = k;
        s->cappkeys = cap;
    }
    prio_key_t *k = s->pkeys;
    size_t m = 0;
    bool sorted = true;
    for (size_t i = 0; i < s->npend; i++) {
        sjob_t *j = s->pend[i];
        if (!j)
            continue;
        if (m == n) { /* more in the array than the count: rebuilt below */
            m++;
            break;
        }
        if (recompute)
            prio_job_set(s, j);
        k[m] = (prio_key_t){j->prio, j->spec.submit, j->spec.id, j, (int)j->cls, j->spec.tier};
        sorted = sorted && !(m && key_before(&k[m], &k[m - 1]));
        m++;
    }
    if (m != n) { /* the array and the list disagree: the list is the truth */
        free(s->pend);
        s->pend = NULL;
        s->npend = s->cappend = 0;
        s->pend_lost = true;
        goto fallback;
    }
    if (!sorted)
        relink(s, keys_sort(k, k + n, n), n);
    else if (s->pend_moved) /* the list's order may differ from the array's */
        relink(s, k, n);
    return;
fallback:
    if (recompute)
        for (sjob_t *j = s->qhead; j; j = j->qnext)
            prio_job_set(s, j);
    list_sort(s);
    s->pend_moved = true; /* the array keeps the old order: relink it at the next sort */
}

/* Usage charged up to now and the tree's figures. */
static void tree_update(sched_t *s)
{
    for (sjob_t *j = s->rhead; j; j = j->rnext)
        prio_charge(s, j);
    s->prio_stamp++;
    s->prio_root.usage = 0;
    s->prio_root.child_shares = 0;
    if (s->prio_accounts) {
        idmap_foreach(s->prio_accounts, reset_account, NULL);
        idmap_foreach(s->prio_accounts, add_account_shares, NULL);
    }
    if (s->prio_leaves) {
        idmap_foreach(s->prio_leaves, sum_leaf, s);
        idmap_foreach(s->prio_leaves, compute_leaf, s);
    }
    if (s->prio_accounts) /* accounts without leaves have their figures too */
        idmap_foreach(s->prio_accounts, compute_leaf, s);
}

/* The tree's figures and every job's priority. */
static void recalc(sched_t *s)
{
    s->prio_last = s->now;
    tree_update(s);
    /* the queued jobs' priorities: queue_sort computes them as it reads the queue */
    for (sjob_t *j = s->rhead; j; j = j->rnext)
        prio_job_set(s, j);
    s->prio_dirty = true;
}

void sched_usage_refresh(sched_t *s) { tree_update(s); }

size_t sched_pending_order(sched_t *s, int64_t *ids, size_t cap)
{
    if (s->prio_dirty) { /* jobs submitted since the last pass, in their places */
        queue_sort(s, false);
        s->prio_dirty = false;
    }
    size_t n = 0;
    for (const sjob_t *j = s->qhead; j; j = j->qnext, n++)
        if (n < cap)
            ids[n] = j->spec.id;
    return n;
}

void sched_prio_update(sched_t *s)
{
    recalc(s);
    queue_sort(s, true);
    s->prio_dirty = false;
}

/* At a pass: recompute when the period has passed (or something changed the tree),
 * and put the queue back in order when a priority changed. */
void prio_pass(sched_t *s)
{
    bool due = prio_active(s) && s->now - s->prio_last >= s->prio.calc_period;
    if (due)
        recalc(s);
    if (due || s->prio_dirty)
        queue_sort(s, due);
    s->prio_dirty = false;
}

/* --- queries --- */

int sched_job_priority(const sched_t *s, int64_t id, sched_prio_info_t *out)
{
    const sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    factors(s, j, j->prio_at, j->prio_fs, out); /* as its priority was computed */
    out->priority = j->prio;
    return 0;
}

int sched_set_nice(sched_t *s, int64_t id, int nice)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    j->spec.nice = nice;
    prio_job_set(s, j);
    if (j->state == SCHED_PENDING)
        s->prio_dirty = true;
    return 0;
}

static void fill_assoc(const prio_node_t *n, sched_assoc_t *out)
{
    out->account = n->account;
    out->user = n->user == PRIO_ACCOUNT ? 0 : n->user;
    out->is_account = n->user == PRIO_ACCOUNT;
    out->parent = n->parent ? n->parent->account : 0;
    out->shares = n->shares;
    out->usage = n->usage;
    out->norm_shares = n->norm_shares;
    out->norm_usage = n->norm_usage;
    out->eff_usage = n->eff_usage;
    out->fairshare = n->fairshare;
}

typedef struct assoc_walk {
    sched_assoc_t *out;
    size_t n, cap;
} assoc_walk_t;

static void walk_node(int64_t key, void *val, void *arg)
{
    (void)key;
    assoc_walk_t *w = arg;
    if (w->n < w->cap)
        fill_assoc(val, &w->out[w->n]);
    w->n++;
}

size_t sched_associations(const sched_t *s, sched_assoc_t *out, size_t cap)
{
    assoc_walk_t w = {out, 0, cap};
    if (s->prio_accounts)
        idmap_foreach(s->prio_accounts, walk_node, &w);
    if (s->prio_leaves)
        idmap_foreach(s->prio_leaves, walk_node, &w);
    return w.n;
}

int sched_set_usage(sched_t *s, uint32_t account, uint32_t user, double usage)
{
    if (!(usage >= 0) || !isfinite(usage))
        return -EINVAL;
    prio_node_t *l = leaf_get(s, account, user, true);
    if (!l)
        return -ENOMEM;
    l->usage = usage;
    l->usage_at = s->now;
    s->prio_last = -INFINITY;
    return 0;
}
