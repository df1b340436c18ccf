/* The checkpoint data path (src/ckpt/fabric.h) between two processes on loopback: the
 * child plays the agent (registers a region and progresses), the parent the application
 * (writes, reads, copies through a staging region). Blobs go over a socketpair, as they
 * would over the service's own control channel.
 *
 * The agent is this binary run again (test_fabric --agent ...), not a bare fork: the
 * parent is multithreaded when it starts one (the sockets provider starts threads in
 * fab_open, just before), and a forked child may call only async-signal-safe functions
 * until it execs. Running fab_open in the bare child hung about 1 run in 15 under CPU
 * load with ASan: one of the parent's threads held a lock of ASan's allocator at the
 * fork, the child inherited it held, and the child's own libfabric threads blocked on it
 * for ever as they started. The agent then never accepted the connection, and
 * mr_modes' pipelined push timed out (whatever the timeout). */
#include "testutil.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ckpt/fabric.h"

#define MB (1024u * 1024u)
#define DEADLINE_MS 20000

/* DUCTILE_FAB_PROVIDER runs the tests on another provider than fab_open's choice. */
static const char *provider(void)
{
    const char *p = getenv("DUCTILE_FAB_PROVIDER");
    return p && *p ? p : NULL;
}

typedef enum agent_mode { AGENT_SERVE, AGENT_DIE_ON_DATA } agent_mode_t;

typedef struct agent {
    pid_t pid;
    int fd;
    fab_peer_t *peer;
    fab_rmr_t *rmr;
    char addr[FAB_BLOB_MAX]; /* its endpoint's blob: what anyone on the node can learn */
    size_t addrlen;
} agent_t;

static int64_t ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reproducible bytes: the same seed on both sides gives the same region. */
static void fill(uint8_t *buf, size_t len, uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (uint8_t)(x >> 24);
    }
}

/* The first offset where buf differs from fill(seed), or len. */
static size_t first_diff(const uint8_t *buf, size_t len, uint64_t seed)
{
    uint8_t *want = malloc(len);
    if (!want)
        return 0;
    fill(want, len, seed);
    size_t i = 0;
    while (i < len && buf[i] == want[i])
        i++;
    free(want);
    return i;
}

static int wait_fd(int fd, int64_t deadline)
{
    int64_t left = deadline - ms_now();
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return left > 0 && poll(&p, 1, (int)left) == 1 ? 0 : -ETIMEDOUT;
}

static int read_full(int fd, void *buf, size_t len, int64_t deadline)
{
    for (size_t got = 0; got < len;) {
        if (wait_fd(fd, deadline))
            return -ETIMEDOUT;
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n <= 0)
            return -EPIPE;
        got += (size_t)n;
    }
    return 0;
}

static int send_blob(int fd, const void *blob, uint32_t len)
{
    if (write(fd, &len, sizeof(len)) != sizeof(len) || write(fd, blob, len) != (ssize_t)len)
        return -EPIPE;
    return 0;
}

static int recv_blob(int fd, void *blob, size_t *len, int64_t deadline)
{
    uint32_t n;
    if (read_full(fd, &n, sizeof(n), deadline) || n > *len)
        return -EPROTO;
    *len = n;
    return read_full(fd, blob, n, deadline);
}

static int agent_announce(fab_t *f, fab_mr_t *mr, int fd)
{
    char blob[FAB_BLOB_MAX], err[256];
    size_t len = sizeof(blob);
    if (fab_addr_blob(f, blob, &len, err, sizeof(err)) || send_blob(fd, blob, (uint32_t)len))
        return -1;
    len = sizeof(blob);
    if (fab_mr_blob(mr, blob, &len, err, sizeof(err)) || send_blob(fd, blob, (uint32_t)len))
        return -1;
    return 0;
}

static int send_mr(fab_mr_t *mr, int fd)
{
    char blob[FAB_BLOB_MAX], err[256];
    size_t len = sizeof(blob);
    if (fab_mr_blob(mr, blob, &len, err, sizeof(err)) || send_blob(fd, blob, (uint32_t)len))
        return -1;
    return 0;
}

/* Serves until told: 'v' + seed verifies the region against fill(seed) and answers the
 * first differing offset; 'r' closes the region's registration (revokes its key) and
 * registers it again with the same access, answering the new blob; 'q' ends. The agent
 * only progresses its endpoint. */
