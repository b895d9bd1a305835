/* gqa.c: causal grouped-query attention (num_key_value_heads key/value
 * heads, each read by a group of query heads) and its gradient. A query
 * reads only the keys up to its position, so its row is computed the same
 * way whatever came after it: the key/value cache's exactness rests on it. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

static int check_args(const double *q, const double *k, const double *v,
                      int n_q, int n_k, int num_heads, int num_kv_heads,
                      int head_dim)
{
    const int sizes[] = {n_q, n_k, num_heads, num_kv_heads, head_dim};
    int status = attn__check_sizes(sizes, 5);
    if (status != ATTN_OK) return status;
    if (num_heads % num_kv_heads != 0) return ATTN_ERR_KV_HEADS;
    if (n_q > n_k) return ATTN_ERR_RANGE;
    const int counts[][3] = {{n_q, num_heads, head_dim},
                             {n_k, num_kv_heads, head_dim},
                             {num_heads, n_q, n_k},
                             {n_k, 2, 1}};
    status = attn__check_counts(counts, 4);
    if (status != ATTN_OK) return status;
    const size_t q_count = (size_t)n_q * (size_t)num_heads * (size_t)head_dim;
    const size_t kv_count = (size_t)n_k * (size_t)num_kv_heads *
                            (size_t)head_dim;
    return attn__all_finite(q, q_count) && attn__all_finite(k, kv_count) &&
                   attn__all_finite(v, kv_count)
               ? ATTN_OK
               : ATTN_ERR_NOT_FINITE;
}

size_t attn_gqa_work_size(int n_k)
{
    return n_k > 0 ? (size_t)n_k : 0;
}

size_t attn_gqa_backward_work_size(int n_k)
{
    return n_k > 0 && (size_t)n_k <= SIZE_MAX / 2 ? 2 * (size_t)n_k : 0;
}

/* Where one (query, head) pair reads: its query, its key/value head's
 * columns, and how many keys it sees. */
typedef struct pair {
    const double *q, *k, *v; /* q [head_dim]; k, v rows kv_stride apart */
    size_t kv_stride;
    int keys; /* keys 0 .. keys − 1 */
    int head_dim;
    double scale;
} pair;

static pair pair_at(const double *q, const double *k, const double *v, int i,
                    int h, int n_q, int n_k, int num_heads, int num_kv_heads,
                    int head_dim)
{
    const int group = num_heads / num_kv_heads;
    const size_t d = (size_t)head_dim;
    pair p;
    p.q = q + ((size_t)i * (size_t)num_heads + (size_t)h) * d;
    p.k = k + (size_t)(h / group) * d;
    p.v = v + (size_t)(h / group) * d;
    p.kv_stride = (size_t)num_kv_heads * d;
    p.keys = n_k - n_q + i + 1;
    p.head_dim = head_dim;
    p.scale = 1.0 / sqrt((double)head_dim);
    return p;
}

/* row [keys] = softmax(q · k_j × scale) over the pair's keys. */
static int pair_weights(double *row, const pair *p)
{
    for (int j = 0; j < p->keys; j++) {
        row[j] = attn__dot(p->q, p->k + (size_t)j * p->kv_stride, p->head_dim) *
                 p->scale;
        if (!isfinite(row[j])) return ATTN_ERR_OVERFLOW_VALUE;
    }
    attn__softmax_row(row, p->keys);
    return ATTN_OK;
}

int attn_gqa(double *weights, double *output, const double *q, const double *k,
             const double *v, int n_q, int n_k, int num_heads, int num_kv_heads,
             int head_dim, double *work)
{
    if (q == NULL || k == NULL || v == NULL || work == NULL)
        return ATTN_ERR_NULL;
    int status = check_args(q, k, v, n_q, n_k, num_heads, num_kv_heads,
                            head_dim);
    if (status != ATTN_OK) return status;
    for (int h = 0; h < num_heads; h++)
        for (int i = 0; i < n_q; i++) {
            const pair p = pair_at(q, k, v, i, h, n_q, n_k, num_heads,
                                   num_kv_heads, head_dim);
            double *row = weights != NULL ? weights + ((size_t)h * (size_t)n_q +
                                                       (size_t)i) *
                                                          (size_t)n_k
                                          : work;
            status = pair_weights(row, &p);
            if (status != ATTN_OK) return status;
            for (int j = p.keys; j < n_k; j++) row[j] = 0.0;
            if (output == NULL) continue;
            double *out = output + ((size_t)i * (size_t)num_heads + (size_t)h) *
                                       (size_t)head_dim;
            status = attn__weighted_row(out, row, p.v, p.kv_stride, p.keys,
                                        head_dim);
            if (status != ATTN_OK) return status;
        }
    return ATTN_OK;
}

