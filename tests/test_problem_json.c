/* The JSON adapter (src/cli/problem_json.c): JSON values into problem
 * fields, the exact one-line messages for misshapen input (the JS API
 * gives the same words), errors of the problem layer passed through, and
 * allocation failures. */
#include <malloc.h> /* malloc_usable_size: what a block really takes */
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

#include "allclose.h"
#include "attention.h"
#include "failing_allocator.h"
#include "problem_json.h"

#define RTOL 1e-15
#define ATOL 0.0

enum { ERROR_CAP = 512 };

#define KINDS                                                              \
    "\"scaledDotProduct\", \"weightedSum\", \"multiHead\", \"additive\", " \
    "\"luong\", \"linear\", \"softmax\", \"transformerBlock\", "           \
    "\"onlineSoftmax\""

/* Tutorial 000 as JSON: Q = K, d_k = 2, d_v = 3. */
#define T000_FIELDS                                                      \
    "\"q\": [[1, 0], [0, 1], [1, 1]], \"k\": [[1, 0], [0, 1], [1, 1]], " \
    "\"v\": [[1, 2, 3], [4, 5, 6], [7, 8, 9]]"

/* Builds and runs the problem in `json`; fails the test on any error. */
static attn_problem *run_json(const char *json)
{
    cJSON *root = cJSON_Parse(json);
    assert_non_null(root);
    attn_problem *problem;
    char error[ERROR_CAP];
    const int status = attn_problem_from_json(&problem, root, NULL, error,
                                              sizeof error);
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
    assert_int_equal(attn_problem_result(problem, name, &got_rank, dims, &data),
                     ATTN_OK);
    assert_int_equal(got_rank, rank);
    if (rank > 0) assert_int_equal(dims[0], dim0);
    if (rank > 1) assert_int_equal(dims[1], dim1);
    return data;
}

/* The status and message attn_problem_read_json gives for `json`. */
static void assert_rejected(const char *json, int expected_status,
                            const char *message)
{
    attn_problem *problem = (attn_problem *)&problem; /* must become NULL */
    char error[ERROR_CAP];
    const int status = attn_problem_read_json(&problem, error, json, NULL, NULL,
                                              strlen(json), 0, sizeof error);
    assert_null(problem);
    assert_string_equal(error, message);
    assert_int_equal(status, expected_status);
}

static void test_matrices_from_json_give_tutorial_000_scores(void **state)
{
    (void)state;
    attn_problem *problem = run_json(
        "{\"kind\": \"scaledDotProduct\", " T000_FIELDS "}");
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

static void
test_numbers_booleans_strings_and_labels_reach_their_fields(void **state)
{
    (void)state;
    /* scale false: unscaled scores; mask "causal"; tokens as labels */
    attn_problem *problem = run_json(
        "{\"kind\": \"scaledDotProduct\", " T000_FIELDS ", \"scale\": false, "
        "\"mask\": \"causal\", \"tokens\": [\"a\", \"b\", \"c\"], "
        "\"seed\": 7}");
    static const double scaled[] = {1,         -INFINITY, -INFINITY, 0, 1,
                                    -INFINITY, 1,         1,         2};
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
                                           error, sizeof error),
                     ATTN_OK);
    assert_int_equal(tensor.rank, 3);
    assert_int_equal(tensor.dims[0], 2);
    assert_int_equal(tensor.dims[1], 2);
    assert_int_equal(tensor.dims[2], 3);
    assert_int_equal(tensor.count, 12);
    static const double data[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -INFINITY};
    assert_allclose(tensor.data, data, 12, RTOL, ATOL);
    attn_json_tensor_free(&tensor, NULL);
    cJSON_Delete(batch);

    cJSON *number = cJSON_Parse("0.25");
    assert_int_equal(attn_json_read_tensor(&tensor, number, "max",
                                           ATTN_JSON_ALLOW_SCALAR, NULL, error,
                                           sizeof error),
                     ATTN_OK);
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
        {"{\"kind\": \"scaledDotProduct\", \"q\": []}", "q: must not be empty"},
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
    assert_int_equal(
        attn_problem_from_json(&problem, root, NULL, error, sizeof error),
        ATTN_ERR_INPUT);
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

