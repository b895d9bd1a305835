/* Row softmax: exact values, stability, masking with -INFINITY, errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "allclose.h"
#include "attention.h"
#include "test_rng.h"

enum { MAX_CELLS = 8 };

/* Softmax of x [rows, cols] must succeed and match expected to 1e-14. */
static void assert_softmax_gives(const double *x, int rows, int cols,
                                 const double *expected)
{
    double w[MAX_CELLS];
    assert_true(rows * cols <= MAX_CELLS);
    assert_int_equal(attn_softmax_rows(w, x, rows, cols), ATTN_OK);
    assert_allclose(w, expected, (size_t)(rows * cols), 1e-14, 0.0);
}

/* Exact values from python3's decimal module at 40 digits:
 * e_j = exp(x_j - 100), weights = e / sum(e). */
static void test_softmax_of_100_95_5_3_matches_exact_values(void **state)
{
    (void)state;
    const double x[4] = {100, 95, 5, 3};
    const double expected[4] = {0.99330714907571514, 0.0066928509242848556,
                                5.4841304964076696e-42, 7.4219635403787733e-43};
    assert_softmax_gives(x, 1, 4, expected);
}

/* The same logits divided by sqrt(64) = 8, as tutorial 003 does: each
 * quotient (12.5, 11.875, 0.625, 0.375) is exact in binary. */
static void test_softmax_of_100_95_5_3_over_8_matches_exact_values(void **state)
{
    (void)state;
    const double x[4] = {100.0 / 8, 95.0 / 8, 5.0 / 8, 3.0 / 8};
    const double expected[4] = {0.65134961039881156, 0.34864232292735564,
                                4.5348944691216785e-06, 3.5317793636981462e-06};
    assert_softmax_gives(x, 1, 4, expected);
}

/* Rows of magnitude 1e4 would overflow exp without the max subtraction. */
static void test_softmax_rows_of_magnitude_1e4_are_exact(void **state)
{
    (void)state;
    const double x[6] = {10000, 9999, -10000, -10000, -10001, -10002};
    const double expected[6] = {
        0.7310585786300049, 0.2689414213699951,  0.0,
        0.6652409557748219, 0.24472847105479764, 0.090030573170380462};
    assert_softmax_gives(x, 2, 3, expected);
}

static void test_softmax_rows_sum_to_one(void **state)
{
    (void)state;
    enum { ROWS = 7, COLS = 13 };
    double x[ROWS * COLS], w[ROWS * COLS];
    test_rng rng;
    test_rng_seed(&rng, 11);
    test_rng_fill(&rng, x, ROWS * COLS, -30.0, 30.0);
    assert_int_equal(attn_softmax_rows(w, x, ROWS, COLS), ATTN_OK);
    for (int r = 0; r < ROWS; r++) {
        double sum = 0.0;
        for (int c = 0; c < COLS; c++) {
            assert_true(w[r * COLS + c] >= 0.0);
            sum += w[r * COLS + c];
        }
        assert_true(close_enough(sum, 1.0, 1e-15, 0.0));
    }
}

static void test_softmax_masked_entries_are_exactly_zero(void **state)
{
    (void)state;
    const double x[4] = {1.0, -INFINITY, 2.0, -INFINITY};
    /* softmax([1, 2]) = [1/(1+e), e/(1+e)] */
    const double expected[4] = {0.2689414213699951, 0.0, 0.7310585786300049,
                                0.0};
    double w[4];
    assert_int_equal(attn_softmax_rows(w, x, 1, 4), ATTN_OK);
    assert_true(w[1] == 0.0);
    assert_true(w[3] == 0.0);
    assert_allclose(w, expected, 4, 1e-15, 0.0);
}

static void test_softmax_fully_masked_row_is_zero(void **state)
{
    (void)state;
    const double x[6] = {-INFINITY, -INFINITY, -INFINITY, 0.0, 0.0, 0.0};
    double w[6];
    assert_int_equal(attn_softmax_rows(w, x, 2, 3), ATTN_OK);
    for (int j = 0; j < 3; j++) {
        assert_true(w[j] == 0.0);
        assert_true(close_enough(w[3 + j], 1.0 / 3.0, 1e-15, 0.0));
    }
}

