/*
 * The float32 path against the double one: every kernel (the portable
 * scalar one forced on its own, AVX2 + FMA and AVX-512F each forced where
 * the CPU has them, and the one attn_sdpa_f32 picks) on random problems with
 * every mask, sizes that are not multiples of the tiles, batches, n_q != n_k
 * and d_k != d_v. The inputs are drawn in double, rounded to float, and the
 * double path gets the rounded values, so the difference is the float
 * computation alone. Errors are relative to the largest magnitude of the
 * compared array (normwise).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "attention.h"
#include "kernels/kernels.h"
#include "test_rng.h"

typedef struct problem {
    int batch, n_q, n_k, d_k, d_v;
    float *q, *k, *v;       /* float inputs */
    double *qd, *kd, *vd;   /* the same values in double */
    unsigned char *allowed; /* [n_q, n_k] for the custom mask */
    int key_length[4];
} problem;

static void fill(test_rng *rng, float *f, double *d, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        f[i] = (float)test_rng_uniform(rng, -1.0, 1.0);
        d[i] = f[i];
    }
}

static problem make_problem(uint64_t seed, int batch, int n_q, int n_k, int d_k,
                            int d_v)
{
    test_rng rng;
    test_rng_seed(&rng, seed);
    problem p = {batch, n_q,  n_k,  d_k,  d_v,  NULL,        NULL,
                 NULL,  NULL, NULL, NULL, NULL, {0, 0, 0, 0}};
    const size_t nq = (size_t)batch * n_q * d_k, nk = (size_t)batch * n_k * d_k;
    const size_t nv = (size_t)batch * n_k * d_v;
    p.q = malloc(nq * sizeof *p.q);
    p.k = malloc(nk * sizeof *p.k);
    p.v = malloc(nv * sizeof *p.v);
    p.qd = malloc(nq * sizeof *p.qd);
    p.kd = malloc(nk * sizeof *p.kd);
    p.vd = malloc(nv * sizeof *p.vd);
    p.allowed = malloc((size_t)n_q * n_k);
    assert_non_null(p.q);
    assert_non_null(p.k);
    assert_non_null(p.v);
    assert_non_null(p.qd);
    assert_non_null(p.kd);
    assert_non_null(p.vd);
    assert_non_null(p.allowed);
    fill(&rng, p.q, p.qd, nq);
    fill(&rng, p.k, p.kd, nk);
    fill(&rng, p.v, p.vd, nv);
    for (size_t i = 0; i < (size_t)n_q * n_k; i++)
        p.allowed[i] = test_rng_uniform(&rng, 0.0, 1.0) < 0.6;
    for (int b = 0; b < batch && b < 4; b++)
        p.key_length[b] = test_rng_int(&rng, 0, n_k); /* 0: fully masked */
    return p;
}

static void free_problem(problem *p)
{
    free(p->q);
    free(p->k);
    free(p->v);
    free(p->qd);
    free(p->kd);
    free(p->vd);
    free(p->allowed);
}

/* max |a - b| / max |b| (0 when b is all 0 and a equals it). */
static double normwise_error(const float *a, const double *b, size_t count)
{
    double diff = 0.0, size = 0.0;
    for (size_t i = 0; i < count; i++) {
        const double d = fabs((double)a[i] - b[i]);
        if (!(d <= diff)) diff = d; /* NaN sticks */
        if (fabs(b[i]) > size) size = fabs(b[i]);
    }
    return size > 0.0 ? diff / size : diff;
}

/* Runs one problem through the double path and a float kernel with and
 * without weights; returns the largest normwise error. */
