#define _GNU_SOURCE /* struct ucred */
#include "conn.h"
#include "idmap.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
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
        uv_timer_t timer; /* a channel: a handle only so that it closes like the others */
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
    pid_t pid;      /* a Unix socket's peer process, when the kernel says */
    int error;      /* client: why the connection could not be made (a libuv error) */
    bool authed;    /* the peer is known */
    bool local;
    bool closing;
    bool sent_auth; /* client: MUNGE credential sent */
    size_t queued;  /* bytes handed to libuv, not yet written */
    json_t *backlog; /* client: messages waiting for the hello */
    char peer[64];
    char host[48];  /* TCP: the remote address alone, for the per-host count */
    /* the guard's view (server side) */
    conn_guard_t *guard;
    conn_t *gprev, *gnext;
    double since;       /* accepted, loop time in seconds */
    double last_read;   /* last bytes received */
    double last_active; /* last whole frame received or sent */
    bool persistent;    /* a node daemon: no idle or frame timeout */
    bool in_reserve;    /* admitted into the reserve before we knew who it was */
    bool refusing;      /* an error is on its way, then the connection closes */
    int8_t counted;     /* in its guard's tally: 0 not, 1 by host (unauthenticated), 2 by uid */
    bool reading;       /* uv_read_start done */
    bool close_flushed; /* close once the queued output is written */
    /* channels (conn_open_channel): a connection carried inside another */
    conn_t *carrier;    /* set on a channel: its messages travel on the carrier */
    int64_t chan;       /* its number on the carrier */
    bool peer_closed;   /* the far end closed it: do not tell it again */
    bool link_lost;     /* it ended with its link (a reset, or its carrier went), not
                         * because the peer closed it */
    conn_t *channels;   /* on a carrier: its open channels */
    conn_t *chan_next;
};

struct conn_guard {
    uv_loop_t *loop;
    conn_limits_t lim;
    uv_timer_t timer;
    conn_t *head;
    int n;           /* connections linked, refusing ones included */
    int nrefusing;   /* being told why they are refused: not counted against limits */
    double log_at;   /* refusals are logged at most once a second */
    long unlogged;   /* refusals since the last line */
    /* live connections (not closing or refused) by host while unauthenticated and by
     * uid once authenticated: the limits look them up instead of walking every
     * connection, which made 10,000 node daemons connecting at once quadratic */
    idmap_t *hosts, *uids;
    int nunauth;         /* counted by host: not authenticated yet */
    int nunauth_reserve; /* of those, admitted into the reserve */
    /* accepting in paces: at most ACCEPTS_PER_TURN a listener per turn of the loop */
    struct listener {
        uv_stream_t *server;
        int accepted;   /* this turn */
        bool waiting;   /* one is left for the next turn: libuv listens again once it
                         * is accepted */
    } listeners[4];
    int nlisteners;
    uv_check_t turn;    /* end of a turn: the counts start again */
};

/* Thousands of connections arriving at once (a flood, or every node daemon after a
 * restart) were all accepted, greeted and refused or admitted in one turn of the loop:
 * 231-289 ms for 5,000 (issue 34), while every request and heartbeat waited. A listener
 * takes this many a turn; the rest wait in the kernel's backlog for the next turns. */
#define ACCEPTS_PER_TURN 64

typedef struct wreq {
    uv_write_t req;
    conn_t *c;
    uint8_t *frame;
    size_t len;
} wreq_t;

static double loop_now(uv_loop_t *loop) { return (double)uv_now(loop) / 1000.0; }

static int64_t host_key(const char *host)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = host; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    return (int64_t)h;
}


/* c counts against its host until it authenticates, then against its uid; not once it
 * is refused or closing. */
static void count_add(conn_t *c)
{
    conn_guard_t *g = c->guard;
    if (!g || c->counted)
        return;
    c->counted = c->authed ? 2 : 1;
    if (c->authed) {
        idmap_tally_add(g->uids, (int64_t)c->uid, 1);
    } else {
        idmap_tally_add(g->hosts, host_key(c->host), 1);
        g->nunauth++;
        g->nunauth_reserve += c->in_reserve;
    }
}

