// The engine's relaxed-SIMD builds (attention-relaxed.wasm and
// attention-page-relaxed.wasm): their float32 kernel multiplies and adds with
// f32x4.relaxed_madd, in the standard encoding, and gives the float64
// engine's numbers within the float32 tests' tolerance. The kernel runs only
// where relaxed SIMD does: `make test-wasm` runs this file again with
// --experimental-wasm-relaxed-simd where Node knows it (Node 20); elsewhere
// those tests are skipped, and say so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import wabtInit from 'wabt';
import { engineFile, loadAttention, wasmSupport } from '../../web/lib/attention-node.js';
import { randomSource } from './support.mjs';

const lib = (file) => fileURLToPath(new URL(`../../web/lib/${file}`, import.meta.url));
const load = async (file) => loadAttention({ wasmBinary: await readFile(lib(file)) });

const skip = wasmSupport() === 'relaxed' ? false
  : `Node ${process.version} runs no relaxed SIMD here (Node 20 needs --experimental-wasm-relaxed-simd, `
    + 'which make test-wasm passes where Node knows it): the relaxed kernel is not run';
if (skip) console.log(`# relaxed.test.mjs: ${skip}`);

// The instructions named `name` in wabt's disassembly of a build, read
// with SIMD and, if `relaxed`, relaxed SIMD enabled.
async function count(file, name, relaxed = true) {
  const wabt = await wabtInit();
  const module = wabt.readWasm(await readFile(lib(file)), { simd: true, relaxed_simd: relaxed });
  try {
    module.validate();
    return module.toText({}).split(name).length - 1;
  } finally {
    module.destroy();
  }
}

test('the relaxed builds multiply and add with f32x4.relaxed_madd, valid only with relaxed SIMD; the SIMD builds never do', async () => {
  const wabt = await wabtInit();
  for (const name of ['attention', 'attention-page']) {
    assert.ok(await count(`${name}-relaxed.wasm`, 'f32x4.relaxed_madd') >= 16, `${name}-relaxed.wasm`);
    assert.equal(await count(`${name}.wasm`, 'relaxed_'), 0, `${name}.wasm`);
    const bytes = await readFile(lib(`${name}-relaxed.wasm`));
    assert.throws(() => wabt.readWasm(bytes, { simd: true }), /relaxed|opcode/i, `${name}-relaxed.wasm without relaxed SIMD`);
  }
});

test('where relaxed SIMD runs, engineFile picks the relaxed builds and kernelName says which kernel runs', { skip }, async () => {
  assert.equal(engineFile('attention'), 'attention-relaxed.wasm');
  assert.equal(engineFile('attention-page'), 'attention-page-relaxed.wasm');
  assert.equal((await loadAttention()).kernelName(), 'wasm-relaxed-simd');
  assert.equal((await load('attention-page-relaxed.wasm')).kernelName(), 'wasm-relaxed-simd');
  assert.equal((await load('attention.wasm')).kernelName(), 'wasm-simd128');
});

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

test('the relaxed kernel agrees with the float64 engine to 1e-5, causal and full, on shapes whose rows and keys leave tails', { skip }, async () => {
  const [relaxed, page] = await Promise.all([load('attention-relaxed.wasm'), load('attention-page-relaxed.wasm')]);
  // T = 1, 3, 5, 17, 37, 70, 130, 257: not multiples of the 4-row blocks,
  // the 8-key steps or the 64-key tiles; d_k and d_v odd or not multiples of 8.
  const shapes = [[1, 1, 1, 1, 1], [1, 3, 5, 7, 3], [2, 17, 17, 19, 23], [1, 37, 70, 64, 64],
                  [1, 130, 129, 64, 64], [1, 257, 257, 33, 64], [1, 70, 37, 8, 17]];
  const random = randomSource(25);
  for (const [batch, nQ, nK, dK, dV] of shapes) {
    const fill = (n) => Float32Array.from({ length: n }, () => random.uniform(-2, 2));
    const q = fill(batch * nQ * dK), k = fill(batch * nK * dK), v = fill(batch * nK * dV);
    for (const causal of [false, true]) {
      const input = { q, k, v, batch, nQ, nK, dK, dV, causal };
      const exact = relaxed.sdpaFlat({ ...input, q: Float64Array.from(q), k: Float64Array.from(k),
                                       v: Float64Array.from(v), weights: true });
      const label = `${batch}x${nQ}x${nK}, d ${dK}/${dV}, causal ${causal}`;
      for (const [engine, name] of [[relaxed, 'whole'], [page, 'page']]) {
        const withWeights = engine.sdpaFlat({ ...input, weights: true });
        const online = engine.sdpaFlat(input);
        assert.ok(withWeights.output instanceof Float32Array, label);
        assert.ok(normwiseError(withWeights.output, exact.output) <= 1e-5, `${label} (${name}, weights)`);
        assert.ok(normwiseError(withWeights.weights, exact.weights) <= 1e-5, `${label} (${name}, weights)`);
        assert.ok(normwiseError(online.output, exact.output) <= 1e-5, `${label} (${name}, online)`);
      }
    }
  }
});

test('at T = 2048, d = 64 the relaxed kernel\u2019s output agrees with float64 to 1e-5', { skip }, async () => {
  const relaxed = await load('attention-relaxed.wasm');
  const random = randomSource(2048);
  const fill = () => Float32Array.from({ length: 2048 * 64 }, () => random.uniform(-1, 1));
  const input = { q: fill(), k: fill(), v: fill(), nQ: 2048, nK: 2048, dK: 64, dV: 64 };
  const exact = relaxed.sdpaFlat({ ...input, q: Float64Array.from(input.q), k: Float64Array.from(input.k),
                                   v: Float64Array.from(input.v) });
  const error = normwiseError(relaxed.sdpaFlat(input).output, exact.output);
  assert.ok(error <= 1e-5, `error ${error}`);
});
