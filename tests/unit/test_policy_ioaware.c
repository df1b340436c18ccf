/* io-aware (seed 003 §4.2): the intensity definitions, candidate selection over an
 * alpha sweep under both readings of the workload intensity, alpha = 0 as queue order,
 * and reconfiguration at scheduling points. The expected values are the acceptance
 * scenarios AS-8 to AS-11 of ../shared/research/seed-003-admire-d33.md §8. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-4

/* A job submitted with one intensity at every size. */
static void submit_io(sched_t *s, int64_t id, double t, sched_jobtype_t type, int nodes, int min,
                      int max, int pref, sched_constraint_t cons, double io)
{
    sched_jobspec_t spec = {.id = id, .submit = t, .type = type, .nodes = nodes, .min_nodes = min,
                            .max_nodes = max, .pref_nodes = pref, .constraint = cons,
                            .io_intensity = io};
    char err[SCHED_ERRLEN] = "";
    if (sched_submit(s, &spec, err, sizeof(err)))
        fail_msg("submit %lld: %s", (long long)id, err);
}

static void running(sched_t *s, int64_t id, sched_jobtype_t type, int first, int n, int min,
                    int max, sched_constraint_t cons, double io)
{
    sched_jobspec_t spec = {.id = id, .submit = (double)id, .type = type, .nodes = n,
                            .min_nodes = min, .max_nodes = max, .constraint = cons,
                            .io_intensity = io};
    int nodes[1024];
    for (int i = 0; i < n; i++)
        nodes[i] = first + i;
    char err[SCHED_ERRLEN] = "";
    if (sched_restore_running(s, &spec, 0, nodes, n, err, sizeof(err)))
        fail_msg("restore %lld: %s", (long long)id, err);
}

/* AS-8: a job's intensity, S, and W under both denominators. */
static void intensity_definitions(void **state)
{
    (void)state;
    sched_t *s = tu_engine(10, "fcfs");
    double w, sys;
    sched_io_balance(s, false, &w, &sys);
    assert_true(w == 0 && sys == 0); /* nothing runs, nothing waits */
    running(s, 1, SCHED_RIGID, 0, 4, 4, 4, SCHED_CONS_NONE, 0.5);
    running(s, 2, SCHED_RIGID, 4, 2, 2, 2, SCHED_CONS_NONE, 30.0 / 120); /* replaced below */
    double b = 0.1;
    assert_int_equal(sched_set_io_intensity(s, 2, 2, &b, 1), 0);
    sched_io_balance(s, false, &w, &sys);
    assert_float_equal(sys, 2.2 / 6, EPS);
    submit_io(s, 3, 5, SCHED_RIGID, 2, 0, 0, 0, SCHED_CONS_NONE, 0.9);
    sched_io_balance(s, true, &w, &sys);
    assert_float_equal(w, 0.40, EPS);
    assert_float_equal(sys, 2.2 / 6, EPS);
    sched_io_balance(s, false, &w, &sys);
    assert_float_equal(w, 0.50, EPS);
    /* bad values are refused */
    double bad = 1.5;
    assert_int_equal(sched_set_io_intensity(s, 2, 2, &bad, 1), -EINVAL);
    assert_int_equal(sched_set_io_intensity(s, 99, 2, &b, 1), -ENOENT);
    sched_jobspec_t spec = {.id = 4, .type = SCHED_RIGID, .nodes = 1, .io_intensity = -0.1};
    char err[SCHED_ERRLEN] = "";
    assert_int_equal(sched_submit(s, &spec, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "I/O intensity"));
    sched_destroy(s);
}

/* AS-9's cluster: R1 runs on 4 of 10 nodes at 0.8; Q1 (4 nodes, 0.9), Q2 (4, 0.1) and
 * the malleable Q3 (2-4 nodes at 0.2, 0.25, 0.3; preferred 3) wait. The first start of
 * one pass. */
static const sched_action_t *as9_first(const char *policy, sched_t **out)
{
    sched_t *s = tu_engine(10, policy);
    running(s, 100, SCHED_RIGID, 0, 4, 4, 4, SCHED_CONS_NONE, 0.8);
    submit_io(s, 1, 1, SCHED_RIGID, 4, 0, 0, 0, SCHED_CONS_NONE, 0.9);
    submit_io(s, 2, 2, SCHED_RIGID, 4, 0, 0, 0, SCHED_CONS_NONE, 0.1);
    submit_io(s, 3, 3, SCHED_MALLEABLE, 3, 2, 4, 3, SCHED_CONS_NONE, 0);
    double q3[] = {0.2, 0.25, 0.3};
    assert_int_equal(sched_set_io_intensity(s, 3, 2, q3, 3), 0);
    double w, sys;
    sched_io_balance(s, false, &w, &sys);
    assert_float_equal(w, 7.95 / 15, EPS);
    assert_float_equal(sys, 0.8, EPS);
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    assert_true(n >= 1);
    assert_int_equal(a[0].op, SCHED_OP_START);
    *out = s;
    return a;
}

