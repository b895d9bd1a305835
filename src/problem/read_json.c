/* read_json.c: attn_problem_read_json, a problem from JSON text: the tree
 * json_tree.c parses, walked member by member into the setters, so that
 * every kind and field the library knows works here without a table of
 * its own, and every front end (build/attn, the JS API, Python) gives the
 * same message for the same mistake. */
#include "problem/json_tree.h"
#include "problem/problem.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum {
    PATH_CAP = 160,      /* a field name and up to three indices */
    KIND_NAMES_CAP = 256 /* every kind's name, quoted, comma-separated */
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int
fail(const attn_problem *problem, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(problem->error, ATTN__ERROR_CAP, format, args);
    va_end(args);
    return ATTN_ERR_INPUT;
}

/* ---- Nested arrays into a tensor ---- */

typedef struct tensor {
    int rank;
    int dims[ATTN__MAX_RANK];
    size_t count;
    double *data; /* NULL while the first walk only checks */
    size_t next;
} tensor;

static void index_path(char *out, const char *path, int index)
{
    /* A path cut short (a very long field name) ends in "..." */
    if (snprintf(out, PATH_CAP, "%s[%d]", path, index) >= PATH_CAP)
        memcpy(out + PATH_CAP - 4, "...", 4);
}

/* A whole number that float64 would round is refused, never rounded
 * silently. */
static int rounded(const attn_problem *problem, const attn__jnode *number,
                   const char *path)
{
    return fail(problem,
                "%s: %.*s is past 2**53, where float64 would round it; "
                "convert it first",
                path, number->count, number->string);
}

/* A number, or a boolean as 1 or 0. */
static int read_leaf(const attn_problem *problem, tensor *t,
                     const attn__jnode *leaf, const char *path)
{
    double value;
    if (leaf->type == ATTN__J_NUMBER && leaf->count > 0)
        return rounded(problem, leaf, path);
    if (leaf->type == ATTN__J_NUMBER)
        value = leaf->number;
    else if (leaf->type == ATTN__J_TRUE || leaf->type == ATTN__J_FALSE)
        value = leaf->type == ATTN__J_TRUE ? 1.0 : 0.0;
    else
        return fail(problem, "%s: expected a number, got %s", path,
                    attn__jnode_describe(leaf));
    if (t->data != NULL) t->data[t->next] = value;
    t->next++;
    return ATTN_OK;
}

