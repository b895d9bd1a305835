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
    wo: r.matrix(4, 4), gamma1: r.vector(4), beta1: r.vector(4), w1: r.matrix(4, 6), b1: r.vector(6),
        w2: r.matrix(6, 4),
    b2: r.vector(4), gamma2: r.vector(4), beta2: r.vector(4),
  };
  extra.push(block, { ...block, norm: 'pre' });
  for (let seed = 1; seed <= 8; seed++) {
    for (const [i, input] of [...randomProblems(seed), ...(seed === 1 ? extra : [])].entries()) {
      checkSteps(engine, input, `seed ${seed} problem ${i} (${input.kind})`);
    }
  }
});

/** Backward-pass problems: a target, a given gradOutput with a causal mask, no scale. */
function backwardProblems(r) {
  const base = { kind: 'scaledDotProduct', q: r.matrix(3, 2), k: r.matrix(4, 2), v: r.matrix(4, 3) };
  return [
    { ...base, target: r.matrix(3, 3) },
    { ...base, k: r.matrix(3, 2), v: r.matrix(3, 3), mask: 'causal', gradOutput: r.matrix(3, 3) },
    { ...base, scale: false, target: r.matrix(3, 3) },
  ];
}

const matmul = (a, b) => a.map((row) => b[0].map((_, c) => row.reduce((s, x, t) => s + x * b[t][c], 0)));
const transpose = (a) => a[0].map((_, c) => a.map((row) => row[c]));

/** The backward pass of scaled dot-product attention, in plain JS. */
function backwardByHand({ q, k, v, target, gradOutput, mask, scale }) {
  const c = scale === false ? 1 : 1 / Math.sqrt(q[0].length);
  const scaled = matmul(q, transpose(k)).map((row, i) => row.map((x, j) => (mask === 'causal' && j > i ? -Infinity : x * c)));
  const p = scaled.map((row) => {
    const m = Math.max(...row);
    const e = row.map((x) => Math.exp(x - m));
    const sum = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / sum);
  });
  const output = matmul(p, v);
  const dO = gradOutput ?? output.map((row, i) => row.map((x, j) => x - target[i][j]));
  const dP = matmul(dO, transpose(v));
  const dS = dP.map((row, i) => {
    const average = row.reduce((s, x, j) => s + x * p[i][j], 0);
    return row.map((x, j) => p[i][j] * (x - average));
  });
  return {
    gradOutput: dO, gradV: matmul(transpose(p), dO), gradWeights: dP, gradScaled: dS,
    gradQ: matmul(dS, k).map((row) => row.map((x) => x * c)),
    gradK: matmul(transpose(dS), q).map((row) => row.map((x) => x * c)),
  };
}

test('every equation of the backward steps holds, with a target, a mask and no scale', async () => {
  const engine = await loadEngine();
  const r = randomSource(17);
  for (const [i, input] of backwardProblems(r).entries()) {
    const { steps } = engine.walkthrough(input);
    const ids = steps.steps.map((step) => step.id);
    for (const id of ['grad-output', 'grad-v', 'grad-weights', 'grad-scaled', 'grad-q', 'grad-k']) {
      assert.ok(ids.includes(id), `backward problem ${i}: no step ${id}`);
    }
    checkSteps(engine, input, `backward problem ${i}`);
  }
});

