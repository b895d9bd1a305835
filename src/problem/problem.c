/* problem.c: the attn_problem lifecycle: kinds and their fields, create
 * and destroy, setters, running (each kind's run_*.c) and reading results
 * and the error message; what a problem holds is store.c's. */
#include "attention.h"
#include "problem/problem.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Kinds and their fields (JS API names) ---- */

#define MASK_EXPECTED "\"none\", \"causal\" or a boolean matrix n_q x n_k"

/* clang-format would break these macros' brace initializers apart. */
/* clang-format off */
/* Labels of rows (queries) and columns (keys). */
#define LABEL_FIELDS                                                         \
    {"tokens", ATTN__STRINGS, "a list of labels, one per token"},            \
    {"queryTokens", ATTN__STRINGS, "a list of labels, one per query"},       \
    {"keyTokens", ATTN__STRINGS, "a list of labels, one per key"}

/* The options scaledDotProduct and multiHead share. */
#define DOT_PRODUCT_OPTIONS                                                  \
    {"mask", ATTN__STRING | ATTN__TENSOR, MASK_EXPECTED},                    \
    {"keyLength", ATTN__NUMBER | ATTN__TENSOR,                               \
     "an integer in 0..n_k, or a vector of one per batch item"},             \
    {"window", ATTN__NUMBER, "a non-negative integer"},                      \
    {"stride", ATTN__NUMBER, "a positive integer"},                          \
    {"scale", ATTN__BOOL | ATTN__NUMBER,                                     \
     "true (1/√d_k), false (no scaling) or a number"},                       \
    {"dropout", ATTN__NUMBER, "a probability in [0, 1)"},                    \
    {"seed", ATTN__NUMBER, "an integer in 0..2^53"},                         \
    LABEL_FIELDS
/* clang-format on */

static const attn__field sdpa_fields[] = {
    {"q", ATTN__TENSOR, "a matrix n_q x d_k"},
    {"k", ATTN__TENSOR, "a matrix n_k x d_k"},
    {"v", ATTN__TENSOR, "a matrix n_k x d_v"},
    {"scores", ATTN__TENSOR, "a matrix n_q x n_k"},
    {"dk", ATTN__NUMBER, "a positive integer"},
    {"gradOutput", ATTN__TENSOR, "a matrix n_q x d_v, dL/d(output)"},
    {"target", ATTN__TENSOR,
     "a matrix n_q x d_v: the loss is ½‖output − target‖², so "
     "gradOutput = output − target"},
    DOT_PRODUCT_OPTIONS,
};

static const attn__field weighted_sum_fields[] = {
    {"weights", ATTN__TENSOR, "a matrix n_q x n_k"},
    {"v", ATTN__TENSOR, "a matrix n_k x d_v"},
    LABEL_FIELDS,
};

static const attn__field multihead_fields[] = {
    {"x", ATTN__TENSOR, "a matrix n_q x d_in"},
    {"xkv", ATTN__TENSOR, "a matrix n_kv x d_kv_in"},
    {"numHeads", ATTN__NUMBER, "a positive integer"},
    {"wq", ATTN__TENSOR, "a matrix d_in x d_model"},
    {"wk", ATTN__TENSOR, "a matrix d_kv_in x d_model"},
    {"wv", ATTN__TENSOR, "a matrix d_kv_in x d_model"},
    {"wo", ATTN__TENSOR, "a matrix d_model x d_out"},
    {"bq", ATTN__TENSOR, "a vector of d_model"},
    {"bk", ATTN__TENSOR, "a vector of d_model"},
    {"bv", ATTN__TENSOR, "a vector of d_model"},
    {"bo", ATTN__TENSOR, "a vector of d_out"},
    {"gradOutput", ATTN__TENSOR, "a matrix n_q x d_out, dL/d(output)"},
    DOT_PRODUCT_OPTIONS,
};

