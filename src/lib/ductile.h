/* libductile: the job side of Ductile's resize handshake.
 *
 * A malleable application attaches to its node daemon, then, at safe points (the top
 * of an iteration), asks whether the scheduler offers it a resize. An offer names the
 * nodes that join (expand) or leave (shrink). The application starts its processes on
 * joining nodes, or lets its processes on leaving nodes finish, moves its data, and
 * commits; or it declines. The controller records the new allocation only on commit.
 *
 *   dt_attach(1);                       // the leader, on the job's first node
 *   for (iter = 0; iter < n; iter++) {
 *       dt_offer_t o;
 *       if (dt_poll_offer(&o) == 1) {   // costs one poll() when nothing is pending
 *           ... adapt ...
 *           dt_offer_commit(&o);
 *       }
 *       compute(iter);
 *   }
 *
 * docs/malleable-apps.md describes both layers: this one (any processes, e.g. a task
 * farm) and the MPI one (dt_init_adapt ...). Every function returns 0 (or 1 where
 * documented) or a negative errno; dt_strerror gives the message of the last error.
 * A request the controller or the node daemon refuses returns its code's errno:
 * -EINVAL (invalid), -EPERM (denied: not yours, not the leader), -ESRCH (not found:
 * the job does not run here), -EALREADY (not in this state), -EDQUOT (a limit), -EBUSY
 * (try again later), -ENOSPC (could not be saved), -EREMOTE (the daemon's fault). */
#ifndef DUCTILE_H
#define DUCTILE_H

