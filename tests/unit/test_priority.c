/* Multifactor priority and fair share in the engine (src/sched/prio.c): the queue's
 * order by each factor, the fair-share tree's figures, decay, nice, and the resizing
 * policies growing in priority order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "sched/sched_internal.h"

static sched_jobspec_t job(int64_t id, double submit, uint32_t user, uint32_t account, int nodes)
{
    sched_jobspec_t j = {.id = id, .submit = submit, .user = user, .account = account,
                         .type = SCHED_RIGID, .nodes = nodes, .walltime = 100};
    return j;
}

static void submit(sched_t *s, sched_jobspec_t j)
{
    char err[SCHED_ERRLEN] = "";
    if (sched_submit(s, &j, err, sizeof(err)) != 0)
        fail_msg("submit %lld: %s", (long long)j.id, err);
}

static void weights_every(sched_t *s, double period, double age, double size, double fs,
                          double tier, int tier_max)
{
    sched_prio_config_t c;
    sched_get_priority(s, &c);
    c.w_age = age;
    c.w_size = size;
    c.w_fairshare = fs;
    c.w_tier = tier;
    c.tier_max = tier_max;
    c.calc_period = period;
    c.half_life = 3600;
    c.max_age = 1000;
    char err[SCHED_ERRLEN] = "";
    if (sched_set_priority(s, &c, err, sizeof(err)) != 0)
        fail_msg("weights: %s", err);
}

/* recalculated at every pass */
static void weights(sched_t *s, double age, double size, double fs, double tier, int tier_max)
{
    weights_every(s, 0, age, size, fs, tier, tier_max);
}

/* The job started by a pass (the only start), or -1. */
static int64_t started(sched_t *s, double now)
{
    const sched_action_t *a;
    size_t n = tu_pass(s, now, &a);
    int64_t id = -1;
    for (size_t i = 0; i < n; i++)
        if (a[i].op == SCHED_OP_START) {
            assert_int_equal(id, -1);
            id = a[i].job;
        }
    return id;
}

/* User 1 runs the whole 4-node cluster from 0 to 1000; then user 1's job 10 (submitted
 * first) and user 2's job 11 wait for it. */
static sched_t *after_usage(double fs_weight)
{
    sched_t *s = tu_engine(4, "fcfs");
    weights(s, 0, 0, fs_weight, 0, 0);
    submit(s, job(1, 0, 1, 0, 4));
    assert_int_equal(started(s, 0), 1);
    submit(s, job(10, 500, 1, 0, 4));
    submit(s, job(11, 600, 2, 0, 4));
    assert_int_equal(started(s, 700), -1);
    sched_clock(s, 1000);
    assert_int_equal(sched_remove(s, 1), 0);
    return s;
}

static void fairshare_reorders(void **state)
{
    (void)state;
    sched_t *s = after_usage(1000);
    assert_int_equal(started(s, 1000), 11); /* user 2 used nothing */
    sched_prio_info_t p1, p2;
    assert_int_equal(sched_job_priority(s, 10, &p1), 0);
    assert_int_equal(sched_job_priority(s, 11, &p2), 0);
    assert_true(p1.fairshare < p2.fairshare);
    sched_destroy(s);

    s = after_usage(0); /* no weight: submission order */
    assert_int_equal(started(s, 1000), 10);
    sched_destroy(s);
}

/* A user's first job has its fair share at the next pass, not at the next periodic
 * recalculation: before it, a new association's factor was 0 and its job waited behind
 * those of a user who had used the cluster. */
static void new_user_has_its_share_at_once(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fcfs");
    weights_every(s, 300, 0, 0, 1000, 0, 0);
    submit(s, job(1, 0, 1, 0, 4));
    assert_int_equal(started(s, 0), 1);
    submit(s, job(10, 50, 1, 0, 4));
    assert_int_equal(started(s, 60), -1); /* user 1's usage recalculated at 0 */
    submit(s, job(11, 100, 2, 0, 4));   /* user 2 is new: no recalculation due */
    sched_clock(s, 120);
    assert_int_equal(sched_remove(s, 1), 0);
    assert_int_equal(started(s, 120), 11);
    sched_prio_info_t p1, p2;
    assert_int_equal(sched_job_priority(s, 10, &p1), 0);
    assert_int_equal(sched_job_priority(s, 11, &p2), 0);
    assert_true(p2.fairshare > p1.fairshare);
    sched_destroy(s);
}