static void count_drop(conn_t *c)
{
    conn_guard_t *g = c->guard;
    if (!g || !c->counted)
        return;
    if (c->counted == 2) {
        idmap_tally_add(g->uids, (int64_t)c->uid, -1);
    } else {
        idmap_tally_add(g->hosts, host_key(c->host), -1);
        g->nunauth--;
        g->nunauth_reserve -= c->in_reserve;
    }
    c->counted = 0;
}

static void guard_unlink(conn_t *c)
{
    conn_guard_t *g = c->guard;
    if (!g)
        return;
    count_drop(c);
    if (c->gprev)
        c->gprev->gnext = c->gnext;
    else
        g->head = c->gnext;
    if (c->gnext)
        c->gnext->gprev = c->gprev;
    c->gprev = c->gnext = NULL;
    c->guard = NULL;
    g->n--;
    g->nrefusing -= c->refusing;
}

static void on_closed(uv_handle_t *h)
{
    conn_t *c = h->data;
    guard_unlink(c);
    if (c->ops.on_close)
        c->ops.on_close(c, c->arg);
    proto_decoder_free(&c->dec);
    json_decref(c->backlog);
    free(c->munge_socket);
    free(c);
}

static void channel_unlink(conn_t *ch)
{
    for (conn_t **pp = &ch->carrier->channels; *pp; pp = &(*pp)->chan_next)
        if (*pp == ch) {
            *pp = ch->chan_next;
            break;
        }
    ch->chan_next = NULL;
}

/* A handle someone else closed (a daemon's walk over its loop as it stops) has their
 * close callback, not on_closed: the connection goes once that close is done, in a
 * later turn of the loop. A timer of 0 ms was not that: a walk made outside the loop
 * leaves the close to the end of the next turn, after its timers, and libuv 1.44 runs
 * a timer started again with 0 ms in the same turn; test_conn's close_after_walk freed
 * the connection with its handle still in libuv's list of closing handles (valgrind).
 * So: a first tick, then one at least a millisecond later, in a turn after it. */
typedef struct late {
    uv_timer_t t;
    conn_t *c;
    int turns;
} late_t;

static void late_closed(uv_handle_t *t)
{
    late_t *l = t->data;
    conn_t *c = l->c;
    free(l);
    on_closed(&c->h.handle);
}

static void late_tick(uv_timer_t *t)
{
    late_t *l = t->data;
    if (++l->turns < 2)
        uv_timer_start(t, late_tick, 1, 0);
    else
        uv_close((uv_handle_t *)t, late_closed);
}

void conn_close(conn_t *c)
{
    if (!c || c->closing)
        return;
    c->closing = true;
    count_drop(c);
    /* a carrier takes its channels with it */
    while (c->channels) {
        conn_t *ch = c->channels;
        ch->peer_closed = true;
        ch->link_lost = true;
        conn_close(ch);
    }
    if (c->carrier) {
        if (!c->peer_closed)
            conn_send_new(c->carrier, json_pack("{s:s,s:I}", "type", "relay_close", "chan",
                                                 (json_int_t)c->chan));
        channel_unlink(c);
        c->carrier = NULL;
    }
    if (!uv_is_closing(&c->h.handle)) {
        uv_close(&c->h.handle, on_closed);
        return;
    }
    late_t *l = calloc(1, sizeof(*l));
    if (l && uv_timer_init(c->h.handle.loop, &l->t) == 0) {
        l->c = c;
        l->t.data = l;
        uv_timer_start(&l->t, late_tick, 0, 0);
    } else {
        free(l); /* the connection stays: its daemon is going anyway */
    }
}

void conn_close_flushed(conn_t *c)
{
    if (!c || c->closing)
        return;
    if (c->queued == 0 || c->carrier)
        conn_close(c);
    else
        c->close_flushed = true;
}

