/* Luong attention: dot, general and concat scores; errors. */
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

/* Two decoder states over three encoder states, d_s = d_h = 2. */
static const double QUERY[4] = {0.5, -1, 1, 2};
static const double KEYS[6] = {1, 0, 0, 1, 1, 1};
static const double W_GENERAL[4] = {1, 2, 0, -1}; /* [d_h, d_s] */
/* concat: W [d_s + d_h, d_a = 3], b [3], v [3] */
static const double W_CONCAT[12] = {0.2,  -0.1, 0.5, 0.3, 0.4,  -0.6,
                                    -0.5, 0.25, 0.1, 0.6, -0.3, 0.2};
static const double B_CONCAT[3] = {0.05, 0, -0.05};
static const double V_CONCAT[3] = {1, -1, 0.5};

enum { WORK = 32 };

/* Exact values for the three methods from python3's decimal module. */

/* Runs dot or general on QUERY and KEYS and checks every result: scores
 * exactly, weights and context to 1e-14. */
static void assert_luong_gives(int method, const double *w,
                               const double expected_scores[6],
                               const double expected_weights[6],
                               const double expected_context[4])
{
    double scores[6], weights[6], context[4], work[WORK];
    assert_true(attn_luong_work_size(method, 3, 2, 0) <= WORK);
    assert_int_equal(attn_luong(NULL, scores, weights, context, QUERY, KEYS, w,
                                NULL, NULL, method, 2, 3, 2, 2, 0, work),
                     ATTN_OK);
    assert_allclose(scores, expected_scores, 6, 0.0, 0.0);
    assert_allclose(weights, expected_weights, 6, 1e-14, 0.0);
    assert_allclose(context, expected_context, 4, 1e-14, 0.0);
}

static void test_luong_dot_matches_exact_values(void **state)
{
    (void)state;
    const double expected_scores[6] = {0.5, -1, -0.5, 1, 2, 3};
    const double expected_weights[6] = {
        0.62853171921176243,  0.14024438316608848, 0.23122389762214907,
        0.090030573170380462, 0.24472847105479764, 0.6652409557748219};
    const double expected_context[4] = {
        0.85975561683391155, 0.37146828078823757, 0.75527152894520233,
        0.90996942682961957};
    assert_luong_gives(ATTN_LUONG_DOT, NULL, expected_scores, expected_weights,
                       expected_context);
}

static void test_luong_general_matches_exact_values(void **state)
{
    (void)state;
    const double expected_scores[6] = {-1.5, 1, -0.5, 5, -2, 3};
    const double expected_weights[6] = {
        0.062890013245867502, 0.76615720655634223,    0.17095278019779028,
        0.88009020451291919,  0.00080253838555651694, 0.11910725710152431};
    const double expected_context[4] = {
        0.23384279344365777, 0.93710998675413248, 0.99919746161444345,
        0.11990979548708082};
    assert_luong_gives(ATTN_LUONG_GENERAL, W_GENERAL, expected_scores,
                       expected_weights, expected_context);
}

static void test_luong_concat_matches_exact_values(void **state)
{
    (void)state;
    const double expected_energy[18] = {
        -0.57166996608511722, -0.19737532022490401, 0.71629787019902447,
        0.42189900525000795,  -0.6351489523872873,  0.76159415595576485,
        -0.04995837495787997, -0.46211715726000974, 0.8004990217606297,
        0.33637554433633221,  0.73978305127400434,  -0.57166996608511722,
        0.89569287384316454,  0.3799489622552249,   -0.50052021119023515,
        0.73978305127400434,  0.57166996608511722,  -0.42189900525000795};
    const double expected_scores[6] = {
        -0.016145710760701013, 1.4378450356151777,  0.81240829318244467,
        -0.68924248998023074,  0.26548380599282206, -0.042836417436116894};
    const double expected_weights[6] = {
        0.1320974904480948, 0.56539859503889078, 0.30250391451301439,
        0.1815993287429169, 0.47178768561939272, 0.34661298563769039};
    const double expected_context[4] = {
        0.43460140496110922, 0.86790250955190518, 0.52821231438060723,
        0.81840067125708316};
    double energy[18], scores[6], weights[6], context[4], work[WORK];
    assert_true(attn_luong_work_size(ATTN_LUONG_CONCAT, 3, 2, 3) <= WORK);
    assert_int_equal(attn_luong(energy, scores, weights, context, QUERY, KEYS,
                                W_CONCAT, B_CONCAT, V_CONCAT, ATTN_LUONG_CONCAT,
                                2, 3, 2, 2, 3, work),
                     ATTN_OK);
    assert_allclose(energy, expected_energy, 18, 1e-14, 0.0);
    /* Scores near zero lose relative accuracy to cancellation. */
    assert_allclose(scores, expected_scores, 6, 1e-14, 1e-16);
    assert_allclose(weights, expected_weights, 6, 1e-14, 0.0);
    assert_allclose(context, expected_context, 4, 1e-14, 0.0);
}

