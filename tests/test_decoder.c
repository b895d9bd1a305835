/* The Llama decoder: its logits and every head's weights against a float64
 * computation written as Hugging Face's modeling_llama.py
 * (support/llama_reference.c) on small random checkpoints, decoding with
 * the key/value cache bit for bit equal to recomputing, and its errors. */
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
#include "llama_reference.h"
#include "test_rng.h"

/* A random checkpoint: the reference's arrays in the checkpoint's layout,
 * and the engine's, its projections transposed to [in, out]. */
typedef struct model {
    reference_model reference;
    attn_decoder_layer layers[REFERENCE_MAX_LAYERS];
    attn_decoder_params params;
    double *blocks[64];
    int block_count;
} model;

static double *filled(model *m, test_rng *rng, int count, double lo, double hi)
{
    double *x = malloc((size_t)count * sizeof *x);
    assert_non_null(x);
    test_rng_fill(rng, x, (size_t)count, lo, hi);
    m->blocks[m->block_count++] = x;
    return x;
}

/* The engine's [in, out] copy of a checkpoint's [out, in] matrix. */
static const double *transposed(model *m, const double *w, int out, int in)
{
    double *t = malloc((size_t)(out * in) * sizeof *t);
    assert_non_null(t);
    for (int o = 0; o < out; o++)
        for (int i = 0; i < in; i++) t[i * out + o] = w[o * in + i];
    m->blocks[m->block_count++] = t;
    return t;
}

static attn_decoder_config config_of(int hidden, int heads, int kv_heads,
                                     double theta, int tied)
{
    const attn_decoder_config c = {.vocab_size = 11,
                                   .hidden_size = hidden,
                                   .intermediate_size = 12,
                                   .num_hidden_layers = 2,
                                   .num_attention_heads = heads,
                                   .num_key_value_heads = kv_heads,
                                   .max_position_embeddings = 24,
                                   .rope_theta = theta,
                                   .rms_norm_eps = 1e-5,
                                   .tie_word_embeddings = tied};
    return c;
}

static void model_make(model *m, const attn_decoder_config *c, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    test_rng rng;
    test_rng_seed(&rng, seed);
    reference_model *r = &m->reference;
    r->config = *c;
    const int h = c->hidden_size, ff = c->intermediate_size;
    const int kv = h / c->num_attention_heads * c->num_key_value_heads;
    const double s = 1.0 / sqrt((double)h);
    r->embed_tokens = filled(m, &rng, c->vocab_size * h, -1.0, 1.0);
    r->norm = filled(m, &rng, h, 0.5, 1.5);
    r->lm_head = filled(m, &rng, c->vocab_size * h, -1.0, 1.0);
    for (int l = 0; l < c->num_hidden_layers; l++) {
        reference_layer *L = &r->layers[l];
        L->input_layernorm = filled(m, &rng, h, 0.5, 1.5);
        /* Queries and keys large enough that the heads do not attend
         * evenly. */
        L->q_proj = filled(m, &rng, h * h, -3.0 * s, 3.0 * s);
        L->k_proj = filled(m, &rng, kv * h, -3.0 * s, 3.0 * s);
        L->v_proj = filled(m, &rng, kv * h, -s, s);
        L->o_proj = filled(m, &rng, h * h, -s, s);
        L->post_attention_layernorm = filled(m, &rng, h, 0.5, 1.5);
        L->gate_proj = filled(m, &rng, ff * h, -s, s);
        L->up_proj = filled(m, &rng, ff * h, -s, s);
        L->down_proj = filled(m, &rng, h * ff, -s, s);
        const attn_decoder_layer engine = {L->input_layernorm,
                                           transposed(m, L->q_proj, h, h),
                                           transposed(m, L->k_proj, kv, h),
                                           transposed(m, L->v_proj, kv, h),
                                           transposed(m, L->o_proj, h, h),
                                           L->post_attention_layernorm,
                                           transposed(m, L->gate_proj, ff, h),
                                           transposed(m, L->up_proj, ff, h),
                                           transposed(m, L->down_proj, h, ff)};
        m->layers[l] = engine;
    }
    m->params.embed_tokens = r->embed_tokens;
    m->params.layers = m->layers;
    m->params.norm = r->norm;
    m->params.lm_head = c->tie_word_embeddings ? NULL : r->lm_head;
}

