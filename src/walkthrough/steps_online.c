/* steps_online.c: the walkthrough of the online softmax: the keys in
 * tiles, each tile's scores, the running max, the rescaling of what was
 * summed so far, the running sum and output, the division at the end, and
 * the plain softmax's output beside it. */
#include "attention.h"
#include "walkthrough/walker.h"

#include <math.h>
#include <stdio.h>

#define TEX_FIRST_TILE                                        \
    "m = \\max_{j \\in \\text{tile}} s_j,\\quad "             \
    "\\ell = \\sum_{j \\in \\text{tile}} e^{s_j - m},\\quad " \
    "a = \\sum_{j \\in \\text{tile}} e^{s_j - m}\\, v_j"
#define PLAIN_FIRST_TILE                   \
    "m = max s_j, l = Σ exp(s_j − m), " \
    "a = Σ exp(s_j − m) v_j over the tile's keys"
#define TEX_NEXT_TILE                                               \
    "m' = \\max\\big(m, \\max_{j \\in \\text{tile}} "               \
    "s_j\\big),\\quad \\ell' = e^{m - m'}\\,\\ell + \\sum_{j \\in " \
    "\\text{tile}} e^{s_j - m'},\\quad a' = e^{m - m'}\\,a + "      \
    "\\sum_{j \\in \\text{tile}} e^{s_j - m'}\\, v_j"
#define PLAIN_NEXT_TILE                             \
    "m' = max(m, max s_j), l' = exp(m − m') l + " \
    "Σ exp(s_j − m'), a' = exp(m − m') a + Σ exp(s_j − m') v_j"
#define TEX_DIVIDE "o_i = \\frac{a_i}{\\ell_i}"
#define TEX_PLAIN                                  \
    "o_i = \\sum_j w_{ij}\\, v_j,\\quad w_{ij} = " \
    "\\frac{e^{s_{ij} - \\max_k s_{ik}}}{\\sum_k e^{s_{ik} - \\max_k s_{ik}}}"

typedef struct online_data {
    const double *q, *k, *v, *scaled, *tile_max, *tile_sum, *tile_acc;
    const double *output, *weights, *plain;
} online_data;

/* The rows stepped through: queries up to ATTN__STEP_ROWS. */
static int shown_rows(const attn__run_info *info)
{
    return info->n_q < ATTN__STEP_ROWS ? info->n_q : ATTN__STEP_ROWS;
}

/* scaled[i, j] = c × (q_i1 k_j1 + ...). */
static void score_equation(attn__walker *walker, const online_data *d, int i,
                           int j)
{
    const attn__run_info *info = walker->info;
    char qt[ATTN__LABEL_CAP], kt[ATTN__LABEL_CAP];
    const int d_k = info->d_k;
    const double value = d->scaled[(size_t)i * (size_t)info->n_k + (size_t)j];
    attn__eq_begin(walker, "s[%s, %s]",
                   attn__walk_label(&info->queries, i, qt, sizeof qt),
                   attn__walk_label(&info->keys, j, kt, sizeof kt));
    if (d_k <= ATTN__MAX_KIDS) {
        int products[ATTN__MAX_KIDS];
        double dot = 0.0;
        for (int c = 0; c < d_k; c++) {
            const double a = d->q[(size_t)i * (size_t)d_k + (size_t)c];
            const double b = d->k[(size_t)j * (size_t)d_k + (size_t)c];
            dot += a * b;
            products[c] = attn__binary(
                walker, ATTN__OP_MUL, a * b,
                attn__leaf(walker, a, attn__ref2("q", i, c)),
                attn__leaf(walker, b, attn__ref2("k", j, c)));
        }
        const int sum = d_k == 1 ? products[0]
                                 : attn__op_node(walker, ATTN__OP_ADD, dot,
                                                 products, d_k);
        attn__eq_chain(walker,
                       attn__binary(walker, ATTN__OP_MUL, value,
                                    attn__constant(walker, info->scale), sum));
    }
    attn__eq_chain(walker,
                   attn__leaf(walker, value, attn__ref2("scaled", i, j)));
    attn__eq_emit(walker);
}

/* weight × [v_j1, v_j2, ...]. */
static int times_value_row(attn__walker *walker, const online_data *d,
                           int weight, int j)
{
    const int d_v = walker->info->d_v;
    return attn__binary(walker, ATTN__OP_MUL, 0.0, weight,
                        attn__vector_leaves(walker,
                                            d->v + (size_t)j * (size_t)d_v, 1,
                                            d_v, attn__ref2("v", j, 0)));
}

