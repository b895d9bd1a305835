/* Allocation failures in the attn_problem layer: for each scenario, fail
 * the 1st allocation, then the 2nd, ... until the scenario succeeds. Every
 * call must give ATTN_OK or ATTN_ERR_NOMEM, and destroy must return every
 * block (the allocator counts them; the sanitizer build checks the rest). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "attention.h"
#include "failing_allocator.h"

static const double Q[] = {1, 0, 0, 1, 1, 1};
static const double V[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
static const double IDENTITY4[] = {1, 0, 0, 0, 0, 1, 0, 0,
                                   0, 0, 1, 0, 0, 0, 0, 1};
static const double X[] = {1.0, 0.5, 0.2, 0.8, 0.3, 0.9, 0.1, 0.4,
                           0.6, 0.2, 0.7, 0.3, 2.0, 1.0, 0.4, 1.6,
                           0.6, 1.8, 0.2, 0.8, 1.2, 0.4, 1.4, 0.6};

static int set(attn_problem *problem, const char *field, int rank, int d0,
               int d1, int d2, const double *data)
{
    const int dims[] = {d0, d1, d2};
    return attn_problem_set_tensor(problem, field, rank, dims, data);
}

/* Stops at the first status that is not ATTN_OK. */
#define STEP(call)                              \
    do {                                        \
        if (status == ATTN_OK) status = (call); \
    } while (0)

static int sdpa_fields(attn_problem *problem)
{
    static const char *const tokens[] = {"cat", "sat", "mat"};
    static const double mask[] = {1, 0, 1, 1, 1, 0, 0, 1, 1};
    int status = ATTN_OK;
    STEP(set(problem, "q", 2, 3, 2, 0, Q));
    STEP(set(problem, "k", 2, 3, 2, 0, Q));
    STEP(set(problem, "v", 2, 3, 3, 0, V));
    STEP(set(problem, "q", 2, 3, 2, 0, Q)); /* replacing a value */
    STEP(set(problem, "mask", 2, 3, 3, 0, mask));
    STEP(attn_problem_set_number(problem, "keyLength", 2));
    STEP(attn_problem_set_number(problem, "dropout", 0.25));
    STEP(attn_problem_set_strings(problem, "tokens", 3, tokens));
    return status;
}

static int multihead_fields(attn_problem *problem)
{
    static const char *const tokens[] = {"cat", "sat", "mat"};
    int status = ATTN_OK;
    STEP(set(problem, "x", 3, 2, 3, 4, X)); /* a batch: heads reordered */
    STEP(set(problem, "wq", 2, 4, 4, 0, IDENTITY4));
    STEP(set(problem, "wk", 2, 4, 4, 0, IDENTITY4));
    STEP(set(problem, "wv", 2, 4, 4, 0, IDENTITY4));
    STEP(set(problem, "wo", 2, 4, 4, 0, IDENTITY4));
    STEP(set(problem, "bq", 1, 4, 0, 0, X));
    STEP(attn_problem_set_number(problem, "numHeads", 2));
    STEP(attn_problem_set_string(problem, "mask", "causal"));
    STEP(set(problem, "keyLength", 1, 2, 0, 0, (const double[]){3, 2}));
    STEP(attn_problem_set_strings(problem, "tokens", 3, tokens));
    return status;
}

static int additive_fields(attn_problem *problem)
{
    int status = ATTN_OK;
    STEP(set(problem, "query", 2, 2, 2, 0, Q));
    STEP(set(problem, "keys", 2, 3, 2, 0, Q));
    STEP(set(problem, "ws", 2, 2, 3, 0, V));
    STEP(set(problem, "wh", 2, 2, 3, 0, V));
    STEP(set(problem, "v", 1, 3, 0, 0, V));
    STEP(set(problem, "b", 1, 3, 0, 0, V));
    return status;
}

static int luong_fields(attn_problem *problem)
{
    int status = ATTN_OK;
    STEP(set(problem, "query", 1, 2, 0, 0, Q));
    STEP(set(problem, "keys", 2, 3, 2, 0, Q));
    STEP(attn_problem_set_string(problem, "method", "concat"));
    STEP(set(problem, "w", 2, 4, 3, 0, X));
    STEP(set(problem, "v", 1, 3, 0, 0, V));
    return status;
}

