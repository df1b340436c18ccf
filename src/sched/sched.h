/* sched: the decision engine.
 *
 * One engine serves the simulator and the controller. It performs no I/O, reads no
 * clock and has no globals: the caller tells it what happened (a job was submitted,
 * ended, finished a resize, a node went away) and asks it what to do now
 * (sched_schedule), passing the current time. The engine keeps its model of the
 * cluster between calls, so that a decision costs time proportional to what changed
 * rather than to the whole history: this model is the "snapshot" of DESIGN.md, held
 * by the engine and updated by deltas (docs/architecture.md).
 *
 * Every action it returns, and every job it leaves waiting, carries a reason that
 * users see. Actions are applied to the engine's model as they are returned: a
 * started job is running on the returned nodes; an expanded or shrunk job is
 * RESIZING until the caller reports sched_resize_done(). Nodes added by an expand
 * are reserved at once; nodes released by a shrink stay allocated until the resize
 * is done, because the job's processes on them must exit first.
 *
 * Node granularity: a job holds whole nodes. A running job's nodes are kept in rank
 * order; the first node never leaves the job, and a shrink releases the nodes that
 * joined last (the highest ranks), as the seeds' rank mapping requires. */
#ifndef DUCTILE_SCHED_H
#define DUCTILE_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SCHED_ERRLEN 256

typedef struct sched sched_t;

typedef enum sched_jobtype {
    SCHED_RIGID = 0,  /* fixed size */
    SCHED_MOLDABLE,   /* size picked at start within [min, max] */
    SCHED_MALLEABLE,  /* the scheduler expands and shrinks it */
    SCHED_EVOLVING,   /* the job itself asks for more or fewer nodes */
} sched_jobtype_t;

typedef enum sched_constraint {
    SCHED_CONS_NONE = 0,
    SCHED_CONS_POF2,  /* 1, 2, 4, 8, ... */
    SCHED_CONS_EVEN,  /* 2, 4, 6, ... */
    SCHED_CONS_ODD,   /* 1, 3, 5, ... */
    SCHED_CONS_NCUBE, /* 1, 8, 27, ... */
    SCHED_CONS_SQUARE /* 1, 4, 9, ... (seed 002 §1.2.1) */
} sched_constraint_t;

typedef enum sched_state {
    SCHED_PENDING = 0,
    SCHED_RUNNING,
    SCHED_RESIZING,
    SCHED_STOPPING, /* interrupted (SCHED_OP_INTERRUPT): holds its nodes until the caller
                       has stopped it and calls sched_requeue */
} sched_state_t;

typedef enum sched_op {
    SCHED_OP_START = 0,
    SCHED_OP_EXPAND,
    SCHED_OP_SHRINK,
    SCHED_OP_INTERRUPT, /* stop the job so that it waits again (node stealing: its nodes
                           go to a job that lost one to a failure, for_job). It holds its
                           nodes (SCHED_STOPPING) until the caller has stopped it and calls
                           sched_requeue(id, SCHED_CLASS_INTERRUPTED) or sched_remove. */
} sched_op_t;

