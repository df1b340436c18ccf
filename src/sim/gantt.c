/* The Gantt chart: which job held which nodes when, as an SVG.
 *
 * Memory is what bounds a year-long replay, so the chart keeps only closed segments
 * (a run of consecutive nodes held by one job between two of its allocation changes)
 * and, per running job, its current runs. A job's segment list is threaded through
 * the segment array, so writing needs no sort of the segments: jobs go out in id
 * order, each job's segments in the order they closed, which is time order. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gantt_internal.h"
#include "idmap.h"

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static bool grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t nc = *cap ? *cap * 2 : 16;
    while (nc < need)
        nc *= 2;
    void *p = realloc(*arr, nc * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = nc;
    return true;
}

gantt_t *gantt_create(int nnodes)
{
    if (nnodes < 0)
        return NULL;
    gantt_t *g = calloc(1, sizeof(*g));
    if (!g)
        return NULL;
    g->nnodes = nnodes;
    g->byid = idmap_create();
    if (!g->byid) {
        free(g);
        return NULL;
    }
    return g;
}

void gantt_destroy(gantt_t *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->njobs; i++) {
        free(g->jobs[i]->runs);
        free(g->jobs[i]);
    }
    free(g->jobs);
    idmap_destroy(g->byid);
    free(g->segs);
    free(g->ticks);
    free(g->tickruns);
    free(g->ids);
    free(g->runbuf);
    free(g);
}

static gjob_t *job_get(gantt_t *g, int64_t id)
{
    gjob_t *j = idmap_get(g->byid, id);
    if (j)
        return j;
    if (!grow((void **)&g->jobs, &g->jobcap, g->njobs + 1, sizeof(*g->jobs)))
        return NULL;
    j = calloc(1, sizeof(*j));
    if (!j)
        return NULL;
    j->id = id;
    j->head = j->tail = -1;
    if (idmap_put(g->byid, id, j) != 0) {
        free(j);
        return NULL;
    }
    g->jobs[g->njobs++] = j;
    return j;
}

/* Sorted runs of the valid indices among nodes[0..n) into g->runbuf (pairs first,
 * count). Indices outside the cluster are dropped rather than trusted. Returns the
 * number of runs or -1 when memory ran out. */
static int to_runs(gantt_t *g, const int *nodes, int n)
{
    if (!nodes || n <= 0)
        return 0;
    if (!grow((void **)&g->ids, &g->idcap, (size_t)n, sizeof(int)) ||
        !grow((void **)&g->runbuf, &g->runbufcap, 2 * (size_t)n, sizeof(int)))
        return -1;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (nodes[i] >= 0 && nodes[i] < g->nnodes)
            g->ids[m++] = nodes[i];
    qsort(g->ids, (size_t)m, sizeof(int), cmp_int);
    int nr = 0;
    for (int i = 0; i < m;) {
        int k = i;
        while (k + 1 < m && g->ids[k + 1] <= g->ids[k] + 1)
            k++;
        g->runbuf[2 * nr] = g->ids[i];
        g->runbuf[2 * nr + 1] = g->ids[k] - g->ids[i] + 1;
        nr++;
        i = k + 1;
    }
    return nr;
}

static int cmp_run(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Appends the merged union of two run lists to g->tickruns; the resize tick covers
 * the rows the job held before and after, so a shrink marks the rows it gave up. */
static int add_tick(gantt_t *g, double t, const int *a, int na, const int *b, int nb)
{
    size_t off = g->ntickruns;
    if (!grow((void **)&g->tickruns, &g->tickruncap, 2 * (off + (size_t)na + (size_t)nb),
              sizeof(int)) ||
        !grow((void **)&g->ticks, &g->tickcap, g->nticks + 1, sizeof(*g->ticks)))
        return -1;
    int *r = g->tickruns + 2 * off;
    memcpy(r, a, 2 * (size_t)na * sizeof(int));
    memcpy(r + 2 * na, b, 2 * (size_t)nb * sizeof(int));
    qsort(r, (size_t)(na + nb), 2 * sizeof(int), cmp_run);
    int m = 0;
    for (int i = 0; i < na + nb; i++) {
        int first = r[2 * i], end = r[2 * i] + r[2 * i + 1];
        if (m > 0 && first <= r[2 * (m - 1)] + r[2 * (m - 1) + 1]) {
            int *last = &r[2 * (m - 1)];
            if (end > last[0] + last[1])
                last[1] = end - last[0];
        } else {
            r[2 * m] = first;
            r[2 * m + 1] = end - first;
            m++;
        }
    }
    g->ntickruns += (size_t)m;
    g->ticks[g->nticks++] = (gtick_t){.t = t, .off = off, .nruns = m};
    return 0;
}

/* Closes the job's open interval at t: one segment per run. Zero-length intervals
 * (two changes at the same instant) draw nothing and are not kept. */
static int close_interval(gantt_t *g, gjob_t *j, double t)
{
    if (!j->open || !(t > j->t_open))
        return 0;
    if (g->nsegs + (size_t)j->nruns > INT32_MAX ||
        !grow((void **)&g->segs, &g->segcap, g->nsegs + (size_t)j->nruns, sizeof(*g->segs)))
        return -1;
    for (int i = 0; i < j->nruns; i++) {
        int32_t k = (int32_t)g->nsegs++;
        g->segs[k] = (gseg_t){.t0 = j->t_open, .t1 = t, .first = j->runs[2 * i],
                              .count = j->runs[2 * i + 1], .next = -1};
        if (j->tail >= 0)
            g->segs[j->tail].next = k;
        else
            j->head = k;
        j->tail = k;
    }
    return 0;
}

static int apply(gantt_t *g, const sim_alloc_event_t *ev)
{
    gjob_t *j = job_get(g, ev->job);
    if (!j)
        return -1;
    int nr = sim_op_ends(ev->op) ? 0 : to_runs(g, ev->nodes, ev->n);
    if (nr < 0 || close_interval(g, j, ev->t) < 0)
        return -1;
    if ((ev->op == SIM_OP_EXPAND || ev->op == SIM_OP_SHRINK) &&
        add_tick(g, ev->t, j->runs, j->open ? j->nruns : 0, g->runbuf, nr) < 0)
        return -1;
    if (sim_op_ends(ev->op)) {
        /* A year of jobs ends up here: keep only the segment list of a finished job. */
        free(j->runs);
        j->runs = NULL;
        j->runcap = 0;
        j->open = false;
        j->nruns = 0;
        return 0;
    }
    if (!grow((void **)&j->runs, &j->runcap, 2 * (size_t)nr, sizeof(int)))
        return -1;
    if (nr > 0)
        memcpy(j->runs, g->runbuf, 2 * (size_t)nr * sizeof(int));
    j->nruns = nr;
    j->t_open = j->open ? fmax(ev->t, j->t_open) : ev->t;
    j->open = true;
    return 0;
}

void gantt_add(gantt_t *g, const sim_alloc_event_t *ev)
{
    if (!g || !ev || g->oom || !isfinite(ev->t))
        return;
    if (g->nevents == 0 || ev->t < g->tmin)
        g->tmin = ev->t;
    if (g->nevents == 0 || ev->t > g->tmax)
        g->tmax = ev->t;
    g->nevents++;
    /* gantt_add cannot report; gantt_write_svg does, rather than draw a partial chart. */
    if (apply(g, ev) < 0)
        g->oom = true;
}
