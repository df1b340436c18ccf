/* Preemption in the engine (src/sched/preempt.c): a waiting job of a higher tier that
 * may preempt stops a lower tier's job that may run again, or shrinks a malleable one;
 * never a job of its own tier, one that may not be stopped, or for nothing (all or
 * nothing). */
#include <stdio.h>
#include <string.h>

#include "testutil.h"

static void running(sched_t *s, int64_t id, int tier, sched_jobtype_t type, int first, int n,
                    bool no_interrupt)
{
    sched_jobspec_t j = {.id = id, .submit = 0, .type = type, .nodes = n, .min_nodes = 1,
                         .max_nodes = n, .walltime = 1000, .tier = tier,
                         .no_interrupt = no_interrupt};
    int nodes[16];
    for (int i = 0; i < n; i++)
        nodes[i] = first + i;
    char err[SCHED_ERRLEN] = "";
    if (sched_restore_running(s, &j, 0, nodes, n, err, sizeof(err)) != 0)
        fail_msg("restore %lld: %s", (long long)id, err);
}

static void waiting(sched_t *s, int64_t id, int tier, int n, bool preempt)
{
    sched_jobspec_t j = {.id = id, .submit = 1, .type = SCHED_RIGID, .nodes = n,
                         .walltime = 100, .tier = tier, .preempt = preempt};
    char err[SCHED_ERRLEN] = "";
    if (sched_submit(s, &j, err, sizeof(err)) != 0)
        fail_msg("submit %lld: %s", (long long)id, err);
}

static void stops_a_lower_tier(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fcfs");
    running(s, 1, 0, SCHED_RIGID, 0, 4, false);
    waiting(s, 2, 2, 2, true);
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    const sched_action_t *x = tu_find(a, n, 1, SCHED_OP_INTERRUPT);
    assert_non_null(x);
    assert_int_equal(x->reason, SCHED_R_PREEMPTED);
    assert_int_equal(x->for_job, 2);
    sched_jobinfo_t info;
    assert_int_equal(sched_job_info(s, 2, &info), 0);
    assert_string_equal(sched_reason_name(info.reason), "Preempting");
    tu_complete(s, a, n); /* stopped: it waits again */
    n = tu_pass(s, 11, &a);
    assert_non_null(tu_find(a, n, 2, SCHED_OP_START));
    assert_int_equal(tu_state(s, 1), SCHED_PENDING);
    sched_destroy(s);
}

static void shrinks_a_malleable_one(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fcfs");
    running(s, 1, 0, SCHED_MALLEABLE, 0, 4, false);
    waiting(s, 2, 1, 3, true);
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    const sched_action_t *x = tu_find(a, n, 1, SCHED_OP_SHRINK);
    assert_non_null(x);
    assert_int_equal(x->nodes_after, 1);
    assert_int_equal(x->reason, SCHED_R_PREEMPTED);
    assert_null(tu_find(a, n, 1, SCHED_OP_INTERRUPT));
    tu_complete(s, a, n);
    n = tu_pass(s, 11, &a);
    assert_non_null(tu_find(a, n, 2, SCHED_OP_START));
    assert_int_equal(tu_size(s, 1), 1); /* it runs on */
    sched_destroy(s);
}

static void never_for_nothing(void **state)
{
    (void)state;
    const sched_action_t *a;
    size_t n;
    /* its own tier */
    sched_t *s = tu_engine(4, "fcfs");
    running(s, 1, 2, SCHED_RIGID, 0, 4, false);
    waiting(s, 2, 2, 2, true);
    n = tu_pass(s, 10, &a);
    assert_int_equal(n, 0);
    sched_destroy(s);
    /* a job that may not be stopped (no --requeue) */
    s = tu_engine(4, "fcfs");
    running(s, 1, 0, SCHED_RIGID, 0, 4, true);
    waiting(s, 2, 2, 2, true);
    n = tu_pass(s, 10, &a);
    assert_int_equal(n, 0);
    sched_destroy(s);
    /* a partition that does not preempt */
    s = tu_engine(4, "fcfs");
    running(s, 1, 0, SCHED_RIGID, 0, 4, false);
    waiting(s, 2, 2, 2, false);
    n = tu_pass(s, 10, &a);
    assert_int_equal(n, 0);
    sched_destroy(s);
    /* all or nothing: 4 nodes wanted, 2 could be freed */
    s = tu_engine(4, "fcfs");
    running(s, 1, 0, SCHED_RIGID, 0, 2, false);
    running(s, 3, 0, SCHED_RIGID, 2, 2, true);
    waiting(s, 2, 2, 4, true);
    n = tu_pass(s, 10, &a);
    assert_int_equal(n, 0);
    sched_destroy(s);
}

/* The lowest tier and the latest started go first; only as many as it needs. */
static void order(void **state)
{
    (void)state;
    sched_t *s = tu_engine(6, "fcfs");
    running(s, 1, 1, SCHED_RIGID, 0, 2, false);
    running(s, 3, 0, SCHED_RIGID, 2, 2, false);
    running(s, 4, 0, SCHED_RIGID, 4, 2, false);
    waiting(s, 2, 2, 2, true);
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    /* ties of tier 0: both started at 0; the higher id counts as later */
    assert_non_null(tu_find(a, n, 4, SCHED_OP_INTERRUPT));
    sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stops_a_lower_tier),
        cmocka_unit_test(shrinks_a_malleable_one),
        cmocka_unit_test(never_for_nothing),
        cmocka_unit_test(order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
