/* dmr: the malleability policy of DMRlib (seed 004 §5.1, Algorithm 2), applied to
 * every running malleable job with its minimum, preferred and maximum sizes:
 *   - a job below its preferred size grows when idle nodes allow (never above max);
 *   - when a job waits, jobs above their preferred size shrink towards it (never
 *     below it) if that lets the waiting job start; all or nothing;
 *   - idle nodes that no waiting job can use grow jobs up to their maximum.
 * Jobs start through EASY backfilling, as DMR runs on Slurm's backfill scheduler;
 * growth uses only nodes that do not delay the reserved job. */
#include "policies.h"

static void pass(sched_t *s)
{
    easy_plan_t plan;
    core_pass_easy(s, false, &plan);
    int n = core_begin_resizes(s);
    if (n == 0)
        return;
    int usable = s->nfree;
    if (plan.head) {
        int need = core_room_need(s, plan.head, false);
        if (need > 0) {
            for (int i = n - 1; i >= 0 && need > 0; i--) {
                sjob_t *j = s->tmp[i];
                if (j->ncommit <= j->spec.pref_nodes)
                    continue;
                j->newsize = fpsma_shrink_one(j, need, j->spec.pref_nodes);
                need -= core_room_gain(plan.head, j, j->newsize);
            }
            if (need <= 0 && core_make_room(s, n, plan.head, false))
                return;
            core_reset_targets(s, n);
        }
        if (plan.extra < usable)
            usable = plan.extra;
    }
    for (int i = 0; i < n && usable > 0; i++) {
        sjob_t *j = s->tmp[i];
        if (j->ncommit >= j->spec.pref_nodes)
            continue;
        int top = j->ncommit + usable < j->spec.pref_nodes ? j->ncommit + usable : j->spec.pref_nodes;
        int v = cons_largest_leq(top, j->spec.constraint, j->ncommit + 1, j->spec.max_nodes);
        if (v) {
            usable -= v - j->ncommit;
            j->newsize = v;
            j->newwhy = SCHED_R_BELOW_PREFERRED;
        }
    }
    for (int i = 0; i < n && usable > 0; i++) {
        sjob_t *j = s->tmp[i];
        int v = cons_largest_leq(j->newsize + usable, j->spec.constraint, j->newsize + 1,
                                 j->spec.max_nodes);
        if (v) {
            usable -= v - j->newsize;
            j->newsize = v;
        }
    }
    core_apply_targets(s, n, SCHED_R_IDLE_NODES, SCHED_R_MAKE_ROOM, -1);
}

const sched_policy_t policy_dmr = {
    .name = "dmr",
    .summary = "seed 004: grow below preferred, shrink towards preferred for waiting jobs",
    .params = (const sched_param_def_t[]){{0}},
    .needs_end_order = true,
    .pass = pass,
};
