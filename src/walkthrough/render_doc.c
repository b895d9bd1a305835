/* render_doc.c: the step list as a document: text for a terminal, Markdown
 * or a LaTeX fragment (amsmath). One renderer serves the three; a small
 * style table decides headings, list items, code marks, escaping and
 * tables. */
#include "attention.h"
#include "walkthrough/latex.h"
#include "walkthrough/walker.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct attn__walk_style {
    const char *heading_marks[4]; /* before a heading of level 1..4 */
    const char *heading_end;      /* after a heading's title */
    const char *underlines[4];    /* repeated under a heading, or NULL */
    const char *item_mark;        /* after an item's indentation */
    const char *list_begin;       /* around each level of items, or NULL */
    const char *list_end;
    const char *code;       /* around formulas */
    const char *strong[2];  /* around a matrix's name */
    const char *formula[2]; /* around a step's TeX, or NULL: plain */
    /* Writes text of the walker's own (prose, or a formula between code
     * marks), and text from the user (token labels), as the format needs. */
    void (*put_text)(attn__walker *walker, const char *text);
    void (*put_label)(attn__walker *walker, const char *label);
    void (*table)(attn__walker *walker, const attn__matrix_view *view);
};

static void put_plain(attn__walker *walker, const char *text);
static void put_text_label(attn__walker *walker, const char *label);
static void put_markdown_label(attn__walker *walker, const char *label);
static void put_markdown_text(attn__walker *walker, const char *text);
static void put_latex_text(attn__walker *walker, const char *text);
static void put_latex_label(attn__walker *walker, const char *label);
static void text_table(attn__walker *walker, const attn__matrix_view *view);
static void markdown_table(attn__walker *walker, const attn__matrix_view *view);
static void latex_table(attn__walker *walker, const attn__matrix_view *view);

static const attn__walk_style text_style = {
    {"", "", "", ""},
    "",
    {"=", "-", "~", "^"},
    "",
    NULL,
    NULL,
    "",
    {"", ""},
    {NULL, NULL},
    put_plain,
    put_text_label,
    text_table,
};

static const attn__walk_style markdown_style = {
    {"# ", "## ", "### ", "#### "},
    "",
    {NULL, NULL, NULL, NULL},
    "- ",
    NULL,
    NULL,
    "`",
    {"**", "**"},
    {"```math\n", "\n```\n"},
    put_markdown_text,
    put_markdown_label,
    markdown_table,
};

/* A fragment for a LaTeX document that loads amsmath. */
static const attn__walk_style latex_style = {
    {"\\subsection*{", "\\subsubsection*{", "\\paragraph{", "\\subparagraph{"},
    "}",
    {NULL, NULL, NULL, NULL},
    "\\item ",
    /* Rows of numbers in an item leave TeX little space to stretch: it
     * may stretch more than its default in the list (not elsewhere in
     * the document) rather than run a line past the margin. */
    "\\begingroup\\setlength{\\emergencystretch}{3em}\n\\begin{itemize}\n",
    "\\end{itemize}\n\\endgroup\n",
    "$",
    {"\\textbf{", "}"},
    {"\\[\n", "\n\\]\n"},
    put_latex_text,
    put_latex_label,
    latex_table,
};

/* ---- Text ---- */

static void put_plain(attn__walker *walker, const char *text)
{
    attn__text_puts(walker->out, text);
}

/* A label in plain text: as it is, control characters escaped. */
static void put_text_label(attn__walker *walker, const char *label)
{
    char escaped[ATTN__ESCAPED_CAP];
    for (const char *c = label; *c;) {
        const size_t control = attn__control_at(c, escaped);
        attn__text_puts(walker->out, control ? escaped : "");
        if (!control) attn__text_append(walker->out, c, 1);
        c += control ? control : 1;
    }
}

/* A label as literal Markdown text: punctuation that could start markup
 * (emphasis, code, links, HTML, entities, strikethrough, a table cell's
 * end) is backslash-escaped, a line break, which would end a table row,
 * becomes a space, and other control characters are escaped as in text. */
static void put_markdown_label(attn__walker *walker, const char *label)
{
    char escaped[ATTN__ESCAPED_CAP];
    for (const char *c = label; *c;) {
        const size_t control = attn__control_at(c, escaped);
        if (*c == '\n' || *c == '\r') {
            attn__text_puts(walker->out, " ");
        } else if (control) {
            attn__text_puts(walker->out, escaped);
        } else {
            if (strchr("\\`*_[]<>|#&~", *c) != NULL)
                attn__text_puts(walker->out, "\\");
            attn__text_append(walker->out, c, 1);
        }
        c += control ? control : 1;
    }
}

