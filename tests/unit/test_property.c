/* Properties that must hold for every policy on any workload (random rigid,
 * moldable and malleable jobs; fixed seeds):
 *   - no node is in two jobs at once, and every node is free at the end;
 *   - every job stays within [min, max] and its node constraint;
 *   - nothing starts before it is submitted, and every job finishes;
 *   - policies with a strict start order never start a job ahead of an earlier one;
 *   - easy never delays its reserved job, conservative no job, beyond its first
 *     reservation (exact estimates);
 *   - limits per user and per account are never exceeded;
 *   - with random node masks (and nodes failing and coming back), every allocation stays
 *     inside the job's allowed nodes and holds its required ones after every action and
 *     failure, and every job finishes;
 *   - reservations never overlap one another, and while one lasts no job but its own
 *     holds its nodes and its own hold no others (estimates kept). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "sched/constraint.h"
#include "sim/sim.h"
#include "sim/workload.h"

#define NWORKLOADS 60

static const char *const policies[] = {
    "fcfs", "easy", "conservative", "fpsma-prma", "fpsma-pwma", "egs-prma", "egs-pwma",
    "perf", "dmr", "mebf", "equi", "fpsma-prma:max_expand=0", "egs-pwma:constraints=0",
    "perf:lower=0.5:upper=0.8", "mebf:alpha=0", "equi:guard=60", "fpsma-pwma:tick=50",
    "elastic", "elastic:below=1:gaps=0", "io-aware", "sfsj:malleable=1",
};
#define NPOL (sizeof(policies) / sizeof(policies[0]))

static bool strict_order(const char *p)
{
    return !strncmp(p, "fcfs", 4) || !strncmp(p, "fpsma", 5) || !strncmp(p, "egs", 3) ||
           !strncmp(p, "perf", 4) || !strncmp(p, "equi", 4);
}

/* A random workload; ids are 1..n in submission order. */
static void gen(workload_t *wl, uint64_t seed, int nodes, bool rigid_exact)
{
    rng_t r;
    rng_seed(&r, seed);
    memset(wl, 0, sizeof(*wl));
    int n = 20 + (int)rng_below(&r, 41);
    double t = 0;
    for (int i = 0; i < n; i++) {
        wl_job_t j = {0};
        j.id = i + 1;
        t += rng_below(&r, 4) == 0 ? 0 : floor(rng_exp(&r, 40));
        j.submit = t;
        j.runtime = 1 + floor(rng_uniform(&r) * 600);
        j.walltime = rigid_exact ? j.runtime : j.runtime * (1 + rng_uniform(&r) * 2);
        int kind = (int)rng_below(&r, 10);
        j.type = rigid_exact || kind < 4 ? SCHED_RIGID
                 : kind < 6              ? SCHED_MOLDABLE
                 : kind < 9              ? SCHED_MALLEABLE
                                         : SCHED_EVOLVING;
        j.constraint = j.type == SCHED_RIGID ? SCHED_CONS_NONE
                                             : (sched_constraint_t)rng_below(&r, 6);
        int want = 1 + (int)(pow(rng_uniform(&r), 2) * nodes);
        j.nodes = cons_largest_leq(want, j.constraint, 1, nodes);
        if (!j.nodes)
            j.nodes = cons_smallest_geq(1, j.constraint, 1, nodes);
        if (j.type != SCHED_RIGID) {
            j.min_nodes = cons_smallest_geq(1 + (int)rng_below(&r, (uint64_t)j.nodes),
                                            j.constraint, 1, j.nodes);
            j.max_nodes = j.nodes + (int)rng_below(&r, (uint64_t)(nodes - j.nodes + 1));
            if (!j.min_nodes)
                j.min_nodes = j.nodes;
        }
        j.has_speedup = true;
        j.speedup = (speedup_t){.model = SPEEDUP_AMDAHL, .a = rng_uniform(&r) * 0.1};
        assert_int_equal(wl_append(wl, &j), 0);
    }
}

typedef struct checker {
    const workload_t *wl;
    int nnodes;
    int64_t *owner;
    int **held;
    int *nheld;
    double *start;
    bool constraints;
    char fail[512];
} checker_t;

