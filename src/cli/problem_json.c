/* problem_json.c: JSON through cJSON for check files (problem_json.h);
 * problems themselves are the library's to read (attn_problem_read_json). */
#include "problem_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_RANK = 3,
    PATH_CAP = 160,      /* a field name and up to three indices */
    NEAR_BEFORE = 12,    /* bytes quoted around a JSON error: cJSON's */
    NEAR_AFTER = 8,      /* position is often a byte or two late */
    KIND_NAMES_CAP = 256 /* every kind's name, quoted, comma-separated */
};

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int
fail(char *error, size_t error_cap, int status, const char *format, ...)
{
    if (error_cap > 0) {
        va_list args;
        va_start(args, format);
        vsnprintf(error, error_cap, format, args);
        va_end(args);
    }
    return status;
}

static void *allocate(const attn_allocator *allocator, size_t bytes)
{
    return allocator != NULL ? allocator->allocate(allocator->context, bytes)
                             : malloc(bytes);
}

static void release(const attn_allocator *allocator, void *block)
{
    if (block == NULL) return;
    if (allocator != NULL)
        allocator->release(allocator->context, block);
    else
        free(block);
}

const char *attn_json_describe(const cJSON *node)
{
    if (node == NULL) return "nothing";
    if (cJSON_IsNull(node)) return "null";
    if (cJSON_IsBool(node)) return "a boolean";
    if (cJSON_IsNumber(node)) return "a number";
    if (cJSON_IsString(node)) return "a string";
    if (cJSON_IsArray(node)) return "an array";
    return "an object";
}

/* ---- Text into a cJSON tree, strictly ---- */

/* Line and column (from 1, in bytes) of position `at` in text. */
static void line_and_column(const char *text, const char *at, int *line,
                            int *column)
{
    *line = 1;
    *column = 1;
    for (const char *c = text; c < at; c++) {
        if (*c == '\n') {
            (*line)++;
            *column = 1;
        } else {
            (*column)++;
        }
    }
}

/* The first comma outside strings after a value that only white space
 * separates from a closing "}" or "]" (JSON allows none there, and cJSON
 * reports the error past it, often at the end of the input); NULL if none. */
static const char *trailing_comma(const char *text, size_t length)
{
    int in_string = 0;
    for (size_t i = 0; i < length; i++) {
        if (in_string) {
            if (text[i] == '\\')
                i++;
            else if (text[i] == '"')
                in_string = 0;
            continue;
        }
        if (text[i] == '"') in_string = 1;
        if (text[i] != ',') continue;
        size_t before = i;
        while (before > 0 && strchr(" \t\r\n", text[before - 1]) != NULL)
            before--;
        if (before == 0 || strchr(",[{:", text[before - 1]) != NULL)
            continue; /* not after a value: some other mistake */
        size_t next = i + 1;
        while (next < length && strchr(" \t\r\n", text[next]) != NULL) next++;
        if (next < length && (text[next] == '}' || text[next] == ']'))
            return text + i;
    }
    return NULL;
}

