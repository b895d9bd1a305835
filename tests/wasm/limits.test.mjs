// Sizes with a limit and an answer: calls above the byte limit throw
// ATTN_ERR_TOO_LARGE (12) before they allocate, sizes that cannot fit a
// wasm32 block are refused rather than wrapped around, and the module's
// memory is as it was after every failed call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { AttentionError, DEFAULT_MAX_BYTES, MAX_BLOCK_BYTES, loadAttention } from '../../web/lib/attention-node.js';
import { loadEngine, wasmPath } from './support.mjs';

const TOO_LARGE = 12;

// Runs call, which must throw an AttentionError with `status` (and message
// when given), and checks that the module's allocations and size are as
// they were before.
function assertRefusedCleanly(attn, call, status, message) {
  const before = attn.memoryStats();
  assert.throws(call, (error) => {
    assert.ok(error instanceof AttentionError, String(error));
    assert.equal(error.status, status, error.message);
    if (message !== undefined) assert.equal(error.message, message);
    return true;
  });
  assert.deepEqual(attn.memoryStats(), before);
}

test('the default limit is 256 MiB and no block may exceed 2 GiB - 1', () => {
  assert.equal(DEFAULT_MAX_BYTES, 268435456);
  assert.equal(MAX_BLOCK_BYTES, 2147483647);
});

test('sdpaFlat with weights of 2^32 bytes is refused before anything is allocated', async () => {
  const attn = await loadEngine();
  // The report's repro: 8 * 32768 * 16384 = 2^32 bytes of weights.
  const nQ = 32768, nK = 16384;
  const q = new Float64Array(nQ).fill(0.5), k = new Float64Array(nK).fill(0.25);
  assertRefusedCleanly(attn, () => attn.sdpaFlat({ q, k, v: k, nQ, nK, dK: 1, dV: 1, weights: true }),
    TOO_LARGE,
    'sdpaFlat: the call needs 4295884856 bytes of WebAssembly memory, more than its limit of 268435456 bytes; '
    + 'use smaller sizes or raise the limit (the maxBytes option)');
  // Raised to the most size_t can say, the weights still cannot be one block.
  assertRefusedCleanly(attn, () => attn.sdpaFlat({ q, k, v: k, nQ, nK, dK: 1, dV: 1, weights: true,
                                                   maxBytes: 2 ** 32 - 1 }), TOO_LARGE);
  // Without weights the same sizes run, and every output row averages v.
  const { output } = attn.sdpaFlat({ q, k, v: k, nQ, nK, dK: 1, dV: 1 });
  assert.equal(output.length, nQ);
  assert.equal(output[0], 0.25);
  assert.equal(output[nQ - 1], 0.25);
});

test('sdpaFlat and linearFlat honour their maxBytes option', async () => {
  const attn = await loadEngine();
  const q = Float64Array.from([1, 0, 0, 1, 1, 1]);
  const base = { q, k: q, v: q, nQ: 3, nK: 3, dK: 2, dV: 2 };
  // q, k, v, output (4 * 6 doubles), weights (9), work (3): 288 bytes, and 56 of options.
  assertRefusedCleanly(attn, () => attn.sdpaFlat({ ...base, weights: true, maxBytes: 343 }), TOO_LARGE,
    'sdpaFlat: the call needs 344 bytes of WebAssembly memory, more than its limit of 343 bytes; '
    + 'use smaller sizes or raise the limit (the maxBytes option)');
  assert.equal(attn.sdpaFlat({ ...base, weights: true, maxBytes: 344 }).weights.length, 9);
  assertRefusedCleanly(attn, () => attn.linearFlat({ ...base, maxBytes: 100 }), TOO_LARGE);
  assertRefusedCleanly(attn, () => attn.sdpaFlat({ ...base, maxBytes: 0 }), 6,
    'sdpaFlat: maxBytes must be an integer from 1 to 4294967295, got 0');
});

test('sizes beyond a C int are refused with ATTN_ERR_SIZE', async () => {
  const attn = await loadEngine();
  const q = new Float64Array(2);
  assertRefusedCleanly(attn, () => attn.sdpaFlat({ q, k: q, v: q, nQ: 2 ** 31, nK: 1, dK: 1, dV: 1 }), 2,
    'sdpaFlat: nQ must be an integer from 1 to 2147483647, got 2147483648');
});

test('a problem above loadAttention({ maxBytes }) is refused, inputs before results', async () => {
  const attn = await loadAttention({ wasmBinary: await readFile(wasmPath), maxBytes: 100 });
  const x = [1, 2, 3, 4];
  // x alone is 32 bytes, then its five results need 112 more.
  assertRefusedCleanly(attn, () => attn.softmax({ x }), TOO_LARGE,
    'softmax: its results and scratch space would make the problem hold 104 bytes, more than its limit of 100 bytes; '
    + 'use smaller inputs or raise the limit (maxBytes in the JS API, --max-bytes in build/attn)');
  assertRefusedCleanly(attn, () => attn.softmax({ x: Array.from({ length: 13 }, (_, i) => i) }), TOO_LARGE,
    'x: a vector of 13 would make the problem hold 104 bytes, more than its limit of 100 bytes; '
    + 'use smaller inputs or raise the limit (maxBytes in the JS API, --max-bytes in build/attn)');
  assertRefusedCleanly(attn, () => attn.format({ kind: 'softmax', x }, 'markdown'), TOO_LARGE);
  // The default engine runs the same problem.
  const roomy = await loadEngine();
  assert.equal(roomy.softmax({ x }).weights.length, 4);
});

