/* Multi-head attention: exact values, equivalence with SDPA, errors. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "allclose.h"
#include "attention.h"
#include "test_rng.h"

/* Tutorial 001: "cat sat mat", X (3x4), W_Q = W_K = W_V = W_O = I, one
 * head, so the scale is 1/sqrt(4). Exact values from python3's decimal
 * module. The tutorial prints scores row 1 as [1.09, 1.07, 0.65]: the
 * last entry is 0.55; its weights and outputs are rounded further on. */
static void
test_multihead_tutorial_001_cat_sat_mat_matches_exact_values(void **state)
{
    (void)state;
    static const double identity[16] = {1, 0, 0, 0, 0, 1, 0, 0,
                                        0, 0, 1, 0, 0, 0, 0, 1};
    const double x[12] = {1.0, 0.5, 0.2, 0.8, 0.3, 0.9,
                          0.1, 0.4, 0.6, 0.2, 0.7, 0.3};
    const double expected_scores[9] = {1.93, 1.09, 1.08, 1.09, 1.07,
                                       0.55, 1.08, 0.55, 0.98};
    const double expected_weights[9] = {
        0.43274745293940908, 0.28433533773690473, 0.28291720932368619,
        0.36318346354475911, 0.35956972770293577, 0.27724680875230512,
        0.36785866215140334, 0.28222335435271473, 0.34991798349588193};
    const double expected_output[12] = {
        0.68779837985469228, 0.52885897229765599, 0.31302507088815262,
        0.54480726024339499, 0.63740246710702286, 0.56065384845548272,
        0.30266643160585899, 0.5175487045426731,  0.66247645855474691,
        0.50791394669232126, 0.34673665631266953, 0.5121516665109731};
    const attn_mha_params params = {identity, identity, identity, identity,
                                    NULL,     NULL,     NULL,     NULL};
    const attn_mha_dims dims = {1, 3, 3, 4, 4, 4, 1, 4};
    double scores[9], weights[9], output[12];
    double work[64];
    assert_true(attn_multihead_work_size(&dims) <= 64);
    const attn_mha_outputs out = {
        .scores = scores, .weights = weights, .output = output};
    assert_int_equal(attn_multihead(&out, x, NULL, &params, &dims, NULL, work),
                     ATTN_OK);
    assert_allclose(scores, expected_scores, 9, 1e-15, 0.0);
    assert_allclose(weights, expected_weights, 9, 1e-14, 0.0);
    assert_allclose(output, expected_output, 12, 1e-14, 0.0);
}

/* Two heads, biases and a non-identity W_o, by python3's decimal module. */
static const double X2[4] = {1, 0, 0.5, -1};
static const double WQ2[8] = {1, 0, 0.5, -1, 0, 1, 1, 0.5};
static const double BQ2[4] = {0, 0.1, 0, 0};
static const double WK2[8] = {0.5, 1, 0, 1, 1, 0, -1, 0};
static const double WV2[8] = {1, 2, 0, 1, 0, 1, 1, -1};
static const double BV2[4] = {0.5, 0, 0, 0};
static const double WO2[8] = {1, 0, 0, 1, 1, 1, -1, 0.5};
static const double BO2[2] = {0.25, -0.25};
static const attn_mha_params PARAMS2 = {WQ2, WK2,  WV2, WO2,
                                        BQ2, NULL, BV2, BO2};
static const attn_mha_dims DIMS2 = {1, 2, 2, 2, 2, 4, 2, 2};

