/* Gradients of the row softmax and of scaled dot-product attention,
 * against central finite differences and closed forms. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "allclose.h"
#include "attention.h"
#include "finite_diff.h"
#include "test_rng.h"

enum { B = 2, NQ = 3, NK = 4, DK = 3, DV = 2, MAXC = 64 };

/* One random problem: inputs, options and the incoming gradient. */
typedef struct sdpa_case {
    double q[B * NQ * DK], k[B * NK * DK], v[B * NK * DV];
    double d_output[B * NQ * DV];
    double scores[B * NQ * NK];  /* for the check of grad_scaled */
    double weights[B * NQ * NK]; /* for the check of grad_weights */
    attn_options opts;
    int key_length[B];
    unsigned char allowed[NQ * NK];
} sdpa_case;

static void case_fill(sdpa_case *c, uint64_t seed)
{
    test_rng rng;
    test_rng_seed(&rng, seed);
    test_rng_fill(&rng, c->q, B * NQ * DK, -1.5, 1.5);
    test_rng_fill(&rng, c->k, B * NK * DK, -1.5, 1.5);
    test_rng_fill(&rng, c->v, B * NK * DV, -2.0, 2.0);
    test_rng_fill(&rng, c->d_output, B * NQ * DV, -1.0, 1.0);
    attn_options_init(&c->opts);
}

static double sdpa_loss(void *context)
{
    const sdpa_case *c = context;
    double output[B * NQ * DV], work[NK];
    assert_int_equal(attn_sdpa(NULL, NULL, NULL, output, c->q, c->k, c->v, B,
                               NQ, NK, DK, DV, &c->opts, work),
                     ATTN_OK);
    return fd_dot(output, c->d_output, B * NQ * DV);
}

/* The loss as a function of the raw scores, through attn_sdpa_from_scores. */
static double scores_loss(void *context)
{
    const sdpa_case *c = context;
    double output[B * NQ * DV], work[NK];
    assert_int_equal(attn_sdpa_from_scores(NULL, NULL, output, c->scores, c->v,
                                           B, NQ, NK, DK, DV, &c->opts, work),
                     ATTN_OK);
    return fd_dot(output, c->d_output, B * NQ * DV);
}

/* The loss as a function of the weights that multiply v. */
static double weights_loss(void *context)
{
    const sdpa_case *c = context;
    double output[B * NQ * DV];
    for (int b = 0; b < B; b++)
        assert_int_equal(attn_weighted_sum(output + b * NQ * DV,
                                           c->weights + b * NQ * NK,
                                           c->v + b * NK * DV, NQ, NK, DV),
                         ATTN_OK);
    return fd_dot(output, c->d_output, B * NQ * DV);
}

typedef struct sdpa_grads {
    double q[B * NQ * DK], k[B * NK * DK], v[B * NK * DV];
    double weights[B * NQ * NK], scaled[B * NQ * NK];
} sdpa_grads;

static void run_backward(sdpa_grads *g, const sdpa_case *c)
{
    double work[2 * NK];
    assert_int_equal(attn_sdpa_backward_work_size(NK), 2 * NK);
    assert_int_equal(attn_sdpa_backward(g->q, g->k, g->v, g->weights, g->scaled,
                                        c->d_output, c->q, c->k, c->v, B, NQ,
                                        NK, DK, DV, &c->opts, work),
                     ATTN_OK);
}

