// The editable inputs of one walkthrough ("problems"): made from a preset,
// resized, filled with seeded random numbers, switched between the ways of
// starting (X with weights, Q/K/V, scores), and read back from a link.
// Only inputs are made here; every result comes from the engine.

import { identity } from './walkthrough-steps.js';
import { presetInput, randomMatrix, seededRandom, uniformDraws } from '../presets.js';

export const SDPA_MODES = ['projections', 'qkv', 'scores'];
const WALKTHROUGH_MODES = ['projections', 'qkv', 'scores', 'softmax', 'weightedSum'];
export const MAX_TOKENS = 12;
export const MAX_WIDTH = 16;
export const MAX_LABEL = 24;

const asMatrix = (value) => (Array.isArray(value) && !Array.isArray(value[0]) ? [value] : value);
const numbered = (prefix, n, from = 0) => Array.from({ length: n }, (_, i) => `${prefix}${from + i + 1}`);

function defaultLabels(mode, axis, n, from = 0) {
  if (mode === 'softmax') return axis === 'q' ? (n === 1 ? ['x'] : numbered('row ', n, from)) : numbered('', n, from);
  if (mode === 'weightedSum' && axis === 'q') return numbered('out ', n, from);
  return numbered('#', n, from);
}

export function fitLabels(labels, n, mode, axis) {
  const kept = (labels ?? []).slice(0, n);
  return kept.concat(defaultLabels(mode, axis, n - kept.length, kept.length));
}

/** The matrix fields a mode's learner edits, with their shapes from the sizes. */
export function shapesOf(mode, dims, fields) {
  // Self-attention has one size T for queries and keys.
  const { nq, nk } = countsOf(mode, dims);
  switch (mode) {
    case 'projections': return { x: [dims.T, dims.din], wq: [dims.din, dims.dk], wk: [dims.din, dims.dk], wv: [dims.din, dims.dk] };
    case 'qkv': return { q: [nq, dims.dk], k: [nk, dims.dk], v: [nk, dims.dv] };
    case 'scores': return fields.v ? { scores: [nq, nk], v: [nk, dims.dv] } : { scores: [nq, nk] };
    case 'softmax': return { x: [dims.rows, dims.entries] };
    default: return { weights: [nq, nk], v: [nk, dims.dv] };
  }
}

export function dimsOf(problem) {
  const f = problem.fields;
  switch (problem.mode) {
    case 'projections': return { T: f.x.length, din: f.x[0].length, dk: f.wq[0].length };
    case 'qkv': return problem.self
      ? { T: f.q.length, dk: f.q[0].length, dv: f.v[0].length }
      : { nq: f.q.length, nk: f.k.length, dk: f.q[0].length, dv: f.v[0].length };
    case 'scores': return {
      ...(problem.self ? { T: f.scores.length } : { nq: f.scores.length, nk: f.scores[0].length }),
      ...(f.v ? { dv: f.v[0].length } : {}),
    };
    case 'softmax': return { rows: f.x.length, entries: f.x[0].length };
    default: return { nq: f.weights.length, nk: f.v.length, dv: f.v[0].length };
  }
}

export function countsOf(mode, dims) {
  if (mode === 'softmax') return { nq: dims.rows, nk: dims.entries };
  return { nq: dims.T ?? dims.nq, nk: dims.T ?? dims.nk };
}

export function reshape(matrix, rows, cols, fill) {
  return Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => matrix?.[i]?.[j] ?? fill));
}

/**
 * The presets the walkthrough shows: those of its modes, one head at most
 * (the others belong to other sections: several heads, Bahdanau, ...).
 */
export function walkthroughPresets(presets) {
  return presets.presets.filter((preset) => WALKTHROUGH_MODES.includes(preset.mode)
    && !(preset.mode === 'projections' && preset.input.numHeads > 1));
}

export function problemFromPreset(preset) {
  const { kind: _kind, tokens, queryTokens, keyTokens, numHeads: _heads, ...fields } = presetInput(preset);
  const mode = preset.mode;
  const problem = { mode, fields, vector: false, self: false };
  if (mode === 'softmax') {
    problem.vector = !Array.isArray(fields.x[0]);
    fields.x = asMatrix(fields.x);
    if (Array.isArray(fields.mask)) fields.mask = asMatrix(fields.mask);
  }
  const { nq, nk } = countsOf(mode, { ...dimsOfRaw(mode, fields) });
  problem.self = mode === 'projections' || (SDPA_MODES.includes(mode) && nq === nk && !keyTokens);
  const shared = tokens?.length === nq ? tokens : undefined;
  problem.qTokens = fitLabels(queryTokens ?? shared ?? (mode === 'softmax' ? undefined : tokens), nq, mode, 'q');
  problem.kTokens = problem.self ? problem.qTokens : fitLabels(keyTokens ?? (mode === 'softmax' ? tokens : shared), nk, mode, 'k');
  return problem;
}

