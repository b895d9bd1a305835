/*
 * problem.h: the attn_problem layer's private view, shared by store.c
 * (what a problem holds: memory, the error message, fields' values,
 * results), check.c (field checks and their messages), the per-kind runs
 * (run_*.c, with what several share in run_shared.c) and problem.c (the
 * kinds and the public lifecycle, on top). The walkthrough layer above
 * reads problems through it; nothing here knows about formatting.
 */
#ifndef ATTN_PROBLEM_H
#define ATTN_PROBLEM_H

#include "attention.h"
#include "text/textbuf.h"

#include <stddef.h>

enum {
    ATTN__MAX_RANK = 3,
    ATTN__ERROR_CAP = 512, /* bytes of the error message, NUL included */
    ATTN__MAX_RESULTS = 48
};

typedef enum attn__kind_id {
    ATTN__KIND_SDPA,
    ATTN__KIND_WEIGHTED_SUM,
    ATTN__KIND_MULTIHEAD,
    ATTN__KIND_ADDITIVE,
    ATTN__KIND_LUONG,
    ATTN__KIND_LINEAR,
    ATTN__KIND_SOFTMAX,
    ATTN__KIND_TRANSFORMER_BLOCK,
    ATTN__KIND_ONLINE_SOFTMAX
} attn__kind_id;

/* Value types, as bits so a field can accept several. */
enum {
    ATTN__TENSOR = 1u << 0,
    ATTN__NUMBER = 1u << 1,
    ATTN__BOOL = 1u << 2,
    ATTN__STRING = 1u << 3,
    ATTN__STRINGS = 1u << 4
};

/* One field's value; type 0 = not set. Everything is owned by the problem. */
typedef struct attn__value {
    unsigned type;
    int rank; /* ATTN__TENSOR: 1..3 */
    int dims[ATTN__MAX_RANK];
    size_t count;   /* product of dims */
    double *data;   /* [count] */
    double number;  /* ATTN__NUMBER; ATTN__BOOL as 0 or 1 */
    char *string;   /* ATTN__STRING */
    char **strings; /* ATTN__STRINGS: [strings_count] */
    int strings_count;
} attn__value;

typedef struct attn__field {
    const char *name;     /* as in the JS API */
    unsigned types;       /* accepted ATTN__* bits */
    const char *expected; /* what it holds, for "missing" and type errors */
} attn__field;

typedef struct attn__kind {
    const char *name;
    attn__kind_id id;
    const attn__field *fields;
    int field_count;
    int (*run)(attn_problem *problem); /* checks the fields, then computes */
} attn__kind;

/* Kind number `index` of problem.c's table (attn_problem_kind's order), or
 * NULL past the last: for scripts/gen-facts.c, which writes the kinds and
 * their fields into web/lib/facts.js. */
const attn__kind *attn__kind_at(int index);

/* A result. heads > 0 marks a per-head result ("heads.<h>.<name>"): `data`
 * then holds `heads` consecutive blocks of `count` doubles. */
typedef struct attn__result {
    const char *name;
    int heads;
    int rank; /* 0 (a number) to 3 */
    int dims[ATTN__MAX_RANK];
    size_t count; /* doubles per block */
    double *data;
} attn__result;

/* Row or column labels: names[i], or prefix followed by i. */
typedef struct attn__labels {
    const char *const *names; /* [n] or NULL */
    const char *prefix;
} attn__labels;

/* What a run resolved from the fields, for the formatters. */
typedef struct attn__run_info {
    int batch;        /* 1 when the inputs are not batched */
    int batched;      /* inputs of rank 3: results gain a batch axis */
    int vector_query; /* a vector query: results lose the n_q axis */
    int n_q, n_k;     /* queries and keys (n_kv for multiHead; rows and
                         columns of x for softmax) */
    int d_k, d_v;     /* widths of q/k and v (per head for multiHead) */
    int d_in, d_kv_in, d_model, num_heads, d_out; /* multiHead */
    int d_s, d_h, d_a;                            /* additive, luong */
    int from_scores;      /* scaledDotProduct given scores rather than q, k */
    int has_output;       /* scaledDotProduct: v was given */
    int method;           /* luong: an attn_luong_method */
    int causal;           /* linear */
    int tile, tiles;      /* onlineSoftmax: keys per tile, tiles */
    int d_ff;             /* transformerBlock: hidden width of the FFN */
    int norm;             /* transformerBlock: an attn_norm_placement */
    double scale;         /* the factor the scores were multiplied by */
    attn_options options; /* its mask points into the problem's storage */
    attn__labels queries, keys;
} attn__run_info;

