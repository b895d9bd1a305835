/* steps_attention.c: the steps of one attention computation (scores,
 * scale, mask, softmax, output), shared by scaledDotProduct and the heads
 * of multiHead, and the walkthroughs of scaledDotProduct and weightedSum. */
#include "attention.h"
#include "walkthrough/walker.h"

#include <math.h>
#include <stdio.h>

#define TEX_SCORE "s_{ij} = q_i \\cdot k_j = \\sum_{t=1}^{d_k} q_{it}\\,k_{jt}"
#define TEX_SCALE_SQRT "\\tilde s_{ij} = \\frac{s_{ij}}{\\sqrt{d_k}}"
#define TEX_SCALE_FACTOR "\\tilde s_{ij} = c\\, s_{ij}"
#define TEX_MASK                                         \
    "\\tilde s_{ij} = -\\infty \\text{ where query } i " \
    "\\text{ may not see key } j"
#define TEX_SOFTMAX                                        \
    "w_{ij} = \\frac{e^{\\tilde s_{ij} - m_i}}{\\sum_{k} " \
    "e^{\\tilde s_{ik} - m_i}},\\quad m_i = \\max_k "      \
    "\\tilde s_{ik}"
#define TEX_OUTPUT "o_i = \\sum_j w_{ij}\\, v_j"
#define TEX_ATTENTION                       \
    "\\operatorname{Attention}(Q, K, V) = " \
    "\\operatorname{softmax}\\!\\left("     \
    "\\frac{QK^{\\top}}{\\sqrt{d_k}}\\right) V"

static const char *query_label(const attn__walker *walker, int i, char *tmp,
                               size_t cap)
{
    return attn__walk_label(&walker->info->queries, i, tmp, cap);
}

static const char *row_of(const attn__walker *walker, int i, char *tmp,
                          size_t cap)
{
    return attn__walk_row_of(&walker->info->queries, i, tmp, cap);
}

static const char *key_label(const attn__walker *walker, int j, char *tmp,
                             size_t cap)
{
    return attn__walk_label(&walker->info->keys, j, tmp, cap);
}

/* A cell [i, j] of a result shaped like the weights (row i dropped for a
 * vector query), in batch item `batch` (-1: not batched). */
static attn__ref grid_ref(const attn__walker *walker, const char *name,
                          int batch, int i, int j)
{
    const attn__ref ref = walker->info->vector_query ? attn__ref1(name, j)
                                                     : attn__ref2(name, i, j);
    return attn__batched(ref, batch);
}

/* The per-row quantity [i] (a number for a vector query). */
static attn__ref row_ref(const attn__walker *walker, const char *name,
                         int batch, int i)
{
    const attn__ref ref = walker->info->vector_query ? attn__ref0(name)
                                                     : attn__ref1(name, i);
    return attn__batched(ref, batch);
}

/* Names of the block's results: prefix + name ("heads.1.scores"). */
typedef struct block_names {
    char scores[ATTN__NAME_CAP], scaled[ATTN__NAME_CAP],
        weights[ATTN__NAME_CAP], output[ATTN__NAME_CAP], max[ATTN__NAME_CAP],
        exp[ATTN__NAME_CAP], sum[ATTN__NAME_CAP], terms[ATTN__NAME_CAP];
} block_names;

static block_names names_of(const attn__walk_block *block)
{
    block_names n;
    const char *p = block->prefix;
    snprintf(n.scores, sizeof n.scores, "%sscores", p);
    snprintf(n.scaled, sizeof n.scaled, "%s%s", block->scaled_tensor ? "" : p,
             block->scaled_tensor ? block->scaled_tensor : "scaled");
    snprintf(n.weights, sizeof n.weights, "%sweights", p);
    snprintf(n.output, sizeof n.output, "%s%s", block->output_tensor ? "" : p,
             block->output_tensor ? block->output_tensor : "output");
    snprintf(n.max, sizeof n.max, "%smax", p);
    snprintf(n.exp, sizeof n.exp, "%sexp", p);
    snprintf(n.sum, sizeof n.sum, "%ssum", p);
    snprintf(n.terms, sizeof n.terms, "%sterms", p);
    return n;
}

/* A row of q, k or v as a tensor cell: [b?][i?][column]. */
static attn__ref input_ref(const attn__walker *walker, const char *name,
                           int batch, int row, int column, int vector)
{
    const attn__ref ref = vector ? attn__ref1(name, column)
                                 : attn__ref2(name, row, column);
    return attn__batched(ref, walker->info->batched ? batch : -1);
}

/* Σ_t a[t] × b[t] as a sum of products of leaves. */
static int dot_terms(attn__walker *walker, const double *a, size_t a_step,
                     attn__ref a_ref, const double *b, size_t b_step,
                     attn__ref b_ref, int n, double value)
{
    int kids[ATTN__MAX_KIDS];
    if (n > ATTN__MAX_KIDS) return -1;
    for (int t = 0; t < n; t++) {
        const double x = a[(size_t)t * a_step], y = b[(size_t)t * b_step];
        attn__ref ar = a_ref, br = b_ref;
        ar.index[ar.rank - 1] += t;
        br.index[br.rank - 1] += t;
        kids[t] = attn__binary(walker, ATTN__OP_MUL, x * y,
                               attn__leaf(walker, x, ar),
                               attn__leaf(walker, y, br));
    }
    return n == 1 ? kids[0]
                  : attn__op_node(walker, ATTN__OP_ADD, value, kids, n);
}

/* The step for rows `first`.. of a per-row stage past the rows stepped
 * through one at a time: no equations, the stage's table. */
