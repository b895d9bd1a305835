/* Gradients of linear attention, causal or not, against central finite
 * differences. */
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

enum { B = 2, MAXN = 5, DK = 3, DV = 2 };

typedef struct linear_case {
    double q[B * MAXN * DK], k[B * MAXN * DK], v[B * MAXN * DV];
    double d_output[B * MAXN * DV];
    int n_q, n_k, causal;
} linear_case;

static void case_fill(linear_case *c, uint64_t seed, int n_q, int n_k,
                      int causal)
{
    test_rng rng;
    test_rng_seed(&rng, seed);
    test_rng_fill(&rng, c->q, B * MAXN * DK, -1.5, 1.5);
    test_rng_fill(&rng, c->k, B * MAXN * DK, -1.5, 1.5);
    test_rng_fill(&rng, c->v, B * MAXN * DV, -1.0, 1.0);
    test_rng_fill(&rng, c->d_output, B * MAXN * DV, -1.0, 1.0);
    c->n_q = n_q;
    c->n_k = n_k;
    c->causal = causal;
}

static double linear_loss(void *context)
{
    const linear_case *c = context;
    double out[B * MAXN * DV], work[DK * (DV + 2)];
    assert_int_equal(attn_linear(out, c->q, c->k, c->v, B, c->n_q, c->n_k, DK,
                                 DV, c->causal, work),
                     ATTN_OK);
    return fd_dot(out, c->d_output, (size_t)B * (size_t)c->n_q * DV);
}

static void check_case(linear_case *c)
{
    double gq[B * MAXN * DK], gk[B * MAXN * DK], gv[B * MAXN * DV];
    double work[DK * (DV + 3) + 2 * MAXN], numeric[B * MAXN * DK];
    /* Stale contents must not matter. */
    for (int i = 0; i < B * MAXN * DK; i++) gq[i] = gk[i] = 1e300;
    for (int i = 0; i < B * MAXN * DV; i++) gv[i] = 1e300;
    assert_true(attn_linear_backward_work_size(c->n_q, DK, DV) <=
                sizeof work / sizeof work[0]);
    assert_int_equal(attn_linear_backward(gq, gk, gv, c->d_output, c->q, c->k,
                                          c->v, B, c->n_q, c->n_k, DK, DV,
                                          c->causal, work),
                     ATTN_OK);
    const size_t nq = (size_t)B * (size_t)c->n_q;
    const size_t nk = (size_t)B * (size_t)c->n_k;
    fd_gradient(numeric, c->q, nq * DK, linear_loss, c, FD_STEP);
    assert_gradient_close(gq, numeric, nq * DK);
    fd_gradient(numeric, c->k, nk * DK, linear_loss, c, FD_STEP);
    assert_gradient_close(gk, numeric, nk * DK);
    fd_gradient(numeric, c->v, nk * DV, linear_loss, c, FD_STEP);
    assert_gradient_close(gv, numeric, nk * DV);
}

static void test_linear_backward_matches_finite_differences(void **state)
{
    (void)state;
    linear_case c;
    case_fill(&c, 81, 4, 3, 0);
    check_case(&c);
}

static void
test_linear_backward_matches_finite_differences_when_causal(void **state)
{
    (void)state;
    linear_case c;
    case_fill(&c, 82, 4, 4, 1);
    check_case(&c);
    case_fill(&c, 83, 5, 3, 1); /* more queries than keys */
    check_case(&c);
}

/* Causal with more keys than queries: the last keys are seen by no query
 * and get exactly 0. */
static void test_linear_backward_gives_zero_to_keys_no_query_sees(void **state)
{
    (void)state;
    linear_case c;
    case_fill(&c, 84, 2, 5, 1);
    check_case(&c);
    double gk[B * 5 * DK], gv[B * 5 * DV], work[DK * (DV + 3) + 4];
    assert_int_equal(attn_linear_backward(NULL, gk, gv, c.d_output, c.q, c.k,
                                          c.v, B, 2, 5, DK, DV, 1, work),
                     ATTN_OK);
    for (int b = 0; b < B; b++)
        for (int j = 2; j < 5; j++) {
            for (int a = 0; a < DK; a++)
                assert_true(gk[(b * 5 + j) * DK + a] == 0.0);
            for (int a = 0; a < DV; a++)
                assert_true(gv[(b * 5 + j) * DV + a] == 0.0);
        }
}

static void test_linear_backward_rejects_bad_arguments(void **state)
{
    (void)state;
    linear_case c;
    case_fill(&c, 85, 3, 3, 0);
    double gq[B * 3 * DK], work[DK * (DV + 3) + 6];
    assert_int_equal(attn_linear_backward(gq, NULL, NULL, NULL, c.q, c.k, c.v,
                                          B, 3, 3, DK, DV, 0, work),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_linear_backward(gq, NULL, NULL, c.d_output, c.q, c.k,
                                          c.v, B, 3, 3, DK, DV, 2, work),
                     ATTN_ERR_OPTION);
    assert_int_equal(attn_linear_backward_work_size(0, DK, DV), 0);
    c.q[0] = NAN;
    assert_int_equal(attn_linear_backward(gq, NULL, NULL, c.d_output, c.q, c.k,
                                          c.v, B, 3, 3, DK, DV, 0, work),
                     ATTN_ERR_NOT_FINITE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear_backward_matches_finite_differences),
        cmocka_unit_test(
            test_linear_backward_matches_finite_differences_when_causal),
        cmocka_unit_test(test_linear_backward_gives_zero_to_keys_no_query_sees),
        cmocka_unit_test(test_linear_backward_rejects_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
