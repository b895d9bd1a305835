// model: a Llama-architecture checkpoint (attn_model_*, attention.h "A
// language model"), its config.json and model.safetensors loaded into the
// engine, which checks every size against the file and the byte limit and
// computes in float64. Not in attention-page.wasm, the page's module
// without the lm/ layer.

import { AttentionError, inputError } from './errors.js';
import { encodeText } from './core.js';
import { adopt, release } from './handles.js';
import { MAX_INT32, checkFlag, describe, describeValue, isList, onlyKnown, readInput } from './describe-input.js';
import {
  ATTN_ERR_OPTION, ATTN_ERR_RANGE, ATTN_ERR_STATE, ATTN_ERR_TOO_LARGE, DECODER_CONFIG_DOUBLES, DECODER_CONFIG_OFFSETS,
  FORMAT_CHOICES, FORMATS,
} from './engine-constants.js';
import { parseResult, parseSteps } from './problems.js';

const SOURCE_FILES = new Set(['config', 'weights']);
const TEXT_OR_IDS = new Set(['text', 'ids']);
const GENERATE_OPTIONS = new Set(['text', 'ids', 'tokens', 'temperature', 'seed', 'cache']);
const WALKTHROUGH_OPTIONS = new Set(['text', 'ids', 'format']);
// The C messages name the command line's option for the limit; here it
// is loadAttention's.
const CLI_LIMIT = '--max-bytes in attn model';
const JS_LIMIT = 'maxBytes in loadAttention';
// Node's codes for a file it cannot read, in the words the C library
// (attn model, Python) gives them.
const READ_ERRORS = { ENOENT: 'No such file or directory', EACCES: 'Permission denied', EISDIR: 'Is a directory' };

function modelError(core, model, status) {
  const message = core.readCString(core.engine.attn_model_error(model)).replace(CLI_LIMIT, JS_LIMIT);
  return core.engineError(status, message);
}

/**
 * The model of `source`: { config, weights }, the bytes of config.json (or
 * its text) and of model.safetensors, or where `folder` (attention-node.js:
 * { size(path), read(path) }) can read one, the path of a folder holding
 * them.
 */
export function createModel(core, source, folder) {
  const { engine } = core;
  if (typeof engine.attn_model_create !== 'function') {
    throw new AttentionError('model: this engine module was built without the model; load attention.wasm',
                             ATTN_ERR_STATE);
  }
  const { config, weights } = typeof source === 'string' ? readFolder(core, source, folder) : sourceFiles(source);
  const total = config.length + weights.length;
  if (total > core.maxBytes) {
    throw core.engineError(ATTN_ERR_TOO_LARGE, `model: config.json and model.safetensors take ${total} bytes, `
      + `more than the limit of ${core.maxBytes} bytes; raise the limit (${JS_LIMIT})`);
  }
  const model = core.withMemory((memory) => {
    const slot = memory.bytes(4);
    const created = engine.attn_model_create(slot, 0);
    if (created !== 0) throw core.engineError(created);
    const made = core.readU32(slot);
    try {
      engine.attn_model_set_max_bytes(made, core.maxBytes);
      const status = engine.attn_model_load(made, memory.u8(config), config.length, memory.u8(weights),
                                            weights.length);
      if (status !== 0) throw modelError(core, made, status);
    } catch (error) {
      engine.attn_model_destroy(made);
      throw error;
    }
    return made;
  });
  return modelApi(core, model);
}

// An ArrayBuffer or a view of one, as bytes.
function bytesOf(value) {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return null;
}

function sourceFiles(source) {
  if (source === null || typeof source !== 'object' || isList(source)) {
    throw inputError('model: expected the files { config, weights } (config.json as text or bytes, '
      + `model.safetensors as bytes) or, in Node, a folder's path, got ${describe(source)}`);
  }
  const { config, weights } = onlyKnown('model', readInput('model: source', () => ({ ...source })), SOURCE_FILES,
                                        'files');
  const configBytes = typeof config === 'string' ? encodeText(config, 'config') : bytesOf(config);
  if (configBytes === null) {
    throw inputError(`model: config: expected config.json's text or bytes, got ${describe(config)}`);
  }
  const weightBytes = bytesOf(weights);
  if (weightBytes === null) {
    throw inputError(`model: weights: expected model.safetensors's bytes (a Uint8Array or an ArrayBuffer), got ${describe(weights)}`);
  }
  return { config: configBytes, weights: weightBytes };
}