static void on_written(uv_write_t *req, int status)
{
    wreq_t *w = (wreq_t *)req;
    conn_t *c = w->c;
    c->queued -= w->len;
    free(w->frame);
    free(w);
    if (c->guard)
        c->last_active = loop_now(c->h.handle.loop);
    if (status < 0 || ((c->refusing || c->close_flushed) && c->queued == 0))
        conn_close(c);
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
    if (c->carrier)
        return conn_send_new(c->carrier, json_pack("{s:s,s:I,s:O}", "type", "relay", "chan",
                                                   (json_int_t)c->chan, "msg", msg));
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

static void refuse(conn_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void guard_log(conn_guard_t *g, const conn_t *c, const char *why);
static void guard_authenticated(conn_t *c);

/* The peer proved who it is: frames up to the full limit from now on. */
static void authenticated(conn_t *c, uid_t uid, gid_t gid)
{
    c->uid = uid;
    c->gid = gid;
    c->authed = true;
    c->ss.max_payload = c->cfg.max_payload ? c->cfg.max_payload : PROTO_MAX_PAYLOAD;
    guard_authenticated(c);
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
    /* A daemon retries every second: say it once per reason, not at every attempt. */
    static munge_err_t last_said = EMUNGE_SUCCESS;
    if (e != EMUNGE_SUCCESS) {
        if (e != last_said)
            fprintf(stderr, "ductile: no MUNGE credential from munged at %s: %s (is munged "
                    "running on this host, and is MungeSocket its socket?)\n",
                    c->munge_socket ? c->munge_socket : "its default socket", munge_strerror(e));
        last_said = e;
        return -EACCES;
    }
    last_said = EMUNGE_SUCCESS;
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
    authenticated(c, uid, gid);
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

/* Before authentication a read takes at most one pre-authentication frame, so what an
 * unknown peer can make us hold is bounded by about twice that. */
static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    conn_t *c = h->data;
    size_t n = 65536;
    if (!c->authed && c->ss.role == PROTO_ROLE_SERVER && PROTO_HDR_LEN + c->ss.max_payload < n)
        n = PROTO_HDR_LEN + c->ss.max_payload;
    buf->base = malloc(n);
    buf->len = buf->base ? n : 0;
}


static void read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    conn_t *c = s->data;
    if (n < 0) {
        free(buf->base);
        if (n != UV_EOF)
            c->link_lost = true;
        conn_close(c);
        return;
    }
    if (n == 0 || c->closing || c->refusing) {
        free(buf->base);
        return;
    }
    if (c->guard)
        c->last_read = loop_now(c->h.handle.loop);
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
            if (c->ss.auth == PROTO_AUTH_KEY) {
                /* A small first frame proves the key, so the server lifts its
                 * pre-authentication limit before our first real (maybe large) message. */
                json_t *a = json_pack("{s:s}", "type", "auth");
                int arc = a ? send_now(c, a) : -ENOMEM;
                json_decref(a);
                if (arc < 0) {
                    json_decref(msg);
                    conn_close(c);
                    return;
                }
            }
            c->authed = true; /* the server proved the key (or MUNGE vouches for us) */
            flush_backlog(c);
        }
        if (rc < 0) {
            if (c->guard && !c->authed) { /* unknown peers may be many: rate-limited */
                char why[300];
                snprintf(why, sizeof(why), "dropped before authentication: %s", err);
                guard_log(c->guard, c, why);
            } else {
                fprintf(stderr, "dropping connection from %s: %s\n", c->peer, err);
            }
            conn_close(c);
            return;
        }
        if (rc == 0)
            return;
        if (c->guard)
            c->last_active = loop_now(c->h.handle.loop);
        const char *type = json_string_value(json_object_get(msg, "type"));
        if (c->ss.role == PROTO_ROLE_SERVER && !c->authed) {
            if (c->ss.auth == PROTO_AUTH_KEY) {
                /* The decoder checked its MAC: the peer holds the cluster key. A bare
                 * "auth" frame only says so, so that the next frame may be large. */
                authenticated(c, 0, 0);
                if (c->closing || c->refusing || (type && !strcmp(type, "auth"))) {
                    json_decref(msg);
                    if (c->closing || c->refusing)
                        return;
                    continue;
                }
            } else {
                /* AuthType=munge: the first message must carry the credential. */
                int ok = check_munge_auth(c, msg);
                json_decref(msg);
                if (ok < 0) {
                    fprintf(stderr, "dropping connection from %s: authentication failed\n",
                            c->peer);
                    conn_close(c);
                    return;
                }
                if (c->closing || c->refusing)
                    return;
                continue;
            }
        }
        if (c->ss.role == PROTO_ROLE_SERVER && type && !strcmp(type, "keepalive")) {
            json_decref(msg); /* a waiting client saying it is still there */
            continue;
        }
        if (c->ops.on_message)
            c->ops.on_message(c, msg, c->arg);
        json_decref(msg);
        if (c->closing)
            return;
    }
}

