/* Speedup models: values computed by hand, the Downey breakpoints, parsing and
 * formatting, and the MTCT ratio derived from a model. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "sim/speedup.h"

#define EPS 1e-9

/* cmocka's assert_float_equal works in float; these values need double. */
#define assert_near(a, b, eps)                                                               \
    do {                                                                                     \
        double a_ = (a), b_ = (b);                                                           \
        if (!(fabs(a_ - b_) <= (eps)))                                                       \
            fail_msg("%s = %.17g, expected %.17g (+-%g)", #a, a_, b_, (double)(eps));        \
    } while (0)

static speedup_t model(speedup_model_t m, double a, double b) { return (speedup_t){m, a, b}; }

static void test_linear(void **state)
{
    (void)state;
    speedup_t m = model(SPEEDUP_LINEAR, 0, 0);
    assert_near(speedup_eval(&m, 1), 1, EPS);
    assert_near(speedup_eval(&m, 7), 7, EPS);
    assert_near(speedup_eval(&m, 2.5), 2.5, EPS);
}

static void test_amdahl(void **state)
{
    (void)state;
    /* f = 0.16, n = 4: 1 / (0.16 + 0.84 / 4) = 1 / 0.37 */
    speedup_t m = model(SPEEDUP_AMDAHL, 0.16, 0);
    assert_near(speedup_eval(&m, 4), 1 / 0.37, EPS);
    assert_near(speedup_eval(&m, 4), 2.7027027027, 1e-9);
    assert_near(speedup_eval(&m, 1), 1, EPS);
    /* f = 0.5 never reaches 2 */
    m.a = 0.5;
    assert_near(speedup_eval(&m, 2), 1 / 0.75, EPS);
    assert_true(speedup_eval(&m, 1e6) < 2);
    /* the extremes: f = 0 is linear, f = 1 does not scale at all */
    m.a = 0;
    assert_near(speedup_eval(&m, 16), 16, EPS);
    m.a = 1;
    assert_near(speedup_eval(&m, 16), 1, EPS);
}

static void test_power(void **state)
{
    (void)state;
    /* 16^0.8 = 2^3.2 */
    speedup_t m = model(SPEEDUP_POWER, 0.8, 0);
    assert_near(speedup_eval(&m, 16), 9.18958683997628, 1e-9);
    m.a = 0.5;
    assert_near(speedup_eval(&m, 9), 3, EPS);
    m.a = 1;
    assert_near(speedup_eval(&m, 5), 5, EPS);
}

static void test_below_one_node(void **state)
{
    (void)state;
    speedup_t ms[] = {model(SPEEDUP_LINEAR, 0, 0), model(SPEEDUP_AMDAHL, 0.1, 0),
                      model(SPEEDUP_POWER, 0.7, 0), model(SPEEDUP_DOWNEY, 8, 0.5),
                      model(SPEEDUP_DOWNEY, 8, 2)};
    for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
        assert_near(speedup_eval(&ms[i], 0), 1, EPS);
        assert_near(speedup_eval(&ms[i], 0.5), 1, EPS);
        assert_near(speedup_eval(&ms[i], -3), 1, EPS);
        assert_near(speedup_eval(&ms[i], NAN), 1, EPS);
    }
}

static void test_downey_low(void **state)
{
    (void)state;
    /* A = 8, sigma = 0.5; breakpoints at n = A = 8 and n = 2A - 1 = 15. */
    speedup_t m = model(SPEEDUP_DOWNEY, 8, 0.5);
    assert_near(speedup_eval(&m, 1), 1, EPS);
    /* 8*4 / (8 + 0.5*3/2) = 32 / 8.75 */
    assert_near(speedup_eval(&m, 4), 32 / 8.75, EPS);
    /* 8*8 / 9.75 from both sides of the first breakpoint */
    assert_near(speedup_eval(&m, 8), 64 / 9.75, EPS);
    /* second segment: 8*12 / (0.5*7.5 + 12*0.75) = 96 / 12.75 */
    assert_near(speedup_eval(&m, 12), 96 / 12.75, EPS);
    assert_near(speedup_eval(&m, 15), 8, EPS);
    assert_near(speedup_eval(&m, 20), 8, EPS);
    assert_near(speedup_eval(&m, 1000), 8, EPS);
    /* sigma = 0: linear up to A, then flat */
    m.b = 0;
    assert_near(speedup_eval(&m, 5), 5, EPS);
    assert_near(speedup_eval(&m, 8), 8, EPS);
    assert_near(speedup_eval(&m, 12), 8, EPS);
}

