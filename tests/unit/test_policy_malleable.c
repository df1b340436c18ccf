/* perf (seed 002), dmr (seed 004), mebf (seed 003) and equi. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>

static void check(const sched_action_t *a, sched_op_t op, int before, int after)
{
    assert_non_null(a);
    assert_int_equal(a->op, op);
    assert_int_equal(a->nodes_before, before);
    assert_int_equal(a->nodes_after, after);
}

static tu_job_t rigid(int64_t id, double submit, int nodes)
{
    return (tu_job_t){.id = id, .submit = submit, .type = SCHED_RIGID, .nodes = nodes};
}

/* seed 002 S3: the least efficient job (highest MTCT) gives first. */
static void perf_shrinks_high_mtct_first(void **state)
{
    (void)state;
    sched_t *s = tu_engine(12, "perf");
    tu_running(s, 1, 0, 0, 6, 2, 12, SCHED_CONS_NONE, 0);
    tu_running(s, 2, 1, 6, 6, 2, 12, SCHED_CONS_NONE, 0);
    sched_set_mtct(s, 1, 0.8);
    sched_set_mtct(s, 2, 0.2);
    tu_submit(s, rigid(3, 2, 3));
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_SHRINK, 6, 3);
    assert_int_equal(a[0].job, 1);
    assert_int_equal(a[0].for_job, 3);
    sched_destroy(s);
}

/* seed 002 S3 (idle 2): the most efficient job below the lower threshold grows. */
static void perf_grows_low_mtct_first(void **state)
{
    (void)state;
    sched_t *s = tu_engine(14, "perf:lower=0.5");
    tu_running(s, 1, 0, 0, 6, 2, 14, SCHED_CONS_NONE, 0);
    tu_running(s, 2, 1, 6, 6, 2, 14, SCHED_CONS_NONE, 0);
    tu_running(s, 3, 2, 12, 1, 1, 14, SCHED_CONS_NONE, 0); /* no MTCT: keeps its size */
    sched_set_mtct(s, 1, 0.4);
    sched_set_mtct(s, 2, 0.2);
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    check(tu_find(a, n, 2, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 6, 7);
    assert_int_equal(a[0].reason, SCHED_R_EFFICIENT);
    sched_destroy(s);
    /* With the default lower threshold (0.2) neither grows. */
    s = tu_engine(14, "perf");
    tu_running(s, 1, 0, 0, 6, 2, 14, SCHED_CONS_NONE, 0);
    sched_set_mtct(s, 1, 0.25);
    assert_int_equal(tu_pass(s, 10, &a), 0);
    sched_destroy(s);
}

/* seed 002 C4: an even job on 10 nodes with 8 needed goes to 2. */
static void perf_constraint_need(void **state)
{
    (void)state;
    sched_t *s = tu_engine(10, "perf");
    tu_running(s, 1, 0, 0, 10, 2, 10, SCHED_CONS_EVEN, 0);
    sched_set_mtct(s, 1, 0.3);
    tu_submit(s, rigid(2, 1, 8));
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_SHRINK, 10, 2);
    sched_destroy(s);
}

/* All or nothing; if it fails, jobs above the upper threshold give one step back,
 * and a job without a measurement is never touched. */
static void perf_fallback_inefficient(void **state)
{
    (void)state;
    sched_t *s = tu_engine(13, "perf");
    tu_running(s, 1, 0, 0, 6, 4, 13, SCHED_CONS_NONE, 0);
    tu_running(s, 2, 1, 6, 6, 6, 13, SCHED_CONS_NONE, 0);
    tu_running(s, 3, 2, 12, 1, 1, 13, SCHED_CONS_NONE, 0);
    sched_set_mtct(s, 1, 0.9);
    sched_set_mtct(s, 2, 0.1);
    tu_submit(s, rigid(4, 3, 8));
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_SHRINK, 6, 5);
    assert_int_equal(a[0].job, 1);
    assert_int_equal(a[0].reason, SCHED_R_INEFFICIENT);
    sched_destroy(s);
}

