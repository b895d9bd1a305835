// The JS API of the attention engine: the one place that touches the memory
// of web/lib/attention.wasm. Inputs are plain objects of numbers, strings,
// booleans and nested arrays; they become an attn_problem (attention.h,
// "Problems"), the C engine checks, computes and formats the result, and
// the JSON it writes comes back as plain objects. No attention arithmetic
// happens here.
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

const FORMATS = { json: 0, text: 1, markdown: 2, latex: 3, steps: 4 }; // attn_format
const FORMAT_STEP_OUTLINE = 5; // the steps without equations, for walkthrough(input, { equations: false })
const ATTN_ERR_SIZE = 2;
const ATTN_ERR_OPTION = 5;
const ATTN_ERR_RANGE = 6;
const ATTN_ERR_NOMEM = 9;
const ATTN_ERR_INPUT = 10;
const ATTN_ERR_STATE = 11;
const ATTN_ERR_TOO_LARGE = 12;

/** The default limit in bytes of one problem or one *Flat call. */
export const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
/** The largest block one call may ask the wasm32 malloc for. */
export const MAX_BLOCK_BYTES = 2 ** 31 - 1;
const MAX_INT32 = 2 ** 31 - 1;

/**
 * What every call on the engine throws: an Error with the attn_status code
 * (attention.h) in `status`, so `error instanceof AttentionError` holds.
 * One made from an exception the caller's own code threw while the call
 * read its input (a getter) has that exception as its `cause`.
 */
export class AttentionError extends Error {
  constructor(message, status, options) {
    super(message, options);
    this.name = 'AttentionError';
    this.status = status;
  }
}
// As the C JSON adapter lists them in its messages.
const KIND_NAMES = '"scaledDotProduct", "multiHead", "additive", "luong", ' +
                   '"linear", "softmax", "weightedSum"';

// wasm32 layout of attn_options (attention.h), for sdpaFlat only:
// scale_kind i32 @0, scale_factor f64 @8, mask.kinds u32 @16,
// mask.key_length ptr @20, mask.allowed ptr @24, mask.window i32 @28,
// mask.stride i32 @32, dropout f64 @40, seed u64 @48.
const OPTIONS_BYTES = 56;
const OPTIONS_SCALE_KIND = 0;
const OPTIONS_SCALE_FACTOR = 8;
const OPTIONS_MASK_KINDS = 16;
const OPTIONS_MASK_KEY_LENGTH = 20;
const OPTIONS_MASK_ALLOWED = 24;
const OPTIONS_MASK_WINDOW = 28;
const OPTIONS_MASK_STRIDE = 32;
const ATTN_SCALE_NONE = 1;
const ATTN_SCALE_FACTOR = 2;
const ATTN_MASK_CAUSAL = 1;
const ATTN_MASK_KEY_PADDING = 1 << 1;
const ATTN_MASK_CUSTOM = 1 << 2;
const ATTN_MASK_LOCAL = 1 << 3;
const ATTN_MASK_STRIDED = 1 << 4;

const MAX_RANK = 3;

// The trainer's tasks and settings (attention.h, "Training"); scale and
// causal may be booleans. ATTN_TRAINER_HELD_OUT held-out examples.
const TRAINER_TASKS = ['copy', 'reverse', 'sort', 'previousToken', 'induction', 'lookup'];
const TRAINER_SETTINGS = ['seed', 'layers', 'heads', 'dModel', 'dFF', 'seqLength', 'vocab', 'batchSize',
                          'learningRate', 'scale', 'causal', 'steps'];
const FLAG_SETTINGS = ['scale', 'causal'];
const ATTN_TRAINER_HELD_OUT = 256;

// A module of one function that makes a v128 (i32.const 0, i8x16.splat):
// it validates only where the engine's WebAssembly SIMD runs.
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0,
                                   10, 8, 1, 6, 0, 65, 0, 253, 15, 11]);

/**
 * What this JavaScript engine can run: 'simd' (every build), 'scalar' (the
 * -scalar.wasm builds only: WebAssembly without SIMD, as in Safari before
 * 16.4) or 'none' (WebAssembly is off, as in Safari's Lockdown Mode).
 */
export function wasmSupport() {
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.validate !== 'function') return 'none';
  return WebAssembly.validate(SIMD_PROBE) ? 'simd' : 'scalar';
}

/** The file of the engine build `name` ('attention', 'attention-page') that runs here. */
export function engineFile(name) {
  return `${name}${wasmSupport() === 'scalar' ? '-scalar' : ''}.wasm`;
}

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
export async function loadAttention(options = {}) {
  if (options === null || typeof options !== 'object' || isList(options)) {
    throw inputError(`loadAttention: expected an object of options, got ${describe(options)}`);
  }
  const { maxBytes: limit, wasmBinary, wasmUrl } = readInput('loadAttention: options', () => ({ ...options }));
  const maxBytes = checkMaxBytes('loadAttention', limit);
  if (wasmSupport() === 'none') throw new AttentionError(WASM_OFF_MESSAGE, ATTN_ERR_STATE);
  const bytes = await wasmBytes(wasmBinary, wasmUrl);
  const module = await WebAssembly.compile(bytes);
  const instance = await WebAssembly.instantiate(module, importsFor(module));
  // A standalone module (no main) runs its static constructors here.
  if (typeof instance.exports._initialize === 'function') instance.exports._initialize();
  return createApi(instance.exports, maxBytes);
}

// A byte limit: undefined gives the default; otherwise a positive integer
// up to 2^32 - 1 (size_t in wasm32).
function checkMaxBytes(caller, maxBytes) {
  if (maxBytes === undefined) return DEFAULT_MAX_BYTES;
  if (!Number.isInteger(maxBytes) || maxBytes < 1 || maxBytes > 2 ** 32 - 1) {
    throw new AttentionError(
      `${caller}: maxBytes must be an integer from 1 to 4294967295, got ${describeValue(maxBytes)}`,
      ATTN_ERR_RANGE);
  }
  return maxBytes;
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
    url = new URL(wasmUrl ?? `./${engineFile('attention')}`, wasmUrl === undefined ? import.meta.url
                                                                       : globalThis.document?.baseURI ?? import.meta.url);
  } catch {
    throw inputError(`loadAttention: wasmUrl ${describeValue(String(wasmUrl))} is not a URL`);
  }
  const inNode = typeof process === 'object' && Boolean(process.versions?.node);
  if (url.protocol === 'file:' && inNode) {
    // Node's fetch does not read file: URLs.
    const { readFile } = await import('node:fs/promises');
    return new Uint8Array(await readFile(url));
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
      ? () => {} // heap views are created fresh for every access
      : () => { throw new Error(`attention.wasm called the import ${from}.${name}, which loadAttention does not provide`); };
  }
  return imports;
}