/* Why an action was taken, or why a job waits. */
typedef enum sched_reason {
    SCHED_R_NONE = 0,
    /* waiting */
    SCHED_R_PRIORITY,          /* a job ahead of it waits (strict order) */
    SCHED_R_RESOURCES,         /* first in line, not enough free nodes */
    SCHED_R_RESERVED,          /* holds a reservation (backfilling) */
    SCHED_R_NODES_UNAVAILABLE, /* larger than the nodes that are up */
    SCHED_R_RESIZE_PENDING,    /* waits for nodes a shrink is releasing for it */
    /* start */
    SCHED_R_ORDER,             /* started in priority order */
    SCHED_R_BACKFILL,          /* started ahead of its turn without delaying others */
    /* expand */
    SCHED_R_IDLE_NODES,        /* given idle nodes */
    SCHED_R_EFFICIENT,         /* given idle nodes for a low MTCT ratio */
    SCHED_R_BELOW_PREFERRED,   /* grown towards its preferred size (DMR) */
    SCHED_R_EQUAL_SHARE,       /* sized to an equal share (equi) */
    /* shrink */
    SCHED_R_MAKE_ROOM,         /* shrunk to start a waiting job (for_job) */
    SCHED_R_INEFFICIENT,       /* shrunk for a high MTCT ratio */
    /* either */
    SCHED_R_REQUESTED,         /* an evolving job asked for it */
    SCHED_R_OPERATOR,          /* an operator asked for it */
    /* power (seed 002 ch. 5, docs/power.md) */
    SCHED_R_POWER,             /* waiting: starting it would take the draw above the
                                  corridor's upper bound */
    SCHED_R_POWER_CORRIDOR,    /* started, grown or shrunk to keep the draw inside the
                                  power corridor (the node-redistribution model) */
    /* failures (seed 003 §3.1; docs/policies.md, "Failures and node stealing") */
    SCHED_R_STOLEN,            /* interrupted or shrunk: its nodes went to a job that
                                  lost one to a failure (for_job) */
    /* I/O intensity (seed 003 §4.2; docs/policies.md, "io-aware") */
    SCHED_R_IO_BALANCE,        /* started ahead of its turn, or resized, to bring the
                                  running jobs' I/O intensity towards the workload's */
    /* limits (limits.c; docs/accounts.md): waiting, its user or account is at one */
    SCHED_R_LIMIT_JOBS,        /* as many jobs running as it may have */
    SCHED_R_LIMIT_NODES,       /* as many nodes as it may hold */
    SCHED_R_LIMIT_NODE_HOURS,  /* its node-hours (used, and allowed to its running jobs
                                  by their time limits) would pass its budget */
    /* reservations (resv.c) */
    SCHED_R_RESV_WAIT,         /* waiting: its reservation has not begun */
    SCHED_R_RESV_NODES,        /* waiting: the nodes it could use are reserved for part of
                                  the time its estimate reaches */
    SCHED_R_RESERVATION,       /* shrunk: a reservation that began holds some of its nodes */
    /* preemption (preempt.c) */
    SCHED_R_PREEMPTED,         /* shrunk or stopped for a job of a higher tier (for_job) */
    SCHED_R_PREEMPTING,        /* waiting: jobs of a lower tier give it their nodes */
    SCHED_R__COUNT
} sched_reason_t;

typedef struct sched_jobspec {
    int64_t id;           /* unique, chosen by the caller */
    double submit;        /* seconds; with id, the priority order */
    double eligible;      /* since when it may start (after a hold, a --begin, a
                             dependency): the priority's age counts from here; 0: submit */
    uint32_t user;
    sched_jobtype_t type;
    int nodes;            /* requested size: the start size of rigid/malleable jobs */
    int min_nodes;        /* 0: same as nodes */
    int max_nodes;        /* 0: same as nodes */
    int pref_nodes;       /* preferred size (DMR); 0: same as nodes */
    /* priority (sched_set_priority): its fair-share association is (account, user),
     * account 0 the root; tier its partition's tier; nice lowers its priority */
    uint32_t account;
    int tier;
    int nice;
    sched_constraint_t constraint;
    double walltime;      /* estimate in seconds; <= 0: unknown (unbounded) */
    double power_min;     /* W per node; 0: unknown */
    double power_max;
    bool wait_adaptive;   /* not resized until sched_set_adaptive(true) (the controller:
                             until the application attaches) */
    double io_intensity;  /* share of its run time spent in I/O, 0..1, at every size
                             (sched_set_io_intensity gives one per size); 0: none known */
    bool no_interrupt;    /* never stopped to run again later (the controller: a job
                             submitted without --requeue); a stealing policy may still
                             shrink it */
    int64_t reservation;  /* runs in this reservation (sched_add_reservation); 0: none */
    bool preempt;         /* may take nodes from running jobs of a lower tier (preempt.c):
                             shrinks a malleable one, stops one that may run again */
    /* node selection (docs/policies.md, "Node selection"): the job runs and grows only
     * on the allowed nodes (NULL: every node) and its allocation holds every required
     * one (--nodelist). The engine copies both at submit: they need not outlive the
     * call. The caller computes them from features, GPUs, memory, --exclude. */
    const int *allowed;
    int nallowed;
    const int *required;
    int nrequired;
} sched_jobspec_t;

