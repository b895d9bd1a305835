/*
 * fuzz_trainer.c: libFuzzer target for the trainer's settings and steps
 * (attn_trainer_*). The bytes choose a task (or an unknown one), a byte
 * limit of 8 KiB to 128 KiB (attn_trainer_set_max_bytes), up to 8
 * settings by name (every name the trainer takes, "step", which is
 * read-only, an unknown name and "") with values in range, out of range,
 * fractional, NaN or infinite, then up to 2 rounds of -1 to 1 steps, and a
 * prediction of fuzzer-chosen tokens and length (sometimes out of range).
 *
 * Each input starts from a tiny model (batchSize 2, dModel 8, dFF 8 where
 * the task has a feed-forward layer, seqLength 4, or 5 for lookup's pairs
 * then a query) so that it runs in about a
 * millisecond: the settings the fuzzer chooses are the ones it stresses,
 * and the byte limit refuses any model that would be slow to build or step.
 * Large sizes add time, not paths: the same loops run for dModel 8 and 64.
 *
 * Findings: a status outside attention.h's codes; a refusal without a
 * message; a setting that reads back other than it was set; a setting
 * changed after the model is built; a loss that is not finite; a step count
 * that does not add up; a predicted token outside the vocabulary, or
 * attention weights outside [0, 1] or whose rows do not sum to 1.
 */
#include "attention.h"
#include "fuzz_reader.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const tasks[] = {
    "copy", "reverse", "sort", "previousToken", "induction", "lookup", "lookUp",
};
static const char *const settings[] = {
    "seed",      "layers", "heads",     "dModel",       "dFF",
    "seqLength", "vocab",  "batchSize", "learningRate", "scale",
    "causal",    "steps",  "step",      "dmodel",       "",
};
enum {
    TASK_COUNT = sizeof tasks / sizeof tasks[0],
    SETTING_COUNT = sizeof settings / sizeof settings[0],
    MAX_SETTINGS = 8,
    MAX_ROUNDS = 2,
};

static double take_value(reader *r)
{
    const unsigned kind = take_byte(r), byte = take_byte(r);
    switch (kind % 8) {
    case 0: return NAN;
    case 1: return kind & 0x80 ? INFINITY : -INFINITY;
    case 2: return (double)byte / 64.0;        /* fractions */
    case 3: return -(double)byte;              /* negatives */
    case 4: return ldexp(1.0, (int)byte - 64); /* tiny to huge */
    default: return (double)(byte % 80);       /* most in range */
    }
}

static void check_refusal(const attn_trainer *trainer, int status)
{
    check_status(status);
    if (status != ATTN_OK) check(attn_trainer_error(trainer)[0] != '\0');
}

static double get(const attn_trainer *trainer, const char *setting)
{
    double value = NAN;
    check(attn_trainer_get(trainer, setting, &value) == ATTN_OK);
    return value;
}

static void fuzz_predict(reader *r, attn_trainer *trainer)
{
    const int seq_length = (int)get(trainer, "seqLength");
    const int vocab = (int)get(trainer, "vocab");
    const int layers = (int)get(trainer, "layers");
    const int heads = (int)get(trainer, "heads");
    /* 0 and seqLength + 1 are refused */
    const int length = (int)(take_byte(r) % (unsigned)(seq_length + 2));
    const size_t cells = length > 0 ? (size_t)length : 1;
    int *tokens = malloc(cells * sizeof *tokens);
    int *predicted = malloc(cells * sizeof *predicted);
    const size_t n_weights = (size_t)layers * heads * cells * cells;
    double *weights = malloc(n_weights * sizeof *weights);
    check(tokens != NULL && predicted != NULL && weights != NULL);
    int in_range = 1;
    for (size_t i = 0; i < cells; i++) {
        /* vocab itself is one past the last token: refused */
        tokens[i] = (int)(take_byte(r) % (unsigned)(vocab + 1));
        if (tokens[i] >= vocab) in_range = 0;
    }
    const int status = attn_trainer_predict(
        trainer, predicted, take_byte(r) & 1 ? weights : NULL, tokens, length);
    check_refusal(trainer, status);
    if (length < 1 || length > seq_length || !in_range)
        check(status != ATTN_OK);
    if (status == ATTN_OK) {
        for (int i = 0; i < length; i++)
            check(predicted[i] >= 0 && predicted[i] < vocab);
    }
    free(tokens);
    free(predicted);
    free(weights);
}

