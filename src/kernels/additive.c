/* additive.c: Bahdanau (additive) attention. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

/* Work in doubles: keys @ W_h [n_k, d_a], s @ W_s [d_a], one energy row
 * [d_a] (when energy is not kept), one score row [n_k]. d_s sizes none of
 * them; it is checked so that any invalid size gives 0. */
size_t attn_additive_work_size(int n_k, int d_s, int d_a)
{
    const int sizes[] = {n_k, d_s, d_a};
    size_t cells, length;
    if (attn__check_sizes(sizes, 3) != ATTN_OK ||
        attn__mul_size(&cells, (size_t)n_k + 2, (size_t)d_a) != ATTN_OK ||
        attn__add_size(&length, cells, (size_t)n_k) != ATTN_OK)
        return 0;
    return length;
}

int attn__scores_to_context(double *scores_out, double *weights_out,
                            double *context_out, double *row,
                            const double *keys, int n_k, int d_h)
{
    if (scores_out != NULL) attn__copy(scores_out, row, n_k);
    if (!attn__all_finite(row, (size_t)n_k)) return ATTN_ERR_OVERFLOW_VALUE;
    attn__softmax_row(row, n_k);
    if (weights_out != NULL) attn__copy(weights_out, row, n_k);
    if (context_out == NULL) return ATTN_OK;
    return attn__weighted_row(context_out, row, keys, (size_t)d_h, n_k, d_h);
}

int attn__additive_run(const attn__additive_args *a, double *work)
{
    const size_t n_k = (size_t)a->n_k, d_a = (size_t)a->d_a;
    double *keys_proj = work;              /* [n_k, d_a] */
    double *query_proj = work + n_k * d_a; /* [d_a] */
    double *energy_row = query_proj + d_a; /* [d_a] */
    double *row = energy_row + d_a;        /* [n_k] */
    int status = attn__affine(keys_proj, a->keys, a->w_h, NULL, a->n_k, a->d_h,
                              a->d_a);
    for (int i = 0; status == ATTN_OK && i < a->n_q; i++) {
        status = attn__affine(query_proj, a->query + (size_t)i * (size_t)a->d_s,
                              a->w_s, NULL, 1, a->d_s, a->d_a);
        if (status != ATTN_OK) break;
        for (size_t j = 0; j < n_k; j++) {
            double *energy = a->energy != NULL
                                 ? a->energy + ((size_t)i * n_k + j) * d_a
                                 : energy_row;
            for (size_t c = 0; c < d_a; c++) {
                double pre = query_proj[c] + keys_proj[j * d_a + c];
                if (a->b != NULL) pre += a->b[c];
                energy[c] = tanh(pre);
            }
            row[j] = attn__dot(energy, a->v, a->d_a);
        }
        const size_t cell = (size_t)i * n_k; /* row i of [n_q, n_k] */
        status = attn__scores_to_context(
            a->scores ? a->scores + cell : NULL,
            a->weights ? a->weights + cell : NULL,
            a->context ? a->context + (size_t)i * (size_t)a->d_h : NULL, row,
            a->keys, a->n_k, a->d_h);
    }
    return status;
}

int attn__check_additive(const attn__additive_args *a, size_t work_cells)
{
    if (a->query == NULL || a->keys == NULL || a->w_s == NULL ||
        a->w_h == NULL || a->v == NULL)
        return ATTN_ERR_NULL;
    const int n_q = a->n_q, n_k = a->n_k, d_s = a->d_s, d_h = a->d_h,
              d_a = a->d_a;
    const int sizes[] = {n_q, n_k, d_s, d_h, d_a};
    int status = attn__check_sizes(sizes, 5);
    if (status != ATTN_OK) return status;
    const int counts[][3] = {{n_q, n_k, d_a}, {n_q, d_s, 1}, {n_k, d_h, 1},
                             {d_s, d_a, 1},   {d_h, d_a, 1}, {n_q, d_h, 1}};
    status = attn__check_counts(counts, 6);
    if (status != ATTN_OK) return status;
    /* The sizes are valid, so 0 can only mean the length overflowed. */
    if (work_cells == 0) return ATTN_ERR_SIZE_OVERFLOW;
    if (!attn__all_finite(a->context_grad, (size_t)n_q * (size_t)d_h) ||
        !attn__all_finite(a->query, (size_t)n_q * (size_t)d_s) ||
        !attn__all_finite(a->keys, (size_t)n_k * (size_t)d_h) ||
        !attn__all_finite(a->w_s, (size_t)d_s * (size_t)d_a) ||
        !attn__all_finite(a->w_h, (size_t)d_h * (size_t)d_a) ||
        !attn__all_finite(a->b, (size_t)d_a) ||
        !attn__all_finite(a->v, (size_t)d_a))
        return ATTN_ERR_NOT_FINITE;
    return ATTN_OK;
}

int attn_additive(double *energy, double *scores, double *weights,
                  double *context, const double *query, const double *keys,
                  const double *w_s, const double *w_h, const double *b,
                  const double *v, int n_q, int n_k, int d_s, int d_h, int d_a,
                  double *work)
{
    if (work == NULL) return ATTN_ERR_NULL;
    const attn__additive_args args = {
        .energy = energy,
        .scores = scores,
        .weights = weights,
        .context = context,
        .query = query,
        .keys = keys,
        .w_s = w_s,
        .w_h = w_h,
        .b = b,
        .v = v,
        .n_q = n_q,
        .n_k = n_k,
        .d_s = d_s,
        .d_h = d_h,
        .d_a = d_a,
    };
    const int status = attn__check_additive(
        &args, attn_additive_work_size(n_k, d_s, d_a));
    if (status != ATTN_OK) return status;
    return attn__additive_run(&args, work);
}