/* Every gradient of a case against finite differences. */
static void check_case_against_finite_differences(sdpa_case *c)
{
    sdpa_grads g;
    run_backward(&g, c);
    double numeric[MAXC];
    fd_gradient(numeric, c->q, B * NQ * DK, sdpa_loss, c, FD_STEP);
    assert_gradient_close(g.q, numeric, B * NQ * DK);
    fd_gradient(numeric, c->k, B * NK * DK, sdpa_loss, c, FD_STEP);
    assert_gradient_close(g.k, numeric, B * NK * DK);
    fd_gradient(numeric, c->v, B * NK * DV, sdpa_loss, c, FD_STEP);
    assert_gradient_close(g.v, numeric, B * NK * DV);

    /* grad_scaled is dL/d(scaled); scaled = scores × scale, so the
     * gradient of the loss in the raw scores is grad_scaled × scale. */
    double scale;
    assert_int_equal(attn_scale_value(&scale, &c->opts, DK), ATTN_OK);
    double work[NK];
    assert_int_equal(attn_sdpa(c->scores, NULL, c->weights, NULL, c->q, c->k,
                               c->v, B, NQ, NK, DK, DV, &c->opts, work),
                     ATTN_OK);
    fd_gradient(numeric, c->scores, B * NQ * NK, scores_loss, c, FD_STEP);
    double by_scores[B * NQ * NK];
    for (int i = 0; i < B * NQ * NK; i++) by_scores[i] = g.scaled[i] * scale;
    assert_gradient_close(by_scores, numeric, B * NQ * NK);
    fd_gradient(numeric, c->weights, B * NQ * NK, weights_loss, c, FD_STEP);
    assert_gradient_close(g.weights, numeric, B * NQ * NK);
}

static void
test_sdpa_backward_matches_finite_differences_without_a_mask(void **state)
{
    (void)state;
    sdpa_case c;
    case_fill(&c, 11);
    check_case_against_finite_differences(&c);
}

static void
test_sdpa_backward_matches_finite_differences_with_a_causal_mask(void **state)
{
    (void)state;
    sdpa_case c;
    case_fill(&c, 12);
    c.opts.mask.kinds = ATTN_MASK_CAUSAL;
    check_case_against_finite_differences(&c);
}

/* Batch item 1 has key length 0: every one of its rows is fully masked. */
static void
test_sdpa_backward_matches_finite_differences_with_key_padding(void **state)
{
    (void)state;
    sdpa_case c;
    case_fill(&c, 13);
    c.key_length[0] = 2;
    c.key_length[1] = 0;
    c.opts.mask.kinds = ATTN_MASK_KEY_PADDING;
    c.opts.mask.key_length = c.key_length;
    check_case_against_finite_differences(&c);
}

static void
test_sdpa_backward_matches_finite_differences_with_a_custom_mask(void **state)
{
    (void)state;
    sdpa_case c;
    case_fill(&c, 14);
    const unsigned char allowed[NQ * NK] = {1, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0};
    memcpy(c.allowed, allowed, sizeof allowed);
    c.opts.mask.kinds = ATTN_MASK_CUSTOM;
    c.opts.mask.allowed = c.allowed;
    check_case_against_finite_differences(&c);
}

static void
test_sdpa_backward_matches_finite_differences_with_local_and_strided_masks(
    void **state)
{
    (void)state;
    sdpa_case c;
    case_fill(&c, 15);
    c.opts.mask.kinds = ATTN_MASK_LOCAL;
    c.opts.mask.window = 1;
    check_case_against_finite_differences(&c);
    case_fill(&c, 16);
    c.opts.mask.kinds = ATTN_MASK_STRIDED;
    c.opts.mask.stride = 2;
    check_case_against_finite_differences(&c);
}

static void
test_sdpa_backward_matches_finite_differences_for_every_scale_kind(void **state)
{
    (void)state;
    sdpa_case c;
    case_fill(&c, 17);
    c.opts.scale_kind = ATTN_SCALE_NONE;
    check_case_against_finite_differences(&c);
    case_fill(&c, 18);
    c.opts.scale_kind = ATTN_SCALE_FACTOR;
    c.opts.scale_factor = -0.7;
    check_case_against_finite_differences(&c);
}

