/* run_grad.c: the gradient results of scaledDotProduct and multiHead,
 * computed when a problem carries gradOutput (dL/d(output)). */
#include "attention.h"
#include "problem/problem.h"

#include <string.h>

int attn__sdpa_gradients(attn_problem *problem, const double *grad_output)
{
    const attn__run_info *info = &problem->info;
    double *grad_q = attn__add_query_result(problem, "gradQ", 1, info->d_k, 0);
    double *grad_k = attn__add_rows_result(problem, "gradK", 0, info->n_k,
                                           info->d_k);
    double *grad_v = attn__add_rows_result(problem, "gradV", 0, info->n_k,
                                           info->d_v);
    double *grad_weights = attn__add_query_result(problem, "gradWeights", 1,
                                                  info->n_k, 0);
    double *grad_scaled = attn__add_query_result(problem, "gradScaled", 1,
                                                 info->n_k, 0);
    double *work = attn__allocate_doubles(
        problem, attn_sdpa_backward_work_size(info->n_k));
    if (grad_q == NULL || grad_k == NULL || grad_v == NULL ||
        grad_weights == NULL || grad_scaled == NULL || work == NULL) {
        attn__release(problem, work);
        return attn__fail_nomem(problem);
    }
    const int status = attn_sdpa_backward(
        grad_q, grad_k, grad_v, grad_weights, grad_scaled, grad_output,
        attn__data_of(problem, "q"), attn__data_of(problem, "k"),
        attn__data_of(problem, "v"), info->batch, info->n_q, info->n_k,
        info->d_k, info->d_v, &info->options, work);
    attn__release(problem, work);
    if (status != ATTN_OK)
        return attn__fail_core(problem, status, "scaledDotProduct gradients");
    return ATTN_OK;
}

/* A gradient result shaped like a parameter field, when it is given. */
static double *add_param_grad(attn_problem *problem, const char *field,
                              const char *name, int *missing)
{
    const attn__value *value = attn__field_value(problem, field);
    if (value == NULL) return NULL;
    double *data = attn__add_result(problem, name, 0, value->rank, value->dims);
    if (data == NULL) *missing = 1;
    return data;
}

/* attn_multihead_backward, from the forward's Q, K, V, weights and concat
 * (the results) when they are laid out as the core wrote them: without a
 * batch, whose per-head results are reordered head-major. The same bits. */
static int multihead_backward(const attn_problem *problem,
                              const attn_mha_grads *grads,
                              const attn_mha_params *params,
                              const attn_mha_dims *dims, double *work)
{
    const double *d_output = attn__data_of(problem, "gradOutput");
    const double *x = attn__data_of(problem, "x");
    const double *xkv = attn__data_of(problem, "xkv");
    if (problem->info.batch > 1)
        return attn_multihead_backward(grads, d_output, x, xkv, params, dims,
                                       &problem->info.options, work);
    const attn_mha_outputs saved = {
        .q = attn__find_result(problem, "q", 0)->data,
        .k = attn__find_result(problem, "k", 0)->data,
        .v = attn__find_result(problem, "v", 0)->data,
        .weights = attn__find_result(problem, "weights", 1)->data,
        .concat = attn__find_result(problem, "concat", 0)->data,
    };
    return attn_multihead_backward_saved(grads, d_output, x, xkv, &saved,
                                         params, dims, &problem->info.options,
                                         work);
}

int attn__multihead_gradients(attn_problem *problem)
{
    const attn__run_info *info = &problem->info;
    const int heads = info->num_heads, n_q = info->n_q, n_kv = info->n_k;
    const int cross = attn__field_value(problem, "xkv") != NULL;
    int missing = 0;
    attn_mha_grads grads = {
        .x_q = attn__add_rows_result(problem, "gradX", 0, n_q, info->d_in),
        .x_kv = cross ? attn__add_rows_result(problem, "gradXkv", 0, n_kv,
                                              info->d_kv_in)
                      : NULL,
        .weights = attn__add_rows_result(problem, "gradWeights", heads, n_q,
                                         n_kv),
        .scaled = attn__add_rows_result(problem, "gradScaled", heads, n_q,
                                        n_kv),
    };
    missing = grads.x_q == NULL || (cross && grads.x_kv == NULL) ||
              grads.weights == NULL || grads.scaled == NULL;
    grads.wq = add_param_grad(problem, "wq", "gradWq", &missing);
    grads.wk = add_param_grad(problem, "wk", "gradWk", &missing);
    grads.wv = add_param_grad(problem, "wv", "gradWv", &missing);
    grads.wo = add_param_grad(problem, "wo", "gradWo", &missing);
    grads.bq = add_param_grad(problem, "bq", "gradBq", &missing);
    grads.bk = add_param_grad(problem, "bk", "gradBk", &missing);
    grads.bv = add_param_grad(problem, "bv", "gradBv", &missing);
    grads.bo = add_param_grad(problem, "bo", "gradBo", &missing);

    const attn_mha_dims dims = {info->batch, n_q,           n_kv,
                                info->d_in,  info->d_kv_in, info->d_model,
                                heads,       info->d_out};
    const size_t grid = (size_t)n_q * (size_t)n_kv;
    /* The core writes batch-major; with a batch, head blocks need a copy. */
    const int reorder = info->batch > 1;
    double *head_major[2] = {grads.weights, grads.scaled};
    double *core[2] = {NULL, NULL};
    double *work = NULL;
    if (!missing) {
        work = attn__allocate_doubles(problem,
                                      attn_multihead_backward_work_size(&dims));
        missing = work == NULL;
    }
    for (int i = 0; i < 2 && reorder && !missing; i++) {
        core[i] = attn__allocate_doubles(problem, (size_t)info->batch *
                                                      (size_t)heads * grid);
        missing = core[i] == NULL;
    }
    int status = ATTN_OK;
    if (!missing) {
        if (reorder) {
            grads.weights = core[0];
            grads.scaled = core[1];
        }
        const attn_mha_params params = {
            attn__data_of(problem, "wq"), attn__data_of(problem, "wk"),
            attn__data_of(problem, "wv"), attn__data_of(problem, "wo"),
            attn__data_of(problem, "bq"), attn__data_of(problem, "bk"),
            attn__data_of(problem, "bv"), attn__data_of(problem, "bo")};
        status = multihead_backward(problem, &grads, &params, &dims, work);
        for (int i = 0; i < 2 && reorder && status == ATTN_OK; i++)
            attn__heads_first(head_major[i], core[i], info->batch, heads, grid);
    }
    for (int i = 0; i < 2; i++) attn__release(problem, core[i]);
    attn__release(problem, work);
    if (missing) return attn__fail_nomem(problem);
    if (status != ATTN_OK)
        return attn__fail_core(problem, status, "multiHead gradients");
    return ATTN_OK;
}

