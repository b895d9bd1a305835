/* block.c: the transformer encoder block (tutorial 003 §24.11): self-
 * attention and a feed-forward network, each in a residual connection with
 * layer normalisation after it (post-norm) or before it (pre-norm). */
#include "attention.h"
#include "kernels/kernels.h"

#include <limits.h>
#include <string.h>

static attn_mha_dims mha_dims_of(const attn_block_dims *d)
{
    const attn_mha_dims m = {d->batch,   d->n,       d->n,         d->d_model,
                             d->d_model, d->d_model, d->num_heads, d->d_model};
    return m;
}

/* Every intermediate of the forward pass, in the work array. */
typedef struct buffers {
    double *attention, *ln1, *sum1, *ln2, *hidden, *ffn, *sum2;
    double *rest; /* the work of the steps */
} buffers;

/* Doubles of the intermediates: six [rows, d_model] and one [rows, d_ff]. */
static int buffers_length(size_t *length, const attn_block_dims *d)
{
    size_t rows, model, ff;
    int status = attn__count3(&rows, d->batch, d->n, 1);
    if (status == ATTN_OK) status = attn__mul_size(&model, rows, 6);
    if (status == ATTN_OK)
        status = attn__mul_size(&model, model, (size_t)d->d_model);
    if (status == ATTN_OK) status = attn__mul_size(&ff, rows, (size_t)d->d_ff);
    if (status == ATTN_OK) status = attn__add_size(length, model, ff);
    return status;
}

static buffers buffers_at(double *work, const attn_block_dims *d)
{
    const size_t cells = (size_t)d->batch * (size_t)d->n * (size_t)d->d_model;
    buffers b;
    b.attention = work;
    b.ln1 = b.attention + cells;
    b.sum1 = b.ln1 + cells;
    b.ln2 = b.sum1 + cells;
    b.ffn = b.ln2 + cells;
    b.sum2 = b.ffn + cells;
    b.hidden = b.sum2 + cells;
    b.rest = b.hidden + (size_t)d->batch * (size_t)d->n * (size_t)d->d_ff;
    return b;
}

static int check_dims(const attn_block_dims *d)
{
    const int sizes[] = {d->batch, d->n, d->d_model, d->num_heads, d->d_ff};
    int status = attn__check_sizes(sizes, 5);
    if (status != ATTN_OK) return status;
    if (d->norm != ATTN_NORM_POST && d->norm != ATTN_NORM_PRE)
        return ATTN_ERR_OPTION;
    if (d->d_model % d->num_heads != 0) return ATTN_ERR_HEADS;
    /* Rows of the whole batch are counted in an int. */
    if (d->batch > INT_MAX / 2 / d->n) return ATTN_ERR_SIZE_OVERFLOW;
    size_t length;
    return buffers_length(&length, d);
}

/* Work: the intermediates, then the larger of what the steps need. */
static size_t work_size(const attn_block_dims *d, int backward)
{
    if (d == NULL || check_dims(d) != ATTN_OK) return 0;
    const attn_mha_dims m = mha_dims_of(d);
    const int rows = d->batch * d->n; /* fits: checked above */
    size_t intermediates, step, extra = 0;
    if (buffers_length(&intermediates, d) != ATTN_OK) return 0;
    size_t mha = backward ? attn_multihead_backward_work_size(&m)
                          : attn_multihead_work_size(&m);
    size_t ffn = backward ? attn_feed_forward_backward_work_size(rows, d->d_ff)
                          : 0;
    if (mha == 0 || (backward && ffn == 0)) return 0;
    step = mha > ffn ? mha : ffn;
    /* The backward pass keeps three gradients [rows, d_model] too. */
    if (backward && attn__count3(&extra, rows, d->d_model, 3) != ATTN_OK)
        return 0;
    size_t total;
    if (attn__add_size(&total, intermediates, step) != ATTN_OK ||
        attn__add_size(&total, total, extra) != ATTN_OK)
        return 0;
    return total;
}

size_t attn_transformer_block_work_size(const attn_block_dims *dims)
{
    return work_size(dims, 0);
}

size_t attn_transformer_block_backward_work_size(const attn_block_dims *dims)
{
    return work_size(dims, 1);
}

static void add_into(double *out, const double *a, const double *b,
                     size_t count)
{
    for (size_t i = 0; i < count; i++) out[i] = a[i] + b[i];
}

static void copy_out(double *dst, const double *src, size_t count)
{
    if (dst != NULL) memcpy(dst, src, count * sizeof *dst);
}

static int check_args(const attn_block_params *p, const attn_block_dims *d)
{
    if (p == NULL || d == NULL || p->attention.wq == NULL ||
        p->attention.wk == NULL || p->attention.wv == NULL ||
        p->attention.wo == NULL || p->gamma1 == NULL || p->gamma2 == NULL ||
        p->w1 == NULL || p->w2 == NULL)
        return ATTN_ERR_NULL;
    return check_dims(d);
}

