/* Restart and restore (docs/checkpointing.md): the newest complete version, from the
 * agents when they hold it and from the files otherwise, and each variable rebuilt for
 * the current number of processes: blocks and block-cyclic data from the old parts that
 * overlap, replicated data and values (dt_ckpt_add_value) as their kind says, manual
 * data whole on one process. dt_ckpt.c makes the versions. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "b64.h"
#include "ckptfiles.h"
#include "dt_ckpt_state.h"
#include "dt_ckxfer.h"

/* ---- restart ------------------------------------------------------------------ */

void ck_forget_saved(void)
{
    json_decref(ck.man);
    ck.man = NULL;
    for (int i = 0; ck.saved && i < ck.nsaved; i++)
        free(ck.saved[i].dflt);
    free(ck.saved);
    ck.saved = NULL;
    ck.nsaved = ck.old_size = 0;
}

static int load_manifest(const char *text)
{
    json_error_t jerr;
    json_t *m = json_loads(text, 0, &jerr), *vars, *ranks;
    int procs;
    if (!m || json_unpack(m, "{s:i,s:o,s:o}", "procs", &procs, "vars", &vars, "ranks", &ranks) < 0 ||
        !json_is_array(vars) || !json_is_array(ranks) || procs < 1 ||
        json_array_size(ranks) != (size_t)procs) {
        json_decref(m);
        return -EINVAL;
    }
    ck.saved = calloc(json_array_size(vars) + 1, sizeof(*ck.saved));
    if (!ck.saved) {
        json_decref(m);
        return -ENOMEM;
    }
    size_t i;
    json_t *e;
    ck.nsaved = (int)json_array_size(vars); /* forget_saved frees what is read */
    json_array_foreach(vars, i, e)
    {
        ck_saved_t *s = &ck.saved[i];
        const char *label, *dflt = NULL;
        json_int_t block, total;
        if (json_unpack(e, "{s:s,s:i,s:i,s:I,s:I,s?i,s?s}", "label", &label, "esize", &s->esize,
                        "dist", &s->dist, "block", &block, "total", &total, "value", &s->value,
                        "default", &dflt) < 0 ||
            s->esize < 1 || total < 0 || (dflt && strlen(dflt) / 4 * 3 > (size_t)total * s->esize + 2) ||
            (dflt && !(s->dflt = malloc(strlen(dflt) / 4 * 3 + 1))) ||
            (dflt && b64_decode(dflt, s->dflt) != total * s->esize)) {
            ck.man = m; /* freed with the rest */
            ck_forget_saved();
            return -EINVAL;
        }
        snprintf(s->label, sizeof(s->label), "%s", label);
        s->block = (long)block;
        s->total = (long)total;
    }
    ck.old_size = procs;
    ck.man = m;
    return 0;
}

/* Rank 0: the newest complete version the agents hold, if it is not older than the
 * files' (v), with its manifest; every process then has its node files' regions. */
static int agents_restart(long *v, char **text, long *len)
{
    char err[512] = "";
    long va = 0, nf = 0;
    char *mtext = NULL;
    ckag_region_t *reg = NULL;
    ckag_set_regions(0, NULL);
    int rc = ck_agents_reach(err, sizeof(err));
    if (rc == 0 && ck.rank == 0)
        rc = ckag_latest(&va, &mtext, &nf, &reg, err, sizeof(err));
    rc = ck_agree(rc);
    int use = rc == 0 && ck.rank == 0 && va > 0 && va >= *v;
    MPI_Bcast(&use, 1, MPI_INT, 0, ck.comm);
    MPI_Bcast(&nf, 1, MPI_LONG, 0, ck.comm);
    if (rc < 0)
        ck_agents_failed("a checkpoint restart", err);
    if (!use) {
        if (ck.rank == 0)
            ckag_done();
        free(mtext);
        free(reg);
        return 0;
    }
    if (ck.rank != 0)
        reg = calloc((size_t)nf, sizeof(*reg));
    if (ck_agree(reg ? 0 : -ENOMEM) < 0) {
        free(mtext);
        free(reg);
        return 0;
    }
    MPI_Bcast(reg, (int)(nf * sizeof(*reg)), MPI_BYTE, 0, ck.comm);
    ckag_set_regions(nf, reg);
    if (ck.rank == 0) {
        free(*text);
        *text = mtext;
        *v = va;
        *len = (long)strlen(mtext) + 1;
    }
    return 1;
}