/* A requeued job (a failure, a preemption, ductile requeue) keeps its priority until the
 * next recalculation, and the factors shown still add up to it (they were cleared with
 * the job: age and fair share 0 beside a priority of 600; the review). */
static void requeued_job_priority_shown(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fcfs");
    weights_every(s, 300, 1000, 0, 500, 0, 0);
    submit(s, job(1, 0, 1, 0, 4));
    assert_int_equal(started(s, 100), 1);
    sched_clock(s, 150);
    assert_int_equal(sched_requeue(s, 1, SCHED_CLASS_NORMAL), 0);
    sched_prio_config_t c;
    sched_get_priority(s, &c);
    sched_prio_info_t p;
    assert_int_equal(sched_job_priority(s, 1, &p), 0);
    assert_true(p.priority > 0);
    double sum = c.w_age * p.age + c.w_fairshare * p.fairshare - p.nice;
    assert_true(fabs(sum - p.priority) < 1e-9);
    sched_destroy(s);
}

/* Age counts from when a job could start (after a hold, a --begin, a dependency: the
 * controller's eligible time), not from its submission. */
static void age_from_eligible(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fcfs");
    weights(s, 1000, 0, 0, 0, 0); /* max age 1000 s */
    submit(s, job(1, 0, 1, 0, 4));
    assert_int_equal(started(s, 0), 1);
    sched_jobspec_t held = job(2, 0, 1, 0, 4); /* submitted first, released at 500 */
    held.eligible = 500;
    submit(s, held);
    submit(s, job(3, 100, 2, 0, 4));
    sched_clock(s, 600);
    assert_int_equal(sched_remove(s, 1), 0);
    assert_int_equal(started(s, 600), 3);
    sched_prio_info_t p;
    assert_int_equal(sched_job_priority(s, 2, &p), 0);
    assert_true(fabs(p.age - 0.1) < 1e-9);
    sched_destroy(s);
}

/* What `ductile priority` shows: the queue's order (a higher tier first, whatever the
 * priority), and each job's factors as its priority was computed, adding up to it even
 * when time passed and the usage was refreshed since (a query recomputes nothing). */
static void priority_shown_as_computed(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fcfs");
    weights_every(s, 300, 1000, 0, 1000, 500, 2);
    sched_prio_config_t c;
    sched_get_priority(s, &c);
    submit(s, job(1, 0, 1, 0, 4));
    assert_int_equal(started(s, 0), 1);
    submit(s, job(2, 10, 1, 0, 4));
    sched_jobspec_t hi = job(3, 20, 2, 0, 4);
    hi.tier = 2;
    hi.nice = 50;
    submit(s, hi);
    assert_int_equal(started(s, 30), -1);
    sched_prio_info_t before, after;
    assert_int_equal(sched_job_priority(s, 2, &before), 0);
    sched_clock(s, 200);
    sched_usage_refresh(s); /* user 1's usage grows: its figures change */
    int64_t order[4];
    assert_int_equal(sched_pending_order(s, order, 4), 2);
    assert_int_equal(order[0], 3); /* tier 2, though nice 50 */
    assert_int_equal(order[1], 2);
    for (int64_t id = 2; id <= 3; id++) {
        sched_prio_info_t p;
        assert_int_equal(sched_job_priority(s, id, &p), 0);
        double sum = c.w_age * p.age + c.w_fairshare * p.fairshare + c.w_tier * p.tier - p.nice;
        assert_true(fabs(sum - p.priority) < 1e-9);
    }
    assert_int_equal(sched_job_priority(s, 2, &after), 0);
    assert_true(after.priority == before.priority && after.age == before.age &&
                after.fairshare == before.fairshare);
    sched_destroy(s);
}

/* Two users under the root, one used 1000 s x 4 nodes (decayed by a half-life of
 * 3600 s): the classic figures. */