static int agent_serve(fab_t *f, uint8_t *buf, size_t len, int access, fab_mr_t *mr, int fd)
{
    for (;;) {
        fab_progress(f);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 0) != 1)
            continue;
        char cmd, err[256];
        if (read(fd, &cmd, 1) != 1 || cmd == 'q')
            return 0;
        if (cmd == 'r') {
            fab_mr_close(mr);
            if (fab_mr_reg(f, buf, len, access, &mr, err, sizeof(err)) || send_mr(mr, fd))
                return 1;
            continue;
        }
        uint64_t seed, at;
        if (read_full(fd, &seed, sizeof(seed), ms_now() + DEADLINE_MS))
            return 1;
        at = first_diff(buf, len, seed);
        if (write(fd, &at, sizeof(at)) != sizeof(at))
            return 1;
    }
}

/* Dies as soon as the first bytes of a write have landed: the rest is in flight. */
static int agent_die_on_data(fab_t *f, volatile uint8_t *buf)
{
    int64_t deadline = ms_now() + DEADLINE_MS;
    while (!buf[0] && ms_now() < deadline)
        fab_progress(f);
    raise(SIGKILL);
    return 1;
}

static _Noreturn void agent_main(int fd, size_t len, uint64_t seed, agent_mode_t mode,
                                 int access)
{
    char err[256];
    fab_t *f;
    fab_mr_t *mr;
    uint8_t *buf = calloc(1, len);
    if (!buf || fab_open(provider(), "127.0.0.1", &f, err, sizeof(err)))
        _exit(2);
    if (seed)
        fill(buf, len, seed);
    if (fab_mr_reg(f, buf, len, access, &mr, err, sizeof(err)) || agent_announce(f, mr, fd))
        _exit(3);
    _exit(mode == AGENT_SERVE ? agent_serve(f, buf, len, access, mr, fd)
                              : agent_die_on_data(f, buf));
}

/* Starts an agent with a region of len bytes (fill(seed), zeros for seed 0) open to its
 * peers as access says, and imports its blobs into f. */
static agent_t agent_start_as(fab_t *f, size_t len, uint64_t seed, agent_mode_t mode,
                              int access)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    /* everything the child needs is prepared before the fork (see the top of the file) */
    char name[] = "test_fabric", flag[] = "--agent", afd[16], alen[32], aseed[32], amode[16],
         aacc[16];
    snprintf(afd, sizeof(afd), "%d", sv[1]);
    snprintf(alen, sizeof(alen), "%zu", len);
    snprintf(aseed, sizeof(aseed), "%llu", (unsigned long long)seed);
    snprintf(amode, sizeof(amode), "%d", (int)mode);
    snprintf(aacc, sizeof(aacc), "%d", access);
    char *args[] = {name, flag, afd, alen, aseed, amode, aacc, NULL};
    agent_t a = {.pid = fork()};
    assert_true(a.pid >= 0);
    if (!a.pid) {
        close(sv[0]);
        execv("/proc/self/exe", args);
        _exit(127);
    }
    close(sv[1]);
    a.fd = sv[0];
    char blob[FAB_BLOB_MAX], err[256] = "";
    size_t n = sizeof(blob);
    int64_t deadline = ms_now() + DEADLINE_MS;
    assert_int_equal(recv_blob(a.fd, blob, &n, deadline), 0);
    assert_int_equal(fab_peer_add(f, blob, n, &a.peer, err, sizeof(err)), 0);
    memcpy(a.addr, blob, n);
    a.addrlen = n;
    n = sizeof(blob);
    assert_int_equal(recv_blob(a.fd, blob, &n, deadline), 0);
    assert_int_equal(fab_rmr_import(blob, n, &a.rmr, err, sizeof(err)), 0);
    assert_int_equal(fab_rmr_len(a.rmr), len);
    return a;
}

static agent_t agent_start(fab_t *f, size_t len, uint64_t seed, agent_mode_t mode)
{
    return agent_start_as(f, len, seed, mode, FAB_REMOTE_READ | FAB_REMOTE_WRITE);
}

/* The agent's peer again after a transfer that timed out (fab.h: it was abandoned). */
static void agent_reconnect(fab_t *f, agent_t *a)
{
    char err[256];
    fab_peer_remove(f, a->peer);
    assert_int_equal(fab_peer_add(f, a->addr, a->addrlen, &a->peer, err, sizeof(err)), 0);
}

