/* Failures and node stealing, as an adversarial review of the change found them broken
 * (each failed before its fix): the engine's bookkeeping through failures during
 * resizes, sfsj with two failures in one pass, a node failing again as it comes back,
 * a failure at the instant its job ends, failures with the simulated checkpoint service (refused). */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ctld/ctld.h"
#include "sched/sched.h"
#include "sched/sched_internal.h"
#include "sim/metrics.h"
#include "sim/sim.h"
#include "sim/workload.h"

/* ---------- helpers ---------- */

static void submit(sched_t *s, int64_t id, double t, int nodes, sched_jobtype_t type, int min,
                   int max)
{
    tu_submit(s, (tu_job_t){.id = id, .submit = t, .type = type, .nodes = nodes, .min = min,
                            .max = max, .walltime = 100});
}

/* Every counter and index of the engine against a recount. */
static void check_invariants(const sched_t *s)
{
    int held_by[4096];
    assert_true(s->nnodes <= 4096);
    for (int i = 0; i < s->nnodes; i++)
        held_by[i] = 0;
    int nrun = 0, nres = 0, nreq = 0, nhold = 0, npend = 0;
    for (const sjob_t *j = s->rhead; j; j = j->rnext) {
        nrun++;
        assert_true(j->state != SCHED_PENDING);
        nres += j->state == SCHED_RESIZING;
        nreq += j->request != 0;
        nhold += j->oper_hold_until > 0;
        assert_true(j->ncommit <= j->nalloc);
        if (j->state == SCHED_RUNNING)
            assert_int_equal(j->ncommit, j->nalloc);
        for (int k = 0; k < j->nalloc; k++)
            held_by[j->nodes[k]]++;
        if (s->policy->needs_end_order)
            assert_true(j->endpos >= 0 && j->endpos < s->nbyend && s->byend[j->endpos] == j);
    }
    const sjob_t *prev = NULL;
    for (const sjob_t *j = s->qhead; j; j = j->qnext) {
        npend++;
        assert_int_equal(j->state, SCHED_PENDING);
        assert_int_equal(j->endpos, -1);
        nreq += j->request != 0;
        nhold += j->oper_hold_until > 0;
        if (prev)
            assert_false(core_before(j, prev)); /* queue order */
        prev = j;
    }
    assert_int_equal(nrun, s->nrunning);
    assert_int_equal(npend, s->npending);
    assert_int_equal(nres, s->nresizing);
    assert_int_equal(nreq, s->nrequests);
    assert_int_equal(nhold, s->nholds);
    if (s->policy->needs_end_order)
        assert_int_equal(s->nbyend, nrun);
    int nfree = 0, navail = 0;
    for (int i = 0; i < s->nnodes; i++) {
        bool av = nodeset_test(s->avail, i), fr = nodeset_test(s->freeset, i);
        assert_true(held_by[i] <= 1);
        navail += av;
        nfree += fr;
        if (fr)
            assert_true(av && held_by[i] == 0);
        if (av && !held_by[i])
            assert_true(fr);
    }
    assert_int_equal(nfree, s->nfree);
    assert_int_equal(navail, s->navail);
}

/* ---------- engine invariants (expected to hold) ---------- */

/* Failures during an expand (a reserved node), during a shrink (a leaving node), twice
 * on one node, and on a drained node still held: every counter stays right. */
