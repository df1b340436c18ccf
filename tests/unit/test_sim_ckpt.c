/* The simulator's checkpoint service (docs/simulator.md, "Checkpoint nodes"): the
 * requests its memory model raises and what each strategy makes of them, on
 * workloads small enough to follow by hand. Memory is in MB of a 100 MB node, so
 * that the 80 % and 90 % marks are 80 and 90. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/metrics.h"
#include "sim/sim.h"
#include "sim/workload.h"

static void add(workload_t *wl, int64_t id, double submit, int nodes, int min, double runtime,
                double ckpt_mb, double mtct)
{
    mtct_point_t pt = {nodes, mtct};
    wl_job_t j = {.id = id, .submit = submit, .nodes = nodes, .runtime = runtime,
                  .walltime = runtime, .type = min ? SCHED_MALLEABLE : SCHED_RIGID,
                  .min_nodes = min, .max_nodes = nodes, .ckpt_mb = ckpt_mb,
                  .nmtct = min ? 1 : 0, .mtct = min ? &pt : NULL};
    assert_int_equal(wl_append(wl, &j), 0);
}

/* id, submit, nodes, min (0: rigid), runtime, ckpt_mb, mtct */
typedef struct jrow {
    int64_t id;
    double submit;
    int nodes, min;
    double runtime, ckpt_mb, mtct;
} jrow_t;

static void add_rows(workload_t *wl, const jrow_t *r, int n)
{
    for (int i = 0; i < n; i++)
        add(wl, r[i].id, r[i].submit, r[i].nodes, r[i].min, r[i].runtime, r[i].ckpt_mb,
            r[i].mtct);
}
#define ADD_ROWS(wl, ...) \
    add_rows(wl, (const jrow_t[]){__VA_ARGS__}, \
             (int)(sizeof((const jrow_t[]){__VA_ARGS__}) / sizeof(jrow_t)))

static sim_ckpt_t service(int nodes, ckpt_favor_t favor)
{
    return (sim_ckpt_t){.nodes = nodes, .favor = favor, .node_mem_mb = 100};
}

static void run_costly(const workload_t *wl, int nodes, const sim_ckpt_t *ck, double shrink_s,
                       sim_result_t *res)
{
    sim_config_t cfg = {.nodes = nodes, .policy = "fcfs", .reconf = {.shrink_fixed = shrink_s},
                        .speedup = {.model = SPEEDUP_LINEAR}, .ckpt = ck};
    char err[256] = "";
    if (sim_run(wl, &cfg, res, err, sizeof(err)) != 0)
        fail_msg("sim_run: %s", err);
}

static void run(const workload_t *wl, int nodes, const sim_ckpt_t *ck, sim_result_t *res)
{
    run_costly(wl, nodes, ck, 0, res);
}

/* 9 nodes, one lent: A and B fill the other 8. B's 95 MB take the service's node past
 * 90 % with no other node to pool: HIGH. No node is idle, so the job with the higher
 * MTCT (B, 0.5 against A's 0.1) gives one node, which the service gets. */
static void icheck_high_shrinks_worst_job(void **state)
{
    (void)state;
    workload_t wl = {0};
    add(&wl, 1, 0, 4, 2, 1000, 5, 0.1);
    add(&wl, 2, 10, 4, 2, 1000, 95, 0.5);
    sim_ckpt_t ck = service(1, CKPT_FAVOR_ICHECK);
    sim_result_t res;
    run(&wl, 9, &ck, &res);
    const sim_ckpt_res_t *k = &res.ckpt;
    assert_int_equal(k->high_served, 1);
    assert_int_equal(k->high_refused + k->low_served + k->low_refused, 0);
    assert_int_equal(k->jobs_shrunk, 1);
    assert_int_equal(k->lent_jobs, 1);
    assert_int_equal(k->lent_idle, 0);
    assert_int_equal(k->nodes_peak, 2);
    assert_int_equal(k->nodes_end, 2);
    assert_int_equal(res.jobs[0].shrinks, 0);
    assert_int_equal(res.jobs[1].shrinks, 1);
    assert_int_equal(res.jobs[1].nodes_final, 3);
    assert_int_equal(res.unfinished, 0);
    /* one node from 0 to B's end, the second from t=10 on */
    double b_end = res.jobs[1].end;
    assert_true(fabs(b_end - (10 + 1000 * 4.0 / 3)) < 1e-6);
    assert_true(fabs(k->node_seconds - (b_end + (b_end - 10))) < 1e-6);
    sim_result_free(&res);
    wl_free(&wl);
    /* the same with the MTCTs swapped: A gives the node */
    add(&wl, 1, 0, 4, 2, 1000, 5, 0.5);
    add(&wl, 2, 10, 4, 2, 1000, 95, 0.1);
    run(&wl, 9, &ck, &res);
    assert_int_equal(res.jobs[0].shrinks, 1);
    assert_int_equal(res.jobs[1].shrinks, 0);
    assert_int_equal(res.ckpt.lent_jobs, 1);
    sim_result_free(&res);
    wl_free(&wl);
}