/* The forward pass into b; mha_out receives the attention's own
 * intermediates (its output pointer is replaced by b->attention). */
static int forward(const buffers *b, const attn_mha_outputs *mha_out,
                   const double *x, const attn_block_params *p,
                   const attn_block_dims *d, const attn_options *opts)
{
    const attn_mha_dims m = mha_dims_of(d);
    const int rows = d->batch * d->n, dm = d->d_model;
    const size_t cells = (size_t)rows * (size_t)dm;
    attn_mha_outputs mo = *mha_out;
    mo.output = b->attention;
    const int pre = d->norm == ATTN_NORM_PRE;
    int status = ATTN_OK;
    if (pre)
        status = attn_layer_norm(b->ln1, NULL, NULL, x, p->gamma1, p->beta1,
                                 rows, dm);
    if (status == ATTN_OK)
        status = attn_multihead(&mo, pre ? b->ln1 : x, NULL, &p->attention, &m,
                                opts, b->rest);
    if (status != ATTN_OK) return status;
    add_into(b->sum1, x, b->attention, cells);
    /* post: ln1 = LN1(sum1), the FFN reads ln1; pre: the FFN reads
     * ln2 = LN2(sum1). */
    status = pre ? attn_layer_norm(b->ln2, NULL, NULL, b->sum1, p->gamma2,
                                   p->beta2, rows, dm)
                 : attn_layer_norm(b->ln1, NULL, NULL, b->sum1, p->gamma1,
                                   p->beta1, rows, dm);
    if (status == ATTN_OK)
        status = attn_feed_forward(b->hidden, b->ffn, pre ? b->ln2 : b->ln1,
                                   p->w1, p->b1, p->w2, p->b2, rows, dm,
                                   d->d_ff, dm, b->rest);
    if (status != ATTN_OK) return status;
    add_into(b->sum2, pre ? b->sum1 : b->ln1, b->ffn, cells);
    if (!attn__all_finite(b->sum2, cells)) return ATTN_ERR_OVERFLOW_VALUE;
    if (!pre)
        status = attn_layer_norm(b->ln2, NULL, NULL, b->sum2, p->gamma2,
                                 p->beta2, rows, dm);
    return status;
}

int attn_transformer_block(const attn_block_outputs *out, const double *x,
                           const attn_block_params *params,
                           const attn_block_dims *dims,
                           const attn_options *opts, double *work)
{
    if (out == NULL || x == NULL || work == NULL) return ATTN_ERR_NULL;
    int status = check_args(params, dims);
    if (status != ATTN_OK) return status;
    const buffers b = buffers_at(work, dims);
    status = forward(&b, &out->attention, x, params, dims, opts);
    if (status != ATTN_OK) return status;
    const size_t rows = (size_t)dims->batch * (size_t)dims->n;
    const size_t cells = rows * (size_t)dims->d_model;
    copy_out(out->attention.output, b.attention, cells);
    copy_out(out->ln1, b.ln1, cells);
    copy_out(out->sum1, b.sum1, cells);
    copy_out(out->ln2, b.ln2, cells);
    copy_out(out->hidden, b.hidden, rows * (size_t)dims->d_ff);
    copy_out(out->ffn, b.ffn, cells);
    copy_out(out->sum2, b.sum2, cells);
    copy_out(out->output, dims->norm == ATTN_NORM_PRE ? b.sum2 : b.ln2, cells);
    return ATTN_OK;
}

/* The forward's intermediates the backward pass reads. */
typedef struct saved_sums {
    const double *ln1, *sum1, *ln2, *sum2;
} saved_sums;

/* The attention's backward pass, from its saved intermediates when there
 * are some. */
static int mha_backward(const attn_mha_grads *mg, const double *d_mha,
                        const double *mha_in, const attn_mha_outputs *mha_saved,
                        const attn_block_params *p, const attn_block_dims *d,
                        const attn_options *opts, double *step)
{
    const attn_mha_dims m = mha_dims_of(d);
    return mha_saved != NULL
               ? attn_multihead_backward_saved(mg, d_mha, mha_in, NULL,
                                               mha_saved, &p->attention, &m,
                                               opts, step)
               : attn_multihead_backward(mg, d_mha, mha_in, NULL, &p->attention,
                                         &m, opts, step);
}

/* The backward pass from the forward's intermediates s; the attention's
 * own from mha_saved, or computed again when it is NULL. scratch holds
 * three gradients [rows, d_model] and the work of the steps. */
