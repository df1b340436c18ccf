/* The checkpoint service's transfer modes (seed 002 §4.1-4.5; docs/checkpointing.md,
 * "Transfer modes").
 *
 * Push or pull is dt_ckagent.c's business (who makes each RMA transfer); this file
 * chooses the mode and does SHMR: one shared-memory region per node (an MPI shared
 * window on the node's communicator), into which the node's processes copy their
 * pieces, and one endpoint per node (the lead's) that moves the region to or from the
 * agent. The node's file is the same bytes in every mode (each process's part at its
 * offset), so a checkpoint written one way restores any other way.
 *
 * The region is the staging size (DUCTILE_CKPT_STAGING): a node's file larger than it
 * goes through in windows of that size (the seed's pipelining), every process of the
 * node taking part in every window, so that all of them learn the lead's status. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_ckxfer.h"

static struct {
    int pull, shmr;
    /* the node's shared region (SHMR) */
    MPI_Win win;
    int win_on;
    char *base;
    long len;
    fab_mr_t *mr; /* the lead's registration */
    /* a restore's recorded reads (SHMR) */
    int phase;
    long *req; /* file, offset, length */
    int nreq, cap, next;
    char *data; /* their bytes, back to back, after ckx_fetch */
    long at;
    int fetched;
} x;

/* 0 for word a, 1 for b; what names them for a message that starts with what. */
static int word(const char *what, const char *v, const char *a, const char *b, const char *words,
                char *err, size_t errlen)
{
    if (!strcmp(v, a))
        return 0;
    if (!strcmp(v, b))
        return 1;
    snprintf(err, errlen, "%s '%s': it must be %s", what, v, words);
    return -EINVAL;
}

static int parse_transfer(const char *v, const char *var, char *err, size_t errlen)
{
    return word(var, v, "push", "pull", "push (the processes write into the agents' memory) or "
                "pull (the agents read the processes' memory)", err, errlen);
}

static int parse_regions(const char *v, const char *var, char *err, size_t errlen)
{
    return word(var, v, "mr", "shmr", "mr (a registered region and an endpoint per process) or "
                "shmr (one shared-memory region and endpoint per node)", err, errlen);
}

/* bytes, or with K, M or G */
static long parse_size(const char *v, char *err, size_t errlen)
{
    char *end;
    long n = strtol(v, &end, 10);
    int shift = !*end ? 0 : !strcmp(end, "K") || !strcmp(end, "k") ? 10
                : !strcmp(end, "M") || !strcmp(end, "m")            ? 20
                : !strcmp(end, "G") || !strcmp(end, "g")            ? 30
                                                                    : -1;
    if (end == v || shift < 0 || n < 64 || n > (1L << (40 - shift))) {
        snprintf(err, errlen, "DUCTILE_CKPT_STAGING is '%s': give the size of the registered "
                 "region a transfer goes through, in bytes (at least 64) or with K, M or G, "
                 "such as 4M", v);
        return -EINVAL;
    }
    return n << shift;
}

int ckx_init(MPI_Comm comm, int rank, char *err, size_t errlen)
{
    long m[4] = {0, 0, 0, 0}; /* status, pull, shmr, staging */
    if (rank == 0) {
        const char *t = getenv("DUCTILE_CKPT_TRANSFER"), *r = getenv("DUCTILE_CKPT_REGIONS"),
                   *s = getenv("DUCTILE_CKPT_STAGING");
        if (t && *t)
            m[1] = parse_transfer(t, "DUCTILE_CKPT_TRANSFER is", err, errlen);
        if (m[1] >= 0 && r && *r)
            m[2] = parse_regions(r, "DUCTILE_CKPT_REGIONS is", err, errlen);
        if (m[1] >= 0 && m[2] >= 0 && s && *s)
            m[3] = parse_size(s, err, errlen);
        m[0] = m[1] < 0 ? m[1] : m[2] < 0 ? m[2] : m[3] < 0 ? m[3] : 0;
    }
    MPI_Bcast(m, 4, MPI_LONG, 0, comm);
    if (m[0] < 0)
        return (int)m[0];
    x.pull = (int)m[1];
    x.shmr = (int)m[2];
    ckag_set_transfer(x.pull, m[3]);
    return 0;
}

