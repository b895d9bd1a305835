/*
 * Random cases (seeded, so replayable) against straightforward reference
 * implementations written here in long double, independent of the engine's
 * helpers (their own mask test, their own loops). The engine computes in
 * double: every entry must agree to a relative error of 1e-5 (atol 1e-12
 * for entries near 0). In practice they agree to 1e-12 (atol 1e-14):
 * the wide bound only leaves room for other compilers and libms.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "allclose.h"
#include "attention.h"
#include "test_rng.h"

enum { MAX_B = 3, MAX_N = 9, MAX_D = 8, CASES = 200 };
enum { MAX_GRID = MAX_B * MAX_N * MAX_N, MAX_ROWS = MAX_B * MAX_N * MAX_D };

static const double RTOL = 1e-5, ATOL = 1e-12;

/* The sizes of one random case, drawn in this order so that a seed
 * replays the same cases. */
typedef struct case_sizes {
    int batch, n_q, n_k, d_k, d_v;
} case_sizes;

static case_sizes draw_sizes(test_rng *rng)
{
    case_sizes size;
    size.batch = test_rng_int(rng, 1, MAX_B);
    size.n_q = test_rng_int(rng, 1, MAX_N);
    size.n_k = test_rng_int(rng, 1, MAX_N);
    size.d_k = test_rng_int(rng, 1, MAX_D);
    size.d_v = test_rng_int(rng, 1, MAX_D);
    return size;
}

static void assert_matches(const double *actual, const long double *reference,
                           size_t count, const char *what, int case_number)
{
    for (size_t n = 0; n < count; n++)
        if (!close_enough(actual[n], (double)reference[n], RTOL, ATOL))
            fail_msg("case %d, %s[%zu]: engine %.17g, reference %.17Lg",
                     case_number, what, n, actual[n], reference[n]);
}

/* ---- the mask, from its definition ---- */

typedef struct ref_mask {
    unsigned kinds;
    int key_length[MAX_B];
    unsigned char allowed[MAX_N * MAX_N];
    int window, stride;
} ref_mask;

static int ref_allows(const ref_mask *m, int n_k, int b, int i, int j)
{
    int ok = 1;
    if (m->kinds & ATTN_MASK_CAUSAL) ok = ok && j <= i;
    if (m->kinds & ATTN_MASK_KEY_PADDING) ok = ok && j < m->key_length[b];
    if (m->kinds & ATTN_MASK_CUSTOM) ok = ok && m->allowed[i * n_k + j];
    if (m->kinds & ATTN_MASK_LOCAL) ok = ok && abs(i - j) <= m->window;
    if (m->kinds & ATTN_MASK_STRIDED)
        ok = ok && j <= i && ((i - j) < m->stride || (i - j) % m->stride == 0);
    return ok;
}

static void random_mask(ref_mask *m, attn_options *opts, test_rng *rng,
                        int batch, int n_q, int n_k)
{
    m->kinds = (unsigned)test_rng_int(rng, 0, 31);
    for (int b = 0; b < batch; b++)
        m->key_length[b] = test_rng_int(rng, 0, n_k);
    for (int n = 0; n < n_q * n_k; n++)
        m->allowed[n] = test_rng_uniform(rng, 0.0, 1.0) < 0.7;
    m->window = test_rng_int(rng, 0, 3);
    m->stride = test_rng_int(rng, 1, 4);
    opts->mask.kinds = m->kinds;
    opts->mask.key_length = m->key_length;
    opts->mask.allowed = m->allowed;
    opts->mask.window = m->window;
    opts->mask.stride = m->stride;
}

/* ---- SDPA ---- */

