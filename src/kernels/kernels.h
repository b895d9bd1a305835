/*
 * kernels.h: private helpers shared by the numeric core (softmax,
 * masks, SDPA, multi-head, additive, Luong, linear attention).
 *
 * Sizes are products of ints computed in size_t and checked for overflow,
 * so the checks also hold where size_t is 32 bits (wasm32).
 */
#ifndef ATTN_KERNELS_H
#define ATTN_KERNELS_H

#include "attention.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- Sizes ---- */

/* ATTN_ERR_SIZE if any of the `count` sizes is zero or negative. */
static inline int attn__check_sizes(const int *sizes, int count)
{
    for (int i = 0; i < count; i++)
        if (sizes[i] <= 0) return ATTN_ERR_SIZE;
    return ATTN_OK;
}

static inline int attn__mul_size(size_t *product, size_t a, size_t b)
{
    if (a != 0 && b > SIZE_MAX / a) return ATTN_ERR_SIZE_OVERFLOW;
    *product = a * b;
    return ATTN_OK;
}

static inline int attn__add_size(size_t *sum, size_t a, size_t b)
{
    if (b > SIZE_MAX - a) return ATTN_ERR_SIZE_OVERFLOW;
    *sum = a + b;
    return ATTN_OK;
}

/* *count = a * b * c for sizes already known to be positive. */
static inline int attn__count3(size_t *count, int a, int b, int c)
{
    size_t ab;
    if (attn__mul_size(&ab, (size_t)a, (size_t)b) != ATTN_OK)
        return ATTN_ERR_SIZE_OVERFLOW;
    return attn__mul_size(count, ab, (size_t)c);
}

/* ATTN_ERR_SIZE_OVERFLOW unless every product counts[r][0] * counts[r][1]
 * * counts[r][2] of positive sizes fits in size_t: one row per array. */
