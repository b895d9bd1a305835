/*
 * walker.h: the walkthrough of a problem as a list of steps, and the
 * renderers that write it.
 *
 * One description per kind (steps_*.c) walks the problem and emits, for
 * each step, its id, title, sentence, formula, the regions of tensors it
 * reads and produces, its equations as expression trees whose leaves name
 * the cells they come from, and the tables an export shows. A renderer
 * (a sink) turns that stream into text, Markdown, LaTeX (render_doc.c) or
 * the steps JSON the page renders (render_json.c). Nothing else phrases a
 * walkthrough, so every format says the same thing at step n.
 */
#ifndef ATTN_WALKER_H
#define ATTN_WALKER_H

#include "walkthrough/walkthrough.h"

enum {
    ATTN__SHOW_ROWS = 8,      /* tables show at most 8 x 8 entries */
    ATTN__SHOW_BATCH = 4,     /* batch items walked through */
    ATTN__SHOW_HEADS = 8,     /* heads walked through */
    ATTN__MAX_TERMS = 16,     /* sums are spelled out up to this many terms */
    ATTN__STEP_ROWS = 16,     /* rows stepped through one at a time */
    ATTN__CELL_STEPS = 36,    /* scores get a step per cell up to this many */
    ATTN__DETAIL_CELLS = 256, /* equations of a step, at most */
    ATTN__NODE_CAP = 4096,    /* nodes of one equation, at most */
    ATTN__MAX_KIDS = 64,      /* operands of one operation, at most */
    ATTN__MAX_CHAIN = 4,      /* expressions of one equation, at most */
    ATTN__ID_CAP = 48,
    ATTN__TITLE_CAP = 256,
    ATTN__NAME_CAP = 40
};

/* Operations of an expression tree. A leaf is a number; every other node
 * holds the value its operands give (as the engine computed it). */
typedef enum attn__op {
    ATTN__OP_LEAF, /* a number, from a cell (ref) or a constant */
    ATTN__OP_ADD,  /* a + b + ... (numbers, or vectors entry by entry) */
    ATTN__OP_SUB,  /* a - b */
    ATTN__OP_MUL,  /* a × b (a number times a number or a vector) */
    ATTN__OP_DIV,  /* a ÷ b (a number or a vector divided by a number) */
    ATTN__OP_EXP,  /* exp(a) */
    ATTN__OP_MAX,  /* max(a, b, ...) */
    ATTN__OP_SQRT, /* √a */
    ATTN__OP_TANH, /* tanh(a) */
    ATTN__OP_PHI,  /* φ(a) = elu(a) + 1 */
    ATTN__OP_VEC   /* [a, b, ...] */
} attn__op;

/* A cell of a tensor: name ("q", "scores", "heads.1.weights", or a
 * quantity the steps name, "max", "exp", "sum", "terms") and its indices,
 * as the tensor is indexed in the results (batch first when batched). */
typedef struct attn__ref {
    const char *name; /* NULL: no cell */
    int rank;
    int index[4];
} attn__ref;

typedef struct attn__node {
    int op;           /* an attn__op */
    double value;     /* ATTN__OP_VEC: unused (its operands hold it) */
    attn__ref ref;    /* the cell this node's value is, if any */
    int first, count; /* operands: kids[first .. first + count) */
} attn__node;

/* A region of a tensor a step reads or produces. */
typedef enum attn__region_shape {
    ATTN__REGION_ALL,  /* every cell */
    ATTN__REGION_ROWS, /* rows index[0] .. index[1] (inclusive) */
    ATTN__REGION_CELL, /* the cell (index[0], index[1]) */
    ATTN__REGION_COLS  /* columns index[0] .. index[1] of every row */
} attn__region_shape;

typedef struct attn__region {
    int produces;     /* 1: the step computes it; 0: the step reads it */
    const char *name; /* as in attn__ref */
    int batch;        /* batch item, or -1 when the problem is not batched */
    int shape;        /* an attn__region_shape */
    int index[2];
    int masked_only; /* ATTN__REGION_ALL of scaled: just its masked cells;
                        -1: just its unmasked cells */
} attn__region;

/* A matrix an export shows as a table: entry (r, c) is
 * data[r * stride + c]. */
