// The JS API itself: loading, the named mechanisms, format, sdpaFlat.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { loadAttention } from '../../web/lib/attention-node.js';
import { assertClose, loadEngine, randomSource, wasmPath } from './support.mjs';

const Q = [[1, 0], [0, 1], [1, 1]];
const V = [[1, 2, 3], [4, 5, 6], [7, 8, 9]];
const TOLERANCE = 1e-12;

test('loadAttention accepts the module bytes as an ArrayBuffer or a Uint8Array', async () => {
  const bytes = readFileSync(wasmPath);
  const fromArrayBuffer = await loadAttention({
    wasmBinary: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
  });
  const fromUint8Array = await loadAttention({ wasmBinary: new Uint8Array(bytes) });
  const expected = (await loadEngine()).scaledDotProduct({ q: Q, k: Q, v: V });
  assert.deepEqual(fromArrayBuffer.scaledDotProduct({ q: Q, k: Q, v: V }), expected);
  assert.deepEqual(fromUint8Array.scaledDotProduct({ q: Q, k: Q, v: V }), expected);
});

test('loadAttention reads the module from a wasmUrl', async () => {
  const attn = await loadAttention({ wasmUrl: pathToFileURL(wasmPath).href });
  const { weights } = attn.scaledDotProduct({ q: Q, k: Q, v: V });
  assertClose(weights[0], [0.4011120926797859, 0.1977758146404282, 0.4011120926797859], TOLERANCE);
});

test('loadAttention rejects a wasmBinary that is not bytes', async () => {
  await assert.rejects(loadAttention({ wasmBinary: 'not bytes' }),
                       { message: 'loadAttention: wasmBinary must be an ArrayBuffer or a typed array' });
});

test('scaledDotProduct gives -Infinity for masked scaled entries and 0 weights', async () => {
  const attn = await loadEngine();
  const { scaled, weights } = attn.scaledDotProduct({ q: Q, k: Q, v: V, mask: 'causal' });
  assert.deepEqual(scaled.map((row) => row.map((x) => x === -Infinity)),
                   [[false, true, true], [false, false, true], [false, false, false]]);
  assert.deepEqual([weights[0][1], weights[0][2], weights[1][2]], [0, 0, 0]);
});

test('each named mechanism equals run with its kind', async () => {
  const attn = await loadEngine();
  const fields = { q: Q, k: Q, v: V, mask: [[true, false, true], [true, true, false], [false, true, true]] };
  assert.deepEqual(attn.scaledDotProduct(fields), attn.run({ kind: 'scaledDotProduct', ...fields }));
  const linear = { q: Q, k: Q, v: V, causal: true };
  assert.deepEqual(attn.linear(linear), attn.run({ kind: 'linear', ...linear }));
});

test('run with { results } gives only the named results, as the whole run gives them, masked entries -Infinity', async () => {
  const attn = await loadEngine();
  const problem = { kind: 'scaledDotProduct', q: Q, k: Q, v: V, mask: 'causal', gradOutput: V };
  const whole = attn.run(problem);
  const some = attn.run(problem, { results: ['scaled', 'weights', 'gradScaled'] });
  assert.deepEqual(Object.keys(some), ['scaled', 'weights', 'gradScaled']);
  for (const name of Object.keys(some)) assert.deepEqual(some[name], whole[name], name);
  // Query [0, 1] against the keys it sees, [1, 0] and [0, 1]: softmax([0, 1/√2]).
  const e = Math.exp(Math.SQRT1_2);
  assertClose(some.weights[1], [1 / (1 + e), e / (1 + e), 0], TOLERANCE);
  assert.equal(some.scaled[0][2], -Infinity);
  const heads = { kind: 'multiHead', x: Q, numHeads: 2, wq: [[1, 0], [0, 1]], wk: [[1, 0], [0, 1]],
                  wv: [[1, 0], [0, 1]], wo: [[1, 0], [0, 1]] };
  const head = attn.run(heads, { results: ['heads.1.scores'] })['heads.1.scores'];
  // Head 1 sees column 1 of x: scores[i][j] = x[i][1] · x[j][1].
  assert.deepEqual(head, [[0, 0, 0], [0, 1, 1], [0, 1, 1]]);
  assert.deepEqual(head, attn.run(heads).heads[1].scores);
});

