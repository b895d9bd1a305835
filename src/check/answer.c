/* answer.c: attn_check_answer, a learner's answer for one cell of a result,
 * graded as the check grades a printed number: the typed text read with its
 * decimals, checked alone as a table with that one cell printed (check.c's
 * rule, and its slips, rounding or misprint for a wrong one), then said to
 * the learner: a verdict in the learner's terms and a hint. */
#include "attention.h"
#include "check/check.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fewer typed decimals are graded at this many: "2" for an exact 2.3 would
 * otherwise round right. */
enum { ANSWER_MIN_DECIMALS = 2, ANSWER_TEXT_CAP = 64 };

/* What was typed, read: a sign ('-', '+' or U+2212 '−'), digits with a
 * decimal point or comma, or ∞ / "inf" after the sign. */
typedef struct typed_number {
    int readable;
    double value;
    int decimals; /* typed */
} typed_number;

static typed_number read_typed(const char *typed)
{
    typed_number out = {0, 0.0, 0};
    const char *c = typed;
    while (isspace((unsigned char)*c)) c++;
    int negative = 0;
    if (*c == '-' || *c == '+') {
        negative = *c == '-';
        c++;
    } else if (strncmp(c, "\xe2\x88\x92", 3) == 0) { /* − */
        negative = 1;
        c += 3;
    }
    if (strncmp(c, "\xe2\x88\x9e", 3) == 0 || strncmp(c, "inf", 3) == 0) {
        c += 3;
        out.value = negative ? -INFINITY : INFINITY;
    } else {
        char digits[ANSWER_TEXT_CAP];
        size_t n = 0;
        int whole = 0, point = 0;
        while (n + 1 < sizeof digits &&
               (isdigit((unsigned char)*c) ||
                (!point && (*c == '.' || *c == ',')))) {
            if (*c == '.' || *c == ',') {
                point = 1;
                digits[n++] = '.';
            } else {
                digits[n++] = *c;
                if (point)
                    out.decimals++;
                else
                    whole++;
            }
            c++;
        }
        digits[n] = '\0';
        if (whole + out.decimals == 0 || out.decimals > ATTN__MAX_DECIMALS)
            return out;
        out.value = strtod(digits, NULL);
        if (negative) out.value = -out.value;
    }
    while (isspace((unsigned char)*c)) c++;
    out.readable = *c == '\0';
    return out;
}

/* The result's name without "heads.<h>.": what kind of number it is. */
static const char *plain_name(const char *result)
{
    const char *dot = strrchr(result, '.');
    return dot != NULL ? dot + 1 : result;
}

static const char *noun_of(const char *plain)
{
    return strcmp(plain, "scores") == 0    ? "score"
           : strcmp(plain, "scaled") == 0  ? "scaled score"
           : strcmp(plain, "weights") == 0 ? "weight"
           : strcmp(plain, "output") == 0  ? "output"
                                           : "number";
}

/* How the scores are scaled, in words: "dividing the scores by √d_k = 2"
 * or "multiplying the scores by the scale 0.5"; told to do it ("divide
 * ...") when `imperative`. */
static void scaling_words(const attn_problem *problem, int imperative,
                          char *out, size_t cap)
{
    const attn__run_info *info = &problem->info;
    char number[ATTN__NUMBER_CAP];
    if (info->d_k > 0 && fabs(info->scale - 1.0 / sqrt(info->d_k)) < 1e-12) {
        attn__format_rounded(number, sqrt(info->d_k));
        snprintf(out, cap, "%s the scores by √d_k = %s",
                 imperative ? "divide" : "dividing", number);
    } else {
        attn__format_rounded(number, info->scale);
        snprintf(out, cap, "%s the scores by the scale %s",
                 imperative ? "multiply" : "multiplying", number);
    }
}

/* The verdict on a wrong answer and its hint, by the cause the check gave
 * it, in the learner's terms. */
