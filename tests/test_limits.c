/* Limits: a problem refuses to hold more bytes than its limit in fields,
 * results and scratch space (ATTN_ERR_TOO_LARGE, a message with both
 * numbers), having allocated nothing for the refused value. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "attention.h"
#include "failing_allocator.h"

static attn_problem *softmax_problem(failing_allocator *counts)
{
    const attn_allocator allocator = failing_allocator_use(counts);
    attn_problem *problem;
    assert_int_equal(attn_problem_create(&problem, "softmax", &allocator),
                     ATTN_OK);
    return problem;
}

static void test_the_default_limit_is_256_mib(void **state)
{
    (void)state;
    assert_int_equal(ATTN_PROBLEM_DEFAULT_MAX_BYTES, 268435456u);
}

static void test_a_field_above_the_limit_is_refused_before_it_is_copied(
    void **state)
{
    (void)state;
    failing_allocator counts = {-1, 0, 0};
    attn_problem *problem = softmax_problem(&counts);
    assert_int_equal(attn_problem_set_max_bytes(problem, 64), ATTN_OK);
    const double x[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    const long live_before = counts.live;
    const int dims[] = {10};
    assert_int_equal(attn_problem_set_tensor(problem, "x", 1, dims, x),
                     ATTN_ERR_TOO_LARGE);
    assert_string_equal(attn_problem_error(problem),
                        "x: a vector of 10 would make the problem hold 80 "
                        "bytes, more than its limit of 64 bytes; use smaller "
                        "inputs or raise the limit (maxBytes in the JS API, "
                        "--max-bytes in build/attn)");
    assert_int_equal(counts.live, live_before);
    /* Eight doubles are exactly 64 bytes: allowed. */
    const int eight[] = {8};
    assert_int_equal(attn_problem_set_tensor(problem, "x", 1, eight, x),
                     ATTN_OK);
    /* Replacing a field counts the new value instead of the old one. */
    const int seven[] = {7};
    assert_int_equal(attn_problem_set_tensor(problem, "x", 1, seven, x),
                     ATTN_OK);
    attn_problem_destroy(problem);
    assert_int_equal(counts.live, 0);
}

static void test_results_above_the_limit_fail_the_run_with_too_large(
    void **state)
{
    (void)state;
    failing_allocator counts = {-1, 0, 0};
    attn_problem *problem = softmax_problem(&counts);
    const double x[4] = {1, 2, 3, 4};
    const int dims[] = {1, 4};
    assert_int_equal(attn_problem_set_tensor(problem, "x", 2, dims, x),
                     ATTN_OK);
    /* x holds 32 bytes; scaled, max, exp, sum and weights need 112 more. */
    assert_int_equal(attn_problem_set_max_bytes(problem, 100), ATTN_OK);
    assert_int_equal(attn_problem_run(problem), ATTN_ERR_TOO_LARGE);
    assert_string_equal(attn_problem_error(problem),
                        "softmax: its results and scratch space would make the problem hold "
                        "104 bytes, more than its limit of 100 bytes; use "
                        "smaller inputs or raise the limit (maxBytes in the "
                        "JS API, --max-bytes in build/attn)");
    size_t length = 0;
    assert_int_equal(attn_problem_format(problem, ATTN_FORMAT_JSON, NULL, 0,
                                         &length),
                     ATTN_ERR_STATE);
    /* Raised, the same problem runs and gives the usual weights. */
    assert_int_equal(attn_problem_set_max_bytes(problem, 144), ATTN_OK);
    assert_int_equal(attn_problem_run(problem), ATTN_OK);
    int rank, out_dims[3];
    const double *weights;
    assert_int_equal(attn_problem_result(problem, "weights", &rank, out_dims,
                                         &weights), ATTN_OK);
    assert_true(fabs(weights[3] - 0.6439142598879722) < 1e-15);
    /* 0 restores the default. */
    assert_int_equal(attn_problem_set_max_bytes(problem, 0), ATTN_OK);
    assert_int_equal(attn_problem_run(problem), ATTN_OK);
    attn_problem_destroy(problem);
    assert_int_equal(counts.live, 0);
}

static void test_scratch_space_counts_against_the_limit(void **state)
{
    (void)state;
    /* Linear attention with d_k = d_v = 300 needs 300 x 302 doubles of
     * scratch (724800 bytes) for inputs and results of 9600 bytes. */
    enum { D = 300 };
    static double row[D];
    for (int i = 0; i < D; i++) row[i] = (double)i / D;
    failing_allocator counts = {-1, 0, 0};
    const attn_allocator allocator = failing_allocator_use(&counts);
    attn_problem *problem;
    assert_int_equal(attn_problem_create(&problem, "linear", &allocator),
                     ATTN_OK);
    const int dims[] = {1, D};
    assert_int_equal(attn_problem_set_tensor(problem, "q", 2, dims, row), 0);
    assert_int_equal(attn_problem_set_tensor(problem, "k", 2, dims, row), 0);
    assert_int_equal(attn_problem_set_tensor(problem, "v", 2, dims, row), 0);
    assert_int_equal(attn_problem_set_max_bytes(problem, 100000), ATTN_OK);
    assert_int_equal(attn_problem_run(problem), ATTN_ERR_TOO_LARGE);
    assert_string_equal(attn_problem_error(problem),
                        "linear: its results and scratch space would make "
                        "the problem hold 734400 bytes, more than its limit "
                        "of 100000 bytes; use smaller inputs or raise the "
                        "limit (maxBytes in the JS API, --max-bytes in "
                        "build/attn)");
    assert_int_equal(attn_problem_set_max_bytes(problem, 734400), ATTN_OK);
    assert_int_equal(attn_problem_run(problem), ATTN_OK);
    attn_problem_destroy(problem);
    assert_int_equal(counts.live, 0);
}

static void test_set_max_bytes_of_null_is_a_null_error(void **state)
{
    (void)state;
    assert_int_equal(attn_problem_set_max_bytes(NULL, 1), ATTN_ERR_NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_default_limit_is_256_mib),
        cmocka_unit_test(
            test_a_field_above_the_limit_is_refused_before_it_is_copied),
        cmocka_unit_test(
            test_results_above_the_limit_fail_the_run_with_too_large),
        cmocka_unit_test(test_scratch_space_counts_against_the_limit),
        cmocka_unit_test(test_set_max_bytes_of_null_is_a_null_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
