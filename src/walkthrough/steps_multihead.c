/* steps_multihead.c: the walkthrough of multiHead: projections, each head's
 * attention, the concatenation and W_o. */
#include "attention.h"
#include "walkthrough/walker.h"

#include <stdio.h>

#define TEX_PROJECTIONS "Q = XW_Q,\\quad K = XW_K,\\quad V = XW_V"
#define TEX_MULTIHEAD                                       \
    "\\operatorname{MultiHead}(X) = \\operatorname{Concat}" \
    "(\\text{head}_1, \\dots, \\text{head}_h)\\, W_O"

static int is_identity(const double *w, int rows, int cols)
{
    if (w == NULL || rows != cols) return 0;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            if (w[(size_t)r * (size_t)cols + (size_t)c] != (r == c)) return 0;
    return 1;
}

/* out[i, c] = Σ_t x[i, t] × w[t, c] (+ bias[c]) = value, for every cell. */
static void product_equations(attn__walker *walker, const char *title,
                              const char *out_name, const double *out,
                              const char *x_name, const double *x,
                              const char *w_name, const double *w,
                              const char *bias_name, const double *bias,
                              int rows, int inner, int cols, int b,
                              const attn__labels *row_labels)
{
    if (inner > ATTN__MAX_TERMS || rows * cols > ATTN__DETAIL_CELLS) return;
    const int batch = walker->info->batched ? b : -1;
    char rt[ATTN__LABEL_CAP];
    for (int i = 0; i < rows; i++)
        for (int c = 0; c < cols; c++) {
            const double value = out[(size_t)i * (size_t)cols + (size_t)c];
            attn__eq_begin(walker, "%s[%s, %d]", title,
                           attn__walk_label(row_labels, i, rt, sizeof rt),
                           c + 1);
            int kids[ATTN__MAX_KIDS + 1];
            for (int t = 0; t < inner; t++) {
                const double a = x[(size_t)i * (size_t)inner + (size_t)t];
                const double m = w[(size_t)t * (size_t)cols + (size_t)c];
                kids[t] = attn__binary(
                    walker, ATTN__OP_MUL, a * m,
                    attn__leaf(walker, a,
                               attn__batched(attn__ref2(x_name, i, t), batch)),
                    attn__leaf(walker, m, attn__ref2(w_name, t, c)));
            }
            int count = inner;
            if (bias != NULL)
                kids[count++] = attn__leaf(walker, bias[c],
                                           attn__ref1(bias_name, c));
            attn__eq_chain(walker, count == 1
                                       ? kids[0]
                                       : attn__op_node(walker, ATTN__OP_ADD,
                                                       value, kids, count));
            attn__eq_chain(
                walker,
                attn__leaf(walker, value,
                           attn__batched(attn__ref2(out_name, i, c), batch)));
            attn__eq_emit(walker);
        }
}

static void show_weights(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    static const char *const names[] = {"wq", "wk", "wv", "wo"};
    static const char *const titles[] = {"W_q", "W_k", "W_v", "W_o"};
    static const char *const notes[] = {"d_in × d_model", "d_kv_in × d_model",
                                        "d_kv_in × d_model", "d_model × d_out"};
    const int rows[] = {info->d_in, info->d_kv_in, info->d_kv_in,
                        info->d_model};
    const int cols[] = {info->d_model, info->d_model, info->d_model,
                        info->d_out};
    for (int i = 0; i < 4; i++)
        attn__walk_show(walker, titles[i], names[i], notes[i],
                        attn__walk_field(walker, names[i]), (size_t)cols[i],
                        rows[i], cols[i], &attn__index_labels,
                        &attn__index_labels);
    static const char *const biases[] = {"bq", "bk", "bv", "bo"};
    static const char *const no_name[] = {""};
    const attn__labels vector_row = {no_name, ""};
    for (int i = 0; i < 4; i++) {
        const attn__value *bias = attn__field_value(walker->problem, biases[i]);
        if (bias != NULL)
            attn__walk_show(walker, biases[i], biases[i], NULL, bias->data,
                            (size_t)bias->dims[0], 1, bias->dims[0],
                            &vector_row, &attn__index_labels);
    }
}

