/* elastic: EASY's starts, idle nodes lent to running malleable jobs, and taken back
 * for waiting jobs (docs/policies.md). */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>

#include "sim/sim.h"
#include "sim/workload.h"

static void check(const sched_action_t *a, sched_op_t op, int before, int after)
{
    assert_non_null(a);
    assert_int_equal(a->op, op);
    assert_int_equal(a->nodes_before, before);
    assert_int_equal(a->nodes_after, after);
}

static tu_job_t malleable(int64_t id, double submit, int nodes, int min, int max, double wall)
{
    return (tu_job_t){.id = id, .submit = submit, .type = SCHED_MALLEABLE, .nodes = nodes,
                      .min = min, .max = max, .walltime = wall};
}

static tu_job_t rigid(int64_t id, double submit, int nodes, double wall)
{
    return (tu_job_t){.id = id, .submit = submit, .type = SCHED_RIGID, .nodes = nodes,
                      .walltime = wall};
}

/* Nothing waits: the idle nodes go to the running malleable job, up to its maximum. */
static void lends_idle_nodes(void **state)
{
    (void)state;
    sched_t *s = tu_engine(10, "elastic");
    tu_submit(s, malleable(1, 0, 4, 2, 8, 1000));
    const sched_action_t *a;
    size_t n = tu_pass(s, 0, &a);
    assert_int_equal(n, 2);
    check(&a[0], SCHED_OP_START, 0, 4); /* at its requested size, as easy */
    check(&a[1], SCHED_OP_EXPAND, 4, 8);
    assert_int_equal(a[1].reason, SCHED_R_IDLE_NODES);
    sched_destroy(s);
}

/* A job arrives that the loaned nodes would start: the holder shrinks back, to its
 * requested size and no further, and the newcomer starts once it has. */
