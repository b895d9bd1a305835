/* Gradients through the problem layer: gradOutput on scaledDotProduct and
 * multiHead, and the transformerBlock kind, against the C kernels. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "allclose.h"
#include "attention.h"
#include "problem_fixture.h"
#include "test_rng.h"

/* Fills an array with seeded values in [-1, 1). */
static void fill(double *x, size_t count, uint64_t seed)
{
    test_rng rng;
    test_rng_seed(&rng, seed);
    test_rng_fill(&rng, x, count, -1.0, 1.0);
}

static void expect_error(attn_problem *problem, const char *message)
{
    assert_int_equal(attn_problem_run(problem), ATTN_ERR_INPUT);
    assert_string_equal(attn_problem_error(problem), message);
}

/* ---- scaledDotProduct ---- */

enum { B = 2, NQ = 3, NK = 4, DK = 2, DV = 3 };

/* A batch of seeded q, k, v and a field shaped like the output (seeds
 * first .. first + 3). */
static attn_problem *batch_sdpa_problem(double *q, double *k, double *v,
                                        const char *field, double *given,
                                        uint64_t first)
{
    fill(q, B * NQ * DK, first);
    fill(k, B * NK * DK, first + 1);
    fill(v, B * NK * DV, first + 2);
    fill(given, B * NQ * DV, first + 3);
    attn_problem *problem = problem_new("scaledDotProduct");
    problem_batch(problem, "q", B, NQ, DK, q);
    problem_batch(problem, "k", B, NK, DK, k);
    problem_batch(problem, "v", B, NK, DV, v);
    problem_batch(problem, field, B, NQ, DV, given);
    return problem;
}

/* The problem's gradient results are attn_sdpa_backward's for d_o. */
static void expect_kernel_gradients(const attn_problem *problem,
                                    const double *d_o, const double *q,
                                    const double *k, const double *v,
                                    const attn_options *opts)
{
    double gq[B * NQ * DK], gk[B * NK * DK], gv[B * NK * DV];
    double gw[B * NQ * NK], gs[B * NQ * NK], work[2 * NK];
    assert_int_equal(attn_sdpa_backward(gq, gk, gv, gw, gs, d_o, q, k, v, B, NQ,
                                        NK, DK, DV, opts, work),
                     ATTN_OK);
    assert_allclose(problem_result(problem, "gradQ", 3, B, NQ, DK), gq,
                    B * NQ * DK, 0.0, 0.0);
    assert_allclose(problem_result(problem, "gradK", 3, B, NK, DK), gk,
                    B * NK * DK, 0.0, 0.0);
    assert_allclose(problem_result(problem, "gradV", 3, B, NK, DV), gv,
                    B * NK * DV, 0.0, 0.0);
    assert_allclose(problem_result(problem, "gradWeights", 3, B, NQ, NK), gw,
                    B * NQ * NK, 0.0, 0.0);
    assert_allclose(problem_result(problem, "gradScaled", 3, B, NQ, NK), gs,
                    B * NQ * NK, 0.0, 0.0);
}

static void
test_sdpa_problem_with_grad_output_gives_the_kernel_gradients(void **state)
{
    (void)state;
    double q[B * NQ * DK], k[B * NK * DK], v[B * NK * DV], d_o[B * NQ * DV];
    attn_problem *problem = batch_sdpa_problem(q, k, v, "gradOutput", d_o, 1);
    assert_int_equal(attn_problem_set_string(problem, "mask", "causal"),
                     ATTN_OK);
    assert_int_equal(attn_problem_set_number(problem, "dropout", 0.25),
                     ATTN_OK);
    assert_int_equal(attn_problem_set_number(problem, "seed", 7), ATTN_OK);
    problem_run_ok(problem);

    attn_options opts;
    attn_options_init(&opts);
    opts.mask.kinds = ATTN_MASK_CAUSAL;
    opts.dropout = 0.25;
    opts.seed = 7;
    expect_kernel_gradients(problem, d_o, q, k, v, &opts);
    attn_problem_destroy(problem);
}

