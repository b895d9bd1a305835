// `make bench`: runs every implementation in a fresh process (bench/impl.mjs
// for the JS and WASM ones, build/bench/bench_sdpa for native code), takes
// the median of each case's samples and prints one table side by side.
// Figures only: nothing is asserted. Usage: node bench/bench.mjs
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runProcess as runIn } from './run-process.mjs';

const D = 64;
const root = fileURLToPath(new URL('../', import.meta.url));
const nativeBench = fileURLToPath(new URL('../build/bench/bench_sdpa', import.meta.url));
const impl = fileURLToPath(new URL('./impl.mjs', import.meta.url));

// Node 20 runs relaxed SIMD only with this flag (Node 18 may not know it;
// later Nodes run it without): given where Node takes it.
const RELAXED_FLAGS = spawnSync(process.execPath, ['--experimental-wasm-relaxed-simd', '-e', '']).status === 0
  ? ['--experimental-wasm-relaxed-simd'] : [];

// peak: which peak a figure is a fraction of ('native' = float32 FMA on
// one core; 'native64' = half of it, double lanes; 'wasm' = f32x4 mul+add;
// 'wasm-fma' = f32x4.relaxed_madd).
const IMPLEMENTATIONS = [
  { id: 'engine-wasm-f32', label: 'this engine, WASM f32 (SIMD)', peak: 'wasm' },
  { id: 'engine-wasm-f32-relaxed', label: 'this engine, WASM f32 (relaxed SIMD)', peak: 'wasm-fma', flags: RELAXED_FLAGS },
  { id: 'engine-wasm-f64', label: 'this engine, WASM f64', peak: 'wasm64' },
  { id: 'engine-native-f32', label: 'this engine, native f32', peak: 'native', native: 'f32' },
  { id: 'engine-native-f64', label: 'this engine, native f64', peak: 'native64', native: 'f64' },
  { id: 'ort-web', label: 'onnxruntime-web (wasm, 1 thread)', peak: 'wasm' },
  { id: 'tfjs-wasm', label: 'tfjs-backend-wasm (SIMD, 1 thread)', peak: 'wasm' },
  { id: 'ort-node', label: 'onnxruntime-node (CPU, 1 thread)', peak: 'native' },
  { id: 'plain-js', label: 'plain JS (Float64Array)', peak: 'wasm64' },
];
const CASES = [
  { name: 'T256', t: 256, causal: false },
  { name: 'T1024', t: 1024, causal: false },
  { name: 'T2048', t: 2048, causal: false },
  { name: 'causal1024', t: 1024, causal: true },
];

// Every process runs in the checkout's root.
const runProcess = (label, command, args) => runIn(label, command, args, root);

const results = new Map();
for (const implementation of IMPLEMENTATIONS) {
  results.set(implementation.id, implementation.native
    ? runProcess(implementation.label, nativeBench, [implementation.native])
    : runProcess(implementation.label, process.execPath, [...implementation.flags ?? [], impl, implementation.id]));
}
const small = runProcess('sdpaFlat at T = 4', process.execPath, [impl, 'small']);
// A peak is the best sample (the fastest the machine went), not the median.
const nativePeakRun = runProcess('native FMA peak', nativeBench, ['peak']);
const nativePeak = nativePeakRun.best.get('peak');
const wasmPeak = runProcess('WASM f32x4 peak', process.execPath, [impl, 'wasm-peak']).best.get('peak');
const fmaPeak = runProcess('WASM f32x4.relaxed_madd peak', process.execPath,
                           [...RELAXED_FLAGS, impl, 'wasm-peak-relaxed']).best.get('peak');
// seconds per flop -> flop/s
const peaks = {
  native: nativePeak ? 1 / nativePeak : undefined,
  native64: nativePeak ? 0.5 / nativePeak : undefined,
  wasm: wasmPeak ? 1 / wasmPeak : undefined,
  wasm64: wasmPeak ? 0.5 / wasmPeak : undefined,
  'wasm-fma': fmaPeak ? 1 / fmaPeak : undefined,
};

// Flops of the attention a case needs: 4·d per (query, key) pair it sees.
const flops = ({ t, causal }) => 4 * D * (causal ? t * (t + 1) / 2 : t * t);

