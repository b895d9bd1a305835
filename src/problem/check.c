/* check.c: checks of problem fields, each failing with one line
 * that names the field, what it expects and what it got. */
#include "attention.h"
#include "problem/problem.h"

#include <math.h>
#include <stdio.h>

void attn__describe_value(char *out, size_t cap, const attn__value *value)
{
    attn__text text;
    attn__text_init(&text, out, cap);
    char number[ATTN__NUMBER_CAP];
    switch (value->type) {
    case ATTN__TENSOR:
        if (value->rank == 1) {
            attn__text_printf(&text, "a vector of %d", value->dims[0]);
        } else if (value->rank == 0) {
            attn__text_puts(&text, "an array");
        } else {
            for (int d = 0; d < value->rank; d++)
                attn__text_printf(&text, "%s%d", d > 0 ? "x" : "",
                                  value->dims[d]);
        }
        break;
    case ATTN__NUMBER:
        if (isfinite(value->number))
            attn__format_shortest(number, value->number);
        else
            snprintf(number, sizeof number, "%g", value->number);
        attn__text_puts(&text, number);
        break;
    case ATTN__BOOL:
        attn__text_puts(&text, value->number != 0 ? "true" : "false");
        break;
    case ATTN__STRING: attn__text_printf(&text, "\"%s\"", value->string); break;
    case ATTN__STRINGS:
        attn__text_printf(&text, "a list of %d strings", value->strings_count);
        break;
    default: attn__text_puts(&text, "nothing");
    }
}

void attn__entry_path(char *out, size_t cap, const char *field, int rank,
                      const int *dims, size_t flat)
{
    size_t index[ATTN__MAX_RANK];
    for (int d = rank - 1; d >= 0; d--) {
        index[d] = flat % (size_t)dims[d];
        flat /= (size_t)dims[d];
    }
    attn__text path;
    attn__text_init(&path, out, cap);
    attn__text_puts(&path, field);
    for (int d = 0; d < rank; d++) attn__text_printf(&path, "[%zu]", index[d]);
}

int attn__fail_missing(const attn_problem *problem, const char *field)
{
    const attn__field *spec = attn__field_spec(problem, field);
    return attn__fail(problem, ATTN_ERR_INPUT, "%s: missing (%s)", field,
                      spec != NULL ? spec->expected : "required");
}

/* " (why)" or nothing. */
static void append_why(attn__text *text, const char *why)
{
    if (why != NULL) attn__text_printf(text, " (%s)", why);
}

static void append_count(attn__text *text, int count, const char *noun,
                         const char *why)
{
    attn__text_printf(text, "%d %s%s", count, noun, count == 1 ? "" : "s");
    append_why(text, why);
}

int attn__fail_expected(const attn_problem *problem, const char *field,
                        const char *expected, const attn__value *value)
{
    char got[ATTN__ERROR_CAP / 4];
    attn__describe_value(got, sizeof got, value);
    return attn__fail(problem, ATTN_ERR_INPUT, "%s: expected %s, got %s", field,
                      expected, got);
}

int attn__check_matrix(const attn_problem *problem, const char *field,
                       const attn__value *value, int batch, attn__dim rows,
                       attn__dim cols)
{
    const int rank = batch > 0 ? 3 : 2;
    const int *dims = value->dims + (rank - 2); /* rows, columns */
    if (value->rank == rank && (batch == 0 || value->dims[0] == batch) &&
        (rows.size == 0 || dims[0] == rows.size) &&
        (cols.size == 0 || dims[1] == cols.size))
        return ATTN_OK;

    char expected[ATTN__ERROR_CAP / 2];
    attn__text text;
    attn__text_init(&text, expected, sizeof expected);
    if (batch > 0)
        attn__text_printf(&text, "a batch of %d matri%s", batch,
                          batch == 1 ? "x" : "ces");
    else
        attn__text_puts(&text, "a matrix");
    if (rows.size > 0) {
        attn__text_puts(&text, " with ");
        append_count(&text, rows.size, "row", rows.why);
    }
    if (cols.size > 0) {
        attn__text_puts(&text, rows.size > 0 ? " and " : " with ");
        append_count(&text, cols.size, "column", cols.why);
    }
    return attn__fail_expected(problem, field, expected, value);
}

int attn__check_vector(const attn_problem *problem, const char *field,
                       const attn__value *value, attn__dim length)
{
    if (value->rank == 1 && (length.size == 0 || value->dims[0] == length.size))
        return ATTN_OK;
    char expected[ATTN__ERROR_CAP / 2];
    attn__text text;
    attn__text_init(&text, expected, sizeof expected);
    attn__text_puts(&text, "a vector");
    if (length.size > 0) {
        attn__text_printf(&text, " of %d", length.size);
        append_why(&text, length.why);
    }
    return attn__fail_expected(problem, field, expected, value);
}

int attn__check_integer(const attn_problem *problem, const char *field,
                        const attn__value *value, double min, double max,
                        const char *expected, double *out)
{
    const double x = value->number;
    if (value->type != ATTN__NUMBER || x != floor(x) || x < min || x > max)
        return attn__fail_expected(problem, field, expected, value);
    *out = x;
    return ATTN_OK;
}

int attn__check_labels(const attn_problem *problem, const char *field,
                       const attn__value *value, int n, const char *why)
{
    if (value->strings_count == n) return ATTN_OK;
    return attn__fail(problem, ATTN_ERR_INPUT,
                      "%s: expected %d label%s (%s), got %d", field, n,
                      n == 1 ? "" : "s", why, value->strings_count);
}

