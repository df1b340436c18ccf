/* JSON job lists: the way to describe malleable, moldable and evolving jobs that no
 * SWF trace can express. docs/simulator.md shows the format. Keys are checked
 * strictly: a misspelt key silently falling back to a default would change an
 * experiment without anyone noticing. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "workload.h"

typedef struct jctx {
    const char *path;
    size_t index;     /* 1-based position of the job in the list */
    bool has_id;
    int64_t id;
    char *err;
    size_t errlen;
} jctx_t;

static int jfail(const jctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Every message names the file and the job, by position and by id when the id is
 * known, because either can be what the user searches the file for. */
static int jfail(const jctx_t *c, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    if (c->has_id)
        snprintf(c->err, c->errlen, "%s: job %zu (id %lld): %s", c->path, c->index,
                 (long long)c->id, what);
    else
        snprintf(c->err, c->errlen, "%s: job %zu: %s", c->path, c->index, what);
    return -EINVAL;
}

/* An integer in [lo, hi]; a real with no fractional part counts, since some tools
 * write every number as 4.0. */
static bool get_int(const json_t *v, int64_t lo, int64_t hi, int64_t *out)
{
    int64_t x;
    if (json_is_integer(v)) {
        x = (int64_t)json_integer_value(v);
    } else if (json_is_real(v)) {
        double d = json_real_value(v);
        if (!isfinite(d) || d != floor(d) || d < -9e18 || d > 9e18)
            return false;
        x = (int64_t)d;
    } else {
        return false;
    }
    if (x < lo || x > hi)
        return false;
    *out = x;
    return true;
}

static bool get_num(const json_t *v, double lo, double *out)
{
    if (!json_is_number(v))
        return false;
    double d = json_number_value(v);
    if (!isfinite(d) || d < lo)
        return false;
    *out = d;
    return true;
}

static int cmp_mtct(const void *pa, const void *pb)
{
    const mtct_point_t *a = pa, *b = pb;
    return (a->nodes > b->nodes) - (a->nodes < b->nodes);
}

/* {"1": 0.0, "4": 0.3} -> points sorted by node count. The caller frees *out. */
static int parse_mtct(const jctx_t *c, const json_t *v, mtct_point_t **out, int *nout)
{
    if (!json_is_object(v))
        return jfail(c, "'mtct' must be an object mapping node counts to ratios");
    size_t n = json_object_size(v);
    mtct_point_t *pts = calloc(n ? n : 1, sizeof(*pts));
    if (!pts)
        return jfail(c, "out of memory");
    size_t i = 0;
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val)
    {
        char *end;
        errno = 0;
        long nodes = strtol(key, &end, 10);
        if (end == key || *end || errno || nodes < 1 || nodes > INT32_MAX) {
            free(pts);
            return jfail(c, "'mtct' key '%s' must be a node count >= 1", key);
        }
        double r;
        if (!get_num(val, 0, &r)) {
            free(pts);
            return jfail(c, "'mtct' value for %ld nodes must be a number >= 0", nodes);
        }
        pts[i++] = (mtct_point_t){(int)nodes, r};
    }
    qsort(pts, n, sizeof(*pts), cmp_mtct);
    for (i = 1; i < n; i++)
        if (pts[i].nodes == pts[i - 1].nodes) {
            int dup = pts[i].nodes;
            free(pts);
            return jfail(c, "'mtct' gives %d nodes twice", dup);
        }
    *out = pts;
    *nout = (int)n;
    return 0;
}

