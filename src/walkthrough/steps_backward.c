/* steps_backward.c: the backward pass of scaledDotProduct, walked when
 * the problem carries gradOutput: dO, dV, dP, dS, dQ, dK, one step per
 * stage, with each entry's sum spelled out term by term while small. */
#include "attention.h"
#include "walkthrough/walker.h"

#include <stdio.h>

/* One stage: C[r, c] = Σ_t A(r, t) × B(t, c) × factor, where A and B are
 * read through strides so that transposes need no copies. */
typedef struct stage {
    const char *id, *title, *sentence, *tex, *plain;
    const char *a_name, *b_name, *c_name, *c_title;
    const double *a, *b, *c;
    size_t a_row, a_col, b_row, b_col; /* strides of A(r, t) and B(t, c) */
    int a_transposed, b_transposed;    /* refs name [t, r] / [c, t] */
    int rows, cols, terms;
    double factor; /* 1, or the scale */
    attn__labels row_labels, col_labels;
} stage;

static void stage_equation(attn__walker *walker, const stage *s, int r, int c)
{
    char rt[ATTN__LABEL_CAP], ct[ATTN__LABEL_CAP];
    attn__eq_begin(walker, "%s[%s, %s]", s->c_title,
                   attn__walk_label(&s->row_labels, r, rt, sizeof rt),
                   attn__walk_label(&s->col_labels, c, ct, sizeof ct));
    int kids[ATTN__MAX_KIDS];
    double sum = 0.0;
    for (int t = 0; t < s->terms; t++) {
        const double x = s->a[(size_t)r * s->a_row + (size_t)t * s->a_col];
        const double y = s->b[(size_t)t * s->b_row + (size_t)c * s->b_col];
        const attn__ref ar = s->a_transposed ? attn__ref2(s->a_name, t, r)
                                             : attn__ref2(s->a_name, r, t);
        const attn__ref br = s->b_transposed ? attn__ref2(s->b_name, c, t)
                                             : attn__ref2(s->b_name, t, c);
        kids[t] = attn__binary(walker, ATTN__OP_MUL, x * y,
                               attn__leaf(walker, x, ar),
                               attn__leaf(walker, y, br));
        sum += x * y;
    }
    int node = s->terms == 1
                   ? kids[0]
                   : attn__op_node(walker, ATTN__OP_ADD, sum, kids, s->terms);
    if (s->factor != 1.0)
        node = attn__binary(walker, ATTN__OP_MUL, sum * s->factor, node,
                            attn__constant(walker, s->factor));
    attn__eq_chain(walker, node);
    attn__eq_chain(walker,
                   attn__leaf(walker,
                              s->c[(size_t)r * (size_t)s->cols + (size_t)c],
                              attn__ref2(s->c_name, r, c)));
    attn__eq_emit(walker);
}

/* A result computed row by row: how its steps read and what they write. */
typedef struct row_steps_of {
    const char *id, *title, *sentence, *others_sentence, *tex, *plain;
    const char *reads[2];         /* tensors read whole (NULL: none) */
    const char *c_name, *c_title; /* the result: "gradV", "dV" */
    attn__matrix_view table;
    int spelled; /* its entries' equations are written */
    /* Row r's equations. */
    void (*equations)(attn__walker *walker, const void *data, int r);
    const void *data;
} row_steps_of;

/* One of a result's two steps: rows first to last, each row past the first
 * a repeat. */
static void rows_step(attn__walker *walker, const row_steps_of *s, int first,
                      int last)
{
    char id[ATTN__ID_CAP], rt[ATTN__LABEL_CAP], lead[ATTN__TITLE_CAP];
    if (first == 0) {
        attn__walk_step(walker, s->id, "%s", s->title);
        attn__walk_sentence(walker, "%s", s->sentence);
    } else {
        snprintf(id, sizeof id, "%s-others", s->id);
        snprintf(lead, sizeof lead, "%s of ", s->c_title);
        attn__walk_others(walker, id, last, lead, "row", "rows");
        attn__walk_sentence(walker, "%s", s->others_sentence);
    }
    attn__walk_formula(walker, s->tex, s->plain);
    for (int t = 0; t < 2 && s->reads[t] != NULL; t++)
        attn__walk_region(walker, 0, s->reads[t], -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 1, s->c_name, -1, ATTN__REGION_ROWS, first, last);
    for (int r = first; s->spelled && r <= last; r++) {
        if (first > 0)
            attn__walk_repeat(
                walker, "%s of %s", s->c_title,
                attn__walk_label(&s->table.row_labels, r, rt, sizeof rt));
        s->equations(walker, s->data, r);
    }
    if (last == s->table.rows - 1) attn__walk_table(walker, &s->table);
    attn__walk_step_end(walker);
}

