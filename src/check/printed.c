/* printed.c: the check object and the printed numbers it holds:
 * attn_check_create, _destroy, _error and _set_printed (each printed key
 * resolved to the tensor cells it restates), and what check.c,
 * arithmetic.c and slips.c share below them: the error message, the
 * allocator and a printed cell's walker ref. */
#include "attention.h"
#include "check/check.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int attn__check_fail(attn_check *check, int status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(check->error, sizeof check->error, format, args);
    va_end(args);
    return status;
}

void *attn__check_alloc(attn_check *check, size_t bytes)
{
    return check->allocator->allocate(check->allocator->context,
                                      bytes > 0 ? bytes : 1);
}

void attn__check_free(attn_check *check, void *block)
{
    if (block != NULL)
        check->allocator->release(check->allocator->context, block);
}

int attn_check_create(attn_check **check, const attn_problem *problem)
{
    if (check == NULL) return ATTN_ERR_NULL;
    *check = NULL;
    if (problem == NULL) return ATTN_ERR_NULL;
    const attn_allocator *allocator = &problem->allocator;
    attn_check *made = allocator->allocate(allocator->context, sizeof *made);
    if (made == NULL) return ATTN_ERR_NOMEM;
    memset(made, 0, sizeof *made);
    made->problem = problem;
    made->allocator = allocator;
    *check = made;
    return ATTN_OK;
}

void attn__check_clear(attn_check *check)
{
    attn__check_free(check, check->errata);
    attn__check_free(check, check->groups);
    check->errata = NULL;
    check->groups = NULL;
    check->errata_count = check->errata_cap = check->group_count = 0;
    check->has_run = 0;
}

void attn_check_destroy(attn_check *check)
{
    if (check == NULL) return;
    attn__check_clear(check);
    for (int t = 0; t < check->table_count; t++) {
        attn__printed *table = &check->tables[t];
        attn__check_free(check, table->values);
        attn__check_free(check, table->decimals);
        attn__check_free(check, table->exact);
        attn__check_free(check, table->own);
        attn__check_free(check, table->step);
    }
    check->allocator->release(check->allocator->context, check);
}

const char *attn_check_error(const attn_check *check)
{
    return check != NULL ? check->error : "";
}

int attn__check_results_unchanged(attn_check *check)
{
    const attn_problem *problem = check->problem;
    if (!problem->has_run)
        return attn__check_fail(check, ATTN_ERR_STATE,
                                "check: the problem has no results yet; "
                                "attn_problem_run must succeed first");
    if (check->problem_run == 0) check->problem_run = problem->run_count;
    if (problem->run_count != check->problem_run)
        return attn__check_fail(
            check, ATTN_ERR_STATE,
            "check: the problem has run again since this check read its "
            "results, and the printed numbers were matched to those; create "
            "a new check for the new results");
    return ATTN_OK;
}

/* ---- Printed keys ---- */

/* Drops leading 1s: a row printed as [[a, b]] is the vector [a, b]. */
static int squeeze(int rank, const int *dims, int *out)
{
    int first = 0;
    while (first < rank && dims[first] == 1) first++;
    for (int d = first; d < rank; d++) out[d - first] = dims[d];
    return rank - first;
}

static int result_shape(const attn_problem *problem, const char *name,
                        int *rank, int dims[4])
{
    const double *data;
    int result_dims[3] = {0, 0, 0};
    if (attn_problem_result(problem, name, rank, result_dims, &data) != ATTN_OK)
        return 0;
    for (int d = 0; d < 3; d++) dims[d] = result_dims[d];
    return 1;
}

/* A printed key's parts: its "heads.<h>." (or ""), its name without
 * "_row<i>", and that row: -1 without one, ATTN__BAD_ROW when "_row" is
 * not followed by a row number alone. */
#define ATTN__BAD_ROW (-2)
typedef struct {
    char prefix[ATTN__KEY_CAP];
    char name[ATTN__KEY_CAP];
    int row;
} key_parts;

