/* additive_backward.c: gradients of Bahdanau (additive) attention, shared
 * with Luong's concat score, recomputing the forward pass. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

void attn__context_backward_row(double *row, const double *d_context,
                                const double *keys, double *grad_keys, int n_k,
                                int d_h)
{
    /* row: scores in, weights w, then dL/d(score) out. */
    attn__softmax_row(row, n_k);
    double mean = 0.0;
    for (int j = 0; j < n_k; j++) {
        const double *h = keys + (size_t)j * (size_t)d_h;
        if (grad_keys != NULL) {
            double *g = grad_keys + (size_t)j * (size_t)d_h;
            for (int c = 0; c < d_h; c++) g[c] += row[j] * d_context[c];
        }
        mean += row[j] * attn__dot(d_context, h, d_h);
    }
    for (int j = 0; j < n_k; j++) {
        const double dw = attn__dot(d_context, keys + (size_t)j * (size_t)d_h,
                                    d_h);
        row[j] = row[j] * (dw - mean);
    }
}

/* Work: keys @ W_h [n_k, d_a], the per-key sums of dL/d(pre-activation)
 * [n_k, d_a], s @ W_s [d_a], one energy row [d_a], the per-query sum of
 * dL/d(pre-activation) [d_a], one score row [n_k]. */
size_t attn_additive_backward_work_size(int n_k, int d_s, int d_a)
{
    const int sizes[] = {n_k, d_s, d_a};
    size_t rows, cells, length;
    if (attn__check_sizes(sizes, 3) != ATTN_OK ||
        attn__add_size(&rows, 2 * (size_t)n_k, 3) != ATTN_OK ||
        attn__mul_size(&cells, rows, (size_t)d_a) != ATTN_OK ||
        attn__add_size(&length, cells, (size_t)n_k) != ATTN_OK)
        return 0;
    return length;
}

static void zero_if(double *x, size_t count)
{
    if (x != NULL) attn__zero(x, count);
}

/* energy_ij [d_a] = tanh(query_proj + keys_proj_j + b): the forward's,
 * when it was saved, else computed into scratch. */
static const double *energy_of(double *scratch, const attn__additive_args *a,
                               const double *query_proj,
                               const double *keys_proj, int i, int j)
{
    const size_t d_a = (size_t)a->d_a;
    if (a->saved_energy != NULL)
        return a->saved_energy + ((size_t)i * (size_t)a->n_k + (size_t)j) * d_a;
    const double *keys_proj_j = keys_proj + (size_t)j * d_a;
    for (size_t c = 0; c < d_a; c++)
        scratch[c] = tanh(query_proj[c] + keys_proj_j[c] +
                          (a->b != NULL ? a->b[c] : 0.0));
    return scratch;
}

int attn__additive_backward_run(const attn__additive_grads *g,
                                const attn__additive_args *a, double *work)
{
    const int n_k = a->n_k, d_a = a->d_a, d_s = a->d_s, d_h = a->d_h;
    double *keys_proj = work;                          /* [n_k, d_a] */
    double *key_sums = keys_proj + (size_t)n_k * d_a;  /* [n_k, d_a] */
    double *query_proj = key_sums + (size_t)n_k * d_a; /* [d_a] */
    double *energy = query_proj + d_a;                 /* [d_a] */
    double *query_sum = energy + d_a;                  /* [d_a] */
    double *row = query_sum + d_a;                     /* [n_k] */
    zero_if(g->query, (size_t)a->n_q * (size_t)d_s);
    zero_if(g->keys, (size_t)n_k * (size_t)d_h);
    zero_if(g->w_s, (size_t)d_s * (size_t)d_a);
    zero_if(g->w_h, (size_t)d_h * (size_t)d_a);
    zero_if(g->b, (size_t)d_a);
    zero_if(g->v, (size_t)d_a);
    attn__zero(key_sums, (size_t)n_k * (size_t)d_a);
    int status = attn__affine(keys_proj, a->keys, a->w_h, NULL, n_k, d_h, d_a);
    for (int i = 0; status == ATTN_OK && i < a->n_q; i++) {
        const double *s = a->query + (size_t)i * (size_t)d_s;
        status = attn__affine(query_proj, s, a->w_s, NULL, 1, d_s, d_a);
        if (status != ATTN_OK) return status;
        for (int j = 0; j < n_k; j++)
            row[j] = attn__dot(
                energy_of(energy, a, query_proj, keys_proj, i, j), a->v, d_a);
        if (!attn__all_finite(row, (size_t)n_k)) return ATTN_ERR_OVERFLOW_VALUE;
        attn__context_backward_row(row,
                                   a->context_grad + (size_t)i * (size_t)d_h,
                                   a->keys, g->keys, n_k, d_h);
        /* row now holds dL/d(score_j); score_j = v · energy_j. */
        attn__zero(query_sum, (size_t)d_a);
        for (int j = 0; j < n_k; j++) {
            const double *e = energy_of(energy, a, query_proj, keys_proj, i, j);
            double *key_sum = key_sums + (size_t)j * d_a;
            for (int c = 0; c < d_a; c++) {
                if (g->v != NULL) g->v[c] += row[j] * e[c];
                const double pre = row[j] * a->v[c] * (1.0 - e[c] * e[c]);
                key_sum[c] += pre;
                query_sum[c] += pre;
            }
        }
        if (g->b != NULL)
            for (int c = 0; c < d_a; c++) g->b[c] += query_sum[c];
        if (g->w_s != NULL)
            attn__matmul_tn_add(g->w_s, s, query_sum, 1, d_s, d_a);
        if (g->query != NULL)
            attn__matmul_nt(g->query + (size_t)i * (size_t)d_s, (size_t)d_s,
                            query_sum, (size_t)d_a, a->w_s, (size_t)d_a, 1, d_s,
                            d_a, 0);
    }
    if (status != ATTN_OK) return status;
    if (g->w_h != NULL)
        attn__matmul_tn_add(g->w_h, a->keys, key_sums, n_k, d_h, d_a);
    if (g->keys != NULL)
        attn__matmul_nt(g->keys, (size_t)d_h, key_sums, (size_t)d_a, a->w_h,
                        (size_t)d_a, n_k, d_h, d_a, 1);
    return ATTN_OK;
}