static void invariants_failures_while_resizing(void **state)
{
    (void)state;
    const sched_action_t *a;
    int64_t job;
    sched_failure_t what;
    sched_jobinfo_t ji;
    sched_t *s = tu_engine(10, "sfsj:malleable=1");
    submit(s, 1, 0, 2, SCHED_MALLEABLE, 1, 6);
    submit(s, 2, 1, 4, SCHED_MALLEABLE, 2, 4);
    assert_int_equal(tu_pass(s, 0, &a), 2);
    check_invariants(s);
    /* job 1 expands 2 -> 5 (operator): nodes [2..5) reserved */
    char err[SCHED_ERRLEN];
    assert_int_equal(sched_request_resize(s, 1, 5, true, err, sizeof(err)), 0);
    assert_int_equal(tu_pass(s, 1, &a), 1);
    assert_int_equal(a[0].op, SCHED_OP_EXPAND);
    int reserved = a[0].nodes[0];
    /* job 2 shrinks 4 -> 2 (operator) */
    assert_int_equal(sched_request_resize(s, 2, 2, true, err, sizeof(err)), 0);
    assert_int_equal(tu_pass(s, 2, &a), 1);
    assert_int_equal(a[0].op, SCHED_OP_SHRINK);
    int leaving = a[0].nodes[0];
    check_invariants(s);
    assert_int_equal(sched_node_failed(s, reserved, &job, &what), 0);
    assert_int_equal(job, 1);
    assert_int_equal(what, SCHED_FAIL_REQUEUED); /* the whole job, for a node it never had */
    check_invariants(s);
    assert_int_equal(sched_node_failed(s, reserved, &job, &what), 0); /* twice */
    assert_int_equal(what, SCHED_FAIL_IDLE);
    check_invariants(s);
    assert_int_equal(sched_node_failed(s, leaving, &job, &what), 0);
    assert_int_equal(job, 2);
    assert_int_equal(what, SCHED_FAIL_REQUEUED); /* it was giving that node up anyway */
    check_invariants(s);
    assert_int_equal(sched_resize_done(s, 2, true), -EINVAL); /* the caller's late commit */
    tu_pass(s, 3, &a);
    check_invariants(s);
    /* a drained node still held, then failed */
    assert_int_equal(sched_job_info(s, 1, &ji), 0);
    if (ji.state != SCHED_PENDING && ji.nalloc > 1) {
        int n1 = ji.nodes[1];
        sched_set_node_available(s, n1, false);
        check_invariants(s);
        sched_node_failed(s, n1, &job, &what);
        check_invariants(s);
    }
    sched_set_node_available(s, reserved, true);
    sched_set_node_available(s, leaving, true);
    check_invariants(s);
    sched_destroy(s);
}

/* ---------- sfsj ---------- */

/* Two jobs lose a node at the same instant (one pass): the free nodes cover one of
 * them, each steal() counts all of them for itself, neither steals, the second never
 * does (steal_due is gone): it waits as under conservative although two 1-node victims
 * would restart it at once. */
static void sfsj_two_failures_one_pass(void **state)
{
    (void)state;
    sched_t *s = tu_engine(10, "sfsj");
    submit(s, 1, 0, 4, SCHED_RIGID, 0, 0);
    submit(s, 2, 1, 4, SCHED_RIGID, 0, 0);
    submit(s, 3, 2, 1, SCHED_RIGID, 0, 0);
    submit(s, 4, 3, 1, SCHED_RIGID, 0, 0);
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 0, &a), 4);
    sched_jobinfo_t j1, j2;
    sched_job_info(s, 1, &j1);
    sched_job_info(s, 2, &j2);
    int n1 = j1.nodes[1], n2 = j2.nodes[1];
    int64_t job;
    sched_failure_t what;
    sched_node_failed(s, n1, &job, &what);
    sched_node_failed(s, n2, &job, &what);
    assert_int_equal(sched_free_nodes(s), 6); /* 3 + 3 up nodes, 8 needed */
    size_t n = tu_pass(s, 1, &a);
    int interrupts = 0;
    for (size_t k = 0; k < n; k++)
        interrupts += a[k].op == SCHED_OP_INTERRUPT;
    check_invariants(s);
    sched_job_info(s, 1, &j1);
    sched_job_info(s, 2, &j2);
    print_message("pass: %zu actions, %d interrupts; job 1 %s, job 2 %s\n", n, interrupts,
                  j1.state == SCHED_PENDING ? "waits" : "runs",
                  j2.state == SCHED_PENDING ? "waits" : "runs");
    tu_complete(s, a, n); /* the victims are stopped */
    n = tu_pass(s, 1, &a);
    n = tu_pass(s, 2, &a); /* and later passes do not steal either */
    sched_job_info(s, 2, &j2);
    if (j2.state == SCHED_PENDING)
        fail_msg("failed job 2 waits (reason %s) while jobs 3 and 4 (1 node each) run: sfsj "
                 "never stole for it", sched_reason_name(j2.reason));
    sched_destroy(s);
}

