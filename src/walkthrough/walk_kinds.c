/* walk_kinds.c: the walkthrough of each kind of problem, built from
 * the shared steps in walker.c. */
#include "attention.h"
#include "walkthrough/walker.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

static const double *field_data(const attn__walker *walker, const char *name)
{
    const attn__value *value = attn__field_value(walker->problem, name);
    return value != NULL ? value->data : NULL;
}

static const attn__result *result(const attn__walker *walker,
                                  const char *name, int per_head)
{
    return attn__find_result(walker->problem, name, per_head);
}

/* The one row of a vector shown as a matrix has no label. */
static const char *const no_name[] = {""};
static const attn__labels vector_row = {no_name, ""};

/* A matrix of the inputs or results, rows*cols entries from data. */
static void show(attn__walker *walker, const char *name, const char *note,
                 const double *data, int rows, int cols,
                 const attn__labels *row_labels)
{
    const attn__matrix_view view =
        attn__view(name, note, data, (size_t)cols, rows, cols, *row_labels,
                   attn__index_labels);
    attn__walk_matrix(walker, &view);
}

/* Opens batch item b (a heading when batched); 0 when it is not shown. */
static int begin_item(attn__walker *walker, int b)
{
    const attn__run_info *info = walker->info;
    if (!info->batched) return 1;
    walker->depth = 0;
    if (b == ATTN__SHOW_BATCH) {
        attn__walk_para(walker, "Batch items %d to %d are computed the same "
                        "way and not shown.", b + 1, info->batch);
        return 0;
    }
    attn__walk_heading(walker, 2, "Batch item %d", b + 1);
    walker->depth = 1;
    walker->step = 0;
    return 1;
}

static int items_to_walk(const attn__run_info *info)
{
    return info->batch > ATTN__SHOW_BATCH ? ATTN__SHOW_BATCH + 1 : info->batch;
}

static void batch_note(attn__walker *walker)
{
    if (walker->info->batched)
        attn__walk_para(walker, "A batch of %d items; each is computed on its "
                        "own.", walker->info->batch);
}

static size_t item(int b, int rows, int cols)
{
    return (size_t)b * (size_t)rows * (size_t)cols;
}

/* ---- scaledDotProduct ---- */

static void walk_sdpa(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, n_k = info->n_k, d_k = info->d_k;
    const int d_v = info->d_v;
    attn__walk_heading(walker, 1, "Scaled dot-product attention");
    if (info->from_scores)
        attn__walk_para(walker, "From given scores S (queries n_q = %d, keys "
                        "n_k = %d): weights = softmax(S × scale)%s.",
                        n_q, n_k, info->has_output ? ", output = weights V"
                                                   : "");
    else
        attn__walk_para(walker, "Attention(Q, K, V) = softmax(Q Kᵀ × scale) "
                        "V for queries n_q = %d, keys n_k = %d, d_k = %d "
                        "and d_v = %d.", n_q, n_k, d_k, d_v);
    batch_note(walker);
    const double *q = field_data(walker, "q"), *k = field_data(walker, "k");
    const double *v = field_data(walker, "v");
    const double *given = field_data(walker, "scores");
    const attn__result *scaled = result(walker, "scaled", 0);
    const attn__result *weights = result(walker, "weights", 0);
    const attn__result *output = result(walker, "output", 0);
    const attn__result *scores = result(walker, "scores", 0);
    for (int b = 0; b < items_to_walk(info); b++) {
        if (!begin_item(walker, b)) break;
        attn__walk_heading(walker, 2, "Inputs");
        if (q != NULL) {
            show(walker, "Q", "n_q × d_k", q + item(b, n_q, d_k), n_q, d_k,
                 &info->queries);
            show(walker, "K", "n_k × d_k", k + item(b, n_k, d_k), n_k, d_k,
                 &info->keys);
        } else {
            attn__walk_para(walker, "The scores S, given (shown in step 1).");
        }
        if (v != NULL)
            show(walker, "V", "n_k × d_v", v + item(b, n_k, d_v), n_k, d_v,
                 &info->keys);
        const size_t grid = item(b, n_q, n_k);
        const attn__walk_block block = {
            .q = q ? q + item(b, n_q, d_k) : NULL,
            .k = k ? k + item(b, n_k, d_k) : NULL,
            .v = v ? v + item(b, n_k, d_v) : NULL,
            .q_stride = (size_t)d_k, .k_stride = (size_t)d_k,
            .v_stride = (size_t)d_v,
            .q_name = "Q", .k_name = "K", .v_name = "V",
            .scores = (scores ? scores->data : given) + grid,
            .scaled = scaled->data + grid,
            .weights = weights->data + grid,
            .output = output ? output->data + item(b, n_q, d_v) : NULL,
            .output_stride = (size_t)d_v,
            .n_q = n_q, .n_k = n_k, .d_k = d_k, .d_v = d_v,
            .batch_index = b,
        };
        attn__walk_attention_block(walker, &block);
    }
}

