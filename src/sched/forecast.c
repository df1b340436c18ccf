/* Additive Holt-Winters and Holt's linear trend (forecast.h), with the recursions of
 * research/seed-002a §5.5:
 *   level  l_t = a (y_t - s_{t-m}) + (1 - a)(l_{t-1} + b_{t-1})
 *   trend  b_t = b (l_t - l_{t-1}) + (1 - b) b_{t-1}
 *   season s_t = g (y_t - l_{t-1} - b_{t-1}) + (1 - g) s_{t-m}
 *   forecast y_{t+k} = l_t + k b_t + s_{t+k-m}   (the latest season index of that phase)
 * Without a season, s is 0 and g unused. The season indices live in a ring of m values
 * indexed by phase (t mod m): after sample t it holds those of t-m+1..t.
 *
 * Two starting states compete: the one estimated from the data (forecast.h), and a flat
 * one (level the last warm-up sample, trend and season 0) with which a = 1, b = g = 0
 * is the last-value forecast, so the fit is never worse than it in squares: a trend
 * estimated across a step in the first samples would otherwise stay for small b.
 *
 * The grid search tries a, b, g in {0, 0.2, ..., 1} from each start (with a = 0 only
 * b = 0: the level, hence the trend, never moves), then from the best point moves to a
 * better neighbour at distance 0.1 on each axis while there is one, then 0.05, then
 * 0.025: a pattern search on the 0.025 grid (checked once against the whole grid, 2 x
 * 41^3 points, on 40 random series with and without trend, season and steps: the same
 * optimum every time). A candidate stops as soon as its squared error passes the best
 * so far (or its state overflows), which is what keeps it cheap. Ties keep the first. */
#include "forecast.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COARSE 5    /* coarse grid: k / COARSE */
#define FINE 0.025  /* the last refinement step */
#define MOVES 8     /* moves at one step */

typedef struct start {
    double l, b;     /* level and trend after sample w->start - 1 */
    const double *s; /* season indices after it (m) */
} start_t;

typedef struct hw {
    const double *y;
    int n, m;       /* m: season, 0 none */
    int start;      /* first sample forecast (and scored) */
    start_t st[2];  /* from the data, flat */
    double *s;      /* work ring (m) */
} hw_t;

typedef struct cand {
    int st;
    double a, b, g, sse;
} cand_t;

static double clamp0(double f)
{
    return f < 0 ? 0 : f; /* a NaN stays a NaN */
}

/* The starting states after the first season (Holt: the first two samples); buf has
 * 2 m doubles, zeroed. */
static void hw_init(hw_t *w, double *buf)
{
    const double *y = w->y;
    int m = w->m;
    w->start = m ? m : 2;
    w->st[1] = (start_t){y[w->start - 1], 0, buf + m};
    if (!m) {
        w->st[0] = (start_t){y[1], y[1] - y[0], NULL};
        return;
    }
    double a1 = 0, a2 = 0;
    for (int i = 0; i < m; i++) {
        a1 += y[i];
        a2 += y[m + i];
    }
    a1 /= m;
    a2 /= m;
    double b = (a2 - a1) / m, mid = (m - 1) / 2.0;
    for (int i = 0; i < m; i++) /* deviation from the trend line, both seasons */
        buf[i] = (y[i] - (a1 + b * (i - mid)) + y[m + i] - (a2 + b * (i - mid))) / 2;
    w->st[0] = (start_t){a1 + b * mid, b, buf};
}

/* One-step squared error of c over the scored samples; INFINITY once it exceeds
 * limit or the state overflows. */
static double hw_sse(hw_t *w, const cand_t *c, double limit)
{
    const double *y = w->y;
    int m = w->m, p = 0; /* p: the phase of sample i (start is 0 mod m) */
    double l = w->st[c->st].l, t = w->st[c->st].b, sse = 0;
    if (m)
        memcpy(w->s, w->st[c->st].s, (size_t)m * sizeof(double));
    for (int i = w->start; i < w->n; i++) {
        double s = m ? w->s[p] : 0;
        double e = y[i] - clamp0(l + t + s);
        sse += e * e;
        if (!(sse <= limit))
            return INFINITY;
        double nl = c->a * (y[i] - s) + (1 - c->a) * (l + t);
        if (m) {
            w->s[p] = c->g * (y[i] - l - t) + (1 - c->g) * s;
            if (++p == m)
                p = 0;
        }
        t = c->b * (nl - l) + (1 - c->b) * t;
        l = nl;
        if (!isfinite(l) || !isfinite(t))
            return INFINITY;
    }
    return sse;
}

static void consider(hw_t *w, cand_t *best, int st, double a, double b, double g)
{
    cand_t c = {st, a, b, g, 0};
    c.sse = hw_sse(w, &c, best->sse);
    if (c.sse < best->sse)
        *best = c;
}