static void
test_multihead_two_heads_with_biases_match_exact_values(void **state)
{
    (void)state;
    const double expected_q[8] = {1, 0.1, 0.5, -1, 0.5, -0.9, -0.75, -1};
    const double expected_k[8] = {0.5, 1, 0, 1, -0.75, 0.5, 1, 0.5};
    const double expected_v[8] = {1.5, 2, 0, 1, 1, 0, -1, 1.5};
    /* [head, n_q, n_kv] */
    const double expected_scores[8] = {0.6, -0.7, -0.65, -0.825,
                                       -1,  0,    -1,    -1.25};
    const double expected_weights[8] = {
        0.71488698373718895, 0.28511301626281105, 0.53089650650523657,
        0.46910349349476343, 0.33023845067334306, 0.66976154932665688,
        0.54407944334922598, 0.45592055665077402};
    const double expected_concat[8] = {
        1.3574434918685945,   1.4297739674743779, -0.66976154932665688,
        1.3348807746633284,   1.2654482532526183, 1.0617930130104731,
        -0.45592055665077402, 1.2279602783253869};
    const double expected_heads[8] = {1.3574434918685945,   1.4297739674743779,
                                      1.2654482532526183,   1.0617930130104731,
                                      -0.66976154932665688, 1.3348807746633284,
                                      -0.45592055665077402, 1.2279602783253869};
    const double expected_output[4] = {-0.3971988321213909, 1.1774528054793851,
                                       -0.16843258172354272,
                                       0.96985259552239267};
    double q[8], k[8], v[8], scores[8], scaled[8], weights[8], heads[8];
    double concat[8], output[4], work[64];
    const attn_mha_outputs out = {q,       k,     v,      scores, scaled,
                                  weights, heads, concat, output};
    assert_int_equal(
        attn_multihead(&out, X2, NULL, &PARAMS2, &DIMS2, NULL, work), ATTN_OK);
    assert_allclose(q, expected_q, 8, 1e-15, 0.0);
    assert_allclose(k, expected_k, 8, 1e-15, 0.0);
    assert_allclose(v, expected_v, 8, 1e-15, 0.0);
    assert_allclose(scores, expected_scores, 8, 1e-15, 1e-16);
    for (int i = 0; i < 8; i++)
        assert_true(close_enough(scaled[i], scores[i] / sqrt(2.0), 1e-15, 0));
    assert_allclose(weights, expected_weights, 8, 1e-14, 0.0);
    assert_allclose(heads, expected_heads, 8, 1e-14, 0.0);
    assert_allclose(concat, expected_concat, 8, 1e-14, 0.0);
    assert_allclose(output, expected_output, 4, 1e-14, 0.0);
}

/* Outputs are independent of which intermediates the caller keeps. */
static void test_multihead_intermediate_outputs_are_optional(void **state)
{
    (void)state;
    double q[8], k[8], v[8], scores[8], scaled[8], weights[8], heads[8];
    double concat[8], full[4], bare[4], work[64];
    const attn_mha_outputs all = {q,       k,     v,      scores, scaled,
                                  weights, heads, concat, full};
    const attn_mha_outputs only_output = {.output = bare};
    assert_int_equal(
        attn_multihead(&all, X2, NULL, &PARAMS2, &DIMS2, NULL, work), ATTN_OK);
    assert_int_equal(
        attn_multihead(&only_output, X2, NULL, &PARAMS2, &DIMS2, NULL, work),
        ATTN_OK);
    assert_memory_equal(full, bare, sizeof full);
}

enum { B = 2, N = 4, NKV = 3, DIN = 3, DKV = 2, DM = 6, H = 3, DOUT = 5 };

typedef struct random_mha {
    double xq[B * N * DIN], xkv[B * NKV * DKV];
    double wq[DIN * DM], wk[DKV * DM], wv[DKV * DM], wo[DM * DOUT];
    double bq[DM], bk[DM], bv[DM], bo[DOUT];
} random_mha;

static void random_mha_fill(random_mha *m, uint64_t seed)
{
    test_rng rng;
    test_rng_seed(&rng, seed);
    double *const arrays[] = {m->xq, m->xkv, m->wq, m->wk, m->wv,
                              m->wo, m->bq,  m->bk, m->bv, m->bo};
    const size_t counts[] = {B * N * DIN, B * NKV * DKV, DIN * DM, DKV * DM,
                             DKV * DM,    DM * DOUT,     DM,       DM,
                             DM,          DOUT};
    for (int a = 0; a < 10; a++)
        test_rng_fill(&rng, arrays[a], counts[a], -1.0, 1.0);
}

static attn_mha_params random_mha_params(const random_mha *m)
{
    const attn_mha_params p = {m->wq, m->wk, m->wv, m->wo,
                               m->bq, m->bk, m->bv, m->bo};
    return p;
}

/* Each head is SDPA on its column block of the projected Q, K and V, with
 * d_k = d_head: the same arithmetic, so the comparison is exact. */
