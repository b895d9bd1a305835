#!/usr/bin/env node
// The engine's WASM float32 kernels in the browsers learners use (part of
// `make bench`; figures, not a test): sdpaFlat at d = 64 in the build this
// browser picks (web/lib/engine-file.js: relaxed SIMD in chromium) and in
// the SIMD build, each row with the kernel it ran (attn.kernelName()).
// Wall time in the page (a browser shows a page no CPU time): the fastest
// of 15 samples, each a mean over the calls of 50 ms, as the page's own
// long-sequence measurement takes it: on a busy machine the fastest is the
// least disturbed by other processes, and still slower than CPU time.
//
//   node bench/browser-kernels.mjs                 (after `make wasm`)
//   ENGINE=chromium node bench/browser-kernels.mjs (one engine, or a list)

import { ENGINES, launch, serveWeb } from '../tests/engines/drivers.mjs';

const engines = (process.env.ENGINE ?? ENGINES.join(',')).split(',').map((name) => name.trim());
const CASES = [
  { name: 'T=256', t: 256, causal: false },
  { name: 'T=1024', t: 1024, causal: false },
  { name: 'T=2048', t: 2048, causal: false },
  { name: 'causal T=1024', t: 1024, causal: true },
];

// Runs in the page: the times of every case in each build, in ms per call.
async function timeKernels({ cases, samples, sampleMs }) {
  const { engineFile, loadAttention } = await import('/lib/attention.js');
  const files = [...new Set([engineFile('attention'), 'attention.wasm'])];
  // bench/impl.mjs's inputs: uniform in [-1, 1), here from a 32-bit LCG.
  let state = 42;
  const fill = (length) => Float32Array.from({ length }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 31 - 1;
  });
  const rows = [];
  for (const file of files) {
    const attn = await loadAttention({ wasmUrl: `/lib/${file}` });
    const times = [];
    for (const { t, causal } of cases) {
      const args = { q: fill(t * 64), k: fill(t * 64), v: fill(t * 64), nQ: t, nK: t, dK: 64, dV: 64, causal };
      for (let start = performance.now(); performance.now() - start < sampleMs;) attn.sdpaFlat(args);
      const perCall = [];
      for (let s = 0; s < samples; s++) {
        let calls = 0;
        const start = performance.now();
        while (performance.now() - start < sampleMs) {
          attn.sdpaFlat(args);
          calls++;
        }
        perCall.push((performance.now() - start) / calls);
      }
      times.push(Math.min(...perCall));
    }
    rows.push({ file, kernel: attn.kernelName(), times });
  }
  return rows;
}

const server = await serveWeb();
try {
  console.log('The engine\u2019s WASM float32 sdpaFlat in the browsers, d = 64, batch 1, output only; '
    + 'ms per call (wall time), the fastest of 15 samples:');
  const header = ['browser', 'build', 'kernel', ...CASES.map((c) => c.name)];
  const table = [header];
  for (const engine of engines) {
    const browser = await launch(engine);
    try {
      // Any page of the server will do: the modules are imported from it.
      await browser.goto(server.url('presets.json'));
      const rows = await browser.evaluate(timeKernels, { cases: CASES, samples: 15, sampleMs: 50 });
      for (const { file, kernel, times } of rows) {
        table.push([browser.version, file, kernel, ...times.map((ms) => ms.toFixed(2))]);
      }
    } finally {
      await browser.close();
    }
  }
  const widths = header.map((_, c) => Math.max(...table.map((row) => row[c].length)));
  for (const row of table) {
    console.log(`  ${row.map((cell, c) => (c < 3 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ')}`);
  }
} finally {
  await server.close();
}