static void rest_step(attn__walker *walker, const attn__walk_block *block,
                      const char *stage, const char *title,
                      const char *produced, int first,
                      const attn__matrix_view *table)
{
    char id[ATTN__ID_CAP];
    snprintf(id, sizeof id, "%s%s-rest", block->id_prefix, stage);
    attn__walk_step(walker, id, "%s", title);
    attn__walk_sentence(walker, "Rows %d to %d are computed the same way.",
                        first + 1, block->n_q);
    attn__walk_region(walker, 1, produced, block->batch, ATTN__REGION_ROWS,
                      first, block->n_q - 1);
    attn__walk_table(walker, table);
    attn__walk_step_end(walker);
}

/* ---- Scores ---- */

static void score_equation(attn__walker *walker, const attn__walk_block *block,
                           const block_names *n, int i, int j)
{
    char qt[ATTN__LABEL_CAP], kt[ATTN__LABEL_CAP];
    const double value = block->scores[(size_t)i * block->n_k + (size_t)j];
    const int vector = walker->info->vector_query;
    attn__eq_begin(walker, "S[%s, %s]", query_label(walker, i, qt, sizeof qt),
                   key_label(walker, j, kt, sizeof kt));
    attn__eq_chain(
        walker, dot_terms(walker, block->q + (size_t)i * block->q_stride, 1,
                          input_ref(walker, block->q_name, block->batch_index,
                                    i, block->q_column,
                                    vector && block->prefix[0] == '\0'),
                          block->k + (size_t)j * block->k_stride, 1,
                          input_ref(walker, block->k_name, block->batch_index,
                                    j, block->q_column, 0),
                          block->d_k, value));
    attn__eq_chain(walker,
                   attn__leaf(walker, value,
                              grid_ref(walker, n->scores, block->batch, i, j)));
    attn__eq_emit(walker);
}

static attn__matrix_view scores_view(const attn__walker *walker,
                                     const attn__walk_block *block,
                                     const block_names *n)
{
    return attn__view("S", n->scores, "n_q × n_k", block->scores,
                      (size_t)block->n_k, block->n_q, block->n_k,
                      walker->info->queries, walker->info->keys);
}

/* What every score step says after its sentence: whether its sums are
 * spelled out, and the formula. */
static void score_formula(attn__walker *walker, const attn__walk_block *block)
{
    if (block->d_k > ATTN__MAX_TERMS)
        attn__walk_sentence(walker,
                            "(Dot products of length %d: "
                            "too many terms to spell out.)",
                            block->d_k);
    attn__walk_formula(walker, TEX_SCORE,
                       "S[i, j] = q_i · k_j = Σ_t q_it × k_jt");
}

/* Scores are a step per cell when there are few, else a step per query
 * row: the first cell (row) in full, then its repeats, the other cells
 * (rows) stepped through, together in one step, each a repeat of it. */
static void score_steps(attn__walker *walker, const attn__walk_block *block,
                        const block_names *n)
{
    const int by_cell = block->n_q * block->n_k <= ATTN__CELL_STEPS;
    const int spelled = block->d_k <= ATTN__MAX_TERMS;
    const int rows = block->n_q < ATTN__STEP_ROWS ? block->n_q
                                                  : ATTN__STEP_ROWS;
    const int repeats = by_cell ? rows * block->n_k - 1 : rows - 1;
    const int whole = rows == block->n_q; /* no rows left for a rest step */
    const attn__matrix_view table = scores_view(walker, block, n);
    char qt[ATTN__LABEL_CAP], kt[ATTN__LABEL_CAP], id[ATTN__ID_CAP];
    const char *ql = query_label(walker, 0, qt, sizeof qt);
    const char *kl = key_label(walker, 0, kt, sizeof kt);
    if (by_cell) {
        snprintf(id, sizeof id, "%sscore-0-0", block->id_prefix);
        attn__walk_step(walker, id, "Score of %s against %s", ql, kl);
        attn__walk_sentence(walker,
                            "How well does “%s” match “%s”? Multiply its "
                            "query with that key entry by entry and add the "
                            "products: the dot product. The larger it is, "
                            "the better the match.",
                            ql, kl);
    } else {
        snprintf(id, sizeof id, "%sscore-0", block->id_prefix);
        attn__walk_step(walker, id, "Scores of %s", ql);
        attn__walk_sentence(walker,
                            "Token “%s” compares its query with every key: "
                            "multiply entry by entry and add up. A larger "
                            "dot product means a better match.",
                            ql);
    }
    score_formula(walker, block);
    attn__walk_region(walker, 0, block->q_name, block->batch, ATTN__REGION_ROWS,
                      0, 0);
    attn__walk_region(walker, 0, block->k_name, block->batch,
                      by_cell ? ATTN__REGION_ROWS : ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 1, n->scores, block->batch,
                      by_cell ? ATTN__REGION_CELL : ATTN__REGION_ROWS, 0, 0);
    for (int c = 0; spelled && c < (by_cell ? 1 : block->n_k); c++)
        score_equation(walker, block, n, 0, c);
    if (repeats == 0 && whole) attn__walk_table(walker, &table);
    attn__walk_step_end(walker);
    if (repeats > 0) {
        snprintf(id, sizeof id, "%sscore-others", block->id_prefix);
        if (by_cell)
            attn__walk_others(walker, id, repeats, "", "dot product",
                              "dot products");
        else
            attn__walk_others(walker, id, repeats, "Scores of ", "row", "rows");
        attn__walk_sentence(
            walker, "%s",
            by_cell ? "Every other query–key pair is scored the same way: "
                      "its query times its key, entry by entry, added up. "
                      "Each one's products are in its own equation."
                    : "Every other token compares its query with every key "
                      "the same way. Each one's products are in its own "
                      "equations.");
        score_formula(walker, block);
        attn__walk_region(walker, 0, block->q_name, block->batch,
                          ATTN__REGION_ROWS, by_cell ? 0 : 1, rows - 1);
        attn__walk_region(walker, 0, block->k_name, block->batch,
                          ATTN__REGION_ALL, 0, 0);
        if (by_cell)
            for (int cell = 1; cell <= repeats; cell++)
                attn__walk_region(walker, 1, n->scores, block->batch,
                                  ATTN__REGION_CELL, cell / block->n_k,
                                  cell % block->n_k);
        else
            attn__walk_region(walker, 1, n->scores, block->batch,
                              ATTN__REGION_ROWS, 1, rows - 1);
        for (int r = 1; spelled && r <= repeats; r++) {
            const int i = by_cell ? r / block->n_k : r;
            ql = query_label(walker, i, qt, sizeof qt);
            if (by_cell)
                attn__walk_repeat(
                    walker, "Score of %s against %s", ql,
                    key_label(walker, r % block->n_k, kt, sizeof kt));
            else
                attn__walk_repeat(walker, "Scores of %s", ql);
            for (int c = by_cell ? r % block->n_k : 0;
                 c < (by_cell ? r % block->n_k + 1 : block->n_k); c++)
                score_equation(walker, block, n, i, c);
        }
        if (whole) attn__walk_table(walker, &table);
        attn__walk_step_end(walker);
    }
    if (whole) return;
    rest_step(walker, block, "score", "Scores of the other rows", n->scores,
              rows, &table);
}

