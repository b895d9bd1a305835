// Times one implementation of scaled dot-product attention in this process
// and prints JSON lines for bench/bench.mjs: {"case", "samples"} with
// seconds per call. Usage: node bench/impl.mjs NAME, NAME one of
//   engine-wasm-f32  sdpaFlat with Float32Arrays (attn_sdpa_f32, WASM SIMD)
//   engine-wasm-f32-relaxed  the same in the relaxed-SIMD build, which this
//                    Node runs only with --experimental-wasm-relaxed-simd
//   engine-wasm-f64  sdpaFlat with Float64Arrays (attn_sdpa)
//   small            sdpaFlat at T = 4 (float32 and float64): µs per call
//   plain-js         the textbook loops in JS, Float64Array
//   ort-web          onnxruntime-web (WASM, one thread)
//   tfjs-wasm        @tensorflow/tfjs-backend-wasm (SIMD, one thread)
//   ort-node         onnxruntime-node (CPU, one thread)
//   wasm-peak        f32x4 multiply-add chains (build/bench/peak.wasm)
//   wasm-peak-relaxed  the same with f32x4.relaxed_madd (peak-relaxed.wasm)
//   interleaved [FILE.wasm ...]  text, not JSON lines (bench/bench.mjs
//                    prints it as it is): the engine's
//                    float32 sdpaFlat in each module given (by default
//                    attention.wasm, and attention-relaxed.wasm where this
//                    Node runs relaxed SIMD), tfjs-wasm and ort-web in this
//                    one process, their samples taken in turn, so that the
//                    load of a shared machine falls on all of them alike;
//                    prints medians and, per case, the median over rounds
//                    of each one's time over the first module's
// Each case runs SAMPLES samples, each a mean over batches of doubling size
// (1, 2, 4, ... calls) until SAMPLE_SECONDS have passed, after calls for
// WARM_SECONDS. Times are CPU time of this
// process (process.cpuUsage), not wall time: on a shared machine the time
// other processes run is not this code's. Every implementation runs on one
// thread, so the two agree on an idle machine.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAttention, wasmSupport } from '../web/lib/attention-node.js';
import { sdpaModel } from './onnx_model.mjs';
import { D, engineCall, inputs, onnxRuntime, sideBySide, sideBySideLines, tfjs } from './side-by-side.mjs';

const SAMPLES = 7;
const SAMPLE_SECONDS = 0.05;
const CASES = [
  { name: 'T256', t: 256, causal: false },
  { name: 'T1024', t: 1024, causal: false },
  { name: 'T2048', t: 2048, causal: false },
  { name: 'causal1024', t: 1024, causal: true },
];

// CPU seconds of this process since `start` (a process.cpuUsage()).
const cpuSince = (start) => {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1e6;
};

// Warming up: calls for WARM_SECONDS, so that V8 has compiled the hot
// code with its optimising tier before the first sample.
const WARM_SECONDS = 0.1;

async function warm(call) {
  for (const start = process.cpuUsage(); cpuSince(start) < WARM_SECONDS;) await call();
}

// One sample: seconds per call, over batches of doubling size, so reading
// the clock (a system call) costs nothing next to small calls.
async function sample(call) {
  let calls = 0;
  const start = process.cpuUsage();
  let elapsed = 0;
  for (let batch = 1; elapsed < SAMPLE_SECONDS; batch *= 2) {
    for (let i = 0; i < batch; i++) await call();
    calls += batch;
    elapsed = cpuSince(start);
  }
  return elapsed / calls;
}

async function samples(call) {
  await warm(call);
  const result = [];
  for (let s = 0; s < SAMPLES; s++) result.push(await sample(call));
  return result;
}

