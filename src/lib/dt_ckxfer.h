/* How a checkpoint's data moves between the processes and the agents (dt_ckxfer.c,
 * docs/checkpointing.md "Transfer modes"), used by dt_ckpt.c: the direction (push: the
 * processes' RMA; pull: the agents') and the regions (MR: a registered region and an
 * endpoint per process; SHMR: one shared-memory region per node, whose lead alone
 * talks to the agents). Errors are negative errnos with a message in err. */
#ifndef DT_CKXFER_H
#define DT_CKXFER_H

#include <stddef.h>

#include "dt_ckagent.h"
#include "dt_internal.h"

#pragma GCC visibility push(hidden)

/* Collective on comm: rank 0's DUCTILE_CKPT_TRANSFER, DUCTILE_CKPT_REGIONS and
 * DUCTILE_CKPT_STAGING (unset: push, mr, 4 MiB) for every process; -EINVAL with the
 * message on rank 0 for a value that is none of the words. */
int ckx_init(MPI_Comm comm, int rank, char *err, size_t errlen);
/* The same from words (NULL keeps the setting); every process alike. */
int ckx_set(const char *transfer, const char *regions, char *err, size_t errlen);
int ckx_pull(void);
int ckx_shmr(void);

/* SHMR, collective on the node's communicator. The node's region is made on first use
 * (the lead registers it on its endpoint) and lasts until ckx_shm_close. */
int ckx_shm_open(MPI_Comm node, int node_rank, char *err, size_t errlen);
void ckx_shm_close(void);
/* A commit: every process's pieces, back to back from offset off of the node's file
 * (node_bytes in all), go through the node's region one region-sized window at a time;
 * the lead moves each window to the agent's region (reg). Every process of the node
 * gets the same status. */
int ckx_shm_commit(MPI_Comm node, int node_rank, long file, const ckag_region_t *reg, long off,
                   char *const *bufs, const long *lens, int n, long node_bytes, char *err,
                   size_t errlen);

/* SHMR restores: a first pass records the reads a restore needs (ckx_record), the
 * node's processes then bring them all through the node's region (ckx_fetch,
 * collective on the node), and a second pass takes them in the same order
 * (ckx_replay). */
enum { CKX_DIRECT, CKX_RECORD, CKX_REPLAY };
int ckx_phase(void);
void ckx_record_begin(void);
int ckx_record(long file, long off, long len);
int ckx_fetch(MPI_Comm node, int node_rank, char *err, size_t errlen);
/* 0: buf[0, len) is the next recorded read's data; < 0: the fetch failed (read the
 * files instead). */
int ckx_replay(void *buf, long len);
void ckx_restore_end(void);

/* Collective on comm: with DUCTILE_CKPT_STATS set, rank 0 says what the session's
 * transfers used (endpoints, regions, transfers by the processes and by the agents). */
void ckx_report(MPI_Comm comm, int rank);

#pragma GCC visibility pop

#endif
