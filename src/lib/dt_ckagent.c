/* libductile's side of the checkpoint agents (docs/checkpointing.md, "Agents").
 *
 * DUCTILE_CKPT_AGENTS names the agents (host:port,...), DUCTILE_CKPT_KEY_FILE the
 * service's key. Rank 0 alone holds the control connections (the authenticated
 * protocol); every process opens a libfabric endpoint and moves its own data, writing
 * into or reading from the region of the agent that holds its node's file (node file f
 * lives on agent f mod the number of agents). Any failure is reported to the caller,
 * which falls back to the file level.
 *
 * Push (the default): the process's RMA writes its data into the agent's region at a
 * commit and reads it back at a restart. Pull (seed 002 §4.1): the agent does both,
 * reading from and writing to the process's registered region; the process asks over a
 * connection of its own (rank 0 shares the service's key), tells the agent where its
 * region is and how many bytes each chunk has (the seed's extra step: the agent
 * learns the size before it reads), and progresses its endpoint until the agent
 * answers (tcp;ofi_rxm moves data only while the target progresses).
 *
 * Anyone who reaches an endpoint can post RMA to it, so nothing is open on it but what a
 * transfer under way needs (docs/security.md, "The checkpoint data path"): in push mode the agent opens a node
 * file's region to rank 0 for one commit (writes) or restart (reads), with a random key
 * that rank 0 hands to the job's processes over MPI; in pull mode the agent opens
 * nothing and a process opens the one chunk the agent's transfer moves. The processes'
 * staging and shared regions are otherwise their own transfers' buffers only. */
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
#define AG_STAGING (4L << 20) /* bytes moved per transfer by default */
/* Pull mode: the longest an agent's transfer of one chunk may take before we give up. */
#define AG_XFER_S 30.0
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
    client_t *dc;            /* pull mode: this process's own connection, for transfers */
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
    int pull;             /* ckag_set_transfer */
    long staging_len;
    char me[FAB_BLOB_MAX * 2]; /* our endpoint's address, base64 (pull requests) */
    ckag_stats_t st;
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
    if (a->dc)
        client_close(a->dc);
    a->dc = NULL;
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

void ckag_set_transfer(int pull, long staging)
{
    ag.pull = pull;
    ag.staging_len = staging > 0 ? staging : AG_STAGING;
}

long ckag_staging(void) { return ag.staging_len > 0 ? ag.staging_len : AG_STAGING; }

ckag_stats_t ckag_stats(void)
{
    ckag_stats_t st = ag.st;
    st.endpoints = ag.fab != NULL;
    st.regions += ag.staging != NULL;
    return st;
}

void ckag_share_key(MPI_Comm comm)
{
    int ok = ag.key_ok;
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (!ok)
        return;
    MPI_Bcast(ag.key, PROTO_KEY_LEN, MPI_BYTE, 0, comm);
    ag.key_ok = 1;
}

static void close_endpoint(void)
{
    if (ag.staging)
        fab_mr_close(ag.staging);
    ag.staging = NULL;
    if (ag.fab)
        fab_close(ag.fab);
    ag.fab = NULL;
    free(ag.stage_buf);
    ag.stage_buf = NULL;
    for (int i = 0; i < ag.n; i++)
        ag.a[i].peer = NULL; /* they were the closed endpoint's */
}

static int open_endpoint(char *err, size_t errlen)
{
    char node[64];
    int rc = local_addr(node, sizeof(node));
    if (rc < 0)
        return failf(err, errlen, rc, "no route to checkpoint agent %s", ag.a[0].host);
    if ((rc = fab_open(NULL, node, &ag.fab, err, errlen)) < 0) {
        ag.fab = NULL;
        return rc;
    }
    uint8_t blob[FAB_BLOB_MAX];
    size_t len = sizeof(blob);
    if ((rc = fab_addr_blob(ag.fab, blob, &len, err, errlen)) == 0)
        b64_encode(blob, len, ag.me);
    return rc;
}

