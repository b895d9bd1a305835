/* matmul.c: the matrix products the backward passes share. */
#include "attention.h"
#include "kernels/kernels.h"

enum { NT_PANEL = 256 }; /* inner lengths up to this go through a panel */

/* out[r][c] (+)= Σ_k a[r][k] panel[k][c] for `nr` rows (at most 4) and the
 * panel's four columns, sixteen sums in registers, each added from 0 in the
 * order of k as attn__dot adds: the same bits. */
static void nt_block(double *out, size_t out_stride, const double *a,
                     size_t a_stride, const double *panel, int nr, int n,
                     int accumulate)
{
    double s[4][4] = {{0.0}};
    for (int r = 0; r < nr; r++) {
        const double *a_row = a + (size_t)r * a_stride;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (int k = 0; k < n; k++) {
            const double x = a_row[k];
            const double *y = panel + 4 * (size_t)k;
            s0 += x * y[0];
            s1 += x * y[1];
            s2 += x * y[2];
            s3 += x * y[3];
        }
        s[r][0] = s0;
        s[r][1] = s1;
        s[r][2] = s2;
        s[r][3] = s3;
    }
    for (int r = 0; r < nr; r++) {
        double *out_row = out + (size_t)r * out_stride;
        for (int c = 0; c < 4; c++)
            out_row[c] = accumulate ? out_row[c] + s[r][c] : s[r][c];
    }
}

void attn__matmul_nt(double *out, size_t out_stride, const double *a,
                     size_t a_stride, const double *b, size_t b_stride,
                     int rows, int cols, int n, int accumulate)
{
    /* Four columns of bᵀ side by side, so each k reads one contiguous
     * quadruple. */
    double panel[4 * NT_PANEL];
    const int whole = n <= NT_PANEL ? cols - cols % 4 : 0;
    for (int c = 0; c < whole; c += 4) {
        for (int k = 0; k < n; k++)
            for (int j = 0; j < 4; j++)
                panel[4 * k + j] = b[(size_t)(c + j) * b_stride + (size_t)k];
        for (int r0 = 0; r0 < rows; r0 += 4)
            nt_block(out + (size_t)r0 * out_stride + (size_t)c, out_stride,
                     a + (size_t)r0 * a_stride, a_stride, panel,
                     rows - r0 < 4 ? rows - r0 : 4, n, accumulate);
    }
    for (int r = 0; r < rows; r++) {
        double *out_row = out + (size_t)r * out_stride;
        const double *a_row = a + (size_t)r * a_stride;
        for (int c = whole; c < cols; c++) {
            const double sum = attn__dot(a_row, b + (size_t)c * b_stride, n);
            out_row[c] = accumulate ? out_row[c] + sum : sum;
        }
    }
}

/* out[i][c] += Σ_r a[r][i] b[r][c], adding the terms to out[i][c] one by
 * one in the order of r: a block of four i by four c in registers walks
 * down the rows, so out is read and written once per block. */
void attn__matmul_tn_add(double *restrict out, const double *restrict a,
                         const double *restrict b, int rows, int n, int cols)
{
    const size_t an = (size_t)n, bc = (size_t)cols;
    const int whole_i = n - n % 4, whole_c = cols - cols % 4;
    for (int i = 0; i < whole_i; i += 4)
        for (int c = 0; c < whole_c; c += 4) {
            double s[4][4];
            for (int ii = 0; ii < 4; ii++)
                for (int cc = 0; cc < 4; cc++)
                    s[ii][cc] = out[(size_t)(i + ii) * bc + (size_t)(c + cc)];
            for (int r = 0; r < rows; r++) {
                const double *x = a + (size_t)r * an + (size_t)i;
                const double *y = b + (size_t)r * bc + (size_t)c;
                for (int ii = 0; ii < 4; ii++)
                    for (int cc = 0; cc < 4; cc++) s[ii][cc] += x[ii] * y[cc];
            }
            for (int ii = 0; ii < 4; ii++)
                for (int cc = 0; cc < 4; cc++)
                    out[(size_t)(i + ii) * bc + (size_t)(c + cc)] = s[ii][cc];
        }
    /* The rows and columns left over, one entry at a time. */
    for (int i = 0; i < n; i++)
        for (int c = i < whole_i ? whole_c : 0; c < cols; c++) {
            double sum = out[(size_t)i * bc + (size_t)c];
            for (int r = 0; r < rows; r++)
                sum += a[(size_t)r * an + (size_t)i] *
                       b[(size_t)r * bc + (size_t)c];
            out[(size_t)i * bc + (size_t)c] = sum;
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