static void
test_each_failed_allocation_gives_nomem_and_leaks_nothing(void **state)
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
    const int status = attn_json_parse(&root, json, strlen(json), error,
                                       sizeof error);
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
    assert_int_equal(
        attn_json_parse(&root, text, strlen(text), error, sizeof error),
        ATTN_OK);
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
    assert_parse_rejected(
        "{\"kind\": \"softmax\", \"m\": {\"b\": 1, \"b\": 2}}", ATTN_ERR_INPUT,
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
             "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
             "[[[[[[[[[");
    cJSON *root;
    char error[ERROR_CAP];
    assert_int_equal(
        attn_json_parse(&root, quoted, strlen(quoted), error, sizeof error),
        ATTN_OK);
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
                                     error, sizeof error),
                     ATTN_ERR_INPUT);
    assert_string_equal(error, "invalid JSON at line 1, column 13: a NUL byte");
}

static void
test_mixed_arrays_are_reported_by_the_field_they_are_for(void **state)
{
    (void)state;
    assert_rejected("{\"kind\": \"softmax\", \"x\": [\"1\", 2]}",
                    ATTN_ERR_INPUT, "x[0]: expected a number, got a string");
    assert_rejected("{\"kind\": \"linear\", \"q\": [[1]], \"k\": [[1]], "
                    "\"v\": [[1]], \"tokens\": [\"a\", [2]]}",
                    ATTN_ERR_INPUT,
                    "tokens[1]: expected a string, got an array");
    assert_rejected("{\"kind\": \"softmax\", \"y\": [\"a\", 2]}",
                    ATTN_ERR_INPUT,
                    "y: unknown field for kind \"softmax\" (fields: x, scale, "
                    "mask, queryTokens, keyTokens)");
}

static void
test_from_json_limited_applies_the_limit_before_the_tree_is_read(void **state)
{
    (void)state;
    cJSON *root = cJSON_Parse("{\"kind\": \"softmax\", \"x\": [1, 2, 3]}");
    attn_problem *problem;
    char error[ERROR_CAP];
    assert_int_equal(attn_problem_from_json_limited(&problem, root, NULL, 16,
                                                    error, sizeof error),
                     ATTN_ERR_TOO_LARGE);
    assert_null(problem);
    /* The tree written back as {"kind":"softmax","x":[1,2,3]}: 30 bytes,
     * twice, 2 x 2 containers + 3 commas + 1 = 8 nodes of 80 bytes, and
     * 3 strings of 12 bytes with 1 + 32 more each: 60 + 640 + 12 + 99. */
    assert_string_equal(error,
                        "the input's JSON (30 bytes) would take about 811 "
                        "bytes to read and parse, more than the limit of 16 "
                        "bytes; use a smaller input or raise the limit "
                        "(--max-bytes)");
    cJSON_Delete(root);
}

/* What cJSON's tree takes, measured: the most bytes the blocks cJSON
 * allocates while the hooks are in hold at once, as malloc keeps them (a
 * block's usable size and its size word). cJSON also allocates and frees
 * a copy of each number as it reads it. */
static size_t live_bytes, peak_bytes;

static size_t kept(void *block)
{
    return malloc_usable_size(block) + sizeof(size_t);
}

static void *counting_malloc(size_t bytes)
{
    void *block = malloc(bytes);
    if (block != NULL) {
        live_bytes += kept(block);
        if (live_bytes > peak_bytes) peak_bytes = live_bytes;
    }
    return block;
}

static void counting_free(void *block)
{
    if (block != NULL) live_bytes -= kept(block);
    free(block);
}

static cJSON_Hooks counting_hooks = {counting_malloc, counting_free};

/* The bytes attn_json_parse_limited says reading and parsing text takes
 * (from its message at a limit of 1 byte), after checking that the tree
 * cJSON builds takes no more than that count leaves for it, and that the
 * limit is exact: the count itself passes, one byte less does not. */
