/*
 * attention.h: an exact attention engine in portable C (C11, libc + libm).
 *
 * Conventions, for every function below:
 *
 *   - Numbers are double. Matrices are dense and row-major; a shape comment
 *     such as [batch, n_q, d_k] lists dimensions from slowest to fastest.
 *   - Projections use the `x @ W` layout: a weight matrix has shape
 *     [in, out] and a row vector x of width `in` maps to x @ W of width `out`.
 *   - Arguments come in the order outputs, then inputs, then sizes, then
 *     options, then workspace (as in llm.c). Every output pointer may be NULL
 *     to skip that output; the function still computes what the others need.
 *   - A masked entry is one a query may not attend to. In `scaled` it holds
 *     -INFINITY (never a finite sentinel such as -1e9 or -10000); in
 *     `weights` it holds exactly 0.
 *   - A fully masked row (a query with no key it may attend to) gives weights
 *     that are all 0 and an output row that is all 0, never NaN.
 *   - Memory is owned by the caller. Functions that need scratch space take a
 *     `work` array whose length in doubles the matching *_work_size function
 *     reports. Nothing is allocated, except by the attn_problem_* layer.
 *   - Every entry point returns an attn_status. Nothing aborts, exits or
 *     prints. The numbers of the status codes never change.
 *   - Inputs must be finite: a NaN or infinity in any input gives
 *     ATTN_ERR_NOT_FINITE. A computation whose result overflows gives
 *     ATTN_ERR_OVERFLOW_VALUE rather than an infinity or a NaN.
 */
#ifndef ATTENTION_H
#define ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status codes (stable numbers; new codes are only ever appended) ---- */

typedef enum attn_status {
    ATTN_OK = 0,
    ATTN_ERR_NULL = 1,           /* a required pointer is NULL */
    ATTN_ERR_SIZE = 2,           /* a size is zero or negative */
    ATTN_ERR_SIZE_OVERFLOW = 3,  /* a product of sizes does not fit in size_t */
    ATTN_ERR_HEADS = 4,          /* num_heads does not divide d_model */
    ATTN_ERR_OPTION = 5,         /* an option has an unknown value */
    ATTN_ERR_RANGE = 6,          /* a parameter is outside its range */
    ATTN_ERR_NOT_FINITE = 7,     /* an input holds NaN or an infinity */
    ATTN_ERR_OVERFLOW_VALUE = 8, /* a computed value overflowed */
    ATTN_ERR_NOMEM = 9,          /* an allocation failed (attn_problem_*) */
    ATTN_ERR_INPUT = 10,         /* a problem field is missing, unknown or
                                    misshapen; attn_problem_error says which */
    ATTN_ERR_STATE = 11,         /* call out of order (attn_problem_*) */
    ATTN_ERR_TOO_LARGE = 12,     /* a call would need more bytes than its
                                    limit (attn_problem_set_max_bytes,
                                    attn_trainer_set_max_bytes) */
    ATTN_ERR_KV_HEADS = 13,      /* num_key_value_heads does not divide
                                    num_attention_heads */
    ATTN_ERR_HEAD_DIM = 14,      /* rotary embeddings need an even head_dim */
    ATTN_ERR_POSITION = 15,      /* a position is negative or not below
                                    max_position_embeddings */
    ATTN_ERR_CACHE_FULL = 16,    /* the key/value cache has no room left */
    ATTN_ERR_TOKEN = 17,         /* a token id is not in 0..vocab_size - 1 */
    ATTN_ERR_FORMAT = 18         /* a model file is malformed or disagrees
                                    with its own sizes */
} attn_status;

/* English text for a status code; an unknown code gives "unknown status". */
const char *attn_status_text(int status);

/* x as the shortest decimal that reads back as the same double, the form
 * every number of the library's JSON takes ("0.1", "1e-05",
 * "0.30000000000000004"); "nan", "inf" or "-inf" for the others. */
enum { ATTN_NUMBER_CAP = 32 }; /* the longest, with its NUL */
void attn_number_text(double x, char out[ATTN_NUMBER_CAP]);

/* A token as a reader sees it, the label every model walkthrough and
 * table gives it: a printable ASCII byte as itself, a space as "␣",
 * "\n" and "\t" for those controls, "\xNN" for other bytes, "<id>"
 * for an id past 255 (or negative); markdown 1 also puts a backslash
 * before | \ ` * and _. ATTN_TOKEN_LABEL_CAP holds any label with its
 * NUL. */
enum { ATTN_TOKEN_LABEL_CAP = 16 };
void attn_token_label(char out[ATTN_TOKEN_LABEL_CAP], int id, int markdown);

/* ---- Softmax ---- */

/*
 * Row-wise softmax that subtracts each row's maximum first.
 * -INFINITY entries are masked: they get weight exactly 0; a row that is all
 * -INFINITY gives all 0. Other infinities and NaN give ATTN_ERR_NOT_FINITE.
 */
int attn_softmax_rows(double *out,      /* [rows, cols] may alias in */
                      const double *in, /* [rows, cols] */
                      int rows, int cols);

/* ---- Masks ---- */

enum {
    ATTN_MASK_CAUSAL = 1u << 0,      /* key j allowed iff j <= i */
    ATTN_MASK_KEY_PADDING = 1u << 1, /* key j allowed iff j < key_length[b] */
    ATTN_MASK_CUSTOM = 1u << 2,      /* key j allowed iff allowed[i*n_k+j] */
    ATTN_MASK_LOCAL = 1u << 3,       /* key j allowed iff |i - j| <= window */
    ATTN_MASK_STRIDED = 1u << 4      /* Sparse Transformer pattern: j <= i and
                                        (i - j < stride or (i - j) % stride == 0) */
};

/* Masks combine: an entry is allowed only if every selected kind allows it. */
typedef struct attn_mask {
    unsigned kinds;               /* bitwise OR of ATTN_MASK_*; 0 = none */
    const int *key_length;        /* [batch] in 0..n_k, for KEY_PADDING */
    const unsigned char *allowed; /* [n_q, n_k] nonzero = may attend, for
                                     CUSTOM; shared by the whole batch */
    int window;                   /* >= 0, for LOCAL */
    int stride;                   /* >= 1, for STRIDED */
} attn_mask;

/* Checks a mask against the sizes it will be used with. */
int attn_mask_check(const attn_mask *mask, int batch, int n_q, int n_k);

/* 1 if query i of batch item b may attend to key j, else 0.
 * Call only with a mask that attn_mask_check accepted. */
int attn_mask_allows(const attn_mask *mask, int n_k, int b, int i, int j);

/* ---- Options shared by the dot-product mechanisms ---- */

typedef enum attn_scale_kind {
    ATTN_SCALE_INV_SQRT_DK = 0, /* multiply scores by 1/sqrt(d_k) (default) */
    ATTN_SCALE_NONE = 1,        /* leave scores as they are */
    ATTN_SCALE_FACTOR = 2       /* multiply scores by scale_factor (finite) */
} attn_scale_kind;

typedef struct attn_options {
    int scale_kind;      /* an attn_scale_kind */
    double scale_factor; /* for ATTN_SCALE_FACTOR */
    attn_mask mask;
    double dropout; /* probability in [0, 1) of zeroing each weight;
                       kept weights are multiplied by 1/(1 - dropout) */
    uint64_t seed;  /* dropout is a pure function of (seed, b, i, j) */
} attn_options;

/* Defaults: scale 1/sqrt(d_k), no mask, no dropout, seed 0. */
void attn_options_init(attn_options *opts);

/* The factor scores are multiplied by, for these options and d_k. */
int attn_scale_value(double *scale, const attn_options *opts, int d_k);

/* 1 if the weight at (b, i, j) survives dropout with this probability and
 * seed, else 0. Identical on every platform. */
int attn_dropout_keeps(uint64_t seed, double probability, int64_t b, int64_t i,
                       int64_t j);

/* ---- Scaled dot-product attention ---- */

/* Length in doubles of the work array attn_sdpa needs. */
size_t attn_sdpa_work_size(int n_k);

/*
 * scores  = Q Kᵀ
 * scaled  = scores × scale, masked entries -INFINITY
 * weights = row softmax of scaled (masked entries 0), then dropout if asked:
 *           `weights` holds the weights that multiply V
 * output  = weights V
 * n_q may differ from n_k (cross-attention). Every batch item is independent.
 */
int attn_sdpa(double *scores,  /* [batch, n_q, n_k] or NULL */
              double *scaled,  /* [batch, n_q, n_k] or NULL */
              double *weights, /* [batch, n_q, n_k] or NULL */
              double *output,  /* [batch, n_q, d_v] or NULL */
              const double *q, /* [batch, n_q, d_k] */
              const double *k, /* [batch, n_k, d_k] */
              const double *v, /* [batch, n_k, d_v] */
              int batch, int n_q, int n_k, int d_k, int d_v,
              const attn_options *opts, /* NULL = defaults */
              double *work);            /* [attn_sdpa_work_size(n_k)] */

/*
 * The same computation from given scores, for walkthroughs that start from
 * a score matrix: scaled = scores × scale (masked -INFINITY), weights, output.
 * The scale comes from opts as for attn_sdpa; ATTN_SCALE_INV_SQRT_DK uses d_k.
 * v may be NULL when output is NULL (d_v is then ignored).
 */
int attn_sdpa_from_scores(double *scaled,       /* [batch, n_q, n_k] or NULL */
                          double *weights,      /* [batch, n_q, n_k] or NULL */
                          double *output,       /* [batch, n_q, d_v] or NULL */
                          const double *scores, /* [batch, n_q, n_k] */
                          const double *v,      /* [batch, n_k, d_v] */
                          int batch, int n_q, int n_k, int d_k, int d_v,
                          const attn_options *opts, /* NULL = defaults */
                          double *work); /* [attn_sdpa_work_size(n_k)] */

/* output = weights @ v: each output row is the weighted sum of v's rows. */
int attn_weighted_sum(double *output,        /* [n_q, d_v] */
                      const double *weights, /* [n_q, n_k] */
                      const double *v,       /* [n_k, d_v] */
                      int n_q, int n_k, int d_v);

/* ---- Multi-head attention ---- */

typedef struct attn_mha_dims {
    int batch;
    int n_q;       /* query tokens (rows of x_q) */
    int n_kv;      /* key/value tokens (rows of x_kv) */
    int d_q_in;    /* columns of x_q */
    int d_kv_in;   /* columns of x_kv */
    int d_model;   /* width of Q, K, V; split into num_heads blocks */
    int num_heads; /* must divide d_model; head width d_model / num_heads */
    int d_out;     /* columns of W_o and of the output */
} attn_mha_dims;

typedef struct attn_mha_params {
    const double *wq; /* [d_q_in, d_model] */
    const double *wk; /* [d_kv_in, d_model] */
    const double *wv; /* [d_kv_in, d_model] */
    const double *wo; /* [d_model, d_out] */
    const double *bq; /* [d_model] or NULL */
    const double *bk; /* [d_model] or NULL */
    const double *bv; /* [d_model] or NULL */
    const double *bo; /* [d_out] or NULL */
} attn_mha_params;

