/* Scaled dot-product attention: exact values, properties, errors. */
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

/* Tutorial 000: 3 tokens, d_k = 2, d_v = 3, K = Q. */
static const double TUT_Q[3 * 2] = {1, 0, 0, 1, 1, 1};
static const double TUT_V[3 * 3] = {1, 2, 3, 4, 5, 6, 7, 8, 9};

/* Exact values from python3's decimal module at 40 digits. The tutorial
 * prints weights [[0.38,0.24,0.38],[0.21,0.39,0.39],[0.26,0.26,0.48]] and
 * output [[4.3,5.3,6.3],[5.5,6.5,7.5],[5.7,6.7,7.7]]; both are wrong. */
static void test_sdpa_tutorial_000_example_matches_exact_values(void **state)
{
    (void)state;
    const double r = 0.70710678118654757; /* 1/sqrt(2) */
    const double expected_scores[9] = {1, 0, 1, 0, 1, 1, 1, 1, 2};
    const double expected_scaled[9] = {
        r, 0, r, 0, r, r, r, r, 1.4142135623730951};
    const double expected_weights[9] = {
        0.40111209267978593, 0.19777581464042818, 0.40111209267978593,
        0.19777581464042818, 0.40111209267978593, 0.40111209267978593,
        0.24825507825772308, 0.24825507825772308, 0.50348984348455383};
    const double expected_output[9] = {4,
                                       5,
                                       6,
                                       4.6100088341180729,
                                       5.6100088341180729,
                                       6.6100088341180729,
                                       4.765704295680492,
                                       5.765704295680492,
                                       6.765704295680492};
    double scores[9], scaled[9], weights[9], output[9], work[3];
    assert_int_equal(attn_sdpa(scores, scaled, weights, output, TUT_Q, TUT_Q,
                               TUT_V, 1, 3, 3, 2, 3, NULL, work),
                     ATTN_OK);
    assert_allclose(scores, expected_scores, 9, 0.0, 0.0);
    assert_allclose(scaled, expected_scaled, 9, 1e-15, 0.0);
    assert_allclose(weights, expected_weights, 9, 1e-14, 0.0);
    assert_allclose(output, expected_output, 9, 1e-14, 0.0);
}

static void
test_sdpa_tutorial_000_with_causal_mask_matches_exact_values(void **state)
{
    (void)state;
    const double r = 0.70710678118654757;
    const double expected_scaled[9] = {
        r, -INFINITY, -INFINITY, 0, r, -INFINITY, r, r, 1.4142135623730951};
    const double expected_weights[9] = {1,
                                        0,
                                        0,
                                        0.33023845067334306,
                                        0.66976154932665688,
                                        0,
                                        0.24825507825772308,
                                        0.24825507825772308,
                                        0.50348984348455383};
    const double expected_output[9] = {1,
                                       2,
                                       3,
                                       3.0092846479799706,
                                       4.0092846479799711,
                                       5.0092846479799711,
                                       4.765704295680492,
                                       5.765704295680492,
                                       6.765704295680492};
    attn_options opts;
    attn_options_init(&opts);
    opts.mask.kinds = ATTN_MASK_CAUSAL;
    double scaled[9], weights[9], output[9], work[3];
    assert_int_equal(attn_sdpa(NULL, scaled, weights, output, TUT_Q, TUT_Q,
                               TUT_V, 1, 3, 3, 2, 3, &opts, work),
                     ATTN_OK);
    assert_allclose(scaled, expected_scaled, 9, 1e-15, 0.0);
    assert_allclose(weights, expected_weights, 9, 1e-14, 0.0);
    assert_true(weights[1] == 0.0 && weights[2] == 0.0 && weights[5] == 0.0);
    assert_allclose(output, expected_output, 9, 1e-14, 0.0);
}

/* One query over two keys (n_q != n_k), by hand: scores [2, 0], scale
 * 1/sqrt(4) = 1/2, weights [e/(1+e), 1/(1+e)], output = weights · V. */
