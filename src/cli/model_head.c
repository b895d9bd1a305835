/* model_head.c: `attn model run --layer L --head H`: one head's queries,
 * keys and values on the text (attn_model_head) as a scaled dot-product
 * problem with a causal mask, its walkthrough in any format. */
#include "model_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LABEL_CAP = 16, CLI_ERROR_CAP = 1024 };

/* The problem's tokens, q, k, v and mask set; its status. */
static int set_fields(attn_problem *problem, const double *qkv, int n, int d,
                      const int *ids, int layer, int head)
{
    const int dims[2] = {n, d};
    const char *names[3] = {"q", "k", "v"};
    int status = ATTN_OK;
    for (int f = 0; f < 3 && status == ATTN_OK; f++)
        status = attn_problem_set_tensor(problem, names[f], 2, dims,
                                         qkv +
                                             (size_t)f * (size_t)n * (size_t)d);
    if (status == ATTN_OK)
        status = attn_problem_set_string(problem, "mask", "causal");
    char(*labels)[LABEL_CAP] = malloc((size_t)n * sizeof *labels);
    const char **pointers = malloc((size_t)n * sizeof *pointers);
    if (labels == NULL || pointers == NULL) status = ATTN_ERR_NOMEM;
    for (int i = 0; i < n && status == ATTN_OK; i++) {
        cli_token_label(labels[i], LABEL_CAP, ids[i], 0);
        pointers[i] = labels[i];
    }
    if (status == ATTN_OK)
        status = attn_problem_set_strings(problem, "tokens", n, pointers);
    char title[80];
    snprintf(title, sizeof title, "Layer %d, head %d of the model", layer,
             head);
    if (status == ATTN_OK)
        status = attn_problem_set_document(problem, title, 0);
    free(labels);
    free(pointers);
    return status;
}

int cli_model_head(attn_model *model, cli_text *out, const int *ids, int n,
                   int layer, int head, int format, char *error)
{
    const attn_decoder_config *c = attn_model_config(model);
    const int d = c->hidden_size / c->num_attention_heads;
    const size_t cells = n > 0 && n <= c->max_position_embeddings
                             ? (size_t)n * (size_t)d
                             : 1;
    double *qkv = malloc(3 * cells * sizeof *qkv);
    if (qkv == NULL) return ATTN_ERR_NOMEM;
    int status = attn_model_head(model, qkv, qkv + cells, qkv + 2 * cells, ids,
                                 n, layer, head);
    if (status != ATTN_OK) {
        free(qkv);
        return status;
    }
    attn_problem *problem = NULL;
    status = attn_problem_create(&problem, "scaledDotProduct", NULL);
    if (status == ATTN_OK)
        status = set_fields(problem, qkv, n, d, ids, layer, head);
    if (status == ATTN_OK) status = attn_problem_run(problem);
    size_t length = 0;
    if (status == ATTN_OK)
        status = attn_problem_format(problem, format, NULL, 0, &length);
    char *text = status == ATTN_OK ? malloc(length + 1) : NULL;
    if (status == ATTN_OK && text == NULL) status = ATTN_ERR_NOMEM;
    if (status == ATTN_OK)
        status = attn_problem_format(problem, format, text, length + 1,
                                     &length);
    if (status == ATTN_OK) cli_text_printf(out, "%s", text);
    if (status != ATTN_OK && status != ATTN_ERR_NOMEM && problem != NULL)
        snprintf(error, CLI_ERROR_CAP, "%s", attn_problem_error(problem));
    free(text);
    attn_problem_destroy(problem);
    free(qkv);
    return status;
}