typedef struct attn_mha_outputs { /* every pointer may be NULL */
    double *q;                    /* [batch, n_q, d_model]  x_q  @ W_q + b_q */
    double *k;                    /* [batch, n_kv, d_model] x_kv @ W_k + b_k */
    double *v;                    /* [batch, n_kv, d_model] x_kv @ W_v + b_v */
    double *scores;               /* [batch, num_heads, n_q, n_kv] */
    double *scaled;               /* [batch, num_heads, n_q, n_kv] */
    double *weights;              /* [batch, num_heads, n_q, n_kv] */
    double *head_outputs; /* [batch, num_heads, n_q, d_model / num_heads] */
    double *concat;       /* [batch, n_q, d_model] heads side by side */
    double *output;       /* [batch, n_q, d_out]   concat @ W_o + b_o */
} attn_mha_outputs;

size_t attn_multihead_work_size(const attn_mha_dims *dims);

/*
 * Head h uses columns [h*d_head, (h+1)*d_head) of Q, K and V and the scale
 * of `opts` with d_k = d_head (so 1/sqrt(d_model / num_heads) by default).
 * x_kv == NULL means self-attention: x_kv = x_q (then n_kv must equal n_q and
 * d_kv_in must equal d_q_in). The mask applies to every head.
 */
int attn_multihead(const attn_mha_outputs *out,
                   const double *x_q,  /* [batch, n_q, d_q_in] */
                   const double *x_kv, /* [batch, n_kv, d_kv_in] or NULL */
                   const attn_mha_params *params, const attn_mha_dims *dims,
                   const attn_options *opts, /* NULL = defaults */
                   double *work); /* [attn_multihead_work_size(dims)] */

/* ---- Bahdanau (additive) attention ---- */

/*
 * For each query s (a decoder state) and key h_j (an encoder state):
 *   energy_j = tanh(s @ W_s + h_j @ W_h + b)   score_j = energy_j · v
 *   weights  = softmax(scores)                  context = Σ_j weights_j h_j
 */
int attn_additive(double *energy,      /* [n_q, n_k, d_a] or NULL */
                  double *scores,      /* [n_q, n_k] or NULL */
                  double *weights,     /* [n_q, n_k] or NULL */
                  double *context,     /* [n_q, d_h] or NULL */
                  const double *query, /* [n_q, d_s] */
                  const double *keys,  /* [n_k, d_h] */
                  const double *w_s,   /* [d_s, d_a] */
                  const double *w_h,   /* [d_h, d_a] */
                  const double *b,     /* [d_a] or NULL */
                  const double *v,     /* [d_a] */
                  int n_q, int n_k, int d_s, int d_h, int d_a,
                  double *work); /* [attn_additive_work_size(..)] */

size_t attn_additive_work_size(int n_k, int d_s, int d_a);

/* ---- Luong (multiplicative) attention ---- */

typedef enum attn_luong_method {
    ATTN_LUONG_DOT = 0,     /* score_j = s · h_j          (d_s == d_h) */
    ATTN_LUONG_GENERAL = 1, /* score_j = s · (h_j @ W),   W [d_h, d_s] */
    ATTN_LUONG_CONCAT = 2   /* score_j = v · tanh([s; h_j] @ W + b),
                               W [d_s + d_h, d_a], b [d_a] or NULL, v [d_a] */
} attn_luong_method;

int attn_luong(double *energy,      /* [n_q, n_k, d_a] or NULL; concat only */
               double *scores,      /* [n_q, n_k] or NULL */
               double *weights,     /* [n_q, n_k] or NULL */
               double *context,     /* [n_q, d_h] or NULL */
               const double *query, /* [n_q, d_s] */
               const double *keys,  /* [n_k, d_h] */
               const double *w,     /* see attn_luong_method; NULL for dot */
               const double *b,     /* concat only, or NULL */
               const double *v,     /* concat only */
               int method, int n_q, int n_k, int d_s, int d_h,
               int d_a,       /* concat only; ignored otherwise */
               double *work); /* [attn_luong_work_size(..)] */

size_t attn_luong_work_size(int method, int n_k, int d_s, int d_a);

/* ---- Linear attention (Katharopoulos et al. 2020) ---- */

/*
 * With phi(x) = elu(x) + 1 applied elementwise:
 *   output_i = phi(q_i) @ S / (phi(q_i) · z)
 * where S = Σ_j phi(k_j)ᵀ v_j and z = Σ_j phi(k_j) over all keys j, or over
 * j <= i when causal. phi is positive, so the denominator never vanishes.
 */
int attn_linear(double *output,  /* [batch, n_q, d_v] */
                const double *q, /* [batch, n_q, d_k] */
                const double *k, /* [batch, n_k, d_k] */
                const double *v, /* [batch, n_k, d_v] */
                int batch, int n_q, int n_k, int d_k, int d_v,
                int causal,    /* 0 or 1 */
                double *work); /* [attn_linear_work_size(d_k, d_v)] */

size_t attn_linear_work_size(int d_k, int d_v);

/* ---- The online softmax (as FlashAttention), step by step ---- */

/*
 * softmax(q kᵀ · scale) v without the n_q × n_k weights: each query goes
 * through the keys in tiles of `tile`, keeping the largest score so far m,
 * the sum l of exp(s − m) and the output so far acc = Σ exp(s − m) v; when
 * a tile raises m, what was summed is rescaled by exp(m_old − m_new). The
 * output is acc ÷ l after the last tile: the plain softmax's output, up to
 * rounding. The state after each tile is kept for the walkthrough:
 * tile_max, tile_sum [n_q, tiles], tile_acc [n_q, tiles, d_v], with tiles =
 * attn_online_tiles(n_k, tile). float64, one problem (no batch, no mask).
 */
int attn_online_attention(double *output,   /* [n_q, d_v] */
                          double *scaled,   /* [n_q, n_k] scale · q kᵀ */
                          double *tile_max, /* [n_q, tiles] */
                          double *tile_sum, /* [n_q, tiles] */
                          double *tile_acc, /* [n_q, tiles, d_v] */
                          const double *q,  /* [n_q, d_k] */
                          const double *k,  /* [n_k, d_k] */
                          const double *v,  /* [n_k, d_v] */
                          int n_q, int n_k, int d_k, int d_v, int tile,
                          double scale);

/* ceil(n_k / tile), or 0 unless both are positive. */
int attn_online_tiles(int n_k, int tile);

/* ---- Layer normalisation ---- */

/* ε of attn_layer_norm, as PyTorch's nn.LayerNorm. */
#define ATTN_LAYER_NORM_EPSILON 1e-5

/*
 * Over the last axis of each row, with the biased variance (as PyTorch):
 *   output = (x − mean) / sqrt(var + ε) ∘ gamma + beta.
 * output may alias x.
 */
int attn_layer_norm(double *output,      /* [rows, d] or NULL */
                    double *mean,        /* [rows] or NULL */
                    double *rstd,        /* [rows] 1/sqrt(var + ε), or NULL */
                    const double *x,     /* [rows, d] */
                    const double *gamma, /* [d] */
                    const double *beta,  /* [d] or NULL = 0 */
                    int rows, int d);

/* The gradient of attn_layer_norm (a gradient, see "Gradients" below):
 * with x̂ = (x − mean) rstd and g = dO ∘ gamma,
 *   grad_x = rstd (g − mean(g) − x̂ mean(g ∘ x̂)),
 *   grad_gamma = Σ_rows dO ∘ x̂,  grad_beta = Σ_rows dO.
 * grad_x may alias d_output. */
int attn_layer_norm_backward(double *grad_x,         /* [rows, d] or NULL */
                             double *grad_gamma,     /* [d] or NULL */
                             double *grad_beta,      /* [d] or NULL */
                             const double *d_output, /* [rows, d] */
                             const double *x,        /* [rows, d] */
                             const double *gamma,    /* [d] */
                             int rows, int d);

/* ---- Position-wise feed-forward network ---- */

/* Lengths in doubles of the work arrays of the two functions below. */
size_t attn_feed_forward_work_size(int rows, int d_ff);
size_t attn_feed_forward_backward_work_size(int rows, int d_ff);

/*
 *   hidden = ReLU(x @ W1 + b1)      output = hidden @ W2 + b2
 */
int attn_feed_forward(double *hidden,   /* [rows, d_ff] or NULL */
                      double *output,   /* [rows, d_out] or NULL */
                      const double *x,  /* [rows, d_in] */
                      const double *w1, /* [d_in, d_ff] */
                      const double *b1, /* [d_ff] or NULL */
                      const double *w2, /* [d_ff, d_out] */
                      const double *b2, /* [d_out] or NULL */
                      int rows, int d_in, int d_ff, int d_out,
                      double *work); /* [attn_feed_forward_work_size(..)] */

/* The gradient of attn_feed_forward: dW2 = hiddenᵀ dO, db2 = Σ dO,
 * dH = dO W2ᵀ ∘ [pre-activation > 0] (the ReLU's derivative is 0 at 0),
 * dW1 = xᵀ dH, db1 = Σ dH, grad_x = dH W1ᵀ. Bias gradients are written
 * even when the bias is NULL (the gradient at a zero bias). */
int attn_feed_forward_backward(double *grad_x,  /* [rows, d_in] or NULL */
                               double *grad_w1, /* [d_in, d_ff] or NULL */
                               double *grad_b1, /* [d_ff] or NULL */
                               double *grad_w2, /* [d_ff, d_out] or NULL */
                               double *grad_b2, /* [d_out] or NULL */
                               const double *d_output, /* [rows, d_out] */
                               const double *x,        /* [rows, d_in] */
                               const double *w1,       /* [d_in, d_ff] */
                               const double *b1,       /* [d_ff] or NULL */
                               const double *w2,       /* [d_ff, d_out] */
                               const double *b2,       /* [d_out] or NULL */
                               int rows, int d_in, int d_ff, int d_out,
                               double *work); /* [attn_feed_forward_
                                                 backward_work_size(..)] */

/* ---- Gradients (backward passes) ----
 *
 * Each backward function takes dL/d(output) of its forward function and
 * the forward inputs, recomputes what it needs of the forward pass in its
 * work array, and writes the gradient of L with respect to every input and
 * parameter. Every gradient buffer is OVERWRITTEN, never accumulated into:
 * its old contents do not matter. Every gradient pointer may be NULL to
 * skip it. A grad_* buffer has the shape of the array it is the gradient
 * of. Gradients through a masked score are exactly 0 (grad_scaled there,
 * and nothing flows from it into Q or K), and a fully masked row gives
 * all-0 score and query gradients, as the forward pass gives all-0
 * weights. attn_layer_norm_backward and attn_feed_forward_backward above
 * follow the same rules.
 */

/*
 * From y = softmax(x) row by row and dy = dL/dy:
 *   grad_in = y ∘ (dy − rowsum(dy ∘ y)).
 * An entry with y exactly 0 (masked) gets exactly 0. grad_in may alias
 * grad_out.
 */
int attn_softmax_rows_backward(double *grad_in,        /* [rows, cols] */
                               const double *out,      /* [rows, cols] y */
                               const double *grad_out, /* [rows, cols] */
                               int rows, int cols);

/* Length in doubles of the work array attn_sdpa_backward needs. */
size_t attn_sdpa_backward_work_size(int n_k);