static int fill_row(const attn_problem *problem, tensor *t,
                    const attn__jnode *row, const char *path)
{
    char entry_path[PATH_CAP];
    int j = 0;
    for (const attn__jnode *entry = row->child; entry != NULL;
         entry = entry->next) {
        index_path(entry_path, path, j++);
        const int status = read_leaf(problem, t, entry, entry_path);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}

/* Every row that is an array must be as long as row 0 (rows that are not
 * arrays are reported when they are read). */
static int check_row_lengths(const attn_problem *problem,
                             const attn__jnode *matrix, const char *path)
{
    const attn__jnode *first = matrix->child;
    if (first->type != ATTN__J_ARRAY) return ATTN_OK;
    int i = 0;
    for (const attn__jnode *row = first; row != NULL; row = row->next, i++)
        if (row->type == ATTN__J_ARRAY && row->count != first->count)
            return fail(problem,
                        "%s: rows must all have the same length (row 0 has "
                        "%d entries, row %d has %d)",
                        path, first->count, i, row->count);
    return ATTN_OK;
}

static int fill_matrix(const attn_problem *problem, tensor *t,
                       const attn__jnode *matrix, const char *path)
{
    int status = check_row_lengths(problem, matrix, path);
    if (status != ATTN_OK) return status;
    char row_path[PATH_CAP];
    int i = 0;
    for (const attn__jnode *row = matrix->child; row != NULL; row = row->next) {
        index_path(row_path, path, i++);
        if (row->type != ATTN__J_ARRAY)
            return fail(problem, "%s: expected an array, got %s", row_path,
                        attn__jnode_describe(row));
        status = fill_row(problem, t, row, row_path);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}

/* Every batch item must be a matrix shaped like item 0. */
static int fill_batch(const attn_problem *problem, tensor *t,
                      const attn__jnode *batch, const char *path)
{
    char item_path[PATH_CAP];
    int b = 0;
    for (const attn__jnode *item = batch->child; item != NULL;
         item = item->next, b++) {
        index_path(item_path, path, b);
        if (item->type != ATTN__J_ARRAY)
            return fail(problem, "%s: expected an array, got %s", item_path,
                        attn__jnode_describe(item));
        const int rows = item->count;
        const int cols = item->child != NULL &&
                                 item->child->type == ATTN__J_ARRAY
                             ? item->child->count
                             : t->dims[2];
        if (rows != t->dims[1] || cols != t->dims[2]) {
            /* A ragged item is reported as such, not as a shape mismatch. */
            if (rows > 0) {
                const int status = check_row_lengths(problem, item, item_path);
                if (status != ATTN_OK) return status;
            }
            return fail(problem,
                        "%s: batch items must all have the same shape (item 0 "
                        "is %dx%d, item %d is %dx%d)",
                        path, t->dims[1], t->dims[2], b, rows, cols);
        }
        const int status = fill_matrix(problem, t, item, item_path);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}

/* The dimensions, from the first entry at each level. */
static int measure(const attn_problem *problem, tensor *t,
                   const attn__jnode *node, const char *path)
{
    t->rank = 0;
    t->count = 1;
    for (const attn__jnode *level = node;
         level != NULL && level->type == ATTN__J_ARRAY; level = level->child) {
        if (t->rank == ATTN__MAX_RANK)
            return fail(problem, "%s: expected at most %d levels of nesting",
                        path, ATTN__MAX_RANK);
        if (level->count == 0)
            return fail(problem, "%s: must not be empty", path);
        if (t->count > SIZE_MAX / sizeof(double) / (size_t)level->count)
            return fail(problem, "%s: too large", path);
        t->dims[t->rank++] = level->count;
        t->count *= (size_t)level->count;
    }
    return ATTN_OK;
}

static int fill(const attn_problem *problem, tensor *t, const attn__jnode *node,
                const char *path)
{
    t->next = 0;
    switch (t->rank) {
    case 1: return fill_row(problem, t, node, path);
    case 2: return fill_matrix(problem, t, node, path);
    default: return fill_batch(problem, t, node, path);
    }
}

static int set_tensor_member(attn_problem *problem, const attn__jnode *member)
{
    tensor t = {0};
    int status = measure(problem, &t, member, member->key);
    /* Every row checked before the product of the first rows' lengths is
     * allocated: a ragged array's first rows may promise gigabytes that
     * the rest of it does not hold. */
    if (status == ATTN_OK) status = fill(problem, &t, member, member->key);
    if (status != ATTN_OK) return status;
    t.data = attn__allocate(problem, t.count * sizeof(double));
    if (t.data == NULL)
        return attn__fail(problem, ATTN_ERR_NOMEM, "%s: out of memory",
                          member->key);
    status = fill(problem, &t, member, member->key);
    if (status == ATTN_OK)
        status = attn_problem_set_tensor(problem, member->key, t.rank, t.dims,
                                         t.data);
    attn__release(problem, t.data);
    return status;
}

/* An array whose first entry is a string: every entry must be one. */
static int set_strings_member(attn_problem *problem, const attn__jnode *member)
{
    const char **values = attn__allocate(problem, (size_t)member->count *
                                                      sizeof *values);
    if (values == NULL)
        return attn__fail(problem, ATTN_ERR_NOMEM, "%s: out of memory",
                          member->key);
    int status = ATTN_OK, i = 0;
    for (const attn__jnode *entry = member->child; entry != NULL;
         entry = entry->next, i++) {
        if (entry->type != ATTN__J_STRING) {
            status = fail(problem, "%s[%d]: expected a string, got %s",
                          member->key, i, attn__jnode_describe(entry));
            break;
        }
        values[i] = entry->string;
    }
    if (status == ATTN_OK)
        status = attn_problem_set_strings(problem, member->key, member->count,
                                          values);
    attn__release(problem, values);
    return status;
}

/* For an array whose first entry is a string: 1 when every entry is one,
 * or when the field takes a list of strings (then a later entry that is
 * not a string is reported by its index); 0 when the field takes a tensor
 * (read as one, the first string is reported). An unknown field gives 1
 * with its setter's status in *status. */
static int takes_strings(attn_problem *problem, const attn__jnode *member,
                         int *status)
{
    *status = ATTN_OK;
    int all_strings = 1;
    for (const attn__jnode *e = member->child; e != NULL; e = e->next)
        all_strings &= e->type == ATTN__J_STRING;
    if (all_strings) return 1;
    const attn__field *spec = attn__field_spec(problem, member->key);
    if (spec == NULL) { /* the setter says what the kind takes */
        const char *none[1] = {NULL};
        *status = attn_problem_set_strings(problem, member->key, 0, none);
        return 1;
    }
    return (spec->types & ATTN__STRINGS) != 0;
}

static int set_member(attn_problem *problem, const attn__jnode *member)
{
    const char *field = member->key;
    int status;
    switch (member->type) {
    case ATTN__J_NUMBER:
        if (member->count > 0) return rounded(problem, member, field);
        return attn_problem_set_number(problem, field, member->number);
    case ATTN__J_TRUE:
    case ATTN__J_FALSE:
        return attn_problem_set_bool(problem, field,
                                     member->type == ATTN__J_TRUE);
    case ATTN__J_STRING:
        return attn_problem_set_string(problem, field, member->string);
    case ATTN__J_ARRAY:
        if (member->child != NULL && member->child->type == ATTN__J_STRING &&
            takes_strings(problem, member, &status))
            return status != ATTN_OK ? status
                                     : set_strings_member(problem, member);
        return set_tensor_member(problem, member);
    default:
        return fail(problem,
                    "%s: expected a number, a boolean, a string or an array, "
                    "got %s",
                    field, attn__jnode_describe(member));
    }
}

/* "\"scaledDotProduct\", \"weightedSum\", ...": the library's kinds, in
 * its order, so that the messages list every kind it knows. */
static void kind_names(char names[KIND_NAMES_CAP])
{
    size_t used = 0;
    names[0] = '\0';
    for (int i = 0; attn_problem_kind(i) != NULL; i++) {
        const int wrote = snprintf(names + used, KIND_NAMES_CAP - used,
                                   "%s\"%s\"", i > 0 ? ", " : "",
                                   attn_problem_kind(i));
        if (wrote < 0 || (size_t)wrote >= KIND_NAMES_CAP - used) return;
        used += (size_t)wrote;
    }
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
fail_outside(char *error, size_t error_cap, const char *format, ...)
{
    if (error_cap > 0) {
        va_list args;
        va_start(args, format);
        vsnprintf(error, error_cap, format, args);
        va_end(args);
    }
    return ATTN_ERR_INPUT;
}

/* A problem of the root's "kind", or the message why not. */
static int create_of_kind(attn_problem **problem, char *error,
                          const attn__jnode *root,
                          const attn_allocator *allocator, size_t error_cap)
{
    if (root->type != ATTN__J_OBJECT)
        return fail_outside(error, error_cap,
                            "expected a problem object, got %s",
                            attn__jnode_describe(root));
    const attn__jnode *kind = attn__jnode_member(root, "kind");
    char names[KIND_NAMES_CAP];
    kind_names(names);
    if (kind == NULL)
        return fail_outside(error, error_cap,
                            "kind: missing; expected one of %s", names);
    if (kind->type != ATTN__J_STRING)
        return fail_outside(error, error_cap,
                            "kind: expected one of %s, got %s", names,
                            attn__jnode_describe(kind));
    const int status = attn_problem_create(problem, kind->string, allocator);
    if (status == ATTN_ERR_OPTION) {
        fail_outside(error, error_cap,
                     "kind: unknown kind \"%s\"; expected one of %s",
                     kind->string, names);
        return status;
    }
    if (status != ATTN_OK && error_cap > 0)
        snprintf(error, error_cap, "%s",
                 status == ATTN_ERR_NOMEM ? "out of memory"
                                          : attn_status_text(status));
    return status;
}

int attn_problem_read_json(attn_problem **problem, char *error,
                           const char *text, const attn_allocator *allocator,
                           const char *limit_option, size_t length,
                           size_t max_bytes, size_t error_cap)
{
    if (problem == NULL || text == NULL || (error == NULL && error_cap > 0))
        return ATTN_ERR_NULL;
    *problem = NULL;
    attn__jtree tree;
    int status = attn__jtree_parse(&tree, error, text, allocator, limit_option,
                                   length, max_bytes, error_cap);
    attn_problem *made = NULL;
    if (status == ATTN_OK)
        status = create_of_kind(&made, error, tree.root, allocator, error_cap);
    if (status == ATTN_OK) {
        attn_problem_set_max_bytes(made, max_bytes);
        if (limit_option != NULL)
            snprintf(made->limit_option, sizeof made->limit_option, "%s",
                     limit_option);
        for (const attn__jnode *m = tree.root->child;
             m != NULL && status == ATTN_OK; m = m->next)
            if (strcmp(m->key, "kind") != 0) status = set_member(made, m);
        if (status != ATTN_OK && error_cap > 0)
            snprintf(error, error_cap, "%s", made->error);
    }
    attn__jtree_free(&tree);
    if (status != ATTN_OK) {
        attn_problem_destroy(made);
        return status;
    }
    attn__clear_error(made);
    *problem = made;
    return ATTN_OK;
}
