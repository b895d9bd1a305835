// The transformer block section in headless Chromium: its stages come in
// the engine's order for post-norm and pre-norm; the numbers on screen are
// checked against a small reference written here in plain JS (multi-head
// attention, the residual sums, LayerNorm by hand, the ReLU feed-forward
// network); "Show gradients" shows gradients that agree with central
// differences of the engine's forward pass and with closed forms
// (dβ₂ = column sums of dO, dγ₂ = column sums of dO ∘ ln2 when γ₂ = 1,
// β₂ = 0; a key bias gets no gradient).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { parseShown, startSession } from './harness.mjs';
import { loadAttention } from '../../web/lib/attention.js';
import { blockProblem, parametersFor, tokensOf } from '../../web/widgets/block.js';

const ROOT = '[data-section="block"]';
const presets = JSON.parse(await readFile(new URL('../../web/presets.json', import.meta.url), 'utf8'));
const example = tokensOf(presets);
const { parameters: P, gradOutput: dO } = parametersFor(1, example.x.length);

let engine;
let session;

before(async () => {
  engine = await loadAttention();
  session = await startSession();
});

after(async () => {
  await session?.close();
});

// ---- The reference ----
const matmul = (a, b) => a.map((row) => b[0].map((_, j) => row.reduce((sum, x, k) => sum + x * b[k][j], 0)));
const addRow = (m, v) => m.map((row) => row.map((x, j) => x + v[j]));
const add = (a, b) => a.map((row, i) => row.map((x, j) => x + b[i][j]));
const columns = (m, from, to) => m.map((row) => row.slice(from, to));
const transpose = (m) => m[0].map((_, j) => m.map((row) => row[j]));
function softmaxRows(m) {
  return m.map((row) => {
    const top = Math.max(...row);
    const e = row.map((x) => Math.exp(x - top));
    const total = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / total);
  });
}
function layerNorm(m, gamma, beta) {
  return m.map((row) => {
    const mean = row.reduce((a, b) => a + b, 0) / row.length;
    const variance = row.reduce((a, b) => a + (b - mean) ** 2, 0) / row.length;
    return row.map((x, j) => ((x - mean) / Math.sqrt(variance + 1e-5)) * gamma[j] + beta[j]);
  });
}
function multiHead(x) {
  const q = addRow(matmul(x, P.wq), P.bq);
  const k = addRow(matmul(x, P.wk), P.bk);
  const v = addRow(matmul(x, P.wv), P.bv);
  const weights = [0, 1].map((h) => softmaxRows(matmul(columns(q, 2 * h, 2 * h + 2), transpose(columns(k, 2 * h, 2 * h + 2)))
    .map((row) => row.map((s) => s / Math.sqrt(2)))));
  const heads = weights.map((w, h) => matmul(w, columns(v, 2 * h, 2 * h + 2)));
  const concat = heads[0].map((row, i) => [...row, ...heads[1][i]]);
  return { weights, output: addRow(matmul(concat, P.wo), P.bo) };
}
const ffnHidden = (x) => addRow(matmul(x, P.w1), P.b1).map((row) => row.map((h) => Math.max(0, h)));
const ffn = (hidden) => addRow(matmul(hidden, P.w2), P.b2);

// ---- Reading the page ----
async function shownMatrix(page, name) {
  const values = await page.$$eval(`${ROOT} figure[data-matrix="${name}"] tbody tr`,
    (rows) => rows.map((row) => [...row.querySelectorAll('td [data-value]')].map((span) => span.dataset.value)));
  return values.map((row) => row.map(parseShown));
}
async function heatmap(page, title) {
  const labels = await page.$$eval(`${ROOT} figure.aw-heatmap:has(figcaption:text-is("${title}")) .aw-heat-cell`,
    (cells) => cells.map((cell) => [Number(cell.dataset.row), Number(cell.dataset.col), cell.getAttribute('aria-label')]));
  const values = [];
  for (const [i, j, label] of labels) (values[i] ??= [])[j] = parseShown(/ = (\S+?)(?:\. |$)/.exec(label)[1]);
  return values;
}
const stageTitles = (page) => page.$$eval(`${ROOT} .aw-block-stage .aw-block-title`, (titles) => titles.map((t) => t.textContent));

