/* model.c: the trainer's model: token embedding plus learned positions,
 * 1-2 layers, an unembedding to logits; cross-entropy; the backward pass.
 * Each layer is one call of the engine's kernels: attn_transformer_block
 * (post-norm, with its feed-forward network and LayerNorms) when d_ff > 0,
 * else attn_multihead in a residual connection. */
#include "train/train.h"
#include "kernels/kernels.h"

#include <math.h>
#include <string.h>

static size_t take(size_t *at, size_t count)
{
    const size_t here = *at;
    *at += count;
    return here;
}

void attn__model_layout(attn__model *model, const double *settings)
{
    memset(model, 0, sizeof *model);
    model->layers = (int)settings[ATTN__SET_LAYERS];
    model->heads = (int)settings[ATTN__SET_HEADS];
    model->d_model = (int)settings[ATTN__SET_D_MODEL];
    model->d_ff = (int)settings[ATTN__SET_D_FF];
    model->seq_length = (int)settings[ATTN__SET_SEQ_LENGTH];
    model->vocab = (int)settings[ATTN__SET_VOCAB];
    attn_options_init(&model->opts);
    model->opts.scale_kind = settings[ATTN__SET_SCALE] != 0.0
                                 ? ATTN_SCALE_INV_SQRT_DK
                                 : ATTN_SCALE_NONE;
    if (settings[ATTN__SET_CAUSAL] != 0.0)
        model->opts.mask.kinds = ATTN_MASK_CAUSAL;
    /* Every size is at most 64 (attn_trainer_set checks), so no sum
     * below can overflow. */
    const size_t d = (size_t)model->d_model, ff = (size_t)model->d_ff;
    size_t at = 0;
    model->embed = take(&at, (size_t)model->vocab * d);
    model->position = take(&at, (size_t)model->seq_length * d);
    for (int l = 0; l < model->layers; l++) {
        attn__layer_layout *layer = &model->layer[l];
        layer->wq = take(&at, d * d);
        layer->wk = take(&at, d * d);
        layer->wv = take(&at, d * d);
        layer->wo = take(&at, d * d);
        layer->bq = take(&at, d);
        layer->bk = take(&at, d);
        layer->bv = take(&at, d);
        layer->bo = take(&at, d);
        if (ff == 0) continue;
        layer->gamma1 = take(&at, d);
        layer->beta1 = take(&at, d);
        layer->w1 = take(&at, d * ff);
        layer->b1 = take(&at, ff);
        layer->w2 = take(&at, ff * d);
        layer->b2 = take(&at, d);
        layer->gamma2 = take(&at, d);
        layer->beta2 = take(&at, d);
    }
    model->unembed = take(&at, d * (size_t)model->vocab);
    model->unembed_bias = take(&at, (size_t)model->vocab);
    model->count = at;
}

static void fill_normal(double *values, size_t count, double deviation,
                        uint64_t *rng)
{
    for (size_t i = 0; i < count; i++)
        values[i] = deviation * attn__rng_normal(rng);
}

static void fill(double *values, size_t count, double value)
{
    for (size_t i = 0; i < count; i++) values[i] = value;
}

void attn__model_init(double *params, const attn__model *model, uint64_t *rng)
{
    const size_t d = (size_t)model->d_model, ff = (size_t)model->d_ff;
    const double per_d = 1.0 / sqrt((double)d);
    fill(params, model->count, 0.0); /* biases and β */
    fill_normal(params + model->embed, (size_t)model->vocab * d, 1.0, rng);
    fill_normal(params + model->position, (size_t)model->seq_length * d, 1.0,
                rng);
    for (int l = 0; l < model->layers; l++) {
        const attn__layer_layout *layer = &model->layer[l];
        const size_t projections[] = {layer->wq, layer->wk, layer->wv,
                                      layer->wo};
        /* W_Q starts at 0: every query, so every score, is 0 and each
         * head's first attention is uniform, not peaked by chance; W_K at
         * its usual scale gives W_Q its first gradient. Its draws are still
         * made, so every other parameter starts where it would anyway. */
        for (int p = 0; p < 4; p++)
            fill_normal(params + projections[p], d * d, p == 0 ? 0.0 : per_d,
                        rng);
        if (ff == 0) continue;
        fill(params + layer->gamma1, d, 1.0);
        fill(params + layer->gamma2, d, 1.0);
        fill_normal(params + layer->w1, d * ff, per_d, rng);
        fill_normal(params + layer->w2, ff * d, 1.0 / sqrt((double)ff), rng);
    }
    fill_normal(params + model->unembed, d * (size_t)model->vocab, per_d, rng);
}

/* ---- One layer's parameters and gradients as the kernels take them ---- */