static void wrong_words(const attn_problem *problem, const char *plain,
                        int cause, char *verdict, char *hint, size_t cap)
{
    const char *noun = noun_of(plain);
    char scaling[128], scale[128], root[ATTN__NUMBER_CAP];
    scaling_words(problem, 0, scaling, sizeof scaling);
    scaling_words(problem, 1, scale, sizeof scale);
    scale[0] = (char)toupper((unsigned char)scale[0]);
    attn__format_rounded(root, sqrt(problem->info.d_k));
    switch (cause) {
    case ATTN__NO_SCALE:
        snprintf(verdict, cap, "This is the %s without %s.", noun, scaling);
        snprintf(hint, cap, "%s first, then go on from there.", scale);
        return;
    case ATTN__SCALE_BY_DK:
        snprintf(verdict, cap,
                 "This is the %s with the scores divided by d_k = %d instead "
                 "of √d_k = %s.",
                 noun, problem->info.d_k, root);
        snprintf(hint, cap, "Divide the scores by the square root of d_k: %s.",
                 root);
        return;
    case ATTN__SOFTMAX_COLUMNS:
        snprintf(verdict, cap,
                 "This is the %s with the softmax taken down the column "
                 "instead of along the row.",
                 noun);
        snprintf(hint, cap,
                 "Normalise along the query's row: each row of weights sums "
                 "to 1.");
        return;
    case ATTN__NO_TRANSPOSE:
        snprintf(verdict, cap,
                 "This is the %s from Q·K instead of Q·Kᵀ: a row of Q met a "
                 "column of K.",
                 noun);
        snprintf(hint, cap,
                 "A score is the dot product of the query's row and the "
                 "key's row.");
        return;
    case ATTN__MASK_AFTER_SOFTMAX:
        snprintf(verdict, cap,
                 "This is the %s with the mask applied after the softmax: "
                 "the masked weights set to 0 and the row not renormalised.",
                 noun);
        snprintf(hint, cap,
                 "Mask before the softmax (a masked score is −∞, its "
                 "e-power 0), so that the row still sums to 1.");
        return;
    case ATTN__V_TRANSPOSED:
        snprintf(verdict, cap,
                 "This is the %s with Vᵀ instead of V: the weights mixed the "
                 "columns of V instead of its rows.",
                 noun);
        snprintf(hint, cap,
                 "Add the rows of V, each times the query's weight for its "
                 "key.");
        return;
    case ATTN__ROUNDING:
        snprintf(verdict, cap, "Close: one off in the last decimal.");
        snprintf(hint, cap,
                 "Keep more decimals in the numbers before it, and round "
                 "only the answer.");
        return;
    default: break;
    }
    snprintf(verdict, cap, "Not this %s, and none of the usual slips gives it.",
             noun);
    if (strcmp(plain, "scores") == 0)
        snprintf(hint, cap,
                 "Multiply the query's row and the key's row entry by entry, "
                 "and add.");
    else if (strcmp(plain, "scaled") == 0)
        snprintf(hint, cap, "%s.", scale);
    else if (strcmp(plain, "weights") == 0)
        snprintf(hint, cap,
                 "Take e to the power of each scaled score in the row, and "
                 "divide this one by their sum.");
    else if (strcmp(plain, "output") == 0)
        snprintf(hint, cap,
                 "Add the rows of V, each times the query's weight for its "
                 "key, and take this column.");
    else
        snprintf(hint, cap, "Work it out again from the step's formula.");
}

static void json_number(attn__text *out, double x)
{
    char text[ATTN__NUMBER_CAP];
    if (isinf(x)) {
        attn__text_puts(out, "null");
        return;
    }
    attn__format_shortest(text, x);
    attn__text_puts(out, text);
}

/* The one printed cell checked alone: *errata, *cause and *step (the
 * walkthrough's step computing it, from 0, as the report counts it; -1 when
 * none does) from the check's run. */
static int check_cell(attn_check *check, const char *result, int rows, int cols,
                      size_t cell, double value, int decimals, int *errata,
                      int *cause, int *step)
{
    attn_check *alone = NULL;
    int status = attn_check_create(&alone, check->problem);
    if (status != ATTN_OK)
        return attn__check_fail(check, status, "answer: out of memory");
    const size_t count = (size_t)rows * (size_t)cols;
    double *values = attn__check_alloc(check, count * sizeof *values);
    int *places = attn__check_alloc(check, count * sizeof *places);
    if (values == NULL || places == NULL) {
        status = attn__check_fail(check, ATTN_ERR_NOMEM,
                                  "answer: out of memory");
    } else {
        for (size_t i = 0; i < count; i++) {
            values[i] = NAN;
            places[i] = decimals;
        }
        values[cell] = value;
        const int dims[2] = {rows, cols};
        status = attn_check_set_printed(alone, result, 2, dims, values, places);
        if (status == ATTN_OK) status = attn_check_run(alone, errata);
        if (status != ATTN_OK)
            attn__check_fail(check, status, "answer: %s", alone->error);
    }
    if (status == ATTN_OK) {
        const int at = alone->tables[0].step[cell];
        *step = at == INT_MAX ? -1 : at / ATTN__REPEAT_SPAN - 1;
        *cause = *errata > 0 ? alone->groups[alone->errata[0].group].cause : -1;
    }
    attn__check_free(check, values);
    attn__check_free(check, places);
    attn_check_destroy(alone);
    return status;
}