/* The neighbours of the best point at distance step on each axis (26, or 8 without a
 * season), as long as one of them is better (at most MOVES times). */
static void descend(hw_t *w, cand_t *best, double step)
{
    int kg = w->m ? 1 : 0;
    for (int moves = 0; moves < MOVES; moves++) {
        cand_t c = *best;
        for (int i = -1; i <= 1; i++)
            for (int j = -1; j <= 1; j++)
                for (int k = -kg; k <= kg; k++) {
                    double a = c.a + i * step, b = c.b + j * step, g = c.g + k * step;
                    if ((i || j || k) && a >= 0 && a <= 1 && b >= 0 && b <= 1 && g >= 0 &&
                        g <= 1)
                        consider(w, best, c.st, a, b, g);
                }
        if (best->sse == c.sse)
            return;
    }
}

static void search(hw_t *w, cand_t *best)
{
    int kg = w->m ? COARSE : 0;
    *best = (cand_t){0, 0, 0, 0, INFINITY};
    for (int st = 0; st < 2; st++)
        for (int i = 0; i <= COARSE; i++)
            for (int j = 0; j <= (i ? COARSE : 0); j++) /* with a = 0, b changes nothing */
                for (int k = 0; k <= kg; k++)
                    consider(w, best, st, (double)i / COARSE, (double)j / COARSE,
                             (double)k / COARSE);
    for (double step = 0.5 / COARSE; step >= FINE; step /= 2)
        descend(w, best, step);
}

/* The chosen fit once more: its errors, the h-step-ahead errors, the forecasts. */
static void hw_score(hw_t *w, const cand_t *c, int h, double *out, forecast_fit_t *fit)
{
    const double *y = w->y;
    int m = w->m, n = w->n;
    double l = w->st[c->st].l, t = w->st[c->st].b;
    double abs = 0, sq = 0, pct = 0, abs_h = 0, naive = 0, naive_sq = 0;
    if (m)
        memcpy(w->s, w->st[c->st].s, (size_t)m * sizeof(double));
    for (int i = w->start;; i++) {
        /* the forecast from the state after sample i - 1, h steps ahead */
        if (h <= n - i) {
            int o = i - 1 + h;
            abs_h += fabs(y[o] - clamp0(l + h * t + (m ? w->s[o % m] : 0)));
            fit->scored_h++;
        }
        if (i == n)
            break;
        double s = m ? w->s[i % m] : 0;
        double e = y[i] - clamp0(l + t + s), d = y[i] - y[i - 1];
        abs += fabs(e);
        sq += e * e;
        naive += fabs(d);
        naive_sq += d * d;
        if (y[i] != 0) {
            pct += fabs(e / y[i]);
            fit->mape_n++;
        }
        double nl = c->a * (y[i] - s) + (1 - c->a) * (l + t);
        if (m)
            w->s[i % m] = c->g * (y[i] - l - t) + (1 - c->g) * s;
        t = c->b * (nl - l) + (1 - c->b) * t;
        l = nl;
    }
    int k = n - w->start;
    fit->scored = k;
    fit->mae = abs / k;
    fit->rmse = sqrt(sq / k);
    fit->naive_mae = naive / k;
    fit->naive_rmse = sqrt(naive_sq / k);
    fit->mape = fit->mape_n ? 100 * pct / fit->mape_n : 0;
    fit->mae_h = fit->scored_h ? abs_h / fit->scored_h : 0;
    for (int j = 0; j < h; j++)
        out[j] = clamp0(l + (j + 1.0) * t + (m ? w->s[((long long)n + j) % m] : 0));
}

int forecast_holt_winters(const double *y, int n, int season, int h, double *out,
                          forecast_fit_t *fit)
{
    if (fit)
        memset(fit, 0, sizeof(*fit));
    if (!y || !out || !fit || h < 1 || season < 0 || n < 3)
        return -EINVAL;
    int m = season > 1 ? season : 0;
    if (m > n / 2)
        return -EINVAL;
    for (int i = 0; i < n; i++)
        if (!isfinite(y[i]))
            return -EINVAL;
    double *buf = NULL;
    if (m && !(buf = calloc(3 * (size_t)m, sizeof(double))))
        return -ENOMEM;
    hw_t w = {.y = y, .n = n, .m = m, .s = m ? buf + 2 * m : NULL};
    hw_init(&w, buf);
    cand_t best;
    search(&w, &best);
    fit->alpha = best.a;
    fit->beta = best.b;
    fit->gamma = best.g;
    fit->season = m;
    fit->flat_start = best.st;
    hw_score(&w, &best, h, out, fit);
    free(buf);
    return 0;
}