/* A result's first row in full, then its other rows together, each a
 * repeat of it. */
static void row_steps(attn__walker *walker, const row_steps_of *s)
{
    rows_step(walker, s, 0, 0);
    if (s->table.rows > 1) rows_step(walker, s, 1, s->table.rows - 1);
}

static void stage_row(attn__walker *walker, const void *data, int r)
{
    const stage *s = data;
    for (int c = 0; c < s->cols; c++) stage_equation(walker, s, r, c);
}

static void stage_step(attn__walker *walker, const stage *s)
{
    const row_steps_of steps = {
        .id = s->id,
        .title = s->title,
        .sentence = s->sentence,
        .others_sentence = "Every other row goes the same way. Each row's "
                           "numbers are in its own equations.",
        .tex = s->tex,
        .plain = s->plain,
        .reads = {s->a_name, s->b_name},
        .c_name = s->c_name,
        .c_title = s->c_title,
        .table = attn__view(s->c_title, s->c_name, NULL, s->c, (size_t)s->cols,
                            s->rows, s->cols, s->row_labels, s->col_labels),
        .spelled = s->terms <= ATTN__MAX_TERMS &&
                   s->rows * s->cols <= ATTN__DETAIL_CELLS,
        .equations = stage_row,
        .data = s,
    };
    row_steps(walker, &steps);
}

/* The backward softmax's inputs: weights P, their gradient dP, and dS. */
typedef struct softmax_data {
    const attn__run_info *info;
    const double *w, *dp, *ds;
} softmax_data;

/* dS[i, j] = P[i, j] × (dP[i, j] − Σ_k dP[i, k] × P[i, k]) for row i. */
static void softmax_row(attn__walker *walker, const void *data, int i)
{
    const softmax_data *d = data;
    const attn__run_info *info = d->info;
    const int n_k = info->n_k;
    char qt[ATTN__LABEL_CAP], kt[ATTN__LABEL_CAP];
    const double *wi = d->w + (size_t)i * (size_t)n_k;
    const double *dpi = d->dp + (size_t)i * (size_t)n_k;
    double average = 0.0;
    for (int k = 0; k < n_k; k++) average += dpi[k] * wi[k];
    for (int j = 0; j < n_k; j++) {
        attn__eq_begin(walker, "dS[%s, %s]",
                       attn__walk_label(&info->queries, i, qt, sizeof qt),
                       attn__walk_label(&info->keys, j, kt, sizeof kt));
        int kids[ATTN__MAX_KIDS];
        for (int k = 0; k < n_k; k++)
            kids[k] = attn__binary(
                walker, ATTN__OP_MUL, dpi[k] * wi[k],
                attn__leaf(walker, dpi[k], attn__ref2("gradWeights", i, k)),
                attn__leaf(walker, wi[k], attn__ref2("weights", i, k)));
        const int sum = n_k == 1 ? kids[0]
                                 : attn__op_node(walker, ATTN__OP_ADD, average,
                                                 kids, n_k);
        const int diff = attn__binary(
            walker, ATTN__OP_SUB, dpi[j] - average,
            attn__leaf(walker, dpi[j], attn__ref2("gradWeights", i, j)), sum);
        attn__eq_chain(
            walker,
            attn__binary(walker, ATTN__OP_MUL, wi[j] * (dpi[j] - average),
                         attn__leaf(walker, wi[j], attn__ref2("weights", i, j)),
                         diff));
        attn__eq_chain(walker,
                       attn__leaf(walker,
                                  d->ds[(size_t)i * (size_t)n_k + (size_t)j],
                                  attn__ref2("gradScaled", i, j)));
        attn__eq_emit(walker);
    }
}

