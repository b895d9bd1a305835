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
        for (int c = 0; c < cols; c++) {
            const double sum = attn__dot(a_row, b + (size_t)c * b_stride, n);
            out_row[c] = accumulate ? out_row[c] + sum : sum;
        }
    }
}

void attn__matmul_tn_add(double *out, const double *a, const double *b,
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