function assertClose(actual, expected, message, tolerance = 1e-12) {
  assert.equal(actual.length, expected.length, `${message}: rows`);
  actual.forEach((row, i) => {
    assert.equal(row.length, expected[i].length, `${message}: columns of row ${i}`);
    row.forEach((value, j) => {
      const want = expected[i][j];
      assert.ok(Math.abs(value - want) <= tolerance * Math.max(1, Math.abs(want)), `${message}[${i}][${j}]: shown ${value}, reference ${want}`);
    });
  });
}

async function openBlock() {
  const page = await session.openReady('index.html#block');
  return session.mountSections(page);
}

test('post-norm: every stage appears in order with its shape, and its values match attention, sums, LayerNorm and the FFN by hand', async () => {
  session.clear();
  const page = await openBlock();
  assert.deepEqual(await stageTitles(page), [
    '1. The token vectors', '2. Multi-head attention', '3. Residual: sum1 = x + attention', '4. LayerNorm 1',
    '5. Feed-forward: hidden layer', '6. Feed-forward: back to d_model', '7. Residual: sum2 = ln1 + ffn', '8. LayerNorm 2: the output',
  ]);
  assert.deepEqual(await page.$$eval(`${ROOT} .aw-block-stage .aw-matrix-title`, (titles) => titles.map((t) => t.textContent)), [
    'x (3 \u00d7 4: n \u00d7 d_model)', 'attention (3 \u00d7 4)', 'sum1 (3 \u00d7 4)', 'ln1 (3 \u00d7 4)', 'ffnHidden (3 \u00d7 8)',
    'ffn (3 \u00d7 4)', 'sum2 (3 \u00d7 4)', 'ln2 (3 \u00d7 4)',
  ]);
  assert.deepEqual(await page.$$eval(`${ROOT} [data-step="inputs"] tbody th`, (ths) => ths.map((th) => th.textContent)), ['cat', 'sat', 'mat']);

  const x = await shownMatrix(page, 'x');
  assert.deepEqual(x, [[1, 0.5, 0.2, 0.8], [0.3, 0.9, 0.1, 0.4], [0.6, 0.2, 0.7, 0.3]], 'x of tutorial 001');
  const mha = multiHead(x);
  assertClose(await heatmap(page, 'Head 1: attention weights'), mha.weights[0], 'head 1 weights');
  assertClose(await heatmap(page, 'Head 2: attention weights'), mha.weights[1], 'head 2 weights');
  const attention = await shownMatrix(page, 'attention');
  assertClose(attention, mha.output, 'attention');
  const sum1 = await shownMatrix(page, 'sum1');
  assertClose(sum1, add(x, attention), 'sum1 = x + attention');
  const ln1 = await shownMatrix(page, 'ln1');
  assertClose(ln1, layerNorm(sum1, P.gamma1, P.beta1), 'ln1 = LayerNorm(sum1)');
  ln1.forEach((row) => assert.ok(Math.abs(row.reduce((a, b) => a + b, 0)) < 1e-12, 'each LayerNorm row has mean 0'));
  const hidden = await shownMatrix(page, 'ffnHidden');
  assertClose(hidden, ffnHidden(ln1), 'ReLU(ln1 W1 + b1)');
  const out = await shownMatrix(page, 'ffn');
  assertClose(out, ffn(hidden), 'hidden W2 + b2');
  const sum2 = await shownMatrix(page, 'sum2');
  assertClose(sum2, add(ln1, out), 'sum2 = ln1 + ffn');
  assertClose(await shownMatrix(page, 'ln2'), layerNorm(sum2, P.gamma2, P.beta2), 'ln2 = LayerNorm(sum2)');

  // The residual's sums, entry by entry, as the engine spelled them.
  await page.click(`${ROOT} [data-step="sum1"] summary`);
  const first = await page.textContent(`${ROOT} [data-step="sum1"] .aw-arith`);
  assert.match(first, /^sum1\[cat, 1\] = 1 \+ \S+ = \S+$/);
  await page.close();
  session.assertQuiet();
});

