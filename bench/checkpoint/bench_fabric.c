/* What a checkpoint costs on the data path (src/ckpt/fabric.h): the bandwidth of a write
 * (push to an agent) and a read (pull back) through libfabric on loopback, against
 * memcpy of the same bytes and against write()+fsync() of them to a file, for regions of
 * 8 MB to 512 MB; and a write of unregistered memory through a staging region an eighth
 * of its size (fab_copy_pipelined); and the time to open a region of that size to a peer
 * and close it again (reg, in microseconds: what registering a region per transfer adds
 * to each one). The agent is a forked process on the same machine that only
 * progresses its endpoint, as a checkpoint agent would.
 *
 *   bench_fabric [-p provider] [-d dir] [-r repeats] [-m max_mb]
 *
 * Each figure is the median of the repeats; the ratios compare figures of the same run,
 * which is what stays meaningful on a shared machine. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../power/bench_util.h"
#include "fabric.h"

#define MB (1024.0 * 1024.0)
#define MAX_REPEATS 15

typedef struct opts {
    const char *provider, *dir;
    int repeats;
    size_t max;
} opts_t;

typedef struct run {
    fab_t *f;
    fab_mr_t *mr, *stage; /* stage: an eighth of the region, for the pipelined copy */
    fab_peer_t *peer;
    fab_rmr_t *rmr;
    uint8_t *src, *dst, *stage_buf;
    char path[4096];
} run_t;

static void die(const char *what, const char *err)
{
    fprintf(stderr, "bench_fabric: %s: %s\n", what, err);
    exit(1);
}

static void put_blob(int fd, const void *blob, size_t len)
{
    uint32_t n = (uint32_t)len;
    if (write(fd, &n, sizeof(n)) != sizeof(n) || write(fd, blob, n) != (ssize_t)n)
        die("control channel", strerror(errno));
}

/* Blocking reads are fine here: the agent announces itself before anything else. */
static size_t get_blob(int fd, void *blob, size_t cap)
{
    uint32_t n;
    if (read(fd, &n, sizeof(n)) != sizeof(n) || n > cap ||
        read(fd, blob, n) != (ssize_t)n)
        die("control channel", "agent did not announce itself");
    return n;
}

/* The agent spins on progress until the control channel closes: a sleeping agent would
 * add its wake-up latency to every transfer. */
static void agent(const opts_t *o, int fd)
{
    char err[256], blob[FAB_BLOB_MAX];
    fab_t *f;
    fab_mr_t *mr;
    uint8_t *buf = malloc(o->max);
    if (!buf)
        die("agent", "out of memory");
    memset(buf, 0x5a, o->max);
    if (fab_open(o->provider, NULL, &f, err, sizeof(err)) ||
        fab_mr_reg(f, buf, o->max, FAB_REMOTE_READ | FAB_REMOTE_WRITE, &mr, err, sizeof(err)))
        die("agent", err);
    size_t n = sizeof(blob);
    if (fab_addr_blob(f, blob, &n, err, sizeof(err)))
        die("agent", err);
    put_blob(fd, blob, n);
    n = sizeof(blob);
    if (fab_mr_blob(mr, blob, &n, err, sizeof(err)))
        die("agent", err);
    put_blob(fd, blob, n);
    for (struct pollfd p = {.fd = fd, .events = POLLIN}; poll(&p, 1, 0) == 0;)
        fab_progress(f);
    _exit(0);
}

static pid_t agent_start(const opts_t *o, run_t *r, int *fd)
{
    int sv[2];
    char err[256], blob[FAB_BLOB_MAX];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        die("socketpair", strerror(errno));
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        agent(o, sv[1]);
    }
    close(sv[1]);
    *fd = sv[0];
    size_t n = get_blob(*fd, blob, sizeof(blob));
    if (fab_peer_add(r->f, blob, n, &r->peer, err, sizeof(err)))
        die("peer", err);
    n = get_blob(*fd, blob, sizeof(blob));
    if (fab_rmr_import(blob, n, &r->rmr, err, sizeof(err)))
        die("region", err);
    return pid;
}

typedef int (*op_fn)(run_t *r, size_t len);

static int rma(run_t *r, fab_dir_t dir, size_t len)
{
    char err[256];
    int rc = dir == FAB_PUSH
                 ? fab_write(r->f, r->peer, r->mr, 0, r->rmr, 0, len, err, sizeof(err))
                 : fab_read(r->f, r->peer, r->mr, 0, r->rmr, 0, len, err, sizeof(err));
    if (rc)
        die(dir == FAB_PUSH ? "fab_write" : "fab_read", err);
    return rc;
}

static int op_write(run_t *r, size_t len)
{
    return rma(r, FAB_PUSH, len);
}

static int op_read(run_t *r, size_t len)
{
    return rma(r, FAB_PULL, len);
}

/* Unregistered memory through a staging region an eighth of its size (seed 002 §4.5). */
static int op_pipelined(run_t *r, size_t len)
{
    char err[256];
    int rc = fab_copy_pipelined(r->f, r->peer, FAB_PUSH, r->dst, len, r->stage, r->rmr, 0,
                                NULL, err, sizeof(err));
    if (rc)
        die("fab_copy_pipelined", err);
    return rc;
}

static void stage_for(run_t *r, size_t len)
{
    char err[256];
    fab_mr_close(r->stage);
    if (fab_mr_reg(r->f, r->stage_buf, len / 8, FAB_LOCAL, &r->stage, err, sizeof(err)))
        die("staging", err);
}