/* One [n_q, n_k] block: q [n_q, d_k] (rows qs apart), k, v likewise. */
static void ref_attention_block(
    long double *scores, long double *scaled, long double *weights,
    long double *output, const long double *q, size_t qs, const long double *k,
    size_t ks, const long double *v, size_t vs, size_t out_stride, int n_q,
    int n_k, int d_k, int d_v, long double scale, const ref_mask *m, int b)
{
    for (int i = 0; i < n_q; i++) {
        long double max = -INFINITY;
        for (int j = 0; j < n_k; j++) {
            long double s = 0;
            for (int c = 0; c < d_k; c++) s += q[i * qs + c] * k[j * ks + c];
            scores[i * n_k + j] = s;
            const int ok = m == NULL || ref_allows(m, n_k, b, i, j);
            scaled[i * n_k + j] = ok ? s * scale : -INFINITY;
            if (ok && s * scale > max) max = s * scale;
        }
        long double sum = 0;
        for (int j = 0; j < n_k; j++) {
            const long double x = scaled[i * n_k + j];
            weights[i * n_k + j] = x == -INFINITY ? 0 : expl(x - max);
            sum += weights[i * n_k + j];
        }
        for (int j = 0; j < n_k; j++)
            if (sum > 0) weights[i * n_k + j] /= sum;
        for (int c = 0; c < d_v; c++) {
            long double o = 0;
            for (int j = 0; j < n_k; j++)
                o += weights[i * n_k + j] * v[j * vs + c];
            output[i * out_stride + c] = o;
        }
    }
}

static void widen(long double *out, const double *in, size_t count)
{
    for (size_t n = 0; n < count; n++) out[n] = in[n];
}

static void test_random_sdpa_matches_long_double_reference(void **state)
{
    (void)state;
    test_rng rng;
    test_rng_seed(&rng, 20240601);
    for (int t = 0; t < CASES; t++) {
        const case_sizes size = draw_sizes(&rng);
        const int batch = size.batch, n_q = size.n_q, n_k = size.n_k;
        const int d_k = size.d_k, d_v = size.d_v;
        static double q[MAX_ROWS], k[MAX_ROWS], v[MAX_ROWS];
        const double range = test_rng_uniform(&rng, 0.1, 10.0);
        test_rng_fill(&rng, q, (size_t)(batch * n_q * d_k), -range, range);
        test_rng_fill(&rng, k, (size_t)(batch * n_k * d_k), -range, range);
        test_rng_fill(&rng, v, (size_t)(batch * n_k * d_v), -3.0, 3.0);

        attn_options opts;
        attn_options_init(&opts);
        opts.scale_kind = test_rng_int(&rng, 0, 2);
        opts.scale_factor = test_rng_uniform(&rng, -2.0, 2.0);
        const long double scale = opts.scale_kind == ATTN_SCALE_INV_SQRT_DK
                                      ? 1.0L / sqrtl(d_k)
                                  : opts.scale_kind == ATTN_SCALE_NONE
                                      ? 1.0L
                                      : opts.scale_factor;
        ref_mask mask;
        random_mask(&mask, &opts, &rng, batch, n_q, n_k);

        static double scores[MAX_GRID], scaled[MAX_GRID], weights[MAX_GRID];
        static double output[MAX_ROWS];
        double work[MAX_N];
        assert_int_equal(attn_sdpa(scores, scaled, weights, output, q, k, v,
                                   batch, n_q, n_k, d_k, d_v, &opts, work),
                         ATTN_OK);

        static long double lq[MAX_ROWS], lk[MAX_ROWS], lv[MAX_ROWS];
        static long double r_scores[MAX_GRID], r_scaled[MAX_GRID];
        static long double r_weights[MAX_GRID], r_output[MAX_ROWS];
        widen(lq, q, (size_t)(batch * n_q * d_k));
        widen(lk, k, (size_t)(batch * n_k * d_k));
        widen(lv, v, (size_t)(batch * n_k * d_v));
        for (int b = 0; b < batch; b++)
            ref_attention_block(
                r_scores + b * n_q * n_k, r_scaled + b * n_q * n_k,
                r_weights + b * n_q * n_k, r_output + b * n_q * d_v,
                lq + b * n_q * d_k, (size_t)d_k, lk + b * n_k * d_k,
                (size_t)d_k, lv + b * n_k * d_v, (size_t)d_v, (size_t)d_v, n_q,
                n_k, d_k, d_v, scale, &mask, b);
        const size_t grid = (size_t)(batch * n_q * n_k);
        assert_matches(scores, r_scores, grid, "scores", t);
        assert_matches(scaled, r_scaled, grid, "scaled", t);
        assert_matches(weights, r_weights, grid, "weights", t);
        assert_matches(output, r_output, (size_t)(batch * n_q * d_v), "output",
                       t);
    }
}

