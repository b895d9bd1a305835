/* attn_problem_format: exact JSON text (null for masked entries, shortest
 * round-trip numbers), the Markdown and LaTeX walkthroughs of small cases,
 * truncation and the needed length as snprintf reports it, and the same
 * text streamed in pieces (attn_problem_format_to). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "allclose.h"
#include "attention.h"
#include "problem_fixture.h"
#include "test_rng.h"
#include "text/textbuf.h"

static const double Q000[] = {1, 0, 0, 1, 1, 1};
static const double V000[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};

/* The whole text of a format, in a buffer the caller frees. */
static char *format_all(const attn_problem *problem, int format)
{
    size_t length = 0;
    assert_int_equal(attn_problem_format(problem, format, NULL, 0, &length),
                     ATTN_OK);
    char *text = malloc(length + 1);
    assert_non_null(text);
    size_t again = 0;
    assert_int_equal(
        attn_problem_format(problem, format, text, length + 1, &again),
        ATTN_OK);
    assert_int_equal(again, length);
    assert_int_equal(strlen(text), length);
    return text;
}

/* The format must succeed and give exactly `expected`. */
static void assert_format_is(const attn_problem *problem, int format,
                             const char *expected)
{
    char *text = format_all(problem, format);
    assert_string_equal(text, expected);
    free(text);
}

static attn_problem *causal_000(void)
{
    attn_problem *problem = problem_self_attention("scaledDotProduct", 0, 3, 2,
                                                   3, Q000, V000);
    assert_int_equal(attn_problem_set_string(problem, "mask", "causal"),
                     ATTN_OK);
    problem_run_ok(problem);
    return problem;
}

static void test_each_format_a_user_names_has_its_number(void **state)
{
    (void)state;
    assert_string_equal(attn_format_name(ATTN_FORMAT_JSON), "json");
    assert_string_equal(attn_format_name(ATTN_FORMAT_TEXT), "text");
    assert_string_equal(attn_format_name(ATTN_FORMAT_MARKDOWN), "markdown");
    assert_string_equal(attn_format_name(ATTN_FORMAT_LATEX), "latex");
    assert_string_equal(attn_format_name(ATTN_FORMAT_STEPS), "steps");
    assert_null(attn_format_name(ATTN_FORMAT_STEP_OUTLINE));
    assert_null(attn_format_name(-1));
}

static void test_json_writes_masked_entries_as_null(void **state)
{
    (void)state;
    attn_problem *problem = causal_000();
    assert_format_is(
        problem, ATTN_FORMAT_JSON,
        "{\"scores\":[[1,0,1],[0,1,1],[1,1,2]],"
        "\"scaled\":[[0.7071067811865475,null,null],"
        "[0,0.7071067811865475,null],"
        "[0.7071067811865475,0.7071067811865475,1.414213562373095]],"
        "\"weights\":[[1,0,0],[0.3302384506733431,0.6697615493266569,0],"
        "[0.2482550782577231,0.2482550782577231,0.5034898434845538]],"
        "\"output\":[[1,2,3],"
        "[3.0092846479799706,4.009284647979971,5.009284647979971],"
        "[4.765704295680493,5.765704295680493,6.765704295680492]]}");
    attn_problem_destroy(problem);
}

static void test_json_multihead_nests_heads(void **state)
{
    (void)state;
    attn_problem *problem = problem_new("multiHead");
    const double x[] = {1, 2}, identity[] = {1, 0, 0, 1};
    problem_matrix(problem, "x", 1, 2, x);
    const char *const weights[] = {"wq", "wk", "wv", "wo"};
    for (int i = 0; i < 4; i++)
        problem_matrix(problem, weights[i], 2, 2, identity);
    assert_int_equal(attn_problem_set_number(problem, "numHeads", 2), ATTN_OK);
    problem_run_ok(problem);
    /* d_head = 1: scale 1/√1; one key, so each weight is 1. */
    assert_format_is(problem, ATTN_FORMAT_JSON,
                     "{\"q\":[[1,2]],\"k\":[[1,2]],\"v\":[[1,2]],\"heads\":["
                     "{\"scores\":[[1]],\"scaled\":[[1]],\"weights\":[[1]],"
                     "\"output\":[[1]]},"
                     "{\"scores\":[[4]],\"scaled\":[[4]],\"weights\":[[1]],"
                     "\"output\":[[2]]}],"
                     "\"concat\":[[1,2]],\"output\":[[1,2]]}");
    attn_problem_destroy(problem);
}

