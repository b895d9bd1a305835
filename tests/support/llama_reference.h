/* A Llama decoder computed the way Hugging Face's modeling_llama.py writes
 * it, in plain float64 loops shaped unlike the engine's: weights in the
 * checkpoint's [out, in] layout, rotate_half on cos and sin tables,
 * repeat_kv and a full additive causal mask. The tests compare the engine
 * with it. */
#ifndef LLAMA_REFERENCE_H
#define LLAMA_REFERENCE_H

#include "attention.h"

/* Llama's apply_rotary_pos_emb on one head of width d (at most 64). */
void reference_rope_head(double *out, const double *x, int position, int d,
                         double theta);

/* Causal attention of n_q queries, the last n_q of n_k positions (n_k at
 * most 64): weights [heads, n_q, n_k], output [n_q, heads, d]. */
void reference_gqa(double *weights, double *output, const double *q,
                   const double *k, const double *v, int n_q, int n_k,
                   int heads, int kv_heads, int d);

enum { REFERENCE_MAX_LAYERS = 4 };

/* One layer's weights as a checkpoint stores them: projections [out, in]. */
typedef struct reference_layer {
    double *input_layernorm, *q_proj, *k_proj, *v_proj, *o_proj;
    double *post_attention_layernorm, *gate_proj, *up_proj, *down_proj;
} reference_layer;

typedef struct reference_model {
    attn_decoder_config config;
    double *embed_tokens; /* [vocab, hidden] */
    reference_layer layers[REFERENCE_MAX_LAYERS];
    double *norm;    /* [hidden] */
    double *lm_head; /* [vocab, hidden]; unused when tied */
} reference_model;

/* logits [n, vocab] and weights [layers, heads, n, n] of tokens [n]. */
void reference_decoder(double *logits, double *weights,
                       const reference_model *model, const int *tokens, int n);

#endif
