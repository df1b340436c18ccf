/* metering: the node's power for each heartbeat (nodepower.h), from RAPL or from the
 * model over the jobs that run here and their cgroups' CPU use. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "noded.h"
#include "nodepower.h"

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct sample {
    noded_t *d;
    double now, watts;
    int jobs;
} sample_t;

/* A counter summed over the job's cgroups (sum: nodepower_cgroup_usage or _io_stall);
 * < 0 without cgroups or without the counter. */
static int job_counter(const noded_t *d, const njob_t *j,
                       int (*sum)(const char *parent, const char *prefix, uint64_t *v),
                       uint64_t *usec)
{
    char parent[600], prefix[40];
    if (!d->cgroup_parent[0])
        return -ENOENT;
    snprintf(parent, sizeof(parent), "%s/%s", d->cgroup_root, d->cgroup_parent);
    snprintf(prefix, sizeof(prefix), "job_%" PRId64, j->id);
    return sum(parent, prefix, usec);
}

/* A job's share of the node's cores since the last heartbeat, from its cgroups; -1
 * when not known (no cgroup, first reading). */
static double cpu_share(noded_t *d, njob_t *j, double now)
{
    uint64_t usec;
    if (job_counter(d, j, nodepower_cgroup_usage, &usec) < 0)
        return -1;
    double share = -1;
    if (j->cpu_at > 0 && now > j->cpu_at && usec >= j->cpu_usec)
        share = (double)(usec - j->cpu_usec) / 1e6 / (now - j->cpu_at) / d->cfg.cores_per_node;
    j->cpu_usec = usec;
    j->cpu_at = now;
    return share > 1 ? 1 : share;
}

static void add_job(int64_t id, void *val, void *arg)
{
    (void)id;
    njob_t *j = val;
    sample_t *s = arg;
    if (j->cleaning || j->cleaned || (j->batch && j->ended))
        return;
    double share = cpu_share(s->d, j, s->now);
    /* one job per node: the node draws what the model gives for it, not idle as well */
    double w = nodepower_model(s->d->cfg.idle_power, true, j->power_min, j->power_max, share);
    s->watts += s->jobs++ ? w - s->d->cfg.idle_power : w;
}

int metering_sample(noded_t *d, double *watts)
{
    nodepower_t *p = &d->power;
    double now = mono();
    if (p->source == CONFIG_POWER_RAPL)
        return nodepower_rapl(p, now, watts);
    if (p->source != CONFIG_POWER_MODEL)
        return -ENOENT;
    sample_t s = {.d = d, .now = now};
    idmap_foreach(d->jobs, add_job, &s);
    *watts = s.jobs ? s.watts : d->cfg.idle_power;
    return 0;
}

/* A job's I/O share since the last heartbeat from its cgroups' io.pressure, and the
 * seconds it covers; -1 when not known (no cgroup or no pressure file, first reading). */
static double io_share(noded_t *d, njob_t *j, double now, double *secs)
{
    uint64_t usec;
    if (job_counter(d, j, nodepower_cgroup_io_stall, &usec) < 0)
        return -1;
    double share = j->io_at > 0 ? nodepower_io_share(j->io_usec, usec, now - j->io_at) : -1;
    *secs = now - j->io_at;
    j->io_usec = usec;
    j->io_at = now;
    return share;
}

typedef struct iosample {
    noded_t *d;
    double now;
    json_t *arr;
} iosample_t;

static void add_io(int64_t id, void *val, void *arg)
{
    njob_t *j = val;
    iosample_t *s = arg;
    if (j->cleaning || j->cleaned || (j->batch && j->ended))
        return;
    double secs = 0, share = io_share(s->d, j, s->now, &secs);
    if (share >= 0 && secs > 0)
        json_array_append_new(s->arr, json_pack("{s:I,s:f,s:f}", "job", (json_int_t)id,
                                                "share", share, "secs", secs));
}

void metering_ping(noded_t *d, json_t *ping)
{
    /* every job's I/O share, whatever the power source ("io": [{job, share, secs}]) */
    iosample_t io = {.d = d, .now = mono(), .arr = json_array()};
    if (io.arr) {
        idmap_foreach(d->jobs, add_io, &io);
        if (json_array_size(io.arr))
            json_object_set_new(ping, "io", io.arr);
        else
            json_decref(io.arr);
    }
    double w;
    if (metering_sample(d, &w) == 0) {
        json_object_set_new(ping, "power", json_real(w));
        json_object_set_new(ping, "power_source",
                            json_string(config_power_source_name(d->power.source)));
    }
}
