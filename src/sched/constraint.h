/* Node-count constraints (seed 000 §4.2, seed 002 §4.1): which sizes a job may have. */
#ifndef DUCTILE_SCHED_CONSTRAINT_H
#define DUCTILE_SCHED_CONSTRAINT_H

#include <stdbool.h>

#include "sched.h"

bool cons_valid(int n, sched_constraint_t c);
/* Largest valid v with lo <= v <= min(x, hi); 0 if there is none. */
int cons_largest_leq(int x, sched_constraint_t c, int lo, int hi);
/* Smallest valid v with max(x, lo) <= v <= hi; 0 if there is none. */
int cons_smallest_geq(int x, sched_constraint_t c, int lo, int hi);

#endif
