/* sim internals shared by sim.c and the checkpoint service model (simckpt.c). */
#ifndef DUCTILE_SIM_SIM_INTERNAL_H
#define DUCTILE_SIM_SIM_INTERNAL_H

#include "../common/idmap.h"
#include "../common/rng.h"
#include "evq.h"
#include "sim.h"

enum { RJ_WAITING, RJ_RUNNING, RJ_DONE, RJ_REJECTED };

/* Run-time state of one job. */
typedef struct rjob {
    double wref;     /* remaining work, in seconds at the requested size */
    double rate;     /* progress per second; 0 while reconfiguring */
    double t_prog;   /* when wref was last brought up to date */
    double t_alloc;  /* last allocation change, for the node-seconds integral */
    double est_ratio;/* walltime / runtime: how the user's estimate scales */
    double s_ref;    /* S(requested size) */
    speedup_t sp;
    int alloc;       /* nodes held */
    int n;           /* committed size */
    int target;      /* size after the resize in progress; 0 when none */
    uint32_t ver;    /* version of the job's pending END event */
    uint32_t epoch;  /* runs of the job: a resize event of an earlier run is stale */
    double ns_run;   /* the job's node-seconds when its current run began */
    double left;     /* work left at the start of the current run (after its last
                        checkpoint), in seconds at the requested size */
    double eff0;     /* wref at the start of the run: left plus its checkpoints' cost */
    double every, cost; /* its checkpoints (every 0: none) */
    double req_t;    /* when its request not granted yet was made; < 0: none */
    int state;
    /* I/O phases (simio.c): the phase under way (even: compute, odd: a write), and when
     * the write began; wref is then what is left of the phase (seconds of work, or GB) */
    int phase;
    double t_phase;
    int io_nodes;    /* its nodes in the file system's count of writers (0: not writing) */
    int iters_kept;  /* iterations whose write completed before its last failure: its
                        writes are its checkpoints, a restart resumes after them */
    double ns_kept;  /* its node-seconds when its last write completed */
    bool at_point;   /* at a scheduling point: resizable until the pass, or its next write */
    bool listed;     /* in the list of jobs at a point this instant (once) */
} rjob_t;

typedef struct simctx {
    const workload_t *wl;
    const sim_config_t *cfg;
    sched_t *s;
    sim_result_t *res;
    rjob_t *rj;
    idmap_t *byid;
    evq_t q;
    int err;
    /* power: the corridor in force, the draw since t_draw, whether it is outside;
     * nodes held by jobs and their draw, kept up to date by set_alloc */
    double lower, upper, draw, t_draw;
    bool out, busy;     /* busy: jobs queued or running at the last sample */
    long held;
    double held_w;
    struct simck *ck;   /* the checkpoint service, NULL without one */
    /* failures: when each node is up again, the generator of drawn failures */
    double *down_until;
    rng_t frng;
    long fails_since_end; /* drawn failures since a job last ended */
    struct simio *io;   /* I/O phases and the file system, NULL when no job has them */
} simctx_t;

/* sim.c: a job's work is brought up to t; the job then runs undisturbed from t (its
 * rate, its next event, what the engine is told). */
void sim_progress(rjob_t *r, double t);
void sim_settle(simctx_t *c, size_t i, double t);

/* I/O phases (simio.c). simio_init sets c->io when a job has phases. */
int simio_init(simctx_t *c, char *err, size_t errlen);
bool simio_phased(const simctx_t *c, size_t i);
/* The job's intensities, told to the engine after its submission. */
void simio_submitted(simctx_t *c, size_t i);
/* Seconds the job takes on its requested size with the file system to itself. */
double simio_alone_seconds(const simctx_t *c, size_t i);
/* The job starts its first phase (after the iterations it kept): the work of it. */
double simio_start(simctx_t *c, size_t i);
/* Its rate in the phase under way (GB/s in a write). */
double simio_rate(const simctx_t *c, size_t i);
/* What is left of the job's run at its current rates, in seconds. */
double simio_remaining(const simctx_t *c, size_t i);
/* Its phase ended at t: true when another began (*point: a scheduling point, where a
 * pass must run), false when that was its last. */
bool simio_next_phase(simctx_t *c, size_t i, double t, bool *point);
/* The job ended (or left) at t. */
void simio_job_end(simctx_t *c, size_t i, double t);
/* Its run was lost at t (a failure, node stealing): a write under way is dropped; the
 * next run resumes after its last completed write. Returns the node-seconds of the run
 * that are lost: those since that write (or since the run began). */
double simio_run_lost(simctx_t *c, size_t i, double t);
/* After a pass: the balance is sampled, scheduling points close. */
void simio_after_pass(simctx_t *c, double t);
void simio_finish(simctx_t *c);

/* The checkpoint service (simckpt.c). Every hook is called only when c->ck is set. */
int simck_init(simctx_t *c, double t0, char *err, size_t errlen);
void simck_job_start(simctx_t *c, size_t i, double t);
void simck_job_end(simctx_t *c, size_t i, double t);
/* Before the engine hears that job i's shrink is done: the nodes it owes the service
 * leave the cluster's pool while the job still holds them, so no one else gets them. */
void simck_shrink_done(simctx_t *c, size_t i, double t);
/* After a scheduling pass: the scaler, then the scheduler's answer. True when the
 * answer changed the engine (shrinks asked, nodes given back): run a pass again. */
bool simck_pass(simctx_t *c, double t);
void simck_finish(simctx_t *c);

#endif
