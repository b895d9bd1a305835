/* The check of printed numbers (attn_check_*): worked examples whose
 * printed tables an independent script computed with each slip, a misprint
 * carried through three steps, rounded intermediates and correctly rounded
 * tables (tests/fixtures/check/make_cases.py), the tutorials' printed
 * numbers against their errata (tests/vectors/tutorials.json), the
 * messages of bad input, and every allocation failing in turn. Run from
 * the repository root. */
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
#include "failing_allocator.h"
#include "problem_json.h"

#define CASES "tests/fixtures/check/cases.json"
#define VECTORS "tests/vectors/tutorials.json"

enum { ERROR_CAP = 512 };

static cJSON *read_json(const char *path)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        fail_msg("cannot open %s (run from the repository root)", path);
    fseek(file, 0, SEEK_END);
    const long size = ftell(file);
    rewind(file);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, file), (size_t)size);
    text[size] = '\0';
    fclose(file);
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (root == NULL) fail_msg("cannot parse %s", path);
    return root;
}

/* The problem and check of `input` ({kind, fields..., printed,
 * printedDecimals?}), run; the report as parsed JSON. */
typedef struct checked {
    attn_problem *problem;
    attn_check *check;
    cJSON *report;
    int errata;
} checked;

static int check_input(checked *out, const cJSON *input,
                       const attn_allocator *allocator, char *error)
{
    memset(out, 0, sizeof *out);
    cJSON *problem = cJSON_Duplicate(input, 1);
    cJSON *printed = cJSON_DetachItemFromObjectCaseSensitive(problem,
                                                             "printed");
    cJSON *decimals = cJSON_DetachItemFromObjectCaseSensitive(
        problem, "printedDecimals");
    int status = attn_problem_from_json(&out->problem, problem, allocator,
                                        error, ERROR_CAP);
    if (status == ATTN_OK) status = attn_problem_run(out->problem);
    if (status == ATTN_OK)
        status = attn_check_create(&out->check, out->problem);
    if (status == ATTN_OK)
        status = attn_check_printed_from_json(out->check, printed, decimals,
                                              NULL, 0, allocator, error,
                                              ERROR_CAP);
    if (status == ATTN_OK) status = attn_check_run(out->check, &out->errata);
    size_t length = 0;
    if (status == ATTN_OK)
        status = attn_check_format(out->check, ATTN_FORMAT_JSON, NULL, 0,
                                   &length);
    char *text = status == ATTN_OK ? malloc(length + 1) : NULL;
    if (text != NULL) {
        status = attn_check_format(out->check, ATTN_FORMAT_JSON, text,
                                   length + 1, &length);
        out->report = cJSON_Parse(text);
        free(text);
    }
    cJSON_Delete(problem);
    cJSON_Delete(printed);
    cJSON_Delete(decimals);
    return status;
}

static void release(checked *c)
{
    cJSON_Delete(c->report);
    attn_check_destroy(c->check);
    attn_problem_destroy(c->problem);
}

static const cJSON *member(const cJSON *object, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(object, name);
}

/* "weights[0,1]" for {field, index}. */
static void cell_key(char *out, size_t cap, const cJSON *cell)
{
    size_t used = (size_t)snprintf(out, cap, "%s[",
                                   member(cell, "field")->valuestring);
    const cJSON *i;
    int first = 1;
    cJSON_ArrayForEach(i, member(cell, "index"))
    {
        used += (size_t)snprintf(out + used, cap - used, "%s%d",
                                 first ? "" : ",", i->valueint);
        first = 0;
    }
    snprintf(out + used, cap - used, "]");
}

/* ["weights", [0, 1]] as the same key. */
static void pair_key(char *out, size_t cap, const cJSON *pair)
{
    cJSON *cell = cJSON_CreateObject();
    cJSON_AddItemToObject(cell, "field",
                          cJSON_Duplicate(cJSON_GetArrayItem(pair, 0), 1));
    cJSON_AddItemToObject(cell, "index",
                          cJSON_Duplicate(cJSON_GetArrayItem(pair, 1), 1));
    cell_key(out, cap, cell);
    cJSON_Delete(cell);
}

