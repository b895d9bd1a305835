/* multihead.c: multi-head attention over projected Q, K and V. */
#include "attention.h"
#include "kernels/kernels.h"

/* Work per batch item, in doubles: Q [n_q, d_model], K and V
 * [n_kv, d_model] each, concat [n_q, d_model], one score row [n_kv]. */
static int work_length(size_t *length, const attn_mha_dims *d)
{
    size_t rows, cells;
    int status = attn__add_size(&rows, 2 * (size_t)d->n_q, 2 * (size_t)d->n_kv);
    if (status == ATTN_OK)
        status = attn__mul_size(&cells, rows, (size_t)d->d_model);
    if (status == ATTN_OK)
        status = attn__add_size(length, cells, (size_t)d->n_kv);
    return status;
}

/* Sizes, head split and array lengths, without the self-attention rule. */
static int check_dims(const attn_mha_dims *d)
{
    const int sizes[] = {d->batch,   d->n_q,     d->n_kv,      d->d_q_in,
                         d->d_kv_in, d->d_model, d->num_heads, d->d_out};
    int status = attn__check_sizes(sizes, 8);
    if (status != ATTN_OK) return status;
    if (d->d_model % d->num_heads != 0) return ATTN_ERR_HEADS;
    const int counts[][3] = {
        {d->batch, d->n_q, d->d_q_in},   {d->batch, d->n_kv, d->d_kv_in},
        {d->d_q_in, d->d_model, 1},      {d->d_kv_in, d->d_model, 1},
        {d->d_model, d->d_out, 1},       {d->batch, d->n_q, d->d_model},
        {d->batch, d->n_kv, d->d_model}, {d->batch, d->n_q, d->d_out},
        {d->batch, d->num_heads, d->n_q}};
    status = attn__check_counts(counts, 9);
    if (status != ATTN_OK) return status;
    /* The score grid [batch, num_heads, n_q, n_kv] and the work array
     * must be addressable too. */
    size_t per_head_rows, grid, work;
    status = attn__count3(&per_head_rows, d->batch, d->num_heads, d->n_q);
    if (status == ATTN_OK)
        status = attn__mul_size(&grid, per_head_rows, (size_t)d->n_kv);
    if (status == ATTN_OK) status = work_length(&work, d);
    return status;
}

size_t attn_multihead_work_size(const attn_mha_dims *dims)
{
    size_t length;
    if (dims == NULL || check_dims(dims) != ATTN_OK ||
        work_length(&length, dims) != ATTN_OK)
        return 0;
    return length;
}

static int inputs_finite(const double *x_q, const double *x_kv,
                         const attn_mha_params *p, const attn_mha_dims *d)
{
    const size_t m = (size_t)d->d_model;
    return attn__all_finite(x_q, (size_t)d->batch * (size_t)d->n_q *
                                     (size_t)d->d_q_in) &&
           attn__all_finite(x_kv, (size_t)d->batch * (size_t)d->n_kv *
                                      (size_t)d->d_kv_in) &&
           attn__all_finite(p->wq, (size_t)d->d_q_in * m) &&
           attn__all_finite(p->wk, (size_t)d->d_kv_in * m) &&
           attn__all_finite(p->wv, (size_t)d->d_kv_in * m) &&
           attn__all_finite(p->wo, m * (size_t)d->d_out) &&
           attn__all_finite(p->bq, m) && attn__all_finite(p->bk, m) &&
           attn__all_finite(p->bv, m) &&
           attn__all_finite(p->bo, (size_t)d->d_out);
}

/* Where batch item b's intermediate arrays live: in the caller's outputs
 * when given, else in work. */
typedef struct item_arrays {
    double *q;      /* [n_q, d_model] */
    double *k;      /* [n_kv, d_model] */
    double *v;      /* [n_kv, d_model] */
    double *concat; /* [n_q, d_model] */
    double *row;    /* [n_kv] */
} item_arrays;

static item_arrays item_arrays_at(const attn_mha_outputs *out,
                                  const attn_mha_dims *d, int b, double *work)
{
    const size_t q_cells = (size_t)d->n_q * (size_t)d->d_model;
    const size_t kv_cells = (size_t)d->n_kv * (size_t)d->d_model;
    item_arrays a;
    a.q = out->q ? out->q + (size_t)b * q_cells : work;
    a.k = out->k ? out->k + (size_t)b * kv_cells : work + q_cells;
    a.v = out->v ? out->v + (size_t)b * kv_cells : work + q_cells + kv_cells;
    a.concat = out->concat ? out->concat + (size_t)b * q_cells
                           : work + q_cells + 2 * kv_cells;
    a.row = work + 2 * q_cells + 2 * kv_cells;
    return a;
}

