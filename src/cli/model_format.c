/* model_format.c: what `attn model` prints: a run's ids, every head's
 * attention weights and the logits, or a generation's ids, as JSON, text
 * or Markdown. Byte-level ids are shown as the bytes they stand for. */
#include "model_cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most likely next tokens shown at each position in text and
 * Markdown. */
enum { TOP = 5 };

void cli_text_printf(cli_text *text, const char *format, ...)
{
    if (text->failed) return;
    va_list args;
    va_start(args, format);
    char small[1];
    const int n = vsnprintf(small, 1, format, args);
    va_end(args);
    if (n < 0) return;
    const size_t need = text->length + (size_t)n + 1;
    if (need > text->cap) {
        const size_t cap = need > 2 * text->cap ? need : 2 * text->cap;
        char *grown = realloc(text->data, cap);
        if (grown == NULL) {
            text->failed = 1;
            return;
        }
        text->data = grown;
        text->cap = cap;
    }
    va_start(args, format);
    vsnprintf(text->data + text->length, (size_t)n + 1, format, args);
    va_end(args);
    text->length += (size_t)n;
}

/* label right-aligned in `width` columns (a column per character, not per
 * byte: "␣" is three bytes). */
static void padded(cli_text *t, const char *label, int width)
{
    int columns = 0;
    for (const char *c = label; *c; c++) columns += (*c & 0xc0) != 0x80;
    cli_text_printf(t, "%*s%s", width > columns ? width - columns : 0, "",
                    label);
}

static void json_ints(cli_text *t, const int *values, int n)
{
    cli_text_printf(t, "[");
    for (int i = 0; i < n; i++)
        cli_text_printf(t, "%s%d", i ? "," : "", values[i]);
    cli_text_printf(t, "]");
}

static void json_row(cli_text *t, const double *row, int n)
{
    cli_text_printf(t, "[");
    char number[ATTN_NUMBER_CAP];
    for (int j = 0; j < n; j++) {
        /* The shortest form that reads back, as every JSON number the
         * library writes. */
        attn_number_text(row[j], number);
        cli_text_printf(t, "%s%s", j ? "," : "", number);
    }
    cli_text_printf(t, "]");
}

static void format_json(cli_text *t, const model_result *r)
{
    const attn_decoder_config *c = r->config;
    const int n = r->n;
    cli_text_printf(t, "{\"ids\":");
    json_ints(t, r->ids, n);
    if (r->weights == NULL) {
        cli_text_printf(t, ",\"prompt\":%d}\n", r->prompt);
        return;
    }
    cli_text_printf(t, ",\"attention\":[");
    const double *w = r->weights;
    for (int l = 0; l < c->num_hidden_layers; l++) {
        cli_text_printf(t, "%s[", l ? "," : "");
        for (int h = 0; h < c->num_attention_heads; h++) {
            cli_text_printf(t, "%s[", h ? "," : "");
            for (int i = 0; i < n; i++, w += n) {
                if (i) cli_text_printf(t, ",");
                json_row(t, w, n);
            }
            cli_text_printf(t, "]");
        }
        cli_text_printf(t, "]");
    }
    cli_text_printf(t, "],\"logits\":[");
    for (int i = 0; i < n; i++) {
        if (i) cli_text_printf(t, ",");
        json_row(t, r->logits + (size_t)i * (size_t)c->vocab_size,
                 c->vocab_size);
    }
    cli_text_printf(t, "]}\n");
}

/* The ids, and the tokens they stand for. */
static void tokens_line(cli_text *t, const model_result *r, int markdown)
{
    cli_text_printf(t, markdown ? "**Ids:** " : "Ids:    ");
    for (int i = 0; i < r->n; i++)
        cli_text_printf(t, "%s%d", i ? " " : "", r->ids[i]);
    cli_text_printf(t, markdown ? "  \n**Tokens:** " : "\nTokens: ");
    for (int i = 0; i < r->n; i++) {
        char label[ATTN_TOKEN_LABEL_CAP];
        attn_token_label(label, r->ids[i], markdown);
        cli_text_printf(t, "%s%s", i ? " " : "", label);
    }
    /* A generation's text follows on the next line of the paragraph. */
    cli_text_printf(t, markdown && r->weights == NULL ? "  \n" : "\n");
}

/* The length of the UTF-8 sequence of bytes that starts ids[i], or 0 when
 * it is not one (a byte alone, or an id past 255). */
static int utf8_length(const int *ids, int i, int n)
{
    const int lead = ids[i];
    const int length = lead >= 0xc2 && lead < 0xe0   ? 2
                       : lead >= 0xe0 && lead < 0xf0 ? 3
                       : lead >= 0xf0 && lead < 0xf5 ? 4
                                                     : 0;
    if (length == 0 || i + length > n) return 0;
    for (int k = 1; k < length; k++)
        if (ids[i + k] < 0x80 || ids[i + k] > 0xbf) return 0;
    return length;
}

/* The ids read as the bytes of a text: its characters where they are
 * UTF-8, other ids as the labels of attn_token_label. */
