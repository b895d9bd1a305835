/* sdpa_f32.c: scaled dot-product attention in float32: checks, run-time
 * choice of kernel, and the portable kernels (scalar everywhere, WASM SIMD
 * under -msimd128, the same with relaxed SIMD's fused multiply-add under
 * -mrelaxed-simd); what every kernel shares is sdpa_f32_tiles.c's. */
#include "attention.h"
#include "kernels/kernels.h"

#include <math.h>
#include <string.h>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

/* e^x for x <= 0 in float32, the same steps in every kernel: x = n·ln 2 + r
 * with |r| <= ln 2 / 2, e^r by Cephes' degree-7 polynomial (relative error
 * about 1 ulp), 2^n built in the exponent bits. Below -87 (where 2^n would
 * leave the normal range) the result is 0, so -INFINITY gives exactly 0. */
#define ATTN__EXP_LO (-87.0f)
#define ATTN__LOG2E 1.44269504088896341f
#define ATTN__LN2_HI 0.693359375f
#define ATTN__LN2_LO (-2.12194440e-4f)
#define ATTN__EXP_P0 1.9875691500e-4f
#define ATTN__EXP_P1 1.3981999507e-3f
#define ATTN__EXP_P2 8.3334519073e-3f
#define ATTN__EXP_P3 4.1665795894e-2f
#define ATTN__EXP_P4 1.6666665459e-1f
#define ATTN__EXP_P5 5.0000001201e-1f

static float exp_scalar(float x)
{
    if (!(x >= ATTN__EXP_LO)) return 0.0f;
    if (x > 0.0f) x = 0.0f;
    const float n = floorf(x * ATTN__LOG2E + 0.5f);
    const float r = (x - n * ATTN__LN2_HI) - n * ATTN__LN2_LO;
    float p = ATTN__EXP_P0;
    p = p * r + ATTN__EXP_P1;
    p = p * r + ATTN__EXP_P2;
    p = p * r + ATTN__EXP_P3;
    p = p * r + ATTN__EXP_P4;
    p = p * r + ATTN__EXP_P5;
    p = p * r * r + r + 1.0f;
    const uint32_t bits = (uint32_t)((int32_t)n + 127) << 23;
    float two_n;
    memcpy(&two_n, &bits, sizeof two_n);
    return p * two_n;
}

/* ---- The scalar kernel: a vector of one float ---- */

/* Three blocks of rows at a time: no faster here, but the native tests
 * then run the grouping that the WASM kernel relies on. */
#define F32_MR 4
#define F32_GROUPS 3
#define F32_NB 64
#define F32_P_ROWS 0
#define VF float
#define VW 1
#define V_ZERO() 0.0f
#define V_SET1(x) (x)
#define V_LOAD(p) (*(p))
#define V_STORE(p, a) (*(p) = (a))
#define V_ADD(a, b) ((a) + (b))
#define V_SUB(a, b) ((a) - (b))
#define V_MUL(a, b) ((a) * (b))
#define V_MAX(a, b) ((a) > (b) ? (a) : (b))
#define V_FMA(a, b, c) ((a) * (b) + (c))
#define V_EXP(x) exp_scalar(x)
#define F32_NAME(name) attn__f32_##name##_scalar
#include "kernels/sdpa_f32_body.h"
#undef VF
#undef VW
#undef V_ZERO
#undef V_SET1
#undef V_LOAD
#undef V_STORE
#undef V_ADD
#undef V_SUB
#undef V_MUL
#undef V_MAX
#undef V_FMA
#undef V_EXP
#undef F32_NAME
#undef F32_MR
#undef F32_NB
#undef F32_P_ROWS

/* ---- The WASM SIMD kernel: f32x4 ---- */

#ifdef __wasm_simd128__
/* a * b + c. Relaxed SIMD's f32x4.relaxed_madd is one fused instruction
 * where the CPU has FMA (x86 with FMA3, ARM) and a multiply then an add
 * elsewhere, so its rounding may differ by engine: within the float32
 * tests' tolerance either way. Emscripten 3.1.6 writes the pre-standard
 * opcode of this builtin; build.sh rewrites it to the standard one
 * (scripts/relaxed-simd.mjs). Without relaxed SIMD, two instructions. */
