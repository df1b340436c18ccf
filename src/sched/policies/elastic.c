/* elastic: EASY backfilling that lends idle nodes to running malleable jobs and takes
 * them back for waiting jobs (Ductile's own policy; docs/policies.md).
 *
 * Jobs start exactly as under `easy`: in priority order at their requested size, one
 * reservation for the first job that does not fit, backfill of later jobs that do not
 * delay it. Then, when no resize is under way:
 *   - take back: the nodes running malleable jobs hold above their requested size are
 *     on loan. The first waiting job that EASY would start now (the reserved job, or
 *     a job that may backfill) if those nodes were free gets them: the jobs holding
 *     them shrink, never below their requested size, and it starts once they have;
 *   - lend: idle nodes the reservation does not need go to running malleable jobs,
 *     the longest remaining first; nodes the reservation needs are lent only to jobs
 *     expected to end by its start (gaps=1), which give them back by ending.
 * A job is never made smaller than it asked for, so its own walltime holds, and the
 * reserved job is delayed at most by the time a shrink takes. */
#include <math.h>

#include "policies.h"

enum { P_GUARD, P_GAPS, P_BELOW };

/* How far down a job gives nodes back: its requested size (within what it and its
 * application accept). */
static int base_size(const sjob_t *j)
{
    int b = j->spec.nodes;
    if (b < j->spec.min_nodes)
        b = j->spec.min_nodes;
    if (b > j->spec.max_nodes)
        b = j->spec.max_nodes;
    return b;
}

static int lent(const sjob_t *j)
{
    int k = j->ncommit - base_size(j);
    return k > 0 ? k : 0;
}

/* Would EASY start j now with `have` nodes free? The reserved job: when its size
 * fits; a later job: when it also ends by the reservation or stays in its spare
 * nodes. */
static bool would_start(const sched_t *s, const sjob_t *j, const easy_plan_t *plan, int have)
{
    int need = core_min_start(j, false);
    if (need > have)
        return false;
    if (j == plan->head)
        return true;
    return s->now + core_walltime_at(j, need) <= plan->shadow || need <= plan->extra;
}

/* The first waiting job the loaned nodes would start now; the holders shrink for it.
 * True when shrinks were issued. Looks at the first 256 waiting jobs only. */
static bool take_back(sched_t *s, int n, const easy_plan_t *plan)
{
    int onloan = 0;
    for (int i = 0; i < n; i++)
        onloan += lent(s->tmp[i]);
    if (onloan == 0 || !plan->head)
        return false;
    sjob_t *want = NULL;
    int looked = 0;
    for (sjob_t *j = plan->head; j && looked < 256; j = j->qnext, looked++) {
        if (core_unrunnable(s, j, false))
            continue;
        if (would_start(s, j, plan, s->nfree + onloan)) {
            want = j;
            break;
        }
    }
    if (!want)
        return false;
    int missing = core_room_need(s, want, false);
    core_reset_targets(s, n);
    core_sort_tmp(s, n, core_lowest_priority_first);
    for (int i = 0; i < n && missing > 0; i++) {
        sjob_t *j = s->tmp[i];
        if (!lent(j) || core_remaining(s, j) <= 0)
            continue;
        int give = lent(j) < missing ? lent(j) : missing;
        int v = fpsma_shrink_one(j, give, base_size(j));
        if (v >= j->ncommit)
            continue;
        j->newsize = v;
        missing -= core_room_gain(want, j, v);
    }
    if (missing > 0) { /* the constraints keep too much: nothing */
        core_reset_targets(s, n);
        return false;
    }
    return core_make_room(s, n, want, false);
}

