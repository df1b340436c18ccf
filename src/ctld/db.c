/* The controller's durable state in SQLite (WAL, synchronous=FULL).
 *
 * Group commit: every change made while handling the events of one loop iteration
 * goes into one transaction, committed at the end of the iteration; the replies and
 * node commands that depend on those changes are held until the commit returns. So an
 * acknowledged submission is on disk, and a thousand submissions arriving together
 * cost one fsync, not a thousand. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld.h"

#define FAIL(...) (snprintf(err, errlen, __VA_ARGS__), -EIO)

static const char *schema =
    "CREATE TABLE IF NOT EXISTS jobs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, user TEXT, uid INTEGER, gid INTEGER,"
    " state TEXT, final TEXT, type TEXT, nodes INTEGER, min_nodes INTEGER, max_nodes INTEGER,"
    " constraint_ TEXT, time_limit REAL, requeue INTEGER, script TEXT, cwd TEXT, env TEXT,"
    " out_path TEXT, err_path TEXT, submit REAL, start REAL, end_ REAL, exit_code INTEGER,"
    " signal INTEGER, restarts INTEGER, alloc TEXT, node_seconds REAL, alloc_since REAL,"
    " reason TEXT, launched INTEGER);"
    "CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);"
    "CREATE INDEX IF NOT EXISTS jobs_end ON jobs(end_);"
    "CREATE TABLE IF NOT EXISTS job_events (job INTEGER, time REAL, event TEXT,"
    " nodes_before INTEGER, nodes_after INTEGER, alloc TEXT, detail TEXT);"
    "CREATE INDEX IF NOT EXISTS job_events_job ON job_events(job);"
    "CREATE TABLE IF NOT EXISTS nodes (name TEXT PRIMARY KEY, drain INTEGER, reason TEXT);";

enum { ST_INSERT, ST_SAVE, ST_EVENT, ST_NODE, ST__N };
static const char *const sql[ST__N] = {
    [ST_INSERT] = "INSERT INTO jobs (name, user, uid, gid, state, final, type, nodes,"
                  " min_nodes, max_nodes, constraint_, time_limit, requeue, script, cwd, env,"
                  " out_path, err_path, submit, start, end_, exit_code, signal, restarts, alloc,"
                  " node_seconds, alloc_since, reason, launched) VALUES (?1, ?2, ?3, ?4, ?5, ?6,"
                  " ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,"
                  " ?23, ?24, ?25, ?26, ?27, ?28, ?30)",
    [ST_SAVE] = "UPDATE jobs SET state = ?5, final = ?6, start = ?20, end_ = ?21,"
                " exit_code = ?22, signal = ?23, restarts = ?24, alloc = ?25,"
                " node_seconds = ?26, alloc_since = ?27, reason = ?28, launched = ?30"
                " WHERE id = ?29",
    [ST_EVENT] = "INSERT INTO job_events VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [ST_NODE] = "INSERT OR REPLACE INTO nodes VALUES (?1, ?2, ?3)",
};
static sqlite3_stmt *stmts[ST__N];

int db_open(ctld_t *c, const char *path, char *err, size_t errlen)
{
    if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
        return FAIL("cannot open the database %s: %s", path, sqlite3_errmsg(c->db));
    sqlite3_busy_timeout(c->db, 5000);
    char *msg = NULL;
    if (sqlite3_exec(c->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", NULL, NULL, &msg) ||
        sqlite3_exec(c->db, schema, NULL, NULL, &msg)) {
        snprintf(err, errlen, "database %s: %s", path, msg ? msg : "error");
        sqlite3_free(msg);
        return -EIO;
    }
    for (int i = 0; i < ST__N; i++)
        if (sqlite3_prepare_v3(c->db, sql[i], -1, SQLITE_PREPARE_PERSISTENT, &stmts[i], NULL))
            return FAIL("database: %s", sqlite3_errmsg(c->db));
    return 0;
}

void db_close(ctld_t *c)
{
    if (c->in_batch)
        db_commit(c);
    for (int i = 0; i < ST__N; i++) {
        sqlite3_finalize(stmts[i]);
        stmts[i] = NULL;
    }
    sqlite3_close(c->db);
    c->db = NULL;
}

int db_write_begin(ctld_t *c)
{
    if (c->in_batch)
        return 0;
    if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(stderr, "ductiled: database: %s\n", sqlite3_errmsg(c->db));
        return -EIO;
    }
    c->in_batch = true;
    return 0;
}

int db_commit(ctld_t *c)
{
    if (!c->in_batch)
        return 0;
    c->in_batch = false;
    if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        /* Nothing acknowledged may be lost: without a working disk, stop. */
        fprintf(stderr, "ductiled: database commit failed: %s\n", sqlite3_errmsg(c->db));
        exit(1);
    }
    return 0;
}

