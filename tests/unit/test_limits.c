/* Limits per user and per account in the engine (src/sched/limits.c): running jobs,
 * nodes, node-hours; a limited job waits out of the policies' sight (no reservation),
 * with the limit as its reason; expansions stop at a limit. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static sched_jobspec_t job(int64_t id, double submit, uint32_t user, uint32_t account, int nodes,
                           double walltime)
{
    sched_jobspec_t j = {.id = id, .submit = submit, .user = user, .account = account,
                         .type = SCHED_RIGID, .nodes = nodes, .walltime = walltime};
    return j;
}

static void submit(sched_t *s, sched_jobspec_t j)
{
    char err[SCHED_ERRLEN] = "";
    if (sched_submit(s, &j, err, sizeof(err)) != 0)
        fail_msg("submit %lld: %s", (long long)j.id, err);
}

static sched_reason_t reason(sched_t *s, int64_t id)
{
    sched_jobinfo_t info;
    assert_int_equal(sched_job_info(s, id, &info), 0);
    return info.reason;
}

/* A user may run one job: the second waits (JobsLimit) while another user's job,
 * behind both, starts; it starts once the first ends. */
static void running_jobs(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "fcfs");
    sched_limits_t l = {.max_running = 1};
    assert_int_equal(sched_set_user_limits(s, 1, &l), 0);
    submit(s, job(1, 0, 1, 0, 2, 100));
    submit(s, job(2, 1, 1, 0, 2, 100));
    submit(s, job(3, 2, 2, 0, 2, 100));
    const sched_action_t *a;
    size_t n = tu_pass(s, 3, &a);
    assert_int_equal(n, 2);
    assert_non_null(tu_find(a, n, 1, SCHED_OP_START));
    assert_non_null(tu_find(a, n, 3, SCHED_OP_START));
    assert_int_equal(reason(s, 2), SCHED_R_LIMIT_JOBS);
    uint32_t who = 99;
    assert_true(sched_limited(s, 2, &who));
    assert_int_equal(who, 0); /* its user's */
    assert_false(sched_limited(s, 3, &who));
    sched_remove(s, 1);
    n = tu_pass(s, 10, &a);
    assert_int_equal(n, 1);
    assert_non_null(tu_find(a, n, 2, SCHED_OP_START));
    /* the limit dropped: both run */
    l.max_running = 0;
    assert_int_equal(sched_set_user_limits(s, 1, &l), 0);
    submit(s, job(4, 11, 1, 0, 1, 100));
    n = tu_pass(s, 12, &a);
    assert_non_null(tu_find(a, n, 4, SCHED_OP_START));
    sched_destroy(s);
}

/* Limits set on users whose jobs wait already count from the next pass; a limit dropped
 * between two passes (the jobs still pointing at it) is neither used nor read after
 * it is freed (ASan), and set again counts again. */
static void limits_change_between_passes(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "fcfs");
    for (int64_t id = 1; id <= 4; id++)
        submit(s, job(id, (double)id, id <= 2 ? 1 : 2, 0, 1, 100));
    sched_limits_t one = {.max_running = 1}, none = {0};
    assert_int_equal(sched_set_user_limits(s, 1, &one), 0);
    assert_int_equal(sched_set_user_limits(s, 2, &one), 0);
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    assert_int_equal(n, 2); /* 1 and 3, one job of each user */
    assert_non_null(tu_find(a, n, 1, SCHED_OP_START));
    assert_non_null(tu_find(a, n, 3, SCHED_OP_START));
    assert_int_equal(reason(s, 2), SCHED_R_LIMIT_JOBS);
    /* dropped, set again, dropped: the jobs still see the state of the last pass */
    assert_int_equal(sched_set_user_limits(s, 1, &none), 0);
    assert_int_equal(sched_set_user_limits(s, 2, &none), 0);
    assert_int_equal(sched_set_user_limits(s, 2, &one), 0);
    uint32_t who = 99;
    assert_true(sched_limited(s, 2, &who));
    assert_true(sched_limited(s, 4, &who));
    n = tu_pass(s, 11, &a);
    assert_int_equal(n, 1); /* user 1's second job; user 2 is at its limit again */
    assert_non_null(tu_find(a, n, 2, SCHED_OP_START));
    assert_int_equal(reason(s, 4), SCHED_R_LIMIT_JOBS);
    sched_destroy(s);
}

/* A requeued job (a failure, preemption, `ductile requeue`) is still its user's: the
 * limit holds the user's second job while it runs again. */
static void requeued_job_keeps_its_limits(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "fcfs");
    sched_limits_t one = {.max_running = 1};
    assert_int_equal(sched_set_user_limits(s, 1, &one), 0);
    submit(s, job(1, 0, 1, 0, 1, 100));
    const sched_action_t *a;
    size_t n = tu_pass(s, 1, &a);
    assert_non_null(tu_find(a, n, 1, SCHED_OP_START));
    assert_int_equal(sched_requeue(s, 1, SCHED_CLASS_NORMAL), 0);
    submit(s, job(2, 2, 1, 0, 1, 100));
    n = tu_pass(s, 3, &a);
    assert_int_equal(n, 1);
    assert_non_null(tu_find(a, n, 1, SCHED_OP_START));
    assert_int_equal(reason(s, 2), SCHED_R_LIMIT_JOBS);
    sched_destroy(s);
}

