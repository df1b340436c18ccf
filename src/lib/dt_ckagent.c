/* libductile's side of the checkpoint agents (docs/checkpointing.md, "Agents").
 *
 * DUCTILE_CKPT_AGENTS names the agents (host:port,...), DUCTILE_CKPT_KEY_FILE the
 * service's key. Rank 0 alone holds the control connections (the authenticated
 * protocol); every process opens a libfabric endpoint and moves its own data, writing
 * into or reading from the region of the agent that holds its node's file (node file f
 * lives on agent f mod the number of agents). Any failure is reported to the caller,
 * which falls back to the file level. */
#include <arpa/inet.h>
#include <stdbool.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "b64.h"
#include "client.h"
#include "dt_ckagent.h"
#include "fabric.h"
#include "strparse.h"

#define AG_MAX 64
#define AG_STAGING (4L << 20) /* bytes moved per transfer (fab_copy_pipelined) */
/* After an agent failed, commits and restarts use the files for this long before they
 * try the agents again: an agent that is gone costs one attempt, not one per commit. */
#define AG_RETRY_S 30.0

typedef struct agent {
    char host[256];
    int port;
    client_t *c;             /* rank 0 */
    uint8_t addr[FAB_BLOB_MAX]; /* its fabric endpoint, as last announced */
    size_t addrlen;
    fab_peer_t *peer;        /* every process */
    int busy;                /* rank 0: a put or get not yet followed by ck_done */
} agent_t;

static struct {
    int n;
    agent_t a[AG_MAX];
    uint8_t key[PROTO_KEY_LEN];
    int key_ok;
    char key_path[PATH_MAX]; /* where key was read from */
    char key_err[300];
    char app[4096]; /* the application's checkpoint directory: its name for the agents */
    fab_t *fab;
    fab_mr_t *staging;
    char *stage_buf;
    double retry_at; /* rank 0: after a failure, the agents are left alone until then */
    char last_err[1024]; /* and why */
    /* after ckag_latest: every node file's region, for reads */
    long nfiles;
    ckag_region_t *reg;
} ag;