int ckag_peers(const ckag_addr_t *addrs, int endpoint, int staging, char *err, size_t errlen)
{
    if (!endpoint)
        return 0;
    int rc = ag.fab ? 0 : open_endpoint(err, errlen);
    if (rc == 0 && staging && !ag.staging) {
        size_t len = (size_t)ckag_staging();
        ag.stage_buf = malloc(len);
        rc = ag.stage_buf ? 0 : failf(err, errlen, -ENOMEM, "out of memory");
        if (rc == 0) {
            memset(ag.stage_buf, 0, len);
            /* (our own transfers' buffer: in pull mode the agent gets each chunk of it
             * opened for its one transfer, agent_moves) */
            rc = fab_mr_reg(ag.fab, ag.stage_buf, len, FAB_LOCAL, &ag.staging, err, errlen);
        }
    }
    if (rc < 0) {
        ag.staging = NULL;
        close_endpoint();
        return rc;
    }
    for (int i = 0; i < ag.n; i++) {
        agent_t *a = &ag.a[i];
        if (a->peer && a->addrlen == addrs[i].len && !memcmp(a->addr, addrs[i].blob, a->addrlen))
            continue; /* the same agent as before */
        rc = fab_peer_add(ag.fab, addrs[i].blob, addrs[i].len, &a->peer, err, errlen);
        if (rc < 0) {
            a->peer = NULL;
            return rc;
        }
        memcpy(a->addr, addrs[i].blob, addrs[i].len);
        a->addrlen = addrs[i].len;
    }
    return 0;
}

int ckag_register(void *buf, size_t len, fab_mr_t **out, char *err, size_t errlen)
{
    if (!ag.fab)
        return failf(err, errlen, -ENOTCONN, "no fabric endpoint");
    int rc = fab_mr_reg(ag.fab, buf, len, FAB_LOCAL, out, err, errlen);
    if (rc == 0)
        ag.st.regions++;
    return rc;
}

void ckag_unregister(fab_mr_t *mr)
{
    if (!mr)
        return;
    fab_mr_close(mr);
    ag.st.regions--;
}

/* A ck_put's or ck_get's answer: in push mode the blob of the region the agent opened
 * to us for this transfer; in pull mode none (the agent opens nothing, it moves the
 * data itself). */
static int region_of(const json_t *r, int i, ckag_region_t *out, char *err, size_t errlen)
{
    out->len = 0;
    if (ag.pull)
        return 0;
    long n = blob_of(r, "mr", out->blob);
    if (n <= 0)
        return failf(err, errlen, -EPROTO, "checkpoint agent %s:%d: no region", ag.a[i].host,
                     ag.a[i].port);
    out->len = (size_t)n;
    return 0;
}

int ckag_put(long version, long file, long bytes, ckag_region_t *out, char *err, size_t errlen)
{
    int i = (int)(file % ag.n);
    json_t *r = NULL;
    int rc = call(i, json_pack("{s:s,s:s,s:I,s:I,s:I,s:b}", "type", "ck_put", "app", ag.app,
                               "version", (json_int_t)version, "file", (json_int_t)file,
                               "bytes", (json_int_t)bytes, "pull", ag.pull),
                  &r, err, errlen);
    if (rc < 0)
        return rc;
    ag.a[i].busy = 1;
    rc = region_of(r, i, out, err, errlen);
    json_decref(r);
    out->version = version;
    out->bytes = bytes;
    return rc;
}

/* Pull mode: a request on this process's own connection to the agent, answered once
 * the agent's transfer is over; meanwhile our endpoint is progressed (the agent reads
 * or writes our region). */
static int agent_call(agent_t *a, json_t *req, char *err, size_t errlen)
{
    int rc = req ? 0 : failf(err, errlen, -ENOMEM, "out of memory");
    if (rc == 0 && !a->dc && !ag.key_ok)
        rc = failf(err, errlen, -EACCES, "%s", ag.key_err[0] ? ag.key_err : "no key");
    if (rc == 0 && !a->dc &&
        (rc = client_open_tcp(a->host, a->port, ag.key, NULL, &a->dc, err, errlen)) < 0)
        a->dc = NULL;
    if (rc == 0)
        rc = client_send(a->dc, req, err, errlen);
    json_decref(req);
    json_t *r = NULL;
    double deadline = dt_mono() + AG_XFER_S;
    while (rc == 0 && !r) {
        /* (a short wait between progress calls: spinning without one was three times
         * slower with 4 processes and the agent on 2 cores, bench_ckpt) */
        rc = client_recv(a->dc, &r, 0.002, err, errlen);
        if (rc > 0) /* a message: the answer */
            rc = 0;
        else if (rc == -ETIMEDOUT && dt_mono() < deadline) {
            fab_progress(ag.fab);
            rc = 0;
        }
    }
    if (rc == 0 && !json_is_true(json_object_get(r, "ok")))
        rc = failf(err, errlen, -EREMOTE, "%s",
                   json_string_value(json_object_get(r, "error")) ?: "refused");
    json_decref(r);
    if (rc < 0 && rc != -EREMOTE && a->dc) {
        client_close(a->dc);
        a->dc = NULL;
    }
    if (rc == 0)
        ag.st.agent_xfers++;
    return rc;
}

