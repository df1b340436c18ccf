/* ductile-agent: a checkpoint agent (seed 002's iCheck agent, docs/checkpointing.md).
 *
 * It keeps applications' checkpoints in memory (level 1) and flushes each complete
 * version to the file level (the application's checkpoint directory) in a thread of its
 * own. It writes there as its own user: one agent serves one user's applications. Control messages travel on the
 * authenticated protocol (proto.h, AuthType=key with the service's key); the data moves
 * one-sidedly over libfabric, the application's processes writing into and reading from
 * the agent's registered regions. The requests (all answered {"ok": true, ...} or
 * {"ok": false, "error": "..."}; app is the application's checkpoint directory, absolute,
 * which names it and is where its versions are flushed):
 *
 *   ck_hello                                    -> fabric (base64 endpoint), provider
 *   ck_put {app, version, file, bytes, pull?}   -> mr (base64 region): write it, then ck_done
 *   ck_publish {app, version, nfiles, files[], manifest}
 *   ck_latest {app}                             -> version (0: none), files[], manifest
 *   ck_get {app, version, file, pull?}          -> mr, bytes: read it, then ck_done
 *   ck_done                                     this client's transfers are over: the
 *                                                  regions it was given are closed
 *   ck_release {app}                            its run ended: drop its versions from
 *                                                  memory once they are in the files
 *   ck_list                                     -> apps[{app, versions[{version, files,
 *                                                  bytes, flushed}]}], bytes, pulled, filled
 *   ck_pull {app, version, file, off, len, fabric, mr, loff}
 *                                               the agent reads [loff, +len) of the
 *                                                  client's region (mr, on its endpoint
 *                                                  fabric) into [off, +len) of a node file
 *                                                  of an open version (pull mode)
 *   ck_fill {same}                              the agent writes [off, +len) of a complete
 *                                                  version's node file into the client's
 *                                                  region (pull mode's restart)
 *
 * Who may touch what (docs/security.md, "The checkpoint data path"): every frame of the control channel carries
 * an HMAC with the key only the job's processes have (their node daemon gives it to them),
 * so a peer without it is dropped at its first frame and never sees a region. The data
 * endpoint accepts RMA from anyone who reaches its port, so a region is opened to a
 * client only as its transfer needs: ck_put opens the node file for writing, ck_get for
 * reading, each a registration of its own with a random 64-bit key given to that client
 * alone, closed at its ck_done, when it goes, or (writes) when the version is published.
 * In pull mode ("pull": true) nothing is opened: the agent reads and writes the
 * client's region, which the client opens for that one chunk.
 *
 * In pull mode the agent initiates the transfers: the client progresses its endpoint
 * until the answer arrives, and the agent's loop waits for the transfer (at most the
 * fabric's timeout), one client's chunk at a time.
 * tcp;ofi_rxm moves data only while the target's endpoint is progressed: between a
 * client's ck_put or ck_get and its ck_done (or its end) the loop polls the endpoint
 * without sleeping. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "b64.h"
#include "conn.h"
#include "strparse.h"
#include "store.h"

typedef struct agent {
    uv_loop_t *loop;
    uv_tcp_t listen;
    uv_idle_t spin;
    uv_async_t flushed;
    uv_signal_t sigterm, sigint;
    uv_timer_t stop_wait;
    uint8_t key[PROTO_KEY_LEN];
    store_t st;
    int busy; /* clients between a transfer request and its ck_done */
    long pulled, filled; /* transfers it made itself (ck_pull, ck_fill) */
    uv_timer_t die; /* DUCTILE_TEST_AGENT_DIE */
    bool stopping;
    int report_fd; /* --report-fd: what it holds and moved, for its manager; -1: none */
    unsigned long report_seq;
    uv_timer_t report;
    conn_guard_t *guard; /* unauthenticated peers: a deadline, a quiet log */
} agent_t;

typedef struct client_state {
    bool busy;
    /* the versions it reads (ck_get), kept from being dropped until its ck_done */
    app_t **pin_app;
    aver_t **pin;
    int npin;
    /* pull mode: the client's endpoint, added at its first ck_pull or ck_fill */
    fab_peer_t *peer;
    uint8_t addr[FAB_BLOB_MAX];
    long addrlen;
} client_state_t;

