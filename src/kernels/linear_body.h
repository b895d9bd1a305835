/*
 * linear_body.h: linear attention with phi(x) = elu(x) + 1, O(n) in
 * length, written once and compiled once per precision (linear.c in
 * double, linear_f32.c in float). The file that includes it defines:
 *
 *   LIN_T               the element type
 *   LIN_EXP(x)          e^x in that type
 *   LIN_ALL_FINITE(x, n) 1 if no entry of x[0..n) is NaN or infinite
 *   LIN_BY_INVERSE      1: an output row is multiplied by 1 / denominator
 *                       (one division, the loop vectorises; float32);
 *                       0: each entry is divided (float64)
 *   LIN_NAME            the public function, LIN_WORK_SIZE its work size
 *
 * The loops run over contiguous rows so the compiler can vectorise them;
 * each output entry still sums its terms in key-dimension order, so the
 * loop order changes no bits.
 */

/* Work in elements: S [d_k, d_v], z [d_k], one phi row [d_k]. */
size_t LIN_WORK_SIZE(int d_k, int d_v)
{
    size_t cells;
    if (d_k <= 0 || d_v <= 0 ||
        attn__mul_size(&cells, (size_t)d_k, (size_t)d_v + 2) != ATTN_OK)
        return 0;
    return cells;
}

/* elu(x) + 1 is x + 1 for x > 0 and (exp(x) - 1) + 1 = exp(x) otherwise;
 * exp(x) directly avoids the rounding of subtracting and adding 1. */
static void phi_row(LIN_T *out, const LIN_T *x, int n)
{
    for (int a = 0; a < n; a++) out[a] = x[a] > 0 ? x[a] + 1 : LIN_EXP(x[a]);
}

typedef struct linear_state {
    LIN_T *s;   /* [d_k, d_v] Σ phi(k_j)ᵀ v_j */
    LIN_T *z;   /* [d_k] Σ phi(k_j) */
    LIN_T *phi; /* [d_k] */
    int d_k, d_v;
} linear_state;

static void add_key(const linear_state *st, const LIN_T *k_row,
                    const LIN_T *v_row)
{
    phi_row(st->phi, k_row, st->d_k);
    for (int a = 0; a < st->d_k; a++) {
        const LIN_T f = st->phi[a];
        st->z[a] += f;
        LIN_T *s_row = st->s + (size_t)a * (size_t)st->d_v;
        for (int c = 0; c < st->d_v; c++) s_row[c] += f * v_row[c];
    }
}

static int output_row(LIN_T *out, const linear_state *st, const LIN_T *q_row)
{
    phi_row(st->phi, q_row, st->d_k);
    LIN_T denominator = 0;
    for (int a = 0; a < st->d_k; a++) denominator += st->phi[a] * st->z[a];
    /* phi > 0 mathematically, but exp underflows to 0 (below about -745
     * in double, -104 in float). */
    if (!(denominator > 0) || !isfinite(denominator))
        return ATTN_ERR_OVERFLOW_VALUE;
    for (int c = 0; c < st->d_v; c++) out[c] = 0;
    for (int a = 0; a < st->d_k; a++) {
        const LIN_T f = st->phi[a];
        const LIN_T *s_row = st->s + (size_t)a * (size_t)st->d_v;
        for (int c = 0; c < st->d_v; c++) out[c] += f * s_row[c];
    }
#if LIN_BY_INVERSE
    const LIN_T inverse = 1 / denominator;
    for (int c = 0; c < st->d_v; c++) out[c] *= inverse;
#else
    for (int c = 0; c < st->d_v; c++) out[c] /= denominator;
#endif
    return LIN_ALL_FINITE(out, (size_t)st->d_v) ? ATTN_OK
                                                : ATTN_ERR_OVERFLOW_VALUE;
}

/* One batch item. Causal: query i sees keys 0..min(i, n_k - 1), so the
 * sums grow by one key per query (prefix sums). */
static int run_item(LIN_T *output, const LIN_T *q, const LIN_T *k,
                    const LIN_T *v, int n_q, int n_k, int causal,
                    const linear_state *st)
{
    const size_t d_k = (size_t)st->d_k, d_v = (size_t)st->d_v;
    for (size_t a = 0; a < d_k * d_v; a++) st->s[a] = 0;
    for (size_t a = 0; a < d_k; a++) st->z[a] = 0;
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

int LIN_NAME(LIN_T *output, const LIN_T *q, const LIN_T *k, const LIN_T *v,
             int batch, int n_q, int n_k, int d_k, int d_v, int causal,
             LIN_T *work)
{
    if (output == NULL || q == NULL || k == NULL || v == NULL || work == NULL)
        return ATTN_ERR_NULL;
    int status = attn__check_attention_sizes(batch, n_q, n_k, d_k, d_v, 0);
    if (status != ATTN_OK) return status;
    if (causal != 0 && causal != 1) return ATTN_ERR_OPTION;
    if (LIN_WORK_SIZE(d_k, d_v) == 0) return ATTN_ERR_SIZE_OVERFLOW;
    const size_t bq = (size_t)n_q * (size_t)d_k, bk = (size_t)n_k * (size_t)d_k;
    const size_t bv = (size_t)n_k * (size_t)d_v, bo = (size_t)n_q * (size_t)d_v;
    if (!LIN_ALL_FINITE(q, (size_t)batch * bq) ||
        !LIN_ALL_FINITE(k, (size_t)batch * bk) ||
        !LIN_ALL_FINITE(v, (size_t)batch * bv))
        return ATTN_ERR_NOT_FINITE;

    const linear_state st = {
        .s = work,
        .z = work + (size_t)d_k * (size_t)d_v,
        .phi = work + (size_t)d_k * (size_t)d_v + (size_t)d_k,
        .d_k = d_k,
        .d_v = d_v,
    };
    for (int b = 0; b < batch; b++) {
        status = run_item(output + (size_t)b * bo, q + (size_t)b * bq,
                          k + (size_t)b * bk, v + (size_t)b * bv, n_q, n_k,
                          causal, &st);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}