/* --- admission control and timeouts --- */

static bool privileged(const conn_guard_t *g, uid_t uid)
{
    return g->lim.privileged && g->lim.privileged(uid, g->lim.arg);
}

/* A line per second at most: a flood of refusals must not flood the log. */
static void guard_log(conn_guard_t *g, const conn_t *c, const char *why)
{
    double now = loop_now(g->loop);
    if (now - g->log_at < 1.0) {
        g->unlogged++;
        return;
    }
    if (g->unlogged)
        fprintf(stderr, "refused or closed %ld more connections in the last second\n",
                g->unlogged);
    fprintf(stderr, "connection from %s: %s\n", c->peer, why);
    g->log_at = now;
    g->unlogged = 0;
}

/* Tell the peer why, then close. The reason is written at once when the socket takes
 * it (it nearly always does) and the connection closed at once, which releases its
 * descriptor now rather than an iteration later: libuv accepts a flood thousands at a
 * time in one iteration, and refusals waiting for their write would exhaust the
 * descriptors the refusals are there to protect. */
static void refuse(conn_t *c, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    if (c->guard)
        guard_log(c->guard, c, why);
    if (c->guard && !c->refusing)
        c->guard->nrefusing++;
    c->refusing = true;
    count_drop(c);
    json_t *m = json_pack("{s:b,s:s,s:s}", "ok", 0, "code", "too_many_connections", "error", why);
    uint8_t *frame = NULL;
    size_t len = 0;
    bool can = m && (c->ss.auth == PROTO_AUTH_NONE || c->ss.have_nonce);
    int rc = can ? proto_encode(&c->ss, m, &frame, &len) : -EIO;
    json_decref(m);
    if (rc == 0) {
        uv_buf_t b = uv_buf_init((char *)frame, (unsigned)len);
        if (uv_try_write(&c->h.stream, &b, 1) == UV_EAGAIN) {
            /* The socket is full: write it later and close then. On TCP reading goes
             * on meanwhile (read_cb drops what comes), so that the peer's request is not
             * left unread at the close, which would reset the connection before our
             * reply arrives. */
            if (!c->local && !c->reading && uv_read_start(&c->h.stream, alloc_cb, read_cb) == 0)
                c->reading = true;
            rc = write_frame(c, frame, len);
            frame = NULL;
        } else {
            rc = -1; /* written (or the peer is gone): close now */
        }
    }
    free(frame);
    if (rc < 0 || c->queued == 0)
        conn_close(c);
}

/* The others of a uid or host (c itself is not counted yet when these are asked). */
static int count_uid(const conn_guard_t *g, uid_t uid) { return idmap_tally_get(g->uids, (int64_t)uid); }

static int count_host(const conn_guard_t *g, const char *host)
{
    return idmap_tally_get(g->hosts, host_key(host));
}

/* Closes the oldest unauthenticated connection (from host, or any), other than c, that
 * has had at least a second to prove itself; false when there is none such. */
static bool evict_oldest(conn_guard_t *g, const conn_t *c, const char *host, const char *key,
                         int limit)
{
    double now = loop_now(g->loop);
    conn_t *old = NULL;
    for (conn_t *o = g->head; o; o = o->gnext) /* newest first: the last match is the oldest */
        if (o != c && !o->authed && !o->refusing && !o->closing && o->counted &&
            now - o->since >= 1.0 && (!host || !strcmp(o->host, host)))
            old = o;
    if (!old)
        return false;
    refuse(old, "closed: not authenticated, and a newer connection took its place (%s = %d)",
           key, limit);
    return true;
}

/* A new connection: refused (false) or counted. Local peers are known already; TCP
 * peers are counted by address until they authenticate. */
