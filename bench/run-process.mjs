// Runs one timing process (bench/impl.mjs or build/bench/bench_sdpa) and
// reads its JSON lines: bench/bench.mjs and bench/ab.mjs share it.
import { spawnSync } from 'node:child_process';

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

// Returns { cases: Map(name -> median seconds), best: Map(name -> fastest
// sample), info (every other key of the lines), failed }.
export function runProcess(label, command, args, cwd) {
  process.stderr.write(`bench: ${label} ...\n`);
  const run = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 24 });
  const cases = new Map();
  const best = new Map();
  const info = {};
  if (run.status !== 0) {
    const why = run.error?.message ?? run.stderr.trim().split('\n').pop();
    process.stderr.write(`bench: ${label} failed (${run.status}): ${why}\n`);
    return { cases, best, info, failed: true };
  }
  for (const line of run.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const record = JSON.parse(line);
    if (record.samples) {
      cases.set(record.case, median(record.samples));
      best.set(record.case, Math.min(...record.samples));
    }
    for (const [key, value] of Object.entries(record)) {
      if (key !== 'case' && key !== 'samples') info[key] = value;
    }
  }
  return { cases, best, info };
}
