/* A decoder's ends: the token embedding, the unembedding to logits (tied
 * to the embedding or not) and cross-entropy over bytes, each against its
 * definition written out here and its gradient against central finite
 * differences. */
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

enum { N = 5, VOCAB = 7, D = 4 };

/* Token 2 comes twice, so its row collects two gradients. */
static const int tokens[N] = {2, 0, 6, 2, 5};
static const int targets[N] = {0, 6, 2, 5, 3};

typedef struct ends_case {
    double table[VOCAB * D], lm_head[VOCAB * D], hidden[N * D];
    double dy[N * VOCAB];
    int tied; /* 1: the logits read `table`, else lm_head */
} ends_case;

static void ends_fill(ends_case *c, uint64_t seed, int tied)
{
    test_rng rng;
    test_rng_seed(&rng, seed);
    test_rng_fill(&rng, c->table, VOCAB * D, -1.0, 1.0);
    test_rng_fill(&rng, c->lm_head, VOCAB * D, -1.0, 1.0);
    test_rng_fill(&rng, c->hidden, N * D, -1.0, 1.0);
    test_rng_fill(&rng, c->dy, N * VOCAB, -1.0, 1.0);
    c->tied = tied;
}

static void test_embedding_copies_each_tokens_row(void **state)
{
    (void)state;
    ends_case c;
    ends_fill(&c, 1, 1);
    double out[N * D];
    assert_int_equal(attn_embedding(out, c.table, tokens, N, VOCAB, D),
                     ATTN_OK);
    for (int r = 0; r < N; r++)
        assert_memory_equal(out + r * D, c.table + tokens[r] * D,
                            D * sizeof *out);
}

static double embedding_loss(void *context)
{
    const ends_case *c = context;
    double out[N * D];
    assert_int_equal(attn_embedding(out, c->table, tokens, N, VOCAB, D),
                     ATTN_OK);
    return fd_dot(out, c->dy, N * D);
}

static void test_embedding_backward_matches_finite_differences(void **state)
{
    (void)state;
    ends_case c;
    ends_fill(&c, 2, 1);
    double grad[VOCAB * D] = {0}, numeric[VOCAB * D];
    assert_int_equal(attn_embedding_backward(grad, c.dy, tokens, N, VOCAB, D),
                     ATTN_OK);
    fd_gradient(numeric, c.table, VOCAB * D, embedding_loss, &c, FD_STEP);
    assert_gradient_close(grad, numeric, VOCAB * D);
}

static void
test_unembedding_is_each_hidden_row_dotted_with_each_table_row(void **state)
{
    (void)state;
    ends_case c;
    ends_fill(&c, 3, 0);
    double logits[N * VOCAB], expected[N * VOCAB];
    assert_int_equal(attn_unembedding(logits, c.hidden, c.lm_head, N, VOCAB, D),
                     ATTN_OK);
    for (int r = 0; r < N; r++)
        for (int t = 0; t < VOCAB; t++) {
            double sum = 0.0;
            for (int j = 0; j < D; j++)
                sum += c.hidden[r * D + j] * c.lm_head[t * D + j];
            expected[r * VOCAB + t] = sum;
        }
    assert_allclose(logits, expected, N * VOCAB, 1e-15, 1e-15);
}

/* Σ dy ∘ unembed(h): h is the embedding of the tokens when tied (the
 * table is then read twice), the case's hidden rows when not. */
static double ends_loss(void *context)
{
    const ends_case *c = context;
    double h[N * D], logits[N * VOCAB];
    if (c->tied)
        assert_int_equal(attn_embedding(h, c->table, tokens, N, VOCAB, D),
                         ATTN_OK);
    else
        memcpy(h, c->hidden, sizeof h);
    assert_int_equal(attn_unembedding(logits, h,
                                      c->tied ? c->table : c->lm_head, N, VOCAB,
                                      D),
                     ATTN_OK);
    return fd_dot(logits, c->dy, N * VOCAB);
}

static void
test_untied_unembedding_backward_matches_finite_differences(void **state)
{
    (void)state;
    ends_case c;
    ends_fill(&c, 4, 0);
    double grad_h[N * D], grad_head[VOCAB * D] = {0};
    double numeric_h[N * D], numeric_head[VOCAB * D];
    assert_int_equal(attn_unembedding_backward(grad_h, grad_head, c.dy,
                                               c.hidden, c.lm_head, N, VOCAB,
                                               D),
                     ATTN_OK);
    fd_gradient(numeric_h, c.hidden, N * D, ends_loss, &c, FD_STEP);
    fd_gradient(numeric_head, c.lm_head, VOCAB * D, ends_loss, &c, FD_STEP);
    assert_gradient_close(grad_h, numeric_h, N * D);
    assert_gradient_close(grad_head, numeric_head, VOCAB * D);
}

static void
test_tied_table_collects_the_embedding_and_unembedding_gradients(void **state)
{
    (void)state;
    ends_case c;
    ends_fill(&c, 5, 1);
    double h[N * D], grad_h[N * D], grad_table[VOCAB * D] = {0};
    double numeric[VOCAB * D];
    assert_int_equal(attn_embedding(h, c.table, tokens, N, VOCAB, D), ATTN_OK);
    assert_int_equal(attn_unembedding_backward(grad_h, grad_table, c.dy, h,
                                               c.table, N, VOCAB, D),
                     ATTN_OK);
    assert_int_equal(
        attn_embedding_backward(grad_table, grad_h, tokens, N, VOCAB, D),
        ATTN_OK);
    fd_gradient(numeric, c.table, VOCAB * D, ends_loss, &c, FD_STEP);
    assert_gradient_close(grad_table, numeric, VOCAB * D);
}

