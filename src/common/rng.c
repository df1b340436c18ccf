#include "rng.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

void rng_seed(rng_t *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_next(rng_t *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

double rng_uniform(rng_t *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

uint64_t rng_below(rng_t *r, uint64_t n)
{
    /* Rejection sampling keeps the result unbiased. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = rng_next(r);
    while (x >= limit);
    return x % n;
}

double rng_exp(rng_t *r, double mean) { return -mean * log(1.0 - rng_uniform(r)); }

void rng_shuffle(rng_t *r, void *base, size_t n, size_t sz)
{
    unsigned char *b = base, tmp[256];
    if (sz > sizeof(tmp))
        return;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rng_below(r, i);
        memcpy(tmp, b + (i - 1) * sz, sz);
        memcpy(b + (i - 1) * sz, b + j * sz, sz);
        memcpy(b + j * sz, tmp, sz);
    }
}

int rng_secret(void *out, size_t nbytes)
{
    unsigned char *r = out;
    size_t got = 0;
    while (got < nbytes) {
        ssize_t n = getrandom(r + got, nbytes - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        got += (size_t)n;
    }
    return 0;
}

int rng_secret_hex(char *out, size_t len, size_t nbytes)
{
    unsigned char r[64];
    if (nbytes > sizeof(r) || len < 2 * nbytes + 1)
        return -EINVAL;
    int rc = rng_secret(r, nbytes);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < nbytes; i++)
        snprintf(out + 2 * i, 3, "%02x", r[i]);
    out[2 * nbytes] = '\0';
    return 0;
}
