/* multihead_backward.c: gradients of multi-head attention, from the
 * forward's saved intermediates or recomputing the forward pass of each
 * batch item in the work array. */
#include "attention.h"
#include "kernels/kernels.h"

/* Work in doubles: per batch item Q, concat, dConcat, dQ [n_q, d_model];
 * K, V, dK, dV [n_kv, d_model]; two score rows [n_kv]. */
static int work_length(size_t *length, const attn_mha_dims *d)
{
    /* 4 n_q can pass SIZE_MAX where size_t has 32 bits (WebAssembly). */
    size_t q_rows, kv_rows, rows, cells;
    int status = attn__mul_size(&q_rows, (size_t)d->n_q, 4);
    if (status == ATTN_OK)
        status = attn__mul_size(&kv_rows, (size_t)d->n_kv, 4);
    if (status == ATTN_OK) status = attn__add_size(&rows, q_rows, kv_rows);
    if (status == ATTN_OK)
        status = attn__mul_size(&cells, rows, (size_t)d->d_model);
    if (status == ATTN_OK)
        status = attn__add_size(length, cells, 2 * (size_t)d->n_kv);
    return status;
}

size_t attn_multihead_backward_work_size(const attn_mha_dims *dims)
{
    size_t length;
    /* attn_multihead_work_size checks the dims (0 when they are bad). */
    if (dims == NULL || attn_multihead_work_size(dims) == 0 ||
        work_length(&length, dims) != ATTN_OK)
        return 0;
    return length;
}

/* Sizes of the arrays the gradients fill, for zeroing and checking. */
typedef struct sizes {
    size_t x_q, x_kv, wq, wkv, wo, q, kv, grid;
    size_t item_q, item_kv, item_xq, item_xkv, item_out;
} sizes;

static sizes sizes_of(const attn_mha_dims *d)
{
    const size_t m = (size_t)d->d_model, batch = (size_t)d->batch;
    sizes s;
    s.item_xq = (size_t)d->n_q * (size_t)d->d_q_in;
    s.item_xkv = (size_t)d->n_kv * (size_t)d->d_kv_in;
    s.item_q = (size_t)d->n_q * m;
    s.item_kv = (size_t)d->n_kv * m;
    s.item_out = (size_t)d->n_q * (size_t)d->d_out;
    s.x_q = batch * s.item_xq;
    s.x_kv = batch * s.item_xkv;
    s.wq = (size_t)d->d_q_in * m;
    s.wkv = (size_t)d->d_kv_in * m;
    s.wo = m * (size_t)d->d_out;
    s.q = batch * s.item_q;
    s.kv = batch * s.item_kv;
    s.grid = batch * (size_t)d->num_heads * (size_t)d->n_q * (size_t)d->n_kv;
    return s;
}

static void zero_if(double *x, size_t count)
{
    if (x != NULL) attn__zero(x, count);
}

static void copy_if(double *dst, const double *src, size_t count)
{
    if (dst == NULL) return;
    for (size_t i = 0; i < count; i++) dst[i] = src[i];
}

static int grads_finite(const attn_mha_grads *g, const sizes *s,
                        const attn_mha_dims *d, int self)
{
    const size_t m = (size_t)d->d_model;
    return attn__all_finite(g->x_q, s->x_q) &&
           (self || attn__all_finite(g->x_kv, s->x_kv)) &&
           attn__all_finite(g->wq, s->wq) && attn__all_finite(g->wk, s->wkv) &&
           attn__all_finite(g->wv, s->wkv) && attn__all_finite(g->wo, s->wo) &&
           attn__all_finite(g->bq, m) && attn__all_finite(g->bk, m) &&
           attn__all_finite(g->bv, m) &&
           attn__all_finite(g->bo, (size_t)d->d_out) &&
           attn__all_finite(g->q, s->q) && attn__all_finite(g->k, s->kv) &&
           attn__all_finite(g->v, s->kv) &&
           attn__all_finite(g->weights, s->grid) &&
           attn__all_finite(g->scaled, s->grid) &&
           attn__all_finite(g->concat, s->q);
}

/* The parameter gradients of one projection X @ W + b from dY:
 * dW += Xᵀ dY, db += colsum dY. */
static void projection_grads(double *grad_w, double *grad_b, const double *x,
                             const double *dy, int rows, int in, int out)
{
    if (grad_w != NULL) attn__matmul_tn_add(grad_w, x, dy, rows, in, out);
    if (grad_b != NULL) attn__colsum_add(grad_b, dy, rows, out);
}

/* The forward's Q, K, V, concat and weights of batch item b: the saved
 * ones, or computed again into the work array. */
typedef struct forward_item {
    const double *q, *k, *v, *concat, *weights;
} forward_item;

