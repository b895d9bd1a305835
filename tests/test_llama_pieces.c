/* Llama's pieces: rotary position embeddings, RMSNorm, the SiLU-gated MLP
 * and causal grouped-query attention, each against a float64 computation
 * written the way Hugging Face's modeling_llama.py writes it
 * (support/llama_reference.c), and their gradients against finite
 * differences. */
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
#include "finite_diff.h"
#include "llama_reference.h"
#include "test_rng.h"

enum { MAX_CELLS = 512 };

/* ---- Rotary position embeddings ---- */

static void check_rope(int n, int heads, int d, double theta, uint64_t seed)
{
    double x[MAX_CELLS], out[MAX_CELLS], expected[MAX_CELLS];
    int positions[16];
    test_rng rng;
    test_rng_seed(&rng, seed);
    test_rng_fill(&rng, x, (size_t)(n * heads * d), -2.0, 2.0);
    for (int r = 0; r < n; r++) positions[r] = test_rng_int(&rng, 0, 4000);
    positions[0] = 0;
    assert_int_equal(attn_rope(out, x, positions, n, heads, d, theta), ATTN_OK);
    for (int r = 0; r < n; r++)
        for (int h = 0; h < heads; h++)
            reference_rope_head(expected + (r * heads + h) * d,
                                x + (r * heads + h) * d, positions[r], d,
                                theta);
    assert_allclose(out, expected, (size_t)(n * heads * d), 1e-12, 1e-12);
    /* Position 0 turns nothing. */
    assert_memory_equal(out, x, (size_t)(heads * d) * sizeof *x);
}

static void
test_rope_matches_llamas_rotate_half_for_both_thetas_and_widths(void **state)
{
    (void)state;
    check_rope(5, 4, 8, 10000.0, 1);
    check_rope(5, 2, 8, 500.0, 2);
    check_rope(7, 4, 2, 10000.0, 3);
    check_rope(3, 1, 2, 500.0, 4);
}

static void test_rope_keeps_lengths_and_turns_by_relative_position(void **state)
{
    (void)state;
    /* A rotation keeps each pair's length, and q·k after rotating q to
     * position p and k to position s depends on p − s only. */
    enum { D = 8 };
    double q[D], k[D], q1[D], k1[D], q2[D], k2[D];
    test_rng rng;
    test_rng_seed(&rng, 9);
    test_rng_fill(&rng, q, D, -1.0, 1.0);
    test_rng_fill(&rng, k, D, -1.0, 1.0);
    const int p1 = 7, s1 = 3, p2 = 104, s2 = 100;
    assert_int_equal(attn_rope(q1, q, &p1, 1, 1, D, 500.0), ATTN_OK);
    assert_int_equal(attn_rope(k1, k, &s1, 1, 1, D, 500.0), ATTN_OK);
    assert_int_equal(attn_rope(q2, q, &p2, 1, 1, D, 500.0), ATTN_OK);
    assert_int_equal(attn_rope(k2, k, &s2, 1, 1, D, 500.0), ATTN_OK);
    double dot1 = 0.0, dot2 = 0.0;
    for (int i = 0; i < D; i++) {
        dot1 += q1[i] * k1[i];
        dot2 += q2[i] * k2[i];
    }
    assert_true(close_enough(dot1, dot2, 1e-12, 1e-12));
    for (int i = 0; i < D / 2; i++)
        assert_true(close_enough(hypot(q1[i], q1[i + D / 2]),
                                 hypot(q[i], q[i + D / 2]), 1e-14, 0.0));
}

typedef struct rope_case {
    double x[2 * 2 * 4], dy[2 * 2 * 4];
    int positions[2];
} rope_case;

static double rope_loss(void *context)
{
    const rope_case *c = context;
    double y[16];
    assert_int_equal(attn_rope(y, c->x, c->positions, 2, 2, 4, 500.0), ATTN_OK);
    return fd_dot(y, c->dy, 16);
}

static void test_rope_backward_matches_finite_differences(void **state)
{
    (void)state;
    rope_case c = {.positions = {3, 11}};
    test_rng rng;
    test_rng_seed(&rng, 5);
    test_rng_fill(&rng, c.x, 16, -1.0, 1.0);
    test_rng_fill(&rng, c.dy, 16, -1.0, 1.0);
    double grad[16], numeric[16];
    assert_int_equal(
        attn_rope_backward(grad, c.dy, c.positions, 2, 2, 4, 500.0), ATTN_OK);
    fd_gradient(numeric, c.x, 16, rope_loss, &c, FD_STEP);
    assert_gradient_close(grad, numeric, 16);
}