static inline v128_t madd_wasm(v128_t a, v128_t b, v128_t c)
{
#ifdef __wasm_relaxed_simd__
    return (v128_t)__builtin_wasm_fma_f32x4((__f32x4)a, (__f32x4)b, (__f32x4)c);
#else
    return wasm_f32x4_add(wasm_f32x4_mul(a, b), c);
#endif
}

/* 2^x for x <= 0: x = n + f with |f| <= 1/2, 2^f by a degree-5 polynomial
 * (interpolation at Chebyshev nodes: relative error 1.0e-7 before
 * rounding), 2^n built in the exponent bits. x is first raised to -127,
 * where 2^n's exponent bits are 0, so -INFINITY gives exactly 0. Adding
 * 1.5 * 2^23 rounds x to the integer n and leaves n in the low bits of
 * the sum, which a shift moves into the exponent: no conversion to
 * integers, which V8 spells in several instructions. Fewer steps than
 * e^x, and WASM SIMD has no fused multiply-add to hide them. */
static v128_t exp2_wasm(v128_t x)
{
    const v128_t round = wasm_f32x4_splat(12582912.0f); /* 1.5 * 2^23 */
    x = wasm_f32x4_pmax(x, wasm_f32x4_splat(-127.0f));
    const v128_t shifted = wasm_f32x4_add(x, round);
    const v128_t f = wasm_f32x4_sub(x, wasm_f32x4_sub(shifted, round));
    v128_t p = wasm_f32x4_splat(1.3390863e-3f);
    p = madd_wasm(p, f, wasm_f32x4_splat(9.6760319e-3f));
    p = madd_wasm(p, f, wasm_f32x4_splat(5.5503571e-2f));
    p = madd_wasm(p, f, wasm_f32x4_splat(2.4022107e-1f));
    p = madd_wasm(p, f, wasm_f32x4_splat(6.9314719e-1f));
    p = madd_wasm(p, f, wasm_f32x4_splat(1.0000001f));
    /* (bits of 1.5 * 2^23 + n) << 23 is n << 23: the rest shifts out. */
    const v128_t two_n = wasm_i32x4_add(wasm_i32x4_shl(shifted, 23),
                                        wasm_i32x4_splat(127 << 23));
    return wasm_f32x4_mul(p, two_n);
}

/* 8 blocks of 4 rows at a time: at T = 2048, K and V (1 MB) no longer fit
 * in a core's cache, and reading each tile once for 32 rows is 7 % faster
 * than once per 4 (natively the 12-row blocks gain nothing from it). */
#define F32_MR 4
#define F32_GROUPS 8
#define F32_NB 64
#define F32_P_ROWS 0
#define F32_EXP2 1
#define VF v128_t
#define VW 4
#define V_ZERO() wasm_f32x4_splat(0.0f)
#define V_SET1(x) wasm_f32x4_splat(x)
#define V_LOAD(p) wasm_v128_load(p)
#define V_STORE(p, a) wasm_v128_store((p), (a))
#define V_ADD(a, b) wasm_f32x4_add((a), (b))
#define V_SUB(a, b) wasm_f32x4_sub((a), (b))
#define V_MUL(a, b) wasm_f32x4_mul((a), (b))
#define V_MAX(a, b) wasm_f32x4_pmax((a), (b))
#define V_FMA(a, b, c) madd_wasm((a), (b), (c))
#define V_EXP(x) exp2_wasm(x)
#define V_TRANSPOSE4(r0, r1, r2, r3)                              \
    do {                                                          \
        const v128_t t0 = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5); \
        const v128_t t1 = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7); \
        const v128_t t2 = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5); \
        const v128_t t3 = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7); \
        r0 = wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5);              \
        r1 = wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7);              \
        r2 = wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5);              \
        r3 = wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7);              \
    } while (0)
#define F32_NAME(name) attn__f32_##name##_wasm
#include "kernels/sdpa_f32_body.h"
#endif

/* ---- Checks and dispatch ---- */

typedef int (*item_kernel)(const attn__f32_job *job);

/* The kernel for `kernel` (ATTN__F32_*), or NULL when this build or CPU
 * lacks it. */