/*
 * The backward pass of attn_sdpa with the same options (mask, scale,
 * dropout and seed: the same weights are dropped). With P the softmax of
 * `scaled`, W the `weights` (P after dropout) and dO = d_output:
 *   grad_v       = Wᵀ dO
 *   grad_weights = dO Vᵀ                     dL/dW (also where masked or
 *                                             dropped: W's own gradient)
 *   dP           = grad_weights ∘ keep / (1 − dropout)   (dP = dL/dW
 *                  without dropout)
 *   grad_scaled  = P ∘ (dP − rowsum(dP ∘ P))  dL/d(scaled), 0 where masked
 *   grad_q       = grad_scaled K × scale      grad_k = grad_scaledᵀ Q × scale
 */
int attn_sdpa_backward(double *grad_q,         /* [batch, n_q, d_k] or NULL */
                       double *grad_k,         /* [batch, n_k, d_k] or NULL */
                       double *grad_v,         /* [batch, n_k, d_v] or NULL */
                       double *grad_weights,   /* [batch, n_q, n_k] or NULL */
                       double *grad_scaled,    /* [batch, n_q, n_k] or NULL */
                       const double *d_output, /* [batch, n_q, d_v] */
                       const double *q,        /* [batch, n_q, d_k] */
                       const double *k,        /* [batch, n_k, d_k] */
                       const double *v,        /* [batch, n_k, d_v] */
                       int batch, int n_q, int n_k, int d_k, int d_v,
                       const attn_options *opts, /* NULL = defaults */
                       double *work); /* [attn_sdpa_backward_work_size(n_k)] */

typedef struct attn_mha_grads { /* every pointer may be NULL */
    double *x_q;     /* [batch, n_q, d_q_in]; with self-attention (x_kv
                        NULL) the whole gradient of x, through Q, K and V */
    double *x_kv;    /* [batch, n_kv, d_kv_in]; cross-attention only: not
                        written with self-attention */
    double *wq;      /* [d_q_in, d_model] */
    double *wk;      /* [d_kv_in, d_model] */
    double *wv;      /* [d_kv_in, d_model] */
    double *wo;      /* [d_model, d_out] */
    double *bq;      /* [d_model]; written even when params->bq is NULL
                        (the gradient at a zero bias) */
    double *bk;      /* [d_model] */
    double *bv;      /* [d_model] */
    double *bo;      /* [d_out] */
    double *q;       /* [batch, n_q, d_model]   dL/dQ (intermediate) */
    double *k;       /* [batch, n_kv, d_model]  dL/dK */
    double *v;       /* [batch, n_kv, d_model]  dL/dV */
    double *weights; /* [batch, num_heads, n_q, n_kv] dL/d(weights) */
    double *scaled;  /* [batch, num_heads, n_q, n_kv] dL/d(scaled), 0 where
                        masked */
    double *concat;  /* [batch, n_q, d_model]   dL/d(concat) */
} attn_mha_grads;

/* Length in doubles of the work array attn_multihead_backward needs; 0 for
 * dims attn_multihead would reject. */
size_t attn_multihead_backward_work_size(const attn_mha_dims *dims);

/*
 * The backward pass of attn_multihead with the same inputs and options:
 * dConcat = dO W_oᵀ, each head as attn_sdpa_backward on its columns,
 * then dW = Xᵀ dY and db = column sums of dY for every projection, and
 * dX = dQ W_qᵀ (+ dK W_kᵀ + dV W_vᵀ for self-attention). Parameter
 * gradients sum over the batch.
 */
int attn_multihead_backward(const attn_mha_grads *grads,
                            const double *d_output, /* [batch, n_q, d_out] */
                            const double *x_q,      /* [batch, n_q, d_q_in] */
                            const double *x_kv,     /* [batch, n_kv, d_kv_in]
                                                       or NULL */
                            const attn_mha_params *params,
                            const attn_mha_dims *dims,
                            const attn_options *opts, /* NULL = defaults */
                            double *work); /* [attn_multihead_backward_
                                              work_size(dims)] */

/*
 * The same gradients from the forward's intermediates instead of computing
 * them again: saved holds what attn_multihead wrote for these inputs,
 * parameters and options (q, k, v, weights and concat; ATTN_ERR_NULL if
 * one is missing), and the gradients are the same bits as
 * attn_multihead_backward's, in about half the time. A trainer saves them
 * from its forward pass. With dropout the weights are recomputed.
 */
int attn_multihead_backward_saved(const attn_mha_grads *grads,
                                  const double *d_output, const double *x_q,
                                  const double *x_kv,
                                  const attn_mha_outputs *saved,
                                  const attn_mha_params *params,
                                  const attn_mha_dims *dims,
                                  const attn_options *opts, double *work);

/* Length in doubles of the work array attn_additive_backward needs. */
size_t attn_additive_backward_work_size(int n_k, int d_s, int d_a);

/*
 * The backward pass of attn_additive from dL/d(context): through the
 * context (value path: grad_keys_j += weights_j dC), the softmax, the score
 * v · energy and the tanh, to the query, the keys and every parameter.
 * grad_b is written even when b is NULL (the gradient at a zero bias).
 */
int attn_additive_backward(double *grad_query,      /* [n_q, d_s] or NULL */
                           double *grad_keys,       /* [n_k, d_h] or NULL */
                           double *grad_w_s,        /* [d_s, d_a] or NULL */
                           double *grad_w_h,        /* [d_h, d_a] or NULL */
                           double *grad_b,          /* [d_a] or NULL */
                           double *grad_v,          /* [d_a] or NULL */
                           const double *d_context, /* [n_q, d_h] */
                           const double *query,     /* [n_q, d_s] */
                           const double *keys,      /* [n_k, d_h] */
                           const double *w_s,       /* [d_s, d_a] */
                           const double *w_h,       /* [d_h, d_a] */
                           const double *b,         /* [d_a] or NULL */
                           const double *v,         /* [d_a] */
                           int n_q, int n_k, int d_s, int d_h, int d_a,
                           double *work); /* [attn_additive_backward_
                                             work_size(..)] */

/* The same gradients from the forward's energy (what attn_additive wrote
 * for these inputs) instead of computing its tanh again: the same bits as
 * attn_additive_backward's, in about a third of the time. */
int attn_additive_backward_saved(
    double *grad_query, double *grad_keys, double *grad_w_s, double *grad_w_h,
    double *grad_b, double *grad_v, const double *d_context,
    const double *query, const double *keys, const double *w_s,
    const double *w_h, const double *b, const double *v,
    const double *energy, /* [n_q, n_k, d_a] */
    int n_q, int n_k, int d_s, int d_h, int d_a,
    double *work); /* [attn_additive_backward_work_size(..)] */

/* Length in doubles of the work array attn_luong_backward needs. */
size_t attn_luong_backward_work_size(int method, int n_k, int d_s, int d_a);

/*
 * The backward pass of attn_luong from dL/d(context). grad_w has the shape
 * of w ([d_h, d_s] general, [d_s + d_h, d_a] concat; unused for dot);
 * grad_b and grad_v are for concat only.
 */
int attn_luong_backward(double *grad_query,      /* [n_q, d_s] or NULL */
                        double *grad_keys,       /* [n_k, d_h] or NULL */
                        double *grad_w,          /* like w, or NULL */
                        double *grad_b,          /* [d_a] or NULL; concat */
                        double *grad_v,          /* [d_a] or NULL; concat */
                        const double *d_context, /* [n_q, d_h] */
                        const double *query,     /* [n_q, d_s] */
                        const double *keys,      /* [n_k, d_h] */
                        const double *w,         /* as for attn_luong */
                        const double *b,         /* concat only, or NULL */
                        const double *v,         /* concat only */
                        int method, int n_q, int n_k, int d_s, int d_h,
                        int d_a,       /* concat only */
                        double *work); /* [attn_luong_backward_work_size(..)] */

/* Length in doubles of the work array attn_linear_backward needs. */
size_t attn_linear_backward_work_size(int n_q, int d_k, int d_v);

/* The backward pass of attn_linear (same causal flag), in O(n): the query
 * gradients from the prefix sums S_i, z_i, the key and value gradients
 * from suffix sums of dL/dS_i and dL/dz_i over the queries that see them.
 * A key no query sees (causal, n_k > n_q) gets 0. */
int attn_linear_backward(double *grad_q,         /* [batch, n_q, d_k] or NULL */
                         double *grad_k,         /* [batch, n_k, d_k] or NULL */
                         double *grad_v,         /* [batch, n_k, d_v] or NULL */
                         const double *d_output, /* [batch, n_q, d_v] */
                         const double *q,        /* [batch, n_q, d_k] */
                         const double *k,        /* [batch, n_k, d_k] */
                         const double *v,        /* [batch, n_k, d_v] */
                         int batch, int n_q, int n_k, int d_k, int d_v,
                         int causal,    /* 0 or 1 */
                         double *work); /* [attn_linear_backward_work_size(
                                           n_q, d_k, d_v)] */

/* ---- Transformer block ---- */

typedef enum attn_norm_placement {
    ATTN_NORM_POST = 0, /* x1 = LN1(x + MHA(x)); out = LN2(x1 + FFN(x1)) */
    ATTN_NORM_PRE = 1   /* x1 = x + MHA(LN1(x)); out = x1 + FFN(LN2(x1)) */
} attn_norm_placement;

typedef struct attn_block_dims {
    int batch;
    int n;         /* tokens */
    int d_model;   /* width of x, of every projection and of the output */
    int num_heads; /* must divide d_model */
    int d_ff;      /* hidden width of the feed-forward network */
    int norm;      /* an attn_norm_placement */
} attn_block_dims;

typedef struct attn_block_params {
    attn_mha_params attention; /* self-attention; W_q, W_k, W_v, W_o
                                  [d_model, d_model], biases [d_model] */
    const double *gamma1;      /* [d_model] */
    const double *beta1;       /* [d_model] or NULL */
    const double *w1;          /* [d_model, d_ff] */
    const double *b1;          /* [d_ff] or NULL */
    const double *w2;          /* [d_ff, d_model] */
    const double *b2;          /* [d_model] or NULL */
    const double *gamma2;      /* [d_model] */
    const double *beta2;       /* [d_model] or NULL */
} attn_block_params;

/* Every intermediate, each [batch, n, d_model] unless noted; every pointer
 * may be NULL. */
typedef struct attn_block_outputs {
    attn_mha_outputs attention; /* the attention's intermediates; its
                                   output is MHA(x) (post) or MHA(ln1) (pre) */
    double *ln1;                /* post: LN1(sum1); pre: LN1(x) */
    double *sum1;   /* x + attention output (the first residual sum) */
    double *ln2;    /* post: LN2(sum2), the output; pre: LN2(sum1) */
    double *hidden; /* [batch, n, d_ff] ReLU(ffn input @ W1 + b1); the ffn
                       input is ln1 (post) or ln2 (pre) */
    double *ffn;    /* hidden @ W2 + b2 */
    double *sum2;   /* post: ln1 + ffn; pre: sum1 + ffn, the output */
    double *output;
} attn_block_outputs;

