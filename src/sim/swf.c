/* Standard Workload Format traces (research/anchors-simulators.md §2). One line per
 * job, 18 numeric fields; ';' starts a header or comment line. The replay
 * conventions are in docs/simulator.md. Traces run to hundreds of thousands of
 * lines, so a line is parsed in place with strtod and nothing is allocated per
 * field. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "idmap.h"
#include "workload.h"

#define SWF_FIELDS 18

/* 1-based field numbers the replay reads. */
enum {
    F_JOB = 1,
    F_SUBMIT = 2,
    F_RUNTIME = 4,
    F_ALLOC = 5,
    F_AVG_CPU = 6, /* average CPU time used per processor, seconds; -1: unknown */
    F_REQ_PROCS = 8,
    F_REQ_TIME = 9,
    F_USER = 12,
    F_GROUP = 13,
};

static const char *const field_names[SWF_FIELDS + 1] = {
    "",
    "job number",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average CPU time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user id",
    "group id",
    "executable number",
    "queue number",
    "partition number",
    "preceding job number",
    "think time",
};

typedef struct swf_reader {
    const char *path;
    const wl_swf_opts_t *opts;
    workload_t *wl;
    idmap_t *seen;    /* job number -> line it first appeared on */
    long max_nodes;   /* from the header, 0 if absent */
    long max_procs;
    size_t lineno;
    char *err;
    size_t errlen;
} swf_reader_t;

/* A line-level problem: fatal in strict mode, counted in lenient mode.
 * Returns the value the line parser should return. */
static int malformed(swf_reader_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int malformed(swf_reader_t *r, const char *fmt, ...)
{
    if (r->opts->lenient) {
        r->wl->malformed++;
        return 0;
    }
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(r->err, r->errlen, "%s:%zu: %s", r->path, r->lineno, what);
    return -EINVAL;
}

/* Header comments that size the machine ("; MaxNodes: 128"). Other keys and values
 * that are not positive integers (PWA writes -1 for unknown) say nothing usable,
 * and a comment must never make a trace unreadable, so they are ignored. */
static void read_header(swf_reader_t *r, const char *p)
{
    while (*p == ';' || isspace((unsigned char)*p))
        p++;
    const char *colon = strchr(p, ':');
    if (!colon)
        return;
    size_t klen = (size_t)(colon - p);
    while (klen > 0 && isspace((unsigned char)p[klen - 1]))
        klen--;
    long *dst = NULL;
    if (klen == 8 && !strncasecmp(p, "MaxNodes", 8))
        dst = &r->max_nodes;
    else if (klen == 8 && !strncasecmp(p, "MaxProcs", 8))
        dst = &r->max_procs;
    if (!dst)
        return;
    char *end;
    errno = 0;
    long v = strtol(colon + 1, &end, 10);
    /* Some archives annotate the value ("; MaxNodes: 430 (partition A)"). */
    if (end != colon + 1 && (!*end || isspace((unsigned char)*end)) && errno == 0 && v > 0)
        *dst = v;
}

static bool integral(double v) { return v == floor(v); }

/* A count or id stored in a double must be a whole number that fits. */
static bool int_field(double v, double lo, double hi) { return integral(v) && v >= lo && v <= hi; }

static int parse_job(swf_reader_t *r, char *p)
{
    double f[SWF_FIELDS + 1];
    for (int i = 1; i <= SWF_FIELDS; i++) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            return malformed(r, "expected %d fields, found %d", SWF_FIELDS, i - 1);
        char *end;
        f[i] = strtod(p, &end);
        if (end == p || (*end && !isspace((unsigned char)*end)) || !isfinite(f[i])) {
            const char *stop = p;
            while (*stop && !isspace((unsigned char)*stop))
                stop++;
            return malformed(r, "field %d (%s) is not a number: '%.*s'", i, field_names[i],
                             (int)(stop - p > 40 ? 40 : stop - p), p);
        }
        p = end;
    }

    if (!int_field(f[F_JOB], 0, 9e18))
        return malformed(r, "field 1 (job number) must be a non-negative integer, not %g",
                         f[F_JOB]);
    static const int counts[] = {F_ALLOC, F_REQ_PROCS};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
        if (!int_field(f[counts[i]], -1e18, INT32_MAX))
            return malformed(r, "field %d (%s) must be an integer, not %g", counts[i],
                             field_names[counts[i]], f[counts[i]]);
    if (!int_field(f[F_USER], -1, UINT32_MAX))
        return malformed(r, "field %d (user id) must be -1 or an integer >= 0, not %g", F_USER,
                         f[F_USER]);
    /* account g + 1 for group g: account 0 is the root, where jobs of no group go */
    if (!int_field(f[F_GROUP], -1, (double)UINT32_MAX - 2))
        return malformed(r, "field %d (group id) must be -1 or an integer >= 0, not %g",
                         F_GROUP, f[F_GROUP]);

    int64_t id = (int64_t)f[F_JOB];
    uintptr_t first = (uintptr_t)idmap_get(r->seen, id);
    if (first)
        return malformed(r, "duplicate job number %lld (first on line %zu)", (long long)id,
                         (size_t)first);
    if (idmap_put(r->seen, id, (void *)(uintptr_t)r->lineno) < 0) {
        snprintf(r->err, r->errlen, "%s: out of memory", r->path);
        return -ENOMEM;
    }

    double runtime = f[F_RUNTIME];
    int64_t size = (int64_t)(f[F_REQ_PROCS] > 0 ? f[F_REQ_PROCS] : f[F_ALLOC]);
    if (runtime < 0 || size < 1) {
        r->wl->skipped++;
        return 0;
    }
    int cpn = r->opts->cores_per_node;
    wl_job_t j = {
        .id = id,
        .submit = f[F_SUBMIT],
        .runtime = runtime,
        .walltime = f[F_REQ_TIME] > 0 ? f[F_REQ_TIME] : runtime,
        .user = f[F_USER] < 0 ? 0 : (uint32_t)f[F_USER],
        .account = f[F_GROUP] < 0 ? 0 : (uint32_t)f[F_GROUP] + 1,
        .type = SCHED_RIGID,
        .nodes = (int)((size + cpn - 1) / cpn),
        .constraint = SCHED_CONS_NONE,
        .io_intensity = -1,
    };
    /* SWF has no I/O field. The documented rule (docs/simulator.md, "SWF traces"): the
     * share of the run a processor was not computing, 1 - average CPU time / run time,
     * counts as I/O, when the trace records the CPU time. */
    if (f[F_AVG_CPU] >= 0 && runtime > 0) {
        double idle = 1 - f[F_AVG_CPU] / runtime;
        j.io_intensity = idle < 0 ? 0 : idle > 1 ? 1 : idle;
    }
    /* Users' estimates below the run time happen in real logs (jobs killed a little
     * late); the replay must still let the job finish. */
    if (j.walltime < runtime)
        j.walltime = runtime;
    if (wl_append(r->wl, &j) < 0) {
        snprintf(r->err, r->errlen, "%s: out of memory", r->path);
        return -ENOMEM;
    }
    return 0;
}