// The folder's two files, their sizes weighed against the limit before
// either is read.
function readFolder(core, path, folder) {
  if (!folder) {
    throw inputError('model: a folder is read only in Node (attention-node.js); here give its files\' bytes '
      + '{ config, weights }');
  }
  const files = ['config.json', 'model.safetensors'].map((name) => `${path.replace(/\/+$/, '')}/${name}`);
  const attempt = (file, read) => {
    try {
      return read(file);
    } catch (error) {
      throw inputError(`model: cannot read ${file}: ${READ_ERRORS[error.code] ?? error.message}`);
    }
  };
  const total = files.reduce((sum, file) => sum + attempt(file, folder.size), 0);
  if (total > core.maxBytes) {
    throw core.engineError(ATTN_ERR_TOO_LARGE, `model: config.json and model.safetensors take ${total} bytes, `
      + `more than the limit of ${core.maxBytes} bytes; raise the limit (${JS_LIMIT})`);
  }
  const [config, weights] = files.map((file) => bytesOf(attempt(file, folder.read)));
  return { config, weights };
}

// The loaded model's methods, each given `session`: { core, model (its
// pointer), handle, config }. The handle (handles.js) keeps the model.
function modelApi(core, model) {
  const handle = adopt(core, 'attn_model_destroy', model);
  const config = readConfig(core, core.engine.attn_model_config(model));
  const session = { core, model, handle, config };
  return Object.freeze({
    /** The checkpoint's config, in LlamaConfig's names. */
    config,
    run: (input) => run(session, input),
    generate: (input) => generate(session, input),
    head: (layer, index, input) => head(session, layer, index, input),
    walkthrough: (layer, index, input) => walkthrough(session, layer, index, input),
    labels: (input) => labels(session, input),
    dispose: () => release(core, 'attn_model_destroy', handle),
  });
}

function readConfig(core, pointer) {
  const config = {};
  for (const [name, offset] of Object.entries(DECODER_CONFIG_OFFSETS)) {
    config[name] = DECODER_CONFIG_DOUBLES.includes(name) ? core.readDouble(pointer + offset)
      : core.readInts(pointer + offset, 1)[0];
  }
  config.tie_word_embeddings = config.tie_word_embeddings !== 0;
  return Object.freeze(config);
}

// Calls the engine with scratch memory: body(memory, check), where
// check(status) throws the model's error.
function call({ core, model, handle }, name, body) {
  if (!handle.live) throw new AttentionError(`model.${name}: this model was disposed`, ATTN_ERR_STATE);
  return core.withMemory((memory) => body(memory, (status) => {
    if (status !== 0) throw modelError(core, model, status);
  }));
}

// The input object of run, generate, head and walkthrough, read once
// (a getter that throws is named), only `known` names in it.
function readOptions(caller, input, known) {
  if (input === null || typeof input !== 'object' || isList(input)) {
    throw inputError(`${caller}: expected an object { text } or { ids }, got ${describe(input)}`);
  }
  return onlyKnown(caller, readInput(`${caller}: input`, () => ({ ...input })), known);
}

/**
 * The tokens: the text's UTF-8 bytes (a byte's id is its value, nothing
 * added) or the ids given, each checked as the number it is (an int would
 * take 2^32 + 1 as 1); the engine checks them against the model.
 */
function tokensOf(caller, { text, ids }) {
  if ((text === undefined) === (ids === undefined)) {
    throw inputError(`${caller}: give the text as { text } or its ids as { ids }, one of them`);
  }
  if (text !== undefined) {
    if (typeof text !== 'string') throw inputError(`${caller}: text: expected a string, got ${describe(text)}`);
    return Array.from(encodeText(text, 'text'));
  }
  if (!isList(ids)) throw inputError(`${caller}: ids: expected a list of token ids, got ${describe(ids)}`);
  if (ids.length > MAX_INT32) {
    throw new AttentionError(`${caller}: ids: ${ids.length} of them, more than a model reads`, ATTN_ERR_RANGE);
  }
  const tokens = Array.from(ids);
  const bad = tokens.findIndex((id) => !Number.isInteger(id) || id < -(2 ** 31) || id > MAX_INT32);
  if (bad >= 0) {
    throw new AttentionError(`${caller}: ids[${bad}]: expected a whole number (a token id), got ${describeValue(tokens[bad])}`,
                             ATTN_ERR_RANGE);
  }
  return tokens;
}

