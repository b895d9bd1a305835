/* token_label.c: a token as a reader sees it (attn_token_label), the one
 * label the CLI's model tables, the head walkthroughs and the bindings
 * give a token. */
#include "attention.h"

#include <stdio.h>
#include <string.h>

void attn_token_label(char out[ATTN_TOKEN_LABEL_CAP], int id, int markdown)
{
    const size_t cap = ATTN_TOKEN_LABEL_CAP;
    if (id == ' ')
        snprintf(out, cap, "\xe2\x90\xa3");
    else if (id == '\n')
        snprintf(out, cap, "\\n");
    else if (id == '\t')
        snprintf(out, cap, "\\t");
    else if (markdown && id > 0 && id < 127 && strchr("|\\`*_", id) != NULL)
        snprintf(out, cap, "\\%c", id);
    else if (id > ' ' && id < 127)
        snprintf(out, cap, "%c", id);
    else if (id >= 0 && id < 256)
        snprintf(out, cap, "\\x%02x", id);
    else
        snprintf(out, cap, "<%d>", id);
}
