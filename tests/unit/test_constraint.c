/* Node-count constraints (seed 000 §4.2 / §5.8, seed 002 §7.1). */
#include "testutil.h"

#include "sched/constraint.h"

static void valid_sets(void **state)
{
    (void)state;
    int pof2[] = {1, 2, 4, 8, 16, 32}, k = 0;
    for (int n = 1; n <= 32; n++)
        if (cons_valid(n, SCHED_CONS_POF2))
            assert_int_equal(n, pof2[k++]);
    assert_int_equal(k, 6);
    int cube[] = {1, 8, 27, 64};
    k = 0;
    for (int n = 1; n <= 64; n++)
        if (cons_valid(n, SCHED_CONS_NCUBE))
            assert_int_equal(n, cube[k++]);
    assert_int_equal(k, 4);
    /* C1: moldable min 16, max 36, square -> 16, 25, 36 */
    int sq[] = {16, 25, 36};
    k = 0;
    for (int n = 16; n <= 36; n++)
        if (cons_valid(n, SCHED_CONS_SQUARE))
            assert_int_equal(n, sq[k++]);
    assert_int_equal(k, 3);
    assert_true(cons_valid(7, SCHED_CONS_ODD));
    assert_false(cons_valid(8, SCHED_CONS_ODD));
    assert_true(cons_valid(8, SCHED_CONS_EVEN));
    assert_false(cons_valid(0, SCHED_CONS_NONE));
    assert_true(cons_valid(1000000, SCHED_CONS_SQUARE));
    assert_true(cons_valid(1000000, SCHED_CONS_NCUBE));
    assert_false(cons_valid(999999, SCHED_CONS_NCUBE));
}

static void bounded_search(void **state)
{
    (void)state;
    /* seed 000: pof2, 2 nodes + 10 idle -> 8 */
    assert_int_equal(cons_largest_leq(12, SCHED_CONS_POF2, 3, 16), 8);
    /* largest even <= 9 within [4, 20] */
    assert_int_equal(cons_largest_leq(9, SCHED_CONS_EVEN, 4, 20), 8);
    /* nothing valid in range */
    assert_int_equal(cons_largest_leq(3, SCHED_CONS_EVEN, 3, 3), 0);
    assert_int_equal(cons_largest_leq(5, SCHED_CONS_NONE, 6, 10), 0);
    /* the hi bound wins over x */
    assert_int_equal(cons_largest_leq(100, SCHED_CONS_ODD, 1, 10), 9);
    assert_int_equal(cons_smallest_geq(5, SCHED_CONS_POF2, 1, 64), 8);
    assert_int_equal(cons_smallest_geq(5, SCHED_CONS_POF2, 1, 7), 0);
    assert_int_equal(cons_smallest_geq(2, SCHED_CONS_NCUBE, 1, 100), 8);
    assert_int_equal(cons_smallest_geq(0, SCHED_CONS_ODD, 4, 100), 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid_sets),
        cmocka_unit_test(bounded_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