static const attn__field additive_fields[] = {
    {"query", ATTN__TENSOR, "a vector of d_s or a matrix n_q x d_s"},
    {"keys", ATTN__TENSOR, "a matrix n_k x d_h"},
    {"ws", ATTN__TENSOR, "a matrix d_s x d_a"},
    {"wh", ATTN__TENSOR, "a matrix d_h x d_a"},
    {"v", ATTN__TENSOR, "a vector of d_a"},
    {"b", ATTN__TENSOR, "a vector of d_a"},
    {"tokens", ATTN__STRINGS, "a list of labels, one per key"},
    {"gradContext", ATTN__TENSOR,
     "a vector of d_h or a matrix n_q x d_h, dL/d(context)"},
};

static const attn__field luong_fields[] = {
    {"query", ATTN__TENSOR, "a vector of d_s or a matrix n_q x d_s"},
    {"keys", ATTN__TENSOR, "a matrix n_k x d_h"},
    {"method", ATTN__STRING, "\"dot\", \"general\" or \"concat\""},
    {"w", ATTN__TENSOR,
     "a matrix d_h x d_s (general) or (d_s + d_h) x d_a (concat)"},
    {"v", ATTN__TENSOR, "a vector of d_a (concat)"},
    {"b", ATTN__TENSOR, "a vector of d_a (concat)"},
    {"tokens", ATTN__STRINGS, "a list of labels, one per key"},
    {"gradContext", ATTN__TENSOR,
     "a vector of d_h or a matrix n_q x d_h, dL/d(context)"},
};

static const attn__field linear_fields[] = {
    {"q", ATTN__TENSOR, "a matrix n_q x d_k"},
    {"k", ATTN__TENSOR, "a matrix n_k x d_k"},
    {"v", ATTN__TENSOR, "a matrix n_k x d_v"},
    {"causal", ATTN__BOOL, "true or false"},
    LABEL_FIELDS,
    {"gradOutput", ATTN__TENSOR, "a matrix n_q x d_v, dL/d(output)"},
};

static const attn__field online_fields[] = {
    {"q", ATTN__TENSOR, "a matrix n_q x d_k"},
    {"k", ATTN__TENSOR, "a matrix n_k x d_k"},
    {"v", ATTN__TENSOR, "a matrix n_k x d_v"},
    {"tile", ATTN__NUMBER, "a positive integer, keys per tile"},
    LABEL_FIELDS,
};

static const attn__field softmax_fields[] = {
    {"x", ATTN__TENSOR, "a vector or a matrix of scores"},
    {"scale", ATTN__NUMBER, "a number"},
    {"mask", ATTN__TENSOR, "a boolean tensor shaped like x"},
    {"queryTokens", ATTN__STRINGS, "a list of labels, one per row"},
    {"keyTokens", ATTN__STRINGS, "a list of labels, one per entry"},
};

static const attn__field transformer_block_fields[] = {
    {"x", ATTN__TENSOR, "a matrix n x d_model"},
    {"numHeads", ATTN__NUMBER, "a positive integer"},
    {"wq", ATTN__TENSOR, "a matrix d_model x d_model"},
    {"wk", ATTN__TENSOR, "a matrix d_model x d_model"},
    {"wv", ATTN__TENSOR, "a matrix d_model x d_model"},
    {"wo", ATTN__TENSOR, "a matrix d_model x d_model"},
    {"bq", ATTN__TENSOR, "a vector of d_model"},
    {"bk", ATTN__TENSOR, "a vector of d_model"},
    {"bv", ATTN__TENSOR, "a vector of d_model"},
    {"bo", ATTN__TENSOR, "a vector of d_model"},
    {"gamma1", ATTN__TENSOR, "a vector of d_model"},
    {"beta1", ATTN__TENSOR, "a vector of d_model"},
    {"w1", ATTN__TENSOR, "a matrix d_model x d_ff"},
    {"b1", ATTN__TENSOR, "a vector of d_ff"},
    {"w2", ATTN__TENSOR, "a matrix d_ff x d_model"},
    {"b2", ATTN__TENSOR, "a vector of d_model"},
    {"gamma2", ATTN__TENSOR, "a vector of d_model"},
    {"beta2", ATTN__TENSOR, "a vector of d_model"},
    {"norm", ATTN__STRING, "\"post\" or \"pre\""},
    {"gradOutput", ATTN__TENSOR, "a matrix n x d_model, dL/d(output)"},
    DOT_PRODUCT_OPTIONS,
};