/* kids[0] + kids[1] + ..., or kids[0] alone. */
static int sum_of(attn__walker *walker, const int *kids, int count,
                  double value)
{
    return count == 1 ? kids[0]
                      : attn__op_node(walker, ATTN__OP_ADD, value, kids, count);
}

/* exp(s_ij − m) with m = tileMax[i, t]. */
static int shifted_exp(attn__walker *walker, const online_data *d, int i, int j,
                       int t)
{
    const attn__run_info *info = walker->info;
    const double s = d->scaled[(size_t)i * (size_t)info->n_k + (size_t)j];
    const double m = d->tile_max[(size_t)i * (size_t)info->tiles + (size_t)t];
    const int diff = attn__binary(
        walker, ATTN__OP_SUB, s - m,
        attn__leaf(walker, s, attn__ref2("scaled", i, j)),
        attn__leaf(walker, m, attn__ref2("tileMax", i, t)));
    return attn__unary(walker, ATTN__OP_EXP, exp(s - m), diff);
}

/* α = exp(tileMax[i, t − 1] − tileMax[i, t]), the rescaling. */
static int rescaling(attn__walker *walker, const online_data *d, int i, int t)
{
    const size_t row = (size_t)i * (size_t)walker->info->tiles;
    const double old = d->tile_max[row + (size_t)t - 1];
    const double now = d->tile_max[row + (size_t)t];
    return attn__unary(
        walker, ATTN__OP_EXP, exp(old - now),
        attn__binary(walker, ATTN__OP_SUB, old - now,
                     attn__leaf(walker, old, attn__ref2("tileMax", i, t - 1)),
                     attn__leaf(walker, now, attn__ref2("tileMax", i, t))));
}

/* The running max, sum and output of row i after tile t (keys first ..
 * last). */
static void state_equations(attn__walker *walker, const online_data *d, int i,
                            int t, int first, int last)
{
    const attn__run_info *info = walker->info;
    const int tiles = info->tiles, d_v = info->d_v;
    const size_t at = (size_t)i * (size_t)tiles + (size_t)t;
    char qt[ATTN__LABEL_CAP];
    const char *row = attn__walk_label(&info->queries, i, qt, sizeof qt);
    int kids[ATTN__MAX_KIDS + 1];

    attn__eq_begin(walker, "m[%s]", row);
    int count = 0;
    if (t > 0)
        kids[count++] = attn__leaf(walker, d->tile_max[at - 1],
                                   attn__ref2("tileMax", i, t - 1));
    for (int j = first; j <= last; j++)
        kids[count++] = attn__leaf(
            walker, d->scaled[(size_t)i * (size_t)info->n_k + (size_t)j],
            attn__ref2("scaled", i, j));
    if (count > 1)
        attn__eq_chain(walker, attn__op_node(walker, ATTN__OP_MAX,
                                             d->tile_max[at], kids, count));
    attn__eq_chain(walker, attn__leaf(walker, d->tile_max[at],
                                      attn__ref2("tileMax", i, t)));
    attn__eq_emit(walker);

    attn__eq_begin(walker, "l[%s]", row);
    count = 0;
    if (t > 0)
        kids[count++] = attn__binary(
            walker, ATTN__OP_MUL,
            exp(d->tile_max[at - 1] - d->tile_max[at]) * d->tile_sum[at - 1],
            rescaling(walker, d, i, t),
            attn__leaf(walker, d->tile_sum[at - 1],
                       attn__ref2("tileSum", i, t - 1)));
    for (int j = first; j <= last; j++)
        kids[count++] = shifted_exp(walker, d, i, j, t);
    /* Even a single term is spelled: it says what the key adds. */
    attn__eq_chain(walker, sum_of(walker, kids, count, d->tile_sum[at]));
    attn__eq_chain(walker, attn__leaf(walker, d->tile_sum[at],
                                      attn__ref2("tileSum", i, t)));
    attn__eq_emit(walker);

    const double *acc = d->tile_acc + at * (size_t)d_v;
    attn__eq_begin(walker, "a[%s]", row);
    count = 0;
    if (t > 0)
        kids[count++] = attn__binary(
            walker, ATTN__OP_MUL, 0.0, rescaling(walker, d, i, t),
            attn__vector_leaves(walker, acc - d_v, 1, d_v,
                                attn__ref3("tileAcc", i, t - 1, 0)));
    for (int j = first; j <= last; j++)
        kids[count++] = times_value_row(walker, d,
                                        shifted_exp(walker, d, i, j, t), j);
    attn__eq_chain(walker, sum_of(walker, kids, count, 0.0));
    attn__eq_chain(walker, attn__vector_leaves(walker, acc, 1, d_v,
                                               attn__ref3("tileAcc", i, t, 0)));
    attn__eq_emit(walker);
}

