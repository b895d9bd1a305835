/* head.c: one head's queries, keys and values on a text: the layer's
 * input from the decoder's first layers (their output normalised by the
 * layer's input_layernorm), projected onto the head's columns, queries and
 * keys rotated by their positions. */
#include "kernels/kernels.h"
#include "lm/lm.h"

/* Columns [first, first + d) of a [rows, cols] times w [hidden, cols]. */
static void project(double *out, const double *a, const double *w, int rows,
                    int hidden, int cols, int first, int d)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < d; c++) {
            double sum = 0.0;
            for (int i = 0; i < hidden; i++)
                sum += a[(size_t)r * (size_t)hidden + (size_t)i] *
                       w[(size_t)i * (size_t)cols + (size_t)(first + c)];
            out[(size_t)r * (size_t)d + (size_t)c] = sum;
        }
}

/* a [n, hidden]: the input of layer `layer`, after its input_layernorm. */
static int layer_input(attn_model *m, double *a, double *memory,
                       const int *tokens, int n, int layer)
{
    const attn_decoder_config *c = &m->config;
    const attn_decoder_layer *l = &m->params.layers[layer];
    const int h = c->hidden_size;
    if (layer == 0) {
        for (int r = 0; r < n; r++)
            attn__copy(a + (size_t)r * (size_t)h,
                       m->params.embed_tokens + (size_t)tokens[r] * (size_t)h,
                       h);
        return attn_rms_norm(a, NULL, a, l->input_layernorm, n, h,
                             c->rms_norm_eps);
    }
    /* The first `layer` layers, their final norm the layer's own. */
    attn_decoder_config first = *c;
    first.num_hidden_layers = layer;
    attn_decoder_params params = m->params;
    params.norm = l->input_layernorm;
    const size_t cache = attn_kv_cache_size(&first, n);
    attn_kv_cache kv = {memory, memory + cache, n, 0};
    const attn_decoder_outputs out = {NULL, NULL, a};
    return attn_decoder_forward(&out, &kv, tokens, n, &params, &first,
                                memory + 2 * cache);
}

/* Doubles of head's memory: the layer's input, then the first layers'
 * cache and work; 0 when they do not fit. */
static size_t head_doubles(const attn_decoder_config *c, int n)
{
    size_t input, total;
    if (attn__count3(&input, n, c->hidden_size, 1) != ATTN_OK) return 0;
    const size_t cache = attn_kv_cache_size(c, n);
    const size_t work = attn_decoder_work_size(c, n, n);
    if (cache == 0 || work == 0 ||
        attn__add_size(&total, input, cache) != ATTN_OK ||
        attn__add_size(&total, total, cache) != ATTN_OK ||
        attn__add_size(&total, total, work) != ATTN_OK)
        return 0;
    return total;
}

int attn_model_head(attn_model *model, double *q, double *k, double *v,
                    const int *tokens, int n, int layer, int head)
{
    if (model == NULL) return ATTN_ERR_NULL;
    int status = attn__model_check_tokens(model, tokens, n, 0);
    if (status != ATTN_OK) return status;
    const attn_decoder_config *c = &model->config;
    if (q == NULL || k == NULL || v == NULL)
        return attn__model_error(model, ATTN_ERR_NULL, "no q, k or v");
    if (layer < 0 || layer >= c->num_hidden_layers)
        return attn__model_error(model, ATTN_ERR_RANGE,
                                 "layer %d is not a layer of this model, "
                                 "whose layers are 0 to %d",
                                 layer, c->num_hidden_layers - 1);
    if (head < 0 || head >= c->num_attention_heads)
        return attn__model_error(model, ATTN_ERR_RANGE,
                                 "head %d is not a head of this model, whose "
                                 "heads are 0 to %d",
                                 head, c->num_attention_heads - 1);
    const size_t doubles = head_doubles(c, n);
    size_t bytes = SIZE_MAX;
    if (doubles > 0) attn__mul_size(&bytes, doubles, sizeof(double));
    double *a = attn__model_allocate(model, &status, bytes, 0,
                                     "the head's layer input and working "
                                     "memory");
    if (a == NULL) return status;
    status = layer_input(model, a, a + (size_t)n * (size_t)c->hidden_size,
                         tokens, n, layer);
    const attn_decoder_layer *l = &model->params.layers[layer];
    const int h = c->hidden_size, heads = c->num_attention_heads;
    const int d = h / heads;
    const int kv = c->num_key_value_heads, group = heads / kv;
    if (status == ATTN_OK) {
        project(q, a, l->q_proj, n, h, heads * d, head * d, d);
        project(k, a, l->k_proj, n, h, kv * d, head / group * d, d);
        project(v, a, l->v_proj, n, h, kv * d, head / group * d, d);
        for (int r = 0; r < n && status == ATTN_OK; r++) {
            status = attn_rope(q + (size_t)r * (size_t)d,
                               q + (size_t)r * (size_t)d, &r, 1, 1, d,
                               c->rope_theta);
            if (status == ATTN_OK)
                status = attn_rope(k + (size_t)r * (size_t)d,
                                   k + (size_t)r * (size_t)d, &r, 1, 1, d,
                                   c->rope_theta);
        }
    }
    attn__model_release(model, a);
    if (status != ATTN_OK)
        return attn__model_error(model, status, "the decoder failed: %s",
                                 attn_status_text(status));
    model->error[0] = '\0';
    return ATTN_OK;
}
