/* ductiled: the controller. It owns the truth (SQLite, src/ctld/db.c), calls the
 * engine on every event (jobs.c), talks to node daemons (nodes.c) and answers the
 * ductile command (rpc.c). One libuv loop, one thread. */
#ifndef DUCTILE_CTLD_H
#define DUCTILE_CTLD_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "config.h"
#include "conn.h"
#include "idmap.h"
#include "nodeset.h"
#include "ckpt.h"
#include "sched.h"

/* --- stats.c: durations of the controller's own work, shown by `cluster status` --- */
#define STATS_KEEP 1024
typedef struct stats_ring {
    double ms[STATS_KEEP]; /* the last STATS_KEEP durations, milliseconds */
    int64_t count;         /* all recorded since the start */
    double max;
} stats_ring_t;
double stats_clock(void); /* monotonic milliseconds */
void stats_add(stats_ring_t *r, double ms);
/* {count, kept, last_ms, median_ms, p99_ms, max_ms}; the quantiles over the kept ones */
json_t *stats_json(const stats_ring_t *r);

/* The controller's loop: how long it was held at a time. A turn is one iteration of the
 * loop less the time it waited for events (libuv's idle-time metric), so a turn of
 * 50 s is 50 s in which no node's heartbeat and no command was read. The longest
 * single piece of work (a request by its type, a pass, a commit) is kept with it. */
#define STATS_SLOW_MS 100.0
typedef struct stats_loop {
    uint64_t last_ns, last_idle_ns; /* at the previous turn's end */
    int64_t turns, slow;            /* all turns; those over STATS_SLOW_MS */
    double max_ms, max_at;          /* the longest turn, and when it ended (wall clock) */
    double work_ms;                 /* the longest piece of work */
    char work[40];                  /* what it was: "queue", "pass", "commit"... */
    double work_at;
} stats_loop_t;
struct uv_loop_s;
/* Before uv_run: asks libuv to measure its idle time. */
void stats_loop_init(stats_loop_t *l, struct uv_loop_s *loop);
/* At the end of each turn (the loop's check phase). */
void stats_loop_turn(stats_loop_t *l, struct uv_loop_s *loop, double wall);
/* A piece of work that took ms (what: a request's type, "pass", "commit"). */
void stats_loop_work(stats_loop_t *l, const char *what, double ms, double wall);
/* {turns, slow_turns, longest_turn_ms, longest_turn_at, longest_work, ...} */
json_t *stats_loop_json(const stats_loop_t *l);

/* Job states, shown as two letters by `ductile queue`. */
typedef enum jstate {
    JS_PENDING = 0, /* PD */
    JS_RUNNING,     /* R  */
    JS_RESIZING,    /* RS */
    JS_COMPLETING,  /* CG: ended, node daemons are cleaning up */
    JS_COMPLETED,   /* CD: exit code 0 */
    JS_FAILED,      /* F:  non-zero exit code, signal, or could not start */
    JS_CANCELLED,   /* CA */
    JS_TIMEOUT,     /* TO: walltime reached */
    JS_NODE_FAIL,   /* NF: a node of the job went down */
    JS_OUT_OF_MEMORY, /* OOM: the kernel killed a process of it for passing its --mem */
    JS__COUNT
} jstate_t;

/* Where the operator's last resize of a job (`ductile resize`) stands. */
typedef enum operstate {
    OP_NONE = 0,  /* none asked for since the controller started */
    OP_PENDING,   /* asked for: the engine has not granted it yet */
    OP_UNDERWAY,  /* granted: the resize is in progress (RS) */
    OP_COMMITTED, /* the job has the new size */
    OP_DECLINED,  /* the application declined it */
    OP_WITHDRAWN, /* taken back (no answer within ResizeTimeout, the application left) */
    OP_FAILED,    /* the job ended during it */
    OP_RELEASED,  /* dropped by `ductile resize --release` before it was granted */
} operstate_t;

/* Where a resize (RS) stands. */
typedef enum rphase {
    RZ_NONE = 0,  /* no resize */
    RZ_JOINING,   /* expand: the new nodes are being given the job (job_ready each) */
    RZ_OFFERED,   /* the application has the offer and has not answered */
    RZ_ADAPTING,  /* the application accepted it and adapts (its window is open) */
    RZ_RELEASING, /* shrink committed: the leaving nodes are being cleaned */
} rphase_t;

const char *jstate_code(jstate_t s);
const char *jstate_name(jstate_t s);
int jstate_parse(const char *code, jstate_t *out);
bool jstate_final(jstate_t s);

/* The nodes a job may use (nodesel.c; docs/user-guide.md, "Choosing nodes"): what it
 * asked for, and the node sets the engine gets from it (sched_jobspec_t). */
typedef struct job_sel {
    char *features;          /* --constraint expression ("gpu&a100"); NULL: none */
    int gpus;                /* --gpus-per-node; 0: none */
    int mem;                 /* --mem: MiB per node at least; 0: none */
    char *nodelist;          /* --nodelist host list, as given; NULL: none */
    char *exclude;           /* --exclude host list; NULL: none */
    nodeset_t *allowed;      /* computed: the nodes it may use; NULL: every node (a set,
                              * not a list: 100,000 queued jobs on 10,000 nodes) */
    int *required, nrequired; /* computed: the nodes its allocation must hold */
} job_sel_t;