static attn_mha_params mha_params(const double *base,
                                  const attn__layer_layout *layer)
{
    const attn_mha_params params = {
        base + layer->wq, base + layer->wk, base + layer->wv, base + layer->wo,
        base + layer->bq, base + layer->bk, base + layer->bv, base + layer->bo,
    };
    return params;
}

static attn_block_params block_params(const double *base,
                                      const attn__layer_layout *layer)
{
    const attn_block_params params = {
        mha_params(base, layer), base + layer->gamma1, base + layer->beta1,
        base + layer->w1,        base + layer->b1,     base + layer->w2,
        base + layer->b2,        base + layer->gamma2, base + layer->beta2,
    };
    return params;
}

/* Parameter gradients only; the input's gradient is set by the caller. */
static attn_mha_grads mha_grads(double *base, const attn__layer_layout *layer)
{
    attn_mha_grads grads;
    memset(&grads, 0, sizeof grads);
    grads.wq = base + layer->wq;
    grads.wk = base + layer->wk;
    grads.wv = base + layer->wv;
    grads.wo = base + layer->wo;
    grads.bq = base + layer->bq;
    grads.bk = base + layer->bk;
    grads.bv = base + layer->bv;
    grads.bo = base + layer->bo;
    return grads;
}

static attn_block_grads block_grads(double *base,
                                    const attn__layer_layout *layer)
{
    attn_block_grads grads;
    memset(&grads, 0, sizeof grads);
    grads.attention = mha_grads(base, layer);
    grads.gamma1 = base + layer->gamma1;
    grads.beta1 = base + layer->beta1;
    grads.w1 = base + layer->w1;
    grads.b1 = base + layer->b1;
    grads.w2 = base + layer->w2;
    grads.b2 = base + layer->b2;
    grads.gamma2 = base + layer->gamma2;
    grads.beta2 = base + layer->beta2;
    return grads;
}

static attn_block_dims block_dims(const attn__model *model, int batch, int n)
{
    const attn_block_dims dims = {batch,        n,           model->d_model,
                                  model->heads, model->d_ff, ATTN_NORM_POST};
    return dims;
}

static attn_mha_dims mha_dims(const attn__model *model, int batch, int n)
{
    const int d = model->d_model;
    const attn_mha_dims dims = {batch, n, n, d, d, d, model->heads, d};
    return dims;
}

/* ---- Buffers ---- */

/* Doubles one layer's saved forward takes (attn__pass.saved): the
 * attention's q, k, v, concat and weights, and with a feed-forward network
 * the block's ln1, sum1, ln2 and sum2 too. */
static size_t saved_per_layer(const attn__model *model, int batch)
{
    const size_t rows = (size_t)batch * (size_t)model->seq_length;
    const size_t t = (size_t)model->seq_length;
    const size_t row_arrays = model->d_ff > 0 ? 8 : 4;
    return row_arrays * rows * (size_t)model->d_model +
           (size_t)batch * (size_t)model->heads * t * t;
}

int attn__pass_size(size_t *doubles, size_t *work_count,
                    const attn__model *model, int batch)
{
    const size_t rows = (size_t)batch * (size_t)model->seq_length;
    const size_t d = (size_t)model->d_model;
    size_t work;
    if (model->d_ff > 0) {
        const attn_block_dims dims = block_dims(model, batch,
                                                model->seq_length);
        const size_t forward = attn_transformer_block_work_size(&dims);
        const size_t backward = attn_transformer_block_backward_work_size(
            &dims);
        work = forward > backward ? forward : backward;
    } else {
        const attn_mha_dims dims = mha_dims(model, batch, model->seq_length);
        const size_t forward = attn_multihead_work_size(&dims);
        const size_t backward = attn_multihead_backward_work_size(&dims);
        work = forward > backward ? forward : backward;
    }
    if (work == 0) return ATTN_ERR_SIZE_OVERFLOW;
    *work_count = work;
    *doubles = ((size_t)model->layers + 1) * rows * d +
               rows * (size_t)model->vocab + 2 * rows * d +
               (size_t)model->layers * saved_per_layer(model, batch) + work;
    return ATTN_OK;
}

void attn__pass_place(attn__pass *pass, double *memory,
                      const attn__model *model, int batch, size_t work_count)
{
    const size_t rows = (size_t)batch * (size_t)model->seq_length;
    const size_t d = (size_t)model->d_model;
    pass->batch = batch;
    pass->acts = memory;
    pass->logits = pass->acts + ((size_t)model->layers + 1) * rows * d;
    pass->d_a = pass->logits + rows * (size_t)model->vocab;
    pass->d_b = pass->d_a + rows * d;
    pass->saved = pass->d_b + rows * d;
    pass->work = pass->saved +
                 (size_t)model->layers * saved_per_layer(model, batch);
    pass->work_count = work_count;
}