/* Gradients (see "Gradients" below); every pointer may be NULL. */
typedef struct attn_block_grads {
    double *x;                /* [batch, n, d_model] */
    attn_mha_grads attention; /* its x_q: dL/d(attention input), x (post)
                                 or ln1 (pre); its x_kv is not written */
    double *gamma1, *beta1;   /* [d_model] */
    double *w1;               /* [d_model, d_ff] */
    double *b1;               /* [d_ff] */
    double *w2;               /* [d_ff, d_model] */
    double *b2;               /* [d_model] */
    double *gamma2, *beta2;   /* [d_model] */
} attn_block_grads;

/* Lengths in doubles of the work arrays; 0 for dims the block rejects. */
size_t attn_transformer_block_work_size(const attn_block_dims *dims);
size_t attn_transformer_block_backward_work_size(const attn_block_dims *dims);

/* The block of tutorial 003 §24.11: multi-head self-attention (opts: mask,
 * scale, dropout) and the ReLU feed-forward network, each in a residual
 * connection, with layer normalisation (ε = 1e-5) placed by dims->norm. */
int attn_transformer_block(const attn_block_outputs *out,
                           const double *x, /* [batch, n, d_model] */
                           const attn_block_params *params,
                           const attn_block_dims *dims,
                           const attn_options *opts, /* NULL = defaults */
                           double *work);            /* [attn_transformer_block_
                                                        work_size(dims)] */

/* The backward pass of attn_transformer_block: dX and every parameter
 * gradient from d_output [batch, n, d_model]. */
int attn_transformer_block_backward(const attn_block_grads *grads,
                                    const double *d_output, const double *x,
                                    const attn_block_params *params,
                                    const attn_block_dims *dims,
                                    const attn_options *opts,
                                    double *work); /* [attn_transformer_
                                     block_backward_work_size(dims)] */

/*
 * The same gradients from the forward's intermediates instead of computing
 * them again: saved holds what attn_transformer_block wrote for these
 * inputs, parameters and options (ln1, sum1, ln2, sum2 and the attention's
 * q, k, v, weights and concat; ATTN_ERR_NULL if one is missing), and the
 * gradients are the same bits as attn_transformer_block_backward's. A
 * trainer saves them from its forward pass.
 */
int attn_transformer_block_backward_saved(
    const attn_block_grads *grads, const double *d_output, const double *x,
    const attn_block_outputs *saved, const attn_block_params *params,
    const attn_block_dims *dims, const attn_options *opts,
    double *work); /* [attn_
transformer_block_backward_work_size(dims)] */

/* ---- Decoder-only language models: Llama's pieces ----
 *
 * The pieces of a Llama-architecture decoder (Hugging Face's
 * LlamaForCausalLM) in float64, and the decoder itself with a key/value
 * cache. A row of Q is [num_heads, head_dim] and a row of K or V
 * [num_kv_heads, head_dim]: head h reads columns [h·head_dim, (h+1)·head_dim).
 */

/*
 * Rotary position embeddings as Llama's reference, x cos + rotate_half(x)
 * sin with rotate_half(x) = [−x[d/2:], x[:d/2]]: for a head of width d
 * (even) at position p, with f_i = p · (1 / theta^(2i/d)) for i < d/2,
 *   out[i]       = x[i] cos f_i − x[i + d/2] sin f_i
 *   out[i + d/2] = x[i + d/2] cos f_i + x[i] sin f_i.
 * Row r is at positions[r] (a cached step rotates by its absolute
 * position). ATTN_ERR_HEAD_DIM for an odd head_dim, ATTN_ERR_POSITION for
 * a negative position, ATTN_ERR_RANGE unless theta is finite and > 0.
 * output may alias x.
 */
int attn_rope(double *output,       /* [n, num_heads, head_dim] */
              const double *x,      /* [n, num_heads, head_dim] */
              const int *positions, /* [n] */
              int n, int num_heads, int head_dim, double theta);

/* The gradient of attn_rope: the rotation by −f_i (its transpose).
 * grad_x may alias d_output. */
int attn_rope_backward(double *grad_x,         /* [n, num_heads, head_dim] */
                       const double *d_output, /* [n, num_heads, head_dim] */
                       const int *positions,   /* [n] */
                       int n, int num_heads, int head_dim, double theta);

/*
 * RMSNorm as Llama's: output = weight ∘ (x · rstd), rstd = 1/sqrt(mean(x²)
 * + eps) over each row. ATTN_ERR_RANGE unless eps is finite and >= 0.
 * output may alias x.
 */
int attn_rms_norm(double *output,       /* [rows, d] or NULL */
                  double *rstd,         /* [rows] or NULL */
                  const double *x,      /* [rows, d] */
                  const double *weight, /* [d] */
                  int rows, int d, double eps);

/* The gradient of attn_rms_norm: with y = x · rstd and g = dO ∘ weight,
 *   grad_x = rstd (g − y mean(g ∘ y)),  grad_weight = Σ_rows dO ∘ y.
 * grad_x may alias d_output. */
int attn_rms_norm_backward(double *grad_x,         /* [rows, d] or NULL */
                           double *grad_weight,    /* [d] or NULL */
                           const double *d_output, /* [rows, d] */
                           const double *x,        /* [rows, d] */
                           const double *weight,   /* [d] */
                           int rows, int d, double eps);

/* Lengths in doubles of the work arrays of the two functions below:
 * 2·rows·d_ff and 4·rows·d_ff (0 for sizes they reject). */
size_t attn_gated_mlp_work_size(int rows, int d_ff);
size_t attn_gated_mlp_backward_work_size(int rows, int d_ff);

/*
 * The SiLU-gated MLP (Llama's, "SwiGLU"), with silu(z) = z / (1 + e^−z):
 *   hidden = silu(x @ W_gate) ∘ (x @ W_up)      output = hidden @ W_down
 */
int attn_gated_mlp(double *hidden,       /* [rows, d_ff] or NULL */
                   double *output,       /* [rows, d_out] or NULL */
                   const double *x,      /* [rows, d_in] */
                   const double *w_gate, /* [d_in, d_ff] */
                   const double *w_up,   /* [d_in, d_ff] */
                   const double *w_down, /* [d_ff, d_out] */
                   int rows, int d_in, int d_ff, int d_out,
                   double *work); /* [attn_gated_mlp_work_size(..)] */

/* The gradient of attn_gated_mlp: with g = x W_gate, u = x W_up and
 * dH = dO W_downᵀ, dW_down = hiddenᵀ dO, dg = dH ∘ u ∘ silu'(g), du = dH ∘
 * silu(g), dW_gate = xᵀ dg, dW_up = xᵀ du, grad_x = dg W_gateᵀ + du W_upᵀ;
 * silu'(z) = s (1 + z (1 − s)), s = 1 / (1 + e^−z). */
int attn_gated_mlp_backward(double *grad_x,         /* [rows, d_in] or NULL */
                            double *grad_w_gate,    /* [d_in, d_ff] or NULL */
                            double *grad_w_up,      /* [d_in, d_ff] or NULL */
                            double *grad_w_down,    /* [d_ff, d_out] or NULL */
                            const double *d_output, /* [rows, d_out] */
                            const double *x,        /* [rows, d_in] */
                            const double *w_gate,   /* [d_in, d_ff] */
                            const double *w_up,     /* [d_in, d_ff] */
                            const double *w_down,   /* [d_ff, d_out] */
                            int rows, int d_in, int d_ff, int d_out,
                            double *work); /* [attn_gated_mlp_backward_
                                              work_size(..)] */

/* Lengths in doubles of the work arrays of the two functions below: n_k
 * and 2·n_k. */
size_t attn_gqa_work_size(int n_k);
size_t attn_gqa_backward_work_size(int n_k);

/*
 * Causal grouped-query attention on projected (and rotated) Q, K and V:
 * head h reads key/value head h / (num_heads / num_kv_heads)
 * (num_kv_heads dividing num_heads, else ATTN_ERR_KV_HEADS; 1 is
 * multi-query, num_heads multi-head). The queries are the last n_q of the
 * n_k positions (n_q <= n_k, else ATTN_ERR_RANGE): query i sits at
 * position n_k − n_q + i and sees keys 0 to that position, so one new
 * query against a cache of n_k keys is n_q = 1. Scores are scaled by
 * 1/sqrt(head_dim); a weight after the query's position is exactly 0, and
 * each query's sums run over its own keys only, so its row has the same
 * bits whatever n_q and n_k are.
 */
int attn_gqa(double *weights, /* [num_heads, n_q, n_k] or NULL */
             double *output,  /* [n_q, num_heads, head_dim] or NULL */
             const double *q, /* [n_q, num_heads, head_dim] */
             const double *k, /* [n_k, num_kv_heads, head_dim] */
             const double *v, /* [n_k, num_kv_heads, head_dim] */
             int n_q, int n_k, int num_heads, int num_kv_heads, int head_dim,
             double *work); /* [attn_gqa_work_size(n_k)] */

/* The gradient of attn_gqa: each head as attn_sdpa_backward on its causal
 * keys, the gradients of a key/value head summed over the heads that read
 * it. */
int attn_gqa_backward(double *grad_q,         /* [n_q, num_heads, head_dim]
                                                 or NULL */
                      double *grad_k,         /* [n_k, num_kv_heads,
                                                 head_dim] or NULL */
                      double *grad_v,         /* [n_k, num_kv_heads,
                                                 head_dim] or NULL */
                      const double *d_output, /* [n_q, num_heads, head_dim] */
                      const double *q,        /* [n_q, num_heads, head_dim] */
                      const double *k, /* [n_k, num_kv_heads, head_dim] */
                      const double *v, /* [n_k, num_kv_heads, head_dim] */
                      int n_q, int n_k, int num_heads, int num_kv_heads,
                      int head_dim,
                      double *work); /* [attn_gqa_backward_work_size(n_k)] */

/* A decoder's token embedding: output row r = table row tokens[r].
 * ATTN_ERR_TOKEN for a token outside 0..vocab − 1. */
int attn_embedding(double *output,      /* [n, d] */
                   const double *table, /* [vocab, d] */
                   const int *tokens,   /* [n] */
                   int n, int vocab, int d);

/* The gradient of attn_embedding, added to grad_table: row tokens[r] +=
 * d_output row r (added, so that a table tied to the unembedding collects
 * both gradients). */
int attn_embedding_backward(double *grad_table,     /* [vocab, d] added to */
                            const double *d_output, /* [n, d] */
                            const int *tokens,      /* [n] */
                            int n, int vocab, int d);

/* The unembedding: logits[r][t] = hidden row r · table row t, the table
 * being the lm_head or, tied, the embedding (the bits of
 * attn_decoder_forward's logits). */
int attn_unembedding(double *logits,       /* [n, vocab] */
                     const double *hidden, /* [n, d] */
                     const double *table,  /* [vocab, d] */
                     int n, int vocab, int d);

/* The gradient of attn_unembedding: grad_hidden = d_logits @ table
 * (overwritten), grad_table += d_logitsᵀ @ hidden (added, as
 * attn_embedding_backward). */
int attn_unembedding_backward(double *grad_hidden,    /* [n, d] or NULL */
                              double *grad_table,     /* [vocab, d] or NULL */
                              const double *d_logits, /* [n, vocab] */
                              const double *hidden,   /* [n, d] */
                              const double *table,    /* [vocab, d] */
                              int n, int vocab, int d);

