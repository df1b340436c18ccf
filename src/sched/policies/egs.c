/* EGS, "equi-grow shrink" (seed 000 Algorithm 3, seed 002 §4.2.2.2): idle nodes are
 * split equally over the eligible running malleable jobs, the remainder one node
 * each to the earliest started; a waiting job's need is taken equally, the remainder
 * one node each from the latest started, and if any eligible job cannot give its
 * share without going below its minimum, nothing is shrunk. The printed ceil() +
 * remainder over-allocates; we use floor() + remainder (docs/policies.md).
 *
 * The seeds' EGS ignores node constraints. A job that declares one would crash on
 * another size, so by default sizes are rounded to the constraint (a grow to the
 * largest valid size within the share, a shrink to the largest valid size that gives
 * at least the share); constraints=0 reproduces the seeds' behaviour. */
#include <stdlib.h>

#include "policies.h"

static sched_constraint_t cons_of(const sched_t *s, const sjob_t *j)
{
    return s->params[2] != 0 ? j->spec.constraint : SCHED_CONS_NONE;
}

static bool can_grow(const sched_t *s, const sjob_t *j, double guard, int max_expand)
{
    return j->newsize < j->spec.max_nodes && core_remaining(s, j) > guard &&
           !(max_expand > 0 && j->expansions >= max_expand);
}

static void grow(sched_t *s, int n, double guard, int max_expand)
{
    int idle = s->nfree;
    bool *out = calloc((size_t)n, sizeof(bool)); /* jobs that can take no more */
    if (!out)
        return;
    /* Rounds: jobs that reach their maximum drop out and the rest share again. */
    while (idle > 0) {
        int k = 0;
        for (int i = 0; i < n; i++)
            k += !out[i] && can_grow(s, s->tmp[i], guard, max_expand);
        if (k == 0)
            break;
        int share = idle / k, bonus = idle % k, given = 0;
        for (int i = 0; i < n; i++) {
            sjob_t *j = s->tmp[i];
            if (out[i] || !can_grow(s, j, guard, max_expand))
                continue;
            int want = share + (bonus > 0);
            if (bonus > 0)
                bonus--;
            int v = cons_largest_leq(j->newsize + want, cons_of(s, j), j->newsize + 1,
                                     j->spec.max_nodes);
            if (!v) {
                out[i] = true;
                continue;
            }
            given += v - j->newsize;
            j->newsize = v;
        }
        idle -= given;
        if (given == 0 && share == 0)
            break; /* the remainder fits no one's next valid size */
    }
    free(out);
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
    int share = need / k, rest = need % k, left = need;
    /* Latest started first: they give the remainder. */
    for (int i = n - 1; i >= 0; i--) {
        sjob_t *j = s->tmp[i];
        if (j->ncommit <= j->spec.min_nodes || core_remaining(s, j) <= guard)
            continue;
        int give = share + (rest > 0);
        if (rest > 0)
            rest--;
        if (give == 0)
            continue;
        int v = cons_largest_leq(j->ncommit - give, cons_of(s, j), j->spec.min_nodes,
                                 j->ncommit - 1);
        if (!v) {
            core_reset_targets(s, n);
            return need;
        }
        j->newsize = v;
        left -= j->ncommit - v;
    }
    return left > 0 ? left : 0;
}

const mm_ops_t mm_egs = {.grow = grow, .shrink = shrink};

static void pass_prma(sched_t *s) { jmp_pass(s, &mm_egs, false); }
static void pass_pwma(sched_t *s) { jmp_pass(s, &mm_egs, true); }

#define CONS_PARAM \
    {"constraints", 1, 0, 1, "1: respect node constraints; 0: ignore them (seeds)", true}

const sched_policy_t policy_egs_prma = {
    .name = "egs-prma",
    .summary = "seed 000: split idle nodes equally over running malleable jobs; never shrink",
    .params = (const sched_param_def_t[]){SCHED_PARAM_GUARD(60),
                                          {"max_expand", 2, 0, 1e9,
                                           "expansions per job at most (0: unlimited)", true},
                                          CONS_PARAM,
                                          {0}},
    .pass = pass_prma,
};

const sched_policy_t policy_egs_pwma = {
    .name = "egs-pwma",
    .summary = "seed 000: take a waiting job's nodes equally from running jobs, else grow",
    .params = (const sched_param_def_t[]){SCHED_PARAM_GUARD(60),
                                          {"max_expand", 0, 0, 1e9,
                                           "expansions per job at most (0: unlimited)", true},
                                          CONS_PARAM,
                                          {0}},
    .pass = pass_pwma,
};
