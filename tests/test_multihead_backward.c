/* Gradients of multi-head attention against central finite differences,
 * and its reduction to scaled dot-product attention. */
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

enum { B = 2, NQ = 3, NKV = 4, DIN = 3, DKV = 2, DM = 4, H = 2, DOUT = 3 };

typedef struct mha_case {
    double x[B * NQ * DIN], xkv[B * NKV * DKV];
    double wq[DIN * DM], wk[DIN * DM], wv[DIN * DM], wo[DM * DOUT];
    double bq[DM], bk[DM], bv[DM], bo[DOUT];
    double d_output[B * NQ * DOUT];
    int cross;
    attn_mha_dims dims;
    attn_options opts;
} mha_case;

static attn_mha_params params_of(const mha_case *c)
{
    const attn_mha_params p = {c->wq, c->wk, c->wv, c->wo,
                               c->bq, c->bk, c->bv, c->bo};
    return p;
}

static void case_fill(mha_case *c, uint64_t seed, int cross)
{
    test_rng rng;
    test_rng_seed(&rng, seed);
    test_rng_fill(&rng, c->x, B * NQ * DIN, -1.0, 1.0);
    test_rng_fill(&rng, c->xkv, B * NKV * DKV, -1.0, 1.0);
    test_rng_fill(&rng, c->wq, DIN * DM, -1.0, 1.0);
    test_rng_fill(&rng, c->wk, DIN * DM, -1.0, 1.0);
    test_rng_fill(&rng, c->wv, DIN * DM, -1.0, 1.0);
    test_rng_fill(&rng, c->wo, DM * DOUT, -1.0, 1.0);
    test_rng_fill(&rng, c->bq, DM, -0.5, 0.5);
    test_rng_fill(&rng, c->bk, DM, -0.5, 0.5);
    test_rng_fill(&rng, c->bv, DM, -0.5, 0.5);
    test_rng_fill(&rng, c->bo, DOUT, -0.5, 0.5);
    test_rng_fill(&rng, c->d_output, B * NQ * DOUT, -1.0, 1.0);
    c->cross = cross;
    const attn_mha_dims dims = {
        B, NQ, cross ? NKV : NQ, DIN, cross ? DKV : DIN, DM, H, DOUT};
    c->dims = dims;
    attn_options_init(&c->opts);
}

static double mha_loss(void *context)
{
    const mha_case *c = context;
    double output[B * NQ * DOUT];
    double *work = malloc(attn_multihead_work_size(&c->dims) * sizeof *work);
    assert_non_null(work);
    const attn_mha_outputs out = {.output = output};
    const attn_mha_params p = params_of(c);
    assert_int_equal(attn_multihead(&out, c->x, c->cross ? c->xkv : NULL, &p,
                                    &c->dims, &c->opts, work),
                     ATTN_OK);
    free(work);
    return fd_dot(output, c->d_output, B * NQ * DOUT);
}

typedef struct mha_grads {
    double x[B * NQ * DIN], xkv[B * NKV * DKV];
    double wq[DIN * DM], wk[DIN * DM], wv[DIN * DM], wo[DM * DOUT];
    double bq[DM], bk[DM], bv[DM], bo[DOUT];
} mha_grads;

static attn_mha_grads grads_of(mha_grads *g, const mha_case *c)
{
    const attn_mha_grads grads = {.x_q = g->x,
                                  .x_kv = c->cross ? g->xkv : NULL,
                                  .wq = g->wq,
                                  .wk = g->wk,
                                  .wv = g->wv,
                                  .wo = g->wo,
                                  .bq = g->bq,
                                  .bk = g->bk,
                                  .bv = g->bv,
                                  .bo = g->bo};
    return grads;
}

static int run_backward(mha_grads *g, const mha_case *c)
{
    const attn_mha_grads grads = grads_of(g, c);
    const size_t length = attn_multihead_backward_work_size(&c->dims);
    assert_true(length > 0);
    double *work = malloc(length * sizeof *work);
    assert_non_null(work);
    const attn_mha_params p = params_of(c);
    const int status = attn_multihead_backward(&grads, c->d_output, c->x,
                                               c->cross ? c->xkv : NULL, &p,
                                               &c->dims, &c->opts, work);
    free(work);
    return status;
}

