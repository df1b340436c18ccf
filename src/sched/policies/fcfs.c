/* fcfs: strict priority order (submit time, then id). Nothing passes a job that
 * does not fit. Malleable jobs run at their requested size. */
#include "policies.h"

static void pass(sched_t *s) { core_pass_fcfs(s, false); }

const sched_policy_t policy_fcfs = {
    .name = "fcfs",
    .summary = "first come, first served; strict order, no backfilling",
    .params = (const sched_param_def_t[]){{0}},
    .pass = pass,
};
