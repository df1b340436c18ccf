/* Node failures and node stealing (seed 003 §3.1; research/seed-003-admire-d33.md
 * §8, AS-1 to AS-4): the toy example of Table 3.1 replayed through the simulator
 * with conservative backfilling (seed 003's BASELINE) and sfsj, the victim rules on
 * the engine itself, and the fate of malleable jobs that lose a node. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"
#include "sim/metrics.h"
#include "sim/sim.h"
#include "sim/workload.h"

static void add(workload_t *wl, int64_t id, double submit, int nodes, double runtime,
                sched_jobtype_t type, int min, int max)
{
    wl_job_t j = {.id = id, .submit = submit, .nodes = nodes, .runtime = runtime,
                  .walltime = runtime, .type = type, .min_nodes = min, .max_nodes = max};
    assert_int_equal(wl_append(wl, &j), 0);
}

/* Table 3.1: 8 nodes, five jobs released at 0 in the order J1..J5. */
static void toy_workload(workload_t *wl)
{
    int size[] = {1, 1, 6, 6, 1};
    double len[] = {8, 5, 10, 10, 2};
    for (int i = 0; i < 5; i++)
        add(wl, i + 1, 0, size[i], len[i], SCHED_RIGID, 0, 0);
}

static void run_toy(const char *policy, const sim_failures_t *f, sim_result_t *res,
                    sim_metrics_t *m)
{
    workload_t wl = {0};
    toy_workload(&wl);
    sim_config_t cfg = {.nodes = 8, .policy = policy, .speedup = {.model = SPEEDUP_LINEAR},
                        .failures = f};
    char err[256] = "";
    if (sim_run(&wl, &cfg, res, err, sizeof(err)) != 0)
        fail_msg("sim_run: %s", err);
    assert_int_equal(sim_metrics_compute(res, 8, m), 0);
    wl_free(&wl);
}

static void assert_flows(const sim_result_t *res, const double *flow)
{
    for (int i = 0; i < 5; i++) {
        double got = res->jobs[i].end - res->jobs[i].submit;
        if (fabs(got - flow[i]) > 1e-9)
            fail_msg("J%d: flow %g, expected %g", i + 1, got, flow[i]);
    }
}

/* P3 (node 2) fails at t = 1 and is down for 5 time units. */
static const sim_failure_t toy_failure[] = {{.t = 1, .node = 2, .down = 5}};
static const sim_failures_t toy_failures = {.trace = toy_failure, .ntrace = 1};

/* AS-1: no failure. J5 backfilled at 5 on P2; J4 reserved at 10. */
static void toy_fault_free(void **state)
{
    (void)state;
    sim_result_t res;
    sim_metrics_t m;
    run_toy("conservative", NULL, &res, &m);
    assert_flows(&res, (double[]){8, 5, 10, 20, 7});
    assert_true(fabs(m.response.mean - 10) < 1e-9);
    assert_true(m.response.max == 20);
    assert_true(fabs(m.response_weighted - 200.0 / 15) < 1e-9);
    assert_int_equal(m.restarts, 0);
    sim_result_free(&res);
}

/* AS-2: BASELINE. J3 requeued first; J5 backfilled at 1; J3 restarts at 5 (P2 free,
 * P3 still down) on P2 and P4-P8; J4 after it. Flows 8/5/15/25/3. */
static void toy_baseline(void **state)
{
    (void)state;
    sim_result_t res;
    sim_metrics_t m;
    run_toy("conservative", &toy_failures, &res, &m);
    assert_flows(&res, (double[]){8, 5, 15, 25, 3});
    assert_true(fabs(m.response.mean - 11.2) < 1e-9);
    assert_true(m.response.max == 25);
    assert_true(fabs(m.response_weighted - 256.0 / 15) < 1e-9); /* 17.067 */
    assert_true(res.jobs[2].start == 5);
    assert_int_equal(res.jobs[2].restarts, 1);
    assert_true(fabs(res.jobs[2].lost_node_seconds - 6) < 1e-9); /* 6 nodes for 1 unit */
    assert_int_equal(m.failures, 1);
    assert_int_equal(m.failed_jobs, 1);
    assert_int_equal(m.interrupts, 0);
    sim_result_free(&res);
}