static void test_multihead_each_head_is_sdpa_on_its_column_block(void **state)
{
    (void)state;
    random_mha m;
    random_mha_fill(&m, 21);
    const attn_mha_params params = random_mha_params(&m);
    const attn_mha_dims dims = {B, N, NKV, DIN, DKV, DM, H, DOUT};
    double q[B * N * DM], k[B * NKV * DM], v[B * NKV * DM];
    double weights[B * H * N * NKV], heads[B * H * N * (DM / H)];
    double work[256];
    assert_true(attn_multihead_work_size(&dims) <= 256);
    attn_options opts;
    attn_options_init(&opts);
    opts.mask.kinds = ATTN_MASK_CAUSAL;
    const attn_mha_outputs out = {
        .q = q, .k = k, .v = v, .weights = weights, .head_outputs = heads};
    assert_int_equal(
        attn_multihead(&out, m.xq, m.xkv, &params, &dims, &opts, work),
        ATTN_OK);
    enum { DH = DM / H };
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            double qh[N * DH], kh[NKV * DH], vh[NKV * DH];
            for (int i = 0; i < N; i++)
                memcpy(&qh[i * DH], &q[(b * N + i) * DM + h * DH],
                       DH * sizeof(double));
            for (int j = 0; j < NKV; j++) {
                memcpy(&kh[j * DH], &k[(b * NKV + j) * DM + h * DH],
                       DH * sizeof(double));
                memcpy(&vh[j * DH], &v[(b * NKV + j) * DM + h * DH],
                       DH * sizeof(double));
            }
            double w[N * NKV], o[N * DH], row[NKV];
            assert_int_equal(attn_sdpa(NULL, NULL, w, o, qh, kh, vh, 1, N, NKV,
                                       DH, DH, &opts, row),
                             ATTN_OK);
            assert_allclose(&weights[(b * H + h) * N * NKV], w, N * NKV, 0, 0);
            assert_allclose(&heads[(b * H + h) * N * DH], o, N * DH, 0, 0);
        }
}

/* With one head and identity projections (W_o too), multi-head attention
 * is SDPA on the inputs themselves. */
static void
test_multihead_one_head_with_identity_projections_equals_sdpa(void **state)
{
    (void)state;
    static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    test_rng rng;
    test_rng_seed(&rng, 22);
    double xq[B * N * 3], xkv[B * NKV * 3];
    test_rng_fill(&rng, xq, B * N * 3, -2.0, 2.0);
    test_rng_fill(&rng, xkv, B * NKV * 3, -2.0, 2.0);
    const attn_mha_params params = {identity, identity, identity, identity,
                                    NULL,     NULL,     NULL,     NULL};
    const attn_mha_dims dims = {B, N, NKV, 3, 3, 3, 1, 3};
    double output[B * N * 3], expected[B * N * 3], work[64], row[NKV];
    const attn_mha_outputs out = {.output = output};
    assert_int_equal(attn_multihead(&out, xq, xkv, &params, &dims, NULL, work),
                     ATTN_OK);
    assert_int_equal(attn_sdpa(NULL, NULL, NULL, expected, xq, xkv, xkv, B, N,
                               NKV, 3, 3, NULL, row),
                     ATTN_OK);
    assert_allclose(output, expected, B * N * 3, 0.0, 0.0);
}

static void test_multihead_null_x_kv_means_self_attention(void **state)
{
    (void)state;
    random_mha m;
    random_mha_fill(&m, 23);
    attn_mha_params params = random_mha_params(&m);
    params.wk = m.wq; /* self-attention: K and V read x_q, d_kv_in = DIN */
    params.wv = m.wq;
    const attn_mha_dims dims = {B, N, N, DIN, DIN, DM, H, DOUT};
    double self[B * N * DOUT], explicit_kv[B * N * DOUT], work[256];
    const attn_mha_outputs a = {.output = self}, b = {.output = explicit_kv};
    assert_int_equal(attn_multihead(&a, m.xq, NULL, &params, &dims, NULL, work),
                     ATTN_OK);
    assert_int_equal(attn_multihead(&b, m.xq, m.xq, &params, &dims, NULL, work),
                     ATTN_OK);
    assert_memory_equal(self, explicit_kv, sizeof self);
}

