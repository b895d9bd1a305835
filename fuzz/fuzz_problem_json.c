/*
 * fuzz_problem_json.c: libFuzzer target for the text path the CLI takes:
 * bytes -> attn_json_parse -> attn_problem_from_json_limited -> run ->
 * attn_problem_format in every format, into a buffer of the full length
 * and into truncated ones; with "printed" numbers, `attn check`'s path too:
 * attn_check_printed_from_json -> attn_check_run -> attn_check_format in
 * every format, likewise. Uses the public API only (and the JSON adapter
 * of src/cli/), so it keeps working whatever the walkthrough looks like.
 *
 * Checked beyond "no crash, no sanitizer report": a failed step leaves a
 * message; format reports the same length whatever the buffer, and writes
 * exactly min(cap - 1, length) bytes then a NUL.
 */
#include "attention.h"
#include "problem_json.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Small, so that a run and its walkthroughs stay fast. */
enum { MAX_BYTES = 16 * 1024, ERROR_CAP = 512 };

static void check(int condition)
{
    if (!condition) abort();
}

/* attn_problem_format or attn_check_format, on its object. */
typedef int (*formatter)(void *object, int format, char *buf, size_t cap,
                         size_t *length);

static int format_problem(void *object, int format, char *buf, size_t cap,
                          size_t *length)
{
    return attn_problem_format(object, format, buf, cap, length);
}

static int format_check(void *object, int format, char *buf, size_t cap,
                        size_t *length)
{
    return attn_check_format(object, format, buf, cap, length);
}

/* Formats into a buffer of the full length and into truncated ones: the
 * same length reported each time, exactly min(cap - 1, length) bytes and
 * a NUL written. 0 when the format fails (its error then said). */
static int format_everywhere(formatter run, void *object, int format)
{
    size_t length = 0;
    if (run(object, format, NULL, 0, &length) != ATTN_OK) return 0;
    char *full = malloc(length + 1);
    check(full != NULL);
    size_t again = 0;
    check(run(object, format, full, length + 1, &again) == ATTN_OK);
    check(again == length && full[length] == '\0' && strlen(full) == length);
    /* Truncated: one byte, half, all but the last byte. */
    const size_t caps[] = {1, length / 2 + 1, length};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        const size_t cap = caps[i];
        if (cap == 0) continue;
        char *cut = malloc(cap);
        check(cut != NULL);
        size_t cut_length = 0;
        check(run(object, format, cut, cap, &cut_length) == ATTN_OK);
        check(cut_length == length);
        check(cut[cap - 1] == '\0' && memcmp(cut, full, cap - 1) == 0);
        free(cut);
    }
    free(full);
    return 1;
}

/* The printed numbers against the run problem, as `attn check` does. */
static void check_printed(const attn_problem *problem, const cJSON *printed,
                          const cJSON *decimals, const uint8_t *data,
                          size_t size)
{
    attn_check *checker = NULL;
    check(attn_check_create(&checker, problem) == ATTN_OK);
    char error[ERROR_CAP];
    int status = attn_check_printed_from_json(checker, printed, decimals,
                                              (const char *)data, size, NULL,
                                              error, sizeof error);
    if (status != ATTN_OK) {
        check(error[0] != '\0');
    } else if (attn_check_run(checker, NULL) != ATTN_OK) {
        check(attn_check_error(checker)[0] != '\0');
    } else {
        for (int format = ATTN_FORMAT_JSON; format <= ATTN_FORMAT_LATEX;
             format++)
            check(format_everywhere(format_check, checker, format));
    }
    attn_check_destroy(checker);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char error[ERROR_CAP];
    cJSON *root = NULL;
    int status = attn_json_parse(&root, (const char *)data, size, error,
                                 sizeof error);
    if (status != ATTN_OK) {
        check(root == NULL && error[0] != '\0');
        return 0;
    }
    /* Held apart from the problem, as build/attn check holds them. */
    cJSON *printed = NULL, *decimals = NULL;
    if (cJSON_IsObject(root)) {
        printed = cJSON_DetachItemFromObjectCaseSensitive(root, "printed");
        decimals = cJSON_DetachItemFromObjectCaseSensitive(root,
                                                           "printedDecimals");
    }
    attn_problem *problem = NULL;
    status = attn_problem_from_json_limited(&problem, root, NULL, MAX_BYTES,
                                            error, sizeof error);
    cJSON_Delete(root);
    if (status != ATTN_OK) {
        check(problem == NULL && error[0] != '\0');
        cJSON_Delete(printed);
        cJSON_Delete(decimals);
        return 0;
    }
    status = attn_problem_run(problem);
    if (status != ATTN_OK) {
        check(attn_problem_error(problem)[0] != '\0');
        size_t length;
        check(attn_problem_format(problem, ATTN_FORMAT_JSON, NULL, 0,
                                  &length) == ATTN_ERR_STATE);
    } else {
        for (int format = ATTN_FORMAT_JSON; format <= ATTN_FORMAT_LATEX;
             format++)
            if (!format_everywhere(format_problem, problem, format))
                check(attn_problem_error(problem)[0] != '\0');
        size_t length;
        check(attn_problem_format(problem, 99, NULL, 0, &length) != ATTN_OK);
        if (printed != NULL)
            check_printed(problem, printed, decimals, data, size);
    }
    cJSON_Delete(printed);
    cJSON_Delete(decimals);
    attn_problem_destroy(problem);
    return 0;
}
