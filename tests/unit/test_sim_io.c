/* I/O phases and the shared file system in the simulator (seed 003 §4.2.3): the rates
 * of AS-13, the co-scheduling example of Fig. 4.6 (AS-12: 15 time units when like jobs
 * pair, 12 when the I/O-aware policy mixes them), scheduling points as the only
 * moments a malleable job with phases is resized, and the errors. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/workload.h"

#define GIB (1024.0 * 1024 * 1024 / 1e9) /* GB */

static wl_job_t phased(int64_t id, double submit, int nodes, double compute, int iters,
                       double io_gb)
{
    return (wl_job_t){.id = id, .submit = submit, .nodes = nodes, .runtime = compute,
                      .walltime = compute, .type = SCHED_RIGID, .iters = iters, .io_gb = io_gb,
                      .io_intensity = -1};
}

static void run(workload_t *wl, int nodes, const char *policy, const sim_pfs_t *pfs,
                sim_result_t *res)
{
    sim_config_t cfg = {.nodes = nodes, .policy = policy, .speedup = {.model = SPEEDUP_LINEAR},
                        .pfs = pfs};
    char err[256] = "";
    if (sim_run(wl, &cfg, res, err, sizeof(err)) != 0)
        fail_msg("sim_run: %s", err);
}

/* AS-13 with the default file system (12.5 GB/s links, 48 GB/s in all). */
static void pfs_rates(void **state)
{
    (void)state;
    struct {
        int nodes;
        double gb, want; /* seconds of the write alone */
    } lone[] = {{2, 250, 10}, {4, 256 * GIB, 256 * GIB / 48}, {20, 480, 10}};
    for (size_t k = 0; k < sizeof(lone) / sizeof(lone[0]); k++) {
        workload_t wl = {0};
        wl_job_t j = phased(1, 0, lone[k].nodes, 1, 1, lone[k].gb);
        assert_int_equal(wl_append(&wl, &j), 0);
        sim_result_t res;
        run(&wl, 20, "fcfs", NULL, &res);
        assert_float_equal(res.jobs[0].end, 1 + lone[k].want, 1e-9);
        assert_float_equal(res.io_seconds, lone[k].want, 1e-9);
        assert_float_equal(res.io_alone_seconds, lone[k].want, 1e-9);
        assert_float_equal(res.io_gb, lone[k].gb, 1e-6);
        sim_result_free(&res);
        wl_free(&wl);
    }
    /* two 4-node jobs writing together: 6 GB/s per node, 24 GB/s each */
    workload_t wl = {0};
    wl_job_t a = phased(1, 0, 4, 1, 1, 240), b = phased(2, 0, 4, 1, 1, 240);
    assert_int_equal(wl_append(&wl, &a), 0);
    assert_int_equal(wl_append(&wl, &b), 0);
    sim_result_t res;
    run(&wl, 8, "fcfs", NULL, &res);
    assert_float_equal(res.jobs[0].end, 11, 1e-9);
    assert_float_equal(res.jobs[1].end, 11, 1e-9);
    assert_float_equal(res.io_seconds / res.io_alone_seconds, 2, 1e-9);
    assert_float_equal(res.io_busy_seconds, 10, 1e-9);
    sim_result_free(&res);
    /* one starts writing later: it shares from then on, the first finishes alone */
    wl.jobs[1].runtime = 3; /* writes from 3 */
    run(&wl, 8, "fcfs", NULL, &res);
    /* A: 48 GB/s for 2 s (96 GB), then 24 GB/s until 144 more are written: 9 s */
    assert_float_equal(res.jobs[0].end, 9, 1e-9);
    /* B: 24 GB/s from 3 to 9 (144 GB), then 48 GB/s for 96 GB: 2 s */
    assert_float_equal(res.jobs[1].end, 11, 1e-9);
    sim_result_free(&res);
    wl_free(&wl);
}

/* AS-12: two data-intensive jobs (compute 1, write 4) and two compute-intensive ones
 * (compute 4, write 1), one node each on two nodes, the file system writing 1 GB/s. */
static void coscheduling_example(void **state)
{
    (void)state;
    workload_t wl = {0};
    char err[256] = "";
    char path[4096];
    snprintf(path, sizeof(path), "%s/tests/data/io-pairs.json", getenv("DUCTILE_SOURCE_DIR"));
    if (wl_load_json(path, &wl, err, sizeof(err)))
        fail_msg("%s", err);
    const sim_pfs_t one = {.link_gbs = 1, .total_gbs = 1};
    struct {
        const char *policy;
        double makespan;
    } want[] = {{"fcfs", 15}, {"io-aware:alpha=0.3", 15}, {"io-aware:alpha=0.5", 12},
                {"io-aware:alpha=1", 12}};
    for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
        sim_result_t res;
        run(&wl, 2, want[k].policy, &one, &res);
        double end = 0;
        for (size_t i = 0; i < res.njobs; i++)
            end = res.jobs[i].end > end ? res.jobs[i].end : end;
        if (fabs(end - want[k].makespan) > 1e-9)
            fail_msg("%s: makespan %g, want %g", want[k].policy, end, want[k].makespan);
        sim_result_free(&res);
    }
    wl_free(&wl);
}