test('run with { results } names what is wrong: an unknown result (with the kind\u2019s list), a head past the last, a bad option', async () => {
  const attn = await loadEngine();
  const problem = { kind: 'softmax', x: [1, 2] };
  const before = attn.memoryStats().allocatedBytes;
  const refused = [
    [{ results: ['output'] }, 'result: no result named "output" for kind "softmax" (results: scaled, max, exp, sum, weights)'],
    [{ results: 'weights' }, 'run: results must be a list of result names ("weights", "heads.0.scores"), got a string'],
    [{ results: [''] }, 'run: results: "" is not a result name'],
    [{ result: ['weights'] }, 'run: unknown option "result"; expected results'],
    [null, 'run: options must be an object { results }, got null'],
  ];
  for (const [options, message] of refused) {
    assert.throws(() => attn.run(problem, options), { name: 'AttentionError', status: 10, message });
  }
  assert.throws(() => attn.run({ kind: 'multiHead', x: Q, numHeads: 2, wq: [[1, 0], [0, 1]], wk: [[1, 0], [0, 1]],
                                 wv: [[1, 0], [0, 1]], wo: [[1, 0], [0, 1]] }, { results: ['heads.2.weights'] }),
                { message: 'result: heads.2.weights: head 2 is outside 0..1 (numHeads 2)' });
  assert.equal(attn.memoryStats().allocatedBytes, before);
  // A vector's softmax: its sum of e^(x − max) is one number, as in the whole result.
  assert.deepEqual(attn.run(problem, { results: ['sum'] }), { sum: 1 + Math.exp(-1) });
  assert.equal(attn.run(problem).sum, 1 + Math.exp(-1));
});

test('a boolean mask matrix equals the same mask given as 1 and 0', async () => {
  const attn = await loadEngine();
  const mask = [[true, false, true], [true, true, false], [false, true, true]];
  const numeric = mask.map((row) => row.map(Number));
  assert.deepEqual(attn.scaledDotProduct({ q: Q, k: Q, v: V, mask }),
                   attn.scaledDotProduct({ q: Q, k: Q, v: V, mask: numeric }));
});

test('undefined fields are skipped as if absent', async () => {
  const attn = await loadEngine();
  assert.deepEqual(attn.scaledDotProduct({ q: Q, k: Q, v: V, mask: undefined, scale: undefined }),
                   attn.scaledDotProduct({ q: Q, k: Q, v: V }));
});

test('format json parses to what run returns, and text, markdown and latex are non-empty walkthroughs', async () => {
  const attn = await loadEngine();
  const input = { kind: 'scaledDotProduct', q: Q, k: Q, v: V };
  assert.deepEqual(JSON.parse(attn.format(input, 'json')), attn.run(input));
  assert.deepEqual(JSON.parse(attn.format(input)), attn.run(input));
  for (const style of ['text', 'markdown', 'latex']) {
    const text = attn.format(input, style);
    assert.ok(text.includes('0.4011'), `${style} shows the first weight: ${text.slice(0, 200)}`);
  }
});

test('format rejects an unknown style', async () => {
  const attn = await loadEngine();
  assert.throws(() => attn.format({ kind: 'linear', q: Q, k: Q, v: V }, 'html'),
                { message: 'format: expected "json", "text", "markdown", "latex" or "steps", got "html"' });
});

test('sdpaFlat agrees with scaledDotProduct, batched, with scale and causal options', async () => {
  const attn = await loadEngine();
  const random = randomSource(7);
  const [batch, nQ, nK, dK, dV] = [2, 3, 4, 5, 2];
  const q = Array.from({ length: batch }, () => random.matrix(nQ, dK));
  const k = Array.from({ length: batch }, () => random.matrix(nK, dK));
  const v = Array.from({ length: batch }, () => random.matrix(nK, dV));
  const flat = (x) => Float64Array.from(x.flat(2));
  const cases = [
    [{}, {}],
    [{ scale: 0.5 }, { scale: 0.5 }],
    [{ scale: false }, { scale: false }],
    [{ causal: true }, { mask: 'causal' }],
    [{ window: 1 }, { window: 1 }],
    [{ stride: 2, causal: true }, { stride: 2, mask: 'causal' }],
  ];
  for (const [flatOptions, fields] of cases) {
    const fast = attn.sdpaFlat({ q: flat(q), k: flat(k), v: flat(v), batch, nQ, nK, dK, dV,
                                 weights: true, ...flatOptions });
    const full = attn.scaledDotProduct({ q, k, v, ...fields });
    assert.ok(fast.output instanceof Float64Array && fast.weights instanceof Float64Array);
    assert.deepEqual(Array.from(fast.output), full.output.flat(2), JSON.stringify(flatOptions));
    assert.deepEqual(Array.from(fast.weights), full.weights.flat(2), JSON.stringify(flatOptions));
  }
});

