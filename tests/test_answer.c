/* A learner's answer for one cell (attn_check_answer): the values a learner
 * types, right or made with each slip, computed here by hand for a 2 × 2
 * problem chosen so that every slip gives a different weight, and the
 * verdict the check's rule gives them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "attention.h"

/* q·kᵀ = [[4, 5], [2.5, 4]], d_k = 2; the keys' matrix k is not
 * symmetric, so that Q·K (no transpose) differs from Q·Kᵀ. */
static const double Q[] = {2, 1, -0.5, 1.5};
static const double K[] = {1, 2, 1, 3};
static const double V[] = {1, 2, 3, 4};

typedef struct answered {
    attn_problem *problem;
    attn_check *check;
} answered;

static int setup(void **state)
{
    answered *made = calloc(1, sizeof *made);
    const int dims[2] = {2, 2};
    assert_int_equal(
        attn_problem_create(&made->problem, "scaledDotProduct", NULL), ATTN_OK);
    assert_int_equal(attn_problem_set_tensor(made->problem, "q", 2, dims, Q),
                     ATTN_OK);
    assert_int_equal(attn_problem_set_tensor(made->problem, "k", 2, dims, K),
                     ATTN_OK);
    assert_int_equal(attn_problem_set_tensor(made->problem, "v", 2, dims, V),
                     ATTN_OK);
    assert_int_equal(attn_problem_run(made->problem), ATTN_OK);
    assert_int_equal(attn_check_create(&made->check, made->problem), ATTN_OK);
    *state = made;
    return 0;
}

static int teardown(void **state)
{
    answered *made = *state;
    attn_check_destroy(made->check);
    attn_problem_destroy(made->problem);
    free(made);
    return 0;
}

/* The answer's JSON, parsed. */
static cJSON *answer(void **state, const char *result, int row, int col,
                     const char *typed)
{
    answered *made = *state;
    char buf[4096];
    size_t length = 0;
    const int status = attn_check_answer(made->check, result, row, col, typed,
                                         buf, sizeof buf, &length);
    if (status != ATTN_OK) fail_msg("%s", attn_check_error(made->check));
    assert_true(length < sizeof buf);
    cJSON *json = cJSON_Parse(buf);
    assert_non_null(json);
    return json;
}

static int is_right(const cJSON *json)
{
    return cJSON_IsTrue(cJSON_GetObjectItem(json, "right"));
}