test('the backward steps compute dO, dV, dP, dS, dQ and dK as the engine\u2019s gradients and a computation by hand say', async () => {
  const engine = await loadEngine();
  const r = randomSource(23);
  const stepTensor = { 'grad-output': 'gradOutput', 'grad-v': 'gradV', 'grad-weights': 'gradWeights', 'grad-scaled': 'gradScaled', 'grad-q': 'gradQ', 'grad-k': 'gradK' };
  for (const [i, input] of backwardProblems(r).entries()) {
    const { result, steps } = engine.walkthrough(input);
    const byHand = backwardByHand(input);
    let cells = 0;
    for (const step of steps.steps) {
      const tensor = stepTensor[step.id.replace(/-others$/, '')];
      if (!tensor) continue;
      for (const equation of step.equations ?? []) {
        const [name, row, column] = equation.chain[equation.chain.length - 1].ref;
        assert.equal(name, tensor);
        const value = evaluate(equation.chain[0]);
        assertSame(value, result[tensor][row][column], 1, `problem ${i} ${equation.label} (engine)`);
        assert.ok(Math.abs(value - byHand[tensor][row][column]) < 1e-12, `problem ${i} ${equation.label}: ${value}, by hand ${byHand[tensor][row][column]}`);
        cells++;
      }
    }
    const [nQ, nK, dK, dV] = [input.q.length, input.k.length, input.q[0].length, input.v[0].length];
    assert.equal(cells, (input.target ? nQ * dV : 0) + nK * dV + 2 * nQ * nK + nQ * dK + nK * dK, `problem ${i}: an equation per cell`);
    if (input.target) {
      assert.equal(steps.steps.find((s) => s.id === 'grad-output').equations.length, dV, `problem ${i}: dO's first row`);
      assert.equal(steps.steps.find((s) => s.id === 'grad-output-others').equations.length, (nQ - 1) * dV);
    }
  }
});

test('a target shaped unlike the output is an error naming the field and the shape expected', async () => {
  const engine = await loadEngine();
  const input = { kind: 'scaledDotProduct', q: [[1, 0], [0, 1]], k: [[1, 1], [0, 1]], v: [[1, 2], [3, 4]], target: [[1, 2]] };
  assert.throws(() => engine.run(input), {
    message: 'target: expected a matrix with 2 rows (n_q, the rows of q) and 2 columns (d_v, the columns of v), got 1x2',
  });
  assert.throws(() => engine.run({ ...input, target: [[1, 2], [3, 4]], gradOutput: [[1, 0], [0, 1]] }), { message: /^target: give either target/ });
});

test('build/attn --format steps prints the same steps as attn.steps', { skip: !haveNativeCli() && `${nativeCli} missing` }, async () => {
  const engine = await loadEngine();
  for (const input of randomProblems(3)) {
    const native = JSON.parse(runNative(input, 'steps').stdout, (key, value) => (key === 'v' && value === null ? -Infinity : value));
    assert.deepEqual(native.steps.map((s) => [s.id, s.title]), engine.steps(input).steps.map((s) => [s.id, s.title]));
  }
});

// What the page loads for an edit: the steps without their equations, and
// then only the equations of the step it shows.
test('the outline and each step\u2019s equations on demand are the whole step list, every preset and random problem', async () => {
  const engine = await loadEngine();
  const presets = JSON.parse(await readFile(join(repoRoot, 'web/presets.json'), 'utf8'));
  const inputs = [...presets.presets.map(presetInput), ...randomProblems(17)];
  let steps = 0;
  for (const input of inputs) {
    const full = engine.walkthrough(input);
    const outline = engine.walkthrough(input, { equations: false });
    assert.deepEqual(outline.result, full.result);
    assert.equal(outline.steps.steps.length, full.steps.steps.length);
    full.steps.steps.forEach(({ equations = [], ...rest }, index) => {
      const { equationCount, ...shown } = outline.steps.steps[index];
      const where = `${input.kind}, step ${index + 1}`;
      assert.deepEqual(shown, rest, where);
      assert.equal(equationCount, equations.length > 0 ? equations.length : undefined, where);
      assert.deepEqual(engine.stepEquations(input, index + 1), equations, where);
      steps += 1;
    });
  }
  assert.ok(steps > 400, `only ${steps} steps compared`);
});

test('a step the walkthrough does not have is refused with the steps it has', async () => {
  const engine = await loadEngine();
  const input = { kind: 'softmax', x: [1, 2, 3] };
  const count = engine.steps(input).steps.length;
  assert.throws(() => engine.stepEquations(input, count + 1), { status: 6, message: `step: expected a step from 1 to ${count}, got ${count + 1}` });
  assert.throws(() => engine.stepEquations(input, 0), { status: 6, message: `step: expected a step from 1 to ${count}, got 0` });
  assert.throws(() => engine.stepEquations(input, 1.5), { status: 6, message: 'step: expected a step number from 1, got 1.5' });
  assert.throws(() => engine.walkthrough(input, { equations: 'no' }), { message: 'walkthrough: equations must be true or false, got "no"' });
});

