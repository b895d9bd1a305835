#!/usr/bin/env node
// Writes the seed corpora of the fuzz targets (fuzz/*.c) into DIR:
//   DIR/problem_json/  one JSON problem per file: every input of the test
//                      vectors (tests/vectors/tutorials.json and
//                      tests/wasm/fixtures/local-vectors.json), every preset
//                      of web/presets.json and the CLI example; the vectors
//                      again with their printed numbers, for attn check;
//                      large ones (a 240 KB ragged array)
//   DIR/kernels/       a small program for each entry point fuzz_kernels
//                      reads (selector byte, sizes 2..3, options, values)
//   DIR/float32/       attn_sdpa_f32 with each mask kind, and attn_linear_f32
//   DIR/trainer/       one step and a prediction for each task, defaults and
//                      small settings
//   DIR/steps_json/    labels with quotes, backslashes, control characters,
//                      U+2028, emoji, and ones that are not UTF-8
//   DIR/model_load/    whole checkpoints (tests/cli/tiny-model.mjs): grouped,
//                      multi-query and tied ones, F32 and F16, and a 1.4 MB
//                      one
//
//   node fuzz/seed-corpus.mjs build/fuzz/seeds
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TINY, safetensorsBytes, tinyWeights } from '../tests/cli/tiny-model.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const out = process.argv[2];
if (!out) {
  console.error('usage: node fuzz/seed-corpus.mjs DIR');
  process.exit(2);
}
const read = (path) => JSON.parse(readFileSync(join(root, path), 'utf8'));

const problems = new Map();
const add = (name, input) => problems.set(name.replace(/[^\w.-]/g, '_'), JSON.stringify(input));
for (const vector of read('tests/vectors/tutorials.json')) {
  add(`vector-${vector.id}`, vector.input);
  // With the tutorial's numbers, for build/attn check's path.
  if (vector.printed) add(`check-${vector.id}`, { ...vector.input, printed: vector.printed, printedDecimals: vector.printedDecimals });
}
const local = read('tests/wasm/fixtures/local-vectors.json');
for (const vector of Array.isArray(local) ? local : local.vectors ?? []) add(`local-${vector.id}`, vector.input);
for (const preset of read('web/presets.json').presets) add(`preset-${preset.id}`, preset.input);
add('cli-cat-sat-mat', read('tests/cli/cat-sat-mat.json'));
// Large inputs: a ragged array whose first row promises 20,001 × 20,000
// numbers (as x, and as a printed table for attn check).
const ragged = [Array(20000).fill(0.5), ...Array.from({ length: 20000 }, () => [0.5])];
add('large-ragged', { kind: 'softmax', x: ragged });
add('large-ragged-printed', { kind: 'scaledDotProduct', q: [[1, 0]], k: [[1, 0]], v: [[1, 0]], printed: { weights: ragged } });

const jsonDir = join(out, 'problem_json');
mkdirSync(jsonDir, { recursive: true });
for (const [name, text] of problems) writeFileSync(join(jsonDir, `${name}.json`), text);

// fuzz_kernels: selector, then sizes and flags as each case reads them,
// then value bytes (small integers: byte - 128, over 16).
const kernelsDir = join(out, 'kernels');
mkdirSync(kernelsDir, { recursive: true });
const values = Array.from({ length: 512 }, (_, i) => (i * 37 + 11) % 256);
for (let selector = 0; selector < 10; selector++) {
  for (const [variant, head] of [[0, [2, 1, 2, 1, 1, 0]], [1, [1, 2, 2, 2, 3, 0]]]) {
    const options = [variant ? 0x41 : 0x00, variant ? 0x01 : 0x00, 3, 2, 2, 2, 1, 0, 1, 1, 0, 1, 1, 1, 128, 7];
    writeFileSync(join(kernelsDir, `entry-${selector}-${variant}`),
                  Buffer.from([selector, ...head, ...options, ...values]));
  }
}

const seedDir = (target) => {
  const dir = join(out, target);
  mkdirSync(dir, { recursive: true });
  return (name, bytes) => writeFileSync(join(dir, name), Buffer.from(bytes));
};
const bytes = (count, from = 0) => Array.from({ length: count }, (_, i) => (from + i * 37 + 11) % 256);

// fuzz_float32: selector (3: linear), batch, n_q, n_k, d_k, d_v as size - 1,
// q, k, v as bytes, then flags (scale kind | 0x10 no key lengths | 0x20 no
// custom mask | 0x80 weights wanted), mask kinds, window, stride, three key
// lengths + 1 and one bit per mask cell.
const float32 = seedDir('float32');
const sizes = [2, 4, 5, 3, 2]; // batch 2, n_q 4, n_k 5, d_k 3, d_v 2 (so n_q != n_k)
const [b, nq, nk, dk, dv] = sizes;
const qkv = bytes(b * nq * dk + b * nk * dk + b * nk * dv);
const head = (selector) => [selector, ...sizes.map((n) => n - 1), ...qkv];
for (const [name, kinds] of [['none', 0], ['causal', 1], ['key-padding', 2], ['custom', 4], ['local', 8], ['strided', 16], ['all', 31]])
  float32(`sdpa-${name}`, [...head(0), 0x80, kinds, 3, 3, 4, 3, 5, ...bytes(nq * nk, 1)]);