/* The agent revokes its region's key and registers it again: *old keeps the old blob,
 * a->rmr is the new one. */
static void agent_reregister(agent_t *a, fab_rmr_t **old)
{
    char cmd = 'r', blob[FAB_BLOB_MAX], err[256];
    size_t n = sizeof(blob);
    assert_int_equal(write(a->fd, &cmd, 1), 1);
    assert_int_equal(recv_blob(a->fd, blob, &n, ms_now() + DEADLINE_MS), 0);
    *old = a->rmr;
    assert_int_equal(fab_rmr_import(blob, n, &a->rmr, err, sizeof(err)), 0);
}

/* The first offset where the agent's region differs from fill(seed). */
static uint64_t agent_verify(agent_t *a, uint64_t seed)
{
    uint64_t at = 0;
    char cmd = 'v';
    assert_int_equal(write(a->fd, &cmd, 1), 1);
    assert_int_equal(write(a->fd, &seed, sizeof(seed)), sizeof(seed));
    assert_int_equal(read_full(a->fd, &at, sizeof(at), ms_now() + DEADLINE_MS), 0);
    return at;
}

static int agent_stop(agent_t *a)
{
    char cmd = 'q';
    int status = 0;
    (void)!send(a->fd, &cmd, 1, MSG_NOSIGNAL); /* the agent may be dead */
    close(a->fd);
    assert_int_equal(waitpid(a->pid, &status, 0), a->pid);
    fab_rmr_free(a->rmr);
    return status;
}

static fab_t *open_local(void)
{
    char err[256] = "";
    fab_t *f = NULL;
    int rc = fab_open(provider(), "127.0.0.1", &f, err, sizeof(err));
    if (rc)
        fail_msg("fab_open: %s", err);
    /* a margin for sanitizer builds beside other tests; the tests of timeouts set their
     * own. (The mr_modes push that timed out at the default 10 s, and then at 60 s, was
     * the forked agent's deadlock described at the top of the file, not starvation.) */
    fab_set_timeout(f, 60000);
    return f;
}

/* The application's side: an endpoint and one registered region of len bytes. */
typedef struct side {
    fab_t *f;
    uint8_t *buf;
    fab_mr_t *mr;
} side_t;

static side_t side_open(size_t len, uint64_t seed)
{
    char err[256] = "";
    side_t s = {.f = open_local(), .buf = calloc(1, len)};
    assert_non_null(s.buf);
    if (seed)
        fill(s.buf, len, seed);
    if (fab_mr_reg(s.f, s.buf, len, FAB_LOCAL, &s.mr, err, sizeof(err)))
        fail_msg("fab_mr_reg: %s", err);
    return s;
}

static void side_close(side_t *s)
{
    fab_mr_close(s->mr);
    fab_close(s->f);
    free(s->buf);
}

static void push_pull(void **state)
{
    const size_t len = 4 * MB;
    char err[256] = "";
    side_t me = side_open(len, 11);
    fab_t *f = me.f;
    fab_mr_t *mr = me.mr;
    uint8_t *buf = me.buf;
    agent_t a = agent_start(f, len, 22, AGENT_SERVE);

    int rc = fab_read(f, a.peer, mr, 0, a.rmr, 0, len, err, sizeof(err));
    if (rc)
        fail_msg("fab_read: %s", err);
    assert_int_equal(first_diff(buf, len, 22), len);

    fill(buf, len, 33);
    if ((rc = fab_write(f, a.peer, mr, 0, a.rmr, 0, len, err, sizeof(err))))
        fail_msg("fab_write: %s", err);
    assert_int_equal(agent_verify(&a, 33), len);

    /* offsets on both sides: the agent's second half from our first */
    fill(buf, len, 44);
    assert_int_equal(fab_write(f, a.peer, mr, 0, a.rmr, len / 2, len / 2, err, sizeof(err)), 0);
    assert_int_equal(fab_read(f, a.peer, mr, len / 2, a.rmr, len / 2, len / 2, err,
                              sizeof(err)), 0);
    assert_memory_equal(buf, buf + len / 2, len / 2);

    assert_int_equal(agent_stop(&a), 0);
    side_close(&me);
}