/* A HIGH raised while a job resizes waits for the next pass, as both algorithms say,
 * and is then served. Two checkpoint nodes, 7 job nodes, shrinks cost 10 s. B's data
 * raises a HIGH at t=10: B (higher MTCT) shrinks until t=20. At t=15 D's node goes to
 * C, whose data takes the other node past 90 %: HIGH, but B is resizing. At t=20 B's
 * node joins the service and the carried request shrinks B again: at 2 nodes its MTCT
 * (0.5) is still above A's. */
static void high_during_resize_is_carried(void **state)
{
    (void)state;
    workload_t wl = {0};
    ADD_ROWS(&wl, {1, 0, 3, 1, 1000, 45, 0.1}, {4, 0, 1, 0, 15, 0, 0},
             {2, 10, 3, 1, 1000, 95, 0.5}, {3, 15, 1, 0, 100, 50, 0});
    sim_ckpt_t ck = service(2, CKPT_FAVOR_ICHECK);
    sim_result_t res;
    run_costly(&wl, 9, &ck, 10, &res);
    assert_int_equal(res.ckpt.high_served, 2);
    assert_int_equal(res.ckpt.high_refused, 0);
    assert_int_equal(res.ckpt.jobs_shrunk, 2);
    assert_int_equal(res.ckpt.lent_jobs, 2);
    assert_int_equal(res.ckpt.nodes_peak, 4);
    assert_int_equal(res.jobs[0].shrinks, 0); /* A */
    assert_int_equal(res.jobs[2].shrinks, 2); /* B */
    assert_int_equal(res.jobs[2].nodes_final, 1);
    assert_true(res.jobs[3].start == 15);     /* C */
    sim_result_free(&res);
    wl_free(&wl);
}

/* Two checkpoint nodes: A's 95 MB fill one, the other is empty and its free memory
 * could take the full node's whole memory, so the request is LOW. With no idle node
 * nothing is lent and the malleable job keeps its size; with one idle node (a cluster
 * one larger) that node is lent. */
static void icheck_low_takes_idle_only(void **state)
{
    (void)state;
    workload_t wl = {0};
    add(&wl, 1, 0, 8, 2, 100, 95, 0.9);
    sim_ckpt_t ck = service(2, CKPT_FAVOR_ICHECK);
    sim_result_t res;
    run(&wl, 10, &ck, &res);
    assert_int_equal(res.ckpt.low_refused, 1);
    assert_int_equal(res.ckpt.low_served + res.ckpt.high_served + res.ckpt.high_refused, 0);
    assert_int_equal(res.ckpt.jobs_shrunk, 0);
    assert_int_equal(res.ckpt.nodes_peak, 2);
    assert_int_equal(res.jobs[0].shrinks, 0);
    assert_true(res.jobs[0].end == 100);
    sim_result_free(&res);
    run(&wl, 11, &ck, &res);
    assert_int_equal(res.ckpt.low_served, 1);
    assert_int_equal(res.ckpt.lent_idle, 1);
    assert_int_equal(res.ckpt.nodes_peak, 3);
    assert_int_equal(res.ckpt.jobs_shrunk, 0);
    sim_result_free(&res);
    wl_free(&wl);
}

/* Favour-app, 6 nodes of which 3 are empty checkpoint nodes. A takes the other 3. B
 * (5 nodes) waits from t=10: two checkpoint nodes come back, so B starts when A ends.
 * C would need all 6, but the service keeps one node: C never runs. */
static void app_reclaims_for_waiting_job(void **state)
{
    (void)state;
    workload_t wl = {0};
    ADD_ROWS(&wl, {1, 0, 3, 0, 100, 0, 0}, {2, 10, 5, 0, 100, 0, 0}, {3, 20, 6, 0, 100, 0, 0});
    sim_ckpt_t ck = service(3, CKPT_FAVOR_APP);
    sim_result_t res;
    run(&wl, 6, &ck, &res);
    assert_int_equal(res.ckpt.reclaimed, 2);
    assert_int_equal(res.ckpt.nodes_end, 1);
    assert_true(res.jobs[1].start == 100);
    assert_true(res.jobs[2].start < 0);
    assert_int_equal(res.unfinished, 1);
    /* three nodes up to t=10, one after */
    assert_true(fabs(res.ckpt.node_seconds - (3 * 10 + (200 - 10))) < 1e-6);
    sim_result_free(&res);
    wl_free(&wl);
}

