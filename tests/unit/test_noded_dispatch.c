/* The node daemon's message dispatch (noded_dispatch) on a daemon with no controller
 * connection: bad, unknown and hostile messages are dropped, never a crash. Run under
 * ASan (build-asan) these catch memory errors; tests/fuzz/fuzz_noded.c explores the
 * same entry point at random. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "noded/noded.h"

static noded_t *daemon_new(void)
{
    static noded_t d;
    static char name[] = "n1";
    memset(&d, 0, sizeof(d));
    d.name = name;
    d.cfg.cluster_name = name;
    d.cfg.max_script_size = 1 << 16;
    d.loop = uv_default_loop();
    d.jobs = idmap_create();
    /* a spool that does not exist: nothing a message says can be run */
    snprintf(d.spool, sizeof(d.spool), "/nonexistent/ductile-unit/spool");
    return &d;
}

static void dispatch(noded_t *d, const char *text)
{
    json_error_t e;
    json_t *m = json_loads(text, 0, &e);
    assert_non_null(m);
    noded_dispatch(d, m);
    json_decref(m);
    uv_run(d->loop, UV_RUN_NOWAIT);
}

/* A step for a job this node does not run is refused with a line on the client's
 * stderr; building that line overflowed its buffer by the "ductile run: " prefix
 * (heap-buffer-overflow under ASan, found by fuzz_noded). */
static void step_for_unknown_job(void **state)
{
    (void)state;
    noded_t *d = daemon_new();
    dispatch(d, "{\"type\":\"step_start\",\"job\":5,\"step\":1,\"rank\":0,\"cwd\":\"/\","
                "\"argv\":[\"/bin/true\"]}");
    assert_null(d->tasks);
    idmap_destroy(d->jobs);
}

static void garbage_is_dropped(void **state)
{
    (void)state;
    noded_t *d = daemon_new();
    const char *msgs[] = {
        "{}",
        "{\"type\":7}",
        "{\"type\":\"no_such_type\"}",
        "{\"ok\":false}",
        "{\"ok\":false,\"error\":3}",
        "{\"type\":\"step_credit\",\"job\":1,\"step\":1,\"rank\":0,\"offset\":-5}",
        "{\"type\":\"step_credit\",\"job\":1,\"step\":1,\"rank\":0,\"offset\":99}",
        "{\"type\":\"step_kill\",\"job\":\"x\"}",
        "{\"type\":\"step_start\",\"job\":1,\"step\":70000,\"rank\":0}",
        "{\"type\":\"job_cleanup\",\"job\":0}",
        "{\"type\":\"job_ended_ack\"}",
        "{\"type\":\"resize_offer\",\"job\":3}",
        "{\"type\":\"resize_withdraw\",\"job\":-1}",
        "{\"type\":\"registered\"}",
        "{\"type\":\"job_resized\"}",
        "{\"type\":\"job_resized\",\"job\":3,\"nodelist\":\"n[1-2]\"}",
    };
    for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++)
        dispatch(d, msgs[i]);
    assert_null(d->tasks);
    assert_int_equal(idmap_count(d->jobs), 0);
    idmap_destroy(d->jobs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(step_for_unknown_job),
        cmocka_unit_test(garbage_is_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
