/* Application checkpoints, the file level (docs/checkpointing.md): what the checkpoint
 * service's agents flush to the parallel file system, and what the library writes by
 * itself when no agent can take a checkpoint (seed 002, iCheck 6.5: "one lead process
 * per node writes with POSIX"). A directory per application:
 *
 *   <dir>/latest            the number of the last complete version (tmp + rename)
 *   <dir>/v<k>/node<i>.dat  node i's processes' parts, written by the node's lead
 *   <dir>/v<k>/manifest.json  the variables, and where each old rank's part is
 *   <dir>/v<k>.part/        a version being written: never read, removed at the next
 *
 * A version is whole or absent: its directory is renamed into place only after every
 * node file is on disk, and `latest` moves after that. A restart with another number
 * of processes reads from each old part what its new part needs (block, block-cyclic,
 * replicated), so the same files restore on any process count (dt_ckrestore.c). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "b64.h"
#include "ckptfiles.h"
#include "dt_ckagent.h"
#include "dt_ckpt_state.h"
#include "dt_ckxfer.h"
#include "fsutil.h"
#include "dt_internal.h"


ck_state_t ck;

static char errbuf[512];

/* The agents as this process last learnt them (rank 0: its environment, then what
 * dt_ckpt_probe heard): kept across sessions, so that a resize's next session uses
 * the agents the last one switched to. */
static char agents_now[2048];
static int agents_known;
/* Rank 0: how long the last blocking commit took to reach the agents, seconds (< 0:
 * none to tell), told to the controller at the next probe (Algorithm 5 revises the
 * agent count by it); the first commit to a set of agents is not measured (it sets
 * up the connections: several times slower, seed 002 §9.3). */
static double tsync_last = -1;
static int agent_commits; /* commits to the present agents */

/* The message of a failure, printed where it happened: by rank 0 for the mistakes
 * every process makes alike (-EINVAL, -ENOENT), by any process for the rest. */
int ck_fail(int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
    va_end(ap);
    if (ck.rank == 0 || (rc != -EINVAL && rc != -ENOENT))
        fprintf(stderr, "libductile: rank %d: %s\n", ck.rank, errbuf);
    return rc;
}

const char *dt_ckpt_strerror(void) { return errbuf; }

/* Every process gets the worst status (the lowest: errors are negative). */
int ck_agree(int rc)
{
    int all = rc;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, ck.comm);
    if (all < 0) {
        /* every process reports the failure: the lowest failing rank's message */
        int me = rc < 0 ? ck.rank : ck.size, who = me;
        MPI_Allreduce(&me, &who, 1, MPI_INT, MPI_MIN, ck.comm);
        if (who < ck.size)
            MPI_Bcast(errbuf, sizeof(errbuf), MPI_CHAR, who, ck.comm);
    }
    return all;
}

int dt_ckpt_init(const char *app, const char *dir, MPI_Comm comm)
{
    if (ck.on)
        return ck_fail(-EALREADY, "dt_ckpt_init: already called");
    memset(&ck, 0, sizeof(ck));
    agent_commits = 0; /* new connections: the first commit sets them up */
    tsync_last = -1;
    MPI_Comm_rank(comm, &ck.rank);
    if (!app || !*app || strchr(app, '/') || strlen(app) >= DT_CKPT_LABEL_MAX)
        return ck_fail(-EINVAL, "dt_ckpt_init: the application name '%s' must be 1 to 63 "
                    "characters without '/'", app ? app : "");
    const char *base = dir ? dir : getenv("DUCTILE_CKPT_DIR");
    const char *home = getenv("HOME");
    char cwd[PATH_MAX / 2] = "";
    if (base && base[0] != '/' && !getcwd(cwd, sizeof(cwd))) /* the agents need it whole */
        cwd[0] = '\0';
    if (base && base[0] != '/' && cwd[0])
        snprintf(ck.dir, sizeof(ck.dir), "%s/%s/%s", cwd, base, app);
    else if (base)
        snprintf(ck.dir, sizeof(ck.dir), "%s/%s", base, app);
    else
        snprintf(ck.dir, sizeof(ck.dir), "%s/.ductile/checkpoints/%s", home ? home : "/tmp", app);
    MPI_Comm_dup(comm, &ck.comm);
    MPI_Comm_size(ck.comm, &ck.size);
    MPI_Comm_split_type(ck.comm, MPI_COMM_TYPE_SHARED, ck.rank, MPI_INFO_NULL, &ck.node);
    /* Tests only (test_ckpt_transfer): every K processes of a host count as a node, so
     * that one host has several node files (and SHMR regions). */
    const char *ppn = getenv("DUCTILE_TEST_CKPT_PPN");
    int k = ppn ? atoi(ppn) : 0;
    MPI_Bcast(&k, 1, MPI_INT, 0, ck.comm);
    if (k > 0) {
        MPI_Comm host = ck.node;
        MPI_Comm_split(host, ck.rank / k, ck.rank, &ck.node);
        MPI_Comm_free(&host);
    }
    MPI_Comm_rank(ck.node, &ck.node_rank);
    int rc = ck.rank == 0 ? fsutil_mkdirs(ck.dir, 0700) : 0;
    char err[512] = "";
    if (rc < 0)
        ck_fail(rc, "cannot create the checkpoint directory %s: %s", ck.dir, strerror(-rc));
    rc = ck_agree(rc);
    if (rc == 0 && (rc = ckx_init(ck.comm, ck.rank, err, sizeof(err))) < 0) /* (collective) */
        rc = ck_agree(ck_fail(rc, "dt_ckpt_init: %s", err));
    if (rc < 0) {
        MPI_Comm_free(&ck.node);
        MPI_Comm_free(&ck.comm);
        return rc;
    }
    /* rank 0's environment names the agents (mpirun passes few variables to others) */
    const char *env = getenv("DUCTILE_CKPT_AGENTS");
    if (ck.rank == 0 && !agents_known) {
        snprintf(agents_now, sizeof(agents_now), "%s", env ? env : "");
        agents_known = 1;
    }
    char list[sizeof(agents_now)] = "";
    if (ck.rank == 0)
        memcpy(list, agents_now, sizeof(list));
    MPI_Bcast(list, sizeof(list), MPI_CHAR, 0, ck.comm);
    if (ckag_configure(ck.dir, list, err, sizeof(err)) < 0 && ck.rank == 0)
        fprintf(stderr, "libductile: %s; checkpoints go to the files in %s\n", err, ck.dir);
    long v = ck.rank == 0 ? ckptfiles_latest(ck.dir) : 0;
    /* a version the agents hold and have not flushed yet is newer than the files' */
    long va = 0;
    if (ck.rank == 0 && ckag_count() > 0 &&
        ckag_latest(&va, NULL, NULL, NULL, err, sizeof(err)) == 0 && va > v)
        v = va;
    MPI_Bcast(&v, 1, MPI_LONG, 0, ck.comm);
    ck.version = v;
    ck.on = 1;
    return 0;
}

