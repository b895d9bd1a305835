/* config_json.c: a model's config.json, with Hugging Face's LlamaConfig
 * names, into an attn_decoder_config. */
#include "model/json.h"
#include "model/model.h"

#include <limits.h>
#include <math.h>

/* The whole-number fields, where they go, and whether one is required. */
typedef struct int_field {
    const char *name;
    size_t offset;
    int required;
} int_field;

#define INT_FIELD(name, required)                            \
    {                                                        \
#name, offsetof(attn_decoder_config, name), required \
    }
static const int_field int_fields[] = {
    INT_FIELD(vocab_size, 1),
    INT_FIELD(hidden_size, 1),
    INT_FIELD(intermediate_size, 1),
    INT_FIELD(num_hidden_layers, 1),
    INT_FIELD(num_attention_heads, 1),
    INT_FIELD(num_key_value_heads, 0),
    INT_FIELD(max_position_embeddings, 0),
};
#undef INT_FIELD
enum {
    INT_FIELDS = sizeof int_fields / sizeof int_fields[0],
    KV_HEADS = 5,         /* int_fields' num_key_value_heads */
    HEAD_DIM = INT_FIELDS /* seen[HEAD_DIM]: head_dim, 0 when not given */
};

/* The rest of the checks, with the message attn_decoder_config_check's
 * status deserves. */
static int check(attn__text *text, const attn_decoder_config *c)
{
    const int status = attn_decoder_config_check(c);
    switch (status) {
    case ATTN_OK: return ATTN_OK;
    case ATTN_ERR_HEADS:
        attn__text_printf(text,
                          "config.json: num_attention_heads %d does not "
                          "divide hidden_size %d",
                          c->num_attention_heads, c->hidden_size);
        break;
    case ATTN_ERR_KV_HEADS:
        attn__text_printf(text,
                          "config.json: num_key_value_heads %d does not "
                          "divide num_attention_heads %d",
                          c->num_key_value_heads, c->num_attention_heads);
        break;
    case ATTN_ERR_HEAD_DIM:
        attn__text_printf(text,
                          "config.json: head_dim (hidden_size / "
                          "num_attention_heads) is %d, odd, and rotary "
                          "position embeddings need an even one",
                          c->hidden_size / c->num_attention_heads);
        break;
    case ATTN_ERR_RANGE:
        attn__text_puts(text, "config.json: rope_theta must be above 0 and "
                              "rms_norm_eps at least 0");
        break;
    default:
        attn__text_printf(text, "config.json: %s", attn_status_text(status));
    }
    return status;
}

/* One member's value into *c, or a message. */
static int read_member(attn_decoder_config *c, int *seen, attn__text *text,
                       const attn__json *j, size_t key, size_t key_end,
                       size_t value)
{
    for (int f = 0; f < INT_FIELDS; f++) {
        if (!attn__json_key_is(j, key, key_end, int_fields[f].name)) continue;
        uint64_t v;
        if (!attn__json_uint(j, value, INT_MAX, &v) || v == 0)
            return attn__model_fail(text,
                                    "config.json: %s must be a whole number "
                                    "from 1 to %d",
                                    int_fields[f].name, INT_MAX);
        *(int *)((char *)c + int_fields[f].offset) = (int)v;
        seen[f] = 1;
        return ATTN_OK;
    }
    double number;
    if (attn__json_key_is(j, key, key_end, "rope_theta")) {
        if (!attn__json_number(j, value, &number) || !isfinite(number) ||
            !(number > 0.0))
            return attn__model_fail(text, "config.json: rope_theta must be a "
                                          "number above 0");
        c->rope_theta = number;
    } else if (attn__json_key_is(j, key, key_end, "rms_norm_eps")) {
        if (!attn__json_number(j, value, &number) || !isfinite(number) ||
            number < 0.0)
            return attn__model_fail(text, "config.json: rms_norm_eps must be "
                                          "a number, at least 0");
        c->rms_norm_eps = number;
    } else if (attn__json_key_is(j, key, key_end, "tie_word_embeddings")) {
        if (!attn__json_bool(j, value, &c->tie_word_embeddings))
            return attn__model_fail(text, "config.json: tie_word_embeddings "
                                          "must be true or false");
    } else if (attn__json_key_is(j, key, key_end, "hidden_act")) {
        size_t start, end;
        if (!attn__json_string(j, value, &start, &end) ||
            !attn__json_key_is(j, start, end, "silu"))
            return attn__model_fail(text, "config.json: hidden_act must be "
                                          "\"silu\", the only activation "
                                          "the engine has");
    } else if (attn__json_key_is(j, key, key_end, "rope_scaling")) {
        if (!attn__json_is_null(j, value))
            return attn__model_fail(text, "config.json: rope_scaling must be "
                                          "null: the engine has no scaled "
                                          "rotary embeddings");
    } else if (attn__json_key_is(j, key, key_end, "head_dim")) {
        uint64_t v;
        if (!attn__json_uint(j, value, INT_MAX, &v) || v == 0)
            return attn__model_fail(text,
                                    "config.json: head_dim must be a whole "
                                    "number from 1 to %d",
                                    INT_MAX);
        seen[HEAD_DIM] = (int)v; /* compared once the heads are known */
    }
    return ATTN_OK;
}

int attn_decoder_config_parse(attn_decoder_config *config, char *message,
                              size_t cap, const char *json, size_t length)
{
    attn__text text;
    attn__text_init(&text, message, cap);
    if (config == NULL || json == NULL) return ATTN_ERR_NULL;
    const attn__json j = {json, length};
    if (!attn__json_is_object(&j))
        return attn__model_fail(&text, "config.json: not one well-formed "
                                       "JSON object");
    attn_decoder_config c = {0};
    c.max_position_embeddings = 2048;
    c.rope_theta = 10000.0;
    c.rms_norm_eps = 1e-6;
    int seen[INT_FIELDS + 1] = {0};
    size_t cursor = attn__json_space(&j, 0), key, key_end, value;
    int found;
    while ((found = attn__json_member(&j, &cursor, &key, &key_end, &value)) ==
           1) {
        const int status = read_member(&c, seen, &text, &j, key, key_end,
                                       value);
        if (status != ATTN_OK) return status;
    }
    if (found < 0)
        return attn__model_fail(&text, "config.json: not well-formed");
    for (int f = 0; f < INT_FIELDS; f++)
        if (int_fields[f].required && !seen[f])
            return attn__model_fail(&text, "config.json: %s is missing",
                                    int_fields[f].name);
    if (!seen[KV_HEADS]) c.num_key_value_heads = c.num_attention_heads;
    const int status = check(&text, &c);
    if (status != ATTN_OK) return status;
    if (seen[HEAD_DIM] != 0 &&
        seen[HEAD_DIM] != c.hidden_size / c.num_attention_heads)
        return attn__model_fail(&text,
                                "config.json: head_dim %d is not hidden_size "
                                "/ num_attention_heads = %d",
                                seen[HEAD_DIM],
                                c.hidden_size / c.num_attention_heads);
    *config = c;
    return ATTN_OK;
}
