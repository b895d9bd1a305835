/* linear_backward.c: gradients of linear attention (phi = elu + 1),
 * causal or not, in O(n) like the forward pass. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

/* Work in doubles: S [d_k, d_v] (later its gradient), z [d_k] (later its
 * gradient), two rows [d_k], and per query its denominator and
 * dL/d(denominator) [2 * n_q]. */
size_t attn_linear_backward_work_size(int n_q, int d_k, int d_v)
{
    size_t cells, length;
    if (n_q <= 0 || d_k <= 0 || d_v <= 0 ||
        attn__mul_size(&cells, (size_t)d_k, (size_t)d_v + 3) != ATTN_OK ||
        attn__add_size(&length, cells, 2 * (size_t)n_q) != ATTN_OK)
        return 0;
    return length;
}

static double phi(double x)
{
    return x > 0.0 ? x + 1.0 : exp(x);
}
static double phi_slope(double x)
{
    return x > 0.0 ? 1.0 : exp(x);
}

typedef struct item {
    const double *q, *k, *v, *d_output; /* this batch item's rows */
    double *grad_q, *grad_k, *grad_v;   /* or NULL */
    int n_q, n_k, d_k, d_v, causal;
} item;

/* Keys visible to query i: the first visible(i) of them. */
static int visible(const item *it, int i)
{
    return it->causal ? (i + 1 < it->n_k ? i + 1 : it->n_k) : it->n_k;
}

static int item_backward(const item *it, double *work)
{
    const int d_k = it->d_k, d_v = it->d_v;
    double *s = work;                          /* [d_k, d_v] */
    double *z = s + (size_t)d_k * (size_t)d_v; /* [d_k] */
    double *f = z + d_k;                       /* [d_k] phi row */
    double *df = f + d_k;                      /* [d_k] */
    double *den = df + d_k;                    /* [n_q] */
    double *d_den = den + it->n_q;             /* [n_q] */
    attn__zero(s, (size_t)d_k * (size_t)d_v);
    attn__zero(z, (size_t)d_k);

    /* Forward order: the prefix sums S_i and z_i, each output again, and
     * the query gradients, which need S_i and z_i. */
    int added = 0;
    for (int i = 0; i < it->n_q; i++) {
        for (; added < visible(it, i); added++) {
            const double *k_row = it->k + (size_t)added * d_k;
            const double *v_row = it->v + (size_t)added * d_v;
            for (int a = 0; a < d_k; a++) {
                const double fa = phi(k_row[a]);
                z[a] += fa;
                for (int c = 0; c < d_v; c++)
                    s[(size_t)a * d_v + c] += fa * v_row[c];
            }
        }
        const double *q_row = it->q + (size_t)i * d_k;
        const double *do_row = it->d_output + (size_t)i * d_v;
        for (int a = 0; a < d_k; a++) f[a] = phi(q_row[a]);
        den[i] = attn__dot(f, z, d_k);
        if (!(den[i] > 0.0) || !isfinite(den[i]))
            return ATTN_ERR_OVERFLOW_VALUE;
        /* out = f S / den: dL/d(den) = −(dO · out) / den. */
        double dot_out = 0.0;
        for (int c = 0; c < d_v; c++) {
            double numerator = 0.0;
            for (int a = 0; a < d_k; a++)
                numerator += f[a] * s[(size_t)a * d_v + c];
            dot_out += do_row[c] * (numerator / den[i]);
        }
        d_den[i] = -dot_out / den[i];
        if (it->grad_q == NULL) continue;
        double *gq = it->grad_q + (size_t)i * d_k;
        for (int a = 0; a < d_k; a++) {
            const double d_f = attn__dot(s + (size_t)a * d_v, do_row, d_v) /
                                   den[i] +
                               z[a] * d_den[i];
            gq[a] = d_f * phi_slope(q_row[a]);
        }
    }

    /* Reverse order: S and z now gather dL/dS and dL/dz over the queries
     * that see each key (suffix sums); key j is complete once every query
     * with visible(i) > j is in. */
    attn__zero(s, (size_t)d_k * (size_t)d_v);
    attn__zero(z, (size_t)d_k);
    for (int j = visible(it, it->n_q - 1); j < it->n_k; j++) {
        /* Seen by no query: no gradient. */
        if (it->grad_k != NULL)
            attn__zero(it->grad_k + (size_t)j * d_k, (size_t)d_k);
        if (it->grad_v != NULL)
            attn__zero(it->grad_v + (size_t)j * d_v, (size_t)d_v);
    }
    int done = visible(it, it->n_q - 1); /* keys j >= done are complete */
    for (int i = it->n_q - 1; i >= 0; i--) {
        const double *q_row = it->q + (size_t)i * d_k;
        const double *do_row = it->d_output + (size_t)i * d_v;
        for (int a = 0; a < d_k; a++) {
            const double fa = phi(q_row[a]);
            z[a] += fa * d_den[i];
            for (int c = 0; c < d_v; c++)
                s[(size_t)a * d_v + c] += fa * do_row[c] / den[i];
        }
        const int first = i > 0 ? visible(it, i - 1) : 0;
        for (int j = first; j < done; j++) {
            const double *k_row = it->k + (size_t)j * d_k;
            const double *v_row = it->v + (size_t)j * d_v;
            for (int a = 0; a < d_k; a++) f[a] = phi(k_row[a]);
            if (it->grad_v != NULL) {
                double *gv = it->grad_v + (size_t)j * d_v;
                for (int c = 0; c < d_v; c++) {
                    double sum = 0.0;
                    for (int a = 0; a < d_k; a++)
                        sum += f[a] * s[(size_t)a * d_v + c];
                    gv[c] = sum;
                }
            }
            if (it->grad_k != NULL) {
                double *gk = it->grad_k + (size_t)j * d_k;
                for (int a = 0; a < d_k; a++)
                    gk[a] = (attn__dot(s + (size_t)a * d_v, v_row, d_v) +
                             z[a]) *
                            phi_slope(k_row[a]);
            }
        }
        if (first < done) done = first;
    }
    return ATTN_OK;
}

