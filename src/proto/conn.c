#define _GNU_SOURCE /* struct ucred */
#include "conn.h"

#include <errno.h>
#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct conn {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    uv_connect_t connect_req;
    proto_session_t ss;
    proto_decoder_t dec;
    conn_ops_t ops;
    void *arg;
    void *data;
    conn_cfg_t cfg;
    char *munge_socket;
    uid_t uid;
    gid_t gid;
    bool authed;    /* the peer is known */
    bool local;
    bool closing;
    bool sent_auth; /* client: MUNGE credential sent */
    size_t queued;  /* bytes handed to libuv, not yet written */
    json_t *backlog; /* client: messages waiting for the hello */
    char peer[64];
};

typedef struct wreq {
    uv_write_t req;
    conn_t *c;
    uint8_t *frame;
    size_t len;
} wreq_t;

static void on_closed(uv_handle_t *h)
{
    conn_t *c = h->data;
    if (c->ops.on_close)
        c->ops.on_close(c, c->arg);
    proto_decoder_free(&c->dec);
    json_decref(c->backlog);
    free(c->munge_socket);
    free(c);
}

void conn_close(conn_t *c)
{
    if (!c || c->closing)
        return;
    c->closing = true;
    uv_close(&c->h.handle, on_closed);
}

static void on_written(uv_write_t *req, int status)
{
    wreq_t *w = (wreq_t *)req;
    w->c->queued -= w->len;
    free(w->frame);
    if (status < 0)
        conn_close(w->c);
    free(w);
}

static int write_frame(conn_t *c, uint8_t *frame, size_t len)
{
    if (c->queued + len > c->cfg.max_queued) {
        free(frame);
        conn_close(c); /* a peer that does not read cannot make us buffer forever */
        return -ENOBUFS;
    }
    wreq_t *w = malloc(sizeof(*w));
    if (!w) {
        free(frame);
        return -ENOMEM;
    }
    w->c = c;
    w->frame = frame;
    w->len = len;
    uv_buf_t buf = uv_buf_init((char *)frame, (unsigned)len);
    int rc = uv_write(&w->req, &c->h.stream, &buf, 1, on_written);
    if (rc < 0) {
        free(frame);
        free(w);
        conn_close(c);
        return rc;
    }
    c->queued += len;
    return 0;
}

static int send_now(conn_t *c, const json_t *msg)
{
    uint8_t *frame;
    size_t len;
    int rc = proto_encode(&c->ss, msg, &frame, &len);
    if (rc < 0)
        return rc;
    return write_frame(c, frame, len);
}

int conn_send(conn_t *c, const json_t *msg)
{
    if (!c || c->closing)
        return -EPIPE;
    bool waiting = c->ss.role == PROTO_ROLE_CLIENT && c->ss.auth != PROTO_AUTH_NONE &&
                   (!c->ss.have_nonce || (c->ss.auth == PROTO_AUTH_MUNGE && !c->sent_auth));
    if (waiting)
        return json_array_append(c->backlog, (json_t *)msg) == 0 ? 0 : -ENOMEM;
    return send_now(c, msg);
}

int conn_send_new(conn_t *c, json_t *msg)
{
    if (!msg)
        return -ENOMEM;
    int rc = conn_send(c, msg);
    json_decref(msg);
    return rc;
}

/* --- MUNGE --- */

static munge_ctx_t munge_ctx(const conn_t *c)
{
    munge_ctx_t ctx = munge_ctx_create();
    if (ctx && c->munge_socket)
        munge_ctx_set(ctx, MUNGE_OPT_SOCKET, c->munge_socket);
    return ctx;
}

static void nonce_hex(const conn_t *c, char *hex)
{
    for (int i = 0; i < PROTO_NONCE_LEN; i++)
        sprintf(hex + 2 * i, "%02x", c->ss.nonce[i]);
}

/* Client: a credential over the connection's nonce proves who we are. */
static int send_munge_auth(conn_t *c)
{
    char hex[2 * PROTO_NONCE_LEN + 1];
    nonce_hex(c, hex);
    munge_ctx_t ctx = munge_ctx(c);
    char *cred = NULL;
    munge_err_t e = ctx ? munge_encode(&cred, ctx, hex, (int)strlen(hex)) : EMUNGE_NO_MEMORY;
    munge_ctx_destroy(ctx);
    if (e != EMUNGE_SUCCESS) {
        fprintf(stderr, "ductile: munge: %s\n", munge_strerror(e));
        return -EACCES;
    }
    json_t *m = json_pack("{s:s,s:s}", "type", "auth", "cred", cred);
    free(cred);
    int rc = send_now(c, m);
    json_decref(m);
    c->sent_auth = true;
    return rc;
}

