// sdpaFlat and linearFlat: the kernels called straight on flat typed
// arrays, for timing and for long sequences, with no problem around them.
// Float64Array (or plain) inputs run attn_sdpa / attn_linear in blocks
// allocated for the call; Float32Array inputs run attn_sdpa_f32 /
// attn_linear_f32 and give Float32Array results. To keep small float32
// calls cheap (T = 4 in about a microsecond) every such call reuses one
// block of WASM memory (the core's scratchBlock), grown when a call needs
// more. Each call's memory is checked against its limit before any is
// allocated.

import { AttentionError } from './errors.js';
import { flatFloat32, readLinearFlat, readSdpaFlat } from './describe-input.js';
import {
  ATTN_ERR_TOO_LARGE, ATTN_MASK_CAUSAL, ATTN_MASK_CUSTOM, ATTN_MASK_KEY_PADDING, ATTN_MASK_LOCAL, ATTN_MASK_STRIDED,
  ATTN_SCALE_FACTOR, ATTN_SCALE_INV_SQRT_DK, ATTN_SCALE_NONE, MAX_BLOCK_BYTES, OPTIONS_BYTES,
} from './engine-constants.js';

/**
 * Scaled dot-product attention straight over attn_sdpa, for timing:
 * q [batch, nQ, dK], k [batch, nK, dK], v [batch, nK, dV] flat (a
 * Float64Array or any array of numbers). Options: scale (number, or false
 * for none; default 1/sqrt(dK)), causal (boolean), window, stride,
 * keyLength (a number or one per batch item), allowed (flat [nQ, nK],
 * true = may attend), weights (true to also return the weights). Returns
 * { output: Float64Array, weights? }. Given three Float32Arrays it runs
 * attn_sdpa_f32 instead and returns Float32Arrays (linearFlat likewise).
 */
export function sdpaFlat(core, input) {
  const args = readSdpaFlat(input, core.maxBytes);
  const { q, k, v, batch, nQ, nK, dK, dV, extra, weights, limit, into } = args;
  if (flatFloat32('sdpaFlat', q, k, v, into, batch * nQ * dV)) return sdpaFlat32(core, args);
  // 8 bytes a double, plus the options, the mask's key lengths (4 bytes
  // each) and its allowed bytes.
  const doubles = q.length + k.length + v.length + batch * nQ * dV + (weights ? batch * nQ * nK : 0) + nK;
  checkCallBytes('sdpaFlat', 8 * doubles + OPTIONS_BYTES + (extra.lengths ? 4 * batch : 0) + (extra.allowed ? nQ * nK : 0),
                 limit);
  return core.withMemory((memory) => {
    const options = memory.bytes(OPTIONS_BYTES);
    const lengthsPointer = extra.lengths ? memory.ints(extra.lengths, 'keyLength') : 0;
    const allowedPointer = extra.allowed ? memory.u8(extra.allowed) : 0;
    core.writeOptions(options, optionFields(args, lengthsPointer, allowedPointer));
    const outputLength = batch * nQ * dV;
    const weightsLength = batch * nQ * nK;
    const outputPointer = memory.bytes(8 * outputLength);
    const weightsPointer = weights ? memory.bytes(8 * weightsLength) : 0;
    const work = memory.bytes(8 * core.engine.attn_sdpa_work_size(nK));
    const status = core.engine.attn_sdpa(0, 0, weightsPointer, outputPointer,
                                         memory.doubles(q), memory.doubles(k), memory.doubles(v),
                                         batch, nQ, nK, dK, dV, options, work);
    if (status !== 0) throw core.callError('attn_sdpa', status);
    const result = { output: core.copyDoubles(outputPointer, outputLength, into) };
    if (weights) result.weights = core.copyDoubles(weightsPointer, weightsLength);
    return result;
  });
}

export function linearFlat(core, input) {
  const args = readLinearFlat(input, core.maxBytes);
  const { q, k, v, batch, nQ, nK, dK, dV, causal, limit, into } = args;
  const workLength = core.engine.attn_linear_work_size(dK, dV) >>> 0; // 0 = overflow
  if (workLength === 0) {
    throw new AttentionError(`linearFlat: dK = ${dK} and dV = ${dV} need more work memory than size_t can count`, ATTN_ERR_TOO_LARGE);
  }
  if (flatFloat32('linearFlat', q, k, v, into, batch * nQ * dV)) return linearFlat32(core, args);
  checkCallBytes('linearFlat', 8 * (q.length + k.length + v.length + batch * nQ * dV + workLength), limit);
  return core.withMemory((memory) => {
    const outputLength = batch * nQ * dV;
    const outputPointer = memory.bytes(8 * outputLength);
    const work = memory.bytes(8 * workLength);
    const status = core.engine.attn_linear(outputPointer, memory.doubles(q), memory.doubles(k), memory.doubles(v),
                                           batch, nQ, nK, dK, dV, causal ? 1 : 0, work);
    if (status !== 0) throw core.callError('attn_linear', status);
    return { output: core.copyDoubles(outputPointer, outputLength, into) };
  });
}

