/* config: ductile.conf, the one configuration file of a cluster.
 *
 * One "Key = Value" per line; '#' starts a comment; keys are case-insensitive
 * (Slurm style); a value may be double-quoted, then '#' is literal and \" and \\
 * stand for " and \. Every key, its type, default and range is listed in
 * docs/configuration.md. Relative paths are taken relative to the directory of the
 * file. Anything wrong is an error naming the file, the line and the key: a daemon
 * must not start on a configuration it half understood. */
#ifndef DUCTILE_CONFIG_H
#define DUCTILE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "hostlist.h"
#include "partition.h"

/* Longest path a Unix socket address can hold (sun_path less the NUL). */
#define CONFIG_SOCKET_PATH_MAX 107
/* Longest duration any key accepts: one year, in seconds. */
#define CONFIG_SECONDS_MAX 31536000.0
/* Waiting clients send a keepalive this often (PROTO_KEEPALIVE_SECONDS, which the
 * protocol library checks against it); IdleTimeout must be at least twice it. */
#define CONFIG_KEEPALIVE_SECONDS 60

/* PrivateData (Slurm's): bits of what users other than operators see of their own only
 * (docs/security.md, "What users see of each other"). */
#define CONFIG_PRIVATE_JOBS 1     /* jobs and their steps */
#define CONFIG_PRIVATE_USAGE 2    /* fair-share usage and the priority it gives */
#define CONFIG_PRIVATE_ACCOUNTS 4 /* accounts they do not belong to, others' limits */

typedef enum config_auth {
    CONFIG_AUTH_KEY,   /* a shared secret in AuthKeyFile */
    CONFIG_AUTH_MUNGE, /* MUNGE credentials */
} config_auth_t;

/* Largest power any key accepts, W (a 10,000-node cluster at 100 kW a node). */
#define CONFIG_WATTS_MAX 1e9

/* Where a node daemon's power readings come from (docs/power.md). */
typedef enum config_power_source {
    CONFIG_POWER_MODEL, /* idle power plus each job's declared power scaled by its CPU use */
    CONFIG_POWER_RAPL,  /* the energy counters under PowercapDir (an error without them) */
    CONFIG_POWER_AUTO,  /* RAPL where the host has it, else the model */
    CONFIG_POWER_NONE,  /* no readings */
} config_power_source_t;

/* How the checkpoint service picks the nodes of a job's agents (seed 002's Algorithm 6:
 * CheckpointPlacement) and spreads them over those (CheckpointDistribution). */
typedef enum config_ckpt_select {
    CONFIG_CKPT_SEL_MEMORY, /* the most room for agents first */
    CONFIG_CKPT_SEL_POWER,  /* the lowest power reading first */
    CONFIG_CKPT_SEL_BANDWIDTH, /* the least traffic its agents moved (measured) first */
    CONFIG_CKPT_SEL_FREQUENCY, /* the fewest commits per second (measured) first */
} config_ckpt_select_t;

typedef enum config_ckpt_dist {
    CONFIG_CKPT_DIST_BLOCK,      /* an even run of agents on each candidate */
    CONFIG_CKPT_DIST_ROUNDROBIN, /* one agent per candidate in turn */
    CONFIG_CKPT_DIST_FILL,       /* the first candidate full before the next */
} config_ckpt_dist_t;

/* Filled by config_load / config_parse_string; every string and array is owned by
 * the struct and released by config_free. Paths are absolute when the file was
 * found by an absolute path or loaded with config_load. */