/* [{"at": 0.3, "nodes": 4}, ...] -> requests in ascending `at`. The caller frees *out. */
static int parse_requests(const jctx_t *c, const json_t *v, evo_request_t **out, int *nout)
{
    if (!json_is_array(v) || json_array_size(v) > 100000)
        return jfail(c, "'requests' must be a list of {\"at\": FRACTION, \"nodes\": N} "
                        "(at most 100000)");
    size_t n = json_array_size(v);
    evo_request_t *r = calloc(n ? n : 1, sizeof(*r));
    if (!r)
        return jfail(c, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(v, i), *val;
        const char *key, *bad = NULL;
        char why[160] = "";
        int64_t nodes = 0;
        if (!json_is_object(e))
            bad = "is not an object {\"at\": FRACTION, \"nodes\": N}";
        json_object_foreach((json_t *)e, key, val)
        {
            if (!bad && strcmp(key, "at") && strcmp(key, "nodes")) {
                snprintf(why, sizeof(why), "has an unknown key '%s' (expected at, nodes)", key);
                bad = why;
            }
        }
        if (!bad && (!get_num(json_object_get(e, "at"), 0, &r[i].at) ||
                     !(r[i].at > 0 && r[i].at < 1)))
            bad = "needs 'at', the share of the job's work done, between 0 and 1 (both excluded)";
        else if (!bad && i && !(r[i].at > r[i - 1].at)) {
            snprintf(why, sizeof(why), "comes at %g, not after the request before it (%g)",
                     r[i].at, r[i - 1].at);
            bad = why;
        } else if (!bad && !get_int(json_object_get(e, "nodes"), 1, INT32_MAX, &nodes))
            bad = "needs 'nodes', a whole number of nodes >= 1";
        if (bad) {
            free(r);
            return jfail(c, "'requests': request %zu %s", i + 1, bad);
        }
        r[i].nodes = (int)nodes;
    }
    *out = r;
    *nout = (int)n;
    return 0;
}

static int parse_power(const jctx_t *c, const json_t *v, wl_job_t *j)
{
    if (!json_is_array(v) || json_array_size(v) != 2 ||
        !get_num(json_array_get(v, 0), 0, &j->power_min) ||
        !get_num(json_array_get(v, 1), 0, &j->power_max))
        return jfail(c, "'power' must be [min, max] with numbers >= 0 (W per node)");
    if (j->power_min > j->power_max)
        return jfail(c, "'power' minimum %g exceeds maximum %g", j->power_min, j->power_max);
    return 0;
}

/* One key of a job object. */
static int parse_key(const jctx_t *c, const char *key, const json_t *v, wl_job_t *j,
                     bool *has_runtime, bool *has_walltime)
{
    int64_t x;
    if (!strcmp(key, "id")) {
        return 0; /* read first, by the caller */
    } else if (!strcmp(key, "submit")) {
        if (!get_num(v, 0, &j->submit))
            return jfail(c, "'submit' must be a number >= 0");
    } else if (!strcmp(key, "runtime")) {
        if (!get_num(v, 0, &j->runtime))
            return jfail(c, "'runtime' must be a number >= 0");
        *has_runtime = true;
    } else if (!strcmp(key, "walltime")) {
        if (!get_num(v, -INFINITY, &j->walltime))
            return jfail(c, "'walltime' must be a number");
        *has_walltime = true;
    } else if (!strcmp(key, "nodes")) {
        if (!get_int(v, 1, INT32_MAX, &x))
            return jfail(c, "'nodes' must be an integer >= 1");
        j->nodes = (int)x;
    } else if (!strcmp(key, "min") || !strcmp(key, "max") || !strcmp(key, "pref")) {
        if (!get_int(v, 0, INT32_MAX, &x))
            return jfail(c, "'%s' must be an integer >= 0 (0: same as nodes)", key);
        if (!strcmp(key, "min"))
            j->min_nodes = (int)x;
        else if (!strcmp(key, "max"))
            j->max_nodes = (int)x;
        else
            j->pref_nodes = (int)x;
    } else if (!strcmp(key, "type")) {
        if (!json_is_string(v) || sched_type_parse(json_string_value(v), &j->type) < 0)
            return jfail(c, "'type' must be one of rigid, moldable, malleable, evolving");
    } else if (!strcmp(key, "constraint")) {
        if (!json_is_string(v) || sched_constraint_parse(json_string_value(v), &j->constraint) < 0)
            return jfail(c, "'constraint' must be one of none, pof2, even, odd, ncube, square");
    } else if (!strcmp(key, "user")) {
        if (!get_int(v, 0, UINT32_MAX, &x))
            return jfail(c, "'user' must be an integer >= 0");
        j->user = (uint32_t)x;
    } else if (!strcmp(key, "account")) {
        if (!get_int(v, 0, (int64_t)UINT32_MAX - 1, &x))
            return jfail(c, "'account' must be an integer >= 0 (a fair-share account; 0: none)");
        j->account = (uint32_t)x;
    } else if (!strcmp(key, "power")) {
        return parse_power(c, v, j);
    } else if (!strcmp(key, "ckpt_mb")) {
        if (!get_num(v, 0, &j->ckpt_mb))
            return jfail(c, "'ckpt_mb' must be a number >= 0 (MB of checkpoint data)");
    } else if (!strcmp(key, "checkpoint_every") || !strcmp(key, "checkpoint_cost")) {
        bool every = !strcmp(key, "checkpoint_every");
        double *dst = every ? &j->ckpt_every : &j->ckpt_cost;
        if (!get_num(v, 0, dst) || (every && *dst < 0.001))
            return jfail(c, "'%s' must be a number of seconds %s (%s)", key,
                         every ? ">= 0.001" : ">= 0",
                         every ? "work between two checkpoints" : "what one checkpoint takes");
    } else if (!strcmp(key, "iterations")) {
        if (!get_int(v, 1, 1000000, &x))
            return jfail(c, "'iterations' must be an integer from 1 to 1000000 (compute and "
                            "I/O phases the job repeats)");
        j->iters = (int)x;
    } else if (!strcmp(key, "io_gb")) {
        if (!get_num(v, 0, &j->io_gb) || !(j->io_gb > 0))
            return jfail(c, "'io_gb' must be a number > 0 (GB the job writes after each "
                            "compute phase)");
    } else if (!strcmp(key, "io_intensity")) {
        if (!get_num(v, 0, &j->io_intensity) || j->io_intensity > 1)
            return jfail(c, "'io_intensity' must be a number from 0 to 1 (the share of its run "
                            "time the job spends in I/O)");
    } else if (!strcmp(key, "speedup")) {
        char why[200];
        if (!json_is_string(v))
            return jfail(c, "'speedup' must be a string such as \"amdahl:0.05\"");
        if (speedup_parse(json_string_value(v), &j->speedup, why, sizeof(why)) < 0)
            return jfail(c, "%s", why);
        j->has_speedup = true;
    } else if (!strcmp(key, "tag")) {
        if (!json_is_string(v) || strlen(json_string_value(v)) >= sizeof(j->tag))
            return jfail(c, "'tag' must be a string of at most %zu characters",
                         sizeof(j->tag) - 1);
        strcpy(j->tag, json_string_value(v));
    } else if (!strcmp(key, "mtct") || !strcmp(key, "requests")) {
        return 0; /* parsed by the caller, which owns the array */
    } else {
        return jfail(c, "unknown key '%s'", key);
    }
    return 0;
}