/* AS-3: SFSJ. J2 (1 node; ties with J1 by submission, later in queue order) is
 * interrupted, J3 restarts at once on P2 and P4-P8; J2 restarts when P3 is back at 6;
 * J5 on P1 at 8; J4 at 11. Flows 8/11/11/21/10. */
static void toy_sfsj(void **state)
{
    (void)state;
    sim_result_t res;
    sim_metrics_t m;
    run_toy("sfsj", &toy_failures, &res, &m);
    assert_flows(&res, (double[]){8, 11, 11, 21, 10});
    assert_true(fabs(m.response.mean - 12.2) < 1e-9);
    assert_true(m.response.max == 21);
    assert_true(fabs(m.response_weighted - 221.0 / 15) < 1e-9); /* 14.733 */
    assert_true(res.jobs[2].start == 1 && res.jobs[1].start == 6 && res.jobs[4].start == 8);
    assert_int_equal(res.jobs[1].restarts, 1);
    assert_int_equal(m.interrupts, 1);
    assert_int_equal(m.restarts, 2);
    /* lost: J3's 6 node-units, J2's 1 node-unit */
    assert_true(fabs(m.lost_node_seconds - 7) < 1e-9);
    sim_result_free(&res);
}

/* AS-4 (a): enough free nodes to restart the failed job at once: sfsj = conservative. */
static void sfsj_same_when_nodes_free(void **state)
{
    (void)state;
    /* 8 nodes: J1 (2 nodes, 10), J2 (1 node, 10); node 0 (J1's) fails at 1: six
     * nodes are free, J1 restarts at once under both. */
    workload_t wl = {0};
    add(&wl, 1, 0, 2, 10, SCHED_RIGID, 0, 0);
    add(&wl, 2, 0, 1, 10, SCHED_RIGID, 0, 0);
    add(&wl, 3, 0, 4, 3, SCHED_RIGID, 0, 0);
    sim_failure_t fl[] = {{.t = 1, .node = 0, .down = 100}};
    sim_failures_t f = {.trace = fl, .ntrace = 1};
    double end[2][3];
    const char *pol[] = {"conservative", "sfsj"};
    for (int p = 0; p < 2; p++) {
        sim_config_t cfg = {.nodes = 8, .policy = pol[p], .speedup = {.model = SPEEDUP_LINEAR},
                            .failures = &f};
        sim_result_t res;
        char err[256];
        assert_int_equal(sim_run(&wl, &cfg, &res, err, sizeof(err)), 0);
        assert_int_equal(res.interrupts, 0);
        for (int i = 0; i < 3; i++)
            end[p][i] = res.jobs[i].end;
        sim_result_free(&res);
    }
    assert_true(end[0][0] == 11); /* restarted at 1 */
    assert_memory_equal(end[0], end[1], sizeof(end[0]));
    wl_free(&wl);
}

static void submit(sched_t *s, int64_t id, double t, int nodes, sched_jobtype_t type, int min,
                   int max)
{
    tu_submit(s, (tu_job_t){.id = id, .submit = t, .type = type, .nodes = nodes, .min = min,
                            .max = max, .walltime = 100});
}

/* AS-4 (c): running jobs of sizes 2, 2 and 4 submitted at 0, 5 and 1, a failed 6-node
 * job: the victim is the 2-node job submitted at 5, and it is enough. */
