/* model.c: `attn model run` and `attn model generate`: a model folder
 * loaded (the attn_model_* API), the text's bytes or the ids given run
 * through it, and the result printed (model_format.c). */
#include "attention.h"
#include "bytes.h"
#include "model_cli.h"
#include "output.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MODEL_ERROR_CAP = 1024 };

static const char model_help[] =
    "usage: attn model run [--model DIR] (--text TEXT | --ids 3,14,15)\n"
    "                      [--format json|text|markdown] [-o FILE]\n"
    "                      [--max-bytes N]\n"
    "       attn model run [--model DIR] (--text TEXT | --ids 3,14,15)\n"
    "                      --layer L --head H\n"
    "                      [--format json|text|markdown|latex|steps]\n"
    "       attn model generate [--model DIR] (--text TEXT | --ids 3,14,15)\n"
    "                      --tokens N [--temperature T --seed S] [--no-cache]\n"
    "                      [--format json|text|markdown] [-o FILE]\n"
    "                      [--max-bytes N]\n"
    "       attn model train --text FILE --out DIR [options]\n"
    "                      (attn model train --help)\n"
    "\n"
    "Runs a Llama-architecture model exactly, in float64: DIR holds its\n"
    "config.json and model.safetensors (F32, F16 or BF16), as Hugging Face\n"
    "writes them. --text TEXT is read as its UTF-8 bytes, a byte's id being\n"
    "its value, with no beginning-of-text token; --ids gives the ids.\n"
    "\n"
    "run prints the ids, every layer's and head's attention weights as\n"
    "attention[layer][head][query][key] (a row has an entry per position, 0\n"
    "after the query) and the logits as logits[position][vocab]; text and\n"
    "Markdown show each head's weights as a table and the most likely next\n"
    "tokens at each position. With --layer L --head H it prints that head's\n"
    "walkthrough on the text instead: scaled dot-product attention with a\n"
    "causal mask on its queries and keys (after the rotary embedding) and\n"
    "values, whose weights are the head's.\n"
    "\n"
    "generate prints the ids: the prompt's, then N generated. At temperature\n"
    "0 (the default) each is the highest logit's id (ties to the lowest id);\n"
    "at T > 0 it is drawn from softmax(logits / T) with the seed S (default\n"
    "0), the same ids for the same seed. --no-cache runs the whole text\n"
    "again for each token instead of using the key/value cache: the same\n"
    "ids, computed again.\n"
    "\n"
    "--max-bytes N is the most bytes the model may hold at once: its\n"
    "weights as doubles, the file while it is read, the key/value cache\n"
    "and working memory (default 268435456, 256 MiB).\n";

typedef struct model_args {
    int generate;
    const char *folder, *text, *ids, *output;
    int format, tokens, use_cache, has_tokens, has_temperature, has_seed;
    int layer, head; /* -1: not given */
    double temperature;
    uint64_t seed;
    size_t max_bytes;
} model_args;

static int usage(char *error, const char *format, const char *arg)
{
    snprintf(error, MODEL_ERROR_CAP, format, arg);
    return 2;
}

/* usage's message, and 0: no arguments taken. */
static int refuse(char *error, const char *format, const char *arg)
{
    usage(error, format, arg);
    return 0;
}

/* A decimal number as JSON writes one; -0 is 0. */
static int parse_number(double *value, const char *text)
{
    if (*text == '\0' || text[strspn(text, "0123456789+-.eE")] != '\0')
        return 0;
    char *end;
    *value = strtod(text, &end);
    if (*value == 0) *value = 0;
    return end != text && *end == '\0';
}

/* Digits only, up to max. */
static int parse_whole(uint64_t *value, const char *text, uint64_t max)
{
    uint64_t v = 0;
    const char *c = text;
    for (; *c >= '0' && *c <= '9'; c++) {
        const uint64_t digit = (uint64_t)(*c - '0');
        if (v > (max - digit) / 10) return 0;
        v = v * 10 + digit;
    }
    *value = v;
    return c != text && *c == '\0';
}

/* Any format a user names (json, text, markdown, latex, steps). */
static int parse_format(int *format, const char *name)
{
    for (int f = 0; attn_format_name(f) != NULL || f == 0; f++)
        if (attn_format_name(f) != NULL &&
            strcmp(name, attn_format_name(f)) == 0) {
            *format = f;
            return 1;
        }
    return 0;
}

/* One option and its value; how many arguments it took, or 0 with error
 * set. */