/* ---- multi-head ---- */

/* out [rows, cols] = x [rows, in] @ w [in, cols] + bias */
static void ref_affine(long double *out, const double *x, const double *w,
                       const double *bias, int rows, int in, int cols)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            long double s = bias ? bias[c] : 0;
            for (int n = 0; n < in; n++)
                s += (long double)x[r * in + n] * w[n * cols + c];
            out[r * cols + c] = s;
        }
}

static void ref_affine_long(long double *out, const long double *x,
                            const double *w, const double *bias, int rows,
                            int in, int cols)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            long double s = bias ? bias[c] : 0;
            for (int n = 0; n < in; n++) s += x[r * in + n] * w[n * cols + c];
            out[r * cols + c] = s;
        }
}

enum { MAX_H = 4, MAX_DM = 12 };

static void test_random_multihead_matches_long_double_reference(void **state)
{
    (void)state;
    test_rng rng;
    test_rng_seed(&rng, 777);
    for (int t = 0; t < CASES / 2; t++) {
        attn_mha_dims d;
        d.batch = test_rng_int(&rng, 1, MAX_B);
        d.n_q = test_rng_int(&rng, 1, MAX_N);
        d.n_kv = test_rng_int(&rng, 1, MAX_N);
        d.d_q_in = test_rng_int(&rng, 1, MAX_D);
        d.d_kv_in = test_rng_int(&rng, 1, MAX_D);
        d.num_heads = test_rng_int(&rng, 1, MAX_H);
        d.d_model = d.num_heads * test_rng_int(&rng, 1, MAX_DM / MAX_H);
        d.d_out = test_rng_int(&rng, 1, MAX_D);
        const int self = test_rng_int(&rng, 0, 1);
        if (self) {
            d.n_kv = d.n_q;
            d.d_kv_in = d.d_q_in;
        }
        static double xq[MAX_B * MAX_N * MAX_D], xkv[MAX_B * MAX_N * MAX_D];
        static double wq[MAX_D * MAX_DM], wk[MAX_D * MAX_DM];
        static double wv[MAX_D * MAX_DM], wo[MAX_DM * MAX_D];
        static double bq[MAX_DM], bk[MAX_DM], bv[MAX_DM], bo[MAX_D];
        test_rng_fill(&rng, xq, (size_t)(d.batch * d.n_q * d.d_q_in), -2, 2);
        test_rng_fill(&rng, xkv, (size_t)(d.batch * d.n_kv * d.d_kv_in), -2, 2);
        test_rng_fill(&rng, wq, (size_t)(d.d_q_in * d.d_model), -1, 1);
        test_rng_fill(&rng, wk, (size_t)(d.d_kv_in * d.d_model), -1, 1);
        test_rng_fill(&rng, wv, (size_t)(d.d_kv_in * d.d_model), -1, 1);
        test_rng_fill(&rng, wo, (size_t)(d.d_model * d.d_out), -1, 1);
        test_rng_fill(&rng, bq, MAX_DM, -0.5, 0.5);
        test_rng_fill(&rng, bk, MAX_DM, -0.5, 0.5);
        test_rng_fill(&rng, bv, MAX_DM, -0.5, 0.5);
        test_rng_fill(&rng, bo, MAX_D, -0.5, 0.5);
        const int with_bias = test_rng_int(&rng, 0, 1);
        const attn_mha_params p = {wq,
                                   wk,
                                   wv,
                                   wo,
                                   with_bias ? bq : NULL,
                                   with_bias ? bk : NULL,
                                   with_bias ? bv : NULL,
                                   with_bias ? bo : NULL};
        attn_options opts;
        attn_options_init(&opts);
        ref_mask mask;
        random_mask(&mask, &opts, &rng, d.batch, d.n_q, d.n_kv);

        static double weights[MAX_B * MAX_H * MAX_N * MAX_N];
        static double concat[MAX_B * MAX_N * MAX_DM];
        static double output[MAX_B * MAX_N * MAX_D];
        static double work[4 * MAX_N * MAX_DM + MAX_N];
        assert_true(attn_multihead_work_size(&d) <= 4 * MAX_N * MAX_DM + MAX_N);
        const attn_mha_outputs out = {
            .weights = weights, .concat = concat, .output = output};
        assert_int_equal(
            attn_multihead(&out, xq, self ? NULL : xkv, &p, &d, &opts, work),
            ATTN_OK);

        const double *kv_in = self ? xq : xkv;
        const int dh = d.d_model / d.num_heads;
        for (int b = 0; b < d.batch; b++) {
            long double Q[MAX_N * MAX_DM], K[MAX_N * MAX_DM], V[MAX_N * MAX_DM];
            long double r_concat[MAX_N * MAX_DM], r_out[MAX_N * MAX_D];
            ref_affine(Q, xq + b * d.n_q * d.d_q_in, wq, p.bq, d.n_q, d.d_q_in,
                       d.d_model);
            ref_affine(K, kv_in + b * d.n_kv * d.d_kv_in, wk, p.bk, d.n_kv,
                       d.d_kv_in, d.d_model);
            ref_affine(V, kv_in + b * d.n_kv * d.d_kv_in, wv, p.bv, d.n_kv,
                       d.d_kv_in, d.d_model);
            for (int h = 0; h < d.num_heads; h++) {
                long double s[MAX_N * MAX_N], sc[MAX_N * MAX_N];
                long double w[MAX_N * MAX_N];
                ref_attention_block(s, sc, w, r_concat + h * dh, Q + h * dh,
                                    (size_t)d.d_model, K + h * dh,
                                    (size_t)d.d_model, V + h * dh,
                                    (size_t)d.d_model, (size_t)d.d_model, d.n_q,
                                    d.n_kv, dh, dh, 1.0L / sqrtl(dh), &mask, b);
                assert_matches(weights +
                                   ((b * d.num_heads + h) * d.n_q * d.n_kv),
                               w, (size_t)(d.n_q * d.n_kv), "weights", t);
            }
            ref_affine_long(r_out, r_concat, wo, p.bo, d.n_q, d.d_model,
                            d.d_out);
            assert_matches(concat + b * d.n_q * d.d_model, r_concat,
                           (size_t)(d.n_q * d.d_model), "concat", t);
            assert_matches(output + b * d.n_q * d.d_out, r_out,
                           (size_t)(d.n_q * d.d_out), "output", t);
        }
    }
}