static void
test_sdpa_problem_gradients_of_a_vector_query_lose_the_query_axis(void **state)
{
    (void)state;
    const double q[2] = {0.5, -1.0}, k[4] = {1, 0, 0, 1};
    const double v[4] = {1, 2, 3, 4}, d_o[2] = {1.0, -1.0};
    attn_problem *problem = problem_new("scaledDotProduct");
    problem_vector(problem, "q", 2, q);
    problem_matrix(problem, "k", 2, 2, k);
    problem_matrix(problem, "v", 2, 2, v);
    problem_vector(problem, "gradOutput", 2, d_o);
    problem_run_ok(problem);
    problem_result(problem, "gradQ", 1, 2, 0, 0);
    problem_result(problem, "gradK", 2, 2, 2, 0);
    /* dL/dW_j = dO · v_j */
    const double expected[2] = {-1.0, -1.0};
    assert_allclose(problem_result(problem, "gradWeights", 1, 2, 0, 0),
                    expected, 2, 0.0, 0.0);
    attn_problem_destroy(problem);
}

static void test_sdpa_problem_rejects_a_misshapen_grad_output(void **state)
{
    (void)state;
    const double x[6] = {1, 0, 0, 1, 1, 1}, d_o[4] = {1, 2, 3, 4};
    attn_problem *problem = problem_self_attention("scaledDotProduct", 0, 3, 2,
                                                   2, x, x);
    problem_matrix(problem, "gradOutput", 2, 2, d_o);
    expect_error(problem, "gradOutput: expected a matrix with 3 rows (n_q, "
                          "the rows of q) and 2 columns (d_v, the columns of "
                          "v), got 2x2");
    attn_problem_destroy(problem);

    problem = problem_new("scaledDotProduct");
    problem_matrix(problem, "scores", 2, 2, d_o);
    problem_matrix(problem, "v", 2, 2, d_o);
    problem_matrix(problem, "gradOutput", 2, 2, d_o);
    assert_int_equal(attn_problem_set_bool(problem, "scale", 0), ATTN_OK);
    expect_error(problem, "gradOutput: needs q and k; gradients are not "
                          "computed from given scores");
    attn_problem_destroy(problem);
}

/* L = ½‖output − target‖² gives dO = output − target: the same gradients
 * as that gradOutput, which the result also holds. */
static void
test_sdpa_problem_with_a_target_gives_the_gradients_of_output_minus_target(
    void **state)
{
    (void)state;
    double q[B * NQ * DK], k[B * NK * DK], v[B * NK * DV], t[B * NQ * DV];
    attn_problem *problem = batch_sdpa_problem(q, k, v, "target", t, 5);
    problem_run_ok(problem);
    const double *output = problem_result(problem, "output", 3, B, NQ, DV);
    double d_o[B * NQ * DV];
    for (int e = 0; e < B * NQ * DV; e++) d_o[e] = output[e] - t[e];
    assert_allclose(problem_result(problem, "gradOutput", 3, B, NQ, DV), d_o,
                    B * NQ * DV, 0.0, 0.0);
    attn_options opts;
    attn_options_init(&opts);
    expect_kernel_gradients(problem, d_o, q, k, v, &opts);
    attn_problem_destroy(problem);
}

static void
test_sdpa_problem_rejects_a_misshapen_or_doubled_target(void **state)
{
    (void)state;
    const double x[6] = {1, 0, 0, 1, 1, 1}, t[4] = {1, 2, 3, 4};
    attn_problem *problem = problem_self_attention("scaledDotProduct", 0, 3, 2,
                                                   2, x, x);
    problem_matrix(problem, "target", 2, 2, t);
    expect_error(problem, "target: expected a matrix with 3 rows (n_q, the "
                          "rows of q) and 2 columns (d_v, the columns of v), "
                          "got 2x2");
    attn_problem_destroy(problem);

    problem = problem_self_attention("scaledDotProduct", 0, 3, 2, 2, x, x);
    problem_matrix(problem, "target", 3, 2, x);
    problem_matrix(problem, "gradOutput", 3, 2, x);
    expect_error(problem, "target: give either target (the loss "
                          "½‖output − target‖²) or gradOutput, not both");
    attn_problem_destroy(problem);
}