/* clang-format off */
#define KIND(name, id, fields, run) \
    {name, id, fields, (int)(sizeof fields / sizeof fields[0]), run}
/* clang-format on */

static const attn__kind kinds[] = {
    KIND("scaledDotProduct", ATTN__KIND_SDPA, sdpa_fields, attn__run_sdpa),
    KIND("weightedSum", ATTN__KIND_WEIGHTED_SUM, weighted_sum_fields,
         attn__run_weighted_sum),
    KIND("multiHead", ATTN__KIND_MULTIHEAD, multihead_fields,
         attn__run_multihead),
    KIND("additive", ATTN__KIND_ADDITIVE, additive_fields, attn__run_additive),
    KIND("luong", ATTN__KIND_LUONG, luong_fields, attn__run_luong),
    KIND("linear", ATTN__KIND_LINEAR, linear_fields, attn__run_linear),
    KIND("softmax", ATTN__KIND_SOFTMAX, softmax_fields, attn__run_softmax),
    KIND("transformerBlock", ATTN__KIND_TRANSFORMER_BLOCK,
         transformer_block_fields, attn__run_transformer_block),
    KIND("onlineSoftmax", ATTN__KIND_ONLINE_SOFTMAX, online_fields,
         attn__run_online),
};

enum { KIND_COUNT = (int)(sizeof kinds / sizeof kinds[0]) };

static const attn__kind *find_kind(const char *name)
{
    for (int i = 0; i < KIND_COUNT; i++)
        if (strcmp(kinds[i].name, name) == 0) return &kinds[i];
    return NULL;
}

const attn__kind *attn__kind_at(int index)
{
    return index >= 0 && index < KIND_COUNT ? &kinds[index] : NULL;
}

const char *attn_problem_kind(int index)
{
    const attn__kind *kind = attn__kind_at(index);
    return kind != NULL ? kind->name : NULL;
}

static void release_value(attn_problem *problem, attn__value *value)
{
    attn__release(problem, value->data);
    attn__release(problem, value->string);
    if (value->strings != NULL)
        for (int i = 0; i < value->strings_count; i++)
            attn__release(problem, value->strings[i]);
    attn__release(problem, value->strings);
    memset(value, 0, sizeof *value);
}

static void clear_results(attn_problem *problem)
{
    for (int i = 0; i < problem->result_count; i++)
        attn__release(problem, problem->results[i].data);
    problem->result_count = 0;
    attn__release(problem, problem->key_length);
    attn__release(problem, problem->allowed);
    problem->key_length = NULL;
    problem->allowed = NULL;
    problem->has_run = 0;
    problem->over_limit = 0;
    memset(&problem->info, 0, sizeof problem->info);
}

const char *attn_problem_error(const attn_problem *problem)
{
    return problem != NULL ? problem->error : "";
}

/* ---- Create and destroy ---- */

int attn_problem_create(attn_problem **problem, const char *kind,
                        const attn_allocator *allocator)
{
    if (problem == NULL) return ATTN_ERR_NULL;
    *problem = NULL;
    if (kind == NULL) return ATTN_ERR_NULL;
    const attn_allocator *use = attn__allocator_or_default(allocator);
    if (use == NULL) return ATTN_ERR_NULL;
    const attn__kind *spec = find_kind(kind);
    if (spec == NULL) return ATTN_ERR_OPTION;

    attn_problem *made = use->allocate(use->context, sizeof *made);
    if (made == NULL) return ATTN_ERR_NOMEM;
    memset(made, 0, sizeof *made);
    made->allocator = *use;
    made->kind = spec;
    made->max_bytes = ATTN_PROBLEM_DEFAULT_MAX_BYTES;
    made->values = attn__allocate(made, (size_t)spec->field_count *
                                            sizeof made->values[0]);
    made->error = attn__allocate(made, ATTN__ERROR_CAP);
    if (made->values == NULL || made->error == NULL) {
        attn__release(made, made->values);
        attn__release(made, made->error);
        use->release(use->context, made);
        return ATTN_ERR_NOMEM;
    }
    memset(made->values, 0, (size_t)spec->field_count * sizeof made->values[0]);
    made->error[0] = '\0';
    *problem = made;
    return ATTN_OK;
}

