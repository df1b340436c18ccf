#include "report.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

/* --- human table --- */

#define MAXCOL 16
#define CELL 48

typedef struct row {
    const char *label;
    double (*get)(const sim_metrics_t *m);
    const char *fmt;
    int group;              /* 0: every run; ROW_POWER, ROW_CKPT: runs with that model */
} row_t;

enum { ROW_POWER = 1, ROW_CKPT, ROW_FAIL, ROW_EVO, ROW_IO };

#define GETTER(name, expr) \
    static double name(const sim_metrics_t *m) { return (double)(expr); }
GETTER(g_jobs, m->jobs)
GETTER(g_makespan, m->makespan)
GETTER(g_util, m->utilization)
GETTER(g_wmean, m->wait.mean)
GETTER(g_wp50, m->wait.p50)
GETTER(g_wp95, m->wait.p95)
GETTER(g_wmax, m->wait.max)
GETTER(g_rmean, m->response.mean)
GETTER(g_rp50, m->response.p50)
GETTER(g_rp95, m->response.p95)
GETTER(g_rmax, m->response.max)
GETTER(g_smean, m->slowdown.mean)
GETTER(g_sp50, m->slowdown.p50)
GETTER(g_sp95, m->slowdown.p95)
GETTER(g_smax, m->slowdown.max)
GETTER(g_bmean, m->bsld.mean)
GETTER(g_bp50, m->bsld.p50)
GETTER(g_bp95, m->bsld.p95)
GETTER(g_bmax, m->bsld.max)
GETTER(g_exp, m->expansions)
GETTER(g_shr, m->shrinks)
GETTER(g_reconf, m->reconf_node_seconds)
GETTER(g_energy, m->energy_kwh)
GETTER(g_peak, m->power_peak)
GETTER(g_viol, m->violations)
GETTER(g_outs, m->outside_seconds)
GETTER(g_outws, m->outside_ws)
GETTER(g_rweighted, m->response_weighted)
GETTER(g_fails, m->failures)
GETTER(g_failed, m->failed_jobs)
GETTER(g_fshrunk, m->failure_shrinks)
GETTER(g_interrupts, m->interrupts)
GETTER(g_restarts, m->restarts)
GETTER(g_lost, m->lost_node_seconds)
GETTER(g_rq_made, m->req_made)
GETTER(g_rq_now, m->req_at_once)
GETTER(g_rq_later, m->req_later)
GETTER(g_rq_never, m->req_never)
GETTER(g_rq_wait, m->req_wait_mean)
GETTER(g_io_n, m->io_phases)
GETTER(g_io_mean, m->io_mean)
GETTER(g_io_sd, m->io_slowdown)
GETTER(g_io_util, m->io_utilization)
GETTER(g_io_gap, m->io_gap)
GETTER(g_ck_start, m->ckpt.nodes_start)
GETTER(g_ck_peak, m->ckpt.nodes_peak)
GETTER(g_ck_end, m->ckpt.nodes_end)
GETTER(g_ck_mean, m->ckpt_nodes_mean)
GETTER(g_ck_ns, m->ckpt.node_seconds)
GETTER(g_ck_hs, m->ckpt.high_served)
GETTER(g_ck_hr, m->ckpt.high_refused)
GETTER(g_ck_ls, m->ckpt.low_served)
GETTER(g_ck_lr, m->ckpt.low_refused)
GETTER(g_ck_idle, m->ckpt.lent_idle)
GETTER(g_ck_jobs, m->ckpt.lent_jobs)
GETTER(g_ck_shrunk, m->ckpt.jobs_shrunk)
GETTER(g_ck_recl, m->ckpt.reclaimed)
GETTER(g_ck_used, m->ckpt.used_peak_mb)
GETTER(g_ck_over, m->ckpt.overflow_mb)

