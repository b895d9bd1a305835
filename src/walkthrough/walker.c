/* walker.c: the walker behind the text, Markdown and LaTeX
 * walkthroughs, and the steps several kinds share (scores, scale, mask,
 * softmax, weighted sums). Output depends on nothing but the problem. */
#include "attention.h"
#include "walkthrough/walker.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- Styles ---- */

struct attn__walk_style {
    const char *heading_marks[4]; /* before a heading of level 1..4 */
    const char *heading_end;      /* after a heading's title */
    const char *underlines[4];    /* repeated under a heading, or NULL */
    const char *item_mark;        /* after an item's indentation */
    const char *list_begin;       /* around each level of items, or NULL */
    const char *list_end;
    const char *code;             /* around formulas */
    const char *strong[2];        /* around a matrix's name */
    /* Writes text of the walker's own (prose, or a formula between code
     * marks), and text from the user (token labels), as the format needs. */
    void (*put_text)(attn__walker *walker, const char *text);
    void (*put_label)(attn__walker *walker, const char *label);
    void (*table)(attn__walker *walker, const attn__matrix_view *view);
};

static void put_plain(attn__walker *walker, const char *text);
static void put_markdown_label(attn__walker *walker, const char *label);
static void put_latex_text(attn__walker *walker, const char *text);
static void put_latex_label(attn__walker *walker, const char *label);
static void text_table(attn__walker *walker, const attn__matrix_view *view);
static void markdown_table(attn__walker *walker,
                           const attn__matrix_view *view);
static void latex_table(attn__walker *walker, const attn__matrix_view *view);

static const attn__walk_style text_style = {
    {"", "", "", ""}, "", {"=", "-", "~", "^"}, "", NULL, NULL, "",
    {"", ""}, put_plain, put_plain, text_table,
};

static const attn__walk_style markdown_style = {
    {"# ", "## ", "### ", "#### "}, "", {NULL, NULL, NULL, NULL}, "- ",
    NULL, NULL, "`", {"**", "**"}, put_plain, put_markdown_label,
    markdown_table,
};

/* A fragment for a LaTeX document that loads amsmath. */
static const attn__walk_style latex_style = {
    {"\\subsection*{", "\\subsubsection*{", "\\paragraph{",
     "\\subparagraph{"}, "}", {NULL, NULL, NULL, NULL}, "\\item ",
    "\\begin{itemize}\n", "\\end{itemize}\n", "$", {"\\textbf{", "}"},
    put_latex_text, put_latex_label, latex_table,
};

const attn__labels attn__index_labels = {NULL, ""};

const char *attn__label(const attn__labels *labels, int i, char *tmp,
                        size_t cap)
{
    if (labels->names != NULL) return labels->names[i];
    /* Counted from 1, as the page counts rows, columns and heads. */
    snprintf(tmp, cap, "%s%d", labels->prefix ? labels->prefix : "", i + 1);
    return tmp;
}

/* ---- Text ---- */

static void put_plain(attn__walker *walker, const char *text)
{
    attn__text_puts(walker->out, text);
}

/* A label as literal Markdown text: punctuation that could start markup
 * (emphasis, code, links, HTML, entities, strikethrough, a table cell's
 * end) is backslash-escaped, and a line break, which would end a table
 * row, becomes a space. */
static void put_markdown_label(attn__walker *walker, const char *label)
{
    for (const char *c = label; *c; c++) {
        if (*c == '\n' || *c == '\r') {
            attn__text_puts(walker->out, " ");
            continue;
        }
        if (strchr("\\`*_[]<>|#&~", *c) != NULL)
            attn__text_puts(walker->out, "\\");
        attn__text_append(walker->out, c, 1);
    }
}

static void put_latex_text(attn__walker *walker, const char *text)
{
    if (walker->in_code)
        attn__latex_math(walker->out, text);
    else
        attn__latex_prose(walker->out, text);
}

static void put_latex_label(attn__walker *walker, const char *label)
{
    if (walker->in_code) attn__text_puts(walker->out, "\\text{");
    attn__latex_literal(walker->out, label);
    if (walker->in_code) attn__text_puts(walker->out, "}");
}

