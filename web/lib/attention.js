// The JS API of the attention engine (web/lib/attention.wasm): this file
// loads the engine and puts the API together from the modules of
// web/lib/api/, one per concern: core.js (the one module that touches the
// engine's WebAssembly memory, and turns C errors into AttentionErrors),
// problems.js, flat.js, trainer.js and describe-input.js (the checks of the
// caller's values), with the C facts they share in engine-constants.js.
// Inputs are plain objects of numbers, strings, booleans and nested arrays;
// they become an attn_problem (attention.h, "Problems"), the C engine
// checks, computes and formats the result, and the JSON it writes comes
// back as plain objects. No attention arithmetic happens here.
//
//   const attn = await loadAttention();  // { wasmBinary } or { wasmUrl } too
//   attn.scaledDotProduct({ q, k, v, mask, keyLength, window, stride, scale,
//                           dropout, seed, tokens })
//     -> { scores, scaled, weights, output }  (masked scaled are -Infinity)
//   attn.multiHead({ x, xkv, numHeads, wq, wk, wv, wo, bq, bk, bv, bo, mask })
//     -> { q, k, v, heads: [{ scores, scaled, weights, output }], concat, output }
//   attn.additive({ query, keys, ws, wh, v, b }) -> { energy, scores, weights, context }
//   attn.luong({ query, keys, method, w, v, b }) -> { scores, weights, context }
//   attn.linear({ q, k, v, causal })             -> { output }
//   attn.softmax({ x, scale, mask })             -> { scaled, max, exp, sum, weights }
//   attn.weightedSum({ weights, v })             -> { output }
//   attn.onlineSoftmax({ q, k, v, tile })        -> { scaled, tileMax, tileSum,
//                  tileAcc, output, weights, plainOutput } (the keys in tiles)
//   attn.run({ kind, ...fields })                -> any of the above
//   attn.run({ kind, ...fields }, { results: ['gradScaled'] }) -> { gradScaled }: the
//     named results only, read from memory (no JSON written or parsed)
//   attn.format({ kind, ...fields }, 'markdown' | 'latex' | 'text' | 'json' | 'steps',
//               { title?, headingLevel? }) -> string
//   attn.steps({ kind, ...fields })              -> the walkthrough as data: { title, intro, steps }
//   attn.walkthrough({ kind, ...fields })        -> { result, steps }: both from one run
//     ({ equations: false }: each step without its equations, which
//     attn.stepEquations({ kind, ...fields }, number) gives, one step's)
//   attn.check({ kind, ...fields }, printed, { decimals?, format? })
//     -> { checked, errata: [{ field, index, printed, exact, decimals, step, group }],
//          groups: [{ cause, root, roots?, carried?, intermediates?, explanation }],
//          unchecked }: the printed numbers (by result name, as in
//          tests/vectors) against the exact ones, each that differs explained
//          (format 'text' | 'markdown' | 'latex': the same report as a string)
//   attn.answer({ kind, ...fields }, { result, row, col, typed })
//     -> { right, cause, verdict, hint, rounded, exact, step, ... }: a learner's
//          typed value for one cell, graded by the check's rule (docs/check.md)
//   attn.sdpaFlat({ q, k, v, nQ, nK, dK, dV, ... }) -> { output } (typed arrays;
//                  Float32Array inputs compute in float32, others in float64;
//                  `output`, an array to write the result into, allocates none)
//   attn.linearFlat({ q, k, v, nQ, nK, dK, dV, causal }) -> { output }
//   attn.createTrainer({ task, seed?, layers?, ... }) -> a trainer (not in
//     attention-page.wasm, the page's module without the trainer): config,
//     step(n) -> { step, loss }, evaluate() -> { loss, accuracy },
//     example(i), predict(tokens) -> { predicted, attention[layer][head] },
//     attention(layer, head, i), head(layer, head, tokens) -> { q, k, v },
//     dispose() (frees it now; a trainer dropped without it is freed once
//     garbage-collected)
//   attn.model({ config, weights }) -> a Llama-architecture checkpoint (not
//     in attention-page.wasm): config.json (text or bytes) and
//     model.safetensors (bytes), or in Node a folder holding them; config
//     (LlamaConfig's names), run({ text } | { ids }) -> { ids,
//     attention[layer][head][query][key], logits[position][vocab] },
//     generate({ text | ids, tokens, temperature?, seed?, cache? }) -> { ids,
//     prompt }, head(layer, head, { text | ids }) -> { q, k, v },
//     walkthrough(layer, head, { text | ids, format? }) -> the steps (as
//     steps() gives them), labels({ text | ids }) -> each token's label
//     (attn_token_label: '\u2423' for a space), dispose()
//   attn.memoryStats() -> { allocatedBytes, memoryBytes }
//   attn.kernelName() -> the float32 kernel sdpaFlat runs ('wasm-relaxed-simd',
//                  'wasm-simd128' or 'scalar': the build engineFile picked)
//
// Bad input of any kind (a wrong type, a BigInt or Symbol, an array too
// long, a getter that throws) throws an AttentionError (exported; extends
// Error) whose message names the field (the same words as build/attn) and
// whose `status` is the attn_status code. The engine stays usable after an
// error, with its memory as it was. Runs in browsers, bundled or not (a
// bundler finds the engine's files by their literal new URL()s in
// engine-file.js), and in Node >= 18 through attention-node.js.
//
// Sizes: a problem may hold at most `maxBytes` bytes of inputs and results
// (default DEFAULT_MAX_BYTES, 256 MiB; loadAttention({ maxBytes }) changes
// it), and sdpaFlat / linearFlat may allocate at most `maxBytes` bytes of
// WebAssembly memory per call (the same default, or their own maxBytes
// option), and a trainer at most `maxBytes` in all. Above it a call throws
// with status ATTN_ERR_TOO_LARGE (12) before it allocates anything; an
// array's size is known from its lengths before its entries are read. No
// block can exceed MAX_BLOCK_BYTES (2 GiB - 1), the most a wasm32 module
// can address in one piece.

import { AttentionError } from './api/errors.js';
import { load } from './api/load.js';

export { AttentionError };
export { DEFAULT_MAX_BYTES, MAX_BLOCK_BYTES } from './api/engine-constants.js';
export { WASM_OFF_MESSAGE } from './api/load.js';

// Which build runs here: web/lib/engine-file.js.
export { engineFile, wasmSupport } from './engine-file.js';

/**
 * Loads the engine. options.wasmBinary (an ArrayBuffer or a typed array of
 * the module's bytes) is used as is; otherwise the module is fetched from
 * options.wasmUrl, resolved as fetch would (against the document in a
 * browser), by default the build of attention.wasm next to this file that
 * runs here (engine-file.js's engineUrl(): attention-scalar.wasm without
 * WebAssembly SIMD).
 * In Node, the package's entry is attention-node.js, whose loadAttention
 * reads file: URLs too.
 */
export function loadAttention(options = {}) {
  return load(options, null);
}

// import attention from 'attention-explainer': the same two names.
export default Object.freeze({ loadAttention, AttentionError });
