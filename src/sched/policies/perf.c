/* perf: performance-aware scheduling with the MTCT ratio (MPI time to compute time;
 * seed 002 Algorithm 3, seed 000 §5.7 / Listing 6.5 for the thresholds).
 *   1. Start jobs in strict priority order.
 *   2. If the first waiting job does not fit, shrink running malleable jobs in
 *      decreasing MTCT order (least efficient first) until it fits; all or nothing.
 *   3. If that fails, jobs above the upper threshold give up one constraint step:
 *      their nodes are better used by the waiting job.
 *   4. Otherwise idle nodes go to jobs below the lower threshold, in increasing MTCT
 *      order (most efficient first), each as far as its maximum allows.
 * A job without an MTCT measurement keeps its size (seed 000 §5.7). A job that gave
 * nodes back for a high ratio is not grown again to the size where its ratio was
 * high: without that memory it would take back at once the nodes it released (a
 * job's ratio is only known at its current size). */
#include <math.h>

#include "policies.h"

static int by_mtct_desc(const void *a, const void *b)
{
    const sjob_t *x = *(sjob_t *const *)a, *y = *(sjob_t *const *)b;
    if (x->mtct != y->mtct)
        return x->mtct < y->mtct ? 1 : -1;
    return core_before(x, y) ? 1 : -1; /* latest started first */
}

static int by_mtct_asc(const void *a, const void *b)
{
    const sjob_t *x = *(sjob_t *const *)a, *y = *(sjob_t *const *)b;
    if (x->mtct != y->mtct)
        return x->mtct < y->mtct ? -1 : 1;
    return core_before(x, y) ? -1 : 1;
}

static void pass(sched_t *s)
{
    double lower = s->params[0], upper = s->params[1], guard = s->params[2];
    sjob_t *head = core_pass_fcfs(s, false);
    int n = core_begin_resizes(s);
    if (n == 0)
        return;
    if (head) {
        int need = core_room_need(s, head, false);
        core_sort_tmp(s, n, by_mtct_desc);
        for (int i = 0; i < n && need > 0; i++) {
            sjob_t *j = s->tmp[i];
            if (j->mtct < 0 || core_remaining(s, j) <= guard)
                continue;
            j->newsize = fpsma_shrink_one(j, need, j->spec.min_nodes);
            need -= core_room_gain(head, j, j->newsize);
        }
        if (need <= 0 && core_make_room(s, n, head, false))
            return;
        core_reset_targets(s, n);
        bool any = false;
        for (int i = 0; i < n; i++) {
            sjob_t *j = s->tmp[i];
            if (j->mtct <= upper || core_remaining(s, j) <= guard)
                continue;
            j->newsize = fpsma_shrink_one(j, 1, j->spec.min_nodes);
            if (j->newsize < j->ncommit) {
                any = true;
                j->grow_ceiling = j->ncommit - 1;
            }
        }
        if (any) {
            core_apply_targets(s, n, SCHED_R_IDLE_NODES, SCHED_R_INEFFICIENT, -1);
            return;
        }
    }
    if (s->nfree == 0)
        return;
    core_sort_tmp(s, n, by_mtct_asc);
    int idle = s->nfree;
    for (int i = 0; i < n && idle > 0; i++) {
        sjob_t *j = s->tmp[i];
        if (j->mtct < 0 || j->mtct >= lower || j->ncommit >= j->spec.max_nodes ||
            core_remaining(s, j) <= guard)
            continue;
        int top = j->grow_ceiling ? j->grow_ceiling : j->spec.max_nodes;
        int room = top - j->ncommit;
        if (room <= 0)
            continue;
        j->newsize = fpsma_grow_one(j, idle < room ? idle : room);
        idle -= j->newsize - j->ncommit;
    }
    core_apply_targets(s, n, SCHED_R_EFFICIENT, SCHED_R_MAKE_ROOM, -1);
}

const sched_policy_t policy_perf = {
    .name = "perf",
    .summary = "seed 002: shrink high-MTCT jobs for the waiting job, grow low-MTCT jobs",
    .params = (const sched_param_def_t[]){
        {"lower", 0.2, 0, 1e9, "grow only jobs whose MTCT is below this", false},
        {"upper", 0.6, 0, 1e9, "jobs above this give nodes back while a job waits", false},
        SCHED_PARAM_GUARD(60),
        {0}},
    .pass = pass,
};
