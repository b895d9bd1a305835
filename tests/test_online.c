/* The online softmax: the same output as the plain softmax, each tile's
 * running state as an independent computation gives it, and errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "allclose.h"
#include "attention.h"
#include "test_rng.h"

enum { NQ = 5, NK = 11, DK = 3, DV = 4, MAX_TILES = NK };

typedef struct online_run {
    double output[NQ * DV], scaled[NQ * NK];
    double max[NQ * MAX_TILES], sum[NQ * MAX_TILES];
    double acc[NQ * MAX_TILES * DV];
} online_run;

static double q[NQ * DK], k[NK * DK], v[NK * DV];

static int setup(void **state)
{
    (void)state;
    test_rng rng;
    test_rng_seed(&rng, 7);
    for (int i = 0; i < NQ * DK; i++) q[i] = test_rng_uniform(&rng, -2, 2);
    for (int i = 0; i < NK * DK; i++) k[i] = test_rng_uniform(&rng, -2, 2);
    for (int i = 0; i < NK * DV; i++) v[i] = test_rng_uniform(&rng, -1, 1);
    return 0;
}

static int run(online_run *r, int tile)
{
    return attn_online_attention(r->output, r->scaled, r->max, r->sum, r->acc,
                                 q, k, v, NQ, NK, DK, DV, tile,
                                 1.0 / sqrt((double)DK));
}

static void plain_output(double *output)
{
    double work[NK + 8];
    assert_true(attn_sdpa_work_size(NK) <= NK + 8);
    assert_int_equal(attn_sdpa(NULL, NULL, NULL, output, q, k, v, 1, NQ, NK, DK,
                               DV, NULL, work),
                     ATTN_OK);
}

static void test_every_tile_size_gives_the_plain_softmax_output(void **state)
{
    (void)state;
    double plain[NQ * DV];
    plain_output(plain);
    for (int tile = 1; tile <= NK + 3; tile++) {
        online_run r;
        assert_int_equal(run(&r, tile), ATTN_OK);
        assert_allclose(r.output, plain, NQ * DV, 1e-14, 1e-15);
    }
}

/* After tile t the state is that of the plain softmax over the keys seen
 * so far: m their largest score, l = Σ exp(s − m), acc = Σ exp(s − m) v. */
static void
test_each_tile_state_is_the_softmax_of_the_keys_seen_so_far(void **state)
{
    (void)state;
    const int tile = 3, tiles = attn_online_tiles(NK, tile);
    assert_int_equal(tiles, 4);
    online_run r;
    assert_int_equal(run(&r, tile), ATTN_OK);
    for (int i = 0; i < NQ; i++)
        for (int t = 0; t < tiles; t++) {
            const int seen = (t + 1) * tile < NK ? (t + 1) * tile : NK;
            double s[NK], m = -INFINITY, l = 0.0, acc[DV] = {0};
            for (int j = 0; j < seen; j++) {
                s[j] = 0.0;
                for (int c = 0; c < DK; c++)
                    s[j] += q[i * DK + c] * k[j * DK + c];
                s[j] /= sqrt((double)DK);
                if (s[j] > m) m = s[j];
            }
            for (int j = 0; j < seen; j++) {
                l += exp(s[j] - m);
                for (int c = 0; c < DV; c++)
                    acc[c] += exp(s[j] - m) * v[j * DV + c];
            }
            assert_allclose(&r.max[i * tiles + t], &m, 1, 1e-15, 0.0);
            assert_allclose(&r.sum[i * tiles + t], &l, 1, 1e-14, 0.0);
            assert_allclose(&r.acc[(i * tiles + t) * DV], acc, DV, 1e-14,
                            1e-15);
        }
}

static void test_one_tile_holding_every_key_is_the_plain_softmax(void **state)
{
    (void)state;
    online_run r;
    assert_int_equal(run(&r, NK), ATTN_OK);
    double plain[NQ * DV];
    plain_output(plain);
    assert_allclose(r.output, plain, NQ * DV, 1e-15, 1e-16);
}

static void test_bad_input_is_refused_with_its_status(void **state)
{
    (void)state;
    online_run r;
    assert_int_equal(attn_online_attention(NULL, r.scaled, r.max, r.sum, r.acc,
                                           q, k, v, NQ, NK, DK, DV, 2, 1.0),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_online_attention(r.output, r.scaled, r.max, r.sum,
                                           r.acc, q, k, v, NQ, NK, DK, DV, 0,
                                           1.0),
                     ATTN_ERR_SIZE);
    assert_int_equal(attn_online_attention(r.output, r.scaled, r.max, r.sum,
                                           r.acc, q, k, v, NQ, NK, DK, DV, 2,
                                           INFINITY),
                     ATTN_ERR_RANGE);
    const double saved = k[4];
    k[4] = NAN;
    assert_int_equal(run(&r, 2), ATTN_ERR_NOT_FINITE);
    k[4] = saved;
    /* A score past the largest double. */
    assert_int_equal(attn_online_attention(r.output, r.scaled, r.max, r.sum,
                                           r.acc, q, k, v, NQ, NK, DK, DV, 2,
                                           1e308),
                     ATTN_ERR_OVERFLOW_VALUE);
    assert_int_equal(attn_online_tiles(10, 3), 4);
    assert_int_equal(attn_online_tiles(10, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_tile_size_gives_the_plain_softmax_output),
        cmocka_unit_test(
            test_each_tile_state_is_the_softmax_of_the_keys_seen_so_far),
        cmocka_unit_test(test_one_tile_holding_every_key_is_the_plain_softmax),
        cmocka_unit_test(test_bad_input_is_refused_with_its_status),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
