/* The model object: a checkpoint written here as safetensors (F32 and F16)
 * loaded from bytes and from a folder, run against the float64 reference
 * written as modeling_llama.py (support/llama_reference.c), generation
 * greedy and sampled with and without the key/value cache, its errors,
 * its byte limit and every allocation failure. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "allclose.h"
#include "attention.h"
#include "failing_allocator.h"
#include "llama_reference.h"
#include "test_rng.h"

enum { MAX_TENSORS = 2 + 9 * REFERENCE_MAX_LAYERS + 2, FILE_CAP = 1 << 20 };

/* A checkpoint: the reference's arrays (each value a float, or a half
 * when written as F16) and its two files. */
typedef struct checkpoint {
    reference_model reference;
    const char *names[MAX_TENSORS];
    double *values[MAX_TENSORS];
    int rows[MAX_TENSORS], cols[MAX_TENSORS];
    int count;
    char config[1024];
    unsigned char *file;
    size_t size;
} checkpoint;

static char name_store[MAX_TENSORS][64];

/* Rounds to the nearest half (binary16, normal range): 11 bits. */
static double to_half(double x)
{
    int e;
    frexp(x, &e);
    return ldexp(nearbyint(ldexp(x, 11 - e)), e - 11);
}

static double *tensor(checkpoint *c, test_rng *rng, const char *name, int rows,
                      int cols, double lo, double hi, int half)
{
    const int n = rows * cols;
    double *x = malloc((size_t)n * sizeof *x);
    assert_non_null(x);
    for (int i = 0; i < n; i++) {
        const double v = test_rng_uniform(rng, lo, hi);
        x[i] = half ? to_half(v) : (double)(float)v;
    }
    snprintf(name_store[c->count], sizeof name_store[0], "%s", name);
    c->names[c->count] = name_store[c->count];
    c->values[c->count] = x;
    c->rows[c->count] = rows;
    c->cols[c->count] = cols;
    c->count++;
    return x;
}

static void put_f16(unsigned char *at, double v)
{
    /* v is a normal half: sign, 5 exponent bits, 10 mantissa bits. */
    unsigned bits = v < 0 ? 0x8000u : 0u;
    if (v != 0) {
        int e;
        const double m = frexp(fabs(v), &e); /* 0.5 <= m < 1 */
        bits |= (unsigned)(e - 1 + 15) << 10;
        bits |= (unsigned)(ldexp(m, 11) - 1024.0);
    }
    at[0] = (unsigned char)(bits & 0xff);
    at[1] = (unsigned char)(bits >> 8);
}

/* The safetensors file of every tensor: a JSON header, then the data. */
static void write_file(checkpoint *c, int half)
{
    const size_t width = half ? 2 : 4;
    char *header = malloc(FILE_CAP);
    assert_non_null(header);
    size_t offset = 0;
    int used = snprintf(header, FILE_CAP, "{");
    for (int t = 0; t < c->count; t++) {
        const size_t bytes = (size_t)c->rows[t] * (size_t)c->cols[t] * width;
        char shape[40];
        if (c->cols[t] == 1)
            snprintf(shape, sizeof shape, "[%d]", c->rows[t]);
        else
            snprintf(shape, sizeof shape, "[%d, %d]", c->rows[t], c->cols[t]);
        used += snprintf(header + used, FILE_CAP - (size_t)used,
                         "%s\"%s\": {\"dtype\": \"%s\", \"shape\": %s, "
                         "\"data_offsets\": [%zu, %zu]}",
                         t ? ", " : "", c->names[t], half ? "F16" : "F32",
                         shape, offset, offset + bytes);
        offset += bytes;
    }
    used += snprintf(header + used, FILE_CAP - (size_t)used, "}");
    c->size = 8 + (size_t)used + offset;
    c->file = malloc(c->size);
    assert_non_null(c->file);
    for (int i = 0; i < 8; i++)
        c->file[i] = (unsigned char)((uint64_t)used >> (8 * i));
    memcpy(c->file + 8, header, (size_t)used);
    unsigned char *at = c->file + 8 + used;
    for (int t = 0; t < c->count; t++)
        for (int i = 0; i < c->rows[t] * c->cols[t]; i++, at += width) {
            if (half) {
                put_f16(at, c->values[t][i]);
            } else {
                const float f = (float)c->values[t][i];
                memcpy(at, &f, 4); /* little-endian machines only */
            }
        }
    free(header);
}

