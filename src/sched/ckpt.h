/* Decisions of an iCheck-like checkpointing service (seed 002, chapters 6-7; the
 * transcription's §5.3-5.8 and §6.3-6.4; docs/checkpointing-algorithms.md): how many
 * agents an application gets (Alg. 5, 7), where they run (Alg. 6), when the service
 * asks the resource manager for nodes (Alg. 8), which nodes it gives back (Alg. 9),
 * and how the scheduler answers its requests (Alg. 10, 11).
 *
 * Pure functions: no I/O, no clock, no globals, no allocation but small index
 * buffers. The little state that crosses calls (an application's agent history, the
 * scaler's pending query) lives in structs the caller owns. Every function returns 0
 * or a negative errno, with a message in err for input that makes no sense.
 * A zero in a configuration field means the seed's default. */
#ifndef DUCTILE_SCHED_CKPT_H
#define DUCTILE_SCHED_CKPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CKPT_DEFAULT_FACTOR 2
#define CKPT_DEFAULT_MAX_AGENTS_APP 80
#define CKPT_DEFAULT_MAX_AGENTS_NODE 80
#define CKPT_DEFAULT_CANDIDATES 5
#define CKPT_DEFAULT_LOWER 0.80    /* used memory, fraction of total */
#define CKPT_DEFAULT_UPPER 0.90
#define CKPT_RECLAIM_FREE 0.90     /* favour-app: free fraction above which iRM reclaims */

/* ---- Algorithm 5: agent count of a rigid application -------------------------- */

typedef enum ckpt_mode {
    CKPT_MR,   /* one region per process: at most one agent per process */
    CKPT_SHMR, /* one region per node: at most one agent per node */
} ckpt_mode_t;

/* What the controller remembers about an application; zeroed = never seen. */
typedef struct ckpt_app {
    bool exists;
    int num_agents;
    double old_t_sync; /* t_sync at the last call, when has_t_sync */
    bool has_t_sync;
    int last_dir;      /* +1 the last change added agents, -1 removed, 0 none yet */
} ckpt_app_t;

typedef struct ckpt_count_req {
    int num_nodes, num_processes;
    ckpt_mode_t mode;
    bool active;          /* a probe of a running application; false: init or restart */
    double t_sync;        /* its latest checkpoint transfer time; < 0: not measured */
    int factor;           /* 0: 2 */
    int max_agents_app;   /* 0: 80 */
    double tolerance;     /* t_sync within this fraction of the last one counts as equal
                             (the noise of a shared machine); 0: exact, as the seed */
} ckpt_count_req_t;

/* Updates *app and writes the application's agent count into *num_agents. */
int ckpt_agent_count(ckpt_app_t *app, const ckpt_count_req_t *req, int *num_agents, char *err,
                     size_t errlen);

/* ---- Algorithm 7: agent count of a malleable application ---------------------- */

typedef enum ckpt_ma {
    CKPT_MA_RA, /* rigid agents: same count, remapped onto the new resources */
    CKPT_MA_MA, /* malleable agents: keep the resource:agent ratio */
} ckpt_ma_t;

/* Resources are processes (MR) or nodes (SHMR). max_agents 0: 80. */
int ckpt_malleable_count(ckpt_ma_t strategy, int cur_agents, int cur_res, int new_res,
                         int max_agents, int *num_agents, char *err, size_t errlen);

/* MA-RA remapping of n_res resources onto m agents: per_agent[0..m) receives each
 * agent's resource count, owner[0..n_res) (may be NULL) each resource's agent, in
 * contiguous runs. More agents than resources would leave agents idle, which the seed
 * forbids: the agents from index n_res on get 0 (they are released) and *m_used is
 * n_res. */
int ckpt_remap(int n_res, int m, int *per_agent, int *owner, int *m_used, char *err,
               size_t errlen);

/* ---- The checkpoint nodes, as the monitoring reports them ---------------------- */

typedef struct ckpt_node {
    double total_mem, avail_mem; /* bytes */
    double depletion;            /* bytes/s the free memory shrinks by (Eq. 6.5) */
    double traffic;              /* bytes/s the agents there move now (Eq. 6.9) */
    double bw_avail;             /* bytes/s still available for checkpoints */
    double cp_ops;               /* checkpoint operations/s */
    double power;                /* W */
    int agents;                  /* agents running there now, of every application */
} ckpt_node_t;

/* ---- Algorithm 6: agent placement ---------------------------------------------- */

typedef enum ckpt_select {
    CKPT_SEL_MEMORY,    /* most free memory first */
    CKPT_SEL_BANDWIDTH, /* least traffic first */
    CKPT_SEL_FREQUENCY, /* fewest checkpoint ops/s first */
    CKPT_SEL_POWER,     /* lowest power first */
} ckpt_select_t;