int ckx_set(const char *transfer, const char *regions, char *err, size_t errlen)
{
    int t = transfer
                ? parse_transfer(transfer, "dt_ckpt_set_transfer: the transfer is", err, errlen)
                : x.pull;
    int r = t >= 0 && regions
                ? parse_regions(regions, "dt_ckpt_set_transfer: the regions are", err, errlen)
                : x.shmr;
    if (t < 0 || r < 0)
        return -EINVAL;
    x.pull = t;
    x.shmr = r;
    ckag_set_transfer(x.pull, ckag_staging());
    return 0;
}

int ckx_pull(void) { return x.pull; }
int ckx_shmr(void) { return x.shmr; }

int ckx_shm_open(MPI_Comm node, int node_rank, char *err, size_t errlen)
{
    int rc = 0;
    if (!x.win_on) {
        long len = ckag_staging();
        char *mine = NULL;
        MPI_Aint size;
        int disp;
        if (MPI_Win_allocate_shared(node_rank == 0 ? (MPI_Aint)len : 0, 1, MPI_INFO_NULL, node,
                                    &mine, &x.win) != MPI_SUCCESS)
            return -ENOMEM;
        MPI_Win_shared_query(x.win, 0, &size, &disp, &x.base);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, x.win);
        x.win_on = 1;
        x.len = len;
        if (node_rank == 0)
            memset(x.base, 0, (size_t)len); /* real pages before it is registered */
    }
    if (node_rank == 0 && !x.mr)
        rc = ckag_register(x.base, (size_t)x.len, &x.mr, err, errlen);
    if (rc < 0)
        x.mr = NULL;
    MPI_Bcast(&rc, 1, MPI_INT, 0, node);
    if (rc < 0 && node_rank != 0)
        snprintf(err, errlen, "the node's lead process could not register its shared region");
    return rc;
}

void ckx_shm_close(void)
{
    ckag_unregister(x.mr);
    x.mr = NULL;
    if (x.win_on) {
        MPI_Win_unlock_all(x.win);
        MPI_Win_free(&x.win);
    }
    x.win_on = 0;
    x.base = NULL;
}

/* The node's processes see what the others wrote into the region once every one has
 * passed: the lead's status of the last step, told to all. */
static int node_step(MPI_Comm node, int node_rank, int rc, char *err, size_t errlen)
{
    MPI_Win_sync(x.win);
    MPI_Bcast(&rc, 1, MPI_INT, 0, node);
    MPI_Win_sync(x.win);
    if (rc < 0 && node_rank != 0)
        snprintf(err, errlen, "the node's lead process could not move the node's checkpoint "
                 "data: %s", strerror(-rc));
    return rc;
}

/* The overlap of [a, a + alen) and [b, b + blen): its start and length (<= 0: none). */
static long overlap(long a, long alen, long b, long blen, long *len)
{
    long lo = a > b ? a : b, hi = a + alen < b + blen ? a + alen : b + blen;
    *len = hi - lo;
    return lo;
}

int ckx_shm_commit(MPI_Comm node, int node_rank, long file, const ckag_region_t *reg, long off,
                   char *const *bufs, const long *lens, int n, long node_bytes, char *err,
                   size_t errlen)
{
    if (!x.win_on || x.len <= 0)
        return -ENOTCONN;
    int rc = 0;
    for (long w = 0; w < node_bytes && rc == 0; w += x.len) {
        long wlen = node_bytes - w < x.len ? node_bytes - w : x.len;
        MPI_Barrier(node); /* the lead moved the last window */
        ckag_pack(x.base, w - off, wlen, bufs, lens, n); /* (the part starts at off) */
        MPI_Win_sync(x.win);
        MPI_Barrier(node); /* the window is whole */
        MPI_Win_sync(x.win);
        int lrc = node_rank == 0 ? ckag_move_local(file, reg, FAB_PUSH, x.mr, 0, w, wlen, err,
                                                   errlen)
                                 : 0;
        rc = node_step(node, node_rank, lrc, err, errlen);
    }
    return rc;
}

int ckx_phase(void) { return x.phase; }

void ckx_record_begin(void)
{
    ckx_restore_end();
    x.phase = CKX_RECORD;
}

int ckx_record(long file, long off, long len)
{
    if (x.nreq == x.cap) {
        int cap = x.cap ? 2 * x.cap : 16;
        long *r = realloc(x.req, (size_t)cap * 3 * sizeof(long));
        if (!r)
            return -ENOMEM;
        x.req = r;
        x.cap = cap;
    }
    long *r = &x.req[3 * x.nreq++];
    r[0] = file;
    r[1] = off;
    r[2] = len;
    return 0;
}

