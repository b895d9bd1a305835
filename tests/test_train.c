/* The trainer (attn_trainer_*): its model's gradients against central
 * finite differences, seeded runs repeating bit for bit, learning a task,
 * errors that name the setting, the attention it reports, allocation
 * failures and the byte limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allclose.h"
#include "attention.h"
#include "failing_allocator.h"
#include "finite_diff.h"
#include "train/train.h"

/* ---- The model's gradient, checked numerically ---- */

enum { BATCH = 3, T = 4 };

typedef struct model_case {
    attn__model model;
    attn__pass pass;
    double *memory, *params;
    int tokens[BATCH * T], targets[BATCH * T];
    unsigned char counted[BATCH * T];
} model_case;

static void model_case_init(model_case *c, int layers, int d_ff, int causal)
{
    double settings[ATTN__SET_COUNT] = {0};
    settings[ATTN__SET_LAYERS] = layers;
    settings[ATTN__SET_HEADS] = 2;
    settings[ATTN__SET_D_MODEL] = 4;
    settings[ATTN__SET_D_FF] = d_ff;
    settings[ATTN__SET_SEQ_LENGTH] = T;
    settings[ATTN__SET_VOCAB] = 5;
    settings[ATTN__SET_SCALE] = 1;
    settings[ATTN__SET_CAUSAL] = causal;
    attn__model_layout(&c->model, settings);
    size_t doubles, work;
    assert_int_equal(attn__pass_size(&doubles, &work, &c->model, BATCH),
                     ATTN_OK);
    c->memory = malloc(doubles * sizeof(double));
    c->params = malloc(c->model.count * sizeof(double));
    assert_non_null(c->memory);
    assert_non_null(c->params);
    attn__pass_place(&c->pass, c->memory, &c->model, BATCH, work);
    uint64_t rng = 7;
    attn__model_init(c->params, &c->model, &rng);
    /* Biases, β and γ away from their initial 0 and 1, so that their
     * gradients are checked at a general point. */
    for (size_t i = 0; i < c->model.count; i++)
        c->params[i] += 0.1 * attn__rng_normal(&rng);
    for (int r = 0; r < BATCH * T; r++) {
        c->tokens[r] = attn__rng_below(&rng, 5);
        c->targets[r] = attn__rng_below(&rng, 5);
        c->counted[r] = r % 3 != 1; /* some positions do not count */
    }
}

static void model_case_free(model_case *c)
{
    free(c->memory);
    free(c->params);
}

static double model_case_loss(void *context)
{
    model_case *c = context;
    assert_int_equal(attn__model_forward(&c->pass, NULL, c->params, &c->model,
                                         c->tokens, BATCH, T),
                     ATTN_OK);
    double loss;
    int right, total;
    attn__model_loss(&loss, &right, &total, &c->pass, &c->model, c->targets,
                     c->counted, BATCH, T, 0);
    return loss;
}

static void check_model_gradient(int layers, int d_ff, int causal)
{
    model_case c;
    model_case_init(&c, layers, d_ff, causal);
    double *analytic = malloc(c.model.count * sizeof(double));
    double *numeric = malloc(c.model.count * sizeof(double));
    assert_non_null(analytic);
    assert_non_null(numeric);
    model_case_loss(&c);
    double loss;
    int right, total;
    attn__model_loss(&loss, &right, &total, &c.pass, &c.model, c.targets,
                     c.counted, BATCH, T, 1);
    assert_int_equal(attn__model_backward(analytic, &c.pass, c.params, &c.model,
                                          c.tokens, BATCH, T),
                     ATTN_OK);
    fd_gradient(numeric, c.params, c.model.count, model_case_loss, &c, FD_STEP);
    assert_gradient_close(analytic, numeric, c.model.count);
    free(analytic);
    free(numeric);
    model_case_free(&c);
}

static void
test_attention_only_layers_have_the_gradient_finite_differences_give(
    void **state)
{
    (void)state;
    check_model_gradient(2, 0, 0);
    check_model_gradient(1, 0, 1);
}

