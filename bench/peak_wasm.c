/* peak_wasm.c: the float32 peak of WebAssembly SIMD on this machine, for
 * bench/impl.mjs: 12 independent chains of f32x4 multiply-add, 8 flops per
 * chain and step: mul then add (WASM SIMD has no fused multiply-add), or
 * under -mrelaxed-simd one f32x4.relaxed_madd, as the relaxed kernel
 * (src/kernels/sdpa_f32.c). Built by bench/run.sh with emcc -msimd128, and
 * again with -mrelaxed-simd (then scripts/relaxed-simd.mjs). */
#include <wasm_simd128.h>

float peak(int iterations);

float peak(int iterations)
{
    const v128_t b = wasm_f32x4_splat(0.999f), c = wasm_f32x4_splat(0.001f);
    v128_t a0 = wasm_f32x4_splat(0.1f), a1 = wasm_f32x4_splat(0.2f);
    v128_t a2 = wasm_f32x4_splat(0.3f), a3 = wasm_f32x4_splat(0.4f);
    v128_t a4 = wasm_f32x4_splat(0.5f), a5 = wasm_f32x4_splat(0.6f);
    v128_t a6 = wasm_f32x4_splat(0.7f), a7 = wasm_f32x4_splat(0.8f);
    v128_t a8 = wasm_f32x4_splat(0.9f), a9 = wasm_f32x4_splat(1.0f);
    v128_t a10 = wasm_f32x4_splat(1.1f), a11 = wasm_f32x4_splat(1.2f);
#ifdef __wasm_relaxed_simd__
#define STEP(a) \
    a = (v128_t)__builtin_wasm_fma_f32x4((__f32x4)a, (__f32x4)b, (__f32x4)c)
#else
#define STEP(a) a = wasm_f32x4_add(wasm_f32x4_mul(a, b), c)
#endif
    for (int i = 0; i < iterations; i++) {
        STEP(a0);
        STEP(a1);
        STEP(a2);
        STEP(a3);
        STEP(a4);
        STEP(a5);
        STEP(a6);
        STEP(a7);
        STEP(a8);
        STEP(a9);
        STEP(a10);
        STEP(a11);
    }
    v128_t s = wasm_f32x4_add(
        wasm_f32x4_add(wasm_f32x4_add(a0, a1), wasm_f32x4_add(a2, a3)),
        wasm_f32x4_add(wasm_f32x4_add(a4, a5), wasm_f32x4_add(a6, a7)));
    s = wasm_f32x4_add(
        s, wasm_f32x4_add(wasm_f32x4_add(a8, a9), wasm_f32x4_add(a10, a11)));
    return wasm_f32x4_extract_lane(s, 0);
}
