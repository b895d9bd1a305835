// `build/attn --max-bytes N` bounds the memory the CLI spends reading and
// parsing its JSON, not only the problem's tensors: the input may hold at
// most N bytes, and an input whose parse tree would take more than N bytes
// is refused before the tree is built. Each case measures the process's
// peak resident set size with /usr/bin/time (Debian's package "time",
// installed by scripts/ensure-deps.sh).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ATTN = fileURLToPath(new URL('../../build/attn', import.meta.url));
const MB = 1e6;
const work = mkdtempSync(join(tmpdir(), 'attn-parse-memory-'));
test.after(() => rmSync(work, { recursive: true, force: true }));

/**
 * Runs build/attn with args on input (a string), within addressSpace bytes
 * if given: { status, stderr, stdout, peak } with peak in bytes.
 */
function measure(args, input, { addressSpace } = {}) {
  const inputFile = join(work, 'input.json');
  const timeFile = join(work, 'time');
  writeFileSync(inputFile, input);
  const timed = ['/usr/bin/time', '-f', '%M', '-o', timeFile, ATTN, ...args, inputFile];
  // An address-space limit (ulimit -v, in KiB) makes an allocation the
  // input does not justify fail, where overcommit would let it pass unused.
  const [command, commandArgs] = addressSpace
    ? ['bash', ['-c', `ulimit -v ${addressSpace / 1024}; exec "$@"`, 'bash', ...timed]]
    : [timed[0], timed.slice(1)];
  const run = spawnSync(command, commandArgs, { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(run.error, undefined, `/usr/bin/time: ${run.error}`);
  const peak = Number(readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)) * 1024;
  return { status: run.status, stderr: run.stderr.replaceAll(inputFile, 'INPUT'), stdout: run.stdout, peak };
}

/** What the process holds before it reads anything. */
const BASELINE = measure(['--version'], '').peak;

/** A softmax problem whose x is `count` ones: 2 bytes of JSON and one value each. */
const ones = (count) => `{"kind":"softmax","x":[${'1,'.repeat(count - 1)}1]}`;

test('4 MB of "1," under --max-bytes 1000000 is refused after reading 1 MB, within a few MB', () => {
  const run = measure(['--max-bytes', '1000000'], ones(1.99 * MB));
  assert.equal(run.status, 2);
  assert.equal(run.stderr, 'attn: INPUT holds more than 1000000 bytes of JSON, the limit (--max-bytes)\n');
  assert.ok(run.peak - BASELINE < 3 * MB, `peak ${run.peak} bytes, ${BASELINE} before reading`);
});

test('input under the limit whose parse tree would pass it is refused before the tree is built', () => {
  // 400,024 bytes of text, held twice (as read and the parser's copy), and
  // a cJSON node (64 bytes and malloc's 16) for each of at most
  // 2 × 2 containers + 200,000 commas + 1 values; 3 strings of 12 bytes,
  // each with a NUL and two of malloc's 16 (its header and rounding):
  // 2 × 400,024 + 200,005 × 80 + 12 + 3 × 33 = 16,800,559.
  const run = measure(['--max-bytes', '1000000'], ones(200000));
  assert.equal(run.status, 2);
  assert.equal(run.stderr, "attn: the input's JSON (400024 bytes) would take about 16800559 bytes to read and parse, more than the limit of 1000000 bytes; use a smaller input or raise the limit (--max-bytes)\n");
  assert.ok(run.peak - BASELINE < 3 * MB, `peak ${run.peak} bytes, ${BASELINE} before reading`);
});

test('at the default limit, 25 MB of "1," is refused before its tree grows past a few times the text', () => {
  const run = measure([], ones(12.5 * MB));
  assert.equal(run.status, 2);
  assert.match(run.stderr, /^attn: the input's JSON \(25000024 bytes\) would take about 1050000559 bytes to read and parse, more than the limit of 268435456 bytes; /);
  assert.ok(run.peak - BASELINE < 2 * 25 * MB, `peak ${run.peak} bytes, ${BASELINE} before reading`);
});

test('a problem that fits runs, and its peak memory is within a small multiple of the limit', () => {
  // 50,000 numbers: about 4 MB of parse tree, 1.2 MB of problem (x, the
  // weights and scratch) and about 1 MB of JSON out.
  const x = Array.from({ length: 50000 }, (_, i) => Math.sin(i));
  const limit = 6 * MB;
  const run = measure(['--max-bytes', String(limit)], JSON.stringify({ kind: 'softmax', x }));
  assert.equal(run.status, 0, run.stderr);
  const { weights } = JSON.parse(run.stdout);
  const max = Math.max(...x);
  const sum = x.reduce((s, v) => s + Math.exp(v - max), 0);
  assert.ok(Math.abs(weights[12345] - Math.exp(x[12345] - max) / sum) < 1e-15);
  assert.ok(run.peak - BASELINE < 3 * limit, `peak ${run.peak} bytes, ${BASELINE} before reading`);
});

// A first row of 20,000 numbers and 20,000 rows of one: 20,001 rows × 20,000
// promise 3.2 GB of doubles that the 240 KB of text does not hold. Every
// row is checked before the tensor is allocated (it once asked for the
// product of the first rows' lengths first: out of memory within 1 GiB of
// address space, exit 1), in a problem and in attn check.
const raggedRows = `[[${'0.5,'.repeat(19999)}0.5]${',[0.5]'.repeat(20000)}]`;

test('a ragged array whose first row promises gigabytes is refused by its rows, before anything is allocated', () => {
  const run = measure(['--max-bytes', '10000000'], `{"kind":"softmax","x":${raggedRows}}`, { addressSpace: 1 << 30 });
  assert.equal(run.status, 2);
  assert.equal(run.stderr, 'attn: x: rows must all have the same length (row 0 has 20000 entries, row 1 has 1)\n');
  assert.ok(run.peak - BASELINE < 10 * MB, `peak ${run.peak} bytes, ${BASELINE} before reading`);
});

test('attn check refuses a ragged printed table as bad input (exit 2), not as out of memory', () => {
  const input = `{"kind":"scaledDotProduct","q":[[1,0]],"k":[[1,0]],"v":[[1,0]],"printed":{"weights":${raggedRows}}}`;
  const run = measure(['check', '--max-bytes', '10000000'], input, { addressSpace: 1 << 30 });
  assert.equal(run.status, 2);
  assert.equal(run.stderr, 'attn: printed.weights: rows must all have the same length (row 0 has 20000 entries, row 1 has 1)\n');
  assert.ok(run.peak - BASELINE < 10 * MB, `peak ${run.peak} bytes, ${BASELINE} before reading`);
});
