/* hostlist: expansion, compression, limits, and the name index. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hostlist.h"
#include "common/rng.h"

/* Expands text and checks the names against the space-separated want. */
static void expect(const char *text, const char *want)
{
    char **names = NULL, err[256] = "";
    int n = -1;
    int rc = hostlist_expand(text, &names, &n, err, sizeof(err));
    if (rc != 0)
        fail_msg("expand '%s': %d %s", text, rc, err);
    char *copy = strdup(want), *save = NULL;
    int i = 0;
    for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save), i++) {
        if (i >= n)
            fail_msg("expand '%s': only %d names, want more ('%s')", text, n, w);
        if (strcmp(names[i], w) != 0)
            fail_msg("expand '%s': name %d is '%s', want '%s'", text, i, names[i], w);
    }
    assert_int_equal(n, i);
    free(copy);
    hostlist_free(names, n);
}

/* Expansion of text fails with rc, and the message contains every fragment. */
static void expect_error(const char *text, int want_rc, const char *frag1, const char *frag2)
{
    char **names = (char **)&names, err[256] = "";
    int n = -1;
    int rc = hostlist_expand(text, &names, &n, err, sizeof(err));
    if (rc != want_rc)
        fail_msg("expand '%s': rc %d, want %d (%s)", text, rc, want_rc, err);
    assert_null(names);
    assert_int_equal(n, 0);
    if (frag1 && !strstr(err, frag1))
        fail_msg("expand '%s': message '%s' lacks '%s'", text, err, frag1);
    if (frag2 && !strstr(err, frag2))
        fail_msg("expand '%s': message '%s' lacks '%s'", text, err, frag2);
}

static void expand_basic(void **state)
{
    (void)state;
    expect("n[01-16]", "n01 n02 n03 n04 n05 n06 n07 n08 n09 n10 n11 n12 n13 n14 n15 n16");
    expect("n[1-3,5]", "n1 n2 n3 n5");
    expect("login,n[01-04],gpu[1-2]", "login n01 n02 n03 n04 gpu1 gpu2");
    expect("login", "login");
    expect("a.b-c_d", "a.b-c_d");
    expect("n[7]", "n7");
    /* width comes from the lower bound as written */
    expect("n[8-10]", "n8 n9 n10");
    expect("n[08-10]", "n08 n09 n10");
    expect("n[098-101]", "n098 n099 n100 n101");
    expect("n[001-3]", "n001 n002 n003");
    expect("n[0-1]", "n0 n1");
    /* each range of a group has its own width */
    expect("n[01-02,5,007]", "n01 n02 n5 n007");
    /* suffixes, a bare group, order as written */
    expect("n[1-2]-ib", "n1-ib n2-ib");
    expect("[1-2]", "1 2");
    expect("n[5,1-2],m3", "n5 n1 n2 m3");
    /* several groups multiply out, the first slowest */
    expect("r[1-2]n[1-3]", "r1n1 r1n2 r1n3 r2n1 r2n2 r2n3");
    expect("r[1-2]n[01-02].x", "r1n01.x r1n02.x r2n01.x r2n02.x");
    /* blanks around items are fine */
    expect("  a , n[1-2]\t,b ", "a n1 n2 b");
}

static void expand_empty(void **state)
{
    (void)state;
    char **names = (char **)&names, err[64] = "";
    int n = -1;
    assert_int_equal(hostlist_expand("", &names, &n, err, sizeof(err)), 0);
    assert_null(names);
    assert_int_equal(n, 0);
    assert_int_equal(hostlist_expand(" \t ", &names, &n, err, sizeof(err)), 0);
    assert_int_equal(n, 0);
    assert_int_equal(hostlist_expand(NULL, &names, &n, err, sizeof(err)), -EINVAL);
    hostlist_free(NULL, 0);
}