static void tile_step(attn__walker *walker, const online_data *d, int t)
{
    const attn__run_info *info = walker->info;
    const int first = t * info->tile;
    const int last = first + info->tile - 1 < info->n_k - 1
                         ? first + info->tile - 1
                         : info->n_k - 1;
    char id[ATTN__ID_CAP], a[ATTN__LABEL_CAP], b[ATTN__LABEL_CAP];
    snprintf(id, sizeof id, "tile-%d", t + 1);
    const char *from = attn__walk_label(&info->keys, first, a, sizeof a);
    if (first == last)
        attn__walk_step(walker, id, "Tile %d of %d: key %s", t + 1, info->tiles,
                        from);
    else
        attn__walk_step(walker, id, "Tile %d of %d: keys %s to %s", t + 1,
                        info->tiles, from,
                        attn__walk_label(&info->keys, last, b, sizeof b));
    if (t == 0) {
        attn__walk_sentence(walker,
                            "Score the first tile's keys. Each "
                            "query keeps three things from here on: m, the "
                            "largest score so far; l, the sum of e^(s − m); "
                            "and a, the sum of e^(s − m) times each key's "
                            "value: the output so far, not yet divided.");
        attn__walk_formula(walker, TEX_FIRST_TILE, PLAIN_FIRST_TILE);
    } else {
        attn__walk_sentence(walker,
                            "Score the next tile's keys. Where one "
                            "beats the largest score so far, everything "
                            "summed until now was measured against a smaller "
                            "max: it is multiplied by e^(m − m'), at most 1, "
                            "before this tile's terms are added. Where no "
                            "score beats it, e^(m − m') = e^0 = 1 and "
                            "nothing changes.");
        attn__walk_formula(walker, TEX_NEXT_TILE, PLAIN_NEXT_TILE);
    }
    attn__walk_region(walker, 0, "q", -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 0, "k", -1, ATTN__REGION_ROWS, first, last);
    attn__walk_region(walker, 0, "v", -1, ATTN__REGION_ROWS, first, last);
    attn__walk_region(walker, 1, "scaled", -1, ATTN__REGION_COLS, first, last);
    attn__walk_region(walker, 1, "tileMax", -1, ATTN__REGION_COLS, t, t);
    attn__walk_region(walker, 1, "tileSum", -1, ATTN__REGION_COLS, t, t);
    const int rows = shown_rows(info), keys = last - first + 1;
    const int spelled = keys < ATTN__MAX_KIDS &&
                        rows * (keys + 3) <= ATTN__DETAIL_CELLS;
    for (int i = 0; i < rows && spelled; i++) {
        if (i > 0)
            attn__walk_repeat(walker, "Tile %d for %s", t + 1,
                              attn__walk_label(&info->queries, i, a, sizeof a));
        for (int j = first; j <= last; j++) score_equation(walker, d, i, j);
        state_equations(walker, d, i, t, first, last);
    }
    if (!spelled)
        attn__walk_sentence(walker,
                            "(%d keys in a tile: too many terms to "
                            "spell out.)",
                            keys);
    else if (rows < info->n_q)
        attn__walk_sentence(walker,
                            "(Equations for the first %d queries; "
                            "the others go the same way.)",
                            rows);
    const attn__labels running = {NULL, "after tile "};
    attn__walk_show(walker, "m, the largest score so far", "tileMax", NULL,
                    d->tile_max, (size_t)info->tiles, info->n_q, t + 1,
                    &info->queries, &running);
    attn__walk_show(walker, "l, the running sum", "tileSum", NULL, d->tile_sum,
                    (size_t)info->tiles, info->n_q, t + 1, &info->queries,
                    &running);
    attn__walk_step_end(walker);
}