static void checkpoint_make(checkpoint *c, const attn_decoder_config *config,
                            uint64_t seed, int half)
{
    memset(c, 0, sizeof *c);
    test_rng rng;
    test_rng_seed(&rng, seed);
    reference_model *r = &c->reference;
    r->config = *config;
    const int h = config->hidden_size, ff = config->intermediate_size;
    const int kv = h / config->num_attention_heads *
                   config->num_key_value_heads;
    const double s = 1.0 / sqrt((double)h);
    r->embed_tokens = tensor(c, &rng, "model.embed_tokens.weight",
                             config->vocab_size, h, -1.0, 1.0, half);
    for (int l = 0; l < config->num_hidden_layers; l++) {
        reference_layer *L = &r->layers[l];
        char name[64];
#define LAYER(field, rows, cols, lo, hi)                                 \
    (snprintf(name, sizeof name, "model.layers.%d.%s.weight", l, field), \
     tensor(c, &rng, name, rows, cols, lo, hi, half))
        L->input_layernorm = LAYER("input_layernorm", h, 1, 0.5, 1.5);
        L->q_proj = LAYER("self_attn.q_proj", h, h, -3 * s, 3 * s);
        L->k_proj = LAYER("self_attn.k_proj", kv, h, -3 * s, 3 * s);
        L->v_proj = LAYER("self_attn.v_proj", kv, h, -s, s);
        L->o_proj = LAYER("self_attn.o_proj", h, h, -s, s);
        L->post_attention_layernorm = LAYER("post_attention_layernorm", h, 1,
                                            0.5, 1.5);
        L->gate_proj = LAYER("mlp.gate_proj", ff, h, -s, s);
        L->up_proj = LAYER("mlp.up_proj", ff, h, -s, s);
        L->down_proj = LAYER("mlp.down_proj", h, ff, -s, s);
#undef LAYER
    }
    r->norm = tensor(c, &rng, "model.norm.weight", h, 1, 0.5, 1.5, half);
    if (!config->tie_word_embeddings)
        r->lm_head = tensor(c, &rng, "lm_head.weight", config->vocab_size, h,
                            -1.0, 1.0, half);
    snprintf(c->config, sizeof c->config,
             "{\"vocab_size\": %d, \"hidden_size\": %d, \"intermediate_size\": "
             "%d, \"num_hidden_layers\": %d, \"num_attention_heads\": %d, "
             "\"num_key_value_heads\": %d, \"max_position_embeddings\": %d, "
             "\"rope_theta\": %.17g, \"rms_norm_eps\": %.17g, "
             "\"tie_word_embeddings\": %s, \"hidden_act\": \"silu\"}",
             config->vocab_size, h, ff, config->num_hidden_layers,
             config->num_attention_heads, config->num_key_value_heads,
             config->max_position_embeddings, config->rope_theta,
             config->rms_norm_eps,
             config->tie_word_embeddings ? "true" : "false");
    write_file(c, half);
}

static void checkpoint_free(checkpoint *c)
{
    for (int t = 0; t < c->count; t++) free(c->values[t]);
    free(c->file);
}

static attn_decoder_config config_of(int heads, int kv_heads, double theta,
                                     int tied)
{
    const attn_decoder_config c = {.vocab_size = 11,
                                   .hidden_size = 8,
                                   .intermediate_size = 12,
                                   .num_hidden_layers = 2,
                                   .num_attention_heads = heads,
                                   .num_key_value_heads = kv_heads,
                                   .max_position_embeddings = 16,
                                   .rope_theta = theta,
                                   .rms_norm_eps = 1e-5,
                                   .tie_word_embeddings = tied};
    return c;
}