static void test_downey_high(void **state)
{
    (void)state;
    /* A = 8, sigma = 2; breakpoint at A + A*sigma - sigma = 22. */
    speedup_t m = model(SPEEDUP_DOWNEY, 8, 2);
    assert_near(speedup_eval(&m, 1), 1, EPS);
    /* 4*8*3 / (2*(4+7) + 8) = 96 / 30 */
    assert_near(speedup_eval(&m, 4), 3.2, EPS);
    /* 22*8*3 / (2*29 + 8) = 528 / 66 */
    assert_near(speedup_eval(&m, 22), 8, EPS);
    assert_near(speedup_eval(&m, 30), 8, EPS);
    /* 10*24 / (2*17 + 8) = 240 / 42 */
    assert_near(speedup_eval(&m, 10), 240.0 / 42, EPS);
}

static void test_downey_continuity(void **state)
{
    (void)state;
    const double d = 1e-7;
    double As[] = {2, 8, 37.5};
    double sigmas[] = {0.25, 0.5, 0.99, 1, 1.01, 2, 5};
    for (size_t i = 0; i < sizeof(As) / sizeof(As[0]); i++)
        for (size_t k = 0; k < sizeof(sigmas) / sizeof(sigmas[0]); k++) {
            double A = As[i], s = sigmas[k];
            speedup_t m = model(SPEEDUP_DOWNEY, A, s);
            double bps[2];
            int nb = 0;
            if (s <= 1) {
                bps[nb++] = A;
                bps[nb++] = 2 * A - 1;
            } else {
                bps[nb++] = A + A * s - s;
            }
            for (int b = 0; b < nb; b++)
                assert_near(speedup_eval(&m, bps[b] - d), speedup_eval(&m, bps[b] + d),
                                   1e-5);
            /* never more than A, never decreasing */
            double prev = 0;
            for (double n = 1; n < 4 * A; n += 0.5) {
                double v = speedup_eval(&m, n);
                assert_true(v <= A + EPS);
                assert_true(v >= prev - EPS);
                prev = v;
            }
        }
    /* the two regimes meet at sigma = 1 */
    speedup_t lo = model(SPEEDUP_DOWNEY, 8, 1), hi = model(SPEEDUP_DOWNEY, 8, 1 + 1e-12);
    for (int n = 1; n <= 20; n++)
        assert_near(speedup_eval(&lo, n), speedup_eval(&hi, n), 1e-9);
    /* sigma = 1, n = 5: 8*5 / (8 + 4/2) = 4 */
    assert_near(speedup_eval(&lo, 5), 4, EPS);
}

static void parse_ok(const char *text, speedup_model_t mod, double a, double b)
{
    speedup_t m = {SPEEDUP_LINEAR, -7, -7};
    char err[256] = "";
    if (speedup_parse(text, &m, err, sizeof(err)) != 0)
        fail_msg("parse '%s' failed: %s", text, err);
    assert_int_equal(m.model, mod);
    if (mod != SPEEDUP_LINEAR)
        assert_near(m.a, a, 0);
    if (mod == SPEEDUP_DOWNEY)
        assert_near(m.b, b, 0);
}

static void parse_bad(const char *text, const char *expect)
{
    speedup_t m = model(SPEEDUP_POWER, 0.5, 0);
    char err[256] = "";
    int rc = speedup_parse(text, &m, err, sizeof(err));
    if (rc != -EINVAL)
        fail_msg("parse '%s' returned %d, expected -EINVAL", text ? text : "(null)", rc);
    if (!strstr(err, expect))
        fail_msg("parse '%s': message '%s' lacks '%s'", text ? text : "(null)", err, expect);
    /* the output is untouched on error */
    assert_int_equal(m.model, SPEEDUP_POWER);
    assert_near(m.a, 0.5, 0);
}

static void test_parse(void **state)
{
    (void)state;
    parse_ok("linear", SPEEDUP_LINEAR, 0, 0);
    parse_ok("amdahl:0.05", SPEEDUP_AMDAHL, 0.05, 0);
    parse_ok("amdahl:0", SPEEDUP_AMDAHL, 0, 0);
    parse_ok("amdahl:1", SPEEDUP_AMDAHL, 1, 0);
    parse_ok("amdahl:5e-3", SPEEDUP_AMDAHL, 0.005, 0);
    parse_ok("power:0.8", SPEEDUP_POWER, 0.8, 0);
    parse_ok("power:1", SPEEDUP_POWER, 1, 0);
    parse_ok("downey:8:0.5", SPEEDUP_DOWNEY, 8, 0.5);
    parse_ok("downey:1:0", SPEEDUP_DOWNEY, 1, 0);
    parse_ok("downey:64:2.5", SPEEDUP_DOWNEY, 64, 2.5);
}