static void takes_back_for_waiting_job(void **state)
{
    (void)state;
    sched_t *s = tu_engine(10, "elastic");
    tu_submit(s, malleable(1, 0, 4, 2, 10, 1000));
    const sched_action_t *a;
    size_t n = tu_pass(s, 0, &a);
    check(tu_find(a, n, 1, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 4, 10);
    tu_complete(s, a, n);
    tu_submit(s, rigid(2, 2, 6, 100)); /* 6 nodes: all 6 loaned ones */
    n = tu_pass(s, 2, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_SHRINK, 10, 4);
    assert_int_equal(a[0].reason, SCHED_R_MAKE_ROOM);
    assert_int_equal(a[0].for_job, 2);
    tu_complete(s, a, n);
    n = tu_pass(s, 3, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_START, 0, 6);
    assert_int_equal(a[0].job, 2);
    /* 7 nodes would need one of job 1's own four: it is not taken */
    assert_int_equal(sched_remove(s, 2), 0);
    n = tu_pass(s, 4, &a);
    check(&a[0], SCHED_OP_EXPAND, 4, 10);
    tu_complete(s, a, n);
    tu_submit(s, rigid(3, 5, 7, 100));
    assert_int_equal(tu_pass(s, 5, &a), 0);
    assert_int_equal(tu_size(s, 1), 10);
    sched_destroy(s);
}

/* Nodes the reserved job needs go only to a job expected to end before its start.
 * 10 nodes: job 1 holds 6 until 100 (it cannot resize); malleable job 3 holds 1;
 * job 2 (rigid, 9) is reserved at 100. If job 3 ends at 80, 10 nodes are free then,
 * one spare: it may have that one, and (gaps=1) the two the reservation needs, as it
 * gives them back by ending first. If it ends at 150, nothing is spare at 100 and it
 * gets nothing. */
static void reservation_nodes_only_to_jobs_ending_first(void **state)
{
    (void)state;
    const char *pol[] = {"elastic", "elastic:gaps=0", "elastic"};
    int after[] = {4, 2, 0};
    for (int k = 0; k < 3; k++) {
        sched_t *s = tu_engine(10, pol[k]);
        tu_running(s, 1, 0, 0, 6, 6, 6, SCHED_CONS_NONE, 100);
        tu_running(s, 3, 0, 6, 1, 1, 6, SCHED_CONS_NONE, k == 2 ? 150 : 80);
        tu_submit(s, rigid(2, 1, 9, 100));
        const sched_action_t *a;
        size_t n = tu_pass(s, 1, &a);
        sched_jobinfo_t ji;
        assert_int_equal(sched_job_info(s, 2, &ji), 0);
        assert_true(fabs(ji.reserved_start - 100) < 1e-9);
        if (after[k]) {
            assert_int_equal(n, 1);
            check(&a[0], SCHED_OP_EXPAND, 1, after[k]);
        } else {
            assert_int_equal(n, 0);
        }
        sched_destroy(s);
    }
}

/* Without malleable jobs elastic is easy: 300 random rigid jobs through the simulator
 * start and end at the same times under both. */
static void rigid_workload_is_easy(void **state)
{
    (void)state;
    workload_t wl = {0};
    srand(11);
    for (int i = 0; i < 300; i++) {
        double rt = 10 + rand() % 500;
        wl_job_t j = {.id = i + 1, .submit = i * 7.0, .nodes = 1 + rand() % 16, .runtime = rt,
                      .walltime = rt * (1 + (rand() % 3)), .type = SCHED_RIGID};
        assert_int_equal(wl_append(&wl, &j), 0);
    }
    sim_result_t r[2];
    const char *pol[] = {"easy", "elastic"};
    for (int p = 0; p < 2; p++) {
        sim_config_t cfg = {.nodes = 16, .policy = pol[p],
                            .speedup = {.model = SPEEDUP_LINEAR}};
        char err[256] = "";
        if (sim_run(&wl, &cfg, &r[p], err, sizeof(err)) != 0)
            fail_msg("sim_run %s: %s", pol[p], err);
    }
    int backfilled = 0;
    for (size_t i = 0; i < r[0].njobs; i++) {
        assert_float_equal(r[0].jobs[i].start, r[1].jobs[i].start, 1e-9);
        assert_float_equal(r[0].jobs[i].end, r[1].jobs[i].end, 1e-9);
        backfilled += i > 0 && r[0].jobs[i].start < r[0].jobs[i - 1].start;
    }
    assert_true(backfilled > 0); /* the workload does exercise backfilling */
    for (int p = 0; p < 2; p++)
        sim_result_free(&r[p]);
    wl_free(&wl);
}

/* below=1: a malleable job that does not fit at its request backfills on the most
 * nodes that still end by the reservation (walltime x request / size). 10 nodes: job
 * 1 holds 6 until 100; job 2 (rigid, 10) is reserved at 100; job 3 asks for 8 (min 1)
 * for 40 s: on 4 free nodes it would run 80 s, ending at 81 <= 100. */
static void below_backfills_smaller(void **state)
{
    (void)state;
    for (int below = 0; below < 2; below++) {
        sched_t *s = tu_engine(10, below ? "elastic:below=1" : "elastic");
        tu_submit(s, rigid(1, 0, 6, 100));
        const sched_action_t *a;
        tu_pass(s, 0, &a);
        tu_submit(s, rigid(2, 1, 10, 100));
        tu_submit(s, malleable(3, 1, 8, 1, 8, 40));
        size_t n = tu_pass(s, 1, &a);
        const sched_action_t *st = tu_find(a, n, 3, SCHED_OP_START);
        if (!below) {
            assert_null(st);
        } else {
            check(st, SCHED_OP_START, 0, 4);
            sched_jobinfo_t ji;
            assert_int_equal(sched_job_info(s, 3, &ji), 0);
            assert_true(fabs(ji.end_estimate - 81) < 1e-9);
        }
        sched_destroy(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lends_idle_nodes),
        cmocka_unit_test(takes_back_for_waiting_job),
        cmocka_unit_test(reservation_nodes_only_to_jobs_ending_first),
        cmocka_unit_test(rigid_workload_is_easy),
        cmocka_unit_test(below_backfills_smaller),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
