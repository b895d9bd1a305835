/* rmsnorm.c: RMSNorm as Llama's (no mean subtracted, no bias) and its
 * gradient. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

static int check_args(const double *x, const double *weight, int rows, int d,
                      double eps)
{
    const int sizes[] = {rows, d};
    int status = attn__check_sizes(sizes, 2);
    if (status != ATTN_OK) return status;
    if (!isfinite(eps) || eps < 0.0) return ATTN_ERR_RANGE;
    size_t count;
    status = attn__count3(&count, rows, d, 1);
    if (status != ATTN_OK) return status;
    return attn__all_finite(x, count) && attn__all_finite(weight, (size_t)d)
               ? ATTN_OK
               : ATTN_ERR_NOT_FINITE;
}

/* 1/sqrt(mean(x²) + eps) of one row; not finite when it overflowed. */
static double row_rstd(const double *x, int d, double eps)
{
    double squares = 0.0;
    for (int j = 0; j < d; j++) squares += x[j] * x[j];
    return 1.0 / sqrt(squares / d + eps);
}

int attn_rms_norm(double *output, double *rstd, const double *x,
                  const double *weight, int rows, int d, double eps)
{
    if (x == NULL || weight == NULL) return ATTN_ERR_NULL;
    int status = check_args(x, weight, rows, d, eps);
    if (status != ATTN_OK) return status;
    for (size_t r = 0; r < (size_t)rows; r++) {
        const double *x_row = x + r * (size_t)d;
        const double rs = row_rstd(x_row, d, eps);
        if (!isfinite(rs) || rs == 0.0) return ATTN_ERR_OVERFLOW_VALUE;
        if (rstd != NULL) rstd[r] = rs;
        if (output == NULL) continue;
        double *out_row = output + r * (size_t)d;
        for (int j = 0; j < d; j++) out_row[j] = weight[j] * (x_row[j] * rs);
    }
    return attn__all_finite(output, (size_t)rows * (size_t)d)
               ? ATTN_OK
               : ATTN_ERR_OVERFLOW_VALUE;
}

int attn_rms_norm_backward(double *grad_x, double *grad_weight,
                           const double *d_output, const double *x,
                           const double *weight, int rows, int d, double eps)
{
    if (d_output == NULL || x == NULL || weight == NULL) return ATTN_ERR_NULL;
    int status = check_args(x, weight, rows, d, eps);
    if (status != ATTN_OK) return status;
    const size_t count = (size_t)rows * (size_t)d;
    if (!attn__all_finite(d_output, count)) return ATTN_ERR_NOT_FINITE;
    if (grad_weight != NULL) attn__zero(grad_weight, (size_t)d);
    for (size_t r = 0; r < (size_t)rows; r++) {
        const double *x_row = x + r * (size_t)d;
        const double *dy = d_output + r * (size_t)d;
        const double rs = row_rstd(x_row, d, eps);
        if (!isfinite(rs) || rs == 0.0) return ATTN_ERR_OVERFLOW_VALUE;
        /* With y = x rstd and g = dy ∘ weight:
         * dx = rstd (g − y mean(g ∘ y)). */
        double sum_gy = 0.0;
        for (int j = 0; j < d; j++) {
            const double y = x_row[j] * rs;
            sum_gy += dy[j] * weight[j] * y;
            if (grad_weight != NULL) grad_weight[j] += dy[j] * y;
        }
        const double mean_gy = sum_gy / d;
        if (grad_x == NULL) continue;
        double *dx = grad_x + r * (size_t)d;
        for (int j = 0; j < d; j++)
            dx[j] = rs * (dy[j] * weight[j] - x_row[j] * rs * mean_gy);
    }
    return attn__all_finite(grad_x, count) &&
                   attn__all_finite(grad_weight, (size_t)d)
               ? ATTN_OK
               : ATTN_ERR_OVERFLOW_VALUE;
}
