// createTrainer: a tiny transformer learning a task (attn_trainer_*,
// attention.h "Training"), held by the engine and driven from here. Not in
// attention-page.wasm, the page's module without the trainer.

import { AttentionError, inputError } from './errors.js';
import { adopt, release } from './handles.js';
import { checkWhole, describe, isList, readInput } from './describe-input.js';
import {
  ATTN_ERR_INPUT, ATTN_ERR_OPTION, ATTN_ERR_RANGE, ATTN_ERR_STATE, ATTN_TRAINER_HELD_OUT, TRAINER_SETTINGS,
  TRAINER_TASKS,
} from './engine-constants.js';

// The settings that may be booleans, and that config gives as booleans.
const FLAG_SETTINGS = ['scale', 'causal'];

export function createTrainer(core, options = {}) {
  if (options === null || typeof options !== 'object' || isList(options)) {
    throw inputError(`createTrainer: expected an object of settings, got ${describe(options)}`);
  }
  const { engine } = core;
  if (typeof engine.attn_trainer_create !== 'function') {
    // build.sh's attention-page.wasm: the page's first load, which trains in a worker on attention.wasm.
    throw new AttentionError('createTrainer: this engine module was built without the trainer; load attention.wasm', ATTN_ERR_STATE);
  }
  // Read once, here: a getter that throws is named by its setting.
  const { task, ...settings } = Object.fromEntries(Object.keys(options).map((name) => [name,
      readInput(name, () => options[name])]));
  if (typeof task !== 'string' || !TRAINER_TASKS.includes(task)) {
    throw core.engineError(ATTN_ERR_OPTION, `task: expected one of ${TRAINER_TASKS.join(', ')}, got ${describe(task)}`);
  }
  const trainer = core.withMemory((memory) => {
    const slot = memory.bytes(4);
    const created = engine.attn_trainer_create(slot, memory.string(task, 'task'), 0);
    if (created !== 0) throw core.engineError(created);
    const made = core.readU32(slot);
    try {
      // The model it builds counts against maxBytes like a problem does.
      engine.attn_trainer_set_max_bytes(made, core.maxBytes);
      applySettings(core, made, settings, memory);
      // Builds the model now, so that settings that do not fit together
      // (heads that do not divide dModel, ...) throw here.
      const ints = memory.bytes(12 * 32);
      const status = engine.attn_trainer_example(made, ints, ints + 128, ints + 256, 0);
      if (status !== 0) throw trainerError(core, made, status);
    } catch (error) {
      engine.attn_trainer_destroy(made);
      throw error;
    }
    return made;
  });
  return trainerApi(core, task, trainer);
}

function applySettings(core, trainer, settings, memory) {
  for (const [name, value] of Object.entries(settings)) {
    if (value === undefined) continue;
    if (!TRAINER_SETTINGS.includes(name)) {
      throw core.engineError(ATTN_ERR_INPUT, `${name}: unknown setting (settings: ${TRAINER_SETTINGS.join(', ')})`);
    }
    const number = typeof value === 'boolean' && FLAG_SETTINGS.includes(name) ? Number(value) : value;
    if (typeof number !== 'number') {
      throw core.engineError(ATTN_ERR_INPUT, `${name}: expected a number${FLAG_SETTINGS.includes(name) ? ' or a boolean' : ''}, got ${describe(value)}`);
    }
    const status = core.engine.attn_trainer_set(trainer, memory.string(name, name), number);
    if (status !== 0) throw trainerError(core, trainer, status);
  }
}

function trainerError(core, trainer, status) {
  return core.engineError(status, core.readCString(core.engine.attn_trainer_error(trainer)));
}

// The trainer's methods, each given `session`: { core, trainer (its
// pointer), handle, config }. The handle (handles.js) is what keeps the
// trainer: a method kept on its own (const { step } = trainer) keeps it too.
function trainerApi(core, task, trainer) {
  const handle = adopt(core, 'attn_trainer_destroy', trainer);
  const session = { core, trainer, handle, config: null };
  const config = { task };
  for (const name of TRAINER_SETTINGS) {
    const value = setting(session, name);
    config[name] = FLAG_SETTINGS.includes(name) ? value === 1 : value;
  }
  session.config = Object.freeze(config);
  return Object.freeze({
    config: session.config,
    /** n Adam steps on fresh batches: { step (in all), loss (the last batch's) }. */
    step: (n = 1) => step(session, n),
    /** Loss and token accuracy on the held-out set. */
    evaluate: () => evaluate(session),
    example: (index) => example(session, index),
    predict: (tokens) => predict(session, tokens),
    head: (layer, index, tokens) => head(session, layer, index, tokens),
    /** The attention weights of one head on held-out example `index`. */
    attention: (layer, index, exampleIndex = 0) => attention(session, layer, index, exampleIndex),
    dispose: () => dispose(session),
  });
}

// Calls the engine with scratch memory: body(memory, check), where
// check(status) throws the trainer's error as an AttentionError.
function call({ core, trainer, handle }, name, body) {
  if (!handle.live) throw new AttentionError(`trainer.${name}: this trainer was disposed`, ATTN_ERR_STATE);
  return core.withMemory((memory) => body(memory, (status) => {
    if (status !== 0) throw trainerError(core, trainer, status);
  }));
}

