// Gradients through the JS API (WASM) against the native CLI (build/attn)
// on the same JSON: gradOutput on scaledDotProduct and multiHead, and the
// transformerBlock kind, post- and pre-norm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertClose, haveNativeCli, loadEngine, nullsToMinusInfinity, randomSource, runNative } from './support.mjs';
import { declaredProperties } from './declarations.mjs';

// Numbers agree within 1e-12 × max(1, |native|).
const AGREEMENT = 1e-12;
const skip = !haveNativeCli() && 'build/attn is not built (make build/attn)';

function nativeResult(input) {
  const { status, stdout, stderr } = runNative(input, 'json');
  assert.equal(status, 0, `build/attn failed: ${stderr}`);
  return nullsToMinusInfinity(JSON.parse(stdout));
}

function assertAgree(input, expectedKeys) {
  return loadEngine().then((attn) => {
    const wasm = attn.run(input);
    const native = nativeResult(input);
    assert.deepEqual(Object.keys(wasm).sort(), Object.keys(native).sort(), `${input.kind}: keys`);
    for (const key of expectedKeys) assert.ok(key in native, `${input.kind} has ${key}`);
    assertClose(wasm, native, AGREEMENT, input.kind);
    return { wasm, native };
  });
}

function sdpaProblem(seed) {
  const r = randomSource(seed);
  return {
    kind: 'scaledDotProduct',
    q: [r.matrix(3, 2, -1, 1), r.matrix(3, 2, -1, 1)],
    k: [r.matrix(4, 2, -1, 1), r.matrix(4, 2, -1, 1)],
    v: [r.matrix(4, 3, -1, 1), r.matrix(4, 3, -1, 1)],
    gradOutput: [r.matrix(3, 3, -1, 1), r.matrix(3, 3, -1, 1)],
    mask: 'causal',
    dropout: 0.25,
    seed: 5,
  };
}

function multiHeadProblem(seed) {
  const r = randomSource(seed);
  return {
    kind: 'multiHead',
    x: [r.matrix(3, 4, -1, 1), r.matrix(3, 4, -1, 1)],
    xkv: [r.matrix(2, 3, -1, 1), r.matrix(2, 3, -1, 1)],
    numHeads: 2,
    wq: r.matrix(4, 4, -1, 1),
    wk: r.matrix(3, 4, -1, 1),
    wv: r.matrix(3, 4, -1, 1),
    wo: r.matrix(4, 3, -1, 1),
    bq: r.vector(4, -1, 1),
    bo: r.vector(3, -1, 1),
    gradOutput: [r.matrix(3, 3, -1, 1), r.matrix(3, 3, -1, 1)],
  };
}

function blockProblem(seed, norm) {
  const r = randomSource(seed);
  const d = 4;
  const ff = 6;
  return {
    kind: 'transformerBlock',
    x: r.matrix(3, d, -1, 1),
    numHeads: 2,
    wq: r.matrix(d, d, -1, 1),
    wk: r.matrix(d, d, -1, 1),
    wv: r.matrix(d, d, -1, 1),
    wo: r.matrix(d, d, -1, 1),
    bv: r.vector(d, -1, 1),
    gamma1: r.vector(d, 0.5, 1.5),
    beta1: r.vector(d, -1, 1),
    w1: r.matrix(d, ff, -1, 1),
    b1: r.vector(ff, -1, 1),
    w2: r.matrix(ff, d, -1, 1),
    b2: r.vector(d, -1, 1),
    gamma2: r.vector(d, 0.5, 1.5),
    beta2: r.vector(d, -1, 1),
    norm,
    mask: 'causal',
    gradOutput: r.matrix(3, d, -1, 1),
  };
}

test('scaledDotProduct gradients agree with build/attn', { skip }, async () => {
  const { wasm } = await assertAgree(sdpaProblem(1), ['gradQ', 'gradK', 'gradV', 'gradWeights', 'gradScaled']);
  // Masked entries (above the diagonal) have a gradient of exactly 0.
  for (const item of wasm.gradScaled) assert.deepEqual([item[0][1], item[0][2], item[1][2]], [0, 0, 0]);
});

test('multiHead gradients agree with build/attn, per head too', { skip }, async () => {
  const { wasm } = await assertAgree(multiHeadProblem(2), [
    'gradX', 'gradXkv', 'gradWq', 'gradWk', 'gradWv', 'gradWo', 'gradBq', 'gradBo', 'heads',
  ]);
  assert.equal(wasm.heads.length, 2);
  assert.ok('gradWeights' in wasm.heads[1] && 'gradScaled' in wasm.heads[1]);
  assert.ok(!('gradBk' in wasm), 'no gradient for a bias not given');
});

for (const norm of ['post', 'pre']) {
  test(`transformerBlock (${norm}-norm) results and gradients agree with build/attn`, { skip }, async () => {
    await assertAgree(blockProblem(3, norm), [
      'attention', 'sum1', 'ln1', 'ffnHidden', 'ffn', 'sum2', 'ln2', 'output', 'heads',
      'gradX', 'gradWq', 'gradWk', 'gradWv', 'gradWo', 'gradBv', 'gradGamma1', 'gradBeta1',
      'gradW1', 'gradB1', 'gradW2', 'gradB2', 'gradGamma2', 'gradBeta2',
    ]);
  });
}

