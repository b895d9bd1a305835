// Shared by the export tests (latex.test.mjs, markdown.test.mjs): the
// problems whose walkthroughs they check, and build/attn's output for one.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { randomProblems } from '../wasm/problems.mjs';
import { randomSource } from '../wasm/support.mjs';

const ATTN = fileURLToPath(new URL('../../build/attn', import.meta.url));
const PRESETS = JSON.parse(readFileSync(new URL('../../web/presets.json', import.meta.url), 'utf8')).presets;

/** What `build/attn --format <format>` prints for problem. */
export function cliFormat(problem, format) {
  const run = spawnSync(ATTN, ['--format', format], { input: JSON.stringify(problem), encoding: 'utf8' });
  assert.equal(run.status, 0, `build/attn --format ${format} failed for ${JSON.stringify(problem).slice(0, 200)}: ${run.stderr}`);
  return run.stdout;
}

/** A causal self-attention problem whose tokens are labels (8 of them, as many as a walkthrough shows). */
export function labelledProblem(labels) {
  const r = randomSource(12);
  const square = () => labels.map(() => labels.map(() => Math.round(r.uniform(-2, 2) * 10) / 10));
  return { kind: 'scaledDotProduct', tokens: labels, q: square(), k: square(), v: square(), mask: 'causal' };
}

/** An n x n problem, larger than a walkthrough shows whole. */
function largeProblem(n) {
  const r = randomSource(n);
  return { kind: 'scaledDotProduct', q: r.matrix(n, n, -1, 1), k: r.matrix(n, n, -1, 1), v: r.matrix(n, n, -1, 1) };
}

/**
 * [{ name, problem }]: every preset of the page but the generated ones
 * (too large to send through JSON here), random problems of every kind and
 * option, a problem labelled with labels and one too large to show whole.
 */
export function exportProblems(labels) {
  return [
    ...PRESETS.filter((preset) => !preset.inputGenerator).map((preset) => ({ name: `preset ${preset.id}`, problem: preset.input })),
    ...randomProblems(20261123).map((problem, i) => ({ name: `random problem ${i} (${problem.kind})`, problem })),
    { name: 'labelled problem', problem: labelledProblem(labels) },
    { name: 'a 12 x 12 problem, cut to 8 x 8', problem: largeProblem(12) },
  ];
}
