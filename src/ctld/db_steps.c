/* The steps table: each step of a job (ductile run; step 0 is the batch script) with
 * its command, tasks, nodes, times, exit status and what it used (CPU time and peak
 * memory, from the tasks' cgroups), for `ductile history --steps` (sacct's 12.batch,
 * 12.0 lines). A table of its own, made on first use: older databases gain it as they
 * go. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "ctld.h"

static int steps_table(ctld_t *c)
{
    return sqlite3_exec(c->db,
                        "CREATE TABLE IF NOT EXISTS steps (job INTEGER NOT NULL,"
                        " step INTEGER NOT NULL, name TEXT, tasks INTEGER, nodelist TEXT,"
                        " start REAL, end REAL, status INTEGER, cpu REAL, mem INTEGER,"
                        " PRIMARY KEY (job, step))",
                        NULL, NULL, NULL) == SQLITE_OK
               ? 0
               : -EIO;
}

int db_step_put(ctld_t *c, const step_rec_t *r)
{
    sqlite3_stmt *st = NULL;
    if (db_write_begin(c) < 0 || steps_table(c) < 0 ||
        sqlite3_prepare_v2(c->db,
                           "INSERT OR REPLACE INTO steps VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
                           " ?9, ?10)",
                           -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "ductiled: database: cannot record step %d of job %lld: %s\n", r->step,
                (long long)r->job, sqlite3_errmsg(c->db));
        sqlite3_finalize(st);
        return -EIO;
    }
    sqlite3_bind_int64(st, 1, r->job);
    sqlite3_bind_int(st, 2, r->step);
    sqlite3_bind_text(st, 3, r->name ? r->name : "", -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, r->tasks);
    sqlite3_bind_text(st, 5, r->nodelist ? r->nodelist : "", -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 6, r->start);
    sqlite3_bind_double(st, 7, r->end);
    sqlite3_bind_int(st, 8, r->status);
    sqlite3_bind_double(st, 9, r->cpu);
    sqlite3_bind_int64(st, 10, r->mem);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
    if (rc < 0)
        fprintf(stderr, "ductiled: database: step %d of job %lld: %s\n", r->step,
                (long long)r->job, sqlite3_errmsg(c->db));
    sqlite3_finalize(st);
    return rc;
}

json_t *db_steps_of(ctld_t *c, const int64_t *jobs, size_t n)
{
    /* one statement for a page of jobs: one per job (prepared, locked and run 1,000
     * times) took as long as reading the page itself */
    json_t *out = json_object(), *ids = json_array();
    for (size_t k = 0; ids && k < n; k++)
        json_array_append_new(ids, json_integer(jobs[k]));
    char *text = ids ? json_dumps(ids, JSON_COMPACT) : NULL;
    json_decref(ids);
    sqlite3_stmt *st = NULL;
    if (!out || !text ||
        sqlite3_prepare_v2(c->db,
                           "SELECT step, name, tasks, nodelist, start, end, status, cpu, mem, job"
                           " FROM steps WHERE job IN (SELECT value FROM json_each(?1))"
                           " ORDER BY job, step",
                           -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        free(text);
        return out; /* no table yet: no step was ever recorded */
    }
    sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *nl = (const char *)sqlite3_column_text(st, 3);
        json_t *o = json_pack("{s:i,s:s,s:i,s:s,s:f,s:f,s:i}", "step",
                              sqlite3_column_int(st, 0), "name", name ? name : "", "tasks",
                              sqlite3_column_int(st, 2), "nodelist", nl ? nl : "", "start",
                              sqlite3_column_double(st, 4), "end",
                              sqlite3_column_double(st, 5), "status",
                              sqlite3_column_int(st, 6));
        double cpu = sqlite3_column_double(st, 7);
        long long mem = sqlite3_column_int64(st, 8);
        if (o && cpu >= 0) /* -1: not measured */
            json_object_set_new(o, "cpu", json_real(cpu));
        if (o && mem >= 0)
            json_object_set_new(o, "mem", json_integer(mem));
        char key[24];
        snprintf(key, sizeof(key), "%lld", (long long)sqlite3_column_int64(st, 9));
        json_t *list = json_object_get(out, key);
        if (!list)
            json_object_set_new(out, key, list = json_array());
        json_array_append_new(list, o);
    }
    sqlite3_finalize(st);
    free(text);
    return out;
}