static key_parts split_key(const char *key)
{
    key_parts parts = {.prefix = "", .row = -1};
    int head = 0, used = 0;
    if (sscanf(key, "heads.%d.%n", &head, &used) == 1 && used > 0)
        snprintf(parts.prefix, sizeof parts.prefix, "heads.%d.", head);
    else
        used = 0;
    snprintf(parts.name, sizeof parts.name, "%s", key + used);
    char *suffix = strstr(parts.name, "_row");
    if (suffix != NULL) {
        char *end;
        const long row = strtol(suffix + 4, &end, 10);
        const int number = end != suffix + 4 && *end == '\0' && row >= 0 &&
                           row <= INT_MAX;
        parts.row = number ? (int)row : ATTN__BAD_ROW;
        *suffix = '\0';
    }
    return parts;
}

/* Resolves table->key into base, transform, row and the base's shape; 0
 * when the key names nothing the engine computes. */
static int resolve(const attn_check *check, attn__printed *table)
{
    const attn_problem *problem = check->problem;
    const key_parts parts = split_key(table->key);
    table->row = -1;
    if (parts.row == ATTN__BAD_ROW) return 0;
    table->row = parts.row;
    const char *prefix = parts.prefix, *plain = parts.name;
    char full[2 * ATTN__KEY_CAP];
    snprintf(full, sizeof full, "%s%s", prefix, plain);
    table->transform = ATTN__AS_IS;
    if (result_shape(problem, full, &table->base_rank, table->base_dims)) {
        snprintf(table->base, sizeof table->base, "%s", full);
        return 1;
    }
    char scaled[2 * ATTN__KEY_CAP];
    snprintf(scaled, sizeof scaled, "%sscaled", prefix);
    if (strcmp(plain, "weightsPercent") == 0) {
        snprintf(full, sizeof full, "%sweights", prefix);
        if (!result_shape(problem, full, &table->base_rank, table->base_dims))
            return 0;
        snprintf(table->base, sizeof table->base, "%s", full);
        table->transform = ATTN__PERCENT;
        return 1;
    }
    if (strcmp(plain, "exp") == 0 || strcmp(plain, "sum") == 0) {
        if (!result_shape(problem, scaled, &table->base_rank, table->base_dims))
            return 0;
        snprintf(table->base, sizeof table->base, "%s", scaled);
        table->transform = plain[0] == 'e' ? ATTN__EXP : ATTN__SUM;
        return 1;
    }
    if (strcmp(plain, "terms") == 0) {
        /* terms[.., i, j, c] = weights[.., i, j] × v[j, c]: the output's
         * shape with the keys before its last axis. */
        int rank, dims[4];
        snprintf(full, sizeof full, "%soutput", prefix);
        if (!result_shape(problem, full, &rank, dims) || rank < 1 || rank > 3)
            return 0;
        table->base_rank = rank + 1;
        for (int d = 0; d < rank - 1; d++) table->base_dims[d] = dims[d];
        table->base_dims[rank - 1] = problem->info.n_k;
        table->base_dims[rank] = dims[rank - 1];
        snprintf(table->base, sizeof table->base, "%sterms", prefix);
        return 1;
    }
    return 0;
}

/* Edit distance of a and b (insertions, deletions, substitutions), capped:
 * anything above 2 counts as 3. Letters compared without case. */
static int near_distance(const char *a, const char *b)
{
    const size_t n = strlen(b);
    if (n >= ATTN__KEY_CAP) return 3;
    int row[ATTN__KEY_CAP];
    for (size_t j = 0; j <= n; j++) row[j] = (int)j;
    for (size_t i = 1; a[i - 1] != '\0'; i++) {
        int diagonal = row[0], smallest = row[0] = (int)i;
        for (size_t j = 1; j <= n; j++) {
            const int above = row[j];
            const int same = tolower((unsigned char)a[i - 1]) ==
                             tolower((unsigned char)b[j - 1]);
            int best = diagonal + !same;
            if (above + 1 < best) best = above + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diagonal = above;
            if (best < smallest) smallest = best;
        }
        if (smallest > 2) return 3;
    }
    return row[n] > 2 ? 3 : row[n];
}

/* The printed name this problem has that `name` (a key without its
 * "heads.<h>." and "_row<i>") is a slip of the keyboard from: the same
 * letters in another case, or within two edits of a name of at least five
 * letters; NULL when it is no such slip (a note of the tutorial's own, as
 * "sqrt_dk", which is listed as not checked). */