static void test_sdpa_one_query_over_two_keys_matches_hand_values(void **state)
{
    (void)state;
    const double q[4] = {1, 1, 0, 0};
    const double k[8] = {1, 1, 0, 0, 0, 0, 1, 1};
    const double v[4] = {10, 0, 0, 10};
    const double w0 = 0.7310585786300049, w1 = 0.2689414213699951;
    const double expected_weights[2] = {w0, w1};
    const double expected_output[2] = {7.310585786300049, 2.689414213699951};
    double weights[2], output[2], work[2];
    assert_int_equal(attn_sdpa(NULL, NULL, weights, output, q, k, v, 1, 1, 2, 4,
                               2, NULL, work),
                     ATTN_OK);
    assert_allclose(weights, expected_weights, 2, 1e-15, 0.0);
    assert_allclose(output, expected_output, 2, 1e-14, 0.0);
}

/* Tutorial 002, row 2 of its causal example: the weights are given, so the
 * printed [5.29, 6.29, 7.29] is exact. */
static void test_weighted_sum_matches_tutorial_002_row(void **state)
{
    (void)state;
    const double weights[4] = {0.17, 0.23, 0.60, 0.00};
    const double v[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 2, 1, 0};
    const double expected[3] = {5.29, 6.29, 7.29};
    double output[3];
    assert_int_equal(attn_weighted_sum(output, weights, v, 1, 4, 3), ATTN_OK);
    assert_allclose(output, expected, 3, 1e-15, 0.0);
}

enum { B = 2, NQ = 5, NK = 4, DK = 3, DV = 2 };

typedef struct random_case {
    double q[B * NQ * DK], k[B * NK * DK], v[B * NK * DV];
} random_case;

static void random_case_fill(random_case *c, uint64_t seed)
{
    test_rng rng;
    test_rng_seed(&rng, seed);
    test_rng_fill(&rng, c->q, B * NQ * DK, -2.0, 2.0);
    test_rng_fill(&rng, c->k, B * NK * DK, -2.0, 2.0);
    test_rng_fill(&rng, c->v, B * NK * DV, -5.0, 5.0);
}

static int run_sdpa(double *weights, double *output, const random_case *c,
                    int n_q, int n_k, const attn_options *opts)
{
    double work[NK];
    return attn_sdpa(NULL, NULL, weights, output, c->q, c->k, c->v, B, n_q, n_k,
                     DK, DV, opts, work);
}

static void test_sdpa_rows_of_weights_sum_to_one(void **state)
{
    (void)state;
    random_case c;
    random_case_fill(&c, 1);
    double weights[B * NQ * NK];
    assert_int_equal(run_sdpa(weights, NULL, &c, NQ, NK, NULL), ATTN_OK);
    for (int row = 0; row < B * NQ; row++) {
        double sum = 0.0;
        for (int j = 0; j < NK; j++) sum += weights[row * NK + j];
        assert_true(close_enough(sum, 1.0, 1e-15, 0.0));
    }
}

/* Weights past the query are exactly 0, so later value rows add exactly 0
 * to output row i: the comparison is exact. */
static void test_sdpa_causal_output_row_ignores_later_value_rows(void **state)
{
    (void)state;
    random_case c;
    random_case_fill(&c, 2);
    attn_options opts;
    attn_options_init(&opts);
    opts.mask.kinds = ATTN_MASK_CAUSAL;
    double before[B * NK * DV], after[B * NK * DV];
    assert_int_equal(run_sdpa(NULL, before, &c, NK, NK, &opts), ATTN_OK);
    const int i = 1;
    for (int b = 0; b < B; b++)
        for (int j = i + 1; j < NK; j++)
            for (int d = 0; d < DV; d++) c.v[(b * NK + j) * DV + d] += 100.0;
    assert_int_equal(run_sdpa(NULL, after, &c, NK, NK, &opts), ATTN_OK);
    for (int b = 0; b < B; b++)
        for (int row = 0; row <= i; row++)
            for (int d = 0; d < DV; d++) {
                const int at = (b * NK + row) * DV + d;
                assert_true(before[at] == after[at]);
            }
    /* The row after i does see the change. */
    assert_false(before[(i + 1) * DV] == after[(i + 1) * DV]);
}