/* ---- Cross-entropy ---- */

typedef struct loss_case {
    double logits[N * VOCAB];
} loss_case;

static double cross_entropy_loss(void *context)
{
    const loss_case *c = context;
    double loss;
    assert_int_equal(
        attn_cross_entropy(&loss, NULL, c->logits, targets, N, VOCAB), ATTN_OK);
    return loss;
}

static void
test_cross_entropy_is_the_mean_negative_log_probability(void **state)
{
    (void)state;
    loss_case c;
    test_rng rng;
    test_rng_seed(&rng, 6);
    test_rng_fill(&rng, c.logits, N * VOCAB, -3.0, 3.0);
    double expected = 0.0;
    for (int r = 0; r < N; r++) {
        double sum = 0.0;
        for (int t = 0; t < VOCAB; t++) sum += exp(c.logits[r * VOCAB + t]);
        expected -= log(exp(c.logits[r * VOCAB + targets[r]]) / sum) / N;
    }
    const double loss = cross_entropy_loss(&c);
    assert_allclose(&loss, &expected, 1, 1e-14, 0.0);
    /* Equal logits: every byte has probability 1/vocab. */
    memset(c.logits, 0, sizeof c.logits);
    const double uniform = log((double)VOCAB), flat = cross_entropy_loss(&c);
    assert_allclose(&flat, &uniform, 1, 1e-15, 0.0);
}

static void test_cross_entropy_gradient_matches_finite_differences(void **state)
{
    (void)state;
    loss_case c;
    test_rng rng;
    test_rng_seed(&rng, 7);
    test_rng_fill(&rng, c.logits, N * VOCAB, -3.0, 3.0);
    double loss, grad[N * VOCAB], numeric[N * VOCAB];
    assert_int_equal(
        attn_cross_entropy(&loss, grad, c.logits, targets, N, VOCAB), ATTN_OK);
    fd_gradient(numeric, c.logits, N * VOCAB, cross_entropy_loss, &c, FD_STEP);
    assert_gradient_close(grad, numeric, N * VOCAB);
}

static void test_cross_entropy_of_huge_logits_stays_finite(void **state)
{
    (void)state;
    /* exp(1000) overflows; with the row's maximum taken out it never
     * appears: the target has the maximum, so the loss is log(1 + e^−1). */
    const double logits[2] = {1000.0, 999.0};
    const int target = 0;
    double loss, grad[2];
    assert_int_equal(attn_cross_entropy(&loss, grad, logits, &target, 1, 2),
                     ATTN_OK);
    const double expected = log1p(exp(-1.0));
    assert_allclose(&loss, &expected, 1, 1e-15, 0.0);
}

static void test_the_ends_reject_bad_tokens_sizes_and_values(void **state)
{
    (void)state;
    double table[VOCAB * D] = {0}, out[N * VOCAB] = {0}, loss;
    const int bad[2] = {1, VOCAB};
    assert_int_equal(attn_embedding(out, table, bad, 2, VOCAB, D),
                     ATTN_ERR_TOKEN);
    assert_int_equal(attn_embedding_backward(table, out, bad, 2, VOCAB, D),
                     ATTN_ERR_TOKEN);
    assert_int_equal(attn_cross_entropy(&loss, NULL, out, bad, 2, VOCAB),
                     ATTN_ERR_TOKEN);
    assert_int_equal(attn_embedding(out, table, tokens, 0, VOCAB, D),
                     ATTN_ERR_SIZE);
    assert_int_equal(attn_unembedding(out, table, table, 1, VOCAB, -1),
                     ATTN_ERR_SIZE);
    assert_int_equal(attn_cross_entropy(&loss, NULL, out, targets, N, 0),
                     ATTN_ERR_SIZE);
    assert_int_equal(attn_embedding(NULL, table, tokens, N, VOCAB, D),
                     ATTN_ERR_NULL);
    assert_int_equal(
        attn_unembedding_backward(out, NULL, NULL, table, table, 1, VOCAB, D),
        ATTN_ERR_NULL);
    assert_int_equal(attn_cross_entropy(NULL, NULL, out, targets, N, VOCAB),
                     ATTN_ERR_NULL);
    out[3] = NAN;
    assert_int_equal(attn_cross_entropy(&loss, NULL, out, targets, N, VOCAB),
                     ATTN_ERR_NOT_FINITE);
    assert_int_equal(attn_unembedding(table, out, table, 1, VOCAB, D),
                     ATTN_ERR_NOT_FINITE);
    table[0] = INFINITY;
    assert_int_equal(attn_embedding(out, table, tokens, N, VOCAB, D),
                     ATTN_ERR_NOT_FINITE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embedding_copies_each_tokens_row),
        cmocka_unit_test(test_embedding_backward_matches_finite_differences),
        cmocka_unit_test(
            test_unembedding_is_each_hidden_row_dotted_with_each_table_row),
        cmocka_unit_test(
            test_untied_unembedding_backward_matches_finite_differences),
        cmocka_unit_test(
            test_tied_table_collects_the_embedding_and_unembedding_gradients),
        cmocka_unit_test(
            test_cross_entropy_is_the_mean_negative_log_probability),
        cmocka_unit_test(
            test_cross_entropy_gradient_matches_finite_differences),
        cmocka_unit_test(test_cross_entropy_of_huge_logits_stays_finite),
        cmocka_unit_test(test_the_ends_reject_bad_tokens_sizes_and_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
