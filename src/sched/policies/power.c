/* power: the power-aware scheduler of seed 002 §5.2 (Algorithm 4) on EASY backfilling.
 *
 * When the predicted draw is outside the corridor and no job is adapting, the
 * node-redistribution model (src/sched/power.c) is solved over the running jobs and,
 * in priority order, each of the first `waiting` waiting jobs; the first solution
 * inside the corridor is carried out: the shrinks, then the waiting job's start (or it
 * waits for the shrunk nodes, ResizePending), then the expands. Without one, the
 * model over the running jobs alone, or failing that its closest solution if that is
 * nearer the corridor than now. Jobs start by EASY backfilling, each only if its draw
 * keeps the prediction below the upper bound (admit); a moldable or malleable job may
 * start smaller to fit. Then idle nodes go to running malleable jobs as far as the
 * corridor allows, without delaying the reserved job (fill).
 *
 * waiting=0 admit=0 fill=0 is seed 002's "power-corridor runtime" (§9.2.4 scenario 2):
 * running jobs are resized on a violation, jobs start whenever nodes are free. */
#include <math.h>

#include "policies.h"

#define EPS 1e-6

static double outside(const sched_t *s)
{
    return (s->pw_lo < s->pw_lower ? s->pw_lower - s->pw_lo : 0) +
           (s->pw_hi > s->pw_upper ? s->pw_hi - s->pw_upper : 0);
}

/* The plan in newsize (s->tmp) and cand: shrinks, the start, then expands. */
static void carry_out(sched_t *s, int n, sjob_t *cand, int cand_size)
{
    bool shrunk = false;
    for (int i = 0; i < n; i++) {
        sjob_t *j = s->tmp[i];
        if (j->newsize < j->ncommit && !core_resize_held(s, j, j->newsize)) {
            core_shrink(s, j, j->newsize, SCHED_R_POWER_CORRIDOR, cand ? cand->spec.id : -1);
            shrunk = true;
        }
    }
    /* A shrinking job draws on its leaving nodes until it is done: the expands (and
     * the waiting job's start) would take the draw above the plan meanwhile. They
     * follow in the pass after the shrinks, which solves again from there. */
    if (shrunk) {
        if (cand)
            cand->reason = SCHED_R_RESIZE_PENDING;
        return;
    }
    if (cand) {
        if (cand_size <= s->nfree)
            core_start(s, cand, cand_size, SCHED_R_POWER_CORRIDOR);
        else
            cand->reason = SCHED_R_RESIZE_PENDING;
    }
    core_apply_targets(s, n, SCHED_R_POWER_CORRIDOR, SCHED_R_POWER_CORRIDOR, -1);
}

static void redistribute(sched_t *s, int ncand)
{
    int n = core_collect_resizable(s, false);
    if (n == 0)
        return;
    sched_power_solution_t sol;
    int tried = 0, m = 0;
    for (sjob_t *j = s->qhead; j && tried < ncand; j = j->qnext) {
        if (core_unrunnable(s, j, true))
            continue;
        tried++;
        core_reset_targets(s, n);
        if (core_power_plan(s, j, 0, &m, &sol) == 0 && sol.status == SCHED_POWER_INSIDE) {
            carry_out(s, n, j, m);
            return;
        }
    }
    core_reset_targets(s, n);
    if (core_power_plan(s, NULL, 0, NULL, &sol) < 0 || sol.status == SCHED_POWER_NONE)
        return;
    s->pw_unreachable = sol.status != SCHED_POWER_INSIDE;
    s->pw_closest = sol.status == SCHED_POWER_INSIDE ? 0 : sol.outside;
    if (sol.moved == 0)
        return;
    /* the closest solution only if it is nearer than where the draw is now */
    if (sol.status == SCHED_POWER_INSIDE || sol.outside < outside(s) - 0.5)
        carry_out(s, n, NULL, 0);
}

static void fill(sched_t *s, const easy_plan_t *plan)
{
    int n = core_collect_resizable(s, false), room = 0;
    for (int i = 0; i < n; i++)
        room += s->tmp[i]->ncommit < s->tmp[i]->spec.max_nodes;
    if (room == 0)
        return; /* every resizable job is at its maximum: no solve can fill anything */
    int extra = plan->head ? (plan->extra < s->nfree ? plan->extra : s->nfree) : s->nfree;
    if (extra <= 0)
        return;
    sched_power_solution_t sol;
    if (core_power_plan(s, NULL, s->nfree - extra, NULL, &sol) == 0 &&
        sol.status == SCHED_POWER_INSIDE && sol.idle < s->nfree)
        carry_out(s, n, NULL, 0);
}

static void pass(sched_t *s)
{
    s->power_admit = s->params[1] != 0; /* admit= is this policy's power= */
    bool broken = s->pw_lo < s->pw_lower - EPS || s->pw_hi > s->pw_upper + EPS;
    if (!broken)
        s->pw_unreachable = false;
    if (broken && s->nresizing == 0)
        redistribute(s, (int)s->params[0]);
    easy_plan_t plan;
    core_pass_easy(s, false, &plan);
    if (s->params[2] != 0 && s->nresizing == 0 && s->nfree > 0 && outside(s) <= EPS)
        fill(s, &plan);
}

const sched_policy_t policy_power = {
    .name = "power",
    .summary = "seed 002: keep the draw inside the power corridor by resizing and admission",
    .params = (const sched_param_def_t[]){{"waiting", 2, 0, 16,
                                           "waiting jobs tried in the model when the corridor "
                                           "is broken (0: running jobs only)", true},
                                          {"admit", 1, 0, 1,
                                           "1: a job starts only if its draw fits the corridor",
                                           true},
                                          {"fill", 1, 0, 1,
                                           "1: idle nodes go to malleable jobs within the "
                                           "corridor", true},
                                          {0}},
    .needs_end_order = true,
    .uses_power = true,
    .pass = pass,
};
