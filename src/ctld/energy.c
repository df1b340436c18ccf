/* energy: the power corridor at run time, and what the cluster and its jobs draw
 * (docs/power.md).
 *
 * The corridor in force is the last change whose time has come, in time order, of:
 * the configuration's PowerLower/PowerUpper (always first), the PowerSchedule file's
 * lines, and the operators' changes (`ductile power corridor`, kept in the database so
 * that a restart loses none; at equal times an operator's change comes last). A timer
 * applies each future change when its time comes and gives the engine the new bounds.
 *
 * Every HeartbeatInterval the draw is sampled: the sum of the last readings of the
 * nodes that report one (a reading older than NodeTimeout no longer counts), and per
 * job the sum over its nodes, which adds to its energy. A sample outside the corridor
 * counts towards the violations: how many times the draw left it, for how long, and
 * the watt-seconds outside. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld.h"
#include "forecast.h"
#include "privacy.h"
#include "strparse.h"

#define SERIES_MAX 4096 /* samples of the cluster's draw kept (11 h at 10 s) */
#define JOB_SERIES 64   /* samples of a job's draw kept, for its forecast */
#define CHANGES_MAX 4096

typedef struct change {
    double at, lower, upper; /* upper INFINITY: none */
    char by[12];             /* config, schedule, operator */
} change_t;

struct energy {
    change_t now;            /* in force */
    change_t *pend;          /* to come, by time */
    int npend;
    uv_timer_t sample, next;
    double *st, *sw;         /* the series: time, W (a ring) */
    int sn, shead;
    double last_t;           /* wall clock of the last sample; 0: none yet */
    double draw;             /* the last sample, W */
    int reporting;           /* nodes whose reading it summed */
    int64_t vcount;          /* violations: times the draw left the corridor */
    double vsecs, vws;       /* time outside (s), and the integral outside (W s) */
    bool outside;
    bool unreachable;        /* the engine said the corridor cannot be met (logged once) */
    double since;            /* wall clock: violations count from here */
};

/* ---- the corridor -------------------------------------------------------------- */

static int add_change(struct energy *e, double at, double lower, double upper, const char *by)
{
    if (e->npend >= CHANGES_MAX)
        return -ENOSPC;
    change_t *p = realloc(e->pend, (size_t)(e->npend + 1) * sizeof(*p));
    if (!p)
        return -ENOMEM;
    e->pend = p;
    /* after every change at the same time: a stable insertion */
    int i = e->npend;
    while (i > 0 && p[i - 1].at > at)
        i--;
    memmove(p + i + 1, p + i, (size_t)(e->npend - i) * sizeof(*p));
    p[i] = (change_t){.at = at, .lower = lower, .upper = upper > 0 ? upper : INFINITY};
    snprintf(p[i].by, sizeof(p[i].by), "%s", by);
    e->npend++;
    return 0;
}

int energy_engine(ctld_t *c, char *err, size_t errlen)
{
    if (!c->energy || !c->sched)
        return 0;
    return sched_set_power(c->sched, c->energy->now.lower, c->energy->now.upper,
                           c->cfg.idle_power, c->cfg.default_job_power, err, errlen);
}

static void arm_next(ctld_t *c);

/* Applies every change whose time has come; the last one is in force. */
static void apply_due(ctld_t *c)
{
    struct energy *e = c->energy;
    double now = ctld_now();
    int k = 0;
    while (k < e->npend && e->pend[k].at <= now)
        k++;
    if (k == 0)
        return;
    e->now = e->pend[k - 1];
    memmove(e->pend, e->pend + k, (size_t)(e->npend - k) * sizeof(*e->pend));
    e->npend -= k;
    char err[256];
    if (energy_engine(c, err, sizeof(err)) < 0)
        fprintf(stderr, "ductiled: power corridor: %s\n", err);
    fprintf(stderr, "ductiled: power corridor now [%g, %g] W (%s)\n", e->now.lower,
            e->now.upper, e->now.by);
    jobs_want_schedule(c);
}

static void on_next(uv_timer_t *t)
{
    ctld_t *c = t->data;
    apply_due(c);
    arm_next(c);
}