static int load(attn_model *model, const checkpoint *c)
{
    return attn_model_load(model, c->config, strlen(c->config), c->file,
                           c->size);
}

static attn_model *loaded(const checkpoint *c)
{
    attn_model *model;
    assert_int_equal(attn_model_create(&model, NULL), ATTN_OK);
    if (load(model, c) != ATTN_OK) fail_msg("%s", attn_model_error(model));
    return model;
}

enum { N = 7 };
static const int TEXT[N] = {3, 1, 4, 1, 5, 9, 2};

/* The model's weights and logits on TEXT against the reference's. */
static void expect_reference(attn_model *model, const checkpoint *c)
{
    const attn_decoder_config *config = &c->reference.config;
    const size_t cells = (size_t)config->num_hidden_layers *
                         (size_t)config->num_attention_heads * N * N;
    double weights[4 * 4 * N * N], logits[N * 11];
    double want_weights[4 * 4 * N * N], want_logits[N * 11];
    assert_int_equal(attn_model_run(model, weights, logits, TEXT, N), ATTN_OK);
    reference_decoder(want_logits, want_weights, &c->reference, TEXT, N);
    assert_allclose(weights, want_weights, cells, 1e-12, 1e-14);
    assert_allclose(logits, want_logits, (size_t)N * 11, 1e-12, 1e-12);
}

static void
test_a_checkpoint_loaded_from_bytes_runs_as_modeling_llama_computes_it(
    void **state)
{
    (void)state;
    const attn_decoder_config configs[] = {
        config_of(4, 2, 10000.0, 1), /* grouped, tied */
        config_of(2, 2, 500.0, 0),   /* multi-head, untied */
        config_of(4, 1, 77.0, 0),    /* multi-query */
    };
    for (int k = 0; k < 3; k++)
        for (int half = 0; half <= 1; half++) {
            checkpoint c;
            checkpoint_make(&c, &configs[k], 40 + (uint64_t)k, half);
            attn_model *model = loaded(&c);
            const attn_decoder_config *got = attn_model_config(model);
            assert_non_null(got);
            assert_int_equal(got->num_key_value_heads,
                             configs[k].num_key_value_heads);
            expect_reference(model, &c);
            attn_model_destroy(model);
            checkpoint_free(&c);
        }
}

static void test_a_folder_loads_the_same_model(void **state)
{
    (void)state;
    checkpoint c;
    const attn_decoder_config config = config_of(4, 2, 10000.0, 0);
    checkpoint_make(&c, &config, 7, 0);
    char folder[] = "/tmp/attn-model-XXXXXX", path[64];
    assert_non_null(mkdtemp(folder));
    snprintf(path, sizeof path, "%s/config.json", folder);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(c.config, f);
    fclose(f);
    attn_model *model;
    assert_int_equal(attn_model_create(&model, NULL), ATTN_OK);
    assert_int_equal(attn_model_load_folder(model, folder), ATTN_ERR_INPUT);
    char says[200];
    snprintf(says, sizeof says,
             "cannot read %s/model.safetensors: No such file or directory",
             folder);
    assert_string_equal(attn_model_error(model), says);
    snprintf(path, sizeof path, "%s/model.safetensors", folder);
    f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(c.file, 1, c.size, f);
    fclose(f);
    assert_int_equal(attn_model_load_folder(model, folder), ATTN_OK);
    expect_reference(model, &c);
    attn_model_destroy(model);
    unlink(path);
    snprintf(path, sizeof path, "%s/config.json", folder);
    unlink(path);
    rmdir(folder);
    assert_int_equal(attn_model_create(&model, NULL), ATTN_OK);
    assert_int_equal(attn_model_load_folder(model, folder), ATTN_ERR_INPUT);
    snprintf(says, sizeof says,
             "cannot read %s/config.json: No such file or directory", folder);
    assert_string_equal(attn_model_error(model), says);
    attn_model_destroy(model);
    checkpoint_free(&c);
}

