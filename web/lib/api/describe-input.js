// Reading the caller's values and describing what is wrong with them: every
// check that needs no engine, each throwing an AttentionError whose message
// names the field. A problem's input is walked as the C JSON adapter
// (src/cli/problem_json.c) walks it: same order of checks, same messages;
// only NaN and infinities, which JSON cannot carry, are caught here alone.

import { AttentionError, inputError } from './errors.js';
import {
  ATTN_ERR_INPUT, ATTN_ERR_OPTION, ATTN_ERR_RANGE, ATTN_ERR_SIZE, ATTN_ERR_TOO_LARGE, DEFAULT_MAX_BYTES,
  MAX_BLOCK_BYTES, MAX_RANK,
} from './engine-constants.js';

export const MAX_INT32 = 2 ** 31 - 1;

// Runs read(), which reads the caller's values: an exception their own code
// throws (a getter) becomes an AttentionError naming `what`, with the
// exception as its cause. The engine's own errors pass through.
export function readInput(what, read) {
  try {
    return read();
  } catch (error) {
    if (error instanceof AttentionError) throw error;
    const thrown = error instanceof Error ? `${error.name}: ${error.message}` : describeValue(error);
    throw new AttentionError(`${what}: reading it threw ${thrown}`, ATTN_ERR_INPUT, { cause: error });
  }
}

// "a vector of 3", "3x4", "2x3x4": the C layer's words for a shape.
function describeShape(dims) {
  return dims.length === 1 ? `a vector of ${dims[0]}` : dims.join('x');
}

// A value as a message quotes it: numbers and strings as written (strings
// cut at 40 characters), other things as describe() names them.
export function describeValue(value) {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return describe(value);
}

export function isList(value) {
  return Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView));
}

export function describe(value) {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'boolean') return 'a boolean';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'string') return 'a string';
  // Not in JSON, so not in the C adapter's words.
  if (typeof value === 'bigint') return 'a bigint';
  if (typeof value === 'symbol') return 'a symbol';
  if (typeof value === 'function') return 'a function';
  if (isList(value)) return 'an array';
  return 'an object';
}

// A byte limit: undefined gives `byDefault`; otherwise a positive integer
// up to 2^32 - 1 (size_t in wasm32).
export function checkMaxBytes(caller, maxBytes, byDefault = DEFAULT_MAX_BYTES) {
  if (maxBytes === undefined) return byDefault;
  if (!Number.isInteger(maxBytes) || maxBytes < 1 || maxBytes > 2 ** 32 - 1) {
    throw new AttentionError(
      `${caller}: maxBytes must be an integer from 1 to 4294967295, got ${describeValue(maxBytes)}`,
      ATTN_ERR_RANGE);
  }
  return maxBytes;
}

// An argument that counts something (an index, a layer, a number of steps).
export function checkWhole(caller, name, value, min, max) {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new AttentionError(`${caller}: ${name} must be a whole number from ${min} to ${max}, `
      + `got ${typeof value === 'number' ? value : describe(value)}`, ATTN_ERR_RANGE);
  }
}

// ---- A problem's fields ----

// Whether every entry is a string, stopping at the first that is not (a
// sparse array of 2^32 - 1 entries stops at its first hole).
export function allStrings(values) {
  for (let i = 0; i < values.length; i++) {
    if (typeof values[i] !== 'string') return false;
  }
  return true;
}

// Labels name the rows or columns of a tensor, which holds 8 bytes an
// entry: a list longer than maxBytes / 8 labels none within the limit,
// and is refused before it is walked.
// A label names one row or column, so no list of labels is longer than the
// longest dimension of the tensors set before it, nor than any tensor
// within the byte limit could be: refused before any label is encoded.
export function checkLabelCount(field, count, { maxBytes, longest }) {
  const most = Math.floor(maxBytes / 8);
  if (count > most) {
    throw new AttentionError(`${field}: ${count} labels, more than any tensor within the limit of ${maxBytes} bytes has rows (${most})`,
                             ATTN_ERR_TOO_LARGE);
  }
  if (longest > 0 && count > longest) {
    throw inputError(`${field}: ${count} labels, more than the problem's tensors have rows or columns (at most ${longest})`);
  }
}

export function stringsOf(field, values) {
  return Array.from(values, (value, i) => {
    if (typeof value !== 'string') {
      throw inputError(`${field}[${i}]: expected a string, got ${describe(value)}`);
    }
    return value;
  });
}