static bool guard_admit(conn_guard_t *g, conn_t *c)
{
    const conn_limits_t *l = &g->lim;
    double now = loop_now(g->loop);
    c->since = c->last_read = c->last_active = now;
    c->guard = g;
    c->gnext = g->head;
    if (g->head)
        g->head->gprev = c;
    g->head = c;
    g->n++;
    int others = g->n - 1 - g->nrefusing; /* a flood's refusals in flight do not count */
    if (l->max_conns && others >= l->max_conns) {
        refuse(c, "too many connections: %s is at MaxConnections = %d",
               l->server ? l->server : "the controller", l->max_conns);
        return false;
    }
    bool reserve = l->max_conns && others >= l->max_conns - l->reserve;
    if (c->authed) {
        int mine = l->per_user ? count_uid(g, c->uid) : 0;
        /* privileged() is asked only when a limit is reached: it may look the user up */
        if ((reserve || (l->per_user && mine >= l->per_user)) && !privileged(g, c->uid)) {
            if (reserve)
                refuse(c, "too many connections: the last %d are reserved for operators",
                       l->reserve);
            else
                refuse(c, "too many connections from uid %u (MaxConnectionsPerUser = %d)",
                       (unsigned)c->uid, l->per_user);
            return false;
        }
        count_add(c);
        return true;
    }
    /* Peers still to prove who they are: at most per_host from one address, max_unauth
     * from any number of addresses (40 addresses at 128 each took every connection, the
     * reserve too). At a cap the oldest of them gives way to the newcomer rather than
     * the newcomer being refused: a node daemon or a command proves itself in its first
     * frame, milliseconds after it connects, while a flood's connections sit; refusing
     * the newest let a flood that was there first keep every real peer out (a job's step
     * output to its node's NodePort, in the sanitizer build's test_dos). */
    if (l->per_host && count_host(g, c->host) >= l->per_host &&
        !evict_oldest(g, c, c->host, "MaxConnectionsPerHost", l->per_host)) {
        refuse(c, "too many unauthenticated connections from %s (MaxConnectionsPerHost = %d)",
               c->host, l->per_host);
        return false;
    }
    if (l->max_unauth && g->nunauth >= l->max_unauth &&
        !evict_oldest(g, c, NULL, "MaxUnauthConnections", l->max_unauth)) {
        refuse(c, "too many unauthenticated connections (MaxUnauthConnections = %d)",
               l->max_unauth);
        return false;
    }
    if (reserve && g->nunauth_reserve >= l->reserve / 2) {
        refuse(c, "too many connections: the last %d are reserved for operators", l->reserve);
        return false;
    }
    c->in_reserve = reserve;
    count_add(c);
    return true;
}

/* A TCP peer authenticated: now it counts as its uid. */
static void guard_authenticated(conn_t *c)
{
    conn_guard_t *g = c->guard;
    if (!g || c->closing || c->refusing)
        return;
    count_drop(c); /* no longer by its host */
    if (!privileged(g, c->uid)) {
        if (c->in_reserve) {
            refuse(c, "too many connections: the last %d are reserved for operators",
                   g->lim.reserve);
            return;
        }
        if (g->lim.per_user && count_uid(g, c->uid) >= g->lim.per_user) {
            refuse(c, "too many connections from uid %u (MaxConnectionsPerUser = %d)",
                   (unsigned)c->uid, g->lim.per_user);
            return;
        }
    }
    count_add(c);
}

static void guard_tick(uv_timer_t *t)
{
    conn_guard_t *g = t->data;
    const conn_limits_t *l = &g->lim;
    double now = loop_now(g->loop);
    for (conn_t *c = g->head; c; c = c->gnext) {
        if (c->closing || c->refusing)
            continue;
        const char *why = NULL;
        if (!c->authed && l->auth_timeout > 0 && now - c->since >= l->auth_timeout)
            why = "closed: no authentication within AuthTimeout";
        else if (!c->persistent && c->dec.len > 0 && l->frame_timeout > 0 &&
                 now - c->last_read >= l->frame_timeout)
            why = "closed: a frame stalled half-way for FrameTimeout";
        else if (!c->persistent && c->authed && c->queued == 0 && l->idle_timeout > 0 &&
                 now - c->last_active >= l->idle_timeout)
            why = "closed: idle for IdleTimeout";
        if (why) {
            guard_log(g, c, why);
            conn_close(c); /* unlinked when its handle has closed: the walk goes on */
        }
    }
}

