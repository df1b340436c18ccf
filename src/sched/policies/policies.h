/* Every policy the engine knows; policy.c lists them in its table. */
#ifndef DUCTILE_SCHED_POLICIES_H
#define DUCTILE_SCHED_POLICIES_H

#include "../sched_internal.h"

extern const sched_policy_t policy_fcfs;
extern const sched_policy_t policy_easy;
extern const sched_policy_t policy_conservative;
extern const sched_policy_t policy_fpsma_prma;
extern const sched_policy_t policy_fpsma_pwma;
extern const sched_policy_t policy_egs_prma;
extern const sched_policy_t policy_egs_pwma;
extern const sched_policy_t policy_perf;
extern const sched_policy_t policy_dmr;
extern const sched_policy_t policy_mebf;
extern const sched_policy_t policy_equi;
extern const sched_policy_t policy_power;
extern const sched_policy_t policy_sfsj;
extern const sched_policy_t policy_ioaware;
extern const sched_policy_t policy_elastic;

/* Job management (seed 000 §5.3.1): PRMA grows running malleable jobs with idle
 * nodes; PWMA first tries to shrink them to start the first waiting job and grows
 * only when that fails. A malleability policy supplies grow and shrink. */
typedef struct mm_ops {
    /* Set newsize for the n jobs in s->tmp (start order) from the idle nodes. */
    void (*grow)(sched_t *s, int n, double guard, int max_expand);
    /* Set newsize for the n jobs in s->tmp (start order) to free need nodes; returns
     * the nodes still missing (> 0: the attempt failed, newsize is reset). */
    int (*shrink)(sched_t *s, int n, int need, double guard);
} mm_ops_t;

void jmp_pass(sched_t *s, const mm_ops_t *mm, bool pwma);

extern const mm_ops_t mm_fpsma;
extern const mm_ops_t mm_egs;

/* FPSMA's needs-driven shrink of one job: the new size, or ncommit if it cannot give. */
int fpsma_shrink_one(const sjob_t *j, int need, int floor_nodes);
/* FPSMA's greedy grow of one job with idle nodes: the new size (ncommit if none). */
int fpsma_grow_one(const sjob_t *j, int idle);

#endif
