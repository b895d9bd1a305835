/* linear_f32.c: linear attention (linear.c) in float32: linear_body.h. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>

#define LIN_T float
#define LIN_EXP(x) expf(x)
#define LIN_ALL_FINITE(x, n) attn__all_finite_f32((x), (n))
#define LIN_BY_INVERSE 1
#define LIN_NAME attn_linear_f32
#define LIN_WORK_SIZE attn_linear_f32_work_size
#include "kernels/linear_body.h"
