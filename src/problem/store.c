/* store.c: what a problem holds, for every file of the problem layer and
 * the layers above: its memory (the allocator, the byte limit), its error
 * message, its fields' values and its results. Below the kinds, their
 * checks and runs (problem.c, check.c, run_*.c), which all use it. */
#include "attention.h"
#include "problem/problem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Memory ---- */

static void *default_allocate(void *context, size_t bytes)
{
    (void)context;
    return malloc(bytes);
}

static void default_release(void *context, void *block)
{
    (void)context;
    free(block);
}

const attn_allocator *
attn__allocator_or_default(const attn_allocator *allocator)
{
    static const attn_allocator defaults = {default_allocate, default_release,
                                            NULL};
    if (allocator == NULL) return &defaults;
    return allocator->allocate != NULL && allocator->release != NULL ? allocator
                                                                     : NULL;
}

void *attn__allocate(attn_problem *problem, size_t bytes)
{
    return problem->allocator.allocate(problem->allocator.context,
                                       bytes > 0 ? bytes : 1);
}

void attn__release(attn_problem *problem, void *block)
{
    if (block != NULL)
        problem->allocator.release(problem->allocator.context, block);
}

/* ---- Errors ---- */

int attn__fail(const attn_problem *problem, int status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(problem->error, ATTN__ERROR_CAP, format, args);
    va_end(args);
    return status;
}

void attn__clear_error(const attn_problem *problem)
{
    problem->error[0] = '\0';
}

int attn__fail_core(const attn_problem *problem, int status, const char *what)
{
    if (status == ATTN_ERR_OVERFLOW_VALUE)
        return attn__fail(problem, status,
                          "%s overflowed: a value exceeded the double range; "
                          "use smaller inputs",
                          what);
    return attn__fail(problem, status, "%s: %s", what,
                      attn_status_text(status));
}

/* ---- Limits ---- */

/* Each addend is the size of a block that exists, so the sum fits. */
size_t attn__held_bytes(const attn_problem *problem)
{
    size_t held = 0;
    for (int i = 0; i < problem->kind->field_count; i++)
        if (problem->values[i].data != NULL)
            held += problem->values[i].count * sizeof(double);
    for (int i = 0; i < problem->result_count; i++) {
        const attn__result *result = &problem->results[i];
        held += result->count * sizeof(double) *
                (result->heads > 0 ? (size_t)result->heads : 1);
    }
    return held;
}

int attn__within_limit(const attn_problem *problem, size_t bytes,
                       size_t replaced, size_t *total)
{
    const size_t kept = attn__held_bytes(problem) - replaced;
    *total = bytes > SIZE_MAX - kept ? SIZE_MAX : kept + bytes;
    return *total <= problem->max_bytes ? ATTN_OK : ATTN_ERR_TOO_LARGE;
}

double *attn__allocate_doubles(attn_problem *problem, size_t count)
{
    size_t total = SIZE_MAX;
    if (count == 0 || count > SIZE_MAX / sizeof(double) ||
        attn__within_limit(problem, count * sizeof(double), 0, &total) !=
            ATTN_OK) {
        if (problem->over_limit == 0) problem->over_limit = total;
        return NULL;
    }
    return attn__allocate(problem, count * sizeof(double));
}

/* ---- Fields ---- */

static int field_index(const attn_problem *problem, const char *name)
{
    for (int i = 0; i < problem->kind->field_count; i++)
        if (strcmp(problem->kind->fields[i].name, name) == 0) return i;
    return -1;
}

const attn__field *attn__field_spec(const attn_problem *problem,
                                    const char *name)
{
    const int index = field_index(problem, name);
    return index >= 0 ? &problem->kind->fields[index] : NULL;
}

const attn__value *attn__field_value(const attn_problem *problem,
                                     const char *name)
{
    const int index = field_index(problem, name);
    if (index < 0 || problem->values[index].type == 0) return NULL;
    return &problem->values[index];
}

/* ---- Results ---- */

double *attn__add_result(attn_problem *problem, const char *name, int heads,
                         int rank, const int *dims)
{
    if (problem->result_count == ATTN__MAX_RESULTS) return NULL;
    attn__result *result = &problem->results[problem->result_count];
    memset(result, 0, sizeof *result);
    size_t count = 1;
    for (int d = 0; d < rank; d++) {
        result->dims[d] = dims[d];
        count *= (size_t)dims[d]; /* bounded by the inputs' checked sizes */
    }
    const size_t blocks = heads > 0 ? (size_t)heads : 1;
    size_t total = SIZE_MAX;
    if (count > SIZE_MAX / sizeof(double) / blocks ||
        attn__within_limit(problem, count * blocks * sizeof(double), 0,
                           &total) != ATTN_OK) {
        /* Remembered for attn__fail_nomem: the first refusal only. */
        if (problem->over_limit == 0) problem->over_limit = total;
        return NULL;
    }
    result->data = attn__allocate(problem, count * blocks * sizeof(double));
    if (result->data == NULL) return NULL;
    memset(result->data, 0, count * blocks * sizeof(double));
    result->name = name;
    result->heads = heads;
    result->rank = rank;
    result->count = count;
    problem->result_count++;
    return result->data;
}

const attn__result *attn__find_result(const attn_problem *problem,
                                      const char *name, int per_head)
{
    for (int i = 0; i < problem->result_count; i++) {
        const attn__result *result = &problem->results[i];
        if ((result->heads > 0) == (per_head != 0) &&
            strcmp(result->name, name) == 0)
            return result;
    }
    return NULL;
}
