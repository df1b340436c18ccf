/* The power corridor in the engine: admission of starts (any policy with power=1, and
 * the `power` policy), and the `power` policy's redistribution of running malleable
 * jobs when the corridor changes (seed 002 §5.2, Algorithm 4; docs/power.md). */
#include <math.h>

#include "testutil.h"

static void running(sched_t *s, int64_t id, int first, int n, double watts)
{
    sched_jobspec_t spec = {.id = id, .submit = 0, .type = SCHED_MALLEABLE, .nodes = n,
                            .min_nodes = 1, .max_nodes = 14, .walltime = 100000,
                            .power_min = watts, .power_max = watts};
    int nodes[64];
    for (int i = 0; i < n; i++)
        nodes[i] = first + i;
    char err[SCHED_ERRLEN];
    if (sched_restore_running(s, &spec, 0, nodes, n, err, sizeof(err)) != 0)
        fail_msg("restore %lld: %s", (long long)id, err);
}

static void submit(sched_t *s, int64_t id, double t, sched_jobtype_t type, int n, int min,
                   double watts)
{
    sched_jobspec_t spec = {.id = id, .submit = t, .type = type, .nodes = n, .min_nodes = min,
                            .max_nodes = type == SCHED_MALLEABLE ? 14 : n, .walltime = 1000,
                            .power_min = watts, .power_max = watts};
    char err[SCHED_ERRLEN];
    assert_int_equal(sched_submit(s, &spec, err, sizeof(err)), 0);
}

static void set_corridor(sched_t *s, double lo, double hi)
{
    char err[SCHED_ERRLEN];
    assert_int_equal(sched_set_power(s, lo, hi, 71, 100, err, sizeof(err)), 0);
}

/* easy:power=1: a job that would take the draw above the upper bound waits (Power); a
 * malleable one starts smaller to fit; plain easy starts both */
static void admission(void **state)
{
    (void)state;
    for (int pw = 0; pw <= 1; pw++) {
        sched_t *s = tu_engine(14, pw ? "easy:power=1" : "easy");
        set_corridor(s, 0, 1700);
        /* idle: 14 x 71 = 994 W. A rigid Heat job of 4 nodes: +4 x 179 = 1710 > 1700 */
        submit(s, 1, 0, SCHED_RIGID, 4, 4, 250);
        /* a malleable Heat job of 4 (min 1): fits with 3 nodes (994 + 537 = 1531) */
        submit(s, 2, 1, SCHED_MALLEABLE, 4, 1, 250);
        const sched_action_t *a;
        size_t n = tu_pass(s, 10, &a);
        if (!pw) {
            assert_int_equal(n, 2);
            assert_int_equal(tu_size(s, 1), 4);
            sched_destroy(s);
            continue;
        }
        assert_int_equal(n, 1);
        assert_int_equal(tu_state(s, 1), SCHED_PENDING);
        sched_jobinfo_t info;
        assert_int_equal(sched_job_info(s, 1, &info), 0);
        assert_string_equal(sched_reason_name(info.reason), "Power");
        assert_int_equal(tu_size(s, 2), 3);
        double lo, hi;
        sched_power_estimate(s, &lo, &hi);
        assert_true(hi <= 1700);
        assert_true(fabs(hi - (11 * 71 + 3 * 250)) < 1e-6);
        sched_destroy(s);
    }
    /* the canonical spec says power=1 */
    sched_t *s = tu_engine(4, "easy:power=1");
    assert_string_equal(sched_policy_spec(s), "easy:power=1");
    sched_destroy(s);
    char err[SCHED_ERRLEN];
    assert_int_not_equal(sched_create(4, "easy:power=2", &s, err, sizeof(err)), 0);
}

/* power: Pi (170 W) and Heat (250 W) running on 7 nodes each; the corridor drops to
 * [1000, 1700]: the model's answer (Pi 5, Heat 1, 8 idle: L1) is carried out, shrinks
 * first; then it rises to [2500, 3500] and the idle nodes are filled */
static void corridor_change(void **state)
{
    (void)state;
    sched_t *s = tu_engine(14, "power");
    set_corridor(s, 1000, 4000);
    running(s, 1, 0, 7, 170);
    running(s, 2, 7, 7, 250);
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 1, &a), 0); /* inside: 1190 + 1750 = 2940 W */
    set_corridor(s, 1000, 1700);
    size_t n = tu_pass(s, 2, &a);
    assert_int_equal(n, 2);
    assert_int_equal(a[0].op, SCHED_OP_SHRINK);
    assert_int_equal(a[1].op, SCHED_OP_SHRINK);
    const sched_action_t *pi = tu_find(a, n, 1, SCHED_OP_SHRINK);
    const sched_action_t *heat = tu_find(a, n, 2, SCHED_OP_SHRINK);
    assert_non_null(pi);
    assert_non_null(heat);
    assert_int_equal(pi->nodes_after, 5);
    assert_int_equal(heat->nodes_after, 1);
    assert_string_equal(sched_reason_name(pi->reason), "PowerCorridor");
    /* nothing more while they adapt */
    assert_int_equal(tu_pass(s, 3, &a), 0);
    tu_complete(s, a, 0);
    sched_resize_done(s, 1, true);
    sched_resize_done(s, 2, true);
    double lo, hi;
    sched_power_estimate(s, &lo, &hi);
    assert_true(fabs(hi - 1668) < 1e-6);
    assert_int_equal(tu_pass(s, 4, &a), 0); /* inside, and no idle node fits the corridor */
    /* raised: the 8 idle nodes are filled within [2500, 3500] */
    set_corridor(s, 2500, 3500);
    n = tu_pass(s, 5, &a);
    assert_true(n >= 1);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(a[i].op, SCHED_OP_EXPAND);
    tu_complete(s, a, n);
    sched_power_estimate(s, &lo, &hi);
    assert_true(lo >= 2500 && hi <= 3500);
    assert_int_equal(sched_free_nodes(s), 0);
    sched_destroy(s);
}

/* A broken corridor that the running jobs alone cannot fix, but a waiting job can:
 * Pi alone cannot reach 2500 W; with the waiting Heat job started (moldable) it can */
static void waiting_job_helps(void **state)
{
    (void)state;
    for (int ncand = 0; ncand <= 2; ncand += 2) {
        sched_t *s = tu_engine(14, ncand ? "power:fill=0" : "power:waiting=0:admit=0:fill=0");
        set_corridor(s, 0, 10000);
        running(s, 1, 0, 10, 170);
        /* the Heat job waits for 8 nodes (only 4 are free; fill=0 keeps them free) */
        submit(s, 2, 0, SCHED_MALLEABLE, 8, 1, 250);
        const sched_action_t *a;
        tu_pass(s, 1, &a);
        assert_int_equal(tu_state(s, 2), SCHED_PENDING);
        set_corridor(s, 2500, 3500);
        size_t n = tu_pass(s, 2, &a);
        if (!ncand) {
            /* running jobs only: Pi on all 14 nodes is the closest (2380 W) */
            assert_int_equal(n, 1);
            assert_int_equal(a[0].op, SCHED_OP_EXPAND);
            assert_int_equal(a[0].nodes_after, 14);
            sched_destroy(s);
            continue;
        }
        const sched_action_t *st = tu_find(a, n, 2, SCHED_OP_START);
        assert_non_null(st);
        tu_complete(s, a, n);
        double lo, hi;
        sched_power_estimate(s, &lo, &hi);
        assert_true(lo >= 2500 && hi <= 3500);
        sched_destroy(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(admission),
        cmocka_unit_test(corridor_change),
        cmocka_unit_test(waiting_job_helps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
