/* The attn_problem layer end to end: each kind against values computed
 * independently (python3, offline), the exact error messages, setters,
 * results by name. Where a tutorial printed a hand-computed number, it is
 * kept next to the exact one. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "allclose.h"
#include "attention.h"
#include "problem_fixture.h"

#define RTOL 1e-12
#define ATOL 1e-14

/* Tutorial 000: Q = K, d_k = 2, d_v = 3. */
static const double Q000[] = {1, 0, 0, 1, 1, 1};
static const double V000[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};

/* Tutorial 001: "cat sat mat", d = 4. */
static const double X001[] = {1.0, 0.5, 0.2, 0.8, 0.3, 0.9,
                              0.1, 0.4, 0.6, 0.2, 0.7, 0.3};

static attn_problem *tutorial_000(void)
{
    return problem_self_attention("scaledDotProduct", 0, 3, 2, 3, Q000, V000);
}

/* Tutorial 000 twice, as a batch of 2 items. */
static attn_problem *tutorial_000_twice(void)
{
    double q[12], v[18];
    for (int i = 0; i < 12; i++) q[i] = Q000[i % 6];
    for (int i = 0; i < 18; i++) v[i] = V000[i % 9];
    return problem_self_attention("scaledDotProduct", 2, 3, 2, 3, q, v);
}

static void assert_error(const attn_problem *problem, int status,
                         int expected_status, const char *message)
{
    assert_int_equal(status, expected_status);
    assert_string_equal(attn_problem_error(problem), message);
}

/* Asks for a result by name and expects this status and message. */
static void assert_result_error(const attn_problem *problem, const char *name,
                                int expected_status, const char *message)
{
    int rank, dims[3];
    const double *data;
    assert_error(problem,
                 attn_problem_result(problem, name, &rank, dims, &data),
                 expected_status, message);
}

/* Runs and expects an ATTN_ERR_INPUT with this message. */
static void assert_run_error(attn_problem *problem, const char *message)
{
    assert_error(problem, attn_problem_run(problem), ATTN_ERR_INPUT, message);
}

/* ---- scaledDotProduct ---- */

static void test_sdpa_tutorial_000_gives_exact_weights_and_output(void **state)
{
    (void)state;
    attn_problem *problem = tutorial_000();
    problem_run_ok(problem);
    const double scores[] = {1, 0, 1, 0, 1, 1, 1, 1, 2};
    assert_allclose(problem_result(problem, "scores", 2, 3, 3, 0), scores, 9, 0,
                    0);
    const double r = 1 / sqrt(2.0);
    const double scaled[] = {r, 0, r, 0, r, r, r, r, 2 * r};
    assert_allclose(problem_result(problem, "scaled", 2, 3, 3, 0), scaled, 9,
                    RTOL, ATOL);
    /* The tutorial printed [[0.38, 0.24, 0.38], [0.21, 0.39, 0.39],
     * [0.26, 0.26, 0.48]] and an output starting [4.3, 5.3, 6.3]. */
    const double weights[] = {
        0.4011120926797859, 0.1977758146404282, 0.4011120926797859,
        0.1977758146404282, 0.4011120926797859, 0.4011120926797859,
        0.2482550782577231, 0.2482550782577231, 0.5034898434845538};
    assert_allclose(problem_result(problem, "weights", 2, 3, 3, 0), weights, 9,
                    RTOL, ATOL);
    const double output[] = {4,
                             5,
                             6,
                             4.610008834118073,
                             5.610008834118073,
                             6.610008834118073,
                             4.765704295680493,
                             5.765704295680493,
                             6.765704295680492};
    assert_allclose(problem_result(problem, "output", 2, 3, 3, 0), output, 9,
                    RTOL, ATOL);
    attn_problem_destroy(problem);
}

static void
test_sdpa_causal_mask_gives_minus_infinity_and_zero_weights(void **state)
{
    (void)state;
    attn_problem *problem = tutorial_000();
    assert_int_equal(attn_problem_set_string(problem, "mask", "causal"),
                     ATTN_OK);
    problem_run_ok(problem);
    const double *scaled = problem_result(problem, "scaled", 2, 3, 3, 0);
    assert_true(scaled[1] == -INFINITY && scaled[2] == -INFINITY &&
                scaled[5] == -INFINITY);
    const double weights[] = {1,
                              0,
                              0,
                              0.3302384506733431,
                              0.6697615493266569,
                              0,
                              0.2482550782577231,
                              0.2482550782577231,
                              0.5034898434845538};
    assert_allclose(problem_result(problem, "weights", 2, 3, 3, 0), weights, 9,
                    RTOL, ATOL);
    const double output[] = {1,
                             2,
                             3,
                             3.0092846479799706,
                             4.009284647979971,
                             5.009284647979971,
                             4.765704295680493,
                             5.765704295680493,
                             6.765704295680492};
    assert_allclose(problem_result(problem, "output", 2, 3, 3, 0), output, 9,
                    RTOL, ATOL);
    attn_problem_destroy(problem);
}

static void test_sdpa_tutorial_001_cat_sat_mat(void **state)
{
    (void)state;
    attn_problem *problem = problem_self_attention("scaledDotProduct", 0, 3, 4,
                                                   4, X001, X001);
    problem_run_ok(problem);
    /* The tutorial printed S[1][2] = S[2][1] = 0.65; it is 0.55. */
    const double scores[] = {1.93, 1.09, 1.08, 1.09, 1.07,
                             0.55, 1.08, 0.55, 0.98};
    assert_allclose(problem_result(problem, "scores", 2, 3, 3, 0), scores, 9,
                    RTOL, ATOL);
    /* Printed: [0.433, 0.284, 0.283], [0.384, 0.377, 0.239], ... */
    const double weights[] = {
        0.43274745293940914, 0.2843353377369047,  0.2829172093236862,
        0.3631834635447591,  0.35956972770293577, 0.2772468087523051,
        0.36785866215140334, 0.28222335435271473, 0.34991798349588193};
    assert_allclose(problem_result(problem, "weights", 2, 3, 3, 0), weights, 9,
                    RTOL, ATOL);
    /* Printed output row 0: [0.688, 0.530, 0.313, 0.546]. */
    const double output_row0[] = {0.6877983798546923, 0.528858972297656,
                                  0.3130250708881526, 0.5448072602433951};
    assert_allclose(problem_result(problem, "output", 2, 3, 4, 0), output_row0,
                    4, RTOL, ATOL);
    attn_problem_destroy(problem);
}