static int backward(const attn_block_grads *grads, const double *d_output,
                    const double *x, const saved_sums *s,
                    const attn_mha_outputs *mha_saved,
                    const attn_block_params *p, const attn_block_dims *d,
                    const attn_options *opts, double *scratch)
{
    const int rows = d->batch * d->n, dm = d->d_model;
    const size_t cells = (size_t)rows * (size_t)dm;
    double *g1 = scratch, *g2 = g1 + cells, *g3 = g2 + cells;
    double *step = g3 + cells;
    attn_mha_grads mg = grads->attention;
    mg.x_q = g1;
    mg.x_kv = NULL;
    int status;

    if (d->norm == ATTN_NORM_POST) {
        /* out = LN2(sum2), sum2 = ln1 + FFN(ln1), ln1 = LN1(sum1),
         * sum1 = x + MHA(x). */
        status = attn_layer_norm_backward(g1, grads->gamma2, grads->beta2,
                                          d_output, s->sum2, p->gamma2, rows,
                                          dm);
        if (status == ATTN_OK)
            status = attn_feed_forward_backward(
                g2, grads->w1, grads->b1, grads->w2, grads->b2, g1, s->ln1,
                p->w1, p->b1, p->w2, p->b2, rows, dm, d->d_ff, dm, step);
        if (status != ATTN_OK) return status;
        add_into(g2, g2, g1, cells); /* d ln1 */
        status = attn_layer_norm_backward(g3, grads->gamma1, grads->beta1, g2,
                                          s->sum1, p->gamma1, rows, dm);
        if (status == ATTN_OK)
            status = mha_backward(&mg, g3, x, mha_saved, p, d, opts, step);
        if (status != ATTN_OK) return status;
        copy_out(grads->attention.x_q, g1, cells);
        if (grads->x != NULL) add_into(grads->x, g3, g1, cells);
    } else {
        /* out = sum1 + FFN(LN2(sum1)), sum1 = x + MHA(LN1(x)). */
        status = attn_feed_forward_backward(
            g1, grads->w1, grads->b1, grads->w2, grads->b2, d_output, s->ln2,
            p->w1, p->b1, p->w2, p->b2, rows, dm, d->d_ff, dm, step);
        if (status == ATTN_OK)
            status = attn_layer_norm_backward(g2, grads->gamma2, grads->beta2,
                                              g1, s->sum1, p->gamma2, rows, dm);
        if (status != ATTN_OK) return status;
        add_into(g2, g2, d_output, cells); /* d sum1 */
        status = mha_backward(&mg, g2, s->ln1, mha_saved, p, d, opts, step);
        if (status == ATTN_OK)
            status = attn_layer_norm_backward(g3, grads->gamma1, grads->beta1,
                                              g1, x, p->gamma1, rows, dm);
        if (status != ATTN_OK) return status;
        copy_out(grads->attention.x_q, g1, cells);
        if (grads->x != NULL) add_into(grads->x, g2, g3, cells);
    }
    return attn__all_finite(grads->x, cells) ? ATTN_OK
                                             : ATTN_ERR_OVERFLOW_VALUE;
}

/* The checks both backward passes make. */
static int check_backward(const attn_block_grads *grads, const double *d_output,
                          const double *x, const attn_block_params *params,
                          const attn_block_dims *dims, const double *work)
{
    if (grads == NULL || d_output == NULL || x == NULL || work == NULL)
        return ATTN_ERR_NULL;
    const int status = check_args(params, dims);
    if (status != ATTN_OK) return status;
    const size_t cells = (size_t)dims->batch * (size_t)dims->n *
                         (size_t)dims->d_model;
    return attn__all_finite(d_output, cells) ? ATTN_OK : ATTN_ERR_NOT_FINITE;
}

int attn_transformer_block_backward(const attn_block_grads *grads,
                                    const double *d_output, const double *x,
                                    const attn_block_params *params,
                                    const attn_block_dims *dims,
                                    const attn_options *opts, double *work)
{
    int status = check_backward(grads, d_output, x, params, dims, work);
    if (status != ATTN_OK) return status;
    const buffers b = buffers_at(work, dims);
    const attn_mha_outputs none = {0};
    status = forward(&b, &none, x, params, dims, opts);
    if (status != ATTN_OK) return status;
    const saved_sums s = {b.ln1, b.sum1, b.ln2, b.sum2};
    return backward(grads, d_output, x, &s, NULL, params, dims, opts, b.rest);
}

int attn_transformer_block_backward_saved(
    const attn_block_grads *grads, const double *d_output, const double *x,
    const attn_block_outputs *saved, const attn_block_params *params,
    const attn_block_dims *dims, const attn_options *opts, double *work)
{
    int status = check_backward(grads, d_output, x, params, dims, work);
    if (status != ATTN_OK) return status;
    if (saved == NULL || saved->ln1 == NULL || saved->sum1 == NULL ||
        saved->ln2 == NULL || saved->sum2 == NULL)
        return ATTN_ERR_NULL;
    const saved_sums s = {saved->ln1, saved->sum1, saved->ln2, saved->sum2};
    return backward(grads, d_output, x, &s, &saved->attention, params, dims,
                    opts, buffers_at(work, dims).rest);
}