static void expand_errors(void **state)
{
    (void)state;
    expect_error("n[5-3]", -EINVAL, "bad range '5-3' in 'n[5-3]'", NULL);
    expect_error("a,n[1-2,5-3]", -EINVAL, "'5-3'", "'n[1-2,5-3]'");
    expect_error("n[1-3", -EINVAL, "missing ']'", "'n[1-3'");
    expect_error("n[1-3,", -EINVAL, "missing ']'", NULL);
    expect_error("n[]", -EINVAL, "empty range", "'n[]'");
    expect_error("n[1,,2]", -EINVAL, "empty range", NULL);
    expect_error("n[a-b]", -EINVAL, "bad range 'a-b'", NULL);
    expect_error("n[1-]", -EINVAL, "bad range '1-'", NULL);
    expect_error("n[-3]", -EINVAL, "bad range '-3'", NULL);
    expect_error("n[1[2]]", -EINVAL, "bad range", NULL);
    expect_error("n1]", -EINVAL, "unexpected ']'", "'n1]'");
    expect_error("n[1234567890123456789]", -EINVAL, "bad range", "18 digits");
    expect_error("a,,b", -EINVAL, "empty item", "'a,,b'");
    expect_error("a,", -EINVAL, "empty item", NULL);
    expect_error(",a", -EINVAL, "empty item", NULL);
    expect_error("a b", -EINVAL, "blank", "'a b'");
    expect_error("n/1", -EINVAL, "bad character", "'n/1'");
    expect_error("n\x01", -EINVAL, "bad character", "'n?'");
    expect_error("n*", -EINVAL, "bad character", NULL);
    /* 63 characters is the limit */
    char name[80];
    memset(name, 'x', 63);
    name[63] = '\0';
    expect(name, name);
    name[63] = 'y';
    name[64] = '\0';
    expect_error(name, -EINVAL, "too long", NULL);
    memset(name, 'x', 62);
    strcpy(name + 62, "[9-10]");
    expect_error(name, -EINVAL, "too long", NULL);
}

static void expand_limits(void **state)
{
    (void)state;
    /* a typo must not exhaust memory: refused before anything is allocated */
    expect_error("n[1-999999999]", -E2BIG, "too many hosts", "1000000");
    expect_error("n[1-999999999999999999]", -E2BIG, "too many hosts", NULL);
    expect_error("a[1-1000]b[1-1000]c[1-1000]", -E2BIG, "too many hosts", NULL);
    /* the limit counts across items */
    expect_error("a[1-600000],b[1-400001]", -E2BIG, "too many hosts", NULL);
    char **names;
    int n;
    char err[256];
    assert_int_equal(hostlist_expand("a[1-600000],b[1-400000]", &names, &n, err, sizeof(err)), 0);
    assert_int_equal(n, HOSTLIST_MAX_HOSTS);
    assert_string_equal(names[0], "a1");
    assert_string_equal(names[n - 1], "b400000");
    hostlist_free(names, n);
}

static void expand_duplicates(void **state)
{
    (void)state;
    expect_error("n1,n1", -EINVAL, "duplicate host 'n1'", "'n1,n1'");
    expect_error("n[1-5,3]", -EINVAL, "duplicate host 'n3'", NULL);
    expect_error("n[01-03],n02", -EINVAL, "duplicate host 'n02'", NULL);
    /* same number, different width: different names */
    expect("n[1,01]", "n1 n01");
}

/* Compresses the space-separated names and checks the text and the returned length. */
static void expect_compress(const char *list, const char *want)
{
    char *copy = strdup(list), *save = NULL, *names[64];
    int n = 0;
    for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
        names[n++] = w;
    char buf[256];
    int len = hostlist_compress(names, n, buf, sizeof(buf));
    if (strcmp(buf, want) != 0)
        fail_msg("compress '%s': '%s', want '%s'", list, buf, want);
    assert_int_equal(len, (int)strlen(want));
    free(copy);
}

