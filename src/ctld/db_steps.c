/* The steps table: each step of a job (ductile run; step 0 is the batch script) with
 * its command, tasks, nodes, times, exit status and what it used (CPU time and peak
 * memory, from the tasks' cgroups), for `ductile history --steps` (sacct's 12.batch,
 * 12.0 lines). A table of its own, made on first use: older databases gain it as they
 * go. */
#include <errno.h>
#include <stdio.h>
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

json_t *db_steps_of(ctld_t *c, int64_t job)
{
    json_t *out = json_array();
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->db,
                           "SELECT step, name, tasks, nodelist, start, end, status, cpu, mem"
                           " FROM steps WHERE job = ?1 ORDER BY step",
                           -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return out; /* no table yet: no step was ever recorded */
    }
    sqlite3_bind_int64(st, 1, job);
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
        json_array_append_new(out, o);
    }
    sqlite3_finalize(st);
    return out;
}

int db_steps_close_open(ctld_t *c, double now)
{
    sqlite3_stmt *st = NULL;
    /* nothing to end, nothing written: this runs after every reload, also the one that
     * follows a batch rolled back on a full disk, where a write would fail again */
    int open = 0;
    if (sqlite3_prepare_v2(c->db, "SELECT count(*) FROM steps WHERE end = 0", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        open = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    st = NULL;
    if (!open)
        return 0; /* (or no table yet: no step was ever recorded) */
    if (sqlite3_prepare_v2(c->db, "UPDATE steps SET end = ?1, status = 255 WHERE end = 0", -1,
                           &st, NULL) != SQLITE_OK) {
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