// Nested arrays of numbers or booleans (true = 1) of rank 1 to 3 become
// { dims, data } with data row-major. The first entry at each level gives
// the dimensions; every other entry must match them. The bytes the tensor
// adds to the problem (budget: { held, maxBytes }) are checked from those
// lengths before a single entry is read: a 20,000 × 20,000 array was once
// walked for 16 s before its size error, and a length of 2^32 - 1 failed
// in JS's own allocation. leaf reads each entry (printed numbers may be
// -Infinity, inputs may not).
export function tensorOf(field, value, budget, leaf = leafValue) {
  const dims = [];
  for (let level = value; isList(level); level = level[0]) {
    if (dims.length === MAX_RANK) {
      throw inputError(`${field}: expected at most ${MAX_RANK} levels of nesting`);
    }
    if (level.length === 0) throw inputError(`${field}: must not be empty`);
    dims.push(level.length);
  }
  const count = dims.reduce((a, b) => a * b, 1);
  if (budget.held + 8 * count > budget.maxBytes) {
    throw new AttentionError(
      `${field}: ${describeShape(dims)} would make the problem hold ${budget.held + 8 * count} bytes, `
      + `more than its limit of ${budget.maxBytes} bytes; use smaller inputs or raise the limit `
      + '(maxBytes in the JS API, --max-bytes in build/attn)', ATTN_ERR_TOO_LARGE);
  }
  if (8 * count > MAX_BLOCK_BYTES) {
    throw new AttentionError(`${field}: ${describeShape(dims)} is ${8 * count} bytes, more than WebAssembly can allocate `
      + `in one block (${MAX_BLOCK_BYTES})`, ATTN_ERR_TOO_LARGE);
  }
  const data = new Float64Array(count);
  const reader = { data, next: 0, leaf };
  if (dims.length === 1) fillRow(reader, value, field);
  else if (dims.length === 2) fillMatrix(reader, value, field);
  else fillBatch(reader, value, field, dims);
  return { dims, data };
}

function fillRow(reader, row, path) {
  for (let j = 0; j < row.length; j++) {
    reader.data[reader.next++] = reader.leaf(row[j], `${path}[${j}]`);
  }
}

// Every row that is an array must be as long as row 0 (rows that are not
// arrays are reported when they are read).
function checkRowLengths(matrix, path) {
  if (!isList(matrix[0])) return;
  const length = matrix[0].length;
  for (let i = 0; i < matrix.length; i++) {
    if (isList(matrix[i]) && matrix[i].length !== length) {
      throw inputError(`${path}: rows must all have the same length (row 0 has ${length} entries, row ${i} has ${matrix[i].length})`);
    }
  }
}

function fillMatrix(reader, matrix, path) {
  checkRowLengths(matrix, path);
  for (let i = 0; i < matrix.length; i++) {
    const row = matrix[i];
    if (!isList(row)) throw inputError(`${path}[${i}]: expected an array, got ${describe(row)}`);
    fillRow(reader, row, `${path}[${i}]`);
  }
}

// Every batch item must be a matrix shaped like item 0.
function fillBatch(reader, batch, path, dims) {
  for (let b = 0; b < batch.length; b++) {
    const item = batch[b];
    const itemPath = `${path}[${b}]`;
    if (!isList(item)) throw inputError(`${itemPath}: expected an array, got ${describe(item)}`);
    const rows = item.length;
    const cols = isList(item[0]) ? item[0].length : dims[2];
    if (rows !== dims[1] || cols !== dims[2]) {
      checkRowLengths(item, itemPath); // a ragged item is reported as such
      throw inputError(`${path}: batch items must all have the same shape (item 0 is ${dims[1]}x${dims[2]}, item ${b} is ${rows}x${cols})`);
    }
    fillMatrix(reader, item, itemPath);
  }
}

export function leafValue(leaf, path) {
  if (typeof leaf === 'boolean') return leaf ? 1 : 0;
  if (typeof leaf !== 'number') {
    throw inputError(`${path}: expected a number, got ${describe(leaf)}`);
  }
  if (!Number.isFinite(leaf)) {
    throw inputError(`${path}: expected a finite number, got ${leaf}`);
  }
  return leaf;
}

// A printed number: null or -Infinity is a masked −∞.
export function printedLeaf(leaf, path) {
  if (leaf === null || leaf === -Infinity) return -Infinity;
  if (typeof leaf !== 'number' || Number.isNaN(leaf)) {
    throw inputError(`${path}: expected a number, got ${describe(leaf)}`);
  }
  return leaf;
}

// ---- The *Flat calls' arguments ----

// Each *Flat call's fields: any other is refused, not ignored (a `mask:
// 'causal'` or a `dropout` left out of the arithmetic gave plausible,
// wrong numbers).
const SDPA_FLAT_FIELDS = new Set(['q', 'k', 'v', 'batch', 'nQ', 'nK', 'dK', 'dV', 'scale', 'causal', 'window', 'stride',
  'keyLength', 'allowed', 'weights', 'maxBytes', 'output']);
const LINEAR_FLAT_FIELDS = new Set(['q', 'k', 'v', 'batch', 'nQ', 'nK', 'dK', 'dV', 'causal', 'maxBytes', 'output']);