#ifdef __cplusplus
extern "C" {
#endif

/* DT_LOST (only after dt_set_survive_loss(1)): nodes[] failed and the job already runs
 * without them; nothing to answer or commit (id is 0). */
typedef enum dt_op { DT_EXPAND = 1, DT_SHRINK = 2, DT_WITHDRAWN = 3, DT_LOST = 4 } dt_op_t;

#define DT_MAX_NODES 4096
#define DT_NAME_MAX 64

typedef struct dt_offer {
    long id;                 /* the offer's number, to answer it */
    dt_op_t op;              /* DT_WITHDRAWN: the controller took offer `id` back */
    int before, after;       /* job size in nodes before and after */
    int nnodes;              /* nodes joining (expand) or leaving (shrink) */
    char nodes[64][DT_NAME_MAX]; /* their names (the first 64) */
    char nodelist[1024];     /* the allocation after the resize, e.g. n[1-4] */
    double timeout;          /* seconds left to answer */
    double window;           /* once accepted (dt_offer_accept), seconds to commit */
} dt_offer_t;

/* Attach this process to its job ($DUCTILE_JOB_ID) through its node daemon
 * ($DUCTILE_NODED_SOCKET). leader = 1 for the process that answers offers (it must run
 * on the job's first node); other processes attach to report MTCT. */
int dt_attach(int leader);
/* 1 and *offer filled when an offer (or a withdrawal) is pending; 0 when none; never
 * waits. */
int dt_poll_offer(dt_offer_t *offer);
/* Waits up to timeout seconds (< 0: for ever) for an offer. */
int dt_wait_offer(dt_offer_t *offer, double timeout);
/* Optional: the application starts adapting to the offer. From then on it has
 * ResizeTimeout seconds (the offer's `window`) to commit; past that the controller
 * ends the job (ResizeFailed), since its processes may be stuck halfway. */
int dt_offer_accept(const dt_offer_t *offer);
int dt_offer_decline(const dt_offer_t *offer);
/* The adaptation is done: the controller records the new allocation. For a shrink, the
 * processes on the leaving nodes must have finished (the node daemons kill what is left
 * before the nodes are released). */
int dt_offer_commit(const dt_offer_t *offer);
/* While on, the scheduler makes no offers (the job declines them in advance). */
int dt_set_inhibit(int on);
/* Report the MPI-time-to-compute-time ratio of this process's recent work. */
int dt_report_mtct(double mtct);
/* An evolving job asks for a new size; an offer follows when it can be met. */
int dt_request_nodes(int nodes);
/* on = 1: when a node of the job other than its first fails, the job runs on without it
 * (while above its minimum size) and the application gets a DT_LOST notice naming it,
 * instead of the job ending NODE_FAIL. Only for applications that can lose processes:
 * the processes there are gone, and anything they held must be redone (the task farm
 * gives their items out again). Not for MPI applications (a communicator with dead
 * ranks cannot be shrunk). Default 0. */
int dt_set_survive_loss(int on);
/* The sizes (in nodes) this application accepts: the scheduler offers nothing that
 * would take the job outside [min_nodes, max_nodes] (both also within the job's own
 * --min-nodes/--max-nodes), and policies with a notion of a preferred size (dmr) aim
 * at preferred (0: none). max_nodes 0: no limit of the application's own. Called
 * before dt_attach, the limits go with the attach, so that no offer precedes them. */
int dt_set_size_limits(int min_nodes, int max_nodes, int preferred);
/* Offers at most once per `seconds` (0: no such limit): the scheduler does not resize
 * the job again until this long after its last resize. */
int dt_set_offer_interval(double seconds);
/* The adaptation of an accepted offer failed (a new process died, a step could not
 * start): the controller ends the job (or requeues a --requeue job) with `why`. */
int dt_resize_failed(const dt_offer_t *offer, const char *why);
void dt_detach(void);
const char *dt_strerror(void);

/* ---- The MPI layer (Open MPI). Declared when <mpi.h> is included before this file.
 *
 * The job is started with `ductile mpirun [--ppn P] PROGRAM ARGS` inside a batch script:
 * one group of P processes per node, each group its own mpirun, joined into one
 * communicator. Never use MPI_COMM_WORLD after dt_init_adapt: use dt_comm().
 *
 *   int status, pending, role;
 *   dt_init_adapt(&argc, &argv, &status);          // DT_STATUS_NEW or DT_STATUS_JOINING
 *   for (;;) {
 *       dt_probe_adapt(&pending, &role);           // collective over dt_comm()
 *       if (pending) {
 *           MPI_Comm inter, next;
 *           dt_adapt_begin(&inter, &next);         // the adaptation window opens
 *           ... move data (dt_redistribute_block, or by hand) ...
 *           dt_adapt_commit();                     // leaving processes exit here
 *       }
 *       ... one iteration on dt_comm() ...
 *   }
 *   dt_finalize();
 *
 * Collective (every process of dt_comm() calls them, in the same order): dt_probe_adapt,
 * dt_adapt_begin, dt_redistribute_block, dt_adapt_commit, dt_reconfigure, dt_finalize.
 * With DUCTILE_DEBUG=1 in the environment, a process that waits in dt_probe_adapt or
 * dt_reconfigure longer than DUCTILE_DEBUG_TIMEOUT seconds (default 10) says which
 * ranks have not reached it, and says it again while it waits.
 *
 * The adaptation window (from the dt_probe_adapt that says pending to dt_adapt_commit)
 * is watched: when a group started for it ends, or it lasts longer than the offer's
 * timeout (ResizeTimeout), every process of the application stops with a message
 * naming the node and the phase ("libductile: n1 rank 0: the expand 1 -> 2 nodes
 * (joining: n2) failed: the group on n2 ended ..., in phase '...'"), and the
 * controller is told that the resize failed (it ends the job with that reason). */
#ifdef MPI_VERSION
enum { DT_STATUS_NEW = 1, DT_STATUS_JOINING = 2 };
enum { DT_ROLE_STAYING = 1, DT_ROLE_LEAVING = 2, DT_ROLE_JOINING = 3 };

/* MPI_Init, then joins this process's group to the job's communicator. A program
 * started outside `ductile mpirun` runs as a plain MPI program that never resizes.
 * A joining process (DT_STATUS_JOINING) returns with dt_comm() already the
 * communicator after the expansion (its rank and size final); it then calls
 * dt_probe_adapt (pending 1, role JOINING), dt_adapt_begin, and the window's calls like
 * the others, before any collective of its own on dt_comm(). */
int dt_init_adapt(int *argc, char ***argv, int *status);
/* The job's communicator: all processes, in node order. Changes at dt_adapt_commit. */
MPI_Comm dt_comm(void);
/* Collective over dt_comm() (joining processes call it too, and get pending = 1, role
 * JOINING at once). pending = 1 when an adaptation starts (the window is open from
 * here: dt_adapt_begin follows); role says what this process does. */
int dt_probe_adapt(int *pending, int *role);
/* Opens the adaptation window. new_comm: the communicator after the adaptation
 * (MPI_COMM_NULL on leaving processes). intercomm joins the processes that were there
 * before and stay (local group) with those joining or leaving (remote group). Both stay
 * valid until dt_adapt_commit, which frees them. -EAGAIN on every process when the
 * new groups could not start: the offer is declined and nothing changes. */
int dt_adapt_begin(MPI_Comm *intercomm, MPI_Comm *new_comm);
/* Closes the window: new_comm becomes dt_comm(), the controller records the new size.
 * On leaving processes it finalizes MPI and exits the process (status 0). */
int dt_adapt_commit(void);
/* Inside the window: move a block-distributed array (total elements of elem_size
 * bytes, split in contiguous blocks by rank as dt_block_range does) from its
 * distribution before the adaptation to the one after. old_buf is ignored on joining
 * processes and new_buf on leaving ones. */
int dt_redistribute_block(const void *old_buf, void *new_buf, long total, int elem_size);
/* The block [*lo, *hi) of rank among size processes for total elements. */
void dt_block_range(long total, int rank, int size, long *lo, long *hi);
/* This process's rank and size in the communicator after the adaptation (inside the
 * window) or now (outside it); rank -1 on a leaving process. */
int dt_next_rank(void);
int dt_next_size(void);
int dt_finalize(void);

/* The DMR-style layer (seed 004): register the data, set the limits, and call
 * dt_reconfigure() at the top of every iteration; it probes, moves the registered data,
 * runs the callback, and commits. Every process registers the same variables in the
 * same order (joining processes with NULL data and count 0). */
typedef enum dt_dist {
    DT_DIST_BLOCK = 1,        /* contiguous blocks by rank (dt_block_range) */
    DT_DIST_BLOCK_CYCLIC = 2, /* blocks of `block` elements dealt round-robin */
    DT_DIST_REPLICATED = 3    /* every process holds all of it */
} dt_dist_t;
typedef void dt_adapt_fn(int role, MPI_Comm intercomm, MPI_Comm new_comm, void *arg);
/* The sizes (in nodes) this application takes. The leader tells the scheduler
 * (dt_set_size_limits; called before dt_init_adapt, at its attach), which offers
 * nothing outside [min, max], and policies with a preferred size (dmr) aim at
 * preferred (0: none); an offer outside them that comes anyway is declined. Any
 * process may call it (all usually do); -EINVAL unless 1 <= min <= max and preferred
 * is 0 or within them. */
int dt_set_limits(int min_nodes, int max_nodes, int preferred);
/* Inhibitors: look at offers at most once per `seconds` (an offer waits meanwhile, up
 * to ResizeTimeout; the leader also tells the scheduler, dt_set_offer_interval) /
 * probe only every n-th call of dt_reconfigure. */
int dt_set_sched_period(double seconds);
int dt_set_sched_iterations(long n);
/* *data: malloc'ed array of *count local elements of type (an array of extent-sized
 * elements); the library replaces both when the data moves. */
int dt_register(void **data, long *count, MPI_Datatype type, dt_dist_t dist, long block);
/* Called inside every adaptation window after the registered data moved. */
void dt_on_adapt(dt_adapt_fn *fn, void *arg);
/* Collective over dt_comm(). 1 when the job was resized (leaving processes do not
 * return), 0 when not, < 0 on error: -EINVAL on every process when the registered
 * data does not fit (the variables differ between processes, a count is not what its
 * distribution of the global count gives, a buffer is smaller than its count): the
 * offer is declined before anything starts, and rank 0 says which variable, rank and
 * count. */
int dt_reconfigure(void);

/* Checkpoints (docs/checkpointing.md): register the data once, commit it regularly,
 * and after a restart (on any number of processes) restore it. A version is whole or
 * absent: a run killed in the middle of a commit restarts from the one before.
 *
 *   dt_ckpt_init("jacobi", NULL, comm);          // collective from here on
 *   if (dt_ckpt_restart(&v) == 1) {             // a checkpoint exists
 *       dt_ckpt_count("grid", &n, NULL);        // this process's share now
 *       grid = malloc(n * sizeof(double));
 *       dt_ckpt_restore("grid", grid, n);
 *   }
 *   dt_ckpt_add("grid", grid, n, MPI_DOUBLE, DT_DIST_BLOCK, 0);
 *   for (...) { ...; if (it % 10 == 0) dt_ckpt_commit(); }
 *   dt_ckpt_finalize();
 *
 * Checkpoints go to dir/app (dir NULL: $DUCTILE_CKPT_DIR, else ~/.ductile/checkpoints),
 * which must be visible from every node (the home or the parallel file system); one
 * process per node writes that node's file. Replicated data is saved from rank 0. */
#define DT_CKPT_LABEL_MAX 64
int dt_ckpt_init(const char *app, const char *dir, MPI_Comm comm);
/* count local elements of type at data, distributed as dist (dt_register's meaning);
 * the same label again updates where the data is and its count. */
int dt_ckpt_add(const char *label, void *data, long count, MPI_Datatype type, dt_dist_t dist,
                long block);
/* Values that a restart or resize on another number of processes must not simply copy
 * back (seed 002's attributes of replicated data). count elements of type at data, the
 * same count on every process; what dt_ckpt_restore gives back:
 *   DT_VALUE_SIZE     the number of processes now (count 1, an integer type)
 *   DT_VALUE_RANK     this process's rank now (count 1, an integer type)
 *   DT_VALUE_DEFAULT  dflt (count elements), whatever was saved
 *   DT_VALUE_JOINING  a process that existed before keeps what it saved (each
 *                     process's own value is saved), a new one gets dflt: at a restart,
 *                     by rank; at dt_ckpt_redistribute, the process itself (its rank may
 *                     change)
 *   DT_VALUE_RECALC   rank 0's saved value, then fn(data, count, arg) recomputes it in
 *                     place for the new process count (it must be registered with fn
 *                     before it is restored: the function is not in the checkpoint)
 * fn returns 0, or a negative errno that dt_ckpt_restore returns. */
typedef enum dt_value {
    DT_VALUE_SIZE = 1,
    DT_VALUE_RANK = 2,
    DT_VALUE_DEFAULT = 3,
    DT_VALUE_JOINING = 4,
    DT_VALUE_RECALC = 5
} dt_value_t;
typedef int dt_ckpt_fn(void *data, long count, void *arg);
int dt_ckpt_add_value(const char *label, void *data, long count, MPI_Datatype type, dt_value_t how,
                      const void *dflt, dt_ckpt_fn *fn, void *arg);
/* Data distributed in a way of the application's own (seed 002's MANUAL): each process
 * saves its count elements (any count); at a restore the whole (every old rank's part in
 * rank order) goes to process root alone (dt_ckpt_count gives it the whole, the others
 * 0), and then every process calls fn(data, count, arg) (NULL: none) to spread it. Its
 * dt_ckpt_restore is collective. A restart that has not registered it uses the saved
 * root (0 if that process is gone) and calls no function. */
int dt_ckpt_add_manual(const char *label, void *data, long count, MPI_Datatype type, int root,
                       dt_ckpt_fn *fn, void *arg);
/* Collective: the registered data as the next version. -EINVAL on every process when
 * the registrations differ or a count is not its distribution's share. */
int dt_ckpt_commit(void);
/* The scheduler may change a job's agents (CheckpointMalleableAgents = MA-MA: with its
 * nodes at a resize; CheckpointLending: agents that had no room at its start).
 * Collective: takes the agents its node daemon names now, for the commits from here on (*changed 1 if they changed; NULL allowed). Rank 0 asks its
 * node daemon (through dt_attach's connection, or one of its own). dt_ckpt_commit
 * calls it first; a version on the agents it left is restored from the files. */
int dt_ckpt_probe(int *changed);
/* on (every process alike): dt_ckpt_commit copies the data and returns; a thread writes
 * it, and the next dt_ckpt_commit, dt_ckpt_wait, dt_ckpt_restart or dt_ckpt_finalize
 * publishes it (and returns its error, if any). The data may change meanwhile. */
int dt_ckpt_set_async(int on);
/* How commits and restarts move data to and from the checkpoint agents (every process
 * alike, after dt_ckpt_init; it lasts for the session; NULL keeps a setting): transfer
 * "push" (the processes write into the agents' memory and read it back, the default)
 * or "pull" (the agents read the processes' registered memory and write it back);
 * regions "mr" (a registered region and endpoint per process, the default) or "shmr"
 * (one shared-memory region and endpoint per node). Every mode makes the same
 * checkpoint. DUCTILE_CKPT_TRANSFER and DUCTILE_CKPT_REGIONS in rank 0's environment
 * set them at dt_ckpt_init. -EINVAL for another word. */
int dt_ckpt_set_transfer(const char *transfer, const char *regions);
/* Collective: the asynchronous commit under way is complete (0) or failed. */
int dt_ckpt_wait(void);
/* Collective: 1 and *version when a complete checkpoint exists, 0 when none. */
int dt_ckpt_restart(long *version);
/* This process's share of a restarted variable on the current process count, and the
 * whole; restore copies it into data (count must be that share). */
int dt_ckpt_count(const char *label, long *count, long *total);
int dt_ckpt_restore(const char *label, void *data, long count);
/* Collective: the end of checkpointing in this run. The agents keep the application's
 * last versions in memory for its next run; with dt_ckpt_finalize_release they drop
 * them once they are in the files (a next run restores from the files). */
int dt_ckpt_finalize(void);
int dt_ckpt_finalize_release(void);
/* A malleable job's resize through the checkpoint path (seed 002: iCheck as the data
 * redistribution service), instead of moving the data over MPI: called inside the
 * adaptation window (after dt_adapt_begin) by every process, with its intercomm and
 * new_comm and the app and dir given to dt_ckpt_init. The processes from before the
 * adaptation commit the data added with dt_ckpt_add as a version (blocking) through the
 * agents (the files when there are none), and end their checkpoint session; every
 * process of new_comm then starts a session on new_comm and restarts from that version:
 * it calls dt_ckpt_count and dt_ckpt_restore for its share now and dt_ckpt_add with its
 * new buffers, as after a restart (its commits are blocking until dt_ckpt_set_async
 * again). Returns 1 (and the version) on new_comm's
 * processes, 0 on leaving ones, < 0 on error (on every process of new_comm alike). */
int dt_ckpt_redistribute(const char *app, const char *dir, MPI_Comm intercomm, MPI_Comm new_comm,
                         long *version);
/* The message of the last checkpoint error on this process. */
const char *dt_ckpt_strerror(void);
#endif

#ifdef __cplusplus
}
#endif

#endif