/* ---- multiHead ---- */

enum { MN = 3, MKV = 2, MI = 4, MKI = 3, MM = 4, MH = 2, MO = 3 };

static void
test_multihead_problem_with_grad_output_gives_the_kernel_gradients(void **state)
{
    (void)state;
    double x[B * MN * MI], xkv[B * MKV * MKI], wq[MI * MM], wk[MKI * MM];
    double wv[MKI * MM], wo[MM * MO], bk[MM], bo[MO], d_o[B * MN * MO];
    fill(x, B * MN * MI, 11);
    fill(xkv, B * MKV * MKI, 12);
    fill(wq, MI * MM, 13);
    fill(wk, MKI * MM, 14);
    fill(wv, MKI * MM, 15);
    fill(wo, MM * MO, 16);
    fill(bk, MM, 17);
    fill(bo, MO, 18);
    fill(d_o, B * MN * MO, 19);
    attn_problem *problem = problem_new("multiHead");
    problem_batch(problem, "x", B, MN, MI, x);
    problem_batch(problem, "xkv", B, MKV, MKI, xkv);
    problem_matrix(problem, "wq", MI, MM, wq);
    problem_matrix(problem, "wk", MKI, MM, wk);
    problem_matrix(problem, "wv", MKI, MM, wv);
    problem_matrix(problem, "wo", MM, MO, wo);
    problem_vector(problem, "bk", MM, bk);
    problem_vector(problem, "bo", MO, bo);
    problem_batch(problem, "gradOutput", B, MN, MO, d_o);
    assert_int_equal(attn_problem_set_number(problem, "numHeads", MH), ATTN_OK);
    problem_run_ok(problem);

    double gx[B * MN * MI], gxkv[B * MKV * MKI], gwq[MI * MM], gwk[MKI * MM];
    double gwv[MKI * MM], gwo[MM * MO], gbk[MM], gbo[MO];
    double gw[B * MH * MN * MKV];
    const attn_mha_grads grads = {.x_q = gx,
                                  .x_kv = gxkv,
                                  .wq = gwq,
                                  .wk = gwk,
                                  .wv = gwv,
                                  .wo = gwo,
                                  .bk = gbk,
                                  .bo = gbo,
                                  .weights = gw};
    const attn_mha_params params = {wq, wk, wv, wo, NULL, bk, NULL, bo};
    const attn_mha_dims dims = {B, MN, MKV, MI, MKI, MM, MH, MO};
    double *work = malloc(attn_multihead_backward_work_size(&dims) *
                          sizeof *work);
    assert_non_null(work);
    assert_int_equal(attn_multihead_backward(&grads, d_o, x, xkv, &params,
                                             &dims, NULL, work),
                     ATTN_OK);
    free(work);
    assert_allclose(problem_result(problem, "gradX", 3, B, MN, MI), gx,
                    B * MN * MI, 0.0, 0.0);
    assert_allclose(problem_result(problem, "gradXkv", 3, B, MKV, MKI), gxkv,
                    B * MKV * MKI, 0.0, 0.0);
    assert_allclose(problem_result(problem, "gradWq", 2, MI, MM, 0), gwq,
                    MI * MM, 0.0, 0.0);
    assert_allclose(problem_result(problem, "gradWk", 2, MKI, MM, 0), gwk,
                    MKI * MM, 0.0, 0.0);
    assert_allclose(problem_result(problem, "gradWv", 2, MKI, MM, 0), gwv,
                    MKI * MM, 0.0, 0.0);
    assert_allclose(problem_result(problem, "gradWo", 2, MM, MO, 0), gwo,
                    MM * MO, 0.0, 0.0);
    assert_allclose(problem_result(problem, "gradBk", 1, MM, 0, 0), gbk, MM,
                    0.0, 0.0);
    assert_allclose(problem_result(problem, "gradBo", 1, MO, 0, 0), gbo, MO,
                    0.0, 0.0);
    /* No bq was given, so there is no gradBq. */
    int rank, dims_out[3];
    const double *data;
    assert_int_equal(
        attn_problem_result(problem, "gradBq", &rank, dims_out, &data),
        ATTN_ERR_INPUT);
    /* Head h of batch item b: heads.<h>.gradWeights [B, MN, MKV]. */
    for (int h = 0; h < MH; h++) {
        char name[32];
        snprintf(name, sizeof name, "heads.%d.gradWeights", h);
        const double *head = problem_result(problem, name, 3, B, MN, MKV);
        for (int b = 0; b < B; b++)
            assert_allclose(head + b * MN * MKV, gw + (b * MH + h) * MN * MKV,
                            MN * MKV, 0.0, 0.0);
    }
    attn_problem_destroy(problem);
}

