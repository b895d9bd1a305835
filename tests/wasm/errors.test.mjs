// Bad input: exact messages, from the JS walk of the input and from the C
// checks, and an engine that keeps working afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { haveNativeCli, loadEngine, runNative } from './support.mjs';
import { AttentionError } from '../../web/lib/attention.js';

const Q = [[1, 0], [0, 1], [1, 1]];
const V = [[1, 2, 3], [4, 5, 6], [7, 8, 9]];
const sdpa = (fields) => ({ kind: 'scaledDotProduct', q: Q, k: Q, v: V, ...fields });

// Messages the C JSON adapter (src/cli/) gives for the same JSON.
const shapeErrors = [
  [sdpa({ q: [[1, 0], [0, 1, 2]] }),
   'q: rows must all have the same length (row 0 has 2 entries, row 1 has 3)'],
  [sdpa({ q: [[[1, 0], [0, 1]], [[1, 0], [0]]] }),
   'q[1]: rows must all have the same length (row 0 has 2 entries, row 1 has 1)'],
  [sdpa({ q: [[[1, 0], [0, 1]], [[1, 0], [0, 1], [1, 1]]] }),
   'q: batch items must all have the same shape (item 0 is 2x2, item 1 is 3x2)'],
  [sdpa({ q: [[1, 0], ['0', 1]] }), 'q[1][0]: expected a number, got a string'],
  [sdpa({ q: [[1, 0], 1] }), 'q[1]: expected an array, got a number'],
  [sdpa({ q: [[1, 0], [null, 1]] }), 'q[1][0]: expected a number, got null'],
  [sdpa({ q: [1, [0]] }), 'q[1]: expected a number, got an array'],
  [sdpa({ q: [[1, NaN], [0, 1]] }), 'q[0][1]: expected a finite number, got NaN'],
  [sdpa({ k: [[1, 0], [0, Infinity], [1, 1]] }), 'k[1][1]: expected a finite number, got Infinity'],
  [sdpa({ q: [[[[1]]]] }), 'q: expected at most 3 levels of nesting'],
  [sdpa({ q: [] }), 'q: must not be empty'],
  [sdpa({ q: [[]] }), 'q: must not be empty'],
  [sdpa({ mask: null }), 'mask: expected a number, a boolean, a string or an array, got null'],
  [sdpa({ mask: { causal: true } }),
   'mask: expected a number, a boolean, a string or an array, got an object'],
  [sdpa({ tokens: ['a', 2, 'c'] }), 'tokens[1]: expected a string, got a number'],
  [{ kind: 'softmax', x: ['1', 2] }, 'x[0]: expected a number, got a string'],
  [{ kind: 'softmax', x: [['1', 2]] }, 'x[0][0]: expected a number, got a string'],
  [{ kind: 'softmax', y: ['a', 2] }, 'y: unknown field for kind "softmax" (fields: x, scale, mask, queryTokens, keyTokens)'],
];

// Messages of the C problem layer (attn_problem_error).
const engineErrors = [
  [sdpa({ k: V }), 'k: expected a matrix with 2 columns (d_k, the columns of q), got 3x3'],
  [sdpa({ v: undefined }), 'v: missing (a matrix n_k x d_v)'],
  [sdpa({ dropout: 1.5 }), 'dropout: expected a probability in [0, 1), got 1.5'],
  [sdpa({ mask: 'sideways' }),
   'mask: expected "none", "causal" or a boolean matrix 3x3 (n_q x n_k), got "sideways"'],
  [sdpa({ tokens: ['a', 'b'] }), 'tokens: expected 3 labels (n_q = n_k), got 2'],
  [{ kind: 'noSuchKind' },
   'kind: unknown kind "noSuchKind"; expected one of "scaledDotProduct", "multiHead", "additive", ' +
   '"luong", "linear", "softmax", "weightedSum"'],
  [{ q: Q }, 'kind: missing; expected one of "scaledDotProduct", "multiHead", "additive", ' +
   '"luong", "linear", "softmax", "weightedSum"'],
  [{ kind: 3 }, 'kind: expected one of "scaledDotProduct", "multiHead", "additive", ' +
   '"luong", "linear", "softmax", "weightedSum", got a number'],
];

for (const [input, message] of [...shapeErrors, ...engineErrors]) {
  test(`bad input fails with "${message}"`, async () => {
    const attn = await loadEngine();
    assert.throws(() => attn.run(input), (error) => {
      assert.ok(error instanceof Error);
      assert.equal(error.message, message);
      return true;
    });
    assert.throws(() => attn.format(input, 'markdown'), { message });
  });
}

// JSON cannot carry NaN or infinities: those inputs have no native twin.
const jsonSafe = ([input]) => JSON.stringify(input) === JSON.stringify(input, (key, value) =>
  (typeof value === 'number' && !Number.isFinite(value) ? 'not JSON' : value));

test('every JSON-expressible bad input fails with the message build/attn prints for it',
     { skip: !haveNativeCli() && 'build/attn is not built (make build/attn)' }, async () => {
  const attn = await loadEngine();
  for (const [input, message] of [...shapeErrors, ...engineErrors].filter(jsonSafe)) {
    const native = runNative(input);
    assert.equal(native.status, 2, message);
    assert.equal(native.stderr, `attn: ${message}\n`);
    assert.throws(() => attn.run(input), { message });
  }
});