static int linear_fields(attn_problem *problem)
{
    int status = ATTN_OK;
    STEP(set(problem, "q", 3, 2, 3, 2, X));
    STEP(set(problem, "k", 3, 2, 3, 2, X));
    STEP(set(problem, "v", 3, 2, 3, 2, X));
    STEP(attn_problem_set_bool(problem, "causal", 1));
    return status;
}

static int online_fields(attn_problem *problem)
{
    int status = ATTN_OK;
    STEP(set(problem, "q", 2, 3, 2, 0, X));
    STEP(set(problem, "k", 2, 3, 2, 0, X));
    STEP(set(problem, "v", 2, 3, 2, 0, X));
    STEP(attn_problem_set_number(problem, "tile", 2));
    return status;
}

static int softmax_fields(attn_problem *problem)
{
    static const double mask[] = {1, 1, 0, 0, 0, 0};
    int status = ATTN_OK;
    STEP(set(problem, "x", 2, 2, 3, 0, V));
    STEP(set(problem, "mask", 2, 2, 3, 0, mask));
    STEP(attn_problem_set_number(problem, "scale", 0.5));
    return status;
}

static int weighted_sum_fields(attn_problem *problem)
{
    int status = ATTN_OK;
    STEP(set(problem, "weights", 2, 2, 3, 0, V));
    STEP(set(problem, "v", 2, 3, 3, 0, V));
    return status;
}

static int scores_fields(attn_problem *problem)
{
    int status = ATTN_OK;
    STEP(set(problem, "scores", 3, 1, 3, 3, V));
    STEP(attn_problem_set_bool(problem, "scale", 0));
    STEP(attn_problem_set_string(problem, "mask", "causal"));
    return status;
}

/* scaledDotProduct with gradOutput: the gradient results too. */
static int sdpa_grad_fields(attn_problem *problem)
{
    int status = sdpa_fields(problem);
    STEP(set(problem, "gradOutput", 2, 3, 3, 0, V));
    return status;
}

/* scaledDotProduct with a target: gradOutput = output − target too. */
static int sdpa_target_fields(attn_problem *problem)
{
    int status = sdpa_fields(problem);
    STEP(set(problem, "target", 2, 3, 3, 0, V));
    return status;
}

/* A batch of cross-attention with gradOutput: gradients reordered. */
static int multihead_grad_fields(attn_problem *problem)
{
    int status = ATTN_OK;
    STEP(set(problem, "x", 3, 2, 3, 4, X));
    STEP(set(problem, "xkv", 3, 2, 2, 4, X));
    STEP(set(problem, "wq", 2, 4, 4, 0, IDENTITY4));
    STEP(set(problem, "wk", 2, 4, 4, 0, IDENTITY4));
    STEP(set(problem, "wv", 2, 4, 4, 0, IDENTITY4));
    STEP(set(problem, "wo", 2, 4, 4, 0, IDENTITY4));
    STEP(set(problem, "bv", 1, 4, 0, 0, X));
    STEP(attn_problem_set_number(problem, "numHeads", 2));
    STEP(set(problem, "gradOutput", 3, 2, 3, 4, X));
    return status;
}

static int transformer_block_fields(attn_problem *problem)
{
    int status = ATTN_OK;
    STEP(set(problem, "x", 3, 2, 3, 4, X));
    STEP(set(problem, "wq", 2, 4, 4, 0, IDENTITY4));
    STEP(set(problem, "wk", 2, 4, 4, 0, IDENTITY4));
    STEP(set(problem, "wv", 2, 4, 4, 0, IDENTITY4));
    STEP(set(problem, "wo", 2, 4, 4, 0, IDENTITY4));
    STEP(set(problem, "bo", 1, 4, 0, 0, X));
    STEP(set(problem, "gamma1", 1, 4, 0, 0, X));
    STEP(set(problem, "beta1", 1, 4, 0, 0, X));
    STEP(set(problem, "w1", 2, 4, 2, 0, X));
    STEP(set(problem, "b1", 1, 2, 0, 0, X));
    STEP(set(problem, "w2", 2, 2, 4, 0, X));
    STEP(set(problem, "gamma2", 1, 4, 0, 0, X));
    STEP(attn_problem_set_number(problem, "numHeads", 2));
    STEP(attn_problem_set_string(problem, "norm", "pre"));
    STEP(attn_problem_set_string(problem, "mask", "causal"));
    STEP(set(problem, "gradOutput", 3, 2, 3, 4, X));
    return status;
}