static void alpha_sweep_weighted(void **state)
{
    (void)state;
    struct {
        double alpha;
        int64_t job;
        int nodes;
    } want[] = {{0, 1, 4},   {0.2, 1, 4}, {0.4, 2, 4}, {0.5, 2, 4},
                {0.6, 2, 4}, {0.8, 3, 4}, {1.0, 3, 4}};
    for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
        char policy[64];
        snprintf(policy, sizeof(policy), "io-aware:alpha=%g", want[k].alpha);
        sched_t *s;
        const sched_action_t *a = as9_first(policy, &s);
        if (a[0].job != want[k].job || a[0].nodes_after != want[k].nodes)
            fail_msg("alpha %g: started job %lld on %d nodes, want job %lld on %d",
                     want[k].alpha, (long long)a[0].job, a[0].nodes_after,
                     (long long)want[k].job, want[k].nodes);
        /* the winner ahead of its turn says why */
        assert_int_equal(a[0].reason, want[k].job == 1 ? SCHED_R_ORDER : SCHED_R_IO_BALANCE);
        sched_destroy(s);
    }
}

/* The printed denominator (the cluster's nodes): W = 0.795 and Q1 wins at every alpha. */
static void alpha_sweep_cluster(void **state)
{
    (void)state;
    for (double alpha = 0; alpha <= 1.0001; alpha += 0.1) {
        char policy[64];
        snprintf(policy, sizeof(policy), "io-aware:alpha=%g:wmean=0", alpha);
        sched_t *s;
        const sched_action_t *a = as9_first(policy, &s);
        assert_int_equal(a[0].job, 1);
        sched_destroy(s);
    }
}

/* After the winner, Algorithm 3 goes on while a waiting job fits: with alpha 1, Q3 on 4
 * nodes, then nothing else fits the 2 nodes left but Q3's sizes (taken). */
static void admission_continues(void **state)
{
    (void)state;
    sched_t *s = tu_engine(12, "io-aware:alpha=0.5");
    running(s, 100, SCHED_RIGID, 0, 4, 4, 4, SCHED_CONS_NONE, 0.8);
    submit_io(s, 1, 1, SCHED_RIGID, 4, 0, 0, 0, SCHED_CONS_NONE, 0.9);
    submit_io(s, 2, 2, SCHED_RIGID, 4, 0, 0, 0, SCHED_CONS_NONE, 0.1);
    submit_io(s, 3, 3, SCHED_RIGID, 2, 0, 0, 0, SCHED_CONS_NONE, 0.5);
    const sched_action_t *a;
    size_t n = tu_pass(s, 10, &a);
    /* 8 free nodes: two of the three start, the third waits for nodes */
    assert_int_equal(n, 2);
    assert_int_equal(sched_free_nodes(s), 8 - a[0].nodes_after - a[1].nodes_after);
    assert_int_equal(sched_pending_count(s), 1);
    sched_jobinfo_t info;
    for (int64_t id = 1; id <= 3; id++)
        if (tu_state(s, id) == SCHED_PENDING) {
            assert_int_equal(sched_job_info(s, id, &info), 0);
            assert_int_equal(info.reason, SCHED_R_RESOURCES);
        }
    sched_destroy(s);
}

/* AS-10: alpha 0. fit=0 is strict queue order (a head that does not fit blocks); fit=1
 * lets the first job that fits start. */
static void alpha_zero_readings(void **state)
{
    (void)state;
    for (int fit = 0; fit <= 1; fit++) {
        char policy[64];
        snprintf(policy, sizeof(policy), "io-aware:alpha=0:fit=%d", fit);
        sched_t *s = tu_engine(4, policy);
        running(s, 100, SCHED_RIGID, 0, 2, 2, 2, SCHED_CONS_NONE, 0.5);
        submit_io(s, 1, 1, SCHED_RIGID, 3, 0, 0, 0, SCHED_CONS_NONE, 0.5);
        submit_io(s, 2, 2, SCHED_RIGID, 1, 0, 0, 0, SCHED_CONS_NONE, 0.5);
        const sched_action_t *a;
        size_t n = tu_pass(s, 1, &a);
        if (fit) {
            assert_int_equal(n, 1);
            assert_int_equal(a[0].job, 2);
        } else {
            assert_int_equal(n, 0);
            sched_jobinfo_t info;
            assert_int_equal(sched_job_info(s, 2, &info), 0);
            assert_int_equal(info.reason, SCHED_R_PRIORITY);
        }
        sched_destroy(s);
    }
}