static void inputs_step(attn__walker *walker, const char *prefix, int b,
                        int cross)
{
    const attn__run_info *info = walker->info;
    const int batch = info->batched ? b : -1;
    char id[ATTN__ID_CAP];
    snprintf(id, sizeof id, "%sinputs", prefix);
    const int identities = is_identity(attn__walk_field(walker, "wq"),
                                       info->d_in, info->d_model) &&
                           is_identity(attn__walk_field(walker, "wk"),
                                       info->d_kv_in, info->d_model) &&
                           is_identity(attn__walk_field(walker, "wv"),
                                       info->d_kv_in, info->d_model);
    attn__walk_step(walker, id, "Start from the token embeddings");
    attn__walk_sentence(walker,
                        "Each token arrives as a row of numbers, its "
                        "embedding (X). Three weight matrices turn every row "
                        "into a query, a key and a value. %s",
                        identities ? "Here all three are the identity, so Q, "
                                     "K and V equal X."
                                   : "Each weight matrix mixes the "
                                     "embedding’s columns in its own way, so "
                                     "Q, K and V differ.");
    attn__walk_formula(walker, TEX_PROJECTIONS,
                       "Q = X W_Q, K = X W_K, V = X W_V");
    static const char *const read[] = {"x", "wq", "wk", "wv"};
    for (int i = 0; i < 4; i++)
        attn__walk_region(walker, 0, read[i], i == 0 ? batch : -1,
                          ATTN__REGION_ALL, 0, 0);
    attn__walk_show(walker, "X", "x", "n_q × d_in",
                    attn__walk_field(walker, "x") +
                        attn__item(b, info->n_q, info->d_in),
                    (size_t)info->d_in, info->n_q, info->d_in, &info->queries,
                    &attn__index_labels);
    if (cross)
        attn__walk_show(walker, "X_kv", "xkv", "n_kv × d_kv_in",
                        attn__walk_field(walker, "xkv") +
                            attn__item(b, info->n_k, info->d_kv_in),
                        (size_t)info->d_kv_in, info->n_k, info->d_kv_in,
                        &info->keys, &attn__index_labels);
    if (b == 0) show_weights(walker);
    attn__walk_step_end(walker);
}

static void projection_step(attn__walker *walker, const char *prefix, int b,
                            int which, int cross)
{
    const attn__run_info *info = walker->info;
    static const char *const targets[] = {"q", "k", "v"};
    static const char *const titles[] = {"Q", "K", "V"};
    static const char *const weights[] = {"wq", "wk", "wv"};
    static const char *const weight_titles[] = {"W_Q", "W_K", "W_V"};
    static const char *const biases[] = {"bq", "bk", "bv"};
    static const char *const roles[] = {"query", "key", "value"};
    const int batch = info->batched ? b : -1;
    const int rows = which == 0 ? info->n_q : info->n_k;
    const int inner = which == 0 ? info->d_in : info->d_kv_in;
    const char *source = which > 0 && cross ? "xkv" : "x";
    const attn__labels *labels = which == 0 ? &info->queries : &info->keys;
    char id[ATTN__ID_CAP];
    snprintf(id, sizeof id, "%sproject-%s", prefix, targets[which]);
    attn__walk_step(walker, id, "Project to %s", titles[which]);
    attn__walk_sentence(
        walker,
        "Every row of %s times %s gives that token's "
        "%s vector: entry c is the sum of the row's numbers, "
        "each multiplied by column c of the weight matrix%s.",
        which > 0 && cross ? "X_kv" : "X", weight_titles[which], roles[which],
        attn__walk_field(walker, biases[which]) ? ", plus the bias" : "");
    attn__walk_formula(walker, TEX_PROJECTIONS,
                       "Q = X W_Q, K = X W_K, V = X W_V");
    attn__walk_region(walker, 0, source, batch, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 0, weights[which], -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 1, targets[which], batch, ATTN__REGION_ALL, 0, 0);
    const double *out = attn__walk_result(walker, targets[which]) +
                        attn__item(b, rows, info->d_model);
    product_equations(walker, titles[which], targets[which], out, source,
                      attn__walk_field(walker, source) +
                          attn__item(b, rows, inner),
                      weights[which], attn__walk_field(walker, weights[which]),
                      biases[which], attn__walk_field(walker, biases[which]),
                      rows, inner, info->d_model, b, labels);
    attn__walk_show(walker, titles[which], targets[which],
                    which == 0 ? "n_q × d_model" : "n_kv × d_model", out,
                    (size_t)info->d_model, rows, info->d_model, labels,
                    &attn__index_labels);
    attn__walk_step_end(walker);
}