/* splitmix64, written again here. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* The documented rule on the reference's logits: the highest logit (the
 * first of ties) at 0, else the first id whose running sum of e^((z −
 * max) / T) exceeds u times their total. */
static void reference_generate(int *ids, const checkpoint *c, int n, int count,
                               double temperature, uint64_t seed)
{
    const int vocab = c->reference.config.vocab_size;
    double logits[16 * 11], weights[2 * 4 * 16 * 16];
    uint64_t state = seed;
    for (int t = 0; t < count; t++) {
        reference_decoder(logits, weights, &c->reference, ids, n + t);
        const double *z = logits + (size_t)(n + t - 1) * (size_t)vocab;
        int best = 0;
        for (int j = 1; j < vocab; j++)
            if (z[j] > z[best]) best = j;
        if (temperature > 0) {
            const double u = (double)(splitmix64(&state) >> 11) /
                             9007199254740992.0;
            double p[11], total = 0, running = 0;
            for (int j = 0; j < vocab; j++)
                total += p[j] = exp((z[j] - z[best]) / temperature);
            for (int j = 0; j < vocab; j++)
                if (u * total < (running += p[j])) {
                    best = j;
                    break;
                }
        }
        ids[n + t] = best;
    }
}

static void
test_generating_with_and_without_the_cache_gives_the_ids_of_the_rule(
    void **state)
{
    (void)state;
    checkpoint c;
    const attn_decoder_config config = config_of(4, 2, 10000.0, 0);
    checkpoint_make(&c, &config, 11, 0);
    attn_model *model = loaded(&c);
    const double temperatures[] = {0.0, 0.7, 1.0, 3.0};
    for (int k = 0; k < 4; k++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            int cached[16], recomputed[16], want[16];
            memcpy(want, TEXT, 3 * sizeof(int));
            reference_generate(want, &c, 3, 12, temperatures[k], seed);
            assert_int_equal(attn_model_generate(model, cached, TEXT, 3, 12,
                                                 temperatures[k], seed, 1),
                             ATTN_OK);
            assert_int_equal(attn_model_generate(model, recomputed, TEXT, 3, 12,
                                                 temperatures[k], seed, 0),
                             ATTN_OK);
            assert_memory_equal(cached, want, sizeof want[0] * 15);
            assert_memory_equal(recomputed, want, sizeof want[0] * 15);
        }
    /* Sampling draws something other than the greedy choice. */
    int greedy[16], sampled[16];
    attn_model_generate(model, greedy, TEXT, 3, 12, 0.0, 1, 1);
    attn_model_generate(model, sampled, TEXT, 3, 12, 3.0, 1, 1);
    assert_true(memcmp(greedy, sampled, sizeof greedy[0] * 15) != 0);
    /* count 0 gives the prompt; the whole positions are usable. */
    int ids[16];
    assert_int_equal(attn_model_generate(model, ids, TEXT, 3, 0, 0.0, 0, 1),
                     ATTN_OK);
    assert_memory_equal(ids, TEXT, 3 * sizeof(int));
    assert_int_equal(attn_model_generate(model, ids, TEXT, 3, 13, 0.0, 0, 1),
                     ATTN_OK);
    attn_model_destroy(model);
    checkpoint_free(&c);
}

static void test_greedy_ties_go_to_the_lowest_id(void **state)
{
    (void)state;
    checkpoint c;
    const attn_decoder_config config = config_of(2, 2, 10000.0, 0);
    checkpoint_make(&c, &config, 5, 0);
    /* An lm_head of zeros: every logit is 0, a tie of all 11 ids. */
    double *lm_head = c.reference.lm_head;
    memset(lm_head, 0, 11 * 8 * sizeof(double));
    free(c.file);
    write_file(&c, 0);
    attn_model *model = loaded(&c);
    int ids[6];
    const int prompt[2] = {7, 8};
    assert_int_equal(attn_model_generate(model, ids, prompt, 2, 4, 0.0, 0, 1),
                     ATTN_OK);
    const int want[6] = {7, 8, 0, 0, 0, 0};
    assert_memory_equal(ids, want, sizeof want);
    attn_model_destroy(model);
    checkpoint_free(&c);
}