/* This session's registration of a label, NULL if none yet. */
ck_var_t *ck_registered(const char *label)
{
    for (int i = 0; i < ck.nv; i++)
        if (!strcmp(ck.v[i].label, label))
            return &ck.v[i];
    return NULL;
}

/* The registration every dt_ckpt_add* makes once its own arguments are checked (why:
 * what is wrong with them, NULL if nothing); the same label again takes the new place,
 * count and function. */
static int add_var(const char *call, const char *why, const char *label, const ck_var_t *in,
                   MPI_Datatype type)
{
    if (!ck.on)
        return ck_fail(-EINVAL, "%s: call dt_ckpt_init first", call);
    if (!label)
        label = "";
    why = !*label || strlen(label) >= DT_CKPT_LABEL_MAX ? "a label is 1 to 63 characters"
          : in->count < 0 || (in->count > 0 && !in->data) ? "the data and its count do not fit"
                                                          : why;
    if (why)
        return ck_fail(-EINVAL, "%s '%s': %s", call, label, why);
    ck_var_t *v = ck_registered(label);
    if (!v) {
        ck_var_t *nv = realloc(ck.v, (size_t)(ck.nv + 1) * sizeof(*nv));
        if (!nv)
            return ck_fail(-ENOMEM, "%s '%s': out of memory", call, label);
        ck.v = nv;
        v = &ck.v[ck.nv++];
        *v = *in;
        snprintf(v->label, sizeof(v->label), "%s", label);
        v->esize = (int)dt_extent(type);
        v->dflt = NULL;
    }
    v->data = in->data;
    v->count = in->count;
    v->fn = in->fn;
    v->arg = in->arg;
    v->block = in->block;
    if (in->dflt) { /* DEFAULT, JOINING: a copy, count elements */
        char *d = malloc((size_t)(in->count * v->esize) + 1);
        if (!d)
            return ck_fail(-ENOMEM, "%s '%s': out of memory", call, label);
        memcpy(d, in->dflt, (size_t)(in->count * v->esize));
        free(v->dflt);
        v->dflt = d;
    }
    return 0;
}

int dt_ckpt_add(const char *label, void *data, long count, MPI_Datatype type, dt_dist_t dist,
                long block)
{
    ck_var_t v = {.data = data, .count = count, .dist = dist,
                  .block = dist == DT_DIST_BLOCK_CYCLIC ? block : 0};
    const char *why =
        dist != DT_DIST_BLOCK && dist != DT_DIST_BLOCK_CYCLIC && dist != DT_DIST_REPLICATED
            ? "dist must be DT_DIST_BLOCK, DT_DIST_BLOCK_CYCLIC or DT_DIST_REPLICATED"
        : dist == DT_DIST_BLOCK_CYCLIC && block < 1 ? "a block-cyclic block must be >= 1"
                                                    : NULL;
    return add_var("dt_ckpt_add", why, label, &v, type);
}

/* The integer types a process count or rank can be restored into. */
static int integer_type(MPI_Datatype t)
{
    const MPI_Datatype ok[] = {MPI_INT,      MPI_LONG,     MPI_LONG_LONG, MPI_SHORT,
                               MPI_UNSIGNED, MPI_UNSIGNED_LONG, MPI_INT32_T, MPI_INT64_T,
                               MPI_UINT32_T, MPI_UINT64_T};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (t == ok[i])
            return 1;
    return 0;
}