typedef struct sched_action {
    sched_op_t op;
    int64_t job;
    int nodes_before;
    int nodes_after;
    const int *nodes;     /* start/expand: nodes added; shrink: nodes leaving */
    int nnodes;
    sched_reason_t reason;
    int64_t for_job;      /* MAKE_ROOM: the waiting job; else -1 */
} sched_action_t;

/* Why a resize request is not granted yet. */
typedef enum sched_wait {
    SCHED_W_NONE = 0,     /* nothing stops it: the next pass grants it */
    SCHED_W_RESIZING,     /* another resize of the job is under way */
    SCHED_W_NODES,        /* not enough free nodes for the expand */
    SCHED_W_NOT_ADAPTIVE, /* the application declines offers for now (it attached once) */
} sched_wait_t;

typedef struct sched_jobinfo {
    sched_state_t state;
    sched_reason_t reason;     /* pending: why it waits; running: why it last changed */
    int64_t reason_job;        /* job the reason refers to, or -1 */
    double start;              /* running: start time */
    double reserved_start;     /* pending with a reservation: its planned start; else -1 */
    double end_estimate;       /* running: expected end (INFINITY if unknown) */
    int nnodes;                /* running: committed size */
    int target;                /* resizing: size after the resize */
    const int *nodes;          /* running: all allocated nodes in rank order */
    int nalloc;                /* length of nodes (committed + reserved for an expand) */
    int expansions, shrinks;
    double mtct;               /* the last MTCT reported for it, -1 if none */
    int request;               /* a resize request not granted yet: its size; 0: none */
    bool request_op;           /* that request is an operator's */
    sched_wait_t request_wait; /* why it is not granted yet */
    int request_free;          /* SCHED_W_NODES: the free nodes it may grow onto now */
    double hold_until;         /* policies leave the job at its size until then
                                  (INFINITY: until released); 0: not held */
    bool app_limits;           /* its application narrowed its sizes (sched_set_app_limits): */
    int app_min, app_max, app_pref; /* the sizes policies keep to now */
    double app_interval;       /* seconds between policy resizes, 0: none */
} sched_jobinfo_t;

/* Create an engine for a cluster of nnodes nodes (all available) running the policy
 * named by spec ("easy", "perf:lower=0.2:upper=0.6"). */
int sched_create(int nnodes, const char *spec, sched_t **out, char *err, size_t errlen);
void sched_destroy(sched_t *s);
int sched_nnodes(const sched_t *s);
/* The policy spec with every parameter spelled out, e.g. "perf:lower=0.2:upper=0.6:guard=60". */
const char *sched_policy_spec(const sched_t *s);
/* Seconds between periodic scheduling passes the policy wants (its "tick"
 * parameter); 0 means passes on events only. */
double sched_tick(const sched_t *s);

/* Would sched_submit accept this job? (The controller checks before it writes.) */
int sched_check(const sched_t *s, const sched_jobspec_t *spec, char *err, size_t errlen);

/* Events. Each returns 0 or a negative errno-style code with a message. */
/* --test-only: when a job of this shape, submitted now, is expected to start if every
 * job ran to its time limit and the first `ahead` waiting jobs kept their order (each
 * at its earliest slot, conservative backfilling whatever the policy; a malleable
 * policy may start it sooner by shrinking). 1 with *start (engine time) and *size (the
 * nodes it starts on); 0 with *start -1 when no start is known; < 0 with err for a
 * job the engine would refuse. */
