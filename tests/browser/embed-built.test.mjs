// The embedded walkthrough without WebAssembly reads from the build's steps
// (web/dist/walkthroughs/, written by the native engine), as the page does:
// its steps and numbers, and its controls that need the engine held with a
// message saying why.
//
// Expected numbers come from the WebAssembly engine (web/lib/attention.js)
// loaded in Node, run on the example's input here in the test.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadAttention } from '../../web/lib/attention-node.js';
import { problemFromPreset } from '../../web/widgets/walkthrough-problem.js';
import { engineInput } from '../../web/widgets/walkthrough-steps.js';
import { WEB_ROOT, startSession } from './harness.mjs';

let engine;
let presets;
let session;

before(async () => {
  engine = await loadAttention();
  presets = JSON.parse(await readFile(join(WEB_ROOT, 'presets.json'), 'utf8'));
  session = await startSession();
});

after(async () => {
  await session?.close();
});

test('the embedded walkthrough with WebAssembly off shows the engine\u2019s step and numbers, its controls saying why', async () => {
  const page = await session.newPage();
  await page.addInitScript(() => { delete globalThis.WebAssembly; });
  await page.goto(session.url('embed.html?widget=walkthrough&preset=cat-sat-mat&step=2'));
  await page.waitForSelector('html[data-ready="unable"]');
  const input = engineInput(problemFromPreset(presets.presets.find((preset) => preset.id === 'cat-sat-mat')));
  const { steps } = engine.walkthrough(input, { equations: false });
  assert.equal(await page.locator('#embed .aw-step-title').textContent(), `2. ${steps.steps[1].title}`);
  // Step 2, s[cat, cat] = q_cat · k_cat: its figure's total.
  const [equation] = engine.stepEquations(input, 2);
  await page.waitForFunction(([selector, text]) => document.querySelector(selector)?.textContent === text,
    ['#embed .aw-view-figure .aw-fig .aw-fig-total .aw-fig-result', `= ${equation.chain.at(-1).v.toFixed(3)}`]);
  assert.match(await page.locator('#embed > .aw-message').first().textContent(), /WebAssembly is turned off/);
  const notes = await page.locator('#embed .aw-needs-engine').allTextContents();
  assert.equal(notes.length, 3);
  for (const note of notes) assert.match(note, /needs the engine.*WebAssembly is turned off/);
  await page.close();
  session.assertQuiet();
});

test('the custom element with WebAssembly off reads step by step from the build\u2019s steps, its controls saying why', async () => {
  const page = await session.newPage();
  await page.addInitScript(() => { delete globalThis.WebAssembly; });
  await page.route(session.url('host.html'), (route) => route.fulfill({
    contentType: 'text/html',
    body: '<!doctype html><title>A course page</title><script src="dist/attention-walkthrough.js"></script>\n'
      + '<attention-walkthrough preset="cat-sat-mat" step="2"></attention-walkthrough>',
  }));
  await page.goto(session.url('host.html'));
  const element = page.locator('attention-walkthrough');
  await page.waitForSelector('attention-walkthrough[data-ready="unable"]');
  const input = engineInput(problemFromPreset(presets.presets.find((preset) => preset.id === 'cat-sat-mat')));
  const { steps } = engine.walkthrough(input, { equations: false });
  assert.equal(await element.locator('.aw-step-title').textContent(), `2. ${steps.steps[1].title}`);
  const total = element.locator('.aw-view-figure .aw-fig .aw-fig-total .aw-fig-result');
  const [equation] = engine.stepEquations(input, 2);
  await total.filter({ hasText: `= ${equation.chain.at(-1).v.toFixed(3)}` }).waitFor();
  // Step by step, as a person does: the next step is the engine's too, its figure drawn.
  await element.locator('.aw-forward').click();
  assert.equal(await element.locator('.aw-step-title').textContent(), `3. ${steps.steps[2].title}`);
  const repeats = await element.locator('.aw-fig-repeat .aw-fig-what').allTextContents();
  assert.deepEqual(repeats, engine.stepEquations(input, 3).filter((e) => e.repeat).map((e) => e.repeat));
  assert.match(await element.locator('.aw-shell > .aw-message').first().textContent(), /WebAssembly is turned off/);
  const notes = await element.locator('.aw-needs-engine').allTextContents();
  assert.equal(notes.length, 3);
  for (const note of notes) assert.match(note, /needs the engine.*WebAssembly is turned off/);
  // Held: the editor's cells take no input.
  assert.equal(await element.locator('.aw-edit input').first().evaluate((input) => input.closest('[inert]') !== null), true);
  await page.close();
  session.assertQuiet();
});