static int parse_cjson(cJSON **root, const char *text, size_t length,
                       char *error, size_t error_cap)
{
    if (text[strspn(text, " \t\r\n")] == '\0' && strlen(text) == length)
        return fail(error, error_cap, ATTN_ERR_INPUT,
                    "empty input; expected a JSON problem object such as "
                    "{\"kind\": \"softmax\", \"x\": [1, 2, 3]}");
    int line, column;
    const char *nul = memchr(text, '\0', length);
    if (nul != NULL) {
        line_and_column(text, nul, &line, &column);
        return fail(error, error_cap, ATTN_ERR_INPUT,
                    "invalid JSON at line %d, column %d: a NUL byte", line,
                    column);
    }
    const char *end = NULL;
    /* length + 1: cJSON wants the terminating NUL inside the buffer when it
     * checks for trailing text. */
    *root = cJSON_ParseWithLengthOpts(text, length + 1, &end, 1);
    if (*root != NULL) return 0;
    const char *comma = trailing_comma(text, length);
    if (comma != NULL && (end == NULL || comma < end)) {
        line_and_column(text, comma, &line, &column);
        return fail(error, error_cap, ATTN_ERR_INPUT,
                    "invalid JSON at line %d, column %d: a comma after the "
                    "last entry, which JSON does not allow",
                    line, column);
    }
    const char *content_end = text + length; /* after the last non-space */
    while (content_end > text && strchr(" \t\r\n", content_end[-1]) != NULL)
        content_end--;
    const int at_end = end == NULL || end < text || end >= content_end;
    if (at_end) end = content_end;
    line_and_column(text, end, &line, &column);
    const char *from = end -
                       (column - 1 < NEAR_BEFORE ? column - 1 : NEAR_BEFORE);
    while (from < end && ((unsigned char)*from & 0xC0) == 0x80) from++;
    if (at_end)
        return fail(error, error_cap, ATTN_ERR_INPUT,
                    "invalid JSON at the end of the input (line %d, column "
                    "%d), after \"%.*s\"",
                    line, column, (int)(end - from), from);
    size_t after = strcspn(end, "\r\n");
    if (after > NEAR_AFTER) after = NEAR_AFTER;
    while (after > 0 && ((unsigned char)end[after] & 0xC0) == 0x80) after--;
    return fail(error, error_cap, ATTN_ERR_INPUT,
                "invalid JSON at line %d, column %d, near \"%.*s\"", line,
                column, (int)(end + after - from), from);
}

/* What the text holds, counted by scan_json: enough to bound the bytes
 * cJSON's tree of it takes before cJSON builds it. */
typedef struct json_counts {
    size_t containers;   /* arrays and objects */
    size_t commas;       /* outside strings */
    size_t strings;      /* keys and values */
    size_t string_bytes; /* their text between the quotes */
} json_counts;

/* What cJSON accepts but a problem must not hold, found in one pass over
 * the text before cJSON sees it: nesting deeper than ATTN_JSON_MAX_DEPTH
 * (cJSON's own limit, 1000, reports an unhelpful column) and the escape
 * \u0000 in a string (cJSON would cut the string there, so that
 * "softmax\u0000junk" read as "softmax"). The same pass counts what the
 * tree will hold (*counts). */
static int scan_json(json_counts *counts, const char *text, size_t length,
                     char *error, size_t error_cap)
{
    memset(counts, 0, sizeof *counts);
    int depth = 0, in_string = 0, line, column;
    size_t string_start = 0;
    for (size_t i = 0; i < length; i++) {
        const char c = text[i];
        if (in_string) {
            if (c == '"') {
                in_string = 0;
                counts->string_bytes += i - string_start;
            } else if (c == '\\' && i + 1 < length) {
                if (text[i + 1] == 'u' && i + 5 < length &&
                    strncmp(text + i + 2, "0000", 4) == 0) {
                    line_and_column(text, text + i, &line, &column);
                    return fail(error, error_cap, ATTN_ERR_INPUT,
                                "invalid input at line %d, column %d: "
                                "\\u0000 (a NUL character) in a string; "
                                "names and values must not contain one",
                                line, column);
                }
                i++; /* the escaped character */
            }
        } else if (c == '"') {
            in_string = 1;
            string_start = i + 1;
            counts->strings++;
        } else if (c == ',') {
            counts->commas++;
        } else if (c == '[' || c == '{') {
            counts->containers++;
            if (++depth > ATTN_JSON_MAX_DEPTH) {
                line_and_column(text, text + i, &line, &column);
                return fail(error, error_cap, ATTN_ERR_INPUT,
                            "invalid input at line %d, column %d: nested "
                            "deeper than %d levels (a problem needs at most "
                            "%d)",
                            line, column, ATTN_JSON_MAX_DEPTH, MAX_RANK + 1);
            }
        } else if (c == ']' || c == '}') {
            depth--;
        }
    }
    return ATTN_OK;
}

