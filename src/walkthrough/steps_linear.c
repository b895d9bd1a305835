/* steps_linear.c: the walkthrough of linear attention: the feature map φ,
 * the sums over the keys S and z, and each output row read from them. */
#include "attention.h"
#include "walkthrough/walker.h"

#include <math.h>
#include <stdio.h>

#define TEX_OUTPUT "o_i = \\frac{\\varphi(q_i)\\, S}{\\varphi(q_i) \\cdot z}"
#define PLAIN_OUTPUT "output_i = φ(q_i) S ÷ (φ(q_i) · z)"

enum { MAX_SPELLED = 8 }; /* d_k and d_v up to this get S and z spelled out */

/* elu(x) + 1, the feature map. */
static double phi(double x)
{
    return x > 0 ? x + 1.0 : exp(x);
}

static int phi_of(attn__walker *walker, double x, attn__ref ref)
{
    return attn__unary(walker, ATTN__OP_PHI, phi(x),
                       attn__leaf(walker, x, ref));
}

typedef struct linear_item {
    const double *q, *k, *v, *output;
    int b, batch; /* batch item; its index in refs or -1 */
    const char *prefix;
} linear_item;

static attn__ref cell(const char *name, int batch, int i, int c)
{
    return attn__batched(attn__ref2(name, i, c), batch);
}

static void sums_step(attn__walker *walker, const linear_item *it,
                      double s[MAX_SPELLED][MAX_SPELLED], double *z)
{
    const attn__run_info *info = walker->info;
    const int n_k = info->n_k, d_k = info->d_k, d_v = info->d_v;
    char id[ATTN__ID_CAP];
    snprintf(id, sizeof id, "%ssums", it->prefix);
    attn__walk_step(walker, id, "Sums over the keys");
    const int spelled = d_k <= MAX_SPELLED && d_v <= MAX_SPELLED &&
                        n_k <= ATTN__MAX_KIDS;
    if (info->causal)
        attn__walk_sentence(walker,
                            "Causal: row i uses S_i = Σ_{j ≤ i} "
                            "φ(k_j)ᵀ v_j and z_i = Σ_{j ≤ i} φ(k_j), running "
                            "sums over the keys so far.");
    else
        attn__walk_sentence(walker,
                            "Every key adds φ(k_j)ᵀ v_j to S (d_k × "
                            "d_v) and φ(k_j) to z, once, whatever the number "
                            "of queries: no n_q × n_k matrix is formed.");
    if (!info->causal && !spelled)
        attn__walk_sentence(walker,
                            "(S is %d×%d and z has %d entries: too "
                            "many to spell out.)",
                            d_k, d_v, d_k);
    attn__walk_region(walker, 0, "k", it->batch, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 0, "v", it->batch, ATTN__REGION_ALL, 0, 0);
    if (info->causal || !spelled) {
        attn__walk_step_end(walker);
        return;
    }
    for (int a = 0; a < d_k; a++) {
        z[a] = 0.0;
        for (int c = 0; c < d_v; c++) s[a][c] = 0.0;
        for (int j = 0; j < n_k; j++) {
            const double feature = phi(
                it->k[attn__item(j, 1, d_k) + (size_t)a]);
            z[a] += feature;
            for (int c = 0; c < d_v; c++)
                s[a][c] += feature * it->v[attn__item(j, 1, d_v) + (size_t)c];
        }
    }
    for (int a = 0; a < d_k; a++) {
        attn__eq_begin(walker, "S[%d]", a + 1);
        int terms[ATTN__MAX_KIDS];
        for (int j = 0; j < n_k; j++)
            terms[j] = attn__binary(
                walker, ATTN__OP_MUL, 0.0,
                phi_of(walker, it->k[attn__item(j, 1, d_k) + (size_t)a],
                       cell("k", it->batch, j, a)),
                attn__vector_leaves(walker, it->v + attn__item(j, 1, d_v), 1,
                                    d_v, cell("v", it->batch, j, 0)));
        attn__eq_chain(walker, n_k == 1 ? terms[0]
                                        : attn__op_node(walker, ATTN__OP_ADD,
                                                        0.0, terms, n_k));
        attn__eq_chain(walker, attn__vector_leaves(walker, s[a], 1, d_v,
                                                   attn__ref2("S", a, 0)));
        attn__eq_emit(walker);
    }
    attn__eq_begin(walker, "z");
    int features[ATTN__MAX_KIDS];
    for (int a = 0; a < d_k; a++) {
        int kids[ATTN__MAX_KIDS];
        for (int j = 0; j < n_k; j++)
            kids[j] = phi_of(walker, it->k[attn__item(j, 1, d_k) + (size_t)a],
                             cell("k", it->batch, j, a));
        features[a] = n_k == 1 ? kids[0]
                               : attn__op_node(walker, ATTN__OP_ADD, z[a], kids,
                                               n_k);
    }
    attn__eq_chain(walker,
                   attn__op_node(walker, ATTN__OP_VEC, 0.0, features, d_k));
    attn__eq_chain(walker,
                   attn__vector_leaves(walker, z, 1, d_k, attn__ref1("z", 0)));
    attn__eq_emit(walker);
    attn__walk_step_end(walker);
}