/* malleable=1: the failed job waits for a victim's shrink; when it is done, an evolving
 * job's pending request (granted before the policy's pass) must not take the node the
 * shrink freed for the failed job. */
static void sfsj_request_takes_stolen_nodes(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "sfsj:malleable=1");
    submit(s, 1, 0, 4, SCHED_RIGID, 0, 0);
    submit(s, 2, 1, 2, SCHED_MALLEABLE, 1, 2);
    submit(s, 3, 2, 2, SCHED_EVOLVING, 1, 4);
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 0, &a), 3);
    sched_jobinfo_t ji;
    sched_job_info(s, 1, &ji);
    int64_t job;
    sched_failure_t what;
    sched_node_failed(s, ji.nodes[1], &job, &what); /* 3 free, 4 needed */
    size_t n = tu_pass(s, 1, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].op, SCHED_OP_SHRINK); /* job 2: 2 -> 1 for job 1 */
    char err[SCHED_ERRLEN];
    assert_int_equal(sched_request_resize(s, 3, 3, false, err, sizeof(err)), 0); /* +1 */
    assert_int_equal(sched_resize_done(s, 2, true), 0);                         /* 4 free */
    tu_pass(s, 2, &a);
    sched_job_info(s, 1, &ji);
    if (ji.state == SCHED_PENDING)
        fail_msg("the evolving job's request took the node the shrink freed for failed job 1");
    sched_destroy(s);
}

/* ---------- simulator ---------- */

/* sched_set_class: a waiting job put back in the failed class (the controller does it
 * after a restart) waits ahead of an earlier one; only waiting jobs take a class. */
static void set_class_of_waiting_job(void **state)
{
    (void)state;
    sched_t *s = tu_engine(2, "fcfs");
    submit(s, 1, 0, 2, SCHED_RIGID, 0, 0);
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 1, &a), 1); /* 1 holds both nodes */
    submit(s, 2, 2, 2, SCHED_RIGID, 0, 0);
    submit(s, 3, 3, 2, SCHED_RIGID, 0, 0);
    assert_int_equal(sched_set_class(s, 3, SCHED_CLASS_FAILED), 0);
    assert_int_equal(sched_set_class(s, 1, SCHED_CLASS_FAILED), -EINVAL); /* running */
    assert_int_equal(sched_set_class(s, 9, SCHED_CLASS_FAILED), -ENOENT);
    assert_int_equal(sched_set_class(s, 2, (sched_class_t)7), -EINVAL);
    assert_int_equal(sched_remove(s, 1), 0);
    size_t n = tu_pass(s, 4, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].job, 3);
    sched_destroy(s);
}

static void add(workload_t *wl, int64_t id, double submit_t, int nodes, double runtime)
{
    wl_job_t j = {.id = id, .submit = submit_t, .nodes = nodes, .runtime = runtime,
                  .walltime = runtime, .type = SCHED_RIGID};
    assert_int_equal(wl_append(wl, &j), 0);
}

/* A node fails again the instant it comes back up (TIME = previous TIME + DOWN).
 * other = 0: the only job waits for that node; the trace failure at 5 goes through
 * work_left(), which sees no node down "after" 5 (down_until == t) and no job running,
 * and drops the failure. other = 1: another job runs, the failure is taken, but the
 * trace's EV_FAIL (pushed at init) comes out before the EV_UP of the first failure
 * (pushed at t=1), and that stale EV_UP brings the node up for its second down time.
 * Either way node 1 is up over [5, 15) although the trace says down. */
