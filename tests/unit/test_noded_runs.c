/* The node daemon's run records (runs.c): what one incarnation writes, the next reads
 * back, for every kind of run, so that a daemon restarted after kill -9 adopts them.
 * A record of a run tracked without a cgroup once held "cgroup": null, which the reader
 * refused: the record was dropped and the run was not adopted. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "noded/noded.h"

static char spool[] = "/tmp/ductile-runs-XXXXXX";

static noded_t *daemon_new(void)
{
    static noded_t d;
    static char name[] = "n1";
    memset(&d, 0, sizeof(d));
    d.name = name;
    d.cfg.cluster_name = name;
    d.loop = uv_default_loop();
    d.jobs = idmap_create();
    snprintf(d.spool, sizeof(d.spool), "%s", spool);
    return &d;
}

/* A job's other node (no process of its own): recorded, read back, adopted. */
static void record_without_cgroup_is_adopted(void **state)
{
    (void)state;
    assert_non_null(mkdtemp(spool));
    noded_t *d = daemon_new();
    njob_t j = {.d = d, .id = 42, .run = 3, .batch = false, .uid = 1000};
    assert_int_equal(runs_record(d, &j), 0);
    idmap_destroy(d->jobs);

    d = daemon_new(); /* the next incarnation */
    runs_recover(d);
    njob_t *a = jobs_find(d, 42);
    assert_non_null(a);
    assert_int_equal(a->run, 3);
    assert_false(a->batch);
    assert_true(a->adopted);
    json_t *rep = jobs_report(d);
    assert_int_equal(json_array_size(rep), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(rep, 0), "run")), 3);
    json_decref(rep);
    /* release the adopted job by hand: there is no controller to end it */
    uv_close((uv_handle_t *)&a->wall, NULL);
    uv_close((uv_handle_t *)&a->kill, NULL);
    uv_run(d->loop, UV_RUN_NOWAIT);
    idmap_del(d->jobs, 42);
    free(a);
    idmap_destroy(d->jobs);
    runs_forget(d, 42);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", spool);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(record_without_cgroup_is_adopted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