static double compare(const problem *p, const attn_options *opts, int kernel)
{
    const size_t grid = (size_t)p->batch * p->n_q * p->n_k;
    const size_t out = (size_t)p->batch * p->n_q * p->d_v;
    double *w64 = malloc(grid * sizeof *w64), *o64 = malloc(out * sizeof *o64);
    double *work64 = malloc(attn_sdpa_work_size(p->n_k) * sizeof *work64);
    float *w32 = malloc(grid * sizeof *w32), *o32 = malloc(out * sizeof *o32);
    float *o32b = malloc(out * sizeof *o32b);
    const size_t work_size = attn_sdpa_f32_work_size(p->n_k, p->d_k, p->d_v);
    assert_true(work_size > 0);
    float *work32 = malloc(work_size * sizeof *work32);
    assert_non_null(w64);
    assert_non_null(o64);
    assert_non_null(work64);
    assert_non_null(w32);
    assert_non_null(o32);
    assert_non_null(o32b);
    assert_non_null(work32);

    assert_int_equal(attn_sdpa(NULL, NULL, w64, o64, p->qd, p->kd, p->vd,
                               p->batch, p->n_q, p->n_k, p->d_k, p->d_v, opts,
                               work64),
                     ATTN_OK);
    assert_int_equal(attn__sdpa_f32_using(kernel, w32, o32, p->q, p->k, p->v,
                                          p->batch, p->n_q, p->n_k, p->d_k,
                                          p->d_v, opts, work32),
                     ATTN_OK);
    assert_int_equal(attn__sdpa_f32_using(kernel, NULL, o32b, p->q, p->k, p->v,
                                          p->batch, p->n_q, p->n_k, p->d_k,
                                          p->d_v, opts, work32),
                     ATTN_OK);
    /* masked weights are exactly 0 in both */
    for (size_t i = 0; i < grid; i++)
        if (w64[i] == 0.0 && w32[i] != 0.0f)
            fail_msg("weight %zu: %g where the double path has exactly 0", i,
                     (double)w32[i]);
    double error = normwise_error(w32, w64, grid);
    const double e_out = normwise_error(o32, o64, out);
    const double e_online = normwise_error(o32b, o64, out);
    if (e_out > error) error = e_out;
    if (e_online > error) error = e_online;
    free(w64);
    free(o64);
    free(work64);
    free(w32);
    free(o32);
    free(o32b);
    free(work32);
    return error;
}

enum { MASK_CASES = 9 };

/* The mask of case m: none, each kind alone, combinations, a scale. */
static void mask_case(attn_options *opts, const problem *p, int m)
{
    attn_options_init(opts);
    attn_mask *mask = &opts->mask;
    mask->key_length = p->key_length;
    mask->allowed = p->allowed;
    mask->window = 5;
    mask->stride = 3;
    switch (m) {
    case 0: break;
    case 1: mask->kinds = ATTN_MASK_CAUSAL; break;
    case 2: mask->kinds = ATTN_MASK_KEY_PADDING; break;
    case 3: mask->kinds = ATTN_MASK_LOCAL; break;
    case 4: mask->kinds = ATTN_MASK_STRIDED; break;
    case 5: mask->kinds = ATTN_MASK_CUSTOM; break;
    case 6:
        mask->kinds = ATTN_MASK_CAUSAL | ATTN_MASK_KEY_PADDING |
                      ATTN_MASK_LOCAL;
        opts->scale_kind = ATTN_SCALE_NONE;
        break;
    case 7:
        mask->kinds = ATTN_MASK_LOCAL;
        mask->window = 70; /* wider than a tile */
        opts->scale_kind = ATTN_SCALE_FACTOR;
        opts->scale_factor = 0.3;
        break;
    default:
        mask->kinds = ATTN_MASK_CAUSAL;
        opts->dropout = 0.25;
        opts->seed = 7;
        break;
    }
}

static void check_every_mask(int kernel)
{
    static const int shapes[][5] = {
        {2, 37, 70, 19, 23}, {1, 130, 130, 64, 64}, {3, 5, 1, 3, 2},
        {1, 1, 200, 8, 33},  {2, 67, 9, 64, 16},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        problem p = make_problem(100 + s, shapes[s][0], shapes[s][1],
                                 shapes[s][2], shapes[s][3], shapes[s][4]);
        for (int m = 0; m < MASK_CASES; m++) {
            attn_options opts;
            mask_case(&opts, &p, m);
            const double error = compare(&p, &opts, kernel);
            if (!(error <= 1e-5))
                fail_msg("shape %zu, mask case %d: error %g", s, m, error);
        }
        free_problem(&p);
    }
}