static void model_free(model *m)
{
    for (int i = 0; i < m->block_count; i++) free(m->blocks[i]);
}

/* A cache of `capacity` positions and the work for n tokens at a time. */
typedef struct session {
    attn_kv_cache cache;
    double *work;
} session;

static void session_open(session *s, const attn_decoder_config *c, int capacity,
                         int n)
{
    const size_t cells = attn_kv_cache_size(c, capacity);
    assert_true(cells > 0);
    s->cache.keys = calloc(cells, sizeof(double));
    s->cache.values = calloc(cells, sizeof(double));
    s->cache.capacity = capacity;
    s->cache.length = 0;
    s->work = malloc(attn_decoder_work_size(c, n, capacity) * sizeof(double));
    assert_non_null(s->cache.keys);
    assert_non_null(s->cache.values);
    assert_non_null(s->work);
}

static void session_close(session *s)
{
    free(s->cache.keys);
    free(s->cache.values);
    free(s->work);
}

/* ---- Against the reference ---- */

static void check_against_reference(int hidden, int heads, int kv_heads,
                                    double theta, int tied, uint64_t seed)
{
    enum { N = 9 };
    const attn_decoder_config c = config_of(hidden, heads, kv_heads, theta,
                                            tied);
    assert_int_equal(attn_decoder_config_check(&c), ATTN_OK);
    model m;
    model_make(&m, &c, seed);
    const int tokens[N] = {3, 1, 4, 1, 5, 9, 2, 6, 5};
    const size_t weight_count = (size_t)(2 * heads * N * N);
    double logits[N * 11], expected_logits[N * 11];
    double *weights = malloc(weight_count * sizeof *weights);
    double *expected_weights = malloc(weight_count * sizeof *weights);
    assert_non_null(weights);
    assert_non_null(expected_weights);
    session s;
    session_open(&s, &c, N, N);
    const attn_decoder_outputs out = {logits, weights, NULL};
    assert_int_equal(
        attn_decoder_forward(&out, &s.cache, tokens, N, &m.params, &c, s.work),
        ATTN_OK);
    assert_int_equal(s.cache.length, N);
    reference_decoder(expected_logits, expected_weights, &m.reference, tokens,
                      N);
    assert_allclose(logits, expected_logits, N * 11, 1e-11, 1e-12);
    assert_allclose(weights, expected_weights, weight_count, 1e-11, 1e-13);
    /* The heads do not all attend evenly: the test would notice a wrong
     * rotation. */
    double largest = 0.0;
    for (size_t i = 0; i < weight_count; i++)
        if (weights[i] > largest && weights[i] < 1.0) largest = weights[i];
    assert_true(largest > 0.5);
    session_close(&s);
    free(weights);
    free(expected_weights);
    model_free(&m);
}

static void
test_decoder_matches_the_reference_for_grouped_and_multi_query_heads(
    void **state)
{
    (void)state;
    check_against_reference(32, 4, 2, 10000.0, 1, 21); /* head_dim 8, tied */
    check_against_reference(8, 4, 1, 500.0, 0, 22);    /* head_dim 2 */
    check_against_reference(32, 4, 1, 500.0, 0, 23);
    check_against_reference(8, 4, 2, 10000.0, 1, 24);
    check_against_reference(32, 4, 4, 10000.0, 0, 25); /* multi-head */
}

