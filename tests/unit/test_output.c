/* Simulator time-line outputs: fmt_time, the events CSV and the Gantt SVG. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/rng.h"
#include "sim/output.h"

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (const char *p = strstr(hay, needle); p; p = strstr(p + len, needle))
        n++;
    return n;
}

static char *path_in(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

static sim_alloc_event_t ev(double t, int64_t job, sim_op_t op, int before, const int *nodes,
                            int n)
{
    return (sim_alloc_event_t){
        .t = t, .job = job, .op = op, .before = before, .after = n, .nodes = nodes, .n = n};
}

static void test_fmt_time(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(fmt_time(12, b, sizeof(b)), "12");
    assert_string_equal(fmt_time(12.5, b, sizeof(b)), "12.5");
    assert_string_equal(fmt_time(0.125, b, sizeof(b)), "0.125");
    assert_string_equal(fmt_time(1.0004, b, sizeof(b)), "1");
    assert_string_equal(fmt_time(1.0006, b, sizeof(b)), "1.001");
    assert_string_equal(fmt_time(-0.0, b, sizeof(b)), "0");
    assert_string_equal(fmt_time(-0.0001, b, sizeof(b)), "0");
    assert_string_equal(fmt_time(-2.5, b, sizeof(b)), "-2.5");
    assert_string_equal(fmt_time(1e9, b, sizeof(b)), "1000000000");
    assert_string_equal(fmt_time(0.1 + 0.2, b, sizeof(b)), "0.3");
    assert_string_equal(fmt_time(100, b, sizeof(b)), "100"); /* zeros before the dot stay */
    assert_string_equal(fmt_time(NAN, b, sizeof(b)), "nan");
    assert_ptr_equal(fmt_time(1, b, sizeof(b)), b);
    char small[4];
    assert_string_equal(fmt_time(123.5, small, sizeof(small)), "123");
}

static void test_op_names(void **state)
{
    (void)state;
    assert_string_equal(sim_op_name(SIM_OP_START), "start");
    assert_string_equal(sim_op_name(SIM_OP_EXPAND), "expand");
    assert_string_equal(sim_op_name(SIM_OP_SHRINK), "shrink");
    assert_string_equal(sim_op_name(SIM_OP_END), "end");
}

static void test_events_csv_content(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    char *path = path_in(dir, "events.csv");
    char err[256] = "";
    events_csv_t *w = events_csv_open(path, err, sizeof(err));
    assert_non_null(w);
    int a[] = {0, 1}, b[] = {2, 3}, c[] = {0, 1, 4, 5, 7}, d[] = {4, 1, 0}, e[] = {0, 1, 2, 3};
    sim_alloc_event_t evs[] = {
        ev(0, 1, SIM_OP_START, 0, a, 2),
        ev(0, 2, SIM_OP_START, 0, b, 2),
        ev(10.5, 1, SIM_OP_EXPAND, 2, c, 5),
        ev(12.25, 1, SIM_OP_SHRINK, 5, d, 3),
        ev(20, 2, SIM_OP_END, 2, NULL, 0),
        ev(30.1254, 1, SIM_OP_END, 3, NULL, 0),
        ev(31, 9000000000LL, SIM_OP_START, 0, e, 4),
    };
    for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
        events_csv_add(w, &evs[i]);
    assert_int_equal(events_csv_close(w, err, sizeof(err)), 0);
    char *text = tu_slurp(path, NULL);
    assert_non_null(text);
    assert_string_equal(text, "time,job,op,nodes_before,nodes_after,node_list\n"
                              "0,1,start,0,2,0-1\n"
                              "0,2,start,0,2,2-3\n"
                              "10.5,1,expand,2,5,\"0-1,4-5,7\"\n"
                              "12.25,1,shrink,5,3,\"0-1,4\"\n"
                              "20,2,end,2,0,\n"
                              "30.125,1,end,3,0,\n"
                              "31,9000000000,start,0,4,0-3\n");
    free(text);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* A node list longer than the writer's first scratch buffer. */
static void test_events_csv_long_list(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    char *path = path_in(dir, "events.csv");
    char err[256] = "";
    events_csv_t *w = events_csv_open(path, err, sizeof(err));
    assert_non_null(w);
    int nodes[500];
    for (int i = 0; i < 500; i++)
        nodes[i] = 2 * i; /* no two consecutive: 500 separate entries */
    sim_alloc_event_t e = ev(1, 1, SIM_OP_START, 0, nodes, 500);
    events_csv_add(w, &e);
    assert_int_equal(events_csv_close(w, err, sizeof(err)), 0);
    char *text = tu_slurp(path, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "\n1,1,start,0,500,\"0,2,4,"));
    assert_non_null(strstr(text, ",996,998\"\n"));
    assert_int_equal(count(text, ","), 5 + 5 + 499);
    free(text);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

static void test_events_csv_errors(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    char *path = path_in(dir, "missing/events.csv");
    char err[512] = "";
    assert_null(events_csv_open(path, err, sizeof(err)));
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "No such file"));
    free(path);
    tu_rmtree(dir);
    free(dir);

    /* A full disk shows when the buffer is flushed: close must say so. */
    if (access("/dev/full", W_OK) != 0)
        return;
    err[0] = '\0';
    events_csv_t *w = events_csv_open("/dev/full", err, sizeof(err));
    assert_non_null(w);
    int a[] = {0, 1};
    sim_alloc_event_t e = ev(0, 1, SIM_OP_START, 0, a, 2);
    events_csv_add(w, &e);
    assert_true(events_csv_close(w, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "/dev/full"));
}

