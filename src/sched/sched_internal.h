/* Engine internals shared by the core and the policies (not part of the public API). */
#ifndef DUCTILE_SCHED_INTERNAL_H
#define DUCTILE_SCHED_INTERNAL_H

#include "../common/idmap.h"
#include "../common/nodeset.h"
#include "constraint.h"
#include "power.h"
#include "sched.h"

#define SCHED_MAX_PARAMS 8

typedef struct sjob sjob_t;
typedef struct prio_node prio_node_t;
typedef struct lim_state lim_state_t;

struct sjob {
    /* What a pass reads of each of 100,000 waiting jobs lies in the first two cache
     * lines (bench_sim prio): the queue's links and order here, the spec's sizes and
     * priority inputs at its start. */
    sjob_t *qprev, *qnext;  /* pending queue, priority order */
    double prio;           /* its priority (prio.c): the queue's order after its class */
    prio_node_t *leaf;     /* its fair-share association */
    /* node selection (nodesel.c): NULL, every node; spec.allowed/required are NULL */
    nodeset_t *allowed;    /* the nodes it may run and grow on */
    nodeset_t *required;   /* the nodes its allocation must hold (--nodelist) */
    int pidx;              /* its slot in s->pend while it waits (prio.c); -1: none */
    sched_class_t cls;     /* priority class (failures, node stealing) */
    bool resv_on, resv_own; /* during a pass: whether it has a reservations' view, its own */
    bool lim_on;           /* some limit counts it (set at each pass) */
    sched_state_t state;
    sched_jobspec_t spec;  /* min/max/pref already resolved (never 0) */
    double charged_at;     /* running: its nodes are charged to the leaf up to here */
    double prio_at, prio_fs; /* when its priority was computed, with which fair share */
    lim_state_t *ulim;     /* its user's limits (limits.c); NULL: none */
    nodeset_t *resv_saved; /* during a pass: its own allowed set (resv.c) */
    uint32_t limit_account; /* held by a limit: the account's (0: its user's) */
    double start;
    double end_est;        /* INFINITY when unknown */
    double mtct;           /* < 0: unknown */
    int *nodes;            /* rank order; [0, ncommit) committed, [ncommit, nalloc) reserved */
    int ncommit;
    int nalloc;
    int cap;
    int target;            /* RESIZING: size after the resize */
    int expansions, shrinks;
    int grow_ceiling;      /* perf: largest size worth growing to (0: max_nodes) */
    bool not_adaptive;     /* the application cannot take part in a resize now */
    sched_reason_t reason;
    int64_t reason_job;
    double reserved_start; /* -1: none */
    /* what the application accepts (sched_set_app_limits; src/sched/adapt.c) */
    int sub_min, sub_max, sub_pref; /* the job's own limits, before the application's */
    bool app_limits;       /* spec.min/max/pref include the application's limits */
    double interval;       /* no resize until this long after the last one began */
    double last_resize;    /* when the last resize began (-INFINITY: never) */
    /* back-off after declined resizes: no resize in direction hold_grow (1: expand,
     * 0: shrink) from size hold_from before hold_until */
    int hold_from, hold_grow, ndeclines;
    double hold_until;
    int request;           /* evolving/operator resize request: target size, 0 = none */
    bool request_op;
    bool was_adaptive;     /* it has been adaptive once (its application attached) */
    double oper_hold_until; /* operator hold (sched_set_hold); 0: none */
    bool steal_due;        /* requeued as FAILED: a stealing policy looks at it once */
    bool steal_wait;       /* waits for shrinks that give it nodes (sfsj:malleable=1) */
    bool restart_small;    /* a malleable job requeued by a failure that the nodes up
                              cannot hold: it starts anywhere down to its minimum */
    double *io;            /* I/O intensity on io_lo + k nodes (sched_set_io_intensity) */
    int io_lo, io_n;
    sjob_t *rprev, *rnext; /* running list, start order */
    int endpos;            /* index in the by-end array, -1 when not there */
    double key;            /* scratch for policies (sort keys) */
    int newsize;           /* scratch for policies (targets) */
    sched_reason_t newwhy; /* scratch: reason for the target, NONE = the caller's default */
};