// The point sooner: the first dot product (row of scores, softmax, output
// row) is a step of its own, and its repeats one step named by their count.
test('the first of a repeated operation is a step of its own and its repeats one step, each named and numbered right', async () => {
  const engine = await loadEngine();
  const words = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve'];
  const many = (n) => words[n] ?? String(n);
  for (const [nq, nk] of [[1, 1], [1, 2], [3, 3], [2, 5], [6, 6], [7, 7]]) {
    const matrix = (rows, seed) => Array.from({ length: rows },
      (_, i) => [1, 2, 3].map((t) => ((i + 1) * (t + seed)) % 5 - 2));
    const q = matrix(nq, 1);
    const k = matrix(nk, 2);
    const queryTokens = q.map((_, i) => `q${i}`);
    const keyTokens = k.map((_, j) => `k${j}`);
    const input = { kind: 'scaledDotProduct', q, k, v: matrix(nk, 3), queryTokens, keyTokens };
    const { steps } = engine.walkthrough(input).steps;
    const where = `${nq}×${nk}`;
    const byCell = nq * nk <= 36;
    const repeats = byCell ? nq * nk - 1 : nq - 1;
    const first = steps.find((s) => s.id === (byCell ? 'score-0-0' : 'score-0'));
    assert.equal(first.equations.length, byCell ? 1 : nk, where);
    assert.equal(first.equations[0].repeat, undefined, where);
    const others = steps.find((s) => s.id === 'score-others');
    if (repeats === 0) {
      assert.equal(others, undefined, where);
    } else {
      let title = byCell ? `The other ${many(repeats)} dot products` : `Scores of the other ${many(repeats)} rows`;
      if (repeats === 1) title = byCell ? 'The other dot product' : 'Scores of the other row';
      assert.equal(others.title, title, where);
      assert.equal(others.number, first.number + 1, where);
      const named = others.equations.filter((e) => e.repeat !== undefined);
      assert.equal(named.length, repeats, where);
      // Each score is q_i · k_j, computed here; the repeat's name says which.
      others.equations.forEach((equation, e) => {
        const cell = byCell ? e + 1 : nk + e;
        const [i, j] = [Math.floor(cell / nk), cell % nk];
        const dot = q[i].reduce((s, x, t) => s + x * k[j][t], 0);
        assert.equal(equation.chain.at(-1).v, dot, `${where} S[${i}, ${j}]`);
        if (byCell) assert.equal(equation.repeat, `Score of ${queryTokens[i]} against ${keyTokens[j]}`, where);
        else if (j === 0) assert.equal(equation.repeat, `Scores of ${queryTokens[i]}`, where);
      });
    }
    // The softmax and the outputs: the first row, then the others in one step.
    const rows = steps.find((s) => s.id === 'softmax-others');
    const outputs = steps.find((s) => s.id === 'output-others');
    if (nq === 1) {
      assert.equal(rows, undefined, where);
      assert.equal(outputs, undefined, where);
    } else {
      const count = nq === 2 ? 'other row' : `other ${many(nq - 1)} rows`;
      assert.equal(rows.title, `Softmax of the ${count}`, where);
      assert.equal(outputs.title, `Output for the ${count}`, where);
      assert.deepEqual(rows.equations.filter((e) => e.repeat).map((e) => e.repeat),
        queryTokens.slice(1).map((token) => `Softmax of the row of ${token}`), where);
      assert.deepEqual(outputs.equations.map((e) => e.repeat),
        queryTokens.slice(1).map((token) => `Output for ${token}`), where);
    }
  }
});

