// Your turn's xAPI statements where a course counts them: the custom
// element's bubbling attention-xapi events and the iframe's messages to its
// parent, after a learner answers with real key presses in tutorial 000's
// three tokens (Q = K, d_k = 2). Expected numbers are computed here.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSession } from './harness.mjs';

const scores = [1, 0, 1]; // q0 · k_j for Q = K = [[1, 0], [0, 1], [1, 1]]
const softmax = (row) => {
  const e = row.map((x) => Math.exp(x));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
};
const unscaled = softmax(scores)[0];
const ANSWERED = 'http://adlnet.gov/expapi/verbs/answered';
const COMPLETED = 'http://adlnet.gov/expapi/verbs/completed';

let session;
before(async () => { session = await startSession(); });
after(async () => { await session?.close(); });

async function host(body) {
  const page = await session.newPage();
  await page.route(session.url('host.html'), (route) => route.fulfill({
    contentType: 'text/html',
    body: `<!doctype html><title>host</title><script>window.statements = [];</script>${body}`,
  }));
  await page.goto(session.url('host.html'));
  return page;
}

async function type(page, input, text) {
  await input.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

test('the element dispatches an answered statement per exercise and a completed one with the duration', async () => {
  const page = await host(`<script src="${session.url('dist/attention-walkthrough.js')}"></script>
    <attention-walkthrough base="${session.url('dist/')}" preset="three-tokens" exercises="scores:0:0,weights:0:0">
    </attention-walkthrough>
    <script>document.addEventListener('attention-xapi', (event) => window.statements.push(event.detail));</script>`);
  await page.waitForSelector('attention-walkthrough[data-ready="true"]');
  const forward = page.locator('attention-walkthrough .aw-forward');
  const score = page.locator('attention-walkthrough input[data-exercise][data-matrix="scores"]');
  while (!(await score.isVisible())) await forward.click();
  await type(page, score, '1');
  const weight = page.locator('attention-walkthrough input[data-exercise][data-matrix="weights"]');
  while (!(await weight.isVisible())) await forward.click();
  await type(page, weight, unscaled.toFixed(2));
  await type(page, weight, unscaled.toFixed(2));
  await page.waitForFunction(() => window.statements.length === 3);
  const [right, wrong, completed] = await page.evaluate(() => window.statements);
  assert.equal(right.verb.id, ANSWERED);
  assert.equal(right.object.id, 'urn:attention-explainer:walkthrough:three-tokens:exercise:scores:0:0');
  assert.deepEqual(right.result.score, { raw: 1, min: 0, max: 1, scaled: 1 });
  assert.equal(right.result.success, true);
  assert.equal(right.result.response, '1');
  assert.deepEqual(wrong.result.extensions['urn:attention-explainer:xapi:cell'], { matrix: 'weights', row: 0, col: 0 });
  assert.equal(wrong.result.extensions['urn:attention-explainer:xapi:slip'], 'no-scale');
  assert.equal(wrong.result.success, false);
  assert.equal(wrong.result.score.raw, 0);
  assert.equal(completed.verb.id, COMPLETED);
  assert.equal(completed.object.id, 'urn:attention-explainer:walkthrough:three-tokens');
  assert.deepEqual(completed.result.score, { raw: 1, min: 0, max: 2, scaled: 0.5 });
  assert.match(completed.result.duration, /^PT(\d+H)?(\d+M)?\d+(\.\d+)?S$/);
  assert.ok(!('actor' in right), 'the host adds the actor');
  await page.close();
});

test('the iframe posts its statements to the parent origin it was given', async () => {
  const origin = new URL(session.url('')).origin;
  const page = await host(`<script>window.addEventListener('message', (event) => {
      if (event.data?.source === 'attention-explainer' && event.data.type === 'xapi') window.statements.push(event.data.statement);
    });</script>
    <iframe style="width: 900px; height: 1200px" src="${session.url('embed.html')}?preset=three-tokens&exercises=scores:0:0&parentOrigin=${encodeURIComponent(origin)}"></iframe>`);
  const frame = page.frameLocator('iframe');
  await frame.locator('.aw-walkthrough').waitFor();
  const score = frame.locator('input[data-exercise][data-matrix="scores"]');
  while (!(await score.isVisible())) await frame.locator('.aw-forward').click();
  await score.click();
  await page.keyboard.type('0.5');
  await page.keyboard.press('Enter');
  await frame.locator('.aw-exercise-hint:not([hidden])').waitFor();
  await frame.locator('.aw-exercise-show').click();
  await page.waitForFunction(() => window.statements.length === 2);
  const [shown, completed] = await page.evaluate(() => window.statements);
  assert.equal(shown.result.success, false);
  assert.equal(shown.result.response, '0.5');
  assert.equal(completed.result.score.raw, 0);
  await page.close();
});