static void expect_error(attn_model *model, int status, int want,
                         const char *says)
{
    assert_int_equal(status, want);
    assert_string_equal(attn_model_error(model), says);
}

static void
test_a_heads_queries_keys_and_values_give_its_weights_in_the_run(void **state)
{
    (void)state;
    checkpoint c;
    const attn_decoder_config config = {.vocab_size = 11,
                                        .hidden_size = 8,
                                        .intermediate_size = 12,
                                        .num_hidden_layers = 3,
                                        .num_attention_heads = 4,
                                        .num_key_value_heads = 2,
                                        .max_position_embeddings = 16,
                                        .rope_theta = 100.0,
                                        .rms_norm_eps = 1e-5,
                                        .tie_word_embeddings = 0};
    checkpoint_make(&c, &config, 21, 0);
    attn_model *model = loaded(&c);
    double weights[3 * 4 * N * N];
    assert_int_equal(attn_model_run(model, weights, NULL, TEXT, N), ATTN_OK);
    for (int layer = 0; layer < 3; layer++)
        for (int head = 0; head < 4; head++) {
            double q[N * 2], k[N * 2], v[N * 2], work[N], got[N * N];
            assert_int_equal(
                attn_model_head(model, q, k, v, TEXT, N, layer, head), ATTN_OK);
            assert_int_equal(attn_gqa(got, NULL, q, k, v, N, N, 1, 1, 2, work),
                             ATTN_OK);
            assert_allclose(got, weights + (layer * 4 + head) * N * N, N * N,
                            1e-12, 1e-14);
        }
    double q[N * 2], k[N * 2], v[N * 2];
    expect_error(model, attn_model_head(model, q, k, v, TEXT, N, 3, 0),
                 ATTN_ERR_RANGE,
                 "layer 3 is not a layer of this model, whose layers are 0 to "
                 "2");
    expect_error(model, attn_model_head(model, q, k, v, TEXT, N, 0, -1),
                 ATTN_ERR_RANGE,
                 "head -1 is not a head of this model, whose heads are 0 to "
                 "3");
    attn_model_destroy(model);
    checkpoint_free(&c);
}