/* 3 jobs on 8 nodes:
 *   job 1: nodes 0-1 at 0, expands to 0-1,4-5 at 10, shrinks to 0-1 at 30, ends at 40
 *   job 2: nodes 2-3 from 0 to 20
 *   job 3: nodes 2-3,6-7 from 20, still running when the chart is written
 * Rectangles: job 1: 1 + 2 + 1, job 2: 1, job 3: 2 (drawn to t = 40). */
static gantt_t *small_chart(void)
{
    gantt_t *g = gantt_create(8);
    assert_non_null(g);
    int n01[] = {1, 0}, n0145[] = {0, 1, 4, 5}, n23[] = {2, 3}, n2367[] = {2, 3, 6, 7};
    sim_alloc_event_t evs[] = {
        ev(0, 1, SIM_OP_START, 0, n01, 2),     ev(0, 2, SIM_OP_START, 0, n23, 2),
        ev(10, 1, SIM_OP_EXPAND, 2, n0145, 4), ev(20, 2, SIM_OP_END, 2, NULL, 0),
        ev(20, 3, SIM_OP_START, 0, n2367, 4),  ev(30, 1, SIM_OP_SHRINK, 4, n01, 2),
        ev(40, 1, SIM_OP_END, 2, NULL, 0),
    };
    for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
        gantt_add(g, &evs[i]);
    return g;
}

static char *write_svg(const gantt_t *g, const char *dir, const char *name, size_t *len)
{
    char *path = path_in(dir, name);
    char err[512] = "";
    int rc = gantt_write_svg(g, path, "test <chart> & co", err, sizeof(err));
    if (rc != 0)
        fail_msg("gantt_write_svg: %s", err);
    char *text = tu_slurp(path, len);
    assert_non_null(text);
    free(path);
    return text;
}

static void assert_svg_frame(const char *text, size_t len)
{
    assert_true(len > 12);
    assert_memory_equal(text, "<svg", 4);
    assert_string_equal(text + len - 7, "</svg>\n");
    assert_int_equal(count(text, "<svg"), 1);
    assert_int_equal(count(text, "<g"), count(text, "</g>"));
}