float32('sdpa-online-scale-factor', [...head(0), 0x32, 200, 1, 0, 0]);
float32('linear', [...head(3), 0]);
float32('linear-causal', [...head(3), 1]);

// fuzz_trainer: task, limit (8 KiB × (1 + byte)), settings count, each
// (name index, value kind, value byte; kind 5 = the byte itself), step
// rounds, each count + 1, prediction length, tokens, weights wanted, check
// every head's rows.
const trainer = seedDir('trainer');
// dModel 16, seqLength 6 (7 for lookup, task 5: pairs then a query), vocab 8, batchSize 4
const small = (task) => [3, 5, 16, 5, 5, task === 5 ? 7 : 6, 6, 5, 8, 7, 5, 4];
for (let task = 0; task < 6; task++) {
  // the harness's tiny model as it is
  trainer(`task-${task}-base`, [task, 15, 0, 1, 2, 4, 0, 1, 2, 3, 1, 1]);
  trainer(`task-${task}-small`, [task, 15, 4, ...small(task), 2, 2, 3, 6, 0, 1, 2, 3, 4, 5, 1, 1]);
}

// fuzz_steps_json: shape (low 4 bits n_q - 1 + 2 (n_k - 1), 0x10 one list
// of tokens for both, 0x20 a title), format (0 JSON .. 4 steps; 0x80 sized
// first), q, k, v (two columns each), then each label's length and bytes.
// Each input is written in one format: every seed in each of the five.
const stepsJson = (name, [shape, ...rest]) => {
  for (let format = 0; format < 5; format++) {
    seedDir('steps_json')(`${name}-${format}`, [shape, format | (format % 2 ? 0x80 : 0), ...rest]);
  }
};
const label = (text) => {
  const encoded = typeof text === 'string' ? Buffer.from(text, 'utf8') : Buffer.from(text);
  return [encoded.length, ...encoded];
};
// n_q = n_k = 2 (shape 1 + 2 × 1 = 3): queryTokens, then keyTokens
const four = (labels, title) => [0x03 | (title ? 0x20 : 0), ...bytes(12),
                                 ...labels.flatMap(label), ...(title ? label(title) : [])];
stepsJson('quotes', four(['"q"', 'back\\slash', "it's", '\\"'], 'A "title"'));
stepsJson('control', four(['tab\tnew\nline', '\u0001\u001f\u007f', 'bell\u0007', '\u0002']));
stepsJson('separators', four(['a\u2028b', 'c\u2029d', '\u0085', '\u00a0']));
stepsJson('emoji', four(['🐱', 'é', '日本', '𝄞'], 'Katze 🐱'));
stepsJson('not-utf8', four([[0xff], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf4, 0x90, 0x80, 0x80]]));
stepsJson('truncated', four(['ok', [0xe2, 0x82], 'x', 'y']));
// n_q = n_k = 2 (shape 1 + 0x10): one list of tokens for both
stepsJson('plain', [0x11, ...bytes(12), ...['the', 'cat'].flatMap(label)]);

// fuzz_model_load: a limit byte (64 KiB << (byte % 8)), the config's
// length in two bytes (little-endian), config.json, model.safetensors.
const modelLoad = seedDir('model_load');
const checkpoint = (name, config, dtype, limit) => {
  const json = Buffer.from(JSON.stringify({ ...config, hidden_act: 'silu' }));
  const file = safetensorsBytes(tinyWeights(config), dtype);
  modelLoad(name, Buffer.concat([Buffer.from([limit, json.length & 0xff, json.length >> 8]), json, file]));
};
checkpoint('grouped-f32', TINY, 'F32', 1);
checkpoint('multi-query-tied-f16', { ...TINY, num_key_value_heads: 1, tie_word_embeddings: true }, 'F16', 1);
checkpoint('multi-head-3-layers', { ...TINY, num_attention_heads: 2, num_key_value_heads: 2, num_hidden_layers: 3 },
           'F32', 2);
// Inputs of 1 MB and more (the fuzzer's -max_len allows 2 MiB): 360,000
// weights in F32, loaded within 8 MiB.
checkpoint('large-f32', { ...TINY, hidden_size: 128, intermediate_size: 256 }, 'F32', 7);

console.log(`seed-corpus: ${problems.size} problems, 20 kernel programs and the float32, trainer, steps_json and model_load seeds in ${out}`);