/* ---- multiHead ---- */

static void show_bias(attn__walker *walker, const char *name)
{
    const attn__value *bias = attn__field_value(walker->problem, name);
    if (bias != NULL)
        show(walker, name, NULL, bias->data, 1, bias->dims[0], &vector_row);
}

static void walk_head(attn__walker *walker, int b, int h)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, n_k = info->n_k, d_head = info->d_k;
    const size_t width = (size_t)info->d_model, column = (size_t)h * d_head;
    const size_t grid = item(b, n_q, n_k);
    const attn__result *q = result(walker, "q", 0);
    const attn__result *k = result(walker, "k", 0);
    const attn__result *v = result(walker, "v", 0);
    const attn__result *scores = result(walker, "scores", 1);
    const attn__result *scaled = result(walker, "scaled", 1);
    const attn__result *weights = result(walker, "weights", 1);
    const attn__result *output = result(walker, "output", 1);
    char q_name[16], k_name[16], v_name[16];
    snprintf(q_name, sizeof q_name, "Q_%d", h);
    snprintf(k_name, sizeof k_name, "K_%d", h);
    snprintf(v_name, sizeof v_name, "V_%d", h);
    const attn__walk_block block = {
        .q = q->data + item(b, n_q, info->d_model) + column,
        .k = k->data + item(b, n_k, info->d_model) + column,
        .v = v->data + item(b, n_k, info->d_model) + column,
        .q_stride = width, .k_stride = width, .v_stride = width,
        .q_name = q_name, .k_name = k_name, .v_name = v_name,
        .scores = scores->data + (size_t)h * scores->count + grid,
        .scaled = scaled->data + (size_t)h * scaled->count + grid,
        .weights = weights->data + (size_t)h * weights->count + grid,
        .output = output->data + (size_t)h * output->count +
                  item(b, n_q, d_head),
        .output_stride = (size_t)d_head,
        .n_q = n_q, .n_k = n_k, .d_k = d_head, .d_v = d_head,
        .batch_index = b,
    };
    attn__walk_heading(walker, 3, "Head %d: columns %d to %d of Q, K and V",
                       h + 1, h * d_head + 1, (h + 1) * d_head);
    const int depth = walker->depth, step = walker->step;
    walker->depth = depth + 2; /* its steps sit under the head's heading */
    walker->step = 0;
    attn__walk_attention_block(walker, &block);
    walker->depth = depth;
    walker->step = step;
}