static void compress_basic(void **state)
{
    (void)state;
    expect_compress("n01 n02 n03 n05", "n[01-03,05]");
    expect_compress("n1 n2 n3 n5", "n[1-3,5]");
    expect_compress("n8 n9 n10 n11", "n[8-11]");
    expect_compress("n08 n09 n10", "n[08-10]");
    expect_compress("n098 n099 n100", "n[098-100]");
    /* width changes split a range: n9 n010 is not "n[9-10]" */
    expect_compress("n9 n010", "n[9,010]");
    expect_compress("n09 n010", "n[09,010]");
    expect_compress("n1 n01", "n[1,01]");
    expect_compress("login", "login");
    expect_compress("login n01", "login,n01");
    expect_compress("login n01 n02 gpu1 gpu2", "login,n[01-02],gpu[1-2]");
    /* order is kept: nothing moves to merge */
    expect_compress("n3 n1 n2", "n[3,1-2]");
    expect_compress("n1 m1 n2", "n1,m1,n2");
    expect_compress("n2 n1", "n[2,1]");
    /* prefix and suffix must both match; the number is the last run of digits */
    expect_compress("n1-ib n2-ib n3", "n[1-2]-ib,n3");
    expect_compress("r1n1 r1n2 r2n1", "r1n[1-2],r2n1");
    expect_compress("a b c", "a,b,c");
    expect_compress("n0 n1", "n[0-1]");
    expect_compress("", "");
    /* numbers too long to be range bounds stay as they are */
    expect_compress("n1234567890123456789 n1234567890123456790",
                    "n1234567890123456789,n1234567890123456790");
}

static void compress_truncation(void **state)
{
    (void)state;
    char *names[] = {"n01", "n02", "n03", "n05"};
    char buf[6];
    assert_int_equal(hostlist_compress(names, 4, buf, sizeof(buf)), 11);
    assert_string_equal(buf, "n[01-");
    assert_int_equal(hostlist_compress(names, 4, NULL, 0), 11);
    char *bad[] = {"n01", "n[02]"};
    assert_int_equal(hostlist_compress(bad, 2, buf, sizeof(buf)), -EINVAL);
    char *empty[] = {""};
    assert_int_equal(hostlist_compress(empty, 1, buf, sizeof(buf)), -EINVAL);
    assert_int_equal(hostlist_compress(NULL, -1, buf, sizeof(buf)), -EINVAL);
}

/* Expands text and checks that it equals names[0..n). */
static void assert_expands_to(const char *text, char **want, int n)
{
    char **got;
    int m;
    char err[256];
    int rc = hostlist_expand(text, &got, &m, err, sizeof(err));
    if (rc != 0)
        fail_msg("expand: %s", err);
    assert_int_equal(m, n);
    for (int i = 0; i < n; i++)
        if (strcmp(got[i], want[i]) != 0)
            fail_msg("name %d: '%s', want '%s'", i, got[i], want[i]);
    hostlist_free(got, m);
}

