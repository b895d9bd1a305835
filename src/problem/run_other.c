/* run_other.c: checking and running weightedSum, additive, luong,
 * linear and softmax problems. */
#include "attention.h"
#include "problem/problem.h"

#include <math.h>
#include <string.h>

/* ---- weightedSum ---- */

int attn__run_weighted_sum(attn_problem *problem)
{
    attn__run_info *info = &problem->info;
    const attn__value *weights = attn__field_value(problem, "weights");
    const attn__value *v = attn__field_value(problem, "v");
    if (weights == NULL) return attn__fail_missing(problem, "weights");
    if (v == NULL) return attn__fail_missing(problem, "v");
    attn__take_query_shape(problem, weights);
    info->n_k = attn__shape_of(weights).cols;
    const attn__dim n_k = {info->n_k, info->vector_query
                                          ? "n_k, the length of weights"
                                          : "n_k, the columns of weights"};
    int status = attn__check_matrix(
        problem, "v", v, info->batched ? info->batch : 0, n_k, ATTN__ANY);
    if (status != ATTN_OK) return status;
    info->d_v = attn__shape_of(v).cols;
    status = attn__check_tokens(problem, info->n_q, info->n_k, 1);
    if (status != ATTN_OK) return status;
    double *output = attn__add_query_result(problem, "output", 1, info->d_v, 0);
    if (output == NULL) return attn__fail_nomem(problem);
    const size_t weights_item = (size_t)info->n_q * (size_t)info->n_k;
    const size_t v_item = (size_t)info->n_k * (size_t)info->d_v;
    const size_t output_item = (size_t)info->n_q * (size_t)info->d_v;
    for (int b = 0; b < info->batch && status == ATTN_OK; b++)
        status = attn_weighted_sum(output + (size_t)b * output_item,
                                   weights->data + (size_t)b * weights_item,
                                   v->data + (size_t)b * v_item, info->n_q,
                                   info->n_k, info->d_v);
    return status == ATTN_OK ? ATTN_OK
                             : attn__fail_core(problem, status, "weightedSum");
}

/* ---- additive and luong: a decoder query against encoder keys ---- */

/* query (a vector or a matrix, never a batch) and keys. */
static int check_query_keys(attn_problem *problem)
{
    attn__run_info *info = &problem->info;
    const attn__value *query = attn__field_value(problem, "query");
    const attn__value *keys = attn__field_value(problem, "keys");
    if (query == NULL) return attn__fail_missing(problem, "query");
    if (keys == NULL) return attn__fail_missing(problem, "keys");
    if (query->rank == 3)
        return attn__fail_expected(problem, "query",
                                   "a vector of d_s or a "
                                   "matrix n_q x d_s",
                                   query);
    attn__take_query_shape(problem, query);
    info->d_s = attn__shape_of(query).cols;
    const int status = attn__check_matrix(problem, "keys", keys, 0, ATTN__ANY,
                                          ATTN__ANY);
    if (status != ATTN_OK) return status;
    info->n_k = attn__shape_of(keys).rows;
    info->d_h = attn__shape_of(keys).cols;
    return ATTN_OK;
}

static const char *d_s_why(const attn__run_info *info)
{
    return info->vector_query ? "d_s, the length of query"
                              : "d_s, the columns of query";
}

/* Adds energy (when d_a > 0), scores, weights and context; 0 or NOMEM. */
static int add_attention_results(attn_problem *problem, double **energy,
                                 double **scores, double **weights,
                                 double **context)
{
    const attn__run_info *info = &problem->info;
    *energy = info->d_a > 0 ? attn__add_query_result(problem, "energy", 2,
                                                     info->n_k, info->d_a)
                            : NULL;
    *scores = attn__add_query_result(problem, "scores", 1, info->n_k, 0);
    *weights = attn__add_query_result(problem, "weights", 1, info->n_k, 0);
    *context = attn__add_query_result(problem, "context", 1, info->d_h, 0);
    if ((info->d_a > 0 && *energy == NULL) || *scores == NULL ||
        *weights == NULL || *context == NULL)
        return attn__fail_nomem(problem);
    return ATTN_OK;
}