/* Cross-entropy over tokens (a byte-level model's are bytes): *loss = the
 * mean over the n rows of −log softmax(logits row)[targets[r]], and
 * grad_logits (or NULL) its gradient, (softmax(row) − onehot(target)) / n.
 * ATTN_ERR_TOKEN for a target outside 0..vocab − 1. */
int attn_cross_entropy(double *loss,
                       double *grad_logits,  /* [n, vocab] or NULL */
                       const double *logits, /* [n, vocab] */
                       const int *targets,   /* [n] */
                       int n, int vocab);

/* A decoder's sizes, named as Hugging Face's LlamaConfig (hidden_act is
 * always SiLU). head_dim = hidden_size / num_attention_heads. */
typedef struct attn_decoder_config {
    int vocab_size;
    int hidden_size;
    int intermediate_size;
    int num_hidden_layers;
    int num_attention_heads;     /* divides hidden_size (ATTN_ERR_HEADS) */
    int num_key_value_heads;     /* divides num_attention_heads */
    int max_position_embeddings; /* positions run from 0 to this − 1 */
    double rope_theta;           /* finite, > 0 */
    double rms_norm_eps;         /* finite, >= 0 */
    int tie_word_embeddings;     /* 1: the lm_head is embed_tokens */
} attn_decoder_config;

/* ATTN_OK, or the first thing wrong with a config: a size not positive
 * (ATTN_ERR_SIZE), ATTN_ERR_HEADS, ATTN_ERR_KV_HEADS, an odd head_dim
 * (ATTN_ERR_HEAD_DIM), rope_theta or rms_norm_eps out of range
 * (ATTN_ERR_RANGE), tie_word_embeddings not 0 or 1 (ATTN_ERR_OPTION), or
 * a weight matrix too large to count (ATTN_ERR_SIZE_OVERFLOW). */
int attn_decoder_config_check(const attn_decoder_config *config);

/* One decoder layer's weights, named as the checkpoint's
 * model.layers.N.*; projections in the x @ W layout, [in, out], the
 * transpose of the checkpoint's nn.Linear weights. */
typedef struct attn_decoder_layer {
    const double *input_layernorm;          /* [hidden] */
    const double *q_proj;                   /* [hidden, heads · head_dim] */
    const double *k_proj;                   /* [hidden, kv_heads · head_dim] */
    const double *v_proj;                   /* [hidden, kv_heads · head_dim] */
    const double *o_proj;                   /* [heads · head_dim, hidden] */
    const double *post_attention_layernorm; /* [hidden] */
    const double *gate_proj;                /* [hidden, intermediate] */
    const double *up_proj;                  /* [hidden, intermediate] */
    const double *down_proj;                /* [intermediate, hidden] */
} attn_decoder_layer;

typedef struct attn_decoder_params {
    const double *embed_tokens;       /* [vocab, hidden] */
    const attn_decoder_layer *layers; /* [num_hidden_layers] */
    const double *norm;               /* [hidden] the final RMSNorm */
    const double *lm_head;            /* [vocab, hidden], a row per token as the
                                         checkpoint's (logits = h · row); ignored
                                         when tie_word_embeddings */
} attn_decoder_params;

/* The keys (after RoPE) and values of every position so far, caller-owned:
 * row p of layer l is at (l · capacity + p) · num_key_value_heads ·
 * head_dim. A new cache has length 0; attn_decoder_forward appends. */
typedef struct attn_kv_cache {
    double *keys;   /* [layers, capacity, kv_heads, head_dim] */
    double *values; /* [layers, capacity, kv_heads, head_dim] */
    int capacity;   /* positions it has room for */
    int length;     /* positions it holds: the next token's position */
} attn_kv_cache;

/* Doubles of keys (and of values) for a cache of `capacity` positions; 0
 * for a config attn_decoder_config_check rejects or a size that
 * overflows. */
size_t attn_kv_cache_size(const attn_decoder_config *config, int capacity);

/* What attn_decoder_forward writes; every pointer may be NULL. */
typedef struct attn_decoder_outputs {
    double *logits;  /* [n, vocab_size] */
    double *weights; /* [layers, heads, n, length + n]: every layer's and
                        head's attention weights of the n new queries over
                        every position (0 after the query's own) */
    double *hidden;  /* [n, hidden_size] the final norm's output */
} attn_decoder_outputs;

/* Length in doubles of attn_decoder_forward's work for n new tokens and a
 * cache of `capacity` positions; 0 for a config the check rejects. */
size_t attn_decoder_work_size(const attn_decoder_config *config, int n,
                              int capacity);

/*
 * Runs n tokens at positions cache->length to cache->length + n − 1
 * through the decoder: embed_tokens rows, then per layer
 *   h = x + o_proj(gqa(rope(q_proj(a)), rope(k_proj(a)), v_proj(a))),
 *   a = rms_norm(x, input_layernorm)
 *   x = h + down_proj(silu(gate_proj(b)) ∘ up_proj(b)),
 *   b = rms_norm(h, post_attention_layernorm)
 * then rms_norm(x, norm) and logits against lm_head's rows. Each layer's
 * rotated keys and values are appended to the cache, whose length grows by
 * n on success (and stays on failure). Every row is computed on its own in
 * one order, so a token's logits and weights have the same bits whether it
 * ran with the whole text (an empty cache, n tokens) or one at a time
 * after the tokens before it (n = 1): decoding with the cache equals
 * recomputing. ATTN_ERR_TOKEN for a token outside 0..vocab_size − 1,
 * ATTN_ERR_CACHE_FULL when length + n exceeds capacity,
 * ATTN_ERR_POSITION when it exceeds max_position_embeddings.
 */
int attn_decoder_forward(const attn_decoder_outputs *out,
                         attn_kv_cache *cache, /* read and appended to */
                         const int *tokens,    /* [n] */
                         int n, const attn_decoder_params *params,
                         const attn_decoder_config *config,
                         double *work); /* [attn_decoder_work_size(config,
                                           n, cache->capacity)] */

/* ---- A model's files: config.json and model.safetensors ----
 *
 * Read from the caller's bytes, with no allocation and no I/O: the caller
 * reads the files, and sizes every array from what these report before
 * allocating it. Every function that can fail on a file's contents takes
 * message [cap] (or NULL, cap 0), where it writes one line saying what is
 * wrong, truncated as snprintf does; ATTN_ERR_FORMAT for a file that is
 * malformed or whose sizes disagree with it.
 */

/* Reads config.json (Hugging Face's LlamaConfig names) into *config:
 * hidden_size, intermediate_size, num_hidden_layers, num_attention_heads
 * and vocab_size are required; num_key_value_heads defaults to
 * num_attention_heads, max_position_embeddings to 2048, rope_theta to
 * 10000, rms_norm_eps to 1e-6, tie_word_embeddings to false; hidden_act,
 * when given, must be "silu", head_dim hidden_size / num_attention_heads,
 * and rope_scaling null. Other names are ignored. The config is then
 * checked as attn_decoder_config_check does (its status, and a message). */
int attn_decoder_config_parse(attn_decoder_config *config,
                              char *message,                /* [cap] or NULL */
                              size_t cap, const char *json, /* [length] */
                              size_t length);

typedef enum attn_dtype {
    ATTN_DTYPE_F32 = 0, /* 4 bytes, IEEE binary32, little-endian */
    ATTN_DTYPE_F16 = 1, /* 2 bytes, IEEE binary16 */
    ATTN_DTYPE_BF16 = 2 /* 2 bytes, bfloat16: binary32's upper half */
} attn_dtype;

#define ATTN_TENSOR_MAX_RANK 8

/* One tensor of a safetensors file, as its header describes it. */
typedef struct attn_tensor_info {
    int dtype;                       /* an attn_dtype */
    int rank;                        /* 0 to ATTN_TENSOR_MAX_RANK */
    int shape[ATTN_TENSOR_MAX_RANK]; /* each 0 to INT_MAX */
    size_t count;                    /* the product of the shape */
    size_t offset;                   /* of its first byte in the file */
    size_t bytes;                    /* count × the dtype's size */
} attn_tensor_info;

/*
 * Checks a safetensors file whole: an 8-byte little-endian header length
 * N, a header of N bytes within the file that is one JSON object, and for
 * every tensor but "__metadata__" a dtype F32, F16 or BF16, a shape of at
 * most ATTN_TENSOR_MAX_RANK sizes whose product fits, and data_offsets
 * [begin, end] within the data after the header, end − begin being the
 * shape's bytes. *tensors = how many tensors it holds (may be NULL).
 */
int attn_safetensors_check(size_t *tensors, /* or NULL */
                           char *message,   /* [cap] or NULL */
                           size_t cap, const unsigned char *file, /* [size] */
                           size_t size);

/* The file checked as attn_safetensors_check does, then the tensor named
 * `name` described in *info: ATTN_ERR_FORMAT with a message naming it when
 * the file has none of that name, or two. */
int attn_safetensors_find(attn_tensor_info *info,
                          char *message, /* [cap] or NULL */
                          size_t cap, const unsigned char *file, /* [size] */
                          size_t size, const char *name);

/* out = the tensor's values as doubles, exactly (every F32, F16 and BF16
 * value is a double); ATTN_ERR_NOT_FINITE if one is NaN or infinite,
 * ATTN_ERR_FORMAT if info does not lie within the file. */
int attn_safetensors_read(double *out,               /* [info->count] */
                          const unsigned char *file, /* [size] */
                          size_t size, const attn_tensor_info *info);

/* Writes config.json for a config attn_decoder_config_check accepts (its
 * status otherwise): the LlamaConfig names attn_decoder_config_parse
 * reads, with hidden_act "silu", and rope_theta and rms_norm_eps in their
 * shortest round-trip form, so the file reads back as the same config.
 * *length = the text's length without its NUL; json [cap] holds it and
 * its NUL, or ATTN_ERR_TOO_LARGE (json NULL and cap 0 measure it). */
int attn_decoder_config_write(char *json, /* [cap] or NULL */
                              size_t cap, size_t *length,
                              const attn_decoder_config *config);

/* One tensor to write: values in row-major order of `shape`, or with
 * transpose 1 (rank 2 only) of its transpose, [shape[1], shape[0]] (an x
 * @ W weight written as the checkpoint's nn.Linear [out, in]). */
typedef struct attn_tensor_out {
    const char *name;
    int rank;
    int shape[ATTN_TENSOR_MAX_RANK];
    const double *values; /* finite */
    int transpose;
} attn_tensor_out;

/* Writes a safetensors file of the tensors as F32 (each value rounded to
 * the nearest float), in the order given, its header padded with spaces
 * to a multiple of 8 bytes. *size = the file's bytes; file [cap] holds it,
 * or ATTN_ERR_TOO_LARGE (file NULL and cap 0 measure it). */
int attn_safetensors_write(unsigned char *file, /* [cap] or NULL */
                           size_t cap, size_t *size,
                           const attn_tensor_out *tensors, /* [count] */
                           int count);

