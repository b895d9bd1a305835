/* render_json.c: the step list as JSON, for the page and for anyone who
 * renders a walkthrough themselves (docs/steps-json.md):
 *
 *   {"title": ..., "intro": ..., "steps": [{"id", "number", "title",
 *    "group", "text": [...], "formula": {"tex", "plain"}, "regions": [...],
 *    "equations": [{"label", "repeat"?, "chain": [node, ...]}],
 *    "tables": [...]}]}
 *
 * A node is {"v": value, "ref": [tensor, i, ...]} (a leaf; ref absent for
 * a constant) or {"op", "v", "args": [node, ...]} (v absent where the
 * value is a vector); v is null for −∞. In a step that gathers the
 * repeats of an operation, each repeat's first equation names it
 * ("repeat": "Score of sat against cat"), and the equations up to the next
 * such are its own. A step's parts come in that order;
 * the step descriptions emit them so.
 *
 * Two more sinks write the same JSON in two parts, for a page that shows
 * one step at a time: the outline (every step without its equations, and
 * "equationCount" in their place) and one step's "equations" array, the
 * same bytes as the full list's. */
#include "attention.h"
#include "walkthrough/walker.h"

#include <math.h>
#include <stdio.h>

static const char *const op_names[] = {
    "leaf", "add",  "sub",  "mul", "div", "exp",
    "max",  "sqrt", "tanh", "phi", "vec",
};

/* Parts of a step, in the order they are written. */
enum {
    PART_NONE,
    PART_TEXT,
    PART_FORMULA,
    PART_REGIONS,
    PART_EQUATIONS,
    PART_TABLES
};

/* A string of the steps: the label markers are the walker's, not text. */
static void put_string(attn__text *out, const char *text)
{
    static const char markers[] = {ATTN__LABEL_OPEN, ATTN__LABEL_CLOSE, '\0'};
    attn__text_json_string(out, text, markers);
}

static void put_number(attn__walker *walker, double x)
{
    /* Only a masked −∞ is not finite. */
    attn__text_puts(walker->out, isfinite(x)
                                     ? attn__cached_shortest(walker->numbers, x)
                                     : "null");
}

/* Opens the array of `part` in the current step (closing the last). The
 * walker's `lists` holds the part that is open. */
static void open_part(attn__walker *walker, int part)
{
    static const char *const keys[] = {"",        "text",      "formula",
                                       "regions", "equations", "tables"};
    if (walker->lists == part) {
        attn__text_puts(walker->out, ",");
        return;
    }
    if (walker->lists != PART_NONE && walker->lists != PART_FORMULA)
        attn__text_puts(walker->out, "]");
    walker->lists = part;
    attn__text_printf(walker->out, ",\"%s\":%s", keys[part],
                      part == PART_FORMULA ? "" : "[");
}

static void json_begin(attn__walker *walker, const char *title,
                       const char *intro)
{
    attn__text_puts(walker->out, "{\"title\":");
    put_string(walker->out, attn__walk_title(walker, title));
    attn__text_puts(walker->out, ",\"intro\":");
    put_string(walker->out, intro);
    attn__text_puts(walker->out, ",\"steps\":[");
}

static void json_heading(attn__walker *walker, int level, const char *title)
{
    (void)walker; /* groups carry the headings the page needs */
    (void)level;
    (void)title;
}

static void json_step_begin(attn__walker *walker)
{
    attn__text *out = walker->out;
    attn__text_puts(out, walker->steps_written++ > 0 ? ",{" : "{");
    attn__text_puts(out, "\"id\":");
    put_string(out, walker->id);
    attn__text_printf(out, ",\"number\":%d,\"title\":", walker->step);
    put_string(out, walker->title);
    attn__text_puts(out, ",\"group\":");
    put_string(out, walker->group);
    walker->lists = PART_NONE;
}

static void json_sentence(attn__walker *walker, const char *text)
{
    open_part(walker, PART_TEXT);
    put_string(walker->out, text);
}

static void json_formula(attn__walker *walker, const char *tex,
                         const char *plain)
{
    open_part(walker, PART_FORMULA);
    attn__text_puts(walker->out, "{\"tex\":");
    put_string(walker->out, tex);
    attn__text_puts(walker->out, ",\"plain\":");
    put_string(walker->out, plain);
    attn__text_puts(walker->out, "}");
}

/* ,"key":[a,b] */
static void put_index_pair(attn__text *out, const char *key, const int index[2])
{
    attn__text_puts(out, key);
    attn__text_int(out, index[0]);
    attn__text_puts(out, ",");
    attn__text_int(out, index[1]);
    attn__text_puts(out, "]");
}

static void json_region(attn__walker *walker, const attn__region *region)
{
    attn__text *out = walker->out;
    open_part(walker, PART_REGIONS);
    attn__text_puts(out, "{\"name\":");
    put_string(out, region->name);
    attn__text_printf(out, ",\"produces\":%s",
                      region->produces ? "true" : "false");
    if (region->batch >= 0)
        attn__text_printf(out, ",\"batch\":%d", region->batch);
    switch (region->shape) {
    case ATTN__REGION_ROWS:
        put_index_pair(out, ",\"rows\":[", region->index);
        break;
    case ATTN__REGION_COLS:
        put_index_pair(out, ",\"cols\":[", region->index);
        break;
    case ATTN__REGION_CELL:
        put_index_pair(out, ",\"cell\":[", region->index);
        break;
    default: attn__text_puts(out, ",\"all\":true");
    }
    if (region->masked_only != 0)
        attn__text_printf(out, ",\"masked\":%s",
                          region->masked_only > 0 ? "true" : "false");
    attn__text_puts(out, "}");
}