typedef struct job {
    int64_t id;
    char *name;
    char *user;
    uid_t uid;
    gid_t gid;
    jstate_t state;
    jstate_t final;          /* COMPLETING: the state it ends in */
    sched_jobtype_t type;
    int nodes, min_nodes, max_nodes;
    sched_constraint_t constraint;
    double time_limit;       /* seconds, 0 = none */
    bool requeue;
    char *script;
    char *cwd;
    json_t *env;             /* array of "K=V" captured at submission */
    json_t *args;            /* the script's arguments (strings); NULL: none */
    /* A pending job the engine does not see yet (eligible.c): */
    int hold;                /* 1 held by its user, 2 by an operator; 0 not held */
    double begin;            /* not before this time (--begin); 0: any time */
    char *depend;            /* --dependency, as given ("afterok:12,singleton"); NULL */
    unsigned char *dep_done; /* per job id the dependency names, in its order: 1 met, 2
                              * never, for good (that job has ended); 0: to ask again
                              * (eligible.c); NULL: not asked yet */
    size_t dep_ndone;
    bool waiting;            /* kept out of the engine for one of the above */
    int64_t array_id;        /* an element of a job array: the id of its first element */
    int array_task;          /* its index (SLURM_ARRAY_TASK_ID); -1: not an element */
    int array_max;           /* elements of its array that may run at once; 0: any */
    char *account;           /* the account it runs under (accounts.c); NULL: none */
    uint32_t account_id;     /* that account's id for the engine; 0: none */
    int nice;                /* lowers its priority (--nice; an operator's may be < 0) */
    double eligible_at;      /* when it could start after waiting held, for its --begin or
                              * a dependency (eligible.c): its age counts from there; 0:
                              * from its submission */
    char *partition;         /* the partitions it may run in, "a,b" (partitions.c); NULL:
                              * none configured */
    int tier;                /* the highest PriorityTier of them */
    char *reservation;       /* the reservation it runs in (reservations.c); NULL: none */
    int64_t resv_id;         /* its id for the engine; 0: none, or gone */
    char *out_path, *err_path;
    int umask;               /* its submitter's file-creation mask (0 to 0777), which its
                              * processes and output files get; -1: not known (submitted
                              * by an older command): the node daemon's */
    job_sel_t sel;           /* node selection (nodesel.c) */
    double submit, start, end;
    int exit_code;           /* -1 unknown */
    int signal;              /* 0 none */
    int restarts;
    int run;                 /* the current run (restarts + 1 once started): every node
                              * message about the job names its run, and a message about
                              * another run is stale (jobs_msg_current) */
    double node_end;         /* wall clock at which the batch node saw the script end */
    bool launched;           /* the batch node confirmed that the script started */
    bool batch_clean;        /* the batch node reported the end with nothing left */
    int nsteps;              /* steps (`ductile run`) started so far */
    int *alloc;              /* node indices in rank order */
    int nalloc;
    int cleanup_left;        /* COMPLETING: node daemons still to confirm */
    double requeue_at;       /* CG after a node failure, to be requeued: not before this
                              * (monotonic), so that a node that was cut off, not dead,
                              * has ended the old run (its daemon fences itself) */
    unsigned char *clean_wait; /* COMPLETING: per alloc entry, its confirmation is due
                              * (each node counts once, however often it confirms) */
    /* a resize in progress (RS): nodes joining or leaving, confirmations still due */
    int resize_target;
    char resize_why[32];     /* the engine's reason for the resize under way */
    int *resize_nodes;
    int nresize;
    int resize_left;
    unsigned char *resize_wait; /* per resize node: its confirmation is due */
    double resize_deadline;  /* monotonic */
    double resize_started;   /* wall clock, for the accounting of its duration */
    bool attached;           /* the application's leader (libductile) is there */
    bool unconfirmed;        /* restored running: its batch node has not reported since
                              * the controller started, so `attached` is not known yet */
    bool inhibit;            /* the application declines offers for now */
    bool survive_loss;       /* it runs on when a node fails (dt_set_survive_loss) */
    int64_t offer;           /* the current offer's number */
    rphase_t phase;          /* RS: where the resize stands */
    int resize_failures;     /* runs ended by ResizeFailed (not kept across restarts) */
    bool resize_lost;        /* restored from RS: the restart withdrew its resize */
    /* the operator's last resize (`ductile resize`; not kept across a restart) */
    operstate_t oper;
    int64_t oper_seq;        /* its number for this job: a waiting client knows it */
    int oper_nodes, oper_from; /* asked-for size, the size when asked */
    double oper_since;       /* wall clock: asked, then when the outcome came */
    bool oper_no_hold;       /* released while under way: no hold follows */
    char oper_why[256];      /* how it ended (declined, withdrawn, failed) */
    double oper_hold;        /* the size holds against the policy until then (wall
                              * clock; INFINITY: until released); 0: no hold */
    double node_seconds;     /* accounting: integral of allocated nodes */
    /* power (energy.c, docs/power.md): what it draws per node, W, and where that came
     * from (declared at submission, estimated from its history, or the default); the
     * energy of its nodes while it held them, J; their draw at the last sample, W */
    double power_min, power_max;
    char power_from[12];
    double io_intensity;     /* share of its run time in I/O, 0..1, the engine plans with
                              * (the io-aware policy); 0: none known */
    char io_from[12];        /* "declared" (submit --io-intensity), "measured" (its last
                              * run's io_measured, iomeas.c), "": none known */
    double io_measured;      /* this run's measured I/O share (iomeas.c), kept at its end */
    int wait_class;          /* sched_class_t it waits in after its last requeue (FAILED
                                after a node failure): kept, so that a restart keeps it */
    double io_sum, io_secs;  /* while it runs: sum of share x seconds its nodes reported,
                              * and of those seconds (in memory only) */
    double energy;
    double energy_at;        /* wall clock its energy runs to; 0: its start */
    double seen_min, seen_max; /* the range of its measured draw per node, widening what
                              * it declared (energy.c); 0: none yet */
    double power_w;
    double *pw_hist;         /* its last draws (energy.c's ring), NULL until it runs */
    int pw_n, pw_head;
    double alloc_since;      /* time of the last allocation change */
    char reason[256];        /* why it waits or how it ended (a launch error in full) */
    /* checkpoint agents (ckptsvc.c, docs/checkpointing.md), kept across requeues */
    bool ck_want;            /* submitted with --checkpoint-agents */
    char *ck_agents;         /* host:port,... of its agents once asked for; NULL: none */
    char *ck_where;          /* the checkpoint nodes they run on, "c1,c2" */
    char *ck_slots;          /* each one's slot on its node, "0,1" (NULL: 0, 1, ...) */
    char ck_key[65];         /* their key, hex (the job's environment gets it in a file);
                              * its first 8 digits tag the messages of this asking */
    /* agents that left its list at a shrink (Algorithm 7), stopped once its application
     * has the new list (ckptsvc_app_seen), at the latest RETIRE_WAIT later */
    int ck_nretire, ck_rnode[16], ck_rslot[16];
    double ck_retire_at;     /* monotonic */
    /* while its launch waits for them (ckptsvc.c): per agent its node, its answer */
    char **ck_addr;
    int *ck_node;
    unsigned char *ck_done;
    int ck_n, ck_waiting;    /* agents asked for, answers still due */
    int ck_base;             /* the slot of the first of them */
    bool ck_more;            /* added to a running job's agents (a resize) */
    int ck_move_from;        /* node index + 1 its agents leave once those asked for in
                              * their place answer (a reclaimed node); 0: none */
    ckpt_app_t ck_app;       /* Algorithm 5's record (CheckpointAgentScaling): its count,
                              * last t_sync and direction; in memory only */
    bool ck_settled;         /* rigid: a change made its commits slower and was undone:
                              * no more (seed 002, 6.4.2) */
    int ck_short;            /* agents it lacks while a malleable job is shrunk for them
                              * (CheckpointLending = shrink) */
    double ck_asked;         /* monotonic time they were asked for */
    double ck_node_s;        /* checkpoint node-seconds its agents held (ckptsvc_account) */
    double ck_acct_at;       /* wall time those are counted up to; 0: no agents placed */
} job_t;

