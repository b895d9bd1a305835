/* linear_f32.c: linear attention (linear.c) in float32. The loops run over
 * contiguous rows so the compiler can vectorise them. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

size_t attn_linear_f32_work_size(int d_k, int d_v)
{
    return attn_linear_work_size(d_k, d_v); /* the same counts, in floats */
}

static void phi_row(float *out, const float *x, int n)
{
    for (int a = 0; a < n; a++) out[a] = x[a] > 0.0f ? x[a] + 1.0f : expf(x[a]);
}

typedef struct linear_state {
    float *s;   /* [d_k, d_v] */
    float *z;   /* [d_k] */
    float *phi; /* [d_k] */
    int d_k, d_v;
} linear_state;

static void add_key(const linear_state *st, const float *k_row,
                    const float *v_row)
{
    phi_row(st->phi, k_row, st->d_k);
    for (int a = 0; a < st->d_k; a++) {
        const float f = st->phi[a];
        st->z[a] += f;
        float *s_row = st->s + (size_t)a * (size_t)st->d_v;
        for (int c = 0; c < st->d_v; c++) s_row[c] += f * v_row[c];
    }
}

static int output_row(float *out, const linear_state *st, const float *q_row)
{
    phi_row(st->phi, q_row, st->d_k);
    float denominator = 0.0f;
    for (int a = 0; a < st->d_k; a++) denominator += st->phi[a] * st->z[a];
    if (!(denominator > 0.0f) || !isfinite(denominator))
        return ATTN_ERR_OVERFLOW_VALUE;
    for (int c = 0; c < st->d_v; c++) out[c] = 0.0f;
    for (int a = 0; a < st->d_k; a++) {
        const float f = st->phi[a];
        const float *s_row = st->s + (size_t)a * (size_t)st->d_v;
        for (int c = 0; c < st->d_v; c++) out[c] += f * s_row[c];
    }
    const float inv = 1.0f / denominator;
    for (int c = 0; c < st->d_v; c++) out[c] *= inv;
    return attn__all_finite_f32(out, (size_t)st->d_v) ? ATTN_OK
                                                      : ATTN_ERR_OVERFLOW_VALUE;
}

int attn_linear_f32(float *output, const float *q, const float *k,
                    const float *v, int batch, int n_q, int n_k, int d_k,
                    int d_v, int causal, float *work)
{
    if (output == NULL || q == NULL || k == NULL || v == NULL || work == NULL)
        return ATTN_ERR_NULL;
    int status = attn__check_attention_sizes(batch, n_q, n_k, d_k, d_v, 0);
    if (status != ATTN_OK) return status;
    if (causal != 0 && causal != 1) return ATTN_ERR_OPTION;
    if (attn_linear_f32_work_size(d_k, d_v) == 0) return ATTN_ERR_SIZE_OVERFLOW;
    const size_t bq = (size_t)n_q * (size_t)d_k, bk = (size_t)n_k * (size_t)d_k;
    const size_t bv = (size_t)n_k * (size_t)d_v, bo = (size_t)n_q * (size_t)d_v;
    if (!attn__all_finite_f32(q, (size_t)batch * bq) || !attn__all_finite_f32(k, (size_t)batch * bk) ||
        !attn__all_finite_f32(v, (size_t)batch * bv))
        return ATTN_ERR_NOT_FINITE;

    const linear_state st = {
        .s = work, .z = work + (size_t)d_k * (size_t)d_v,
        .phi = work + (size_t)d_k * (size_t)d_v + (size_t)d_k,
        .d_k = d_k, .d_v = d_v,
    };
    for (int b = 0; b < batch; b++) {
        const float *qb = q + (size_t)b * bq, *kb = k + (size_t)b * bk;
        const float *vb = v + (size_t)b * bv;
        float *ob = output + (size_t)b * bo;
        for (size_t a = 0; a < (size_t)d_k * (size_t)d_v; a++) st.s[a] = 0.0f;
        for (int a = 0; a < d_k; a++) st.z[a] = 0.0f;
        int keys_added = 0;
        for (int i = 0; i < n_q; i++) {
            const int visible = causal ? (i + 1 < n_k ? i + 1 : n_k) : n_k;
            for (; keys_added < visible; keys_added++)
                add_key(&st, kb + (size_t)keys_added * (size_t)d_k,
                        vb + (size_t)keys_added * (size_t)d_v);
            status = output_row(ob + (size_t)i * (size_t)d_v, &st,
                                qb + (size_t)i * (size_t)d_k);
            if (status != ATTN_OK) return status;
        }
    }
    return ATTN_OK;
}
