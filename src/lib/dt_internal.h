/* Shared inside libductile, not part of its API. */
#ifndef DT_INTERNAL_H
#define DT_INTERNAL_H

/* dt_pmpi.c: the wall time since the last call, and in *mpi the part of it spent
 * inside MPI communication; starts the next window. */
double dt_pmpi_window(double *mpi);

#endif