static void unpin(agent_t *a, client_state_t *cs)
{
    for (int i = 0; i < cs->npin; i++) {
        pthread_mutex_lock(&a->st.mu);
        cs->pin[i]->readers--;
        pthread_mutex_unlock(&a->st.mu);
        store_prune(&a->st, cs->pin_app[i]);
    }
    free(cs->pin);
    free(cs->pin_app);
    cs->pin = NULL;
    cs->pin_app = NULL;
    cs->npin = 0;
}

static void on_die(uv_timer_t *t)
{
    (void)t;
    _exit(9);
}

static void on_spin(uv_idle_t *h) { fab_progress(((agent_t *)h->data)->st.fab); }

static void set_busy(agent_t *a, conn_t *c, bool on)
{
    client_state_t *cs = conn_data(c);
    if (!cs || cs->busy == on)
        return;
    cs->busy = on;
    a->busy += on ? 1 : -1;
    if (a->busy > 0)
        uv_idle_start(&a->spin, on_spin);
    else
        uv_idle_stop(&a->spin);
}

static void reply_err(conn_t *c, const char *fmt, const char *why)
{
    char msg[600];
    snprintf(msg, sizeof(msg), fmt, why);
    json_t *r = proto_err_reply(PROTO_E_NONE, msg);
    if (!r) /* not UTF-8 (a name cut in the middle of a character): still an answer */
        r = proto_err_reply(PROTO_E_NONE, "the request was refused");
    conn_send_new(c, r);
}

static json_t *blob_json(const void *blob, size_t len)
{
    char *text = malloc(b64_encoded_len(len) + 1);
    if (!text)
        return NULL;
    b64_encode(blob, len, text);
    json_t *j = json_string(text);
    free(text);
    return j;
}

/* Push mode: node file f's region opened to this client alone for one kind of transfer
 * (store_grant), as a blob for its reply; its registration is closed at the client's
 * ck_done or when it goes. Pull mode ("pull": true) opens nothing: the agent makes the
 * transfers itself, with the region's own registration. *out stays NULL then. */