/* ---- transformerBlock ---- */

enum { TN = 3, TM = 4, TH = 2, TF = 5 };

typedef struct block_arrays {
    double x[B * TN * TM], wq[TM * TM], wk[TM * TM], wv[TM * TM], wo[TM * TM];
    double bq[TM], gamma1[TM], beta1[TM], w1[TM * TF], b1[TF], w2[TF * TM];
    double b2[TM], gamma2[TM], beta2[TM], d_o[B * TN * TM];
} block_arrays;

static void block_fill(block_arrays *a)
{
    fill(a->x, B * TN * TM, 21);
    fill(a->wq, TM * TM, 22);
    fill(a->wk, TM * TM, 23);
    fill(a->wv, TM * TM, 24);
    fill(a->wo, TM * TM, 25);
    fill(a->bq, TM, 26);
    fill(a->gamma1, TM, 27);
    fill(a->beta1, TM, 28);
    fill(a->w1, TM * TF, 29);
    fill(a->b1, TF, 30);
    fill(a->w2, TF * TM, 31);
    fill(a->b2, TM, 32);
    fill(a->gamma2, TM, 33);
    fill(a->beta2, TM, 34);
    fill(a->d_o, B * TN * TM, 35);
}

static attn_problem *block_problem(const block_arrays *a)
{
    attn_problem *problem = problem_new("transformerBlock");
    problem_batch(problem, "x", B, TN, TM, a->x);
    problem_matrix(problem, "wq", TM, TM, a->wq);
    problem_matrix(problem, "wk", TM, TM, a->wk);
    problem_matrix(problem, "wv", TM, TM, a->wv);
    problem_matrix(problem, "wo", TM, TM, a->wo);
    problem_vector(problem, "bq", TM, a->bq);
    problem_vector(problem, "gamma1", TM, a->gamma1);
    problem_vector(problem, "beta1", TM, a->beta1);
    problem_matrix(problem, "w1", TM, TF, a->w1);
    problem_vector(problem, "b1", TF, a->b1);
    problem_matrix(problem, "w2", TF, TM, a->w2);
    problem_vector(problem, "b2", TM, a->b2);
    problem_vector(problem, "gamma2", TM, a->gamma2);
    problem_vector(problem, "beta2", TM, a->beta2);
    assert_int_equal(attn_problem_set_number(problem, "numHeads", TH), ATTN_OK);
    return problem;
}

