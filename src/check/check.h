/*
 * check.h: the check layer's private view. A check compares the numbers
 * someone printed for a problem's results with the exact ones, then says
 * why each differs: a misprint and what it was carried into, rounding of
 * the printed intermediates, or a named slip that reproduces the printed
 * tables (printed.c holds the printed numbers, check.c runs the check,
 * arithmetic.c redoes the walkthrough's equations on the printed numbers,
 * slips.c holds the slips, report.c writes it).
 */
#ifndef ATTN_CHECK_H
#define ATTN_CHECK_H

#include "walkthrough/walker.h"

enum {
    ATTN__CHECK_TABLES = 64,  /* printed keys, at most */
    ATTN__KEY_CAP = 64,       /* bytes of a printed key, NUL included */
    ATTN__SENTENCE_CAP = 512, /* bytes of a group's explanation */
    ATTN__MAX_DECIMALS = 17,
    ATTN__ROOT_WALKS = 256 /* misprints whose consequences are followed */
};

/* How far, as a fraction of a value, unprinted rounded intermediates may
 * move it: a number printed one unit off counts as rounding only when the
 * exact value is that close to the rounding boundary (check.c). */
#define ATTN__ROUNDING_DRIFT 0.05

/* How a printed cell relates to the tensor cell it restates. */
typedef enum attn__transform {
    ATTN__AS_IS,   /* the cell itself */
    ATTN__PERCENT, /* 100 × the cell (weightsPercent) */
    ATTN__EXP,     /* e^cell of scaled, without subtracting the row's max */
    ATTN__SUM      /* Σ_j e^scaled[.., i, j] over the row, likewise */
} attn__transform;

/* Causes, in the order groups are listed; the slips after ROUNDING are
 * slips.c's table, in the same order. */
typedef enum attn__cause {
    ATTN__MISPRINT,
    ATTN__ROUNDING,
    ATTN__NO_SCALE,
    ATTN__SCALE_BY_DK,
    ATTN__SOFTMAX_COLUMNS,
    ATTN__NO_TRANSPOSE,
    ATTN__MASK_AFTER_SOFTMAX,
    ATTN__V_TRANSPOSED,
    ATTN__CAUSES
} attn__cause;

/* One printed key's numbers. */
typedef struct attn__printed {
    char key[ATTN__KEY_CAP];      /* as given: "weights", "output_row2" */
    char base[2 * ATTN__KEY_CAP]; /* the tensor it reads: "heads.0.weights" */
    int transform;                /* an attn__transform */
    int row;                      /* the row of base (`_row<i>`), or -1 */
    int rank, dims[4];            /* as printed (leading 1s dropped) */
    int base_rank;                /* rank of base, ≤ 4 */
    int base_dims[4];
    size_t count;
    double *values; /* [count]; NaN: not printed, ±INFINITY: ∞ */
    int *decimals;  /* [count] */
    int inferred;   /* the decimals given to numbers without any (the most
                       any of them shows), or -1 when every one had some */
    double *exact;  /* [count]; NaN when the engine has no such cell */
    double *own;    /* [count]: the printed numbers' own arithmetic, NaN
                       where no equation gives the cell */
    int *step;      /* [count]: where the cell is computed, its step and
                       repeat (attn__walk_place), or INT_MAX */
} attn__printed;

typedef struct attn__erratum {
    int table;
    size_t cell;
    int group;
    int is_root; /* a misprint of its own, not carried from another */
} attn__erratum;

typedef struct attn__group {
    int cause; /* an attn__cause */
    int root;  /* misprint: its first erratum; else -1 (the
                  misprints of one table in one step, a row
                  of weights, are one slip) */
    unsigned long long intermediates; /* rounding: tables rounded before
                                         the step (bit per table) */
    char explanation[ATTN__SENTENCE_CAP];
} attn__group;

/* The arithmetic of the walkthrough's equations: cell slots. */
typedef struct attn__arith attn__arith;