typedef struct attn__matrix_view {
    const char *name;   /* the caption: "Q", "S", ... */
    const char *tensor; /* the tensor it shows ("q", "scores"), for JSON */
    const char *note;   /* e.g. "n_q × d_k", or NULL */
    const double *data;
    size_t stride;
    int rows, cols;
    attn__labels row_labels, col_labels;
} attn__matrix_view;

typedef struct attn__walker attn__walker;

/* The walkthrough's title: the problem's (attn_problem_set_document) when
 * it has one, else `own`. */
const char *attn__walk_title(const attn__walker *walker, const char *own);

/* A renderer: what each part of the walkthrough becomes. */
typedef struct attn__sink {
    void (*begin)(attn__walker *walker, const char *title, const char *intro);
    /* A heading between steps: "Inputs", "Batch item 2", "Head 1: ...". */
    void (*heading)(attn__walker *walker, int level, const char *title);
    void (*step_begin)(attn__walker *walker);
    void (*sentence)(attn__walker *walker, const char *text);
    /* The step's formula: TeX, and the same in the walkthrough's notation. */
    void (*formula)(attn__walker *walker, const char *tex, const char *plain);
    void (*region)(attn__walker *walker, const attn__region *region);
    void (*equation)(attn__walker *walker);
    void (*table)(attn__walker *walker, const attn__matrix_view *view);
    void (*step_end)(attn__walker *walker);
    void (*end)(attn__walker *walker);
} attn__sink;

typedef struct attn__walk_style attn__walk_style;

struct attn__walker {
    attn__text *out;
    const attn__sink *sink;
    const attn__walk_style *style; /* render_doc.c's, for doc formats */
    const attn_problem *problem;
    const attn__run_info *info;
    /* The step being written. */
    int step; /* its number, from 1 */
    char id[ATTN__ID_CAP];
    char title[ATTN__TITLE_CAP];
    char group[ATTN__TITLE_CAP]; /* "Batch item 2 › Head 1", or "" */
    int depth;                   /* heading levels below the document's */
    /* The equation being built: nodes and operands, then its chain. */
    attn__node *nodes; /* [ATTN__NODE_CAP] */
    int *kids;         /* [ATTN__NODE_CAP] */
    int node_count, kid_count;
    int overflow;                /* the equation outgrew the pool */
    char label[ATTN__TITLE_CAP]; /* what the equation computes: "S[cat, sat]" */
    int chain[ATTN__MAX_CHAIN];  /* expressions equal to each other */
    int chain_length;
    int equations; /* written in this step */
    /* A step of repeats (attn__walk_repeat): the title of the repeat whose
     * first equation comes next, and whether it is still to be written. */
    char repeat[ATTN__TITLE_CAP];
    int repeat_open;
    int repeats; /* repeats begun in this step */
    /* Renderer state. */
    attn__number_cache *numbers; /* the steps JSON's numbers */
    int need_blank, in_list, in_code, lists, steps_written;
    int only_step; /* the equations sink: the step written */
    const char *last_formula;
};

/* ---- Labels (walker.c) ---- */

/* Label i: labels->names[i], or the prefix and i + 1 composed in tmp. */
const char *attn__label(const attn__labels *labels, int i, char *tmp,
                        size_t cap);
/* Label i marked as a label inside a title, sentence or equation label:
 * ATTN__LABEL_OPEN, the label, ATTN__LABEL_CLOSE, so that each renderer
 * escapes it as text from the user (LaTeX: literally, not as notation). */
#define ATTN__LABEL_OPEN '\x01'
#define ATTN__LABEL_CLOSE '\x02'
enum { ATTN__LABEL_CAP = 100, ATTN__ROW_OF_CAP = ATTN__LABEL_CAP + 16 };
const char *attn__walk_label(const attn__labels *labels, int i, char *tmp,
                             size_t cap);
/* Plain column labels 1, 2, 3, ... */
extern const attn__labels attn__index_labels;

/* ---- Emitting (walker.c) ---- */

void attn__walk_heading(attn__walker *walker, int level, const char *format,
                        ...) ATTN__PRINTF_LIKE(3, 4);
/* Starts step `id` ("score-0-1") titled by format. */
void attn__walk_step(attn__walker *walker, const char *id, const char *format,
                     ...) ATTN__PRINTF_LIKE(3, 4);
void attn__walk_sentence(attn__walker *walker, const char *format, ...)
    ATTN__PRINTF_LIKE(2, 3);
