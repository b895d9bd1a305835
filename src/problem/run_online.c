/* run_online.c: checking and running onlineSoftmax problems: attention
 * through the online softmax, tile by tile, beside the plain softmax's. */
#include "attention.h"
#include "problem/problem.h"

#include <limits.h>
#include <math.h>

/* q, k, v as one problem (no batch, a matrix of queries) and the tile. */
static int check_online(attn_problem *problem)
{
    attn__run_info *info = &problem->info;
    int status = attn__check_qkv(problem);
    if (status != ATTN_OK) return status;
    if (info->batched || info->vector_query)
        return attn__fail(problem, ATTN_ERR_INPUT,
                          "q: expected a matrix n_q x d_k (the online "
                          "softmax takes one problem, not a batch or a "
                          "vector)");
    const attn__value *tile = attn__field_value(problem, "tile");
    double x = 2.0;
    if (tile != NULL) {
        status = attn__check_integer(problem, "tile", tile, 1, INT_MAX,
                                     "a positive integer", &x);
        if (status != ATTN_OK) return status;
    }
    info->tile = (int)x < info->n_k ? (int)x : info->n_k;
    info->tiles = attn_online_tiles(info->n_k, info->tile);
    info->scale = 1.0 / sqrt((double)info->d_k);
    return attn__check_tokens(problem, info->n_q, info->n_k, 1);
}

/* The plain softmax's weights and output, for the comparison. */
static int run_plain(attn_problem *problem, double *weights, double *output)
{
    const attn__run_info *info = &problem->info;
    double *work = attn__allocate_doubles(problem,
                                          attn_sdpa_work_size(info->n_k));
    if (work == NULL) return attn__fail_nomem(problem);
    const int status = attn_sdpa(
        NULL, NULL, weights, output, attn__data_of(problem, "q"),
        attn__data_of(problem, "k"), attn__data_of(problem, "v"), 1, info->n_q,
        info->n_k, info->d_k, info->d_v, NULL, work);
    attn__release(problem, work);
    return status == ATTN_OK ? ATTN_OK
                             : attn__fail_core(problem, status, "softmax");
}

int attn__run_online(attn_problem *problem)
{
    int status = check_online(problem);
    if (status != ATTN_OK) return status;
    const attn__run_info *info = &problem->info;
    const int n_q = info->n_q, n_k = info->n_k, d_v = info->d_v;
    const int tiles = info->tiles;
    const int scaled_dims[] = {n_q, n_k}, state_dims[] = {n_q, tiles};
    const int acc_dims[] = {n_q, tiles, d_v}, output_dims[] = {n_q, d_v};
    double *scaled = attn__add_result(problem, "scaled", 0, 2, scaled_dims);
    double *tile_max = attn__add_result(problem, "tileMax", 0, 2, state_dims);
    double *tile_sum = attn__add_result(problem, "tileSum", 0, 2, state_dims);
    double *tile_acc = attn__add_result(problem, "tileAcc", 0, 3, acc_dims);
    double *output = attn__add_result(problem, "output", 0, 2, output_dims);
    double *weights = attn__add_result(problem, "weights", 0, 2, scaled_dims);
    double *plain = attn__add_result(problem, "plainOutput", 0, 2, output_dims);
    if (!scaled || !tile_max || !tile_sum || !tile_acc || !output || !weights ||
        !plain)
        return attn__fail_nomem(problem);
    status = attn_online_attention(output, scaled, tile_max, tile_sum, tile_acc,
                                   attn__data_of(problem, "q"),
                                   attn__data_of(problem, "k"),
                                   attn__data_of(problem, "v"), n_q, n_k,
                                   info->d_k, d_v, info->tile, info->scale);
    if (status != ATTN_OK)
        return attn__fail_core(problem, status, "online softmax");
    return run_plain(problem, weights, plain);
}