test('additive, Luong (each method) and linear gradients agree with build/attn', { skip }, async () => {
  const r = randomSource(5);
  const query = r.matrix(2, 3, -1, 1);
  const keys = r.matrix(4, 3, -1, 1);
  const gradContext = r.matrix(2, 3, -1, 1);
  await assertAgree({
    kind: 'additive', query, keys, ws: r.matrix(3, 5, -1, 1), wh: r.matrix(3, 5, -1, 1),
    v: r.vector(5, -1, 1), b: r.vector(5, -1, 1), gradContext,
  }, ['gradQuery', 'gradKeys', 'gradWs', 'gradWh', 'gradV', 'gradB']);
  await assertAgree({ kind: 'luong', method: 'dot', query, keys, gradContext }, ['gradQuery', 'gradKeys']);
  await assertAgree({ kind: 'luong', method: 'general', query, keys, w: r.matrix(3, 3, -1, 1), gradContext },
                    ['gradQuery', 'gradKeys', 'gradW']);
  await assertAgree({
    kind: 'luong', method: 'concat', query: query[0], keys, w: r.matrix(6, 4, -1, 1), v: r.vector(4, -1, 1),
    b: r.vector(4, -1, 1), gradContext: gradContext[0],
  }, ['gradQuery', 'gradKeys', 'gradW', 'gradV', 'gradB']);
  await assertAgree({
    kind: 'linear', q: r.matrix(3, 2, -1, 1), k: r.matrix(4, 2, -1, 1), v: r.matrix(4, 3, -1, 1),
    causal: true, gradOutput: r.matrix(3, 3, -1, 1),
  }, ['gradQ', 'gradK', 'gradV']);
});

test('a misshapen gradOutput is an error naming the field, as in build/attn', { skip }, async () => {
  const attn = await loadEngine();
  const input = { ...blockProblem(4, 'post'), gradOutput: [[1, 2, 3, 4]] };
  const message = 'gradOutput: expected a matrix with 3 rows (n, the rows of x) and 4 columns ' +
                  '(d_model, the columns of x), got 1x4';
  assert.throws(() => attn.run(input), { message, status: 10 });
  const { status, stderr } = runNative(input, 'json');
  assert.equal(status, 2);
  assert.equal(stderr, `attn: ${message}\n`);
});

// Problems with gradients whose every result attention.d.ts must declare,
// with the result interface each is declared by.
function additiveProblem(seed) {
  const r = randomSource(seed);
  return {
    kind: 'additive', query: r.matrix(2, 3, -1, 1), keys: r.matrix(4, 2, -1, 1), ws: r.matrix(3, 5, -1, 1),
    wh: r.matrix(2, 5, -1, 1), b: r.vector(5, -1, 1), v: r.vector(5, -1, 1), gradContext: r.matrix(2, 2, -1, 1),
  };
}

function luongConcatProblem(seed) {
  const r = randomSource(seed);
  return {
    kind: 'luong', method: 'concat', query: r.vector(2, -1, 1), keys: r.matrix(3, 2, -1, 1),
    w: r.matrix(4, 3, -1, 1), b: r.vector(3, -1, 1), v: r.vector(3, -1, 1), gradContext: r.vector(2, -1, 1),
  };
}

function linearProblem(seed) {
  const r = randomSource(seed);
  return {
    kind: 'linear', q: r.matrix(3, 2, -1, 1), k: r.matrix(3, 2, -1, 1), v: r.matrix(3, 2, -1, 1),
    gradOutput: r.matrix(3, 2, -1, 1),
  };
}

// [result interface, problem, the interface of each of its heads].
const DECLARED_BY = [
  ['ScaledDotProductResult', { ...sdpaProblem(4), gradOutput: undefined, target: sdpaProblem(5).gradOutput }],
  ['MultiHeadResult', { ...multiHeadProblem(6), bk: [0, 0, 0, 0], bv: [0, 0, 0, 0] }, 'HeadResult'],
  ['TransformerBlockResult', { ...blockProblem(7, 'pre'), bq: [0, 0, 0, 0], bk: [0, 0, 0, 0], bo: [0, 0, 0, 0] }],
  ['AdditiveResult', additiveProblem(8)],
  ['LuongConcatResult', luongConcatProblem(9)],
  ['LinearResult', linearProblem(10)],
];

/** The keys of a result that the interface `name` does not declare. */
const undeclared = (result, name) => Object.keys(result).filter((key) => !declaredProperties(name).includes(key));

for (const [name, problem, headName] of DECLARED_BY) {
  test(`attention.d.ts's ${name} declares every result of ${problem.kind} with gradients`, async () => {
    const attn = await loadEngine();
    const result = attn.run(Object.fromEntries(Object.entries(problem).filter(([, value]) => value !== undefined)));
    assert.ok(Object.keys(result).some((key) => key.startsWith('grad')), 'the run gave gradients');
    assert.deepEqual(undeclared(result, name), []);
    if (headName) for (const head of result.heads) assert.deepEqual(undeclared(head, headName), []);
  });
}
