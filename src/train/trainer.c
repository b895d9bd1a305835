/* trainer.c: attn_trainer_*: settings by name, the model built on first
 * use, Adam steps on seeded batches, the fixed held-out set, predictions
 * with every head's attention. */
#include "train/train.h"
#include "kernels/kernels.h"
#include "problem/problem.h"
#include "text/textbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { HELD_OUT = ATTN_TRAINER_HELD_OUT, ERROR_CAP = 256 };

/* Adam's constants (Kingma and Ba's defaults) and the clipping norm. */
#define ADAM_BETA1 0.9
#define ADAM_BETA2 0.999
#define ADAM_EPSILON 1e-8
#define CLIP_NORM 1.0

typedef struct setting_spec {
    const char *name;
    double min, max;
    int integer;
} setting_spec;

static const setting_spec specs[ATTN__SET_COUNT] = {
    [ATTN__SET_SEED] = {"seed", 0, 9007199254740991.0, 1},
    [ATTN__SET_LAYERS] = {"layers", 1, ATTN__MAX_LAYERS, 1},
    [ATTN__SET_HEADS] = {"heads", 1, 4, 1},
    [ATTN__SET_D_MODEL] = {"dModel", 4, 64, 1},
    [ATTN__SET_D_FF] = {"dFF", 0, 256, 1},
    [ATTN__SET_SEQ_LENGTH] = {"seqLength", 2, 32, 1},
    [ATTN__SET_VOCAB] = {"vocab", 2, 64, 1},
    [ATTN__SET_BATCH_SIZE] = {"batchSize", 1, 512, 1},
    [ATTN__SET_LEARNING_RATE] = {"learningRate", 1e-6, 1, 0},
    [ATTN__SET_SCALE] = {"scale", 0, 1, 1},
    [ATTN__SET_CAUSAL] = {"causal", 0, 1, 1},
    [ATTN__SET_STEPS] = {"steps", 1, 1000000, 1},
};

const char *attn_trainer_setting(int index)
{
    return index >= 0 && index < ATTN__SET_COUNT ? specs[index].name : NULL;
}

struct attn_trainer {
    attn_allocator allocator;
    const attn__task *task;
    double settings[ATTN__SET_COUNT];
    char error[ERROR_CAP];
    size_t max_bytes; /* 0: no limit (attn_trainer_set_max_bytes) */
    int step;
    uint64_t rng; /* the training batches' stream */
    /* Built on first use: */
    void *block; /* everything below, one allocation */
    attn__model model;
    double *params, *grads, *moment1, *moment2; /* [model.count] each */
    attn__pass pass;
    int *tokens, *targets;           /* [batch, T] */
    unsigned char *counted;          /* [batch, T] */
    int *held_tokens, *held_targets; /* [HELD_OUT, T] */
    unsigned char *held_counted;     /* [HELD_OUT, T] */
};

static int fail(attn_trainer *trainer, int status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(trainer->error, sizeof trainer->error, format, args);
    va_end(args);
    return status;
}

static int built(const attn_trainer *trainer)
{
    return trainer->block != NULL;
}

int attn_trainer_create(attn_trainer **trainer, const char *task,
                        const attn_allocator *allocator)
{
    if (trainer == NULL) return ATTN_ERR_NULL;
    *trainer = NULL;
    if (task == NULL) return ATTN_ERR_NULL;
    const attn__task *found = attn__find_task(task);
    if (found == NULL) return ATTN_ERR_OPTION;
    const attn_allocator *use = attn__allocator_or_default(allocator);
    if (use == NULL) return ATTN_ERR_NULL;
    attn_trainer *made = use->allocate(use->context, sizeof *made);
    if (made == NULL) return ATTN_ERR_NOMEM;
    memset(made, 0, sizeof *made);
    made->allocator = *use;
    made->task = found;
    memcpy(made->settings, found->defaults, sizeof made->settings);
    *trainer = made;
    return ATTN_OK;
}

void attn_trainer_destroy(attn_trainer *trainer)
{
    if (trainer == NULL) return;
    const attn_allocator allocator = trainer->allocator;
    if (trainer->block != NULL)
        allocator.release(allocator.context, trainer->block);
    allocator.release(allocator.context, trainer);
}