function createApi(wasm, engineMaxBytes) {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();

  // The length of the last text of each format, plus one: the next
  // format call's first guess.
  const lastLength = {};

  // Every block malloc'd during one API call, freed together at its end.
  class Allocations {
    constructor() { this.blocks = []; }
    bytes(count) {
      // malloc takes a 32-bit size: a larger count would wrap around to a
      // small block that the caller then writes past.
      if (!Number.isSafeInteger(count) || count < 0 || count > MAX_BLOCK_BYTES) {
        throw new AttentionError(`attention: a block of ${count} bytes is more than WebAssembly can allocate (${MAX_BLOCK_BYTES})`,
                                 ATTN_ERR_TOO_LARGE);
      }
      const pointer = wasm.malloc(Math.max(count, 1));
      if (pointer === 0) throw new AttentionError('attention: out of WebAssembly memory', ATTN_ERR_NOMEM);
      this.blocks.push(pointer);
      return pointer;
    }
    string(text) {
      const utf8 = encoder.encode(text);
      const pointer = this.bytes(utf8.length + 1);
      const view = new Uint8Array(wasm.memory.buffer, pointer, utf8.length + 1);
      view.set(utf8);
      view[utf8.length] = 0;
      return pointer;
    }
    doubles(values) {
      const pointer = this.bytes(8 * values.length);
      new Float64Array(wasm.memory.buffer, pointer, values.length).set(values);
      return pointer;
    }
    ints(values) {
      const pointer = this.bytes(4 * values.length);
      new Int32Array(wasm.memory.buffer, pointer, values.length).set(values);
      return pointer;
    }
    pointers(values) {
      const pointer = this.bytes(4 * values.length);
      new Uint32Array(wasm.memory.buffer, pointer, values.length).set(values);
      return pointer;
    }
    releaseAll() {
      for (const pointer of this.blocks) wasm.free(pointer);
      this.blocks.length = 0;
    }
  }

  const readU32 = (pointer) => new Uint32Array(wasm.memory.buffer, pointer, 1)[0];

  function readCString(pointer) {
    const bytes = new Uint8Array(wasm.memory.buffer, pointer);
    const end = bytes.indexOf(0);
    return decoder.decode(bytes.subarray(0, end < 0 ? bytes.length : end));
  }

  function engineError(status, message) {
    const text = message || readCString(wasm.attn_status_text(status));
    return new AttentionError(text, status);
  }

  function problemError(problem, status) {
    return engineError(status, readCString(wasm.attn_problem_error(problem)));
  }

  // For an array that mixes strings with other things: 1 when the field
  // takes a list of strings (an empty list set as a probe; the problem is
  // discarded after the error anyway), 0 when it takes a tensor; an
  // unknown field is reported as such.
  function takesStrings(problem, name) {
    const status = wasm.attn_problem_set_strings(problem, name, 0, 0);
    if (status === 0) return true;
    if (readCString(wasm.attn_problem_error(problem)).includes(': unknown field for kind')) {
      throw problemError(problem, status);
    }
    return false;
  }

  // budget: { held, maxBytes }: bytes of tensor fields set so far.
  function setField(problem, field, value, allocations, budget) {
    if (field.includes('\0')) {
      throw inputError(`${JSON.stringify(field)}: a field name must not contain a NUL character`);
    }
    const name = allocations.string(field);
    let status;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) {
        throw inputError(`${field}: expected a finite number, got ${value}`);
      }
      status = wasm.attn_problem_set_number(problem, name, value);
    } else if (typeof value === 'boolean') {
      status = wasm.attn_problem_set_bool(problem, name, value ? 1 : 0);
    } else if (typeof value === 'string') {
      if (value.includes('\0')) throw inputError(`${field}: must not contain a NUL character`);
      status = wasm.attn_problem_set_string(problem, name, allocations.string(value));
    } else if (isList(value) && value.length > 0 && typeof value[0] === 'string'
               && (allStrings(value) || takesStrings(problem, name))) {
      // Strings, or a mix for a field of labels (the probe above: the field
      // takes a list of strings), reported at the first entry that is not
      // one. A mix for a tensor field is read as a tensor below, which
      // reports its first entry that is not a number.
      checkLabelCount(field, value.length, budget.maxBytes);
      const strings = stringsOf(field, value).map((text) => allocations.string(text));
      status = wasm.attn_problem_set_strings(problem, name, strings.length,
                                             allocations.pointers(strings));
    } else if (isList(value)) {
      const { dims, data } = tensorOf(field, value, budget);
      budget.held += 8 * data.length;
      status = wasm.attn_problem_set_tensor(problem, name, dims.length,
                                            allocations.ints(dims), allocations.doubles(data));
    } else {
      throw inputError(`${field}: expected a number, a boolean, a string or an array, got ${describe(value)}`);
    }
    if (status !== 0) throw problemError(problem, status);
  }

  // Builds a problem from `input`, runs it and returns what `use(problem,
  // allocations)` makes of it; `document` ({ title, headingLevel }) places
  // a walkthrough in a document.
  function withRunProblem(input, document, use) {
    if (input === null || typeof input !== 'object' || isList(input)) {
      throw inputError(`expected a problem object, got ${describe(input)}`);
    }
    const kind = readInput('kind', () => input.kind);
    if (kind === undefined) throw inputError(`kind: missing; expected one of ${KIND_NAMES}`);
    if (typeof kind !== 'string') {
      throw inputError(`kind: expected one of ${KIND_NAMES}, got ${describe(kind)}`);
    }
    if (kind.includes('\0')) {
      throw engineError(ATTN_ERR_OPTION, `kind: unknown kind ${JSON.stringify(kind)} (it holds a NUL character); expected one of ${KIND_NAMES}`);
    }
    const allocations = new Allocations();
    let problem = 0;
    try {
      const slot = allocations.bytes(4);
      const created = wasm.attn_problem_create(slot, allocations.string(kind), 0);
      problem = readU32(slot);
      if (created === 0) wasm.attn_problem_set_max_bytes(problem, engineMaxBytes);
      if (created === ATTN_ERR_OPTION) {
        throw engineError(created, `kind: unknown kind "${kind}"; expected one of ${KIND_NAMES}`);
      }
      if (created !== 0) {
        throw engineError(created, `kind: ${readCString(wasm.attn_status_text(created))}`);
      }
      const budget = { held: 0, maxBytes: engineMaxBytes };
      for (const field of Object.keys(input)) {
        if (field === 'kind') continue;
        // Reading a field (and its entries) can run the caller's getters.
        readInput(field, () => {
          const value = input[field];
          if (value !== undefined) setField(problem, field, value, allocations, budget);
        });
      }
      setDocument(problem, document, allocations);
      const ran = wasm.attn_problem_run(problem);
      if (ran !== 0) throw problemError(problem, ran);
      return use(problem, allocations);
    } finally {
      if (problem !== 0) wasm.attn_problem_destroy(problem);
      allocations.releaseAll();
    }
  }

  // The text a C formatter (attn_problem_format, attn_check_format) writes
  // for `format`: one pass into a buffer as large as this format's last
  // text (a step list can be MBs), a second only if the text is longer.
  // fail(status) makes the error of a failed call; `kind` keeps the guess
  // of each formatter apart.
  function formatted(formatter, object, format, allocations, fail, kind = '') {
    const lengthSlot = allocations.bytes(4); // size_t is 32 bits in wasm32
    const guess = `${kind}${format}`;
    let capacity = lastLength[guess] ?? 0;
    let buffer = capacity > 0 ? allocations.bytes(capacity) : 0;
    let status = formatter(object, format, buffer, capacity, lengthSlot);
    let length = readU32(lengthSlot);
    if (status === 0 && length >= capacity) {
      capacity = length + 1;
      buffer = allocations.bytes(capacity);
      status = formatter(object, format, buffer, capacity, lengthSlot);
      length = readU32(lengthSlot);
    }
    if (status !== 0) throw fail(status);
    lastLength[guess] = Math.max(length + 1, 4096);
    return decoder.decode(new Uint8Array(wasm.memory.buffer, buffer, length));
  }

  // The problem's result in each of `formats` (attn_format numbers).
  function runAndFormat(input, formats, document = {}) {
    return withRunProblem(input, document, (problem, allocations) => formats.map(
      (format) => formatted(wasm.attn_problem_format, problem, format, allocations,
                            (status) => problemError(problem, status))));
  }

  // JSON has no infinity: the engine writes a masked -Infinity as null, in
  // results' arrays and as a step node's value "v".
  // A reviver makes JSON.parse several times slower, so only text that has
  // a null goes through one.
  const parseResult = (text) => (text.includes('null') ? JSON.parse(text, function (key, value) {
    return value === null && Array.isArray(this) ? -Infinity : value;
  }) : JSON.parse(text));
  const parseSteps = (text) => (text.includes('null')
    ? JSON.parse(text, (key, value) => (key === 'v' && value === null ? -Infinity : value))
    : JSON.parse(text));

  // attn_problem_set_document: the walkthrough's title and heading level.
  function setDocument(problem, { title, headingLevel } = {}, allocations) {
    if (title === undefined && headingLevel === undefined) return;
    if (title !== undefined && (typeof title !== 'string' || title.includes('\0'))) {
      throw inputError(`title: expected text without control characters, got ${describe(title)}`);
    }
    // 1 to 4, as build/attn's --heading-level: C's 0 ("the default, 1") is
    // what leaving headingLevel out means here.
    if (headingLevel !== undefined && !(Number.isInteger(headingLevel) && headingLevel >= 1 && headingLevel <= 4)) {
      const got = typeof headingLevel === 'number' ? headingLevel : describe(headingLevel);
      throw engineError(ATTN_ERR_RANGE, `heading level: must be 1 to 4, got ${got}`);
    }
    const status = wasm.attn_problem_set_document(problem, title === undefined ? 0 : allocations.string(title),
                                                  headingLevel ?? 0);
    if (status !== 0) throw problemError(problem, status);
  }

  function run(input) {
    return parseResult(runAndFormat(input, [FORMATS.json])[0]);
  }

  function steps(input) {
    return parseSteps(runAndFormat(input, [FORMATS.steps])[0]);
  }

  function walkthrough(input, { equations = true } = {}) {
    checkFlag('walkthrough', 'equations', equations);
    const [result, list] = runAndFormat(input, [FORMATS.json, equations ? FORMATS.steps : FORMAT_STEP_OUTLINE]);
    return { result: parseResult(result), steps: parseSteps(list) };
  }

  function stepEquations(input, step) {
    if (!Number.isInteger(step)) throw new AttentionError(`step: expected a step number from 1, got ${describeValue(step)}`, ATTN_ERR_RANGE);
    return parseSteps(withRunProblem(input, {}, (problem, allocations) => formatted(
      wasm.attn_problem_format_equations, problem, step, allocations, (status) => problemError(problem, status), 'equations')));
  }

  // document: { title?, headingLevel? }; undefined or null for neither.
  function format(input, style = 'json', document) {
    if (!Object.hasOwn(FORMATS, style)) {
      const got = typeof style === 'string' ? JSON.stringify(style) : describe(style);
      throw new AttentionError(`format: expected "markdown", "latex", "text", "json" or "steps", got ${got}`,
                               ATTN_ERR_OPTION);
    }
    if (document !== undefined && document !== null && (typeof document !== 'object' || isList(document))) {
      throw inputError(`format: document must be an object { title, headingLevel }, got ${describe(document)}`);
    }
    const placed = readInput('format: document', () => ({ title: document?.title, headingLevel: document?.headingLevel }));
    return runAndFormat(input, [FORMATS[style]], placed)[0];
  }

  // attn_check_*: printed numbers by key ({ weights: [[...]], output_row2:
  // [...], heads: [{ scores }] }; null for a masked -Infinity; strings,
  // such as notes, skipped), with their decimals: options.decimals is a
  // number, or { key: a number or nested arrays shaped like the numbers };
  // otherwise each number's shortest form says.
  function check(input, printed, { decimals, format: style = 'json' } = {}) {
    if (!Object.hasOwn(FORMATS, style) || style === 'steps') {
      const got = typeof style === 'string' ? JSON.stringify(style) : describe(style);
      throw new AttentionError(`check: format must be "json", "text", "markdown" or "latex", got ${got}`,
                               ATTN_ERR_OPTION);
    }
    if (printed === null || typeof printed !== 'object' || isList(printed)) {
      throw inputError(`printed: expected an object of printed tables by result name, got ${describe(printed)}`);
    }
    if (decimals !== undefined && typeof decimals !== 'number'
        && (decimals === null || typeof decimals !== 'object' || isList(decimals))) {
      throw inputError(`printedDecimals: expected a number or an object by printed key, got ${describe(decimals)}`);
    }
    const tables = [];
    for (const [key, value] of Object.entries(printed)) {
      if (key === 'heads' && isList(value)) {
        Array.from(value).forEach((head, h) => {
          if (head === null || typeof head !== 'object' || isList(head)) {
            throw inputError(`printed.heads[${h}]: expected an object of that head's tables, got ${describe(head)}`);
          }
          for (const [name, table] of Object.entries(head)) tables.push([`heads.${h}.${name}`, name, table]);
        });
      } else {
        tables.push([key, key, value]);
      }
    }
    return withRunProblem(input, {}, (problem, allocations) => {
      const slot = allocations.bytes(4);
      const created = wasm.attn_check_create(slot, problem);
      if (created !== 0) throw engineError(created);
      const made = readU32(slot);
      const fail = (status) => engineError(status, readCString(wasm.attn_check_error(made)));
      try {
        for (const [key, plain, value] of tables) {
          if (typeof value === 'string' || value === undefined) continue; // a note
          const path = `printed.${key}`;
          const { dims, data } = isList(value) ? tensorOf(path, value, { held: 0, maxBytes: engineMaxBytes }, printedLeaf)
            : { dims: [], data: [printedLeaf(value, path)] };
          const places = decimalsOf(key, plain, decimals, data.length);
          const status = wasm.attn_check_set_printed(made, allocations.string(key), dims.length,
                                                     allocations.ints(dims), allocations.doubles(data),
                                                     places ? allocations.ints(places) : 0);
          if (status !== 0) throw fail(status);
        }
        const ran = wasm.attn_check_run(made, 0);
        if (ran !== 0) throw fail(ran);
        const text = formatted(wasm.attn_check_format, made, FORMATS[style], allocations, fail, 'check');
        return style === 'json' ? parseReport(text) : text;
      } finally {
        wasm.attn_check_destroy(made);
      }
    });
  }

  // The decimals options.decimals gives a printed key (a head's table also
  // under its plain name), one per number; null when none are given.
  function decimalsOf(key, plain, decimals, count) {
    const given = typeof decimals === 'number' ? decimals : decimals?.[key] ?? decimals?.[plain];
    if (given === undefined) return null;
    const path = `printedDecimals.${key}`;
    const values = isList(given) ? tensorOf(path, given, { held: 0, maxBytes: engineMaxBytes }).data : [leafValue(given, path)];
    if (values.length !== 1 && values.length !== count) {
      throw inputError(`${path}: expected one number or ${count} (one per printed number), got ${values.length}`);
    }
    return Array.from({ length: count }, (_, i) => {
      const d = values[values.length === 1 ? 0 : i];
      if (!Number.isInteger(d) || d < 0 || d > 17) {
        throw inputError(`${path}: expected a whole number of decimals from 0 to 17, got ${d}`);
      }
      return d;
    });
  }

  // A report's printed and exact values: null is a masked -Infinity.
  const parseReport = (text) => JSON.parse(text, (key, value) => (
    (key === 'printed' || key === 'exact') && value === null ? -Infinity : value));

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

  // A *Flat call's one argument, an object, copied (its getters run once,
  // here, where what they throw becomes an AttentionError).
  function flatInput(caller, input) {
    if (input === null || typeof input !== 'object' || isList(input)) {
      throw inputError(`${caller}: expected an object of inputs, got ${describe(input)}`);
    }
    return readInput(`${caller}: input`, () => ({ ...input }));
  }

  function checkFlatSize(caller, name, size) {
    if (!Number.isInteger(size) || size < 1 || size > MAX_INT32) {
      throw new AttentionError(`${caller}: ${name} must be an integer from 1 to ${MAX_INT32}, got ${describeValue(size)}`,
                               ATTN_ERR_SIZE);
    }
  }

  // `output`, the array a *Flat call may be given to write its output into
  // (a call that allocates none, for small sizes called often): of the
  // inputs' type and of the output's length.
  function checkInto(caller, into, float32, length) {
    if (into === undefined) return;
    const type = float32 ? Float32Array : Float64Array;
    if (!(into instanceof type) || into.length !== length) {
      const got = ArrayBuffer.isView(into) ? `a ${into.constructor.name} of ${into.length}` : describeValue(into);
      throw new AttentionError(`${caller}: output must be a ${type.name} of batch·nQ·dV = ${length} numbers `
        + `(${float32 ? 'Float32Array' : 'float64'} inputs), got ${got}`, ATTN_ERR_INPUT);
    }
  }

  function checkFlag(caller, name, flag) {
    if (typeof flag !== 'boolean') {
      throw new AttentionError(`${caller}: ${name} must be true or false, got ${describeValue(flag)}`, ATTN_ERR_OPTION);
    }
  }

  // The bytes a float64 *Flat call will allocate, checked against its limit
  // before anything is: `count` doubles plus a few bytes of options. (The
  // float32 calls check the one block they allocate, in sdpaFlat32 and
  // linearFlat32.)
  function checkFlatBytes(caller, count, extraBytes, maxBytes) {
    checkCallBytes(caller, 8 * count + extraBytes, maxBytes);
  }

  // `total` bytes of WebAssembly memory for one call, against its limit.
  function checkCallBytes(caller, total, maxBytes) {
    if (total > maxBytes) {
      throw new AttentionError(`${caller}: the call needs ${total} bytes of WebAssembly memory, more than its limit of ${maxBytes} bytes; `
        + 'use smaller sizes or raise the limit (the maxBytes option)', ATTN_ERR_TOO_LARGE);
    }
  }

  function linearFlat(input) {
    const { q, k, v, batch = 1, nQ, nK, dK, dV, causal = false, maxBytes, output: into } = flatInput('linearFlat', input);
    checkFlatShapes('linearFlat', { q, k, v, batch, nQ, nK, dK, dV });
    checkFlag('linearFlat', 'causal', causal);
    const limit = maxBytes === undefined ? engineMaxBytes : checkMaxBytes('linearFlat', maxBytes);
    const workLength = wasm.attn_linear_work_size(dK, dV) >>> 0; // 0 = overflow
    if (workLength === 0) {
      throw new AttentionError(`linearFlat: dK = ${dK} and dV = ${dV} need more work memory than size_t can count`, ATTN_ERR_TOO_LARGE);
    }
    const float32 = float32Inputs('linearFlat', q, k, v);
    checkInto('linearFlat', into, float32, batch * nQ * dV);
    if (float32) return linearFlat32(q, k, v, batch, nQ, nK, dK, dV, causal, into, limit);
    checkFlatBytes('linearFlat', q.length + k.length + v.length + batch * nQ * dV + workLength, 0, limit);
    const allocations = new Allocations();
    try {
      const outputLength = batch * nQ * dV;
      const outputPointer = allocations.bytes(8 * outputLength);
      const work = allocations.bytes(8 * wasm.attn_linear_work_size(dK, dV));
      const status = wasm.attn_linear(outputPointer, allocations.doubles(q),
                                      allocations.doubles(k), allocations.doubles(v),
                                      batch, nQ, nK, dK, dV, causal ? 1 : 0, work);
      if (status !== 0) throw engineError(status, `attn_linear: ${readCString(wasm.attn_status_text(status))}`);
      return { output: copyDoubles(outputPointer, outputLength, into) };
    } finally {
      allocations.releaseAll();
    }
  }

  function sdpaFlat(input) {
    const { q, k, v, batch = 1, nQ, nK, dK, dV, scale, causal = false, window, stride, keyLength, allowed,
            weights = false, maxBytes, output: into } = flatInput('sdpaFlat', input);
    checkFlatShapes('sdpaFlat', { q, k, v, batch, nQ, nK, dK, dV });
    checkFlatInteger('window', window, 0);
    checkFlatInteger('stride', stride, 1);
    if (scale !== undefined && typeof scale !== 'boolean' && !(typeof scale === 'number' && Number.isFinite(scale))) {
      throw new AttentionError(`sdpaFlat: scale must be a finite number, true or false, got ${describeValue(scale)}`,
                               ATTN_ERR_OPTION);
    }
    checkFlag('sdpaFlat', 'causal', causal);
    checkFlag('sdpaFlat', 'weights', weights);
    const limit = maxBytes === undefined ? engineMaxBytes : checkMaxBytes('sdpaFlat', maxBytes);
    const extra = flatMaskParts(keyLength, allowed, batch, nQ, nK);
    const float32 = float32Inputs('sdpaFlat', q, k, v);
    checkInto('sdpaFlat', into, float32, batch * nQ * dV);
    if (float32) {
      return sdpaFlat32(q, k, v, batch, nQ, nK, dK, dV, scale, causal, window, stride,
                        extra, weights, into, limit);
    }
    // The mask's key lengths (4 bytes each) and allowed bytes count too.
    checkFlatBytes('sdpaFlat', q.length + k.length + v.length + batch * nQ * dV
                               + (weights ? batch * nQ * nK : 0) + nK,
                   OPTIONS_BYTES + (extra.lengths ? 4 * batch : 0) + (extra.allowed ? nQ * nK : 0), limit);
    const allocations = new Allocations();
    try {
      const options = allocations.bytes(OPTIONS_BYTES);
      wasm.attn_options_init(options);
      const lengthsPointer = extra.lengths ? allocations.ints(extra.lengths) : 0;
      let allowedPointer = 0;
      if (extra.allowed) {
        allowedPointer = allocations.bytes(extra.allowed.length);
        new Uint8Array(wasm.memory.buffer, allowedPointer, extra.allowed.length).set(extra.allowed);
      }
      const view = new DataView(wasm.memory.buffer, options, OPTIONS_BYTES);
      if (scale === false) {
        view.setInt32(OPTIONS_SCALE_KIND, ATTN_SCALE_NONE, true);
      } else if (typeof scale === 'number') {
        view.setInt32(OPTIONS_SCALE_KIND, ATTN_SCALE_FACTOR, true);
        view.setFloat64(OPTIONS_SCALE_FACTOR, scale, true);
      }
      let maskKinds = causal ? ATTN_MASK_CAUSAL : 0;
      if (window !== undefined) {
        maskKinds |= ATTN_MASK_LOCAL;
        view.setInt32(OPTIONS_MASK_WINDOW, window, true);
      }
      if (stride !== undefined) {
        maskKinds |= ATTN_MASK_STRIDED;
        view.setInt32(OPTIONS_MASK_STRIDE, stride, true);
      }
      if (lengthsPointer !== 0) {
        maskKinds |= ATTN_MASK_KEY_PADDING;
        view.setUint32(OPTIONS_MASK_KEY_LENGTH, lengthsPointer, true);
      }
      if (allowedPointer !== 0) {
        maskKinds |= ATTN_MASK_CUSTOM;
        view.setUint32(OPTIONS_MASK_ALLOWED, allowedPointer, true);
      }
      view.setUint32(OPTIONS_MASK_KINDS, maskKinds, true);

      const outputLength = batch * nQ * dV;
      const weightsLength = batch * nQ * nK;
      const outputPointer = allocations.bytes(8 * outputLength);
      const weightsPointer = weights ? allocations.bytes(8 * weightsLength) : 0;
      const work = allocations.bytes(8 * wasm.attn_sdpa_work_size(nK));
      const status = wasm.attn_sdpa(0, 0, weightsPointer, outputPointer,
                                    allocations.doubles(q), allocations.doubles(k),
                                    allocations.doubles(v), batch, nQ, nK, dK, dV,
                                    options, work);
      if (status !== 0) throw engineError(status, `attn_sdpa: ${readCString(wasm.attn_status_text(status))}`);
      const result = { output: copyDoubles(outputPointer, outputLength, into) };
      if (weights) result.weights = copyDoubles(weightsPointer, weightsLength);
      return result;
    } finally {
      allocations.releaseAll();
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

  // ---- The float32 path of sdpaFlat and linearFlat ----
  // Float32Array inputs run attn_sdpa_f32 / attn_linear_f32 and give
  // Float32Array results. To keep small calls cheap (T = 4 in about a
  // microsecond) every call reuses one block of WASM memory, grown when a
  // call needs more and otherwise kept, and the heap views are rebuilt only
  // when the memory has grown (growing replaces memory.buffer).

  // true for three Float32Arrays, false for none; a mix is an error.
  function float32Inputs(caller, q, k, v) {
    const count = (q instanceof Float32Array) + (k instanceof Float32Array) +
                  (v instanceof Float32Array);
    if (count === 0) return false;
    if (count === 3) return true;
    throw new AttentionError(`${caller}: q, k and v must be all Float32Arrays (float32) or none (float64)`, ATTN_ERR_INPUT);
  }

  const scratch32 = { pointer: 0, bytes: 0 };
  let heap32 = null;

  // A block of at least `bytes`, 16-byte aligned; its contents are not kept.
  function scratchBlock(bytes) {
    if (bytes > scratch32.bytes) {
      if (scratch32.pointer !== 0) wasm.free(scratch32.pointer);
      scratch32.pointer = 0;
      scratch32.bytes = 0;
      const size = Math.max(bytes + 16, 4096);
      const pointer = wasm.malloc(size);
      if (pointer === 0) throw new AttentionError('attention: out of WebAssembly memory', ATTN_ERR_NOMEM);
      scratch32.pointer = pointer;
      scratch32.bytes = size - 16;
    }
    return (scratch32.pointer + 15) & ~15;
  }

  // Views of WASM memory, made again once it has grown: growing detaches
  // the old buffer (its byteLength becomes 0), which is cheaper to ask than
  // wasm.memory.buffer, a call into the engine.
  function heapViews() {
    if (heap32 === null || heap32.buffer.byteLength === 0) {
      const buffer = wasm.memory.buffer;
      heap32 = { buffer, f32: new Float32Array(buffer), i32: new Int32Array(buffer),
                 f64: new Float64Array(buffer) };
    }
    return heap32;
  }

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

  function sdpaFlat32(q, k, v, batch, nQ, nK, dK, dV, scale, causal, window, stride,
                      extra, weights, into, limit) {
    const outputLength = batch * nQ * dV;
    const weightsLength = weights ? batch * nQ * nK : 0;
    const workLength = workFloats('sdpaFlat', wasm.attn_sdpa_f32_work_size(nK, dK, dV));
    // The scratch block: options, q, k, v, output, weights, work, key
    // lengths, allowed. The kernel's work array (K packed in tiles of keys,
    // a tile of scores, blocks of query rows) counts too: with few keys and
    // long rows it is many times the inputs.
    const { offsets, total } = blockLayout('sdpaFlat', [
      OPTIONS_BYTES, 4 * q.length, 4 * k.length, 4 * v.length, 4 * outputLength,
      4 * weightsLength, 4 * workLength, extra.lengths ? 4 * batch : 0,
      extra.allowed ? nQ * nK : 0], limit);
    const options = scratchBlock(total);
    const [qp, kp, vp, outputPointer, weightsPointer, work, lengthsPointer, allowedPointer] =
      offsets.slice(1).map((offset) => options + offset);
    const { f32, i32, f64 } = heapViews();
    if (extra.lengths) i32.set(extra.lengths, lengthsPointer >>> 2);
    if (extra.allowed) new Uint8Array(f32.buffer).set(extra.allowed, allowedPointer);
    // attn_options, field by field (the layout described at OPTIONS_BYTES).
    let scaleKind = 0; // ATTN_SCALE_INV_SQRT_DK
    if (scale === false) scaleKind = ATTN_SCALE_NONE;
    else if (typeof scale === 'number') scaleKind = ATTN_SCALE_FACTOR;
    let maskKinds = causal ? ATTN_MASK_CAUSAL : 0;
    if (window !== undefined) maskKinds |= ATTN_MASK_LOCAL;
    if (stride !== undefined) maskKinds |= ATTN_MASK_STRIDED;
    const o = options >>> 2;
    i32[o] = scaleKind;
    f64[(options + OPTIONS_SCALE_FACTOR) >>> 3] = typeof scale === 'number' ? scale : 1;
    if (extra.lengths) maskKinds |= ATTN_MASK_KEY_PADDING;
    if (extra.allowed) maskKinds |= ATTN_MASK_CUSTOM;
    i32[o + 4] = maskKinds; // mask.kinds
    i32[o + 5] = extra.lengths ? lengthsPointer : 0; // mask.key_length
    i32[o + 6] = extra.allowed ? allowedPointer : 0; // mask.allowed
    i32[o + 7] = window === undefined ? 0 : window;
    i32[o + 8] = stride === undefined ? 1 : stride;
    f64[(options + 40) >>> 3] = 0; // dropout
    i32[o + 12] = 0;               // seed, low and high words
    i32[o + 13] = 0;
    f32.set(q, qp >>> 2);
    f32.set(k, kp >>> 2);
    f32.set(v, vp >>> 2);
    const status = wasm.attn_sdpa_f32(weights ? weightsPointer : 0, outputPointer, qp, kp, vp,
                                      batch, nQ, nK, dK, dV, options, work);
    if (status !== 0) {
      throw engineError(status, `attn_sdpa_f32: ${readCString(wasm.attn_status_text(status))}`);
    }
    const result = { output: copyFloats(outputPointer, outputLength, into) };
    if (weights) result.weights = copyFloats(weightsPointer, weightsLength);
    return result;
  }

  function linearFlat32(q, k, v, batch, nQ, nK, dK, dV, causal, into, limit) {
    const outputLength = batch * nQ * dV;
    const workLength = workFloats('linearFlat', wasm.attn_linear_f32_work_size(dK, dV));
    const { offsets, total } = blockLayout('linearFlat', [
      4 * q.length, 4 * k.length, 4 * v.length, 4 * outputLength, 4 * workLength], limit);
    const block = scratchBlock(total);
    const [qp, kp, vp, outputPointer, work] = offsets.map((offset) => block + offset);
    const { f32 } = heapViews();
    f32.set(q, qp >>> 2);
    f32.set(k, kp >>> 2);
    f32.set(v, vp >>> 2);
    const status = wasm.attn_linear_f32(outputPointer, qp, kp, vp, batch, nQ, nK, dK, dV,
                                        causal ? 1 : 0, work);
    if (status !== 0) {
      throw engineError(status, `attn_linear_f32: ${readCString(wasm.attn_status_text(status))}`);
    }
    return { output: copyFloats(outputPointer, outputLength, into) };
  }

  // The `length` numbers at `pointer`: written into `into` and returned
  // when the caller gave an array for them, else in a new one (made and
  // set() rather than slice(), whose lookup of the species constructor was
  // a tenth of a call at T = 4).
  function copyFloats(pointer, length, into = new Float32Array(length)) {
    const start = pointer >>> 2;
    into.set(heapViews().f32.subarray(start, start + length));
    return into;
  }

  function copyDoubles(pointer, length, into = new Float64Array(length)) {
    into.set(new Float64Array(wasm.memory.buffer, pointer, length));
    return into;
  }

  // Bytes malloc'd now and the size of the WebAssembly memory, for checking
  // that repeated calls leak nothing.
  function memoryStats() {
    const allocations = new Allocations();
    try {
      const info = allocations.bytes(40); // struct mallinfo: ten ints
      wasm.mallinfo(info);
      const allocatedBytes = new Int32Array(wasm.memory.buffer, info, 10)[7]; // uordblks
      return { allocatedBytes, memoryBytes: wasm.memory.buffer.byteLength };
    } finally {
      allocations.releaseAll();
    }
  }

  // ---- Training (attn_trainer_*): a tiny transformer learning a task ----

  // A trainer dropped without dispose() is destroyed once the garbage
  // collector finds it unreachable. The target is the handle every method
  // of the trainer refers to, so that a method kept on its own (const {
  // step } = trainer) keeps the trainer too; the held value is its pointer.
  const trainerRegistry = new FinalizationRegistry((pointer) => wasm.attn_trainer_destroy(pointer));

  function createTrainer(options = {}) {
    if (options === null || typeof options !== 'object' || isList(options)) {
      throw inputError(`createTrainer: expected an object of settings, got ${describe(options)}`);
    }
    if (typeof wasm.attn_trainer_create !== 'function') {
      // build.sh's attention-page.wasm: the page's first load, which trains in a worker on attention.wasm.
      throw new AttentionError('createTrainer: this engine module was built without the trainer; load attention.wasm', ATTN_ERR_STATE);
    }
    // Read once, here: a getter that throws is named by its setting.
    const { task, ...settings } = Object.fromEntries(Object.keys(options).map((name) => [name, readInput(name, () => options[name])]));
    if (typeof task !== 'string' || !TRAINER_TASKS.includes(task)) {
      throw engineError(ATTN_ERR_OPTION, `task: expected one of ${TRAINER_TASKS.join(', ')}, got ${describe(task)}`);
    }
    const allocations = new Allocations();
    let trainer = 0;
    try {
      const slot = allocations.bytes(4);
      const created = wasm.attn_trainer_create(slot, allocations.string(task), 0);
      if (created !== 0) throw engineError(created);
      trainer = readU32(slot);
      // The model it builds counts against maxBytes like a problem does.
      wasm.attn_trainer_set_max_bytes(trainer, engineMaxBytes);
      for (const [name, value] of Object.entries(settings)) {
        if (value === undefined) continue;
        if (!TRAINER_SETTINGS.includes(name)) {
          throw engineError(ATTN_ERR_INPUT, `${name}: unknown setting (settings: ${TRAINER_SETTINGS.join(', ')})`);
        }
        const number = typeof value === 'boolean' && FLAG_SETTINGS.includes(name) ? Number(value) : value;
        if (typeof number !== 'number') {
          throw engineError(ATTN_ERR_INPUT, `${name}: expected a number${FLAG_SETTINGS.includes(name) ? ' or a boolean' : ''}, got ${describe(value)}`);
        }
        const status = wasm.attn_trainer_set(trainer, allocations.string(name), number);
        if (status !== 0) throw trainerError(trainer, status);
      }
      // Builds the model now, so that settings that do not fit together
      // (heads that do not divide dModel, ...) throw here.
      const ints = allocations.bytes(12 * 32);
      const status = wasm.attn_trainer_example(trainer, ints, ints + 128, ints + 256, 0);
      if (status !== 0) throw trainerError(trainer, status);
    } catch (error) {
      wasm.attn_trainer_destroy(trainer);
      throw error;
    } finally {
      allocations.releaseAll();
    }
    return trainerApi(task, trainer);
  }

  function trainerError(trainer, status) {
    return engineError(status, readCString(wasm.attn_trainer_error(trainer)));
  }

  function trainerApi(task, trainer) {
    const handle = { live: true };
    trainerRegistry.register(handle, trainer, handle);
    // Calls the engine with scratch memory; throws its error as an AttentionError.
    const call = (name, body) => {
      if (!handle.live) throw new AttentionError(`trainer.${name}: this trainer was disposed`, ATTN_ERR_STATE);
      const allocations = new Allocations();
      try {
        return body(allocations, (status) => { if (status !== 0) throw trainerError(trainer, status); });
      } finally {
        allocations.releaseAll();
      }
    };
    const get = (name) => call('config', (allocations, check) => {
      const slot = allocations.bytes(8);
      check(wasm.attn_trainer_get(trainer, allocations.string(name), slot));
      return new Float64Array(wasm.memory.buffer, slot, 1)[0];
    });
    const config = { task };
    for (const name of TRAINER_SETTINGS) config[name] = FLAG_SETTINGS.includes(name) ? get(name) === 1 : get(name);
    Object.freeze(config);
    const length = config.seqLength;
    const readInts = (pointer, count) => Array.from(new Int32Array(wasm.memory.buffer, pointer, count));

    function example(index) {
      checkWhole('trainer.example', 'index', index, 0, ATTN_TRAINER_HELD_OUT - 1);
      return call('example', (allocations, check) => {
        const ints = allocations.bytes(12 * length);
        check(wasm.attn_trainer_example(trainer, ints, ints + 4 * length, ints + 8 * length, index));
        return {
          tokens: readInts(ints, length),
          targets: readInts(ints + 4 * length, length),
          counted: readInts(ints + 8 * length, length).map(Boolean),
        };
      });
    }

    // The length first, in the engine's words: a list of 2^32 - 1 was
    // once walked entry by entry (minutes) before its size was refused.
    function checkTokens(caller, tokens) {
      if (isList(tokens) && tokens.length > length) {
        throw engineError(ATTN_ERR_RANGE, `${caller}: tokens: the model reads 1 to seqLength = ${length} tokens, got ${tokens.length}`);
      }
      if (!isList(tokens) || tokens.length === 0 || !tokens.every((t) => Number.isInteger(t))) {
        throw inputError(`${caller}: tokens: expected a list of 1 to ${length} whole numbers, got ${describe(tokens)}`);
      }
    }

    function predict(tokens) {
      checkTokens('trainer.predict', tokens);
      const n = tokens.length;
      return call('predict', (allocations, check) => {
        const input = allocations.ints(tokens);
        const predicted = allocations.bytes(4 * n);
        const weightCount = config.layers * config.heads * n * n;
        const weights = allocations.bytes(8 * weightCount);
        check(wasm.attn_trainer_predict(trainer, predicted, weights, input, n));
        const flat = copyDoubles(weights, weightCount);
        const attention = Array.from({ length: config.layers }, (_, l) => Array.from({ length: config.heads }, (_, h) => (
          Array.from({ length: n }, (_, i) => Array.from(flat.subarray(((l * config.heads + h) * n + i) * n, ((l * config.heads + h) * n + i + 1) * n))))));
        return { predicted: readInts(predicted, n), attention };
      });
    }

    /** The queries, keys and values one head attends with on tokens. */
    function head(layer, index, tokens) {
      checkWhole('trainer.head', 'layer', layer, 0, config.layers - 1);
      checkWhole('trainer.head', 'head', index, 0, config.heads - 1);
      checkTokens('trainer.head', tokens);
      const n = tokens.length;
      const width = config.dModel / config.heads;
      return call('head', (allocations, check) => {
        const input = allocations.ints(tokens);
        const [q, k, v] = [0, 1, 2].map(() => allocations.bytes(8 * n * width));
        check(wasm.attn_trainer_head(trainer, q, k, v, input, n, layer, index));
        const rows = (pointer) => Array.from({ length: n }, (_, i) => Array.from(copyDoubles(pointer + 8 * i * width, width)));
        return { q: rows(q), k: rows(k), v: rows(v) };
      });
    }

    return Object.freeze({
      config,
      /** n Adam steps on fresh batches: { step (in all), loss (the last batch's) }. */
      step(n = 1) {
        checkWhole('trainer.step', 'n', n, 1, 1e6);
        const loss = call('step', (allocations, check) => {
          const slot = allocations.bytes(8);
          check(wasm.attn_trainer_step(trainer, n, slot));
          return new Float64Array(wasm.memory.buffer, slot, 1)[0];
        });
        return { step: get('step'), loss };
      },
      /** Loss and token accuracy on the held-out set. */
      evaluate() {
        return call('evaluate', (allocations, check) => {
          const slots = allocations.bytes(16);
          check(wasm.attn_trainer_evaluate(trainer, slots, slots + 8));
          const [loss, accuracy] = new Float64Array(wasm.memory.buffer, slots, 2);
          return { loss, accuracy };
        });
      },
      example,
      predict,
      head,
      /** The attention weights of one head on held-out example `index`. */
      attention(layer, head, index = 0) {
        checkWhole('trainer.attention', 'layer', layer, 0, config.layers - 1);
        checkWhole('trainer.attention', 'head', head, 0, config.heads - 1);
        return predict(example(index).tokens).attention[layer][head];
      },
      dispose() {
        if (!handle.live) return;
        handle.live = false;
        trainerRegistry.unregister(handle);
        wasm.attn_trainer_destroy(trainer);
      },
    });
  }

  function checkWhole(caller, name, value, min, max) {
    if (!Number.isInteger(value) || value < min || value > max) {
      throw engineError(ATTN_ERR_RANGE, `${caller}: ${name} must be a whole number from ${min} to ${max}, got ${typeof value === 'number' ? value : describe(value)}`);
    }
  }

  const mechanism = (kind) => (fields = {}) => run({ ...fields, kind });
  return Object.freeze({
    scaledDotProduct: mechanism('scaledDotProduct'),
    multiHead: mechanism('multiHead'),
    additive: mechanism('additive'),
    luong: mechanism('luong'),
    linear: mechanism('linear'),
    softmax: mechanism('softmax'),
    weightedSum: mechanism('weightedSum'),
    onlineSoftmax: mechanism('onlineSoftmax'),
    run,
    format,
    steps,
    stepEquations,
    walkthrough,
    check,
    sdpaFlat,
    linearFlat,
    createTrainer,
    memoryStats,
  });
}

// ---- Walking the input as the C JSON adapter (src/cli/problem_json.c) ----
// Same order of checks, same messages; only NaN and infinities, which JSON
// cannot carry, are caught here alone.

function inputError(message) {
  return new AttentionError(message, ATTN_ERR_INPUT);
}

// Runs read(), which reads the caller's values: an exception their own code
// throws (a getter) becomes an AttentionError naming `what`, with the
// exception as its cause. The engine's own errors pass through.
function readInput(what, read) {
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
function describeValue(value) {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return describe(value);
}

function isList(value) {
  return Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView));
}