/* output_i = (Σ_a φ(q_ia) S[a]) ÷ (Σ_a φ(q_ia) z_a) for rows first to
 * last. */
static void output_equations(attn__walker *walker, const linear_item *it,
                             double s[MAX_SPELLED][MAX_SPELLED],
                             const double *z, int first, int last)
{
    const attn__run_info *info = walker->info;
    const int d_k = info->d_k, d_v = info->d_v;
    char qt[ATTN__LABEL_CAP];
    for (int i = first; i <= last; i++) {
        if (first > 0)
            attn__walk_repeat(
                walker, "Output for %s",
                attn__walk_label(&info->queries, i, qt, sizeof qt));
        const double *q = it->q + attn__item(i, 1, d_k);
        attn__eq_begin(walker, "output[%s]",
                       attn__walk_label(&info->queries, i, qt, sizeof qt));
        int top[MAX_SPELLED], bottom[MAX_SPELLED];
        double denominator = 0.0;
        for (int a = 0; a < d_k; a++) {
            top[a] = attn__binary(
                walker, ATTN__OP_MUL, 0.0,
                phi_of(walker, q[a], cell("q", it->batch, i, a)),
                attn__vector_leaves(walker, s[a], 1, d_v,
                                    attn__ref2("S", a, 0)));
            bottom[a] = attn__binary(
                walker, ATTN__OP_MUL, phi(q[a]) * z[a],
                phi_of(walker, q[a], cell("q", it->batch, i, a)),
                attn__leaf(walker, z[a], attn__ref1("z", a)));
            denominator += phi(q[a]) * z[a];
        }
        const int numerator = d_k == 1 ? top[0]
                                       : attn__op_node(walker, ATTN__OP_ADD,
                                                       0.0, top, d_k);
        const int divisor = d_k == 1 ? bottom[0]
                                     : attn__op_node(walker, ATTN__OP_ADD,
                                                     denominator, bottom, d_k);
        attn__eq_chain(walker, attn__binary(walker, ATTN__OP_DIV, 0.0,
                                            numerator, divisor));
        attn__eq_chain(walker, attn__vector_leaves(
                                   walker, it->output + attn__item(i, 1, d_v),
                                   1, d_v, cell("output", it->batch, i, 0)));
        attn__eq_emit(walker);
    }
}

/* The output of the first query in full, then the other queries stepped
 * through together, each a repeat of it. */
static void output_steps(attn__walker *walker, const linear_item *it,
                         double s[MAX_SPELLED][MAX_SPELLED], const double *z,
                         int spelled)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, d_v = info->d_v;
    const int rows = n_q < ATTN__STEP_ROWS ? n_q : ATTN__STEP_ROWS;
    char id[ATTN__ID_CAP], qt[ATTN__LABEL_CAP];
    snprintf(id, sizeof id, "%soutput-0", it->prefix);
    attn__walk_step(walker, id, "Output for %s",
                    attn__walk_label(&info->queries, 0, qt, sizeof qt));
    attn__walk_sentence(walker,
                        "Each query reads its output from the two "
                        "sums: φ(q_i) times S, divided by φ(q_i) · z, which "
                        "is positive, so the division is always defined.");
    attn__walk_formula(walker, TEX_OUTPUT, PLAIN_OUTPUT);
    attn__walk_region(walker, 0, "q", it->batch, ATTN__REGION_ROWS, 0, 0);
    attn__walk_region(walker, 1, "output", it->batch, ATTN__REGION_ROWS, 0, 0);
    if (spelled) output_equations(walker, it, s, z, 0, 0);
    if (n_q == 1)
        attn__walk_show(walker, "output", "output", "n_q × d_v", it->output,
                        (size_t)d_v, n_q, d_v, &info->queries,
                        &attn__index_labels);
    attn__walk_step_end(walker);
    if (n_q == 1) return;
    snprintf(id, sizeof id, "%soutput-others", it->prefix);
    attn__walk_others(walker, id, n_q - 1, "Output for ", "query", "queries");
    attn__walk_sentence(walker,
                        "Every other query reads its output from the same "
                        "two sums, with its own φ(q_i).%s",
                        rows < n_q ? " The equations are spelled out for the "
                                     "first rows; the others go the same "
                                     "way."
                                   : " Each one's numbers are in its own "
                                     "equation.");
    attn__walk_formula(walker, TEX_OUTPUT, PLAIN_OUTPUT);
    attn__walk_region(walker, 0, "q", it->batch, ATTN__REGION_ROWS, 1, n_q - 1);
    attn__walk_region(walker, 1, "output", it->batch, ATTN__REGION_ROWS, 1,
                      n_q - 1);
    if (spelled) output_equations(walker, it, s, z, 1, rows - 1);
    attn__walk_show(walker, "output", "output", "n_q × d_v", it->output,
                    (size_t)d_v, n_q, d_v, &info->queries, &attn__index_labels);
    attn__walk_step_end(walker);
}