static void
test_transformer_block_problem_gives_the_kernel_results_and_gradients(
    void **state)
{
    (void)state;
    for (int norm = ATTN_NORM_POST; norm <= ATTN_NORM_PRE; norm++) {
        block_arrays a;
        block_fill(&a);
        attn_problem *problem = block_problem(&a);
        problem_batch(problem, "gradOutput", B, TN, TM, a.d_o);
        assert_int_equal(
            attn_problem_set_string(problem, "norm", norm ? "pre" : "post"),
            ATTN_OK);
        assert_int_equal(attn_problem_set_string(problem, "mask", "causal"),
                         ATTN_OK);
        problem_run_ok(problem);

        attn_options opts;
        attn_options_init(&opts);
        opts.mask.kinds = ATTN_MASK_CAUSAL;
        const attn_block_params params = {
            {a.wq, a.wk, a.wv, a.wo, a.bq, NULL, NULL, NULL},
            a.gamma1,
            a.beta1,
            a.w1,
            a.b1,
            a.w2,
            a.b2,
            a.gamma2,
            a.beta2};
        const attn_block_dims dims = {B, TN, TM, TH, TF, norm};
        double out[B * TN * TM], ln1[B * TN * TM], hidden[B * TN * TF];
        double weights[B * TH * TN * TN];
        const attn_block_outputs outputs = {.attention = {.weights = weights},
                                            .output = out,
                                            .ln1 = ln1,
                                            .hidden = hidden};
        double *work = malloc(attn_transformer_block_backward_work_size(&dims) *
                              sizeof *work);
        assert_non_null(work);
        assert_int_equal(
            attn_transformer_block(&outputs, a.x, &params, &dims, &opts, work),
            ATTN_OK);
        double gx[B * TN * TM], gw1[TM * TF], ggamma2[TM], gbq[TM];
        const attn_block_grads grads = {
            .x = gx, .w1 = gw1, .gamma2 = ggamma2, .attention = {.bq = gbq}};
        assert_int_equal(attn_transformer_block_backward(
                             &grads, a.d_o, a.x, &params, &dims, &opts, work),
                         ATTN_OK);
        free(work);
        assert_allclose(problem_result(problem, "output", 3, B, TN, TM), out,
                        B * TN * TM, 0.0, 0.0);
        assert_allclose(problem_result(problem, "ln1", 3, B, TN, TM), ln1,
                        B * TN * TM, 0.0, 0.0);
        assert_allclose(problem_result(problem, "ffnHidden", 3, B, TN, TF),
                        hidden, B * TN * TF, 0.0, 0.0);
        const double *head1 = problem_result(problem, "heads.1.weights", 3, B,
                                             TN, TN);
        assert_allclose(head1 + TN * TN, weights + (1 * TH + 1) * TN * TN,
                        TN * TN, 0.0, 0.0);
        assert_allclose(problem_result(problem, "gradX", 3, B, TN, TM), gx,
                        B * TN * TM, 0.0, 0.0);
        assert_allclose(problem_result(problem, "gradW1", 2, TM, TF, 0), gw1,
                        TM * TF, 0.0, 0.0);
        assert_allclose(problem_result(problem, "gradGamma2", 1, TM, 0, 0),
                        ggamma2, TM, 0.0, 0.0);
        assert_allclose(problem_result(problem, "gradBq", 1, TM, 0, 0), gbq, TM,
                        0.0, 0.0);
        const char *const names[] = {
            "attention", "sum1",   "ffn",    "sum2",       "ln2",
            "gradWq",    "gradWk", "gradWv", "gradWo",     "gradBeta1",
            "gradB1",    "gradW2", "gradB2", "gradGamma1", "gradBeta2"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            int rank, dims_out[3];
            const double *data;
            assert_int_equal(
                attn_problem_result(problem, names[i], &rank, dims_out, &data),
                ATTN_OK);
        }
        attn_problem_destroy(problem);
    }
}

static void test_transformer_block_problem_checks_its_fields(void **state)
{
    (void)state;
    block_arrays a;
    block_fill(&a);
    attn_problem *problem = block_problem(&a);
    problem_matrix(problem, "gradOutput", TN, TM, a.d_o);
    expect_error(problem, "gradOutput: expected a batch of 2 matrices with 3 "
                          "rows (n, the rows of x) and 4 columns (d_model, "
                          "the columns of x), got 3x4");
    problem_batch(problem, "gradOutput", B, TN, TM, a.d_o);
    problem_vector(problem, "b1", TM, a.b1);
    expect_error(problem, "b1: expected a vector of 5 (d_ff, the columns of "
                          "w1), got a vector of 4");
    problem_vector(problem, "b1", TF, a.b1);
    problem_matrix(problem, "w2", TM, TM, a.wq);
    expect_error(problem, "w2: expected a matrix with 5 rows (d_ff, the "
                          "columns of w1) and 4 columns (d_model, the columns "
                          "of x), got 4x4");
    problem_matrix(problem, "w2", TF, TM, a.w2);
    assert_int_equal(attn_problem_set_string(problem, "norm", "sandwich"),
                     ATTN_OK);
    expect_error(problem, "norm: expected \"post\" or \"pre\", got "
                          "\"sandwich\"");
    assert_int_equal(attn_problem_set_string(problem, "norm", "post"), ATTN_OK);
    assert_int_equal(attn_problem_set_number(problem, "numHeads", 3), ATTN_OK);
    expect_error(problem, "numHeads: 3 does not divide d_model 4 (the "
                          "columns of wq)");
    attn_problem_destroy(problem);

    problem = problem_new("transformerBlock");
    problem_matrix(problem, "x", TN, TM, a.x);
    expect_error(problem, "wq: missing (a matrix d_model x d_model)");
    attn_problem_destroy(problem);
}

