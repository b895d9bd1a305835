// Repeated calls, successful or not, must leave the WASM heap as they found it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine, randomSource } from './support.mjs';

const REPEATS = 200;

function assertNoGrowth(attn, call) {
  call(); // the first call may size the heap once
  const before = attn.memoryStats();
  for (let i = 0; i < REPEATS; i++) {
    call();
    assert.equal(attn.memoryStats().allocatedBytes, before.allocatedBytes,
                 `bytes still allocated after call ${i + 1}`);
  }
  assert.deepEqual(attn.memoryStats(), before);
}

const random = randomSource(11);
const x = random.matrix(6, 8);
const wq = random.matrix(8, 8);
const wk = random.matrix(8, 8);
const wv = random.matrix(8, 8);
const wo = random.matrix(8, 4);

test(`${REPEATS} identical multiHead calls leave allocation and memory size unchanged`, async () => {
  const attn = await loadEngine();
  assertNoGrowth(attn, () => attn.multiHead({ x, numHeads: 2, wq, wk, wv, wo, mask: 'causal' }));
});

test(`${REPEATS} scaledDotProduct calls with tokens and every format leak nothing`, async () => {
  const attn = await loadEngine();
  const input = { kind: 'scaledDotProduct', q: x, k: x, v: x, tokens: ['a', 'b', 'c', 'd', 'e', 'f'] };
  assertNoGrowth(attn, () => {
    attn.run(input);
    attn.format(input, 'markdown');
    attn.format(input, 'text');
  });
});

test(`${REPEATS} failing calls leak nothing`, async () => {
  const attn = await loadEngine();
  assertNoGrowth(attn, () => {
    assert.throws(() => attn.scaledDotProduct({ q: x, k: wo, v: x }));  // C shape error
    assert.throws(() => attn.scaledDotProduct({ q: [[1, 2], [3]], k: x, v: x }));  // JS shape error
    assert.throws(() => attn.run({ kind: 'noSuchKind' }));
  });
});

test(`${REPEATS} sdpaFlat calls leak nothing`, async () => {
  const attn = await loadEngine();
  const q = Float64Array.from(x.flat());
  assertNoGrowth(attn, () => attn.sdpaFlat({ q, k: q, v: q, nQ: 6, nK: 6, dK: 8, dV: 8 }));
});
