/* run.c: a loaded model run on tokens (every head's weights and the
 * logits) and generating after a prompt, greedy or sampled with a seed,
 * with the key/value cache or recomputing the whole text each time. */
#include "kernels/kernels.h"
#include "lm/lm.h"

#include <math.h>

/* A call's memory: the key/value cache, the decoder's work and the
 * logits of `rows` rows, in one block. */
typedef struct run_memory {
    double *block;
    attn_kv_cache cache;
    double *work, *logits;
} run_memory;

static int allocate_run(attn_model *m, run_memory *r, int rows, int capacity,
                        int with_logits)
{
    const attn_decoder_config *c = &m->config;
    const size_t cache = attn_kv_cache_size(c, capacity);
    const size_t work = attn_decoder_work_size(c, rows, capacity);
    size_t logits = 0, doubles, bytes;
    int status = ATTN_OK;
    r->block = NULL;
    if (cache == 0 || work == 0 ||
        (with_logits &&
         attn__count3(&logits, rows, c->vocab_size, 1) != ATTN_OK) ||
        attn__add_size(&doubles, cache, cache) != ATTN_OK ||
        attn__add_size(&doubles, doubles, work) != ATTN_OK ||
        attn__add_size(&doubles, doubles, logits) != ATTN_OK ||
        attn__mul_size(&bytes, doubles, sizeof(double)) != ATTN_OK)
        bytes = SIZE_MAX;
    r->block = attn__model_allocate(m, &status, bytes, 0,
                                    "its key/value cache and working memory");
    if (r->block == NULL) return status;

    r->cache.keys = r->block;
    r->cache.values = r->block + cache;
    r->cache.capacity = capacity;
    r->cache.length = 0;
    r->work = r->cache.values + cache;
    r->logits = with_logits ? r->work + work : NULL;
    return ATTN_OK;
}

int attn__model_check_tokens(attn_model *m, const int *tokens, int n, int more)
{
    if (!m->loaded)
        return attn__model_error(m, ATTN_ERR_STATE, "no model is loaded");
    if (tokens == NULL)
        return attn__model_error(m, ATTN_ERR_NULL, "no tokens given");
    if (n < 1)
        return attn__model_error(
            m, ATTN_ERR_SIZE, "the model needs at least one token, got %d", n);
    const int most = m->config.max_position_embeddings;
    if (more < 0 || n > most || more > most - n)
        return attn__model_error(
            m, ATTN_ERR_POSITION,
            more == 0 ? "the model reads at most max_position_embeddings = %d "
                        "tokens, got %d"
                      : "the model reads at most max_position_embeddings = %d "
                        "tokens; the prompt's %d and %d generated would be "
                        "more",
            most, n, more);
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= m->config.vocab_size)
            return attn__model_error(m, ATTN_ERR_TOKEN,
                                     "token %d (at %d) is not an id of this "
                                     "model, whose ids are 0 to vocab_size - "
                                     "1 = %d",
                                     tokens[i], i, m->config.vocab_size - 1);
    return ATTN_OK;
}

/* The decoder's status as a message. */
static int decoder_failed(attn_model *m, int status)
{
    return attn__model_error(m, status, "the decoder failed: %s",
                             attn_status_text(status));
}

int attn_model_run(attn_model *model, double *weights, double *logits,
                   const int *tokens, int n)
{
    if (model == NULL) return ATTN_ERR_NULL;
    int status = attn__model_check_tokens(model, tokens, n, 0);
    run_memory r;
    if (status == ATTN_OK) status = allocate_run(model, &r, n, n, 0);
    if (status != ATTN_OK) return status;
    const attn_decoder_outputs out = {logits, weights, NULL};
    status = attn_decoder_forward(&out, &r.cache, tokens, n, &model->params,
                                  &model->config, r.work);
    attn__model_release(model, r.block);
    if (status != ATTN_OK) return decoder_failed(model, status);
    model->error[0] = '\0';
    return ATTN_OK;
}

/* The next token from one row of logits: the highest (the lowest id of
 * ties) at temperature 0, else a draw from softmax(z / T). */
static int next_token(const double *z, int vocab, double temperature,
                      uint64_t *state)
{
    int best = 0;
    for (int j = 1; j < vocab; j++)
        if (z[j] > z[best]) best = j;
    if (temperature == 0.0) return best;
    const double u = (double)(attn__splitmix64(state) >> 11) * 0x1p-53;
    double total = 0.0;
    for (int j = 0; j < vocab; j++)
        total += exp((z[j] - z[best]) / temperature);
    const double target = u * total;
    double running = 0.0;
    int last = best;
    for (int j = 0; j < vocab; j++) {
        const double p = exp((z[j] - z[best]) / temperature);
        running += p;
        if (p > 0.0) last = j;
        if (target < running) return j;
    }
    return last; /* u · total rounded up past the running sum's end */
}

/* Generates into ids[n ...] from r's memory: the prompt once and each new
 * token alone (cache), or the whole text each time (no cache). */
static int decode(attn_model *m, run_memory *r, int *ids, int n, int count,
                  double temperature, uint64_t seed, int use_cache)
{
    const int vocab = m->config.vocab_size;
    uint64_t state = seed;
    for (int t = 0; t < count; t++) {
        const int length = n + t;
        const int first = use_cache && t > 0 ? length - 1 : 0;
        if (!use_cache) r->cache.length = 0;
        const attn_decoder_outputs out = {r->logits, NULL, NULL};
        const int status = attn_decoder_forward(&out, &r->cache, ids + first,
                                                length - first, &m->params,
                                                &m->config, r->work);
        if (status != ATTN_OK) return decoder_failed(m, status);
        const double *last = r->logits +
                             (size_t)(length - first - 1) * (size_t)vocab;
        ids[length] = next_token(last, vocab, temperature, &state);
    }
    return ATTN_OK;
}

int attn_model_generate(attn_model *model, int *ids, const int *prompt, int n,
                        int count, double temperature, uint64_t seed,
                        int use_cache)
{
    if (model == NULL) return ATTN_ERR_NULL;
    int status = attn__model_check_tokens(model, prompt, n, count);
    if (status != ATTN_OK) return status;
    if (ids == NULL) return attn__model_error(model, ATTN_ERR_NULL, "no ids");
    if (!isfinite(temperature) || temperature < 0.0)
        return attn__model_error(model, ATTN_ERR_RANGE,
                                 "temperature must be a number from 0 (0: "
                                 "the most likely token each time), got %g",
                                 temperature);
    if (use_cache != 0 && use_cache != 1)
        return attn__model_error(model, ATTN_ERR_OPTION,
                                 "use_cache must be 0 or 1, got %d", use_cache);
    for (int i = 0; i < n; i++) ids[i] = prompt[i];
    if (count == 0) return ATTN_OK;
    /* The last token generated is never run: n + count − 1 positions. */
    const int positions = n + count - 1;
    const int rows = use_cache ? n : positions;
    run_memory r;
    status = allocate_run(model, &r, rows, positions, 1);
    if (status == ATTN_OK)
        status = decode(model, &r, ids, n, count, temperature, seed, use_cache);
    attn__model_release(model, r.block);
    if (status == ATTN_OK) model->error[0] = '\0';
    return status;
}