static const char *near_name(const attn_check *check, const char *prefix,
                             const char *name)
{
    static const char *const names[] = {
        "scores",         "scaled", "weights", "output",
        "weightsPercent", "terms",  "exp",     "sum"};
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        const int distance = near_distance(name, names[n]);
        if (distance == 3 || (distance > 0 && strlen(names[n]) < 5)) continue;
        attn__printed probe;
        memset(&probe, 0, sizeof probe);
        snprintf(probe.key, sizeof probe.key, "%s%s", prefix, names[n]);
        if (resolve(check, &probe)) return names[n];
    }
    return NULL;
}

/* The shape a table's printed numbers must have: the base's, less the row
 * axis for `_row<i>`, less the last axis for a sum. */
static int expected_shape(const attn__printed *table, int dims[4])
{
    int rank = 0;
    for (int d = table->row >= 0 ? 1 : 0; d < table->base_rank; d++)
        dims[rank++] = table->base_dims[d];
    if (table->transform == ATTN__SUM) rank--;
    return rank;
}

static void describe_shape(char *out, size_t cap, int rank, const int *dims)
{
    if (rank == 0) {
        snprintf(out, cap, "one number");
        return;
    }
    size_t used = 0;
    for (int d = 0; d < rank && used < cap; d++)
        used += (size_t)snprintf(out + used, cap - used, "%s%d",
                                 d > 0 ? "x" : "", dims[d]);
}

int attn_check_set_note(attn_check *check, const char *key)
{
    if (check == NULL) return ATTN_ERR_NULL;
    check->error[0] = '\0';
    if (key == NULL)
        return attn__check_fail(check, ATTN_ERR_NULL,
                                "printed: key must not be NULL");
    const int unchanged = attn__check_results_unchanged(check);
    if (unchanged != ATTN_OK) return unchanged;
    attn__printed probe;
    memset(&probe, 0, sizeof probe);
    if (strlen(key) >= sizeof probe.key) return ATTN_OK; /* names nothing */
    snprintf(probe.key, sizeof probe.key, "%s", key);
    if (!resolve(check, &probe)) return ATTN_OK;
    return attn__check_fail(check, ATTN_ERR_INPUT,
                            "printed.%s: expected the numbers of %s (a number "
                            "or a table of them), got text",
                            key, probe.base);
}

/* Decimals a number was written with, read back from its shortest form. */
static int decimals_of(double value)
{
    /* From 2^53 on every double is a whole number (and "%.0f" of 1e300
     * would not fit the buffer). */
    if (!isfinite(value) || fabs(value) >= 0x1p53) return 0;
    char text[64];
    for (int d = 0; d < ATTN__MAX_DECIMALS; d++) {
        snprintf(text, sizeof text, "%.*f", d, value);
        if (strtod(text, NULL) == value) return d;
    }
    return ATTN__MAX_DECIMALS;
}

/* The decimals of a table's numbers given without any: the most that any
 * of them shows. A table is printed to one precision, and a number read as
 * a double has lost its trailing zeros (0.410 arrives as 0.41), never
 * gained digits; read one by one, 0.410 would pass for an exact 0.4137.
 * -1 when every number came with its decimals. */
static int inferred_decimals(const double *values, const int *decimals,
                             size_t count)
{
    int most = -1;
    for (size_t i = 0; i < count; i++) {
        if ((decimals != NULL && decimals[i] >= 0) || isnan(values[i]))
            continue;
        const int shown = decimals_of(values[i]);
        if (shown > most) most = shown;
    }
    return most;
}