// sdpaFlat's scale and mask as the fields of an attn_options
// (Core.writeOptions); keyLength and allowed are the pointers of the
// mask's arrays, 0 for none.
function optionFields({ scale, causal, window, stride }, keyLength, allowed) {
  let maskKinds = causal ? ATTN_MASK_CAUSAL : 0;
  if (window !== undefined) maskKinds |= ATTN_MASK_LOCAL;
  if (stride !== undefined) maskKinds |= ATTN_MASK_STRIDED;
  if (keyLength !== 0) maskKinds |= ATTN_MASK_KEY_PADDING;
  if (allowed !== 0) maskKinds |= ATTN_MASK_CUSTOM;
  let scaleKind = ATTN_SCALE_INV_SQRT_DK; // also for scale: true
  if (scale === false) scaleKind = ATTN_SCALE_NONE;
  else if (typeof scale === 'number') scaleKind = ATTN_SCALE_FACTOR;
  return { scaleKind, scaleFactor: typeof scale === 'number' ? scale : 1, maskKinds, keyLength, allowed,
           window: window ?? 0, stride: stride ?? 1 };
}

// `total` bytes of WebAssembly memory for one call, against its limit.
function checkCallBytes(caller, total, maxBytes) {
  if (total > maxBytes) {
    throw new AttentionError(`${caller}: the call needs ${total} bytes of WebAssembly memory, more than its limit of ${maxBytes} bytes; `
      + 'use smaller sizes or raise the limit (the maxBytes option)', ATTN_ERR_TOO_LARGE);
  }
}

// ---- The float32 path ----

// The offsets of consecutive parts of one scratch block, each 16-byte
// aligned, and the block's size, in plain Number arithmetic: a 32-bit
// `(b + 15) & ~15` wraps negative at 2^31 bytes, and a wrapped total once
// passed the limit and let a call write over the module's memory. The
// block is refused, before anything is allocated, past the call's limit
// or past what one WebAssembly block can be.
function blockLayout(caller, sizes, limit) {
  const offsets = [];
  let total = 0;
  for (const size of sizes) {
    offsets.push(total);
    total += Math.ceil(size / 16) * 16;
  }
  checkCallBytes(caller, total, limit);
  if (total > MAX_BLOCK_BYTES) {
    throw new AttentionError(`${caller}: the call needs ${total} bytes of WebAssembly memory in one block, more than `
      + `WebAssembly can allocate (${MAX_BLOCK_BYTES}); use smaller sizes`, ATTN_ERR_TOO_LARGE);
  }
  return { offsets, total };
}

// A float32 kernel's work length in floats; size_t comes back as a
// signed 32-bit number, and 0 means the C count overflowed.
function workFloats(caller, length) {
  const floats = length >>> 0;
  if (floats === 0) throw new AttentionError(`${caller}: sizes too large`, ATTN_ERR_TOO_LARGE);
  return floats;
}

function sdpaFlat32(core, args) {
  const { q, k, v, batch, nQ, nK, dK, dV, extra, weights, limit, into } = args;
  const outputLength = batch * nQ * dV;
  const weightsLength = weights ? batch * nQ * nK : 0;
  const workLength = workFloats('sdpaFlat', core.engine.attn_sdpa_f32_work_size(nK, dK, dV));
  // The scratch block: options, q, k, v, output, weights, work, key
  // lengths, allowed. The kernel's work array (K packed in tiles of keys,
  // a tile of scores, blocks of query rows) counts too: with few keys and
  // long rows it is many times the inputs.
  const { offsets, total } = blockLayout('sdpaFlat', [
    OPTIONS_BYTES, 4 * q.length, 4 * k.length, 4 * v.length, 4 * outputLength,
    4 * weightsLength, 4 * workLength, extra.lengths ? 4 * batch : 0,
    extra.allowed ? nQ * nK : 0], limit);
  const options = core.scratchBlock(total);
  const [qp, kp, vp, outputPointer, weightsPointer, work, lengthsPointer, allowedPointer] =
    offsets.slice(1).map((offset) => options + offset);
  if (extra.lengths) core.writeInts(lengthsPointer, extra.lengths);
  if (extra.allowed) core.writeBytes(allowedPointer, extra.allowed);
  core.writeOptions(options, optionFields(args, extra.lengths ? lengthsPointer : 0,
                                          extra.allowed ? allowedPointer : 0));
  core.writeFloats(qp, q);
  core.writeFloats(kp, k);
  core.writeFloats(vp, v);
  const status = core.engine.attn_sdpa_f32(weights ? weightsPointer : 0, outputPointer, qp, kp, vp,
                                           batch, nQ, nK, dK, dV, options, work);
  if (status !== 0) throw core.callError('attn_sdpa_f32', status);
  const result = { output: core.copyFloats(outputPointer, outputLength, into) };
  if (weights) result.weights = core.copyFloats(weightsPointer, weightsLength);
  return result;
}

function linearFlat32(core, { q, k, v, batch, nQ, nK, dK, dV, causal, limit, into }) {
  const outputLength = batch * nQ * dV;
  const workLength = workFloats('linearFlat', core.engine.attn_linear_f32_work_size(dK, dV));
  const { offsets, total } = blockLayout('linearFlat', [
    4 * q.length, 4 * k.length, 4 * v.length, 4 * outputLength, 4 * workLength], limit);
  const block = core.scratchBlock(total);
  const [qp, kp, vp, outputPointer, work] = offsets.map((offset) => block + offset);
  core.writeFloats(qp, q);
  core.writeFloats(kp, k);
  core.writeFloats(vp, v);
  const status = core.engine.attn_linear_f32(outputPointer, qp, kp, vp, batch, nQ, nK, dK, dV,
                                             causal ? 1 : 0, work);
  if (status !== 0) throw core.callError('attn_linear_f32', status);
  return { output: core.copyFloats(outputPointer, outputLength, into) };
}
