/* model.c: the model object: its allocator and byte limit, its error,
 * and its weights loaded from a checkpoint's bytes, every tensor checked
 * against the shape the config gives it before any is read. */
#include "kernels/kernels.h"
#include "lm/lm.h"
#include "problem/problem.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int attn_model_create(attn_model **model, const attn_allocator *allocator)
{
    if (model == NULL) return ATTN_ERR_NULL;
    *model = NULL;
    const attn_allocator *use = attn__allocator_or_default(allocator);
    if (use == NULL) return ATTN_ERR_NULL;
    attn_model *m = use->allocate(use->context, sizeof *m);
    if (m == NULL) return ATTN_ERR_NOMEM;
    memset(m, 0, sizeof *m);
    m->allocator = *use;
    m->max_bytes = ATTN_MODEL_DEFAULT_MAX_BYTES;
    m->held = sizeof *m;
    *model = m;
    return ATTN_OK;
}

void attn_model_destroy(attn_model *model)
{
    if (model == NULL) return;
    attn__model_release(model, model->block);
    model->allocator.release(model->allocator.context, model);
}

int attn_model_set_max_bytes(attn_model *model, size_t max_bytes)
{
    if (model == NULL) return ATTN_ERR_NULL;
    model->max_bytes = max_bytes > 0 ? max_bytes : ATTN_MODEL_DEFAULT_MAX_BYTES;
    return ATTN_OK;
}

const char *attn_model_error(const attn_model *model)
{
    return model != NULL ? model->error : "";
}

const attn_decoder_config *attn_model_config(const attn_model *model)
{
    return model != NULL && model->loaded ? &model->config : NULL;
}

int attn__model_error(attn_model *model, int status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(model->error, sizeof model->error, format, args);
    va_end(args);
    return status;
}

void *attn__model_allocate(attn_model *model, int *status, size_t bytes,
                           size_t also, const char *what)
{
    size_t total = SIZE_MAX;
    if (attn__add_size(&total, model->held, bytes) != ATTN_OK ||
        attn__add_size(&total, total, also) != ATTN_OK)
        total = SIZE_MAX;
    if (total > model->max_bytes) {
        *status = attn__model_error(
            model, ATTN_ERR_TOO_LARGE,
            "the model needs %zu bytes for %s, more than its limit of %zu "
            "bytes; raise the limit (--max-bytes in attn model)",
            total, what, model->max_bytes);
        return NULL;
    }
    void *block = model->allocator.allocate(model->allocator.context,
                                            bytes > 0 ? bytes : 1);
    if (block == NULL) {
        *status = attn__model_error(model, ATTN_ERR_NOMEM,
                                    "out of memory for %s (%zu bytes)", what,
                                    bytes);
        return NULL;
    }
    *status = ATTN_OK;
    return block;
}

void attn__model_release(attn_model *model, void *block)
{
    if (block != NULL)
        model->allocator.release(model->allocator.context, block);
}

/* ---- The checkpoint's tensors ---- */

/* One tensor the config implies: its name, its shape in the checkpoint
 * ([out, in] for a projection) and where its values go, transposed to
 * [in, out] when `transpose`. */
typedef struct tensor {
    char name[64];
    int rank, rows, cols, transpose;
    double *into;
} tensor;

enum { LAYER_TENSORS = 9 };

static const char *const layer_names[LAYER_TENSORS] = {
    "input_layernorm",  "self_attn.q_proj", "self_attn.k_proj",
    "self_attn.v_proj", "self_attn.o_proj", "post_attention_layernorm",
    "mlp.gate_proj",    "mlp.up_proj",      "mlp.down_proj"};

/* Tensor i of a layer: rank, rows and columns as stored. */
static void layer_shape(tensor *t, int i, const attn_decoder_config *c)
{
    const int h = c->hidden_size, ff = c->intermediate_size;
    const int kv = h / c->num_attention_heads * c->num_key_value_heads;
    const int rows[LAYER_TENSORS] = {h, h, kv, kv, h, h, ff, ff, h};
    const int cols[LAYER_TENSORS] = {1, h, h, h, h, 1, h, h, ff};
    t->rank = cols[i] == 1 ? 1 : 2;
    t->rows = rows[i];
    t->cols = cols[i];
    t->transpose = t->rank == 2;
}

static size_t tensor_count(const tensor *t)
{
    return (size_t)t->rows * (size_t)t->cols;
}

/* Tensor number `index` of the checkpoint (embed_tokens, the layers' in
 * order, norm, lm_head), or 0 past the last. */