static int list_has(const cJSON *list, const char *key)
{
    const cJSON *cell;
    char found[128];
    cJSON_ArrayForEach(cell, list)
    {
        cell_key(found, sizeof found, cell);
        if (strcmp(found, key) == 0) return 1;
    }
    return 0;
}

static void assert_case(const cJSON *test)
{
    const char *name = member(test, "name")->valuestring;
    const cJSON *expect = member(test, "expect");
    char error[ERROR_CAP] = "";
    checked c;
    if (check_input(&c, member(test, "input"), NULL, error) != ATTN_OK)
        fail_msg("%s: %s %s", name, error,
                 c.check ? attn_check_error(c.check) : "");
    const cJSON *groups = member(c.report, "groups");
    const cJSON *causes = member(expect, "causes");
    /* Exactly the expected causes, each once, in the order given. */
    if (cJSON_GetArraySize(groups) < cJSON_GetArraySize(causes))
        fail_msg("%s: %d groups, expected %d", name, cJSON_GetArraySize(groups),
                 cJSON_GetArraySize(causes));
    const cJSON *group;
    int g = 0;
    cJSON_ArrayForEach(group, groups)
    {
        const char *cause = member(group, "cause")->valuestring;
        int expected = 0;
        const cJSON *want;
        cJSON_ArrayForEach(want, causes)
            expected |= strcmp(want->valuestring, cause) == 0;
        if (!expected)
            fail_msg("%s: group %d is %s, not one of the expected causes", name,
                     g, cause);
        if (strlen(member(group, "explanation")->valuestring) < 40)
            fail_msg("%s: group %d has no explanation", name, g);
        g++;
    }
    if (cJSON_GetArraySize(causes) == 0)
        assert_int_equal(c.errata, 0);
    else
        assert_true(c.errata > 0);
    /* Every erratum belongs to a group. */
    const cJSON *erratum;
    cJSON_ArrayForEach(
        erratum,
        member(c.report, "errata")) if (member(erratum, "group")->valueint < 0)
        fail_msg("%s: an erratum with no group", name);
    const cJSON *first = cJSON_GetArrayItem(groups, 0);
    char key[128];
    if (member(expect, "root") != NULL) {
        pair_key(key, sizeof key, member(expect, "root"));
        char root[128];
        cell_key(root, sizeof root, member(first, "root"));
        assert_string_equal(root, key);
        const cJSON *pair;
        cJSON_ArrayForEach(pair, member(expect, "carried"))
        {
            pair_key(key, sizeof key, pair);
            if (!list_has(member(first, "carried"), key))
                fail_msg("%s: %s not carried from the misprint", name, key);
        }
        assert_int_equal(cJSON_GetArraySize(member(first, "carried")),
                         cJSON_GetArraySize(member(expect, "carried")));
    }
    if (member(expect, "intermediates") != NULL) {
        const cJSON *want;
        cJSON_ArrayForEach(want, member(expect, "intermediates"))
        {
            int found = 0;
            const cJSON *have;
            cJSON_ArrayForEach(have, member(first, "intermediates"))
                found |= strcmp(have->valuestring, want->valuestring) == 0;
            if (!found)
                fail_msg("%s: %s not named as rounded", name,
                         want->valuestring);
        }
    }
    release(&c);
}

static void
test_worked_examples_are_explained_as_their_script_made_them(void **state)
{
    (void)state;
    cJSON *cases = read_json(CASES);
    const cJSON *test;
    int count = 0;
    cJSON_ArrayForEach(test, cases)
    {
        assert_case(test);
        count++;
    }
    assert_int_equal(count, 12);
    cJSON_Delete(cases);
}