static void
test_sdpa_backward_matches_finite_differences_with_dropout(void **state)
{
    (void)state;
    sdpa_case c;
    case_fill(&c, 19);
    c.opts.dropout = 0.4;
    c.opts.seed = 12345;
    c.opts.mask.kinds = ATTN_MASK_CAUSAL;
    check_case_against_finite_differences(&c);
    /* Some weight was dropped, so dropout really was exercised. */
    int dropped = 0;
    for (int i = 0; i < B * NQ * NK; i++) dropped += c.weights[i] == 0.0;
    assert_true(dropped > B * 3); /* more than the 6 causal zeros */
}

/* Masked entries: grad_scaled exactly 0; a fully masked row: grad_q row 0
 * and no contribution to grad_k or grad_v. */
static void test_sdpa_backward_gives_exact_zeros_where_masked(void **state)
{
    (void)state;
    sdpa_case c;
    case_fill(&c, 20);
    const unsigned char allowed[NQ * NK] = {0, 0, 0, 0, 1, 0, 1, 0, 1, 1, 1, 0};
    memcpy(c.allowed, allowed, sizeof allowed);
    c.opts.mask.kinds = ATTN_MASK_CUSTOM;
    c.opts.mask.allowed = c.allowed;
    sdpa_grads g;
    run_backward(&g, &c);
    for (int b = 0; b < B; b++) {
        for (int i = 0; i < NQ * NK; i++)
            if (!allowed[i]) assert_true(g.scaled[b * NQ * NK + i] == 0.0);
        for (int d = 0; d < DK; d++)
            assert_true(g.q[b * NQ * DK + d] == 0.0); /* row 0 */
        /* Key 3 is masked for every query: nothing flows into it. */
        for (int d = 0; d < DK; d++)
            assert_true(g.k[(b * NK + 3) * DK + d] == 0.0);
        for (int d = 0; d < DV; d++)
            assert_true(g.v[(b * NK + 3) * DV + d] == 0.0);
    }
}

/* With one key every weight is 1 whatever the scores: grad_scaled,
 * grad_q and grad_k are exactly 0 and grad_v is the sum of d_output. */
static void
test_sdpa_backward_with_one_key_has_zero_score_gradients(void **state)
{
    (void)state;
    const double q[2 * 2] = {0.3, -1.2, 2.0, 0.5};
    const double k[2] = {0.7, -0.4};
    const double v[3] = {1.0, 2.0, 3.0};
    const double d_output[2 * 3] = {0.5, -1.0, 2.0, 0.25, 4.0, -3.0};
    double gq[4], gk[2], gv[3], gw[2], gs[2], work[2];
    assert_int_equal(attn_sdpa_backward(gq, gk, gv, gw, gs, d_output, q, k, v,
                                        1, 2, 1, 2, 3, NULL, work),
                     ATTN_OK);
    const double zeros[4] = {0, 0, 0, 0};
    const double expected_gv[3] = {0.75, 3.0, -1.0};
    const double expected_gw[2] = {0.5 - 2.0 + 6.0, 0.25 + 8.0 - 9.0};
    assert_allclose(gs, zeros, 2, 0.0, 0.0);
    assert_allclose(gq, zeros, 4, 0.0, 0.0);
    assert_allclose(gk, zeros, 2, 0.0, 0.0);
    assert_allclose(gv, expected_gv, 3, 0.0, 0.0);
    assert_allclose(gw, expected_gw, 2, 0.0, 0.0);
}

/* Gradients overwrite their buffers: stale contents change nothing. */
static void test_sdpa_backward_overwrites_rather_than_accumulates(void **state)
{
    (void)state;
    sdpa_case c;
    case_fill(&c, 21);
    sdpa_grads clean, dirty;
    run_backward(&clean, &c);
    for (size_t i = 0; i < sizeof dirty / sizeof(double); i++)
        ((double *)&dirty)[i] = 1e300;
    run_backward(&dirty, &c);
    assert_memory_equal(&clean, &dirty, sizeof clean);
}