static int op_memcpy(run_t *r, size_t len)
{
    memcpy(r->dst, r->src, len);
    return 0;
}

/* A checkpoint to the node's disk: the bytes are safe only once fsync returns. */
static int op_file(run_t *r, size_t len)
{
    int fd = open(r->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        die(r->path, strerror(errno));
    for (size_t done = 0; done < len;) {
        ssize_t n = write(fd, r->src + done, len - done);
        if (n <= 0)
            die("write", strerror(errno));
        done += (size_t)n;
    }
    if (fsync(fd))
        die("fsync", strerror(errno));
    close(fd);
    return 0;
}

/* A region opened to a peer for one transfer and closed after it (the agent's ck_put
 * and ck_get, a pull-mode process's chunk): what per-transfer registration adds. */
static int op_register(run_t *r, size_t len)
{
    char err[256];
    fab_mr_t *m;
    if (fab_mr_reg(r->f, r->src, len, FAB_REMOTE_WRITE, &m, err, sizeof(err)))
        die("fab_mr_reg", err);
    fab_mr_close(m);
    return 0;
}

/* Median time of op in microseconds. */
static double measure_us(run_t *r, op_fn op, size_t len, int repeats)
{
    double us[MAX_REPEATS];
    for (int i = 0; i < repeats; i++) {
        double t0 = now();
        op(r, len);
        us[i] = (now() - t0) * 1e6;
    }
    qsort(us, (size_t)repeats, sizeof(*us), cmp);
    return us[repeats / 2];
}

/* Median bandwidth in MB/s. */
static double measure(run_t *r, op_fn op, size_t len, int repeats)
{
    double mbs[MAX_REPEATS];
    for (int i = 0; i < repeats; i++) {
        double t0 = now();
        op(r, len);
        mbs[i] = len / MB / (now() - t0);
    }
    qsort(mbs, (size_t)repeats, sizeof(*mbs), cmp);
    return mbs[repeats / 2];
}

static opts_t parse(int argc, char **argv)
{
    opts_t o = {.provider = NULL, .dir = "/tmp", .repeats = 3, .max = 512};
    for (int c; (c = getopt(argc, argv, "p:d:r:m:")) != -1;) {
        if (c == 'p')
            o.provider = optarg;
        else if (c == 'd')
            o.dir = optarg;
        else if (c == 'r')
            o.repeats = atoi(optarg);
        else if (c == 'm')
            o.max = (size_t)atol(optarg);
        else
            exit(2);
    }
    if (o.repeats < 1 || o.repeats > MAX_REPEATS || o.max < 8)
        die("usage", "bench_fabric [-p provider] [-d dir] [-r 1..15] [-m max_mb >= 8]");
    o.max *= 1024 * 1024;
    return o;
}

static void run_open(const opts_t *o, run_t *r)
{
    char err[256];
    r->src = malloc(o->max);
    r->dst = malloc(o->max);
    r->stage_buf = calloc(1, o->max / 8);
    if (!r->src || !r->dst || !r->stage_buf)
        die("buffers", "out of memory");
    /* fault every page in now, so no figure pays for first touches */
    memset(r->src, 0xa5, o->max);
    memset(r->dst, 0, o->max);
    snprintf(r->path, sizeof(r->path), "%s/bench_fabric.%d", o->dir, (int)getpid());
    if (fab_open(o->provider, NULL, &r->f, err, sizeof(err)) ||
        fab_mr_reg(r->f, r->src, o->max, FAB_LOCAL, &r->mr, err, sizeof(err)))
        die("fab_open", err);
}

int main(int argc, char **argv)
{
    opts_t o = parse(argc, argv);
    run_t r = {0};
    int fd;
    run_open(&o, &r);
    pid_t pid = agent_start(&o, &r, &fd);
    op_write(&r, 4096); /* connects: the first transfer sets the connection up */

    printf("provider %s, file in %s, median of %d\n", fab_provider_name(r.f), o.dir,
           o.repeats);
    printf("%6s %8s %8s %8s %8s %8s %9s %8s %8s %8s\n", "MB", "write", "read", "pipe/8",
           "memcpy", "file", "wr/memcpy", "wr/file", "pipe/wr", "reg(us)");
    for (size_t len = 8u << 20; len <= o.max; len *= 2) {
        double w = measure(&r, op_write, len, o.repeats);
        double rd = measure(&r, op_read, len, o.repeats);
        stage_for(&r, len);
        double p = measure(&r, op_pipelined, len, o.repeats);
        double m = measure(&r, op_memcpy, len, o.repeats);
        double fl = measure(&r, op_file, len, o.repeats);
        double reg = measure_us(&r, op_register, len, o.repeats);
        printf("%6zu %8.0f %8.0f %8.0f %8.0f %8.0f %9.3f %8.2f %8.2f %8.1f\n", len >> 20, w, rd,
               p, m, fl, w / m, w / fl, p / w, reg);
        fflush(stdout);
    }
    printf("(MB/s, MB = 2^20 bytes)\n");
    unlink(r.path);
    close(fd);
    waitpid(pid, NULL, 0);
    fab_rmr_free(r.rmr);
    fab_mr_close(r.stage);
    fab_mr_close(r.mr);
    fab_close(r.f);
    free(r.src);
    free(r.dst);
    free(r.stage_buf);
    return 0;
}
