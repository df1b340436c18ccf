/* mebf: malleable EASY backfilling (seed 003 §4.1, Algorithm 1), reconstructed
 * where the printed pseudocode is not runnable (docs/policies.md lists each choice):
 *   - jobs are served in priority order; a malleable job starts with the largest
 *     size between its requested (preferred) and minimum size that fits;
 *   - the first job that does not fit gets an EASY reservation; later jobs backfill;
 *   - to start that job, running malleable jobs of lower priority give `share` of
 *     their nodes (Eq. 4.1) when the predicted stretch of their remaining time stays
 *     within gamma (Eq. 4.2-4.4: with the defaults, remaining >= 25 x alpha); all or
 *     nothing;
 *   - otherwise idle nodes the reservation does not need go to higher-priority
 *     running malleable jobs, longest remaining time first, if more than `quarter`
 *     of their estimated run time remains. */
#include <math.h>

#include "policies.h"

/* Eq. 4.1-4.4: may j give g of its nodes? */
static bool shrink_feasible(const sched_t *s, const sjob_t *j, int g)
{
    double share = s->params[0], gamma = s->params[1], alpha = s->params[2];
    (void)share;
    double rem = core_remaining(s, j);
    if (rem <= 0)
        return false;
    if (isinf(rem))
        return 1.0 + (double)g / j->ncommit <= gamma;
    double increase = (double)g / j->ncommit * rem + alpha;
    return (rem + increase) / rem <= gamma + 1e-12;
}

static void pass(sched_t *s)
{
    double share = s->params[0], quarter = s->params[3];
    easy_plan_t plan;
    core_pass_easy(s, true, &plan);
    int n = core_begin_resizes(s);
    if (n == 0)
        return;
    sjob_t *head = plan.head;
    int usable = s->nfree;
    if (head) {
        int need = core_room_need(s, head, true);
        if (need > 0) {
            core_sort_tmp(s, n, core_lowest_priority_first);
            for (int i = 0; i < n && need > 0; i++) {
                sjob_t *j = s->tmp[i];
                if (!core_before(head, j))
                    break; /* from here on, higher priority than the waiting job */
                int g = (int)floor(j->ncommit * share);
                if (g < 1)
                    continue;
                int v = cons_largest_leq(j->ncommit - g, j->spec.constraint, j->spec.min_nodes,
                                         j->ncommit - 1);
                if (!v || !shrink_feasible(s, j, j->ncommit - v))
                    continue;
                j->newsize = v;
                need -= core_room_gain(head, j, v);
            }
            if (need <= 0 && core_make_room(s, n, head, true))
                return;
            core_reset_targets(s, n);
        }
        if (plan.extra < usable)
            usable = plan.extra;
    }
    if (usable <= 0)
        return;
    for (int i = 0; i < n; i++)
        s->tmp[i]->key = core_remaining(s, s->tmp[i]);
    core_sort_tmp(s, n, core_largest_key_first);
    for (int i = 0; i < n && usable > 0; i++) {
        sjob_t *j = s->tmp[i];
        if (head && !core_before(j, head))
            continue;
        if (j->ncommit >= j->spec.max_nodes)
            continue;
        if (j->spec.walltime > 0 && !(j->key > quarter * j->spec.walltime))
            continue;
        j->newsize = fpsma_grow_one(j, usable);
        usable -= j->newsize - j->ncommit;
    }
    core_apply_targets(s, n, SCHED_R_IDLE_NODES, SCHED_R_MAKE_ROOM, -1);
}

const sched_policy_t policy_mebf = {
    .name = "mebf",
    .summary = "seed 003: EASY backfilling that shrinks low-priority and grows long jobs",
    .params = (const sched_param_def_t[]){
        {"share", 0.2, 0, 1, "fraction of a job's nodes one shrink takes (sharing_factor)", false},
        {"gamma", 1.24, 1, 1e9, "largest allowed stretch of a shrunk job's remaining time", false},
        {"alpha", 2, 0, 1e9, "estimated cost of one reconfiguration, seconds", false},
        {"quarter", 0.25, 0, 1, "grow only jobs with more than this share of their time left",
         false},
        {0}},
    .needs_end_order = true,
    .pass = pass,
};
