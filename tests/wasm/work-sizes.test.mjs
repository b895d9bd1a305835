// The *_work_size functions in WebAssembly, where size_t has 32 bits: each
// returns the exact number of doubles its kernel needs, or 0 when that
// number does not fit in a size_t (attention.h), never a count that has
// wrapped around to a small one. Called on the module's exports directly,
// with sizes up to 2^31 - 1, against the counts worked out here in BigInt.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { wasmPath } from './support.mjs';

const SIZE_MAX = 2n ** 32n - 1n;
const BIG = [1, 2, 3, 65536, 2 ** 29 + 1, 2 ** 30, 2 ** 31 - 1];

/** The engine's raw exports (nothing it imports is called by these). */
async function rawExports() {
  const module = await WebAssembly.compile(await readFile(wasmPath));
  const imports = {};
  for (const { module: from, name } of WebAssembly.Module.imports(module)) {
    imports[from] ??= {};
    imports[from][name] = () => { throw new Error(`unexpected call of ${from}.${name}`); };
  }
  const { exports } = await WebAssembly.instantiate(module, imports);
  exports._initialize?.();
  return exports;
}

/** Asserts that got (a size_t as wasm returns it) is exact, or 0 where exact cannot be counted. */
function assertSize(got, exact, what) {
  const value = BigInt(got >>> 0);
  if (exact > SIZE_MAX) assert.equal(value, 0n, `${what}: ${exact} doubles do not fit in 32 bits, got ${value}`);
  else assert.ok(value === exact || value === 0n, `${what}: expected ${exact} (or 0), got ${value}`);
}

const combos = (n) => (n === 1 ? BIG.map((a) => [a]) : combos(n - 1).flatMap((rest) => BIG.map((a) => [...rest, a])));

test('the work sizes of the kernels taking sizes are exact or 0 with 32-bit size_t, never wrapped', async () => {
  const wasm = await rawExports();
  const N = BigInt;
  for (const [n] of combos(1)) {
    assertSize(wasm.attn_sdpa_work_size(n), N(n), `attn_sdpa_work_size(${n})`);
    assertSize(wasm.attn_sdpa_backward_work_size(n), 2n * N(n), `attn_sdpa_backward_work_size(${n})`);
    assertSize(wasm.attn_luong_work_size(0, n, 1, 1), N(n), `attn_luong_work_size(dot, ${n})`);
  }
  for (const [a, b] of combos(2)) {
    assertSize(wasm.attn_linear_work_size(a, b), N(a) * (N(b) + 2n), `attn_linear_work_size(${a}, ${b})`);
    assertSize(wasm.attn_feed_forward_work_size(a, b), N(a) * N(b), `attn_feed_forward_work_size(${a}, ${b})`);
    assertSize(wasm.attn_feed_forward_backward_work_size(a, b), 2n * N(a) * N(b), `attn_feed_forward_backward_work_size(${a}, ${b})`);
    assertSize(wasm.attn_luong_work_size(1, a, b, 1), N(a) * (N(b) + 1n), `attn_luong_work_size(general, ${a}, ${b})`);
    assertSize(wasm.attn_luong_backward_work_size(1, a, b, 1), N(a) * 2n * N(b) + N(a), `attn_luong_backward_work_size(general, ${a}, ${b})`);
  }
  for (const [a, b, c] of combos(3)) {
    assertSize(wasm.attn_additive_work_size(a, b, c), (N(a) + 2n) * N(c) + N(a), `attn_additive_work_size(${a}, ${b}, ${c})`);
    assertSize(wasm.attn_additive_backward_work_size(a, b, c), (2n * N(a) + 3n) * N(c) + N(a), `attn_additive_backward_work_size(${a}, ${b}, ${c})`);
    assertSize(wasm.attn_linear_backward_work_size(a, b, c), N(b) * (N(c) + 3n) + 2n * N(a), `attn_linear_backward_work_size(${a}, ${b}, ${c})`);
  }
});

test('multi-head attention\u2019s work sizes are exact or 0 with 32-bit size_t, never wrapped', async () => {
  const wasm = await rawExports();
  const dims = wasm.malloc(8 * 4); // attn_mha_dims: eight ints
  try {
    for (const [nQ, nKv, dModel] of combos(3)) {
      // batch, n_q, n_kv, d_q_in, d_kv_in, d_model, num_heads, d_out
      new Int32Array(wasm.memory.buffer, dims, 8).set([1, nQ, nKv, 1, 1, dModel, 1, 1]);
      const [q, kv, m] = [BigInt(nQ), BigInt(nKv), BigInt(dModel)];
      assertSize(wasm.attn_multihead_work_size(dims), (2n * q + 2n * kv) * m + kv,
        `attn_multihead_work_size(n_q ${nQ}, n_kv ${nKv}, d_model ${dModel})`);
      assertSize(wasm.attn_multihead_backward_work_size(dims), (4n * q + 4n * kv) * m + 2n * kv,
        `attn_multihead_backward_work_size(n_q ${nQ}, n_kv ${nKv}, d_model ${dModel})`);
    }
  } finally {
    wasm.free(dims);
  }
});