function samplesSync(call) {
  for (const start = process.cpuUsage(); cpuSince(start) < WARM_SECONDS;) call();
  const result = [];
  for (let s = 0; s < SAMPLES; s++) {
    let calls = 0;
    const start = process.cpuUsage();
    let elapsed = 0;
    for (let batch = 1; elapsed < SAMPLE_SECONDS; batch *= 2) {
      for (let i = 0; i < batch; i++) call();
      calls += batch;
      elapsed = cpuSince(start);
    }
    result.push(elapsed / calls);
  }
  return result;
}

const print = (name, values, extra = {}) =>
  console.log(JSON.stringify({ case: name, samples: values, ...extra }));

// Scaled dot-product attention in plain JS, the textbook way a page would
// write it (causal: keys j <= i only).
function plainSdpa(q, k, v, t, d, causal) {
  const output = new Float64Array(t * d);
  const scores = new Float64Array(t);
  const scale = 1 / Math.sqrt(d);
  for (let i = 0; i < t; i++) {
    const last = causal ? i : t - 1;
    let max = -Infinity;
    for (let j = 0; j <= last; j++) {
      let dot = 0;
      for (let c = 0; c < d; c++) dot += q[i * d + c] * k[j * d + c];
      scores[j] = dot * scale;
      if (scores[j] > max) max = scores[j];
    }
    let sum = 0;
    for (let j = 0; j <= last; j++) {
      scores[j] = Math.exp(scores[j] - max);
      sum += scores[j];
    }
    for (let j = 0; j <= last; j++) {
      const w = scores[j] / sum;
      for (let c = 0; c < d; c++) output[i * d + c] += w * v[j * d + c];
    }
  }
  return output;
}

const engineUrl = (file) => new URL(`../web/lib/${file}`, import.meta.url);
const loadEngine = async (path) => loadAttention({ wasmBinary: readFileSync(path) });

// The engine's SIMD build, or its relaxed-SIMD one (relaxed: true); each
// line says which float32 kernel ran.
async function engine(float32, relaxed = false) {
  if (relaxed && wasmSupport() !== 'relaxed') {
    console.error(`Node ${process.version} runs no relaxed SIMD (Node 20: --experimental-wasm-relaxed-simd)`);
    process.exit(1);
  }
  const attn = await loadEngine(engineUrl(relaxed ? 'attention-relaxed.wasm' : 'attention.wasm'));
  const Type = float32 ? Float32Array : Float64Array;
  for (const c of CASES) print(c.name, samplesSync(engineCall(attn, c, Type)), { kernel: attn.kernelName() });
}

async function small() {
  const attn = await loadAttention();
  const { q, k, v } = inputs(4);
  for (const Type of [Float32Array, Float64Array]) {
    const args = { q: Type.from(q), k: Type.from(k), v: Type.from(v), nQ: 4, nK: 4, dK: D, dV: D };
    const label = `T4-${Type === Float32Array ? 'f32' : 'f64'}`;
    print(label, samplesSync(() => attn.sdpaFlat(args)));
    // Into the caller's array: no result array allocated per call.
    const into = { ...args, output: new Type(4 * D) };
    print(`${label}-into`, samplesSync(() => attn.sdpaFlat(into)));
  }
}

function plainJs() {
  for (const { name, t, causal } of CASES) {
    const { q, k, v } = inputs(t);
    print(name, samplesSync(() => plainSdpa(q, k, v, t, D, causal)));
  }
}

async function timeFullCases(prepare, extra) {
  for (const c of CASES) {
    if (c.causal) continue;
    const { call, release } = await prepare(c);
    print(c.name, await samples(call), extra);
    await release();
  }
}