static void
test_transformer_block_layers_have_the_gradient_finite_differences_give(
    void **state)
{
    (void)state;
    check_model_gradient(2, 6, 0);
    check_model_gradient(1, 6, 1);
}

/* ---- The trainer through its public API ---- */

static attn_trainer *new_trainer(const char *task, double seed)
{
    attn_trainer *trainer;
    assert_int_equal(attn_trainer_create(&trainer, task, NULL), ATTN_OK);
    assert_int_equal(attn_trainer_set(trainer, "seed", seed), ATTN_OK);
    return trainer;
}

static void losses(double *out, int count, const char *task, double seed)
{
    attn_trainer *trainer = new_trainer(task, seed);
    for (int i = 0; i < count; i++)
        assert_int_equal(attn_trainer_step(trainer, 1, &out[i]), ATTN_OK);
    attn_trainer_destroy(trainer);
}

static void test_the_same_seed_gives_the_same_losses_bit_for_bit(void **state)
{
    (void)state;
    double first[5], again[5], other[5];
    losses(first, 5, "sort", 3);
    losses(again, 5, "sort", 3);
    losses(other, 5, "sort", 4);
    assert_memory_equal(first, again, sizeof first);
    assert_true(memcmp(first, other, sizeof first) != 0);
}

static void test_reverse_reaches_99_percent_within_its_step_budget(void **state)
{
    (void)state;
    attn_trainer *trainer = new_trainer("reverse", 2);
    double steps, loss, held_loss, accuracy;
    assert_int_equal(attn_trainer_get(trainer, "steps", &steps), ATTN_OK);
    assert_int_equal(attn_trainer_evaluate(trainer, &held_loss, &accuracy),
                     ATTN_OK);
    assert_true(accuracy < 0.3); /* chance is 1 in 10 */
    assert_int_equal(attn_trainer_step(trainer, (int)steps, &loss), ATTN_OK);
    assert_int_equal(attn_trainer_evaluate(trainer, &held_loss, &accuracy),
                     ATTN_OK);
    assert_true(accuracy >= 0.99);
    assert_true(held_loss < 0.1);
    double taken;
    assert_int_equal(attn_trainer_get(trainer, "step", &taken), ATTN_OK);
    assert_true(taken == steps);
    attn_trainer_destroy(trainer);
}

/* After training, the first head of "reverse" looks at the mirrored
 * position: the anti-diagonal. Every row of weights sums to 1. */
static void
test_a_trained_reverse_head_attends_along_the_anti_diagonal(void **state)
{
    (void)state;
    attn_trainer *trainer = new_trainer("reverse", 1);
    double loss;
    assert_int_equal(attn_trainer_step(trainer, 150, &loss), ATTN_OK);
    enum { N = 8, HEADS = 2 };
    int tokens[N], targets[N], counted[N], predicted[N];
    double weights[HEADS * N * N];
    assert_int_equal(attn_trainer_example(trainer, tokens, targets, counted, 5),
                     ATTN_OK);
    assert_int_equal(
        attn_trainer_predict(trainer, predicted, weights, tokens, N), ATTN_OK);
    assert_memory_equal(predicted, targets, sizeof predicted);
    int mirrored = 0;
    for (int h = 0; h < HEADS; h++) {
        int all = 1;
        for (int i = 0; i < N; i++) {
            const double *row = weights + ((size_t)h * N + i) * N;
            double sum = 0;
            for (int j = 0; j < N; j++) sum += row[j];
            assert_true(fabs(sum - 1) < 1e-12);
            all &= row[N - 1 - i] > 0.9;
        }
        mirrored |= all;
    }
    assert_true(mirrored);
    attn_trainer_destroy(trainer);
}