/* Layer l's input (l = layers: the last output), [batch, n, d_model]. */
static double *activation(const attn__pass *pass, const attn__model *model,
                          int l)
{
    return pass->acts + (size_t)l * (size_t)pass->batch *
                            (size_t)model->seq_length * (size_t)model->d_model;
}

const double *attn__model_layer_input(const attn__pass *pass,
                                      const attn__model *model, int l)
{
    return activation(pass, model, l);
}

/* ---- Forward ---- */

static void embed(double *h, const double *params, const attn__model *model,
                  const int *tokens, int rows, int n)
{
    const int d = model->d_model;
    for (int r = 0; r < rows; r++) {
        const double *token = params + model->embed + (size_t)tokens[r] * d;
        const double *position = params + model->position + (size_t)(r % n) * d;
        for (int c = 0; c < d; c++)
            h[(size_t)r * d + c] = token[c] + position[c];
    }
}

/* Layer l's saved forward for [batch, n] (attn__pass.saved): the
 * attention's, then with a feed-forward network the block's own. */
static attn_block_outputs saved_forward(const attn__pass *pass,
                                        const attn__model *model, int l, int n)
{
    const size_t per_layer = saved_per_layer(model, pass->batch);
    const size_t item = (size_t)pass->batch * (size_t)n *
                        (size_t)model->d_model;
    double *at = pass->saved + (size_t)l * per_layer;
    attn_block_outputs outs;
    memset(&outs, 0, sizeof outs);
    outs.attention.q = at;
    outs.attention.k = at + item;
    outs.attention.v = at + 2 * item;
    outs.attention.concat = at + 3 * item;
    outs.attention.weights = at + 4 * item;
    if (model->d_ff > 0) {
        double *block = outs.attention.weights + (size_t)pass->batch *
                                                     (size_t)model->heads *
                                                     (size_t)n * (size_t)n;
        outs.ln1 = block;
        outs.sum1 = block + item;
        outs.ln2 = block + 2 * item;
        outs.sum2 = block + 3 * item;
    }
    return outs;
}

static int layer_forward(double *out, double *weights, const double *in,
                         const double *params, const attn__model *model,
                         const attn__pass *pass, int l, int batch, int n)
{
    double *work = pass->work;
    const attn__layer_layout *layer = &model->layer[l];
    attn_block_outputs outs = saved_forward(pass, model, l, n);
    int status;
    if (model->d_ff > 0) {
        const attn_block_params bp = block_params(params, layer);
        const attn_block_dims dims = block_dims(model, batch, n);
        outs.output = out;
        status = attn_transformer_block(&outs, in, &bp, &dims, &model->opts,
                                        work);
    } else {
        const attn_mha_params mp = mha_params(params, layer);
        const attn_mha_dims dims = mha_dims(model, batch, n);
        outs.attention.output = out;
        status = attn_multihead(&outs.attention, in, NULL, &mp, &dims,
                                &model->opts, work);
        const size_t count = (size_t)batch * (size_t)n * (size_t)model->d_model;
        if (status == ATTN_OK)
            for (size_t i = 0; i < count; i++) out[i] += in[i]; /* residual */
    }
    if (status == ATTN_OK && weights != NULL)
        memcpy(weights, outs.attention.weights,
               (size_t)batch * (size_t)model->heads * (size_t)n * (size_t)n *
                   sizeof *weights);
    return status;
}

int attn__model_forward(attn__pass *pass, double *weights, const double *params,
                        const attn__model *model, const int *tokens, int batch,
                        int n)
{
    const int rows = batch * n;
    embed(activation(pass, model, 0), params, model, tokens, rows, n);
    const size_t per_layer = (size_t)batch * (size_t)model->heads * (size_t)n *
                             (size_t)n;
    for (int l = 0; l < model->layers; l++) {
        const int status = layer_forward(
            activation(pass, model, l + 1),
            weights != NULL ? weights + (size_t)l * per_layer : NULL,
            activation(pass, model, l), params, model, pass, l, batch, n);
        if (status != ATTN_OK) return status;
    }
    return attn__affine(pass->logits, activation(pass, model, model->layers),
                        params + model->unembed, params + model->unembed_bias,
                        rows, model->d_model, model->vocab);
}

/* ---- Loss ---- */