static int check_additive(attn_problem *problem)
{
    attn__run_info *info = &problem->info;
    int status = check_query_keys(problem);
    const char *const required[] = {"ws", "wh", "v"};
    for (int i = 0; i < 3 && status == ATTN_OK; i++)
        if (attn__field_value(problem, required[i]) == NULL)
            status = attn__fail_missing(problem, required[i]);
    if (status != ATTN_OK) return status;
    const attn__dim d_s = {info->d_s, d_s_why(info)};
    status = attn__check_matrix(problem, "ws", attn__field_value(problem, "ws"),
                                0, d_s, ATTN__ANY);
    if (status != ATTN_OK) return status;
    info->d_a = attn__shape_of(attn__field_value(problem, "ws")).cols;
    const attn__dim d_h = {info->d_h, "d_h, the columns of keys"};
    const attn__dim d_a = {info->d_a, "d_a, the columns of ws"};
    status = attn__check_matrix(problem, "wh", attn__field_value(problem, "wh"),
                                0, d_h, d_a);
    if (status == ATTN_OK)
        status = attn__check_vector(problem, "v",
                                    attn__field_value(problem, "v"), d_a);
    if (status == ATTN_OK && attn__field_value(problem, "b") != NULL)
        status = attn__check_vector(problem, "b",
                                    attn__field_value(problem, "b"), d_a);
    if (status == ATTN_OK)
        status = attn__check_tokens(problem, info->n_q, info->n_k, 0);
    return status;
}

/* gradContext shaped like context: [n_q?] x d_h. */
static int check_grad_context(attn_problem *problem, int *want)
{
    *want = attn__field_value(problem, "gradContext") != NULL;
    if (!*want) return ATTN_OK;
    return attn__check_grad_output(problem, "gradContext", problem->info.n_q,
                                   "n_q, the rows of query", problem->info.d_h,
                                   "d_h, the columns of keys");
}

int attn__run_additive(attn_problem *problem)
{
    int want_grads = 0;
    int status = check_additive(problem);
    if (status == ATTN_OK) status = check_grad_context(problem, &want_grads);
    if (status != ATTN_OK) return status;
    const attn__run_info *info = &problem->info;
    double *energy, *scores, *weights, *context;
    status = add_attention_results(problem, &energy, &scores, &weights,
                                   &context);
    if (status != ATTN_OK) return status;
    double *work = attn__allocate_doubles(
        problem, attn_additive_work_size(info->n_k, info->d_s, info->d_a));
    if (work == NULL) return attn__fail_nomem(problem);
    status = attn_additive(
        energy, scores, weights, context, attn__data_of(problem, "query"),
        attn__data_of(problem, "keys"), attn__data_of(problem, "ws"),
        attn__data_of(problem, "wh"), attn__data_of(problem, "b"),
        attn__data_of(problem, "v"), info->n_q, info->n_k, info->d_s, info->d_h,
        info->d_a, work);
    attn__release(problem, work);
    if (status != ATTN_OK) return attn__fail_core(problem, status, "additive");
    return want_grads ? attn__additive_gradients(problem) : ATTN_OK;
}

static const char *const luong_methods[] = {"dot", "general", "concat"};

static int fail_unused(const attn_problem *problem, const char *field)
{
    return attn__fail(problem, ATTN_ERR_INPUT, "%s: not used by method \"%s\"",
                      field, luong_methods[problem->info.method]);
}

static int check_luong_method(attn_problem *problem)
{
    const attn__value *method = attn__field_value(problem, "method");
    if (method == NULL) return attn__fail_missing(problem, "method");
    for (int m = 0; m < 3; m++) {
        if (strcmp(method->string, luong_methods[m]) == 0) {
            problem->info.method = m;
            return ATTN_OK;
        }
    }
    return attn__fail(problem, ATTN_ERR_INPUT,
                      "method: expected \"dot\", \"general\" or \"concat\", "
                      "got \"%s\"",
                      method->string);
}