#define FAIL(c, ...)                                                              \
    do {                                                                          \
        if (!(c)->fail[0])                                                        \
            snprintf((c)->fail, sizeof((c)->fail), __VA_ARGS__);                  \
    } while (0)

static void on_event(void *arg, const sim_alloc_event_t *ev)
{
    checker_t *c = arg;
    size_t k = (size_t)(ev->job - 1);
    if (getenv("PROP_TRACE") && atoi(getenv("PROP_TRACE")) > 1)
        fprintf(stderr, "  t=%g job %lld %s %d->%d\n", ev->t, (long long)ev->job,
                sim_op_name(ev->op), ev->before, ev->after);
    const wl_job_t *j = &c->wl->jobs[k];
    if (ev->op == SIM_OP_START) {
        c->start[k] = ev->t;
        if (ev->t < j->submit)
            FAIL(c, "job %zu started at %g before its submission at %g", k + 1, ev->t, j->submit);
    }
    if (ev->n != ev->after)
        FAIL(c, "job %zu: event lists %d nodes for size %d", k + 1, ev->n, ev->after);
    if (ev->after > 0) {
        int lo = j->min_nodes ? j->min_nodes : j->nodes, hi = j->max_nodes ? j->max_nodes : j->nodes;
        if (j->type == SCHED_RIGID || j->type == SCHED_EVOLVING)
            lo = hi = j->nodes;
        if (hi > c->nnodes)
            hi = c->nnodes;
        if (ev->after < lo || ev->after > hi)
            FAIL(c, "job %zu on %d nodes outside [%d, %d]", k + 1, ev->after, lo, hi);
        if (c->constraints && !cons_valid(ev->after, j->constraint))
            FAIL(c, "job %zu on %d nodes violates %s", k + 1, ev->after,
                 sched_constraint_name(j->constraint));
    }
    /* Release what the job no longer holds, then take what it gained. */
    for (int i = 0; i < c->nheld[k]; i++) {
        int node = c->held[k][i];
        bool kept = false;
        for (int m = 0; m < ev->n && !kept; m++)
            kept = ev->nodes[m] == node;
        if (!kept)
            c->owner[node] = -1;
    }
    for (int m = 0; m < ev->n; m++) {
        int node = ev->nodes[m];
        if (node < 0 || node >= c->nnodes) {
            FAIL(c, "job %zu got node %d outside the cluster", k + 1, node);
            continue;
        }
        if (c->owner[node] != -1 && c->owner[node] != ev->job)
            FAIL(c, "node %d given to job %zu while job %lld holds it", node, k + 1,
                 (long long)c->owner[node]);
        c->owner[node] = ev->job;
    }
    /* The first node never leaves a running job (rank 0 lives there). */
    if ((ev->op == SIM_OP_EXPAND || ev->op == SIM_OP_SHRINK) && c->nheld[k] > 0 &&
        (ev->n == 0 || ev->nodes[0] != c->held[k][0]))
        FAIL(c, "job %zu lost its first node %d", k + 1, c->held[k][0]);
    c->held[k] = realloc(c->held[k], (size_t)(ev->n ? ev->n : 1) * sizeof(int));
    if (ev->n > 0)
        memcpy(c->held[k], ev->nodes, (size_t)ev->n * sizeof(int));
    c->nheld[k] = ev->n;
}

