/* The JSON adapter (src/cli/problem_json.c): JSON values into problem
 * fields, the exact one-line messages for misshapen input (the JS API
 * gives the same words), errors of the problem layer passed through, and
 * allocation failures. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "allclose.h"
#include "attention.h"
#include "failing_allocator.h"
#include "problem_json.h"

#define RTOL 1e-15
#define ATOL 0.0

enum { ERROR_CAP = 512 };

#define KINDS                                                              \
    "\"scaledDotProduct\", \"multiHead\", \"additive\", \"luong\", "      \
    "\"linear\", \"softmax\", \"weightedSum\""

/* Tutorial 000 as JSON: Q = K, d_k = 2, d_v = 3. */
#define T000_FIELDS                                                         \
    "\"q\": [[1, 0], [0, 1], [1, 1]], \"k\": [[1, 0], [0, 1], [1, 1]], "    \
    "\"v\": [[1, 2, 3], [4, 5, 6], [7, 8, 9]]"

/* Builds and runs the problem in `json`; fails the test on any error. */
static attn_problem *run_json(const char *json)
{
    cJSON *root = cJSON_Parse(json);
    assert_non_null(root);
    attn_problem *problem;
    char error[ERROR_CAP];
    const int status =
        attn_problem_from_json(&problem, root, NULL, error, sizeof error);
    cJSON_Delete(root);
    if (status != ATTN_OK) fail_msg("attn_problem_from_json: %s", error);
    if (attn_problem_run(problem) != ATTN_OK)
        fail_msg("attn_problem_run: %s", attn_problem_error(problem));
    return problem;
}

static const double *result_of(const attn_problem *problem, const char *name,
                               int rank, int dim0, int dim1)
{
    int got_rank, dims[3];
    const double *data;
    assert_int_equal(attn_problem_result(problem, name, &got_rank, dims,
                                         &data), ATTN_OK);
    assert_int_equal(got_rank, rank);
    if (rank > 0) assert_int_equal(dims[0], dim0);
    if (rank > 1) assert_int_equal(dims[1], dim1);
    return data;
}

/* The status and message attn_problem_from_json gives for `json`. */
static void assert_rejected(const char *json, int expected_status,
                            const char *message)
{
    cJSON *root = cJSON_Parse(json);
    assert_non_null(root);
    attn_problem *problem = (attn_problem *)&problem; /* must become NULL */
    char error[ERROR_CAP];
    const int status =
        attn_problem_from_json(&problem, root, NULL, error, sizeof error);
    cJSON_Delete(root);
    assert_null(problem);
    assert_string_equal(error, message);
    assert_int_equal(status, expected_status);
}

static void test_matrices_from_json_give_tutorial_000_scores(void **state)
{
    (void)state;
    attn_problem *problem =
        run_json("{\"kind\": \"scaledDotProduct\", " T000_FIELDS "}");
    static const double scores[] = {1, 0, 1, 0, 1, 1, 1, 1, 2};
    assert_allclose(result_of(problem, "scores", 2, 3, 3), scores, 9, RTOL,
                    ATOL);
    attn_problem_destroy(problem);
}

static void test_boolean_mask_entries_read_as_one_and_zero(void **state)
{
    (void)state;
    /* Tutorial 001's causal row at position 2: the 4th key is masked. */
    attn_problem *problem = run_json(
        "{\"kind\": \"softmax\", \"x\": [0.5, 0.8, 0.3, 0.9], "
        "\"mask\": [true, true, true, false]}");
    /* exp(x - 0.8) / sum over the first three, computed with python3 */
    static const double weights[] = {0.3155978333128143, 0.4260125149492058,
                                     0.2583896517379799, 0};
    assert_allclose(result_of(problem, "weights", 1, 4, 0), weights, 4, 1e-15,
                    0.0);
    attn_problem_destroy(problem);
}