typedef enum nstate {
    NS_UNKNOWN = 0, /* never registered since the controller started */
    NS_UP,
    NS_DOWN,
} nstate_t;

#define NODE_LIMITS_TOLD 1
#define NODE_LIMITS_MEMORY 2 /* --mem: memory.max */
#define NODE_LIMITS_PIDS 4   /* MaxProcessesPerJob: pids.max */

typedef struct node {
    int index;
    const char *name;        /* owned by the config */
    nstate_t state;
    bool drain;              /* operator: no new jobs */
    char reason[128];
    conn_t *conn;            /* the node daemon's connection */
    double last_seen;        /* monotonic seconds */
    double stalled_seen;     /* the controller's `stalled` at last_seen */
    int cpus;
    long memory_mb;
    unsigned limits;         /* NODE_LIMITS_*: what its jobs' cgroups are limited in, as
                              * its daemon registered (0: not told) */
    int step_port;           /* where its daemon takes other nodes' step output; 0: none */
    uint64_t peers_sig;      /* of the peers last told to its daemon (nodes.c, peers_*) */
    int npeers;              /* how many: `ductile nodes --json` "peers" */
    bool silent;             /* kept up, unheard, while the controller suspects itself:
                              * no new work (node_usable) */
    bool report_awaited;     /* to register again (a reload): no new work until then */
    double report_asked;     /* when it was asked (monotonic); 0: not yet */
    double power_w;          /* its last power reading, W */
    double power_at;         /* when it came (monotonic); 0: none */
    double power_wall;       /* and on the wall clock */
    char power_src[8];       /* rapl or model */
    bool ckpt;               /* a checkpoint node (CheckpointNodes): agents, no jobs */
    bool lent;               /* a node for jobs lent to the checkpoint service while its
                              * agents need it (CheckpointLending = idle; ckptsvc.c) */
    bool reclaim;            /* lent, and taken back for a waiting job: no new agent goes
                              * there, those there move or leave (Algorithm 11) */
    bool scaler_lent;        /* lent by Algorithm 8 before any agent needed it: kept while
                              * a checkpoint node is above CheckpointScalerLower */
    /* its manager's last measurements (ckptmeas.c; a checkpoint node, a lent one) */
    double ck_held;          /* bytes its agents hold */
    double ck_traffic;       /* bytes/s they moved over the last heartbeat interval */
    double ck_ops;           /* versions published per second, same interval */
    double ck_depletion;     /* bytes/s its free memory shrank by between two reports */
    double ck_at;            /* when the last came (monotonic); 0: none */
    /* Runs of jobs the node still had that are not ours to run there (a run the
     * controller ended while the node was away, a leftover of an earlier incarnation):
     * job id -> run. The node takes no new work until it confirms each one is gone. */
    idmap_t *stale;
} node_t;

typedef struct reply reply_t;
typedef struct array_build array_build_t;

typedef struct ctld {
    config_t cfg;
    uv_loop_t *loop;
    sqlite3 *db;
    struct db *store;            /* db.c's private state */
    bool in_batch;               /* a group-commit transaction is open */
    bool engine_switch;          /* a new Policy: the engine is rebuilt once all is saved */
    bool reports_pending;        /* a reload asked the node daemons to report again */
    reply_t *deferred, *deferred_tail; /* replies and sends waiting for the commit */
    sched_t *sched;
    idmap_t *jobs;               /* live jobs: pending, running, completing */
    idmap_t *placed;             /* those of them that are not pending (jobs.c) */
    idmap_t *waiting;            /* pending ones the engine does not see (eligible.c;
                                    made at the first) */
    idmap_t *steps;              /* running steps of `ductile run` (steps.c) */
    node_t *nodes;
    int nnodes;
    int *sel_buf;                /* nnodes + 1 ints: a job's allowed nodes for the engine
                                  * (nsel_spec) */
    double ck_scaler_shrink;     /* Algorithm 8 had a job asked to give up a node for the
                                  * checkpoint service: until then (monotonic), lent once
                                  * the job gave it up (ckptsvc.c); 0: none */
    uint8_t key[32];
    uv_pipe_t local;             /* clients */
    uv_tcp_t tcp;                /* node daemons (and remote clients with MUNGE) */
    uv_check_t commit_check;     /* end of loop iteration: commit, then reply */
    uv_idle_t sched_idle;        /* a scheduling pass is wanted */
    uv_timer_t sched_pace;       /* the next pass after a long one (jobs_pass_paced) */
    double pass_not_before;      /* monotonic: no pass before (0: none) */
    bool sched_wanted;
    bool elig_due;               /* the waiting jobs are to be looked at (eligible.c) */
    uv_timer_t tick;             /* SchedulerTick */
    uv_timer_t watchdog;         /* node timeouts */
    uv_signal_t sigterm, sigint, sighup;
    char conf_path[4096];        /* the ductile.conf it started with, absolute */
    int64_t njobs_live;
    int64_t array_reserved;      /* elements of arrays not made yet (arrays.c) */
    array_build_t *builds;       /* arrays being made, a part a turn, in line (arrays.c) */
    array_build_t *restoring;    /* (arrays_restore: the builds before it) */
    array_build_t *array_ended;  /* ended in this turn's batch: replied after its commit */
    uv_idle_t array_idle;        /* the next part (data NULL until first used) */
    uv_timer_t array_retry;      /* the next part while the disk refuses batches */
    bool array_try;              /* (its turn has come) */
    long array_parts;            /* parts made (a test hook counts them) */
    int64_t step_bytes_relayed;  /* step output that passed through us (status) */
    bool stopping;
    double t0;                   /* wall clock at start, for now() */
    struct energy *energy;       /* the power corridor and the draw (energy.c) */
    struct accounts *acct;       /* accounts and fair share (accounts.c) */
    stats_ring_t pass_stats;     /* scheduling passes (stats.c) */
    stats_ring_t commit_stats;   /* batch commits */
    stats_loop_t loop_stats;     /* the loop's longest turns (stats.c) */
    idmap_t *user_jobs;          /* uid -> live jobs (quota.c) */
    idmap_t *submit_buckets;     /* uid -> its submissions' token bucket (quota.c) */
    /* Seconds the controller itself could not listen (its watchdog ran late: a long
     * turn, the process stopped, its host frozen), summed since the start: none of it is
     * counted against a node's heartbeats (nodes_check_timeouts). */
    double stalled;
    double watchdog_last;        /* monotonic: the watchdog's previous run */
    /* Monotonic time since when more than half the nodes fell silent at once with their
     * connections open: the controller suspects its own network and calls none of them
     * down (nodes_check_timeouts); 0: not suspecting. */
    double suspect_since;
    bool peers_dirty;            /* a node registered or was lost: peers_sweep */
} ctld_t;

