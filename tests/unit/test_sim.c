/* The simulator: exact replays, progress arithmetic of resized jobs, metrics. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/metrics.h"
#include "sim/sim.h"
#include "sim/workload.h"

static void add(workload_t *wl, int64_t id, double submit, int nodes, double runtime,
                sched_jobtype_t type, int min, int max)
{
    wl_job_t j = {.id = id, .submit = submit, .nodes = nodes, .runtime = runtime,
                  .walltime = runtime, .type = type, .min_nodes = min, .max_nodes = max};
    assert_int_equal(wl_append(wl, &j), 0);
}

static sim_config_t config(int nodes, const char *policy)
{
    return (sim_config_t){.nodes = nodes, .policy = policy, .reconf = {0},
                          .speedup = {.model = SPEEDUP_LINEAR}};
}

static void run(const workload_t *wl, const sim_config_t *cfg, sim_result_t *res)
{
    char err[256] = "";
    if (sim_run(wl, cfg, res, err, sizeof(err)) != 0)
        fail_msg("sim_run: %s", err);
}

/* seed 000 §8.2 (D): FCFS replay of the 5-job case with the extraction's run times:
 * starts 0/700/900/900/1500, makespan 2000, AWT 600, ART 1140, utilization 63.1 %. */
static void fcfs_five_jobs(void **state)
{
    (void)state;
    workload_t wl = {0};
    int nodes[] = {4, 16, 6, 10, 8};
    double rt[] = {700, 200, 700, 600, 500};
    for (int i = 0; i < 5; i++)
        add(&wl, i + 1, i * 100, nodes[i], rt[i], SCHED_RIGID, 0, 0);
    sim_config_t cfg = config(16, "fcfs");
    sim_result_t res;
    run(&wl, &cfg, &res);
    double starts[] = {0, 700, 900, 900, 1500}, ends[] = {700, 900, 1600, 1500, 2000};
    for (int i = 0; i < 5; i++) {
        assert_true(res.jobs[i].start == starts[i]);
        assert_true(res.jobs[i].end == ends[i]);
    }
    sim_metrics_t m;
    assert_int_equal(sim_metrics_compute(&res, 16, &m), 0);
    assert_true(m.makespan == 2000);
    assert_true(fabs(m.wait.mean - 600) < 1e-9);
    assert_true(fabs(m.response.mean - 1140) < 1e-9);
    assert_true(fabs(m.utilization - 20200.0 / 32000.0) < 1e-12);
    assert_true(m.wait.max == 1100);
    sim_result_free(&res);
    wl_free(&wl);
}

/* seed 000 §8.10 (D): AWT 16.67 s, ART 73.33 s, makespan 100 s; percentiles by
 * nearest rank; bounded slowdown with tau = 10 s. */
static void metrics_formulas(void **state)
{
    (void)state;
    sim_jobres_t jobs[3] = {
        {.id = 1, .submit = 0, .start = 0, .end = 100},
        {.id = 2, .submit = 10, .start = 30, .end = 80},
        {.id = 3, .submit = 20, .start = 50, .end = 70},
    };
    sim_result_t res = {.jobs = jobs, .njobs = 3, .busy_node_seconds = 170};
    sim_metrics_t m;
    assert_int_equal(sim_metrics_compute(&res, 2, &m), 0);
    assert_true(fabs(m.wait.mean - 50.0 / 3) < 1e-9);
    assert_true(fabs(m.response.mean - 220.0 / 3) < 1e-9);
    assert_true(m.makespan == 100);
    assert_true(m.wait.p50 == 20 && m.wait.p95 == 30 && m.wait.max == 30);
    assert_true(fabs(m.utilization - 0.85) < 1e-12);
    /* bsld: 100/100 -> 1, 70/50 -> 1.4, 50/20 -> 2.5 */
    assert_true(fabs(m.bsld.mean - (1 + 1.4 + 2.5) / 3) < 1e-12);
    assert_true(m.bsld.max == 2.5);
    /* a 2-second job waiting 8 s: slowdown 10/2 = 5, bounded 10/10 = 1 */
    sim_jobres_t short_job = {.id = 1, .submit = 0, .start = 8, .end = 10};
    sim_result_t r2 = {.jobs = &short_job, .njobs = 1};
    assert_int_equal(sim_metrics_compute(&r2, 1, &m), 0);
    assert_true(m.slowdown.mean == 5 && m.bsld.mean == 1);
    /* a malleable job of 100 s at its requested size, grown to end after a 50-s run,
     * and one started small that ran 150 s, both submitted 100 s before their start:
     * slowdowns by their length, 150/100 and 250/100, not by their runs (3, 1.67) */
    sim_jobres_t grown[2] = {
        {.id = 1, .submit = 0, .start = 100, .end = 150, .runtime = 100},
        {.id = 2, .submit = 0, .start = 100, .end = 250, .runtime = 100},
    };
    sim_result_t r3 = {.jobs = grown, .njobs = 2};
    assert_int_equal(sim_metrics_compute(&r3, 4, &m), 0);
    assert_true(fabs(m.slowdown.max - 2.5) < 1e-12 && fabs(m.bsld.p50 - 1.5) < 1e-12);
}

/* A malleable job grown from 2 to 4 nodes at once runs twice as fast (linear), or
 * 1.2 times as fast (Amdahl, f = 0.5); the reconfiguration costs time and
 * node-seconds. */