static void
test_rope_rejects_odd_widths_negative_positions_and_bad_theta(void **state)
{
    (void)state;
    double x[6] = {0}, out[6];
    const int ok = 1, negative = -1;
    assert_int_equal(attn_rope(out, x, &ok, 1, 2, 3, 1e4), ATTN_ERR_HEAD_DIM);
    assert_int_equal(attn_rope(out, x, &negative, 1, 3, 2, 1e4),
                     ATTN_ERR_POSITION);
    assert_int_equal(attn_rope(out, x, &ok, 1, 3, 2, 0.0), ATTN_ERR_RANGE);
    assert_int_equal(attn_rope(out, x, &ok, 1, 3, 2, NAN), ATTN_ERR_RANGE);
    assert_int_equal(attn_rope(out, x, &ok, 0, 3, 2, 1e4), ATTN_ERR_SIZE);
    assert_int_equal(attn_rope(out, NULL, &ok, 1, 3, 2, 1e4), ATTN_ERR_NULL);
    x[4] = INFINITY;
    assert_int_equal(attn_rope(out, x, &ok, 1, 3, 2, 1e4), ATTN_ERR_NOT_FINITE);
    assert_int_equal(attn_rope_backward(out, x, &ok, 1, 2, 3, 1e4),
                     ATTN_ERR_HEAD_DIM);
}

/* ---- RMSNorm ---- */

static void test_rms_norm_matches_its_definition(void **state)
{
    (void)state;
    const double x[6] = {3.0, -4.0, 0.0, 1.0, 1.0, 1.0};
    const double weight[3] = {1.0, 0.5, 2.0};
    double y[6], rstd[2];
    assert_int_equal(attn_rms_norm(y, rstd, x, weight, 2, 3, 1e-6), ATTN_OK);
    /* mean(x²) = 25/3 and 1. */
    const double r0 = 1.0 / sqrt(25.0 / 3.0 + 1e-6),
                 r1 = 1.0 / sqrt(1.0 + 1e-6);
    const double expected[6] = {3.0 * r0, -2.0 * r0, 0.0,
                                r1,       0.5 * r1,  2.0 * r1};
    assert_allclose(y, expected, 6, 1e-15, 0.0);
    assert_true(close_enough(rstd[0], r0, 1e-15, 0.0));
    assert_true(close_enough(rstd[1], r1, 1e-15, 0.0));
}

typedef struct rms_case {
    double x[3 * 5], weight[5], dy[3 * 5];
} rms_case;

static double rms_loss(void *context)
{
    const rms_case *c = context;
    double y[15];
    assert_int_equal(attn_rms_norm(y, NULL, c->x, c->weight, 3, 5, 1e-5),
                     ATTN_OK);
    return fd_dot(y, c->dy, 15);
}

static void test_rms_norm_backward_matches_finite_differences(void **state)
{
    (void)state;
    rms_case c;
    test_rng rng;
    test_rng_seed(&rng, 6);
    test_rng_fill(&rng, c.x, 15, -2.0, 2.0);
    test_rng_fill(&rng, c.weight, 5, 0.5, 1.5);
    test_rng_fill(&rng, c.dy, 15, -1.0, 1.0);
    double dx[15], dw[5], numeric[15];
    assert_int_equal(
        attn_rms_norm_backward(dx, dw, c.dy, c.x, c.weight, 3, 5, 1e-5),
        ATTN_OK);
    fd_gradient(numeric, c.x, 15, rms_loss, &c, FD_STEP);
    assert_gradient_close(dx, numeric, 15);
    fd_gradient(numeric, c.weight, 5, rms_loss, &c, FD_STEP);
    assert_gradient_close(dw, numeric, 5);
}