static void pipelined(void **state)
{
    const size_t len = 8 * MB + 12345, stage_len = len / 8;
    char err[256] = "";
    side_t stage = side_open(stage_len, 0);
    fab_t *f = stage.f;
    fab_mr_t *mr = stage.mr;
    uint8_t *data = malloc(len);
    assert_non_null(data);
    agent_t a = agent_start(f, len, 0, AGENT_SERVE);
    size_t want = (len + stage_len - 1) / stage_len, n = 0;
    assert_int_equal(want, 9); /* 8 whole chunks and the remainder */

    fill(data, len, 55);
    uint64_t ops = fab_ops(f);
    int rc = fab_copy_pipelined(f, a.peer, FAB_PUSH, data, len, mr, a.rmr, 0, &n, err,
                                sizeof(err));
    if (rc)
        fail_msg("push: %s", err);
    assert_int_equal(n, want);
    assert_int_equal(fab_ops(f) - ops, want);
    assert_int_equal(agent_verify(&a, 55), len);

    memset(data, 0, len);
    ops = fab_ops(f);
    assert_int_equal(fab_copy_pipelined(f, a.peer, FAB_PULL, data, len, mr, a.rmr, 0, &n, err,
                                        sizeof(err)), 0);
    assert_int_equal(n, want);
    assert_int_equal(fab_ops(f) - ops, want);
    assert_int_equal(first_diff(data, len, 55), len);

    assert_int_equal(agent_stop(&a), 0);
    side_close(&stage);
    free(data);
}

/* The agent dies with most of a 64 MB write in flight: the writer gets an error
 * within its timeout rather than waiting for ever. */
static void peer_killed(void **state)
{
    const size_t len = 64 * MB;
    const int timeout_ms = 3000;
    char err[256] = "";
    side_t me = side_open(len, 66);
    fab_t *f = me.f;
    me.buf[0] = 1; /* what the agent waits for */
    agent_t a = agent_start(f, len, 0, AGENT_DIE_ON_DATA);
    fab_set_timeout(f, timeout_ms);

    int64_t t0 = ms_now();
    int rc = fab_write(f, a.peer, me.mr, 0, a.rmr, 0, len, err, sizeof(err));
    int64_t took = ms_now() - t0;
    print_message("write to a dying peer: %d (%s) after %lld ms\n", rc, err, (long long)took);
    assert_true(rc == -EIO || rc == -ETIMEDOUT);
    assert_true(took < timeout_ms + 1000);
    assert_int_equal(fab_write(f, a.peer, me.mr, 0, a.rmr, 0, 1, err, sizeof(err)), -ENOTCONN);

    int status = agent_stop(&a);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    /* the abandoned write does not hold up transfers to the other agents */
    const size_t small = MB;
    fill(me.buf, small, 77);
    agent_t b = agent_start(f, small, 0, AGENT_SERVE);
    rc = fab_write(f, b.peer, me.mr, 0, b.rmr, 0, small, err, sizeof(err));
    if (rc)
        fail_msg("write to a live agent after a dead one: %s", err);
    assert_int_equal(agent_verify(&b, 77), small);
    assert_int_equal(agent_stop(&b), 0);
    side_close(&me);
}

/* A region key the agent never issued: the provider fails the write (or it times out),
 * and the data path says so rather than reporting success. */
static void bad_key(void **state)
{
    const size_t len = 64 * 1024;
    char err[256] = "", blob[FAB_BLOB_MAX];
    side_t me = side_open(len, 88);
    agent_t a = agent_start(me.f, len, 0, AGENT_SERVE);
    fab_set_timeout(me.f, 1000);
    size_t n = sizeof(blob);
    fab_rmr_t *forged;
    /* a key of ours, not the agent's: a region of this side, closed again */
    uint8_t other[64];
    fab_mr_t *mine;
    if (fab_mr_reg(me.f, other, sizeof(other), FAB_REMOTE_WRITE, &mine, err, sizeof(err)))
        fail_msg("fab_mr_reg: %s", err);
    assert_int_equal(fab_mr_blob(mine, blob, &n, err, sizeof(err)), 0);
    fab_mr_close(mine);
    assert_int_equal(fab_rmr_import(blob, n, &forged, err, sizeof(err)), 0);
    int rc = fab_write(me.f, a.peer, me.mr, 0, forged, 0, sizeof(other), err, sizeof(err));
    print_message("write with a forged key: %d (%s)\n", rc, err);
    assert_true(rc == -EIO || rc == -ETIMEDOUT);
    fab_rmr_free(forged);
    assert_int_equal(agent_stop(&a), 0);
    side_close(&me);
}