/* Wall-clock seconds (jobs are accounted in Unix time). */
double ctld_now(void);

/* --- quota.c: every user's fair share of the queue (MaxJobsPerUser, MaxSubmitRate) --- */
/* A job enters (d = 1) or leaves (-1) the live jobs. */
void quota_count(ctld_t *c, const job_t *j, int d);
int quota_user_jobs(const ctld_t *c, uid_t uid);
/* May j's user submit njobs more now? 0, or -EDQUOT (too many queued) or -EAGAIN (too
 * fast: *retry says in how many seconds) with the reason in err. oper: exempt. */
int quota_submit(ctld_t *c, const job_t *j, bool oper, int njobs, double *retry, char *err,
                 size_t errlen);
void quota_free(ctld_t *c);
/* Reads conf_path again and takes the keys that may change at run time (SIGHUP,
 * `ductile reconfigure`); the file's mistakes change nothing. -1 with the reason in
 * err, else 0 with *ch saying what changed and what waits for a restart. */
int ctld_reconfigure(ctld_t *c, config_changes_t *ch, char *err, size_t errlen);
/* Monotonic seconds, for timeouts. */
double ctld_mono(void);

/* --- db.c: durable state with group commit ---
 * Promises: what a reply acknowledges is on disk (db_commit before the replies go
 * out); a failed batch is rolled back as a whole, never half-saved; a start-up refuses
 * a database that is damaged, missing where one existed, or behind what was
 * acknowledged (a marker and high-water mark kept in PATH.hwm), unless DB_RECOVER;
 * job ids never go backwards. */
#define DB_RECOVER 1u /* start despite a damaged, missing or shortened database */
int db_open(ctld_t *c, const char *path, unsigned flags, char *err, size_t errlen);
void db_close(ctld_t *c);
/* Opens the batch transaction if none is open; changes made in this loop iteration
 * commit together at its end (db_commit, called by the check handle). -EIO if the
 * batch has already failed. */
int db_write_begin(ctld_t *c);
/* Commits the batch. -EIO if any write of it or the commit failed: the batch is rolled
 * back and the caller must undo its effects in memory (main.c reloads from disk);
 * db_error() then says why, in the users' words. */
int db_commit(ctld_t *c);
const char *db_error(const ctld_t *c);
/* The last batch failed and none has committed since. */
bool db_degraded(const ctld_t *c);
int db_job_insert(ctld_t *c, job_t *j);  /* assigns j->id */
int db_job_save(ctld_t *c, const job_t *j);
int db_job_event(ctld_t *c, int64_t job, double t, const char *event, int before, int after,
                 const int *nodes, int n, const char *detail);
int db_node_save(ctld_t *c, const node_t *n);
/* Loads live jobs (calling fn for each, which takes them) and node admin states at
 * start-up. Any read error or undecodable row stops it with err set (with DB_RECOVER:
 * reported, skipped, and counted). A live job on nodes no longer configured is settled
 * here (ends NODE_FAIL, or requeued with --requeue) rather than handed to fn. */
int db_load(ctld_t *c, void (*fn)(ctld_t *c, job_t *j), char *err, size_t errlen);
/* Finished jobs for `ductile history`, newest first, one page at a time: at most limit
 * rows, and no more once stop_ms (stats_clock) has passed, so that no reply holds the
 * loop for long however large the history. *cur is where the page starts (end 0: the
 * newest) and, when it returns 1, where the next starts (0: no more rows). */
typedef struct hist_cursor {
    double end;
    int64_t id;
} hist_cursor_t;
int db_history(ctld_t *c, const char *user, const char *state, double since, double until,
               int limit, double stop_ms, hist_cursor_t *cur, json_t *out, char *err,
               size_t errlen);
/* Allocation changes of one job (resizes), oldest first. */
int db_job_events(ctld_t *c, int64_t job, json_t *out);
/* A job from the table (finished ones for `show`); NULL if absent or unreadable. */
job_t *db_job_find_finished(ctld_t *c, int64_t id);
/* The job of element `task` of array `array`: 1 (*id set), 0 (none) or -EIO. */
int db_array_element(ctld_t *c, int64_t array, int task, int64_t *id);
/* The elements of an array as recorded: how many are live, ended COMPLETED, ended
 * otherwise, have started. 0 or -EIO. */
/* The ids of every element of an array (array: its first element's id), in order;
 * empty when it is none. */