static void softmax_step(attn__walker *walker, const double *w,
                         const double *dp, const double *ds)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, n_k = info->n_k;
    const softmax_data data = {info, w, dp, ds};
    const row_steps_of steps = {
        .id = "grad-scaled",
        .title = "Back through the softmax: dS",
        .sentence = "A weight can only rise if others fall, so each entry of "
                    "dP counts only by how much it exceeds the row's "
                    "weighted average, and a weight of 0 (a masked key) "
                    "passes no gradient on.",
        .others_sentence = "Every other row goes the same way, against its "
                           "own weighted average. Each row's numbers are in "
                           "its own equations.",
        .tex = "dS_{ij} = P_{ij}\\,\\Big(dP_{ij} - \\sum_k dP_{ik}"
               "\\,P_{ik}\\Big)",
        .plain = "dS_ij = P_ij × (dP_ij − Σ_k dP_ik × P_ik)",
        .reads = {"weights", "gradWeights"},
        .c_name = "gradScaled",
        .c_title = "dS",
        .table = attn__view("dS", "gradScaled", "n_q × n_k", ds, (size_t)n_k,
                            n_q, n_k, info->queries, info->keys),
        .spelled = n_k <= ATTN__MAX_TERMS && n_q * n_k <= ATTN__DETAIL_CELLS,
        .equations = softmax_row,
        .data = &data,
    };
    row_steps(walker, &steps);
}

/* dO's inputs when the loss is to a target: the output and the target. */
typedef struct target_data {
    const attn__run_info *info;
    const double *output, *target, *d_out;
} target_data;

/* dO[i, c] = output[i, c] − target[i, c] for row i. */
static void target_row(attn__walker *walker, const void *data, int i)
{
    const target_data *d = data;
    char qt[ATTN__LABEL_CAP];
    for (int c = 0; c < d->info->d_v; c++) {
        const size_t e = (size_t)i * (size_t)d->info->d_v + (size_t)c;
        attn__eq_begin(walker, "dO[%s, %d]",
                       attn__walk_label(&d->info->queries, i, qt, sizeof qt),
                       c + 1);
        attn__eq_chain(
            walker,
            attn__binary(
                walker, ATTN__OP_SUB, d->output[e] - d->target[e],
                attn__leaf(walker, d->output[e], attn__ref2("output", i, c)),
                attn__leaf(walker, d->target[e], attn__ref2("target", i, c))));
        attn__eq_chain(walker, attn__leaf(walker, d->d_out[e],
                                          attn__ref2("gradOutput", i, c)));
        attn__eq_emit(walker);
    }
}

#define D_OUT_TITLE "The gradient reaching the output: dO"
#define D_OUT_SENTENCE                                                  \
    "Training asks how the loss changes with each number. It starts "   \
    "from dO, how the loss changes with each entry of the output, and " \
    "runs every step above backwards."

/* dO: given, or O − T for the loss ½‖O − T‖², row by row. */
static void d_out_steps(attn__walker *walker, const double *target,
                        const double *d_out)
{
    const attn__run_info *info = walker->info;
    const attn__matrix_view table = attn__view(
        "dO", "gradOutput", "n_q × d_v", d_out, (size_t)info->d_v, info->n_q,
        info->d_v, info->queries, attn__index_labels);
    if (target == NULL) {
        attn__walk_step(walker, "grad-output", D_OUT_TITLE);
        attn__walk_sentence(walker, "%s Here dO is given.", D_OUT_SENTENCE);
        attn__walk_formula(walker, "dO = \\frac{\\partial L}{\\partial O}",
                           "dO = ∂L/∂O");
        attn__walk_region(walker, 0, "gradOutput", -1, ATTN__REGION_ALL, 0, 0);
        attn__walk_table(walker, &table);
        attn__walk_step_end(walker);
        return;
    }
    const target_data data = {info, attn__walk_result(walker, "output"), target,
                              d_out};
    const row_steps_of steps = {
        .id = "grad-output",
        .title = D_OUT_TITLE,
        .sentence = D_OUT_SENTENCE
        " The loss here is L = ½‖O − T‖², half the squared distance from the "
        "output to the target T, so dO is simply O − T.",
        .others_sentence = "Every other row is its output minus its target "
                           "the same way.",
        .tex = "L = \\tfrac12 \\lVert O - T\\rVert^2,"
               "\\quad dO = \\frac{\\partial L}{\\partial O} = O - T",
        .plain = "L = ½‖O − T‖², dO = ∂L/∂O = O − T",
        .reads = {"output", "target"},
        .c_name = "gradOutput",
        .c_title = "dO",
        .table = table,
        .spelled = info->n_q * info->d_v <= ATTN__DETAIL_CELLS,
        .equations = target_row,
        .data = &data,
    };
    row_steps(walker, &steps);
}

