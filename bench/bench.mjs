// Times scaled dot-product attention as WebAssembly in Node (attn.sdpaFlat)
// and as plain JS, and prints them next to the native figures that
// bench/bench_sdpa writes ("T seconds_per_call" lines, file given as the
// first argument). Usage: node bench/bench.mjs [native.txt]
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { loadAttention } from '../web/lib/attention.js';

const D = 64;
const SIZES = [8, 64, 256, 1024];
// As in bench_sdpa.c: the fastest of ROUNDS rounds of at least ROUND_SECONDS.
const ROUNDS = 5;
const ROUND_SECONDS = 0.06;

// The generator of bench_sdpa.c: uniform in [-1, 1) from a 64-bit LCG.
function uniformFiller(seed) {
  let state = BigInt(seed);
  return (length) => {
    const x = new Float64Array(length);
    for (let i = 0; i < length; i++) {
      state = BigInt.asUintN(64, state * 6364136223846793005n + 1442695040888963407n);
      x[i] = Number(state >> 11n) / 9007199254740992 * 2 - 1;
    }
    return x;
  };
}

// Scaled dot-product attention in plain JS, the textbook way a page would
// write it: q [nQ, d], k [nK, d], v [nK, dV] flat; output [nQ, dV].
function plainSdpa(q, k, v, nQ, nK, d, dV) {
  const output = new Float64Array(nQ * dV);
  const scores = new Float64Array(nK); // [nK]
  const scale = 1 / Math.sqrt(d);
  for (let i = 0; i < nQ; i++) {
    let max = -Infinity;
    for (let j = 0; j < nK; j++) {
      let dot = 0;
      for (let c = 0; c < d; c++) dot += q[i * d + c] * k[j * d + c];
      scores[j] = dot * scale;
      if (scores[j] > max) max = scores[j];
    }
    let sum = 0;
    for (let j = 0; j < nK; j++) {
      scores[j] = Math.exp(scores[j] - max);
      sum += scores[j];
    }
    for (let j = 0; j < nK; j++) {
      const w = scores[j] / sum;
      for (let c = 0; c < dV; c++) output[i * dV + c] += w * v[j * dV + c];
    }
  }
  return output;
}

// The fastest round's seconds per call; a round runs batches of doubling
// size until ROUND_SECONDS have passed.
function secondsPerCall(call) {
  call(); // warm up: compile, page in
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    let total = 0;
    let calls = 0;
    for (let batch = 1; total < ROUND_SECONDS; batch *= 2) {
      const start = performance.now();
      for (let i = 0; i < batch; i++) call();
      total += (performance.now() - start) / 1000;
      calls += batch;
    }
    best = Math.min(best, total / calls);
  }
  return best;
}

function readNative(path) {
  const seconds = new Map();
  if (!path) return seconds;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const [t, s] = line.trim().split(/\s+/);
    if (t && s) seconds.set(Number(t), Number(s));
  }
  return seconds;
}

const native = readNative(process.argv[2]);
const attn = await loadAttention();
const fill = uniformFiller(42);
const rows = [];
let worstDifference = 0;
for (const t of SIZES) {
  const q = fill(t * D);
  const k = fill(t * D);
  const v = fill(t * D);
  const dims = { nQ: t, nK: t, dK: D, dV: D };
  process.stderr.write(`bench: timing T = ${t} (WASM, plain JS) ...\n`);
  const wasm = secondsPerCall(() => attn.sdpaFlat({ q, k, v, ...dims }));
  const js = secondsPerCall(() => plainSdpa(q, k, v, t, t, D, D));
  const fromWasm = attn.sdpaFlat({ q, k, v, ...dims }).output;
  const fromJs = plainSdpa(q, k, v, t, t, D, D);
  for (let i = 0; i < fromJs.length; i++) {
    worstDifference = Math.max(worstDifference, Math.abs(fromWasm[i] - fromJs[i]));
  }
  rows.push({ t, native: native.get(t), wasm, js });
}

const flops = (t) => 4 * t * t * D;
const micro = (s) => (s === undefined ? '-' : (s * 1e6).toFixed(s < 1e-4 ? 2 : 1));
const gflops = (t, s) => (s === undefined ? '-' : (flops(t) / s / 1e9).toFixed(2));
const ratio = (a, b) => (a === undefined || b === undefined ? '-' : (a / b).toFixed(2));
const table = [
  ['T', 'native µs', 'GFLOP/s', 'WASM µs', 'GFLOP/s', 'plain JS µs', 'GFLOP/s',
   'WASM/native', 'JS/native', 'JS/WASM'],
  ...rows.map(({ t, native: n, wasm: w, js: j }) => [
    String(t), micro(n), gflops(t, n), micro(w), gflops(t, w), micro(j), gflops(t, j),
    ratio(w, n), ratio(j, n), ratio(j, w)]),
];
const widths = table[0].map((_, c) => Math.max(...table.map((row) => row[c].length)));
const line = (row) => row.map((cell, c) => cell.padStart(widths[c])).join('  ');

console.log(`Scaled dot-product attention, batch 1, n_q = n_k = T, d_k = d_v = ${D}; ` +
            `time per call (best of ${ROUNDS} rounds of >= ${ROUND_SECONDS} s) and GFLOP/s ` +
            'counting 4·T²·d flops.');
console.log(`Node ${process.version}; ratios are time ratios (how many times slower).`);
console.log(line(table[0]));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const row of table.slice(1)) console.log(line(row));
console.log(`WASM and plain JS outputs differ by at most ${worstDifference.toExponential(2)}.`);
if (native.size === 0) console.log('(no native figures: run ./bench/run.sh for them)');