static int additive_grad_fields(attn_problem *problem)
{
    int status = additive_fields(problem);
    STEP(set(problem, "gradContext", 2, 2, 2, 0, Q));
    return status;
}

static int luong_grad_fields(attn_problem *problem)
{
    int status = luong_fields(problem);
    STEP(set(problem, "gradContext", 1, 2, 0, 0, Q));
    return status;
}

static int linear_grad_fields(attn_problem *problem)
{
    int status = linear_fields(problem);
    STEP(set(problem, "gradOutput", 3, 2, 3, 2, X));
    return status;
}

typedef struct scenario {
    const char *kind;
    int (*fields)(attn_problem *problem);
} scenario;

/* Everything a caller does with a problem; returns the first failure. */
static int use_problem(const scenario *use, const attn_allocator *allocator)
{
    attn_problem *problem = NULL;
    int status = attn_problem_create(&problem, use->kind, allocator);
    if (status != ATTN_OK) {
        assert_null(problem);
        return status;
    }
    STEP(use->fields(problem));
    STEP(attn_problem_run(problem));
    for (int format = ATTN_FORMAT_JSON; format <= ATTN_FORMAT_MARKDOWN;
         format++) {
        size_t length = 0;
        STEP(attn_problem_format(problem, format, NULL, 0, &length));
        char text[64];
        STEP(attn_problem_format(problem, format, text, sizeof text, &length));
    }
    int rank, dims[3];
    const double *data;
    if (status == ATTN_OK)
        assert_int_equal(attn_problem_result(problem, "output", &rank, dims,
                                             &data) == ATTN_OK ||
                             attn_problem_result(problem, "weights", &rank,
                                                 dims, &data) == ATTN_OK,
                         1);
    STEP(attn_problem_run(problem)); /* running again frees the results */
    attn_problem_destroy(problem);
    return status;
}

static void fail_each_allocation_in_turn(const scenario *use)
{
    for (long fail_at = 0;; fail_at++) {
        failing_allocator counts = {fail_at, 0, 0};
        const attn_allocator allocator = failing_allocator_use(&counts);
        const int status = use_problem(use, &allocator);
        if (status != ATTN_OK && status != ATTN_ERR_NOMEM)
            fail_msg("%s, allocation %ld failing: status %d", use->kind,
                     fail_at, status);
        assert_int_equal(counts.live, 0);
        if (counts.calls <= fail_at) { /* nothing failed: done */
            assert_int_equal(status, ATTN_OK);
            assert_true(fail_at > 3);
            return;
        }
        assert_int_equal(status, ATTN_ERR_NOMEM);
    }
}

static void test_every_allocation_failure_is_nomem_without_leaks(void **state)
{
    (void)state;
    const scenario scenarios[] = {
        {"scaledDotProduct", sdpa_fields},
        {"scaledDotProduct", scores_fields},
        {"multiHead", multihead_fields},
        {"additive", additive_fields},
        {"luong", luong_fields},
        {"linear", linear_fields},
        {"onlineSoftmax", online_fields},
        {"softmax", softmax_fields},
        {"weightedSum", weighted_sum_fields},
        {"scaledDotProduct", sdpa_grad_fields},
        {"scaledDotProduct", sdpa_target_fields},
        {"multiHead", multihead_grad_fields},
        {"transformerBlock", transformer_block_fields},
        {"additive", additive_grad_fields},
        {"luong", luong_grad_fields},
        {"linear", linear_grad_fields},
    };
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
        fail_each_allocation_in_turn(&scenarios[i]);
}

static void test_an_allocator_without_functions_is_rejected(void **state)
{
    (void)state;
    attn_problem *problem = NULL;
    failing_allocator counts = {-1, 0, 0};
    attn_allocator incomplete = failing_allocator_use(&counts);
    incomplete.allocate = NULL;
    assert_int_equal(attn_problem_create(&problem, "softmax", &incomplete),
                     ATTN_ERR_NULL);
    assert_null(problem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_allocation_failure_is_nomem_without_leaks),
        cmocka_unit_test(test_an_allocator_without_functions_is_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