static item_kernel kernel_for(int kernel)
{
    switch (kernel) {
    case ATTN__F32_SCALAR:
#if defined(__wasm_simd128__)
        /* Left out: the SIMD kernel serves every case, no export can ask
         * for this one, and the page loads every byte (the native tests
         * run it on its own). */
        return NULL;
#else
        return attn__f32_item_scalar;
#endif
    case ATTN__F32_BEST:
#if defined(__wasm_simd128__)
        return attn__f32_item_wasm;
#elif defined(ATTN__HAVE_AVX2_KERNEL)
        if (kernel_for(ATTN__F32_AVX512) != NULL) return attn__f32_item_avx512;
        if (kernel_for(ATTN__F32_AVX2) != NULL) return attn__f32_item_avx2;
        return attn__f32_item_scalar;
#else
        return attn__f32_item_scalar;
#endif
#if defined(ATTN__HAVE_AVX2_KERNEL)
    case ATTN__F32_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
                   ? attn__f32_item_avx2
                   : NULL;
    case ATTN__F32_AVX512:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") ? attn__f32_item_avx512 : NULL;
#endif
    default: return NULL;
    }
}

const char *attn_f32_kernel_name(void)
{
#if defined(__wasm_relaxed_simd__)
    return "wasm-relaxed-simd";
#elif defined(__wasm_simd128__)
    return "wasm-simd128";
#elif defined(ATTN__HAVE_AVX2_KERNEL)
    const item_kernel best = kernel_for(ATTN__F32_BEST);
    if (best == attn__f32_item_avx512) return "avx512f";
    if (best == attn__f32_item_avx2) return "avx2-fma";
    return "scalar";
#else
    return "scalar";
#endif
}

int attn__sdpa_f32_using(int kernel, float *weights, float *output,
                         const float *q, const float *k, const float *v,
                         int batch, int n_q, int n_k, int d_k, int d_v,
                         const attn_options *opts, float *work)
{
    if (q == NULL || k == NULL || v == NULL || work == NULL)
        return ATTN_ERR_NULL;
    const item_kernel run = kernel_for(kernel);
    if (run == NULL) return ATTN_ERR_OPTION;
    int status = attn__check_attention_sizes(batch, n_q, n_k, d_k, d_v, 1);
    if (status != ATTN_OK) return status;
    if (attn_sdpa_f32_work_size(n_k, d_k, d_v) == 0)
        return ATTN_ERR_SIZE_OVERFLOW;
    attn__sdpa_plan plan;
    status = attn__sdpa_plan_init(&plan, opts, batch, n_q, n_k, d_k);
    if (status != ATTN_OK) return status;
    const float scale = (float)plan.scale;
    if (!isfinite(scale)) return ATTN_ERR_RANGE;
    const size_t nq_dk = (size_t)n_q * (size_t)d_k;
    const size_t nk_dk = (size_t)n_k * (size_t)d_k;
    const size_t nk_dv = (size_t)n_k * (size_t)d_v;
    const size_t nq_dv = (size_t)n_q * (size_t)d_v;
    const size_t nq_nk = (size_t)n_q * (size_t)n_k;
    if (!attn__all_finite_f32(q, (size_t)batch * nq_dk) ||
        !attn__all_finite_f32(k, (size_t)batch * nk_dk) ||
        !attn__all_finite_f32(v, (size_t)batch * nk_dv))
        return ATTN_ERR_NOT_FINITE;
    if (weights == NULL && output == NULL) return ATTN_OK;

    for (int b = 0; b < batch; b++) {
        const attn__f32_job job = {
            .weights = weights != NULL ? weights + (size_t)b * nq_nk : NULL,
            .output = output != NULL ? output + (size_t)b * nq_dv : NULL,
            .q = q + (size_t)b * nq_dk,
            .k = k + (size_t)b * nk_dk,
            .v = v + (size_t)b * nk_dv,
            .n_q = n_q,
            .n_k = n_k,
            .d_k = d_k,
            .d_v = d_v,
            .scale = scale,
            .mask = plan.mask,
            .mask_b = b,
            .dropout = plan.dropout,
            .seed = plan.seed,
            .dropout_b = b,
            .work = work,
        };
        status = run(&job);
        if (status != ATTN_OK) return status;
    }
    return ATTN_OK;
}

int attn_sdpa_f32(float *weights, float *output, const float *q, const float *k,
                  const float *v, int batch, int n_q, int n_k, int d_k, int d_v,
                  const attn_options *opts, float *work)
{
    return attn__sdpa_f32_using(ATTN__F32_BEST, weights, output, q, k, v, batch,
                                n_q, n_k, d_k, d_v, opts, work);
}
