/* FPSMA and EGS under PRMA and PWMA: the worked examples of seed 000 (research
 * extraction §8.3-8.7; "T" items are the thesis's own statements). */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define INF_WALL 0 /* no walltime: unbounded remaining time */

static tu_job_t waiting(int64_t id, double submit, int nodes)
{
    return (tu_job_t){.id = id, .submit = submit, .type = SCHED_RIGID, .nodes = nodes};
}

static void check(const sched_action_t *a, sched_op_t op, int before, int after)
{
    assert_non_null(a);
    assert_int_equal(a->op, op);
    assert_int_equal(a->nodes_before, before);
    assert_int_equal(a->nodes_after, after);
    assert_int_equal(a->nnodes, abs(after - before));
}

/* T: pof2 job on 2 nodes with 10 idle grows to 8, leaving 4 idle. */
static void fpsma_grow_pof2(void **state)
{
    (void)state;
    sched_t *s = tu_engine(12, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 2, 1, 16, SCHED_CONS_POF2, INF_WALL);
    const sched_action_t *a;
    size_t n = tu_pass(s, 100, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_EXPAND, 2, 8);
    assert_int_equal(a[0].nodes[0], 2); /* lowest free nodes */
    assert_int_equal(a[0].nodes[5], 7);
    assert_int_equal(a[0].reason, SCHED_R_IDLE_NODES);
    assert_int_equal(sched_free_nodes(s), 4);
    assert_int_equal(tu_state(s, 1), SCHED_RESIZING);
    sched_destroy(s);
}

/* T: pof2 job on 4 nodes shrinks to 2 for a waiting one-node job. */
static void fpsma_shrink_pof2(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 4, 1, 4, SCHED_CONS_POF2, INF_WALL);
    tu_submit(s, waiting(2, 10, 1));
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_SHRINK, 4, 2);
    assert_int_equal(a[0].reason, SCHED_R_MAKE_ROOM);
    assert_int_equal(a[0].for_job, 2);
    assert_int_equal(a[0].nodes[0], 2); /* highest ranks leave */
    assert_int_equal(a[0].nodes[1], 3);
    sched_jobinfo_t info;
    sched_job_info(s, 2, &info);
    assert_int_equal(info.reason, SCHED_R_RESIZE_PENDING);
    /* Nodes stay allocated until the job confirms. */
    assert_int_equal(sched_free_nodes(s), 0);
    tu_complete(s, a, n);
    assert_int_equal(sched_free_nodes(s), 2);
    n = tu_pass(s, 11, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_START, 0, 1);
    sched_destroy(s);
}

/* D: grow visits jobs in start order and stops at max: A(4, max 8) +4, B(2) +6. */
static void fpsma_grow_order(void **state)
{
    (void)state;
    sched_t *s = tu_engine(16, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 4, 1, 8, SCHED_CONS_NONE, INF_WALL);
    tu_running(s, 2, 10, 4, 2, 1, 16, SCHED_CONS_NONE, INF_WALL);
    const sched_action_t *a;
    size_t n = tu_pass(s, 20, &a);
    assert_int_equal(n, 2);
    check(tu_find(a, n, 1, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 4, 8);
    check(tu_find(a, n, 2, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 2, 8);
    assert_int_equal(sched_free_nodes(s), 0);
    sched_destroy(s);
}

/* T (§7.3 t=100): only 12 of 16 reclaimable for a 16-node job: no shrink at all. */
static void fpsma_all_or_nothing(void **state)
{
    (void)state;
    sched_t *s = tu_engine(16, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 16, 4, 16, SCHED_CONS_NONE, INF_WALL);
    tu_submit(s, waiting(2, 100, 16));
    tu_submit(s, waiting(3, 200, 6)); /* only the head counts (T, §7.3 t=200) */
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 200, &a), 0);
    sched_jobinfo_t info;
    sched_job_info(s, 2, &info);
    assert_int_equal(info.reason, SCHED_R_RESOURCES);
    sched_job_info(s, 3, &info);
    assert_int_equal(info.reason, SCHED_R_PRIORITY);
    sched_destroy(s);
}