static void test_the_scalar_kernel_matches_double_with_every_mask(void **state)
{
    (void)state;
    check_every_mask(ATTN__F32_SCALAR);
}

/* 1 if this build and CPU have the kernel. */
static int kernel_available(int kernel)
{
    const float x[1] = {1};
    float out[1], work[8192];
    assert_true(attn_sdpa_f32_work_size(1, 1, 1) <= 8192);
    return attn__sdpa_f32_using(kernel, NULL, out, x, x, x, 1, 1, 1, 1, 1, NULL,
                                work) != ATTN_ERR_OPTION;
}

static void test_the_chosen_kernel_matches_double_with_every_mask(void **state)
{
    (void)state;
    print_message("attn_sdpa_f32 runs the %s kernel\n", attn_f32_kernel_name());
    check_every_mask(ATTN__F32_BEST);
}

static void
test_the_avx2_kernel_matches_double_where_the_cpu_has_it(void **state)
{
    (void)state;
    if (!kernel_available(ATTN__F32_AVX2)) skip();
    check_every_mask(ATTN__F32_AVX2);
}

static void
test_the_avx512_kernel_matches_double_where_the_cpu_has_it(void **state)
{
    (void)state;
    if (!kernel_available(ATTN__F32_AVX512)) skip();
    check_every_mask(ATTN__F32_AVX512);
}

static void test_an_unknown_kernel_is_an_option_error(void **state)
{
    (void)state;
    assert_false(kernel_available(ATTN__F32_KERNELS));
    assert_false(kernel_available(-1));
}

static void test_t2048_outputs_agree_with_double_to_1e_5(void **state)
{
    (void)state;
    problem p = make_problem(2048, 1, 2048, 2048, 64, 64);
    attn_options opts;
    attn_options_init(&opts);
    const double error = compare(&p, &opts, ATTN__F32_BEST);
    print_message("T = 2048, d = 64: normwise error %.3g\n", error);
    assert_true(error <= 1e-5);
    free_problem(&p);
}

static void test_a_fully_masked_row_gives_zeros(void **state)
{
    (void)state;
    const float q[2 * 3] = {1, 2, 3, 4, 5, 6}, v[2 * 2] = {1, 2, 3, 4};
    float w[4] = {9, 9, 9, 9}, o[4] = {9, 9, 9, 9};
    float work[8192];
    assert_true(attn_sdpa_f32_work_size(2, 3, 2) <= 8192);
    const int lengths[1] = {0};
    attn_options opts;
    attn_options_init(&opts);
    opts.mask.kinds = ATTN_MASK_KEY_PADDING;
    opts.mask.key_length = lengths;
    for (int kernel = ATTN__F32_BEST; kernel < ATTN__F32_KERNELS; kernel++) {
        if (!kernel_available(kernel)) continue;
        assert_int_equal(attn__sdpa_f32_using(kernel, w, o, q, q, v, 1, 2, 2, 3,
                                              2, &opts, work),
                         ATTN_OK);
        for (int i = 0; i < 4; i++) {
            assert_true(w[i] == 0.0f);
            assert_true(o[i] == 0.0f);
        }
        assert_int_equal(attn__sdpa_f32_using(kernel, NULL, o, q, q, v, 1, 2, 2,
                                              3, 2, &opts, work),
                         ATTN_OK);
        for (int i = 0; i < 4; i++) assert_true(o[i] == 0.0f);
    }
}

