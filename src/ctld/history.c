/* `ductile history` (sacct): finished jobs from the database, with --running the live
 * ones too, each with its sizes in order and what its steps used (TotalCPU, MaxRSS),
 * and with --steps the steps themselves (db_steps.c). */
#include <stdlib.h>
#include <string.h>

#include "ctld.h"
#include "privacy.h"

/* A finished job as db_history gives it: with its sizes in order ("1>4>2": the start,
 * then each resize; "3,3": two runs), from its events. */
static json_t *history_json(ctld_t *c, const viewer_t *who, const job_t *j)
{
    json_t *o = job_to_json(c, j, false), *ev = json_array();
    privacy_trim(who, j->user, o);
    db_job_events(c, j->id, ev);
    char sizes[256] = "";
    size_t pos = 0, k;
    json_t *e;
    json_array_foreach(ev, k, e)
    {
        const char *what = json_string_value(json_object_get(e, "event"));
        if (what && (!strcmp(what, "start") || !strcmp(what, "expand") || !strcmp(what, "shrink")) &&
            pos + 16 < sizeof(sizes))
            pos += (size_t)snprintf(sizes + pos, sizeof(sizes) - pos, "%s%lld",
                                    !pos ? "" : !strcmp(what, "start") ? "," : ">",
                                    (long long)json_integer_value(json_object_get(e, "after")));
    }
    json_decref(ev);
    json_object_set_new(o, "sizes", json_string(sizes));
    return o;
}

/* What each job's steps used (TotalCPU, MaxRSS), and with `steps` the steps
 * themselves (step 0 the batch script). */
static void add_usage(ctld_t *c, json_t *jobs, bool with_steps)
{
    size_t k, n = json_array_size(jobs);
    json_t *o;
    int64_t *ids = malloc((n + 1) * sizeof(int64_t));
    if (!ids)
        return;
    json_array_foreach(jobs, k, o) ids[k] = json_integer_value(json_object_get(o, "id"));
    json_t *all = db_steps_of(c, ids, n);
    free(ids);
    json_array_foreach(jobs, k, o)
    {
        char key[24];
        snprintf(key, sizeof(key), "%lld",
                 (long long)json_integer_value(json_object_get(o, "id")));
        json_t *steps = json_object_get(all, key);
        double cpu = -1;
        long long mem = -1;
        size_t q;
        json_t *s;
        json_array_foreach(steps, q, s)
        {
            const json_t *sc = json_object_get(s, "cpu"), *sm = json_object_get(s, "mem");
            if (json_is_number(sc))
                cpu = (cpu > 0 ? cpu : 0) + json_number_value(sc);
            if (json_is_integer(sm) && json_integer_value(sm) > mem)
                mem = json_integer_value(sm);
        }
        if (cpu >= 0)
            json_object_set_new(o, "total_cpu", json_real(cpu));
        if (mem >= 0)
            json_object_set_new(o, "max_rss", json_integer(mem));
        if (with_steps)
            json_object_set_new(o, "steps", steps ? json_incref(steps) : json_array());
    }
    json_decref(all);
}

typedef struct live {
    ctld_t *c;
    const char *user;
    bool has_state;
    jstate_t state;
    json_t *ids; /* the live jobs that match, for history --running */
} live_t;

static void add_live(int64_t id, void *val, void *arg)
{
    live_t *x = arg;
    const job_t *j = val;
    if ((!x->user || !strcmp(j->user, x->user)) && (!x->has_state || j->state == x->state))
        json_array_append_new(x->ids, json_integer(id));
}

#define HISTORY_PAGE 1000
#define HISTORY_PAGE_MS 10.0