static const row_t rows[] = {
    {"jobs completed", g_jobs, "%.0f", 0},
    {"makespan [s]", g_makespan, "%.1f", 0},
    {"utilization", g_util, "%.4f", 0},
    {"wait mean [s]", g_wmean, "%.1f", 0},
    {"wait p50 [s]", g_wp50, "%.1f", 0},
    {"wait p95 [s]", g_wp95, "%.1f", 0},
    {"wait max [s]", g_wmax, "%.1f", 0},
    {"response mean [s]", g_rmean, "%.1f", 0},
    {"response p50 [s]", g_rp50, "%.1f", 0},
    {"response p95 [s]", g_rp95, "%.1f", 0},
    {"response max [s]", g_rmax, "%.1f", 0},
    {"slowdown mean", g_smean, "%.2f", 0},
    {"slowdown p50", g_sp50, "%.2f", 0},
    {"slowdown p95", g_sp95, "%.2f", 0},
    {"slowdown max", g_smax, "%.2f", 0},
    {"bounded slowdown mean", g_bmean, "%.2f", 0},
    {"bounded slowdown p50", g_bp50, "%.2f", 0},
    {"bounded slowdown p95", g_bp95, "%.2f", 0},
    {"bounded slowdown max", g_bmax, "%.2f", 0},
    {"expansions", g_exp, "%.0f", 0},
    {"shrinks", g_shr, "%.0f", 0},
    {"reconfiguring [node-s]", g_reconf, "%.1f", 0},
    {"energy [kWh]", g_energy, "%.3f", ROW_POWER},
    {"power peak [W]", g_peak, "%.0f", ROW_POWER},
    {"corridor violations", g_viol, "%.0f", ROW_POWER},
    {"outside corridor [s]", g_outs, "%.1f", ROW_POWER},
    {"outside corridor [W s]", g_outws, "%.0f", ROW_POWER},
    {"response node-weighted [s]", g_rweighted, "%.1f", ROW_FAIL},
    {"node failures", g_fails, "%.0f", ROW_FAIL},
    {"jobs requeued by them", g_failed, "%.0f", ROW_FAIL},
    {"jobs shrunk by them", g_fshrunk, "%.0f", ROW_FAIL},
    {"jobs interrupted (stealing)", g_interrupts, "%.0f", ROW_FAIL},
    {"restarts", g_restarts, "%.0f", ROW_FAIL},
    {"lost work [node-s]", g_lost, "%.1f", ROW_FAIL},
    {"requests made", g_rq_made, "%.0f", ROW_EVO},
    {"requests granted at once", g_rq_now, "%.0f", ROW_EVO},
    {"requests granted later", g_rq_later, "%.0f", ROW_EVO},
    {"requests never granted", g_rq_never, "%.0f", ROW_EVO},
    {"request wait mean [s]", g_rq_wait, "%.1f", ROW_EVO},
    {"I/O phases", g_io_n, "%.0f", ROW_IO},
    {"I/O phase mean [s]", g_io_mean, "%.2f", ROW_IO},
    {"I/O slowdown (contention)", g_io_sd, "%.3f", ROW_IO},
    {"file system utilization", g_io_util, "%.4f", ROW_IO},
    {"I/O intensity gap |W-S|", g_io_gap, "%.4f", ROW_IO},
    {"ckpt nodes at start", g_ck_start, "%.0f", ROW_CKPT},
    {"ckpt nodes peak", g_ck_peak, "%.0f", ROW_CKPT},
    {"ckpt nodes at end", g_ck_end, "%.0f", ROW_CKPT},
    {"ckpt nodes mean", g_ck_mean, "%.2f", ROW_CKPT},
    {"ckpt [node-s]", g_ck_ns, "%.1f", ROW_CKPT},
    {"ckpt HIGH served", g_ck_hs, "%.0f", ROW_CKPT},
    {"ckpt HIGH refused", g_ck_hr, "%.0f", ROW_CKPT},
    {"ckpt LOW served", g_ck_ls, "%.0f", ROW_CKPT},
    {"ckpt LOW refused", g_ck_lr, "%.0f", ROW_CKPT},
    {"ckpt nodes lent idle", g_ck_idle, "%.0f", ROW_CKPT},
    {"ckpt nodes from jobs", g_ck_jobs, "%.0f", ROW_CKPT},
    {"ckpt jobs shrunk", g_ck_shrunk, "%.0f", ROW_CKPT},
    {"ckpt nodes reclaimed", g_ck_recl, "%.0f", ROW_CKPT},
    {"ckpt used peak [MB]", g_ck_used, "%.0f", ROW_CKPT},
    {"ckpt overflow [MB]", g_ck_over, "%.0f", ROW_CKPT},
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static bool shown(const report_info_t *info, const row_t *r)
{
    return r->group == 0 || (r->group == ROW_POWER && info->power) ||
           (r->group == ROW_CKPT && info->ckpt) || (r->group == ROW_FAIL && info->failures) ||
           (r->group == ROW_EVO && info->requests) || (r->group == ROW_IO && info->io);
}

static void cell(char *buf, const row_t *r, const sim_metrics_t *m, const sim_metrics_t *base)
{
    double v = r->get(m);
    int k = snprintf(buf, CELL, r->fmt, v);
    if (!base)
        return;
    double b = r->get(base);
    if (b != 0 && isfinite(v / b))
        snprintf(buf + k, (size_t)(CELL - k), " (%.3f)", v / b);
    else
        snprintf(buf + k, (size_t)(CELL - k), " (-)");
}

static int cmp_user(const void *a, const void *b)
{
    const sim_user_stat_t *x = a, *y = b;
    if (x->user != y->user)
        return x->user < y->user ? -1 : 1;
    return (x->account > y->account) - (x->account < y->account);
}

/* One row per (user, account) that completed a job in some run; per run its jobs and
 * their mean and longest wait. */
static void users_table(FILE *f, const report_run_t *runs, int n)
{
    size_t total = 0, nk = 0;
    for (int c = 0; c < n; c++)
        total += runs[c].nusers;
    sim_user_stat_t *keys = malloc((total ? total : 1) * sizeof(*keys));
    if (!keys)
        return;
    for (int c = 0; c < n; c++)
        for (size_t u = 0; u < runs[c].nusers; u++)
            keys[nk++] = runs[c].users[u];
    qsort(keys, nk, sizeof(*keys), cmp_user);
    fprintf(f, "\nwait per user [s]");
    for (int c = 0; c < n; c++)
        fprintf(f, "  %32.32s", runs[c].name);
    fprintf(f, "\n%10s %10s", "user", "account");
    for (int c = 0; c < n; c++)
        fprintf(f, "  %8s %11s %11s", "jobs", "mean", "max");
    fprintf(f, "\n");
    for (size_t k = 0; k < nk; k++) {
        if (k && !cmp_user(&keys[k], &keys[k - 1]))
            continue;
        fprintf(f, "%10u %10u", keys[k].user, keys[k].account);
        for (int c = 0; c < n; c++) {
            const sim_user_stat_t *u =
                runs[c].nusers ? bsearch(&keys[k], runs[c].users, runs[c].nusers,
                                         sizeof(*u), cmp_user)
                               : NULL;
            if (u)
                fprintf(f, "  %8zu %11.1f %11.1f", u->jobs, u->wait_mean, u->wait_max);
            else
                fprintf(f, "  %8d %11s %11s", 0, "-", "-");
        }
        fprintf(f, "\n");
    }
    free(keys);
}

void report_table(FILE *f, const report_info_t *info, const report_run_t *runs, int n)
{
    if (n > MAXCOL)
        n = MAXCOL;
    fprintf(f, "workload %s: %zu jobs on %d nodes", info->workload, info->njobs, info->nodes);
    if (info->malleable >= 0)
        fprintf(f, ", %.0f%% made malleable", info->malleable * 100);
    fprintf(f, ", seed %llu", (unsigned long long)info->seed);
    if (info->skipped)
        fprintf(f, ", %zu skipped by replay rules", info->skipped);
    if (info->malformed)
        fprintf(f, ", %zu malformed lines skipped", info->malformed);
    fprintf(f, "\n");
    if (info->priority)
        fprintf(f, "priority %s\n", info->priority);
    if (info->resv)
        fprintf(f, "reservations %s (START,DURATION,NODES)\n", info->resv);
    for (int c = 0; c < n; c++) {
        fprintf(f, "policy %s", runs[c].spec);
        if (runs[c].rejected)
            fprintf(f, " (%zu jobs rejected)", runs[c].rejected);
        if (runs[c].unfinished)
            fprintf(f, " (%zu jobs never finished)", runs[c].unfinished);
        fprintf(f, "\n");
    }
    if (n > 1)
        fprintf(f, "(ratios to %s in parentheses)\n", runs[0].name);
    int lw = 0, w[MAXCOL];
    for (size_t r = 0; r < NROWS; r++)
        if (shown(info, &rows[r]) && (int)strlen(rows[r].label) > lw)
            lw = (int)strlen(rows[r].label);
    char buf[CELL];
    for (int c = 0; c < n; c++) {
        w[c] = (int)strlen(runs[c].name);
        for (size_t r = 0; r < NROWS; r++) {
            if (!shown(info, &rows[r]))
                continue;
            cell(buf, &rows[r], &runs[c].m, c ? &runs[0].m : NULL);
            if ((int)strlen(buf) > w[c])
                w[c] = (int)strlen(buf);
        }
    }
    fprintf(f, "\n%-*s", lw, "");
    for (int c = 0; c < n; c++)
        fprintf(f, "  %*s", w[c], runs[c].name);
    fprintf(f, "\n");
    for (size_t r = 0; r < NROWS; r++) {
        if (!shown(info, &rows[r]))
            continue;
        fprintf(f, "%-*s", lw, rows[r].label);
        for (int c = 0; c < n; c++) {
            cell(buf, &rows[r], &runs[c].m, c ? &runs[0].m : NULL);
            fprintf(f, "  %*s", w[c], buf);
        }
        fprintf(f, "\n");
    }
    if (info->per_user)
        users_table(f, runs, n);
}

/* --- JSON --- */

static json_t *stat_json(const stat4_t *s)
{
    return json_pack("{s:f,s:f,s:f,s:f}", "mean", s->mean, "p50", s->p50, "p95", s->p95, "max",
                     s->max);
}

static json_t *ckpt_json(const sim_ckpt_res_t *k, double mean)
{
    json_t *o = json_pack("{s:i,s:i,s:i,s:f,s:f}", "nodes_start", k->nodes_start, "nodes_peak",
                          k->nodes_peak, "nodes_end", k->nodes_end, "nodes_mean", mean,
                          "node_seconds", k->node_seconds);
    json_object_set_new(o, "requests",
                        json_pack("{s:I,s:I,s:I,s:I}", "high_served", (json_int_t)k->high_served,
                                  "high_refused", (json_int_t)k->high_refused, "low_served",
                                  (json_int_t)k->low_served, "low_refused",
                                  (json_int_t)k->low_refused));
    json_object_set_new(o, "lent_idle", json_integer(k->lent_idle));
    json_object_set_new(o, "lent_from_jobs", json_integer(k->lent_jobs));
    json_object_set_new(o, "jobs_shrunk", json_integer(k->jobs_shrunk));
    json_object_set_new(o, "reclaimed", json_integer(k->reclaimed));
    json_object_set_new(o, "used_peak_mb", json_real(k->used_peak_mb));
    json_object_set_new(o, "overflow_mb", json_real(k->overflow_mb));
    return o;
}

static json_t *users_json(const report_run_t *r)
{
    json_t *a = json_array();
    for (size_t k = 0; k < r->nusers; k++) {
        const sim_user_stat_t *u = &r->users[k];
        json_array_append_new(a, json_pack("{s:I,s:I,s:I,s:f,s:f,s:f}", "user",
                                           (json_int_t)u->user, "account",
                                           (json_int_t)u->account, "jobs", (json_int_t)u->jobs,
                                           "wait_mean", u->wait_mean, "wait_p50", u->wait_p50,
                                           "wait_max", u->wait_max));
    }
    return a;
}

int report_json(FILE *f, const report_info_t *info, const report_run_t *runs, int n)
{
    json_t *arr = json_array();
    for (int c = 0; c < n; c++) {
        const sim_metrics_t *m = &runs[c].m;
        json_t *o = json_pack(
            "{s:s,s:s,s:I,s:I,s:I,s:f,s:f,s:o,s:o,s:o,s:o,s:I,s:I,s:f}", "policy", runs[c].name,
            "spec", runs[c].spec, "jobs_completed", (json_int_t)m->jobs, "rejected",
            (json_int_t)runs[c].rejected, "unfinished", (json_int_t)runs[c].unfinished,
            "makespan", m->makespan, "utilization", m->utilization, "wait", stat_json(&m->wait),
            "response", stat_json(&m->response), "slowdown", stat_json(&m->slowdown),
            "bounded_slowdown", stat_json(&m->bsld), "expansions", (json_int_t)m->expansions,
            "shrinks", (json_int_t)m->shrinks, "reconf_node_seconds", m->reconf_node_seconds);
        if (info->power)
            json_object_set_new(o, "power",
                                json_pack("{s:f,s:f,s:I,s:f,s:f}", "energy_kwh", m->energy_kwh,
                                          "peak_w", m->power_peak, "violations",
                                          (json_int_t)m->violations, "outside_seconds",
                                          m->outside_seconds, "outside_ws", m->outside_ws));
        if (info->ckpt)
            json_object_set_new(o, "ckpt", ckpt_json(&m->ckpt, m->ckpt_nodes_mean));
        if (info->requests)
            json_object_set_new(o, "requests",
                                json_pack("{s:I,s:I,s:I,s:I,s:f}", "made", (json_int_t)m->req_made,
                                          "granted_at_once", (json_int_t)m->req_at_once,
                                          "granted_later", (json_int_t)m->req_later,
                                          "never_granted", (json_int_t)m->req_never,
                                          "wait_mean", m->req_wait_mean));
        if (info->io)
            json_object_set_new(o, "io",
                                json_pack("{s:I,s:f,s:f,s:f,s:f}", "phases",
                                          (json_int_t)m->io_phases, "phase_mean", m->io_mean,
                                          "slowdown", m->io_slowdown, "utilization",
                                          m->io_utilization, "intensity_gap", m->io_gap));
        if (info->failures)
            json_object_set_new(
                o, "failures",
                json_pack("{s:f,s:I,s:I,s:I,s:I,s:I,s:f}", "response_weighted",
                          m->response_weighted, "failures", (json_int_t)m->failures,
                          "jobs_requeued", (json_int_t)m->failed_jobs, "jobs_shrunk",
                          (json_int_t)m->failure_shrinks, "interrupts",
                          (json_int_t)m->interrupts, "restarts", (json_int_t)m->restarts,
                          "lost_node_seconds", m->lost_node_seconds));
        if (info->per_user)
            json_object_set_new(o, "users", users_json(&runs[c]));
        json_array_append_new(arr, o);
    }
    json_t *root = json_pack("{s:s,s:I,s:i,s:I,s:I,s:I,s:o}", "workload", info->workload, "jobs",
                             (json_int_t)info->njobs, "nodes", info->nodes, "skipped",
                             (json_int_t)info->skipped, "malformed", (json_int_t)info->malformed,
                             "seed", (json_int_t)info->seed, "runs", arr);
    if (info->malleable >= 0)
        json_object_set_new(root, "malleable", json_real(info->malleable));
    if (info->priority)
        json_object_set_new(root, "priority", json_string(info->priority));
    if (info->resv)
        json_object_set_new(root, "reservations", json_string(info->resv));
    int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    fputc('\n', f);
    json_decref(root);
    return rc < 0 ? -EIO : 0;
}

/* --- jobs CSV --- */

int report_jobs_csv(const char *path, const sim_result_t *res, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -errno;
    }
    char a[32], b[32], c[32];
    fputs("id,submit,start,end,nodes,min,max,final_nodes,expansions,shrinks\n", f);
    for (size_t i = 0; i < res->njobs; i++) {
        const sim_jobres_t *j = &res->jobs[i];
        fprintf(f, "%lld,%s,%s,%s,%d,%d,%d,%d,%d,%d\n", (long long)j->id,
                fmt_time(j->submit, a, sizeof(a)), j->start >= 0 ? fmt_time(j->start, b, sizeof(b)) : "",
                j->end >= 0 ? fmt_time(j->end, c, sizeof(c)) : "", j->nodes_start, j->min_nodes,
                j->max_nodes, j->nodes_final, j->expansions, j->shrinks);
    }
    if (ferror(f) | (fclose(f) != 0)) {
        snprintf(err, errlen, "error writing %s", path);
        return -EIO;
    }
    return 0;
}