static void arm_next(ctld_t *c)
{
    struct energy *e = c->energy;
    uv_timer_stop(&e->next);
    if (e->npend == 0)
        return;
    double in = e->pend[0].at - ctld_now();
    uv_timer_start(&e->next, on_next, in > 0 ? (uint64_t)(in * 1000) + 1 : 0, 0);
}

/* "TIME LOWER UPPER" lines; '#' starts a comment; UPPER may be "none". */
static int load_schedule(ctld_t *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return snprintf(err, errlen, "PowerSchedule: cannot read %s: %s", path, strerror(errno)),
               -errno;
    char line[512];
    int no = 0, rc = 0;
    double now = ctld_now();
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        no++;
        char *h = strchr(line, '#');
        if (h)
            *h = '\0';
        char t[128], lo[64], up[64], extra[2];
        int n = sscanf(line, "%127s %63s %63s %1s", t, lo, up, extra);
        if (n <= 0)
            continue;
        double at, l, u = 0;
        if (n != 3 || strparse_time(t, now, &at) < 0 ||
            strparse_decimal(lo, CONFIG_WATTS_MAX, &l) < 0 ||
            (strcmp(up, "none") && strparse_decimal(up, CONFIG_WATTS_MAX, &u) < 0) ||
            (u > 0 && u < l)) {
            snprintf(err, errlen, "PowerSchedule %s:%d: expected 'TIME LOWER UPPER' (TIME: "
                     "YYYY-MM-DDTHH:MM[:SS] or a Unix time; watts, UPPER >= LOWER or none)",
                     path, no);
            rc = -EINVAL;
        } else if ((rc = add_change(c->energy, at, l, u, "schedule")) < 0) {
            snprintf(err, errlen, "PowerSchedule %s: more than %d changes", path, CHANGES_MAX);
        }
    }
    fclose(f);
    return rc;
}

static void stored_change(double at, double lower, double upper, const char *by, void *arg)
{
    add_change(arg, at, lower, upper, by);
}

/* The corridor of the configuration, and the schedule's changes to come. */
static int from_config(ctld_t *c, char *err, size_t errlen)
{
    struct energy *e = c->energy;
    free(e->pend);
    e->pend = NULL;
    e->npend = 0;
    e->now = (change_t){.lower = c->cfg.power_lower,
                        .upper = c->cfg.power_upper > 0 ? c->cfg.power_upper : INFINITY};
    snprintf(e->now.by, sizeof(e->now.by), "config");
    return c->cfg.power_schedule[0] ? load_schedule(c, c->cfg.power_schedule, err, errlen) : 0;
}

/* ---- sampling ------------------------------------------------------------------- */

static void push(double *ring_t, double *ring_w, int *n, int *head, int cap, double t, double w)
{
    int i = (*head + *n) % cap;
    if (*n == cap)
        *head = (*head + 1) % cap;
    else
        (*n)++;
    if (ring_t)
        ring_t[i] = t;
    ring_w[i] = w;
}

static bool fresh(const ctld_t *c, const node_t *n, double mono)
{
    return n->power_at > 0 && mono - n->power_at <= c->cfg.node_timeout;
}

/* The job's energy from its last sample (or its start, or the last sample before a
 * restart) to now at w; a sample without readings (w 0) leaves the time to the next
 * one that has them. True if it grew. */
static bool accrue(job_t *j, double w, double now)
{
    double since = j->energy_at > 0 ? j->energy_at : j->start;
    if (!(w > 0))
        return false;
    bool grew = since > 0 && now > since && now - since < 86400;
    if (grew)
        j->energy += w * (now - since);
    j->energy_at = now;
    return grew;
}

/* The job's nodes change (a resize commits): the time since its last sample was drawn
 * by the nodes it had, so it is counted at their draw now, and the next sample counts
 * only the time since, on the nodes it has. */
void energy_account(job_t *j, double now) { accrue(j, j->power_w, now); }

void energy_settle(ctld_t *c, job_t *j, double now)
{
    (void)c;
    accrue(j, j->power_w, now); /* the job's save that follows keeps it */
    j->energy_at = 0;
    j->power_w = 0;
}

/* The engine plans with what a job declared, widened to what its nodes were measured
 * drawing: a job that draws more (or less) than it said is planned with its real draw
 * from then on, and a draw that leaves the corridor because of it is answered by the
 * model like any other. The range only widens, so it cannot make the plan oscillate. */
