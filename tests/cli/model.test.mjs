// `build/attn model run` and `generate` on tiny checkpoints the tests write
// themselves (tiny-model.mjs), against a float64 Llama written here from
// modeling_llama.py (llama-reference.mjs): every head's weights and the
// logits for grouped, multi-query and multi-head attention, tied and
// untied embeddings, F32 and F16; generation greedy and sampled by the
// documented rule, the same with and without the key/value cache.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { TINY, writeTinyModel } from './tiny-model.mjs';
import { llamaForward, llamaGenerate } from './llama-reference.mjs';

const ATTN = fileURLToPath(new URL('../../build/attn', import.meta.url));
const run = promisify(execFile);
let dir;

before(() => { dir = mkdtempSync(join(tmpdir(), 'attn-model-')); });
after(() => rmSync(dir, { recursive: true, force: true }));

async function attnModel(args) {
  const { stdout } = await run(ATTN, ['model', ...args], { maxBuffer: 1 << 24 });
  return JSON.parse(stdout);
}

function assertClose(actual, expected, where) {
  assert.equal(actual.length, expected.length, `${where}: length`);
  expected.forEach((e, i) => {
    if (Array.isArray(e)) assertClose(actual[i], e, `${where}[${i}]`);
    else assert.ok(Math.abs(actual[i] - e) <= 1e-12 + 1e-12 * Math.abs(e), `${where}[${i}]: ${actual[i]}, expected ${e}`);
  });
}

const CASES = [
  { name: 'grouped-query attention, untied, F32', config: TINY, dtype: 'F32' },
  { name: 'multi-query attention, tied, F16', config: { ...TINY, num_key_value_heads: 1, tie_word_embeddings: true, rope_theta: 500 }, dtype: 'F16' },
  { name: 'multi-head attention, 3 layers, F32', config: { ...TINY, num_attention_heads: 2, num_key_value_heads: 2, num_hidden_layers: 3, rope_theta: 31.5 }, dtype: 'F32' },
];

for (const { name, config, dtype } of CASES) {
  test(`run gives every head's weights and the logits of a float64 Llama (${name})`, async () => {
    const folder = join(dir, name.replace(/\W+/g, '-'));
    const tensors = writeTinyModel(folder, config, { seed: 7, dtype });
    const text = 'Attention, é!';
    const result = await attnModel(['run', '--model', folder, '--text', text]);
    const ids = [...Buffer.from(text, 'utf8')];
    assert.deepEqual(result.ids, ids, 'the text\u2019s UTF-8 bytes, no beginning-of-text token');
    const want = llamaForward(config, tensors, ids);
    assert.equal(result.attention.length, config.num_hidden_layers);
    assert.equal(result.attention[0].length, config.num_attention_heads);
    assertClose(result.attention, want.attention, 'attention');
    assertClose(result.logits, want.logits, 'logits');
    // Zero after the query, exactly; each row sums to 1.
    for (const layer of result.attention) {
      for (const head of layer) {
        head.forEach((row, i) => {
          row.slice(i + 1).forEach((w) => assert.equal(w, 0));
          assert.ok(Math.abs(row.reduce((s, w) => s + w, 0) - 1) < 1e-12);
        });
      }
    }
  });
}

test('generate follows the documented rule, greedy and sampled, the same with and without the cache', async () => {
  const folder = join(dir, 'generate');
  const tensors = writeTinyModel(folder, TINY, { seed: 3 });
  for (const [temperature, seed] of [[0, 0], [0.8, 1], [1.5, 12345678901234567890n]]) {
    const args = ['generate', '--model', folder, '--ids', '72,105', '--tokens', '8'];
    if (temperature > 0) args.push('--temperature', String(temperature), '--seed', String(seed));
    const [cached, recomputed] = await Promise.all([attnModel(args), attnModel([...args, '--no-cache'])]);
    const want = llamaGenerate(TINY, tensors, [72, 105], 8, temperature, seed);
    assert.deepEqual(cached.ids, want, `temperature ${temperature}, seed ${seed}`);
    assert.deepEqual(recomputed.ids, want, `temperature ${temperature}, seed ${seed}, --no-cache`);
    assert.equal(cached.prompt, 2);
  }
});

test('--layer L --head H walks through that head: its weights are the run\u2019s, and the float64 Llama\u2019s', async () => {
  const folder = join(dir, 'head');
  const config = { ...TINY, num_hidden_layers: 3 };
  const tensors = writeTinyModel(folder, config, { seed: 9 });
  const text = 'the cat';
  const whole = await attnModel(['run', '--model', folder, '--text', text]);
  const want = llamaForward(config, tensors, [...Buffer.from(text)]);
  for (const [layer, head] of [[0, 0], [1, 3], [2, 1]]) {
    const walk = await attnModel(['run', '--model', folder, '--text', text, '--layer', String(layer), '--head', String(head)]);
    assertClose(walk.weights, whole.attention[layer][head], `layer ${layer} head ${head}, the run`);
    assertClose(walk.weights, want.attention[layer][head], `layer ${layer} head ${head}, the reference`);
  }
  const { stdout } = await run(ATTN, ['model', 'run', '--model', folder, '--text', text, '--layer', '1', '--head', '3', '--format', 'markdown']);
  assert.match(stdout, /^# Layer 1, head 3 of the model\n/);
  assert.match(stdout, /\| ␣ \|/, 'the space is labelled as in the run\u2019s tables');
});