typedef struct config {
    char *cluster_name;   /* ClusterName */
    char *control_addr;   /* ControlAddr: host or address the controller listens on */
    int control_port;     /* ControlPort */
    int node_port;        /* NodePort: node daemons take other nodes' step output; 0: any */
    char *control_socket; /* ControlSocket: the controller's local socket */
    char **nodes;         /* Nodes, expanded, in the order written */
    int nnodes;           /* >= 1 */
    char **node_addr;     /* NodeAddr: nnodes entries, node i's daemon address or NULL */
    int cores_per_node;   /* CoresPerNode */
    int memory_per_node;  /* MemoryPerNode, MiB */
    /* per node, nnodes entries each (nodeattr.h): */
    char **node_features; /* NodeFeatures: "gpu,a100", or NULL for none */
    int *node_gpus;       /* NodeGres: GPUs (gpu:N), 0 for none */
    int *node_memory;     /* NodeMemory: MiB, MemoryPerNode where not given */
    char *state_dir;      /* StateDir */
    char *log_dir;        /* LogDir */
    char *policy;         /* Policy: a scheduling policy name, checked by the engine */
    double scheduler_tick;     /* SchedulerTick, seconds */
    double node_timeout;       /* NodeTimeout, seconds */
    double heartbeat_interval; /* HeartbeatInterval, seconds, < node_timeout */
    double resize_timeout;     /* ResizeTimeout, seconds */
    double resize_backoff;     /* ResizeBackoff: seconds a declined change is not offered again */
    double resize_backoff_max; /* ResizeBackoffMax: the back-off doubles up to this */
    double operator_resize_hold; /* OperatorResizeHold: seconds an operator's size holds
                                    against the policy; 0: until released */
    double kill_wait;          /* KillWait, seconds between SIGTERM and SIGKILL */
    double step_output_wait;   /* StepOutputWait: seconds a step's end waits for the end of
                                  its tasks' output from other nodes */
    double step_reattach_time; /* StepReattachTime: seconds a step waits for its client
                                  to come back after its link broke; 0: never */
    config_auth_t auth_type;   /* AuthType */
    char *auth_key_file;       /* AuthKeyFile */
    char *munge_socket;        /* MungeSocket; "" means libmunge's default */
    char **operators;          /* Operators, without duplicates; root is implied */
    int noperators;
    int private_data;          /* PrivateData: CONFIG_PRIVATE_* bits; 0: all public */
    int max_jobs;        /* MaxJobs: queued and running jobs at most */
    int max_jobs_per_user; /* MaxJobsPerUser: of one user (operators exempt), 0: no limit */
    int max_submit_rate;   /* MaxSubmitRate: a user's submissions a second (bursts of ten
                            * times as many; operators exempt), 0: no limit */
    int max_requeue;     /* MaxRequeue: runs a --requeue job may lose to node failures */
    int max_script_size; /* MaxScriptSize, bytes */
    /* MaxProcessesPerJob: processes and threads of a job's cgroup on a node (pids.max),
     * each of its batch script's and steps' tasks'; 0: no limit */
    int max_procs_per_job;
    /* Connections to the controller (docs/reliability-dos.md) */
    int max_connections;          /* MaxConnections: all at once */
    int reserved_connections;     /* ReservedConnections: of those, kept for operators */
    int max_connections_per_user; /* MaxConnectionsPerUser, 0: no limit */
    int max_connections_per_host; /* MaxConnectionsPerHost: unauthenticated, 0: no limit */
    int max_unauth_connections;   /* MaxUnauthConnections: unauthenticated from all addresses
                                   * (default: a quarter of MaxConnections) */
    double auth_timeout;          /* AuthTimeout: seconds to authenticate on TCP, 0: none */
    double frame_timeout;         /* FrameTimeout: seconds a half-sent frame may stall, 0: none */
    double idle_timeout;          /* IdleTimeout: seconds a client may stay silent, 0: none */
    /* Power (docs/power.md) */
    config_power_source_t power_source; /* PowerSource */
    double idle_power;            /* IdlePower: W of an idle node (the model, the engine) */
    double default_job_power;     /* DefaultJobPower: W per node of a job that declares none */
    double power_lower;           /* PowerLower: the corridor at start, W; 0: none */
    double power_upper;           /* PowerUpper: W; 0: no upper bound */
    char *power_schedule;         /* PowerSchedule: file of corridor changes; "": none */
    char *powercap_dir;           /* PowercapDir: where RAPL's counters are */
    bool *ckpt_node;              /* CheckpointNodes: nnodes entries, true for a node that
                                     holds checkpoint agents (docs/checkpointing.md), not jobs */
    double agent_stop_wait;       /* CheckpointAgentStopWait: s between an agent's SIGTERM (it
                                     flushes) and SIGKILL */
    int agents_scale;             /* CheckpointMalleableAgents: MA-MA (true), a resized job's
                                     agents scale with its nodes (Algorithm 7); MA-RA: kept */
    int ckpt_lending;             /* CheckpointLending: 0 none; 1 idle, an idle node is lent
                                     to the checkpoint service when its nodes are full (Alg.
                                     11); 2 shrink, also a malleable job shrunk (Alg. 10) */
    int agent_memory;             /* CheckpointAgentMemory: MiB an agent may hold; 0: a
                                     quarter of its node's memory */
    int ckpt_select;              /* CheckpointPlacement: a config_ckpt_select_t */
    int ckpt_dist;                /* CheckpointDistribution: a config_ckpt_dist_t */
    int agent_scaling;            /* CheckpointAgentScaling: 1 a running job's agent count
                                     follows its commits' times (Algorithm 5); 0 kept */
    double reclaim_wait;          /* CheckpointReclaimWait: s a job's application has to take
                                     its new agents when a lent node is taken back */
    int ckpt_candidates;          /* CheckpointCandidates: nodes Algorithm 6 picks among;
                                     0: every checkpoint node with room */
    int slurm_env;                /* SlurmEnvironment: 1 jobs and steps get SLURM_* variables
                                     (docs/slurm-users.md); 0 not */
    int ckpt_pull;                /* CheckpointTransfer: 1 pull, the agents read the jobs'
                                     memory; 0 push (a job's DUCTILE_CKPT_TRANSFER wins) */
    int ckpt_shmr;                /* CheckpointRegions: 1 shmr, a shared region per node;
                                     0 mr, one per process (DUCTILE_CKPT_REGIONS wins) */
    int ckpt_node_memory;         /* CheckpointNodeMemory: MiB the checkpoint service may use
                                     on a node; 0: the memory its daemon reports */
    int scaler_lower, scaler_upper; /* CheckpointScalerLower/Upper: % of that memory held by
                                     agents above which Algorithm 8 flags a node / asks for
                                     one (with CheckpointLending) */
    /* Priority and fair share (docs/accounts.md): the weights of the factors; all 0 (the
     * default) keep the order of submission */
    int prio_w_age, prio_w_size, prio_w_fairshare, prio_w_partition;
    double prio_max_age;          /* PriorityMaxAge: seconds waited that give the whole age
                                     factor */
    double prio_half_life;        /* PriorityDecayHalfLife: s; past usage counts half; 0 never
                                     decays */
    double prio_calc_period;      /* PriorityCalcPeriod: s between recalculations; 0: each pass */
    int accounts_required;        /* AccountsRequired: 1 every job needs an account its user
                                     belongs to */
    config_partition_t *partitions; /* Partition lines (partition.h); none: one of every node */
    int npartitions;
    hostlist_index_t *node_index; /* private: behind config_node_index */
} config_t;

