// "Why scale, measured" in the √d_k section, in headless Chromium: the
// chart's points are the engine's gradients reaching the softmax's input,
// checked here against a small reference implementation of softmax
// backward in plain JS; the unscaled gradient collapses as d_k grows while
// the scaled one stays level; the slider and "New random Q, K" update the
// chart, and each point tells its exact value on hover and on focus.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parseShown, startSession } from './harness.mjs';
import { formatScientific } from '../../web/ui/format.js';
import { GRADIENT_DKS, gradientInputsFor } from '../../web/widgets/scaling-gradients.js';

const ROOT = '[data-section="scaling"]';
const point = (series, dk) => `${ROOT} .aw-grad-point[data-series="${series}"][data-dk="${dk}"]`;

let session;

before(async () => {
  session = await startSession();
});

after(async () => {
  await session?.close();
});

// The reference: P = softmax(scale · q kᵀ), dP = dO vᵀ,
// dS = P ∘ (dP − rowsum(dP ∘ P)); each query's ‖dS‖, and their median.
const dot = (a, b) => a.reduce((sum, x, i) => sum + x * b[i], 0);
function referenceNorm({ q, k, v, gradOutput }, scale) {
  const norms = q.map((query, i) => {
    const scaled = k.map((key) => dot(query, key) * scale);
    const top = Math.max(...scaled);
    const exps = scaled.map((s) => Math.exp(s - top));
    const total = exps.reduce((a, b) => a + b, 0);
    const p = exps.map((e) => e / total);
    const dp = v.map((value) => dot(gradOutput[i], value));
    const mean = dot(dp, p);
    return Math.sqrt(p.reduce((sum, pj, j) => sum + (pj * (dp[j] - mean)) ** 2, 0));
  }).sort((a, b) => a - b);
  return norms[(norms.length - 1) / 2];
}

const reference = (seed) => ({
  scaled: GRADIENT_DKS.map((dk) => referenceNorm(gradientInputsFor(dk, seed), 1 / Math.sqrt(dk))),
  unscaled: GRADIENT_DKS.map((dk) => referenceNorm(gradientInputsFor(dk, seed), 1)),
});

async function shownNorms(page) {
  const read = (series) => Promise.all(GRADIENT_DKS.map(async (dk) => parseShown(await page.getAttribute(point(series, dk), 'data-value'))));
  return { scaled: await read('scaled'), unscaled: await read('unscaled') };
}

function assertNear(shown, expected, message) {
  shown.forEach((value, i) => {
    assert.ok(Math.abs(value - expected[i]) <= 1e-9 * expected[i], `${message}, d_k = ${GRADIENT_DKS[i]}: shown ${value}, reference ${expected[i]}`);
  });
}

async function openScaling() {
  const page = await session.openReady('index.html#scaling');
  return session.mountSections(page);
}

test('the chart plots the gradient reaching the softmax with and without 1/\u221ad_k, as a reference softmax backward computes it', async () => {
  session.clear();
  const page = await openScaling();
  const shown = await shownNorms(page);
  const expected = reference(3);
  assertNear(shown.scaled, expected.scaled, 'scaled');
  assertNear(shown.unscaled, expected.unscaled, 'unscaled');
  // The learner's point: unscaled, the gradient vanishes; scaled, it stays level.
  assert.ok(shown.unscaled[10] < 1e-3 * shown.unscaled[0], `unscaled collapses: ${shown.unscaled[0]} at d_k = 1, ${shown.unscaled[10]} at 1024`);
  const spread = Math.max(...shown.scaled) / Math.min(...shown.scaled);
  assert.ok(spread < 2, `scaled stays within a factor 2 of itself: ${shown.scaled}`);
  const claims = await page.textContent(`${ROOT} .aw-grad-claims`);
  for (const name of ['tutorial 000, \u201cAttention Mechanism\u201d', 'tutorial 002, \u201cAttention Mechanism: Theory and Implementation\u201d',
    'tutorial 003, \u201cAttention Mechanisms\u201d']) assert.ok(claims.includes(name), `names ${name}`);
  assert.match(claims, /vanishing gradients/);
  await page.close();
  session.assertQuiet();
});

test('a point shows its exact value on hover and on focus, and arrow keys move between points', async () => {
  session.clear();
  const page = await openScaling();
  const expected = reference(3);
  const detail = `${ROOT} .aw-grad-panel .aw-heatmap-detail`;
  await page.hover(point('unscaled', 512));
  assert.equal(await page.textContent(detail), `\u2016dS\u2016 without scaling, d_k = 512: ${await page.getAttribute(point('unscaled', 512), 'data-value')}`);
  assertNear([parseShown((await page.textContent(detail)).split(': ')[1])], [expected.unscaled[9]], 'hovered');

  await page.focus(point('scaled', 1));
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.dk + document.activeElement.dataset.series), '2unscaled');
  assert.match(await page.textContent(detail), /^‖dS‖ without scaling, d_k = 2: \d/);
  await page.close();
  session.assertQuiet();
});

test('the d_k slider moves the chart\u2019s marker and its readout; new random Q, K redraw the chart', async () => {
  session.clear();
  const page = await openScaling();
  const verdict = `${ROOT} .aw-grad-verdict`;
  await page.focus(`${ROOT} [data-control="dk"] input`);
  await page.keyboard.press('ArrowRight'); // 64 -> 128
  assert.equal(await page.$$eval(`${ROOT} .aw-grad-current`, (marks) => marks.map((m) => m.dataset.dk).join()), '128,128');
  const shown = await page.$$eval(`${verdict} strong`, (values) => values.map((v) => v.textContent));
  const before = reference(3);
  const index = GRADIENT_DKS.indexOf(128);
  assert.deepEqual(shown, [formatScientific(before.scaled[index]), formatScientific(before.unscaled[index])]);

  await page.click(`${ROOT} button:text-is("New random Q, K")`);
  const after = reference(4);
  const redrawn = await shownNorms(page);
  assertNear(redrawn.scaled, after.scaled, 'scaled, seed 4');
  assertNear(redrawn.unscaled, after.unscaled, 'unscaled, seed 4');
  await page.close();
  session.assertQuiet();
});
