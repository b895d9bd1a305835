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
//   attn.memoryStats() -> { allocatedBytes, memoryBytes }
//   attn.kernelName() -> the float32 kernel sdpaFlat runs ('wasm-relaxed-simd',
//                  'wasm-simd128' or 'scalar': the build engineFile picked)
//
// Bad input of any kind (a wrong type, a BigInt or Symbol, an array too
// long, a getter that throws) throws an AttentionError (exported; extends
// Error) whose message names the field (the same words as build/attn) and
// whose `status` is the attn_status code. The engine stays usable after an
// error, with its memory as it was. Runs in Node >= 18 and in browsers
// without a bundler.
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

import { engineFile, wasmSupport } from './engine-file.js';
import { AttentionError, inputError } from './api/errors.js';
import { Core, instantiate } from './api/core.js';
import { checkMaxBytes, describe, describeValue, isList, onlyKnown, readInput } from './api/describe-input.js';
import { ATTN_ERR_STATE } from './api/engine-constants.js';
import * as problems from './api/problems.js';
import * as flat from './api/flat.js';
import { createTrainer } from './api/trainer.js';

export { AttentionError };
export { DEFAULT_MAX_BYTES, MAX_BLOCK_BYTES } from './api/engine-constants.js';

// Which build runs here: web/lib/engine-file.js.
export { engineFile, wasmSupport };

/** What a page says where WebAssembly is off, in place of its figures. */
export const WASM_OFF_MESSAGE = 'This browser has WebAssembly turned off (Safari\u2019s Lockdown Mode and some '
  + 'school-managed browsers do that). Every number here is computed with it, so the figures, the walkthrough '
  + 'and the controls cannot run; the explanations and formulas still read. With WebAssembly on, or in '
  + 'another browser, everything works.';

/**
 * Loads the engine. options.wasmBinary (an ArrayBuffer or a typed array of
 * the module's bytes) is used as is; otherwise the module is fetched from
 * options.wasmUrl, resolved as fetch would (against the document in a
 * browser), by default the build of attention.wasm next to this file that
 * runs here (attention-scalar.wasm without WebAssembly SIMD).
 */
const LOAD_OPTIONS = new Set(['maxBytes', 'wasmBinary', 'wasmUrl']);

export async function loadAttention(options = {}) {
  if (options === null || typeof options !== 'object' || isList(options)) {
    throw inputError(`loadAttention: expected an object of options, got ${describe(options)}`);
  }
  const { maxBytes: limit, wasmBinary, wasmUrl } = onlyKnown('loadAttention',
    readInput('loadAttention: options', () => ({ ...options })), LOAD_OPTIONS);
  const maxBytes = checkMaxBytes('loadAttention', limit);
  if (wasmSupport() === 'none') throw new AttentionError(WASM_OFF_MESSAGE, ATTN_ERR_STATE);
  const exports = await instantiate(await wasmBytes(wasmBinary, wasmUrl));
  return createApi(new Core(exports, maxBytes));
}

async function wasmBytes(wasmBinary, wasmUrl) {
  if (wasmBinary !== undefined) {
    if (wasmBinary instanceof ArrayBuffer) return checkModule(new Uint8Array(wasmBinary), 'wasmBinary');
    if (ArrayBuffer.isView(wasmBinary)) {
      return checkModule(new Uint8Array(wasmBinary.buffer, wasmBinary.byteOffset, wasmBinary.byteLength), 'wasmBinary');
    }
    throw inputError('loadAttention: wasmBinary must be an ArrayBuffer or a typed array');
  }
  if (wasmUrl !== undefined && typeof wasmUrl !== 'string' && !(wasmUrl instanceof URL)) {
    throw inputError(`loadAttention: wasmUrl must be a string or a URL, got ${describe(wasmUrl)}`);
  }
  let url;
  try {
    const base = wasmUrl === undefined ? import.meta.url : globalThis.document?.baseURI ?? import.meta.url;
    url = new URL(wasmUrl ?? `./${engineFile('attention')}`, base);
  } catch {
    throw inputError(`loadAttention: wasmUrl ${describeValue(String(wasmUrl))} is not a URL`);
  }
  const inNode = typeof process === 'object' && Boolean(process.versions?.node);
  if (url.protocol === 'file:' && inNode) {
    // Node's fetch does not read file: URLs.
    const { readFile } = await import('node:fs/promises');
    let bytes;
    try {
      bytes = await readFile(url);
    } catch (error) {
      throw inputError(`loadAttention: cannot read ${url.pathname}: ${error.code ?? error.message}`);
    }
    return checkModule(new Uint8Array(bytes), url);
  }
  const response = await fetch(url);
  if (!response.ok) {
    throw new Error(`loadAttention: fetching ${url} failed with HTTP ${response.status}`);
  }
  return checkModule(new Uint8Array(await response.arrayBuffer()), url);
}

// Bytes that begin as a WebAssembly module does. A server that answers
// every path with its index page gives HTML here.
function checkModule(bytes, source) {
  if (bytes.length < 4 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    const start = new TextDecoder().decode(bytes.subarray(0, 16)).replace(/\s+/g, ' ');
    throw inputError(`loadAttention: ${source} is not the engine (a WebAssembly module starts with \\0asm; this starts with "${start}"); `
      + 'give loadAttention its wasmUrl, or the element its base attribute');
  }
  return bytes;
}

// The API of one engine: each call hands the engine's core to the module
// of its concern (web/lib/api/).
// fields with `kind` set, each field read only where problems.run reads
// it (a spread would run every getter here, and one that throws would be
// reported without its field's name).
function withKind(kind, fields) {
  if (fields === null || typeof fields !== 'object') return fields;
  const input = { kind };
  for (const name of readInput(`${kind}: input`, () => Object.keys(fields))) {
    if (name !== 'kind') Object.defineProperty(input, name, { get: () => fields[name], enumerable: true });
  }
  return input;
}

function createApi(core) {
  const mechanism = (kind) => (fields = {}) => problems.run(core, withKind(kind, fields));
  return Object.freeze({
    scaledDotProduct: mechanism('scaledDotProduct'),
    multiHead: mechanism('multiHead'),
    additive: mechanism('additive'),
    luong: mechanism('luong'),
    linear: mechanism('linear'),
    softmax: mechanism('softmax'),
    weightedSum: mechanism('weightedSum'),
    onlineSoftmax: mechanism('onlineSoftmax'),
    run: (input, options) => problems.run(core, input, options),
    format: (input, style, document) => problems.format(core, input, style, document),
    steps: (input) => problems.steps(core, input),
    walkthrough: (input, options) => problems.walkthrough(core, input, options),
    stepEquations: (input, step) => problems.stepEquations(core, input, step),
    check: (input, printed, options) => problems.check(core, input, printed, options),
    sdpaFlat: (input) => flat.sdpaFlat(core, input),
    linearFlat: (input) => flat.linearFlat(core, input),
    createTrainer: (options) => createTrainer(core, options),
    memoryStats: () => core.memoryStats(),
    kernelName: () => core.kernelName(),
  });
}

// import attention from 'attention-explainer': the same two names.
export default Object.freeze({ loadAttention, AttentionError });
