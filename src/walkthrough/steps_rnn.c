/* steps_rnn.c: the walkthroughs of the attention of encoder-decoder RNNs:
 * additive (Bahdanau) and Luong (dot, general, concat). Scores, then the
 * softmax and the context as a weighted sum of the keys (the encoder
 * states), with the shared steps of steps_attention.c. */
#include "attention.h"
#include "walkthrough/walker.h"

#include <math.h>
#include <stdio.h>

static const char *const no_name[] = {""};
static const attn__labels vector_row = {no_name, ""};

static attn__ref query_ref(const attn__walker *walker, const char *name, int i,
                           int t)
{
    return walker->info->vector_query ? attn__ref1(name, t)
                                      : attn__ref2(name, i, t);
}

/* [n_q?][n_k] and [n_q?][n_k][d_a] cells of the results. */
static attn__ref score_ref(const attn__walker *walker, int i, int j)
{
    return walker->info->vector_query ? attn__ref1("scores", j)
                                      : attn__ref2("scores", i, j);
}

static attn__ref energy_ref(const attn__walker *walker, int i, int j, int a)
{
    return walker->info->vector_query ? attn__ref2("energy", j, a)
                                      : attn__ref3("energy", i, j, a);
}

static void inputs_step(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    attn__walk_step(walker, "inputs",
                    "The decoder state and the encoder "
                    "states");
    attn__walk_sentence(walker,
                        "The query s is the decoder's state; the keys "
                        "H are the encoder's states, one per source token. "
                        "Each key is scored against the query, the scores "
                        "become weights, and the context is the weighted sum "
                        "of the keys.");
    attn__walk_region(walker, 0, "query", -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 0, "keys", -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_show(walker, "s (query)", "query",
                    info->vector_query ? "d_s" : "n_q × d_s",
                    attn__walk_field(walker, "query"), (size_t)info->d_s,
                    info->n_q, info->d_s, &info->queries, &attn__index_labels);
    attn__walk_show(walker, "H (keys)", "keys", "n_k × d_h",
                    attn__walk_field(walker, "keys"), (size_t)info->d_h,
                    info->n_k, info->d_h, &info->keys, &attn__index_labels);
    static const char *const names[] = {"ws", "wh", "w", "v", "b"};
    static const char *const titles[] = {"W_s", "W_h", "W", "v", "b"};
    for (int i = 0; i < 5; i++) {
        const attn__value *value = attn__field_value(walker->problem, names[i]);
        if (value == NULL) continue;
        const int rows = value->rank == 2 ? value->dims[0] : 1;
        const int cols = value->rank == 2 ? value->dims[1] : value->dims[0];
        attn__walk_show(walker, titles[i], names[i], NULL, value->data,
                        (size_t)cols, rows, cols,
                        rows == 1 ? &vector_row : &attn__index_labels,
                        &attn__index_labels);
    }
    attn__walk_step_end(walker);
}

/* Σ_t x[t] × w[t, a] as terms appended to kids; returns their sum. */
static double product_terms(attn__walker *walker, int *kids, int *count,
                            const double *x, attn__ref x_ref, int n,
                            const char *w_name, const double *w, int w_row0,
                            int a, int d_a)
{
    double sum = 0.0;
    for (int t = 0; t < n; t++) {
        const double m = w[(size_t)(w_row0 + t) * (size_t)d_a + (size_t)a];
        attn__ref cell = x_ref;
        cell.index[cell.rank - 1] += t;
        kids[(*count)++] = attn__binary(
            walker, ATTN__OP_MUL, x[t] * m, attn__leaf(walker, x[t], cell),
            attn__leaf(walker, m, attn__ref2(w_name, w_row0 + t, a)));
        sum += x[t] * m;
    }
    return sum;
}

/* energy[i, j, a] = tanh(Σ s W + Σ h W + b): for additive, s and h go
 * through W_s and W_h; for Luong's concat, [s; h] through W. */
static void energy_step(attn__walker *walker, int concat)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, n_k = info->n_k, d_a = info->d_a;
    const int d_s = info->d_s, d_h = info->d_h;
    const double *energy = attn__walk_result(walker, "energy");
    const double *query = attn__walk_field(walker, "query");
    const double *keys = attn__walk_field(walker, "keys");
    const double *b = attn__walk_field(walker, "b");
    attn__walk_step(walker, "energies", "Energies");
    attn__walk_sentence(
        walker, "%s",
        concat ? "energy_j = tanh([s; h_j] W + b), [s; h_j] being s "
                 "and h_j side by side: one row of d_a numbers per "
                 "key."
               : "energy_j = tanh(s W_s + h_j W_h + b): one row of "
                 "d_a numbers per key, mixing the query and that "
                 "key.");
    attn__walk_region(walker, 0, "query", -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 0, "keys", -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 1, "energy", -1, ATTN__REGION_ALL, 0, 0);
    const int small = d_s + d_h + 1 <= ATTN__MAX_KIDS &&
                      n_q * n_k * d_a <= ATTN__DETAIL_CELLS;
    char qt[ATTN__LABEL_CAP], kt[ATTN__LABEL_CAP];
    for (int i = 0; i < n_q && small; i++)
        for (int j = 0; j < n_k; j++)
            for (int a = 0; a < d_a; a++) {
                const double value =
                    energy[attn__item(i, n_k, d_a) + (size_t)j * (size_t)d_a +
                           (size_t)a];
                attn__eq_begin(
                    walker, "energy[%s, %s, %d]",
                    attn__walk_label(&info->queries, i, qt, sizeof qt),
                    attn__walk_label(&info->keys, j, kt, sizeof kt), a + 1);
                int kids[ATTN__MAX_KIDS], count = 0;
                const double *s = query + attn__item(i, 1, d_s);
                const double *h = keys + attn__item(j, 1, d_h);
                double sum = product_terms(
                    walker, kids, &count, s, query_ref(walker, "query", i, 0),
                    d_s, concat ? "w" : "ws",
                    attn__walk_field(walker, concat ? "w" : "ws"), 0, a, d_a);
                sum += product_terms(
                    walker, kids, &count, h, attn__ref2("keys", j, 0), d_h,
                    concat ? "w" : "wh",
                    attn__walk_field(walker, concat ? "w" : "wh"),
                    concat ? d_s : 0, a, d_a);
                if (b != NULL) {
                    kids[count++] = attn__leaf(walker, b[a],
                                               attn__ref1("b", a));
                    sum += b[a];
                }
                attn__eq_chain(walker,
                               attn__unary(walker, ATTN__OP_TANH, value,
                                           attn__op_node(walker, ATTN__OP_ADD,
                                                         sum, kids, count)));
                attn__eq_chain(walker, attn__leaf(walker, value,
                                                  energy_ref(walker, i, j, a)));
                attn__eq_emit(walker);
            }
    attn__walk_step_end(walker);
}

