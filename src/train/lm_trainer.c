/* lm_trainer.c: attn_lm_trainer_*, training a byte-level Llama decoder
 * with Adam on windows drawn from a text, and writing it as a Hugging Face
 * checkpoint (config.json and model.safetensors). */
#include "kernels/kernels.h"
#include "problem/problem.h"
#include "train/lm_train.h"
#include "train/train.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { NAME_CAP = 64, TENSORS_PER_LAYER = 9 };

struct attn_lm_trainer {
    attn_allocator allocator;
    attn_lm_settings settings;
    attn__lm_layout layout;
    uint64_t rng;
    long steps_done;
    void *block;
    double *params, *grads, *m, *v; /* [layout.count] each */
    double *pass_memory;            /* [attn__lm_pass_doubles] */
    int *positions;                 /* [seq_length] */
    int *tokens, *targets;          /* [batch_size · seq_length] */
    attn_tensor_out *tensors;       /* the checkpoint's, in its order */
    char (*names)[NAME_CAP];
    int tensor_count;
};

static int check_settings(const attn_lm_settings *s)
{
    int status = attn_decoder_config_check(&s->config);
    if (status != ATTN_OK) return status;
    if (s->seq_length <= 0 || s->batch_size <= 0 || s->steps <= 0)
        return ATTN_ERR_SIZE;
    if (s->seq_length > s->config.max_position_embeddings)
        return ATTN_ERR_POSITION;
    if (!isfinite(s->learning_rate) || !(s->learning_rate > 0.0))
        return ATTN_ERR_RANGE;
    return ATTN_OK;
}

/* The checkpoint's tensors in Hugging Face's names, pointing at params:
 * projections are stored x @ W, [in, out], and written transposed. */
static void name_tensors(attn_lm_trainer *t)
{
    const attn__lm_layout *lay = &t->layout;
    const attn_decoder_config *c = &lay->config;
    const int h = c->hidden_size, ff = c->intermediate_size;
    const int kv = attn__decoder_kv_width(c), vocab = c->vocab_size;
    int n = 0;
#define TENSOR(offset, rows, cols, flip, ...)                   \
    do {                                                        \
        snprintf(t->names[n], NAME_CAP, __VA_ARGS__);           \
        t->tensors[n] = (attn_tensor_out){t->names[n],          \
                                          (cols) ? 2 : 1,       \
                                          {(rows), (cols)},     \
                                          t->params + (offset), \
                                          (flip)};              \
        n++;                                                    \
    } while (0)
    TENSOR(lay->embed, vocab, h, 0, "model.embed_tokens.weight");
    for (int l = 0; l < c->num_hidden_layers; l++) {
        const size_t at = lay->first_layer + (size_t)l * lay->per_layer;
        const attn__lm_layer_layout *o = &lay->layer;
        TENSOR(at + o->input_norm, h, 0, 0,
               "model.layers.%d.input_layernorm.weight", l);
        TENSOR(at + o->q, h, h, 1, "model.layers.%d.self_attn.q_proj.weight",
               l);
        TENSOR(at + o->k, kv, h, 1, "model.layers.%d.self_attn.k_proj.weight",
               l);
        TENSOR(at + o->v, kv, h, 1, "model.layers.%d.self_attn.v_proj.weight",
               l);
        TENSOR(at + o->o, h, h, 1, "model.layers.%d.self_attn.o_proj.weight",
               l);
        TENSOR(at + o->post_norm, h, 0, 0,
               "model.layers.%d.post_attention_layernorm.weight", l);
        TENSOR(at + o->gate, ff, h, 1, "model.layers.%d.mlp.gate_proj.weight",
               l);
        TENSOR(at + o->up, ff, h, 1, "model.layers.%d.mlp.up_proj.weight", l);
        TENSOR(at + o->down, h, ff, 1, "model.layers.%d.mlp.down_proj.weight",
               l);
    }
    TENSOR(lay->norm, h, 0, 0, "model.norm.weight");
    if (!c->tie_word_embeddings)
        TENSOR(lay->lm_head, vocab, h, 0, "lm_head.weight");
#undef TENSOR
    t->tensor_count = n;
}

