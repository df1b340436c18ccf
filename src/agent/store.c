/* The checkpoint agent's memory and its flush to the file level (store.h). */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckptfiles.h"
#include "fsutil.h"

app_t *store_app(store_t *s, const char *name, bool create)
{
    for (int i = 0; i < s->napps; i++)
        if (!strcmp(s->apps[i]->name, name))
            return s->apps[i];
    if (!create)
        return NULL;
    app_t **grown = realloc(s->apps, (size_t)(s->napps + 1) * sizeof(*grown));
    app_t *a = calloc(1, sizeof(*a));
    if (!grown || !a) {
        free(a);
        if (grown)
            s->apps = grown;
        return NULL;
    }
    s->apps = grown;
    snprintf(a->name, sizeof(a->name), "%s", name);
    s->apps[s->napps++] = a;
    return a;
}

aver_t *store_version(app_t *a, long version)
{
    for (int i = 0; i < a->nv; i++)
        if (a->v[i]->version == version && !a->v[i]->stale)
            return a->v[i];
    return NULL;
}

afile_t *store_file(aver_t *v, long file)
{
    for (int i = 0; i < v->nheld; i++)
        if (v->files[i].file == file)
            return &v->files[i];
    return NULL;
}

/* Large regions are mappings that ask for transparent huge pages: the pages are faulted
 * in as the data first arrives, and with 4 KiB pages that cost this machine as much as
 * the transfer (256 MiB in 0.5 s). */
#define REGION_MAPPED_MIN (4u << 20)

static char *region_alloc(size_t len, bool *mapped)
{
    *mapped = len >= REGION_MAPPED_MIN;
    if (!*mapped)
        return malloc(len ? len : 1);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    madvise(p, len, MADV_HUGEPAGE); /* a hint: without THP, 4 KiB pages */
    return p;
}

static void region_release(char *buf, size_t len, bool mapped)
{
    if (mapped)
        munmap(buf, len);
    else
        free(buf);
}

fab_mr_t *store_grant(store_t *s, afile_t *f, const void *owner, int access, char *err,
                      size_t errlen)
{
    grant_t *g = calloc(1, sizeof(*g));
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (fab_mr_reg(s->fab, f->buf, f->len ? f->len : 1, access, &g->mr, err, errlen) < 0) {
        free(g);
        return NULL;
    }
    g->owner = owner;
    g->next = f->grants;
    f->grants = g;
    return g->mr;
}

/* Closes the grants of f given to owner, or all of them (owner NULL). */
static void revoke_file(afile_t *f, const void *owner)
{
    for (grant_t **p = &f->grants; *p;) {
        grant_t *g = *p;
        if (owner && g->owner != owner) {
            p = &g->next;
            continue;
        }
        *p = g->next;
        fab_mr_close(g->mr);
        free(g);
    }
}

static void revoke_version(aver_t *v, const void *owner)
{
    for (int i = 0; i < v->nheld; i++)
        revoke_file(&v->files[i], owner);
}

void store_revoke(store_t *s, const void *owner)
{
    for (int i = 0; i < s->napps; i++)
        for (int k = 0; k < s->apps[i]->nv; k++)
            revoke_version(s->apps[i]->v[k], owner);
}

static void free_region(store_t *s, afile_t *f)
{
    revoke_file(f, NULL);
    if (f->mr)
        fab_mr_close(f->mr);
    region_release(f->buf, f->len, f->mapped || f->spilled);
    if (!f->spilled)
        s->bytes -= f->len;
}

static void free_version(store_t *s, aver_t *v)
{
    revoke_version(v, NULL); /* a spare's next version is someone else's */
    for (int i = 0; i < v->nheld; i++) {
        if (v->files[i].spilled) /* a file's mapping: no use to another version */
            free_region(s, &v->files[i]);
        else if (s->nspare < STORE_SPARES)
            s->spare[s->nspare++] = v->files[i]; /* still counted in s->bytes */
        else
            free_region(s, &v->files[i]);
    }
    free(v->files);
    json_decref(v->manifest);
    free(v);
}

static void drop(store_t *s, app_t *a, int i)
{
    free_version(s, a->v[i]);
    a->v[i] = a->v[--a->nv];
}

/* The node file on the file level, in the directory its version's flush publishes
 * (v<k>.flush, which a restart leaves alone), made len bytes long and mapped shared:
 * what the processes write there reaches the file system as the kernel writes the
 * pages back, not the agent's memory. It has another name until its flush synced it,
 * so that the agent that publishes the version does not take it for a flushed one. */