static void
test_decoder_hidden_output_is_the_final_norm_that_gives_the_logits(void **state)
{
    (void)state;
    const attn_decoder_config c = config_of(8, 4, 2, 500.0, 0);
    model m;
    model_make(&m, &c, 26);
    const int tokens[3] = {7, 0, 10};
    double hidden[3 * 8], logits[3 * 11], expected[3 * 11];
    session s;
    session_open(&s, &c, 3, 3);
    const attn_decoder_outputs out = {logits, NULL, hidden};
    assert_int_equal(
        attn_decoder_forward(&out, &s.cache, tokens, 3, &m.params, &c, s.work),
        ATTN_OK);
    for (int t = 0; t < 3; t++)
        for (int v = 0; v < 11; v++) {
            double sum = 0.0;
            for (int i = 0; i < 8; i++)
                sum += m.reference.lm_head[v * 8 + i] * hidden[t * 8 + i];
            expected[t * 11 + v] = sum;
        }
    assert_allclose(logits, expected, 3 * 11, 1e-14, 1e-14);
    session_close(&s);
    model_free(&m);
}

/* ---- The key/value cache ---- */

static int greedy(const double *logits, int vocab)
{
    int best = 0;
    for (int v = 1; v < vocab; v++)
        if (logits[v] > logits[best]) best = v;
    return best;
}

/* A prompt of 3 tokens, then 12 generated greedily one at a time with the
 * cache; at each step, the whole text recomputed from an empty cache gives
 * the same bits for the newest token's logits and weights. */
static void check_cache_equals_recompute(int hidden, int heads, int kv_heads,
                                         double theta, int tied, uint64_t seed)
{
    enum { PROMPT = 3, GENERATED = 12, T = PROMPT + GENERATED, V = 11 };
    const attn_decoder_config c = config_of(hidden, heads, kv_heads, theta,
                                            tied);
    model m;
    model_make(&m, &c, seed);
    int tokens[T] = {2, 7, 1};
    const size_t layer_rows = (size_t)(2 * heads);
    double step_logits[PROMPT * V], full_logits[T * V];
    double *step_weights = malloc(layer_rows * PROMPT * T * sizeof(double));
    double *full_weights = malloc(layer_rows * T * T * sizeof(double));
    assert_non_null(step_weights);
    assert_non_null(full_weights);
    session cached, full;
    session_open(&cached, &c, T, PROMPT);

    attn_decoder_outputs out = {step_logits, step_weights, NULL};
    assert_int_equal(attn_decoder_forward(&out, &cached.cache, tokens, PROMPT,
                                          &m.params, &c, cached.work),
                     ATTN_OK);
    for (int n = PROMPT; n < T; n++) {
        const int step_rows = n == PROMPT ? PROMPT : 1;
        const int keys = cached.cache.length;
        tokens[n] = greedy(step_logits + (step_rows - 1) * V, V);
        session_open(&full, &c, n, n);
        const attn_decoder_outputs all = {full_logits, full_weights, NULL};
        assert_int_equal(attn_decoder_forward(&all, &full.cache, tokens, n,
                                              &m.params, &c, full.work),
                         ATTN_OK);
        /* The rows the cached steps computed, against the full run's. */
        assert_memory_equal(step_logits, full_logits + (n - step_rows) * V,
                            (size_t)(step_rows * V) * sizeof(double));
        for (size_t lh = 0; lh < layer_rows; lh++)
            for (int r = 0; r < step_rows; r++)
                assert_memory_equal(
                    step_weights +
                        (lh * (size_t)step_rows + (size_t)r) * (size_t)keys,
                    full_weights +
                        (lh * (size_t)n + (size_t)(n - step_rows + r)) *
                            (size_t)n,
                    (size_t)keys * sizeof(double));
        /* The cache holds the full run's keys and values, bit for bit. */
        const int kv = hidden / heads * kv_heads;
        for (int l = 0; l < 2; l++) {
            assert_memory_equal(cached.cache.keys + (size_t)(l * T * kv),
                                full.cache.keys + (size_t)(l * n * kv),
                                (size_t)(n * kv) * sizeof(double));
            assert_memory_equal(cached.cache.values + (size_t)(l * T * kv),
                                full.cache.values + (size_t)(l * n * kv),
                                (size_t)(n * kv) * sizeof(double));
        }
        session_close(&full);
        out.weights = step_weights;
        assert_int_equal(attn_decoder_forward(&out, &cached.cache, tokens + n,
                                              1, &m.params, &c, cached.work),
                         ATTN_OK);
        assert_int_equal(cached.cache.length, n + 1);
    }
    session_close(&cached);
    free(step_weights);
    free(full_weights);
    model_free(&m);
}