static void run_checked(const workload_t *wl, int nodes, const char *policy, bool zero_cost)
{
    checker_t c = {.wl = wl, .nnodes = nodes};
    c.owner = malloc((size_t)nodes * sizeof(int64_t));
    for (int i = 0; i < nodes; i++)
        c.owner[i] = -1;
    c.held = calloc(wl->njobs, sizeof(int *));
    c.nheld = calloc(wl->njobs, sizeof(int));
    c.start = calloc(wl->njobs, sizeof(double));
    c.constraints = !strstr(policy, "constraints=0");
    sim_config_t cfg = {
        .nodes = nodes,
        .policy = policy,
        .reconf = zero_cost ? (sim_reconf_t){0} : sim_reconf_default,
        .speedup = {.model = SPEEDUP_LINEAR},
        .on_event = on_event,
        .event_arg = &c,
    };
    sim_result_t res;
    char err[256];
    assert_int_equal(sim_run(wl, &cfg, &res, err, sizeof(err)), 0);
    if (c.fail[0])
        fail_msg("%s: %s", policy, c.fail);
    assert_int_equal(res.unfinished, 0);
    assert_int_equal(res.rejected, 0);
    for (int i = 0; i < nodes; i++)
        assert_int_equal(c.owner[i], -1);
    for (size_t k = 0; k < wl->njobs; k++) {
        assert_true(res.jobs[k].start >= wl->jobs[k].submit);
        assert_true(res.jobs[k].end >= res.jobs[k].start);
        /* A job that never resized runs exactly its run time at its start size. */
        if (res.jobs[k].expansions == 0 && res.jobs[k].shrinks == 0 &&
            res.jobs[k].nodes_start == wl->jobs[k].nodes)
            assert_true(fabs(res.jobs[k].end - res.jobs[k].start - wl->jobs[k].runtime) < 1e-6);
    }
    if (strict_order(policy))
        for (size_t k = 1; k < wl->njobs; k++)
            if (res.jobs[k].start < res.jobs[k - 1].start)
                fail_msg("%s: job %zu started at %g, ahead of job %zu (%g)", policy, k + 1,
                         res.jobs[k].start, k, res.jobs[k - 1].start);
    sim_result_free(&res);
    for (size_t k = 0; k < wl->njobs; k++)
        free(c.held[k]);
    free(c.held);
    free(c.nheld);
    free(c.start);
    free(c.owner);
}

static void every_policy_keeps_invariants(void **state)
{
    (void)state;
    for (int w = 0; w < NWORKLOADS; w++) {
        /* sizes across several 64-node bitmap words too */
        int nodes = w % 4 == 3 ? 65 + (w * 37) % 200 : 4 + (w * 7) % 45;
        workload_t wl;
        gen(&wl, 1000 + (uint64_t)w, nodes, false);
        for (size_t p = 0; p < NPOL; p++)
            { if (getenv("PROP_TRACE")) fprintf(stderr, "w=%d nodes=%d %s\n", w, nodes, policies[p]); run_checked(&wl, nodes, policies[p], w % 3 == 0); }
        wl_free(&wl);
    }
}

/* Drives the engine directly with exact estimates and records each job's first
 * reservation; a job must start no later than it. */
static void reservations_hold(const char *policy, bool every_job)
{
    for (int w = 0; w < NWORKLOADS; w++) {
        int nodes = 4 + (w * 5) % 40;
        workload_t wl;
        gen(&wl, 5000 + (uint64_t)w, nodes, true);
        size_t n = wl.njobs;
        sched_t *s = tu_engine(nodes, policy);
        double *first = malloc(n * sizeof(double)), *start = malloc(n * sizeof(double));
        double *end = malloc(n * sizeof(double));
        for (size_t k = 0; k < n; k++)
            first[k] = start[k] = end[k] = -1;
        size_t next = 0, done = 0;
        while (done < n) {
            double t = next < n ? wl.jobs[next].submit : INFINITY;
            for (size_t k = 0; k < n; k++)
                if (start[k] >= 0 && end[k] > 0 && end[k] < t && !isinf(end[k]))
                    t = end[k];
            for (size_t k = 0; k < n; k++)
                if (start[k] >= 0 && end[k] == t) {
                    sched_remove(s, wl.jobs[k].id);
                    end[k] = INFINITY; /* finished */
                    done++;
                }
            while (next < n && wl.jobs[next].submit == t) {
                tu_submit(s, (tu_job_t){.id = wl.jobs[next].id, .submit = t, .type = SCHED_RIGID,
                                        .nodes = wl.jobs[next].nodes,
                                        .walltime = wl.jobs[next].walltime});
                next++;
            }
            const sched_action_t *a;
            size_t na = tu_pass(s, t, &a);
            for (size_t i = 0; i < na; i++) {
                size_t k = (size_t)(a[i].job - 1);
                start[k] = t;
                end[k] = t + wl.jobs[k].runtime;
                if (first[k] >= 0 && t > first[k] + 1e-9)
                    fail_msg("%s: job %zu started at %g after its reservation at %g", policy,
                             k + 1, t, first[k]);
            }
            sched_jobinfo_t info;
            for (size_t k = 0; k < n; k++)
                if (start[k] < 0 && first[k] < 0 && k < next &&
                    sched_job_info(s, wl.jobs[k].id, &info) == 0 && info.reserved_start >= 0)
                    first[k] = info.reserved_start;
        }
        /* easy reserves only for the first waiting job; conservative for every job */
        size_t reserved = 0;
        for (size_t k = 0; k < n; k++)
            reserved += first[k] >= 0;
        if (every_job)
            assert_true(reserved > 0 || n == 0);
        free(first);
        free(start);
        free(end);
        sched_destroy(s);
        wl_free(&wl);
    }
}