static void test_numbers_booleans_strings_and_labels_reach_their_fields(
    void **state)
{
    (void)state;
    /* scale false: unscaled scores; mask "causal"; tokens as labels */
    attn_problem *problem = run_json(
        "{\"kind\": \"scaledDotProduct\", " T000_FIELDS ", \"scale\": false, "
        "\"mask\": \"causal\", \"tokens\": [\"a\", \"b\", \"c\"], "
        "\"seed\": 7}");
    static const double scaled[] = {1, -INFINITY, -INFINITY,
                                    0, 1, -INFINITY,
                                    1, 1, 2};
    assert_allclose(result_of(problem, "scaled", 2, 3, 3), scaled, 9, RTOL,
                    ATOL);
    attn_problem_destroy(problem);

    problem = run_json("{\"kind\": \"softmax\", \"x\": [1, 2], \"scale\": 2}");
    static const double doubled[] = {2, 4};
    assert_allclose(result_of(problem, "scaled", 1, 2, 0), doubled, 2, RTOL,
                    ATOL);
    attn_problem_destroy(problem);
}

static void test_read_tensor_gives_rank_dims_and_row_major_data(void **state)
{
    (void)state;
    cJSON *batch = cJSON_Parse("[[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], "
                               "[10, 11, null]]]");
    attn_json_tensor tensor;
    char error[ERROR_CAP] = "";
    assert_int_equal(attn_json_read_tensor(&tensor, batch, "x",
                                           ATTN_JSON_NULL_IS_MINUS_INF, NULL,
                                           error, sizeof error), ATTN_OK);
    assert_int_equal(tensor.rank, 3);
    assert_int_equal(tensor.dims[0], 2);
    assert_int_equal(tensor.dims[1], 2);
    assert_int_equal(tensor.dims[2], 3);
    assert_int_equal(tensor.count, 12);
    static const double data[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                  -INFINITY};
    assert_allclose(tensor.data, data, 12, RTOL, ATOL);
    attn_json_tensor_free(&tensor, NULL);
    cJSON_Delete(batch);

    cJSON *number = cJSON_Parse("0.25");
    assert_int_equal(attn_json_read_tensor(&tensor, number, "max",
                                           ATTN_JSON_ALLOW_SCALAR, NULL,
                                           error, sizeof error), ATTN_OK);
    assert_int_equal(tensor.rank, 0);
    assert_int_equal(tensor.count, 1);
    assert_true(tensor.data[0] == 0.25);
    attn_json_tensor_free(&tensor, NULL);
    assert_int_equal(attn_json_read_tensor(&tensor, number, "max", 0, NULL,
                                           error, sizeof error),
                     ATTN_ERR_INPUT);
    assert_string_equal(error, "max: expected an array, got a number");
    assert_null(tensor.data);
    cJSON_Delete(number);
}

