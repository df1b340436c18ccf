/* Reservations (docs/reservations.md): nodes set apart for a time window, for their
 * users' jobs, or for maintenance (no job).
 *
 * Through the pass, every waiting job sees, in place of its allowed nodes, those less
 * the nodes of each reservation its estimate would reach into (a job without a time
 * limit reaches into every one ahead), so that every policy starts it only where it
 * ends in time, by the node selection the core already keeps to (nodesel.c). A job of
 * a reservation sees its reservation's nodes once it has begun, and none before. A
 * running malleable job grows the same way, and once a reservation begins a job of
 * another that holds its nodes is shrunk to give them back where it can. Jobs that
 * share a reason for their view (unmasked, and reaching into the same reservations)
 * share one set of nodes. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_internal.h"

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)
#define RESV_MAX 64

struct resv {
    int64_t id;
    double start, end;
    nodeset_t *nodes;
    bool maintenance;
};

static struct resv *find(const sched_t *s, int64_t id)
{
    for (int i = 0; i < s->nresv; i++)
        if (s->resv[i].id == id)
            return &s->resv[i];
    return NULL;
}

int sched_add_reservation(sched_t *s, int64_t id, double start, double end, const int *nodes,
                          int n, bool maintenance, char *err, size_t errlen)
{
    if (find(s, id))
        return ERR("reservation %lld exists already", (long long)id);
    if (!(end > start) || !isfinite(start) || !isfinite(end))
        return ERR("a reservation ends after it begins");
    if (n < 1)
        return ERR("a reservation holds at least one node");
    if (s->nresv >= RESV_MAX)
        return ERR("at most %d reservations at once", RESV_MAX);
    nodeset_t *ns = nodeset_create(s->nnodes);
    if (!ns)
        return ERR("out of memory");
    for (int i = 0; i < n; i++) {
        if (nodes[i] < 0 || nodes[i] >= s->nnodes) {
            nodeset_destroy(ns);
            return ERR("node %d is not in the cluster", nodes[i]);
        }
        nodeset_set(ns, nodes[i]);
    }
    for (int r = 0; r < s->nresv; r++) { /* never two on a node at once */
        const struct resv *o = &s->resv[r];
        if (o->start < end && start < o->end && nodeset_count_in(ns, o->nodes, NULL)) {
            nodeset_destroy(ns);
            return ERR("it would share nodes with reservation %lld at the same time",
                       (long long)o->id);
        }
    }
    struct resv *nr = realloc(s->resv, (size_t)(s->nresv + 1) * sizeof(*nr));
    if (!nr) {
        nodeset_destroy(ns);
        return ERR("out of memory");
    }
    s->resv = nr;
    s->resv[s->nresv++] = (struct resv){id, start, end, ns, maintenance};
    return 0;
}

int sched_remove_reservation(sched_t *s, int64_t id)
{
    struct resv *r = find(s, id);
    if (!r)
        return -ENOENT;
    nodeset_destroy(r->nodes);
    *r = s->resv[--s->nresv];
    return 0;
}

void resv_free(sched_t *s)
{
    for (int i = 0; i < s->nresv; i++)
        nodeset_destroy(s->resv[i].nodes);
    free(s->resv);
    s->resv = NULL;
    s->nresv = 0;
}

/* Up to n nodes for a reservation from start to end: none of another one then; first
 * those that are free and up, then those whose jobs are expected to have ended by start,
 * the highest numbers first (jobs take the lowest). Their count. */
int sched_pick_reservation_nodes(const sched_t *s, double start, double end, int n, int *out)
{
    char *busy = calloc((size_t)s->nnodes, 1); /* 0 free, 1 ends in time, 2 no */
    if (!busy)
        return 0;
    for (int r = 0; r < s->nresv; r++)
        if (s->resv[r].start < end && start < s->resv[r].end)
            for (int i = nodeset_next(s->resv[r].nodes, 0); i >= 0;
                 i = nodeset_next(s->resv[r].nodes, i + 1))
                busy[i] = 3;
    for (int i = 0; i < s->nnodes; i++)
        if (!nodeset_test(s->avail, i) && busy[i] < 3)
            busy[i] = 2;
    for (const sjob_t *j = s->rhead; j; j = j->rnext)
        for (int k = 0; k < j->nalloc; k++)
            if (busy[j->nodes[k]] < 3)
                busy[j->nodes[k]] = j->end_est <= start ? 1 : 2;
    int got = 0;
    for (int pass = 0; pass < 3 && got < n; pass++)
        for (int i = s->nnodes - 1; i >= 0 && got < n; i--)
            if (busy[i] == pass)
                out[got++] = i;
    free(busy);
    return got;
}

/* --- the pass --- */

/* The reservations a non-member's start now reaches into, by its estimate, as bits. */
static uint64_t reaches(const sched_t *s, const sjob_t *j, double end)
{
    uint64_t bits = 0;
    for (int r = 0; r < s->nresv; r++)
        if (s->resv[r].id != j->spec.reservation && s->resv[r].start < end &&
            s->now < s->resv[r].end)
            bits |= 1ull << r;
    return bits;
}

/* allowed (NULL: every node) less the nodes of the reservations in bits. */
static nodeset_t *view(const sched_t *s, const nodeset_t *allowed, uint64_t bits)
{
    nodeset_t *v = nodeset_create(s->nnodes);
    if (!v)
        return NULL;
    if (allowed) {
        for (int i = nodeset_next(allowed, 0); i >= 0; i = nodeset_next(allowed, i + 1))
            nodeset_set(v, i);
    } else {
        nodeset_set_all(v);
    }
    for (int r = 0; r < s->nresv; r++)
        if (bits & (1ull << r))
            for (int i = nodeset_next(s->resv[r].nodes, 0); i >= 0;
                 i = nodeset_next(s->resv[r].nodes, i + 1))
                nodeset_clear(v, i);
    return v;
}