int attn_check_answer(attn_check *check, const char *result, int row, int col,
                      const char *typed, char *buf, size_t cap, size_t *length)
{
    if (check == NULL) return ATTN_ERR_NULL;
    check->error[0] = '\0';
    if (result == NULL || typed == NULL || length == NULL ||
        (buf == NULL && cap > 0))
        return attn__check_fail(check, ATTN_ERR_NULL,
                                "answer: result, typed and length must not be "
                                "NULL, nor buf when cap is not 0");
    const int unchanged = attn__check_results_unchanged(check);
    if (unchanged != ATTN_OK) return unchanged;
    int rank, dims[3];
    const double *data;
    if (attn_problem_result(check->problem, result, &rank, dims, &data) !=
        ATTN_OK)
        return attn__check_fail(check, ATTN_ERR_INPUT,
                                "answer: this problem has no result named "
                                "\"%s\"",
                                result);
    if (rank == 3 && dims[0] == 1) {
        dims[0] = dims[1];
        dims[1] = dims[2];
        rank = 2;
    }
    if (rank != 2)
        return attn__check_fail(check, ATTN_ERR_INPUT,
                                "answer: %s is not one matrix (rank %d), so "
                                "a row and a column name no cell of it",
                                result, rank);
    if (row < 0 || row >= dims[0] || col < 0 || col >= dims[1])
        return attn__check_fail(check, ATTN_ERR_RANGE,
                                "answer: %s has no cell [%d][%d]: rows 0 to "
                                "%d, columns 0 to %d (counted from 0)",
                                result, row, col, dims[0] - 1, dims[1] - 1);
    if (strlen(typed) >= ANSWER_TEXT_CAP)
        return attn__check_fail(check, ATTN_ERR_INPUT,
                                "answer: at most %d bytes typed, got %zu",
                                ANSWER_TEXT_CAP - 1, strlen(typed));
    const size_t cell = (size_t)row * (size_t)dims[1] + (size_t)col;
    const double exact = data[cell];
    const typed_number number = read_typed(typed);
    const int decimals = number.decimals > ANSWER_MIN_DECIMALS
                             ? number.decimals
                             : ANSWER_MIN_DECIMALS;
    int errata = 0, cause = -1, step = -1;
    char verdict[ATTN__SENTENCE_CAP], hint[ATTN__SENTENCE_CAP];
    hint[0] = '\0';
    if (number.readable) {
        const int status = check_cell(check, result, dims[0], dims[1], cell,
                                      number.value, decimals, &errata, &cause,
                                      &step);
        if (status != ATTN_OK) return status;
        if (errata == 0) {
            char shown[ATTN__NUMBER_CAP];
            attn__format_rounded(shown, exact);
            snprintf(verdict, sizeof verdict, "Right: the exact value is %s.",
                     shown);
        } else {
            wrong_words(check->problem, plain_name(result), cause, verdict,
                        hint, sizeof verdict);
        }
    } else {
        snprintf(verdict, sizeof verdict,
                 "Type a number, such as 0.41 or -1.25, to 2 or 3 decimals.");
    }
    char rounded[ATTN__PRINTED_CAP];
    attn__printed_text(rounded, exact, decimals);
    attn__text text;
    attn__text_init(&text, buf, cap);
    attn__text_puts(&text, "{\"result\":");
    attn__text_json_string(&text, result, "");
    attn__text_printf(&text, ",\"row\":%d,\"col\":%d,\"typed\":", row, col);
    attn__text_json_string(&text, typed, "");
    attn__text_printf(&text, ",\"readable\":%s,\"decimals\":%d,\"right\":%s",
                      number.readable ? "true" : "false", decimals,
                      number.readable && errata == 0 ? "true" : "false");
    attn__text_puts(&text, ",\"value\":");
    if (number.readable)
        json_number(&text, number.value);
    else
        attn__text_puts(&text, "null");
    attn__text_puts(&text, ",\"exact\":");
    json_number(&text, exact);
    attn__text_puts(&text, ",\"rounded\":");
    attn__text_json_string(&text, rounded, "");
    attn__text_puts(&text, ",\"cause\":");
    if (cause >= 0)
        attn__text_json_string(&text, attn__cause_name(cause), "");
    else
        attn__text_puts(&text, "null");
    if (step >= 0)
        attn__text_printf(&text, ",\"step\":%d", step);
    else
        attn__text_puts(&text, ",\"step\":null");
    attn__text_puts(&text, ",\"verdict\":");
    attn__text_json_string(&text, verdict, "");
    attn__text_puts(&text, ",\"hint\":");
    attn__text_json_string(&text, hint, "");
    attn__text_puts(&text, "}");
    *length = text.length;
    return ATTN_OK;
}