typedef enum ckpt_dist {
    CKPT_DIST_BLOCK,      /* runs of block_size agents (0: an even split) */
    CKPT_DIST_ROUNDROBIN, /* one agent per candidate in turn */
    CKPT_DIST_FILL,       /* fill each candidate to max_agents_node before the next */
} ckpt_dist_t;

typedef struct ckpt_place_cfg {
    ckpt_select_t select;
    ckpt_dist_t dist;
    int candidate_count; /* 0: 5 */
    int max_agents_node; /* 0: 80 */
    int block_size;      /* 0: even split over the candidates */
} ckpt_place_cfg_t;

/* The candidate list: up to `count` (0: 5) indices of nodes with room for an agent
 * (fewer than max_agents_node there), best first by the strategy, ties by node index.
 * cand must hold min(count, nnodes). *ncand receives how many. */
int ckpt_candidates(const ckpt_node_t *nodes, int nnodes, ckpt_select_t select, int count,
                    int max_agents_node, int *cand, int *ncand, char *err, size_t errlen);

/* Maps agent j to node agent_node[j], j in [0, nagents). -ENOSPC (nothing written)
 * when the candidates lack room for every agent. */
int ckpt_place(const ckpt_node_t *nodes, int nnodes, int nagents, const ckpt_place_cfg_t *cfg,
               int *agent_node, char *err, size_t errlen);

/* ---- Algorithm 8: proactive scaler --------------------------------------------- */

typedef enum ckpt_scale {
    CKPT_SCALE_NONE,
    CKPT_SCALE_HIGH,  /* Resource Request, HIGH priority */
    CKPT_SCALE_LOW,   /* Resource Request, LOW priority */
    CKPT_SCALE_QUERY, /* Query Message: how many idle nodes? */
} ckpt_scale_t;

typedef struct ckpt_scaler_cfg {
    double lower, upper;     /* used memory as a fraction of total; 0: 0.8, 0.9 */
    double depletion_min;    /* bytes/s above which depletion counts as fast */
    double bw_min;           /* bytes/s below which bandwidth counts as poor */
    double cp_max;           /* ops/s above which checkpointing counts as frequent */
} ckpt_scaler_cfg_t;

/* Between passes. The caller stores the resource manager's answer to a Query in
 * idle_answer; a new Query resets it to 0 so that an old answer is not reused. */
typedef struct ckpt_scaler {
    bool pending_query;
    int idle_answer;
} ckpt_scaler_t;

/* One pass. *node is the node behind a memory-driven request, else -1. */
int ckpt_scaler_pass(const ckpt_node_t *nodes, int nnodes, const ckpt_scaler_cfg_t *cfg,
                     ckpt_scaler_t *st, ckpt_scale_t *action, int *node, char *err,
                     size_t errlen);

/* ---- Algorithm 9: which nodes to give back -------------------------------------- */

/* Up to k node indices into out, the best to remove first. At most nnodes - 1: the
 * service keeps a node. *nout receives how many. */
int ckpt_removal(const ckpt_node_t *nodes, int nnodes, int k, int *out, int *nout, char *err,
                 size_t errlen);

/* ---- Algorithms 10 and 11: the scheduler's answer to a request ----------------- */

typedef enum ckpt_prio { CKPT_PRIO_NONE, CKPT_PRIO_LOW, CKPT_PRIO_HIGH } ckpt_prio_t;

typedef enum ckpt_favor {
    CKPT_FAVOR_ICHECK, /* Alg. 10: shrink malleable jobs to serve a HIGH request */
    CKPT_FAVOR_APP,    /* Alg. 11: idle nodes only; reclaim idle checkpoint nodes */
} ckpt_favor_t;

typedef struct ckpt_mjob {
    int64_t id;
    int nodes, min_nodes;
    double mtct;      /* MPI time / compute time: higher performs worse */
    bool final_phase; /* about to end: shrinking it gains nothing */
} ckpt_mjob_t;

typedef struct ckpt_sched_in {
    ckpt_favor_t favor;
    ckpt_prio_t prio;         /* the request from the service, NONE without one */
    int requested;            /* nodes asked for */
    int idle;                 /* idle nodes now */
    bool adapting;            /* a malleable job is being resized: decide next pass */
    const ckpt_mjob_t *jobs;  /* running malleable jobs */
    int njobs;
    const ckpt_node_t *ic_nodes; /* the service's nodes (favour-app reclaim) */
    int n_ic;
} ckpt_sched_in_t;

typedef struct ckpt_sched_out {
    int from_idle;  /* idle nodes handed to the service */
    int *shrink;    /* caller's array of njobs: nodes taken from each job */
    int from_jobs;  /* their sum, handed to the service as the jobs release them */
    int unmet;      /* requested nodes not found this pass */
    int reclaim;    /* favour-app: the service's nodes iRM asks back */
} ckpt_sched_out_t;

int ckpt_sched_decide(const ckpt_sched_in_t *in, ckpt_sched_out_t *out, char *err,
                      size_t errlen);

#endif