void attn_problem_destroy(attn_problem *problem)
{
    if (problem == NULL) return;
    clear_results(problem);
    for (int i = 0; i < problem->kind->field_count; i++)
        release_value(problem, &problem->values[i]);
    attn__release(problem, problem->values);
    attn__release(problem, problem->error);
    const attn_allocator allocator = problem->allocator;
    allocator.release(allocator.context, problem);
}

/* ---- Limits ---- */

int attn_problem_set_max_bytes(attn_problem *problem, size_t max_bytes)
{
    if (problem == NULL) return ATTN_ERR_NULL;
    attn__clear_error(problem);
    problem->max_bytes = max_bytes > 0 ? max_bytes
                                       : ATTN_PROBLEM_DEFAULT_MAX_BYTES;
    return ATTN_OK;
}

/* ATTN_ERR_INPUT naming `what` (a field, "tokens[1]") unless string is
 * valid UTF-8: every string a problem keeps is, so every renderer writes
 * only UTF-8. */
static int check_utf8(attn_problem *problem, const char *what,
                      const char *string)
{
    const size_t length = strlen(string);
    const size_t bad = attn__utf8_check(string, length);
    if (bad == length) return ATTN_OK;
    return attn__fail(problem, ATTN_ERR_INPUT,
                      "%s: must be valid UTF-8 (byte %zu is 0x%02x)", what,
                      bad + 1, (unsigned)(unsigned char)string[bad]);
}

void attn__problem_set_inputs_origin(attn_problem *problem,
                                     const char *sentence)
{
    problem->inputs_origin = sentence;
}

int attn_problem_set_document(attn_problem *problem, const char *title,
                              int heading_level)
{
    if (problem == NULL) return ATTN_ERR_NULL;
    attn__clear_error(problem);
    if (heading_level < 0 || heading_level > 4)
        return attn__fail(problem, ATTN_ERR_RANGE,
                          "heading level: must be 1 to 4 (0 for 1), got %d",
                          heading_level);
    const size_t length = title != NULL ? strlen(title) : 0;
    if (length > ATTN_TITLE_MAX)
        return attn__fail(problem, ATTN_ERR_RANGE,
                          "title: at most %d bytes, got %zu", ATTN_TITLE_MAX,
                          length);
    for (size_t i = 0; i < length; i++)
        if ((unsigned char)title[i] < 0x20 || title[i] == 0x7f)
            return attn__fail(problem, ATTN_ERR_INPUT,
                              "title: must not hold control characters "
                              "(byte %zu is 0x%02x)",
                              i + 1, (unsigned)(unsigned char)title[i]);
    if (title != NULL && check_utf8(problem, "title", title) != ATTN_OK)
        return ATTN_ERR_INPUT;
    memcpy(problem->title, title != NULL ? title : "", length + 1);
    problem->heading_offset = heading_level > 0 ? heading_level - 1 : 0;
    return ATTN_OK;
}

static int fail_unknown_field(const attn_problem *problem, const char *field)
{
    char names[ATTN__ERROR_CAP];
    attn__text list;
    attn__text_init(&list, names, sizeof names);
    for (int i = 0; i < problem->kind->field_count; i++)
        attn__text_printf(&list, "%s%s", i > 0 ? ", " : "",
                          problem->kind->fields[i].name);
    return attn__fail(problem, ATTN_ERR_INPUT,
                      "%s: unknown field for kind \"%s\" (fields: %s)", field,
                      problem->kind->name, names);
}

