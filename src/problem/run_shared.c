/* run_shared.c: what several kinds' runs share, below every run_*.c so
 * that no run calls another's helpers in a circle: the dot-product
 * options (scaledDotProduct, multiHead, transformerBlock), q, k and v,
 * numHeads, reordering heads, results by rows, and the gradient field
 * shaped like the output. */
#include "attention.h"
#include "problem/problem.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- The dot-product options ---- */

#define MASK_EXPECTED "\"none\", \"causal\" or a boolean matrix"
#define TWO_TO_53 9007199254740992.0

/* A custom mask tensor: [n_q, n_k] (or [n_k] for a vector query) of 0/1,
 * copied into problem->allowed. */
static int check_mask_tensor(attn_problem *problem, const attn__value *mask,
                             int n_q, int n_k)
{
    const int as_vector = problem->info.vector_query && mask->rank == 1 &&
                          mask->dims[0] == n_k;
    if (!as_vector &&
        !(mask->rank == 2 && mask->dims[0] == n_q && mask->dims[1] == n_k)) {
        char got[64];
        attn__describe_value(got, sizeof got, mask);
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "mask: expected " MASK_EXPECTED
                          " %dx%d (n_q x n_k), got %s",
                          n_q, n_k, got);
    }
    problem->allowed = attn__allocate(problem, mask->count);
    if (problem->allowed == NULL)
        return attn__fail(problem, ATTN_ERR_NOMEM, "mask: out of memory");
    problem->info.options.mask.kinds |= ATTN_MASK_CUSTOM;
    problem->info.options.mask.allowed = problem->allowed;
    return attn__copy_booleans(problem, "mask", mask, problem->allowed);
}

static int check_mask(attn_problem *problem, int n_q, int n_k)
{
    const attn__value *mask = attn__field_value(problem, "mask");
    if (mask == NULL) return ATTN_OK;
    if (mask->type == ATTN__TENSOR)
        return check_mask_tensor(problem, mask, n_q, n_k);
    if (strcmp(mask->string, "causal") == 0)
        problem->info.options.mask.kinds |= ATTN_MASK_CAUSAL;
    else if (strcmp(mask->string, "none") != 0)
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "mask: expected " MASK_EXPECTED
                          " %dx%d (n_q x n_k), got \"%s\"",
                          n_q, n_k, mask->string);
    return ATTN_OK;
}

/* One key length: an integer in 0..n_k. path names it in messages. */
static int check_key_length(attn_problem *problem, const char *path, double x,
                            int n_k, int *out)
{
    char number[ATTN__NUMBER_CAP];
    attn__format_shortest(number, x);
    if (x != floor(x))
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "%s: expected an integer in 0..%d (n_k), got %s",
                          path, n_k, number);
    if (x < 0 || x > n_k)
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "%s: %s is outside 0..%d (n_k)", path, number, n_k);
    *out = (int)x;
    return ATTN_OK;
}

static int check_key_lengths(attn_problem *problem, int batch, int n_k)
{
    const attn__value *lengths = attn__field_value(problem, "keyLength");
    if (lengths == NULL) return ATTN_OK;
    if (lengths->type == ATTN__TENSOR &&
        !(lengths->rank == 1 && lengths->dims[0] == batch)) {
        char got[64];
        attn__describe_value(got, sizeof got, lengths);
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "keyLength: expected an integer or a vector of %d "
                          "(one per batch item), got %s",
                          batch, got);
    }
    problem->key_length = attn__allocate(problem, (size_t)batch * sizeof(int));
    if (problem->key_length == NULL)
        return attn__fail(problem, ATTN_ERR_NOMEM, "keyLength: out of memory");
    for (int b = 0; b < batch; b++) {
        char path[32] = "keyLength";
        if (lengths->type == ATTN__TENSOR)
            snprintf(path, sizeof path, "keyLength[%d]", b);
        const double x = lengths->type == ATTN__TENSOR ? lengths->data[b]
                                                       : lengths->number;
        const int status = check_key_length(problem, path, x, n_k,
                                            &problem->key_length[b]);
        if (status != ATTN_OK) return status;
    }
    problem->info.options.mask.kinds |= ATTN_MASK_KEY_PADDING;
    problem->info.options.mask.key_length = problem->key_length;
    return ATTN_OK;
}