int sched_will_run(const sched_t *s, const sched_jobspec_t *spec, int ahead, double *start,
                   int *size, char *err, size_t errlen);
int sched_submit(sched_t *s, const sched_jobspec_t *spec, char *err, size_t errlen);
/* Remove a job in any state; a running job's nodes become free. */
int sched_remove(sched_t *s, int64_t id);
/* A resize finished (ok) or failed/was withdrawn (!ok). */
int sched_resize_done(sched_t *s, int64_t id, bool ok);
/* Measured MPI-to-compute time ratio of a running job (perf policy); < 0: unknown. */
int sched_set_mtct(sched_t *s, int64_t id, double mtct);
/* Can the running job take part in a resize now? Policies resize only jobs that can
 * (default: yes). The controller says no until the application has attached, and
 * while it declines offers (dt_set_inhibit). */
int sched_set_adaptive(sched_t *s, int64_t id, bool adaptive);
/* What the job's application accepts (dt_set_size_limits): policies resize the job
 * only within [min, max] (max 0: the job's own maximum), both narrowed to the job's
 * own limits, and aim at preferred where they have the notion (0: the job's own).
 * interval > 0: no policy resize until that many seconds after the last one began.
 * Negative arguments leave that setting as it is. */
int sched_set_app_limits(sched_t *s, int64_t id, int min, int max, int preferred,
                         double interval);
/* The application declined the resize under way (or did not answer it): call before
 * sched_resize_done(false). The policy does not make the same change (same direction
 * from the same size) again for a back-off that starts at `base` seconds and doubles
 * with each further decline of it, up to `max` (sched_set_backoff; default 10, 300). */
int sched_resize_declined(sched_t *s, int64_t id, double now);
void sched_set_backoff(sched_t *s, double base, double max);
/* Expected end of a running job (absolute seconds); the default is start + walltime. */
int sched_set_end_estimate(sched_t *s, int64_t id, double t);
/* A job's time limit changed (ductile update): 0 for none. A running job's end
 * estimate moves by as much. */
int sched_set_walltime(sched_t *s, int64_t id, double walltime);
/* An evolving job (or an operator, with operator=true, for any running job) asks for
 * a new size; granted by a later sched_schedule when possible. */
int sched_request_resize(sched_t *s, int64_t id, int nodes, bool operator_request, char *err,
                         size_t errlen);
/* Drops a job's resize request not granted yet: 1 if there was one, 0 if not. */
int sched_cancel_request(sched_t *s, int64_t id);
/* An operator set the job's size: policies do not resize the running job until
 * `until` (absolute seconds; INFINITY: until released); <= 0 releases it. Requests
 * (the operator's, an evolving job's) are still granted. A pending operator request
 * holds the job too, until it is granted or dropped. */
int sched_set_hold(sched_t *s, int64_t id, double until);
/* Has a hold ended by `now` (the caller should run a pass to let the policy in)? */
bool sched_hold_due(const sched_t *s, double now);
/* A node goes away (down, drained) or comes back. An allocated node stays with its
 * job until the job ends, then it is not reused while unavailable. */
int sched_set_node_available(sched_t *s, int node, bool available);

/* Priority classes: a job of a higher class waits ahead of every job of a lower one,
 * whatever the policy's own order (seed 003 §3.1.3-3.1.4). Within a class, the
 * policy's order (earlier submission first). */
typedef enum sched_class {
    SCHED_CLASS_NORMAL = 0,
    SCHED_CLASS_INTERRUPTED, /* stopped to give its nodes to a failed job */
    SCHED_CLASS_FAILED,      /* lost a node to a failure: waits first of all */
} sched_class_t;

/* A running (or stopping) job goes back to the queue in class cls, as a new submission
 * of it would wait: its nodes that are up become free. A stealing policy (sfsj)
 * considers a job requeued as FAILED at the next pass. */