static void widen(ctld_t *c, job_t *j, double per_node)
{
    double lo = j->seen_min > 0 ? j->seen_min : j->power_min;
    double hi = j->seen_max > 0 ? j->seen_max : j->power_max;
    if (per_node >= lo - 0.5 && per_node <= hi + 0.5)
        return;
    j->seen_min = per_node < lo ? per_node : lo;
    j->seen_max = per_node > hi ? per_node : hi;
    if (c->sched && sched_set_job_power(c->sched, j->id, j->seen_min, j->seen_max) == 0) {
        fprintf(stderr, "ductiled: job %lld draws %.0f W per node, declared %.0f-%.0f W: planned "
                "with %.0f-%.0f W from now on\n", (long long)j->id, per_node, j->power_min,
                j->power_max, j->seen_min, j->seen_max);
        jobs_want_schedule(c);
    }
}

typedef struct jsample {
    ctld_t *c;
    double mono, now;
} jsample_t;

static void sample_job(int64_t id, void *val, void *arg)
{
    (void)id;
    job_t *j = val;
    jsample_t *x = arg;
    if (j->state != JS_RUNNING && j->state != JS_RESIZING && j->state != JS_COMPLETING) {
        j->power_w = 0;
        j->energy_at = 0; /* a requeued job's next run counts from its own start */
        return;
    }
    double w = 0;
    int settled = 0; /* nodes whose reading covers only time since its last resize */
    int fresh_n = 0;
    for (int i = 0; i < j->nalloc; i++) {
        const node_t *n = &x->c->nodes[j->alloc[i]];
        if (j->alloc[i] < x->c->nnodes && fresh(x->c, n, x->mono)) {
            w += n->power_w;
            fresh_n++;
            settled += n->power_wall - x->c->cfg.heartbeat_interval > j->alloc_since;
        }
    }
    if (fresh_n > 0 && fresh_n < j->nalloc) /* nodes not heard yet (a controller restart):
                                              * at the mean of those that were */
        w = w / fresh_n * j->nalloc;
    j->power_w = w;
    if (j->state == JS_RUNNING && j->nalloc > 0 && settled == j->nalloc)
        widen(x->c, j, w / j->nalloc);
    if (accrue(j, w, x->now))
        db_job_energy(x->c, j->id, j->energy); /* a crash loses one interval at most */
    if (j->pw_hist || (j->pw_hist = calloc(JOB_SERIES, sizeof(double))))
        push(NULL, j->pw_hist, &j->pw_n, &j->pw_head, JOB_SERIES, 0, w);
}

static void on_sample(uv_timer_t *t) { energy_sample(t->data); }

void energy_sample(ctld_t *c)
{
    struct energy *e = c->energy;
    double now = ctld_now(), mono = ctld_mono();
    double dt = e->last_t > 0 && now > e->last_t ? now - e->last_t : 0;
    e->last_t = now;
    double w = 0;
    int k = 0;
    for (int i = 0; i < c->nnodes; i++)
        if (fresh(c, &c->nodes[i], mono)) {
            w += c->nodes[i].power_w;
            k++;
        }
    e->draw = w;
    e->reporting = k;
    double off;
    bool unreachable = c->sched && sched_power_unreachable(c->sched, &off);
    if (unreachable && !e->unreachable)
        fprintf(stderr, "ductiled: the power corridor [%g, %g] W cannot be met with the running "
                "jobs' sizes and powers: the closest plan is %.0f W outside\n", e->now.lower,
                e->now.upper, off);
    e->unreachable = unreachable;
    jsample_t x = {c, mono, now};
    idmap_foreach(c->jobs, sample_job, &x);
    db_power_sampled_put(c, now);
    if (k == 0)
        return;
    push(e->st, e->sw, &e->sn, &e->shead, SERIES_MAX, now, w);
    double out = w < e->now.lower ? e->now.lower - w : w > e->now.upper ? w - e->now.upper : 0;
    if (out > 0.5) {
        e->vcount += !e->outside;
        e->vsecs += dt;
        e->vws += out * dt;
    }
    e->outside = out > 0.5;
}