/* T: J2 on 16 (min 4) shrinks to 10 so the 6-node head job starts. */
static void fpsma_make_room(void **state)
{
    (void)state;
    sched_t *s = tu_engine(16, "fpsma-pwma");
    tu_running(s, 2, 700, 0, 16, 4, 16, SCHED_CONS_NONE, INF_WALL);
    tu_submit(s, (tu_job_t){.id = 3, .submit = 200, .type = SCHED_MALLEABLE, .nodes = 6,
                            .min = 4, .max = 16});
    const sched_action_t *a;
    size_t n = tu_pass(s, 700, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_SHRINK, 16, 10);
    tu_complete(s, a, n);
    n = tu_pass(s, 701, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_START, 0, 6);
    assert_int_equal(a[0].job, 3);
    assert_int_equal(a[0].nodes[0], 10);
    sched_destroy(s);
}

/* T: latest started shrinks first: J4 (10) gives 6, J3 (6) gives 2 for an 8-node job. */
static void fpsma_shrink_order(void **state)
{
    (void)state;
    sched_t *s = tu_engine(16, "fpsma-pwma");
    tu_running(s, 3, 900, 0, 6, 4, 16, SCHED_CONS_NONE, INF_WALL);
    tu_running(s, 4, 901, 6, 10, 4, 16, SCHED_CONS_NONE, INF_WALL);
    tu_submit(s, waiting(5, 400, 8));
    const sched_action_t *a;
    size_t n = tu_pass(s, 1000, &a);
    assert_int_equal(n, 2);
    check(tu_find(a, n, 4, SCHED_OP_SHRINK), SCHED_OP_SHRINK, 10, 4);
    check(tu_find(a, n, 3, SCHED_OP_SHRINK), SCHED_OP_SHRINK, 6, 4);
    sched_destroy(s);
}

/* T: earliest started grows first: J4 (4 nodes, started before J5) takes all 4 idle. */
static void fpsma_grow_earliest(void **state)
{
    (void)state;
    sched_t *s = tu_engine(16, "fpsma-pwma");
    tu_running(s, 4, 901, 0, 4, 4, 16, SCHED_CONS_NONE, INF_WALL);
    tu_running(s, 5, 1000, 4, 8, 4, 16, SCHED_CONS_NONE, INF_WALL);
    /* nodes 12-15 idle */
    const sched_action_t *a;
    size_t n = tu_pass(s, 1300, &a);
    assert_int_equal(n, 1);
    check(tu_find(a, n, 4, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 4, 8);
    sched_destroy(s);
}

/* D: partial contributions: C gives 1, A gives 4 (need 8 - 3 idle = 5). */
static void fpsma_partial(void **state)
{
    (void)state;
    sched_t *s = tu_engine(16, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 8, 2, 16, SCHED_CONS_NONE, INF_WALL);
    tu_running(s, 3, 50, 8, 5, 4, 16, SCHED_CONS_NONE, INF_WALL);
    tu_submit(s, waiting(9, 60, 8));
    const sched_action_t *a;
    size_t n = tu_pass(s, 100, &a);
    assert_int_equal(n, 2);
    check(tu_find(a, n, 3, SCHED_OP_SHRINK), SCHED_OP_SHRINK, 5, 4);
    check(tu_find(a, n, 1, SCHED_OP_SHRINK), SCHED_OP_SHRINK, 8, 4);
    sched_destroy(s);
}

/* D: 45 s left (<= 60 s guard): neither grown nor shrunk. */
static void fpsma_guard(void **state)
{
    (void)state;
    sched_t *s = tu_engine(16, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 8, 2, 16, SCHED_CONS_NONE, 100);
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 55, &a), 0);
    tu_submit(s, waiting(2, 55, 12));
    assert_int_equal(tu_pass(s, 55, &a), 0);
    /* With the guard lowered to 30 s the same job grows and may shrink. */
    sched_destroy(s);
    s = tu_engine(16, "fpsma-pwma:guard=30");
    tu_running(s, 1, 0, 0, 8, 2, 16, SCHED_CONS_NONE, 100);
    tu_submit(s, waiting(2, 55, 12));
    size_t n = tu_pass(s, 55, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_SHRINK, 8, 4);
    sched_destroy(s);
}

