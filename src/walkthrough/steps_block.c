/* steps_block.c: the walkthrough of transformerBlock (tutorial 003
 * §24.11): multi-head attention, a residual sum, LayerNorm, the
 * feed-forward network, a second residual sum and LayerNorm, in post-norm
 * or pre-norm order. The residual sums are spelled out; the other stages
 * are shown as tables. */
#include "attention.h"
#include "walkthrough/walker.h"

#include <stdio.h>

#define TEX_POST                                                     \
    "x_1 = \\operatorname{LN}_1(x + \\operatorname{MHA}(x)),\\quad " \
    "y = \\operatorname{LN}_2(x_1 + \\operatorname{FFN}(x_1))"
#define TEX_PRE                                                      \
    "x_1 = x + \\operatorname{MHA}(\\operatorname{LN}_1(x)),\\quad " \
    "y = x_1 + \\operatorname{FFN}(\\operatorname{LN}_2(x_1))"

typedef struct block_item {
    int b, batch;       /* batch item; its index in refs, or -1 */
    const char *prefix; /* of step ids */
} block_item;

static const double *rows_of(const attn__walker *walker, const char *name,
                             const block_item *it, int cols)
{
    return attn__walk_result(walker, name) +
           attn__item(it->b, walker->info->n_q, cols);
}

/* One stage: a step reading `reads`, producing `name`, shown as a table. */
static void stage_step(attn__walker *walker, const block_item *it,
                       const char *id, const char *title, const char *sentence,
                       const char *reads, const char *name, int cols)
{
    const attn__run_info *info = walker->info;
    char full_id[ATTN__ID_CAP];
    snprintf(full_id, sizeof full_id, "%s%s", it->prefix, id);
    attn__walk_step(walker, full_id, "%s", title);
    attn__walk_sentence(walker, "%s", sentence);
    attn__walk_region(walker, 0, reads, it->batch, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 1, name, it->batch, ATTN__REGION_ALL, 0, 0);
    attn__walk_show(walker, name, name, NULL, rows_of(walker, name, it, cols),
                    (size_t)cols, info->n_q, cols, &info->queries,
                    &attn__index_labels);
    attn__walk_step_end(walker);
}

/* sum[i, c] = a[i, c] + b[i, c], for every cell. */
static void residual_step(attn__walker *walker, const block_item *it,
                          const char *id, const char *sum, const char *a,
                          const char *b)
{
    const attn__run_info *info = walker->info;
    const int n = info->n_q, m = info->d_model;
    const double *x = a[0] == 'x' ? attn__walk_field(walker, "x") +
                                        attn__item(it->b, n, m)
                                  : rows_of(walker, a, it, m);
    const double *y = rows_of(walker, b, it, m);
    const double *s = rows_of(walker, sum, it, m);
    char full_id[ATTN__ID_CAP], qt[ATTN__LABEL_CAP];
    snprintf(full_id, sizeof full_id, "%s%s", it->prefix, id);
    attn__walk_step(walker, full_id, "Residual: %s = %s + %s", sum, a, b);
    attn__walk_sentence(walker,
                        "The residual connection adds the stage's "
                        "input back to its output, entry by entry, so each "
                        "token keeps what it had and the stage only has to "
                        "learn a change.");
    attn__walk_region(walker, 0, a, it->batch, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 0, b, it->batch, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 1, sum, it->batch, ATTN__REGION_ALL, 0, 0);
    for (int i = 0; i < n && n * m <= ATTN__DETAIL_CELLS; i++)
        for (int c = 0; c < m; c++) {
            const size_t at = (size_t)i * (size_t)m + (size_t)c;
            attn__eq_begin(walker, "%s[%s, %d]", sum,
                           attn__walk_label(&info->queries, i, qt, sizeof qt),
                           c + 1);
            attn__eq_chain(
                walker,
                attn__binary(
                    walker, ATTN__OP_ADD, s[at],
                    attn__leaf(walker, x[at],
                               attn__batched(attn__ref2(a, i, c), it->batch)),
                    attn__leaf(walker, y[at],
                               attn__batched(attn__ref2(b, i, c), it->batch))));
            attn__eq_chain(
                walker,
                attn__leaf(walker, s[at],
                           attn__batched(attn__ref2(sum, i, c), it->batch)));
            attn__eq_emit(walker);
        }
    attn__walk_show(walker, sum, sum, NULL, s, (size_t)m, n, m, &info->queries,
                    &attn__index_labels);
    attn__walk_step_end(walker);
}