const char *attn_trainer_error(const attn_trainer *trainer)
{
    return trainer != NULL ? trainer->error : "";
}

static int find_setting(const char *name)
{
    for (int i = 0; i < ATTN__SET_COUNT; i++)
        if (strcmp(specs[i].name, name) == 0) return i;
    return -1;
}

static int unknown_setting(attn_trainer *trainer, const char *name)
{
    return fail(trainer, ATTN_ERR_INPUT,
                "%.40s: unknown setting (settings: seed, layers, heads, "
                "dModel, dFF, seqLength, vocab, batchSize, learningRate, "
                "scale, causal, steps)",
                name);
}

int attn_trainer_set(attn_trainer *trainer, const char *setting, double value)
{
    if (trainer == NULL) return ATTN_ERR_NULL;
    trainer->error[0] = '\0';
    if (setting == NULL) return ATTN_ERR_NULL;
    const int index = find_setting(setting);
    if (index < 0) return unknown_setting(trainer, setting);
    const setting_spec *spec = &specs[index];
    if (built(trainer))
        return fail(trainer, ATTN_ERR_STATE,
                    "%s: settings are fixed once the model is built (by the "
                    "first step, evaluation or prediction); make a new "
                    "trainer to change them",
                    spec->name);
    if (!(value >= spec->min && value <= spec->max) ||
        (spec->integer && value != floor(value))) {
        char min[ATTN__NUMBER_CAP], max[ATTN__NUMBER_CAP],
            got[ATTN__NUMBER_CAP];
        attn__format_shortest(min, spec->min);
        attn__format_shortest(max, spec->max);
        if (isnan(value))
            strcpy(got, "NaN");
        else if (isinf(value))
            strcpy(got, value > 0 ? "Infinity" : "-Infinity");
        else
            attn__format_shortest(got, value);
        return fail(trainer, ATTN_ERR_RANGE,
                    "%s: must be %s from %s to %s, got %s", spec->name,
                    spec->integer ? "a whole number" : "a number", min, max,
                    got);
    }
    trainer->settings[index] = value;
    return ATTN_OK;
}

int attn_trainer_set_max_bytes(attn_trainer *trainer, size_t max_bytes)
{
    if (trainer == NULL) return ATTN_ERR_NULL;
    trainer->error[0] = '\0';
    if (built(trainer))
        return fail(trainer, ATTN_ERR_STATE,
                    "maxBytes: the limit is fixed once the model is built; "
                    "make a new trainer to change it");
    trainer->max_bytes = max_bytes;
    return ATTN_OK;
}

int attn_trainer_get(const attn_trainer *trainer, const char *setting,
                     double *value)
{
    if (trainer == NULL || setting == NULL || value == NULL)
        return ATTN_ERR_NULL;
    if (strcmp(setting, "step") == 0) {
        *value = trainer->step;
        return ATTN_OK;
    }
    const int index = find_setting(setting);
    if (index < 0) return ATTN_ERR_INPUT;
    *value = trainer->settings[index];
    return ATTN_OK;
}

/* ---- Building ---- */

static int check_settings(attn_trainer *trainer)
{
    const double *s = trainer->settings;
    const int heads = (int)s[ATTN__SET_HEADS];
    const int d_model = (int)s[ATTN__SET_D_MODEL];
    if (d_model % heads != 0)
        return fail(trainer, ATTN_ERR_HEADS,
                    "heads: must divide dModel (%d), got %d", d_model, heads);
    if (trainer->task->check(s, trainer->error, sizeof trainer->error))
        return ATTN_ERR_RANGE;
    return ATTN_OK;
}

/* The held-out set depends on the task and its sizes, not on the seed,
 * so that runs with different seeds are measured on the same examples. */
static void make_held_out(attn_trainer *trainer)
{
    const int t = (int)trainer->settings[ATTN__SET_SEQ_LENGTH];
    uint64_t rng = UINT64_C(0x5EED0F4E1D0D7A7A);
    for (const char *c = trainer->task->name; *c; c++)
        rng = (rng ^ (unsigned char)*c) * UINT64_C(0x100000001B3);
    for (int e = 0; e < HELD_OUT; e++) {
        const attn__example example = {
            trainer->held_tokens + (size_t)e * t,
            trainer->held_targets + (size_t)e * t,
            trainer->held_counted + (size_t)e * t,
        };
        trainer->task->make(&example, trainer->settings, &rng);
    }
}

