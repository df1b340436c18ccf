/* Speedup models for malleable jobs (research/anchors-simulators.md §4).
 * S(n) is the speed on n nodes relative to one node. */
#ifndef DUCTILE_SIM_SPEEDUP_H
#define DUCTILE_SIM_SPEEDUP_H

#include <stddef.h>

typedef enum speedup_model {
    SPEEDUP_LINEAR = 0, /* S(n) = n */
    SPEEDUP_AMDAHL,     /* a = serial fraction f: S(n) = 1 / (f + (1 - f) / n) */
    SPEEDUP_POWER,      /* a = alpha: S(n) = n^alpha */
    SPEEDUP_DOWNEY,     /* a = average parallelism A, b = sigma (Downey 1997) */
} speedup_model_t;

typedef struct speedup {
    speedup_model_t model;
    double a, b;
} speedup_t;

double speedup_eval(const speedup_t *m, double n);
/* "linear", "amdahl:F", "power:ALPHA", "downey:A:SIGMA". */
int speedup_parse(const char *text, speedup_t *out, char *err, size_t errlen);
/* The text speedup_parse accepts; returns like snprintf. */
int speedup_format(const speedup_t *m, char *buf, size_t len);
/* The MTCT ratio the simulator attributes to a job on n nodes:
 * n / S(n) - 1, the node-time lost to imperfect scaling over the useful time
 * (for Amdahl: f (n - 1)). See docs/simulator.md. */
double speedup_mtct(const speedup_t *m, int n);

#endif