static size_t parse_bytes_checked(const char *text)
{
    const size_t length = strlen(text);
    cJSON *root;
    char error[ERROR_CAP];
    assert_int_equal(
        attn_json_parse_limited(&root, text, length, 1, error, sizeof error),
        ATTN_ERR_TOO_LARGE);
    assert_null(root);
    size_t in_message, bytes;
    assert_int_equal(sscanf(error,
                            "the input's JSON (%zu bytes) would take "
                            "about %zu bytes",
                            &in_message, &bytes),
                     2);
    assert_int_equal(in_message, length);
    char expected[ERROR_CAP];
    snprintf(expected, sizeof expected,
             "the input's JSON (%zu bytes) would take about %zu bytes to "
             "read and parse, more than the limit of 1 bytes; use a smaller "
             "input or raise the limit (--max-bytes)",
             length, bytes);
    assert_string_equal(error, expected);

    assert_int_equal(attn_json_parse_limited(&root, text, length, bytes - 1,
                                             error, sizeof error),
                     ATTN_ERR_TOO_LARGE);
    live_bytes = peak_bytes = 0;
    cJSON_InitHooks(&counting_hooks);
    const int status = attn_json_parse_limited(&root, text, length, bytes,
                                               error, sizeof error);
    cJSON_Delete(root);
    cJSON_InitHooks(NULL);
    assert_int_equal(status, ATTN_OK);
    assert_int_equal(live_bytes, 0);
    /* The text as read and the parser's copy take 2 × length. */
    assert_true(peak_bytes > 0);
    assert_true(peak_bytes <= bytes - 2 * length);
    return bytes;
}

static void
test_the_parse_limit_counts_the_text_and_the_tree_exactly(void **state)
{
    (void)state;
    /* A node of sizeof(cJSON) bytes and malloc's header for each of
     * 2 × 1 container + 2 commas + 1 values; the text twice. */
    const size_t node = sizeof(cJSON) + 2 * sizeof(void *);
    assert_int_equal(parse_bytes_checked("[1,2,3]"), 2 * 7 + 5 * node);
    /* Two strings (2 and 4 bytes between their quotes), each with a NUL
     * and two headers: 2 × 13 + 3 nodes + 6 + 2 × (1 + 4 pointers). */
    assert_int_equal(parse_bytes_checked("{\"ab\":\"c\\\"d\"}"),
                     2 * 13 + 3 * node + 6 + 2 * (1 + 4 * sizeof(void *)));
    /* Many strings of one letter, each a block of malloc's smallest. */
    char labels[4096] = "{\"kind\": \"softmax\", \"x\": [1], \"tokens\": [";
    for (int i = 0; i < 500; i++) strcat(labels, i == 0 ? "\"a\"" : ", \"b\"");
    strcat(labels, "]}");
    parse_bytes_checked(labels);
    parse_bytes_checked("{\"kind\": \"scaledDotProduct\", " T000_FIELDS
                        ", \"mask\": "
                        "\"causal\", \"tokens\": [\"the\", \"cat\", \"sat\"]}");
}

static void test_the_parse_limit_refuses_before_cjson_allocates(void **state)
{
    (void)state;
    /* 200,000 values: the count is far past the limit, so cJSON never
     * runs and the hooks see nothing. */
    enum { VALUES = 200000 };
    char *text = malloc(2 * VALUES + 2);
    assert_non_null(text);
    text[0] = '[';
    for (int i = 0; i < VALUES; i++) {
        text[1 + 2 * i] = '1';
        text[2 + 2 * i] = i + 1 < VALUES ? ',' : ']';
    }
    text[2 * VALUES + 1] = '\0';
    live_bytes = peak_bytes = 0;
    cJSON_InitHooks(&counting_hooks);
    cJSON *root;
    char error[ERROR_CAP];
    const int status = attn_json_parse_limited(&root, text, strlen(text),
                                               1000000, error, sizeof error);
    cJSON_InitHooks(NULL);
    free(text);
    assert_int_equal(status, ATTN_ERR_TOO_LARGE);
    assert_int_equal(peak_bytes, 0);
    /* 0 is the default limit, which attn_json_parse applies. */
    assert_int_equal(
        attn_json_parse_limited(&root, "[1]", 3, 0, error, sizeof error),
        ATTN_OK);
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
            test_from_json_limited_applies_the_limit_before_the_tree_is_read),
        cmocka_unit_test(
            test_the_parse_limit_counts_the_text_and_the_tree_exactly),
        cmocka_unit_test(test_the_parse_limit_refuses_before_cjson_allocates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