static const int QUERY_ORDER[NQ] = {3, 0, 4, 2, 1};
static const int KEY_ORDER[NK] = {2, 3, 1, 0};

/* Each output row depends on its own query only: exact equality. */
static void test_sdpa_permuting_queries_permutes_output_rows(void **state)
{
    (void)state;
    random_case c, permuted;
    random_case_fill(&c, 3);
    permuted = c;
    for (int b = 0; b < B; b++)
        for (int i = 0; i < NQ; i++)
            memcpy(&permuted.q[(b * NQ + i) * DK],
                   &c.q[(b * NQ + QUERY_ORDER[i]) * DK], DK * sizeof(double));
    double output[B * NQ * DV], permuted_output[B * NQ * DV];
    assert_int_equal(run_sdpa(NULL, output, &c, NQ, NK, NULL), ATTN_OK);
    assert_int_equal(run_sdpa(NULL, permuted_output, &permuted, NQ, NK, NULL),
                     ATTN_OK);
    for (int b = 0; b < B; b++)
        for (int i = 0; i < NQ; i++)
            for (int d = 0; d < DV; d++)
                assert_true(permuted_output[(b * NQ + i) * DV + d] ==
                            output[(b * NQ + QUERY_ORDER[i]) * DV + d]);
}

/* Only the order of summation changes, hence a tolerance of a few ulps. */
static void
test_sdpa_permuting_keys_with_values_leaves_output_unchanged(void **state)
{
    (void)state;
    random_case c, permuted;
    random_case_fill(&c, 4);
    permuted = c;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < NK; j++) {
            memcpy(&permuted.k[(b * NK + j) * DK],
                   &c.k[(b * NK + KEY_ORDER[j]) * DK], DK * sizeof(double));
            memcpy(&permuted.v[(b * NK + j) * DV],
                   &c.v[(b * NK + KEY_ORDER[j]) * DV], DV * sizeof(double));
        }
    double output[B * NQ * DV], permuted_output[B * NQ * DV];
    assert_int_equal(run_sdpa(NULL, output, &c, NQ, NK, NULL), ATTN_OK);
    assert_int_equal(run_sdpa(NULL, permuted_output, &permuted, NQ, NK, NULL),
                     ATTN_OK);
    assert_allclose(permuted_output, output, B * NQ * DV, 1e-13, 1e-14);
}

static void
test_sdpa_fully_masked_row_gives_zero_weights_and_output(void **state)
{
    (void)state;
    random_case c;
    random_case_fill(&c, 5);
    const int key_length[B] = {0, 2};
    attn_options opts;
    attn_options_init(&opts);
    opts.mask.kinds = ATTN_MASK_KEY_PADDING;
    opts.mask.key_length = key_length;
    double scaled[B * NQ * NK], weights[B * NQ * NK], output[B * NQ * DV];
    double work[NK];
    assert_int_equal(attn_sdpa(NULL, scaled, weights, output, c.q, c.k, c.v, B,
                               NQ, NK, DK, DV, &opts, work),
                     ATTN_OK);
    for (int i = 0; i < NQ * NK; i++) {
        assert_true(scaled[i] == -INFINITY);
        assert_true(weights[i] == 0.0);
    }
    for (int i = 0; i < NQ * DV; i++) assert_true(output[i] == 0.0);
    /* Item 1 keeps keys 0 and 1 only. */
    for (int i = 0; i < NQ; i++) {
        const double *row = &weights[(NQ + i) * NK];
        assert_true(row[2] == 0.0 && row[3] == 0.0);
        assert_true(close_enough(row[0] + row[1], 1.0, 1e-15, 0.0));
    }
}