/* What an attacker on the node does (the security issue): it finds the agent's data
 * port (ss -tln), opens an endpoint of its own, never gets a region's blob, and tries the
 * keys a naive registration hands out (1, 2, ...) at offset 0 of the region, reading and
 * writing. Every guess must fail, the region must hold what it held, and the agent must
 * still serve its own peer. The blob's layout (fabric.c's mr_wire_t) is public knowledge:
 * the source is. */
#define GUESSES 4
#define GUESS_TIMEOUT_MS 300

typedef struct mr_wire {
    uint32_t magic, pad;
    uint64_t key, base, len;
} mr_wire_t;

static fab_rmr_t *forge(uint64_t key, uint64_t len)
{
    mr_wire_t w = {.magic = 0x464d5231u, .key = key, .len = len};
    char err[256];
    fab_rmr_t *r = NULL;
    assert_int_equal(fab_rmr_import(&w, sizeof(w), &r, err, sizeof(err)), 0);
    return r;
}

/* n guesses of keys 1..n, reading (FAB_PULL) or writing; the number that succeeded */
static int guess_keys(fab_t *evil, const void *addr, size_t addrlen, fab_dir_t dir, size_t len,
                      int n)
{
    char err[256];
    uint8_t *buf = calloc(1, len);
    assert_non_null(buf);
    fill(buf, len, 99);
    fab_mr_t *mr;
    if (fab_mr_reg(evil, buf, len, FAB_LOCAL, &mr, err, sizeof(err)))
        fail_msg("fab_mr_reg: %s", err);
    int got = 0;
    for (uint64_t key = 1; key <= (uint64_t)n; key++) {
        fab_peer_t *p;
        /* (a peer whose transfer timed out is abandoned: the attacker adds it again) */
        assert_int_equal(fab_peer_add(evil, addr, addrlen, &p, err, sizeof(err)), 0);
        fab_rmr_t *r = forge(key, len);
        int rc = dir == FAB_PUSH ? fab_write(evil, p, mr, 0, r, 0, len, err, sizeof(err))
                                 : fab_read(evil, p, mr, 0, r, 0, len, err, sizeof(err));
        print_message("%s with guessed key %llu: %d (%s)\n", dir == FAB_PUSH ? "write" : "read",
                      (unsigned long long)key, rc, rc ? err : "done");
        got += rc == 0;
        fab_rmr_free(r);
        fab_peer_remove(evil, p);
    }
    fab_mr_close(mr);
    free(buf);
    return got;
}

static void third_party_guesses(void **state)
{
    const size_t len = 4096;
    char err[256] = "";
    side_t me = side_open(len, 0);
    agent_t a = agent_start(me.f, len, 22, AGENT_SERVE);
    fab_t *evil = open_local();
    fab_set_timeout(evil, GUESS_TIMEOUT_MS);
    int reads = guess_keys(evil, a.addr, a.addrlen, FAB_PULL, len, GUESSES);
    int writes = guess_keys(evil, a.addr, a.addrlen, FAB_PUSH, len, GUESSES);
    /* and the application's endpoint (pull mode's target), whose region is its own
     * transfers' buffer: the refused guesses it finds at its next progress do not count
     * as failures of its own transfers */
    char mine[FAB_BLOB_MAX];
    size_t minelen = sizeof(mine);
    assert_int_equal(fab_addr_blob(me.f, mine, &minelen, err, sizeof(err)), 0);
    reads += guess_keys(evil, mine, minelen, FAB_PULL, len, 2);
    writes += guess_keys(evil, mine, minelen, FAB_PUSH, len, 2);
    fab_close(evil);
    assert_int_equal(reads, 0);
    assert_int_equal(writes, 0);
    /* the agent's region is intact, and its own peer still reads it */
    assert_int_equal(agent_verify(&a, 22), len);
    if (fab_read(me.f, a.peer, me.mr, 0, a.rmr, 0, len, err, sizeof(err)))
        fail_msg("the agent's own peer after the attack: %s", err);
    assert_int_equal(first_diff(me.buf, len, 22), len);
    fill(me.buf, len, 23);
    if (fab_write(me.f, a.peer, me.mr, 0, a.rmr, 0, len, err, sizeof(err)))
        fail_msg("the agent's own peer's write after the attack: %s", err);
    assert_int_equal(agent_verify(&a, 23), len);
    assert_int_equal(agent_stop(&a), 0);
    side_close(&me);
}

