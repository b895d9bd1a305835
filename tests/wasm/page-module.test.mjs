// web/lib/attention-page.wasm, the page's module (build.sh: no trainer,
// most of it built for size): the same library from the same source, so it
// must give the whole module's answers bit for bit, and say clearly what it
// leaves out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { engineFile, loadAttention } from '../../web/lib/attention-node.js';
import { loadEngine, randomSource } from './support.mjs';
import { randomProblems } from './problems.mjs';

// The build loadEngine's whole module matches (relaxed SIMD's where Node runs it).
const PAGE_MODULE = fileURLToPath(new URL(`../../web/lib/${engineFile('attention-page')}`, import.meta.url));
const loadPageEngine = async () => loadAttention({ wasmBinary: await readFile(PAGE_MODULE) });

test('the page\u2019s module writes the same walkthrough and result as the whole engine for random problems of every kind', async () => {
  const [whole, page] = await Promise.all([loadEngine(), loadPageEngine()]);
  const problems = randomProblems(7);
  assert.ok(problems.length >= 20, `${problems.length} problems`);
  for (const problem of problems) {
    assert.equal(page.format(problem, 'steps'), whole.format(problem, 'steps'), JSON.stringify(problem).slice(0, 120));
    assert.equal(page.format(problem, 'json'), whole.format(problem, 'json'));
  }
});

test('the page\u2019s module computes float32 attention bit for bit as the whole engine does', async () => {
  const [whole, page] = await Promise.all([loadEngine(), loadPageEngine()]);
  const r = randomSource(11);
  const [nQ, nK, dK, dV] = [37, 53, 24, 16];
  const fill = (count) => Float32Array.from(r.vector(count, -1, 1));
  const problem = { q: fill(nQ * dK), k: fill(nK * dK), v: fill(nK * dV), nQ, nK, dK, dV, causal: true };
  const expected = whole.sdpaFlat(problem).output;
  const actual = page.sdpaFlat(problem).output;
  assert.ok(actual instanceof Float32Array);
  assert.deepEqual(actual, expected);
});

test('the page\u2019s module has no trainer and says which module has one', async () => {
  const page = await loadPageEngine();
  assert.throws(() => page.createTrainer({ task: 'reverse', seed: 1 }),
    { name: 'AttentionError', status: 11, message: /built without the trainer; load attention\.wasm/ });
  // It stays usable after the refusal.
  assert.deepEqual(page.softmax({ x: [[0, 0]] }).weights, [[0.5, 0.5]]);
});

test('the page\u2019s module has no language model and says which module has one', async () => {
  const page = await loadPageEngine();
  assert.throws(() => page.model({ config: '{}', weights: new Uint8Array(8) }),
    { name: 'AttentionError', status: 11, message: /built without the model; load attention\.wasm/ });
  assert.deepEqual(page.softmax({ x: [[0, 0]] }).weights, [[0.5, 0.5]]);
});