struct attn_problem {
    attn_allocator allocator;
    const attn__kind *kind;
    attn__value *values; /* [kind->field_count], parallel to kind->fields */
    char *error;         /* [ATTN__ERROR_CAP]; written even through const */
    attn__result results[ATTN__MAX_RESULTS];
    int result_count;
    int has_run;                  /* 1 after a successful run, until a setter */
    unsigned long long run_count; /* successful runs so far: which results these
                                are, for a check that read them */
    attn__run_info info;
    int *key_length;        /* [batch] for the key padding mask */
    unsigned char *allowed; /* mask entries, shaped like the mask field */
    size_t max_bytes;       /* limit on tensor fields + results, bytes */
    /* The caller's option for it, as messages name it: "max_bytes" when
     * attn_problem_read_json was told so, both front ends' otherwise. */
    char limit_option[64];
    size_t over_limit; /* bytes a refused result would have made the
                          problem hold; 0 = no refusal in this run */
    char title[ATTN_TITLE_MAX + 1]; /* the walkthrough's title, "" = its own */
    int heading_offset; /* heading levels added: heading_level - 1 */
    /* Where q, k and v came from, the walkthrough's first step says: a
     * sentence (static text), NULL when they were given directly. */
    const char *inputs_origin;
};

/* ---- problem.c ---- */

/* Says in the walkthrough's first step where q, k and v came from (the
 * sentence, static text, replaces "Here they are given directly."): a
 * problem made from a model's head (src/lm/head_problem.c). */
void attn__problem_set_inputs_origin(attn_problem *problem,
                                     const char *sentence);

/* ---- store.c ---- */

/* allocator; malloc and free when it is NULL; NULL when it lacks allocate
 * or release. Shared with the trainer (src/train/). */
const attn_allocator *
attn__allocator_or_default(const attn_allocator *allocator);

void *attn__allocate(attn_problem *problem, size_t bytes); /* NULL on failure */
void attn__release(attn_problem *problem, void *block);    /* NULL is fine */
/* Scratch space of `count` doubles, NULL when out of memory or refused:
 * count 0 (a *_work_size that overflowed), count * sizeof(double) beyond
 * size_t, or more than the problem's limit with what it holds (then
 * attn__fail_nomem reports ATTN_ERR_TOO_LARGE). */
double *attn__allocate_doubles(attn_problem *problem, size_t count);
/* Bytes the problem holds now in tensor fields and results. */
size_t attn__held_bytes(const attn_problem *problem);
/* ATTN_OK when the problem may hold `bytes` more after releasing
 * `replaced` bytes; *total gets what it would hold (SIZE_MAX on overflow). */
int attn__within_limit(const attn_problem *problem, size_t bytes,
                       size_t replaced, size_t *total);

/* Empties the error message (every public entry point starts so). */
void attn__clear_error(const attn_problem *problem);

/* Writes the one-line error message and returns status. */
int attn__fail(const attn_problem *problem, int status, const char *format, ...)
    ATTN__PRINTF_LIKE(3, 4);
/* Message for a status the numeric core returned after the fields passed
 * their checks (an overflow, say): "<what>: <status text>". */
int attn__fail_core(const attn_problem *problem, int status, const char *what);

/* The value of a field of this kind, or NULL when it is not set. */
const attn__value *attn__field_value(const attn_problem *problem,
                                     const char *name);
/* The table entry of a field of this kind (NULL if unknown). */
const attn__field *attn__field_spec(const attn_problem *problem,
                                    const char *name);

/* Adds a zeroed result of rank 0..3 (heads blocks when heads > 0); NULL
 * when out of memory. */
double *attn__add_result(attn_problem *problem, const char *name, int heads,
                         int rank, const int *dims);
/* A whole-problem result (heads 0) or a per-head one (heads 1). */
const attn__result *attn__find_result(const attn_problem *problem,
                                      const char *name, int per_head);

/* ---- check.c: field checks whose failures name the field ---- */

/* "a vector of 3", "3x4", "2x3x4", "1.5", "true", "\"causal\"", ... */
void attn__describe_value(char *out, size_t cap, const attn__value *value);

/* "q[1][0]" for entry `flat` of a tensor of this rank and dims. */
void attn__entry_path(char *out, size_t cap, const char *field, int rank,
                      const int *dims, size_t flat);

/* "<field>: expected <expected>, got <value described>"; ATTN_ERR_INPUT. */
int attn__fail_expected(const attn_problem *problem, const char *field,
                        const char *expected, const attn__value *value);

/* "<field>: missing (<expected>)" */
int attn__fail_missing(const attn_problem *problem, const char *field);

/* A required size of a dimension; size 0 = any. why says where it comes
 * from, e.g. "d_k, the columns of q". */
typedef struct attn__dim {
    int size;
    const char *why;
} attn__dim;

/* A matrix field (rank 2), or a batch of `batch` matrices (rank 3) when
 * batch > 0, with the given rows and columns. */
int attn__check_matrix(const attn_problem *problem, const char *field,
                       const attn__value *value, int batch, attn__dim rows,
                       attn__dim cols);
/* A vector field of the given length. */
int attn__check_vector(const attn_problem *problem, const char *field,
                       const attn__value *value, attn__dim length);

/* An integer number field in min..max into *out. `expected` completes
 * "<field>: expected <expected>, got <value>". */
int attn__check_integer(const attn_problem *problem, const char *field,
                        const attn__value *value, double min, double max,
                        const char *expected, double *out);

