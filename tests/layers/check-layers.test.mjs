// The call check of scripts/check-layers.mjs on symbol tables made up for
// the purpose and on two tiny objects compiled here, and its check that
// ARCHITECTURE.md names every C file.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { callCycles, callGraph, readSymbols, unnamedFiles } from '../../scripts/check-layers.mjs';

test('a call from a lower layer to a higher one is reported with both files and the symbols', () => {
  const { problems } = callGraph({
    'src/problem/store.c': { defines: ['attn__fail'], uses: ['attn__walk', 'memcpy'] },
    'src/walkthrough/walkthrough.c': { defines: ['attn__walk'], uses: ['attn__fail'] },
  });
  assert.deepEqual(problems, [
    'src/problem/store.c (problem) calls attn__walk in src/walkthrough/walkthrough.c (walkthrough), a layer above it',
  ]);
});

test('calls down the layers and to the C library are no problem and make no cycle', () => {
  const { graph, problems } = callGraph({
    'src/kernels/sdpa.c': { defines: ['attn_sdpa'], uses: ['exp'] },
    'src/problem/run_sdpa.c': { defines: ['attn__run_sdpa'], uses: ['attn_sdpa', 'malloc'] },
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(graph, { 'src/kernels/sdpa.c': {}, 'src/problem/run_sdpa.c': { 'src/kernels/sdpa.c': ['attn_sdpa'] } });
  assert.deepEqual(callCycles(graph), []);
});

test('a circle of calls within a layer is reported as its files in order with the symbols of each call', () => {
  const { graph, problems } = callGraph({
    'src/walkthrough/walker.c': { defines: ['attn__walk_step'], uses: ['attn__steps_sdpa'] },
    'src/walkthrough/steps_attention.c': { defines: ['attn__steps_sdpa'], uses: ['attn__walk_step', 'attn__label'] },
    'src/walkthrough/render_doc.c': { defines: ['attn__label'], uses: [] },
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(callCycles(graph), [
    'call cycle: src/walkthrough/walker.c -> src/walkthrough/steps_attention.c -> src/walkthrough/walker.c '
      + '(src/walkthrough/walker.c -> src/walkthrough/steps_attention.c: attn__steps_sdpa; '
      + 'src/walkthrough/steps_attention.c -> src/walkthrough/walker.c: attn__walk_step)',
  ]);
});

test('a symbol two files define is reported', () => {
  const { problems } = callGraph({
    'src/kernels/options.c': { defines: ['attn__splitmix64'], uses: [] },
    'src/train/tasks.c': { defines: ['attn__splitmix64'], uses: [] },
  });
  assert.deepEqual(problems, ['attn__splitmix64 is defined in both src/kernels/options.c and src/train/tasks.c']);
});

test('the symbols of compiled objects show two files that call each other, and not their static functions', () => {
  const dir = mkdtempSync(join(tmpdir(), 'check-layers-'));
  try {
    writeFileSync(join(dir, 'a.c'), 'int b(int);\nstatic int twice(int x) { return 2 * x; }\nint a(int x) { return x > 0 ? b(twice(x) - 1) : 0; }\n');
    writeFileSync(join(dir, 'b.c'), 'int a(int);\nint b(int x) { return a(x - 1); }\n');
    for (const name of ['a', 'b']) execFileSync('cc', ['-O0', '-c', join(dir, `${name}.c`), '-o', join(dir, `${name}.o`)]);
    const a = readSymbols(join(dir, 'a.o'));
    assert.deepEqual(a, { defines: ['a'], uses: ['b'] });
    const { graph } = callGraph({ 'src/text/a.c': a, 'src/text/b.c': readSymbols(join(dir, 'b.o')) });
    assert.deepEqual(callCycles(graph), ['call cycle: src/text/a.c -> src/text/b.c -> src/text/a.c (src/text/a.c -> src/text/b.c: b; src/text/b.c -> src/text/a.c: a)']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a C file is named only by the paragraph of its own folder in ARCHITECTURE.md', () => {
  const architecture = [
    'Everything public is in `src/attention.h`.',
    '',
    '- **`src/problem/`**: the kinds (`problem.c`), checks (`check.c`) and',
    '  runs (`run_sdpa.c`).',
    '- **`src/check/`**: the report (`report.c`).',
    '',
    '## Web layers',
  ].join('\n');
  assert.deepEqual(unnamedFiles([
    'src/attention.h', 'src/problem/problem.c', 'src/problem/check.c', 'src/problem/run_sdpa.c',
    'src/problem/run_grad.c', 'src/check/check.c', 'src/check/report.c', 'src/problem/sdpa.c',
  ], architecture), ['src/problem/run_grad.c', 'src/check/check.c', 'src/problem/sdpa.c']);
});