static void sfsj_victim_order(void **state)
{
    (void)state;
    sched_t *s = tu_engine(14, "sfsj");
    submit(s, 10, -1, 6, SCHED_RIGID, 0, 0);
    submit(s, 1, 0, 2, SCHED_RIGID, 0, 0);
    submit(s, 2, 5, 2, SCHED_RIGID, 0, 0);
    submit(s, 3, 1, 4, SCHED_RIGID, 0, 0);
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 5, &a), 4); /* 14 nodes, all busy */
    sched_jobinfo_t ji;
    assert_int_equal(sched_job_info(s, 10, &ji), 0);
    int64_t job;
    sched_failure_t what;
    assert_int_equal(sched_node_failed(s, ji.nodes[0], &job, &what), 0);
    assert_int_equal(job, 10);
    assert_int_equal(what, SCHED_FAIL_REQUEUED);
    assert_int_equal(sched_free_nodes(s), 5); /* the failed node is down */
    size_t n = tu_pass(s, 6, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].op, SCHED_OP_INTERRUPT);
    assert_int_equal(a[0].job, 2);
    assert_int_equal(a[0].reason, SCHED_R_STOLEN);
    assert_int_equal(a[0].for_job, 10);
    /* the victim holds its nodes until the caller has stopped it: nothing starts */
    assert_int_equal(sched_job_info(s, 2, &ji), 0);
    assert_int_equal(ji.state, SCHED_STOPPING);
    assert_int_equal(sched_free_nodes(s), 5);
    assert_int_equal(tu_pass(s, 6, &a), 0);
    char err[SCHED_ERRLEN];
    assert_true(sched_request_resize(s, 2, 2, true, err, sizeof(err)) < 0);
    assert_int_equal(sched_requeue(s, 2, SCHED_CLASS_INTERRUPTED), 0);
    n = tu_pass(s, 6, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].op, SCHED_OP_START);
    assert_int_equal(a[0].job, 10);
    /* the victim waits again, ahead of later submissions, behind failed jobs */
    assert_int_equal(sched_job_info(s, 2, &ji), 0);
    assert_int_equal(ji.state, SCHED_PENDING);
    assert_string_equal(sched_op_name(SCHED_OP_INTERRUPT), "interrupt");
    assert_string_equal(sched_reason_name(SCHED_R_STOLEN), "NodeStolen");
    sched_destroy(s);
}

/* tiebreak=1: the latest started (shortest run so far) rather than the latest
 * submitted. */
static void sfsj_tiebreak_started(void **state)
{
    (void)state;
    for (int tb = 0; tb < 2; tb++) {
        sched_t *s = tu_engine(4, tb ? "sfsj:tiebreak=1" : "sfsj");
        submit(s, 10, 0, 3, SCHED_RIGID, 0, 0);
        submit(s, 1, 2, 1, SCHED_RIGID, 0, 0); /* submitted later, started first */
        const sched_action_t *a;
        assert_int_equal(tu_pass(s, 2, &a), 2);
        assert_int_equal(sched_remove(s, 10), 0); /* job 10 ends */
        submit(s, 2, 1, 1, SCHED_RIGID, 0, 0);    /* submitted earlier, starts at 3 */
        submit(s, 11, 3, 2, SCHED_RIGID, 0, 0);
        assert_int_equal(tu_pass(s, 3, &a), 2);
        sched_jobinfo_t ji;
        assert_int_equal(sched_job_info(s, 11, &ji), 0);
        int64_t job;
        sched_failure_t what;
        assert_int_equal(sched_node_failed(s, ji.nodes[1], &job, &what), 0);
        assert_int_equal(job, 11);
        assert_int_equal(tu_pass(s, 4, &a), 1);
        assert_int_equal(a[0].op, SCHED_OP_INTERRUPT);
        assert_int_equal(a[0].job, tb ? 2 : 1);
        sched_destroy(s);
    }
}

/* AS-4 (b) and the all-or-nothing rule: no victim smaller than the failed job, or
 * victims that cannot cover it together: nothing is stopped. */
static void sfsj_no_useless_steal(void **state)
{
    (void)state;
    sched_t *s = tu_engine(3, "sfsj");
    submit(s, 1, 0, 1, SCHED_RIGID, 0, 0);
    submit(s, 2, 1, 1, SCHED_RIGID, 0, 0);
    submit(s, 3, 2, 1, SCHED_RIGID, 0, 0);
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 0, &a), 3);
    int64_t job;
    sched_failure_t what;
    sched_jobinfo_t ji;
    assert_int_equal(sched_job_info(s, 1, &ji), 0);
    sched_node_failed(s, ji.nodes[0], &job, &what);
    assert_int_equal(what, SCHED_FAIL_REQUEUED);
    assert_int_equal(tu_pass(s, 1, &a), 0); /* 1-node job: no smaller victim */
    sched_destroy(s);

    s = tu_engine(4, "sfsj");
    submit(s, 1, 0, 3, SCHED_RIGID, 0, 0);
    submit(s, 2, 1, 1, SCHED_RIGID, 0, 0);
    assert_int_equal(tu_pass(s, 0, &a), 2);
    assert_int_equal(sched_job_info(s, 1, &ji), 0);
    sched_node_failed(s, ji.nodes[0], &job, &what);
    sched_set_node_available(s, ji.nodes[1], false); /* drained: 1 free + 1 victim < 3 */
    assert_int_equal(tu_pass(s, 1, &a), 0);
    assert_int_equal(sched_job_info(s, 2, &ji), 0);
    assert_int_equal(ji.state, SCHED_RUNNING);
    sched_destroy(s);
}

