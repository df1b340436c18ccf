/* The power forecast (src/sched/forecast.c): series whose forecast is known exactly
 * (a line, a pure season, a constant), a step, a noisy trending season where
 * Holt-Winters must beat the last-value forecast, the clamp at 0, the n = 3 edge,
 * the rejected inputs, and determinism. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "testutil.h"

#include "common/rng.h"
#include "sched/forecast.h"

#define PI 3.14159265358979323846

static void params_ok(const forecast_fit_t *f)
{
    assert_true(f->alpha >= 0 && f->alpha <= 1);
    assert_true(f->beta >= 0 && f->beta <= 1);
    assert_true(f->gamma >= 0 && f->gamma <= 1);
    assert_true(f->scored > 0);
    assert_true(f->mae >= 0 && f->rmse >= f->mae - 1e-12 && f->mape >= 0 && f->mae_h >= 0);
}

static forecast_fit_t fit_ok(const double *y, int n, int season, int h, double *out)
{
    forecast_fit_t f;
    assert_int_equal(forecast_holt_winters(y, n, season, h, out, &f), 0);
    params_ok(&f);
    return f;
}

/* a line is forecast exactly, with or without a season */
static void linear_trend(void **state)
{
    (void)state;
    double y[50], out[5];
    for (int t = 0; t < 50; t++)
        y[t] = 100 + 3 * t;
    static const int seasons[] = {0, 12};
    for (int s = 0; s < 2; s++) {
        forecast_fit_t f = fit_ok(y, 50, seasons[s], 5, out);
        assert_int_equal(f.season, seasons[s]);
        assert_int_equal(f.scored, 50 - (seasons[s] ? 12 : 2));
        assert_true(f.mae < 1e-9 && f.rmse < 1e-9 && f.mape < 1e-9 && f.mae_h < 1e-9);
        assert_true(fabs(f.naive_mae - 3) < 1e-9);
        for (int k = 0; k < 5; k++)
            assert_true(fabs(out[k] - (100 + 3 * (50 + k))) < 1e-6);
    }
}

/* a pure season of length 8: the next season exactly, the naive forecast far off */
static void pure_season(void **state)
{
    (void)state;
    double y[64], out[10];
    for (int t = 0; t < 64; t++)
        y[t] = 200 + 50 * sin(2 * PI * t / 8) + (t % 8 == 3 ? 40 : 0);
    forecast_fit_t f = fit_ok(y, 64, 8, 10, out);
    assert_int_equal(f.season, 8);
    assert_true(f.mae < 1e-6);
    assert_true(f.mae_h < 1e-6);
    assert_true(f.naive_mae > 30);
    for (int k = 0; k < 10; k++)
        assert_true(fabs(out[k] - y[(64 + k) % 8]) < 1e-6);
    /* Holt's linear trend cannot follow it: worse than Holt-Winters */
    forecast_fit_t g = fit_ok(y, 64, 0, 10, out);
    assert_true(g.mae > 10);
}

/* a step from 100 W to 200 W: the forecast follows it within a few samples */
static void step_change(void **state)
{
    (void)state;
    double y[60], out[3];
    for (int t = 0; t < 60; t++)
        y[t] = t < 40 ? 100 : 200;
    static const int seasons[] = {0, 4};
    for (int s = 0; s < 2; s++) {
        forecast_fit_t f = fit_ok(y, 60, seasons[s], 3, out);
        for (int k = 0; k < 3; k++)
            assert_true(fabs(out[k] - 200) < 1);
        /* the naive forecast errs only at the step; the fit is no worse in squares */
        assert_true(fabs(f.naive_rmse - sqrt(100.0 * 100 / f.scored)) < 1e-9);
        assert_true(f.rmse <= f.naive_rmse + 1e-9);
    }
}

/* a trending season with uniform noise: Holt-Winters beats the last value, one step
 * and six steps ahead */
static void noisy_trend_season(void **state)
{
    (void)state;
    enum { N = 240, M = 24, H = 6 };
    double y[N + H], out[H];
    rng_t r;
    rng_seed(&r, 42);
    for (int t = 0; t < N + H; t++)
        y[t] = 500 + 2 * t + 80 * sin(2 * PI * t / M) + 40 * (rng_uniform(&r) - 0.5);
    forecast_fit_t f = fit_ok(y, N, M, H, out);
    assert_true(f.mae < 0.75 * f.naive_mae);
    assert_true(f.rmse < 0.75 * f.naive_rmse);
    assert_true(f.mae < 15);   /* the noise alone: 10 W mean absolute */
    assert_true(f.mae_h < 25);
    assert_true(f.mape < 3);
    for (int k = 0; k < H; k++) /* within the noise of the samples to come */
        assert_true(fabs(out[k] - y[N + k]) < 40);
    /* without the season, worse than with it */
    forecast_fit_t g = fit_ok(y, N, 0, H, out);
    assert_true(g.mae > f.mae);
}

/* a jump between the first two samples is no trend: the flat start wins and the
 * forecast is the level, not a line rising 1000 W a sample */
static void flat_start(void **state)
{
    (void)state;
    double y[30], out[3];
    for (int t = 0; t < 30; t++)
        y[t] = t ? 1000 : 0;
    forecast_fit_t f = fit_ok(y, 30, 0, 3, out);
    assert_int_equal(f.flat_start, 1);
    for (int k = 0; k < 3; k++)
        assert_true(fabs(out[k] - 1000) < 1e-9);
    assert_true(f.mae < 1e-9);
}

