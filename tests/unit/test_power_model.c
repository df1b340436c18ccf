/* The power corridor's node-redistribution model (src/sched/power.c): the LP instances
 * of research/seed-002a §7.3 (p_idle 71 W, Pi 170 W, Heat 250 W per node, sizes 1..14),
 * infeasible corridors, node constraints, rigid jobs as constants, and a comparison
 * with exhaustive enumeration on random small instances. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "sched/constraint.h"
#include "sched/power.h"

#define PI_W 170
#define HEAT_W 250

static sched_power_job_t job(int64_t id, int nodes, int min, int max, double pmin, double pmax)
{
    return (sched_power_job_t){.id = id, .nodes = nodes, .min_nodes = min, .max_nodes = max,
                               .p_min = pmin, .p_max = pmax};
}

static sched_power_solution_t solve(int n, double lo, double hi, sched_power_job_t *jobs, int nj,
                                    int *sizes)
{
    sched_power_problem_t p = {.nnodes = n, .p_idle = 71, .lower = lo, .upper = hi,
                               .jobs = jobs, .njobs = nj};
    sched_power_solution_t sol = {.sizes = sizes};
    char err[256];
    assert_int_equal(sched_power_solve(&p, &sol, err, sizeof(err)), 0);
    return sol;
}

/* L1: Pi and Heat, [1000, 1700]: unique optimum Pi 5, Heat 1, 8 idle, 1668 W */
static void l1_low_corridor(void **state)
{
    (void)state;
    sched_power_job_t j[] = {job(1, 7, 1, 14, PI_W, PI_W), job(2, 7, 1, 14, HEAT_W, HEAT_W)};
    int k[2];
    sched_power_solution_t s = solve(14, 1000, 1700, j, 2, k);
    assert_int_equal(s.status, SCHED_POWER_INSIDE);
    assert_int_equal(k[0], 5);
    assert_int_equal(k[1], 1);
    assert_int_equal(s.idle, 8);
    assert_true(fabs(s.draw_hi - 1668) < 1e-6);
}

/* L2: [2500, 3500]: no idle node; 12 optimal vectors, the one moving fewest nodes wins */
static void l2_high_corridor(void **state)
{
    (void)state;
    sched_power_job_t j[] = {job(1, 10, 1, 14, PI_W, PI_W), job(2, 2, 1, 14, HEAT_W, HEAT_W)};
    int k[2];
    sched_power_solution_t s = solve(14, 2500, 3500, j, 2, k);
    assert_int_equal(s.status, SCHED_POWER_INSIDE);
    assert_int_equal(s.idle, 0);
    assert_int_equal(k[0] + k[1], 14);
    assert_true(k[1] >= 2 && k[1] <= 13);
    assert_true(s.draw_lo >= 2500 && s.draw_hi <= 3500);
    /* from (10, 2) with 2 idle nodes: the 2 idle nodes go to the jobs, nothing is taken
     * from either (2 nodes moved, the fewest) */
    assert_true(k[0] >= 10 && k[1] >= 2);
    assert_int_equal(s.moved, 2);
}

/* L3: 3 Pi + 3 Heat, [1000, 1700]: infeasible (all at 1 node: 1828 W); the closest is
 * every job at 1 node, 128 W above the corridor */
static void l3_infeasible(void **state)
{
    (void)state;
    sched_power_job_t j[6];
    for (int i = 0; i < 6; i++)
        j[i] = job(i + 1, 2, 1, 14, i < 3 ? PI_W : HEAT_W, i < 3 ? PI_W : HEAT_W);
    int k[6];
    sched_power_solution_t s = solve(14, 1000, 1700, j, 6, k);
    assert_int_equal(s.status, SCHED_POWER_CLOSEST);
    for (int i = 0; i < 6; i++)
        assert_int_equal(k[i], 1);
    assert_int_equal(s.idle, 8);
    assert_true(fabs(s.draw_hi - 1828) < 1e-6);
    assert_true(fabs(s.outside - 128) < 1e-6);
}

