/* Dropout: a pure function of (seed, b, i, j), applied after softmax. */
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

/* The uniform draws below come from a python3 transcription of the
 * generator documented in src/kernels/options.c (splitmix64 steps over
 * seed, b, i, j; top 53 bits). A weight is kept iff its draw u >= p, so
 * p = u keeps it and the next double above u drops it. These pin the
 * generator: the WASM build must draw the same bits. */
static void test_dropout_draws_match_the_documented_generator(void **state)
{
    (void)state;
    const struct {
        uint64_t seed;
        int64_t b, i, j;
        double u;
    } draws[] = {
        {0, 0, 0, 0, 0x1.1c13ade1c7e5cp-3},
        {42, 1, 2, 3, 0x1.16fefd4d93652p-2},
        {UINT64_MAX, 5, 7, 11, 0x1.ecc7b91e17f61p-1},
        {7, -1, 0, 3, 0x1.3ca9657d22ce0p-6},
    };
    for (size_t n = 0; n < sizeof draws / sizeof draws[0]; n++) {
        const double u = draws[n].u;
        assert_int_equal(attn_dropout_keeps(draws[n].seed, u, draws[n].b,
                                            draws[n].i, draws[n].j),
                         1);
        assert_int_equal(attn_dropout_keeps(draws[n].seed, nextafter(u, 1.0),
                                            draws[n].b, draws[n].i, draws[n].j),
                         0);
    }
}

static void test_dropout_probability_zero_keeps_everything(void **state)
{
    (void)state;
    for (int64_t i = 0; i < 50; i++)
        for (int64_t j = 0; j < 50; j++)
            assert_int_equal(attn_dropout_keeps(9, 0.0, 0, i, j), 1);
}

/* Default options but for dropout with probability p and this seed. */
static attn_options dropout_options(double p, uint64_t seed)
{
    attn_options opts;
    attn_options_init(&opts);
    opts.dropout = p;
    opts.seed = seed;
    return opts;
}

enum { NQ = 200, NK = 250 };

/* q = 0 makes every weight 1/NK, so a weight is nonzero iff it was kept. */
static int kept_count(double *weights, uint64_t seed, double p)
{
    static const double zeros[NK] = {0};
    double work[NK];
    const attn_options opts = dropout_options(p, seed);
    assert_int_equal(attn_sdpa(NULL, NULL, weights, NULL, zeros, zeros, zeros,
                               1, NQ, NK, 1, 1, &opts, work),
                     ATTN_OK);
    int kept = 0;
    for (int n = 0; n < NQ * NK; n++) kept += weights[n] != 0.0;
    return kept;
}

/* Expected 0.7 * 50000 = 35000 kept. The generator is seeded, so the count
 * is fixed: it is 35041 (0.12% off). The 5% bound says what the test
 * means; the exact count guards the generator. */
static void test_dropout_keeps_about_one_minus_p_of_a_large_matrix(void **state)
{
    (void)state;
    static double weights[NQ * NK];
    const int kept = kept_count(weights, 2024, 0.3);
    assert_in_range(kept, 35000 - 1750, 35000 + 1750);
    assert_int_equal(kept, 35041);
    /* Kept weights are 1/NK scaled by 1/(1 - p). */
    for (int n = 0; n < NQ * NK; n++)
        if (weights[n] != 0.0)
            assert_true(weights[n] == (1.0 / NK) / (1.0 - 0.3));
}

typedef struct small_case {
    double q[3 * 4], k[5 * 4], v[5 * 2];
} small_case;

static void small_case_fill(small_case *c)
{
    test_rng rng;
    test_rng_seed(&rng, 31);
    test_rng_fill(&rng, c->q, 12, -1.0, 1.0);
    test_rng_fill(&rng, c->k, 20, -1.0, 1.0);
    test_rng_fill(&rng, c->v, 10, -1.0, 1.0);
}

static int run(double *weights, double *output, const small_case *c,
               const attn_options *opts)
{
    double work[5];
    return attn_sdpa(NULL, NULL, weights, output, c->q, c->k, c->v, 1, 3, 5, 4,
                     2, opts, work);
}

static void test_dropout_same_seed_gives_the_same_weights(void **state)
{
    (void)state;
    small_case c;
    small_case_fill(&c);
    const attn_options opts = dropout_options(0.4, 77);
    double a[15], b[15], oa[6], ob[6];
    assert_int_equal(run(a, oa, &c, &opts), ATTN_OK);
    assert_int_equal(run(b, ob, &c, &opts), ATTN_OK);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_equal(oa, ob, sizeof oa);
}

