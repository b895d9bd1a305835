/* sdpa.c: scaled dot-product attention, from Q and K or from scores. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

size_t attn_sdpa_work_size(int n_k)
{
    return n_k > 0 ? (size_t)n_k : 0;
}

int attn__weighted_row(double *out, const double *weights, const double *v,
                       size_t v_stride, int n_k, int d_v)
{
    for (int c = 0; c < d_v; c++) out[c] = 0.0;
    for (int j = 0; j < n_k; j++) {
        const double *v_row = v + (size_t)j * v_stride;
        for (int c = 0; c < d_v; c++) out[c] += weights[j] * v_row[c];
    }
    return attn__all_finite(out, (size_t)d_v) ? ATTN_OK
                                              : ATTN_ERR_OVERFLOW_VALUE;
}

int attn__sdpa_plan_init(attn__sdpa_plan *plan, const attn_options *opts,
                         int batch, int n_q, int n_k, int d_k)
{
    attn_options defaults;
    opts = attn__options_or_default(opts, &defaults);
    int status = attn_scale_value(&plan->scale, opts, d_k);
    if (status != ATTN_OK) return status;
    plan->mask = NULL;
    if (opts->mask.kinds != 0) {
        status = attn_mask_check(&opts->mask, batch, n_q, n_k);
        if (status != ATTN_OK) return status;
        plan->mask = &opts->mask; /* defaults have no mask: never dangles */
    }
    status = attn__check_dropout(opts->dropout);
    if (status != ATTN_OK) return status;
    plan->dropout = opts->dropout;
    plan->seed = opts->seed;
    return ATTN_OK;
}

int attn__scale_and_mask_row(double *row, const attn__sdpa_plan *plan,
                             int mask_b, int i, int n_k)
{
    for (int j = 0; j < n_k; j++) {
        if (!isfinite(row[j])) return ATTN_ERR_OVERFLOW_VALUE;
        if (plan->mask != NULL &&
            !attn_mask_allows(plan->mask, n_k, mask_b, i, j)) {
            row[j] = -INFINITY;
            continue;
        }
        row[j] *= plan->scale;
        if (!isfinite(row[j])) return ATTN_ERR_OVERFLOW_VALUE;
    }
    return ATTN_OK;
}

/* Zeroes dropped weights and rescales kept ones so the expected sum stays. */
static void dropout_row(double *row, const attn__sdpa_plan *plan, int64_t b,
                        int i, int n_k)
{
    if (plan->dropout == 0.0) return;
    const double keep = 1.0 - plan->dropout;
    for (int j = 0; j < n_k; j++)
        row[j] = attn_dropout_keeps(plan->seed, plan->dropout, b, i, j)
                     ? row[j] / keep
                     : 0.0;
}

int attn__sdpa_block_run(const attn__sdpa_block *block,
                         const attn__sdpa_plan *plan, double *row)
{
    const int n_k = block->n_k;
    for (int i = 0; i < block->n_q; i++) {
        const size_t cell = (size_t)i * (size_t)n_k; /* row i of [n_q, n_k] */
        if (block->given_scores != NULL) {
            attn__copy(row, block->given_scores + cell, n_k);
        } else {
            attn__dots(row, block->q + (size_t)i * block->q_stride, block->k,
                       block->k_stride, n_k, block->d_k);
        }
        if (block->scores != NULL) attn__copy(block->scores + cell, row, n_k);
        int status = attn__scale_and_mask_row(row, plan, block->mask_b, i, n_k);
        if (status != ATTN_OK) return status;
        if (block->scaled != NULL) attn__copy(block->scaled + cell, row, n_k);
        attn__softmax_row(row, n_k);
        dropout_row(row, plan, block->dropout_b, i, n_k);
        if (block->weights != NULL) attn__copy(block->weights + cell, row, n_k);
        if (block->output != NULL) {
            status = attn__weighted_row(
                block->output + (size_t)i * block->output_stride, row, block->v,
                block->v_stride, n_k, block->d_v);
            if (status != ATTN_OK) return status;
        }
    }
    return ATTN_OK;
}

/* Offset of batch item b in an array of shape [batch, rows, cols]. */
static size_t item_offset(int b, int rows, int cols)
{
    return (size_t)b * (size_t)rows * (size_t)cols;
}

/* p + offset, keeping NULL for an output not asked for or an unused input. */
static const double *input_at(const double *p, size_t offset)
{
    return p != NULL ? p + offset : NULL;
}

static double *output_at(double *p, size_t offset)
{
    return p != NULL ? p + offset : NULL;
}

/* Runs each batch item in turn: `whole` points at the start of the
 * [batch, ...] arrays, and each item gets its own slice of every one. */
