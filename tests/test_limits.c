/* Limits: a problem refuses to hold more bytes than its limit in fields,
 * results and scratch space (ATTN_ERR_TOO_LARGE, a message with both
 * numbers), having allocated nothing for the refused value. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "attention.h"
#include "failing_allocator.h"

static attn_problem *softmax_problem(failing_allocator *counts)
{
    const attn_allocator allocator = failing_allocator_use(counts);
    attn_problem *problem;
    assert_int_equal(attn_problem_create(&problem, "softmax", &allocator),
                     ATTN_OK);
    return problem;
}

static void test_the_default_limit_is_256_mib(void **state)
{
    (void)state;
    assert_int_equal(ATTN_PROBLEM_DEFAULT_MAX_BYTES, 268435456u);
}

static void
test_a_field_above_the_limit_is_refused_before_it_is_copied(void **state)
{
    (void)state;
    failing_allocator counts = {-1, 0, 0};
    attn_problem *problem = softmax_problem(&counts);
    assert_int_equal(attn_problem_set_max_bytes(problem, 64), ATTN_OK);
    const double x[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    const long live_before = counts.live;
    const int dims[] = {10};
    assert_int_equal(attn_problem_set_tensor(problem, "x", 1, dims, x),
                     ATTN_ERR_TOO_LARGE);
    assert_string_equal(attn_problem_error(problem),
                        "x: a vector of 10 would make the problem hold 80 "
                        "bytes, more than its limit of 64 bytes; use smaller "
                        "inputs or raise the limit (maxBytes in the JS API, "
                        "--max-bytes in build/attn)");
    assert_int_equal(counts.live, live_before);
    /* Dims far beyond the data given are refused by their size, before a
     * byte past the data is read (ASan would see that read). */
    const int huge[] = {1 << 15, 1 << 15};
    assert_int_equal(attn_problem_set_tensor(problem, "x", 2, huge, x),
                     ATTN_ERR_TOO_LARGE);
    /* Eight doubles are exactly 64 bytes: allowed. */
    const int eight[] = {8};
    assert_int_equal(attn_problem_set_tensor(problem, "x", 1, eight, x),
                     ATTN_OK);
    /* Replacing a field counts the new value instead of the old one. */
    const int seven[] = {7};
    assert_int_equal(attn_problem_set_tensor(problem, "x", 1, seven, x),
                     ATTN_OK);
    attn_problem_destroy(problem);
    assert_int_equal(counts.live, 0);
}

static void
test_results_above_the_limit_fail_the_run_with_too_large(void **state)
{
    (void)state;
    failing_allocator counts = {-1, 0, 0};
    attn_problem *problem = softmax_problem(&counts);
    const double x[4] = {1, 2, 3, 4};
    const int dims[] = {1, 4};
    assert_int_equal(attn_problem_set_tensor(problem, "x", 2, dims, x),
                     ATTN_OK);
    /* x holds 32 bytes; scaled, max, exp, sum and weights need 112 more. */
    assert_int_equal(attn_problem_set_max_bytes(problem, 100), ATTN_OK);
    assert_int_equal(attn_problem_run(problem), ATTN_ERR_TOO_LARGE);
    assert_string_equal(
        attn_problem_error(problem),
        "softmax: its results and scratch space would make the problem hold "
        "104 bytes, more than its limit of 100 bytes; use "
        "smaller inputs or raise the limit (maxBytes in the "
        "JS API, --max-bytes in build/attn)");
    size_t length = 0;
    assert_int_equal(
        attn_problem_format(problem, ATTN_FORMAT_JSON, NULL, 0, &length),
        ATTN_ERR_STATE);
    /* Raised, the same problem runs and gives the usual weights. */
    assert_int_equal(attn_problem_set_max_bytes(problem, 144), ATTN_OK);
    assert_int_equal(attn_problem_run(problem), ATTN_OK);
    int rank, out_dims[3];
    const double *weights;
    assert_int_equal(
        attn_problem_result(problem, "weights", &rank, out_dims, &weights),
        ATTN_OK);
    assert_true(fabs(weights[3] - 0.6439142598879722) < 1e-15);
    /* 0 restores the default. */
    assert_int_equal(attn_problem_set_max_bytes(problem, 0), ATTN_OK);
    assert_int_equal(attn_problem_run(problem), ATTN_OK);
    attn_problem_destroy(problem);
    assert_int_equal(counts.live, 0);
}

