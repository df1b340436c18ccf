/* The simulator with fair share: tests/data/fairshare.swf (scripts/gen-fairshare-swf.py),
 * 7 users in 3 groups, user 1 flooding the queue, replayed with and without it; and the
 * engine's clock at the events of an instant. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "sim/metrics.h"
#include "sim/sim.h"
#include "sim/workload.h"

#define FLOODER 1

static const sched_prio_config_t fairshare = {
    .w_fairshare = 1000, .max_age = 7 * 86400, .half_life = 7 * 86400, .calc_period = 300};

static void load_trace(workload_t *wl)
{
    char path[4096], err[256] = "";
    tu_data_path(path, sizeof(path), "fairshare.swf");
    wl_swf_opts_t o = {.cores_per_node = 1};
    if (wl_load_swf(path, &o, wl, err, sizeof(err)) < 0)
        fail_msg("%s", err);
}

static void replay(const workload_t *wl, const char *policy, const sched_prio_config_t *prio,
                   sim_result_t *res)
{
    sim_config_t cfg = {.nodes = wl->machine_nodes, .policy = policy,
                        .speedup = {.model = SPEEDUP_LINEAR}, .priority = prio};
    char err[256] = "";
    if (sim_run(wl, &cfg, res, err, sizeof(err)) != 0)
        fail_msg("sim_run: %s", err);
}

/* Every job of the trace ran to its end: none lost, none rejected. */
static void assert_all_ran(const workload_t *wl, const sim_result_t *res)
{
    assert_int_equal(res->njobs, wl->njobs);
    assert_int_equal(res->rejected, 0);
    assert_int_equal(res->unfinished, 0);
    for (size_t i = 0; i < res->njobs; i++) {
        assert_true(res->jobs[i].id == wl->jobs[i].id);
        assert_true(res->jobs[i].start >= res->jobs[i].submit);
        assert_true(res->jobs[i].end == res->jobs[i].start + res->jobs[i].runtime);
    }
}

static const sim_user_stat_t *user_of(const sim_user_stat_t *u, size_t n, uint32_t user)
{
    for (size_t k = 0; k < n; k++)
        if (u[k].user == user)
            return &u[k];
    fail_msg("user %u not in the results", user);
    return NULL;
}

/* The trace as generated: 300 jobs on 64 nodes, user 1 with 150 of them, each user in
 * one account (group + 1). */
static void trace_shape(void **state)
{
    (void)state;
    workload_t wl = {0};
    load_trace(&wl);
    assert_int_equal(wl.njobs, 300);
    assert_int_equal(wl.machine_nodes, 64);
    static const uint32_t account[] = {0, 2, 2, 3, 3, 3, 4, 4};
    size_t flood = 0;
    for (size_t i = 0; i < wl.njobs; i++) {
        const wl_job_t *j = &wl.jobs[i];
        assert_true(j->user >= 1 && j->user <= 7);
        assert_int_equal(j->account, account[j->user]);
        flood += j->user == FLOODER;
    }
    assert_int_equal(flood, 150);
    wl_free(&wl);
}

/* With fair share the flooder waits longer, every other user less, and the same jobs
 * all run; for the strict order (fcfs) and backfilling (easy). */
static void flooder_waits_others_do_not(void **state)
{
    (void)state;
    workload_t wl = {0};
    load_trace(&wl);
    const char *policies[] = {"fcfs", "easy"};
    for (size_t p = 0; p < 2; p++) {
        sim_result_t off, on;
        replay(&wl, policies[p], NULL, &off);
        replay(&wl, policies[p], &fairshare, &on);
        assert_all_ran(&wl, &off);
        assert_all_ran(&wl, &on);
        sim_user_stat_t *uoff, *uon;
        size_t noff, non;
        assert_int_equal(sim_metrics_users(&off, &uoff, &noff), 0);
        assert_int_equal(sim_metrics_users(&on, &uon, &non), 0);
        assert_int_equal(noff, 7);
        assert_int_equal(non, 7);
        for (uint32_t u = 1; u <= 7; u++) {
            const sim_user_stat_t *a = user_of(uoff, noff, u), *b = user_of(uon, non, u);
            assert_int_equal(a->jobs, b->jobs);
            if (u == FLOODER)
                assert_true(b->wait_mean > 1.5 * a->wait_mean);
            else
                assert_true(b->wait_mean < 0.5 * a->wait_mean);
        }
        free(uoff);
        free(uon);
        sim_result_free(&off);
        sim_result_free(&on);
    }
    wl_free(&wl);
}

/* Two replays with fair share give the same starts, to the bit. */
static void deterministic(void **state)
{
    (void)state;
    workload_t wl = {0};
    load_trace(&wl);
    sim_result_t a, b;
    replay(&wl, "easy", &fairshare, &a);
    replay(&wl, "easy", &fairshare, &b);
    assert_int_equal(a.passes, b.passes);
    for (size_t i = 0; i < a.njobs; i++)
        assert_memory_equal(&a.jobs[i], &b.jobs[i], sizeof(a.jobs[i]));
    sim_result_free(&a);
    sim_result_free(&b);
    wl_free(&wl);
}

/* Usage is charged up to the end of a job, not to the pass before it. Job 1 (account
 * 1) holds the 4 nodes from 0 to 100; jobs 2 (account 1) and 3 (account 2) wait from
 * 0 for the whole cluster. Usage is recalculated at every pass (calc 0): at 100,
 * account 1 has used 400 node-seconds only if job 1's end was charged at 100 (the
 * only pass before was at 0), and then job 3 goes first. */
static void usage_charged_at_the_end(void **state)
{
    (void)state;
    workload_t wl = {0};
    for (int i = 0; i < 3; i++) {
        wl_job_t j = {.id = i + 1, .submit = 0, .runtime = 100, .walltime = 100, .nodes = 4,
                      .user = (uint32_t)i + 1, .account = i < 2 ? 1 : 2,
                      .type = SCHED_RIGID};
        assert_int_equal(wl_append(&wl, &j), 0);
    }
    wl.machine_nodes = 4;
    sched_prio_config_t prio = fairshare;
    prio.calc_period = 0;
    sim_result_t res;
    replay(&wl, "fcfs", &prio, &res);
    assert_true(res.jobs[0].start == 0);
    assert_true(res.jobs[2].start == 100);
    assert_true(res.jobs[1].start == 200);
    sim_result_free(&res);
    /* without weights: submission order */
    replay(&wl, "fcfs", NULL, &res);
    assert_true(res.jobs[1].start == 100);
    assert_true(res.jobs[2].start == 200);
    sim_result_free(&res);
    wl_free(&wl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(trace_shape),
        cmocka_unit_test(flooder_waits_others_do_not),
        cmocka_unit_test(deterministic),
        cmocka_unit_test(usage_charged_at_the_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
