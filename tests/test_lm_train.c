/* The byte-level decoder's trainer: its backward pass through the whole
 * decoder against central finite differences, a short run lowering the
 * loss, the same bits from the same seed, and a written checkpoint that
 * attn_model_load reads back and runs to the trainer's own logits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "allclose.h"
#include "attention.h"
#include "failing_allocator.h"
#include "finite_diff.h"
#include "test_rng.h"
#include "train/lm_train.h"

/* ---- The decoder's gradient ---- */

enum { B = 2, T = 5, MAX_PARAMS = 1024, MAX_PASS = 8192 };

typedef struct grad_case {
    attn__lm_layout layout;
    attn__lm_pass pass;
    double params[MAX_PARAMS], pass_memory[MAX_PASS];
    int positions[T], tokens[B * T], targets[B * T];
} grad_case;

static double decoder_loss(void *context)
{
    grad_case *c = context;
    double loss;
    assert_int_equal(
        attn__lm_forward(&c->pass, c->params, &c->layout, c->tokens), ATTN_OK);
    assert_int_equal(attn_cross_entropy(&loss, NULL, c->pass.logits, c->targets,
                                        B * T, c->layout.config.vocab_size),
                     ATTN_OK);
    return loss;
}

static void check_decoder_gradient(const attn_decoder_config *config,
                                   uint64_t seed)
{
    static grad_case c;
    assert_int_equal(attn__lm_layout_make(&c.layout, config), ATTN_OK);
    assert_true(c.layout.count <= MAX_PARAMS);
    assert_true(attn__lm_pass_doubles(&c.layout, B, T) <= MAX_PASS);
    attn__lm_pass_place(&c.pass, c.pass_memory, c.positions, &c.layout, B, T);
    uint64_t rng = seed;
    attn__lm_init(c.params, &c.layout, &rng);
    /* Norm weights away from 1 and a larger embedding, so that every
     * piece's gradient is exercised at generic values. */
    test_rng r;
    test_rng_seed(&r, seed);
    for (size_t i = 0; i < c.layout.count; i++)
        c.params[i] += test_rng_uniform(&r, -0.3, 0.3);
    for (int i = 0; i < B * T; i++) {
        c.tokens[i] = test_rng_int(&r, 0, config->vocab_size - 1);
        c.targets[i] = test_rng_int(&r, 0, config->vocab_size - 1);
    }
    double loss, grads[MAX_PARAMS], numeric[MAX_PARAMS];
    assert_int_equal(attn__lm_forward(&c.pass, c.params, &c.layout, c.tokens),
                     ATTN_OK);
    assert_int_equal(attn_cross_entropy(&loss, c.pass.logits, c.pass.logits,
                                        c.targets, B * T, config->vocab_size),
                     ATTN_OK);
    assert_int_equal(
        attn__lm_backward(grads, &c.pass, c.params, &c.layout, c.tokens),
        ATTN_OK);
    fd_gradient(numeric, c.params, c.layout.count, decoder_loss, &c, FD_STEP);
    assert_gradient_close(grads, numeric, c.layout.count);
}

static attn_decoder_config tiny_config(int heads, int kv_heads, int tied)
{
    const attn_decoder_config config = {
        .vocab_size = 11,
        .hidden_size = 8,
        .intermediate_size = 6,
        .num_hidden_layers = 2,
        .num_attention_heads = heads,
        .num_key_value_heads = kv_heads,
        .max_position_embeddings = 16,
        .rope_theta = 500.0,
        .rms_norm_eps = 1e-5,
        .tie_word_embeddings = tied,
    };
    return config;
}

static void
test_decoder_gradient_matches_finite_differences_tied_and_untied(void **state)
{
    (void)state;
    attn_decoder_config config = tiny_config(2, 1, 1);
    check_decoder_gradient(&config, 1);
    config = tiny_config(2, 2, 0);
    config.rope_theta = 10000.0;
    check_decoder_gradient(&config, 2);
}

/* ---- Training ---- */

static const char TEXT[] = "the cat sat on the mat. the cat sat on the hat. "
                           "the rat sat on the cat. the hat sat on the rat. ";

static attn_lm_settings small_settings(uint64_t seed)
{
    attn_lm_settings s = {
        .config =
            {
                .vocab_size = 256,
                .hidden_size = 16,
                .intermediate_size = 32,
                .num_hidden_layers = 1,
                .num_attention_heads = 4,
                .num_key_value_heads = 2,
                .max_position_embeddings = 32,
                .rope_theta = 10000.0,
                .rms_norm_eps = 1e-5,
                .tie_word_embeddings = 1,
            },
        .seq_length = 16,
        .batch_size = 4,
        .steps = 60,
        .learning_rate = 1e-2,
        .seed = seed,
    };
    return s;
}

static const unsigned char *text_bytes(void)
{
    return (const unsigned char *)TEXT;
}

