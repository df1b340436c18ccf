/* libfabric RMA for the checkpoint service (fabric.h).
 *
 * What works in the development sandbox (loopback only, no RDMA hardware, Debian's
 * libfabric 1.17): fi_getinfo with node "127.0.0.1" and FI_SOURCE finds tcp;ofi_rxm on
 * domain "lo" without FI_TCP_IFACE; "tcp" resolves to the same layered provider and
 * "sockets" also answers. All three report mr_mode 0 there; FI_MR_VIRT_ADDR and
 * FI_MR_PROV_KEY are exercised by asking sockets for them (extra_mr_modes), and
 * FI_MR_ENDPOINT only on hardware that needs it (cxi, efa): neither sockets nor tcp
 * implements fi_mr_bind. */
#include "fabric.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "rng.h"

#define FAB_API FI_VERSION(1, 17)
#define FAB_CAPS (FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
/* The registration modes this file knows how to honour; a provider that needs another
 * (FI_MR_RAW, FI_MR_RMA_EVENT, FI_MR_HMEM) is not offered to us. */
#define FAB_MR_MODES (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED | \
                      FI_MR_ENDPOINT)
/* Operation contexts must live until completion (FI_CONTEXT providers); a ring this size
 * bounds how many are in flight. */
#define FAB_NCTX 64
/* fi_cntr_wait is called in slices so the deadline and the error count are rechecked. */
#define FAB_WAIT_SLICE_MS 50

#define ADDR_MAGIC 0x46414231u /* "FAB1" */
#define MR_MAGIC 0x464d5231u   /* "FMR1" */

struct fab {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cntr *cntr; /* completions of our reads and writes */
    struct fid_cq *cq;     /* failures only (selective completion); rxm insists on one */
    struct fid_ep *ep;
    uint64_t mr_mode;
    size_t max_msg;
    int timeout_ms;
    uint64_t posted, errs_seen;
    struct fi_context2 ctx[FAB_NCTX];
    fab_peer_t *peers;
};

struct fab_mr {
    fab_t *fab;
    struct fid_mr *mr;
    void *buf;
    size_t len;
    int access; /* FAB_LOCAL, FAB_REMOTE_* */
};

struct fab_rmr {
    uint64_t key, base, len;
};

struct fab_peer {
    fi_addr_t addr;
    int gone; /* abandoned after a timeout: its address is out of the AV */
    fab_peer_t *next;
};

/* Both ends of a blob run the same build on the same architecture, so the fields are
 * copied in host order. */
typedef struct mr_wire {
    uint32_t magic, pad;
    uint64_t key, base, len;
} mr_wire_t;

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* libfabric's negative FI_E* codes are errno values below FI_ERRNO_OFFSET; the others
 * have no errno and are reported as EIO. */
static int fi_errno(int rc)
{
    int e = rc < 0 ? -rc : rc;
    return e < FI_ERRNO_OFFSET ? -e : -EIO;
}

static int fi_fail(char *err, size_t errlen, int rc, const char *what)
{
    return fail(err, errlen, fi_errno(rc), "%s: %s", what, fi_strerror(rc < 0 ? -rc : rc));
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* An interface name stands for its first IPv4 address, so a caller can name the
 * high-speed network's interface rather than look its address up. */
static int node_address(const char *node, char *out, size_t outlen)
{
    if (!node) {
        snprintf(out, outlen, "127.0.0.1");
        return 0;
    }
    snprintf(out, outlen, "%s", node);
    if (!if_nametoindex(node))
        return 0;
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) < 0)
        return -errno;
    int rc = -EADDRNOTAVAIL;
    for (struct ifaddrs *i = ifs; i && rc; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || strcmp(i->ifa_name, node))
            continue;
        const struct sockaddr_in *sin = (const struct sockaddr_in *)i->ifa_addr;
        if (inet_ntop(AF_INET, &sin->sin_addr, out, (socklen_t)outlen))
            rc = 0;
    }
    freeifaddrs(ifs);
    return rc;
}

static struct fi_info *hints_for(const char *provider)
{
    struct fi_info *h = fi_allocinfo();
    if (!h)
        return NULL;
    h->ep_attr->type = FI_EP_RDM;
    h->caps = FAB_CAPS;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->domain_attr->mr_mode = FAB_MR_MODES;
    h->domain_attr->av_type = FI_AV_TABLE;
    h->fabric_attr->prov_name = strdup(provider);
    if (!h->fabric_attr->prov_name) {
        fi_freeinfo(h);
        return NULL;
    }
    return h;
}