static void
test_rms_norm_rejects_bad_eps_and_an_all_zero_row_without_eps(void **state)
{
    (void)state;
    const double x[2] = {0.0, 0.0}, w[2] = {1.0, 1.0};
    double y[2];
    assert_int_equal(attn_rms_norm(y, NULL, x, w, 1, 2, -1e-6), ATTN_ERR_RANGE);
    assert_int_equal(attn_rms_norm(y, NULL, x, w, 1, 2, INFINITY),
                     ATTN_ERR_RANGE);
    assert_int_equal(attn_rms_norm(y, NULL, x, w, 1, 2, 0.0),
                     ATTN_ERR_OVERFLOW_VALUE);
    assert_int_equal(attn_rms_norm(y, NULL, x, NULL, 1, 2, 1e-6),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_rms_norm(y, NULL, x, w, 1, 0, 1e-6), ATTN_ERR_SIZE);
}

/* ---- The SiLU-gated MLP ---- */

enum { MR = 3, MI = 4, MF = 5, MO = 2 };

typedef struct mlp_case {
    double x[MR * MI], gate[MI * MF], up[MI * MF], down[MF * MO], dy[MR * MO];
} mlp_case;

static void mlp_case_fill(mlp_case *c, uint64_t seed)
{
    test_rng rng;
    test_rng_seed(&rng, seed);
    test_rng_fill(&rng, c->x, MR * MI, -2.0, 2.0);
    test_rng_fill(&rng, c->gate, MI * MF, -1.0, 1.0);
    test_rng_fill(&rng, c->up, MI * MF, -1.0, 1.0);
    test_rng_fill(&rng, c->down, MF * MO, -1.0, 1.0);
    test_rng_fill(&rng, c->dy, MR * MO, -1.0, 1.0);
}

static double mlp_loss(void *context)
{
    const mlp_case *c = context;
    double y[MR * MO], work[2 * MR * MF];
    assert_int_equal(attn_gated_mlp(NULL, y, c->x, c->gate, c->up, c->down, MR,
                                    MI, MF, MO, work),
                     ATTN_OK);
    return fd_dot(y, c->dy, MR * MO);
}

static void test_gated_mlp_is_down_of_silu_gate_times_up(void **state)
{
    (void)state;
    mlp_case c;
    mlp_case_fill(&c, 7);
    double hidden[MR * MF], y[MR * MO], work[2 * MR * MF];
    assert_int_equal(attn_gated_mlp_work_size(MR, MF), 2 * MR * MF);
    assert_int_equal(attn_gated_mlp(hidden, y, c.x, c.gate, c.up, c.down, MR,
                                    MI, MF, MO, work),
                     ATTN_OK);
    double expected_h[MR * MF], expected_y[MR * MO] = {0};
    for (int r = 0; r < MR; r++)
        for (int f = 0; f < MF; f++) {
            double g = 0.0, u = 0.0;
            for (int i = 0; i < MI; i++) {
                g += c.x[r * MI + i] * c.gate[i * MF + f];
                u += c.x[r * MI + i] * c.up[i * MF + f];
            }
            expected_h[r * MF + f] = g / (1.0 + exp(-g)) * u;
            for (int o = 0; o < MO; o++)
                expected_y[r * MO + o] += expected_h[r * MF + f] *
                                          c.down[f * MO + o];
        }
    assert_allclose(hidden, expected_h, MR * MF, 1e-13, 1e-14);
    assert_allclose(y, expected_y, MR * MO, 1e-13, 1e-14);
}

static void test_gated_mlp_backward_matches_finite_differences(void **state)
{
    (void)state;
    mlp_case c;
    mlp_case_fill(&c, 8);
    double dx[MR * MI], dg[MI * MF], du[MI * MF], dd[MF * MO];
    double work[4 * MR * MF], numeric[MI * MF];
    assert_int_equal(attn_gated_mlp_backward_work_size(MR, MF), 4 * MR * MF);
    assert_int_equal(attn_gated_mlp_backward(dx, dg, du, dd, c.dy, c.x, c.gate,
                                             c.up, c.down, MR, MI, MF, MO,
                                             work),
                     ATTN_OK);
    fd_gradient(numeric, c.x, MR * MI, mlp_loss, &c, FD_STEP);
    assert_gradient_close(dx, numeric, MR * MI);
    fd_gradient(numeric, c.gate, MI * MF, mlp_loss, &c, FD_STEP);
    assert_gradient_close(dg, numeric, MI * MF);
    fd_gradient(numeric, c.up, MI * MF, mlp_loss, &c, FD_STEP);
    assert_gradient_close(du, numeric, MI * MF);
    fd_gradient(numeric, c.down, MF * MO, mlp_loss, &c, FD_STEP);
    assert_gradient_close(dd, numeric, MF * MO);
}