static void test_sdpa_from_scores_tutorial_002_causal_unscaled(void **state)
{
    (void)state;
    attn_problem *problem = problem_new("scaledDotProduct");
    const double scores[] = {2.1, 0,   0,   0, 1.5, 3.2, 0,   0,
                             0.8, 1.1, 2.5, 0, 0.3, 0.9, 1.2, 2.8};
    problem_matrix(problem, "scores", 4, 4, scores);
    assert_int_equal(attn_problem_set_string(problem, "mask", "causal"),
                     ATTN_OK);
    assert_int_equal(attn_problem_set_bool(problem, "scale", 0), ATTN_OK);
    problem_run_ok(problem);
    /* Printed: [0.15, 0.85], [0.17, 0.23, 0.60], [0.11, 0.15, 0.21, 0.53]. */
    const double weights[] = {1,
                              0,
                              0,
                              0,
                              0.15446526508353467,
                              0.8455347349164652,
                              0,
                              0,
                              0.12781502692245383,
                              0.17253223983183824,
                              0.6996527332457079,
                              0,
                              0.0572599426916676,
                              0.10433441808777066,
                              0.1408367331890943,
                              0.6975689060314675};
    assert_allclose(problem_result(problem, "weights", 2, 4, 4, 0), weights, 16,
                    RTOL, ATOL);
    assert_result_error(problem, "output", ATTN_ERR_INPUT,
                        "result: no result named \"output\" for kind "
                        "\"scaledDotProduct\" (results: scaled, weights)");
    attn_problem_destroy(problem);
}

static void test_sdpa_from_scores_with_dk_and_v_gives_output(void **state)
{
    (void)state;
    attn_problem *problem = problem_new("scaledDotProduct");
    const double scores[] = {1, 0, 1, 0, 1, 1, 1, 1, 2};
    problem_matrix(problem, "scores", 3, 3, scores);
    problem_matrix(problem, "v", 3, 3, V000);
    assert_int_equal(attn_problem_set_number(problem, "dk", 2), ATTN_OK);
    problem_run_ok(problem);
    const double row0[] = {4, 5, 6};
    assert_allclose(problem_result(problem, "output", 2, 3, 3, 0), row0, 3,
                    RTOL, ATOL);
    attn_problem_destroy(problem);
}

static void test_sdpa_vector_query_gives_vector_results(void **state)
{
    (void)state;
    attn_problem *problem = problem_new("scaledDotProduct");
    problem_vector(problem, "q", 2, Q000 + 2); /* [0, 1] */
    problem_matrix(problem, "k", 3, 2, Q000);
    problem_matrix(problem, "v", 3, 3, V000);
    problem_run_ok(problem);
    const double weights[] = {0.1977758146404282, 0.4011120926797859,
                              0.4011120926797859};
    assert_allclose(problem_result(problem, "weights", 1, 3, 0, 0), weights, 3,
                    RTOL, ATOL);
    const double output[] = {4.610008834118073, 5.610008834118073,
                             6.610008834118073};
    assert_allclose(problem_result(problem, "output", 1, 3, 0, 0), output, 3,
                    RTOL, ATOL);
    attn_problem_destroy(problem);
}

static void test_sdpa_batch_items_match_their_unbatched_problems(void **state)
{
    (void)state;
    double q[12], v[18];
    for (int i = 0; i < 6; i++) q[i] = Q000[i], q[6 + i] = Q000[5 - i];
    for (int i = 0; i < 9; i++) v[i] = V000[i], v[9 + i] = -V000[i];
    attn_problem *problem = problem_self_attention("scaledDotProduct", 2, 3, 2,
                                                   3, q, v);
    problem_run_ok(problem);
    const double *output = problem_result(problem, "output", 3, 2, 3, 3);
    for (int b = 0; b < 2; b++) {
        attn_problem *single = problem_self_attention(
            "scaledDotProduct", 0, 3, 2, 3, q + 6 * b, v + 9 * b);
        problem_run_ok(single);
        assert_allclose(output + 9 * b,
                        problem_result(single, "output", 2, 3, 3, 0), 9, 0, 0);
        attn_problem_destroy(single);
    }
    attn_problem_destroy(problem);
}

static void test_sdpa_key_length_masks_padding_per_batch_item(void **state)
{
    (void)state;
    attn_problem *problem = tutorial_000_twice();
    const double lengths[] = {1, 2};
    problem_vector(problem, "keyLength", 2, lengths);
    problem_run_ok(problem);
    const double *weights = problem_result(problem, "weights", 3, 2, 3, 3);
    /* Item 0 sees key 0 only; item 1 keys 0 and 1: row 0 softmax(r, 0). */
    const double item0_row0[] = {1, 0, 0};
    const double e = exp(-1 / sqrt(2.0));
    const double item1_row0[] = {1 / (1 + e), e / (1 + e), 0};
    assert_allclose(weights, item0_row0, 3, RTOL, ATOL);
    assert_allclose(weights + 9, item1_row0, 3, RTOL, ATOL);
    attn_problem_destroy(problem);
}

static void test_sdpa_boolean_mask_and_number_scale(void **state)
{
    (void)state;
    attn_problem *problem = tutorial_000();
    const double mask[] = {1, 0, 1, 0, 1, 0, 0, 0, 0};
    problem_matrix(problem, "mask", 3, 3, mask);
    assert_int_equal(attn_problem_set_number(problem, "scale", 0.5), ATTN_OK);
    problem_run_ok(problem);
    const double *scaled = problem_result(problem, "scaled", 2, 3, 3, 0);
    const double expected_scaled[] = {0.5,       -INFINITY, 0.5,
                                      -INFINITY, 0.5,       -INFINITY,
                                      -INFINITY, -INFINITY, -INFINITY};
    assert_allclose(scaled, expected_scaled, 9, 0, 0);
    const double weights[] = {0.5, 0, 0.5, 0, 1, 0, 0, 0, 0};
    assert_allclose(problem_result(problem, "weights", 2, 3, 3, 0), weights, 9,
                    RTOL, ATOL);
    const double last_row[] = {0, 0, 0}; /* fully masked: zeros, not NaN */
    assert_allclose(problem_result(problem, "output", 2, 3, 3, 0) + 6, last_row,
                    3, 0, 0);
    attn_problem_destroy(problem);
}