async function ortWebCases() {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  return onnxRuntime(ort, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' }, sdpaModel);
}

async function ortNode() {
  const ort = (await import('onnxruntime-node')).default;
  await timeFullCases(onnxRuntime(ort, {
    executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all',
  }, sdpaModel));
}

// { prepare, info }: prepare(c) gives { call, release } for a full case c.
async function tfjsCases() {
  const tf = await import('@tensorflow/tfjs-core');
  const wasmBackend = await import('@tensorflow/tfjs-backend-wasm');
  const dist = fileURLToPath(new URL('../node_modules/@tensorflow/tfjs-backend-wasm/dist/', import.meta.url));
  wasmBackend.setWasmPaths(dist);
  wasmBackend.setThreadsCount(1);
  await tf.setBackend('wasm');
  await tf.ready();
  const info = { simd: await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT'), threads: wasmBackend.getThreadsCount() };
  return { prepare: tfjs(tf), info };
}

async function tfjsWasm() {
  const { prepare, info } = await tfjsCases();
  await timeFullCases(prepare, info);
}

// More rounds than the other runners' samples: the ratios are the point.
const ROUNDS = 15;

// The modules given (or the SIMD build, and the relaxed one where Node runs
// it) and the two WASM peers, each case's samples taken in turn.
async function interleaved(paths) {
  const files = paths.length > 0 ? paths
    : [engineUrl('attention.wasm'), ...(wasmSupport() === 'relaxed' ? [engineUrl('attention-relaxed.wasm')] : [])];
  const contenders = [];
  for (const file of files) {
    const attn = await loadEngine(file).catch((error) => {
      console.error(`bench/impl.mjs interleaved: ${file}: ${error.message}`);
      process.exit(1);
    });
    const name = `${String(file).split('/').pop()} (${attn.kernelName()})`;
    contenders.push({ name, prepare: (c) => ({ call: engineCall(attn, c, Float32Array), release() {} }) });
  }
  contenders.push({ name: 'tfjs-backend-wasm', prepare: (await tfjsCases()).prepare });
  contenders.push({ name: 'onnxruntime-web', prepare: await ortWebCases() });
  console.log(`Node ${process.version}, d = ${D}: ms per call (CPU time), median of ${ROUNDS} samples taken in turn; ` +
              `× ${contenders[0].name}: the median over the rounds of each one's time over its time`);
  const sizes = CASES.filter((c) => !c.causal).map((c) => c.t);
  const results = await sideBySide({ contenders, sizes, rounds: ROUNDS, clock: { warm, sample } });
  for (const line of sideBySideLines(results)) console.log(line);
}

// peak.wasm: mul then add; peak-relaxed.wasm (wasm-peak-relaxed): one
// f32x4.relaxed_madd, the relaxed kernel's peak.
async function wasmPeak(file = 'peak.wasm') {
  const bytes = readFileSync(new URL(`../build/bench/${file}`, import.meta.url));
  const { instance } = await WebAssembly.instantiate(bytes, {});
  const iterations = 20000000;
  // V8 first runs a function from its baseline compiler and cannot swap in
  // the optimised code during a call: many short calls, then a pause, get
  // the optimised code in place before timing.
  for (let i = 0; i < 2000; i++) instance.exports.peak(1000);
  await new Promise((resolve) => setTimeout(resolve, 200));
  instance.exports.peak(iterations / 10);
  const perFlop = [];
  for (let s = 0; s < SAMPLES; s++) {
    const start = process.cpuUsage();
    instance.exports.peak(iterations);
    perFlop.push(cpuSince(start) / (iterations * 12 * 4 * 2));
  }
  print('peak', perFlop);
}

const runners = {
  'engine-wasm-f32': () => engine(true),
  'engine-wasm-f32-relaxed': () => engine(true, true),
  'engine-wasm-f64': () => engine(false),
  small,
  'plain-js': plainJs,
  'ort-web': async () => timeFullCases(await ortWebCases()),
  'tfjs-wasm': tfjsWasm,
  'ort-node': ortNode,
  'wasm-peak': () => wasmPeak(),
  'wasm-peak-relaxed': () => wasmPeak('peak-relaxed.wasm'),
  interleaved: () => interleaved(process.argv.slice(3)),
};
const name = process.argv[2];
if (!Object.hasOwn(runners, name)) {
  console.error(`usage: node bench/impl.mjs ${Object.keys(runners).join('|')}`);
  process.exit(2);
}
await runners[name]();
