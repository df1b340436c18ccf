/* EGS, "equi-grow shrink" (seed 000 Algorithm 3, seed 002 §4.2.2.2): idle nodes are
 * split equally over the eligible running malleable jobs, the remainder one node
 * each to the earliest started; a waiting job's need is taken equally, the remainder
 * one node each from the latest started, and if any eligible job cannot give its
 * share without going below its minimum, nothing is shrunk. Node constraints are
 * ignored, as in the seeds. The printed ceil() + remainder over-allocates; we use
 * floor() + remainder (docs/policies.md). */
#include "policies.h"

static bool can_grow(const sched_t *s, const sjob_t *j, double guard, int max_expand)
{
    return j->newsize < j->spec.max_nodes && core_remaining(s, j) > guard &&
           !(max_expand > 0 && j->expansions >= max_expand);
}

static void grow(sched_t *s, int n, double guard, int max_expand)
{
    int idle = s->nfree;
    /* Rounds: jobs that reach their maximum drop out and the rest share again. */
    while (idle > 0) {
        int k = 0;
        for (int i = 0; i < n; i++)
            k += can_grow(s, s->tmp[i], guard, max_expand);
        if (k == 0)
            break;
        int share = idle / k, bonus = idle % k, given = 0;
        for (int i = 0; i < n; i++) {
            sjob_t *j = s->tmp[i];
            if (!can_grow(s, j, guard, max_expand))
                continue;
            int want = share + (bonus > 0);
            if (bonus > 0)
                bonus--;
            int room = j->spec.max_nodes - j->newsize;
            int g = want < room ? want : room;
            j->newsize += g;
            given += g;
        }
        idle -= given;
        if (given == 0)
            break;
    }
}

static int shrink(sched_t *s, int n, int need, double guard)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        const sjob_t *j = s->tmp[i];
        k += j->ncommit > j->spec.min_nodes && core_remaining(s, j) > guard;
    }
    if (k == 0)
        return need;
    int share = need / k, rest = need % k;
    /* Latest started first: they give the remainder. */
    for (int i = n - 1; i >= 0; i--) {
        sjob_t *j = s->tmp[i];
        if (j->ncommit <= j->spec.min_nodes || core_remaining(s, j) <= guard)
            continue;
        int give = share + (rest > 0);
        if (rest > 0)
            rest--;
        if (j->ncommit - give < j->spec.min_nodes) {
            core_reset_targets(s, n);
            return need;
        }
        j->newsize = j->ncommit - give;
    }
    return 0;
}

const mm_ops_t mm_egs = {.grow = grow, .shrink = shrink};

static void pass_prma(sched_t *s) { jmp_pass(s, &mm_egs, false); }
static void pass_pwma(sched_t *s) { jmp_pass(s, &mm_egs, true); }

#define GUARD_PARAM {"guard", 60, 0, 1e9, "no resize when a job has this many seconds left or fewer"}

const sched_policy_t policy_egs_prma = {
    .name = "egs-prma",
    .summary = "seed 000: split idle nodes equally over running malleable jobs; never shrink",
    .params = (const sched_param_def_t[]){GUARD_PARAM,
                                          {"max_expand", 2, 0, 1e9,
                                           "expansions per job at most (0: unlimited)"},
                                          {0}},
    .pass = pass_prma,
};

const sched_policy_t policy_egs_pwma = {
    .name = "egs-pwma",
    .summary = "seed 000: take a waiting job's nodes equally from running jobs, else grow",
    .params = (const sched_param_def_t[]){GUARD_PARAM,
                                          {"max_expand", 0, 0, 1e9,
                                           "expansions per job at most (0: unlimited)"},
                                          {0}},
    .pass = pass_pwma,
};