int dt_ckpt_add_value(const char *label, void *data, long count, MPI_Datatype type, dt_value_t how,
                      const void *dflt, dt_ckpt_fn *fn, void *arg)
{
    ck_var_t v = {.data = data, .count = count, .value = how, .fn = fn, .arg = arg,
                  .dist = how == DT_VALUE_JOINING ? CK_DIST_LOCAL : DT_DIST_REPLICATED,
                  .dflt = how == DT_VALUE_DEFAULT || how == DT_VALUE_JOINING ? (char *)dflt : NULL};
    int idx = how == DT_VALUE_SIZE || how == DT_VALUE_RANK;
    const char *why =
        how < DT_VALUE_SIZE || how > DT_VALUE_RECALC
            ? "how must be DT_VALUE_SIZE, DT_VALUE_RANK, DT_VALUE_DEFAULT, DT_VALUE_JOINING or "
              "DT_VALUE_RECALC"
        : idx && (count != 1 || !integer_type(type))
            ? "a process count or rank is one integer (MPI_INT, MPI_LONG, ...)"
        : !v.dflt && (how == DT_VALUE_DEFAULT || how == DT_VALUE_JOINING)
            ? "a default value is needed (dflt is NULL)"
        : !fn && how == DT_VALUE_RECALC ? "a recalculated value needs its function (fn is NULL)"
                                        : NULL;
    return add_var("dt_ckpt_add_value", why, label, &v, type);
}

int dt_ckpt_add_manual(const char *label, void *data, long count, MPI_Datatype type, int root,
                       dt_ckpt_fn *fn, void *arg)
{
    ck_var_t v = {.data = data, .count = count, .dist = CK_DIST_MANUAL, .block = root, .fn = fn,
                  .arg = arg};
    const char *why = root < 0 || (ck.on && root >= ck.size)
                          ? "root is not a process of the communicator"
                          : NULL;
    return add_var("dt_ckpt_add_manual", why, label, &v, type);
}

/* This process's share of one checkpoint, in bytes (replicated data: rank 0's copy). */
static long part_bytes(int i)
{
    const ck_var_t *v = &ck.v[i];
    return v->dist == DT_DIST_REPLICATED && ck.rank != 0 ? 0 : v->count * v->esize;
}

/* Rank r's elements of a variable of total elements among n processes (a manual
 * variable: at its restore, block is its root). */
long ck_share(int dist, long block, long total, int r, int n)
{
    long lo, hi;
    if (dist == DT_DIST_REPLICATED || dist == CK_DIST_LOCAL)
        return total;
    if (dist == CK_DIST_MANUAL)
        return r == block ? total : 0;
    if (dist == DT_DIST_BLOCK_CYCLIC)
        return dt_cyclic_count(total, block, r, n);
    dt_block_range(total, r, n, &lo, &hi);
    return hi - lo;
}

/* Every process registered the same variables, and the counts fit their distribution:
 * checked on rank 0 from everybody's counts; the totals go in the manifest. */
/* Ranks whose count of variable i is not its share of total; the first in *first. */
static int misfits(int i, long total, const long *all, int *first)
{
    const ck_var_t *v = &ck.v[i];
    int bad = 0;
    for (int r = ck.size - 1; r >= 0 && v->dist != CK_DIST_MANUAL; r--)
        if (all[r * (ck.nv + 1) + 1 + i] != ck_share(v->dist, v->block, total, r, ck.size)) {
            bad++;
            *first = r;
        }
    return bad;
}

static int check_counts(const long *all, long *total)
{
    for (int i = 0; i < ck.nv; i++) {
        const ck_var_t *v = &ck.v[i];
        long t = 0;
        for (int r = 0; r < ck.size; r++)
            t += all[r * (ck.nv + 1) + 1 + i];
        int same = v->dist == DT_DIST_REPLICATED || v->dist == CK_DIST_LOCAL;
        if (same) /* every process has rank 0's count */
            t = all[1 + i];
        total[i] = t;
        int first = 0;
        if (misfits(i, t, all, &first) == 0)
            continue;
        /* The sum is off when a process is: the total near it that the fewest ranks
         * miss names the rank that is wrong (one element short on the last rank: that
         * rank, not rank 0, whose share of the short sum would be smaller). */
        long best = t;
        int fewest = ck.size + 1;
        for (long d = 0; !same && d <= ck.size; d++)
            for (int sign = 1; sign >= -1; sign -= 2) {
                long cand = t + sign * d;
                int f = 0, n = cand >= 0 ? misfits(i, cand, all, &f) : ck.size + 1;
                if (n < fewest) {
                    fewest = n;
                    best = cand;
                    first = f;
                }
            }
        if (fewest > ck.size)
            misfits(i, best = t, all, &first);
        char who[160];
        snprintf(who, sizeof(who), "rank %d has %ld elements, its share of %ld is %ld", first,
                 all[first * (ck.nv + 1) + 1 + i], best,
                 ck_share(v->dist, v->block, best, first, ck.size));
        return ck_fail(-EINVAL, "dt_ckpt_commit '%s': %s", v->label, who);
    }
    return 0;
}

/* Writes this process's part (its pieces back to back) at its offset in its node's
 * file and syncs it: plain POSIX, so that it can run in a thread of its own. */