/* ---- Float32 fast path ----
 *
 * The same computations in float32, for speed: inputs, outputs and work are
 * float, and the conventions above hold (row-major, outputs first, NULL
 * skips an output, masked weights exactly 0, a fully masked row gives 0,
 * inputs must be finite). The kernels are tiled like a GEMM, with an online
 * softmax (a running max and sum per query row, as FlashAttention), so
 * without `weights` the memory is O(T·d), and tiles a causal, local,
 * strided or key-padding mask hides from every query of the tile are
 * skipped. One portable source gives four kernels: scalar (every build),
 * WASM SIMD (built with -msimd128), and on x86 with gcc AVX2 + FMA and
 * AVX-512F, the widest the CPU has chosen at run time. Against attn_sdpa in
 * double the outputs agree to about 3e-6 relative (max |difference| over max
 * |value|) for T = 2048, d = 64 and inputs in [-1, 1]; the tests hold them to
 * 1e-5. A score that overflows float gives ATTN_ERR_OVERFLOW_VALUE, except in
 * tiles skipped as masked, which are never computed.
 */

/* Length in floats of the work array attn_sdpa_f32 needs: K packed as
 * [ceil(n_k / 128), d_k, 128], then 2 × 2048 for a tile of scores and of
 * P, and 32 × (d_k + d_v) for up to 32 query rows and their output rows
 * that go through the keys together. */
size_t attn_sdpa_f32_work_size(int n_k, int d_k, int d_v);

/*
 * weights = row softmax of (Q Kᵀ × scale, masked entries -INFINITY), then
 *           dropout as attn_sdpa (same seeds, same kept entries)
 * output  = weights V
 * Options, masks and batches as attn_sdpa; the scale is rounded to float
 * and multiplies Q before the product ((Q × scale) Kᵀ).
 * With weights the softmax is computed exactly per row (two passes);
 * without, online.
 */
int attn_sdpa_f32(float *weights, /* [batch, n_q, n_k] or NULL */
                  float *output,  /* [batch, n_q, d_v] or NULL */
                  const float *q, /* [batch, n_q, d_k] */
                  const float *k, /* [batch, n_k, d_k] */
                  const float *v, /* [batch, n_k, d_v] */
                  int batch, int n_q, int n_k, int d_k, int d_v,
                  const attn_options *opts, /* NULL = defaults */
                  float *work); /* [attn_sdpa_f32_work_size(n_k, d_k, d_v)] */

/* The kernel attn_sdpa_f32 runs on this machine: "avx512f", "avx2-fma",
 * "wasm-relaxed-simd" (the build with relaxed SIMD's fused multiply-add),
 * "wasm-simd128" or "scalar". */
const char *attn_f32_kernel_name(void);

/* Length in floats of the work array attn_sdpa_f32_backward needs: 2·n_k. */
size_t attn_sdpa_f32_backward_work_size(int n_k);

/*
 * Gradients of a loss L through attn_sdpa_f32's output, given
 * d_output = dL/d(output): dq = dL/dQ, dk = dL/dK, dv = dL/dV, each NULL
 * to skip it. Same options, masks and dropout as the forward call (so the
 * same entries are dropped); masked entries pass no gradient. P is
 * recomputed row by row (O(T) work, no stored weights); not yet tiled.
 */
int attn_sdpa_f32_backward(
    float *dq,             /* [batch, n_q, d_k] or NULL */
    float *dk,             /* [batch, n_k, d_k] or NULL */
    float *dv,             /* [batch, n_k, d_v] or NULL */
    const float *d_output, /* [batch, n_q, d_v] */
    const float *q,        /* [batch, n_q, d_k] */
    const float *k,        /* [batch, n_k, d_k] */
    const float *v,        /* [batch, n_k, d_v] */
    int batch, int n_q, int n_k, int d_k, int d_v,
    const attn_options *opts, /* NULL = defaults */
    float *work);             /* [attn_sdpa_f32_backward_work_size(n_k)] */

/* Linear attention as attn_linear, in float32. */
int attn_linear_f32(float *output,  /* [batch, n_q, d_v] */
                    const float *q, /* [batch, n_q, d_k] */
                    const float *k, /* [batch, n_k, d_k] */
                    const float *v, /* [batch, n_k, d_v] */
                    int batch, int n_q, int n_k, int d_k, int d_v,
                    int causal,   /* 0 or 1 */
                    float *work); /* [attn_linear_f32_work_size(d_k, d_v)] */

/* Length in floats: S [d_k, d_v], z [d_k], one phi row [d_k]. */
size_t attn_linear_f32_work_size(int d_k, int d_v);

/* ---- Problems: named inputs in; results as JSON, text, Markdown, LaTeX ----
 *
 * The layer shared by the CLI (build/attn) and the JS API (through WASM). A
 * problem has a kind and named fields, spelled as in the JS API; it checks
 * them with messages that name the field and the shape it expects, runs the
 * mechanism, and formats the result. It is the only part of the library that
 * allocates, through the allocator given to attn_problem_create.
 *
 * Kinds and their fields (? = optional):
 *   "scaledDotProduct": q, k, v, mask?, keyLength?, window?, stride?, scale?,
 *                       dropout?, seed?, queryTokens?, keyTokens?, tokens?
 *      -> scores, scaled, weights, output
 *      or, starting from scores: scores, v?, dk (unless scale is given),
 *      and the same options
 *      -> scaled, weights, output (when v is given)
 *   "weightedSum": weights, v                      -> output
 *   "multiHead": x, xkv?, numHeads, wq, wk, wv, wo, bq?, bk?, bv?, bo?, mask?,
 *                keyLength?, window?, stride?, scale?, tokens?, ...
 *      -> q, k, v, heads[h].{scores, scaled, weights, output}, concat, output
 *   "additive": query, keys, ws, wh, v, b?        -> energy, scores, weights,
 *                                                     context
 *   "luong": query, keys, method, w?, v?, b?       -> scores, weights, context
 *                                                     (+ energy for concat)
 *   "linear": q, k, v, causal?                     -> output
 *   "softmax": x, scale?, mask?                    -> scaled, max, exp, sum,
 *                                                     weights
 *   "transformerBlock": x, numHeads, wq, wk, wv, wo (d_model x d_model),
 *                bq?, bk?, bv?, bo?, gamma1, beta1?, w1 (d_model x d_ff),
 *                b1?, w2 (d_ff x d_model), b2?, gamma2, beta2?,
 *                norm? ("post", the default, or "pre"), and the options of
 *                multiHead (mask?, keyLength?, ..., dropout?, seed?)
 *      -> attention, sum1, ln1, ffnHidden, ffn, sum2, ln2, output,
 *         heads[h].weights (see attn_block_outputs)
 *   "onlineSoftmax": q, k, v (matrices, no batch), tile? (keys per tile,
 *                default 2)  -> scaled, tileMax, tileSum, tileAcc, output,
 *                weights, plainOutput (see attn_online_attention)
 *
 * Gradients: scaledDotProduct (given q and k), multiHead, linear and
 * transformerBlock also take gradOutput?, dL/d(output), and additive and
 * luong take gradContext?, dL/d(context), shaped like that result. With it
 * the results also hold the gradients of L:
 *   scaledDotProduct -> gradQ, gradK, gradV, gradWeights, gradScaled (0
 *                       where masked)
 *   multiHead        -> gradX, gradXkv (with xkv), gradWq, gradWk, gradWv,
 *                       gradWo, and gradBq, ... for each bias given;
 *                       heads[h].gradWeights, heads[h].gradScaled
 *   transformerBlock -> gradX and grad<Field> for each parameter given
 *                       (gradWq, ..., gradGamma1, gradBeta1, gradW1,
 *                       gradB1, gradW2, gradB2, gradGamma2, gradBeta2)
 *   additive         -> gradQuery, gradKeys, gradWs, gradWh, gradV, gradB
 *                       (with b)
 *   luong            -> gradQuery, gradKeys, gradW (general, concat),
 *                       gradV and gradB (concat, gradB with b)
 *   linear           -> gradQ, gradK, gradV
 * scaledDotProduct may take target? (shaped like output) instead of
 * gradOutput: the loss L = ½‖output − target‖², whose gradOutput =
 * output − target is then a result too. With either, its walkthrough
 * (unbatched, a matrix of queries) goes on through the backward pass.
 * A matrix field may also be a batch of matrices (rank 3); then every result
 * gains a leading batch dimension. In JSON results a masked entry of
 * `scaled` (-INFINITY) is written as null, since JSON has no infinity.
 */

typedef struct attn_problem attn_problem;

typedef struct attn_allocator {
    void *(*allocate)(void *context, size_t bytes); /* NULL on failure */
    void (*release)(void *context, void *block);
    void *context;
} attn_allocator;

/* kind as above; allocator NULL = malloc and free. On failure *problem is
 * NULL and the status says why (ATTN_ERR_OPTION for an unknown kind). */
int attn_problem_create(attn_problem **problem, const char *kind,
                        const attn_allocator *allocator);
void attn_problem_destroy(attn_problem *problem); /* NULL is fine */

/* The name of kind number `index` (0, 1, ... in the order listed above), or
 * NULL past the last: the names attn_problem_create takes, for messages
 * that list them. */
const char *attn_problem_kind(int index);

/* Setters copy what they are given. rank 1 = vector [dims[0]], 2 = matrix
 * [dims[0], dims[1]], 3 = batch [dims[0], dims[1], dims[2]]. Boolean
 * matrices (mask) are tensors of 0 and 1. A field unknown to the kind, or
 * a value of the wrong type, gives ATTN_ERR_INPUT and an error message. */
int attn_problem_set_tensor(attn_problem *problem, const char *field, int rank,
                            const int *dims, const double *data);
int attn_problem_set_number(attn_problem *problem, const char *field,
                            double value);
int attn_problem_set_bool(attn_problem *problem, const char *field, int value);
int attn_problem_set_string(attn_problem *problem, const char *field,
                            const char *value);
int attn_problem_set_strings(attn_problem *problem, const char *field,
                             int count, const char *const *values);

/* Checks every field, then computes every result. */
int attn_problem_run(attn_problem *problem);

/* The last error as one line naming the field and the expected shape, e.g.
 * "k: expected a matrix with 2 columns (d_k, the columns of q), got 3x3";
 * "" when there is none. Valid until the next call on this problem. */
const char *attn_problem_error(const attn_problem *problem);

/* A result by name ("weights", "heads.1.scores", ...) after a successful
 * run: its rank, dimensions and data, owned by the problem. */
int attn_problem_result(const attn_problem *problem, const char *name,
                        int *rank, int dims[3], const double **data);

/* The name of result number `index` (0, 1, ... in the order of the JSON
 * result) after a successful run, or NULL past the last or before a run:
 * with attn_problem_result, a binding reads every result where the problem
 * holds it, without formatting. A per-head result is named without its
 * "heads.<h>." and sets *heads (may be NULL) to numHeads; others set 0. */
const char *attn_problem_result_name(const attn_problem *problem, int index,
                                     int *heads);

typedef enum attn_format {
    ATTN_FORMAT_JSON = 0,        /* the result object, JS API field names */
    ATTN_FORMAT_TEXT = 1,        /* a step-by-step walkthrough for a terminal */
    ATTN_FORMAT_MARKDOWN = 2,    /* the same walkthrough as Markdown tables */
    ATTN_FORMAT_LATEX = 3,       /* the same as a LaTeX fragment (amsmath) */
    ATTN_FORMAT_STEPS = 4,       /* the same walkthrough as data: JSON steps
                                    (docs/steps-json.md) */
    ATTN_FORMAT_STEP_OUTLINE = 5 /* the steps JSON without the steps'
                                 equations: a step that has some says how
                                 many ("equationCount"); each step's are
                                 attn_problem_format_equations' */
} attn_format;