static void
test_the_no_scale_sentence_names_the_square_root_of_d_k(void **state)
{
    (void)state;
    cJSON *cases = read_json(CASES);
    char error[ERROR_CAP];
    checked c;
    assert_int_equal(check_input(&c,
                                 member(cJSON_GetArrayItem(cases, 0), "input"),
                                 NULL, error),
                     ATTN_OK);
    const cJSON *group = cJSON_GetArrayItem(member(c.report, "groups"), 0);
    assert_string_equal(member(group, "cause")->valuestring, "no-scale");
    assert_non_null(strstr(member(group, "explanation")->valuestring,
                           "without dividing the scores by √d_k = 1.7321"));
    assert_true(cJSON_IsNull(member(group, "root")));
    release(&c);
    cJSON_Delete(cases);
}

/* A slip's sentence uses the tables' keys as names, whatever they are
 * called: one, two joined by "and", more by commas and a last "and". */
static void test_a_slip_sentence_names_its_tables_as_names(void **state)
{
    (void)state;
    static const struct {
        int index;
        const char *opening;
    } want[] = {
        {5, "The numbers printed for output are what the computation gives "
            "with the weights multiplying Vᵀ"},
        {2, "The numbers printed for weights and output are what the "
            "computation gives with the softmax taken down each column"},
        {0, "The numbers printed for scaled, weights and output are what the "
            "computation gives without dividing"},
        {10, "The numbers printed for heads.0.weights are what the "
             "computation gives without dividing"},
        {8, "Rounding, not a mistake: these follow from the numbers printed "
            "for scaled and weights, rounded before the next step;"},
    };
    cJSON *cases = read_json(CASES);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char error[ERROR_CAP];
        checked c;
        assert_int_equal(
            check_input(
                &c, member(cJSON_GetArrayItem(cases, want[i].index), "input"),
                NULL, error),
            ATTN_OK);
        const char *said = member(cJSON_GetArrayItem(member(c.report, "groups"),
                                                     0),
                                  "explanation")
                               ->valuestring;
        if (strncmp(said, want[i].opening, strlen(want[i].opening)) != 0)
            fail_msg("case %d says \"%s\"", want[i].index, said);
        release(&c);
    }
    cJSON_Delete(cases);
}

/* The tutorials' errata (tests/vectors) are exactly the check's, for every
 * printed key the check knows. */
static void test_the_tutorials_errata_are_the_checks(void **state)
{
    (void)state;
    cJSON *vectors = read_json(VECTORS);
    const cJSON *vector;
    int checked_vectors = 0;
    cJSON_ArrayForEach(vector, vectors)
    {
        if (member(vector, "printed") == NULL) continue;
        const char *id = member(vector, "id")->valuestring;
        cJSON *input = cJSON_Duplicate(member(vector, "input"), 1);
        cJSON_AddItemToObject(input, "printed",
                              cJSON_Duplicate(member(vector, "printed"), 1));
        if (member(vector, "printedDecimals") != NULL)
            cJSON_AddItemToObject(
                input, "printedDecimals",
                cJSON_Duplicate(member(vector, "printedDecimals"), 1));
        char error[ERROR_CAP] = "";
        checked c;
        if (check_input(&c, input, NULL, error) != ATTN_OK)
            fail_msg("%s: %s", id, error);
        const cJSON *unchecked = member(c.report, "unchecked");
        int listed = 0;
        const cJSON *erratum;
        cJSON_ArrayForEach(erratum, member(vector, "errata"))
        {
            const char *field = member(erratum, "field")->valuestring;
            int skipped = 0;
            const cJSON *key;
            cJSON_ArrayForEach(key, unchecked)
                skipped |= strcmp(key->valuestring, field) == 0;
            if (skipped) continue;
            char want[128];
            cell_key(want, sizeof want, erratum);
            if (!list_has(member(c.report, "errata"), want))
                fail_msg("%s: erratum %s not found", id, want);
            listed++;
        }
        if (cJSON_GetArraySize(member(c.report, "errata")) != listed)
            fail_msg("%s: %d errata, the vector lists %d", id,
                     cJSON_GetArraySize(member(c.report, "errata")), listed);
        release(&c);
        cJSON_Delete(input);
        checked_vectors++;
    }
    assert_true(checked_vectors >= 15);
    cJSON_Delete(vectors);
}