static int write_part(const char *path, long off, char *const *bufs, const long *lens, int n)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; off += lens[i++])
        for (long at = 0; at < lens[i] && rc == 0;) {
            ssize_t w = pwrite(fd, bufs[i] + at, (size_t)(lens[i] - at), (off_t)(off + at));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                rc = w < 0 ? -errno : -EIO;
            else
                at += w;
        }
    if (rc == 0 && n > 0 && fsync(fd) < 0)
        rc = -errno;
    close(fd);
    return rc;
}

static int write_data(char *const *bufs, const long *lens, int n);

static void *writer(void *arg)
{
    (void)arg;
    char *bufs[1] = {ck.pend.stage};
    ck.pend.rc = write_data(bufs, &ck.pend.len, 1);
    return NULL;
}

/* A variable's entry: what a restart needs to find and rebuild it. */
static json_t *var_entry(const ck_var_t *v, long total)
{
    json_t *e = json_pack("{s:s,s:i,s:i,s:I,s:I}", "label", v->label, "esize", v->esize, "dist",
                          v->dist, "block", (json_int_t)v->block, "total", (json_int_t)total);
    if (e && v->value)
        json_object_set_new(e, "value", json_integer(v->value));
    if (e && v->dflt) {
        size_t n = (size_t)(v->count * v->esize);
        char *b = malloc(b64_encoded_len(n) + 1);
        if (!b) {
            json_decref(e);
            return NULL;
        }
        b64_encode(v->dflt, n, b);
        json_object_set_new(e, "default", json_string(b));
        free(b);
    }
    return e;
}

static json_t *manifest(long version, const long *total, const long *parts)
{
    json_t *vars = json_array(), *ranks = json_array();
    for (int i = 0; i < ck.nv; i++)
        json_array_append_new(vars, var_entry(&ck.v[i], total[i]));
    /* per old rank: its file, the offset of its part there, and each variable's count */
    for (int r = 0; r < ck.size; r++) {
        const long *p = &parts[r * (ck.nv + 2)];
        json_t *counts = json_array();
        for (int i = 0; i < ck.nv; i++)
            json_array_append_new(counts, json_integer(p[2 + i]));
        json_array_append_new(ranks, json_pack("{s:I,s:I,s:o}", "file", (json_int_t)p[0],
                                               "offset", (json_int_t)p[1], "counts", counts));
    }
    return json_pack("{s:I,s:f,s:i,s:o,s:o}", "version", (json_int_t)version, "time",
                     (double)time(NULL), "procs", ck.size, "vars", vars, "ranks", ranks);
}

/* Rank 0: the manifest, then the version in place, then `latest`; older ones go. */
/* Every node's file is where rank 0 sees it: a directory that is not the same on every
 * node (a node's own /tmp) would publish a version that cannot be read back. */
static int all_files_here(const char *part, const long *parts)
{
    for (int r = 0; r < ck.size; r++) {
        char p[PATH_MAX + 64];
        struct stat st;
        snprintf(p, sizeof(p), "%s/node%ld.dat", part, parts[r * (ck.nv + 2)]);
        if (stat(p, &st) < 0)
            return ck_fail(-ENOENT, "the checkpoint directory %s is not the same on every node "
                        "(rank %d's node file is not there): use one that every node sees, "
                        "such as one in the home directory", ck.dir, r);
    }
    return 0;
}

static int publish(const char *part, long version, const long *total, const long *parts)
{
    char p[PATH_MAX + 64];
    int shared = all_files_here(part, parts);
    if (shared < 0)
        return shared;
    snprintf(p, sizeof(p), "%s/manifest.json", part);
    json_t *m = manifest(version, total, parts);
    int rc = m && json_dump_file(m, p, JSON_COMPACT) == 0 ? ckptfiles_fsync(p) : -EIO;
    json_decref(m);
    if (rc == 0)
        rc = ckptfiles_publish(ck.dir, CKPTFILES_PART, version);
    if (rc < 0)
        return ck_fail(rc, "cannot publish the checkpoint in %s: %s", ck.dir, strerror(-rc));
    return 0;
}

/* Collective: the registrations checked, this process's node file and its offset
 * there; what the manifest needs kept in ck.pend. */
