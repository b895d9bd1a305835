#include "test_rng.h"
#include "kernels/kernels.h"

void test_rng_seed(test_rng *rng, uint64_t seed)
{
    rng->state = seed;
}

double test_rng_uniform(test_rng *rng, double lo, double hi)
{
    const double unit = (double)(attn__splitmix64(&rng->state) >> 11) *
                        0x1.0p-53;
    return lo + (hi - lo) * unit;
}

int test_rng_int(test_rng *rng, int lo, int hi)
{
    const uint64_t span = (uint64_t)((int64_t)hi - (int64_t)lo + 1);
    return (int)((int64_t)lo + (int64_t)(attn__splitmix64(&rng->state) % span));
}

void test_rng_fill(test_rng *rng, double *x, size_t count, double lo, double hi)
{
    for (size_t i = 0; i < count; i++) x[i] = test_rng_uniform(rng, lo, hi);
}