/* A node of the fair-share tree (prio.c): an account, or a leaf, an (account, user)
 * association. */
struct prio_node {
    uint32_t account;     /* an account's id, or the leaf's account */
    uint32_t user;        /* a leaf's user; UINT32_MAX for an account */
    prio_node_t *parent;  /* NULL: the root */
    double shares;
    double usage;         /* node-seconds, decayed; an account's: its leaves' sum */
    double usage_at;      /* leaves: the time usage is valid at */
    /* computed at each recalculation */
    double child_shares;  /* the shares of its children */
    double norm_shares, norm_usage, eff_usage, fairshare;
    unsigned stamp;       /* the recalculation that computed the fields above */
    lim_state_t *lim;     /* an account's limits and counters (limits.c); NULL: none */
};

typedef struct sched_param_def {
    const char *name;
    double def;
    double lo, hi;
    const char *help;
    bool whole;     /* a count or a switch: whole numbers only */
} sched_param_def_t;

/* The remaining-time guard every resizing policy shares (seed 000 §5.3.1). */
#define SCHED_PARAM_GUARD(def) \
    {"guard", (def), 0, 1e9, "no resize when a job has this many seconds left or fewer", false}

typedef struct sched_policy {
    const char *name;
    const char *summary;
    const sched_param_def_t *params; /* terminated by a NULL name */
    bool needs_end_order;            /* keeps running jobs sorted by expected end */
    bool uses_power;                 /* works with the power corridor (its own admit
                                        parameter instead of power=1) */
    bool no_power_admit;             /* starts jobs its own way: power=1 is refused */
    void (*pass)(sched_t *s);
} sched_policy_t;

struct sched {
    int nnodes;
    nodeset_t *avail;    /* up and not drained */
    nodeset_t *freeset;  /* available and unallocated */
    int nfree;
    int navail;
    idmap_t *jobs;
    sjob_t *qhead, *qtail;
    int npending;
    sjob_t *rhead, *rtail;
    int nrunning;
    sjob_t **byend;      /* running jobs by end_est (then id) when the policy needs it */
    int nbyend, capbyend;
    int nresizing;
    int nmasked;         /* jobs with an allowed or required node set (nodesel.c) */
    idmap_t *masks;      /* those sets by hash, one copy each (nodesel.c) */
    int nstopping;       /* jobs in SCHED_STOPPING */
    int nrequests;
    int nholds;          /* jobs with oper_hold_until > 0 */
    double hold_next;    /* earliest oper_hold_until among them */
    const sched_policy_t *policy;
    double params[SCHED_MAX_PARAMS];
    double tick;         /* seconds between periodic passes the caller should run; 0 = none */
    double backoff, backoff_max; /* after a declined resize (sched_set_backoff) */
    /* power (corridor.c): the corridor, W per idle node and for a job that declares
     * nothing; power_admit: starts are checked against the upper bound; pw_lo/hi: the
     * predicted draw, brought up to date at each pass and by each start and expand */
    double pw_lower, pw_upper, pw_idle, pw_default;
    bool power_admit;
    double pw_lo, pw_hi;
    bool pw_unreachable;             /* the last solve found no plan inside the corridor */
    double pw_closest;               /* and its closest plan's W outside */
    char spec[256];
    double now;
    /* priority and fair share (prio.c) */
    sched_prio_config_t prio;
    double prio_last;    /* the last recalculation */
    bool prio_dirty;     /* the queue may be out of priority order */
    /* the waiting jobs in an array (prio.c): in the queue's order as the last sort left
     * it, NULL where one left, later ones appended. The sort reads it instead of the
     * list: it knows every job's address ahead and need not wait on each link.
     * pend_moved: a job went into the list elsewhere than at its tail since (the two
     * orders may differ); pend_lost: out of memory, rebuilt from the list. */
    sjob_t **pend;
    size_t npend, cappend, pend_holes;
    bool pend_moved, pend_lost;
    struct prio_key *pkeys; /* the sort's keys (prio.c), kept between passes */
    size_t cappkeys;
    unsigned prio_stamp;
    uint64_t prio_charges;  /* usage charged so far (sched_usage_version) */
    prio_node_t prio_root;          /* the tree's root (account 0) */
    idmap_t *prio_accounts, *prio_leaves; /* accounts by id; leaves by (account, user) */
    /* limits (limits.c) */
    idmap_t *lim_users;  /* uid -> lim_state_t */
    int nlimits;         /* users and accounts with limits */
    bool lim_resolve;    /* users' limits set or dropped: jobs see them at the next pass */
    lim_state_t *lim_dropped; /* dropped users' limits, freed then */
    sjob_t *lim_parked;  /* during a pass: waiting jobs a limit keeps out of it */
    /* reservations (resv.c) */
    struct resv *resv;
    int nresv;
    struct resv_view *resv_views; /* during a pass: the views unmasked jobs share */
    int nresv_views;
    int npreempt;        /* jobs that may preempt (preempt.c) */
    /* output of the current pass */
    sched_action_t *acts;
    size_t nacts, capacts, capactoff;
    int *actnodes;
    size_t nactnodes, capactnodes;
    size_t *actoff;
    /* scratch for policies */
    sjob_t **tmp;
    size_t captmp;
    /* where jobs live (sched.c, job_alloc): slabs of jobs side by side, so that a pass
     * over a long queue walks memory in order rather than hops between allocations */
    sjob_t **slabs;
    int nslabs;
    sjob_t *job_free;    /* free list through qnext */
};