static void test_sdpa_batch_items_are_independent(void **state)
{
    (void)state;
    random_case c;
    random_case_fill(&c, 6);
    double output[B * NQ * DV], single[NQ * DV], work[NK];
    assert_int_equal(run_sdpa(NULL, output, &c, NQ, NK, NULL), ATTN_OK);
    assert_int_equal(attn_sdpa(NULL, NULL, NULL, single, c.q + NQ * DK,
                               c.k + NK * DK, c.v + NK * DV, 1, NQ, NK, DK, DV,
                               NULL, work),
                     ATTN_OK);
    for (int i = 0; i < NQ * DV; i++)
        assert_true(single[i] == output[NQ * DV + i]);
}

static void test_sdpa_from_scores_reproduces_sdpa(void **state)
{
    (void)state;
    random_case c;
    random_case_fill(&c, 7);
    attn_options opts;
    attn_options_init(&opts);
    opts.mask.kinds = ATTN_MASK_LOCAL;
    opts.mask.window = 1;
    double scores[B * NQ * NK], scaled[B * NQ * NK], weights[B * NQ * NK];
    double output[B * NQ * DV], work[NK];
    assert_int_equal(attn_sdpa(scores, scaled, weights, output, c.q, c.k, c.v,
                               B, NQ, NK, DK, DV, &opts, work),
                     ATTN_OK);
    double scaled2[B * NQ * NK], weights2[B * NQ * NK], output2[B * NQ * DV];
    assert_int_equal(attn_sdpa_from_scores(scaled2, weights2, output2, scores,
                                           c.v, B, NQ, NK, DK, DV, &opts, work),
                     ATTN_OK);
    assert_memory_equal(scaled2, scaled, sizeof scaled);
    assert_memory_equal(weights2, weights, sizeof weights);
    assert_memory_equal(output2, output, sizeof output);
}

/* From scores alone: v and d_v may be absent when no output is asked. */
static void test_sdpa_from_scores_without_values_gives_weights(void **state)
{
    (void)state;
    const double scores[3] = {1, 2, 3};
    const double expected[3] = {0.090030573170380462, 0.24472847105479764,
                                0.6652409557748219};
    attn_options opts;
    attn_options_init(&opts);
    opts.scale_kind = ATTN_SCALE_NONE;
    double weights[3], work[3];
    assert_int_equal(attn_sdpa_from_scores(NULL, weights, NULL, scores, NULL, 1,
                                           1, 3, 0, 0, &opts, work),
                     ATTN_OK);
    assert_allclose(weights, expected, 3, 1e-15, 0.0);
}

/* The default scale with d_k = 4 is 1/2, exactly the factor 0.5. */
static void test_sdpa_scale_kinds_multiply_the_scores(void **state)
{
    (void)state;
    const double scores[3] = {2, -4, 6};
    attn_options opts;
    attn_options_init(&opts);
    double scaled[3], work[3];
    assert_int_equal(attn_sdpa_from_scores(scaled, NULL, NULL, scores, NULL, 1,
                                           1, 3, 4, 0, &opts, work),
                     ATTN_OK);
    const double halves[3] = {1, -2, 3};
    assert_allclose(scaled, halves, 3, 0.0, 0.0);
    opts.scale_kind = ATTN_SCALE_FACTOR;
    opts.scale_factor = -0.25;
    assert_int_equal(attn_sdpa_from_scores(scaled, NULL, NULL, scores, NULL, 1,
                                           1, 3, 4, 0, &opts, work),
                     ATTN_OK);
    const double quarters[3] = {-0.5, 1, -1.5};
    assert_allclose(scaled, quarters, 3, 0.0, 0.0);
    opts.scale_kind = ATTN_SCALE_NONE;
    assert_int_equal(attn_sdpa_from_scores(scaled, NULL, NULL, scores, NULL, 1,
                                           1, 3, 4, 0, &opts, work),
                     ATTN_OK);
    assert_allclose(scaled, scores, 3, 0.0, 0.0);
}