void history_rpc(ctld_t *c, conn_t *conn, const json_t *m)
{
    char err[256];
    const char *user, *state;
    double since, until;
    int64_t limit;
    bool steps = json_is_true(json_object_get(m, "steps"));
    bool live = json_is_true(json_object_get(m, "running"));
    if (proto_str_opt(m, "user", 255, NULL, &user, err, sizeof(err)) < 0 ||
        proto_str_opt(m, "state", 16, NULL, &state, err, sizeof(err)) < 0 ||
        proto_num_opt(m, "since", 0, 1e12, 0, &since, err, sizeof(err)) < 0 ||
        proto_num_opt(m, "until", 0, 1e12, 0, &until, err, sizeof(err)) < 0 ||
        proto_int_opt(m, "limit", 1, 1000000, 1000, &limit, err, sizeof(err)) < 0) {
        rpc_fail(c, conn, err);
        return;
    }
    jstate_t st;
    if (state && jstate_parse(state, &st) < 0) {
        rpc_fail(c, conn, "unknown state (use CD, F, CA, TO, NF or OOM; with running jobs also PD, R)");
        return;
    }
    const json_t *ids = json_object_get(m, "jobs");
    if (ids && (!json_is_array(ids) || json_array_size(ids) > 10000)) {
        rpc_fail(c, conn, "field 'jobs' must be an array of at most 10000 job ids");
        return;
    }
    /* PrivateData=jobs: the caller's own, by their ids or not (sacct's way) */
    viewer_t who;
    privacy_viewer(c, conn, &who);
    if (!privacy_jobs_of(&who, user, &user)) {
        rpc_reply(c, conn, json_pack("{s:b,s:[]}", "ok", 1, "jobs"));
        return;
    }
    json_t *arr = json_array();
    if (ids) { /* those jobs (the finished ones among them), with the same filters */
        size_t k;
        json_t *v;
        json_t *named = json_array(); /* an array's id: every element of it, as sacct */
        json_array_foreach(ids, k, v)
        {
            json_t *all = json_is_integer(v) ? db_array_members(c, json_integer_value(v)) : NULL;
            if (json_array_size(all))
                json_array_extend(named, all);
            else
                json_array_append(named, v);
            json_decref(all);
        }
        json_array_foreach(named, k, v)
        {
            int64_t id;
            if (arrays_resolve(c, v, &id) < 0)
                continue;
            const job_t *lj = live ? idmap_get(c->jobs, id) : NULL;
            if (lj) { /* --running: a job that has not ended, as it stands */
                if ((!user || !strcmp(lj->user, user)) && (!state || lj->state == st))
                    json_array_append_new(arr, history_json(c, &who, lj));
                continue;
            }
            job_t *j = db_job_find_finished(c, id);
            if (j && jstate_final(j->state) && (!user || !strcmp(j->user, user)) &&
                (!state || j->state == st) && j->end >= since && (until <= 0 || j->end <= until))
                json_array_append_new(arr, history_json(c, &who, j));
            job_free(j);
        }
        json_decref(named);
        add_usage(c, arr, steps);
        rpc_reply(c, conn, json_pack("{s:b,s:o}", "ok", 1, "jobs", arr));
        return;
    }
    /* a page at a time (HISTORY_PAGE rows, or what HISTORY_PAGE_MS allows): a million
     * rows in one reply held the loop for half a minute and half a gigabyte */
    hist_cursor_t cur = {0, 0};
    const json_t *after = json_object_get(m, "after");
    if (after && (proto_num_opt(after, "end", 0, 1e12, 0, &cur.end, err, sizeof(err)) < 0 ||
                  proto_int_opt(after, "id", 0, INT64_MAX, 0, &cur.id, err, sizeof(err)) < 0)) {
        json_decref(arr);
        rpc_fail(c, conn, err);
        return;
    }
    int page = limit < HISTORY_PAGE ? (int)limit : HISTORY_PAGE;
    int more = db_history(c, user, state ? jstate_code(st) : NULL, since, until, page,
                          stats_clock() + HISTORY_PAGE_MS, &cur, arr, err, sizeof(err));
    if (more < 0) {
        json_decref(arr);
        rpc_fail(c, conn, err);
        return;
    }
    /* the running ones after the last page the client asks for */
    if (live && (!more || (int64_t)json_array_size(arr) >= limit)) { /* in id order */
        live_t x = {c, user, state != NULL, state ? st : JS_PENDING, json_array()};
        idmap_foreach(c->jobs, add_live, &x);
        size_t n = json_array_size(x.ids), q;
        int64_t *sorted = malloc((n + 1) * sizeof(int64_t));
        json_t *e;
        json_array_foreach(x.ids, q, e) if (sorted) sorted[q] = json_integer_value(e);
        if (sorted)
            qsort(sorted, n, sizeof(int64_t), idmap_cmp_key);
        for (q = 0; sorted && q < n; q++)
            json_array_append_new(arr,
                                  history_json(c, &who, idmap_get(c->jobs, sorted[q])));
        free(sorted);
        json_decref(x.ids);
    }
    add_usage(c, arr, steps);
    json_t *rep = json_pack("{s:b,s:o}", "ok", 1, "jobs", arr);
    if (rep && more) /* where the next page starts */
        json_object_set_new(rep, "next", json_pack("{s:f,s:I}", "end", cur.end, "id",
                                                   (json_int_t)cur.id));
    rpc_reply(c, conn, rep);
}
