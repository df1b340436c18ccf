/* libductile's client of the checkpoint agents (dt_ckagent.c), used by dt_ckpt.c.
 * Functions marked rank 0 use the control connections, which only rank 0 holds; the
 * others are called by every process. Errors are negative errnos with a message in err. */
#ifndef DT_CKAGENT_H
#define DT_CKAGENT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "dt_internal.h"
#include "fabric.h"

#pragma GCC visibility push(hidden)

typedef struct ckag_addr {
    uint8_t blob[FAB_BLOB_MAX];
    size_t len;
} ckag_addr_t;

/* A node file's region on its agent, in a version. */
typedef struct ckag_region {
    uint8_t blob[FAB_BLOB_MAX];
    size_t len;
    long bytes;
    long version;
} ckag_region_t;

/* What this process's side of the transfers did (DUCTILE_CKPT_STATS, dt_ckxfer.c). */
typedef struct ckag_stats {
    long endpoints;   /* 1 while this process has a fabric endpoint */
    long regions;     /* its registered regions (staging, the node's shared region) */
    long proc_xfers;  /* RMA transfers it made (push) */
    long agent_xfers; /* transfers an agent made to or from its regions (pull) */
} ckag_stats_t;

/* How data moves (every process alike, before the transfers): pull makes the agents
 * read and write the processes' regions; staging is the size of each process's
 * registered staging region (0: the default, 4 MiB). */
void ckag_set_transfer(int pull, long staging);
long ckag_staging(void);
ckag_stats_t ckag_stats(void);
/* Collective on comm after a successful ckag_hello on rank 0: the others get the
 * service's key, for connections of their own to the agents (pull mode). */
void ckag_share_key(MPI_Comm comm);
/* Registers [buf, +len) on this process's endpoint (ckag_peers opened it). */
int ckag_register(void *buf, size_t len, fab_mr_t **out, char *err, size_t errlen);
void ckag_unregister(fab_mr_t *mr);
/* Moves [roff, +len) of node file `file`'s region from (FAB_PUSH) or to (FAB_PULL)
 * [loff, +len) of a registered local region, as the mode says: this process's RMA, or
 * its agent's. reg NULL: the region a restart read (ckag_set_regions). */
int ckag_move_local(long file, const ckag_region_t *reg, fab_dir_t dir, fab_mr_t *local,
                    size_t loff, long roff, long len, char *err, size_t errlen);

/* The agents of list (DUCTILE_CKPT_AGENTS as rank 0 has it: every process must have the
 * same) and, on the process that reads it, the key of DUCTILE_CKPT_KEY_FILE: the number
 * of agents (0: none, the file level only), or -EINVAL for a list that cannot be
 * parsed. app_dir (absolute) names the application to the agents, and is where they
 * flush its versions. */
int ckag_configure(const char *app_dir, const char *list, char *err, size_t errlen);
int ckag_count(void);
/* rank 0: every agent's fabric address (connecting where needed). */
int ckag_hello(ckag_addr_t *addrs, char *err, size_t errlen);
/* every process: its endpoint (with its staging region unless staging is 0), and a
 * peer for each agent's address; endpoint 0: none (SHMR: only the node's lead has one). */
int ckag_peers(const ckag_addr_t *addrs, int endpoint, int staging, char *err, size_t errlen);
/* rank 0: the region of node file `file` of a version being written. */
int ckag_put(long version, long file, long bytes, ckag_region_t *out, char *err, size_t errlen);
/* Copies window [w, w + wlen) of the pieces bufs[0, n) laid back to back into dst. */
void ckag_pack(char *dst, long w, long wlen, char *const *bufs, const long *lens, int n);
/* every process: its pieces, back to back from offset off of its node file's region. */
int ckag_push(long file, const ckag_region_t *reg, long off, char *const *bufs, const long *lens,
              int n, char *err, size_t errlen);
/* rank 0: the version complete on every agent that holds a file of it. */
int ckag_publish(long version, long nfiles, json_t *manifest, char *err, size_t errlen);
/* rank 0: the newest version every agent concerned holds, 0 if none; its manifest (to
 * free) and every node file's region (both optional: NULL asks for the version only). */
int ckag_latest(long *version, char **manifest, long *nfiles, ckag_region_t **regions, char *err,
                size_t errlen);
/* every process: the regions reads use (taken over; NULL forgets them). */
void ckag_set_regions(long nfiles, ckag_region_t *regions);
int ckag_has_regions(void);
int ckag_read(long file, void *buf, long len, long off, char *err, size_t errlen);
/* rank 0: tells the agents this run's transfers are over (they stop polling for them). */
void ckag_done(void);
void ckag_disconnect(void);
/* rank 0: the agents may drop this application's versions once they are in the files. */
void ckag_release(void);
/* The end of a session whose process starts the next at once (a resize): its endpoint,
 * peers and connections stay for a ckag_configure with the same agents and directory,
 * which reuses them (any other configure, or ckag_shutdown, closes them). */
void ckag_suspend(void);
void ckag_shutdown(void);

#pragma GCC visibility pop

#endif