static int build(attn_trainer *trainer)
{
    if (built(trainer)) return ATTN_OK;
    const int status = check_settings(trainer);
    if (status != ATTN_OK) return status;
    attn__model *model = &trainer->model;
    attn__model_layout(model, trainer->settings);
    const int batch = (int)trainer->settings[ATTN__SET_BATCH_SIZE];
    const size_t t = (size_t)model->seq_length;
    size_t pass_doubles, work_count;
    if (attn__pass_size(&pass_doubles, &work_count, model, batch) != ATTN_OK)
        return fail(trainer, ATTN_ERR_SIZE_OVERFLOW,
                    "the model's working memory does not fit in size_t");
    /* Doubles first (aligned), then ints, then bytes; all bounded by the
     * settings' limits, far from overflowing. */
    const size_t doubles = 4 * model->count + pass_doubles;
    const size_t ints = 2 * (size_t)batch * t + 2 * (size_t)HELD_OUT * t;
    const size_t bytes = (size_t)batch * t + (size_t)HELD_OUT * t;
    const size_t block_bytes = doubles * sizeof(double) + ints * sizeof(int) +
                               bytes;
    /* The trainer itself counts too: what a caller's limit bounds is all
     * the trainer holds. */
    const size_t total = sizeof *trainer + block_bytes;
    if (trainer->max_bytes > 0 && total > trainer->max_bytes)
        return fail(trainer, ATTN_ERR_TOO_LARGE,
                    "the trainer needs %zu bytes for its model, batches and "
                    "working memory, more than its limit of %zu bytes; use a "
                    "smaller batchSize, dModel, dFF or seqLength, or raise "
                    "the limit (maxBytes in the JS API, --max-bytes in attn "
                    "train)",
                    total, trainer->max_bytes);
    void *block = trainer->allocator.allocate(trainer->allocator.context,
                                              block_bytes);
    if (block == NULL)
        return fail(trainer, ATTN_ERR_NOMEM,
                    "could not allocate the model and its buffers");
    double *d = block;
    trainer->params = d;
    trainer->grads = d + model->count;
    trainer->moment1 = d + 2 * model->count;
    trainer->moment2 = d + 3 * model->count;
    attn__pass_place(&trainer->pass, d + 4 * model->count, model, batch,
                     work_count);
    int *i = (int *)(d + doubles);
    trainer->tokens = i;
    trainer->targets = i + (size_t)batch * t;
    trainer->held_tokens = i + 2 * (size_t)batch * t;
    trainer->held_targets = trainer->held_tokens + (size_t)HELD_OUT * t;
    unsigned char *b = (unsigned char *)(i + ints);
    trainer->counted = b;
    trainer->held_counted = b + (size_t)batch * t;
    trainer->block = block;

    uint64_t init = (uint64_t)trainer->settings[ATTN__SET_SEED];
    attn__model_init(trainer->params, model, &init);
    memset(trainer->moment1, 0, 2 * model->count * sizeof(double));
    trainer->rng = init ^ UINT64_C(0xDA7A5EED);
    make_held_out(trainer);
    return ATTN_OK;
}

/* ---- Training ---- */

static void make_batch(attn_trainer *trainer)
{
    const int batch = trainer->pass.batch, t = trainer->model.seq_length;
    for (int e = 0; e < batch; e++) {
        const attn__example example = {
            trainer->tokens + (size_t)e * t,
            trainer->targets + (size_t)e * t,
            trainer->counted + (size_t)e * t,
        };
        trainer->task->make(&example, trainer->settings, &trainer->rng);
    }
}

/* Scales the gradients down to a global norm of CLIP_NORM when above. */
static void clip(double *grads, size_t count)
{
    double sum = 0.0;
    for (size_t i = 0; i < count; i++) sum += grads[i] * grads[i];
    const double norm = sqrt(sum);
    if (norm <= CLIP_NORM) return;
    const double factor = CLIP_NORM / norm;
    for (size_t i = 0; i < count; i++) grads[i] *= factor;
}