void attn__walk_formula(attn__walker *walker, const char *tex,
                        const char *plain);
/* A region read (produces 0) or produced (1) by the step. */
void attn__walk_region(attn__walker *walker, int produces, const char *name,
                       int batch, int shape, int first, int last);
void attn__walk_table(attn__walker *walker, const attn__matrix_view *view);
void attn__walk_step_end(attn__walker *walker);
/* In a step that gathers the repeats of an operation (the other dot
 * products, the other rows' softmax), starts the next repeat: the equations
 * emitted from here to the next call are its own, and the first carries its
 * title (renderers show it as a heading of those equations). */
void attn__walk_repeat(attn__walker *walker, const char *format, ...)
    ATTN__PRINTF_LIKE(2, 3);
/* Where an equation stands, finer than its step: step × ATTN__REPEAT_SPAN
 * plus the repeat it belongs to (0 outside a step of repeats), so that the
 * repeats gathered in one step stay apart as their steps were. */
enum { ATTN__REPEAT_SPAN = 1024 };
static inline int attn__walk_place(const attn__walker *walker)
{
    return walker->step * ATTN__REPEAT_SPAN + walker->repeats;
}
/* Starts step `id` that gathers the `others` repeats of an operation whose
 * first was a step of its own: titled `lead` and "the other row" or "the
 * other three rows" (`noun`, `nouns`); "The other …" when lead is "". */
void attn__walk_others(attn__walker *walker, const char *id, int others,
                       const char *lead, const char *noun, const char *nouns);
/* Row i in a title: "the row of cat", or the label itself when it names a
 * row already ("row 2"). */
const char *attn__walk_row_of(const attn__labels *labels, int i, char *tmp,
                              size_t cap);
/* "one" to "twelve", else digits: a count in a title or sentence. */
const char *attn__count_word(int count, char *tmp, size_t cap);

/* A table of rows × cols entries of data, rows `stride` apart. */
void attn__walk_show(attn__walker *walker, const char *name, const char *tensor,
                     const char *note, const double *data, size_t stride,
                     int rows, int cols, const attn__labels *row_labels,
                     const attn__labels *col_labels);

/* Batch items: opens item b (a heading, a group of steps) when the problem
 * is batched, 0 past the items shown; how many to open; the prefix of its
 * step ids ("b2-", or ""). */
int attn__walk_begin_item(attn__walker *walker, int b);
int attn__walk_items(const attn__run_info *info);
void attn__walk_id_prefix(const attn__walker *walker, int b, char *out,
                          size_t cap);

/* A closing step that shows the named tensors whole. */
void attn__walk_done(attn__walker *walker, const char *id, const char *title,
                     const char *sentence, const char *tex, const char *plain,
                     const char *const *names, int count);

/* A field's data, or a whole-problem result's (NULL when absent). */
const double *attn__walk_field(const attn__walker *walker, const char *name);
const double *attn__walk_result(const attn__walker *walker, const char *name);

/* Offset of batch item b of a rows × cols tensor. */
static inline size_t attn__item(int b, int rows, int cols)
{
    return (size_t)b * (size_t)rows * (size_t)cols;
}

/* A view of a dense matrix. */
attn__matrix_view attn__view(const char *name, const char *tensor,
                             const char *note, const double *data,
                             size_t stride, int rows, int cols,
                             attn__labels row_labels, attn__labels col_labels);

/* ---- Equations (walker.c) ----
 * Built bottom-up: leaves and operations return node numbers (or -1 once
 * the pool is full, which makes the equation be left out), then
 * attn__eq_emit writes "label = chain[0] = chain[1] = ..." and empties the
 * pool. */

void attn__eq_begin(attn__walker *walker, const char *format, ...)
    ATTN__PRINTF_LIKE(2, 3);
int attn__leaf(attn__walker *walker, double value, attn__ref ref);
int attn__constant(attn__walker *walker, double value);
int attn__op_node(attn__walker *walker, int op, double value, const int *kids,
                  int count);
int attn__unary(attn__walker *walker, int op, double value, int kid);
int attn__binary(attn__walker *walker, int op, double value, int a, int b);
/* [leaves of data[0..n) step apart], each leaf naming ref with its last
 * index running from 0. */
int attn__vector_leaves(attn__walker *walker, const double *data, size_t step,
                        int n, attn__ref ref);
