#!/usr/bin/env node
// Writes the seed corpora of the fuzz targets (fuzz/*.c) into DIR:
//   DIR/problem_json/  one JSON problem per file: every input of the test
//                      vectors (tests/vectors/tutorials.json and
//                      tests/wasm/fixtures/local-vectors.json), every preset
//                      of web/presets.json and the CLI example
//   DIR/kernels/       a small program for each entry point fuzz_kernels
//                      reads (selector byte, sizes 2..3, options, values)
//
//   node fuzz/seed-corpus.mjs build/fuzz/seeds
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const out = process.argv[2];
if (!out) {
  console.error('usage: node fuzz/seed-corpus.mjs DIR');
  process.exit(2);
}
const read = (path) => JSON.parse(readFileSync(join(root, path), 'utf8'));

const problems = new Map();
const add = (name, input) => problems.set(name.replace(/[^\w.-]/g, '_'), JSON.stringify(input));
for (const vector of read('tests/vectors/tutorials.json')) add(`vector-${vector.id}`, vector.input);
const local = read('tests/wasm/fixtures/local-vectors.json');
for (const vector of Array.isArray(local) ? local : local.vectors ?? []) add(`local-${vector.id}`, vector.input);
for (const preset of read('web/presets.json').presets) add(`preset-${preset.id}`, preset.input);
add('cli-cat-sat-mat', read('tests/cli/cat-sat-mat.json'));

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
console.log(`seed-corpus: ${problems.size} problems, 20 kernel programs in ${out}`);