/* No walkthrough of its own yet: every format still gives text. */
static void test_transformer_block_problem_formats_without_failing(void **state)
{
    (void)state;
    block_arrays a;
    block_fill(&a);
    attn_problem *problem = block_problem(&a);
    problem_run_ok(problem);
    for (int format = ATTN_FORMAT_JSON; format <= ATTN_FORMAT_LATEX; format++) {
        size_t length = 0;
        assert_int_equal(attn_problem_format(problem, format, NULL, 0, &length),
                         ATTN_OK);
        assert_true(length > 0);
        char *text = malloc(length + 1);
        assert_non_null(text);
        assert_int_equal(
            attn_problem_format(problem, format, text, length + 1, &length),
            ATTN_OK);
        if (format == ATTN_FORMAT_JSON)
            assert_non_null(strstr(text, "\"ffnHidden\":"));
        free(text);
    }
    attn_problem_destroy(problem);
}

/* ---- additive, luong and linear ---- */

static void
test_additive_and_luong_problems_with_grad_context_give_the_kernel_gradients(
    void **state)
{
    (void)state;
    enum { N = 2, K = 3, S = 2, H = 2, A = 3 };
    double query[N * S], keys[K * H], ws[S * A], wh[H * A], v[A], b[A];
    double w[(S + H) * A], d_c[N * H];
    fill(query, N * S, 41);
    fill(keys, K * H, 42);
    fill(ws, S * A, 43);
    fill(wh, H * A, 44);
    fill(v, A, 45);
    fill(b, A, 46);
    fill(w, (S + H) * A, 47);
    fill(d_c, N * H, 48);
    double gq[N * S], gk[K * H], gws[S * A], gwh[H * A], gv[A], gb[A];
    double gw[(S + H) * A], work[2 * K * A + 3 * A + K];

    attn_problem *problem = problem_new("additive");
    problem_matrix(problem, "query", N, S, query);
    problem_matrix(problem, "keys", K, H, keys);
    problem_matrix(problem, "ws", S, A, ws);
    problem_matrix(problem, "wh", H, A, wh);
    problem_vector(problem, "v", A, v);
    problem_vector(problem, "b", A, b);
    problem_matrix(problem, "gradContext", N, H, d_c);
    problem_run_ok(problem);
    assert_int_equal(attn_additive_backward(gq, gk, gws, gwh, gb, gv, d_c,
                                            query, keys, ws, wh, b, v, N, K, S,
                                            H, A, work),
                     ATTN_OK);
    assert_allclose(problem_result(problem, "gradQuery", 2, N, S, 0), gq, N * S,
                    0.0, 0.0);
    assert_allclose(problem_result(problem, "gradKeys", 2, K, H, 0), gk, K * H,
                    0.0, 0.0);
    assert_allclose(problem_result(problem, "gradWs", 2, S, A, 0), gws, S * A,
                    0.0, 0.0);
    assert_allclose(problem_result(problem, "gradWh", 2, H, A, 0), gwh, H * A,
                    0.0, 0.0);
    assert_allclose(problem_result(problem, "gradV", 1, A, 0, 0), gv, A, 0.0,
                    0.0);
    assert_allclose(problem_result(problem, "gradB", 1, A, 0, 0), gb, A, 0.0,
                    0.0);
    attn_problem_destroy(problem);

    problem = problem_new("luong");
    problem_vector(problem, "query", S, query);
    problem_matrix(problem, "keys", K, H, keys);
    assert_int_equal(attn_problem_set_string(problem, "method", "concat"),
                     ATTN_OK);
    problem_matrix(problem, "w", S + H, A, w);
    problem_vector(problem, "v", A, v);
    problem_vector(problem, "gradContext", H, d_c);
    problem_run_ok(problem);
    assert_int_equal(attn_luong_backward(gq, gk, gw, NULL, gv, d_c, query, keys,
                                         w, NULL, v, ATTN_LUONG_CONCAT, 1, K, S,
                                         H, A, work),
                     ATTN_OK);
    assert_allclose(problem_result(problem, "gradQuery", 1, S, 0, 0), gq, S,
                    0.0, 0.0);
    assert_allclose(problem_result(problem, "gradKeys", 2, K, H, 0), gk, K * H,
                    0.0, 0.0);
    assert_allclose(problem_result(problem, "gradW", 2, S + H, A, 0), gw,
                    (S + H) * A, 0.0, 0.0);
    assert_allclose(problem_result(problem, "gradV", 1, A, 0, 0), gv, A, 0.0,
                    0.0);
    problem_matrix(problem, "gradContext", N, H, d_c);
    expect_error(problem, "gradContext: expected a vector of 2 (d_h, the "
                          "columns of keys), got 2x2");
    attn_problem_destroy(problem);
}

