/*
 * train.h: the trainer's private parts (attn_trainer_* in attention.h): its
 * settings, the tasks that make its data, the model's parameter layout and
 * its forward and backward passes over a batch.
 */
#ifndef ATTN_TRAIN_H
#define ATTN_TRAIN_H

#include "attention.h"

#include <stddef.h>
#include <stdint.h>

/* ---- Settings, by index; attn_trainer_set names them as the JS API ---- */

enum {
    ATTN__SET_SEED,
    ATTN__SET_LAYERS,
    ATTN__SET_HEADS,
    ATTN__SET_D_MODEL,
    ATTN__SET_D_FF, /* 0: attention and residual only, no LayerNorm */
    ATTN__SET_SEQ_LENGTH,
    ATTN__SET_VOCAB,
    ATTN__SET_BATCH_SIZE,
    ATTN__SET_LEARNING_RATE,
    ATTN__SET_SCALE, /* 1: scores × 1/√d_head; 0: unscaled */
    ATTN__SET_CAUSAL,
    ATTN__SET_STEPS, /* the task's step budget (documentation) */
    ATTN__SET_COUNT
};

/* ---- Tasks (tasks.c) ---- */

/* One example: tokens [T] in, the token each position should predict
 * [T], and which positions count in the loss and the accuracy. */
typedef struct attn__example {
    int *tokens;            /* [T] */
    int *targets;           /* [T] */
    unsigned char *counted; /* [T] */
} attn__example;

typedef struct attn__task {
    const char *name;
    double defaults[ATTN__SET_COUNT];
    /* NULL if the settings suit the task, else why not (into message). */
    int (*check)(const double *settings, char *message, size_t cap);
    void (*make)(const attn__example *example, const double *settings,
                 uint64_t *rng);
} attn__task;

const attn__task *attn__find_task(const char *name);

/* ---- Random numbers, from the kernels' attn__splitmix64 ---- */

/* Uniform in [0, n). */
int attn__rng_below(uint64_t *state, int n);
/* Standard normal (Box-Muller). */
double attn__rng_normal(uint64_t *state);

/* ---- The model (model.c) ---- */

/* Where each parameter sits in one array of doubles; grads and Adam's
 * moments use the same layout. */
typedef struct attn__layer_layout {
    size_t wq, wk, wv, wo, bq, bk, bv, bo;               /* always */
    size_t gamma1, beta1, w1, b1, w2, b2, gamma2, beta2; /* with d_ff > 0 */
} attn__layer_layout;

enum { ATTN__MAX_LAYERS = 2 };

typedef struct attn__model {
    int layers, heads, d_model, d_ff, seq_length, vocab;
    attn_options opts;      /* scale and causal mask */
    size_t embed, position; /* [vocab, d_model], [seq_length, d_model] */
    attn__layer_layout layer[ATTN__MAX_LAYERS];
    size_t unembed, unembed_bias; /* [d_model, vocab], [vocab] */
    size_t count;                 /* doubles in all */
} attn__model;

/* The layout for these settings (checked by attn_trainer_set). */
void attn__model_layout(attn__model *model, const double *settings);
/* Seeded initial values (normal, scaled by 1/√fan-in; LayerNorm γ = 1). */
void attn__model_init(double *params, const attn__model *model, uint64_t *rng);

/* Buffers for a forward and backward pass over up to `batch` examples. */
typedef struct attn__pass {
    int batch;
    double *acts;   /* [layers + 1, batch, T, d_model]: each layer's input,
                       then the last layer's output */
    double *logits; /* [batch, T, vocab], softmax probabilities after loss */
    double *d_a;    /* [batch, T, d_model] */
    double *d_b;    /* [batch, T, d_model] */
    double *saved;  /* per layer, what its backward reads instead of
                       computing it again: the forward's Q, K, V and concat
                       [batch, T, d_model] and weights [batch, heads, T, T],
                       and with a feed-forward network the block's ln1,
                       sum1, ln2 and sum2 [batch, T, d_model] */
    double *work;   /* [work_count] */
    size_t work_count;
} attn__pass;

/* Doubles the pass needs for `batch` examples, work included. */
int attn__pass_size(size_t *doubles, size_t *work_count,
                    const attn__model *model, int batch);
void attn__pass_place(attn__pass *pass, double *memory,
                      const attn__model *model, int batch, size_t work_count);

/* Logits for tokens [batch, n] (n ≤ seq_length); weights, when not NULL,
 * receives every head's attention [layers, batch, heads, n, n]. */
int attn__model_forward(attn__pass *pass, double *weights, const double *params,
                        const attn__model *model, const int *tokens, int batch,
                        int n);

/* Layer l's input for tokens [batch, n] after attn__model_forward. */
const double *attn__model_layer_input(const attn__pass *pass,
                                      const attn__model *model, int l);

/* Cross-entropy over the counted positions after a forward pass: the mean
 * loss, the number of counted positions predicted right, and (d_logits
 * not NULL) dL/d(logits) in place of the logits. */
void attn__model_loss(double *loss, int *right, int *counted_total,
                      attn__pass *pass, const attn__model *model,
                      const int *targets, const unsigned char *counted,
                      int batch, int n, int d_logits);

/* grads = dL/d(params) after attn__model_loss with d_logits. */
int attn__model_backward(double *grads, attn__pass *pass, const double *params,
                         const attn__model *model, const int *tokens, int batch,
                         int n);

#endif /* ATTN_TRAIN_H */