int sched_requeue(sched_t *s, int64_t id, sched_class_t cls);
/* May node stealing stop the job (the spec's no_interrupt, changed)? 0 or -ENOENT. */
int sched_set_interruptible(sched_t *s, int64_t id, bool interruptible);
/* The caller is stopping this running job to requeue it, as after SCHED_OP_INTERRUPT
 * (the controller restarted while it did): the job is STOPPING, its nodes held until
 * sched_requeue. 0, -ENOENT, or -EINVAL when it is not running. */
int sched_set_stopping(sched_t *s, int64_t id);
/* A waiting job waits in class cls from now (the controller, after a restart, puts a
 * job requeued by a failure back first). No steal follows (sfsj looks at a job once,
 * when it fails). 0, -ENOENT, or -EINVAL when the job is not waiting. */
int sched_set_class(sched_t *s, int64_t id, sched_class_t cls);

typedef enum sched_failure {
    SCHED_FAIL_IDLE = 0,  /* no job held the node */
    SCHED_FAIL_SHRUNK,    /* its job runs on without it */
    SCHED_FAIL_REQUEUED,  /* its job waits again, in class FAILED */
} sched_failure_t;

/* A node failed: it is unavailable until sched_set_node_available(true). The job that
 * held it (*job, -1 if none) runs on without it when it can (a running malleable job
 * above its minimum that loses a node other than its first: SHRUNK, the node gone
 * from its list, no resize to wait for; its size must still meet its constraint) and
 * is requeued as FAILED otherwise. A malleable job waiting as FAILED whose requested
 * size is more than the nodes up restarts on fewer, down to its minimum, under every
 * policy. */
int sched_node_failed(sched_t *s, int node, int64_t *job, sched_failure_t *what);
/* What sched_node_failed would do, changing nothing (*job: the node's job or -1). The
 * controller asks first: a job it cannot let run on is cleaned up its own way. */
sched_failure_t sched_failure_outcome(const sched_t *s, int node, int64_t *job);

/* Re-create a running job (controller restart): it holds exactly these nodes. */
int sched_restore_running(sched_t *s, const sched_jobspec_t *spec, double start, const int *nodes,
                          int n, char *err, size_t errlen);
/* A restored running job's fair-share usage was counted up to t (the caller's last save
 * of the usage): it is charged from there, not before its start nor after now, rather
 * than from the restart. 0 or -ENOENT. */
int sched_restore_charged(sched_t *s, int64_t id, double t);

/* The power corridor (seed 002 ch. 5; docs/power.md). The engine predicts the draw
 * from what jobs declare (power_min/power_max W per node; default_w when a job declares
 * none) and idle_w per free node. Policies that take power into account (the `power`
 * policy, any policy with power=1) start a job only if its draw keeps the prediction
 * below upper (a moldable or malleable job may start smaller to fit); the `power`
 * policy also resizes running malleable jobs to bring the draw back inside. upper may
 * be INFINITY, lower 0. A change takes effect at the next sched_schedule. */
int sched_set_power(sched_t *s, double lower, double upper, double idle_w, double default_w,
                    char *err, size_t errlen);
/* A job's power per node changes (the controller widens what a job declared to what
 * its nodes were measured drawing): planned with from the next pass. */
int sched_set_job_power(sched_t *s, int64_t id, double lo, double hi);
/* The `power` policy's last solve found no plan inside the corridor (with the running
 * jobs' limits, N nodes and their powers): true, and *outside the W its closest plan
 * is outside by. False once the predicted draw is inside again. */
bool sched_power_unreachable(const sched_t *s, double *outside);
/* The predicted draw now: lo with every job at its power_min, hi at its power_max. */
void sched_power_estimate(const sched_t *s, double *lo, double *hi);

/* I/O intensity (seed 003 §4.2.2): the job spends v[k] of its run time in I/O on lo + k
 * nodes (0..1); a size outside the table takes its nearest entry. Replaces the spec's
 * single io_intensity. 0, -ENOENT, -EINVAL (a value outside 0..1, n < 1) or -ENOMEM. */