static void put_text(attn__walker *walker, const char *text)
{
    walker->style->put_text(walker, text);
}

/* ---- Blocks ---- */

/* Opens or closes lists (LaTeX's itemize) until `depth` are open. */
static void nest_lists(attn__walker *walker, int depth)
{
    const attn__walk_style *style = walker->style;
    if (style->list_begin == NULL) return;
    for (; walker->lists > depth; walker->lists--)
        attn__text_puts(walker->out, style->list_end);
    for (; walker->lists < depth; walker->lists++)
        attn__text_puts(walker->out, style->list_begin);
}

static void start_block(attn__walker *walker, int item)
{
    if (!item) nest_lists(walker, 0);
    if (walker->need_blank && !(item && walker->in_list))
        attn__text_puts(walker->out, "\n");
    walker->need_blank = 1;
    walker->in_list = item;
}

static void heading_text(attn__walker *walker, int level, const char *title)
{
    start_block(walker, 0);
    level += walker->depth;
    if (level > 4) level = 4;
    const attn__walk_style *style = walker->style;
    attn__text_puts(walker->out, style->heading_marks[level - 1]);
    put_text(walker, title);
    attn__text_printf(walker->out, "%s\n", style->heading_end);
    if (style->underlines[level - 1] != NULL) {
        attn__text_repeat(walker->out, style->underlines[level - 1],
                          (int)attn__text_width(title));
        attn__text_puts(walker->out, "\n");
    }
}

void attn__walk_heading(attn__walker *walker, int level, const char *format,
                        ...)
{
    char title[256];
    va_list args;
    va_start(args, format);
    vsnprintf(title, sizeof title, format, args);
    va_end(args);
    heading_text(walker, level, title);
}

void attn__walk_step(attn__walker *walker, const char *format, ...)
{
    char title[256];
    const int used = snprintf(title, sizeof title, "Step %d. ",
                              ++walker->step);
    va_list args;
    va_start(args, format);
    vsnprintf(title + used, sizeof title - (size_t)used, format, args);
    va_end(args);
    heading_text(walker, 2, title);
}

void attn__walk_begin(attn__walker *walker)
{
    start_block(walker, 0);
}

void attn__walk_begin_item(attn__walker *walker, int indent)
{
    start_block(walker, 1);
    nest_lists(walker, indent + 1);
    /* Text items sit one level in from the prose. */
    const int spaces = 2 * (indent + (walker->style->item_mark[0] ? 0 : 1));
    attn__text_printf(walker->out, "%*s%s", spaces, "",
                      walker->style->item_mark);
}

/* Appends the formatted text, cut at 511 bytes. */
static void put_formatted(attn__walker *walker, const char *format,
                          va_list args)
{
    char piece[512];
    vsnprintf(piece, sizeof piece, format, args);
    put_text(walker, piece);
}

void attn__walk_printf(attn__walker *walker, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    put_formatted(walker, format, args);
    va_end(args);
}

void attn__walk_label(attn__walker *walker, const attn__labels *labels, int i)
{
    char tmp[32];
    walker->style->put_label(walker, attn__label(labels, i, tmp, sizeof tmp));
}

void attn__walk_number(attn__walker *walker, double x)
{
    char number[ATTN__NUMBER_CAP];
    attn__format_rounded(number, x);
    put_text(walker, number);
}

void attn__walk_code(attn__walker *walker, int open)
{
    walker->in_code = open; /* the same mark opens and closes */
    attn__text_puts(walker->out, walker->style->code);
}

void attn__walk_end(attn__walker *walker)
{
    attn__text_puts(walker->out, "\n");
}

void attn__walk_para(attn__walker *walker, const char *format, ...)
{
    start_block(walker, 0);
    va_list args;
    va_start(args, format);
    put_formatted(walker, format, args);
    va_end(args);
    attn__text_puts(walker->out, "\n");
}

/* ---- Tables ---- */

static int shown(int count)
{
    return count > ATTN__SHOW_ROWS ? ATTN__SHOW_ROWS : count;
}

static double entry(const attn__matrix_view *view, int r, int c)
{
    const double x = view->data[(size_t)r * view->stride + (size_t)c];
    return view->map != NULL ? view->map(x) : x;
}