test('a C error carries its attn_status code', async () => {
  const attn = await loadEngine();
  assert.throws(() => attn.run(sdpa({ k: V })), { status: 10 }); // ATTN_ERR_INPUT
  assert.throws(() => attn.run({ kind: 'noSuchKind' }), { status: 5 }); // ATTN_ERR_OPTION
  assert.throws(() => attn.run(sdpa({ q: [[1, 0], [0]] })), { status: 10 }); // found in JS
});

test('the engine gives the same result after every kind of error', async () => {
  const attn = await loadEngine();
  const before = attn.run(sdpa({ mask: 'causal' }));
  for (const [input] of [...shapeErrors, ...engineErrors]) {
    assert.throws(() => attn.run(input));
    assert.deepEqual(attn.run(sdpa({ mask: 'causal' })), before);
  }
});

test('a problem that is not an object is rejected', async () => {
  const attn = await loadEngine();
  assert.throws(() => attn.run(null), { message: 'expected a problem object, got null' });
  assert.throws(() => attn.run([Q]), { message: 'expected a problem object, got an array' });
});

// ---- Strict input (the issue "Hardening and fit") ----

const KINDS = '"scaledDotProduct", "multiHead", "additive", "luong", "linear", "softmax", "weightedSum"';

test('a NUL inside a kind, a field name or a string value is an error, not a truncation', async () => {
  const attn = await loadEngine();
  assert.throws(() => attn.run({ kind: 'softmax\u0000junk', x: [1, 2] }), {
    name: 'AttentionError', status: 5,
    message: `kind: unknown kind "softmax\\u0000junk" (it holds a NUL character); expected one of ${KINDS}`,
  });
  assert.throws(() => attn.run({ kind: 'softmax', 'x\u0000y': [1, 2] }),
                { status: 10, message: '"x\\u0000y": a field name must not contain a NUL character' });
  assert.throws(() => attn.run(sdpa({ mask: 'causal\u0000junk' })),
                { status: 10, message: 'mask: must not contain a NUL character' });
  assert.throws(() => attn.run(sdpa({ tokens: ['a', 'b\u0000', 'c'] })),
                { status: 10, message: 'tokens[1]: must not contain a NUL character' });
});

test('every error a call throws is an AttentionError with a numeric status', async () => {
  const attn = await loadEngine();
  const q = new Float64Array(4);
  const calls = [
    () => attn.run(sdpa({ k: V })),
    () => attn.run(sdpa({ q: [[1, 0], [0]] })),
    () => attn.run({ kind: 'noSuchKind' }),
    () => attn.run(null),
    () => attn.format(sdpa({}), 'html'),
    () => attn.sdpaFlat({ q, k: q, v: q, nQ: 2, nK: 2, dK: 2, dV: 3 }),
    () => attn.sdpaFlat({ q, k: q, v: q, nQ: 2, nK: 2, dK: 2, dV: 2, window: 'abc' }),
    () => attn.linearFlat({ q, k: q, v: q, nQ: 2, nK: 2, dK: 2, dV: 2, causal: 'yes' }),
  ];
  for (const call of calls) {
    assert.throws(call, (error) => {
      assert.ok(error instanceof AttentionError, String(error));
      assert.ok(error instanceof Error);
      assert.equal(error.name, 'AttentionError');
      assert.equal(typeof error.status, 'number');
      return true;
    });
  }
  assert.throws(() => attn.format(sdpa({}), 'html'), {
    status: 5, message: 'format: expected "markdown", "latex", "text", "json" or "steps", got "html"',
  });
});

test('sdpaFlat takes window and stride only as integers in range', async () => {
  const attn = await loadEngine();
  const q = Float64Array.from([1, 0, 0, 1, 1, 1]);
  const base = { q, k: q, v: q, nQ: 3, nK: 3, dK: 2, dV: 2 };
  const cases = [
    [{ window: 'abc' }, 'sdpaFlat: window must be an integer from 0 to 2147483647, got "abc"'],
    [{ window: 2 ** 32 }, 'sdpaFlat: window must be an integer from 0 to 2147483647, got 4294967296'],
    [{ window: -1 }, 'sdpaFlat: window must be an integer from 0 to 2147483647, got -1'],
    [{ window: 1.5 }, 'sdpaFlat: window must be an integer from 0 to 2147483647, got 1.5'],
    [{ stride: 0 }, 'sdpaFlat: stride must be an integer from 1 to 2147483647, got 0'],
    [{ stride: 2 ** 32 + 1 }, 'sdpaFlat: stride must be an integer from 1 to 2147483647, got 4294967297'],
    [{ stride: null }, 'sdpaFlat: stride must be an integer from 1 to 2147483647, got null'],
  ];
  for (const [options, message] of cases) {
    assert.throws(() => attn.sdpaFlat({ ...base, ...options }), { status: 6, message });
  }
  // In range they mask as the problem layer does: window 0 keeps the diagonal.
  const local = attn.sdpaFlat({ ...base, window: 0, weights: true });
  assert.deepEqual(Array.from(local.weights), [1, 0, 0, 0, 1, 0, 0, 0, 1]);
  assert.deepEqual(Array.from(local.output), [1, 0, 0, 1, 1, 1]);
});

test('dropout without a seed uses seed 0, the documented default', async () => {
  const attn = await loadEngine();
  const unseeded = attn.run(sdpa({ dropout: 0.5 }));
  assert.deepEqual(unseeded, attn.run(sdpa({ dropout: 0.5, seed: 0 })));
  assert.notDeepEqual(unseeded.weights, attn.run(sdpa({ dropout: 0.5, seed: 1 })).weights);
});
