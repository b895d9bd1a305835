/* Layer normalisation, the feed-forward network and the transformer
 * block: forward values and gradients against finite differences. */
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
#include "test_rng.h"

/* ---- Layer normalisation ---- */

enum { LR = 3, LD = 5 };

typedef struct ln_case {
    double x[LR * LD], gamma[LD], beta[LD], dy[LR * LD];
} ln_case;

static double ln_loss(void *context)
{
    const ln_case *c = context;
    double y[LR * LD];
    assert_int_equal(
        attn_layer_norm(y, NULL, NULL, c->x, c->gamma, c->beta, LR, LD),
        ATTN_OK);
    return fd_dot(y, c->dy, LR * LD);
}

static void test_layer_norm_matches_hand_values(void **state)
{
    (void)state;
    const double x[3] = {1.0, 2.0, 3.0};
    const double gamma[3] = {1.0, 2.0, 0.5};
    const double beta[3] = {0.0, 1.0, -1.0};
    double y[3], mean, rstd;
    assert_int_equal(attn_layer_norm(y, &mean, &rstd, x, gamma, beta, 1, 3),
                     ATTN_OK);
    const double r = 1.0 / sqrt(2.0 / 3.0 + 1e-5);
    const double expected[3] = {-r, 1.0, 0.5 * r - 1.0};
    assert_true(mean == 2.0);
    assert_true(close_enough(rstd, r, 1e-15, 0.0));
    assert_allclose(y, expected, 3, 1e-15, 1e-15);
}

static void test_layer_norm_backward_matches_finite_differences(void **state)
{
    (void)state;
    ln_case c;
    test_rng rng;
    test_rng_seed(&rng, 51);
    test_rng_fill(&rng, c.x, LR * LD, -2.0, 2.0);
    test_rng_fill(&rng, c.gamma, LD, 0.5, 1.5);
    test_rng_fill(&rng, c.beta, LD, -0.5, 0.5);
    test_rng_fill(&rng, c.dy, LR * LD, -1.0, 1.0);
    double dx[LR * LD], dgamma[LD], dbeta[LD], numeric[LR * LD];
    assert_int_equal(
        attn_layer_norm_backward(dx, dgamma, dbeta, c.dy, c.x, c.gamma, LR, LD),
        ATTN_OK);
    fd_gradient(numeric, c.x, LR * LD, ln_loss, &c, FD_STEP);
    assert_gradient_close(dx, numeric, LR * LD);
    fd_gradient(numeric, c.gamma, LD, ln_loss, &c, FD_STEP);
    assert_gradient_close(dgamma, numeric, LD);
    fd_gradient(numeric, c.beta, LD, ln_loss, &c, FD_STEP);
    assert_gradient_close(dbeta, numeric, LD);
    /* Adding a constant to a row changes nothing: each row of dx sums
     * to 0. */
    for (int r = 0; r < LR; r++) {
        double sum = 0.0;
        for (int j = 0; j < LD; j++) sum += dx[r * LD + j];
        assert_true(fabs(sum) < 1e-14);
    }
    /* dx may be written over dy. */
    double dy[LR * LD];
    memcpy(dy, c.dy, sizeof dy);
    assert_int_equal(
        attn_layer_norm_backward(dy, NULL, NULL, dy, c.x, c.gamma, LR, LD),
        ATTN_OK);
    assert_memory_equal(dy, dx, sizeof dx);
}

static void test_layer_norm_rejects_bad_arguments(void **state)
{
    (void)state;
    const double x[2] = {1.0, NAN}, gamma[2] = {1.0, 1.0};
    double y[2];
    assert_int_equal(attn_layer_norm(y, NULL, NULL, NULL, gamma, NULL, 1, 2),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_layer_norm(y, NULL, NULL, x, gamma, NULL, 1, 0),
                     ATTN_ERR_SIZE);
    assert_int_equal(attn_layer_norm(y, NULL, NULL, x, gamma, NULL, 1, 2),
                     ATTN_ERR_NOT_FINITE);
    assert_int_equal(
        attn_layer_norm_backward(y, NULL, NULL, gamma, x, gamma, 1, 2),
        ATTN_ERR_NOT_FINITE);
}

