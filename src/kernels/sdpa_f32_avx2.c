/* sdpa_f32_avx2.c: the float32 kernel of sdpa_f32_body.h over AVX2 + FMA
 * (8 floats a vector), compiled for those instructions whatever the rest
 * of the library targets; sdpa_f32.c calls it only when the CPU has them. */
#include "attention.h"
#include "kernels/kernels.h"

#ifdef ATTN__HAVE_AVX2_KERNEL
#pragma GCC target("avx2,fma")
#include <immintrin.h>

/* e^x for x <= 0: the steps of exp_scalar in sdpa_f32.c, 8 lanes at once. */
static __m256 exp_avx2(__m256 x)
{
    const __m256 lo = _mm256_set1_ps(-87.0f);
    const __m256 keep = _mm256_cmp_ps(x, lo, _CMP_GE_OQ);
    x = _mm256_min_ps(_mm256_max_ps(x, lo), _mm256_setzero_ps());
    const __m256 n = _mm256_round_ps(
        _mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256 r = _mm256_fnmadd_ps(
        n, _mm256_set1_ps(-2.12194440e-4f),
        _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x));
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(p, r), r, r),
                      _mm256_set1_ps(1.0f));
    const __m256i e = _mm256_slli_epi32(
        _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_and_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(e)), keep);
}

#define F32_MR 6
#define F32_NB 128
#define F32_P_ROWS 1
static float hsum_avx2(__m256 a)
{
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(a),
                          _mm256_extractf128_ps(a, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_movehdup_ps(x));
    return _mm_cvtss_f32(x);
}

static float hmax_avx2(__m256 a)
{
    __m128 x = _mm_max_ps(_mm256_castps256_ps128(a),
                          _mm256_extractf128_ps(a, 1));
    x = _mm_max_ps(x, _mm_movehl_ps(x, x));
    x = _mm_max_ss(x, _mm_movehdup_ps(x));
    return _mm_cvtss_f32(x);
}

#define VF __m256
#define VW 8
#define V_ZERO() _mm256_setzero_ps()
#define V_SET1(x) _mm256_set1_ps(x)
#define V_LOAD(p) _mm256_loadu_ps(p)
#define V_STORE(p, a) _mm256_storeu_ps((p), (a))
#define V_ADD(a, b) _mm256_add_ps((a), (b))
#define V_SUB(a, b) _mm256_sub_ps((a), (b))
#define V_MUL(a, b) _mm256_mul_ps((a), (b))
#define V_MAX(a, b) _mm256_max_ps((a), (b))
#define V_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define V_EXP(x) exp_avx2(x)
#define V_HSUM(a) hsum_avx2(a)
#define V_HMAX(a) hmax_avx2(a)
#define F32_NAME(name) attn__f32_##name##_avx2
#include "kernels/sdpa_f32_body.h"

#else
/* ISO C forbids an empty translation unit. */
typedef int attn__no_avx2_kernel;
#endif