int attn_linear_backward(double *grad_q, double *grad_k, double *grad_v,
                         const double *d_output, const double *q,
                         const double *k, const double *v, int batch, int n_q,
                         int n_k, int d_k, int d_v, int causal, double *work)
{
    if (d_output == NULL || q == NULL || k == NULL || v == NULL || work == NULL)
        return ATTN_ERR_NULL;
    int status = attn__check_attention_sizes(batch, n_q, n_k, d_k, d_v, 0);
    if (status != ATTN_OK) return status;
    if (causal != 0 && causal != 1) return ATTN_ERR_OPTION;
    if (attn_linear_backward_work_size(n_q, d_k, d_v) == 0)
        return ATTN_ERR_SIZE_OVERFLOW;
    const size_t bq = (size_t)n_q * (size_t)d_k, bk = (size_t)n_k * (size_t)d_k;
    const size_t bv = (size_t)n_k * (size_t)d_v, bo = (size_t)n_q * (size_t)d_v;
    if (!attn__all_finite(q, (size_t)batch * bq) ||
        !attn__all_finite(k, (size_t)batch * bk) ||
        !attn__all_finite(v, (size_t)batch * bv) ||
        !attn__all_finite(d_output, (size_t)batch * bo))
        return ATTN_ERR_NOT_FINITE;
    for (int b = 0; b < batch; b++) {
        const item it = {q + (size_t)b * bq,
                         k + (size_t)b * bk,
                         v + (size_t)b * bv,
                         d_output + (size_t)b * bo,
                         grad_q ? grad_q + (size_t)b * bq : NULL,
                         grad_k ? grad_k + (size_t)b * bk : NULL,
                         grad_v ? grad_v + (size_t)b * bv : NULL,
                         n_q,
                         n_k,
                         d_k,
                         d_v,
                         causal};
        status = item_backward(&it, work);
        if (status != ATTN_OK) return status;
    }
    const int finite = attn__all_finite(grad_q, (size_t)batch * bq) &&
                       attn__all_finite(grad_k, (size_t)batch * bk) &&
                       attn__all_finite(grad_v, (size_t)batch * bv);
    return finite ? ATTN_OK : ATTN_ERR_OVERFLOW_VALUE;
}