static void test_scale_value_follows_the_scale_kind(void **state)
{
    (void)state;
    attn_options opts;
    attn_options_init(&opts);
    double scale = 0.0;
    assert_int_equal(attn_scale_value(&scale, NULL, 64), ATTN_OK);
    assert_true(scale == 0.125);
    /* 1.0 / sqrt(2.0) rounds twice: within an ulp of 1/sqrt(2). */
    assert_int_equal(attn_scale_value(&scale, &opts, 2), ATTN_OK);
    assert_true(close_enough(scale, 0.70710678118654757, 2.3e-16, 0.0));
    opts.scale_kind = ATTN_SCALE_NONE;
    assert_int_equal(attn_scale_value(&scale, &opts, 2), ATTN_OK);
    assert_true(scale == 1.0);
    opts.scale_kind = ATTN_SCALE_FACTOR;
    opts.scale_factor = 3.5;
    assert_int_equal(attn_scale_value(&scale, &opts, 2), ATTN_OK);
    assert_true(scale == 3.5);
}

static void test_scale_value_rejects_bad_options(void **state)
{
    (void)state;
    attn_options opts;
    attn_options_init(&opts);
    double scale;
    assert_int_equal(attn_scale_value(NULL, &opts, 2), ATTN_ERR_NULL);
    assert_int_equal(attn_scale_value(&scale, &opts, 0), ATTN_ERR_SIZE);
    opts.scale_kind = ATTN_SCALE_FACTOR;
    opts.scale_factor = INFINITY;
    assert_int_equal(attn_scale_value(&scale, &opts, 2), ATTN_ERR_RANGE);
    opts.scale_factor = NAN;
    assert_int_equal(attn_scale_value(&scale, &opts, 2), ATTN_ERR_RANGE);
    opts.scale_kind = 3;
    assert_int_equal(attn_scale_value(&scale, &opts, 2), ATTN_ERR_OPTION);
}

static void test_options_init_gives_the_documented_defaults(void **state)
{
    (void)state;
    attn_options opts;
    memset(&opts, 0xff, sizeof opts);
    attn_options_init(&opts);
    assert_int_equal(opts.scale_kind, ATTN_SCALE_INV_SQRT_DK);
    assert_int_equal(opts.mask.kinds, 0);
    assert_null(opts.mask.key_length);
    assert_null(opts.mask.allowed);
    assert_true(opts.dropout == 0.0);
    assert_true(opts.seed == 0);
}

static void test_sdpa_work_size_is_one_row_of_keys(void **state)
{
    (void)state;
    assert_int_equal(attn_sdpa_work_size(7), 7);
    assert_int_equal(attn_sdpa_work_size(0), 0);
    assert_int_equal(attn_sdpa_work_size(-3), 0);
}

static void test_sdpa_rejects_null_pointers(void **state)
{
    (void)state;
    double out[9], work[3];
    assert_int_equal(attn_sdpa(NULL, NULL, NULL, out, NULL, TUT_Q, TUT_V, 1, 3,
                               3, 2, 3, NULL, work),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_sdpa(NULL, NULL, NULL, out, TUT_Q, NULL, TUT_V, 1, 3,
                               3, 2, 3, NULL, work),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_sdpa(NULL, NULL, NULL, out, TUT_Q, TUT_Q, NULL, 1, 3,
                               3, 2, 3, NULL, work),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_sdpa(NULL, NULL, NULL, out, TUT_Q, TUT_Q, TUT_V, 1, 3,
                               3, 2, 3, NULL, NULL),
                     ATTN_ERR_NULL);
    const double scores[9] = {0};
    assert_int_equal(attn_sdpa_from_scores(NULL, NULL, out, scores, NULL, 1, 3,
                                           3, 2, 3, NULL, work),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_sdpa_from_scores(NULL, out, NULL, NULL, NULL, 1, 3, 3,
                                           2, 3, NULL, work),
                     ATTN_ERR_NULL);
    assert_int_equal(attn_weighted_sum(NULL, scores, TUT_V, 3, 3, 3),
                     ATTN_ERR_NULL);
}