/* random steps and noise, as a cluster's draw: never worse than the last value in
 * squares (the search contains it), whatever the season */
static void never_worse_than_naive(void **state)
{
    (void)state;
    double y[200], out[4];
    rng_t r;
    rng_seed(&r, 3);
    for (int round = 0; round < 50; round++) {
        int n = 3 + (int)rng_below(&r, 198), m = (int)rng_below(&r, 13);
        if (m > n / 2)
            m = 0;
        double level = 500;
        for (int t = 0; t < n; t++) {
            if (rng_uniform(&r) < 0.1)
                level = 100 + 3000 * rng_uniform(&r);
            y[t] = level + (round % 2 ? 50 * rng_uniform(&r) : 0);
        }
        forecast_fit_t f = fit_ok(y, n, m, 4, out);
        assert_true(f.rmse <= f.naive_rmse * (1 + 1e-12) + 1e-9);
        for (int k = 0; k < 4; k++)
            assert_true(out[k] >= 0);
    }
}

/* a constant is forecast as itself; an all-zero series has no MAPE */
static void constant(void **state)
{
    (void)state;
    double y[12], out[4];
    for (int v = 0; v < 2; v++) {
        for (int t = 0; t < 12; t++)
            y[t] = v ? 150 : 0;
        for (int s = 0; s <= 4; s += 4) {
            forecast_fit_t f = fit_ok(y, 12, s, 4, out);
            assert_true(f.mae == 0 && f.rmse == 0 && f.mape == 0 && f.mae_h == 0);
            assert_true(f.naive_mae == 0);
            assert_int_equal(f.mape_n, v ? f.scored : 0);
            for (int k = 0; k < 4; k++)
                assert_true(out[k] == y[0]);
        }
    }
}

/* the shortest series, and a falling line whose forecast would go negative */
static void short_and_clamped(void **state)
{
    (void)state;
    double y[10] = {1, 2, 3}, out[3];
    forecast_fit_t f = fit_ok(y, 3, 0, 3, out);
    assert_int_equal(f.scored, 1);
    assert_int_equal(f.scored_h, 0); /* 3 steps ahead of sample 1 is past the end */
    for (int k = 0; k < 3; k++)
        assert_true(fabs(out[k] - (4 + k)) < 1e-9);
    f = fit_ok(y, 3, 0, 1, out);
    assert_int_equal(f.scored_h, 1);
    double x[4] = {1, 2, 1, 2};
    fit_ok(x, 4, 2, 1, out); /* two seasons of 2 */
    for (int t = 0; t < 10; t++)
        y[t] = 100 - 10 * t; /* 100 .. 10 */
    fit_ok(y, 10, 0, 3, out);
    assert_true(fabs(out[0]) < 1e-6);
    assert_true(out[1] == 0 && out[2] == 0);
}

static void bad_input(void **state)
{
    (void)state;
    double y[16] = {0}, out[2];
    forecast_fit_t f;
    f.mae = 1;
    assert_int_equal(forecast_holt_winters(NULL, 16, 0, 1, out, &f), -EINVAL);
    assert_true(f.mae == 0); /* zeroed on error */
    assert_int_equal(forecast_holt_winters(y, 16, 0, 1, NULL, &f), -EINVAL);
    assert_int_equal(forecast_holt_winters(y, 16, 0, 1, out, NULL), -EINVAL);
    assert_int_equal(forecast_holt_winters(y, 16, 0, 0, out, &f), -EINVAL);
    assert_int_equal(forecast_holt_winters(y, 2, 0, 1, out, &f), -EINVAL);
    assert_int_equal(forecast_holt_winters(y, 15, 8, 1, out, &f), -EINVAL);
    assert_int_equal(forecast_holt_winters(y, 16, -1, 1, out, &f), -EINVAL);
    assert_int_equal(forecast_holt_winters(y, 16, 8, 1, out, &f), 0);
    assert_int_equal(forecast_holt_winters(y, 16, 1, 1, out, &f), 0); /* 1: no season */
    assert_int_equal(f.season, 0);
    y[7] = NAN;
    assert_int_equal(forecast_holt_winters(y, 16, 0, 1, out, &f), -EINVAL);
    y[7] = INFINITY;
    assert_int_equal(forecast_holt_winters(y, 16, 4, 1, out, &f), -EINVAL);
    y[7] = -INFINITY;
    assert_int_equal(forecast_holt_winters(y, 16, 0, 1, out, &f), -EINVAL);
}

/* the same series gives bit for bit the same fit and forecasts */
static void deterministic(void **state)
{
    (void)state;
    double y[500], o1[8], o2[8];
    rng_t r;
    rng_seed(&r, 7);
    for (int t = 0; t < 500; t++)
        y[t] = 1000 + 300 * sin(2 * PI * t / 50) + rng_exp(&r, 30);
    forecast_fit_t a, b;
    assert_int_equal(forecast_holt_winters(y, 500, 50, 8, o1, &a), 0);
    assert_int_equal(forecast_holt_winters(y, 500, 50, 8, o2, &b), 0);
    assert_memory_equal(&a, &b, sizeof(a));
    assert_memory_equal(o1, o2, sizeof(o1));
    params_ok(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(linear_trend), cmocka_unit_test(pure_season),
        cmocka_unit_test(step_change),  cmocka_unit_test(noisy_trend_season),
        cmocka_unit_test(constant),     cmocka_unit_test(short_and_clamped),
        cmocka_unit_test(flat_start),   cmocka_unit_test(never_worse_than_naive),
        cmocka_unit_test(bad_input),    cmocka_unit_test(deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
