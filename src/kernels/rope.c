/* rope.c: rotary position embeddings as Llama's reference (rotate_half
 * over the two halves of each head) and their gradient. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

static int check_args(const double *x, const int *positions, int n,
                      int num_heads, int head_dim, double theta)
{
    const int sizes[] = {n, num_heads, head_dim};
    int status = attn__check_sizes(sizes, 3);
    if (status != ATTN_OK) return status;
    if (head_dim % 2 != 0) return ATTN_ERR_HEAD_DIM;
    if (!isfinite(theta) || !(theta > 0.0)) return ATTN_ERR_RANGE;
    size_t count;
    status = attn__count3(&count, n, num_heads, head_dim);
    if (status != ATTN_OK) return status;
    for (int r = 0; r < n; r++)
        if (positions[r] < 0) return ATTN_ERR_POSITION;
    return attn__all_finite(x, count) ? ATTN_OK : ATTN_ERR_NOT_FINITE;
}

/* Rotates each head of n rows by the angles of their positions, or by
 * their negatives when sign is −1 (the transpose). */
static void rotate(double *out, const double *x, const int *positions, int n,
                   int num_heads, int head_dim, double theta, double sign)
{
    const int half = head_dim / 2;
    const size_t width = (size_t)num_heads * (size_t)head_dim;
    for (size_t r = 0; r < (size_t)n; r++) {
        const double p = (double)positions[r];
        for (int i = 0; i < half; i++) {
            /* HF: inv_freq = 1 / theta^(arange(0, d, 2) / d), freqs =
             * position · inv_freq. */
            const double inv_freq = 1.0 / pow(theta, (double)(2 * i) /
                                                         (double)head_dim);
            const double angle = p * inv_freq;
            const double c = cos(angle), s = sign * sin(angle);
            for (int h = 0; h < num_heads; h++) {
                const size_t at = r * width + (size_t)h * (size_t)head_dim;
                const double a = x[at + (size_t)i];
                const double b = x[at + (size_t)(i + half)];
                out[at + (size_t)i] = a * c - b * s;
                out[at + (size_t)(i + half)] = b * c + a * s;
            }
        }
    }
}

int attn_rope(double *output, const double *x, const int *positions, int n,
              int num_heads, int head_dim, double theta)
{
    if (output == NULL || x == NULL || positions == NULL) return ATTN_ERR_NULL;
    int status = check_args(x, positions, n, num_heads, head_dim, theta);
    if (status != ATTN_OK) return status;
    rotate(output, x, positions, n, num_heads, head_dim, theta, 1.0);
    return ATTN_OK;
}

int attn_rope_backward(double *grad_x, const double *d_output,
                       const int *positions, int n, int num_heads, int head_dim,
                       double theta)
{
    if (grad_x == NULL || d_output == NULL || positions == NULL)
        return ATTN_ERR_NULL;
    int status = check_args(d_output, positions, n, num_heads, head_dim, theta);
    if (status != ATTN_OK) return status;
    rotate(grad_x, d_output, positions, n, num_heads, head_dim, theta, -1.0);
    return ATTN_OK;
}