static void test_sdpa_rejects_empty_sizes(void **state)
{
    (void)state;
    double out[9], work[3];
    const int good[5] = {1, 3, 3, 2, 3};
    for (int which = 0; which < 5; which++) {
        int s[5];
        memcpy(s, good, sizeof s);
        s[which] = which % 2 ? 0 : -1;
        assert_int_equal(attn_sdpa(NULL, NULL, NULL, out, TUT_Q, TUT_Q, TUT_V,
                                   s[0], s[1], s[2], s[3], s[4], NULL, work),
                         ATTN_ERR_SIZE);
    }
    assert_int_equal(attn_weighted_sum(out, TUT_V, TUT_V, 3, 0, 3),
                     ATTN_ERR_SIZE);
}

/* The size check comes before any read, so tiny arrays are enough. */
static void test_sdpa_rejects_sizes_whose_product_overflows(void **state)
{
    (void)state;
    double out[9], work[3];
    assert_int_equal(attn_sdpa(NULL, NULL, NULL, out, TUT_Q, TUT_Q, TUT_V,
                               INT_MAX, INT_MAX, INT_MAX, 2, 3, NULL, work),
                     ATTN_ERR_SIZE_OVERFLOW);
    assert_int_equal(attn_sdpa_from_scores(NULL, out, NULL, TUT_Q, NULL,
                                           INT_MAX, INT_MAX, INT_MAX, 2, 3,
                                           NULL, work),
                     ATTN_ERR_SIZE_OVERFLOW);
}

/* The status of tutorial 000 through attn_sdpa with these options (only
 * the output asked for). */
static int tutorial_000_status(const attn_options *opts)
{
    double out[9], work[3];
    return attn_sdpa(NULL, NULL, NULL, out, TUT_Q, TUT_Q, TUT_V, 1, 3, 3, 2, 3,
                     opts, work);
}

static void test_sdpa_rejects_bad_options(void **state)
{
    (void)state;
    attn_options opts;
    attn_options_init(&opts);
    opts.scale_kind = 9;
    assert_int_equal(tutorial_000_status(&opts), ATTN_ERR_OPTION);
    attn_options_init(&opts);
    opts.mask.kinds = 1u << 7;
    assert_int_equal(tutorial_000_status(&opts), ATTN_ERR_OPTION);
    attn_options_init(&opts);
    opts.mask.kinds = ATTN_MASK_KEY_PADDING;
    assert_int_equal(tutorial_000_status(&opts), ATTN_ERR_NULL);
    const int too_long[1] = {4};
    opts.mask.key_length = too_long;
    assert_int_equal(tutorial_000_status(&opts), ATTN_ERR_RANGE);
    attn_options_init(&opts);
    opts.scale_kind = ATTN_SCALE_FACTOR;
    opts.scale_factor = -INFINITY;
    assert_int_equal(tutorial_000_status(&opts), ATTN_ERR_RANGE);
    const double bad_dropout[3] = {-0.1, 1.0, NAN};
    for (int i = 0; i < 3; i++) {
        attn_options_init(&opts);
        opts.dropout = bad_dropout[i];
        assert_int_equal(tutorial_000_status(&opts), ATTN_ERR_RANGE);
    }
}

/* Rejected inputs leave every output as it was. */
static void test_sdpa_rejects_non_finite_inputs_before_writing(void **state)
{
    (void)state;
    const double poison[3] = {NAN, INFINITY, -INFINITY};
    double work[3];
    for (int which = 0; which < 3; which++)
        for (int p = 0; p < 3; p++) {
            double q[6], k[6], v[9];
            memcpy(q, TUT_Q, sizeof q);
            memcpy(k, TUT_Q, sizeof k);
            memcpy(v, TUT_V, sizeof v);
            double *target = which == 0 ? q : which == 1 ? k : v;
            target[5] = poison[p];
            double out[9];
            for (int i = 0; i < 9; i++) out[i] = 42.0;
            assert_int_equal(attn_sdpa(out, NULL, NULL, NULL, q, k, v, 1, 3, 3,
                                       2, 3, NULL, work),
                             ATTN_ERR_NOT_FINITE);
            for (int i = 0; i < 9; i++) assert_true(out[i] == 42.0);
        }
    const double scores[3] = {0, -INFINITY, 1};
    double weights[3];
    assert_int_equal(attn_sdpa_from_scores(NULL, weights, NULL, scores, NULL, 1,
                                           1, 3, 2, 0, NULL, work),
                     ATTN_ERR_NOT_FINITE);
    const double w[2] = {0.5, NAN};
    assert_int_equal(attn_weighted_sum(weights, w, TUT_V, 1, 2, 1),
                     ATTN_ERR_NOT_FINITE);
}