/* Rows of every head's weights, after a successful prediction with them. */
static void check_weights(attn_trainer *trainer)
{
    const int layers = (int)get(trainer, "layers");
    const int heads = (int)get(trainer, "heads");
    const int length = (int)get(trainer, "seqLength");
    const size_t rows = (size_t)layers * heads * length;
    int *tokens = calloc((size_t)length, sizeof *tokens);
    int *predicted = calloc((size_t)length, sizeof *predicted);
    double *weights = calloc(rows * length, sizeof *weights);
    check(tokens != NULL && predicted != NULL && weights != NULL);
    const int status = attn_trainer_predict(trainer, predicted, weights, tokens,
                                            length);
    check_refusal(trainer, status);
    if (status == ATTN_OK) {
        for (size_t row = 0; row < rows; row++) {
            double sum = 0;
            for (int j = 0; j < length; j++) {
                const double w = weights[row * length + j];
                check(w >= 0 && w <= 1);
                sum += w;
            }
            check(fabs(sum - 1) < 1e-9);
        }
    }
    free(tokens);
    free(predicted);
    free(weights);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size, 0};
    const unsigned task = take_byte(&r) % TASK_COUNT;
    attn_trainer *trainer = NULL;
    int status = attn_trainer_create(&trainer, tasks[task], NULL);
    check_status(status);
    if (task == TASK_COUNT - 1) { /* not a task: names are case-sensitive */
        check(status == ATTN_ERR_OPTION && trainer == NULL);
        return 0;
    }
    check(status == ATTN_OK && trainer != NULL);
    check(attn_trainer_set(trainer, "batchSize", 2) == ATTN_OK);
    check(attn_trainer_set(trainer, "dModel", 8) == ATTN_OK);
    if (get(trainer, "dFF") > 0)
        check(attn_trainer_set(trainer, "dFF", 8) == ATTN_OK);
    const double seq_length = strcmp(tasks[task], "lookup") == 0 ? 5 : 4;
    check(attn_trainer_set(trainer, "seqLength", seq_length) == ATTN_OK);
    const size_t limit = ((size_t)1 + take_byte(&r) % 16) * 8 * 1024;
    check(attn_trainer_set_max_bytes(trainer, limit) == ATTN_OK);

    const int count = (int)(take_byte(&r) % (MAX_SETTINGS + 1));
    for (int i = 0; i < count; i++) {
        const char *name = settings[take_byte(&r) % SETTING_COUNT];
        const double value = take_value(&r);
        status = attn_trainer_set(trainer, name, value);
        check_refusal(trainer, status);
        if (status == ATTN_OK) check(get(trainer, name) == value);
    }

    double steps = 0;
    const int rounds = (int)(take_byte(&r) % (MAX_ROUNDS + 1));
    for (int i = 0; i < rounds; i++) {
        /* 0 and -1 steps are refused */
        const int step_count = (int)(take_byte(&r) % 3) - 1;
        double loss = NAN;
        status = attn_trainer_step(trainer, step_count, &loss);
        check_refusal(trainer, status);
        if (step_count < 1) check(status != ATTN_OK);
        if (status == ATTN_OK) {
            check(isfinite(loss) && loss >= 0);
            steps += step_count;
        }
        check(get(trainer, "step") == steps);
    }
    fuzz_predict(&r, trainer);
    if (take_byte(&r) & 1) check_weights(trainer);

    /* Once built (by a step or prediction that succeeded), the settings
     * are fixed: a known name is refused whatever the value. */
    if (steps > 0) {
        const double before = get(trainer, "dModel");
        check(attn_trainer_set(trainer, "dModel", 8) == ATTN_ERR_STATE);
        check(get(trainer, "dModel") == before);
    }
    attn_trainer_destroy(trainer);
    return 0;
}