/* ---- Feed-forward network ---- */

enum { FR = 4, FI = 3, FF = 5, FO = 2 };

typedef struct ffn_case {
    double x[FR * FI], w1[FI * FF], b1[FF], w2[FF * FO], b2[FO];
    double dy[FR * FO];
} ffn_case;

static double ffn_loss(void *context)
{
    const ffn_case *c = context;
    double y[FR * FO], work[FR * FF];
    assert_int_equal(attn_feed_forward(NULL, y, c->x, c->w1, c->b1, c->w2,
                                       c->b2, FR, FI, FF, FO, work),
                     ATTN_OK);
    return fd_dot(y, c->dy, FR * FO);
}

static void test_feed_forward_backward_matches_finite_differences(void **state)
{
    (void)state;
    ffn_case c;
    test_rng rng;
    test_rng_seed(&rng, 52);
    test_rng_fill(&rng, c.x, FR * FI, -1.0, 1.0);
    test_rng_fill(&rng, c.w1, FI * FF, -1.0, 1.0);
    test_rng_fill(&rng, c.b1, FF, -0.3, 0.3);
    test_rng_fill(&rng, c.w2, FF * FO, -1.0, 1.0);
    test_rng_fill(&rng, c.b2, FO, -0.3, 0.3);
    test_rng_fill(&rng, c.dy, FR * FO, -1.0, 1.0);
    double dx[FR * FI], dw1[FI * FF], db1[FF], dw2[FF * FO], db2[FO];
    double work[2 * FR * FF], numeric[FI * FF];
    assert_int_equal(attn_feed_forward_backward_work_size(FR, FF), 2 * FR * FF);
    assert_int_equal(attn_feed_forward_backward(dx, dw1, db1, dw2, db2, c.dy,
                                                c.x, c.w1, c.b1, c.w2, c.b2, FR,
                                                FI, FF, FO, work),
                     ATTN_OK);
    /* Some hidden unit is off somewhere, so the ReLU's zero slope counts. */
    double hidden[FR * FF];
    assert_int_equal(attn_feed_forward(hidden, NULL, c.x, c.w1, c.b1, c.w2,
                                       c.b2, FR, FI, FF, FO, work),
                     ATTN_OK);
    int off = 0;
    for (int i = 0; i < FR * FF; i++) off += hidden[i] == 0.0;
    assert_true(off > 0);
    struct {
        double *x, *analytic;
        size_t count;
    } checks[] = {{c.x, dx, FR * FI},
                  {c.w1, dw1, FI * FF},
                  {c.b1, db1, FF},
                  {c.w2, dw2, FF * FO},
                  {c.b2, db2, FO}};
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        fd_gradient(numeric, checks[i].x, checks[i].count, ffn_loss, &c,
                    FD_STEP);
        assert_gradient_close(checks[i].analytic, numeric, checks[i].count);
    }
}

/* A hidden unit that is off for every row passes no gradient: its column
 * of dW1 and its entry of db1 are exactly 0. */