static void fairshare_figures(void **state)
{
    (void)state;
    sched_t *s = after_usage(1000);
    started(s, 1000);
    sched_assoc_t a[8];
    size_t n = sched_associations(s, a, 8);
    assert_int_equal(n, 2);
    const sched_assoc_t *u1 = a[0].user == 1 ? &a[0] : &a[1], *u2 = u1 == a ? &a[1] : &a[0];
    double expect = 4 * 3600 / log(2) * (1 - exp2(-1000.0 / 3600));
    assert_true(fabs(u1->usage - expect) < 1e-6 * expect);
    assert_true(u2->usage == 0);
    assert_true(fabs(u1->norm_shares - 0.5) < 1e-12 && fabs(u2->norm_shares - 0.5) < 1e-12);
    assert_true(fabs(u1->norm_usage - 1) < 1e-12);
    /* effective usage under the root: its own (normalised) */
    assert_true(fabs(u1->eff_usage - 1) < 1e-12);
    assert_true(u2->eff_usage == 0);
    assert_true(fabs(u1->fairshare - 0.25) < 1e-12); /* 2^(-1 / 0.5) */
    assert_true(u2->fairshare == 1);                  /* used nothing */
    sched_destroy(s);
}

/* The classic rule below the root: an account that used less than its share ranks
 * above one that used exactly its share (the root's pull had put it below): A (1 share
 * of 4) used 20 % of the cluster, B (2 of 4) 50 %, C (1 of 4) 30 %. One user each. */
static void fairshare_order_by_share(void **state)
{
    (void)state;
    sched_t *s = tu_engine(10, "fcfs");
    weights(s, 0, 0, 1000, 0, 0);
    char err[SCHED_ERRLEN] = "";
    assert_int_equal(sched_set_account(s, 1, 0, 1, err, sizeof(err)), 0);
    assert_int_equal(sched_set_account(s, 2, 0, 2, err, sizeof(err)), 0);
    assert_int_equal(sched_set_account(s, 3, 0, 1, err, sizeof(err)), 0);
    /* 2, 5 and 3 nodes of the 10 for 100 s */
    submit(s, job(1, 0, 1, 1, 2));
    submit(s, job(2, 0, 2, 2, 5));
    submit(s, job(3, 0, 3, 3, 3));
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 0, &a), 3);
    submit(s, job(10, 50, 2, 2, 10)); /* B's first */
    submit(s, job(11, 50, 1, 1, 10));
    sched_clock(s, 100);
    for (int64_t id = 1; id <= 3; id++)
        assert_int_equal(sched_remove(s, id), 0);
    assert_int_equal(started(s, 100), 11); /* A's, though B's came first */
    sched_prio_info_t pa, pb;
    assert_int_equal(sched_job_priority(s, 11, &pa), 0);
    assert_int_equal(sched_job_priority(s, 10, &pb), 0);
    assert_true(pa.fairshare > pb.fairshare);
    assert_true(fabs(pb.fairshare - 0.5) < 1e-9); /* B used exactly its share */
    sched_destroy(s);
}

/* Usage halves every half-life while nothing runs. */
static void usage_decays(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fcfs");
    weights(s, 0, 0, 1, 0, 0);
    assert_int_equal(sched_set_usage(s, 0, 7, 8000), 0);
    assert_int_equal(sched_set_usage(s, 0, 8, 1), 0);
    const sched_action_t *acts;
    tu_pass(s, 3600 * 2, &acts);
    sched_assoc_t a[4];
    assert_int_equal(sched_associations(s, a, 4), 2);
    for (int i = 0; i < 2; i++)
        if (a[i].user == 7)
            assert_true(fabs(a[i].usage - 2000) < 1e-9);
    sched_destroy(s);
}

/* Accounts 5 (3 shares) and 6 (1 share); equal usage: account 5's user goes first. */
static void account_shares(void **state)
{
    (void)state;
    sched_t *s = tu_engine(2, "fcfs");
    weights(s, 0, 0, 1000, 0, 0);
    char err[SCHED_ERRLEN] = "";
    assert_int_equal(sched_set_account(s, 5, 0, 3, err, sizeof(err)), 0);
    assert_int_equal(sched_set_account(s, 6, 0, 1, err, sizeof(err)), 0);
    /* an account cannot go under one of its own */
    assert_int_equal(sched_set_account(s, 9, 5, 1, err, sizeof(err)), 0);
    assert_true(sched_set_account(s, 5, 9, 1, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "under"));
    assert_int_equal(sched_set_usage(s, 6, 1, 100), 0);
    assert_int_equal(sched_set_usage(s, 5, 2, 100), 0);
    submit(s, job(1, 0, 1, 6, 2));
    submit(s, job(2, 1, 2, 5, 2));
    assert_int_equal(started(s, 2), 2);
    sched_assoc_t a[8];
    size_t n = sched_associations(s, a, 8);
    assert_int_equal(n, 5);
    for (size_t i = 0; i < n; i++) {
        if (a[i].is_account && a[i].account == 5)
            assert_true(fabs(a[i].norm_shares - 0.75) < 1e-12);
        if (a[i].is_account && a[i].account == 9)
            assert_int_equal(a[i].parent, 5);
        if (!a[i].is_account && a[i].account == 6)
            assert_true(fabs(a[i].norm_shares - 0.25) < 1e-12);
    }
    sched_destroy(s);
}

