/* steps_softmax.c: the walkthrough of the softmax kind: scale and mask,
 * then for the first row its largest entry, the exponentials, their sum
 * and the division, and the other rows together, each a repeat of it. */
#include "attention.h"
#include "walkthrough/walker.h"

#include <math.h>
#include <stdio.h>

#define TEX_SOFTMAX                                      \
    "\\operatorname{softmax}(x)_j = \\frac{e^{x_j - m}}" \
    "{\\sum_k e^{x_k - m}},\\quad m = \\max_k x_k"
#define PLAIN_SOFTMAX                                        \
    "softmax(x)_j = exp(x_j − m) ÷ Σ_k exp(x_k − m), " \
    "m = max_k x_k"

static void scale_step(attn__walker *walker, const attn__walk_block *block,
                       const char *id, int masked)
{
    const attn__run_info *info = walker->info;
    char qt[ATTN__LABEL_CAP], kt[ATTN__LABEL_CAP];
    attn__walk_step(walker, id, "%s",
                    masked ? "Scale and mask the inputs" : "Scale the inputs");
    attn__walk_sentence(walker,
                        "Every input is multiplied by the same "
                        "factor first; shrinking the inputs brings them "
                        "closer together and evens out the weights.%s",
                        masked ? " A mask leaves some entries out: they "
                                 "become −∞, and since exp(−∞) = 0 they get "
                                 "no weight at all."
                               : "");
    attn__walk_region(walker, 0, "x", block->batch, ATTN__REGION_ALL, 0, 0);
    attn__walk_region(walker, 1, "scaled", block->batch, ATTN__REGION_ALL, 0,
                      0);
    for (int i = 0; i < block->n_q; i++)
        for (int j = 0; j < block->n_k; j++) {
            const size_t at = (size_t)i * (size_t)block->n_k + (size_t)j;
            const attn__ref ref = attn__batched(
                info->vector_query ? attn__ref1("scaled", j)
                                   : attn__ref2("scaled", i, j),
                block->batch);
            attn__ref x_ref = ref;
            x_ref.name = "x";
            attn__eq_begin(walker, "scaled[%s, %s]",
                           attn__walk_label(&info->queries, i, qt, sizeof qt),
                           attn__walk_label(&info->keys, j, kt, sizeof kt));
            if (block->scaled[at] > -INFINITY)
                attn__eq_chain(
                    walker,
                    attn__binary(walker, ATTN__OP_MUL, block->scaled[at],
                                 attn__leaf(walker, block->q[at], x_ref),
                                 attn__constant(walker, info->scale)));
            attn__eq_chain(walker, attn__leaf(walker, block->scaled[at], ref));
            attn__eq_emit(walker);
        }
    attn__walk_show(walker, "scaled", "scaled", masked ? "masked" : NULL,
                    block->scaled, (size_t)block->n_k, block->n_q, block->n_k,
                    &info->queries, &info->keys);
    attn__walk_step_end(walker);
}

/* The three steps of each row: largest entry, exponentials, sum and
 * divide. */
static const struct row_stage {
    const char *id, *title, *sentence;
    const char *reads, *produces[2];
    int parts;
} row_stages[] = {
    {"max",
     "the largest entry",
     "Find the largest entry. Subtracting it from every entry leaves the "
     "weights unchanged (it cancels in the division) but keeps every "
     "exponential at most 1, so nothing overflows.",
     "scaled",
     {"max", NULL},
     ATTN__SOFTMAX_MAX},
    {"exp",
     "exponentials",
     "Take e to the power of each entry minus the maximum. The largest entry "
     "gives exactly 1; an entry far below it gives almost 0.",
     "scaled",
     {"exp", NULL},
     ATTN__SOFTMAX_EXP},
    {"sum",
     "sum and divide",
     "Add the exponentials and divide each by the total: the results are the "
     "weights, and they add up to 1.",
     "exp",
     {"sum", "weights"},
     ATTN__SOFTMAX_SUM | ATTN__SOFTMAX_WEIGHTS},
};

/* The first row's three steps: largest entry, exponentials, sum and
 * divide. */
static void first_row_steps(attn__walker *walker, const attn__walk_block *block,
                            const char *prefix, int shown_rows)
{
    const attn__run_info *info = walker->info;
    char qt[ATTN__LABEL_CAP], id[ATTN__ID_CAP];
    const char *ql = attn__walk_label(&info->queries, 0, qt, sizeof qt);
    for (size_t s = 0; s < sizeof row_stages / sizeof row_stages[0]; s++) {
        const struct row_stage *stage = &row_stages[s];
        snprintf(id, sizeof id, "%s%s-0", prefix, stage->id);
        /* Several rows: titles start with the row's label. */
        if (block->n_q > 1)
            attn__walk_step(walker, id, "%s: %s", ql, stage->title);
        else
            attn__walk_step(walker, id, "%c%s", stage->title[0] - 'a' + 'A',
                            stage->title + 1);
        attn__walk_sentence(walker, "%s", stage->sentence);
        attn__walk_formula(walker, TEX_SOFTMAX, PLAIN_SOFTMAX);
        attn__walk_region(walker, 0, stage->reads, block->batch,
                          ATTN__REGION_ROWS, 0, 0);
        for (int p = 0; p < 2 && stage->produces[p] != NULL; p++)
            attn__walk_region(walker, 1, stage->produces[p], block->batch,
                              ATTN__REGION_ROWS, 0, 0);
        attn__softmax_equations(walker, block, 0, stage->parts);
        if (stage->produces[1] != NULL && shown_rows == 1)
            attn__walk_show(walker, "weights", "weights", NULL, block->weights,
                            (size_t)block->n_k, block->n_q, block->n_k,
                            &info->queries, &info->keys);
        attn__walk_step_end(walker);
    }
}