static int start_commit(void)
{
    ck.pend.t0 = MPI_Wtime();
    long version = ck.version + 1;
    int w = ck.nv + 1;
    long *mine = calloc((size_t)w, sizeof(long));
    long *all = ck.rank == 0 ? calloc((size_t)w * (size_t)ck.size, sizeof(long)) : NULL;
    ck.pend.total = calloc((size_t)ck.nv + 1, sizeof(long));
    ck.pend.row = calloc((size_t)ck.nv + 2, sizeof(long));
    int rc = ck_agree(mine && ck.pend.total && ck.pend.row && (ck.rank != 0 || all) ? 0 : -ENOMEM);
    if (rc == 0) {
        mine[0] = ck.nv;
        for (int i = 0; i < ck.nv; i++)
            mine[1 + i] = ck.v[i].count;
        MPI_Gather(mine, w, MPI_LONG, all, w, MPI_LONG, 0, ck.comm);
        for (int r = 0; ck.rank == 0 && r < ck.size && rc == 0; r++)
            if (all[r * w] != ck.nv)
                rc = ck_fail(-EINVAL, "dt_ckpt_commit: rank %d registered %ld variables, rank 0 %d",
                          r, all[r * w], ck.nv);
        if (ck.rank == 0 && rc == 0)
            rc = check_counts(all, ck.pend.total);
        rc = ck_agree(rc);
    }
    free(mine);
    free(all);
    ck.pend.version = version;
    ck.pend.on = 1;
    if (rc < 0)
        return rc;
    /* one file per node, numbered in the order of the nodes' lowest ranks; each process
     * writes its part at its offset there */
    int file = 0;
    MPI_Comm leads;
    MPI_Comm_split(ck.comm, ck.node_rank == 0 ? 0 : MPI_UNDEFINED, ck.rank, &leads);
    if (leads != MPI_COMM_NULL) {
        MPI_Comm_rank(leads, &file);
        MPI_Comm_free(&leads);
    }
    MPI_Bcast(&file, 1, MPI_INT, 0, ck.node);
    long len = 0, off = 0;
    for (int i = 0; i < ck.nv; i++)
        len += part_bytes(i);
    MPI_Exscan(&len, &off, 1, MPI_LONG, MPI_SUM, ck.node);
    ck.pend.file = file;
    ck.pend.off = ck.node_rank == 0 ? 0 : off;
    ck.pend.len = len;
    MPI_Allreduce(&len, &ck.pend.node_bytes, 1, MPI_LONG, MPI_SUM, ck.node);
    long nfiles = file + 1;
    MPI_Allreduce(&nfiles, &ck.pend.nfiles, 1, MPI_LONG, MPI_MAX, ck.comm);
    ck.pend.row[0] = file;
    ck.pend.row[1] = ck.pend.off;
    for (int i = 0; i < ck.nv; i++)
        ck.pend.row[2 + i] = part_bytes(i) / (ck.v[i].esize ? ck.v[i].esize : 1);
    snprintf(ck.pend.part, sizeof(ck.pend.part), "%s/v%ld.part", ck.dir, version);
    snprintf(ck.pend.path, sizeof(ck.pend.path), "%s/node%d.dat", ck.pend.part, file);
    return 0;
}

/* Collective: the version's directory and this node's file, made for the file level. */
static int files_setup(void)
{
    int rc = 0;
    if (ck.rank == 0) {
        ckptfiles_rmtree(ck.pend.part);
        if (mkdir(ck.pend.part, 0700) < 0)
            rc = ck_fail(-errno, "cannot create %s: %s", ck.pend.part, strerror(errno));
    }
    rc = ck_agree(rc);
    if (rc == 0 && ck.node_rank == 0) {
        int fd = open(ck.pend.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 && errno == ENOENT && ck.rank != 0) /* rank 0 made the directory */
            rc = ck_fail(-ENOENT, "the checkpoint directory %s is not the same on every "
                      "node (it is not on this one): use one that every node sees, such "
                      "as one in the home directory", ck.dir);
        else if (fd < 0)
            rc = ck_fail(-errno, "cannot write the checkpoint file %s: %s", ck.pend.path,
                      strerror(errno));
        else
            close(fd);
    }
    return rc == 0 ? ck_agree(rc) : rc;
}

/* Rank 0 says why a commit or a restart does without the agents, once until they
 * answer again. */
void ck_agents_failed(const char *what, const char *why)
{
    if (ck.rank == 0 && !ck.agents_down)
        fprintf(stderr, "libductile: %s: %s; using the checkpoint files in %s instead\n", what,
                why, ck.dir);
    ck.agents_down = 1;
}

static void agents_answer(void)
{
    if (ck.rank == 0 && ck.agents_down)
        fprintf(stderr, "libductile: the checkpoint agents answer again\n");
    ck.agents_down = 0;
}

/* Collective: every process's endpoint knows every agent (rank 0 asks them). */
int ck_agents_reach(char *err, size_t errlen)
{
    ckag_addr_t *addrs = calloc((size_t)ckag_count(), sizeof(*addrs));
    int rc = addrs ? 0 : -ENOMEM;
    if (rc == 0 && ck.rank == 0)
        rc = ckag_hello(addrs, err, errlen);
    rc = ck_agree(rc);
    if (rc == 0) {
        MPI_Bcast(addrs, (int)(ckag_count() * sizeof(*addrs)), MPI_BYTE, 0, ck.comm);
        if (ckx_pull()) /* every endpoint asks the agents for its transfers */
            ckag_share_key(ck.comm);
        /* SHMR: only a node's lead has an endpoint, its region the node's shared one */
        int shmr = ckx_shmr();
        rc = ckag_peers(addrs, !shmr || ck.node_rank == 0, !shmr, err, errlen);
        if (ck_agree(rc) < 0 && rc == 0)
            snprintf(err, errlen, "another process has no fabric endpoint");
        rc = ck_agree(rc);
        if (rc == 0 && shmr)
            rc = ck_agree(ckx_shm_open(ck.node, ck.node_rank, err, errlen));
    }
    free(addrs);
    return rc;
}

/* Collective: this commit goes to the agents: rank 0 has each node file's region made
 * and tells every process where its node's file is. */
