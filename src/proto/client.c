#include "client.h"

#include <errno.h>
#include <fcntl.h>
#include <munge.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct client {
    int fd;
    proto_session_t ss;
    proto_decoder_t dec;
    char *munge_socket;
    double last_sent; /* for keepalives while waiting */
};

#define FAIL(code, ...) (snprintf(err, errlen, __VA_ARGS__), (code))

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static client_t *client_new(int fd, proto_auth_t auth, const uint8_t *key)
{
    client_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->fd = fd;
    proto_session_init(&c->ss, auth, PROTO_ROLE_CLIENT, key);
    c->last_sent = now_s();
    return c;
}

int client_open_unix(const char *path, client_t **out, char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path))
        return FAIL(-ENAMETOOLONG, "socket path too long: %s", path);
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return FAIL(-errno, "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = errno;
        close(fd);
        return FAIL(-e, "cannot reach the controller at %s: %s", path, strerror(e));
    }
    *out = client_new(fd, PROTO_AUTH_NONE, NULL);
    if (!*out) {
        close(fd);
        return FAIL(-ENOMEM, "out of memory");
    }
    return 0;
}

/* Reads until the decoder yields a message (the hello is consumed inside). A timeout
 * of 0 reads what is there without waiting: a probe costs one poll(). While it waits
 * it sends a keepalive every PROTO_KEEPALIVE_SECONDS, so that a controller's IdleTimeout
 * never closes a client waiting for a long reply (`ductile run` of a silent step). */
static int recv_frame(client_t *c, json_t **msg, double timeout, char *err, size_t errlen)
{
    double deadline = timeout < 0 ? -1 : now_s() + timeout;
    for (;;) {
        bool had = c->ss.have_nonce;
        int rc = proto_decoder_next(&c->dec, &c->ss, msg, err, errlen);
        if (rc != 0 || (!had && c->ss.have_nonce))
            return rc < 0 ? rc : (rc == 1 ? 1 : 2); /* 2: the hello arrived */
        bool can_send = c->ss.auth == PROTO_AUTH_NONE || c->ss.have_nonce;
        if (can_send && now_s() - c->last_sent >= PROTO_KEEPALIVE_SECONDS) {
            json_t *k = json_pack("{s:s}", "type", "keepalive");
            rc = k ? client_send(c, k, err, errlen) : FAIL(-ENOMEM, "out of memory");
            json_decref(k);
            if (rc < 0)
                return rc;
        }
        int wait = -1;
        if (deadline >= 0) {
            double left = deadline - now_s();
            wait = left > 0 ? (int)(left * 1000) + 1 : 0;
        }
        if (can_send) {
            double k = c->last_sent + PROTO_KEEPALIVE_SECONDS - now_s();
            int kw = k > 0 ? (int)(k * 1000) + 1 : 0;
            if (wait < 0 || kw < wait)
                wait = kw;
        }
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        int pr = poll(&p, 1, wait);
        if (pr < 0 && errno != EINTR)
            return FAIL(-errno, "poll: %s", strerror(errno));
        if (pr <= 0) {
            if (deadline >= 0 && now_s() >= deadline)
                return FAIL(-ETIMEDOUT, "no answer within %.0f s", timeout);
            continue; /* or time for a keepalive */
        }
        char buf[65536];
        ssize_t n = read(c->fd, buf, sizeof(buf));
        if (n == 0)
            return FAIL(-ECONNRESET, "the connection was closed");
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return FAIL(-errno, "read: %s", strerror(errno));
        }
        if (proto_decoder_feed(&c->dec, buf, (size_t)n) < 0)
            return FAIL(-ENOMEM, "out of memory");
    }
}

/* A host that vanished answers nothing: the kernel's own connect timeout is minutes. */
#define CONNECT_TIMEOUT_MS 10000