static void
test_decoding_with_the_cache_equals_recomputing_bit_for_bit(void **state)
{
    (void)state;
    check_cache_equals_recompute(32, 4, 2, 10000.0, 1, 31);
    check_cache_equals_recompute(8, 4, 1, 500.0, 0, 32);
    check_cache_equals_recompute(32, 4, 4, 500.0, 0, 33);
}

/* ---- Errors ---- */

static void test_decoder_config_check_names_each_mistake(void **state)
{
    (void)state;
    attn_decoder_config c = config_of(32, 4, 2, 10000.0, 1);
    assert_int_equal(attn_decoder_config_check(&c), ATTN_OK);
    c.num_attention_heads = 3;
    assert_int_equal(attn_decoder_config_check(&c), ATTN_ERR_HEADS);
    c = config_of(32, 4, 3, 10000.0, 1);
    assert_int_equal(attn_decoder_config_check(&c), ATTN_ERR_KV_HEADS);
    c = config_of(12, 4, 2, 10000.0, 1); /* head_dim 3 */
    assert_int_equal(attn_decoder_config_check(&c), ATTN_ERR_HEAD_DIM);
    c = config_of(32, 4, 2, -1.0, 1);
    assert_int_equal(attn_decoder_config_check(&c), ATTN_ERR_RANGE);
    c = config_of(32, 4, 2, 10000.0, 1);
    c.rms_norm_eps = NAN;
    assert_int_equal(attn_decoder_config_check(&c), ATTN_ERR_RANGE);
    c = config_of(32, 4, 2, 10000.0, 2);
    assert_int_equal(attn_decoder_config_check(&c), ATTN_ERR_OPTION);
    c = config_of(32, 4, 2, 10000.0, 1);
    c.max_position_embeddings = 0;
    assert_int_equal(attn_decoder_config_check(&c), ATTN_ERR_SIZE);
    c = config_of(32, 4, 2, 10000.0, 1);
    c.vocab_size = 1 << 30;
    c.hidden_size = 1 << 30;
    c.num_attention_heads = 1 << 28;
    c.num_key_value_heads = 1 << 28;
    assert_int_equal(attn_decoder_config_check(&c),
                     sizeof(size_t) > 4 ? ATTN_OK : ATTN_ERR_SIZE_OVERFLOW);
    assert_int_equal(attn_decoder_config_check(NULL), ATTN_ERR_NULL);
    c.hidden_size = 7;
    assert_int_equal(attn_kv_cache_size(&c, 4), 0);
    assert_int_equal(attn_decoder_work_size(&c, 1, 4), 0);
}

static void test_cache_and_work_sizes_count_every_array(void **state)
{
    (void)state;
    const attn_decoder_config c = config_of(32, 4, 2, 10000.0, 1);
    /* 2 layers × 10 positions × 2 kv heads × head_dim 8. */
    assert_int_equal(attn_kv_cache_size(&c, 10), 2 * 10 * 2 * 8);
    /* Five [n, hidden] arrays, the MLP's two [n, intermediate] and a row
     * of weights. */
    assert_int_equal(attn_decoder_work_size(&c, 3, 10),
                     5 * 3 * 32 + 2 * 3 * 12 + 10);
    assert_int_equal(attn_kv_cache_size(&c, 0), 0);
    assert_int_equal(attn_decoder_work_size(&c, 0, 10), 0);
}

