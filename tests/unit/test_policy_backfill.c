/* fcfs, easy and conservative: start order, reservations, backfilling. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

static tu_job_t rigid(int64_t id, double submit, int nodes, double wall)
{
    return (tu_job_t){.id = id, .submit = submit, .type = SCHED_RIGID, .nodes = nodes,
                      .walltime = wall};
}

/* seed 000 §7.3 (T): J3 stays pending behind J2 although 12 nodes are idle. */
static void fcfs_head_blocks(void **state)
{
    (void)state;
    sched_t *s = tu_engine(16, "fcfs");
    const sched_action_t *a;
    tu_submit(s, rigid(1, 0, 4, 700));
    assert_int_equal(tu_pass(s, 0, &a), 1);
    tu_submit(s, rigid(2, 100, 16, 200));
    assert_int_equal(tu_pass(s, 100, &a), 0);
    tu_submit(s, rigid(3, 200, 6, 700));
    assert_int_equal(tu_pass(s, 200, &a), 0);
    assert_int_equal(sched_free_nodes(s), 12);
    assert_int_equal(tu_state(s, 3), SCHED_PENDING);
    sched_jobinfo_t info;
    sched_job_info(s, 2, &info);
    assert_int_equal(info.reason, SCHED_R_RESOURCES);
    sched_job_info(s, 3, &info);
    assert_int_equal(info.reason, SCHED_R_PRIORITY);
    assert_string_equal(sched_reason_name(info.reason), "Priority");
    sched_remove(s, 1);
    size_t n = tu_pass(s, 700, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].job, 2);
    sched_destroy(s);
}

/* A moldable job starts with as many nodes as are free within [min, max] and its
 * constraint; a job larger than the nodes that are up does not block others. */
static void fcfs_moldable_and_unavailable(void **state)
{
    (void)state;
    sched_t *s = tu_engine(16, "fcfs");
    for (int i = 8; i < 16; i++)
        sched_set_node_available(s, i, false);
    tu_submit(s, rigid(1, 0, 10, 100));
    tu_submit(s, (tu_job_t){.id = 2, .submit = 1, .type = SCHED_MOLDABLE, .nodes = 2, .min = 2,
                            .max = 16, .cons = SCHED_CONS_POF2});
    const sched_action_t *a;
    size_t n = tu_pass(s, 1, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].job, 2);
    assert_int_equal(a[0].nodes_after, 8); /* largest pof2 <= 8 free */
    sched_jobinfo_t info;
    sched_job_info(s, 1, &info);
    assert_int_equal(info.reason, SCHED_R_NODES_UNAVAILABLE);
    sched_destroy(s);
}

/* seed 000 Fig. 5.1: 10 CPUs, J1 8, J2 4, J3 2, J4 8, 4 s each: EASY runs J3 beside
 * J1; J4 cannot run beside J2. */
static void easy_fig51(void **state)
{
    (void)state;
    sched_t *s = tu_engine(10, "easy");
    tu_submit(s, rigid(1, 0, 8, 4));
    tu_submit(s, rigid(2, 0, 4, 4));
    tu_submit(s, rigid(3, 0, 2, 4));
    tu_submit(s, rigid(4, 0, 8, 4));
    const sched_action_t *a;
    size_t n = tu_pass(s, 0, &a);
    assert_int_equal(n, 2);
    assert_non_null(tu_find(a, n, 1, SCHED_OP_START));
    const sched_action_t *b = tu_find(a, n, 3, SCHED_OP_START);
    assert_non_null(b);
    assert_int_equal(b->reason, SCHED_R_BACKFILL);
    sched_jobinfo_t info;
    sched_job_info(s, 2, &info);
    assert_true(info.reserved_start == 4);
    sched_remove(s, 1);
    sched_remove(s, 3);
    n = tu_pass(s, 4, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].job, 2);
    sched_job_info(s, 4, &info);
    assert_true(info.reserved_start == 8);
    sched_destroy(s);
}