static int agents_setup(char *err, size_t errlen)
{
    int rc = ck_agents_reach(err, errlen);
    if (rc < 0)
        return rc;
    long *bytes = ck.rank == 0 ? calloc((size_t)ck.pend.nfiles, sizeof(long)) : NULL;
    ckag_region_t *reg = calloc((size_t)ck.pend.nfiles, sizeof(*reg));
    rc = ck_agree(reg && (ck.rank != 0 || bytes) ? 0 : -ENOMEM);
    long pair[2] = {ck.node_rank == 0 ? ck.pend.file : -1, ck.pend.node_bytes};
    long *pairs = ck.rank == 0 ? calloc((size_t)ck.size * 2, sizeof(long)) : NULL;
    if (rc == 0)
        rc = ck_agree(ck.rank != 0 || pairs ? 0 : -ENOMEM);
    if (rc == 0) {
        MPI_Gather(pair, 2, MPI_LONG, pairs, 2, MPI_LONG, 0, ck.comm);
        for (int r = 0; ck.rank == 0 && r < ck.size; r++)
            if (pairs[2 * r] >= 0)
                bytes[pairs[2 * r]] = pairs[2 * r + 1];
        for (long f = 0; ck.rank == 0 && f < ck.pend.nfiles && rc == 0; f++)
            rc = ckag_put(ck.pend.version, f, bytes[f], &reg[f], err, errlen);
        rc = ck_agree(rc);
    }
    if (rc == 0) {
        MPI_Bcast(reg, (int)(ck.pend.nfiles * sizeof(*reg)), MPI_BYTE, 0, ck.comm);
        ck.pend.reg = reg[ck.pend.file];
    }
    free(pairs);
    free(bytes);
    free(reg);
    return rc;
}

/* This process's part: to its agent's region, or to its node file. */
static int write_data(char *const *bufs, const long *lens, int n)
{
    if (ck.pend.agent && ckx_shmr()) /* every process of the node at once */
        return ckx_shm_commit(ck.node, ck.node_rank, ck.pend.file, &ck.pend.reg, ck.pend.off,
                              bufs, lens, n, ck.pend.node_bytes, ck.pend.why,
                              sizeof(ck.pend.why));
    if (ck.pend.agent)
        return ckag_push(ck.pend.file, &ck.pend.reg, ck.pend.off, bufs, lens, n, ck.pend.why,
                         sizeof(ck.pend.why));
    return ck.pend.len > 0 ? write_part(ck.pend.path, ck.pend.off, bufs, lens, n) : 0;
}

static void forget_pending(void)
{
    free(ck.pend.total);
    free(ck.pend.row);
    memset(&ck.pend, 0, sizeof(ck.pend)); /* (pend.stage is ck.stage's) */
}

/* The asynchronous commits' copy, kept from one commit to the next: a new one each
 * time had its pages faulted in on every commit (the copy of 1 GiB cost more than a
 * blocking commit). */
static char *stage_for(long len)
{
    if (ck.stage_cap < len) {
        free(ck.stage);
        ck.stage = malloc((size_t)len);
        ck.stage_cap = ck.stage ? len : 0;
    }
    return ck.stage;
}

/* This process's part as the commit found it: the asynchronous copy, or the
 * variables themselves (a blocking commit has not returned yet). */
static int write_saved(void)
{
    if (ck.pend.stage) {
        char *bufs[1] = {ck.pend.stage};
        return write_data(bufs, &ck.pend.len, 1);
    }
    char **bufs = malloc(((size_t)ck.nv + 1) * sizeof(char *));
    long *lens = malloc(((size_t)ck.nv + 1) * sizeof(long));
    int rc = bufs && lens ? 0 : -ENOMEM;
    for (int i = 0; rc == 0 && i < ck.nv; i++) {
        bufs[i] = ck.v[i].data;
        lens[i] = part_bytes(i);
    }
    if (rc == 0)
        rc = write_data(bufs, lens, ck.nv);
    free(bufs);
    free(lens);
    return rc;
}

/* Collective: the commit under way goes to the files after all (an agent failed). */
static int to_files(void)
{
    ck.pend.agent = 0;
    int rc = files_setup();
    if (rc == 0) {
        rc = write_saved();
        if (rc < 0)
            ck_fail(rc, "cannot write the checkpoint file %s: %s", ck.pend.path, strerror(-rc));
        rc = ck_agree(rc);
    }
    return rc;
}

/* Tests only (test_ckpt_agent_count): DUCTILE_TEST_TSYNC stands for the machine, so
 * that the controller's decisions do not depend on its speed: "2=1,1,2;1=3" makes the
 * measures with 2 agents 1, 1, then 2 (the last one repeats), and with 1 agent 3. */
static double fake_tsync(double measured)
{
    static int used[64];
    const char *f = getenv("DUCTILE_TEST_TSYNC");
    int n = ckag_count();
    if (!f || n < 1 || n >= 64)
        return measured;
    char key[16];
    snprintf(key, sizeof(key), "%d=", n);
    for (const char *p = f; p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL) {
        if (strncmp(p, key, strlen(key)))
            continue;
        p += strlen(key);
        const char *end = p + strcspn(p, ";");
        for (int k = 0; k < used[n]; k++) {
            const char *comma = memchr(p, ',', (size_t)(end - p));
            if (!comma)
                break;
            p = comma + 1;
        }
        used[n]++;
        return strtod(p, NULL);
    }
    return measured;
}

