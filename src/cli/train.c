/* train.c: `attn train`: trains a tiny transformer on a task (the
 * attn_trainer_* API) and prints one JSON line per logged step, then the
 * resolved settings and a held-out example with the model's predictions
 * and every head's attention. */
#include "attention.h"
#include "bytes.h"
#include "train_cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TRAIN_ERROR_CAP = 512 };

/* Command-line flags and the settings they set. */
static const struct train_flag {
    const char *flag, *setting;
} flags[] = {
    {"--seed", "seed"},
    {"--layers", "layers"},
    {"--heads", "heads"},
    {"--d-model", "dModel"},
    {"--d-ff", "dFF"},
    {"--seq-length", "seqLength"},
    {"--vocab", "vocab"},
    {"--batch-size", "batchSize"},
    {"--learning-rate", "learningRate"},
    {"--steps", "steps"},
};

static const char train_help[] =
    "usage: attn train --task NAME [--seed N] [--steps N] [--log-every N]\n"
    "                  [--layers L] [--heads H] [--d-model D] [--d-ff F]\n"
    "                  [--seq-length T] [--vocab V] [--batch-size B]\n"
    "                  [--learning-rate R] [--no-scale] [--causal]\n"
    "                  [--no-causal] [--example I] [--max-bytes N]\n"
    "\n"
    "Trains a tiny transformer on a task with the task's defaults unless\n"
    "told otherwise, and prints one JSON line per logged step: step, the\n"
    "batch's loss, and the held-out loss and accuracy. The last line holds\n"
    "the settings and held-out example I (default 0): its tokens, targets,\n"
    "the model's predictions and every head's attention weights.\n"
    "\n"
    "--max-bytes N is the most bytes the trainer may hold: its model,\n"
    "gradients, batches and working memory (default 268435456, 256 MiB,\n"
    "as for a problem); a model that needs more is refused before any\n"
    "step.\n"
    "\n"
    "Tasks:";

typedef struct train_args {
    const char *task;
    int log_every, example;
} train_args;

static int usage_error(char *error, const char *format, const char *arg)
{
    snprintf(error, TRAIN_ERROR_CAP, format, arg);
    return 2;
}

/* A decimal number as JSON writes one (strtod alone would also take 0x10,
 * inf and nan); -0 is 0. */
static int parse_number(double *value, const char *text)
{
    if (text[strspn(text, "0123456789+-.eE")] != '\0') return 0;
    char *end;
    *value = strtod(text, &end);
    if (*value == 0) *value = 0;
    return end != text && *end == '\0';
}

static int whole(int *value, const char *text, int min)
{
    double number;
    if (!parse_number(&number, text) || number < min || number > 1e6 ||
        number != (int)number)
        return 0;
    *value = (int)number;
    return 1;
}

/* The trainer setting flag arg names, or NULL. */
static const struct train_flag *setting_flag(const char *arg)
{
    for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++)
        if (strcmp(arg, flags[f].flag) == 0) return &flags[f];
    return NULL;
}

/* Applies one flag (and its value) to the trainer; how many arguments it
 * took, or 0 with error set. */
