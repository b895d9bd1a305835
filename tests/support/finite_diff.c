#include "finite_diff.h"

void fd_gradient(double *grad, double *x, size_t count, fd_loss_fn loss,
                 void *context, double step)
{
    for (size_t i = 0; i < count; i++) {
        const double saved = x[i];
        const double up = saved + step, down = saved - step;
        x[i] = up;
        const double plus = loss(context);
        x[i] = down;
        const double minus = loss(context);
        x[i] = saved;
        /* The steps actually taken, which rounding may have changed. */
        grad[i] = (plus - minus) / (up - down);
    }
}

double fd_dot(const double *a, const double *b, size_t count)
{
    double sum = 0.0;
    for (size_t i = 0; i < count; i++) sum += a[i] * b[i];
    return sum;
}