/* An optional integer option in min..INT_MAX into *out. */
static int check_int_option(attn_problem *problem, const char *field, int min,
                            const char *expected, int *out, int *given)
{
    const attn__value *value = attn__field_value(problem, field);
    *given = value != NULL;
    if (value == NULL) return ATTN_OK;
    double x;
    const int status = attn__check_integer(problem, field, value, min, INT_MAX,
                                           expected, &x);
    if (status == ATTN_OK) *out = (int)x;
    return status;
}

static int check_scale(attn_problem *problem)
{
    attn_options *opts = &problem->info.options;
    const attn__value *scale = attn__field_value(problem, "scale");
    if (scale == NULL) return ATTN_OK;
    if (scale->type == ATTN__BOOL) {
        opts->scale_kind = scale->number != 0 ? ATTN_SCALE_INV_SQRT_DK
                                              : ATTN_SCALE_NONE;
    } else {
        opts->scale_kind = ATTN_SCALE_FACTOR;
        opts->scale_factor = scale->number;
    }
    return ATTN_OK;
}

static int check_dropout(attn_problem *problem)
{
    attn_options *opts = &problem->info.options;
    const attn__value *dropout = attn__field_value(problem, "dropout");
    if (dropout != NULL) {
        if (!(dropout->number >= 0.0 && dropout->number < 1.0)) {
            char got[ATTN__NUMBER_CAP];
            attn__format_shortest(got, dropout->number);
            return attn__fail(problem, ATTN_ERR_INPUT,
                              "dropout: expected a probability in [0, 1), "
                              "got %s",
                              got);
        }
        opts->dropout = dropout->number;
    }
    const attn__value *seed = attn__field_value(problem, "seed");
    if (seed != NULL) {
        double x;
        const int status = attn__check_integer(
            problem, "seed", seed, 0, TWO_TO_53, "an integer in 0..2^53", &x);
        if (status != ATTN_OK) return status;
        opts->seed = (uint64_t)x;
    }
    return ATTN_OK;
}

/* Every option scaledDotProduct and multiHead share, into info.options,
 * then the scale factor for d_k (0 = d_k unknown: needs an explicit scale,
 * which the caller checked). */
int attn__check_dot_options(attn_problem *problem, int batch, int n_q, int n_k)
{
    attn_options *opts = &problem->info.options;
    attn_options_init(opts);
    int status = check_mask(problem, n_q, n_k);
    if (status == ATTN_OK) status = check_key_lengths(problem, batch, n_k);
    int given = 0;
    if (status == ATTN_OK)
        status = check_int_option(problem, "window", 0,
                                  "a non-negative integer", &opts->mask.window,
                                  &given);
    if (given) opts->mask.kinds |= ATTN_MASK_LOCAL;
    given = 0;
    if (status == ATTN_OK)
        status = check_int_option(problem, "stride", 1, "a positive integer",
                                  &opts->mask.stride, &given);
    if (given) opts->mask.kinds |= ATTN_MASK_STRIDED;
    if (status == ATTN_OK) status = check_scale(problem);
    if (status == ATTN_OK) status = check_dropout(problem);
    return status;
}

/* ---- q, k and v (scaledDotProduct, linear, onlineSoftmax) ---- */