/* The block's parts and their sizes in bytes, each a multiple of 8. */
static int block_bytes(size_t *bytes, size_t *pass_doubles,
                       const attn__lm_layout *layout, const attn_lm_settings *s)
{
    const size_t tensors = (size_t)s->config.num_hidden_layers *
                               TENSORS_PER_LAYER +
                           3;
    size_t rows, total, part;
    *pass_doubles = attn__lm_pass_doubles(layout, s->batch_size, s->seq_length);
    if (*pass_doubles == 0 ||
        attn__count3(&rows, s->batch_size, s->seq_length, 1) != ATTN_OK ||
        attn__mul_size(&total, layout->count, 4 * sizeof(double)) != ATTN_OK ||
        attn__mul_size(&part, *pass_doubles, sizeof(double)) != ATTN_OK ||
        attn__add_size(&total, total, part) != ATTN_OK ||
        attn__mul_size(&part, 2 * rows + (size_t)s->seq_length + 1,
                       sizeof(int)) != ATTN_OK ||
        attn__add_size(&total, total, part) != ATTN_OK)
        return ATTN_ERR_SIZE_OVERFLOW;
    *bytes = total + tensors * (sizeof(attn_tensor_out) + NAME_CAP) + 8;
    return ATTN_OK;
}

int attn_lm_trainer_create(attn_lm_trainer **trainer,
                           const attn_lm_settings *settings,
                           const attn_allocator *allocator)
{
    if (trainer == NULL) return ATTN_ERR_NULL;
    *trainer = NULL;
    if (settings == NULL) return ATTN_ERR_NULL;
    const attn_allocator *use = attn__allocator_or_default(allocator);
    if (use == NULL) return ATTN_ERR_NULL;
    int status = check_settings(settings);
    attn__lm_layout layout;
    if (status == ATTN_OK)
        status = attn__lm_layout_make(&layout, &settings->config);
    size_t bytes, pass_doubles;
    if (status == ATTN_OK)
        status = block_bytes(&bytes, &pass_doubles, &layout, settings);
    if (status != ATTN_OK) return status;
    attn_lm_trainer *t = use->allocate(use->context, sizeof *t);
    if (t == NULL) return ATTN_ERR_NOMEM;
    memset(t, 0, sizeof *t);
    t->block = use->allocate(use->context, bytes);
    if (t->block == NULL) {
        use->release(use->context, t);
        return ATTN_ERR_NOMEM;
    }
    t->allocator = *use;
    t->settings = *settings;
    t->layout = layout;
    const size_t count = layout.count;
    const size_t rows = (size_t)settings->batch_size *
                        (size_t)settings->seq_length;
    t->params = t->block;
    t->grads = t->params + count;
    t->m = t->grads + count;
    t->v = t->m + count;
    t->pass_memory = t->v + count;
    t->tensors = (attn_tensor_out *)(t->pass_memory + pass_doubles);
    const size_t tensors = (size_t)settings->config.num_hidden_layers *
                               TENSORS_PER_LAYER +
                           3;
    t->names = (char(*)[NAME_CAP])(t->tensors + tensors);
    t->positions = (int *)(t->names + tensors);
    t->tokens = t->positions + settings->seq_length;
    t->targets = t->tokens + rows;
    attn__zero(t->m, count);
    attn__zero(t->v, count);
    t->rng = settings->seed;
    attn__lm_init(t->params, &t->layout, &t->rng);
    name_tensors(t);
    *trainer = t;
    return ATTN_OK;
}

void attn_lm_trainer_destroy(attn_lm_trainer *trainer)
{
    if (trainer == NULL) return;
    const attn_allocator allocator = trainer->allocator;
    allocator.release(allocator.context, trainer->block);
    allocator.release(allocator.context, trainer);
}

/* The pass over `batch` sequences of T tokens (at most the settings'). */
static attn__lm_pass pass_for(attn_lm_trainer *t, int batch, int T)
{
    attn__lm_pass pass;
    attn__lm_pass_place(&pass, t->pass_memory, t->positions, &t->layout, batch,
                        T);
    return pass;
}

/* Tokens and targets of a window of T + 1 bytes at `start`. */
static void window(int *tokens, int *targets, const unsigned char *text,
                   size_t start, int T)
{
    for (int i = 0; i < T; i++) {
        tokens[i] = text[start + (size_t)i];
        targets[i] = text[start + (size_t)i + 1];
    }
}

/* The rate of step `done`: learning_rate falling along a cosine to a
 * tenth of it at step `steps`, and a tenth after. */
static double rate(const attn_lm_settings *s, long done)
{
    const double progress = done < s->steps ? (double)done / s->steps : 1.0;
    return s->learning_rate * (0.55 + 0.45 * cos(3.141592653589793 * progress));
}

/* Adam (β₁ 0.9, β₂ 0.95, ε 1e-8, bias-corrected) after scaling the
 * gradient to a norm of at most 1. */
