/* Workloads for the simulator: SWF traces, the ESP benchmark, JSON job lists.
 * Every loader produces the same job list, sorted in queue order (submit time, then
 * job number). docs/simulator.md describes the formats and the replay conventions. */
#ifndef DUCTILE_SIM_WORKLOAD_H
#define DUCTILE_SIM_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched.h"
#include "speedup.h"

typedef struct mtct_point {
    int nodes;
    double mtct;
} mtct_point_t;

/* An evolving job's request: when `at` of its work is done (0 < at < 1), it asks for
 * `nodes` nodes. */
typedef struct evo_request {
    double at;
    int nodes;
} evo_request_t;

typedef struct wl_job {
    int64_t id;
    double submit;          /* seconds from the workload's time origin */
    double runtime;         /* seconds on `nodes` nodes (rigid: the run time) */
    double walltime;        /* the user's estimate, >= runtime */
    uint32_t user;
    uint32_t account;       /* fair-share account (sched_jobspec_t.account): 0 none, the
                               root; SWF group g gives g + 1 (docs/simulator.md) */
    sched_jobtype_t type;
    int nodes;              /* requested nodes: the start size */
    int min_nodes, max_nodes, pref_nodes; /* as in sched_jobspec_t (0 = nodes) */
    sched_constraint_t constraint;
    double power_min, power_max; /* W per node, 0 = unknown */
    double ckpt_mb;         /* checkpoint data it keeps on the service; 0 = the run's default */
    double ckpt_every;      /* failures: a checkpoint after every this many seconds of work
                               (at `nodes`); 0 = the run's default (none by default) */
    double ckpt_cost;       /* and the seconds each takes (work the job pauses for) */
    bool has_speedup;       /* else the workload's default applies */
    speedup_t speedup;
    int nmtct;              /* optional MTCT profile, ascending nodes */
    mtct_point_t *mtct;
    int iters;              /* I/O phases (docs/simulator.md, "I/O and the file system"):
                               the job repeats iters times runtime/iters seconds of
                               compute, then writes io_gb GB to the file system; 0: none */
    double io_gb;
    double io_intensity;    /* declared share of its time in I/O (0..1); < 0: none, then
                               derived from its phases */
    int nreq;               /* evolving jobs: requests in ascending `at` */
    evo_request_t *req;
    char tag[8];            /* free label, e.g. the ESP job type */
} wl_job_t;

typedef struct workload {
    wl_job_t *jobs;
    size_t njobs, cap;
    int machine_nodes;      /* cluster size the file states (0: none) */
    size_t skipped;         /* jobs dropped by the replay rules */
    size_t malformed;       /* malformed lines skipped with lenient parsing */
    bool has_speedup;       /* workload-wide default model */
    speedup_t speedup;
} workload_t;

typedef struct wl_swf_opts {
    int nodes;              /* --nodes, 0 if not given */
    int cores_per_node;     /* >= 1 */
    bool lenient;           /* skip and count malformed lines instead of failing */
} wl_swf_opts_t;

typedef struct wl_esp_opts {
    int nodes;              /* system size the fractions apply to */
    double malleable;       /* share of malleable jobs, 0..1 */
    uint64_t seed;          /* submission order and choice of malleable jobs */
    double interarrival;    /* seconds between submissions */
} wl_esp_opts_t;

typedef struct wl_iopeaks_opts {
    size_t njobs;           /* 4000 in the seed */
    int nodes;              /* cluster size, >= 20 */
    double malleable;       /* share of malleable jobs (the seed: 0.2) */
    uint64_t seed;
    double interarrival;    /* mean seconds between submissions (Poisson) */
} wl_iopeaks_opts_t;

/* The loaders fill *wl from scratch (it need not be initialised) and leave it empty
 * on error, with a message that names the file, and the line or the job. */
int wl_load_swf(const char *path, const wl_swf_opts_t *opts, workload_t *wl, char *err,
                size_t errlen);
int wl_load_json(const char *path, workload_t *wl, char *err, size_t errlen);
int wl_gen_esp(const wl_esp_opts_t *opts, workload_t *wl, char *err, size_t errlen);
/* Seed 003's I/O-peak workload (§4.2.5.1; src/sim/iopeaks.c says what it chooses). */
int wl_gen_iopeaks(const wl_iopeaks_opts_t *opts, workload_t *wl, char *err, size_t errlen);
/* Turn a share of the rigid jobs into malleable ones (docs/simulator.md, "--malleable").
 * machine_nodes <= 0 means wl->machine_nodes. */
int wl_make_malleable(workload_t *wl, double fraction, uint64_t seed, int machine_nodes,
                      char *err, size_t errlen);
/* Append a job (copies it, including its MTCT profile); 0, -ENOMEM, or -EINVAL when
 * nmtct is negative or mtct is NULL with nmtct > 0. */
int wl_append(workload_t *wl, const wl_job_t *job);
/* Sort into queue order: submit time, then id. */
void wl_sort(workload_t *wl);
void wl_free(workload_t *wl);

#endif