static void train(attn_lm_trainer *trainer, int steps)
{
    for (int i = 0; i < steps; i++) {
        double loss;
        assert_int_equal(
            attn_lm_trainer_step(trainer, &loss, text_bytes(), strlen(TEXT)),
            ATTN_OK);
        assert_true(isfinite(loss));
    }
}

static void test_a_short_run_lowers_the_held_out_loss(void **state)
{
    (void)state;
    const attn_lm_settings s = small_settings(7);
    attn_lm_trainer *trainer;
    assert_int_equal(attn_lm_trainer_create(&trainer, &s, NULL), ATTN_OK);
    double before, after;
    assert_int_equal(
        attn_lm_trainer_loss(trainer, &before, text_bytes(), strlen(TEXT)),
        ATTN_OK);
    /* Untrained, every byte is about equally likely: log 256 nats. */
    assert_true(fabs(before - log(256.0)) < 0.1);
    train(trainer, s.steps);
    assert_int_equal(
        attn_lm_trainer_loss(trainer, &after, text_bytes(), strlen(TEXT)),
        ATTN_OK);
    assert_true(after < before - 3.0);
    attn_lm_trainer_destroy(trainer);
}

typedef struct written {
    char json[2048];
    size_t json_length;
    unsigned char *file;
    size_t size;
} written;

static void write_checkpoint(written *w, attn_lm_trainer *trainer)
{
    assert_int_equal(attn_lm_trainer_write(trainer, NULL, 0, &w->json_length,
                                           NULL, 0, &w->size),
                     ATTN_ERR_TOO_LARGE);
    w->file = malloc(w->size);
    assert_non_null(w->file);
    size_t size;
    assert_int_equal(attn_lm_trainer_write(trainer, w->json, sizeof w->json,
                                           &w->json_length, w->file, w->size,
                                           &size),
                     ATTN_OK);
    assert_int_equal(size, w->size);
}

static void written_checkpoint(written *w, uint64_t seed, int steps)
{
    const attn_lm_settings s = small_settings(seed);
    attn_lm_trainer *trainer;
    assert_int_equal(attn_lm_trainer_create(&trainer, &s, NULL), ATTN_OK);
    train(trainer, steps);
    write_checkpoint(w, trainer);
    attn_lm_trainer_destroy(trainer);
}

static void test_the_same_seed_writes_the_same_bytes(void **state)
{
    (void)state;
    written a, b, other;
    written_checkpoint(&a, 3, 10);
    written_checkpoint(&b, 3, 10);
    written_checkpoint(&other, 4, 10);
    assert_int_equal(a.size, b.size);
    assert_memory_equal(a.file, b.file, a.size);
    assert_string_equal(a.json, b.json);
    assert_int_equal(a.size, other.size);
    assert_true(memcmp(a.file, other.file, a.size) != 0);
    free(a.file);
    free(b.file);
    free(other.file);
}

static void check_round_trip(int tied, int kv_heads)
{
    attn_lm_settings s = small_settings(5);
    s.config.tie_word_embeddings = tied;
    s.config.num_key_value_heads = kv_heads;
    s.config.rope_theta = 250.0;
    attn_lm_trainer *trainer;
    assert_int_equal(attn_lm_trainer_create(&trainer, &s, NULL), ATTN_OK);
    train(trainer, 5);
    written w;
    write_checkpoint(&w, trainer);
    attn_model *model;
    assert_int_equal(attn_model_create(&model, NULL), ATTN_OK);
    if (attn_model_load(model, w.json, w.json_length, w.file, w.size) !=
        ATTN_OK)
        fail_msg("%s", attn_model_error(model));
    const attn_decoder_config *read = attn_model_config(model);
    assert_int_equal(read->hidden_size, s.config.hidden_size);
    assert_int_equal(read->num_key_value_heads, kv_heads);
    assert_int_equal(read->tie_word_embeddings, tied);
    assert_true(read->rope_theta == 250.0 && read->rms_norm_eps == 1e-5);
    enum { N = 12 };
    int tokens[N];
    for (int i = 0; i < N; i++) tokens[i] = (unsigned char)TEXT[i];
    static double trained[N * 256], loaded[N * 256];
    assert_int_equal(attn_lm_trainer_logits(trainer, trained, tokens, N),
                     ATTN_OK);
    assert_int_equal(attn_model_run(model, NULL, loaded, tokens, N), ATTN_OK);
    /* The same float32 weights through the same operations in the same
     * order: the same bits. */
    assert_memory_equal(trained, loaded, sizeof trained);
    attn_model_destroy(model);
    attn_lm_trainer_destroy(trainer);
    free(w.file);
}

static void
test_a_written_checkpoint_loads_and_runs_to_the_trainers_logits(void **state)
{
    (void)state;
    check_round_trip(1, 2);
    check_round_trip(0, 1);
}

