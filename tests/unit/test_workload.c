/* Workloads: the job list, the SWF replay conventions, JSON job lists, the ESP mix
 * and the rule that makes trace jobs malleable. Expected values are worked out by
 * hand in the comments next to them. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "sched/constraint.h"
#include "sim/workload.h"

/* cmocka's assert_float_equal works in float; these values need double. */
#define assert_near(a, b, eps)                                                               \
    do {                                                                                     \
        double a_ = (a), b_ = (b);                                                           \
        if (!(fabs(a_ - b_) <= (eps)))                                                       \
            fail_msg("%s = %.17g, expected %.17g (+-%g)", #a, a_, b_, (double)(eps));        \
    } while (0)

#define assert_contains(hay, needle)                                                         \
    do {                                                                                     \
        if (!strstr((hay), (needle)))                                                        \
            fail_msg("'%s' does not contain '%s'", (hay), (needle));                         \
    } while (0)

static char *tmpdir;

static int setup(void **state)
{
    (void)state;
    tmpdir = tu_tmpdir();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_rmtree(tmpdir);
    free(tmpdir);
    return 0;
}

/* Writes text to tmpdir/name; path receives the full name. */
static void put(char *path, size_t len, const char *name, const char *text)
{
    snprintf(path, len, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const wl_job_t *find(const workload_t *wl, int64_t id)
{
    for (size_t i = 0; i < wl->njobs; i++)
        if (wl->jobs[i].id == id)
            return &wl->jobs[i];
    fail_msg("job %lld not in the workload", (long long)id);
    return NULL;
}

static void assert_ids(const workload_t *wl, const int64_t *ids, size_t n)
{
    assert_int_equal(wl->njobs, n);
    for (size_t i = 0; i < n; i++)
        if (wl->jobs[i].id != ids[i])
            fail_msg("position %zu holds job %lld, expected %lld", i,
                     (long long)wl->jobs[i].id, (long long)ids[i]);
}

/* ---- the job list ---- */

static void test_append_copies_mtct(void **state)
{
    (void)state;
    workload_t wl = {0};
    mtct_point_t pts[2] = {{1, 0.0}, {4, 0.25}};
    wl_job_t j = {.id = 1, .nodes = 2, .nmtct = 2, .mtct = pts};
    memcpy(j.tag, "abcdefgh", 8); /* not terminated: the copy must terminate it */
    assert_int_equal(wl_append(&wl, &j), 0);
    pts[1].mtct = 9;
    assert_ptr_not_equal(wl.jobs[0].mtct, pts);
    assert_int_equal(wl.jobs[0].nmtct, 2);
    assert_int_equal(wl.jobs[0].mtct[1].nodes, 4);
    assert_near(wl.jobs[0].mtct[1].mtct, 0.25, 0);
    assert_string_equal(wl.jobs[0].tag, "abcdefg");

    /* a profile that claims points but has none is refused */
    wl_job_t bad = {.id = 2, .nodes = 1, .nmtct = 3};
    assert_int_equal(wl_append(&wl, &bad), -EINVAL);
    bad.nmtct = -1;
    assert_int_equal(wl_append(&wl, &bad), -EINVAL);
    assert_int_equal(wl.njobs, 1);

    /* growth keeps earlier jobs intact */
    for (int i = 0; i < 1000; i++) {
        wl_job_t k = {.id = 100 + i, .nodes = 1};
        assert_int_equal(wl_append(&wl, &k), 0);
    }
    assert_int_equal(wl.njobs, 1001);
    assert_near(wl.jobs[0].mtct[0].mtct, 0.0, 0);
    assert_int_equal(wl.jobs[1000].id, 1099);
    wl_free(&wl);
}

static void test_sort_and_free(void **state)
{
    (void)state;
    workload_t wl = {0};
    struct {
        int64_t id;
        double submit;
        const char *tag;
    } in[] = {{5, 10, "a"}, {2, 10, "b"}, {9, 0.5, "c"}, {1, 20, "d"},
              {2, 10, "e"}, {3, 10, "f"}, {2, 10, "g"}};
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        wl_job_t j = {.id = in[i].id, .submit = in[i].submit, .nodes = 1};
        snprintf(j.tag, sizeof(j.tag), "%s", in[i].tag);
        assert_int_equal(wl_append(&wl, &j), 0);
    }
    wl_sort(&wl);
    /* submit first, then id; equal keys keep their input order (b, e, g) */
    const char *want = "cbegfad";
    for (size_t i = 0; i < wl.njobs; i++)
        if (wl.jobs[i].tag[0] != want[i])
            fail_msg("position %zu holds %s, expected %c", i, wl.jobs[i].tag, want[i]);
    wl_sort(&wl); /* sorting again changes nothing */
    for (size_t i = 0; i < wl.njobs; i++)
        assert_int_equal(wl.jobs[i].tag[0], want[i]);
    wl_free(&wl);
    assert_null(wl.jobs);
    assert_int_equal(wl.njobs, 0);
    assert_int_equal(wl.cap, 0);
    wl_free(&wl); /* freeing twice is harmless */
    wl_sort(&wl);
}

/* ---- SWF ---- */

static wl_swf_opts_t swf_opts(int nodes, int cpn, bool lenient)
{
    return (wl_swf_opts_t){.nodes = nodes, .cores_per_node = cpn, .lenient = lenient};
}

static void load_small(workload_t *wl, int nodes, int cpn)
{
    char path[4096], err[512] = "";
    tu_data_path(path, sizeof(path), "small.swf");
    wl_swf_opts_t o = swf_opts(nodes, cpn, false);
    if (wl_load_swf(path, &o, wl, err, sizeof(err)) != 0)
        fail_msg("%s", err);
}

static void test_swf_conventions(void **state)
{
    (void)state;
    workload_t wl;
    load_small(&wl, 0, 1);
    /* machine from "; maxnodes: 8" (lower case), not from MaxProcs 64 */
    assert_int_equal(wl.machine_nodes, 8);
    /* 4: run time -1; 5: no processor count; 6: 16 nodes on an 8-node machine */
    assert_int_equal(wl.skipped, 3);
    assert_int_equal(wl.malformed, 0);
    /* 2 and 3 both arrive at 10.5: job number decides although 3 comes first */
    int64_t order[] = {1, 2, 3, 7, 8};
    assert_ids(&wl, order, 5);

    const wl_job_t *j = find(&wl, 1);
    assert_int_equal(j->nodes, 4); /* requested -1: falls back on allocated 4 */
    assert_near(j->submit, 0, 0);
    assert_near(j->runtime, 100, 0);
    assert_near(j->walltime, 200, 0);
    assert_int_equal(j->user, 3);
    assert_int_equal(j->type, SCHED_RIGID);
    assert_int_equal(j->constraint, SCHED_CONS_NONE);
    assert_false(j->has_speedup);
    assert_int_equal(j->nmtct, 0);
    assert_true(j->io_intensity < 0); /* no CPU time recorded: no intensity */
    /* 8: 15 s of CPU per processor in a 20 s run: a quarter of it counts as I/O */
    assert_near(find(&wl, 8)->io_intensity, 0.25, 1e-12);

    j = find(&wl, 2);
    assert_int_equal(j->nodes, 2); /* requested 2, allocated -1 */
    assert_near(j->submit, 10.5, 0);
    assert_near(j->runtime, 50.25, 0);
    assert_near(j->walltime, 50.25, 0); /* no estimate: the run time */
    assert_int_equal(j->user, 0);       /* user -1 */

    j = find(&wl, 3);
    assert_int_equal(j->nodes, 8);
    assert_near(j->walltime, 300, 0); /* estimate 100 below run time 300: raised */
    assert_int_equal(j->user, 2);

    j = find(&wl, 7);
    assert_near(j->runtime, 0, 0);
    assert_near(j->walltime, 0, 0);

    j = find(&wl, 8);
    assert_int_equal(j->nodes, 5); /* requested 5 wins over allocated 2 */
    assert_near(j->walltime, 30, 0);
    wl_free(&wl);
}

static void test_swf_cores_per_node(void **state)
{
    (void)state;
    workload_t wl;
    load_small(&wl, 0, 2);
    /* 16 processors / 2 = 8 nodes: job 6 now fits the 8-node machine */
    assert_int_equal(wl.machine_nodes, 8);
    assert_int_equal(wl.skipped, 2);
    int64_t order[] = {1, 2, 3, 6, 7, 8};
    assert_ids(&wl, order, 6);
    assert_int_equal(find(&wl, 1)->nodes, 2); /* 4 / 2 */
    assert_int_equal(find(&wl, 2)->nodes, 1); /* 2 / 2 */
    assert_int_equal(find(&wl, 3)->nodes, 4);
    assert_int_equal(find(&wl, 6)->nodes, 8);
    assert_int_equal(find(&wl, 7)->nodes, 2); /* ceil(3 / 2) */
    assert_int_equal(find(&wl, 8)->nodes, 3); /* ceil(5 / 2) */
    wl_free(&wl);

    load_small(&wl, 0, 3);
    assert_int_equal(find(&wl, 1)->nodes, 2); /* ceil(4 / 3) */
    assert_int_equal(find(&wl, 6)->nodes, 6); /* ceil(16 / 3) */
    assert_int_equal(find(&wl, 8)->nodes, 2); /* ceil(5 / 3) */
    assert_int_equal(find(&wl, 2)->nodes, 1); /* ceil(2 / 3) */
    wl_free(&wl);
}

static void test_swf_nodes_option(void **state)
{
    (void)state;
    workload_t wl;
    /* --nodes 4 beats MaxNodes 8: jobs 3 (8 nodes) and 8 (5 nodes) no longer fit */
    load_small(&wl, 4, 1);
    assert_int_equal(wl.machine_nodes, 4);
    assert_int_equal(wl.skipped, 5);
    int64_t order[] = {1, 2, 7};
    assert_ids(&wl, order, 3);
    wl_free(&wl);
    /* --nodes larger than the header lets job 6 in */
    load_small(&wl, 16, 1);
    assert_int_equal(wl.machine_nodes, 16);
    assert_int_equal(wl.skipped, 2);
    assert_int_equal(find(&wl, 6)->nodes, 16);
    wl_free(&wl);
}

/* One SWF job line: the fields the replay reads, -1 or 1 elsewhere. */
static void swf_line(char *buf, size_t len, const char *id, const char *submit,
                     const char *runtime, const char *alloc, const char *req, const char *est,
                     const char *user)
{
    snprintf(buf, len, "%s %s 0 %s %s -1 -1 %s %s -1 1 %s 1 1 1 1 -1 -1\n", id, submit, runtime,
             alloc, req, est, user);
}

static void test_swf_machine_from_maxprocs(void **state)
{
    (void)state;
    char path[4096], err[512] = "", l1[256], l2[256], l3[256], text[1024];
    swf_line(l1, sizeof(l1), "1", "0", "10", "12", "-1", "-1", "1");
    swf_line(l2, sizeof(l2), "2", "5", "10", "13", "-1", "-1", "1");
    swf_line(l3, sizeof(l3), "3", "6", "10", "1", "-1", "-1", "1");
    /* key in capitals; MaxNodes -1 (PWA's "unknown") does not count */
    snprintf(text, sizeof(text), ";MAXPROCS:   10\n; MaxNodes: -1\n%s%s%s", l1, l2, l3);
    put(path, sizeof(path), "procs.swf", text);
    workload_t wl;
    wl_swf_opts_t o = swf_opts(0, 4, false);
    assert_int_equal(wl_load_swf(path, &o, &wl, err, sizeof(err)), 0);
    /* ceil(10 / 4) = 3 nodes; 12 processors = 3 nodes fit, 13 = 4 do not */
    assert_int_equal(wl.machine_nodes, 3);
    assert_int_equal(wl.skipped, 1);
    int64_t order[] = {1, 3};
    assert_ids(&wl, order, 2);
    assert_int_equal(find(&wl, 1)->nodes, 3);
    wl_free(&wl);

    /* no header: the machine size is unknown and no job is too large */
    snprintf(text, sizeof(text), "%s%s", l1, l2);
    put(path, sizeof(path), "nohead.swf", text);
    o = swf_opts(0, 1, false);
    assert_int_equal(wl_load_swf(path, &o, &wl, err, sizeof(err)), 0);
    assert_int_equal(wl.machine_nodes, 0);
    assert_int_equal(wl.skipped, 0);
    assert_int_equal(wl.njobs, 2);
    assert_int_equal(find(&wl, 2)->nodes, 13);
    wl_free(&wl);

    /* a header after the jobs still sizes the machine; a value that is not a
     * number is ignored rather than fatal, and a note after the number is fine */
    snprintf(text, sizeof(text), "; MaxNodes: many\n%s%s; MaxNodes: 12 (partition A)\n", l1,
             l2);
    put(path, sizeof(path), "late.swf", text);
    assert_int_equal(wl_load_swf(path, &o, &wl, err, sizeof(err)), 0);
    assert_int_equal(wl.machine_nodes, 12);
    assert_int_equal(wl.skipped, 1);
    assert_int_equal(wl.njobs, 1);
    wl_free(&wl);
}

static void test_swf_extra_fields_and_crlf(void **state)
{
    (void)state;
    char path[4096], err[512] = "";
    /* Alea-style extra columns are text; they are not read. A CRLF line, a
     * fractional time in exponent form and tabs are all fine. */
    put(path, sizeof(path), "extra.swf",
        "1 0 0 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1 node[1-2] batch infiniband\n"
        "2\t1.5e1\t0\t7.5\t1\t-1\t-1\t1\t-1\t-1\t1\t1\t1\t1\t1\t1\t-1\t-1\r\n");
    workload_t wl;
    wl_swf_opts_t o = swf_opts(0, 1, false);
    if (wl_load_swf(path, &o, &wl, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(wl.njobs, 2);
    assert_int_equal(find(&wl, 1)->nodes, 2);
    assert_near(find(&wl, 2)->submit, 15, 0);
    assert_near(find(&wl, 2)->runtime, 7.5, 0);
    wl_free(&wl);
}

typedef struct bad_line {
    const char *line;
    const char *expect;
} bad_line_t;

static const bad_line_t bad_lines[] = {
    {"1 0 0 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1\n", "expected 18 fields, found 17"},
    {"1 0 0 10 2 -1 -1 2 20\n", "found 9"},
    {"1 0 0 ten 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1\n", "field 4 (run time) is not a number: 'ten'"},
    {"1 0 0 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 x\n", "field 18"},
    {"1 0 0 10 2x -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1\n", "field 5 (allocated processors) is not"},
    {"1 0 0 10 2.5 -1 -1 -1 20 -1 1 1 1 1 1 1 -1 -1\n", "field 5 (allocated processors) must be"},
    {"1 0 0 10 2 -1 -1 3.5 20 -1 1 1 1 1 1 1 -1 -1\n", "field 8 (requested processors) must"},
    {"1.5 0 0 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1\n", "field 1 (job number)"},
    {"-4 0 0 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1\n", "field 1 (job number)"},
    {"1 0 0 10 2 -1 -1 2 20 -1 1 2.5 1 1 1 1 -1 -1\n", "field 12 (user id)"},
    {"1 0 0 nan 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1\n", "field 4 (run time) is not a number"},
};

static void test_swf_malformed(void **state)
{
    (void)state;
    char path[4096], err[512], text[1024], where[4200];
    const char *good = "9 0 0 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1\n";
    for (size_t i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++) {
        /* the bad line is line 4: after a comment, a blank line and a good job */
        snprintf(text, sizeof(text), "; MaxNodes: 8\n\n%s%s%s", good, bad_lines[i].line, good);
        put(path, sizeof(path), "bad.swf", text);
        workload_t wl;
        wl_swf_opts_t o = swf_opts(0, 1, false);
        err[0] = '\0';
        assert_int_equal(wl_load_swf(path, &o, &wl, err, sizeof(err)), -EINVAL);
        snprintf(where, sizeof(where), "%s:4: ", path);
        assert_contains(err, where);
        assert_contains(err, bad_lines[i].expect);
        /* nothing is left behind on error */
        assert_null(wl.jobs);
        assert_int_equal(wl.njobs, 0);
    }
}

static void test_swf_duplicate(void **state)
{
    (void)state;
    char path[4096], err[512] = "", where[4200];
    /* job 2 repeats on line 3, even though its first copy was skipped (run time -1) */
    put(path, sizeof(path), "dup.swf",
        "2 0 0 -1 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1\n"
        "1 0 0 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1\n"
        "2 5 0 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1\n");
    workload_t wl;
    wl_swf_opts_t o = swf_opts(0, 1, false);
    assert_int_equal(wl_load_swf(path, &o, &wl, err, sizeof(err)), -EINVAL);
    snprintf(where, sizeof(where), "%s:3: duplicate job number 2 (first on line 1)", path);
    assert_string_equal(err, where);

    o.lenient = true;
    assert_int_equal(wl_load_swf(path, &o, &wl, err, sizeof(err)), 0);
    assert_int_equal(wl.njobs, 1);
    assert_int_equal(wl.skipped, 1);
    assert_int_equal(wl.malformed, 1);
    wl_free(&wl);
}

static void test_swf_lenient(void **state)
{
    (void)state;
    char path[4096], err[512] = "", text[4096] = "";
    size_t n = 0;
    n += (size_t)snprintf(text + n, sizeof(text) - n,
                          "; MaxNodes: 4\n5 1 0 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1\n");
    for (size_t i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "%s", bad_lines[i].line);
    /* a good job that the machine cannot hold: skipped, not malformed */
    snprintf(text + n, sizeof(text) - n,
             "6 0 0 10 8 -1 -1 8 20 -1 1 1 1 1 1 1 -1 -1\n"
             "7 0 0 10 1 -1 -1 1 20 -1 1 1 1 1 1 1 -1 -1\n");
    put(path, sizeof(path), "lenient.swf", text);
    workload_t wl;
    wl_swf_opts_t o = swf_opts(0, 1, true);
    if (wl_load_swf(path, &o, &wl, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(wl.malformed, sizeof(bad_lines) / sizeof(bad_lines[0]));
    assert_int_equal(wl.skipped, 1);
    int64_t order[] = {7, 5};
    assert_ids(&wl, order, 2);
    wl_free(&wl);
}

static void test_swf_bad_options(void **state)
{
    (void)state;
    char path[4096], err[512] = "";
    workload_t wl;
    snprintf(path, sizeof(path), "%s/no-such.swf", tmpdir);
    wl_swf_opts_t o = swf_opts(0, 1, false);
    assert_int_equal(wl_load_swf(path, &o, &wl, err, sizeof(err)), -ENOENT);
    assert_contains(err, "no-such.swf");
    assert_int_equal(wl.njobs, 0);

    tu_data_path(path, sizeof(path), "small.swf");
    o = swf_opts(0, 0, false);
    assert_int_equal(wl_load_swf(path, &o, &wl, err, sizeof(err)), -EINVAL);
    assert_contains(err, "cores per node");
    o = swf_opts(-2, 1, false);
    assert_int_equal(wl_load_swf(path, &o, &wl, err, sizeof(err)), -EINVAL);
    assert_contains(err, "machine size");
}

static void test_swf_large(void **state)
{
    (void)state;
    char path[4096], err[512] = "";
    snprintf(path, sizeof(path), "%s/large.swf", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "; MaxNodes: 128\n");
    const int n = 120000;
    /* every tenth job asks for more than the machine; submit times go down in
     * steps of 1000 jobs so that the sort has real work to do */
    for (int i = 1; i <= n; i++)
        fprintf(f, "%d %d.25 17 %d %d -1 -1 %d %d -1 1 %d 1 1 1 1 -1 -1\n", i,
                (n - i) / 1000 * 60, 100 + i % 50, 1 + i % 64, i % 10 ? 1 + i % 64 : 129,
                3600, i % 97);
    fclose(f);
    workload_t wl;
    wl_swf_opts_t o = swf_opts(0, 1, false);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (wl_load_swf(path, &o, &wl, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    print_message("loaded %d-line SWF in %.3f s\n", n,
                  (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    assert_int_equal(wl.njobs, (size_t)(n - n / 10));
    assert_int_equal(wl.skipped, (size_t)(n / 10));
    for (size_t i = 1; i < wl.njobs; i++) {
        const wl_job_t *a = &wl.jobs[i - 1], *b = &wl.jobs[i];
        assert_true(a->submit < b->submit || (a->submit == b->submit && a->id < b->id));
    }
    /* jobs n-999 .. n share the earliest submit time (0.25); job n itself is too
     * wide, so n-999 comes first */
    assert_int_equal(wl.jobs[0].id, n - 999);
    assert_near(wl.jobs[0].submit, 0.25, 0);
    wl_free(&wl);
}

/* ---- JSON ---- */

static void test_json_fixture(void **state)
{
    (void)state;
    char path[4096], err[512] = "";
    tu_data_path(path, sizeof(path), "small.json");
    workload_t wl;
    if (wl_load_json(path, &wl, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(wl.machine_nodes, 16);
    assert_true(wl.has_speedup);
    assert_int_equal(wl.speedup.model, SPEEDUP_AMDAHL);
    assert_near(wl.speedup.a, 0.05, 0);
    assert_int_equal(wl.skipped, 0);
    /* queue order: 2 (submit 0), 9 (5.5), then 3 and 7 (both 30) by id */
    int64_t order[] = {2, 9, 3, 7};
    assert_ids(&wl, order, 4);

    const wl_job_t *j = find(&wl, 7);
    assert_near(j->submit, 30, 0);
    assert_near(j->runtime, 100, 0);
    assert_near(j->walltime, 150, 0);
    assert_int_equal(j->nodes, 4);
    assert_int_equal(j->type, SCHED_MALLEABLE);
    assert_int_equal(j->min_nodes, 2);
    assert_int_equal(j->max_nodes, 8);
    assert_int_equal(j->pref_nodes, 6);
    assert_int_equal(j->constraint, SCHED_CONS_EVEN);
    assert_int_equal(j->user, 12);
    assert_near(j->power_min, 90, 0);
    assert_near(j->power_max, 250.5, 0);
    assert_true(j->has_speedup);
    assert_int_equal(j->speedup.model, SPEEDUP_POWER);
    assert_near(j->speedup.a, 0.8, 0);
    assert_string_equal(j->tag, "sim");
    /* written as 8, 1, 4: stored ascending */
    assert_int_equal(j->nmtct, 3);
    assert_int_equal(j->mtct[0].nodes, 1);
    assert_near(j->mtct[0].mtct, 0.0, 0);
    assert_int_equal(j->mtct[1].nodes, 4);
    assert_near(j->mtct[1].mtct, 0.3, 0);
    assert_int_equal(j->mtct[2].nodes, 8);
    assert_near(j->mtct[2].mtct, 0.5, 0);

    /* the second job, all defaults: id = position 2 */
    j = find(&wl, 2);
    assert_near(j->submit, 0, 0);
    assert_near(j->runtime, 50, 0);
    assert_near(j->walltime, 50, 0);
    assert_int_equal(j->nodes, 1);
    assert_int_equal(j->type, SCHED_RIGID);
    assert_int_equal(j->min_nodes, 0);
    assert_int_equal(j->max_nodes, 0);
    assert_int_equal(j->pref_nodes, 0);
    assert_int_equal(j->constraint, SCHED_CONS_NONE);
    assert_int_equal(j->user, 0);
    assert_near(j->power_min, 0, 0);
    assert_near(j->power_max, 0, 0);
    assert_false(j->has_speedup);
    assert_int_equal(j->nmtct, 0);
    assert_null(j->mtct);
    assert_string_equal(j->tag, "");

    j = find(&wl, 3);
    assert_int_equal(j->type, SCHED_EVOLVING);
    assert_near(j->walltime, 20, 0); /* 10 is below the run time 20 */

    j = find(&wl, 9);
    assert_int_equal(j->type, SCHED_MOLDABLE);
    assert_int_equal(j->constraint, SCHED_CONS_ODD);
    assert_near(j->submit, 5.5, 0);
    assert_near(j->runtime, 0, 0);
    wl_free(&wl);
}

static void test_json_bare_array(void **state)
{
    (void)state;
    char path[4096], err[512] = "";
    put(path, sizeof(path), "bare.json",
        "[{\"runtime\": 10, \"nodes\": 2, \"submit\": 4},\n"
        " {\"runtime\": 5.5, \"nodes\": 3.0, \"walltime\": 60},\n"
        " {\"runtime\": 1, \"nodes\": 1, \"submit\": 4, \"constraint\": \"-\"}]\n");
    workload_t wl;
    if (wl_load_json(path, &wl, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(wl.machine_nodes, 0);
    assert_false(wl.has_speedup);
    int64_t order[] = {2, 1, 3};
    assert_ids(&wl, order, 3);
    assert_int_equal(find(&wl, 2)->nodes, 3); /* 3.0 is an integer */
    assert_near(find(&wl, 2)->walltime, 60, 0);
    assert_near(find(&wl, 1)->walltime, 10, 0);
    assert_int_equal(find(&wl, 3)->constraint, SCHED_CONS_NONE);
    wl_free(&wl);

    put(path, sizeof(path), "empty.json", "{\"jobs\": []}");
    assert_int_equal(wl_load_json(path, &wl, err, sizeof(err)), 0);
    assert_int_equal(wl.njobs, 0);
    wl_free(&wl);
}

typedef struct bad_json {
    const char *job;    /* third job of the list, after two good ones */
    const char *expect; /* the message after "FILE: " */
} bad_json_t;

static const bad_json_t bad_jobs[] = {
    {"{\"id\": 7, \"runtime\": 1, \"nodes\": 0}", "job 3 (id 7): 'nodes' must be an integer >= 1"},
    {"{\"id\": 7, \"runtime\": 1, \"nodes\": \"4\"}", "job 3 (id 7): 'nodes' must be an integer"},
    {"{\"id\": 7, \"runtime\": 1, \"nodes\": 2.5}", "job 3 (id 7): 'nodes' must be an integer"},
    {"{\"id\": 7, \"runtime\": 1}", "job 3 (id 7): 'nodes' is required"},
    {"{\"id\": 7, \"nodes\": 1}", "job 3 (id 7): 'runtime' is required"},
    {"{\"runtime\": 1, \"nodse\": 1}", "job 3 (id 3): unknown key 'nodse'"},
    {"{\"id\": \"x\", \"runtime\": 1, \"nodes\": 1}", "job 3: 'id' must be an integer >= 0"},
    {"{\"id\": -2, \"runtime\": 1, \"nodes\": 1}", "job 3: 'id' must be an integer >= 0"},
    {"{\"runtime\": -1, \"nodes\": 1}", "'runtime' must be a number >= 0"},
    {"{\"runtime\": \"1h\", \"nodes\": 1}", "'runtime' must be a number >= 0"},
    {"{\"runtime\": 1, \"nodes\": 1, \"submit\": -5}", "'submit' must be a number >= 0"},
    {"{\"runtime\": 1, \"nodes\": 1, \"walltime\": null}", "'walltime' must be a number"},
    {"{\"runtime\": 1, \"nodes\": 1, \"type\": \"elastic\"}", "'type' must be one of"},
    {"{\"runtime\": 1, \"nodes\": 1, \"type\": 2}", "'type' must be one of"},
    {"{\"runtime\": 1, \"nodes\": 1, \"min\": -1}", "'min' must be an integer >= 0"},
    {"{\"runtime\": 1, \"nodes\": 1, \"max\": 1.5}", "'max' must be an integer >= 0"},
    {"{\"runtime\": 1, \"nodes\": 1, \"pref\": true}", "'pref' must be an integer >= 0"},
    {"{\"runtime\": 1, \"nodes\": 1, \"constraint\": \"prime\"}", "'constraint' must be one of"},
    {"{\"runtime\": 1, \"nodes\": 1, \"user\": -1}", "'user' must be an integer >= 0"},
    {"{\"runtime\": 1, \"nodes\": 1, \"power\": [1]}", "'power' must be [min, max]"},
    {"{\"runtime\": 1, \"nodes\": 1, \"power\": [1, -2]}", "'power' must be [min, max]"},
    {"{\"runtime\": 1, \"nodes\": 1, \"power\": [5, 2]}", "'power' minimum 5 exceeds maximum 2"},
    {"{\"runtime\": 1, \"nodes\": 1, \"speedup\": \"amdahl:2\"}",
     "job 3 (id 3): speedup 'amdahl:2': the serial fraction must be in [0, 1]"},
    {"{\"runtime\": 1, \"nodes\": 1, \"speedup\": 0.5}", "'speedup' must be a string"},
    {"{\"runtime\": 1, \"nodes\": 1, \"mtct\": [0.1]}", "'mtct' must be an object"},
    {"{\"runtime\": 1, \"nodes\": 1, \"mtct\": {\"x\": 0.1}}", "'mtct' key 'x' must be"},
    {"{\"runtime\": 1, \"nodes\": 1, \"mtct\": {\"0\": 0.1}}", "'mtct' key '0' must be"},
    {"{\"runtime\": 1, \"nodes\": 1, \"mtct\": {\"2\": -0.1}}", "'mtct' value for 2 nodes"},
    {"{\"runtime\": 1, \"nodes\": 1, \"mtct\": {\"2\": 0.1, \"02\": 0.2}}",
     "'mtct' gives 2 nodes twice"},
    {"{\"runtime\": 1, \"nodes\": 1, \"tag\": \"abcdefgh\"}", "'tag' must be a string of at most 7"},
    {"{\"runtime\": 1, \"nodes\": 1, \"tag\": 5}", "'tag' must be a string"},
    {"{\"id\": 1, \"runtime\": 1, \"nodes\": 1}", "job 3 (id 1): duplicate id (job 1 has it too)"},
    {"{\"runtime\": 1, \"nodes\": 1, \"runtime\": 2}", "duplicate object key"},
    {"7", "job 3: expected an object"},
};

static void test_json_errors(void **state)
{
    (void)state;
    char path[4096], err[512], text[1024], want[4600];
    for (size_t i = 0; i < sizeof(bad_jobs) / sizeof(bad_jobs[0]); i++) {
        snprintf(text, sizeof(text),
                 "{\"nodes\": 8, \"jobs\": [\n"
                 "  {\"runtime\": 1, \"nodes\": 1},\n"
                 "  {\"id\": 2, \"runtime\": 1, \"nodes\": 1, \"tag\": \"ok\"},\n"
                 "  %s]}\n",
                 bad_jobs[i].job);
        put(path, sizeof(path), "bad.json", text);
        workload_t wl;
        err[0] = '\0';
        int rc = wl_load_json(path, &wl, err, sizeof(err));
        if (rc != -EINVAL)
            fail_msg("case %zu (%s): rc %d, err '%s'", i, bad_jobs[i].job, rc, err);
        assert_null(wl.jobs);
        assert_int_equal(wl.njobs, 0);
        /* the JSON parser's own messages carry a line number instead of a job */
        if (strstr(bad_jobs[i].expect, "duplicate object key"))
            snprintf(want, sizeof(want), "%s:4: ", path);
        else
            snprintf(want, sizeof(want), "%s: job 3", path);
        assert_contains(err, want);
        assert_contains(err, bad_jobs[i].expect);
    }
    /* the exact form of a message */
    snprintf(text, sizeof(text), "[{\"runtime\": 1, \"nodes\": 1}, {\"runtime\": 1, \"nodes\": 1},"
                                 " {\"id\": 7, \"runtime\": 1, \"nodes\": -3}]");
    put(path, sizeof(path), "exact.json", text);
    workload_t wl;
    assert_int_equal(wl_load_json(path, &wl, err, sizeof(err)), -EINVAL);
    snprintf(want, sizeof(want), "%s: job 3 (id 7): 'nodes' must be an integer >= 1", path);
    assert_string_equal(err, want);
}

static void test_json_top_level_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *expect;
    } cases[] = {
        {"{\"nodes\": 8, \"job\": []}", "unknown key 'job'"},
        {"{\"nodes\": 8}", "'jobs' must be an array"},
        {"{\"jobs\": {}}", "'jobs' must be an array"},
        {"{\"nodes\": 0, \"jobs\": []}", "'nodes' must be an integer >= 1"},
        {"{\"speedup\": \"fast\", \"jobs\": []}", "unknown speedup model 'fast'"},
        {"{\"speedup\": 1, \"jobs\": []}", "'speedup' must be a string"},
        {"\"jobs\"", ":1: "}, /* jansson wants an array or object at the top */
        {"[{\"runtime\": 1, \"nodes\": 1},\n {\"runtime\": 1 \"nodes\": 1}]", ":2: "},
        {"", "bad.json"},
    };
    char path[4096], err[512];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        put(path, sizeof(path), "bad.json", cases[i].text);
        workload_t wl;
        err[0] = '\0';
        assert_int_equal(wl_load_json(path, &wl, err, sizeof(err)), -EINVAL);
        assert_contains(err, path);
        assert_contains(err, cases[i].expect);
    }
    workload_t wl;
    snprintf(path, sizeof(path), "%s/missing.json", tmpdir);
    assert_int_equal(wl_load_json(path, &wl, err, sizeof(err)), -ENOENT);
    assert_contains(err, "missing.json");
}

/* ---- ESP ---- */

static const struct {
    char tag;
    int count;
    double runtime;
    sched_constraint_t cons;
    int size32, size34;
} esp_want[] = {
    /* size34: round(fraction * 34), then down to the constraint: D 8.5 -> 9 -> 8 even,
     * M 8.5 -> 9, G and L 4.25 -> 4, H 5.3125 -> 5 odd, K 3.1875 -> 3 */
    {'A', 75, 267, SCHED_CONS_NONE, 1, 1},    {'B', 9, 322, SCHED_CONS_POF2, 2, 2},
    {'C', 3, 534, SCHED_CONS_NONE, 16, 17},   {'D', 3, 616, SCHED_CONS_EVEN, 8, 8},
    {'E', 3, 315, SCHED_CONS_NONE, 16, 17},   {'F', 9, 1846, SCHED_CONS_POF2, 2, 2},
    {'G', 6, 1334, SCHED_CONS_EVEN, 4, 4},    {'H', 6, 1067, SCHED_CONS_ODD, 5, 5},
    {'I', 24, 1432, SCHED_CONS_NONE, 1, 1},   {'J', 24, 725, SCHED_CONS_POF2, 2, 2},
    {'K', 15, 487, SCHED_CONS_NONE, 3, 3},    {'L', 36, 366, SCHED_CONS_EVEN, 4, 4},
    {'M', 15, 187, SCHED_CONS_NONE, 8, 9},    {'Z', 2, 100, SCHED_CONS_NONE, 32, 34},
};
#define ESP_NWANT (sizeof(esp_want) / sizeof(esp_want[0]))

static void gen_esp(workload_t *wl, int nodes, double malleable, uint64_t seed, double gap)
{
    wl_esp_opts_t o = {.nodes = nodes, .malleable = malleable, .seed = seed, .interarrival = gap};
    char err[256] = "";
    if (wl_gen_esp(&o, wl, err, sizeof(err)) != 0)
        fail_msg("%s", err);
}

static size_t want_index(char tag)
{
    for (size_t t = 0; t < ESP_NWANT; t++)
        if (esp_want[t].tag == tag)
            return t;
    fail_msg("unexpected ESP tag '%c'", tag);
    return 0;
}

static void test_esp_mix(void **state)
{
    (void)state;
    workload_t wl;
    gen_esp(&wl, 32, 0, 42, 30);
    assert_int_equal(wl.njobs, 230);
    assert_int_equal(wl.machine_nodes, 32);
    int count[ESP_NWANT] = {0};
    for (size_t i = 0; i < wl.njobs; i++) {
        const wl_job_t *j = &wl.jobs[i];
        size_t t = want_index(j->tag[0]);
        assert_int_equal(j->tag[1], '\0');
        count[t]++;
        assert_int_equal(j->id, (int64_t)i + 1);
        assert_near(j->submit, 30.0 * (double)i, 0);
        assert_near(j->runtime, esp_want[t].runtime, 0);
        assert_near(j->walltime, j->runtime, 0);
        assert_int_equal(j->constraint, esp_want[t].cons);
        assert_int_equal(j->nodes, esp_want[t].size32);
        assert_int_equal(j->type, SCHED_RIGID);
        assert_false(j->has_speedup);
    }
    for (size_t t = 0; t < ESP_NWANT; t++)
        if (count[t] != esp_want[t].count)
            fail_msg("type %c: %d jobs, expected %d", esp_want[t].tag, count[t],
                     esp_want[t].count);
    /* Z after the first 23 jobs (10 %) and last: positions 24 and 230 */
    assert_int_equal(wl.jobs[23].tag[0], 'Z');
    assert_int_equal(wl.jobs[229].tag[0], 'Z');
    wl_free(&wl);
}

static void test_esp_sizes_34(void **state)
{
    (void)state;
    workload_t wl;
    gen_esp(&wl, 34, 1, 7, 10);
    for (size_t i = 0; i < wl.njobs; i++) {
        const wl_job_t *j = &wl.jobs[i];
        size_t t = want_index(j->tag[0]);
        assert_int_equal(j->nodes, esp_want[t].size34);
        assert_true(cons_valid(j->nodes, j->constraint));
        assert_true(j->nodes <= 34);
        if (j->type == SCHED_MALLEABLE) {
            /* bounds on 34 nodes: pof2 stops at 32, odd at 33 */
            int maxn = j->constraint == SCHED_CONS_POF2  ? 32
                       : j->constraint == SCHED_CONS_ODD ? 33
                                                         : 34;
            assert_int_equal(j->max_nodes, maxn);
        }
    }
    wl_free(&wl);
}

static void test_esp_malleable(void **state)
{
    (void)state;
    workload_t none, half, all;
    gen_esp(&none, 32, 0, 99, 30);
    gen_esp(&half, 32, 0.5, 99, 30);
    gen_esp(&all, 32, 1, 99, 30);
    size_t n0 = 0, n5 = 0, n1 = 0;
    double fmin = 1, fmax = 0;
    for (size_t i = 0; i < 230; i++) {
        const wl_job_t *h = &half.jobs[i], *a = &all.jobs[i];
        n0 += none.jobs[i].type == SCHED_MALLEABLE;
        n5 += h->type == SCHED_MALLEABLE;
        n1 += a->type == SCHED_MALLEABLE;
        /* the share never changes the order */
        assert_int_equal(h->tag[0], none.jobs[i].tag[0]);
        assert_int_equal(a->tag[0], none.jobs[i].tag[0]);
        if (a->tag[0] == 'Z') {
            assert_int_equal(a->type, SCHED_RIGID);
            continue;
        }
        assert_int_equal(a->type, SCHED_MALLEABLE);
        /* 32 nodes: none and pof2 1..32, even 2..32, odd 1..31 */
        int lo = a->constraint == SCHED_CONS_EVEN ? 2 : 1;
        int hi = a->constraint == SCHED_CONS_ODD ? 31 : 32;
        assert_int_equal(a->min_nodes, lo);
        assert_int_equal(a->max_nodes, hi);
        assert_int_equal(a->pref_nodes, a->nodes);
        assert_true(a->has_speedup);
        assert_int_equal(a->speedup.model, SPEEDUP_AMDAHL);
        assert_true(a->speedup.a >= 0.001 && a->speedup.a <= 0.05);
        fmin = fmin < a->speedup.a ? fmin : a->speedup.a;
        fmax = fmax > a->speedup.a ? fmax : a->speedup.a;
        /* a larger share keeps the jobs of a smaller one, scaling the same way */
        if (h->type == SCHED_MALLEABLE) {
            assert_true(h->has_speedup);
            assert_near(h->speedup.a, a->speedup.a, 0);
        } else {
            assert_int_equal(h->type, SCHED_RIGID);
            assert_false(h->has_speedup);
            assert_int_equal(h->min_nodes, 0);
            assert_int_equal(h->max_nodes, 0);
        }
    }
    assert_int_equal(n0, 0);
    assert_int_equal(n5, 114);
    assert_int_equal(n1, 228);
    /* log-uniform over a factor of 50: 228 draws spread well across it */
    assert_true(fmin < 0.003);
    assert_true(fmax > 0.02);
    wl_free(&none);
    wl_free(&half);
    wl_free(&all);

    /* round(0.1 * 228) = 23 */
    gen_esp(&half, 32, 0.1, 99, 30);
    n5 = 0;
    for (size_t i = 0; i < 230; i++)
        n5 += half.jobs[i].type == SCHED_MALLEABLE;
    assert_int_equal(n5, 23);
    wl_free(&half);
}

static void test_esp_deterministic(void **state)
{
    (void)state;
    workload_t a, b, c;
    gen_esp(&a, 32, 0.5, 1234, 30);
    gen_esp(&b, 32, 0.5, 1234, 30);
    gen_esp(&c, 32, 0.5, 1235, 30);
    size_t order_diff = 0, mall_diff = 0;
    for (size_t i = 0; i < 230; i++) {
        const wl_job_t *x = &a.jobs[i], *y = &b.jobs[i];
        assert_int_equal(x->id, y->id);
        assert_int_equal(x->tag[0], y->tag[0]);
        assert_int_equal(x->type, y->type);
        assert_int_equal(x->nodes, y->nodes);
        assert_int_equal(x->min_nodes, y->min_nodes);
        assert_int_equal(x->max_nodes, y->max_nodes);
        assert_true(x->speedup.a == y->speedup.a);
        assert_true(x->submit == y->submit);
        order_diff += x->tag[0] != c.jobs[i].tag[0];
        mall_diff += x->type != c.jobs[i].type;
    }
    assert_true(order_diff > 0);
    assert_true(mall_diff > 0);
    /* Z stays where it is whatever the seed */
    assert_int_equal(c.jobs[23].tag[0], 'Z');
    assert_int_equal(c.jobs[229].tag[0], 'Z');
    wl_free(&a);
    wl_free(&b);
    wl_free(&c);
}

static void test_esp_bad_options(void **state)
{
    (void)state;
    static const struct {
        wl_esp_opts_t o;
        const char *expect;
    } cases[] = {
        {{.nodes = 0, .malleable = 0, .interarrival = 30}, "at least 1 node"},
        {{.nodes = -5, .malleable = 0, .interarrival = 30}, "at least 1 node"},
        {{.nodes = 32, .malleable = -0.1, .interarrival = 30}, "malleable share"},
        {{.nodes = 32, .malleable = 1.5, .interarrival = 30}, "malleable share"},
        {{.nodes = 32, .malleable = NAN, .interarrival = 30}, "malleable share"},
        {{.nodes = 32, .malleable = 0, .interarrival = -1}, "inter-arrival"},
        {{.nodes = 32, .malleable = 0, .interarrival = INFINITY}, "inter-arrival"},
        /* the even types cannot run on one node */
        {{.nodes = 1, .malleable = 0, .interarrival = 30}, "type D (even) has no valid size"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        workload_t wl;
        char err[256] = "";
        assert_int_equal(wl_gen_esp(&cases[i].o, &wl, err, sizeof(err)), -EINVAL);
        assert_contains(err, cases[i].expect);
        assert_int_equal(wl.njobs, 0);
    }
    /* two nodes is enough, and interarrival 0 submits everything at once */
    workload_t wl;
    gen_esp(&wl, 2, 1, 3, 0);
    for (size_t i = 0; i < wl.njobs; i++) {
        assert_true(cons_valid(wl.jobs[i].nodes, wl.jobs[i].constraint));
        assert_near(wl.jobs[i].submit, 0, 0);
        assert_int_equal(wl.jobs[i].id, (int64_t)i + 1);
    }
    wl_free(&wl);
}

/* ---- making trace jobs malleable ---- */

static void one_job(workload_t *wl, int nodes, sched_constraint_t cons)
{
    memset(wl, 0, sizeof(*wl));
    wl_job_t j = {.id = 1, .nodes = nodes, .runtime = 100, .walltime = 100, .constraint = cons};
    assert_int_equal(wl_append(wl, &j), 0);
}

static void check_rule(int nodes, sched_constraint_t cons, int machine, double p, int minn,
                       int maxn)
{
    workload_t wl;
    char err[256] = "";
    one_job(&wl, nodes, cons);
    if (wl_make_malleable(&wl, 1, 5, machine, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    const wl_job_t *j = &wl.jobs[0];
    if (j->min_nodes != minn || j->max_nodes != maxn)
        fail_msg("%d nodes on %d: bounds [%d, %d], expected [%d, %d]", nodes, machine,
                 j->min_nodes, j->max_nodes, minn, maxn);
    assert_int_equal(j->type, SCHED_MALLEABLE);
    assert_int_equal(j->nodes, nodes);
    assert_int_equal(j->pref_nodes, nodes);
    assert_int_equal(j->constraint, cons);
    assert_true(j->has_speedup);
    assert_int_equal(j->speedup.model, SPEEDUP_AMDAHL);
    assert_near(j->speedup.a, 1 - p, 1e-12);
    wl_free(&wl);
}

static void test_malleable_rule(void **state)
{
    (void)state;
    /* E(n) = 1 / (n f + 1 - f) with f = 1 - p. E(pref) > 0.8 means f (pref-1) < 0.25;
     * E(n) > 0.5 means f (n-1) < 1. */
    /* 8 nodes: p 0.96 gives E = 1/1.28 = 0.78, p 0.97 gives 1/1.21 = 0.83;
     * f = 0.03: n - 1 < 33.3, so max 34; min floor(1.6) = 1 */
    check_rule(8, SCHED_CONS_NONE, 1000, 0.97, 1, 34);
    /* 9 nodes: 0.03 * 8 = 0.24 < 0.25 still p 0.97; min floor(1.8) = 1 */
    check_rule(9, SCHED_CONS_NONE, 1000, 0.97, 1, 34);
    /* 10 nodes: 0.03 * 9 = 0.27 fails, 0.02 * 9 = 0.18 passes: p 0.98; min 2;
     * f = 0.02 allows n < 51, capped by the 40-node machine */
    check_rule(10, SCHED_CONS_NONE, 40, 0.98, 2, 40);
    check_rule(12, SCHED_CONS_NONE, 40, 0.98, 2, 40);
    /* 20 nodes: 0.02 * 19 = 0.38 fails, 0.01 * 19 = 0.19 passes: p 0.99; min 4 */
    check_rule(20, SCHED_CONS_NONE, 20, 0.99, 4, 20);
    /* 1 node: every p is 100 % efficient, take the smallest, 0.95 */
    check_rule(1, SCHED_CONS_NONE, 16, 0.95, 1, 16);
    /* 300 nodes: even p 0.999 gives 1 / 1.299 = 0.77, so the best curve, 0.999;
     * min floor(60) = 60; f = 0.001 allows n < 1001, capped at 500 */
    check_rule(300, SCHED_CONS_NONE, 500, 0.999, 60, 500);
    /* a job wider than the machine keeps its size as the maximum */
    check_rule(300, SCHED_CONS_NONE, 100, 0.999, 60, 300);
    /* constraints: bounds moved onto allowed sizes (34 -> 32 pof2, 33 odd,
     * 25 square; min 1 -> 2 even) */
    check_rule(8, SCHED_CONS_POF2, 1000, 0.97, 1, 32);
    check_rule(8, SCHED_CONS_EVEN, 1000, 0.97, 2, 34);
    check_rule(9, SCHED_CONS_ODD, 1000, 0.97, 1, 33);
    check_rule(9, SCHED_CONS_SQUARE, 1000, 0.97, 1, 25);
}

static void test_malleable_existing_models(void **state)
{
    (void)state;
    workload_t wl;
    char err[256] = "";
    /* the job's own model: E = n^-0.5 > 0.5 up to n = 3 (E(4) = 0.5 exactly) */
    one_job(&wl, 2, SCHED_CONS_NONE);
    wl.jobs[0].has_speedup = true;
    wl.jobs[0].speedup = (speedup_t){SPEEDUP_POWER, 0.5, 0};
    assert_int_equal(wl_make_malleable(&wl, 1, 1, 100, err, sizeof(err)), 0);
    assert_int_equal(wl.jobs[0].max_nodes, 3);
    assert_int_equal(wl.jobs[0].min_nodes, 1);
    assert_int_equal(wl.jobs[0].speedup.model, SPEEDUP_POWER);
    assert_near(wl.jobs[0].speedup.a, 0.5, 0);
    wl_free(&wl);

    /* the workload's default: linear scales to the whole machine, and the job
     * keeps using the default rather than getting a model of its own */
    one_job(&wl, 4, SCHED_CONS_NONE);
    wl.has_speedup = true;
    wl.speedup = (speedup_t){SPEEDUP_LINEAR, 0, 0};
    assert_int_equal(wl_make_malleable(&wl, 1, 1, 64, err, sizeof(err)), 0);
    assert_int_equal(wl.jobs[0].max_nodes, 64);
    assert_false(wl.jobs[0].has_speedup);
    wl_free(&wl);

    /* default amdahl:0.07: 0.07 (n-1) < 1 up to n = 15 */
    one_job(&wl, 2, SCHED_CONS_NONE);
    wl.has_speedup = true;
    wl.speedup = (speedup_t){SPEEDUP_AMDAHL, 0.07, 0};
    assert_int_equal(wl_make_malleable(&wl, 1, 1, 100, err, sizeof(err)), 0);
    assert_int_equal(wl.jobs[0].max_nodes, 15);
    wl_free(&wl);

    /* no machine size given: the workload's own */
    one_job(&wl, 8, SCHED_CONS_NONE);
    wl.machine_nodes = 20;
    assert_int_equal(wl_make_malleable(&wl, 1, 1, 0, err, sizeof(err)), 0);
    assert_int_equal(wl.jobs[0].max_nodes, 20);
    wl_free(&wl);

    /* neither: an error, but only when there is a job to change */
    one_job(&wl, 8, SCHED_CONS_NONE);
    assert_int_equal(wl_make_malleable(&wl, 0, 1, 0, err, sizeof(err)), 0);
    assert_int_equal(wl_make_malleable(&wl, 1, 1, 0, err, sizeof(err)), -EINVAL);
    assert_contains(err, "machine size is unknown");
    assert_int_equal(wl.jobs[0].type, SCHED_RIGID);
    wl_free(&wl);
}

static size_t count_malleable(const workload_t *wl, char *mask)
{
    size_t n = 0;
    for (size_t i = 0; i < wl->njobs; i++) {
        bool m = wl->jobs[i].type == SCHED_MALLEABLE;
        if (mask)
            mask[i] = m ? 'M' : '.';
        n += m;
    }
    if (mask)
        mask[wl->njobs] = '\0';
    return n;
}

static void ten_rigid_two_moldable(workload_t *wl)
{
    memset(wl, 0, sizeof(*wl));
    for (int i = 1; i <= 12; i++) {
        wl_job_t j = {.id = i, .nodes = i, .runtime = 10, .walltime = 10};
        if (i > 10) {
            j.type = SCHED_MOLDABLE;
            j.min_nodes = 1;
            j.max_nodes = 12;
        }
        assert_int_equal(wl_append(wl, &j), 0);
    }
}

static void test_malleable_selection(void **state)
{
    (void)state;
    workload_t wl;
    char err[256] = "", m1[16], m2[16];
    static const struct {
        double fraction;
        size_t want;
    } shares[] = {{0, 0}, {0.5, 5}, {0.25, 3} /* round(2.5) */, {0.04, 0}, {1, 10}};
    for (size_t s = 0; s < sizeof(shares) / sizeof(shares[0]); s++) {
        ten_rigid_two_moldable(&wl);
        assert_int_equal(wl_make_malleable(&wl, shares[s].fraction, 9, 64, err, sizeof(err)), 0);
        assert_int_equal(count_malleable(&wl, NULL), shares[s].want);
        /* moldable jobs are never candidates */
        assert_int_equal(wl.jobs[10].type, SCHED_MOLDABLE);
        assert_int_equal(wl.jobs[11].max_nodes, 12);
        wl_free(&wl);
    }

    /* the same seed picks the same jobs; some other seed picks others */
    ten_rigid_two_moldable(&wl);
    assert_int_equal(wl_make_malleable(&wl, 0.5, 9, 64, err, sizeof(err)), 0);
    count_malleable(&wl, m1);
    wl_free(&wl);
    ten_rigid_two_moldable(&wl);
    assert_int_equal(wl_make_malleable(&wl, 0.5, 9, 64, err, sizeof(err)), 0);
    count_malleable(&wl, m2);
    wl_free(&wl);
    assert_string_equal(m1, m2);
    bool differs = false;
    for (uint64_t seed = 10; seed < 30 && !differs; seed++) {
        ten_rigid_two_moldable(&wl);
        assert_int_equal(wl_make_malleable(&wl, 0.5, seed, 64, err, sizeof(err)), 0);
        count_malleable(&wl, m2);
        differs = strcmp(m1, m2) != 0;
        wl_free(&wl);
    }
    assert_true(differs);

    /* a second pass only sees the jobs that are still rigid */
    ten_rigid_two_moldable(&wl);
    assert_int_equal(wl_make_malleable(&wl, 0.5, 9, 64, err, sizeof(err)), 0);
    assert_int_equal(wl_make_malleable(&wl, 0.6, 9, 64, err, sizeof(err)), 0);
    assert_int_equal(count_malleable(&wl, NULL), 8); /* 5 + round(0.6 * 5) */
    wl_free(&wl);

    double bad[] = {-0.1, 1.01, NAN};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ten_rigid_two_moldable(&wl);
        assert_int_equal(wl_make_malleable(&wl, bad[i], 9, 64, err, sizeof(err)), -EINVAL);
        assert_contains(err, "[0, 1]");
        assert_int_equal(count_malleable(&wl, NULL), 0);
        wl_free(&wl);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_copies_mtct),
        cmocka_unit_test(test_sort_and_free),
        cmocka_unit_test(test_swf_conventions),
        cmocka_unit_test(test_swf_cores_per_node),
        cmocka_unit_test(test_swf_nodes_option),
        cmocka_unit_test(test_swf_machine_from_maxprocs),
        cmocka_unit_test(test_swf_extra_fields_and_crlf),
        cmocka_unit_test(test_swf_malformed),
        cmocka_unit_test(test_swf_duplicate),
        cmocka_unit_test(test_swf_lenient),
        cmocka_unit_test(test_swf_bad_options),
        cmocka_unit_test(test_swf_large),
        cmocka_unit_test(test_json_fixture),
        cmocka_unit_test(test_json_bare_array),
        cmocka_unit_test(test_json_errors),
        cmocka_unit_test(test_json_top_level_errors),
        cmocka_unit_test(test_esp_mix),
        cmocka_unit_test(test_esp_sizes_34),
        cmocka_unit_test(test_esp_malleable),
        cmocka_unit_test(test_esp_deterministic),
        cmocka_unit_test(test_esp_bad_options),
        cmocka_unit_test(test_malleable_rule),
        cmocka_unit_test(test_malleable_existing_models),
        cmocka_unit_test(test_malleable_selection),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