/* Every input and parameter of a case against finite differences. */
static void check_case(mha_case *c)
{
    mha_grads g;
    assert_int_equal(run_backward(&g, c), ATTN_OK);
    double numeric[B * NKV * DIN + DM * DOUT];
    struct {
        double *x, *analytic;
        size_t count;
    } checks[] = {
        {c->x, g.x, B * NQ * DIN},
        {c->wq, g.wq, DIN * DM},
        {c->wo, g.wo, DM * DOUT},
        {c->bq, g.bq, DM},
        {c->bk, g.bk, DM},
        {c->bv, g.bv, DM},
        {c->bo, g.bo, DOUT},
        {c->wk, g.wk, (size_t)(c->cross ? DKV : DIN) * DM},
        {c->wv, g.wv, (size_t)(c->cross ? DKV : DIN) * DM},
        {c->xkv, g.xkv, c->cross ? B * NKV * DKV : 0},
    };
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        fd_gradient(numeric, checks[i].x, checks[i].count, mha_loss, c,
                    FD_STEP);
        assert_gradient_close(checks[i].analytic, numeric, checks[i].count);
    }
}

static void
test_multihead_backward_matches_finite_differences_for_self_attention(
    void **state)
{
    (void)state;
    mha_case c;
    case_fill(&c, 41, 0);
    check_case(&c);
}

static void
test_multihead_backward_matches_finite_differences_with_a_causal_mask_and_dropout(
    void **state)
{
    (void)state;
    mha_case c;
    case_fill(&c, 42, 0);
    c.opts.mask.kinds = ATTN_MASK_CAUSAL;
    c.opts.dropout = 0.3;
    c.opts.seed = 99;
    check_case(&c);
}

static void
test_multihead_backward_matches_finite_differences_for_cross_attention(
    void **state)
{
    (void)state;
    mha_case c;
    case_fill(&c, 43, 1);
    int key_length[B] = {3, 1};
    c.opts.mask.kinds = ATTN_MASK_KEY_PADDING;
    c.opts.mask.key_length = key_length;
    c.opts.scale_kind = ATTN_SCALE_FACTOR;
    c.opts.scale_factor = 0.8;
    check_case(&c);
}

static void
test_multihead_backward_matches_finite_differences_with_custom_local_and_strided_masks(
    void **state)
{
    (void)state;
    mha_case c;
    case_fill(&c, 47, 1);
    /* Query 2 may attend to no key: a fully masked row. */
    static const unsigned char allowed[NQ * NKV] = {1, 1, 0, 1, 0, 1,
                                                    1, 0, 0, 0, 0, 0};
    c.opts.mask.kinds = ATTN_MASK_CUSTOM | ATTN_MASK_LOCAL;
    c.opts.mask.allowed = allowed;
    c.opts.mask.window = 2;
    c.opts.scale_kind = ATTN_SCALE_NONE;
    check_case(&c);
    case_fill(&c, 48, 0);
    c.opts.mask.kinds = ATTN_MASK_STRIDED;
    c.opts.mask.stride = 2;
    check_case(&c);
}

/* With one head, identity projections and no biases, multi-head attention
 * is SDPA with Q = K = V = x: dX = dQ + dK + dV and dW_o's role is nil. */