static int apply_flag(attn_trainer *trainer, train_args *args, int argc,
                      char **argv, int i, char *error)
{
    const char *arg = argv[i];
    if (strcmp(arg, "--no-scale") == 0)
        return attn_trainer_set(trainer, "scale", 0) == ATTN_OK ? 1 : 0;
    if (strcmp(arg, "--causal") == 0 || strcmp(arg, "--no-causal") == 0)
        return attn_trainer_set(trainer, "causal", arg[2] == 'c') == ATTN_OK;
    const struct train_flag *flag = setting_flag(arg);
    if (flag == NULL && strcmp(arg, "--max-bytes") != 0 &&
        strcmp(arg, "--log-every") != 0 && strcmp(arg, "--example") != 0) {
        usage_error(error, "unknown option %s (attn train --help)", arg);
        return 0;
    }
    if (i + 1 >= argc) {
        usage_error(error, "%s needs a value", arg);
        return 0;
    }
    const char *text = argv[i + 1];
    if (strcmp(arg, "--max-bytes") == 0) {
        size_t bytes;
        if (attn_cli_parse_bytes(text, &bytes, error, TRAIN_ERROR_CAP) != 0)
            return 0;
        /* Flags are read before the model is built, so this cannot fail. */
        attn_trainer_set_max_bytes(trainer, bytes);
        return 2;
    }
    if (strcmp(arg, "--log-every") == 0 || strcmp(arg, "--example") == 0) {
        const int logging = arg[2] == 'l';
        if (!whole(logging ? &args->log_every : &args->example, text,
                   logging ? 1 : 0)) {
            usage_error(error,
                        logging ? "%s: expected a whole number from 1"
                                : "%s: expected a whole number from 0",
                        arg);
            return 0;
        }
        return 2;
    }
    double value;
    if (!parse_number(&value, text)) {
        snprintf(error, TRAIN_ERROR_CAP,
                 "%s: expected a decimal number (such as 0.01 or 1e-3), got "
                 "%.40s",
                 arg, text);
        return 0;
    }
    if (attn_trainer_set(trainer, flag->setting, value) != ATTN_OK) {
        snprintf(error, TRAIN_ERROR_CAP, "%s", attn_trainer_error(trainer));
        return 0;
    }
    return 2;
}

static double setting(const attn_trainer *trainer, const char *name)
{
    double value = 0;
    attn_trainer_get(trainer, name, &value);
    return value;
}

static void print_ints(const char *key, const int *values, int n)
{
    printf("\"%s\":[", key);
    for (int i = 0; i < n; i++) printf("%s%d", i ? "," : "", values[i]);
    printf("]");
}

/* x in its shortest round-trip form, as every JSON number the library
 * writes: a value, so that one printf can hold several. */
typedef struct number_text {
    char text[ATTN_NUMBER_CAP];
} number_text;

static number_text number(double x)
{
    number_text out;
    attn_number_text(x, out.text);
    return out;
}

/* The last line: settings, then the example (ints: its tokens, targets and
 * counted positions, then room for the predictions, each [seqLength]) and
 * its attention. */
static int print_summary(attn_trainer *trainer, const train_args *args,
                         int *ints)
{
    const int t = (int)setting(trainer, "seqLength");
    const int layers = (int)setting(trainer, "layers");
    const int heads = (int)setting(trainer, "heads");
    double *weights = malloc((size_t)layers * heads * t * t * sizeof *weights);
    if (weights == NULL) return ATTN_ERR_NOMEM;
    const int *tokens = ints, *targets = ints + t, *counted = ints + 2 * t;
    int *predicted = ints + 3 * t;
    const int status = attn_trainer_predict(trainer, predicted, weights, tokens,
                                            t);
    if (status == ATTN_OK) {
        printf("{\"config\":{\"task\":\"%s\"", args->task);
        for (int s = 0; attn_trainer_setting(s) != NULL; s++)
            printf(",\"%s\":%s", attn_trainer_setting(s),
                   number(setting(trainer, attn_trainer_setting(s))).text);
        printf("},\"example\":{\"index\":%d,", args->example);
        print_ints("tokens", tokens, t);
        printf(",");
        print_ints("targets", targets, t);
        printf(",");
        print_ints("counted", counted, t);
        printf(",");
        print_ints("predicted", predicted, t);
        printf(",\"attention\":[");
        for (int l = 0; l < layers; l++)
            for (int h = 0; h < heads; h++) {
                printf("%s[", l + h ? "," : "");
                for (int i = 0; i < t; i++) {
                    printf("%s[", i ? "," : "");
                    const double *row = weights +
                                        (((size_t)l * heads + h) * t + i) * t;
                    for (int j = 0; j < t; j++)
                        printf("%s%s", j ? "," : "", number(row[j]).text);
                    printf("]");
                }
                printf("]");
            }
        printf("]}}\n");
    }
    free(weights);
    return status;
}