static void easy_never_delays_reservation(void **state)
{
    (void)state;
    reservations_hold("easy", false);
}

static void elastic_never_delays_reservation(void **state)
{
    (void)state;
    reservations_hold("elastic", false); /* rigid jobs: elastic starts as easy */
}

static void conservative_keeps_every_reservation(void **state)
{
    (void)state;
    reservations_hold("conservative", true);
}

/* Limits are never exceeded (src/sched/limits.c), whatever the policy: users and
 * accounts (one under another) with limits on running jobs and nodes, random rigid,
 * moldable, malleable and evolving jobs; after every pass, each user's and account's
 * running jobs and held nodes are within their limits. */
static void limits_hold(const char *policy)
{
    for (int w = 0; w < 12; w++) {
        int nodes = 8 + (w * 5) % 24;
        workload_t wl;
        gen(&wl, 9000 + (uint64_t)w, nodes, false);
        size_t n = wl.njobs;
        sched_t *s = tu_engine(nodes, policy);
        char err[SCHED_ERRLEN] = "";
        assert_int_equal(sched_set_account(s, 1, 0, 1, err, sizeof(err)), 0);
        assert_int_equal(sched_set_account(s, 2, 1, 1, err, sizeof(err)), 0);
        assert_int_equal(sched_set_account(s, 3, 0, 1, err, sizeof(err)), 0);
        const sched_limits_t ul[3] = {{.max_running = 2}, {.max_nodes = nodes / 2}, {0}};
        const sched_limits_t al[4] = {{0}, {.max_nodes = nodes * 2 / 3}, {.max_running = 2},
                                      {.max_running = 3, .max_nodes = nodes - 1}};
        for (uint32_t u = 0; u < 3; u++)
            assert_int_equal(sched_set_user_limits(s, u, &ul[u]), 0);
        for (uint32_t a = 1; a < 4; a++)
            assert_int_equal(sched_set_account_limits(s, a, &al[a]), 0);
        double *end = malloc(n * sizeof(double));
        for (size_t k = 0; k < n; k++)
            end[k] = -1;
        size_t next = 0;
        for (int steps = 0; steps < 10000; steps++) {
            double t = next < n ? wl.jobs[next].submit : INFINITY;
            for (size_t k = 0; k < n; k++)
                if (end[k] > 0 && end[k] < t)
                    t = end[k];
            if (isinf(t))
                break; /* the rest wait on limits they can never meet */
            for (size_t k = 0; k < n; k++)
                if (end[k] == t) {
                    sched_clock(s, t);
                    sched_remove(s, wl.jobs[k].id);
                    end[k] = -2;
                }
            while (next < n && wl.jobs[next].submit == t) {
                const wl_job_t *j = &wl.jobs[next];
                sched_jobspec_t sp = {.id = j->id, .submit = t, .user = (uint32_t)(next % 3),
                                      .account = (uint32_t)(next % 4), .type = j->type,
                                      .nodes = j->nodes, .min_nodes = j->min_nodes,
                                      .max_nodes = j->max_nodes, .constraint = j->constraint,
                                      .walltime = j->walltime};
                assert_int_equal(sched_submit(s, &sp, err, sizeof(err)), 0);
                next++;
            }
            const sched_action_t *a;
            size_t na = tu_pass(s, t, &a);
            for (size_t i = 0; i < na; i++)
                if (a[i].op == SCHED_OP_START)
                    end[a[i].job - 1] = t + wl.jobs[a[i].job - 1].runtime;
            /* the counts, with the resizes of the pass under way (their nodes held) */
            int urun[3] = {0}, unodes[3] = {0}, arun[4] = {0}, anodes[4] = {0};
            for (size_t k = 0; k < n; k++) {
                sched_jobinfo_t info;
                if (end[k] < 0 || sched_job_info(s, wl.jobs[k].id, &info) < 0 ||
                    info.state == SCHED_PENDING)
                    continue;
                urun[k % 3]++;
                unodes[k % 3] += info.nalloc;
                for (int acct = (int)(k % 4); acct > 0; acct = acct == 2 ? 1 : 0) {
                    arun[acct]++;
                    anodes[acct] += info.nalloc;
                }
            }
            for (int u = 0; u < 3; u++)
                if ((ul[u].max_running && urun[u] > ul[u].max_running) ||
                    (ul[u].max_nodes && unodes[u] > ul[u].max_nodes))
                    fail_msg("%s, workload %d, t=%g: user %d runs %d jobs on %d nodes", policy, w,
                             t, u, urun[u], unodes[u]);
            for (int acct = 1; acct < 4; acct++)
                if ((al[acct].max_running && arun[acct] > al[acct].max_running) ||
                    (al[acct].max_nodes && anodes[acct] > al[acct].max_nodes))
                    fail_msg("%s, workload %d, t=%g: account %d runs %d jobs on %d nodes", policy,
                             w, t, acct, arun[acct], anodes[acct]);
            tu_complete(s, a, na);
        }
        free(end);
        sched_destroy(s);
        wl_free(&wl);
    }
}

