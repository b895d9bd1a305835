// Bad input: exact messages, from the JS walk of the input and from the C
// checks, and an engine that keeps working afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { haveNativeCli, loadEngine, runNative } from './support.mjs';
import { AttentionError, loadAttention } from '../../web/lib/attention-node.js';

const Q = [[1, 0], [0, 1], [1, 1]];
const V = [[1, 2, 3], [4, 5, 6], [7, 8, 9]];
const sdpa = (fields) => ({ kind: 'scaledDotProduct', q: Q, k: Q, v: V, ...fields });
// Every kind the engine knows, in its order (src/problem/problem.c).
const KINDS = '"scaledDotProduct", "weightedSum", "multiHead", "additive", "luong", "linear", "softmax", ' +
              '"transformerBlock", "onlineSoftmax"';

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
  [{ kind: 'noSuchKind' }, `kind: unknown kind "noSuchKind"; expected one of ${KINDS}`],
  [{ q: Q }, `kind: missing; expected one of ${KINDS}`],
  [{ kind: 3 }, `kind: expected one of ${KINDS}, got a number`],
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


test('a NUL inside a kind, a field name or a string value is an error, not a truncation', async () => {
  const attn = await loadEngine();
  assert.throws(() => attn.run({ kind: 'softmax\u0000junk', x: [1, 2] }), {
    name: 'AttentionError', status: 5,
    message: `kind: unknown kind "softmax\\u0000junk" (it holds a NUL character); expected one of ${KINDS}`,
  });
  assert.throws(() => attn.run({ kind: 'softmax', 'x\u0000y': [1, 2] }),
                { status: 10, message: '"x\\u0000y" (a field name): must not contain a NUL character' });
  assert.throws(() => attn.run(sdpa({ mask: 'causal\u0000junk' })),
                { status: 10, message: 'mask: must not contain a NUL character' });
  assert.throws(() => attn.run(sdpa({ tokens: ['a', 'b\u0000', 'c'] })),
                { status: 10, message: 'tokens[1]: must not contain a NUL character' });
  assert.throws(() => attn.check(sdpa(), { 'weights\u0000junk': [[1]] }),
                { status: 10, message: 'printed key "weights\\u0000junk": must not contain a NUL character' });
  assert.throws(() => attn.check(sdpa(), { 'notes\u0000': 'a note' }),
                { status: 10, message: 'printed key "notes\\u0000": must not contain a NUL character' });
});

