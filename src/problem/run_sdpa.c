/* run_sdpa.c: checking and running the dot-product kinds that
 * share masks, scale and dropout: scaledDotProduct and multiHead. */
#include "attention.h"
#include "problem/problem.h"

#include <limits.h>

/* ---- scaledDotProduct ---- */

/* scores given instead of q and k: v optional, dk for the default scale. */
static int check_from_scores(attn_problem *problem)
{
    attn__run_info *info = &problem->info;
    const attn__value *scores = attn__field_value(problem, "scores");
    if (attn__field_value(problem, "q") != NULL ||
        attn__field_value(problem, "k") != NULL)
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "scores: give either scores or q and k, not both");
    info->from_scores = 1;
    attn__take_query_shape(problem, scores);
    info->n_k = attn__shape_of(scores).cols;
    const attn__value *v = attn__field_value(problem, "v");
    if (v != NULL) {
        const attn__dim n_k = {info->n_k, info->vector_query
                                              ? "n_k, the length of scores"
                                              : "n_k, the columns of scores"};
        const int status = attn__check_matrix(
            problem, "v", v, info->batched ? info->batch : 0, n_k, ATTN__ANY);
        if (status != ATTN_OK) return status;
        info->has_output = 1;
        info->d_v = attn__shape_of(v).cols;
    }
    const attn__value *dk = attn__field_value(problem, "dk");
    if (dk == NULL) return ATTN_OK;
    double x;
    const int status = attn__check_integer(problem, "dk", dk, 1, INT_MAX,
                                           "a positive integer", &x);
    info->d_k = (int)x;
    return status;
}

static int check_sdpa(attn_problem *problem)
{
    attn__run_info *info = &problem->info;
    int status;
    if (attn__field_value(problem, "scores") != NULL) {
        status = check_from_scores(problem);
    } else {
        if (attn__field_value(problem, "dk") != NULL)
            return attn__fail(problem, ATTN_ERR_INPUT,
                              "dk: only used with scores (d_k is the "
                              "columns of q)");
        status = attn__check_qkv(problem);
        info->has_output = 1;
    }
    if (status == ATTN_OK)
        status = attn__check_dot_options(problem, info->batch, info->n_q,
                                         info->n_k);
    if (status == ATTN_OK)
        status = attn__check_tokens(problem, info->n_q, info->n_k, 1);
    if (status != ATTN_OK) return status;
    if (info->options.scale_kind == ATTN_SCALE_INV_SQRT_DK && info->d_k == 0)
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "dk: missing (a positive integer, d_k for the "
                          "default scale 1/√d_k; or give scale)");
    return attn_scale_value(&info->scale, &info->options,
                            info->d_k > 0 ? info->d_k : 1);
}

int attn__run_sdpa(attn_problem *problem)
{
    int status = check_sdpa(problem);
    if (status != ATTN_OK) return status;
    const int has_target = attn__field_value(problem, "target") != NULL;
    const char *grad_field = has_target ? "target" : "gradOutput";
    const int want_grads = has_target ||
                           attn__field_value(problem, "gradOutput") != NULL;
    if (has_target && attn__field_value(problem, "gradOutput") != NULL)
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "target: give either target (the loss "
                          "½‖output − target‖²) or gradOutput, not both");
    if (has_target && !problem->info.has_output)
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "target: needs v, for the output it is compared "
                          "with");
    if (want_grads && problem->info.from_scores)
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "%s: needs q and k; gradients are not "
                          "computed from given scores",
                          grad_field);
    if (want_grads) {
        status = attn__check_grad_output(
            problem, grad_field, problem->info.n_q, "n_q, the rows of q",
            problem->info.d_v, "d_v, the columns of v");
        if (status != ATTN_OK) return status;
    }
    const attn__run_info *info = &problem->info;
    double *scores = info->from_scores
                         ? NULL
                         : attn__add_query_result(problem, "scores", 1,
                                                  info->n_k, 0);
    double *scaled = attn__add_query_result(problem, "scaled", 1, info->n_k, 0);
    double *weights = attn__add_query_result(problem, "weights", 1, info->n_k,
                                             0);
    double *output = info->has_output ? attn__add_query_result(
                                            problem, "output", 1, info->d_v, 0)
                                      : NULL;
    double *work = attn__allocate_doubles(problem,
                                          attn_sdpa_work_size(info->n_k));
    if ((!info->from_scores && scores == NULL) || scaled == NULL ||
        weights == NULL || (info->has_output && output == NULL) ||
        work == NULL) {
        attn__release(problem, work);
        return attn__fail_nomem(problem);
    }
    if (info->from_scores)
        status = attn_sdpa_from_scores(
            scaled, weights, output, attn__data_of(problem, "scores"),
            attn__data_of(problem, "v"), info->batch, info->n_q, info->n_k,
            info->d_k > 0 ? info->d_k : 1, info->d_v, &info->options, work);
    else
        status = attn_sdpa(
            scores, scaled, weights, output, attn__data_of(problem, "q"),
            attn__data_of(problem, "k"), attn__data_of(problem, "v"),
            info->batch, info->n_q, info->n_k, info->d_k, info->d_v,
            &info->options, work);
    attn__release(problem, work);
    if (status != ATTN_OK)
        return attn__fail_core(problem, status, "scaledDotProduct");
    if (!want_grads) return ATTN_OK;
    const double *grad_output = attn__data_of(problem, "gradOutput");
    if (has_target) {
        /* L = ½‖output − target‖², so dL/d(output) = output − target. */
        double *difference = attn__add_query_result(problem, "gradOutput", 1,
                                                    info->d_v, 0);
        if (difference == NULL) return attn__fail_nomem(problem);
        const double *target = attn__data_of(problem, "target");
        const size_t count = (size_t)(info->batched ? info->batch : 1) *
                             (size_t)info->n_q * (size_t)info->d_v;
        for (size_t e = 0; e < count; e++)
            difference[e] = output[e] - target[e];
        grad_output = difference;
    }
    return attn__sdpa_gradients(problem, grad_output);
}

