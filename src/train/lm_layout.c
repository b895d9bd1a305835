/* lm_layout.c: a Llama decoder's weights in one array of doubles, their
 * views as attn_decoder_params, and their seeded initial values. */
#include "kernels/kernels.h"
#include "train/lm_train.h"
#include "train/train.h"

#include <math.h>

/* *offset = the running total; the total grows by a · b. */
static int take(size_t *offset, size_t *total, int a, int b)
{
    size_t cells;
    *offset = *total;
    if (attn__count3(&cells, a, b, 1) != ATTN_OK) return ATTN_ERR_SIZE_OVERFLOW;
    return attn__add_size(total, *total, cells);
}

int attn__lm_layout_make(attn__lm_layout *layout,
                         const attn_decoder_config *config)
{
    const int h = config->hidden_size, ff = config->intermediate_size;
    const int kv = attn__decoder_kv_width(config), vocab = config->vocab_size;
    layout->config = *config;
    size_t total = 0;
    attn__lm_layer_layout *l = &layout->layer;
    int status = take(&l->input_norm, &total, h, 1);
    if (status == ATTN_OK) status = take(&l->q, &total, h, h);
    if (status == ATTN_OK) status = take(&l->k, &total, h, kv);
    if (status == ATTN_OK) status = take(&l->v, &total, h, kv);
    if (status == ATTN_OK) status = take(&l->o, &total, h, h);
    if (status == ATTN_OK) status = take(&l->post_norm, &total, h, 1);
    if (status == ATTN_OK) status = take(&l->gate, &total, h, ff);
    if (status == ATTN_OK) status = take(&l->up, &total, h, ff);
    if (status == ATTN_OK) status = take(&l->down, &total, ff, h);
    if (status != ATTN_OK) return status;
    layout->per_layer = total;
    total = 0;
    size_t layers;
    status = take(&layout->embed, &total, vocab, h);
    layout->first_layer = total;
    if (status == ATTN_OK)
        status = attn__mul_size(&layers, layout->per_layer,
                                (size_t)config->num_hidden_layers);
    if (status == ATTN_OK) status = attn__add_size(&total, total, layers);
    if (status == ATTN_OK) status = take(&layout->norm, &total, h, 1);
    if (status != ATTN_OK) return status;
    layout->lm_head = layout->embed;
    if (!config->tie_word_embeddings)
        status = take(&layout->lm_head, &total, vocab, h);
    layout->count = total;
    return status;
}

attn_decoder_layer attn__lm_layer_at(const attn__lm_layout *layout,
                                     const double *params, int l)
{
    const double *p = params + layout->first_layer +
                      (size_t)l * layout->per_layer;
    const attn__lm_layer_layout *o = &layout->layer;
    const attn_decoder_layer layer = {
        p + o->input_norm, p + o->q,    p + o->k,  p + o->v,   p + o->o,
        p + o->post_norm,  p + o->gate, p + o->up, p + o->down};
    return layer;
}

void attn__lm_params_view(attn_decoder_params *view, attn_decoder_layer *layers,
                          const attn__lm_layout *layout, const double *params)
{
    for (int l = 0; l < layout->config.num_hidden_layers; l++)
        layers[l] = attn__lm_layer_at(layout, params, l);
    view->embed_tokens = params + layout->embed;
    view->layers = layers;
    view->norm = params + layout->norm;
    view->lm_head = params + layout->lm_head;
}

static void fill_normal(double *x, size_t count, double std, uint64_t *rng)
{
    for (size_t i = 0; i < count; i++) x[i] = std * attn__rng_normal(rng);
}

static void fill_ones(double *x, int count)
{
    for (int i = 0; i < count; i++) x[i] = 1.0;
}

void attn__lm_init(double *params, const attn__lm_layout *layout, uint64_t *rng)
{
    const attn_decoder_config *c = &layout->config;
    const int h = c->hidden_size, ff = c->intermediate_size;
    const size_t kv = (size_t)attn__decoder_kv_width(c);
    const size_t table = (size_t)c->vocab_size * (size_t)h;
    const double residual = 1.0 / sqrt(2.0 * c->num_hidden_layers);
    fill_normal(params + layout->embed, table, 0.02, rng);
    for (int l = 0; l < c->num_hidden_layers; l++) {
        double *p = params + layout->first_layer +
                    (size_t)l * layout->per_layer;
        const attn__lm_layer_layout *o = &layout->layer;
        const double in_h = 1.0 / sqrt((double)h), in_ff = 1.0 / sqrt(ff);
        fill_ones(p + o->input_norm, h);
        fill_normal(p + o->q, (size_t)h * (size_t)h, in_h, rng);
        fill_normal(p + o->k, (size_t)h * kv, in_h, rng);
        fill_normal(p + o->v, (size_t)h * kv, in_h, rng);
        fill_normal(p + o->o, (size_t)h * (size_t)h, in_h * residual, rng);
        fill_ones(p + o->post_norm, h);
        fill_normal(p + o->gate, (size_t)h * (size_t)ff, in_h, rng);
        fill_normal(p + o->up, (size_t)h * (size_t)ff, in_h, rng);
        fill_normal(p + o->down, (size_t)ff * (size_t)h, in_ff * residual, rng);
    }
    fill_ones(params + layout->norm, h);
    if (!c->tie_word_embeddings)
        fill_normal(params + layout->lm_head, table, 0.02, rng);
}