static void
test_gated_mlp_rejects_missing_work_and_non_finite_weights(void **state)
{
    (void)state;
    mlp_case c;
    mlp_case_fill(&c, 9);
    double y[MR * MO], work[2 * MR * MF];
    assert_int_equal(attn_gated_mlp(NULL, y, c.x, c.gate, c.up, c.down, MR, MI,
                                    MF, MO, NULL),
                     ATTN_ERR_NULL);
    assert_int_equal(
        attn_gated_mlp(NULL, y, c.x, c.gate, c.up, c.down, MR, MI, 0, MO, work),
        ATTN_ERR_SIZE);
    c.up[3] = NAN;
    assert_int_equal(attn_gated_mlp(NULL, y, c.x, c.gate, c.up, c.down, MR, MI,
                                    MF, MO, work),
                     ATTN_ERR_NOT_FINITE);
    assert_int_equal(attn_gated_mlp_work_size(0, MF), 0);
}

/* ---- Grouped-query attention ---- */

static void check_gqa(int n_q, int n_k, int heads, int kv_heads, int d,
                      uint64_t seed)
{
    double q[MAX_CELLS], k[MAX_CELLS], v[MAX_CELLS];
    double weights[MAX_CELLS], output[MAX_CELLS];
    double expected_w[MAX_CELLS], expected_o[MAX_CELLS], work[32];
    test_rng rng;
    test_rng_seed(&rng, seed);
    test_rng_fill(&rng, q, (size_t)(n_q * heads * d), -1.5, 1.5);
    test_rng_fill(&rng, k, (size_t)(n_k * kv_heads * d), -1.5, 1.5);
    test_rng_fill(&rng, v, (size_t)(n_k * kv_heads * d), -1.5, 1.5);
    assert_int_equal(
        attn_gqa(weights, output, q, k, v, n_q, n_k, heads, kv_heads, d, work),
        ATTN_OK);
    reference_gqa(expected_w, expected_o, q, k, v, n_q, n_k, heads, kv_heads,
                  d);
    assert_allclose(weights, expected_w, (size_t)(heads * n_q * n_k), 1e-13,
                    1e-15);
    assert_allclose(output, expected_o, (size_t)(n_q * heads * d), 1e-13,
                    1e-14);
    /* After the query's position a weight is exactly 0. */
    for (int h = 0; h < heads; h++)
        for (int i = 0; i < n_q; i++)
            for (int j = n_k - n_q + i + 1; j < n_k; j++)
                assert_true(weights[(h * n_q + i) * n_k + j] == 0.0);
}

static void
test_gqa_matches_repeat_kv_attention_with_a_causal_mask(void **state)
{
    (void)state;
    check_gqa(5, 5, 4, 2, 8, 11); /* two query heads per key/value head */
    check_gqa(5, 5, 4, 1, 2, 12); /* multi-query */
    check_gqa(6, 6, 4, 4, 2, 13); /* multi-head */
    check_gqa(2, 7, 4, 2, 8, 14); /* the last two of seven positions */
    check_gqa(1, 9, 4, 1, 8, 15); /* one new query against a cache */
}

static void
test_a_gqa_query_row_has_the_same_bits_alone_and_with_the_rest(void **state)
{
    (void)state;
    enum { N = 6, H = 4, KV = 2, D = 8 };
    double q[N * H * D], k[N * KV * D], v[N * KV * D];
    double all_w[H * N * N], all_o[N * H * D], one_w[H * N], one_o[H * D];
    double work[N];
    test_rng rng;
    test_rng_seed(&rng, 16);
    test_rng_fill(&rng, q, N * H * D, -1.0, 1.0);
    test_rng_fill(&rng, k, N * KV * D, -1.0, 1.0);
    test_rng_fill(&rng, v, N * KV * D, -1.0, 1.0);
    assert_int_equal(attn_gqa(all_w, all_o, q, k, v, N, N, H, KV, D, work),
                     ATTN_OK);
    for (int p = 0; p < N; p++) {
        assert_int_equal(attn_gqa(one_w, one_o, q + p * H * D, k, v, 1, p + 1,
                                  H, KV, D, work),
                         ATTN_OK);
        assert_memory_equal(one_o, all_o + p * H * D, sizeof one_o);
        for (int h = 0; h < H; h++)
            assert_memory_equal(one_w + h * (p + 1), all_w + (h * N + p) * N,
                                (size_t)(p + 1) * sizeof *one_w);
    }
}