int sched_set_io_intensity(sched_t *s, int64_t id, int lo, const double *v, int n);
/* The I/O balance now: *system is the node-weighted mean intensity of the running jobs
 * (0 when none runs); *workload the same over running and pending jobs, pending ones
 * at their preferred size, divided by their nodes (a mean) or, cluster=true, by the
 * nodes that are up (the seed's printed formula, which can exceed 1). */
void sched_io_balance(const sched_t *s, bool cluster, double *workload, double *system);

/* --- Priority and fair share (prio.c; docs/policies.md) ---
 * A job's priority: w_age x age + w_size x size + w_fairshare x fairshare + w_tier x tier
 * - nice, each factor in [0, 1]. The pending queue is in class, then priority order
 * (then submission): every policy starts jobs in it, and the resizing policies grow in
 * it and shrink in its reverse when a weight is set. All weights 0 (the default): the
 * priority is -nice. */
typedef struct sched_prio_config {
    double w_age, w_size, w_fairshare, w_tier;
    double max_age;     /* seconds waited that give the whole age factor (default 7 days) */
    double half_life;   /* seconds after which past usage counts half; 0: no decay (7 days) */
    double calc_period; /* seconds between recalculations at passes; 0: every pass (300) */
    int tier_max;       /* the tier whose factor is 1 (the highest partition tier) */
} sched_prio_config_t;
int sched_set_priority(sched_t *s, const sched_prio_config_t *c, char *err, size_t errlen);
void sched_get_priority(const sched_t *s, sched_prio_config_t *out);
/* The time of the events that follow (a job's end, a resize done): usage is charged up
 * to it. sched_schedule sets it too. Never goes back. */
void sched_clock(sched_t *s, double now);
/* An account of the fair-share tree: id > 0, parent 0 for a top-level one. An account
 * a job names without it being set is top-level with 1 share. */
int sched_set_account(sched_t *s, uint32_t id, uint32_t parent, double shares, char *err,
                      size_t errlen);
/* The shares of a user in an account (default 1). */
int sched_set_user_shares(sched_t *s, uint32_t account, uint32_t user, double shares);
/* An association's usage (node-seconds as they count now): the controller restores it. */
int sched_set_usage(sched_t *s, uint32_t account, uint32_t user, double usage);
typedef struct sched_assoc {
    uint32_t account, user; /* user 0 with is_account */
    bool is_account;
    uint32_t parent;        /* the account above (0: the root) */
    double shares, usage;   /* usage: decayed node-seconds at the last recalculation or
                               sched_usage_refresh */
    double norm_shares, norm_usage, eff_usage, fairshare;
} sched_assoc_t;
/* Changes when usage is charged (not by decay alone): the caller saves it then. */
uint64_t sched_usage_version(const sched_t *s);
/* Recalculate the fair-share figures and priorities now (at the engine's time), not
 * waiting for the period, and sort the queue again. */
void sched_prio_update(sched_t *s);
/* The running jobs' usage charged up to the engine's time and the tree's figures
 * (sched_associations) computed again; the waiting jobs' priorities and the queue's
 * order are left for the period (a job submitted meanwhile gets its priority from
 * these figures). Costs the running jobs and the associations, not the queue: what a
 * save of the usage or a listing of the accounts needs. */
void sched_usage_refresh(sched_t *s);
/* The waiting jobs' ids in the queue's order (the first cap of them): their count. */
size_t sched_pending_order(sched_t *s, int64_t *ids, size_t cap);
/* The accounts and associations (the first cap of them in out): their count. */
size_t sched_associations(const sched_t *s, sched_assoc_t *out, size_t cap);
typedef struct sched_prio_info {
    double priority;
    double age, size, fairshare, tier; /* the factors, 0..1, unweighted */
    int nice;
} sched_prio_info_t;
/* A job's priority and its factors as they were when it was computed (the last
 * recalculation, or its submission): the weighted factors add up to it. */