/* policy table (policy.c) */
const sched_policy_t *policy_lookup(const char *name);
int policy_parse(const char *spec, const sched_policy_t **pol, double *params, double *tick,
                 bool *power, char *canon, size_t canonlen, char *err, size_t errlen);

/* --- core helpers for policies (sched_core.c) --- */

/* Smallest and largest size a pending job may start with under a policy that starts
 * malleable jobs anywhere in [min, nodes] (flexible) or at exactly nodes. */
int core_min_start(const sjob_t *j, bool flexible);
int core_max_start(const sjob_t *j, bool flexible);
/* Size to start j with when avail nodes are free, 0 if it does not fit (the nodes,
 * or a limit of its user or account: limits.c). */
int core_fit(const sjob_t *j, int avail, bool flexible);
/* The same, by the nodes alone. */
int core_fit_nodes(const sjob_t *j, int avail, bool flexible);
/* core_fit, and then (power admission on) the largest size, down to the job's minimum,
 * whose draw keeps the predicted draw within the corridor's upper bound. 0 when it
 * does not fit; *why says whether nodes (Resources) or power (Power) stopped it. */
int core_fit_now(sched_t *s, const sjob_t *j, int avail, bool flexible, sched_reason_t *why);
/* The node-redistribution model over the running jobs (the resizable ones vary, the
 * others are constants) and, if cand, that waiting job: sets newsize of the resizable
 * jobs (those core_collect_resizable put in s->tmp) and *cand_size; min_idle nodes stay
 * idle. 0, or < 0 on an error. */
int core_power_plan(sched_t *s, sjob_t *cand, int min_idle, int *cand_size,
                    sched_power_solution_t *sol);
/* W per node of a job as the engine predicts it (corridor.c). */
void core_job_power(const sched_t *s, const sjob_t *j, double *lo, double *hi);
/* True when j can never start with the nodes that are up. */
bool core_unrunnable(const sched_t *s, const sjob_t *j, bool flexible);

void core_start(sched_t *s, sjob_t *j, int size, sched_reason_t why);
/* core_start on nodes not in avoid (the caller counted enough of them free). */
void core_start_avoiding(sched_t *s, sjob_t *j, int size, sched_reason_t why,
                         const nodeset_t *avoid);
void core_expand(sched_t *s, sjob_t *j, int newsize, sched_reason_t why);
void core_shrink(sched_t *s, sjob_t *j, int newsize, sched_reason_t why, int64_t for_job);

/* Priority order: higher class first, then higher tier (partitions), then higher
 * priority (prio.c), then earlier submit, then lower id. */
bool core_before(const sjob_t *a, const sjob_t *b);
/* Room for n jobs in s->tmp. */
void core_tmp_reserve(sched_t *s, size_t n);
/* Sort the first n jobs of s->tmp with cmp (ties must be broken by cmp itself). */
void core_sort_tmp(sched_t *s, int n, int (*cmp)(const void *, const void *));
/* Orders for core_sort_tmp: the lowest priority first (the latest in queue order); the
 * largest key first (e.g. remaining time, set by the caller), ties in priority order. */