void attn__steps_sdpa_backward(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    const double *target = attn__walk_field(walker, "target");
    const double *d_out = target != NULL
                              ? attn__walk_result(walker, "gradOutput")
                              : attn__walk_field(walker, "gradOutput");
    const double *q = attn__walk_field(walker, "q");
    const double *k = attn__walk_field(walker, "k");
    const double *v = attn__walk_field(walker, "v");
    const double *w = attn__walk_result(walker, "weights");
    const double *dp = attn__walk_result(walker, "gradWeights");
    const double *ds = attn__walk_result(walker, "gradScaled");
    const double *dq = attn__walk_result(walker, "gradQ");
    const double *dk = attn__walk_result(walker, "gradK");
    const double *dv = attn__walk_result(walker, "gradV");
    /* Walked for one unbatched matrix of queries. */
    if (d_out == NULL || q == NULL || dp == NULL || ds == NULL || dq == NULL ||
        info->batched || info->vector_query)
        return;
    const int n_q = info->n_q, n_k = info->n_k, d_k = info->d_k;
    const int d_v = info->d_v;
    const size_t nk = (size_t)n_k, dkk = (size_t)d_k, dvv = (size_t)d_v;
    attn__walk_heading(walker, 1, "Backward pass");
    d_out_steps(walker, target, d_out);
    const stage dv_stage = {
        "grad-v",
        "Gradient of the values: dV",
        "Each value row was passed on in proportion to its weight, so its "
        "gradient is dO summed over the queries with the same weights.",
        "dV = P^{\\top} dO",
        "dV = Pᵀ dO",
        "weights",
        "gradOutput",
        "gradV",
        "dV",
        w,
        d_out,
        dv,
        1,
        nk,
        dvv,
        1,
        1,
        0,
        n_k,
        d_v,
        n_q,
        1.0,
        info->keys,
        attn__index_labels};
    stage_step(walker, &dv_stage);
    const stage dp_stage = {
        "grad-weights",
        "Gradient of the weights: dP",
        "A weight multiplied a whole value row, so its gradient is the dot "
        "product of dO's row with that value row.",
        "dP = dO\\,V^{\\top}",
        "dP = dO Vᵀ",
        "gradOutput",
        "v",
        "gradWeights",
        "dP",
        d_out,
        v,
        dp,
        dvv,
        1,
        1,
        dvv,
        0,
        1,
        n_q,
        n_k,
        d_v,
        1.0,
        info->queries,
        info->keys};
    stage_step(walker, &dp_stage);
    softmax_step(walker, w, dp, ds);
    const stage dq_stage = {
        "grad-q",
        "Gradient of the queries: dQ",
        "A score was a query dotted with a key and then scaled, so a query's "
        "gradient is dS's row mixing the keys, times the scale.",
        "dQ = dS\\,K \\cdot c",
        "dQ = dS K × scale",
        "gradScaled",
        "k",
        "gradQ",
        "dQ",
        ds,
        k,
        dq,
        nk,
        1,
        dkk,
        1,
        0,
        0,
        n_q,
        d_k,
        n_k,
        info->scale,
        info->queries,
        attn__index_labels};
    stage_step(walker, &dq_stage);
    const stage dk_stage = {
        "grad-k",
        "Gradient of the keys: dK",
        "The same for the keys: dS's column mixes the queries, times the "
        "scale.",
        "dK = dS^{\\top} Q \\cdot c",
        "dK = dSᵀ Q × scale",
        "gradScaled",
        "q",
        "gradK",
        "dK",
        ds,
        q,
        dk,
        1,
        nk,
        dkk,
        1,
        1,
        0,
        n_k,
        d_k,
        n_q,
        info->scale,
        info->keys,
        attn__index_labels};
    stage_step(walker, &dk_stage);
}
