// The one module that touches the engine's WebAssembly memory: it
// instantiates the module, mallocs and frees, copies values in and out
// through heap views made again whenever the memory has grown, and turns a
// C status into an AttentionError with the C message. The modules beside
// it (problems.js, flat.js, trainer.js) call the engine's functions with
// the pointers it hands them, and read and write memory only through it.

import { AttentionError, inputError } from './errors.js';
import {
  ATTN_ERR_NOMEM, ATTN_ERR_RANGE, ATTN_ERR_TOO_LARGE, MAX_BLOCK_BYTES, OPTIONS_DROPOUT, OPTIONS_MASK_ALLOWED,
  OPTIONS_MASK_KEY_LENGTH, OPTIONS_MASK_KINDS, OPTIONS_MASK_STRIDE, OPTIONS_MASK_WINDOW, OPTIONS_SCALE_FACTOR,
  OPTIONS_SCALE_KIND, OPTIONS_SEED, MALLINFO_BYTES, MALLINFO_UORDBLKS,
} from './engine-constants.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `text` cannot reach the engine as it is, or '' when it can. */
function textFlaw(text) {
  if (text.includes('\0')) return 'a NUL character';
  const surrogate = UNPAIRED_SURROGATE.exec(text);
  if (!surrogate) return '';
  const code = surrogate[0].charCodeAt(0).toString(16).toUpperCase();
  return `an unpaired surrogate (U+${code} at index ${surrogate.index}), which is not text`;
}

/**
 * `text` as UTF-8 bytes, refused when it holds what the engine cannot take
 * as text (a NUL, which would end it early in C; an unpaired
 * surrogate, which UTF-8 cannot carry: the encoder would put U+FFFD in its
 * place), naming `what` the text is.
 */
export function encodeText(text, what) {
  checkText(text, what);
  return encoder.encode(text);
}

function checkText(text, what) {
  const flaw = textFlaw(text);
  if (flaw) throw inputError(`${what}: must not contain ${flaw}`);
}

/** The exports of the module `bytes`, instantiated, its static constructors run. */
export async function instantiate(bytes) {
  const module = await WebAssembly.compile(bytes);
  const instance = await WebAssembly.instantiate(module, importsFor(module));
  // A standalone module (no main) runs its static constructors here.
  if (typeof instance.exports._initialize === 'function') instance.exports._initialize();
  return instance.exports;
}

// The library neither prints nor exits, so the few functions a standalone
// module may import only need to exist; calling an unexpected one is a bug
// worth an exception rather than silence.
function importsFor(module) {
  const imports = {};
  for (const { module: from, name, kind } of WebAssembly.Module.imports(module)) {
    if (kind !== 'function') {
      throw new Error(`attention.wasm imports a ${kind} ${from}.${name}, which loadAttention does not provide`);
    }
    imports[from] ??= {};
    imports[from][name] = name === 'emscripten_notify_memory_growth'
      ? () => {} // the heap views are checked for growth at every access
      : () => { throw new Error(`attention.wasm called the import ${from}.${name}, which loadAttention does not provide`); };
  }
  return imports;
}

const outOfMemory = () => new AttentionError('attention: out of WebAssembly memory', ATTN_ERR_NOMEM);

/** One instantiated engine: its functions, its memory and its byte limit. */
export class Core {
  #wasm;
  #views = null;
  // The length of the last text of each format, plus one: the next
  // format call's first guess.
  #lastLength = {};
  // The float32 calls' one block, reused (scratchBlock).
  #scratch = { pointer: 0, bytes: 0 };

  constructor(exports, maxBytes) {
    this.#wasm = exports;
    /** The limit in bytes of a problem, a *Flat call or a trainer (loadAttention's maxBytes). */
    this.maxBytes = maxBytes;
    /** The engine's C functions (attention.h), without its memory, malloc and free. */
    this.engine = Object.freeze(Object.fromEntries(Object.entries(exports).filter(
      ([name, value]) => typeof value === 'function' && name !== 'malloc' && name !== 'free')));
    Object.freeze(this);
  }

