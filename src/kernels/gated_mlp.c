/* gated_mlp.c: Llama's SiLU-gated MLP, down(silu(gate x) ∘ up x), and its
 * gradient. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

static int check_args(int rows, int d_in, int d_ff, int d_out)
{
    const int sizes[] = {rows, d_in, d_ff, d_out};
    int status = attn__check_sizes(sizes, 4);
    if (status != ATTN_OK) return status;
    const int counts[][3] = {{rows, d_in, 1},
                             {rows, d_ff, 4},
                             {rows, d_out, 1},
                             {d_in, d_ff, 1},
                             {d_ff, d_out, 1}};
    return attn__check_counts(counts, 5);
}

static int inputs_finite(const double *x, const double *w_gate,
                         const double *w_up, const double *w_down, int rows,
                         int d_in, int d_ff, int d_out)
{
    return attn__all_finite(x, (size_t)rows * (size_t)d_in) &&
           attn__all_finite(w_gate, (size_t)d_in * (size_t)d_ff) &&
           attn__all_finite(w_up, (size_t)d_in * (size_t)d_ff) &&
           attn__all_finite(w_down, (size_t)d_ff * (size_t)d_out);
}

static size_t cells_times(int rows, int d_ff, int factor)
{
    size_t count;
    if (rows <= 0 || d_ff <= 0 || attn__count3(&count, rows, d_ff, factor) != 0)
        return 0;
    return count;
}

size_t attn_gated_mlp_work_size(int rows, int d_ff)
{
    return cells_times(rows, d_ff, 2);
}

size_t attn_gated_mlp_backward_work_size(int rows, int d_ff)
{
    return cells_times(rows, d_ff, 4);
}

static double sigmoid(double z)
{
    return 1.0 / (1.0 + exp(-z));
}

/* gate = x W_gate, up = x W_up, hidden = silu(gate) ∘ up, then
 * output = hidden W_down when output is not NULL. hidden may be gate. */
static int forward(double *hidden, double *output, double *gate, double *up,
                   const double *x, const double *w_gate, const double *w_up,
                   const double *w_down, int rows, int d_in, int d_ff,
                   int d_out)
{
    int status = attn__affine(gate, x, w_gate, NULL, rows, d_in, d_ff);
    if (status == ATTN_OK)
        status = attn__affine(up, x, w_up, NULL, rows, d_in, d_ff);
    if (status != ATTN_OK) return status;
    const size_t cells = (size_t)rows * (size_t)d_ff;
    for (size_t i = 0; i < cells; i++)
        hidden[i] = gate[i] * sigmoid(gate[i]) * up[i];
    if (!attn__all_finite(hidden, cells)) return ATTN_ERR_OVERFLOW_VALUE;
    if (output == NULL) return ATTN_OK;
    return attn__affine(output, hidden, w_down, NULL, rows, d_ff, d_out);
}

int attn_gated_mlp(double *hidden, double *output, const double *x,
                   const double *w_gate, const double *w_up,
                   const double *w_down, int rows, int d_in, int d_ff,
                   int d_out, double *work)
{
    if (x == NULL || w_gate == NULL || w_up == NULL || w_down == NULL ||
        work == NULL)
        return ATTN_ERR_NULL;
    int status = check_args(rows, d_in, d_ff, d_out);
    if (status != ATTN_OK) return status;
    if (!inputs_finite(x, w_gate, w_up, w_down, rows, d_in, d_ff, d_out))
        return ATTN_ERR_NOT_FINITE;
    double *gate = work, *up = work + (size_t)rows * (size_t)d_ff;
    return forward(hidden != NULL ? hidden : gate, output, gate, up, x, w_gate,
                   w_up, w_down, rows, d_in, d_ff, d_out);
}

int attn_gated_mlp_backward(double *grad_x, double *grad_w_gate,
                            double *grad_w_up, double *grad_w_down,
                            const double *d_output, const double *x,
                            const double *w_gate, const double *w_up,
                            const double *w_down, int rows, int d_in, int d_ff,
                            int d_out, double *work)
{
    if (d_output == NULL || x == NULL || w_gate == NULL || w_up == NULL ||
        w_down == NULL || work == NULL)
        return ATTN_ERR_NULL;
    int status = check_args(rows, d_in, d_ff, d_out);
    if (status != ATTN_OK) return status;
    if (!inputs_finite(x, w_gate, w_up, w_down, rows, d_in, d_ff, d_out) ||
        !attn__all_finite(d_output, (size_t)rows * (size_t)d_out))
        return ATTN_ERR_NOT_FINITE;
    const size_t cells = (size_t)rows * (size_t)d_ff;
    double *gate = work, *up = gate + cells, *hidden = up + cells;
    double *d_hidden = hidden + cells;
    status = forward(hidden, NULL, gate, up, x, w_gate, w_up, w_down, rows,
                     d_in, d_ff, d_out);
    if (status != ATTN_OK) return status;
    if (grad_w_down != NULL) {
        attn__zero(grad_w_down, (size_t)d_ff * (size_t)d_out);
        attn__matmul_tn_add(grad_w_down, hidden, d_output, rows, d_ff, d_out);
    }
    attn__matmul_nt(d_hidden, (size_t)d_ff, d_output, (size_t)d_out, w_down,
                    (size_t)d_out, rows, d_ff, d_out, 0);
    /* gate becomes d gate and up d up, in place. */
    for (size_t i = 0; i < cells; i++) {
        const double g = gate[i], s = sigmoid(g);
        const double d_up = d_hidden[i] * g * s;
        gate[i] = d_hidden[i] * up[i] * s * (1.0 + g * (1.0 - s));
        up[i] = d_up;
    }
    if (grad_w_gate != NULL) {
        attn__zero(grad_w_gate, (size_t)d_in * (size_t)d_ff);
        attn__matmul_tn_add(grad_w_gate, x, gate, rows, d_in, d_ff);
    }
    if (grad_w_up != NULL) {
        attn__zero(grad_w_up, (size_t)d_in * (size_t)d_ff);
        attn__matmul_tn_add(grad_w_up, x, up, rows, d_in, d_ff);
    }
    if (grad_x != NULL) {
        attn__matmul_nt(grad_x, (size_t)d_in, gate, (size_t)d_ff, w_gate,
                        (size_t)d_ff, rows, d_in, d_ff, 0);
        attn__matmul_nt(grad_x, (size_t)d_in, up, (size_t)d_ff, w_up,
                        (size_t)d_ff, rows, d_in, d_ff, 1);
    }
    const int finite =
        attn__all_finite(grad_x, (size_t)rows * (size_t)d_in) &&
        attn__all_finite(grad_w_gate, (size_t)d_in * (size_t)d_ff) &&
        attn__all_finite(grad_w_up, (size_t)d_in * (size_t)d_ff) &&
        attn__all_finite(grad_w_down, (size_t)d_ff * (size_t)d_out);
    return finite ? ATTN_OK : ATTN_ERR_OVERFLOW_VALUE;
}
