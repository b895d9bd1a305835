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

static void stage_step(attn__walker *walker, const stage *s)
{
    attn__walk_step(walker, s->id, "%s", s->title);
    attn__walk_sentence(walker, "%s", s->sentence);
    attn__walk_formula(walker, s->tex, s->plain);
    attn__walk_region(walker, 0, s->a_name, -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 0, s->b_name, -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 1, s->c_name, -1, ATTN__REGION_ALL, 0, 0);
    if (s->terms <= ATTN__MAX_TERMS && s->rows * s->cols <= ATTN__DETAIL_CELLS)
        for (int r = 0; r < s->rows; r++)
            for (int c = 0; c < s->cols; c++) stage_equation(walker, s, r, c);
    const attn__matrix_view table = attn__view(
        s->c_title, s->c_name, NULL, s->c, (size_t)s->cols, s->rows, s->cols,
        s->row_labels, s->col_labels);
    attn__walk_table(walker, &table);
    attn__walk_step_end(walker);
}

/* dS[i, j] = P[i, j] × (dP[i, j] − Σ_k dP[i, k] × P[i, k]). */
static void softmax_step(attn__walker *walker, const double *w,
                         const double *dp, const double *ds)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, n_k = info->n_k;
    attn__walk_step(walker, "grad-scaled", "Back through the softmax: dS");
    attn__walk_sentence(walker,
                        "A weight can only rise if others fall, so "
                        "each entry of dP counts only by how much it exceeds "
                        "the row's weighted average, and a weight of 0 (a "
                        "masked key) passes no gradient on.");
    attn__walk_formula(walker,
                       "dS_{ij} = P_{ij}\\,\\Big(dP_{ij} - \\sum_k dP_{ik}"
                       "\\,P_{ik}\\Big)",
                       "dS_ij = P_ij × (dP_ij − Σ_k dP_ik × P_ik)");
    attn__walk_region(walker, 0, "weights", -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 0, "gradWeights", -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 1, "gradScaled", -1, ATTN__REGION_ALL, 0, 0);
    if (n_k <= ATTN__MAX_TERMS && n_q * n_k <= ATTN__DETAIL_CELLS) {
        char qt[ATTN__LABEL_CAP], kt[ATTN__LABEL_CAP];
        for (int i = 0; i < n_q; i++) {
            const double *wi = w + (size_t)i * (size_t)n_k;
            const double *dpi = dp + (size_t)i * (size_t)n_k;
            double average = 0.0;
            for (int k = 0; k < n_k; k++) average += dpi[k] * wi[k];
            for (int j = 0; j < n_k; j++) {
                attn__eq_begin(
                    walker, "dS[%s, %s]",
                    attn__walk_label(&info->queries, i, qt, sizeof qt),
                    attn__walk_label(&info->keys, j, kt, sizeof kt));
                int kids[ATTN__MAX_KIDS];
                for (int k = 0; k < n_k; k++)
                    kids[k] = attn__binary(
                        walker, ATTN__OP_MUL, dpi[k] * wi[k],
                        attn__leaf(walker, dpi[k],
                                   attn__ref2("gradWeights", i, k)),
                        attn__leaf(walker, wi[k], attn__ref2("weights", i, k)));
                const int sum = n_k == 1 ? kids[0]
                                         : attn__op_node(walker, ATTN__OP_ADD,
                                                         average, kids, n_k);
                const int diff = attn__binary(
                    walker, ATTN__OP_SUB, dpi[j] - average,
                    attn__leaf(walker, dpi[j], attn__ref2("gradWeights", i, j)),
                    sum);
                attn__eq_chain(
                    walker,
                    attn__binary(
                        walker, ATTN__OP_MUL, wi[j] * (dpi[j] - average),
                        attn__leaf(walker, wi[j], attn__ref2("weights", i, j)),
                        diff));
                attn__eq_chain(
                    walker,
                    attn__leaf(walker, ds[(size_t)i * (size_t)n_k + (size_t)j],
                               attn__ref2("gradScaled", i, j)));
                attn__eq_emit(walker);
            }
        }
    }
    const attn__matrix_view table = attn__view("dS", "gradScaled", "n_q × n_k",
                                               ds, (size_t)n_k, n_q, n_k,
                                               info->queries, info->keys);
    attn__walk_table(walker, &table);
    attn__walk_step_end(walker);
}

/* dO[i, c] = output[i, c] − target[i, c]. */
static void target_equations(attn__walker *walker, const double *target,
                             const double *d_out)
{
    const attn__run_info *info = walker->info;
    const double *output = attn__walk_result(walker, "output");
    if (info->n_q * info->d_v > ATTN__DETAIL_CELLS) return;
    char qt[ATTN__LABEL_CAP];
    for (int i = 0; i < info->n_q; i++)
        for (int c = 0; c < info->d_v; c++) {
            const size_t e = (size_t)i * (size_t)info->d_v + (size_t)c;
            attn__eq_begin(walker, "dO[%s, %d]",
                           attn__walk_label(&info->queries, i, qt, sizeof qt),
                           c + 1);
            attn__eq_chain(
                walker,
                attn__binary(
                    walker, ATTN__OP_SUB, output[e] - target[e],
                    attn__leaf(walker, output[e], attn__ref2("output", i, c)),
                    attn__leaf(walker, target[e], attn__ref2("target", i, c))));
            attn__eq_chain(walker, attn__leaf(walker, d_out[e],
                                              attn__ref2("gradOutput", i, c)));
            attn__eq_emit(walker);
        }
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
    attn__walk_step(walker, "grad-output",
                    "The gradient reaching the output: dO");
    attn__walk_sentence(
        walker,
        "Training asks how the loss changes with each "
        "number. It starts from dO, how the loss changes with "
        "each entry of the output, and runs every step above "
        "backwards.%s",
        target != NULL ? " The loss here is L = ½‖O − T‖², half the squared "
                         "distance from the output to the target T, so dO "
                         "is simply O − T."
                       : " Here dO is given.");
    if (target != NULL) {
        attn__walk_formula(walker,
                           "L = \\tfrac12 \\lVert O - T\\rVert^2,"
                           "\\quad dO = \\frac{\\partial L}{\\partial O} "
                           "= O - T",
                           "L = ½‖O − T‖², dO = ∂L/∂O = O − T");
        attn__walk_region(walker, 0, "output", -1, ATTN__REGION_ALL, 0, 0);
        attn__walk_region(walker, 0, "target", -1, ATTN__REGION_ALL, 0, 0);
        attn__walk_region(walker, 1, "gradOutput", -1, ATTN__REGION_ALL, 0, 0);
        target_equations(walker, target, d_out);
    } else {
        attn__walk_formula(walker, "dO = \\frac{\\partial L}{\\partial O}",
                           "dO = ∂L/∂O");
        attn__walk_region(walker, 0, "gradOutput", -1, ATTN__REGION_ALL, 0, 0);
    }
    attn__walk_show(walker, "dO", "gradOutput", "n_q × d_v", d_out, dvv, n_q,
                    d_v, &info->queries, &attn__index_labels);
    attn__walk_step_end(walker);
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
