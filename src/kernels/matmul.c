/* matmul.c: the matrix products the backward passes share. */
#include "attention.h"
#include "kernels/kernels.h"

void attn__matmul_nt(double *out, size_t out_stride, const double *a,
                     size_t a_stride, const double *b, size_t b_stride,
                     int rows, int cols, int n, int accumulate)
{
    for (int r = 0; r < rows; r++) {
        double *out_row = out + (size_t)r * out_stride;
        const double *a_row = a + (size_t)r * a_stride;
        int c = 0;
        /* Four columns at a time: four independent sums, each added in the
         * same order as attn__dot, so the results are the same bits. */
        for (; c + 4 <= cols; c += 4) {
            const double *b0 = b + (size_t)c * b_stride;
            const double *b1 = b0 + b_stride, *b2 = b1 + b_stride;
            const double *b3 = b2 + b_stride;
            double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
            for (int k = 0; k < n; k++) {
                const double x = a_row[k];
                s0 += x * b0[k];
                s1 += x * b1[k];
                s2 += x * b2[k];
                s3 += x * b3[k];
            }
            const double sums[4] = {s0, s1, s2, s3};
            for (int j = 0; j < 4; j++)
                out_row[c + j] = accumulate ? out_row[c + j] + sums[j] : sums[j];
        }
        for (; c < cols; c++) {
            const double sum = attn__dot(a_row, b + (size_t)c * b_stride, n);
            out_row[c] = accumulate ? out_row[c] + sum : sum;
        }
    }
}

void attn__matmul_tn_add(double *restrict out, const double *restrict a,
                         const double *restrict b,
                         int rows, int n, int cols)
{
    for (int r = 0; r < rows; r++) {
        const double *a_row = a + (size_t)r * (size_t)n;
        const double *b_row = b + (size_t)r * (size_t)cols;
        for (int i = 0; i < n; i++) {
            double *out_row = out + (size_t)i * (size_t)cols;
            const double scale = a_row[i];
            for (int c = 0; c < cols; c++) out_row[c] += scale * b_row[c];
        }
    }
}

void attn__colsum_add(double *out, const double *a, int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        const double *a_row = a + (size_t)r * (size_t)cols;
        for (int c = 0; c < cols; c++) out[c] += a_row[c];
    }
}

void attn__zero(double *x, size_t count)
{
    for (size_t i = 0; i < count; i++) x[i] = 0.0;
}
