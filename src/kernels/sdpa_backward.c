/* sdpa_backward.c: gradients of the row softmax and of scaled
 * dot-product attention, recomputing the forward pass row by row. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

/* dx = y ∘ (dy − (dy · y)); an entry whose weight is exactly 0 (masked)
 * gets exactly 0. dx may alias dy: the dot product is taken first. */
static void softmax_backward_row(double *dx, const double *y, const double *dy,
                                 int n)
{
    const double dot = attn__dot(dy, y, n);
    for (int j = 0; j < n; j++)
        dx[j] = y[j] == 0.0 ? 0.0 : y[j] * (dy[j] - dot);
}

int attn_softmax_rows_backward(double *grad_in, const double *out,
                               const double *grad_out, int rows, int cols)
{
    if (grad_in == NULL || out == NULL || grad_out == NULL)
        return ATTN_ERR_NULL;
    const int sizes[] = {rows, cols};
    int status = attn__check_sizes(sizes, 2);
    if (status != ATTN_OK) return status;
    size_t count;
    status = attn__count3(&count, rows, cols, 1);
    if (status != ATTN_OK) return status;
    if (!attn__all_finite(out, count) || !attn__all_finite(grad_out, count))
        return ATTN_ERR_NOT_FINITE;
    for (size_t r = 0; r < (size_t)rows; r++)
        softmax_backward_row(grad_in + r * (size_t)cols, out + r * (size_t)cols,
                             grad_out + r * (size_t)cols, cols);
    return attn__all_finite(grad_in, count) ? ATTN_OK : ATTN_ERR_OVERFLOW_VALUE;
}

size_t attn_sdpa_backward_work_size(int n_k)
{
    return n_k > 0 ? 2 * (size_t)n_k : 0;
}

static void zero_rows(double *x, size_t stride, int rows, int cols)
{
    if (x == NULL) return;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) x[(size_t)r * stride + (size_t)c] = 0.0;
}

/* row += factor * x, both [n]. */
static void add_scaled(double *row, double factor, const double *x, int n)
{
    for (int c = 0; c < n; c++) row[c] += factor * x[c];
}

int attn__sdpa_block_backward(const attn__sdpa_grad_block *g,
                              const attn__sdpa_plan *plan, double *work)
{
    const int n_k = g->n_k, d_k = g->d_k, d_v = g->d_v;
    double *ds = work + n_k; /* [n_k] dL/dP, then dL/d(scaled) */
    const double keep = 1.0 - plan->dropout;
    const int saved = g->weights != NULL && plan->dropout == 0.0;
    zero_rows(g->grad_k, g->k_stride, n_k, d_k);
    zero_rows(g->grad_v, g->v_stride, n_k, d_v);
    for (int i = 0; i < g->n_q; i++) {
        const size_t cell = (size_t)i * (size_t)n_k;
        const double *q_row = g->q + (size_t)i * g->q_stride;
        const double *do_row = g->d_output + (size_t)i * g->d_output_stride;
        /* The weights before dropout: the forward's, or computed again as
         * the forward computed them (the same bits). */
        const double *p = saved ? g->weights + cell : work;
        if (!saved) {
            double *row = work;
            attn__dots(row, q_row, g->k, g->k_stride, n_k, d_k);
            int status = attn__scale_and_mask_row(row, plan, g->mask_b, i, n_k);
            if (status != ATTN_OK) return status;
            attn__softmax_row(row, n_k);
        }
        attn__dots(ds, do_row, g->v, g->v_stride, n_k, d_v); /* dL/dP */
        for (int j = 0; j < n_k; j++) {
            /* The weight that multiplied v_j, computed as the forward
             * pass did, and dL/d(that weight). */
            const int kept = plan->dropout == 0.0 ||
                             attn_dropout_keeps(plan->seed, plan->dropout,
                                                g->dropout_b, i, j);
            const double w = plan->dropout == 0.0 ? p[j]
                             : kept               ? p[j] / keep
                                                  : 0.0;
            const double dw = ds[j];
            if (g->grad_weights != NULL) g->grad_weights[cell + j] = dw;
            ds[j] = plan->dropout == 0.0 ? dw : kept ? dw / keep : 0.0;
            if (g->grad_v != NULL)
                add_scaled(g->grad_v + (size_t)j * g->v_stride, w, do_row, d_v);
        }
        softmax_backward_row(ds, p, ds, n_k);
        if (g->grad_scaled != NULL) attn__copy(g->grad_scaled + cell, ds, n_k);
        if (g->grad_q != NULL) {
            double *gq = g->grad_q + (size_t)i * g->q_stride;
            for (int c = 0; c < d_k; c++) gq[c] = 0.0;
            for (int j = 0; j < n_k; j++)
                if (ds[j] != 0.0)
                    add_scaled(gq, ds[j] * plan->scale,
                               g->k + (size_t)j * g->k_stride, d_k);
        }
        if (g->grad_k != NULL)
            for (int j = 0; j < n_k; j++)
                if (ds[j] != 0.0)
                    add_scaled(g->grad_k + (size_t)j * g->k_stride,
                               ds[j] * plan->scale, q_row, d_k);
    }
    return ATTN_OK;
}

