/* Measured I/O intensity (docs/policies.md, "io-aware"): the node daemon's parser of
 * cgroup v2 io.pressure and its sum over a job's cgroups (src/noded/nodepower.c), the
 * controller's checks of what a ping reports, its per-job time-weighted mean, and the
 * database column io_measured with the upgrade to version 5 and the history lookup
 * (src/ctld/iomeas.c, db.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctld.h"
#include "noded/nodepower.h"
#include "testutil.h"

/* ---- the node daemon: io.pressure ------------------------------------------------- */

static void pressure_parse(void **state)
{
    (void)state;
    uint64_t v = 7;
    assert_int_equal(nodepower_io_pressure_parse(
                         "some avg10=0.00 avg60=0.00 avg300=0.00 total=61118244\n"
                         "full avg10=0.00 avg60=0.00 avg300=0.00 total=21653647\n", &v), 0);
    assert_int_equal(v, 61118244);
    /* "full" first, no final newline, large counter */
    assert_int_equal(nodepower_io_pressure_parse(
                         "full avg10=1.00 avg60=0.50 avg300=0.10 total=5\n"
                         "some avg10=12.50 avg60=3.10 avg300=0.70 total=18446744073709", &v), 0);
    assert_int_equal(v, 18446744073709ull);
    assert_int_equal(nodepower_io_pressure_parse("some total=0\n", &v), 0);
    assert_int_equal(v, 0);
    /* malformed: an error, v untouched */
    v = 42;
    const char *bad[] = {
        "",
        "\n\n",
        "full avg10=0.00 avg60=0.00 avg300=0.00 total=5\n",        /* no some line */
        "some avg10=0.00 avg60=0.00 avg300=0.00\n",                 /* no total */
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=\n",          /* empty */
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=-5\n",        /* negative */
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=12x4\n",      /* junk */
        "some avg10=0.00 total=99999999999999999999999999\n",       /* overflow */
        "some avg10=0.00 xtotal=5\n",                               /* not the field */
        "somewhere total=5\n",
        "\xff\xfe garbage \x01",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (nodepower_io_pressure_parse(bad[i], &v) != -EINVAL)
            fail_msg("accepted %zu: '%s'", i, bad[i]);
    assert_int_equal(v, 42);
    assert_int_equal(nodepower_io_pressure_parse(NULL, &v), -EINVAL);
}

/* job_12 and job_12_<tag> count for job 12, job_123 does not; a malformed file counts
 * for nothing, a job with only malformed files has none */
static void pressure_cgroups(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    tu_put(dir, "job_12/io.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1000\n"
                                   "full avg10=0.00 avg60=0.00 avg300=0.00 total=800\n");
    tu_put(dir, "job_12_step3/io.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=500\n"
                                         "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
    tu_put(dir, "job_12_step4/io.pressure", "garbage\n");
    tu_put(dir, "job_123/io.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=99999\n");
    tu_put(dir, "job_9/io.pressure", "some avg10=0.00 total=oops\n");
    tu_put(dir, "job_8/cpu.stat", "usage_usec 5\n");
    uint64_t u = 0;
    assert_int_equal(nodepower_cgroup_io_stall(dir, "job_12", &u), 0);
    assert_int_equal(u, 1500);
    assert_int_equal(nodepower_cgroup_io_stall(dir, "job_9", &u), -ENOENT);
    assert_int_equal(nodepower_cgroup_io_stall(dir, "job_8", &u), -ENOENT);
    assert_int_equal(nodepower_cgroup_io_stall(dir, "job_7", &u), -ENOENT);
    assert_int_equal(nodepower_cgroup_io_stall("/nonexistent", "job_12", &u), -ENOENT);
    tu_rmtree(dir);
    free(dir);
}

static void share(void **state)
{
    (void)state;
    assert_true(fabs(nodepower_io_share(1000000, 1500000, 2.0) - 0.25) < 1e-9);
    assert_true(nodepower_io_share(0, 0, 1.0) == 0);
    assert_true(nodepower_io_share(0, 5000000, 1.0) == 1); /* several cgroups: clamped */
    assert_true(nodepower_io_share(500, 400, 1.0) < 0);    /* a cgroup went away */
    assert_true(nodepower_io_share(0, 10, 0) < 0);
    assert_true(nodepower_io_share(0, 10, -1) < 0);
    assert_true(nodepower_io_share(0, 10, NAN) < 0);
}

/* ---- the controller -------------------------------------------------------------- */

static void entries(void **state)
{
    (void)state;
    int64_t id;
    double s, t;
    json_t *ok = json_pack("{s:I,s:f,s:f}", "job", (json_int_t)12, "share", 0.25, "secs", 1.0);
    assert_int_equal(iomeas_entry(ok, &id, &s, &t), 0);
    assert_int_equal(id, 12);
    assert_true(s == 0.25 && t == 1.0);
    json_decref(ok);
    const char *bad[] = {
        "5", "null", "[]", "{}",
        "{\"job\":12,\"share\":0.2}",
        "{\"job\":\"12\",\"share\":0.2,\"secs\":1}",
        "{\"job\":12,\"share\":\"0.2\",\"secs\":1}",
        "{\"job\":12,\"share\":1.5,\"secs\":1}",
        "{\"job\":12,\"share\":-0.1,\"secs\":1}",
        "{\"job\":12,\"share\":0.2,\"secs\":0}",
        "{\"job\":12,\"share\":0.2,\"secs\":-3}",
        "{\"job\":12,\"share\":0.2,\"secs\":1e9}",
        "{\"job\":0,\"share\":0.2,\"secs\":1}",
        "{\"job\":-4,\"share\":0.2,\"secs\":1}",
        "{\"job\":1.5,\"share\":0.2,\"secs\":1}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *e = json_loads(bad[i], JSON_DECODE_ANY, NULL);
        assert_non_null(e);
        if (iomeas_entry(e, &id, &s, &t) != -EINVAL)
            fail_msg("accepted %s", bad[i]);
        json_decref(e);
    }
    assert_int_equal(iomeas_entry(NULL, &id, &s, &t), -EINVAL);
}

/* two nodes, 1 s reports: node A 0.5 for 4 s, node B 0.1 for 4 s, then A 1.0 for 2 s:
 * (2 + 0.4 + 2) / 10 = 0.44; its end keeps it, a requeue forgets it */
static void mean(void **state)
{
    (void)state;
    job_t *j = job_new();
    assert_true(iomeas_mean(j) == 0);
    for (int i = 0; i < 4; i++) {
        iomeas_add(j, 0.5, 1);
        iomeas_add(j, 0.1, 1);
    }
    iomeas_add(j, 1.0, 2);
    iomeas_add(j, 7, 1);     /* out of range: ignored */
    iomeas_add(j, 0.5, 0);   /* no time: ignored */
    iomeas_add(j, NAN, 1);
    iomeas_add(j, 0.5, NAN);
    assert_true(fabs(iomeas_mean(j) - 0.44) < 1e-9);
    iomeas_settle(j, false); /* requeued: the next run afresh */
    assert_true(iomeas_mean(j) == 0 && j->io_measured == 0);
    iomeas_add(j, 0.3, 5);
    iomeas_settle(j, true);
    assert_true(fabs(j->io_measured - 0.3) < 1e-9);
    assert_true(j->io_secs == 0);
    iomeas_settle(j, true); /* nothing more reported: the measurement stays */
    assert_true(fabs(j->io_measured - 0.3) < 1e-9);
    job_free(j);
}

typedef struct fixture {
    char *dir;
    char path[256];
    config_t cfg;
} fixture_t;

static void free_job(int64_t id, void *val, void *arg)
{
    (void)id;
    (void)arg;
    job_free(val);
}

static void keep(ctld_t *c, job_t *j) { idmap_put(c->jobs, j->id, j); }

static void open_ctld(fixture_t *f, ctld_t *c)
{
    char err[1024];
    memset(c, 0, sizeof(*c));
    c->cfg = f->cfg;
    nodes_init(c);
    c->jobs = idmap_create();
    c->placed = idmap_create();
    assert_int_equal(sched_create(c->nnodes, "easy", &c->sched, err, sizeof(err)), 0);
    int rc = db_open(c, f->path, 0, err, sizeof(err));
    if (rc == 0)
        rc = db_load(c, keep, err, sizeof(err));
    if (rc != 0)
        fail_msg("open: %d (%s)", rc, err);
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
    char text[256], err[256];
    snprintf(text, sizeof(text), "Nodes = n[1-4]\nStateDir = %s\n", f->dir);
    assert_int_equal(config_parse_string(text, "/etc/ductile/ductile.conf", &f->cfg, err,
                                         sizeof(err)), 0);
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

static job_t *new_job(ctld_t *c, const char *user, const char *name, int nodes)
{
    job_t *j = job_new();
    j->name = strdup(name);
    j->user = strdup(user);
    j->script = strdup("#!/bin/sh\n");
    j->cwd = strdup("/");
    j->env = json_array();
    j->nodes = nodes;
    assert_int_equal(db_job_insert(c, j), 0);
    return j;
}

/* a finished run of user/name/size with measured intensity io, ended at end */
static int64_t finished(ctld_t *c, const char *user, const char *name, int nodes, jstate_t st,
                        double io, double end)
{
    job_t *j = new_job(c, user, name, nodes);
    j->state = st;
    j->start = end - 10;
    j->end = end;
    iomeas_add(j, io, 10);
    iomeas_settle(j, true);
    assert_int_equal(db_job_save(c, j), 0);
    int64_t id = j->id;
    job_free(j);
    return id;
}

/* The history: the most recent finished (CD, TO) run of the same user, name and size
 * with a measurement; a declared value wins; none: nothing known. Saved and reloaded. */
static void history(void **state)
{
    fixture_t *f = *state;
    ctld_t c;
    open_ctld(f, &c);
    double io = -1;
    assert_int_equal(db_io_history(&c, "alice", "dd", 1, &io), 0);
    finished(&c, "alice", "dd", 1, JS_COMPLETED, 0.2, 1e9);
    int64_t last = finished(&c, "alice", "dd", 1, JS_TIMEOUT, 0.35, 1e9 + 100);
    finished(&c, "alice", "dd", 1, JS_FAILED, 0.9, 1e9 + 200);    /* failed: not counted */
    finished(&c, "alice", "dd", 1, JS_COMPLETED, 0, 1e9 + 300);   /* nothing measured */
    finished(&c, "alice", "dd", 2, JS_COMPLETED, 0.7, 1e9 + 400); /* another size */
    finished(&c, "bob", "dd", 1, JS_COMPLETED, 0.8, 1e9 + 500);   /* another user */
    assert_int_equal(db_commit(&c), 0);
    assert_int_equal(db_io_history(&c, "alice", "dd", 1, &io), 1);
    assert_true(fabs(io - 0.35) < 1e-9);
    assert_int_equal(db_io_history(&c, "alice", "dd", 3, &io), 0);
    assert_int_equal(db_io_history(&c, "alice", "other", 1, &io), 0);

    job_t *j = new_job(&c, "alice", "dd", 1);
    iomeas_resolve(&c, j, false, 0);
    assert_true(fabs(j->io_intensity - 0.35) < 1e-9);
    assert_string_equal(j->io_from, "measured");
    iomeas_resolve(&c, j, true, 0.05); /* declared wins */
    assert_true(j->io_intensity == 0.05);
    assert_string_equal(j->io_from, "declared");
    iomeas_resolve(&c, j, true, 0); /* declared 0 too */
    assert_true(j->io_intensity == 0);
    assert_string_equal(j->io_from, "declared");
    job_free(j);
    j = new_job(&c, "carol", "dd", 1);
    iomeas_resolve(&c, j, false, 0);
    assert_true(j->io_intensity == 0);
    assert_string_equal(j->io_from, "");
    job_free(j);
    /* a pending job planned with a measured intensity (resolved before its insert, as
     * a submission is): kept across a restart */
    j = job_new();
    j->name = strdup("dd");
    j->user = strdup("alice");
    j->script = strdup("#!/bin/sh\n");
    j->cwd = strdup("/");
    j->env = json_array();
    j->nodes = 1;
    iomeas_resolve(&c, j, false, 0);
    assert_int_equal(db_job_insert(&c, j), 0);
    int64_t pend = j->id;
    job_free(j);
    assert_int_equal(db_commit(&c), 0);
    close_ctld(&c);
    open_ctld(f, &c);
    job_t *k = db_job_find_finished(&c, last);
    assert_non_null(k);
    assert_true(fabs(k->io_measured - 0.35) < 1e-9);
    job_free(k);
    k = idmap_get(c.jobs, pend);
    assert_non_null(k);
    assert_string_equal(k->io_from, "measured");
    assert_true(fabs(k->io_intensity - 0.35) < 1e-9);
    close_ctld(&c);
    /* a damaged value is named, not loaded */
    char q[128];
    snprintf(q, sizeof(q), "UPDATE jobs SET io_measured = 3 WHERE id = %lld", (long long)last);
    tu_sql(f->path, q);
    open_ctld(f, &c);
    assert_null(db_job_find_finished(&c, last));
    close_ctld(&c);
}

/* A version-4 database has neither column: the upgrade adds them, its jobs load with
 * nothing measured, and the history finds none there. */
static void upgrade_from_4(void **state)
{
    fixture_t *f = *state;
    ctld_t c;
    open_ctld(f, &c);
    int64_t old = finished(&c, "alice", "dd", 1, JS_COMPLETED, 0.5, 1e9);
    assert_int_equal(db_commit(&c), 0);
    close_ctld(&c);
    tu_sql(f->path, "DROP INDEX jobs_io_past; ALTER TABLE jobs DROP COLUMN io_measured;"
                  " ALTER TABLE jobs DROP COLUMN io_from; PRAGMA user_version = 4");
    open_ctld(f, &c); /* the upgrade */
    job_t *j = db_job_find_finished(&c, old);
    assert_non_null(j);
    assert_true(j->io_measured == 0);
    assert_string_equal(j->io_from, "");
    job_free(j);
    double io;
    assert_int_equal(db_io_history(&c, "alice", "dd", 1, &io), 0);
    int64_t id = finished(&c, "alice", "dd", 1, JS_COMPLETED, 0.25, 1e9 + 10);
    assert_int_equal(db_commit(&c), 0);
    assert_int_equal(db_io_history(&c, "alice", "dd", 1, &io), 1);
    assert_true(fabs(io - 0.25) < 1e-9);
    assert_true(id > old);
    close_ctld(&c);
    tu_sql(f->path, "SELECT io_measured, io_from FROM jobs");
}

/* What a ping reports: for a running job on that node only; anything else ignored. */
static void pings(void **state)
{
    fixture_t *f = *state;
    ctld_t c;
    open_ctld(f, &c);
    job_t *j = new_job(&c, "alice", "dd", 2);
    j->state = JS_RUNNING;
    j->alloc = malloc(2 * sizeof(int));
    j->alloc[0] = 0;
    j->alloc[1] = 2;
    j->nalloc = 2;
    idmap_put(c.jobs, j->id, j);
    job_t *p = new_job(&c, "alice", "dd", 1); /* pending: nothing counts */
    idmap_put(c.jobs, p->id, p);
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"type\":\"ping\",\"io\":[{\"job\":%lld,\"share\":0.6,\"secs\":1},"
             "{\"job\":%lld,\"share\":0.9,\"secs\":1},{\"job\":99999,\"share\":0.5,\"secs\":1},"
             "{\"job\":%lld,\"share\":2,\"secs\":1},{\"job\":%lld,\"share\":0.5},7,null,"
             "\"x\",{\"job\":%lld,\"share\":0.5,\"secs\":1e300}]}",
             (long long)j->id, (long long)p->id, (long long)j->id, (long long)j->id,
             (long long)j->id);
    json_t *m = json_loads(text, 0, NULL);
    assert_non_null(m);
    iomeas_on_ping(&c, &c.nodes[0], m);
    iomeas_on_ping(&c, &c.nodes[1], m); /* not its node */
    json_decref(m);
    snprintf(text, sizeof(text), "{\"io\":[{\"job\":%lld,\"share\":0.2,\"secs\":1}]}",
             (long long)j->id);
    m = json_loads(text, 0, NULL);
    iomeas_on_ping(&c, &c.nodes[2], m);
    json_decref(m);
    assert_true(fabs(iomeas_mean(j) - 0.4) < 1e-9); /* (0.6 + 0.2) / 2 */
    assert_true(p->io_secs == 0);
    /* not an array, or no "io" at all */
    const char *odd[] = {"{\"io\":5}", "{\"io\":{}}", "{\"io\":null}", "{}"};
    for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
        m = json_loads(odd[i], 0, NULL);
        iomeas_on_ping(&c, &c.nodes[0], m);
        json_decref(m);
    }
    assert_true(fabs(iomeas_mean(j) - 0.4) < 1e-9);
    close_ctld(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pressure_parse),
        cmocka_unit_test(pressure_cgroups),
        cmocka_unit_test(share),
        cmocka_unit_test(entries),
        cmocka_unit_test(mean),
        cmocka_unit_test_setup_teardown(history, setup, teardown),
        cmocka_unit_test_setup_teardown(upgrade_from_4, setup, teardown),
        cmocka_unit_test_setup_teardown(pings, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