static void test_multihead_mask_applies_to_every_head(void **state)
{
    (void)state;
    random_mha m;
    random_mha_fill(&m, 24);
    const attn_mha_params params = random_mha_params(&m);
    const attn_mha_dims dims = {B, N, NKV, DIN, DKV, DM, H, DOUT};
    const int key_length[B] = {1, 2};
    attn_options opts;
    attn_options_init(&opts);
    opts.mask.kinds = ATTN_MASK_KEY_PADDING;
    opts.mask.key_length = key_length;
    double scaled[B * H * N * NKV], weights[B * H * N * NKV], work[256];
    const attn_mha_outputs out = {.scaled = scaled, .weights = weights};
    assert_int_equal(
        attn_multihead(&out, m.xq, m.xkv, &params, &dims, &opts, work),
        ATTN_OK);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < N; i++)
                for (int j = 0; j < NKV; j++) {
                    const int at = ((b * H + h) * N + i) * NKV + j;
                    if (j >= key_length[b]) {
                        assert_true(weights[at] == 0.0);
                        assert_true(scaled[at] == -INFINITY);
                    } else {
                        assert_true(weights[at] > 0.0);
                    }
                }
}

/* Heads get different dropout patterns: the hash sees b * heads + h. */
static void test_multihead_dropout_differs_between_heads(void **state)
{
    (void)state;
    random_mha m;
    random_mha_fill(&m, 25);
    const attn_mha_params params = random_mha_params(&m);
    const attn_mha_dims dims = {1, N, NKV, DIN, DKV, DM, H, DOUT};
    attn_options opts;
    attn_options_init(&opts);
    opts.dropout = 0.5;
    opts.seed = 3;
    double weights[H * N * NKV], work[256];
    const attn_mha_outputs out = {.weights = weights};
    assert_int_equal(
        attn_multihead(&out, m.xq, m.xkv, &params, &dims, &opts, work),
        ATTN_OK);
    for (int h = 0; h < H; h++)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < NKV; j++)
                assert_int_equal(weights[(h * N + i) * NKV + j] != 0.0,
                                 attn_dropout_keeps(3, 0.5, h, i, j));
}

static void test_multihead_work_size_counts_projections_and_a_row(void **state)
{
    (void)state;
    const attn_mha_dims dims = {B, N, NKV, DIN, DKV, DM, H, DOUT};
    assert_int_equal(attn_multihead_work_size(&dims),
                     (2 * N + 2 * NKV) * DM + NKV);
    attn_mha_dims bad = dims;
    bad.num_heads = 4;
    assert_int_equal(attn_multihead_work_size(&bad), 0);
    bad = dims;
    bad.n_q = 0;
    assert_int_equal(attn_multihead_work_size(&bad), 0);
    assert_int_equal(attn_multihead_work_size(NULL), 0);
}

static void test_multihead_rejects_null_pointers(void **state)
{
    (void)state;
    double output[4], work[64];
    const attn_mha_outputs out = {.output = output};
    assert_int_equal(
        attn_multihead(NULL, X2, NULL, &PARAMS2, &DIMS2, NULL, work),
        ATTN_ERR_NULL);
    assert_int_equal(
        attn_multihead(&out, NULL, NULL, &PARAMS2, &DIMS2, NULL, work),
        ATTN_ERR_NULL);
    assert_int_equal(attn_multihead(&out, X2, NULL, NULL, &DIMS2, NULL, work),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_multihead(&out, X2, NULL, &PARAMS2, NULL, NULL, work),
                     ATTN_ERR_NULL);
    assert_int_equal(
        attn_multihead(&out, X2, NULL, &PARAMS2, &DIMS2, NULL, NULL),
        ATTN_ERR_NULL);
    for (int which = 0; which < 4; which++) {
        attn_mha_params p = PARAMS2;
        const double **weight[] = {&p.wq, &p.wk, &p.wv, &p.wo};
        *weight[which] = NULL;
        assert_int_equal(attn_multihead(&out, X2, NULL, &p, &DIMS2, NULL, work),
                         ATTN_ERR_NULL);
    }
}

