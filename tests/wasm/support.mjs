// Shared by tests/wasm/*.test.mjs: the engine, numeric comparison, the
// native CLI and a seeded random source.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAttention } from '../../web/lib/attention-node.js';
import { seededRandom } from '../../web/presets.js';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const wasmPath = fileURLToPath(new URL('../../web/lib/attention.wasm', import.meta.url));
export const nativeCli = fileURLToPath(new URL('../../build/attn', import.meta.url));

let engine;
/** The engine, loaded once per test file. */
export function loadEngine() {
  engine ??= loadAttention();
  return engine;
}

/**
 * Asserts that `actual` matches `expected` entry by entry: numbers within
 * tolerance × max(1, |expected|), infinities exactly, every key of an
 * expected object present (extra keys in `actual` are fine), arrays of the
 * same length. Throws an Error naming the first path that differs.
 */
export function assertClose(actual, expected, tolerance, path = 'result') {
  if (typeof expected === 'number') {
    if (typeof actual !== 'number') fail(path, `expected ${expected}, got ${show(actual)}`);
    if (!Number.isFinite(expected) || !Number.isFinite(actual)) {
      if (!Object.is(actual, expected)) fail(path, `expected ${expected}, got ${actual}`);
      return;
    }
    const difference = Math.abs(actual - expected);
    if (!(difference <= tolerance * Math.max(1, Math.abs(expected)))) {
      fail(path, `expected ${expected}, got ${actual} (difference ${difference.toExponential(2)})`);
    }
  } else if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) fail(path, `expected an array, got ${show(actual)}`);
    if (actual.length !== expected.length) {
      fail(path, `expected ${expected.length} entries, got ${actual.length}`);
    }
    expected.forEach((item, i) => assertClose(actual[i], item, tolerance, `${path}[${i}]`));
  } else if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object') fail(path, `expected an object, got ${show(actual)}`);
    for (const key of Object.keys(expected)) {
      if (!(key in actual)) fail(path, `has no "${key}"`);
      assertClose(actual[key], expected[key], tolerance, `${path}.${key}`);
    }
  } else if (actual !== expected) {
    fail(path, `expected ${show(expected)}, got ${show(actual)}`);
  }
}

function fail(path, message) {
  throw new Error(`${path}: ${message}`);
}

function show(value) {
  return JSON.stringify(value) ?? String(value);
}

/** JSON null stands for -Infinity (a masked entry) in expected results. */
export function nullsToMinusInfinity(value) {
  if (value === null) return -Infinity;
  if (Array.isArray(value)) return value.map(nullsToMinusInfinity);
  if (typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, nullsToMinusInfinity(v)]));
  }
  return value;
}

export const haveNativeCli = () => existsSync(nativeCli);

/** Runs build/attn on `input` (a problem object, sent as JSON on stdin). */
export function runNative(input, format = 'json') {
  const child = spawnSync(nativeCli, ['--format', format], {
    input: JSON.stringify(input),
    encoding: 'utf8',
    cwd: repoRoot,
  });
  if (child.error) throw child.error;
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

/** A seeded generator of uniform numbers in [low, high) (the presets' mulberry32). */
export function randomSource(seed) {
  const next = seededRandom(seed);
  const uniform = (low = -1, high = 1) => low + (high - low) * next();
  return {
    uniform,
    integer: (low, high) => low + Math.floor(next() * (high - low + 1)),
    matrix: (rows, cols, low, high) =>
      Array.from({ length: rows }, () => Array.from({ length: cols }, () => uniform(low, high))),
    vector: (length, low, high) => Array.from({ length }, () => uniform(low, high)),
  };
}