/* The tiles past the ATTN__STEP_ROWS walked one by one, in one step. */
static void rest_step(attn__walker *walker, const online_data *d)
{
    const attn__run_info *info = walker->info;
    const int first = ATTN__STEP_ROWS * info->tile;
    attn__walk_step(walker, "tile-rest", "Tiles %d to %d", ATTN__STEP_ROWS + 1,
                    info->tiles);
    attn__walk_sentence(walker,
                        "Every further tile goes the same way: its "
                        "scores, a new running max, the rescaling and the "
                        "tile's terms.");
    attn__walk_region(walker, 0, "k", -1, ATTN__REGION_ROWS, first,
                      info->n_k - 1);
    attn__walk_region(walker, 0, "v", -1, ATTN__REGION_ROWS, first,
                      info->n_k - 1);
    attn__walk_region(walker, 1, "scaled", -1, ATTN__REGION_COLS, first,
                      info->n_k - 1);
    attn__walk_region(walker, 1, "tileMax", -1, ATTN__REGION_COLS,
                      ATTN__STEP_ROWS, info->tiles - 1);
    attn__walk_region(walker, 1, "tileSum", -1, ATTN__REGION_COLS,
                      ATTN__STEP_ROWS, info->tiles - 1);
    const attn__labels running = {NULL, "after tile "};
    attn__walk_show(walker, "m, the largest score so far", "tileMax", NULL,
                    d->tile_max, (size_t)info->tiles, info->n_q, info->tiles,
                    &info->queries, &running);
    attn__walk_step_end(walker);
}

static void divide_step(attn__walker *walker, const online_data *d)
{
    const attn__run_info *info = walker->info;
    const int tiles = info->tiles, d_v = info->d_v, last = tiles - 1;
    char qt[ATTN__LABEL_CAP];
    attn__walk_step(walker, "divide", "Divide by the running sum");
    attn__walk_sentence(walker,
                        "After the last tile, a holds Σ_j e^(s_j − "
                        "m) v_j and l holds Σ_j e^(s_j − m), both against "
                        "the row's true maximum: dividing gives the "
                        "softmax-weighted average of the values, the "
                        "output, without a weight ever having been stored.");
    attn__walk_formula(walker, TEX_DIVIDE, "o_i = a_i ÷ l_i");
    attn__walk_region(walker, 0, "tileSum", -1, ATTN__REGION_COLS, last, last);
    attn__walk_region(walker, 1, "output", -1, ATTN__REGION_ALL, 0, 0);
    for (int i = 0; i < shown_rows(info); i++) {
        const size_t at = (size_t)i * (size_t)tiles + (size_t)last;
        if (i > 0)
            attn__walk_repeat(
                walker, "Output for %s",
                attn__walk_label(&info->queries, i, qt, sizeof qt));
        attn__eq_begin(walker, "output[%s]",
                       attn__walk_label(&info->queries, i, qt, sizeof qt));
        attn__eq_chain(
            walker, attn__binary(walker, ATTN__OP_DIV, 0.0,
                                 attn__vector_leaves(
                                     walker, d->tile_acc + at * (size_t)d_v, 1,
                                     d_v, attn__ref3("tileAcc", i, last, 0)),
                                 attn__leaf(walker, d->tile_sum[at],
                                            attn__ref2("tileSum", i, last))));
        attn__eq_chain(walker, attn__vector_leaves(
                                   walker, d->output + (size_t)i * (size_t)d_v,
                                   1, d_v, attn__ref2("output", i, 0)));
        attn__eq_emit(walker);
    }
    attn__walk_show(walker, "output", "output", "n_q × d_v", d->output,
                    (size_t)d_v, info->n_q, d_v, &info->queries,
                    &attn__index_labels);
    attn__walk_step_end(walker);
}

/* The largest |online − plain| over the outputs. */
static double largest_difference(const online_data *d, size_t count)
{
    double largest = 0.0;
    for (size_t c = 0; c < count; c++) {
        const double diff = fabs(d->output[c] - d->plain[c]);
        if (diff > largest) largest = diff;
    }
    return largest;
}