/* Age (capped at max_age), size and tier each reorder the queue; nice pushes back. */
static void other_factors(void **state)
{
    (void)state;
    /* size: the larger job first */
    sched_t *s = tu_engine(4, "fcfs");
    weights(s, 0, 100, 0, 0, 0);
    submit(s, job(1, 0, 1, 0, 1));
    submit(s, job(2, 1, 1, 0, 3));
    const sched_action_t *acts;
    size_t n = tu_pass(s, 2, &acts);
    assert_int_equal(n, 2);
    assert_int_equal(acts[0].job, 2);
    sched_destroy(s);

    /* tier */
    s = tu_engine(1, "fcfs");
    weights(s, 0, 0, 0, 100, 4);
    sched_jobspec_t lo = job(1, 0, 1, 0, 1), hi = job(2, 1, 1, 0, 1);
    lo.tier = 1;
    hi.tier = 4;
    submit(s, lo);
    submit(s, hi);
    assert_int_equal(started(s, 2), 2);
    sched_prio_info_t p;
    assert_int_equal(sched_job_priority(s, 1, &p), 0);
    assert_true(fabs(p.tier - 0.25) < 1e-12 && fabs(p.priority - 25) < 1e-9);
    sched_destroy(s);

    /* age: both past max_age (1000 s) weigh the same, so the size decides */
    s = tu_engine(4, "fcfs");
    weights(s, 10, 1, 0, 0, 0);
    submit(s, job(1, 0, 1, 0, 1));
    submit(s, job(2, 500, 1, 0, 2));
    n = tu_pass(s, 5000, &acts);
    assert_int_equal(n, 2);
    assert_int_equal(acts[0].job, 2);
    assert_int_equal(sched_job_priority(s, 1, &p), 0);
    assert_true(p.age == 1);
    sched_destroy(s);
    /* ...before max_age, the older one */
    s = tu_engine(4, "fcfs");
    weights(s, 10, 1, 0, 0, 0);
    submit(s, job(1, 0, 1, 0, 1));
    submit(s, job(2, 500, 1, 0, 2));
    n = tu_pass(s, 600, &acts);
    assert_int_equal(acts[0].job, 1);
    sched_destroy(s);

    /* nice, with or without weights */
    for (int w = 0; w < 2; w++) {
        s = tu_engine(1, "fcfs");
        weights(s, w, 0, 0, 0, 0);
        sched_jobspec_t a = job(1, 0, 1, 0, 1), b = job(2, 1, 1, 0, 1);
        a.nice = 10;
        submit(s, a);
        submit(s, b);
        assert_int_equal(sched_set_nice(s, 2, 5), 0);
        assert_int_equal(started(s, 2), 2);
        sched_destroy(s);
    }
}

/* The queue in priority order after many arrivals with random nice values. */
static void queue_order(void **state)
{
    (void)state;
    sched_t *s = tu_engine(1, "fcfs");
    weights(s, 1, 0, 0, 0, 0);
    unsigned seed = 12345;
    enum { N = 300 };
    int nice[N + 1];
    for (int i = 1; i <= N; i++) {
        seed = seed * 1103515245u + 12345u;
        sched_jobspec_t j = job(i, i, 1, 0, 1);
        j.nice = nice[i] = (int)((seed >> 16) % 50);
        submit(s, j);
    }
    int last = -1;
    double t = N + 1;
    for (int k = 0; k < N; k++) {
        int64_t id = started(s, t);
        assert_true(id >= 1 && id <= N);
        /* age weighs at most 1: a lower nice always wins */
        assert_true(nice[id] >= last);
        last = nice[id];
        sched_clock(s, t + 1);
        sched_remove(s, id);
        t += 1;
    }
    sched_destroy(s);
}