/* Adds one pair's gradients: dV_j += w_j dO, dw_j = dO · v_j, ds = w ∘ (dw
 * − Σ dw ∘ w), dq = scale Σ ds_j k_j, dK_j += scale ds_j q. */
static void pair_backward(double *grad_q, double *grad_k, double *grad_v,
                          const double *d_out, const pair *p, double *w,
                          double *dw)
{
    const size_t stride = p->kv_stride;
    const int d = p->head_dim;
    double sum = 0.0;
    for (int j = 0; j < p->keys; j++) {
        const double *v_row = p->v + (size_t)j * stride;
        dw[j] = attn__dot(d_out, v_row, d);
        sum += dw[j] * w[j];
        if (grad_v != NULL)
            for (int c = 0; c < d; c++)
                grad_v[(size_t)j * stride + (size_t)c] += w[j] * d_out[c];
    }
    for (int j = 0; j < p->keys; j++) {
        const double ds = w[j] * (dw[j] - sum) * p->scale;
        const double *k_row = p->k + (size_t)j * stride;
        if (grad_q != NULL)
            for (int c = 0; c < d; c++) grad_q[c] += ds * k_row[c];
        if (grad_k != NULL)
            for (int c = 0; c < d; c++)
                grad_k[(size_t)j * stride + (size_t)c] += ds * p->q[c];
    }
}

int attn_gqa_backward(double *grad_q, double *grad_k, double *grad_v,
                      const double *d_output, const double *q, const double *k,
                      const double *v, int n_q, int n_k, int num_heads,
                      int num_kv_heads, int head_dim, double *work)
{
    if (d_output == NULL || q == NULL || k == NULL || v == NULL || work == NULL)
        return ATTN_ERR_NULL;
    int status = check_args(q, k, v, n_q, n_k, num_heads, num_kv_heads,
                            head_dim);
    if (status != ATTN_OK) return status;
    const size_t d = (size_t)head_dim;
    const size_t q_count = (size_t)n_q * (size_t)num_heads * d;
    const size_t kv_count = (size_t)n_k * (size_t)num_kv_heads * d;
    if (!attn__all_finite(d_output, q_count)) return ATTN_ERR_NOT_FINITE;
    if (grad_q != NULL) attn__zero(grad_q, q_count);
    if (grad_k != NULL) attn__zero(grad_k, kv_count);
    if (grad_v != NULL) attn__zero(grad_v, kv_count);
    double *w = work, *dw = work + n_k;
    for (int h = 0; h < num_heads; h++) {
        const size_t kv_col = (size_t)(h / (num_heads / num_kv_heads)) * d;
        for (int i = 0; i < n_q; i++) {
            const pair p = pair_at(q, k, v, i, h, n_q, n_k, num_heads,
                                   num_kv_heads, head_dim);
            status = pair_weights(w, &p);
            if (status != ATTN_OK) return status;
            const size_t at = ((size_t)i * (size_t)num_heads + (size_t)h) * d;
            pair_backward(grad_q != NULL ? grad_q + at : NULL,
                          grad_k != NULL ? grad_k + kv_col : NULL,
                          grad_v != NULL ? grad_v + kv_col : NULL,
                          d_output + at, &p, w, dw);
        }
    }
    return attn__all_finite(grad_q, q_count) &&
                   attn__all_finite(grad_k, kv_count) &&
                   attn__all_finite(grad_v, kv_count)
               ? ATTN_OK
               : ATTN_ERR_OVERFLOW_VALUE;
}