static int read_lines(swf_reader_t *r, FILE *fp)
{
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (getline(&line, &cap, fp) >= 0) {
        r->lineno++;
        char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            continue;
        if (*p == ';')
            read_header(r, p);
        else
            rc = parse_job(r, p);
        if (rc < 0)
            break;
    }
    if (rc == 0 && ferror(fp)) {
        snprintf(r->err, r->errlen, "%s: read error", r->path);
        rc = -EIO;
    }
    free(line);
    return rc;
}

/* The machine size: --nodes, else the header's node count, else its processor
 * count over the cores per node. */
static long machine_size(const swf_reader_t *r)
{
    int cpn = r->opts->cores_per_node;
    if (r->opts->nodes > 0)
        return r->opts->nodes;
    if (r->max_nodes > 0)
        return r->max_nodes;
    if (r->max_procs > 0)
        return (r->max_procs + cpn - 1) / cpn;
    return 0;
}

/* Drops the jobs the machine cannot hold. Done once at the end because a header
 * line may come after the jobs. */
static void drop_oversized(workload_t *wl)
{
    if (wl->machine_nodes <= 0)
        return;
    size_t out = 0;
    for (size_t i = 0; i < wl->njobs; i++) {
        if (wl->jobs[i].nodes > wl->machine_nodes) {
            free(wl->jobs[i].mtct);
            free(wl->jobs[i].req);
            wl->skipped++;
            continue;
        }
        wl->jobs[out++] = wl->jobs[i];
    }
    wl->njobs = out;
}

int wl_load_swf(const char *path, const wl_swf_opts_t *opts, workload_t *wl, char *err,
                size_t errlen)
{
    memset(wl, 0, sizeof(*wl));
    if (opts->cores_per_node < 1) {
        snprintf(err, errlen, "cores per node must be at least 1 (got %d)", opts->cores_per_node);
        return -EINVAL;
    }
    if (opts->nodes < 0) {
        snprintf(err, errlen, "machine size must not be negative (got %d)", opts->nodes);
        return -EINVAL;
    }
    FILE *fp = fopen(path, "r");
    if (!fp) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    swf_reader_t r = {
        .path = path, .opts = opts, .wl = wl, .seen = idmap_create(), .err = err, .errlen = errlen};
    int rc;
    if (!r.seen) {
        snprintf(err, errlen, "%s: out of memory", path);
        rc = -ENOMEM;
    } else {
        rc = read_lines(&r, fp);
    }
    fclose(fp);
    idmap_destroy(r.seen);
    if (rc == 0) {
        long m = machine_size(&r);
        if (m > INT32_MAX) {
            snprintf(err, errlen, "%s: machine size %ld is too large", path, m);
            rc = -EINVAL;
        } else {
            wl->machine_nodes = (int)m;
        }
    }
    if (rc < 0) {
        wl_free(wl);
        return rc;
    }
    drop_oversized(wl);
    wl_sort(wl);
    return 0;
}