void attn__model_loss(double *loss, int *right, int *counted_total,
                      attn__pass *pass, const attn__model *model,
                      const int *targets, const unsigned char *counted,
                      int batch, int n, int d_logits)
{
    const int rows = batch * n, vocab = model->vocab;
    int total = 0;
    for (int r = 0; r < rows; r++) total += counted[r] != 0;
    double sum = 0.0;
    int hits = 0;
    for (int r = 0; r < rows; r++) {
        double *z = pass->logits + (size_t)r * vocab;
        int best = 0;
        for (int v = 1; v < vocab; v++)
            if (z[v] > z[best]) best = v;
        const double top = z[best];
        double exp_sum = 0.0;
        for (int v = 0; v < vocab; v++) exp_sum += exp(z[v] - top);
        if (counted[r]) {
            sum += log(exp_sum) - (z[targets[r]] - top);
            hits += best == targets[r];
        }
        if (!d_logits) continue;
        /* dL/dz = (softmax(z) − onehot(target)) / total, 0 if not counted */
        for (int v = 0; v < vocab; v++) {
            const double p = exp(z[v] - top) / exp_sum;
            z[v] = counted[r] ? (p - (v == targets[r])) / total : 0.0;
        }
    }
    *loss = total > 0 ? sum / total : 0.0;
    *right = hits;
    *counted_total = total;
}

/* ---- Backward ---- */

/* d_unembed = hᵀ d_logits, d_bias = Σ_r d_logits, d_h = d_logits Uᵀ. */
static void unembed_backward(double *grads, double *d_h, const double *params,
                             const attn__model *model, const double *h,
                             const double *d_logits, int rows)
{
    const int d = model->d_model, vocab = model->vocab;
    double *d_u = grads + model->unembed;
    double *d_bias = grads + model->unembed_bias;
    const double *u = params + model->unembed;
    fill(d_u, (size_t)d * vocab, 0.0);
    fill(d_bias, (size_t)vocab, 0.0);
    for (int r = 0; r < rows; r++) {
        const double *g = d_logits + (size_t)r * vocab;
        const double *h_row = h + (size_t)r * d;
        for (int c = 0; c < d; c++) {
            double *d_u_row = d_u + (size_t)c * vocab;
            for (int v = 0; v < vocab; v++) d_u_row[v] += h_row[c] * g[v];
            d_h[(size_t)r * d + c] = attn__dot(g, u + (size_t)c * vocab, vocab);
        }
        for (int v = 0; v < vocab; v++) d_bias[v] += g[v];
    }
}

static int layer_backward(double *d_in, double *grads, const double *d_out,
                          const double *in, const double *params,
                          const attn__model *model, const attn__pass *pass,
                          int l, int batch, int n)
{
    double *work = pass->work;
    const attn__layer_layout *layer = &model->layer[l];
    const attn_block_outputs saved = saved_forward(pass, model, l, n);
    if (model->d_ff > 0) {
        const attn_block_params bp = block_params(params, layer);
        const attn_block_dims dims = block_dims(model, batch, n);
        attn_block_grads g = block_grads(grads, layer);
        g.x = d_in;
        return attn_transformer_block_backward_saved(&g, d_out, in, &saved, &bp,
                                                     &dims, &model->opts, work);
    }
    const attn_mha_params mp = mha_params(params, layer);
    const attn_mha_dims dims = mha_dims(model, batch, n);
    attn_mha_grads g = mha_grads(grads, layer);
    g.x_q = d_in;
    const int status = attn_multihead_backward_saved(
        &g, d_out, in, NULL, &saved.attention, &mp, &dims, &model->opts, work);
    if (status != ATTN_OK) return status;
    const size_t count = (size_t)batch * (size_t)n * (size_t)model->d_model;
    for (size_t i = 0; i < count; i++) d_in[i] += d_out[i]; /* residual */
    return ATTN_OK;
}

int attn__model_backward(double *grads, attn__pass *pass, const double *params,
                         const attn__model *model, const int *tokens, int batch,
                         int n)
{
    const int rows = batch * n, d = model->d_model;
    double *d_out = pass->d_a, *d_in = pass->d_b;
    unembed_backward(grads, d_out, params, model,
                     activation(pass, model, model->layers), pass->logits,
                     rows);
    for (int l = model->layers - 1; l >= 0; l--) {
        const int status = layer_backward(d_in, grads, d_out,
                                          activation(pass, model, l), params,
                                          model, pass, l, batch, n);
        if (status != ATTN_OK) return status;
        double *swap = d_out;
        d_out = d_in;
        d_in = swap;
    }
    /* d_out is now dL/d(embedding + position), row by row. */
    double *d_embed = grads + model->embed;
    double *d_position = grads + model->position;
    fill(d_embed, (size_t)model->vocab * d, 0.0);
    fill(d_position, (size_t)model->seq_length * d, 0.0);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < d; c++) {
            const double g = d_out[(size_t)r * d + c];
            d_embed[(size_t)tokens[r] * d + c] += g;
            d_position[(size_t)(r % n) * d + c] += g;
        }
    return ATTN_OK;
}
