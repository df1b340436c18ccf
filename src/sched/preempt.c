/* Preemption (docs/partitions.md, "Preemption"): a waiting job that may preempt (its
 * partition's PreemptMode=REQUEUE) and that the policy could not start takes nodes from
 * running jobs of a lower tier: a malleable one is shrunk towards its minimum, another
 * that may run again later is stopped to wait again (SCHED_OP_INTERRUPT, reason
 * Preempted). Lowest tier first, then the latest started; all or nothing: no job gives
 * up nodes unless, with the free ones, they start the waiting job. One preemption at a
 * time: none while a resize or a stop is under way. */
#include <stdlib.h>

#include "sched_internal.h"

/* The nodes of victim that preempting it gives j, and the size it keeps (0: stopped). */
static int gain_of(const sjob_t *j, const sjob_t *v, int *keep)
{
    /* a malleable job gives nodes back by a shrink (to its smallest valid size) rather
     * than stop */
    if (core_resizable(v) && v->ncommit > v->spec.min_nodes) {
        int to = cons_smallest_geq(v->spec.min_nodes, v->spec.constraint, v->spec.min_nodes,
                                   v->ncommit - 1);
        if (to > 0 && to < v->ncommit) {
            *keep = to;
            return core_room_gain(j, v, to);
        }
    }
    if (v->spec.no_interrupt)
        return 0;
    *keep = 0;
    return core_room_gain(j, v, 0);
}

static int victim_order(const void *a, const void *b)
{
    const sjob_t *x = *(sjob_t *const *)a, *y = *(sjob_t *const *)b;
    if (x->spec.tier != y->spec.tier)
        return x->spec.tier < y->spec.tier ? -1 : 1;
    if (x->start != y->start)
        return x->start > y->start ? -1 : 1; /* the latest started first */
    return x->spec.id > y->spec.id ? -1 : 1;
}

void preempt_pass(sched_t *s)
{
    if (!s->npreempt || s->nresizing || s->nstopping || !s->rhead)
        return;
    sjob_t *j = s->qhead;
    while (j && !(j->spec.preempt && j->spec.tier > 0))
        j = j->qnext;
    if (!j || core_unrunnable(s, j, false))
        return;
    int need = core_room_need(s, j, false);
    if (need <= 0)
        return; /* its nodes are free: the next pass starts it */
    core_tmp_reserve(s, (size_t)s->nrunning + 1);
    int n = 0;
    for (sjob_t *r = s->rhead; r; r = r->rnext)
        if (r->state == SCHED_RUNNING && r->spec.tier < j->spec.tier)
            s->tmp[n++] = r;
    qsort(s->tmp, (size_t)n, sizeof(*s->tmp), victim_order);
    int got = 0, k = 0;
    for (; k < n && got < need; k++) {
        int keep;
        s->tmp[k]->newsize = -1;
        int g = gain_of(j, s->tmp[k], &keep);
        if (g > 0) {
            s->tmp[k]->newsize = keep;
            got += g;
        }
    }
    if (got < need)
        return; /* all or nothing */
    for (int i = 0; i < k; i++) {
        sjob_t *v = s->tmp[i];
        if (v->newsize > 0)
            core_shrink(s, v, v->newsize, SCHED_R_PREEMPTED, j->spec.id);
        else if (v->newsize == 0)
            core_interrupt(s, v, j->spec.id, SCHED_R_PREEMPTED);
    }
    j->reason = SCHED_R_PREEMPTING;
    j->reason_job = -1;
}