/*
 * The common start of every setter: the problem and the field exist and
 * accept a value of this type (described by `given` for the message).
 * Returns the field's index, or -1 after writing the error into *status.
 */
static int begin_set(attn_problem *problem, const char *field, unsigned type,
                     const attn__value *given, int *status)
{
    attn__clear_error(problem);
    const attn__field *spec = attn__field_spec(problem, field);
    if (spec == NULL) {
        *status = fail_unknown_field(problem, field);
        return -1;
    }
    if (!(spec->types & type)) {
        char got[ATTN__ERROR_CAP / 2];
        attn__describe_value(got, sizeof got, given);
        *status = attn__fail(problem, ATTN_ERR_INPUT, "%s: expected %s, got %s",
                             field, spec->expected, got);
        return -1;
    }
    return (int)(spec - problem->kind->fields);
}

/* Stores a complete new value for field `index`, replacing the old one. */
static void store_value(attn_problem *problem, int index,
                        const attn__value *value)
{
    clear_results(problem);
    release_value(problem, &problem->values[index]);
    problem->values[index] = *value;
}

static char *copy_string(attn_problem *problem, const char *string)
{
    const size_t bytes = strlen(string) + 1;
    char *copy = attn__allocate(problem, bytes);
    if (copy != NULL) memcpy(copy, string, bytes);
    return copy;
}

/* Checks a tensor's dimensions; value already holds its rank and dims, and
 * gets its count. */
static int check_shape(attn_problem *problem, const char *field,
                       attn__value *value)
{
    char shape[64];
    attn__describe_value(shape, sizeof shape, value);
    size_t count = 1;
    for (int d = 0; d < value->rank; d++)
        if (value->dims[d] < 1)
            return attn__fail(problem, ATTN_ERR_INPUT,
                              "%s: every dimension must be at least 1, got %s",
                              field, shape);
    for (int d = 0; d < value->rank; d++) {
        if (count > SIZE_MAX / sizeof(double) / (size_t)value->dims[d])
            return attn__fail(problem, ATTN_ERR_INPUT, "%s: %s is too large",
                              field, shape);
        count *= (size_t)value->dims[d];
    }
    value->count = count;
    return ATTN_OK;
}

/* Every entry finite; read only once the tensor is known to be within the
 * problem's limit, so that dims larger than the data are refused by their
 * size before a byte past it is read. */
static int check_finite(attn_problem *problem, const char *field,
                        const double *data, const attn__value *value)
{
    for (size_t i = 0; i < value->count; i++) {
        if (!isfinite(data[i])) {
            char path[96];
            attn__entry_path(path, sizeof path, field, value->rank, value->dims,
                             i);
            return attn__fail(problem, ATTN_ERR_INPUT,
                              "%s: expected a finite number, got %g", path,
                              data[i]);
        }
    }
    return ATTN_OK;
}

int attn_problem_set_tensor(attn_problem *problem, const char *field, int rank,
                            const int *dims, const double *data)
{
    if (problem == NULL) return ATTN_ERR_NULL;
    if (field == NULL || dims == NULL || data == NULL)
        return attn__fail(problem, ATTN_ERR_NULL,
                          "attn_problem_set_tensor: field, dims and data "
                          "must not be NULL");
    attn__value value = {.type = ATTN__TENSOR};
    if (rank >= 1 && rank <= ATTN__MAX_RANK) {
        value.rank = rank;
        for (int d = 0; d < rank; d++) value.dims[d] = dims[d];
    }
    int status;
    const int index = begin_set(problem, field, ATTN__TENSOR, &value, &status);
    if (index < 0) return status;
    if (value.rank == 0)
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "%s: expected 1 to 3 dimensions, got %d", field,
                          rank);
    status = check_shape(problem, field, &value);
    if (status != ATTN_OK) return status;
    const attn__value *old = &problem->values[index];
    size_t total;
    if (attn__within_limit(problem, value.count * sizeof(double),
                           old->data != NULL ? old->count * sizeof(double) : 0,
                           &total) != ATTN_OK) {
        char shape[64];
        attn__describe_value(shape, sizeof shape, &value);
        return attn__fail(problem, ATTN_ERR_TOO_LARGE,
                          "%s: %s would make the problem hold %zu bytes, "
                          "more than its limit of %zu bytes; use smaller "
                          "inputs or raise the limit (maxBytes in the JS "
                          "API, --max-bytes in build/attn)",
                          field, shape, total, problem->max_bytes);
    }
    status = check_finite(problem, field, data, &value);
    if (status != ATTN_OK) return status;
    value.data = attn__allocate(problem, value.count * sizeof(double));
    if (value.data == NULL)
        return attn__fail(problem, ATTN_ERR_NOMEM, "%s: out of memory", field);
    memcpy(value.data, data, value.count * sizeof(double));
    store_value(problem, index, &value);
    return ATTN_OK;
}