static int parse_job(jctx_t *c, const json_t *obj, idmap_t *ids, workload_t *wl)
{
    c->has_id = false;
    if (!json_is_object(obj))
        return jfail(c, "expected an object");
    wl_job_t j = {.id = (int64_t)c->index, .type = SCHED_RIGID, .io_intensity = -1};
    const json_t *idv = json_object_get(obj, "id");
    /* -1 is how the engine says "no job", so ids start at 0. */
    if (idv && !get_int(idv, 0, INT64_MAX, &j.id))
        return jfail(c, "'id' must be an integer >= 0");
    c->id = j.id;
    c->has_id = true;

    bool has_runtime = false, has_walltime = false;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        int rc = parse_key(c, key, v, &j, &has_runtime, &has_walltime);
        if (rc < 0)
            return rc;
    }
    if (!has_runtime)
        return jfail(c, "'runtime' is required");
    if (!j.nodes)
        return jfail(c, "'nodes' is required");
    if (!has_walltime || j.walltime < j.runtime)
        j.walltime = j.runtime;

    uintptr_t first = (uintptr_t)idmap_get(ids, j.id);
    if (first)
        return jfail(c, "duplicate id (job %zu has it too)", (size_t)first);
    if (idmap_put(ids, j.id, (void *)(uintptr_t)c->index) < 0)
        return jfail(c, "out of memory");

    const json_t *mv = json_object_get(obj, "mtct");
    if (mv) {
        int rc = parse_mtct(c, mv, &j.mtct, &j.nmtct);
        if (rc < 0)
            return rc;
    }
    if ((j.iters > 0) != (j.io_gb > 0)) {
        free(j.mtct);
        return jfail(c, "'iterations' and 'io_gb' go together: the job repeats 'iterations' "
                        "times a compute phase and a write of 'io_gb' GB");
    }
    if (j.ckpt_cost > 0 && !(j.ckpt_every > 0)) {
        free(j.mtct);
        return jfail(c, "'checkpoint_cost' needs 'checkpoint_every' (how often the job "
                        "checkpoints)");
    }
    const json_t *rv = json_object_get(obj, "requests");
    if (rv) {
        int rc = parse_requests(c, rv, &j.req, &j.nreq);
        if (rc < 0) {
            free(j.mtct);
            return rc;
        }
        if (j.type != SCHED_EVOLVING) {
            free(j.mtct);
            free(j.req);
            return jfail(c, "'requests' are an evolving job's: add \"type\": \"evolving\"");
        }
    }
    int rc = wl_append(wl, &j);
    free(j.mtct);
    free(j.req);
    if (rc < 0)
        return jfail(c, "out of memory");
    return 0;
}