/* attn_additive_backward, from the saved energy when it is not NULL. */
static int additive_backward(double *grad_query, double *grad_keys,
                             double *grad_w_s, double *grad_w_h, double *grad_b,
                             double *grad_v, const double *d_context,
                             const double *query, const double *keys,
                             const double *w_s, const double *w_h,
                             const double *b, const double *v,
                             const double *saved_energy, int n_q, int n_k,
                             int d_s, int d_h, int d_a, double *work)
{
    if (d_context == NULL || work == NULL) return ATTN_ERR_NULL;
    const attn__additive_args args = {
        .query = query,
        .keys = keys,
        .w_s = w_s,
        .w_h = w_h,
        .b = b,
        .v = v,
        .context_grad = d_context,
        .saved_energy = saved_energy,
        .n_q = n_q,
        .n_k = n_k,
        .d_s = d_s,
        .d_h = d_h,
        .d_a = d_a,
    };
    int status = attn__check_additive(
        &args, attn_additive_backward_work_size(n_k, d_s, d_a));
    if (status != ATTN_OK) return status;
    if (saved_energy != NULL &&
        !attn__all_finite(saved_energy,
                          (size_t)n_q * (size_t)n_k * (size_t)d_a))
        return ATTN_ERR_NOT_FINITE;
    const attn__additive_grads grads = {grad_query, grad_keys, grad_w_s,
                                        grad_w_h,   grad_b,    grad_v};
    status = attn__additive_backward_run(&grads, &args, work);
    if (status != ATTN_OK) return status;
    const int finite = attn__all_finite(grad_query,
                                        (size_t)n_q * (size_t)d_s) &&
                       attn__all_finite(grad_keys, (size_t)n_k * (size_t)d_h) &&
                       attn__all_finite(grad_w_s, (size_t)d_s * (size_t)d_a) &&
                       attn__all_finite(grad_w_h, (size_t)d_h * (size_t)d_a) &&
                       attn__all_finite(grad_b, (size_t)d_a) &&
                       attn__all_finite(grad_v, (size_t)d_a);
    return finite ? ATTN_OK : ATTN_ERR_OVERFLOW_VALUE;
}

int attn_additive_backward(double *grad_query, double *grad_keys,
                           double *grad_w_s, double *grad_w_h, double *grad_b,
                           double *grad_v, const double *d_context,
                           const double *query, const double *keys,
                           const double *w_s, const double *w_h,
                           const double *b, const double *v, int n_q, int n_k,
                           int d_s, int d_h, int d_a, double *work)
{
    return additive_backward(grad_query, grad_keys, grad_w_s, grad_w_h, grad_b,
                             grad_v, d_context, query, keys, w_s, w_h, b, v,
                             NULL, n_q, n_k, d_s, d_h, d_a, work);
}

int attn_additive_backward_saved(
    double *grad_query, double *grad_keys, double *grad_w_s, double *grad_w_h,
    double *grad_b, double *grad_v, const double *d_context,
    const double *query, const double *keys, const double *w_s,
    const double *w_h, const double *b, const double *v, const double *energy,
    int n_q, int n_k, int d_s, int d_h, int d_a, double *work)
{
    if (energy == NULL) return ATTN_ERR_NULL;
    return additive_backward(grad_query, grad_keys, grad_w_s, grad_w_h, grad_b,
                             grad_v, d_context, query, keys, w_s, w_h, b, v,
                             energy, n_q, n_k, d_s, d_h, d_a, work);
}