/* w, v and b as the method needs them. */
static int check_luong_weights(attn_problem *problem)
{
    attn__run_info *info = &problem->info;
    const attn__value *w = attn__field_value(problem, "w");
    const attn__value *v = attn__field_value(problem, "v");
    const attn__value *b = attn__field_value(problem, "b");
    if (info->method == ATTN_LUONG_DOT) {
        if (w != NULL) return fail_unused(problem, "w");
        if (info->d_h != info->d_s) {
            const attn__dim d_s = {
                info->d_s,
                info->vector_query
                    ? "d_s, the length of query, for method \"dot\""
                    : "d_s, the columns of query, for method \"dot\""};
            return attn__check_matrix(problem, "keys",
                                      attn__field_value(problem, "keys"), 0,
                                      ATTN__ANY, d_s);
        }
    }
    if (info->method != ATTN_LUONG_CONCAT) {
        if (v != NULL) return fail_unused(problem, "v");
        if (b != NULL) return fail_unused(problem, "b");
    }
    if (info->method == ATTN_LUONG_DOT) return ATTN_OK;
    if (w == NULL) return attn__fail_missing(problem, "w");
    if (info->method == ATTN_LUONG_GENERAL) {
        const attn__dim d_h = {info->d_h, "d_h, the columns of keys"};
        const attn__dim d_s = {info->d_s, d_s_why(info)};
        return attn__check_matrix(problem, "w", w, 0, d_h, d_s);
    }
    const attn__dim d_in = {info->d_s + info->d_h,
                            "d_s + d_h, the widths of query and keys"};
    int status = attn__check_matrix(problem, "w", w, 0, d_in, ATTN__ANY);
    if (status != ATTN_OK) return status;
    info->d_a = attn__shape_of(w).cols;
    const attn__dim d_a = {info->d_a, "d_a, the columns of w"};
    if (v == NULL) return attn__fail_missing(problem, "v");
    status = attn__check_vector(problem, "v", v, d_a);
    if (status == ATTN_OK && b != NULL)
        status = attn__check_vector(problem, "b", b, d_a);
    return status;
}

int attn__run_luong(attn_problem *problem)
{
    int status = check_query_keys(problem);
    if (status == ATTN_OK) status = check_luong_method(problem);
    if (status == ATTN_OK) status = check_luong_weights(problem);
    const attn__run_info *info = &problem->info;
    if (status == ATTN_OK)
        status = attn__check_tokens(problem, info->n_q, info->n_k, 0);
    int want_grads = 0;
    if (status == ATTN_OK) status = check_grad_context(problem, &want_grads);
    if (status != ATTN_OK) return status;
    double *energy, *scores, *weights, *context;
    status = add_attention_results(problem, &energy, &scores, &weights,
                                   &context);
    if (status != ATTN_OK) return status;
    double *work = attn__allocate_doubles(
        problem,
        attn_luong_work_size(info->method, info->n_k, info->d_s, info->d_a));
    if (work == NULL) return attn__fail_nomem(problem);
    status = attn_luong(
        energy, scores, weights, context, attn__data_of(problem, "query"),
        attn__data_of(problem, "keys"), attn__data_of(problem, "w"),
        attn__data_of(problem, "b"), attn__data_of(problem, "v"), info->method,
        info->n_q, info->n_k, info->d_s, info->d_h, info->d_a, work);
    attn__release(problem, work);
    if (status != ATTN_OK) return attn__fail_core(problem, status, "luong");
    return want_grads ? attn__luong_gradients(problem) : ATTN_OK;
}

/* ---- linear ---- */

int attn__run_linear(attn_problem *problem)
{
    int status = attn__check_qkv(problem);
    attn__run_info *info = &problem->info;
    const attn__value *causal = attn__field_value(problem, "causal");
    info->causal = causal != NULL && causal->number != 0;
    if (status == ATTN_OK)
        status = attn__check_tokens(problem, info->n_q, info->n_k, 1);
    const int want_grads = attn__field_value(problem, "gradOutput") != NULL;
    if (status == ATTN_OK && want_grads)
        status = attn__check_grad_output(problem, "gradOutput", info->n_q,
                                         "n_q, the rows of q", info->d_v,
                                         "d_v, the columns of v");
    if (status != ATTN_OK) return status;
    double *output = attn__add_query_result(problem, "output", 1, info->d_v, 0);
    double *work = attn__allocate_doubles(
        problem, attn_linear_work_size(info->d_k, info->d_v));
    if (output == NULL || work == NULL) {
        attn__release(problem, work);
        return attn__fail_nomem(problem);
    }
    status = attn_linear(output, attn__data_of(problem, "q"),
                         attn__data_of(problem, "k"),
                         attn__data_of(problem, "v"), info->batch, info->n_q,
                         info->n_k, info->d_k, info->d_v, info->causal, work);
    attn__release(problem, work);
    if (status != ATTN_OK) return attn__fail_core(problem, status, "linear");
    return want_grads ? attn__linear_gradients(problem) : ATTN_OK;
}