/* {"nodes": N, "speedup": "...", "jobs": [...]}: returns the job array. */
static int parse_top(const char *path, const json_t *root, workload_t *wl, const json_t **jobs,
                     char *err, size_t errlen)
{
    const char *key;
    json_t *v;
    *jobs = NULL;
    json_object_foreach((json_t *)root, key, v)
    {
        int64_t x;
        if (!strcmp(key, "nodes")) {
            if (!get_int(v, 1, INT32_MAX, &x)) {
                snprintf(err, errlen, "%s: 'nodes' must be an integer >= 1", path);
                return -EINVAL;
            }
            wl->machine_nodes = (int)x;
        } else if (!strcmp(key, "speedup")) {
            char why[200];
            if (!json_is_string(v)) {
                snprintf(err, errlen, "%s: 'speedup' must be a string such as \"amdahl:0.05\"",
                         path);
                return -EINVAL;
            }
            if (speedup_parse(json_string_value(v), &wl->speedup, why, sizeof(why)) < 0) {
                snprintf(err, errlen, "%s: %s", path, why);
                return -EINVAL;
            }
            wl->has_speedup = true;
        } else if (!strcmp(key, "jobs")) {
            *jobs = v;
        } else {
            snprintf(err, errlen, "%s: unknown key '%s' (expected nodes, speedup, jobs)", path,
                     key);
            return -EINVAL;
        }
    }
    if (!*jobs || !json_is_array(*jobs)) {
        snprintf(err, errlen, "%s: 'jobs' must be an array of job objects", path);
        return -EINVAL;
    }
    return 0;
}

static int load(const char *path, const json_t *root, workload_t *wl, char *err, size_t errlen)
{
    const json_t *jobs = root;
    if (json_is_object(root)) {
        int rc = parse_top(path, root, wl, &jobs, err, errlen);
        if (rc < 0)
            return rc;
    } else if (!json_is_array(root)) {
        snprintf(err, errlen, "%s: expected an object with \"jobs\" or an array of jobs", path);
        return -EINVAL;
    }
    idmap_t *ids = idmap_create();
    if (!ids) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    jctx_t c = {.path = path, .err = err, .errlen = errlen};
    int rc = 0;
    for (size_t i = 0; i < json_array_size(jobs) && rc == 0; i++) {
        c.index = i + 1;
        rc = parse_job(&c, json_array_get(jobs, i), ids, wl);
    }
    idmap_destroy(ids);
    return rc;
}

int wl_load_json(const char *path, workload_t *wl, char *err, size_t errlen)
{
    memset(wl, 0, sizeof(*wl));
    FILE *fp = fopen(path, "r");
    if (!fp) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    json_error_t jerr;
    /* Duplicate keys are rejected for the same reason as unknown ones. */
    json_t *root = json_loadf(fp, JSON_REJECT_DUPLICATES, &jerr);
    fclose(fp);
    if (!root) {
        if (jerr.line > 0)
            snprintf(err, errlen, "%s:%d: %s", path, jerr.line, jerr.text);
        else
            snprintf(err, errlen, "%s: %s", path, jerr.text);
        return -EINVAL;
    }
    int rc = load(path, root, wl, err, errlen);
    json_decref(root);
    if (rc < 0) {
        wl_free(wl);
        return rc;
    }
    wl_sort(wl);
    return 0;
}