static int live_tables(ctld_t *c);
/* (a step taken up again by steps_restore is not over) */
#define NOT_LIVE                                                                               \
    " AND NOT EXISTS (SELECT 1 FROM step_live l WHERE l.job = steps.job AND"                   \
    " l.step = steps.step)"

int db_steps_close_open(ctld_t *c, double now)
{
    sqlite3_stmt *st = NULL;
    /* nothing to end, nothing written: this runs after every reload, also the one that
     * follows a batch rolled back on a full disk, where a write would fail again */
    int open = 0;
    live_tables(c);
    if (sqlite3_prepare_v2(c->db, "SELECT count(*) FROM steps WHERE end = 0" NOT_LIVE, -1, &st,
                           NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        open = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    st = NULL;
    if (!open)
        return 0; /* (or no table yet: no step was ever recorded) */
    if (sqlite3_prepare_v2(c->db, "UPDATE steps SET end = ?1, status = 255 WHERE end = 0" NOT_LIVE,
                           -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return -EIO;
    }
    int rc = db_write_begin(c) < 0 ? -EIO : 0;
    sqlite3_bind_double(st, 1, now);
    if (rc == 0 && sqlite3_step(st) != SQLITE_DONE)
        rc = -EIO;
    int n = rc == 0 ? sqlite3_changes(c->db) : 0;
    sqlite3_finalize(st);
    if (n > 0)
        fprintf(stderr, "ductiled: %d step%s that ran when the controller stopped ended with "
                "it (status 255 in history)\n", n, n > 1 ? "s" : "");
    return rc;
}

int db_steps_max(ctld_t *c, int64_t job)
{
    sqlite3_stmt *st = NULL;
    int max = 0;
    if (sqlite3_prepare_v2(c->db, "SELECT MAX(step) FROM steps WHERE job = ?1", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_int64(st, 1, job);
        if (sqlite3_step(st) == SQLITE_ROW)
            max = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    return max;
}

/* --- live steps: what a restarted controller needs to take a step up again ---
 *
 * A step that runs, or has ended but whose client has not had all of it yet, has a row
 * in step_live and one per task in step_tasks (its node, and once it has ended its exit
 * status and how much output it wrote). They go when the step is forgotten. */
static int live_tables(ctld_t *c)
{
    return sqlite3_exec(c->db,
                        "CREATE TABLE IF NOT EXISTS step_live (job INTEGER NOT NULL,"
                        " step INTEGER NOT NULL, error TEXT,"
                        " PRIMARY KEY (job, step));"
                        "CREATE TABLE IF NOT EXISTS step_tasks (job INTEGER NOT NULL,"
                        " step INTEGER NOT NULL, rank INTEGER NOT NULL, node TEXT,"
                        " status INTEGER, out INTEGER, PRIMARY KEY (job, step, rank))",
                        NULL, NULL, NULL) == SQLITE_OK
               ? 0
               : -EIO;
}

/* One statement, its integers and texts bound in order ("i" int64, "t" text, "n" NULL). */
static int exec_bound(ctld_t *c, const char *sql, const char *kinds, ...)
{
    sqlite3_stmt *st = NULL;
    if (db_write_begin(c) < 0 || live_tables(c) < 0 ||
        sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "ductiled: database: live steps: %s\n", sqlite3_errmsg(c->db));
        sqlite3_finalize(st);
        return -EIO;
    }
    va_list ap;
    va_start(ap, kinds);
    for (int i = 0; kinds[i]; i++) {
        if (kinds[i] == 'i')
            sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
        else if (kinds[i] == 't')
            sqlite3_bind_text(st, i + 1, va_arg(ap, const char *), -1, SQLITE_TRANSIENT);
        else
            sqlite3_bind_null(st, i + 1);
    }
    va_end(ap);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
    if (rc < 0)
        fprintf(stderr, "ductiled: database: live steps: %s\n", sqlite3_errmsg(c->db));
    sqlite3_finalize(st);
    return rc;
}

int db_step_live_put(ctld_t *c, int64_t job, int step, const char *error)
{
    return exec_bound(c, "INSERT OR REPLACE INTO step_live VALUES (?1, ?2, ?3)",
                      error ? "iit" : "iin", job, (int64_t)step, error);
}

int db_step_task_put(ctld_t *c, int64_t job, int step, int rank, const char *node, bool ended,
                     int status, int64_t out)
{
    return exec_bound(c, "INSERT OR REPLACE INTO step_tasks VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                      ended ? "iiitii" : "iiitnn", job, (int64_t)step, (int64_t)rank, node,
                      (int64_t)status, out);
}

int db_step_live_del(ctld_t *c, int64_t job, int step)
{
    int rc = exec_bound(c, "DELETE FROM step_live WHERE job = ?1 AND step = ?2", "ii", job,
                        (int64_t)step);
    if (rc == 0)
        rc = exec_bound(c, "DELETE FROM step_tasks WHERE job = ?1 AND step = ?2", "ii", job,
                        (int64_t)step);
    return rc;
}

json_t *db_steps_live(ctld_t *c)
{
    json_t *out = json_array();
    sqlite3_stmt *st = NULL, *tk = NULL;
    if (!out || live_tables(c) < 0 ||
        sqlite3_prepare_v2(c->db,
                           "SELECT l.job, l.step, l.error, s.name, s.nodelist, s.start, s.end,"
                           " s.status, s.cpu, s.mem FROM step_live l LEFT JOIN steps s"
                           " ON s.job = l.job AND s.step = l.step ORDER BY l.job, l.step",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db,
                           "SELECT rank, node, status, out FROM step_tasks WHERE job = ?1 AND"
                           " step = ?2 ORDER BY rank",
                           -1, &tk, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        sqlite3_finalize(tk);
        return out; /* (no steps table yet: nothing ran) */
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *err = (const char *)sqlite3_column_text(st, 2);
        const char *name = (const char *)sqlite3_column_text(st, 3);
        const char *nl = (const char *)sqlite3_column_text(st, 4);
        json_t *o = json_pack("{s:I,s:i,s:s,s:s,s:f,s:f,s:i,s:f,s:I}",
                              "job", (json_int_t)sqlite3_column_int64(st, 0),
                              "step", sqlite3_column_int(st, 1),
                              "name", name ? name : "", "nodelist", nl ? nl : "",
                              "start", sqlite3_column_double(st, 5),
                              "end", sqlite3_column_double(st, 6),
                              "status", sqlite3_column_int(st, 7),
                              "cpu", sqlite3_column_type(st, 8) == SQLITE_NULL
                                         ? -1.0 : sqlite3_column_double(st, 8),
                              "mem", (json_int_t)(sqlite3_column_type(st, 9) == SQLITE_NULL
                                                      ? -1 : sqlite3_column_int64(st, 9)));
        if (!o)
            continue;
        if (err)
            json_object_set_new(o, "error", json_string(err));
        json_t *tasks = json_array();
        sqlite3_bind_int64(tk, 1, sqlite3_column_int64(st, 0));
        sqlite3_bind_int(tk, 2, sqlite3_column_int(st, 1));
        while (tasks && sqlite3_step(tk) == SQLITE_ROW) {
            const char *node = (const char *)sqlite3_column_text(tk, 1);
            json_t *t = json_pack("{s:i,s:s}", "rank", sqlite3_column_int(tk, 0), "node",
                                  node ? node : "");
            if (t && sqlite3_column_type(tk, 2) != SQLITE_NULL) {
                json_object_set_new(t, "status", json_integer(sqlite3_column_int(tk, 2)));
                json_object_set_new(t, "out", json_integer(sqlite3_column_int64(tk, 3)));
            }
            json_array_append_new(tasks, t);
        }
        sqlite3_reset(tk);
        json_object_set_new(o, "tasks", tasks);
        json_array_append_new(out, o);
    }
    sqlite3_finalize(st);
    sqlite3_finalize(tk);
    return out;
}