test('pre-norm: choosing it puts LayerNorm before each sub-layer, and the stages follow', async () => {
  session.clear();
  const page = await openBlock();
  await page.selectOption(`${ROOT} [data-control="norm"] select`, 'pre');
  assert.deepEqual(await stageTitles(page), [
    '1. The token vectors', '2. LayerNorm 1', '3. Multi-head attention of ln1', '4. Residual: sum1 = x + attention',
    '5. LayerNorm 2', '6. Feed-forward: hidden layer', '7. Feed-forward: back to d_model', '8. Residual: sum2 = sum1 + ffn',
  ]);
  const x = await shownMatrix(page, 'x');
  const ln1 = await shownMatrix(page, 'ln1');
  assertClose(ln1, layerNorm(x, P.gamma1, P.beta1), 'ln1 = LayerNorm(x)');
  const attention = await shownMatrix(page, 'attention');
  assertClose(attention, multiHead(ln1).output, 'attention of ln1');
  const sum1 = await shownMatrix(page, 'sum1');
  assertClose(sum1, add(x, attention), 'sum1 = x + attention');
  const ln2 = await shownMatrix(page, 'ln2');
  assertClose(ln2, layerNorm(sum1, P.gamma2, P.beta2), 'ln2 = LayerNorm(sum1)');
  assertClose(await shownMatrix(page, 'sum2'), add(sum1, ffn(ffnHidden(ln2))), 'sum2 = sum1 + FFN(ln2)');
  assert.deepEqual(await page.evaluate(() => window.awWidgets.block.getState()), { norm: 'pre', gradients: false, seed: 1 });
  await page.close();
  session.assertQuiet();
});

test('"Show gradients" shows dL/dx and every parameter\u2019s gradient, as central differences and closed forms give them', async () => {
  session.clear();
  const page = await openBlock();
  assert.equal(await page.isVisible(`${ROOT} .aw-block-gradients`), false, 'no gradients until asked');
  await page.click(`${ROOT} [data-control="gradients"] input`);
  assertClose(await shownMatrix(page, 'dO'), dO, 'dO is the seeded one');

  // Central differences of L = Σ dO ∘ y through the engine's forward pass.
  const forward = { ...blockProblem(example, { norm: 'post', gradients: false, seed: 1 }) };
  const loss = (x) => engine.run({ ...forward, x }).output.reduce((sum, row, i) => sum + row.reduce((s, y, j) => s + y * dO[i][j], 0), 0);
  const h = 1e-6;
  const numeric = example.x.map((row, i) => row.map((_, j) => {
    const shifted = (delta) => example.x.map((r, a) => r.map((value, b) => (a === i && b === j ? value + delta : value)));
    return (loss(shifted(h)) - loss(shifted(-h))) / (2 * h);
  }));
  assertClose(await shownMatrix(page, 'gradX'), numeric, 'gradX against central differences', 1e-6);

  const ln2 = await shownMatrix(page, 'ln2');
  const columnSums = (m) => [m[0].map((_, j) => m.reduce((sum, row) => sum + row[j], 0))];
  assertClose(await shownMatrix(page, 'gradBeta2'), columnSums(dO), 'dβ2 = column sums of dO');
  assertClose(await shownMatrix(page, 'gradGamma2'), columnSums(dO.map((row, i) => row.map((d, j) => d * ln2[i][j]))), 'dγ2 = column sums of dO ∘ ln2');
  const gradBk = (await shownMatrix(page, 'gradBk'))[0];
  gradBk.forEach((value) => assert.ok(Math.abs(value) < 1e-12, `a key bias shifts a query's scores equally, so its gradient is 0: ${value}`));
  const names = await page.$$eval(`${ROOT} .aw-block-gradients figure`, (figures) => figures.map((f) => f.dataset.matrix));
  assert.deepEqual(names, ['dO', 'gradX', 'gradWq', 'gradWk', 'gradWv', 'gradWo', 'gradBq', 'gradBk', 'gradBv', 'gradBo',
    'gradGamma1', 'gradBeta1', 'gradW1', 'gradB1', 'gradW2', 'gradB2', 'gradGamma2', 'gradBeta2']);

  // The state travels, e.g. through "Embed this".
  assert.deepEqual(await page.evaluate(() => window.awWidgets.block.getState()), { norm: 'post', gradients: true, seed: 1 });
  await page.click(`${ROOT} button:text-is("Embed this")`);
  const code = await page.inputValue(`${ROOT} textarea.aw-embed-iframe`);
  const address = new URL(/src="([^"]+)"/.exec(code)[1].replaceAll('&amp;', '&'));
  assert.equal(address.searchParams.get('widget'), 'block');
  assert.deepEqual(JSON.parse(address.searchParams.get('v')), { norm: 'post', gradients: true, seed: 1 });
  await page.close();
  session.assertQuiet();
});