struct attn_check {
    const attn_problem *problem;
    const attn_allocator *allocator;
    char error[ATTN__ERROR_CAP];
    attn__printed tables[ATTN__CHECK_TABLES];
    int table_count;
    char unchecked[ATTN__CHECK_TABLES][ATTN__KEY_CAP];
    int unchecked_count;
    size_t checked; /* printed cells compared */
    int has_run;
    unsigned long long problem_run; /* the problem's run_count when its results
                                  were first read, 0 before */
    attn__erratum *errata;          /* [errata_cap] */
    int errata_count, errata_cap;
    attn__group *groups; /* [errata_count + ATTN__CAUSES] */
    int group_count;
};

/* printed.c */
int attn__check_fail(attn_check *check, int status, const char *format, ...)
    ATTN__PRINTF_LIKE(3, 4);
void *attn__check_alloc(attn_check *check, size_t bytes);
void attn__check_free(attn_check *check, void *block);
/* ATTN_OK when the problem has results and they are those of the run this
 * check first read (recorded then); else ATTN_ERR_STATE with a message: the
 * printed keys were resolved against those results' shapes. */
int attn__check_results_unchanged(attn_check *check);
/* Forgets the last run's errata and groups (a new printed key, a new run). */
void attn__check_clear(attn_check *check);
/* The walker ref of cell `cell` of a table, and the tensor cell its value
 * is computed from (for ATTN__SUM: the row's first entry). */
attn__ref attn__cell_ref(const attn__printed *table, size_t cell);
/* Cell `cell` of a table by the name a reader uses: the key without
 * "_row<i>", then an index per axis, a token's label where the axis is
 * one of queries or keys and counted from 1 elsewhere:
 * "weights[sat][mat]", "output[q2][3]", "heads.0.sum[cat]". */
void attn__cell_name(attn__text *out, const attn_check *check,
                     const attn__printed *table, size_t cell);
/* A printed number as it was written: to its decimals, or past 10^15
 * (where that would take hundreds of digits) in the shortest form that
 * reads back; ±∞ as such. */
enum { ATTN__PRINTED_CAP = 48 }; /* ≥ ATTN__NUMBER_CAP */
void attn__printed_text(char out[ATTN__PRINTED_CAP], double value,
                        int decimals);

/* check.c */
/* 0.5·10^-decimals + 1e-12: how far a correctly rounded number may be. */
double attn__slack(int decimals);

/* arithmetic.c: walks the problem's equations. mode ATTN__WORLD_EXACT
 * keeps every leaf the engine's; _PRINTED puts the printed numbers in the
 * cells they print; _ROOT only the printed number of cell `root` of table
 * `root_table`. Each walk's values are kept for attn__arith_value. */
enum { ATTN__WORLD_EXACT, ATTN__WORLD_PRINTED, ATTN__WORLD_ROOT };
int attn__arith_create(attn_check *check, attn__arith **arith);
void attn__arith_destroy(attn_check *check, attn__arith *arith);
int attn__arith_walk(attn_check *check, attn__arith *arith, int mode,
                     int root_table, size_t root_cell);
/* The value of a table's cell by the last walk (with its transform);
 * NaN when no equation gives it. *step: where it is computed
 * (attn__walk_place; INT_MAX if none). */
double attn__arith_value(const attn__arith *arith, const attn__printed *table,
                         size_t cell, int *step);

/* slips.c: the value slip `cause` gives each printed cell, into
 * values[t][cell] (NaN where the slip does not apply); 0 when the slip
 * does not apply to this problem, 1 when it does, or a negative status. */
int attn__slip_values(attn_check *check, int cause, double **values);
/* One sentence: what the slip did, for a learner. */
void attn__slip_sentence(const attn_check *check, int cause, const char *fields,
                         char *out, size_t cap);
const char *attn__cause_name(int cause);

/* report.c */
void attn__check_report(const attn_check *check, int format, attn__text *text);

#endif /* ATTN_CHECK_H */