static void restored_from(int64_t id, void *val, void *arg)
{
    (void)id;
    job_t *j = val;
    j->energy_at = *(double *)arg;
}

/* ---- set-up --------------------------------------------------------------------- */

int energy_init(ctld_t *c, char *err, size_t errlen)
{
    struct energy *e = calloc(1, sizeof(*e));
    if (!e || !(e->st = calloc(SERIES_MAX, sizeof(double))) ||
        !(e->sw = calloc(SERIES_MAX, sizeof(double)))) {
        if (e)
            free(e->st);
        free(e);
        return snprintf(err, errlen, "out of memory"), -ENOMEM;
    }
    c->energy = e;
    e->since = ctld_now();
    /* jobs restored by a restart: their energy runs from the last sample before it
     * (the nodes went on drawing while the controller was away) */
    e->last_t = db_power_sampled(c);
    idmap_foreach(c->jobs, restored_from, &e->last_t);
    int rc = from_config(c, err, errlen);
    if (rc == 0 && db_corridor_load(c, stored_change, e) < 0) {
        snprintf(err, errlen, "database: cannot read the power corridor's changes");
        rc = -EIO;
    }
    if (rc < 0)
        return rc;
    apply_due(c);
    if ((rc = energy_engine(c, err, errlen)) < 0)
        return rc;
    uv_timer_init(c->loop, &e->sample);
    uv_timer_init(c->loop, &e->next);
    e->sample.data = e->next.data = c;
    uint64_t ms = (uint64_t)(c->cfg.heartbeat_interval * 1000);
    if (c->cfg.power_source != CONFIG_POWER_NONE)
        uv_timer_start(&e->sample, on_sample, ms, ms);
    arm_next(c);
    return 0;
}

void energy_close(ctld_t *c)
{
    struct energy *e = c->energy;
    if (!e)
        return;
    free(e->pend);
    free(e->st);
    free(e->sw);
    /* the timers are closed with every other handle when the loop stops */
}

void energy_on_ping(ctld_t *c, node_t *n, const json_t *msg)
{
    json_t *w = json_object_get(msg, "power");
    const char *src = json_string_value(json_object_get(msg, "power_source"));
    if (!json_is_number(w))
        return;
    double v = json_number_value(w);
    if (!(v >= 0 && v <= CONFIG_WATTS_MAX)) /* a bad reading is dropped, never kept */
        return;
    n->power_w = v;
    n->power_at = ctld_mono();
    n->power_wall = ctld_now();
    snprintf(n->power_src, sizeof(n->power_src), "%s",
             src && (!strcmp(src, "rapl") || !strcmp(src, "model")) ? src : "?");
}

/* ---- jobs' declared power -------------------------------------------------------- */

int energy_declared(const json_t *m, double *pmin, double *pmax, char *err, size_t errlen)
{
    json_t *p = json_object_get(m, "power");
    if (!p || json_is_null(p))
        return 0;
    if (!json_is_array(p) || json_array_size(p) != 2 || !json_is_number(json_array_get(p, 0)) ||
        !json_is_number(json_array_get(p, 1)))
        return snprintf(err, errlen, "power: expected [min, max] watts per node"), -EINVAL;
    double a = json_number_value(json_array_get(p, 0)), b = json_number_value(json_array_get(p, 1));
    if (!(a >= 0 && b >= a && b <= CONFIG_WATTS_MAX))
        return snprintf(err, errlen, "the power per node must be 0 to %.0f W with the maximum "
                        "not below the minimum (got %g and %g)", CONFIG_WATTS_MAX, a, b), -EINVAL;
    *pmin = a;
    *pmax = b;
    return 1;
}

void energy_resolve(ctld_t *c, job_t *j, bool declared, double pmin, double pmax)
{
    const char *from = "declared";
    if (!declared) {
        if (db_power_history(c, j->user, j->name, j->nodes, &pmin, &pmax) == 1) {
            pmin = round(pmin); /* whole watts: a mean of samples is no finer than that */
            pmax = round(pmax);
            from = "history";
        } else {
            pmin = pmax = c->cfg.default_job_power;
            from = "default";
        }
    }
    j->power_min = pmin;
    j->power_max = pmax;
    snprintf(j->power_from, sizeof(j->power_from), "%s", from);
}