static void test_json_vector_softmax_has_number_max_and_sum(void **state)
{
    (void)state;
    attn_problem *problem = problem_new("softmax");
    const double x[] = {0, 0};
    problem_vector(problem, "x", 2, x);
    problem_run_ok(problem);
    assert_format_is(problem, ATTN_FORMAT_JSON,
                     "{\"scaled\":[0,0],\"max\":0,\"exp\":[1,1],"
                     "\"sum\":2,\"weights\":[0.5,0.5]}");
    attn_problem_destroy(problem);
}

/* Every number in the JSON reads back (strtod) as the exact result. */
static void test_json_numbers_round_trip_exactly(void **state)
{
    (void)state;
    test_rng rng;
    test_rng_seed(&rng, 2024);
    double x[60];
    test_rng_fill(&rng, x, 60, -30, 30);
    attn_problem *problem = problem_new("softmax");
    problem_matrix(problem, "x", 6, 10, x);
    assert_int_equal(attn_problem_set_number(problem, "scale", 1 / 3.0),
                     ATTN_OK);
    problem_run_ok(problem);
    char *json = format_all(problem, ATTN_FORMAT_JSON);
    const char *const names[] = {"scaled", "max", "exp", "sum", "weights"};
    const char *cursor = json;
    for (int n = 0; n < 5; n++) {
        int rank, dims[3];
        const double *data;
        assert_int_equal(
            attn_problem_result(problem, names[n], &rank, dims, &data),
            ATTN_OK);
        const size_t count = rank == 2 ? 60 : 6;
        cursor = strchr(cursor, ':') + 1;
        for (size_t i = 0; i < count; i++) {
            cursor += strspn(cursor, "[,]");
            char *end;
            const double parsed = strtod(cursor, &end);
            assert_true(end > cursor);
            assert_true(parsed == data[i]);
            cursor = end;
        }
    }
    free(json);
    attn_problem_destroy(problem);
}