/* seed 004 S1/S2: below preferred, grow when nodes are idle (never above max). */
static void dmr_grow_below_preferred(void **state)
{
    (void)state;
    sched_t *s = tu_engine(6, "dmr");
    tu_running(s, 1, 0, 0, 2, 1, 8, SCHED_CONS_NONE, 0);
    const sched_action_t *a;
    /* pref defaults to nodes (2): set it through a fresh job instead */
    sched_destroy(s);
    s = tu_engine(6, "dmr");
    sched_jobspec_t spec = {.id = 1, .type = SCHED_MALLEABLE, .nodes = 2, .min_nodes = 1,
                            .max_nodes = 8, .pref_nodes = 4};
    int nodes[] = {0, 1};
    char err[256];
    assert_int_equal(sched_restore_running(s, &spec, 0, nodes, 2, err, sizeof(err)), 0);
    size_t n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_EXPAND, 2, 6); /* to pref 4, then the idle rest (max 8 > 6) */
    assert_int_equal(a[0].reason, SCHED_R_BELOW_PREFERRED);
    tu_complete(s, a, n);
    assert_int_equal(tu_pass(s, 11, &a), 0); /* S2: no free nodes, nothing */
    sched_destroy(s);
}

static void restore_pref(sched_t *s, int64_t id, double start, int first, int n, int pref, int max)
{
    sched_jobspec_t spec = {.id = id, .submit = start, .type = SCHED_MALLEABLE, .nodes = n,
                            .min_nodes = 1, .max_nodes = max, .pref_nodes = pref};
    int nodes[64];
    for (int i = 0; i < n; i++)
        nodes[i] = first + i;
    char err[256];
    if (sched_restore_running(s, &spec, start, nodes, n, err, sizeof(err)) != 0)
        fail_msg("%s", err);
}

/* seed 004 S3/S7/S9: above preferred, shrink towards it (never below) when that
 * lets a waiting job start; S5: at preferred, never shrink. */
static void dmr_shrink_towards_preferred(void **state)
{
    (void)state;
    sched_t *s = tu_engine(32, "dmr");
    restore_pref(s, 1, 0, 0, 32, 16, 32);
    tu_submit(s, rigid(2, 1, 16));
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_SHRINK, 32, 16);
    sched_destroy(s);

    s = tu_engine(12, "dmr");
    restore_pref(s, 1, 0, 0, 12, 6, 12);
    tu_submit(s, rigid(2, 1, 8)); /* would need 12 -> 4 < pref: refused */
    assert_int_equal(tu_pass(s, 10, &a), 0);
    sched_remove(s, 2);
    tu_submit(s, rigid(3, 2, 6));
    n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_SHRINK, 12, 6);
    sched_destroy(s);

    s = tu_engine(8, "dmr");
    restore_pref(s, 1, 0, 0, 8, 8, 8);
    tu_submit(s, rigid(2, 1, 4));
    assert_int_equal(tu_pass(s, 10, &a), 0);
    sched_destroy(s);
}

/* seed 004 S4: a waiting job that no shrink can start; growth uses only nodes its
 * reservation does not need. */
static void dmr_grow_with_extra_only(void **state)
{
    (void)state;
    sched_t *s = tu_engine(10, "dmr");
    restore_pref(s, 1, 0, 0, 4, 4, 10);
    sched_jobspec_t r = {.id = 5, .type = SCHED_RIGID, .nodes = 3, .walltime = 100};
    int nodes[] = {4, 5, 6};
    char err[256];
    assert_int_equal(sched_restore_running(s, &r, 0, nodes, 3, err, sizeof(err)), 0);
    /* 3 idle; job 2 needs 5: shadow at 100 with 6 free -> 1 extra node. */
    tu_submit(s, (tu_job_t){.id = 2, .submit = 1, .type = SCHED_RIGID, .nodes = 5,
                            .walltime = 50});
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_EXPAND, 4, 5);
    sched_destroy(s);
}