static void lend(sched_t *s, int n, const easy_plan_t *plan)
{
    double guard = s->params[P_GUARD];
    int spare = s->nfree, gap = 0;
    if (plan->head) {
        spare = plan->extra < s->nfree ? plan->extra : s->nfree;
        if (spare < 0)
            spare = 0;
        gap = s->params[P_GAPS] > 0.5 ? s->nfree - spare : 0;
    }
    if (spare <= 0 && gap <= 0)
        return;
    core_reset_targets(s, n);
    for (int i = 0; i < n; i++)
        s->tmp[i]->key = core_remaining(s, s->tmp[i]);
    core_sort_tmp(s, n, core_largest_key_first);
    for (int i = 0; i < n && (spare > 0 || gap > 0); i++) {
        sjob_t *j = s->tmp[i];
        if (j->ncommit >= j->spec.max_nodes || !(j->key > guard))
            continue;
        /* the reservation's nodes only to a job that gives them back by ending first */
        int g = gap > 0 && j->end_est <= plan->shadow ? gap : 0;
        if (spare + g <= 0)
            continue;
        j->newsize = fpsma_grow_one(j, spare + g);
        int k = j->newsize - j->ncommit, from_gap = k < g ? k : g;
        gap -= from_gap;
        spare -= k - from_gap;
    }
    core_apply_targets(s, n, SCHED_R_IDLE_NODES, SCHED_R_MAKE_ROOM, -1);
}

/* below=1: a malleable job that does not fit at its requested size may backfill on
 * fewer nodes (never below its minimum), the most that still ends by the reservation
 * (at walltime x requested / size) or stays in its spare nodes; lending grows it
 * later. Off by default: on deep queues the jobs started small straggle. */
static void backfill_below(sched_t *s, easy_plan_t *plan)
{
    for (sjob_t *j = plan->head ? plan->head->qnext : NULL, *next; j && s->nfree > 0; j = next) {
        next = j->qnext;
        if (j->spec.type != SCHED_MALLEABLE || core_unrunnable(s, j, true) ||
            j->spec.nodes <= j->spec.min_nodes || !(j->spec.walltime > 0))
            continue;
        int hi = s->nfree < j->spec.nodes - 1 ? s->nfree : j->spec.nodes - 1;
        int lo = j->spec.min_nodes, v = 0, in_extra = 0;
        double left = plan->shadow - s->now;
        if (left > 0) { /* ends by the reservation: v >= walltime x nodes / left */
            double at_least = ceil(j->spec.walltime * j->spec.nodes / left - 1e-9);
            if (at_least <= hi)
                v = cons_largest_leq(hi, j->spec.constraint, at_least > lo ? (int)at_least : lo,
                                     hi);
        }
        if (plan->extra > 0) {
            int x = cons_largest_leq(plan->extra < hi ? plan->extra : hi, j->spec.constraint,
                                     lo, hi);
            if (x > v) {
                v = x;
                in_extra = x;
            }
        }
        if (v <= 0)
            continue;
        core_start(s, j, v, SCHED_R_BACKFILL);
        plan->extra -= in_extra;
    }
}

static void pass(sched_t *s)
{
    easy_plan_t plan;
    core_pass_easy(s, false, &plan);
    if (s->params[P_BELOW] > 0.5)
        backfill_below(s, &plan);
    int n = core_begin_resizes(s);
    if (n == 0)
        return;
    if (!take_back(s, n, &plan))
        lend(s, n, &plan);
}

const sched_policy_t policy_elastic = {
    .name = "elastic",
    .summary = "EASY backfilling that lends idle nodes to running malleable jobs and takes "
               "them back for waiting jobs (Ductile's own)",
    .params =
        (const sched_param_def_t[]){
            {"guard", 60, 0, 1e9, "no growth for a job expected to end within this many seconds",
             false},
            {"gaps", 1, 0, 1,
             "1: nodes the reserved job needs may go to a job expected to end before it starts",
             true},
            {"below", 0, 0, 1,
             "1: a malleable job may backfill on fewer nodes than it asked for, never below its "
             "minimum",
             true},
            {0}},
    .needs_end_order = true,
    .pass = pass,
};
