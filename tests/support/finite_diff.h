/* Central finite differences for checking backward passes in float64. */
#ifndef FINITE_DIFF_H
#define FINITE_DIFF_H

#include <stddef.h>

/* A scalar loss of whatever the context points at. */
typedef double (*fd_loss_fn)(void *context);

/* The step the gradient tests use. */
#define FD_STEP 1e-6

/* grad[i] = (L(x + h e_i) − L(x − h e_i)) / 2h for each of the count
 * entries of x, which the loss reads through context; x is restored. */
void fd_gradient(double *grad, double *x, size_t count, fd_loss_fn loss,
                 void *context, double step);

/* Σ a[i] b[i]: the loss Σ dO ∘ output whose gradient is dO. */
double fd_dot(const double *a, const double *b, size_t count);

/* Fails the test unless analytic and numeric gradients agree within a
 * relative error of 1e-6 (rtol 1e-6, atol 1e-8). */
#define assert_gradient_close(analytic, numeric, count) \
    assert_allclose((analytic), (numeric), (count), 1e-6, 1e-8)

#endif