/* A job that must not run twice (no_interrupt: the controller's jobs without
 * --requeue) is never stopped: the next victim in order is taken; with only such
 * victims (the other one made so by sched_set_interruptible), nothing is stopped. */
static void sfsj_spares_no_interrupt(void **state)
{
    (void)state;
    for (int spare_all = 0; spare_all < 2; spare_all++) {
        sched_t *s = tu_engine(5, "sfsj");
        submit(s, 10, 0, 3, SCHED_RIGID, 0, 0);
        tu_submit(s, (tu_job_t){.id = 2, .submit = 1, .type = SCHED_RIGID, .nodes = 1,
                                .walltime = 100});
        tu_submit(s, (tu_job_t){.id = 1, .submit = 2, .type = SCHED_RIGID, .nodes = 1,
                                .walltime = 100, .no_interrupt = true}); /* first in order */
        const sched_action_t *a;
        assert_int_equal(tu_pass(s, 2, &a), 3);
        sched_jobinfo_t ji;
        assert_int_equal(sched_job_info(s, 10, &ji), 0);
        int64_t job;
        sched_failure_t what;
        sched_node_failed(s, ji.nodes[2], &job, &what);
        if (spare_all) /* job 2 may run again no more (the controller: MaxRequeue) */
            assert_int_equal(sched_set_interruptible(s, 2, false), 0);
        size_t n = tu_pass(s, 3, &a);
        if (spare_all) {
            assert_int_equal(n, 0);
        } else {
            assert_int_equal(n, 1);
            assert_int_equal(a[0].op, SCHED_OP_INTERRUPT);
            assert_int_equal(a[0].job, 2);
        }
        sched_destroy(s);
    }
}

/* The controller restarted while it stopped a victim: sched_set_stopping holds the
 * victim's nodes, and nothing starts ahead of the failed job meanwhile (a 1-node job
 * would fit in the free nodes the failed job needs). Removing a stopping job frees its
 * nodes as requeueing it does. */
static void stopping_after_restart(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "sfsj");
    sched_jobspec_t v = {.id = 1, .submit = 0, .type = SCHED_RIGID, .nodes = 2,
                         .walltime = 100};
    int nodes[2] = {0, 1};
    char err[SCHED_ERRLEN];
    assert_int_equal(sched_restore_running(s, &v, 0, nodes, 2, err, sizeof(err)), 0);
    assert_int_equal(sched_set_stopping(s, 1), 0);
    assert_int_equal(sched_set_stopping(s, 1), -EINVAL); /* already */
    assert_int_equal(sched_set_stopping(s, 99), -ENOENT);
    submit(s, 10, 1, 3, SCHED_RIGID, 0, 0);
    assert_int_equal(sched_set_class(s, 10, SCHED_CLASS_FAILED), 0);
    submit(s, 3, 2, 1, SCHED_RIGID, 0, 0);
    assert_int_equal(sched_set_stopping(s, 3), -EINVAL); /* waiting */
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 5, &a), 0);
    assert_int_equal(sched_free_nodes(s), 2);
    assert_int_equal(sched_requeue(s, 1, SCHED_CLASS_INTERRUPTED), 0);
    assert_int_equal(tu_pass(s, 6, &a), 2); /* 10 on three nodes, then 3 on the last */
    assert_int_equal(a[0].job, 10);
    assert_int_equal(a[1].job, 3);
    assert_int_equal(sched_remove(s, 10), 0);
    assert_int_equal(sched_remove(s, 3), 0);
    assert_int_equal(tu_pass(s, 7, &a), 1); /* the victim itself */
    assert_int_equal(a[0].job, 1);
    assert_int_equal(sched_set_stopping(s, 1), 0);
    assert_int_equal(sched_remove(s, 1), 0); /* cancelled while stopped */
    assert_int_equal(sched_free_nodes(s), 4);
    submit(s, 4, 8, 4, SCHED_RIGID, 0, 0);
    assert_int_equal(tu_pass(s, 8, &a), 1);
    sched_destroy(s);
}