static void test_parse_errors(void **state)
{
    (void)state;
    parse_bad(NULL, "missing");
    parse_bad("", "unknown speedup model ''");
    parse_bad("gustafson:0.1", "unknown speedup model 'gustafson'");
    parse_bad("Linear", "unknown speedup model");
    parse_bad("linear:2", "takes no parameter");
    parse_bad("amdahl", "expected amdahl:F");
    parse_bad("amdahl:", "expected amdahl:F");
    parse_bad("amdahl:x", "expected amdahl:F");
    parse_bad("amdahl:0.1x", "expected amdahl:F");
    parse_bad("amdahl: ", "expected amdahl:F");
    parse_bad("amdahl:0.1:2", "expected amdahl:F");
    parse_bad("amdahl:nan", "expected amdahl:F");
    parse_bad("amdahl:inf", "expected amdahl:F");
    parse_bad("amdahl:1.5", "must be in [0, 1]");
    parse_bad("amdahl:-0.1", "must be in [0, 1]");
    parse_bad("power", "expected power:ALPHA");
    parse_bad("power:0", "must be in (0, 1]");
    parse_bad("power:-0.5", "must be in (0, 1]");
    parse_bad("power:1.01", "must be in (0, 1]");
    parse_bad("downey", "expected downey:A:SIGMA");
    parse_bad("downey:8", "expected downey:A:SIGMA");
    parse_bad("downey:8:", "expected downey:A:SIGMA");
    parse_bad("downey::1", "expected downey:A:SIGMA");
    parse_bad("downey:8:1:2", "expected downey:A:SIGMA");
    parse_bad("downey:0.5:1", "A must be >= 1");
    parse_bad("downey:8:-1", "SIGMA must be >= 0");
}

static void test_format(void **state)
{
    (void)state;
    char buf[64];
    speedup_t m = model(SPEEDUP_AMDAHL, 0.05, 0);
    assert_int_equal(speedup_format(&m, buf, sizeof(buf)), (int)strlen("amdahl:0.05"));
    assert_string_equal(buf, "amdahl:0.05");
    m = model(SPEEDUP_POWER, 0.8, 0);
    speedup_format(&m, buf, sizeof(buf));
    assert_string_equal(buf, "power:0.8");
    m = model(SPEEDUP_DOWNEY, 8, 0.5);
    speedup_format(&m, buf, sizeof(buf));
    assert_string_equal(buf, "downey:8:0.5");
    m = model(SPEEDUP_LINEAR, 3, 4);
    speedup_format(&m, buf, sizeof(buf));
    assert_string_equal(buf, "linear");
    /* truncation is reported like snprintf */
    m = model(SPEEDUP_AMDAHL, 0.05, 0);
    assert_int_equal(speedup_format(&m, buf, 4), 11);
    assert_string_equal(buf, "amd");

    /* what is formatted parses back to the same bits */
    speedup_t in[] = {model(SPEEDUP_AMDAHL, 0.1234567890123, 0), model(SPEEDUP_AMDAHL, 1.0 / 3, 0),
                      model(SPEEDUP_POWER, 0.7071067811865476, 0),
                      model(SPEEDUP_DOWNEY, 12.345, 0.1 + 0.2)};
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        speedup_t out;
        char err[256];
        speedup_format(&in[i], buf, sizeof(buf));
        assert_int_equal(speedup_parse(buf, &out, err, sizeof(err)), 0);
        assert_int_equal(out.model, in[i].model);
        assert_true(out.a == in[i].a);
        if (in[i].model == SPEEDUP_DOWNEY)
            assert_true(out.b == in[i].b);
    }
}

static void test_mtct(void **state)
{
    (void)state;
    /* Amdahl: n (f + (1-f)/n) - 1 = f (n - 1) */
    speedup_t m = model(SPEEDUP_AMDAHL, 0.05, 0);
    assert_near(speedup_mtct(&m, 10), 0.45, 1e-12);
    assert_near(speedup_mtct(&m, 1), 0, 0);
    for (int n = 1; n <= 64; n *= 2)
        assert_near(speedup_mtct(&m, n), 0.05 * (n - 1), 1e-12);
    m.a = 1;
    assert_near(speedup_mtct(&m, 8), 7, 1e-12);
    /* perfect scaling loses nothing, whatever the rounding */
    m = model(SPEEDUP_LINEAR, 0, 0);
    assert_near(speedup_mtct(&m, 1000), 0, 0);
    m = model(SPEEDUP_AMDAHL, 0, 0);
    for (int n = 1; n <= 1000; n++)
        assert_true(speedup_mtct(&m, n) >= 0);
    /* power 0.5 on 4 nodes: 4 / 2 - 1 */
    m = model(SPEEDUP_POWER, 0.5, 0);
    assert_near(speedup_mtct(&m, 4), 1, 1e-12);
    /* Downey past the knee: n / A - 1 */
    m = model(SPEEDUP_DOWNEY, 8, 0.5);
    assert_near(speedup_mtct(&m, 32), 3, 1e-12);
    /* fewer than one node counts as one */
    m = model(SPEEDUP_AMDAHL, 0.2, 0);
    assert_near(speedup_mtct(&m, 0), 0, 0);
    assert_near(speedup_mtct(&m, -4), 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear),
        cmocka_unit_test(test_amdahl),
        cmocka_unit_test(test_power),
        cmocka_unit_test(test_below_one_node),
        cmocka_unit_test(test_downey_low),
        cmocka_unit_test(test_downey_high),
        cmocka_unit_test(test_downey_continuity),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_mtct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
