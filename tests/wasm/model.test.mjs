// attn.model through the JS API on tiny checkpoints the tests write
// (tests/cli/tiny-model.mjs): every head's weights and the logits against
// a float64 Llama written in the tests (tests/cli/llama-reference.mjs) and
// against build/attn model's JSON, for grouped, multi-query and multi-head
// attention, rope_theta, tied and untied embeddings, F32 and F16;
// generation by the documented rule, the same with and without the cache;
// a head's walkthrough as attn model prints it; hostile files and
// arguments refused with messages naming them; no memory kept over calls.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TINY, safetensorsBytes, tinyWeights, writeTinyModel } from '../cli/tiny-model.mjs';
import { llamaForward, llamaGenerate } from '../cli/llama-reference.mjs';
import { loadAttention } from '../../web/lib/attention-node.js';
import { assertClose, loadEngine, nativeCli, nullsToMinusInfinity } from './support.mjs';

let dir;
before(() => { dir = mkdtempSync(join(tmpdir(), 'attn-wasm-model-')); });
after(() => rmSync(dir, { recursive: true, force: true }));

/** build/attn model's output; JSON parsed unless a format is given. */
function cli(args, format) {
  const stdout = execFileSync(nativeCli, ['model', ...args, ...(format ? ['--format', format] : [])],
                              { encoding: 'utf8', maxBuffer: 1 << 26 });
  return format ? stdout : JSON.parse(stdout);
}

const CASES = [
  { name: 'grouped-query attention, untied, F32', config: TINY, dtype: 'F32' },
  { name: 'multi-query attention, tied, rope_theta 500, F16',
    config: { ...TINY, num_key_value_heads: 1, tie_word_embeddings: true, rope_theta: 500 }, dtype: 'F16' },
  { name: 'multi-head attention, 3 layers, rope_theta 31.5, F32',
    config: { ...TINY, num_attention_heads: 2, num_key_value_heads: 2, num_hidden_layers: 3, rope_theta: 31.5 },
    dtype: 'F32' },
  { name: 'four heads of width 2, each its own key/value head, rope_theta 10^6, F16',
    config: { ...TINY, num_attention_heads: 4, num_key_value_heads: 4, hidden_size: 8, rope_theta: 1e6 },
    dtype: 'F16' },
];

for (const [index, { name, config, dtype }] of CASES.entries()) {
  test(`run gives a float64 Llama's weights and logits, and build/attn's (${name})`, async () => {
    const attn = await loadEngine();
    const folder = join(dir, `case-${index}`);
    const tensors = writeTinyModel(folder, config, { seed: 11 + index, dtype });
    const text = 'Attention, é!';
    const ids = [...Buffer.from(text, 'utf8')];
    const fromFolder = attn.model(folder);
    const fromBytes = attn.model({ config: readFileSync(join(folder, 'config.json'), 'utf8'),
                                   weights: readFileSync(join(folder, 'model.safetensors')) });
    try {
      assert.deepEqual({ ...fromFolder.config }, config);
      const result = fromFolder.run({ text });
      assert.deepEqual(result.ids, ids, 'the text\u2019s UTF-8 bytes, nothing added');
      const want = llamaForward(config, tensors, ids);
      assertClose(result.attention, want.attention, 1e-12, 'attention');
      assertClose(result.logits, want.logits, 1e-12, 'logits');
      // Within a few ulps: the WebAssembly libm's exp may differ from the
      // native one in the last bit.
      assertClose(result, cli(['run', '--model', folder, '--text', text]), 1e-14, 'the CLI\u2019s JSON');
      assert.deepEqual(fromBytes.run({ ids }), result, 'bytes load the same model as the folder');
    } finally {
      fromFolder.dispose();
      fromBytes.dispose();
    }
  });
}

test('generate follows the documented rule, greedy and sampled, the same with and without the cache', async () => {
  const attn = await loadEngine();
  const folder = join(dir, 'generate');
  const tensors = writeTinyModel(folder, TINY, { seed: 3 });
  const model = attn.model(folder);
  try {
    for (const [temperature, seed] of [[0, 0], [0.8, 1], [1.5, 12345678901234567890n]]) {
      const want = llamaGenerate(TINY, tensors, [72, 105], 8, temperature, seed);
      const input = { ids: [72, 105], tokens: 8, temperature, seed };
      assert.deepEqual(model.generate(input), { ids: want, prompt: 2 }, `temperature ${temperature}, seed ${seed}`);
      assert.deepEqual(model.generate({ ...input, cache: false }).ids, want, 'recomputed without the cache');
      assert.deepEqual(model.generate(input), cli(['generate', '--model', folder, '--ids', '72,105', '--tokens', '8',
        '--temperature', String(temperature), '--seed', String(seed)]), 'the CLI\u2019s JSON');
    }
    assert.deepEqual(model.generate({ text: 'hé', tokens: 0 }), { ids: [104, 195, 169], prompt: 3 });
    assert.deepEqual(model.generate({ ids: [1], tokens: 3, temperature: 0.5, seed: 7 }).ids,
                     model.generate({ ids: [1], tokens: 3, temperature: 0.5, seed: 7n }).ids, 'a seed as a BigInt');
  } finally {
    model.dispose();
  }
});