json_t *db_array_members(ctld_t *c, int64_t array);
int db_array_states(ctld_t *c, int64_t array, int *live, int *ok, int *failed, int *started);
/* A job's state as recorded: 1, 0 (no such job) or -EIO. */
int db_job_final(ctld_t *c, int64_t id, jstate_t *state);
/* Submission keys (idempotent submit): the job a user's key made, kept in the table
 * submit_keys. find: 1 and *job when the key is known, 0 when not, -EIO. put: records
 * key -> job inside the open batch, so it commits with the job or not at all. */
int db_submit_key_find(ctld_t *c, uid_t uid, const char *key, int64_t *job);
int db_submit_key_put(ctld_t *c, uid_t uid, const char *key, int64_t job, double now);
/* The name of node index idx of a job: a configured node (*configured true), or one
 * that stored state names but Nodes no longer has; "?" for anything else. Never reads
 * past a table. */
const char *ctld_node_name(const ctld_t *c, int idx, bool *configured);

/* Replies and node commands that must wait until the current batch is durable. */
void ctld_defer_send(ctld_t *c, conn_t *to, json_t *msg);
void ctld_flush_deferred(ctld_t *c);
/* A connection closed: drop the replies still waiting for it. */
void ctld_forget_conn(ctld_t *c, conn_t *conn);
/* A batch failed to commit: replies that said ok become the error `why`; messages to
 * connections for which drop(conn) is true (node daemons) are dropped. */
void ctld_fail_deferred(ctld_t *c, const char *why, bool (*drop)(ctld_t *c, conn_t *conn));

/* --- energy.c: the power corridor at run time, the cluster's and jobs' draw, the
 * violations, the energy of jobs (docs/power.md) --- */
/* At start, after db_open: the corridor from the configuration, PowerSchedule and the
 * operators' changes stored in the database; the sampling timer. */
int energy_init(ctld_t *c, char *err, size_t errlen);
void energy_close(ctld_t *c);
/* Gives the engine the corridor in force (after sched_create, and on each change). */
int energy_engine(ctld_t *c, char *err, size_t errlen);
/* One sample of the draw (every HeartbeatInterval; bench/power/bench_metering). */
void energy_sample(ctld_t *c);
/* The job ends, or goes back to the queue, at now: its energy up to then at its last
 * sampled draw. */
void energy_settle(ctld_t *c, job_t *j, double now);
void energy_account(job_t *j, double now);

/* ckptsvc.c: the checkpoint controller (docs/checkpointing.md) */
int ckptsvc_nodes(const ctld_t *c); /* how many checkpoint nodes the cluster has */
/* A job's run starts: true if its launch waits for its checkpoint agents (jobs_launch
 * follows when they answered). */
bool ckptsvc_before_launch(ctld_t *c, job_t *j);
void ckptsvc_start_fields(const job_t *j, json_t *start_msg);
void ckptsvc_on_message(ctld_t *c, node_t *n, const char *type, const json_t *msg);
void ckptsvc_job_ended(ctld_t *c, job_t *j);  /* for good: its agents flush and stop */
/* A resize committed (before: its nodes until then): CheckpointMalleableAgents = MA-MA
 * scales its agents with its nodes (Algorithm 7). */
void ckptsvc_resized(ctld_t *c, job_t *j, int before);
/* The job's batch node learns its agents (its application takes them at its next
 * dt_ckpt_probe or commit): when they change, and when the node registers again. */
void ckptsvc_tell(ctld_t *c, const job_t *j);
/* After the jobs are loaded: the nodes for jobs their agents run on are lent. */
void ckptsvc_after_restore(ctld_t *c);
/* Its application has been given the agents list `agents` (app_ckpt_seen). */
/* Its application's commits took t_sync seconds to reach the agents (the library's
 * probe): Algorithm 5 may change its agent count (CheckpointAgentScaling = on). */
void ckptsvc_app_sync(ctld_t *c, job_t *j, double t_sync);
void ckptsvc_app_seen(ctld_t *c, job_t *j, const char *agents);
void ckptsvc_check(ctld_t *c);                /* launches that waited long enough; accounts */
/* A checkpoint node's measurements came: Algorithm 8 may ask for a node (lent). */
void ckptsvc_scale(ctld_t *c);
/* Checkpoint node-seconds up to now: each checkpoint node's time is shared among the
 * agents placed on it, and each job is charged its agents' shares. */
void ckptsvc_account(ctld_t *c);
/* A checkpoint node registered with the jobs its agents serve: stop those of jobs that
 * ended meanwhile. */
void ckptsvc_reconcile(ctld_t *c, node_t *n, const json_t *jobs);
/* A node's reading from its ping. */
void energy_on_ping(ctld_t *c, node_t *n, const json_t *msg);
/* A submission's power per node: "power": [min, max] as declared (1), or absent (0),
 * or not valid (-EINVAL, err says why). */
int energy_declared(const json_t *m, double *pmin, double *pmax, char *err, size_t errlen);
/* Fills j->power_min/max and power_from: declared values, else the job's own history
 * (finished jobs of the same user, name and size), else DefaultJobPower. */
void energy_resolve(ctld_t *c, job_t *j, bool declared, double pmin, double pmax);
/* Requests: `ductile power` (anyone) and `ductile power corridor` (operators). */
void energy_rpc_power(ctld_t *c, conn_t *conn, const json_t *m);
void energy_rpc_corridor(ctld_t *c, conn_t *conn, const json_t *m, bool operator_);
/* db.c: the operators' corridor changes (table power_corridor) and the history estimate */
int db_corridor_add(ctld_t *c, double at, double lower, double upper, const char *by);
int db_corridor_reset(ctld_t *c);
/* A running job's energy so far, and the time of the sample, in the open batch;
 * db_power_sampled: that time as last committed, 0 if never. */
int db_job_energy(ctld_t *c, int64_t id, double energy);
int db_power_sampled_put(ctld_t *c, double t);
double db_power_sampled(ctld_t *c);
/* fn(at, lower, upper, by, arg) for each stored change, oldest first */
int db_corridor_load(ctld_t *c, void (*fn)(double, double, double, const char *, void *), void *arg);
/* The range of W per node that finished jobs of user, name and size drew (their last
 * 10); 1 when found, 0 when none, -EIO. */
