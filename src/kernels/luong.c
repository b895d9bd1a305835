/* luong.c: Luong (multiplicative) attention: dot, general and concat. */
#include "attention.h"
#include "kernels/kernels.h"

/* Work in doubles: dot needs one score row [n_k]; general also keeps
 * keys @ W [n_k, d_s]; concat is additive attention with W split into
 * its query rows and its key rows. */
size_t attn_luong_work_size(int method, int n_k, int d_s, int d_a)
{
    size_t cells;
    switch (method) {
    case ATTN_LUONG_DOT: return n_k > 0 ? (size_t)n_k : 0;
    case ATTN_LUONG_GENERAL:
        if (n_k <= 0 || d_s <= 0 ||
            attn__mul_size(&cells, (size_t)n_k, (size_t)d_s + 1) != ATTN_OK)
            return 0;
        return cells;
    case ATTN_LUONG_CONCAT: return attn_additive_work_size(n_k, d_s, d_a);
    default: return 0;
    }
}

static int check_arguments(const double *w, const double *v, int method,
                           int n_q, int n_k, int d_s, int d_h, int d_a)
{
    if (method != ATTN_LUONG_DOT && method != ATTN_LUONG_GENERAL &&
        method != ATTN_LUONG_CONCAT)
        return ATTN_ERR_OPTION;
    if ((method != ATTN_LUONG_DOT && w == NULL) ||
        (method == ATTN_LUONG_CONCAT && v == NULL))
        return ATTN_ERR_NULL;
    const int concat = method == ATTN_LUONG_CONCAT;
    const int sizes[] = {n_q, n_k, d_s, d_h, concat ? d_a : 1};
    int status = attn__check_sizes(sizes, 5);
    if (status != ATTN_OK) return status;
    if (method == ATTN_LUONG_DOT && d_s != d_h) return ATTN_ERR_SIZE;
    const int counts[][3] = {{n_q, d_s, 1},        {n_k, d_h, 1},
                             {n_q, d_h, 1},        {n_k, d_s, 1},
                             {n_q, n_k, sizes[4]}, {d_h, d_s, 1}};
    status = attn__check_counts(counts, 6);
    if (status != ATTN_OK) return status;
    size_t concat_weights; /* W [d_s + d_h, d_a]; the sum fits in size_t */
    if (concat) {
        status = attn__mul_size(&concat_weights, (size_t)d_s + (size_t)d_h,
                                (size_t)d_a);
        if (status != ATTN_OK) return status;
    }
    if (attn_luong_work_size(method, n_k, d_s, d_a) == 0)
        return ATTN_ERR_SIZE_OVERFLOW;
    return ATTN_OK;
}

static size_t weight_count(int method, int d_s, int d_h, int d_a)
{
    if (method == ATTN_LUONG_GENERAL) return (size_t)d_h * (size_t)d_s;
    if (method == ATTN_LUONG_CONCAT)
        return ((size_t)d_s + (size_t)d_h) * (size_t)d_a;
    return 0;
}

/* Dot and general: score_j = s · key_j, where key_j is h_j (dot) or
 * h_j @ W (general, precomputed once for all queries). */