/* seed 003 AS-7: a malleable job with pref 8, min 4 starts on 8, 6, or not at all. */
static void mebf_flexible_start(void **state)
{
    (void)state;
    int freen[] = {10, 6, 3}, expect[] = {8, 6, 0};
    for (int k = 0; k < 3; k++) {
        sched_t *s = tu_engine(10, "mebf");
        for (int i = freen[k]; i < 10; i++)
            sched_set_node_available(s, i, false);
        tu_submit(s, (tu_job_t){.id = 1, .type = SCHED_MALLEABLE, .nodes = 8, .min = 4,
                                .max = 10, .walltime = 100});
        const sched_action_t *a;
        size_t n = tu_pass(s, 0, &a);
        if (expect[k]) {
            check(tu_find(a, n, 1, SCHED_OP_START), SCHED_OP_START, 0, expect[k]);
        } else {
            assert_int_equal(n, 0);
        }
        sched_destroy(s);
    }
}

/* seed 003 AS-5: a lower-priority job on 10 nodes gives 2 (share 0.2) when
 * (rem + 0.2 rem + alpha) / rem <= 1.24, i.e. rem >= 25 alpha. */
static void mebf_shrink_feasibility(void **state)
{
    (void)state;
    struct { double rem, alpha; int shrink; } cases[] = {
        {100, 2, 1}, {100, 5, 0}, {1000, 30, 1}, {100, 4, 1},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        char spec[64];
        snprintf(spec, sizeof(spec), "mebf:alpha=%g", cases[k].alpha);
        sched_t *s = tu_engine(10, spec);
        tu_submit(s, (tu_job_t){.id = 1, .submit = 0, .type = SCHED_RIGID, .nodes = 2,
                                .walltime = 50});
        /* job 2 arrived later (lower priority) and holds the machine */
        tu_running(s, 2, 5, 0, 10, 1, 10, SCHED_CONS_NONE, 10 + cases[k].rem);
        const sched_action_t *a;
        size_t n = tu_pass(s, 15, &a);
        if (cases[k].shrink) {
            assert_int_equal(n, 1);
            check(&a[0], SCHED_OP_SHRINK, 10, 8);
            assert_int_equal(a[0].for_job, 1);
        } else {
            assert_int_equal(n, 0);
        }
        sched_destroy(s);
    }
}

/* Nodes are only taken from jobs of lower priority than the waiting job. */
static void mebf_never_shrinks_higher_priority(void **state)
{
    (void)state;
    sched_t *s = tu_engine(10, "mebf");
    tu_running(s, 1, 0, 0, 10, 1, 10, SCHED_CONS_NONE, 10000);
    tu_submit(s, rigid(2, 5, 2));
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 15, &a), 0);
    sched_destroy(s);
}

/* seed 003 AS-6: grow only with more than a quarter of the estimate left; the
 * longest remaining job first. */