/* 1 when the node's value is a vector ([...], or an operation on one). */
static int is_vector(const attn__walker *walker, int index)
{
    const attn__node *node = &walker->nodes[index];
    if (node->op == ATTN__OP_VEC) return 1;
    if (node->op != ATTN__OP_ADD && node->op != ATTN__OP_SUB &&
        node->op != ATTN__OP_MUL && node->op != ATTN__OP_DIV)
        return 0;
    for (int k = 0; k < node->count; k++)
        if (is_vector(walker, walker->kids[node->first + k])) return 1;
    return 0;
}

static void put_node(attn__walker *walker, int index)
{
    attn__text *out = walker->out;
    const attn__node *node = &walker->nodes[index];
    attn__text_puts(out, "{");
    const char *separator = "";
    if (node->op != ATTN__OP_LEAF) {
        attn__text_puts(out, "\"op\":\"");
        attn__text_puts(out, op_names[node->op]);
        attn__text_puts(out, "\"");
        separator = ",";
    }
    if (!is_vector(walker, index)) {
        attn__text_puts(out, separator);
        attn__text_puts(out, "\"v\":");
        put_number(walker, node->value);
        separator = ",";
    }
    if (node->ref.name != NULL) {
        attn__text_puts(out, separator);
        attn__text_puts(out, "\"ref\":[");
        put_string(out, node->ref.name);
        for (int d = 0; d < node->ref.rank; d++) {
            attn__text_puts(out, ",");
            attn__text_int(out, node->ref.index[d]);
        }
        attn__text_puts(out, "]");
    }
    if (node->op != ATTN__OP_LEAF) {
        attn__text_puts(out, ",\"args\":[");
        for (int k = 0; k < node->count; k++) {
            if (k > 0) attn__text_puts(out, ",");
            put_node(walker, walker->kids[node->first + k]);
        }
        attn__text_puts(out, "]");
    }
    attn__text_puts(out, "}");
}

/* {"label": ..., "chain": [node, ...]}: the equation being emitted. */
static void put_equation(attn__walker *walker)
{
    attn__text *out = walker->out;
    attn__text_puts(out, "{\"label\":");
    put_string(out, walker->label);
    if (walker->repeat_open) {
        attn__text_puts(out, ",\"repeat\":");
        put_string(out, walker->repeat);
    }
    attn__text_puts(out, ",\"chain\":[");
    for (int c = 0; c < walker->chain_length; c++) {
        if (c > 0) attn__text_puts(out, ",");
        put_node(walker, walker->chain[c]);
    }
    attn__text_puts(out, "]}");
}

static void json_equation(attn__walker *walker)
{
    open_part(walker, PART_EQUATIONS);
    put_equation(walker);
}

static void json_table(attn__walker *walker, const attn__matrix_view *view)
{
    attn__text *out = walker->out;
    open_part(walker, PART_TABLES);
    attn__text_puts(out, "{\"name\":");
    put_string(out, view->name);
    attn__text_puts(out, ",\"tensor\":");
    put_string(out, view->tensor);
    if (view->note != NULL) {
        attn__text_puts(out, ",\"note\":");
        put_string(out, view->note);
    }
    attn__text_puts(out, "}");
}

static void close_part(attn__walker *walker)
{
    if (walker->lists != PART_NONE && walker->lists != PART_FORMULA)
        attn__text_puts(walker->out, "]");
    walker->lists = PART_NONE;
}

static void json_step_end(attn__walker *walker)
{
    close_part(walker);
    attn__text_puts(walker->out, "}");
}

static void json_end(attn__walker *walker)
{
    attn__text_puts(walker->out, "]}");
}

const attn__sink attn__json_sink = {
    json_begin,  json_heading,  json_step_begin, json_sentence, json_formula,
    json_region, json_equation, json_table,      json_step_end, json_end,
};

/* ---- The outline: every part but the equations, which are counted ----
 * (the walker counts a step's equations as they are emitted) */

static void outline_equation(attn__walker *walker)
{
    (void)walker;
}

static void outline_step_end(attn__walker *walker)
{
    close_part(walker);
    if (walker->equations > 0)
        attn__text_printf(walker->out, ",\"equationCount\":%d",
                          walker->equations);
    attn__text_puts(walker->out, "}");
}

const attn__sink attn__json_outline_sink = {
    json_begin,       json_heading, json_step_begin,  json_sentence,
    json_formula,     json_region,  outline_equation, json_table,
    outline_step_end, json_end,
};

/* ---- One step's equations: the array the steps JSON has for it ---- */

static void equations_begin(attn__walker *walker, const char *title,
                            const char *intro)
{
    (void)title;
    (void)intro;
    attn__text_puts(walker->out, "[");
}

static void equations_step(attn__walker *walker)
{
    (void)walker;
}

static void equations_text(attn__walker *walker, const char *text)
{
    (void)walker;
    (void)text;
}

static void equations_formula(attn__walker *walker, const char *tex,
                              const char *plain)
{
    (void)walker;
    (void)tex;
    (void)plain;
}

static void equations_region(attn__walker *walker, const attn__region *region)
{
    (void)walker;
    (void)region;
}

static void equations_equation(attn__walker *walker)
{
    if (walker->step != walker->only_step) return;
    if (walker->equations > 0) attn__text_puts(walker->out, ",");
    put_equation(walker);
}

static void equations_table(attn__walker *walker, const attn__matrix_view *view)
{
    (void)walker;
    (void)view;
}

static void equations_end(attn__walker *walker)
{
    attn__text_puts(walker->out, "]");
}

const attn__sink attn__json_equations_sink = {
    equations_begin,   json_heading,     equations_step,     equations_text,
    equations_formula, equations_region, equations_equation, equations_table,
    equations_step,    equations_end,
};