static int getinfo(const char *provider, const char *addr, struct fi_info **info)
{
    struct fi_info *h = hints_for(provider);
    if (!h)
        return -FI_ENOMEM;
    int rc = fi_getinfo(FAB_API, addr, NULL, FI_SOURCE, h, info);
    fi_freeinfo(h);
    return rc;
}

/* The first provider of the list that answers; tcp;ofi_rxm is the one the service is
 * written for, plain tcp and sockets keep it usable where rxm is missing. */
static int find_info(const char *provider, const char *addr, struct fi_info **info,
                     char *err, size_t errlen)
{
    static const char *const fallback[] = {"tcp;ofi_rxm", "tcp", "sockets"};
    if (provider) {
        int rc = getinfo(provider, addr, info);
        return rc ? fi_fail(err, errlen, rc, provider) : 0;
    }
    int rc = -FI_ENODATA;
    for (size_t i = 0; i < sizeof(fallback) / sizeof(*fallback); i++)
        if (!(rc = getinfo(fallback[i], addr, info)))
            return 0;
    return fi_fail(err, errlen, rc, "no provider of tcp;ofi_rxm, tcp, sockets");
}

/* DUCTILE_FAB_MR_MODE (a number of FI_MR_* bits of FAB_MR_MODES) asks the domain for
 * registration modes the provider does not need, so that the paths for verbs and cxi
 * (keys chosen by the provider, virtual addresses) run in the sandbox too; sockets
 * honours modes asked for at fi_domain (test_fabric mr_modes). */
static void extra_mr_modes(struct fi_info *info)
{
    const char *s = getenv("DUCTILE_FAB_MR_MODE");
    if (s && *s)
        info->domain_attr->mr_mode |= strtoull(s, NULL, 0) & FAB_MR_MODES;
}

static int open_resources(fab_t *f, char *err, size_t errlen)
{
    extra_mr_modes(f->info);
    int rc = fi_fabric(f->info->fabric_attr, &f->fabric, NULL);
    if (rc)
        return fi_fail(err, errlen, rc, "fi_fabric");
    if ((rc = fi_domain(f->fabric, f->info, &f->domain, NULL)))
        return fi_fail(err, errlen, rc, "fi_domain");
    struct fi_av_attr av = {.type = f->info->domain_attr->av_type};
    if ((rc = fi_av_open(f->domain, &av, &f->av, NULL)))
        return fi_fail(err, errlen, rc, "fi_av_open");
    struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC};
    if ((rc = fi_cntr_open(f->domain, &ca, &f->cntr, NULL)))
        return fi_fail(err, errlen, rc, "fi_cntr_open");
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
    if ((rc = fi_cq_open(f->domain, &cqa, &f->cq, NULL)))
        return fi_fail(err, errlen, rc, "fi_cq_open");
    if ((rc = fi_endpoint(f->domain, f->info, &f->ep, NULL)))
        return fi_fail(err, errlen, rc, "fi_endpoint");
    if ((rc = fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)))
        return fi_fail(err, errlen, rc, "fi_ep_bind(cq)");
    if ((rc = fi_ep_bind(f->ep, &f->av->fid, 0)))
        return fi_fail(err, errlen, rc, "fi_ep_bind(av)");
    if ((rc = fi_ep_bind(f->ep, &f->cntr->fid, FI_READ | FI_WRITE)))
        return fi_fail(err, errlen, rc, "fi_ep_bind(cntr)");
    if ((rc = fi_enable(f->ep)))
        return fi_fail(err, errlen, rc, "fi_enable");
    return 0;
}

int fab_open(const char *provider, const char *node, fab_t **out, char *err, size_t errlen)
{
    char addr[INET6_ADDRSTRLEN + 64];
    int rc = node_address(node, addr, sizeof(addr));
    if (rc)
        return fail(err, errlen, rc, "interface %s: no IPv4 address", node);
    fab_t *f = calloc(1, sizeof(*f));
    if (!f)
        return fail(err, errlen, -ENOMEM, "out of memory");
    f->timeout_ms = FAB_TIMEOUT_MS_DEFAULT;
    if ((rc = find_info(provider, addr, &f->info, err, errlen)) ||
        (rc = open_resources(f, err, errlen))) {
        fab_close(f);
        return rc;
    }
    f->mr_mode = f->info->domain_attr->mr_mode;
    f->max_msg = f->info->ep_attr->max_msg_size ? f->info->ep_attr->max_msg_size : SIZE_MAX;
    *out = f;
    return 0;
}

