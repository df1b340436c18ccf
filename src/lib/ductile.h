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
 * documented) or a negative errno; dt_strerror gives the message of the last error. */
#ifndef DUCTILE_H
#define DUCTILE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dt_op { DT_EXPAND = 1, DT_SHRINK = 2, DT_WITHDRAWN = 3 } dt_op_t;

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
void dt_detach(void);
const char *dt_strerror(void);

#ifdef __cplusplus
}
#endif

#endif
