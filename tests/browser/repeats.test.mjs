// The point sooner: the first dot product is shown in full, the other eight
// together in one step whose lines fill in at once, each opening onto its
// own products; Play at 1× reaches the first softmax within 15 s. How long
// Play stands on a step is what the player says it will (its bar's
// data-standing-ms, from the figure's movement), read step by step as a
// learner steps forward: no clock is read here.
//
// Expected numbers are computed here from the preset's own inputs.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WEB_ROOT, startSession } from './harness.mjs';

let input;

before(async () => {
  const presets = JSON.parse(await readFile(join(WEB_ROOT, 'presets.json'), 'utf8'));
  input = presets.presets.find((preset) => preset.id === presets.default).input;
});

const dot = (a, b) => a.reduce((sum, x, t) => sum + x * b[t], 0);
const W = '#walkthrough';

test('Play at 1× reaches the first softmax within 15 s of the first screen, by the time the player stands on each step', async () => {
  const session = await startSession({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await session.openReady('index.html');
    const standing = [];
    for (let step = 0; ; step++) {
      const title = await page.locator(`${W} .aw-step-title`).textContent();
      if (/softmax/i.test(title)) break;
      const bar = page.locator(`${W} .aw-player[data-standing-step="${step}"]`);
      await bar.waitFor({ state: 'attached' });
      standing.push({ title, ms: Number(await bar.getAttribute('data-standing-ms')) });
      await page.locator(`${W} .aw-forward`).click();
      await page.waitForFunction((n) => document.querySelector('#walkthrough .aw-counter').textContent.startsWith(`${n} /`),
        step + 2);
    }
    // The inputs, the first score in full, the other eight together, the scaling.
    assert.deepEqual(standing.map(({ title }) => title.replace(/^\d+\. /, '')),
      ['Queries, keys and values', 'Score of cat against cat', 'The other eight dot products', 'Divide by \u221ad_k = \u221a4']);
    for (const { title, ms } of standing) assert.ok(ms > 0, `${title}: stands ${ms} ms`);
    const total = standing.reduce((sum, { ms }) => sum + ms, 0);
    assert.ok(total <= 15000, `Play reaches the first softmax after ${total} ms: ${JSON.stringify(standing)}`);
    session.assertQuiet();
  } finally {
    await session.close();
  }
});

test('the other eight dot products fill in together, and opening one shows its own products and score', async () => {
  const session = await startSession({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await session.openReady('index.html?preset=cat-sat-mat&step=3');
    const figure = page.locator(`${W} .aw-fig[data-kind="repeats"]`);
    await figure.waitFor();
    // Every pair but (cat, cat), in order, each with its score.
    const tokens = ['cat', 'sat', 'mat'];
    const pairs = tokens.flatMap((q, i) => tokens.map((k, j) => ({ q, k, i, j }))).slice(1);
    const lines = figure.locator('.aw-fig-repeat > summary');
    assert.deepEqual(await lines.locator('.aw-fig-what').allTextContents(),
      pairs.map(({ q, k }) => `Score of ${q} against ${k}`));
    assert.deepEqual(await lines.locator('.aw-fig-result').allTextContents(),
      pairs.map(({ i, j }) => `= ${dot(input.q[i], input.k[j]).toFixed(3)}`));
    // Opened: the products of q[sat] and k[mat], then their sum.
    const repeat = figure.locator('.aw-fig-repeat').filter({ hasText: 'Score of sat against mat' });
    await repeat.locator('summary').click();
    const body = repeat.locator('.aw-fig-repeat-body .aw-fig-dot');
    await body.waitFor();
    assert.deepEqual(await body.locator('.aw-fig-term').evaluateAll((terms) => terms.map((t) => t.textContent.split('= ')[1])),
      input.q[1].map((x, t) => (x * input.k[2][t]).toFixed(3)));
    assert.equal(await body.locator('.aw-fig-total .aw-fig-result').textContent(), `= ${dot(input.q[1], input.k[2]).toFixed(3)}`);
    assert.deepEqual(await body.locator('.aw-fig-row:not(.aw-fig-total) .aw-fig-what').allTextContents(),
      input.q[1].map((_, t) => `q[sat, ${t + 1}] \u00d7 k[mat, ${t + 1}]`));
    session.assertQuiet();
  } finally {
    await session.close();
  }
});
