#!/usr/bin/env python3
"""The forecasts seed 002 §5.1.4 compares, on the series bench_forecast --dump writes:
statsmodels' Holt-Winters (continuous optimiser, estimated initial state), ARIMA(2,1,1)
and, with a season, SARIMAX(1,0,1)(1,1,1,m), next to the last value. Prints their
one-step in-sample errors over the samples forecast.c scores (from sample m, or 2
without a season) and the time each fit took. Needs Debian's python3-statsmodels: a
cross-check for docs/power.md, not a dependency of the build.

    build/bench/bench_forecast --dump 1000 | python3 bench/power/forecast_compare.py 24
"""
import sys
import time
import warnings

import numpy as np
from statsmodels.tsa.arima.model import ARIMA
from statsmodels.tsa.holtwinters import ExponentialSmoothing
from statsmodels.tsa.statespace.sarimax import SARIMAX


def main():
    warnings.filterwarnings("ignore")
    m = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    y = np.loadtxt(sys.stdin)
    w = m if m > 1 else 2

    def row(name, fit):
        t = time.time()
        fitted = fit()
        t = time.time() - t
        e = y[w:] - np.maximum(fitted[w:], 0)
        nz = y[w:] != 0
        print(f"{name:28s} {np.mean(abs(e)):8.2f} {np.sqrt(np.mean(e * e)):8.2f} "
              f"{100 * np.mean(abs(e[nz] / y[w:][nz])):6.2f} {t * 1e3:9.1f}")

    print(f"{'model':28s} {'mae':>8s} {'rmse':>8s} {'mape%':>6s} {'fit [ms]':>9s}")
    season = dict(seasonal="add", seasonal_periods=m) if m > 1 else {}
    row("statsmodels Holt-Winters",
        lambda: ExponentialSmoothing(y, trend="add", **season).fit().fittedvalues)
    row("ARIMA(2,1,1)", lambda: ARIMA(y, order=(2, 1, 1)).fit().fittedvalues)
    if m > 1:
        row(f"SARIMAX(1,0,1)(1,1,1,{m})",
            lambda: SARIMAX(y, order=(1, 0, 1), seasonal_order=(1, 1, 1, m),
                            trend="c").fit(disp=False).fittedvalues)
    row("last value", lambda: np.concatenate([[y[0]], y[:-1]]))


if __name__ == "__main__":
    main()