int dt_ckpt_restart(long *version)
{
    if (!ck.on)
        return ck_fail(-EINVAL, "dt_ckpt_restart: call dt_ckpt_init first");
    int prc = ck_finish_commit();
    if (prc < 0)
        return prc;
    ck_forget_saved();
    char *text = NULL;
    long len = 0, v = 0;
    if (ck.rank == 0) {
        /* what a run killed mid-commit left: never a version */
        DIR *d = opendir(ck.dir);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            size_t n = strlen(e->d_name);
            if (n > 5 && !strcmp(e->d_name + n - 5, ".part")) {
                char p[PATH_MAX + 256];
                snprintf(p, sizeof(p), "%s/%s", ck.dir, e->d_name);
                ckptfiles_rmtree(p);
            }
        }
        if (d)
            closedir(d);
        v = ckptfiles_latest(ck.dir);
        if (v > 0) {
            char p[PATH_MAX + 64];
            snprintf(p, sizeof(p), "%s/v%ld/manifest.json", ck.dir, v);
            json_error_t jerr;
            json_t *m = json_load_file(p, 0, &jerr);
            text = m ? json_dumps(m, JSON_COMPACT) : NULL;
            json_decref(m);
            len = text ? (long)strlen(text) + 1 : -1;
        }
    }
    MPI_Bcast(&v, 1, MPI_LONG, 0, ck.comm);
    if (ckag_count() > 0) {
        MPI_Bcast(&len, 1, MPI_LONG, 0, ck.comm);
        agents_restart(&v, &text, &len); /* newer, or whole where the files' is damaged */
        MPI_Bcast(&v, 1, MPI_LONG, 0, ck.comm);
    }
    MPI_Bcast(&len, 1, MPI_LONG, 0, ck.comm);
    if (len < 0)
        return ck_agree(ck_fail(-EIO, "the checkpoint's manifest in %s cannot be read", ck.dir));
    if (v == 0) {
        if (version)
            *version = 0;
        return 0;
    }
    if (ck.rank != 0)
        text = malloc((size_t)len);
    int rc = ck_agree(text ? 0 : -ENOMEM);
    if (rc == 0)
        MPI_Bcast(text, (int)len, MPI_CHAR, 0, ck.comm);
    if (rc == 0)
        rc = ck_agree(load_manifest(text));
    free(text);
    if (rc < 0)
        return ck_fail(rc, "the checkpoint's manifest in %s is damaged", ck.dir);
    ck.version = v;
    if (version)
        *version = v;
    return 1;
}

static const ck_saved_t *saved_var(const char *label, int *index)
{
    for (int i = 0; i < ck.nsaved; i++)
        if (!strcmp(ck.saved[i].label, label)) {
            *index = i;
            return &ck.saved[i];
        }
    return NULL;
}

/* Where a manual variable goes whole: this run's root, else the saved one while that
 * process exists. */
static long manual_root(const ck_saved_t *s)
{
    const ck_var_t *v = ck_registered(s->label);
    long root = v && v->dist == CK_DIST_MANUAL ? v->block : s->block;
    return root >= 0 && root < ck.size ? root : 0;
}

/* This process's share of a saved variable on the current number of processes. */
static long new_count(const ck_saved_t *s)
{
    return ck_share(s->dist, s->dist == CK_DIST_MANUAL ? manual_root(s) : s->block, s->total,
                 ck.rank, ck.size);
}

int dt_ckpt_count(const char *label, long *count, long *total)
{
    int i;
    const ck_saved_t *s = ck.man && label ? saved_var(label, &i) : NULL;
    if (!s)
        return ck_fail(-ENOENT, "dt_ckpt_count: no variable '%s' in the restarted checkpoint",
                    label ? label : "");
    if (count)
        *count = new_count(s);
    if (total)
        *total = s->total;
    return 0;
}

/* Old rank r's part of variable vi: its file and the byte offset where it starts. */
static int old_part(int r, int vi, long *count, char *path, size_t plen, long *offset,
                    long *filenum)
{
    json_t *rk = json_array_get(json_object_get(ck.man, "ranks"), (size_t)r);
    json_int_t file = 0, off = 0;
    json_t *counts = NULL;
    if (!rk || json_unpack(rk, "{s:I,s:I,s:o}", "file", &file, "offset", &off, "counts", &counts) < 0 ||
        json_array_size(counts) != (size_t)ck.nsaved)
        return -EINVAL;
    long at = (long)off;
    for (int i = 0; i < vi; i++)
        at += (long)json_integer_value(json_array_get(counts, (size_t)i)) * ck.saved[i].esize;
    *count = (long)json_integer_value(json_array_get(counts, (size_t)vi));
    *offset = at;
    *filenum = (long)file;
    snprintf(path, plen, "%s/v%ld/node%lld.dat", ck.dir, ck.version, (long long)file);
    return 0;
}