static char *alloc_json(const int *nodes, int n)
{
    size_t cap = 3 + (size_t)n * 12, pos = 0; /* "[", the numbers, "]", NUL */
    char *s = malloc(cap);
    if (!s)
        return NULL;
    s[pos++] = '[';
    for (int i = 0; i < n; i++)
        pos += (size_t)snprintf(s + pos, cap - pos, i ? ",%d" : "%d", nodes[i]);
    s[pos++] = ']';
    s[pos] = '\0';
    return s;
}

static int bind_job(sqlite3_stmt *st, const job_t *j, char **alloc, char **env)
{
    *alloc = alloc_json(j->alloc, j->nalloc);
    *env = j->env ? json_dumps(j->env, JSON_COMPACT) : NULL;
    sqlite3_bind_text(st, 1, j->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, j->user, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, j->uid);
    sqlite3_bind_int64(st, 4, j->gid);
    sqlite3_bind_text(st, 5, jstate_code(j->state), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, jstate_code(j->final), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, sched_type_name(j->type), -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 8, j->nodes);
    sqlite3_bind_int(st, 9, j->min_nodes);
    sqlite3_bind_int(st, 10, j->max_nodes);
    sqlite3_bind_text(st, 11, sched_constraint_name(j->constraint), -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 12, j->time_limit);
    sqlite3_bind_int(st, 13, j->requeue);
    sqlite3_bind_text(st, 14, j->script, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 15, j->cwd, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 16, *env, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 17, j->out_path, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 18, j->err_path, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 19, j->submit);
    sqlite3_bind_double(st, 20, j->start);
    sqlite3_bind_double(st, 21, j->end);
    sqlite3_bind_int(st, 22, j->exit_code);
    sqlite3_bind_int(st, 23, j->signal);
    sqlite3_bind_int(st, 24, j->restarts);
    sqlite3_bind_text(st, 25, *alloc, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 26, j->node_seconds);
    sqlite3_bind_double(st, 27, j->alloc_since);
    sqlite3_bind_text(st, 28, j->reason, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 30, j->launched);
    return 0;
}

static int run(sqlite3_stmt *st, ctld_t *c)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE) {
        fprintf(stderr, "ductiled: database: %s\n", sqlite3_errmsg(c->db));
        return -EIO;
    }
    return 0;
}

int db_job_insert(ctld_t *c, job_t *j)
{
    if (db_write_begin(c) < 0)
        return -EIO;
    char *alloc, *env;
    bind_job(stmts[ST_INSERT], j, &alloc, &env);
    int rc = run(stmts[ST_INSERT], c);
    free(alloc);
    free(env);
    if (rc == 0)
        j->id = sqlite3_last_insert_rowid(c->db);
    return rc;
}

int db_job_save(ctld_t *c, const job_t *j)
{
    if (db_write_begin(c) < 0)
        return -EIO;
    char *alloc, *env;
    bind_job(stmts[ST_SAVE], j, &alloc, &env);
    sqlite3_bind_int64(stmts[ST_SAVE], 29, j->id);
    int rc = run(stmts[ST_SAVE], c);
    free(alloc);
    free(env);
    return rc;
}

int db_job_event(ctld_t *c, int64_t job, double t, const char *event, int before, int after,
                 const int *nodes, int n, const char *detail)
{
    if (db_write_begin(c) < 0)
        return -EIO;
    sqlite3_stmt *st = stmts[ST_EVENT];
    char *alloc = alloc_json(nodes, n);
    sqlite3_bind_int64(st, 1, job);
    sqlite3_bind_double(st, 2, t);
    sqlite3_bind_text(st, 3, event, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, before);
    sqlite3_bind_int(st, 5, after);
    sqlite3_bind_text(st, 6, alloc, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, detail, -1, SQLITE_STATIC);
    int rc = run(st, c);
    free(alloc);
    return rc;
}

int db_node_save(ctld_t *c, const node_t *n)
{
    if (db_write_begin(c) < 0)
        return -EIO;
    sqlite3_stmt *st = stmts[ST_NODE];
    sqlite3_bind_text(st, 1, n->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, n->drain);
    sqlite3_bind_text(st, 3, n->reason, -1, SQLITE_STATIC);
    return run(st, c);
}

static char *col_str(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? strdup((const char *)t) : NULL;
}

