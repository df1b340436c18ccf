/* bench_sim: simulator speed (jobs simulated per second) and peak memory.
 *
 *   bench_sim esp                      the ESP mix (230 jobs, 34 nodes, 50 % malleable)
 *   bench_sim prio POLICY NODES QUEUED USERS [PASSES]
 *                                      the priority's cost in a pass (bench_prio.c)
 *   bench_sim synth JOBS NODES LOAD MALLEABLE POLICY [MTBF]
 *                                      a generated workload (see gen_synth); with
 *                                      MTBF, node failures drawn at that mean time
 *                                      between failures per node (down for 1 h)
 *
 * Each case runs in its own child process so that its peak resident memory
 * (ru_maxrss) is its own; the parent prints one line per case. Times cover sim_run
 * only, not the workload generation. bench/sim/run.sh runs the documented set. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/common/rng.h"
#include "bench_prio.h"
#include "sim.h"
#include "workload.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* njobs jobs on nnodes nodes: sizes log-uniform in [1, nnodes / 10], run times
 * log-uniform in [60 s, 24 h], estimates 1-3 x the run time, Poisson arrivals at the
 * rate that offers `load` x the machine. */
static int gen_synth(workload_t *wl, size_t njobs, int nnodes, double load, double malleable)
{
    rng_t r;
    rng_seed(&r, 12345);
    memset(wl, 0, sizeof(*wl));
    wl->machine_nodes = nnodes;
    double work = 0;
    int maxsize = nnodes / 10 > 1 ? nnodes / 10 : 1;
    for (size_t i = 0; i < njobs; i++) {
        wl_job_t j = {0};
        j.id = (int64_t)i + 1;
        j.nodes = (int)floor(exp(rng_uniform(&r) * log((double)maxsize + 1)));
        if (j.nodes < 1)
            j.nodes = 1;
        if (j.nodes > maxsize)
            j.nodes = maxsize;
        j.runtime = floor(60 * exp(rng_uniform(&r) * log(24 * 3600 / 60.0)));
        j.walltime = ceil(j.runtime * (1 + 2 * rng_uniform(&r)));
        j.type = SCHED_RIGID;
        work += j.nodes * j.runtime;
        if (wl_append(wl, &j) < 0)
            return -1;
    }
    double span = work / (load * nnodes), mean = span / (double)njobs, t = 0;
    for (size_t i = 0; i < njobs; i++) {
        wl->jobs[i].submit = floor(t);
        t += rng_exp(&r, mean);
    }
    if (malleable > 0) {
        char err[256];
        if (wl_make_malleable(wl, malleable, 7, nnodes, err, sizeof(err)) < 0) {
            fprintf(stderr, "%s\n", err);
            return -1;
        }
    }
    return 0;
}

static int run_case(int argc, char **argv)
{
    workload_t wl = {0};
    const char *policy;
    int nodes;
    char err[512];
    if (!strcmp(argv[1], "esp")) {
        wl_esp_opts_t o = {.nodes = 34, .malleable = 0.5, .seed = 1, .interarrival = 30};
        if (wl_gen_esp(&o, &wl, err, sizeof(err)) < 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        nodes = 34;
        policy = argv[2];
    } else {
        if (argc < 7)
            return 2;
        nodes = atoi(argv[3]);
        if (gen_synth(&wl, (size_t)atol(argv[2]), nodes, atof(argv[4]), atof(argv[5])) < 0)
            return 1;
        policy = argv[6];
    }
    sim_failures_t fails = {.mtbf = argc > 7 ? atof(argv[7]) : 0, .downtime = 3600, .seed = 1};
    sim_config_t cfg = {.nodes = nodes, .policy = policy, .reconf = sim_reconf_default,
                        .speedup = {.model = SPEEDUP_AMDAHL, .a = 0.01},
                        .failures = fails.mtbf > 0 ? &fails : NULL};
    /* Small workloads run repeatedly so that the time is measurable. */
    int reps = wl.njobs < 10000 ? 200 : 1;
    sim_result_t res;
    double t0 = now();
    for (int k = 0; k < reps; k++) {
        if (sim_run(&wl, &cfg, &res, err, sizeof(err)) < 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        if (k + 1 < reps)
            sim_result_free(&res);
    }
    double dt = (now() - t0) / reps;
    printf("%zu %.6f %zu %ld %ld %s %ld %ld\n", wl.njobs, dt, res.passes, res.expansions,
           res.shrinks, res.policy, res.failures, res.interrupts);
    sim_result_free(&res);
    wl_free(&wl);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_sim esp POLICY | synth JOBS NODES LOAD MALLEABLE POLICY [MTBF]"
                        " | prio POLICY NODES QUEUED USERS [PASSES]\n");
        return 2;
    }
    if (!strcmp(argv[1], "prio")) /* times passes, not a run: no child needed */
        return bench_prio(argc, argv);
    int fd[2];
    if (pipe(fd) < 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        int rc = run_case(argc, argv);
        fflush(stdout);
        _exit(rc);
    }
    close(fd[1]);
    char line[512] = "";
    FILE *f = fdopen(fd[0], "r");
    if (!f || !fgets(line, sizeof(line), f))
        line[0] = '\0';
    int status;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !line[0]) {
        fprintf(stderr, "bench_sim: case failed\n");
        return 1;
    }
    size_t njobs, passes;
    double dt;
    long exp, shr;
    char spec[256];
    long fails, intr;
    if (sscanf(line, "%zu %lf %zu %ld %ld %255s %ld %ld", &njobs, &dt, &passes, &exp, &shr, spec,
               &fails, &intr) != 8)
        return 1;
    double rss_kib = (double)ru.ru_maxrss;
    printf("%-44s jobs %7zu  %9.0f jobs/s  %8.3f s  peak %8.0f KiB  %6.0f B/job  passes %zu"
           "  resizes %ld",
           spec, njobs, njobs / dt, dt, rss_kib, rss_kib * 1024 / (double)njobs, passes,
           exp + shr);
    if (fails)
        printf("  failures %ld  interrupts %ld", fails, intr);
    printf("\n");
    return 0;
}
