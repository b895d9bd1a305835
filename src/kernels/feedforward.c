/* feedforward.c: the position-wise ReLU feed-forward network and its
 * gradient. */
#include "attention.h"
#include "kernels/kernels.h"

static int check_args(int rows, int d_in, int d_ff, int d_out)
{
    const int sizes[] = {rows, d_in, d_ff, d_out};
    int status = attn__check_sizes(sizes, 4);
    if (status != ATTN_OK) return status;
    const int counts[][3] = {{rows, d_in, 1},
                             {rows, d_ff, 2},
                             {rows, d_out, 1},
                             {d_in, d_ff, 1},
                             {d_ff, d_out, 1}};
    return attn__check_counts(counts, 5);
}

static int inputs_finite(const double *x, const double *w1, const double *b1,
                         const double *w2, const double *b2, int rows, int d_in,
                         int d_ff, int d_out)
{
    return attn__all_finite(x, (size_t)rows * (size_t)d_in) &&
           attn__all_finite(w1, (size_t)d_in * (size_t)d_ff) &&
           attn__all_finite(b1, (size_t)d_ff) &&
           attn__all_finite(w2, (size_t)d_ff * (size_t)d_out) &&
           attn__all_finite(b2, (size_t)d_out);
}

size_t attn_feed_forward_work_size(int rows, int d_ff)
{
    size_t count;
    if (rows <= 0 || d_ff <= 0 || attn__count3(&count, rows, d_ff, 1) != 0)
        return 0;
    return count;
}

size_t attn_feed_forward_backward_work_size(int rows, int d_ff)
{
    size_t count;
    if (rows <= 0 || d_ff <= 0 || attn__count3(&count, rows, d_ff, 2) != 0)
        return 0;
    return count;
}

/* hidden = ReLU(x @ W1 + b1), then output = hidden @ W2 + b2. */
static int forward(double *hidden, double *output, const double *x,
                   const double *w1, const double *b1, const double *w2,
                   const double *b2, int rows, int d_in, int d_ff, int d_out)
{
    int status = attn__affine(hidden, x, w1, b1, rows, d_in, d_ff);
    if (status != ATTN_OK) return status;
    const size_t cells = (size_t)rows * (size_t)d_ff;
    for (size_t i = 0; i < cells; i++)
        if (!(hidden[i] > 0.0)) hidden[i] = 0.0;
    if (output == NULL) return ATTN_OK;
    return attn__affine(output, hidden, w2, b2, rows, d_ff, d_out);
}

int attn_feed_forward(double *hidden, double *output, const double *x,
                      const double *w1, const double *b1, const double *w2,
                      const double *b2, int rows, int d_in, int d_ff, int d_out,
                      double *work)
{
    if (x == NULL || w1 == NULL || w2 == NULL || work == NULL)
        return ATTN_ERR_NULL;
    int status = check_args(rows, d_in, d_ff, d_out);
    if (status != ATTN_OK) return status;
    if (!inputs_finite(x, w1, b1, w2, b2, rows, d_in, d_ff, d_out))
        return ATTN_ERR_NOT_FINITE;
    double *h = hidden != NULL ? hidden : work;
    return forward(h, output, x, w1, b1, w2, b2, rows, d_in, d_ff, d_out);
}

int attn_feed_forward_backward(double *grad_x, double *grad_w1, double *grad_b1,
                               double *grad_w2, double *grad_b2,
                               const double *d_output, const double *x,
                               const double *w1, const double *b1,
                               const double *w2, const double *b2, int rows,
                               int d_in, int d_ff, int d_out, double *work)
{
    if (d_output == NULL || x == NULL || w1 == NULL || w2 == NULL ||
        work == NULL)
        return ATTN_ERR_NULL;
    int status = check_args(rows, d_in, d_ff, d_out);
    if (status != ATTN_OK) return status;
    if (!inputs_finite(x, w1, b1, w2, b2, rows, d_in, d_ff, d_out) ||
        !attn__all_finite(d_output, (size_t)rows * (size_t)d_out))
        return ATTN_ERR_NOT_FINITE;
    const size_t cells = (size_t)rows * (size_t)d_ff;
    double *hidden = work, *d_hidden = work + cells;
    status = forward(hidden, NULL, x, w1, b1, w2, b2, rows, d_in, d_ff, d_out);
    if (status != ATTN_OK) return status;

    /* Output layer: dW2 = hiddenᵀ dO, db2 = colsum dO, dH = dO W2ᵀ. */
    if (grad_w2 != NULL) {
        attn__zero(grad_w2, (size_t)d_ff * (size_t)d_out);
        attn__matmul_tn_add(grad_w2, hidden, d_output, rows, d_ff, d_out);
    }
    if (grad_b2 != NULL) {
        attn__zero(grad_b2, (size_t)d_out);
        attn__colsum_add(grad_b2, d_output, rows, d_out);
    }
    attn__matmul_nt(d_hidden, (size_t)d_ff, d_output, (size_t)d_out, w2,
                    (size_t)d_out, rows, d_ff, d_out, 0);
    /* ReLU passes the gradient where its input was positive (0 at 0). */
    for (size_t i = 0; i < cells; i++)
        if (!(hidden[i] > 0.0)) d_hidden[i] = 0.0;
    if (grad_w1 != NULL) {
        attn__zero(grad_w1, (size_t)d_in * (size_t)d_ff);
        attn__matmul_tn_add(grad_w1, x, d_hidden, rows, d_in, d_ff);
    }
    if (grad_b1 != NULL) {
        attn__zero(grad_b1, (size_t)d_ff);
        attn__colsum_add(grad_b1, d_hidden, rows, d_ff);
    }
    if (grad_x != NULL)
        attn__matmul_nt(grad_x, (size_t)d_in, d_hidden, (size_t)d_ff, w1,
                        (size_t)d_ff, rows, d_in, d_ff, 0);
    const int finite = attn__all_finite(grad_x, (size_t)rows * (size_t)d_in) &&
                       attn__all_finite(grad_w1, (size_t)d_in * (size_t)d_ff) &&
                       attn__all_finite(grad_b1, (size_t)d_ff) &&
                       attn__all_finite(grad_w2,
                                        (size_t)d_ff * (size_t)d_out) &&
                       attn__all_finite(grad_b2, (size_t)d_out);
    return finite ? ATTN_OK : ATTN_ERR_OVERFLOW_VALUE;
}
