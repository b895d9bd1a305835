// "Watch attention learn" on the page, driven as a learner would: Train
// runs the engine's trainer in a Web Worker until the held-out example is
// predicted reversed, a head shows the anti-diagonal, a typed sequence of
// one's own comes back reversed; Step one batch takes exactly one step;
// the comparison without scaling draws a second curve; bad tokens get a
// message beside the field. What is right is computed here: the reverse
// of the tokens the page shows.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { heatmapValues, startSession } from './harness.mjs';

const ROOT = '#trainer [data-section="trainer"]';
let session;

before(async () => {
  session = await startSession();
});

after(async () => {
  await session?.close();
});

async function openTrainer() {
  const page = await session.openReady('index.html#trainer');
  await page.waitForSelector('#trainer-widget[data-mounted="true"]');
  await page.waitForFunction((root) => /Step 0 /.test(document.querySelector(`${root} .aw-trainer-status`)?.textContent ?? ''), ROOT);
  return page;
}

const statusText = (page) => page.textContent(`${ROOT} .aw-trainer-status`);

/** The table's rows by their heading: Position, Input, Target, Model. */
async function predictionTable(page) {
  return page.$$eval(`${ROOT} .aw-trainer-table tr`, (rows) => Object.fromEntries(rows.map((row) => [
    row.querySelector('th').textContent, [...row.querySelectorAll('td')].map((cell) => cell.textContent),
  ])));
}

test('Train runs in a worker until the held-out example comes back reversed and a head attends along the anti-diagonal', async () => {
  const page = await openTrainer();
  assert.equal(await page.inputValue(`${ROOT} [data-control="task"] select`), 'reverse');
  await page.click(`${ROOT} .aw-train`);
  assert.equal(await page.textContent(`${ROOT} .aw-train`), 'Pause');
  await page.waitForFunction((root) => /held-out accuracy (99\.\d|100\.0)%/.test(document.querySelector(`${root} .aw-trainer-status`).textContent), ROOT);
  assert.equal(await page.getAttribute(ROOT, 'data-runs-in'), 'worker');
  const table = await predictionTable(page);
  assert.deepEqual(table.Model, [...table.Input].reverse(), 'the model reverses the example');
  assert.deepEqual(table.Target, [...table.Input].reverse());
  const n = table.Input.length;
  const count = await page.locator(`${ROOT} .aw-trainer-heads figure.aw-heatmap`).count();
  const heads = [];
  for (let k = 1; k <= count; k++) heads.push(await heatmapValues(page, `${ROOT} .aw-trainer-heads figure.aw-heatmap:nth-of-type(${k})`));
  assert.equal(heads.length, 2, 'one layer of two heads');
  const onMirror = heads.map((weights) => weights.reduce((sum, row, i) => sum + row[n - 1 - i], 0) / n);
  assert.ok(Math.max(...onMirror) > 0.9, `a head puts over 0.9 of each query on the mirrored position on average: ${onMirror}`);

  // A sequence of the learner's own, typed and entered.
  await page.fill(`${ROOT} .aw-trainer-own-input`, '1 2 3 4 5 6 7 8');
  await page.press(`${ROOT} .aw-trainer-own-input`, 'Enter');
  await page.waitForFunction((root) => document.querySelector(`${root} .aw-trainer-example-title`).textContent.startsWith('Your own'), ROOT);
  assert.deepEqual((await predictionTable(page)).Model, ['8', '7', '6', '5', '4', '3', '2', '1']);
  await page.click(`${ROOT} .aw-trainer-own-back`);
  assert.match(await page.textContent(`${ROOT} .aw-trainer-example-title`), /Held-out example 1/);
  await page.close();
  session.assertQuiet();
});

test('Step one batch takes exactly one step each time it is pressed', async () => {
  const page = await openTrainer();
  for (const expected of [1, 2, 3]) {
    await page.click(`${ROOT} .aw-train-step`);
    await page.waitForFunction(([root, step]) => document.querySelector(`${root} .aw-trainer-status`).textContent.startsWith(`Step ${step} `), [ROOT, expected]);
  }
  assert.match(await statusText(page), /^Step 3 \(budget 150\) · batch loss \d/);
  assert.match(await page.getAttribute(`${ROOT} .aw-line-chart svg`, 'aria-label'), /at step 3$/);
  await page.close();
});

