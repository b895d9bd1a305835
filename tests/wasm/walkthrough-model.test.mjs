// The walkthrough's model (web/widgets/walkthrough-steps.js) on the
// engine's step outline, each step's equations asked for when needed: on
// every walkthrough preset, at the editor's largest size and with the
// backward pass, each step's equations are the whole list's, and the
// equation the page names as a cell's producer (hover, focus, the sources
// it outlines) is the one the whole list says computes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isMultiHeadPreset } from '../../web/presets.js';
import { buildModel, buildSteps, engineInput } from '../../web/widgets/walkthrough-steps.js';
import { MAX_TOKENS, MAX_WIDTH, dimsOf, problemFromPreset, resized } from '../../web/widgets/walkthrough-problem.js';
import { loadEngine, repoRoot } from './support.mjs';

/** "name,i,j" -> the last equation of the whole step list whose result is that
 * cell, as the page named it before the outline. */
function producersInFullList(engine, problem, model) {
  const producers = new Map();
  const results = (node) => (node.ref ? [node.ref] : node.op === 'vec' ? node.args.filter((arg) => arg.ref).map((arg) => arg.ref) : []);
  for (const step of engine.walkthrough(engineInput(problem)).steps.steps) {
    for (const equation of step.equations ?? []) {
      for (const ref of results(equation.chain.at(-1))) producers.set(model.refOf(ref).join(','), equation);
    }
  }
  return producers;
}

async function walkthroughProblems() {
  const presets = JSON.parse(await readFile(join(repoRoot, 'web/presets.json'), 'utf8')).presets
    .filter((preset) => preset.mode && !isMultiHeadPreset(preset));
  const problems = presets.map((preset) => [preset.id, problemFromPreset(preset)]);
  const qkv = problems.find(([, problem]) => problem.mode === 'qkv' && problem.self)[1];
  const largest = resized(qkv, { ...dimsOf(qkv), T: MAX_TOKENS, dk: MAX_WIDTH, dv: MAX_WIDTH });
  problems.push(['the editor\u2019s largest', largest], ['with the backward pass', { ...qkv, backward: true }]);
  return problems;
}

test('each step\u2019s equations and each cell\u2019s producer are the whole step list\u2019s, on every walkthrough problem', async () => {
  const engine = await loadEngine();
  let cells = 0;
  for (const [name, problem] of await walkthroughProblems()) {
    const model = buildModel(engine, problem);
    const full = engine.walkthrough(engineInput(problem)).steps.steps;
    buildSteps(model).forEach((step, index) => assert.deepEqual(step.equations, full[index].equations ?? [], `${name}: step ${index + 1}`));
    const producers = producersInFullList(engine, problem, model);
    // As on the page: a cell on screen first, then what it was computed
    // from (a row's max, sum and exponentials, which no figure shows).
    const shown = [...producers.keys()].filter((key) => model.mats[key.split(',')[0]]);
    for (const key of [...shown, ...producers.keys()]) {
      assert.deepEqual(model.producerOf(key), producers.get(key), `${name}: the producer of ${key}`);
      cells += 1;
    }
  }
  assert.ok(cells > 1000, `only ${cells} cells compared`);
});
