/* conn: one protocol connection on a libuv event loop (controller and node daemons).
 *
 * It frames and authenticates messages (proto.h), queues writes, and reports each
 * whole message to its owner. Malformed input closes only that connection: the daemon
 * keeps serving everyone else. */
#ifndef DUCTILE_CONN_H
#define DUCTILE_CONN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "proto.h"

typedef struct conn conn_t;
typedef struct conn_guard conn_guard_t;

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
    /* Accepted TCP connections: the largest frame taken before the peer has proved who
     * it is (the first frame with a valid MAC, or its MUNGE credential); a larger
     * announced length closes the connection at the header, before any of the payload
     * is buffered. 0: CONN_PREAUTH_MAX_PAYLOAD. */
    size_t preauth_max_payload;
    conn_guard_t *guard;       /* accepted connections: admission and timeouts, or NULL */
} conn_cfg_t;

/* What an unauthenticated peer may send in its first frame: a MUNGE credential (at most
 * 4 KiB), an "auth" frame or a small request. */
#define CONN_PREAUTH_MAX_PAYLOAD 8192u

/* --- admission control and timeouts for a server's accepted connections ---
 *
 * One guard is shared by all the listeners of a daemon (docs/reliability-dos.md). A peer
 * is counted per uid once known (the kernel's word on a Unix socket, MUNGE's on TCP; a
 * holder of the cluster key is uid 0) and per remote address until then. The last
 * `reserve` connections are kept for privileged peers: a local ordinary user is refused
 * them at once; an unauthenticated TCP peer may take one (half of them at most, so that
 * a flood cannot fill them) but is closed if it turns out to be an ordinary user. A refused peer gets {"ok": false, "code":
 * "too_many_connections", "error": ...} and the connection is closed. */
typedef struct conn_limits {
    int max_conns;        /* all guarded connections at most; 0: no limit */
    int reserve;          /* of max_conns, kept for privileged peers */
    int per_user;         /* connections per uid, privileged peers exempt; 0: no limit */
    int per_host;         /* unauthenticated TCP connections per remote address; 0: no limit */
    int max_unauth;       /* unauthenticated TCP connections in all; 0: no limit (at most
                           * half of the reserve is ever theirs) */
    double auth_timeout;  /* seconds a TCP peer has to authenticate; 0: no limit */
    double frame_timeout; /* seconds a half-received frame may wait for its next byte; 0: none */
    double idle_timeout;  /* seconds a client connection may send nothing; 0: never */
    /* Root and operators (a holder of the cluster key is uid 0): exempt from per_user,
     * allowed in the reserve. Called only when a limit is reached (it may look the user
     * up); NULL: nobody is privileged. */
    bool (*privileged)(uid_t uid, void *arg);
    void *arg;
    /* Who refuses, in the refusals' words ("the controller", "this node's daemon"): the
     * user may be talking to either. NULL: "the controller". */
    const char *server;
} conn_limits_t;

/* The guard's timer runs on loop; the guard lives as long as the daemon (it is not
 * freed: its connections point to it until their handles close). NULL on ENOMEM. */
conn_guard_t *conn_guard_create(uv_loop_t *loop, const conn_limits_t *lim);
/* Frees a guard whose connections have all closed and whose loop has closed its timer. */
void conn_guard_destroy(conn_guard_t *g);
/* Connections currently counted by the guard (not those being refused). */
int conn_guard_count(const conn_guard_t *g);
/* A long-lived, authenticated peer that heartbeats (a node daemon): exempt from the idle
 * and frame timeouts from now on. */
void conn_set_persistent(conn_t *c);

/* Accept a connection on a listening stream (pipe or TCP). The server side sends the
 * hello at once on TCP; on a Unix socket the peer's uid comes from SO_PEERCRED. */
conn_t *conn_accept(uv_stream_t *server, const conn_cfg_t *cfg, const conn_ops_t *ops, void *arg);
/* Connect to host:port over TCP as a client; messages sent before the hello arrives
 * are queued. Failure to connect is reported through on_close; NULL (not an address,
 * or connect() refused it at once) means nothing was made and no on_close comes. */
conn_t *conn_connect_tcp(uv_loop_t *loop, const char *host, int port, const conn_cfg_t *cfg,
                         const conn_ops_t *ops, void *arg);
/* Connect to a Unix socket as a client (no authentication beyond the kernel's). */
conn_t *conn_connect_unix(uv_loop_t *loop, const char *path, const conn_cfg_t *cfg,
                          const conn_ops_t *ops, void *arg);

int conn_send(conn_t *c, const json_t *msg);
/* Send msg, then release it (for json_pack results). */
int conn_send_new(conn_t *c, json_t *msg);
void conn_close(conn_t *c);
/* Close once what is queued has been written (a reply, then the end). */
void conn_close_flushed(conn_t *c);

/* --- channels: a connection carried inside another ---
 *
 * A node daemon relays the requests of its jobs' processes to the controller on its own
 * authenticated connection (docs/architecture.md, "Job-side traffic"). Each local client
 * is a channel of that connection: the controller sees it as a connection of its own, of
 * the user the node daemon vouches for (the kernel told it, SO_PEERCRED), and serves it
 * with the code that serves every client. On the wire, both ways:
 *   {"type": "relay", "chan": N, "msg": {...}}   a message of channel N
 *   {"type": "relay_close", "chan": N}           channel N is closed
 * conn_send on a channel wraps the message and sends it on the carrier; conn_close sends
 * relay_close (unless the far end closed it); closing the carrier closes its channels. */
conn_t *conn_open_channel(conn_t *carrier, int64_t chan, uid_t uid, gid_t gid,
                          const conn_ops_t *ops, void *arg);
conn_t *conn_channel_find(const conn_t *carrier, int64_t chan);
/* A message that arrived for the channel: handed to its on_message. */
void conn_channel_deliver(conn_t *ch, json_t *msg);
/* The connection a channel travels on; NULL for any other connection. */
conn_t *conn_carrier(const conn_t *c);
int64_t conn_channel_id(const conn_t *c); /* its number on the carrier; 0: not a channel */
/* The far end closed the channel (relay_close): close it without answering. */
void conn_channel_ended(conn_t *ch);

/* Who is on the other end: the kernel's word on a Unix socket, MUNGE's on TCP with
 * AuthType=munge; with AuthType=key the peer holds the cluster key (uid 0). */
bool conn_authenticated(const conn_t *c);
uid_t conn_uid(const conn_t *c);
gid_t conn_gid(const conn_t *c);
pid_t conn_pid(const conn_t *c); /* accepted Unix socket: the peer's pid; else 0 */
/* A client connection that could not be made: why (UV_ECONNREFUSED...); else 0. */
int conn_error(const conn_t *c);
bool conn_is_local(const conn_t *c);
/* A closed connection: it ended with its link (a reset or an error on the socket, or
 * the connection it travelled on as a channel went), not by its peer closing it (an
 * end of stream, relay_close). A client whose link went may come back. */
bool conn_link_lost(const conn_t *c);
/* A TCP connection's peer host: the seconds since its kernel last acknowledged anything
 * we sent (TCP_INFO), or -1 (not TCP, not established, or the kernel cannot say). A
 * peer process that does not answer while its host acknowledges is slow, not cut off. */
double conn_peer_ack_age(const conn_t *c);
void *conn_data(const conn_t *c);
void conn_set_data(conn_t *c, void *data);
const char *conn_peer(const conn_t *c); /* "unix:uid=1000" or "10.0.0.2:40312" */

#endif
