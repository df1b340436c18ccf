/* The simulator takes reservations (sim_config_t.resv): no job of the workload holds a
 * reserved node while the reservation lasts, with any policy; without it, jobs do. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "sim/sim.h"
#include "sim/workload.h"

typedef struct watch {
    double from, to;    /* the window */
    int first_reserved; /* nodes from here up are reserved */
    int in_window;      /* starts or growths in it, on any node */
    int on_reserved;    /* ... on a reserved node */
    double *start, *end;
} watch_t;

static void on_event(void *arg, const sim_alloc_event_t *ev)
{
    watch_t *w = arg;
    size_t k = (size_t)(ev->job - 1);
    if (ev->op == SIM_OP_START)
        w->start[k] = ev->t;
    if (ev->after == 0)
        w->end[k] = ev->t;
    if (ev->t >= w->from && ev->t < w->to && ev->after > 0) {
        w->in_window++;
        for (int i = 0; i < ev->n; i++)
            w->on_reserved += ev->nodes[i] >= w->first_reserved;
    }
}

static void workload(workload_t *wl)
{
    memset(wl, 0, sizeof(*wl));
    for (int i = 0; i < 60; i++) {
        wl_job_t j = {0};
        j.id = i + 1;
        j.submit = i * 30;
        j.runtime = 100;
        j.walltime = 150;
        j.nodes = 1 + i % 4;
        j.type = i % 3 == 0 ? SCHED_MALLEABLE : SCHED_RIGID;
        if (j.type == SCHED_MALLEABLE) {
            j.min_nodes = 1;
            j.max_nodes = 8;
        }
        assert_int_equal(wl_append(wl, &j), 0);
    }
}

static watch_t run(const workload_t *wl, const char *policy, const sim_resv_t *r, int nr)
{
    watch_t w = {.from = 500, .to = 1500, .first_reserved = 5};
    w.start = calloc(wl->njobs, sizeof(double));
    w.end = calloc(wl->njobs, sizeof(double));
    sim_config_t cfg = {.nodes = 8, .policy = policy, .reconf = sim_reconf_default,
                        .speedup = {.model = SPEEDUP_LINEAR}, .on_event = on_event,
                        .event_arg = &w, .resv = r, .nresv = nr};
    sim_result_t res;
    char err[256];
    if (sim_run(wl, &cfg, &res, err, sizeof(err)) < 0)
        fail_msg("%s: %s", policy, err);
    assert_int_equal(res.unfinished, 0);
    sim_result_free(&res);
    free(w.start);
    free(w.end);
    return w;
}

static void keeps_off(void **state)
{
    (void)state;
    workload_t wl;
    workload(&wl);
    const sim_resv_t three = {.start = 500, .duration = 1000, .nodes = 3};
    static const char *const pol[] = {"fcfs", "easy", "conservative", "egs-prma", "mebf", "elastic"};
    for (size_t p = 0; p < sizeof(pol) / sizeof(pol[0]); p++) {
        watch_t with = run(&wl, pol[p], &three, 1);
        watch_t without = run(&wl, pol[p], NULL, 0);
        if (with.on_reserved)
            fail_msg("%s: %d starts or growths on reserved nodes in the window", pol[p],
                     with.on_reserved);
        assert_true(with.in_window > 0);     /* the other five nodes kept working */
        assert_true(without.on_reserved > 0); /* and without it, jobs use those nodes */
    }
    /* two overlapping on the same nodes cannot both be */
    const sim_resv_t two[] = {{.start = 500, .duration = 1000, .nodes = 6},
                              {.start = 600, .duration = 100, .nodes = 4}};
    sim_config_t cfg = {.nodes = 8, .policy = "fcfs", .reconf = sim_reconf_default,
                        .speedup = {.model = SPEEDUP_LINEAR}, .resv = two, .nresv = 2};
    sim_result_t res;
    char err[256] = "";
    assert_true(sim_run(&wl, &cfg, &res, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "only 2 of the 4 nodes"));
    wl_free(&wl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(keeps_off)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
