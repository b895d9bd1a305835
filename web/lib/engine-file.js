// Which build of the engine this JavaScript engine runs (build.sh makes
// three of each module): -relaxed.wasm where WebAssembly's relaxed SIMD
// validates (Chrome 114 on; Node 20 with --experimental-wasm-relaxed-simd),
// whose float32 kernel multiplies and adds in one fused instruction; the
// plain .wasm where SIMD does; -scalar.wasm where only WebAssembly without
// SIMD does (Safari before 16.4). Each build gives the same numbers, the
// float32 ones within the float32 tests' tolerance.
//
//   engineFile('attention-page')  // 'attention-page-relaxed.wasm' in Chrome
//   engineUrl()                   // the URL of web/lib/attention-relaxed.wasm there
//
// engineUrl and pageEngineUrl name each build as a new URL() of a literal
// relative path and import.meta.url, the one form Vite, webpack and Parcel
// follow to copy a file into an app and rewrite its address: a bundler
// copies all three builds, and the one that runs is chosen among them here.
// Bundled into web/dist/ (scripts/build-element.mjs), the same literals name
// the copies of attention*.wasm beside the bundle.

// A module of one function that makes a v128 (i32.const 0, i8x16.splat):
// it validates only where the engine's WebAssembly SIMD runs.
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0,
                                   10, 8, 1, 6, 0, 65, 0, 253, 15, 11]);
// The same function making three v128s and adding the product of two to the
// third with f32x4.relaxed_madd (0xfd 0x105): valid only with relaxed SIMD.
const RELAXED_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0,
                                      10, 19, 1, 17, 0, 65, 0, 253, 15, 65, 0, 253, 15, 65, 0, 253, 15,
                                      253, 133, 2, 11]);

/**
 * What this JavaScript engine can run: 'relaxed' (every build; the
 * -relaxed.wasm ones run here), 'simd' (the SIMD builds and the scalar
 * ones), 'scalar' (the -scalar.wasm builds only: WebAssembly without SIMD,
 * as in Safari before 16.4) or 'none' (WebAssembly is off, as in Safari's
 * Lockdown Mode).
 */
export function wasmSupport() {
  // Asked several times as the page starts, and each probe compiles: once.
  support ??= probe();
  return support;
}

let support;

function probe() {
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.validate !== 'function') return 'none';
  if (!WebAssembly.validate(SIMD_PROBE)) return 'scalar';
  return WebAssembly.validate(RELAXED_PROBE) ? 'relaxed' : 'simd';
}

const SUFFIX = { relaxed: '-relaxed', simd: '', scalar: '-scalar', none: '' };

/** The file of the engine build `name` ('attention', 'attention-page') that runs here. */
export function engineFile(name) {
  return `${name}${SUFFIX[wasmSupport()]}.wasm`;
}

/** The URL of the build of attention.wasm beside this file that runs here. */
export function engineUrl() {
  const support = wasmSupport();
  if (support === 'relaxed') return new URL('./attention-relaxed.wasm', import.meta.url);
  if (support === 'scalar') return new URL('./attention-scalar.wasm', import.meta.url);
  return new URL('./attention.wasm', import.meta.url);
}

/** The same for attention-page.wasm, the page's module without the trainer. */
export function pageEngineUrl() {
  const support = wasmSupport();
  if (support === 'relaxed') return new URL('./attention-page-relaxed.wasm', import.meta.url);
  if (support === 'scalar') return new URL('./attention-page-scalar.wasm', import.meta.url);
  return new URL('./attention-page.wasm', import.meta.url);
}
