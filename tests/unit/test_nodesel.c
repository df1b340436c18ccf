/* Node selection in the engine: jobs restricted to allowed nodes (features, GPUs,
 * memory, --exclude) and holding required ones (--nodelist). The GPU nodes of these
 * clusters are the last two, 6 and 7, of eight. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const int gpu[] = {6, 7};

/* A running rigid job on the given nodes (controller restart), ending by walltime. */
static void restore(sched_t *s, int64_t id, const int *nodes, int n, double walltime)
{
    sched_jobspec_t spec = {.id = id, .type = SCHED_RIGID, .nodes = n, .walltime = walltime};
    char err[SCHED_ERRLEN] = "";
    if (sched_restore_running(s, &spec, 0, nodes, n, err, sizeof(err)) != 0)
        fail_msg("restore %lld: %s", (long long)id, err);
}

static tu_job_t on_gpus(int64_t id, int nodes, double walltime)
{
    return (tu_job_t){.id = id, .submit = id, .type = SCHED_RIGID, .nodes = nodes,
                      .walltime = walltime, .allowed = gpu, .nallowed = 2};
}

static bool has(const sched_action_t *a, int node)
{
    for (int i = 0; i < a->nnodes; i++)
        if (a->nodes[i] == node)
            return true;
    return false;
}

static sched_reason_t reason_of(sched_t *s, int64_t id)
{
    sched_jobinfo_t info;
    assert_int_equal(sched_job_info(s, id, &info), 0);
    return info.reason;
}

/* Six plain nodes free do not start a job that may run on the GPU nodes only; the GPU
 * nodes do, under a strict order and under backfilling alike. */
static void masked_job_waits_for_its_nodes(void **state)
{
    (void)state;
    const char *policies[] = {"fcfs", "easy", "conservative", "egs-pwma", "dmr", "mebf"};
    for (size_t p = 0; p < sizeof(policies) / sizeof(*policies); p++) {
        sched_t *s = tu_engine(8, policies[p]);
        restore(s, 1, &gpu[0], 1, 100);
        tu_submit(s, on_gpus(2, 2, 50));
        const sched_action_t *a;
        size_t n = tu_pass(s, 1, &a);
        assert_null(tu_find(a, n, 2, SCHED_OP_START));
        assert_int_equal(reason_of(s, 2), SCHED_R_RESOURCES);
        assert_int_equal(sched_free_nodes(s), 7);
        assert_int_equal(sched_remove(s, 1), 0);
        n = tu_pass(s, 100, &a);
        const sched_action_t *st = tu_find(a, n, 2, SCHED_OP_START);
        assert_non_null(st);
        assert_int_equal(st->nnodes, 2);
        assert_true(has(st, 6) && has(st, 7));
        sched_destroy(s);
    }
}

/* The required nodes come first in the allocation, the rest from the allowed ones. */
static void required_nodes_in_allocation(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "fcfs");
    const int allowed[] = {1, 3, 5, 7}, required[] = {7};
    tu_submit(s, (tu_job_t){.id = 1, .type = SCHED_RIGID, .nodes = 3, .allowed = allowed,
                            .nallowed = 4, .required = required, .nrequired = 1});
    const sched_action_t *a;
    size_t n = tu_pass(s, 0, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].nnodes, 3);
    assert_int_equal(a[0].nodes[0], 7);
    assert_int_equal(a[0].nodes[1], 1);
    assert_int_equal(a[0].nodes[2], 3);
    sched_destroy(s);
    /* a required node held by another job: the job waits, whatever else is free */
    s = tu_engine(8, "easy");
    restore(s, 1, required, 1, 100);
    tu_submit(s, (tu_job_t){.id = 2, .type = SCHED_RIGID, .nodes = 2, .walltime = 10,
                            .required = required, .nrequired = 1});
    assert_int_equal(tu_pass(s, 0, &a), 0);
    assert_int_equal(tu_state(s, 2), SCHED_PENDING);
    sched_jobinfo_t info;
    assert_int_equal(sched_job_info(s, 2, &info), 0);
    assert_true(fabs(info.reserved_start - 100) < 1e-9);
    sched_destroy(s);
}

