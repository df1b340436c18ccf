/* What a malleable job's application accepts, and how the engine backs off after it
 * declines: the application's size limits narrow the job's own, its offer interval
 * spaces policy resizes, and a declined change is not offered again for a back-off
 * that doubles with each decline (docs/policies.md, "What the application accepts").
 * Operator and evolving-job requests are not held back: only policy decisions are. */
#include <errno.h>
#include <math.h>

#include "sched_internal.h"

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

int sched_set_app_limits(sched_t *s, int64_t id, int min, int max, int pref, double interval)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    if (!j->app_limits) {
        j->sub_min = j->spec.min_nodes;
        j->sub_max = j->spec.max_nodes;
        j->sub_pref = j->spec.pref_nodes;
        j->app_limits = true;
    }
    if (min >= 0)
        j->spec.min_nodes = clampi(min ? min : j->sub_min, j->sub_min, j->sub_max);
    if (max >= 0)
        j->spec.max_nodes = clampi(max ? max : j->sub_max, j->spec.min_nodes, j->sub_max);
    if (j->spec.min_nodes > j->spec.max_nodes)
        j->spec.min_nodes = j->spec.max_nodes;
    if (pref >= 0)
        j->spec.pref_nodes = pref ? pref : j->sub_pref;
    j->spec.pref_nodes = clampi(j->spec.pref_nodes, j->spec.min_nodes, j->spec.max_nodes);
    if (interval >= 0 && isfinite(interval))
        j->interval = interval;
    if (min >= 0 || max >= 0 || pref >= 0)
        j->ndeclines = 0; /* new limits: what it declined may be what they now exclude */
    return 0;
}

void sched_set_backoff(sched_t *s, double base, double max)
{
    s->backoff = base > 0 ? base : 0;
    s->backoff_max = max > s->backoff ? max : s->backoff;
}

int sched_resize_declined(sched_t *s, int64_t id, double now)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    if (j->state != SCHED_RESIZING)
        return -EINVAL;
    int grow = j->target > j->ncommit;
    if (j->ndeclines && j->hold_grow == grow && j->hold_from == j->ncommit)
        j->ndeclines++;
    else
        j->ndeclines = 1;
    j->hold_grow = grow;
    j->hold_from = j->ncommit;
    double wait = s->backoff * pow(2, j->ndeclines - 1);
    j->hold_until = now + (wait < s->backoff_max ? wait : s->backoff_max);
    return 0;
}

bool core_resize_held(const sched_t *s, const sjob_t *j, int newsize)
{
    if (j->interval > 0 && s->now < j->last_resize + j->interval)
        return true;
    return j->ndeclines && s->now < j->hold_until && j->hold_from == j->ncommit &&
           j->hold_grow == (newsize > j->ncommit);
}

void core_resize_began(const sched_t *s, sjob_t *j) { j->last_resize = s->now; }
