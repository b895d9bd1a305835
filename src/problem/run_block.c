/* run_block.c: checking and running transformerBlock, the encoder block
 * of tutorial 003 §24.11, with its gradients when gradOutput is given. */
#include "attention.h"
#include "problem/problem.h"

#include <string.h>

/* The parameters in the order of attn_block_params and attn_block_grads,
 * with the names of their gradient results. */
typedef struct param_spec {
    const char *field, *grad;
    int required, rows_ff, cols_ff; /* d_ff instead of d_model */
    int rank;                       /* 1 vector, 2 matrix */
} param_spec;

enum { PARAM_COUNT = 16 };

static const param_spec PARAMS[PARAM_COUNT] = {
    {"wq", "gradWq", 1, 0, 0, 2},         {"wk", "gradWk", 1, 0, 0, 2},
    {"wv", "gradWv", 1, 0, 0, 2},         {"wo", "gradWo", 1, 0, 0, 2},
    {"bq", "gradBq", 0, 0, 0, 1},         {"bk", "gradBk", 0, 0, 0, 1},
    {"bv", "gradBv", 0, 0, 0, 1},         {"bo", "gradBo", 0, 0, 0, 1},
    {"gamma1", "gradGamma1", 1, 0, 0, 1}, {"beta1", "gradBeta1", 0, 0, 0, 1},
    {"w1", "gradW1", 1, 0, 1, 2},         {"b1", "gradB1", 0, 0, 1, 1},
    {"w2", "gradW2", 1, 1, 0, 2},         {"b2", "gradB2", 0, 0, 0, 1},
    {"gamma2", "gradGamma2", 1, 0, 0, 1}, {"beta2", "gradBeta2", 0, 0, 0, 1},
};

static int check_param(attn_problem *problem, const param_spec *spec)
{
    const attn__run_info *info = &problem->info;
    const attn__value *value = attn__field_value(problem, spec->field);
    if (value == NULL)
        return spec->required ? attn__fail_missing(problem, spec->field)
                              : ATTN_OK;
    const attn__dim d_model = {info->d_model, "d_model, the columns of x"};
    const attn__dim d_ff = {info->d_ff, "d_ff, the columns of w1"};
    if (spec->rank == 1)
        return attn__check_vector(problem, spec->field, value,
                                  spec->cols_ff ? d_ff : d_model);
    return attn__check_matrix(problem, spec->field, value, 0,
                              spec->rows_ff ? d_ff : d_model,
                              spec->cols_ff ? ATTN__ANY : d_model);
}

static int check_norm(attn_problem *problem)
{
    const attn__value *norm = attn__field_value(problem, "norm");
    problem->info.norm = ATTN_NORM_POST;
    if (norm == NULL || strcmp(norm->string, "post") == 0) return ATTN_OK;
    if (strcmp(norm->string, "pre") == 0) {
        problem->info.norm = ATTN_NORM_PRE;
        return ATTN_OK;
    }
    return attn__fail_expected(problem, "norm", "\"post\" or \"pre\"", norm);
}

static int check_block(attn_problem *problem)
{
    attn__run_info *info = &problem->info;
    int status = attn__check_token_rows(problem, "a matrix n x d_model or a "
                                                 "batch of them");
    if (status != ATTN_OK) return status;
    info->d_model = info->d_out = info->d_in;
    for (int i = 0; i < PARAM_COUNT && status == ATTN_OK; i++) {
        if (strcmp(PARAMS[i].field, "w1") == 0) {
            const attn__value *w1 = attn__field_value(problem, "w1");
            if (w1 != NULL && w1->rank == 2) info->d_ff = w1->dims[1];
        }
        status = check_param(problem, &PARAMS[i]);
    }
    if (status == ATTN_OK) status = attn__check_heads(problem);
    if (status == ATTN_OK) status = check_norm(problem);
    if (status == ATTN_OK)
        status = attn__check_dot_options(problem, info->batch, info->n_q,
                                         info->n_k);
    if (status == ATTN_OK)
        status = attn__check_tokens(problem, info->n_q, info->n_k, 1);
    if (status == ATTN_OK)
        status = attn_scale_value(&info->scale, &info->options, info->d_k);
    if (status == ATTN_OK && attn__field_value(problem, "gradOutput") != NULL)
        status = attn__check_grad_output(problem, "gradOutput", info->n_q,
                                         "n, the rows of x", info->d_model,
                                         "d_model, the columns of x");
    return status;
}

static attn_block_params params_of(const attn_problem *problem)
{
    const double *p[PARAM_COUNT];
    for (int i = 0; i < PARAM_COUNT; i++)
        p[i] = attn__data_of(problem, PARAMS[i].field);
    const attn_block_params params = {
        {p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]},
        p[8],
        p[9],
        p[10],
        p[11],
        p[12],
        p[13],
        p[14],
        p[15]};
    return params;
}

