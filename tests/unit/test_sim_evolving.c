/* Evolving jobs in the simulator (issue 12): a JSON job's requests are made when its
 * progress reaches them, and the engine grants them at once, later, or never. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/workload.h"

/* 8 nodes: E (evolving, 2 nodes, 100 s of work, linear speedup) asks for `want` nodes
 * half-way; R (rigid, 4 nodes, r_len s) runs beside it from 0. */
static void run(double r_len, int want, sim_result_t *res)
{
    workload_t wl = {0};
    evo_request_t req[] = {{.at = 0.5, .nodes = want}};
    wl_job_t e = {.id = 1, .nodes = 2, .runtime = 100, .walltime = 100, .type = SCHED_EVOLVING,
                  .min_nodes = 1, .max_nodes = 8, .nreq = 1, .req = req};
    wl_job_t r = {.id = 2, .nodes = 4, .runtime = r_len, .walltime = r_len, .type = SCHED_RIGID};
    assert_int_equal(wl_append(&wl, &e), 0);
    assert_int_equal(wl_append(&wl, &r), 0);
    sim_config_t cfg = {.nodes = 8, .policy = "easy", .speedup = {.model = SPEEDUP_LINEAR}};
    char err[256] = "";
    if (sim_run(&wl, &cfg, res, err, sizeof(err)) != 0)
        fail_msg("sim_run: %s", err);
    wl_free(&wl);
}

static void granted_at_once(void **state)
{
    (void)state;
    sim_result_t res;
    run(30, 6, &res); /* at 50 R is gone: six nodes free */
    assert_int_equal(res.req_made, 1);
    assert_int_equal(res.req_at_once, 1);
    assert_int_equal(res.req_later + res.req_never, 0);
    /* 50 s of work left at 3 x the speed */
    assert_true(fabs(res.jobs[0].end - (50 + 50.0 / 3)) < 1e-6);
    assert_int_equal(res.jobs[0].nodes_final, 6);
    sim_result_free(&res);
}

static void granted_later(void **state)
{
    (void)state;
    sim_result_t res;
    run(80, 6, &res); /* at 50 only two nodes are free: it waits for R's end at 80 */
    assert_int_equal(res.req_later, 1);
    assert_true(fabs(res.req_wait - 30) < 1e-6);
    assert_true(fabs(res.jobs[0].end - (80 + 20.0 / 3)) < 1e-6);
    sim_result_free(&res);
}

static void refused_and_no_op(void **state)
{
    (void)state;
    /* above the cluster (and its maximum): a mistake in the workload, refused before
     * the run */
    workload_t wl = {0};
    evo_request_t req[] = {{.at = 0.5, .nodes = 9}};
    wl_job_t e = {.id = 1, .nodes = 2, .runtime = 100, .walltime = 100, .type = SCHED_EVOLVING,
                  .min_nodes = 1, .max_nodes = 8, .nreq = 1, .req = req};
    assert_int_equal(wl_append(&wl, &e), 0);
    sim_config_t cfg = {.nodes = 8, .policy = "easy", .speedup = {.model = SPEEDUP_LINEAR}};
    sim_result_t res;
    char err[256] = "";
    assert_true(sim_run(&wl, &cfg, &res, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "job 1: request 1 asks for 9 nodes, more than the cluster has"));
    wl_free(&wl);
    run(30, 2, &res); /* the size it has */
    assert_int_equal(res.req_at_once, 1);
    assert_true(res.jobs[0].end == 100);
    sim_result_free(&res);
}

/* Two requests: grow at 0.25, shrink back at 0.75. */
static void grow_then_shrink(void **state)
{
    (void)state;
    workload_t wl = {0};
    evo_request_t req[] = {{.at = 0.25, .nodes = 4}, {.at = 0.75, .nodes = 1}};
    wl_job_t e = {.id = 1, .nodes = 2, .runtime = 100, .walltime = 100, .type = SCHED_EVOLVING,
                  .min_nodes = 1, .max_nodes = 8, .nreq = 2, .req = req};
    assert_int_equal(wl_append(&wl, &e), 0);
    sim_config_t cfg = {.nodes = 8, .policy = "fcfs", .speedup = {.model = SPEEDUP_LINEAR}};
    sim_result_t res;
    char err[256];
    assert_int_equal(sim_run(&wl, &cfg, &res, err, sizeof(err)), 0);
    /* 25 s on 2 nodes; 50 s of work at 2x: 25 s; 25 s of work at 0.5x: 50 s */
    assert_true(fabs(res.jobs[0].end - 100) < 1e-6);
    assert_int_equal(res.jobs[0].expansions, 1);
    assert_int_equal(res.jobs[0].shrinks, 1);
    assert_int_equal(res.req_at_once, 2);
    sim_result_free(&res);
    wl_free(&wl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(granted_at_once),
        cmocka_unit_test(granted_later),
        cmocka_unit_test(refused_and_no_op),
        cmocka_unit_test(grow_then_shrink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
