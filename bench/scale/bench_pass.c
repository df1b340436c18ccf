/* bench_pass: one scheduling pass of the engine with a full queue, without the
 * controller around it (the engine's share of bench/scale/queue.sh's pass times).
 *
 *   bench_pass NODES PENDING POLICY [PASSES]
 *
 * NODES running one-node jobs of a day, one of them then removed so that one node is
 * free; PENDING queued jobs of 2 to NODES/4 nodes (rigid, or malleable 2..NODES/4 for
 * the malleable policies) with limits of 1 minute to 1 day, none of which fits the
 * free node: each pass considers the whole queue. Prints the median, 99th percentile
 * and longest of PASSES passes (default 200), each after one more submission. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rng.h"
#include "sched.h"

static double ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_pass NODES PENDING POLICY [PASSES]\n");
        return 2;
    }
    int n = atoi(argv[1]), pending = atoi(argv[2]), passes = argc > 4 ? atoi(argv[4]) : 200;
    const char *policy = argv[3];
    bool rigid = !strcmp(policy, "easy") || !strcmp(policy, "conservative") ||
                 !strcmp(policy, "fcfs");
    sched_t *s;
    char err[512];
    if (n < 8 || pending < 0 || passes < 1 || sched_create(n, policy, &s, err, sizeof(err)) < 0)
        return fprintf(stderr, "bench_pass: %s\n", n < 8 ? "NODES >= 8" : err), 2;
    const sched_action_t *acts;
    size_t nacts;
    int64_t id = 1;
    double now = 1000;
    for (int i = 0; i < n; i++) {
        sched_jobspec_t j = {.id = id++, .submit = now, .type = SCHED_RIGID, .nodes = 1,
                             .walltime = 86400};
        if (sched_submit(s, &j, err, sizeof(err)) < 0)
            return fprintf(stderr, "bench_pass: %s\n", err), 1;
    }
    sched_schedule(s, now, &acts, &nacts);
    sched_remove(s, 1);
    int big = n / 4 > 2 ? n / 4 : 2;
    rng_t r;
    rng_seed(&r, 1);
    double *t = malloc((size_t)passes * sizeof(double));
    for (int i = 0; i < pending + passes; i++) {
        int size = 2 + (int)rng_below(&r, (uint64_t)(big - 1));
        sched_jobspec_t j = {.id = id++, .submit = now, .type = rigid ? SCHED_RIGID : SCHED_MALLEABLE,
                             .nodes = rigid ? size : 2, .min_nodes = rigid ? 0 : 2,
                             .max_nodes = rigid ? 0 : big,
                             .walltime = 60 + rng_uniform(&r) * (86400 - 60)};
        if (sched_submit(s, &j, err, sizeof(err)) < 0)
            return fprintf(stderr, "bench_pass: %s\n", err), 1;
        if (i < pending)
            continue;
        now += 0.001;
        double t0 = ms();
        sched_schedule(s, now, &acts, &nacts);
        t[i - pending] = ms() - t0;
    }
    qsort(t, (size_t)passes, sizeof(double), cmp_d);
    printf("%-13s nodes %6d queued %7d  pass median %8.3f ms  p99 %8.3f ms  max %8.3f ms"
           "  (%d passes, %d running)\n", policy, n, sched_pending_count(s), t[passes / 2],
           t[(int)(passes * 0.99)], t[passes - 1], passes, sched_running_count(s));
    free(t);
    sched_destroy(s);
    return 0;
}