/* A workload that carries checkpoint sizes, run without the service, gives exactly
 * the results of the same workload without them: seed 000's five-job FCFS case. */
static void off_changes_nothing(void **state)
{
    (void)state;
    workload_t plain = {0}, sized = {0};
    int nodes[] = {4, 16, 6, 10, 8};
    double rt[] = {700, 200, 700, 600, 500};
    for (int i = 0; i < 5; i++) {
        add(&plain, i + 1, i * 100, nodes[i], 0, rt[i], 0, 0);
        add(&sized, i + 1, i * 100, nodes[i], 0, rt[i], 50 * (i + 1), 0);
    }
    sim_result_t a, b;
    run(&plain, 16, NULL, &a);
    run(&sized, 16, NULL, &b);
    double starts[] = {0, 700, 900, 900, 1500};
    for (int i = 0; i < 5; i++) {
        assert_true(a.jobs[i].start == starts[i]);
        assert_memory_equal(&a.jobs[i], &b.jobs[i], sizeof(a.jobs[i]));
    }
    assert_int_equal(a.passes, b.passes);
    sim_ckpt_res_t zero = {0};
    assert_memory_equal(&b.ckpt, &zero, sizeof(zero));
    sim_metrics_t ma, mb;
    assert_int_equal(sim_metrics_compute(&a, 16, &ma), 0);
    assert_int_equal(sim_metrics_compute(&b, 16, &mb), 0);
    assert_true(ma.makespan == 2000 && mb.makespan == 2000);
    assert_true(ma.utilization == mb.utilization && ma.wait.mean == mb.wait.mean);
    sim_result_free(&a);
    sim_result_free(&b);
    wl_free(&plain);
    wl_free(&sized);
}

/* perf resizes jobs, which leaves stale end events after the last job's end: the
 * node-seconds still stop at the last end, so the mean never exceeds the peak. */
static void node_seconds_stop_at_last_end(void **state)
{
    (void)state;
    char path[4096], err[256] = "";
    const char *src = getenv("DUCTILE_SOURCE_DIR");
    snprintf(path, sizeof(path), "%s/tests/data/ckpt.json", src ? src : ".");
    workload_t wl = {0};
    if (wl_load_json(path, &wl, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    sim_ckpt_t ck = {.nodes = 2, .node_mem_mb = 16384};
    sim_config_t cfg = {.nodes = 16, .policy = "perf", .reconf = sim_reconf_default,
                        .speedup = {.model = SPEEDUP_LINEAR}, .ckpt = &ck};
    sim_result_t res;
    if (sim_run(&wl, &cfg, &res, err, sizeof(err)) != 0)
        fail_msg("sim_run: %s", err);
    sim_metrics_t m;
    assert_int_equal(sim_metrics_compute(&res, 16, &m), 0);
    assert_true(res.expansions + res.shrinks > 1);
    assert_true(m.ckpt_nodes_mean >= res.ckpt.nodes_start);
    assert_true(m.ckpt_nodes_mean <= res.ckpt.nodes_peak);
    sim_result_free(&res);
    wl_free(&wl);
}

/* The service cannot hold the whole cluster, nor nothing. */
static void bad_service_rejected(void **state)
{
    (void)state;
    workload_t wl = {0};
    add(&wl, 1, 0, 1, 0, 10, 0, 0);
    sim_ckpt_t ck = service(4, CKPT_FAVOR_ICHECK);
    sim_config_t cfg = {.nodes = 4, .policy = "fcfs", .speedup = {.model = SPEEDUP_LINEAR},
                        .ckpt = &ck};
    sim_result_t res;
    char err[256] = "";
    assert_int_equal(sim_run(&wl, &cfg, &res, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "checkpoint service"));
    wl_free(&wl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(icheck_high_shrinks_worst_job),
        cmocka_unit_test(high_during_resize_is_carried),
        cmocka_unit_test(icheck_low_takes_idle_only),
        cmocka_unit_test(app_reclaims_for_waiting_job),
        cmocka_unit_test(off_changes_nothing),
        cmocka_unit_test(node_seconds_stop_at_last_end),
        cmocka_unit_test(bad_service_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
