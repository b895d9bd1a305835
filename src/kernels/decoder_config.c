/* decoder_config.c: a Llama decoder's sizes, checked, and the lengths of
 * its key/value cache and work array. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

int attn_decoder_config_check(const attn_decoder_config *c)
{
    if (c == NULL) return ATTN_ERR_NULL;
    const int sizes[] = {c->vocab_size,
                         c->hidden_size,
                         c->intermediate_size,
                         c->num_hidden_layers,
                         c->num_attention_heads,
                         c->num_key_value_heads,
                         c->max_position_embeddings};
    int status = attn__check_sizes(sizes, 7);
    if (status != ATTN_OK) return status;
    if (c->hidden_size % c->num_attention_heads != 0) return ATTN_ERR_HEADS;
    if (c->num_attention_heads % c->num_key_value_heads != 0)
        return ATTN_ERR_KV_HEADS;
    if ((c->hidden_size / c->num_attention_heads) % 2 != 0)
        return ATTN_ERR_HEAD_DIM;
    if (!isfinite(c->rope_theta) || !(c->rope_theta > 0.0) ||
        !isfinite(c->rms_norm_eps) || c->rms_norm_eps < 0.0)
        return ATTN_ERR_RANGE;
    if (c->tie_word_embeddings != 0 && c->tie_word_embeddings != 1)
        return ATTN_ERR_OPTION;
    const int counts[][3] = {{c->vocab_size, c->hidden_size, 1},
                             {c->hidden_size, c->hidden_size, 1},
                             {c->hidden_size, c->intermediate_size, 1},
                             {c->num_hidden_layers, c->num_attention_heads, 1}};
    return attn__check_counts(counts, 4);
}

/* Columns of a row of K or V: num_key_value_heads · head_dim. */
int attn__decoder_kv_width(const attn_decoder_config *c)
{
    return c->hidden_size / c->num_attention_heads * c->num_key_value_heads;
}

size_t attn_kv_cache_size(const attn_decoder_config *config, int capacity)
{
    size_t count;
    if (attn_decoder_config_check(config) != ATTN_OK || capacity <= 0 ||
        attn__count3(&count, config->num_hidden_layers, capacity,
                     attn__decoder_kv_width(config)) != ATTN_OK)
        return 0;
    return count;
}

size_t attn_decoder_work_size(const attn_decoder_config *config, int n,
                              int capacity)
{
    size_t model, mlp, total;
    if (attn_decoder_config_check(config) != ATTN_OK || n <= 0 ||
        capacity <= 0 ||
        attn__count3(&model, n, config->hidden_size, ATTN__DECODER_ROWS) !=
            ATTN_OK ||
        attn__count3(&mlp, n, config->intermediate_size, 2) != ATTN_OK ||
        attn__add_size(&total, model, mlp) != ATTN_OK ||
        attn__add_size(&total, total, (size_t)capacity) != ATTN_OK)
        return 0;
    return total;
}