/* AS-10 as a property: random queues at alpha 0 (fit=0) start in submission order. */
static void alpha_zero_is_queue_order(void **state)
{
    (void)state;
    srand(7);
    sched_t *s = tu_engine(16, "io-aware:alpha=0:fit=0");
    const int njobs = 200;
    for (int i = 1; i <= njobs; i++) {
        bool mall = rand() % 4 == 0;
        int n = 1 + rand() % 8;
        submit_io(s, i, i, mall ? SCHED_MALLEABLE : SCHED_RIGID, n, mall ? 1 : 0,
                  mall ? 12 : 0, 0, SCHED_CONS_NONE, (rand() % 100) / 100.0);
    }
    int64_t last = 0, started = 0, run[256];
    int nrun = 0;
    for (int step = 0; step < 10 * njobs && started < njobs; step++) {
        const sched_action_t *a;
        size_t n = tu_pass(s, step, &a);
        for (size_t k = 0; k < n; k++) {
            if (a[k].op != SCHED_OP_START)
                continue; /* resizes of malleable jobs */
            assert_true(a[k].job > last);
            last = a[k].job;
            started++;
            run[nrun++] = a[k].job;
        }
        tu_complete(s, a, n);
        if (nrun) { /* the oldest running job ends */
            assert_int_equal(sched_remove(s, run[0]), 0);
            for (int k = 1; k < nrun; k++)
                run[k - 1] = run[k];
            nrun--;
        }
    }
    assert_int_equal(started, njobs);
    sched_destroy(s);
}

/* AS-11's cluster on `nodes` nodes: M (malleable, 4 nodes, even sizes 2-6 at 0.3-0.5)
 * and R (rigid, 4 nodes, 0.1) run, so S = 0.25; P (3 nodes) waits with an intensity
 * that puts W at 0.35. */
static sched_t *as11(int nodes)
{
    sched_t *s = tu_engine(nodes, "io-aware");
    running(s, 1, SCHED_MALLEABLE, 0, 4, 2, 6, SCHED_CONS_EVEN, 0);
    double m[] = {0.3, 0.35, 0.4, 0.45, 0.5};
    assert_int_equal(sched_set_io_intensity(s, 1, 2, m, 5), 0);
    running(s, 2, SCHED_RIGID, 4, 4, 4, 4, SCHED_CONS_NONE, 0.1);
    /* P needs more nodes than are ever free here */
    submit_io(s, 3, 5, SCHED_RIGID, nodes - 7, 0, 0, 0, SCHED_CONS_NONE, 0);
    double w, sys, p = (0.35 * (8 + nodes - 7) - 2.0) / (nodes - 7);
    assert_int_equal(sched_set_io_intensity(s, 3, nodes - 7, &p, 1), 0);
    sched_io_balance(s, false, &w, &sys);
    assert_float_equal(w, 0.35, EPS);
    assert_float_equal(sys, 0.25, EPS);
    return s;
}

static void reconfigure_expand(void **state)
{
    (void)state;
    const sched_action_t *a;
    sched_t *s = as11(10); /* 2 free: M grows to 6 (S = 0.34) */
    size_t n = tu_pass(s, 1, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].op, SCHED_OP_EXPAND);
    assert_int_equal(a[0].nodes_after, 6);
    assert_int_equal(a[0].reason, SCHED_R_IO_BALANCE);
    sched_destroy(s);
    s = as11(9); /* 1 free: 6 is out of reach, 5 breaks the constraint: no change */
    assert_int_equal(tu_pass(s, 1, &a), 0);
    sched_destroy(s);
    /* not at a scheduling point (not adaptive): no change either */
    s = as11(10);
    assert_int_equal(sched_set_adaptive(s, 1, false), 0);
    assert_int_equal(tu_pass(s, 1, &a), 0);
    sched_destroy(s);
}

/* A shrink would bring S closer to W, but is made only when a waiting job fits in the
 * nodes it frees. 8 nodes, all busy: M (4, 0.3 at 2 nodes, 0.4 at 4) and R (4, 0.1);
 * a compute-bound job waits. */