/* The lead: the node's reads that fall in window [w, w + wlen) of their concatenation
 * (all[0, nall) in node-rank order), from the agents into the region. */
static int fetch_window(const long *all, int nall, long w, long wlen, char *err, size_t errlen)
{
    long pos = 0;
    int rc = 0;
    for (int i = 0; i < nall && rc == 0 && pos < w + wlen; pos += all[3 * i + 2], i++) {
        long len, lo = overlap(pos, all[3 * i + 2], w, wlen, &len);
        if (len > 0)
            rc = ckag_move_local(all[3 * i], NULL, FAB_PULL, x.mr, (size_t)(lo - w),
                                 all[3 * i + 1] + (lo - pos), len, err, errlen);
    }
    return rc;
}

int ckx_fetch(MPI_Comm node, int node_rank, char *err, size_t errlen)
{
    int size, n3 = 3 * x.nreq;
    MPI_Comm_size(node, &size);
    int *counts = calloc((size_t)size, sizeof(int)), *displs = calloc((size_t)size, sizeof(int));
    long mine = 0, base = 0, total = 0;
    for (int i = 0; i < x.nreq; i++)
        mine += x.req[3 * i + 2];
    x.data = malloc((size_t)mine + 1);
    /* (the region is opened on the whole node alike) */
    int ok = counts && displs && x.data, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node);
    long *all = NULL;
    int rc = !x.win_on ? -ENOTCONN : all_ok ? 0 : -ENOMEM;
    if (rc == 0) {
        MPI_Allgather(&n3, 1, MPI_INT, counts, 1, MPI_INT, node);
        int nall = 0;
        for (int r = 0; r < size; r++) {
            displs[r] = nall;
            nall += counts[r];
        }
        all = malloc(((size_t)nall + 1) * sizeof(long));
        ok = all != NULL;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node);
        rc = all_ok ? 0 : -ENOMEM;
        if (rc == 0)
            MPI_Allgatherv(x.req, n3, MPI_LONG, all, counts, displs, MPI_LONG, node);
        for (int i = 0; rc == 0 && i < nall / 3; i++) {
            if (i == displs[node_rank] / 3)
                base = total;
            total += all[3 * i + 2];
        }
        if (rc == 0 && n3 == 0)
            base = total; /* nothing of mine: any base outside the windows' overlap */
        for (long w = 0; rc == 0 && w < total; w += x.len) {
            long wlen = total - w < x.len ? total - w : x.len, len;
            int lrc = node_rank == 0 ? fetch_window(all, nall / 3, w, wlen, err, errlen) : 0;
            rc = node_step(node, node_rank, lrc, err, errlen);
            long lo = overlap(base, mine, w, wlen, &len);
            if (rc == 0 && len > 0)
                memcpy(x.data + (lo - base), x.base + (lo - w), (size_t)len);
            MPI_Barrier(node); /* copied out before the lead brings the next window */
        }
    }
    free(all);
    free(counts);
    free(displs);
    x.phase = CKX_REPLAY;
    x.fetched = rc == 0;
    x.next = 0;
    x.at = 0;
    return rc;
}

int ckx_replay(void *buf, long len)
{
    if (!x.fetched || x.next >= x.nreq || x.req[3 * x.next + 2] != len)
        return -EIO;
    memcpy(buf, x.data + x.at, (size_t)len);
    x.at += len;
    x.next++;
    return 0;
}

void ckx_restore_end(void)
{
    free(x.data);
    x.data = NULL;
    x.nreq = x.next = 0;
    x.at = 0;
    x.fetched = 0;
    x.phase = CKX_DIRECT;
}

void ckx_report(MPI_Comm comm, int rank)
{
    const char *on = getenv("DUCTILE_CKPT_STATS");
    int want = on && *on && strcmp(on, "0");
    MPI_Bcast(&want, 1, MPI_INT, 0, comm);
    if (!want)
        return;
    ckag_stats_t st = ckag_stats();
    long mine[4] = {st.endpoints, st.regions, st.proc_xfers, st.agent_xfers}, sum[4] = {0};
    MPI_Reduce(mine, sum, 4, MPI_LONG, MPI_SUM, 0, comm);
    if (rank == 0)
        fprintf(stderr, "libductile: checkpoint transfers (%s, %s): endpoints %ld, registered "
                "regions %ld, transfers by the processes %ld, by the agents %ld\n",
                x.pull ? "pull" : "push", x.shmr ? "shmr" : "mr", sum[0], sum[1], sum[2], sum[3]);
}