/* ---- Scale and mask ---- */

static int is_masked(const attn__walk_block *block, int i, int j)
{
    return block->scaled[(size_t)i * block->n_k + (size_t)j] == -INFINITY;
}

static int masked_count(const attn__walk_block *block)
{
    int count = 0;
    for (int i = 0; i < block->n_q; i++)
        for (int j = 0; j < block->n_k; j++) count += is_masked(block, i, j);
    return count;
}

static void scale_equation(attn__walker *walker, const attn__walk_block *block,
                           const block_names *n, int i, int j)
{
    const attn__run_info *info = walker->info;
    char qt[ATTN__LABEL_CAP], kt[ATTN__LABEL_CAP];
    const size_t at = (size_t)i * block->n_k + (size_t)j;
    attn__eq_begin(walker, "scaled[%s, %s]",
                   query_label(walker, i, qt, sizeof qt),
                   key_label(walker, j, kt, sizeof kt));
    const int score = attn__leaf(
        walker, block->scores[at],
        grid_ref(walker, n->scores, block->batch, i, j));
    int scaled;
    if (info->options.scale_kind == ATTN_SCALE_INV_SQRT_DK) {
        const int root = attn__unary(walker, ATTN__OP_SQRT,
                                     sqrt((double)block->d_k),
                                     attn__constant(walker, block->d_k));
        scaled = attn__binary(walker, ATTN__OP_DIV, block->scaled[at], score,
                              root);
    } else {
        scaled = attn__binary(walker, ATTN__OP_MUL, block->scaled[at], score,
                              attn__constant(walker, info->scale));
    }
    attn__eq_chain(walker, scaled);
    attn__eq_chain(walker,
                   attn__leaf(walker, block->scaled[at],
                              grid_ref(walker, n->scaled, block->batch, i, j)));
    attn__eq_emit(walker);
}

static void scaled_table(attn__walker *walker, const attn__walk_block *block,
                         const block_names *n, const char *note)
{
    attn__walk_show(walker, "scaled", n->scaled, note, block->scaled,
                    (size_t)block->n_k, block->n_q, block->n_k,
                    &walker->info->queries, &walker->info->keys);
}

static void scale_step(attn__walker *walker, const attn__walk_block *block,
                       const block_names *n, int masked)
{
    const attn__run_info *info = walker->info;
    const int kind = info->options.scale_kind;
    char id[ATTN__ID_CAP];
    snprintf(id, sizeof id, "%sscale", block->id_prefix);
    if (kind == ATTN_SCALE_NONE) {
        attn__walk_step(walker, id, "No scaling here");
        attn__walk_sentence(walker,
                            "This example feeds the scores to the "
                            "softmax as they are, without dividing by √d_k "
                            "(scale: false). Large scores will make the "
                            "weights very uneven.");
    } else if (kind == ATTN_SCALE_INV_SQRT_DK) {
        attn__walk_step(walker, id, "Divide by √d_k = √%d", block->d_k);
        attn__walk_sentence(walker,
                            "Dot products of longer vectors tend to "
                            "be larger, and large inputs push the softmax "
                            "towards giving one key everything. Dividing "
                            "every score by √d_k (d_k = %d) keeps their "
                            "spread about the same whatever the width.",
                            block->d_k);
        attn__walk_formula(walker, TEX_SCALE_SQRT,
                           "scaled[i, j] = S[i, j] ÷ √d_k");
    } else {
        attn__walk_step(walker, id, "Scale the scores");
        attn__walk_sentence(walker,
                            "Every score is multiplied by the same "
                            "factor before the softmax (the scale given).");
        attn__walk_formula(walker, TEX_SCALE_FACTOR,
                           "scaled[i, j] = c × S[i, j]");
    }
    attn__walk_region(walker, 0, n->scores, block->batch, ATTN__REGION_ALL, 0,
                      0);
    attn__region produced = {
        1,      n->scaled,          block->batch, ATTN__REGION_ALL,
        {0, 0}, masked > 0 ? -1 : 0};
    walker->sink->region(walker, &produced);
    const int cells = block->n_q * block->n_k;
    if (kind != ATTN_SCALE_NONE && cells <= ATTN__DETAIL_CELLS)
        for (int i = 0; i < block->n_q; i++)
            for (int j = 0; j < block->n_k; j++)
                if (!is_masked(block, i, j))
                    scale_equation(walker, block, n, i, j);
    if (masked == 0) scaled_table(walker, block, n, NULL);
    attn__walk_step_end(walker);
}

