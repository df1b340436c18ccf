#include "metrics.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BSLD_TAU 10.0

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double rank(const double *v, size_t n, double p)
{
    size_t k = (size_t)ceil(p * (double)n);
    if (k < 1)
        k = 1;
    return v[k - 1];
}

static stat4_t summarize(double *v, size_t n)
{
    stat4_t s = {0};
    if (n == 0)
        return s;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    qsort(v, n, sizeof(double), cmp_double);
    s.mean = sum / (double)n;
    s.p50 = rank(v, n, 0.50);
    s.p95 = rank(v, n, 0.95);
    s.max = v[n - 1];
    return s;
}

int sim_metrics_compute(const sim_result_t *res, int nodes, sim_metrics_t *m)
{
    memset(m, 0, sizeof(*m));
    size_t n = 0;
    for (size_t i = 0; i < res->njobs; i++)
        n += res->jobs[i].end >= 0;
    m->jobs = n;
    m->expansions = res->expansions;
    m->shrinks = res->shrinks;
    m->reconf_node_seconds = res->reconf_node_seconds;
    m->energy_kwh = res->energy_j / 3.6e6;
    m->power_peak = res->power_peak;
    m->violations = res->violations;
    m->outside_seconds = res->outside_seconds;
    m->outside_ws = res->outside_ws;
    m->ckpt = res->ckpt;
    m->failures = res->failures;
    m->failed_jobs = res->failed_jobs;
    m->failure_shrinks = res->failure_shrinks;
    m->interrupts = res->interrupts;
    m->lost_node_seconds = res->lost_node_seconds;
    m->req_made = res->req_made;
    m->req_at_once = res->req_at_once;
    m->req_later = res->req_later;
    m->req_never = res->req_never;
    m->req_wait_mean = res->req_later ? res->req_wait / (double)res->req_later : 0;
    for (size_t i = 0; i < res->njobs; i++)
        m->restarts += res->jobs[i].restarts;
    m->io_phases = res->io_phases;
    if (res->io_phases) {
        m->io_mean = res->io_seconds / (double)res->io_phases;
        m->io_slowdown = res->io_alone_seconds > 0 ? res->io_seconds / res->io_alone_seconds : 0;
    }
    m->io_gap = res->io_gap;
    if (n == 0)
        return 0;
    double *v[4];
    for (int k = 0; k < 4; k++)
        if (!(v[k] = malloc(n * sizeof(double)))) {
            for (int q = 0; q < k; q++)
                free(v[q]);
            return -ENOMEM;
        }
    m->first_submit = INFINITY;
    m->last_end = -INFINITY;
    size_t k = 0;
    double wsum = 0, wresp = 0;
    for (size_t i = 0; i < res->njobs; i++) {
        const sim_jobres_t *j = &res->jobs[i];
        if (j->submit < m->first_submit)
            m->first_submit = j->submit;
        if (j->end < 0)
            continue;
        if (j->end > m->last_end)
            m->last_end = j->end;
        /* the job's length: its run time at the requested size, so that growing a
         * malleable job (a shorter run) does not count against it, nor a start on fewer
         * nodes (a longer one) for it; the same as its run for a rigid job */
        double run = j->runtime > 0 ? j->runtime : j->end - j->start;
        double resp = j->end - j->submit;
        v[0][k] = j->start - j->submit;
        v[1][k] = resp;
        v[2][k] = resp / (run > 1.0 ? run : 1.0);
        double b = resp / (run > BSLD_TAU ? run : BSLD_TAU);
        v[3][k] = b > 1.0 ? b : 1.0;
        wsum += j->nodes_start;
        wresp += j->nodes_start * resp;
        k++;
    }
    m->makespan = m->last_end - m->first_submit;
    m->utilization = m->makespan > 0 ? res->busy_node_seconds / ((double)nodes * m->makespan) : 0;
    m->wait = summarize(v[0], n);
    m->response = summarize(v[1], n);
    m->response_weighted = wsum > 0 ? wresp / wsum : 0;
    m->slowdown = summarize(v[2], n);
    m->bsld = summarize(v[3], n);
    m->ckpt_nodes_mean = m->makespan > 0 ? res->ckpt.node_seconds / m->makespan : 0;
    if (m->makespan > 0 && res->io_total_gbs > 0)
        m->io_utilization = res->io_gb / (res->io_total_gbs * m->makespan);
    for (int q = 0; q < 4; q++)
        free(v[q]);
    return 0;
}

typedef struct uwait {
    uint32_t user, account;
    double wait;
} uwait_t;

static int cmp_uwait(const void *a, const void *b)
{
    const uwait_t *x = a, *y = b;
    if (x->user != y->user)
        return x->user < y->user ? -1 : 1;
    if (x->account != y->account)
        return x->account < y->account ? -1 : 1;
    return cmp_double(&x->wait, &y->wait);
}

int sim_metrics_users(const sim_result_t *res, sim_user_stat_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t done = 0;
    for (size_t i = 0; i < res->njobs; i++)
        done += res->jobs[i].end >= 0;
    if (!done)
        return 0;
    uwait_t *w = malloc(done * sizeof(*w));
    sim_user_stat_t *u = malloc(done * sizeof(*u));
    double *v = malloc(done * sizeof(*v));
    if (!w || !u || !v) {
        free(w), free(u), free(v);
        return -ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < res->njobs; i++) {
        const sim_jobres_t *j = &res->jobs[i];
        if (j->end >= 0)
            w[k++] = (uwait_t){j->user, j->account, j->start - j->submit};
    }
    qsort(w, done, sizeof(*w), cmp_uwait);
    size_t nu = 0;
    for (size_t a = 0, b; a < done; a = b) {
        for (b = a; b < done && w[b].user == w[a].user && w[b].account == w[a].account; b++)
            v[b - a] = w[b].wait;
        stat4_t st = summarize(v, b - a);
        u[nu++] = (sim_user_stat_t){.user = w[a].user, .account = w[a].account, .jobs = b - a,
                                    .wait_mean = st.mean, .wait_p50 = st.p50,
                                    .wait_max = st.max};
    }
    free(w);
    free(v);
    *out = u;
    *n = nu;
    return 0;
}