/* A finite sentinel is not a mask: a row of -1e9 is uniform, while a row
 * of -INFINITY is all 0. Beside a real score both give exactly 0. */
static void test_softmax_minus_infinity_differs_from_minus_1e9(void **state)
{
    (void)state;
    const double sentinel[4] = {-1e9, -1e9, 3.0, -1e9};
    const double masked[4] = {-INFINITY, -INFINITY, 3.0, -INFINITY};
    const double all_sentinel[2] = {-1e9, -1e9};
    const double all_masked[2] = {-INFINITY, -INFINITY};
    double a[4], b[4], c[2], d[2];
    assert_int_equal(attn_softmax_rows(a, sentinel, 1, 4), ATTN_OK);
    assert_int_equal(attn_softmax_rows(b, masked, 1, 4), ATTN_OK);
    assert_int_equal(attn_softmax_rows(c, all_sentinel, 1, 2), ATTN_OK);
    assert_int_equal(attn_softmax_rows(d, all_masked, 1, 2), ATTN_OK);
    for (int j = 0; j < 4; j++) assert_true(a[j] == b[j]);
    assert_true(b[2] == 1.0);
    assert_true(c[0] == 0.5 && c[1] == 0.5);
    assert_true(d[0] == 0.0 && d[1] == 0.0);
}

static void test_softmax_may_write_over_its_input(void **state)
{
    (void)state;
    double x[3] = {1.0, 2.0, 3.0};
    const double expected[3] = {0.090030573170380462, 0.24472847105479764,
                                0.6652409557748219};
    assert_int_equal(attn_softmax_rows(x, x, 1, 3), ATTN_OK);
    assert_allclose(x, expected, 3, 1e-15, 0.0);
}

static void test_softmax_rejects_nan_and_positive_infinity(void **state)
{
    (void)state;
    const double with_nan[3] = {1.0, NAN, 2.0};
    const double with_inf[3] = {1.0, INFINITY, 2.0};
    double w[3] = {7.0, 7.0, 7.0};
    assert_int_equal(attn_softmax_rows(w, with_nan, 1, 3), ATTN_ERR_NOT_FINITE);
    assert_int_equal(attn_softmax_rows(w, with_inf, 1, 3), ATTN_ERR_NOT_FINITE);
    /* Nothing is written when the input is rejected. */
    for (int j = 0; j < 3; j++) assert_true(w[j] == 7.0);
}

static void test_softmax_rejects_null_pointers_and_empty_sizes(void **state)
{
    (void)state;
    const double x[2] = {0.0, 1.0};
    double w[2];
    assert_int_equal(attn_softmax_rows(NULL, x, 1, 2), ATTN_ERR_NULL);
    assert_int_equal(attn_softmax_rows(w, NULL, 1, 2), ATTN_ERR_NULL);
    assert_int_equal(attn_softmax_rows(w, x, 0, 2), ATTN_ERR_SIZE);
    assert_int_equal(attn_softmax_rows(w, x, 1, -2), ATTN_ERR_SIZE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax_of_100_95_5_3_matches_exact_values),
        cmocka_unit_test(
            test_softmax_of_100_95_5_3_over_8_matches_exact_values),
        cmocka_unit_test(test_softmax_rows_of_magnitude_1e4_are_exact),
        cmocka_unit_test(test_softmax_rows_sum_to_one),
        cmocka_unit_test(test_softmax_masked_entries_are_exactly_zero),
        cmocka_unit_test(test_softmax_fully_masked_row_is_zero),
        cmocka_unit_test(test_softmax_minus_infinity_differs_from_minus_1e9),
        cmocka_unit_test(test_softmax_may_write_over_its_input),
        cmocka_unit_test(test_softmax_rejects_nan_and_positive_infinity),
        cmocka_unit_test(test_softmax_rejects_null_pointers_and_empty_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