static int tensor_at(tensor *t, int index, const attn_decoder_config *c)
{
    const int layered = c->num_hidden_layers * LAYER_TENSORS;
    t->transpose = 0;
    t->rank = 2;
    t->rows = c->vocab_size;
    t->cols = c->hidden_size;
    if (index == 0) {
        snprintf(t->name, sizeof t->name, "model.embed_tokens.weight");
    } else if (index <= layered) {
        const int layer = (index - 1) / LAYER_TENSORS;
        const int i = (index - 1) % LAYER_TENSORS;
        snprintf(t->name, sizeof t->name, "model.layers.%d.%s.weight", layer,
                 layer_names[i]);
        layer_shape(t, i, c);
    } else if (index == layered + 1) {
        snprintf(t->name, sizeof t->name, "model.norm.weight");
        t->rank = 1;
        t->rows = c->hidden_size;
        t->cols = 1;
    } else if (index == layered + 2 && !c->tie_word_embeddings) {
        snprintf(t->name, sizeof t->name, "lm_head.weight");
    } else {
        return 0;
    }
    return 1;
}

/* The layers' pointers, rounded up to a whole number of doubles. */
static size_t pointer_bytes(const attn_decoder_config *c)
{
    const size_t bytes = (size_t)c->num_hidden_layers *
                         sizeof(attn_decoder_layer);
    return (bytes + sizeof(double) - 1) / sizeof(double) * sizeof(double);
}

size_t attn__model_weight_bytes(const attn_decoder_config *config)
{
    size_t doubles = 0, bytes;
    tensor t;
    for (int i = 0; tensor_at(&t, i, config); i++)
        if (attn__add_size(&doubles, doubles, tensor_count(&t)) != ATTN_OK)
            return 0;
    if (attn__mul_size(&bytes, doubles, sizeof(double)) != ATTN_OK ||
        attn__add_size(&bytes, bytes, pointer_bytes(config)) != ATTN_OK)
        return 0;
    return bytes;
}

size_t attn__model_scratch_bytes(const attn_decoder_config *config)
{
    size_t largest = 0;
    tensor t;
    for (int i = 0; tensor_at(&t, i, config); i++)
        if (t.transpose && tensor_count(&t) > largest)
            largest = tensor_count(&t);
    return largest * sizeof(double);
}

/* Where each tensor's values go in the block, and the params pointing at
 * them. */
static void lay_out(attn_model *m)
{
    const attn_decoder_config *c = &m->config;
    attn_decoder_layer *layers = m->block;
    double *next = (double *)((char *)m->block + pointer_bytes(c));
    tensor t;
    for (int i = 0; tensor_at(&t, i, c); i++) {
        const double *at = next;
        next += tensor_count(&t);
        if (i == 0) {
            m->params.embed_tokens = at;
        } else if (i <= c->num_hidden_layers * LAYER_TENSORS) {
            const double **slots[LAYER_TENSORS];
            attn_decoder_layer *l = &layers[(i - 1) / LAYER_TENSORS];
            slots[0] = &l->input_layernorm;
            slots[1] = &l->q_proj;
            slots[2] = &l->k_proj;
            slots[3] = &l->v_proj;
            slots[4] = &l->o_proj;
            slots[5] = &l->post_attention_layernorm;
            slots[6] = &l->gate_proj;
            slots[7] = &l->up_proj;
            slots[8] = &l->down_proj;
            *slots[(i - 1) % LAYER_TENSORS] = at;
        } else if (m->params.norm == NULL) {
            m->params.norm = at;
        } else {
            m->params.lm_head = at;
        }
    }
    m->params.layers = layers;
    if (c->tie_word_embeddings) m->params.lm_head = m->params.embed_tokens;
}

/* The tensor's info, its shape checked against the config's. */
static int find_tensor(attn_model *m, attn_tensor_info *info, const tensor *t,
                       const unsigned char *file, size_t size)
{
    char message[ATTN__MODEL_ERROR_CAP - 32];
    const int status = attn_safetensors_find(info, message, sizeof message,
                                             file, size, t->name);
    if (status != ATTN_OK)
        return attn__model_error(
            m, status, "model.safetensors: %s",
            message + (strncmp(message, "safetensors: ", 13) == 0 ? 13 : 0));
    const int fits = info->rank == t->rank && info->shape[0] == t->rows &&
                     (t->rank == 1 || info->shape[1] == t->cols);
    if (fits) return ATTN_OK;
    char shape[96] = "", *end = shape;
    for (int d = 0; d < info->rank; d++)
        end += snprintf(end, (size_t)(shape + sizeof shape - end), "%s%d",
                        d ? ", " : "", info->shape[d]);
    if (t->rank == 1)
        return attn__model_error(m, ATTN_ERR_FORMAT,
                                 "model.safetensors: %s has shape [%s], but "
                                 "config.json gives it [%d]",
                                 t->name, shape, t->rows);
    return attn__model_error(m, ATTN_ERR_FORMAT,
                             "model.safetensors: %s has shape [%s], but "
                             "config.json gives it [%d, %d]",
                             t->name, shape, t->rows, t->cols);
}