static void
test_multihead_backward_with_identity_projections_and_one_head_is_sdpa(
    void **state)
{
    (void)state;
    enum { N = 3, D = 4 };
    double eye[D * D] = {0};
    for (int i = 0; i < D; i++) eye[i * D + i] = 1.0;
    double x[B * N * D], d_output[B * N * D];
    test_rng rng;
    test_rng_seed(&rng, 44);
    test_rng_fill(&rng, x, B * N * D, -1.5, 1.5);
    test_rng_fill(&rng, d_output, B * N * D, -1.0, 1.0);
    attn_options opts;
    attn_options_init(&opts);
    opts.mask.kinds = ATTN_MASK_CAUSAL;

    double dq[B * N * D], dk[B * N * D], dv[B * N * D];
    double gw[B * N * N], gs[B * N * N], sdpa_work[2 * N];
    assert_int_equal(attn_sdpa_backward(dq, dk, dv, gw, gs, d_output, x, x, x,
                                        B, N, N, D, D, &opts, sdpa_work),
                     ATTN_OK);
    double expected_dx[B * N * D];
    for (int i = 0; i < B * N * D; i++) expected_dx[i] = dq[i] + dk[i] + dv[i];

    const attn_mha_dims dims = {B, N, N, D, D, D, 1, D};
    const attn_mha_params p = {eye, eye, eye, eye, NULL, NULL, NULL, NULL};
    double dx[B * N * D], mq[B * N * D], mw[B * N * N], ms[B * N * N];
    double concat[B * N * D], bo[D];
    const attn_mha_grads grads = {.x_q = dx,
                                  .q = mq,
                                  .weights = mw,
                                  .scaled = ms,
                                  .concat = concat,
                                  .bo = bo};
    double *work = malloc(attn_multihead_backward_work_size(&dims) *
                          sizeof *work);
    assert_non_null(work);
    assert_int_equal(attn_multihead_backward(&grads, d_output, x, NULL, &p,
                                             &dims, &opts, work),
                     ATTN_OK);
    free(work);
    assert_allclose(dx, expected_dx, B * N * D, 1e-14, 1e-15);
    assert_allclose(mq, dq, B * N * D, 1e-14, 1e-15);
    assert_allclose(mw, gw, B * N * N, 1e-14, 1e-15);
    assert_allclose(ms, gs, B * N * N, 1e-14, 1e-15);
    assert_allclose(concat, d_output, B * N * D, 0.0, 0.0);
    /* db_o is the column sums of dO over the batch and the queries. */
    for (int c = 0; c < D; c++) {
        double sum = 0.0;
        for (int r = 0; r < B * N; r++) sum += d_output[r * D + c];
        assert_true(close_enough(bo[c], sum, 1e-15, 1e-16));
    }
}

static void
test_multihead_backward_overwrites_rather_than_accumulates(void **state)
{
    (void)state;
    mha_case c;
    case_fill(&c, 45, 0);
    mha_grads clean, dirty;
    memset(&clean, 0, sizeof clean);
    assert_int_equal(run_backward(&clean, &c), ATTN_OK);
    for (size_t i = 0; i < sizeof dirty / sizeof(double); i++)
        ((double *)&dirty)[i] = -3e300;
    assert_int_equal(run_backward(&dirty, &c), ATTN_OK);
    /* Self-attention writes no x_kv gradient: leave that part out. */
    memcpy(dirty.xkv, clean.xkv, sizeof dirty.xkv);
    assert_memory_equal(&clean, &dirty, sizeof clean);
}

/* The backward from the forward's saved intermediates, or NULL to run
 * attn_multihead_backward; the grads of every parameter and input. */
static int run_saved_backward(mha_grads *g, const mha_case *c, int saved)
{
    enum { GRID = B * H * NQ * NKV };
    double q[B * NQ * DM], k[B * NKV * DM], v[B * NKV * DM];
    double concat[B * NQ * DM], weights[GRID], output[B * NQ * DOUT];
    const attn_mha_outputs outs = {.q = q,
                                   .k = k,
                                   .v = v,
                                   .weights = weights,
                                   .concat = concat,
                                   .output = output};
    const attn_mha_params p = params_of(c);
    const double *x_kv = c->cross ? c->xkv : NULL;
    double *work = malloc(attn_multihead_work_size(&c->dims) * sizeof *work);
    assert_non_null(work);
    assert_int_equal(
        attn_multihead(&outs, c->x, x_kv, &p, &c->dims, &c->opts, work),
        ATTN_OK);
    free(work);
    if (!saved) return run_backward(g, c);
    const attn_mha_grads grads = grads_of(g, c);
    work = malloc(attn_multihead_backward_work_size(&c->dims) * sizeof *work);
    assert_non_null(work);
    const int status = attn_multihead_backward_saved(
        &grads, c->d_output, c->x, x_kv, &outs, &p, &c->dims, &c->opts, work);
    free(work);
    return status;
}