/* "name (rows×cols, note)": each table writes how the caption ends. */
static void caption(attn__walker *walker, const attn__matrix_view *view)
{
    const attn__walk_style *style = walker->style;
    start_block(walker, 0);
    attn__text_puts(walker->out, style->strong[0]);
    put_text(walker, view->name);
    attn__text_puts(walker->out, style->strong[1]);
    attn__walk_printf(walker, " (%d×%d", view->rows, view->cols);
    if (view->note != NULL) attn__walk_printf(walker, ", %s", view->note);
    attn__walk_printf(walker, ")");
    const int cut_rows = view->rows > ATTN__SHOW_ROWS;
    const int cut_cols = view->cols > ATTN__SHOW_ROWS;
    if (cut_rows)
        attn__walk_printf(walker, ", first %d of %d rows", shown(view->rows),
                          view->rows);
    if (cut_cols)
        attn__walk_printf(walker, "%s %d of %d columns",
                          cut_rows ? " and" : ", first", shown(view->cols),
                          view->cols);
}

/* Cell text: a row or column label, a number, or the ellipsis. r or c is
 * -1 for the header row or the label column. */
static const char *cell(const attn__matrix_view *view, int r, int c,
                        char *tmp, size_t cap)
{
    if (r < 0 && c < 0) return "";
    if (r == ATTN__SHOW_ROWS || c == ATTN__SHOW_ROWS) return "…";
    if (r < 0) return attn__label(&view->col_labels, c, tmp, cap);
    if (c < 0) return attn__label(&view->row_labels, r, tmp, cap);
    char number[ATTN__NUMBER_CAP];
    attn__format_rounded(number, entry(view, r, c));
    snprintf(tmp, cap, "%s", number);
    return tmp;
}

static int table_extent(int count)
{
    return count > ATTN__SHOW_ROWS ? ATTN__SHOW_ROWS + 1 : count;
}

static void text_table(attn__walker *walker, const attn__matrix_view *view)
{
    const int rows = table_extent(view->rows), cols = table_extent(view->cols);
    size_t widths[ATTN__SHOW_ROWS + 2] = {0}; /* label column, then cells */
    char tmp[64];
    for (int r = -1; r < rows; r++)
        for (int c = -1; c < cols; c++) {
            const size_t width = attn__text_width(cell(view, r, c, tmp,
                                                       sizeof tmp));
            if (width > widths[c + 1]) widths[c + 1] = width;
        }
    caption(walker, view);
    attn__text_puts(walker->out, ":\n");
    for (int r = -1; r < rows; r++) {
        attn__text_puts(walker->out, "  ");
        for (int c = -1; c < cols; c++) {
            const char *text = cell(view, r, c, tmp, sizeof tmp);
            const int pad = (int)(widths[c + 1] - attn__text_width(text));
            if (c < 0) /* labels left-aligned, numbers right-aligned */
                attn__text_printf(walker->out, "%s%*s", text, pad, "");
            else
                attn__text_printf(walker->out, "  %*s%s", pad, "", text);
        }
        attn__text_puts(walker->out, "\n");
    }
}

static void markdown_table(attn__walker *walker,
                           const attn__matrix_view *view)
{
    const int rows = table_extent(view->rows), cols = table_extent(view->cols);
    char tmp[64];
    caption(walker, view);
    attn__text_puts(walker->out, "\n");
    start_block(walker, 0);
    for (int r = -1; r < rows; r++) {
        for (int c = -1; c < cols; c++) {
            attn__text_puts(walker->out, c < 0 ? "| " : " | ");
            put_markdown_label(walker, cell(view, r, c, tmp, sizeof tmp));
        }
        attn__text_puts(walker->out, " |\n");
        if (r < 0) {
            attn__text_puts(walker->out, "|---");
            attn__text_repeat(walker->out, "|---:", cols);
            attn__text_puts(walker->out, "|\n");
        }
    }
}

/* Labels that say more than the row or column number: tokens, or a
 * prefix as in q0, q1. */
static int telling_labels(const attn__labels *labels)
{
    return labels->names != NULL ? labels->names[0][0] != '\0'
                                 : labels->prefix != NULL &&
                                       labels->prefix[0] != '\0';
}