static void close_fid(struct fid *fid)
{
    if (fid)
        fi_close(fid);
}

void fab_close(fab_t *f)
{
    if (!f)
        return;
    close_fid(f->ep ? &f->ep->fid : NULL);
    close_fid(f->av ? &f->av->fid : NULL);
    close_fid(f->cntr ? &f->cntr->fid : NULL);
    close_fid(f->cq ? &f->cq->fid : NULL);
    close_fid(f->domain ? &f->domain->fid : NULL);
    close_fid(f->fabric ? &f->fabric->fid : NULL);
    while (f->peers) {
        fab_peer_t *next = f->peers->next;
        free(f->peers);
        f->peers = next;
    }
    fi_freeinfo(f->info);
    free(f);
}

const char *fab_provider_name(const fab_t *f)
{
    return f->info->fabric_attr->prov_name;
}

void fab_set_timeout(fab_t *f, int timeout_ms)
{
    f->timeout_ms = timeout_ms;
}

uint64_t fab_ops(const fab_t *f)
{
    return f->posted;
}

int fab_progress(fab_t *f)
{
    /* Reading a counter runs the provider's progress engine for its endpoints (manual
     * progress); the value itself is not needed. */
    (void)fi_cntr_read(f->cntr);
    return 0;
}

/* FI_MR_ENDPOINT providers (cxi, efa) scope a region to an endpoint and want it enabled
 * explicitly before use. */
static int mr_attach(fab_t *f, struct fid_mr *mr, char *err, size_t errlen)
{
    if (!(f->mr_mode & FI_MR_ENDPOINT))
        return 0;
    int rc = fi_mr_bind(mr, &f->ep->fid, 0);
    if (rc)
        return fi_fail(err, errlen, rc, "fi_mr_bind");
    if ((rc = fi_mr_enable(mr)))
        return fi_fail(err, errlen, rc, "fi_mr_enable");
    return 0;
}

/* A key of our choosing must be unique in the domain and is the region's only guard
 * against any process that reaches the endpoint: 64 random bits, drawn again in the
 * unlikely case the domain has it already. Where the provider chooses keys
 * (FI_MR_PROV_KEY: verbs, cxi) we take its key, and how guessable it is is the
 * provider's (docs/security.md, "The checkpoint data path"). */
#define FAB_KEY_TRIES 4

static int mr_reg_key(fab_t *f, void *buf, size_t len, uint64_t acc, struct fid_mr **mr,
                      char *err, size_t errlen)
{
    int rc = -FI_ENOKEY;
    for (int i = 0; i < FAB_KEY_TRIES && rc == -FI_ENOKEY; i++) {
        uint64_t key = 0;
        if (!(f->mr_mode & FI_MR_PROV_KEY) && (rc = rng_secret(&key, sizeof(key))) < 0)
            return fail(err, errlen, rc, "no random key: %s", strerror(-rc));
        rc = fi_mr_reg(f->domain, buf, len, acc, 0, key, 0, mr, NULL);
    }
    return rc ? fi_fail(err, errlen, rc, "fi_mr_reg") : 0;
}

int fab_mr_reg(fab_t *f, void *buf, size_t len, int access, fab_mr_t **out, char *err,
               size_t errlen)
{
    if (!buf || !len)
        return fail(err, errlen, -EINVAL, "fab_mr_reg: empty region");
    if (access & ~(FAB_REMOTE_READ | FAB_REMOTE_WRITE))
        return fail(err, errlen, -EINVAL, "fab_mr_reg: unknown access %#x", access);
    fab_mr_t *m = calloc(1, sizeof(*m));
    if (!m)
        return fail(err, errlen, -ENOMEM, "out of memory");
    /* Our own transfers may always use it (a descriptor for FI_MR_LOCAL providers); a
     * peer only as asked. */
    uint64_t acc = FI_READ | FI_WRITE | ((access & FAB_REMOTE_READ) ? FI_REMOTE_READ : 0) |
                   ((access & FAB_REMOTE_WRITE) ? FI_REMOTE_WRITE : 0);
    int rc = mr_reg_key(f, buf, len, acc, &m->mr, err, errlen);
    if (rc) {
        free(m);
        return rc;
    }
    if ((rc = mr_attach(f, m->mr, err, errlen))) {
        fab_mr_close(m);
        return rc;
    }
    m->fab = f;
    m->buf = buf;
    m->len = len;
    m->access = access;
    *out = m;
    return 0;
}

