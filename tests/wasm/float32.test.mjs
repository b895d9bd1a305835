// The float32 path through WASM (the WASM SIMD kernel): sdpaFlat and
// linearFlat given Float32Arrays against the same inputs in float64, with
// every mask, batches, nQ != nK and dK != dV; errors; memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine, randomSource } from './support.mjs';

function randomFloats(random, length) {
  return Float32Array.from({ length }, () => random.uniform(-1, 1));
}

// max |a - b| / max |b|
function normwiseError(actual, expected) {
  let difference = 0;
  let size = 0;
  for (let i = 0; i < expected.length; i++) {
    const d = Math.abs(actual[i] - expected[i]);
    difference = d > difference || Number.isNaN(d) ? d : difference;
    size = Math.max(size, Math.abs(expected[i]));
  }
  return size > 0 ? difference / size : difference;
}

function problem(seed, batch, nQ, nK, dK, dV) {
  const random = randomSource(seed);
  return {
    q: randomFloats(random, batch * nQ * dK),
    k: randomFloats(random, batch * nK * dK),
    v: randomFloats(random, batch * nK * dV),
    allowed: Array.from({ length: nQ * nK }, () => random.uniform(0, 1) < 0.6),
    batch, nQ, nK, dK, dV,
  };
}

const asDoubles = ({ q, k, v, ...rest }) =>
  ({ q: Float64Array.from(q), k: Float64Array.from(k), v: Float64Array.from(v), ...rest });

test('sdpaFlat given Float32Arrays agrees with the float64 path to 1e-5 with every mask', async () => {
  const attn = await loadEngine();
  const masks = [
    {}, { causal: true }, { keyLength: [0, 50] }, { window: 5 }, { stride: 3 },
    { scale: 0.3, window: 70 }, { scale: false, causal: true, keyLength: 40 },
  ];
  for (const [seed, batch, nQ, nK, dK, dV] of [[1, 2, 37, 70, 19, 23], [2, 2, 130, 129, 64, 64]]) {
    const p = problem(seed, batch, nQ, nK, dK, dV);
    for (const options of [...masks, { allowed: p.allowed }]) {
      const { allowed, ...shape } = p;
      const input = { ...shape, ...options, weights: true };
      const fast = attn.sdpaFlat(input);
      const exact = attn.sdpaFlat(asDoubles(input));
      assert.ok(fast.output instanceof Float32Array && fast.weights instanceof Float32Array);
      assert.ok(exact.output instanceof Float64Array);
      const label = `${nQ}x${nK}: ${JSON.stringify(Object.keys(options))}`;
      assert.ok(normwiseError(fast.output, exact.output) <= 1e-5, label);
      assert.ok(normwiseError(fast.weights, exact.weights) <= 1e-5, label);
      for (let i = 0; i < exact.weights.length; i++) {
        if (exact.weights[i] === 0) assert.equal(fast.weights[i], 0, `${label}: weight ${i}`);
      }
      const online = attn.sdpaFlat({ ...input, weights: false });
      assert.ok(normwiseError(online.output, exact.output) <= 1e-5, `${label} (online)`);
    }
  }
});

test('at T = 2048, d = 64 the float32 outputs agree with float64 to 1e-5', async () => {
  const attn = await loadEngine();
  const p = problem(2048, 1, 2048, 2048, 64, 64);
  const { allowed, ...input } = p;
  const error = normwiseError(attn.sdpaFlat(input).output, attn.sdpaFlat(asDoubles(input)).output);
  assert.ok(error <= 1e-5, `error ${error}`);
});

test('linearFlat given Float32Arrays agrees with the float64 path, causal and not', async () => {
  const attn = await loadEngine();
  const { allowed, ...input } = problem(3, 2, 50, 45, 12, 20);
  for (const causal of [false, true]) {
    const fast = attn.linearFlat({ ...input, causal });
    assert.ok(fast.output instanceof Float32Array);
    assert.ok(normwiseError(fast.output, attn.linearFlat({ ...asDoubles(input), causal }).output) <= 1e-5);
  }
});

test('float32 errors carry the C status and leave the engine usable', async () => {
  const attn = await loadEngine();
  const { allowed, ...input } = problem(4, 1, 3, 3, 2, 2);
  const bad = Float32Array.from(input.q);
  bad[1] = NaN;
  assert.throws(() => attn.sdpaFlat({ ...input, q: bad }), (e) => e.status === 7 && /attn_sdpa_f32/.test(e.message));
  assert.throws(() => attn.sdpaFlat({ ...input, window: -1 }), (e) => e.status === 6);
  assert.throws(() => attn.sdpaFlat({ ...input, q: Float64Array.from(input.q) }), /all Float32Arrays/);
  assert.throws(() => attn.sdpaFlat({ ...input, keyLength: [1, 2] }), /keyLength/);
  assert.ok(attn.sdpaFlat(input).output instanceof Float32Array);
});