static void test_causal_tasks_give_no_weight_to_later_tokens(void **state)
{
    (void)state;
    attn_trainer *trainer = new_trainer("previousToken", 1);
    enum { N = 5, HEADS = 2 };
    const int tokens[N] = {3, 1, 4, 1, 5};
    int predicted[N];
    double weights[HEADS * N * N];
    assert_int_equal(
        attn_trainer_predict(trainer, predicted, weights, tokens, N), ATTN_OK);
    for (int h = 0; h < HEADS; h++)
        for (int i = 0; i < N; i++)
            for (int j = i + 1; j < N; j++)
                assert_true(weights[((size_t)h * N + i) * N + j] == 0.0);
    attn_trainer_destroy(trainer);
}

static void test_the_held_out_set_does_not_depend_on_the_seed(void **state)
{
    (void)state;
    attn_trainer *a = new_trainer("lookup", 1), *b = new_trainer("lookup", 9);
    int ta[9], tb[9], ya[9], yb[9], ca[9], cb[9];
    assert_int_equal(attn_trainer_example(a, ta, ya, ca, 255), ATTN_OK);
    assert_int_equal(attn_trainer_example(b, tb, yb, cb, 255), ATTN_OK);
    assert_memory_equal(ta, tb, sizeof ta);
    assert_memory_equal(ya, yb, sizeof ya);
    /* lookup counts only the last position: the asked key's value */
    for (int i = 0; i < 8; i++) assert_int_equal(ca[i], 0);
    assert_int_equal(ca[8], 1);
    int asked = -1;
    for (int p = 0; p < 4; p++)
        if (ta[2 * p] == ta[8]) asked = p;
    assert_true(asked >= 0);
    assert_int_equal(ya[8], ta[2 * asked + 1]);
    attn_trainer_destroy(a);
    attn_trainer_destroy(b);
}

static void expect_error(attn_trainer *trainer, int status, int expected,
                         const char *message)
{
    assert_int_equal(status, expected);
    assert_string_equal(attn_trainer_error(trainer), message);
}

static void
test_the_tasks_and_settings_listed_are_the_ones_the_trainer_takes(void **state)
{
    (void)state;
    static const char *const tasks[] = {"copy",          "reverse",   "sort",
                                        "previousToken", "induction", "lookup"};
    static const char *const settings[] = {
        "seed",  "layers",    "heads",        "dModel", "dFF",    "seqLength",
        "vocab", "batchSize", "learningRate", "scale",  "causal", "steps"};
    const int task_count = (int)(sizeof tasks / sizeof tasks[0]);
    const int setting_count = (int)(sizeof settings / sizeof settings[0]);
    for (int i = 0; i < task_count; i++) {
        assert_non_null(attn_trainer_task(i));
        assert_string_equal(attn_trainer_task(i), tasks[i]);
        attn_trainer *trainer = new_trainer(attn_trainer_task(i), 1);
        for (int s = 0; s < setting_count; s++) {
            double value = -1;
            assert_non_null(attn_trainer_setting(s));
            assert_string_equal(attn_trainer_setting(s), settings[s]);
            assert_int_equal(
                attn_trainer_get(trainer, attn_trainer_setting(s), &value),
                ATTN_OK);
        }
        attn_trainer_destroy(trainer);
    }
    assert_null(attn_trainer_task(task_count));
    assert_null(attn_trainer_task(-1));
    assert_null(attn_trainer_setting(setting_count));
    assert_null(attn_trainer_setting(-1));
}