int attn_check_set_printed(attn_check *check, const char *key, int rank,
                           const int *dims, const double *values,
                           const int *decimals)
{
    if (check == NULL) return ATTN_ERR_NULL;
    check->error[0] = '\0';
    if (key == NULL || (rank > 0 && (dims == NULL || values == NULL)) ||
        (rank == 0 && values == NULL))
        return attn__check_fail(check, ATTN_ERR_NULL,
                                "printed: key, dims and values must not be "
                                "NULL");
    const int unchanged = attn__check_results_unchanged(check);
    if (unchanged != ATTN_OK) return unchanged;
    if (rank < 0 || rank > ATTN__MAX_RANK + 1)
        return attn__check_fail(check, ATTN_ERR_INPUT,
                                "printed.%s: expected a number or a table of "
                                "rank 1 to 4, got rank %d",
                                key, rank);
    if (strlen(key) >= ATTN__KEY_CAP)
        return attn__check_fail(check, ATTN_ERR_INPUT,
                                "printed: a key of at most %d bytes, got %zu",
                                ATTN__KEY_CAP - 1, strlen(key));
    for (int t = 0; t < check->table_count; t++)
        if (strcmp(check->tables[t].key, key) == 0)
            return attn__check_fail(check, ATTN_ERR_INPUT,
                                    "printed.%s: given twice", key);
    if (check->table_count + check->unchecked_count == ATTN__CHECK_TABLES)
        return attn__check_fail(check, ATTN_ERR_INPUT,
                                "printed: at most %d keys", ATTN__CHECK_TABLES);
    attn__check_clear(check);
    attn__printed *table = &check->tables[check->table_count];
    memset(table, 0, sizeof *table);
    snprintf(table->key, sizeof table->key, "%s", key);
    if (!resolve(check, table)) {
        const key_parts parts = split_key(key);
        const char *meant = near_name(check, parts.prefix, parts.name);
        if (meant != NULL && strcmp(meant, parts.name) == 0)
            return attn__check_fail(check, ATTN_ERR_INPUT,
                                    "printed.%s: a row is a number after "
                                    "\"_row\", as \"%s%s_row0\"",
                                    key, parts.prefix, parts.name);
        if (meant != NULL)
            return attn__check_fail(check, ATTN_ERR_INPUT,
                                    "printed.%s: this problem has no result "
                                    "named \"%s\"; did you mean \"%s\"?",
                                    key, parts.name, meant);
        snprintf(check->unchecked[check->unchecked_count++], ATTN__KEY_CAP,
                 "%s", key);
        return ATTN_OK;
    }
    if (table->row >= 0 &&
        (check->problem->info.batched || table->base_rank < 1 ||
         table->row >= table->base_dims[0]))
        return attn__check_fail(
            check, ATTN_ERR_INPUT,
            "printed.%s: %s has no row %d (rows count from 0%s)", key,
            table->base, table->row,
            check->problem->info.batched ? "; a batched problem's tables are "
                                           "printed whole"
                                         : "");
    int want[4], want_rank = expected_shape(table, want);
    int got[4], got_rank = squeeze(rank, dims, got);
    int squeezed[4], squeezed_rank = squeeze(want_rank, want, squeezed);
    int same = got_rank == squeezed_rank;
    for (int d = 0; same && d < got_rank; d++) same = got[d] == squeezed[d];
    if (!same) {
        char expected[64], given[64];
        describe_shape(expected, sizeof expected, want_rank, want);
        describe_shape(given, sizeof given, rank, dims);
        return attn__check_fail(check, ATTN_ERR_INPUT,
                                "printed.%s: expected %s (as %s), got %s", key,
                                expected, table->base, given);
    }
    size_t count = 1;
    for (int d = 0; d < want_rank; d++) count *= (size_t)want[d];
    for (size_t i = 0; decimals != NULL && i < count; i++)
        if (decimals[i] > ATTN__MAX_DECIMALS)
            return attn__check_fail(check, ATTN_ERR_INPUT,
                                    "printedDecimals.%s: at most %d decimals, "
                                    "got %d",
                                    key, ATTN__MAX_DECIMALS, decimals[i]);
    table->rank = want_rank;
    memcpy(table->dims, want, sizeof want);
    table->count = count;
    table->values = attn__check_alloc(check, count * sizeof *table->values);
    table->decimals = attn__check_alloc(check, count * sizeof *table->decimals);
    table->exact = attn__check_alloc(check, count * sizeof *table->exact);
    table->own = attn__check_alloc(check, count * sizeof *table->own);
    table->step = attn__check_alloc(check, count * sizeof *table->step);
    check->table_count++; /* destroy frees what was allocated */
    if (!table->values || !table->decimals || !table->exact || !table->own ||
        !table->step)
        return attn__check_fail(check, ATTN_ERR_NOMEM,
                                "printed: out of memory");
    table->inferred = inferred_decimals(values, decimals, count);
    for (size_t i = 0; i < count; i++) {
        table->values[i] = values[i];
        const int given = decimals != NULL ? decimals[i] : -1;
        /* (a table of nothing but NaN, nothing printed, infers none) */
        table->decimals[i] = given >= 0             ? given
                             : table->inferred >= 0 ? table->inferred
                                                    : 0;
    }
    return ATTN_OK;
}