static int read_at(const char *path, void *buf, long len, long offset)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    long done = 0;
    while (done < len) {
        ssize_t n = pread(fd, (char *)buf + done, (size_t)(len - done), (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += n;
    }
    close(fd);
    return done == len ? 0 : -EIO;
}

/* From the agent that holds the version, else (or if it fails) from the files. */
static int read_old(long file, const char *path, void *buf, long len, long offset)
{
    char err[512];
    if (ckx_phase() == CKX_RECORD) /* SHMR: what the node's lead fetches next */
        return ckx_record(file, offset, len);
    if (ckx_phase() == CKX_REPLAY)
        return ckx_replay(buf, len) == 0 ? 0 : read_at(path, buf, len, offset);
    if (ckag_has_regions() && ckag_read(file, buf, len, offset, err, sizeof(err)) == 0)
        return 0;
    return read_at(path, buf, len, offset);
}

/* Block: the overlap of my new block with each old rank's block. */
static int restore_block(const ck_saved_t *s, int vi, char *out)
{
    long nlo, nhi;
    dt_block_range(s->total, ck.rank, ck.size, &nlo, &nhi);
    for (int r = 0; r < ck.old_size; r++) {
        long olo, ohi, cnt, off, file;
        char path[PATH_MAX + 64];
        dt_block_range(s->total, r, ck.old_size, &olo, &ohi);
        long a = olo > nlo ? olo : nlo, b = ohi < nhi ? ohi : nhi;
        if (b <= a)
            continue;
        if (old_part(r, vi, &cnt, path, sizeof(path), &off, &file) < 0 || cnt != ohi - olo)
            return -EINVAL;
        int rc = read_old(file, path, out + (a - nlo) * s->esize, (b - a) * s->esize,
                         off + (a - olo) * s->esize);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Block-cyclic: block k of the array is old rank k % P's (k / P)-th and new rank
 * k % P''s (k / P')-th; each old part is read once and its blocks that are mine kept. */
static int restore_cyclic(const ck_saved_t *s, int vi, char *out)
{
    long b = s->block, nblocks = (s->total + b - 1) / b;
    for (int r = 0; r < ck.old_size; r++) {
        long cnt, off, file;
        char path[PATH_MAX + 64];
        if (old_part(r, vi, &cnt, path, sizeof(path), &off, &file) < 0 ||
            cnt != dt_cyclic_count(s->total, b, r, ck.old_size))
            return -EINVAL;
        int mine = 0;
        for (long k = r; k < nblocks && !mine; k += ck.old_size)
            mine = k % ck.size == ck.rank;
        if (!mine || cnt == 0)
            continue;
        char *part = malloc((size_t)(cnt * s->esize));
        if (!part)
            return -ENOMEM;
        int rc = read_old(file, path, part, cnt * s->esize, off);
        for (long k = r; rc == 0 && k < nblocks; k += ck.old_size) {
            if (k % ck.size != ck.rank)
                continue;
            long len = k == nblocks - 1 ? s->total - k * b : b;
            memcpy(out + (k / ck.size) * b * s->esize, part + (k / ck.old_size) * b * s->esize,
                   (size_t)(len * s->esize));
        }
        free(part);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* A manual variable: every old part, in rank order, to its root. */
static int restore_manual(const ck_saved_t *s, int vi, char *out)
{
    long at = 0;
    for (int r = 0; ck.rank == manual_root(s) && r < ck.old_size; r++) {
        long cnt, off, file;
        char path[PATH_MAX + 64];
        if (old_part(r, vi, &cnt, path, sizeof(path), &off, &file) < 0 || cnt < 0 ||
            at + cnt > s->total)
            return -EINVAL;
        int rc = read_old(file, path, out + at * s->esize, cnt * s->esize, off);
        if (rc < 0)
            return rc;
        at += cnt;
    }
    return at == s->total || ck.rank != manual_root(s) ? 0 : -EINVAL;
}

static int put_int(char *out, int esize, long value)
{
    int32_t i32 = (int32_t)value;
    int64_t i64 = value;
    int16_t i16 = (int16_t)value;
    const void *src = esize == 8 ? (const void *)&i64 : esize == 4 ? (const void *)&i32 : &i16;
    if (esize != 2 && esize != 4 && esize != 8)
        return -EINVAL;
    memcpy(out, src, (size_t)esize);
    return 0;
}

/* A value (dt_ckpt_add_value), or replicated data: rank 0's copy (a joining value: this
 * rank's own, or the default on a rank that did not exist). */
static int restore_value(const ck_saved_t *s, int vi, char *out)
{
    long bytes = s->total * s->esize, cnt, off, file;
    char path[PATH_MAX + 64];
    int r = s->dist != CK_DIST_LOCAL ? 0 : ck.resized ? ck.prev_rank : ck.rank;
    if (s->value == DT_VALUE_SIZE || s->value == DT_VALUE_RANK)
        return put_int(out, s->esize, s->value == DT_VALUE_SIZE ? ck.size : ck.rank);
    if (s->value == DT_VALUE_DEFAULT ||
        (s->value == DT_VALUE_JOINING && (r < 0 || r >= ck.old_size))) {
        if (!s->dflt)
            return -EINVAL;
        memcpy(out, s->dflt, (size_t)bytes);
        return 0;
    }
    int rc = old_part(r, vi, &cnt, path, sizeof(path), &off, &file);
    return rc == 0 && cnt == s->total ? read_old(file, path, out, bytes, off) : -EINVAL;
}

static int restore_var(const ck_saved_t *s, int vi, void *data)
{
    if (s->dist == DT_DIST_BLOCK)
        return restore_block(s, vi, data);
    if (s->dist == DT_DIST_BLOCK_CYCLIC)
        return restore_cyclic(s, vi, data);
    if (s->dist == CK_DIST_MANUAL)
        return restore_manual(s, vi, data);
    return restore_value(s, vi, data);
}

int dt_ckpt_restore(const char *label, void *data, long count)
{
    int vi;
    const ck_saved_t *s = ck.man && label ? saved_var(label, &vi) : NULL;
    if (!s)
        return ck_fail(-ENOENT, "dt_ckpt_restore: no variable '%s' in the restarted checkpoint",
                    label ? label : "");
    long want = new_count(s);
    int rc = 0, bad = 0;
    if (count != want || (want > 0 && !data)) {
        char n[96];
        snprintf(n, sizeof(n), "this process's share is %ld elements, the buffer holds %ld", want,
                 count);
        bad = ck_fail(-EINVAL, "dt_ckpt_restore '%s': %s", label, n);
    }
    const ck_var_t *reg = ck_registered(label);
    dt_ckpt_fn *fn = reg ? reg->fn : NULL;
    if (bad == 0 && s->value == DT_VALUE_RECALC && !fn)
        bad = ck_fail(-EINVAL, "dt_ckpt_restore '%s': its value is recalculated: register it with "
                   "dt_ckpt_add_value and its function before restoring it", label);
    /* a manual variable's restore is collective: all go on, or none (the message of the
     * process that could not is everywhere) */
    if (s->dist == CK_DIST_MANUAL && ck_agree(bad) < 0)
        return -EINVAL;
    if (ckx_shmr() && ckag_has_regions()) {
        /* SHMR: the reads recorded, brought through the node's region (every process
         * of the node takes part, a mistaken one too), then taken */
        char err[512];
        ckx_record_begin();
        rc = bad < 0 ? 0 : restore_var(s, vi, data);
        ckx_fetch(ck.node, ck.node_rank, err, sizeof(err)); /* failed: the files */
        if (bad == 0 && rc == 0)
            rc = restore_var(s, vi, data);
        ckx_restore_end();
    } else if (bad == 0) {
        rc = restore_var(s, vi, data);
    }
    if (bad < 0)
        return bad;
    if (s->dist == CK_DIST_MANUAL)
        rc = ck_agree(rc);
    if (rc < 0)
        return ck_fail(rc, "dt_ckpt_restore '%s': the checkpoint's files cannot be read (%s)", label,
                    strerror(-rc));
    if (fn && (s->value == DT_VALUE_RECALC || s->dist == CK_DIST_MANUAL) &&
        (rc = fn(data, count, reg->arg)) < 0)
        return ck_fail(rc, "dt_ckpt_restore '%s': its function returned %d", label, rc);
    return 0;
}