test('repeated float32 calls, of growing and shrinking sizes, leak nothing', async () => {
  const attn = await loadEngine();
  const big = problem(5, 1, 300, 300, 64, 64);
  const small = problem(6, 1, 4, 4, 64, 64);
  delete big.allowed;
  delete small.allowed;
  attn.sdpaFlat(big); // sizes the reused block once
  const before = attn.memoryStats();
  for (let i = 0; i < 50; i++) {
    attn.sdpaFlat(small);
    attn.sdpaFlat(big);
    attn.linearFlat(small);
  }
  assert.deepEqual(attn.memoryStats(), before);
});

test('given an output array, sdpaFlat and linearFlat write into it the numbers they would return', async () => {
  const attn = await loadEngine();
  const { allowed, ...input } = problem(7, 2, 5, 6, 3, 4);
  for (const [name, run] of [['sdpaFlat', attn.sdpaFlat], ['linearFlat', attn.linearFlat]]) {
    for (const shaped of [input, asDoubles(input)]) {
      const Type = shaped.q.constructor;
      const expected = run({ ...shaped, causal: true }).output;
      const into = new Type(2 * 5 * 4).fill(99);
      const { output } = run({ ...shaped, causal: true, output: into });
      assert.equal(output, into, `${name} (${Type.name}) returns the array it was given`);
      assert.deepEqual([...into], [...expected], `${name} (${Type.name})`);
    }
  }
  const weighted = attn.sdpaFlat({ ...input, weights: true, output: new Float32Array(40) });
  assert.equal(weighted.weights.length, 2 * 5 * 6);
});

test('an output array of the wrong type or length is an error that names it', async () => {
  const attn = await loadEngine();
  const { allowed, ...input } = problem(8, 1, 3, 3, 2, 2);
  assert.throws(() => attn.sdpaFlat({ ...input, output: new Float32Array(5) }),
                (e) => e.status === 10 && /output must be a Float32Array of batch·nQ·dV = 6 numbers .*got a Float32Array of 5/.test(e.message));
  assert.throws(() => attn.sdpaFlat({ ...input, output: new Float64Array(6) }),
                /output must be a Float32Array .*got a Float64Array of 6/);
  assert.throws(() => attn.linearFlat({ ...asDoubles(input), output: [0, 0, 0, 0, 0, 0] }),
                /linearFlat: output must be a Float64Array .*got an array/);
  assert.ok(attn.sdpaFlat(input).output instanceof Float32Array, 'the engine stays usable');
});

test('a float32 call whose work array would pass maxBytes is refused before anything is allocated', async () => {
  const attn = await loadEngine();
  // One key of 100 000 numbers: the inputs are 1.6 MB, but the kernel packs K
  // in tiles of keys and keeps blocks of query rows, some 90 MB here.
  const d = 100000;
  const q = new Float32Array(d).fill(0.5);
  const before = attn.memoryStats();
  assert.throws(() => attn.sdpaFlat({ q, k: q, v: q, nQ: 1, nK: 1, dK: d, dV: d, maxBytes: 16 * 1024 * 1024 }),
                (e) => e.status === 12 && /sdpaFlat: the call needs \d+ bytes of WebAssembly memory, more than its limit of 16777216 bytes/.test(e.message));
  assert.deepEqual(attn.memoryStats(), before, 'nothing was allocated');
  const { output } = attn.sdpaFlat({ q, k: q, v: q, nQ: 1, nK: 1, dK: d, dV: d, maxBytes: 128 * 1024 * 1024 });
  assert.equal(output[d - 1], 0.5, 'within a larger limit it runs: one key, so the output is its value row');
  // The figure an error names is what the call takes: at that limit it runs, one byte less it does not.
  for (const [name, run] of [['sdpaFlat', attn.sdpaFlat], ['linearFlat', attn.linearFlat]]) {
    const small = { q: q.subarray(0, 12), k: q.subarray(0, 12), v: q.subarray(0, 12), nQ: 3, nK: 3, dK: 4, dV: 4 };
    let needed;
    assert.throws(() => run({ ...small, maxBytes: 1 }), (e) => {
      needed = Number(/needs (\d+) bytes/.exec(e.message)?.[1]);
      return e.status === 12 && e.message.startsWith(`${name}: `);
    });
    assert.equal(run({ ...small, maxBytes: needed }).output.length, 12, `${name} within ${needed} bytes`);
    assert.throws(() => run({ ...small, maxBytes: needed - 1 }), (e) => e.status === 12, `${name} within ${needed - 1} bytes`);
  }
});