/* T: no new decision while a job is resizing; the next event decides. */
static void no_decision_while_adapting(void **state)
{
    (void)state;
    sched_t *s = tu_engine(16, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 4, 1, 16, SCHED_CONS_NONE, INF_WALL);
    tu_running(s, 2, 1, 4, 4, 4, 4, SCHED_CONS_NONE, INF_WALL);
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_EXPAND, 4, 12);
    assert_int_equal(sched_remove(s, 2), 0); /* job 2 ends, 4 nodes free */
    assert_true(sched_any_resizing(s));
    assert_int_equal(tu_pass(s, 11, &a), 0);
    assert_int_equal(sched_resize_done(s, 1, true), 0);
    n = tu_pass(s, 12, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_EXPAND, 12, 16);
    sched_destroy(s);
}

/* A job whose application cannot take part in a resize is left alone. */
static void not_adaptive_left_alone(void **state)
{
    (void)state;
    sched_t *s = tu_engine(12, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 2, 1, 12, SCHED_CONS_NONE, INF_WALL);
    assert_int_equal(sched_set_adaptive(s, 1, false), 0);
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 1, &a), 0);
    assert_int_equal(sched_set_adaptive(s, 1, true), 0);
    size_t n = tu_pass(s, 2, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_EXPAND, 2, 12);
    assert_int_equal(sched_set_adaptive(s, 99, true), -ENOENT);
    sched_destroy(s);
    /* a job submitted with wait_adaptive starts, but is not grown in that pass */
    s = tu_engine(4, "fpsma-pwma");
    sched_jobspec_t spec = {.id = 5, .type = SCHED_MALLEABLE, .nodes = 1, .min_nodes = 1,
                            .max_nodes = 4, .wait_adaptive = true};
    char err[256];
    assert_int_equal(sched_submit(s, &spec, err, sizeof(err)), 0);
    n = tu_pass(s, 1, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_START, 0, 1);
    sched_set_adaptive(s, 5, true);
    n = tu_pass(s, 2, &a);
    check(&a[0], SCHED_OP_EXPAND, 1, 4);
    sched_destroy(s);
}

/* T: PRMA never shrinks, even when the head job waits. */
static void prma_never_shrinks(void **state)
{
    (void)state;
    sched_t *s = tu_engine(16, "fpsma-prma");
    tu_running(s, 2, 700, 0, 16, 4, 16, SCHED_CONS_NONE, INF_WALL);
    tu_submit(s, waiting(3, 200, 6));
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 700, &a), 0);
    sched_destroy(s);
}

/* T (evaluation setting): under PRMA a job is expanded at most twice. */
static void prma_expansion_cap(void **state)
{
    (void)state;
    const char *specs[] = {"fpsma-prma", "fpsma-prma:max_expand=0", "egs-prma"};
    int expected_third[] = {0, 1, 0};
    for (int k = 0; k < 3; k++) {
        sched_t *s = tu_engine(4, specs[k]);
        for (int node = 1; node < 4; node++)
            sched_set_node_available(s, node, false);
        tu_running(s, 1, 0, 0, 1, 1, 4, SCHED_CONS_NONE, INF_WALL);
        const sched_action_t *a;
        for (int node = 1; node < 4; node++) {
            sched_set_node_available(s, node, true);
            size_t n = tu_pass(s, node, &a);
            if (node < 3) {
                assert_int_equal(n, 1);
                check(&a[0], SCHED_OP_EXPAND, node, node + 1);
                tu_complete(s, a, n);
            } else {
                assert_int_equal(n, (size_t)expected_third[k]);
            }
        }
        sched_destroy(s);
    }
}

