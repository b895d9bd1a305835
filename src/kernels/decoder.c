/* decoder.c: a Llama decoder's forward pass over new tokens, appending
 * their keys and values to a key/value cache. Every row goes through the
 * same operations in the same order however many rows come at once, so
 * decoding token by token gives the bits of recomputing the whole text. */
#include "attention.h"
#include "kernels/kernels.h"

/* The work array, carved up for n rows. */
typedef struct buffers {
    double *x;    /* [n, hidden] the residual stream */
    double *a;    /* [n, hidden] RMSNorm's output */
    double *q;    /* [n, heads · head_dim] */
    double *att;  /* [n, heads · head_dim] the heads' outputs */
    double *proj; /* [n, hidden] o_proj's or the MLP's output */
    double *mlp;  /* [attn_gated_mlp_work_size(n, intermediate)] */
    double *row;  /* [capacity] a row of weights */
} buffers;

static buffers buffers_at(double *work, const attn_decoder_config *c, int n)
{
    const size_t cells = (size_t)n * (size_t)c->hidden_size;
    buffers b;
    b.x = work;
    b.a = b.x + cells;
    b.q = b.a + cells;
    b.att = b.q + cells;
    b.proj = b.att + cells;
    b.mlp = b.proj + cells;
    b.row = b.mlp + 2 * (size_t)n * (size_t)c->intermediate_size;
    return b;
}

static int layer_finite(const attn_decoder_layer *l,
                        const attn_decoder_config *c)
{
    const size_t h = (size_t)c->hidden_size;
    const size_t kv = (size_t)attn__decoder_kv_width(c);
    const size_t ff = (size_t)c->intermediate_size;
    return attn__all_finite(l->input_layernorm, h) &&
           attn__all_finite(l->q_proj, h * h) &&
           attn__all_finite(l->k_proj, h * kv) &&
           attn__all_finite(l->v_proj, h * kv) &&
           attn__all_finite(l->o_proj, h * h) &&
           attn__all_finite(l->post_attention_layernorm, h) &&
           attn__all_finite(l->gate_proj, h * ff) &&
           attn__all_finite(l->up_proj, h * ff) &&
           attn__all_finite(l->down_proj, ff * h);
}

/* ATTN_ERR_NULL for a missing weight, ATTN_ERR_NOT_FINITE for a weight
 * that is NaN or infinite. */
static int check_params(const attn_decoder_params *p,
                        const attn_decoder_config *c)
{
    if (p == NULL || p->embed_tokens == NULL || p->layers == NULL ||
        p->norm == NULL || (!c->tie_word_embeddings && p->lm_head == NULL))
        return ATTN_ERR_NULL;
    for (int i = 0; i < c->num_hidden_layers; i++) {
        const attn_decoder_layer *l = &p->layers[i];
        if (l->input_layernorm == NULL || l->q_proj == NULL ||
            l->k_proj == NULL || l->v_proj == NULL || l->o_proj == NULL ||
            l->post_attention_layernorm == NULL || l->gate_proj == NULL ||
            l->up_proj == NULL || l->down_proj == NULL)
            return ATTN_ERR_NULL;
    }
    const size_t table = (size_t)c->vocab_size * (size_t)c->hidden_size;
    if (!attn__all_finite(p->embed_tokens, table) ||
        !attn__all_finite(p->norm, (size_t)c->hidden_size) ||
        (!c->tie_word_embeddings && !attn__all_finite(p->lm_head, table)))
        return ATTN_ERR_NOT_FINITE;
    for (int i = 0; i < c->num_hidden_layers; i++)
        if (!layer_finite(&p->layers[i], c)) return ATTN_ERR_NOT_FINITE;
    return ATTN_OK;
}

/* The cache, the tokens and the outputs' size against the config. */
static int check_call(const attn_decoder_outputs *out,
                      const attn_kv_cache *cache, const int *tokens, int n,
                      const attn_decoder_config *c)
{
    if (cache->keys == NULL || cache->values == NULL) return ATTN_ERR_NULL;
    if (n <= 0 || cache->capacity <= 0) return ATTN_ERR_SIZE;
    if (cache->length < 0 || cache->length > cache->capacity)
        return ATTN_ERR_RANGE;
    if (n > cache->capacity - cache->length) return ATTN_ERR_CACHE_FULL;
    if (n > c->max_position_embeddings - cache->length)
        return ATTN_ERR_POSITION;
    for (int r = 0; r < n; r++)
        if (tokens[r] < 0 || tokens[r] >= c->vocab_size) return ATTN_ERR_TOKEN;
    size_t count;
    if (attn_kv_cache_size(c, cache->capacity) == 0 ||
        attn_decoder_work_size(c, n, cache->capacity) == 0 ||
        attn__count3(&count, n, c->vocab_size, 1) != ATTN_OK)
        return ATTN_ERR_SIZE_OVERFLOW;
    if (out->weights != NULL &&
        (attn__count3(&count, c->num_hidden_layers, c->num_attention_heads,
                      n) != ATTN_OK ||
         attn__mul_size(&count, count, (size_t)(cache->length + n)) != ATTN_OK))
        return ATTN_ERR_SIZE_OVERFLOW;
    return ATTN_OK;
}