/* ---- multiHead ---- */

static int check_projections(attn_problem *problem)
{
    attn__run_info *info = &problem->info;
    const int has_xkv = attn__field_value(problem, "xkv") != NULL;
    const char *const names[] = {"wq", "wk", "wv", "wo"};
    for (int i = 0; i < 4; i++)
        if (attn__field_value(problem, names[i]) == NULL)
            return attn__fail_missing(problem, names[i]);
    const attn__dim d_in = {info->d_in, "d_in, the columns of x"};
    int status = attn__check_matrix(
        problem, "wq", attn__field_value(problem, "wq"), 0, d_in, ATTN__ANY);
    if (status != ATTN_OK) return status;
    info->d_model = attn__shape_of(attn__field_value(problem, "wq")).cols;
    const attn__dim d_model = {info->d_model, "d_model, the columns of wq"};
    const attn__dim d_kv_in = {info->d_kv_in,
                               has_xkv ? "d_kv_in, the columns of xkv"
                                       : "d_in, the columns of x"};
    for (int i = 1; i < 3 && status == ATTN_OK; i++)
        status = attn__check_matrix(problem, names[i],
                                    attn__field_value(problem, names[i]), 0,
                                    d_kv_in, d_model);
    if (status == ATTN_OK)
        status = attn__check_matrix(problem, "wo",
                                    attn__field_value(problem, "wo"), 0,
                                    d_model, ATTN__ANY);
    if (status != ATTN_OK) return status;
    info->d_out = attn__shape_of(attn__field_value(problem, "wo")).cols;
    const char *const biases[] = {"bq", "bk", "bv", "bo"};
    const attn__dim d_out = {info->d_out, "d_out, the columns of wo"};
    for (int i = 0; i < 4 && status == ATTN_OK; i++) {
        const attn__value *bias = attn__field_value(problem, biases[i]);
        if (bias != NULL)
            status = attn__check_vector(problem, biases[i], bias,
                                        i < 3 ? d_model : d_out);
    }
    return status;
}

static int check_multihead(attn_problem *problem)
{
    attn__run_info *info = &problem->info;
    const attn__value *xkv = attn__field_value(problem, "xkv");
    const int x_status = attn__check_token_rows(problem, "a matrix n_q x d_in "
                                                         "or a batch of them");
    if (x_status != ATTN_OK) return x_status;
    if (xkv != NULL) {
        const int status = attn__check_matrix(problem, "xkv", xkv,
                                              info->batched ? info->batch : 0,
                                              ATTN__ANY, ATTN__ANY);
        if (status != ATTN_OK) return status;
        info->n_k = attn__shape_of(xkv).rows;
        info->d_kv_in = attn__shape_of(xkv).cols;
    }
    int status = check_projections(problem);
    if (status == ATTN_OK) status = attn__check_heads(problem);
    if (status == ATTN_OK)
        status = attn__check_dot_options(problem, info->batch, info->n_q,
                                         info->n_k);
    if (status == ATTN_OK)
        status = attn__check_tokens(problem, info->n_q, info->n_k, 1);
    if (status == ATTN_OK)
        status = attn_scale_value(&info->scale, &info->options, info->d_k);
    return status;
}