static void reconfigure_shrink_only_for_queue(void **state)
{
    (void)state;
    for (int need = 2; need <= 3; need++) {
        sched_t *s = tu_engine(8, "io-aware");
        running(s, 1, SCHED_MALLEABLE, 0, 4, 2, 4, SCHED_CONS_EVEN, 0);
        double m[] = {0.3, 0.35, 0.4};
        assert_int_equal(sched_set_io_intensity(s, 1, 2, m, 3), 0);
        running(s, 2, SCHED_RIGID, 4, 4, 4, 4, SCHED_CONS_NONE, 0.1);
        submit_io(s, 3, 5, SCHED_RIGID, need, 0, 0, 0, SCHED_CONS_NONE, 0);
        const sched_action_t *a;
        size_t n = tu_pass(s, 1, &a);
        if (need == 2) { /* fits in the 2 nodes M gives */
            assert_int_equal(n, 1);
            assert_int_equal(a[0].op, SCHED_OP_SHRINK);
            assert_int_equal(a[0].nodes_after, 2);
            tu_complete(s, a, n);
            n = tu_pass(s, 2, &a);
            assert_int_equal(n, 1);
            assert_int_equal(a[0].op, SCHED_OP_START);
            assert_int_equal(a[0].job, 3);
        } else {
            assert_int_equal(n, 0);
        }
        sched_destroy(s);
    }
}

/* A wide malleable job competes with 32 sizes spread over its range and its preferred
 * size: on 1000 nodes with 500 free, alpha 0 and first fit, the largest sampled size
 * that fits (1 + 999 x 15 / 31 = 484) or, when it lies between, the preferred one. */
static void wide_jobs_sampled(void **state)
{
    (void)state;
    for (int pref = 300; pref <= 490; pref += 190) {
        sched_t *s = tu_engine(1000, "io-aware:alpha=0:fit=1");
        running(s, 100, SCHED_RIGID, 0, 500, 500, 500, SCHED_CONS_NONE, 0.5);
        submit_io(s, 1, 1, SCHED_MALLEABLE, pref, 1, 1000, pref, SCHED_CONS_NONE, 0.2);
        const sched_action_t *a;
        size_t n = tu_pass(s, 1, &a);
        assert_int_equal(n, 1);
        assert_int_equal(a[0].nodes_after, pref == 490 ? 490 : 484);
        sched_destroy(s);
    }
}

/* Only the first `window` waiting jobs compete: at alpha 1 the third job is the best
 * balance, but with window=2 it waits its turn. */
static void window_bounds_candidates(void **state)
{
    (void)state;
    for (int window = 2; window <= 3; window++) {
        char policy[64];
        snprintf(policy, sizeof(policy), "io-aware:alpha=1:window=%d", window);
        sched_t *s = tu_engine(8, policy);
        running(s, 100, SCHED_RIGID, 0, 6, 6, 6, SCHED_CONS_NONE, 0.9);
        submit_io(s, 1, 1, SCHED_RIGID, 2, 0, 0, 0, SCHED_CONS_NONE, 0.9);
        submit_io(s, 2, 2, SCHED_RIGID, 2, 0, 0, 0, SCHED_CONS_NONE, 0.8);
        submit_io(s, 3, 3, SCHED_RIGID, 2, 0, 0, 0, SCHED_CONS_NONE, 0.0);
        submit_io(s, 4, 4, SCHED_RIGID, 2, 0, 0, 0, SCHED_CONS_NONE, 0.5);
        const sched_action_t *a;
        size_t n = tu_pass(s, 1, &a);
        assert_int_equal(n, 1);
        assert_int_equal(a[0].job, window == 3 ? 3 : 2);
        /* after a start the next job enters the window: with window=2, job 3 competes
         * (and waits for nodes), job 4 waits its turn */
        sched_jobinfo_t info;
        assert_int_equal(sched_job_info(s, 4, &info), 0);
        assert_int_equal(info.reason, window == 2 ? SCHED_R_PRIORITY : SCHED_R_RESOURCES);
        sched_destroy(s);
    }
    /* the window bounds what competes, not how many start: four 1-node jobs on four
     * free nodes all start in one pass with window=1 (one per pass before) */
    sched_t *s = tu_engine(4, "io-aware:window=1");
    for (int i = 1; i <= 4; i++)
        submit_io(s, i, i, SCHED_RIGID, 1, 0, 0, 0, SCHED_CONS_NONE, 0.1 * i);
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 1, &a), 4);
    sched_destroy(s);
}

/* Sizes above the nodes that are up do not compete: with a node down and fit=0, a
 * moldable job's 8-node size (the best balance) blocked every start until the node came
 * back, on an idle cluster. */