// A *Flat call's one argument, an object, copied (its getters run once,
// here, where what they throw becomes an AttentionError), with no field
// but `fields`.
function flatInput(caller, input, fields) {
  if (input === null || typeof input !== 'object' || isList(input)) {
    throw inputError(`${caller}: expected an object of inputs, got ${describe(input)}`);
  }
  return onlyKnown(caller, readInput(`${caller}: input`, () => ({ ...input })), fields, 'fields');
}

/**
 * object (a copy of what a call was given), refused with an AttentionError
 * if it has a name not in `known` (a Set): a misspelt option would be left
 * out without a word. noun: what they are, "options" or "fields".
 */
export function onlyKnown(caller, object, known, noun = 'options') {
  for (const name in object) {
    if (!known.has(name)) {
      throw inputError(`${caller}: ${JSON.stringify(name.slice(0, 40))} is not one of its ${noun} `
        + `(${[...known].join(', ')}); it would have been left out`);
    }
  }
  return object;
}

/**
 * sdpaFlat's input, checked: its fields with their defaults, the call's
 * byte limit (`limit`; the engine's `engineMaxBytes` unless it gives
 * maxBytes), the mask's key lengths and allowed entries as the C mask
 * wants them (`extra`, flatMaskParts) and `into`, its output array.
 */
export function readSdpaFlat(input, engineMaxBytes) {
  const { q, k, v, batch = 1, nQ, nK, dK, dV, scale, causal = false, window, stride, keyLength, allowed,
          weights = false, maxBytes, output: into } = flatInput('sdpaFlat', input, SDPA_FLAT_FIELDS);
  checkFlatShapes('sdpaFlat', { q, k, v, batch, nQ, nK, dK, dV });
  checkFlatInteger('window', window, 0);
  checkFlatInteger('stride', stride, 1);
  if (scale !== undefined && typeof scale !== 'boolean' && !(typeof scale === 'number' && Number.isFinite(scale))) {
    throw new AttentionError(`sdpaFlat: scale must be a finite number, true or false, got ${describeValue(scale)}`,
                             ATTN_ERR_OPTION);
  }
  checkFlag('sdpaFlat', 'causal', causal);
  checkFlag('sdpaFlat', 'weights', weights);
  const limit = checkMaxBytes('sdpaFlat', maxBytes, engineMaxBytes);
  const extra = flatMaskParts(keyLength, allowed, batch, nQ, nK);
  return { q, k, v, batch, nQ, nK, dK, dV, scale, causal, window, stride, extra, weights, limit, into };
}

/** linearFlat's input, checked, as readSdpaFlat's. */
export function readLinearFlat(input, engineMaxBytes) {
  const { q, k, v, batch = 1, nQ, nK, dK, dV, causal = false, maxBytes, output: into } = flatInput('linearFlat', input, LINEAR_FLAT_FIELDS);
  checkFlatShapes('linearFlat', { q, k, v, batch, nQ, nK, dK, dV });
  checkFlag('linearFlat', 'causal', causal);
  const limit = checkMaxBytes('linearFlat', maxBytes, engineMaxBytes);
  return { q, k, v, batch, nQ, nK, dK, dV, causal, limit, into };
}

// Sizes and lengths of the typed arrays the *Flat functions take. (A
// call per size, not a loop over Object.entries: at T = 4 a whole call
// takes about 2 µs, and the arrays of entries made each time showed.)
function checkFlatShapes(caller, { q, k, v, batch, nQ, nK, dK, dV }) {
  checkFlatSize(caller, 'batch', batch);
  checkFlatSize(caller, 'nQ', nQ);
  checkFlatSize(caller, 'nK', nK);
  checkFlatSize(caller, 'dK', dK);
  checkFlatSize(caller, 'dV', dV);
  checkLength(caller, 'q', q, batch * nQ * dK, 'batch·nQ·dK');
  checkLength(caller, 'k', k, batch * nK * dK, 'batch·nK·dK');
  checkLength(caller, 'v', v, batch * nK * dV, 'batch·nK·dV');
  checkFlatValues(caller, 'q', q, 'a number');
  checkFlatValues(caller, 'k', k, 'a number');
  checkFlatValues(caller, 'v', v, 'a number');
}

function checkLength(caller, name, values, expected, formula) {
  if (!isList(values) || values.length !== expected) {
    const got = isList(values) ? `${values.length} numbers` : describe(values);
    throw new AttentionError(`${caller}: ${name} must hold ${formula} = ${expected} numbers, got ${got}`,
                             ATTN_ERR_INPUT);
  }
}