/* Gradients skipped with NULL do not change the others. */
static void test_sdpa_backward_accepts_null_gradient_pointers(void **state)
{
    (void)state;
    sdpa_case c;
    case_fill(&c, 22);
    sdpa_grads all;
    run_backward(&all, &c);
    double gk[B * NK * DK], work[2 * NK];
    assert_int_equal(attn_sdpa_backward(NULL, gk, NULL, NULL, NULL, c.d_output,
                                        c.q, c.k, c.v, B, NQ, NK, DK, DV, NULL,
                                        work),
                     ATTN_OK);
    assert_memory_equal(gk, all.k, sizeof gk);
}

static void test_sdpa_backward_rejects_bad_arguments(void **state)
{
    (void)state;
    sdpa_case c;
    case_fill(&c, 23);
    double gq[B * NQ * DK], work[2 * NK];
    assert_int_equal(attn_sdpa_backward(gq, NULL, NULL, NULL, NULL, NULL, c.q,
                                        c.k, c.v, B, NQ, NK, DK, DV, NULL,
                                        work),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_sdpa_backward(gq, NULL, NULL, NULL, NULL, c.d_output,
                                        c.q, c.k, c.v, B, 0, NK, DK, DV, NULL,
                                        work),
                     ATTN_ERR_SIZE);
    c.opts.dropout = 1.0;
    assert_int_equal(attn_sdpa_backward(gq, NULL, NULL, NULL, NULL, c.d_output,
                                        c.q, c.k, c.v, B, NQ, NK, DK, DV,
                                        &c.opts, work),
                     ATTN_ERR_RANGE);
    c.opts.dropout = 0.0;
    c.d_output[3] = NAN;
    assert_int_equal(attn_sdpa_backward(gq, NULL, NULL, NULL, NULL, c.d_output,
                                        c.q, c.k, c.v, B, NQ, NK, DK, DV,
                                        &c.opts, work),
                     ATTN_ERR_NOT_FINITE);
    assert_int_equal(attn_sdpa_backward_work_size(0), 0);
}

/* ---- Softmax ---- */

typedef struct softmax_case {
    double x[3 * 4], dy[3 * 4];
} softmax_case;

static double softmax_loss(void *context)
{
    const softmax_case *c = context;
    double y[12];
    assert_int_equal(attn_softmax_rows(y, c->x, 3, 4), ATTN_OK);
    return fd_dot(y, c->dy, 12);
}

static void test_softmax_backward_matches_finite_differences(void **state)
{
    (void)state;
    softmax_case c;
    test_rng rng;
    test_rng_seed(&rng, 31);
    test_rng_fill(&rng, c.x, 12, -3.0, 3.0);
    test_rng_fill(&rng, c.dy, 12, -1.0, 1.0);
    c.x[1] = -INFINITY; /* a masked entry in row 0 */
    double y[12], dx[12], numeric[12];
    assert_int_equal(attn_softmax_rows(y, c.x, 3, 4), ATTN_OK);
    assert_int_equal(attn_softmax_rows_backward(dx, y, c.dy, 3, 4), ATTN_OK);
    assert_true(dx[1] == 0.0);
    c.x[1] = 0.0; /* finite differences need finite entries: skip it */
    fd_gradient(numeric, c.x, 12, softmax_loss, &c, FD_STEP);
    c.x[1] = -INFINITY;
    numeric[1] = 0.0;
    /* Row 0 of the reference used x[1] = 0, so compare rows 1 and 2
     * there, and row 0 below with the closed form. */
    assert_gradient_close(dx + 4, numeric + 4, 8);
    const double dot = y[0] * c.dy[0] + y[2] * c.dy[2] + y[3] * c.dy[3];
    const double expected0[4] = {y[0] * (c.dy[0] - dot), 0.0,
                                 y[2] * (c.dy[2] - dot),
                                 y[3] * (c.dy[3] - dot)};
    assert_allclose(dx, expected0, 4, 1e-15, 1e-17);
}