/* Rebuilds a job from a row of "SELECT * FROM jobs". */
static job_t *row_job(sqlite3_stmt *st)
{
    job_t *j = job_new();
    if (!j)
        return NULL;
    j->id = sqlite3_column_int64(st, 0);
    j->name = col_str(st, 1);
    j->user = col_str(st, 2);
    j->uid = (uid_t)sqlite3_column_int64(st, 3);
    j->gid = (gid_t)sqlite3_column_int64(st, 4);
    const char *s = (const char *)sqlite3_column_text(st, 5);
    jstate_parse(s ? s : "PD", &j->state);
    s = (const char *)sqlite3_column_text(st, 6);
    jstate_parse(s ? s : "PD", &j->final);
    s = (const char *)sqlite3_column_text(st, 7);
    sched_type_parse(s ? s : "rigid", &j->type);
    j->nodes = sqlite3_column_int(st, 8);
    j->min_nodes = sqlite3_column_int(st, 9);
    j->max_nodes = sqlite3_column_int(st, 10);
    s = (const char *)sqlite3_column_text(st, 11);
    sched_constraint_parse(s ? s : "none", &j->constraint);
    j->time_limit = sqlite3_column_double(st, 12);
    j->requeue = sqlite3_column_int(st, 13);
    j->script = col_str(st, 14);
    j->cwd = col_str(st, 15);
    s = (const char *)sqlite3_column_text(st, 16);
    j->env = s ? json_loads(s, 0, NULL) : json_array();
    j->out_path = col_str(st, 17);
    j->err_path = col_str(st, 18);
    j->submit = sqlite3_column_double(st, 19);
    j->start = sqlite3_column_double(st, 20);
    j->end = sqlite3_column_double(st, 21);
    j->exit_code = sqlite3_column_int(st, 22);
    j->signal = sqlite3_column_int(st, 23);
    j->restarts = sqlite3_column_int(st, 24);
    s = (const char *)sqlite3_column_text(st, 25);
    json_t *a = s ? json_loads(s, 0, NULL) : NULL;
    if (json_is_array(a) && json_array_size(a)) {
        j->alloc = malloc(json_array_size(a) * sizeof(int));
        size_t i;
        json_t *v;
        json_array_foreach(a, i, v) j->alloc[j->nalloc++] = (int)json_integer_value(v);
    }
    json_decref(a);
    j->node_seconds = sqlite3_column_double(st, 26);
    j->alloc_since = sqlite3_column_double(st, 27);
    s = (const char *)sqlite3_column_text(st, 28);
    snprintf(j->reason, sizeof(j->reason), "%s", s ? s : "");
    j->launched = sqlite3_column_int(st, 29);
    return j;
}

int db_load(ctld_t *c, void (*fn)(ctld_t *c, job_t *j), char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, "SELECT * FROM jobs WHERE state IN ('PD','R','RS','CG') ORDER BY id",
                           -1, &st, NULL))
        return FAIL("database: %s", sqlite3_errmsg(c->db));
    while (sqlite3_step(st) == SQLITE_ROW) {
        job_t *j = row_job(st);
        if (j)
            fn(c, j);
    }
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(c->db, "SELECT name, drain, reason FROM nodes", -1, &st, NULL))
        return FAIL("database: %s", sqlite3_errmsg(c->db));
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        int i = name ? config_node_index(&c->cfg, name) : -1;
        if (i < 0)
            continue; /* a node no longer in the configuration */
        c->nodes[i].drain = sqlite3_column_int(st, 1);
        const char *r = (const char *)sqlite3_column_text(st, 2);
        snprintf(c->nodes[i].reason, sizeof(c->nodes[i].reason), "%s", r ? r : "");
    }
    sqlite3_finalize(st);
    return 0;
}

job_t *db_job_find_finished(ctld_t *c, int64_t id)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, "SELECT * FROM jobs WHERE id = ?1", -1, &st, NULL))
        return NULL;
    sqlite3_bind_int64(st, 1, id);
    job_t *j = sqlite3_step(st) == SQLITE_ROW ? row_job(st) : NULL;
    sqlite3_finalize(st);
    return j;
}