/* The steps, a line per log_every of them. */
static int run_steps(attn_trainer *trainer, const train_args *args)
{
    const int steps = (int)setting(trainer, "steps");
    const int every = args->log_every > 0 ? args->log_every : 10;
    for (int done = 0; done < steps;) {
        const int count = steps - done < every ? steps - done : every;
        double loss, held_loss, accuracy;
        int status = attn_trainer_step(trainer, count, &loss);
        if (status == ATTN_OK)
            status = attn_trainer_evaluate(trainer, &held_loss, &accuracy);
        if (status != ATTN_OK) return status;
        done += count;
        printf("{\"step\":%d,\"loss\":%s,\"heldOutLoss\":%s,"
               "\"accuracy\":%s}\n",
               done, number(loss).text, number(held_loss).text,
               number(accuracy).text);
    }
    return ATTN_OK;
}

static int train(attn_trainer *trainer, const train_args *args, char *error)
{
    const int t = (int)setting(trainer, "seqLength");
    int *ints = malloc(4 * (size_t)t * sizeof *ints);
    /* The example first: taking it builds the model, so every setting and
     * the example are checked before the first step (the held-out set is
     * the same before and after training). */
    int status = ints == NULL
                     ? ATTN_ERR_NOMEM
                     : attn_trainer_example(trainer, ints, ints + t,
                                            ints + 2 * t, args->example);
    if (status == ATTN_OK) status = run_steps(trainer, args);
    if (status == ATTN_OK) status = print_summary(trainer, args, ints);
    /* The trainer's own message, or (for this file's allocations) the
     * status's. */
    if (status != ATTN_OK)
        snprintf(error, TRAIN_ERROR_CAP, "%s",
                 *attn_trainer_error(trainer) != '\0'
                     ? attn_trainer_error(trainer)
                     : attn_status_text(status));
    free(ints);
    return status;
}

/* exit_status, or 1 when what went to standard output did not all reach
 * it (a full disk, a closed pipe). */
static int written(int exit_status)
{
    if (fflush(stdout) == 0 && !ferror(stdout)) return exit_status;
    fprintf(stderr, "attn train: cannot write the result: %s\n",
            strerror(errno));
    return 1;
}

/* The library's tasks, "copy, reverse, ...", between `before` and `after`. */
static void print_tasks(FILE *out, const char *before, const char *after)
{
    for (int i = 0; attn_trainer_task(i) != NULL; i++)
        fprintf(out, "%s%s", i > 0 ? ", " : before, attn_trainer_task(i));
    fputs(after, out);
}

int attn_cli_train(int argc, char **argv)
{
    char error[TRAIN_ERROR_CAP] = "";
    train_args args = {NULL, 10, 0};
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--task") == 0) args.task = argv[i + 1];
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(train_help, stdout);
            print_tasks(stdout, " ", ".\n");
            return written(0);
        }
    if (args.task == NULL) {
        fprintf(stderr, "attn train: --task is required");
        print_tasks(stderr, " (", ")\n");
        return 2;
    }
    attn_trainer *trainer;
    int status = attn_trainer_create(&trainer, args.task, NULL);
    if (status == ATTN_ERR_OPTION) {
        fprintf(stderr, "attn train: --task: unknown task");
        print_tasks(stderr, " (", ")\n");
        return 2;
    }
    if (status != ATTN_OK) {
        fprintf(stderr, "attn train: %s\n", attn_status_text(status));
        return status == ATTN_ERR_NOMEM ? 1 : 2;
    }
    /* attn's limit, until --max-bytes says otherwise */
    attn_trainer_set_max_bytes(trainer, ATTN_PROBLEM_DEFAULT_MAX_BYTES);
    int exit_status = 0;
    for (int i = 1; i < argc && exit_status == 0;) {
        if (strcmp(argv[i], "--task") == 0) {
            i += 2;
            continue;
        }
        const int took = apply_flag(trainer, &args, argc, argv, i, error);
        if (took == 0) {
            if (error[0] == '\0')
                snprintf(error, TRAIN_ERROR_CAP, "%s",
                         attn_trainer_error(trainer));
            exit_status = 2;
        }
        i += took;
    }
    if (exit_status == 0 && train(trainer, &args, error) != ATTN_OK)
        exit_status = 2;
    if (exit_status != 0) fprintf(stderr, "attn train: %s\n", error);
    attn_trainer_destroy(trainer);
    return written(exit_status);
}