static void test_feed_forward_backward_of_a_dead_unit_is_zero(void **state)
{
    (void)state;
    const double x[2 * 1] = {1.0, 2.0};
    const double w1[1 * 2] = {1.0, -1.0}; /* unit 1 is off: -x < 0 */
    const double w2[2 * 1] = {3.0, 5.0};
    const double dy[2] = {1.0, -2.0};
    double dw1[2], db1[2], dw2[2], dx[2], work[8];
    assert_int_equal(attn_feed_forward_backward(dx, dw1, db1, dw2, NULL, dy, x,
                                                w1, NULL, w2, NULL, 2, 1, 2, 1,
                                                work),
                     ATTN_OK);
    /* Unit 0: h = x, dh = 3 dy; dW1 = Σ x · 3 dy = 3 (1 − 4) = −9. */
    const double expected_dw1[2] = {-9.0, 0.0};
    const double expected_db1[2] = {-3.0, 0.0};
    const double expected_dw2[2] = {1.0 - 4.0, 0.0};
    const double expected_dx[2] = {3.0, -6.0};
    assert_allclose(dw1, expected_dw1, 2, 0.0, 0.0);
    assert_allclose(db1, expected_db1, 2, 0.0, 0.0);
    assert_allclose(dw2, expected_dw2, 2, 0.0, 0.0);
    assert_allclose(dx, expected_dx, 2, 0.0, 0.0);
}

/* ---- Transformer block ---- */

enum { B = 2, N = 3, DM = 4, H = 2, DF = 6 };

typedef struct block_case {
    double x[B * N * DM];
    double wq[DM * DM], wk[DM * DM], wv[DM * DM], wo[DM * DM];
    double bq[DM], bk[DM], bv[DM], bo[DM];
    double gamma1[DM], beta1[DM], w1[DM * DF], b1[DF], w2[DF * DM], b2[DM];
    double gamma2[DM], beta2[DM];
    double dy[B * N * DM];
    attn_block_dims dims;
    attn_options opts;
} block_case;

static attn_block_params block_params(const block_case *c)
{
    const attn_block_params p = {
        {c->wq, c->wk, c->wv, c->wo, c->bq, c->bk, c->bv, c->bo},
        c->gamma1,
        c->beta1,
        c->w1,
        c->b1,
        c->w2,
        c->b2,
        c->gamma2,
        c->beta2};
    return p;
}

static void block_fill(block_case *c, uint64_t seed, int norm)
{
    test_rng rng;
    test_rng_seed(&rng, seed);
    double *const arrays[] = {c->x,  c->wq, c->wk,    c->wv,    c->wo, c->bq,
                              c->bk, c->bv, c->bo,    c->beta1, c->w1, c->b1,
                              c->w2, c->b2, c->beta2, c->dy};
    const size_t counts[] = {
        B * N * DM, DM * DM, DM * DM, DM * DM, DM * DM, DM, DM, DM,
        DM,         DM,      DM * DF, DF,      DF * DM, DM, DM, B * N * DM};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        test_rng_fill(&rng, arrays[i], counts[i], -1.0, 1.0);
    test_rng_fill(&rng, c->gamma1, DM, 0.5, 1.5);
    test_rng_fill(&rng, c->gamma2, DM, 0.5, 1.5);
    const attn_block_dims dims = {B, N, DM, H, DF, norm};
    c->dims = dims;
    attn_options_init(&c->opts);
}

static int block_forward(const attn_block_outputs *out, const block_case *c)
{
    double *work = malloc(attn_transformer_block_work_size(&c->dims) *
                          sizeof *work);
    assert_non_null(work);
    const attn_block_params p = block_params(c);
    const int status = attn_transformer_block(out, c->x, &p, &c->dims, &c->opts,
                                              work);
    free(work);
    return status;
}

static double block_loss(void *context)
{
    const block_case *c = context;
    double y[B * N * DM];
    const attn_block_outputs out = {.output = y};
    assert_int_equal(block_forward(&out, c), ATTN_OK);
    return fd_dot(y, c->dy, B * N * DM);
}

typedef struct block_grads {
    double x[B * N * DM];
    double wq[DM * DM], wk[DM * DM], wv[DM * DM], wo[DM * DM];
    double bq[DM], bk[DM], bv[DM], bo[DM];
    double gamma1[DM], beta1[DM], w1[DM * DF], b1[DF], w2[DF * DM], b2[DM];
    double gamma2[DM], beta2[DM];
} block_grads;

