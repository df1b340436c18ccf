/* The node-redistribution model of seed 002 §5.1.1 (Eq. 5.3), solved as a mixed-integer
 * program with GLPK: which size each running malleable job (and optionally one waiting
 * job) should have so that the cluster's power draw stays inside a corridor
 * [lower, upper], with as few idle nodes as possible.
 *
 * The printed model is fixed as docs/power.md explains: per-node powers throughout;
 * the nodes sum to N (variable jobs + fixed jobs + idle = N); sizes are integers that
 * respect each job's node constraint (pof2, even, ...) and its [min, max], at least one
 * node per job; 0 <= idle <= N (not strict). Rigid and other fixed jobs are constants.
 * The lower bound is checked with every job's minimum power per node and the upper
 * with its maximum, so the answer holds however the jobs' draw moves between the two.
 *
 * Among the solutions with the fewest idle nodes it picks the one that moves the
 * fewest nodes (sum of |new - current| sizes; for the waiting job, |size - requested|),
 * so the answer is deterministic and resizes no job it need not. When no size vector
 * keeps the draw inside the corridor, it returns the closest one instead (least watts
 * outside, then the same two criteria) and says so. */
#ifndef DUCTILE_SCHED_POWER_H
#define DUCTILE_SCHED_POWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched.h"

typedef struct sched_power_job {
    int64_t id;
    bool fixed;          /* a constant: rigid, or not resizable now */
    int nodes;           /* current size (a waiting job: requested size) */
    int min_nodes, max_nodes; /* variable jobs: allowed sizes */
    sched_constraint_t constraint;
    double p_min, p_max; /* W per node */
} sched_power_job_t;

typedef struct sched_power_problem {
    int nnodes;          /* N: the nodes in play (up, not drained) */
    double p_idle;       /* W per idle node */
    double lower, upper; /* the corridor, W (upper may be INFINITY, lower 0) */
    int min_idle;        /* keep at least this many nodes idle (a reservation) */
    const sched_power_job_t *jobs;
    int njobs;
} sched_power_problem_t;

typedef enum sched_power_status {
    SCHED_POWER_INSIDE = 0, /* a solution inside the corridor */
    SCHED_POWER_CLOSEST,    /* none exists: the closest one (least W outside) */
    SCHED_POWER_NONE,       /* no size vector at all (the jobs' sizes cannot fit N) */
} sched_power_status_t;

typedef struct sched_power_solution {
    sched_power_status_t status;
    int *sizes;          /* per job, the caller's array of njobs */
    int idle;
    double draw_lo, draw_hi; /* the draw with every job at p_min / p_max */
    double outside;      /* W outside the corridor (CLOSEST) */
    int moved;           /* nodes moved */
    bool proven;         /* optimal as the model says; false: a time limit stopped the
                          * search with the best solution it had (very large or very
                          * tight instances) */
} sched_power_solution_t;

/* Solves the model; sol->sizes must hold njobs ints. 0, or -EINVAL with a message for
 * a problem that makes no sense (negative powers, min > max, ...), -ENOMEM. */
int sched_power_solve(const sched_power_problem_t *p, sched_power_solution_t *sol, char *err,
                      size_t errlen);

/* The draw of a given size vector: lo with p_min, hi with p_max per node, idle nodes
 * being whatever the sizes leave of N. */
void sched_power_draw_of(const sched_power_problem_t *p, const int *sizes, double *lo,
                         double *hi);

#endif