/* ---- requests --------------------------------------------------------------------- */

static json_t *watts_or_null(double w) { return isinf(w) ? json_null() : json_real(w); }

static json_t *change_json(const change_t *ch)
{
    return json_pack("{s:f,s:f,s:o,s:s}", "at", ch->at, "lower", ch->lower, "upper",
                     watts_or_null(ch->upper), "by", ch->by);
}

static json_t *fit_json(const double *v, int h, const forecast_fit_t *f)
{
    json_t *vals = json_array();
    for (int i = 0; i < h; i++)
        json_array_append_new(vals, json_real(v[i]));
    return json_pack("{s:o,s:f,s:f,s:f,s:i,s:f,s:f,s:f,s:f,s:f,s:i}", "values", vals, "alpha",
                     f->alpha, "beta", f->beta, "gamma", f->gamma, "season", f->season, "mae",
                     f->mae, "rmse", f->rmse, "mape", f->mape, "mae_h", f->mae_h, "naive_mae",
                     f->naive_mae, "scored", f->scored);
}

/* The ring in time order. */
static int unroll(const double *ring, int n, int head, int cap, double *out)
{
    for (int i = 0; i < n; i++)
        out[i] = ring[(head + i) % cap];
    return n;
}

typedef struct jlist {
    json_t *arr;
    bool forecast;
    int h;
    const viewer_t *who; /* PrivateData=jobs: the caller's jobs only */
} jlist_t;

static void job_row(int64_t id, void *val, void *arg)
{
    job_t *j = val;
    jlist_t *x = arg;
    if ((j->state != JS_RUNNING && j->state != JS_RESIZING && j->state != JS_COMPLETING) ||
        !privacy_sees(x->who, CONFIG_PRIVATE_JOBS, j->user))
        return;
    json_t *o = json_pack("{s:I,s:s,s:s,s:i,s:f,s:f,s:f,s:s,s:f}", "id", (json_int_t)id, "name",
                          j->name, "user", j->user, "nodes", j->nalloc, "draw", j->power_w,
                          "power_min", j->power_min, "power_max", j->power_max, "power_from",
                          j->power_from, "energy", j->energy);
    if (o && j->seen_max > 0) /* what the engine plans with, widened by measurement */
        json_object_set_new(o, "planned", json_pack("[f,f]", j->seen_min, j->seen_max));
    if (o && x->forecast && j->pw_hist && j->pw_n >= 3) {
        double y[JOB_SERIES], out[100];
        forecast_fit_t f;
        int n = unroll(j->pw_hist, j->pw_n, j->pw_head, JOB_SERIES, y);
        if (forecast_holt_winters(y, n, 0, x->h, out, &f) == 0)
            json_object_set_new(o, "forecast", fit_json(out, x->h, &f));
    }
    json_array_append_new(x->arr, o);
}

