// End-to-end test of the multi-head shapes presets (tutorial 004's 4 tokens,
// d_model 512, 8 heads; tutorial 001's 128 / 4) in headless Chromium:
// ?preset=shapes-512-8 opens them in the multi-head section with every
// head's weights as the engine computes them, the shapes written out, and a
// walkthrough that does not claim the preset is unknown.
//
// Expected numbers come from the engine (web/lib/attention.js) run here in
// Node on the preset's generated input (web/presets.js).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { heatmapValues, parseShown, startSession, WEB_ROOT } from './harness.mjs';
import { loadAttention } from '../../web/lib/attention-node.js';
import { presetInput } from '../../web/presets.js';

const ROOT = '[data-section="multihead"]';

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

const presetById = (id) => presets.presets.find((preset) => preset.id === id);

async function openPreset(id) {
  const page = await session.open(`index.html?preset=${id}`);
  await page.waitForSelector('html[data-ready="true"]');
  await page.waitForSelector('#multihead-widget[data-mounted="true"]');
  return page;
}

/** Every head heatmap's values, head by head. */
async function headWeights(page) {
  const count = (await page.$$(`${ROOT} .aw-mh-head`)).length;
  return Promise.all(Array.from({ length: count }, (_, h) => heatmapValues(page, `${ROOT} .aw-mh-head[data-head="${h}"]`)));
}

function assertThreeDecimals(actual, expected, message) {
  const a = actual.flat(Infinity);
  const e = expected.flat(Infinity);
  assert.equal(a.length, e.length, `${message}: ${a.length} values shown, ${e.length} expected`);
  a.forEach((value, i) => assert.ok(Math.abs(value - e[i]) < 0.5e-3 + 1e-12, `${message}[${i}]: shown ${value}, engine ${e[i]}`));
}

test('?preset=shapes-512-8 opens the multi-head section with the engine\u2019s 8 head weights and the shapes 4 \u00d7 512 and 4 \u00d7 64', async () => {
  session.clear();
  const preset = presetById('shapes-512-8');
  const result = engine.multiHead(presetInput(preset));
  const page = await openPreset(preset.id);

  assert.equal(await page.inputValue(`${ROOT} [data-control="preset"] select`), preset.id);
  assert.equal(await page.isVisible(`${ROOT} [data-control="numHeads"]`), false, 'the preset fixes the number of heads');
  assert.deepEqual(await page.evaluate(() => window.awWidgets.multihead.getState()),
      { numHeads: 2, seed: 5, step: 0, preset: preset.id });
  assert.match(page.url(), /preset=shapes-512-8/, 'the address keeps naming the preset');
  const { top, scrolled } = await page.$eval('#multihead', (section) => ({ top: section.getBoundingClientRect().top, scrolled: window.scrollY }));
  assert.ok(scrolled > 0 && top >= 0 && top < 200, `the section is scrolled into view (top at ${top})`);

  const text = await page.textContent(ROOT);
  assert.ok(text.includes('4 \u00d7 512'), 'shows 4 \u00d7 512');
  assert.ok(text.includes('4\u00d764') || text.includes('4 \u00d7 64'), 'shows 4 \u00d7 64');
  assert.ok(text.includes('\u2026 508 more columns'), 'wide matrices say how many columns are left out');

  // Q is cut to its first columns, each the engine's number.
  const q = await page.$$eval(`${ROOT} figure[data-matrix="Q"] tbody tr`, (rows) => rows.map((row) => [...row.querySelectorAll('td')]
    .map((cell) => (cell.querySelector('[data-value]') ?? cell).dataset.value)));
  assert.deepEqual(q.map((row) => row.map(parseShown)), result.q.map((row) => row.slice(0, 4)));

  // Step 3: every head attends; 8 heatmaps of 4 × 4 weights.
  for (let i = 0; i < 2; i++) await page.click(`${ROOT} button[aria-label="Step forward"]`);
  assert.match(await page.textContent(`${ROOT} .aw-mh-step`), /^3\. Every head attends/);
  assert.equal(await page.$$eval(`${ROOT} .aw-mh-head .aw-heatmap`, (maps) => maps.filter((map) => map.checkVisibility()).length), 8);
  const weights = await headWeights(page);
  assert.equal(weights.length, 8);
  weights.forEach((shown, h) => assertThreeDecimals(shown, result.heads[h].weights, `head ${h + 1} weights`));

  const message = await page.textContent('#walkthrough .aw-message');
  assert.doesNotMatch(message, /no example called/);
  assert.ok(message.includes('\u201cshapes-512-8\u201d has 8 heads, more than a step-by-step walk can show: it is shown in the Multi-head attention section below.'), message);

  await page.close();
  session.assertQuiet();
});

test('the example select switches between the shapes presets and the small example', async () => {
  session.clear();
  const preset = presetById('shapes-128-4');
  const result = engine.multiHead(presetInput(preset));
  const page = await openPreset('shapes-512-8');
  await page.selectOption(`${ROOT} [data-control="preset"] select`, preset.id);
  assert.equal((await page.$$(`${ROOT} .aw-mh-head`)).length, 4);
  assertThreeDecimals((await headWeights(page)), result.heads.map((head) => head.weights), 'shapes-128-4 weights');
  assert.ok((await page.textContent(ROOT)).includes('4\u00d732'), 'shows the heads of 4 \u00d7 32');
  assert.match(page.url(), /preset=shapes-128-4/);

  await page.selectOption(`${ROOT} [data-control="preset"] select`, '');
  assert.deepEqual(await page.evaluate(() => window.awWidgets.multihead.getState()), { numHeads: 2, seed: 5, step: 0 });
  assert.equal((await page.$$(`${ROOT} .aw-mh-head`)).length, 2);
  assert.equal(await page.isVisible(`${ROOT} [data-control="numHeads"]`), true);
  await page.close();
  session.assertQuiet();
});