/* Every tensor read into its place; scratch holds a projection before it
 * is transposed. */
static int read_tensors(attn_model *m, double *scratch,
                        const unsigned char *file, size_t size)
{
    tensor t;
    double *next = (double *)((char *)m->block + pointer_bytes(&m->config));
    for (int i = 0; tensor_at(&t, i, &m->config); i++) {
        attn_tensor_info info;
        int status = find_tensor(m, &info, &t, file, size);
        if (status != ATTN_OK) return status;
        status = attn_safetensors_read(t.transpose ? scratch : next, file, size,
                                       &info);
        if (status == ATTN_ERR_NOT_FINITE)
            return attn__model_error(m, status,
                                     "model.safetensors: %s holds NaN or an "
                                     "infinity",
                                     t.name);
        if (status != ATTN_OK)
            return attn__model_error(m, status, "model.safetensors: %s: %s",
                                     t.name, attn_status_text(status));
        if (t.transpose)
            for (int r = 0; r < t.rows; r++)
                for (int col = 0; col < t.cols; col++)
                    next[(size_t)col * (size_t)t.rows + (size_t)r] =
                        scratch[(size_t)r * (size_t)t.cols + (size_t)col];
        next += tensor_count(&t);
    }
    return ATTN_OK;
}

/* Every tensor found and its shape checked before anything is allocated. */
static int check_tensors(attn_model *m, const attn_decoder_config *c,
                         const unsigned char *file, size_t size)
{
    tensor t;
    for (int i = 0; tensor_at(&t, i, c); i++) {
        attn_tensor_info info;
        const int status = find_tensor(m, &info, &t, file, size);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}

int attn__model_load_parsed(attn_model *model,
                            const attn_decoder_config *config,
                            const unsigned char *file, size_t size, size_t also)
{
    int status = check_tensors(model, config, file, size);
    if (status != ATTN_OK) return status;
    const size_t bytes = attn__model_weight_bytes(config);
    const size_t scratch_bytes = attn__model_scratch_bytes(config);
    size_t during;
    if (bytes == 0 || attn__add_size(&during, also, scratch_bytes) != ATTN_OK)
        return attn__model_error(model, ATTN_ERR_TOO_LARGE,
                                 "the model's weights take more bytes than "
                                 "this machine can count");
    void *block = attn__model_allocate(model, &status, bytes, during,
                                       "its weights as doubles");
    if (block == NULL) return status;
    double *scratch = NULL;
    if (scratch_bytes > 0) {
        model->held += bytes;
        scratch = attn__model_allocate(model, &status, scratch_bytes, also,
                                       "reading a tensor");
        model->held -= bytes;
    }
    if (scratch_bytes > 0 && scratch == NULL) {
        attn__model_release(model, block);
        return status;
    }
    model->block = block;
    model->config = *config;
    memset(&model->params, 0, sizeof model->params);
    lay_out(model);
    status = read_tensors(model, scratch, file, size);
    attn__model_release(model, scratch);
    if (status != ATTN_OK) {
        attn__model_release(model, block);
        model->block = NULL;
        return status;
    }
    model->held += bytes;
    model->loaded = 1;
    model->error[0] = '\0';
    return ATTN_OK;
}

int attn__model_check_unloaded(attn_model *model)
{
    if (!model->loaded) return ATTN_OK;
    return attn__model_error(model, ATTN_ERR_STATE,
                             "the model is loaded already; create another "
                             "model to load another checkpoint");
}

int attn_model_load(attn_model *model, const char *config_json,
                    size_t config_length, const unsigned char *safetensors,
                    size_t safetensors_size)
{
    if (model == NULL) return ATTN_ERR_NULL;
    if (config_json == NULL || safetensors == NULL)
        return attn__model_error(model, ATTN_ERR_NULL,
                                 "config.json and model.safetensors are both "
                                 "needed");
    int status = attn__model_check_unloaded(model);
    if (status != ATTN_OK) return status;
    attn_decoder_config config;
    char message[ATTN__MODEL_ERROR_CAP - 32];
    status = attn_decoder_config_parse(&config, message, sizeof message,
                                       config_json, config_length);
    if (status != ATTN_OK)
        return attn__model_error(model, status, "%s", message);
    return attn__model_load_parsed(model, &config, safetensors,
                                   safetensors_size, 0);
}
