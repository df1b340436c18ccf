/* sim: replays a workload through the engine with an analytic model of job progress.
 *
 * Events happen only at arrivals, job ends, resize completions and policy ticks;
 * between them every job progresses at a constant rate, so a year of a machine costs
 * as many steps as it has events, not seconds. At one instant all ends and resize
 * completions are processed, then all arrivals, then one scheduling pass.
 *
 * Evolving jobs ask for new sizes at points of their progress (wl_job_t.req); the
 * engine grants them as on the cluster (sched_request_resize).
 *
 * Progress: a job's work is measured in seconds at its requested size (`nodes`);
 * on n nodes it advances at S(n) / S(nodes) of that speed, S being its speedup model.
 * A resize stops progress for the reconfiguration time; during it the job holds the
 * larger of its old and new node sets. docs/simulator.md has the details. */
#ifndef DUCTILE_SIM_SIM_H
#define DUCTILE_SIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"
#include "output.h"
#include "speedup.h"
#include "workload.h"

/* Reconfiguration time of one resize: fixed + per_node * (nodes before the resize). */
typedef struct sim_reconf {
    double expand_fixed, expand_per_node;
    double shrink_fixed, shrink_per_node;
} sim_reconf_t;

/* Defaults fitted to the latencies of seed 000 §7.5 (expand 0.11 s at 1->2 and 1.29 s
 * at 15->16 nodes; shrink 2.25 s at 16->15). */
extern const sim_reconf_t sim_reconf_default;

/* Power (seed 002 ch. 5; docs/power.md): the draw is modelled as idle_w per free node
 * plus, per allocated node of a job, the mean of its power_min and power_max
 * (default_w when it declares none). The corridor changes at the given times (the
 * first applies from the start); the engine is told each change and runs a pass. */
typedef struct sim_corridor {
    double t, lower, upper;
} sim_corridor_t;

typedef struct sim_power {
    double idle_w, default_w;
    const sim_corridor_t *corridor; /* ascending t; may be NULL (no corridor) */
    int ncorridor;
    /* the draw after every change: t, W, the corridor then, and whether jobs are
     * queued or running (the draw is outside the corridor only then) */
    void (*on_sample)(void *arg, double t, double watts, double lower, double upper,
                      bool busy);
    void *sample_arg;
} sim_power_t;

/* A checkpoint service (seed 002 ch. 7; docs/simulator.md, "Checkpoint nodes"): it
 * holds `nodes` of the cluster from the start, keeps each running job's checkpoint
 * data, asks for nodes as its memory fills (ckpt_scaler_pass) and is answered by
 * ckpt_sched_decide with the `favor` strategy. */
typedef struct sim_ckpt {
    int nodes;                 /* checkpoint nodes at the start, >= 1 */
    ckpt_favor_t favor;
    double node_mem_mb;        /* memory of a checkpoint node */
    double mb_per_node;        /* checkpoint data per node of a job without ckpt_mb */
    /* the service's nodes and their used memory after every change */
    void (*on_change)(void *arg, double t, int nodes, double used_mb);
    void *change_arg;
} sim_ckpt_t;

/* What the service did over a run. A request asks for one node; it counts as served
 * when a node was found for it (at once, or from a job the scheduler shrinks). */
typedef struct sim_ckpt_res {
    int nodes_start, nodes_peak, nodes_end;
    long high_served, high_refused, low_served, low_refused;
    long lent_idle, lent_jobs;  /* nodes handed over: idle ones, and ones jobs released */
    long jobs_shrunk;           /* shrinks asked of jobs for the service */
    long reclaimed;             /* favour-app: nodes the scheduler took back */
    double node_seconds;        /* checkpoint nodes x time, from the first submit */
    double used_peak_mb;        /* the service's used memory at its highest */
    double overflow_mb;         /* data that found no room (it would go to the file system) */
} sim_ckpt_res_t;

/* Node failures (seed 003 §3.1; docs/simulator.md, "Failures"): from a trace, or drawn
 * (the cluster's next failure comes after an exponential time of mean mtbf / nodes, on
 * a node drawn uniformly, from the first submission while jobs remain). A failed node
 * is down for its down time; a failure of a node that is down already is ignored. The
 * engine decides the fate of the job on it (sched_node_failed): a malleable job runs on
 * without the node, any other job restarts with the highest priority, from its last
 * checkpoint when it takes them (wl_job_t.ckpt_every), else from scratch. */
typedef struct sim_failure {
    double t;
    int node;        /* 0-based, as in the events CSV */
    double down;     /* seconds */
} sim_failure_t;

typedef struct sim_failures {
    const sim_failure_t *trace; /* ascending t; may be NULL */
    int ntrace;
    double mtbf;                /* > 0: draw failures, seconds per node */
    double downtime;            /* of drawn failures */
    uint64_t seed;
    /* checkpoints of jobs whose workload entry has none (ckpt_every 0): every this many
     * seconds of work, each taking ckpt_cost; 0: none (a failed job starts over) */
    double ckpt_every, ckpt_cost;
} sim_failures_t;