/* ---- softmax ---- */

/* The optional mask, shaped like x, into problem->allowed. */
static int check_softmax_mask(attn_problem *problem, const attn__value *x)
{
    const attn__value *mask = attn__field_value(problem, "mask");
    if (mask == NULL) return ATTN_OK;
    int same = mask->rank == x->rank;
    for (int d = 0; same && d < x->rank; d++)
        same = mask->dims[d] == x->dims[d];
    if (!same) {
        char expected[64], got[64];
        attn__describe_value(expected, sizeof expected, x);
        attn__describe_value(got, sizeof got, mask);
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "mask: expected a boolean tensor shaped like x "
                          "(%s), got %s",
                          expected, got);
    }
    problem->allowed = attn__allocate(problem, mask->count);
    if (problem->allowed == NULL) return attn__fail_nomem(problem);
    return attn__copy_booleans(problem, "mask", mask, problem->allowed);
}

/* The steps of one row that the walkthrough explains: max, exp(x - max)
 * and their sum, masked entries excluded. */
static void explain_row(double *max, double *exps, double *sum,
                        const double *scaled, int n)
{
    *max = -INFINITY;
    for (int j = 0; j < n; j++)
        if (scaled[j] > *max) *max = scaled[j];
    *sum = 0.0;
    for (int j = 0; j < n; j++) {
        exps[j] = *max == -INFINITY ? 0.0 : exp(scaled[j] - *max);
        *sum += exps[j];
    }
}

int attn__run_softmax(attn_problem *problem)
{
    attn__run_info *info = &problem->info;
    const attn__value *x = attn__field_value(problem, "x");
    if (x == NULL) return attn__fail_missing(problem, "x");
    attn__take_query_shape(problem, x);
    info->n_k = attn__shape_of(x).cols;
    const attn__value *scale = attn__field_value(problem, "scale");
    info->scale = scale != NULL ? scale->number : 1.0;
    int status = check_softmax_mask(problem, x);
    if (status == ATTN_OK)
        status = attn__check_tokens(problem, info->n_q, info->n_k, 0);
    if (status != ATTN_OK) return status;
    /* Unlabelled, rows are r1, r2, ... and columns 1, 2, ... */
    if (info->queries.names == NULL) info->queries.prefix = "r";
    if (info->keys.names == NULL) info->keys.prefix = "";

    double *scaled = attn__add_query_result(problem, "scaled", 1, info->n_k, 0);
    double *max = attn__add_query_result(problem, "max", 0, 0, 0);
    double *exps = attn__add_query_result(problem, "exp", 1, info->n_k, 0);
    double *sum = attn__add_query_result(problem, "sum", 0, 0, 0);
    double *weights = attn__add_query_result(problem, "weights", 1, info->n_k,
                                             0);
    if (!scaled || !max || !exps || !sum || !weights)
        return attn__fail_nomem(problem);
    for (size_t i = 0; i < x->count; i++) {
        if (problem->allowed != NULL && !problem->allowed[i]) {
            scaled[i] = -INFINITY; /* masked */
            continue;
        }
        scaled[i] = x->data[i] * info->scale;
        if (!isfinite(scaled[i]))
            return attn__fail_core(problem, ATTN_ERR_OVERFLOW_VALUE, "softmax");
    }
    const int rows = info->batch * info->n_q;
    for (int r = 0; r < rows; r++) {
        const size_t row = (size_t)r * (size_t)info->n_k;
        explain_row(&max[r], exps + row, &sum[r], scaled + row, info->n_k);
    }
    status = attn_softmax_rows(weights, scaled, rows, info->n_k);
    return status == ATTN_OK ? ATTN_OK
                             : attn__fail_core(problem, status, "softmax");
}
