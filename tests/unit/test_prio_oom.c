/* The priority sort when memory runs out (src/sched/prio.c, queue_sort's fallback to a
 * sort of the list itself): the queue stays in order afterwards. Linked with
 * -Wl,--wrap=realloc (tests/CMakeLists.txt): fail_reallocs fails the next ones. */
#include <stdlib.h>

#include "testutil.h"
#include "sched/sched_internal.h"

void *__real_realloc(void *p, size_t n);
static int fail_reallocs;

void *__wrap_realloc(void *p, size_t n)
{
    if (fail_reallocs > 0) {
        fail_reallocs--;
        return NULL;
    }
    return __real_realloc(p, n);
}

static void submit(sched_t *s, int64_t id)
{
    sched_jobspec_t j = {.id = id, .submit = 0, .user = 1, .type = SCHED_RIGID, .nodes = 1,
                         .walltime = 1000};
    char err[SCHED_ERRLEN] = "";
    if (sched_submit(s, &j, err, sizeof(err)) != 0)
        fail_msg("submit %lld: %s", (long long)id, err);
}

static void pass(sched_t *s, double t)
{
    const sched_action_t *a;
    tu_pass(s, t, &a);
}

/* The fallback sorted the list but left the array of waiting jobs in its old order
 * without saying the two differ: once that old order was right again, the next sort
 * found the array in order and did not relink, and fcfs would start the wrong job (the
 * review of the change). */
static void list_in_order_after_no_memory(void **state)
{
    (void)state;
    sched_t *s = tu_engine(1, "fcfs");
    submit(s, 9);
    pass(s, 0); /* 9 holds the only node */
    submit(s, 1);
    submit(s, 2);
    sched_set_nice(s, 1, 10); /* 1 falls behind 2 */
    fail_reallocs = 1;        /* the sort's keys cannot be allocated */
    pass(s, 1);
    fail_reallocs = 0;
    assert_int_equal(s->qhead->spec.id, 2);
    sched_set_nice(s, 1, 0); /* 1 ahead of 2 again (the lower id) */
    pass(s, 2);
    int64_t ids[2];
    assert_int_equal(sched_pending_order(s, ids, 2), 2);
    assert_int_equal(ids[0], 1);
    assert_int_equal(ids[1], 2);
    sched_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(list_in_order_after_no_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