static attn__labels labels_of(const attn__value *value, const char *prefix)
{
    attn__labels labels = {NULL, prefix};
    if (value != NULL) labels.names = (const char *const *)value->strings;
    return labels;
}

int attn__check_tokens(attn_problem *problem, int n_q, int n_k,
                       int tokens_label_queries)
{
    const attn__value *tokens = attn__field_value(problem, "tokens");
    const attn__value *query_tokens = attn__field_value(problem, "queryTokens");
    const attn__value *key_tokens = attn__field_value(problem, "keyTokens");
    attn__run_info *info = &problem->info;
    info->queries = labels_of(NULL, "q");
    info->keys = labels_of(NULL, "k");
    if (tokens != NULL && (query_tokens != NULL || key_tokens != NULL))
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "tokens: give either tokens or queryTokens and "
                          "keyTokens, not both");
    int status = ATTN_OK;
    if (tokens != NULL && !tokens_label_queries) {
        status = attn__check_labels(problem, "tokens", tokens, n_k, "n_k");
        info->keys = labels_of(tokens, "k");
    } else if (tokens != NULL) {
        if (n_q != n_k)
            return attn__fail(problem, ATTN_ERR_INPUT,
                              "tokens: label both queries and keys, but n_q "
                              "%d differs from n_k %d; use queryTokens and "
                              "keyTokens",
                              n_q, n_k);
        status = attn__check_labels(problem, "tokens", tokens, n_q,
                                    "n_q = n_k");
        info->queries = labels_of(tokens, "q");
        info->keys = labels_of(tokens, "k");
    }
    if (status == ATTN_OK && query_tokens != NULL) {
        status = attn__check_labels(problem, "queryTokens", query_tokens, n_q,
                                    "n_q");
        info->queries = labels_of(query_tokens, "q");
    }
    if (status == ATTN_OK && key_tokens != NULL) {
        status = attn__check_labels(problem, "keyTokens", key_tokens, n_k,
                                    "n_k");
        info->keys = labels_of(key_tokens, "k");
    }
    return status;
}

attn__shape attn__shape_of(const attn__value *value)
{
    attn__shape shape = {1, 0, 0, 1, 1};
    switch (value->rank) {
    case 1:
        shape.vector = 1;
        shape.cols = value->dims[0];
        break;
    case 2:
        shape.rows = value->dims[0];
        shape.cols = value->dims[1];
        break;
    default:
        shape.batched = 1;
        shape.batch = value->dims[0];
        shape.rows = value->dims[1];
        shape.cols = value->dims[2];
    }
    return shape;
}

void attn__result_dims(const attn__run_info *info, int query_axis,
                       const int *inner, int inner_rank, int *rank,
                       int dims[ATTN__MAX_RANK])
{
    *rank = 0;
    if (info->batched) dims[(*rank)++] = info->batch;
    if (query_axis && !info->vector_query) dims[(*rank)++] = info->n_q;
    for (int d = 0; d < inner_rank; d++) dims[(*rank)++] = inner[d];
}

int attn__copy_booleans(const attn_problem *problem, const char *field,
                        const attn__value *value, unsigned char *out)
{
    for (size_t i = 0; i < value->count; i++) {
        if (value->data[i] != 0.0 && value->data[i] != 1.0) {
            char path[96], number[ATTN__NUMBER_CAP];
            attn__entry_path(path, sizeof path, field, value->rank, value->dims,
                             i);
            attn__format_shortest(number, value->data[i]);
            return attn__fail(problem, ATTN_ERR_INPUT,
                              "%s: expected 0 or 1 (false or true), got %s",
                              path, number);
        }
        out[i] = value->data[i] != 0.0;
    }
    return ATTN_OK;
}

const double *attn__data_of(const attn_problem *problem, const char *field)
{
    const attn__value *value = attn__field_value(problem, field);
    return value != NULL ? value->data : NULL;
}

int attn__fail_nomem(const attn_problem *problem)
{
    if (problem->over_limit == SIZE_MAX)
        return attn__fail(problem, ATTN_ERR_TOO_LARGE,
                          "%s: the results or scratch space would need more "
                          "bytes than size_t can count; use smaller inputs",
                          problem->kind->name);
    if (problem->over_limit > 0)
        return attn__fail(
            problem, ATTN_ERR_TOO_LARGE,
            "%s: its results and scratch space would make the problem hold %zu "
            "bytes, more than its limit of %zu bytes; use "
            "smaller inputs or raise the limit (%s)",
            problem->kind->name, problem->over_limit, problem->max_bytes,
            problem->limit_option);
    return attn__fail(problem, ATTN_ERR_NOMEM, "%s: out of memory",
                      problem->kind->name);
}

void attn__take_query_shape(attn_problem *problem, const attn__value *value)
{
    const attn__shape shape = attn__shape_of(value);
    attn__run_info *info = &problem->info;
    info->batch = shape.batch;
    info->batched = shape.batched;
    info->vector_query = shape.vector;
    info->n_q = shape.rows;
}

double *attn__add_query_result(attn_problem *problem, const char *name,
                               int inner_rank, int inner0, int inner1)
{
    const int inner[2] = {inner0, inner1};
    int rank, dims[ATTN__MAX_RANK];
    attn__result_dims(&problem->info, 1, inner, inner_rank, &rank, dims);
    return attn__add_result(problem, name, 0, rank, dims);
}