static void test_softmax_backward_of_a_fully_masked_row_is_zero(void **state)
{
    (void)state;
    const double x[3] = {-INFINITY, -INFINITY, -INFINITY};
    const double dy[3] = {1.0, -2.0, 3.0};
    double y[3], dx[3] = {7, 7, 7};
    assert_int_equal(attn_softmax_rows(y, x, 1, 3), ATTN_OK);
    assert_int_equal(attn_softmax_rows_backward(dx, y, dy, 1, 3), ATTN_OK);
    for (int j = 0; j < 3; j++) assert_true(dx[j] == 0.0);
}

/* Shifting a row's inputs leaves softmax unchanged, so the gradient of
 * every row sums to 0; it may also be computed in place over dy. */
static void test_softmax_backward_rows_sum_to_zero_and_may_alias(void **state)
{
    (void)state;
    test_rng rng;
    test_rng_seed(&rng, 32);
    double x[2 * 5], y[10], dy[10], dx[10];
    test_rng_fill(&rng, x, 10, -2.0, 2.0);
    test_rng_fill(&rng, dy, 10, -1.0, 1.0);
    assert_int_equal(attn_softmax_rows(y, x, 2, 5), ATTN_OK);
    assert_int_equal(attn_softmax_rows_backward(dx, y, dy, 2, 5), ATTN_OK);
    for (int r = 0; r < 2; r++) {
        double sum = 0.0;
        for (int j = 0; j < 5; j++) sum += dx[r * 5 + j];
        assert_true(fabs(sum) < 1e-16);
    }
    assert_int_equal(attn_softmax_rows_backward(dy, y, dy, 2, 5), ATTN_OK);
    assert_memory_equal(dx, dy, sizeof dx);
}

static void test_softmax_backward_rejects_bad_arguments(void **state)
{
    (void)state;
    const double y[2] = {0.5, 0.5};
    const double dy[2] = {1.0, INFINITY};
    double dx[2];
    assert_int_equal(attn_softmax_rows_backward(NULL, y, dy, 1, 2),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_softmax_rows_backward(dx, y, dy, 1, 0),
                     ATTN_ERR_SIZE);
    assert_int_equal(attn_softmax_rows_backward(dx, y, dy, 1, 2),
                     ATTN_ERR_NOT_FINITE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_sdpa_backward_matches_finite_differences_without_a_mask),
        cmocka_unit_test(
            test_sdpa_backward_matches_finite_differences_with_a_causal_mask),
        cmocka_unit_test(
            test_sdpa_backward_matches_finite_differences_with_key_padding),
        cmocka_unit_test(
            test_sdpa_backward_matches_finite_differences_with_a_custom_mask),
        cmocka_unit_test(
            test_sdpa_backward_matches_finite_differences_with_local_and_strided_masks),
        cmocka_unit_test(
            test_sdpa_backward_matches_finite_differences_for_every_scale_kind),
        cmocka_unit_test(
            test_sdpa_backward_matches_finite_differences_with_dropout),
        cmocka_unit_test(test_sdpa_backward_gives_exact_zeros_where_masked),
        cmocka_unit_test(
            test_sdpa_backward_with_one_key_has_zero_score_gradients),
        cmocka_unit_test(test_sdpa_backward_overwrites_rather_than_accumulates),
        cmocka_unit_test(test_sdpa_backward_accepts_null_gradient_pointers),
        cmocka_unit_test(test_sdpa_backward_rejects_bad_arguments),
        cmocka_unit_test(test_softmax_backward_matches_finite_differences),
        cmocka_unit_test(test_softmax_backward_of_a_fully_masked_row_is_zero),
        cmocka_unit_test(test_softmax_backward_rows_sum_to_zero_and_may_alias),
        cmocka_unit_test(test_softmax_backward_rejects_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
