/* conservative: conservative backfilling. Every waiting job gets a reservation in
 * priority order; a job starts now only where that delays no earlier reservation.
 * Reservations are recomputed on every pass (jobs ending early move them forward,
 * never back), for the first `depth` of them (Slurm's bf_max_job_test plays that
 * part). */
#include "policies.h"

static void pass(sched_t *s) { core_pass_conservative(s, (int)s->params[0]); }

const sched_policy_t policy_conservative = {
    .name = "conservative",
    .summary = "conservative backfilling: a reservation for every waiting job",
    .params = (const sched_param_def_t[]){SCHED_PARAM_DEPTH, {0}},
    .needs_end_order = true,
    .pass = pass,
};