/* Server: check the first message's credential. */
static int check_munge_auth(conn_t *c, const json_t *msg)
{
    const char *type, *cred;
    char err[128];
    if (proto_type(msg, &type, err, sizeof(err)) < 0 || strcmp(type, "auth") ||
        proto_str(msg, "cred", 4096, &cred, err, sizeof(err)) < 0)
        return -EACCES;
    munge_ctx_t ctx = munge_ctx(c);
    void *buf = NULL;
    int len = 0;
    uid_t uid;
    gid_t gid;
    munge_err_t e = ctx ? munge_decode(cred, ctx, &buf, &len, &uid, &gid) : EMUNGE_NO_MEMORY;
    munge_ctx_destroy(ctx);
    char hex[2 * PROTO_NONCE_LEN + 1];
    nonce_hex(c, hex);
    bool ok = e == EMUNGE_SUCCESS && len == (int)strlen(hex) && !memcmp(buf, hex, (size_t)len);
    free(buf);
    if (!ok)
        return -EACCES;
    c->uid = uid;
    c->gid = gid;
    c->authed = true;
    return 0;
}

/* --- reading --- */

static void flush_backlog(conn_t *c)
{
    size_t i;
    json_t *m;
    json_array_foreach(c->backlog, i, m) send_now(c, m);
    json_array_clear(c->backlog);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    (void)suggested;
    buf->base = malloc(65536);
    buf->len = buf->base ? 65536 : 0;
}

static void read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    conn_t *c = s->data;
    if (n < 0) {
        free(buf->base);
        conn_close(c);
        return;
    }
    if (n == 0 || c->closing) {
        free(buf->base);
        return;
    }
    int rc = proto_decoder_feed(&c->dec, buf->base, (size_t)n);
    free(buf->base);
    if (rc < 0) {
        conn_close(c);
        return;
    }
    for (;;) {
        json_t *msg;
        char err[256];
        bool had_nonce = c->ss.have_nonce;
        rc = proto_decoder_next(&c->dec, &c->ss, &msg, err, sizeof(err));
        if (c->ss.role == PROTO_ROLE_CLIENT && !had_nonce && c->ss.have_nonce) {
            /* The hello arrived: authenticate, then send what was waiting. */
            if (c->ss.auth == PROTO_AUTH_MUNGE && send_munge_auth(c) < 0) {
                json_decref(msg);
                conn_close(c);
                return;
            }
            c->authed = true; /* the server proved the key (or MUNGE vouches for us) */
            flush_backlog(c);
        }
        if (rc < 0) {
            fprintf(stderr, "dropping connection from %s: %s\n", c->peer, err);
            conn_close(c);
            return;
        }
        if (rc == 0)
            return;
        if (c->ss.role == PROTO_ROLE_SERVER && !c->authed) {
            /* AuthType=munge: the first message must carry the credential. */
            int ok = check_munge_auth(c, msg);
            json_decref(msg);
            if (ok < 0) {
                fprintf(stderr, "dropping connection from %s: authentication failed\n", c->peer);
                conn_close(c);
                return;
            }
            continue;
        }
        if (c->ops.on_message)
            c->ops.on_message(c, msg, c->arg);
        json_decref(msg);
        if (c->closing)
            return;
    }
}

/* --- setting up --- */

static conn_t *conn_alloc(const conn_cfg_t *cfg, const conn_ops_t *ops, void *arg,
                          proto_role_t role)
{
    conn_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->cfg = *cfg;
    if (!c->cfg.max_queued)
        c->cfg.max_queued = 64u << 20;
    c->ops = *ops;
    c->arg = arg;
    c->backlog = json_array();
    if (cfg->munge_socket && *cfg->munge_socket)
        c->munge_socket = strdup(cfg->munge_socket);
    proto_session_init(&c->ss, cfg->auth, role, cfg->key);
    if (cfg->max_payload)
        c->ss.max_payload = cfg->max_payload;
    c->uid = (uid_t)-1;
    c->gid = (gid_t)-1;
    c->h.handle.data = c;
    return c;
}

