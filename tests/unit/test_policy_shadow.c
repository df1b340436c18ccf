/* Reservations when several running jobs end at the same time (issue 8): every job
 * whose estimated end is at or before the shadow time frees its nodes then, so the
 * reserved job's extra nodes do not depend on which of the simultaneous ends is
 * counted first (the by-end index breaks ties by job id). Each case runs with the
 * two jobs that end together in both id orders. */
#include "testutil.h"

#include <string.h>

/* Running rigid job `id` on nodes [first, first + n), started at 0, ending at `end`. */
static void running_rigid(sched_t *s, int64_t id, int first, int n, double end)
{
    sched_jobspec_t spec = {.id = id, .type = SCHED_RIGID, .nodes = n, .walltime = end};
    int nodes[64];
    for (int i = 0; i < n; i++)
        nodes[i] = first + i;
    char err[SCHED_ERRLEN] = "";
    if (sched_restore_running(s, &spec, 0, nodes, n, err, sizeof(err)) != 0)
        fail_msg("restore %lld: %s", (long long)id, err);
}

/* Malleable job 3 on nodes 8-9 (min 1, preferred 2, max 4), started at 0. */
static void running_malleable(sched_t *s, double walltime)
{
    sched_jobspec_t m = {.id = 3, .type = SCHED_MALLEABLE, .nodes = 2, .min_nodes = 1,
                         .max_nodes = 4, .pref_nodes = 2, .walltime = walltime};
    int nodes[] = {8, 9};
    char err[SCHED_ERRLEN] = "";
    if (sched_restore_running(s, &m, 0, nodes, 2, err, sizeof(err)) != 0)
        fail_msg("restore 3: %s", err);
}

/* Two running jobs of sizes a and b on nodes [0, a + b), ids 1 and 2 (swapped with
 * `swap`), both ending at 100; or, overdue, at 100 and 90 with the pass at 150. */
typedef struct pair {
    int a, b;
    bool swap;    /* the job on the first nodes has the higher id */
    bool overdue; /* both ends lie before now: the shadow time is now */
} pair_t;

static const pair_t pairs[] = {
    {4, 4, false, false}, {4, 4, true, false}, {2, 6, false, false}, {2, 6, true, false},
    {3, 5, false, false}, {5, 3, false, false}, {4, 4, false, true}, {4, 4, true, true},
};
#define NPAIRS (sizeof(pairs) / sizeof(pairs[0]))

static double setup_pair(sched_t *s, const pair_t *p)
{
    int64_t ida = p->swap ? 2 : 1, idb = p->swap ? 1 : 2;
    running_rigid(s, ida, 0, p->a, 100);
    running_rigid(s, idb, p->a, p->b, p->overdue ? 90 : 100);
    return p->overdue ? 150 : 1;
}

static void print_case(const char *pol, const pair_t *p, int k)
{
    print_message("%s: a=%d b=%d swap=%d overdue=%d backfill=%d\n", pol, p->a, p->b, p->swap,
                  p->overdue, k);
}

/* 16 nodes, 8 free, 8 busy until the shadow time. Head (id 10) needs 10: extra =
 * 8 + 8 - 10 = 6 whatever the order. A 6-node job running past the shadow time
 * starts; a 7-node one (7 free now) does not. Stopping at the first end that makes
 * room gave extra 8 + 4 - 10 = 2 (or 0 or 4, by id order). */
static void backfill_with_simultaneous_ends(void **state, const char *pol)
{
    (void)state;
    for (size_t c = 0; c < NPAIRS; c++) {
        for (int k = 6; k <= 7; k++) {
            const pair_t *p = &pairs[c];
            print_case(pol, p, k);
            sched_t *s = tu_engine(16, pol);
            double now = setup_pair(s, p);
            tu_submit(s, (tu_job_t){.id = 10, .submit = 0.5, .type = SCHED_RIGID, .nodes = 10,
                                    .walltime = 50});
            tu_submit(s, (tu_job_t){.id = 11, .submit = 0.6, .type = SCHED_RIGID, .nodes = k,
                                    .walltime = 200});
            const sched_action_t *a;
            size_t n = tu_pass(s, now, &a);
            if (k == 6) {
                assert_int_equal(n, 1);
                const sched_action_t *st = tu_find(a, n, 11, SCHED_OP_START);
                assert_non_null(st);
                assert_int_equal(st->nodes_after, 6);
                assert_int_equal(st->reason, SCHED_R_BACKFILL);
            } else {
                assert_int_equal(n, 0);
                assert_int_equal(tu_state(s, 11), SCHED_PENDING);
            }
            sched_jobinfo_t info;
            assert_int_equal(sched_job_info(s, 10, &info), 0);
            assert_true(info.reserved_start == (p->overdue ? 150 : 100));
            sched_destroy(s);
        }
    }
}

static void easy_simultaneous_ends(void **state) { backfill_with_simultaneous_ends(state, "easy"); }

/* Conservative's profile already adds every end at the same time into one step:
 * this guards that it stays so (it passed before the EASY fix too). */
static void conservative_simultaneous_ends(void **state)
{
    backfill_with_simultaneous_ends(state, "conservative");
}