#define SPILL_SUFFIX "spill"
static char *spill_alloc(const char *app_dir, long version, long file, size_t len, char *err,
                         size_t errlen)
{
    char part[PATH_MAX + 32], p[PATH_MAX + 64];
    snprintf(part, sizeof(part), "%s/v%ld." CKPTFILES_FLUSH, app_dir, version);
    snprintf(p, sizeof(p), "%s/node%ld.dat." SPILL_SUFFIX, part, file);
    int rc = fsutil_mkdirs(part, 0700), fd = -1;
    if (rc == 0 && (fd = open(p, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
        rc = -errno;
    if (rc == 0 && ftruncate(fd, (off_t)len) < 0)
        rc = -errno;
    void *m = rc == 0 ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (rc == 0 && m == MAP_FAILED)
        rc = -errno;
    if (fd >= 0)
        close(fd);
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", p, strerror(-rc));
        return NULL;
    }
    return m;
}

/* A new region of len bytes for node file `file` of version v: in memory while it fits
 * the limit, else spilled (spill_alloc). */
static afile_t *region_new(store_t *s, app_t *a, aver_t *v, long file, size_t len, char *err,
                           size_t errlen)
{
    bool spill = len > 0 && (len > s->limit || s->bytes > s->limit - len);
    char why[PATH_MAX + 160] = "";
    char *buf = NULL;
    bool mapped = false;
    if (spill && !(buf = spill_alloc(a->name, v->version, file, len, why, sizeof(why)))) {
        snprintf(err, errlen, "this agent holds %zu KiB of checkpoints: %zu KiB more would pass "
                 "its limit of %zu KiB (ductile-agent --memory), and the file level failed: %s",
                 (s->bytes + 1023) >> 10, (len + 1023) >> 10, s->limit >> 10, why);
        return NULL;
    }
    if (!spill && !(buf = region_alloc(len, &mapped))) {
        snprintf(err, errlen, "no memory for %zu bytes", len);
        return NULL;
    }
    fab_mr_t *mr = NULL;
    afile_t *grown = realloc(v->files, (size_t)(v->nheld + 1) * sizeof(*grown));
    if (grown)
        v->files = grown;
    if (!grown || fab_mr_reg(s->fab, buf, len ? len : 1, FAB_LOCAL, &mr, err, errlen) < 0) {
        if (!grown)
            snprintf(err, errlen, "out of memory");
        region_release(buf, len, mapped || spill);
        return NULL;
    }
    afile_t *f = &v->files[v->nheld++];
    /* Allocated, not touched: a provider that pins registered memory (verbs) faults the
     * pages in itself; tcp takes them as the data arrives. Allocation and this (local)
     * registration are what a first commit pays and a steady one does not (the seed's
     * first-commit cost): a steady one takes a spare. Every commit and restart pays the
     * registration that opens the region to its client (store_grant; bench_fabric's
     * reg column says what it costs). */
    *f = (afile_t){.file = file, .len = len, .buf = buf, .mapped = mapped, .spilled = spill,
                   .mr = mr};
    if (spill)
        fprintf(stderr, "ductile-agent: version %ld of %s: node file %ld (%zu KiB) goes to the "
                "files as it comes (%zu KiB held, at most %zu)\n", v->version, a->name, file,
                (len + 1023) >> 10, (s->bytes + 1023) >> 10, s->limit >> 10);
    else
        s->bytes += len;
    return f;
}

afile_t *store_put(store_t *s, app_t *a, long version, long file, size_t len, char *err,
                   size_t errlen)
{
    aver_t *v = store_version(a, version);
    if (v && v->complete)
        v = NULL; /* a complete version N written again: another history, below */
    a->release = false; /* a new run of a released application */
    if (!v) {
        /* a new version: what an earlier, unfinished writer of any version left goes,
         * and so do complete versions from N on: a run that restarted from an older
         * version (the files', while this agent was out of reach) writes another
         * history, and a restart must not come back to the old one */
        pthread_mutex_lock(&s->mu);
        for (int i = a->nv - 1; i >= 0; i--) {
            aver_t *o = a->v[i];
            if ((o->complete && o->version < version) || o->stale)
                continue;
            if (o->flushing || o->readers > 0)
                o->stale = true; /* its flush does not publish; dropped when done */
            else
                drop(s, a, i);
        }
        pthread_mutex_unlock(&s->mu);
        aver_t **grown = realloc(a->v, (size_t)(a->nv + 1) * sizeof(*grown));
        if (grown)
            a->v = grown;
        if (!grown || !(v = calloc(1, sizeof(*v)))) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        v->version = version;
        a->v[a->nv++] = v;
    }
    afile_t *f = store_file(v, file);
    if (f) {
        if (f->len != len) {
            snprintf(err, errlen, "node file %ld of version %ld is %zu bytes, not %zu", file,
                     version, f->len, len);
            return NULL;
        }
        return f;
    }
    for (int i = 0; i < s->nspare; i++)
        if (s->spare[i].len == len) { /* a steady commit: the region is ready */
            afile_t *grown = realloc(v->files, (size_t)(v->nheld + 1) * sizeof(*grown));
            if (!grown) {
                snprintf(err, errlen, "out of memory");
                return NULL;
            }
            v->files = grown;
            f = &v->files[v->nheld++];
            *f = s->spare[i];
            f->file = file;
            s->spare[i] = s->spare[--s->nspare];
            return f;
        }
    while (s->nspare > 0 && (len > s->limit || s->bytes > s->limit - len))
        free_region(s, &s->spare[--s->nspare]); /* room for a region of another size */
    return region_new(s, a, v, file, len, err, errlen);
}

int store_publish(store_t *s, app_t *a, long version, long nfiles, const long *files, int n,
                  json_t *manifest, char *err, size_t errlen)
{
    aver_t *v = store_version(a, version);
    if (!v) {
        snprintf(err, errlen, "version %ld of %s was never written here", version, a->name);
        return -ENOENT;
    }
    if (v->complete) {
        snprintf(err, errlen, "version %ld of %s is already complete", version, a->name);
        return -EEXIST;
    }
    for (int i = 0; i < n; i++)
        if (!store_file(v, files[i])) {
            snprintf(err, errlen, "node file %ld of version %ld was never written here",
                     files[i], version);
            return -ENOENT;
        }
    if (n != v->nheld) {
        snprintf(err, errlen, "version %ld: %d node files written here, %d published", version,
                 v->nheld, n);
        return -EINVAL;
    }
    revoke_version(v, NULL);
    v->complete = true;
    v->nfiles = nfiles;
    json_decref(v->manifest);
    v->manifest = json_incref(manifest);
    store_prune(s, a);
    return 0;
}

aver_t *store_latest(app_t *a)
{
    aver_t *best = NULL;
    for (int i = 0; a && i < a->nv; i++)
        if (a->v[i]->complete && !a->v[i]->stale && (!best || a->v[i]->version > best->version))
            best = a->v[i];
    return best;
}

void store_prune(store_t *s, app_t *a)
{
    aver_t *last = store_latest(a);
    long too_old = last ? last->version - CKPTFILES_KEEP : 0; /* and below: not kept */
    pthread_mutex_lock(&s->mu);
    for (int i = a->nv - 1; i >= 0; i--) {
        aver_t *v = a->v[i];
        if (v->flushing || v->readers > 0)
            continue;
        if (v->stale || (v->complete && v->version <= too_old) ||
            (a->release && (!v->complete || v->flushed == 1)))
            drop(s, a, i);
    }
    pthread_mutex_unlock(&s->mu);
}

/* --- the flush (a thread per version; it reads only complete, immutable regions) --- */

typedef struct flush_job {
    store_t *s;
    char app_dir[PATH_MAX];
    aver_t *v;
    void (*done)(void *);
    void *arg;
} flush_job_t;

static int write_file(const char *path, const char *buf, size_t len)
{
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int rc = 0;
    for (size_t at = 0; at < len && rc == 0;) {
        ssize_t w = write(fd, buf + at, len - at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            rc = w < 0 ? -errno : -EIO;
        else
            at += (size_t)w;
    }
    if (rc == 0 && fsync(fd) < 0)
        rc = -errno;
    close(fd);
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    if (rc < 0)
        unlink(tmp);
    return rc;
}

/* A spilled node file is in place already: synced, it takes its name (a flush tried
 * again finds it named). */
static int spill_done(const char *path, const afile_t *f)
{
    char sp[PATH_MAX + 80];
    snprintf(sp, sizeof(sp), "%s." SPILL_SUFFIX, path);
    if (msync(f->buf, f->len, MS_SYNC) < 0)
        return -errno;
    if (rename(sp, path) == 0)
        return 0;
    int rc = -errno;
    return rc == -ENOENT && access(path, F_OK) == 0 ? 0 : rc;
}

/* The agent that holds node file 0 publishes the version once every node file (some
 * flushed by other agents) is in place; it waits at most this long for them. */
#define FLUSH_WAIT_S 120

static pthread_mutex_t publish_mu = PTHREAD_MUTEX_INITIALIZER;

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* A flush of a version that will not be published: what it wrote goes. */
static int cancel_flush(const char *part)
{
    ckptfiles_rmtree(part);
    return -ECANCELED;
}

static int flush(flush_job_t *j)
{
    aver_t *v = j->v;
    char part[PATH_MAX + 32], p[PATH_MAX + 64];
    snprintf(part, sizeof(part), "%s/v%ld." CKPTFILES_FLUSH, j->app_dir, v->version);
    /* Tests only (test_ckpt_agent): a slow file system, so that a restart and another
     * flush happen while this one is under way. */
    const char *slow = getenv("DUCTILE_TEST_FLUSH_DELAY_MS");
    int rc = fsutil_mkdirs(part, 0700);
    if (slow && rc == 0)
        nanosleep(&(struct timespec){atol(slow) / 1000, atol(slow) % 1000 * 1000000}, NULL);
    for (int i = 0; i < v->nheld && rc == 0; i++) {
        snprintf(p, sizeof(p), "%s/node%ld.dat", part, v->files[i].file);
        if (!v->files[i].spilled)
            rc = write_file(p, v->files[i].buf, v->files[i].len);
        else
            rc = spill_done(p, &v->files[i]);
    }
    if (rc < 0 || !store_file(v, 0))
        return rc;
    long t0 = now_ms(), last = t0; /* last: when a node file last came */
    for (long f = 0; f < v->nfiles && rc == 0;) {
        struct stat st;
        snprintf(p, sizeof(p), "%s/node%ld.dat", part, f);
        if (stat(p, &st) == 0) {
            f++;
            last = now_ms();
            continue;
        }
        /* A version of an old history never publishes (the requeued run writes it
         * again), and a stopping agent does not wait for files that stopped coming
         * (the job died between two agents' publishes) */
        pthread_mutex_lock(&j->s->mu);
        bool stale = v->stale, stopping = j->s->stopping;
        long stop_wait = j->s->stop_wait_ms > 0 ? j->s->stop_wait_ms : STORE_STOP_WAIT_MS;
        pthread_mutex_unlock(&j->s->mu);
        if (stale)
            return cancel_flush(part);
        long now = now_ms();
        if (now - t0 > FLUSH_WAIT_S * 1000L || (stopping && now - last > stop_wait))
            return -ETIMEDOUT;
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    snprintf(p, sizeof(p), "%s/manifest.json", part);
    char *text = json_dumps(v->manifest, JSON_COMPACT);
    rc = text ? write_file(p, text, strlen(text)) : -ENOMEM;
    free(text);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&j->s->mu);
    bool stale = v->stale;
    pthread_mutex_unlock(&j->s->mu);
    if (stale) /* the application went back to an older version meanwhile */
        return cancel_flush(part);
    pthread_mutex_lock(&publish_mu); /* flushes of two versions end at once */
    rc = ckptfiles_publish(j->app_dir, CKPTFILES_FLUSH, v->version);
    pthread_mutex_unlock(&publish_mu);
    return rc;
}

static void *flush_main(void *arg)
{
    flush_job_t *j = arg;
    int rc = flush(j);
    pthread_mutex_lock(&j->s->mu);
    j->v->flushed = rc < 0 ? rc : 1;
    j->v->flushing = 0;
    pthread_mutex_unlock(&j->s->mu);
    if (j->done)
        j->done(j->arg);
    free(j);
    return NULL;
}

int store_flush(store_t *s, app_t *a, aver_t *v, void (*done)(void *), void *arg)
{
    flush_job_t *j = calloc(1, sizeof(*j));
    if (!j)
        return -ENOMEM;
    j->s = s;
    snprintf(j->app_dir, sizeof(j->app_dir), "%s", a->name);
    j->v = v;
    j->done = done;
    j->arg = arg;
    v->flushing = 1;
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &at, flush_main, j);
    pthread_attr_destroy(&at);
    if (rc != 0) {
        v->flushing = 0;
        free(j);
        return -rc;
    }
    return 0;
}

void store_free(store_t *s)
{
    for (int i = 0; i < s->napps; i++) {
        app_t *a = s->apps[i];
        while (a->nv > 0)
            drop(s, a, a->nv - 1);
        free(a->v);
        free(a);
    }
    while (s->nspare > 0) /* after the versions: dropping them fills the spares */
        free_region(s, &s->spare[--s->nspare]);
    free(s->apps);
    s->apps = NULL;
    s->napps = 0;
}

void store_report(const store_t *s, int fd, unsigned long seq)
{
    char line[STORE_REPORT_LEN + 1];
    int n = snprintf(line, sizeof(line), "ductile-agent-report %lu held=%zu limit=%zu moved=%llu "
                     "commits=%llu %lu", seq, s->bytes, s->limit, s->moved, s->commits, seq);
    if (n < 0 || n >= STORE_REPORT_LEN)
        return;
    memset(line + n, ' ', (size_t)(STORE_REPORT_LEN - 1 - n));
    line[STORE_REPORT_LEN - 1] = '\n';
    (void)!pwrite(fd, line, STORE_REPORT_LEN, 0);
}
