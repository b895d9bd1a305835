// `make bench-ab BASE=<commit>`: this checkout's engine against another
// build of it (bench/ab.sh builds BASE in a worktree), each implementation
// run ROUNDS times, the two checkouts alternating, so that both see the same
// machine. A change is within noise when its ratio is inside the spread of
// the rounds themselves. Figures only. Usage: node bench/ab.mjs BASE_ROOT [ROUNDS]
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, runProcess } from './run-process.mjs';

const here = fileURLToPath(new URL('../', import.meta.url));
const [baseArg, roundsArg = '3'] = process.argv.slice(2);
const baseRoot = baseArg && resolve(baseArg);
if (!baseRoot || !existsSync(join(baseRoot, 'bench/impl.mjs'))) {
  console.error('usage: node bench/ab.mjs BASE_ROOT [ROUNDS] (BASE_ROOT: a built checkout)');
  process.exit(2);
}
const rounds = Number(roundsArg);

// What to compare: the engine's own implementations (the peers do not change).
const IMPLEMENTATIONS = [
  { id: 'engine-wasm-f32', label: 'WASM f32 (SIMD)' },
  { id: 'engine-wasm-f64', label: 'WASM f64' },
  { id: 'small', label: 'sdpaFlat at T = 4' },
  { id: 'native-f32', label: 'native f32', native: 'f32' },
  { id: 'native-f64', label: 'native f64', native: 'f64' },
];
const SIDES = [['base', baseRoot], ['this', here]];

// medians[side][implementation][case] = [one median a round]
const medians = { base: {}, this: {} };
for (let round = 1; round <= rounds; round++) {
  for (const implementation of IMPLEMENTATIONS) {
    for (const [side, root] of SIDES) {
      const run = implementation.native
        ? runProcess(`${side} ${implementation.label}, round ${round}`, join(root, 'build/bench/bench_sdpa'),
                     [implementation.native], root)
        : runProcess(`${side} ${implementation.label}, round ${round}`, process.execPath,
                     [join(root, 'bench/impl.mjs'), implementation.id], root);
      const bySide = (medians[side][implementation.id] ??= {});
      for (const [name, seconds] of run.cases) (bySide[name] ??= []).push(seconds);
    }
  }
}

const format = (seconds) => (seconds < 1e-3 ? `${(seconds * 1e6).toFixed(2)} µs` : `${(seconds * 1e3).toFixed(2)} ms`);
const spread = (values) => Math.max(...values) / Math.min(...values) - 1;
const table = [['implementation', 'case', 'base', 'this', 'this ÷ base', 'rounds spread', 'verdict']];
for (const implementation of IMPLEMENTATIONS) {
  for (const [name, thisRounds] of Object.entries(medians.this[implementation.id] ?? {})) {
    const baseRounds = medians.base[implementation.id]?.[name];
    if (!baseRounds) continue;
    const ratio = median(thisRounds) / median(baseRounds);
    const noise = Math.max(spread(thisRounds), spread(baseRounds));
    const verdict = Math.abs(ratio - 1) <= noise ? 'within noise' : ratio > 1 ? 'slower' : 'faster';
    table.push([implementation.label, name, format(median(baseRounds)), format(median(thisRounds)),
                ratio.toFixed(3), `±${(100 * noise).toFixed(1)}%`, verdict]);
  }
}
const widths = table[0].map((_, c) => Math.max(...table.map((row) => row[c].length)));
const line = (row) => row.map((cell, c) => (c < 2 || c === 6 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])))
  .join('  ');
console.log(`This checkout against ${baseRoot}: the median of ${rounds} rounds, the two alternating; ` +
            'CPU time per call (each round\'s figure the median of 7 samples). The spread is the larger ' +
            'of the two sides\' (slowest round ÷ fastest − 1); a ratio inside it is within noise.');
console.log('');
console.log(line(table[0]));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const row of table.slice(1)) console.log(line(row));
