/* sfsj: conservative backfilling with node stealing (seed 003 §3.1.4, Du, Marchal,
 * Pallez and Robert's "smallest first, submitted last job").
 *
 * Every policy requeues a job that lost a node to a failure ahead of all others
 * (class FAILED: seed 003's BASELINE, which is `conservative`). This one adds the
 * steal: when such a job cannot restart at once for want of free nodes, running jobs
 * with fewer nodes than it are stopped and their nodes go to it, so that it restarts
 * now. The victims are taken by fewest nodes, then latest submitted (tiebreak=0) or
 * latest started, i.e. the shortest run so far (tiebreak=1, the rule of §3.1's
 * contribution list); a victim waits again in class INTERRUPTED, after the failed
 * jobs and before everyone else. Choices where the seed is silent (docs/policies.md):
 *   - the trigger is "not enough free nodes to restart it now", as the toy example
 *     shows (five nodes were free there, the failed job needed six);
 *   - a stopped victim frees all its nodes; when one victim is not enough, the next
 *     ones in the same order are taken too, and none is stopped unless together they
 *     cover the need;
 *   - the steal is considered once, when the failure happens;
 *   - malleable=1 (the seed's next step): running malleable jobs give nodes by a
 *     shrink, down to their minimum, before any job is stopped; any of them may give,
 *     not only the smaller ones, as a shrink only slows them down. The failed job
 *     waits for those shrinks and nothing else starts meanwhile, so that no
 *     backfilled job takes the nodes it was given. */
#include <stdlib.h>

#include "policies.h"

enum { P_TIEBREAK, P_MALLEABLE, P_DEPTH };

/* Fewest nodes first, then the largest key (submission or start time), then the
 * largest id (the later in queue order). */
static int victim_order(const void *a, const void *b)
{
    const sjob_t *x = *(sjob_t *const *)a, *y = *(sjob_t *const *)b;
    if (x->ncommit != y->ncommit)
        return x->ncommit < y->ncommit ? -1 : 1;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return x->spec.id > y->spec.id ? -1 : 1;
}

/* The nodes of j that are up and that f may use (all of them: f is not masked). */
static int nodes_up(const sched_t *s, const sjob_t *j, const sjob_t *f)
{
    int n = 0;
    for (int i = 0; i < j->nalloc; i++)
        n += nodeset_test(s->avail, j->nodes[i]) &&
             (!f->allowed || nodeset_test(f->allowed, j->nodes[i]));
    return n;
}

/* Can j give nodes by a shrink (malleable=1)? */
static bool can_give(const sjob_t *j, bool shrink_malleable)
{
    return shrink_malleable && core_resizable(j) && j->ncommit > j->spec.min_nodes;
}

/* Nodes for the failed job f from the victims, or nothing at all. With malleable=1 the
 * malleable jobs that can shrink come first, whatever their size (a shrink only slows
 * them down), then the jobs to interrupt, each group in the victim order. */
static void steal(sched_t *s, sjob_t *f, int *claimed)
{
    f->steal_due = false;
    int need = core_min_start(f, false), mine = core_free_for(s, f);
    int avail = mine - *claimed > 0 ? mine - *claimed : 0;
    if (core_unrunnable(s, f, false))
        return;
    if (avail >= need) {
        *claimed += need;
        return;
    }
    bool latest_start = s->params[P_TIEBREAK] > 0.5;
    bool shrink_malleable = s->params[P_MALLEABLE] > 0.5;
    core_tmp_reserve(s, (size_t)s->nrunning + 1);
    int n = 0, nshrink = 0;
    for (int pass = 0; pass < 2; pass++) {
        int from = n;
        for (sjob_t *j = s->rhead; j; j = j->rnext) {
            if (j->state != SCHED_RUNNING || can_give(j, shrink_malleable) != (pass == 0))
                continue;
            if (pass == 1 && (j->ncommit >= need || j->spec.no_interrupt))
                continue;
            if (core_masked(s, f) && !nodes_up(s, j, f))
                continue; /* none of its nodes would serve f: it is not stopped for it */
            j->key = latest_start ? j->start : j->spec.submit;
            s->tmp[n++] = j;
        }
        qsort(s->tmp + from, (size_t)(n - from), sizeof(sjob_t *), victim_order);
        if (pass == 0)
            nshrink = n;
    }
    int got = avail, k = 0;
    for (; k < n && got < need; k++) {
        sjob_t *v = s->tmp[k];
        v->newsize = 0;
        if (k < nshrink) {
            int size = cons_largest_leq(v->ncommit - (need - got), v->spec.constraint,
                                        v->spec.min_nodes, v->ncommit - 1);
            if (!size) /* it cannot give all that is missing: as much as it can */
                size = cons_largest_leq(v->spec.min_nodes, v->spec.constraint,
                                        v->spec.min_nodes, v->ncommit - 1);
            if (size) {
                v->newsize = size;
                got += core_room_gain(f, v, size);
            }
            continue;
        }
        got += nodes_up(s, v, f);
    }
    if (got < need)
        return;
    *claimed += need;
    for (int i = 0; i < k; i++) {
        sjob_t *v = s->tmp[i];
        if (v->newsize) {
            core_shrink(s, v, v->newsize, SCHED_R_STOLEN, f->spec.id);
            f->steal_wait = true;
            f->reason = SCHED_R_RESIZE_PENDING;
        } else if (i >= nshrink) {
            core_interrupt(s, v, f->spec.id, SCHED_R_STOLEN);
            f->steal_wait = true;
            f->reason = SCHED_R_RESOURCES;
        }
    }
}

static void pass(sched_t *s)
{
    sjob_t *next;
    int claimed = 0;
    for (sjob_t *j = s->qhead; j && j->cls == SCHED_CLASS_FAILED; j = next) {
        next = j->qnext;
        if (j->steal_due)
            steal(s, j, &claimed);
        else if (!j->steal_wait && s->nfree - claimed >= core_min_start(j, false))
            claimed += core_min_start(j, false);
    }
    /* A failed job waiting for the shrinks or stops that give it nodes: nothing starts
     * before it (their nodes come free one by one, as the caller carries them out). */
    bool waiting = s->nstopping > 0 && s->qhead && s->qhead->cls == SCHED_CLASS_FAILED;
    for (sjob_t *j = s->qhead; j && j->cls == SCHED_CLASS_FAILED; j = j->qnext)
        if (j->steal_wait) {
            if (s->nresizing > 0 || s->nstopping > 0)
                waiting = true;
            else {
                j->steal_wait = false;
                j->steal_due = s->nfree < core_min_start(j, false); /* a shrink declined */
            }
        }
    if (!waiting)
        core_pass_conservative(s, (int)s->params[P_DEPTH]);
}

const sched_policy_t policy_sfsj = {
    .name = "sfsj",
    .summary = "conservative backfilling; a job that lost a node to a failure restarts at once "
               "on nodes taken from smaller jobs (node stealing, seed 003)",
    .params =
        (const sched_param_def_t[]){
            {"tiebreak", 0, 0, 1,
             "among victims of one size: 0 the latest submitted, 1 the latest started", true},
            {"malleable", 0, 0, 1,
             "1: malleable jobs of any size shrink first, down to their minimum, before any "
             "job is stopped",
             true},
            SCHED_PARAM_DEPTH,
            {0}},
    .needs_end_order = true,
    .pass = pass,
};