static void test_bad_input_gives_the_documented_status(void **state)
{
    (void)state;
    float q[4] = {1, 2, 3, 4}, o[4], work[8192];
    assert_true(attn_sdpa_f32_work_size(2, 2, 2) <= 8192);
    assert_int_equal(
        attn_sdpa_f32(NULL, o, NULL, q, q, 1, 2, 2, 2, 2, NULL, work),
        ATTN_ERR_NULL);
    assert_int_equal(attn_sdpa_f32(NULL, o, q, q, q, 1, 0, 2, 2, 2, NULL, work),
                     ATTN_ERR_SIZE);
    q[1] = NAN;
    assert_int_equal(attn_sdpa_f32(NULL, o, q, q, q, 1, 2, 2, 2, 2, NULL, work),
                     ATTN_ERR_NOT_FINITE);
    q[1] = 3e38f; /* 3e38 squared overflows float */
    assert_int_equal(attn_sdpa_f32(NULL, o, q, q, q, 1, 2, 2, 2, 2, NULL, work),
                     ATTN_ERR_OVERFLOW_VALUE);
    q[1] = 2;
    attn_options opts;
    attn_options_init(&opts);
    opts.mask.kinds = ATTN_MASK_LOCAL;
    opts.mask.window = -1;
    assert_int_equal(
        attn_sdpa_f32(NULL, o, q, q, q, 1, 2, 2, 2, 2, &opts, work),
        ATTN_ERR_RANGE);
    assert_int_equal(attn_sdpa_f32_work_size(0, 2, 2), 0);
    assert_int_equal(attn_linear_f32(o, q, q, q, 1, 2, 2, 2, 2, 2, work),
                     ATTN_ERR_OPTION);
}

static void test_linear_f32_matches_double(void **state)
{
    (void)state;
    problem p = make_problem(5, 2, 300, 280, 24, 40);
    const size_t out = (size_t)p.batch * p.n_q * p.d_v;
    double *o64 = malloc(out * sizeof *o64);
    double *work64 = malloc(attn_linear_work_size(p.d_k, p.d_v) *
                            sizeof *work64);
    float *o32 = malloc(out * sizeof *o32);
    float *work32 = malloc(attn_linear_f32_work_size(p.d_k, p.d_v) *
                           sizeof *work32);
    assert_non_null(o64);
    assert_non_null(work64);
    assert_non_null(o32);
    assert_non_null(work32);
    for (int causal = 0; causal <= 1; causal++) {
        assert_int_equal(attn_linear(o64, p.qd, p.kd, p.vd, p.batch, p.n_q,
                                     p.n_k, p.d_k, p.d_v, causal, work64),
                         ATTN_OK);
        assert_int_equal(attn_linear_f32(o32, p.q, p.k, p.v, p.batch, p.n_q,
                                         p.n_k, p.d_k, p.d_v, causal, work32),
                         ATTN_OK);
        const double error = normwise_error(o32, o64, out);
        if (!(error <= 1e-5)) fail_msg("causal %d: error %g", causal, error);
    }
    free(o64);
    free(work64);
    free(o32);
    free(work32);
    free_problem(&p);
}

/* L = Σ d_out ⊙ attn_sdpa(q, k, v) in double, for finite differences. */
static double loss(const problem *p, const attn_options *opts,
                   const double *d_out, double *out, double *work)
{
    assert_int_equal(attn_sdpa(NULL, NULL, NULL, out, p->qd, p->kd, p->vd,
                               p->batch, p->n_q, p->n_k, p->d_k, p->d_v, opts,
                               work),
                     ATTN_OK);
    double sum = 0.0;
    for (size_t i = 0; i < (size_t)p->batch * p->n_q * p->d_v; i++)
        sum += d_out[i] * out[i];
    return sum;
}

/* Central differences of the double loss in every entry of x (in place). */
static void numeric_gradient(double *grad, double *x, size_t count,
                             const problem *p, const attn_options *opts,
                             const double *d_out, double *out, double *work)
{
    const double h = 1e-6;
    for (size_t i = 0; i < count; i++) {
        const double saved = x[i];
        x[i] = saved + h;
        const double up = loss(p, opts, d_out, out, work);
        x[i] = saved - h;
        const double down = loss(p, opts, d_out, out, work);
        x[i] = saved;
        grad[i] = (up - down) / (2 * h);
    }
}

