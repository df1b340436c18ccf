/* Node daemons talk to each other for one thing: the output of `ductile run`. A step's
 * tasks send their output straight to the daemon of the node where the step's client
 * runs (its "home", named in step_start), which hands it to the client; the controller
 * sees only the step's start, its credits and its tasks' ends (docs/architecture.md,
 * "Step output"). Both ends authenticate as the controller's connections do: with the
 * cluster key, or as root through MUNGE.
 *
 * Outbound connections are kept, one per home address, and reused by every task that
 * sends there; a task knows its connection by number, so that a closed one is simply
 * not found again. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "noded.h"

struct peer {
    int64_t id;
    char addr[64];
    int port;
    conn_t *c;
    struct peer *next;
};

static conn_cfg_t peer_cfg(noded_t *d)
{
    return (conn_cfg_t){
        .auth = d->cfg.auth_type == CONFIG_AUTH_MUNGE ? PROTO_AUTH_MUNGE : PROTO_AUTH_KEY,
        .key = d->key,
        .munge_socket = d->cfg.munge_socket,
        .max_payload = 1u << 20,
    };
}

/* --- inbound: output for our relayed clients --- */

static void in_message(conn_t *c, json_t *msg, void *arg)
{
    noded_t *d = arg;
    const char *type = json_string_value(json_object_get(msg, "type"));
    if (conn_is_local(c) || conn_uid(c) != 0 || !type) {
        conn_close(c); /* only node daemons send here */
        return;
    }
    if (!strcmp(type, "step_output") || !strcmp(type, "step_eof"))
        apps_on_step_io(d, msg);
}

static void in_close(conn_t *c, void *arg)
{
    (void)c;
    (void)arg;
}

static const conn_ops_t in_ops = {.on_message = in_message, .on_close = in_close};

static void on_peer_connection(uv_stream_t *server, int status)
{
    noded_t *d = server->data;
    if (status < 0)
        return;
    conn_cfg_t cc = peer_cfg(d);
    conn_accept(server, &cc, &in_ops, d);
}

int peers_init(noded_t *d, char *err, size_t errlen)
{
    struct sockaddr_in sa;
    uv_ip4_addr("0.0.0.0", d->cfg.node_port, &sa);
    uv_tcp_init(d->loop, &d->peers_listen);
    d->peers_listen.data = d;
    int rc = uv_tcp_bind(&d->peers_listen, (struct sockaddr *)&sa, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&d->peers_listen, 128, on_peer_connection);
    if (rc < 0) {
        snprintf(err, errlen, "cannot listen on port %d for other nodes: %s", d->cfg.node_port,
                 uv_strerror(rc));
        return rc;
    }
    struct sockaddr_storage got;
    int len = sizeof(got);
    if (uv_tcp_getsockname(&d->peers_listen, (struct sockaddr *)&got, &len) == 0)
        d->step_port = ntohs(((struct sockaddr_in *)&got)->sin_port);
    return 0;
}

/* --- outbound: our tasks' output for other nodes' clients --- */

static void out_message(conn_t *c, json_t *msg, void *arg)
{
    (void)c;
    (void)msg;
    (void)arg; /* the home answers nothing; credits come from the controller */
}

static void out_close(conn_t *c, void *arg)
{
    noded_t *d = arg;
    for (struct peer **pp = &d->peers; *pp; pp = &(*pp)->next)
        if ((*pp)->c == c) {
            struct peer *p = *pp;
            *pp = p->next;
            free(p);
            return;
        }
}

static const conn_ops_t out_ops = {.on_message = out_message, .on_close = out_close};

int64_t peers_get(noded_t *d, const char *addr, int port)
{
    for (struct peer *p = d->peers; p; p = p->next)
        if (p->port == port && !strcmp(p->addr, addr))
            return p->id;
    struct peer *p = calloc(1, sizeof(*p));
    if (!p)
        return 0;
    conn_cfg_t cc = peer_cfg(d);
    p->c = conn_connect_tcp(d->loop, addr, port, &cc, &out_ops, d);
    if (!p->c) {
        free(p);
        return 0;
    }
    p->id = ++d->next_peer;
    snprintf(p->addr, sizeof(p->addr), "%s", addr);
    p->port = port;
    p->next = d->peers;
    d->peers = p;
    return p->id;
}

conn_t *peers_find(noded_t *d, int64_t id)
{
    for (struct peer *p = d->peers; p; p = p->next)
        if (p->id == id)
            return p->c;
    return NULL;
}