static void test_bad_settings_get_errors_that_name_the_setting(void **state)
{
    (void)state;
    attn_trainer *trainer;
    assert_int_equal(attn_trainer_create(&trainer, "juggle", NULL),
                     ATTN_ERR_OPTION);
    assert_null(trainer);
    failing_allocator counts = {-1, 0, 0};
    const attn_allocator half = {failing_allocator_use(&counts).allocate, NULL,
                                 &counts}; /* no release */
    assert_int_equal(attn_trainer_create(&trainer, "copy", &half),
                     ATTN_ERR_NULL);
    assert_null(trainer);
    assert_int_equal(counts.calls, 0);
    trainer = new_trainer("reverse", 1);
    expect_error(trainer, attn_trainer_set(trainer, "layers", 3),
                 ATTN_ERR_RANGE,
                 "layers: must be a whole number from 1 to 2, got 3");
    expect_error(trainer, attn_trainer_set(trainer, "dModel", 16.5),
                 ATTN_ERR_RANGE,
                 "dModel: must be a whole number from 4 to 64, got 16.5");
    expect_error(trainer, attn_trainer_set(trainer, "learningRate", NAN),
                 ATTN_ERR_RANGE,
                 "learningRate: must be a number from 1e-06 to 1, got NaN");
    expect_error(trainer, attn_trainer_set(trainer, "depth", 1), ATTN_ERR_INPUT,
                 "depth: unknown setting (settings: seed, layers, heads, "
                 "dModel, dFF, seqLength, vocab, batchSize, learningRate, "
                 "scale, causal, steps)");
    assert_int_equal(attn_trainer_set(trainer, "heads", 3), ATTN_OK);
    double loss;
    expect_error(trainer, attn_trainer_step(trainer, 1, &loss), ATTN_ERR_HEADS,
                 "heads: must divide dModel (32), got 3");
    assert_int_equal(attn_trainer_set(trainer, "heads", 4), ATTN_OK);
    assert_int_equal(attn_trainer_step(trainer, 1, &loss), ATTN_OK);
    expect_error(trainer, attn_trainer_set(trainer, "heads", 2), ATTN_ERR_STATE,
                 "heads: settings are fixed once the model is built (by the "
                 "first step, evaluation or prediction); make a new trainer "
                 "to change them");
    const int tokens[3] = {1, 10, 2};
    int predicted[3];
    expect_error(
        trainer, attn_trainer_predict(trainer, predicted, NULL, tokens, 3),
        ATTN_ERR_RANGE, "tokens[1]: must be from 0 to vocab - 1 = 9, got 10");
    expect_error(trainer,
                 attn_trainer_predict(trainer, predicted, NULL, tokens, 9),
                 ATTN_ERR_RANGE,
                 "tokens: the model reads 1 to seqLength = 8 tokens, got 9");
    attn_trainer_destroy(trainer);

    trainer = new_trainer("induction", 1);
    assert_int_equal(attn_trainer_set(trainer, "seqLength", 7), ATTN_OK);
    expect_error(trainer, attn_trainer_step(trainer, 1, &loss), ATTN_ERR_RANGE,
                 "seqLength: induction repeats a sequence, so it must be "
                 "even and at least 4, got 7");
    attn_trainer_destroy(trainer);
}

static void
test_every_allocation_failure_is_reported_and_frees_everything(void **state)
{
    (void)state;
    for (long fail_at = 0;; fail_at++) {
        failing_allocator counts = {fail_at, 0, 0};
        const attn_allocator allocator = failing_allocator_use(&counts);
        attn_trainer *trainer;
        int status = attn_trainer_create(&trainer, "copy", &allocator);
        double loss = 0;
        if (status == ATTN_OK) status = attn_trainer_step(trainer, 1, &loss);
        attn_trainer_destroy(trainer);
        assert_int_equal(counts.live, 0);
        if (status == ATTN_OK) {
            assert_true(fail_at >= 2); /* the trainer, then its model */
            break;
        }
        assert_int_equal(status, ATTN_ERR_NOMEM);
    }
}

/* ---- The byte limit ---- */

enum { MESSAGE_CAP = 320 };

/* An allocator that adds up the bytes it hands out. */
typedef struct sizing_allocator {
    size_t bytes;
    long calls;
} sizing_allocator;

static void *sizing_allocate(void *context, size_t bytes)
{
    sizing_allocator *sizes = context;
    sizes->bytes += bytes;
    sizes->calls++;
    return malloc(bytes);
}