/* EGS gives the remainder of idle nodes to the first resizable job: the first in
 * priority order once weights are set, not the first started. */
static void grow_in_priority_order(void **state)
{
    (void)state;
    for (int fs = 0; fs < 2; fs++) {
        sched_t *s = tu_engine(5, "egs-prma");
        weights(s, 0, 0, fs ? 1000 : 0, 0, 0);
        sched_set_usage(s, 0, 1, 1e6); /* user 1 used much */
        char err[SCHED_ERRLEN] = "";
        int n1[] = {0, 1}, n2[] = {2, 3};
        sched_jobspec_t a = job(1, 0, 1, 0, 2), b = job(2, 1, 2, 0, 2);
        a.type = b.type = SCHED_MALLEABLE;
        a.min_nodes = b.min_nodes = 1;
        a.max_nodes = b.max_nodes = 5;
        a.walltime = b.walltime = 1e6;
        assert_int_equal(sched_restore_running(s, &a, 0, n1, 2, err, sizeof(err)), 0);
        assert_int_equal(sched_restore_running(s, &b, 1, n2, 2, err, sizeof(err)), 0);
        const sched_action_t *acts;
        size_t n = tu_pass(s, 10, &acts);
        const sched_action_t *g = tu_find(acts, n, fs ? 2 : 1, SCHED_OP_EXPAND);
        assert_non_null(g);
        assert_int_equal(g->nodes_after, 3);
        assert_null(tu_find(acts, n, fs ? 1 : 2, SCHED_OP_EXPAND));
        sched_destroy(s);
    }
}

/* Usage follows the nodes a job holds: a job shrunk from 4 to 2 at t=100 and ended at
 * t=200 used 600 node-seconds (no decay). */
static void usage_follows_resizes(void **state)
{
    (void)state;
    sched_t *s = tu_engine(4, "fcfs");
    sched_prio_config_t c;
    sched_get_priority(s, &c);
    c.w_fairshare = 1;
    c.half_life = 0;
    c.calc_period = 0;
    char err[SCHED_ERRLEN] = "";
    assert_int_equal(sched_set_priority(s, &c, err, sizeof(err)), 0);
    sched_jobspec_t a = job(1, 0, 3, 0, 4);
    a.type = SCHED_MALLEABLE;
    a.min_nodes = 1;
    submit(s, a);
    assert_int_equal(started(s, 0), 1);
    sched_clock(s, 100);
    assert_int_equal(sched_request_resize(s, 1, 2, true, err, sizeof(err)), 0);
    const sched_action_t *acts;
    size_t n = tu_pass(s, 100, &acts);
    assert_non_null(tu_find(acts, n, 1, SCHED_OP_SHRINK));
    tu_complete(s, acts, n);
    sched_clock(s, 200);
    sched_remove(s, 1);
    tu_pass(s, 200, &acts);
    sched_assoc_t as[2];
    assert_int_equal(sched_associations(s, as, 2), 1);
    assert_true(fabs(as[0].usage - 600) < 1e-9);
    sched_destroy(s);
}

/* The queue after a pass is in core_before's order, whatever happened to it between
 * two passes: submissions, removals (enough to close up the array of waiting jobs),
 * changes of class (a job put in its place in the list), of nice and of fair share,
 * several tiers, jobs parked by limits during the pass. prio.c sorts an array of copies and relinks the list from it, trusting
 * that the copies compare as core_before does; the array must hold the waiting jobs,
 * each at its slot. */
static void check_queue(const sched_t *s)
{
    int n = 0;
    for (const sjob_t *j = s->qhead; j; j = j->qnext, n++) {
        assert_int_equal(j->state, SCHED_PENDING);
        if (j->qprev)
            assert_false(core_before(j, j->qprev));
        assert_ptr_equal(j->qprev ? j->qprev->qnext : s->qhead, j);
        assert_true(j->pidx >= 0 && (size_t)j->pidx < s->npend);
        assert_ptr_equal(s->pend[j->pidx], j);
    }
    assert_int_equal(n, sched_pending_count(s));
    size_t held = 0;
    for (size_t i = 0; i < s->npend; i++)
        held += s->pend[i] != NULL;
    assert_int_equal(held, (size_t)n);
}