/* A job ending before the shadow time and two ending at it: all three count.
 * 16 nodes, 8 free; C (1 node) ends at 50, A (3) and B (4) at 100; head needs 10:
 * shadow 100, extra 8 + 1 + 3 + 4 - 10 = 6 (stopping at A gave 2). */
static void easy_ends_before_and_at_shadow(void **state)
{
    (void)state;
    for (int swap = 0; swap < 2; swap++) {
        sched_t *s = tu_engine(16, "easy");
        running_rigid(s, 3, 0, 1, 50);
        running_rigid(s, swap ? 2 : 1, 1, 3, 100);
        running_rigid(s, swap ? 1 : 2, 4, 4, 100);
        tu_submit(s, (tu_job_t){.id = 10, .submit = 0.5, .type = SCHED_RIGID, .nodes = 10,
                                .walltime = 50});
        tu_submit(s, (tu_job_t){.id = 11, .submit = 0.6, .type = SCHED_RIGID, .nodes = 6,
                                .walltime = 200});
        tu_submit(s, (tu_job_t){.id = 12, .submit = 0.7, .type = SCHED_RIGID, .nodes = 1,
                                .walltime = 200});
        const sched_action_t *a;
        size_t n = tu_pass(s, 1, &a);
        assert_int_equal(n, 1); /* 11 takes all 6 extra nodes; 12 would delay 10 */
        assert_non_null(tu_find(a, n, 11, SCHED_OP_START));
        assert_int_equal(tu_state(s, 12), SCHED_PENDING);
        sched_destroy(s);
    }
}

/* The malleable policies that grow only with the reserved job's extra nodes. 12
 * nodes: A and B (8 nodes together) end at 100, malleable job 3 runs on 2 nodes
 * (max 4, submitted first), 2 free. The head needs 5 (dmr: a rigid 5; mebf: a
 * malleable 8 with min 5, which mebf may start on 5): extra = 2 + 8 - 5 = 5, so job 3
 * grows with both free nodes, 2 -> 4. Stopping at the first end gave extra
 * 2 + a - 5, i.e. 1 (grow to 3) with a = 4, 0 (no growth) with a = 3. */
static void grow_with_simultaneous_ends(const char *pol)
{
    for (size_t c = 0; c < NPAIRS; c++) {
        const pair_t *p = &pairs[c];
        if (p->a + p->b != 8)
            continue;
        print_case(pol, p, 0);
        sched_t *s = tu_engine(12, pol);
        double now = setup_pair(s, p);
        running_malleable(s, 1000);
        if (strcmp(pol, "mebf") == 0)
            tu_submit(s, (tu_job_t){.id = 10, .submit = 0.5, .type = SCHED_MALLEABLE,
                                    .nodes = 8, .min = 5, .max = 8, .walltime = 50});
        else
            tu_submit(s, (tu_job_t){.id = 10, .submit = 0.5, .type = SCHED_RIGID, .nodes = 5,
                                    .walltime = 50});
        const sched_action_t *a;
        size_t n = tu_pass(s, now, &a);
        assert_int_equal(n, 1);
        const sched_action_t *g = tu_find(a, n, 3, SCHED_OP_EXPAND);
        assert_non_null(g);
        assert_int_equal(g->nodes_before, 2);
        assert_int_equal(g->nodes_after, 4);
        sched_jobinfo_t info;
        assert_int_equal(sched_job_info(s, 10, &info), 0);
        assert_true(info.reserved_start == (p->overdue ? 150 : 100));
        sched_destroy(s);
    }
}

/* Jobs with no walltime (here all three running) all end at the same, infinite,
 * time: the head has no reservation, and the extra nodes count all of them too
 * (stopping at the first gave 2 + 4 - 5 = 1: job 3 grew to 3 only). */
static void dmr_unknown_ends(void **state)
{
    (void)state;
    for (int swap = 0; swap < 2; swap++) {
        sched_t *s = tu_engine(12, "dmr");
        running_rigid(s, swap ? 2 : 1, 0, 4, 0);
        running_rigid(s, swap ? 1 : 2, 4, 4, 0);
        running_malleable(s, 0);
        tu_submit(s, (tu_job_t){.id = 10, .submit = 0.5, .type = SCHED_RIGID, .nodes = 5,
                                .walltime = 50});
        const sched_action_t *a;
        size_t n = tu_pass(s, 1, &a);
        assert_int_equal(n, 1);
        const sched_action_t *g = tu_find(a, n, 3, SCHED_OP_EXPAND);
        assert_non_null(g);
        assert_int_equal(g->nodes_after, 4);
        sched_jobinfo_t info;
        assert_int_equal(sched_job_info(s, 10, &info), 0);
        assert_true(info.reserved_start == -1);
        sched_destroy(s);
    }
}

static void dmr_simultaneous_ends(void **state)
{
    (void)state;
    grow_with_simultaneous_ends("dmr");
}

static void mebf_simultaneous_ends(void **state)
{
    (void)state;
    grow_with_simultaneous_ends("mebf");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(easy_simultaneous_ends),
        cmocka_unit_test(easy_ends_before_and_at_shadow),
        cmocka_unit_test(conservative_simultaneous_ends),
        cmocka_unit_test(dmr_simultaneous_ends),
        cmocka_unit_test(dmr_unknown_ends),
        cmocka_unit_test(mebf_simultaneous_ends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