int db_power_history(ctld_t *c, const char *user, const char *name, int nodes, double *lo,
                     double *hi);

/* iomeas.c: measured I/O intensity (docs/policies.md "io-aware") */
/* One entry of a ping's "io" array, {"job": id, "share": 0..1, "secs": >0}: 0 and its
 * values when well formed, -EINVAL otherwise (the entry is then ignored). */
int iomeas_entry(const json_t *e, int64_t *job, double *share, double *secs);
/* A report of a node: share over secs seconds added to the job's running mean. */
void iomeas_add(job_t *j, double share, double secs);
/* The time-weighted mean of what was reported for its run (over its nodes); 0: none. */
double iomeas_mean(const job_t *j);
/* The "io" reports of node n's ping: each for a running job on n is added, anything
 * malformed, out of range, of another node's job or of no job is ignored. */
void iomeas_on_ping(ctld_t *c, node_t *n, const json_t *msg);

/* ckptmeas.c: the checkpoint nodes' measurements, from their heartbeats */
void ckptmeas_on_ping(ctld_t *c, node_t *n, const json_t *msg);
/* The node reported within NodeTimeout. */
bool ckptmeas_fresh(const ctld_t *c, const node_t *n);
/* MiB the checkpoint service may use on the node: CheckpointNodeMemory, else its own. */
long ckptmeas_node_mb(const ctld_t *c, const node_t *n);
/* A job's run ends (io_measured = its mean), or it goes back to the queue (forgotten). */
void iomeas_settle(job_t *j, bool ended);
/* A submission: a declared intensity wins; else the measured intensity of the most
 * recent finished run of the same user, name and size, if there is one. */
void iomeas_resolve(ctld_t *c, job_t *j, bool declared, double io);
/* db.c: io_measured of the most recent finished run (CD or TO) of user, name and size
 * that has one; 1 when found, 0 when none, -EIO. */
int db_io_history(ctld_t *c, const char *user, const char *name, int nodes, double *io);

/* db.c: the number of the last commit and the highest job id given */
void db_marks(const ctld_t *c, int64_t *seq, int64_t *max_id);
/* --- db_backup.c: `ductile cluster backup FILE` (operators), a copy made while we run */
void backup_rpc(ctld_t *c, conn_t *conn, const json_t *msg, bool oper);
void backup_conn_closed(conn_t *conn);

/* --- db_arrays.c: the arrays still being made (arrays.c) --- */
/* A statement of the open batch (outside db.c) failed: the batch rolls back at its
 * commit, as for db.c's own. */
void db_batch_fail(ctld_t *c, const char *what);
int db_array_build_put(ctld_t *c, int64_t array, const int *idx, int n, int made);
int db_array_build_made(ctld_t *c, int64_t array, int made);
int db_array_build_del(ctld_t *c, int64_t array);
/* fn for each, given idx (malloc'd, its to free) */
int db_array_builds(ctld_t *c, void (*fn)(ctld_t *c, int64_t array, int *idx, int n, int made));

/* --- db_steps.c --- */
/* A step as history shows it (step 0: the batch script); cpu, mem -1: not measured. */
typedef struct step_rec {
    int64_t job;
    int step;
    const char *name, *nodelist;
    int tasks;
    double start, end; /* end 0: still running */
    int status;        /* exit status (128 + N: signal N) */
    double cpu;        /* s */
    long long mem;     /* peak bytes */
} step_rec_t;
int db_step_put(ctld_t *c, const step_rec_t *r);
/* The steps of jobs[0..n-1], in order, as JSON objects: {"12": [...], ...}, a job
 * without steps absent. */
json_t *db_steps_of(ctld_t *c, const int64_t *jobs, size_t n);
/* At start: steps still running when the controller stopped ended with it (their
 * clients' connections did; the node daemons end their tasks): end now, status 255. */
int db_steps_close_open(ctld_t *c, double now);
/* The job's highest step number on record (0: none): a restarted controller numbers
 * the next step after it, never over one in history. */
int db_steps_max(ctld_t *c, int64_t job);
/* Live steps (steps.c keeps them so that a restarted controller takes them up again):
 * the step (error: the first task lost; where its output goes is the re-attaching
 * client's), each task (its node; once ended its status and output length), forgetting
 * it. */
int db_step_live_put(ctld_t *c, int64_t job, int step, const char *error);
int db_step_task_put(ctld_t *c, int64_t job, int step, int rank, const char *node, bool ended,
                     int status, int64_t out);
int db_step_live_del(ctld_t *c, int64_t job, int step);
/* Every live step: {job, step, error?, name, nodelist, start, end, status, cpu,
 * mem, tasks: [{rank, node, status?, out?}]}. */
json_t *db_steps_live(ctld_t *c);

/* --- update.c --- */
/* ductile update: m's time (s, 0: none), name, nodes, min_nodes, max_nodes applied to
 * the live job j, checked first (op: the caller is an operator); < 0 with err. */
int jobs_update(ctld_t *c, job_t *j, const json_t *m, bool op, char *err, size_t len);

/* --- jobs.c --- */
job_t *job_new(void);
void job_free(job_t *j);
int jobs_submit(ctld_t *c, job_t *j, char *err, size_t errlen);
/* submit --test-only: the job, not submitted, checked as jobs_submit checks it, and when
 * the engine's plan would start it (sched_will_run, behind the first WILL_RUN_AHEAD
 * waiting jobs): 1 with *start (Unix time) and *size, 0 with *start -1 (none known),
 * < 0 with err (refused). */
#define WILL_RUN_AHEAD 10000
/* Whether a job of j's shape (sizes, type, time limit) could ever run here: 0 with its
 * spec for the engine, or < 0 with err in the user's words. */
int jobs_check_shape(ctld_t *c, const job_t *j, sched_jobspec_t *spec, char *err, size_t errlen);
int jobs_will_run(ctld_t *c, job_t *j, double *start, int *size, char *err, size_t errlen);
int jobs_cancel(ctld_t *c, job_t *j, const char *why);
void jobs_want_schedule(ctld_t *c);
void jobs_schedule(ctld_t *c);
/* A long pass (a queue of 100,000 jobs) spaces the next one: true, with the pass wanted
 * again at its time, when the one wanted now has to wait. */