/* ---- additive and Luong ---- */

/* From one row of scores: softmax weights and the context over keys. */
static void ref_softmax_context(long double *weights, long double *context,
                                const long double *scores, const double *keys,
                                int n_k, int d_h)
{
    long double max = scores[0], sum = 0;
    for (int j = 1; j < n_k; j++) max = scores[j] > max ? scores[j] : max;
    for (int j = 0; j < n_k; j++) sum += weights[j] = expl(scores[j] - max);
    for (int j = 0; j < n_k; j++) weights[j] /= sum;
    for (int c = 0; c < d_h; c++) {
        context[c] = 0;
        for (int j = 0; j < n_k; j++)
            context[c] += weights[j] * keys[j * d_h + c];
    }
}

typedef struct scoring_case {
    int n_q, n_k, d_s, d_h, d_a;
    double query[MAX_N * MAX_D], keys[MAX_N * MAX_D];
    double w[2 * MAX_D * MAX_D], b[MAX_D], v[MAX_D];
} scoring_case;

static void scoring_case_fill(scoring_case *c, test_rng *rng)
{
    c->n_q = test_rng_int(rng, 1, MAX_N);
    c->n_k = test_rng_int(rng, 1, MAX_N);
    c->d_s = test_rng_int(rng, 1, MAX_D);
    c->d_h = test_rng_int(rng, 1, MAX_D);
    c->d_a = test_rng_int(rng, 1, MAX_D);
    test_rng_fill(rng, c->query, MAX_N * MAX_D, -2, 2);
    test_rng_fill(rng, c->keys, MAX_N * MAX_D, -2, 2);
    test_rng_fill(rng, c->w, 2 * MAX_D * MAX_D, -1, 1);
    test_rng_fill(rng, c->b, MAX_D, -0.5, 0.5);
    test_rng_fill(rng, c->v, MAX_D, -2, 2);
}