typedef struct gqa_case {
    double q[3 * 4 * 2], k[4 * 2 * 2], v[4 * 2 * 2], dy[3 * 4 * 2];
} gqa_case;

static double gqa_loss(void *context)
{
    const gqa_case *c = context;
    double y[24], work[4];
    assert_int_equal(attn_gqa(NULL, y, c->q, c->k, c->v, 3, 4, 4, 2, 2, work),
                     ATTN_OK);
    return fd_dot(y, c->dy, 24);
}

static void test_gqa_backward_matches_finite_differences(void **state)
{
    (void)state;
    gqa_case c;
    test_rng rng;
    test_rng_seed(&rng, 17);
    test_rng_fill(&rng, c.q, 24, -1.0, 1.0);
    test_rng_fill(&rng, c.k, 16, -1.0, 1.0);
    test_rng_fill(&rng, c.v, 16, -1.0, 1.0);
    test_rng_fill(&rng, c.dy, 24, -1.0, 1.0);
    double dq[24], dk[16], dv[16], numeric[24], work[8];
    assert_int_equal(attn_gqa_backward_work_size(4), 8);
    assert_int_equal(
        attn_gqa_backward(dq, dk, dv, c.dy, c.q, c.k, c.v, 3, 4, 4, 2, 2, work),
        ATTN_OK);
    fd_gradient(numeric, c.q, 24, gqa_loss, &c, FD_STEP);
    assert_gradient_close(dq, numeric, 24);
    fd_gradient(numeric, c.k, 16, gqa_loss, &c, FD_STEP);
    assert_gradient_close(dk, numeric, 16);
    fd_gradient(numeric, c.v, 16, gqa_loss, &c, FD_STEP);
    assert_gradient_close(dv, numeric, 16);
}

static void
test_gqa_rejects_heads_that_do_not_group_and_too_many_queries(void **state)
{
    (void)state;
    double x[64] = {0}, out[64], work[8];
    assert_int_equal(attn_gqa(NULL, out, x, x, x, 2, 2, 4, 3, 2, work),
                     ATTN_ERR_KV_HEADS);
    assert_int_equal(attn_gqa(NULL, out, x, x, x, 3, 2, 4, 2, 2, work),
                     ATTN_ERR_RANGE);
    assert_int_equal(attn_gqa(NULL, out, x, x, x, 2, 2, 4, 0, 2, work),
                     ATTN_ERR_SIZE);
    assert_int_equal(attn_gqa(NULL, out, x, x, NULL, 2, 2, 4, 2, 2, work),
                     ATTN_ERR_NULL);
    x[5] = NAN;
    assert_int_equal(attn_gqa(NULL, out, x, x, x, 2, 2, 4, 2, 2, work),
                     ATTN_ERR_NOT_FINITE);
    assert_int_equal(
        attn_gqa_backward(out, NULL, NULL, x, x, x, x, 2, 2, 4, 3, 2, work),
        ATTN_ERR_KV_HEADS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_rope_matches_llamas_rotate_half_for_both_thetas_and_widths),
        cmocka_unit_test(
            test_rope_keeps_lengths_and_turns_by_relative_position),
        cmocka_unit_test(test_rope_backward_matches_finite_differences),
        cmocka_unit_test(
            test_rope_rejects_odd_widths_negative_positions_and_bad_theta),
        cmocka_unit_test(test_rms_norm_matches_its_definition),
        cmocka_unit_test(test_rms_norm_backward_matches_finite_differences),
        cmocka_unit_test(
            test_rms_norm_rejects_bad_eps_and_an_all_zero_row_without_eps),
        cmocka_unit_test(test_gated_mlp_is_down_of_silu_gate_times_up),
        cmocka_unit_test(test_gated_mlp_backward_matches_finite_differences),
        cmocka_unit_test(
            test_gated_mlp_rejects_missing_work_and_non_finite_weights),
        cmocka_unit_test(
            test_gqa_matches_repeat_kv_attention_with_a_causal_mask),
        cmocka_unit_test(
            test_a_gqa_query_row_has_the_same_bits_alone_and_with_the_rest),
        cmocka_unit_test(test_gqa_backward_matches_finite_differences),
        cmocka_unit_test(
            test_gqa_rejects_heads_that_do_not_group_and_too_many_queries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