void fab_mr_close(fab_mr_t *m)
{
    if (!m)
        return;
    fi_close(&m->mr->fid);
    free(m);
}

void *fab_mr_buf(const fab_mr_t *m)
{
    return m->buf;
}

size_t fab_mr_len(const fab_mr_t *m)
{
    return m->len;
}

int fab_addr_blob(fab_t *f, void *out, size_t *len, char *err, size_t errlen)
{
    uint32_t magic = ADDR_MAGIC, alen;
    size_t name_len = *len > 2 * sizeof(uint32_t) ? *len - 2 * sizeof(uint32_t) : 0;
    int rc = fi_getname(&f->ep->fid, (char *)out + 2 * sizeof(uint32_t), &name_len);
    if (rc == -FI_ETOOSMALL)
        return fail(err, errlen, -ENOSPC, "address blob needs %zu bytes",
                    name_len + 2 * sizeof(uint32_t));
    if (rc)
        return fi_fail(err, errlen, rc, "fi_getname");
    alen = (uint32_t)name_len;
    memcpy(out, &magic, sizeof(magic));
    memcpy((char *)out + sizeof(magic), &alen, sizeof(alen));
    *len = name_len + 2 * sizeof(uint32_t);
    return 0;
}

int fab_mr_blob(const fab_mr_t *m, void *out, size_t *len, char *err, size_t errlen)
{
    if (m->access == FAB_LOCAL)
        return fail(err, errlen, -EPERM, "the region is not open to peers");
    if (*len < sizeof(mr_wire_t))
        return fail(err, errlen, -ENOSPC, "region blob needs %zu bytes", sizeof(mr_wire_t));
    /* The base is the offset origin for the peer: the virtual address where the provider
     * addresses regions by it (FI_MR_VIRT_ADDR), 0 where it uses offsets. */
    mr_wire_t w = {.magic = MR_MAGIC, .key = fi_mr_key(m->mr), .len = m->len,
                   .base = (m->fab->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)m->buf
                                                              : 0};
    memcpy(out, &w, sizeof(w));
    *len = sizeof(w);
    return 0;
}

int fab_peer_add(fab_t *f, const void *blob, size_t len, fab_peer_t **out, char *err,
                 size_t errlen)
{
    uint32_t magic, alen;
    if (len < 2 * sizeof(uint32_t))
        return fail(err, errlen, -EINVAL, "address blob too short");
    memcpy(&magic, blob, sizeof(magic));
    memcpy(&alen, (const char *)blob + sizeof(magic), sizeof(alen));
    if (magic != ADDR_MAGIC || alen != len - 2 * sizeof(uint32_t))
        return fail(err, errlen, -EINVAL, "not an address blob");
    fab_peer_t *p = calloc(1, sizeof(*p));
    if (!p)
        return fail(err, errlen, -ENOMEM, "out of memory");
    int rc = fi_av_insert(f->av, (const char *)blob + 2 * sizeof(uint32_t), 1, &p->addr, 0,
                          NULL);
    if (rc != 1) {
        free(p);
        return fail(err, errlen, -EINVAL, "fi_av_insert: address not accepted");
    }
    p->next = f->peers;
    f->peers = p;
    *out = p;
    return 0;
}

void fab_peer_remove(fab_t *f, fab_peer_t *peer)
{
    for (fab_peer_t **p = &f->peers; *p; p = &(*p)->next)
        if (*p == peer) {
            *p = peer->next;
            if (!peer->gone)
                fi_av_remove(f->av, &peer->addr, 1, 0);
            free(peer);
            return;
        }
}