static int failf(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int failf(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return rc;
}

/* The list names the agents this process still has (ckag_suspend), in the same order. */
static bool same_agents(const char *app_dir, const char *list)
{
    if (!ag.fab || !list || strcmp(app_dir, ag.app))
        return false;
    char *copy = strdup(list), *save = NULL, host[256];
    int i = 0, port;
    bool same = copy != NULL;
    for (char *t = copy ? strtok_r(copy, ", ", &save) : NULL; t && same;
         t = strtok_r(NULL, ", ", &save), i++)
        same = i < ag.n && strparse_hostport(t, host, sizeof(host), 1, &port) == 0 &&
               !strcmp(host, ag.a[i].host) && port == ag.a[i].port;
    free(copy);
    return same && i == ag.n;
}

int ckag_configure(const char *app_dir, const char *list, char *err, size_t errlen)
{
    if (same_agents(app_dir, list)) {
        ag.retry_at = 0;
        return ag.n; /* its endpoint, peers and connections as they were */
    }
    ckag_shutdown(); /* anything a suspended session left */
    memset(&ag.a, 0, sizeof(ag.a));
    ag.n = 0;
    ag.retry_at = 0;
    snprintf(ag.app, sizeof(ag.app), "%s", app_dir);
    if (!list || !*list)
        return 0;
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return -ENOMEM;
    int rc = 0;
    for (char *t = strtok_r(copy, ", ", &save); t && rc == 0; t = strtok_r(NULL, ", ", &save)) {
        int prc = ag.n < AG_MAX ? strparse_hostport(t, ag.a[ag.n].host,
                                                     sizeof(ag.a[ag.n].host), 1, &ag.a[ag.n].port)
                                : 0;
        if (prc == -EINVAL)
            rc = failf(err, errlen, -EINVAL,
                       "DUCTILE_CKPT_AGENTS: '%s' is not host:port (such as 10.0.0.5:7300)", t);
        else if (prc == -ERANGE)
            rc = failf(err, errlen, -EINVAL,
                       "DUCTILE_CKPT_AGENTS: '%s': the port must be 1 to 65535", t);
        else if (ag.n == AG_MAX)
            rc = failf(err, errlen, -EINVAL, "DUCTILE_CKPT_AGENTS: more than %d agents", AG_MAX);
        else
            ag.n++;
    }
    free(copy);
    if (rc < 0) {
        ag.n = 0;
        return rc;
    }
    const char *kf = getenv("DUCTILE_CKPT_KEY_FILE");
    if (ag.key_ok && kf && !strcmp(kf, ag.key_path))
        return ag.n; /* read at the job's start: a node leaving a shrink removes the file
                      * where the nodes share it (the emulated cluster) */
    ag.key_ok = 0;
    snprintf(ag.key_path, sizeof(ag.key_path), "%s", kf ? kf : "");
    if (!kf || !*kf)
        snprintf(ag.key_err, sizeof(ag.key_err),
                 "DUCTILE_CKPT_KEY_FILE is not set (the checkpoint service's key)");
    else if (proto_key_load(kf, ag.key, ag.key_err, sizeof(ag.key_err)) == 0)
        ag.key_ok = 1;
    return ag.n;
}

int ckag_count(void) { return ag.n; }

static void drop_conn(agent_t *a)
{
    if (a->c)
        client_close(a->c);
    a->c = NULL;
    a->busy = 0;
}

void ckag_disconnect(void)
{
    for (int i = 0; i < ag.n; i++)
        drop_conn(&ag.a[i]);
}

/* rank 0: a request to agent i and its reply; the connection is dropped on failure. */
static int call(int i, json_t *req, json_t **reply, char *err, size_t errlen)
{
    agent_t *a = &ag.a[i];
    char why[600];
    int rc = 0;
    if (!a->c && !ag.key_ok)
        rc = failf(why, sizeof(why), -EACCES, "%s", ag.key_err);
    if (rc == 0)
        rc = client_call_keyed(&a->c, a->host, a->port, ag.key, req, reply, 30, why,
                               sizeof(why));
    json_decref(req);
    if (rc < 0) {
        drop_conn(a);
        ag.retry_at = dt_mono() + AG_RETRY_S;
        snprintf(ag.last_err, sizeof(ag.last_err), "checkpoint agent %s:%d: %s", a->host,
                 a->port, why);
        return failf(err, errlen, rc, "%s", ag.last_err);
    }
    return 0;
}

static long blob_of(const json_t *m, const char *key, uint8_t *out)
{
    const char *t = json_string_value(json_object_get(m, key));
    if (!t || strlen(t) > (FAB_BLOB_MAX / 3) * 4)
        return -1;
    return b64_decode(t, out);
}

int ckag_hello(ckag_addr_t *addrs, char *err, size_t errlen)
{
    if (dt_mono() < ag.retry_at)
        return failf(err, errlen, -EAGAIN, "%s", ag.last_err); /* tried again later */
    for (int i = 0; i < ag.n; i++) {
        json_t *r = NULL;
        int rc = call(i, json_pack("{s:s}", "type", "ck_hello"), &r, err, errlen);
        if (rc < 0)
            return rc;
        long n = blob_of(r, "fabric", addrs[i].blob);
        json_decref(r);
        if (n <= 0) {
            drop_conn(&ag.a[i]);
            return failf(err, errlen, -EPROTO, "checkpoint agent %s:%d: no fabric address",
                         ag.a[i].host, ag.a[i].port);
        }
        addrs[i].len = (size_t)n;
    }
    return 0;
}

/* The address this host uses to reach the first agent: where our endpoint listens. */
static int local_addr(char *out, size_t outlen)
{
    char ports[16];
    snprintf(ports, sizeof(ports), "%d", ag.a[0].port);
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *ai;
    if (getaddrinfo(ag.a[0].host, ports, &hints, &ai) != 0)
        return -EHOSTUNREACH;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = -EHOSTUNREACH;
    struct sockaddr_in me;
    socklen_t len = sizeof(me);
    if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
        getsockname(fd, (struct sockaddr *)&me, &len) == 0 &&
        inet_ntop(AF_INET, &me.sin_addr, out, (socklen_t)outlen))
        rc = 0;
    if (fd >= 0)
        close(fd);
    freeaddrinfo(ai);
    return rc;
}