static void text_line(cli_text *t, const model_result *r, int markdown)
{
    cli_text_printf(t, markdown ? "**Text:** `" : "Text:   ");
    for (int i = 0; i < r->n;) {
        const int length = utf8_length(r->ids, i, r->n);
        if (length > 0) {
            for (int k = 0; k < length; k++)
                cli_text_printf(t, "%c", (char)r->ids[i + k]);
            i += length;
            continue;
        }
        char label[ATTN_TOKEN_LABEL_CAP];
        if (r->ids[i] == ' ')
            snprintf(label, sizeof label, " ");
        else
            attn_token_label(label, r->ids[i], 0);
        cli_text_printf(t, "%s", label);
        i++;
    }
    cli_text_printf(t, markdown ? "`\n" : "\n");
}

/* One head's weights as a table, a row per query and a column per key. */
static void head_table(cli_text *t, const model_result *r, const double *w,
                       int markdown)
{
    const int n = r->n;
    char label[ATTN_TOKEN_LABEL_CAP];
    cli_text_printf(t, markdown ? "| query \\ key |" : "%8s", "");
    for (int j = 0; j < n; j++) {
        attn_token_label(label, r->ids[j], markdown);
        if (markdown) {
            cli_text_printf(t, " %s |", label);
        } else {
            cli_text_printf(t, " ");
            padded(t, label, 7);
        }
    }
    cli_text_printf(t, "\n");
    if (markdown) {
        cli_text_printf(t, "|---|");
        for (int j = 0; j < n; j++) cli_text_printf(t, "---:|");
        cli_text_printf(t, "\n");
    }
    for (int i = 0; i < n; i++) {
        attn_token_label(label, r->ids[i], markdown);
        if (markdown)
            cli_text_printf(t, "| %s |", label);
        else
            padded(t, label, 8);
        for (int j = 0; j < n; j++)
            cli_text_printf(t, markdown ? " %.4f |" : " %7.4f",
                            w[(size_t)i * (size_t)n + (size_t)j]);
        cli_text_printf(t, "\n");
    }
}

/* The TOP highest logits of each position, with softmax's probability. */
static void next_tokens(cli_text *t, const model_result *r, int markdown)
{
    const int vocab = r->config->vocab_size;
    double *p = malloc((size_t)vocab * sizeof *p);
    if (p == NULL) {
        t->failed = 1;
        return;
    }
    cli_text_printf(t, markdown
                           ? "| position | token | next: logit "
                             "(probability) |\n|---:|---|---|\n"
                           : "position token  next: logit (probability)\n");
    for (int i = 0; i < r->n; i++) {
        const double *z = r->logits + (size_t)i * (size_t)vocab;
        attn_softmax_rows(p, z, 1, vocab);
        char label[ATTN_TOKEN_LABEL_CAP];
        attn_token_label(label, r->ids[i], markdown);
        if (markdown) {
            cli_text_printf(t, "| %d | %s |", i, label);
        } else {
            cli_text_printf(t, "%8d ", i);
            padded(t, label, 6);
        }
        int shown[TOP];
        const int top = vocab < TOP ? vocab : TOP;
        for (int k = 0; k < top; k++) {
            int best = -1;
            for (int j = 0; j < vocab; j++) {
                int taken = 0;
                for (int s = 0; s < k; s++) taken |= shown[s] == j;
                if (!taken && (best < 0 || z[j] > z[best])) best = j;
            }
            shown[k] = best;
            attn_token_label(label, best, markdown);
            cli_text_printf(t, "%s%s %.4f (%.4f)", k ? ", " : " ", label,
                            z[best], p[best]);
        }
        cli_text_printf(t, markdown ? " |\n" : "\n");
    }
    free(p);
}

static void format_document(cli_text *t, const model_result *r, int markdown)
{
    const attn_decoder_config *c = r->config;
    cli_text_printf(t,
                    "A decoder of %d layers, %d heads (%d key/value heads), "
                    "hidden size %d, vocabulary %d\n\n",
                    c->num_hidden_layers, c->num_attention_heads,
                    c->num_key_value_heads, c->hidden_size, c->vocab_size);
    tokens_line(t, r, markdown);
    if (r->weights == NULL) {
        text_line(t, r, markdown);
        cli_text_printf(t, "\nThe prompt's %d tokens, then %d generated.\n",
                        r->prompt, r->n - r->prompt);
        return;
    }
    const size_t per_head = (size_t)r->n * (size_t)r->n;
    for (int l = 0; l < c->num_hidden_layers; l++)
        for (int h = 0; h < c->num_attention_heads; h++) {
            cli_text_printf(t,
                            markdown ? "\n## Layer %d, head %d\n\n"
                                     : "\nLayer %d, head %d: attention "
                                       "weights (a row per query, a column "
                                       "per key)\n",
                            l, h);
            head_table(
                t, r,
                r->weights +
                    ((size_t)l * (size_t)c->num_attention_heads + (size_t)h) *
                        per_head,
                markdown);
        }
    cli_text_printf(t,
                    markdown ? "\n## The next token\n\nThe %d highest "
                               "logits at each position, with softmax's "
                               "probabilities.\n\n"
                             : "\nThe next token: the %d highest logits "
                               "at each position, with softmax's "
                               "probabilities\n",
                    TOP);
    next_tokens(t, r, markdown);
}

void cli_model_format(cli_text *text, const model_result *result, int format)
{
    if (format == ATTN_FORMAT_JSON)
        format_json(text, result);
    else
        format_document(text, result, format == ATTN_FORMAT_MARKDOWN);
}
