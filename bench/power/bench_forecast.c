/* Cost and error of the power forecast (src/sched/forecast.c; docs/BENCHMARKS.md,
 * docs/power.md "Forecasting").
 *   bench_forecast [REPEAT]            (default 11) a synthetic draw of n = 100, 1000,
 *       10000 samples: 2000 W + 0.5 W per sample + a 300 W season of 24 samples +
 *       uniform noise of +-100 W (seed 1); fitted with season 24 and without a season,
 *       6 steps ahead. Prints the median and worst time of REPEAT fits and the errors.
 *   bench_forecast CSV TICK SEASON H   a recorded draw (`ductile sim --power-csv`:
 *       t,watts,... after every change), sampled every TICK s as the value in force,
 *       fitted with SEASON (0: none), H steps ahead. Prints the fit.
 *   bench_forecast --dump N | --dump CSV TICK   the synthetic draw's first N samples,
 *       or the sampled recorded one, a value a line (bench/power/forecast_compare.py). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "forecast.h"
#include "rng.h"

#define H 6

static void print_fit(int n, const forecast_fit_t *f)
{
    printf("%6d %6d %5.3f %5.3f %5.3f %8.2f %8.2f %6.2f %8.2f %9.2f %10.2f\n", n, f->season,
           f->alpha, f->beta, f->gamma, f->mae, f->rmse, f->mape, f->mae_h, f->naive_mae,
           f->naive_rmse);
}

static void header(void)
{
    printf("%6s %6s %5s %5s %5s %8s %8s %6s %8s %9s %10s\n", "n", "season", "alpha", "beta",
           "gamma", "mae", "rmse", "mape%", "mae_h", "naive_mae", "naive_rmse");
}

/* The synthetic draw: y[0..n). */
static double *synthetic(int n)
{
    double *y = malloc((size_t)n * sizeof(double));
    rng_t r;
    rng_seed(&r, 1);
    for (int i = 0; y && i < n; i++)
        y[i] = 2000 + 0.5 * i + 300 * sin(2 * 3.14159265358979 * i / 24) +
               200 * (rng_uniform(&r) - 0.5);
    return y;
}

/* A recorded draw, the value in force at 0, TICK, 2 TICK, ...; NULL on error. */
static double *recorded(const char *path, double tick, int *np)
{
    FILE *fp = fopen(path, "r");
    if (!fp || tick <= 0) {
        fprintf(stderr, "bench_forecast: cannot read %s, or bad TICK\n", path);
        if (fp)
            fclose(fp);
        return NULL;
    }
    int n = 0, cap = 1024;
    double *y = malloc((size_t)cap * sizeof(double)), t, w, t0 = NAN, last = 0;
    char line[256];
    while (y && fgets(line, sizeof(line), fp)) {
        if (sscanf(line, "%lf,%lf", &t, &w) != 2)
            continue; /* the header */
        if (isnan(t0))
            t0 = last = t;
        for (; y && t0 + n * tick < t; n++) {
            double *more = n == cap ? realloc(y, (size_t)(cap *= 2) * sizeof(double)) : y;
            if (!more)
                free(y);
            if ((y = more))
                y[n] = last;
        }
        last = w;
    }
    fclose(fp);
    *np = n;
    return y;
}

static int fit_recorded(const char *path, double tick, int season, int h)
{
    int n = 0, rc = -1;
    double *y = recorded(path, tick, &n), *out = calloc(h > 0 ? (size_t)h : 1, sizeof(double));
    forecast_fit_t f;
    if (y && out && (rc = forecast_holt_winters(y, n, season, h, out, &f)) == 0) {
        header();
        print_fit(n, &f);
        printf("forecast:");
        for (int k = 0; k < h; k++)
            printf(" %.0f", out[k]);
        printf("\n");
    } else {
        fprintf(stderr, "bench_forecast: %d samples: no fit (%d)\n", n, rc);
    }
    free(y);
    free(out);
    return rc != 0;
}

/* --dump N | --dump CSV TICK: the series, one value a line, for other tools */
static int dump(int argc, char **argv)
{
    int n = argc == 3 ? atoi(argv[2]) : 0;
    double *y = argc == 3 ? (n > 0 ? synthetic(n) : NULL) : recorded(argv[2], atof(argv[3]), &n);
    for (int i = 0; y && i < n; i++)
        printf("%.17g\n", y[i]);
    free(y);
    return !y;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && argc <= 4 && !strcmp(argv[1], "--dump"))
        return dump(argc, argv);
    if (argc == 5)
        return fit_recorded(argv[1], atof(argv[2]), atoi(argv[3]), atoi(argv[4]));
    int repeat = argc > 1 ? atoi(argv[1]) : 11;
    if (repeat < 1)
        repeat = 1;
    static const int ns[] = {100, 1000, 10000};
    double *y = synthetic(10000), *t = calloc((size_t)repeat, sizeof(double));
    if (!y || !t)
        return 1;
    header();
    for (size_t x = 0; x < sizeof(ns) / sizeof(ns[0]); x++)
        for (int season = 24; season >= 0; season -= 24) {
            forecast_fit_t f;
            double out[H];
            for (int k = 0; k < repeat; k++) {
                double t0 = now();
                if (forecast_holt_winters(y, ns[x], season, H, out, &f) < 0)
                    return 1;
                t[k] = (now() - t0) * 1e3;
            }
            qsort(t, (size_t)repeat, sizeof(double), cmp);
            print_fit(ns[x], &f);
            printf("       time: median %.3f ms, worst %.3f ms\n", t[repeat / 2], t[repeat - 1]);
        }
    free(y);
    free(t);
    return 0;
}