/* A malleable job requeued by a failure restarts on the nodes that survive when they
 * cannot hold its size (down to its minimum), under easy as under every policy; a rigid
 * one waits for its nodes; with enough nodes up it restarts at its size. */
static void malleable_restarts_smaller(void **state)
{
    (void)state;
    for (int k = 0; k < 3; k++) {
        sched_t *s = tu_engine(k == 2 ? 5 : 4, "easy");
        sched_jobtype_t type = k == 1 ? SCHED_RIGID : SCHED_MALLEABLE;
        submit(s, 1, 0, 4, type, type == SCHED_MALLEABLE ? 2 : 0, type == SCHED_MALLEABLE ? 4 : 0);
        const sched_action_t *a;
        assert_int_equal(tu_pass(s, 0, &a), 1);
        sched_jobinfo_t ji;
        assert_int_equal(sched_job_info(s, 1, &ji), 0);
        int64_t job;
        sched_failure_t what;
        assert_int_equal(sched_node_failed(s, ji.nodes[0], &job, &what), 0); /* its first */
        assert_int_equal(what, SCHED_FAIL_REQUEUED);
        size_t n = tu_pass(s, 1, &a);
        if (k == 1) {
            assert_int_equal(n, 0);
            assert_int_equal(sched_job_info(s, 1, &ji), 0);
            assert_int_equal(ji.reason, SCHED_R_NODES_UNAVAILABLE);
        } else {
            assert_int_equal(n, 1);
            assert_int_equal(a[0].op, SCHED_OP_START);
            assert_int_equal(a[0].nodes_after, k == 2 ? 4 : 3);
        }
        sched_destroy(s);
    }
}

/* A malleable job above its minimum loses a node other than its first: it runs on
 * without it. Its first node, or at its minimum: it is requeued. */
static void malleable_survives(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "conservative");
    submit(s, 1, 0, 3, SCHED_MALLEABLE, 2, 4);
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 0, &a), 1);
    sched_jobinfo_t ji;
    assert_int_equal(sched_job_info(s, 1, &ji), 0);
    int first = ji.nodes[0], second = ji.nodes[1], third = ji.nodes[2];
    int64_t job;
    sched_failure_t what;
    assert_int_equal(sched_node_failed(s, second, &job, &what), 0);
    assert_int_equal(what, SCHED_FAIL_SHRUNK);
    assert_int_equal(sched_job_info(s, 1, &ji), 0);
    assert_int_equal(ji.nnodes, 2);
    assert_int_equal(ji.nodes[0], first);
    assert_int_equal(ji.nodes[1], third);
    assert_int_equal(sched_free_nodes(s), 1);
    assert_int_equal(sched_node_failed(s, third, &job, &what), 0); /* at its minimum */
    assert_int_equal(what, SCHED_FAIL_REQUEUED);
    assert_int_equal(sched_free_nodes(s), 2); /* its first node and the spare */
    assert_int_equal(sched_set_node_available(s, second, true), 0);
    assert_int_equal(sched_free_nodes(s), 3);
    assert_int_equal(sched_node_failed(s, 3, &job, &what), 0);
    assert_int_equal(what, SCHED_FAIL_IDLE);
    assert_int_equal(job, -1);
    sched_destroy(s);
}

/* sfsj:malleable=1: a malleable victim is shrunk, not stopped; the failed job starts
 * once the shrink is done, and nothing starts before it meanwhile. */
static void sfsj_shrinks_malleable_victim(void **state)
{
    (void)state;
    sched_t *s = tu_engine(6, "sfsj:malleable=1");
    submit(s, 1, 0, 4, SCHED_RIGID, 0, 0);
    submit(s, 2, 1, 2, SCHED_MALLEABLE, 1, 2);
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 0, &a), 2);
    sched_jobinfo_t ji;
    assert_int_equal(sched_job_info(s, 1, &ji), 0);
    int64_t job;
    sched_failure_t what;
    sched_node_failed(s, ji.nodes[1], &job, &what);
    submit(s, 3, 2, 1, SCHED_RIGID, 0, 0); /* would backfill on a free node */
    assert_int_equal(tu_pass(s, 2, &a), 1);
    assert_int_equal(a[0].op, SCHED_OP_SHRINK);
    assert_int_equal(a[0].job, 2);
    assert_int_equal(a[0].nodes_after, 1);
    assert_int_equal(a[0].reason, SCHED_R_STOLEN);
    assert_int_equal(sched_job_info(s, 1, &ji), 0);
    assert_int_equal(ji.reason, SCHED_R_RESIZE_PENDING);
    assert_int_equal(tu_pass(s, 2.5, &a), 0); /* job 3 does not take the free node */
    assert_int_equal(sched_resize_done(s, 2, true), 0);
    assert_int_equal(tu_pass(s, 3, &a), 1);
    assert_int_equal(a[0].op, SCHED_OP_START);
    assert_int_equal(a[0].job, 1);
    sched_destroy(s);
}

