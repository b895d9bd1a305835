#include "allclose.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

int close_enough(double a, double b, double rtol, double atol)
{
    if (isnan(a) || isnan(b)) return 0;
    if (isinf(a) || isinf(b)) return a == b;
    return fabs(a - b) <= atol + rtol * fabs(b);
}

void assert_allclose_at(const double *actual, const double *expected,
                        size_t count, double rtol, double atol,
                        const char *file, int line)
{
    for (size_t i = 0; i < count; i++) {
        if (!close_enough(actual[i], expected[i], rtol, atol)) {
            print_error("%s:%d: element %zu is %.17g, expected %.17g "
                        "(rtol %g, atol %g)\n",
                        file, line, i, actual[i], expected[i], rtol, atol);
            _fail(file, line);
        }
    }
}
