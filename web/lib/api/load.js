// Loading the engine: its bytes (given, fetched, or in Node read from a
// file: URL by the reader attention-node.js passes), checked to be a
// WebAssembly module, instantiated, and the API put together around it.
// attention.js and attention-node.js export loadAttention from here; only
// the second can read files, so a browser bundle of the first pulls in no
// Node built-in.

import { engineUrl, wasmSupport } from '../engine-file.js';
import { AttentionError, inputError } from './errors.js';
import { Core, instantiate } from './core.js';
import { checkMaxBytes, describe, describeValue, isList, onlyKnown, readInput } from './describe-input.js';
import { ATTN_ERR_STATE } from './engine-constants.js';
import * as problems from './problems.js';
import * as flat from './flat.js';
import { createTrainer } from './trainer.js';
import { createModel } from './model.js';

/** What a page says where WebAssembly is off, in place of its figures. */
export const WASM_OFF_MESSAGE = 'This browser has WebAssembly turned off (Safari\u2019s Lockdown Mode and some '
  + 'school-managed browsers do that). Every number here is computed with it, so the figures, the walkthrough '
  + 'and the controls cannot run; the explanations and formulas still read. With WebAssembly on, or in '
  + 'another browser, everything works.';

const LOAD_OPTIONS = new Set(['maxBytes', 'wasmBinary', 'wasmUrl']);

/**
 * loadAttention(options) with `files` where there are files to read (Node:
 * attention-node.js), else null: { readFile(url) -> the bytes of a file:
 * URL (Node's fetch reads none), folder: { size(path), read(path) } for a
 * model's folder }.
 */
export async function load(options, files) {
  if (options === null || typeof options !== 'object' || isList(options)) {
    throw inputError(`loadAttention: expected an object of options, got ${describe(options)}`);
  }
  const { maxBytes: limit, wasmBinary, wasmUrl } = onlyKnown('loadAttention',
    readInput('loadAttention: options', () => ({ ...options })), LOAD_OPTIONS);
  const maxBytes = checkMaxBytes('loadAttention', limit);
  if (wasmSupport() === 'none') throw new AttentionError(WASM_OFF_MESSAGE, ATTN_ERR_STATE);
  const exports = await instantiate(await wasmBytes(wasmBinary, wasmUrl, files?.readFile));
  return createApi(new Core(exports, maxBytes), files?.folder);
}

async function wasmBytes(wasmBinary, wasmUrl, readFile) {
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
    // A given URL resolves as fetch would (against the document in a
    // browser; in Node against the folder of the engine's files).
    url = wasmUrl === undefined ? engineUrl() : new URL(wasmUrl, globalThis.document?.baseURI ?? engineUrl());
  } catch {
    throw inputError(`loadAttention: wasmUrl ${describeValue(String(wasmUrl))} is not a URL`);
  }
  if (url.protocol === 'file:' && readFile) {
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

function createApi(core, folder) {
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
    answer: (input, cell) => problems.answer(core, input, cell),
    sdpaFlat: (input) => flat.sdpaFlat(core, input),
    linearFlat: (input) => flat.linearFlat(core, input),
    createTrainer: (options) => createTrainer(core, options),
    model: (source) => createModel(core, source, folder),
    memoryStats: () => core.memoryStats(),
    kernelName: () => core.kernelName(),
  });
}