static void test_gantt_small(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    gantt_t *g = small_chart();
    size_t len1, len2;
    char *s1 = write_svg(g, dir, "a.svg", &len1);
    char *s2 = write_svg(g, dir, "b.svg", &len2);
    assert_svg_frame(s1, len1);
    assert_int_equal(len1, len2);
    assert_memory_equal(s1, s2, len1);

    assert_int_equal(count(s1, "class=\"j\""), 7);
    assert_int_equal(count(s1, "class=\"r\""), 2);
    assert_int_equal(count(s1, "<title>"), 3);
    assert_non_null(strstr(s1, "test &lt;chart&gt; &amp; co"));
    assert_non_null(strstr(s1, "<title>job 1: 0-40 s, up to 4 nodes</title>"));
    assert_non_null(strstr(s1, "<title>job 3: 20-40 s, up to 4 nodes, still running</title>"));

    /* Layout: plot x 70..1170 for t 0..40 (27.5 px/s), y 50..620 for 8 rows (71.25 px
     * each). Job 3, still open, reaches the right edge of the plot. */
    assert_non_null(strstr(s1, "<rect class=\"j\" x=\"620\" y=\"192.5\" width=\"550\" "
                               "height=\"142.5\"/>"));
    assert_non_null(strstr(s1, "<rect class=\"j\" x=\"620\" y=\"477.5\" width=\"550\" "
                               "height=\"142.5\"/>"));
    /* Job 1 after its expand: two runs, 0-1 and 4-5, between t = 10 and 30. */
    assert_non_null(strstr(s1, "<rect class=\"j\" x=\"345\" y=\"50\" width=\"550\" "
                               "height=\"142.5\"/>"));
    assert_non_null(strstr(s1, "<rect class=\"j\" x=\"345\" y=\"335\" width=\"550\" "
                               "height=\"142.5\"/>"));
    /* The resize ticks cover the rows held before and after: 0-1 and 4-5. */
    assert_non_null(strstr(s1, "<path class=\"r\" d=\"M345 50V192.5M345 335V477.5\"/>"));
    assert_non_null(strstr(s1, "<path class=\"r\" d=\"M895 50V192.5M895 335V477.5\"/>"));
    /* Node ticks 0..7 and time in seconds. */
    assert_non_null(strstr(s1, ">7</text>"));
    assert_non_null(strstr(s1, "time (s)"));
    assert_non_null(strstr(s1, ">40</text>"));
    /* Jobs differ in colour. */
    assert_int_equal(count(s1, "<g fill=\"hsl("), 3);

    free(s1);
    free(s2);
    gantt_destroy(g);
    tu_rmtree(dir);
    free(dir);
}

static void test_gantt_empty(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    gantt_t *g = gantt_create(4);
    assert_non_null(g);
    size_t len;
    char *s = write_svg(g, dir, "empty.svg", &len);
    assert_svg_frame(s, len);
    assert_int_equal(count(s, "class=\"j\""), 0);
    assert_int_equal(count(s, "class=\"r\""), 0);
    assert_non_null(strstr(s, "time (s)"));
    assert_non_null(strstr(s, ">3</text>"));
    free(s);
    gantt_destroy(g);
    tu_rmtree(dir);
    free(dir);
}

/* Nodes outside the cluster, duplicates, a NULL list, a NaN time, an end for an
 * unknown job: dropped or ignored, never a crash. */
static void test_gantt_bad_input(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    gantt_t *g = gantt_create(4);
    int bad[] = {-1, 0, 0, 1, 4, 1000};
    sim_alloc_event_t evs[] = {
        ev(0, 1, SIM_OP_START, 0, bad, 6),   ev(NAN, 1, SIM_OP_EXPAND, 2, bad, 6),
        ev(5, 2, SIM_OP_START, 0, NULL, 3),  ev(6, 7, SIM_OP_END, 1, NULL, 0),
        ev(10, 1, SIM_OP_END, 2, NULL, 0),
    };
    for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
        gantt_add(g, &evs[i]);
    gantt_add(g, NULL);
    gantt_add(NULL, &evs[0]);
    size_t len;
    char *s = write_svg(g, dir, "bad.svg", &len);
    assert_svg_frame(s, len);
    /* Only job 1's nodes 0-1 over 0..10: one rectangle, the full plot width. */
    assert_int_equal(count(s, "class=\"j\""), 1);
    assert_non_null(strstr(s, "<rect class=\"j\" x=\"70\" y=\"50\" width=\"1100\" height=\"285\"/>"));
    free(s);
    gantt_destroy(g);
    assert_null(gantt_create(-1));
    tu_rmtree(dir);
    free(dir);
}

static void test_gantt_write_errors(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    gantt_t *g = small_chart();
    char *path = path_in(dir, "missing/gantt.svg");
    char err[512] = "";
    assert_true(gantt_write_svg(g, path, "t", err, sizeof(err)) < 0);
    assert_non_null(strstr(err, path));
    if (access("/dev/full", W_OK) == 0) {
        err[0] = '\0';
        assert_true(gantt_write_svg(g, "/dev/full", "t", err, sizeof(err)) < 0);
        assert_non_null(strstr(err, "/dev/full"));
    }
    free(path);
    gantt_destroy(g);
    tu_rmtree(dir);
    free(dir);
}

