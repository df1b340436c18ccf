/* The controller's view of which nodes a job holds, and of which node messages are
 * about the job's current run (issue 7: defects 1 and 7). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "ctld.h"

static job_t *job_on(const int *nodes, int n)
{
    job_t *j = job_new();
    assert_non_null(j);
    /* exactly n entries: ASan sees any read past them */
    j->alloc = malloc((size_t)n * sizeof(int));
    assert_non_null(j->alloc);
    for (int i = 0; i < n; i++)
        j->alloc[i] = nodes[i];
    j->nalloc = n;
    j->state = JS_RUNNING;
    j->run = 1;
    return j;
}

/* A shrink's leaving nodes are among the committed ones: nothing past them is read. */
static void test_shrink_reads_only_committed(void **state)
{
    (void)state;
    int nodes[] = {3, 7};
    job_t *j = job_on(nodes, 2);
    j->state = JS_RESIZING;
    j->resize_target = 1;
    j->resize_nodes = malloc(sizeof(int));
    j->resize_nodes[0] = 7;
    j->nresize = 1;
    assert_true(job_has_node(j, 3));
    assert_true(job_has_node(j, 7));
    assert_false(job_has_node(j, 9)); /* scans every entry: past them under the bug */
    job_free(j);
}

/* An expand's joining nodes follow the committed ones and belong to the job. */
static void test_expand_includes_joining(void **state)
{
    (void)state;
    int nodes[] = {1, 2, 5};
    job_t *j = job_on(nodes, 3);
    j->nalloc = 1; /* committed size; 2 and 5 are joining */
    j->state = JS_RESIZING;
    j->resize_target = 3;
    j->resize_nodes = malloc(2 * sizeof(int));
    j->resize_nodes[0] = 2;
    j->resize_nodes[1] = 5;
    j->nresize = 2;
    assert_true(job_has_node(j, 5));
    assert_false(job_has_node(j, 4));
    j->state = JS_RUNNING; /* withdrawn: only the committed node */
    assert_false(job_has_node(j, 5));
    job_free(j);
}

/* Only the current run's messages from one of its nodes are current. */
static void test_msg_current(void **state)
{
    (void)state;
    ctld_t c = {0};
    c.jobs = idmap_create();
    c.placed = idmap_create();
    int nodes[] = {0, 1};
    job_t *j = job_on(nodes, 2);
    j->id = 42;
    j->run = 2;
    idmap_put(c.jobs, 42, j);
    node_t n0 = {.index = 0}, n1 = {.index = 1}, n2 = {.index = 2};
    assert_ptr_equal(jobs_msg_current(&c, 42, 2, &n0), j);
    assert_ptr_equal(jobs_msg_current(&c, 42, 2, &n1), j);
    assert_null(jobs_msg_current(&c, 42, 1, &n0));  /* the earlier run */
    assert_null(jobs_msg_current(&c, 42, 0, &n0));  /* no run named */
    assert_null(jobs_msg_current(&c, 42, 2, &n2));  /* not the job's node */
    assert_null(jobs_msg_current(&c, 43, 2, &n0));  /* no such job */
    j->state = JS_PENDING;                          /* requeued: no run is current */
    assert_null(jobs_msg_current(&c, 42, 2, &n0));
    idmap_destroy(c.jobs);
    idmap_destroy(c.placed);
    job_free(j);
}

/* A node with a stale run to end takes no new work; when it registers again without
 * that run (its confirmation was lost with its connection), it is usable again, and a
 * stale run it still reports keeps it out. */
static void test_stale_runs_cleared_by_registration(void **state)
{
    (void)state;
    ctld_t c = {0};
    char *names[] = {"n1", "n2"};
    char err[256];
    c.cfg.nodes = names;
    c.cfg.nnodes = 2;
    c.stopping = true; /* no event loop here: no scheduling pass is armed */
    c.jobs = idmap_create();
    c.placed = idmap_create();
    nodes_init(&c);
    assert_int_equal(sched_create(c.nnodes, "easy", &c.sched, err, sizeof(err)), 0);
    node_t *n = &c.nodes[0];
    static char fake_conn; /* never written to: the commands stay deferred */
    n->state = NS_UP;
    n->conn = (conn_t *)&fake_conn;
    assert_true(node_usable(n));
    nodes_end_stale(&c, n, 5, 1);
    assert_false(node_usable(n));
    json_t *none = json_array();
    nodes_reconcile(&c, n, none); /* registered again: no longer has job 5 */
    assert_true(node_usable(n));
    json_t *still = json_pack("[{s:i,s:i,s:s}]", "job", 5, "run", 1, "state", "running");
    nodes_reconcile(&c, n, still); /* still has it: ended again, kept out meanwhile */
    assert_false(node_usable(n));
    json_decref(none);
    json_decref(still);
    ctld_forget_conn(&c, n->conn);
    ctld_flush_deferred(&c); /* frees the commands held for the fake connection */
    n->conn = NULL;
    assert_false(node_usable(n)); /* its daemon is away: no new work */
    sched_destroy(c.sched);
    nodes_free(&c);
    idmap_destroy(c.jobs);
    idmap_destroy(c.placed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shrink_reads_only_committed),
        cmocka_unit_test(test_expand_includes_joining),
        cmocka_unit_test(test_msg_current),
        cmocka_unit_test(test_stale_runs_cleared_by_registration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