static void test_sdpa_window_and_stride_masks(void **state)
{
    (void)state;
    double q[8] = {0};
    double v[8] = {1, 0, 0, 1, 2, 2, 3, 1};
    attn_problem *problem = problem_self_attention("scaledDotProduct", 0, 4, 2,
                                                   2, q, v);
    assert_int_equal(attn_problem_set_number(problem, "window", 1), ATTN_OK);
    problem_run_ok(problem);
    /* Zero scores: each row is uniform over |i - j| <= 1. */
    const double windowed[] = {0.5,     0.5, 0,   0,       1 / 3.0, 1 / 3.0,
                               1 / 3.0, 0,   0,   1 / 3.0, 1 / 3.0, 1 / 3.0,
                               0,       0,   0.5, 0.5};
    assert_allclose(problem_result(problem, "weights", 2, 4, 4, 0), windowed,
                    16, RTOL, ATOL);
    attn_problem *strided = problem_self_attention("scaledDotProduct", 0, 4, 2,
                                                   2, q, v);
    assert_int_equal(attn_problem_set_number(strided, "stride", 2), ATTN_OK);
    problem_run_ok(strided);
    /* Row 3 sees j = 3, 2 (distance < 2) and 1 (distance 2). */
    const double row3[] = {0, 1 / 3.0, 1 / 3.0, 1 / 3.0};
    assert_allclose(problem_result(strided, "weights", 2, 4, 4, 0) + 12, row3,
                    4, RTOL, ATOL);
    attn_problem_destroy(strided);
    attn_problem_destroy(problem);
}

static void test_sdpa_dropout_depends_only_on_the_seed(void **state)
{
    (void)state;
    const double *weights[2];
    attn_problem *problems[2];
    for (int i = 0; i < 2; i++) {
        problems[i] = tutorial_000();
        assert_int_equal(attn_problem_set_number(problems[i], "dropout", 0.5),
                         ATTN_OK);
        assert_int_equal(attn_problem_set_number(problems[i], "seed", 42),
                         ATTN_OK);
        problem_run_ok(problems[i]);
        weights[i] = problem_result(problems[i], "weights", 2, 3, 3, 0);
    }
    assert_allclose(weights[0], weights[1], 9, 0, 0);
    const double exact[] = {
        0.4011120926797859, 0.1977758146404282, 0.4011120926797859,
        0.1977758146404282, 0.4011120926797859, 0.4011120926797859,
        0.2482550782577231, 0.2482550782577231, 0.5034898434845538};
    for (int j = 0; j < 9; j++) {
        const int kept = attn_dropout_keeps(42, 0.5, 0, j / 3, j % 3);
        const double expected = kept ? exact[j] / 0.5 : 0.0;
        assert_true(close_enough(weights[0][j], expected, RTOL, ATOL));
    }
    for (int i = 0; i < 2; i++) attn_problem_destroy(problems[i]);
}

/* ---- multiHead ---- */

static void set_identity(attn_problem *problem, const char *field, int n)
{
    double w[64] = {0};
    for (int i = 0; i < n; i++) w[i * n + i] = 1;
    problem_matrix(problem, field, n, n, w);
}

/* Tutorial 001's x with identity projections; numHeads not set. */
static attn_problem *multihead_001_without_heads(void)
{
    attn_problem *problem = problem_new("multiHead");
    problem_matrix(problem, "x", 3, 4, X001);
    const char *const weights[] = {"wq", "wk", "wv", "wo"};
    for (int i = 0; i < 4; i++) set_identity(problem, weights[i], 4);
    return problem;
}

static attn_problem *multihead_001(void)
{
    attn_problem *problem = multihead_001_without_heads();
    assert_int_equal(attn_problem_set_number(problem, "numHeads", 2), ATTN_OK);
    return problem;
}

static void test_multihead_identity_projections_split_into_heads(void **state)
{
    (void)state;
    attn_problem *problem = multihead_001();
    problem_run_ok(problem);
    assert_allclose(problem_result(problem, "q", 2, 3, 4, 0), X001, 12, 0, 0);
    const double head0[] = {
        0.42017078046986484, 0.2950390906393453, 0.28479012889078986,
        0.34832506924521833, 0.3873009997975601, 0.26437393095722145,
        0.38533294196868945, 0.3029874663002473, 0.3116795917310633};
    const double head1[] = {
        0.3853329419686895,  0.3029874663002473,  0.3116795917310633,
        0.35892451826288174, 0.3182712345415949,  0.3228042471955233,
        0.3304481170621435,  0.28890542209731784, 0.38064646084053877};
    assert_allclose(problem_result(problem, "heads.0.weights", 2, 3, 3, 0),
                    head0, 9, RTOL, ATOL);
    assert_allclose(problem_result(problem, "heads.1.weights", 2, 3, 3, 0),
                    head1, 9, RTOL, ATOL);
    const double concat[] = {
        0.6795565849961424,  0.5325785975885012, 0.325541049235507,
        0.5229652176143695,  0.6231397277588192, 0.5756082206318576,
        0.32957500014360214, 0.5112893825856003, 0.6632369368974016,
        0.52769110900078,    0.3614326882105376, 0.4941146007408036};
    assert_allclose(problem_result(problem, "concat", 2, 3, 4, 0), concat, 12,
                    RTOL, ATOL);
    assert_allclose(problem_result(problem, "output", 2, 3, 4, 0), concat, 12,
                    RTOL, ATOL);
    const double head1_row0[] = {0.325541049235507, 0.5229652176143695};
    assert_allclose(problem_result(problem, "heads.1.output", 2, 3, 2, 0),
                    head1_row0, 2, RTOL, ATOL);
    attn_problem_destroy(problem);
}