int attn__check_qkv(attn_problem *problem)
{
    const attn__value *q = attn__field_value(problem, "q");
    const attn__value *k = attn__field_value(problem, "k");
    const attn__value *v = attn__field_value(problem, "v");
    if (q == NULL) return attn__fail_missing(problem, "q");
    if (k == NULL) return attn__fail_missing(problem, "k");
    if (v == NULL) return attn__fail_missing(problem, "v");
    attn__run_info *info = &problem->info;
    attn__take_query_shape(problem, q);
    info->d_k = attn__shape_of(q).cols;
    const int batch = info->batched ? info->batch : 0;
    const attn__dim d_k = {info->d_k, info->vector_query
                                          ? "d_k, the length of q"
                                          : "d_k, the columns of q"};
    int status = attn__check_matrix(problem, "k", k, batch, ATTN__ANY, d_k);
    if (status != ATTN_OK) return status;
    info->n_k = attn__shape_of(k).rows;
    const attn__dim n_k = {info->n_k, "n_k, the rows of k"};
    status = attn__check_matrix(problem, "v", v, batch, n_k, ATTN__ANY);
    info->d_v = attn__shape_of(v).cols;
    return status;
}

/* ---- Heads (multiHead, transformerBlock) ---- */

int attn__check_token_rows(attn_problem *problem, const char *expected)
{
    attn__run_info *info = &problem->info;
    const attn__value *x = attn__field_value(problem, "x");
    if (x == NULL) return attn__fail_missing(problem, "x");
    if (x->rank == 1) return attn__fail_expected(problem, "x", expected, x);
    const attn__shape shape = attn__shape_of(x);
    info->batch = shape.batch;
    info->batched = shape.batched;
    info->n_q = info->n_k = shape.rows;
    info->d_in = info->d_kv_in = shape.cols;
    return ATTN_OK;
}

int attn__check_heads(attn_problem *problem)
{
    attn__run_info *info = &problem->info;
    const attn__value *heads = attn__field_value(problem, "numHeads");
    if (heads == NULL) return attn__fail_missing(problem, "numHeads");
    double x;
    const int status = attn__check_integer(problem, "numHeads", heads, 1,
                                           INT_MAX, "a positive integer", &x);
    if (status != ATTN_OK) return status;
    info->num_heads = (int)x;
    if (info->d_model % info->num_heads != 0)
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "numHeads: %d does not divide d_model %d (the "
                          "columns of wq)",
                          info->num_heads, info->d_model);
    info->d_k = info->d_v = info->d_model / info->num_heads;
    return ATTN_OK;
}

/* Reorders [batch, heads, rows, cols] into [heads, batch, rows, cols], so
 * that each head's results are one block. */
void attn__heads_first(double *out, const double *in, int batch, int heads,
                       size_t block)
{
    for (int b = 0; b < batch; b++)
        for (int h = 0; h < heads; h++)
            memcpy(out + ((size_t)h * (size_t)batch + (size_t)b) * block,
                   in + ((size_t)b * (size_t)heads + (size_t)h) * block,
                   block * sizeof(double));
}

/* ---- Results and gradients ---- */

double *attn__add_rows_result(attn_problem *problem, const char *name,
                              int heads, int rows, int cols)
{
    const attn__run_info *info = &problem->info;
    int rank = 0, dims[ATTN__MAX_RANK];
    if (info->batched) dims[rank++] = info->batch;
    dims[rank++] = rows;
    dims[rank++] = cols;
    return attn__add_result(problem, name, heads, rank, dims);
}

int attn__check_grad_output(attn_problem *problem, const char *field, int rows,
                            const char *rows_why, int cols,
                            const char *cols_why)
{
    const attn__value *value = attn__field_value(problem, field);
    const attn__run_info *info = &problem->info;
    const attn__dim col_dim = {cols, cols_why};
    if (info->vector_query)
        return attn__check_vector(problem, field, value, col_dim);
    const attn__dim row_dim = {rows, rows_why};
    return attn__check_matrix(problem, field, value,
                              info->batched ? info->batch : 0, row_dim,
                              col_dim);
}