/* Luong dot is SDPA without the scale, for one query, with V = keys. */
static void test_luong_dot_equals_unscaled_sdpa_with_one_query(void **state)
{
    (void)state;
    enum { NK = 6, D = 4 };
    test_rng rng;
    test_rng_seed(&rng, 41);
    double s[D], h[NK * D];
    test_rng_fill(&rng, s, D, -2.0, 2.0);
    test_rng_fill(&rng, h, NK * D, -2.0, 2.0);
    double weights[NK], context[D], sdpa_weights[NK], output[D], work[NK];
    assert_int_equal(attn_luong(NULL, NULL, weights, context, s, h, NULL, NULL,
                                NULL, ATTN_LUONG_DOT, 1, NK, D, D, 0, work),
                     ATTN_OK);
    attn_options opts;
    attn_options_init(&opts);
    opts.scale_kind = ATTN_SCALE_NONE;
    assert_int_equal(attn_sdpa(NULL, NULL, sdpa_weights, output, s, h, h, 1, 1,
                               NK, D, D, &opts, work),
                     ATTN_OK);
    assert_allclose(weights, sdpa_weights, NK, 0.0, 0.0);
    assert_allclose(context, output, D, 0.0, 0.0);
}

/* [s; h] @ W splits W into the rows that meet s and those that meet h. */
static void test_luong_concat_equals_additive_with_split_weights(void **state)
{
    (void)state;
    double a[4], b[4], work[WORK];
    assert_int_equal(attn_luong(NULL, NULL, NULL, a, QUERY, KEYS, W_CONCAT,
                                B_CONCAT, V_CONCAT, ATTN_LUONG_CONCAT, 2, 3, 2,
                                2, 3, work),
                     ATTN_OK);
    assert_int_equal(attn_additive(NULL, NULL, NULL, b, QUERY, KEYS, W_CONCAT,
                                   W_CONCAT + 6, B_CONCAT, V_CONCAT, 2, 3, 2, 2,
                                   3, work),
                     ATTN_OK);
    assert_memory_equal(a, b, sizeof a);
}

/* Only concat has an energy: the other methods leave the buffer alone. */
static void test_luong_dot_leaves_energy_untouched(void **state)
{
    (void)state;
    double energy[4] = {9, 9, 9, 9}, context[4], work[WORK];
    assert_int_equal(attn_luong(energy, NULL, NULL, context, QUERY, KEYS, NULL,
                                NULL, NULL, ATTN_LUONG_DOT, 2, 3, 2, 2, 0,
                                work),
                     ATTN_OK);
    for (int i = 0; i < 4; i++) assert_true(energy[i] == 9.0);
}

static void test_luong_work_size_depends_on_the_method(void **state)
{
    (void)state;
    assert_int_equal(attn_luong_work_size(ATTN_LUONG_DOT, 5, 3, 0), 5);
    assert_int_equal(attn_luong_work_size(ATTN_LUONG_GENERAL, 5, 3, 0),
                     5 * 3 + 5);
    assert_int_equal(attn_luong_work_size(ATTN_LUONG_CONCAT, 5, 3, 4),
                     attn_additive_work_size(5, 3, 4));
    assert_int_equal(attn_luong_work_size(7, 5, 3, 4), 0);
    assert_int_equal(attn_luong_work_size(ATTN_LUONG_DOT, 0, 3, 4), 0);
}

/* A call that computes only the context and must fail with `expected`. */
typedef struct luong_call {
    const double *query, *keys, *w, *b, *v;
    int method, n_q, n_k, d_s, d_h, d_a;
    int without_work;
    int expected;
} luong_call;

static void assert_luong_calls_fail(const luong_call *calls, size_t count)
{
    for (size_t c = 0; c < count; c++) {
        const luong_call *call = &calls[c];
        double context[4], work[WORK];
        assert_int_equal(attn_luong(NULL, NULL, NULL, context, call->query,
                                    call->keys, call->w, call->b, call->v,
                                    call->method, call->n_q, call->n_k,
                                    call->d_s, call->d_h, call->d_a,
                                    call->without_work ? NULL : work),
                         call->expected);
    }
}

static void test_luong_rejects_an_unknown_method(void **state)
{
    (void)state;
    const luong_call calls[] = {
        {QUERY, KEYS, W_GENERAL, NULL, NULL, 3, 2, 3, 2, 2, 0, 0,
         ATTN_ERR_OPTION},
        {QUERY, KEYS, W_GENERAL, NULL, NULL, -1, 2, 3, 2, 2, 0, 0,
         ATTN_ERR_OPTION},
    };
    assert_luong_calls_fail(calls, sizeof calls / sizeof calls[0]);
}