/* Labels for n items from a strings field: "<field>: expected n labels
 * (<why>), got m". */
int attn__check_labels(const attn_problem *problem, const char *field,
                       const attn__value *value, int n, const char *why);

/* A boolean tensor's entries (each 0 or 1) into out [value->count]. */
int attn__copy_booleans(const attn_problem *problem, const char *field,
                        const attn__value *value, unsigned char *out);

/* Labels for queries and keys into problem->info from the fields tokens,
 * queryTokens and keyTokens (those the kind has). tokens labels both axes
 * when tokens_label_queries, else only the keys. */
int attn__check_tokens(attn_problem *problem, int n_q, int n_k,
                       int tokens_label_queries);

/* A tensor's shape read as a vector, a matrix or a batch of matrices. */
typedef struct attn__shape {
    int batch;   /* 1 unless batched */
    int batched; /* rank 3 */
    int vector;  /* rank 1: one row */
    int rows, cols;
} attn__shape;
attn__shape attn__shape_of(const attn__value *value);

/* Dimensions of a result: [batch] if batched, [n_q] unless the query was a
 * vector (when query_axis), then the inner dimensions. */
void attn__result_dims(const attn__run_info *info, int query_axis,
                       const int *inner, int inner_rank, int *rank,
                       int dims[ATTN__MAX_RANK]);

/* A dimension without a requirement. */
#define ATTN__ANY ((attn__dim){0, NULL})

/* A tensor field's data, or NULL when it is not set. */
const double *attn__data_of(const attn_problem *problem, const char *field);

/* "<kind>: out of memory", or, when a result was refused for the
 * problem's byte limit, the ATTN_ERR_TOO_LARGE message. */
int attn__fail_nomem(const attn_problem *problem);

/* The query-side tensor (q, scores, x, query or weights) as a vector, a
 * matrix or a batch: sets info batch, batched, vector_query and n_q. */
void attn__take_query_shape(attn_problem *problem, const attn__value *value);

/* Adds a result shaped [batch?][n_q?] then inner_rank (0..2) inner sizes;
 * NULL when out of memory. */
double *attn__add_query_result(attn_problem *problem, const char *name,
                               int inner_rank, int inner0, int inner1);

/* ---- run_shared.c: what several kinds' runs share ---- */

/* q, k, v as for scaledDotProduct into problem->info (batch, vector
 * query, n_q, n_k, d_k, d_v); shared with linear and onlineSoftmax. */
int attn__check_qkv(attn_problem *problem);
/* The options scaledDotProduct, multiHead and transformerBlock share
 * (mask, keyLength, window, stride, scale, dropout, seed) into
 * info.options. */
int attn__check_dot_options(attn_problem *problem, int batch, int n_q, int n_k);
/* x, a matrix of token rows or a batch of them, into info: batch,
 * batched, n_q = n_k (its rows), d_in = d_kv_in (its columns). expected
 * completes "x: expected <expected>, got ..." for a vector. */
int attn__check_token_rows(attn_problem *problem, const char *expected);
/* numHeads, which must divide info.d_model. */
int attn__check_heads(attn_problem *problem);
/* Reorders [batch, heads, block] into [heads, batch, block]. */
void attn__heads_first(double *out, const double *in, int batch, int heads,
                       size_t block);
/* A result [batch?] rows x cols (heads blocks when heads > 0); NULL when
 * out of memory. */
double *attn__add_rows_result(attn_problem *problem, const char *name,
                              int heads, int rows, int cols);
/* A gradient field shaped like the output: a vector of cols for a vector
 * query, else [batch?] rows x cols. */
int attn__check_grad_output(attn_problem *problem, const char *field, int rows,
                            const char *rows_why, int cols,
                            const char *cols_why);

/* ---- per-kind runs (problem.c's kinds call them) ---- */

int attn__run_sdpa(attn_problem *problem);         /* run_sdpa.c */
int attn__run_multihead(attn_problem *problem);    /* run_sdpa.c */
int attn__run_weighted_sum(attn_problem *problem); /* run_other.c */
int attn__run_additive(attn_problem *problem);     /* run_other.c */
int attn__run_luong(attn_problem *problem);        /* run_other.c */
int attn__run_linear(attn_problem *problem);       /* run_other.c */
int attn__run_softmax(attn_problem *problem);      /* run_other.c */
int attn__run_online(attn_problem *problem);       /* run_online.c */

int attn__run_transformer_block(attn_problem *problem); /* run_block.c */

/* ---- run_grad.c: gradients, when the problem has gradOutput ---- */

/* After a successful forward run: adds the gradient results. */
/* grad_output: dL/d(output), the field gradOutput or output − target. */
int attn__sdpa_gradients(attn_problem *problem, const double *grad_output);
int attn__multihead_gradients(attn_problem *problem);
int attn__additive_gradients(attn_problem *problem); /* gradContext */
int attn__luong_gradients(attn_problem *problem);    /* gradContext */
int attn__linear_gradients(attn_problem *problem);

#endif /* ATTN_PROBLEM_H */