test('an unpaired surrogate in a label, a mask or a title is refused, not written as U+FFFD', async () => {
  const attn = await loadEngine();
  const unpaired = 'unpaired surrogate (U+D800 at index 1), which is not text';
  assert.throws(() => attn.run(sdpa({ tokens: ['a', 'b\uD800', 'c'] })),
                { status: 10, message: `tokens[1]: must not contain an ${unpaired}` });
  assert.throws(() => attn.run(sdpa({ mask: 'c\uD800' })), { status: 10, message: `mask: must not contain an ${unpaired}` });
  assert.throws(() => attn.format(sdpa(), 'text', { title: 'T\uD800' }),
                { status: 10, message: `title: must not contain an ${unpaired}` });
  assert.throws(() => attn.check(sdpa(), { 'w\uDC00': [[1]] }),
                { status: 10, message: 'printed key "w\\udc00": must not contain an unpaired surrogate (U+DC00 at index 1), which is not text' });
  // A pair is one character, and passes.
  assert.match(attn.format(sdpa({ tokens: ['a', '\uD83D\uDE00', 'c'] }), 'text'), /\u{1F600}/u);
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
    status: 5, message: 'format: expected "json", "text", "markdown", "latex" or "steps", got "html"',
  });
  // A check's report has no steps: every other format the CLI names.
  assert.throws(() => attn.check(sdpa({}), {}, { format: 'steps' }), {
    status: 5, message: 'check: format must be "json", "text", "markdown" or "latex", got "steps"',
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

test('sdpaFlat and linearFlat refuse a field they do not have, which would have been left out of the numbers', async () => {
  const attn = await loadEngine();
  const q = Float32Array.from([1, 0, 0, 1]);
  const base = { q, k: q, v: Float32Array.from([1, 2]), nQ: 2, nK: 2, dK: 2, dV: 1 };
  const sdpaFields = 'q, k, v, batch, nQ, nK, dK, dV, scale, causal, window, stride, keyLength, allowed, weights, maxBytes, output';
  for (const name of ['mask', 'dropout', 'Causal']) {
    assert.throws(() => attn.sdpaFlat({ ...base, [name]: 1 }), {
      status: 10,
      message: `sdpaFlat: "${name}" is not one of its fields (${sdpaFields}); it would have been left out`,
    });
  }
  assert.throws(() => attn.linearFlat({ ...base, window: 1 }), {
    status: 10,
    message: 'linearFlat: "window" is not one of its fields (q, k, v, batch, nQ, nK, dK, dV, causal, maxBytes, output); '
      + 'it would have been left out',
  });
  // The causal mask asked for the right way: the first query sees only the first key, 1.
  assert.equal(attn.sdpaFlat({ ...base, causal: true }).output[0], 1);
});

test('dropout without a seed uses seed 0, the documented default', async () => {
  const attn = await loadEngine();
  const unseeded = attn.run(sdpa({ dropout: 0.5 }));
  assert.deepEqual(unseeded, attn.run(sdpa({ dropout: 0.5, seed: 0 })));
  assert.notDeepEqual(unseeded.weights, attn.run(sdpa({ dropout: 0.5, seed: 1 })).weights);
});

// ---- Every bad input an AttentionError (the issue "Safe at every size, second pass") ----

// Asserts that call throws an AttentionError with this status and message.
function assertAttentionError(call, status, message) {
  assert.throws(call, (error) => {
    assert.ok(error instanceof AttentionError, `${error?.constructor?.name}: ${error?.message}`);
    assert.equal(error.message, message);
    assert.equal(error.status, status, error.message);
    return true;
  });
}

test('sdpaFlat refuses a keyLength outside 0..nK instead of wrapping it to 32 bits', async () => {
  const attn = await loadEngine();
  const q = Float64Array.from([1, 0, 0, 1]);
  const v = Float64Array.from([1, 2, 3, 4]);
  const base = { q, k: q, v, nQ: 2, nK: 2, dK: 2, dV: 2 };
  for (const [keyLength, message] of [
    [2 ** 32 + 1, 'sdpaFlat: keyLength must be an integer from 0 to nK = 2, got 4294967297'],
    [3, 'sdpaFlat: keyLength must be an integer from 0 to nK = 2, got 3'],
    [-1, 'sdpaFlat: keyLength must be an integer from 0 to nK = 2, got -1'],
    [1.5, 'sdpaFlat: keyLength must be an integer from 0 to nK = 2, got 1.5'],
    [[2 ** 32 + 1], 'sdpaFlat: keyLength[0] must be an integer from 0 to nK = 2, got 4294967297'],
  ]) {
    for (const inputs of [base, { ...base, q: new Float32Array(q), k: new Float32Array(q), v: new Float32Array(v) }]) {
      assertAttentionError(() => attn.sdpaFlat({ ...inputs, keyLength }), 6, message);
    }
  }
  // keyLength 1 keeps only key 0, so every query gets v[0] = (1, 2).
  assert.deepEqual(Array.from(attn.sdpaFlat({ ...base, keyLength: 1 }).output), [1, 2, 1, 2]);
  // As the problem path refuses it.
  assertAttentionError(() => attn.scaledDotProduct({ q: [[1, 0], [0, 1]], k: [[1, 0], [0, 1]], v: [[1, 2], [3, 4]],
      keyLength: 2 ** 32 + 1 }),
                       10, 'keyLength: 4294967297 is outside 0..2 (n_k)');
});

test('typed arrays of BigInts, Symbols and other non-numbers are AttentionErrors naming the entry', async () => {
  const attn = await loadEngine();
  const q = new Float64Array(4);
  const flat = { q, k: q, v: q, nQ: 2, nK: 2, dK: 2, dV: 2 };
  for (const name of ['sdpaFlat', 'linearFlat']) {
    assertAttentionError(() => attn[name]({ ...flat, q: new BigInt64Array(4) }), 10,
                         `${name}: q must hold numbers, got a BigInt64Array`);
    assertAttentionError(() => attn[name]({ ...flat, k: new BigUint64Array(4), v: new BigUint64Array(4),
        q: new BigUint64Array(4) }), 10,
                         `${name}: q must hold numbers, got a BigUint64Array`);
    assertAttentionError(() => attn[name]({ ...flat, v: [1, 2, Symbol('s'), 4] }), 10,
                         `${name}: v[2] must be a number, got a symbol`);
    assertAttentionError(() => attn[name]({ ...flat, k: [1, '2', 3, 4] }), 10,
                         `${name}: k[1] must be a number, got a string`);
    assertAttentionError(() => attn[name](null), 10, `${name}: expected an object of inputs, got null`);
    assertAttentionError(() => attn[name](), 10, `${name}: expected an object of inputs, got nothing`);
  }
  assertAttentionError(() => attn.sdpaFlat({ ...flat, allowed: [true, Symbol('s'), 1, 0] }), 10,
                       'sdpaFlat: allowed[1] must be true, false or a number, got a symbol');
  assertAttentionError(() => attn.sdpaFlat({ ...flat, allowed: new BigInt64Array(4) }), 10,
                       'sdpaFlat: allowed must hold numbers, got a BigInt64Array');
  assertAttentionError(() => attn.run({ kind: 'softmax', x: new BigInt64Array(2) }), 10, 'x[0]: expected a number, got a bigint');
  assertAttentionError(() => attn.run({ kind: 'softmax', x: [1, Symbol('s')] }), 10, 'x[1]: expected a number, got a symbol');
  assertAttentionError(() => attn.run({ kind: 'softmax', x: [1, 2], scale: 2n }), 10,
                       'scale: expected a number, a boolean, a string or an array, got a bigint');
  assertAttentionError(() => attn.run({ kind: Symbol('softmax') }), 10,
                       `kind: expected one of ${KINDS}, got a symbol`);
  assertAttentionError(() => attn.format({ kind: 'softmax', x: [1] }, 'markdown', 5), 10,
                       'format: document must be an object { title, headingLevel }, got a number');
});

test('arrays too long to hold are refused by their length before a single entry is read', async () => {
  const attn = await loadEngine();
  assertAttentionError(() => attn.run({ kind: 'softmax', x: new Array(2 ** 32 - 1) }), 12,
    'x: a vector of 4294967295 would make the problem hold 34359738360 bytes, more than its limit of 268435456 bytes; '
    + 'use smaller inputs or raise the limit (maxBytes in the JS API, --max-bytes in build/attn)');
  // 20,000 × 20,000 (rows sharing one array): an entry late in the row
  // records whether the walk reached it; the size is known from the lengths.
  let readLate = false;
  const row = new Array(20000).fill(0.5);
  Object.defineProperty(row, 19999, { get() { readLate = true; return 0.5; } });
  const x = new Array(20000).fill(row);
  assertAttentionError(() => attn.run({ kind: 'softmax', x }), 12,
    'x: 20000x20000 would make the problem hold 3200000000 bytes, more than its limit of 268435456 bytes; '
    + 'use smaller inputs or raise the limit (maxBytes in the JS API, --max-bytes in build/attn)');
  assert.equal(readLate, false);
  // Labels: no tensor within the limit has 2^32 - 1 rows.
  const tokens = new Array(2 ** 32 - 1).fill('a', 0, 4);
  assertAttentionError(() => attn.run(sdpa({ tokens })), 12,
    'tokens: 4294967295 labels, more than any tensor within the limit of 268435456 bytes has rows (33554432)');
  // 2^25 labels fit the limit but not the problem's 3 x 2 tensors: refused
  // by their count, before any of them is read (only the first is set),
  // whatever the order of the fields.
  const many = new Array(2 ** 25).fill('a', 0, 1);
  assertAttentionError(() => attn.run({ tokens: many, ...sdpa() }), 10,
    'tokens: 33554432 labels, more than the problem\'s tensors have rows or columns (at most 3)');
  const trainer = attn.createTrainer({ task: 'copy' });
  assertAttentionError(() => trainer.predict(new Array(2 ** 32 - 1)), 6,
                       'trainer.predict: tokens: the model reads 1 to seqLength = 8 tokens, got 4294967295');
  trainer.dispose();
});

test('a getter that throws while a call reads its input gives an AttentionError naming the field', async () => {
  const attn = await loadEngine();
  const boom = () => { throw new Error('boom'); };
  const withGetter = (object, name) => Object.defineProperty(object, name, { get: boom, enumerable: true });
  assertAttentionError(() => attn.run(withGetter({ kind: 'softmax' }, 'x')), 10, 'x: reading it threw Error: boom');
  assertAttentionError(() => attn.run({ kind: 'softmax', x: withGetter([1, 2, 3], 1) }), 10, 'x: reading it threw Error: boom');
  assertAttentionError(() => attn.run(withGetter({ x: [1] }, 'kind')), 10, 'kind: reading it threw Error: boom');
  assertAttentionError(() => attn.softmax(withGetter({}, 'x')), 10, 'x: reading it threw Error: boom');
  const q = new Float64Array(4);
  assertAttentionError(() => attn.sdpaFlat(withGetter({ q, k: q, v: q, nQ: 2, nK: 2, dK: 2 }, 'dV')), 10,
                       'sdpaFlat: input: reading it threw Error: boom');
  assertAttentionError(() => attn.createTrainer(withGetter({ task: 'copy' }, 'seed')), 10, 'seed: reading it threw Error: boom');
  assertAttentionError(() => attn.format({ kind: 'softmax', x: [1] }, 'markdown', withGetter({}, 'title')), 10,
                       'format: document: reading it threw Error: boom');
  assertAttentionError(() => attn.format({ kind: 'softmax', x: [1] }, 'markdown', { titel: 'Week 3' }), 10,
                       'format: document: "titel" is not one of its options (title, headingLevel); it would have been left out');
  // The engine's memory is as it was, and it answers.
  assert.deepEqual(attn.softmax({ x: [0, 0] }).weights, [0.5, 0.5]);
});

test('loadAttention refuses options, addresses and bytes that cannot be the engine with an AttentionError', async () => {
  for (const [options, message] of [
    [{ maxbytes: 10 }, 'loadAttention: "maxbytes" is not one of its options (maxBytes, wasmBinary, wasmUrl); it would have been left out'],
    [{ wasmUrl: new URL('../../README.md', import.meta.url) }, /^loadAttention: file:\/\/\S+\/README\.md is not the engine/],
    [{ wasmUrl: new URL('file:///nonexistent/attention.wasm') }, 'loadAttention: cannot read /nonexistent/attention.wasm: ENOENT'],
    [null, 'loadAttention: expected an object of options, got null'],
    [5, 'loadAttention: expected an object of options, got a number'],
    [{ wasmUrl: Symbol('url') }, 'loadAttention: wasmUrl must be a string or a URL, got a symbol'],
    [{ wasmUrl: 5 }, 'loadAttention: wasmUrl must be a string or a URL, got a number'],
    [{ wasmUrl: 'http://[' }, 'loadAttention: wasmUrl "http://[" is not a URL'],
  ]) {
    await assert.rejects(loadAttention(options), { name: 'AttentionError', status: 10, message });
  }
  await assert.rejects(loadAttention({ wasmBinary: 5 }), {
    name: 'AttentionError', status: 10, message: 'loadAttention: wasmBinary must be an ArrayBuffer or a typed array',
  });
  await assert.rejects(loadAttention({ wasmBinary: new TextEncoder().encode('<!doctype html>') }), {
    name: 'AttentionError', status: 10,
    message: 'loadAttention: wasmBinary is not the engine (a WebAssembly module starts with \\0asm; this starts with "<!doctype html>"); '
      + 'give loadAttention its wasmUrl, or the element its base attribute',
  });
});