static const char *text_of(const cJSON *json, const char *name)
{
    const cJSON *item = cJSON_GetObjectItem(json, name);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

/* "0.33" for 0.3302 at 2 decimals. */
static const char *typed(double x, int decimals)
{
    static char text[32];
    snprintf(text, sizeof text, "%.*f", decimals, x);
    return text;
}

/* softmax([a, b])[0] = 1 / (1 + e^(b - a)) */
static double first_of_two(double a, double b)
{
    return 1.0 / (1.0 + exp(b - a));
}

static void
test_the_exact_weight_rounded_to_2_or_3_decimals_is_right(void **state)
{
    const double w00 = first_of_two(4 / sqrt(2), 5 / sqrt(2));
    for (int d = 2; d <= 3; d++) {
        cJSON *json = answer(state, "weights", 0, 0, typed(w00, d));
        assert_true(is_right(json));
        assert_null(cJSON_GetObjectItem(json, "cause")->valuestring);
        assert_int_equal(cJSON_GetObjectItem(json, "decimals")->valueint, d);
        assert_string_equal(text_of(json, "verdict"),
                            "Right: the exact value is 0.3302.");
        cJSON_Delete(json);
    }
    cJSON *json = answer(state, "weights", 0, 0, "0,33");
    assert_true(is_right(json));
    cJSON_Delete(json);
}

static void test_a_whole_number_is_graded_at_2_decimals(void **state)
{
    cJSON *score = answer(state, "scores", 0, 0, "4");
    assert_true(is_right(score));
    cJSON_Delete(score);
    cJSON *scaled = answer(state, "scaled", 0, 0, "3"); /* 4/√2 = 2.83 */
    assert_false(is_right(scaled));
    cJSON_Delete(scaled);
}

static void test_each_slip_is_named_with_its_hint(void **state)
{
    const double r = sqrt(2);
    struct {
        const char *result;
        int row, col;
        double value;
        const char *cause, *verdict;
    } slips[] = {
        {"weights", 0, 0, first_of_two(4, 5), "no-scale",
         "This is the weight without dividing the scores by √d_k = 1.4142."},
        {"weights", 0, 0, first_of_two(4 / 2.0, 5 / 2.0), "scale-by-dk",
         "This is the weight with the scores divided by d_k = 2 instead of "
         "√d_k = 1.4142."},
        /* down the first column: scaled[0][0] against scaled[1][0] */
        {"weights", 0, 0, first_of_two(4 / r, 2.5 / r), "softmax-columns",
         "This is the weight with the softmax taken down the column instead "
         "of along the row."},
        /* Q·K: row 0 of Q with column 1 of K, 2·2 + 1·3 */
        {"scores", 0, 1, 7, "no-transpose",
         "This is the score from Q·K instead of Q·Kᵀ: a row of Q met a column "
         "of K."},
        /* Vᵀ: column 0 of V is its row 0 transposed, [1, 2] */
        {"output", 0, 0,
         first_of_two(4 / r, 5 / r) * 1 + (1 - first_of_two(4 / r, 5 / r)) * 2,
         "v-transposed",
         "This is the output with Vᵀ instead of V: the weights mixed the "
         "columns of V instead of its rows."},
    };
    for (size_t i = 0; i < sizeof slips / sizeof *slips; i++) {
        cJSON *json = answer(state, slips[i].result, slips[i].row, slips[i].col,
                             typed(slips[i].value, 2));
        assert_false(is_right(json));
        assert_string_equal(text_of(json, "cause"), slips[i].cause);
        assert_string_equal(text_of(json, "verdict"), slips[i].verdict);
        assert_true(strlen(text_of(json, "hint")) > 0);
        cJSON_Delete(json);
    }
}

static void
test_a_number_no_slip_gives_is_wrong_with_the_steps_hint(void **state)
{
    cJSON *json = answer(state, "weights", 0, 0, "0.5");
    assert_false(is_right(json));
    assert_string_equal(text_of(json, "cause"), "misprint");
    assert_string_equal(text_of(json, "hint"),
                        "Take e to the power of each scaled score in the row, "
                        "and divide this one by their sum.");
    /* the softmax step, after the scores and the scaling (steps from 0) */
    assert_int_equal(cJSON_GetObjectItem(json, "step")->valueint, 4);
    assert_string_equal(text_of(json, "rounded"), "0.33");
    cJSON_Delete(json);
}

static void
test_one_off_in_the_last_decimal_near_the_boundary_is_rounding(void **state)
{
    /* output[1][0] = 2.48563…: 2.49 is one off, close to 2.485 */
    const double w = first_of_two(2.5 / sqrt(2), 4 / sqrt(2));
    const double out = w * 1 + (1 - w) * 3;
    assert_string_equal(typed(out, 2), "2.49");
    cJSON *json = answer(state, "output", 1, 0, "2.48");
    assert_false(is_right(json));
    assert_string_equal(text_of(json, "cause"), "rounding");
    assert_string_equal(text_of(json, "verdict"),
                        "Close: one off in the last decimal.");
    cJSON_Delete(json);
}

static void test_text_that_is_no_number_asks_for_one(void **state)
{
    const char *texts[] = {"", "abc", "0.4.1", "1e3", "0.41x"};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        cJSON *json = answer(state, "weights", 0, 0, texts[i]);
        assert_false(cJSON_IsTrue(cJSON_GetObjectItem(json, "readable")));
        assert_false(is_right(json));
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(json, "value")));
        cJSON_Delete(json);
    }
    cJSON *minus = answer(state, "scores", 1, 0,
                          "\xe2\x88\x92"
                          "2.5");
    assert_false(is_right(minus)); /* −2.5 against 2.5 */
    assert_true(cJSON_GetObjectItem(minus, "value")->valuedouble == -2.5);
    cJSON_Delete(minus);
}

static void test_a_cell_or_result_that_is_not_there_is_refused(void **state)
{
    answered *made = *state;
    char buf[256];
    size_t length;
    assert_int_equal(attn_check_answer(made->check, "weight", 0, 0, "0.33", buf,
                                       sizeof buf, &length),
                     ATTN_ERR_INPUT);
    assert_string_equal(attn_check_error(made->check),
                        "answer: this problem has no result named \"weight\"");
    assert_int_equal(attn_check_answer(made->check, "weights", 2, 0, "0.33",
                                       buf, sizeof buf, &length),
                     ATTN_ERR_RANGE);
    assert_string_equal(attn_check_error(made->check),
                        "answer: weights has no cell [2][0]: rows 0 to 1, "
                        "columns 0 to 1 (counted from 0)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_the_exact_weight_rounded_to_2_or_3_decimals_is_right, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_a_whole_number_is_graded_at_2_decimals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_each_slip_is_named_with_its_hint,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_number_no_slip_gives_is_wrong_with_the_steps_hint, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_one_off_in_the_last_decimal_near_the_boundary_is_rounding,
            setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_text_that_is_no_number_asks_for_one, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_cell_or_result_that_is_not_there_is_refused, setup,
            teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