void energy_rpc_power(ctld_t *c, conn_t *conn, const json_t *m)
{
    struct energy *e = c->energy;
    char err[200];
    bool want_forecast;
    int64_t h, season;
    if (proto_bool_opt(m, "forecast", false, &want_forecast, err, sizeof(err)) < 0 ||
        proto_int_opt(m, "ahead", 1, 100, 6, &h, err, sizeof(err)) < 0 ||
        proto_int_opt(m, "season", 0, SERIES_MAX / 2, 0, &season, err, sizeof(err)) < 0) {
        conn_send_new(conn, proto_err_reply(PROTO_E_NONE, err));
        return;
    }
    if (!e) {
        conn_send_new(conn, proto_err_reply(PROTO_E_NONE, "power is not set up"));
        return;
    }
    json_t *pend = json_array();
    for (int i = 0; i < e->npend; i++)
        json_array_append_new(pend, change_json(&e->pend[i]));
    double lo = 0, hi = 0;
    if (c->sched)
        sched_power_estimate(c->sched, &lo, &hi);
    viewer_t who;
    privacy_viewer(c, conn, &who);
    jlist_t x = {json_array(), want_forecast, (int)h, &who};
    idmap_foreach(c->jobs, job_row, &x);
    json_t *r = json_pack(
        "{s:b,s:o,s:o,s:f,s:i,s:i,s:s,s:f,s:f,s:f,s:{s:I,s:f,s:f,s:f,s:b},s:o,s:f}", "ok", 1,
        "corridor", change_json(&e->now), "pending", pend, "draw", e->draw, "reporting",
        e->reporting, "nodes", c->nnodes, "source", config_power_source_name(c->cfg.power_source),
        "estimate_min", lo, "estimate_max", hi, "idle_power", c->cfg.idle_power, "violations",
        "count", (json_int_t)e->vcount, "seconds", e->vsecs, "watt_seconds", e->vws, "since",
        e->since, "outside", e->outside, "jobs", x.arr, "interval", c->cfg.heartbeat_interval);
    double outside;
    if (r && c->sched && sched_power_unreachable(c->sched, &outside))
        json_object_set_new(r, "unreachable", json_pack("{s:f}", "outside", outside));
    if (r && want_forecast) {
        double *y = malloc(SERIES_MAX * sizeof(double)), out[100];
        forecast_fit_t f;
        int n = y ? unroll(e->sw, e->sn, e->shead, SERIES_MAX, y) : 0;
        int rc = y ? forecast_holt_winters(y, n, (int)season, (int)h, out, &f) : -ENOMEM;
        if (rc == 0)
            json_object_set_new(r, "forecast", fit_json(out, (int)h, &f));
        else
            json_object_set_new(r, "forecast_error",
                                json_sprintf("%d samples of the draw so far: too few to fit a "
                                             "forecast%s", n, season ? " with that season" : ""));
        free(y);
    }
    conn_send_new(conn, r);
}

void energy_rpc_corridor(ctld_t *c, conn_t *conn, const json_t *m, bool operator_)
{
    char err[300];
    double lower, upper, at;
    bool reset;
    struct energy *e = c->energy;
    if (!operator_) {
        conn_send_new(conn, proto_err_reply(PROTO_E_NONE,
                                      "permission denied: only operators may change the power "
                                      "corridor"));
        return;
    }
    if (proto_bool_opt(m, "reset", false, &reset, err, sizeof(err)) < 0 ||
        proto_num_opt(m, "lower", 0, CONFIG_WATTS_MAX, 0, &lower, err, sizeof(err)) < 0 ||
        proto_num_opt(m, "upper", 0, CONFIG_WATTS_MAX, 0, &upper, err, sizeof(err)) < 0 ||
        proto_num_opt(m, "at", 0, 1e11, 0, &at, err, sizeof(err)) < 0) {
        conn_send_new(conn, proto_err_reply(PROTO_E_NONE, err));
        return;
    }
    if (upper > 0 && upper < lower) {
        snprintf(err, sizeof(err), "the upper bound (%g W) is below the lower bound (%g W)",
                 upper, lower);
        conn_send_new(conn, proto_err_reply(PROTO_E_NONE, err));
        return;
    }
    if (!e) {
        conn_send_new(conn, proto_err_reply(PROTO_E_NONE, "power is not set up"));
        return;
    }
    int rc;
    if (reset) {
        /* back to the configuration and the schedule: load them again */
        rc = db_corridor_reset(c);
        if (rc == 0) {
            if (from_config(c, err, sizeof(err)) < 0) /* the file changed since the start */
                fprintf(stderr, "ductiled: %s\n", err);
            apply_due(c);
            energy_engine(c, err, sizeof(err));
            jobs_want_schedule(c);
        }
    } else {
        double now = ctld_now();
        if (at <= now) /* now, or a time past: now (never ahead of a later change) */
            at = now;
        rc = db_corridor_add(c, at, lower, upper, "operator");
        if (rc == 0)
            rc = add_change(e, at, lower, upper, "operator");
        if (rc == 0)
            apply_due(c);
    }
    if (rc < 0) {
        conn_send_new(conn, proto_err_reply(PROTO_E_NONE,
                                      rc == -ENOSPC ? "too many corridor changes to come"
                                                    : "cannot save the change"));
        return;
    }
    arm_next(c);
    json_t *r = json_pack("{s:b,s:o}", "ok", 1, "corridor", change_json(&e->now));
    if (c->in_batch)
        ctld_defer_send(c, conn, r); /* once the change is on disk */
    else
        conn_send_new(conn, r);
}