bool jobs_pass_paced(ctld_t *c);
/* The batch script ended on the job's first node; oom: a process of its cgroup there
 * was killed for passing its memory limit. */
void jobs_script_ended(ctld_t *c, job_t *j, int status_kind, int code, bool timed_out,
                       bool oom, const char *error, bool clean, double node_end);
/* A report of a batch script's end for a run that is not current: when the job was
 * recorded NODE_FAIL and the script had ended on this node, its batch node, before
 * then (its end was not saved, a full disk, and the node fell silent before it could
 * say it again), the record takes the script's status (COMPLETED, FAILED, TIMEOUT),
 * reason EndReportedLate, and an end_corrected event. */
void jobs_late_end(ctld_t *c, const node_t *n, int64_t id, int64_t run, int kind, int code,
                   bool timed_out, double t_end);
/* At a restart, a live job whose nodes are gone from the configuration goes back to the
 * queue or ends at once (db.c): the lifecycle's one shortcut (jobs.c). */
int jobs_set_restored_state(job_t *j, jstate_t to, const char *why);
/* A node daemon confirmed that every process of the job is gone from it. */
void jobs_cleanup_done(ctld_t *c, job_t *j, node_t *n);
/* The batch node confirmed the script started. */
void jobs_launched(ctld_t *c, job_t *j);
/* Sends a started run to its nodes (its script starts on the first one). */
void jobs_launch(ctld_t *c, job_t *j);
/* A running job whose start never reached its node: back to the queue. */
void jobs_requeue(ctld_t *c, job_t *j, const char *why);
/* Tells the engine again whether node stealing may stop the job (MaxRequeue changed). */
void jobs_update_interruptible(ctld_t *c, job_t *j);
/* A node daemon has the job's processes ready on it (an expand's new node). */
void jobs_node_ready(ctld_t *c, job_t *j, node_t *n);
/* A message from the job's application, relayed by its batch node (app_*). */
void jobs_app_message(ctld_t *c, job_t *j, const char *type, const json_t *msg);
/* Tells the job's batch node its nodes (job_resized): after a resize, and again when
 * the node registers (it may have missed one). */
void jobs_send_nodes(ctld_t *c, job_t *j);
/* Every second: withdraw resizes that passed ResizeTimeout; requeue the jobs whose
 * fence period after a node failure has ended. */
void jobs_check_timeouts(ctld_t *c);
/* An operator asks for a new size. */
int jobs_resize(ctld_t *c, job_t *j, int nodes, char *err, size_t errlen);
/* `ductile resize --release`: drops the operator's pending resize and hold; a message
 * for the user in msg. */
void jobs_resize_release(ctld_t *c, job_t *j, char *msg, size_t msglen);
/* The operator's resize as the client shows it: {seq, nodes, from, since, state, why},
 * or NULL when none was asked for. */
json_t *jobs_oper_json(const ctld_t *c, const job_t *j);
/* oper.c follows the operator's resize through the job's resize: its new size was
 * committed (the hold starts); it ended without it (declined by the application, or
 * withdrawn); the job leaves R/RS for `to` (ending, or back to the queue). */
void jobs_oper_committed(ctld_t *c, job_t *j);
void jobs_oper_not_done(job_t *j, bool declined, const char *why);
void jobs_oper_left(job_t *j, jstate_t to, const char *why);
/* Is a node's message about job `id` of run `run` about what the controller runs there
 * now? Returns the job, or NULL for a stale message (no such job, another run, or a
 * node that is not the job's). */
job_t *jobs_msg_current(ctld_t *c, int64_t id, int64_t run, const node_t *n);
/* Is the job waiting for node `idx` to confirm that nothing of it is left there (it
 * is ending, or the node leaves it in a committed shrink)? */
bool jobs_cleaning_on(const job_t *j, int idx);
/* A node that registered still has the job: if it is ending (CG) or leaving it, ask the
 * node (again) to clean up and wait for its confirmation. */
bool jobs_clean_again(ctld_t *c, job_t *j, node_t *n);
/* Does the job hold node `idx` (its committed nodes, and an expand's joining ones)? */
bool job_has_node(const job_t *j, int idx);
/* A node went down: its jobs end NODE_FAIL or are requeued. */
void jobs_node_failed(ctld_t *c, node_t *n);
void jobs_restore(ctld_t *c, job_t *j);
/* ductile cancel --signal: the signal to a running job's processes on every node, as
 * scancel's: its steps' tasks (scope 0), its batch script alone (1, --batch), or both
 * with the script's children (2, --full); the job goes on. 0, or -EINVAL with why. */
int jobs_signal(ctld_t *c, job_t *j, int sig, int scope, char *err, size_t errlen);
/* ductile requeue: a running job is ended and waits again, in its place (its
 * submission time); 0, or -EINVAL with why in err. */
int jobs_requeue_by_hand(ctld_t *c, job_t *j, char *err, size_t errlen);
/* A pending job nothing holds any more enters the engine (its submission time keeps
 * its place); 0 or the engine's refusal. */
int jobs_to_engine(ctld_t *c, job_t *j);

/* arrays.c: job arrays. The elements of a submission, t the first (its id names the
 * array) with the indices idx[0..n-1]: all submitted, or none (err says why). 0: made
 * (one element); 1: the first is made and the others follow a part a turn, conn hears
 * when all are (or why they are not); < 0: none made. */
int arrays_submit(ctld_t *c, job_t *t, const int *idx, int n, conn_t *conn, char *err,
                  size_t errlen);
/* The arrays being made, from the database (at start, and after a batch that did not
 * commit: those in memory keep their submitters). */
void arrays_restore(ctld_t *c);
/* A repeated submission (its key) of an array still being made: conn hears when it is.
 * False: it is not being made. */
bool arrays_attach(ctld_t *c, int64_t array, conn_t *conn);
void arrays_forget_conn(ctld_t *c, conn_t *conn);
/* An array being made: the one with that id, or one of user's (NULL: none), among
 * uid's ((uid_t)-1: anyone's). */