static void item_steps(attn__walker *walker, const linear_item *it)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, n_k = info->n_k, d_k = info->d_k;
    const int d_v = info->d_v;
    char id[ATTN__ID_CAP], qt[ATTN__LABEL_CAP];
    snprintf(id, sizeof id, "%sinputs", it->prefix);
    attn__walk_step(walker, id, "Queries, keys and values");
    attn__walk_sentence(walker,
                        "Linear attention replaces exp(q · k) by "
                        "φ(q) · φ(k), with φ positive, so the sums over the "
                        "keys can be done once and shared by every query.");
    attn__walk_region(walker, 0, "q", it->batch, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 0, "k", it->batch, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 0, "v", it->batch, ATTN__REGION_ALL, 0, 0);
    attn__walk_show(walker, "Q", "q", "n_q × d_k", it->q, (size_t)d_k, n_q, d_k,
                    &info->queries, &attn__index_labels);
    attn__walk_show(walker, "K", "k", "n_k × d_k", it->k, (size_t)d_k, n_k, d_k,
                    &info->keys, &attn__index_labels);
    attn__walk_show(walker, "V", "v", "n_k × d_v", it->v, (size_t)d_v, n_k, d_v,
                    &info->keys, &attn__index_labels);
    attn__walk_step_end(walker);

    snprintf(id, sizeof id, "%sphi", it->prefix);
    attn__walk_step(walker, id, "Feature map φ");
    attn__walk_sentence(walker,
                        "φ(x) = elu(x) + 1: x + 1 for x > 0, exp(x) "
                        "otherwise. Every entry of Q and K goes through it, "
                        "so every feature is positive.");
    attn__walk_region(walker, 0, "q", it->batch, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 0, "k", it->batch, ATTN__REGION_ALL, 0, 0);
    if ((n_q + n_k) * d_k <= ATTN__DETAIL_CELLS)
        for (int side = 0; side < 2; side++) {
            const int rows = side == 0 ? n_q : n_k;
            const double *x = side == 0 ? it->q : it->k;
            const attn__labels *labels = side == 0 ? &info->queries
                                                   : &info->keys;
            for (int i = 0; i < rows; i++)
                for (int a = 0; a < d_k; a++) {
                    const double value = x[attn__item(i, 1, d_k) + (size_t)a];
                    attn__eq_begin(
                        walker, "φ(%s)[%s, %d]", side == 0 ? "Q" : "K",
                        attn__walk_label(labels, i, qt, sizeof qt), a + 1);
                    attn__eq_chain(walker, phi_of(walker, value,
                                                  cell(side == 0 ? "q" : "k",
                                                       it->batch, i, a)));
                    attn__eq_chain(walker, attn__constant(walker, phi(value)));
                    attn__eq_emit(walker);
                }
        }
    attn__walk_step_end(walker);

    double s[MAX_SPELLED][MAX_SPELLED], z[MAX_SPELLED];
    sums_step(walker, it, s, z);
    const int spelled = !info->causal && d_k <= MAX_SPELLED &&
                        d_v <= MAX_SPELLED && n_k <= ATTN__MAX_KIDS;
    output_steps(walker, it, s, z, spelled);
}

void attn__steps_linear(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    const int n_q = info->n_q, n_k = info->n_k, d_k = info->d_k;
    const int d_v = info->d_v;
    char intro[512];
    snprintf(intro, sizeof intro,
             "With φ(x) = elu(x) + 1: output_i = φ(q_i) "
             "S ÷ (φ(q_i) · z), where S = Σ_j φ(k_j)ᵀ v_j and z = Σ_j "
             "φ(k_j)%s. n_q = %d, n_k = %d, d_k = %d, d_v = %d.%s",
             info->causal ? " over j ≤ i (causal)" : " over all keys", n_q, n_k,
             d_k, d_v,
             info->batched ? " A batch: each item is computed on its own."
                           : "");
    walker->sink->begin(walker, "Linear attention", intro);
    const double *q = attn__walk_field(walker, "q");
    const double *k = attn__walk_field(walker, "k");
    const double *v = attn__walk_field(walker, "v");
    const double *output = attn__walk_result(walker, "output");
    for (int b = 0; b < attn__walk_items(info); b++) {
        if (!attn__walk_begin_item(walker, b)) break;
        char prefix[16];
        attn__walk_id_prefix(walker, b, prefix, sizeof prefix);
        const linear_item it = {
            q + attn__item(b, n_q, d_k),
            k + attn__item(b, n_k, d_k),
            v + attn__item(b, n_k, d_v),
            output + attn__item(b, n_q, d_v),
            b,
            info->batched ? b : -1,
            prefix,
        };
        item_steps(walker, &it);
    }
}