/* A later job may use only the nodes the reserved job does not need, unless it ends
 * by the shadow time. */
static void easy_extra_nodes(void **state)
{
    (void)state;
    sched_t *s = tu_engine(10, "easy");
    tu_submit(s, rigid(1, 0, 6, 10));
    tu_submit(s, rigid(2, 0, 2, 100));
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 0, &a), 2);
    tu_submit(s, rigid(3, 1, 7, 50)); /* head: shadow 10, extra 2 + 6 - 7 = 1 */
    tu_submit(s, rigid(4, 2, 2, 50)); /* ends after shadow, needs 2 > 1: waits */
    tu_submit(s, rigid(5, 3, 1, 50)); /* ends after shadow, 1 <= extra: starts */
    tu_submit(s, rigid(6, 4, 1, 5));  /* ends before shadow: starts */
    size_t n = tu_pass(s, 5, &a);
    assert_int_equal(n, 2);
    assert_non_null(tu_find(a, n, 5, SCHED_OP_START));
    assert_non_null(tu_find(a, n, 6, SCHED_OP_START));
    assert_int_equal(tu_state(s, 4), SCHED_PENDING);
    sched_jobinfo_t info;
    sched_job_info(s, 3, &info);
    assert_true(info.reserved_start == 10);
    assert_int_equal(info.reason, SCHED_R_RESOURCES);
    sched_destroy(s);
}

/* seed 003 AS-1: 8 nodes, J1 (1, 8 s), J2 (1, 5), J3 (6, 10), J4 (6, 10), J5 (1, 2):
 * J4 reserved at 10, J5 backfilled at 5 when J2 ends. */
static void conservative_toy(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "conservative");
    int sizes[] = {1, 1, 6, 6, 1};
    double lens[] = {8, 5, 10, 10, 2};
    for (int i = 0; i < 5; i++)
        tu_submit(s, rigid(i + 1, 0, sizes[i], lens[i]));
    const sched_action_t *a;
    size_t n = tu_pass(s, 0, &a);
    assert_int_equal(n, 3);
    sched_jobinfo_t info;
    sched_job_info(s, 4, &info);
    assert_true(info.reserved_start == 10);
    assert_int_equal(info.reason, SCHED_R_RESOURCES);
    sched_job_info(s, 5, &info);
    assert_true(info.reserved_start == 5);
    assert_int_equal(info.reason, SCHED_R_RESERVED);
    sched_remove(s, 2);
    n = tu_pass(s, 5, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].job, 5);
    sched_remove(s, 5);
    sched_remove(s, 1);
    assert_int_equal(tu_pass(s, 8, &a), 0);
    sched_remove(s, 3);
    n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].job, 4);
    sched_destroy(s);
}

/* Conservative protects every reservation, EASY only the first: job 4 would delay
 * job 3's reservation, so only EASY starts it. */
static void conservative_vs_easy(void **state)
{
    (void)state;
    const char *pol[] = {"easy", "conservative"};
    for (int k = 0; k < 2; k++) {
        sched_t *s = tu_engine(10, pol[k]);
        tu_submit(s, rigid(1, 0, 6, 10));
        tu_submit(s, rigid(9, 0, 2, 30));
        const sched_action_t *a;
        assert_int_equal(tu_pass(s, 0, &a), 2);
        tu_submit(s, rigid(2, 1, 4, 10)); /* head: at 10, extra 2 + 6 - 4 = 4 */
        tu_submit(s, rigid(3, 2, 8, 10)); /* conservative: reserved at 20 */
        tu_submit(s, rigid(4, 3, 2, 25)); /* fits now, ends 26: takes 3's nodes at 20 */
        size_t n = tu_pass(s, 1, &a);
        if (k == 0) {
            assert_int_equal(n, 1);
            assert_int_equal(a[0].job, 4);
        } else {
            assert_int_equal(n, 0);
            sched_jobinfo_t info;
            sched_job_info(s, 3, &info);
            assert_true(info.reserved_start == 20);
        }
        sched_destroy(s);
    }
}

