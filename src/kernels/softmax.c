/* softmax.c: the numerically stable row softmax. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

void attn__softmax_row(double *row, int n)
{
    double max = -INFINITY;
    for (int j = 0; j < n; j++)
        if (row[j] > max) max = row[j];
    if (max == -INFINITY) {
        /* No key may be attended to: weights 0 rather than 0/0. */
        for (int j = 0; j < n; j++) row[j] = 0.0;
        return;
    }
    /* Subtracting the maximum keeps every exp in (0, 1] and the sum in
     * [1, n], so nothing overflows; exp(-INFINITY) is exactly 0. */
    double sum = 0.0;
    for (int j = 0; j < n; j++) {
        row[j] = exp(row[j] - max);
        sum += row[j];
    }
    for (int j = 0; j < n; j++) row[j] /= sum;
}

int attn_softmax_rows(double *out, const double *in, int rows, int cols)
{
    if (out == NULL || in == NULL) return ATTN_ERR_NULL;
    const int sizes[] = {rows, cols};
    int status = attn__check_sizes(sizes, 2);
    if (status != ATTN_OK) return status;
    size_t count;
    status = attn__count3(&count, rows, cols, 1);
    if (status != ATTN_OK) return status;
    for (size_t i = 0; i < count; i++)
        if (isnan(in[i]) || in[i] == INFINITY) return ATTN_ERR_NOT_FINITE;

    for (size_t r = 0; r < (size_t)rows; r++) {
        double *out_row = out + r * (size_t)cols;
        const double *in_row = in + r * (size_t)cols;
        if (out_row != in_row)
            for (int j = 0; j < cols; j++) out_row[j] = in_row[j];
        attn__softmax_row(out_row, cols);
    }
    return ATTN_OK;
}