/* ---- Cells ---- */

attn__ref attn__cell_ref(const attn__printed *table, size_t cell)
{
    attn__ref ref = {table->base, 0, {0, 0, 0, 0}};
    int index[4];
    size_t rest = cell;
    for (int d = table->rank - 1; d >= 0; d--) {
        index[d] = (int)(rest % (size_t)table->dims[d]);
        rest /= (size_t)table->dims[d];
    }
    if (table->row >= 0) ref.index[ref.rank++] = table->row;
    for (int d = 0; d < table->rank; d++) ref.index[ref.rank++] = index[d];
    if (table->transform == ATTN__SUM) ref.index[ref.rank++] = 0;
    return ref;
}

/* The axes a result's last indices run over, from its name: q for
 * queries, k for keys, n for entries counted from 1 (any axis before them
 * too: batch items, heads). */
static const char *named_axes(const attn__printed *table)
{
    const char *dot = strrchr(table->base, '.');
    const char *plain = dot != NULL ? dot + 1 : table->base;
    if (table->transform == ATTN__SUM) return "q";
    if (table->transform != ATTN__AS_IS || strcmp(plain, "scores") == 0 ||
        strcmp(plain, "scaled") == 0 || strcmp(plain, "weights") == 0)
        return "qk";
    if (strcmp(plain, "output") == 0) return "qn";
    if (strcmp(plain, "terms") == 0) return "qkn";
    return "";
}

/* Label i, its first 16 bytes at most (cut before a whole character, with
 * "…"): several names go into one sentence. */
static void put_short_label(attn__text *out, const attn__labels *labels, int i)
{
    enum { SHORT = 16 };
    char tmp[ATTN__LABEL_CAP];
    const char *label = attn__label(labels, i, tmp, sizeof tmp);
    size_t keep = 0;
    while (label[keep] != '\0') {
        size_t next = keep + 1;
        while ((label[next] & 0xC0) == 0x80) next++;
        if (next > SHORT) break;
        keep = next;
    }
    attn__text_append(out, label, keep);
    if (label[keep] != '\0') attn__text_puts(out, "…");
}

void attn__cell_name(attn__text *out, const attn_check *check,
                     const attn__printed *table, size_t cell)
{
    const key_parts parts = split_key(table->key);
    attn__text_printf(out, "%s%s", parts.prefix, parts.name);
    /* Every axis of the result, those printed without (leading 1s) at 0;
     * a sum has no axis of keys. */
    const int sum = table->transform == ATTN__SUM;
    const attn__ref ref = attn__cell_ref(table, cell);
    const int rank = table->base_rank - sum, given = ref.rank - sum;
    int index[4] = {0, 0, 0, 0};
    for (int d = 0; d < given; d++) index[rank - given + d] = ref.index[d];
    const char *axes = named_axes(table);
    const int first = rank - (int)strlen(axes);
    const attn__run_info *info = &check->problem->info;
    for (int d = 0; d < rank; d++) {
        const char axis = d >= first ? axes[d - first] : 'n';
        attn__text_puts(out, "[");
        if (axis == 'n')
            attn__text_int(out, index[d] + 1);
        else
            put_short_label(out, axis == 'q' ? &info->queries : &info->keys,
                            index[d]);
        attn__text_puts(out, "]");
    }
}

void attn__printed_text(char out[ATTN__PRINTED_CAP], double value, int decimals)
{
    if (isinf(value)) {
        snprintf(out, ATTN__PRINTED_CAP, "%s", value < 0 ? "−∞" : "∞");
        return;
    }
    if (fabs(value) < 1e15) {
        snprintf(out, ATTN__PRINTED_CAP, "%.*f", decimals, value);
        return;
    }
    attn__format_shortest(out, value);
}