/* depth=N: reservations for the first N waiting jobs only (a pass over 100,000 waiting
 * jobs took 16 s without a bound); a later job has none, waits as Priority, and starts
 * now wherever that delays none of the reservations made. In conservative_vs_easy's
 * queue, with depth=1 job 3 gets no reservation, so job 4 starts as under EASY; with
 * depth=2 (or 0: every job) job 3's reservation holds it back. */
static void conservative_depth(void **state)
{
    (void)state;
    const char *pol[] = {"conservative:depth=1", "conservative:depth=2", "conservative:depth=0"};
    for (int k = 0; k < 3; k++) {
        sched_t *s = tu_engine(10, pol[k]);
        tu_submit(s, rigid(1, 0, 6, 10));
        tu_submit(s, rigid(9, 0, 2, 30));
        const sched_action_t *a;
        assert_int_equal(tu_pass(s, 0, &a), 2);
        tu_submit(s, rigid(2, 1, 4, 10));
        tu_submit(s, rigid(3, 2, 8, 10));
        tu_submit(s, rigid(4, 3, 2, 25));
        tu_submit(s, rigid(5, 4, 4, 5)); /* needs 4 now: only 2 are free */
        size_t n = tu_pass(s, 1, &a);
        sched_jobinfo_t info;
        sched_job_info(s, 2, &info);
        assert_true(info.reserved_start == 10);
        sched_job_info(s, 3, &info);
        if (k == 0) {
            assert_int_equal(n, 1);
            assert_int_equal(a[0].job, 4);
            assert_true(info.reserved_start == -1);
            assert_int_equal(info.reason, SCHED_R_PRIORITY);
            sched_job_info(s, 5, &info);
            assert_true(info.reserved_start == -1);
        } else {
            assert_int_equal(n, 0);
            assert_true(info.reserved_start == 20);
            assert_int_equal(info.reason, SCHED_R_RESERVED);
        }
        sched_destroy(s);
    }
}

/* A moldable job conservative starts below its requested size runs walltime x
 * requested / size (core_walltime_at), and its place in the profile must say so: 10
 * nodes, job 1 holds 8 until 100, job 2 (rigid 10) is reserved at 100; moldable job 3
 * (request 4, 1..4, walltime 60) fits on the 2 free nodes only, where it would run
 * 120 s, past job 2's reservation: it waits, and job 2 keeps its start. */
static void conservative_moldable_below_request(void **state)
{
    (void)state;
    sched_t *s = tu_engine(10, "conservative");
    tu_running(s, 1, 0, 0, 8, 8, 8, SCHED_CONS_NONE, 100);
    tu_submit(s, (tu_job_t){.id = 2, .submit = 1, .type = SCHED_RIGID, .nodes = 10,
                            .walltime = 50});
    tu_submit(s, (tu_job_t){.id = 3, .submit = 2, .type = SCHED_MOLDABLE, .nodes = 4,
                            .min = 1, .max = 4, .walltime = 60});
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    if (n) {
        sched_jobinfo_t ji;
        sched_job_info(s, 3, &ji);
        fail_msg("job 3 started on %d nodes at 10, expected to end at %g, past job 2's "
                 "reservation at 100", a[0].nnodes, ji.end_estimate);
    }
    sched_jobinfo_t ji;
    assert_int_equal(sched_job_info(s, 2, &ji), 0);
    assert_true(ji.reserved_start > 99.999 && ji.reserved_start < 100.001);
    sched_destroy(s);
}

/* --test-only (sched_will_run): a probe fits where conservative backfilling would put
 * it behind every waiting job, whatever the policy; without a time limit it needs the
 * nodes for good; larger than the nodes up, no start is known. */