static attn_block_dims dims_of(const attn__run_info *info)
{
    const attn_block_dims dims = {info->batch,     info->n_q,  info->d_model,
                                  info->num_heads, info->d_ff, info->norm};
    return dims;
}

static int forward(attn_problem *problem)
{
    const attn__run_info *info = &problem->info;
    const int n = info->n_q, m = info->d_model, heads = info->num_heads;
    attn_block_outputs out = {
        .attention = {.output = attn__add_rows_result(problem, "attention", 0,
                                                      n, m)},
        .sum1 = attn__add_rows_result(problem, "sum1", 0, n, m),
        .ln1 = attn__add_rows_result(problem, "ln1", 0, n, m),
        .hidden = attn__add_rows_result(problem, "ffnHidden", 0, n, info->d_ff),
        .ffn = attn__add_rows_result(problem, "ffn", 0, n, m),
        .sum2 = attn__add_rows_result(problem, "sum2", 0, n, m),
        .ln2 = attn__add_rows_result(problem, "ln2", 0, n, m),
        .output = attn__add_rows_result(problem, "output", 0, n, m),
    };
    double *weights = attn__add_rows_result(problem, "weights", heads, n, n);
    const size_t grid = (size_t)n * (size_t)n;
    const attn_block_dims dims = dims_of(info);
    const int reorder = info->batch > 1;
    double *core = NULL;
    double *work = attn__allocate_doubles(
        problem, attn_transformer_block_work_size(&dims));
    int missing = work == NULL || !out.attention.output || !out.sum1 ||
                  !out.ln1 || !out.hidden || !out.ffn || !out.sum2 ||
                  !out.ln2 || !out.output || !weights;
    if (!missing && reorder) {
        core = attn__allocate_doubles(problem, (size_t)info->batch *
                                                   (size_t)heads * grid);
        missing = core == NULL;
    }
    int status = ATTN_OK;
    if (!missing) {
        out.attention.weights = reorder ? core : weights;
        const attn_block_params params = params_of(problem);
        status = attn_transformer_block(&out, attn__data_of(problem, "x"),
                                        &params, &dims, &info->options, work);
        if (status == ATTN_OK && reorder)
            attn__heads_first(weights, core, info->batch, heads, grid);
    }
    attn__release(problem, core);
    attn__release(problem, work);
    if (missing) return attn__fail_nomem(problem);
    if (status != ATTN_OK)
        return attn__fail_core(problem, status, "transformerBlock");
    return ATTN_OK;
}

static int gradients(attn_problem *problem)
{
    const attn__run_info *info = &problem->info;
    double *g[PARAM_COUNT];
    int missing = 0;
    double *grad_x = attn__add_rows_result(problem, "gradX", 0, info->n_q,
                                           info->d_model);
    missing = grad_x == NULL;
    for (int i = 0; i < PARAM_COUNT; i++) {
        const attn__value *value = attn__field_value(problem, PARAMS[i].field);
        g[i] = value != NULL ? attn__add_result(problem, PARAMS[i].grad, 0,
                                                value->rank, value->dims)
                             : NULL;
        if (value != NULL && g[i] == NULL) missing = 1;
    }
    const attn_block_grads grads = {.x = grad_x,
                                    .attention = {.wq = g[0],
                                                  .wk = g[1],
                                                  .wv = g[2],
                                                  .wo = g[3],
                                                  .bq = g[4],
                                                  .bk = g[5],
                                                  .bv = g[6],
                                                  .bo = g[7]},
                                    .gamma1 = g[8],
                                    .beta1 = g[9],
                                    .w1 = g[10],
                                    .b1 = g[11],
                                    .w2 = g[12],
                                    .b2 = g[13],
                                    .gamma2 = g[14],
                                    .beta2 = g[15]};
    const attn_block_dims dims = dims_of(info);
    double *work = NULL;
    if (!missing) {
        work = attn__allocate_doubles(
            problem, attn_transformer_block_backward_work_size(&dims));
        missing = work == NULL;
    }
    int status = ATTN_OK;
    if (!missing) {
        const attn_block_params params = params_of(problem);
        status = attn_transformer_block_backward(
            &grads, attn__data_of(problem, "gradOutput"),
            attn__data_of(problem, "x"), &params, &dims, &info->options, work);
    }
    attn__release(problem, work);
    if (missing) return attn__fail_nomem(problem);
    if (status != ATTN_OK)
        return attn__fail_core(problem, status, "transformerBlock gradients");
    return ATTN_OK;
}

int attn__run_transformer_block(attn_problem *problem)
{
    int status = check_block(problem);
    if (status == ATTN_OK) status = forward(problem);
    if (status == ATTN_OK && attn__field_value(problem, "gradOutput") != NULL)
        status = gradients(problem);
    return status;
}