static void mebf_expand_quarter_rule(void **state)
{
    (void)state;
    double rem[] = {30, 25, 10};
    int grows[] = {1, 0, 0};
    for (int k = 0; k < 3; k++) {
        sched_t *s = tu_engine(8, "mebf");
        tu_running(s, 1, 0, 0, 4, 1, 8, SCHED_CONS_NONE, 100);
        const sched_action_t *a;
        size_t n = tu_pass(s, 100 - rem[k], &a);
        assert_int_equal(n, (size_t)grows[k]);
        sched_destroy(s);
    }
    sched_t *s = tu_engine(8, "mebf");
    tu_running(s, 1, 0, 0, 2, 1, 4, SCHED_CONS_NONE, 100);
    tu_running(s, 2, 0, 2, 2, 1, 8, SCHED_CONS_NONE, 1000);
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    /* job 2 (longest) takes all 4 idle nodes first */
    assert_int_equal(n, 1);
    check(tu_find(a, n, 2, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 2, 6);
    sched_destroy(s);
}

/* A job mebf starts below its request runs longer than its walltime (same work on
 * fewer nodes), so EASY's test "ends by the shadow time" must use the walltime at the
 * size it gets: walltime x request / size. 10 nodes; job 1 holds 8 until t=100; the
 * head (job 2, rigid 10) is reserved at 100 with no extra node; job 3 (malleable,
 * request 4, min 1) fits only on the 2 free nodes. With walltime 60 it would end at
 * 10 + 120 > 100 and delay the head, so it waits; with walltime 40 it ends at
 * 10 + 80 <= 100 and backfills on 2, expected to end at 90. */
static void mebf_backfill_below_request_keeps_reservation(void **state)
{
    (void)state;
    double wall[] = {60, 40};
    for (int k = 0; k < 2; k++) {
        sched_t *s = tu_engine(10, "mebf");
        tu_running(s, 1, 0, 0, 8, 8, 8, SCHED_CONS_NONE, 100);
        tu_submit(s, (tu_job_t){.id = 2, .submit = 1, .type = SCHED_RIGID, .nodes = 10,
                                .walltime = 50});
        tu_submit(s, (tu_job_t){.id = 3, .submit = 2, .type = SCHED_MALLEABLE, .nodes = 4,
                                .min = 1, .max = 4, .walltime = wall[k]});
        const sched_action_t *a;
        size_t n = tu_pass(s, 10, &a);
        if (k == 0) {
            assert_int_equal(n, 0);
            assert_int_equal(tu_state(s, 3), SCHED_PENDING);
        } else {
            assert_int_equal(n, 1);
            check(tu_find(a, n, 3, SCHED_OP_START), SCHED_OP_START, 0, 2);
            sched_jobinfo_t ji;
            assert_int_equal(sched_job_info(s, 3, &ji), 0);
            assert_true(ji.end_estimate > 89.999 && ji.end_estimate < 90.001);
        }
        sched_destroy(s);
    }
}

/* equi: a newcomer gets room first, then the two jobs end up with equal shares;
 * shrinks go out before the growth they enable. */
static void equi_equal_shares(void **state)
{
    (void)state;
    sched_t *s = tu_engine(16, "equi");
    tu_running(s, 1, 0, 0, 16, 1, 16, SCHED_CONS_NONE, 0);
    tu_submit(s, (tu_job_t){.id = 2, .submit = 1, .type = SCHED_MALLEABLE, .nodes = 4, .min = 1,
                            .max = 16});
    const sched_action_t *a;
    size_t n = tu_pass(s, 1, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_SHRINK, 16, 12);
    assert_int_equal(a[0].reason, SCHED_R_MAKE_ROOM);
    tu_complete(s, a, n);
    n = tu_pass(s, 2, &a);
    /* job 2 starts on 4; job 1 (12) is then above the equal share of 8; job 2
     * grows only once the shrink is done */
    assert_int_equal(n, 2);
    check(tu_find(a, n, 2, SCHED_OP_START), SCHED_OP_START, 0, 4);
    check(tu_find(a, n, 1, SCHED_OP_SHRINK), SCHED_OP_SHRINK, 12, 8);
    assert_null(tu_find(a, n, 2, SCHED_OP_EXPAND));
    tu_complete(s, a, n);
    n = tu_pass(s, 3, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_EXPAND, 4, 8);
    sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(perf_shrinks_high_mtct_first),
        cmocka_unit_test(perf_grows_low_mtct_first),
        cmocka_unit_test(perf_constraint_need),
        cmocka_unit_test(perf_fallback_inefficient),
        cmocka_unit_test(dmr_grow_below_preferred),
        cmocka_unit_test(dmr_shrink_towards_preferred),
        cmocka_unit_test(dmr_grow_with_extra_only),
        cmocka_unit_test(mebf_flexible_start),
        cmocka_unit_test(mebf_shrink_feasibility),
        cmocka_unit_test(mebf_never_shrinks_higher_priority),
        cmocka_unit_test(mebf_expand_quarter_rule),
        cmocka_unit_test(mebf_backfill_below_request_keeps_reservation),
        cmocka_unit_test(equi_equal_shares),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