static int grant_json(agent_t *a, conn_t *c, const json_t *m, afile_t *f, int access,
                      json_t **out, char *err, size_t errlen)
{
    *out = NULL;
    if (json_is_true(json_object_get(m, "pull")))
        return 0;
    fab_mr_t *mr = store_grant(&a->st, f, c, access, err, errlen);
    uint8_t blob[FAB_BLOB_MAX];
    size_t len = sizeof(blob);
    if (!mr || fab_mr_blob(mr, blob, &len, err, errlen) < 0)
        return -EIO;
    if (!(*out = blob_json(blob, len))) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

static void after_flush(void *arg) { uv_async_send(arg); }

/* A flush ended (a thread said so): prune what it held, and say how it went. */
static void on_flushed(uv_async_t *h)
{
    agent_t *a = h->data;
    for (int i = 0; i < a->st.napps; i++) {
        app_t *app = a->st.apps[i];
        for (int k = 0; k < app->nv; k++) {
            aver_t *v = app->v[k];
            pthread_mutex_lock(&a->st.mu);
            int done = v->flushed, flushing = v->flushing;
            pthread_mutex_unlock(&a->st.mu);
            if (!flushing && done < 0 && !v->said) {
                fprintf(stderr, "ductile-agent: version %ld not flushed to %s: %s\n",
                        v->version, app->name, strerror(-done));
                v->said = true;
            }
        }
        store_prune(&a->st, app);
    }
}

static int app_arg(const json_t *m, app_t **out, agent_t *a, bool create, char *err,
                   size_t errlen)
{
    const char *name;
    if (proto_str(m, "app", STORE_APP_MAX - 1, &name, err, errlen) < 0)
        return -EINVAL;
    if (name[0] != '/' || strstr(name, "/../") || strstr(name, "/./")) {
        snprintf(err, errlen, "the checkpoint directory '%s' is not an absolute path", name);
        return -EINVAL;
    }
    *out = store_app(&a->st, name, create);
    return 0;
}

static void do_put(agent_t *a, conn_t *c, const json_t *m)
{
    char err[512];
    app_t *app;
    int64_t version, file, bytes;
    if (app_arg(m, &app, a, true, err, sizeof(err)) < 0 ||
        proto_int(m, "version", 1, INT64_MAX, &version, err, sizeof(err)) < 0 ||
        proto_int(m, "file", 0, 1 << 20, &file, err, sizeof(err)) < 0 ||
        proto_int(m, "bytes", 0, (int64_t)1 << 40, &bytes, err, sizeof(err)) < 0)
        return reply_err(c, "ck_put: %s", err);
    if (!app)
        return reply_err(c, "ck_put: %s", "out of memory");
    afile_t *f = store_put(&a->st, app, version, file, (size_t)bytes, err, sizeof(err));
    json_t *mr;
    if (!f || grant_json(a, c, m, f, FAB_REMOTE_WRITE, &mr, err, sizeof(err)) < 0)
        return reply_err(c, "ck_put: %s", err);
    set_busy(a, c, true);
    a->st.moved += (unsigned long long)bytes;
    json_t *r = json_pack("{s:b}", "ok", 1);
    if (mr)
        json_object_set_new(r, "mr", mr);
    conn_send_new(c, r);
    /* Tests only (test_ckpt_agent): the agent dies in the middle of a commit, once its
     * region is handed out and before the data arrives. */
    const char *die = getenv("DUCTILE_TEST_AGENT_DIE");
    if (die && atol(die) == version)
        uv_timer_start(&a->die, on_die, 0, 0);
}

static void do_publish(agent_t *a, conn_t *c, const json_t *m)
{
    char err[512];
    app_t *app;
    int64_t version, nfiles;
    json_t *files = json_object_get(m, "files"), *man = json_object_get(m, "manifest");
    if (app_arg(m, &app, a, false, err, sizeof(err)) < 0 ||
        proto_int(m, "version", 1, INT64_MAX, &version, err, sizeof(err)) < 0 ||
        proto_int(m, "nfiles", 1, 1 << 20, &nfiles, err, sizeof(err)) < 0)
        return reply_err(c, "ck_publish: %s", err);
    if (!app)
        return reply_err(c, "ck_publish: %s", "no such application here");
    if (!json_is_array(files) || json_array_size(files) > (size_t)nfiles || !json_is_object(man))
        return reply_err(c, "ck_publish: %s", "files must be an array and manifest an object");
    size_t n = json_array_size(files);
    long *ids = calloc(n + 1, sizeof(long));
    if (!ids)
        return reply_err(c, "ck_publish: %s", "out of memory");
    for (size_t i = 0; i < n; i++)
        ids[i] = (long)json_integer_value(json_array_get(files, i));
    int rc = store_publish(&a->st, app, version, nfiles, ids, (int)n, man, err, sizeof(err));
    free(ids);
    if (rc < 0)
        return reply_err(c, "ck_publish: %s", err);
    a->st.commits++;
    aver_t *v = store_version(app, version);
    if (v && store_flush(&a->st, app, v, after_flush, &a->flushed) < 0)
        fprintf(stderr, "ductile-agent: %s version %ld: no thread to flush it\n", app->name,
                (long)version);
    /* the application hears of the versions that did not reach its files */
    json_t *failed = json_array();
    pthread_mutex_lock(&a->st.mu);
    for (int k = 0; k < app->nv; k++) {
        aver_t *o = app->v[k];
        if (o->complete && !o->flushing && o->flushed < 0 && !o->told) {
            json_array_append_new(failed, json_pack("{s:I,s:s}", "version", (json_int_t)o->version,
                                                    "error", strerror(-o->flushed)));
            o->told = true;
        }
    }
    pthread_mutex_unlock(&a->st.mu);
    conn_send_new(c, json_pack("{s:b,s:o}", "ok", 1, "not_flushed", failed));
}

static void do_latest(agent_t *a, conn_t *c, const json_t *m)
{
    char err[512];
    app_t *app;
    if (app_arg(m, &app, a, false, err, sizeof(err)) < 0)
        return reply_err(c, "ck_latest: %s", err);
    aver_t *v = store_latest(app);
    if (!v)
        return (void)conn_send_new(c, json_pack("{s:b,s:i}", "ok", 1, "version", 0));
    json_t *files = json_array();
    for (int i = 0; i < v->nheld; i++)
        json_array_append_new(files, json_integer(v->files[i].file));
    conn_send_new(c, json_pack("{s:b,s:I,s:I,s:o,s:O}", "ok", 1, "version", (json_int_t)v->version,
                               "nfiles", (json_int_t)v->nfiles, "files", files, "manifest",
                               v->manifest));
}

static void do_get(agent_t *a, conn_t *c, const json_t *m)
{
    char err[512];
    app_t *app;
    int64_t version, file;
    if (app_arg(m, &app, a, false, err, sizeof(err)) < 0 ||
        proto_int(m, "version", 1, INT64_MAX, &version, err, sizeof(err)) < 0 ||
        proto_int(m, "file", 0, 1 << 20, &file, err, sizeof(err)) < 0)
        return reply_err(c, "ck_get: %s", err);
    aver_t *v = app ? store_version(app, version) : NULL;
    afile_t *f = v && v->complete ? store_file(v, file) : NULL;
    if (!f)
        return reply_err(c, "ck_get: %s", "no such complete version or node file here");
    client_state_t *cs = conn_data(c);
    aver_t **pin = realloc(cs->pin, (size_t)(cs->npin + 1) * sizeof(*pin));
    if (pin)
        cs->pin = pin;
    app_t **pin_app = pin ? realloc(cs->pin_app, (size_t)(cs->npin + 1) * sizeof(*pin_app)) : NULL;
    if (pin_app)
        cs->pin_app = pin_app;
    if (!pin || !pin_app)
        return reply_err(c, "ck_get: %s", "out of memory");
    json_t *mr;
    if (grant_json(a, c, m, f, FAB_REMOTE_READ, &mr, err, sizeof(err)) < 0)
        return reply_err(c, "ck_get: %s", err);
    cs->pin[cs->npin] = v;
    cs->pin_app[cs->npin++] = app;
    pthread_mutex_lock(&a->st.mu);
    v->readers++;
    pthread_mutex_unlock(&a->st.mu);
    set_busy(a, c, true);
    a->st.moved += f->len;
    json_t *r = json_pack("{s:b,s:I}", "ok", 1, "bytes", (json_int_t)f->len);
    if (mr)
        json_object_set_new(r, "mr", mr);
    conn_send_new(c, r);
}

static long blob_arg(const json_t *m, const char *key, uint8_t *out)
{
    const char *t = json_string_value(json_object_get(m, key));
    if (!t || strlen(t) > (FAB_BLOB_MAX / 3) * 4)
        return -1;
    return b64_decode(t, out);
}

/* The client's endpoint as a peer of ours: the one of its last request, or added. */
static fab_peer_t *client_peer(agent_t *a, client_state_t *cs, const json_t *m, char *err,
                               size_t errlen)
{
    uint8_t blob[FAB_BLOB_MAX];
    long n = blob_arg(m, "fabric", blob);
    if (n <= 0) {
        snprintf(err, errlen, "no fabric address");
        return NULL;
    }
    if (cs->peer && n == cs->addrlen && !memcmp(blob, cs->addr, (size_t)n))
        return cs->peer;
    if (cs->peer)
        fab_peer_remove(a->st.fab, cs->peer);
    cs->peer = NULL;
    if (fab_peer_add(a->st.fab, blob, (size_t)n, &cs->peer, err, errlen) < 0)
        return NULL;
    memcpy(cs->addr, blob, (size_t)n);
    cs->addrlen = n;
    return cs->peer;
}

/* ck_pull (pull: into an open version) and ck_fill (out of a complete one). */
static void do_xfer(agent_t *a, conn_t *c, const json_t *m, bool pull)
{
    const char *fmt = pull ? "ck_pull: %s" : "ck_fill: %s";
    char err[512];
    app_t *app;
    int64_t version, file, off, len, loff;
    if (app_arg(m, &app, a, false, err, sizeof(err)) < 0 ||
        proto_int(m, "version", 1, INT64_MAX, &version, err, sizeof(err)) < 0 ||
        proto_int(m, "file", 0, 1 << 20, &file, err, sizeof(err)) < 0 ||
        proto_int(m, "off", 0, (int64_t)1 << 40, &off, err, sizeof(err)) < 0 ||
        proto_int(m, "len", 1, (int64_t)1 << 40, &len, err, sizeof(err)) < 0 ||
        proto_int(m, "loff", 0, (int64_t)1 << 40, &loff, err, sizeof(err)) < 0)
        return reply_err(c, fmt, err);
    aver_t *v = app ? store_version(app, version) : NULL;
    afile_t *f = v && v->complete != pull ? store_file(v, file) : NULL;
    if (!f)
        return reply_err(c, fmt, pull ? "no such open version or node file here"
                                      : "no such complete version or node file here");
    if ((size_t)off > f->len || (size_t)len > f->len - (size_t)off)
        return reply_err(c, fmt, "outside the node file's region");
    uint8_t blob[FAB_BLOB_MAX];
    long n = blob_arg(m, "mr", blob);
    fab_rmr_t *rmr = NULL;
    client_state_t *cs = conn_data(c);
    fab_peer_t *peer = client_peer(a, cs, m, err, sizeof(err));
    int rc = !peer ? -EINVAL
             : n <= 0 ? (snprintf(err, sizeof(err), "no region"), -EINVAL)
                      : fab_rmr_import(blob, (size_t)n, &rmr, err, sizeof(err));
    if (rc == 0)
        rc = pull ? fab_read(a->st.fab, peer, f->mr, (size_t)off, rmr, (size_t)loff, (size_t)len,
                             err, sizeof(err))
                  : fab_write(a->st.fab, peer, f->mr, (size_t)off, rmr, (size_t)loff,
                              (size_t)len, err, sizeof(err));
    fab_rmr_free(rmr);
    if (rc == -ETIMEDOUT || rc == -ENOTCONN) { /* abandoned: added again if it asks */
        fab_peer_remove(a->st.fab, cs->peer);
        cs->peer = NULL;
    }
    if (rc < 0)
        return reply_err(c, fmt, err);
    if (pull)
        a->pulled++;
    else
        a->filled++;
    conn_send_new(c, json_pack("{s:b}", "ok", 1));
}

static int by_version(const void *x, const void *y)
{
    long a = (*(aver_t *const *)x)->version, b = (*(aver_t *const *)y)->version;
    return a < b ? -1 : a > b;
}

static void do_list(agent_t *a, conn_t *c)
{
    json_t *apps = json_array();
    for (int i = 0; i < a->st.napps; i++) {
        app_t *app = a->st.apps[i];
        json_t *vs = json_array();
        qsort(app->v, (size_t)app->nv, sizeof(*app->v), by_version);
        for (int k = 0; k < app->nv; k++) {
            aver_t *v = app->v[k];
            size_t bytes = 0;
            for (int f = 0; f < v->nheld; f++)
                bytes += v->files[f].len;
            pthread_mutex_lock(&a->st.mu);
            int flushed = v->flushed, flushing = v->flushing;
            pthread_mutex_unlock(&a->st.mu);
            json_array_append_new(
                vs, json_pack("{s:I,s:b,s:i,s:I,s:s}", "version", (json_int_t)v->version,
                              "complete", v->complete, "files", v->nheld, "bytes",
                              (json_int_t)bytes, "flushed",
                              flushing ? "flushing" : flushed > 0 ? "yes" : flushed < 0 ? "failed" : "no"));
        }
        json_array_append_new(apps, json_pack("{s:s,s:o}", "app", app->name, "versions", vs));
    }
    conn_send_new(c, json_pack("{s:b,s:o,s:I,s:I,s:I}", "ok", 1, "apps", apps, "bytes",
                               (json_int_t)a->st.bytes, "pulled", (json_int_t)a->pulled,
                               "filled", (json_int_t)a->filled));
}

/* Its manager reads this at each heartbeat: twice as often keeps it at most half an
 * interval old with the default HeartbeatInterval (a few seconds). */
#define REPORT_MS 500

static void on_report(uv_timer_t *t)
{
    agent_t *a = t->data;
    store_report(&a->st, a->report_fd, ++a->report_seq);
}

static void on_message(conn_t *c, json_t *m, void *arg)
{
    agent_t *a = arg;
    const char *type;
    char err[256];
    if (proto_type(m, &type, err, sizeof(err)) < 0)
        return reply_err(c, "%s", err);
    if (!strcmp(type, "ck_hello")) {
        uint8_t blob[FAB_BLOB_MAX];
        size_t len = sizeof(blob);
        json_t *addr = fab_addr_blob(a->st.fab, blob, &len, err, sizeof(err)) == 0
                           ? blob_json(blob, len)
                           : NULL;
        if (!addr)
            return reply_err(c, "ck_hello: %s", err);
        conn_send_new(c, json_pack("{s:b,s:o,s:s}", "ok", 1, "fabric", addr, "provider",
                                   fab_provider_name(a->st.fab)));
    } else if (!strcmp(type, "ck_put")) {
        do_put(a, c, m);
    } else if (!strcmp(type, "ck_publish")) {
        do_publish(a, c, m);
    } else if (!strcmp(type, "ck_latest")) {
        do_latest(a, c, m);
    } else if (!strcmp(type, "ck_get")) {
        do_get(a, c, m);
    } else if (!strcmp(type, "ck_done")) {
        set_busy(a, c, false);
        store_revoke(&a->st, c); /* the keys it was given open nothing any more */
        unpin(a, conn_data(c));
        conn_send_new(c, json_pack("{s:b}", "ok", 1));
    } else if (!strcmp(type, "ck_release")) {
        app_t *app;
        if (app_arg(m, &app, a, false, err, sizeof(err)) < 0)
            return reply_err(c, "ck_release: %s", err);
        if (app) {
            app->release = true;
            store_prune(&a->st, app);
        }
        conn_send_new(c, json_pack("{s:b}", "ok", 1));
    } else if (!strcmp(type, "ck_pull") || !strcmp(type, "ck_fill")) {
        do_xfer(a, c, m, !strcmp(type, "ck_pull"));
    } else if (!strcmp(type, "ck_list")) {
        do_list(a, c);
    } else {
        reply_err(c, "unknown request '%s'", type);
    }
}

static void on_close(conn_t *c, void *arg)
{
    set_busy(arg, c, false);
    store_revoke(&((agent_t *)arg)->st, c);
    client_state_t *cs = conn_data(c);
    if (cs)
        unpin(arg, cs);
    if (cs && cs->peer)
        fab_peer_remove(((agent_t *)arg)->st.fab, cs->peer);
    free(cs);
}

static const conn_ops_t ops = {on_message, on_close};

/* Anyone who reaches the control port may connect: a peer that has not proved the key
 * within this is closed (the cluster's AuthTimeout default), and the refusals are logged
 * at most once a second, so that another user can neither hold connections open nor
 * fill the agent's log (a file in its manager's spool). No other limit: a pull-mode
 * job's processes each connect, and rank 0's connection idles between commits. */
#define AGENT_AUTH_TIMEOUT_S 10.0

static void on_connection(uv_stream_t *server, int status)
{
    agent_t *a = server->data;
    if (status < 0 || a->stopping)
        return;
    conn_cfg_t cc = {.auth = PROTO_AUTH_KEY, .key = a->key, .guard = a->guard};
    conn_t *c = conn_accept(server, &cc, &ops, a);
    client_state_t *cs = c ? calloc(1, sizeof(*cs)) : NULL;
    if (c && !cs)
        conn_close(c);
    else if (c)
        conn_set_data(c, cs);
}

static bool any_flushing(agent_t *a)
{
    bool any = false;
    pthread_mutex_lock(&a->st.mu);
    for (int i = 0; i < a->st.napps && !any; i++)
        for (int k = 0; k < a->st.apps[i]->nv && !any; k++)
            any = a->st.apps[i]->v[k]->flushing;
    pthread_mutex_unlock(&a->st.mu);
    return any;
}

/* Stopping: no new clients; the flushes under way end first (a version in memory only
 * would be lost with us). */
static void on_stop_wait(uv_timer_t *t)
{
    agent_t *a = t->data;
    if (any_flushing(a))
        return;
    uv_timer_stop(t);
    uv_stop(a->loop);
}

static void on_stop(uv_signal_t *h, int sig)
{
    (void)sig;
    agent_t *a = h->data;
    if (a->stopping)
        return;
    a->stopping = true;
    pthread_mutex_lock(&a->st.mu);
    a->st.stopping = true; /* flushes waiting for other agents' files stop waiting soon */
    pthread_mutex_unlock(&a->st.mu);
    uv_close((uv_handle_t *)&a->listen, NULL);
    /* the last version of each application that is not in the files yet (its flush
     * failed: a full disk, a directory gone) gets one more try */
    for (int i = 0; i < a->st.napps; i++) {
        aver_t *v = store_latest(a->st.apps[i]);
        pthread_mutex_lock(&a->st.mu);
        bool retry = v && v->flushed < 0 && !v->flushing;
        pthread_mutex_unlock(&a->st.mu);
        if (retry)
            store_flush(&a->st, a->st.apps[i], v, after_flush, &a->flushed);
    }
    uv_timer_start(&a->stop_wait, on_stop_wait, 0, 50);
}

/* What stopping loses: a last version that never reached the files. */
static void say_losses(agent_t *a)
{
    for (int i = 0; i < a->st.napps; i++) {
        aver_t *v = store_latest(a->st.apps[i]);
        if (v && v->flushed != 1)
            fprintf(stderr, "ductile-agent: version %ld of %s is lost: it never reached the "
                            "files\n", v->version, a->st.apps[i]->name);
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ductile-agent --key-file FILE [--listen ADDR:PORT] [--port-file FILE] "
               "[--memory SIZE]\n"
               "  --key-file FILE  the service's key (64 hex characters, mode 600); made if "
               "missing\n"
               "  --listen A:P     the address clients and the data path use (default "
               "127.0.0.1:0,\n"
               "                   a free port)\n"
               "  --port-file F    write the port listened on to F once ready\n"
               "  --memory SIZE    the most checkpoint data it holds, in MiB or with K, M, G\n"
               "                   (default: half of this host's memory); a node file "
               "that would pass it\n"
               "                   is written to the files as it comes\n"
               "  --report-fd N    keep a line on descriptor N saying what it holds and "
               "has moved\n"
               "                   (its manager, the node daemon, measures the node by it)\n");
}

int main(int argc, char **argv)
{
    static agent_t a;
    const char *keyfile = NULL, *listen = "127.0.0.1:0", *port_file = NULL, *memory = NULL;
    static const struct option opts[] = {{"key-file", required_argument, NULL, 'k'},
                                         {"listen", required_argument, NULL, 'l'},
                                         {"port-file", required_argument, NULL, 'p'},
                                         {"memory", required_argument, NULL, 'm'},
                                         {"report-fd", required_argument, NULL, 'r'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    a.report_fd = -1;
    long fd;
    for (int o; (o = getopt_long(argc, argv, "k:l:p:m:r:h", opts, NULL)) != -1;) {
        if (o == 'k')
            keyfile = optarg;
        else if (o == 'l')
            listen = optarg;
        else if (o == 'p')
            port_file = optarg;
        else if (o == 'm')
            memory = optarg;
        else if (o == 'r' && strparse_long(optarg, 0, 1 << 20, &fd) < 0)
            return fprintf(stderr, "ductile-agent: --report-fd %s: not a descriptor\n", optarg), 2;
        else if (o == 'r')
            a.report_fd = (int)fd;
        else if (o == 'h')
            return usage(stdout), 0;
        else
            return usage(stderr), 2;
    }
    if (optind < argc) {
        fprintf(stderr, "ductile-agent: '%s': no arguments besides the options\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (!keyfile) {
        fprintf(stderr, "ductile-agent: --key-file is required (the checkpoint service's key, "
                        "made if missing)\n");
        usage(stderr);
        return 2;
    }
    /* Tests only (test_ckpt_service): the agent of slot S of a job, as the checkpoint
     * service starts it (its key in <spool>/agent.<job>.<slot>.<tag>/), does not start. */
    const char *fail_slot = getenv("DUCTILE_TEST_AGENT_FAIL_SLOT"), *dir = strstr(keyfile, "/agent.");
    long long fj;
    int fs;
    if (fail_slot && dir && sscanf(dir, "/agent.%lld.%d.", &fj, &fs) == 2 && fs == atoi(fail_slot)) {
        fprintf(stderr, "ductile-agent: not starting (DUCTILE_TEST_AGENT_FAIL_SLOT=%d)\n", fs);
        return 1;
    }
    char err[512], host[256];
    int port;
    if (strparse_hostport(listen, host, sizeof(host), 0, &port) < 0) {
        fprintf(stderr, "ductile-agent: --listen %s: give an address and a port, such as "
                        "10.0.0.5:7300\n", listen);
        return 2;
    }
    /* what it may hold: --memory MiB, by default half of this host's memory */
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    a.st.limit = pages > 0 && psize > 0 ? (size_t)pages * (size_t)psize / 2 : (size_t)1 << 30;
    if (memory) {
        char *end;
        unsigned long long n = strtoull(memory, &end, 10);
        int shift = !*end ? 20 : !strcmp(end, "k") || !strcmp(end, "K") ? 10
                               : !strcmp(end, "m") || !strcmp(end, "M") ? 20
                               : !strcmp(end, "g") || !strcmp(end, "G") ? 30
                                                                        : -1;
        if (end == memory || memory[0] == '-' || shift < 0 || n == 0 || n > (1ULL << 30)) {
            fprintf(stderr, "ductile-agent: --memory %s: give what it may hold in MiB, or with "
                            "K, M or G, such as 4096 or 4G\n", memory);
            return 2;
        }
        a.st.limit = (size_t)n << shift;
    }
    if ((access(keyfile, F_OK) < 0 && proto_key_create(keyfile, err, sizeof(err)) < 0) ||
        proto_key_load(keyfile, a.key, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductile-agent: the service's key: %s\n", err);
        return 1;
    }
    int rc;
    pthread_mutex_init(&a.st.mu, NULL);
    struct sockaddr_storage sa;
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)&sa) < 0 &&
        uv_ip6_addr(host, port, (struct sockaddr_in6 *)&sa) < 0) {
        fprintf(stderr, "ductile-agent: --listen %s: '%s' is not an IP address\n", listen, host);
        return 2;
    }
    if (fab_open(NULL, host, &a.st.fab, err, sizeof(err)) < 0) {
        fprintf(stderr, "ductile-agent: no fabric endpoint on %s: %s\n", host, err);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    a.loop = uv_default_loop();
    uv_tcp_init(a.loop, &a.listen);
    a.listen.data = &a;
    rc = uv_tcp_bind(&a.listen, (struct sockaddr *)&sa, 0); /* sa: --listen's, above */
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&a.listen, 128, on_connection);
    if (rc < 0) {
        fprintf(stderr, "ductile-agent: cannot listen on %s: %s\n", listen, uv_strerror(rc));
        return 1;
    }
    int namelen = sizeof(sa);
    uv_tcp_getsockname(&a.listen, (struct sockaddr *)&sa, &namelen);
    int bound = ntohs(((struct sockaddr_in *)&sa)->sin_port);
    conn_limits_t lim = {.auth_timeout = AGENT_AUTH_TIMEOUT_S};
    if (!(a.guard = conn_guard_create(a.loop, &lim))) {
        fprintf(stderr, "ductile-agent: out of memory\n");
        return 1;
    }
    uv_idle_init(a.loop, &a.spin);
    a.spin.data = &a;
    uv_async_init(a.loop, &a.flushed, on_flushed);
    a.flushed.data = &a;
    uv_timer_init(a.loop, &a.die);
    uv_timer_init(a.loop, &a.stop_wait);
    uv_timer_init(a.loop, &a.report);
    a.report.data = &a;
    if (a.report_fd >= 0)
        uv_timer_start(&a.report, on_report, 0, REPORT_MS);
    a.stop_wait.data = &a;
    uv_signal_init(a.loop, &a.sigterm);
    a.sigterm.data = &a;
    uv_signal_start(&a.sigterm, on_stop, SIGTERM);
    uv_signal_init(a.loop, &a.sigint);
    a.sigint.data = &a;
    uv_signal_start(&a.sigint, on_stop, SIGINT);
    if (port_file) {
        char tmp[4200];
        snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
        FILE *f = fopen(tmp, "we");
        if (!f || fprintf(f, "%d\n", bound) < 0 || fclose(f) != 0 || rename(tmp, port_file) < 0) {
            fprintf(stderr, "ductile-agent: cannot write %s: %s\n", port_file, strerror(errno));
            return 1;
        }
    }
    fprintf(stderr, "ductile-agent: listening on %s:%d (fabric %s), holding at most %zu %s\n",
            host, bound, fab_provider_name(a.st.fab),
            a.st.limit >= (10u << 20) ? a.st.limit >> 20 : a.st.limit >> 10,
            a.st.limit >= (10u << 20) ? "MiB" : "KiB");
    uv_run(a.loop, UV_RUN_DEFAULT);
    say_losses(&a);
    fprintf(stderr, "ductile-agent: stopped (%zu bytes of checkpoints dropped from memory)\n",
            a.st.bytes);
    store_free(&a.st);
    fab_close(a.st.fab);
    return 0;
}
