/* bench_sim prio: what the multifactor priority costs a scheduling pass (issue 15's
 * goal: under 10 ms with 100,000 queued jobs of 1,000 users).
 *
 *   bench_sim prio POLICY NODES QUEUED USERS [PASSES]
 *
 * NODES running one-node jobs of a day (one then removed: one node is free), QUEUED
 * jobs of 2 to NODES/4 nodes that do not fit it, every job of one of USERS users in
 * USERS/100 accounts (at least 1), drawn with a fixed seed. Then PASSES passes
 * (default 50), each a second after the last and after one more submission, on
 * the same engine state: without weights, with the fair-share and age
 * weights recalculated at every pass (calc 0), with them recalculated every 300 s (the
 * default: a pass in between only puts the new job in its place), and the priority
 * update alone
 * (sched_prio_update: usage charged, the tree's figures, every job's priority, the
 * queue sorted); then calc 300 again with a tenth of the users limited to one running
 * job (their waiting jobs parked out of each pass and merged back after it). Prints for each the median wall-clock time, the median CPU time of
 * the thread (which a machine shared with other work inflates less: it leaves out the
 * time the thread waited for a core) and the longest wall-clock time; and the ratio
 * of the weighted pass's CPU median to the unweighted one's. */
#include "bench_prio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/rng.h"
#include "../power/bench_util.h"
#include "sched.h"

typedef struct bench {
    sched_t *s;
    rng_t r;
    int64_t id;
    double now;
    int nodes, users, accounts;
} bench_t;

static int submit(bench_t *b, int size, double walltime)
{
    uint32_t user = 1 + (uint32_t)rng_below(&b->r, (uint64_t)b->users);
    sched_jobspec_t j = {.id = b->id++, .submit = b->now, .type = SCHED_RIGID, .nodes = size,
                         .walltime = walltime, .user = user,
                         .account = 1 + user % (uint32_t)b->accounts};
    char err[256];
    if (sched_submit(b->s, &j, err, sizeof(err)) < 0)
        return fprintf(stderr, "bench_sim prio: %s\n", err), -1;
    return 0;
}

static int queued_job(bench_t *b)
{
    int big = b->nodes / 4 > 2 ? b->nodes / 4 : 2;
    return submit(b, 2 + (int)rng_below(&b->r, (uint64_t)(big - 1)),
                  60 + rng_uniform(&b->r) * (86400 - 60));
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* passes passes (or priority updates alone): their wall-clock times in t and CPU times
 * in c, in ms, each sorted */
static int measure(bench_t *b, int passes, bool update_only, double *t, double *c)
{
    const sched_action_t *acts;
    size_t n;
    for (int i = 0; i < passes; i++) {
        if (queued_job(b) < 0)
            return -1;
        b->now += 1;
        double t0 = now(), c0 = cpu_now();
        if (update_only) {
            sched_clock(b->s, b->now);
            sched_prio_update(b->s);
        } else {
            sched_schedule(b->s, b->now, &acts, &n);
        }
        c[i] = (cpu_now() - c0) * 1e3;
        t[i] = (now() - t0) * 1e3;
    }
    qsort(t, (size_t)passes, sizeof(double), cmp);
    qsort(c, (size_t)passes, sizeof(double), cmp);
    return 0;
}

int bench_prio(int argc, char **argv)
{
    if (argc < 6)
        return fprintf(stderr, "usage: bench_sim prio POLICY NODES QUEUED USERS [PASSES]\n"), 2;
    bench_t b = {.id = 1, .now = 1000, .nodes = atoi(argv[3]), .users = atoi(argv[5])};
    int queued = atoi(argv[4]), passes = argc > 6 ? atoi(argv[6]) : 50;
    b.accounts = b.users / 100 > 1 ? b.users / 100 : 1;
    char err[512];
    if (b.nodes < 8 || queued < 0 || b.users < 1 || passes < 1 ||
        sched_create(b.nodes, argv[2], &b.s, err, sizeof(err)) < 0)
        return fprintf(stderr, "bench_sim prio: %s\n",
                       b.nodes < 8 || queued < 0 || b.users < 1 || passes < 1
                           ? "NODES >= 8, QUEUED >= 0, USERS >= 1, PASSES >= 1" : err), 2;
    rng_seed(&b.r, 15);
    const sched_action_t *acts;
    size_t n;
    for (int i = 0; i < b.nodes; i++)
        if (submit(&b, 1, 86400) < 0)
            return 1;
    sched_schedule(b.s, b.now, &acts, &n);
    sched_remove(b.s, 1);
    for (int i = 0; i < queued; i++)
        if (queued_job(&b) < 0)
            return 1;
    enum { NM = 5 };
    double *t[2 * NM];
    for (int k = 0; k < 2 * NM; k++)
        if (!(t[k] = malloc((size_t)passes * sizeof(double))))
            return 1;
    sched_prio_config_t off, on;
    sched_get_priority(b.s, &off);
    on = off;
    on.w_fairshare = 1000;
    on.w_age = 100;
    on.calc_period = 0;
    sched_prio_config_t every300 = on;
    every300.calc_period = 300;
    if (measure(&b, passes, false, t[0], t[NM]) < 0 ||
        sched_set_priority(b.s, &on, err, sizeof(err)) < 0 ||
        measure(&b, passes, false, t[1], t[NM + 1]) < 0 ||
        sched_set_priority(b.s, &every300, err, sizeof(err)) < 0 ||
        measure(&b, passes, false, t[2], t[NM + 2]) < 0 ||
        measure(&b, passes, true, t[3], t[NM + 3]) < 0)
        return 1;
    /* a tenth of the users at a limit of one running job: their waiting jobs are parked
     * out of the pass and put back after it */
    sched_limits_t one = {.max_running = 1};
    int nlim = (b.users + 9) / 10;
    double set0 = now();
    for (int u = 1; u <= nlim; u++)
        if (sched_set_user_limits(b.s, (uint32_t)u, &one) < 0)
            return 1;
    double set_ms = (now() - set0) * 1e3;
    if (measure(&b, passes, false, t[4], t[NM + 4]) < 0)
        return 1;
    static const char *const what[NM] = {"no weights", "fairshare+age, calc 0",
                                          "fairshare+age, calc 300", "priority update alone",
                                          "calc 300, 10% users limited"};
    printf("%s nodes %d queued %d users %d accounts %d (%d passes each; ms: median wall / "
           "median CPU / longest wall)\n", argv[2], b.nodes, sched_pending_count(b.s), b.users,
           b.accounts, passes);
    for (int k = 0; k < NM; k++)
        printf("  %-24s %8.3f / %8.3f / %8.3f\n", what[k], t[k][passes / 2],
               t[k + NM][passes / 2], t[k][passes - 1]);
    printf("  setting %d users' limits   %8.3f ms\n", nlim, set_ms);
    /* a pass that stops at the head of the queue takes no time: no ratio */
    double c0 = t[NM][passes / 2], c1 = t[NM + 1][passes / 2];
    if (c0 >= 0.001)
        printf("  weighted / unweighted pass (CPU medians): %.1f\n", c1 / c0);
    for (int k = 0; k < 2 * NM; k++)
        free(t[k]);
    sched_destroy(b.s);
    return 0;
}