// Sizes before `self` is known (rows and columns of the mode's inputs).
function dimsOfRaw(mode, f) {
  switch (mode) {
    case 'projections': return { T: f.x.length };
    case 'qkv': return { nq: f.q.length, nk: f.k.length };
    case 'scores': return { nq: f.scores.length, nk: f.scores[0].length };
    case 'softmax': return { rows: f.x.length, entries: f.x[0].length };
    default: return { nq: f.weights.length, nk: f.v.length };
  }
}

export function resized(problem, dims) {
  const fields = { ...problem.fields };
  for (const [name, [rows, cols]] of Object.entries(shapesOf(problem.mode, dims, fields))) {
    fields[name] = reshape(fields[name], rows, cols, 0);
  }
  const { nq, nk } = countsOf(problem.mode, dims);
  if (Array.isArray(fields.mask)) fields.mask = reshape(fields.mask, nq, nk, true);
  if (typeof fields.keyLength === 'number') fields.keyLength = Math.min(fields.keyLength, nk);
  if (problem.mode === 'projections' && fields.wo) delete fields.wo; // identity of the new width
  const next = { ...problem, fields, vector: problem.vector && nq === 1 };
  next.qTokens = fitLabels(problem.qTokens, nq, problem.mode, 'q');
  next.kTokens = problem.self ? next.qTokens : fitLabels(problem.kTokens, nk, problem.mode, 'k');
  return next;
}

// Inputs with one decimal in [-range, range]: easy to read and to type.
function randomInputs(random, rows, cols, range = 2) {
  return randomMatrix(uniformDraws(random, range), rows, cols, 1);
}

export function randomFilled(problem, seed) {
  const random = seededRandom(seed);
  const fields = { ...problem.fields };
  for (const [name, [rows, cols]] of Object.entries(shapesOf(problem.mode, dimsOf(problem), fields))) {
    fields[name] = name === 'weights'
      ? randomMatrix(random, rows, cols, 2)
      : randomInputs(random, rows, cols, problem.mode === 'softmax' ? 4 : 2);
  }
  if (problem.mode === 'projections') delete fields.wo;
  return { ...problem, fields };
}

/** The problem in another of the SDPA modes, starting from the current numbers. */
export function convertedProblem(problem, model, mode, seed) {
  const random = seededRandom(seed);
  const f = problem.fields;
  const m = model.mats;
  const options = {};
  for (const key of ['mask', 'scale', 'keyLength', 'window', 'stride']) if (f[key] !== undefined) options[key] = f[key];
  const nq = problem.qTokens.length;
  const nk = problem.kTokens.length;
  let fields;
  if (mode === 'qkv') {
    fields = m.q ? { q: m.q.values, k: m.k.values, v: m.v.values }
      : { q: randomInputs(random, nq, 2), k: randomInputs(random, nk, 2),
          v: m.v?.values ?? randomInputs(random, nk, 2) };
  } else if (mode === 'scores') {
    fields = { scores: m.scores.values, v: m.v.values };
    // The scale of Q Kᵀ divides by √d_k with d_k the width of Q.
    if (f.scale === undefined && m.q) fields.dk = m.q.values[0].length;
    else if (f.scale === undefined && f.dk !== undefined) fields.dk = f.dk;
  } else {
    const x = m.q ? m.q.values : randomInputs(random, nq, 2);
    const width = x[0].length;
    fields = { x, wq: identity(width), wk: identity(width), wv: identity(width) };
  }
  return { ...problem, mode, fields: { ...fields, ...options } };
}

/** A problem from the edited values in a link, or null when they do not fit. */
export function problemFromValues(values, base) {
  if (!values || typeof values !== 'object') return null;
  const mode = values.mode;
  const family = SDPA_MODES.includes(base.mode) ? SDPA_MODES : [base.mode];
  if (!family.includes(mode) || !values.fields || typeof values.fields !== 'object') return null;
  const allowed = new Set(['x', 'wq', 'wk', 'wv', 'wo', 'q', 'k', 'v', 'scores', 'weights', 'dk', 'mask', 'scale', 'keyLength', 'window', 'stride']);
  const fields = {};
  for (const [key, value] of Object.entries(values.fields)) {
    if (!allowed.has(key)) return null;
    if (Array.isArray(value) && (value.length > MAX_WIDTH ||
        value.some((row) => Array.isArray(row) && row.length > MAX_WIDTH))) return null;
    fields[key] = value;
  }
  const counts = dimsOfRawSafe(mode, fields);
  if (!counts) return null;
  const labels = (raw, n, axis) => fitLabels(Array.isArray(raw) ? raw.filter((t) => typeof t === 'string').map((t) => t.slice(0, MAX_LABEL)) : [], n, mode, axis);
  const { nq, nk } = countsOf(mode, counts);
  const self = mode === 'projections' || (SDPA_MODES.includes(mode) && nq === nk && !values.keyTokens);
  const qTokens = labels(values.tokens, nq, 'q');
  return { mode, fields, vector: Boolean(values.vector) && nq === 1, self, qTokens, kTokens: self ? qTokens : labels(values.keyTokens, nk, 'k') };
}

function dimsOfRawSafe(mode, fields) {
  try {
    const dims = dimsOfRaw(mode, fields);
    return Object.values(dims).every((n) => Number.isInteger(n) && n >= 1) ? dims : null;
  } catch {
    return null;
  }
}