int sched_job_priority(const sched_t *s, int64_t id, sched_prio_info_t *out);
/* A job's nice changed (an operator's, or the owner's raise). */
int sched_set_nice(sched_t *s, int64_t id, int nice);

/* --- Limits per user and per account (limits.c; docs/accounts.md) ---
 * 0 in a field: no limit. A job waits (reasons SCHED_R_LIMIT_*) while starting it would
 * take its user or one of its accounts (its own or one above) past a limit; policies
 * do not see it meanwhile, and expansions stop at the limits too. Node-hours count the
 * usage (decayed, as fair share counts it) and what the running jobs' time limits
 * still allow them: a job without a time limit cannot start under such a limit. */
typedef struct sched_limits {
    int max_running;
    int max_nodes;
    double max_node_seconds;
} sched_limits_t;
/* A user's limits, over all their jobs (every field 0: none). 0, -EINVAL or -ENOMEM. */
int sched_set_user_limits(sched_t *s, uint32_t user, const sched_limits_t *l);
/* An account's, over its jobs and its sub-accounts'. */
int sched_set_account_limits(sched_t *s, uint32_t account, const sched_limits_t *l);
/* A waiting job held by a limit: true, with *account the account whose limit (0: its
 * user's). */
bool sched_limited(const sched_t *s, int64_t id, uint32_t *account);

/* --- Reservations (resv.c; docs/reservations.md) ---
 * Nodes set apart from start to end: a job of no reservation starts (or grows) on them
 * only if its estimate ends it before start (a job without a time limit: never); a job
 * of the reservation (spec.reservation) runs on its nodes only, once it has begun. When
 * it begins, a malleable job of another holding its nodes is shrunk to give them back
 * where its minimum and constraint allow. Two reservations never share a node at the
 * same time. Ended reservations are dropped at a pass. */
int sched_add_reservation(sched_t *s, int64_t id, double start, double end, const int *nodes,
                          int n, bool maintenance, char *err, size_t errlen);
int sched_remove_reservation(sched_t *s, int64_t id);
/* Up to n nodes for a reservation from start to end (none of another one then): free
 * ones first, then those whose jobs should have ended by start, highest numbers first.
 * Their count. */
int sched_pick_reservation_nodes(const sched_t *s, double start, double end, int n, int *out);

/* Decide what to do at time now. The actions stay valid until the next call that
 * changes the engine. */
int sched_schedule(sched_t *s, double now, const sched_action_t **actions, size_t *nactions);

/* Queries. */
int sched_job_info(const sched_t *s, int64_t id, sched_jobinfo_t *out);
int sched_free_nodes(const sched_t *s);
/* Is the node held by a job (running, resizing, or reserved for an expand)? */
bool sched_node_busy(const sched_t *s, int node);
int sched_pending_count(const sched_t *s);
/* Nodes the first job of the queue needs to start (its smallest start size) when it
 * waits for nodes (reason Resources or NodesUnavailable); 0 when it does not, or
 * nothing waits. */
int sched_pending_need(const sched_t *s);
int sched_running_count(const sched_t *s);
bool sched_any_resizing(const sched_t *s);

/* Names. */
const char *sched_reason_name(sched_reason_t r);
const char *sched_op_name(sched_op_t op);
const char *sched_type_name(sched_jobtype_t t);
int sched_type_parse(const char *name, sched_jobtype_t *out);
const char *sched_constraint_name(sched_constraint_t c);
int sched_constraint_parse(const char *name, sched_constraint_t *out);

/* Policy catalogue, for --help and docs: i-th policy name and summary, NULL past the end. */
const char *sched_policy_name_at(int i, const char **summary);
/* k-th parameter of the i-th policy: 0, or -1 past the end. */
int sched_policy_params_at(int i, int k, const char **name, double *def, const char **help);

#endif
