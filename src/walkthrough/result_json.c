/* result_json.c: a run's results as one JSON object with the JS API's
 * field names. Compact (no spaces); numbers are the shortest text that
 * reads back as the same double; -INFINITY (a masked entry) is null. */
#include "attention.h"
#include "walkthrough/walkthrough.h"

#include <math.h>

static void write_number(attn__text *text, double x)
{
    if (!isfinite(x)) { /* only masked -INFINITY reaches here */
        attn__text_puts(text, "null");
        return;
    }
    char number[ATTN__NUMBER_CAP];
    attn__format_shortest(number, x);
    attn__text_puts(text, number);
}

/* Nested arrays for dims[0..rank) of data; returns the doubles written. */
static size_t write_array(attn__text *text, const double *data, int rank,
                          const int *dims)
{
    if (rank == 0) {
        write_number(text, data[0]);
        return 1;
    }
    size_t used = 0;
    attn__text_puts(text, "[");
    for (int i = 0; i < dims[0]; i++) {
        if (i > 0) attn__text_puts(text, ",");
        used += write_array(text, data + used, rank - 1, dims + 1);
    }
    attn__text_puts(text, "]");
    return used;
}

static void write_member(attn__text *text, int *first, const char *name,
                         const double *data, int rank, const int *dims)
{
    attn__text_printf(text, "%s\"%s\":", *first ? "" : ",", name);
    *first = 0;
    write_array(text, data, rank, dims);
}

/* "heads":[{...},...] from every per-head result, in result order. */
static void write_heads(attn__text *text, const attn_problem *problem,
                        int heads)
{
    attn__text_puts(text, "\"heads\":[");
    for (int h = 0; h < heads; h++) {
        attn__text_puts(text, h > 0 ? ",{" : "{");
        int first = 1;
        for (int i = 0; i < problem->result_count; i++) {
            const attn__result *result = &problem->results[i];
            if (result->heads > 0)
                write_member(text, &first, result->name,
                             result->data + (size_t)h * result->count,
                             result->rank, result->dims);
        }
        attn__text_puts(text, "}");
    }
    attn__text_puts(text, "]");
}

void attn__format_json(const attn_problem *problem, attn__text *text)
{
    attn__text_puts(text, "{");
    int first = 1, heads_written = 0;
    for (int i = 0; i < problem->result_count; i++) {
        const attn__result *result = &problem->results[i];
        if (result->heads == 0) {
            write_member(text, &first, result->name, result->data, result->rank,
                         result->dims);
        } else if (!heads_written) {
            attn__text_puts(text, first ? "" : ",");
            first = 0;
            write_heads(text, problem, result->heads);
            heads_written = 1;
        }
    }
    attn__text_puts(text, "}");
}