const array_build_t *arrays_building(const ctld_t *c, int64_t array, const char *user,
                                     uid_t uid);
/* After a batch committed: the replies of the arrays that batch ended. */
void arrays_committed(ctld_t *c);
/* fn for each array being made: its elements' template and how many are not made yet
 * (limits count them as jobs). */
void arrays_unmade(const ctld_t *c, void (*fn)(const job_t *tmpl, int unmade, void *arg),
                   void *arg);
/* "Try again in a moment": a request on an array that is still being made. */
void arrays_busy_reply(ctld_t *c, conn_t *conn, const array_build_t *b);
/* Its array already has array_max elements in the engine or running. */
bool arrays_throttled(ctld_t *c, const job_t *j);
/* "12_3" for element 3 of array 12, else the job's id. */
void arrays_name(const job_t *j, char *buf, size_t len);
/* The job a reference names: an id, or "12_3". 0 and *id; -ENOENT (no such element) or
 * -EINVAL (not a reference). */
int arrays_resolve(ctld_t *c, const json_t *ref, int64_t *id);

/* eligible.c: pending jobs kept out of the engine (held, --begin, --dependency) */
/* At submission: the --dependency text is right and names jobs that exist. */
int elig_check_dependency(ctld_t *c, const char *spec, uint32_t uid, const char *name, char *err,
                          size_t errlen);
/* A pending job (new, restored, released): true if nothing holds it (the caller gives it
 * to the engine), else it waits with its reason. */
bool elig_enter(ctld_t *c, job_t *j);
/* It ends: it waits no more. */
void elig_forget(ctld_t *c, job_t *j);
/* The waiting jobs whose wait is over enter the engine (after ends, starts and on each
 * SchedulerTick: c->elig_due). */
void elig_review(ctld_t *c);
/* ductile hold / release: by its user (level 1) or an operator (2, which only an
 * operator releases). 0, or a negative errno with why in err. */
int elig_hold(ctld_t *c, job_t *j, bool op, char *err, size_t errlen);
int elig_release(ctld_t *c, job_t *j, bool op, char *err, size_t errlen);
/* After every job is restored: record what the restart changed. */
void jobs_after_restore(ctld_t *c);
json_t *job_to_json(const ctld_t *c, const job_t *j, bool full);
char *nodes_format(const ctld_t *c, const int *idx, int n);

/* --- nodes.c --- */
void nodes_init(ctld_t *c);
void nodes_free(ctld_t *c);
void nodes_on_message(ctld_t *c, conn_t *conn, json_t *msg, const char *type);
void nodes_conn_closed(ctld_t *c, conn_t *conn);
void nodes_check_timeouts(ctld_t *c);
/* After a reload (a failed commit, a new Policy): is a connected node daemon's report
 * still awaited? The scheduling passes wait for them. */
bool nodes_reports_pending(ctld_t *c);
int nodes_send(ctld_t *c, int node, json_t *msg); /* takes msg */
bool node_usable(const node_t *n);
/* Ask node n to end what it has of run `run` of job `id` (not ours to run there); the
 * node takes no new work until it confirms. */
void nodes_end_stale(ctld_t *c, node_t *n, int64_t id, int64_t run);
/* A node registered with `jobs`, what it still has: adopt the runs we still assign to
 * it, end the others (nodes_end_stale), settle the jobs it no longer has. */
void nodes_reconcile(ctld_t *c, node_t *n, const json_t *jobs);
const char *node_state_name(const node_t *n, const ctld_t *c);
int nodes_set_drain(ctld_t *c, node_t *n, bool drain, const char *reason);
/* An operator's word that a node is down: its jobs end or are requeued now (`ductile
 * drain --down`, for the nodes a controller suspecting its own network keeps up). */
void nodes_call_down(ctld_t *c, node_t *n, const char *why);
/* The address its daemon's connection comes from, without the port; false: none. */
bool nodes_addr(const node_t *n, char *buf, size_t len);

/* --- steps.c --- */
void steps_run(ctld_t *c, conn_t *conn, const json_t *msg);
void steps_on_node_message(ctld_t *c, const json_t *msg, const char *type);
void steps_conn_closed(ctld_t *c, conn_t *conn);
/* step_input from `ductile run`'s reader: data (base64) or eof for the step's first
 * task's standard input, relayed to its node; answered once written there, one chunk
 * at a time per step. step_input_ack: the node's answer. */
void steps_input(ctld_t *c, conn_t *conn, const json_t *msg);
void steps_on_input_ack(ctld_t *c, node_t *n, const json_t *msg);
/* The client acknowledges output it wrote out (flow control): credit for the node. */
void steps_ack(ctld_t *c, conn_t *conn, const json_t *msg);
/* A node daemon registered (reg: its register message, whose "steps" lists the tasks it
 * still holds): every other task we placed there is over ("node nX restarted"). */
void steps_node_registered(ctld_t *c, node_t *n, const json_t *reg);
/* A node went down: its tasks are over ("node nX is down"). */
void steps_node_lost(ctld_t *c, node_t *n);
/* Re-attaching (docs/reliability-steps.md): a client whose link broke comes back
 * (step_attach), says it has had everything (step_close); steps whose client stays away
 * longer than StepReattachTime are ended (steps_tick); at start the live steps in the
 * database are taken up again (steps_restore, before db_steps_close_open). */
void steps_attach(ctld_t *c, conn_t *conn, const json_t *msg);
void steps_close(ctld_t *c, conn_t *conn, const json_t *msg);
void steps_tick(ctld_t *c, double now);
void steps_restore(ctld_t *c);

/* --- rpc.c --- */
/* A reply to a request, sent once the batch it changed is on disk; a refusal. */
void rpc_reply(ctld_t *c, conn_t *conn, json_t *msg);
void rpc_fail(ctld_t *c, conn_t *conn, const char *err);
/* --- history.c --- */
void history_rpc(ctld_t *c, conn_t *conn, const json_t *m);

/* A uid's user name ("uid1234" when it has none here). */
void ctld_user_name(uid_t uid, char *buf, size_t len);
void rpc_on_message(ctld_t *c, conn_t *conn, json_t *msg);

/* sharing the cluster: node selection, accounts, reservations, partitions */
#include "share.h"

#endif