/* A malleable job with phases is resized only at a scheduling point (after a write):
 * FCFSm (fpsma-prma, here without its remaining-time guard) grows it with the nodes a rigid job leaves, not when they leave
 * but after its next write. */
static void resized_at_scheduling_points(void **state)
{
    (void)state;
    workload_t wl = {0};
    wl_job_t m = phased(1, 0, 2, 40, 4, 25); /* 10 s compute (on 2 nodes) + 1 s write, x4 */
    m.type = SCHED_MALLEABLE;
    m.min_nodes = 2;
    m.max_nodes = 4;
    wl_job_t r = {.id = 2, .nodes = 2, .runtime = 5, .walltime = 5, .type = SCHED_RIGID};
    assert_int_equal(wl_append(&wl, &m), 0);
    assert_int_equal(wl_append(&wl, &r), 0);
    sim_config_t cfg = {.nodes = 4, .policy = "fpsma-prma:guard=0", .speedup = {.model = SPEEDUP_LINEAR},
                        .reconf = {0}};
    char err[256] = "";
    sim_result_t res;
    if (sim_run(&wl, &cfg, &res, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    /* R ends at 5; M's first write ends at 11, where it grows to 4 nodes: three more
     * phases of 5 s compute and 25 GB at 48 GB/s */
    assert_int_equal(res.jobs[0].expansions, 1);
    assert_int_equal(res.jobs[0].nodes_final, 4);
    double want = 11 + 3 * (5 + 25.0 / 48);
    assert_float_equal(res.jobs[0].end, want, 1e-9);
    sim_result_free(&res);
    wl_free(&wl);
}

/* The derived intensity reaches the engine: on a 2-node cluster a data-intensive job
 * and a compute-intensive one start together under io-aware at alpha 1 even when two
 * data-intensive jobs are ahead in the queue; and the walltime of a job with phases is
 * at least its time alone (a too-short estimate from the workload is raised). */
static void intensities_and_estimates(void **state)
{
    (void)state;
    workload_t wl = {0};
    wl_job_t d1 = phased(1, 0, 1, 1, 2, 2), d2 = phased(2, 0, 1, 1, 2, 2),
             c1 = phased(3, 0, 1, 4, 2, 0.5);
    assert_int_equal(wl_append(&wl, &d1), 0);
    assert_int_equal(wl_append(&wl, &d2), 0);
    assert_int_equal(wl_append(&wl, &c1), 0);
    const sim_pfs_t one = {.link_gbs = 1, .total_gbs = 1};
    sim_result_t res;
    run(&wl, 2, "io-aware:alpha=1", &one, &res);
    assert_float_equal(res.jobs[0].start, 0, 1e-9);
    assert_float_equal(res.jobs[2].start, 0, 1e-9); /* C beside D, ahead of the second D */
    assert_true(res.jobs[1].start > 0);
    /* the jobs' run time is their time alone: compute and writes */
    assert_float_equal(res.jobs[0].runtime, 1 + 4, 1e-9);
    sim_result_free(&res);
    wl_free(&wl);
}

/* A declared intensity without phases (JSON io_intensity, SWF's CPU-time rule) reaches
 * the engine too: beside an I/O-heavy job, io-aware at alpha 1 starts the compute-heavy
 * job ahead of a second I/O-heavy one. */
static void declared_intensity(void **state)
{
    (void)state;
    workload_t wl = {0};
    wl_job_t a = {.id = 1, .nodes = 1, .runtime = 100, .walltime = 100, .io_intensity = 0.9};
    wl_job_t b = {.id = 2, .submit = 1, .nodes = 1, .runtime = 100, .walltime = 100,
                  .io_intensity = 0.9};
    wl_job_t c = {.id = 3, .submit = 1, .nodes = 1, .runtime = 100, .walltime = 100,
                  .io_intensity = 0.1};
    assert_int_equal(wl_append(&wl, &a), 0);
    assert_int_equal(wl_append(&wl, &b), 0);
    assert_int_equal(wl_append(&wl, &c), 0);
    sim_result_t res;
    run(&wl, 2, "io-aware:alpha=1", NULL, &res);
    assert_float_equal(res.jobs[2].start, 1, 1e-9);
    assert_float_equal(res.jobs[1].start, 100, 1e-9);
    sim_result_free(&res);
    run(&wl, 2, "fcfs", NULL, &res); /* queue order otherwise */
    assert_float_equal(res.jobs[1].start, 1, 1e-9);
    sim_result_free(&res);
    wl_free(&wl);
}

/* Phases of no length: a malleable job's scheduling points all fall in one instant
 * (each counted once: the list of points overflowed before), and a point closes when
 * the job's next write starts, so no resize lands in the middle of a write (the file
 * system's count of writing nodes went wrong and a job wrote faster than the file
 * system). */
static void zero_length_phases(void **state)
{
    (void)state;
    workload_t wl = {0};
    wl_job_t p = phased(1, 1000, 1, 0, 5, 1e-15);
    p.type = SCHED_MALLEABLE;
    p.min_nodes = 1;
    p.max_nodes = 4;
    assert_int_equal(wl_append(&wl, &p), 0);
    sim_result_t res;
    run(&wl, 4, "fcfs", NULL, &res);
    assert_int_equal(res.io_phases, 5);
    assert_true(res.jobs[0].end >= 1000);
    sim_result_free(&res);
    wl_free(&wl);

    /* job 1 (malleable, no compute) writes 3 x 100 GB, job 2 5 x 100 GB, 1 GB/s in all:
     * at least 800 s whatever the policy does, 800 GB written */
    wl = (workload_t){0};
    wl_job_t m = phased(1, 0, 1, 0, 3, 100), r = phased(2, 0, 1, 50, 5, 100);
    m.type = SCHED_MALLEABLE;
    m.min_nodes = 1;
    m.max_nodes = 8;
    assert_int_equal(wl_append(&wl, &m), 0);
    assert_int_equal(wl_append(&wl, &r), 0);
    const sim_pfs_t one = {.link_gbs = 1, .total_gbs = 1};
    const char *pol[] = {"fcfs", "equi", "io-aware:alpha=1", "fpsma-prma:guard=0"};
    for (size_t k = 0; k < sizeof(pol) / sizeof(pol[0]); k++) {
        run(&wl, 8, pol[k], &one, &res);
        double end = res.jobs[0].end > res.jobs[1].end ? res.jobs[0].end : res.jobs[1].end;
        if (end < 800 - 1e-6 || fabs(res.io_gb - 800) > 1e-6 || res.io_busy_seconds > end + 1e-6)
            fail_msg("%s: makespan %g, %g GB written, file system busy %g s", pol[k], end,
                     res.io_gb, res.io_busy_seconds);
        sim_result_free(&res);
    }
    wl_free(&wl);
}

static void refused_combinations(void **state)
{
    (void)state;
    workload_t wl = {0};
    wl_job_t j = phased(1, 0, 1, 10, 2, 1);
    assert_int_equal(wl_append(&wl, &j), 0);
    sim_config_t cfg;
    char err[256] = "";
    sim_result_t res;
    const sim_pfs_t bad = {.link_gbs = 0, .total_gbs = 1};
    cfg = (sim_config_t){.nodes = 2, .policy = "fcfs", .pfs = &bad};
    assert_int_equal(sim_run(&wl, &cfg, &res, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "rates"));
    wl_free(&wl);
}

/* Node failures: a job's writes are its checkpoints. 4 iterations of 10 s of compute
 * and a 2-s write (8 GB at 4 x 1 GB/s) on 4 of 5 nodes end at 48 alone. A node fails
 * at 30, in the third compute: the job restarts at once on the four nodes up, after
 * its second write (24 s left, end 54), and the 6 s since that write are lost (24
 * node-s). A failure at 23, in the second write, loses that write: 3 iterations left
 * (end 59), 11 s lost. Every write is counted once, the lost one not. */
static void failure_resumes_after_last_write(void **state)
{
    (void)state;
    const sim_pfs_t pfs = {.link_gbs = 1, .total_gbs = 100};
    struct {
        double at, end, lost;
    } c[] = {{30, 54, 24}, {23, 59, 44}};
    for (int k = 0; k < 2; k++) {
        workload_t wl = {0};
        wl_job_t j = phased(1, 0, 4, 40, 4, 8);
        assert_int_equal(wl_append(&wl, &j), 0);
        sim_failure_t tr = {.t = c[k].at, .node = 1, .down = 1000};
        sim_failures_t f = {.trace = &tr, .ntrace = 1};
        sim_config_t cfg = {.nodes = 5, .policy = "fcfs", .speedup = {.model = SPEEDUP_LINEAR},
                            .pfs = &pfs, .failures = &f};
        char err[256] = "";
        sim_result_t res;
        if (sim_run(&wl, &cfg, &res, err, sizeof(err)) != 0)
            fail_msg("sim_run: %s", err);
        assert_int_equal(res.jobs[0].restarts, 1);
        assert_float_equal(res.jobs[0].end, c[k].end, 1e-9);
        assert_float_equal(res.jobs[0].lost_node_seconds, c[k].lost, 1e-9);
        assert_int_equal(res.io_phases, 4);
        assert_float_equal(res.io_seconds, 8, 1e-9);
        sim_result_free(&res);
        wl_free(&wl);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pfs_rates),
        cmocka_unit_test(coscheduling_example),
        cmocka_unit_test(resized_at_scheduling_points),
        cmocka_unit_test(intensities_and_estimates),
        cmocka_unit_test(declared_intensity),
        cmocka_unit_test(zero_length_phases),
        cmocka_unit_test(refused_combinations),
        cmocka_unit_test(failure_resumes_after_last_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