static void adam(attn_lm_trainer *t)
{
    const size_t count = t->layout.count;
    double norm = 0.0;
    for (size_t i = 0; i < count; i++) norm += t->grads[i] * t->grads[i];
    norm = sqrt(norm);
    const double clip = norm > 1.0 ? 1.0 / norm : 1.0;
    t->steps_done++;
    const double c1 = 1.0 - pow(0.9, (double)t->steps_done);
    const double c2 = 1.0 - pow(0.95, (double)t->steps_done);
    const double lr = rate(&t->settings, t->steps_done - 1);
    for (size_t i = 0; i < count; i++) {
        const double g = t->grads[i] * clip;
        t->m[i] = 0.9 * t->m[i] + 0.1 * g;
        t->v[i] = 0.95 * t->v[i] + 0.05 * g * g;
        t->params[i] -= lr * (t->m[i] / c1) / (sqrt(t->v[i] / c2) + 1e-8);
    }
}

int attn_lm_trainer_step(attn_lm_trainer *trainer, double *loss,
                         const unsigned char *text, size_t length)
{
    if (trainer == NULL || loss == NULL || text == NULL) return ATTN_ERR_NULL;
    const int B = trainer->settings.batch_size;
    const int T = trainer->settings.seq_length;
    if (length <= (size_t)T) return ATTN_ERR_SIZE;
    /* Starts uniform in [0, length − T − 1], from splitmix64 draws. */
    const uint64_t starts = (uint64_t)(length - (size_t)T);
    for (int b = 0; b < B; b++) {
        const size_t start = (size_t)(attn__splitmix64(&trainer->rng) % starts);
        window(trainer->tokens + (size_t)b * (size_t)T,
               trainer->targets + (size_t)b * (size_t)T, text, start, T);
    }
    attn__lm_pass pass = pass_for(trainer, B, T);
    int status = attn__lm_forward(&pass, trainer->params, &trainer->layout,
                                  trainer->tokens);
    if (status == ATTN_OK)
        status = attn_cross_entropy(loss, pass.logits, pass.logits,
                                    trainer->targets, pass.rows,
                                    trainer->layout.config.vocab_size);
    if (status == ATTN_OK)
        status = attn__lm_backward(trainer->grads, &pass, trainer->params,
                                   &trainer->layout, trainer->tokens);
    if (status == ATTN_OK) adam(trainer);
    return status;
}

int attn_lm_trainer_loss(attn_lm_trainer *trainer, double *loss,
                         const unsigned char *text, size_t length)
{
    if (trainer == NULL || loss == NULL || text == NULL) return ATTN_ERR_NULL;
    const int B = trainer->settings.batch_size;
    const int T = trainer->settings.seq_length;
    if (length <= (size_t)T) return ATTN_ERR_SIZE;
    const size_t windows = (length - 1) / (size_t)T;
    double total = 0.0;
    for (size_t first = 0; first < windows; first += (size_t)B) {
        const int batch = windows - first < (size_t)B ? (int)(windows - first)
                                                      : B;
        for (int b = 0; b < batch; b++)
            window(trainer->tokens + (size_t)b * (size_t)T,
                   trainer->targets + (size_t)b * (size_t)T, text,
                   (first + (size_t)b) * (size_t)T, T);
        attn__lm_pass pass = pass_for(trainer, batch, T);
        double mean;
        int status = attn__lm_forward(&pass, trainer->params, &trainer->layout,
                                      trainer->tokens);
        if (status == ATTN_OK)
            status = attn_cross_entropy(&mean, NULL, pass.logits,
                                        trainer->targets, pass.rows,
                                        trainer->layout.config.vocab_size);
        if (status != ATTN_OK) return status;
        total += mean * batch;
    }
    *loss = total / (double)windows;
    return ATTN_OK;
}

int attn_lm_trainer_logits(attn_lm_trainer *trainer, double *logits,
                           const int *tokens, int n)
{
    if (trainer == NULL || logits == NULL || tokens == NULL)
        return ATTN_ERR_NULL;
    if (n <= 0 || n > trainer->settings.seq_length) return ATTN_ERR_SIZE;
    attn__lm_pass pass = pass_for(trainer, 1, n);
    const int status = attn__lm_forward(&pass, trainer->params,
                                        &trainer->layout, tokens);
    if (status != ATTN_OK) return status;
    memcpy(logits, pass.logits,
           (size_t)n * (size_t)trainer->layout.config.vocab_size *
               sizeof *logits);
    return ATTN_OK;
}

int attn_lm_trainer_write(attn_lm_trainer *trainer, char *config_json,
                          size_t json_cap, size_t *json_length,
                          unsigned char *safetensors, size_t cap, size_t *size)
{
    if (trainer == NULL || json_length == NULL || size == NULL)
        return ATTN_ERR_NULL;
    for (size_t i = 0; i < trainer->layout.count; i++)
        trainer->params[i] = (double)(float)trainer->params[i];
    int status = attn_decoder_config_write(config_json, json_cap, json_length,
                                           &trainer->layout.config);
    const int file = attn_safetensors_write(
        safetensors, cap, size, trainer->tensors, trainer->tensor_count);
    return status != ATTN_OK ? status : file;
}
