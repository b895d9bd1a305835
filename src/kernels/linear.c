/* linear.c: linear attention with phi(x) = elu(x) + 1, O(n) in length, in
 * double: linear_body.h. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

#define LIN_T double
#define LIN_EXP(x) exp(x)
#define LIN_ALL_FINITE(x, n) attn__all_finite((x), (n))
#define LIN_BY_INVERSE 0
#define LIN_NAME attn_linear
#define LIN_WORK_SIZE attn_linear_work_size
#include "kernels/linear_body.h"