/* The backward pass from the forward's intermediates, or computing them
 * again when saved is NULL. */
static int block_backward_from(block_grads *g, const block_case *c,
                               const attn_block_outputs *saved)
{
    const attn_block_grads grads = {.x = g->x,
                                    .attention = {.wq = g->wq,
                                                  .wk = g->wk,
                                                  .wv = g->wv,
                                                  .wo = g->wo,
                                                  .bq = g->bq,
                                                  .bk = g->bk,
                                                  .bv = g->bv,
                                                  .bo = g->bo},
                                    .gamma1 = g->gamma1,
                                    .beta1 = g->beta1,
                                    .w1 = g->w1,
                                    .b1 = g->b1,
                                    .w2 = g->w2,
                                    .b2 = g->b2,
                                    .gamma2 = g->gamma2,
                                    .beta2 = g->beta2};
    const size_t length = attn_transformer_block_backward_work_size(&c->dims);
    assert_true(length > 0);
    double *work = malloc(length * sizeof *work);
    assert_non_null(work);
    const attn_block_params p = block_params(c);
    const int status = saved != NULL
                           ? attn_transformer_block_backward_saved(
                                 &grads, c->dy, c->x, saved, &p, &c->dims,
                                 &c->opts, work)
                           : attn_transformer_block_backward(&grads, c->dy,
                                                             c->x, &p, &c->dims,
                                                             &c->opts, work);
    free(work);
    return status;
}

static int block_backward(block_grads *g, const block_case *c)
{
    return block_backward_from(g, c, NULL);
}

static void check_block(block_case *c)
{
    block_grads g;
    assert_int_equal(block_backward(&g, c), ATTN_OK);
    double numeric[DM * DF + B * N * DM];
    struct {
        double *x, *analytic;
        size_t count;
    } checks[] = {
        {c->x, g.x, B * N * DM}, {c->wq, g.wq, DM * DM},
        {c->wk, g.wk, DM * DM},  {c->wv, g.wv, DM * DM},
        {c->wo, g.wo, DM * DM},  {c->bq, g.bq, DM},
        {c->bk, g.bk, DM},       {c->bv, g.bv, DM},
        {c->bo, g.bo, DM},       {c->gamma1, g.gamma1, DM},
        {c->beta1, g.beta1, DM}, {c->w1, g.w1, DM * DF},
        {c->b1, g.b1, DF},       {c->w2, g.w2, DF * DM},
        {c->b2, g.b2, DM},       {c->gamma2, g.gamma2, DM},
        {c->beta2, g.beta2, DM},
    };
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        fd_gradient(numeric, checks[i].x, checks[i].count, block_loss, c,
                    FD_STEP);
        assert_gradient_close(checks[i].analytic, numeric, checks[i].count);
    }
}

static void
test_transformer_block_backward_matches_finite_differences_post_norm(
    void **state)
{
    (void)state;
    block_case c;
    block_fill(&c, 61, ATTN_NORM_POST);
    check_block(&c);
}

static void
test_transformer_block_backward_matches_finite_differences_pre_norm_with_a_causal_mask(
    void **state)
{
    (void)state;
    block_case c;
    block_fill(&c, 62, ATTN_NORM_PRE);
    c.opts.mask.kinds = ATTN_MASK_CAUSAL;
    check_block(&c);
}

static void
test_transformer_block_backward_matches_finite_differences_with_dropout_and_key_padding(
    void **state)
{
    (void)state;
    for (int norm = ATTN_NORM_POST; norm <= ATTN_NORM_PRE; norm++) {
        block_case c;
        block_fill(&c, 67 + (uint64_t)norm, norm);
        static const int key_length[B] = {2, 3};
        c.opts.mask.kinds = ATTN_MASK_KEY_PADDING;
        c.opts.mask.key_length = key_length;
        c.opts.dropout = 0.3;
        c.opts.seed = 2026;
        check_block(&c);
    }
}