/* \[ \begin{bmatrix} ... \end{bmatrix} \] with \cdots, \vdots and \ddots
 * where the matrix is cut. Row labels stand left of the brackets (in an
 * array with the same rows, so they line up); column labels, which
 * cannot line up with the entries without extra packages, are listed in
 * the caption. */
static void latex_table(attn__walker *walker, const attn__matrix_view *view)
{
    const int rows = table_extent(view->rows), cols = table_extent(view->cols);
    attn__text *out = walker->out;
    char tmp[64];
    caption(walker, view);
    if (telling_labels(&view->col_labels)) {
        attn__walk_printf(walker, "; columns ");
        for (int c = 0; c < cols; c++) {
            attn__walk_printf(walker, "%s", c > 0 ? ", " : "");
            if (c == ATTN__SHOW_ROWS)
                attn__walk_printf(walker, "…");
            else
                put_latex_label(walker, cell(view, -1, c, tmp, sizeof tmp));
        }
    }
    attn__text_puts(out, ":\n\\[\n");
    walker->in_code = 1;
    if (telling_labels(&view->row_labels)) {
        attn__text_puts(out, "\\begin{array}{r}\n");
        for (int r = 0; r < rows; r++) {
            if (r == ATTN__SHOW_ROWS) {
                attn__text_puts(out, "\\vdots\n");
                continue;
            }
            put_latex_label(walker, cell(view, r, -1, tmp, sizeof tmp));
            attn__text_puts(out, r + 1 < rows ? " \\\\\n" : "\n");
        }
        attn__text_puts(out, "\\end{array}\n");
    }
    attn__text_puts(out, "\\begin{bmatrix}\n");
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++) {
            if (c > 0) attn__text_puts(out, " & ");
            if (r == ATTN__SHOW_ROWS)
                attn__text_puts(out, c == ATTN__SHOW_ROWS ? "\\ddots"
                                                          : "\\vdots");
            else if (c == ATTN__SHOW_ROWS)
                attn__text_puts(out, "\\cdots");
            else
                attn__latex_math(out, cell(view, r, c, tmp, sizeof tmp));
        }
        attn__text_puts(out, r + 1 < rows ? " \\\\\n" : "\n");
    }
    attn__text_puts(out, "\\end{bmatrix}\n\\]\n");
    walker->in_code = 0;
}

void attn__walk_matrix(attn__walker *walker, const attn__matrix_view *view)
{
    walker->style->table(walker, view);
}

/* ---- Formulas ---- */

void attn__walk_operand(attn__walker *walker, double x)
{
    char number[ATTN__NUMBER_CAP];
    attn__format_rounded(number, x);
    attn__walk_printf(walker, number[0] == '-' ? "(%s)" : "%s", number);
}

void attn__walk_dot_terms(attn__walker *walker, const double *a,
                          size_t a_step, const double *b, size_t b_step,
                          int n, double result)
{
    for (int i = 0; i < n; i++) {
        if (i > 0) put_text(walker, " + ");
        attn__walk_operand(walker, a[(size_t)i * a_step]);
        put_text(walker, "×");
        attn__walk_operand(walker, b[(size_t)i * b_step]);
    }
    put_text(walker, " = ");
    attn__walk_number(walker, result);
}

void attn__walk_score_item(attn__walker *walker, const char *name, int i,
                           int j, const double *a, size_t a_step,
                           const double *b, size_t b_step, int n,
                           double result)
{
    attn__walk_begin_item(walker, 0);
    attn__walk_printf(walker, "%s[", name);
    attn__walk_label(walker, &walker->info->queries, i);
    attn__walk_printf(walker, ", ");
    attn__walk_label(walker, &walker->info->keys, j);
    attn__walk_printf(walker, "] = ");
    attn__walk_code(walker, 1);
    attn__walk_dot_terms(walker, a, a_step, b, b_step, n, result);
    attn__walk_code(walker, 0);
    attn__walk_end(walker);
}

void attn__walk_vector(attn__walker *walker, const double *x, int n)
{
    put_text(walker, "[");
    for (int i = 0; i < n; i++) {
        if (i > 0) put_text(walker, ", ");
        attn__walk_number(walker, x[i]);
    }
    put_text(walker, "]");
}