static void adam(attn_trainer *trainer)
{
    const double rate = trainer->settings[ATTN__SET_LEARNING_RATE];
    const double step = (double)trainer->step; /* counted from 1 */
    const double correct1 = 1.0 - pow(ADAM_BETA1, step);
    const double correct2 = 1.0 - pow(ADAM_BETA2, step);
    for (size_t i = 0; i < trainer->model.count; i++) {
        const double g = trainer->grads[i];
        double *m = &trainer->moment1[i], *v = &trainer->moment2[i];
        *m = ADAM_BETA1 * *m + (1.0 - ADAM_BETA1) * g;
        *v = ADAM_BETA2 * *v + (1.0 - ADAM_BETA2) * g * g;
        trainer->params[i] -= rate * (*m / correct1) /
                              (sqrt(*v / correct2) + ADAM_EPSILON);
    }
}

static int engine_failed(attn_trainer *trainer, int status)
{
    return fail(trainer, status, "step %d: the engine stopped: %s",
                trainer->step + 1, attn_status_text(status));
}

int attn_trainer_step(attn_trainer *trainer, int count, double *loss)
{
    if (trainer == NULL || loss == NULL) return ATTN_ERR_NULL;
    trainer->error[0] = '\0';
    if (count < 1)
        return fail(trainer, ATTN_ERR_RANGE,
                    "count: must be at least 1, got %d", count);
    int status = build(trainer);
    if (status != ATTN_OK) return status;
    const attn__model *model = &trainer->model;
    const int batch = trainer->pass.batch, t = model->seq_length;
    for (int k = 0; k < count; k++) {
        make_batch(trainer);
        status = attn__model_forward(&trainer->pass, NULL, trainer->params,
                                     model, trainer->tokens, batch, t);
        if (status != ATTN_OK) return engine_failed(trainer, status);
        int right, total;
        attn__model_loss(loss, &right, &total, &trainer->pass, model,
                         trainer->targets, trainer->counted, batch, t, 1);
        status = attn__model_backward(trainer->grads, &trainer->pass,
                                      trainer->params, model, trainer->tokens,
                                      batch, t);
        if (status != ATTN_OK) return engine_failed(trainer, status);
        clip(trainer->grads, model->count);
        trainer->step++;
        adam(trainer);
    }
    return ATTN_OK;
}

int attn_trainer_evaluate(attn_trainer *trainer, double *loss, double *accuracy)
{
    if (trainer == NULL || loss == NULL || accuracy == NULL)
        return ATTN_ERR_NULL;
    trainer->error[0] = '\0';
    const int status = build(trainer);
    if (status != ATTN_OK) return status;
    const attn__model *model = &trainer->model;
    const int t = model->seq_length;
    double loss_sum = 0.0;
    int right = 0, total = 0;
    for (int first = 0; first < HELD_OUT; first += trainer->pass.batch) {
        const int rest = HELD_OUT - first;
        const int batch = rest < trainer->pass.batch ? rest
                                                     : trainer->pass.batch;
        const size_t at = (size_t)first * t;
        const int ran = attn__model_forward(
            &trainer->pass, NULL, trainer->params, model,
            trainer->held_tokens + at, batch, t);
        if (ran != ATTN_OK) return engine_failed(trainer, ran);
        double chunk_loss;
        int chunk_right, chunk_total;
        attn__model_loss(&chunk_loss, &chunk_right, &chunk_total,
                         &trainer->pass, model, trainer->held_targets + at,
                         trainer->held_counted + at, batch, t, 0);
        loss_sum += chunk_loss * chunk_total;
        right += chunk_right;
        total += chunk_total;
    }
    *loss = total > 0 ? loss_sum / total : 0.0;
    *accuracy = total > 0 ? (double)right / total : 0.0;
    return ATTN_OK;
}