static void
test_the_saved_forward_gives_the_same_bits_with_masks_and_dropout(void **state)
{
    (void)state;
    for (int variant = 0; variant < 4; variant++) {
        mha_case c;
        case_fill(&c, 50 + (uint64_t)variant, variant == 1);
        if (variant == 2) c.opts.mask.kinds = ATTN_MASK_CAUSAL;
        if (variant == 3) { /* dropout: the weights are recomputed */
            c.opts.dropout = 0.25;
            c.opts.seed = 7;
        }
        mha_grads again, saved;
        memset(&again, 0, sizeof again);
        memset(&saved, 0, sizeof saved);
        assert_int_equal(run_saved_backward(&again, &c, 0), ATTN_OK);
        assert_int_equal(run_saved_backward(&saved, &c, 1), ATTN_OK);
        assert_memory_equal(&again, &saved, sizeof again);
    }
}

static void test_a_saved_forward_missing_a_tensor_is_refused(void **state)
{
    (void)state;
    mha_case c;
    case_fill(&c, 60, 0);
    mha_grads g;
    const attn_mha_grads grads = {.x_q = g.x};
    const attn_mha_params p = params_of(&c);
    double q[B * NQ * DM], work[1];
    const attn_mha_outputs partial = {.q = q, .k = q, .v = q, .concat = q};
    assert_int_equal(attn_multihead_backward_saved(&grads, c.d_output, c.x,
                                                   NULL, &partial, &p, &c.dims,
                                                   NULL, work),
                     ATTN_ERR_NULL);
}

static void test_multihead_backward_rejects_bad_arguments(void **state)
{
    (void)state;
    mha_case c;
    case_fill(&c, 46, 0);
    mha_grads g;
    const attn_mha_grads grads = {.x_q = g.x};
    const attn_mha_params p = params_of(&c);
    double work[1];
    assert_int_equal(attn_multihead_backward(&grads, NULL, c.x, NULL, &p,
                                             &c.dims, NULL, work),
                     ATTN_ERR_NULL);
    attn_mha_dims bad = c.dims;
    bad.num_heads = 3;
    assert_int_equal(attn_multihead_backward(&grads, c.d_output, c.x, NULL, &p,
                                             &bad, NULL, work),
                     ATTN_ERR_HEADS);
    assert_int_equal(attn_multihead_backward_work_size(&bad), 0);
    bad = c.dims;
    bad.n_q = 0;
    assert_int_equal(attn_multihead_backward(&grads, c.d_output, c.x, NULL, &p,
                                             &bad, NULL, work),
                     ATTN_ERR_SIZE);
    c.d_output[0] = NAN;
    c.opts.dropout = 0.0;
    assert_int_equal(run_backward(&g, &c), ATTN_ERR_NOT_FINITE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_multihead_backward_matches_finite_differences_for_self_attention),
        cmocka_unit_test(
            test_multihead_backward_matches_finite_differences_with_a_causal_mask_and_dropout),
        cmocka_unit_test(
            test_multihead_backward_matches_finite_differences_for_cross_attention),
        cmocka_unit_test(
            test_multihead_backward_matches_finite_differences_with_custom_local_and_strided_masks),
        cmocka_unit_test(
            test_multihead_backward_with_identity_projections_and_one_head_is_sdpa),
        cmocka_unit_test(
            test_multihead_backward_overwrites_rather_than_accumulates),
        cmocka_unit_test(
            test_the_saved_forward_gives_the_same_bits_with_masks_and_dropout),
        cmocka_unit_test(test_a_saved_forward_missing_a_tensor_is_refused),
        cmocka_unit_test(test_multihead_backward_rejects_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
