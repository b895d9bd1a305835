/* sdpa_f32_backward.c: gradients of attn_sdpa_f32's output, row by row.
 * For query row i, with P its softmax row (masked entries 0) and m_j the
 * dropout factor of (i, j) (1 without dropout, else 0 or 1/(1 - p)):
 *   W_j   = P_j m_j                     the weights that multiply V
 *   dV_j += W_j dO_i
 *   dP_j  = (dO_i · v_j) m_j
 *   dS_j  = P_j (dP_j - Σ_l P_l dP_l)   through the softmax
 *   dQ_i  = scale Σ_j dS_j k_j,   dK_j += scale dS_j q_i
 * P is recomputed (exactly, two passes) rather than stored: O(T) work. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

size_t attn_sdpa_f32_backward_work_size(int n_k)
{
    size_t cells;
    if (n_k <= 0 || attn__mul_size(&cells, (size_t)n_k, 2) != ATTN_OK) return 0;
    return cells;
}

static float dot_f32(const float *a, const float *b, int n)
{
    float sum = 0.0f;
    for (int c = 0; c < n; c++) sum += a[c] * b[c];
    return sum;
}

typedef struct backward_item {
    float *dq, *dk, *dv; /* one batch item each, or NULL */
    const float *d_output, *q, *k, *v;
    int b, n_q, n_k, d_k, d_v;
    float scale;
    const attn__sdpa_plan *plan;
    float *p, *dp; /* [n_k] each */
} backward_item;

/* P for row i into it->p (masked 0); 0 if a score overflowed. */
static int softmax_row(const backward_item *it, int i)
{
    const float *q_row = it->q + (size_t)i * (size_t)it->d_k;
    float max = -INFINITY;
    for (int j = 0; j < it->n_k; j++) {
        const attn_mask *mask = it->plan->mask;
        if (mask != NULL && !attn_mask_allows(mask, it->n_k, it->b, i, j)) {
            it->p[j] = -INFINITY;
            continue;
        }
        const float s = it->scale * dot_f32(q_row,
                                            it->k + (size_t)j * (size_t)it->d_k,
                                            it->d_k);
        if (!isfinite(s)) return 0;
        it->p[j] = s;
        if (s > max) max = s;
    }
    if (max == -INFINITY) { /* fully masked: no gradient flows */
        for (int j = 0; j < it->n_k; j++) it->p[j] = 0.0f;
        return 1;
    }
    float sum = 0.0f;
    for (int j = 0; j < it->n_k; j++) {
        it->p[j] = it->p[j] == -INFINITY ? 0.0f : expf(it->p[j] - max);
        sum += it->p[j];
    }
    const float inv = 1.0f / sum;
    for (int j = 0; j < it->n_k; j++) it->p[j] *= inv;
    return 1;
}

static float dropout_factor(const backward_item *it, int i, int j)
{
    const attn__sdpa_plan *plan = it->plan;
    if (plan->dropout == 0.0) return 1.0f;
    return attn_dropout_keeps(plan->seed, plan->dropout, it->b, i, j)
               ? (float)(1.0 / (1.0 - plan->dropout))
               : 0.0f;
}

