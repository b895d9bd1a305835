/*
 * fuzz_model_load.c: libFuzzer target for attn_model_load, a model's
 * config.json and model.safetensors read from bytes a user may bring. The
 * input is a byte limit (64 KiB << (byte % 8): 64 KiB to 8 MiB), the
 * config's length (two bytes, little-endian, cut to what is left), the
 * config's bytes and then the safetensors file's, so that the seeds (whole
 * checkpoints written by tests/cli/tiny-model.mjs, up to 1.4 MB) load and
 * the fuzzer mutates from there.
 *
 * A model that loads runs three tokens, generates three more with and
 * without the key/value cache, and makes one head's walkthrough problem.
 *
 * Findings: a status outside attention.h's codes; a refusal without a
 * message; a loaded model without a config, or with one
 * attn_decoder_config_check refuses; generation whose ids differ with and
 * without the cache, or fall outside the vocabulary; attention weights
 * outside [0, 1], nonzero after their query, or whose rows do not sum to 1
 * where the logits are finite.
 */
#include "attention.h"
#include "fuzz_reader.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { TOKENS = 3, MORE = 3 };

static void check_refusal(const attn_model *model, int status)
{
    check_status(status);
    check(status == ATTN_OK || attn_model_error(model)[0] != '\0');
}

/* Every head's rows on n tokens: weights in [0, 1], 0 after the query,
 * summing to 1. */
static void check_weights(const double *weights, int heads, int n)
{
    for (int h = 0; h < heads; h++)
        for (int i = 0; i < n; i++) {
            const double *row = weights +
                                ((size_t)h * (size_t)n + (size_t)i) * (size_t)n;
            double sum = 0.0;
            for (int j = 0; j < n; j++) {
                check(row[j] >= 0.0 && row[j] <= 1.0);
                check(j <= i || row[j] == 0.0);
                sum += row[j];
            }
            check(fabs(sum - 1.0) < 1e-9);
        }
}

static void run_loaded(attn_model *model)
{
    const attn_decoder_config *c = attn_model_config(model);
    check(c != NULL && attn_decoder_config_check(c) == ATTN_OK);
    const int n = c->max_position_embeddings < TOKENS
                      ? c->max_position_embeddings
                      : TOKENS;
    int tokens[TOKENS];
    for (int i = 0; i < n; i++) tokens[i] = i % c->vocab_size;
    const size_t heads = (size_t)c->num_hidden_layers *
                         (size_t)c->num_attention_heads;
    double *weights = malloc(heads * TOKENS * TOKENS * sizeof *weights);
    double *logits = malloc((size_t)c->vocab_size * TOKENS * sizeof *logits);
    check(weights != NULL && logits != NULL);
    int status = attn_model_run(model, weights, logits, tokens, n);
    check_refusal(model, status);
    int finite = status == ATTN_OK;
    for (size_t i = 0; finite && i < (size_t)c->vocab_size * (size_t)n; i++)
        finite = isfinite(logits[i]);
    if (finite) check_weights(weights, (int)heads, n);
    free(weights);
    free(logits);

    const int more = n + MORE <= c->max_position_embeddings ? MORE : 0;
    int cached[TOKENS + MORE], recomputed[TOKENS + MORE];
    const int first = attn_model_generate(model, cached, tokens, n, more, 0.0,
                                          7, 1);
    check_refusal(model, first);
    const int second = attn_model_generate(model, recomputed, tokens, n, more,
                                           0.0, 7, 0);
    check_refusal(model, second);
    if (first == ATTN_OK && second == ATTN_OK)
        for (int i = 0; i < n + more; i++) {
            check(cached[i] == recomputed[i]);
            check(cached[i] >= 0 && cached[i] < c->vocab_size);
        }

    attn_problem *problem = NULL;
    status = attn_model_head_problem(model, &problem, tokens, n,
                                     c->num_hidden_layers - 1,
                                     c->num_attention_heads - 1);
    check_refusal(model, status);
    check((status == ATTN_OK) == (problem != NULL));
    attn_problem_destroy(problem);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size, 0};
    const size_t limit = (size_t)64 * 1024 << (take_byte(&r) % 8);
    size_t length = take_byte(&r);
    length |= (size_t)take_byte(&r) << 8;
    if (length > r.size - r.at) length = r.size - r.at;
    /* The config as its own block, so that ASan sees a read past it. */
    char *config = malloc(length > 0 ? length : 1);
    check(config != NULL);
    if (length > 0) memcpy(config, data + r.at, length);
    r.at += length;
    const size_t file_size = r.size - r.at;
    unsigned char *file = malloc(file_size > 0 ? file_size : 1);
    check(file != NULL);
    if (file_size > 0) memcpy(file, data + r.at, file_size);

    attn_model *model;
    check(attn_model_create(&model, NULL) == ATTN_OK);
    check(attn_model_set_max_bytes(model, limit) == ATTN_OK);
    const int status = attn_model_load(model, config, length, file, file_size);
    check_refusal(model, status);
    if (status == ATTN_OK)
        run_loaded(model);
    else
        check(attn_model_config(model) == NULL);
    attn_model_destroy(model);
    free(config);
    free(file);
    return 0;
}
