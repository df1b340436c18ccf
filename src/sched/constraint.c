#include "constraint.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* The names are here, not in sched.c, so that a program that only parses them (`ductile
 * submit --node-constraint`) links this file alone, not the engine and GLPK. */
static const char *const cons_names[] = {"none", "pof2", "even", "odd", "ncube", "square"};

const char *sched_constraint_name(sched_constraint_t c)
{
    return (c >= 0 && c <= SCHED_CONS_SQUARE) ? cons_names[c] : "unknown";
}

int sched_constraint_parse(const char *name, sched_constraint_t *out)
{
    for (int i = 0; i <= SCHED_CONS_SQUARE; i++)
        if (!strcmp(name, cons_names[i])) {
            *out = (sched_constraint_t)i;
            return 0;
        }
    if (!strcmp(name, "") || !strcmp(name, "-")) {
        *out = SCHED_CONS_NONE;
        return 0;
    }
    return -EINVAL;
}

static int iroot(int n, int k)
{
    int r = (int)floor(pow((double)n, 1.0 / k) + 1e-9);
    /* Correct the floating-point estimate in both directions. */
    while (r > 0 && (k == 2 ? (long)r * r : (long)r * r * r) > n)
        r--;
    while ((k == 2 ? (long)(r + 1) * (r + 1) : (long)(r + 1) * (r + 1) * (r + 1)) <= n)
        r++;
    return r;
}

bool cons_valid(int n, sched_constraint_t c)
{
    if (n < 1)
        return false;
    switch (c) {
    case SCHED_CONS_POF2:
        return (n & (n - 1)) == 0;
    case SCHED_CONS_EVEN:
        return n % 2 == 0;
    case SCHED_CONS_ODD:
        return n % 2 == 1;
    case SCHED_CONS_NCUBE: {
        int r = iroot(n, 3);
        return (long)r * r * r == n;
    }
    case SCHED_CONS_SQUARE: {
        int r = iroot(n, 2);
        return (long)r * r == n;
    }
    default:
        return true;
    }
}

/* Largest valid value <= x (x >= 1), ignoring bounds; 0 if none. */
static int floor_valid(int x, sched_constraint_t c)
{
    if (x < 1)
        return 0;
    switch (c) {
    case SCHED_CONS_POF2: {
        int v = 1;
        while (v <= x / 2)
            v *= 2;
        return v;
    }
    case SCHED_CONS_EVEN:
        return x & ~1;
    case SCHED_CONS_ODD:
        return (x % 2) ? x : x - 1;
    case SCHED_CONS_NCUBE: {
        int r = iroot(x, 3);
        return r * r * r;
    }
    case SCHED_CONS_SQUARE: {
        int r = iroot(x, 2);
        return r * r;
    }
    default:
        return x;
    }
}

/* Smallest valid value >= x (x >= 1), ignoring bounds. */
static long ceil_valid(int x, sched_constraint_t c)
{
    if (x < 1)
        x = 1;
    switch (c) {
    case SCHED_CONS_POF2: {
        long v = 1;
        while (v < x)
            v *= 2;
        return v;
    }
    case SCHED_CONS_EVEN:
        return (x % 2) ? (long)x + 1 : x;
    case SCHED_CONS_ODD:
        return (x % 2) ? x : (long)x + 1;
    case SCHED_CONS_NCUBE: {
        long r = iroot(x, 3);
        if (r * r * r < x)
            r++;
        return r * r * r;
    }
    case SCHED_CONS_SQUARE: {
        long r = iroot(x, 2);
        if (r * r < x)
            r++;
        return r * r;
    }
    default:
        return x;
    }
}

int cons_largest_leq(int x, sched_constraint_t c, int lo, int hi)
{
    if (lo < 1)
        lo = 1;
    int top = x < hi ? x : hi;
    if (top < lo)
        return 0;
    int v = floor_valid(top, c);
    return v >= lo ? v : 0;
}

int cons_smallest_geq(int x, sched_constraint_t c, int lo, int hi)
{
    int bottom = x > lo ? x : lo;
    if (bottom < 1)
        bottom = 1;
    if (bottom > hi)
        return 0;
    long v = ceil_valid(bottom, c);
    return v <= hi ? (int)v : 0;
}