static void mask_description(attn__walker *walker, int batch_index, char *out,
                             size_t cap)
{
    const attn_mask *mask = &walker->info->options.mask;
    attn__text text;
    attn__text_init(&text, out, cap);
    const char *separator = "";
    if (mask->kinds & ATTN_MASK_CAUSAL) {
        attn__text_puts(&text, "causal: query i sees keys j ≤ i only, never "
                               "later tokens");
        separator = "; ";
    }
    if (mask->kinds & ATTN_MASK_KEY_PADDING) {
        const int length = mask->key_length[batch_index];
        attn__text_printf(&text,
                          "%skey padding (keyLength %d: only the "
                          "first %d keys)",
                          separator, length, length);
        separator = "; ";
    }
    if (mask->kinds & ATTN_MASK_LOCAL) {
        attn__text_printf(&text,
                          "%sa local window %d (keys with |i − j| ≤ "
                          "%d)",
                          separator, mask->window, mask->window);
        separator = "; ";
    }
    if (mask->kinds & ATTN_MASK_STRIDED) {
        attn__text_printf(&text,
                          "%sa strided pattern, stride %d (keys j ≤ "
                          "i with i − j < %d or i − j a multiple of %d)",
                          separator, mask->stride, mask->stride, mask->stride);
        separator = "; ";
    }
    if (mask->kinds & ATTN_MASK_CUSTOM)
        attn__text_printf(&text, "%sthe boolean mask given", separator);
}

static void mask_step(attn__walker *walker, const attn__walk_block *block,
                      const block_names *n, int masked)
{
    char id[ATTN__ID_CAP], description[512], qt[ATTN__LABEL_CAP],
        kt[ATTN__LABEL_CAP];
    snprintf(id, sizeof id, "%smask", block->id_prefix);
    mask_description(walker, block->batch_index, description,
                     sizeof description);
    attn__walk_step(walker, id, "Mask: forbidden pairs become −∞");
    attn__walk_sentence(walker,
                        "Some query–key pairs are not allowed (%s). "
                        "Their scores are replaced by −∞, so the softmax "
                        "gives them exactly zero weight and the other "
                        "weights in the row share the whole 1. Masked: %d "
                        "of %d entries.",
                        description[0] ? description : "a mask", masked,
                        block->n_q * block->n_k);
    attn__walk_formula(walker, TEX_MASK,
                       "scaled[i, j] = −∞ where query i may not see key j");
    attn__region produced = {1,      n->scaled, block->batch, ATTN__REGION_ALL,
                             {0, 0}, 1};
    walker->sink->region(walker, &produced);
    if (block->n_q * block->n_k <= ATTN__DETAIL_CELLS)
        for (int i = 0; i < block->n_q; i++)
            for (int j = 0; j < block->n_k; j++) {
                if (!is_masked(block, i, j)) continue;
                attn__eq_begin(walker, "scaled[%s, %s]",
                               query_label(walker, i, qt, sizeof qt),
                               key_label(walker, j, kt, sizeof kt));
                attn__eq_chain(walker,
                               attn__leaf(walker, -INFINITY,
                                          grid_ref(walker, n->scaled,
                                                   block->batch, i, j)));
                attn__eq_emit(walker);
            }
    scaled_table(walker, block, n, "masked");
    attn__walk_step_end(walker);
}

/* ---- Softmax ---- */