test('a head\u2019s walkthrough is what attn model run --layer L --head H prints, its weights the run\u2019s', async () => {
  const attn = await loadEngine();
  const folder = join(dir, 'walkthrough');
  const config = { ...TINY, num_hidden_layers: 3 };
  const tensors = writeTinyModel(folder, config, { seed: 9 });
  const model = attn.model(folder);
  const text = 'the cat';
  const args = (layer, head) => ['run', '--model', folder, '--text', text, '--layer', String(layer),
                                 '--head', String(head)];
  try {
    const want = llamaForward(config, tensors, [...Buffer.from(text)]);
    for (const [layer, head] of [[0, 0], [1, 3], [2, 1]]) {
      const steps = model.walkthrough(layer, head, { text });
      // The same steps, the numbers within a few ulps (the libm's exp).
      assertClose(steps, nullsToMinusInfinity(JSON.parse(cli(args(layer, head), 'steps'))), 1e-14);
      assert.equal(steps.title, `Layer ${layer}, head ${head} of the model`);
      assert.match(steps.steps[0].text[0], /turned by the rotary embedding/);
      const result = model.walkthrough(layer, head, { text, format: 'json' });
      assertClose(result.weights, want.attention[layer][head], 1e-12, `layer ${layer} head ${head}`);
      // q and k as the head gives them make the same weights, computed here.
      const { q, k } = model.head(layer, head, { text });
      const scale = 1 / Math.sqrt(q[0].length);
      const weights = q.map((row, i) => {
        const scores = k.slice(0, i + 1).map((key) => key.reduce((s, x, c) => s + x * row[c], 0) * scale);
        const top = Math.max(...scores);
        const exps = scores.map((s) => Math.exp(s - top));
        const total = exps.reduce((s, e) => s + e, 0);
        return [...exps.map((e) => e / total), ...Array(q.length - i - 1).fill(0)];
      });
      assertClose(weights, want.attention[layer][head], 1e-12, `q and k of layer ${layer} head ${head}`);
    }
    assert.equal(model.walkthrough(1, 3, { text, format: 'markdown' }), cli(args(1, 3), 'markdown'));
  } finally {
    model.dispose();
  }
});

test('labels name each token as the CLI\u2019s Tokens line does: a space, a newline, a byte of a longer character', async () => {
  const attn = await loadAttention();
  const folder = join(dir, 'labels');
  writeTinyModel(folder, TINY, { seed: 5 });
  const model = attn.model(folder);
  const text = 'a b\n\u00e7|';
  const printed = cli(['run', '--model', folder, '--text', text], 'text').split('\n').find((line) => line.startsWith('Tokens:'));
  assert.deepEqual(model.labels({ text }), printed.slice('Tokens:'.length).trim().split(' '));
  assert.deepEqual(model.labels({ text }), ['a', '\u2423', 'b', '\\n', '\\xc3', '\\xa7', '|']);
  assert.deepEqual(model.labels({ ids: [255, 0] }), ['\\xff', '\\x00']);
  model.dispose();
});