conn_t *conn_accept(uv_stream_t *server, const conn_cfg_t *cfg, const conn_ops_t *ops, void *arg)
{
    bool is_pipe = server->type == UV_NAMED_PIPE;
    conn_cfg_t local = *cfg;
    if (is_pipe)
        local.auth = PROTO_AUTH_NONE;
    conn_t *c = conn_alloc(&local, ops, arg, PROTO_ROLE_SERVER);
    if (!c)
        return NULL;
    int rc = is_pipe ? uv_pipe_init(server->loop, &c->h.pipe, 0) : uv_tcp_init(server->loop, &c->h.tcp);
    if (rc < 0) {
        json_decref(c->backlog);
        free(c);
        return NULL;
    }
    c->h.handle.data = c;
    if (uv_accept(server, &c->h.stream) < 0) {
        conn_close(c);
        return NULL;
    }
    if (is_pipe) {
        uv_os_fd_t fd;
        struct ucred cred;
        socklen_t len = sizeof(cred);
        if (uv_fileno(&c->h.handle, &fd) == 0 &&
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
            c->uid = cred.uid;
            c->gid = cred.gid;
            c->authed = true;
            c->local = true;
            snprintf(c->peer, sizeof(c->peer), "unix:uid=%u", (unsigned)cred.uid);
        } else {
            conn_close(c);
            return NULL;
        }
    } else {
        struct sockaddr_storage sa;
        int len = sizeof(sa);
        char host[48] = "?";
        int port = 0;
        if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&sa, &len) == 0) {
            if (sa.ss_family == AF_INET) {
                uv_ip4_name((struct sockaddr_in *)&sa, host, sizeof(host));
                port = ntohs(((struct sockaddr_in *)&sa)->sin_port);
            } else if (sa.ss_family == AF_INET6) {
                uv_ip6_name((struct sockaddr_in6 *)&sa, host, sizeof(host));
                port = ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
            }
        }
        snprintf(c->peer, sizeof(c->peer), "%s:%d", host, port);
        uv_tcp_nodelay(&c->h.tcp, 1);
        if (c->ss.auth == PROTO_AUTH_KEY) {
            c->authed = true; /* every frame will prove the key */
            c->uid = 0;
            c->gid = 0;
        }
        uint8_t *hello;
        size_t hlen;
        if (proto_hello(&c->ss, &hello, &hlen) < 0 || write_frame(c, hello, hlen) < 0) {
            conn_close(c);
            return NULL;
        }
    }
    if (uv_read_start(&c->h.stream, alloc_cb, read_cb) < 0) {
        conn_close(c);
        return NULL;
    }
    return c;
}

static void on_connect(uv_connect_t *req, int status)
{
    conn_t *c = req->data;
    if (status < 0 || uv_read_start(&c->h.stream, alloc_cb, read_cb) < 0) {
        conn_close(c);
        return;
    }
    if (c->ss.auth == PROTO_AUTH_NONE) {
        c->authed = true;
        flush_backlog(c);
    }
}

conn_t *conn_connect_tcp(uv_loop_t *loop, const char *host, int port, const conn_cfg_t *cfg,
                         const conn_ops_t *ops, void *arg)
{
    struct sockaddr_storage sa;
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)&sa) < 0 &&
        uv_ip6_addr(host, port, (struct sockaddr_in6 *)&sa) < 0)
        return NULL;
    conn_t *c = conn_alloc(cfg, ops, arg, PROTO_ROLE_CLIENT);
    if (!c)
        return NULL;
    if (uv_tcp_init(loop, &c->h.tcp) < 0) {
        json_decref(c->backlog);
        free(c);
        return NULL;
    }
    c->h.handle.data = c;
    uv_tcp_nodelay(&c->h.tcp, 1);
    snprintf(c->peer, sizeof(c->peer), "%s:%d", host, port);
    c->connect_req.data = c;
    if (uv_tcp_connect(&c->connect_req, &c->h.tcp, (struct sockaddr *)&sa, on_connect) < 0) {
        conn_close(c);
        return NULL;
    }
    return c;
}

conn_t *conn_connect_unix(uv_loop_t *loop, const char *path, const conn_cfg_t *cfg,
                          const conn_ops_t *ops, void *arg)
{
    conn_cfg_t local = *cfg;
    local.auth = PROTO_AUTH_NONE;
    conn_t *c = conn_alloc(&local, ops, arg, PROTO_ROLE_CLIENT);
    if (!c)
        return NULL;
    if (uv_pipe_init(loop, &c->h.pipe, 0) < 0) {
        json_decref(c->backlog);
        free(c);
        return NULL;
    }
    c->h.handle.data = c;
    c->local = true;
    snprintf(c->peer, sizeof(c->peer), "unix:%.50s", path);
    c->connect_req.data = c;
    uv_pipe_connect(&c->connect_req, &c->h.pipe, path, on_connect);
    return c;
}

bool conn_authenticated(const conn_t *c) { return c->authed; }
uid_t conn_uid(const conn_t *c) { return c->uid; }
gid_t conn_gid(const conn_t *c) { return c->gid; }
bool conn_is_local(const conn_t *c) { return c->local; }
void *conn_data(const conn_t *c) { return c->data; }
void conn_set_data(conn_t *c, void *data) { c->data = data; }
const char *conn_peer(const conn_t *c) { return c->peer; }