  // Views of WASM memory, made again once it has grown: growing detaches
  // the old buffer (its byteLength becomes 0), which is cheaper to ask than
  // wasm.memory.buffer, a call into the engine.
  #heap() {
    if (this.#views === null || this.#views.buffer.byteLength === 0) {
      const buffer = this.#wasm.memory.buffer;
      this.#views = { buffer, u8: new Uint8Array(buffer), i32: new Int32Array(buffer), u32: new Uint32Array(buffer),
                      f32: new Float32Array(buffer), f64: new Float64Array(buffer) };
    }
    return this.#views;
  }

  /** Runs body(memory), a scope whose blocks (Allocations) are all freed when it returns or throws. */
  withMemory(body) {
    const memory = new Allocations(this, this.#wasm);
    try {
      return body(memory);
    } finally {
      memory.releaseAll();
    }
  }

  /**
   * A block of at least `bytes`, 16-byte aligned, kept from call to call
   * and grown when a call needs more (its contents are not kept): the
   * float32 calls' memory, cheap for small calls made often.
   */
  scratchBlock(bytes) {
    const scratch = this.#scratch;
    if (bytes > scratch.bytes) {
      if (scratch.pointer !== 0) this.#wasm.free(scratch.pointer);
      scratch.pointer = 0;
      scratch.bytes = 0;
      const size = Math.max(bytes + 16, 4096);
      const pointer = this.#wasm.malloc(size);
      if (pointer === 0) throw outOfMemory();
      scratch.pointer = pointer;
      scratch.bytes = size - 16;
    }
    return (scratch.pointer + 15) & ~15;
  }

  // ---- Copying in ----

  writeBytes(pointer, values) { this.#heap().u8.set(values, pointer); }
  writeInts(pointer, values) { this.#heap().i32.set(values, pointer >>> 2); }
  writePointers(pointer, values) { this.#heap().u32.set(values, pointer >>> 2); }
  writeFloats(pointer, values) { this.#heap().f32.set(values, pointer >>> 2); }
  writeDoubles(pointer, values) { this.#heap().f64.set(values, pointer >>> 3); }

  /**
   * An attn_options at `pointer`, every field (the layout is in
   * engine-constants.js): the scale, the mask (keyLength and allowed are
   * pointers, 0 for none), no dropout, seed 0.
   */
  writeOptions(pointer, { scaleKind, scaleFactor, maskKinds, keyLength, allowed, window, stride }) {
    const { i32, u32, f64 } = this.#heap();
    i32[(pointer + OPTIONS_SCALE_KIND) >>> 2] = scaleKind;
    f64[(pointer + OPTIONS_SCALE_FACTOR) >>> 3] = scaleFactor;
    u32[(pointer + OPTIONS_MASK_KINDS) >>> 2] = maskKinds;
    u32[(pointer + OPTIONS_MASK_KEY_LENGTH) >>> 2] = keyLength;
    u32[(pointer + OPTIONS_MASK_ALLOWED) >>> 2] = allowed;
    i32[(pointer + OPTIONS_MASK_WINDOW) >>> 2] = window;
    i32[(pointer + OPTIONS_MASK_STRIDE) >>> 2] = stride;
    f64[(pointer + OPTIONS_DROPOUT) >>> 3] = 0;
    u32[(pointer + OPTIONS_SEED) >>> 2] = 0; // the low and high words of a u64
    u32[(pointer + OPTIONS_SEED + 4) >>> 2] = 0;
  }

  // ---- Copying out ----

  readU32(pointer) { return this.#heap().u32[pointer >>> 2]; }
  readDouble(pointer) { return this.#heap().f64[pointer >>> 3]; }
  readInts(pointer, count) {
    const start = pointer >>> 2;
    return Array.from(this.#heap().i32.subarray(start, start + count));
  }

  // The `length` numbers at `pointer`: written into `into` and returned
  // when the caller gave an array for them, else in a new one (made and
  // set() rather than slice(), whose lookup of the species constructor was
  // a tenth of a call at T = 4).
  copyFloats(pointer, length, into = new Float32Array(length)) {
    const start = pointer >>> 2;
    into.set(this.#heap().f32.subarray(start, start + length));
    return into;
  }

  copyDoubles(pointer, length, into = new Float64Array(length)) {
    const start = pointer >>> 3;
    into.set(this.#heap().f64.subarray(start, start + length));
    return into;
  }

  /**
   * The problem's result `name` (attn_problem_result) as nested arrays of
   * numbers, one level per dimension (a number for rank 0); fail(status)
   * makes the error of a failed call.
   */
  result(problem, name, memory, fail) {
    const [rankSlot, dimsSlot, dataSlot] = [memory.bytes(4), memory.bytes(12), memory.bytes(4)];
    const status = this.engine.attn_problem_result(problem, memory.string(name, 'result'), rankSlot, dimsSlot, dataSlot);
    if (status !== 0) throw fail(status);
    const dims = this.readInts(dimsSlot, this.readU32(rankSlot));
    const { f64 } = this.#heap();
    let at = this.readU32(dataSlot) >>> 3;
    const nest = (d) => (d === dims.length ? f64[at++] : Array.from({ length: dims[d] }, () => nest(d + 1)));
    return nest(0);
  }

  /** The NUL-terminated UTF-8 text at `pointer`. */
  readCString(pointer) {
    const bytes = this.#heap().u8.subarray(pointer);
    const end = bytes.indexOf(0);
    return decoder.decode(end < 0 ? bytes : bytes.subarray(0, end));
  }

  /**
   * The text a C formatter (attn_problem_format, attn_check_format) writes
   * for `format`: one pass into a buffer as large as this format's last
   * text (a step list can be MBs), a second only if the text is longer.
   * fail(status) makes the error of a failed call; `kind` keeps the guess
   * of each formatter apart.
   */
  formatted(formatter, object, format, memory, fail, kind = '') {
    const lengthSlot = memory.bytes(4); // size_t is 32 bits in wasm32
    const guess = `${kind}${format}`;
    let capacity = this.#lastLength[guess] ?? 0;
    let buffer = capacity > 0 ? memory.bytes(capacity) : 0;
    let status = formatter(object, format, buffer, capacity, lengthSlot);
    let length = this.readU32(lengthSlot);
    if (status === 0 && length >= capacity) {
      capacity = length + 1;
      buffer = memory.bytes(capacity);
      status = formatter(object, format, buffer, capacity, lengthSlot);
      length = this.readU32(lengthSlot);
    }
    if (status !== 0) throw fail(status);
    this.#lastLength[guess] = Math.max(length + 1, 4096);
    return decoder.decode(this.#heap().u8.subarray(buffer, buffer + length));
  }

  /** The float32 kernel sdpaFlat runs in this build (attn_f32_kernel_name). */
  kernelName() {
    return this.readCString(this.#wasm.attn_f32_kernel_name());
  }

  // ---- Errors ----

  /** The C text of an attn_status code. */
  statusText(status) {
    return this.readCString(this.#wasm.attn_status_text(status));
  }

  /** The AttentionError of `status` with `message`, by default the status's C text. */
  engineError(status, message) {
    return new AttentionError(message || this.statusText(status), status);
  }

  /** The error of the C function `name` that returned `status`: its name, then the status's text. */
  callError(name, status) {
    return this.engineError(status, `${name}: ${this.statusText(status)}`);
  }

  /**
   * Bytes malloc'd now and the size of the WebAssembly memory, for checking
   * that repeated calls leak nothing.
   */
  memoryStats() {
    return this.withMemory((memory) => {
      const info = memory.bytes(MALLINFO_BYTES);
      this.#wasm.mallinfo(info);
      const allocatedBytes = this.#heap().i32[(info + MALLINFO_UORDBLKS) >>> 2];
      return { allocatedBytes, memoryBytes: this.#wasm.memory.buffer.byteLength };
    });
  }
}

// Every block malloc'd during one API call (Core.withMemory), freed
// together at its end. Each method but bytes copies values into a new
// block and returns its pointer.
class Allocations {
  #core;
  #wasm;
  #blocks = [];

  constructor(core, wasm) {
    this.#core = core;
    this.#wasm = wasm;
  }

  bytes(count) {
    // malloc takes a 32-bit size: a larger count would wrap around to a
    // small block that the caller then writes past.
    if (!Number.isSafeInteger(count) || count < 0 || count > MAX_BLOCK_BYTES) {
      throw new AttentionError(`attention: a block of ${count} bytes is more than WebAssembly can allocate (${MAX_BLOCK_BYTES})`,
                               ATTN_ERR_TOO_LARGE);
    }
    const pointer = this.#wasm.malloc(Math.max(count, 1));
    if (pointer === 0) throw outOfMemory();
    this.#blocks.push(pointer);
    return pointer;
  }

  /**
   * `text` as NUL-terminated UTF-8. Every string the engine is given comes
   * through here or encodeText, which refuses what C or UTF-8 cannot carry.
   */
  string(text, what) {
    checkText(text, what);
    return this.u8(encoder.encode(`${text}\0`));
  }

  doubles(values) {
    const pointer = this.bytes(8 * values.length);
    this.#core.writeDoubles(pointer, values);
    return pointer;
  }

  /** 32-bit ints, each checked first: Int32Array would wrap 2^32 + 1 to 1. */
  ints(values, what) {
    const i = Array.prototype.findIndex.call(values, (value) => !(Number.isInteger(value) && value >= -(2 ** 31)
                                                                    && value < 2 ** 31));
    if (i >= 0) {
      throw new AttentionError(`${what}[${i}]: expected a whole number that fits 32 bits, got ${values[i]}`, ATTN_ERR_RANGE);
    }
    const pointer = this.bytes(4 * values.length);
    this.#core.writeInts(pointer, values);
    return pointer;
  }

  pointers(values) {
    const pointer = this.bytes(4 * values.length);
    this.#core.writePointers(pointer, values);
    return pointer;
  }

  /** Bytes (a Uint8Array). */
  u8(values) {
    const pointer = this.bytes(values.length);
    this.#core.writeBytes(pointer, values);
    return pointer;
  }

  releaseAll() {
    for (const pointer of this.#blocks) this.#wasm.free(pointer);
    this.#blocks.length = 0;
  }
}
