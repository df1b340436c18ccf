/* Metrics of a simulation run (research/anchors-simulators.md §5, seed 000 §7.2). */
#ifndef DUCTILE_SIM_METRICS_H
#define DUCTILE_SIM_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"

typedef struct stat4 {
    double mean, p50, p95, max;
} stat4_t;

typedef struct sim_metrics {
    size_t jobs;            /* jobs that ran to completion */
    double first_submit, last_end;
    double makespan;        /* last end - first submit */
    double utilization;     /* busy node-seconds / (nodes x makespan) */
    stat4_t wait;           /* start - submit */
    stat4_t response;       /* end - submit (seed 003's flow) */
    double response_weighted; /* node-weighted mean: sum(nodes x response) / sum(nodes),
                                 nodes = the size of the job's last start */
    stat4_t slowdown;       /* response / max(run, 1 s) */
    stat4_t bsld;           /* max(1, response / max(run, 10 s)) */
    long expansions, shrinks;
    double reconf_node_seconds;
    /* power (a run with a power model): energy, peak draw, corridor violations */
    double energy_kwh, power_peak;
    long violations;
    double outside_seconds, outside_ws;
    /* failures: as in sim_result_t, and the restarts of jobs */
    long failures, failed_jobs, failure_shrinks, interrupts, restarts;
    double lost_node_seconds;
    /* evolving jobs' requests, as in sim_result_t; req_wait_mean over those granted later */
    long req_made, req_at_once, req_later, req_never;
    double req_wait_mean;
    /* I/O phases (seed 003 §4.2): mean seconds of a write, and its mean slowdown over
     * the file system to itself; the file system's utilization (GB written / (its rate
     * x makespan)); the mean |W - S| */
    long io_phases;
    double io_mean, io_slowdown, io_utilization, io_gap;
    sim_ckpt_res_t ckpt;    /* a run with a checkpoint service */
    double ckpt_nodes_mean; /* its node-seconds / makespan */
} sim_metrics_t;

/* The wait of one user's completed jobs in one account (a fair-share association; one
 * row per user when every user has one account). */
typedef struct sim_user_stat {
    uint32_t user, account;
    size_t jobs;            /* completed */
    double wait_mean, wait_p50, wait_max;
} sim_user_stat_t;

/* Percentiles use the nearest-rank method (p-th percentile = the ceil(p n)-th
 * smallest value), so they are always values that occurred. */
int sim_metrics_compute(const sim_result_t *res, int nodes, sim_metrics_t *m);
/* Per (user, account), in ascending user then account: *out is malloc'ed (NULL when no
 * job completed). 0 or -ENOMEM. */
int sim_metrics_users(const sim_result_t *res, sim_user_stat_t **out, size_t *n);

#endif
