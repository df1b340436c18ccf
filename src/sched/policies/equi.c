/* equi: equipartitioning, the classic baseline (McCann, Vaswani, Zahorjan 1993): the
 * nodes not held by rigid jobs are split into equal shares among the running
 * malleable jobs, each kept within its [min, max] and constraint. Jobs start in strict
 * priority order; if the first waiting job does not fit, its nodes are set aside
 * first when the malleable jobs can make room for it at their minimum sizes. Unlike
 * EGS, one decision may shrink some jobs and grow others: shrinks go out first and
 * the growth follows in a later pass, once the released nodes are free. */
#include "policies.h"

static bool fixed(const sched_t *s, const sjob_t *j, double guard)
{
    return core_remaining(s, j) <= guard;
}

static void pass(sched_t *s)
{
    double guard = s->params[0];
    sjob_t *head = core_pass_fcfs(s, false);
    int n = core_begin_resizes(s);
    if (n == 0)
        return;
    int pool = s->nfree, summin = 0, k = 0;
    for (int i = 0; i < n; i++) {
        sjob_t *j = s->tmp[i];
        if (fixed(s, j, guard))
            continue;
        pool += j->ncommit;
        summin += j->spec.min_nodes;
        j->newsize = 0; /* undecided */
        k++;
    }
    if (k == 0)
        return;
    int64_t for_job = -1;
    /* a masked job's nodes are not any nodes: it waits for its own (nodes set aside
     * from growth, nodesel.c) rather than for shares taken from anyone */
    if (head && !core_masked(s, head)) {
        int need = core_min_start(head, false);
        if (pool - need >= summin) {
            pool -= need;
            for_job = head->spec.id;
        }
    }
    /* Water-filling: jobs whose bound binds take it; the rest share what is left. */
    for (;;) {
        int left = 0, open = 0;
        for (int i = 0; i < n; i++) {
            sjob_t *j = s->tmp[i];
            if (fixed(s, j, guard))
                continue;
            if (j->newsize)
                left += j->newsize;
            else
                open++;
        }
        if (open == 0)
            break;
        int avail = pool - left, share = avail / open;
        bool changed = false;
        for (int i = 0; i < n; i++) {
            sjob_t *j = s->tmp[i];
            if (fixed(s, j, guard) || j->newsize)
                continue;
            if (j->spec.max_nodes <= share) {
                j->newsize = j->spec.max_nodes;
                changed = true;
            } else if (j->spec.min_nodes >= share) {
                j->newsize = j->spec.min_nodes;
                changed = true;
            }
        }
        if (changed)
            continue;
        int bonus = avail % open;
        for (int i = 0; i < n; i++) {
            sjob_t *j = s->tmp[i];
            if (fixed(s, j, guard) || j->newsize)
                continue;
            j->newsize = share + (bonus > 0);
            if (bonus > 0)
                bonus--;
        }
        break;
    }
    bool any_shrink = false;
    for (int i = 0; i < n; i++) {
        sjob_t *j = s->tmp[i];
        if (fixed(s, j, guard)) {
            j->newsize = j->ncommit;
            continue;
        }
        int v = cons_largest_leq(j->newsize, j->spec.constraint, j->spec.min_nodes,
                                 j->spec.max_nodes);
        if (!v)
            v = cons_smallest_geq(j->spec.min_nodes, j->spec.constraint, j->spec.min_nodes,
                                  j->spec.max_nodes);
        j->newsize = v;
        any_shrink |= v < j->ncommit;
    }
    if (any_shrink) {
        /* Shrinks first; growth waits for the released nodes. */
        for (int i = 0; i < n; i++)
            if (s->tmp[i]->newsize > s->tmp[i]->ncommit)
                s->tmp[i]->newsize = s->tmp[i]->ncommit;
        core_apply_targets(s, n, SCHED_R_EQUAL_SHARE,
                           for_job >= 0 ? SCHED_R_MAKE_ROOM : SCHED_R_EQUAL_SHARE, for_job);
        if (for_job >= 0)
            head->reason = SCHED_R_RESIZE_PENDING;
        return;
    }
    core_apply_targets(s, n, SCHED_R_EQUAL_SHARE, SCHED_R_EQUAL_SHARE, -1);
}

const sched_policy_t policy_equi = {
    .name = "equi",
    .summary = "equipartitioning: equal shares of the nodes for running malleable jobs",
    .params = (const sched_param_def_t[]){
        SCHED_PARAM_GUARD(0),
        {0}},
    .pass = pass,
};
