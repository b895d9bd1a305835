// Long sequences measured, for the "Cheaper attention" section (in a Web
// Worker, long-sequence-worker.js, or where none can start, as on the
// one-file page opened from disk, on the page between frames): for each
// length T, float32 attention of
// T queries over T keys (d = 32) three ways, by the engine:
//   full    sdpaFlat with its weights: the T × T matrix is formed (4T² bytes)
//   online  sdpaFlat without weights: keys in tiles, a running max and sum
//           per query (as FlashAttention), O(T·d) memory
//   linear  linearFlat: no T × T matrix at all, time and memory O(T·d²)
// Each result: the fastest call of a few rounds in milliseconds, and the bytes the
// engine held for the call (a fresh engine per measurement, so its allocated
// bytes after the call are this call's, as memoryStats reports them).
//
//   await measureLongSequences({ newEngine, post, sizes?, stopped?, pause? })
//   post({ type: 'row', T, method, ms, bytes, kernel }) for each measurement
//   (kernel: the engine's float32 kernel, attn.kernelName()),
//   post({ type: 'skipped', T, method, bytes }) where full attention's
//   weights alone would pass FULL_WEIGHTS_LIMIT, then post({ type: 'done' });
//   a failure posts { type: 'error', message }. pause() is awaited before
//   each measurement: on the page, a frame, so that it paints and answers
//   between them.
//
//   await measurePageEngine({ post, stopped?, pause? }) does the same with
//   fresh instances of the page's engine, or posts why it could not load.
//
//   await measureOnWorkers({ pool, T, post }) measures online attention at
//   T split across the workers of a parallel.js pool, timed from the page:
//   post({ type: 'row', T, method: 'online', workers, ms }).
//
//   await pageEngineBytes(): the page engine's bytes (for a pool's workers).

import { loadAttention } from './attention.js';
import { pageEngineUrl } from './engine-file.js';
import { seededRandom } from '../presets.js';

export const LONG_SIZES = [256, 512, 1024, 2048, 4096, 8192, 16384];
export const LONG_D = 32;
export const METHODS = ['full', 'online', 'linear'];
/** Full attention stops where its weights alone would take more than this. */
export const FULL_WEIGHTS_LIMIT = 64 * 1024 * 1024;
// The page's engine (attention-page.wasm); the one-file page carries its
// own, gzipped, as base64 (scripts/build-single.mjs).
const PAGE_ENGINE = pageEngineUrl();
const ROUND_MS = 20;
const ENOUGH_MS = 250; // rounds until this much time has passed (at least one)

const CALLS = {
  full: (engine, input) => engine.sdpaFlat({ ...input, weights: true }),
  online: (engine, input) => engine.sdpaFlat(input),
  linear: (engine, input) => engine.linearFlat(input),
};

function inputFor(T, d) {
  const random = seededRandom(T);
  const matrix = () => Float32Array.from({ length: T * d }, () => 2 * random() - 1);
  return { q: matrix(), k: matrix(), v: matrix(), nQ: T, nK: T, dK: d, dV: d };
}

// The fastest of a few rounds, each repeating the call for ROUND_MS at
// least (a worker's clock may tick only every 0.1 ms): the minimum is the
// least disturbed by whatever else the machine is doing. call() may return
// a promise (a call on the workers), awaited before the next.
async function fastest(call) {
  const clock = globalThis.performance;
  const began = clock.now();
  let best = Infinity;
  do {
    const start = clock.now();
    let calls = 0;
    do {
      await call();
      calls += 1;
    } while (clock.now() - start < ROUND_MS);
    best = Math.min(best, (clock.now() - start) / calls);
  } while (clock.now() - began < ENOUGH_MS);
  return best;
}

async function measure(newEngine, method, input) {
  const engine = await newEngine();
  const call = () => CALLS[method](engine, input);
  call(); // the engine's memory grows to what the call needs
  const { allocatedBytes } = engine.memoryStats();
  return { ms: await fastest(call), bytes: allocatedBytes, kernel: engine.kernelName() };
}

export async function measureOnWorkers({ pool, T, post, d = LONG_D }) {
  const { q, k, v } = inputFor(T, d);
  await pool.setKeys({ k, v, nK: T, dK: d, dV: d });
  const call = () => pool.sdpa({ q, nQ: T });
  await call(); // each worker's memory grows to what its block needs
  post({ type: 'row', T, method: 'online', workers: pool.size, ms: await fastest(call) });
}

export async function pageEngineBytes() {
  const inlined = globalThis.attentionSingleFile;
  if (inlined) {
    const packed = Uint8Array.from(atob(inlined.wasmGzip), (c) => c.charCodeAt(0));
    return new Response(new Blob([packed]).stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer();
  }
  const response = await fetch(PAGE_ENGINE);
  if (!response.ok) throw new Error(`${PAGE_ENGINE.href}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

export async function measureLongSequences({
  newEngine, post, sizes = LONG_SIZES, d = LONG_D, stopped = () => false, pause = async () => {},
}) {
  try {
    for (const T of sizes) {
      const input = inputFor(T, d);
      for (const method of METHODS) {
        await pause();
        if (stopped()) return;
        const weightsBytes = 4 * T * T;
        if (method === 'full' && weightsBytes > FULL_WEIGHTS_LIMIT) {
          post({ type: 'skipped', T, method, bytes: weightsBytes });
          continue;
        }
        post({ type: 'row', T, method, ...await measure(newEngine, method, input) });
      }
    }
    post({ type: 'done' });
  } catch (error) {
    post({ type: 'error', message: error.message });
  }
}

export async function measurePageEngine(options) {
  let wasmBinary;
  try {
    wasmBinary = await pageEngineBytes();
  } catch (error) {
    options.post({ type: 'error', message: `The engine could not load: ${error.message}` });
    return;
  }
  await measureLongSequences({ ...options, newEngine: () => loadAttention({ wasmBinary }) });
}