// The softmax walkthroughs too: the first row's largest entry, exponentials
// and sum each a step, then every other row in one step of repeats.
test('a softmax of several rows steps through the first row, then the other rows together, each with its weights', async () => {
  const engine = await loadEngine();
  for (const rows of [1, 2, 4]) {
    const x = Array.from({ length: rows }, (_, i) => [0.5 * i, 1, -0.25 * i, 2]);
    const queryTokens = x.map((_, i) => `r${i}`);
    const { steps } = engine.walkthrough({ kind: 'softmax', x, queryTokens }).steps;
    const ids = steps.map((step) => step.id);
    const expected = ['inputs', 'max-0', 'exp-0', 'sum-0', ...(rows > 1 ? ['softmax-others'] : []), 'done'];
    assert.deepEqual(ids, expected, `${rows} rows`);
    if (rows === 1) continue;
    const others = steps.find((step) => step.id === 'softmax-others');
    assert.equal(others.title, rows === 2 ? 'The other row' : 'The other three rows');
    assert.deepEqual(others.equations.filter((e) => e.repeat).map((e) => e.repeat),
      queryTokens.slice(1).map((token) => `Softmax of the row of ${token}`));
    // Each row's weights, computed here, end its equations.
    const weights = others.equations.filter((e) => e.label.startsWith('weights['));
    const exact = x.slice(1).flatMap((row) => {
      const top = Math.max(...row);
      const exps = row.map((v) => Math.exp(v - top));
      const sum = exps.reduce((a, b) => a + b, 0);
      return exps.map((e) => e / sum);
    });
    assert.equal(weights.length, exact.length, `${rows} rows: one equation a weight`);
    weights.forEach((equation, k) => assert.ok(Math.abs(equation.chain.at(-1).v - exact[k]) <= 1e-15,
      `${rows} rows: weight ${k} is ${equation.chain.at(-1).v}, not ${exact[k]}`));
  }
});

test('the backward steps give each gradient\u2019s first row a step and its other rows one step of repeats', async () => {
  const engine = await loadEngine();
  const r = randomSource(29);
  const input = { ...backwardProblems(r)[0], queryTokens: ['a', 'b', 'c'], keyTokens: ['w', 'x', 'y', 'z'] };
  const byHand = backwardByHand(input);
  const { steps } = engine.walkthrough(input).steps;
  const backward = steps.slice(steps.findIndex((s) => s.id === 'grad-output'));
  const stages = [['grad-output', 'dO', 'gradOutput', ['a', 'b', 'c']], ['grad-v', 'dV', 'gradV', ['w', 'x', 'y', 'z']],
    ['grad-weights', 'dP', 'gradWeights', ['a', 'b', 'c']], ['grad-scaled', 'dS', 'gradScaled', ['a', 'b', 'c']],
    ['grad-q', 'dQ', 'gradQ', ['a', 'b', 'c']], ['grad-k', 'dK', 'gradK', ['w', 'x', 'y', 'z']]];
  assert.deepEqual(backward.map((s) => s.id), stages.flatMap(([id]) => [id, `${id}-others`]));
  for (const [id, name, tensor, labels] of stages) {
    const first = backward.find((s) => s.id === id);
    const others = backward.find((s) => s.id === `${id}-others`);
    assert.equal(others.title, `${name} of the other ${labels.length === 3 ? 'two' : 'three'} rows`);
    assert.ok(first.equations.every((e) => e.repeat === undefined && e.chain.at(-1).ref[1] === 0), `${id}: row 0 alone`);
    assert.deepEqual(others.equations.filter((e) => e.repeat).map((e) => e.repeat),
      labels.slice(1).map((label) => `${name} of ${label}`));
    // Every row's entries, in order, are the gradient computed by hand.
    const values = [...first.equations, ...others.equations].map((e) => e.chain.at(-1).v);
    const expected = byHand[tensor].flat();
    assert.equal(values.length, expected.length, id);
    values.forEach((v, c) => assert.ok(Math.abs(v - expected[c]) < 1e-12, `${id} entry ${c}: ${v}, by hand ${expected[c]}`));
  }
});

