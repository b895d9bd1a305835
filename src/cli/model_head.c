/* model_head.c: `attn model run --layer L --head H`: one head's
 * walkthrough on the text (attn_model_head_problem) in any format. */
#include "model_cli.h"

#include <stdlib.h>

int cli_model_head(attn_model *model, cli_text *out, const int *ids, int n,
                   int layer, int head, int format)
{
    attn_problem *problem = NULL;
    int status = attn_model_head_problem(model, &problem, ids, n, layer, head);
    size_t length = 0;
    if (status == ATTN_OK)
        status = attn_problem_format(problem, format, NULL, 0, &length);
    char *text = status == ATTN_OK ? malloc(length + 1) : NULL;
    if (status == ATTN_OK && text == NULL) status = ATTN_ERR_NOMEM;
    if (status == ATTN_OK)
        status = attn_problem_format(problem, format, text, length + 1,
                                     &length);
    if (status == ATTN_OK) cli_text_printf(out, "%s", text);
    free(text);
    attn_problem_destroy(problem);
    return status;
}