int core_lowest_priority_first(const void *a, const void *b);
int core_highest_priority_first(const void *a, const void *b);
int core_largest_key_first(const void *a, const void *b);
/* Stop a running job for failed, which takes its nodes (node stealing): an INTERRUPT
 * action; the job holds its nodes (STOPPING) until the caller requeues it in class
 * INTERRUPTED. The caller picks a running job that may be interrupted. */
/* The job is being stopped (STOPPING): its nodes expected free now. */
void core_stop(sched_t *s, sjob_t *j);
void core_interrupt(sched_t *s, sjob_t *j, int64_t for_job, sched_reason_t why);

/* I/O intensity of j on n nodes (iointensity.c). */
double core_io_of(const sjob_t *j, int n);
/* The size j counts with in the I/O balance: running, its committed size or the size a
 * resize under way goes to; pending, its preferred size. */
int core_io_size(const sjob_t *j);
/* Intensity x nodes and nodes, summed over the running jobs (run_*) and over the
 * running and pending ones (all_*), each at core_io_size. */
typedef struct io_sums {
    double run_w, run_n, all_w, all_n;
} io_sums_t;
void core_io_sums(const sched_t *s, io_sums_t *out);
/* The workload intensity from those sums: a node-weighted mean, or (cluster) divided
 * by the nodes that are up. */
double core_io_workload(const sched_t *s, const io_sums_t *m, bool cluster);

/* Reset every newsize in s->tmp[0..n) to the current size. */
void core_reset_targets(sched_t *s, int n);

/* The walltime of j when it runs on size nodes: the walltime, scaled by nodes / size
 * below its requested size (INFINITY when it has none). */
double core_walltime_at(const sjob_t *j, int size);
/* Seconds left before the job's expected end (INFINITY when unknown). */
double core_remaining(const sched_t *s, const sjob_t *j);
/* Does the application's offer interval or a decline back-off keep the policy from
 * resizing j now, to newsize? (adapt.c) */
bool core_resize_held(const sched_t *s, const sjob_t *j, int newsize);
/* Record the start of a resize (adapt.c). */
void core_resize_began(const sched_t *s, sjob_t *j);

/* Malleable and running (not resizing): a candidate for policy-driven resizes. A
 * job started earlier in the same pass qualifies, as in seed 000 §7.3 (EGS+PRMA gives
 * a job that has just started its share of the idle nodes). */
bool core_resizable(const sjob_t *j);
/* An operator's request that waits for the application to take offers again. */
bool core_request_blocked(const sjob_t *j);

/* Start jobs in strict priority order; returns the first job that does not fit
 * (reason RESOURCES), or NULL when every pending job started. */
sjob_t *core_pass_fcfs(sched_t *s, bool flexible);

typedef struct easy_plan {
    sjob_t *head;        /* the reserved job, NULL when none waits */
    double shadow;       /* when the head can start (INFINITY: never with current info) */
    int extra;           /* nodes free at shadow time that the head does not need */
} easy_plan_t;
/* EASY backfilling: priority-order starts, one reservation for the first job that
 * does not fit, backfill of later jobs that do not delay it. */
void core_pass_easy(sched_t *s, bool flexible, easy_plan_t *plan);
/* Reservation of the head job given the current running set (used by passes that
 * change allocations after backfilling). */
void core_easy_shadow(sched_t *s, sjob_t *head, bool flexible, easy_plan_t *plan);
/* Conservative backfilling: a reservation for every pending job. */
/* depth: reservations for that many waiting jobs at most (0: all); later ones start
 * only where they delay none */
void core_pass_conservative(sched_t *s, int depth);
/* When probe (not in the engine) could start after the first `ahead` waiting jobs, each
 * placed at its earliest slot by the estimates: 1 and *start, or 0 (*start -1) when no
 * slot is known (nodes held for good by jobs without a time limit, or too few up);
 * *avail: the nodes free all through that slot (a moldable job takes up to them). */