/* score_ij = v · tanh(s_i @ w_s + h_j @ w_h + b) */
static void ref_additive_scores(long double *scores, const scoring_case *c,
                                const double *w_s, const double *w_h)
{
    for (int i = 0; i < c->n_q; i++)
        for (int j = 0; j < c->n_k; j++) {
            long double score = 0;
            for (int a = 0; a < c->d_a; a++) {
                long double pre = c->b[a];
                for (int n = 0; n < c->d_s; n++)
                    pre += (long double)c->query[i * c->d_s + n] *
                           w_s[n * c->d_a + a];
                for (int n = 0; n < c->d_h; n++)
                    pre += (long double)c->keys[j * c->d_h + n] *
                           w_h[n * c->d_a + a];
                score += c->v[a] * tanhl(pre);
            }
            scores[i * c->n_k + j] = score;
        }
}

static void assert_scoring_matches(const scoring_case *c,
                                   const long double *r_scores,
                                   const double *scores, const double *weights,
                                   const double *context, int t)
{
    for (int i = 0; i < c->n_q; i++) {
        long double w[MAX_N], ctx[MAX_D];
        ref_softmax_context(w, ctx, r_scores + i * c->n_k, c->keys, c->n_k,
                            c->d_h);
        assert_matches(weights + i * c->n_k, w, (size_t)c->n_k, "weights", t);
        assert_matches(context + i * c->d_h, ctx, (size_t)c->d_h, "context", t);
    }
    assert_matches(scores, r_scores, (size_t)(c->n_q * c->n_k), "scores", t);
}

static void test_random_additive_matches_long_double_reference(void **state)
{
    (void)state;
    test_rng rng;
    test_rng_seed(&rng, 99);
    for (int t = 0; t < CASES; t++) {
        static scoring_case c;
        scoring_case_fill(&c, &rng);
        const double *w_h = c.w + MAX_D * MAX_D;
        double scores[MAX_N * MAX_N], weights[MAX_N * MAX_N];
        double context[MAX_N * MAX_D], work[(MAX_N + 2) * MAX_D + MAX_N];
        assert_int_equal(attn_additive(NULL, scores, weights, context, c.query,
                                       c.keys, c.w, w_h, c.b, c.v, c.n_q, c.n_k,
                                       c.d_s, c.d_h, c.d_a, work),
                         ATTN_OK);
        long double r_scores[MAX_N * MAX_N];
        ref_additive_scores(r_scores, &c, c.w, w_h);
        assert_scoring_matches(&c, r_scores, scores, weights, context, t);
    }
}

