/* Reservations in the engine (src/sched/resv.c): jobs whose estimate reaches into one
 * keep off its nodes; its own jobs wait for it, then run on its nodes only; a malleable
 * job is shrunk to honour one that begins, and does not grow into one ahead; never
 * two on a node at once. That every policy keeps to them is test_property's
 * reservations_never_overlapped. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static void submit(sched_t *s, int64_t id, double t, int nodes, double wall, int64_t resv)
{
    sched_jobspec_t j = {.id = id, .submit = t, .type = SCHED_RIGID, .nodes = nodes,
                         .walltime = wall, .reservation = resv};
    char err[SCHED_ERRLEN] = "";
    if (sched_submit(s, &j, err, sizeof(err)) != 0)
        fail_msg("submit %lld: %s", (long long)id, err);
}

static void reserve(sched_t *s, int64_t id, double start, double end, int lo, int hi)
{
    int nodes[64], n = 0;
    for (int i = lo; i <= hi; i++)
        nodes[n++] = i;
    char err[SCHED_ERRLEN] = "";
    if (sched_add_reservation(s, id, start, end, nodes, n, true, err, sizeof(err)) != 0)
        fail_msg("reservation %lld: %s", (long long)id, err);
}

static bool holds(sched_t *s, int64_t id, int node)
{
    sched_jobinfo_t info;
    if (sched_job_info(s, id, &info) < 0)
        return false;
    for (int i = 0; i < info.nalloc; i++)
        if (info.nodes[i] == node)
            return true;
    return false;
}

/* Nodes 2-3 reserved from 100 to 200 on 4 nodes. */
static void keeps_off(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fcfs");
    reserve(s, 7, 100, 200, 2, 3);
    submit(s, 1, 0, 4, 50, 0);  /* ends by 100: the whole cluster */
    const sched_action_t *a;
    size_t n = tu_pass(s, 0, &a);
    assert_non_null(tu_find(a, n, 1, SCHED_OP_START));
    sched_remove(s, 1);
    submit(s, 2, 1, 4, 150, 0); /* would reach into it: waits */
    n = tu_pass(s, 1, &a);
    assert_int_equal(n, 0);
    sched_remove(s, 2);
    submit(s, 3, 2, 2, 150, 0); /* on nodes 0-1 */
    submit(s, 4, 3, 1, 0, 0);   /* no time limit: reaches into every one ahead */
    n = tu_pass(s, 3, &a);
    assert_non_null(tu_find(a, n, 3, SCHED_OP_START));
    assert_true(holds(s, 3, 0) && holds(s, 3, 1));
    assert_null(tu_find(a, n, 4, SCHED_OP_START)); /* nodes 0-1 are taken */
    sched_remove(s, 3);
    n = tu_pass(s, 4, &a);
    assert_non_null(tu_find(a, n, 4, SCHED_OP_START));
    assert_false(holds(s, 4, 2) || holds(s, 4, 3));
    /* once it ended, its nodes are everyone's again */
    submit(s, 5, 5, 2, 0, 0);
    n = tu_pass(s, 250, &a);
    assert_non_null(tu_find(a, n, 5, SCHED_OP_START));
    sched_destroy(s);
}

/* A job of the reservation waits for it, then runs on its nodes only. */
static void members(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "easy");
    reserve(s, 7, 100, 200, 2, 3);
    submit(s, 1, 0, 2, 50, 7);
    const sched_action_t *a;
    size_t n = tu_pass(s, 50, &a);
    assert_int_equal(n, 0);
    sched_jobinfo_t info;
    assert_int_equal(sched_job_info(s, 1, &info), 0);
    assert_int_equal(info.reason, SCHED_R_RESV_WAIT);
    assert_string_equal(sched_reason_name(info.reason), "Reservation");
    n = tu_pass(s, 100, &a);
    assert_non_null(tu_find(a, n, 1, SCHED_OP_START));
    assert_true(holds(s, 1, 2) && holds(s, 1, 3));
    /* three nodes: more than its reservation has, never */
    submit(s, 2, 101, 3, 50, 7);
    n = tu_pass(s, 102, &a);
    assert_null(tu_find(a, n, 2, SCHED_OP_START));
    sched_destroy(s);
}

/* A malleable job on all four nodes gives back the reserved ones when it begins, and a
 * malleable job does not grow into one ahead of it. */
static void malleable(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "egs-prma");
    char err[SCHED_ERRLEN] = "";
    sched_jobspec_t m = {.id = 1, .submit = 0, .type = SCHED_MALLEABLE, .nodes = 4,
                         .min_nodes = 1, .max_nodes = 4, .walltime = 1e6};
    int all[] = {0, 1, 2, 3};
    assert_int_equal(sched_restore_running(s, &m, 0, all, 4, err, sizeof(err)), 0);
    reserve(s, 7, 100, 200, 2, 3);
    const sched_action_t *a;
    size_t n = tu_pass(s, 50, &a);
    assert_null(tu_find(a, n, 1, SCHED_OP_SHRINK)); /* not begun yet */
    n = tu_pass(s, 100, &a);
    const sched_action_t *sh = tu_find(a, n, 1, SCHED_OP_SHRINK);
    assert_non_null(sh);
    assert_int_equal(sh->nodes_after, 2);
    assert_int_equal(sh->reason, SCHED_R_RESERVATION);
    tu_complete(s, a, n);
    assert_false(holds(s, 1, 2) || holds(s, 1, 3));
    sched_destroy(s);

    /* growth keeps off a reservation ahead */
    s = tu_engine(4, "egs-prma");
    int two[] = {0, 1};
    m.nodes = 2;
    assert_int_equal(sched_restore_running(s, &m, 0, two, 2, err, sizeof(err)), 0);
    reserve(s, 8, 500, 600, 2, 3);
    for (int t = 1; t < 5; t++) {
        n = tu_pass(s, t, &a);
        tu_complete(s, a, n);
    }
    assert_int_equal(tu_size(s, 1), 2);
    sched_destroy(s);
}

static void never_two(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "fcfs");
    reserve(s, 1, 100, 200, 0, 3);
    int nodes[] = {3, 4};
    char err[SCHED_ERRLEN] = "";
    assert_true(sched_add_reservation(s, 2, 150, 250, nodes, 2, false, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "reservation 1"));
    assert_int_equal(sched_add_reservation(s, 2, 200, 250, nodes, 2, false, err, sizeof(err)), 0);
    assert_true(sched_add_reservation(s, 3, 10, 5, nodes, 2, false, err, sizeof(err)) < 0);
    /* picking: free nodes not in a reservation then, highest first */
    int out[8];
    assert_int_equal(sched_pick_reservation_nodes(s, 120, 180, 3, out), 3);
    assert_true(out[0] == 7 && out[1] == 6 && out[2] == 5);
    assert_int_equal(sched_pick_reservation_nodes(s, 120, 180, 8, out), 4); /* 0-3 are taken */
    assert_int_equal(sched_remove_reservation(s, 1), 0);
    assert_int_equal(sched_remove_reservation(s, 1), -ENOENT);
    sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keeps_off),   cmocka_unit_test(members),
        cmocka_unit_test(malleable),   cmocka_unit_test(never_two),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