int core_will_run(const sched_t *s, const sjob_t *probe, int ahead, double *start, int *avail);
#define SCHED_PARAM_DEPTH                                                                      \
    {"depth", 1000, 0, 1e9,                                                                    \
     "reservations for this many waiting jobs at most (0: every one); later jobs start only "  \
     "where they delay none of them",                                                           \
     true}

/* Grant pending evolving-job and operator resize requests that can be met now. */
void core_grant_requests(sched_t *s);

/* Running malleable jobs that policies may resize, in start order (or reversed),
 * in s->tmp; returns their count. */
int core_collect_resizable(sched_t *s, bool latest_first);

/* The start of a resize decision: 0 while any job is resizing (no new decision,
 * seed 000 §5.3) or when no malleable job runs; else the count of resizable jobs,
 * collected in start order in s->tmp. */
int core_begin_resizes(sched_t *s);
/* Carry out the shrinks planned in s->tmp to start `waiting`, which then waits for
 * them (reason ResizePending). flexible as core_min_start. A masked job: only if the nodes they free give it its
 * start (else nothing, the targets reset, false). */
bool core_make_room(sched_t *s, int n, sjob_t *waiting, bool flexible);

/* Apply per-job targets (j->newsize) to the n jobs in s->tmp: every shrink first,
 * then every expand, as the seeds require. Expands beyond the free nodes are cut. */
void core_apply_targets(sched_t *s, int n, sched_reason_t grow_why, sched_reason_t shrink_why,
                        int64_t for_job);

/* --- node selection (nodesel.c; docs/policies.md, "Node selection") ---
 * A job with an allowed or a required set is "masked". Every helper below is the plain
 * count for a job without one, so an unmasked job behaves as if masks did not exist. */
/* Validate the spec's node sets (min/max/pref already resolved; max and pref are
 * narrowed to the allowed nodes). */
int nodesel_check(const sched_t *s, sched_jobspec_t *v, char *err, size_t errlen);
/* Copy the spec's node sets into j (and clear the spec's pointers), shared with the
 * jobs that name the same sets: 0 or -ENOMEM. nodesel_release gives them back. */
int nodesel_attach(sched_t *s, sjob_t *j);
void nodesel_release(sched_t *s, sjob_t *j);
/* The same for a job that is not in the engine (sched_will_run's probe): its own sets. */
int nodesel_attach_own(const sched_t *s, sjob_t *j);
void nodesel_release_own(sjob_t *j);
/* The shared sets' table (nodesel.c): empty once every job is released. */
void nodesel_destroy(sched_t *s);
/* Can j never start on need nodes with the nodes that are up (its masks)? */
bool nodesel_unrunnable(const sched_t *s, const sjob_t *j, int need);
static inline bool core_masked(const sched_t *s, const sjob_t *j)
{
    /* the count first: a pass over a long queue without masks reads no more of each job */
    return s->nmasked && (j->allowed || j->required);
}
/* Free nodes j may start on (its allowed ones). */
int core_free_for(const sched_t *s, const sjob_t *j);
/* Can j start on size nodes now: enough of its allowed nodes free, every required one? */
bool core_can_start(const sched_t *s, const sjob_t *j, int size);
/* Free nodes the running j may grow onto now: its allowed ones, less those set aside for
 * the first waiting job when that job is masked (its free allowed nodes are all it can
 * use, so growth there would keep it waiting). */
int core_grow_room(const sched_t *s, const sjob_t *j);
/* The nodes set aside for the first waiting job that can ever run, when it is masked
 * and not j (its free allowed nodes are all it can use); NULL when none. */
const nodeset_t *nodesel_aside(const sched_t *s, const sjob_t *j);
/* Take k free nodes for j (a start: its required nodes first), none in avoid, into
 * j->nodes + j->nalloc: how many were taken. */
int nodesel_take(sched_t *s, sjob_t *j, int k, const nodeset_t *avoid);
/* EASY with a masked head: start j (any length) on free nodes outside the head's, which
 * cannot delay it. True when it started. */