/* x += add, then ATTN_ERR_OVERFLOW_VALUE if a sum overflowed. */
static int add_residual(double *x, const double *add, size_t count)
{
    for (size_t i = 0; i < count; i++) x[i] += add[i];
    return attn__all_finite(x, count) ? ATTN_OK : ATTN_ERR_OVERFLOW_VALUE;
}

/* Rotates row r of q (all heads) and of k (the kv heads) by its position. */
static int rotate_rows(double *q, double *k, int first, int n,
                       const attn_decoder_config *c)
{
    const int heads = c->num_attention_heads, kv = c->num_key_value_heads;
    const int d = c->hidden_size / heads;
    for (int r = 0; r < n; r++) {
        const int position = first + r;
        double *q_row = q + (size_t)r * (size_t)heads * (size_t)d;
        double *k_row = k + (size_t)r * (size_t)kv * (size_t)d;
        int status = attn_rope(q_row, q_row, &position, 1, heads, d,
                               c->rope_theta);
        if (status == ATTN_OK)
            status = attn_rope(k_row, k_row, &position, 1, kv, d,
                               c->rope_theta);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}

/* One layer on the n rows of b->x; weights [heads, n, length + n] or
 * NULL. */
static int layer_forward(const buffers *b, double *weights,
                         const attn_kv_cache *cache, int layer, int n,
                         const attn_decoder_layer *l,
                         const attn_decoder_config *c)
{
    const int h = c->hidden_size, kv = attn__decoder_kv_width(c);
    const int heads = c->num_attention_heads, d = h / heads;
    const size_t base = (size_t)layer * (size_t)cache->capacity * (size_t)kv;
    double *keys = cache->keys + base, *values = cache->values + base;
    double *k_new = keys + (size_t)cache->length * (size_t)kv;
    double *v_new = values + (size_t)cache->length * (size_t)kv;
    const size_t cells = (size_t)n * (size_t)h;
    int status = attn_rms_norm(b->a, NULL, b->x, l->input_layernorm, n, h,
                               c->rms_norm_eps);
    if (status == ATTN_OK)
        status = attn__affine(b->q, b->a, l->q_proj, NULL, n, h, h);
    if (status == ATTN_OK)
        status = attn__affine(k_new, b->a, l->k_proj, NULL, n, h, kv);
    if (status == ATTN_OK)
        status = attn__affine(v_new, b->a, l->v_proj, NULL, n, h, kv);
    if (status == ATTN_OK)
        status = rotate_rows(b->q, k_new, cache->length, n, c);
    if (status == ATTN_OK)
        status = attn_gqa(weights, b->att, b->q, keys, values, n,
                          cache->length + n, heads, c->num_key_value_heads, d,
                          b->row);
    if (status == ATTN_OK)
        status = attn__affine(b->proj, b->att, l->o_proj, NULL, n, h, h);
    if (status == ATTN_OK) status = add_residual(b->x, b->proj, cells);
    if (status == ATTN_OK)
        status = attn_rms_norm(b->a, NULL, b->x, l->post_attention_layernorm, n,
                               h, c->rms_norm_eps);
    if (status == ATTN_OK)
        status = attn_gated_mlp(NULL, b->proj, b->a, l->gate_proj, l->up_proj,
                                l->down_proj, n, h, c->intermediate_size, h,
                                b->mlp);
    if (status == ATTN_OK) status = add_residual(b->x, b->proj, cells);
    return status;
}

int attn_decoder_forward(const attn_decoder_outputs *out, attn_kv_cache *cache,
                         const int *tokens, int n,
                         const attn_decoder_params *params,
                         const attn_decoder_config *config, double *work)
{
    if (out == NULL || cache == NULL || tokens == NULL || work == NULL)
        return ATTN_ERR_NULL;
    int status = attn_decoder_config_check(config);
    if (status == ATTN_OK) status = check_call(out, cache, tokens, n, config);
    if (status == ATTN_OK) status = check_params(params, config);
    if (status != ATTN_OK) return status;
    const int h = config->hidden_size, vocab = config->vocab_size;
    const buffers b = buffers_at(work, config, n);
    for (int r = 0; r < n; r++)
        attn__copy(b.x + (size_t)r * (size_t)h,
                   params->embed_tokens + (size_t)tokens[r] * (size_t)h, h);
    const int keys = cache->length + n;
    const size_t per_layer = (size_t)config->num_attention_heads * (size_t)n *
                             (size_t)keys;
    for (int l = 0; l < config->num_hidden_layers && status == ATTN_OK; l++)
        status = layer_forward(
            &b,
            out->weights != NULL ? out->weights + (size_t)l * per_layer : NULL,
            cache, l, n, &params->layers[l], config);
    double *final = out->hidden != NULL ? out->hidden : b.a;
    if (status == ATTN_OK)
        status = attn_rms_norm(final, NULL, b.x, params->norm, n, h,
                               config->rms_norm_eps);
    if (status != ATTN_OK) return status;
    if (out->logits != NULL) {
        const double *head = config->tie_word_embeddings ? params->embed_tokens
                                                         : params->lm_head;
        for (int r = 0; r < n; r++)
            attn__dots(out->logits + (size_t)r * (size_t)vocab,
                       final + (size_t)r * (size_t)h, head, (size_t)h, vocab,
                       h);
        if (!attn__all_finite(out->logits, (size_t)n * (size_t)vocab))
            return ATTN_ERR_OVERFLOW_VALUE;
    }
    cache->length = keys;
    return ATTN_OK;
}