static void sizes_within_nodes_up(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "io-aware:alpha=1:fit=0");
    assert_int_equal(sched_set_node_available(s, 7, false), 0);
    submit_io(s, 1, 1, SCHED_MOLDABLE, 8, 1, 8, 8, SCHED_CONS_NONE, 0);
    double v[] = {0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.45};
    assert_int_equal(sched_set_io_intensity(s, 1, 1, v, 8), 0);
    submit_io(s, 2, 2, SCHED_RIGID, 1, 0, 0, 0, SCHED_CONS_NONE, 0);
    const sched_action_t *a;
    size_t n = tu_pass(s, 1, &a);
    assert_true(n >= 1);
    for (size_t k = 0; k < n; k++)
        assert_true(a[k].nodes_after <= 7);
    sched_destroy(s);
}

/* io-aware does not admit jobs by power: power=1 is refused rather than ignored. */
static void power_admission_refused(void **state)
{
    (void)state;
    sched_t *s = NULL;
    char err[SCHED_ERRLEN] = "";
    assert_int_equal(sched_create(8, "io-aware:power=1", &s, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "power"));
    assert_null(s);
}

/* A shrink for the queue counts only the free nodes no expansion of the same pass took:
 * A (I/O-bound, 2 nodes) grows with the one free node, so B (compute-bound, 5 nodes)
 * is not shrunk for C (2 nodes), which could not start on what it frees (a shrink for
 * no one before). */
static void shrink_counts_expansions(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "io-aware");
    running(s, 1, SCHED_MALLEABLE, 0, 2, 1, 8, SCHED_CONS_NONE, 1.0);
    running(s, 2, SCHED_MALLEABLE, 2, 5, 4, 8, SCHED_CONS_NONE, 0.0);
    submit_io(s, 3, 3, SCHED_RIGID, 2, 0, 0, 0, SCHED_CONS_NONE, 1.0);
    const sched_action_t *a;
    size_t n = tu_pass(s, 1, &a);
    /* A takes the free node (S moves towards W); B keeps its nodes */
    assert_non_null(tu_find(a, n, 1, SCHED_OP_EXPAND));
    assert_null(tu_find(a, n, 2, SCHED_OP_SHRINK));
    assert_int_equal(n, 1);
    sched_destroy(s);
}

/* With fit=0 the job whose best size does not fit waits for Resources, whatever its
 * place; the others wait behind it (Priority). */
static void reasons_follow_the_blocked_job(void **state)
{
    (void)state;
    sched_t *s = tu_engine(10, "io-aware:alpha=1:fit=0");
    running(s, 100, SCHED_RIGID, 0, 4, 4, 4, SCHED_CONS_NONE, 0.8);
    submit_io(s, 1, 1, SCHED_RIGID, 4, 0, 0, 0, SCHED_CONS_NONE, 0.9);
    submit_io(s, 2, 2, SCHED_RIGID, 7, 0, 0, 0, SCHED_CONS_NONE, 0.1);
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 1, &a), 0);
    sched_jobinfo_t info;
    assert_int_equal(sched_job_info(s, 2, &info), 0);
    assert_int_equal(info.reason, SCHED_R_RESOURCES);
    assert_int_equal(sched_job_info(s, 1, &info), 0);
    assert_int_equal(info.reason, SCHED_R_PRIORITY);
    sched_destroy(s);
}

/* A requeued job keeps its intensities (they describe its application). */
static void requeue_keeps_intensity(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "io-aware");
    running(s, 1, SCHED_RIGID, 0, 2, 2, 2, SCHED_CONS_NONE, 0);
    double v = 0.7;
    assert_int_equal(sched_set_io_intensity(s, 1, 2, &v, 1), 0);
    assert_int_equal(sched_requeue(s, 1, SCHED_CLASS_FAILED), 0);
    double w, sys;
    sched_io_balance(s, false, &w, &sys);
    assert_float_equal(w, 0.7, EPS);
    assert_float_equal(sys, 0, EPS);
    sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(intensity_definitions),
        cmocka_unit_test(alpha_sweep_weighted),
        cmocka_unit_test(alpha_sweep_cluster),
        cmocka_unit_test(admission_continues),
        cmocka_unit_test(alpha_zero_readings),
        cmocka_unit_test(alpha_zero_is_queue_order),
        cmocka_unit_test(reconfigure_expand),
        cmocka_unit_test(reconfigure_shrink_only_for_queue),
        cmocka_unit_test(requeue_keeps_intensity),
        cmocka_unit_test(wide_jobs_sampled),
        cmocka_unit_test(window_bounds_candidates),
        cmocka_unit_test(sizes_within_nodes_up),
        cmocka_unit_test(power_admission_refused),
        cmocka_unit_test(shrink_counts_expansions),
        cmocka_unit_test(reasons_follow_the_blocked_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