int fab_rmr_import(const void *blob, size_t len, fab_rmr_t **out, char *err, size_t errlen)
{
    mr_wire_t w;
    if (len != sizeof(w))
        return fail(err, errlen, -EINVAL, "region blob of %zu bytes, not %zu", len, sizeof(w));
    memcpy(&w, blob, sizeof(w));
    if (w.magic != MR_MAGIC)
        return fail(err, errlen, -EINVAL, "not a region blob");
    fab_rmr_t *r = malloc(sizeof(*r));
    if (!r)
        return fail(err, errlen, -ENOMEM, "out of memory");
    *r = (fab_rmr_t){.key = w.key, .base = w.base, .len = w.len};
    *out = r;
    return 0;
}

void fab_rmr_free(fab_rmr_t *r)
{
    free(r);
}

size_t fab_rmr_len(const fab_rmr_t *r)
{
    return (size_t)r->len;
}

/* A failed operation also leaves an entry on the CQ, which says why; reading the
 * entries keeps the CQ from overflowing. */
static int failed_op(fab_t *f, char *err, size_t errlen)
{
    char why[128] = "peer gone?";
    struct fi_cq_err_entry e = {0};
    while (fi_cq_readerr(f->cq, &e, 0) == 1)
        snprintf(why, sizeof(why), "%s", fi_cq_strerror(f->cq, e.prov_errno, e.err_data,
                                                        NULL, 0));
    return fail(err, errlen, -EIO, "transfer failed: %s", why);
}

/* Waits until every posted operation has completed or failed. The counter counts
 * successes and its error count failures, so a failure is seen as a new error. */
static int wait_all(fab_t *f, int64_t deadline, char *err, size_t errlen)
{
    for (;;) {
        uint64_t done = fi_cntr_read(f->cntr), errs = fi_cntr_readerr(f->cntr);
        if (errs > f->errs_seen) {
            f->errs_seen = errs;
            return failed_op(f, err, errlen);
        }
        if (done + errs >= f->posted)
            return 0;
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return fail(err, errlen, -ETIMEDOUT, "transfer timed out");
        /* The wait is only a way to sleep until progress: its errors (tcp;ofi_rxm says
         * -FI_ENOENT once when the peer's connection goes) are not the operation's,
         * which are in the error count, and the deadline bounds the loop. */
        (void)fi_cntr_wait(f->cntr, done + 1,
                           (int)(left < FAB_WAIT_SLICE_MS ? left : FAB_WAIT_SLICE_MS));
    }
}

typedef struct xfer {
    fab_dir_t dir;
    fab_peer_t *peer;
    fab_mr_t *local;
    size_t loff;
    const fab_rmr_t *remote;
    size_t roff, len;
} xfer_t;

/* A write completes only once the bytes are in the peer's memory (FI_DELIVERY_COMPLETE):
 * the default, transmit completion, fires when tcp has handed them to the socket, and a
 * checkpoint the agent has not received is not a checkpoint. */
static ssize_t post_one(fab_t *f, const xfer_t *x, size_t done, size_t n)
{
    struct iovec iov = {.iov_base = (char *)x->local->buf + x->loff + done, .iov_len = n};
    void *desc = fi_mr_desc(x->local->mr);
    struct fi_rma_iov rma = {.addr = x->remote->base + x->roff + done, .len = n,
                             .key = x->remote->key};
    struct fi_msg_rma msg = {.msg_iov = &iov, .desc = &desc, .iov_count = 1,
                             .addr = x->peer->addr, .rma_iov = &rma, .rma_iov_count = 1,
                             .context = &f->ctx[f->posted % FAB_NCTX]};
    if (x->dir == FAB_PUSH)
        return fi_writemsg(f->ep, &msg, FI_DELIVERY_COMPLETE);
    return fi_readmsg(f->ep, &msg, 0);
}

/* Posts one piece, waiting for room when the provider's queue or the context ring is
 * full; FI_EAGAIN also asks for progress, which fab_progress gives. */
static int post_piece(fab_t *f, const xfer_t *x, size_t done, size_t n, int64_t deadline,
                      char *err, size_t errlen)
{
    for (;;) {
        uint64_t finished = fi_cntr_read(f->cntr) + fi_cntr_readerr(f->cntr);
        if (f->posted - finished >= FAB_NCTX) {
            int rc = wait_all(f, deadline, err, errlen);
            if (rc)
                return rc;
        }
        ssize_t rc = post_one(f, x, done, n);
        if (!rc) {
            f->posted++;
            return 0;
        }
        if (rc != -FI_EAGAIN)
            return fi_fail(err, errlen, (int)rc, x->dir == FAB_PUSH ? "fi_write" : "fi_read");
        if (now_ms() >= deadline)
            return fail(err, errlen, -ETIMEDOUT, "transfer timed out (queue full)");
        fab_progress(f);
    }
}