static void head_steps(attn__walker *walker, const char *prefix, int b, int h)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, n_k = info->n_k, d_head = info->d_k;
    const size_t width = (size_t)info->d_model, column = (size_t)h * d_head;
    const size_t grid = attn__item(b, n_q, n_k);
    const attn__result *scores = attn__find_result(walker->problem, "scores",
                                                   1);
    const attn__result *scaled = attn__find_result(walker->problem, "scaled",
                                                   1);
    const attn__result *weights = attn__find_result(walker->problem, "weights",
                                                    1);
    const attn__result *output = attn__find_result(walker->problem, "output",
                                                   1);
    char result_prefix[24], id_prefix[24], q_title[16], k_title[16],
        v_title[16];
    snprintf(result_prefix, sizeof result_prefix, "heads.%d.", h);
    snprintf(id_prefix, sizeof id_prefix, "%sh%d-", prefix, h + 1);
    snprintf(q_title, sizeof q_title, "Q_%d", h + 1);
    snprintf(k_title, sizeof k_title, "K_%d", h + 1);
    snprintf(v_title, sizeof v_title, "V_%d", h + 1);
    const attn__walk_block block = {
        .q = attn__walk_result(walker, "q") +
             attn__item(b, n_q, info->d_model) + column,
        .k = attn__walk_result(walker, "k") +
             attn__item(b, n_k, info->d_model) + column,
        .v = attn__walk_result(walker, "v") +
             attn__item(b, n_k, info->d_model) + column,
        .q_stride = width,
        .k_stride = width,
        .v_stride = width,
        .q_column = (int)column,
        .q_name = "q",
        .k_name = "k",
        .v_name = "v",
        .q_title = q_title,
        .k_title = k_title,
        .v_title = v_title,
        .prefix = result_prefix,
        .id_prefix = id_prefix,
        .scores = scores->data + (size_t)h * scores->count + grid,
        .scaled = scaled->data + (size_t)h * scaled->count + grid,
        .weights = weights->data + (size_t)h * weights->count + grid,
        .output = output->data + (size_t)h * output->count +
                  attn__item(b, n_q, d_head),
        .output_stride = (size_t)d_head,
        .n_q = n_q,
        .n_k = n_k,
        .d_k = d_head,
        .d_v = d_head,
        .batch_index = b,
        .batch = info->batched ? b : -1,
    };
    if (info->num_heads > 1) {
        attn__walk_heading(walker, 2,
                           "Head %d: columns %d to %d of Q, K and "
                           "V",
                           h + 1, h * d_head + 1, (h + 1) * d_head);
        if (info->batched)
            snprintf(walker->group, sizeof walker->group,
                     "Batch item %d › Head %d", b + 1, h + 1);
        else
            snprintf(walker->group, sizeof walker->group, "Head %d", h + 1);
    }
    attn__walk_attention_block(walker, &block);
}

