// The WASM engine against the native CLI (build/attn) on the same inputs:
// every number, dropout with a seed, and the Markdown walkthrough.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertClose, haveNativeCli, loadEngine, nullsToMinusInfinity, runNative } from './support.mjs';
import { randomProblems } from './problems.mjs';

const AGREEMENT = 1e-6;
const SEEDS = [1, 2, 3, 4, 5];
const skip = !haveNativeCli() && 'build/attn is not built (make build/attn)';

function nativeResult(input) {
  const { status, stdout, stderr } = runNative(input, 'json');
  assert.equal(status, 0, `build/attn failed: ${stderr}`);
  return nullsToMinusInfinity(JSON.parse(stdout));
}

// The same keys at every level, and numbers within AGREEMENT.
function assertSameResult(wasm, native, path) {
  if (native !== null && typeof native === 'object' && !Array.isArray(native)) {
    assert.deepEqual(Object.keys(wasm).sort(), Object.keys(native).sort(), `${path}: keys`);
  }
  assertClose(wasm, native, AGREEMENT, path);
}

for (const seed of SEEDS) {
  test(`random problems of every kind from seed ${seed} agree with build/attn`, { skip }, async () => {
    const attn = await loadEngine();
    randomProblems(seed).forEach((input, i) => {
      const path = `seed ${seed} problem ${i} (${input.kind})`;
      const wasm = attn.run(input);
      const native = nativeResult(input);
      assertSameResult(wasm, native, path);
      for (const [name, value] of Object.entries(native)) {
        if (Array.isArray(value)) assertSameResult(wasm[name], value, `${path}.${name}`);
      }
    });
  });
}

test('dropout with the same seed drops the same weights as build/attn', { skip }, async () => {
  const attn = await loadEngine();
  const [input] = randomProblems(9);
  const dropped = { ...input, dropout: 0.4, seed: 20240611 };
  const wasm = attn.run(dropped);
  assertSameResult(wasm, nativeResult(dropped), 'dropout');
  assert.deepEqual(attn.run(dropped), wasm, 'the same seed again gives the same weights');
  const zeros = wasm.weights.flat().filter((w) => w === 0).length;
  assert.ok(zeros > 0, 'some weights were dropped');
  const reseeded = attn.run({ ...dropped, seed: 7 });
  assertSameResult(reseeded, nativeResult({ ...dropped, seed: 7 }), 'dropout, seed 7');
  assert.notDeepEqual(reseeded.weights, wasm.weights, 'another seed drops other weights');
});

test('multi-head dropout applies the same per-head pattern as build/attn', { skip }, async () => {
  const attn = await loadEngine();
  const input = randomProblems(10).find((problem) => problem.kind === 'multiHead');
  const dropped = { ...input, dropout: 0.3, seed: 99 };
  const result = attn.run(dropped);
  assertSameResult(result, nativeResult(dropped), 'multiHead dropout');
  result.heads.forEach((head, h) => {
    assertSameResult(head, nativeResult(dropped).heads[h], `multiHead dropout, head ${h}`);
  });
});

for (const seed of [1, 2]) {
  // JSON is compared by value above, not byte for byte: it prints 17
// significant digits, and tanh (additive, Luong concat) may differ in the
// last bit between glibc and the musl libm inside the WASM module.
test(`markdown, latex and text from format equal build/attn byte for byte (seed ${seed})`, { skip }, async () => {
    const attn = await loadEngine();
    for (const input of randomProblems(seed)) {
      for (const style of ['markdown', 'latex', 'text']) {
        const native = runNative(input, style);
        assert.equal(native.status, 0, native.stderr);
        assert.equal(attn.format(input, style), native.stdout, `${input.kind} as ${style}`);
      }
    }
  });
}

test('markdown and latex with tokens and a causal mask equal build/attn byte for byte', { skip }, async () => {
  const attn = await loadEngine();
  const input = {
    kind: 'scaledDotProduct', q: [[1, 0], [0, 1], [1, 1]], k: [[1, 0], [0, 1], [1, 1]],
    v: [[1, 2, 3], [4, 5, 6], [7, 8, 9]], mask: 'causal', tokens: ['the', 'c&t', 'x_{1}'],
  };
  for (const style of ['markdown', 'latex']) {
    const native = runNative(input, style);
    assert.equal(native.status, 0, native.stderr);
    assert.equal(attn.format(input, style), native.stdout, style);
  }
});
