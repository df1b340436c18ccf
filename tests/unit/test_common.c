/* nodeset, idmap and rng: the small libraries under src/common. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "common/b64.h"
#include "common/idmap.h"
#include "common/nodeset.h"
#include "common/rng.h"

static void nodeset_basics(void **state)
{
    (void)state;
    nodeset_t *ns = nodeset_create(130);
    assert_non_null(ns);
    assert_int_equal(nodeset_count(ns), 0);
    assert_int_equal(nodeset_next(ns, 0), -1);
    nodeset_set(ns, 0);
    nodeset_set(ns, 64);
    nodeset_set(ns, 129);
    nodeset_set(ns, 130); /* out of range: ignored */
    assert_int_equal(nodeset_count(ns), 3);
    assert_int_equal(nodeset_next(ns, 1), 64);
    assert_int_equal(nodeset_next(ns, 65), 129);
    assert_int_equal(nodeset_next(ns, 130), -1);
    nodeset_set_all(ns);
    assert_int_equal(nodeset_count(ns), 130);
    nodeset_clear(ns, 5);
    assert_false(nodeset_test(ns, 5));
    assert_int_equal(nodeset_count(ns), 129);
    nodeset_destroy(ns);
}

static void nodeset_ranges(void **state)
{
    (void)state;
    nodeset_t *ns = nodeset_create(16);
    char err[128], buf[64];
    assert_int_equal(nodeset_parse(ns, "0-3,7,9-10", err, sizeof(err)), 0);
    assert_int_equal(nodeset_count(ns), 7);
    nodeset_format(ns, buf, sizeof(buf));
    assert_string_equal(buf, "0-3,7,9-10");
    /* Truncation is reported through the return value. */
    assert_int_equal(nodeset_format(ns, buf, 4), strlen("0-3,7,9-10"));
    assert_string_equal(buf, "0-3");
    assert_int_equal(nodeset_parse(ns, "3-1", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "3-1"));
    assert_int_equal(nodeset_parse(ns, "16", err, sizeof(err)), -1);
    assert_int_equal(nodeset_parse(ns, "1,,2", err, sizeof(err)), -1);
    assert_int_equal(nodeset_parse(ns, "x", err, sizeof(err)), -1);
    int ids[] = {7, 3, 2, 4, 4, 10, 0};
    nodeset_format_ids(ids, 7, buf, sizeof(buf));
    assert_string_equal(buf, "0,2-4,7,10");
    nodeset_format_ids(ids, 0, buf, sizeof(buf));
    assert_string_equal(buf, "");
    nodeset_destroy(ns);
}

/* take_lowest across words, with partly filled words on the way. */
static void nodeset_take_across_words(void **state)
{
    (void)state;
    nodeset_t *ns = nodeset_create(300);
    int want[] = {3, 5, 64, 65, 66, 67, 130, 200, 201, 299};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        nodeset_set(ns, want[i]);
    int out[16];
    assert_int_equal(nodeset_take_lowest(ns, 7, out), 7);
    for (int i = 0; i < 7; i++)
        assert_int_equal(out[i], want[i]);
    assert_int_equal(nodeset_count(ns), 3);
    assert_int_equal(nodeset_next(ns, 0), 200);
    /* more than is there: takes what exists */
    assert_int_equal(nodeset_take_lowest(ns, 10, out), 3);
    assert_int_equal(out[2], 299);
    assert_int_equal(nodeset_count(ns), 0);
    /* whole words, then a partial one; then giving back */
    nodeset_set_all(ns);
    int big[300];
    assert_int_equal(nodeset_take_lowest(ns, 150, big), 150);
    for (int i = 0; i < 150; i++)
        assert_int_equal(big[i], i);
    assert_int_equal(nodeset_next(ns, 0), 150);
    assert_int_equal(nodeset_set_ids(ns, NULL, big + 100, 50), 50);
    assert_int_equal(nodeset_set_ids(ns, NULL, big + 100, 50), 0); /* already set */
    assert_int_equal(nodeset_next(ns, 0), 100);
    nodeset_t *mask = nodeset_create(300);
    nodeset_set(mask, 7);
    int ids[] = {7, 8, 9};
    assert_int_equal(nodeset_set_ids(ns, mask, ids, 3), 1);
    assert_true(nodeset_test(ns, 7) && !nodeset_test(ns, 8));
    nodeset_destroy(mask);
    nodeset_destroy(ns);
}