/* The name format number `format` goes by where a user names one ("json",
 * "text", "markdown", "latex", "steps"), or NULL for the step outline (a
 * page's, not a user's) and past the last: build/attn's --format and the
 * JS and Python format() take these names. */
const char *attn_format_name(int format);

/* Writes the result of a successful run into buf as NUL-terminated text,
 * truncated to cap bytes, and sets *length to the full length without the
 * NUL (as snprintf does): call once with cap 0 to size the buffer.
 * Every walkthrough format (text, Markdown, LaTeX, steps) is rendered from
 * one list of steps, so step n says the same in each. Walkthroughs need
 * working memory from the problem's allocator (ATTN_ERR_NOMEM without). */
int attn_problem_format(const attn_problem *problem, int format, char *buf,
                        size_t cap, size_t *length);

/* Where attn_problem_format_to writes: count bytes at a time, in order. */
typedef void (*attn_write)(void *context, const char *bytes, size_t count);

/* The same text as attn_problem_format, handed to write in pieces (of up
 * to 64 KiB, from a buffer taken from the problem's allocator) as it is
 * made: one pass, memory bounded whatever the result's length. A status
 * other than ATTN_OK may come after some pieces were written. */
int attn_problem_format_to(const attn_problem *problem, int format,
                           attn_write write, void *context);

/* Step `step`'s equations (steps counted from 1, as "number" counts them)
 * as JSON: the bytes of that step's "equations" array in the steps JSON
 * (ATTN_FORMAT_STEPS), "[]" for a step without equations. With the
 * outline, a page writes the equations of only the steps it shows. buf,
 * cap and length as for attn_problem_format; ATTN_ERR_RANGE for a step the
 * walkthrough does not have. */
int attn_problem_format_equations(const attn_problem *problem, int step,
                                  char *buf, size_t cap, size_t *length);

/* ---- Checking printed numbers: which are wrong, and why ----
 *
 * A check compares the numbers someone printed for a problem's results (a
 * tutorial, a slide, a hand computation) with the exact ones, and explains
 * each that differs. A printed number p written with D decimals is an
 * erratum when the exact value e does not round to it:
 * |p - e| > 0.5·10^-D + 1e-12. The errata are grouped by cause:
 *   "misprint"  a number that is simply wrong; the later printed numbers
 *               that follow from it by the right arithmetic (the
 *               walkthrough's own equations on the printed numbers) are
 *               carried into its group;
 *   "rounding"  the printed intermediates, rounded, give it by the right
 *               arithmetic (or it is off by one unit in its last digit);
 *   a slip      recomputing with the slip gives the printed tables:
 *               "no-scale" (scores not divided by √d_k), "scale-by-dk",
 *               "softmax-columns", "no-transpose" (Q·K), "mask-after-
 *               softmax" (masked weights zeroed without renormalising),
 *               "v-transposed" (weights times Vᵀ).
 * Each group has one sentence a learner can read. The report
 * (docs/check.md, "The causes and the report") is JSON:
 *   {"checked": n, "errata": [{"field", "index": [..], "printed", "exact",
 *    "decimals", "step", "group"}], "groups": [{"cause", "root": {"field",
 *    "index"} | null, "carried"?, "intermediates"?, "explanation"}],
 *    "unchecked": [keys], "decimalsInferred": {key: decimals}}
 * with indices from 0 (step: the walkthrough's step, from 0, or null), or
 * text, Markdown or LaTeX, where they count from 1. */
typedef struct attn_check attn_check;

/* A check of a problem's results; it reads them and allocates through the
 * problem's allocator, so the problem must outlive it. It reads one run:
 * the first printed key is matched to the results the problem has then
 * (attn_problem_run must have succeeded), and once the problem runs again
 * or a setter clears its results, every call on the check but destroy
 * fails with ATTN_ERR_STATE and a message: create a new check. */
int attn_check_create(attn_check **check, const attn_problem *problem);
void attn_check_destroy(attn_check *check); /* NULL is fine */

/* Numbers printed for `key`: a result's name ("weights", "heads.0.scores"),
 * one row of it ("output_row2", rows from 0), or "weightsPercent" (the
 * weights × 100), "exp" and "sum" (e^scaled and its row sums, as a hand
 * computation writes them, without subtracting the row's largest, where the
 * problem has no result of that name), "terms" (weights[i][j] × v[j][c], the
 * products an output row adds up). values [count] in row-major order,
 * shaped like the result (leading dimensions of 1 are ignored); NaN where
 * nothing is printed, -INFINITY for a masked −∞. decimals [count]: the
 * decimals each was written with, or NULL (or -1 in an entry) for the most
 * that any number of the table without them shows in its shortest form (a
 * double has lost 0.410's last zero but never gained a digit: with 0.285
 * beside it, 0.41 is read as 0.410), named in the report as inferred. A key
 * that names nothing of this problem is listed as unchecked, not refused,
 * unless it is a slip of the keyboard from a result's name (the same letters in
 * another case, or within two edits of a name of five letters or more):
 * that fails with ATTN_ERR_INPUT and a message naming the result. */
int attn_check_set_printed(attn_check *check, const char *key, int rank,
                           const int *dims, const double *values,
                           const int *decimals);

/* A printed key whose value is text (a note beside the numbers, as a
 * tutorial's "notes"): ATTN_OK, and nothing is checked, unless the key
 * names a result, whose numbers were meant ("weights": "0.99 0.01"):
 * that fails with ATTN_ERR_INPUT and a message saying so, so that a table
 * written as a string never passes as checked. */
int attn_check_set_note(attn_check *check, const char *key);

/* Compares and explains; *errata (may be NULL) = how many differ. */
int attn_check_run(attn_check *check, int *errata);

/* How many printed numbers the last successful run compared: 0 before a
 * run, or when no printed key names a result (then "every printed number
 * holds" says nothing, and the CLI refuses it). */
size_t attn_check_checked(const attn_check *check);

/* The last error as one line naming the printed key; "" when none. */
const char *attn_check_error(const attn_check *check);

/* The report of a successful run: format ATTN_FORMAT_JSON, _TEXT,
 * _MARKDOWN or _LATEX; buf, cap and length as for attn_problem_format. */
int attn_check_format(attn_check *check, int format, char *buf, size_t cap,
                      size_t *length);

/* A learner's answer for one cell of a result (an exercise: "weights",
 * "heads.0.scores"; a matrix, or a batch of one; row and col from 0),
 * graded by the check's rule, as that one number printed alone: `typed` as
 * the learner typed it ("0.41", "-1,25", "−∞") is right when the exact
 * value rounds to it at the decimals typed, graded at no fewer than 2 (a
 * typed "2" is right for 2.0, not for 2.3). A wrong one gets the check's
 * cause (a slip's name, "rounding", or "misprint" when nothing explains it)
 * said to the learner, with a hint; text that is not a number is not an
 * error but an answer asking for one ("readable": false). JSON, into buf
 * as for attn_problem_format (the check's printed keys are not used):
 *   {"result", "row", "col", "typed", "readable", "decimals", "right",
 *    "value", "exact", "rounded", "cause", "step", "verdict", "hint"}
 * value: the number read (null if none); exact (null for ±∞) and rounded
 * (the exact value to the decimals graded); cause null when right; step:
 * the walkthrough's step that computes the cell, from 0. A result, cell or
 * typed text of 64 bytes or more that names nothing fails with
 * ATTN_ERR_INPUT or ATTN_ERR_RANGE and a message (attn_check_error). */
int attn_check_answer(attn_check *check, const char *result, int row, int col,
                      const char *typed, char *buf, size_t cap, size_t *length);

/* ---- Training: a tiny transformer that learns a task ----
 *
 * Token embedding plus learned positions, 1 or 2 layers, an unembedding to
 * logits, cross-entropy over the positions a task counts, Adam (β 0.9,
 * 0.999) with the gradients clipped to a global norm of 1. A layer is the
 * engine's attn_transformer_block (post-norm) when dFF > 0, else
 * attn_multihead in a residual connection (x + MHA(x)), so the attention
 * trained is the one the walkthroughs show. The same seed gives the same
 * run, bit for bit, in one build.
 *
 * Tasks (each position predicts a token; the task says which count):
 *   "copy"          its own token
 *   "reverse"       token T - 1 - i (the anti-diagonal)
 *   "sort"          the i-th smallest token
 *   "previousToken" token i - 1 (causal)
 *   "induction"     T/2 distinct tokens twice; the next token, from the
 *                   last of the first copy on (causal; the induction head)
 *   "lookup"        key, value pairs then a key; its value, at the end
 * Settings (attn_trainer_set, names as in the JS API; each task has its
 * own defaults, docs/cli.md "Training a tiny transformer"): seed, layers (1-2),
 * heads (1-4, divides dModel), dModel (4-64), dFF (0-256; 0 = attention
 * and residual only), seqLength (2-32), vocab (2-64), batchSize (1-512),
 * learningRate, scale (1: scores × 1/√d_head, 0: none), causal (0/1),
 * steps (the task's documented step budget). The model is built, and the
 * settings fixed, by the first step, evaluation, example or prediction.
 * The held-out set, ATTN_TRAINER_HELD_OUT examples, depends on the task and
 * its sizes only, not on the seed.
 */
#define ATTN_TRAINER_HELD_OUT 256

typedef struct attn_trainer attn_trainer;

/* task as above (ATTN_ERR_OPTION if unknown); allocator NULL = malloc and
 * free (ATTN_ERR_NULL if it lacks allocate or release). */
int attn_trainer_create(attn_trainer **trainer, const char *task,
                        const attn_allocator *allocator);
/* The name of task number `index` (in the order listed above), or NULL
 * past the last; attn_trainer_setting likewise for the settings. */
const char *attn_trainer_task(int index);
const char *attn_trainer_setting(int index);
void attn_trainer_destroy(attn_trainer *trainer); /* NULL is fine */
int attn_trainer_set(attn_trainer *trainer, const char *setting, double value);
/* Limits the bytes the trainer holds: itself and, once built, its model,
 * gradients, Adam's moments, batches, held-out set and working memory.
 * Building a model above the limit fails with ATTN_ERR_TOO_LARGE and a
 * message giving both numbers, having allocated nothing. A trainer starts
 * with no limit (the largest settings need about 400 MB); 0 removes it.
 * Fixed once the model is built (ATTN_ERR_STATE). */
int attn_trainer_set_max_bytes(attn_trainer *trainer, size_t max_bytes);
/* A setting, or "step": the steps taken. */
int attn_trainer_get(const attn_trainer *trainer, const char *setting,
                     double *value);
/* The last error as one line naming the setting; "" when there is none. */
const char *attn_trainer_error(const attn_trainer *trainer);

/* count Adam steps, each on a fresh seeded batch; *loss is the last
 * batch's mean cross-entropy. */
