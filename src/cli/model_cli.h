/* model_cli.h: `attn model run` and `attn model generate` (model.c, the
 * arguments and the calls; model_format.c, their output) and `attn model
 * train` (model_train.c). */
#ifndef ATTN_MODEL_CLI_H
#define ATTN_MODEL_CLI_H

#include "attention.h"

#include <stddef.h>

/* argv[0] is "model"; returns the exit status. */
int attn_cli_model(int argc, char **argv);

/* `attn model train` (model_train.c): argv[1] is "train". */
int cli_model_train(int argc, char **argv);

/* Text that grows as it is written; on running out of memory it stops
 * growing and says so in failed. */
typedef struct cli_text {
    char *data;
    size_t length, cap;
    int failed;
} cli_text;

void cli_text_printf(cli_text *text, const char *format, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* What a run or a generation printed: the ids and, for a run, every
 * head's weights [layers, heads, n, n] and the logits [n, vocab]. */
typedef struct model_result {
    const attn_decoder_config *config;
    const int *ids;
    int n;                          /* ids */
    int prompt;                     /* of them the prompt's (generate) */
    const double *weights, *logits; /* a run's, else NULL */
} model_result;

/* The result in format (ATTN_FORMAT_JSON, _TEXT or _MARKDOWN). */
void cli_model_format(cli_text *text, const model_result *result, int format);

/* The walkthrough of head `head` of layer `layer` on ids [n] in format
 * (model_head.c): an attn_status, the model's error saying why. */
int cli_model_head(attn_model *model, cli_text *out, const int *ids, int n,
                   int layer, int head, int format);

#endif