static int backward_row(const backward_item *it, int i)
{
    if (!softmax_row(it, i)) return ATTN_ERR_OVERFLOW_VALUE;
    const int n_k = it->n_k, d_k = it->d_k, d_v = it->d_v;
    const float *d_out = it->d_output + (size_t)i * (size_t)d_v;
    const float *q_row = it->q + (size_t)i * (size_t)d_k;
    float row_sum = 0.0f; /* Σ_l P_l dP_l */
    for (int j = 0; j < n_k; j++) {
        const float p = it->p[j];
        if (p == 0.0f) {
            it->dp[j] = 0.0f;
            continue;
        }
        const float m = dropout_factor(it, i, j);
        if (it->dv != NULL && m != 0.0f) {
            float *dv_row = it->dv + (size_t)j * (size_t)d_v;
            const float w = p * m;
            for (int c = 0; c < d_v; c++) dv_row[c] += w * d_out[c];
        }
        it->dp[j] = m == 0.0f
                        ? 0.0f
                        : m * dot_f32(d_out, it->v + (size_t)j * (size_t)d_v,
                                      d_v);
        row_sum += p * it->dp[j];
    }
    float *dq_row = it->dq != NULL ? it->dq + (size_t)i * (size_t)d_k : NULL;
    if (dq_row != NULL)
        for (int c = 0; c < d_k; c++) dq_row[c] = 0.0f;
    for (int j = 0; j < n_k; j++) {
        if (it->p[j] == 0.0f) continue;
        const float ds = it->scale * it->p[j] * (it->dp[j] - row_sum);
        const float *k_row = it->k + (size_t)j * (size_t)d_k;
        if (dq_row != NULL)
            for (int c = 0; c < d_k; c++) dq_row[c] += ds * k_row[c];
        if (it->dk != NULL) {
            float *dk_row = it->dk + (size_t)j * (size_t)d_k;
            for (int c = 0; c < d_k; c++) dk_row[c] += ds * q_row[c];
        }
    }
    if (dq_row != NULL && !attn__all_finite_f32(dq_row, (size_t)d_k))
        return ATTN_ERR_OVERFLOW_VALUE;
    return ATTN_OK;
}

int attn_sdpa_f32_backward(float *dq, float *dk, float *dv,
                           const float *d_output, const float *q,
                           const float *k, const float *v, int batch, int n_q,
                           int n_k, int d_k, int d_v, const attn_options *opts,
                           float *work)
{
    if (d_output == NULL || q == NULL || k == NULL || v == NULL || work == NULL)
        return ATTN_ERR_NULL;
    int status = attn__check_attention_sizes(batch, n_q, n_k, d_k, d_v, 0);
    if (status != ATTN_OK) return status;
    if (attn_sdpa_f32_backward_work_size(n_k) == 0)
        return ATTN_ERR_SIZE_OVERFLOW;
    attn__sdpa_plan plan;
    status = attn__sdpa_plan_init(&plan, opts, batch, n_q, n_k, d_k);
    if (status != ATTN_OK) return status;
    const float scale = (float)plan.scale;
    if (!isfinite(scale)) return ATTN_ERR_RANGE;
    const size_t bq = (size_t)n_q * (size_t)d_k, bk = (size_t)n_k * (size_t)d_k;
    const size_t bv = (size_t)n_k * (size_t)d_v, bo = (size_t)n_q * (size_t)d_v;
    if (!attn__all_finite_f32(q, (size_t)batch * bq) ||
        !attn__all_finite_f32(k, (size_t)batch * bk) ||
        !attn__all_finite_f32(v, (size_t)batch * bv) ||
        !attn__all_finite_f32(d_output, (size_t)batch * bo))
        return ATTN_ERR_NOT_FINITE;
    if (dk != NULL)
        for (size_t a = 0; a < (size_t)batch * bk; a++) dk[a] = 0.0f;
    if (dv != NULL)
        for (size_t a = 0; a < (size_t)batch * bv; a++) dv[a] = 0.0f;

    for (int b = 0; b < batch; b++) {
        const backward_item it = {
            .dq = dq != NULL ? dq + (size_t)b * bq : NULL,
            .dk = dk != NULL ? dk + (size_t)b * bk : NULL,
            .dv = dv != NULL ? dv + (size_t)b * bv : NULL,
            .d_output = d_output + (size_t)b * bo,
            .q = q + (size_t)b * bq,
            .k = k + (size_t)b * bk,
            .v = v + (size_t)b * bv,
            .b = b,
            .n_q = n_q,
            .n_k = n_k,
            .d_k = d_k,
            .d_v = d_v,
            .scale = scale,
            .plan = &plan,
            .p = work,
            .dp = work + n_k,
        };
        for (int i = 0; i < n_q; i++) {
            status = backward_row(&it, i);
            if (status != ATTN_OK) return status;
        }
        if ((it.dk != NULL && !attn__all_finite_f32(it.dk, bk)) ||
            (it.dv != NULL && !attn__all_finite_f32(it.dv, bv)))
            return ATTN_ERR_OVERFLOW_VALUE;
    }
    return ATTN_OK;
}