static void test_a_token_label_shows_the_byte_a_reader_would_see(void **state)
{
    (void)state;
    const struct {
        int id, markdown;
        const char *want;
    } cases[] = {
        {'a', 0, "a"},     {' ', 0, "\xe2\x90\xa3"},
        {'\n', 0, "\\n"},  {'\t', 1, "\\t"},
        {'|', 0, "|"},     {'|', 1, "\\|"},
        {'_', 1, "\\_"},   {0, 1, "\\x00"},
        {200, 0, "\\xc8"}, {127, 0, "\\x7f"},
        {300, 0, "<300>"}, {'|' + 256, 1, "<380>"},
        {-1, 0, "<-1>"},   {INT_MIN, 1, "<-2147483648>"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char label[ATTN_TOKEN_LABEL_CAP];
        attn_token_label(label, cases[i].id, cases[i].markdown);
        assert_string_equal(label, cases[i].want);
    }
}

/* The weights a head's problem computes are the run's, its tokens
 * labelled and its first step saying where q, k and v came from. */
static void
test_a_heads_walkthrough_problem_computes_its_weights_in_the_run(void **state)
{
    (void)state;
    checkpoint c;
    const attn_decoder_config config = config_of(4, 2, 10000.0, 0);
    checkpoint_make(&c, &config, 5, 0);
    attn_model *model = loaded(&c);
    static const int text[4] = {3, 10, 1, 5}; /* within vocab_size 11 */
    double weights[2 * 4 * 4 * 4];
    assert_int_equal(attn_model_run(model, weights, NULL, text, 4), ATTN_OK);
    attn_problem *problem;
    assert_int_equal(attn_model_head_problem(model, &problem, text, 4, 1, 3),
                     ATTN_OK);
    int rank, dims[3];
    const double *got;
    assert_int_equal(attn_problem_result(problem, "weights", &rank, dims, &got),
                     ATTN_OK);
    assert_int_equal(rank, 2);
    assert_allclose(got, weights + (1 * 4 + 3) * 16, 16, 1e-13, 1e-15);
    size_t length;
    assert_int_equal(
        attn_problem_format(problem, ATTN_FORMAT_TEXT, NULL, 0, &length),
        ATTN_OK);
    char *text_out = malloc(length + 1);
    assert_non_null(text_out);
    assert_int_equal(attn_problem_format(problem, ATTN_FORMAT_TEXT, text_out,
                                         length + 1, &length),
                     ATTN_OK);
    assert_non_null(strstr(text_out, "Layer 1, head 3 of the model"));
    assert_non_null(strstr(text_out, "turned by the rotary embedding"));
    assert_null(strstr(text_out, "given directly"));
    assert_non_null(strstr(text_out, "\\x03"));
    assert_non_null(strstr(text_out, "\\x05"));
    free(text_out);
    attn_problem_destroy(problem);
    /* A head it does not have: no problem, and the model says why. */
    problem = (attn_problem *)model;
    assert_int_equal(attn_model_head_problem(model, &problem, text, 4, 0, 4),
                     ATTN_ERR_RANGE);
    assert_null(problem);
    assert_string_equal(attn_model_error(model),
                        "head 4 is not a head of this model, whose heads are "
                        "0 to 3");
    attn_model_destroy(model);
    checkpoint_free(&c);
}

static void test_bad_calls_get_a_status_and_a_message(void **state)
{
    (void)state;
    checkpoint c;
    const attn_decoder_config config = config_of(4, 2, 10000.0, 1);
    checkpoint_make(&c, &config, 3, 0);
    attn_model *model;
    assert_int_equal(attn_model_create(&model, NULL), ATTN_OK);
    assert_null(attn_model_config(model));
    double logits[16 * 11];
    int ids[17];
    expect_error(model, attn_model_run(model, NULL, logits, TEXT, 3),
                 ATTN_ERR_STATE, "no model is loaded");
    assert_int_equal(load(model, &c), ATTN_OK);
    expect_error(model, load(model, &c), ATTN_ERR_STATE,
                 "the model is loaded already; create another model to load "
                 "another checkpoint");
    const int bad[3] = {1, 11, 2};
    expect_error(model, attn_model_run(model, NULL, logits, bad, 3),
                 ATTN_ERR_TOKEN,
                 "token 11 (at 1) is not an id of this model, whose ids are 0 "
                 "to vocab_size - 1 = 10");
    int long_text[17] = {0};
    expect_error(model, attn_model_run(model, NULL, logits, long_text, 17),
                 ATTN_ERR_POSITION,
                 "the model reads at most max_position_embeddings = 16 "
                 "tokens, got 17");
    expect_error(model, attn_model_run(model, NULL, logits, TEXT, 0),
                 ATTN_ERR_SIZE, "the model needs at least one token, got 0");
    expect_error(model, attn_model_generate(model, ids, TEXT, 3, 14, 0.0, 0, 1),
                 ATTN_ERR_POSITION,
                 "the model reads at most max_position_embeddings = 16 "
                 "tokens; the prompt's 3 and 14 generated would be more");
    expect_error(model, attn_model_generate(model, ids, TEXT, 3, 2, -1.0, 0, 1),
                 ATTN_ERR_RANGE,
                 "temperature must be a number from 0 (0: the most likely "
                 "token each time), got -1");
    expect_error(model, attn_model_generate(model, ids, TEXT, 3, 2, NAN, 0, 1),
                 ATTN_ERR_RANGE,
                 "temperature must be a number from 0 (0: the most likely "
                 "token each time), got nan");
    assert_int_equal(attn_model_run(model, NULL, logits, TEXT, 3), ATTN_OK);
    assert_string_equal(attn_model_error(model), "");
    attn_model_destroy(model);
    checkpoint_free(&c);
}

/* The checkpoint's config with one "name": value replaced. */
static void expect_load_error(const checkpoint *c, const char *config,
                              const unsigned char *file, size_t size, int want,
                              const char *says)
{
    (void)c;
    attn_model *model;
    assert_int_equal(attn_model_create(&model, NULL), ATTN_OK);
    expect_error(model,
                 attn_model_load(model, config, strlen(config), file, size),
                 want, says);
    assert_null(attn_model_config(model));
    attn_model_destroy(model);
}

static void
test_a_checkpoint_that_disagrees_with_its_config_names_the_tensor(void **state)
{
    (void)state;
    checkpoint c;
    const attn_decoder_config config = config_of(4, 2, 10000.0, 1);
    checkpoint_make(&c, &config, 3, 0);
    /* Untied: lm_head.weight is wanted and missing. */
    char untied[1024];
    snprintf(untied, sizeof untied, "%s", c.config);
    memcpy(strstr(untied, "true"), "false", 5);
    strcpy(strstr(untied, "false") + 5, ", \"hidden_act\": \"silu\"}");
    expect_load_error(&c, untied, c.file, c.size, ATTN_ERR_FORMAT,
                      "model.safetensors: no tensor is named "
                      "\"lm_head.weight\"");
    /* Two key/value heads in the file, four in the config. */
    char four[1024];
    snprintf(four, sizeof four, "%s", c.config);
    memcpy(strstr(four, "\"num_key_value_heads\": 2"),
           "\"num_key_value_heads\": 4", 24);
    expect_load_error(&c, four, c.file, c.size, ATTN_ERR_FORMAT,
                      "model.safetensors: model.layers.0.self_attn.k_proj."
                      "weight has shape [4, 8], but config.json gives it "
                      "[8, 8]");
    expect_load_error(&c, "{\"vocab_size\": 3}", c.file, c.size,
                      ATTN_ERR_FORMAT, "config.json: hidden_size is missing");
    expect_load_error(&c, c.config, c.file, c.size - 1, ATTN_ERR_FORMAT,
                      "model.safetensors: tensor \"model.norm.weight\": "
                      "data_offsets [4320, 4352] are not within the 4351 "
                      "bytes of data");
    /* A NaN weight. */
    const float nan = NAN;
    memcpy(c.file + c.size - 4, &nan, 4);
    expect_load_error(&c, c.config, c.file, c.size, ATTN_ERR_NOT_FINITE,
                      "model.safetensors: model.norm.weight holds NaN or an "
                      "infinity");
    checkpoint_free(&c);
}

/* An allocator that adds up the bytes it hands out. */
typedef struct sizing {
    size_t bytes, most;
    long calls;
} sizing;

static void *sizing_allocate(void *context, size_t bytes)
{
    sizing *s = context;
    s->bytes += bytes;
    if (s->bytes > s->most) s->most = s->bytes;
    s->calls++;
    size_t *block = malloc(bytes + sizeof(size_t) * 2);
    if (block == NULL) return NULL;
    block[0] = bytes;
    return block + 2;
}

static void sizing_release(void *context, void *block)
{
    sizing *s = context;
    size_t *at = (size_t *)block - 2;
    s->bytes -= at[0];
    free(at);
}

/* Loads and runs TEXT with the given limit; the status, the most bytes
 * held at once and the message. */
static int run_with_limit(const checkpoint *c, size_t limit, sizing *s,
                          char *message)
{
    *s = (sizing){0, 0, 0};
    const attn_allocator allocator = {sizing_allocate, sizing_release, s};
    attn_model *model;
    assert_int_equal(attn_model_create(&model, &allocator), ATTN_OK);
    assert_int_equal(attn_model_set_max_bytes(model, limit), ATTN_OK);
    double logits[N * 11];
    int status = load(model, c);
    if (status == ATTN_OK)
        status = attn_model_run(model, NULL, logits, TEXT, N);
    snprintf(message, 400, "%s", attn_model_error(model));
    attn_model_destroy(model);
    assert_int_equal(s->bytes, 0);
    return status;
}

static void
test_a_model_above_its_byte_limit_is_refused_before_it_allocates(void **state)
{
    (void)state;
    checkpoint c;
    const attn_decoder_config config = config_of(4, 2, 10000.0, 0);
    checkpoint_make(&c, &config, 3, 0);
    sizing s;
    char message[400];
    assert_int_equal(run_with_limit(&c, 0, &s, message), ATTN_OK);
    const size_t most = s.most;
    assert_int_equal(run_with_limit(&c, most, &s, message), ATTN_OK);
    assert_int_equal(run_with_limit(&c, most - 1, &s, message),
                     ATTN_ERR_TOO_LARGE);
    assert_true(s.most <= most - 1);
    /* The weights alone: refused at the load, only the object allocated. */
    assert_int_equal(run_with_limit(&c, 2000, &s, message), ATTN_ERR_TOO_LARGE);
    assert_int_equal(s.calls, 1);
    size_t needed;
    assert_int_equal(sscanf(message, "the model needs %zu bytes", &needed), 1);
    char want[400];
    snprintf(want, sizeof want,
             "the model needs %zu bytes for its weights as doubles, more than "
             "its limit of 2000 bytes; raise the limit (--max-bytes in attn "
             "model)",
             needed);
    assert_string_equal(message, want);
    checkpoint_free(&c);
}

static void
test_every_allocation_failure_is_reported_and_frees_everything(void **state)
{
    (void)state;
    checkpoint c;
    const attn_decoder_config config = config_of(4, 2, 10000.0, 0);
    checkpoint_make(&c, &config, 3, 0);
    for (long fail_at = 0;; fail_at++) {
        failing_allocator counts = {fail_at, 0, 0};
        const attn_allocator allocator = failing_allocator_use(&counts);
        attn_model *model = NULL;
        int status = attn_model_create(&model, &allocator);
        double logits[N * 11];
        int ids[N + 4];
        if (status == ATTN_OK) status = load(model, &c);
        if (status == ATTN_OK)
            status = attn_model_run(model, NULL, logits, TEXT, N);
        if (status == ATTN_OK)
            status = attn_model_generate(model, ids, TEXT, N, 4, 0.5, 9, 1);
        if (status == ATTN_OK)
            status = attn_model_generate(model, ids, TEXT, N, 4, 0.5, 9, 0);
        double q[N * 2], k[N * 2], v[N * 2];
        if (status == ATTN_OK)
            status = attn_model_head(model, q, k, v, TEXT, N, 1, 3);
        attn_problem *problem = NULL;
        if (status == ATTN_OK)
            status = attn_model_head_problem(model, &problem, TEXT, N, 1, 3);
        attn_problem_destroy(problem);
        attn_model_destroy(model);
        assert_int_equal(counts.live, 0);
        if (status == ATTN_OK) {
            assert_true(fail_at >= 5);
            break;
        }
        assert_int_equal(status, ATTN_ERR_NOMEM);
    }
    checkpoint_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_a_checkpoint_loaded_from_bytes_runs_as_modeling_llama_computes_it),
        cmocka_unit_test(test_a_folder_loads_the_same_model),
        cmocka_unit_test(
            test_generating_with_and_without_the_cache_gives_the_ids_of_the_rule),
        cmocka_unit_test(test_greedy_ties_go_to_the_lowest_id),
        cmocka_unit_test(
            test_a_heads_queries_keys_and_values_give_its_weights_in_the_run),
        cmocka_unit_test(test_a_token_label_shows_the_byte_a_reader_would_see),
        cmocka_unit_test(
            test_a_heads_walkthrough_problem_computes_its_weights_in_the_run),
        cmocka_unit_test(test_bad_calls_get_a_status_and_a_message),
        cmocka_unit_test(
            test_a_checkpoint_that_disagrees_with_its_config_names_the_tensor),
        cmocka_unit_test(
            test_a_model_above_its_byte_limit_is_refused_before_it_allocates),
        cmocka_unit_test(
            test_every_allocation_failure_is_reported_and_frees_everything),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