static void test_markdown_walkthrough_of_a_2x2_causal_case(void **state)
{
    (void)state;
    const double q[] = {1, 0, 0, 1}, v[] = {1, 2, 3, 4};
    attn_problem *problem = problem_self_attention("scaledDotProduct", 0, 2, 2,
                                                   2, q, v);
    const char *const tokens[] = {"a", "b|c"};
    assert_int_equal(attn_problem_set_strings(problem, "tokens", 2, tokens),
                     ATTN_OK);
    assert_int_equal(attn_problem_set_string(problem, "mask", "causal"),
                     ATTN_OK);
    problem_run_ok(problem);
    char *text = format_all(problem, ATTN_FORMAT_MARKDOWN);
    /* The whole document is a golden of the CLI tests; here, the lines
     * that show each kind of step, labels escaped wherever they stand. */
    static const char *const lines[] = {
        "# Scaled dot-product attention\n",
        "## Step 2. Score of a against a\n",
        "## Step 3. The other three dot products\n",
        "Score of a against b\\|c:\n",
        "- S\\[a, b\\|c\\] = `1×0 + 0×1 = 0`\n",
        "## Step 4. Divide by √d\\_k = √2\n",
        "- scaled\\[b\\|c, a\\] = `0 ÷ √2 = 0`\n",
        "- scaled\\[a, b\\|c\\] = `−∞`\n",
        "| b\\|c | 0 | 0.7071 |\n",
        "- max\\[b\\|c\\] = `max(0, 0.7071) = 0.7071`\n",
        "- exp\\[a, b\\|c\\] = `exp(−∞) = 0`\n",
        "- weights\\[b\\|c, a\\] = `0.4931 ÷ 1.4931 = 0.3302`\n",
        "- output\\[b\\|c\\] = `0.3302×[1, 2] + 0.6698×[3, 4] = "
        "[0.3302, 0.6605] + [2.0093, 2.679] = [2.3395, 3.3395]`\n",
        "## Step 7. Softmax of the other row\n",
        "## Step 10. The whole computation\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (strstr(text, lines[i]) == NULL) fail_msg("missing: %s", lines[i]);
    free(text);
    attn_problem_destroy(problem);
}

static attn_problem *masked_latex_case(void)
{
    const double q[] = {1, 2}, k[] = {3, 0.5, 1, -1}, v[] = {1, 3};
    const double mask[] = {1, 0};
    attn_problem *problem = problem_new("scaledDotProduct");
    problem_matrix(problem, "q", 1, 2, q);
    problem_matrix(problem, "k", 2, 2, k);
    problem_matrix(problem, "v", 2, 1, v);
    problem_matrix(problem, "mask", 1, 2, mask);
    const char *const query_tokens[] = {"50%"};
    const char *const key_tokens[] = {"x_1", "\\a^b~{c}&$#"};
    problem_strings(problem, "queryTokens", 1, query_tokens);
    problem_strings(problem, "keyTokens", 2, key_tokens);
    problem_run_ok(problem);
    return problem;
}

static void test_latex_walkthrough_of_a_masked_case_escapes_labels(void **state)
{
    (void)state;
    attn_problem *problem = masked_latex_case();
    char *text = format_all(problem, ATTN_FORMAT_LATEX);
    static const char *const lines[] = {
        "\\subsection*{Scaled dot-product attention}\n",
        "\\subsubsection*{Step 2. Score of 50\\% against x\\_1}\n",
        "\\item S[50\\%, x\\_1] = $1 \\times 3 + 2 \\times 0.5 = 4$\n",
        "\\item S[50\\%, \\textbackslash{}a\\textasciicircum{}"
        "b\\textasciitilde{}\\{c\\}\\&\\$\\#] = $1 \\times 1 + 2 "
        "\\times (-1) = -1$\n",
        "\\item scaled[50\\%, x\\_1] = $4  \\div  \\sqrt{2} = 2.8284$\n",
        "\\begin{array}{r}\n\\text{x\\_1} \\\\\n"
        "\\text{\\textbackslash{}a\\textasciicircum{}b"
        "\\textasciitilde{}\\{c\\}\\&\\$\\#}\n\\end{array}\n",
        "\\item exp[50\\%, \\textbackslash{}a\\textasciicircum{}"
        "b\\textasciitilde{}\\{c\\}\\&\\$\\#] = $\\exp(-\\infty) = 0$\n",
        "\\item output[50\\%] = $1 \\times [1] = [1]$\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (strstr(text, lines[i]) == NULL) fail_msg("missing: %s", lines[i]);
    free(text);
    attn_problem_destroy(problem);
}

/* TeX joins "--" into a dash, "``" and "''" into quotes and "!`" into
 * an inverted mark: typed labels keep each character. */
static void test_latex_keeps_the_characters_of_a_label_apart(void **state)
{
    (void)state;
    const double x[] = {1, 2};
    attn_problem *problem = problem_new("softmax");
    problem_matrix(problem, "x", 1, 2, x);
    const char *const query_tokens[] = {"a--b"};
    const char *const key_tokens[] = {"``q''", "!`"};
    problem_strings(problem, "queryTokens", 1, query_tokens);
    problem_strings(problem, "keyTokens", 2, key_tokens);
    problem_run_ok(problem);
    char *text = format_all(problem, ATTN_FORMAT_LATEX);
    static const char *const spelled[] = {
        "a-{}-b",
        "\\textasciigrave{}{}\\textasciigrave{}q'{}'",
        "!{}\\textasciigrave{}",
    };
    for (size_t i = 0; i < sizeof spelled / sizeof spelled[0]; i++)
        if (strstr(text, spelled[i]) == NULL)
            fail_msg("missing: %s", spelled[i]);
    free(text);
    attn_problem_destroy(problem);
}

static void
test_text_walkthrough_spells_out_tutorial_001_dot_products(void **state)
{
    (void)state;
    const double x[] = {1.0, 0.5, 0.2, 0.8, 0.3, 0.9,
                        0.1, 0.4, 0.6, 0.2, 0.7, 0.3};
    attn_problem *problem = problem_self_attention("scaledDotProduct", 0, 3, 4,
                                                   4, x, x);
    const char *const tokens[] = {"cat", "sat", "mat"};
    assert_int_equal(attn_problem_set_strings(problem, "tokens", 3, tokens),
                     ATTN_OK);
    problem_run_ok(problem);
    char *text = format_all(problem, ATTN_FORMAT_TEXT);
    assert_non_null(strstr(text, "  S[cat, sat] = 1×0.3 + 0.5×0.9 + 0.2×0.1 "
                                 "+ 0.8×0.4 = 1.09\n"));
    /* The tutorial printed 0.65 for this one. */
    assert_non_null(strstr(text, "  S[sat, mat] = 0.3×0.6 + 0.9×0.2 + 0.1×0.7 "
                                 "+ 0.4×0.3 = 0.55\n"));
    assert_non_null(strstr(text, "  scaled[sat, mat] = 0.55 ÷ √4 = 0.275\n"));
    assert_non_null(strstr(text, "  weights[cat, cat] = 1 ÷ 2.3108 = "
                                 "0.4327\n"));
    char *again = format_all(problem, ATTN_FORMAT_TEXT);
    assert_string_equal(text, again);
    free(again);
    free(text);
    attn_problem_destroy(problem);
}

static void test_every_kind_formats_in_every_style(void **state)
{
    (void)state;
    attn_problem *problems[3];
    problems[0] = problem_self_attention("linear", 0, 3, 2, 3, Q000, V000);
    problems[1] = problem_new("weightedSum");
    const double weights[] = {0.17, 0.23, 0.6};
    problem_vector(problems[1], "weights", 3, weights);
    problem_matrix(problems[1], "v", 3, 3, V000);
    problems[2] = problem_new("luong");
    problem_matrix(problems[2], "query", 3, 2, Q000);
    problem_matrix(problems[2], "keys", 3, 2, Q000);
    assert_int_equal(attn_problem_set_string(problems[2], "method", "dot"),
                     ATTN_OK);
    const char *const titles[] = {"Linear attention\n", "Weighted sum\n",
                                  "Luong attention (dot)\n"};
    const char *const expected[] = {"output (3×3, n_q × d_v):",
                                    "output[q1] = 0.17×[1, 2, 3] + "
                                    "0.23×[4, 5, 6] + 0.6×[7, 8, 9] = "
                                    "[0.17, 0.34, 0.51] + [0.92, 1.15, "
                                    "1.38] + [4.2, 4.8, 5.4] = "
                                    "[5.29, 6.29, 7.29]",
                                    "score[q3, k3] = 1×1 + 1×1 = 2"};
    const char *const expected_latex[] = {
        "\\textbf{output} (3\\ensuremath{\\times}3, n\\ensuremath{_q} "
        "\\ensuremath{\\times} d\\ensuremath{_v}):\n\\[\n",
        "\\item output[q1] = $0.17 \\times [1,\\allowbreak 2,\\allowbreak 3] "
        "+ 0.23 \\times [4,\\allowbreak 5,\\allowbreak 6] + 0.6 \\times "
        "[7,\\allowbreak 8,\\allowbreak 9] = [0.17,\\allowbreak "
        "0.34,\\allowbreak 0.51] + [0.92,\\allowbreak 1.15,\\allowbreak "
        "1.38] + [4.2,\\allowbreak 4.8,\\allowbreak 5.4] = "
        "[5.29,\\allowbreak 6.29,\\allowbreak 7.29]$\n",
        "\\item score[q3, k3] = $1 \\times 1 + 1 \\times 1 = 2$\n"};
    for (int i = 0; i < 3; i++) {
        problem_run_ok(problems[i]);
        char *text = format_all(problems[i], ATTN_FORMAT_TEXT);
        assert_true(strncmp(text, titles[i], strlen(titles[i])) == 0);
        assert_non_null(strstr(text, expected[i]));
        free(text);
        char *markdown = format_all(problems[i], ATTN_FORMAT_MARKDOWN);
        assert_true(markdown[0] == '#');
        free(markdown);
        char *latex = format_all(problems[i], ATTN_FORMAT_LATEX);
        char heading[64];
        snprintf(heading, sizeof heading, "\\subsection*{%.*s}\n",
                 (int)strlen(titles[i]) - 1, titles[i]);
        assert_true(strncmp(latex, heading, strlen(heading)) == 0);
        assert_non_null(strstr(latex, expected_latex[i]));
        free(latex);
        attn_problem_destroy(problems[i]);
    }
}

static void assert_truncates_to_cap(const attn_problem *problem, int format)
{
    char *full = format_all(problem, format);
    const size_t length = strlen(full);
    assert_true(length > 100);

    size_t reported = 0;
    assert_int_equal(attn_problem_format(problem, format, NULL, 0, &reported),
                     ATTN_OK);
    assert_int_equal(reported, length);

    char small[16];
    const size_t caps[] = {1, 2, 10, 16};
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        memset(small, 'x', sizeof small);
        reported = 0;
        assert_int_equal(
            attn_problem_format(problem, format, small, caps[c], &reported),
            ATTN_OK);
        assert_int_equal(reported, length);
        assert_int_equal(strlen(small), caps[c] - 1);
        assert_memory_equal(small, full, caps[c] - 1);
        for (size_t i = caps[c]; i < sizeof small; i++)
            assert_int_equal(small[i], 'x'); /* nothing past cap */
    }

    char *exact = malloc(length);
    assert_non_null(exact);
    assert_int_equal(
        attn_problem_format(problem, format, exact, length, &reported),
        ATTN_OK);
    assert_int_equal(reported, length);
    assert_memory_equal(exact, full, length - 1); /* all but the last byte */
    assert_int_equal(exact[length - 1], '\0');
    free(exact);
    free(full);
}

static void test_truncation_reports_the_full_length(void **state)
{
    (void)state;
    attn_problem *problem = causal_000();
    assert_truncates_to_cap(problem, ATTN_FORMAT_TEXT);
    attn_problem_destroy(problem);
    /* LaTeX escapes pieces as it writes them: cut inside an escape too. */
    problem = masked_latex_case();
    assert_truncates_to_cap(problem, ATTN_FORMAT_LATEX);
    attn_problem_destroy(problem);
}

static void test_format_rejects_unknown_formats_and_missing_length(void **state)
{
    (void)state;
    attn_problem *problem = causal_000();
    size_t length;
    assert_int_equal(attn_problem_format(problem, 7, NULL, 0, &length),
                     ATTN_ERR_OPTION);
    assert_string_equal(attn_problem_error(problem),
                        "format: unknown format 7 (0 JSON, 1 text, "
                        "2 Markdown, 3 LaTeX, 4 steps, 5 step outline)");
    assert_int_equal(
        attn_problem_format(problem, ATTN_FORMAT_JSON, NULL, 0, NULL),
        ATTN_ERR_NULL);
    char buf[4];
    assert_int_equal(attn_problem_format(problem, ATTN_FORMAT_JSON, NULL,
                                         sizeof buf, &length),
                     ATTN_ERR_NULL);
    assert_int_equal(
        attn_problem_format(NULL, ATTN_FORMAT_JSON, buf, sizeof buf, &length),
        ATTN_ERR_NULL);
    assert_int_equal(attn_problem_format(problem, ATTN_FORMAT_JSON, buf,
                                         sizeof buf, &length),
                     ATTN_OK);
    assert_string_equal(attn_problem_error(problem), "");
    attn_problem_destroy(problem);
}

/* Step `step`'s equations, in a buffer the caller frees; NULL past the
 * last step (ATTN_ERR_RANGE). */
static char *equations_of(const attn_problem *problem, int step)
{
    size_t length = 0;
    const int status = attn_problem_format_equations(problem, step, NULL, 0,
                                                     &length);
    if (status == ATTN_ERR_RANGE) return NULL;
    assert_int_equal(status, ATTN_OK);
    char *text = malloc(length + 1);
    assert_non_null(text);
    size_t again = 0;
    assert_int_equal(
        attn_problem_format_equations(problem, step, text, length + 1, &again),
        ATTN_OK);
    assert_int_equal(again, length);
    return text;
}

static int occurrences(const char *text, const char *end, const char *what)
{
    int count = 0;
    for (const char *at = strstr(text, what); at != NULL && at < end;
         at = strstr(at + 1, what))
        count++;
    return count;
}

/* Where step n's object begins in a steps JSON (the end of the text for
 * the step after the last). */
static const char *step_at(const char *json, int n)
{
    const char *at = json;
    for (int k = 0; k < n; k++) {
        at = strstr(at + 1, "{\"id\":");
        if (at == NULL) return json + strlen(json);
    }
    return at;
}

/* The outline and every step's equations are the steps JSON in two parts:
 * each step's equations are the bytes of its "equations" array there, and
 * the outline is the rest, with the count of each step's equations. */
static void
assert_outline_and_equations_make_the_steps(const attn_problem *problem)
{
    char *full = format_all(problem, ATTN_FORMAT_STEPS);
    char *outline = format_all(problem, ATTN_FORMAT_STEP_OUTLINE);
    assert_null(strstr(outline, "\"equations\""));
    const int steps = occurrences(full, full + strlen(full), "{\"id\":");
    assert_true(steps > 1);
    size_t length = strlen(outline);
    int with_equations = 0;
    for (int n = 1; n <= steps; n++) {
        char *equations = equations_of(problem, n);
        assert_non_null(equations);
        const char *begin = step_at(full, n), *end = step_at(full, n + 1);
        const char *outline_begin = step_at(outline, n);
        const char *outline_end = step_at(outline, n + 1);
        if (strcmp(equations, "[]") == 0) {
            assert_int_equal(occurrences(begin, end, "\"equations\":"), 0);
            assert_int_equal(
                occurrences(outline_begin, outline_end, "equationCount"), 0);
            free(equations);
            continue;
        }
        with_equations++;
        char *needle = malloc(strlen(equations) + 16);
        assert_non_null(needle);
        sprintf(needle, "\"equations\":%s", equations);
        const char *found = strstr(begin, needle);
        assert_true(found != NULL && found < end);
        /* A label is a JSON string, so {"label": starts each equation. */
        const int count = occurrences(equations, equations + strlen(equations),
                                      "{\"label\":");
        char counted[48];
        snprintf(counted, sizeof counted, ",\"equationCount\":%d}", count);
        found = strstr(outline_begin, counted);
        assert_true(found != NULL && found < outline_end);
        length += strlen(needle) + 1 - (strlen(counted) - 1);
        free(needle);
        free(equations);
    }
    assert_true(with_equations > 0);
    assert_int_equal(length, strlen(full));
    assert_null(equations_of(problem, steps + 1));
    char message[80];
    snprintf(message, sizeof message,
             "step: expected a step from 1 to %d, got %d", steps, steps + 1);
    assert_string_equal(attn_problem_error(problem), message);
    assert_null(equations_of(problem, 0));
    free(outline);
    free(full);
}

static void
test_the_outline_and_each_steps_equations_are_the_steps_json(void **state)
{
    (void)state;
    attn_problem *problem = causal_000();
    assert_outline_and_equations_make_the_steps(problem);
    attn_problem_destroy(problem);
    problem = masked_latex_case();
    assert_outline_and_equations_make_the_steps(problem);
    attn_problem_destroy(problem);
    problem = problem_new("luong");
    problem_matrix(problem, "query", 3, 2, Q000);
    problem_matrix(problem, "keys", 3, 2, Q000);
    assert_int_equal(attn_problem_set_string(problem, "method", "dot"),
                     ATTN_OK);
    problem_run_ok(problem);
    assert_outline_and_equations_make_the_steps(problem);
    attn_problem_destroy(problem);
}

static void test_equations_need_a_run_and_somewhere_to_write(void **state)
{
    (void)state;
    attn_problem *problem = problem_self_attention("scaledDotProduct", 0, 3, 2,
                                                   3, Q000, V000);
    size_t length;
    assert_int_equal(
        attn_problem_format_equations(problem, 1, NULL, 0, &length),
        ATTN_ERR_STATE);
    problem_run_ok(problem);
    assert_int_equal(attn_problem_format_equations(problem, 1, NULL, 0, NULL),
                     ATTN_ERR_NULL);
    assert_string_equal(attn_problem_error(problem),
                        "attn_problem_format_equations: length must not be "
                        "NULL, nor buf when cap is not 0");
    assert_int_equal(attn_problem_format_equations(NULL, 1, NULL, 0, &length),
                     ATTN_ERR_NULL);
    attn_problem_destroy(problem);
}

static int starts_with(const char *text, const char *prefix)
{
    return strncmp(text, prefix, strlen(prefix)) == 0;
}

/* The text of `format` up to the end of its first step's heading line, in
 * a buffer the caller frees. */
static char *format_head(const attn_problem *problem, int format)
{
    char *text = format_all(problem, format);
    char *step = strstr(text, "Step 1.");
    assert_non_null(step);
    char *end = strchr(step, '\n');
    assert_non_null(end);
    end[1] = '\0';
    return text;
}

static void
test_a_document_title_and_heading_level_place_the_walkthrough(void **state)
{
    (void)state;
    attn_problem *problem = causal_000();
    assert_int_equal(attn_problem_set_document(problem, "Lecture 7: masks", 2),
                     ATTN_OK);
    char *markdown = format_head(problem, ATTN_FORMAT_MARKDOWN);
    assert_non_null(strstr(markdown, "## Lecture 7: masks\n"));
    assert_non_null(strstr(markdown, "\n### Step 1. "));
    assert_null(strstr(markdown, "Scaled dot-product attention\n"));
    free(markdown);
    assert_int_equal(attn_problem_set_document(problem, "Masks & more", 3),
                     ATTN_OK);
    char *latex = format_head(problem, ATTN_FORMAT_LATEX);
    assert_true(starts_with(latex, "\\paragraph{Masks \\& more}\n"));
    assert_non_null(strstr(latex, "\\subparagraph{Step 1. "));
    free(latex);
    /* The steps JSON carries the title; NULL and 0 restore the defaults. */
    char *steps = format_all(problem, ATTN_FORMAT_STEPS);
    assert_true(starts_with(steps, "{\"title\":\"Masks & more\""));
    free(steps);
    assert_int_equal(attn_problem_set_document(problem, NULL, 0), ATTN_OK);
    markdown = format_head(problem, ATTN_FORMAT_MARKDOWN);
    assert_true(starts_with(markdown, "# Scaled dot-product attention\n"));
    assert_non_null(strstr(markdown, "\n## Step 1. "));
    free(markdown);
    attn_problem_destroy(problem);
}

static void test_a_document_title_or_level_out_of_range_is_refused(void **state)
{
    (void)state;
    attn_problem *problem = causal_000();
    assert_int_equal(attn_problem_set_document(problem, NULL, 5),
                     ATTN_ERR_RANGE);
    assert_string_equal(attn_problem_error(problem),
                        "heading level: must be 1 to 4 (0 for 1), got 5");
    assert_int_equal(attn_problem_set_document(problem, "a\x1b]0;x", 1),
                     ATTN_ERR_INPUT);
    assert_string_equal(attn_problem_error(problem),
                        "title: must not hold control characters "
                        "(byte 2 is 0x1b)");
    assert_int_equal(
        attn_problem_set_document(problem, "Caf\xc3\xa9 \xc0\xaf", 1),
        ATTN_ERR_INPUT);
    assert_string_equal(attn_problem_error(problem),
                        "title: must be valid UTF-8 (byte 7 is 0xc0)");
    char long_title[ATTN_TITLE_MAX + 2];
    memset(long_title, 'x', sizeof long_title - 1);
    long_title[sizeof long_title - 1] = '\0';
    assert_int_equal(attn_problem_set_document(problem, long_title, 1),
                     ATTN_ERR_RANGE);
    assert_string_equal(attn_problem_error(problem),
                        "title: at most 200 bytes, got 201");
    assert_int_equal(attn_problem_set_document(NULL, "x", 1), ATTN_ERR_NULL);
    /* A refused title leaves the walkthrough's own. */
    char *markdown = format_head(problem, ATTN_FORMAT_MARKDOWN);
    assert_true(starts_with(markdown, "# Scaled dot-product attention\n"));
    free(markdown);
    attn_problem_destroy(problem);
}

/* Found by fuzz/fuzz_steps_json.c: a label longer than a sentence keeps
 * (94 bytes) was cut inside a UTF-8 character, so every walkthrough format
 * held invalid UTF-8. It is cut before the character instead. */
static void test_a_long_label_is_cut_between_characters(void **state)
{
    (void)state;
    char label[3 * 40 + 1] = "";
    for (int i = 0; i < 40; i++) strcat(label, "\u65e5"); /* 日, 3 bytes */
    const char *const tokens[] = {label, "b"};
    static const double q[] = {1, 0, 0, 1};
    const int dims[2] = {2, 2};
    attn_problem *problem = NULL;
    assert_int_equal(attn_problem_create(&problem, "scaledDotProduct", NULL),
                     ATTN_OK);
    assert_int_equal(attn_problem_set_tensor(problem, "q", 2, dims, q),
                     ATTN_OK);
    assert_int_equal(attn_problem_set_tensor(problem, "k", 2, dims, q),
                     ATTN_OK);
    assert_int_equal(attn_problem_set_tensor(problem, "v", 2, dims, q),
                     ATTN_OK);
    assert_int_equal(attn_problem_set_strings(problem, "tokens", 2, tokens),
                     ATTN_OK);
    problem_run_ok(problem);
    /* 31 whole characters (93 bytes) fit; the 32nd would end at byte 96 */
    char title[128] = "Score of ";
    const size_t at = strlen(title);
    memcpy(title + at, label, 3 * 31);
    strcpy(title + at + 3 * 31, " against b");
    for (int format = ATTN_FORMAT_TEXT; format <= ATTN_FORMAT_STEPS; format++) {
        char *text = format_all(problem, format);
        assert_int_equal(attn__utf8_check(text, strlen(text)), strlen(text));
        if (format != ATTN_FORMAT_LATEX && strstr(text, title) == NULL)
            fail_msg("format %d lacks \"%s\"", format, title);
        free(text);
    }
    attn_problem_destroy(problem);
}

/* A 512x512 problem: the walkthrough shows 8x8 corners and stays small. */
static void test_large_problems_are_abbreviated(void **state)
{
    (void)state;
    enum { N = 512 };
    double *x = malloc(sizeof(double) * N * N);
    assert_non_null(x);
    test_rng rng;
    test_rng_seed(&rng, 7);
    test_rng_fill(&rng, x, (size_t)N * N, -1, 1);
    attn_problem *problem = problem_new("scaledDotProduct");
    problem_matrix(problem, "q", N, N, x);
    problem_matrix(problem, "k", N, N, x);
    problem_matrix(problem, "v", N, N, x);
    assert_int_equal(attn_problem_set_string(problem, "mask", "causal"),
                     ATTN_OK);
    problem_run_ok(problem);
    for (int format = ATTN_FORMAT_TEXT; format <= ATTN_FORMAT_LATEX; format++) {
        const int latex = format == ATTN_FORMAT_LATEX;
        char *text = format_all(problem, format);
        assert_true(strlen(text) < 32000);
        assert_non_null(strstr(text, "(Dot products of length 512: too many "
                                     "terms to spell out.)"));
        assert_non_null(
            strstr(text, "first 8 of 512 rows and 8 of 512 columns"));
        if (latex) {
            /* Row 8 and column 8 stand for the rest. */
            assert_non_null(strstr(text, " & \\cdots \\\\\n"));
            assert_non_null(strstr(text, "\\vdots & \\vdots"));
            assert_non_null(strstr(text, " & \\ddots\n\\end{bmatrix}"));
            assert_null(strstr(text, "…"));
        } else {
            assert_non_null(strstr(text, "…"));
        }
        free(text);
    }
    attn_problem_destroy(problem);
    free(x);
}

/* Every piece attn_problem_format_to hands on, joined. */
typedef struct joined {
    char *text;
    size_t length, pieces;
} joined;

static void join(void *context, const char *bytes, size_t count)
{
    joined *all = context;
    all->text = realloc(all->text, all->length + count + 1);
    assert_non_null(all->text);
    memcpy(all->text + all->length, bytes, count);
    all->length += count;
    all->text[all->length] = '\0';
    all->pieces++;
}

/* 24 × 24 with gradients: every format's text passes the 64 KiB pieces. */
static void test_a_streamed_format_is_the_same_text_in_pieces(void **state)
{
    (void)state;
    enum { N = 24 };
    double x[N * N];
    test_rng rng;
    test_rng_seed(&rng, 11);
    test_rng_fill(&rng, x, (size_t)N * N, -1, 1);
    attn_problem *problem = problem_new("scaledDotProduct");
    problem_matrix(problem, "q", N, N, x);
    problem_matrix(problem, "k", N, N, x);
    problem_matrix(problem, "v", N, N, x);
    problem_matrix(problem, "gradOutput", N, N, x);
    problem_run_ok(problem);
    for (int format = ATTN_FORMAT_JSON; format <= ATTN_FORMAT_STEP_OUTLINE;
         format++) {
        char *whole = format_all(problem, format);
        joined all = {NULL, 0, 0};
        assert_int_equal(attn_problem_format_to(problem, format, join, &all),
                         ATTN_OK);
        assert_non_null(all.text);
        assert_string_equal(all.text, whole);
        if (strlen(whole) > 64 * 1024) assert_true(all.pieces > 1);
        free(all.text);
        free(whole);
    }
    assert_int_equal(
        attn_problem_format_to(problem, ATTN_FORMAT_JSON, NULL, NULL),
        ATTN_ERR_NULL);
    attn_problem_destroy(problem);
}

/* A tall, narrow problem: the caption says only the rows are cut. */
static void test_a_tall_matrix_caption_names_only_the_cut_rows(void **state)
{
    (void)state;
    enum { N = 11 };
    double x[N];
    for (int i = 0; i < N; i++) x[i] = i + 1;
    attn_problem *problem = problem_new("scaledDotProduct");
    problem_matrix(problem, "q", N, 1, x);
    problem_matrix(problem, "k", N, 1, x);
    problem_matrix(problem, "v", N, 1, x);
    problem_run_ok(problem);
    for (int format = ATTN_FORMAT_TEXT; format <= ATTN_FORMAT_LATEX; format++) {
        char *text = format_all(problem, format);
        /* Q, K and V are 11x1 (rows cut); the scores 11x11 (both cut). */
        const char *q_caption =
            format == ATTN_FORMAT_LATEX
                ? "d\\ensuremath{_k}), first 8 of 11 rows:\n"
            : format == ATTN_FORMAT_MARKDOWN ? "d\\_k), first 8 of 11 rows\n"
                                             : "d_k), first 8 of 11 rows:\n";
        assert_non_null(strstr(text, q_caption));
        assert_non_null(
            strstr(text, ", first 8 of 11 rows and 8 of 11 columns"));
        assert_null(strstr(text, "of 1 columns"));
        free(text);
    }
    attn_problem_destroy(problem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_format_a_user_names_has_its_number),
        cmocka_unit_test(test_json_writes_masked_entries_as_null),
        cmocka_unit_test(test_json_multihead_nests_heads),
        cmocka_unit_test(test_json_vector_softmax_has_number_max_and_sum),
        cmocka_unit_test(test_json_numbers_round_trip_exactly),
        cmocka_unit_test(test_markdown_walkthrough_of_a_2x2_causal_case),
        cmocka_unit_test(
            test_latex_walkthrough_of_a_masked_case_escapes_labels),
        cmocka_unit_test(test_latex_keeps_the_characters_of_a_label_apart),
        cmocka_unit_test(
            test_text_walkthrough_spells_out_tutorial_001_dot_products),
        cmocka_unit_test(test_every_kind_formats_in_every_style),
        cmocka_unit_test(
            test_a_document_title_and_heading_level_place_the_walkthrough),
        cmocka_unit_test(
            test_a_document_title_or_level_out_of_range_is_refused),
        cmocka_unit_test(test_truncation_reports_the_full_length),
        cmocka_unit_test(
            test_format_rejects_unknown_formats_and_missing_length),
        cmocka_unit_test(
            test_the_outline_and_each_steps_equations_are_the_steps_json),
        cmocka_unit_test(test_equations_need_a_run_and_somewhere_to_write),
        cmocka_unit_test(test_a_long_label_is_cut_between_characters),
        cmocka_unit_test(test_large_problems_are_abbreviated),
        cmocka_unit_test(test_a_tall_matrix_caption_names_only_the_cut_rows),
        cmocka_unit_test(test_a_streamed_format_is_the_same_text_in_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