/* Reads and checks the file at path. Returns 0, or a negative errno with a message
 * in err ("path:line: ..."); on error *out is left zeroed (config_free is harmless
 * on it). The file's directory anchors relative paths. */
int config_load(const char *path, config_t *out, char *err, size_t errlen);
/* Silent for this long, a node has missed heartbeats: half of NodeTimeout, or 1.25
 * HeartbeatInterval if longer (at most NodeTimeout). The controller counts its silent
 * nodes by it, and a node daemon its peers that hear the controller, so that both judge
 * a cut alike (docs/reliability.md, "Cut off, or the controller?"). */
double config_lost_after(const config_t *cfg);

/* The same for text in memory. origin names it in messages; relative paths are
 * anchored at the directory part of origin, and stay relative when origin has none. */
int config_parse_string(const char *text, const char *origin, config_t *out, char *err,
                        size_t errlen);

void config_free(config_t *cfg);

/* What config_apply_changes found: the names of the keys whose value differs,
 * separated by ", " (cut short with "..." past the buffer). */
typedef struct config_changes {
    char applied[512]; /* changed at run time: now in the running configuration */
    char restart[512]; /* the others: they take effect when the daemons restart */
    int napplied, nrestart;
} config_changes_t;

/* A running daemon's configuration cur against the file as it is now (fresh, loaded
 * with config_load): the keys that may change at run time (docs/configuration.md,
 * "Changing a running cluster's configuration") and differ are moved from fresh into
 * cur; the others are only listed. config_free(fresh) afterwards as usual. */
void config_apply_changes(config_t *cur, config_t *fresh, config_changes_t *ch);

/* Position of a node in cfg->nodes, or -1. Constant time. */
int config_node_index(const config_t *cfg, const char *name);

const char *config_power_source_name(config_power_source_t s);
/* CONFIG_PRIVATE_* bits as PrivateData writes them ("jobs,usage"; "" for none). */
void config_private_names(int bits, char *buf, size_t len);

/* True for root and for every user listed in Operators. */
bool config_is_operator(const config_t *cfg, const char *user);

#endif