static void
test_multihead_batch_gives_each_head_a_batch_of_results(void **state)
{
    (void)state;
    attn_problem *problem = multihead_001();
    double x[24];
    for (int i = 0; i < 24; i++) x[i] = i < 12 ? X001[i] : 2 * X001[i - 12];
    problem_batch(problem, "x", 2, 3, 4, x);
    problem_run_ok(problem);
    const double *batched = problem_result(problem, "heads.1.scores", 3, 2, 3,
                                           3);
    attn_problem *single = multihead_001();
    problem_run_ok(single);
    const double *item0 = problem_result(single, "heads.1.scores", 2, 3, 3, 0);
    assert_allclose(batched, item0, 9, 0, 0);
    for (int j = 0; j < 9; j++) /* item 1 is 2x: its scores are 4x */
        assert_true(close_enough(batched[9 + j], 4 * item0[j], RTOL, ATOL));
    problem_result(problem, "output", 3, 2, 3, 4);
    attn_problem_destroy(single);
    attn_problem_destroy(problem);
}

/* ---- additive, luong ---- */

static const double H[] = {1, 0, 0, 1, 1, 1}; /* keys [3, 2] */
static const double WS[] = {0.5, -0.2, 0.1, 0.3, 0.8, -0.5};
static const double WH[] = {0.2, 0.4, -0.3, -0.6, 0.1, 0.7};
static const double VA[] = {1, -1, 0.5};
static const double BA[] = {0.1, 0, -0.1};

static void test_additive_vector_query_gives_known_context(void **state)
{
    (void)state;
    attn_problem *problem = problem_new("additive");
    problem_vector(problem, "query", 2, (const double[]){1, 0.5});
    problem_matrix(problem, "keys", 3, 2, H);
    problem_matrix(problem, "ws", 2, 3, WS);
    problem_matrix(problem, "wh", 2, 3, WH);
    problem_vector(problem, "v", 3, VA);
    problem_vector(problem, "b", 3, BA);
    problem_run_ok(problem);
    const double energy[] = {
        0.7397830512740042,  0.5370495669980354, -0.5005202111902352,
        0.14888503362331804, 0.2913126124515909, 0.4218990052500079,
        0.3363755443363323,  0.6043677771171636, 0.14888503362331793};
    assert_allclose(problem_result(problem, "energy", 2, 3, 3, 0), energy, 9,
                    RTOL, ATOL);
    const double scores[] = {-0.047526621319148754, 0.06852192379673108,
                             -0.1935497159691723};
    assert_allclose(problem_result(problem, "scores", 1, 3, 0, 0), scores, 3,
                    RTOL, ATOL);
    const double context[] = {0.6240443057113891, 0.6652370206804785};
    assert_allclose(problem_result(problem, "context", 1, 2, 0, 0), context, 2,
                    RTOL, ATOL);
    attn_problem_destroy(problem);
}

static attn_problem *luong(const char *method)
{
    attn_problem *problem = problem_new("luong");
    problem_vector(problem, "query", 2, (const double[]){1, 2});
    problem_matrix(problem, "keys", 3, 2, H);
    assert_int_equal(attn_problem_set_string(problem, "method", method),
                     ATTN_OK);
    return problem;
}

static void test_luong_dot_general_and_concat_give_known_weights(void **state)
{
    (void)state;
    attn_problem *dot = luong("dot");
    problem_run_ok(dot);
    const double dot_weights[] = {0.09003057317038046, 0.24472847105479764,
                                  0.6652409557748218};
    assert_allclose(problem_result(dot, "weights", 1, 3, 0, 0), dot_weights, 3,
                    RTOL, ATOL);
    const double dot_context[] = {0.7552715289452022, 0.9099694268296195};
    assert_allclose(problem_result(dot, "context", 1, 2, 0, 0), dot_context, 2,
                    RTOL, ATOL);

    attn_problem *general = luong("general");
    problem_matrix(general, "w", 2, 2, (const double[]){1, 0.5, 0, 1});
    problem_run_ok(general);
    const double general_scores[] = {2, 2, 4};
    assert_allclose(problem_result(general, "scores", 1, 3, 0, 0),
                    general_scores, 3, RTOL, ATOL);

    attn_problem *concat = luong("concat");
    const double w[] = {0.5, -0.2, 0.1,  0.3,  0.8, -0.5,
                        0.2, 0.4,  -0.3, -0.6, 0.1, 0.7};
    problem_matrix(concat, "w", 4, 3, w);
    problem_vector(concat, "v", 3, VA);
    problem_run_ok(concat);
    const double concat_scores[] = {-0.5019101570390396, -0.5417187564973087,
                                    -0.5829282596405804};
    assert_allclose(problem_result(concat, "scores", 1, 3, 0, 0), concat_scores,
                    3, RTOL, ATOL);
    problem_result(concat, "energy", 2, 3, 3, 0);
    attn_problem_destroy(concat);
    attn_problem_destroy(general);
    attn_problem_destroy(dot);
}

/* ---- linear, softmax, weightedSum ---- */

static void test_linear_attention_with_and_without_causal(void **state)
{
    (void)state;
    attn_problem *problem = problem_self_attention("linear", 0, 3, 2, 3, Q000,
                                                   V000);
    problem_run_ok(problem);
    const double output[] = {4.2, 5.2, 6.2, 4.4, 5.4, 6.4, 4.3, 5.3, 6.3};
    assert_allclose(problem_result(problem, "output", 2, 3, 3, 0), output, 9,
                    RTOL, ATOL);
    assert_int_equal(attn_problem_set_bool(problem, "causal", 1), ATTN_OK);
    problem_run_ok(problem);
    const double causal[] = {1,        2,   3,   8 / 3.0, 11 / 3.0,
                             14 / 3.0, 4.3, 5.3, 6.3};
    assert_allclose(problem_result(problem, "output", 2, 3, 3, 0), causal, 9,
                    RTOL, ATOL);
    attn_problem_destroy(problem);
}

