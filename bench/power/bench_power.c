/* Solve time of the power corridor's node-redistribution model (src/sched/power.c)
 * for K running malleable jobs on 14 nodes per job, half "hot" (250 W per node), half
 * "cool" (170 W), idle nodes 71 W, constraints mixed (none, even, pof2), the corridor
 * placed so that the jobs' current sizes are outside it and a solution must move nodes.
 * Prints the median and the worst of REPEAT solves per K, the last solve's status, nodes
 * moved and whether it is proven optimal (docs/BENCHMARKS.md).
 * With VARIED > 0, then VARIED random instances of 1,000 jobs that are not alike: W per
 * node 150-300 (p_max up to 20 W above p_min), current sizes 2-16 (valid ones), the
 * corridor 8 % wide at 0.75-1.14 times the draw; one solve each.
 *   bench_power [REPEAT [VARIED]]   (default 21, 0) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "power.h"

static const sched_constraint_t cons[] = {SCHED_CONS_NONE, SCHED_CONS_EVEN, SCHED_CONS_POF2};

/* Solves p `repeat` times; the times in t (sorted), the last solution in sol. */
static int run(const sched_power_problem_t *p, sched_power_solution_t *sol, double *t, int repeat)
{
    char err[256];
    for (int r = 0; r < repeat; r++) {
        double t0 = now();
        if (sched_power_solve(p, sol, err, sizeof(err)) < 0) {
            fprintf(stderr, "bench_power: %s\n", err);
            return -1;
        }
        t[r] = (now() - t0) * 1e3;
    }
    qsort(t, (size_t)repeat, sizeof(double), cmp);
    return 0;
}

static void row(int k, int n, const double *t, int repeat, const sched_power_solution_t *sol)
{
    printf("%8d %8d %12.3f %12.3f %10s %8d %8s\n", k, n, t[repeat / 2], t[repeat - 1],
           sol->status == SCHED_POWER_INSIDE ? "inside" : sol->status == SCHED_POWER_CLOSEST
                                                               ? "closest" : "none",
           sol->moved, sol->proven ? "yes" : "no");
}

/* The K-job instance described above; returns its current draw (with idle nodes). */
static double alike(sched_power_job_t *j, int k, int n)
{
    double draw = 0;
    for (int i = 0; i < k; i++) {
        double w = i % 2 ? 170 : 250;
        j[i] = (sched_power_job_t){.id = i + 1, .nodes = 8, .min_nodes = 2, .max_nodes = 16,
                                   .constraint = cons[i % 3], .p_min = w, .p_max = w};
        draw += 8 * w;
    }
    return draw + (n - 8 * k) * 71.0;
}

static double varied(sched_power_job_t *j, int k, int n)
{
    double draw = 0;
    int used = 0;
    for (int i = 0; i < k; i++) {
        sched_constraint_t c = cons[rand() % 3];
        int now_size = 2 + rand() % 15;
        if (c == SCHED_CONS_EVEN && now_size % 2)
            now_size++;
        if (c == SCHED_CONS_POF2)
            now_size = 1 << (1 + rand() % 4);
        double w = 150 + rand() % 150;
        w += (rand() % 100) / 100.0;
        j[i] = (sched_power_job_t){.id = i + 1, .nodes = now_size, .min_nodes = 2,
                                   .max_nodes = 16, .constraint = c, .p_min = w,
                                   .p_max = w + rand() % 20};
        draw += now_size * (j[i].p_min + j[i].p_max) / 2;
        used += now_size;
    }
    return draw + (n - used) * 71.0;
}

int main(int argc, char **argv)
{
    int repeat = argc > 1 ? atoi(argv[1]) : 21, nvaried = argc > 2 ? atoi(argv[2]) : 0;
    if (repeat < 1)
        repeat = 1;
    static const int ks[] = {2, 16, 100, 1000};
    int kmax = 1000, n = 14 * kmax, nt = repeat > nvaried ? repeat : nvaried;
    sched_power_job_t *j = calloc((size_t)kmax, sizeof(*j));
    int *sizes = calloc((size_t)kmax, sizeof(int));
    double *t = calloc((size_t)nt + 1, sizeof(double));
    double *tv = calloc((size_t)nt + 1, sizeof(double));
    if (!j || !sizes || !t || !tv)
        return 1;
    sched_power_solution_t sol = {.sizes = sizes};
    printf("%8s %8s %12s %12s %10s %8s %8s\n", "jobs", "nodes", "median [ms]", "max [ms]", "status",
           "moved", "proven");
    for (size_t x = 0; x < sizeof(ks) / sizeof(ks[0]); x++) {
        int k = ks[x];
        n = 14 * k;
        double draw = alike(j, k, n);
        /* 12 % below the current draw: the hot jobs must give nodes to idle */
        sched_power_problem_t p = {.nnodes = n, .p_idle = 71, .lower = 0.80 * draw,
                                   .upper = 0.88 * draw, .jobs = j, .njobs = k};
        if (run(&p, &sol, t, repeat) < 0)
            return 1;
        row(k, n, t, repeat, &sol);
    }
    if (nvaried > 0)
        printf("varied instances of %d jobs, one solve each:\n", kmax);
    srand(1);
    int unproven = 0;
    for (int v = 0; v < nvaried; v++) {
        n = 14 * kmax;
        double draw = varied(j, kmax, n), f = 0.75 + (rand() % 40) / 100.0;
        sched_power_problem_t p = {.nnodes = n, .p_idle = 71, .lower = f * draw,
                                   .upper = (f + 0.08) * draw, .jobs = j, .njobs = kmax};
        if (run(&p, &sol, &tv[v], 1) < 0)
            return 1;
        row(kmax, n, &tv[v], 1, &sol);
        unproven += !sol.proven;
    }
    if (nvaried > 0) {
        qsort(tv, (size_t)nvaried, sizeof(double), cmp);
        printf("varied: median %.3f ms, max %.3f ms, %d of %d not proven\n", tv[nvaried / 2],
               tv[nvaried - 1], unproven, nvaried);
    }
    free(j);
    free(sizes);
    free(t);
    free(tv);
    return 0;
}