static inline int attn__check_counts(const int counts[][3], int rows)
{
    for (int r = 0; r < rows; r++) {
        size_t count;
        int status = attn__count3(&count, counts[r][0], counts[r][1],
                                  counts[r][2]);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}

/* The sizes of an attention call: ATTN_ERR_SIZE unless batch, n_q, n_k,
 * d_k and d_v are positive; ATTN_ERR_SIZE_OVERFLOW unless q [batch, n_q,
 * d_k], k [batch, n_k, d_k], v [batch, n_k, d_v], the output [batch, n_q,
 * d_v] and, with `scores` 1, a [batch, n_q, n_k] matrix can be counted. */
static inline int attn__check_attention_sizes(int batch, int n_q, int n_k,
                                              int d_k, int d_v, int scores)
{
    const int sizes[] = {batch, n_q, n_k, d_k, d_v};
    int status = attn__check_sizes(sizes, 5);
    if (status != ATTN_OK) return status;
    const int counts[][3] = {{batch, n_q, d_k},
                             {batch, n_k, d_k},
                             {batch, n_k, d_v},
                             {batch, n_q, d_v},
                             {batch, n_q, n_k}};
    return attn__check_counts(counts, scores ? 5 : 4);
}

/* ---- Values ---- */

/* 1 if every entry is finite; a NULL array (an absent optional input such
 * as a bias) counts as finite. */
static inline int attn__all_finite(const double *x, size_t count)
{
    if (x == NULL) return 1;
    for (size_t i = 0; i < count; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

static inline void attn__copy(double *dst, const double *src, int n)
{
    for (int i = 0; i < n; i++) dst[i] = src[i];
}

static inline double attn__dot(const double *a, const double *b, int n)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += a[i] * b[i];
    return sum;
}

/* out[j] = x · rows[j] for count rows `stride` apart, four at a time (four
 * independent sums, each added in the order of attn__dot: the same bits). */
static inline void attn__dots(double *restrict out, const double *x,
                              const double *rows, size_t stride, int count,
                              int n)
{
    int j = 0;
    for (; j + 4 <= count; j += 4) {
        const double *r0 = rows + (size_t)j * stride, *r1 = r0 + stride;
        const double *r2 = r1 + stride, *r3 = r2 + stride;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (int c = 0; c < n; c++) {
            const double a = x[c];
            s0 += a * r0[c];
            s1 += a * r1[c];
            s2 += a * r2[c];
            s3 += a * r3[c];
        }
        out[j] = s0;
        out[j + 1] = s1;
        out[j + 2] = s2;
        out[j + 3] = s3;
    }
    for (; j < count; j++) out[j] = attn__dot(x, rows + (size_t)j * stride, n);
}

/*
 * out = x @ w + bias, then ATTN_ERR_OVERFLOW_VALUE if any entry overflowed.
 * out [rows, cols], x [rows, in], w [in, cols], bias [cols] or NULL.
 * The k-outer loop walks w row by row, which keeps the access contiguous;
 * four rows at a time load each w[k][c] once for the four. Every entry is
 * summed from 0 in the order of k, then the bias added: the same bits
 * whatever the blocking.
 */
static inline void attn__affine_rows(double *restrict out,
                                     const double *restrict x,
                                     const double *restrict w, int nr, int in,
                                     int cols)
{
    double *o[4];
    const double *xr[4];
    for (int r = 0; r < nr; r++) {
        o[r] = out + (size_t)r * (size_t)cols;
        xr[r] = x + (size_t)r * (size_t)in;
        for (int c = 0; c < cols; c++) o[r][c] = 0.0;
    }
    for (int k = 0; k < in; k++) {
        const double *w_row = w + (size_t)k * (size_t)cols;
        if (nr == 4) {
            const double x0 = xr[0][k], x1 = xr[1][k], x2 = xr[2][k];
            const double x3 = xr[3][k];
            double *o0 = o[0], *o1 = o[1], *o2 = o[2], *o3 = o[3];
            for (int c = 0; c < cols; c++) {
                const double y = w_row[c];
                o0[c] += x0 * y;
                o1[c] += x1 * y;
                o2[c] += x2 * y;
                o3[c] += x3 * y;
            }
        } else {
            for (int r = 0; r < nr; r++)
                for (int c = 0; c < cols; c++) o[r][c] += xr[r][k] * w_row[c];
        }
    }
}

static inline int attn__affine(double *restrict out, const double *restrict x,
                               const double *restrict w, const double *bias,
                               int rows, int in, int cols)
{
    for (int r0 = 0; r0 < rows; r0 += 4) {
        const int nr = rows - r0 < 4 ? rows - r0 : 4;
        attn__affine_rows(out + (size_t)r0 * (size_t)cols,
                          x + (size_t)r0 * (size_t)in, w, nr, in, cols);
        if (bias != NULL)
            for (int r = r0; r < r0 + nr; r++)
                for (int c = 0; c < cols; c++)
                    out[(size_t)r * (size_t)cols + (size_t)c] += bias[c];
    }
    return attn__all_finite(out, (size_t)rows * (size_t)cols)
               ? ATTN_OK
               : ATTN_ERR_OVERFLOW_VALUE;
}

/* ---- Shared steps (defined in the file named) ---- */

/* softmax.c: in-place softmax of one row whose entries are finite or
 * -INFINITY (masked); an all-masked row becomes all 0. */
void attn__softmax_row(double *row, int n);

/* sdpa.c: out [d_v] = Σ_j weights[j] v[j], v rows v_stride apart;
 * ATTN_ERR_OVERFLOW_VALUE if the sum overflowed. */
int attn__weighted_row(double *out, const double *weights, const double *v,
                       size_t v_stride, int n_k, int d_v);

/* options.c: opts, or the defaults written into *storage when opts is NULL. */
const attn_options *attn__options_or_default(const attn_options *opts,
                                             attn_options *storage);

/* options.c: ATTN_ERR_RANGE unless 0 <= probability < 1 (NaN fails). */
int attn__check_dropout(double probability);

/* options.c: one step of splitmix64 (Steele, Lea, Flood 2014): *state
 * advances by the golden-ratio increment and comes back mixed, the same
 * bits on every platform. Dropout's draws, the trainer's data and the
 * tests' random inputs all come from it. */
uint64_t attn__splitmix64(uint64_t *state);

/* ---- SDPA for one (batch item, head), shared with multi-head ---- */

/* Everything the options decide, checked once per call. */
typedef struct attn__sdpa_plan {
    double scale;
    const attn_mask *mask; /* NULL = no mask */
    double dropout;        /* 0 = off */
    uint64_t seed;
} attn__sdpa_plan;

/* Checks opts (scale for d_k, mask for these sizes, dropout) into *plan. */
int attn__sdpa_plan_init(attn__sdpa_plan *plan, const attn_options *opts,
                         int batch, int n_q, int n_k, int d_k);

/* One attention block. Q, K, V may be column blocks of wider matrices,
 * hence the row strides. */
typedef struct attn__sdpa_block {
    const double *q;            /* [n_q, d_k] rows q_stride apart, or NULL when
                                   given_scores is set */
    const double *k;            /* [n_k, d_k] rows k_stride apart */
    const double *v;            /* [n_k, d_v] rows v_stride apart; NULL without
                                   an output */
    const double *given_scores; /* [n_q, n_k] or NULL = q kᵀ */
    size_t q_stride, k_stride, v_stride;
    double *scores;  /* [n_q, n_k] or NULL */
    double *scaled;  /* [n_q, n_k] or NULL */
    double *weights; /* [n_q, n_k] or NULL */
    double *output;  /* [n_q, d_v] rows output_stride apart, or NULL */
    size_t output_stride;
    int mask_b;        /* batch index the mask sees (key_length) */
    int64_t dropout_b; /* leading index dropout hashes */
    int n_q, n_k, d_k, d_v;
} attn__sdpa_block;

/* sdpa.c: scales and masks one row of raw scores in place (masked ->
 * -INFINITY); ATTN_ERR_OVERFLOW_VALUE if a score is not finite. */
int attn__scale_and_mask_row(double *row, const attn__sdpa_plan *plan,
                             int mask_b, int i, int n_k);

/* Runs a block whose inputs were validated; row [n_k] is scratch. */
int attn__sdpa_block_run(const attn__sdpa_block *block,
                         const attn__sdpa_plan *plan, double *row);

/* ---- Additive scoring, shared with Luong concat ---- */

typedef struct attn__additive_args {
    double *energy;             /* [n_q, n_k, d_a] or NULL */
    double *scores;             /* [n_q, n_k] or NULL */
    double *weights;            /* [n_q, n_k] or NULL */
    double *context;            /* [n_q, d_h] or NULL */
    const double *query;        /* [n_q, d_s] */
    const double *keys;         /* [n_k, d_h] */
    const double *w_s;          /* [d_s, d_a] */
    const double *w_h;          /* [d_h, d_a] */
    const double *b;            /* [d_a] or NULL */
    const double *v;            /* [d_a] */
    const double *context_grad; /* [n_q, d_h] dL/d(context), backward only */
    const double *saved_energy; /* [n_q, n_k, d_a] the forward's energy, or
                                   NULL to compute it again; backward only */
    int n_q, n_k, d_s, d_h, d_a;
} attn__additive_args;

/* Gradients of additive scoring; every pointer may be NULL. */
typedef struct attn__additive_grads {
    double *query; /* [n_q, d_s] */
    double *keys;  /* [n_k, d_h] */
    double *w_s;   /* [d_s, d_a] */
    double *w_h;   /* [d_h, d_a] */
    double *b;     /* [d_a] */
    double *v;     /* [d_a] */
} attn__additive_grads;

/* additive_backward.c: overwrites the gradients of validated arguments;
 * work [attn_additive_backward_work_size]. */
int attn__additive_backward_run(const attn__additive_grads *grads,
                                const attn__additive_args *args, double *work);

/* additive_backward.c: from a row of scores [n_k], writes into row
 * dL/d(score) of context = softmax(scores) @ keys given d_context [d_h],
 * and adds the value path weights_j d_context to grad_keys (or NULL). */
void attn__context_backward_row(double *row, const double *d_context,
                                const double *keys, double *grad_keys, int n_k,
                                int d_h);

/* additive.c: the checks of attn_additive and attn_additive_backward, in
 * their order: a missing input (work and, for the backward pass,
 * context_grad are the caller's to check), sizes, work_cells 0 (the
 * caller's work size overflowed), then inputs that are not finite. */
int attn__check_additive(const attn__additive_args *args, size_t work_cells);

/* additive.c: runs validated arguments; work [attn_additive_work_size]. */
int attn__additive_run(const attn__additive_args *args, double *work);

/* additive.c: from a row of scores [n_k] (overwritten by the weights),
 * writes the optional scores, weights and context [d_h] rows. */
int attn__scores_to_context(double *scores_out, double *weights_out,
                            double *context_out, double *row,
                            const double *keys, int n_k, int d_h);

/* ---- Products for the backward passes (defined in matmul.c) ---- */

/* out [rows, cols] = a [rows, n] @ bᵀ, b [cols, n]; accumulate = 1 adds to
 * out instead of overwriting it. Rows of each array are *_stride apart. */
void attn__matmul_nt(double *out, size_t out_stride, const double *a,
                     size_t a_stride, const double *b, size_t b_stride,
                     int rows, int cols, int n, int accumulate);

/* out [n, cols] += aᵀ @ b: a [rows, n], b [rows, cols], all contiguous. */
void attn__matmul_tn_add(double *restrict out, const double *restrict a,
                         const double *restrict b, int rows, int n, int cols);

/* out [cols] += the column sums of a [rows, cols]. */
void attn__colsum_add(double *out, const double *a, int rows, int cols);

/* x [count] = 0. */
void attn__zero(double *x, size_t count);

/* ---- SDPA backward for one (batch item, head), shared with multi-head ---- */

/* Forward inputs q, k, v and the incoming gradient d_output; outputs may
 * be NULL. grad_k and grad_v are overwritten (zeroed, then accumulated
 * over the queries). Rows of each array are *_stride apart. */
typedef struct attn__sdpa_grad_block {
    const double *q, *k, *v; /* [n_q, d_k], [n_k, d_k], [n_k, d_v] */
    const double *d_output;  /* [n_q, d_v] */
    size_t q_stride, k_stride, v_stride, d_output_stride;
    double *grad_q;        /* [n_q, d_k] rows q_stride apart, or NULL */
    double *grad_k;        /* [n_k, d_k] rows k_stride apart, or NULL */
    double *grad_v;        /* [n_k, d_v] rows v_stride apart, or NULL */
    double *grad_weights;  /* [n_q, n_k] or NULL */
    double *grad_scaled;   /* [n_q, n_k] or NULL */
    const double *weights; /* [n_q, n_k] the forward's weights, or NULL:
                              recomputed (as with dropout, whose kept
                              weights are not the softmax's) */
    int mask_b;
    int64_t dropout_b;
    int n_q, n_k, d_k, d_v;
} attn__sdpa_grad_block;

/* sdpa_backward.c: runs a validated block; work [2 * n_k]. */
int attn__sdpa_block_backward(const attn__sdpa_grad_block *block,
                              const attn__sdpa_plan *plan, double *work);

/* ---- The float32 path (sdpa_f32*.c, sdpa_f32_body.h) ---- */

/* The AVX2 + FMA and AVX-512F kernels need gcc's target pragma; run-time
 * dispatch picks the widest the CPU has. */
#if defined(__GNUC__) && !defined(__clang__) && \
    (defined(__x86_64__) || defined(__i386__))
#define ATTN__HAVE_AVX2_KERNEL 1
#endif

/* Query rows per block, keys per tile and query rows that go through the
 * keys together (blocks × rows) of the float32 kernels, at most: each
 * kernel picks its own (sdpa_f32_body.h), and the work array is sized for
 * these. */
#define ATTN__F32_MR 12
#define ATTN__F32_NB 128
#define ATTN__F32_ROWS 32
/* Floats of one tile of scores (or of P) for all the rows that go through
 * the keys together: at least MR · F32_GROUPS · NB of every kernel. */
#define ATTN__F32_TILE 2048

/* One batch item for a float32 kernel, its inputs checked. */
typedef struct attn__f32_job {
    float *weights; /* [n_q, n_k] or NULL */
    float *output;  /* [n_q, d_v] or NULL */
    const float *q; /* [n_q, d_k] */
    const float *k; /* [n_k, d_k] */
    const float *v; /* [n_k, d_v] */
    int n_q, n_k, d_k, d_v;
    float scale;
    const attn_mask *mask; /* NULL = no mask */
    int mask_b;
    double dropout; /* 0 = off */
    uint64_t seed;
    int64_t dropout_b;
    float *work; /* [attn__f32_item_work_size] */
} attn__f32_job;

/* 1 if no entry is NaN or infinite (all exponent bits set): integer
 * operations, which the compiler vectorises, unlike a float reduction. */
static inline int attn__all_finite_f32(const float *x, size_t count)
{
    uint32_t bad = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t bits;
        memcpy(&bits, &x[i], sizeof bits);
        bad |= (bits & 0x7f800000u) == 0x7f800000u;
    }
    return bad == 0;
}

/* Floats of packed K: [ceil(n_k / NB), d_k, NB]; 0 on overflow. */
size_t attn__f32_packed_k_size(int n_k, int d_k);

/* The work array of one batch item, carved up (sdpa_f32_tiles.c); MR, NB
 * and ROWS are ATTN__F32_*, the most any kernel uses. */
typedef struct attn__f32_scratch {
    float *kt;  /* [ceil(n_k / nb), d_k, nb] packed K, nb the kernel's tile */
    float *s;   /* [TILE] a tile of scores, [MR, NB] per block of rows */
    float *acc; /* [ROWS, d_v] output accumulators, MR rows per block */
    float *qt;  /* [ROWS, d_k] blocks of query rows, as [d_k, MR] each */
    float *pt;  /* [TILE] a tile of P, transposed: [NB, MR] per block */
} attn__f32_scratch;

void attn__f32_scratch_init(attn__f32_scratch *scratch,
                            const attn__f32_job *job);

/* Keys lo..hi are the ones query i may see, when the mask is only causal,
 * key padding and local (returns 1); 0 for strided or custom masks, which
 * must be asked entry by entry. */
int attn__f32_row_range(const attn__f32_job *job, int i, int *lo, int *hi);

/* The last key any of queries 0..i may see: for causal, key padding and
 * local masks the range's end, which grows with i; n_k - 1 otherwise. A
 * block of queries computes no score past it. */
int attn__f32_last_key(const attn__f32_job *job, int i);

/* How a mask treats the tile of queries i0..i1 and keys j0..j1. */
enum {
    ATTN__F32_TILE_SKIP = 0,
    ATTN__F32_TILE_FULL = 1,
    ATTN__F32_TILE_PARTIAL = 2
};
int attn__f32_tile_state(const attn__f32_job *job, int i0, int i1, int j0,
                         int j1);

/* The kernels, one per instruction set (sdpa_f32_body.h). */
int attn__f32_item_scalar(const attn__f32_job *job);
int attn__f32_item_avx2(const attn__f32_job *job);   /* x86 with gcc only */
int attn__f32_item_avx512(const attn__f32_job *job); /* x86 with gcc only */
int attn__f32_item_wasm(const attn__f32_job *job);   /* -msimd128 only */

/* Which kernel attn__sdpa_f32_using runs. */
enum {
    ATTN__F32_BEST = 0,
    ATTN__F32_SCALAR = 1,
    ATTN__F32_AVX2 = 2,
    ATTN__F32_AVX512 = 3,
    ATTN__F32_KERNELS = 4
};

/* attn_sdpa_f32 with a chosen kernel: ATTN__F32_BEST picks at run time;
 * the others force one (the tests check each on its own) and give
 * ATTN_ERR_OPTION when this build or CPU lacks it. */
int attn__sdpa_f32_using(int kernel, float *weights, float *output,
                         const float *q, const float *k, const float *v,
                         int batch, int n_q, int n_k, int d_k, int d_v,
                         const attn_options *opts, float *work);

/* ---- The Llama decoder (decoder_config.c, decoder.c) ---- */

/* Arrays [n, hidden_size] in the decoder's work: the residual stream, the
 * normed rows, Q, the heads' outputs and a projection's output. */
#define ATTN__DECODER_ROWS 5

/* decoder_config.c: num_key_value_heads · head_dim of a checked config. */
int attn__decoder_kv_width(const attn_decoder_config *config);

#endif /* ATTN_KERNELS_H */
