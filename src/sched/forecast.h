/* Forecast of a power series a few ticks ahead (seed 002 §5.1.4; docs/power.md,
 * "Forecasting"): additive Holt-Winters, or Holt's linear trend without a season,
 * its smoothing parameters chosen by a search on the 0.025 grid (a coarse grid, then a
 * pattern search) for the least one-step squared error, and its error measured on the
 * series it was fitted to.
 *
 * The state starts from the first two seasons (Holt: from the first two samples):
 * level and trend from the two seasons' means, each season index from the detrended
 * deviations of both seasons; or flat (the last warm-up sample, trend and season 0),
 * whichever fits better. The recursions run from sample `season` (Holt: 2), and every
 * later sample is scored. Forecasts are clamped at 0 (power is never negative), in
 * out[] and in the errors alike. Pure C, no allocation but one buffer of 3 x `season`
 * doubles, no state between calls. */
#ifndef DUCTILE_SCHED_FORECAST_H
#define DUCTILE_SCHED_FORECAST_H

typedef struct forecast_fit {
    double alpha, beta, gamma; /* smoothing parameters chosen */
    int season;                /* season length used (0: none, Holt's linear trend) */
    double mae, rmse, mape;    /* one-step-ahead errors over the series after warm-up (mape in %, over nonzero samples) */
    double mae_h;              /* mean absolute error of the h-step-ahead forecasts over the series */
    double naive_mae;          /* the last-value forecast's one-step MAE, for comparison */
    int scored;                /* how many samples the errors are over */
    double naive_rmse;         /* the last-value forecast's one-step RMSE */
    int scored_h;              /* how many h-step forecasts mae_h is over (0: n too short) */
    int mape_n;                /* how many nonzero samples mape is over (0: mape is 0) */
    int flat_start;            /* 1: started flat (trend, season 0), which fitted better */
} forecast_fit_t;

/* Fits additive Holt-Winters (season > 1) or Holt's linear trend (season 0) to
 * y[0..n) by grid search over alpha, beta, gamma minimising the one-step squared
 * error, writes the forecasts for 1..h steps ahead into out[0..h) and the fit into
 * *fit. Returns 0, or -EINVAL (n too short for the season: fewer than 2 seasons or 3
 * samples, h < 1, NULL arguments). Deterministic.
 * Also -EINVAL: a NaN or infinite sample, season < 0. season 1 is no season (Holt).
 * -ENOMEM if the season buffer cannot be allocated. On error *fit is zeroed. */
int forecast_holt_winters(const double *y, int n, int season, int h, double *out,
                          forecast_fit_t *fit);

#endif