static void walk_multihead(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, n_k = info->n_k, d_model = info->d_model;
    const int cross = attn__field_value(walker->problem, "xkv") != NULL;
    attn__walk_heading(walker, 1, "Multi-head attention");
    attn__walk_para(walker, "Queries n_q = %d, keys n_kv = %d; d_model = %d "
                    "split into numHeads = %d heads of d_head = %d columns; "
                    "each head is scaled dot-product attention; the heads are "
                    "concatenated and multiplied by W_o (d_out = %d).", n_q,
                    n_k, d_model, info->num_heads, info->d_k, info->d_out);
    batch_note(walker);
    attn__walk_heading(walker, 2, "Weights");
    show(walker, "W_q", "d_in × d_model", field_data(walker, "wq"),
         info->d_in, d_model, &attn__index_labels);
    show(walker, "W_k", "d_kv_in × d_model", field_data(walker, "wk"),
         info->d_kv_in, d_model, &attn__index_labels);
    show(walker, "W_v", "d_kv_in × d_model", field_data(walker, "wv"),
         info->d_kv_in, d_model, &attn__index_labels);
    show(walker, "W_o", "d_model × d_out", field_data(walker, "wo"), d_model,
         info->d_out, &attn__index_labels);
    show_bias(walker, "bq");
    show_bias(walker, "bk");
    show_bias(walker, "bv");
    show_bias(walker, "bo");
    const double *x = field_data(walker, "x");
    const double *xkv = field_data(walker, "xkv");
    for (int b = 0; b < items_to_walk(info); b++) {
        if (!begin_item(walker, b)) break;
        attn__walk_heading(walker, 2, "Inputs");
        show(walker, "X", "n_q × d_in", x + item(b, n_q, info->d_in), n_q,
             info->d_in, &info->queries);
        if (cross)
            show(walker, "X_kv", "n_kv × d_kv_in",
                 xkv + item(b, n_k, info->d_kv_in), n_k, info->d_kv_in,
                 &info->keys);
        attn__walk_step(walker, "Projections");
        attn__walk_para(walker, "Q = X W_q%s, K = %s W_k%s, V = %s W_v%s.",
                        field_data(walker, "bq") ? " + b_q" : "",
                        cross ? "X_kv" : "X",
                        field_data(walker, "bk") ? " + b_k" : "",
                        cross ? "X_kv" : "X",
                        field_data(walker, "bv") ? " + b_v" : "");
        const char *const names[] = {"Q", "K", "V"};
        const char *const fields[] = {"q", "k", "v"};
        for (int i = 0; i < 3; i++) {
            const int rows = i == 0 ? n_q : n_k;
            show(walker, names[i],
                 i == 0 ? "n_q × d_model" : "n_kv × d_model",
                 result(walker, fields[i], 0)->data + item(b, rows, d_model),
                 rows, d_model, i == 0 ? &info->queries : &info->keys);
        }
        attn__walk_step(walker, "Attention in each head");
        for (int h = 0; h < info->num_heads; h++) {
            if (h == ATTN__SHOW_HEADS) {
                attn__walk_para(walker, "Heads %d to %d are computed the same "
                                "way and not shown.", h + 1, info->num_heads);
                break;
            }
            walk_head(walker, b, h);
        }
        attn__walk_step(walker, "Concatenate the heads");
        show(walker, "concat", "n_q × d_model",
             result(walker, "concat", 0)->data + item(b, n_q, d_model), n_q,
             d_model, &info->queries);
        attn__walk_step(walker, "Output = concat W_o%s",
                        field_data(walker, "bo") ? " + b_o" : "");
        show(walker, "output", "n_q × d_out",
             result(walker, "output", 0)->data + item(b, n_q, info->d_out),
             n_q, info->d_out, &info->queries);
    }
}

/* ---- additive and luong ---- */

