/* Linear attention with phi(x) = elu(x) + 1: exact values and errors. */
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
#include "test_rng.h"

/* Three tokens, d_k = d_v = 2; phi(x) = x + 1 for x > 0, e^x otherwise. */
static const double Q[6] = {1, -1, 0.5, 0, -2, 0.3};
static const double K[6] = {0, 1, -0.5, 2, 1, -1};
static const double V[6] = {1, 2, 3, -1, 0, 0.5};

static int run(double *output, const double *q, int n_q, int n_k, int causal)
{
    double work[8];
    assert_true(attn_linear_work_size(2, 2) <= 8);
    return attn_linear(output, q, K, V, 1, n_q, n_k, 2, 2, causal, work);
}

/* Exact values from python3's decimal module: output_i = Σ_j a_ij v_j /
 * Σ_j a_ij with a_ij = phi(q_i) · phi(k_j). */
static void test_linear_non_causal_matches_exact_values(void **state)
{
    (void)state;
    const double expected[6] = {1.0542093143384172, 0.56841564712979264,
                                1.4130494155789064, 0.44296599593265007,
                                1.9663719891841003, 0.24952573209837872};
    double output[6];
    assert_int_equal(run(output, Q, 3, 3, 0), ATTN_OK);
    assert_allclose(output, expected, 6, 1e-14, 0.0);
}

/* Causal: query i sums keys 0..i only, so row 0 is v_0 itself and the last
 * row equals the non-causal one. */
static void test_linear_causal_matches_exact_values(void **state)
{
    (void)state;
    const double expected[6] = {1,
                                2,
                                2.0553046251402649,
                                0.41704306228960242,
                                1.9663719891841003,
                                0.24952573209837872};
    double output[6];
    assert_int_equal(run(output, Q, 3, 3, 1), ATTN_OK);
    assert_allclose(output, expected, 6, 1e-14, 0.0);
}

/* With fewer keys than queries, later queries see every key. */
static void test_linear_causal_with_more_queries_than_keys(void **state)
{
    (void)state;
    const double q[8] = {1, -1, 0.5, 0, -2, 0.3, 0.1, 0.2};
    const double expected[8] = {1,
                                2,
                                2.0553046251402649,
                                0.41704306228960242,
                                2.1855994806151946,
                                0.22160077907720788,
                                2.0987724447854936,
                                0.35184133282175967};
    double output[8];
    assert_int_equal(run(output, q, 4, 2, 1), ATTN_OK);
    assert_allclose(output, expected, 8, 1e-14, 0.0);
}

/* The prefix sums reach the full sums in the same order: exact equality. */
static void test_linear_causal_last_row_equals_non_causal(void **state)
{
    (void)state;
    enum { B = 2, N = 7, DK = 3, DV = 4 };
    test_rng rng;
    test_rng_seed(&rng, 51);
    double q[B * N * DK], k[B * N * DK], v[B * N * DV];
    test_rng_fill(&rng, q, B * N * DK, -3.0, 3.0);
    test_rng_fill(&rng, k, B * N * DK, -3.0, 3.0);
    test_rng_fill(&rng, v, B * N * DV, -3.0, 3.0);
    double causal[B * N * DV], full[B * N * DV], work[DK * DV + 2 * DK];
    assert_int_equal(attn_linear(causal, q, k, v, B, N, N, DK, DV, 1, work),
                     ATTN_OK);
    assert_int_equal(attn_linear(full, q, k, v, B, N, N, DK, DV, 0, work),
                     ATTN_OK);
    for (int b = 0; b < B; b++) {
        const int last = (b * N + N - 1) * DV;
        assert_allclose(&causal[last], &full[last], DV, 0.0, 0.0);
    }
    /* Earlier causal rows differ from the full ones. */
    assert_false(causal[0] == full[0]);
}

/* Every a_ij > 0, so each output is a weighted average of the v rows. */
static void test_linear_output_lies_between_the_value_extremes(void **state)
{
    (void)state;
    enum { N = 9, DK = 2, DV = 1 };
    test_rng rng;
    test_rng_seed(&rng, 52);
    double q[N * DK], k[N * DK], v[N * DV], output[N * DV], work[8];
    test_rng_fill(&rng, q, N * DK, -5.0, 5.0);
    test_rng_fill(&rng, k, N * DK, -5.0, 5.0);
    test_rng_fill(&rng, v, N * DV, -1.0, 1.0);
    double lo = v[0], hi = v[0];
    for (int j = 1; j < N; j++) {
        lo = v[j] < lo ? v[j] : lo;
        hi = v[j] > hi ? v[j] : hi;
    }
    assert_int_equal(attn_linear(output, q, k, v, 1, N, N, DK, DV, 0, work),
                     ATTN_OK);
    for (int i = 0; i < N; i++)
        assert_true(output[i] >= lo - 1e-15 && output[i] <= hi + 1e-15);
}