static void test_scratch_space_counts_against_the_limit(void **state)
{
    (void)state;
    /* Linear attention with d_k = d_v = 300 needs 300 x 302 doubles of
     * scratch (724800 bytes) for inputs and results of 9600 bytes. */
    enum { D = 300 };
    static double row[D];
    for (int i = 0; i < D; i++) row[i] = (double)i / D;
    failing_allocator counts = {-1, 0, 0};
    const attn_allocator allocator = failing_allocator_use(&counts);
    attn_problem *problem;
    assert_int_equal(attn_problem_create(&problem, "linear", &allocator),
                     ATTN_OK);
    const int dims[] = {1, D};
    assert_int_equal(attn_problem_set_tensor(problem, "q", 2, dims, row), 0);
    assert_int_equal(attn_problem_set_tensor(problem, "k", 2, dims, row), 0);
    assert_int_equal(attn_problem_set_tensor(problem, "v", 2, dims, row), 0);
    assert_int_equal(attn_problem_set_max_bytes(problem, 100000), ATTN_OK);
    assert_int_equal(attn_problem_run(problem), ATTN_ERR_TOO_LARGE);
    assert_string_equal(attn_problem_error(problem),
                        "linear: its results and scratch space would make "
                        "the problem hold 734400 bytes, more than its limit "
                        "of 100000 bytes; use smaller inputs or raise the "
                        "limit (maxBytes in the JS API, --max-bytes in "
                        "build/attn)");
    assert_int_equal(attn_problem_set_max_bytes(problem, 734400), ATTN_OK);
    assert_int_equal(attn_problem_run(problem), ATTN_OK);
    attn_problem_destroy(problem);
    assert_int_equal(counts.live, 0);
}

/* ---- Scratch space of every run, forward and backward ---- */

/* An allocator that counts the bytes it has out, and the most at once. */
typedef struct byte_counter {
    size_t live, peak;
    size_t created; /* what an empty problem holds */
} byte_counter;

static void *count_allocate(void *context, size_t bytes)
{
    byte_counter *counter = context;
    size_t *block = malloc(sizeof(size_t) + bytes);
    if (block == NULL) return NULL;
    block[0] = bytes;
    counter->live += bytes;
    if (counter->live > counter->peak) counter->peak = counter->live;
    return block + 1;
}

static void count_release(void *context, void *block)
{
    byte_counter *counter = context;
    size_t *start = (size_t *)block - 1;
    counter->live -= start[0];
    free(start);
}

/* A [rows, cols] field of values in (-1, 1), different for each field. */
static void set_filled(attn_problem *problem, const char *field, int rows,
                       int cols)
{
    static double data[64 * 64];
    assert_true(rows * cols <= 64 * 64);
    for (int i = 0; i < rows * cols; i++)
        data[i] = sin(0.7 * i + (double)strlen(field) + field[0]);
    const int dims[] = {rows, cols};
    assert_int_equal(attn_problem_set_tensor(problem, field, rows == 1 ? 1 : 2,
                                             rows == 1 ? dims + 1 : dims, data),
                     ATTN_OK);
}

