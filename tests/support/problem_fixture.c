#include "problem_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

attn_problem *problem_new(const char *kind)
{
    attn_problem *problem = NULL;
    assert_int_equal(attn_problem_create(&problem, kind, NULL), ATTN_OK);
    assert_non_null(problem);
    return problem;
}

static void set_tensor(attn_problem *problem, const char *field, int rank,
                       const int *dims, const double *data)
{
    const int status = attn_problem_set_tensor(problem, field, rank, dims,
                                               data);
    if (status != ATTN_OK)
        fail_msg("%s: %s", field, attn_problem_error(problem));
}

void problem_vector(attn_problem *problem, const char *field, int n,
                    const double *data)
{
    const int dims[] = {n};
    set_tensor(problem, field, 1, dims, data);
}

void problem_matrix(attn_problem *problem, const char *field, int rows,
                    int cols, const double *data)
{
    const int dims[] = {rows, cols};
    set_tensor(problem, field, 2, dims, data);
}

void problem_strings(attn_problem *problem, const char *field, int count,
                     const char *const *values)
{
    if (attn_problem_set_strings(problem, field, count, values) != ATTN_OK)
        fail_msg("%s: %s", field, attn_problem_error(problem));
}

void problem_batch(attn_problem *problem, const char *field, int batch,
                   int rows, int cols, const double *data)
{
    const int dims[] = {batch, rows, cols};
    set_tensor(problem, field, 3, dims, data);
}

attn_problem *problem_self_attention(const char *kind, int batch, int n,
                                     int d_k, int d_v, const double *x,
                                     const double *v)
{
    attn_problem *problem = problem_new(kind);
    if (batch > 0) {
        problem_batch(problem, "q", batch, n, d_k, x);
        problem_batch(problem, "k", batch, n, d_k, x);
        problem_batch(problem, "v", batch, n, d_v, v);
    } else {
        problem_matrix(problem, "q", n, d_k, x);
        problem_matrix(problem, "k", n, d_k, x);
        problem_matrix(problem, "v", n, d_v, v);
    }
    return problem;
}

void problem_run_ok(attn_problem *problem)
{
    const int status = attn_problem_run(problem);
    if (status != ATTN_OK)
        fail_msg("run failed (%d): %s", status, attn_problem_error(problem));
}

const double *problem_result(const attn_problem *problem, const char *name,
                             int rank, int dim0, int dim1, int dim2)
{
    int got_rank = -1, dims[3] = {0, 0, 0};
    const double *data = NULL;
    const int status = attn_problem_result(problem, name, &got_rank, dims,
                                           &data);
    if (status != ATTN_OK)
        fail_msg("result %s: %s", name, attn_problem_error(problem));
    assert_int_equal(got_rank, rank);
    const int expected[3] = {dim0, dim1, dim2};
    for (int d = 0; d < rank; d++) assert_int_equal(dims[d], expected[d]);
    return data;
}
