/* Gradients of Bahdanau (additive) and Luong attention against central
 * finite differences, and a closed form. */
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

enum { NQ = 3, NK = 4, DS = 3, DH = 2, DA = 5, MAXW = (DS + DH) * DA };

typedef struct seq_case {
    double query[NQ * DS], keys[NK * DH], w[MAXW], w_h[DH * DA];
    double b[DA], v[DA], d_context[NQ * DH];
    int method; /* -1 = additive (w is W_s), else an attn_luong_method */
    int d_s;    /* DS, or DH for Luong dot */
} seq_case;

static void case_fill(seq_case *c, uint64_t seed, int method)
{
    test_rng rng;
    test_rng_seed(&rng, seed);
    c->method = method;
    c->d_s = method == ATTN_LUONG_DOT ? DH : DS;
    test_rng_fill(&rng, c->query, NQ * DS, -1.0, 1.0);
    test_rng_fill(&rng, c->keys, NK * DH, -1.0, 1.0);
    test_rng_fill(&rng, c->w, MAXW, -1.0, 1.0);
    test_rng_fill(&rng, c->w_h, DH * DA, -1.0, 1.0);
    test_rng_fill(&rng, c->b, DA, -0.5, 0.5);
    test_rng_fill(&rng, c->v, DA, -1.0, 1.0);
    test_rng_fill(&rng, c->d_context, NQ * DH, -1.0, 1.0);
}

static double seq_loss(void *context)
{
    const seq_case *c = context;
    double out[NQ * DH], work[(NK + 2) * DA + NK + NK * DS];
    if (c->method < 0)
        assert_int_equal(attn_additive(NULL, NULL, NULL, out, c->query, c->keys,
                                       c->w, c->w_h, c->b, c->v, NQ, NK, DS, DH,
                                       DA, work),
                         ATTN_OK);
    else
        assert_int_equal(attn_luong(NULL, NULL, NULL, out, c->query, c->keys,
                                    c->method == ATTN_LUONG_DOT ? NULL : c->w,
                                    c->b, c->v, c->method, NQ, NK, c->d_s, DH,
                                    DA, work),
                         ATTN_OK);
    return fd_dot(out, c->d_context, NQ * DH);
}

static void check(double *x, const double *analytic, size_t count, seq_case *c)
{
    double numeric[MAXW];
    fd_gradient(numeric, x, count, seq_loss, c, FD_STEP);
    assert_gradient_close(analytic, numeric, count);
}

static void test_additive_backward_matches_finite_differences(void **state)
{
    (void)state;
    seq_case c;
    case_fill(&c, 71, -1);
    double gq[NQ * DS], gk[NK * DH], gws[DS * DA], gwh[DH * DA], gb[DA];
    double gv[DA], work[2 * NK * DA + 3 * DA + NK];
    assert_int_equal(attn_additive_backward_work_size(NK, DS, DA),
                     2 * NK * DA + 3 * DA + NK);
    assert_int_equal(attn_additive_backward(
                         gq, gk, gws, gwh, gb, gv, c.d_context, c.query, c.keys,
                         c.w, c.w_h, c.b, c.v, NQ, NK, DS, DH, DA, work),
                     ATTN_OK);
    check(c.query, gq, NQ * DS, &c);
    check(c.keys, gk, NK * DH, &c);
    check(c.w, gws, DS * DA, &c);
    check(c.w_h, gwh, DH * DA, &c);
    check(c.b, gb, DA, &c);
    check(c.v, gv, DA, &c);
}

static void luong_case(int method, uint64_t seed)
{
    seq_case c;
    case_fill(&c, seed, method);
    double gq[NQ * DS], gk[NK * DH], gw[MAXW], gb[DA], gv[DA];
    double work[2 * NK * DA + 3 * DA + NK + 2 * NK * DS];
    assert_true(attn_luong_backward_work_size(method, NK, c.d_s, DA) <=
                sizeof work / sizeof work[0]);
    assert_int_equal(
        attn_luong_backward(gq, gk, gw, gb, gv, c.d_context, c.query, c.keys,
                            method == ATTN_LUONG_DOT ? NULL : c.w, c.b, c.v,
                            method, NQ, NK, c.d_s, DH, DA, work),
        ATTN_OK);
    check(c.query, gq, (size_t)NQ * (size_t)c.d_s, &c);
    check(c.keys, gk, NK * DH, &c);
    if (method == ATTN_LUONG_GENERAL) check(c.w, gw, DH * DS, &c);
    if (method == ATTN_LUONG_CONCAT) {
        check(c.w, gw, (DS + DH) * DA, &c);
        check(c.b, gb, DA, &c);
        check(c.v, gv, DA, &c);
    }
}