int attn_problem_set_number(attn_problem *problem, const char *field,
                            double number)
{
    if (problem == NULL) return ATTN_ERR_NULL;
    if (field == NULL)
        return attn__fail(problem, ATTN_ERR_NULL,
                          "attn_problem_set_number: field must not be NULL");
    const attn__value value = {.type = ATTN__NUMBER, .number = number};
    int status;
    const int index = begin_set(problem, field, ATTN__NUMBER, &value, &status);
    if (index < 0) return status;
    if (!isfinite(number))
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "%s: expected a finite number, got %g", field,
                          number);
    store_value(problem, index, &value);
    return ATTN_OK;
}

int attn_problem_set_bool(attn_problem *problem, const char *field, int flag)
{
    if (problem == NULL) return ATTN_ERR_NULL;
    if (field == NULL)
        return attn__fail(problem, ATTN_ERR_NULL,
                          "attn_problem_set_bool: field must not be NULL");
    const attn__value value = {.type = ATTN__BOOL, .number = flag ? 1 : 0};
    int status;
    const int index = begin_set(problem, field, ATTN__BOOL, &value, &status);
    if (index < 0) return status;
    store_value(problem, index, &value);
    return ATTN_OK;
}

int attn_problem_set_string(attn_problem *problem, const char *field,
                            const char *string)
{
    if (problem == NULL) return ATTN_ERR_NULL;
    if (field == NULL || string == NULL)
        return attn__fail(problem, ATTN_ERR_NULL,
                          "attn_problem_set_string: field and value must "
                          "not be NULL");
    /* Before the value is quoted in any message. */
    if (check_utf8(problem, field, string) != ATTN_OK) return ATTN_ERR_INPUT;
    /* Described through a const-free view of the caller's text. */
    char preview[ATTN__ERROR_CAP / 4];
    snprintf(preview, sizeof preview, "%s", string);
    attn__value value = {.type = ATTN__STRING, .string = preview};
    int status;
    const int index = begin_set(problem, field, ATTN__STRING, &value, &status);
    if (index < 0) return status;
    value.string = copy_string(problem, string);
    if (value.string == NULL)
        return attn__fail(problem, ATTN_ERR_NOMEM, "%s: out of memory", field);
    store_value(problem, index, &value);
    return ATTN_OK;
}