/* A peer holding a region's blob may do only what the region was opened for: one a
 * commit writes cannot be read with its key, one a restart reads cannot be written. */
static void access_per_operation(void **state)
{
    const size_t len = 4096;
    char err[256] = "", blob[FAB_BLOB_MAX];
    side_t me = side_open(len, 31);
    fab_set_timeout(me.f, GUESS_TIMEOUT_MS);
    agent_t w = agent_start_as(me.f, len, 0, AGENT_SERVE, FAB_REMOTE_WRITE);
    if (fab_write(me.f, w.peer, me.mr, 0, w.rmr, 0, len, err, sizeof(err)))
        fail_msg("write into a region opened for writing: %s", err);
    assert_int_equal(agent_verify(&w, 31), len);
    memset(me.buf, 0, len);
    int rc = fab_read(me.f, w.peer, me.mr, 0, w.rmr, 0, len, err, sizeof(err));
    print_message("read of a region opened for writing: %d (%s)\n", rc, err);
    assert_true(rc == -EIO || rc == -ETIMEDOUT);
    for (size_t i = 0; i < len; i++)
        assert_int_equal(me.buf[i], 0);
    assert_int_equal(agent_stop(&w), 0);

    agent_t r = agent_start_as(me.f, len, 32, AGENT_SERVE, FAB_REMOTE_READ);
    if (fab_read(me.f, r.peer, me.mr, 0, r.rmr, 0, len, err, sizeof(err)))
        fail_msg("read of a region opened for reading: %s", err);
    assert_int_equal(first_diff(me.buf, len, 32), len);
    fill(me.buf, len, 33);
    rc = fab_write(me.f, r.peer, me.mr, 0, r.rmr, 0, len, err, sizeof(err));
    print_message("write into a region opened for reading: %d (%s)\n", rc, err);
    assert_true(rc == -EIO || rc == -ETIMEDOUT);
    assert_int_equal(agent_verify(&r, 32), len);
    assert_int_equal(agent_stop(&r), 0);

    /* the buffer of our own transfers has no blob to give */
    size_t n = sizeof(blob);
    assert_int_equal(fab_mr_blob(me.mr, blob, &n, err, sizeof(err)), -EPERM);
    side_close(&me);
}

/* A key opens nothing once its registration is closed (the agent revokes it when the
 * transfer ends); the same memory registered again has another key. */
static void revoked(void **state)
{
    const size_t len = 4096;
    char err[256] = "";
    side_t me = side_open(len, 41);
    agent_t a = agent_start(me.f, len, 0, AGENT_SERVE);
    fab_set_timeout(me.f, GUESS_TIMEOUT_MS);
    if (fab_write(me.f, a.peer, me.mr, 0, a.rmr, 0, len, err, sizeof(err)))
        fail_msg("write: %s", err);
    fab_rmr_t *old;
    agent_reregister(&a, &old);
    fill(me.buf, len, 42);
    int rc = fab_write(me.f, a.peer, me.mr, 0, old, 0, len, err, sizeof(err));
    print_message("write with a revoked key: %d (%s)\n", rc, err);
    assert_true(rc == -EIO || rc == -ETIMEDOUT);
    agent_reconnect(me.f, &a);
    assert_int_equal(agent_verify(&a, 41), len);
    if (fab_write(me.f, a.peer, me.mr, 0, a.rmr, 0, len, err, sizeof(err)))
        fail_msg("write with the new key: %s", err);
    assert_int_equal(agent_verify(&a, 42), len);
    fab_rmr_free(old);
    assert_int_equal(agent_stop(&a), 0);
    side_close(&me);
}

/* Keys are 64 random bits where the provider lets us choose them: not 1, 2, 3, ... */
static void keys_random(void **state)
{
    enum { N = 16 };
    char err[256] = "";
    fab_t *f = open_local();
    uint8_t buf[64];
    fab_mr_t *mr[N];
    uint64_t keys[N];
    for (int i = 0; i < N; i++) {
        mr_wire_t w;
        size_t n = sizeof(w);
        if (fab_mr_reg(f, buf, sizeof(buf), FAB_REMOTE_READ, &mr[i], err, sizeof(err)))
            fail_msg("fab_mr_reg: %s", err);
        assert_int_equal(fab_mr_blob(mr[i], &w, &n, err, sizeof(err)), 0);
        assert_int_equal(n, sizeof(w));
        keys[i] = w.key;
        /* (one chance in 2^48 that a random key is this small) */
        assert_true(keys[i] >= (1u << 16));
        for (int k = 0; k < i; k++)
            assert_true(keys[k] != keys[i]);
    }
    for (int i = 0; i < N; i++)
        fab_mr_close(mr[i]);
    fab_close(f);
}