static char *compress_alloc(char **names, int n)
{
    int len = hostlist_compress(names, n, NULL, 0);
    assert_true(len >= 0);
    char *buf = malloc((size_t)len + 1);
    assert_int_equal(hostlist_compress(names, n, buf, (size_t)len + 1), len);
    return buf;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 10,000 names of several shapes: runs of consecutive numbers with gaps, padding,
 * width changes (c99 c100), suffixes and digits in the prefix. */
static void round_trip(void **state)
{
    (void)state;
    enum { N = 10000 };
    char **names = malloc(N * sizeof(char *));
    rng_t r;
    rng_seed(&r, 42);
    int n = 0, v = 0;
    while (n < N) {
        int shape = (int)rng_below(&r, 5), run = 1 + (int)rng_below(&r, 60);
        v += 1 + (int)rng_below(&r, 3);
        for (int k = 0; k < run && n < N; k++, v++) {
            char buf[64];
            if (rng_below(&r, 10) == 0)
                v++; /* a gap */
            switch (shape) {
            case 0: snprintf(buf, sizeof(buf), "n%05d", v); break;
            case 1: snprintf(buf, sizeof(buf), "c%d", v); break;
            case 2: snprintf(buf, sizeof(buf), "r%dn%03d-ib", v / 1000, v % 1000); break;
            case 3: snprintf(buf, sizeof(buf), "gpu%d.x", v); break;
            default: snprintf(buf, sizeof(buf), "login%d", v); break;
            }
            names[n++] = strdup(buf);
        }
    }
    /* in the order generated: sorted by number within each shape */
    char *text = compress_alloc(names, N);
    assert_expands_to(text, names, N);
    /* runs compress well: far shorter than the names joined by commas */
    size_t joined = 0;
    for (int i = 0; i < N; i++)
        joined += strlen(names[i]) + 1;
    if (strlen(text) * 4 > joined)
        fail_msg("compressed to %zu bytes of %zu", strlen(text), joined);
    free(text);
    /* sorted as strings (c10 before c9), and in any order: nothing is reordered */
    qsort(names, N, sizeof(char *), cmp_str);
    text = compress_alloc(names, N);
    assert_expands_to(text, names, N);
    free(text);
    rng_shuffle(&r, names, N, sizeof(char *));
    text = compress_alloc(names, N);
    assert_expands_to(text, names, N);
    free(text);
    for (int i = 0; i < N; i++)
        free(names[i]);
    free(names);

    /* a simple dense list compresses to one group */
    char **dense;
    int m;
    char err[128];
    assert_int_equal(hostlist_expand("n[00001-10000]", &dense, &m, err, sizeof(err)), 0);
    assert_int_equal(m, 10000);
    text = compress_alloc(dense, m);
    assert_string_equal(text, "n[00001-10000]");
    free(text);
    hostlist_free(dense, m);
}

static void index_lookup(void **state)
{
    (void)state;
    char **names;
    int n;
    char err[128];
    assert_int_equal(hostlist_expand("login,n[00000-19999]", &names, &n, err, sizeof(err)), 0);
    hostlist_index_t *ix;
    assert_int_equal(hostlist_index_create(names, n, &ix, NULL), 0);
    assert_int_equal(hostlist_index_find(ix, "login"), 0);
    assert_int_equal(hostlist_index_find(ix, "n00000"), 1);
    assert_int_equal(hostlist_index_find(ix, "n19999"), 20000);
    assert_int_equal(hostlist_index_find(ix, "n20000"), -1);
    assert_int_equal(hostlist_index_find(ix, "n0"), -1);
    assert_int_equal(hostlist_index_find(ix, ""), -1);
    for (int i = 0; i < n; i++)
        assert_int_equal(hostlist_index_find(ix, names[i]), i);
    hostlist_index_destroy(ix);
    char *dups[] = {"a", "b", "a"};
    int dup = -1;
    assert_int_equal(hostlist_index_create(dups, 3, &ix, &dup), -EEXIST);
    assert_null(ix);
    assert_int_equal(dup, 2);
    assert_int_equal(hostlist_index_create(NULL, 0, &ix, NULL), 0);
    assert_int_equal(hostlist_index_find(ix, "a"), -1);
    hostlist_index_destroy(ix);
    assert_int_equal(hostlist_index_find(NULL, "a"), -1);
    hostlist_free(names, n);
}

static void valid_names(void **state)
{
    (void)state;
    assert_true(hostlist_valid_name("n01"));
    assert_true(hostlist_valid_name("A.b-c_9"));
    assert_false(hostlist_valid_name(""));
    assert_false(hostlist_valid_name(NULL));
    assert_false(hostlist_valid_name("n 1"));
    assert_false(hostlist_valid_name("n[1]"));
    assert_false(hostlist_valid_name("n,1"));
    assert_false(hostlist_valid_name("h\xc3\xa9"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(expand_basic),
        cmocka_unit_test(expand_empty),
        cmocka_unit_test(expand_errors),
        cmocka_unit_test(expand_limits),
        cmocka_unit_test(expand_duplicates),
        cmocka_unit_test(compress_basic),
        cmocka_unit_test(compress_truncation),
        cmocka_unit_test(round_trip),
        cmocka_unit_test(index_lookup),
        cmocka_unit_test(valid_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