static void sizing_release(void *context, void *block)
{
    (void)context;
    free(block);
}

/* A trainer with the given limit, built by one step: its status, the
 * bytes and calls its allocator saw, and (when refused) its message. */
static int build_with_limit(size_t max_bytes, sizing_allocator *sizes,
                            char *message, size_t cap)
{
    *sizes = (sizing_allocator){0, 0};
    const attn_allocator allocator = {sizing_allocate, sizing_release, sizes};
    attn_trainer *trainer;
    assert_int_equal(attn_trainer_create(&trainer, "sort", &allocator),
                     ATTN_OK);
    assert_int_equal(attn_trainer_set(trainer, "batchSize", 512), ATTN_OK);
    assert_int_equal(attn_trainer_set_max_bytes(trainer, max_bytes), ATTN_OK);
    double loss;
    const int status = attn_trainer_step(trainer, 1, &loss);
    snprintf(message, cap, "%s", attn_trainer_error(trainer));
    if (status == ATTN_OK)
        expect_error(trainer, attn_trainer_set_max_bytes(trainer, 1),
                     ATTN_ERR_STATE,
                     "maxBytes: the limit is fixed once the model is built; "
                     "make a new trainer to change it");
    attn_trainer_destroy(trainer);
    return status;
}

static void
test_a_trainer_above_its_byte_limit_is_refused_before_it_allocates_its_model(
    void **state)
{
    (void)state;
    sizing_allocator sizes;
    char message[MESSAGE_CAP];
    assert_int_equal(build_with_limit(1000000, &sizes, message, sizeof message),
                     ATTN_ERR_TOO_LARGE);
    assert_int_equal(sizes.calls, 1); /* the trainer, not its model */
    size_t needed = 0;
    assert_int_equal(sscanf(message, "the trainer needs %zu bytes", &needed),
                     1);
    char expected[MESSAGE_CAP];
    snprintf(expected, sizeof expected,
             "the trainer needs %zu bytes for its model, batches and working "
             "memory, more than its limit of 1000000 bytes; use a smaller "
             "batchSize, dModel, dFF or seqLength, or raise the limit "
             "(maxBytes in the JS API, --max-bytes in attn train)",
             needed);
    assert_string_equal(message, expected);
    /* The figure named is exactly what the trainer allocates in all, and
     * exactly the limit at which it builds. */
    assert_int_equal(build_with_limit(needed, &sizes, message, sizeof message),
                     ATTN_OK);
    assert_int_equal(sizes.bytes, needed);
    assert_int_equal(sizes.calls, 2);
    assert_int_equal(
        build_with_limit(needed - 1, &sizes, message, sizeof message),
        ATTN_ERR_TOO_LARGE);
    assert_int_equal(build_with_limit(0, &sizes, message, sizeof message),
                     ATTN_OK); /* no limit */
    assert_int_equal(sizes.bytes, needed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_attention_only_layers_have_the_gradient_finite_differences_give),
        cmocka_unit_test(
            test_transformer_block_layers_have_the_gradient_finite_differences_give),
        cmocka_unit_test(test_the_same_seed_gives_the_same_losses_bit_for_bit),
        cmocka_unit_test(
            test_reverse_reaches_99_percent_within_its_step_budget),
        cmocka_unit_test(
            test_a_trained_reverse_head_attends_along_the_anti_diagonal),
        cmocka_unit_test(test_causal_tasks_give_no_weight_to_later_tokens),
        cmocka_unit_test(test_the_held_out_set_does_not_depend_on_the_seed),
        cmocka_unit_test(
            test_the_tasks_and_settings_listed_are_the_ones_the_trainer_takes),
        cmocka_unit_test(test_bad_settings_get_errors_that_name_the_setting),
        cmocka_unit_test(
            test_every_allocation_failure_is_reported_and_frees_everything),
        cmocka_unit_test(
            test_a_trainer_above_its_byte_limit_is_refused_before_it_allocates_its_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
