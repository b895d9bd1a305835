/* status.c: English text for the status codes of attention.h. */
#include "attention.h"

const char *attn_status_text(int status)
{
    switch (status) {
    case ATTN_OK: return "ok";
    case ATTN_ERR_NULL: return "a required pointer is NULL";
    case ATTN_ERR_SIZE: return "a size is zero or negative";
    case ATTN_ERR_SIZE_OVERFLOW:
        return "a product of sizes does not fit in size_t";
    case ATTN_ERR_HEADS: return "num_heads does not divide d_model";
    case ATTN_ERR_OPTION: return "an option has an unknown value";
    case ATTN_ERR_RANGE: return "a parameter is outside its range";
    case ATTN_ERR_NOT_FINITE: return "an input holds NaN or an infinity";
    case ATTN_ERR_OVERFLOW_VALUE: return "a computed value overflowed";
    case ATTN_ERR_NOMEM: return "an allocation failed";
    case ATTN_ERR_INPUT:
        return "a problem field is missing, unknown or misshapen";
    case ATTN_ERR_STATE: return "call out of order";
    /* Problems, trainers, the CLI's input and the JS calls all give it. */
    case ATTN_ERR_TOO_LARGE:
        return "the call would need more bytes than its limit";
    case ATTN_ERR_KV_HEADS:
        return "num_key_value_heads does not divide num_attention_heads";
    case ATTN_ERR_HEAD_DIM:
        return "rotary position embeddings need an even head_dim";
    case ATTN_ERR_POSITION:
        return "a position is negative or not below max_position_embeddings";
    case ATTN_ERR_CACHE_FULL:
        return "the key/value cache has no room for the new tokens";
    case ATTN_ERR_TOKEN:
        return "a token id is negative or not below vocab_size";
    case ATTN_ERR_FORMAT:
        return "a model file is malformed or disagrees with its sizes";
    default: return "unknown status";
    }
}