static int project_item(const item_arrays *a, const double *x_q,
                        const double *x_kv, const attn_mha_params *p,
                        const attn_mha_dims *d, int b)
{
    const double *xq_b = x_q + (size_t)b * (size_t)d->n_q * (size_t)d->d_q_in;
    const double *xkv_b = x_kv +
                          (size_t)b * (size_t)d->n_kv * (size_t)d->d_kv_in;
    int status = attn__affine(a->q, xq_b, p->wq, p->bq, d->n_q, d->d_q_in,
                              d->d_model);
    if (status == ATTN_OK)
        status = attn__affine(a->k, xkv_b, p->wk, p->bk, d->n_kv, d->d_kv_in,
                              d->d_model);
    if (status == ATTN_OK)
        status = attn__affine(a->v, xkv_b, p->wv, p->bv, d->n_kv, d->d_kv_in,
                              d->d_model);
    return status;
}

/* Head h of item b; its output goes straight into its concat columns.
 * Dropout hashes (b * num_heads + h, i, j), the leading index of the
 * [batch, num_heads, n_q, n_kv] weights, so heads drop independently. */
static int run_head(const attn_mha_outputs *out, const item_arrays *a,
                    const attn_mha_dims *d, const attn__sdpa_plan *plan, int b,
                    int h)
{
    const int d_head = d->d_model / d->num_heads;
    const size_t column = (size_t)h * (size_t)d_head;
    const size_t grid = ((size_t)b * (size_t)d->num_heads + (size_t)h) *
                        (size_t)d->n_q * (size_t)d->n_kv;
    const attn__sdpa_block block = {
        .q = a->q + column,
        .k = a->k + column,
        .v = a->v + column,
        .q_stride = (size_t)d->d_model,
        .k_stride = (size_t)d->d_model,
        .v_stride = (size_t)d->d_model,
        .scores = out->scores ? out->scores + grid : NULL,
        .scaled = out->scaled ? out->scaled + grid : NULL,
        .weights = out->weights ? out->weights + grid : NULL,
        .output = a->concat + column,
        .output_stride = (size_t)d->d_model,
        .mask_b = b,
        .dropout_b = (int64_t)b * d->num_heads + h,
        .n_q = d->n_q,
        .n_k = d->n_kv,
        .d_k = d_head,
        .d_v = d_head,
    };
    int status = attn__sdpa_block_run(&block, plan, a->row);
    if (status != ATTN_OK || out->head_outputs == NULL) return status;
    /* head_outputs [batch, num_heads, n_q, d_head] */
    double *head = out->head_outputs +
                   ((size_t)b * (size_t)d->num_heads + (size_t)h) *
                       (size_t)d->n_q * (size_t)d_head;
    for (int i = 0; i < d->n_q; i++)
        attn__copy(head + (size_t)i * (size_t)d_head,
                   a->concat + (size_t)i * (size_t)d->d_model + column, d_head);
    return ATTN_OK;
}

int attn_multihead(const attn_mha_outputs *out, const double *x_q,
                   const double *x_kv, const attn_mha_params *params,
                   const attn_mha_dims *dims, const attn_options *opts,
                   double *work)
{
    if (out == NULL || x_q == NULL || params == NULL || dims == NULL ||
        work == NULL || params->wq == NULL || params->wk == NULL ||
        params->wv == NULL || params->wo == NULL)
        return ATTN_ERR_NULL;
    int status = check_dims(dims);
    if (status != ATTN_OK) return status;
    if (x_kv == NULL) {
        if (dims->n_kv != dims->n_q || dims->d_kv_in != dims->d_q_in)
            return ATTN_ERR_SIZE;
        x_kv = x_q;
    }
    attn__sdpa_plan plan;
    status = attn__sdpa_plan_init(&plan, opts, dims->batch, dims->n_q,
                                  dims->n_kv, dims->d_model / dims->num_heads);
    if (status != ATTN_OK) return status;
    if (!inputs_finite(x_q, x_kv, params, dims)) return ATTN_ERR_NOT_FINITE;

    for (int b = 0; b < dims->batch; b++) {
        const item_arrays a = item_arrays_at(out, dims, b, work);
        status = project_item(&a, x_q, x_kv, params, dims, b);
        for (int h = 0; status == ATTN_OK && h < dims->num_heads; h++)
            status = run_head(out, &a, dims, &plan, b, h);
        if (status == ATTN_OK && out->output != NULL)
            status = attn__affine(out->output + (size_t)b * (size_t)dims->n_q *
                                                    (size_t)dims->d_out,
                                  a.concat, params->wo, params->bo, dims->n_q,
                                  dims->d_model, dims->d_out);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}