static void will_run_probe(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fcfs");
    tu_submit(s, rigid(1, 0, 2, 100));
    tu_submit(s, rigid(2, 0, 4, 50));
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 0, &a), 1); /* 1 runs to 100; 2 waits (at 100, to 150) */
    sched_jobspec_t p = {.id = 99, .submit = 0, .type = SCHED_RIGID, .nodes = 2,
                         .walltime = 10};
    double start;
    int size;
    char err[SCHED_ERRLEN];
    assert_int_equal(sched_will_run(s, &p, 100, &start, &size, err, sizeof(err)), 1);
    assert_true(start == 0); /* ends before job 2 needs the nodes */
    assert_int_equal(size, 2);
    p.walltime = 200;
    assert_int_equal(sched_will_run(s, &p, 100, &start, &size, err, sizeof(err)), 1);
    assert_true(start == 150); /* after job 2 */
    assert_int_equal(sched_will_run(s, &p, 0, &start, &size, err, sizeof(err)), 1);
    assert_true(start == 0); /* no waiting job considered: beside job 1 */
    sched_jobspec_t m = {.id = 98, .type = SCHED_MOLDABLE, .nodes = 4, .min_nodes = 1,
                         .max_nodes = 4, .walltime = 10};
    assert_int_equal(sched_will_run(s, &m, 100, &start, &size, err, sizeof(err)), 1);
    assert_true(start == 0);
    assert_int_equal(size, 2); /* a moldable job takes the 2 nodes free, not its minimum */
    p.walltime = 0;
    assert_int_equal(sched_will_run(s, &p, 100, &start, &size, err, sizeof(err)), 1);
    assert_true(start == 150);
    p.nodes = 4;
    sched_set_node_available(s, 3, false);
    assert_int_equal(sched_will_run(s, &p, 100, &start, &size, err, sizeof(err)), 0);
    assert_true(start == -1);
    p.nodes = 5;
    assert_true(sched_will_run(s, &p, 100, &start, &size, err, sizeof(err)) < 0);
    assert_int_equal(tu_state(s, 2), SCHED_PENDING); /* the engine is unchanged */
    assert_null(tu_find(a, 0, 99, SCHED_OP_START));
    sched_destroy(s);
}

/* ductile update (sched_set_walltime): a running job's estimate moves with its limit,
 * and the reservation behind it with it; a waiting job's new limit is its new length. */
static void walltime_update(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "easy");
    tu_submit(s, rigid(1, 0, 4, 100));
    tu_submit(s, rigid(2, 0, 4, 50));
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 0, &a), 1);
    sched_jobinfo_t info;
    sched_job_info(s, 2, &info);
    assert_true(info.reserved_start == 100);
    assert_int_equal(sched_set_walltime(s, 1, 40), 0);
    tu_pass(s, 10, &a);
    sched_job_info(s, 2, &info);
    assert_true(info.reserved_start == 40);
    assert_int_equal(sched_set_walltime(s, 1, 0), 0); /* no limit: no end known */
    tu_pass(s, 11, &a);
    sched_job_info(s, 2, &info);
    assert_true(info.reserved_start < 0);
    assert_int_equal(sched_set_walltime(s, 1, 60), 0);
    assert_int_equal(sched_set_walltime(s, 2, 5), 0);
    double start;
    int size;
    char err[SCHED_ERRLEN];
    sched_jobspec_t p = {.id = 99, .type = SCHED_RIGID, .nodes = 4, .walltime = 10};
    assert_int_equal(sched_will_run(s, &p, 100, &start, &size, err, sizeof(err)), 1);
    assert_true(start == 65); /* job 1 to 60, job 2 (5 s) to 65 */
    assert_int_equal(sched_set_walltime(s, 7, 5), -ENOENT);
    sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fcfs_head_blocks),
        cmocka_unit_test(fcfs_moldable_and_unavailable),
        cmocka_unit_test(easy_fig51),
        cmocka_unit_test(easy_extra_nodes),
        cmocka_unit_test(conservative_toy),
        cmocka_unit_test(conservative_vs_easy),
        cmocka_unit_test(conservative_depth),
        cmocka_unit_test(conservative_moldable_below_request),
        cmocka_unit_test(will_run_probe),
        cmocka_unit_test(walltime_update),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
