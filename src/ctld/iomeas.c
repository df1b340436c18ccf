/* iomeas: a job's measured I/O intensity (docs/policies.md, "io-aware").
 *
 * Each heartbeat, a node daemon reports for every job running there the share of the
 * interval during which the job's cgroups were stalled on I/O (cgroup v2 io.pressure,
 * "some"; src/noded/metering.c): "io": [{"job": id, "share": 0..1, "secs": s}]. The
 * controller keeps per job the time-weighted mean of these reports over all its nodes
 * and, when the run ends, records it (io_measured). A later submission of the same
 * user, name and size that declares no --io-intensity is planned with the measured
 * intensity of the most recent such run. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ctld.h"

#define IO_SECS_MAX 3600.0 /* a report covers one heartbeat interval: longer is not one */

int iomeas_entry(const json_t *e, int64_t *job, double *share, double *secs)
{
    if (!json_is_object(e))
        return -EINVAL;
    json_t *id = json_object_get(e, "job"), *sh = json_object_get(e, "share"),
           *se = json_object_get(e, "secs");
    if (!json_is_integer(id) || !json_is_number(sh) || !json_is_number(se))
        return -EINVAL;
    double s = json_number_value(sh), t = json_number_value(se);
    if (json_integer_value(id) <= 0 || !(s >= 0 && s <= 1) || !(t > 0 && t <= IO_SECS_MAX))
        return -EINVAL;
    *job = json_integer_value(id);
    *share = s;
    *secs = t;
    return 0;
}

void iomeas_add(job_t *j, double share, double secs)
{
    if (!(share >= 0 && share <= 1) || !(secs > 0 && secs <= IO_SECS_MAX))
        return;
    j->io_sum += share * secs;
    j->io_secs += secs;
}

double iomeas_mean(const job_t *j)
{
    if (!(j->io_secs > 0))
        return 0;
    double m = j->io_sum / j->io_secs;
    return m < 0 ? 0 : m > 1 ? 1 : m;
}

static bool holds(const ctld_t *c, const job_t *j, const node_t *n)
{
    for (int i = 0; i < j->nalloc; i++)
        if (j->alloc[i] >= 0 && j->alloc[i] < c->nnodes && &c->nodes[j->alloc[i]] == n)
            return true;
    return false;
}

void iomeas_on_ping(ctld_t *c, node_t *n, const json_t *msg)
{
    json_t *io = json_object_get(msg, "io");
    if (!json_is_array(io))
        return;
    size_t i;
    json_t *e;
    json_array_foreach(io, i, e) {
        int64_t id;
        double share, secs;
        if (i >= 4096 || iomeas_entry(e, &id, &share, &secs) < 0)
            continue;
        job_t *j = idmap_get(c->jobs, id);
        if (!j || (j->state != JS_RUNNING && j->state != JS_RESIZING &&
                   j->state != JS_COMPLETING) || !holds(c, j, n))
            continue;
        iomeas_add(j, share, secs);
    }
}

void iomeas_settle(job_t *j, bool ended)
{
    if (ended && j->io_secs > 0)
        j->io_measured = iomeas_mean(j);
    j->io_sum = j->io_secs = 0;
}

void iomeas_resolve(ctld_t *c, job_t *j, bool declared, double io)
{
    double m;
    if (declared) {
        j->io_intensity = io;
        snprintf(j->io_from, sizeof(j->io_from), "declared");
    } else if (db_io_history(c, j->user, j->name, j->nodes, &m) == 1 && m > 0 && m <= 1) {
        j->io_intensity = m;
        snprintf(j->io_from, sizeof(j->io_from), "measured");
    } else {
        j->io_intensity = 0;
        j->io_from[0] = '\0';
    }
}
