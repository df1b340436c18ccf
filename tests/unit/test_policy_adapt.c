/* What the application accepts (src/sched/adapt.c): its size limits narrow the
 * policy's offers, its offer interval spaces them, and a declined change backs off. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>

static void check(const sched_action_t *a, sched_op_t op, int before, int after)
{
    assert_non_null(a);
    assert_int_equal(a->op, op);
    assert_int_equal(a->nodes_before, before);
    assert_int_equal(a->nodes_after, after);
}

/* Issue 9: an application that accepts 1..2 nodes in a job allowed 4, under
 * fpsma-pwma with 3 idle nodes, is offered 1 -> 2 (was 1 -> 4, declined for ever). */
static void limits_narrow_the_offer(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 1, 1, 4, SCHED_CONS_NONE, 0);
    assert_int_equal(sched_set_app_limits(s, 1, 1, 2, 0, -1), 0);
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_EXPAND, 1, 2);
    tu_complete(s, a, n);
    assert_int_equal(tu_size(s, 1), 2);
    assert_int_equal(tu_pass(s, 11, &a), 0); /* at its maximum: nothing more */
    /* max 0 gives the job's own maximum back */
    assert_int_equal(sched_set_app_limits(s, 1, -1, 0, -1, -1), 0);
    n = tu_pass(s, 12, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_EXPAND, 2, 4);
    /* limits outside the job's own are cut to them; unknown jobs are refused */
    sched_destroy(s);
    s = tu_engine(8, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 2, 2, 4, SCHED_CONS_NONE, 0);
    assert_int_equal(sched_set_app_limits(s, 1, 1, 16, 0, -1), 0);
    n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_EXPAND, 2, 4);
    assert_int_equal(sched_set_app_limits(s, 99, 1, 2, 0, -1), -ENOENT);
    sched_destroy(s);
}

/* A raised minimum keeps make-room shrinks above it. */
static void limits_floor_shrinks(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 4, 1, 4, SCHED_CONS_NONE, 0);
    assert_int_equal(sched_set_app_limits(s, 1, 3, 0, 0, -1), 0);
    tu_submit(s, (tu_job_t){.id = 2, .submit = 1, .type = SCHED_RIGID, .nodes = 2});
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    /* 4 -> 2 would start job 2; the application takes no fewer than 3 */
    for (size_t i = 0; i < n; i++)
        if (a[i].op == SCHED_OP_SHRINK)
            assert_true(a[i].nodes_after >= 3);
    sched_destroy(s);
}

/* A declined expand is not offered again before the back-off; the back-off doubles
 * with each decline of the same change, and a commit resets it. */
static void decline_backs_off(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fpsma-pwma");
    sched_set_backoff(s, 10, 25);
    tu_running(s, 1, 0, 0, 1, 1, 4, SCHED_CONS_NONE, 0);
    const sched_action_t *a;
    double t = 100;
    size_t n = tu_pass(s, t, &a);
    check(&a[0], SCHED_OP_EXPAND, 1, 4);
    assert_int_equal(sched_resize_declined(s, 1, t), 0);
    assert_int_equal(sched_resize_done(s, 1, false), 0);
    assert_int_equal(tu_pass(s, t + 9.9, &a), 0);
    n = tu_pass(s, t + 10, &a); /* first back-off: 10 s */
    assert_int_equal(n, 1);
    t += 10;
    sched_resize_declined(s, 1, t);
    sched_resize_done(s, 1, false);
    assert_int_equal(tu_pass(s, t + 19.9, &a), 0);
    assert_int_equal(tu_pass(s, t + 20, &a), 1); /* doubled: 20 s */
    t += 20;
    sched_resize_declined(s, 1, t);
    sched_resize_done(s, 1, false);
    assert_int_equal(tu_pass(s, t + 24.9, &a), 0);
    n = tu_pass(s, t + 25, &a); /* 40 s capped at 25 */
    assert_int_equal(n, 1);
    tu_complete(s, a, n); /* accepted at last */
    assert_int_equal(tu_size(s, 1), 4);
    /* Declines counted on the simulated 1 -> 4 over 10 minutes: 10, 20, then every 25 s
     * (was one per pass). */
    sched_destroy(s);
    s = tu_engine(4, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 1, 1, 4, SCHED_CONS_NONE, 0);
    int offers = 0;
    for (double now = 0; now < 600; now += 0.1)
        if (tu_pass(s, now, &a) == 1) {
            offers++;
            sched_resize_declined(s, 1, now);
            sched_resize_done(s, 1, false);
        }
    /* default 10 s doubling to 300 s: 0, 10, 30, 70, 150, 310 */
    assert_int_equal(offers, 6);
    sched_destroy(s);
}

/* Limits that arrive after a decline (an MPI leader declined 1 -> 4 before it said it
 * takes 2 at most) lift the back-off: 1 -> 2 comes at the next pass. */
static void new_limits_lift_backoff(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 1, 1, 4, SCHED_CONS_NONE, 0);
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    check(&a[0], SCHED_OP_EXPAND, 1, 4);
    sched_resize_declined(s, 1, 10);
    sched_resize_done(s, 1, false);
    assert_int_equal(tu_pass(s, 11, &a), 0);
    sched_set_app_limits(s, 1, 1, 2, 0, -1);
    n = tu_pass(s, 12, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_EXPAND, 1, 2);
    sched_destroy(s);
}

/* A decline holds back only that change: the other direction is still made. */
static void decline_holds_one_direction(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 2, 1, 4, SCHED_CONS_NONE, 0);
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    check(&a[0], SCHED_OP_EXPAND, 2, 4);
    sched_resize_declined(s, 1, 10);
    sched_resize_done(s, 1, false);
    tu_submit(s, (tu_job_t){.id = 2, .submit = 11, .type = SCHED_RIGID, .nodes = 3});
    n = tu_pass(s, 11, &a);
    assert_non_null(tu_find(a, n, 1, SCHED_OP_SHRINK));
    sched_destroy(s);
}

/* The application's offer interval: no policy resize within it after the last. */
static void interval_spaces_resizes(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 1, 1, 4, SCHED_CONS_NONE, 0);
    sched_set_app_limits(s, 1, -1, 2, -1, 30);
    const sched_action_t *a;
    size_t n = tu_pass(s, 100, &a);
    check(&a[0], SCHED_OP_EXPAND, 1, 2);
    tu_complete(s, a, n);
    sched_set_app_limits(s, 1, -1, 0, -1, -1); /* now it would take 4 */
    assert_int_equal(tu_pass(s, 129, &a), 0);
    n = tu_pass(s, 130, &a);
    assert_int_equal(n, 1);
    check(&a[0], SCHED_OP_EXPAND, 2, 4);
    sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(limits_narrow_the_offer),
        cmocka_unit_test(limits_floor_shrinks),
        cmocka_unit_test(decline_backs_off),
        cmocka_unit_test(decline_holds_one_direction),
        cmocka_unit_test(new_limits_lift_backoff),
        cmocka_unit_test(interval_spaces_resizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
