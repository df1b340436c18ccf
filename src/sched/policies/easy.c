/* easy: EASY backfilling. The first job that does not fit gets a reservation at the
 * shadow time (when enough running jobs will have ended, by their estimates); a later
 * job starts now if it ends by the shadow time or uses only the nodes the reserved
 * job will not need. */
#include "policies.h"

static void pass(sched_t *s)
{
    easy_plan_t plan;
    core_pass_easy(s, false, &plan);
}

const sched_policy_t policy_easy = {
    .name = "easy",
    .summary = "EASY backfilling: one reservation, backfill that never delays it",
    .params = (const sched_param_def_t[]){{0}},
    .needs_end_order = true,
    .pass = pass,
};