static void
test_linear_problem_with_grad_output_gives_the_kernel_gradients(void **state)
{
    (void)state;
    double q[B * NQ * DK], k[B * NK * DK], v[B * NK * DV], d_o[B * NQ * DV];
    fill(q, B * NQ * DK, 51);
    fill(k, B * NK * DK, 52);
    fill(v, B * NK * DV, 53);
    fill(d_o, B * NQ * DV, 54);
    attn_problem *problem = problem_new("linear");
    problem_batch(problem, "q", B, NQ, DK, q);
    problem_batch(problem, "k", B, NK, DK, k);
    problem_batch(problem, "v", B, NK, DV, v);
    problem_batch(problem, "gradOutput", B, NQ, DV, d_o);
    assert_int_equal(attn_problem_set_bool(problem, "causal", 1), ATTN_OK);
    problem_run_ok(problem);
    double gq[B * NQ * DK], gk[B * NK * DK], gv[B * NK * DV];
    double work[DK * (DV + 3) + 2 * NQ];
    assert_int_equal(attn_linear_backward(gq, gk, gv, d_o, q, k, v, B, NQ, NK,
                                          DK, DV, 1, work),
                     ATTN_OK);
    assert_allclose(problem_result(problem, "gradQ", 3, B, NQ, DK), gq,
                    B * NQ * DK, 0.0, 0.0);
    assert_allclose(problem_result(problem, "gradK", 3, B, NK, DK), gk,
                    B * NK * DK, 0.0, 0.0);
    assert_allclose(problem_result(problem, "gradV", 3, B, NK, DV), gv,
                    B * NK * DV, 0.0, 0.0);
    attn_problem_destroy(problem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_sdpa_problem_with_grad_output_gives_the_kernel_gradients),
        cmocka_unit_test(
            test_sdpa_problem_gradients_of_a_vector_query_lose_the_query_axis),
        cmocka_unit_test(test_sdpa_problem_rejects_a_misshapen_grad_output),
        cmocka_unit_test(
            test_sdpa_problem_with_a_target_gives_the_gradients_of_output_minus_target),
        cmocka_unit_test(
            test_sdpa_problem_rejects_a_misshapen_or_doubled_target),
        cmocka_unit_test(
            test_multihead_problem_with_grad_output_gives_the_kernel_gradients),
        cmocka_unit_test(
            test_transformer_block_problem_gives_the_kernel_results_and_gradients),
        cmocka_unit_test(test_transformer_block_problem_checks_its_fields),
        cmocka_unit_test(
            test_transformer_block_problem_formats_without_failing),
        cmocka_unit_test(
            test_additive_and_luong_problems_with_grad_context_give_the_kernel_gradients),
        cmocka_unit_test(
            test_linear_problem_with_grad_output_gives_the_kernel_gradients),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
