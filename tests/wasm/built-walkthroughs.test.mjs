// The build's walkthroughs (scripts/build-walkthroughs.mjs, what the page
// shows before its WebAssembly engine arrives, and without one) answer each
// call the walkthrough makes exactly as the WebAssembly engine does, for
// every example: the results, the step list, each step's equations and the
// check of the tutorial's printed numbers; and refuse what needs the engine.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { builtWalkthrough } from '../../scripts/build-walkthroughs.mjs';
import { NeedsEngine, createBuiltEngine } from '../../web/widgets/walkthrough-built.js';
import { problemFromPreset, walkthroughPresets } from '../../web/widgets/walkthrough-problem.js';
import { engineInput } from '../../web/widgets/walkthrough-steps.js';
import { haveNativeCli, loadEngine, nativeCli, repoRoot } from './support.mjs';

const skip = !haveNativeCli() && `${nativeCli} missing`;
const WHY = 'the engine is not here';

async function examples() {
  return walkthroughPresets(JSON.parse(await readFile(join(repoRoot, 'web/presets.json'), 'utf8')));
}

test('every example built by the native engine reads as the WebAssembly engine writes it', { skip }, async () => {
  const engine = await loadEngine();
  const list = await examples();
  const built = createBuiltEngine(list.map(builtWalkthrough), WHY);
  let unchecked = 0;
  for (const preset of list) {
    const input = engineInput(problemFromPreset(preset));
    const expected = engine.walkthrough(input, { equations: false });
    const answer = built.walkthrough(input, { equations: false });
    assert.deepEqual(answer, expected, `${preset.id}: results and step list`);
    expected.steps.steps.forEach((step, index) => {
      assert.deepEqual(built.stepEquations(input, index + 1), engine.stepEquations(input, index + 1),
        `${preset.id}: the equations of step ${index + 1}`);
    });
    if (!preset.printed) continue;
    const options = { decimals: preset.printedDecimals };
    const report = engine.check(input, preset.printed, options);
    assert.deepEqual(built.check(input, preset.printed, options), report, `${preset.id}: the check of the tutorial's numbers`);
    if (report.checked === 0) unchecked += 1;
  }
  // it-animal's printed row is an illustration, checked by nobody: its report says so, as the engine's does.
  assert.ok(unchecked > 0, 'an example whose printed numbers name no result');
});

test('the build refuses what needs the engine, saying why, until the engine arrives', { skip }, async () => {
  const [preset] = await examples();
  const built = createBuiltEngine([builtWalkthrough(preset)], WHY);
  const input = engineInput(problemFromPreset(preset));
  const edited = { ...input, q: input.q.map((row) => row.map((x) => x + 1)) };
  assert.throws(() => built.walkthrough(edited, { equations: false }), (error) => error instanceof NeedsEngine
    && error.message === WHY);
  assert.throws(() => built.format(input, 'markdown'), NeedsEngine);
  assert.throws(() => built.check(input, { weights: [[1, 0, 0]] }), NeedsEngine);
  const engine = await loadEngine();
  built.arrive(engine);
  assert.deepEqual(built.walkthrough(edited, { equations: false }), engine.walkthrough(edited, { equations: false }));
  assert.equal(built.format(input, 'markdown'), engine.format(input, 'markdown'));
});