static int rnd(unsigned *seed, int m)
{
    *seed = *seed * 1103515245u + 12345u;
    return (int)((*seed >> 16) % (unsigned)m);
}

static void queue_sorted_through_changes(void **state)
{
    (void)state;
    sched_t *s = tu_engine(16, "easy");
    weights(s, 1, 0, 50, 100, 3);
    /* users 1-4 at one running job, user 5 at 4 nodes: their waiting jobs are parked
     * out of each pass and merged back after it (limits.c) */
    sched_limits_t one = {.max_running = 1}, four = {.max_nodes = 4};
    for (uint32_t u = 1; u <= 4; u++)
        assert_int_equal(sched_set_user_limits(s, u, &one), 0);
    assert_int_equal(sched_set_user_limits(s, 5, &four), 0);
    unsigned seed = 4242;
#define RND(m) rnd(&seed, (m))
    int64_t next = 1;
    double t = 0;
    for (int round = 0; round < 40; round++) {
        int burst = round == 0 ? 3000 : RND(200);
        for (int i = 0; i < burst; i++) {
            uint32_t user = 1 + (uint32_t)RND(20);
            sched_jobspec_t j = job(next++, t, user, 0, 1 + RND(12));
            j.tier = RND(4);
            j.nice = RND(30) - 10;
            j.walltime = 10 + RND(500);
            submit(s, j);
        }
        if (round % 3 == 1) /* most of the waiting jobs leave at once */
            for (int64_t id = next - 1; id >= 1; id--)
                if (RND(3) && sched_pending_count(s) > 50) {
                    const sjob_t *j = idmap_get(s->jobs, id);
                    if (j && j->state == SCHED_PENDING)
                        assert_int_equal(sched_remove(s, id), 0);
                }
        for (int i = 0; i < 20; i++) { /* a job moved to another class, another nice */
            int64_t id = 1 + RND((int)(next - 1));
            const sjob_t *j = idmap_get(s->jobs, id);
            if (j && j->state == SCHED_PENDING) {
                assert_int_equal(sched_set_class(s, id, (sched_class_t)RND(3)), 0);
                assert_int_equal(sched_set_nice(s, id, RND(40) - 20), 0);
            }
        }
        t += 7;
        const sched_action_t *a;
        size_t na = tu_pass(s, t, &a);
        check_queue(s);
        for (size_t i = 0; i < na; i++) /* some running jobs end */
            if (a[i].op == SCHED_OP_START && RND(2)) {
                sched_clock(s, t + 1);
                assert_int_equal(sched_remove(s, a[i].job), 0);
            }
    }
#undef RND
    sched_destroy(s);
}

static void bad_settings(void **state)
{
    (void)state;
    sched_t *s = tu_engine(2, "fcfs");
    sched_prio_config_t c;
    sched_get_priority(s, &c);
    char err[SCHED_ERRLEN] = "";
    c.w_age = -1;
    assert_true(sched_set_priority(s, &c, err, sizeof(err)) < 0);
    sched_get_priority(s, &c);
    c.max_age = 0;
    assert_true(sched_set_priority(s, &c, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "age"));
    assert_true(sched_set_account(s, 0, 0, 1, err, sizeof(err)) < 0);
    assert_true(sched_set_account(s, 3, 0, -1, err, sizeof(err)) < 0);
    assert_true(sched_set_usage(s, 0, 1, NAN) < 0);
    sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fairshare_reorders),   cmocka_unit_test(fairshare_figures),
        cmocka_unit_test(fairshare_order_by_share), cmocka_unit_test(usage_decays),
        cmocka_unit_test(priority_shown_as_computed), cmocka_unit_test(age_from_eligible),
        cmocka_unit_test(requeued_job_priority_shown),         cmocka_unit_test(account_shares),
        cmocka_unit_test(other_factors),        cmocka_unit_test(queue_order),
        cmocka_unit_test(grow_in_priority_order), cmocka_unit_test(usage_follows_resizes),
        cmocka_unit_test(bad_settings),         cmocka_unit_test(new_user_has_its_share_at_once),         cmocka_unit_test(queue_sorted_through_changes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