// The kernel a row ran, where the engine says (attn.kernelName(), or
// attn_f32_kernel_name natively).
const table = [['case', 'implementation', 'kernel', 'ms / call', 'GFLOP/s', '% of peak', '× WASM f32 time']];
for (const c of CASES) {
  const reference = results.get('engine-wasm-f32').cases.get(c.name);
  for (const implementation of IMPLEMENTATIONS) {
    const seconds = results.get(implementation.id).cases.get(c.name);
    if (seconds === undefined) continue;
    const rate = flops(c) / seconds;
    const peak = peaks[implementation.peak];
    table.push([
      c.causal ? `causal T=${c.t}` : `T=${c.t}`,
      implementation.label,
      results.get(implementation.id).info.kernel ?? '-',
      (seconds * 1e3).toFixed(seconds < 1e-3 ? 3 : 2),
      (rate / 1e9).toFixed(2),
      peak ? `${(100 * rate / peak).toFixed(0)}%` : '-',
      reference ? (seconds / reference).toFixed(2) : '-',
    ]);
  }
}
const widths = table[0].map((_, c) => Math.max(...table.map((row) => row[c].length)));
const line = (row) => row.map((cell, c) => (c < 3 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');

const time = (id, name) => results.get(id).cases.get(name);
const ratio = (a, b) => (a === undefined || b === undefined ? '-' : (a / b).toFixed(2));
const kernel = results.get('engine-native-f32').info.kernel ?? '?';
const tfjs = results.get('tfjs-wasm').info;

console.log(`Scaled dot-product attention, batch 1, n_q = n_k = T, d_k = d_v = ${D}, output only; ` +
            `CPU time per call, median of 7 samples, a fresh process per implementation. GFLOP/s count 4·d flops per (query, key) ` +
            'pair computed (T² full, T(T+1)/2 causal).');
console.log(`Node ${process.version}; native f32 kernel: ${kernel}; tfjs-wasm SIMD ${tfjs.simd}, ` +
            `threads ${tfjs.threads}. Peaks on one core: native FMA f32 (${nativePeakRun.info.peak_isa ?? '?'}) ` +
            `${peaks.native ? (peaks.native / 1e9).toFixed(1) : '-'} GFLOP/s (f64: half), WASM f32x4 mul+add ` +
            `${peaks.wasm ? (peaks.wasm / 1e9).toFixed(1) : '-'} GFLOP/s (f64 and plain JS: half), WASM f32x4.relaxed_madd ` +
            `${peaks['wasm-fma'] ? (peaks['wasm-fma'] / 1e9).toFixed(1) : '-'} GFLOP/s` +
            `${RELAXED_FLAGS.length ? ` (with ${RELAXED_FLAGS.join(' ')})` : ''}.`);
console.log('');
console.log(line(table[0]));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const row of table.slice(1)) console.log(line(row));
console.log('');
const t4 = (name) => {
  const s = small.cases.get(name);
  return s === undefined ? '-' : `${(s * 1e6).toFixed(2)} µs`;
};
console.log(`sdpaFlat at T = 4, d = ${D} (whole JS call): float32 ${t4('T4-f32')}, float64 ${t4('T4-f64')}; `
  + `writing into the caller's output array: float32 ${t4('T4-f32-into')}, float64 ${t4('T4-f64-into')}.`);
for (const t of [256, 1024, 2048]) {
  const name = `T${t}`;
  const wasm = time('engine-wasm-f32', name);
  console.log(`T = ${t}: WASM f32 is ${ratio(time('ort-web', name), wasm)}× as fast as onnxruntime-web, ` +
              `${ratio(time('tfjs-wasm', name), wasm)}× as fast as tfjs-wasm; native f32 is ` +
              `${ratio(time('ort-node', name), time('engine-native-f32', name))}× as fast as onnxruntime-node.`);
  const relaxed = time('engine-wasm-f32-relaxed', name);
  console.log(`T = ${t}: WASM f32 with relaxed SIMD is ${ratio(time('ort-web', name), relaxed)}× as fast as onnxruntime-web, ` +
              `${ratio(time('tfjs-wasm', name), relaxed)}× as fast as tfjs-wasm, ${ratio(wasm, relaxed)}× as fast as with SIMD.`);
}
console.log(`Causal at T = 1024 is ${ratio(time('engine-wasm-f32', 'T1024'), time('engine-wasm-f32', 'causal1024'))}× ` +
            `as fast as full (WASM f32), ${ratio(time('engine-wasm-f32-relaxed', 'T1024'), time('engine-wasm-f32-relaxed', 'causal1024'))}× ` +
            `(relaxed SIMD), ${ratio(time('engine-native-f32', 'T1024'), time('engine-native-f32', 'causal1024'))}× (native f32).`);

// The separate processes above run at different moments; on a shared machine
// their ratios carry the load's changes. These samples are taken in turn.
console.log('');
console.log('Side by side in one process (bench/impl.mjs interleaved: samples taken in turn, so the machine\'s load ' +
            'falls on each alike; the ratios to compare on a shared machine):');
const sideBySide = spawnSync(process.execPath, [...RELAXED_FLAGS, impl, 'interleaved'], { cwd: root, encoding: 'utf8' });
console.log(sideBySide.status === 0 ? sideBySide.stdout.trimEnd()
  : `  failed (${sideBySide.status}): ${(sideBySide.stderr ?? '').trim().split('\n').pop()}`);