static void check_refuses(sched_t *s, tu_job_t j, const char *words)
{
    sched_jobspec_t spec = {.id = j.id, .type = SCHED_RIGID, .nodes = j.nodes,
                            .allowed = j.allowed, .nallowed = j.nallowed,
                            .required = j.required, .nrequired = j.nrequired};
    char err[SCHED_ERRLEN] = "";
    assert_int_equal(sched_check(s, &spec, err, sizeof(err)), -22);
    if (!strstr(err, words))
        fail_msg("'%s' does not say '%s'", err, words);
}

/* Node sets no allocation could satisfy are refused in words; a mask that the nodes up
 * cannot hold leaves the job waiting as NodesUnavailable until they come back. */
static void impossible_masks(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "easy");
    const int one[] = {6}, out[] = {8}, two[] = {6, 7};
    check_refuses(s, (tu_job_t){.id = 1, .nodes = 2, .allowed = one, .nallowed = 1},
                  "needs at least 2 nodes but only 1 match");
    check_refuses(s, (tu_job_t){.id = 1, .nodes = 1, .allowed = out, .nallowed = 1},
                  "node 8 is not a node of the cluster");
    check_refuses(s, (tu_job_t){.id = 1, .nodes = 1, .allowed = one, .nallowed = 1,
                                .required = gpu + 1, .nrequired = 1},
                  "required node 7 is not one the job may use");
    check_refuses(s, (tu_job_t){.id = 1, .nodes = 1, .required = two, .nrequired = 2},
                  "names 2 nodes, more than its 1-node minimum");
    assert_int_equal(sched_set_node_available(s, 7, false), 0);
    tu_submit(s, on_gpus(1, 2, 10));
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 0, &a), 0);
    assert_int_equal(reason_of(s, 1), SCHED_R_NODES_UNAVAILABLE);
    assert_int_equal(sched_set_node_available(s, 7, true), 0);
    assert_int_equal(tu_pass(s, 1, &a), 1);
    sched_destroy(s);
}

/* EASY with a GPU job first in line: a long plain job starts beside it at once (it
 * cannot delay it), a long GPU job does not, a short one does. */
static void easy_masked_head(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "easy");
    restore(s, 1, &gpu[0], 1, 100);
    tu_submit(s, on_gpus(2, 2, 50));
    tu_submit(s, (tu_job_t){.id = 3, .submit = 3, .type = SCHED_RIGID, .nodes = 4,
                            .walltime = 1000});
    tu_submit(s, on_gpus(4, 1, 500));
    tu_submit(s, on_gpus(5, 1, 50));
    const sched_action_t *a;
    size_t n = tu_pass(s, 0, &a);
    const sched_action_t *plain = tu_find(a, n, 3, SCHED_OP_START);
    assert_non_null(plain);
    assert_false(has(plain, 6) || has(plain, 7));
    assert_null(tu_find(a, n, 4, SCHED_OP_START));
    const sched_action_t *shortj = tu_find(a, n, 5, SCHED_OP_START);
    assert_non_null(shortj);
    assert_int_equal(shortj->nodes[0], 7);
    sched_jobinfo_t info;
    assert_int_equal(sched_job_info(s, 2, &info), 0);
    assert_true(fabs(info.reserved_start - 100) < 1e-9);
    sched_destroy(s);
}

/* Conservative: the GPU job that cannot start now holds a reservation when its nodes
 * come back; a plain job starts now, on plain nodes. */
