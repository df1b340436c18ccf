/* Shared inside libductile, not part of its API. */
#ifndef DT_INTERNAL_H
#define DT_INTERNAL_H

#include <mpi.h>

#include "ductile.h"

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
/* The leader looks at offers at its next probes (1) or leaves them waiting (0). */
void dt_mpi_set_poll(int on);

/* dt_dmr.c: does an offer respect the limits of dt_set_limits? */
int dt_dmr_offer_ok(const dt_offer_t *o);

#endif
