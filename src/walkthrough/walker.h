/*
 * walkthrough_internal.h: the walker that writes step-by-step walkthroughs
 * for attn_problem_format. One walker serves text, Markdown and LaTeX: a
 * small style table decides headings, list items, code marks, escaping and
 * tables.
 * walker.c holds the walker and the steps several kinds share;
 * walk_kinds.c holds one walkthrough per kind.
 */
#ifndef ATTN_WALKER_H
#define ATTN_WALKER_H

#include "walkthrough/latex.h"
#include "walkthrough/walkthrough.h"

enum {
    ATTN__SHOW_ROWS = 8,    /* matrices show at most 8 x 8 entries */
    ATTN__SHOW_BATCH = 4,   /* batch items walked through */
    ATTN__SHOW_HEADS = 8,   /* heads walked through */
    ATTN__DETAIL_WIDTH = 8, /* vectors up to this long are spelled out */
    ATTN__DETAIL_CELLS = 64 /* ... in grids of up to this many cells */
};

typedef struct attn__walk_style attn__walk_style;

typedef struct attn__walker {
    attn__text *out;
    const attn__walk_style *style;
    const attn_problem *problem;
    const attn__run_info *info;
    int depth;      /* added to heading levels inside batch items or heads */
    int step;       /* number of the last step heading */
    int need_blank; /* a block was written: the next one starts after a
                       blank line */
    int in_list;    /* the last block was a list item */
    int in_code;    /* between code marks (LaTeX: in math mode) */
    int lists;      /* lists open (LaTeX's itemize environments) */
} attn__walker;

/* A matrix to show: entry (r, c) is data[r * stride + c]. */
typedef struct attn__matrix_view {
    const char *name;   /* "Q", "scores", ... */
    const char *note;   /* e.g. "n_q × d_k", or NULL */
    const double *data;
    size_t stride;
    int rows, cols;
    attn__labels row_labels, col_labels;
    double (*map)(double); /* shows map(entry) when not NULL */
} attn__matrix_view;

/* A view of a dense matrix (map NULL). */
attn__matrix_view attn__view(const char *name, const char *note,
                             const double *data, size_t stride, int rows,
                             int cols, attn__labels row_labels,
                             attn__labels col_labels);

/* One attention computation (a batch item, or a head of one): its inputs
 * and results as row-strided matrices. */
typedef struct attn__walk_block {
    const double *q, *k, *v;  /* q and k NULL when scores were given; v NULL
                                 without an output */
    size_t q_stride, k_stride, v_stride;
    const char *q_name, *k_name, *v_name; /* "Q", "K", "V", "Q₀", ... */
    const double *scores;     /* [n_q, n_k] */
    const double *scaled;     /* [n_q, n_k] */
    const double *weights;    /* [n_q, n_k] */
    const double *output;     /* [n_q, d_v] rows output_stride apart */
    size_t output_stride;
    int n_q, n_k, d_k, d_v;
    int batch_index;          /* for the key length of this item */
} attn__walk_block;

/* ---- Writing (walker.c) ---- */

/* Label i: labels->names[i], or the prefix and i composed in tmp. */
const char *attn__label(const attn__labels *labels, int i, char *tmp,
                        size_t cap);

void attn__walk_heading(attn__walker *walker, int level, const char *format,
                        ...) ATTN__PRINTF_LIKE(3, 4);
/* "Step n. <title>" at level 2 (+ depth). */
void attn__walk_step(attn__walker *walker, const char *format, ...)
    ATTN__PRINTF_LIKE(2, 3);

/* A block (a paragraph) or a list item at indent 0, 1, ... is written in
 * pieces between begin and end. */
void attn__walk_begin(attn__walker *walker);
void attn__walk_begin_item(attn__walker *walker, int indent);
void attn__walk_printf(attn__walker *walker, const char *format, ...)
    ATTN__PRINTF_LIKE(2, 3);
void attn__walk_label(attn__walker *walker, const attn__labels *labels,
                      int i);
void attn__walk_number(attn__walker *walker, double x);
/* A number as an operand: negative ones in parentheses. */
void attn__walk_operand(attn__walker *walker, double x);
/* "[1, 2.5, -3]" */
void attn__walk_vector(attn__walker *walker, const double *x, int n);
/* ` in Markdown, $ in LaTeX */
void attn__walk_code(attn__walker *walker, int open);
void attn__walk_end(attn__walker *walker);

/* A whole paragraph at once (no labels inside). */
void attn__walk_para(attn__walker *walker, const char *format, ...)
    ATTN__PRINTF_LIKE(2, 3);

/* A captioned table, abbreviated to 8 x 8 entries. */
void attn__walk_matrix(attn__walker *walker, const attn__matrix_view *view);

/* The n-entry dot product a · b spelled out ("1×0.3 + 0.5×0.9 = 0.75"),
 * with `result` the value the engine computed. */
void attn__walk_dot_terms(attn__walker *walker, const double *a,
                          size_t a_step, const double *b, size_t b_step,
                          int n, double result);

/* A list item "name[query i, key j] = a · b" with the dot product spelled
 * out as by attn__walk_dot_terms. */
void attn__walk_score_item(attn__walker *walker, const char *name, int i,
                           int j, const double *a, size_t a_step,
                           const double *b, size_t b_step, int n,
                           double result);

/* ---- Steps several kinds share (walker.c) ---- */

/* Scores, scale, mask, softmax and output of one attention block. */
void attn__walk_attention_block(attn__walker *walker,
                                const attn__walk_block *block);

/* Softmax of each row of `scaled` [rows, n_k] into `weights`. */
void attn__walk_softmax_step(attn__walker *walker, const double *scaled,
                             const double *weights, int rows, int n_k,
                             const attn__labels *row_labels,
                             const attn__labels *col_labels);

/* output rows = weights rows times the rows of v, spelled out if small. */
void attn__walk_weighted_sum(attn__walker *walker, const char *output_name,
                             const double *weights, const double *v,
                             size_t v_stride, const char *v_name,
                             const double *output, size_t output_stride,
                             int rows, int n_k, int d_v,
                             const attn__labels *row_labels);

/* Plain column labels 0, 1, 2, ... */
extern const attn__labels attn__index_labels;

/* ---- Kinds (walk_kinds.c) ---- */

void attn__walk_kind(attn__walker *walker);

#endif /* ATTN_WALKER_H */