static void sim_refail_at_up_time(void **state)
{
    (void)state;
    int bad = 0;
    for (int other = 0; other < 2; other++) {
        workload_t wl = {0};
        add(&wl, 1, 0, 2, 10);
        if (other)
            add(&wl, 2, 0, 1, 100);
        sim_failure_t fl[] = {{.t = 1, .node = 1, .down = 4}, {.t = 5, .node = 1, .down = 10}};
        sim_failures_t f = {.trace = fl, .ntrace = 2};
        sim_config_t cfg = {.nodes = 2 + other, .policy = "conservative",
                            .speedup = {.model = SPEEDUP_LINEAR}, .failures = &f};
        sim_result_t res;
        char err[256];
        assert_int_equal(sim_run(&wl, &cfg, &res, err, sizeof(err)), 0);
        double end = res.jobs[0].end;
        long fails = res.failures;
        sim_result_free(&res);
        wl_free(&wl);
        print_message("other job %d: failures counted %ld, job 1 ends at %g\n", other, fails,
                      end);
        if (end != 25) {
            print_message("other job %d: node 1 is down over [5, 15) by the trace, yet the "
                          "2-node job restarted and ended at %g (expected 25)\n", other, end);
            bad++;
        }
    }
    if (bad)
        fail_msg("%d of 2 variants wrong", bad);
}

/* The checkpoint service holds nodes the engine sees as unavailable, as failures do:
 * the two together are refused (a failed service node came back to the jobs). */
static void sim_ckpt_node_failure(void **state)
{
    (void)state;
    workload_t wl = {0};
    add(&wl, 1, 0, 3, 100);
    sim_failure_t fl[] = {{.t = 1, .node = 3, .down = 1}};
    sim_failures_t f = {.trace = fl, .ntrace = 1};
    sim_ckpt_t ck = {.nodes = 1, .favor = CKPT_FAVOR_ICHECK, .node_mem_mb = 100,
                     .mb_per_node = 0};
    sim_config_t cfg = {.nodes = 4, .policy = "conservative",
                        .speedup = {.model = SPEEDUP_LINEAR}, .failures = &f, .ckpt = &ck};
    sim_result_t res;
    char err[256];
    assert_true(sim_run(&wl, &cfg, &res, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "cannot be simulated together yet"));
    wl_free(&wl);
}

/* A job ends at 10; its node fails at 10 (integer trace times): the trace's EV_FAIL
 * was pushed at init, before the job's END, and wins the tie: the finished job is
 * requeued and runs again from scratch. */
static void sim_failure_at_end_instant(void **state)
{
    (void)state;
    workload_t wl = {0};
    add(&wl, 1, 0, 1, 10);
    sim_failure_t fl[] = {{.t = 10, .node = 0, .down = 5}};
    sim_failures_t f = {.trace = fl, .ntrace = 1};
    sim_config_t cfg = {.nodes = 2, .policy = "conservative",
                        .speedup = {.model = SPEEDUP_LINEAR}, .failures = &f};
    sim_result_t res;
    char err[256];
    assert_int_equal(sim_run(&wl, &cfg, &res, err, sizeof(err)), 0);
    double end = res.jobs[0].end, lost = res.lost_node_seconds;
    int restarts = res.jobs[0].restarts;
    sim_result_free(&res);
    wl_free(&wl);
    print_message("job ends at %g after %d restarts, %g node-s lost\n", end, restarts, lost);
    if (end != 10)
        fail_msg("the job that completed at 10 was requeued by a failure at 10 (ends %g)", end);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(invariants_failures_while_resizing),
        cmocka_unit_test(sfsj_two_failures_one_pass),
        cmocka_unit_test(sfsj_request_takes_stolen_nodes),
        cmocka_unit_test(set_class_of_waiting_job),
        cmocka_unit_test(sim_refail_at_up_time),
        cmocka_unit_test(sim_ckpt_node_failure),
        cmocka_unit_test(sim_failure_at_end_instant),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