static void conservative_masked(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "conservative");
    restore(s, 1, gpu, 2, 100);
    tu_submit(s, on_gpus(2, 2, 50));
    tu_submit(s, (tu_job_t){.id = 3, .submit = 3, .type = SCHED_RIGID, .nodes = 4,
                            .walltime = 1000});
    const sched_action_t *a;
    size_t n = tu_pass(s, 0, &a);
    assert_int_equal(n, 1);
    assert_int_equal(a[0].job, 3);
    sched_jobinfo_t info;
    assert_int_equal(sched_job_info(s, 2, &info), 0);
    assert_true(fabs(info.reserved_start - 100) < 1e-9);
    assert_int_equal(sched_remove(s, 1), 0);
    n = tu_pass(s, 100, &a);
    const sched_action_t *st = tu_find(a, n, 2, SCHED_OP_START);
    assert_non_null(st);
    assert_true(has(st, 6) && has(st, 7));
    sched_destroy(s);

    /* its nodes come free at 100 and 200: its reservation is at 200, though the counts
     * had two nodes free at once */
    s = tu_engine(8, "conservative");
    restore(s, 1, &gpu[0], 1, 100);
    restore(s, 3, &gpu[1], 1, 200);
    tu_submit(s, on_gpus(2, 2, 50));
    n = tu_pass(s, 0, &a);
    assert_int_equal(n, 0);
    assert_int_equal(sched_job_info(s, 2, &info), 0);
    assert_true(fabs(info.reserved_start - 200) < 1e-9);
    /* --test-only says as much for a job of the same shape */
    sched_jobspec_t probe = {.id = 9, .type = SCHED_RIGID, .nodes = 2, .walltime = 50,
                             .allowed = gpu, .nallowed = 2};
    double start;
    int size;
    char err[SCHED_ERRLEN];
    assert_int_equal(sched_will_run(s, &probe, 0, &start, &size, err, sizeof(err)), 1);
    assert_true(fabs(start - 200) < 1e-9);
    sched_destroy(s);
}

/* A malleable job allowed on half the nodes grows onto those only, under equal shares
 * and under EGS. */
static void malleable_grows_inside_mask(void **state)
{
    (void)state;
    const char *policies[] = {"equi", "egs-prma:max_expand=0", "fpsma-prma:max_expand=0"};
    const int half[] = {4, 5, 6, 7};
    for (size_t p = 0; p < sizeof(policies) / sizeof(*policies); p++) {
        sched_t *s = tu_engine(8, policies[p]);
        tu_submit(s, (tu_job_t){.id = 1, .type = SCHED_MALLEABLE, .nodes = 1, .min = 1,
                                .max = 8, .allowed = half, .nallowed = 4});
        const sched_action_t *a;
        size_t n = tu_pass(s, 0, &a);
        const sched_action_t *st = tu_find(a, n, 1, SCHED_OP_START);
        assert_non_null(st);
        assert_int_equal(st->nodes[0], 4);
        tu_complete(s, a, n);
        int size = 1;
        for (int t = 1; t < 5 && size < 4; t++) {
            n = tu_pass(s, t, &a);
            const sched_action_t *ex = tu_find(a, n, 1, SCHED_OP_EXPAND);
            if (ex)
                for (int i = 0; i < ex->nnodes; i++)
                    assert_true(ex->nodes[i] >= 4);
            tu_complete(s, a, n);
            size = tu_size(s, 1);
        }
        assert_int_equal(size, 4);
        assert_int_equal(sched_free_nodes(s), 4);
        sched_destroy(s);
    }
}

/* A waiting GPU job's free nodes are not grown onto by others (it could never start
 * otherwise), and shrinks that free no GPU node are not made for it. */
