/* model_train.c: `attn model train`: a byte-level Llama decoder trained
 * on a text file from seeded weights (attn_lm_trainer_*) and written to a
 * folder as config.json and model.safetensors, which `attn model run`
 * loads. The same arguments write the same bytes. */
#include "attention.h"
#include "model_cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char train_help[] =
    "usage: attn model train --text FILE --out DIR [--held-out N]\n"
    "                        [--hidden N] [--intermediate N] [--layers N]\n"
    "                        [--heads N] [--kv-heads N] [--rope-theta X]\n"
    "                        [--untied] [--seq N] [--batch N] [--steps N]\n"
    "                        [--lr X] [--seed N] [--every N]\n"
    "\n"
    "Trains a byte-level Llama decoder (vocab_size 256: a byte's id is its\n"
    "value) on FILE's bytes, less its last N bytes (--held-out, default a\n"
    "tenth), in float64 from weights drawn with the seed: Adam on --batch\n"
    "windows of --seq bytes a step, for --steps steps. Writes DIR/config.json\n"
    "and DIR/model.safetensors (F32, Hugging Face's Llama names), and prints\n"
    "the training's settings, time (wall and CPU) and losses (nats per byte)\n"
    "as JSON. Every --every steps (default 100) it reports the loss on\n"
    "standard error.\n"
    "Defaults: hidden 64, intermediate 192, layers 2, heads 4, kv-heads 2,\n"
    "rope-theta 10000, tied embeddings, seq 64, batch 16, steps 1000,\n"
    "lr 0.003, seed 1.\n";

typedef struct train_args {
    const char *text, *out;
    long held_out; /* -1: a tenth */
    long every;
    attn_lm_settings s;
} train_args;

static int fail(const char *format, const char *arg)
{
    fputs("attn model train: ", stderr);
    fprintf(stderr, format, arg);
    fputc('\n', stderr);
    return 2;
}

/* A whole number from 1 to max (0 allowed when zero_ok). */
static int whole(long *value, const char *text, long max, int zero_ok)
{
    char *end;
    errno = 0;
    const long v = strtol(text, &end, 10);
    if (*text < '0' || *text > '9' || *end != '\0' || errno != 0 || v > max ||
        (v == 0 && !zero_ok))
        return 0;
    *value = v;
    return 1;
}

static int read_args(train_args *a, int argc, char **argv)
{
    static const char *const ints[] = {"--hidden", "--intermediate", "--layers",
                                       "--heads",  "--kv-heads",     "--seq",
                                       "--batch",  "--steps",        "--seed",
                                       "--every",  "--held-out"};
    attn_decoder_config *c = &a->s.config;
    int *const int_targets[] = {&c->hidden_size,
                                &c->intermediate_size,
                                &c->num_hidden_layers,
                                &c->num_attention_heads,
                                &c->num_key_value_heads,
                                &a->s.seq_length,
                                &a->s.batch_size,
                                &a->s.steps,
                                NULL,
                                NULL,
                                NULL};
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--untied") == 0) {
            c->tie_word_embeddings = 0;
            continue;
        }
        if (i + 1 >= argc) return fail("%s needs a value", arg);
        const char *value = argv[++i];
        if (strcmp(arg, "--text") == 0) {
            a->text = value;
            continue;
        }
        if (strcmp(arg, "--out") == 0) {
            a->out = value;
            continue;
        }
        if (strcmp(arg, "--lr") == 0 || strcmp(arg, "--rope-theta") == 0) {
            char *end;
            const double x = strtod(value, &end);
            if (*end != '\0' || !isfinite(x) || !(x > 0))
                return fail("%s takes a positive number", arg);
            *(strcmp(arg, "--lr") == 0 ? &a->s.learning_rate
                                       : &c->rope_theta) = x;
            continue;
        }
        size_t k = 0;
        while (k < sizeof ints / sizeof ints[0] && strcmp(arg, ints[k]) != 0)
            k++;
        if (k == sizeof ints / sizeof ints[0])
            return fail("unknown option %s (attn model train --help)", arg);
        long v;
        if (!whole(&v, value, 1000000000L, k >= 8))
            return fail("%s takes a whole number from 1 to 1000000000", arg);
        if (int_targets[k] != NULL)
            *int_targets[k] = (int)v;
        else if (strcmp(arg, "--seed") == 0)
            a->s.seed = (uint64_t)v;
        else if (strcmp(arg, "--every") == 0)
            a->every = v;
        else
            a->held_out = v;
    }
    if (a->text == NULL || a->out == NULL)
        return fail("%s", "--text FILE and --out DIR are needed");
    return 0;
}

/* The whole file, or NULL with a message. */
static unsigned char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "attn model train: cannot read %s: %s\n", path,
                strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    unsigned char *data = malloc(cap);
    while (data != NULL) {
        n += fread(data + n, 1, cap - n, f);
        if (n < cap) break;
        unsigned char *more = realloc(data, cap * 2);
        if (more == NULL) free(data);
        data = more;
        cap *= 2;
    }
    const int bad = ferror(f);
    fclose(f);
    if (data == NULL || bad) {
        fprintf(stderr, "attn model train: cannot read %s\n", path);
        free(data);
        return NULL;
    }
    *size = n;
    return data;
}