static int read_option(model_args *a, int argc, char **argv, int i, char *error)
{
    const char *arg = argv[i];
    if (strcmp(arg, "--no-cache") == 0) {
        a->use_cache = 0;
        return 1;
    }
    static const char *const valued[] = {
        "--model",     "--text",  "--ids",         "--format", "-f",
        "--tokens",    "--seed",  "--temperature", "-o",       "--output",
        "--max-bytes", "--layer", "--head"};
    int known = 0;
    for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
        known |= strcmp(arg, valued[k]) == 0;
    if (!known)
        return refuse(error, "unknown option %s (attn model --help)", arg);
    if (i + 1 >= argc) return refuse(error, "%s needs a value", arg);
    const char *value = argv[i + 1];
    uint64_t whole;
    if (strcmp(arg, "--model") == 0) {
        a->folder = value;
    } else if (strcmp(arg, "--text") == 0) {
        a->text = value;
    } else if (strcmp(arg, "--ids") == 0) {
        a->ids = value;
    } else if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
        a->output = value;
    } else if (strcmp(arg, "--format") == 0 || strcmp(arg, "-f") == 0) {
        if (!parse_format(&a->format, value))
            return refuse(error,
                          "--format: expected json, text, markdown, latex or "
                          "steps, got "
                          "\"%.40s\"",
                          value);
    } else if (strcmp(arg, "--tokens") == 0) {
        if (!parse_whole(&whole, value, INT_MAX))
            return refuse(error,
                          "--tokens: expected a whole number of tokens to "
                          "generate, got \"%.40s\"",
                          value);
        a->tokens = (int)whole;
        a->has_tokens = 1;
    } else if (strcmp(arg, "--layer") == 0 || strcmp(arg, "--head") == 0) {
        if (!parse_whole(&whole, value, INT_MAX))
            return refuse(error,
                          arg[2] == 'l' ? "--layer: expected a layer's number "
                                          "(from 0), got \"%.40s\""
                                        : "--head: expected a head's number "
                                          "(from 0), got \"%.40s\"",
                          value);
        *(arg[2] == 'l' ? &a->layer : &a->head) = (int)whole;
    } else if (strcmp(arg, "--seed") == 0) {
        if (!parse_whole(&a->seed, value, UINT64_MAX))
            return refuse(error,
                          "--seed: expected a whole number from 0 to "
                          "18446744073709551615, got \"%.40s\"",
                          value);
        a->has_seed = 1;
    } else if (strcmp(arg, "--temperature") == 0) {
        if (!parse_number(&a->temperature, value) || a->temperature < 0 ||
            a->temperature > 1e300)
            return refuse(error,
                          "--temperature: expected a number from 0 (0: the "
                          "most likely token each time), got \"%.40s\"",
                          value);
        a->has_temperature = 1;
    } else if (attn_cli_parse_bytes(value, &a->max_bytes, error,
                                    MODEL_ERROR_CAP) != 0) {
        return 0;
    }
    return 2;
}

/* What one command needs and the other does not take. */
static int check_args(const model_args *a, char *error)
{
    if ((a->text == NULL) == (a->ids == NULL))
        return usage(error, "%s",
                     "give the text as --text TEXT or its ids as --ids "
                     "3,14,15 (one of them)");
    if (a->folder == NULL)
        return usage(error, "%s",
                     "--model DIR is missing: a folder holding config.json "
                     "and model.safetensors");
    if (a->generate && !a->has_tokens)
        return usage(error, "%s",
                     "generate needs --tokens N: how many tokens to generate");
    if (!a->generate &&
        (a->has_tokens || a->has_temperature || a->has_seed || !a->use_cache))
        return usage(error, "%s",
                     "--tokens, --temperature, --seed and --no-cache are "
                     "options of attn model generate");
    if ((a->layer < 0) != (a->head < 0) || (a->generate && a->layer >= 0))
        return usage(error, "%s",
                     "--layer L and --head H go together, with attn model "
                     "run: the walkthrough of one head");
    if (a->layer < 0 && a->format != ATTN_FORMAT_JSON &&
        a->format != ATTN_FORMAT_TEXT && a->format != ATTN_FORMAT_MARKDOWN)
        return usage(error, "%s",
                     "--format: a run is json, text or markdown (latex and "
                     "steps are for one head's walkthrough, --layer L "
                     "--head H)");
    return 0;
}

/* The ids of --ids (3,14,15) or the bytes of --text, into *ids. */
static int read_ids(int **ids, int *n, const model_args *a, char *error)
{
    const char *s = a->text != NULL ? a->text : a->ids;
    const size_t most = strlen(s) + 1;
    *ids = malloc(most * sizeof **ids);
    *n = 0;
    if (*ids == NULL) return usage(error, "%s", "out of memory") - 1;
    if (a->text != NULL) {
        for (const unsigned char *c = (const unsigned char *)s; *c; c++)
            (*ids)[(*n)++] = *c;
        return 0;
    }
    for (const char *c = s;;) {
        char *end;
        errno = 0;
        const long id = c[0] >= '0' && c[0] <= '9' ? strtol(c, &end, 10) : -1;
        if (id < 0 || errno != 0 || id > INT_MAX || end == c ||
            (*end != ',' && *end != '\0'))
            return usage(error,
                         "--ids: expected token ids (whole numbers) "
                         "separated by commas, such as 3,14,15; got "
                         "\"%.60s\"",
                         s);
        (*ids)[(*n)++] = (int)id;
        if (*end == '\0') return 0;
        c = end + 1;
    }
}