static void growth_and_shrinks_around_masked_head(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "equi");
    tu_running(s, 1, 0, 0, 4, 1, 8, SCHED_CONS_NONE, 0);
    restore(s, 2, &gpu[0], 1, 100);
    tu_submit(s, on_gpus(3, 2, 50));
    const sched_action_t *a;
    size_t n = tu_pass(s, 1, &a);
    const sched_action_t *ex = tu_find(a, n, 1, SCHED_OP_EXPAND);
    assert_non_null(ex);
    assert_int_equal(ex->nnodes, 2);
    assert_false(has(ex, 7));
    sched_destroy(s);

    s = tu_engine(8, "fpsma-pwma");
    tu_running(s, 1, 0, 0, 6, 1, 8, SCHED_CONS_NONE, 0);
    restore(s, 2, &gpu[0], 1, 100);
    tu_submit(s, on_gpus(3, 2, 50));
    n = tu_pass(s, 1, &a);
    assert_null(tu_find(a, n, 1, SCHED_OP_SHRINK));
    assert_int_equal(tu_state(s, 3), SCHED_PENDING);
    sched_destroy(s);

    /* allowed on 4-7: shrinking job 1 from 6 to 4 frees 4 and 5, which start it */
    s = tu_engine(8, "fpsma-pwma");
    const int upper[] = {4, 5, 6, 7};
    tu_running(s, 1, 0, 0, 6, 1, 8, SCHED_CONS_NONE, 0);
    restore(s, 2, &gpu[0], 1, 100);
    tu_submit(s, (tu_job_t){.id = 3, .submit = 3, .type = SCHED_RIGID, .nodes = 3,
                            .walltime = 50, .allowed = upper, .nallowed = 4});
    n = tu_pass(s, 1, &a);
    const sched_action_t *sh = tu_find(a, n, 1, SCHED_OP_SHRINK);
    assert_non_null(sh);
    assert_int_equal(sh->nodes_after, 4);
    assert_int_equal(sh->for_job, 3);
    tu_complete(s, a, n);
    n = tu_pass(s, 2, &a);
    const sched_action_t *st = tu_find(a, n, 3, SCHED_OP_START);
    assert_non_null(st);
    assert_true(has(st, 4) && has(st, 5) && has(st, 7));
    sched_destroy(s);
}

/* An operator's resize of a masked job waits for its own nodes, and says how many are
 * free for it. */
static void operator_request_counts_own_nodes(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "fcfs");
    const int half[] = {4, 5, 6, 7};
    tu_submit(s, (tu_job_t){.id = 1, .type = SCHED_MALLEABLE, .nodes = 1, .min = 1, .max = 4,
                            .allowed = half, .nallowed = 4});
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 0, &a), 1);
    restore(s, 2, gpu, 2, 100);
    char err[SCHED_ERRLEN];
    assert_int_equal(sched_request_resize(s, 1, 4, true, err, sizeof(err)), 0);
    size_t n = tu_pass(s, 1, &a);
    assert_null(tu_find(a, n, 1, SCHED_OP_EXPAND));
    sched_jobinfo_t info;
    assert_int_equal(sched_job_info(s, 1, &info), 0);
    assert_int_equal(info.request_wait, SCHED_W_NODES);
    assert_int_equal(info.request_free, 1); /* node 5; 0-3 are free but not its own */
    assert_int_equal(sched_remove(s, 2), 0);
    n = tu_pass(s, 2, &a);
    const sched_action_t *ex = tu_find(a, n, 1, SCHED_OP_EXPAND);
    assert_non_null(ex);
    assert_int_equal(ex->nodes_after, 4);
    sched_destroy(s);
}

/* Node stealing (sfsj) for a masked job that lost a node stops only a job on its nodes:
 * job 3, the first victim by the counts, holds none of them. */