// Whether n tokens, and `more` after them, fit in the model. When not, the
// call goes to the engine without room for its outputs: it refuses the
// tokens with its own message before it writes anything.
const fits = ({ config }, n, more = 0) => n >= 1 && n + more <= config.max_position_embeddings;

// A layer's or head's number, checked as the number it is (an int would
// take 2^32 + 1 as 1); the engine says which the model has.
function checkIndex(caller, name, value) {
  if (!Number.isInteger(value) || value < -(2 ** 31) || value > MAX_INT32) {
    throw new AttentionError(`${caller}: ${name} must be a whole number (from 0), got ${describeValue(value)}`,
                             ATTN_ERR_RANGE);
  }
}

function nested(flat, dims, start = 0) {
  if (dims.length === 1) return Array.from(flat.subarray(start, start + dims[0]));
  const [count, ...rest] = dims;
  const size = rest.reduce((p, d) => p * d, 1);
  return Array.from({ length: count }, (_, i) => nested(flat, rest, start + i * size));
}

/** { ids, attention[layer][head][query][key], logits[position][vocab] }, as attn model run --format json. */
function run(session, input) {
  const { core, model, config } = session;
  const tokens = tokensOf('model.run', readOptions('model.run', input, TEXT_OR_IDS));
  const n = tokens.length;
  return call(session, 'run', (memory, check) => {
    const ids = memory.ints(tokens.length > 0 ? tokens : [0], 'ids');
    if (!fits(session, n)) check(core.engine.attn_model_run(model, 0, 0, ids, n));
    const layers = config.num_hidden_layers, heads = config.num_attention_heads, vocab = config.vocab_size;
    const weightCount = layers * heads * n * n, logitCount = n * vocab;
    const bytes = 8 * (weightCount + logitCount);
    if (bytes > core.maxBytes) {
      throw core.engineError(ATTN_ERR_TOO_LARGE, `model.run: the attention weights and logits of ${n} tokens take `
        + `${bytes} bytes, more than the limit of ${core.maxBytes} bytes (${JS_LIMIT})`);
    }
    const weights = memory.bytes(8 * weightCount);
    const logits = memory.bytes(8 * logitCount);
    check(core.engine.attn_model_run(model, weights, logits, ids, n));
    return {
      ids: tokens,
      attention: nested(core.copyDoubles(weights, weightCount), [layers, heads, n, n]),
      logits: nested(core.copyDoubles(logits, logitCount), [n, vocab]),
    };
  });
}

// seed: a whole number from 0 to 2^64 - 1, a BigInt or a number (a number
// above 2^53 is not the integer it was written as, so it is refused).
function seedOf(seed) {
  if (typeof seed === 'bigint' && seed >= 0n && seed < 2n ** 64n) return seed;
  if (Number.isSafeInteger(seed) && seed >= 0) return BigInt(seed);
  throw new AttentionError(`model.generate: seed must be a whole number from 0 to 2^53 - 1, or a BigInt to 2^64 - 1, got ${
    typeof seed === 'bigint' ? `${seed}n` : describeValue(seed)}`, ATTN_ERR_RANGE);
}

/**
 * { ids, prompt }: the prompt's ids then `tokens` generated, as attn model
 * generate --format json; greedy at temperature 0 (ties to the lowest id),
 * else drawn with the seed; the same ids with cache false.
 */