static void
test_decoder_refuses_bad_tokens_a_full_cache_and_late_positions(void **state)
{
    (void)state;
    attn_decoder_config c = config_of(8, 4, 2, 500.0, 0);
    model m;
    model_make(&m, &c, 41);
    session s;
    session_open(&s, &c, 4, 4);
    double logits[4 * 11];
    const attn_decoder_outputs out = {logits, NULL, NULL};
    const int tokens[4] = {1, 2, 3, 11};
    const int negative = -1;
    assert_int_equal(
        attn_decoder_forward(&out, &s.cache, tokens, 4, &m.params, &c, s.work),
        ATTN_ERR_TOKEN);
    assert_int_equal(attn_decoder_forward(&out, &s.cache, &negative, 1,
                                          &m.params, &c, s.work),
                     ATTN_ERR_TOKEN);
    assert_int_equal(s.cache.length, 0);
    assert_int_equal(
        attn_decoder_forward(&out, &s.cache, tokens, 3, &m.params, &c, s.work),
        ATTN_OK);
    assert_int_equal(
        attn_decoder_forward(&out, &s.cache, tokens, 2, &m.params, &c, s.work),
        ATTN_ERR_CACHE_FULL);
    assert_int_equal(s.cache.length, 3);
    /* Positions 3 and on are past max_position_embeddings 3. */
    c.max_position_embeddings = 3;
    assert_int_equal(
        attn_decoder_forward(&out, &s.cache, tokens, 1, &m.params, &c, s.work),
        ATTN_ERR_POSITION);
    c.max_position_embeddings = 24;
    s.cache.length = 5;
    assert_int_equal(
        attn_decoder_forward(&out, &s.cache, tokens, 1, &m.params, &c, s.work),
        ATTN_ERR_RANGE);
    s.cache.length = 0;
    assert_int_equal(
        attn_decoder_forward(&out, &s.cache, tokens, 0, &m.params, &c, s.work),
        ATTN_ERR_SIZE);
    assert_int_equal(
        attn_decoder_forward(&out, &s.cache, tokens, 1, &m.params, &c, NULL),
        ATTN_ERR_NULL);
    assert_int_equal(s.cache.length, 0);
    session_close(&s);
    model_free(&m);
}

static void test_decoder_refuses_missing_and_non_finite_weights(void **state)
{
    (void)state;
    const attn_decoder_config c = config_of(8, 4, 2, 500.0, 0);
    model m;
    model_make(&m, &c, 42);
    session s;
    session_open(&s, &c, 2, 2);
    const attn_decoder_outputs out = {NULL, NULL, NULL};
    const int tokens[2] = {1, 2};
    m.params.lm_head = NULL; /* untied: the lm_head is needed */
    assert_int_equal(
        attn_decoder_forward(&out, &s.cache, tokens, 2, &m.params, &c, s.work),
        ATTN_ERR_NULL);
    m.params.lm_head = m.reference.lm_head;
    const double *saved = m.layers[1].up_proj;
    m.layers[1].up_proj = NULL;
    assert_int_equal(
        attn_decoder_forward(&out, &s.cache, tokens, 2, &m.params, &c, s.work),
        ATTN_ERR_NULL);
    m.layers[1].up_proj = saved;
    m.reference.layers[1].post_attention_layernorm[3] = NAN;
    assert_int_equal(
        attn_decoder_forward(&out, &s.cache, tokens, 2, &m.params, &c, s.work),
        ATTN_ERR_NOT_FINITE);
    m.reference.layers[1].post_attention_layernorm[3] = 1.0;
    m.reference.lm_head[5] = INFINITY;
    assert_int_equal(
        attn_decoder_forward(&out, &s.cache, tokens, 2, &m.params, &c, s.work),
        ATTN_ERR_NOT_FINITE);
    assert_int_equal(s.cache.length, 0);
    session_close(&s);
    model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_decoder_matches_the_reference_for_grouped_and_multi_query_heads),
        cmocka_unit_test(
            test_decoder_hidden_output_is_the_final_norm_that_gives_the_logits),
        cmocka_unit_test(
            test_decoding_with_the_cache_equals_recomputing_bit_for_bit),
        cmocka_unit_test(test_decoder_config_check_names_each_mistake),
        cmocka_unit_test(test_cache_and_work_sizes_count_every_array),
        cmocka_unit_test(
            test_decoder_refuses_bad_tokens_a_full_cache_and_late_positions),
        cmocka_unit_test(test_decoder_refuses_missing_and_non_finite_weights),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