attn__matrix_view attn__view(const char *name, const char *note,
                             const double *data, size_t stride, int rows,
                             int cols, attn__labels row_labels,
                             attn__labels col_labels)
{
    const attn__matrix_view view = {name, note, data, stride, rows, cols,
                                    row_labels, col_labels, NULL};
    return view;
}

/* ---- Shared steps ---- */

static int small_grid(int rows, int cols, int width)
{
    return width <= ATTN__DETAIL_WIDTH && cols <= ATTN__DETAIL_WIDTH &&
           rows <= ATTN__DETAIL_WIDTH && rows * cols <= ATTN__DETAIL_CELLS;
}

static void scores_step(attn__walker *walker, const attn__walk_block *block)
{
    const attn__run_info *info = walker->info;
    const size_t n_k = (size_t)block->n_k;
    if (block->q == NULL) {
        attn__walk_step(walker, "Scores S (given)");
    } else {
        attn__walk_step(walker, "Scores: S = %s %sᵀ", block->q_name,
                        block->k_name);
        attn__walk_para(walker, "Each score S[i, j] is the dot product of "
                        "row i of %s and row j of %s.", block->q_name,
                        block->k_name);
        if (small_grid(block->n_q, block->n_k, block->d_k)) {
            for (int i = 0; i < block->n_q; i++)
                for (int j = 0; j < block->n_k; j++)
                    attn__walk_score_item(
                        walker, "S", i, j,
                        block->q + (size_t)i * block->q_stride, 1,
                        block->k + (size_t)j * block->k_stride, 1, block->d_k,
                        block->scores[(size_t)i * n_k + (size_t)j]);
        } else {
            attn__walk_para(walker, "(%d×%d dot products of length %d: too "
                            "many to spell out.)", block->n_q, block->n_k,
                            block->d_k);
        }
    }
    const attn__matrix_view scores = attn__view(
        "S", "n_q × n_k", block->scores, n_k, block->n_q, block->n_k,
        info->queries, info->keys);
    attn__walk_matrix(walker, &scores);
}

static void scale_step(attn__walker *walker, const attn__walk_block *block)
{
    const attn__run_info *info = walker->info;
    attn__walk_step(walker, "Scale");
    char factor[ATTN__NUMBER_CAP];
    attn__format_rounded(factor, info->scale);
    switch (info->options.scale_kind) {
    case ATTN_SCALE_INV_SQRT_DK:
        attn__walk_para(walker, "scaled = S × 1/√d_k = S × 1/√%d = S × %s",
                        block->d_k, factor);
        break;
    case ATTN_SCALE_NONE:
        attn__walk_para(walker, "No scaling (scale: false): scaled = S.");
        break;
    default:
        attn__walk_para(walker, "scaled = S × %s (the scale given).", factor);
    }
    if (info->options.mask.kinds != 0) return; /* shown masked next */
    const attn__matrix_view scaled = attn__view(
        "scaled", NULL, block->scaled, (size_t)block->n_k, block->n_q,
        block->n_k, info->queries, info->keys);
    attn__walk_matrix(walker, &scaled);
}

static void mask_description(attn__walker *walker, int batch_index)
{
    const attn_mask *mask = &walker->info->options.mask;
    const char *separator = "";
    if (mask->kinds & ATTN_MASK_CAUSAL) {
        attn__walk_printf(walker, "causal (query i sees keys j ≤ i)");
        separator = "; ";
    }
    if (mask->kinds & ATTN_MASK_KEY_PADDING) {
        const int length = mask->key_length[batch_index];
        attn__walk_printf(walker, "%skey padding (keyLength %d: only the "
                          "first %d keys)", separator, length, length);
        separator = "; ";
    }
    if (mask->kinds & ATTN_MASK_LOCAL) {
        attn__walk_printf(walker, "%slocal window %d (keys with |i − j| ≤ %d)",
                          separator, mask->window, mask->window);
        separator = "; ";
    }
    if (mask->kinds & ATTN_MASK_STRIDED) {
        attn__walk_printf(walker, "%sstrided, stride %d (keys j ≤ i with "
                          "i − j < %d or i − j a multiple of %d)", separator,
                          mask->stride, mask->stride, mask->stride);
        separator = "; ";
    }
    if (mask->kinds & ATTN_MASK_CUSTOM)
        attn__walk_printf(walker, "%sthe boolean mask given", separator);
}

