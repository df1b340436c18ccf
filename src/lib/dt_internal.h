/* Shared inside libductile, not part of its API. */
#ifndef DT_INTERNAL_H
#define DT_INTERNAL_H

#include <mpi.h>

#include "ductile.h"

/* Not part of the API: kept out of libductile's exported symbols (its version script
 * exports dt_*). */
#pragma GCC visibility push(hidden)

/* dt_pmpi.c: the wall time since the last call, and in *mpi the part of it spent
 * inside MPI communication; starts the next window. */
double dt_pmpi_window(double *mpi);

/* dt_mpi.c: the adaptation window as data movers see it. `cover` holds every process
 * that has data before or after (the new communicator for an expand, the old one for
 * a shrink); old_of / new_of give each cover rank's rank before / after, or -1. */
typedef struct dt_window {
    MPI_Comm cover, next;
    int role, cover_rank, cover_size, old_size, new_size;
    int *old_of, *new_of;
} dt_window_t;
int dt_mpi_window(dt_window_t *w);
void dt_mpi_window_free(dt_window_t *w);
/* dt_redistribute_block without naming the phase (the caller did). */
int dt_mpi_redistribute(const void *old_buf, void *new_buf, long total, int elem_size);
/* The leader looks at offers at its next probes (1) or leaves them waiting (0). */
void dt_mpi_set_poll(int on);
/* dt_probe_adapt, for the libductile call `api` (named by DUCTILE_DEBUG's reports). */
int dt_mpi_probe(int *pending, int *role, const char *api);
/* What this process does inside the adaptation window, for the watchdog's message. */
void dt_mpi_phase(const char *what);
/* 1 on a process that joined with an expansion, until its dt_adapt_commit. */
int dt_mpi_joining(void);
/* 1 once dt_init_adapt has begun. */
int dt_mpi_started(void);
/* dt_core.c: the job's checkpoint agents as its node daemon last heard from the
 * controller, into list (asked over dt_attach's connection, or a member connection of
 * its own): 1; 0 when the daemon does not know; < 0 when it cannot be asked. t_sync
 * (>= 0; < 0: none) goes with it: seconds the last commit took to reach the agents. */
int dt_agents_query(char *list, size_t len, double t_sync);
/* 1 on the leader once attached to its node daemon (it talks to the controller). */
int dt_mpi_leader_attached(void);
/* After dt_probe_adapt said pending, before dt_adapt_begin: the leader declines the
 * offer, and every process forgets it (collective in effect: every process calls it). */
void dt_mpi_decline_pending(void);

/* dt_mpi.c: seconds on the monotonic clock; a short sleep for polling loops */
double dt_mono(void);
void dt_nap(void);

/* dt_debug.c: DUCTILE_DEBUG. init reads the environment; reset makes a twin of comm
 * (collective over it; nothing when off); sync is the check at the top of the
 * collective libductile call `api`; free drops the twin. */
void dt_debug_init(void);
void dt_debug_reset(MPI_Comm comm);
void dt_debug_sync(const char *api, const char *node);
void dt_debug_free(void);

/* dt_dmr.c: the extent of an element of t; the elements of the blocks of b that
 * block-cyclic deals to rank r of n (total elements). */
MPI_Aint dt_extent(MPI_Datatype t);
long dt_cyclic_count(long total, long b, int r, int n);

/* dt_dmr.c: does an offer respect the limits of dt_set_limits? */
int dt_dmr_offer_ok(const dt_offer_t *o);
/* The leader declined an offer outside the limits (it tells the scheduler again). */
void dt_dmr_declined_outside(void);

#pragma GCC visibility pop

#endif