static void
test_additive_backward_from_the_saved_energy_gives_the_same_bits(void **state)
{
    (void)state;
    seq_case c;
    case_fill(&c, 72, -1);
    double energy[NQ * NK * DA], forward_work[(NK + 2) * DA + NK];
    assert_int_equal(attn_additive(energy, NULL, NULL, NULL, c.query, c.keys,
                                   c.w, c.w_h, c.b, c.v, NQ, NK, DS, DH, DA,
                                   forward_work),
                     ATTN_OK);
    double grads[2][NQ * DS + NK * DH + DS * DA + DH * DA + 2 * DA];
    double work[2 * NK * DA + 3 * DA + NK];
    for (int saved = 0; saved < 2; saved++) {
        double *g = grads[saved];
        double *gk = g + NQ * DS, *gws = gk + NK * DH, *gwh = gws + DS * DA;
        double *gb = gwh + DH * DA, *gv = gb + DA;
        const int status = saved ? attn_additive_backward_saved(
                                       g, gk, gws, gwh, gb, gv, c.d_context,
                                       c.query, c.keys, c.w, c.w_h, c.b, c.v,
                                       energy, NQ, NK, DS, DH, DA, work)
                                 : attn_additive_backward(
                                       g, gk, gws, gwh, gb, gv, c.d_context,
                                       c.query, c.keys, c.w, c.w_h, c.b, c.v,
                                       NQ, NK, DS, DH, DA, work);
        assert_int_equal(status, ATTN_OK);
    }
    assert_memory_equal(grads[0], grads[1], sizeof grads[0]);
    energy[5] = NAN;
    assert_int_equal(attn_additive_backward_saved(
                         grads[1], NULL, NULL, NULL, NULL, NULL, c.d_context,
                         c.query, c.keys, c.w, c.w_h, c.b, c.v, energy, NQ, NK,
                         DS, DH, DA, work),
                     ATTN_ERR_NOT_FINITE);
    assert_int_equal(
        attn_additive_backward_saved(grads[1], NULL, NULL, NULL, NULL, NULL,
                                     c.d_context, c.query, c.keys, c.w, c.w_h,
                                     c.b, c.v, NULL, NQ, NK, DS, DH, DA, work),
        ATTN_ERR_NULL);
}

static void test_luong_dot_backward_matches_finite_differences(void **state)
{
    (void)state;
    luong_case(ATTN_LUONG_DOT, 72);
}

static void test_luong_general_backward_matches_finite_differences(void **state)
{
    (void)state;
    luong_case(ATTN_LUONG_GENERAL, 73);
}

static void test_luong_concat_backward_matches_finite_differences(void **state)
{
    (void)state;
    luong_case(ATTN_LUONG_CONCAT, 74);
}

/* One key: the weight is 1 whatever the score, so only the value path
 * carries a gradient: grad_query = 0 and grad_keys = Σ_i dC_i. */
static void test_luong_dot_backward_with_one_key_is_the_value_path(void **state)
{
    (void)state;
    const double query[2 * 2] = {0.3, -0.7, 1.5, 2.0};
    const double keys[2] = {0.4, -1.1};
    const double d_context[2 * 2] = {1.0, -2.0, 0.5, 0.25};
    double gq[4], gk[2], work[8];
    assert_int_equal(attn_luong_backward(gq, gk, NULL, NULL, NULL, d_context,
                                         query, keys, NULL, NULL, NULL,
                                         ATTN_LUONG_DOT, 2, 1, 2, 2, 0, work),
                     ATTN_OK);
    const double zeros[4] = {0, 0, 0, 0}, expected_gk[2] = {1.5, -1.75};
    assert_allclose(gq, zeros, 4, 0.0, 0.0);
    assert_allclose(gk, expected_gk, 2, 0.0, 0.0);
}

static void test_additive_and_luong_backward_reject_bad_arguments(void **state)
{
    (void)state;
    seq_case c;
    case_fill(&c, 75, -1);
    double work[2 * NK * DA + 3 * DA + NK], gq[NQ * DS];
    assert_int_equal(attn_additive_backward(gq, NULL, NULL, NULL, NULL, NULL,
                                            NULL, c.query, c.keys, c.w, c.w_h,
                                            c.b, c.v, NQ, NK, DS, DH, DA, work),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_luong_backward(
                         gq, NULL, NULL, NULL, NULL, c.d_context, c.query,
                         c.keys, c.w, NULL, NULL, 7, NQ, NK, DS, DH, DA, work),
                     ATTN_ERR_OPTION);
    assert_int_equal(attn_luong_backward(gq, NULL, NULL, NULL, NULL,
                                         c.d_context, c.query, c.keys, NULL,
                                         NULL, NULL, ATTN_LUONG_DOT, NQ, NK, DS,
                                         DH, 0, work),
                     ATTN_ERR_SIZE); /* dot needs d_s == d_h */
    c.keys[0] = NAN;
    assert_int_equal(attn_additive_backward(gq, NULL, NULL, NULL, NULL, NULL,
                                            c.d_context, c.query, c.keys, c.w,
                                            c.w_h, c.b, c.v, NQ, NK, DS, DH, DA,
                                            work),
                     ATTN_ERR_NOT_FINITE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_additive_backward_matches_finite_differences),
        cmocka_unit_test(
            test_additive_backward_from_the_saved_energy_gives_the_same_bits),
        cmocka_unit_test(test_luong_dot_backward_matches_finite_differences),
        cmocka_unit_test(
            test_luong_general_backward_matches_finite_differences),
        cmocka_unit_test(test_luong_concat_backward_matches_finite_differences),
        cmocka_unit_test(
            test_luong_dot_backward_with_one_key_is_the_value_path),
        cmocka_unit_test(test_additive_and_luong_backward_reject_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