static int run_bilinear(double *scores, double *weights, double *context,
                        const double *query, const double *keys,
                        const double *w, int method, int n_q, int n_k, int d_s,
                        int d_h, double *work)
{
    const double *compared = keys; /* [n_k, d_s] */
    double *row = work;            /* [n_k] */
    if (method == ATTN_LUONG_GENERAL) {
        int status = attn__affine(work, keys, w, NULL, n_k, d_h, d_s);
        if (status != ATTN_OK) return status;
        compared = work;
        row = work + (size_t)n_k * (size_t)d_s;
    }
    for (int i = 0; i < n_q; i++) {
        const double *s = query + (size_t)i * (size_t)d_s;
        for (int j = 0; j < n_k; j++)
            row[j] = attn__dot(s, compared + (size_t)j * (size_t)d_s, d_s);
        const size_t cell = (size_t)i * (size_t)n_k; /* row i of [n_q, n_k] */
        int status = attn__scores_to_context(
            scores ? scores + cell : NULL, weights ? weights + cell : NULL,
            context ? context + (size_t)i * (size_t)d_h : NULL, row, keys, n_k,
            d_h);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}

int attn_luong(double *energy, double *scores, double *weights, double *context,
               const double *query, const double *keys, const double *w,
               const double *b, const double *v, int method, int n_q, int n_k,
               int d_s, int d_h, int d_a, double *work)
{
    if (query == NULL || keys == NULL || work == NULL) return ATTN_ERR_NULL;
    int status = check_arguments(w, v, method, n_q, n_k, d_s, d_h, d_a);
    if (status != ATTN_OK) return status;
    const int concat = method == ATTN_LUONG_CONCAT;
    if (!attn__all_finite(query, (size_t)n_q * (size_t)d_s) ||
        !attn__all_finite(keys, (size_t)n_k * (size_t)d_h) ||
        !attn__all_finite(w, weight_count(method, d_s, d_h, d_a)) ||
        (concat && (!attn__all_finite(b, (size_t)d_a) ||
                    !attn__all_finite(v, (size_t)d_a))))
        return ATTN_ERR_NOT_FINITE;
    if (!concat)
        return run_bilinear(scores, weights, context, query, keys, w, method,
                            n_q, n_k, d_s, d_h, work);
    /* [s; h] @ W = s @ W[0:d_s] + h @ W[d_s:d_s+d_h]. */
    const attn__additive_args args = {
        .energy = energy,
        .scores = scores,
        .weights = weights,
        .context = context,
        .query = query,
        .keys = keys,
        .w_s = w,
        .w_h = w + (size_t)d_s * (size_t)d_a,
        .b = b,
        .v = v,
        .n_q = n_q,
        .n_k = n_k,
        .d_s = d_s,
        .d_h = d_h,
        .d_a = d_a,
    };
    return attn__additive_run(&args, work);
}

/* ---- Backward ---- */

/* Dot and general: the compared keys [n_k, d_s] (general only: h @ W),
 * their gradient [n_k, d_s] and one score row [n_k]. */
size_t attn_luong_backward_work_size(int method, int n_k, int d_s, int d_a)
{
    size_t cells, length;
    switch (method) {
    case ATTN_LUONG_DOT:
    case ATTN_LUONG_GENERAL:
        if (n_k <= 0 || d_s <= 0 ||
            attn__mul_size(&cells, (size_t)n_k, 2 * (size_t)d_s) != ATTN_OK ||
            attn__add_size(&length, cells, (size_t)n_k) != ATTN_OK)
            return 0;
        return length;
    case ATTN_LUONG_CONCAT:
        return attn_additive_backward_work_size(n_k, d_s, d_a);
    default: return 0;
    }
}

/* score_ij = s_i · c_j with c_j = h_j (dot) or h_j @ W (general). */
static int bilinear_backward(double *grad_query, double *grad_keys,
                             double *grad_w, const double *d_context,
                             const double *query, const double *keys,
                             const double *w, int method, int n_q, int n_k,
                             int d_s, int d_h, double *work)
{
    const size_t kc = (size_t)n_k * (size_t)d_s;
    const double *compared = keys;  /* [n_k, d_s] */
    double *d_compared = work + kc; /* [n_k, d_s] */
    double *row = work + 2 * kc;    /* [n_k] */
    if (method == ATTN_LUONG_GENERAL) {
        int status = attn__affine(work, keys, w, NULL, n_k, d_h, d_s);
        if (status != ATTN_OK) return status;
        compared = work;
    }
    attn__zero(d_compared, kc);
    if (grad_keys != NULL) attn__zero(grad_keys, (size_t)n_k * (size_t)d_h);
    for (int i = 0; i < n_q; i++) {
        const double *s = query + (size_t)i * (size_t)d_s;
        for (int j = 0; j < n_k; j++)
            row[j] = attn__dot(s, compared + (size_t)j * (size_t)d_s, d_s);
        if (!attn__all_finite(row, (size_t)n_k)) return ATTN_ERR_OVERFLOW_VALUE;
        attn__context_backward_row(row, d_context + (size_t)i * (size_t)d_h,
                                   keys, grad_keys, n_k, d_h);
        double *gq = grad_query ? grad_query + (size_t)i * (size_t)d_s : NULL;
        if (gq != NULL) attn__zero(gq, (size_t)d_s);
        for (int j = 0; j < n_k; j++) {
            const double *c = compared + (size_t)j * (size_t)d_s;
            double *dc = d_compared + (size_t)j * (size_t)d_s;
            for (int k = 0; k < d_s; k++) {
                if (gq != NULL) gq[k] += row[j] * c[k];
                dc[k] += row[j] * s[k];
            }
        }
    }
    if (method == ATTN_LUONG_DOT) {
        if (grad_keys != NULL)
            for (size_t x = 0; x < kc; x++) grad_keys[x] += d_compared[x];
        return ATTN_OK;
    }
    /* c = h @ W: dW = hᵀ dc, dh += dc Wᵀ. */
    if (grad_w != NULL) {
        attn__zero(grad_w, (size_t)d_h * (size_t)d_s);
        attn__matmul_tn_add(grad_w, keys, d_compared, n_k, d_h, d_s);
    }
    if (grad_keys != NULL)
        attn__matmul_nt(grad_keys, (size_t)d_h, d_compared, (size_t)d_s, w,
                        (size_t)d_s, n_k, d_h, d_s, 1);
    return ATTN_OK;
}

int attn_luong_backward(double *grad_query, double *grad_keys, double *grad_w,
                        double *grad_b, double *grad_v, const double *d_context,
                        const double *query, const double *keys,
                        const double *w, const double *b, const double *v,
                        int method, int n_q, int n_k, int d_s, int d_h, int d_a,
                        double *work)
{
    if (d_context == NULL || query == NULL || keys == NULL || work == NULL)
        return ATTN_ERR_NULL;
    int status = check_arguments(w, v, method, n_q, n_k, d_s, d_h, d_a);
    if (status != ATTN_OK) return status;
    if (attn_luong_backward_work_size(method, n_k, d_s, d_a) == 0)
        return ATTN_ERR_SIZE_OVERFLOW;
    const int concat = method == ATTN_LUONG_CONCAT;
    if (!attn__all_finite(d_context, (size_t)n_q * (size_t)d_h) ||
        !attn__all_finite(query, (size_t)n_q * (size_t)d_s) ||
        !attn__all_finite(keys, (size_t)n_k * (size_t)d_h) ||
        !attn__all_finite(w, weight_count(method, d_s, d_h, d_a)) ||
        (concat && (!attn__all_finite(b, (size_t)d_a) ||
                    !attn__all_finite(v, (size_t)d_a))))
        return ATTN_ERR_NOT_FINITE;
    if (!concat) {
        status = bilinear_backward(grad_query, grad_keys, grad_w, d_context,
                                   query, keys, w, method, n_q, n_k, d_s, d_h,
                                   work);
    } else {
        /* W = [W_s; W_h] by rows, so its gradient is [dW_s; dW_h]. */
        const attn__additive_args args = {
            .query = query,
            .keys = keys,
            .w_s = w,
            .w_h = w + (size_t)d_s * (size_t)d_a,
            .b = b,
            .v = v,
            .context_grad = d_context,
            .n_q = n_q,
            .n_k = n_k,
            .d_s = d_s,
            .d_h = d_h,
            .d_a = d_a,
        };
        const attn__additive_grads grads = {
            grad_query, grad_keys,
            grad_w,     grad_w ? grad_w + (size_t)d_s * (size_t)d_a : NULL,
            grad_b,     grad_v};
        status = attn__additive_backward_run(&grads, &args, work);
    }
    if (status != ATTN_OK) return status;
    const int finite = attn__all_finite(grad_query,
                                        (size_t)n_q * (size_t)d_s) &&
                       attn__all_finite(grad_keys, (size_t)n_k * (size_t)d_h) &&
                       attn__all_finite(grad_w,
                                        weight_count(method, d_s, d_h, d_a)) &&
                       (!concat || (attn__all_finite(grad_b, (size_t)d_a) &&
                                    attn__all_finite(grad_v, (size_t)d_a)));
    return finite ? ATTN_OK : ATTN_ERR_OVERFLOW_VALUE;
}