static void test_softmax_explains_max_exp_sum_and_weights(void **state)
{
    (void)state;
    attn_problem *problem = problem_new("softmax");
    problem_vector(problem, "x", 4, (const double[]){100, 95, 5, 3});
    assert_int_equal(attn_problem_set_number(problem, "scale", 0.125), ATTN_OK);
    problem_run_ok(problem);
    /* Tutorial 003 divides by √64 = 8. */
    const double weights[] = {0.6513496103988117, 0.3486423229273557,
                              4.534894469121679e-06, 3.5317793636981466e-06};
    assert_allclose(problem_result(problem, "weights", 1, 4, 0, 0), weights, 4,
                    RTOL, 0);
    assert_true(*problem_result(problem, "max", 0, 0, 0, 0) == 12.5);
    const double exps[] = {1, exp(-0.625), exp(-11.875), exp(-12.125)};
    assert_allclose(problem_result(problem, "exp", 1, 4, 0, 0), exps, 4, RTOL,
                    0);
    const double sum = 1 + exp(-0.625) + exp(-11.875) + exp(-12.125);
    assert_allclose(problem_result(problem, "sum", 0, 0, 0, 0), &sum, 1, RTOL,
                    0);
    attn_problem_destroy(problem);
}

static void test_softmax_fully_masked_row_is_zero(void **state)
{
    (void)state;
    attn_problem *problem = problem_new("softmax");
    problem_matrix(problem, "x", 2, 3, (const double[]){1, 2, 3, 4, 5, 6});
    problem_matrix(problem, "mask", 2, 3, (const double[]){1, 1, 1, 0, 0, 0});
    problem_run_ok(problem);
    const double weights[] = {
        0.09003057317038046, 0.24472847105479764, 0.6652409557748218, 0, 0, 0};
    assert_allclose(problem_result(problem, "weights", 2, 2, 3, 0), weights, 6,
                    RTOL, ATOL);
    const double *max = problem_result(problem, "max", 1, 2, 0, 0);
    assert_true(max[0] == 3 && max[1] == -INFINITY);
    assert_true(problem_result(problem, "sum", 1, 2, 0, 0)[1] == 0);
    attn_problem_destroy(problem);
}