/* Prose holds labels (token names) too: escaped as they are, but not in
 * code spans, where Markdown reads nothing. */
static void put_markdown_text(attn__walker *walker, const char *text)
{
    if (walker->in_code)
        put_plain(walker, text);
    else
        put_markdown_label(walker, text);
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

/* Text of the steps, with labels marked (attn__walk_label) escaped as
 * text from the user. */
static void put_prose(attn__walker *walker, const char *text)
{
    char piece[ATTN__TITLE_CAP * 4];
    while (*text) {
        const int label = *text == ATTN__LABEL_OPEN;
        if (label) text++;
        const char *end = strchr(text,
                                 label ? ATTN__LABEL_CLOSE : ATTN__LABEL_OPEN);
        size_t n = end != NULL ? (size_t)(end - text) : strlen(text);
        if (n >= sizeof piece) n = sizeof piece - 1;
        memcpy(piece, text, n);
        piece[n] = '\0';
        if (label)
            walker->style->put_label(walker, piece);
        else
            put_text(walker, piece);
        text += n;
        if (label && *text == ATTN__LABEL_CLOSE) text++;
    }
}

static void code(attn__walker *walker, int open)
{
    walker->in_code = open; /* the same mark opens and closes */
    attn__text_puts(walker->out, walker->style->code);
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

static void heading(attn__walker *walker, int level, const char *title)
{
    start_block(walker, 0);
    level += walker->depth + walker->problem->heading_offset;
    if (level > 4) level = 4;
    const attn__walk_style *style = walker->style;
    attn__text_puts(walker->out, style->heading_marks[level - 1]);
    put_prose(walker, title);
    attn__text_printf(walker->out, "%s\n", style->heading_end);
    if (style->underlines[level - 1] != NULL) {
        attn__text_repeat(walker->out, style->underlines[level - 1],
                          (int)attn__text_width(title));
        attn__text_puts(walker->out, "\n");
    }
}

static void paragraph(attn__walker *walker, const char *text)
{
    start_block(walker, 0);
    put_prose(walker, text);
    attn__text_puts(walker->out, "\n");
}

static void doc_begin(attn__walker *walker, const char *title,
                      const char *intro)
{
    /* A title of the user's (attn_problem_set_document) is text of theirs,
     * escaped as a label is ("x_1" stays x_1 in LaTeX), not notation. */
    char own[ATTN_TITLE_MAX + 3];
    const char *shown = attn__walk_title(walker, title);
    if (shown != title) {
        snprintf(own, sizeof own, "%c%s%c", ATTN__LABEL_OPEN, shown,
                 ATTN__LABEL_CLOSE);
        shown = own;
    }
    heading(walker, 1, shown);
    paragraph(walker, intro);
}

static void doc_step_begin(attn__walker *walker)
{
    char title[ATTN__TITLE_CAP + 16];
    snprintf(title, sizeof title, "Step %d. %s", walker->step, walker->title);
    heading(walker, 2, title);
}

/* A step's formula, left out where it repeats the last one shown. */
static void doc_formula(attn__walker *walker, const char *tex,
                        const char *plain)
{
    const attn__walk_style *style = walker->style;
    if (walker->last_formula == tex) return;
    walker->last_formula = tex;
    start_block(walker, 0);
    if (style->formula[0] == NULL) { /* text: the plain form, indented */
        attn__text_printf(walker->out, "    %s\n", plain);
        return;
    }
    attn__text_puts(walker->out, style->formula[0]);
    attn__text_puts(walker->out, tex);
    attn__text_puts(walker->out, style->formula[1]);
}

static void doc_region(attn__walker *walker, const attn__region *region)
{
    (void)walker; /* where the figure looks: nothing to print */
    (void)region;
}

static void doc_step_end(attn__walker *walker)
{
    nest_lists(walker, 0);
}

static void doc_end(attn__walker *walker)
{
    nest_lists(walker, 0);
}

/* ---- Equations ---- */

enum { PREC_SUM = 1, PREC_PRODUCT = 2, PREC_ATOM = 3 };
enum { SHOWN_TERMS = 8, SHOWN_HEAD = 6 }; /* longer sums: 6, …, last 2 */

static int precedence(int op)
{
    switch (op) {
    case ATTN__OP_ADD:
    case ATTN__OP_SUB: return PREC_SUM;
    case ATTN__OP_MUL:
    case ATTN__OP_DIV: return PREC_PRODUCT;
    default: return PREC_ATOM;
    }
}

static void put_number(attn__walker *walker, double x, int operand)
{
    char number[ATTN__NUMBER_CAP];
    attn__format_rounded(number, x);
    const int wrap = operand && number[0] == '-' && !isinf(x);
    if (wrap) put_text(walker, "(");
    put_text(walker, number);
    if (wrap) put_text(walker, ")");
}

static void put_node(attn__walker *walker, int index, int parent_prec,
                     int right);

static void put_kids(attn__walker *walker, const attn__node *node,
                     const char *separator, int prec)
{
    const int *kids = walker->kids + node->first;
    for (int k = 0; k < node->count; k++) {
        if (node->count > SHOWN_TERMS && node->op == ATTN__OP_ADD &&
            k == SHOWN_HEAD) {
            put_text(walker, separator);
            put_text(walker, "…");
            k = node->count - 2;
        }
        if (k > 0) put_text(walker, separator);
        put_node(walker, kids[k], prec, k > 0);
    }
}

static void put_call(attn__walker *walker, const attn__node *node,
                     const char *name)
{
    put_text(walker, name);
    put_text(walker, "(");
    put_kids(walker, node, ", ", 0);
    put_text(walker, ")");
}

/* A node inside an operation of precedence parent_prec (0: none); right:
 * it is not the first operand, where − and ÷ need parentheses around an
 * operation of their own precedence. */
static void put_node(attn__walker *walker, int index, int parent_prec,
                     int right)
{
    const attn__node *node = &walker->nodes[index];
    const int prec = precedence(node->op);
    const int wrap = parent_prec > prec ||
                     (right && parent_prec == prec && prec != PREC_ATOM);
    if (wrap) put_text(walker, "(");
    switch (node->op) {
    case ATTN__OP_LEAF: put_number(walker, node->value, parent_prec > 0); break;
    case ATTN__OP_ADD: put_kids(walker, node, " + ", prec); break;
    case ATTN__OP_SUB: put_kids(walker, node, " − ", prec); break;
    case ATTN__OP_MUL: put_kids(walker, node, "×", prec); break;
    case ATTN__OP_DIV: put_kids(walker, node, " ÷ ", prec); break;
    case ATTN__OP_EXP: put_call(walker, node, "exp"); break;
    case ATTN__OP_MAX: put_call(walker, node, "max"); break;
    case ATTN__OP_TANH: put_call(walker, node, "tanh"); break;
    case ATTN__OP_PHI: put_call(walker, node, "φ"); break;
    case ATTN__OP_SQRT: { /* of a constant: "√4" in one piece, as LaTeX
                             reads it as \sqrt{4} */
        char root[ATTN__NUMBER_CAP + 4];
        attn__format_rounded(root + snprintf(root, sizeof root, "√"),
                             walker->nodes[walker->kids[node->first]].value);
        put_text(walker, root);
        break;
    }
    case ATTN__OP_VEC:
        put_text(walker, "[");
        put_kids(walker, node, ", ", 0);
        put_text(walker, "]");
        break;
    }
    if (wrap) put_text(walker, ")");
}

/* "- label = `chain[0] = chain[1] = …`" */
static void doc_equation(attn__walker *walker)
{
    /* A repeat's equations under its title: "Score of sat against cat:". */
    if (walker->repeat_open) {
        char title[ATTN__TITLE_CAP + 2];
        snprintf(title, sizeof title, "%s:", walker->repeat);
        paragraph(walker, title);
    }
    start_block(walker, 1);
    nest_lists(walker, 1);
    /* Text items sit one level in from the prose. */
    attn__text_printf(walker->out, "%s%s",
                      walker->style->item_mark[0] ? "" : "  ",
                      walker->style->item_mark);
    put_prose(walker, walker->label);
    put_text(walker, " = ");
    code(walker, 1);
    for (int c = 0; c < walker->chain_length; c++) {
        if (c > 0) put_text(walker, " = ");
        put_node(walker, walker->chain[c], 0, 0);
    }
    code(walker, 0);
    attn__text_puts(walker->out, "\n");
}

/* ---- Tables ---- */

static int shown(int count)
{
    return count > ATTN__SHOW_ROWS ? ATTN__SHOW_ROWS : count;
}

static double entry(const attn__matrix_view *view, int r, int c)
{
    return view->data[(size_t)r * view->stride + (size_t)c];
}

/* "name (rows×cols, note)": each table writes how the caption ends. */
static void caption(attn__walker *walker, const attn__matrix_view *view)
{
    const attn__walk_style *style = walker->style;
    char piece[128];
    start_block(walker, 0);
    attn__text_puts(walker->out, style->strong[0]);
    put_text(walker, view->name);
    attn__text_puts(walker->out, style->strong[1]);
    snprintf(piece, sizeof piece, " (%d×%d", view->rows, view->cols);
    put_text(walker, piece);
    if (view->note != NULL) {
        put_text(walker, ", ");
        put_text(walker, view->note);
    }
    put_text(walker, ")");
    const int cut_rows = view->rows > ATTN__SHOW_ROWS;
    const int cut_cols = view->cols > ATTN__SHOW_ROWS;
    if (cut_rows) {
        snprintf(piece, sizeof piece, ", first %d of %d rows",
                 shown(view->rows), view->rows);
        put_text(walker, piece);
    }
    if (cut_cols) {
        snprintf(piece, sizeof piece, "%s %d of %d columns",
                 cut_rows ? " and" : ", first", shown(view->cols), view->cols);
        put_text(walker, piece);
    }
}

/* Cell text: a row or column label, a number, or the ellipsis. r or c is
 * -1 for the header row or the label column. */
static const char *cell(const attn__matrix_view *view, int r, int c, char *tmp,
                        size_t cap)
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

/* Cell text for a text table: a label's control characters escaped (in
 * visible, cut to whole characters if it would not fit). */
static const char *text_cell(const attn__matrix_view *view, int r, int c,
                             char *tmp, size_t cap, char *visible,
                             size_t visible_cap)
{
    const char *text = cell(view, r, c, tmp, cap);
    char escaped[ATTN__ESCAPED_CAP];
    size_t used = 0;
    int escapes = 0;
    for (const char *s = text; *s;) {
        const size_t control = attn__control_at(s, escaped);
        const char *piece = control ? escaped : s;
        size_t size = control ? strlen(escaped) : 1;
        if (!control)
            while ((s[size] & 0xC0) == 0x80) size++; /* a whole character */
        if (used + size >= visible_cap) break;
        memcpy(visible + used, piece, size);
        used += size;
        escapes += control != 0;
        s += control ? control : size;
    }
    visible[used] = '\0';
    return escapes ? visible : text;
}

static void text_table(attn__walker *walker, const attn__matrix_view *view)
{
    const int rows = table_extent(view->rows), cols = table_extent(view->cols);
    size_t widths[ATTN__SHOW_ROWS + 2] = {0}; /* label column, then cells */
    char tmp[64], visible[4 * ATTN__LABEL_CAP];
    for (int r = -1; r < rows; r++)
        for (int c = -1; c < cols; c++) {
            const size_t width = attn__text_width(text_cell(
                view, r, c, tmp, sizeof tmp, visible, sizeof visible));
            if (width > widths[c + 1]) widths[c + 1] = width;
        }
    caption(walker, view);
    attn__text_puts(walker->out, ":\n");
    for (int r = -1; r < rows; r++) {
        attn__text_puts(walker->out, "  ");
        for (int c = -1; c < cols; c++) {
            const char *text = text_cell(view, r, c, tmp, sizeof tmp, visible,
                                         sizeof visible);
            const int pad = (int)(widths[c + 1] - attn__text_width(text));
            if (c < 0) /* labels left-aligned, numbers right-aligned */
                attn__text_printf(walker->out, "%s%*s", text, pad, "");
            else
                attn__text_printf(walker->out, "  %*s%s", pad, "", text);
        }
        attn__text_puts(walker->out, "\n");
    }
}

static void markdown_table(attn__walker *walker, const attn__matrix_view *view)
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
    return labels->names != NULL
               ? labels->names[0][0] != '\0'
               : labels->prefix != NULL && labels->prefix[0] != '\0';
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
        put_text(walker, "; columns ");
        for (int c = 0; c < cols; c++) {
            if (c > 0) put_text(walker, ", ");
            if (c == ATTN__SHOW_ROWS)
                put_text(walker, "…");
            else
                put_latex_label(walker, cell(view, -1, c, tmp, sizeof tmp));
        }
    }
    attn__text_puts(out, ":\n\\[\n");
    /* Six columns or more of four decimals fill a page's width: the
     * columns close up (inside the display only). */
    if (cols >= 6) attn__text_puts(out, "\\setlength{\\arraycolsep}{2pt}\n");
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
                attn__text_puts(out,
                                c == ATTN__SHOW_ROWS ? "\\ddots" : "\\vdots");
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

static void doc_table(attn__walker *walker, const attn__matrix_view *view)
{
    walker->style->table(walker, view);
}

static void doc_sentence(attn__walker *walker, const char *text)
{
    paragraph(walker, text);
}

static const attn__sink doc_sink = {
    doc_begin,  heading,      doc_step_begin, doc_sentence, doc_formula,
    doc_region, doc_equation, doc_table,      doc_step_end, doc_end,
};

const attn__sink *attn__doc_sink(int format, const attn__walk_style **style)
{
    *style = format == ATTN_FORMAT_LATEX      ? &latex_style
             : format == ATTN_FORMAT_MARKDOWN ? &markdown_style
                                              : &text_style;
    return &doc_sink;
}