/* L4: a waiting Heat job (m in [1, 4]) with Pi and Heat, [1700, 2500]: Pi 11, Heat 1,
 * m 1, 1 idle, 2441 W; L4b: without it, Pi 13, Heat 1, 2460 W */
static void l4_waiting_job(void **state)
{
    (void)state;
    sched_power_job_t j[] = {job(1, 4, 1, 14, PI_W, PI_W), job(2, 4, 1, 14, HEAT_W, HEAT_W),
                             job(3, 4, 1, 4, HEAT_W, HEAT_W)};
    int k[3];
    sched_power_solution_t s = solve(14, 1700, 2500, j, 3, k);
    assert_int_equal(s.status, SCHED_POWER_INSIDE);
    assert_int_equal(k[0], 11);
    assert_int_equal(k[1], 1);
    assert_int_equal(k[2], 1);
    assert_int_equal(s.idle, 1);
    assert_true(fabs(s.draw_hi - 2441) < 1e-6);
    s = solve(14, 1700, 2500, j, 2, k);
    assert_int_equal(s.status, SCHED_POWER_INSIDE);
    assert_int_equal(k[0], 13);
    assert_int_equal(k[1], 1);
    assert_int_equal(s.idle, 0);
    assert_true(fabs(s.draw_hi - 2460) < 1e-6);
}

/* L5/L6: power ranges (lower bound with p_min, upper with p_max) */
static void l5_l6_ranges(void **state)
{
    (void)state;
    sched_power_job_t j[] = {job(1, 6, 1, 8, 150, 200), job(2, 7, 2, 8, 90, 110),
                             job(3, 2, 1, 4, 100, 130)};
    int k[3];
    sched_power_solution_t s = solve(16, 1500, 2200, j, 2, k);
    assert_int_equal(s.status, SCHED_POWER_INSIDE);
    assert_int_equal(s.idle, 3);
    /* optima (5, 8) and (6, 7): from (6, 7) nothing moves */
    assert_int_equal(k[0], 6);
    assert_int_equal(k[1], 7);
    assert_int_equal(s.moved, 0);
    /* from (5, 3) both optima move 5 nodes: the rule (fewest idle, then fewest moved)
     * does not choose between them */
    j[0].nodes = 5;
    j[1].nodes = 3;
    s = solve(16, 1500, 2200, j, 2, k);
    assert_int_equal(s.idle, 3);
    assert_int_equal(s.moved, 5);
    assert_true((k[0] == 5 && k[1] == 8) || (k[0] == 6 && k[1] == 7));
    s = solve(16, 1500, 2200, j, 3, k);
    assert_int_equal(s.status, SCHED_POWER_INSIDE);
    assert_int_equal(s.idle, 0);
    assert_int_equal(k[0], 4);
    assert_int_equal(k[1], 8);
    assert_int_equal(k[2], 4);
    assert_true(fabs(s.draw_lo - 1720) < 1e-6);
    assert_true(fabs(s.draw_hi - 2200) < 1e-6);
}

/* L7: Pi alone cannot reach 3000 W (14 x 170 = 2380): closest, all 14 nodes;
 * L8: Heat alone: 14 nodes, 3500 W */
static void l7_l8_single(void **state)
{
    (void)state;
    sched_power_job_t pi = job(1, 3, 1, 14, PI_W, PI_W), heat = job(2, 3, 1, 14, HEAT_W, HEAT_W);
    int k[1];
    sched_power_solution_t s = solve(14, 3000, 3600, &pi, 1, k);
    assert_int_equal(s.status, SCHED_POWER_CLOSEST);
    assert_int_equal(k[0], 14);
    assert_true(fabs(s.outside - 620) < 1e-6);
    s = solve(14, 3000, 3600, &heat, 1, k);
    assert_int_equal(s.status, SCHED_POWER_INSIDE);
    assert_int_equal(k[0], 14);
    assert_true(fabs(s.draw_hi - 3500) < 1e-6);
}