void attn__eq_chain(attn__walker *walker, int node);
void attn__eq_emit(attn__walker *walker);

attn__ref attn__ref0(const char *name);
attn__ref attn__ref1(const char *name, int i);
attn__ref attn__ref2(const char *name, int i, int j);
attn__ref attn__ref3(const char *name, int i, int j, int k);
/* The same ref with batch item b put first (when b >= 0). */
attn__ref attn__batched(attn__ref ref, int b);

/* ---- Steps several kinds share (steps_attention.c) ---- */

/* One attention computation (a batch item, or a head of one). */
typedef struct attn__walk_block {
    const double *q, *k, *v; /* q and k NULL when scores were given; v NULL
                                without an output */
    size_t q_stride, k_stride, v_stride;
    int q_column; /* first column of q, k, v in their tensors */
    const char *q_name, *k_name, *v_name;    /* tensor names: "q", ... */
    const char *q_title, *k_title, *v_title; /* "Q", "Q₁", ... */
    const char *prefix;        /* of result names: "" or "heads.1." */
    const char *scaled_tensor; /* the softmax's input, if not prefix +
                                  "scaled" ("scores" for additive) */
    const char *output_tensor; /* the output, if not prefix + "output" */
    const char *id_prefix;     /* of step ids: "" or "b2-h1-" */
    const double *scores, *scaled, *weights; /* [n_q, n_k] */
    const double *output; /* [n_q, d_v] rows output_stride apart */
    size_t output_stride;
    int n_q, n_k, d_k, d_v;
    int batch_index; /* for the key length of this item */
    int batch;       /* batch index of refs, or -1 */
} attn__walk_block;

void attn__walk_attention_block(attn__walker *walker,
                                const attn__walk_block *block);

/* Parts of the softmax of a row, as equations. */
enum {
    ATTN__SOFTMAX_MAX = 1,     /* max[i] = max(x_i0, ...) */
    ATTN__SOFTMAX_EXP = 2,     /* exp[i, j] = exp(x_ij − max[i]) */
    ATTN__SOFTMAX_SUM = 4,     /* sum[i] = exp[i, 0] + ... */
    ATTN__SOFTMAX_WEIGHTS = 8, /* weights[i, j] = exp[i, j] ÷ sum[i] */
    ATTN__SOFTMAX_ALL = 15
};
void attn__softmax_equations(attn__walker *walker,
                             const attn__walk_block *block, int i, int parts);

/* Softmax of each row of `scaled` into `weights`, a step per row. */
void attn__walk_softmax_rows(attn__walker *walker,
                             const attn__walk_block *block);

/* Output rows = weights times the rows of v, a step per row. */
void attn__walk_output_rows(attn__walker *walker, const attn__walk_block *block,
                            const char *output_name, const char *sentence);

/* ---- Kinds ---- */

void attn__steps_sdpa(attn__walker *walker); /* steps_attention.c */
/* Its backward pass, when the problem has gradOutput (steps_backward.c). */
void attn__steps_sdpa_backward(attn__walker *walker);
void attn__steps_weighted_sum(attn__walker *walker); /* steps_attention.c */
void attn__steps_softmax(attn__walker *walker);      /* steps_softmax.c */
void attn__steps_multihead(attn__walker *walker);    /* steps_multihead.c */
void attn__steps_additive(attn__walker *walker);     /* steps_rnn.c */
void attn__steps_luong(attn__walker *walker);        /* steps_rnn.c */
void attn__steps_linear(attn__walker *walker);       /* steps_linear.c */
void attn__steps_block(attn__walker *walker);        /* steps_block.c */
void attn__steps_online(attn__walker *walker);       /* steps_online.c */

/* The walkthrough of the problem into the sink (walkthrough.c). */
int attn__walk(attn__walker *walker);

/* ---- Renderers ---- */

/* format: ATTN_FORMAT_TEXT, _MARKDOWN or _LATEX (render_doc.c) */
const attn__sink *attn__doc_sink(int format, const attn__walk_style **style);
extern const attn__sink attn__json_sink; /* render_json.c */
/* The steps JSON without the equations, and one step's equations. */
extern const attn__sink attn__json_outline_sink;
extern const attn__sink attn__json_equations_sink;

#endif /* ATTN_WALKER_H */