static void mask_step(attn__walker *walker, const attn__walk_block *block)
{
    const attn__run_info *info = walker->info;
    attn__walk_step(walker, "Mask");
    if (info->options.mask.kinds == 0) {
        attn__walk_para(walker, "No mask: every query may attend to every "
                        "key.");
        return;
    }
    attn__walk_begin(walker);
    attn__walk_printf(walker, "Mask: ");
    mask_description(walker, block->batch_index);
    attn__walk_printf(walker, ". Masked entries become −∞, so softmax gives "
                      "them weight 0.");
    attn__walk_end(walker);
    const attn__matrix_view scaled = attn__view(
        "scaled", "masked", block->scaled, (size_t)block->n_k, block->n_q,
        block->n_k, info->queries, info->keys);
    attn__walk_matrix(walker, &scaled);
}

/* The softmax of one row spelled out: max, exps, sum, quotients. */
static void softmax_row_detail(attn__walker *walker, const double *row,
                               int n, const attn__labels *row_labels, int i)
{
    double max = -INFINITY, sum = 0.0;
    for (int j = 0; j < n; j++)
        if (row[j] > max) max = row[j];
    attn__walk_begin_item(walker, 0);
    attn__walk_printf(walker, "row ");
    attn__walk_label(walker, row_labels, i);
    if (max == -INFINITY) {
        attn__walk_printf(walker, ": every entry is masked, so every weight "
                          "is 0 (rather than 0/0).");
        attn__walk_end(walker);
        return;
    }
    attn__walk_printf(walker, ": ");
    attn__walk_code(walker, 1);
    attn__walk_printf(walker, "max = ");
    attn__walk_number(walker, max);
    attn__walk_code(walker, 0);
    attn__walk_end(walker);

    attn__walk_begin_item(walker, 1);
    attn__walk_code(walker, 1);
    for (int j = 0; j < n; j++) {
        attn__walk_printf(walker, "%s", j > 0 ? ", " : "");
        if (row[j] == -INFINITY) {
            attn__walk_printf(walker, "exp(−∞) = 0");
            continue;
        }
        attn__walk_printf(walker, "exp(");
        attn__walk_number(walker, row[j]);
        attn__walk_printf(walker, " − ");
        attn__walk_operand(walker, max);
        attn__walk_printf(walker, ") = ");
        attn__walk_number(walker, exp(row[j] - max));
        sum += exp(row[j] - max);
    }
    attn__walk_code(walker, 0);
    attn__walk_end(walker);

    attn__walk_begin_item(walker, 1);
    attn__walk_code(walker, 1);
    attn__walk_printf(walker, "sum = ");
    int terms = 0;
    for (int j = 0; j < n; j++) {
        if (row[j] == -INFINITY) continue;
        attn__walk_printf(walker, "%s", terms++ > 0 ? " + " : "");
        attn__walk_number(walker, exp(row[j] - max));
    }
    if (terms > 1) {
        attn__walk_printf(walker, " = ");
        attn__walk_number(walker, sum);
    }
    attn__walk_code(walker, 0);
    attn__walk_end(walker);

    attn__walk_begin_item(walker, 1);
    attn__walk_code(walker, 1);
    attn__walk_printf(walker, "weights = ");
    for (int j = 0; j < n; j++) {
        attn__walk_printf(walker, "%s", j > 0 ? ", " : "");
        if (row[j] == -INFINITY) {
            attn__walk_printf(walker, "0");
            continue;
        }
        attn__walk_number(walker, exp(row[j] - max));
        attn__walk_printf(walker, " / ");
        attn__walk_number(walker, sum);
        attn__walk_printf(walker, " = ");
        attn__walk_number(walker, exp(row[j] - max) / sum);
    }
    attn__walk_code(walker, 0);
    attn__walk_end(walker);
}