test('loadAttention checks its maxBytes option', async () => {
  const wasmBinary = await readFile(wasmPath);
  await assert.rejects(loadAttention({ wasmBinary, maxBytes: 2 ** 32 }), {
    name: 'AttentionError', status: 6,
    message: 'loadAttention: maxBytes must be an integer from 1 to 4294967295, got 4294967296',
  });
  await assert.rejects(loadAttention({ wasmBinary, maxBytes: '1e6' }), { status: 6 });
});

test('a multiHead problem whose per-head results exceed the limit fails cleanly and the engine works on', async () => {
  const attn = await loadAttention({ wasmBinary: await readFile(wasmPath), maxBytes: 4096 });
  const n = 8, d = 4;
  const x = Array.from({ length: n }, (_, i) => Array.from({ length: d }, (_, j) => (i + j) / 10));
  const w = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? 1 : 0)));
  const problem = { x, numHeads: 2, wq: w, wk: w, wv: w, wo: w };
  assertRefusedCleanly(attn, () => attn.multiHead(problem), TOO_LARGE);
  const small = { ...problem, x: x.slice(0, 2) };
  assert.equal(attn.multiHead(small).output.length, 2);
});

// The float32 calls lay their inputs, results and work out in one block.
// Its size was once added up in 32-bit arithmetic, which wraps negative at
// 2^31 bytes: a block of weights that size passed the limit and the call
// wrote over the module's memory. Each size here (one element below, at and
// above 2^31 and 2^32 bytes of weights or of output) is refused with
// ATTN_ERR_TOO_LARGE, under the default limit and under the largest one,
// before anything is allocated, and the engine still answers afterwards.
const FLOAT32_BOUNDARIES = [2 ** 31 - 4, 2 ** 31, 2 ** 31 + 4, 2 ** 32 - 4, 2 ** 32, 2 ** 32 + 4];

// Two factors of `count` (nQ · nK = count), each small enough that the
// inputs stay a few megabytes.
function factorPair(count) {
  for (let a = Math.floor(Math.sqrt(count)); a >= 1; a -= 1) {
    if (count % a === 0) return [count / a, a];
  }
  return [count, 1];
}

function assertFloat32BlockRefused(attn, call, bytesAtLeast) {
  for (const maxBytes of [undefined, 2 ** 32 - 1]) {
    const before = attn.memoryStats();
    assert.throws(() => call(maxBytes), (error) => {
      assert.ok(error instanceof AttentionError, String(error));
      assert.equal(error.status, TOO_LARGE, error.message);
      const named = Number(/needs (\d+) bytes/.exec(error.message)?.[1]);
      assert.ok(named >= bytesAtLeast, `${error.message} names at least ${bytesAtLeast} bytes`);
      return true;
    });
    assert.deepEqual(attn.memoryStats(), before);
  }
}

function assertEngineStillAnswers(attn) {
  assert.deepEqual(Array.from(attn.softmax({ x: [0, 0] }).weights), [0.5, 0.5]);
  const one = Float32Array.of(2);
  const single = { q: one, k: one, v: Float32Array.of(3), nQ: 1, nK: 1, dK: 1, dV: 1 };
  assert.deepEqual(Array.from(attn.sdpaFlat(single).output), [3]);
}

test('float32 sdpaFlat refuses weights at each 2^31 and 2^32 boundary and the engine still answers', async () => {
  const attn = await loadEngine();
  assertEngineStillAnswers(attn); // the float32 scratch block exists before memoryStats is compared
  for (const bytes of FLOAT32_BOUNDARIES) {
    const [nQ, nK] = factorPair(bytes / 4);
    const q = new Float32Array(nQ), k = new Float32Array(nK);
    assertFloat32BlockRefused(attn, (maxBytes) => attn.sdpaFlat({ q, k, v: k, nQ, nK, dK: 1, dV: 1, weights: true,
        maxBytes }),
                              bytes);
    assertEngineStillAnswers(attn);
  }
});

test('float32 sdpaFlat and linearFlat refuse an output at each 2^31 and 2^32 boundary', async () => {
  const attn = await loadEngine();
  assertEngineStillAnswers(attn);
  for (const bytes of FLOAT32_BOUNDARIES) {
    // One key: output rows of dV floats for nQ queries.
    const [nQ, dV] = factorPair(bytes / 4);
    const q = new Float32Array(nQ), k = new Float32Array(1), v = new Float32Array(dV);
    for (const name of ['sdpaFlat', 'linearFlat']) {
      assertFloat32BlockRefused(attn, (maxBytes) => attn[name]({ q, k, v, nQ, nK: 1, dK: 1, dV, maxBytes }), bytes);
      assertEngineStillAnswers(attn);
    }
  }
});

test('the issue-23 float32 shape (n = 23,171 with weights) is refused and softmax still runs', async () => {
  const attn = await loadEngine();
  const n = 23171, f = new Float32Array(n);
  assert.throws(() => attn.sdpaFlat({ q: f, k: f, v: f, nQ: n, nK: n, dK: 1, dV: 1, weights: true }),
                (e) => e instanceof AttentionError && e.status === TOO_LARGE);
  assert.deepEqual(Array.from(attn.softmax({ x: [0, 0] }).weights), [0.5, 0.5]);
});