/* The registration modes verbs and cxi need (keys chosen by the provider, regions
 * addressed by virtual address, local descriptors), which no provider in the sandbox
 * needs: sockets honours them when asked (DUCTILE_FAB_MR_MODE, fabric.c), tcp;ofi_rxm
 * does not (FI_MR_VIRT_ADDR asked of it loses its transfers), and neither can bind a
 * region to an endpoint (FI_MR_ENDPOINT, which stays untested here). */
static void mr_modes(void **state)
{
    assert_int_equal(setenv("DUCTILE_FAB_PROVIDER", "sockets", 1), 0);
    assert_int_equal(setenv("DUCTILE_FAB_MR_MODE", "0x74", 1), 0); /* LOCAL VIRT ALLOC PROV */
    push_pull(state);
    pipelined(state);
    unsetenv("DUCTILE_FAB_MR_MODE");
    unsetenv("DUCTILE_FAB_PROVIDER");
}

/* An interface name stands for its address; an unknown name is an unknown host. */
static void open_by_interface(void **state)
{
    char err[256] = "";
    fab_t *f = NULL;
    int rc = fab_open(provider(), "lo", &f, err, sizeof(err));
    if (rc)
        fail_msg("fab_open(lo): %s", err);
    fab_close(f);
    assert_int_not_equal(fab_open(provider(), "no-such-host.invalid", &f, err, sizeof(err)), 0);
    assert_true(err[0]);
}

static void bad_input(void **state)
{
    char err[256] = "", blob[FAB_BLOB_MAX] = {0};
    fab_t *f = open_local();
    fab_rmr_t *r;
    fab_peer_t *p;
    assert_non_null(fab_provider_name(f));
    assert_int_equal(fab_rmr_import(blob, 32, &r, err, sizeof(err)), -EINVAL);
    assert_int_equal(fab_peer_add(f, blob, 24, &p, err, sizeof(err)), -EINVAL);
    size_t small = 4;
    assert_int_equal(fab_addr_blob(f, blob, &small, err, sizeof(err)), -ENOSPC);
    assert_int_not_equal(fab_open("no-such-provider", NULL, &f, err, sizeof(err)), 0);
    assert_true(err[0]);

    /* a range past either region's end is refused before anything is posted */
    uint8_t local[64];
    fab_mr_t *mr;
    size_t n = sizeof(blob);
    assert_int_equal(fab_mr_reg(f, local, sizeof(local), FAB_REMOTE_READ, &mr, err, sizeof(err)),
                     0);
    assert_int_equal(fab_mr_blob(mr, blob, &n, err, sizeof(err)), 0);
    assert_int_equal(fab_rmr_import(blob, n, &r, err, sizeof(err)), 0);
    n = sizeof(blob);
    assert_int_equal(fab_addr_blob(f, blob, &n, err, sizeof(err)), 0);
    assert_int_equal(fab_peer_add(f, blob, n, &p, err, sizeof(err)), 0);
    assert_int_equal(fab_write(f, p, mr, 32, r, 0, 64, err, sizeof(err)), -EINVAL);
    assert_int_equal(fab_read(f, p, mr, 0, r, 1, 64, err, sizeof(err)), -EINVAL);
    assert_int_equal(fab_ops(f), 0);
    fab_rmr_free(r);
    fab_mr_close(mr);
    fab_close(f);
}

int main(int argc, char **argv)
{
    if (argc == 7 && !strcmp(argv[1], "--agent")) /* agent_start's child */
        agent_main(atoi(argv[2]), strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10),
                   (agent_mode_t)atoi(argv[5]), atoi(argv[6]));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_input),
        cmocka_unit_test(bad_key),
        cmocka_unit_test(third_party_guesses),
        cmocka_unit_test(access_per_operation),
        cmocka_unit_test(revoked),
        cmocka_unit_test(keys_random),
        cmocka_unit_test(open_by_interface),
        cmocka_unit_test(push_pull),
        cmocka_unit_test(pipelined),
        cmocka_unit_test(peer_killed),
        cmocka_unit_test(mr_modes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