int attn_trainer_step(attn_trainer *trainer, int count, double *loss);
/* Mean loss and token accuracy over the held-out set's counted positions. */
int attn_trainer_evaluate(attn_trainer *trainer, double *loss,
                          double *accuracy);
/* Held-out example `example` (0 to ATTN_TRAINER_HELD_OUT - 1): its tokens,
 * the targets and which positions count (1) or not (0), each [seqLength]. */
int attn_trainer_example(attn_trainer *trainer, int *tokens, int *targets,
                         int *counted, int example);
/* What head `head` of layer `layer` attends with on tokens [length]: its
 * queries, keys and values, each [length, dModel / heads], i.e. the
 * columns of that head of x W + b, x being the layer's input (so that
 * scaled dot-product attention on them gives that head's weights). */
int attn_trainer_head(attn_trainer *trainer,
                      double *q,         /* [length, dModel / heads] */
                      double *k,         /* [length, dModel / heads] */
                      double *v,         /* [length, dModel / heads] */
                      const int *tokens, /* [length] */
                      int length, int layer, int head);
/* The model's most likely token at each position of tokens [length]
 * (1 ≤ length ≤ seqLength, each in 0..vocab-1), and every head's
 * attention weights [layers, heads, length, length] (NULL: not wanted). */
int attn_trainer_predict(attn_trainer *trainer, int *predicted, /* [length] */
                         double *weights,                       /* or NULL */
                         const int *tokens,                     /* [length] */
                         int length);

/* ---- Training a byte-level Llama decoder ----
 *
 * A decoder of attn_decoder_config's sizes trained from seeded weights on
 * windows of a text, its bytes the tokens (a byte's id is its value; no
 * beginning-of-text token), through the Llama pieces' kernels and their
 * gradients in float64: the mean cross-entropy of predicting each next
 * byte, its gradient scaled to a norm of at most 1, Adam (β₁ 0.9, β₂
 * 0.95, ε 1e-8) at a rate falling along a cosine from learning_rate to a
 * tenth of it over `steps` steps. The same settings and calls give the
 * same bits. The trainer allocates once, at create, through its allocator.
 */
typedef struct attn_lm_settings {
    attn_decoder_config config; /* vocab_size above every byte of the text */
    int seq_length;             /* tokens per window, at most
                                   max_position_embeddings */
    int batch_size;             /* windows per step */
    int steps;                  /* the schedule's length */
    double learning_rate;       /* finite, > 0 */
    uint64_t seed;              /* the initial weights, the windows drawn */
} attn_lm_settings;

typedef struct attn_lm_trainer attn_lm_trainer;

/* ATTN_OK, or the config's status, ATTN_ERR_SIZE for a length, batch or
 * step count not positive, ATTN_ERR_POSITION for windows longer than the
 * positions, ATTN_ERR_RANGE for the rate, ATTN_ERR_NOMEM. */
int attn_lm_trainer_create(attn_lm_trainer **trainer,
                           const attn_lm_settings *settings,
                           const attn_allocator *allocator); /* or NULL */
void attn_lm_trainer_destroy(attn_lm_trainer *trainer);      /* NULL is fine */

/* One step on batch_size windows of seq_length + 1 bytes at starts drawn
 * uniformly from text [length] (more than seq_length bytes, else
 * ATTN_ERR_SIZE); *loss = their mean cross-entropy before the step. */
int attn_lm_trainer_step(attn_lm_trainer *trainer, double *loss,
                         const unsigned char *text, size_t length);

/* *loss = the mean cross-entropy of predicting every byte after the
 * first of text's consecutive windows of seq_length + 1 bytes (each
 * starting where the last one's inputs ended), in nats per byte. */
int attn_lm_trainer_loss(attn_lm_trainer *trainer, double *loss,
                         const unsigned char *text, size_t length);

/* The trainer's forward pass: logits [n, vocab_size] of tokens [n], n at
 * most seq_length. */
int attn_lm_trainer_logits(attn_lm_trainer *trainer, double *logits,
                           const int *tokens, int n);

/* Writes the model as config.json (attn_decoder_config_write) and
 * model.safetensors in Hugging Face's LlamaForCausalLM names, F32
 * (attn_safetensors_write), each measured when its buffer is too small
 * (ATTN_ERR_TOO_LARGE). The trainer's weights are first rounded to float32,
 * those of the file, so that the trainer's logits and those of the
 * checkpoint loaded by attn_model_load are the same. */
int attn_lm_trainer_write(attn_lm_trainer *trainer,
                          char *config_json, /* [json_cap] or NULL */
                          size_t json_cap, size_t *json_length,
                          unsigned char *safetensors, /* [cap] or NULL */
                          size_t cap, size_t *size);

/* ---- A language model: a Llama-architecture checkpoint, run exactly ----
 *
 * A model object holds a checkpoint's weights as doubles (config.json and
 * model.safetensors, read as attn_decoder_config_parse and
 * attn_safetensors_* read them; F32, F16 and BF16 weights) and runs them
 * through attn_decoder_forward. It allocates through its allocator, and
 * before each allocation adds up, with overflow checks, what it would then
 * hold: above its limit the call fails with ATTN_ERR_TOO_LARGE and a
 * message giving both numbers, having allocated nothing. A token is an id
 * from 0 to vocab_size − 1; a byte-level model's token for a byte is the
 * byte's value, and nothing (no beginning-of-text token) is added.
 */
#define ATTN_MODEL_DEFAULT_MAX_BYTES ((size_t)256 * 1024 * 1024)

typedef struct attn_model attn_model;

/* allocator NULL = malloc and free (ATTN_ERR_NULL if it lacks allocate or
 * release). The model starts empty, with the default limit. */
int attn_model_create(attn_model **model, const attn_allocator *allocator);
void attn_model_destroy(attn_model *model); /* NULL is fine */
/* The most bytes the model may hold at once: the model, its weights and,
 * while loading or running, the file read, the key/value cache and work
 * memory; 0 restores ATTN_MODEL_DEFAULT_MAX_BYTES. */
int attn_model_set_max_bytes(attn_model *model, size_t max_bytes);
/* The last error as one line; "" when there is none. */
const char *attn_model_error(const attn_model *model);

/* Loads a checkpoint from its files' bytes (the caller's; the weights are
 * copied). Every tensor the config implies must be in the file with the
 * shape Hugging Face's LlamaForCausalLM gives it (model.embed_tokens.weight,
 * model.layers.N.self_attn.q_proj.weight, ..., model.norm.weight, and
 * lm_head.weight unless tie_word_embeddings), else ATTN_ERR_FORMAT and a
 * message naming it. A model loads once (ATTN_ERR_STATE after). */
int attn_model_load(attn_model *model, const char *config_json, /* [length] */
                    size_t config_length,
                    const unsigned char *safetensors, /* [size] */
                    size_t safetensors_size);
/* The same from a folder holding config.json and model.safetensors: the
 * files' sizes are checked against the limit before they are read.
 * ATTN_ERR_INPUT and a message naming the file when one cannot be read. */
int attn_model_load_folder(attn_model *model, const char *folder);
/* The loaded model's config (NULL before a load). */
const attn_decoder_config *attn_model_config(const attn_model *model);

/* Runs tokens [n] (1 ≤ n ≤ max_position_embeddings, each a token id) from
 * an empty cache: every layer's and head's attention weights [layers,
 * heads, n, n] (a row's entries after its query are 0) and the logits
 * [n, vocab_size]. Either output may be NULL. */
int attn_model_run(attn_model *model, double *weights, double *logits,
                   const int *tokens, int n);

/* What head `head` of layer `layer` attends with on tokens [n]: its
 * queries and keys after the rotary embedding, and its values (those of
 * the key/value head it reads), each [n, head_dim]. Scaled dot-product
 * attention on them with a causal mask gives that head's weights in
 * attn_model_run: its walkthrough on the text. ATTN_ERR_RANGE for a layer
 * or head the model does not have. */
int attn_model_head(attn_model *model, double *q, /* [n, head_dim] */
                    double *k,                    /* [n, head_dim] */
                    double *v,                    /* [n, head_dim] */
                    const int *tokens,            /* [n] */
                    int n, int layer, int head);

/* The walkthrough of head `head` of layer `layer` on tokens [n], as a
 * problem: scaled dot-product attention with a causal mask on that head's
 * q, k and v (attn_model_head), its tokens labelled by attn_token_label,
 * titled "Layer L, head H of the model", already run: format it with
 * attn_problem_format, then attn_problem_destroy it. It allocates through
 * the model's allocator, within the model's limit. On failure *problem is
 * NULL and attn_model_error says why. */
int attn_model_head_problem(attn_model *model, attn_problem **problem,
                            const int *tokens, /* [n] */
                            int n, int layer, int head);

/* Generates `count` tokens after prompt [n] (n ≥ 1, n + count at most
 * max_position_embeddings) and writes ids [n + count]: the prompt, then
 * the new tokens. temperature 0 is greedy: the highest logit, ties to the
 * lowest id. temperature T > 0 samples from softmax(logits / T): each
 * token takes one draw of splitmix64 seeded with `seed`, u = (draw >> 11)
 * · 2^−53, and the first id whose running sum of e^((z − max z) / T)
 * exceeds u times their total. With use_cache 1 the prompt runs once and
 * each new token alone against the key/value cache; with 0 the whole text
 * is run again for each token. Both give the same ids (the decoder's
 * logits have the same bits either way). */
int attn_model_generate(attn_model *model, int *ids, /* [n + count] */
                        const int *prompt,           /* [n] */
                        int n, int count, double temperature, uint64_t seed,
                        int use_cache);

/* ---- Limits ----
 *
 * A problem holds its tensor fields (copied by the setters), its results
 * and, during a run, the kernels' scratch space. Before it allocates any of
 * them it adds up, in bytes and with overflow checks, what it would then
 * hold; above its limit the setter or the run fails with ATTN_ERR_TOO_LARGE
 * and a message giving both numbers, having allocated nothing for that
 * value. Labels, masks of bytes and the text attn_problem_format writes are
 * not counted. The limit starts at ATTN_PROBLEM_DEFAULT_MAX_BYTES (256 MiB).
 */
#define ATTN_PROBLEM_DEFAULT_MAX_BYTES ((size_t)256 * 1024 * 1024)

/* Sets the problem's limit; 0 restores the default. Values already set stay
 * set even when they exceed a lowered limit: the next setter or run says. */
int attn_problem_set_max_bytes(attn_problem *problem, size_t max_bytes);

/* ---- The walkthrough as part of a document ----
 *
 * How a walkthrough (text, Markdown, LaTeX, steps) fits into the document it
 * is pasted into: `title` replaces its own title ("Scaled dot-product
 * attention"; NULL or "" keeps it), at most ATTN_TITLE_MAX bytes and no
 * control characters; `heading_level` (1 to 4, 0 for the default 1) is the
 * level of that title, and every heading under it moves down with it:
 * Markdown's "#" count, LaTeX's \subsection*, \subsubsection*, \paragraph
 * and \subparagraph. Results stay as they are. */
#define ATTN_TITLE_MAX 200
int attn_problem_set_document(attn_problem *problem, const char *title,
                              int heading_level);

#ifdef __cplusplus
}
#endif

#endif /* ATTENTION_H */