/* --- node selection: random masks, the engine driven directly --- */

typedef struct mask {
    int *allowed, nallowed; /* nallowed 0: no mask */
    int *required, nrequired;
} mask_t;

/* About half the jobs get an allowed set that holds their start size, a third of those
 * a required set within their minimum. */
static void gen_masks(const workload_t *wl, int nodes, uint64_t seed, mask_t *m)
{
    rng_t r;
    rng_seed(&r, seed);
    int *perm = malloc((size_t)nodes * sizeof(int));
    for (size_t k = 0; k < wl->njobs; k++) {
        const wl_job_t *j = &wl->jobs[k];
        memset(&m[k], 0, sizeof(m[k]));
        if (rng_below(&r, 2))
            continue;
        int lo = j->min_nodes ? j->min_nodes : j->nodes;
        int need = j->type == SCHED_MOLDABLE ? lo : j->nodes;
        if (j->type == SCHED_RIGID || j->type == SCHED_EVOLVING)
            lo = j->nodes;
        for (int i = 0; i < nodes; i++)
            perm[i] = i;
        for (int i = nodes - 1; i > 0; i--) {
            int x = (int)rng_below(&r, (uint64_t)i + 1), t = perm[i];
            perm[i] = perm[x];
            perm[x] = t;
        }
        m[k].nallowed = need + (int)rng_below(&r, (uint64_t)(nodes - need + 1));
        m[k].allowed = malloc((size_t)m[k].nallowed * sizeof(int));
        memcpy(m[k].allowed, perm, (size_t)m[k].nallowed * sizeof(int));
        if (rng_below(&r, 3) == 0) {
            m[k].nrequired = 1 + (int)rng_below(&r, (uint64_t)(lo < 3 ? lo : 3));
            m[k].required = malloc((size_t)m[k].nrequired * sizeof(int));
            memcpy(m[k].required, perm, (size_t)m[k].nrequired * sizeof(int));
        }
    }
    free(perm);
}