test('every integer argument is checked as the number it is, the argument named', async () => {
  const attn = await loadEngine();
  const folder = join(dir, 'integers');
  writeTinyModel(folder);
  const model = attn.model(folder);
  try {
    for (const bad of [2 ** 31, 2 ** 32, 2 ** 32 + 1, 2 ** 53, 1e20, 1.5, NaN, Infinity, '1', 1n]) {
      const shown = typeof bad === 'bigint' ? 'a bigint' : typeof bad === 'string' ? '"1"' : String(bad);
      assert.throws(() => model.walkthrough(bad, 0, { text: 'a' }),
                    { status: 6, message: `model.walkthrough: layer must be a whole number (from 0), got ${shown}` });
      assert.throws(() => model.head(0, bad, { text: 'a' }),
                    { status: 6, message: `model.head: head must be a whole number (from 0), got ${shown}` });
      assert.throws(() => model.run({ ids: [1, bad] }),
                    { status: 6, message: `model.run: ids[1]: expected a whole number (a token id), got ${shown}` });
      assert.throws(() => model.generate({ text: 'a', tokens: bad }), {
        status: 6,
        message: `model.generate: tokens must be a whole number of tokens to generate, from 0 to 2147483647, got ${shown}`,
      });
    }
    for (const bad of [2 ** 53, 1e20, -1, 1.5, 2n ** 64n, -1n]) {
      assert.throws(() => model.generate({ text: 'a', tokens: 1, seed: bad }), { status: 6, message: new RegExp(
        `^model\\.generate: seed must be a whole number from 0 to 2\\^53 - 1, or a BigInt to 2\\^64 - 1, got ${
          typeof bad === 'bigint' ? `${bad}n` : bad}$`) });
    }
    // Negative numbers and ones past the model reach the engine, which says what the model has.
    assert.throws(() => model.walkthrough(-1, 0, { text: 'a' }),
                  { status: 6, message: 'layer -1 is not a layer of this model, whose layers are 0 to 1' });
    assert.throws(() => model.head(0, 4, { text: 'a' }),
                  { status: 6, message: 'head 4 is not a head of this model, whose heads are 0 to 3' });
    assert.throws(() => model.run({ ids: [1, -1] }),
                  { status: 17, message: 'token -1 (at 1) is not an id of this model, whose ids are 0 to vocab_size - 1 = 258' });
    assert.throws(() => model.generate({ text: 'hello', tokens: 28 }), {
      status: 15,
      message: 'the model reads at most max_position_embeddings = 32 tokens; the prompt\'s 5 and 28 generated would be more',
    });
    assert.throws(() => model.generate({ text: 'hi', tokens: 2 ** 31 - 1 }), { status: 15 });
    assert.throws(() => model.generate({ text: 'hi', tokens: 1, temperature: -1 }),
                  { message: 'temperature must be a number from 0 (0: the most likely token each time), got -1' });
  } finally {
    model.dispose();
  }
});

test('bad calls get clear errors, and the model stays usable after them', async () => {
  const attn = await loadEngine();
  const folder = join(dir, 'calls');
  writeTinyModel(folder);
  const model = attn.model(folder);
  try {
    const cases = [
      [() => model.run({ text: 'hi', ids: [1] }), 10, 'model.run: give the text as { text } or its ids as { ids }, one of them'],
      [() => model.run({}), 10, 'model.run: give the text as { text } or its ids as { ids }, one of them'],
      [() => model.run('hi'), 10, 'model.run: expected an object { text } or { ids }, got a string'],
      [() => model.run({ txt: 'hi' }), 10, /^model\.run: "txt" is not one of its options \(text, ids\)/],
      [() => model.run({ text: 'a\uD800' }), 10, 'text: must not contain an unpaired surrogate (U+D800 at index 1), which is not text'],
      [() => model.run({ text: '' }), 2, 'the model needs at least one token, got 0'],
      [() => model.run({ text: 'a'.repeat(33) }), 15, 'the model reads at most max_position_embeddings = 32 tokens, got 33'],
      [() => model.run({ ids: { length: 2 ** 32 - 1 } }), 10, 'model.run: ids: expected a list of token ids, got an object'],
      [() => model.generate({ text: 'hi', tokens: 1, cache: 'no' }), 5, 'model.generate: cache must be true or false, got "no"'],
      [() => model.generate({ text: 'hi', tokens: 1, temperature: '1' }), 6,
        'model.generate: temperature must be a number from 0, got a string'],
      [() => model.walkthrough(0, 0, { text: 'a', format: 'html' }), 5, /^model\.walkthrough: format: expected "json"/],
      [() => model.run({ get text() { throw new Error('no'); } }), 10, 'model.run: input: reading it threw Error: no'],
    ];
    for (const [call, status, message] of cases) assert.throws(call, { name: 'AttentionError', status, message });
    assert.deepEqual(model.run({ ids: [104, 105] }).ids, [104, 105]);
  } finally {
    model.dispose();
  }
  assert.throws(() => model.run({ text: 'a' }), { status: 11, message: 'model.run: this model was disposed' });
  model.dispose(); // a second dispose does nothing
});

