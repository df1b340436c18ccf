/* The checkpoint service's data path (seed 002, iCheck): one-sided RMA between an
 * application's processes and the checkpoint agents over libfabric, so the same code
 * runs over TCP (tcp;ofi_rxm), InfiniBand (verbs;ofi_rxm) or Slingshot (cxi).
 *
 * The module carries no control channel of its own: each side exports opaque blobs
 * (fab_addr_blob for its endpoint, fab_mr_blob for a registered region), sends them over
 * whatever channel it already has, and the other side imports them (fab_peer_add,
 * fab_rmr_import). Transfers are initiated by one side only; the other side must call
 * fab_progress while it expects to be written to or read from, because tcp;ofi_rxm and
 * verbs;ofi_rxm move data only when the target's endpoint is progressed.
 *
 * Every function that can fail returns 0 or a negative errno and, when err is not NULL,
 * writes a message into err[errlen]. A transfer that does not complete within the
 * timeout (fab_set_timeout) returns -ETIMEDOUT; one the provider fails returns -EIO.
 * tcp;ofi_rxm (libfabric 1.17) does not fail the operations of a peer that died: they
 * end in -ETIMEDOUT, and the peer is then abandoned (later transfers to it return
 * -ENOTCONN; add it again from a new blob if it comes back). After either error the
 * peer's region may be partly written and the operation may still hold the local
 * region (close the fab_t before freeing it). A fab_t is used by one thread at a time. */
#ifndef DUCTILE_CKPT_FABRIC_H
#define DUCTILE_CKPT_FABRIC_H

#include <stddef.h>
#include <stdint.h>

typedef struct fab fab_t;           /* an endpoint on one provider */
typedef struct fab_mr fab_mr_t;     /* a local registered region */
typedef struct fab_rmr fab_rmr_t;   /* a peer's registered region, imported from its blob */
typedef struct fab_peer fab_peer_t; /* a peer's endpoint, owned by its fab_t */

/* Large enough for any blob either export function writes. */
#define FAB_BLOB_MAX 256

/* Default transfer timeout; a vanished peer costs at most this long. */
#define FAB_TIMEOUT_MS_DEFAULT 10000

typedef enum fab_dir { FAB_PUSH, FAB_PULL } fab_dir_t;

/* Opens an RDM endpoint. provider NULL tries "tcp;ofi_rxm", then "tcp", then "sockets"
 * (fab_provider_name says which one answered). node is the local address to bind, or an
 * interface name whose IPv4 address is used; NULL means 127.0.0.1. */
int fab_open(const char *provider, const char *node, fab_t **out, char *err, size_t errlen);
void fab_close(fab_t *fab);
const char *fab_provider_name(const fab_t *fab);
void fab_set_timeout(fab_t *fab, int timeout_ms);
/* RMA operations posted so far (a large transfer may be posted as several). */
uint64_t fab_ops(const fab_t *fab);
/* Lets the provider move data for transfers that target this endpoint; returns 0. */
int fab_progress(fab_t *fab);

/* What a peer holding a region's blob may do to it. The endpoint accepts RMA from any
 * process that reaches its port (tcp;ofi_rxm authenticates nobody), so a region is
 * protected only by its key: unguessable (64 random bits, or the provider's own where it
 * chooses them, FI_MR_PROV_KEY), given by its blob only to the peer that needs it, for
 * the operation it needs, and closed (revoked) when that transfer is over. FAB_LOCAL: the
 * buffer of this side's own transfers only; it has no blob. */
enum { FAB_LOCAL = 0, FAB_REMOTE_READ = 1, FAB_REMOTE_WRITE = 2 };

/* buf must stay valid and be backed by real pages (FI_MR_ALLOCATED) until closed.
 * access: FAB_LOCAL, or FAB_REMOTE_READ and/or FAB_REMOTE_WRITE. */
int fab_mr_reg(fab_t *fab, void *buf, size_t len, int access, fab_mr_t **out, char *err,
               size_t errlen);
void fab_mr_close(fab_mr_t *mr);
void *fab_mr_buf(const fab_mr_t *mr);
size_t fab_mr_len(const fab_mr_t *mr);

/* Blobs: *len is the buffer's size on entry and the blob's on return. A region's blob
 * holds its key: send it over an authenticated channel to the peer it is meant for;
 * -EPERM for a FAB_LOCAL region. */
int fab_addr_blob(fab_t *fab, void *out, size_t *len, char *err, size_t errlen);
int fab_mr_blob(const fab_mr_t *mr, void *out, size_t *len, char *err, size_t errlen);
int fab_peer_add(fab_t *fab, const void *blob, size_t len, fab_peer_t **out, char *err,
                 size_t errlen);
/* Forgets a peer (its address leaves the AV): for a peer that closed its side; no
 * transfer to it may be under way. */
void fab_peer_remove(fab_t *fab, fab_peer_t *peer);
int fab_rmr_import(const void *blob, size_t len, fab_rmr_t **out, char *err, size_t errlen);
void fab_rmr_free(fab_rmr_t *rmr);
size_t fab_rmr_len(const fab_rmr_t *rmr);

/* Blocking one-sided transfers between [loff, loff + len) of a local region and
 * [roff, roff + len) of a peer's. */
int fab_write(fab_t *fab, fab_peer_t *peer, fab_mr_t *local, size_t loff,
              const fab_rmr_t *remote, size_t roff, size_t len, char *err, size_t errlen);
int fab_read(fab_t *fab, fab_peer_t *peer, fab_mr_t *local, size_t loff,
             const fab_rmr_t *remote, size_t roff, size_t len, char *err, size_t errlen);

/* Moves len bytes between unregistered memory and a peer's region through a registered
 * staging region, one transfer per staging-sized chunk (ceil(len / staging size)); the
 * number of transfers is stored in *transfers when not NULL. */
int fab_copy_pipelined(fab_t *fab, fab_peer_t *peer, fab_dir_t dir, void *data, size_t len,
                       fab_mr_t *staging, const fab_rmr_t *remote, size_t roff,
                       size_t *transfers, char *err, size_t errlen);

#endif
