// The engine's builds without WebAssembly SIMD (attention-scalar.wasm and
// attention-page-scalar.wasm, for browsers that lack it): they hold no SIMD
// instruction, and they give the SIMD builds' numbers, float64 to the bit
// and float32 within the float32 tests' tolerance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { engineFile, loadAttention, wasmSupport } from '../../web/lib/attention-node.js';
import { randomSource } from './support.mjs';

const lib = (file) => fileURLToPath(new URL(`../../web/lib/${file}`, import.meta.url));
const vectors = JSON.parse(await readFile(new URL('../vectors/tutorials.json', import.meta.url), 'utf8'));

// binaryen's disassembler comes with emscripten, which built the modules.
function v128Count(file) {
  const result = spawnSync('wasm-dis', [lib(file)], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.split('v128').length - 1;
}

test('Node runs the SIMD builds, and engineFile names them', () => {
  // The relaxed-SIMD ones where Node runs relaxed SIMD (relaxed.test.mjs).
  const suffix = { simd: '', relaxed: '-relaxed' }[wasmSupport()];
  assert.ok(suffix !== undefined, wasmSupport());
  assert.equal(engineFile('attention'), `attention${suffix}.wasm`);
  assert.equal(engineFile('attention-page'), `attention-page${suffix}.wasm`);
});

test('the scalar builds hold no v128 value or instruction, the SIMD builds do', () => {
  for (const name of ['attention', 'attention-page']) {
    assert.equal(v128Count(`${name}-scalar.wasm`), 0, `${name}-scalar.wasm`);
    assert.ok(v128Count(`${name}.wasm`) > 100, `${name}.wasm uses SIMD`);
  }
});

test('the scalar engine names its kernel and computes every tutorial vector to the same bits as the SIMD one', async () => {
  const simd = await loadAttention({ wasmBinary: await readFile(lib('attention.wasm')) });
  const scalar = await loadAttention({ wasmBinary: await readFile(lib('attention-scalar.wasm')) });
  assert.equal(simd.kernelName(), 'wasm-simd128');
  assert.equal(scalar.kernelName(), 'scalar');
  for (const vector of vectors) {
    assert.deepEqual(scalar.run(vector.input), simd.run(vector.input), vector.id);
  }
});

test('the scalar float32 path agrees with the SIMD one within 1e-5', async () => {
  const simd = await loadAttention({ wasmBinary: await readFile(lib('attention-page.wasm')) });
  const scalar = await loadAttention({ wasmBinary: await readFile(lib('attention-page-scalar.wasm')) });
  const random = randomSource(7);
  const [nQ, nK, d] = [37, 53, 24];
  const fill = (n) => Float32Array.from(random.vector(n));
  const q = fill(nQ * d), k = fill(nK * d), v = fill(nK * d);
  for (const causal of [false, true]) {
    const a = simd.sdpaFlat({ q, k, v, nQ, nK, dK: d, dV: d, causal, weights: true });
    const b = scalar.sdpaFlat({ q, k, v, nQ, nK, dK: d, dV: d, causal, weights: true });
    for (const key of ['output', 'weights']) {
      a[key].forEach((x, i) => assert.ok(Math.abs(x - b[key][i]) <= 1e-5, `${key}[${i}] ${x} vs ${b[key][i]} (causal ${causal})`));
    }
  }
});
