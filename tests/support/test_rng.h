/* A seeded generator for test data (the library's attn__splitmix64): the
 * same numbers on every platform, so a failing random case can be replayed
 * from its seed. */
#ifndef TEST_RNG_H
#define TEST_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct test_rng {
    uint64_t state;
} test_rng;

void test_rng_seed(test_rng *rng, uint64_t seed);

/* Uniform in [lo, hi). */
double test_rng_uniform(test_rng *rng, double lo, double hi);

/* Uniform integer in [lo, hi]. */
int test_rng_int(test_rng *rng, int lo, int hi);

/* Fills x[0..count) with uniform values in [lo, hi). */
void test_rng_fill(test_rng *rng, double *x, size_t count, double lo,
                   double hi);

#endif