int attn_problem_set_strings(attn_problem *problem, const char *field,
                             int count, const char *const *strings)
{
    if (problem == NULL) return ATTN_ERR_NULL;
    if (field == NULL || count < 0 || (count > 0 && strings == NULL))
        return attn__fail(problem, ATTN_ERR_NULL,
                          "attn_problem_set_strings: field and values must "
                          "not be NULL, count not negative");
    attn__value value = {.type = ATTN__STRINGS, .strings_count = count};
    int status;
    const int index = begin_set(problem, field, ATTN__STRINGS, &value, &status);
    if (index < 0) return status;
    for (int i = 0; i < count; i++) {
        if (strings[i] == NULL)
            return attn__fail(problem, ATTN_ERR_NULL,
                              "%s[%d]: must not be NULL", field, i);
        char what[ATTN__ERROR_CAP / 4];
        snprintf(what, sizeof what, "%s[%d]", field, i);
        if (check_utf8(problem, what, strings[i]) != ATTN_OK)
            return ATTN_ERR_INPUT;
    }
    value.strings = attn__allocate(problem, (size_t)count * sizeof(char *));
    if (value.strings == NULL)
        return attn__fail(problem, ATTN_ERR_NOMEM, "%s: out of memory", field);
    for (int i = 0; i < count; i++) {
        value.strings[i] = copy_string(problem, strings[i]);
        if (value.strings[i] == NULL) {
            value.strings_count = i;
            release_value(problem, &value);
            return attn__fail(problem, ATTN_ERR_NOMEM, "%s: out of memory",
                              field);
        }
    }
    store_value(problem, index, &value);
    return ATTN_OK;
}

/* ---- Running ---- */

int attn_problem_run(attn_problem *problem)
{
    if (problem == NULL) return ATTN_ERR_NULL;
    attn__clear_error(problem);
    clear_results(problem);
    const int status = problem->kind->run(problem);
    if (status != ATTN_OK) {
        clear_results(problem);
        return status;
    }
    problem->has_run = 1;
    problem->run_count++;
    return ATTN_OK;
}

static int fail_unknown_result(const attn_problem *problem, const char *name)
{
    char names[ATTN__ERROR_CAP];
    attn__text list;
    attn__text_init(&list, names, sizeof names);
    for (int i = 0; i < problem->result_count; i++)
        attn__text_printf(&list, "%s%s%s", i > 0 ? ", " : "",
                          problem->results[i].heads > 0 ? "heads.<h>." : "",
                          problem->results[i].name);
    return attn__fail(problem, ATTN_ERR_INPUT,
                      "result: no result named \"%s\" for kind \"%s\" "
                      "(results: %s)",
                      name, problem->kind->name, names);
}

/* "heads.<h>.<name>": the head index into *head and the name after it. */
static const char *parse_head_name(const char *name, long *head)
{
    static const char prefix[] = "heads.";
    if (strncmp(name, prefix, sizeof prefix - 1) != 0) return NULL;
    const char *digits = name + sizeof prefix - 1;
    if (*digits < '0' || *digits > '9') return NULL;
    char *end;
    *head = strtol(digits, &end, 10);
    return *end == '.' ? end + 1 : NULL;
}

int attn_problem_result(const attn_problem *problem, const char *name,
                        int *rank, int dims[3], const double **data)
{
    if (problem == NULL) return ATTN_ERR_NULL;
    attn__clear_error(problem);
    if (name == NULL || rank == NULL || dims == NULL || data == NULL)
        return attn__fail(problem, ATTN_ERR_NULL,
                          "attn_problem_result: name, rank, dims and data "
                          "must not be NULL");
    if (!problem->has_run)
        return attn__fail(problem, ATTN_ERR_STATE,
                          "result: no results yet; attn_problem_run must "
                          "succeed first");
    long head = 0;
    const char *head_field = parse_head_name(name, &head);
    const attn__result *result = attn__find_result(
        problem, head_field ? head_field : name, head_field != NULL);
    if (result == NULL) return fail_unknown_result(problem, name);
    if (head_field != NULL && (head < 0 || head >= result->heads))
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "result: %s: head %ld is outside 0..%d (numHeads "
                          "%d)",
                          name, head, result->heads - 1, result->heads);
    *rank = result->rank;
    for (int d = 0; d < ATTN__MAX_RANK; d++)
        dims[d] = d < result->rank ? result->dims[d] : 0;
    *data = result->data + (size_t)head * result->count;
    return ATTN_OK;
}

const char *attn_problem_result_name(const attn_problem *problem, int index,
                                     int *heads)
{
    if (problem == NULL || !problem->has_run || index < 0 ||
        index >= problem->result_count)
        return NULL;
    if (heads != NULL) *heads = problem->results[index].heads;
    return problem->results[index].name;
}