function generate(session, input) {
  const { core, model } = session;
  const options = readOptions('model.generate', input, GENERATE_OPTIONS);
  const prompt = tokensOf('model.generate', options);
  const { tokens: count, temperature = 0, seed = 0, cache = true } = options;
  if (!Number.isInteger(count) || count < 0 || count > MAX_INT32) {
    throw new AttentionError(`model.generate: tokens must be a whole number of tokens to generate, from 0 to ${MAX_INT32}, `
      + `got ${describeValue(count)}`, ATTN_ERR_RANGE);
  }
  if (typeof temperature !== 'number') {
    throw new AttentionError(`model.generate: temperature must be a number from 0, got ${describe(temperature)}`,
                             ATTN_ERR_RANGE);
  }
  checkFlag('model.generate', 'cache', cache);
  const draws = seedOf(seed);
  const n = prompt.length;
  return call(session, 'generate', (memory, check) => {
    const ids = memory.ints(n > 0 ? prompt : [0], 'ids');
    const out = memory.bytes(4 * (fits(session, n, count) ? n + count : 1));
    check(core.engine.attn_model_generate(model, out, ids, n, count, temperature, draws, cache ? 1 : 0));
    return { ids: core.readInts(out, n + count), prompt: n };
  });
}

// The longest label attn_token_label writes, with its terminating zero (attention.h).
const TOKEN_LABEL_CAP = 16;

/** Each token as attn_token_label names it (the CLI's labels): 'a', '\u2423' for a space, '\\xc3'. */
function labels(session, input) {
  const tokens = tokensOf('model.labels', readOptions('model.labels', input, TEXT_OR_IDS));
  return call(session, 'labels', (memory) => {
    const label = memory.bytes(TOKEN_LABEL_CAP);
    return tokens.map((id) => {
      session.core.engine.attn_token_label(label, id, 0);
      return session.core.readCString(label);
    });
  });
}

/** What head `index` of `layer` attends with on the text: { q, k, v }, each [position][head_dim]. */
function head(session, layer, index, input) {
  const { core, model, config } = session;
  checkIndex('model.head', 'layer', layer);
  checkIndex('model.head', 'head', index);
  const tokens = tokensOf('model.head', readOptions('model.head', input, TEXT_OR_IDS));
  const n = tokens.length;
  const width = config.hidden_size / config.num_attention_heads;
  return call(session, 'head', (memory, check) => {
    const ids = memory.ints(n > 0 ? tokens : [0], 'ids');
    const cells = fits(session, n) ? n * width : 1;
    const [q, k, v] = [0, 1, 2].map(() => memory.bytes(8 * cells));
    check(core.engine.attn_model_head(model, q, k, v, ids, n, layer, index));
    const rows = (pointer) => nested(core.copyDoubles(pointer, n * width), [n, width]);
    return { q: rows(q), k: rows(k), v: rows(v) };
  });
}

/**
 * The walkthrough of head `index` of `layer` on the text
 * (attn_model_head_problem): the steps as steps() gives them, or with
 * format 'json' its result, or its text in 'text', 'markdown' or 'latex'.
 */
function walkthrough(session, layer, index, input) {
  const { core, model } = session;
  checkIndex('model.walkthrough', 'layer', layer);
  checkIndex('model.walkthrough', 'head', index);
  const options = readOptions('model.walkthrough', input, WALKTHROUGH_OPTIONS);
  const { format = 'steps' } = options;
  if (!Object.hasOwn(FORMATS, format)) {
    throw core.engineError(ATTN_ERR_OPTION, `model.walkthrough: format: expected ${FORMAT_CHOICES}, got ${
      typeof format === 'string' ? JSON.stringify(format) : describe(format)}`);
  }
  const tokens = tokensOf('model.walkthrough', options);
  const { engine } = core;
  return call(session, 'walkthrough', (memory, check) => {
    const slot = memory.bytes(4);
    check(engine.attn_model_head_problem(model, slot, memory.ints(tokens.length > 0 ? tokens : [0], 'ids'),
                                         tokens.length, layer, index));
    const problem = core.readU32(slot);
    try {
      const text = core.formatted(engine.attn_problem_format, problem, FORMATS[format], memory,
                                  (status) => core.engineError(status,
                                                               core.readCString(engine.attn_problem_error(problem))));
      if (format === 'steps') return parseSteps(text);
      return format === 'json' ? parseResult(text) : text;
    } finally {
      engine.attn_problem_destroy(problem);
    }
  });
}