static size_t item_offset(int b, int rows, int cols)
{
    return (size_t)b * (size_t)rows * (size_t)cols;
}

static double *output_at(double *p, size_t offset)
{
    return p != NULL ? p + offset : NULL;
}

int attn_sdpa_backward(double *grad_q, double *grad_k, double *grad_v,
                       double *grad_weights, double *grad_scaled,
                       const double *d_output, const double *q, const double *k,
                       const double *v, int batch, int n_q, int n_k, int d_k,
                       int d_v, const attn_options *opts, double *work)
{
    if (d_output == NULL || q == NULL || k == NULL || v == NULL || work == NULL)
        return ATTN_ERR_NULL;
    const int sizes[] = {batch, n_q, n_k, d_k, d_v};
    int status = attn__check_sizes(sizes, 5);
    if (status != ATTN_OK) return status;
    const int counts[][3] = {{batch, n_q, n_k}, {batch, n_q, d_k},
                             {batch, n_k, d_k}, {batch, n_k, d_v},
                             {batch, n_q, d_v}, {2, n_k, 1}};
    status = attn__check_counts(counts, 6);
    if (status != ATTN_OK) return status;
    attn__sdpa_plan plan;
    status = attn__sdpa_plan_init(&plan, opts, batch, n_q, n_k, d_k);
    if (status != ATTN_OK) return status;
    if (!attn__all_finite(q, item_offset(batch, n_q, d_k)) ||
        !attn__all_finite(k, item_offset(batch, n_k, d_k)) ||
        !attn__all_finite(v, item_offset(batch, n_k, d_v)) ||
        !attn__all_finite(d_output, item_offset(batch, n_q, d_v)))
        return ATTN_ERR_NOT_FINITE;

    for (int b = 0; b < batch; b++) {
        const size_t grid = item_offset(b, n_q, n_k);
        const attn__sdpa_grad_block block = {
            .q = q + item_offset(b, n_q, d_k),
            .k = k + item_offset(b, n_k, d_k),
            .v = v + item_offset(b, n_k, d_v),
            .d_output = d_output + item_offset(b, n_q, d_v),
            .q_stride = (size_t)d_k,
            .k_stride = (size_t)d_k,
            .v_stride = (size_t)d_v,
            .d_output_stride = (size_t)d_v,
            .grad_q = output_at(grad_q, item_offset(b, n_q, d_k)),
            .grad_k = output_at(grad_k, item_offset(b, n_k, d_k)),
            .grad_v = output_at(grad_v, item_offset(b, n_k, d_v)),
            .grad_weights = output_at(grad_weights, grid),
            .grad_scaled = output_at(grad_scaled, grid),
            .mask_b = b,
            .dropout_b = b,
            .n_q = n_q,
            .n_k = n_k,
            .d_k = d_k,
            .d_v = d_v,
        };
        status = attn__sdpa_block_backward(&block, &plan, work);
        if (status != ATTN_OK) return status;
    }
    const int finite = attn__all_finite(grad_q, item_offset(batch, n_q, d_k)) &&
                       attn__all_finite(grad_k, item_offset(batch, n_k, d_k)) &&
                       attn__all_finite(grad_v, item_offset(batch, n_k, d_v)) &&
                       attn__all_finite(grad_weights,
                                        item_offset(batch, n_q, n_k)) &&
                       attn__all_finite(grad_scaled,
                                        item_offset(batch, n_q, n_k));
    return finite ? ATTN_OK : ATTN_ERR_OVERFLOW_VALUE;
}