static int forward_again(forward_item *f, const double *xq_b,
                         const double *xkv_b, const attn_mha_params *p,
                         const attn_mha_dims *d, const attn__sdpa_plan *plan,
                         int b, double *q, double *k, double *v, double *concat,
                         double *rows)
{
    const int m = d->d_model, d_head = d->d_model / d->num_heads;
    int status = attn__affine(q, xq_b, p->wq, p->bq, d->n_q, d->d_q_in, m);
    if (status == ATTN_OK)
        status = attn__affine(k, xkv_b, p->wk, p->bk, d->n_kv, d->d_kv_in, m);
    if (status == ATTN_OK)
        status = attn__affine(v, xkv_b, p->wv, p->bv, d->n_kv, d->d_kv_in, m);
    for (int h = 0; status == ATTN_OK && h < d->num_heads; h++) {
        const size_t column = (size_t)h * (size_t)d_head;
        const attn__sdpa_block block = {
            .q = q + column,
            .k = k + column,
            .v = v + column,
            .q_stride = (size_t)m,
            .k_stride = (size_t)m,
            .v_stride = (size_t)m,
            .output = concat + column,
            .output_stride = (size_t)m,
            .mask_b = b,
            .dropout_b = (int64_t)b * d->num_heads + h,
            .n_q = d->n_q,
            .n_k = d->n_kv,
            .d_k = d_head,
            .d_v = d_head,
        };
        status = attn__sdpa_block_run(&block, plan, rows);
    }
    *f = (forward_item){q, k, v, concat, NULL};
    return status;
}

/* Batch item b: the forward (saved or again), then back through W_o, the
 * heads and the three projections. */
static int item_backward(const attn_mha_grads *g, const double *d_output,
                         const double *x_q, const double *x_kv, int self,
                         const attn_mha_outputs *saved,
                         const attn_mha_params *p, const attn_mha_dims *d,
                         const attn__sdpa_plan *plan, int b, double *work)
{
    const sizes s = sizes_of(d);
    const int m = d->d_model, d_head = d->d_model / d->num_heads;
    double *q = work, *concat = q + s.item_q, *d_concat = concat + s.item_q;
    double *dq = d_concat + s.item_q, *k = dq + s.item_q, *v = k + s.item_kv;
    double *dk = v + s.item_kv, *dv = dk + s.item_kv, *rows = dv + s.item_kv;
    const double *xq_b = x_q + (size_t)b * s.item_xq;
    const double *xkv_b = x_kv + (size_t)b * s.item_xkv;
    const double *do_b = d_output + (size_t)b * s.item_out;
    const size_t grid_b = s.grid / (size_t)d->batch * (size_t)b;

    forward_item f;
    if (saved != NULL) {
        f = (forward_item){
            saved->q + (size_t)b * s.item_q, saved->k + (size_t)b * s.item_kv,
            saved->v + (size_t)b * s.item_kv,
            saved->concat + (size_t)b * s.item_q, saved->weights + grid_b};
    } else {
        const int status = forward_again(&f, xq_b, xkv_b, p, d, plan, b, q, k,
                                         v, concat, rows);
        if (status != ATTN_OK) return status;
    }
    int status = ATTN_OK;

    /* Through the output projection. */
    attn__matmul_nt(d_concat, (size_t)m, do_b, (size_t)d->d_out, p->wo,
                    (size_t)d->d_out, d->n_q, m, d->d_out, 0);
    projection_grads(g->wo, g->bo, f.concat, do_b, d->n_q, m, d->d_out);

    /* Through each head. */
    for (int h = 0; h < d->num_heads; h++) {
        const size_t column = (size_t)h * (size_t)d_head;
        const size_t head_grid = (size_t)h * (size_t)d->n_q * (size_t)d->n_kv;
        const size_t grid = grid_b + head_grid;
        const attn__sdpa_grad_block block = {
            .q = f.q + column,
            .k = f.k + column,
            .v = f.v + column,
            .d_output = d_concat + column,
            .q_stride = (size_t)m,
            .k_stride = (size_t)m,
            .v_stride = (size_t)m,
            .d_output_stride = (size_t)m,
            .grad_q = dq + column,
            .grad_k = dk + column,
            .grad_v = dv + column,
            .grad_weights = g->weights ? g->weights + grid : NULL,
            .grad_scaled = g->scaled ? g->scaled + grid : NULL,
            .weights = f.weights ? f.weights + head_grid : NULL,
            .mask_b = b,
            .dropout_b = (int64_t)b * d->num_heads + h,
            .n_q = d->n_q,
            .n_k = d->n_kv,
            .d_k = d_head,
            .d_v = d_head,
        };
        status = attn__sdpa_block_backward(&block, plan, rows);
        if (status != ATTN_OK) return status;
    }

    /* Through the three projections. */
    projection_grads(g->wq, g->bq, xq_b, dq, d->n_q, d->d_q_in, m);
    projection_grads(g->wk, g->bk, xkv_b, dk, d->n_kv, d->d_kv_in, m);
    projection_grads(g->wv, g->bv, xkv_b, dv, d->n_kv, d->d_kv_in, m);
    double *gxq = g->x_q ? g->x_q + (size_t)b * s.item_xq : NULL;
    double *gxkv = self      ? gxq
                   : g->x_kv ? g->x_kv + (size_t)b * s.item_xkv
                             : NULL;
    if (gxq != NULL)
        attn__matmul_nt(gxq, (size_t)d->d_q_in, dq, (size_t)m, p->wq, (size_t)m,
                        d->n_q, d->d_q_in, m, 0);
    if (gxkv != NULL) {
        attn__matmul_nt(gxkv, (size_t)d->d_kv_in, dk, (size_t)m, p->wk,
                        (size_t)m, d->n_kv, d->d_kv_in, m, self);
        attn__matmul_nt(gxkv, (size_t)d->d_kv_in, dv, (size_t)m, p->wv,
                        (size_t)m, d->n_kv, d->d_kv_in, m, 1);
    }
    copy_if(g->q ? g->q + (size_t)b * s.item_q : NULL, dq, s.item_q);
    copy_if(g->k ? g->k + (size_t)b * s.item_kv : NULL, dk, s.item_kv);
    copy_if(g->v ? g->v + (size_t)b * s.item_kv : NULL, dv, s.item_kv);
    copy_if(g->concat ? g->concat + (size_t)b * s.item_q : NULL, d_concat,
            s.item_q);
    return ATTN_OK;
}