/* A problem with three queries and keys, run. */
static attn_problem *small_problem(void)
{
    static const double q[9] = {1, 0.5, 0.2, 0.3, 0.9, 0.1, 0.6, 0.2, 0.7};
    static const int dims[2] = {3, 3};
    attn_problem *problem;
    assert_int_equal(attn_problem_create(&problem, "scaledDotProduct", NULL),
                     ATTN_OK);
    assert_int_equal(attn_problem_set_tensor(problem, "q", 2, dims, q),
                     ATTN_OK);
    assert_int_equal(attn_problem_set_tensor(problem, "k", 2, dims, q),
                     ATTN_OK);
    assert_int_equal(attn_problem_set_tensor(problem, "v", 2, dims, q),
                     ATTN_OK);
    return problem;
}

static void test_bad_input_gets_a_message_naming_the_key(void **state)
{
    (void)state;
    attn_problem *problem = small_problem();
    attn_check *check;
    assert_int_equal(attn_check_create(&check, problem), ATTN_OK);
    const double values[6] = {0.4, 0.3, 0.3, 0.3, 0.4, 0.3};
    const int dims[2] = {2, 3};
    /* Before the problem has run. */
    assert_int_equal(attn_check_run(check, NULL), ATTN_ERR_STATE);
    assert_non_null(strstr(attn_check_error(check), "attn_problem_run"));
    assert_int_equal(attn_problem_run(problem), ATTN_OK);
    assert_int_equal(
        attn_check_set_printed(check, "weights", 2, dims, values, NULL),
        ATTN_ERR_INPUT);
    assert_string_equal(attn_check_error(check),
                        "printed.weights: expected 3x3 (as weights), got 2x3");
    assert_int_equal(attn_check_set_printed(check, "weights_row7", 1, dims + 1,
                                            values, NULL),
                     ATTN_ERR_INPUT);
    assert_string_equal(
        attn_check_error(check),
        "printed.weights_row7: weights has no row 7 (rows count from 0)");
    assert_int_equal(attn_check_set_printed(check, "weights_rowx", 1, dims + 1,
                                            values, NULL),
                     ATTN_ERR_INPUT);
    assert_string_equal(attn_check_error(check),
                        "printed.weights_rowx: a row is a number after "
                        "\"_row\", as \"weights_row0\"");
    const int too_many[3] = {18, 2, 2};
    assert_int_equal(attn_check_set_printed(check, "output_row0", 1, dims + 1,
                                            values, too_many),
                     ATTN_ERR_INPUT);
    assert_string_equal(
        attn_check_error(check),
        "printedDecimals.output_row0: at most 17 decimals, got 18");
    /* Text under a result's name is refused (its numbers were meant);
     * under any other key it is a note. */
    assert_int_equal(attn_check_set_note(check, "weights"), ATTN_ERR_INPUT);
    assert_string_equal(attn_check_error(check),
                        "printed.weights: expected the numbers of weights (a "
                        "number or a table of them), got text");
    assert_int_equal(attn_check_set_note(check, "notes"), ATTN_OK);
    /* A key naming nothing of the problem is listed, not refused. */
    assert_int_equal(
        attn_check_set_printed(check, "sqrt_dk", 0, NULL, values, NULL),
        ATTN_OK);
    /* The exact row 1 rounded to 3 decimals holds. */
    int rank, result_dims[3];
    const double *weights;
    assert_int_equal(
        attn_problem_result(problem, "weights", &rank, result_dims, &weights),
        ATTN_OK);
    double row[3];
    for (int j = 0; j < 3; j++) row[j] = round(weights[3 + j] * 1000) / 1000;
    assert_int_equal(
        attn_check_set_printed(check, "weights_row1", 1, dims + 1, row, NULL),
        ATTN_OK);
    assert_int_equal(
        attn_check_set_printed(check, "weights_row1", 1, dims + 1, row, NULL),
        ATTN_ERR_INPUT);
    assert_string_equal(attn_check_error(check),
                        "printed.weights_row1: given twice");
    size_t length;
    assert_int_equal(
        attn_check_format(check, ATTN_FORMAT_TEXT, NULL, 0, &length),
        ATTN_ERR_STATE);
    int errata = -1;
    assert_int_equal(attn_check_run(check, &errata), ATTN_OK);
    assert_int_equal(errata, 0);
    assert_int_equal(
        attn_check_format(check, ATTN_FORMAT_STEPS, NULL, 0, &length),
        ATTN_ERR_OPTION);
    /* Sized with cap 0, then truncated like snprintf. */
    assert_int_equal(
        attn_check_format(check, ATTN_FORMAT_JSON, NULL, 0, &length), ATTN_OK);
    char small[16];
    size_t again;
    assert_int_equal(
        attn_check_format(check, ATTN_FORMAT_JSON, small, sizeof small, &again),
        ATTN_OK);
    assert_int_equal(again, length);
    assert_int_equal(strlen(small), sizeof small - 1);
    char *text = malloc(length + 1);
    assert_int_equal(
        attn_check_format(check, ATTN_FORMAT_JSON, text, length + 1, &again),
        ATTN_OK);
    assert_string_equal(text, "{\"checked\":3,\"errata\":[],\"groups\":[],"
                              "\"unchecked\":[\"sqrt_dk\"],"
                              "\"decimalsInferred\":{\"weights_row1\":3}}");
    free(text);
    attn_check_destroy(check);
    attn_problem_destroy(problem);
}

