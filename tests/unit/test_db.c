/* The controller's database (src/ctld/db.c) against a temporary file: the upgrade of
 * version-0 allocations (node indices) to node names, names of nodes no longer
 * configured, and the ids that never go backwards. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld.h"
#include "testutil.h"

typedef struct fixture {
    char *dir;
    char path[256];
    config_t cfg;
} fixture_t;

static void conf(fixture_t *f, const char *nodes)
{
    char text[256], err[256];
    config_free(&f->cfg);
    snprintf(text, sizeof(text), "Nodes = %s\nStateDir = %s\n", nodes, f->dir);
    assert_int_equal(config_parse_string(text, "/etc/ductile/ductile.conf", &f->cfg, err,
                                         sizeof(err)), 0);
}

static void free_job(int64_t id, void *val, void *arg)
{
    (void)id;
    (void)arg;
    job_free(val);
}

static void keep(ctld_t *c, job_t *j) { idmap_put(c->jobs, j->id, j); }

static void open_ctld(fixture_t *f, ctld_t *c, unsigned flags, int expect)
{
    char err[1024];
    memset(c, 0, sizeof(*c));
    c->cfg = f->cfg;
    nodes_init(c);
    c->jobs = idmap_create();
    c->placed = idmap_create();
    assert_int_equal(sched_create(c->nnodes, "easy", &c->sched, err, sizeof(err)), 0);
    int rc = db_open(c, f->path, flags, err, sizeof(err));
    if (rc == 0)
        rc = db_load(c, keep, err, sizeof(err));
    if (rc != expect)
        fail_msg("open: %d (%s), expected %d", rc, err, expect);
}

static void close_ctld(ctld_t *c)
{
    db_close(c);
    idmap_foreach(c->jobs, free_job, NULL);
    idmap_destroy(c->jobs);
    idmap_destroy(c->placed);
    sched_destroy(c->sched);
    nodes_free(c);
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    f->dir = tu_tmpdir();
    snprintf(f->path, sizeof(f->path), "%s/ductile.db", f->dir);
    conf(f, "n[1-4]");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    config_free(&f->cfg);
    tu_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static job_t *new_job(int nodes)
{
    job_t *j = job_new();
    j->name = strdup("j");
    j->user = strdup("alice");
    j->script = strdup("#!/bin/sh\n");
    j->cwd = strdup("/");
    j->env = json_array();
    j->nodes = nodes;
    return j;
}

static int64_t add_job(ctld_t *c, jstate_t st, const int *alloc, int n)
{
    job_t *j = new_job(n ? n : 1);
    assert_int_equal(db_job_insert(c, j), 0);
    if (n) {
        j->alloc = malloc((size_t)n * sizeof(int));
        memcpy(j->alloc, alloc, (size_t)n * sizeof(int));
        j->nalloc = n;
    }
    j->state = st;
    j->start = j->end = 1e9;
    assert_int_equal(db_job_save(c, j), 0);
    int64_t id = j->id;
    job_free(j);
    return id;
}

/* A finished job of a version-0 database ran on indices 0 and 3: the upgrade names
 * them with the configuration of that start; once Nodes loses n4, the job still
 * shows n1 and n4, with the note, and nodes_format never reads past Nodes. */
static void upgrade_and_removed_nodes(void **state)
{
    fixture_t *f = *state;
    ctld_t c;
    open_ctld(f, &c, 0, 0);
    int64_t id = add_job(&c, JS_COMPLETED, (const int[]){0, 3}, 2);
    assert_int_equal(db_commit(&c), 0);
    close_ctld(&c);
    tu_sql(f->path, "UPDATE jobs SET alloc = '[0,3]'; UPDATE job_events SET alloc = '[0,3]';"
                  " PRAGMA user_version = 0");
    open_ctld(f, &c, 0, 0); /* the upgrade */
    close_ctld(&c);
    conf(f, "n[1-2]");
    open_ctld(f, &c, 0, 0);
    job_t *j = db_job_find_finished(&c, id);
    assert_non_null(j);
    char *nl = nodes_format(&c, j->alloc, j->nalloc);
    assert_string_equal(nl, "n[1,4] (n4 not in the configuration)");
    free(nl);
    job_free(j);
    /* indices that nothing names: a placeholder, never a read past a table */
    bool configured;
    assert_string_equal(ctld_node_name(&c, 1000, &configured), "?");
    assert_false(configured);
    assert_string_equal(ctld_node_name(&c, -1, &configured), "?");
    close_ctld(&c);
}