test('linearFlat agrees with linear, batched, causal and not', async () => {
  const attn = await loadEngine();
  const random = randomSource(11);
  const [batch, nQ, nK, dK, dV] = [2, 4, 4, 3, 2];
  const q = Array.from({ length: batch }, () => random.matrix(nQ, dK));
  const k = Array.from({ length: batch }, () => random.matrix(nK, dK));
  const v = Array.from({ length: batch }, () => random.matrix(nK, dV));
  const flat = (x) => Float64Array.from(x.flat(2));
  for (const causal of [false, true]) {
    const fast = attn.linearFlat({ q: flat(q), k: flat(k), v: flat(v), batch, nQ, nK, dK, dV, causal });
    assert.deepEqual(Array.from(fast.output), attn.linear({ q, k, v, causal }).output.flat(2));
  }
  assert.throws(() => attn.linearFlat({ q: flat(q), k: flat(k), v: flat(v), nQ, nK, dK, dV }),
                { message: 'linearFlat: q must hold batch·nQ·dK = 12 numbers, got 24 numbers' });
});

test('sdpaFlat checks its sizes against the arrays it is given', async () => {
  const attn = await loadEngine();
  const q = new Float64Array(6);
  assert.throws(() => attn.sdpaFlat({ q, k: q, v: new Float64Array(8), nQ: 3, nK: 3, dK: 2, dV: 3 }),
                { message: 'sdpaFlat: v must hold batch·nK·dV = 9 numbers, got 8 numbers' });
  assert.throws(() => attn.sdpaFlat({ q, k: q, v: q, nQ: 3, nK: 3, dK: 2 }),
                { message: 'sdpaFlat: dV must be an integer from 1 to 2147483647, got nothing', status: 2 });
});

test('results stay right when a call grows the WebAssembly memory', async () => {
  const attn = await loadAttention({ wasmBinary: readFileSync(wasmPath) }); // a fresh heap
  const random = randomSource(3);
  const [n, d] = [1600, 4]; // the weights alone take 20 MB, more than the initial 16 MB
  const q = Float64Array.from({ length: n * d }, () => random.uniform());
  const k = Float64Array.from({ length: n * d }, () => random.uniform());
  const v = Float64Array.from({ length: n * d }, () => random.uniform());
  const before = attn.memoryStats().memoryBytes;
  const { output, weights } = attn.sdpaFlat({ q, k, v, nQ: n, nK: n, dK: d, dV: d, weights: true });
  assert.ok(attn.memoryStats().memoryBytes > before, 'the memory grew');
  // The last query on its own, as a plain problem, must see the same numbers.
  const rows = (flat) => Array.from({ length: n }, (_, i) => Array.from(flat.subarray(i * d, (i + 1) * d)));
  const last = attn.scaledDotProduct({ q: [rows(q)[n - 1]], k: rows(k), v: rows(v) });
  assert.deepEqual(Array.from(output.subarray((n - 1) * d)), last.output[0]);
  assert.deepEqual(Array.from(weights.subarray((n - 1) * n)), last.weights[0]);
});

test('format places a walkthrough in a document: its title and heading level, or a clear error', async () => {
  const attn = await loadEngine();
  const problem = { kind: 'softmax', x: [1, 2] };
  const markdown = attn.format(problem, 'markdown', { title: 'Lecture 7', headingLevel: 3 });
  assert.match(markdown, /^### Lecture 7\n/);
  assert.match(markdown, /\n#### Step 1\. /);
  assert.equal(attn.format(problem, 'markdown', {}), attn.format(problem, 'markdown'));
  assert.equal(attn.steps(problem).title, 'Softmax');
  assert.match(attn.format(problem, 'steps', { title: 'Lecture 7' }), /^\{"title":"Lecture 7",/);
  // 1 to 4, as --heading-level takes (C's 0 for "the default" is not a level).
  for (const level of [0, -1, 5]) {
    assert.throws(() => attn.format(problem, 'markdown', { headingLevel: level }),
      { name: 'AttentionError', message: `heading level: must be 1 to 4, got ${level}`, status: 6 });
  }
  assert.throws(() => attn.format(problem, 'markdown', { headingLevel: 1.5 }), /heading level: must be 1 to 4, got 1\.5/);
  assert.throws(() => attn.format(problem, 'markdown', { title: 'a\u0007b' }),
    { message: 'title: must not hold control characters (byte 2 is 0x07)', status: 10 });
  assert.throws(() => attn.format(problem, 'markdown', { title: 7 }), /title: expected text without control characters, got a number/);
});