/* energy rows per query, then score_j = v · energy_j spelled out. */
static void energy_steps(attn__walker *walker, const char *energy_formula)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, n_k = info->n_k, d_a = info->d_a;
    const attn__result *energy = result(walker, "energy", 0);
    const attn__result *scores = result(walker, "scores", 0);
    const double *v = field_data(walker, "v");
    attn__walk_step(walker, "Energies");
    attn__walk_para(walker, "%s", energy_formula);
    for (int i = 0; i < n_q && i < ATTN__SHOW_ROWS; i++) {
        char name[64], tmp[32];
        snprintf(name, sizeof name, "energy for %s",
                 attn__label(&info->queries, i, tmp, sizeof tmp));
        const attn__matrix_view view = attn__view(
            name, "n_k × d_a", energy->data + item(i, n_k, d_a), (size_t)d_a,
            n_k, d_a, info->keys, attn__index_labels);
        attn__walk_matrix(walker, &view);
    }
    attn__walk_step(walker, "Scores: score_j = v · energy_j");
    if (d_a <= ATTN__DETAIL_WIDTH && n_q * n_k <= ATTN__DETAIL_CELLS) {
        for (int i = 0; i < n_q; i++)
            for (int j = 0; j < n_k; j++)
                attn__walk_score_item(
                    walker, "score", i, j, v, 1,
                    energy->data + item(i, n_k, d_a) + (size_t)j * (size_t)d_a,
                    1, d_a, scores->data[(size_t)i * (size_t)n_k + (size_t)j]);
    }
}

static void show_scores(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    const attn__matrix_view view = attn__view(
        "scores", "n_q × n_k", result(walker, "scores", 0)->data,
        (size_t)info->n_k, info->n_q, info->n_k, info->queries, info->keys);
    attn__walk_matrix(walker, &view);
}

/* Softmax of the scores, then the context as a weighted sum of keys. */
static void context_steps(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    const double *scores = result(walker, "scores", 0)->data;
    const double *weights = result(walker, "weights", 0)->data;
    attn__walk_softmax_step(walker, scores, weights, info->n_q, info->n_k,
                            &info->queries, &info->keys);
    attn__walk_step(walker, "Context = weights H (the keys)");
    attn__walk_weighted_sum(walker, "context", weights,
                            field_data(walker, "keys"), (size_t)info->d_h,
                            "H", result(walker, "context", 0)->data,
                            (size_t)info->d_h, info->n_q, info->n_k,
                            info->d_h, &info->queries);
}

static void query_keys_inputs(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    attn__walk_heading(walker, 2, "Inputs");
    show(walker, "s (query)", info->vector_query ? "d_s" : "n_q × d_s",
         field_data(walker, "query"), info->n_q, info->d_s, &info->queries);
    show(walker, "H (keys)", "n_k × d_h", field_data(walker, "keys"),
         info->n_k, info->d_h, &info->keys);
}

static void walk_additive(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    attn__walk_heading(walker, 1, "Additive (Bahdanau) attention");
    attn__walk_para(walker, "For each query s and key h_j: energy_j = "
                    "tanh(s W_s + h_j W_h + b), score_j = v · energy_j, "
                    "weights = softmax(scores), context = Σ_j weights_j h_j. "
                    "n_q = %d, n_k = %d, d_s = %d, d_h = %d, d_a = %d.",
                    info->n_q, info->n_k, info->d_s, info->d_h, info->d_a);
    query_keys_inputs(walker);
    show(walker, "W_s", "d_s × d_a", field_data(walker, "ws"), info->d_s,
         info->d_a, &attn__index_labels);
    show(walker, "W_h", "d_h × d_a", field_data(walker, "wh"), info->d_h,
         info->d_a, &attn__index_labels);
    show(walker, "v", NULL, field_data(walker, "v"), 1, info->d_a,
         &vector_row);
    show_bias(walker, "b");
    energy_steps(walker, "energy_j = tanh(s W_s + h_j W_h + b), one row per "
                 "key.");
    show_scores(walker);
    context_steps(walker);
}