/* Account 5 may hold 3 nodes, its sub-account 6's jobs included. */
static void account_nodes(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "easy");
    char err[SCHED_ERRLEN] = "";
    assert_int_equal(sched_set_account(s, 5, 0, 1, err, sizeof(err)), 0);
    assert_int_equal(sched_set_account(s, 6, 5, 1, err, sizeof(err)), 0);
    sched_limits_t l = {.max_nodes = 3};
    assert_int_equal(sched_set_account_limits(s, 5, &l), 0);
    submit(s, job(1, 0, 1, 6, 2, 100));
    submit(s, job(2, 1, 2, 5, 2, 100));
    submit(s, job(3, 2, 3, 6, 1, 100));
    const sched_action_t *a;
    size_t n = tu_pass(s, 3, &a);
    /* 1 (2 nodes) and 3 (1 node): 3 nodes; 2 would make 5 */
    assert_int_equal(n, 2);
    assert_null(tu_find(a, n, 2, SCHED_OP_START));
    assert_int_equal(reason(s, 2), SCHED_R_LIMIT_NODES);
    uint32_t who = 0;
    assert_true(sched_limited(s, 2, &who));
    assert_int_equal(who, 5);
    sched_destroy(s);
}

/* Node-hours: used + allowed to the running jobs + the new job's nodes x time limit. */
static void node_hours(void **state)
{
    (void)state;
    sched_t *s = tu_engine(16, "fcfs");
    sched_limits_t l = {.max_node_seconds = 1000};
    assert_int_equal(sched_set_user_limits(s, 1, &l), 0);
    submit(s, job(1, 0, 1, 0, 4, 100)); /* 400 */
    submit(s, job(2, 1, 1, 0, 4, 100)); /* 800 */
    submit(s, job(3, 2, 1, 0, 4, 100)); /* 1200: waits */
    const sched_action_t *a;
    size_t n = tu_pass(s, 0, &a);
    assert_int_equal(n, 2);
    assert_int_equal(reason(s, 3), SCHED_R_LIMIT_NODE_HOURS);
    /* a job without a time limit cannot start under a node-hours limit */
    sched_jobspec_t u = job(4, 3, 1, 0, 1, 0);
    submit(s, u);
    tu_pass(s, 4, &a);
    assert_int_equal(reason(s, 4), SCHED_R_LIMIT_NODE_HOURS);
    sched_destroy(s);
}

/* A limited head is out of sight: easy does not reserve for it, so a later job of
 * another user starts in order rather than waiting behind the reservation. */
static void no_reservation_for_a_limited_job(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "easy");
    sched_limits_t l = {.max_running = 1};
    assert_int_equal(sched_set_user_limits(s, 1, &l), 0);
    submit(s, job(1, 0, 1, 0, 2, 1000));
    const sched_action_t *a;
    tu_pass(s, 0, &a);
    submit(s, job(2, 1, 1, 0, 4, 100));  /* limited: would be the reserved head */
    submit(s, job(3, 2, 2, 0, 2, 5000)); /* ends after job 1: no backfill behind job 2 */
    size_t n = tu_pass(s, 3, &a);
    assert_non_null(tu_find(a, n, 3, SCHED_OP_START));
    sched_jobinfo_t info;
    assert_int_equal(sched_job_info(s, 2, &info), 0);
    assert_true(info.reserved_start < 0);
    assert_int_equal(info.reason, SCHED_R_LIMIT_JOBS);
    sched_destroy(s);
}

/* A malleable job grows up to its account's node limit, no further. */
static void expansion_stops_at_the_limit(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "egs-prma");
    char err[SCHED_ERRLEN] = "";
    assert_int_equal(sched_set_account(s, 5, 0, 1, err, sizeof(err)), 0);
    sched_limits_t l = {.max_nodes = 3};
    assert_int_equal(sched_set_account_limits(s, 5, &l), 0);
    sched_jobspec_t m = job(1, 0, 1, 5, 1, 1e6);
    m.type = SCHED_MALLEABLE;
    m.min_nodes = 1;
    m.max_nodes = 8;
    submit(s, m);
    const sched_action_t *a;
    size_t n = tu_pass(s, 0, &a);
    assert_non_null(tu_find(a, n, 1, SCHED_OP_START));
    tu_complete(s, a, n);
    for (int i = 1; i < 5; i++) {
        n = tu_pass(s, i, &a);
        tu_complete(s, a, n);
    }
    assert_int_equal(tu_size(s, 1), 3);
    /* without the limit it takes the cluster */
    l.max_nodes = 0;
    assert_int_equal(sched_set_account_limits(s, 5, &l), 0);
    for (int i = 5; i < 10; i++) {
        n = tu_pass(s, i, &a);
        tu_complete(s, a, n);
    }
    assert_int_equal(tu_size(s, 1), 8);
    sched_destroy(s);
}

static void bad_limits(void **state)
{
    (void)state;
    sched_t *s = tu_engine(2, "fcfs");
    sched_limits_t l = {.max_running = -1};
    assert_int_equal(sched_set_user_limits(s, 1, &l), -EINVAL);
    l = (sched_limits_t){.max_node_seconds = NAN};
    assert_int_equal(sched_set_account_limits(s, 3, &l), -EINVAL);
    l = (sched_limits_t){.max_nodes = 1};
    assert_int_equal(sched_set_account_limits(s, 0, &l), -EINVAL); /* the root */
    sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(running_jobs),
        cmocka_unit_test(limits_change_between_passes),
        cmocka_unit_test(requeued_job_keeps_its_limits),
        cmocka_unit_test(account_nodes),
        cmocka_unit_test(node_hours),
        cmocka_unit_test(no_reservation_for_a_limited_job),
        cmocka_unit_test(expansion_stops_at_the_limit),
        cmocka_unit_test(bad_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