/* Job ids continue after the highest ever given, even when the table lost them. */
static void ids_never_go_back(void **state)
{
    fixture_t *f = *state;
    ctld_t c;
    open_ctld(f, &c, 0, 0);
    int64_t last = 0;
    for (int i = 0; i < 5; i++)
        last = add_job(&c, JS_PENDING, NULL, 0);
    assert_int_equal(db_commit(&c), 0);
    close_ctld(&c);
    /* the rows and SQLite's own sequence vanish (as with a lost WAL); the batch number
     * is kept so that the start is not refused for being behind */
    tu_sql(f->path, "DROP TRIGGER jobs_live_del; DELETE FROM jobs; DELETE FROM sqlite_sequence;"
                  " UPDATE meta SET value = 0 WHERE key = 'live'");
    open_ctld(f, &c, 0, 0);
    int64_t next = add_job(&c, JS_PENDING, NULL, 0);
    assert_true(next > last);
    assert_int_equal(db_commit(&c), 0);
    close_ctld(&c);
}

/* A batch whose write failed is rolled back whole, and the next one commits. */
static void failed_batch_rolls_back(void **state)
{
    fixture_t *f = *state;
    ctld_t c;
    open_ctld(f, &c, 0, 0);
    int64_t a = add_job(&c, JS_PENDING, NULL, 0);
    assert_int_equal(db_commit(&c), 0);
    int64_t b = add_job(&c, JS_PENDING, NULL, 0);
    /* a write that fails inside the batch (the table it writes is gone) */
    assert_int_equal(sqlite3_exec(c.db, "DROP TABLE nodes", NULL, NULL, NULL), SQLITE_OK);
    node_t n = {.name = "n1"};
    assert_int_equal(db_node_save(&c, &n), -EIO);
    assert_int_equal(db_commit(&c), -EIO);
    assert_true(db_degraded(&c));
    assert_non_null(strstr(db_error(&c), "cannot save: "));
    job_t *j = db_job_find_finished(&c, b);
    assert_null(j); /* rolled back with the rest of its batch */
    j = db_job_find_finished(&c, a);
    assert_non_null(j);
    job_free(j);
    int64_t d = add_job(&c, JS_PENDING, NULL, 0);
    assert_true(d > b); /* the id of the rolled-back job is not given again */
    assert_int_equal(db_commit(&c), 0);
    assert_false(db_degraded(&c));
    close_ctld(&c);
}

/* A version-1 database has no power columns: the upgrade adds them, its jobs load
 * with no energy; a job's energy saved by the sampler (db_job_energy) is what a
 * restart finds, and so is the history's estimate of its draw per node. */
static void power_columns_and_energy(void **state)
{
    fixture_t *f = *state;
    ctld_t c;
    open_ctld(f, &c, 0, 0);
    int64_t old = add_job(&c, JS_COMPLETED, (const int[]){0}, 1);
    assert_int_equal(db_commit(&c), 0);
    close_ctld(&c);
    tu_sql(f->path, "DROP INDEX jobs_power_past; ALTER TABLE jobs DROP COLUMN ckpt;"
                  " ALTER TABLE jobs DROP COLUMN energy; ALTER TABLE jobs DROP COLUMN power_from;"
                  " ALTER TABLE jobs DROP COLUMN power_max; ALTER TABLE jobs DROP COLUMN power_min;"
                  " PRAGMA user_version = 1");
    open_ctld(f, &c, 0, 0); /* the upgrade */
    job_t *j = db_job_find_finished(&c, old);
    assert_non_null(j);
    assert_true(j->energy == 0 && j->power_max == 0);
    job_free(j);
    int64_t id = add_job(&c, JS_COMPLETED, (const int[]){1}, 1);
    assert_int_equal(db_job_energy(&c, id, 12345.5), 0);
    assert_int_equal(db_power_sampled_put(&c, 1.7e9), 0);
    assert_int_equal(db_commit(&c), 0);
    close_ctld(&c);
    open_ctld(f, &c, 0, 0);
    j = db_job_find_finished(&c, id);
    assert_non_null(j);
    assert_true(j->energy == 12345.5);
    job_free(j);
    assert_true(db_power_sampled(&c) == 1.7e9);
    /* 12345.5 J over no node-seconds: no estimate from it */
    double lo = -1, hi = -1;
    assert_int_equal(db_power_history(&c, "alice", "j", 1, &lo, &hi), 0);
    close_ctld(&c);
    char q[96];
    snprintf(q, sizeof(q), "UPDATE jobs SET node_seconds = 50 WHERE id = %lld", (long long)id);
    tu_sql(f->path, q);
    open_ctld(f, &c, 0, 0);
    assert_int_equal(db_power_history(&c, "alice", "j", 1, &lo, &hi), 1);
    assert_true(lo == 12345.5 / 50 && hi == lo);
    assert_int_equal(db_power_history(&c, "bob", "j", 1, &lo, &hi), 0);
    assert_int_equal(db_power_history(&c, "alice", "j", 2, &lo, &hi), 0);
    close_ctld(&c);
}