// The entries of a flat array, of a length already checked: typed arrays
// of numbers pass as they are; BigInt arrays, and plain arrays with an
// entry that is not a number (or, for allowed, a boolean), are refused
// naming it, where copying them into WebAssembly memory threw a TypeError
// (BigInts, Symbols) or made NaN of them (strings).
function checkFlatValues(caller, name, values, expected) {
  if (values instanceof Float32Array || values instanceof Float64Array) return;
  if (values instanceof BigInt64Array || values instanceof BigUint64Array) {
    throw inputError(`${caller}: ${name} must hold numbers, got a ${values.constructor.name}`);
  }
  if (ArrayBuffer.isView(values)) return;
  const booleans = expected !== 'a number';
  for (let i = 0; i < values.length; i++) {
    const type = typeof values[i];
    if (type !== 'number' && !(booleans && type === 'boolean')) {
      throw inputError(`${caller}: ${name}[${i}] must be ${expected}, got ${describe(values[i])}`);
    }
  }
}

function checkFlatSize(caller, name, size) {
  if (!Number.isInteger(size) || size < 1 || size > MAX_INT32) {
    throw new AttentionError(`${caller}: ${name} must be an integer from 1 to ${MAX_INT32}, got ${describeValue(size)}`,
                             ATTN_ERR_SIZE);
  }
}

export function checkFlag(caller, name, flag) {
  if (typeof flag !== 'boolean') {
    throw new AttentionError(`${caller}: ${name} must be true or false, got ${describeValue(flag)}`, ATTN_ERR_OPTION);
  }
}

// window (from 0) and stride (from 1): integers that fit the C int.
function checkFlatInteger(name, value, min) {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < min || value > MAX_INT32) {
    throw new AttentionError(`sdpaFlat: ${name} must be an integer from ${min} to ${MAX_INT32}, got ${describeValue(value)}`,
                             ATTN_ERR_RANGE);
  }
}

// sdpaFlat's keyLength (one number, or one per batch item) and allowed
// (flat [nQ, nK] of booleans or 0/1, true = may attend) as the C mask wants
// them: { lengths: Int32Array | null, allowed: Uint8Array | null }.
const NO_MASK_PARTS = Object.freeze({ lengths: null, allowed: null });

function flatMaskParts(keyLength, allowed, batch, nQ, nK) {
  if (keyLength === undefined && allowed === undefined) return NO_MASK_PARTS;
  let lengths = null;
  if (keyLength !== undefined) {
    // Each in 0..nK, as attn_mask_check takes them: Int32Array.from would
    // wrap 2^32 + 1 to 1.
    const one = typeof keyLength === 'number';
    if (!one && (!isList(keyLength) || keyLength.length !== batch)) {
      throw new AttentionError(`sdpaFlat: keyLength must be an integer or ${batch} integers (one per batch item)`, ATTN_ERR_INPUT);
    }
    lengths = new Int32Array(batch);
    for (let b = 0; b < batch; b++) {
      const length = one ? keyLength : keyLength[b];
      if (!Number.isInteger(length) || length < 0 || length > nK) {
        throw new AttentionError(`sdpaFlat: keyLength${one ? '' : `[${b}]`} must be an integer from 0 to nK = ${nK}, `
          + `got ${describeValue(length)}`, ATTN_ERR_RANGE);
      }
      lengths[b] = length;
    }
  }
  let bytes = null;
  if (allowed !== undefined) {
    checkLength('sdpaFlat', 'allowed', allowed, nQ * nK, 'nQ·nK');
    checkFlatValues('sdpaFlat', 'allowed', allowed, 'true, false or a number');
    bytes = Uint8Array.from(allowed, (x) => (x ? 1 : 0));
  }
  return { lengths, allowed: bytes };
}

/**
 * Whether a *Flat call computes in float32: true for three Float32Arrays,
 * false for none (float64); a mix is an error. `into`, the array the call
 * may be given to write its output into (a call that allocates none, for
 * small sizes called often), must be of the inputs' type and hold the
 * output's `length` numbers.
 */
export function flatFloat32(caller, q, k, v, into, length) {
  const count = (q instanceof Float32Array) + (k instanceof Float32Array) + (v instanceof Float32Array);
  if (count !== 0 && count !== 3) {
    throw new AttentionError(`${caller}: q, k and v must be all Float32Arrays (float32) or none (float64)`, ATTN_ERR_INPUT);
  }
  const float32 = count === 3;
  if (into === undefined) return float32;
  const type = float32 ? Float32Array : Float64Array;
  if (!(into instanceof type) || into.length !== length) {
    const got = ArrayBuffer.isView(into) ? `a ${into.constructor.name} of ${into.length}` : describeValue(into);
    throw new AttentionError(`${caller}: output must be a ${type.name} of batch·nQ·dV = ${length} numbers `
      + `(${float32 ? 'Float32Array' : 'float64'} inputs), got ${got}`, ATTN_ERR_INPUT);
  }
  return float32;
}
