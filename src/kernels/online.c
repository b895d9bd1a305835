/* online.c: attention with the online softmax, float64, keeping the state
 * after each tile of keys, for the walkthrough that shows it. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

int attn_online_tiles(int n_k, int tile)
{
    if (n_k <= 0 || tile <= 0) return 0;
    return n_k / tile + (n_k % tile != 0);
}

/* Query row i: its scaled scores, then tile by tile the running max m, the
 * rescaling α = exp(m_old − m), the running sum l = α·l + Σ exp(s − m) and
 * the running output acc = α·acc + Σ exp(s − m)·v; output = acc ÷ l. */
static int run_row(double *output, double *scaled, double *tile_max,
                   double *tile_sum, double *tile_acc, const double *q_row,
                   const double *k, const double *v, int n_k, int d_k, int d_v,
                   int tile, double scale)
{
    double m = -INFINITY, l = 0.0;
    for (int c = 0; c < d_v; c++) output[c] = 0.0; /* acc, until the end */
    for (int first = 0, t = 0; first < n_k; first += tile, t++) {
        const int last = first + tile < n_k ? first + tile : n_k;
        double m_new = m;
        for (int j = first; j < last; j++) {
            scaled[j] = scale *
                        attn__dot(q_row, k + (size_t)j * (size_t)d_k, d_k);
            if (!isfinite(scaled[j])) return ATTN_ERR_OVERFLOW_VALUE;
            if (scaled[j] > m_new) m_new = scaled[j];
        }
        /* The first tile has nothing to rescale (α multiplies zeros). */
        const double alpha = t == 0 ? 0.0 : exp(m - m_new);
        l *= alpha;
        for (int c = 0; c < d_v; c++) output[c] *= alpha;
        for (int j = first; j < last; j++) {
            const double e = exp(scaled[j] - m_new);
            l += e;
            const double *v_row = v + (size_t)j * (size_t)d_v;
            for (int c = 0; c < d_v; c++) output[c] += e * v_row[c];
        }
        m = m_new;
        tile_max[t] = m;
        tile_sum[t] = l;
        attn__copy(tile_acc + (size_t)t * (size_t)d_v, output, d_v);
    }
    for (int c = 0; c < d_v; c++) output[c] /= l;
    return attn__all_finite(output, (size_t)d_v) ? ATTN_OK
                                                 : ATTN_ERR_OVERFLOW_VALUE;
}

int attn_online_attention(double *output, double *scaled, double *tile_max,
                          double *tile_sum, double *tile_acc, const double *q,
                          const double *k, const double *v, int n_q, int n_k,
                          int d_k, int d_v, int tile, double scale)
{
    if (!output || !scaled || !tile_max || !tile_sum || !tile_acc || !q || !k ||
        !v)
        return ATTN_ERR_NULL;
    const int sizes[] = {n_q, n_k, d_k, d_v, tile};
    int status = attn__check_sizes(sizes, 5);
    if (status != ATTN_OK) return status;
    const int tiles = attn_online_tiles(n_k, tile);
    const int counts[][3] = {{n_q, n_k, 1},
                             {n_q, d_k, 1},
                             {n_k, d_k, 1},
                             {n_k, d_v, 1},
                             {n_q, tiles, d_v}};
    status = attn__check_counts(counts, 5);
    if (status != ATTN_OK) return status;
    if (!isfinite(scale)) return ATTN_ERR_RANGE;
    if (!attn__all_finite(q, (size_t)n_q * (size_t)d_k) ||
        !attn__all_finite(k, (size_t)n_k * (size_t)d_k) ||
        !attn__all_finite(v, (size_t)n_k * (size_t)d_v))
        return ATTN_ERR_NOT_FINITE;
    for (int i = 0; i < n_q; i++) {
        status = run_row(
            output + (size_t)i * (size_t)d_v, scaled + (size_t)i * (size_t)n_k,
            tile_max + (size_t)i * (size_t)tiles,
            tile_sum + (size_t)i * (size_t)tiles,
            tile_acc + (size_t)i * (size_t)tiles * (size_t)d_v,
            q + (size_t)i * (size_t)d_k, k, v, n_k, d_k, d_v, tile, scale);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}