/* A database of an older version (the SQL that makes it so: a column dropped, the
 * version set) with one finished job, opened again: the upgrade. Returns the job, as
 * the upgraded database loads it (the caller frees it). */
static job_t *upgraded_job(fixture_t *f, ctld_t *c, const char *older)
{
    open_ctld(f, c, 0, 0);
    int64_t old = add_job(c, JS_COMPLETED, (const int[]){0}, 1);
    assert_int_equal(db_commit(c), 0);
    close_ctld(c);
    tu_sql(f->path, older);
    open_ctld(f, c, 0, 0); /* the upgrade */
    job_t *j = db_job_find_finished(c, old);
    assert_non_null(j);
    return j;
}

/* A damaged value of a finished job's column (SQL "SET ..."): the job is not loaded
 * half, it is not found. */
static void damaged_is_not_found(fixture_t *f, ctld_t *c, int64_t id, const char *set)
{
    char q[128];
    snprintf(q, sizeof(q), "UPDATE jobs SET %s WHERE id = %lld", set, (long long)id);
    tu_sql(f->path, q);
    open_ctld(f, c, 0, 0);
    assert_null(db_job_find_finished(c, id));
    close_ctld(c);
}

/* A version-2 database has no checkpoint agents: the upgrade adds the column, its jobs
 * load without agents; a job's agents, their nodes and key are what a restart finds. */
static void checkpoint_agents_column(void **state)
{
    fixture_t *f = *state;
    ctld_t c;
    job_t *j = upgraded_job(f, &c, "ALTER TABLE jobs DROP COLUMN ckpt; PRAGMA user_version = 2");
    assert_false(j->ck_want);
    assert_null(j->ck_agents);
    job_free(j);
    int64_t id = add_job(&c, JS_COMPLETED, (const int[]){1}, 1);
    j = db_job_find_finished(&c, id);
    assert_non_null(j);
    j->ck_want = true;
    j->ck_agents = strdup("10.0.0.9:7001,10.0.0.9:7002");
    j->ck_where = strdup("n1,n1");
    j->ck_slots = strdup("0,3"); /* slot 3: added at a resize */
    j->ck_nretire = 1;           /* and one that left it at a shrink, still running */
    j->ck_rnode[0] = 0;
    j->ck_rslot[0] = 2;
    snprintf(j->ck_key, sizeof(j->ck_key), "%064d", 7);
    j->ck_node_s = 12.5;
    j->ck_acct_at = 1795000000.25;
    assert_int_equal(db_job_save(&c, j), 0);
    job_free(j);
    assert_int_equal(db_commit(&c), 0);
    close_ctld(&c);
    open_ctld(f, &c, 0, 0);
    j = db_job_find_finished(&c, id);
    assert_non_null(j);
    assert_true(j->ck_want);
    assert_string_equal(j->ck_agents, "10.0.0.9:7001,10.0.0.9:7002");
    assert_string_equal(j->ck_where, "n1,n1");
    assert_string_equal(j->ck_slots, "0,3");
    assert_int_equal(j->ck_nretire, 1);
    assert_int_equal(j->ck_rnode[0], 0);
    assert_int_equal(j->ck_rslot[0], 2);
    assert_int_equal(strlen(j->ck_key), 64);
    assert_true(j->ck_node_s == 12.5); /* the checkpoint node-seconds counted */
    assert_true(j->ck_acct_at == 1795000000.25);
    job_free(j);
    close_ctld(&c);
    /* a value that does not decode is named, not loaded half */
    damaged_is_not_found(f, &c, id, "ckpt = '{\"agents\":5}'");
}

/* Inserts j (freed) as a finished job, commits, reopens the database and returns the
 * job as a restart finds it (c open; *id its id). */
static job_t *kept_across_restart(fixture_t *f, ctld_t *c, job_t *j, int64_t *id)
{
    assert_int_equal(db_job_insert(c, j), 0);
    j->state = JS_COMPLETED;
    assert_int_equal(db_job_save(c, j), 0);
    *id = j->id;
    job_free(j);
    assert_int_equal(db_commit(c), 0);
    close_ctld(c);
    open_ctld(f, c, 0, 0);
    j = db_job_find_finished(c, *id);
    assert_non_null(j);
    return j;
}