/* Pull mode: the agent moves [roff, +len) of the node file from (FAB_PUSH: a commit)
 * or to (FAB_PULL: a restart) [loff, +len) of our registered region. */
static int agent_moves(agent_t *a, long file, const ckag_region_t *reg, fab_dir_t dir,
                       fab_mr_t *local, size_t loff, size_t roff, size_t len, char *err,
                       size_t errlen)
{
    /* The chunk alone is opened to the agent, for the one operation it makes (it reads
     * a commit's, writes a restart's), and closed once it answered: between transfers
     * nothing of this process is open to whoever reaches its endpoint. */
    fab_mr_t *chunk;
    int rc = fab_mr_reg(ag.fab, (char *)fab_mr_buf(local) + loff, len,
                        dir == FAB_PUSH ? FAB_REMOTE_READ : FAB_REMOTE_WRITE, &chunk, err, errlen);
    if (rc < 0)
        return rc;
    uint8_t blob[FAB_BLOB_MAX];
    size_t blen = sizeof(blob);
    rc = fab_mr_blob(chunk, blob, &blen, err, errlen);
    char mr[FAB_BLOB_MAX * 2];
    if (rc == 0) {
        b64_encode(blob, blen, mr);
        rc = agent_call(a, json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:s,s:s}", "type",
                                     dir == FAB_PUSH ? "ck_pull" : "ck_fill", "app", ag.app,
                                     "version", (json_int_t)reg->version, "file",
                                     (json_int_t)file, "off", (json_int_t)roff, "len",
                                     (json_int_t)len, "loff", (json_int_t)0, "fabric", ag.me,
                                     "mr", mr),
                        err, errlen);
    }
    /* (after a timeout the agent's transfer may still be under way: closing the
     * registration makes it fail rather than land later) */
    fab_mr_close(chunk);
    return rc;
}

/* One transfer between a registered local region and the node file's region, by us
 * (push) or by the agent (pull). */
static int move_one(agent_t *a, long file, const ckag_region_t *reg, fab_dir_t dir,
                    fab_mr_t *local, size_t loff, size_t roff, size_t len, char *err,
                    size_t errlen)
{
    if (ag.pull)
        return agent_moves(a, file, reg, dir, local, loff, roff, len, err, errlen);
    if (!reg->len) /* (a restart's regions asked for in pull mode, read after a switch) */
        return failf(err, errlen, -EPROTO, "the agent opened no region for this transfer");
    fab_rmr_t *rmr = NULL;
    int rc = fab_rmr_import(reg->blob, reg->len, &rmr, err, errlen);
    if (rc == 0)
        rc = dir == FAB_PUSH
                 ? fab_write(ag.fab, a->peer, local, loff, rmr, roff, len, err, errlen)
                 : fab_read(ag.fab, a->peer, local, loff, rmr, roff, len, err, errlen);
    fab_rmr_free(rmr);
    if (rc == 0)
        ag.st.proc_xfers++;
    return rc;
}

static int move_failed(agent_t *a, int rc, char *err, size_t errlen)
{
    if (rc == -ETIMEDOUT || rc == -ENOTCONN)
        a->peer = NULL; /* the provider abandoned it: added again at the next commit */
    char why[400];
    snprintf(why, sizeof(why), "%s", err);
    return failf(err, errlen, rc, "checkpoint agent %s:%d: %s", a->host, a->port, why);
}

/* Reads [roff, roff + len) of a node file's region into data, through the staging
 * region one chunk at a time (seed 002 §4.5). */
