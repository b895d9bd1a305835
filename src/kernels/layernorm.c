/* layernorm.c: layer normalisation over the last axis and its gradient. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

/* mean and 1/sqrt(var + ε) of one row, var the biased variance. */
static void row_stats(const double *x, int d, double *mean, double *rstd)
{
    double sum = 0.0;
    for (int j = 0; j < d; j++) sum += x[j];
    const double mu = sum / d;
    double squares = 0.0;
    for (int j = 0; j < d; j++) squares += (x[j] - mu) * (x[j] - mu);
    *mean = mu;
    *rstd = 1.0 / sqrt(squares / d + ATTN_LAYER_NORM_EPSILON);
}

static int check_args(int rows, int d, size_t *count)
{
    const int sizes[] = {rows, d};
    int status = attn__check_sizes(sizes, 2);
    if (status == ATTN_OK) status = attn__count3(count, rows, d, 1);
    return status;
}

int attn_layer_norm(double *output, double *mean, double *rstd, const double *x,
                    const double *gamma, const double *beta, int rows, int d)
{
    if (x == NULL || gamma == NULL) return ATTN_ERR_NULL;
    size_t count;
    int status = check_args(rows, d, &count);
    if (status != ATTN_OK) return status;
    if (!attn__all_finite(x, count) || !attn__all_finite(gamma, (size_t)d) ||
        !attn__all_finite(beta, (size_t)d))
        return ATTN_ERR_NOT_FINITE;
    for (size_t r = 0; r < (size_t)rows; r++) {
        const double *x_row = x + r * (size_t)d;
        double mu, rs;
        row_stats(x_row, d, &mu, &rs);
        if (!isfinite(mu) || !isfinite(rs)) return ATTN_ERR_OVERFLOW_VALUE;
        if (mean != NULL) mean[r] = mu;
        if (rstd != NULL) rstd[r] = rs;
        if (output == NULL) continue;
        double *out_row = output + r * (size_t)d;
        for (int j = 0; j < d; j++)
            out_row[j] = (x_row[j] - mu) * rs * gamma[j] +
                         (beta != NULL ? beta[j] : 0.0);
    }
    return attn__all_finite(output, count) ? ATTN_OK : ATTN_ERR_OVERFLOW_VALUE;
}

int attn_layer_norm_backward(double *grad_x, double *grad_gamma,
                             double *grad_beta, const double *d_output,
                             const double *x, const double *gamma, int rows,
                             int d)
{
    if (d_output == NULL || x == NULL || gamma == NULL) return ATTN_ERR_NULL;
    size_t count;
    int status = check_args(rows, d, &count);
    if (status != ATTN_OK) return status;
    if (!attn__all_finite(x, count) || !attn__all_finite(d_output, count) ||
        !attn__all_finite(gamma, (size_t)d))
        return ATTN_ERR_NOT_FINITE;
    if (grad_gamma != NULL) attn__zero(grad_gamma, (size_t)d);
    if (grad_beta != NULL) attn__zero(grad_beta, (size_t)d);
    for (size_t r = 0; r < (size_t)rows; r++) {
        const double *x_row = x + r * (size_t)d;
        const double *dy = d_output + r * (size_t)d;
        double mu, rs;
        row_stats(x_row, d, &mu, &rs);
        if (!isfinite(mu) || !isfinite(rs)) return ATTN_ERR_OVERFLOW_VALUE;
        /* With x̂ = (x − mean) rstd and g = dy ∘ gamma:
         * dx = rstd (g − mean(g) − x̂ mean(g ∘ x̂)). */
        double sum_g = 0.0, sum_gx = 0.0;
        for (int j = 0; j < d; j++) {
            const double xhat = (x_row[j] - mu) * rs;
            const double g = dy[j] * gamma[j];
            sum_g += g;
            sum_gx += g * xhat;
            if (grad_gamma != NULL) grad_gamma[j] += dy[j] * xhat;
            if (grad_beta != NULL) grad_beta[j] += dy[j];
        }
        const double mean_g = sum_g / d, mean_gx = sum_gx / d;
        if (grad_x == NULL) continue;
        double *dx = grad_x + r * (size_t)d;
        for (int j = 0; j < d; j++) {
            const double xhat = (x_row[j] - mu) * rs;
            dx[j] = rs * (dy[j] * gamma[j] - mean_g - xhat * mean_gx);
        }
    }
    return attn__all_finite(grad_x, count) &&
                   attn__all_finite(grad_gamma, (size_t)d) &&
                   attn__all_finite(grad_beta, (size_t)d)
               ? ATTN_OK
               : ATTN_ERR_OVERFLOW_VALUE;
}