static void walk_luong(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    static const char *const titles[] = {"dot", "general", "concat"};
    static const char *const formulas[] = {
        "score_j = s · h_j",
        "score_j = s · (h_j W)",
        "score_j = v · tanh([s; h_j] W + b)",
    };
    attn__walk_heading(walker, 1, "Luong attention (%s)",
                       titles[info->method]);
    attn__walk_para(walker, "For each query s and key h_j: %s, weights = "
                    "softmax(scores), context = Σ_j weights_j h_j. n_q = %d, "
                    "n_k = %d, d_s = %d, d_h = %d.", formulas[info->method],
                    info->n_q, info->n_k, info->d_s, info->d_h);
    query_keys_inputs(walker);
    const attn__value *w = attn__field_value(walker->problem, "w");
    if (w != NULL)
        show(walker, "W", NULL, w->data, w->dims[0], w->dims[1],
             &attn__index_labels);
    if (info->method == ATTN_LUONG_CONCAT) {
        show(walker, "v", NULL, field_data(walker, "v"), 1, info->d_a,
             &vector_row);
        show_bias(walker, "b");
        energy_steps(walker, "energy_j = tanh([s; h_j] W + b), [s; h_j] "
                     "being s and h_j side by side.");
    } else {
        attn__walk_step(walker, "Scores: %s", formulas[info->method]);
        const double *query = field_data(walker, "query");
        const double *keys = field_data(walker, "keys");
        const double *scores = result(walker, "scores", 0)->data;
        const int small = info->d_s <= ATTN__DETAIL_WIDTH &&
                          info->n_q * info->n_k <= ATTN__DETAIL_CELLS;
        for (int i = 0; small && info->method == ATTN_LUONG_DOT &&
                        i < info->n_q; i++)
            for (int j = 0; j < info->n_k; j++)
                attn__walk_score_item(
                    walker, "score", i, j, query + item(i, 1, info->d_s), 1,
                    keys + item(j, 1, info->d_h), 1, info->d_s,
                    scores[(size_t)i * (size_t)info->n_k + (size_t)j]);
    }
    show_scores(walker);
    context_steps(walker);
}

/* ---- linear ---- */

/* elu(x) + 1, the feature map of linear attention. */
static double phi(double x)
{
    return x > 0 ? x + 1.0 : exp(x);
}

static void show_phi(attn__walker *walker, const char *name,
                     const double *data, int rows, int cols,
                     const attn__labels *labels)
{
    attn__matrix_view view = attn__view(name, NULL, data, (size_t)cols, rows,
                                        cols, *labels, attn__index_labels);
    view.map = phi;
    attn__walk_matrix(walker, &view);
}

/* A labelled item "<name> = `<vector>`". */
static void vector_item(attn__walker *walker, const char *name,
                        const double *x, int n)
{
    attn__walk_begin_item(walker, 0);
    attn__walk_printf(walker, "%s = ", name);
    attn__walk_code(walker, 1);
    attn__walk_vector(walker, x, n);
    attn__walk_code(walker, 0);
    attn__walk_end(walker);
}

/* Without causal: S = Σ_j φ(k_j)ᵀ v_j and z = Σ_j φ(k_j), then each output
 * row as φ(q_i) S / (φ(q_i) · z). Called only for d_k, d_v <= 8. */