static void test_multihead_rejects_bad_dimensions(void **state)
{
    (void)state;
    double output[4], work[64];
    const attn_mha_outputs out = {.output = output};
    for (int which = 0; which < 8; which++) {
        attn_mha_dims d = DIMS2;
        int *field[] = {&d.batch,   &d.n_q,     &d.n_kv,      &d.d_q_in,
                        &d.d_kv_in, &d.d_model, &d.num_heads, &d.d_out};
        *field[which] = 0;
        assert_int_equal(attn_multihead(&out, X2, X2, &PARAMS2, &d, NULL, work),
                         ATTN_ERR_SIZE);
    }
    attn_mha_dims d = DIMS2;
    d.num_heads = 3;
    assert_int_equal(attn_multihead(&out, X2, X2, &PARAMS2, &d, NULL, work),
                     ATTN_ERR_HEADS);
    /* Self-attention needs x_kv's shape to be x_q's. */
    d = DIMS2;
    d.n_kv = 1;
    assert_int_equal(attn_multihead(&out, X2, NULL, &PARAMS2, &d, NULL, work),
                     ATTN_ERR_SIZE);
    d = DIMS2;
    d.batch = INT_MAX;
    d.n_q = INT_MAX;
    d.d_q_in = INT_MAX;
    assert_int_equal(attn_multihead(&out, X2, X2, &PARAMS2, &d, NULL, work),
                     ATTN_ERR_SIZE_OVERFLOW);
}

static void test_multihead_rejects_bad_options_and_inputs(void **state)
{
    (void)state;
    double output[4], work[64];
    const attn_mha_outputs out = {.output = output};
    attn_options opts;
    attn_options_init(&opts);
    opts.scale_kind = -1;
    assert_int_equal(
        attn_multihead(&out, X2, NULL, &PARAMS2, &DIMS2, &opts, work),
        ATTN_ERR_OPTION);
    attn_options_init(&opts);
    opts.dropout = 1.5;
    assert_int_equal(
        attn_multihead(&out, X2, NULL, &PARAMS2, &DIMS2, &opts, work),
        ATTN_ERR_RANGE);
    const double bad_bias[2] = {0.0, NAN};
    attn_mha_params p = PARAMS2;
    p.bo = bad_bias;
    assert_int_equal(attn_multihead(&out, X2, NULL, &p, &DIMS2, NULL, work),
                     ATTN_ERR_NOT_FINITE);
    const double bad_x[4] = {1, 0, INFINITY, -1};
    assert_int_equal(
        attn_multihead(&out, bad_x, NULL, &PARAMS2, &DIMS2, NULL, work),
        ATTN_ERR_NOT_FINITE);
}

static void test_multihead_reports_a_projection_that_overflows(void **state)
{
    (void)state;
    const double huge_x[4] = {1e300, 0, 1, 1};
    const double huge_w[8] = {1e10, 0, 0, 0, 0, 0, 0, 0};
    attn_mha_params p = PARAMS2;
    p.wq = huge_w;
    double output[4], work[64];
    const attn_mha_outputs out = {.output = output};
    assert_int_equal(attn_multihead(&out, huge_x, NULL, &p, &DIMS2, NULL, work),
                     ATTN_ERR_OVERFLOW_VALUE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_multihead_tutorial_001_cat_sat_mat_matches_exact_values),
        cmocka_unit_test(
            test_multihead_two_heads_with_biases_match_exact_values),
        cmocka_unit_test(test_multihead_intermediate_outputs_are_optional),
        cmocka_unit_test(test_multihead_each_head_is_sdpa_on_its_column_block),
        cmocka_unit_test(
            test_multihead_one_head_with_identity_projections_equals_sdpa),
        cmocka_unit_test(test_multihead_null_x_kv_means_self_attention),
        cmocka_unit_test(test_multihead_mask_applies_to_every_head),
        cmocka_unit_test(test_multihead_dropout_differs_between_heads),
        cmocka_unit_test(test_multihead_work_size_counts_projections_and_a_row),
        cmocka_unit_test(test_multihead_rejects_null_pointers),
        cmocka_unit_test(test_multihead_rejects_bad_dimensions),
        cmocka_unit_test(test_multihead_rejects_bad_options_and_inputs),
        cmocka_unit_test(test_multihead_reports_a_projection_that_overflows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