typedef struct resv_view {
    uint64_t bits;
    nodeset_t *set;
} shared_view_t;

/* Gives j its view for the pass; keeps its own allowed set to put back. */
static void apply(sched_t *s, sjob_t *j, bool running)
{
    struct resv *mine = j->spec.reservation ? find(s, j->spec.reservation) : NULL;
    double end = running ? j->end_est : s->now + core_walltime_at(j, core_min_start(j, true));
    uint64_t bits = reaches(s, j, end);
    nodeset_t *v = NULL;
    bool own = false;
    if (mine && !running && s->now < mine->start) {
        v = nodeset_create(s->nnodes); /* not before its reservation begins */
        own = true;
    } else if (mine) {
        nodeset_t *base = view(s, j->allowed, bits);
        v = base ? nodeset_create(s->nnodes) : NULL;
        for (int i = v ? nodeset_next(base, 0) : -1; i >= 0; i = nodeset_next(base, i + 1))
            if (nodeset_test(mine->nodes, i))
                nodeset_set(v, i);
        nodeset_destroy(base);
        own = true;
    } else if (!bits) {
        return;
    } else if (j->allowed) {
        v = view(s, j->allowed, bits);
        own = true;
    } else { /* unmasked: shared with every job reaching into the same reservations */
        shared_view_t *sv = s->resv_views;
        int k = 0;
        while (k < s->nresv_views && sv[k].bits != bits)
            k++;
        if (k == s->nresv_views) {
            shared_view_t *nv = realloc(sv, (size_t)(k + 1) * sizeof(*nv));
            if (!nv)
                return;
            s->resv_views = nv;
            nv[k] = (shared_view_t){bits, view(s, NULL, bits)};
            s->nresv_views++;
        }
        v = s->resv_views[k].set;
    }
    if (!v)
        return;
    /* a required node in a reservation it may not use: no start now */
    if (j->required && !running)
        for (int i = nodeset_next(j->required, 0); i >= 0; i = nodeset_next(j->required, i + 1))
            if (!nodeset_test(v, i)) {
                if (!own) {
                    v = nodeset_create(s->nnodes);
                    own = true;
                } else {
                    nodeset_clear_all(v);
                }
                break;
            }
    if (!j->allowed && !j->required)
        s->nmasked++; /* masked for the pass (core_masked looks at the count first) */
    j->resv_saved = j->allowed;
    j->resv_own = own;
    j->resv_on = true;
    j->allowed = v;
}

void resv_pass_begin(sched_t *s)
{
    if (!s->nresv)
        return;
    /* reservations that ended are gone */
    for (int r = 0; r < s->nresv;)
        if (s->resv[r].end <= s->now)
            sched_remove_reservation(s, s->resv[r].id);
        else
            r++;
    for (sjob_t *j = s->qhead; j; j = j->qnext)
        apply(s, j, false);
    for (sjob_t *j = s->rhead; j; j = j->rnext)
        if (j->spec.type == SCHED_MALLEABLE)
            apply(s, j, true);
}

/* A reservation that has begun: a malleable job of another that holds its nodes gives
 * back the ranks from the first of them, when it can run on without them. */
static void honour(sched_t *s)
{
    for (int r = 0; r < s->nresv; r++) {
        const struct resv *v = &s->resv[r];
        if (v->start > s->now)
            continue;
        for (sjob_t *j = s->rhead; j; j = j->rnext) {
            if (j->spec.reservation == v->id || j->state != SCHED_RUNNING ||
                j->spec.type != SCHED_MALLEABLE)
                continue;
            int first = -1;
            for (int k = 1; k < j->ncommit && first < 0; k++)
                if (nodeset_test(v->nodes, j->nodes[k]))
                    first = k;
            if (first < 0)
                continue;
            int to = cons_largest_leq(first, j->spec.constraint, j->spec.min_nodes, first);
            if (to >= j->spec.min_nodes && to > 0 && to < j->ncommit)
                core_shrink(s, j, to, SCHED_R_RESERVATION, -1);
        }
    }
}

/* j's own allowed nodes back. */
static void restore(sched_t *s, sjob_t *j)
{
    if (!j->resv_on)
        return;
    if (j->resv_own)
        nodeset_destroy(j->allowed);
    j->allowed = j->resv_saved;
    if (!j->allowed && !j->required)
        s->nmasked--;
    j->resv_on = j->resv_own = false;
    j->resv_saved = NULL;
}

void resv_pass_end(sched_t *s)
{
    if (!s->nresv && !s->nresv_views)
        return;
    honour(s);
    for (sjob_t *j = s->qhead; j; j = j->qnext) {
        const struct resv *mine = j->spec.reservation ? find(s, j->spec.reservation) : NULL;
        if (mine && s->now < mine->start) { /* what it waits for */
            j->reason = SCHED_R_RESV_WAIT;
            j->reason_job = -1;
        } else if (!mine && j->resv_on && j->reason == SCHED_R_NODES_UNAVAILABLE) {
            j->reason = SCHED_R_RESV_NODES; /* up, but set apart while it would run */
        }
        restore(s, j);
    }
    for (sjob_t *j = s->rhead; j; j = j->rnext)
        restore(s, j);
    for (int k = 0; k < s->nresv_views; k++)
        nodeset_destroy(s->resv_views[k].set);
    free(s->resv_views);
    s->resv_views = NULL;
    s->nresv_views = 0;
}