conn_guard_t *conn_guard_create(uv_loop_t *loop, const conn_limits_t *lim)
{
    conn_guard_t *g = calloc(1, sizeof(*g));
    if (!g)
        return NULL;
    g->loop = loop;
    g->lim = *lim;
    g->log_at = -1e9;
    g->hosts = idmap_create();
    g->uids = idmap_create();
    if (!g->hosts || !g->uids) {
        idmap_destroy(g->hosts);
        idmap_destroy(g->uids);
        free(g);
        return NULL;
    }
    /* Check often enough that a timeout is at most a quarter late, and at least once a
     * second. */
    double t = 1.0, ts[] = {lim->auth_timeout, lim->frame_timeout, lim->idle_timeout};
    for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++)
        if (ts[i] > 0 && ts[i] / 4 < t)
            t = ts[i] / 4;
    uint64_t ms = t < 0.05 ? 50 : (uint64_t)(t * 1000);
    uv_timer_init(loop, &g->timer);
    g->timer.data = g;
    if (lim->auth_timeout > 0 || lim->frame_timeout > 0 || lim->idle_timeout > 0)
        uv_timer_start(&g->timer, guard_tick, ms, ms);
    uv_unref((uv_handle_t *)&g->timer); /* the guard alone does not keep a loop alive */
    uv_check_init(loop, &g->turn);
    g->turn.data = g;
    uv_unref((uv_handle_t *)&g->turn);
    return g;
}

void conn_guard_destroy(conn_guard_t *g)
{
    if (!g)
        return;
    idmap_destroy(g->hosts);
    idmap_destroy(g->uids);
    free(g);
}

int conn_guard_count(const conn_guard_t *g) { return g ? g->n - g->nrefusing : 0; }

void conn_set_persistent(conn_t *c) { c->persistent = true; }

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

static conn_t *accept_now(uv_stream_t *server, const conn_cfg_t *cfg, const conn_ops_t *ops,
                          void *arg);

static void on_turn(uv_check_t *h)
{
    conn_guard_t *g = h->data;
    bool busy = false;
    for (int k = 0; k < g->nlisteners; k++) {
        struct listener *l = &g->listeners[k];
        busy |= l->accepted > 0;
        l->accepted = 0;
        if (l->waiting) { /* the daemon's own callback again, as libuv would call it */
            l->waiting = false;
            l->server->connection_cb(l->server, 0);
        }
    }
    if (!busy)
        uv_check_stop(h);
}

/* Whether server may accept another connection this turn; if not, it is left for the
 * next turn (and libuv stops listening on server until then). */
static bool paced(conn_guard_t *g, uv_stream_t *server)
{
    struct listener *l = NULL;
    for (int k = 0; k < g->nlisteners && !l; k++)
        if (g->listeners[k].server == server)
            l = &g->listeners[k];
    if (!l && g->nlisteners < (int)(sizeof(g->listeners) / sizeof(g->listeners[0]))) {
        l = &g->listeners[g->nlisteners++];
        *l = (struct listener){.server = server};
    }
    if (!l)
        return true; /* (more listeners than a daemon has: unpaced) */
    uv_check_start(&g->turn, on_turn);
    if (l->accepted < ACCEPTS_PER_TURN) {
        l->accepted++;
        return true;
    }
    l->waiting = true;
    return false;
}

conn_t *conn_accept(uv_stream_t *server, const conn_cfg_t *cfg, const conn_ops_t *ops, void *arg)
{
    if (cfg->guard && !paced(cfg->guard, server))
        return NULL; /* the end of this turn calls the server's callback again */
    return accept_now(server, cfg, ops, arg);
}