/* Each problem that runs a backward pass or a transformer block. */
static attn_problem *limited_problem(int which, byte_counter *counter,
                                     size_t max_bytes)
{
    static const char *const kinds[] = {
        "scaledDotProduct", "multiHead",        "additive",        "luong",
        "linear",           "transformerBlock", "transformerBlock"};
    const attn_allocator allocator = {count_allocate, count_release, counter};
    attn_problem *problem;
    assert_int_equal(attn_problem_create(&problem, kinds[which], &allocator),
                     ATTN_OK);
    counter->created = counter->live;
    assert_int_equal(attn_problem_set_max_bytes(problem, max_bytes), ATTN_OK);
    enum { N = 24, D = 16 };
    switch (which) {
    case 0:
    case 4: /* scaled dot-product and linear attention */
        set_filled(problem, "q", N, D);
        set_filled(problem, "k", N, D);
        set_filled(problem, "v", N, D);
        set_filled(problem, "gradOutput", N, D);
        break;
    case 1:
        set_filled(problem, "x", N, D);
        set_filled(problem, "wq", D, 32);
        set_filled(problem, "wk", D, 32);
        set_filled(problem, "wv", D, 32);
        set_filled(problem, "wo", 32, D);
        assert_int_equal(attn_problem_set_number(problem, "numHeads", 4), 0);
        set_filled(problem, "gradOutput", N, D);
        break;
    case 2:
    case 3: /* additive, and Luong's concat */
        set_filled(problem, "query", N, D);
        set_filled(problem, "keys", N, D);
        if (which == 2) {
            set_filled(problem, "ws", D, 40);
            set_filled(problem, "wh", D, 40);
        } else {
            assert_int_equal(
                attn_problem_set_string(problem, "method", "concat"), 0);
            set_filled(problem, "w", 2 * D, 40);
        }
        set_filled(problem, "v", 1, 40);
        set_filled(problem, "gradContext", N, D);
        break;
    default: { /* a transformer block, forward (5) and backward (6) */
        set_filled(problem, "x", N, D);
        static const char *const square[] = {"wq", "wk", "wv", "wo"};
        for (int i = 0; i < 4; i++) set_filled(problem, square[i], D, D);
        set_filled(problem, "gamma1", 1, D);
        set_filled(problem, "gamma2", 1, D);
        set_filled(problem, "w1", D, 48);
        set_filled(problem, "w2", 48, D);
        assert_int_equal(attn_problem_set_number(problem, "numHeads", 2), 0);
        if (which == 6) set_filled(problem, "gradOutput", N, D);
    }
    }
    return problem;
}

static int runs_within(int which, size_t max_bytes, byte_counter *counter)
{
    attn_problem *problem = limited_problem(which, counter, max_bytes);
    const int status = attn_problem_run(problem);
    if (status != ATTN_OK) {
        assert_int_equal(status, ATTN_ERR_TOO_LARGE);
        assert_non_null(strstr(attn_problem_error(problem), "more than its "
                                                            "limit"));
    }
    attn_problem_destroy(problem);
    assert_int_equal(counter->live, 0);
    return status == ATTN_OK;
}

static void test_every_run_holds_no_more_than_its_limit(void **state)
{
    (void)state;
    for (int which = 0; which < 7; which++) {
        /* The smallest limit at which the problem runs. */
        byte_counter counter = {0, 0, 0};
        size_t low = 1, high = 1 << 24;
        assert_true(runs_within(which, high, &counter));
        while (low < high) {
            const size_t middle = low + (high - low) / 2;
            if (runs_within(which, middle, &counter))
                high = middle;
            else
                low = middle + 1;
        }
        /* What it holds then through its allocator: its fields, results and
         * scratch within the limit, besides what it held when created (the
         * problem itself, its error message, its table of fields) and the
         * method's name, which the limit does not count. */
        counter.peak = 0;
        assert_true(runs_within(which, low, &counter));
        if (counter.peak > low + counter.created + sizeof "concat")
            fail_msg("problem %d: the limit %zu lets it hold %zu bytes "
                     "(%zu when created)",
                     which, low, counter.peak, counter.created);
    }
}

static void test_set_max_bytes_of_null_is_a_null_error(void **state)
{
    (void)state;
    assert_int_equal(attn_problem_set_max_bytes(NULL, 1), ATTN_ERR_NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_default_limit_is_256_mib),
        cmocka_unit_test(
            test_a_field_above_the_limit_is_refused_before_it_is_copied),
        cmocka_unit_test(
            test_results_above_the_limit_fail_the_run_with_too_large),
        cmocka_unit_test(test_scratch_space_counts_against_the_limit),
        cmocka_unit_test(test_every_run_holds_no_more_than_its_limit),
        cmocka_unit_test(test_set_max_bytes_of_null_is_a_null_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