static void show_scores(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    attn__walk_show(walker, "scores", "scores", "n_q × n_k",
                    attn__walk_result(walker, "scores"), (size_t)info->n_k,
                    info->n_q, info->n_k, &info->queries, &info->keys);
}

/* score[i, j] = Σ_t a[t] × b[t] for every cell: s · h (dot), s · (h W)
 * (general), or v · energy (concat, and additive attention). */
static void scores_step(attn__walker *walker, const char *title,
                        const char *sentence, int method)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, n_k = info->n_k;
    const double *scores = attn__walk_result(walker, "scores");
    const double *query = attn__walk_field(walker, "query");
    const double *keys = attn__walk_field(walker, "keys");
    const double *energy = attn__walk_result(walker, "energy");
    const double *v = attn__walk_field(walker, "v");
    const double *w = attn__walk_field(walker, "w");
    attn__walk_step(walker, "scores", "%s", title);
    attn__walk_sentence(walker, "%s", sentence);
    attn__walk_region(walker, 1, "scores", -1, ATTN__REGION_ALL, 0, 0);
    const int width = method == ATTN_LUONG_CONCAT ? info->d_a : info->d_s;
    const int small = width <= ATTN__MAX_TERMS &&
                      n_q * n_k <= ATTN__DETAIL_CELLS &&
                      (method != ATTN_LUONG_GENERAL ||
                       info->d_h <= ATTN__MAX_TERMS);
    char qt[ATTN__LABEL_CAP], kt[ATTN__LABEL_CAP];
    for (int i = 0; i < n_q && small; i++)
        for (int j = 0; j < n_k; j++) {
            const double value = scores[(size_t)i * (size_t)n_k + (size_t)j];
            attn__eq_begin(walker, "score[%s, %s]",
                           attn__walk_label(&info->queries, i, qt, sizeof qt),
                           attn__walk_label(&info->keys, j, kt, sizeof kt));
            int kids[ATTN__MAX_KIDS];
            const double *s = query + attn__item(i, 1, info->d_s);
            const double *h = keys + attn__item(j, 1, info->d_h);
            for (int t = 0; t < width; t++) {
                int a, b;
                double x, y;
                if (method == ATTN_LUONG_DOT) {
                    x = s[t];
                    y = h[t];
                    a = attn__leaf(walker, x, query_ref(walker, "query", i, t));
                    b = attn__leaf(walker, y, attn__ref2("keys", j, t));
                } else if (method == ATTN_LUONG_GENERAL) {
                    /* s_t × (h W)_t, with (h W)_t spelled out. */
                    int inner[ATTN__MAX_KIDS], count = 0;
                    x = s[t];
                    y = product_terms(walker, inner, &count, h,
                                      attn__ref2("keys", j, 0), info->d_h, "w",
                                      w, 0, t, info->d_s);
                    a = attn__leaf(walker, x, query_ref(walker, "query", i, t));
                    b = count == 1 ? inner[0]
                                   : attn__op_node(walker, ATTN__OP_ADD, y,
                                                   inner, count);
                } else {
                    x = v[t];
                    y = energy[attn__item(i, n_k, info->d_a) +
                               (size_t)j * (size_t)info->d_a + (size_t)t];
                    a = attn__leaf(walker, x, attn__ref1("v", t));
                    b = attn__leaf(walker, y, energy_ref(walker, i, j, t));
                }
                kids[t] = attn__binary(walker, ATTN__OP_MUL, x * y, a, b);
            }
            attn__eq_chain(walker, width == 1
                                       ? kids[0]
                                       : attn__op_node(walker, ATTN__OP_ADD,
                                                       value, kids, width));
            attn__eq_chain(walker,
                           attn__leaf(walker, value, score_ref(walker, i, j)));
            attn__eq_emit(walker);
        }
    show_scores(walker);
    attn__walk_step_end(walker);
}

