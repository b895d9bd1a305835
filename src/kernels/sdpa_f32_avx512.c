/* sdpa_f32_avx512.c: the float32 kernel of sdpa_f32_body.h over AVX-512F
 * (16 floats a vector), compiled for it whatever the rest of the library
 * targets; sdpa_f32.c calls it only when the CPU has AVX-512F. */
#include "attention.h"
#include "kernels/kernels.h"

#ifdef ATTN__HAVE_AVX2_KERNEL
#pragma GCC target("avx512f")
#include <immintrin.h>

/* 2^x for x <= 0, 16 lanes at once: x = n + f with |f| <= 1/2, 2^f by
 * the degree-5 polynomial of exp2_wasm (sdpa_f32.c), 2^n applied by
 * vscalefps; below -126 the result is 0, so -INFINITY gives exactly 0. */
static __m512 exp2_avx512(__m512 x)
{
    const __m512 lo = _mm512_set1_ps(-126.0f);
    const __mmask16 keep = _mm512_cmp_ps_mask(x, lo, _CMP_GE_OQ);
    x = _mm512_max_ps(x, lo);
    const __m512 n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT |
                                                 _MM_FROUND_NO_EXC);
    const __m512 f = _mm512_sub_ps(x, n);
    __m512 p = _mm512_set1_ps(1.3390863e-3f);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.6760319e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.5503571e-2f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.4022107e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.9314719e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0000001f));
    return _mm512_maskz_scalef_ps(keep, p, n);
}

#define F32_MR 12
#define F32_EXP2 1
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
#define V_EXP(x) exp2_avx512(x)
#define V_HSUM(a) _mm512_reduce_add_ps(a)
#define V_HMAX(a) _mm512_reduce_max_ps(a)
#define F32_NAME(name) attn__f32_##name##_avx512
#include "kernels/sdpa_f32_body.h"

#else
/* ISO C forbids an empty translation unit. */
typedef int attn__no_avx512_kernel;
#endif
