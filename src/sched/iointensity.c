/* I/O intensity of jobs, the running set and the workload (seed 003 §4.2.2): what the
 * io-aware policy balances, and what the simulator reports. A job's intensity is the
 * share of its run time spent in I/O; the caller gives it, one value or one per size. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched_internal.h"

int sched_set_io_intensity(sched_t *s, int64_t id, int lo, const double *v, int n)
{
    sjob_t *j = idmap_get(s->jobs, id);
    if (!j)
        return -ENOENT;
    if (n < 1 || lo < 1 || !v)
        return -EINVAL;
    for (int k = 0; k < n; k++)
        if (!(v[k] >= 0 && v[k] <= 1))
            return -EINVAL;
    double *t = malloc((size_t)n * sizeof(*t));
    if (!t)
        return -ENOMEM;
    memcpy(t, v, (size_t)n * sizeof(*t));
    free(j->io);
    j->io = t;
    j->io_lo = lo;
    j->io_n = n;
    return 0;
}

double core_io_of(const sjob_t *j, int n)
{
    if (!j->io)
        return j->spec.io_intensity;
    int k = n - j->io_lo;
    return j->io[k < 0 ? 0 : k >= j->io_n ? j->io_n - 1 : k];
}

int core_io_size(const sjob_t *j)
{
    if (j->state == SCHED_PENDING)
        return j->spec.pref_nodes;
    return j->state == SCHED_RESIZING ? j->target : j->ncommit;
}

void core_io_sums(const sched_t *s, io_sums_t *m)
{
    memset(m, 0, sizeof(*m));
    for (const sjob_t *j = s->rhead; j; j = j->rnext) {
        int n = core_io_size(j);
        m->run_w += core_io_of(j, n) * n;
        m->run_n += n;
    }
    m->all_w = m->run_w;
    m->all_n = m->run_n;
    for (const sjob_t *j = s->qhead; j; j = j->qnext) {
        int n = core_io_size(j);
        m->all_w += core_io_of(j, n) * n;
        m->all_n += n;
    }
}

double core_io_workload(const sched_t *s, const io_sums_t *m, bool cluster)
{
    double d = cluster ? s->navail : m->all_n;
    return d > 0 ? m->all_w / d : 0;
}

void sched_io_balance(const sched_t *s, bool cluster, double *workload, double *system)
{
    io_sums_t m;
    core_io_sums(s, &m);
    *workload = core_io_workload(s, &m, cluster);
    *system = m.run_n > 0 ? m.run_w / m.run_n : 0;
}