void attn__steps_multihead(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, d_model = info->d_model;
    const int cross = attn__field_value(walker->problem, "xkv") != NULL;
    const double *bo = attn__walk_field(walker, "bo");
    /* One head with W_o = I and no b_o: the output is the head's. */
    const int mixes = info->num_heads > 1 || bo != NULL ||
                      !is_identity(attn__walk_field(walker, "wo"), d_model,
                                   info->d_out);
    char intro[512];
    snprintf(intro, sizeof intro,
             "Queries n_q = %d, keys n_kv = %d; "
             "d_model = %d split into numHeads = %d heads of d_head = %d "
             "columns; each head is scaled dot-product attention; the heads "
             "are concatenated and multiplied by W_o (d_out = %d).%s",
             n_q, info->n_k, d_model, info->num_heads, info->d_k, info->d_out,
             info->batched ? " A batch: each item is computed on its own."
                           : "");
    walker->sink->begin(walker, "Multi-head attention", intro);
    for (int b = 0; b < attn__walk_items(info); b++) {
        if (!attn__walk_begin_item(walker, b)) break;
        char prefix[16], id[ATTN__ID_CAP], group[ATTN__TITLE_CAP];
        snprintf(group, sizeof group, "%s", walker->group);
        attn__walk_id_prefix(walker, b, prefix, sizeof prefix);
        inputs_step(walker, prefix, b, cross);
        for (int which = 0; which < 3; which++)
            projection_step(walker, prefix, b, which, cross);
        const int depth = walker->depth;
        for (int h = 0; h < info->num_heads; h++) {
            if (h == ATTN__SHOW_HEADS) {
                attn__walk_heading(walker, 2,
                                   "Heads %d to %d are computed "
                                   "the same way",
                                   h + 1, info->num_heads);
                break;
            }
            walker->depth = depth + (info->num_heads > 1);
            head_steps(walker, prefix, b, h);
        }
        walker->depth = depth;
        snprintf(walker->group, sizeof walker->group, "%s", group);
        if (mixes) {
            const int batch = info->batched ? b : -1;
            snprintf(id, sizeof id, "%sconcat", prefix);
            attn__walk_step(walker, id, "Concatenate the head outputs");
            attn__walk_sentence(walker,
                                "The heads’ outputs, each d_k = %d "
                                "wide, are laid side by side in head order, "
                                "which gives back a d_model-wide row (%d) per "
                                "token.",
                                info->d_k, d_model);
            attn__walk_region(walker, 1, "concat", batch, ATTN__REGION_ALL, 0,
                              0);
            const double *concat = attn__walk_result(walker, "concat") +
                                   attn__item(b, n_q, d_model);
            attn__walk_show(walker, "concat", "concat", "n_q × d_model", concat,
                            (size_t)d_model, n_q, d_model, &info->queries,
                            &attn__index_labels);
            attn__walk_step_end(walker);

            snprintf(id, sizeof id, "%smix", prefix);
            attn__walk_step(walker, id, "Output = concat W_o%s",
                            bo != NULL ? " + b_o" : "");
            attn__walk_sentence(walker, "A last projection W_o lets every "
                                        "output column draw on every head.");
            attn__walk_formula(walker, TEX_MULTIHEAD,
                               "MultiHead(X) = Concat(head_1, …, head_h) W_o");
            attn__walk_region(walker, 0, "concat", batch, ATTN__REGION_ALL, 0,
                              0);
            attn__walk_region(walker, 0, "wo", -1, ATTN__REGION_ALL, 0, 0);
            attn__walk_region(walker, 1, "output", batch, ATTN__REGION_ALL, 0,
                              0);
            const double *output = attn__walk_result(walker, "output") +
                                   attn__item(b, n_q, info->d_out);
            product_equations(walker, "output", "output", output, "concat",
                              concat, "wo", attn__walk_field(walker, "wo"),
                              "bo", bo, n_q, d_model, info->d_out, b,
                              &info->queries);
            attn__walk_show(walker, "output", "output", "n_q × d_out", output,
                            (size_t)info->d_out, n_q, info->d_out,
                            &info->queries, &attn__index_labels);
            attn__walk_step_end(walker);
        }
    }
}