/* Reads a failure trace: one failure per line, TIME NODE DOWN_SECONDS (spaces or
 * commas; '#' starts a comment), times in order, nodes 0 to nodes-1. *out is
 * malloc'ed. 0, or a negative errno with err naming the file and line. */
int sim_failures_load(const char *path, int nodes, sim_failure_t **out, int *nout, char *err,
                      size_t errlen);

/* The shared parallel file system (seed 003 §4.2.3.1; docs/simulator.md, "I/O and the
 * file system"): a node writes at most link_gbs GB/s, all nodes together at most
 * total_gbs, shared equally among the nodes writing. Jobs with I/O phases
 * (wl_job_t.iters) write through it; a malleable one can be resized only at the
 * scheduling point after each of its writes. */
typedef struct sim_pfs {
    double link_gbs, total_gbs;
} sim_pfs_t;

/* The seed's evaluation platform: 100 Gbit/s links, a 48 GB/s file system. */
extern const sim_pfs_t sim_pfs_default;

typedef struct sim_config {
    int nodes;                  /* cluster size */
    const char *policy;         /* one policy spec */
    sim_reconf_t reconf;
    speedup_t speedup;          /* model for jobs that have none (nor the workload) */
    bool force_speedup;         /* use `speedup` for every job, whatever it says */
    void (*on_event)(void *arg, const sim_alloc_event_t *ev);
    void *event_arg;
    void (*on_progress)(void *arg, size_t done, size_t total);
    void *progress_arg;
    const sim_power_t *power;   /* NULL: no power model */
    const sim_ckpt_t *ckpt;     /* NULL: no checkpoint service */
    const sim_failures_t *failures; /* NULL: no failures */
    const sim_pfs_t *pfs;       /* NULL: sim_pfs_default (used by jobs with I/O phases) */
    /* multifactor priority and fair share (docs/simulator.md, "Fair share"); NULL: the
     * engine's default, every weight 0 (submission order) */
    const sched_prio_config_t *priority;
    /* reservations (docs/simulator.md, "Reservations"): nodes set apart for a window, on
     * which no job of the workload runs then (a workload job belongs to none) */
    const struct sim_resv *resv;
    int nresv;
} sim_config_t;

typedef struct sim_resv {
    double start, duration; /* seconds of simulated time */
    int nodes;              /* how many: the engine picks them, highest numbers first */
} sim_resv_t;

typedef struct sim_jobres {
    int64_t id;
    uint32_t user, account;     /* as in the workload */
    double submit, start, end;  /* start/end < 0: never ran */
    double runtime;             /* the workload's run time at the requested size */
    int nodes_start, min_nodes, max_nodes, nodes_final;
    int expansions, shrinks;
    double node_seconds;        /* allocation integral, reconfiguration included */
    double reconf_node_seconds; /* node-seconds held while reconfiguring */
    int restarts;               /* runs ended by a failure or an interruption */
    double lost_node_seconds;   /* node-seconds of those runs */
} sim_jobres_t;

typedef struct sim_result {
    char policy[256];           /* canonical spec, every parameter spelled out */
    sim_jobres_t *jobs;         /* in workload order */
    size_t njobs;
    size_t rejected;            /* the engine refused them (e.g. larger than the cluster) */
    size_t unfinished;          /* never started or never ended */
    size_t passes;              /* scheduling passes run */
    long expansions, shrinks;
    double busy_node_seconds, reconf_node_seconds;
    /* power (cfg->power): energy, and the time the draw spent outside the corridor:
     * violations (times it left it), seconds, and W s outside (the integral) */
    double energy_j, power_peak;
    long violations;
    double outside_seconds, outside_ws;
    sim_ckpt_res_t ckpt;        /* cfg->ckpt */
    /* failures (cfg->failures): node failures that happened (on a node that was up),
     * jobs they requeued or shrank, jobs interrupted to give nodes (node stealing),
     * and the node-seconds of the runs that were lost */
    long failures, failed_jobs, failure_shrinks, interrupts;
    double lost_node_seconds;
    /* evolving jobs' requests (wl_job_t.req): made, granted in the pass that followed,
     * granted later (and the seconds they waited in all), never granted (refused by the
     * engine, replaced by the job's next request, or pending when the job ended) */
    long req_made, req_at_once, req_later, req_never;
    double req_wait;
    /* I/O phases (cfg->pfs): phases written, seconds they took, seconds they would have
     * taken with the file system to themselves, GB written, the file system's busy
     * seconds (some node writing); and the time-weighted mean of |W - S|, the distance
     * between the workload's and the running jobs' I/O intensity (node-weighted, seed
     * 003 §4.2.2), from the first submission to the last end */
    long io_phases;
    double io_seconds, io_alone_seconds, io_gb, io_busy_seconds, io_gap;
    double io_total_gbs;        /* the file system's rate in the run (0: no I/O phases) */
} sim_result_t;

int sim_run(const workload_t *wl, const sim_config_t *cfg, sim_result_t *res, char *err,
            size_t errlen);
void sim_result_free(sim_result_t *res);

#endif