int db_history(ctld_t *c, const char *user, const char *state, double since, int limit,
               json_t *out, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    /* the last column: the job's sizes in order, "1>4>2" (start, then each resize) */
    const char *q = "SELECT *, (SELECT group_concat(nodes_after, '>') FROM job_events e"
                    " WHERE e.job = jobs.id AND e.event IN ('start','expand','shrink'))"
                    " FROM jobs WHERE state IN ('CD','F','CA','TO','NF')"
                    " AND (?1 IS NULL OR user = ?1) AND (?2 IS NULL OR state = ?2)"
                    " AND end_ >= ?3 ORDER BY end_ DESC, id DESC LIMIT ?4";
    if (sqlite3_prepare_v2(c->db, q, -1, &st, NULL))
        return FAIL("database: %s", sqlite3_errmsg(c->db));
    sqlite3_bind_text(st, 1, user, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, state, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 3, since);
    sqlite3_bind_int(st, 4, limit);
    while (sqlite3_step(st) == SQLITE_ROW) {
        job_t *j = row_job(st);
        if (!j)
            continue;
        json_t *o = job_to_json(c, j, false);
        const char *sizes = (const char *)sqlite3_column_text(st, sqlite3_column_count(st) - 1);
        json_object_set_new(o, "sizes", json_string(sizes ? sizes : ""));
        json_array_append_new(out, o);
        job_free(j);
    }
    sqlite3_finalize(st);
    return 0;
}

int db_job_events(ctld_t *c, int64_t job, json_t *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, "SELECT time, event, nodes_before, nodes_after, detail"
                                  " FROM job_events WHERE job = ?1 ORDER BY rowid", -1, &st, NULL))
        return -EIO;
    sqlite3_bind_int64(st, 1, job);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *d = (const char *)sqlite3_column_text(st, 4);
        json_array_append_new(out, json_pack("{s:f,s:s,s:i,s:i,s:s}", "time",
                                             sqlite3_column_double(st, 0), "event",
                                             (const char *)sqlite3_column_text(st, 1), "before",
                                             sqlite3_column_int(st, 2), "after",
                                             sqlite3_column_int(st, 3), "detail", d ? d : ""));
    }
    sqlite3_finalize(st);
    return 0;
}

/* --- Submission keys ---------------------------------------------------------------
 * A client whose connection broke after its job was committed cannot tell whether it
 * was; it retries with the same key, and the key's row, committed in the same
 * transaction as the job, gives back the first job's id. Keys are per user (uid is
 * part of the primary key): guessing another user's key makes a new job, never
 * reveals theirs. The table is created on first use, so these functions need nothing
 * from db_open; rows older than a week are pruned as new ones come (a retry comes
 * within seconds or minutes). */
#define KEY_TTL (7 * 86400.0)

static int key_table(ctld_t *c)
{
    return sqlite3_exec(c->db,
                        "CREATE TABLE IF NOT EXISTS submit_keys (uid INTEGER NOT NULL,"
                        " key TEXT NOT NULL, job INTEGER NOT NULL, time REAL NOT NULL,"
                        " PRIMARY KEY (uid, key));"
                        "CREATE INDEX IF NOT EXISTS submit_keys_time ON submit_keys(time);",
                        NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

int db_submit_key_find(ctld_t *c, uid_t uid, const char *key, int64_t *job)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(c->db, "SELECT job FROM submit_keys WHERE uid = ?1 AND key = ?2",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) {
        /* no table yet: no key was ever stored */
        if (strstr(sqlite3_errmsg(c->db), "no such table"))
            return 0;
        fprintf(stderr, "ductiled: database: %s\n", sqlite3_errmsg(c->db));
        return -EIO;
    }
    sqlite3_bind_int64(st, 1, uid);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    int found = rc == SQLITE_ROW;
    if (found)
        *job = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (!found && rc != SQLITE_DONE)
        return -EIO;
    return found;
}

int db_submit_key_put(ctld_t *c, uid_t uid, const char *key, int64_t job, double now)
{
    if (db_write_begin(c) < 0 || key_table(c) < 0)
        return -EIO;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, "INSERT INTO submit_keys VALUES (?1, ?2, ?3, ?4)", -1, &st,
                           NULL) != SQLITE_OK) {
        fprintf(stderr, "ductiled: database: %s\n", sqlite3_errmsg(c->db));
        return -EIO;
    }
    sqlite3_bind_int64(st, 1, uid);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, job);
    sqlite3_bind_double(st, 4, now);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
    if (rc < 0)
        fprintf(stderr, "ductiled: database: %s\n", sqlite3_errmsg(c->db));
    sqlite3_finalize(st);
    if (rc == 0 && sqlite3_prepare_v2(c->db, "DELETE FROM submit_keys WHERE time < ?1", -1, &st,
                                      NULL) == SQLITE_OK) {
        sqlite3_bind_double(st, 1, now - KEY_TTL);
        sqlite3_step(st);
        sqlite3_finalize(st);
    }
    return rc;
}