static void check_backward(uint64_t seed, int batch, int n_q, int n_k, int d_k,
                           int d_v)
{
    problem p = make_problem(seed, batch, n_q, n_k, d_k, d_v);
    const size_t nq = (size_t)batch * n_q * d_k, nk = (size_t)batch * n_k * d_k;
    const size_t nv = (size_t)batch * n_k * d_v, no = (size_t)batch * n_q * d_v;
    float *d_out = malloc(no * sizeof *d_out);
    double *d_outd = malloc(no * sizeof *d_outd),
           *out = malloc(no * sizeof *out);
    double *work = malloc(attn_sdpa_work_size(n_k) * sizeof *work);
    float *dq = malloc(nq * sizeof *dq), *dk = malloc(nk * sizeof *dk);
    float *dv = malloc(nv * sizeof *dv);
    float *work32 = malloc(attn_sdpa_f32_backward_work_size(n_k) *
                           sizeof *work32);
    double *gq = malloc(nq * sizeof *gq), *gk = malloc(nk * sizeof *gk);
    double *gv = malloc(nv * sizeof *gv);
    assert_true(d_out && d_outd && out && work && dq && dk && dv && work32 &&
                gq && gk && gv);
    test_rng rng;
    test_rng_seed(&rng, seed + 1000);
    fill(&rng, d_out, d_outd, no);
    for (int m = 0; m < MASK_CASES; m++) {
        attn_options opts;
        mask_case(&opts, &p, m);
        assert_int_equal(attn_sdpa_f32_backward(dq, dk, dv, d_out, p.q, p.k,
                                                p.v, batch, n_q, n_k, d_k, d_v,
                                                &opts, work32),
                         ATTN_OK);
        numeric_gradient(gq, p.qd, nq, &p, &opts, d_outd, out, work);
        numeric_gradient(gk, p.kd, nk, &p, &opts, d_outd, out, work);
        numeric_gradient(gv, p.vd, nv, &p, &opts, d_outd, out, work);
        const double eq = normwise_error(dq, gq, nq);
        const double ek = normwise_error(dk, gk, nk);
        const double ev = normwise_error(dv, gv, nv);
        if (!(eq <= 1e-4 && ek <= 1e-4 && ev <= 1e-4))
            fail_msg("mask case %d: dq %g, dk %g, dv %g", m, eq, ek, ev);
    }
    free(d_out);
    free(d_outd);
    free(out);
    free(work);
    free(dq);
    free(dk);
    free(dv);
    free(work32);
    free(gq);
    free(gk);
    free(gv);
    free_problem(&p);
}

static void
test_backward_matches_finite_differences_with_every_mask(void **state)
{
    (void)state;
    check_backward(31, 2, 5, 7, 3, 4);
    check_backward(32, 1, 9, 70, 8, 5);
}

static void test_backward_skips_gradients_given_null(void **state)
{
    (void)state;
    const float x[4] = {1, 2, 3, 4};
    float dq[4], work[8];
    assert_int_equal(attn_sdpa_f32_backward(dq, NULL, NULL, x, x, x, x, 1, 2, 2,
                                            2, 2, NULL, work),
                     ATTN_OK);
    assert_int_equal(attn_sdpa_f32_backward(dq, NULL, NULL, NULL, x, x, x, 1, 2,
                                            2, 2, 2, NULL, work),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_sdpa_f32_backward_work_size(0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_scalar_kernel_matches_double_with_every_mask),
        cmocka_unit_test(test_the_chosen_kernel_matches_double_with_every_mask),
        cmocka_unit_test(
            test_the_avx2_kernel_matches_double_where_the_cpu_has_it),
        cmocka_unit_test(
            test_the_avx512_kernel_matches_double_where_the_cpu_has_it),
        cmocka_unit_test(test_an_unknown_kernel_is_an_option_error),
        cmocka_unit_test(test_t2048_outputs_agree_with_double_to_1e_5),
        cmocka_unit_test(test_a_fully_masked_row_gives_zeros),
        cmocka_unit_test(test_bad_input_gives_the_documented_status),
        cmocka_unit_test(test_linear_f32_matches_double),
        cmocka_unit_test(
            test_backward_matches_finite_differences_with_every_mask),
        cmocka_unit_test(test_backward_skips_gradients_given_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