/* sfsj:malleable=1 takes from a malleable job of any size before it stops a smaller
 * rigid one; plain sfsj stops the rigid one. */
static void sfsj_malleable_first(void **state)
{
    (void)state;
    for (int m = 0; m < 2; m++) {
        sched_t *s = tu_engine(8, m ? "sfsj:malleable=1" : "sfsj");
        submit(s, 1, 0, 2, SCHED_RIGID, 0, 0);
        submit(s, 2, 1, 1, SCHED_RIGID, 0, 0);
        submit(s, 3, 2, 5, SCHED_MALLEABLE, 2, 5);
        const sched_action_t *a;
        assert_int_equal(tu_pass(s, 0, &a), 3);
        sched_jobinfo_t ji;
        assert_int_equal(sched_job_info(s, 1, &ji), 0);
        int64_t job;
        sched_failure_t what;
        sched_node_failed(s, ji.nodes[0], &job, &what);
        assert_int_equal(what, SCHED_FAIL_REQUEUED);
        assert_true(tu_pass(s, 1, &a) >= 1);
        assert_int_equal(a[0].op, m ? SCHED_OP_SHRINK : SCHED_OP_INTERRUPT);
        assert_int_equal(a[0].job, m ? 3 : 2);
        if (m)
            assert_int_equal(a[0].nodes_after, 4);
        sched_destroy(s);
    }
}

/* A requeued job starts over as a new submission: the last run's application limits
 * and adaptivity do not carry over (the controller's ResizeFailed requeue relied on
 * that when it removed and submitted the job again). */
static void requeue_starts_fresh(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "conservative");
    sched_jobspec_t sp = {.id = 1, .type = SCHED_MALLEABLE, .nodes = 2, .min_nodes = 1,
                          .max_nodes = 4, .walltime = 100, .wait_adaptive = true};
    char err[SCHED_ERRLEN];
    assert_int_equal(sched_submit(s, &sp, err, sizeof(err)), 0);
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 0, &a), 1);
    assert_int_equal(sched_set_adaptive(s, 1, true), 0);
    assert_int_equal(sched_set_app_limits(s, 1, 2, 2, 2, 30), 0);
    sched_jobinfo_t ji;
    assert_int_equal(sched_job_info(s, 1, &ji), 0);
    assert_true(ji.app_limits && ji.app_min == 2 && ji.app_max == 2);
    assert_int_equal(sched_requeue(s, 1, SCHED_CLASS_NORMAL), 0);
    assert_int_equal(sched_requeue(s, 1, SCHED_CLASS_NORMAL), -EINVAL); /* pending */
    assert_int_equal(sched_job_info(s, 1, &ji), 0);
    assert_int_equal(ji.state, SCHED_PENDING);
    assert_false(ji.app_limits);
    assert_int_equal(ji.app_min, 1);
    assert_int_equal(ji.app_max, 4);
    assert_int_equal(sched_free_nodes(s), 4);
    sched_destroy(s);
}

/* Drawn failures: a fixed seed gives the same run twice; every job ends. */
static void drawn_failures_deterministic(void **state)
{
    (void)state;
    workload_t wl = {0};
    for (int i = 0; i < 40; i++)
        add(&wl, i + 1, i * 50, 1 + i % 4, 300 + 10 * (i % 7),
            i % 3 ? SCHED_RIGID : SCHED_MALLEABLE, 1, 8);
    sim_failures_t f = {.mtbf = 8 * 2000, .downtime = 100, .seed = 7};
    double ends[2][40];
    long fails[2];
    for (int r = 0; r < 2; r++) {
        sim_config_t cfg = {.nodes = 8, .policy = "sfsj:malleable=1",
                            .speedup = {.model = SPEEDUP_LINEAR}, .failures = &f};
        sim_result_t res;
        char err[256];
        assert_int_equal(sim_run(&wl, &cfg, &res, err, sizeof(err)), 0);
        assert_int_equal(res.unfinished, 0);
        fails[r] = res.failures;
        for (int i = 0; i < 40; i++)
            ends[r][i] = res.jobs[i].end;
        sim_result_free(&res);
    }
    assert_true(fails[0] > 0);
    assert_int_equal(fails[0], fails[1]);
    assert_memory_equal(ends[0], ends[1], sizeof(ends[0]));
    wl_free(&wl);
}

