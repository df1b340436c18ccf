/* Solve time of the power corridor's node-redistribution model (src/sched/power.c)
 * for K running malleable jobs on 14 nodes per job, half "hot" (250 W per node), half
 * "cool" (170 W), idle nodes 71 W, constraints mixed (none, even, pof2), the corridor
 * placed so that the jobs' current sizes are outside it and a solution must move nodes.
 * Prints the median and the worst of REPEAT solves per K (docs/BENCHMARKS.md).
 *   bench_power [REPEAT]   (default 21) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "power.h"

int main(int argc, char **argv)
{
    int repeat = argc > 1 ? atoi(argv[1]) : 21;
    if (repeat < 1)
        repeat = 1;
    static const int ks[] = {2, 16, 100, 1000};
    static const sched_constraint_t cons[] = {SCHED_CONS_NONE, SCHED_CONS_EVEN, SCHED_CONS_POF2};
    printf("%8s %8s %12s %12s %10s %8s\n", "jobs", "nodes", "median [ms]", "max [ms]", "status",
           "moved");
    for (size_t x = 0; x < sizeof(ks) / sizeof(ks[0]); x++) {
        int k = ks[x], n = 14 * k;
        sched_power_job_t *j = calloc((size_t)k, sizeof(*j));
        int *sizes = calloc((size_t)k, sizeof(int));
        double *t = calloc((size_t)repeat, sizeof(double));
        if (!j || !sizes || !t)
            return 1;
        double draw = 0;
        for (int i = 0; i < k; i++) {
            double w = i % 2 ? 170 : 250;
            j[i] = (sched_power_job_t){.id = i + 1, .nodes = 8, .min_nodes = 2, .max_nodes = 16,
                                       .constraint = cons[i % 3], .p_min = w, .p_max = w};
            draw += 8 * w;
        }
        draw += (n - 8 * k) * 71.0;
        /* 12 % below the current draw: the hot jobs must give nodes to idle */
        sched_power_problem_t p = {.nnodes = n, .p_idle = 71, .lower = 0.80 * draw,
                                   .upper = 0.88 * draw, .jobs = j, .njobs = k};
        sched_power_solution_t sol = {.sizes = sizes};
        char err[256];
        for (int r = 0; r < repeat; r++) {
            double t0 = now();
            if (sched_power_solve(&p, &sol, err, sizeof(err)) < 0) {
                fprintf(stderr, "bench_power: %s\n", err);
                return 1;
            }
            t[r] = (now() - t0) * 1e3;
        }
        qsort(t, (size_t)repeat, sizeof(double), cmp);
        printf("%8d %8d %12.3f %12.3f %10s %8d\n", k, n, t[repeat / 2], t[repeat - 1],
               sol.status == SCHED_POWER_INSIDE ? "inside" : sol.status == SCHED_POWER_CLOSEST
                                                              ? "closest" : "none",
               sol.moved);
        free(j);
        free(sizes);
        free(t);
    }
    return 0;
}
