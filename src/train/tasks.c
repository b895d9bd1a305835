/* tasks.c: the trainer's tasks: each makes seeded examples whose right
 * attention pattern a learner can predict, and has defaults that reach
 * 99% held-out token accuracy within its step budget (docs/cli.md,
 * "Training a tiny transformer"). */
#include "train/train.h"
#include "kernels/kernels.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- Random numbers ---- */

int attn__rng_below(uint64_t *state, int n)
{
    return (int)(attn__splitmix64(state) % (uint64_t)n);
}

double attn__rng_normal(uint64_t *state)
{
    /* 53 random bits in (0, 1]: never log(0). */
    const double u1 = (double)((attn__splitmix64(state) >> 11) + 1) * 0x1p-53;
    const double u2 = (double)(attn__splitmix64(state) >> 11) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ---- Helpers ---- */

#define T_OF(s) ((int)(s)[ATTN__SET_SEQ_LENGTH])
#define V_OF(s) ((int)(s)[ATTN__SET_VOCAB])

static void random_tokens(int *tokens, int n, int vocab, uint64_t *rng)
{
    for (int i = 0; i < n; i++) tokens[i] = attn__rng_below(rng, vocab);
}

/* n distinct tokens from [first, first + range), n ≤ range. */
static void distinct_tokens(int *tokens, int n, int first, int range,
                            uint64_t *rng)
{
    for (int i = 0; i < n; i++) {
        int pick, again;
        do {
            pick = first + attn__rng_below(rng, range);
            again = 0;
            for (int j = 0; j < i; j++) again |= tokens[j] == pick;
        } while (again);
        tokens[i] = pick;
    }
}

static void count_all(const attn__example *example, int n)
{
    memset(example->counted, 1, (size_t)n);
}

static int any_settings(const double *settings, char *message, size_t cap)
{
    (void)settings, (void)message, (void)cap;
    return 0;
}

/* ---- The tasks ---- */

/* copy: each position predicts its own token. */
static void make_copy(const attn__example *e, const double *s, uint64_t *rng)
{
    random_tokens(e->tokens, T_OF(s), V_OF(s), rng);
    memcpy(e->targets, e->tokens, (size_t)T_OF(s) * sizeof *e->targets);
    count_all(e, T_OF(s));
}

/* reverse: position i predicts token T − 1 − i (the anti-diagonal). */
static void make_reverse(const attn__example *e, const double *s, uint64_t *rng)
{
    const int n = T_OF(s);
    random_tokens(e->tokens, n, V_OF(s), rng);
    for (int i = 0; i < n; i++) e->targets[i] = e->tokens[n - 1 - i];
    count_all(e, n);
}

/* sort: position i predicts the i-th smallest token. */
static void make_sort(const attn__example *e, const double *s, uint64_t *rng)
{
    const int n = T_OF(s);
    random_tokens(e->tokens, n, V_OF(s), rng);
    memcpy(e->targets, e->tokens, (size_t)n * sizeof *e->targets);
    for (int i = 1; i < n; i++) /* insertion sort: n is small */
        for (int j = i; j > 0 && e->targets[j - 1] > e->targets[j]; j--) {
            const int swap = e->targets[j];
            e->targets[j] = e->targets[j - 1];
            e->targets[j - 1] = swap;
        }
    count_all(e, n);
}

/* previousToken: position i predicts token i − 1 (the diagonal below the
 * main one); position 0 has none and does not count. */
static void make_previous(const attn__example *e, const double *s,
                          uint64_t *rng)
{
    const int n = T_OF(s);
    random_tokens(e->tokens, n, V_OF(s), rng);
    e->targets[0] = e->tokens[0];
    for (int i = 1; i < n; i++) e->targets[i] = e->tokens[i - 1];
    count_all(e, n);
    e->counted[0] = 0;
}

/* induction: L distinct tokens, then the same L again; each position
 * predicts the next token, and the positions from the last of the first
 * copy on count: the next token is found by looking up where the current
 * one occurred before (the induction head). */
static int check_induction(const double *s, char *message, size_t cap)
{
    const int n = T_OF(s);
    if (n % 2 != 0 || n < 4) {
        snprintf(message, cap,
                 "seqLength: induction repeats a sequence, so "
                 "it must be even and at least 4, got %d",
                 n);
        return 1;
    }
    if (V_OF(s) < n / 2) {
        snprintf(message, cap,
                 "vocab: induction needs seqLength / 2 = %d "
                 "distinct tokens, got a vocabulary of %d",
                 n / 2, V_OF(s));
        return 1;
    }
    return 0;
}

static void make_induction(const attn__example *e, const double *s,
                           uint64_t *rng)
{
    const int n = T_OF(s), half = n / 2;
    distinct_tokens(e->tokens, half, 0, V_OF(s), rng);
    memcpy(e->tokens + half, e->tokens, (size_t)half * sizeof *e->tokens);
    for (int i = 0; i < n; i++) {
        e->targets[i] = e->tokens[(i + 1) % n];
        e->counted[i] = i >= half - 1 && i < n - 1;
    }
}

/* lookup: key-value pairs (keys from the first half of the vocabulary,
 * distinct; values from the second), then a query key; the last position
 * predicts the query's value. */
static int check_lookup(const double *s, char *message, size_t cap)
{
    const int n = T_OF(s), v = V_OF(s);
    if (n % 2 != 1 || n < 3) {
        snprintf(message, cap,
                 "seqLength: lookup is pairs then a query, so "
                 "it must be odd and at least 3, got %d",
                 n);
        return 1;
    }
    if (v % 2 != 0 || v / 2 < (n - 1) / 2) {
        snprintf(message, cap,
                 "vocab: lookup splits it into keys and values "
                 "and needs %d distinct keys, so it must be even and at "
                 "least %d, got %d",
                 (n - 1) / 2, n - 1, v);
        return 1;
    }
    return 0;
}

static void make_lookup(const attn__example *e, const double *s, uint64_t *rng)
{
    const int n = T_OF(s), pairs = (n - 1) / 2, keys = V_OF(s) / 2;
    int key[64] = {0}; /* pairs ≤ 15 (seqLength ≤ 32) */
    distinct_tokens(key, pairs, 0, keys, rng);
    for (int p = 0; p < pairs; p++) {
        e->tokens[2 * p] = key[p];
        e->tokens[2 * p + 1] = keys + attn__rng_below(rng, keys);
    }
    const int asked = attn__rng_below(rng, pairs);
    e->tokens[n - 1] = key[asked];
    memset(e->counted, 0, (size_t)n);
    for (int i = 0; i < n; i++) e->targets[i] = e->tokens[i];
    e->targets[n - 1] = e->tokens[2 * asked + 1];
    e->counted[n - 1] = 1;
}

/* Defaults, in the order of ATTN__SET_*: seed, layers, heads, dModel,
 * dFF, seqLength, vocab, batchSize, learningRate, scale, causal, steps; one
 * task a row, lined up in columns (clang-format would put each row's four
 * fields on four lines). */
/* clang-format off */
static const attn__task tasks[] = {
    {"copy",          {1, 1, 2, 32,  0,  8, 10, 64, 0.01,  1, 0, 100}, any_settings,    make_copy},
    {"reverse",       {1, 1, 2, 32,  0,  8, 10, 64, 0.01,  1, 0, 150}, any_settings,    make_reverse},
    {"sort",          {1, 2, 2, 32, 64,  8, 10, 64, 0.003, 1, 0, 500}, any_settings,    make_sort},
    {"previousToken", {1, 1, 2, 32,  0,  8, 10, 64, 0.01,  1, 1, 150}, any_settings,    make_previous},
    {"induction",     {1, 2, 2, 32,  0, 16, 16, 64, 0.005, 1, 1, 300}, check_induction, make_induction},
    {"lookup",        {1, 2, 2, 32,  0,  9, 16, 64, 0.005, 1, 0, 800}, check_lookup,    make_lookup},
};
/* clang-format on */

enum { TASK_COUNT = (int)(sizeof tasks / sizeof tasks[0]) };

const attn__task *attn__find_task(const char *name)
{
    for (int i = 0; i < TASK_COUNT; i++)
        if (strcmp(tasks[i].name, name) == 0) return &tasks[i];
    return NULL;
}

const char *attn_trainer_task(int index)
{
    return index >= 0 && index < TASK_COUNT ? tasks[index].name : NULL;
}
