/* The power model's first solver, a reference for test_power_model (power_ref.c). */
#ifndef DUCTILE_TESTS_POWER_REF_H
#define DUCTILE_TESTS_POWER_REF_H

#include <stdbool.h>

#include "sched/power.h"

/* The status and sizes of the first version's MIP; *proven: no time limit cut it. */
sched_power_status_t power_ref_solve(const sched_power_problem_t *p, int *sizes, bool *proven);

#endif