static void
test_safetensors_writer_transposes_and_rounds_to_float32(void **state)
{
    (void)state;
    const double w[6] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6}; /* [in 2, out 3] */
    const attn_tensor_out tensors[2] = {
        {"w", 2, {3, 2}, w, 1},
        {"b", 1, {6}, w, 0},
    };
    unsigned char file[512];
    size_t size;
    assert_int_equal(
        attn_safetensors_write(file, sizeof file, &size, tensors, 2), ATTN_OK);
    assert_int_equal(file[0] % 8, 0);
    attn_tensor_info info;
    double read[6];
    assert_int_equal(attn_safetensors_find(&info, NULL, 0, file, size, "w"),
                     ATTN_OK);
    assert_int_equal(info.shape[0], 3);
    assert_int_equal(info.shape[1], 2);
    assert_int_equal(attn_safetensors_read(read, file, size, &info), ATTN_OK);
    /* Row o of the file is column o of w. */
    const double expected[6] = {(float)0.1, (float)0.4, (float)0.2,
                                (float)0.5, (float)0.3, (float)0.6};
    assert_memory_equal(read, expected, sizeof read);
    assert_int_equal(attn_safetensors_write(file, 20, &size, tensors, 2),
                     ATTN_ERR_TOO_LARGE);
    const double bad[1] = {NAN};
    const attn_tensor_out nan_tensor = {"nan", 1, {1}, bad, 0};
    assert_int_equal(
        attn_safetensors_write(file, sizeof file, &size, &nan_tensor, 1),
        ATTN_ERR_NOT_FINITE);
}

static void test_trainer_rejects_settings_it_cannot_train(void **state)
{
    (void)state;
    attn_lm_trainer *trainer = (attn_lm_trainer *)&trainer;
    attn_lm_settings s = small_settings(1);
    s.seq_length = 33;
    assert_int_equal(attn_lm_trainer_create(&trainer, &s, NULL),
                     ATTN_ERR_POSITION);
    assert_null(trainer);
    s = small_settings(1);
    s.learning_rate = 0.0;
    assert_int_equal(attn_lm_trainer_create(&trainer, &s, NULL),
                     ATTN_ERR_RANGE);
    s = small_settings(1);
    s.batch_size = 0;
    assert_int_equal(attn_lm_trainer_create(&trainer, &s, NULL), ATTN_ERR_SIZE);
    s = small_settings(1);
    s.config.num_key_value_heads = 3;
    assert_int_equal(attn_lm_trainer_create(&trainer, &s, NULL),
                     ATTN_ERR_KV_HEADS);
    /* A text no longer than a window has no window with a next byte. */
    s = small_settings(1);
    assert_int_equal(attn_lm_trainer_create(&trainer, &s, NULL), ATTN_OK);
    double loss;
    assert_int_equal(attn_lm_trainer_step(trainer, &loss, text_bytes(), 16),
                     ATTN_ERR_SIZE);
    const unsigned char high[20] = {0};
    s.config.vocab_size = 200;
    attn_lm_trainer_destroy(trainer);
    assert_int_equal(attn_lm_trainer_create(&trainer, &s, NULL), ATTN_OK);
    unsigned char text[20];
    memcpy(text, high, sizeof text);
    text[3] = 250;
    assert_int_equal(attn_lm_trainer_loss(trainer, &loss, text, sizeof text),
                     ATTN_ERR_TOKEN);
    attn_lm_trainer_destroy(trainer);
}

static void
test_trainer_returns_every_block_when_an_allocation_fails(void **state)
{
    (void)state;
    const attn_lm_settings s = small_settings(2);
    for (long fail_at = 0;; fail_at++) {
        failing_allocator counts = {fail_at, 0, 0};
        const attn_allocator allocator = failing_allocator_use(&counts);
        attn_lm_trainer *trainer = NULL;
        int status = attn_lm_trainer_create(&trainer, &s, &allocator);
        double loss;
        if (status == ATTN_OK)
            status = attn_lm_trainer_step(trainer, &loss, text_bytes(),
                                          strlen(TEXT));
        attn_lm_trainer_destroy(trainer);
        assert_int_equal(counts.live, 0);
        if (status == ATTN_OK) {
            assert_true(fail_at >= counts.calls);
            break;
        }
        assert_int_equal(status, ATTN_ERR_NOMEM);
        assert_null(trainer);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_decoder_gradient_matches_finite_differences_tied_and_untied),
        cmocka_unit_test(test_a_short_run_lowers_the_held_out_loss),
        cmocka_unit_test(test_the_same_seed_writes_the_same_bytes),
        cmocka_unit_test(
            test_a_written_checkpoint_loads_and_runs_to_the_trainers_logits),
        cmocka_unit_test(
            test_safetensors_writer_transposes_and_rounds_to_float32),
        cmocka_unit_test(test_trainer_rejects_settings_it_cannot_train),
        cmocka_unit_test(
            test_trainer_returns_every_block_when_an_allocation_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
