/* write.c: a model's files written into the caller's buffers: config.json
 * in LlamaConfig's names and a safetensors file of F32 tensors, the two
 * files attn_decoder_config_parse and attn_safetensors_* read back. */
#include "kernels/kernels.h"
#include "model/model.h"

#include <math.h>
#include <string.h>

static void put_number(attn__text *text, const char *name, double x)
{
    char number[ATTN__NUMBER_CAP];
    attn__format_shortest(number, x);
    attn__text_printf(text, "  \"%s\": %s,\n", name, number);
}

int attn_decoder_config_write(char *json, size_t cap, size_t *length,
                              const attn_decoder_config *config)
{
    if (length == NULL || config == NULL || (json == NULL && cap > 0))
        return ATTN_ERR_NULL;
    const int status = attn_decoder_config_check(config);
    if (status != ATTN_OK) return status;
    attn__text text;
    attn__text_init(&text, json, cap);
    attn__text_puts(&text, "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n"
                           "  \"model_type\": \"llama\",\n"
                           "  \"hidden_act\": \"silu\",\n");
    const struct {
        const char *name;
        int value;
    } sizes[] = {
        {"vocab_size", config->vocab_size},
        {"hidden_size", config->hidden_size},
        {"intermediate_size", config->intermediate_size},
        {"num_hidden_layers", config->num_hidden_layers},
        {"num_attention_heads", config->num_attention_heads},
        {"num_key_value_heads", config->num_key_value_heads},
        {"head_dim", config->hidden_size / config->num_attention_heads},
        {"max_position_embeddings", config->max_position_embeddings},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        attn__text_printf(&text, "  \"%s\": %d,\n", sizes[i].name,
                          sizes[i].value);
    put_number(&text, "rope_theta", config->rope_theta);
    put_number(&text, "rms_norm_eps", config->rms_norm_eps);
    attn__text_printf(&text,
                      "  \"rope_scaling\": null,\n"
                      "  \"torch_dtype\": \"float32\",\n"
                      "  \"tie_word_embeddings\": %s\n}\n",
                      config->tie_word_embeddings ? "true" : "false");
    *length = text.length;
    return text.length < cap ? ATTN_OK : ATTN_ERR_TOO_LARGE;
}

/* The header's JSON: each tensor's dtype, shape and byte range. */
static void write_header(attn__text *text, const attn_tensor_out *tensors,
                         int count)
{
    size_t offset = 0;
    attn__text_puts(text, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (int i = 0; i < count; i++) {
        const attn_tensor_out *t = &tensors[i];
        attn__text_puts(text, ",");
        attn__text_json_string(text, t->name, "");
        attn__text_puts(text, ":{\"dtype\":\"F32\",\"shape\":[");
        size_t values = 1;
        for (int d = 0; d < t->rank; d++) {
            attn__text_printf(text, "%s%d", d ? "," : "", t->shape[d]);
            values *= (size_t)t->shape[d];
        }
        attn__text_printf(text, "],\"data_offsets\":[%zu,%zu]}", offset,
                          offset + 4 * values);
        offset += 4 * values;
    }
    attn__text_puts(text, "}");
}

static int check_tensors(size_t *data, const attn_tensor_out *tensors,
                         int count)
{
    *data = 0;
    for (int i = 0; i < count; i++) {
        const attn_tensor_out *t = &tensors[i];
        if (t->name == NULL || t->values == NULL) return ATTN_ERR_NULL;
        if (t->rank < 0 || t->rank > ATTN_TENSOR_MAX_RANK ||
            (t->transpose && t->rank != 2))
            return ATTN_ERR_RANGE;
        size_t values = 1;
        for (int d = 0; d < t->rank; d++) {
            if (t->shape[d] <= 0) return ATTN_ERR_SIZE;
            if (attn__mul_size(&values, values, (size_t)t->shape[d]) != ATTN_OK)
                return ATTN_ERR_SIZE_OVERFLOW;
        }
        for (size_t v = 0; v < values; v++)
            if (!isfinite(t->values[v])) return ATTN_ERR_NOT_FINITE;
        if (attn__mul_size(&values, values, 4) != ATTN_OK ||
            attn__add_size(data, *data, values) != ATTN_OK)
            return ATTN_ERR_SIZE_OVERFLOW;
    }
    return ATTN_OK;
}

/* The value's float32 bits, little-endian (round to nearest even). */
static void put_f32(unsigned char *out, double value)
{
    const float f = (float)value;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    for (int b = 0; b < 4; b++) out[b] = (unsigned char)(bits >> (8 * b));
}

int attn_safetensors_write(unsigned char *file, size_t cap, size_t *size,
                           const attn_tensor_out *tensors, int count)
{
    if (size == NULL || (tensors == NULL && count > 0) ||
        (file == NULL && cap > 0))
        return ATTN_ERR_NULL;
    if (count < 0) return ATTN_ERR_SIZE;
    size_t data;
    int status = check_tensors(&data, tensors, count);
    if (status != ATTN_OK) return status;
    attn__text measure;
    attn__text_init(&measure, NULL, 0);
    write_header(&measure, tensors, count);
    /* Spaces pad the header to a multiple of 8, as the format's writers
     * do, so the data that follow are aligned; at least one, where the
     * text's NUL lands before it is overwritten. */
    const size_t header = (measure.length + 8) / 8 * 8;
    if (attn__add_size(size, 8 + header, data) != ATTN_OK)
        return ATTN_ERR_SIZE_OVERFLOW;
    if (cap < *size) return ATTN_ERR_TOO_LARGE;
    for (int b = 0; b < 8; b++)
        file[b] = (unsigned char)((uint64_t)header >> (8 * b));
    attn__text text;
    attn__text_init(&text, (char *)file + 8, header);
    write_header(&text, tensors, count);
    memset(file + 8 + measure.length, ' ', header - measure.length);
    unsigned char *out = file + 8 + header;
    for (int i = 0; i < count; i++) {
        const attn_tensor_out *t = &tensors[i];
        if (t->transpose) {
            /* values [shape[1], shape[0]]: written as its transpose. */
            for (int r = 0; r < t->shape[0]; r++)
                for (int c = 0; c < t->shape[1]; c++, out += 4)
                    put_f32(
                        out,
                        t->values[(size_t)c * (size_t)t->shape[0] + (size_t)r]);
            continue;
        }
        size_t values = 1;
        for (int d = 0; d < t->rank; d++) values *= (size_t)t->shape[d];
        for (size_t v = 0; v < values; v++, out += 4)
            put_f32(out, t->values[v]);
    }
    return ATTN_OK;
}
