/* rng: a small deterministic generator (xoshiro256**, seeded by splitmix64).
 * Same seed, same sequence, on every platform: simulator outputs depend on it. */
#ifndef DUCTILE_RNG_H
#define DUCTILE_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct rng {
    uint64_t s[4];
} rng_t;

void rng_seed(rng_t *r, uint64_t seed);
uint64_t rng_next(rng_t *r);
/* Uniform in [0, 1). */
double rng_uniform(rng_t *r);
/* Uniform integer in [0, n); n > 0. */
uint64_t rng_below(rng_t *r, uint64_t n);
/* Exponential with the given mean. */
double rng_exp(rng_t *r, double mean);
/* Shuffles n elements of size sz in place (Fisher-Yates). */
void rng_shuffle(rng_t *r, void *base, size_t n, size_t sz);

/* Not the generator above: nbytes from the kernel's random source (getrandom), for
 * secrets; 0 or a negative errno. */
int rng_secret(void *out, size_t nbytes);
/* The same, written as 2*nbytes lower-case hex digits and a NUL into out (len at least
 * 2*nbytes + 1), for keys. 0 or a negative errno. */
int rng_secret_hex(char *out, size_t len, size_t nbytes);

#endif