/* Numbers that arrive as doubles have lost their trailing zeros (0.410 is
 * 0.41): read one by one, a cell printed to 3 decimals but wrong in its
 * third would pass at 2. A table without decimals is read to the most any
 * of its numbers shows, and the report says which tables were. */
static void
test_a_table_without_decimals_is_read_to_its_most_and_says_so(void **state)
{
    (void)state;
    attn_problem *problem = small_problem();
    assert_int_equal(attn_problem_run(problem), ATTN_OK);
    int rank, dims[3];
    const double *weights;
    assert_int_equal(
        attn_problem_result(problem, "weights", &rank, dims, &weights),
        ATTN_OK);
    /* Every weight to 3 decimals, but for the first whose 2-decimal form is
     * more than half a unit of the third decimal off: that one is printed
     * to 2, as a slip that a double cannot tell from 0.xy0. */
    double printed[9];
    int slipped = -1;
    for (int i = 0; i < 9; i++) {
        printed[i] = round(weights[i] * 1000) / 1000;
        const double two = round(weights[i] * 100) / 100;
        if (slipped < 0 && fabs(two - weights[i]) > 0.0006) {
            printed[i] = two;
            slipped = i;
        }
    }
    assert_true(slipped >= 0);
    attn_check *check;
    assert_int_equal(attn_check_create(&check, problem), ATTN_OK);
    assert_int_equal(
        attn_check_set_printed(check, "weights", 2, dims, printed, NULL),
        ATTN_OK);
    int errata;
    assert_int_equal(attn_check_run(check, &errata), ATTN_OK);
    assert_int_equal(errata, 1);
    char text[4096];
    size_t length;
    assert_int_equal(
        attn_check_format(check, ATTN_FORMAT_JSON, text, sizeof text, &length),
        ATTN_OK);
    assert_non_null(strstr(text, "\"decimalsInferred\":{\"weights\":3}"));
    assert_int_equal(
        attn_check_format(check, ATTN_FORMAT_TEXT, text, sizeof text, &length),
        ATTN_OK);
    if (strstr(text, "Decimals inferred (none were given; each table's "
                     "numbers are read to the most decimals any of them "
                     "shows): weights 3.") == NULL)
        fail_msg("%s", text);
    attn_check_destroy(check);
    attn_problem_destroy(problem);
}