void attn__softmax_equations(attn__walker *walker,
                             const attn__walk_block *block, int i, int parts)
{
    const attn__run_info *info = walker->info;
    const block_names names = names_of(block);
    const block_names *n = &names;
    const int n_k = block->n_k, b = block->batch;
    const double *row = block->scaled + (size_t)i * (size_t)n_k;
    const double *weights = block->weights + (size_t)i * (size_t)n_k;
    char qt[ATTN__LABEL_CAP], kt[ATTN__LABEL_CAP];
    const char *ql = query_label(walker, i, qt, sizeof qt);
    double max = -INFINITY, sum = 0.0;
    int kids[ATTN__MAX_KIDS];
    for (int j = 0; j < n_k; j++)
        if (row[j] > max) max = row[j];
    const int spelled = n_k <= ATTN__MAX_KIDS;
    if (max > -INFINITY && spelled && (parts & ATTN__SOFTMAX_MAX)) {
        attn__eq_begin(walker, "max[%s]", ql);
        int count = 0;
        for (int j = 0; j < n_k; j++)
            if (row[j] > -INFINITY)
                kids[count++] = attn__leaf(
                    walker, row[j], grid_ref(walker, n->scaled, b, i, j));
        if (count > 1)
            attn__eq_chain(
                walker, attn__op_node(walker, ATTN__OP_MAX, max, kids, count));
        attn__eq_chain(walker,
                       attn__leaf(walker, max, row_ref(walker, n->max, b, i)));
        attn__eq_emit(walker);
    }
    double e[ATTN__MAX_KIDS];
    for (int j = 0; j < n_k && spelled; j++) {
        e[j] = max > -INFINITY ? exp(row[j] - max) : 0.0;
        sum += e[j];
        if (max == -INFINITY || !(parts & ATTN__SOFTMAX_EXP)) continue;
        attn__eq_begin(walker, "exp[%s, %s]", ql,
                       key_label(walker, j, kt, sizeof kt));
        const int x = attn__leaf(walker, row[j],
                                 grid_ref(walker, n->scaled, b, i, j));
        if (row[j] > -INFINITY) {
            const int difference = attn__binary(
                walker, ATTN__OP_SUB, row[j] - max, x,
                attn__leaf(walker, max, row_ref(walker, n->max, b, i)));
            attn__eq_chain(walker,
                           attn__unary(walker, ATTN__OP_EXP, e[j], difference));
        } else {
            attn__eq_chain(walker, attn__unary(walker, ATTN__OP_EXP, 0.0, x));
        }
        attn__eq_chain(walker, attn__leaf(walker, e[j],
                                          grid_ref(walker, n->exp, b, i, j)));
        attn__eq_emit(walker);
    }
    if (max > -INFINITY && spelled && (parts & ATTN__SOFTMAX_SUM)) {
        attn__eq_begin(walker, "sum[%s]", ql);
        int count = 0;
        for (int j = 0; j < n_k; j++)
            if (row[j] > -INFINITY)
                kids[count++] = attn__leaf(walker, e[j],
                                           grid_ref(walker, n->exp, b, i, j));
        if (count > 1)
            attn__eq_chain(
                walker, attn__op_node(walker, ATTN__OP_ADD, sum, kids, count));
        attn__eq_chain(walker,
                       attn__leaf(walker, sum, row_ref(walker, n->sum, b, i)));
        attn__eq_emit(walker);
    }
    const double p = info->options.dropout;
    for (int j = 0; j < n_k && spelled && (parts & ATTN__SOFTMAX_WEIGHTS);
         j++) {
        attn__eq_begin(walker, "weights[%s, %s]", ql,
                       key_label(walker, j, kt, sizeof kt));
        const attn__ref cell = grid_ref(walker, n->weights, b, i, j);
        if (row[j] > -INFINITY && weights[j] != 0.0) {
            const int quotient = attn__binary(
                walker, ATTN__OP_DIV, e[j] / sum,
                attn__leaf(walker, e[j], grid_ref(walker, n->exp, b, i, j)),
                attn__leaf(walker, sum, row_ref(walker, n->sum, b, i)));
            attn__eq_chain(
                walker, p > 0.0 ? attn__binary(walker, ATTN__OP_DIV, weights[j],
                                               quotient,
                                               attn__constant(walker, 1.0 - p))
                                : quotient);
        }
        attn__eq_chain(walker, attn__leaf(walker, weights[j], cell));
        attn__eq_emit(walker);
    }
}

static attn__matrix_view weights_view(const attn__walker *walker,
                                      const attn__walk_block *block,
                                      const block_names *n)
{
    return attn__view("weights", n->weights, NULL, block->weights,
                      (size_t)block->n_k, block->n_q, block->n_k,
                      walker->info->queries, walker->info->keys);
}

/* Whether every entry of row i of the softmax's input is −∞. */
static int row_closed(const attn__walk_block *block, int i)
{
    const double *row = block->scaled + (size_t)i * (size_t)block->n_k;
    for (int j = 0; j < block->n_k; j++)
        if (row[j] > -INFINITY) return 0;
    return 1;
}

static void closed_row_sentence(attn__walker *walker, const char *label)
{
    attn__walk_sentence(walker,
                        "Every entry of the row of “%s” is −∞: no key is "
                        "allowed, so every weight is 0 (the engine never "
                        "divides 0 by 0).",
                        label);
}

/* The dropout's sentence and the formula, in every softmax step. */
static void softmax_formula(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    if (info->options.dropout > 0.0) {
        char p[ATTN__NUMBER_CAP], keep[ATTN__NUMBER_CAP];
        attn__format_rounded(p, info->options.dropout);
        attn__format_rounded(keep, 1.0 - info->options.dropout);
        attn__walk_sentence(walker,
                            "Dropout %s (seed %llu): each weight "
                            "is kept with probability %s and divided by "
                            "%s, or set to 0.",
                            p, (unsigned long long)info->options.seed, keep,
                            keep);
    }
    attn__walk_formula(walker, TEX_SOFTMAX,
                       "weights[i, j] = exp(x_j − m) ÷ Σ_k exp(x_k − m), "
                       "m = max_k x_k");
}

/* The softmax of the first row in full, then the other rows stepped
 * through together, each a repeat of it. */