static void test_misshapen_arrays_are_named_by_path(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        const char *message;
    } cases[] = {
        {"{\"kind\": \"scaledDotProduct\", \"q\": [[1, 0], [0, 1, 2]]}",
         "q: rows must all have the same length (row 0 has 2 entries, "
         "row 1 has 3)"},
        {"{\"kind\": \"scaledDotProduct\", \"q\": [[[1, 0], [0, 1]], "
         "[[1, 0], [0]]]}",
         "q[1]: rows must all have the same length (row 0 has 2 entries, "
         "row 1 has 1)"},
        {"{\"kind\": \"scaledDotProduct\", \"q\": [[[1, 0], [0, 1]], "
         "[[1, 0, 1], [0, 1, 1]]]}",
         "q: batch items must all have the same shape (item 0 is 2x2, "
         "item 1 is 2x3)"},
        {"{\"kind\": \"scaledDotProduct\", \"q\": [[[1, 0], [0, 1]], "
         "[[1, 0]]]}",
         "q: batch items must all have the same shape (item 0 is 2x2, "
         "item 1 is 1x2)"},
        {"{\"kind\": \"scaledDotProduct\", \"q\": [[1, 0], [\"0\", 1]]}",
         "q[1][0]: expected a number, got a string"},
        {"{\"kind\": \"scaledDotProduct\", \"q\": [[1, 0], [null, 1]]}",
         "q[1][0]: expected a number, got null"},
        {"{\"kind\": \"scaledDotProduct\", \"q\": [[1, 0], [{}, 1]]}",
         "q[1][0]: expected a number, got an object"},
        {"{\"kind\": \"softmax\", \"x\": [1, [2]]}",
         "x[1]: expected a number, got an array"},
        {"{\"kind\": \"softmax\", \"x\": [[1], 2]}",
         "x[1]: expected an array, got a number"},
        {"{\"kind\": \"softmax\", \"x\": [[[1]], [2]]}",
         "x[1][0]: expected an array, got a number"},
        {"{\"kind\": \"scaledDotProduct\", \"q\": [[[[1]]]]}",
         "q: expected at most 3 levels of nesting"},
        {"{\"kind\": \"scaledDotProduct\", \"q\": []}",
         "q: must not be empty"},
        {"{\"kind\": \"scaledDotProduct\", \"q\": [[]]}",
         "q: must not be empty"},
        {"{\"kind\": \"scaledDotProduct\", \"tokens\": [\"a\", 2, \"c\"]}",
         "tokens[1]: expected a string, got a number"},
        {"{\"kind\": \"softmax\", \"x\": {\"a\": 1}}",
         "x: expected a number, a boolean, a string or an array, got an "
         "object"},
        {"{\"kind\": \"softmax\", \"scale\": null}",
         "scale: expected a number, a boolean, a string or an array, got "
         "null"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_rejected(cases[i].json, ATTN_ERR_INPUT, cases[i].message);
}

static void test_problem_layer_messages_pass_through(void **state)
{
    (void)state;
    assert_rejected("{\"kind\": \"softmax\", \"x\": [1, 2], \"y\": 3}",
                    ATTN_ERR_INPUT,
                    "y: unknown field for kind \"softmax\" (fields: x, "
                    "scale, mask, queryTokens, keyTokens)");
    assert_rejected("{\"kind\": \"softmax\", \"x\": [1, 2], "
                    "\"scale\": \"big\"}",
                    ATTN_ERR_INPUT, "scale: expected a number, got \"big\"");
    assert_rejected("{\"kind\": \"softmax\", \"x\": [1, 2, 1e999]}",
                    ATTN_ERR_INPUT, "x[2]: expected a finite number, got inf");
}

static void test_kind_errors_list_every_kind(void **state)
{
    (void)state;
    assert_rejected("{\"x\": [1, 2]}", ATTN_ERR_INPUT,
                    "kind: missing; expected one of " KINDS);
    assert_rejected("{\"kind\": 3}", ATTN_ERR_INPUT,
                    "kind: expected one of " KINDS ", got a number");
    assert_rejected("{\"kind\": \"attentionPlease\"}", ATTN_ERR_OPTION,
                    "kind: unknown kind \"attentionPlease\"; expected one "
                    "of " KINDS);
    assert_rejected("[1, 2]", ATTN_ERR_INPUT,
                    "expected a problem object, got an array");
}

static void test_long_messages_are_truncated_to_the_buffer(void **state)
{
    (void)state;
    cJSON *root = cJSON_Parse("{\"x\": 1}");
    attn_problem *problem;
    char error[8];
    assert_int_equal(attn_problem_from_json(&problem, root, NULL, error,
                                            sizeof error), ATTN_ERR_INPUT);
    assert_string_equal(error, "kind: m");
    cJSON_Delete(root);
}

/* ---- Allocation failures ---- */

/* Builds and runs the problem in root with this allocator: every failure
 * must be ATTN_ERR_NOMEM, with no problem left and its message set. */
static int build_and_run(const cJSON *root, const attn_allocator *allocator)
{
    attn_problem *problem;
    char error[ERROR_CAP];
    int status = attn_problem_from_json(&problem, root, allocator, error,
                                        sizeof error);
    if (status != ATTN_OK) {
        assert_int_equal(status, ATTN_ERR_NOMEM);
        assert_null(problem);
        assert_non_null(strstr(error, "out of memory"));
        return status;
    }
    status = attn_problem_run(problem);
    if (status != ATTN_OK) assert_int_equal(status, ATTN_ERR_NOMEM);
    attn_problem_destroy(problem);
    return status;
}

static void test_each_failed_allocation_gives_nomem_and_leaks_nothing(
    void **state)
{
    (void)state;
    cJSON *root = cJSON_Parse("{\"kind\": \"scaledDotProduct\", " T000_FIELDS
                              ", \"tokens\": [\"a\", \"b\", \"c\"]}");
    int status = ATTN_ERR_NOMEM;
    for (long fail_at = 0; status != ATTN_OK; fail_at++) {
        failing_allocator counts = {fail_at, 0, 0};
        const attn_allocator allocator = failing_allocator_use(&counts);
        status = build_and_run(root, &allocator);
        assert_int_equal(counts.live, 0);
        /* success only once the failure point lies past every call */
        if (status == ATTN_OK) assert_true(counts.calls <= fail_at);
    }
    cJSON_Delete(root);
}

/* The status and message attn_json_parse gives for `json`. */
static void assert_parse_rejected(const char *json, int expected_status,
                                  const char *message)
{
    cJSON *root = (cJSON *)&root; /* must become NULL */
    char error[ERROR_CAP];
    const int status =
        attn_json_parse(&root, json, strlen(json), error, sizeof error);
    assert_null(root);
    assert_string_equal(error, message);
    assert_int_equal(status, expected_status);
}

static void test_a_nul_escape_anywhere_in_a_string_is_an_error(void **state)
{
    (void)state;
    assert_parse_rejected(
        "{\"kind\": \"softmax\\u0000junk\", \"x\": [1, 2]}", ATTN_ERR_INPUT,
        "invalid input at line 1, column 18: \\u0000 (a NUL character) in "
        "a string; names and values must not contain one");
    assert_parse_rejected(
        "{\"kind\": \"softmax\",\n \"x\\u0000\": [1]}", ATTN_ERR_INPUT,
        "invalid input at line 2, column 4: \\u0000 (a NUL character) in "
        "a string; names and values must not contain one");
    /* An escaped backslash then "u0000" is five ordinary characters. */
    cJSON *root;
    char error[ERROR_CAP];
    const char *text = "{\"kind\": \"a\\\\u0000\"}";
    assert_int_equal(attn_json_parse(&root, text, strlen(text), error,
                                     sizeof error), ATTN_OK);
    assert_string_equal(cJSON_GetObjectItem(root, "kind")->valuestring,
                        "a\\u0000");
    cJSON_Delete(root);
}

static void test_a_repeated_key_is_an_error_naming_it(void **state)
{
    (void)state;
    assert_parse_rejected(
        "{\"kind\": \"softmax\", \"x\": [1], \"kind\": \"linear\"}",
        ATTN_ERR_INPUT, "kind: the key appears more than once in the problem");
    assert_parse_rejected("{\"kind\": \"softmax\", \"m\": {\"b\": 1, \"b\": 2}}",
                          ATTN_ERR_INPUT,
                          "m.b: the key appears more than once in that object");
}

static void test_deep_nesting_says_how_deep_it_may_go(void **state)
{
    (void)state;
    char deep[2 * 1001 + 1];
    for (int i = 0; i < 1001; i++) {
        deep[i] = '[';
        deep[1001 + i] = ']';
    }
    deep[2002] = '\0';
    assert_parse_rejected(deep, ATTN_ERR_INPUT,
                          "invalid input at line 1, column 65: nested deeper "
                          "than 64 levels (a problem needs at most 4)");
    /* Brackets inside strings do not count. */
    char quoted[300];
    snprintf(quoted, sizeof quoted, "{\"kind\": \"%.200s\"}",
             "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[");
    cJSON *root;
    char error[ERROR_CAP];
    assert_int_equal(attn_json_parse(&root, quoted, strlen(quoted), error,
                                     sizeof error), ATTN_OK);
    cJSON_Delete(root);
}

static void test_invalid_json_keeps_its_line_and_column(void **state)
{
    (void)state;
    assert_parse_rejected("{\"kind\": \"softmax\",\n \"x\": [1, 2, 3],, ]}",
                          ATTN_ERR_INPUT,
                          "invalid JSON at line 2, column 18, near \" [1, 2, "
                          "3],, ]}\"");
    const char with_nul[] = "{\"kind\": \"so\0ftmax\"}";
    cJSON *root;
    char error[ERROR_CAP];
    assert_int_equal(attn_json_parse(&root, with_nul, sizeof with_nul - 1,
                                     error, sizeof error), ATTN_ERR_INPUT);
    assert_string_equal(error,
                        "invalid JSON at line 1, column 13: a NUL byte");
}

static void test_mixed_arrays_are_reported_by_the_field_they_are_for(
    void **state)
{
    (void)state;
    assert_rejected("{\"kind\": \"softmax\", \"x\": [\"1\", 2]}",
                    ATTN_ERR_INPUT, "x[0]: expected a number, got a string");
    assert_rejected("{\"kind\": \"linear\", \"q\": [[1]], \"k\": [[1]], "
                    "\"v\": [[1]], \"tokens\": [\"a\", [2]]}",
                    ATTN_ERR_INPUT, "tokens[1]: expected a string, got an array");
    assert_rejected("{\"kind\": \"softmax\", \"y\": [\"a\", 2]}",
                    ATTN_ERR_INPUT,
                    "y: unknown field for kind \"softmax\" (fields: x, scale, "
                    "mask, queryTokens, keyTokens)");
}

static void test_from_json_limited_applies_the_limit_before_any_field(
    void **state)
{
    (void)state;
    cJSON *root = cJSON_Parse("{\"kind\": \"softmax\", \"x\": [1, 2, 3]}");
    attn_problem *problem;
    char error[ERROR_CAP];
    assert_int_equal(attn_problem_from_json_limited(&problem, root, NULL, 16,
                                                    error, sizeof error),
                     ATTN_ERR_TOO_LARGE);
    assert_null(problem);
    assert_string_equal(error,
                        "x: a vector of 3 would make the problem hold 24 "
                        "bytes, more than its limit of 16 bytes; use smaller "
                        "inputs or raise the limit (maxBytes in the JS API, "
                        "--max-bytes in build/attn)");
    cJSON_Delete(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matrices_from_json_give_tutorial_000_scores),
        cmocka_unit_test(test_boolean_mask_entries_read_as_one_and_zero),
        cmocka_unit_test(
            test_numbers_booleans_strings_and_labels_reach_their_fields),
        cmocka_unit_test(test_read_tensor_gives_rank_dims_and_row_major_data),
        cmocka_unit_test(test_misshapen_arrays_are_named_by_path),
        cmocka_unit_test(test_problem_layer_messages_pass_through),
        cmocka_unit_test(test_kind_errors_list_every_kind),
        cmocka_unit_test(test_long_messages_are_truncated_to_the_buffer),
        cmocka_unit_test(
            test_each_failed_allocation_gives_nomem_and_leaks_nothing),
        cmocka_unit_test(test_a_nul_escape_anywhere_in_a_string_is_an_error),
        cmocka_unit_test(test_a_repeated_key_is_an_error_naming_it),
        cmocka_unit_test(test_deep_nesting_says_how_deep_it_may_go),
        cmocka_unit_test(test_invalid_json_keeps_its_line_and_column),
        cmocka_unit_test(
            test_mixed_arrays_are_reported_by_the_field_they_are_for),
        cmocka_unit_test(
            test_from_json_limited_applies_the_limit_before_any_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
