/* Operator resizes in the engine: the size an operator sets holds against the policy
 * (sched_set_hold) until released or until the hold ends; a pending operator request
 * says why it waits; requests outside the job's [min, max] are refused. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static char err[SCHED_ERRLEN];

/* Under fpsma-pwma an operator's shrink of a job that could use the idle nodes was
 * undone by the next pass (the job grown back 0.4 s later). Held, it stays. */
static void shrink_held_against_fpsma(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 4, 1, 4, SCHED_CONS_NONE, 0);
    assert_int_equal(sched_request_resize(s, 1, 2, true, err, sizeof(err)), 0);
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].op, SCHED_OP_SHRINK);
    assert_int_equal(a[0].nodes_after, 2);
    assert_int_equal(a[0].reason, SCHED_R_OPERATOR);
    tu_complete(s, a, n);
    assert_int_equal(sched_set_hold(s, 1, 10 + 100), 0);
    assert_int_equal(tu_pass(s, 10.4, &a), 0); /* not grown back */
    assert_int_equal(tu_size(s, 1), 2);
    sched_jobinfo_t info;
    assert_int_equal(sched_job_info(s, 1, &info), 0);
    assert_true(info.hold_until == 110);
    assert_false(sched_hold_due(s, 109));
    assert_true(sched_hold_due(s, 110));
    /* the hold ends: the policy may grow it again */
    n = tu_pass(s, 111, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].op, SCHED_OP_EXPAND);
    assert_int_equal(a[0].nodes_after, 4);
    tu_complete(s, a, n);
    assert_int_equal(sched_job_info(s, 1, &info), 0);
    assert_true(info.hold_until == 0);
    assert_false(sched_hold_due(s, 1e9));
    sched_destroy(s);
}

/* Held until released (INFINITY); released, the policy takes over at once. */
static void hold_until_released(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 2, 1, 4, SCHED_CONS_NONE, 0);
    assert_int_equal(sched_set_hold(s, 1, INFINITY), 0);
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 1e6, &a), 0);
    assert_false(sched_hold_due(s, 1e9));
    assert_int_equal(sched_set_hold(s, 1, 0), 0);
    size_t n = tu_pass(s, 1e6 + 1, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].op, SCHED_OP_EXPAND);
    assert_int_equal(sched_set_hold(s, 99, 1), -ENOENT);
    sched_destroy(s);
}

/* A held job is not shrunk to make room for a waiting job either. */
static void held_not_shrunk_for_waiting(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 4, 1, 4, SCHED_CONS_NONE, 0);
    assert_int_equal(sched_set_hold(s, 1, INFINITY), 0);
    tu_submit(s, (tu_job_t){.id = 2, .submit = 1, .type = SCHED_RIGID, .nodes = 2});
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 10, &a), 0);
    assert_int_equal(tu_state(s, 2), SCHED_PENDING);
    sched_destroy(s);
}

/* A pending operator request says why it waits, keeps the policy off the job, and
 * can be dropped. */
static void pending_request_reasons(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 2, 1, 4, SCHED_CONS_NONE, 0);
    tu_running(s, 2, 1, 2, 2, 2, 2, SCHED_CONS_NONE, 0);
    assert_int_equal(sched_request_resize(s, 1, 4, true, err, sizeof(err)), 0);
    sched_jobinfo_t info;
    assert_int_equal(sched_job_info(s, 1, &info), 0);
    assert_int_equal(info.request, 4);
    assert_true(info.request_op);
    assert_int_equal(info.request_wait, SCHED_W_NODES);
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 10, &a), 0);
    assert_int_equal(sched_job_info(s, 1, &info), 0);
    assert_int_equal(info.request, 4); /* still asked for */
    assert_int_equal(sched_cancel_request(s, 1), 1);
    assert_int_equal(sched_cancel_request(s, 1), 0);
    assert_int_equal(sched_job_info(s, 1, &info), 0);
    assert_int_equal(info.request, 0);
    sched_destroy(s);
}

/* An application that attached once and now declines offers in advance (inhibit) or
 * went away: the operator's request waits for it. A job whose application never
 * attached (a plain script) is resized at once, as before. */
static void request_waits_for_inhibited_app(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "easy");
    sched_jobspec_t spec = {.id = 1, .type = SCHED_MALLEABLE, .nodes = 1, .min_nodes = 1,
                            .max_nodes = 4, .wait_adaptive = true};
    assert_int_equal(sched_submit(s, &spec, err, sizeof(err)), 0);
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 0, &a), 1);
    /* never attached: granted */
    assert_int_equal(sched_request_resize(s, 1, 2, true, err, sizeof(err)), 0);
    size_t n = tu_pass(s, 1, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].op, SCHED_OP_EXPAND);
    tu_complete(s, a, n);
    /* attached, then inhibits */
    sched_set_adaptive(s, 1, true);
    sched_set_adaptive(s, 1, false);
    assert_int_equal(sched_request_resize(s, 1, 3, true, err, sizeof(err)), 0);
    assert_int_equal(tu_pass(s, 2, &a), 0);
    sched_jobinfo_t info;
    assert_int_equal(sched_job_info(s, 1, &info), 0);
    assert_int_equal(info.request_wait, SCHED_W_NOT_ADAPTIVE);
    sched_set_adaptive(s, 1, true);
    n = tu_pass(s, 3, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].nodes_after, 3);
    assert_int_equal(sched_job_info(s, 1, &info), 0);
    assert_int_equal(info.request, 0);
    /* while it resizes, a new request waits for that resize */
    assert_int_equal(sched_request_resize(s, 1, 2, true, err, sizeof(err)), 0);
    assert_int_equal(sched_job_info(s, 1, &info), 0);
    assert_int_equal(info.request_wait, SCHED_W_RESIZING);
    sched_destroy(s);
}

/* The operator stays within the job's own --min-nodes/--max-nodes. */
static void request_outside_min_max_refused(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "easy");
    tu_running(s, 1, 0, 0, 2, 2, 4, SCHED_CONS_NONE, 0);
    assert_int_equal(sched_request_resize(s, 1, 5, true, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "[2, 4]"));
    assert_int_equal(sched_request_resize(s, 1, 1, true, err, sizeof(err)), -EINVAL);
    assert_int_equal(sched_request_resize(s, 1, 4, true, err, sizeof(err)), 0);
    /* and within what its application accepts */
    assert_int_equal(sched_set_app_limits(s, 1, 2, 3, 0, -1), 0);
    assert_int_equal(sched_request_resize(s, 1, 4, true, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "its application accepts only 2 to 3 nodes"));
    assert_int_equal(sched_request_resize(s, 1, 5, true, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "[2, 4]"));
    sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shrink_held_against_fpsma),
        cmocka_unit_test(hold_until_released),
        cmocka_unit_test(held_not_shrunk_for_waiting),
        cmocka_unit_test(pending_request_reasons),
        cmocka_unit_test(request_waits_for_inhibited_app),
        cmocka_unit_test(request_outside_min_max_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