static int check_bounds(const xfer_t *x, char *err, size_t errlen)
{
    if (x->loff > x->local->len || x->len > x->local->len - x->loff)
        return fail(err, errlen, -EINVAL, "local range [%zu, +%zu) outside region of %zu",
                    x->loff, x->len, x->local->len);
    if (x->roff > x->remote->len || x->len > x->remote->len - x->roff)
        return fail(err, errlen, -EINVAL, "remote range [%zu, +%zu) outside region of %llu",
                    x->roff, x->len, (unsigned long long)x->remote->len);
    return 0;
}

/* A peer whose transfer timed out is dropped from the AV, which closes its connection:
 * otherwise what was posted to it would stay counted as outstanding and every later
 * transfer, to any peer, would wait for it. tcp;ofi_rxm (1.17) neither completes nor
 * fails those operations then, so what is still outstanding after one more round of
 * progress is written off; a write-off that completed later anyway would count for a
 * later transfer, which is why the peer cannot be used again. */
static void abandon(fab_t *f, fab_peer_t *peer)
{
    peer->gone = 1;
    fi_av_remove(f->av, &peer->addr, 1, 0);
    fab_progress(f);
    f->errs_seen = fi_cntr_readerr(f->cntr);
    f->posted = fi_cntr_read(f->cntr) + f->errs_seen;
}

/* A transfer longer than the provider's largest message is posted as several. */
static int transfer(fab_t *f, const xfer_t *x, char *err, size_t errlen)
{
    int rc = check_bounds(x, err, errlen);
    if (rc)
        return rc;
    if (x->peer->gone)
        return fail(err, errlen, -ENOTCONN, "peer abandoned after a timeout");
    int64_t deadline = now_ms() + f->timeout_ms;
    for (size_t done = 0; done < x->len;) {
        size_t n = x->len - done < f->max_msg ? x->len - done : f->max_msg;
        if ((rc = post_piece(f, x, done, n, deadline, err, errlen)))
            break;
        done += n;
    }
    if (!rc)
        rc = wait_all(f, deadline, err, errlen);
    if (rc == -ETIMEDOUT)
        abandon(f, x->peer);
    return rc;
}

int fab_write(fab_t *f, fab_peer_t *peer, fab_mr_t *local, size_t loff,
              const fab_rmr_t *remote, size_t roff, size_t len, char *err, size_t errlen)
{
    xfer_t x = {FAB_PUSH, peer, local, loff, remote, roff, len};
    return transfer(f, &x, err, errlen);
}

int fab_read(fab_t *f, fab_peer_t *peer, fab_mr_t *local, size_t loff,
             const fab_rmr_t *remote, size_t roff, size_t len, char *err, size_t errlen)
{
    xfer_t x = {FAB_PULL, peer, local, loff, remote, roff, len};
    return transfer(f, &x, err, errlen);
}

/* Seed 002 §4.5: data outside registered memory goes through a registered staging
 * region one chunk at a time, so registering (pinning) is paid once for the staging
 * region rather than for every checkpointed buffer. */
int fab_copy_pipelined(fab_t *f, fab_peer_t *peer, fab_dir_t dir, void *data, size_t len,
                       fab_mr_t *staging, const fab_rmr_t *remote, size_t roff,
                       size_t *transfers, char *err, size_t errlen)
{
    size_t chunk = staging->len, count = 0;
    int rc = 0;
    for (size_t done = 0; done < len && !rc; done += chunk, count++) {
        size_t n = len - done < chunk ? len - done : chunk;
        xfer_t x = {dir, peer, staging, 0, remote, roff + done, n};
        if (dir == FAB_PUSH)
            memcpy(staging->buf, (char *)data + done, n);
        if (!(rc = transfer(f, &x, err, errlen)) && dir == FAB_PULL)
            memcpy((char *)data + done, staging->buf, n);
    }
    if (transfers)
        *transfers = count;
    return rc;
}