int ckag_peers(const ckag_addr_t *addrs, char *err, size_t errlen)
{
    if (!ag.staging) { /* the endpoint and its staging region, both or neither */
        char node[64];
        int rc = local_addr(node, sizeof(node));
        if (rc < 0)
            return failf(err, errlen, rc, "no route to checkpoint agent %s", ag.a[0].host);
        if ((rc = fab_open(NULL, node, &ag.fab, err, errlen)) < 0) {
            ag.fab = NULL;
            return rc;
        }
        ag.stage_buf = malloc((size_t)AG_STAGING);
        rc = ag.stage_buf ? 0 : failf(err, errlen, -ENOMEM, "out of memory");
        if (rc == 0) {
            memset(ag.stage_buf, 0, (size_t)AG_STAGING);
            rc = fab_mr_reg(ag.fab, ag.stage_buf, (size_t)AG_STAGING, &ag.staging, err, errlen);
        }
        if (rc < 0) {
            ag.staging = NULL;
            fab_close(ag.fab);
            ag.fab = NULL;
            free(ag.stage_buf);
            ag.stage_buf = NULL;
            for (int i = 0; i < ag.n; i++)
                ag.a[i].peer = NULL; /* they were the closed endpoint's */
            return rc;
        }
    }
    for (int i = 0; i < ag.n; i++) {
        agent_t *a = &ag.a[i];
        if (a->peer && a->addrlen == addrs[i].len && !memcmp(a->addr, addrs[i].blob, a->addrlen))
            continue; /* the same agent as before */
        int rc = fab_peer_add(ag.fab, addrs[i].blob, addrs[i].len, &a->peer, err, errlen);
        if (rc < 0) {
            a->peer = NULL;
            return rc;
        }
        memcpy(a->addr, addrs[i].blob, addrs[i].len);
        a->addrlen = addrs[i].len;
    }
    return 0;
}

int ckag_put(long version, long file, long bytes, ckag_region_t *out, char *err, size_t errlen)
{
    int i = (int)(file % ag.n);
    json_t *r = NULL;
    int rc = call(i, json_pack("{s:s,s:s,s:I,s:I,s:I}", "type", "ck_put", "app", ag.app,
                               "version", (json_int_t)version, "file", (json_int_t)file,
                               "bytes", (json_int_t)bytes),
                  &r, err, errlen);
    if (rc < 0)
        return rc;
    ag.a[i].busy = 1;
    long n = blob_of(r, "mr", out->blob);
    json_decref(r);
    if (n <= 0)
        return failf(err, errlen, -EPROTO, "checkpoint agent %s:%d: no region", ag.a[i].host,
                     ag.a[i].port);
    out->len = (size_t)n;
    out->bytes = bytes;
    return 0;
}

/* Moves [roff, roff + len) of a node file's region from or to data. */
static int move(long file, const ckag_region_t *reg, fab_dir_t dir, void *data, long len,
                long roff, char *err, size_t errlen)
{
    agent_t *a = &ag.a[file % ag.n];
    if (!a->peer || !ag.fab)
        return failf(err, errlen, -ENOTCONN, "no endpoint for checkpoint agent %s:%d", a->host,
                     a->port);
    if (len <= 0)
        return 0;
    fab_rmr_t *rmr = NULL;
    int rc = fab_rmr_import(reg->blob, reg->len, &rmr, err, errlen);
    if (rc == 0)
        rc = fab_copy_pipelined(ag.fab, a->peer, dir, data, (size_t)len, ag.staging, rmr,
                                (size_t)roff, NULL, err, errlen);
    fab_rmr_free(rmr);
    if (rc == -ETIMEDOUT || rc == -ENOTCONN)
        a->peer = NULL; /* the provider abandoned it: added again at the next commit */
    if (rc < 0) {
        char why[400];
        snprintf(why, sizeof(why), "%s", err);
        failf(err, errlen, rc, "checkpoint agent %s:%d: %s", a->host, a->port, why);
    }
    return rc;
}

