/* What bench_power and bench_forecast share: a monotonic clock and a sort order for
 * their medians. */
#ifndef DUCTILE_BENCH_POWER_UTIL_H
#define DUCTILE_BENCH_POWER_UTIL_H

#include <time.h>

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