static int run_items(const attn__sdpa_block *whole, const attn__sdpa_plan *plan,
                     int batch, double *work)
{
    const int n_q = whole->n_q, n_k = whole->n_k;
    const int d_k = whole->d_k, d_v = whole->d_v;
    for (int b = 0; b < batch; b++) {
        const size_t grid = item_offset(b, n_q, n_k);
        attn__sdpa_block item = *whole;
        item.q = input_at(whole->q, item_offset(b, n_q, d_k));
        item.k = input_at(whole->k, item_offset(b, n_k, d_k));
        item.v = input_at(whole->v, item_offset(b, n_k, d_v));
        item.given_scores = input_at(whole->given_scores, grid);
        item.scores = output_at(whole->scores, grid);
        item.scaled = output_at(whole->scaled, grid);
        item.weights = output_at(whole->weights, grid);
        item.output = output_at(whole->output, item_offset(b, n_q, d_v));
        item.mask_b = b;
        item.dropout_b = b;
        const int status = attn__sdpa_block_run(&item, plan, work);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}

int attn_sdpa(double *scores, double *scaled, double *weights, double *output,
              const double *q, const double *k, const double *v, int batch,
              int n_q, int n_k, int d_k, int d_v, const attn_options *opts,
              double *work)
{
    if (q == NULL || k == NULL || v == NULL || work == NULL)
        return ATTN_ERR_NULL;
    int status = attn__check_attention_sizes(batch, n_q, n_k, d_k, d_v, 1);
    if (status != ATTN_OK) return status;
    attn__sdpa_plan plan;
    status = attn__sdpa_plan_init(&plan, opts, batch, n_q, n_k, d_k);
    if (status != ATTN_OK) return status;
    if (!attn__all_finite(q, item_offset(batch, n_q, d_k)) ||
        !attn__all_finite(k, item_offset(batch, n_k, d_k)) ||
        !attn__all_finite(v, item_offset(batch, n_k, d_v)))
        return ATTN_ERR_NOT_FINITE;

    const attn__sdpa_block whole = {
        .q = q,
        .k = k,
        .v = v,
        .q_stride = (size_t)d_k,
        .k_stride = (size_t)d_k,
        .v_stride = (size_t)d_v,
        .scores = scores,
        .scaled = scaled,
        .weights = weights,
        .output = output,
        .output_stride = (size_t)d_v,
        .n_q = n_q,
        .n_k = n_k,
        .d_k = d_k,
        .d_v = d_v,
    };
    return run_items(&whole, &plan, batch, work);
}

int attn_sdpa_from_scores(double *scaled, double *weights, double *output,
                          const double *scores, const double *v, int batch,
                          int n_q, int n_k, int d_k, int d_v,
                          const attn_options *opts, double *work)
{
    if (scores == NULL || work == NULL || (output != NULL && v == NULL))
        return ATTN_ERR_NULL;
    /* d_v only matters with an output; d_k only for the default scale,
     * which attn_scale_value checks. */
    const int sizes[] = {batch, n_q, n_k, output != NULL ? d_v : 1};
    int status = attn__check_sizes(sizes, 4);
    if (status != ATTN_OK) return status;
    const int counts[][3] = {
        {batch, n_q, n_k}, {batch, n_k, sizes[3]}, {batch, n_q, sizes[3]}};
    status = attn__check_counts(counts, 3);
    if (status != ATTN_OK) return status;
    attn__sdpa_plan plan;
    status = attn__sdpa_plan_init(&plan, opts, batch, n_q, n_k, d_k);
    if (status != ATTN_OK) return status;
    if (!attn__all_finite(scores, item_offset(batch, n_q, n_k)) ||
        (output != NULL && !attn__all_finite(v, item_offset(batch, n_k, d_v))))
        return ATTN_ERR_NOT_FINITE;

    const attn__sdpa_block whole = {
        .given_scores = scores,
        .v = output != NULL ? v : NULL, /* without an output d_v is unchecked */
        .v_stride = (size_t)d_v,
        .scaled = scaled,
        .weights = weights,
        .output = output,
        .output_stride = (size_t)d_v,
        .n_q = n_q,
        .n_k = n_k,
        .d_k = d_k,
        .d_v = d_v,
    };
    return run_items(&whole, &plan, batch, work);
}

int attn_weighted_sum(double *output, const double *weights, const double *v,
                      int n_q, int n_k, int d_v)
{
    if (output == NULL || weights == NULL || v == NULL) return ATTN_ERR_NULL;
    const int sizes[] = {n_q, n_k, d_v};
    int status = attn__check_sizes(sizes, 3);
    if (status != ATTN_OK) return status;
    const int counts[][3] = {{n_q, n_k, 1}, {n_k, d_v, 1}, {n_q, d_v, 1}};
    status = attn__check_counts(counts, 3);
    if (status != ATTN_OK) return status;
    if (!attn__all_finite(weights, (size_t)n_q * (size_t)n_k) ||
        !attn__all_finite(v, (size_t)n_k * (size_t)d_v))
        return ATTN_ERR_NOT_FINITE;
    for (int i = 0; i < n_q; i++) {
        status = attn__weighted_row(output + (size_t)i * (size_t)d_v,
                                    weights + (size_t)i * (size_t)n_k, v,
                                    (size_t)d_v, n_k, d_v);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}
