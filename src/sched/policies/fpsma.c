/* FPSMA, "favour previously started malleable applications" (seed 000 Algorithm 2,
 * seed 002 Algorithm 2): grow the earliest-started jobs first, shrink the
 * latest-started first. Sizes respect min, max and the node constraint; a job with
 * no more than `guard` seconds left is neither grown nor shrunk.
 *
 * The printed pseudocode uses one variable both as the new size and as the change;
 * here targets are sizes and the pools move by the difference (docs/policies.md). */
#include "policies.h"

int fpsma_grow_one(const sjob_t *j, int idle)
{
    int cur = j->ncommit;
    int v = cons_largest_leq(cur + idle, j->spec.constraint, cur + 1, j->spec.max_nodes);
    return v ? v : cur;
}

int fpsma_shrink_one(const sjob_t *j, int need, int floor_nodes)
{
    int cur = j->ncommit;
    if (cur <= floor_nodes)
        return cur;
    /* Give exactly what is needed if a valid size allows it, else the most we can. */
    int v = cons_largest_leq(cur - need, j->spec.constraint, floor_nodes, cur - 1);
    if (!v)
        v = cons_smallest_geq(floor_nodes, j->spec.constraint, floor_nodes, cur - 1);
    return v ? v : cur;
}

static void grow(sched_t *s, int n, double guard, int max_expand)
{
    int idle = s->nfree;
    for (int i = 0; i < n && idle > 0; i++) {
        sjob_t *j = s->tmp[i];
        if (j->ncommit >= j->spec.max_nodes || core_remaining(s, j) <= guard)
            continue;
        if (max_expand > 0 && j->expansions >= max_expand)
            continue;
        j->newsize = fpsma_grow_one(j, idle);
        idle -= j->newsize - j->ncommit;
    }
}

static int shrink(sched_t *s, int n, int need, double guard)
{
    for (int i = n - 1; i >= 0 && need > 0; i--) {
        sjob_t *j = s->tmp[i];
        if (core_remaining(s, j) <= guard)
            continue;
        j->newsize = fpsma_shrink_one(j, need, j->spec.min_nodes);
        need -= j->ncommit - j->newsize;
    }
    if (need > 0)
        core_reset_targets(s, n);
    return need;
}

const mm_ops_t mm_fpsma = {.grow = grow, .shrink = shrink};

static void pass_prma(sched_t *s) { jmp_pass(s, &mm_fpsma, false); }
static void pass_pwma(sched_t *s) { jmp_pass(s, &mm_fpsma, true); }


const sched_policy_t policy_fpsma_prma = {
    .name = "fpsma-prma",
    .summary = "seed 000: grow earliest-started malleable jobs; never shrink",
    .params = (const sched_param_def_t[]){SCHED_PARAM_GUARD(60),
                                          {"max_expand", 2, 0, 1e9,
                                           "expansions per job at most (0: unlimited)", true},
                                          {0}},
    .pass = pass_prma,
};

const sched_policy_t policy_fpsma_pwma = {
    .name = "fpsma-pwma",
    .summary = "seed 000: shrink latest-started jobs to start the waiting job, else grow",
    .params = (const sched_param_def_t[]){SCHED_PARAM_GUARD(60),
                                          {"max_expand", 0, 0, 1e9,
                                           "expansions per job at most (0: unlimited)", true},
                                          {0}},
    .pass = pass_pwma,
};