static const char ATTENTION_TEXT[] =
    "Multi-head attention mixes the tokens: each output row is a weighted "
    "average of value rows, head by head, then concatenated and multiplied "
    "by W_o.";
static const char NORM_TEXT[] =
    "LayerNorm rescales each row to mean 0 and variance 1 (ε = 1e-5), then "
    "multiplies by gamma and adds beta, so the next stage sees numbers of a "
    "steady size.";
static const char HIDDEN_TEXT[] =
    "The feed-forward network works on each token on its own: first "
    "ReLU(x W1 + b1), a wider hidden layer where negative entries become 0.";
static const char FFN_TEXT[] =
    "Then hidden W2 + b2 brings each row back to d_model.";

static void item_steps(attn__walker *walker, const block_item *it)
{
    const attn__run_info *info = walker->info;
    const int m = info->d_model, pre = info->norm == ATTN_NORM_PRE;
    char id[ATTN__ID_CAP];
    snprintf(id, sizeof id, "%sinputs", it->prefix);
    attn__walk_step(walker, id, "The token vectors");
    attn__walk_sentence(walker,
                        "Each row of x is one token's vector of "
                        "d_model = %d numbers; the block keeps that shape "
                        "from input to output.",
                        m);
    attn__walk_formula(walker, pre ? TEX_PRE : TEX_POST,
                       pre ? "x1 = x + MHA(LN1(x)), y = x1 + FFN(LN2(x1))"
                           : "x1 = LN1(x + MHA(x)), y = LN2(x1 + FFN(x1))");
    attn__walk_region(walker, 0, "x", it->batch, ATTN__REGION_ALL, 0, 0);
    attn__walk_show(
        walker, "x", "x", "n × d_model",
        attn__walk_field(walker, "x") + attn__item(it->b, info->n_q, m),
        (size_t)m, info->n_q, m, &info->queries, &attn__index_labels);
    attn__walk_step_end(walker);
    if (pre) {
        stage_step(walker, it, "ln1", "LayerNorm 1", NORM_TEXT, "x", "ln1", m);
        stage_step(walker, it, "attention", "Multi-head attention of ln1",
                   ATTENTION_TEXT, "ln1", "attention", m);
        residual_step(walker, it, "sum1", "sum1", "x", "attention");
        stage_step(walker, it, "ln2", "LayerNorm 2", NORM_TEXT, "sum1", "ln2",
                   m);
        stage_step(walker, it, "ffn-hidden", "Feed-forward: hidden layer",
                   HIDDEN_TEXT, "ln2", "ffnHidden", info->d_ff);
        stage_step(walker, it, "ffn", "Feed-forward: back to d_model", FFN_TEXT,
                   "ffnHidden", "ffn", m);
        residual_step(walker, it, "sum2", "sum2", "sum1", "ffn");
    } else {
        stage_step(walker, it, "attention", "Multi-head attention",
                   ATTENTION_TEXT, "x", "attention", m);
        residual_step(walker, it, "sum1", "sum1", "x", "attention");
        stage_step(walker, it, "ln1", "LayerNorm 1", NORM_TEXT, "sum1", "ln1",
                   m);
        stage_step(walker, it, "ffn-hidden", "Feed-forward: hidden layer",
                   HIDDEN_TEXT, "ln1", "ffnHidden", info->d_ff);
        stage_step(walker, it, "ffn", "Feed-forward: back to d_model", FFN_TEXT,
                   "ffnHidden", "ffn", m);
        residual_step(walker, it, "sum2", "sum2", "ln1", "ffn");
        stage_step(walker, it, "ln2", "LayerNorm 2: the output", NORM_TEXT,
                   "sum2", "ln2", m);
    }
}

void attn__steps_block(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    char intro[512];
    snprintf(intro, sizeof intro,
             "A %s-norm transformer block on n = %d "
             "tokens of d_model = %d: multi-head attention with %d heads, a "
             "ReLU feed-forward network of width d_ff = %d, two residual "
             "sums and two LayerNorms.%s",
             info->norm == ATTN_NORM_PRE ? "pre" : "post", info->n_q,
             info->d_model, info->num_heads, info->d_ff,
             info->batched ? " A batch: each item is computed on its own."
                           : "");
    walker->sink->begin(walker, "Transformer block", intro);
    for (int b = 0; b < attn__walk_items(info); b++) {
        if (!attn__walk_begin_item(walker, b)) break;
        char prefix[16];
        attn__walk_id_prefix(walker, b, prefix, sizeof prefix);
        const block_item it = {b, info->batched ? b : -1, prefix};
        item_steps(walker, &it);
    }
}