static void test_weighted_sum_tutorial_002_row(void **state)
{
    (void)state;
    attn_problem *problem = problem_new("weightedSum");
    problem_vector(problem, "weights", 4, (const double[]){0.17, 0.23, 0.6, 0});
    problem_matrix(problem, "v", 4, 3,
                   (const double[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 2, 1, 0});
    problem_run_ok(problem);
    /* The tutorial's [5.29, 6.29, 7.29] is right. */
    const double output[] = {5.29, 6.29, 7.29};
    assert_allclose(problem_result(problem, "output", 1, 3, 0, 0), output, 3,
                    RTOL, ATOL);
    attn_problem_destroy(problem);
}

/* ---- Setters, state, results ---- */

static void test_setting_a_field_twice_replaces_its_value(void **state)
{
    (void)state;
    attn_problem *problem = tutorial_000();
    problem_matrix(problem, "v", 3, 1, (const double[]){1, 2, 3});
    assert_int_equal(attn_problem_set_string(problem, "mask", "causal"),
                     ATTN_OK);
    assert_int_equal(attn_problem_set_string(problem, "mask", "none"), ATTN_OK);
    problem_run_ok(problem);
    const double *output = problem_result(problem, "output", 2, 3, 1, 0);
    assert_true(close_enough(output[0],
                             0.4011120926797859 + 2 * 0.1977758146404282 +
                                 3 * 0.4011120926797859,
                             RTOL, ATOL));
    attn_problem_destroy(problem);
}

static void test_setting_a_field_after_a_run_drops_the_results(void **state)
{
    (void)state;
    attn_problem *problem = tutorial_000();
    problem_run_ok(problem);
    problem_matrix(problem, "v", 3, 3, V000);
    size_t length;
    assert_error(
        problem,
        attn_problem_format(problem, ATTN_FORMAT_JSON, NULL, 0, &length),
        ATTN_ERR_STATE,
        "format: no results yet; attn_problem_run must succeed "
        "first");
    assert_result_error(problem, "weights", ATTN_ERR_STATE,
                        "result: no results yet; attn_problem_run must "
                        "succeed first");
    attn_problem_destroy(problem);
}

static void test_results_by_name_check_heads_and_names(void **state)
{
    (void)state;
    attn_problem *problem = multihead_001();
    problem_run_ok(problem);
    int rank, dims[3];
    const double *data;
    assert_result_error(problem, "heads.2.scores", ATTN_ERR_INPUT,
                        "result: heads.2.scores: head 2 is outside 0..1 "
                        "(numHeads 2)");
    assert_result_error(problem, "heads.0.concat", ATTN_ERR_INPUT,
                        "result: no result named \"heads.0.concat\" for "
                        "kind \"multiHead\" (results: q, k, v, "
                        "heads.<h>.scores, heads.<h>.scaled, "
                        "heads.<h>.weights, heads.<h>.output, concat, "
                        "output)");
    assert_int_equal(attn_problem_result(problem, "scores", &rank, dims, &data),
                     ATTN_ERR_INPUT);
    assert_int_equal(
        attn_problem_result(problem, "heads.0.scaled", &rank, dims, &data),
        ATTN_OK);
    assert_string_equal(attn_problem_error(problem), "");
    assert_int_equal(rank, 2);
    attn_problem_destroy(problem);
}

static void
test_result_names_list_every_result_in_json_order_heads_once(void **state)
{
    (void)state;
    attn_problem *problem = multihead_001();
    assert_null(attn_problem_result_name(problem, 0, NULL));
    problem_run_ok(problem);
    static const char *const names[] = {"q",      "k",      "v",
                                        "scores", "scaled", "weights",
                                        "output", "concat", "output"};
    static const int heads[] = {0, 0, 0, 2, 2, 2, 2, 0, 0};
    const int count = (int)(sizeof names / sizeof names[0]);
    for (int i = 0; i < count; i++) {
        int result_heads = -1;
        assert_string_equal(attn_problem_result_name(problem, i, &result_heads),
                            names[i]);
        assert_int_equal(result_heads, heads[i]);
    }
    assert_null(attn_problem_result_name(problem, count, NULL));
    assert_null(attn_problem_result_name(problem, -1, NULL));
    problem_matrix(problem, "x", 1, 1, (const double[]){1.0});
    assert_null(attn_problem_result_name(problem, 0, NULL));
    attn_problem_destroy(problem);
}

static void
test_attn_problem_kind_lists_the_nine_kinds_create_takes(void **state)
{
    (void)state;
    static const char *const expected[] = {
        "scaledDotProduct",
        "weightedSum",
        "multiHead",
        "additive",
        "luong",
        "linear",
        "softmax",
        "transformerBlock",
        "onlineSoftmax",
    };
    const int count = (int)(sizeof expected / sizeof expected[0]);
    for (int i = 0; i < count; i++) {
        assert_non_null(attn_problem_kind(i));
        assert_string_equal(attn_problem_kind(i), expected[i]);
        attn_problem *problem = NULL;
        assert_int_equal(
            attn_problem_create(&problem, attn_problem_kind(i), NULL), ATTN_OK);
        attn_problem_destroy(problem);
    }
    assert_null(attn_problem_kind(count));
    assert_null(attn_problem_kind(-1));
}

static void test_unknown_kind_fails_with_option_error(void **state)
{
    (void)state;
    attn_problem *problem = (attn_problem *)&problem; /* overwritten */
    assert_int_equal(attn_problem_create(&problem, "dotProduct", NULL),
                     ATTN_ERR_OPTION);
    assert_null(problem);
    assert_int_equal(attn_problem_create(NULL, "softmax", NULL), ATTN_ERR_NULL);
    assert_string_equal(attn_problem_error(NULL), "");
    attn_problem_destroy(NULL);
}

/* ---- Error messages ---- */

static void test_error_k_columns_must_match_q(void **state)
{
    (void)state;
    attn_problem *problem = tutorial_000();
    problem_matrix(problem, "k", 3, 3, V000);
    assert_run_error(problem, "k: expected a matrix with 2 columns (d_k, the "
                              "columns of q), got 3x3");
    problem_matrix(problem, "k", 3, 2, Q000);
    problem_matrix(problem, "v", 2, 3, V000);
    assert_run_error(problem, "v: expected a matrix with 3 rows (n_k, the rows "
                              "of k), got 2x3");
    problem_batch(problem, "q", 2, 3, 1, Q000);
    assert_run_error(problem, "k: expected a batch of 2 matrices with 1 column "
                              "(d_k, the columns of q), got 3x2");
    problem_vector(problem, "q", 3, Q000);
    assert_run_error(problem, "k: expected a matrix with 3 columns (d_k, the "
                              "length of q), got 3x2");
    attn_problem_destroy(problem);
}

static void test_error_missing_fields_name_what_they_hold(void **state)
{
    (void)state;
    attn_problem *problem = problem_new("scaledDotProduct");
    assert_run_error(problem, "q: missing (a matrix n_q x d_k)");
    problem_matrix(problem, "q", 3, 2, Q000);
    assert_run_error(problem, "k: missing (a matrix n_k x d_k)");
    attn_problem_destroy(problem);
    problem = multihead_001();
    attn_problem *no_heads = multihead_001_without_heads();
    assert_run_error(no_heads, "numHeads: missing (a positive integer)");
    attn_problem_destroy(no_heads);
    attn_problem_destroy(problem);
}

static void test_error_num_heads_must_divide_d_model(void **state)
{
    (void)state;
    attn_problem *problem = multihead_001();
    assert_int_equal(attn_problem_set_number(problem, "numHeads", 3), ATTN_OK);
    assert_run_error(problem, "numHeads: 3 does not divide d_model 4 (the "
                              "columns of wq)");
    assert_int_equal(attn_problem_set_number(problem, "numHeads", 1.5),
                     ATTN_OK);
    assert_run_error(problem, "numHeads: expected a positive integer, got 1.5");
    assert_int_equal(attn_problem_set_number(problem, "numHeads", 2), ATTN_OK);
    problem_matrix(problem, "wk", 4, 2, X001);
    assert_run_error(problem,
                     "wk: expected a matrix with 4 rows (d_in, the "
                     "columns of x) and 4 columns (d_model, the columns of "
                     "wq), got 4x2");
    attn_problem_destroy(problem);
}

static void test_error_mask_values(void **state)
{
    (void)state;
    attn_problem *problem = tutorial_000();
    assert_int_equal(attn_problem_set_string(problem, "mask", "diagonal"),
                     ATTN_OK);
    assert_run_error(problem,
                     "mask: expected \"none\", \"causal\" or a "
                     "boolean matrix 3x3 (n_q x n_k), got \"diagonal\"");
    problem_matrix(problem, "mask", 2, 2, (const double[]){1, 0, 1, 1});
    assert_run_error(problem, "mask: expected \"none\", \"causal\" or a "
                              "boolean matrix 3x3 (n_q x n_k), got 2x2");
    problem_matrix(problem, "mask", 3, 3,
                   (const double[]){1, 0, 1, 1, 1, 0.5, 1, 1, 1});
    assert_run_error(problem, "mask[1][2]: expected 0 or 1 (false or true), "
                              "got 0.5");
    assert_error(problem, attn_problem_set_bool(problem, "mask", 1),
                 ATTN_ERR_INPUT,
                 "mask: expected \"none\", \"causal\" or a boolean matrix "
                 "n_q x n_k, got true");
    attn_problem_destroy(problem);
}

static void test_error_unknown_field_lists_the_kinds_fields(void **state)
{
    (void)state;
    attn_problem *problem = problem_new("luong");
    assert_error(problem, attn_problem_set_number(problem, "foo", 1),
                 ATTN_ERR_INPUT,
                 "foo: unknown field for kind \"luong\" (fields: query, keys, "
                 "method, w, v, b, tokens, gradContext)");
    attn_problem_destroy(problem);
}

static void test_error_options_out_of_range(void **state)
{
    (void)state;
    attn_problem *problem = tutorial_000();
    assert_int_equal(attn_problem_set_number(problem, "keyLength", 5), ATTN_OK);
    assert_run_error(problem, "keyLength: 5 is outside 0..3 (n_k)");
    assert_int_equal(attn_problem_set_number(problem, "keyLength", 2), ATTN_OK);
    assert_int_equal(attn_problem_set_number(problem, "seed", -1), ATTN_OK);
    assert_run_error(problem, "seed: expected an integer in 0..2^53, got -1");
    assert_int_equal(attn_problem_set_number(problem, "seed", 1.5), ATTN_OK);
    assert_run_error(problem, "seed: expected an integer in 0..2^53, got 1.5");
    assert_int_equal(
        attn_problem_set_number(problem, "seed", 9007199254740992.0), ATTN_OK);
    assert_int_equal(attn_problem_set_number(problem, "dropout", 1), ATTN_OK);
    assert_run_error(problem, "dropout: expected a probability in [0, 1), "
                              "got 1");
    assert_int_equal(attn_problem_set_number(problem, "dropout", 0), ATTN_OK);
    assert_int_equal(attn_problem_set_number(problem, "window", -1), ATTN_OK);
    assert_run_error(problem, "window: expected a non-negative integer, got "
                              "-1");
    assert_int_equal(attn_problem_set_number(problem, "window", 0), ATTN_OK);
    assert_int_equal(attn_problem_set_number(problem, "stride", 0), ATTN_OK);
    assert_run_error(problem, "stride: expected a positive integer, got 0");
    assert_int_equal(attn_problem_set_number(problem, "stride", 1), ATTN_OK);
    problem_run_ok(problem);
    assert_error(problem, attn_problem_set_string(problem, "scale", "big"),
                 ATTN_ERR_INPUT,
                 "scale: expected true (1/√d_k), false (no scaling) or a "
                 "number, got \"big\"");
    attn_problem_destroy(problem);
}

static void test_error_key_length_per_batch_item(void **state)
{
    (void)state;
    attn_problem *problem = tutorial_000_twice();
    problem_vector(problem, "keyLength", 2, (const double[]){1, 4});
    assert_run_error(problem, "keyLength[1]: 4 is outside 0..3 (n_k)");
    problem_vector(problem, "keyLength", 3, (const double[]){1, 1, 1});
    assert_run_error(problem, "keyLength: expected an integer or a vector of "
                              "2 (one per batch item), got a vector of 3");
    attn_problem_destroy(problem);
}

static void test_error_tokens_must_match_the_axes(void **state)
{
    (void)state;
    attn_problem *problem = tutorial_000();
    const char *const two[] = {"cat", "sat"};
    assert_int_equal(attn_problem_set_strings(problem, "tokens", 2, two),
                     ATTN_OK);
    assert_run_error(problem, "tokens: expected 3 labels (n_q = n_k), got 2");
    assert_int_equal(attn_problem_set_strings(problem, "keyTokens", 2, two),
                     ATTN_OK);
    assert_run_error(problem, "tokens: give either tokens or queryTokens and "
                              "keyTokens, not both");
    attn_problem_destroy(problem);
}

static void test_error_strings_must_be_valid_utf8(void **state)
{
    (void)state;
    attn_problem *problem = tutorial_000();
    const char *const labels[] = {"cat", "\xff\xfe", "mat"};
    assert_error(
        problem, attn_problem_set_strings(problem, "tokens", 3, labels),
        ATTN_ERR_INPUT, "tokens[1]: must be valid UTF-8 (byte 1 is 0xff)");
    const char *const cut[] = {"caf\xc3\xa9", "s\xc3\xa9t", "m\xe2\x82"};
    assert_error(
        problem, attn_problem_set_strings(problem, "queryTokens", 3, cut),
        ATTN_ERR_INPUT, "queryTokens[2]: must be valid UTF-8 (byte 2 is 0xe2)");
    assert_error(problem,
                 attn_problem_set_string(problem, "mask", "caus\xed\xa0\x80l"),
                 ATTN_ERR_INPUT, "mask: must be valid UTF-8 (byte 5 is 0xed)");
    /* A refused list leaves no labels: the run is unlabelled and fine. */
    problem_run_ok(problem);
    const char *const fine[] = {"caf\xc3\xa9", "\xe2\x82\xac",
                                "\xf0\x9d\x84\x9e"};
    assert_int_equal(attn_problem_set_strings(problem, "tokens", 3, fine),
                     ATTN_OK);
    problem_run_ok(problem);
    attn_problem_destroy(problem);
}

static void test_error_tensor_shapes_and_values_at_set_time(void **state)
{
    (void)state;
    attn_problem *problem = problem_new("scaledDotProduct");
    const int four[] = {1, 1, 1, 1}, empty[] = {3, 0};
    const double data[] = {1, INFINITY, 0};
    assert_error(problem, attn_problem_set_tensor(problem, "q", 4, four, data),
                 ATTN_ERR_INPUT, "q: expected 1 to 3 dimensions, got 4");
    assert_error(problem, attn_problem_set_tensor(problem, "q", 2, empty, data),
                 ATTN_ERR_INPUT,
                 "q: every dimension must be at least 1, got 3x0");
    assert_error(
        problem,
        attn_problem_set_tensor(problem, "q", 2, (const int[]){3, 1}, data),
        ATTN_ERR_INPUT, "q[1][0]: expected a finite number, got inf");
    assert_error(problem, attn_problem_set_number(problem, "q", 2),
                 ATTN_ERR_INPUT, "q: expected a matrix n_q x d_k, got 2");
    assert_error(problem, attn_problem_set_tensor(problem, NULL, 1, four, data),
                 ATTN_ERR_NULL,
                 "attn_problem_set_tensor: field, dims and data must not be "
                 "NULL");
    attn_problem_destroy(problem);

    problem = problem_new("linear");
    assert_error(problem, attn_problem_set_number(problem, "causal", 1),
                 ATTN_ERR_INPUT, "causal: expected true or false, got 1");
    attn_problem_destroy(problem);
}

static void test_error_scores_path(void **state)
{
    (void)state;
    attn_problem *problem = problem_new("scaledDotProduct");
    problem_matrix(problem, "scores", 3, 3, V000);
    assert_run_error(problem, "dk: missing (a positive integer, d_k for the "
                              "default scale 1/√d_k; or give scale)");
    problem_matrix(problem, "v", 2, 3, V000);
    assert_int_equal(attn_problem_set_number(problem, "dk", 4), ATTN_OK);
    assert_run_error(problem, "v: expected a matrix with 3 rows (n_k, the "
                              "columns of scores), got 2x3");
    problem_matrix(problem, "q", 3, 2, Q000);
    assert_run_error(problem, "scores: give either scores or q and k, not "
                              "both");
    attn_problem_destroy(problem);
}

static void test_error_luong_methods(void **state)
{
    (void)state;
    attn_problem *problem = luong("cosine");
    assert_run_error(problem, "method: expected \"dot\", \"general\" or "
                              "\"concat\", got \"cosine\"");
    assert_int_equal(attn_problem_set_string(problem, "method", "dot"),
                     ATTN_OK);
    problem_matrix(problem, "w", 2, 2, H);
    assert_run_error(problem, "w: not used by method \"dot\"");
    attn_problem_destroy(problem);

    problem = luong("dot");
    problem_matrix(problem, "keys", 2, 3, H);
    assert_run_error(problem,
                     "keys: expected a matrix with 2 columns (d_s, "
                     "the length of query, for method \"dot\"), got 2x3");
    assert_int_equal(attn_problem_set_string(problem, "method", "concat"),
                     ATTN_OK);
    assert_run_error(problem, "w: missing (a matrix d_h x d_s (general) or "
                              "(d_s + d_h) x d_a (concat))");
    problem_matrix(problem, "w", 4, 2, X001);
    assert_run_error(problem, "w: expected a matrix with 5 rows (d_s + d_h, "
                              "the widths of query and keys), got 4x2");
    attn_problem_destroy(problem);
}

static void test_error_additive_weight_shapes(void **state)
{
    (void)state;
    attn_problem *problem = problem_new("additive");
    problem_matrix(problem, "query", 2, 2, (const double[]){1, 0.5, 0, 1});
    problem_matrix(problem, "keys", 3, 2, H);
    problem_matrix(problem, "ws", 2, 3, WS);
    problem_matrix(problem, "wh", 2, 3, WH);
    problem_vector(problem, "v", 2, VA);
    assert_run_error(problem, "v: expected a vector of 3 (d_a, the columns of "
                              "ws), got a vector of 2");
    problem_matrix(problem, "ws", 3, 3, V000);
    assert_run_error(problem, "ws: expected a matrix with 2 rows (d_s, the "
                              "columns of query), got 3x3");
    attn_problem_destroy(problem);
}

static void test_overflow_in_the_core_becomes_a_message(void **state)
{
    (void)state;
    attn_problem *problem = problem_new("scaledDotProduct");
    const double big[] = {1e200, 1e200};
    problem_matrix(problem, "q", 1, 2, big);
    problem_matrix(problem, "k", 1, 2, big);
    problem_matrix(problem, "v", 1, 2, big);
    assert_error(problem, attn_problem_run(problem), ATTN_ERR_OVERFLOW_VALUE,
                 "scaledDotProduct overflowed: a value exceeded the double "
                 "range; use smaller inputs");
    attn_problem_destroy(problem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sdpa_tutorial_000_gives_exact_weights_and_output),
        cmocka_unit_test(
            test_sdpa_causal_mask_gives_minus_infinity_and_zero_weights),
        cmocka_unit_test(test_sdpa_tutorial_001_cat_sat_mat),
        cmocka_unit_test(test_sdpa_from_scores_tutorial_002_causal_unscaled),
        cmocka_unit_test(test_sdpa_from_scores_with_dk_and_v_gives_output),
        cmocka_unit_test(test_sdpa_vector_query_gives_vector_results),
        cmocka_unit_test(test_sdpa_batch_items_match_their_unbatched_problems),
        cmocka_unit_test(test_sdpa_key_length_masks_padding_per_batch_item),
        cmocka_unit_test(test_sdpa_boolean_mask_and_number_scale),
        cmocka_unit_test(test_sdpa_window_and_stride_masks),
        cmocka_unit_test(test_sdpa_dropout_depends_only_on_the_seed),
        cmocka_unit_test(test_multihead_identity_projections_split_into_heads),
        cmocka_unit_test(
            test_multihead_batch_gives_each_head_a_batch_of_results),
        cmocka_unit_test(test_additive_vector_query_gives_known_context),
        cmocka_unit_test(test_luong_dot_general_and_concat_give_known_weights),
        cmocka_unit_test(test_linear_attention_with_and_without_causal),
        cmocka_unit_test(test_softmax_explains_max_exp_sum_and_weights),
        cmocka_unit_test(test_softmax_fully_masked_row_is_zero),
        cmocka_unit_test(test_weighted_sum_tutorial_002_row),
        cmocka_unit_test(test_setting_a_field_twice_replaces_its_value),
        cmocka_unit_test(test_setting_a_field_after_a_run_drops_the_results),
        cmocka_unit_test(test_results_by_name_check_heads_and_names),
        cmocka_unit_test(
            test_attn_problem_kind_lists_the_nine_kinds_create_takes),
        cmocka_unit_test(test_unknown_kind_fails_with_option_error),
        cmocka_unit_test(test_error_k_columns_must_match_q),
        cmocka_unit_test(test_error_missing_fields_name_what_they_hold),
        cmocka_unit_test(test_error_num_heads_must_divide_d_model),
        cmocka_unit_test(test_error_mask_values),
        cmocka_unit_test(test_error_unknown_field_lists_the_kinds_fields),
        cmocka_unit_test(test_error_options_out_of_range),
        cmocka_unit_test(test_error_key_length_per_batch_item),
        cmocka_unit_test(test_error_tokens_must_match_the_axes),
        cmocka_unit_test(test_error_strings_must_be_valid_utf8),
        cmocka_unit_test(test_error_tensor_shapes_and_values_at_set_time),
        cmocka_unit_test(test_error_scores_path),
        cmocka_unit_test(test_error_luong_methods),
        cmocka_unit_test(
            test_result_names_list_every_result_in_json_order_heads_once),
        cmocka_unit_test(test_error_additive_weight_shapes),
        cmocka_unit_test(test_overflow_in_the_core_becomes_a_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