static bool in_list(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

typedef struct mrun {
    const workload_t *wl;
    const mask_t *m;
    int64_t *owner;
    int **held, *nheld;
    const char *policy;
} mrun_t;

/* Apply one action to the model and check it against the job's masks. */
static void mask_apply(mrun_t *c, const sched_action_t *a)
{
    size_t k = (size_t)(a->job - 1);
    const mask_t *m = &c->m[k];
    if (a->op == SCHED_OP_SHRINK || a->op == SCHED_OP_INTERRUPT) {
        int keep = 0;
        for (int i = 0; i < c->nheld[k]; i++) {
            int node = c->held[k][i];
            if (a->op == SCHED_OP_SHRINK && !in_list(a->nodes, a->nnodes, node))
                c->held[k][keep++] = node;
            else
                c->owner[node] = -1;
        }
        c->nheld[k] = keep;
    } else {
        c->held[k] = realloc(c->held[k], (size_t)(c->nheld[k] + a->nnodes) * sizeof(int));
        for (int i = 0; i < a->nnodes; i++) {
            int node = a->nodes[i];
            if (c->owner[node] != -1)
                fail_msg("%s: node %d given to job %lld while job %lld holds it", c->policy,
                         node, (long long)a->job, (long long)c->owner[node]);
            if (m->nallowed && !in_list(m->allowed, m->nallowed, node))
                fail_msg("%s: job %lld got node %d outside its allowed nodes", c->policy,
                         (long long)a->job, node);
            c->owner[node] = a->job;
            c->held[k][c->nheld[k]++] = node;
        }
    }
    for (int i = 0; i < m->nrequired && c->nheld[k] > 0; i++)
        if (!in_list(c->held[k], c->nheld[k], m->required[i]))
            fail_msg("%s: job %lld runs without its required node %d (%s)", c->policy,
                     (long long)a->job, m->required[i], sched_op_name(a->op));
}

/* A node fails: its job runs on without it or waits again (the model follows). */
static void mask_fail(mrun_t *c, sched_t *s, int node, double *end)
{
    int64_t job;
    sched_failure_t what;
    assert_int_equal(sched_node_failed(s, node, &job, &what), 0);
    if (job < 0)
        return;
    size_t k = (size_t)(job - 1);
    int keep = 0;
    for (int i = 0; i < c->nheld[k]; i++) {
        int x = c->held[k][i];
        if (what == SCHED_FAIL_SHRUNK && x != node)
            c->held[k][keep++] = x;
        else
            c->owner[x] = -1;
    }
    c->nheld[k] = keep;
    if (what == SCHED_FAIL_REQUEUED)
        end[k] = -1;
    const mask_t *m = &c->m[k];
    for (int i = 0; i < m->nrequired && keep > 0; i++)
        if (!in_list(c->held[k], keep, m->required[i]))
            fail_msg("%s: job %lld runs on without its required node %d", c->policy,
                     (long long)job, m->required[i]);
}

/* Jobs run for their run time from their start whatever their size; resizes are done
 * at once; now and then a node fails and comes back later. Every job must finish: a
 * mask the nodes can hold never starves a job. */
static void run_masked(const workload_t *wl, const mask_t *m, int nodes, const char *policy,
                       uint64_t seed)
{
    rng_t r;
    rng_seed(&r, seed);
    double *back = calloc((size_t)nodes, sizeof(double)); /* > 0: down until then */
    size_t n = wl->njobs, next = 0, done = 0;
    mrun_t c = {.wl = wl, .m = m, .policy = policy};
    c.owner = malloc((size_t)nodes * sizeof(int64_t));
    for (int i = 0; i < nodes; i++)
        c.owner[i] = -1;
    c.held = calloc(n, sizeof(int *));
    c.nheld = calloc(n, sizeof(int));
    double *end = malloc(n * sizeof(double));
    for (size_t k = 0; k < n; k++)
        end[k] = -1;
    sched_t *s = tu_engine(nodes, policy);
    while (done < n) {
        double t = next < n ? wl->jobs[next].submit : INFINITY;
        for (size_t k = 0; k < n; k++)
            if (end[k] >= 0 && end[k] < t)
                t = end[k];
        for (int i = 0; i < nodes; i++)
            if (back[i] > 0 && back[i] < t)
                t = back[i];
        if (isinf(t))
            fail_msg("%s: %zu of %zu jobs never finished", policy, n - done, n);
        for (int i = 0; i < nodes; i++)
            if (back[i] == t) {
                assert_int_equal(sched_set_node_available(s, i, true), 0);
                back[i] = 0;
            }
        int victim = (int)rng_below(&r, (uint64_t)nodes);
        if (rng_below(&r, 8) == 0 && back[victim] == 0) {
            mask_fail(&c, s, victim, end);
            back[victim] = t + 50 + (double)rng_below(&r, 200);
        }
        for (size_t k = 0; k < n; k++)
            if (end[k] == t) {
                sched_remove(s, wl->jobs[k].id);
                for (int i = 0; i < c.nheld[k]; i++)
                    c.owner[c.held[k][i]] = -1;
                c.nheld[k] = 0;
                end[k] = INFINITY; /* finished */
                done++;
            }
        for (; next < n && wl->jobs[next].submit == t; next++) {
            const wl_job_t *j = &wl->jobs[next];
            tu_submit(s, (tu_job_t){.id = j->id, .submit = t, .type = j->type,
                                    .nodes = j->nodes, .min = j->min_nodes,
                                    .max = j->max_nodes, .cons = j->constraint,
                                    .walltime = j->walltime, .allowed = m[next].allowed,
                                    .nallowed = m[next].nallowed, .required = m[next].required,
                                    .nrequired = m[next].nrequired});
        }
        const sched_action_t *a;
        size_t na;
        for (int rep = 0; rep < 50 && (na = tu_pass(s, t, &a)) > 0; rep++) {
            for (size_t i = 0; i < na; i++) {
                mask_apply(&c, &a[i]);
                size_t k = (size_t)(a[i].job - 1);
                if (a[i].op == SCHED_OP_START)
                    end[k] = t + wl->jobs[k].runtime;
                else if (a[i].op == SCHED_OP_INTERRUPT)
                    end[k] = -1;
            }
            tu_complete(s, a, na);
        }
    }
    sched_destroy(s);
    for (size_t k = 0; k < n; k++)
        free(c.held[k]);
    free(c.held);
    free(c.nheld);
    free(c.owner);
    free(end);
    free(back);
}

static void every_policy_keeps_masks(void **state)
{
    (void)state;
    for (int w = 0; w < NWORKLOADS / 3; w++) {
        int nodes = w % 4 == 3 ? 65 + (w * 37) % 100 : 4 + (w * 7) % 45;
        workload_t wl;
        gen(&wl, 9000 + (uint64_t)w, nodes, false);
        mask_t *m = calloc(wl.njobs, sizeof(*m));
        gen_masks(&wl, nodes, 77 + (uint64_t)w, m);
        for (size_t p = 0; p < NPOL; p++) {
            if (getenv("PROP_TRACE"))
                fprintf(stderr, "masks w=%d nodes=%d %s\n", w, nodes, policies[p]);
            run_masked(&wl, m, nodes, policies[p], 31 * (uint64_t)w + p);
        }
        for (size_t k = 0; k < wl.njobs; k++) {
            free(m[k].allowed);
            free(m[k].required);
        }
        free(m);
        wl_free(&wl);
    }
}

static void limits_never_exceeded(void **state)
{
    (void)state;
    for (size_t p = 0; p < NPOL; p++)
        limits_hold(policies[p]);
}

/* --- reservations --- */

typedef struct rsv {
    double start, end;
    int lo, hi; /* nodes lo..hi */
    bool ok;    /* accepted */
} rsv_t;

static bool rsv_overlap(const rsv_t *a, const rsv_t *b)
{
    return a->start < b->end && b->start < a->end && a->lo <= b->hi && b->lo <= a->hi;
}

/* Returns how many times a job of a reservation ran on it, and adds to *beside how many
 * times another job ran while one lasted (so that the sweep is seen to mean something). */
static int calendar_holds(const char *policy, uint64_t seed, int *beside)
{
    enum { NN = 12, NR = 4, NJ = 60 };
    sched_t *s = tu_engine(NN, policy);
    rng_t r;
    rng_seed(&r, seed);
    rsv_t rv[NR + 1];
    char err[SCHED_ERRLEN];
    /* requests at random: those that would share a node at the same time are refused */
    for (int k = 1; k <= NR; k++) {
        rsv_t *x = &rv[k];
        x->start = 200 + (double)rng_below(&r, 1300);
        x->end = x->start + 100 + (double)rng_below(&r, 400);
        x->lo = (int)rng_below(&r, NN - 3);
        x->hi = x->lo + (int)rng_below(&r, 4);
        int nodes[NN], n = 0;
        for (int i = x->lo; i <= x->hi; i++)
            nodes[n++] = i;
        x->ok = sched_add_reservation(s, k, x->start, x->end, nodes, n, false, err,
                                      sizeof(err)) == 0;
        bool clash = false;
        for (int m = 1; m < k; m++)
            clash = clash || (rv[m].ok && rsv_overlap(x, &rv[m]));
        if (x->ok == clash)
            fail_msg("%s: reservation %d %s", policy, k, x->ok ? "overlaps one accepted"
                                                              : "refused without a clash");
    }
    double end[NJ + 1] = {0}, wall[NJ + 1] = {0};
    int64_t of[NJ + 1] = {0};
    int next = 1, own = 0;
    for (double t = 1; t < 4000; t += 10) {
        for (int id = 1; id <= NJ; id++)
            if (end[id] > 0 && end[id] <= t) {
                sched_clock(s, t);
                sched_remove(s, id);
                end[id] = -1;
            }
        for (; next <= NJ && next * 40 <= t; next++) {
            int k = 1 + (int)rng_below(&r, NR);
            bool member = rv[k].ok && rv[k].end > t && rng_below(&r, 4) == 0;
            wall[next] = rng_below(&r, 5) == 0 && !member ? 0 : 20 + (double)rng_below(&r, 300);
            int size = member ? 1 + (int)rng_below(&r, (uint64_t)(rv[k].hi - rv[k].lo + 1))
                              : 1 + (int)rng_below(&r, 5);
            of[next] = member ? k : 0;
            bool mall = !member && rng_below(&r, 2);
            sched_jobspec_t j = {.id = next, .submit = t,
                                 .type = mall ? SCHED_MALLEABLE : SCHED_RIGID,
                                 .nodes = size, .min_nodes = mall ? 1 : 0,
                                 .max_nodes = mall ? NN : 0, .walltime = wall[next],
                                 .reservation = of[next]};
            assert_int_equal(sched_submit(s, &j, err, sizeof(err)), 0);
        }
        const sched_action_t *a;
        size_t n = tu_pass(s, t, &a);
        for (size_t i = 0; i < n; i++)
            if (a[i].op == SCHED_OP_START) { /* within its estimate */
                int64_t id = a[i].job;
                end[id] = t + (wall[id] > 0 ? wall[id] * 0.9 : 700);
                if (of[id] && t < rv[of[id]].start)
                    fail_msg("%s seed %llu: job %lld started at %g before its reservation",
                             policy, (unsigned long long)seed, (long long)id, t);
            }
        tu_complete(s, a, n);
        for (int id = 1; id <= NJ; id++) {
            sched_jobinfo_t info;
            if (end[id] <= 0 || sched_job_info(s, id, &info) < 0)
                continue;
            for (int i = 0; i < info.nalloc; i++)
                for (int k = 1; k <= NR; k++) {
                    const rsv_t *x = &rv[k];
                    if (!x->ok || t < x->start || t >= x->end)
                        continue;
                    bool in = info.nodes[i] >= x->lo && info.nodes[i] <= x->hi;
                    own += in && of[id] == k;
                    *beside += !in && of[id] != k;
                    if (in && of[id] != k)
                        fail_msg("%s seed %llu t=%g: job %d holds node %d of reservation %d",
                                 policy, (unsigned long long)seed, t, id, info.nodes[i], k);
                    if (!in && of[id] == k)
                        fail_msg("%s seed %llu t=%g: job %d of reservation %d holds node %d",
                                 policy, (unsigned long long)seed, t, id, k, info.nodes[i]);
                }
        }
    }
    sched_destroy(s);
    return own;
}

static void reservations_never_overlapped(void **state)
{
    (void)state;
    for (size_t p = 0; p < NPOL; p++) {
        int own = 0, beside = 0;
        for (uint64_t seed = 1; seed <= 5; seed++)
            own += calendar_holds(policies[p], seed, &beside);
        if (!own || !beside)
            fail_msg("%s: no job ran in (%d) or beside (%d) a reservation while it lasted",
                     policies[p], own, beside);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_policy_keeps_invariants),
        cmocka_unit_test(easy_never_delays_reservation),
        cmocka_unit_test(conservative_keeps_every_reservation),
        cmocka_unit_test(elastic_never_delays_reservation),
        cmocka_unit_test(limits_never_exceeded),
        cmocka_unit_test(every_policy_keeps_masks),
        cmocka_unit_test(reservations_never_overlapped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