/* Node constraints: a pof2 Pi job only takes 1, 2, 4, 8; an even Heat job 2, 4, ... */
static void constraint_sets(void **state)
{
    (void)state;
    sched_power_job_t j[] = {job(1, 4, 1, 14, PI_W, PI_W), job(2, 2, 2, 14, HEAT_W, HEAT_W)};
    j[0].constraint = SCHED_CONS_POF2;
    j[1].constraint = SCHED_CONS_EVEN;
    int k[2];
    sched_power_solution_t s = solve(14, 1000, 1700, j, 2, k);
    assert_true(cons_valid(k[0], SCHED_CONS_POF2));
    assert_true(cons_valid(k[1], SCHED_CONS_EVEN));
    assert_int_equal(s.status, SCHED_POWER_INSIDE);
    /* Pi 4 + Heat 2: 680 + 500 + 8 x 71 = 1748 > 1700; Pi 2 + Heat 2: 1498, 10 idle;
     * Pi 4 + Heat 2 does not fit, so Pi 2 (or Pi 1) with Heat 2 */
    assert_int_equal(k[1], 2);
    assert_true(s.draw_hi <= 1700 && s.draw_lo >= 1000);
    /* a job whose range holds no valid size is an error, not a crash */
    j[0].min_nodes = 5;
    j[0].max_nodes = 7;
    sched_power_problem_t p = {.nnodes = 14, .p_idle = 71, .lower = 0, .upper = 1e9, .jobs = j,
                               .njobs = 2};
    sched_power_solution_t sol = {.sizes = k};
    char err[256];
    assert_int_equal(sched_power_solve(&p, &sol, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "pof2"));
}

/* A rigid job is a constant: its nodes and power are taken as they are */
static void rigid_constant(void **state)
{
    (void)state;
    sched_power_job_t j[] = {job(1, 6, 6, 6, HEAT_W, HEAT_W), job(2, 2, 1, 14, PI_W, PI_W)};
    j[0].fixed = true;
    int k[2];
    /* 6 x 250 = 1500 fixed; the Pi job fills up to 2500: 1500 + k*170 + (8-k)*71 <= 2500 */
    sched_power_solution_t s = solve(14, 1700, 2500, j, 2, k);
    assert_int_equal(s.status, SCHED_POWER_INSIDE);
    assert_int_equal(k[0], 6);
    assert_int_equal(k[1], 4); /* 1500 + 680 + 4 x 71 = 2464; 5 Pi: 2563 */
    assert_int_equal(s.idle, 4);
}

/* Bad input is refused with a message */
static void bad_input(void **state)
{
    (void)state;
    sched_power_job_t j = job(1, 2, 3, 1, PI_W, PI_W);
    int k[1];
    sched_power_problem_t p = {.nnodes = 14, .p_idle = 71, .lower = 1000, .upper = 900,
                               .jobs = &j, .njobs = 1};
    sched_power_solution_t sol = {.sizes = k};
    char err[256];
    assert_int_equal(sched_power_solve(&p, &sol, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "lower bound"));
    p.upper = 2000;
    assert_int_equal(sched_power_solve(&p, &sol, err, sizeof(err)), -EINVAL);
    j = job(1, 2, 1, 4, 200, 100);
    assert_int_equal(sched_power_solve(&p, &sol, err, sizeof(err)), -EINVAL);
    /* more minimum nodes than the cluster has: no size vector at all */
    sched_power_job_t two[] = {job(1, 8, 8, 14, PI_W, PI_W), job(2, 8, 8, 14, PI_W, PI_W)};
    p.jobs = two;
    p.njobs = 2;
    int k2[2];
    sol.sizes = k2;
    assert_int_equal(sched_power_solve(&p, &sol, err, sizeof(err)), 0);
    assert_int_equal(sol.status, SCHED_POWER_NONE);
}

/* Exhaustive enumeration: least watts outside, then fewest idle, then fewest moved */
typedef struct best {
    double outside;
    int idle, moved;
} best_t;