/* A job that checkpoints restarts after its last checkpoint: 10 s of work, a
 * checkpoint every 3 s costing 1 s (13 s undisturbed); failed at 5, one checkpoint
 * done (work 3), it restarts at once with 7 s of work and two checkpoints: ends at 14,
 * the 1 s since the checkpoint lost on 6 nodes. Without checkpoints: 15, 30 lost. */
static void restart_from_checkpoint(void **state)
{
    (void)state;
    sim_failure_t fl[] = {{.t = 5, .node = 0, .down = 1}};
    for (int ck = 0; ck < 3; ck++) {
        workload_t wl = {0};
        add(&wl, 1, 0, 6, 10, SCHED_RIGID, 0, 0);
        if (ck == 1) {
            wl.jobs[0].ckpt_every = 3;
            wl.jobs[0].ckpt_cost = 1;
        }
        /* ck 2: the same checkpoints as the run's default */
        sim_failures_t f = {.trace = fl, .ntrace = 1, .ckpt_every = ck == 2 ? 3 : 0,
                            .ckpt_cost = 1};
        sim_config_t cfg = {.nodes = 8, .policy = "conservative",
                            .speedup = {.model = SPEEDUP_LINEAR}, .failures = &f};
        sim_result_t res;
        char err[256];
        assert_int_equal(sim_run(&wl, &cfg, &res, err, sizeof(err)), 0);
        double end = ck ? 14 : 15, lost = ck ? 6 : 30;
        if (fabs(res.jobs[0].end - end) > 1e-9 || fabs(res.lost_node_seconds - lost) > 1e-9)
            fail_msg("checkpoints %d: end %g lost %g, expected %g and %g", ck, res.jobs[0].end,
                     res.lost_node_seconds, end, lost);
        sim_result_free(&res);
        /* undisturbed: the checkpoints' cost shows */
        cfg.failures = NULL;
        if (ck == 1) {
            assert_int_equal(sim_run(&wl, &cfg, &res, err, sizeof(err)), 0);
            assert_true(fabs(res.jobs[0].end - 13) < 1e-9);
            sim_result_free(&res);
        }
        wl_free(&wl);
    }
}

/* A trace naming a node outside the cluster is refused with the failure's number. */
static void trace_errors(void **state)
{
    (void)state;
    workload_t wl = {0};
    toy_workload(&wl);
    sim_failure_t fl[] = {{.t = 1, .node = 8, .down = 5}};
    sim_failures_t f = {.trace = fl, .ntrace = 1};
    sim_config_t cfg = {.nodes = 8, .policy = "conservative",
                        .speedup = {.model = SPEEDUP_LINEAR}, .failures = &f};
    sim_result_t res;
    char err[256];
    assert_true(sim_run(&wl, &cfg, &res, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "failure 1: node 8 is not in the cluster"));
    wl_free(&wl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(toy_fault_free),
        cmocka_unit_test(toy_baseline),
        cmocka_unit_test(toy_sfsj),
        cmocka_unit_test(sfsj_same_when_nodes_free),
        cmocka_unit_test(sfsj_victim_order),
        cmocka_unit_test(sfsj_tiebreak_started),
        cmocka_unit_test(sfsj_no_useless_steal),
        cmocka_unit_test(sfsj_spares_no_interrupt),
        cmocka_unit_test(stopping_after_restart),
        cmocka_unit_test(malleable_survives),
        cmocka_unit_test(malleable_restarts_smaller),
        cmocka_unit_test(sfsj_shrinks_malleable_victim),
        cmocka_unit_test(sfsj_malleable_first),
        cmocka_unit_test(requeue_starts_fresh),
        cmocka_unit_test(drawn_failures_deterministic),
        cmocka_unit_test(restart_from_checkpoint),
        cmocka_unit_test(trace_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