static int connect_within(int fd, const struct sockaddr *sa, socklen_t len, int timeout_ms)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return -1;
    int rc = connect(fd, sa, len);
    if (rc < 0 && errno == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int n;
        do
            n = poll(&p, 1, timeout_ms);
        while (n < 0 && errno == EINTR);
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        if (n == 0)
            soerr = ETIMEDOUT;
        else if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
            soerr = errno;
        rc = soerr ? (errno = soerr, -1) : 0;
    }
    if (rc == 0 && fcntl(fd, F_SETFL, fl) < 0)
        rc = -1;
    return rc;
}

int client_open_tcp(const char *host, int port, const uint8_t *key, const char *munge_socket,
                    client_t **out, char *err, size_t errlen)
{
    char ports[16];
    snprintf(ports, sizeof(ports), "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
    int g = getaddrinfo(host, ports, &hints, &ai);
    if (g != 0)
        return FAIL(-EHOSTUNREACH, "cannot resolve %s: %s", host, gai_strerror(g));
    int fd = -1, e = 0;
    for (struct addrinfo *p = ai; p; p = p->ai_next) {
        fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
        if (fd >= 0 && connect_within(fd, p->ai_addr, p->ai_addrlen, CONNECT_TIMEOUT_MS) == 0)
            break;
        e = errno;
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd < 0)
        return FAIL(-e, "cannot reach the controller at %s:%d: %s", host, port, strerror(e));
    client_t *c = client_new(fd, key ? PROTO_AUTH_KEY : PROTO_AUTH_MUNGE, key);
    if (!c) {
        close(fd);
        return FAIL(-ENOMEM, "out of memory");
    }
    json_t *dummy = NULL;
    int rc = recv_frame(c, &dummy, 10, err, errlen);
    json_decref(dummy);
    if (rc != 2) {
        client_close(c);
        return rc < 0 ? rc : FAIL(-EPROTO, "the controller did not greet");
    }
    if (key) {
        /* A small first frame proves the key: the controller accepts only small frames
         * from a peer it does not know yet, and our first request may be large. */
        json_t *m = json_pack("{s:s}", "type", "auth");
        rc = m ? client_send(c, m, err, errlen) : FAIL(-ENOMEM, "out of memory");
        json_decref(m);
        if (rc < 0) {
            client_close(c);
            return rc;
        }
    } else {
        char hex[2 * PROTO_NONCE_LEN + 1];
        for (int i = 0; i < PROTO_NONCE_LEN; i++)
            sprintf(hex + 2 * i, "%02x", c->ss.nonce[i]);
        munge_ctx_t ctx = munge_ctx_create();
        if (ctx && munge_socket && *munge_socket)
            munge_ctx_set(ctx, MUNGE_OPT_SOCKET, munge_socket);
        char *cred = NULL;
        munge_err_t me = ctx ? munge_encode(&cred, ctx, hex, (int)strlen(hex)) : EMUNGE_NO_MEMORY;
        munge_ctx_destroy(ctx);
        if (me != EMUNGE_SUCCESS) {
            client_close(c);
            return FAIL(-EACCES, "munge: %s", munge_strerror(me));
        }
        json_t *m = json_pack("{s:s,s:s}", "type", "auth", "cred", cred);
        free(cred);
        rc = client_send(c, m, err, errlen);
        json_decref(m);
        if (rc < 0) {
            client_close(c);
            return rc;
        }
    }
    *out = c;
    return 0;
}

/* The server hung up while we were sending: a server that refuses a connection (too
 * many connections) says why first, so read that if it is there. */
static int refused(client_t *c, int e, char *err, size_t errlen)
{
    json_t *m = NULL;
    char ignored[8];
    const char *why = NULL;
    c->last_sent = now_s(); /* no keepalive on a broken connection */
    if (recv_frame(c, &m, 1, ignored, sizeof(ignored)) == 1 &&
        !json_is_true(json_object_get(m, "ok")))
        why = json_string_value(json_object_get(m, "error"));
    int rc = why ? FAIL(-EREMOTE, "%s", why)
                 : FAIL(-e, "cannot send to the controller: %s", strerror(e));
    json_decref(m);
    return rc;
}

int client_send(client_t *c, const json_t *msg, char *err, size_t errlen)
{
    uint8_t *f;
    size_t len;
    int rc = proto_encode(&c->ss, msg, &f, &len);
    if (rc < 0)
        return FAIL(rc, "cannot encode the request: %s", strerror(-rc));
    size_t off = 0;
    while (off < len) {
        ssize_t n = send(c->fd, f + off, len - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(f);
            if (e == EPIPE || e == ECONNRESET)
                return refused(c, e, err, errlen);
            return FAIL(-e, "cannot send to the controller: %s", strerror(e));
        }
        off += (size_t)n;
    }
    free(f);
    c->last_sent = now_s();
    return 0;
}

int client_recv(client_t *c, json_t **msg, double timeout, char *err, size_t errlen)
{
    for (;;) {
        int rc = recv_frame(c, msg, timeout, err, errlen);
        if (rc != 2)
            return rc;
    }
}

int client_call(client_t *c, const json_t *req, json_t **reply, double timeout, char *err,
                size_t errlen)
{
    int rc = client_send(c, req, err, errlen);
    if (rc < 0)
        return rc;
    rc = client_recv(c, reply, timeout, err, errlen);
    if (rc < 0)
        return rc;
    if (!json_is_true(json_object_get(*reply, "ok"))) {
        const char *e = json_string_value(json_object_get(*reply, "error"));
        /* the code (errors.h); from the words when a server before codes sent none.
         * try_later is -EBUSY: a user's submissions past MaxSubmitRate, a retry will do */
        const char *code = json_string_value(json_object_get(*reply, "code"));
        proto_err_t pe = code ? proto_err_parse(code) : proto_err_classify(e);
        snprintf(err, errlen, "%s", e ? e : "the controller refused the request");
        json_decref(*reply);
        *reply = NULL;
        return proto_err_errno(pe);
    }
    return 0;
}

bool client_retryable(int rc)
{
    switch (-rc) {
    case ECONNRESET:   /* the controller died or closed the connection mid-request */
    case ECONNREFUSED: /* restarting: nobody listens yet */
    case ENOENT:       /* restarting: its socket is not there yet */
    case EPIPE:
    case ETIMEDOUT:    /* no answer in time: it may still come, the key makes it safe */
    case ECONNABORTED:
    case EAGAIN:       /* a full listen queue */
    case EBUSY:        /* the controller said: try later (MaxSubmitRate) */
        return true;
    default:
        return false;
    }
}

bool client_refused(int rc)
{
    proto_err_t e = proto_err_of_errno(rc);
    return e != PROTO_E_NONE && e != PROTO_E_UNREACHABLE;
}

int client_fd(const client_t *c) { return c->fd; }

void client_close(client_t *c)
{
    if (!c)
        return;
    close(c->fd);
    proto_decoder_free(&c->dec);
    free(c);
}

int client_call_keyed(client_t **c, const char *host, int port, const uint8_t *key,
                      const json_t *req, json_t **reply, double timeout, char *err,
                      size_t errlen)
{
    bool fresh = false; /* the connection is this call's */
    int rc = 0;
    if (!*c) {
        rc = client_open_tcp(host, port, key, NULL, c, err, errlen);
        if (rc < 0 && rc != -EHOSTUNREACH) /* its message names the controller */
            snprintf(err, errlen, "cannot connect: %s", strerror(-rc));
        fresh = rc == 0;
    }
    if (rc == 0)
        rc = client_call(*c, req, reply, timeout, err, errlen);
    if (rc < 0 && fresh && !client_refused(rc)) {
        size_t l = strlen(err);
        snprintf(err + l, errlen > l ? errlen - l : 0, " (is the key file the server's key?)");
    }
    if (rc < 0 && *c) {
        client_close(*c);
        *c = NULL;
    }
    return rc;
}