int ckag_push(long file, const ckag_region_t *reg, long off, char *const *bufs, const long *lens,
              int n, char *err, size_t errlen)
{
    for (int i = 0; i < n; off += lens[i++]) {
        int rc = move(file, reg, FAB_PUSH, bufs[i], lens[i], off, err, errlen);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int ckag_publish(long version, long nfiles, json_t *manifest, char *err, size_t errlen)
{
    for (int i = 0; i < ag.n && i < nfiles; i++) {
        json_t *files = json_array(), *r = NULL;
        for (long f = i; f < nfiles; f += ag.n)
            json_array_append_new(files, json_integer(f));
        int rc = call(i, json_pack("{s:s,s:s,s:I,s:I,s:o,s:O}", "type", "ck_publish", "app",
                                   ag.app, "version", (json_int_t)version, "nfiles",
                                   (json_int_t)nfiles, "files", files, "manifest", manifest),
                      &r, err, errlen);
        size_t k;
        json_t *f;
        json_array_foreach(json_object_get(r, "not_flushed"), k, f)
            fprintf(stderr, "libductile: checkpoint agent %s:%d could not write version %lld to "
                    "%s: %s (it holds it in memory only)\n", ag.a[i].host, ag.a[i].port,
                    (long long)json_integer_value(json_object_get(f, "version")), ag.app,
                    json_string_value(json_object_get(f, "error")) ?: "?");
        json_decref(r);
        if (rc < 0)
            return rc;
    }
    return 0;
}

void ckag_done(void)
{
    char err[64];
    for (int i = 0; i < ag.n; i++)
        if (ag.a[i].busy && ag.a[i].c) {
            json_t *r = NULL;
            if (call(i, json_pack("{s:s}", "type", "ck_done"), &r, err, sizeof(err)) == 0)
                ag.a[i].busy = 0;
            json_decref(r);
        }
}

int ckag_latest(long *version, char **manifest, long *nfiles, ckag_region_t **regions, char *err,
                size_t errlen)
{
    *version = 0;
    if (manifest)
        *manifest = NULL;
    if (regions)
        *regions = NULL;
    json_t **r = calloc((size_t)ag.n, sizeof(json_t *));
    if (!r)
        return -ENOMEM;
    int rc = 0;
    for (int i = 0; i < ag.n && rc == 0; i++)
        rc = call(i, json_pack("{s:s,s:s}", "type", "ck_latest", "app", ag.app), &r[i], err,
                  errlen);
    long v = rc == 0 ? (long)json_integer_value(json_object_get(r[0], "version")) : 0;
    long nf = v > 0 ? (long)json_integer_value(json_object_get(r[0], "nfiles")) : 0;
    /* usable only if every agent that holds a file of it has it as its latest */
    for (int i = 1; rc == 0 && v > 0 && i < ag.n && i < nf; i++)
        if ((long)json_integer_value(json_object_get(r[i], "version")) != v)
            v = 0;
    ckag_region_t *reg = regions && v > 0 && nf > 0 ? calloc((size_t)nf, sizeof(*reg)) : NULL;
    if (regions && v > 0 && !reg)
        rc = -ENOMEM;
    for (long f = 0; rc == 0 && reg && f < nf; f++) {
        json_t *g = NULL;
        int i = (int)(f % ag.n);
        rc = call(i, json_pack("{s:s,s:s,s:I,s:I}", "type", "ck_get", "app", ag.app, "version",
                               (json_int_t)v, "file", (json_int_t)f),
                  &g, err, errlen);
        if (rc == 0) {
            ag.a[i].busy = 1;
            long n = blob_of(g, "mr", reg[f].blob);
            reg[f].len = n > 0 ? (size_t)n : 0;
            reg[f].bytes = (long)json_integer_value(json_object_get(g, "bytes"));
            if (n <= 0)
                rc = failf(err, errlen, -EPROTO, "checkpoint agent: no region for file %ld", f);
        }
        json_decref(g);
    }
    if (rc == 0 && v > 0 && manifest) {
        *manifest = json_dumps(json_object_get(r[0], "manifest"), JSON_COMPACT);
        if (!*manifest)
            rc = -ENOMEM;
    }
    for (int i = 0; i < ag.n; i++)
        json_decref(r[i]);
    free(r);
    if (rc < 0) {
        free(reg);
        return rc;
    }
    *version = v;
    if (nfiles)
        *nfiles = nf;
    if (regions)
        *regions = reg;
    return 0;
}

void ckag_set_regions(long nfiles, ckag_region_t *regions)
{
    free(ag.reg);
    ag.reg = regions;
    ag.nfiles = regions ? nfiles : 0;
}

int ckag_has_regions(void) { return ag.reg != NULL; }

int ckag_read(long file, void *buf, long len, long off, char *err, size_t errlen)
{
    if (file < 0 || file >= ag.nfiles || off < 0 || off + len > ag.reg[file].bytes)
        return failf(err, errlen, -EINVAL, "node file %ld has no bytes [%ld, %ld)", file, off,
                     off + len);
    return move(file, &ag.reg[file], FAB_PULL, buf, len, off, err, errlen);
}

void ckag_release(void)
{
    char err[64];
    for (int i = 0; i < ag.n; i++) {
        json_t *r = NULL;
        if (dt_mono() >= ag.retry_at)
            call(i, json_pack("{s:s,s:s}", "type", "ck_release", "app", ag.app), &r, err,
                 sizeof(err));
        json_decref(r);
    }
}

void ckag_suspend(void)
{
    ckag_done();
    ckag_set_regions(0, NULL);
}

void ckag_shutdown(void)
{
    ckag_done();
    ckag_disconnect();
    ckag_set_regions(0, NULL);
    if (ag.staging)
        fab_mr_close(ag.staging);
    ag.staging = NULL;
    if (ag.fab)
        fab_close(ag.fab);
    ag.fab = NULL;
    free(ag.stage_buf);
    ag.stage_buf = NULL;
    for (int i = 0; i < ag.n; i++)
        ag.a[i].peer = NULL;
    ag.n = 0;
}