function setting(session, name) {
  const { core, trainer } = session;
  return call(session, 'config', (memory, check) => {
    const slot = memory.bytes(8);
    check(core.engine.attn_trainer_get(trainer, memory.string(name, name), slot));
    return core.readDouble(slot);
  });
}

function step(session, n) {
  const { core, trainer } = session;
  checkWhole('trainer.step', 'n', n, 1, 1e6);
  const loss = call(session, 'step', (memory, check) => {
    const slot = memory.bytes(8);
    check(core.engine.attn_trainer_step(trainer, n, slot));
    return core.readDouble(slot);
  });
  return { step: setting(session, 'step'), loss };
}

function evaluate(session) {
  const { core, trainer } = session;
  return call(session, 'evaluate', (memory, check) => {
    const slots = memory.bytes(16);
    check(core.engine.attn_trainer_evaluate(trainer, slots, slots + 8));
    return { loss: core.readDouble(slots), accuracy: core.readDouble(slots + 8) };
  });
}

function example(session, index) {
  const { core, trainer, config: { seqLength: length } } = session;
  checkWhole('trainer.example', 'index', index, 0, ATTN_TRAINER_HELD_OUT - 1);
  return call(session, 'example', (memory, check) => {
    const ints = memory.bytes(12 * length);
    check(core.engine.attn_trainer_example(trainer, ints, ints + 4 * length, ints + 8 * length, index));
    return {
      tokens: core.readInts(ints, length),
      targets: core.readInts(ints + 4 * length, length),
      counted: core.readInts(ints + 8 * length, length).map(Boolean),
    };
  });
}

// The length first, in the engine's words: a list of 2^32 - 1 was
// once walked entry by entry (minutes) before its size was refused.
// Each token is checked here as the number it is: the engine's int would
// take 2^32 + 1 as 1.
function checkTokens({ core, config: { seqLength: length, vocab } }, caller, tokens) {
  if (isList(tokens) && tokens.length > length) {
    throw core.engineError(ATTN_ERR_RANGE, `${caller}: tokens: the model reads 1 to seqLength = ${length} tokens, got ${tokens.length}`);
  }
  if (!isList(tokens) || tokens.length === 0 || !tokens.every((t) => Number.isInteger(t))) {
    throw inputError(`${caller}: tokens: expected a list of 1 to ${length} whole numbers, got ${describe(tokens)}`);
  }
  const outside = tokens.findIndex((token) => token < 0 || token >= vocab);
  if (outside >= 0) {
    // The engine's own words for a token it does not know.
    throw core.engineError(ATTN_ERR_RANGE, `tokens[${outside}]: must be from 0 to vocab - 1 = ${vocab - 1}, got ${tokens[outside]}`);
  }
}

function predict(session, tokens) {
  const { core, trainer, config: { layers, heads } } = session;
  checkTokens(session, 'trainer.predict', tokens);
  const n = tokens.length;
  return call(session, 'predict', (memory, check) => {
    const input = memory.ints(tokens, 'tokens');
    const predicted = memory.bytes(4 * n);
    const weightCount = layers * heads * n * n;
    const weights = memory.bytes(8 * weightCount);
    check(core.engine.attn_trainer_predict(trainer, predicted, weights, input, n));
    const flat = core.copyDoubles(weights, weightCount);
    const attention = Array.from({ length: layers }, (_, l) => Array.from({ length: heads }, (_, h) => (
      Array.from({ length: n }, (_, i) => Array.from(flat.subarray(((l * heads + h) * n + i) * n,
          ((l * heads + h) * n + i + 1) * n))))));
    return { predicted: core.readInts(predicted, n), attention };
  });
}

/** The queries, keys and values one head attends with on tokens. */
function head(session, layer, index, tokens) {
  const { core, trainer, config } = session;
  checkWhole('trainer.head', 'layer', layer, 0, config.layers - 1);
  checkWhole('trainer.head', 'head', index, 0, config.heads - 1);
  checkTokens(session, 'trainer.head', tokens);
  const n = tokens.length;
  const width = config.dModel / config.heads;
  return call(session, 'head', (memory, check) => {
    const input = memory.ints(tokens, 'tokens');
    const [q, k, v] = [0, 1, 2].map(() => memory.bytes(8 * n * width));
    check(core.engine.attn_trainer_head(trainer, q, k, v, input, n, layer, index));
    const rows = (pointer) => Array.from({ length: n },
        (_, i) => Array.from(core.copyDoubles(pointer + 8 * i * width, width)));
    return { q: rows(q), k: rows(k), v: rows(v) };
  });
}

function attention(session, layer, index, exampleIndex) {
  const { config } = session;
  checkWhole('trainer.attention', 'layer', layer, 0, config.layers - 1);
  checkWhole('trainer.attention', 'head', index, 0, config.heads - 1);
  return predict(session, example(session, exampleIndex).tokens).attention[layer][index];
}

function dispose({ core, handle }) {
  release(core, 'attn_trainer_destroy', handle);
}
