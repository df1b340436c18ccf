/* The controller's own timings, for operators and benchmarks (`ductile cluster status`,
 * bench/scale): how long its scheduling passes and its commits take. Each keeps the
 * last STATS_KEEP durations and a count of all; percentiles are taken over the kept
 * ones when asked, so recording costs two stores. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include "ctld.h"

double stats_clock(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

void stats_add(stats_ring_t *r, double ms)
{
    r->ms[r->count % STATS_KEEP] = ms;
    r->count++;
    if (ms > r->max)
        r->max = ms;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (0..1) of sorted v[0..n-1], nearest rank. */
static double quantile(const double *v, int n, double q)
{
    int k = (int)ceil(q * n) - 1;
    return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

json_t *stats_json(const stats_ring_t *r)
{
    int n = r->count < STATS_KEEP ? (int)r->count : STATS_KEEP;
    double *v = n ? malloc((size_t)n * sizeof(double)) : NULL;
    double last = 0, median = 0, p99 = 0;
    if (v) {
        memcpy(v, r->ms, (size_t)n * sizeof(double));
        last = r->ms[(r->count - 1) % STATS_KEEP];
        qsort(v, (size_t)n, sizeof(double), cmp_d);
        median = quantile(v, n, 0.5);
        p99 = quantile(v, n, 0.99);
    }
    free(v);
    return json_pack("{s:I,s:i,s:f,s:f,s:f,s:f}", "count", (json_int_t)r->count, "kept", n,
                     "last_ms", last, "median_ms", median, "p99_ms", p99, "max_ms", r->max);
}

void stats_loop_init(stats_loop_t *l, uv_loop_t *loop)
{
    memset(l, 0, sizeof(*l));
    uv_loop_configure(loop, UV_METRICS_IDLE_TIME);
    l->last_ns = uv_hrtime();
    l->last_idle_ns = uv_metrics_idle_time(loop);
}

void stats_loop_turn(stats_loop_t *l, uv_loop_t *loop, double wall)
{
    uint64_t now = uv_hrtime(), idle = uv_metrics_idle_time(loop);
    double ms = ((double)(now - l->last_ns) - (double)(idle - l->last_idle_ns)) * 1e-6;
    l->last_ns = now;
    l->last_idle_ns = idle;
    l->turns++;
    l->slow += ms > STATS_SLOW_MS;
    if (ms > l->max_ms) {
        l->max_ms = ms;
        l->max_at = wall;
    }
}

void stats_loop_work(stats_loop_t *l, const char *what, double ms, double wall)
{
    if (ms <= l->work_ms)
        return;
    l->work_ms = ms;
    l->work_at = wall;
    snprintf(l->work, sizeof(l->work), "%s", what);
}

json_t *stats_loop_json(const stats_loop_t *l)
{
    return json_pack("{s:I,s:I,s:f,s:f,s:f,s:s,s:f,s:f}", "turns", (json_int_t)l->turns,
                     "slow_turns", (json_int_t)l->slow, "slow_ms", STATS_SLOW_MS,
                     "longest_turn_ms", l->max_ms, "longest_turn_at", l->max_at,
                     "longest_work", l->work, "longest_work_ms", l->work_ms, "longest_work_at",
                     l->work_at);
}