int attn_trainer_example(attn_trainer *trainer, int *tokens, int *targets,
                         int *counted, int example)
{
    if (trainer == NULL || tokens == NULL || targets == NULL || counted == NULL)
        return ATTN_ERR_NULL;
    trainer->error[0] = '\0';
    const int status = build(trainer);
    if (status != ATTN_OK) return status;
    if (example < 0 || example >= HELD_OUT)
        return fail(trainer, ATTN_ERR_RANGE,
                    "example: must be from 0 to %d, got %d", HELD_OUT - 1,
                    example);
    const int t = trainer->model.seq_length;
    const size_t at = (size_t)example * t;
    for (int i = 0; i < t; i++) {
        tokens[i] = trainer->held_tokens[at + i];
        targets[i] = trainer->held_targets[at + i];
        counted[i] = trainer->held_counted[at + i];
    }
    return ATTN_OK;
}

/* Checks tokens [length] against the model's sizes. */
static int check_tokens(attn_trainer *trainer, const int *tokens, int length)
{
    const attn__model *model = &trainer->model;
    if (length < 1 || length > model->seq_length)
        return fail(trainer, ATTN_ERR_RANGE,
                    "tokens: the model reads 1 to seqLength = %d tokens, "
                    "got %d",
                    model->seq_length, length);
    for (int i = 0; i < length; i++)
        if (tokens[i] < 0 || tokens[i] >= model->vocab)
            return fail(trainer, ATTN_ERR_RANGE,
                        "tokens[%d]: must be from 0 to vocab - 1 = %d, got %d",
                        i, model->vocab - 1, tokens[i]);
    return ATTN_OK;
}

int attn_trainer_head(attn_trainer *trainer, double *q, double *k, double *v,
                      const int *tokens, int length, int layer, int head)
{
    if (trainer == NULL || q == NULL || k == NULL || v == NULL ||
        tokens == NULL)
        return ATTN_ERR_NULL;
    trainer->error[0] = '\0';
    int status = build(trainer);
    if (status == ATTN_OK) status = check_tokens(trainer, tokens, length);
    if (status != ATTN_OK) return status;
    const attn__model *model = &trainer->model;
    if (layer < 0 || layer >= model->layers || head < 0 || head >= model->heads)
        return fail(trainer, ATTN_ERR_RANGE,
                    "layer %d, head %d: the model has layers 0 to %d and "
                    "heads 0 to %d",
                    layer, head, model->layers - 1, model->heads - 1);
    status = attn__model_forward(&trainer->pass, NULL, trainer->params, model,
                                 tokens, 1, length);
    if (status != ATTN_OK) return engine_failed(trainer, status);
    const int d = model->d_model, width = d / model->heads;
    const double *x = attn__model_layer_input(&trainer->pass, model, layer);
    const attn__layer_layout *at = &model->layer[layer];
    const size_t weights[3][2] = {
        {at->wq, at->bq}, {at->wk, at->bk}, {at->wv, at->bv}};
    double *const outs[3] = {q, k, v};
    /* x W + b as the kernels compute it (the pass's gradient buffer is free
     * after a forward pass), then the head's columns. */
    double *full = trainer->pass.d_a; /* [length, d_model] */
    for (int p = 0; p < 3; p++) {
        status = attn__affine(full, x, trainer->params + weights[p][0],
                              trainer->params + weights[p][1], length, d, d);
        if (status != ATTN_OK) return engine_failed(trainer, status);
        for (int i = 0; i < length; i++)
            memcpy(outs[p] + (size_t)i * width,
                   full + (size_t)i * d + (size_t)head * width,
                   (size_t)width * sizeof *full);
    }
    return ATTN_OK;
}

int attn_trainer_predict(attn_trainer *trainer, int *predicted, double *weights,
                         const int *tokens, int length)
{
    if (trainer == NULL || predicted == NULL || tokens == NULL)
        return ATTN_ERR_NULL;
    trainer->error[0] = '\0';
    const int status = build(trainer);
    if (status != ATTN_OK) return status;
    const attn__model *model = &trainer->model;
    const int checked = check_tokens(trainer, tokens, length);
    if (checked != ATTN_OK) return checked;
    const int ran = attn__model_forward(
        &trainer->pass, weights, trainer->params, model, tokens, 1, length);
    if (ran != ATTN_OK) return engine_failed(trainer, ran);
    for (int i = 0; i < length; i++) {
        const double *z = trainer->pass.logits + (size_t)i * model->vocab;
        int best = 0;
        for (int v = 1; v < model->vocab; v++)
            if (z[v] > z[best]) best = v;
        predicted[i] = best;
    }
    return ATTN_OK;
}
