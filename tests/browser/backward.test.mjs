// The walkthrough's "Backward pass" checkbox: a real click adds the
// backward steps (dO, dV, dP, dS, dQ, dK), puts backward=1 in the address,
// and the dQ on screen is the gradient computed here by hand.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WEB_ROOT, startSession } from './harness.mjs';

let session;
let preset;

before(async () => {
  const presets = JSON.parse(await readFile(join(WEB_ROOT, 'presets.json'), 'utf8'));
  preset = presets.presets.find((p) => p.id === 'cat-sat-mat');
  session = await startSession();
});

after(async () => {
  await session?.close();
});

const matmul = (a, b) => a.map((row) => b[0].map((_, c) => row.reduce((s, x, t) => s + x * b[t][c], 0)));
const transpose = (a) => a[0].map((_, c) => a.map((row) => row[c]));

/** dQ for L = ½‖softmax(QKᵀ/√d_k) V − V‖², by hand. */
function gradQByHand({ q, k, v }) {
  const c = 1 / Math.sqrt(q[0].length);
  const p = matmul(q, transpose(k)).map((row) => {
    const e = row.map((x) => Math.exp(x * c - Math.max(...row) * c));
    const sum = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / sum);
  });
  const dO = matmul(p, v).map((row, i) => row.map((x, j) => x - v[i][j]));
  const dP = matmul(dO, transpose(v));
  const dS = dP.map((row, i) => {
    const average = row.reduce((s, x, j) => s + x * p[i][j], 0);
    return row.map((x, j) => p[i][j] * (x - average));
  });
  return matmul(dS, k).map((row) => row.map((x) => x * c));
}

test('the Backward pass checkbox adds the backward steps, and dQ on screen is the gradient computed by hand', async () => {
  const page = await session.openReady(`index.html?preset=${preset.id}`);
  await page.click('#walkthrough .aw-backward input');
  await page.waitForFunction(() => window.location.search.includes('backward=1'));
  for (let i = 0; i < 80; i++) {
    const title = await page.textContent('#walkthrough .aw-step-title');
    if (title.includes('dQ of the other')) break;
    await page.click('#walkthrough .aw-forward');
  }
  // dQ's first row had a step of its own; this one computes the other
  // rows, each a repeat: dQ is whole once the step's figure has landed.
  assert.match(await page.textContent('#walkthrough .aw-step-title'), /dQ of the other two rows/);
  const repeats = await page.$$eval('#walkthrough .aw-fig-repeat-line .aw-fig-what', (names) => names.map((n) => n.textContent));
  assert.deepEqual(repeats, ['dQ of sat', 'dQ of mat']);
  await page.waitForSelector('#walkthrough .aw-fig:not([data-moving])', { state: 'attached' });
  const shown = await page.$$eval('#walkthrough [data-matrix="gradQ"] tbody tr', (rows) => rows.map((tr) => [...tr.querySelectorAll('.aw-num')].map((n) => Number(n.dataset.value.replace(/\u2212/g, '-')))));
  const expected = gradQByHand(preset.input);
  assert.equal(shown.length, expected.length);
  shown.forEach((row, i) => row.forEach((x, j) => assert.ok(Math.abs(x - expected[i][j]) < 1e-12, `dQ[${i}][${j}]: ${x}, by hand ${expected[i][j]}`)));
  const again = await session.openReady(new URL(page.url()).pathname.slice(1) + new URL(page.url()).search);
  assert.equal(await again.isChecked('#walkthrough .aw-backward input'), true);
  assert.match(await again.textContent('#walkthrough .aw-step-title'), /dQ/);
  session.assertQuiet();
  await again.close();
  await page.close();
});