static void test_luong_rejects_missing_inputs(void **state)
{
    (void)state;
    const luong_call calls[] = {
        {NULL, KEYS, NULL, NULL, NULL, ATTN_LUONG_DOT, 2, 3, 2, 2, 0, 0,
         ATTN_ERR_NULL},
        {QUERY, NULL, NULL, NULL, NULL, ATTN_LUONG_DOT, 2, 3, 2, 2, 0, 0,
         ATTN_ERR_NULL},
        {QUERY, KEYS, NULL, NULL, NULL, ATTN_LUONG_DOT, 2, 3, 2, 2, 0, 1,
         ATTN_ERR_NULL},
        {QUERY, KEYS, NULL, NULL, NULL, ATTN_LUONG_GENERAL, 2, 3, 2, 2, 0, 0,
         ATTN_ERR_NULL},
        {QUERY, KEYS, NULL, B_CONCAT, V_CONCAT, ATTN_LUONG_CONCAT, 2, 3, 2, 2,
         3, 0, ATTN_ERR_NULL},
        {QUERY, KEYS, W_CONCAT, B_CONCAT, NULL, ATTN_LUONG_CONCAT, 2, 3, 2, 2,
         3, 0, ATTN_ERR_NULL},
    };
    assert_luong_calls_fail(calls, sizeof calls / sizeof calls[0]);
}

static void test_luong_rejects_bad_sizes(void **state)
{
    (void)state;
    const luong_call calls[] = {
        /* dot compares s with h directly, so their widths must agree */
        {QUERY, KEYS, NULL, NULL, NULL, ATTN_LUONG_DOT, 2, 2, 2, 3, 0, 0,
         ATTN_ERR_SIZE},
        {QUERY, KEYS, NULL, NULL, NULL, ATTN_LUONG_DOT, 0, 3, 2, 2, 0, 0,
         ATTN_ERR_SIZE},
        {QUERY, KEYS, W_CONCAT, B_CONCAT, V_CONCAT, ATTN_LUONG_CONCAT, 2, 3, 2,
         2, 0, 0, ATTN_ERR_SIZE},
        /* The energy [n_q, n_k, d_a] cannot be addressed; checked before
         * any read, so the small arrays are never overrun. */
        {QUERY, KEYS, W_CONCAT, B_CONCAT, V_CONCAT, ATTN_LUONG_CONCAT, INT_MAX,
         INT_MAX, 2, 2, INT_MAX, 0, ATTN_ERR_SIZE_OVERFLOW},
    };
    assert_luong_calls_fail(calls, sizeof calls / sizeof calls[0]);
}

static void test_luong_rejects_non_finite_inputs(void **state)
{
    (void)state;
    const double bad_keys[6] = {1, 0, 0, NAN, 1, 1};
    const double bad_v[3] = {1, -INFINITY, 0.5};
    const luong_call calls[] = {
        {QUERY, bad_keys, NULL, NULL, NULL, ATTN_LUONG_DOT, 2, 3, 2, 2, 0, 0,
         ATTN_ERR_NOT_FINITE},
        {QUERY, KEYS, W_CONCAT, B_CONCAT, bad_v, ATTN_LUONG_CONCAT, 2, 3, 2, 2,
         3, 0, ATTN_ERR_NOT_FINITE},
    };
    assert_luong_calls_fail(calls, sizeof calls / sizeof calls[0]);
}

static void test_luong_reports_scores_that_overflow(void **state)
{
    (void)state;
    const double huge[4] = {1e200, 1e200, 1e200, 1e200};
    double scores[4], work[WORK];
    assert_int_equal(attn_luong(NULL, scores, NULL, NULL, huge, huge, NULL,
                                NULL, NULL, ATTN_LUONG_DOT, 2, 2, 2, 2, 0,
                                work),
                     ATTN_ERR_OVERFLOW_VALUE);
    const double huge_w[4] = {1e300, 0, 0, 1e300};
    assert_int_equal(attn_luong(NULL, scores, NULL, NULL, QUERY, huge, huge_w,
                                NULL, NULL, ATTN_LUONG_GENERAL, 2, 2, 2, 2, 0,
                                work),
                     ATTN_ERR_OVERFLOW_VALUE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_luong_dot_matches_exact_values),
        cmocka_unit_test(test_luong_general_matches_exact_values),
        cmocka_unit_test(test_luong_concat_matches_exact_values),
        cmocka_unit_test(test_luong_dot_equals_unscaled_sdpa_with_one_query),
        cmocka_unit_test(test_luong_concat_equals_additive_with_split_weights),
        cmocka_unit_test(test_luong_dot_leaves_energy_untouched),
        cmocka_unit_test(test_luong_work_size_depends_on_the_method),
        cmocka_unit_test(test_luong_rejects_an_unknown_method),
        cmocka_unit_test(test_luong_rejects_missing_inputs),
        cmocka_unit_test(test_luong_rejects_bad_sizes),
        cmocka_unit_test(test_luong_rejects_non_finite_inputs),
        cmocka_unit_test(test_luong_reports_scores_that_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