void attn__walk_softmax_rows(attn__walker *walker,
                             const attn__walk_block *block)
{
    const block_names n = names_of(block);
    const int rows = block->n_q < ATTN__STEP_ROWS ? block->n_q
                                                  : ATTN__STEP_ROWS;
    const attn__matrix_view table = weights_view(walker, block, &n);
    char qt[ATTN__LABEL_CAP], rt[ATTN__ROW_OF_CAP], id[ATTN__ID_CAP];
    const char *ql = query_label(walker, 0, qt, sizeof qt);
    snprintf(id, sizeof id, "%ssoftmax-0", block->id_prefix);
    attn__walk_step(walker, id, "Softmax of %s",
                    row_of(walker, 0, rt, sizeof rt));
    if (row_closed(block, 0))
        closed_row_sentence(walker, ql);
    else
        attn__walk_sentence(walker,
                            "The softmax turns the row of scores "
                            "of “%s” into weights that are positive and "
                            "add up to 1. Subtracting the row's largest "
                            "entry first changes no weight but keeps exp "
                            "from overflowing; then take exp of each "
                            "entry, add them up, and divide each by the "
                            "sum.",
                            ql);
    softmax_formula(walker);
    attn__walk_region(walker, 0, n.scaled, block->batch, ATTN__REGION_ROWS, 0,
                      0);
    attn__walk_region(walker, 1, n.weights, block->batch, ATTN__REGION_ROWS, 0,
                      0);
    attn__softmax_equations(walker, block, 0, ATTN__SOFTMAX_ALL);
    if (block->n_q == 1) attn__walk_table(walker, &table);
    attn__walk_step_end(walker);
    if (rows > 1) {
        snprintf(id, sizeof id, "%ssoftmax-others", block->id_prefix);
        attn__walk_others(walker, id, rows - 1, "Softmax of ", "row", "rows");
        attn__walk_sentence(walker,
                            "Every other row goes the same way: subtract "
                            "its largest entry, take exp of each entry, add "
                            "them up and divide each by the sum. Each row's "
                            "numbers are in its own equations.");
        for (int i = 1; i < rows; i++)
            if (row_closed(block, i))
                closed_row_sentence(walker,
                                    query_label(walker, i, qt, sizeof qt));
        softmax_formula(walker);
        attn__walk_region(walker, 0, n.scaled, block->batch, ATTN__REGION_ROWS,
                          1, rows - 1);
        attn__walk_region(walker, 1, n.weights, block->batch, ATTN__REGION_ROWS,
                          1, rows - 1);
        for (int i = 1; i < rows; i++) {
            attn__walk_repeat(walker, "Softmax of %s",
                              row_of(walker, i, rt, sizeof rt));
            attn__softmax_equations(walker, block, i, ATTN__SOFTMAX_ALL);
        }
        if (rows == block->n_q) attn__walk_table(walker, &table);
        attn__walk_step_end(walker);
    }
    if (rows == block->n_q) return;
    rest_step(walker, block, "softmax", "Softmax of the other rows", n.weights,
              rows, &table);
}

/* ---- Output ---- */

/* output[i] = Σ_j w_ij × v_j = Σ_j [terms] = [output], zero weights left
 * out. */
static void output_equation(attn__walker *walker, const attn__walk_block *block,
                            const block_names *n, const char *output_name,
                            int i)
{
    const int b = block->batch, d_v = block->d_v;
    const double *w = block->weights + (size_t)i * (size_t)block->n_k;
    const double *out = block->output + (size_t)i * block->output_stride;
    char qt[ATTN__LABEL_CAP];
    attn__eq_begin(walker, "%s[%s]", output_name,
                   query_label(walker, i, qt, sizeof qt));
    int products[ATTN__MAX_KIDS], terms[ATTN__MAX_KIDS], count = 0;
    for (int j = 0; j < block->n_k; j++) {
        if (w[j] == 0.0) continue;
        const double *v = block->v + (size_t)j * block->v_stride;
        const int weight = attn__leaf(walker, w[j],
                                      grid_ref(walker, n->weights, b, i, j));
        const int row = attn__vector_leaves(walker, v, 1, d_v,
                                            input_ref(walker, block->v_name,
                                                      block->batch_index, j,
                                                      block->q_column, 0));
        products[count] = attn__binary(walker, ATTN__OP_MUL, 0.0, weight, row);
        int entries[ATTN__MAX_KIDS];
        for (int c = 0; c < d_v; c++)
            entries[c] = attn__leaf(
                walker, w[j] * v[c],
                attn__batched(walker->info->vector_query
                                  ? attn__ref2(n->terms, j, c)
                                  : attn__ref3(n->terms, i, j, c),
                              b));
        terms[count++] = attn__op_node(walker, ATTN__OP_VEC, 0.0, entries, d_v);
    }
    const attn__ref out_ref = attn__batched(walker->info->vector_query
                                                ? attn__ref1(n->output, 0)
                                                : attn__ref2(n->output, i, 0),
                                            b);
    if (count > 0) {
        attn__eq_chain(walker, count == 1
                                   ? products[0]
                                   : attn__op_node(walker, ATTN__OP_ADD, 0.0,
                                                   products, count));
        if (count > 1)
            attn__eq_chain(
                walker, attn__op_node(walker, ATTN__OP_ADD, 0.0, terms, count));
    }
    attn__eq_chain(walker, attn__vector_leaves(walker, out, 1, d_v, out_ref));
    attn__eq_emit(walker);
}

static attn__matrix_view output_view(const attn__walker *walker,
                                     const attn__walk_block *block,
                                     const block_names *n,
                                     const char *output_name)
{
    return attn__view(output_name, n->output, NULL, block->output,
                      block->output_stride, block->n_q, block->d_v,
                      walker->info->queries, attn__index_labels);
}

/* The output of the first row in full, then the other rows stepped
 * through together, each a repeat of it. */
