// "Your turn" in headless Chromium: a learner switches the exercises on in
// the walkthrough of tutorial 000's three tokens (Q = K, d_k = 2) and types
// answers with real key presses: a right score, weights made with the
// common slips, a second wrong try, Show me; the page says what the engine
// graded. Expected numbers are computed here in plain JavaScript.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSession } from './harness.mjs';

const Q = [[1, 0], [0, 1], [1, 1]];
const V = [[1, 2, 3], [4, 5, 6], [7, 8, 9]];
const scores = Q.map((q) => Q.map((k) => q[0] * k[0] + q[1] * k[1]));
const softmax = (row) => {
  const top = Math.max(...row);
  const e = row.map((x) => Math.exp(x - top));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
};
const weights = softmax(scores[0].map((x) => x / Math.SQRT2));
const unscaled = softmax(scores[0]);
const byDk = softmax(scores[0].map((x) => x / 2));
const output = (w, column) => w.reduce((sum, x, j) => sum + x * column[j], 0);
const output00 = output(weights, V.map((row) => row[0]));
// Vᵀ: the weights meet V's first row where its first column was meant.
const transposed00 = output(weights, V[0]);

let session;
before(async () => { session = await startSession(); });
after(async () => { await session?.close(); });

async function open() {
  const page = await session.open('index.html?preset=three-tokens');
  await page.waitForSelector('html[data-ready="true"]');
  return page;
}

async function yourTurn(page) {
  const toggle = page.locator('#walkthrough .aw-turn-toggle');
  await toggle.scrollIntoViewIfNeeded();
  await toggle.check();
}

// Steps forward until the step that asks for `matrix` is on screen.
async function stepTo(page, matrix) {
  const input = page.locator(`#walkthrough input[data-exercise][data-matrix="${matrix}"]`);
  for (let i = 0; i < 40 && !(await input.isVisible()); i++) await page.click('#walkthrough .aw-forward');
  assert.ok(await input.isVisible(), `a step asks for ${matrix}`);
  return input;
}

async function answer(page, input, typed) {
  await input.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.type(typed);
  await page.keyboard.press('Enter');
}

const verdict = (page) => page.locator('#walkthrough .aw-exercise-verdict');
const hint = (page) => page.locator('#walkthrough .aw-exercise-hint');

test('the walkthrough asks nothing until the learner switches Your turn on', async () => {
  const page = await open();
  assert.equal(await page.locator('#walkthrough .aw-turn-toggle').isChecked(), false);
  const forward = page.locator('#walkthrough .aw-forward');
  while (await forward.isEnabled()) {
    await forward.click();
    assert.equal(await page.locator('#walkthrough .aw-exercise').isVisible(), false);
  }
});

test('a right score is marked, and the figure then shows the step moving', async () => {
  const page = await open();
  await yourTurn(page);
  const input = await stepTo(page, 'scores');
  assert.deepEqual([await input.getAttribute('data-row'), await input.getAttribute('data-col')], ['0', '0']);
  assert.equal(await page.locator('#walkthrough .aw-fig').isVisible(), false, 'the figure waits for the answer');
  await answer(page, input, scores[0][0].toFixed(2));
  await page.locator('#walkthrough .aw-exercise[data-state="right"]').waitFor();
  assert.equal(await verdict(page).textContent(), `Right: the exact value is ${scores[0][0]}.`);
  await page.locator('#walkthrough .aw-fig:not([hidden])').waitFor();
  assert.equal(await input.getAttribute('aria-invalid'), 'false');
});

test('weights made with a slip get the slip named and a hint; the second wrong try shows the value', async () => {
  const page = await open();
  await yourTurn(page);
  const input = await stepTo(page, 'weights');
  await answer(page, input, unscaled[0].toFixed(2));
  await verdict(page).filter({ hasText: 'without dividing' }).waitFor();
  assert.equal(await verdict(page).textContent(), 'This is the weight without dividing the scores by \u221ad_k = 1.4142.');
  assert.equal(await hint(page).textContent(), 'Divide the scores by \u221ad_k = 1.4142 first, then go on from there.');
  assert.equal(await input.getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('#walkthrough .aw-fig').isVisible(), false);
  // The tutorial's errata on this step, which give the exact weights away, wait too.
  assert.equal(await page.locator('#walkthrough .aw-step-errata').isVisible(), false);
  await answer(page, input, byDk[0].toFixed(2));
  await page.locator('#walkthrough .aw-exercise[data-state="shown"]').waitFor();
  assert.equal(await verdict(page).textContent(),
               `This is the weight with the scores divided by d_k = 2 instead of \u221ad_k = 1.4142. It is ${weights[0].toFixed(2)}.`);
  await page.locator('#walkthrough .aw-fig:not([hidden])').waitFor();
});

test('an output with Vᵀ is named as that slip, and Show me shows the value', async () => {
  const page = await open();
  await yourTurn(page);
  const input = await stepTo(page, 'output');
  await answer(page, input, transposed00.toFixed(3));
  await verdict(page).filter({ hasText: 'V\u1d40' }).waitFor();
  assert.equal(await verdict(page).textContent(),
               'This is the output with V\u1d40 instead of V: the weights mixed the columns of V instead of its rows.');
  await page.click('#walkthrough .aw-exercise-show');
  await page.locator('#walkthrough .aw-exercise[data-state="shown"]').waitFor();
  assert.equal(await verdict(page).textContent(), `It is ${output00.toFixed(2)}.`);
  await page.locator('#walkthrough .aw-fig:not([hidden])').waitFor();
});

test('text that is no number asks for one, and counts as no try', async () => {
  const page = await open();
  await yourTurn(page);
  const input = await stepTo(page, 'weights');
  await answer(page, input, 'forty');
  await verdict(page).filter({ hasText: 'Type a number' }).waitFor();
  await answer(page, input, weights[0].toFixed(3));
  await page.locator('#walkthrough .aw-exercise[data-state="right"]').waitFor();
});
