/* The power corridor in the engine (seed 002 ch. 5; docs/power.md): the predicted
 * draw, admission of starts against the upper bound, and the node-redistribution
 * model (power.c) set up from the engine's jobs for the `power` policy. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "idmap.h"
#include "power.h"
#include "sched_internal.h"

int sched_set_power(sched_t *s, double lower, double upper, double idle_w, double default_w,
                    char *err, size_t errlen)
{
    if (!(lower >= 0) || isinf(lower) || !(upper >= lower))
        return snprintf(err, errlen, "power corridor [%g, %g] W: need 0 <= lower <= upper",
                        lower, upper), -EINVAL;
    if (!(idle_w >= 0) || isinf(idle_w) || !(default_w >= 0) || isinf(default_w))
        return snprintf(err, errlen, "idle and default power must be finite W >= 0"), -EINVAL;
    s->pw_lower = lower;
    s->pw_upper = upper;
    s->pw_idle = idle_w;
    s->pw_default = default_w;
    return 0;
}

int sched_set_job_power(sched_t *s, int64_t id, double lo, double hi)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    if (!(lo >= 0) || !(hi >= lo) || isinf(hi))
        return -EINVAL;
    j->spec.power_min = lo;
    j->spec.power_max = hi;
    return 0;
}

void core_job_power(const sched_t *s, const sjob_t *j, double *lo, double *hi)
{
    double a = j->spec.power_min, b = j->spec.power_max;
    if (a <= 0 && b <= 0)
        a = b = s->pw_default;
    else if (a <= 0)
        a = b;
    else if (b <= 0)
        b = a;
    *lo = a;
    *hi = b;
}

bool sched_power_unreachable(const sched_t *s, double *outside)
{
    if (outside)
        *outside = s->pw_unreachable ? s->pw_closest : 0;
    return s->pw_unreachable;
}

void sched_power_estimate(const sched_t *s, double *lo, double *hi)
{
    double a = s->nfree * s->pw_idle, b = a;
    for (const sjob_t *j = s->rhead; j; j = j->rnext) {
        double pl, ph;
        core_job_power(s, j, &pl, &ph);
        a += j->nalloc * pl;
        b += j->nalloc * ph;
    }
    *lo = a;
    *hi = b;
}

int core_fit_now(sched_t *s, const sjob_t *j, int avail, bool flexible, sched_reason_t *why)
{
    *why = SCHED_R_RESOURCES;
    if (core_masked(s, j)) {
        int mine = core_can_start(s, j, 0) ? core_free_for(s, j) : 0;
        avail = mine < avail ? mine : avail;
    }
    int size = core_fit(j, avail, flexible);
    if (!size && j->lim_on && core_fit_nodes(j, avail, flexible)) {
        *why = lim_reason(j, core_min_start(j, flexible)); /* the nodes are there */
        return 0;
    }
    if (!s->power_admit || !size)
        return size;
    double pl, ph;
    core_job_power(s, j, &pl, &ph);
    double per = ph - s->pw_idle, room = s->pw_upper - s->pw_hi;
    if (per <= 0 || size * per <= room + 1e-9)
        return size;
    /* held for power: a moldable or malleable job may start smaller to fit */
    int m = room < 0 ? 0 : (int)floor((room + 1e-9) / per);
    int v = m > 0 ? cons_largest_leq(m, j->spec.constraint, core_min_start(j, true), size) : 0;
    if (!v)
        *why = SCHED_R_POWER;
    return v;
}

int core_power_plan(sched_t *s, sjob_t *cand, int min_idle, int *cand_size,
                    sched_power_solution_t *sol)
{
    int cap = s->nrunning + 1, k = 0, nodes = s->nfree;
    sched_power_job_t *pj = calloc((size_t)cap, sizeof(*pj));
    int *sizes = calloc((size_t)cap, sizeof(int));
    sjob_t **who = calloc((size_t)cap, sizeof(*who));
    if (!pj || !sizes || !who) {
        free(pj), free(sizes), free(who);
        return -ENOMEM;
    }
    /* the resizable jobs (s->tmp) vary within their limits; every other running job
     * (rigid, resizing, held by an operator or a back-off) is a constant */
    for (sjob_t *j = s->rhead; j; j = j->rnext) {
        bool var = core_resizable(j); /* = in s->tmp (core_collect_resizable) */
        if (var && (core_resize_held(s, j, j->ncommit + 1) || core_resize_held(s, j, j->ncommit - 1)))
            var = false;
        sched_power_job_t *x = &pj[k];
        x->id = j->spec.id;
        x->fixed = !var;
        x->nodes = var ? j->ncommit : j->nalloc;
        x->min_nodes = var ? j->spec.min_nodes : x->nodes;
        x->max_nodes = var ? j->spec.max_nodes : x->nodes;
        if (var && x->min_nodes > x->nodes)
            x->min_nodes = x->nodes;
        if (var && x->max_nodes < x->nodes)
            x->max_nodes = x->nodes;
        x->constraint = j->spec.constraint;
        core_job_power(s, j, &x->p_min, &x->p_max);
        nodes += j->nalloc;
        who[k++] = j;
    }
    if (cand) {
        sched_power_job_t *x = &pj[k];
        x->id = cand->spec.id;
        x->nodes = core_max_start(cand, true);
        x->min_nodes = core_min_start(cand, true);
        x->max_nodes = x->nodes;
        x->constraint = cand->spec.constraint;
        core_job_power(s, cand, &x->p_min, &x->p_max);
        who[k++] = cand;
    }
    sched_power_problem_t p = {.nnodes = nodes, .p_idle = s->pw_idle, .lower = s->pw_lower,
                               .upper = s->pw_upper, .min_idle = min_idle, .jobs = pj,
                               .njobs = k};
    char err[SCHED_ERRLEN];
    sol->sizes = sizes;
    int rc = sched_power_solve(&p, sol, err, sizeof(err));
    if (rc == 0) {
        for (int i = 0; i < k; i++)
            if (who[i] != cand && !pj[i].fixed)
                who[i]->newsize = sizes[i];
        if (cand)
            *cand_size = sizes[k - 1];
    }
    sol->sizes = NULL;
    free(pj);
    free(sizes);
    free(who);
    return rc;
}