static void compare_step(attn__walker *walker, const online_data *d)
{
    const attn__run_info *info = walker->info;
    const int n_k = info->n_k, d_v = info->d_v;
    char qt[ATTN__LABEL_CAP];
    attn__walk_step(walker, "compare", "The same output as the plain softmax");
    const double largest = largest_difference(d,
                                              (size_t)info->n_q * (size_t)d_v);
    if (largest == 0.0)
        attn__walk_sentence(walker,
                            "The plain softmax stores every weight "
                            "w_ij and then averages the values with them. "
                            "It gives the same output here, to the last "
                            "bit.");
    else
        attn__walk_sentence(walker,
                            "The plain softmax stores every weight "
                            "w_ij and then averages the values with them. "
                            "It gives the same output: the largest "
                            "difference is %.1e, rounding in the last "
                            "digits, the same terms added in another order "
                            "and scaled at other moments.",
                            largest);
    attn__walk_formula(walker, TEX_PLAIN, "o_i = Σ_j w_ij v_j");
    attn__walk_region(walker, 0, "output", -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 1, "weights", -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 1, "plainOutput", -1, ATTN__REGION_ALL, 0, 0);
    for (int i = 0; i < shown_rows(info) && n_k <= ATTN__MAX_KIDS; i++) {
        if (i > 0)
            attn__walk_repeat(
                walker, "Plain output for %s",
                attn__walk_label(&info->queries, i, qt, sizeof qt));
        attn__eq_begin(walker, "plain output[%s]",
                       attn__walk_label(&info->queries, i, qt, sizeof qt));
        int terms[ATTN__MAX_KIDS];
        for (int j = 0; j < n_k; j++) {
            const double w = d->weights[(size_t)i * (size_t)n_k + (size_t)j];
            terms[j] = times_value_row(
                walker, d, attn__leaf(walker, w, attn__ref2("weights", i, j)),
                j);
        }
        attn__eq_chain(walker, sum_of(walker, terms, n_k, 0.0));
        attn__eq_chain(walker, attn__vector_leaves(
                                   walker, d->plain + (size_t)i * (size_t)d_v,
                                   1, d_v, attn__ref2("plainOutput", i, 0)));
        attn__eq_emit(walker);
    }
    attn__walk_show(walker, "weights (plain softmax)", "weights", "n_q × n_k",
                    d->weights, (size_t)n_k, info->n_q, n_k, &info->queries,
                    &info->keys);
    attn__walk_show(walker, "output (plain softmax)", "plainOutput",
                    "n_q × d_v", d->plain, (size_t)d_v, info->n_q, d_v,
                    &info->queries, &attn__index_labels);
    attn__walk_step_end(walker);
}

void attn__steps_online(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    char intro[512];
    snprintf(intro, sizeof intro,
             "Attention without the n_q × n_k weights, "
             "as FlashAttention computes it: each query goes through the keys "
             "in tiles of %d, keeping a running max, a running sum and a "
             "running output, and divides once at the end. n_q = %d, n_k = "
             "%d (%d tiles), d_k = %d, d_v = %d, scores scaled by 1/√d_k.",
             info->tile, info->n_q, info->n_k, info->tiles, info->d_k,
             info->d_v);
    walker->sink->begin(walker, attn__walk_title(walker, "The online softmax"),
                        intro);
    const online_data d = {
        attn__walk_field(walker, "q"),
        attn__walk_field(walker, "k"),
        attn__walk_field(walker, "v"),
        attn__walk_result(walker, "scaled"),
        attn__walk_result(walker, "tileMax"),
        attn__walk_result(walker, "tileSum"),
        attn__walk_result(walker, "tileAcc"),
        attn__walk_result(walker, "output"),
        attn__walk_result(walker, "weights"),
        attn__walk_result(walker, "plainOutput"),
    };
    attn__walk_step(walker, "inputs", "Queries, keys and values");
    attn__walk_sentence(walker,
                        "The plain softmax needs every score of a "
                        "row before it can weigh anything. The online "
                        "softmax reads the keys a tile at a time and never "
                        "stores a weight, so its memory does not grow with "
                        "n_q × n_k.");
    attn__walk_region(walker, 0, "q", -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 0, "k", -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 0, "v", -1, ATTN__REGION_ALL, 0, 0);
    attn__walk_show(walker, "Q", "q", "n_q × d_k", d.q, (size_t)info->d_k,
                    info->n_q, info->d_k, &info->queries, &attn__index_labels);
    attn__walk_show(walker, "K", "k", "n_k × d_k", d.k, (size_t)info->d_k,
                    info->n_k, info->d_k, &info->keys, &attn__index_labels);
    attn__walk_show(walker, "V", "v", "n_k × d_v", d.v, (size_t)info->d_v,
                    info->n_k, info->d_v, &info->keys, &attn__index_labels);
    attn__walk_step_end(walker);
    for (int t = 0; t < info->tiles && t < ATTN__STEP_ROWS; t++)
        tile_step(walker, &d, t);
    if (info->tiles > ATTN__STEP_ROWS) rest_step(walker, &d);
    divide_step(walker, &d);
    compare_step(walker, &d);
}