static void test_every_format_reads_counting_from_one(void **state)
{
    (void)state;
    attn_problem *problem = small_problem();
    assert_int_equal(attn_problem_run(problem), ATTN_OK);
    attn_check *check;
    assert_int_equal(attn_check_create(&check, problem), ATTN_OK);
    const double row[3] = {0.9, 0.05, 0.05};
    const int dims[1] = {3};
    assert_int_equal(
        attn_check_set_printed(check, "weights_row1", 1, dims, row, NULL),
        ATTN_OK);
    int errata;
    assert_int_equal(attn_check_run(check, &errata), ATTN_OK);
    assert_int_equal(errata, 3);
    static const char *const wanted[] = {
        [ATTN_FORMAT_TEXT] = "weights[q2][k1]: printed 0.90, exact",
        [ATTN_FORMAT_MARKDOWN] =
            "- weights\\[q2\\]\\[k1\\]: printed 0.90, exact",
        [ATTN_FORMAT_LATEX] = "\\item weights[q2][k1]: printed 0.90, exact"};
    for (int format = ATTN_FORMAT_TEXT; format <= ATTN_FORMAT_LATEX; format++) {
        char text[4096];
        size_t length;
        assert_int_equal(
            attn_check_format(check, format, text, sizeof text, &length),
            ATTN_OK);
        if (strstr(text, wanted[format]) == NULL)
            fail_msg("format %d:\n%s", format, text);
    }
    attn_check_destroy(check);
    attn_problem_destroy(problem);
}

/* A check reads the results of one run: its printed keys were matched to
 * their shapes. Once the problem runs again, here with one token where it
 * had three, every call refuses (the run once read past the new, smaller
 * arrays: ASan's heap-buffer-overflow in exact_of, and in attn__label from
 * attn_check_format). */
static void test_a_check_refuses_a_problem_that_ran_again(void **state)
{
    (void)state;
    attn_problem *problem = small_problem();
    assert_int_equal(attn_problem_run(problem), ATTN_OK);
    attn_check *check;
    assert_int_equal(attn_check_create(&check, problem), ATTN_OK);
    const double weights[9] = {0.4, 0.3, 0.3, 0.3, 0.4, 0.3, 0.3, 0.3, 0.4};
    const int dims[2] = {3, 3};
    assert_int_equal(
        attn_check_set_printed(check, "weights", 2, dims, weights, NULL),
        ATTN_OK);
    assert_int_equal(attn_check_run(check, NULL), ATTN_OK);
    static const double one_token[3] = {1, 0.5, 0.2};
    const int one_dims[2] = {1, 3};
    for (int t = 0; t < 3; t++)
        assert_int_equal(attn_problem_set_tensor(problem,
                                                 t == 0   ? "q"
                                                 : t == 1 ? "k"
                                                          : "v",
                                                 2, one_dims, one_token),
                         ATTN_OK);
    /* Cleared by the setters: no results at all. */
    assert_int_equal(attn_check_run(check, NULL), ATTN_ERR_STATE);
    assert_non_null(strstr(attn_check_error(check), "no results yet"));
    assert_int_equal(attn_problem_run(problem), ATTN_OK);
    const char *again = "check: the problem has run again since this check "
                        "read its results";
    char text[4096];
    size_t length = 0;
    assert_int_equal(
        attn_check_format(check, ATTN_FORMAT_TEXT, text, sizeof text, &length),
        ATTN_ERR_STATE);
    assert_non_null(strstr(attn_check_error(check), again));
    assert_int_equal(attn_check_run(check, NULL), ATTN_ERR_STATE);
    assert_non_null(strstr(attn_check_error(check), again));
    assert_int_equal(
        attn_check_set_printed(check, "output", 2, one_dims, one_token, NULL),
        ATTN_ERR_STATE);
    assert_int_equal(attn_check_set_note(check, "notes"), ATTN_ERR_STATE);
    attn_check_destroy(check);
    /* A new check of the new run reads it. */
    assert_int_equal(attn_check_create(&check, problem), ATTN_OK);
    const double one_weight[1] = {1};
    const int scalar_dims[2] = {1, 1};
    assert_int_equal(attn_check_set_printed(check, "weights", 2, scalar_dims,
                                            one_weight, NULL),
                     ATTN_OK);
    int errata = -1;
    assert_int_equal(attn_check_run(check, &errata), ATTN_OK);
    assert_int_equal(errata, 0);
    attn_check_destroy(check);
    attn_problem_destroy(problem);
}