static void enumerate(const sched_power_problem_t *p, int i, int *k, best_t *b)
{
    if (i == p->njobs) {
        int used = 0, moved = 0;
        for (int x = 0; x < p->njobs; x++) {
            used += k[x];
            moved += abs(k[x] - p->jobs[x].nodes);
        }
        if (used > p->nnodes)
            return;
        double lo, hi;
        sched_power_draw_of(p, k, &lo, &hi);
        double out = (lo < p->lower ? p->lower - lo : 0) + (hi > p->upper ? hi - p->upper : 0);
        int idle = p->nnodes - used;
        if (out < b->outside - 1e-6 ||
            (fabs(out - b->outside) <= 1e-6 &&
             (idle < b->idle || (idle == b->idle && moved < b->moved))))
            *b = (best_t){out, idle, moved};
        return;
    }
    const sched_power_job_t *j = &p->jobs[i];
    for (int v = j->min_nodes; v <= j->max_nodes; v++)
        if (cons_valid(v, j->constraint)) {
            k[i] = v;
            enumerate(p, i + 1, k, b);
        }
}

static void matches_enumeration(void **state)
{
    (void)state;
    srand(7);
    static const sched_constraint_t cons[] = {SCHED_CONS_NONE, SCHED_CONS_POF2, SCHED_CONS_EVEN,
                                              SCHED_CONS_ODD, SCHED_CONS_SQUARE};
    for (int round = 0; round < 300; round++) {
        int n = 4 + rand() % 9, nj = 1 + rand() % 3;
        sched_power_job_t j[3];
        for (int i = 0; i < nj; i++) {
            j[i].id = i + 1;
            j[i].fixed = false;
            j[i].constraint = cons[rand() % 5];
            j[i].min_nodes = 1 + rand() % 2;
            j[i].max_nodes = j[i].min_nodes + rand() % n;
            int v = cons_smallest_geq(j[i].min_nodes, j[i].constraint, j[i].min_nodes,
                                      j[i].max_nodes);
            if (!v) { /* no valid size: widen */
                j[i].constraint = SCHED_CONS_NONE;
                v = j[i].min_nodes;
            }
            j[i].nodes = v;
            j[i].p_min = 50 + rand() % 200;
            j[i].p_max = j[i].p_min + rand() % 60;
        }
        double lo = 200 + rand() % 1500, hi = lo + rand() % 900;
        sched_power_problem_t p = {.nnodes = n, .p_idle = 40 + rand() % 40, .lower = lo,
                                   .upper = hi, .jobs = j, .njobs = nj};
        int k[3], kk[3];
        best_t b = {INFINITY, 0, 0};
        enumerate(&p, 0, kk, &b);
        sched_power_solution_t sol = {.sizes = k};
        char err[256];
        assert_int_equal(sched_power_solve(&p, &sol, err, sizeof(err)), 0);
        if (isinf(b.outside)) {
            assert_int_equal(sol.status, SCHED_POWER_NONE);
            continue;
        }
        assert_int_equal(sol.status, b.outside > 1e-6 ? SCHED_POWER_CLOSEST : SCHED_POWER_INSIDE);
        assert_true(fabs(sol.outside - b.outside) < 1e-3);
        assert_int_equal(sol.idle, b.idle);
        assert_int_equal(sol.moved, b.moved);
        for (int i = 0; i < nj; i++) {
            assert_true(cons_valid(k[i], j[i].constraint));
            assert_true(k[i] >= j[i].min_nodes && k[i] <= j[i].max_nodes);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(l1_low_corridor),   cmocka_unit_test(l2_high_corridor),
        cmocka_unit_test(l3_infeasible),     cmocka_unit_test(l4_waiting_job),
        cmocka_unit_test(l5_l6_ranges),      cmocka_unit_test(l7_l8_single),
        cmocka_unit_test(constraint_sets),   cmocka_unit_test(rigid_constant),
        cmocka_unit_test(bad_input),         cmocka_unit_test(matches_enumeration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