/* The power chart without samples, without a corridor, with samples out of order or
 * not finite (dropped), and on a full disk. */
static void test_power_chart_edges(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    char *path = path_in(dir, "p.svg");
    char err[512] = "";
    power_chart_t *c = power_chart_open(path, err, sizeof(err));
    assert_non_null(c);
    assert_int_equal(power_chart_close(c, "empty", err, sizeof(err)), 0);
    size_t len;
    char *s = tu_slurp(path, &len);
    assert_svg_frame(s, len);
    assert_null(strstr(s, "class=\"draw\""));
    assert_non_null(strstr(s, "0 changes of the draw, 0 periods outside the corridor"));
    free(s);

    assert_non_null(c = power_chart_open(path, err, sizeof(err)));
    power_chart_add(c, 0, 100, 0, INFINITY, true);
    power_chart_add(c, 10, 300, 0, INFINITY, true);
    power_chart_add(c, 5, 999, 0, INFINITY, true);   /* before the last: dropped */
    power_chart_add(c, NAN, 999, 0, INFINITY, true); /* dropped */
    power_chart_add(c, 20, 100, 0, INFINITY, true);
    assert_int_equal(power_chart_close(c, "no corridor", err, sizeof(err)), 0);
    s = tu_slurp(path, &len);
    assert_svg_frame(s, len);
    assert_null(strstr(s, "class=\"corridor\""));
    assert_int_equal(count(s, "class=\"out\""), 0);
    /* 0..20 s over 70..1170 px; 0..350 W (300 W + 5 %, to a 50 W tick) over 620..50 px */
    assert_non_null(
        strstr(s, "<path class=\"draw\" d=\"M70 457.14H620V131.43H1170V457.14H1170\"/>"));
    free(s);

    /* below the corridor: outside while jobs are queued or running, not after */
    assert_non_null(c = power_chart_open(path, err, sizeof(err)));
    power_chart_add(c, 0, 10, 50, 150, true);
    power_chart_add(c, 10, 100, 50, 150, true);
    power_chart_add(c, 20, 10, 50, 150, false);
    power_chart_add(c, 30, 10, 50, 150, false);
    assert_int_equal(power_chart_close(c, "idle at the end", err, sizeof(err)), 0);
    s = tu_slurp(path, &len);
    assert_int_equal(count(s, "class=\"out\""), 1);
    assert_non_null(strstr(s, "<title>outside the corridor: 0-10 s</title>"));
    assert_non_null(strstr(s, "2 changes of the draw, 1 period outside the corridor"));
    free(s);

    char *missing = path_in(dir, "missing/p.svg");
    assert_null(power_chart_open(missing, err, sizeof(err)));
    assert_non_null(strstr(err, "cannot create power chart"));
    assert_non_null(strstr(err, missing));
    if (access("/dev/full", W_OK) == 0) {
        assert_non_null(c = power_chart_open("/dev/full", err, sizeof(err)));
        power_chart_add(c, 0, 100, 50, 150, true);
        err[0] = '\0';
        assert_true(power_chart_close(c, "t", err, sizeof(err)) < 0);
        assert_non_null(strstr(err, "writing power chart /dev/full"));
    }
    assert_int_equal(power_chart_close(NULL, "t", err, sizeof(err)), 0);
    free(missing);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* Long spans switch the time labels to h:mm, then to days. */
static void test_gantt_time_units(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    int n[] = {0};
    struct {
        double end;
        const char *unit, *label;
    } cases[] = {
        {7200, "time (s)", ">7000</text>"},
        {3 * 3600, "time (h:mm)", ">2:30</text>"},
        {30 * 86400, "time (days)", ">20d</text>"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        gantt_t *g = gantt_create(1);
        sim_alloc_event_t a = ev(0, 1, SIM_OP_START, 0, n, 1);
        sim_alloc_event_t b = ev(cases[i].end, 1, SIM_OP_END, 1, NULL, 0);
        gantt_add(g, &a);
        gantt_add(g, &b);
        size_t len;
        char *s = write_svg(g, dir, "units.svg", &len);
        assert_non_null(strstr(s, cases[i].unit));
        assert_non_null(strstr(s, cases[i].label));
        free(s);
        gantt_destroy(g);
    }
    tu_rmtree(dir);
    free(dir);
}

typedef struct big_ev {
    sim_alloc_event_t e;
    size_t seq;
} big_ev_t;

static int cmp_big(const void *a, const void *b)
{
    const big_ev_t *x = a, *y = b;
    if (x->e.t != y->e.t)
        return x->e.t < y->e.t ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int *block(rng_t *r, int nnodes, int size, int extra_gap)
{
    int *nodes = malloc((size_t)size * sizeof(int));
    int first = (int)rng_below(r, (uint64_t)(nnodes - size - extra_gap));
    for (int i = 0; i < size; i++)
        nodes[i] = first + i + (i >= size / 2 ? extra_gap : 0);
    return nodes;
}

/* Random jobs, some split in two runs, half of them resized. */
static size_t random_events(rng_t *r, int nnodes, int njobs, big_ev_t *out)
{
    size_t n = 0;
    for (int j = 1; j <= njobs; j++) {
        double start = rng_uniform(r) * 86400, dur = 60 + rng_exp(r, 3600);
        int size = 1 + (int)rng_below(r, 400);
        int gap = rng_below(r, 3) == 0 ? 1 + (int)rng_below(r, 50) : 0;
        int *nodes = block(r, nnodes, size, gap);
        out[n] = (big_ev_t){ev(start, j, SIM_OP_START, 0, nodes, size), n};
        n++;
        if (rng_below(r, 2) == 0) {
            bool grow = rng_below(r, 2) == 0 || size == 1;
            int nsize = grow ? size + 1 + (int)rng_below(r, 100) : size / 2;
            int *nn = block(r, nnodes, nsize, 0);
            out[n] = (big_ev_t){ev(start + dur / 2, j, grow ? SIM_OP_EXPAND : SIM_OP_SHRINK,
                                   size, nn, nsize),
                                n};
            n++;
        }
        out[n] = (big_ev_t){ev(start + dur, j, SIM_OP_END, 0, NULL, 0), n};
        n++;
    }
    qsort(out, n, sizeof(*out), cmp_big);
    return n;
}

static void test_gantt_big(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    enum { NNODES = 10000, NJOBS = 2000 };
    big_ev_t *evs = calloc(3 * NJOBS, sizeof(*evs));
    rng_t r;
    rng_seed(&r, 42);
    size_t n = random_events(&r, NNODES, NJOBS, evs);
    gantt_t *g = gantt_create(NNODES);
    for (size_t i = 0; i < n; i++)
        gantt_add(g, &evs[i].e);
    size_t len;
    char *s = write_svg(g, dir, "big.svg", &len);
    assert_svg_frame(s, len);
    assert_true(len < 4u << 20);
    assert_int_equal(count(s, "<title>"), NJOBS);
    size_t rects = count(s, "class=\"j\"");
    assert_true(rects >= NJOBS && rects <= 6 * NJOBS);
    assert_true(count(s, "class=\"r\"") > NJOBS / 4);
    assert_non_null(strstr(s, "time (h:mm)"));
    assert_non_null(strstr(s, ">9000</text>"));
    free(s);
    gantt_destroy(g);

    /* Past 2000 jobs, no tooltips: they would dominate the file. */
    g = gantt_create(NNODES);
    for (size_t i = 0; i < n; i++)
        gantt_add(g, &evs[i].e);
    int one[] = {5};
    sim_alloc_event_t extra = ev(0, NJOBS + 1, SIM_OP_START, 0, one, 1);
    gantt_add(g, &extra);
    s = write_svg(g, dir, "big2.svg", &len);
    assert_svg_frame(s, len);
    assert_int_equal(count(s, "<title>"), 0);
    free(s);
    gantt_destroy(g);

    for (size_t i = 0; i < n; i++)
        free((void *)evs[i].e.nodes);
    free(evs);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fmt_time),
        cmocka_unit_test(test_op_names),
        cmocka_unit_test(test_events_csv_content),
        cmocka_unit_test(test_events_csv_long_list),
        cmocka_unit_test(test_events_csv_errors),
        cmocka_unit_test(test_gantt_small),
        cmocka_unit_test(test_gantt_empty),
        cmocka_unit_test(test_gantt_bad_input),
        cmocka_unit_test(test_gantt_write_errors),
        cmocka_unit_test(test_gantt_time_units),
        cmocka_unit_test(test_gantt_big),
        cmocka_unit_test(test_power_chart_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