static size_t add_bytes(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t times_bytes(size_t count, size_t each)
{
    return count > SIZE_MAX / each ? SIZE_MAX : count * each;
}

/* About how many bytes reading and parsing `length` bytes of JSON that
 * holds `counts` takes, at most (SIZE_MAX past it): the text, the
 * terminated copy attn_json_parse_limited makes and cJSON's tree. */
static size_t parse_bytes(const json_counts *counts, size_t length)
{
    /* A block as malloc keeps it: the bytes asked for and its header. */
    const size_t header = 2 * sizeof(void *);
    /* A node per value: each array or object, each of its members (one
     * more than its commas, at most) and the root. */
    const size_t nodes = add_bytes(
        add_bytes(times_bytes(counts->containers, 2), counts->commas), 1);
    size_t bytes = times_bytes(length, 2); /* the text and the copy */
    bytes = add_bytes(bytes, times_bytes(nodes, sizeof(cJSON) + header));
    /* Escapes only shorten a string; each gets a NUL, and malloc's header
     * and rounding up take at most two headers more (a string of one
     * letter takes 32 bytes in glibc's malloc on 64 bits). */
    bytes = add_bytes(bytes, counts->string_bytes);
    return add_bytes(bytes, times_bytes(counts->strings, 1 + 2 * header));
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ATTN_ERR_INPUT naming the first key some object of the tree repeats
 * (cJSON keeps both members; a lookup would see only one). */
static int check_duplicate_keys(const cJSON *node, const char *where,
                                char *error, size_t error_cap)
{
    if (cJSON_IsObject(node)) {
        const int count = cJSON_GetArraySize(node);
        if (count > 1) {
            const char **names = malloc((size_t)count * sizeof *names);
            if (names == NULL)
                return fail(error, error_cap, ATTN_ERR_NOMEM, "out of memory");
            int n = 0;
            const cJSON *member;
            cJSON_ArrayForEach(member, node) names[n++] = member->string;
            qsort(names, (size_t)n, sizeof *names, compare_names);
            for (int i = 1; i < n; i++) {
                if (strcmp(names[i - 1], names[i]) == 0) {
                    const int status = fail(
                        error, error_cap, ATTN_ERR_INPUT,
                        "%s%s: the key appears more than once in %s",
                        where[0] != '\0' ? where : "", names[i],
                        where[0] != '\0' ? "that object" : "the problem");
                    free(names);
                    return status;
                }
            }
            free(names);
        }
    }
    if (cJSON_IsObject(node) || cJSON_IsArray(node)) {
        const cJSON *child;
        cJSON_ArrayForEach(child, node)
        {
            char path[PATH_CAP];
            if (cJSON_IsObject(node))
                snprintf(path, sizeof path, "%s%s.", where, child->string);
            else
                snprintf(path, sizeof path, "%s", where);
            const int status = check_duplicate_keys(child, path, error,
                                                    error_cap);
            if (status != ATTN_OK) return status;
        }
    }
    return ATTN_OK;
}

int attn_json_parse(cJSON **root, const char *text, size_t length, char *error,
                    size_t error_cap)
{
    return attn_json_parse_limited(root, text, length, 0, error, error_cap);
}

int attn_json_parse_limited(cJSON **root, const char *text, size_t length,
                            size_t max_bytes, char *error, size_t error_cap)
{
    if (root == NULL || text == NULL || (error == NULL && error_cap > 0))
        return ATTN_ERR_NULL;
    *root = NULL;
    if (error_cap > 0) error[0] = '\0';
    json_counts counts;
    int status = scan_json(&counts, text, length, error, error_cap);
    if (status != ATTN_OK) return status;
    const size_t limit = max_bytes != 0 ? max_bytes
                                        : ATTN_PROBLEM_DEFAULT_MAX_BYTES;
    const size_t bytes = parse_bytes(&counts, length);
    if (bytes > limit)
        return fail(error, error_cap, ATTN_ERR_TOO_LARGE,
                    "the input's JSON (%zu bytes) would take about %zu bytes "
                    "to read and parse, more than the limit of %zu bytes; "
                    "use a smaller input or raise the limit (--max-bytes)",
                    length, bytes, limit);
    /* cJSON and the messages read up to a NUL: a terminated copy. */
    char *copy = length < SIZE_MAX ? malloc(length + 1) : NULL;
    if (copy == NULL)
        return fail(error, error_cap, ATTN_ERR_NOMEM, "out of memory");
    memcpy(copy, text, length);
    copy[length] = '\0';
    status = parse_cjson(root, copy, length, error, error_cap);
    free(copy);
    if (status != ATTN_OK) return status;
    status = check_duplicate_keys(*root, "", error, error_cap);
    if (status != ATTN_OK) {
        cJSON_Delete(*root);
        *root = NULL;
    }
    return status;
}

/* ---- Nested arrays into a tensor ---- */

/* Where the walk writes the next leaf, and how it reads leaves. */
typedef struct tensor_reader {
    attn_json_tensor *tensor;
    size_t next;
    unsigned leaves;
    char *error;
    size_t error_cap;
} tensor_reader;

static void index_path(char *out, const char *path, int index)
{
    /* A path cut short (a very long field name) ends in "..." */
    if (snprintf(out, PATH_CAP, "%s[%d]", path, index) >= PATH_CAP)
        memcpy(out + PATH_CAP - 4, "...", 4);
}

static int read_leaf(tensor_reader *reader, const cJSON *leaf, const char *path)
{
    double value;
    if (cJSON_IsNumber(leaf))
        value = leaf->valuedouble;
    else if ((reader->leaves & ATTN_JSON_NULL_IS_MINUS_INF) &&
             cJSON_IsNull(leaf))
        value = -INFINITY;
    else
        return fail(reader->error, reader->error_cap, ATTN_ERR_INPUT,
                    "%s: expected a number, got %s", path,
                    attn_json_describe(leaf));
    /* The first walk only checks (no data yet); the second stores. */
    if (reader->tensor->data != NULL)
        reader->tensor->data[reader->next] = value;
    reader->next++;
    return ATTN_OK;
}

/* Leaves of a row whose length is already known to be right. */
static int fill_row(tensor_reader *reader, const cJSON *row, const char *path)
{
    char entry_path[PATH_CAP];
    int j = 0;
    const cJSON *entry;
    cJSON_ArrayForEach(entry, row)
    {
        index_path(entry_path, path, j++);
        const int status = read_leaf(reader, entry, entry_path);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}

/* Every row that is an array must be as long as row 0 (rows that are not
 * arrays are reported when they are read). */
static int check_row_lengths(tensor_reader *reader, const cJSON *matrix,
                             const char *path)
{
    const cJSON *first = matrix->child;
    if (!cJSON_IsArray(first)) return ATTN_OK;
    const int length = cJSON_GetArraySize(first);
    int i = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, matrix)
    {
        if (cJSON_IsArray(row) && cJSON_GetArraySize(row) != length)
            return fail(reader->error, reader->error_cap, ATTN_ERR_INPUT,
                        "%s: rows must all have the same length (row 0 has "
                        "%d entries, row %d has %d)",
                        path, length, i, cJSON_GetArraySize(row));
        i++;
    }
    return ATTN_OK;
}

static int fill_matrix(tensor_reader *reader, const cJSON *matrix,
                       const char *path)
{
    int status = check_row_lengths(reader, matrix, path);
    if (status != ATTN_OK) return status;
    char row_path[PATH_CAP];
    int i = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, matrix)
    {
        index_path(row_path, path, i++);
        if (!cJSON_IsArray(row))
            return fail(reader->error, reader->error_cap, ATTN_ERR_INPUT,
                        "%s: expected an array, got %s", row_path,
                        attn_json_describe(row));
        status = fill_row(reader, row, row_path);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}

/* Every batch item must be a matrix shaped like item 0. */
static int fill_batch(tensor_reader *reader, const cJSON *batch,
                      const char *path)
{
    const int *dims = reader->tensor->dims;
    char item_path[PATH_CAP];
    int b = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, batch)
    {
        index_path(item_path, path, b);
        if (!cJSON_IsArray(item))
            return fail(reader->error, reader->error_cap, ATTN_ERR_INPUT,
                        "%s: expected an array, got %s", item_path,
                        attn_json_describe(item));
        const int rows = cJSON_GetArraySize(item);
        const int cols = cJSON_IsArray(item->child)
                             ? cJSON_GetArraySize(item->child)
                             : dims[2];
        if (rows != dims[1] || cols != dims[2]) {
            /* A ragged item is reported as such, not as a shape mismatch. */
            const int status = check_row_lengths(reader, item, item_path);
            if (status != ATTN_OK) return status;
            return fail(reader->error, reader->error_cap, ATTN_ERR_INPUT,
                        "%s: batch items must all have the same shape (item 0 "
                        "is %dx%d, item %d is %dx%d)",
                        path, dims[1], dims[2], b, rows, cols);
        }
        const int status = fill_matrix(reader, item, item_path);
        if (status != ATTN_OK) return status;
        b++;
    }
    return ATTN_OK;
}

/* The dimensions, from the first entry at each level. */
static int measure(attn_json_tensor *tensor, const cJSON *node,
                   const char *path, unsigned leaves, char *error,
                   size_t error_cap)
{
    tensor->rank = 0;
    tensor->count = 1;
    for (const cJSON *level = node; cJSON_IsArray(level);
         level = level->child) {
        if (tensor->rank == MAX_RANK)
            return fail(error, error_cap, ATTN_ERR_INPUT,
                        "%s: expected at most %d levels of nesting", path,
                        MAX_RANK);
        const int size = cJSON_GetArraySize(level);
        if (size == 0)
            return fail(error, error_cap, ATTN_ERR_INPUT,
                        "%s: must not be empty", path);
        if (tensor->count > SIZE_MAX / sizeof(double) / (size_t)size)
            return fail(error, error_cap, ATTN_ERR_INPUT, "%s: too large",
                        path);
        tensor->dims[tensor->rank++] = size;
        tensor->count *= (size_t)size;
    }
    if (tensor->rank == 0 && !(leaves & ATTN_JSON_ALLOW_SCALAR))
        return fail(error, error_cap, ATTN_ERR_INPUT,
                    "%s: expected an array, got %s", path,
                    attn_json_describe(node));
    return ATTN_OK;
}

/* Walks the leaves into tensor->data, or only checks them while it is
 * NULL. */
static int fill(attn_json_tensor *tensor, const cJSON *node, const char *path,
                unsigned leaves, char *error, size_t error_cap)
{
    tensor_reader reader = {tensor, 0, leaves, error, error_cap};
    switch (tensor->rank) {
    case 0: return read_leaf(&reader, node, path);
    case 1: return fill_row(&reader, node, path);
    case 2: return fill_matrix(&reader, node, path);
    default: return fill_batch(&reader, node, path);
    }
}

int attn_json_read_tensor(attn_json_tensor *tensor, const cJSON *node,
                          const char *path, unsigned leaves,
                          const attn_allocator *allocator, char *error,
                          size_t error_cap)
{
    memset(tensor, 0, sizeof *tensor);
    int status = measure(tensor, node, path, leaves, error, error_cap);
    if (status != ATTN_OK) return status;
    /* Every row checked before the product of the first rows' lengths is
     * allocated: a ragged array's first rows may promise gigabytes that the
     * rest of it does not hold. */
    status = fill(tensor, node, path, leaves, error, error_cap);
    if (status != ATTN_OK) return status;
    tensor->data = allocate(allocator, tensor->count * sizeof(double));
    if (tensor->data == NULL)
        return fail(error, error_cap, ATTN_ERR_NOMEM, "%s: out of memory",
                    path);
    status = fill(tensor, node, path, leaves, error, error_cap);
    if (status != ATTN_OK) attn_json_tensor_free(tensor, allocator);
    return status;
}

void attn_json_tensor_free(attn_json_tensor *tensor,
                           const attn_allocator *allocator)
{
    release(allocator, tensor->data);
    tensor->data = NULL;
}

/* ---- A tree into a problem ---- */

int attn_problem_from_json(attn_problem **problem, const cJSON *root,
                           const attn_allocator *allocator, char *error,
                           size_t error_cap)
{
    return attn_problem_from_json_limited(problem, root, allocator, 0, error,
                                          error_cap);
}

int attn_problem_from_json_limited(attn_problem **problem, const cJSON *root,
                                   const attn_allocator *allocator,
                                   size_t max_bytes, char *error,
                                   size_t error_cap)
{
    if (problem == NULL || (error == NULL && error_cap > 0))
        return ATTN_ERR_NULL;
    *problem = NULL;
    /* The library reads problems from text, with its rules and messages:
     * the tree written back (numbers in a form that reads back the same). */
    char *text = cJSON_PrintUnformatted(root);
    if (text == NULL)
        return fail(error, error_cap, ATTN_ERR_NOMEM, "out of memory");
    const int status = attn_problem_read_json(problem, error, text, allocator,
                                              "--max-bytes", strlen(text),
                                              max_bytes, error_cap);
    cJSON_free(text);
    return status;
}

/* ---- Printed numbers into a check ---- */

/* The decimals printedDecimals gives `key`: one number for everything, or
 * under the key (for "heads.0.weights" also under "weights"), a number or
 * nested arrays shaped like the printed ones. *decimals NULL: none given. */
static int read_decimals(int **decimals, const cJSON *table, const char *key,
                         const char *plain, size_t count,
                         const attn_allocator *allocator, char *error,
                         size_t error_cap)
{
    *decimals = NULL;
    const cJSON *node = table;
    if (cJSON_IsObject(table)) {
        node = cJSON_GetObjectItemCaseSensitive(table, key);
        if (node == NULL) node = cJSON_GetObjectItemCaseSensitive(table, plain);
    }
    if (node == NULL) return ATTN_OK;
    char path[160];
    snprintf(path, sizeof path, "printedDecimals.%s", key);
    attn_json_tensor tensor;
    int status = attn_json_read_tensor(&tensor, node, path,
                                       ATTN_JSON_ALLOW_SCALAR, allocator, error,
                                       error_cap);
    if (status != ATTN_OK) return status;
    if (tensor.count != 1 && tensor.count != count) {
        attn_json_tensor_free(&tensor, allocator);
        return fail(error, error_cap, ATTN_ERR_INPUT,
                    "%s: expected one number or %zu (one per printed "
                    "number), got %zu",
                    path, count, tensor.count);
    }
    *decimals = allocate(allocator, count * sizeof **decimals);
    if (*decimals == NULL)
        status = fail(error, error_cap, ATTN_ERR_NOMEM, "%s: out of memory",
                      path);
    for (size_t i = 0; status == ATTN_OK && i < count; i++) {
        const double d = tensor.data[tensor.count == 1 ? 0 : i];
        if (!(d >= 0 && d <= 17) || d != (int)d)
            status = fail(error, error_cap, ATTN_ERR_INPUT,
                          "%s: expected a whole number of decimals from 0 to "
                          "17, got %g",
                          path, d);
        else
            (*decimals)[i] = (int)d;
    }
    attn_json_tensor_free(&tensor, allocator);
    if (status != ATTN_OK) {
        release(allocator, *decimals);
        *decimals = NULL;
    }
    return status;
}

/* The decimals each printed number was written with, in the order of the
 * text: taken one table at a time. */
typedef struct written_cursor {
    const int *decimals; /* NULL: none known */
    size_t count, next;
} written_cursor;

static int set_printed_member(attn_check *check, const cJSON *value,
                              const char *key, const char *plain,
                              const cJSON *decimals, written_cursor *written,
                              const attn_allocator *allocator, char *error,
                              size_t error_cap)
{
    /* Text is a note beside the numbers, unless the key names a result. */
    if (cJSON_IsString(value)) {
        const int status = attn_check_set_note(check, key);
        if (status != ATTN_OK)
            snprintf(error, error_cap, "%s", attn_check_error(check));
        return status;
    }
    char path[160];
    snprintf(path, sizeof path, "printed.%s", key);
    attn_json_tensor tensor;
    int status = attn_json_read_tensor(&tensor, value, path,
                                       ATTN_JSON_NULL_IS_MINUS_INF |
                                           ATTN_JSON_ALLOW_SCALAR,
                                       allocator, error, error_cap);
    if (status != ATTN_OK) return status;
    int *places = NULL;
    status = read_decimals(&places, decimals, key, plain, tensor.count,
                           allocator, error, error_cap);
    const int *as_written = NULL;
    if (written->decimals != NULL &&
        written->next + tensor.count <= written->count)
        as_written = written->decimals + written->next;
    written->next += tensor.count;
    if (status == ATTN_OK) {
        status = attn_check_set_printed(check, key, tensor.rank, tensor.dims,
                                        tensor.data,
                                        places != NULL ? places : as_written);
        if (status != ATTN_OK)
            fail(error, error_cap, status, "%s", attn_check_error(check));
    }
    release(allocator, places);
    attn_json_tensor_free(&tensor, allocator);
    return status;
}

/* The decimals of each number in the value of the root object's "printed"
 * member as the text writes them (0.380: 3), in order, null counting as 0,
 * into a new array (NULL when there is none or memory runs out). The
 * text has been parsed as JSON already, so its tokens are well formed. */
static int *written_decimals(const char *text, size_t length, size_t *count)
{
    *count = 0;
    if (text == NULL) return NULL;
    int *out = malloc((length / 2 + 1) * sizeof *out);
    if (out == NULL) return NULL;
    int depth = 0, printed_depth = 0, before_printed = 0;
    for (size_t i = 0; i < length; i++) {
        const char c = text[i];
        if (c == '"') {
            const size_t start = ++i;
            while (i < length && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
            size_t next = i + 1;
            while (next < length && strchr(" \t\r\n", text[next]) != NULL)
                next++;
            before_printed = depth == 1 && printed_depth == 0 &&
                             next < length && text[next] == ':' &&
                             i - start == 7 &&
                             memcmp(text + start, "printed", 7) == 0;
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
            if (before_printed) printed_depth = depth;
            before_printed = 0;
        } else if (c == '}' || c == ']') {
            if (depth == printed_depth) break; /* the end of "printed" */
            depth--;
        } else if (printed_depth > 0 && c == 'n') {
            out[(*count)++] = 0; /* null */
            i += 3;
        } else if (printed_depth > 0 && (c == '-' || (c >= '0' && c <= '9'))) {
            int fraction = 0, seen_point = 0;
            size_t j = i + (c == '-');
            for (; j < length &&
                   ((text[j] >= '0' && text[j] <= '9') || text[j] == '.');
                 j++) {
                if (text[j] == '.')
                    seen_point = 1;
                else if (seen_point)
                    fraction++;
            }
            long exponent = 0;
            if (j < length && (text[j] == 'e' || text[j] == 'E'))
                exponent = strtol(text + j + 1, NULL, 10);
            while (j < length && strchr("eE+-0123456789", text[j]) != NULL) j++;
            const long places = fraction - exponent;
            out[(*count)++] = places < 0 ? 0 : places > 17 ? 17 : (int)places;
            i = j - 1;
        } else if (c != ' ' && c != '\t' && c != '\r' && c != '\n' &&
                   c != ':' && c != ',') {
            before_printed = 0;
        }
    }
    return out;
}

/* 1 when printedDecimals' key `name` names a printed table: a key of
 * printed, or a head's table by its plain name or as "heads.<h>.<name>". */
static int names_printed(const cJSON *printed, const char *name)
{
    const cJSON *member;
    cJSON_ArrayForEach(member, printed)
    {
        if (strcmp(member->string, "heads") != 0 || !cJSON_IsArray(member)) {
            if (strcmp(member->string, name) == 0) return 1;
            continue;
        }
        const cJSON *head;
        int h = 0;
        cJSON_ArrayForEach(head, member)
        {
            const cJSON *table;
            cJSON_ArrayForEach(table, head)
            {
                char key[160];
                snprintf(key, sizeof key, "heads.%d.%s", h, table->string);
                if (strcmp(table->string, name) == 0 || strcmp(key, name) == 0)
                    return 1;
            }
            h++;
        }
    }
    return 0;
}

static int printed_members(attn_check *check, const cJSON *printed,
                           const cJSON *decimals, written_cursor *written,
                           const attn_allocator *allocator, char *error,
                           size_t error_cap);

int attn_check_printed_from_json(attn_check *check, const cJSON *printed,
                                 const cJSON *decimals, const char *text,
                                 size_t length, const attn_allocator *allocator,
                                 char *error, size_t error_cap)
{
    if (check == NULL || (error == NULL && error_cap > 0)) return ATTN_ERR_NULL;
    size_t count = 0;
    int *as_written = written_decimals(text, length, &count);
    written_cursor written = {as_written, count, 0};
    const int status = printed_members(check, printed, decimals, &written,
                                       allocator, error, error_cap);
    free(as_written);
    return status;
}

static int printed_members(attn_check *check, const cJSON *printed,
                           const cJSON *decimals, written_cursor *written,
                           const attn_allocator *allocator, char *error,
                           size_t error_cap)
{
    if (error_cap > 0) error[0] = '\0';
    if (!cJSON_IsObject(printed))
        return fail(error, error_cap, ATTN_ERR_INPUT,
                    "printed: expected an object of printed tables by result "
                    "name, got %s",
                    attn_json_describe(printed));
    if (decimals != NULL && !cJSON_IsObject(decimals) &&
        !cJSON_IsNumber(decimals))
        return fail(error, error_cap, ATTN_ERR_INPUT,
                    "printedDecimals: expected a number or an object by "
                    "printed key, got %s",
                    attn_json_describe(decimals));
    const cJSON *member;
    cJSON_ArrayForEach(member, printed)
    {
        int status = ATTN_OK;
        if (strcmp(member->string, "heads") == 0 && cJSON_IsArray(member)) {
            const cJSON *head;
            int h = 0;
            cJSON_ArrayForEach(head, member)
            {
                if (!cJSON_IsObject(head))
                    return fail(error, error_cap, ATTN_ERR_INPUT,
                                "printed.heads[%d]: expected an object of "
                                "that head's tables, got %s",
                                h, attn_json_describe(head));
                const cJSON *table;
                cJSON_ArrayForEach(table, head)
                {
                    char key[160];
                    snprintf(key, sizeof key, "heads.%d.%s", h, table->string);
                    status = set_printed_member(
                        check, table, key, table->string, decimals, written,
                        allocator, error, error_cap);
                    if (status != ATTN_OK) return status;
                }
                h++;
            }
            continue;
        }
        status = set_printed_member(check, member, member->string,
                                    member->string, decimals, written,
                                    allocator, error, error_cap);
        if (status != ATTN_OK) return status;
    }
    /* A misspelt key there would leave its table's decimals guessed. */
    const cJSON *named = cJSON_IsObject(decimals) ? decimals->child : NULL;
    for (; named != NULL; named = named->next)
        if (!names_printed(printed, named->string))
            return fail(error, error_cap, ATTN_ERR_INPUT,
                        "printedDecimals.%s: no printed table is named \"%s\"",
                        named->string, named->string);
    return ATTN_OK;
}
