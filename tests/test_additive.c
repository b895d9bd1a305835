/* Bahdanau (additive) attention: exact values, properties, errors. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "allclose.h"
#include "attention.h"

/* Two decoder states over three encoder states, d_s = d_h = d_a = 2. */
static const double QUERY[4] = {0.5, -1, 1, 2};
static const double KEYS[6] = {1, 0, 0, 1, 1, 1};
static const double W_S[4] = {1, 0.5, -0.5, 1};
static const double W_H[4] = {0.3, -0.2, 0.7, 0.4};
static const double BIAS[2] = {0.1, -0.1};
static const double V[2] = {1.5, -2};

static int run(double *energy, double *scores, double *weights, double *context,
               const double *b)
{
    double work[16];
    assert_true(attn_additive_work_size(3, 2, 2) <= 16);
    return attn_additive(energy, scores, weights, context, QUERY, KEYS, W_S,
                         W_H, b, V, 2, 3, 2, 2, 2, work);
}

/* Exact values from python3's decimal module at 40 digits, with
 * tanh(x) = (e^2x - 1) / (e^2x + 1). */
static void test_additive_small_case_matches_exact_values(void **state)
{
    (void)state;
    const double expected_energy[12] = {
        0.88535164820226253,  -0.78180635760877415, 0.94680601284626831,
        -0.42189900525000795, 0.97045193661345386,  -0.57166996608511722,
        0.3799489622552249,   0.97574313003145152,  0.66403677026784902,
        0.99263152020112799,  0.8004990217606297,   0.98902740220109919};
    const double expected_scores[6] = {
        2.8916401875209421,  2.2640070297694184,   2.5990178370904151,
        -1.3815628166800658, -0.98920788500048262, -0.77730627176125378};
    const double expected_weights[6] = {
        0.43856614099359248, 0.23413022492550351, 0.32730363408090402,
        0.23199948787040017, 0.34346667669805919, 0.42453383543154061};
    const double expected_context[4] = {
        0.76586977507449649, 0.56143385900640752, 0.65653332330194081,
        0.76800051212959985};
    double energy[12], scores[6], weights[6], context[4];
    assert_int_equal(run(energy, scores, weights, context, BIAS), ATTN_OK);
    assert_allclose(energy, expected_energy, 12, 1e-14, 0.0);
    assert_allclose(scores, expected_scores, 6, 1e-14, 0.0);
    assert_allclose(weights, expected_weights, 6, 1e-14, 0.0);
    assert_allclose(context, expected_context, 4, 1e-14, 0.0);
}

static void test_additive_missing_bias_equals_zero_bias(void **state)
{
    (void)state;
    const double zero[2] = {0, 0};
    double a[4], b[4];
    assert_int_equal(run(NULL, NULL, NULL, a, NULL), ATTN_OK);
    assert_int_equal(run(NULL, NULL, NULL, b, zero), ATTN_OK);
    assert_memory_equal(a, b, sizeof a);
}

/* The context is a convex combination of the keys, weights summing to 1. */
static void
test_additive_weights_sum_to_one_and_context_mixes_keys(void **state)
{
    (void)state;
    double weights[6], context[4];
    assert_int_equal(run(NULL, NULL, weights, context, BIAS), ATTN_OK);
    for (int i = 0; i < 2; i++) {
        const double *w = &weights[i * 3];
        assert_true(close_enough(w[0] + w[1] + w[2], 1.0, 1e-15, 0.0));
        const double expected[2] = {w[0] + w[2], w[1] + w[2]};
        assert_allclose(&context[i * 2], expected, 2, 1e-15, 0.0);
    }
}

static void test_additive_outputs_are_optional(void **state)
{
    (void)state;
    double full[4], bare[4], energy[12], scores[6], weights[6];
    assert_int_equal(run(energy, scores, weights, full, BIAS), ATTN_OK);
    assert_int_equal(run(NULL, NULL, NULL, bare, BIAS), ATTN_OK);
    assert_memory_equal(full, bare, sizeof full);
}