/* A blocking commit reached the agents: rank 0 keeps its time for the controller. */
static void measured(void)
{
    int first = agent_commits++ == 0;
    if (ck.rank != 0 || ck.pend.threaded || first)
        return;
    tsync_last = fake_tsync(MPI_Wtime() - ck.pend.t0);
}

/* Collective: the writes of the commit under way done everywhere, its manifest, then
 * the version published (by the agents, or in the files). 0 when no commit is under
 * way. */
int ck_finish_commit(void)
{
    if (!ck.pend.on)
        return 0;
    if (ck.pend.threaded)
        pthread_join(ck.pend.thread, NULL);
    int rc = ck_agree(ck.pend.rc);
    if (rc < 0 && ck.pend.agent) {
        ck_agents_failed("a checkpoint commit", ck.pend.rc < 0 ? ck.pend.why : "another process's "
                      "transfer to its checkpoint agent failed");
        rc = to_files();
    } else if (rc < 0) {
        if (ck.pend.rc < 0)
            ck_fail(ck.pend.rc, "cannot write the checkpoint file %s: %s", ck.pend.path,
                 strerror(-ck.pend.rc));
    }
    /* Tests only (test_ckpt_files): the run dies with the version's files written and
     * not published, the commit a kill interrupts. */
    const char *crash = getenv("DUCTILE_TEST_CKPT_CRASH");
    if (rc == 0 && crash && atol(crash) == ck.pend.version)
        _exit(9);
    long *rows = NULL;
    if (rc == 0) {
        rows = ck.rank == 0 ? calloc((size_t)(ck.nv + 2) * (size_t)ck.size, sizeof(long)) : NULL;
        rc = ck_agree(ck.rank != 0 || rows ? 0 : -ENOMEM);
        if (rc == 0)
            MPI_Gather(ck.pend.row, ck.nv + 2, MPI_LONG, rows, ck.nv + 2, MPI_LONG, 0, ck.comm);
    }
    if (rc == 0 && ck.pend.agent) {
        int arc = 0;
        if (ck.rank == 0) {
            json_t *m = manifest(ck.pend.version, ck.pend.total, rows);
            arc = m ? ckag_publish(ck.pend.version, ck.pend.nfiles, m, ck.pend.why,
                                   sizeof(ck.pend.why))
                    : -ENOMEM;
            json_decref(m);
            ckag_done();
        }
        if (ck_agree(arc) < 0) {
            ck_agents_failed("a checkpoint commit", ck.pend.why);
            rc = to_files();
        } else {
            agents_answer();
            measured();
        }
    }
    if (rc == 0 && !ck.pend.agent)
        rc = ck_agree(ck.rank == 0 ? publish(ck.pend.part, ck.pend.version, ck.pend.total, rows) : 0);
    free(rows);
    if (rc == 0)
        ck.version = ck.pend.version;
    forget_pending();
    return rc;
}

int dt_ckpt_probe(int *changed)
{
    if (changed)
        *changed = 0;
    if (!ck.on)
        return ck_fail(-EINVAL, "dt_ckpt_probe: call dt_ckpt_init first");
    int rc = ck_finish_commit(); /* no transfer to the agents it may leave is under way */
    char list[sizeof(agents_now)] = "";
    int ch = 0;
    if (ck.rank == 0 && dt_agents_query(list, sizeof(list), tsync_last) == 1 &&
        strcmp(list, agents_now))
        ch = 1;
    tsync_last = -1; /* told (or nobody to tell) */
    MPI_Bcast(&ch, 1, MPI_INT, 0, ck.comm);
    if (!ch)
        return rc;
    MPI_Bcast(list, sizeof(list), MPI_CHAR, 0, ck.comm);
    char err[512] = "";
    int n = ckag_configure(ck.dir, list, err, sizeof(err));
    if (ck.rank == 0) {
        memcpy(agents_now, list, sizeof(agents_now));
        if (n < 0)
            fprintf(stderr, "libductile: %s; checkpoints go to the files in %s\n", err, ck.dir);
        else
            fprintf(stderr, "libductile: the job's checkpoint agents are now %s\n",
                    *list ? list : "none: checkpoints go to the files");
    }
    ck.agents_down = 0; /* new agents: a failure is worth saying again */
    agent_commits = 0;
    if (changed)
        *changed = 1;
    return rc;
}