static void idmap_many(void **state)
{
    (void)state;
    idmap_t *m = idmap_create();
    static int vals[20000];
    for (int i = 0; i < 20000; i++)
        assert_int_equal(idmap_put(m, (int64_t)i * 7919, &vals[i]), 0);
    assert_int_equal(idmap_put(m, 7919, &vals[0]), -1); /* duplicate */
    assert_int_equal(idmap_count(m), 20000);
    /* Delete every other key; the rest must stay reachable (backward shift). */
    for (int i = 0; i < 20000; i += 2)
        assert_ptr_equal(idmap_del(m, (int64_t)i * 7919), &vals[i]);
    for (int i = 0; i < 20000; i++)
        assert_ptr_equal(idmap_get(m, (int64_t)i * 7919), i % 2 ? &vals[i] : NULL);
    assert_null(idmap_del(m, 0));
    assert_int_equal(idmap_count(m), 10000);
    idmap_destroy(m);
}

static void b64_roundtrip(void **state)
{
    (void)state;
    char enc[64];
    uint8_t dec[64];
    b64_encode("Man", 3, enc);
    assert_string_equal(enc, "TWFu");
    b64_encode("Ma", 2, enc);
    assert_string_equal(enc, "TWE=");
    b64_encode("M", 1, enc);
    assert_string_equal(enc, "TQ==");
    b64_encode("", 0, enc);
    assert_string_equal(enc, "");
    uint8_t bin[40];
    for (int i = 0; i < 40; i++)
        bin[i] = (uint8_t)(i * 37 + 200);
    for (size_t n = 0; n <= 40; n++) {
        b64_encode(bin, n, enc);
        assert_int_equal(strlen(enc), b64_encoded_len(n));
        assert_int_equal(b64_decode(enc, dec), (long)n);
        assert_memory_equal(dec, bin, n);
    }
    assert_int_equal(b64_decode("TWF", dec), -1);
    assert_int_equal(b64_decode("TW=u", dec), -1);
    assert_int_equal(b64_decode("T?Fu", dec), -1);
    assert_int_equal(b64_decode("TQ==TWFu", dec), -1);
}

static void rng_deterministic(void **state)
{
    (void)state;
    rng_t a, b;
    rng_seed(&a, 42);
    rng_seed(&b, 42);
    for (int i = 0; i < 1000; i++)
        assert_true(rng_next(&a) == rng_next(&b));
    rng_seed(&b, 43);
    assert_false(rng_next(&a) == rng_next(&b));
    int hist[10] = {0};
    for (int i = 0; i < 100000; i++) {
        uint64_t v = rng_below(&a, 10);
        assert_true(v < 10);
        hist[v]++;
    }
    for (int i = 0; i < 10; i++)
        assert_in_range(hist[i], 9000, 11000);
    int arr[50];
    for (int i = 0; i < 50; i++)
        arr[i] = i;
    rng_shuffle(&a, arr, 50, sizeof(int));
    long sum = 0;
    int moved = 0;
    for (int i = 0; i < 50; i++) {
        sum += arr[i];
        moved += arr[i] != i;
    }
    assert_int_equal(sum, 49 * 50 / 2);
    assert_true(moved > 25);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nodeset_basics),
        cmocka_unit_test(nodeset_ranges),
        cmocka_unit_test(nodeset_take_across_words),
        cmocka_unit_test(idmap_many),
        cmocka_unit_test(b64_roundtrip),
        cmocka_unit_test(rng_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