static void linear_sums(attn__walker *walker, const double *q,
                        const double *k, const double *v,
                        const double *output)
{
    const attn__run_info *info = walker->info;
    const int n_k = info->n_k, d_k = info->d_k, d_v = info->d_v;
    double s[ATTN__DETAIL_WIDTH][ATTN__DETAIL_WIDTH] = {{0}};
    double z[ATTN__DETAIL_WIDTH] = {0};
    for (int j = 0; j < n_k; j++)
        for (int a = 0; a < d_k; a++) {
            const double feature = phi(k[item(j, 1, d_k) + (size_t)a]);
            z[a] += feature;
            for (int c = 0; c < d_v; c++)
                s[a][c] += feature * v[item(j, 1, d_v) + (size_t)c];
        }
    for (int a = 0; a < d_k; a++) {
        char name[16];
        snprintf(name, sizeof name, "S[%d]", a);
        vector_item(walker, name, s[a], d_v);
    }
    vector_item(walker, "z", z, d_k);
    if (info->n_q > ATTN__SHOW_ROWS) return;
    attn__walk_step(walker, "Output: φ(q_i) S / (φ(q_i) · z)");
    for (int i = 0; i < info->n_q; i++) {
        const double *q_row = q + item(i, 1, d_k);
        attn__walk_begin_item(walker, 0);
        attn__walk_printf(walker, "output[");
        attn__walk_label(walker, &info->queries, i);
        attn__walk_printf(walker, "] = ");
        attn__walk_code(walker, 1);
        attn__walk_printf(walker, "(");
        for (int a = 0; a < d_k; a++) {
            attn__walk_printf(walker, "%s", a > 0 ? " + " : "");
            attn__walk_operand(walker, phi(q_row[a]));
            attn__walk_printf(walker, "×");
            attn__walk_vector(walker, s[a], d_v);
        }
        attn__walk_printf(walker, ") / (");
        for (int a = 0; a < d_k; a++) {
            attn__walk_printf(walker, "%s", a > 0 ? " + " : "");
            attn__walk_operand(walker, phi(q_row[a]));
            attn__walk_printf(walker, "×");
            attn__walk_operand(walker, z[a]);
        }
        attn__walk_printf(walker, ") = ");
        attn__walk_vector(walker, output + item(i, 1, d_v), d_v);
        attn__walk_code(walker, 0);
        attn__walk_end(walker);
    }
}

static void walk_linear(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, n_k = info->n_k, d_k = info->d_k;
    const int d_v = info->d_v;
    attn__walk_heading(walker, 1, "Linear attention");
    attn__walk_para(walker, "With φ(x) = elu(x) + 1 (x + 1 for x > 0, exp(x) "
                    "otherwise): output_i = φ(q_i) S / (φ(q_i) · z), where "
                    "S = Σ_j φ(k_j)ᵀ v_j and z = Σ_j φ(k_j)%s. n_q = %d, "
                    "n_k = %d, d_k = %d, d_v = %d.",
                    info->causal ? " over j ≤ i (causal)" : " over all keys",
                    n_q, n_k, d_k, d_v);
    batch_note(walker);
    const double *q = field_data(walker, "q"), *k = field_data(walker, "k");
    const double *v = field_data(walker, "v");
    const attn__result *output = result(walker, "output", 0);
    for (int b = 0; b < items_to_walk(info); b++) {
        if (!begin_item(walker, b)) break;
        attn__walk_heading(walker, 2, "Inputs");
        show(walker, "Q", "n_q × d_k", q + item(b, n_q, d_k), n_q, d_k,
             &info->queries);
        show(walker, "K", "n_k × d_k", k + item(b, n_k, d_k), n_k, d_k,
             &info->keys);
        show(walker, "V", "n_k × d_v", v + item(b, n_k, d_v), n_k, d_v,
             &info->keys);
        attn__walk_step(walker, "Feature map φ");
        show_phi(walker, "φ(Q)", q + item(b, n_q, d_k), n_q, d_k,
                 &info->queries);
        show_phi(walker, "φ(K)", k + item(b, n_k, d_k), n_k, d_k,
                 &info->keys);
        attn__walk_step(walker, "Sums over the keys");
        if (info->causal)
            attn__walk_para(walker, "Causal: row i uses S_i = Σ_{j ≤ i} "
                            "φ(k_j)ᵀ v_j and z_i = Σ_{j ≤ i} φ(k_j), running "
                            "sums over the keys so far.");
        else if (d_k <= ATTN__DETAIL_WIDTH && d_v <= ATTN__DETAIL_WIDTH)
            linear_sums(walker, q + item(b, n_q, d_k), k + item(b, n_k, d_k),
                        v + item(b, n_k, d_v),
                        output->data + item(b, n_q, d_v));
        else
            attn__walk_para(walker, "S is %d×%d and z has %d entries: too "
                            "many to spell out.", d_k, d_v, d_k);
        if (info->causal || d_k > ATTN__DETAIL_WIDTH ||
            d_v > ATTN__DETAIL_WIDTH || n_q > ATTN__SHOW_ROWS)
            attn__walk_step(walker, "Output");
        show(walker, "output", "n_q × d_v", output->data + item(b, n_q, d_v),
             n_q, d_v, &info->queries);
    }
}