/* A job's script arguments (schema 8): an upgraded database has none for its old jobs;
 * a job keeps them across a restart; a value that is not an array of strings is a
 * damaged row. */
static void script_arguments_column(void **state)
{
    fixture_t *f = *state;
    ctld_t c;
    job_t *j = upgraded_job(f, &c, "ALTER TABLE jobs DROP COLUMN args; PRAGMA user_version = 7");
    assert_null(j->args);
    job_free(j);
    j = new_job(1);
    json_t *want = json_pack("[s,s,s]", "x  y", "-N", "");
    j->args = json_deep_copy(want);
    int64_t id;
    j = kept_across_restart(f, &c, j, &id);
    assert_true(json_equal(j->args, want));
    json_decref(want);
    job_free(j);
    close_ctld(&c);
    damaged_is_not_found(f, &c, id, "args = '[1]'");
}

/* Schema 13: a job keeps its submitter's umask across a restart; an upgraded
 * database's jobs have none (-1: the node daemon's), and a damaged one is not loaded. */
static void umask_column(void **state)
{
    fixture_t *f = *state;
    ctld_t c;
    job_t *j = upgraded_job(f, &c, "ALTER TABLE jobs DROP COLUMN umask; PRAGMA user_version = 12");
    assert_int_equal(j->umask, -1);
    job_free(j);
    j = new_job(1);
    j->umask = 077;
    int64_t id;
    j = kept_across_restart(f, &c, j, &id);
    assert_int_equal(j->umask, 077);
    job_free(j);
    close_ctld(&c);
    damaged_is_not_found(f, &c, id, "umask = 4096");
}

/* Pages of the database a call reads (SQLite's page cache: hits and misses). */
static int pages_read(ctld_t *c, bool reset)
{
    int hit = 0, miss = 0, hw;
    sqlite3_db_status(c->db, SQLITE_DBSTATUS_CACHE_HIT, &hit, &hw, reset);
    sqlite3_db_status(c->db, SQLITE_DBSTATUS_CACHE_MISS, &miss, &hw, reset);
    return hit + miss;
}

/* A submission looks up its power and I/O in the finished runs of its user, name and
 * size: what that reads must not grow with the jobs of that name in the queue (it read
 * every one of them, script and environment included, through jobs_user_name: 2,000
 * queued jobs of one name made every submission read thousands of pages). */
static void history_ignores_the_queue(void **state)
{
    fixture_t *f = *state;
    ctld_t c;
    open_ctld(f, &c, 0, 0);
    int64_t done = add_job(&c, JS_COMPLETED, (const int[]){0}, 1);
    assert_int_equal(db_job_energy(&c, done, 1000), 0);
    assert_int_equal(db_commit(&c), 0);
    char q[128];
    snprintf(q, sizeof(q), "UPDATE jobs SET node_seconds = 10, io_measured = 0.25 WHERE id = %lld",
             (long long)done);
    close_ctld(&c);
    tu_sql(f->path, q);
    open_ctld(f, &c, 0, 0);
    char *big = malloc(8192); /* a script longer than a page, as real ones often are */
    memset(big, '#', 8191);
    big[8191] = '\0';
    for (int k = 0; k < 500; k++) {
        job_t *j = job_new();
        j->name = strdup("j");
        j->user = strdup("alice");
        j->script = strdup(big);
        j->cwd = strdup("/");
        j->env = json_array();
        j->nodes = 1;
        assert_int_equal(db_job_insert(&c, j), 0);
        job_free(j);
    }
    free(big);
    assert_int_equal(db_commit(&c), 0);
    double lo = -1, hi = -1, io = -1;
    pages_read(&c, true);
    assert_int_equal(db_power_history(&c, "alice", "j", 1, &lo, &hi), 1);
    assert_int_equal(db_io_history(&c, "alice", "j", 1, &io), 1);
    int pages = pages_read(&c, true);
    assert_true(lo == 100 && hi == 100 && io == 0.25); /* the finished run, still found */
    if (pages > 40)
        fail_msg("the history lookups read %d pages for 500 queued jobs of the name", pages);
    close_ctld(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(upgrade_and_removed_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown(ids_never_go_back, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_batch_rolls_back, setup, teardown),
        cmocka_unit_test_setup_teardown(power_columns_and_energy, setup, teardown),
        cmocka_unit_test_setup_teardown(checkpoint_agents_column, setup, teardown),
        cmocka_unit_test_setup_teardown(history_ignores_the_queue, setup, teardown),
        cmocka_unit_test_setup_teardown(umask_column, setup, teardown),
        cmocka_unit_test_setup_teardown(script_arguments_column, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