/* gradQuery, shaped like query, and gradKeys, like keys. */
static int add_query_key_grads(attn_problem *problem, double **grad_query,
                               double **grad_keys)
{
    const attn__run_info *info = &problem->info;
    *grad_query = attn__add_query_result(problem, "gradQuery", 1, info->d_s, 0);
    *grad_keys = attn__add_rows_result(problem, "gradKeys", 0, info->n_k,
                                       info->d_h);
    return *grad_query != NULL && *grad_keys != NULL;
}

int attn__additive_gradients(attn_problem *problem)
{
    const attn__run_info *info = &problem->info;
    double *grad_query, *grad_keys;
    int missing = !add_query_key_grads(problem, &grad_query, &grad_keys);
    double *grad_ws = add_param_grad(problem, "ws", "gradWs", &missing);
    double *grad_wh = add_param_grad(problem, "wh", "gradWh", &missing);
    double *grad_v = add_param_grad(problem, "v", "gradV", &missing);
    double *grad_b = add_param_grad(problem, "b", "gradB", &missing);
    double *work = missing ? NULL
                           : attn__allocate_doubles(
                                 problem, attn_additive_backward_work_size(
                                              info->n_k, info->d_s, info->d_a));
    if (work == NULL) return attn__fail_nomem(problem);
    /* The forward's energy, kept as a result: no tanh computed again. */
    const int status = attn_additive_backward_saved(
        grad_query, grad_keys, grad_ws, grad_wh, grad_b, grad_v,
        attn__data_of(problem, "gradContext"), attn__data_of(problem, "query"),
        attn__data_of(problem, "keys"), attn__data_of(problem, "ws"),
        attn__data_of(problem, "wh"), attn__data_of(problem, "b"),
        attn__data_of(problem, "v"),
        attn__find_result(problem, "energy", 0)->data, info->n_q, info->n_k,
        info->d_s, info->d_h, info->d_a, work);
    attn__release(problem, work);
    if (status != ATTN_OK)
        return attn__fail_core(problem, status, "additive gradients");
    return ATTN_OK;
}

int attn__luong_gradients(attn_problem *problem)
{
    const attn__run_info *info = &problem->info;
    double *grad_query, *grad_keys;
    int missing = !add_query_key_grads(problem, &grad_query, &grad_keys);
    double *grad_w = add_param_grad(problem, "w", "gradW", &missing);
    double *grad_v = add_param_grad(problem, "v", "gradV", &missing);
    double *grad_b = add_param_grad(problem, "b", "gradB", &missing);
    double *work = missing ? NULL
                           : attn__allocate_doubles(
                                 problem, attn_luong_backward_work_size(
                                              info->method, info->n_k,
                                              info->d_s, info->d_a));
    if (work == NULL) return attn__fail_nomem(problem);
    const int status = attn_luong_backward(
        grad_query, grad_keys, grad_w, grad_b, grad_v,
        attn__data_of(problem, "gradContext"), attn__data_of(problem, "query"),
        attn__data_of(problem, "keys"), attn__data_of(problem, "w"),
        attn__data_of(problem, "b"), attn__data_of(problem, "v"), info->method,
        info->n_q, info->n_k, info->d_s, info->d_h, info->d_a, work);
    attn__release(problem, work);
    if (status != ATTN_OK)
        return attn__fail_core(problem, status, "luong gradients");
    return ATTN_OK;
}

int attn__linear_gradients(attn_problem *problem)
{
    const attn__run_info *info = &problem->info;
    double *grad_q = attn__add_query_result(problem, "gradQ", 1, info->d_k, 0);
    double *grad_k = attn__add_rows_result(problem, "gradK", 0, info->n_k,
                                           info->d_k);
    double *grad_v = attn__add_rows_result(problem, "gradV", 0, info->n_k,
                                           info->d_v);
    double *work = grad_q && grad_k && grad_v
                       ? attn__allocate_doubles(
                             problem, attn_linear_backward_work_size(
                                          info->n_q, info->d_k, info->d_v))
                       : NULL;
    if (work == NULL) return attn__fail_nomem(problem);
    const int status = attn_linear_backward(
        grad_q, grad_k, grad_v, attn__data_of(problem, "gradOutput"),
        attn__data_of(problem, "q"), attn__data_of(problem, "k"),
        attn__data_of(problem, "v"), info->batch, info->n_q, info->n_k,
        info->d_k, info->d_v, info->causal, work);
    attn__release(problem, work);
    if (status != ATTN_OK)
        return attn__fail_core(problem, status, "linear gradients");
    return ATTN_OK;
}
