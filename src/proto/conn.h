/* conn: one protocol connection on a libuv event loop (controller and node daemons).
 *
 * It frames and authenticates messages (proto.h), queues writes, and reports each
 * whole message to its owner. Malformed input closes only that connection: the daemon
 * keeps serving everyone else. */
#ifndef DUCTILE_CONN_H
#define DUCTILE_CONN_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>
#include <uv.h>

#include "proto.h"

typedef struct conn conn_t;

typedef struct conn_ops {
    /* A whole, authenticated message; it is released after the call (json_incref to keep). */
    void (*on_message)(conn_t *c, json_t *msg, void *arg);
    /* The connection is gone (peer closed, error, or conn_close); c is freed after this. */
    void (*on_close)(conn_t *c, void *arg);
} conn_ops_t;

typedef struct conn_cfg {
    proto_auth_t auth;
    const uint8_t *key;        /* AuthType=key */
    const char *munge_socket;  /* AuthType=munge: munged's socket, NULL for the default */
    size_t max_payload;        /* 0: PROTO_MAX_PAYLOAD */
    size_t max_queued;         /* bytes of unsent output before the peer is dropped; 0: 64 MiB */
} conn_cfg_t;

/* Accept a connection on a listening stream (pipe or TCP). The server side sends the
 * hello at once on TCP; on a Unix socket the peer's uid comes from SO_PEERCRED. */
conn_t *conn_accept(uv_stream_t *server, const conn_cfg_t *cfg, const conn_ops_t *ops, void *arg);
/* Connect to host:port over TCP as a client; messages sent before the hello arrives
 * are queued. Failure to connect is reported through on_close. */
conn_t *conn_connect_tcp(uv_loop_t *loop, const char *host, int port, const conn_cfg_t *cfg,
                         const conn_ops_t *ops, void *arg);
/* Connect to a Unix socket as a client (no authentication beyond the kernel's). */
conn_t *conn_connect_unix(uv_loop_t *loop, const char *path, const conn_cfg_t *cfg,
                          const conn_ops_t *ops, void *arg);

int conn_send(conn_t *c, const json_t *msg);
/* Send msg, then release it (for json_pack results). */
int conn_send_new(conn_t *c, json_t *msg);
void conn_close(conn_t *c);

/* Who is on the other end: the kernel's word on a Unix socket, MUNGE's on TCP with
 * AuthType=munge; with AuthType=key the peer holds the cluster key (uid 0). */
bool conn_authenticated(const conn_t *c);
uid_t conn_uid(const conn_t *c);
gid_t conn_gid(const conn_t *c);
bool conn_is_local(const conn_t *c);
void *conn_data(const conn_t *c);
void conn_set_data(conn_t *c, void *data);
const char *conn_peer(const conn_t *c); /* "unix:uid=1000" or "10.0.0.2:40312" */

#endif