static void test_sdpa_reports_scores_that_overflow(void **state)
{
    (void)state;
    const double q[2] = {1e200, 1e200};
    const double v[2] = {1, 2};
    double output[1], work[2];
    assert_int_equal(
        attn_sdpa(NULL, NULL, NULL, output, q, q, v, 1, 1, 1, 2, 1, NULL, work),
        ATTN_ERR_OVERFLOW_VALUE);
    /* Finite scores, but the factor pushes them past DBL_MAX. */
    const double scores[2] = {1e300, 0};
    attn_options opts;
    attn_options_init(&opts);
    opts.scale_kind = ATTN_SCALE_FACTOR;
    opts.scale_factor = 1e10;
    assert_int_equal(attn_sdpa_from_scores(NULL, work, NULL, scores, NULL, 1, 1,
                                           2, 1, 0, &opts, work),
                     ATTN_ERR_OVERFLOW_VALUE);
}

static void test_weighted_sum_reports_a_sum_that_overflows(void **state)
{
    (void)state;
    const double weights[2] = {1.0, 1.0};
    const double v[2] = {1e308, 1e308};
    double output[1];
    assert_int_equal(attn_weighted_sum(output, weights, v, 1, 2, 1),
                     ATTN_ERR_OVERFLOW_VALUE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sdpa_tutorial_000_example_matches_exact_values),
        cmocka_unit_test(
            test_sdpa_tutorial_000_with_causal_mask_matches_exact_values),
        cmocka_unit_test(test_sdpa_one_query_over_two_keys_matches_hand_values),
        cmocka_unit_test(test_weighted_sum_matches_tutorial_002_row),
        cmocka_unit_test(test_sdpa_rows_of_weights_sum_to_one),
        cmocka_unit_test(test_sdpa_causal_output_row_ignores_later_value_rows),
        cmocka_unit_test(test_sdpa_permuting_queries_permutes_output_rows),
        cmocka_unit_test(
            test_sdpa_permuting_keys_with_values_leaves_output_unchanged),
        cmocka_unit_test(
            test_sdpa_fully_masked_row_gives_zero_weights_and_output),
        cmocka_unit_test(test_sdpa_batch_items_are_independent),
        cmocka_unit_test(test_sdpa_from_scores_reproduces_sdpa),
        cmocka_unit_test(test_sdpa_from_scores_without_values_gives_weights),
        cmocka_unit_test(test_sdpa_scale_kinds_multiply_the_scores),
        cmocka_unit_test(test_scale_value_follows_the_scale_kind),
        cmocka_unit_test(test_scale_value_rejects_bad_options),
        cmocka_unit_test(test_options_init_gives_the_documented_defaults),
        cmocka_unit_test(test_sdpa_work_size_is_one_row_of_keys),
        cmocka_unit_test(test_sdpa_rejects_null_pointers),
        cmocka_unit_test(test_sdpa_rejects_empty_sizes),
        cmocka_unit_test(test_sdpa_rejects_sizes_whose_product_overflows),
        cmocka_unit_test(test_sdpa_rejects_bad_options),
        cmocka_unit_test(test_sdpa_rejects_non_finite_inputs_before_writing),
        cmocka_unit_test(test_sdpa_reports_scores_that_overflow),
        cmocka_unit_test(test_weighted_sum_reports_a_sum_that_overflows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