static void test_random_luong_matches_long_double_reference(void **state)
{
    (void)state;
    test_rng rng;
    test_rng_seed(&rng, 100);
    for (int t = 0; t < CASES; t++) {
        static scoring_case c;
        scoring_case_fill(&c, &rng);
        const int method = t % 3;
        if (method == ATTN_LUONG_DOT) c.d_h = c.d_s;
        long double r_scores[MAX_N * MAX_N];
        if (method == ATTN_LUONG_CONCAT) {
            ref_additive_scores(r_scores, &c, c.w, c.w + c.d_s * c.d_a);
        } else {
            for (int i = 0; i < c.n_q; i++)
                for (int j = 0; j < c.n_k; j++) {
                    long double s = 0;
                    for (int n = 0; n < c.d_s; n++) {
                        long double key = 0; /* h_j, or (h_j @ W)_n */
                        if (method == ATTN_LUONG_DOT)
                            key = c.keys[j * c.d_h + n];
                        else
                            for (int m = 0; m < c.d_h; m++)
                                key += (long double)c.keys[j * c.d_h + m] *
                                       c.w[m * c.d_s + n];
                        s += c.query[i * c.d_s + n] * key;
                    }
                    r_scores[i * c.n_k + j] = s;
                }
        }
        double scores[MAX_N * MAX_N], weights[MAX_N * MAX_N];
        double context[MAX_N * MAX_D], work[(MAX_N + 2) * MAX_D + MAX_N];
        assert_int_equal(attn_luong(NULL, scores, weights, context, c.query,
                                    c.keys, c.w, c.b, c.v, method, c.n_q, c.n_k,
                                    c.d_s, c.d_h, c.d_a, work),
                         ATTN_OK);
        assert_scoring_matches(&c, r_scores, scores, weights, context, t);
    }
}

/* ---- linear attention, by its quadratic form ---- */

static long double ref_phi(double x)
{
    return x > 0 ? (long double)x + 1 : expl(x);
}

static void test_random_linear_matches_long_double_reference(void **state)
{
    (void)state;
    test_rng rng;
    test_rng_seed(&rng, 101);
    for (int t = 0; t < CASES; t++) {
        const case_sizes size = draw_sizes(&rng);
        const int batch = size.batch, n_q = size.n_q, n_k = size.n_k;
        const int d_k = size.d_k, d_v = size.d_v;
        const int causal = t % 2;
        static double q[MAX_ROWS], k[MAX_ROWS], v[MAX_ROWS], out[MAX_ROWS];
        test_rng_fill(&rng, q, MAX_ROWS, -4, 4);
        test_rng_fill(&rng, k, MAX_ROWS, -4, 4);
        test_rng_fill(&rng, v, MAX_ROWS, -3, 3);
        double work[MAX_D * MAX_D + 2 * MAX_D];
        assert_int_equal(
            attn_linear(out, q, k, v, batch, n_q, n_k, d_k, d_v, causal, work),
            ATTN_OK);
        for (int b = 0; b < batch; b++)
            for (int i = 0; i < n_q; i++) {
                long double num[MAX_D] = {0}, den = 0;
                const int last = causal ? (i < n_k - 1 ? i : n_k - 1) : n_k - 1;
                for (int j = 0; j <= last; j++) {
                    long double a = 0;
                    for (int c = 0; c < d_k; c++)
                        a += ref_phi(q[(b * n_q + i) * d_k + c]) *
                             ref_phi(k[(b * n_k + j) * d_k + c]);
                    den += a;
                    for (int c = 0; c < d_v; c++)
                        num[c] += a * v[(b * n_k + j) * d_v + c];
                }
                long double expected[MAX_D];
                for (int c = 0; c < d_v; c++) expected[c] = num[c] / den;
                assert_matches(out + (b * n_q + i) * d_v, expected, (size_t)d_v,
                               "output", t);
            }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_sdpa_matches_long_double_reference),
        cmocka_unit_test(test_random_multihead_matches_long_double_reference),
        cmocka_unit_test(test_random_additive_matches_long_double_reference),
        cmocka_unit_test(test_random_luong_matches_long_double_reference),
        cmocka_unit_test(test_random_linear_matches_long_double_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
