/*
 * lm_train.h: the language-model trainer's private parts (attn_lm_* in
 * attention.h): where each of a Llama decoder's weights sits in one array
 * of doubles, and its forward pass over a batch, keeping what the
 * backward pass reads, and the backward pass.
 */
#ifndef ATTN_LM_TRAIN_H
#define ATTN_LM_TRAIN_H

#include "attention.h"

#include <stddef.h>
#include <stdint.h>

/* Offsets of one layer's weights from its first, in attn_decoder_layer's
 * x @ W layout; layer l starts at first_layer + l · per_layer. */
typedef struct attn__lm_layer_layout {
    size_t input_norm, q, k, v, o, post_norm, gate, up, down;
} attn__lm_layer_layout;

typedef struct attn__lm_layout {
    attn_decoder_config config;
    size_t embed;       /* [vocab, hidden] */
    size_t first_layer; /* the layers, each per_layer doubles */
    size_t per_layer;
    attn__lm_layer_layout layer;
    size_t norm;    /* [hidden] */
    size_t lm_head; /* [vocab, hidden]; = embed when tied */
    size_t count;   /* doubles in all */
} attn__lm_layout;

/* The layout of a config attn_decoder_config_check accepts;
 * ATTN_ERR_SIZE_OVERFLOW when its count does not fit. */
int attn__lm_layout_make(attn__lm_layout *layout,
                         const attn_decoder_config *config);

/* Layer l's weights (or their gradients) in `params`. */
attn_decoder_layer attn__lm_layer_at(const attn__lm_layout *layout,
                                     const double *params, int l);

/* attn_decoder_forward's view of the weights in `params`. */
void attn__lm_params_view(attn_decoder_params *view, attn_decoder_layer *layers,
                          const attn__lm_layout *layout, const double *params);

/* Seeded initial weights: normal with standard deviation 1/√fan-in (o_proj
 * and down_proj also / √(2 · layers), as the residual adds them up), the
 * embedding and lm_head 0.02; the norms' weights 1. */
void attn__lm_init(double *params, const attn__lm_layout *layout,
                   uint64_t *rng);

/* The forward and backward passes over `rows` = batch · T tokens, batch
 * sequences of T each from position 0; each buffer [rows, width]. */
typedef struct attn__lm_pass {
    int batch, T, rows;
    double *saved;  /* per layer: its input x, a = norm(x), rotated q and
                       k, v, the heads' output, h = x + attention and
                       b = norm(h) */
    double *last;   /* [rows, hidden] the last layer's output */
    double *final;  /* [rows, hidden] the final norm's output */
    double *logits; /* [rows, vocab], then the loss's gradient */
    double *work;   /* [work_count] */
    int *positions; /* [T] 0 to T − 1 */
    size_t work_count;
} attn__lm_pass;

/* Doubles of the pass's buffers (saved, last, final, logits, work) for a
 * batch of `batch` sequences of T tokens; 0 when that overflows. */
size_t attn__lm_pass_doubles(const attn__lm_layout *layout, int batch, int T);
/* Lays the pass out in memory [attn__lm_pass_doubles] and positions [T]. */
void attn__lm_pass_place(attn__lm_pass *pass, double *memory, int *positions,
                         const attn__lm_layout *layout, int batch, int T);

/* Logits [rows, vocab] of tokens [batch, T] into pass->logits, keeping
 * what attn__lm_backward reads. The operations and their order are
 * attn_decoder_forward's: the logits have its bits. */
int attn__lm_forward(attn__lm_pass *pass, const double *params,
                     const attn__lm_layout *layout, const int *tokens);

/* grads = d loss / d params, given d loss / d logits in pass->logits after
 * attn__lm_forward on the same tokens. */
int attn__lm_backward(double *grads, attn__lm_pass *pass, const double *params,
                      const attn__lm_layout *layout, const int *tokens);

#endif /* ATTN_LM_TRAIN_H */
