/* Speedup models. The formulas and their sources are in
 * research/anchors-simulators.md §4; docs/simulator.md lists the text forms. */
#include "speedup.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

/* Downey's model has two regimes split at sigma = 1; both give the same curve at
 * sigma = 1, so the choice of branch for exactly 1 does not matter. */
static double downey(double A, double sigma, double n)
{
    if (A < 1)
        A = 1;
    if (sigma < 0)
        sigma = 0;
    if (sigma <= 1) {
        if (n <= A)
            return A * n / (A + sigma * (n - 1) / 2);
        if (n <= 2 * A - 1)
            return A * n / (sigma * (A - 0.5) + n * (1 - sigma / 2));
        return A;
    }
    if (n <= A + A * sigma - sigma)
        return n * A * (sigma + 1) / (sigma * (n + A - 1) + A);
    return A;
}

double speedup_eval(const speedup_t *m, double n)
{
    /* A job always holds at least one node; below that the curves are meaningless. */
    if (!(n >= 1))
        n = 1;
    switch (m->model) {
    case SPEEDUP_AMDAHL:
        return 1.0 / (m->a + (1.0 - m->a) / n);
    case SPEEDUP_POWER:
        return pow(n, m->a);
    case SPEEDUP_DOWNEY:
        return downey(m->a, m->b, n);
    case SPEEDUP_LINEAR:
    default:
        return n;
    }
}

/* Parses one number that must fill the whole field. */
static int parse_num(const char *s, size_t len, double *out)
{
    char buf[64];
    if (len == 0 || len >= sizeof(buf))
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end == buf || *end || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int speedup_parse(const char *text, speedup_t *out, char *err, size_t errlen)
{
    if (!text)
        return ERR("missing speedup model");
    const char *c1 = strchr(text, ':');
    size_t namelen = c1 ? (size_t)(c1 - text) : strlen(text);
    speedup_t m = {SPEEDUP_LINEAR, 0, 0};

    if (namelen == 6 && !strncmp(text, "linear", 6)) {
        if (c1)
            return ERR("speedup 'linear' takes no parameter (got '%s')", text);
        *out = m;
        return 0;
    }

    const char *p1 = c1 ? c1 + 1 : NULL;
    if (namelen == 6 && !strncmp(text, "amdahl", 6)) {
        if (!p1 || strchr(p1, ':') || parse_num(p1, strlen(p1), &m.a) < 0)
            return ERR("speedup '%s': expected amdahl:F with F the serial fraction", text);
        if (m.a < 0 || m.a > 1)
            return ERR("speedup '%s': the serial fraction must be in [0, 1]", text);
        m.model = SPEEDUP_AMDAHL;
    } else if (namelen == 5 && !strncmp(text, "power", 5)) {
        if (!p1 || strchr(p1, ':') || parse_num(p1, strlen(p1), &m.a) < 0)
            return ERR("speedup '%s': expected power:ALPHA with ALPHA the exponent", text);
        if (m.a <= 0 || m.a > 1)
            return ERR("speedup '%s': the exponent must be in (0, 1]", text);
        m.model = SPEEDUP_POWER;
    } else if (namelen == 6 && !strncmp(text, "downey", 6)) {
        const char *c2 = p1 ? strchr(p1, ':') : NULL;
        if (!c2 || strchr(c2 + 1, ':') || parse_num(p1, (size_t)(c2 - p1), &m.a) < 0 ||
            parse_num(c2 + 1, strlen(c2 + 1), &m.b) < 0)
            return ERR("speedup '%s': expected downey:A:SIGMA (average parallelism, "
                       "variance)",
                       text);
        if (m.a < 1)
            return ERR("speedup '%s': the average parallelism A must be >= 1", text);
        if (m.b < 0)
            return ERR("speedup '%s': SIGMA must be >= 0", text);
        m.model = SPEEDUP_DOWNEY;
    } else {
        return ERR("unknown speedup model '%.*s' (expected linear, amdahl:F, power:ALPHA or "
                   "downey:A:SIGMA)",
                   (int)namelen, text);
    }
    *out = m;
    return 0;
}

/* Shortest %g text that reads back as the same double, so that formatting and
 * parsing round-trip without printing 0.05 as 0.050000000000000003. */
static void shortest(double v, char *buf, size_t len)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

int speedup_format(const speedup_t *m, char *buf, size_t len)
{
    char a[32], b[32];
    shortest(m->a, a, sizeof(a));
    shortest(m->b, b, sizeof(b));
    switch (m->model) {
    case SPEEDUP_AMDAHL:
        return snprintf(buf, len, "amdahl:%s", a);
    case SPEEDUP_POWER:
        return snprintf(buf, len, "power:%s", a);
    case SPEEDUP_DOWNEY:
        return snprintf(buf, len, "downey:%s:%s", a, b);
    case SPEEDUP_LINEAR:
    default:
        return snprintf(buf, len, "linear");
    }
}

double speedup_mtct(const speedup_t *m, int n)
{
    if (n < 1)
        n = 1;
    double r = n / speedup_eval(m, n) - 1.0;
    /* Rounding can leave a tiny negative value for perfect scaling. */
    return r > 0 ? r : 0;
}