static int write_file(const char *folder, const char *name, const void *bytes,
                      size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", folder, name);
    FILE *f = fopen(path, "wb");
    const int ok = f != NULL && fwrite(bytes, 1, size, f) == size;
    if (f != NULL && fclose(f) != 0) return 0;
    if (!ok)
        fprintf(stderr, "attn model train: cannot write %s: %s\n", path,
                strerror(errno));
    return ok;
}

/* Writes the checkpoint into the folder; 0 on success. */
static int save(attn_lm_trainer *trainer, const char *folder)
{
    size_t json_length, size;
    attn_lm_trainer_write(trainer, NULL, 0, &json_length, NULL, 0, &size);
    char *json = malloc(json_length + 1);
    unsigned char *file = malloc(size);
    int status = json != NULL && file != NULL
                     ? attn_lm_trainer_write(trainer, json, json_length + 1,
                                             &json_length, file, size, &size)
                     : ATTN_ERR_NOMEM;
    const int ok = status == ATTN_OK &&
                   write_file(folder, "config.json", json, json_length) &&
                   write_file(folder, "model.safetensors", file, size);
    if (status != ATTN_OK)
        fprintf(stderr, "attn model train: %s\n", attn_status_text(status));
    free(json);
    free(file);
    return ok ? 0 : 1;
}

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    timespec_get(&now, TIME_UTC);
    return (double)(now.tv_sec - start->tv_sec) +
           (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

static int train(const train_args *a, const unsigned char *text, size_t size)
{
    const size_t held = a->held_out >= 0 ? (size_t)a->held_out : size / 10;
    if (held >= size)
        return fail("%s", "--held-out leaves no text to train on");
    const size_t train_size = size - held;
    attn_lm_trainer *trainer;
    int status = attn_lm_trainer_create(&trainer, &a->s, NULL);
    if (status != ATTN_OK) return fail("%s", attn_status_text(status));
    struct timespec start;
    timespec_get(&start, TIME_UTC);
    const clock_t cpu_start = clock();
    double loss = 0.0, recent = 0.0;
    for (int step = 1; step <= a->s.steps && status == ATTN_OK; step++) {
        status = attn_lm_trainer_step(trainer, &loss, text, train_size);
        recent += loss;
        if (status == ATTN_OK && step % a->every == 0) {
            fprintf(stderr, "step %d: loss %.4f (%.0f s)\n", step,
                    recent / (double)a->every, seconds_since(&start));
            recent = 0.0;
        }
    }
    const double seconds = seconds_since(&start);
    const double cpu_seconds = (double)(clock() - cpu_start) / CLOCKS_PER_SEC;
    double held_loss = NAN;
    if (status == ATTN_OK && held > (size_t)a->s.seq_length)
        status = attn_lm_trainer_loss(trainer, &held_loss, text + train_size,
                                      held);
    int exit_status = status == ATTN_OK ? save(trainer, a->out) : 1;
    if (status != ATTN_OK)
        fprintf(stderr, "attn model train: %s\n", attn_status_text(status));
    attn_lm_trainer_destroy(trainer);
    if (exit_status != 0) return exit_status;
    const attn_decoder_config *c = &a->s.config;
    printf(
        "{\"text_bytes\": %zu, \"held_out_bytes\": %zu, \"hidden_size\": "
        "%d, \"intermediate_size\": %d, \"num_hidden_layers\": %d, "
        "\"num_attention_heads\": %d, \"num_key_value_heads\": %d, "
        "\"tie_word_embeddings\": %s, \"seq_length\": %d, \"batch_size\": "
        "%d, \"steps\": %d, \"learning_rate\": %g, \"seed\": %llu, "
        "\"seconds\": %.1f, \"cpu_seconds\": %.1f, \"last_step_loss\": %.4f, "
        "\"held_out_loss\": %.4f}\n",
        train_size, held, c->hidden_size, c->intermediate_size,
        c->num_hidden_layers, c->num_attention_heads, c->num_key_value_heads,
        c->tie_word_embeddings ? "true" : "false", a->s.seq_length,
        a->s.batch_size, a->s.steps, a->s.learning_rate,
        (unsigned long long)a->s.seed, seconds, cpu_seconds, loss, held_loss);
    return fflush(stdout) == 0 ? 0 : 1;
}

int cli_model_train(int argc, char **argv)
{
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(train_help, stdout);
            return fflush(stdout) == 0 ? 0 : 1;
        }
    train_args a = {.held_out = -1, .every = 100};
    a.s.config = (attn_decoder_config){
        .vocab_size = 256,
        .hidden_size = 64,
        .intermediate_size = 192,
        .num_hidden_layers = 2,
        .num_attention_heads = 4,
        .num_key_value_heads = 2,
        .max_position_embeddings = 0,
        .rope_theta = 10000.0,
        .rms_norm_eps = 1e-5,
        .tie_word_embeddings = 1,
    };
    a.s.seq_length = 64;
    a.s.batch_size = 16;
    a.s.steps = 1000;
    a.s.learning_rate = 0.003;
    a.s.seed = 1;
    int exit_status = read_args(&a, argc, argv);
    if (exit_status != 0) return exit_status;
    /* The model reads as many positions as it was trained on, at least
     * 256 (RoPE extends past them, but untrained). */
    a.s.config.max_position_embeddings = a.s.seq_length > 256 ? a.s.seq_length
                                                              : 256;
    size_t size = 0;
    unsigned char *text = read_file(a.text, &size);
    if (text == NULL) return 1;
    exit_status = train(&a, text, size);
    free(text);
    return exit_status;
}