/* ---- softmax ---- */

static void walk_softmax(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    const int rows = info->n_q, cols = info->n_k;
    const int masked = attn__field_value(walker->problem, "mask") != NULL;
    attn__walk_heading(walker, 1, "Softmax");
    attn__walk_para(walker, "weights = softmax(x%s) along each row of %d "
                    "entries.", info->scale != 1.0 ? " × scale" : "", cols);
    batch_note(walker);
    const double *x = field_data(walker, "x");
    const double *scaled = result(walker, "scaled", 0)->data;
    const double *weights = result(walker, "weights", 0)->data;
    for (int b = 0; b < items_to_walk(info); b++) {
        if (!begin_item(walker, b)) break;
        const size_t grid = item(b, rows, cols);
        attn__walk_heading(walker, 2, "Inputs");
        show(walker, "x", NULL, x + grid, rows, cols, &info->queries);
        if (info->scale != 1.0 || masked) {
            char factor[ATTN__NUMBER_CAP];
            attn__format_rounded(factor, info->scale);
            attn__walk_step(walker, "%s", masked ? "Scale and mask" : "Scale");
            attn__walk_para(walker, "scaled = x × %s%s", factor,
                            masked ? "; masked entries become −∞." : "");
            show(walker, "scaled", NULL, scaled + grid, rows, cols,
                 &info->queries);
        }
        attn__walk_softmax_step(walker, scaled + grid, weights + grid, rows,
                                cols, &info->queries, &info->keys);
    }
}

/* ---- weightedSum ---- */

static void walk_weighted_sum(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, n_k = info->n_k, d_v = info->d_v;
    attn__walk_heading(walker, 1, "Weighted sum");
    attn__walk_para(walker, "output = weights V: each output row mixes the "
                    "%d rows of V.", n_k);
    batch_note(walker);
    const double *weights = field_data(walker, "weights");
    const double *v = field_data(walker, "v");
    const attn__result *output = result(walker, "output", 0);
    for (int b = 0; b < items_to_walk(info); b++) {
        if (!begin_item(walker, b)) break;
        attn__walk_heading(walker, 2, "Inputs");
        const attn__matrix_view view = attn__view(
            "weights", "n_q × n_k", weights + item(b, n_q, n_k), (size_t)n_k,
            n_q, n_k, info->queries, info->keys);
        attn__walk_matrix(walker, &view);
        show(walker, "V", "n_k × d_v", v + item(b, n_k, d_v), n_k, d_v,
             &info->keys);
        attn__walk_step(walker, "Output = weights V");
        attn__walk_weighted_sum(walker, "output", weights + item(b, n_q, n_k),
                                v + item(b, n_k, d_v), (size_t)d_v, "V",
                                output->data + item(b, n_q, d_v), (size_t)d_v,
                                n_q, n_k, d_v, &info->queries);
    }
}

void attn__walk_kind(attn__walker *walker)
{
    switch (walker->problem->kind->id) {
    case ATTN__KIND_SDPA: walk_sdpa(walker); break;
    case ATTN__KIND_WEIGHTED_SUM: walk_weighted_sum(walker); break;
    case ATTN__KIND_MULTIHEAD: walk_multihead(walker); break;
    case ATTN__KIND_ADDITIVE: walk_additive(walker); break;
    case ATTN__KIND_LUONG: walk_luong(walker); break;
    case ATTN__KIND_LINEAR: walk_linear(walker); break;
    case ATTN__KIND_SOFTMAX: walk_softmax(walker); break;
    case ATTN__KIND_TRANSFORMER_BLOCK: /* no walkthrough yet: a heading */
        attn__walk_heading(walker, 2, "Transformer block");
        break;
    }
}