static void expand_progress(void **state)
{
    (void)state;
    workload_t wl = {0};
    add(&wl, 1, 0, 2, 100, SCHED_MALLEABLE, 1, 4);
    sim_config_t cfg = config(4, "fpsma-pwma");
    sim_result_t res;
    run(&wl, &cfg, &res);
    assert_true(res.jobs[0].end == 50);
    assert_int_equal(res.jobs[0].expansions, 1);
    assert_int_equal(res.jobs[0].nodes_final, 4);
    sim_result_free(&res);

    cfg.reconf.expand_fixed = 1;
    run(&wl, &cfg, &res);
    assert_true(fabs(res.jobs[0].end - 51) < 1e-9);
    assert_true(fabs(res.jobs[0].node_seconds - 204) < 1e-9);
    assert_true(fabs(res.reconf_node_seconds - 4) < 1e-9);
    sim_result_free(&res);

    cfg.reconf.expand_fixed = 0;
    cfg.speedup = (speedup_t){.model = SPEEDUP_AMDAHL, .a = 0.5};
    run(&wl, &cfg, &res);
    assert_true(fabs(res.jobs[0].end - 100 / 1.2) < 1e-9);
    sim_result_free(&res);
    wl_free(&wl);
}

/* Shrunk at t=50 for a 2-node job (10 s), grown back at t=60: 50 s of work left at
 * 4 nodes, 10 s at half speed, then 45 s at full speed -> ends at 105. */
static void shrink_then_grow_progress(void **state)
{
    (void)state;
    workload_t wl = {0};
    add(&wl, 1, 0, 4, 100, SCHED_MALLEABLE, 2, 4);
    add(&wl, 2, 50, 2, 10, SCHED_RIGID, 0, 0);
    /* guard=0: with the default 60 s guard a job with 50 s left is never shrunk */
    sim_config_t cfg = config(4, "fpsma-pwma:guard=0");
    sim_result_t res;
    run(&wl, &cfg, &res);
    assert_true(res.jobs[1].start == 50 && res.jobs[1].end == 60);
    assert_true(fabs(res.jobs[0].end - 105) < 1e-9);
    assert_int_equal(res.jobs[0].shrinks, 1);
    assert_int_equal(res.jobs[0].expansions, 1);
    assert_int_equal(res.shrinks, 1);
    /* node-seconds: 4 x 50 + 2 x 10 + 4 x 45 */
    assert_true(fabs(res.jobs[0].node_seconds - 400) < 1e-9);
    sim_result_free(&res);
    /* The guard keeps a job with 50 s left from shrinking: job 2 waits until 100. */
    cfg = config(4, "fpsma-pwma");
    run(&wl, &cfg, &res);
    assert_true(res.jobs[0].end == 100 && res.jobs[1].start == 100);
    sim_result_free(&res);
    /* Under fcfs nothing resizes either. */
    cfg = config(4, "fcfs");
    run(&wl, &cfg, &res);
    assert_true(res.jobs[0].end == 100 && res.jobs[1].start == 100);
    sim_result_free(&res);
    wl_free(&wl);
}

/* tick=S adds a scheduling pass every S seconds while work remains. */
static void policy_tick(void **state)
{
    (void)state;
    workload_t wl = {0};
    add(&wl, 1, 0, 1, 1000, SCHED_RIGID, 0, 0);
    sim_config_t cfg = config(2, "fcfs");
    sim_result_t res;
    run(&wl, &cfg, &res);
    size_t plain = res.passes;
    sim_result_free(&res);
    cfg.policy = "fcfs:tick=100";
    run(&wl, &cfg, &res);
    /* ticks at 100..900, and the one at 1000 shares the pass of the job's end */
    assert_int_equal(res.passes, plain + 9);
    assert_string_equal(res.policy, "fcfs:tick=100");
    sim_result_free(&res);
    wl_free(&wl);
}

/* Jobs larger than the cluster are rejected and counted; bad policies are errors. */
static void rejections_and_errors(void **state)
{
    (void)state;
    workload_t wl = {0};
    add(&wl, 1, 0, 8, 10, SCHED_RIGID, 0, 0);
    add(&wl, 2, 0, 2, 10, SCHED_RIGID, 0, 0);
    sim_config_t cfg = config(4, "easy");
    sim_result_t res;
    run(&wl, &cfg, &res);
    assert_int_equal(res.rejected, 1);
    assert_true(res.jobs[0].start < 0);
    assert_true(res.jobs[1].end == 10);
    sim_result_free(&res);
    cfg.policy = "nosuch";
    char err[256];
    assert_true(sim_run(&wl, &cfg, &res, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "unknown policy 'nosuch'"));
    cfg.policy = "perf:lower=x";
    assert_true(sim_run(&wl, &cfg, &res, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "not a number"));
    cfg.policy = "easy:nosuch=1";
    assert_true(sim_run(&wl, &cfg, &res, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "no parameter 'nosuch'"));
    wl_free(&wl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fcfs_five_jobs),
        cmocka_unit_test(metrics_formulas),
        cmocka_unit_test(expand_progress),
        cmocka_unit_test(shrink_then_grow_progress),
        cmocka_unit_test(policy_tick),
        cmocka_unit_test(rejections_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