/* Runs or generates, and formats the result into out; error says why
 * when the outputs would not fit in --max-bytes. */
static int compute(attn_model *model, cli_text *out, const model_args *a,
                   const int *ids, int n, char *error)
{
    const attn_decoder_config *c = attn_model_config(model);
    model_result r = {c, ids, n, n, NULL, NULL};
    int status;
    double *memory = NULL;
    int *all = NULL;
    if (a->layer >= 0)
        return cli_model_head(model, out, ids, n, a->layer, a->head, a->format);
    if (!a->generate) {
        /* The weights, then the logits, within --max-bytes too (the
         * library refuses n beyond max_position_embeddings first). */
        const int counted = n > c->max_position_embeddings ? 0 : n;
        const double cells = (double)c->num_hidden_layers *
                                 c->num_attention_heads * counted * counted +
                             (double)counted * c->vocab_size;
        if (cells * sizeof(double) > (double)a->max_bytes) {
            snprintf(error, MODEL_ERROR_CAP,
                     "the attention weights and logits of %d tokens take "
                     "%.0f bytes, more than --max-bytes %zu",
                     n, cells * sizeof(double), a->max_bytes);
            return ATTN_ERR_TOO_LARGE;
        }
        const size_t weights = (size_t)c->num_hidden_layers *
                               (size_t)c->num_attention_heads *
                               (size_t)counted * (size_t)counted;
        memory = malloc(((size_t)cells + 1) * sizeof *memory);
        if (memory == NULL) return ATTN_ERR_NOMEM;
        status = attn_model_run(model, memory, memory + weights, ids, n);
        r.weights = memory;
        r.logits = memory + weights;
    } else {
        const long total = (long)n + a->tokens;
        all = malloc((size_t)(total > 0 ? total : 1) * sizeof *all);
        if (all == NULL) return ATTN_ERR_NOMEM;
        status = attn_model_generate(model, all, ids, n, a->tokens,
                                     a->temperature, a->seed, a->use_cache);
        r.ids = all;
        r.n = n + a->tokens;
    }
    if (status == ATTN_OK) cli_model_format(out, &r, a->format);
    free(memory);
    free(all);
    return status;
}

static int model_command(model_args *a, char *error)
{
    int *ids = NULL, n = 0;
    int exit_status = read_ids(&ids, &n, a, error);
    if (exit_status != 0) {
        free(ids);
        return exit_status;
    }
    attn_model *model;
    int status = attn_model_create(&model, NULL);
    if (status == ATTN_OK) attn_model_set_max_bytes(model, a->max_bytes);
    if (status == ATTN_OK) status = attn_model_load_folder(model, a->folder);
    cli_text out = {NULL, 0, 0, 0};
    if (status == ATTN_OK) status = compute(model, &out, a, ids, n, error);
    if (status == ATTN_OK && out.failed) status = ATTN_ERR_NOMEM;
    if (status != ATTN_OK && error[0] != '\0') {
        exit_status = 2;
    } else if (status != ATTN_OK) {
        const char *message = model != NULL && *attn_model_error(model)
                                  ? attn_model_error(model)
                                  : attn_status_text(status);
        snprintf(error, MODEL_ERROR_CAP, "%s", message);
        exit_status = status == ATTN_ERR_NOMEM ? 1 : 2;
    } else {
        exit_status = attn_cli_write_output(a->output, out.data, out.length,
                                            error, MODEL_ERROR_CAP);
    }
    free(out.data);
    free(ids);
    attn_model_destroy(model);
    return exit_status;
}

int attn_cli_model(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "train") == 0)
        return cli_model_train(argc, argv);
    char error[MODEL_ERROR_CAP] = "";
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(model_help, stdout);
            if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
            fprintf(stderr, "attn model: cannot write the help: %s\n",
                    strerror(errno));
            return 1;
        }
    model_args a = {0};
    a.use_cache = 1;
    a.layer = a.head = -1;
    a.format = ATTN_FORMAT_JSON;
    a.max_bytes = ATTN_MODEL_DEFAULT_MAX_BYTES;
    int exit_status = 0;
    if (argc < 2 ||
        (strcmp(argv[1], "run") != 0 && strcmp(argv[1], "generate") != 0))
        exit_status = usage(
            error, "%s", "expected run, generate or train (attn model --help)");
    else
        a.generate = strcmp(argv[1], "generate") == 0;
    for (int i = 2; i < argc && exit_status == 0;) {
        const int took = read_option(&a, argc, argv, i, error);
        if (took == 0) exit_status = 2;
        i += took;
    }
    if (exit_status == 0) exit_status = check_args(&a, error);
    if (exit_status == 0) exit_status = model_command(&a, error);
    if (exit_status != 0) fprintf(stderr, "attn model: %s\n", error);
    return exit_status;
}