/* The other rows in one step, each a repeat of the first row's three. */
static void other_rows_step(attn__walker *walker, const attn__walk_block *block,
                            const char *prefix, int shown_rows)
{
    const attn__run_info *info = walker->info;
    char qt[ATTN__ROW_OF_CAP], id[ATTN__ID_CAP];
    snprintf(id, sizeof id, "%ssoftmax-others", prefix);
    attn__walk_others(walker, id, shown_rows - 1, "", "row", "rows");
    attn__walk_sentence(walker,
                        "Every other row goes the same way: its largest "
                        "entry, the exponentials, their sum and the "
                        "division. Each row's numbers are in its own "
                        "equations.");
    attn__walk_formula(walker, TEX_SOFTMAX, PLAIN_SOFTMAX);
    attn__walk_region(walker, 0, "scaled", block->batch, ATTN__REGION_ROWS, 1,
                      shown_rows - 1);
    attn__walk_region(walker, 1, "weights", block->batch, ATTN__REGION_ROWS, 1,
                      shown_rows - 1);
    for (int i = 1; i < shown_rows; i++) {
        attn__walk_repeat(walker, "Softmax of %s",
                          attn__walk_row_of(&info->queries, i, qt, sizeof qt));
        attn__softmax_equations(walker, block, i, ATTN__SOFTMAX_ALL);
    }
    attn__walk_show(walker, "weights", "weights", NULL, block->weights,
                    (size_t)block->n_k, block->n_q, block->n_k, &info->queries,
                    &info->keys);
    attn__walk_step_end(walker);
}

void attn__steps_softmax(attn__walker *walker)
{
    const attn__run_info *info = walker->info;
    const int rows = info->n_q, cols = info->n_k;
    const int masked = attn__field_value(walker->problem, "mask") != NULL;
    char intro[256];
    snprintf(intro, sizeof intro,
             "weights = softmax(x%s) along each row of "
             "%d entries.%s",
             info->scale != 1.0 ? " × scale" : "", cols,
             info->batched ? " A batch: each item is computed on its own."
                           : "");
    walker->sink->begin(walker, "Softmax", intro);
    const double *x = attn__walk_field(walker, "x");
    const double *scaled = attn__walk_result(walker, "scaled");
    const double *weights = attn__walk_result(walker, "weights");
    const int shown_rows = rows < ATTN__STEP_ROWS ? rows : ATTN__STEP_ROWS;
    for (int b = 0; b < attn__walk_items(info); b++) {
        if (!attn__walk_begin_item(walker, b)) break;
        char prefix[16], id[ATTN__ID_CAP];
        attn__walk_id_prefix(walker, b, prefix, sizeof prefix);
        const size_t grid = attn__item(b, rows, cols);
        const attn__walk_block block = {
            .q = x + grid,
            .prefix = "",
            .id_prefix = prefix,
            .scaled = scaled + grid,
            .weights = weights + grid,
            .n_q = rows,
            .n_k = cols,
            .batch_index = b,
            .batch = info->batched ? b : -1,
        };
        snprintf(id, sizeof id, "%sinputs", prefix);
        attn__walk_step(walker, id, "The numbers going into the softmax");
        attn__walk_sentence(walker,
                            "The softmax turns any list of numbers "
                            "into positive weights that add up to 1; larger "
                            "numbers get larger weights. How uneven the "
                            "weights come out depends on how far apart the "
                            "inputs are.");
        attn__walk_formula(walker, TEX_SOFTMAX, PLAIN_SOFTMAX);
        attn__walk_region(walker, 0, "x", block.batch, ATTN__REGION_ALL, 0, 0);
        attn__walk_show(walker, "x", "x", NULL, x + grid, (size_t)cols, rows,
                        cols, &info->queries, &info->keys);
        attn__walk_step_end(walker);
        snprintf(id, sizeof id, "%sscale", prefix);
        if (info->scale != 1.0 || masked)
            scale_step(walker, &block, id, masked);
        first_row_steps(walker, &block, prefix, shown_rows);
        if (shown_rows > 1) other_rows_step(walker, &block, prefix, shown_rows);
        static const char *const shown[] = {"x", "weights"};
        snprintf(id, sizeof id, "%sdone", prefix);
        attn__walk_done(walker, id, "The weights",
                        "Compare the inputs with the weights: the larger the "
                        "gaps between the inputs, the closer the weights come "
                        "to a single 1.",
                        NULL, NULL, shown, 2);
    }
}