static void test_additive_work_size_counts_projections_and_a_row(void **state)
{
    (void)state;
    assert_int_equal(attn_additive_work_size(3, 2, 4), (3 + 2) * 4 + 3);
    assert_int_equal(attn_additive_work_size(0, 2, 4), 0);
    assert_int_equal(attn_additive_work_size(3, -1, 4), 0);
    assert_int_equal(attn_additive_work_size(3, 2, 0), 0);
}

static void test_additive_rejects_null_pointers(void **state)
{
    (void)state;
    double context[4], work[16];
    const double *inputs[5] = {QUERY, KEYS, W_S, W_H, V};
    for (int which = 0; which < 6; which++) {
        const double *in[5];
        memcpy(in, inputs, sizeof in);
        if (which < 5) in[which] = NULL;
        assert_int_equal(attn_additive(NULL, NULL, NULL, context, in[0], in[1],
                                       in[2], in[3], BIAS, in[4], 2, 3, 2, 2, 2,
                                       which < 5 ? work : NULL),
                         ATTN_ERR_NULL);
    }
}

static void test_additive_rejects_bad_sizes(void **state)
{
    (void)state;
    double context[4], work[16];
    for (int which = 0; which < 5; which++) {
        int s[5] = {2, 3, 2, 2, 2};
        s[which] = which % 2 ? -4 : 0;
        assert_int_equal(attn_additive(NULL, NULL, NULL, context, QUERY, KEYS,
                                       W_S, W_H, BIAS, V, s[0], s[1], s[2],
                                       s[3], s[4], work),
                         ATTN_ERR_SIZE);
    }
    assert_int_equal(attn_additive(NULL, NULL, NULL, context, QUERY, KEYS, W_S,
                                   W_H, BIAS, V, INT_MAX, INT_MAX, 2, 2,
                                   INT_MAX, work),
                     ATTN_ERR_SIZE_OVERFLOW);
}

static void test_additive_rejects_non_finite_inputs(void **state)
{
    (void)state;
    double context[4], work[16];
    const double bad_bias[2] = {0, INFINITY};
    const double bad_w_h[4] = {0.3, NAN, 0.7, 0.4};
    assert_int_equal(attn_additive(NULL, NULL, NULL, context, QUERY, KEYS, W_S,
                                   W_H, bad_bias, V, 2, 3, 2, 2, 2, work),
                     ATTN_ERR_NOT_FINITE);
    assert_int_equal(attn_additive(NULL, NULL, NULL, context, QUERY, KEYS, W_S,
                                   bad_w_h, BIAS, V, 2, 3, 2, 2, 2, work),
                     ATTN_ERR_NOT_FINITE);
}

/* tanh saturates, so an overflowing projection must be caught before it. */
static void test_additive_reports_values_that_overflow(void **state)
{
    (void)state;
    double scores[6], work[16];
    const double huge_query[4] = {1e300, 0, 1, 1};
    const double huge_w_s[4] = {1e10, 0, 0, 0};
    assert_int_equal(attn_additive(NULL, scores, NULL, NULL, huge_query, KEYS,
                                   huge_w_s, W_H, BIAS, V, 2, 3, 2, 2, 2, work),
                     ATTN_ERR_OVERFLOW_VALUE);
    const double huge_v[2] = {1.7e308, -1.7e308};
    assert_int_equal(attn_additive(NULL, scores, NULL, NULL, QUERY, KEYS, W_S,
                                   W_H, BIAS, huge_v, 2, 3, 2, 2, 2, work),
                     ATTN_ERR_OVERFLOW_VALUE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_additive_small_case_matches_exact_values),
        cmocka_unit_test(test_additive_missing_bias_equals_zero_bias),
        cmocka_unit_test(
            test_additive_weights_sum_to_one_and_context_mixes_keys),
        cmocka_unit_test(test_additive_outputs_are_optional),
        cmocka_unit_test(test_additive_work_size_counts_projections_and_a_row),
        cmocka_unit_test(test_additive_rejects_null_pointers),
        cmocka_unit_test(test_additive_rejects_bad_sizes),
        cmocka_unit_test(test_additive_rejects_non_finite_inputs),
        cmocka_unit_test(test_additive_reports_values_that_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