void attn__walk_output_rows(attn__walker *walker, const attn__walk_block *block,
                            const char *output_name, const char *sentence)
{
    const block_names n = names_of(block);
    const int rows = block->n_q < ATTN__STEP_ROWS ? block->n_q
                                                  : ATTN__STEP_ROWS;
    const int spelled = block->n_k <= ATTN__MAX_TERMS &&
                        block->d_v <= ATTN__MAX_TERMS;
    const attn__matrix_view table = output_view(walker, block, &n, output_name);
    char qt[ATTN__LABEL_CAP], id[ATTN__ID_CAP];
    for (int group = 0; group < 2 && (group == 0 || rows > 1); group++) {
        /* rows first .. last: the first row, then the others */
        const int first = group, last = group == 0 ? 0 : rows - 1;
        const char *ql = query_label(walker, 0, qt, sizeof qt);
        if (group == 0) {
            snprintf(id, sizeof id, "%soutput-0", block->id_prefix);
            attn__walk_step(walker, id, "Output for %s", ql);
        } else {
            snprintf(id, sizeof id, "%soutput-others", block->id_prefix);
            attn__walk_others(walker, id, rows - 1, "Output for ", "row",
                              "rows");
        }
        if (sentence != NULL)
            attn__walk_sentence(walker, "%s", sentence);
        else if (group == 0)
            attn__walk_sentence(walker,
                                "The output for “%s” is a mix of the "
                                "value rows, each multiplied by how much "
                                "attention “%s” pays to that token. A weight "
                                "of 0 leaves that value out entirely.",
                                ql, ql);
        else
            attn__walk_sentence(walker,
                                "Every other output is mixed the same way, "
                                "from that token's own weights. Each row's "
                                "numbers are in its own equation.");
        attn__walk_formula(walker, TEX_OUTPUT, "output_i = Σ_j w_ij × v_j");
        attn__walk_region(walker, 0, n.weights, block->batch, ATTN__REGION_ROWS,
                          first, last);
        attn__walk_region(walker, 0, block->v_name, block->batch,
                          ATTN__REGION_ALL, 0, 0);
        attn__walk_region(walker, 1, n.output, block->batch, ATTN__REGION_ROWS,
                          first, last);
        /* terms[i, j, c] = w_ij × v_jc, the products summed into row i. */
        attn__walk_region(walker, 1, n.terms, block->batch, ATTN__REGION_ROWS,
                          first, last);
        for (int i = first; spelled && i <= last; i++) {
            if (group == 1)
                attn__walk_repeat(walker, "Output for %s",
                                  query_label(walker, i, qt, sizeof qt));
            output_equation(walker, block, &n, output_name, i);
        }
        if (last == block->n_q - 1) attn__walk_table(walker, &table);
        attn__walk_step_end(walker);
    }
    if (rows == block->n_q) return;
    rest_step(walker, block, "output", "Outputs of the other rows", n.output,
              rows, &table);
}

void attn__walk_attention_block(attn__walker *walker,
                                const attn__walk_block *block)
{
    const block_names n = names_of(block);
    const int masked = masked_count(block);
    if (block->q != NULL) score_steps(walker, block, &n);
    scale_step(walker, block, &n, masked);
    if (masked > 0 || walker->info->options.mask.kinds != 0)
        mask_step(walker, block, &n, masked);
    attn__walk_softmax_rows(walker, block);
    if (block->v != NULL) attn__walk_output_rows(walker, block, "output", NULL);
}

/* ---- scaledDotProduct ---- */

static void sdpa_inputs_step(attn__walker *walker, const char *id, int b)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, n_k = info->n_k, d_k = info->d_k;
    const int d_v = info->d_v, batch = info->batched ? b : -1;
    const double *q = attn__walk_field(walker, "q"),
                 *k = attn__walk_field(walker, "k");
    const double *v = attn__walk_field(walker, "v");
    if (q != NULL) {
        attn__walk_step(walker, id, "Queries, keys and values");
        const char *origin = walker->problem->inputs_origin;
        attn__walk_sentence(walker,
                            "Every token has three vectors. Its query "
                            "describes what it is looking for, its key "
                            "describes what it can offer, and its value is "
                            "what it passes on when another token picks it. "
                            "%s",
                            origin != NULL ? origin
                                           : "Here they are given directly.");
        attn__walk_formula(walker, TEX_ATTENTION,
                           "Attention(Q, K, V) = softmax(Q Kᵀ ÷ √d_k) V");
        attn__walk_region(walker, 0, "q", batch, ATTN__REGION_ALL, 0, 0);
        attn__walk_region(walker, 0, "k", batch, ATTN__REGION_ALL, 0, 0);
    } else {
        attn__walk_step(walker, id, "Start from the scores");
        attn__walk_sentence(walker,
                            "This example starts after the dot "
                            "products: each entry already says how well a "
                            "query matches a key. What is left is scaling, "
                            "masking, the softmax%s.",
                            v != NULL ? " and the weighted sum of values" : "");
        attn__walk_region(walker, 0, "scores", batch, ATTN__REGION_ALL, 0, 0);
    }
    if (v != NULL)
        attn__walk_region(walker, 0, "v", batch, ATTN__REGION_ALL, 0, 0);
    if (q != NULL) {
        attn__walk_show(walker, "Q", "q",
                        info->vector_query ? "d_k" : "n_q × d_k",
                        q + attn__item(b, n_q, d_k), (size_t)d_k, n_q, d_k,
                        &info->queries, &attn__index_labels);
        attn__walk_show(walker, "K", "k", "n_k × d_k",
                        k + attn__item(b, n_k, d_k), (size_t)d_k, n_k, d_k,
                        &info->keys, &attn__index_labels);
    } else {
        attn__walk_show(walker, "S", "scores", "given",
                        attn__walk_field(walker, "scores") +
                            attn__item(b, n_q, n_k),
                        (size_t)n_k, n_q, n_k, &info->queries, &info->keys);
    }
    if (v != NULL)
        attn__walk_show(walker, "V", "v", "n_k × d_v",
                        v + attn__item(b, n_k, d_v), (size_t)d_v, n_k, d_v,
                        &info->keys, &attn__index_labels);
    attn__walk_step_end(walker);
}