test('hostile model files are refused with a message naming what is wrong', async () => {
  const attn = await loadEngine();
  const config = `${JSON.stringify({ ...TINY, hidden_act: 'silu' })}`;
  const weights = safetensorsBytes(tinyWeights(TINY));
  const headerLength = Number(weights.readBigUInt64LE(0));
  const withHeaderLength = (length) => {
    const copy = Buffer.from(weights);
    copy.writeBigUInt64LE(length, 0);
    return copy;
  };
  const cases = [
    [{ config: '{"hidden_size": 8}', weights }, 18, 'config.json: vocab_size is missing'],
    [{ config: 'not json', weights }, 18, /^config\.json: /],
    [{ config, weights: weights.subarray(0, weights.length - 1) }, 18, /model\.safetensors/],
    [{ config, weights: weights.subarray(0, 5) }, 18, /model\.safetensors/],
    [{ config, weights: withHeaderLength(2n ** 64n - 1n) }, 18, /model\.safetensors/],
    [{ config, weights: withHeaderLength(BigInt(headerLength) + 1n) }, 18, /model\.safetensors/],
    [{ config: config.replace('"num_key_value_heads":2', '"num_key_value_heads":3'), weights }, 13, /num_key_value_heads/],
    [{ config: config.replace('"hidden_size":8', '"hidden_size":16'), weights }, 18, /model\.embed_tokens\.weight/],
    [{ config, weights: [1, 2, 3] }, 10,
      'model: weights: expected model.safetensors\'s bytes (a Uint8Array or an ArrayBuffer), got an array'],
    [{ config: 12, weights }, 10, 'model: config: expected config.json\'s text or bytes, got a number'],
    [{ config, weights, tokenizer: '' }, 10, /^model: "tokenizer" is not one of its files \(config, weights\)/],
    [null, 10, /^model: expected the files \{ config, weights \}/],
    [join(dir, 'no-such-folder'), 10, `model: cannot read ${join(dir, 'no-such-folder')}/config.json: No such file or directory`],
  ];
  for (const [source, status, message] of cases) {
    assert.throws(() => attn.model(source), { name: 'AttentionError', status, message }, String(message));
  }
  // The same file loads when it is whole.
  attn.model({ config, weights: new Uint8Array(weights).buffer }).dispose();
});

test('a model above the engine\u2019s maxBytes is refused before it is read or allocated', async () => {
  const small = await loadAttention({ maxBytes: 30000 });
  const folder = join(dir, 'limit');
  writeTinyModel(folder);
  const before = small.memoryStats().allocatedBytes;
  assert.throws(() => small.model(folder), {
    status: 12,
    message: /^the model needs \d+ bytes for its weights as doubles, more than its limit of 30000 bytes; raise the limit \(maxBytes in loadAttention\)$/,
  });
  const tiny = await loadAttention({ maxBytes: 1000 });
  assert.throws(() => tiny.model(folder), { status: 12, message: /^model: config\.json and model\.safetensors take \d+ bytes, more than the limit of 1000 bytes/ });
  assert.equal(small.memoryStats().allocatedBytes, before);
  // A run whose weights and logits would pass the limit says so.
  const roomy = await loadAttention({ maxBytes: 120000 });
  const model = roomy.model(folder);
  assert.throws(() => model.run({ text: 'a'.repeat(32) }), {
    status: 12,
    message: 'model.run: the attention weights and logits of 32 tokens take 131840 bytes, more than the limit of 120000 '
      + 'bytes (maxBytes in loadAttention)',
  });
  model.dispose();
});

test('repeated calls, errors, loads and disposes keep no engine memory', async () => {
  const attn = await loadAttention();
  const folder = join(dir, 'memory');
  writeTinyModel(folder);
  const weights = readFileSync(join(folder, 'model.safetensors'));
  const config = readFileSync(join(folder, 'config.json'));
  const start = attn.memoryStats().allocatedBytes;
  const model = attn.model({ config, weights });
  const calls = () => {
    model.run({ text: 'the cat sat' });
    model.generate({ text: 'the', tokens: 5, temperature: 0.7, seed: 3 });
    model.generate({ text: 'the', tokens: 5, cache: false });
    model.head(1, 2, { text: 'cat' });
    model.walkthrough(1, 2, { text: 'cat' });
    model.walkthrough(0, 1, { ids: [1, 2, 3], format: 'markdown' });
    assert.throws(() => model.walkthrough(0, 9, { text: 'cat' }));
    assert.throws(() => model.run({ ids: [1, 999] }));
    assert.throws(() => attn.model({ config, weights: weights.subarray(0, 100) }));
  };
  calls();
  const warm = attn.memoryStats();
  for (let i = 0; i < 20; i++) calls();
  const after = attn.memoryStats();
  assert.equal(after.allocatedBytes, warm.allocatedBytes, 'no engine memory kept by calls');
  assert.equal(after.memoryBytes, warm.memoryBytes, 'WebAssembly memory did not grow');
  model.dispose();
  for (let i = 0; i < 5; i++) attn.model({ config, weights }).dispose();
  assert.equal(attn.memoryStats().allocatedBytes, start, 'disposed models hold nothing');
});