static conn_t *accept_now(uv_stream_t *server, const conn_cfg_t *cfg, const conn_ops_t *ops,
                          void *arg)
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
            c->pid = cred.pid;
            c->authed = true;
            c->local = true;
            snprintf(c->peer, sizeof(c->peer), "unix:uid=%u", (unsigned)cred.uid);
        } else {
            conn_close(c);
            return NULL;
        }
        if (cfg->guard && !guard_admit(cfg->guard, c))
            return NULL; /* told why; it closes once that is written */
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
        snprintf(c->host, sizeof(c->host), "%s", host);
        uv_tcp_nodelay(&c->h.tcp, 1);
        /* Unknown until its first frame proves the key or carries a MUNGE credential:
         * small frames only until then. */
        size_t pre = cfg->preauth_max_payload ? cfg->preauth_max_payload : CONN_PREAUTH_MAX_PAYLOAD;
        if (pre < c->ss.max_payload)
            c->ss.max_payload = pre;
        uint8_t *hello;
        size_t hlen;
        if (proto_hello(&c->ss, &hello, &hlen) < 0 || write_frame(c, hello, hlen) < 0) {
            conn_close(c);
            return NULL;
        }
        if (cfg->guard && !guard_admit(cfg->guard, c))
            return NULL;
    }
    if (uv_read_start(&c->h.stream, alloc_cb, read_cb) < 0) {
        conn_close(c);
        return NULL;
    }
    c->reading = true;
    return c;
}

static void on_connect(uv_connect_t *req, int status)
{
    conn_t *c = req->data;
    if (status < 0 || uv_read_start(&c->h.stream, alloc_cb, read_cb) < 0) {
        c->error = status < 0 ? status : UV_EIO;
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
        /* NULL means nothing was made: no on_close comes for it (a caller that reused the
         * argument it passed saw its callback run for a connection it never had) */
        c->ops.on_close = NULL;
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

/* --- channels --- */

conn_t *conn_open_channel(conn_t *carrier, int64_t chan, uid_t uid, gid_t gid,
                          const conn_ops_t *ops, void *arg)
{
    if (!carrier || carrier->closing || carrier->carrier)
        return NULL;
    conn_cfg_t cfg = {.auth = PROTO_AUTH_NONE};
    conn_t *c = conn_alloc(&cfg, ops, arg, PROTO_ROLE_SERVER);
    if (!c)
        return NULL;
    if (uv_timer_init(carrier->h.handle.loop, &c->h.timer) < 0) {
        json_decref(c->backlog);
        free(c);
        return NULL;
    }
    c->h.handle.data = c;
    c->carrier = carrier;
    c->chan = chan;
    c->uid = uid;
    c->gid = gid;
    c->authed = true;
    c->local = true; /* speaks for a user, never for a node */
    snprintf(c->peer, sizeof(c->peer), "relay:%.40s#%lld", carrier->peer, (long long)chan);
    c->chan_next = carrier->channels;
    carrier->channels = c;
    return c;
}

conn_t *conn_channel_find(const conn_t *carrier, int64_t chan)
{
    for (conn_t *ch = carrier ? carrier->channels : NULL; ch; ch = ch->chan_next)
        if (ch->chan == chan)
            return ch;
    return NULL;
}

void conn_channel_deliver(conn_t *ch, json_t *msg)
{
    if (ch && !ch->closing && ch->ops.on_message)
        ch->ops.on_message(ch, msg, ch->arg);
}

conn_t *conn_carrier(const conn_t *c) { return c ? c->carrier : NULL; }
int64_t conn_channel_id(const conn_t *c) { return c && c->carrier ? c->chan : 0; }

void conn_channel_ended(conn_t *ch)
{
    if (!ch || ch->closing)
        return;
    ch->peer_closed = true;
    conn_close(ch);
}

bool conn_authenticated(const conn_t *c) { return c->authed; }
uid_t conn_uid(const conn_t *c) { return c->uid; }
gid_t conn_gid(const conn_t *c) { return c->gid; }
pid_t conn_pid(const conn_t *c) { return c->pid; }
int conn_error(const conn_t *c) { return c->error; }
bool conn_is_local(const conn_t *c) { return c->local; }
bool conn_link_lost(const conn_t *c) { return c->link_lost; }

double conn_peer_ack_age(const conn_t *c)
{
    uv_os_fd_t fd;
    if (!c || c->closing || c->local || c->carrier || c->h.handle.type != UV_TCP ||
        uv_fileno(&c->h.handle, &fd) != 0)
        return -1;
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 || ti.tcpi_state != TCP_ESTABLISHED)
        return -1;
    return ti.tcpi_last_ack_recv / 1000.0;
}
void *conn_data(const conn_t *c) { return c->data; }
void conn_set_data(conn_t *c, void *data) { c->data = data; }
const char *conn_peer(const conn_t *c) { return c->peer; }