void attn__walk_softmax_step(attn__walker *walker, const double *scaled,
                             const double *weights, int rows, int n_k,
                             const attn__labels *row_labels,
                             const attn__labels *col_labels)
{
    const attn__run_info *info = walker->info;
    attn__walk_step(walker, "Softmax of each row");
    attn__walk_para(walker, "weights[i, j] = exp(x_j − max) / Σ exp(x − max) "
                    "over row i; subtracting the row's max keeps every exp "
                    "at most 1, and masked entries (−∞) get exp(−∞) = 0.");
    if (small_grid(rows, n_k, 1))
        for (int i = 0; i < rows; i++)
            softmax_row_detail(walker, scaled + (size_t)i * (size_t)n_k, n_k,
                               row_labels, i);
    if (info->options.dropout > 0.0) {
        char p[ATTN__NUMBER_CAP], keep[ATTN__NUMBER_CAP];
        attn__format_rounded(p, info->options.dropout);
        attn__format_rounded(keep, 1.0 - info->options.dropout);
        attn__walk_para(walker, "Dropout %s (seed %llu): each weight is kept "
                        "with probability %s and divided by %s, or set to 0. "
                        "The weights below are after dropout.", p,
                        (unsigned long long)info->options.seed, keep, keep);
    }
    const attn__matrix_view view = attn__view("weights", NULL,
                                           weights, (size_t)n_k, rows, n_k,
                                           *row_labels, *col_labels);
    attn__walk_matrix(walker, &view);
}

void attn__walk_weighted_sum(attn__walker *walker, const char *output_name,
                             const double *weights, const double *v,
                             size_t v_stride, const char *v_name,
                             const double *output, size_t output_stride,
                             int rows, int n_k, int d_v,
                             const attn__labels *row_labels)
{
    attn__walk_para(walker, "Each row of %s is the sum of the rows of %s, "
                    "each multiplied by its weight (zero weights left out).",
                    output_name, v_name);
    if (small_grid(rows, n_k, d_v)) {
        for (int i = 0; i < rows; i++) {
            const double *w = weights + (size_t)i * (size_t)n_k;
            attn__walk_begin_item(walker, 0);
            attn__walk_printf(walker, "%s[", output_name);
            attn__walk_label(walker, row_labels, i);
            attn__walk_printf(walker, "] = ");
            attn__walk_code(walker, 1);
            int terms = 0;
            for (int j = 0; j < n_k; j++) {
                if (w[j] == 0.0) continue;
                attn__walk_printf(walker, "%s", terms++ > 0 ? " + " : "");
                attn__walk_operand(walker, w[j]);
                attn__walk_printf(walker, "×");
                attn__walk_vector(walker, v + (size_t)j * v_stride, d_v);
            }
            attn__walk_printf(walker, "%s", terms > 0 ? " = " : "");
            attn__walk_vector(walker, output + (size_t)i * output_stride, d_v);
            attn__walk_code(walker, 0);
            attn__walk_end(walker);
        }
    }
    const attn__matrix_view view = attn__view(
        output_name, NULL, output, output_stride, rows, d_v, *row_labels,
        attn__index_labels);
    attn__walk_matrix(walker, &view);
}

void attn__walk_attention_block(attn__walker *walker,
                                const attn__walk_block *block)
{
    const attn__run_info *info = walker->info;
    scores_step(walker, block);
    scale_step(walker, block);
    mask_step(walker, block);
    attn__walk_softmax_step(walker, block->scaled, block->weights, block->n_q,
                            block->n_k, &info->queries, &info->keys);
    if (block->v == NULL) return;
    attn__walk_step(walker, "Output = weights %s", block->v_name);
    attn__walk_weighted_sum(walker, "output", block->weights, block->v,
                            block->v_stride, block->v_name, block->output,
                            block->output_stride, block->n_q, block->n_k,
                            block->d_v, &info->queries);
}

/* ---- Entry point ---- */

void attn__format_walkthrough(const attn_problem *problem, int format,
                              attn__text *text)
{
    attn__walker walker = {
        .out = text,
        .style = format == ATTN_FORMAT_LATEX      ? &latex_style
                 : format == ATTN_FORMAT_MARKDOWN ? &markdown_style
                                                  : &text_style,
        .problem = problem,
        .info = &problem->info,
    };
    attn__walk_kind(&walker);
    nest_lists(&walker, 0);
}