int attn_multihead_backward(const attn_mha_grads *grads, const double *d_output,
                            const double *x_q, const double *x_kv,
                            const attn_mha_params *params,
                            const attn_mha_dims *dims, const attn_options *opts,
                            double *work)
{
    return attn_multihead_backward_saved(grads, d_output, x_q, x_kv, NULL,
                                         params, dims, opts, work);
}

int attn_multihead_backward_saved(const attn_mha_grads *grads,
                                  const double *d_output, const double *x_q,
                                  const double *x_kv,
                                  const attn_mha_outputs *saved,
                                  const attn_mha_params *params,
                                  const attn_mha_dims *dims,
                                  const attn_options *opts, double *work)
{
    if (grads == NULL || d_output == NULL || x_q == NULL || params == NULL ||
        dims == NULL || work == NULL || params->wq == NULL ||
        params->wk == NULL || params->wv == NULL || params->wo == NULL)
        return ATTN_ERR_NULL;
    if (saved != NULL &&
        (saved->q == NULL || saved->k == NULL || saved->v == NULL ||
         saved->concat == NULL || saved->weights == NULL))
        return ATTN_ERR_NULL;
    if (attn_multihead_work_size(dims) == 0) {
        /* The forward checks give the precise status. */
        const int sizes_list[] = {dims->batch,     dims->n_q,     dims->n_kv,
                                  dims->d_q_in,    dims->d_kv_in, dims->d_model,
                                  dims->num_heads, dims->d_out};
        int status = attn__check_sizes(sizes_list, 8);
        if (status != ATTN_OK) return status;
        if (dims->d_model % dims->num_heads != 0) return ATTN_ERR_HEADS;
        return ATTN_ERR_SIZE_OVERFLOW;
    }
    size_t length;
    int status = work_length(&length, dims);
    if (status != ATTN_OK) return status;
    const int self = x_kv == NULL;
    if (self) {
        if (dims->n_kv != dims->n_q || dims->d_kv_in != dims->d_q_in)
            return ATTN_ERR_SIZE;
        x_kv = x_q;
    }
    attn__sdpa_plan plan;
    status = attn__sdpa_plan_init(&plan, opts, dims->batch, dims->n_q,
                                  dims->n_kv, dims->d_model / dims->num_heads);
    if (status != ATTN_OK) return status;
    const sizes s = sizes_of(dims);
    const size_t m = (size_t)dims->d_model;
    const attn_mha_params *p = params;
    if (!attn__all_finite(x_q, s.x_q) || !attn__all_finite(x_kv, s.x_kv) ||
        !attn__all_finite(d_output, (size_t)dims->batch * s.item_out) ||
        !attn__all_finite(p->wq, s.wq) || !attn__all_finite(p->wk, s.wkv) ||
        !attn__all_finite(p->wv, s.wkv) || !attn__all_finite(p->wo, s.wo) ||
        !attn__all_finite(p->bq, m) || !attn__all_finite(p->bk, m) ||
        !attn__all_finite(p->bv, m) ||
        !attn__all_finite(p->bo, (size_t)dims->d_out))
        return ATTN_ERR_NOT_FINITE;

    /* Parameter gradients sum over the batch: start them at 0. */
    zero_if(grads->wq, s.wq);
    zero_if(grads->wk, s.wkv);
    zero_if(grads->wv, s.wkv);
    zero_if(grads->wo, s.wo);
    zero_if(grads->bq, m);
    zero_if(grads->bk, m);
    zero_if(grads->bv, m);
    zero_if(grads->bo, (size_t)dims->d_out);
    for (int b = 0; b < dims->batch; b++) {
        status = item_backward(grads, d_output, x_q, x_kv, self, saved, params,
                               dims, &plan, b, work);
        if (status != ATTN_OK) return status;
    }
    return grads_finite(grads, &s, dims, self) ? ATTN_OK
                                               : ATTN_ERR_OVERFLOW_VALUE;
}