bool nodesel_backfill_beside(sched_t *s, sjob_t *j, const sjob_t *head, bool flexible);
/* Nodes that shrinking j to newsize frees that waiting can use. */
int core_room_gain(const sjob_t *waiting, const sjob_t *j, int newsize);
/* The nodes waiting still lacks to start at its smallest size (flexible as
 * core_min_start); <= 0: none. */
int core_room_need(const sched_t *s, const sjob_t *waiting, bool flexible);
/* Do the shrinks planned in s->tmp[0..n) free enough of waiting's nodes to start it? */
bool nodesel_room_enough(const sched_t *s, int n, const sjob_t *waiting, bool flexible);
/* When need of j's own nodes (and its required ones) are first free by the running
 * jobs' estimates: now, a job's end, or INFINITY. */
double nodesel_earliest(const sched_t *s, const sjob_t *j, int need);
/* core_easy_shadow for a masked head: only the ends that free its nodes count. */
void nodesel_shadow(sched_t *s, sjob_t *head, bool flexible, easy_plan_t *plan);

/* priority (prio.c) */
void prio_init(sched_t *s);
void prio_destroy(sched_t *s);
bool prio_active(const sched_t *s);
/* A job joins the engine: its association (created with 1 share when new). */
void prio_attach(sched_t *s, sjob_t *j);
/* Charge a running job's nodes to its association up to s->now: call before its
 * allocation changes. */
void prio_charge(sched_t *s, sjob_t *j);
/* A job's priority from the factors as last computed. */
void prio_job_set(sched_t *s, sjob_t *j);
/* j joins (at the end) or leaves the array of waiting jobs (core_queue_insert/unlink) */
void prio_pend_add(sched_t *s, sjob_t *j);
void prio_pend_del(sched_t *s, sjob_t *j);
/* At each pass: recalculate when due; put the queue back in order. */
void prio_pass(sched_t *s);

/* An account of the fair-share tree, made (top-level, 1 share) if new. */
prio_node_t *prio_account(sched_t *s, uint32_t id);

/* preemption (preempt.c): after the policy's pass */
void preempt_pass(sched_t *s);

/* reservations (resv.c): each job's view of the nodes for the pass, and back */
void resv_free(sched_t *s);
void resv_pass_begin(sched_t *s);
void resv_pass_end(sched_t *s);

/* limits (limits.c) */
void lim_free(sched_t *s);
/* At a pass's start: count, and park the waiting jobs a limit stops; at its end, put
 * them back in the queue. */
void lim_pass_begin(sched_t *s);
void lim_pass_end(sched_t *s);
/* The largest start size from lo up to size that the limits allow (0: none). */
int lim_fit(const sjob_t *j, int size, int lo);
/* The limit that keeps j from starting on size nodes (SCHED_R_NONE: none); is a reason
 * a limit's? */
sched_reason_t lim_reason(const sjob_t *j, int size);
bool lim_reason_is(sched_reason_t r);
/* May j start on size nodes (else it gets the limit as its reason)? And it started. */
bool lim_start_ok(sjob_t *j, int size);
void lim_started(sjob_t *j, int size);
/* How many of k more nodes the limits let a running job take; and it took k. */
int lim_grow_room(const sched_t *s, const sjob_t *j, int k);
void lim_grown(const sched_t *s, sjob_t *j, int k);

/* list maintenance (sched.c) */
/* The pending queue: take a job out, put it back in its place. */
void core_queue_unlink(sched_t *s, sjob_t *j);
void core_queue_insert(sched_t *s, sjob_t *j);
/* j into the queue just before at (NULL: at its end); the caller knows the place. */
void core_queue_link_before(sched_t *s, sjob_t *j, sjob_t *at);
/* A job out of the list for a pass (limits.c), and back before at: it keeps its slot
 * in s->pend, so that the queue's array need not be sorted again when it returns to
 * its place. */
void core_queue_park(sched_t *s, sjob_t *j);
void core_queue_unpark(sched_t *s, sjob_t *j, sjob_t *at);
void core_byend_update(sched_t *s, sjob_t *j);
/* Move a pending job to the running list (start order). */
void core_running_add(sched_t *s, sjob_t *j);
/* A running job waits again in class cls (sched_requeue). */
void core_requeue(sched_t *s, sjob_t *j, sched_class_t cls);

#endif
