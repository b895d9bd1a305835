#!/usr/bin/env node
// The engine's WASM float32 sdpaFlat and the two WASM peers
// (tfjs-backend-wasm, onnxruntime-web, one thread each) side by side in
// one page of each browser (part of `make bench`; figures, not a test): the
// samples taken in turn, as bench/impl.mjs's interleaved run does in Node
// (bench/side-by-side.mjs), so the ratios hold under the same load. The
// engine in the build the browser picks (web/lib/engine-file.js: relaxed
// SIMD in chromium) and in the SIMD build. Wall time in the page.
//
//   node bench/browser-side-by-side.mjs             (after `make wasm` and `npm ci`)
//   ENGINE=chromium node bench/browser-side-by-side.mjs

import { fileURLToPath } from 'node:url';
import { ENGINES, launch, serveWeb } from '../tests/engines/drivers.mjs';
import { sideBySideLines } from './side-by-side.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const engines = (process.env.ENGINE ?? ENGINES.join(',')).split(',').map((name) => name.trim());

// Runs in the page, served from the repository's root.
async function timeInPage({ sizes, rounds, sampleMs }) {
  const { engineFile, loadAttention } = await import('/web/lib/attention.js');
  const { engineCall, onnxRuntime, sideBySide, tfjs } = await import('/bench/side-by-side.mjs');
  const { sdpaModel } = await import('/bench/onnx_model.mjs');
  const script = (src) => new Promise((resolve, reject) => {
    const element = Object.assign(document.createElement('script'), { src });
    element.onload = resolve;
    element.onerror = () => reject(new Error(`${src} did not load (npm ci first)`));
    document.head.append(element);
  });
  const tfDist = '/node_modules/@tensorflow/tfjs-backend-wasm/dist/';
  await script('/node_modules/@tensorflow/tfjs-core/dist/tf-core.es2017.min.js');
  await script(`${tfDist}tf-backend-wasm.es2017.min.js`);
  const { tf } = window;
  tf.wasm.setWasmPaths(tfDist);
  tf.wasm.setThreadsCount(1);
  await tf.setBackend('wasm');
  await tf.ready();
  const ort = await import('/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs');
  Object.assign(ort.env.wasm, { numThreads: 1, proxy: false, wasmPaths: '/node_modules/onnxruntime-web/dist/' });

  const contenders = [];
  for (const file of new Set([engineFile('attention'), 'attention.wasm'])) {
    const attn = await loadAttention({ wasmUrl: `/web/lib/${file}` });
    contenders.push({ name: `${file} (${attn.kernelName()})`,
                      prepare: (c) => ({ call: engineCall(attn, c, Float32Array), release() {} }) });
  }
  contenders.push({ name: 'tfjs-backend-wasm', prepare: tfjs(tf) });
  contenders.push({ name: 'onnxruntime-web',
                    prepare: onnxRuntime(ort, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' }, sdpaModel) });
  // Seconds per call over batches of doubling size until sampleMs have passed.
  const sample = async (call) => {
    let calls = 0;
    const start = performance.now();
    for (let batch = 1; performance.now() - start < sampleMs; batch *= 2) {
      for (let i = 0; i < batch; i++) await call();
      calls += batch;
    }
    return (performance.now() - start) / 1e3 / calls;
  };
  const warm = async (call) => {
    for (const start = performance.now(); performance.now() - start < 100;) await call();
  };
  return sideBySide({ contenders, sizes, rounds, clock: { warm, sample } });
}

const server = await serveWeb({ root: ROOT });
try {
  for (const engine of engines) {
    const browser = await launch(engine);
    try {
      await browser.goto(server.url('bench/side-by-side.html'));
      const results = await browser.evaluate(timeInPage, { sizes: [256, 1024, 2048], rounds: 15, sampleMs: 50 });
      console.log(`${browser.version}, d = 64: ms per call (wall time), median of 15 samples taken in turn; `
        + `× ${results[0].rows[0].name}: the median over the rounds of each one's time over its time`);
      for (const line of sideBySideLines(results)) console.log(line);
    } finally {
      await browser.close();
    }
  }
} finally {
  await server.close();
}
