/* Building attn_problem inputs in tests: create a problem and set tensor
 * fields in one line each, failing the cmocka test on any error. */
#ifndef PROBLEM_FIXTURE_H
#define PROBLEM_FIXTURE_H

#include "attention.h"

/* A new problem of this kind with the default allocator. */
attn_problem *problem_new(const char *kind);

/* Sets a vector [n], a matrix [rows, cols] or a batch [batch, rows, cols]. */
void problem_vector(attn_problem *problem, const char *field, int n,
                    const double *data);
void problem_matrix(attn_problem *problem, const char *field, int rows,
                    int cols, const double *data);
void problem_batch(attn_problem *problem, const char *field, int batch,
                   int rows, int cols, const double *data);

/* Sets a list of strings (labels such as queryTokens). */
void problem_strings(attn_problem *problem, const char *field, int count,
                     const char *const *values);

/* A problem of this kind with q = k = x [n, d_k] and v [n, d_v]; batch > 0
 * makes them batches [batch, n, d_k] and [batch, n, d_v] instead. */
attn_problem *problem_self_attention(const char *kind, int batch, int n,
                                     int d_k, int d_v, const double *x,
                                     const double *v);

/* Runs the problem; fails the test with the problem's message if it fails. */
void problem_run_ok(attn_problem *problem);

/* A result's data after checking its rank and dims (unused dims ignored). */
const double *problem_result(const attn_problem *problem, const char *name,
                             int rank, int dim0, int dim1, int dim2);

#endif