test('linear attention gives the first query\u2019s output a step and the other queries one step of repeats', async () => {
  const engine = await loadEngine();
  const phi = (x) => (x > 0 ? x + 1 : Math.exp(x));
  for (const rows of [1, 2, 4]) {
    const q = Array.from({ length: rows }, (_, i) => [0.5 - i, 0.25 * i]);
    const k = [[1, -1], [0.5, 2], [-0.75, 0.1]];
    const v = [[1, 2], [3, -1], [0, 0.5]];
    const queryTokens = q.map((_, i) => `t${i}`);
    const { steps } = engine.walkthrough({ kind: 'linear', q, k, v, queryTokens }).steps;
    assert.deepEqual(steps.map((s) => s.id), ['inputs', 'phi', 'sums', 'output-0', ...(rows > 1 ? ['output-others'] : [])]);
    assert.equal(steps[3].title, 'Output for t0');
    const equations = [...steps[3].equations];
    if (rows > 1) {
      const others = steps[4];
      assert.equal(others.title, rows === 2 ? 'Output for the other query' : 'Output for the other three queries');
      assert.deepEqual(others.equations.map((e) => e.repeat), queryTokens.slice(1).map((t) => `Output for ${t}`));
      equations.push(...others.equations);
    }
    // output_i = Σ_j (φ(q_i)·φ(k_j)) v_j ÷ Σ_j φ(q_i)·φ(k_j), computed here.
    q.forEach((qi, i) => {
      const weights = k.map((kj) => qi.reduce((s, x, a) => s + phi(x) * phi(kj[a]), 0));
      const total = weights.reduce((a, b) => a + b, 0);
      const exact = v[0].map((_, c) => weights.reduce((s, w, j) => s + w * v[j][c], 0) / total);
      equations[i].chain.at(-1).args.forEach((entry, c) => assert.ok(Math.abs(entry.v - exact[c]) <= 1e-14,
        `${rows} rows: output[${i}, ${c}] is ${entry.v}, not ${exact[c]}`));
    });
  }
});

test('the online softmax\u2019s tile steps show the first query in full and each other query as a repeat', async () => {
  const engine = await loadEngine();
  const q = [[1, 0], [0, 1], [0.5, -0.5]];
  const k = [[1, 1], [-1, 0.5], [0.25, 2], [0, -1]];
  const v = [[1, 0], [0, 1], [1, 1], [2, -1]];
  const tokens = ['a', 'b', 'c'];
  const { steps } = engine.walkthrough({ kind: 'onlineSoftmax', q, k, v, queryTokens: tokens, keyTokens: ['w', 'x', 'y', 'z'], tile: 2 }).steps;
  for (const t of [1, 2]) {
    const step = steps.find((s) => s.id === `tile-${t}`);
    const named = step.equations.filter((e) => e.repeat !== undefined);
    assert.deepEqual(named.map((e) => e.repeat), [`Tile ${t} for b`, `Tile ${t} for c`]);
    assert.equal(step.equations[0].repeat, undefined);
    // The running sum after tile t, per query, computed here: Σ e^(s − m) over the keys read.
    const sums = step.equations.filter((e) => e.chain.at(-1).ref?.[0] === 'tileSum').map((e) => e.chain.at(-1).v);
    const exact = q.map((qi) => {
      const scores = k.slice(0, 2 * t).map((kj) => (qi[0] * kj[0] + qi[1] * kj[1]) / Math.SQRT2);
      const top = Math.max(...scores);
      return scores.reduce((s, x) => s + Math.exp(x - top), 0);
    });
    sums.forEach((sum, i) => assert.ok(Math.abs(sum - exact[i]) <= 1e-14, `tile ${t}, ${tokens[i]}: ${sum}, not ${exact[i]}`));
  }
  assert.deepEqual(steps.find((s) => s.id === 'divide').equations.map((e) => e.repeat), [undefined, 'Output for b', 'Output for c']);
});

test('a row labelled as a row is "row 2" in a title, not "the row of row 2"', async () => {
  const engine = await loadEngine();
  const x = [[1, 2], [3, 0], [0.5, 0.5]];
  const labels = ['row 1', 'row 2', 'row 3'];
  const softmax = engine.walkthrough({ kind: 'softmax', x, queryTokens: labels }).steps.steps;
  assert.equal(softmax.find((s) => s.id === 'softmax-others').title, 'The other two rows');
  assert.deepEqual(softmax.find((s) => s.id === 'softmax-others').equations.filter((e) => e.repeat).map((e) => e.repeat),
    ['Softmax of row 2', 'Softmax of row 3']);
  const attention = engine.walkthrough({ kind: 'scaledDotProduct', q: x, k: x, v: x, queryTokens: labels }).steps.steps;
  assert.equal(attention.find((s) => s.id === 'softmax-0').title, 'Softmax of row 1');
  assert.equal(attention.find((s) => s.id === 'softmax-others').title, 'Softmax of the other two rows');
});