/* The intermediates fit together as the placement says. */
static void
test_transformer_block_intermediates_follow_the_definition(void **state)
{
    (void)state;
    for (int norm = ATTN_NORM_POST; norm <= ATTN_NORM_PRE; norm++) {
        block_case c;
        block_fill(&c, 63 + (uint64_t)norm, norm);
        enum { C = B * N * DM };
        double attention[C], ln1[C], sum1[C], ln2[C], hidden[B * N * DF];
        double ffn[C], sum2[C], output[C], expected[C];
        const attn_block_outputs out = {.attention = {.output = attention},
                                        .ln1 = ln1,
                                        .sum1 = sum1,
                                        .ln2 = ln2,
                                        .hidden = hidden,
                                        .ffn = ffn,
                                        .sum2 = sum2,
                                        .output = output};
        assert_int_equal(block_forward(&out, &c), ATTN_OK);
        for (int i = 0; i < C; i++) expected[i] = c.x[i] + attention[i];
        assert_allclose(sum1, expected, C, 0.0, 0.0);
        const double *ffn_in = norm == ATTN_NORM_PRE ? ln2 : ln1;
        const double *residual = norm == ATTN_NORM_PRE ? sum1 : ln1;
        for (int i = 0; i < C; i++) expected[i] = residual[i] + ffn[i];
        assert_allclose(sum2, expected, C, 0.0, 0.0);
        double work[B * N * DF];
        assert_int_equal(attn_feed_forward(NULL, expected, ffn_in, c.w1, c.b1,
                                           c.w2, c.b2, B * N, DM, DF, DM, work),
                         ATTN_OK);
        assert_allclose(ffn, expected, C, 0.0, 0.0);
        assert_allclose(output, norm == ATTN_NORM_PRE ? sum2 : ln2, C, 0.0,
                        0.0);
        assert_int_equal(attn_layer_norm(expected, NULL, NULL,
                                         norm == ATTN_NORM_PRE ? c.x : sum1,
                                         c.gamma1, c.beta1, B * N, DM),
                         ATTN_OK);
        assert_allclose(ln1, expected, C, 0.0, 0.0);
    }
}

static void test_transformer_block_backward_overwrites_its_buffers(void **state)
{
    (void)state;
    block_case c;
    block_fill(&c, 65, ATTN_NORM_POST);
    block_grads clean, dirty;
    assert_int_equal(block_backward(&clean, &c), ATTN_OK);
    for (size_t i = 0; i < sizeof dirty / sizeof(double); i++)
        ((double *)&dirty)[i] = 1e300;
    assert_int_equal(block_backward(&dirty, &c), ATTN_OK);
    assert_memory_equal(&clean, &dirty, sizeof clean);
}

/* Every intermediate of a forward pass, as a trainer keeps them. */
typedef struct block_saved {
    double q[B * N * DM], k[B * N * DM], v[B * N * DM], concat[B * N * DM];
    double weights[B * H * N * N];
    double ln1[B * N * DM], sum1[B * N * DM], ln2[B * N * DM];
    double sum2[B * N * DM], output[B * N * DM];
} block_saved;

static attn_block_outputs saved_outputs(block_saved *s)
{
    const attn_block_outputs out = {.attention = {.q = s->q,
                                                  .k = s->k,
                                                  .v = s->v,
                                                  .concat = s->concat,
                                                  .weights = s->weights},
                                    .ln1 = s->ln1,
                                    .sum1 = s->sum1,
                                    .ln2 = s->ln2,
                                    .sum2 = s->sum2,
                                    .output = s->output};
    return out;
}