/* T: EGS gives two idle nodes to two jobs, one each. */
static void egs_grow_equal(void **state)
{
    (void)state;
    sched_t *s = tu_engine(10, "egs-pwma");
    tu_running(s, 1, 0, 0, 4, 1, 10, SCHED_CONS_NONE, INF_WALL);
    tu_running(s, 2, 5, 4, 4, 1, 10, SCHED_CONS_NONE, INF_WALL);
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    assert_int_equal(n, 2);
    check(tu_find(a, n, 1, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 4, 5);
    check(tu_find(a, n, 2, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 4, 5);
    sched_destroy(s);
}

/* D: 3 idle over A and B: floor 1 each and the remainder to the earliest: +2, +1
 * (a verbatim ceil() would hand out 5 > 3). S6: 4, 2, 6 with 7 idle -> 7, 4, 8. */
static void egs_grow_remainder(void **state)
{
    (void)state;
    sched_t *s = tu_engine(11, "egs-pwma");
    tu_running(s, 1, 0, 0, 4, 1, 11, SCHED_CONS_NONE, INF_WALL);
    tu_running(s, 2, 5, 4, 4, 1, 11, SCHED_CONS_NONE, INF_WALL);
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    check(tu_find(a, n, 1, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 4, 6);
    check(tu_find(a, n, 2, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 4, 5);
    sched_destroy(s);

    s = tu_engine(19, "egs-pwma");
    tu_running(s, 1, 0, 0, 4, 1, 19, SCHED_CONS_NONE, INF_WALL);
    tu_running(s, 2, 1, 4, 2, 1, 19, SCHED_CONS_NONE, INF_WALL);
    tu_running(s, 3, 2, 6, 6, 1, 19, SCHED_CONS_NONE, INF_WALL);
    n = tu_pass(s, 10, &a);
    assert_int_equal(n, 3);
    check(tu_find(a, n, 1, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 4, 7);
    check(tu_find(a, n, 2, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 2, 4);
    check(tu_find(a, n, 3, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 6, 8);
    sched_destroy(s);
}

/* T: J3 (6, min 4) and J4 (10, min 4) cannot give 4 each for an 8-node job: no
 * shrink. Once J3 ends, J4 gives 2 (10 -> 8). */
static void egs_refuses_unequal(void **state)
{
    (void)state;
    sched_t *s = tu_engine(16, "egs-pwma");
    tu_running(s, 3, 900, 0, 6, 4, 16, SCHED_CONS_NONE, INF_WALL);
    tu_running(s, 4, 901, 6, 10, 4, 16, SCHED_CONS_NONE, INF_WALL);
    tu_submit(s, waiting(5, 400, 8));
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 1000, &a), 0);
    assert_int_equal(sched_remove(s, 3), 0);
    size_t n = tu_pass(s, 1100, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_SHRINK, 10, 8);
    tu_complete(s, a, n);
    n = tu_pass(s, 1101, &a);
    check(tu_find(a, n, 5, SCHED_OP_START), SCHED_OP_START, 0, 8);
    sched_destroy(s);
}

/* D: shrink remainder from the latest started: need 7 -> B 6->2, A 10->7.
 * S6: 4, 6, 8 give 2 each for a 6-node job. */
static void egs_shrink_remainder(void **state)
{
    (void)state;
    sched_t *s = tu_engine(16, "egs-pwma");
    tu_running(s, 1, 0, 0, 10, 2, 16, SCHED_CONS_NONE, INF_WALL);
    tu_running(s, 2, 5, 10, 6, 2, 16, SCHED_CONS_NONE, INF_WALL);
    tu_submit(s, waiting(3, 6, 7));
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    assert_int_equal(n, 2);
    check(tu_find(a, n, 2, SCHED_OP_SHRINK), SCHED_OP_SHRINK, 6, 2);
    check(tu_find(a, n, 1, SCHED_OP_SHRINK), SCHED_OP_SHRINK, 10, 7);
    sched_destroy(s);

    s = tu_engine(18, "egs-pwma");
    tu_running(s, 1, 0, 0, 4, 1, 18, SCHED_CONS_NONE, INF_WALL);
    tu_running(s, 2, 1, 4, 6, 1, 18, SCHED_CONS_NONE, INF_WALL);
    tu_running(s, 3, 2, 10, 8, 1, 18, SCHED_CONS_NONE, INF_WALL);
    tu_submit(s, waiting(4, 3, 6));
    n = tu_pass(s, 10, &a);
    assert_int_equal(n, 3);
    check(tu_find(a, n, 1, SCHED_OP_SHRINK), SCHED_OP_SHRINK, 4, 2);
    check(tu_find(a, n, 2, SCHED_OP_SHRINK), SCHED_OP_SHRINK, 6, 4);
    check(tu_find(a, n, 3, SCHED_OP_SHRINK), SCHED_OP_SHRINK, 8, 6);
    sched_destroy(s);
}

/* T: the seeds' EGS ignores node constraints (a pof2 job may end on 3 nodes):
 * constraints=0. By default EGS keeps the constraint (docs/policies.md). */
static void egs_constraints(void **state)
{
    (void)state;
    sched_t *s = tu_engine(3, "egs-pwma:constraints=0");
    tu_running(s, 1, 0, 0, 2, 1, 4, SCHED_CONS_POF2, INF_WALL);
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_EXPAND, 2, 3);
    sched_destroy(s);
    s = tu_engine(3, "egs-pwma");
    tu_running(s, 1, 0, 0, 2, 1, 4, SCHED_CONS_POF2, INF_WALL);
    assert_int_equal(tu_pass(s, 10, &a), 0);
    sched_destroy(s);
    /* even jobs on 4 and 6 with 4 idle: 2 each keeps both even */
    s = tu_engine(14, "egs-pwma");
    tu_running(s, 1, 0, 0, 4, 2, 14, SCHED_CONS_EVEN, INF_WALL);
    tu_running(s, 2, 1, 4, 6, 2, 14, SCHED_CONS_EVEN, INF_WALL);
    n = tu_pass(s, 10, &a);
    check(tu_find(a, n, 1, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 4, 6);
    check(tu_find(a, n, 2, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 6, 8);
    sched_destroy(s);
    /* shrink for 3 nodes from odd jobs 7 and 5 (min 1): shares 2 and 1 become 5 and 3 */
    s = tu_engine(12, "egs-pwma");
    tu_running(s, 1, 0, 0, 7, 1, 12, SCHED_CONS_ODD, INF_WALL);
    tu_running(s, 2, 1, 7, 5, 1, 12, SCHED_CONS_ODD, INF_WALL);
    tu_submit(s, (tu_job_t){.id = 3, .submit = 2, .type = SCHED_RIGID, .nodes = 3});
    n = tu_pass(s, 10, &a);
    check(tu_find(a, n, 2, SCHED_OP_SHRINK), SCHED_OP_SHRINK, 5, 3);
    check(tu_find(a, n, 1, SCHED_OP_SHRINK), SCHED_OP_SHRINK, 7, 5);
    sched_destroy(s);
}

/* T: under PRMA, when an 8-node job starts after a 10-node one ends, the 2 left-over
 * nodes go to running jobs (FPSMA: all to the earliest; EGS: one each). */
static void prma_leftovers(void **state)
{
    (void)state;
    const char *pol[] = {"fpsma-prma:max_expand=0", "egs-prma:max_expand=0"};
    for (int k = 0; k < 2; k++) {
        sched_t *s = tu_engine(16, pol[k]);
        tu_running(s, 3, 200, 0, 6, 4, 16, SCHED_CONS_NONE, INF_WALL);
        tu_running(s, 4, 300, 6, 10, 4, 16, SCHED_CONS_NONE, INF_WALL);
        tu_submit(s, (tu_job_t){.id = 5, .submit = 400, .type = SCHED_MALLEABLE, .nodes = 8,
                                .min = 4, .max = 16});
        const sched_action_t *a;
        assert_int_equal(tu_pass(s, 400, &a), 0);
        sched_remove(s, 4);
        size_t n = tu_pass(s, 1200, &a);
        check(tu_find(a, n, 5, SCHED_OP_START), SCHED_OP_START, 0, 8);
        if (k == 0) {
            assert_int_equal(n, 2);
            check(tu_find(a, n, 3, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 6, 8);
        } else {
            assert_int_equal(n, 3);
            check(tu_find(a, n, 3, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 6, 7);
            check(tu_find(a, n, 5, SCHED_OP_EXPAND), SCHED_OP_EXPAND, 8, 9);
        }
        sched_destroy(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fpsma_grow_pof2),
        cmocka_unit_test(fpsma_shrink_pof2),
        cmocka_unit_test(fpsma_grow_order),
        cmocka_unit_test(fpsma_all_or_nothing),
        cmocka_unit_test(fpsma_make_room),
        cmocka_unit_test(fpsma_shrink_order),
        cmocka_unit_test(fpsma_grow_earliest),
        cmocka_unit_test(fpsma_partial),
        cmocka_unit_test(fpsma_guard),
        cmocka_unit_test(no_decision_while_adapting),
        cmocka_unit_test(not_adaptive_left_alone),
        cmocka_unit_test(prma_never_shrinks),
        cmocka_unit_test(prma_expansion_cap),
        cmocka_unit_test(egs_grow_equal),
        cmocka_unit_test(egs_grow_remainder),
        cmocka_unit_test(egs_refuses_unequal),
        cmocka_unit_test(egs_shrink_remainder),
        cmocka_unit_test(egs_constraints),
        cmocka_unit_test(prma_leftovers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
