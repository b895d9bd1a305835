/* answer.c: `attn answer CELL VALUE [FILE]`, the learner's check of one
 * value (attn_check_answer): the same verdict and hint as the JS API's
 * answer() and Python's ae.answer(), for a terminal or as JSON. */
#include "answer_cli.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_BAD_INPUT = 2, EXIT_INTERNAL = 1, NAME_CAP = 64 };

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int
fail(char *error, size_t error_cap, int exit_status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(error, error_cap, format, args);
    va_end(args);
    return exit_status;
}

/* A row or column: decimal digits, at most INT_MAX. */
static int parse_index(const char *text, size_t length, int *index)
{
    long value = 0;
    if (length == 0) return -1;
    for (size_t i = 0; i < length; i++) {
        if (text[i] < '0' || text[i] > '9') return -1;
        value = value * 10 + (text[i] - '0');
        if (value > INT_MAX) return -1;
    }
    *index = (int)value;
    return 0;
}

/* "weights:0:1" as a result name, a row and a column: the last two parts
 * are the numbers, so a name may hold a colon of its own. */
static int parse_cell(const char *cell, char *name, int *row, int *col)
{
    const char *last = strrchr(cell, ':');
    const char *middle = last;
    while (middle != NULL && middle > cell && *--middle != ':') continue;
    if (last == NULL || middle == NULL || *middle != ':' || middle == cell ||
        (size_t)(middle - cell) >= NAME_CAP ||
        parse_index(middle + 1, (size_t)(last - middle - 1), row) != 0 ||
        parse_index(last + 1, strlen(last + 1), col) != 0)
        return -1;
    memcpy(name, cell, (size_t)(middle - cell));
    name[middle - cell] = '\0';
    return 0;
}

/* The verdict, and the hint when there is one, a line each. */
static char *verdict_text(const char *json, size_t *length, int *right)
{
    cJSON *root = cJSON_Parse(json);
    const cJSON *verdict = cJSON_GetObjectItemCaseSensitive(root, "verdict");
    const cJSON *hint = cJSON_GetObjectItemCaseSensitive(root, "hint");
    char *text = NULL;
    if (cJSON_IsString(verdict)) {
        const char *hint_text = cJSON_IsString(hint) ? hint->valuestring : "";
        const size_t cap = strlen(verdict->valuestring) + strlen(hint_text) + 3;
        text = malloc(cap);
        if (text != NULL)
            *length = (size_t)snprintf(text, cap, "%s\n%s%s",
                                       verdict->valuestring, hint_text,
                                       *hint_text != '\0' ? "\n" : "");
    }
    *right = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "right"));
    cJSON_Delete(root);
    return text;
}

int attn_cli_answer(attn_problem *problem, const char *cell, const char *typed,
                    int json, char **output, size_t *length, int *right,
                    char *error, size_t error_cap)
{
    char name[NAME_CAP];
    int row = 0, col = 0;
    attn_check *check = NULL;
    char *graded = NULL;
    *output = NULL;
    *right = 0;
    int exit_status = 0;
    if (parse_cell(cell, name, &row, &col) != 0) {
        exit_status = fail(error, error_cap, EXIT_BAD_INPUT,
                           "cell: expected result:row:column (from 0), as "
                           "weights:0:1, got \"%.80s\"",
                           cell);
    } else if (attn_problem_run(problem) != ATTN_OK) {
        exit_status = fail(error, error_cap, EXIT_BAD_INPUT, "%s",
                           attn_problem_error(problem));
    } else if (attn_check_create(&check, problem) != ATTN_OK) {
        exit_status = fail(error, error_cap, EXIT_INTERNAL, "out of memory");
    }
    size_t graded_length = 0;
    int status = exit_status != 0
                     ? ATTN_OK
                     : attn_check_answer(check, name, row, col, typed, NULL, 0,
                                         &graded_length);
    if (exit_status == 0 && status == ATTN_OK) {
        graded = malloc(graded_length + 1);
        status = graded == NULL
                     ? ATTN_ERR_NOMEM
                     : attn_check_answer(check, name, row, col, typed, graded,
                                         graded_length + 1, &graded_length);
    }
    if (exit_status == 0 && status != ATTN_OK)
        exit_status = fail(
            error, error_cap,
            status == ATTN_ERR_NOMEM ? EXIT_INTERNAL : EXIT_BAD_INPUT, "%s",
            *attn_check_error(check) != '\0' ? attn_check_error(check)
                                             : attn_status_text(status));
    if (exit_status == 0 && json) {
        cJSON *root = cJSON_Parse(graded);
        *right = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "right"));
        cJSON_Delete(root);
        graded[graded_length] = '\n';
        *output = graded;
        *length = graded_length + 1;
        graded = NULL;
    } else if (exit_status == 0) {
        *output = verdict_text(graded, length, right);
        if (*output == NULL)
            exit_status = fail(error, error_cap, EXIT_INTERNAL,
                               "out of memory");
    }
    free(graded);
    attn_check_destroy(check);
    attn_problem_destroy(problem);
    return exit_status != 0 ? exit_status : *right ? 0 : 1;
}