static void stealing_takes_own_nodes(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "sfsj");
    const int seven[] = {7}, zero[] = {0}, mask[] = {4, 5, 7};
    restore(s, 2, seven, 1, 1000);
    sched_jobspec_t a = {.id = 3, .submit = 5, .type = SCHED_RIGID, .nodes = 1, .walltime = 1000};
    char err[SCHED_ERRLEN];
    assert_int_equal(sched_restore_running(s, &a, 5, zero, 1, err, sizeof(err)), 0);
    tu_submit(s, (tu_job_t){.id = 1, .submit = 6, .type = SCHED_RIGID, .nodes = 2,
                            .walltime = 100, .allowed = mask, .nallowed = 3});
    const sched_action_t *acts;
    size_t n = tu_pass(s, 6, &acts);
    const sched_action_t *st = tu_find(acts, n, 1, SCHED_OP_START);
    assert_non_null(st);
    assert_true(has(st, 4) && has(st, 5));
    int64_t job;
    sched_failure_t what;
    assert_int_equal(sched_node_failed(s, 5, &job, &what), 0);
    assert_int_equal(what, SCHED_FAIL_REQUEUED);
    n = tu_pass(s, 10, &acts);
    const sched_action_t *in = tu_find(acts, n, 2, SCHED_OP_INTERRUPT);
    assert_non_null(in);
    assert_int_equal(in->for_job, 1);
    assert_null(tu_find(acts, n, 3, SCHED_OP_INTERRUPT));
    tu_complete(s, acts, n);
    n = tu_pass(s, 11, &acts);
    st = tu_find(acts, n, 1, SCHED_OP_START);
    assert_non_null(st);
    assert_true(has(st, 4) && has(st, 7));
    sched_destroy(s);
}

/* Jobs that name the same nodes share one copy of the set in the engine: it lives as
 * long as one of them (ASan sees a use after free), in whatever order they were given. */
static void shared_sets(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "fcfs");
    const int again[] = {7, 6, 7};
    restore(s, 9, gpu, 2, 100); /* the GPU nodes busy: the three wait */
    tu_submit(s, on_gpus(1, 2, 10));
    tu_submit(s, on_gpus(2, 2, 10));
    tu_submit(s, (tu_job_t){.id = 3, .submit = 3, .type = SCHED_RIGID, .nodes = 1,
                            .walltime = 10, .allowed = again, .nallowed = 3});
    assert_int_equal(sched_remove(s, 1), 0);
    assert_int_equal(sched_remove(s, 9), 0);
    const sched_action_t *a;
    size_t n = tu_pass(s, 1, &a);
    const sched_action_t *st = tu_find(a, n, 2, SCHED_OP_START);
    assert_non_null(st);
    assert_true(has(st, 6) && has(st, 7));
    assert_int_equal(sched_remove(s, 2), 0);
    n = tu_pass(s, 2, &a);
    st = tu_find(a, n, 3, SCHED_OP_START);
    assert_non_null(st);
    assert_int_equal(st->nodes[0], 6);
    sched_destroy(s);
}

/* A job that loses a required node does not run on without it. */
static void required_node_failure_requeues(void **state)
{
    (void)state;
    sched_t *s = tu_engine(8, "fcfs");
    const int req[] = {2, 5};
    tu_submit(s, (tu_job_t){.id = 1, .type = SCHED_MALLEABLE, .nodes = 3, .min = 2, .max = 3,
                            .required = req, .nrequired = 2});
    const sched_action_t *a;
    assert_int_equal(tu_pass(s, 0, &a), 1);
    assert_int_equal(a[0].nodes[0], 2);
    assert_int_equal(a[0].nodes[1], 5);
    assert_int_equal(a[0].nodes[2], 0);
    int64_t job;
    assert_int_equal(sched_failure_outcome(s, 0, &job), SCHED_FAIL_SHRUNK);
    assert_int_equal(sched_failure_outcome(s, 5, &job), SCHED_FAIL_REQUEUED);
    sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(masked_job_waits_for_its_nodes),
        cmocka_unit_test(required_nodes_in_allocation),
        cmocka_unit_test(impossible_masks),
        cmocka_unit_test(easy_masked_head),
        cmocka_unit_test(conservative_masked),
        cmocka_unit_test(malleable_grows_inside_mask),
        cmocka_unit_test(growth_and_shrinks_around_masked_head),
        cmocka_unit_test(required_node_failure_requeues),
        cmocka_unit_test(operator_request_counts_own_nodes),
        cmocka_unit_test(stealing_takes_own_nodes),
        cmocka_unit_test(shared_sets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