static void
test_the_saved_forward_gives_the_same_bits_with_both_norms_masks_and_dropout(
    void **state)
{
    (void)state;
    for (int variant = 0; variant < 4; variant++) {
        block_case c;
        block_fill(&c, 70 + (uint64_t)variant,
                   variant % 2 ? ATTN_NORM_PRE : ATTN_NORM_POST);
        if (variant == 2) c.opts.mask.kinds = ATTN_MASK_CAUSAL;
        if (variant == 3) { /* dropout: the weights are recomputed */
            c.opts.dropout = 0.3;
            c.opts.seed = 11;
        }
        block_saved s;
        const attn_block_outputs saved = saved_outputs(&s);
        assert_int_equal(block_forward(&saved, &c), ATTN_OK);
        block_grads again, from_saved;
        memset(&again, 0, sizeof again);
        memset(&from_saved, 0, sizeof from_saved);
        assert_int_equal(block_backward(&again, &c), ATTN_OK);
        assert_int_equal(block_backward_from(&from_saved, &c, &saved), ATTN_OK);
        assert_memory_equal(&again, &from_saved, sizeof again);
    }
}

static void
test_a_saved_forward_missing_an_intermediate_is_refused(void **state)
{
    (void)state;
    block_case c;
    block_fill(&c, 74, ATTN_NORM_POST);
    block_saved s;
    attn_block_outputs saved = saved_outputs(&s);
    assert_int_equal(block_forward(&saved, &c), ATTN_OK);
    block_grads g;
    saved.sum2 = NULL;
    assert_int_equal(block_backward_from(&g, &c, &saved), ATTN_ERR_NULL);
    saved = saved_outputs(&s);
    saved.attention.weights = NULL;
    assert_int_equal(block_backward_from(&g, &c, &saved), ATTN_ERR_NULL);
}

static void test_transformer_block_rejects_bad_arguments(void **state)
{
    (void)state;
    block_case c;
    block_fill(&c, 66, ATTN_NORM_POST);
    double y[B * N * DM], work[1];
    const attn_block_outputs out = {.output = y};
    attn_block_params p = block_params(&c);
    attn_block_dims dims = c.dims;
    dims.norm = 2;
    assert_int_equal(attn_transformer_block(&out, c.x, &p, &dims, NULL, work),
                     ATTN_ERR_OPTION);
    assert_int_equal(attn_transformer_block_work_size(&dims), 0);
    dims = c.dims;
    dims.num_heads = 3;
    assert_int_equal(attn_transformer_block(&out, c.x, &p, &dims, NULL, work),
                     ATTN_ERR_HEADS);
    p.gamma1 = NULL;
    assert_int_equal(attn_transformer_block(&out, c.x, &p, &c.dims, NULL, work),
                     ATTN_ERR_NULL);
    c.dy[0] = INFINITY;
    block_grads g;
    assert_int_equal(block_backward(&g, &c), ATTN_ERR_NOT_FINITE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layer_norm_matches_hand_values),
        cmocka_unit_test(test_layer_norm_backward_matches_finite_differences),
        cmocka_unit_test(test_layer_norm_rejects_bad_arguments),
        cmocka_unit_test(test_feed_forward_backward_matches_finite_differences),
        cmocka_unit_test(test_feed_forward_backward_of_a_dead_unit_is_zero),
        cmocka_unit_test(
            test_transformer_block_backward_matches_finite_differences_post_norm),
        cmocka_unit_test(
            test_transformer_block_backward_matches_finite_differences_pre_norm_with_a_causal_mask),
        cmocka_unit_test(
            test_transformer_block_backward_matches_finite_differences_with_dropout_and_key_padding),
        cmocka_unit_test(
            test_transformer_block_intermediates_follow_the_definition),
        cmocka_unit_test(
            test_transformer_block_backward_overwrites_its_buffers),
        cmocka_unit_test(
            test_the_saved_forward_gives_the_same_bits_with_both_norms_masks_and_dropout),
        cmocka_unit_test(
            test_a_saved_forward_missing_an_intermediate_is_refused),
        cmocka_unit_test(test_transformer_block_rejects_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