/* Softmax of the scores, then the context as a weighted sum of the keys. */
static void context_steps(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    const attn__walk_block block = {
        .v = attn__walk_field(walker, "keys"),
        .v_stride = (size_t)info->d_h,
        .v_name = "keys",
        .v_title = "H",
        .prefix = "",
        .id_prefix = "",
        .scaled_tensor = "scores",
        .output_tensor = "context",
        .scaled = attn__walk_result(walker, "scores"),
        .weights = attn__walk_result(walker, "weights"),
        .output = attn__walk_result(walker, "context"),
        .output_stride = (size_t)info->d_h,
        .n_q = info->n_q,
        .n_k = info->n_k,
        .d_v = info->d_h,
        .batch_index = 0,
        .batch = -1,
    };
    attn__walk_softmax_rows(walker, &block);
    attn__walk_output_rows(walker, &block, "context",
                           "The context is the sum of the encoder states, "
                           "each multiplied by its weight: what the decoder "
                           "reads from the source at this step.");
}

void attn__steps_additive(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    char intro[512];
    snprintf(intro, sizeof intro,
             "For each query s and key h_j: energy_j = "
             "tanh(s W_s + h_j W_h + b), score_j = v · energy_j, weights = "
             "softmax(scores), context = Σ_j weights_j h_j. n_q = %d, "
             "n_k = %d, d_s = %d, d_h = %d, d_a = %d.",
             info->n_q, info->n_k, info->d_s, info->d_h, info->d_a);
    walker->sink->begin(walker, "Additive (Bahdanau) attention", intro);
    inputs_step(walker);
    energy_step(walker, 0);
    scores_step(walker, "Scores: score_j = v · energy_j",
                "Each score is the dot product of the vector v with the "
                "key's energy row.",
                ATTN_LUONG_CONCAT);
    context_steps(walker);
}

void attn__steps_luong(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    static const char *const titles[] = {"dot", "general", "concat"};
    static const char *const formulas[] = {
        "score_j = s · h_j",
        "score_j = s · (h_j W)",
        "score_j = v · tanh([s; h_j] W + b)",
    };
    static const char *const sentences[] = {
        "Each score is the dot product of the query with the key.",
        "Each key is first mapped by W into the query's space, then dotted "
        "with the query.",
        "Each score is the dot product of the vector v with the key's "
        "energy row.",
    };
    char intro[512], heading[64];
    snprintf(intro, sizeof intro,
             "For each query s and key h_j: %s, weights "
             "= softmax(scores), context = Σ_j weights_j h_j. n_q = %d, "
             "n_k = %d, d_s = %d, d_h = %d.",
             formulas[info->method], info->n_q, info->n_k, info->d_s,
             info->d_h);
    snprintf(heading, sizeof heading, "Luong attention (%s)",
             titles[info->method]);
    walker->sink->begin(walker, heading, intro);
    inputs_step(walker);
    if (info->method == ATTN_LUONG_CONCAT) energy_step(walker, 1);
    char title[96];
    snprintf(title, sizeof title, "Scores: %s", formulas[info->method]);
    scores_step(walker, title, sentences[info->method], info->method);
    context_steps(walker);
}