static void test_linear_work_size_holds_the_sums_and_a_row(void **state)
{
    (void)state;
    assert_int_equal(attn_linear_work_size(3, 4), 3 * 4 + 2 * 3);
    assert_int_equal(attn_linear_work_size(0, 4), 0);
    assert_int_equal(attn_linear_work_size(3, -1), 0);
}

static void test_linear_rejects_null_pointers(void **state)
{
    (void)state;
    double output[6], work[8];
    assert_int_equal(attn_linear(NULL, Q, K, V, 1, 3, 3, 2, 2, 0, work),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_linear(output, NULL, K, V, 1, 3, 3, 2, 2, 0, work),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_linear(output, Q, NULL, V, 1, 3, 3, 2, 2, 0, work),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_linear(output, Q, K, NULL, 1, 3, 3, 2, 2, 0, work),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_linear(output, Q, K, V, 1, 3, 3, 2, 2, 0, NULL),
                     ATTN_ERR_NULL);
}

static void test_linear_rejects_bad_sizes_and_causal_flag(void **state)
{
    (void)state;
    double output[6], work[8];
    for (int which = 0; which < 5; which++) {
        int s[5] = {1, 3, 3, 2, 2};
        s[which] = which % 2 ? 0 : -2;
        assert_int_equal(
            attn_linear(output, Q, K, V, s[0], s[1], s[2], s[3], s[4], 0, work),
            ATTN_ERR_SIZE);
    }
    assert_int_equal(attn_linear(output, Q, K, V, 1, 3, 3, 2, 2, 2, work),
                     ATTN_ERR_OPTION);
    assert_int_equal(
        attn_linear(output, Q, K, V, INT_MAX, INT_MAX, 3, INT_MAX, 2, 0, work),
        ATTN_ERR_SIZE_OVERFLOW);
}

static void test_linear_rejects_non_finite_inputs(void **state)
{
    (void)state;
    double output[6], work[8];
    const double bad[6] = {1, -1, 0.5, NAN, -2, 0.3};
    assert_int_equal(attn_linear(output, bad, K, V, 1, 3, 3, 2, 2, 0, work),
                     ATTN_ERR_NOT_FINITE);
    assert_int_equal(attn_linear(output, Q, K, bad, 1, 3, 3, 2, 2, 1, work),
                     ATTN_ERR_NOT_FINITE);
}

/* phi is positive, but e^x underflows to 0 below about -745, and sums of
 * huge keys overflow: neither may turn into a silent NaN or 0. */
static void test_linear_reports_denominators_out_of_range(void **state)
{
    (void)state;
    double output[6], work[8];
    const double far_below[6] = {-1000, -1000, -1000, -1000, -1000, -1000};
    assert_int_equal(
        attn_linear(output, far_below, K, V, 1, 3, 3, 2, 2, 0, work),
        ATTN_ERR_OVERFLOW_VALUE);
    const double huge_k[6] = {1e308, 1e308, 1e308, 1e308, 1e308, 1e308};
    assert_int_equal(attn_linear(output, Q, huge_k, V, 1, 3, 3, 2, 2, 0, work),
                     ATTN_ERR_OVERFLOW_VALUE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear_non_causal_matches_exact_values),
        cmocka_unit_test(test_linear_causal_matches_exact_values),
        cmocka_unit_test(test_linear_causal_with_more_queries_than_keys),
        cmocka_unit_test(test_linear_causal_last_row_equals_non_causal),
        cmocka_unit_test(test_linear_output_lies_between_the_value_extremes),
        cmocka_unit_test(test_linear_work_size_holds_the_sums_and_a_row),
        cmocka_unit_test(test_linear_rejects_null_pointers),
        cmocka_unit_test(test_linear_rejects_bad_sizes_and_causal_flag),
        cmocka_unit_test(test_linear_rejects_non_finite_inputs),
        cmocka_unit_test(test_linear_reports_denominators_out_of_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
