/* options.c: defaults, the score scale and the dropout hash. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

void attn_options_init(attn_options *opts)
{
    if (opts == NULL) return;
    opts->scale_kind = ATTN_SCALE_INV_SQRT_DK;
    opts->scale_factor = 1.0;
    opts->mask.kinds = 0;
    opts->mask.key_length = NULL;
    opts->mask.allowed = NULL;
    opts->mask.window = 0;
    opts->mask.stride = 1;
    opts->dropout = 0.0;
    opts->seed = 0;
}

const attn_options *attn__options_or_default(const attn_options *opts,
                                             attn_options *storage)
{
    if (opts != NULL) return opts;
    attn_options_init(storage);
    return storage;
}

int attn_scale_value(double *scale, const attn_options *opts, int d_k)
{
    if (scale == NULL) return ATTN_ERR_NULL;
    attn_options defaults;
    opts = attn__options_or_default(opts, &defaults);
    switch (opts->scale_kind) {
    case ATTN_SCALE_INV_SQRT_DK:
        if (d_k <= 0) return ATTN_ERR_SIZE;
        /* sqrt and division are correctly rounded: same bits everywhere. */
        *scale = 1.0 / sqrt((double)d_k);
        return ATTN_OK;
    case ATTN_SCALE_NONE: *scale = 1.0; return ATTN_OK;
    case ATTN_SCALE_FACTOR:
        if (!isfinite(opts->scale_factor)) return ATTN_ERR_RANGE;
        *scale = opts->scale_factor;
        return ATTN_OK;
    default: return ATTN_ERR_OPTION;
    }
}

int attn__check_dropout(double probability)
{
    return (probability >= 0.0 && probability < 1.0) ? ATTN_OK : ATTN_ERR_RANGE;
}

uint64_t attn__splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    /* The finaliser: a bijection whose output bits each depend on every
     * input bit. */
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/*
 * A counter-based generator: the uniform draw for (seed, b, i, j) is
 * computed from those four numbers alone, so it needs no state and gives
 * the same bits natively and in WASM. Each index is folded in by adding it
 * to the state before one splitmix64 step; the top 53 bits of the last
 * become a double u in [0, 1), exactly.
 */
static double dropout_uniform(uint64_t seed, int64_t b, int64_t i, int64_t j)
{
    uint64_t state = seed + (uint64_t)b;
    state = attn__splitmix64(&state) + (uint64_t)i;
    state = attn__splitmix64(&state) + (uint64_t)j;
    return (double)(attn__splitmix64(&state) >> 11) * 0x1.0p-53;
}

int attn_dropout_keeps(uint64_t seed, double probability, int64_t b, int64_t i,
                       int64_t j)
{
    return dropout_uniform(seed, b, i, j) >= probability;
}