static void test_dropout_different_seed_gives_different_weights(void **state)
{
    (void)state;
    small_case c;
    small_case_fill(&c);
    attn_options opts = dropout_options(0.4, 77);
    double a[15], b[15];
    assert_int_equal(run(a, NULL, &c, &opts), ATTN_OK);
    opts.seed = 78;
    assert_int_equal(run(b, NULL, &c, &opts), ATTN_OK);
    assert_memory_not_equal(a, b, sizeof a);
}

static void
test_dropout_probability_zero_is_identical_to_no_dropout(void **state)
{
    (void)state;
    small_case c;
    small_case_fill(&c);
    const attn_options opts = dropout_options(0.0, 12345);
    double a[15], b[15], oa[6], ob[6];
    assert_int_equal(run(a, oa, &c, &opts), ATTN_OK);
    assert_int_equal(run(b, ob, &c, NULL), ATTN_OK);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_equal(oa, ob, sizeof oa);
}

/* `weights` holds what multiplies V: dropped entries 0, kept ones divided
 * by 1 - p, and the output is exactly their weighted sum. */
static void test_dropout_weights_are_the_ones_that_multiply_values(void **state)
{
    (void)state;
    small_case c;
    small_case_fill(&c);
    const double p = 0.25;
    const attn_options opts = dropout_options(p, 5);
    double plain[15], dropped[15], output[6], expected[6];
    assert_int_equal(run(plain, NULL, &c, NULL), ATTN_OK);
    assert_int_equal(run(dropped, output, &c, &opts), ATTN_OK);
    int zeros = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++) {
            const double w = dropped[i * 5 + j];
            if (attn_dropout_keeps(5, p, 0, i, j)) {
                assert_true(w == plain[i * 5 + j] / (1.0 - p));
            } else {
                assert_true(w == 0.0);
                zeros++;
            }
        }
    assert_true(zeros > 0); /* the case does exercise dropping */
    assert_int_equal(attn_weighted_sum(expected, dropped, c.v, 3, 5, 2),
                     ATTN_OK);
    assert_allclose(output, expected, 6, 0.0, 0.0);
}

static void test_dropout_keeps_masked_weights_at_zero(void **state)
{
    (void)state;
    small_case c;
    small_case_fill(&c);
    attn_options opts = dropout_options(0.5, 1);
    opts.mask.kinds = ATTN_MASK_CAUSAL;
    double w[15];
    assert_int_equal(run(w, NULL, &c, &opts), ATTN_OK);
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 5; j++) assert_true(w[i * 5 + j] == 0.0);
}

static void test_dropout_probability_outside_0_1_is_rejected(void **state)
{
    (void)state;
    small_case c;
    small_case_fill(&c);
    attn_options opts;
    attn_options_init(&opts);
    const double bad[4] = {1.0, 1.5, -1e-300, INFINITY};
    for (int n = 0; n < 4; n++) {
        opts.dropout = bad[n];
        assert_int_equal(run(NULL, NULL, &c, &opts), ATTN_ERR_RANGE);
    }
}

/* Doubling kept weights can push a large output past DBL_MAX. */
static void test_dropout_reports_an_output_that_overflows(void **state)
{
    (void)state;
    const double zeros[2] = {0, 0};
    const double v[2] = {1.5e308, 1.5e308};
    attn_options opts = dropout_options(0.5, 0);
    double output[1], weights[2], work[2];
    int found = 0;
    for (uint64_t seed = 0; seed < 64 && !found; seed++) {
        if (!attn_dropout_keeps(seed, 0.5, 0, 0, 0) ||
            !attn_dropout_keeps(seed, 0.5, 0, 0, 1))
            continue;
        found = 1;
        opts.seed = seed; /* both weights kept: 1.0 * 1.5e308 * 2 */
        assert_int_equal(attn_sdpa(NULL, NULL, weights, output, zeros, zeros, v,
                                   1, 1, 2, 1, 1, &opts, work),
                         ATTN_ERR_OVERFLOW_VALUE);
    }
    assert_true(found);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dropout_draws_match_the_documented_generator),
        cmocka_unit_test(test_dropout_probability_zero_keeps_everything),
        cmocka_unit_test(
            test_dropout_keeps_about_one_minus_p_of_a_large_matrix),
        cmocka_unit_test(test_dropout_same_seed_gives_the_same_weights),
        cmocka_unit_test(test_dropout_different_seed_gives_different_weights),
        cmocka_unit_test(
            test_dropout_probability_zero_is_identical_to_no_dropout),
        cmocka_unit_test(
            test_dropout_weights_are_the_ones_that_multiply_values),
        cmocka_unit_test(test_dropout_keeps_masked_weights_at_zero),
        cmocka_unit_test(test_dropout_probability_outside_0_1_is_rejected),
        cmocka_unit_test(test_dropout_reports_an_output_that_overflows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
