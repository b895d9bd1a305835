/* Comparisons for cmocka tests. cmocka's assert_float_equal accepts NaN and
 * treats -INFINITY as close to -1e30, so these check finiteness first. */
#ifndef ALLCLOSE_H
#define ALLCLOSE_H

#include <stddef.h>

/* 1 if |a - b| <= atol + rtol * |b|, with equal infinities equal and NaN
 * never close to anything. */
int close_enough(double a, double b, double rtol, double atol);

/* Fails the current cmocka test, naming the first index that differs. */
void assert_allclose_at(const double *actual, const double *expected,
                        size_t count, double rtol, double atol,
                        const char *file, int line);

#define assert_allclose(actual, expected, count, rtol, atol)          \
    assert_allclose_at((actual), (expected), (count), (rtol), (atol), \
                       __FILE__, __LINE__)

#endif