void attn__steps_sdpa(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, n_k = info->n_k, d_k = info->d_k;
    const int d_v = info->d_v;
    char intro[512];
    if (info->from_scores)
        snprintf(intro, sizeof intro,
                 "From given scores S (queries n_q = %d, "
                 "keys n_k = %d): weights = softmax(S × scale)%s.",
                 n_q, n_k, info->has_output ? ", output = weights V" : "");
    else
        snprintf(intro, sizeof intro,
                 "Attention(Q, K, V) = softmax(Q Kᵀ × "
                 "scale) V for queries n_q = %d, keys n_k = %d, d_k = %d and "
                 "d_v = %d.%s",
                 n_q, n_k, d_k, d_v,
                 info->batched ? " A batch: each item is computed on its own."
                               : "");
    walker->sink->begin(walker, "Scaled dot-product attention", intro);
    const double *q = attn__walk_field(walker, "q"),
                 *k = attn__walk_field(walker, "k");
    const double *v = attn__walk_field(walker, "v");
    const double *given = attn__walk_field(walker, "scores");
    const double *scores = attn__walk_result(walker, "scores");
    const double *scaled = attn__walk_result(walker, "scaled");
    const double *weights = attn__walk_result(walker, "weights");
    const double *output = attn__walk_result(walker, "output");
    for (int b = 0; b < attn__walk_items(info); b++) {
        if (!attn__walk_begin_item(walker, b)) break;
        char prefix[16], id[ATTN__ID_CAP];
        attn__walk_id_prefix(walker, b, prefix, sizeof prefix);
        snprintf(id, sizeof id, "%sinputs", prefix);
        sdpa_inputs_step(walker, id, b);
        const size_t grid = attn__item(b, n_q, n_k);
        const attn__walk_block block = {
            .q = q ? q + attn__item(b, n_q, d_k) : NULL,
            .k = k ? k + attn__item(b, n_k, d_k) : NULL,
            .v = v ? v + attn__item(b, n_k, d_v) : NULL,
            .q_stride = (size_t)d_k,
            .k_stride = (size_t)d_k,
            .v_stride = (size_t)d_v,
            .q_name = "q",
            .k_name = "k",
            .v_name = "v",
            .q_title = "Q",
            .k_title = "K",
            .v_title = "V",
            .prefix = "",
            .id_prefix = prefix,
            .scores = (scores ? scores : given) + grid,
            .scaled = scaled + grid,
            .weights = weights + grid,
            .output = output ? output + attn__item(b, n_q, d_v) : NULL,
            .output_stride = (size_t)d_v,
            .n_q = n_q,
            .n_k = n_k,
            .d_k = d_k,
            .d_v = d_v,
            .batch_index = b,
            .batch = info->batched ? b : -1,
        };
        attn__walk_attention_block(walker, &block);
        static const char *const shown[] = {"weights", "output"};
        snprintf(id, sizeof id, "%sdone", prefix);
        attn__walk_done(
            walker, id, "The whole computation",
            "That is all of it: every number above follows from the "
            "inputs, and changing any of them changes every value that "
            "depends on it.",
            info->from_scores ? NULL : TEX_ATTENTION,
            "Attention(Q, K, V) = softmax(Q Kᵀ ÷ √d_k) V", shown,
            output != NULL ? 2 : 1);
    }
    attn__steps_sdpa_backward(walker);
}

/* ---- weightedSum ---- */

void attn__steps_weighted_sum(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, n_k = info->n_k, d_v = info->d_v;
    char intro[256];
    snprintf(intro, sizeof intro,
             "output = weights V: each output row mixes "
             "the %d rows of V.%s",
             n_k,
             info->batched ? " A batch: each item is computed on its own."
                           : "");
    walker->sink->begin(walker, "Weighted sum", intro);
    const double *weights = attn__walk_field(walker, "weights");
    const double *v = attn__walk_field(walker, "v");
    const double *output = attn__walk_result(walker, "output");
    for (int b = 0; b < attn__walk_items(info); b++) {
        if (!attn__walk_begin_item(walker, b)) break;
        const int batch = info->batched ? b : -1;
        char prefix[16], id[ATTN__ID_CAP];
        attn__walk_id_prefix(walker, b, prefix, sizeof prefix);
        snprintf(id, sizeof id, "%sinputs", prefix);
        attn__walk_step(walker, id, "Weights and values");
        attn__walk_sentence(walker,
                            "The weights are already known here: row "
                            "i says how much output i takes from each value "
                            "row. The value rows are the information that "
                            "gets mixed.");
        attn__walk_formula(walker, TEX_OUTPUT, "output_i = Σ_j w_ij × v_j");
        attn__walk_region(walker, 0, "weights", batch, ATTN__REGION_ALL, 0, 0);
        attn__walk_region(walker, 0, "v", batch, ATTN__REGION_ALL, 0, 0);
        attn__walk_show(walker, "weights", "weights", "n_q × n_k",
                        weights + attn__item(b, n_q, n_k), (size_t)n_k, n_q,
                        n_k, &info->queries, &info->keys);
        attn__walk_show(walker, "V", "v", "n_k × d_v",
                        v + attn__item(b, n_k, d_v), (size_t)d_v, n_k, d_v,
                        &info->keys, &attn__index_labels);
        attn__walk_step_end(walker);
        const attn__walk_block block = {
            .v = v + attn__item(b, n_k, d_v),
            .v_stride = (size_t)d_v,
            .v_name = "v",
            .v_title = "V",
            .prefix = "",
            .id_prefix = prefix,
            .weights = weights + attn__item(b, n_q, n_k),
            .output = output + attn__item(b, n_q, d_v),
            .output_stride = (size_t)d_v,
            .n_q = n_q,
            .n_k = n_k,
            .d_v = d_v,
            .batch_index = b,
            .batch = batch,
        };
        attn__walk_output_rows(walker, &block, "output",
                               "Multiply each value row by its weight and "
                               "add the results. The row with the largest "
                               "weight dominates the output.");
        static const char *const shown[] = {"weights", "v", "output"};
        snprintf(id, sizeof id, "%sdone", prefix);
        attn__walk_done(
            walker, id, "The outputs",
            "Each output row is a blend of the value rows: change a "
            "weight and its output row moves towards or away from that "
            "value.",
            NULL, NULL, shown, 3);
    }
}
