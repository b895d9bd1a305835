// web/lib/parallel.js: scaled dot-product attention with its query rows
// split across workers (Node worker threads here, each loading the page's
// engine as a Web Worker does) gives what one call of the engine gives, to
// the bit, for any number of workers; what it cannot split is refused; a
// pool that is closed rejects the call in progress.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { loadAttention } from '../../web/lib/attention-node.js';
import { PoolClosedError, ROW_ALIGN, createAttentionPool, rowBlocks, workerCount } from '../../web/lib/parallel.js';
import { seededRandom } from '../../web/presets.js';

const wasmBinary = await readFile(new URL('../../web/lib/attention-page.wasm', import.meta.url));
const engine = await loadAttention({ wasmBinary });
const WORKER = new URL('./fixtures/parallel-worker.mjs', import.meta.url);

// A worker thread as parallel.js talks to a Web Worker.
function spawn() {
  const worker = new Worker(WORKER);
  return {
    postMessage: (message, transfer) => worker.postMessage(message, transfer),
    addEventListener: (type, listener) => worker.on(type, type === 'message' ? (data) => listener({ data }) : (error) => listener({ message: error.message })),
    terminate: () => worker.terminate(),
  };
}

const pools = [];
async function pool(size) {
  const made = await createAttentionPool({ size, spawn, wasmBinary });
  pools.push(made);
  return made;
}
after(() => pools.forEach((made) => made.close()));

function inputs(Type, nQ, nK, dK, dV, seed) {
  const random = seededRandom(seed);
  const matrix = (n) => Type.from({ length: n }, () => 4 * random() - 2);
  return { q: matrix(nQ * dK), k: matrix(nK * dK), v: matrix(nK * dV), nQ, nK, dK, dV };
}

const sameBits = (actual, expected, what) => {
  assert.equal(actual.constructor, expected.constructor, what);
  assert.equal(actual.length, expected.length, what);
  const i = actual.findIndex((x, j) => !Object.is(x, expected[j]));
  assert.equal(i, -1, `${what}[${i}]: ${actual[i]}, one call gives ${expected[i]}`);
};

test('the query blocks start at multiples of ROW_ALIGN and cover every row once', () => {
  assert.deepEqual(rowBlocks(1000, 3), [[0, 384], [384, 768], [768, 1000]]);
  assert.deepEqual(rowBlocks(16384, 2), [[0, 8256], [8256, 16384]]);
  assert.deepEqual(rowBlocks(50, 4), [[0, 50]], 'fewer rows than ROW_ALIGN make one block');
  assert.deepEqual(rowBlocks(2 * ROW_ALIGN, 8), [[0, ROW_ALIGN], [ROW_ALIGN, 2 * ROW_ALIGN]]);
});

test('the workers to start are the cores the device reports, at most eight, and one where it reports none', () => {
  assert.equal(workerCount({ hardwareConcurrency: 2 }), 2);
  assert.equal(workerCount({ hardwareConcurrency: 64 }), 8);
  assert.equal(workerCount({ hardwareConcurrency: 1 }), 1);
  assert.equal(workerCount({}), 1);
  assert.equal(workerCount(undefined), 1);
});

test('on 1, 2, 3 and 4 workers the output and weights equal one call of the engine to the bit, float32 and float64', async () => {
  const one = await pool(1);
  const many = [await pool(2), await pool(3), await pool(4)];
  for (const [Type, nQ, nK, d, options] of [
    [Float32Array, 1000, 700, 32, {}],
    [Float32Array, 777, 2100, 16, { scale: 0.3, keyLength: 1500 }],
    [Float64Array, 500, 300, 8, { scale: false }],
  ]) {
    const input = inputs(Type, nQ, nK, d, d, nQ);
    const expected = engine.sdpaFlat({ ...input, ...options, weights: true });
    for (const workers of [one, ...many]) {
      await workers.setKeys(input);
      const got = await workers.sdpa({ q: input.q, nQ, ...options, weights: true });
      sameBits(got.output, expected.output, `${workers.size} workers, ${Type.name} ${nQ}×${nK}: output`);
      sameBits(got.weights, expected.weights, `${workers.size} workers, ${Type.name} ${nQ}×${nK}: weights`);
      const online = await workers.sdpa({ q: input.q, nQ, ...options });
      assert.deepEqual(Object.keys(online), ['output']);
      sameBits(online.output, engine.sdpaFlat({ ...input, ...options }).output, `${workers.size} workers online`);
    }
  }
});

test('masks that depend on where a query is are refused, and the engine\u2019s errors come back with its message', async () => {
  const workers = await pool(2);
  const input = inputs(Float32Array, 200, 200, 4, 4, 1);
  await assert.rejects(workers.sdpa({ q: input.q, nQ: 200 }), /setKeys first/);
  await workers.setKeys(input);
  await assert.rejects(workers.sdpa({ q: input.q, nQ: 200, causal: true, window: 3 }),
    { message: 'the workers split queries into blocks, so they cannot apply causal, window' });
  await assert.rejects(workers.sdpa({ q: input.q, nQ: 200, scale: Infinity }), /^Error: sdpaFlat: scale must be a finite number/);
  const got = await workers.sdpa({ q: input.q, nQ: 200 });
  sameBits(got.output, engine.sdpaFlat(input).output, 'after an error');
});

test('closing the pool rejects the call in progress and every later one', async () => {
  const workers = await pool(2);
  const input = inputs(Float32Array, 2048, 2048, 32, 32, 2);
  await workers.setKeys(input);
  const call = workers.sdpa({ q: input.q, nQ: 2048 });
  workers.close();
  await assert.rejects(call, PoolClosedError);
  await assert.rejects(workers.sdpa({ q: input.q, nQ: 2048 }), PoolClosedError);
});

test('a worker that cannot start fails the pool with its message', async () => {
  const broken = () => {
    const worker = spawn();
    return { ...worker, postMessage: () => { throw new Error('no worker here'); } };
  };
  await assert.rejects(createAttentionPool({ size: 2, spawn: broken, wasmBinary }), /no worker here/);
});
