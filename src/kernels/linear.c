/* linear.c: linear attention with phi(x) = elu(x) + 1, O(n) in length. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

/* Work in doubles: S [d_k, d_v], z [d_k], one phi row [d_k]. */
size_t attn_linear_work_size(int d_k, int d_v)
{
    size_t cells;
    if (d_k <= 0 || d_v <= 0 ||
        attn__mul_size(&cells, (size_t)d_k, (size_t)d_v + 2) != ATTN_OK)
        return 0;
    return cells;
}

/* elu(x) + 1 is x + 1 for x > 0 and (exp(x) - 1) + 1 = exp(x) otherwise;
 * exp(x) directly avoids the rounding of subtracting and adding 1. */
static void phi_row(double *out, const double *x, int n)
{
    for (int a = 0; a < n; a++) out[a] = x[a] > 0.0 ? x[a] + 1.0 : exp(x[a]);
}

typedef struct linear_state {
    double *s;   /* [d_k, d_v] Σ phi(k_j)ᵀ v_j */
    double *z;   /* [d_k] Σ phi(k_j) */
    double *phi; /* [d_k] */
    int d_k, d_v;
} linear_state;

static void add_key(const linear_state *st, const double *k_row,
                    const double *v_row)
{
    phi_row(st->phi, k_row, st->d_k);
    for (int a = 0; a < st->d_k; a++) {
        st->z[a] += st->phi[a];
        double *s_row = st->s + (size_t)a * (size_t)st->d_v;
        for (int c = 0; c < st->d_v; c++) s_row[c] += st->phi[a] * v_row[c];
    }
}

static int output_row(double *out, const linear_state *st,
                      const double *q_row)
{
    phi_row(st->phi, q_row, st->d_k);
    const double denominator = attn__dot(st->phi, st->z, st->d_k);
    /* phi > 0 mathematically, but exp underflows to 0 below about -745. */
    if (!(denominator > 0.0) || !isfinite(denominator))
        return ATTN_ERR_OVERFLOW_VALUE;
    for (int c = 0; c < st->d_v; c++) {
        double numerator = 0.0;
        for (int a = 0; a < st->d_k; a++)
            numerator += st->phi[a] * st->s[(size_t)a * (size_t)st->d_v + c];
        out[c] = numerator / denominator;
    }
    return attn__all_finite(out, (size_t)st->d_v) ? ATTN_OK
                                                   : ATTN_ERR_OVERFLOW_VALUE;
}

/* One batch item. Causal: query i sees keys 0..min(i, n_k - 1), so the
 * sums grow by one key per query (prefix sums). */
static int run_item(double *output, const double *q, const double *k,
                    const double *v, int n_q, int n_k, int causal,
                    const linear_state *st)
{
    const size_t d_k = (size_t)st->d_k, d_v = (size_t)st->d_v;
    for (size_t a = 0; a < d_k * d_v; a++) st->s[a] = 0.0;
    for (size_t a = 0; a < d_k; a++) st->z[a] = 0.0;
    int keys_added = 0;
    for (int i = 0; i < n_q; i++) {
        const int visible = causal ? (i + 1 < n_k ? i + 1 : n_k) : n_k;
        for (; keys_added < visible; keys_added++)
            add_key(st, k + (size_t)keys_added * d_k,
                    v + (size_t)keys_added * d_v);
        int status = output_row(output + (size_t)i * d_v, st,
                                q + (size_t)i * d_k);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}

int attn_linear(double *output, const double *q, const double *k,
                const double *v, int batch, int n_q, int n_k, int d_k,
                int d_v, int causal, double *work)
{
    if (output == NULL || q == NULL || k == NULL || v == NULL || work == NULL)
        return ATTN_ERR_NULL;
    int status = attn__check_attention_sizes(batch, n_q, n_k, d_k, d_v, 0);
    if (status != ATTN_OK) return status;
    if (causal != 0 && causal != 1) return ATTN_ERR_OPTION;
    if (attn_linear_work_size(d_k, d_v) == 0) return ATTN_ERR_SIZE_OVERFLOW;
    const size_t bq = (size_t)n_q * (size_t)d_k, bk = (size_t)n_k * (size_t)d_k;
    const size_t bv = (size_t)n_k * (size_t)d_v, bo = (size_t)n_q * (size_t)d_v;
    if (!attn__all_finite(q, (size_t)batch * bq) ||
        !attn__all_finite(k, (size_t)batch * bk) ||
        !attn__all_finite(v, (size_t)batch * bv))
        return ATTN_ERR_NOT_FINITE;

    const linear_state st = {
        .s = work, .z = work + (size_t)d_k * (size_t)d_v,
        .phi = work + (size_t)d_k * (size_t)d_v + (size_t)d_k,
        .d_k = d_k, .d_v = d_v,
    };
    for (int b = 0; b < batch; b++) {
        status = run_item(output + (size_t)b * bo, q + (size_t)b * bq,
                          k + (size_t)b * bk, v + (size_t)b * bv, n_q, n_k,
                          causal, &st);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}