int attn__run_multihead(attn_problem *problem)
{
    int status = check_multihead(problem);
    if (status != ATTN_OK) return status;
    const int want_grads = attn__field_value(problem, "gradOutput") != NULL;
    if (want_grads) {
        status = attn__check_grad_output(
            problem, "gradOutput", problem->info.n_q, "n_q, the rows of x",
            problem->info.d_out, "d_out, the columns of wo");
        if (status != ATTN_OK) return status;
    }
    const attn__run_info *info = &problem->info;
    const int heads = info->num_heads, n_q = info->n_q, n_kv = info->n_k;
    attn_mha_outputs out = {
        .q = attn__add_rows_result(problem, "q", 0, n_q, info->d_model),
        .k = attn__add_rows_result(problem, "k", 0, n_kv, info->d_model),
        .v = attn__add_rows_result(problem, "v", 0, n_kv, info->d_model),
        .scores = attn__add_rows_result(problem, "scores", heads, n_q, n_kv),
        .scaled = attn__add_rows_result(problem, "scaled", heads, n_q, n_kv),
        .weights = attn__add_rows_result(problem, "weights", heads, n_q, n_kv),
        .head_outputs = attn__add_rows_result(problem, "output", heads, n_q,
                                              info->d_k),
        .concat = attn__add_rows_result(problem, "concat", 0, n_q,
                                        info->d_model),
        .output = attn__add_rows_result(problem, "output", 0, n_q, info->d_out),
    };
    double **per_head[] = {&out.scores, &out.scaled, &out.weights,
                           &out.head_outputs};
    const size_t blocks[] = {
        (size_t)n_q * (size_t)n_kv, (size_t)n_q * (size_t)n_kv,
        (size_t)n_q * (size_t)n_kv, (size_t)n_q * (size_t)info->d_k};
    const attn_mha_dims dims = {info->batch, n_q,           n_kv,
                                info->d_in,  info->d_kv_in, info->d_model,
                                heads,       info->d_out};
    /* The core writes batch-major; with a batch, head blocks need a copy. */
    const int reorder = info->batch > 1;
    double *core[4] = {NULL, NULL, NULL, NULL};
    double *work = attn__allocate_doubles(problem,
                                          attn_multihead_work_size(&dims));
    int missing = work == NULL || !out.q || !out.k || !out.v || !out.scores ||
                  !out.scaled || !out.weights || !out.head_outputs ||
                  !out.concat || !out.output;
    for (int i = 0; i < 4 && reorder && !missing; i++) {
        /* As large as a per-head result already allocated: it fits. */
        core[i] = attn__allocate_doubles(
            problem, (size_t)info->batch * (size_t)heads * blocks[i]);
        missing = core[i] == NULL;
    }
    double *head_major[4] = {out.scores, out.scaled, out.weights,
                             out.head_outputs};
    if (!missing && reorder)
        for (int i = 0; i < 4; i++) *per_head[i] = core[i];
    if (!missing) {
        const attn_mha_params params = {
            attn__data_of(problem, "wq"), attn__data_of(problem, "wk"),
            attn__data_of(problem, "wv"), attn__data_of(problem, "wo"),
            attn__data_of(problem, "bq"), attn__data_of(problem, "bk"),
            attn__data_of(problem, "bv"), attn__data_of(problem, "bo")};
        status = attn_multihead(&out, attn__data_of(problem, "x"),
                                attn__data_of(problem, "xkv"), &params, &dims,
                                &info->options, work);
        for (int i = 0; i < 4 && reorder && status == ATTN_OK; i++)
            attn__heads_first(head_major[i], core[i], info->batch, heads,
                              blocks[i]);
    }
    for (int i = 0; i < 4; i++) attn__release(problem, core[i]);
    attn__release(problem, work);
    if (missing) return attn__fail_nomem(problem);
    if (status != ATTN_OK) return attn__fail_core(problem, status, "multiHead");
    return want_grads ? attn__multihead_gradients(problem) : ATTN_OK;
}