test('tokens that are not in the vocabulary get a message beside the field, and the example stays', async () => {
  const page = await openTrainer();
  await page.fill(`${ROOT} .aw-trainer-own-input`, '1 2 x');
  await page.click(`${ROOT} .aw-trainer-own-run`);
  assert.equal(await page.textContent(`${ROOT} .aw-trainer-own [role="alert"]`), '\u201cx\u201d is not a token: tokens are whole numbers from 0 to 9.');
  assert.equal(await page.getAttribute(`${ROOT} .aw-trainer-own-input`, 'aria-invalid'), 'true');
  await page.fill(`${ROOT} .aw-trainer-own-input`, '1 2 3 4 5 6 7 8 9');
  await page.click(`${ROOT} .aw-trainer-own-run`);
  assert.equal(await page.textContent(`${ROOT} .aw-trainer-own [role="alert"]`), 'Type 1 to 8 tokens, separated by spaces.');
  assert.match(await page.textContent(`${ROOT} .aw-trainer-example-title`), /Held-out example 1/);
  await page.close();
});

test('training without scaling side by side draws a second, dashed curve from its own run', async () => {
  const page = await openTrainer();
  await page.click(`${ROOT} .aw-trainer-settings summary`);
  await page.check(`${ROOT} [data-control="compare"] input`);
  await page.click(`${ROOT} .aw-train-step`);
  await page.waitForFunction((root) => document.querySelectorAll(`${root} .aw-line-chart:first-child .aw-chart-key`).length === 2
    && [...document.querySelectorAll(`${root} .aw-line-chart:first-child .aw-chart-key`)].every((key) => / at step 1$/.test(key.textContent)), ROOT);
  const keys = await page.$$eval(`${ROOT} .aw-line-chart:first-child .aw-chart-key`, (items) => items.map((item) => [item.textContent, item.dataset.dashed]));
  assert.match(keys[0][0], /^scaled by 1\/√d_head: /);
  assert.match(keys[1][0], /^unscaled: /);
  assert.deepEqual(keys.map(([, dashed]) => dashed), ['false', 'true']);
  await page.close();
});

test('a head opens in the walkthrough: its queries, keys and values on the example, whose weights are the head\u2019s, then back through the backward pass', async () => {
  const page = await openTrainer();
  for (let k = 1; k <= 3; k++) {
    await page.click(`${ROOT} .aw-train-step`);
    await page.waitForFunction(([root, step]) => document.querySelector(`${root} .aw-trainer-status`).textContent.startsWith(`Step ${step} `), [ROOT, k]);
  }
  const headWeights = await heatmapValues(page, `${ROOT} .aw-trainer-heads figure.aw-heatmap:nth-of-type(2)`);
  const { Input: tokens } = await predictionTable(page);
  await page.click(`${ROOT} .aw-trainer-open-head >> nth=1`);
  await page.waitForFunction(() => /[?&]backward=1/.test(window.location.search) && /[?&]v=/.test(window.location.search));
  // The walkthrough now holds that head: its rows are the example's tokens,
  // and the weights it computes are the ones the trainer drew.
  const shown = await page.evaluate(() => window.awWidgets.walkthrough.getState());
  assert.equal(shown.backward, true);
  assert.deepEqual(shown.values.tokens, tokens.map((token, i) => `${i + 1}:${token}`));
  assert.equal(shown.values.fields.q.length, tokens.length);
  assert.equal(shown.values.fields.q[0].length, 16, 'd_model 32 / 2 heads');
  await page.locator('#walkthrough .aw-stage-button', { hasText: 'Weights \u00b7 V' }).click();
  const weights = await heatmapValues(page, '#walkthrough figure.aw-heatmap:has(figcaption:text-is("Attention weights"))');
  weights.forEach((row, i) => row.forEach((w, j) => assert.ok(Math.abs(w - headWeights[i][j]) < 1e-12, `weight [${i}][${j}]`)));
  assert.equal(await page.locator('#walkthrough .aw-stage-button', { hasText: 'dQ' }).count(), 1, 'the stages go on into the backward pass');
  await page.close();
});

test('the address keeps the trainer\u2019s task and settings, and opening it again restores them', async () => {
  const page = await openTrainer();
  await page.selectOption(`${ROOT} [data-control="task"] select`, 'previousToken');
  await page.click(`${ROOT} .aw-trainer-settings summary`);
  await page.selectOption(`${ROOT} [data-control="heads"] select`, '4');
  await page.waitForFunction(() => /[?&]trainer=/.test(window.location.search));
  const trainer = JSON.parse(new URL(page.url()).searchParams.get('trainer'));
  assert.equal(trainer.task, 'previousToken');
  assert.equal(trainer.heads, 4);
  const again = await session.openReady(`index.html${new URL(page.url()).search}#trainer`);
  await again.waitForSelector('#trainer-widget[data-mounted="true"]');
  assert.equal(await again.inputValue(`${ROOT} [data-control="task"] select`), 'previousToken');
  await again.waitForFunction((root) => document.querySelectorAll(`${root} .aw-trainer-heads figure.aw-heatmap`).length === 4, ROOT);
  assert.match(await again.textContent(`${ROOT} .aw-trainer-task`), /token just before it/);
  await again.close();
  await page.close();
});