/* A sentence names cells as the walkthrough does, by their tokens (a long
 * label cut to whole characters), and quotes a printed 1e300 as written:
 * the 301 digits of "%.0f" once ran past the buffers that hold the lists. */
static void
test_a_misprinted_row_is_named_by_tokens_and_quoted_as_written(void **state)
{
    (void)state;
    cJSON *input = cJSON_Parse(
        "{\"kind\":\"scaledDotProduct\",\"q\":[[1,0],[0,1]],"
        "\"k\":[[1,0],[0,1]],\"v\":[[1,0],[0,1]],"
        "\"tokens\":["
        "\"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\","
        "\"sat\"],\"printed\":{\"weights\":[[1e300,2e300],[0.33,0.67]]}}");
    assert_non_null(input);
    char error[ERROR_CAP];
    checked c;
    assert_int_equal(check_input(&c, input, NULL, error), ATTN_OK);
    assert_int_equal(c.errata, 2);
    const cJSON *group = cJSON_GetArrayItem(member(c.report, "groups"), 0);
    assert_string_equal(
        member(group, "explanation")->valuestring,
        "weights[\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u2026]["
        "\u00e9\u00e9"
        "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u2026], "
        "weights[\u00e9\u00e9\u00e9\u00e9"
        "\u00e9\u00e9\u00e9\u00e9\u2026][sat] are printed 1e+300, 2e+300, but "
        "the "
        "numbers before them give 0.6698, 0.3302 by the same arithmetic "
        "(exactly 0.6698, 0.3302): a slip in the arithmetic or in the "
        "copying.");
    release(&c);
    cJSON_Delete(input);
}

/* Each allocation of a check fails in turn: a clean status, nothing left. */
static void test_every_allocation_failing_leaves_nothing_behind(void **state)
{
    (void)state;
    cJSON *cases = read_json(CASES);
    const cJSON *input = member(cJSON_GetArrayItem(cases, 6),
                                "input"); /* the misprint */
    int succeeded = 0;
    for (long fail_at = 0; !succeeded && fail_at < 100000; fail_at++) {
        failing_allocator counts = {fail_at, 0, 0};
        const attn_allocator allocator = failing_allocator_use(&counts);
        char error[ERROR_CAP];
        checked c;
        const int status = check_input(&c, input, &allocator, error);
        if (status != ATTN_OK && status != ATTN_ERR_NOMEM)
            fail_msg("allocation %ld failing: status %d (%s)", fail_at, status,
                     error);
        succeeded = status == ATTN_OK;
        release(&c);
        assert_int_equal(counts.live, 0);
    }
    assert_true(succeeded);
    cJSON_Delete(cases);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_worked_examples_are_explained_as_their_script_made_them),
        cmocka_unit_test(
            test_the_no_scale_sentence_names_the_square_root_of_d_k),
        cmocka_unit_test(test_a_slip_sentence_names_its_tables_as_names),
        cmocka_unit_test(test_the_tutorials_errata_are_the_checks),
        cmocka_unit_test(test_bad_input_gets_a_message_naming_the_key),
        cmocka_unit_test(
            test_a_table_without_decimals_is_read_to_its_most_and_says_so),
        cmocka_unit_test(test_every_format_reads_counting_from_one),
        cmocka_unit_test(test_a_check_refuses_a_problem_that_ran_again),
        cmocka_unit_test(
            test_a_misprinted_row_is_named_by_tokens_and_quoted_as_written),
        cmocka_unit_test(test_every_allocation_failing_leaves_nothing_behind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
