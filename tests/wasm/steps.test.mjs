// The walkthrough as data (attn.steps): every equation of every step is
// true by construction. Each expression of an equation's chain is
// evaluated here from its terms, independently of the engine, and must
// give the equation's result; every number that names a cell of an input or
// a result must be that cell's value; every operation's value must be what
// its operands give. Run on every preset and on random problems of every
// kind and option (scales none, √d_k and a factor; every mask; dropout;
// batches; softmax-only; weighted-sum-only; scores given; projections and
// several heads; the transformer block, post- and pre-norm).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { presetInput } from '../../web/presets.js';
import { loadEngine, nativeCli, haveNativeCli, randomSource, repoRoot, runNative } from './support.mjs';
import { randomProblems } from './problems.mjs';

const RELATIVE = 1e-12;

/** The value of a node from its operands: a number, or an array for a vector. */
function evaluate(node) {
  if (!node.op) return node.v;
  const args = node.args.map(evaluate);
  const both = (a, b, f) => (Array.isArray(a) ? a.map((x, i) => f(x, Array.isArray(b) ? b[i] : b))
    : Array.isArray(b) ? b.map((y) => f(a, y)) : f(a, b));
  switch (node.op) {
    case 'add': return args.reduce((a, b) => both(a, b, (x, y) => x + y));
    case 'sub': return both(args[0], args[1], (x, y) => x - y);
    case 'mul': return both(args[0], args[1], (x, y) => x * y);
    case 'div': return both(args[0], args[1], (x, y) => x / y);
    case 'exp': return Math.exp(args[0]);
    case 'max': return Math.max(...args);
    case 'sqrt': return Math.sqrt(args[0]);
    case 'tanh': return Math.tanh(args[0]);
    case 'phi': return args[0] > 0 ? args[0] + 1 : Math.exp(args[0]);
    case 'vec': return args;
    default: throw new Error(`unknown operation ${node.op}`);
  }
}

/** The largest magnitude met while evaluating, for a tolerance. */
function magnitude(node) {
  const own = node.v === undefined || !Number.isFinite(node.v) ? 0 : Math.abs(node.v);
  return Math.max(own, ...(node.args ?? []).map(magnitude));
}

function assertSame(actual, expected, scale, where) {
  if (Array.isArray(expected) || Array.isArray(actual)) {
    assert.ok(Array.isArray(actual) && Array.isArray(expected) && actual.length === expected.length,
      `${where}: ${JSON.stringify(actual)} is not shaped like ${JSON.stringify(expected)}`);
    actual.forEach((x, i) => assertSame(x, expected[i], scale, `${where}[${i}]`));
    return;
  }
  if (!Number.isFinite(expected)) {
    assert.ok(Object.is(actual, expected), `${where}: ${actual}, expected ${expected}`);
    return;
  }
  assert.ok(Math.abs(actual - expected) <= RELATIVE * Math.max(1, scale),
    `${where}: evaluates to ${actual}, the engine says ${expected}`);
}

/** A tensor's cell by a ref [name, i, ...]: from the results or the input's fields. */
function cellOf(input, result, ref) {
  const [name, ...index] = ref;
  const heads = /^heads\.(\d+)\.(.+)$/.exec(name);
  let tensor = heads ? result.heads?.[Number(heads[1])]?.[heads[2]] : (result[name] ?? input[name]);
  if (tensor === undefined || typeof tensor === 'string') return undefined;
  for (const i of index) {
    if (!Array.isArray(tensor)) return undefined;
    tensor = tensor[i];
  }
  return typeof tensor === 'number' ? tensor : undefined;
}

function checkNode(node, input, result, where) {
  for (const [k, arg] of (node.args ?? []).entries()) checkNode(arg, input, result, `${where}.${node.op}[${k}]`);
  if (node.op && node.v !== undefined) assertSame(evaluate(node), node.v, magnitude(node), `${where} (${node.op})`);
  if (node.ref && node.v !== undefined) {
    const cell = cellOf(input, result, node.ref);
    const value = cell === true ? 1 : cell;
    if (value !== undefined) assert.ok(Object.is(value, node.v), `${where}: ${node.ref.join(',')} is ${value}, the step says ${node.v}`);
  }
}

/** Every equation of every step holds; returns how many were checked. */
function checkSteps(engine, input, name) {
  const { result, steps } = engine.walkthrough(input);
  assert.ok(steps.steps.length > 0, `${name}: no steps`);
  const ids = new Set();
  let equations = 0;
  for (const step of steps.steps) {
    assert.ok(!ids.has(step.id), `${name}: step id ${step.id} twice`);
    ids.add(step.id);
    assert.ok(step.title && step.text?.length > 0, `${name} ${step.id}: a title and a sentence`);
    for (const equation of step.equations ?? []) {
      const where = `${name} ${step.id} ${equation.label}`;
      const last = equation.chain[equation.chain.length - 1];
      const target = evaluate(last);
      for (const [c, node] of equation.chain.entries()) {
        checkNode(node, input, result, `${where} chain[${c}]`);
        assertSame(evaluate(node), target, magnitude(node), `${where} chain[${c}]`);
      }
      equations++;
    }
  }
  return equations;
}

test('every equation of every preset\u2019s walkthrough holds at full precision', async () => {
  const engine = await loadEngine();
  const presets = JSON.parse(await readFile(join(repoRoot, 'web/presets.json'), 'utf8'));
  let equations = 0;
  for (const preset of presets.presets) equations += checkSteps(engine, presetInput(preset), preset.id);
  assert.ok(equations > 500, `only ${equations} equations checked`);
});

test('every equation holds on random problems of every kind and option', async () => {
  const engine = await loadEngine();
  const r = randomSource(91);
  const extra = [
    { kind: 'scaledDotProduct', q: r.matrix(3, 2), k: r.matrix(4, 2), v: r.matrix(4, 3), dropout: 0.4, seed: 7 },
    { kind: 'softmax', x: r.matrix(3, 4, -5, 5), mask: [[true, false, true, true], [false, false, false, false], [true, true, true, false]] },
    { kind: 'multiHead', x: r.matrix(3, 4), numHeads: 2, wq: r.matrix(4, 4), wk: r.matrix(4, 4), wv: r.matrix(4, 4), wo: r.matrix(4, 4), mask: 'causal' },
  ];
  const block = {
    kind: 'transformerBlock', x: r.matrix(3, 4), numHeads: 2, wq: r.matrix(4, 4), wk: r.matrix(4, 4), wv: r.matrix(4, 4),
    wo: r.matrix(4, 4), gamma1: r.vector(4), beta1: r.vector(4), w1: r.matrix(4, 6), b1: r.vector(6), w2: r.matrix(6, 4),
    b2: r.vector(4), gamma2: r.vector(4), beta2: r.vector(4),
  };
  extra.push(block, { ...block, norm: 'pre' });
  for (let seed = 1; seed <= 8; seed++) {
    for (const [i, input] of [...randomProblems(seed), ...(seed === 1 ? extra : [])].entries()) {
      checkSteps(engine, input, `seed ${seed} problem ${i} (${input.kind})`);
    }
  }
});

test('build/attn --format steps prints the same steps as attn.steps', { skip: !haveNativeCli() && `${nativeCli} missing` }, async () => {
  const engine = await loadEngine();
  for (const input of randomProblems(3)) {
    const native = JSON.parse(runNative(input, 'steps').stdout, (key, value) => (key === 'v' && value === null ? -Infinity : value));
    assert.deepEqual(native.steps.map((s) => [s.id, s.title]), engine.steps(input).steps.map((s) => [s.id, s.title]));
  }
});