function describe(value) {
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

// Whether every entry is a string, stopping at the first that is not (a
// sparse array of 2^32 - 1 entries stops at its first hole).
function allStrings(values) {
  for (let i = 0; i < values.length; i++) {
    if (typeof values[i] !== 'string') return false;
  }
  return true;
}

// Labels name the rows or columns of a tensor, which holds 8 bytes an
// entry: a list longer than maxBytes / 8 labels none within the limit,
// and is refused before it is walked.
function checkLabelCount(field, count, maxBytes) {
  const most = Math.floor(maxBytes / 8);
  if (count > most) {
    throw new AttentionError(`${field}: ${count} labels, more than any tensor within the limit of ${maxBytes} bytes has rows (${most})`,
                             ATTN_ERR_TOO_LARGE);
  }
}

function stringsOf(field, values) {
  return Array.from(values, (value, i) => {
    if (typeof value !== 'string') {
      throw inputError(`${field}[${i}]: expected a string, got ${describe(value)}`);
    }
    if (value.includes('\0')) throw inputError(`${field}[${i}]: must not contain a NUL character`);
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
function tensorOf(field, value, budget, leaf = leafValue) {
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

function leafValue(leaf, path) {
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
function printedLeaf(leaf, path) {
  if (leaf === null || leaf === -Infinity) return -Infinity;
  if (typeof leaf !== 'number' || Number.isNaN(leaf)) {
    throw inputError(`${path}: expected a number, got ${describe(leaf)}`);
  }
  return leaf;
}

function checkLength(caller, name, values, expected, formula) {
  if (!isList(values) || values.length !== expected) {
    const got = isList(values) ? `${values.length} numbers` : describe(values);
    throw new AttentionError(`${caller}: ${name} must hold ${formula} = ${expected} numbers, got ${got}`,
                             ATTN_ERR_INPUT);
  }
}

// import attention from 'attention-explainer': the same two names.
export default Object.freeze({ loadAttention, AttentionError });
