#include "test_rng.h"

void test_rng_seed(test_rng *rng, uint64_t seed)
{
    rng->state = seed;
}

static uint64_t next_u64(test_rng *rng)
{
    uint64_t z = (rng->state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

double test_rng_uniform(test_rng *rng, double lo, double hi)
{
    const double unit = (double)(next_u64(rng) >> 11) * 0x1.0p-53;
    return lo + (hi - lo) * unit;
}

int test_rng_int(test_rng *rng, int lo, int hi)
{
    const uint64_t span = (uint64_t)((int64_t)hi - (int64_t)lo + 1);
    return (int)((int64_t)lo + (int64_t)(next_u64(rng) % span));
}

void test_rng_fill(test_rng *rng, double *x, size_t count, double lo,
                   double hi)
{
    for (size_t i = 0; i < count; i++) x[i] = test_rng_uniform(rng, lo, hi);
}
