/* sdpa_f32_avx512.c: the float32 kernel of sdpa_f32_body.h over AVX-512F
 * (16 floats a vector), compiled for it whatever the rest of the library
 * targets; sdpa_f32.c calls it only when the CPU has AVX-512F. */
#include "attention.h"
#include "kernels/kernels.h"

#ifdef ATTN__HAVE_AVX2_KERNEL
#pragma GCC target("avx512f")
#include <immintrin.h>

/* e^x for x <= 0: the steps of exp_scalar in sdpa_f32.c, 16 lanes at once,
 * with 2^n applied by vscalefps (one instruction instead of four). */
static __m512 exp_avx512(__m512 x)
{
    const __m512 lo = _mm512_set1_ps(-87.0f);
    const __mmask16 keep = _mm512_cmp_ps_mask(x, lo, _CMP_GE_OQ);
    x = _mm512_max_ps(x, lo);
    const __m512 n = _mm512_roundscale_ps(
        _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 r = _mm512_fnmadd_ps(
        n, _mm512_set1_ps(-2.12194440e-4f),
        _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x));
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r),
                      _mm512_set1_ps(1.0f));
    return _mm512_maskz_scalef_ps(keep, p, n);
}

#define F32_MR 12
#define F32_NB 128
#define F32_P_ROWS 1
#define VF __m512
#define VW 16
#define V_ZERO() _mm512_setzero_ps()
#define V_SET1(x) _mm512_set1_ps(x)
#define V_LOAD(p) _mm512_loadu_ps(p)
#define V_STORE(p, a) _mm512_storeu_ps((p), (a))
#define V_ADD(a, b) _mm512_add_ps((a), (b))
#define V_SUB(a, b) _mm512_sub_ps((a), (b))
#define V_MUL(a, b) _mm512_mul_ps((a), (b))
#define V_MAX(a, b) _mm512_max_ps((a), (b))
#define V_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define V_EXP(x) exp_avx512(x)
#define V_HSUM(a) _mm512_reduce_add_ps(a)
#define V_HMAX(a) _mm512_reduce_max_ps(a)
#define F32_NAME(name) attn__f32_##name##_avx512
#include "kernels/sdpa_f32_body.h"

#else
/* ISO C forbids an empty translation unit. */
typedef int attn__no_avx512_kernel;
#endif