int dt_ckpt_commit(void)
{
    if (!ck.on)
        return ck_fail(-EINVAL, "dt_ckpt_commit: call dt_ckpt_init first");
    /* an asynchronous one before: its result is this call's; the agents the scheduler
     * changed (a resize) take the new version whole */
    int rc = dt_ckpt_probe(NULL);
    if (rc < 0)
        return rc;
    rc = start_commit();
    if (rc == 0 && ckag_count() > 0) {
        ck.pend.agent = agents_setup(ck.pend.why, sizeof(ck.pend.why)) == 0;
        if (!ck.pend.agent) {
            ck_agents_failed("a checkpoint commit", ck.pend.why);
            if (ck.rank == 0)
                ckag_done(); /* the agents that gave a region stop waiting for its data */
        }
    }
    if (rc == 0 && !ck.pend.agent)
        rc = files_setup();
    if (rc < 0) {
        forget_pending();
        return rc;
    }
    /* Asynchronous: the data copied (the application may change it as soon as we
     * return), written by a thread; the next commit, dt_ckpt_wait or dt_ckpt_finalize
     * publishes it. Without memory or a thread for that, the commit is a blocking one. */
    /* (SHMR's transfer is collective on the node: not in a thread) */
    if (ck.async && ck.pend.len > 0 && !(ck.pend.agent && ckx_shmr()) &&
        (ck.pend.stage = stage_for(ck.pend.len))) {
        long at = 0;
        for (int i = 0; i < ck.nv; i++) {
            memcpy(ck.pend.stage + at, ck.v[i].data, (size_t)part_bytes(i));
            at += part_bytes(i);
        }
        if (pthread_create(&ck.pend.thread, NULL, writer, NULL) == 0) {
            ck.pend.threaded = 1;
            return 0;
        }
    }
    ck.pend.rc = write_saved();
    return ck_finish_commit();
}

int dt_ckpt_set_async(int on)
{
    ck.async = on != 0;
    return 0;
}

int dt_ckpt_wait(void) { return ck.on ? ck_finish_commit() : 0; }

int dt_ckpt_set_transfer(const char *transfer, const char *regions)
{
    if (!ck.on)
        return ck_fail(-EINVAL, "dt_ckpt_set_transfer: call dt_ckpt_init first");
    int rc = ck_finish_commit(); /* a commit under way ends the way it began */
    char err[300];
    if (ckx_set(transfer, regions, err, sizeof(err)) < 0)
        return ck_fail(-EINVAL, "%s", err);
    return rc;
}

/* keep: the process starts another session at once (dt_ckpt_redistribute), which
 * reuses its endpoint and connections to the same agents. */
static int finalize_session(int release, int keep)
{
    if (!ck.on)
        return 0;
    int rc = ck_finish_commit();
    if (release && ck.rank == 0 && ckag_count() > 0)
        ckag_release();
    ck_forget_saved();
    ckx_report(ck.comm, ck.rank);
    ckx_shm_close(); /* (the node's communicator goes with the session) */
    if (keep)
        ckag_suspend();
    else
        ckag_shutdown();
    for (int i = 0; i < ck.nv; i++)
        free(ck.v[i].dflt);
    free(ck.v);
    free(ck.stage);
    MPI_Comm_free(&ck.node);
    MPI_Comm_free(&ck.comm);
    memset(&ck, 0, sizeof(ck));
    return rc;
}

static int finalize(int release) { return finalize_session(release, 0); }

int dt_ckpt_finalize(void) { return finalize(0); }

/* ---- a malleable job's resize through the same path --------------------------- */

int dt_ckpt_redistribute(const char *app, const char *dir, MPI_Comm inter, MPI_Comm next,
                         long *version)
{
    int before = ck.on, rc = 0, theirs = 0, prev_rank = before ? ck.rank : -1;
    long committed = 0, latest = 0;
    if (before) { /* the processes before the adaptation: the data as a version */
        ck.async = 0; /* whole before the new processes look */
        rc = dt_ckpt_commit();
        committed = rc < 0 ? 0 : ck.version;
        /* the agents keep it in memory; a process that stays keeps its endpoint */
        int frc = finalize_session(0, next != MPI_COMM_NULL);
        rc = rc < 0 ? rc : frc;
    }
    /* over both groups: the new processes learn whether (and which) version was made
     * before any of them reads it (an intercommunicator's reduction gives each group the
     * other's result; the old processes agree already) */
    if (MPI_Allreduce(&rc, &theirs, 1, MPI_INT, MPI_MIN, inter) != MPI_SUCCESS ||
        MPI_Allreduce(&committed, &latest, 1, MPI_LONG, MPI_MAX, inter) != MPI_SUCCESS)
        return ck_fail(-EIO, "dt_ckpt_redistribute: the processes before and after the resize "
                    "cannot reach each other");
    if (!before) {
        rc = theirs;
        committed = latest;
    }
    if (rc < 0)
        return before ? rc : ck_fail(rc, "dt_ckpt_redistribute: the processes before the resize "
                                  "could not checkpoint the data");
    if (next == MPI_COMM_NULL)
        return 0; /* a leaving process: its part is in the version */
    if ((rc = dt_ckpt_init(app, dir, next)) < 0)
        return rc;
    ck.resized = 1; /* the staying processes may have new ranks (a shrink's leave anywhere) */
    ck.prev_rank = prev_rank;
    long v = 0;
    if ((rc = dt_ckpt_restart(&v)) < 0)
        return rc;
    if (v != committed)
        return ck_agree(ck_fail(-EIO, "dt_ckpt_redistribute: the version made for the resize (%ld) "
                          "is not the latest found (%ld)", committed, v));
    if (version)
        *version = v;
    return 1;
}

int dt_ckpt_finalize_release(void) { return finalize(1); }