static int fetch(long file, const ckag_region_t *reg, void *data, long len, long roff, char *err,
                 size_t errlen)
{
    agent_t *a = &ag.a[file % ag.n];
    if (!a->peer || !ag.fab || !ag.staging)
        return failf(err, errlen, -ENOTCONN, "no endpoint for checkpoint agent %s:%d", a->host,
                     a->port);
    int rc = 0;
    size_t chunk = fab_mr_len(ag.staging);
    for (size_t done = 0; done < (size_t)(len > 0 ? len : 0) && rc == 0; done += chunk) {
        size_t n = (size_t)len - done < chunk ? (size_t)len - done : chunk;
        rc = move_one(a, file, reg, FAB_PULL, ag.staging, 0, (size_t)roff + done, n, err, errlen);
        if (rc == 0)
            memcpy((char *)data + done, ag.stage_buf, n);
    }
    return rc < 0 ? move_failed(a, rc, err, errlen) : 0;
}

int ckag_move_local(long file, const ckag_region_t *reg, fab_dir_t dir, fab_mr_t *local,
                    size_t loff, long roff, long len, char *err, size_t errlen)
{
    if (!reg && (file < 0 || file >= ag.nfiles))
        return failf(err, errlen, -EINVAL, "no node file %ld", file);
    reg = reg ? reg : &ag.reg[file];
    agent_t *a = &ag.a[file % ag.n];
    if (!a->peer || !ag.fab)
        return failf(err, errlen, -ENOTCONN, "no endpoint for checkpoint agent %s:%d", a->host,
                     a->port);
    int rc = len > 0 ? move_one(a, file, reg, dir, local, loff, (size_t)roff, (size_t)len, err,
                                errlen)
                     : 0;
    return rc < 0 ? move_failed(a, rc, err, errlen) : 0;
}

void ckag_pack(char *dst, long w, long wlen, char *const *bufs, const long *lens, int n)
{
    long at = 0;
    for (int i = 0; i < n; at += lens[i++]) {
        long lo = at > w ? at : w, hi = at + lens[i] < w + wlen ? at + lens[i] : w + wlen;
        if (hi > lo)
            memcpy(dst + (lo - w), bufs[i] + (lo - at), (size_t)(hi - lo));
    }
}

/* The pieces packed: one transfer per staging-sized window of the part, however many
 * pieces (variables) it holds. */
int ckag_push(long file, const ckag_region_t *reg, long off, char *const *bufs, const long *lens,
              int n, char *err, size_t errlen)
{
    agent_t *a = &ag.a[file % ag.n];
    if (!a->peer || !ag.fab || !ag.staging)
        return failf(err, errlen, -ENOTCONN, "no endpoint for checkpoint agent %s:%d", a->host,
                     a->port);
    long total = 0, chunk = (long)fab_mr_len(ag.staging);
    for (int i = 0; i < n; i++)
        total += lens[i];
    int rc = 0;
    for (long w = 0; w < total && rc == 0; w += chunk) {
        long wlen = total - w < chunk ? total - w : chunk;
        ckag_pack(ag.stage_buf, w, wlen, bufs, lens, n);
        rc = move_one(a, file, reg, FAB_PUSH, ag.staging, 0, (size_t)(off + w), (size_t)wlen,
                      err, errlen);
    }
    return rc < 0 ? move_failed(a, rc, err, errlen) : 0;
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
        rc = call(i, json_pack("{s:s,s:s,s:I,s:I,s:b}", "type", "ck_get", "app", ag.app,
                               "version", (json_int_t)v, "file", (json_int_t)f, "pull", ag.pull),
                  &g, err, errlen);
        if (rc == 0) {
            ag.a[i].busy = 1;
            rc = region_of(g, i, &reg[f], err, errlen);
            reg[f].bytes = (long)json_integer_value(json_object_get(g, "bytes"));
            reg[f].version = v;
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
    return fetch(file, &ag.reg[file], buf, len, off, err, errlen);
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
    ag.st = (ckag_stats_t){0}; /* the next session counts its own */
}

void ckag_shutdown(void)
{
    ckag_done();
    ckag_disconnect();
    ckag_set_regions(0, NULL);
    close_endpoint();
    ag.n = 0;
    ag.st = (ckag_stats_t){0};
}
