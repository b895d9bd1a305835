// The transformer block section in headless Chromium: its flow diagram
// shows the engine's steps in the engine's order with their shapes, skip
// arrows where the residual sums read an earlier stage, for post-norm and
// pre-norm; a box opens its stage's matrices (by click or keyboard), beside
// the diagram on a wide screen and under the box on a phone; the numbers on screen are
// checked against a small reference written here in plain JS (multi-head
// attention, the residual sums, LayerNorm by hand, the ReLU feed-forward
// network); "Show gradients" shows gradients that agree with central
// differences of the engine's forward pass and with closed forms
// (dβ₂ = column sums of dO, dγ₂ = column sums of dO ∘ ln2 when γ₂ = 1,
// β₂ = 0; a key bias gets no gradient).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { labelValue, parseShown, startSession } from './harness.mjs';
import { loadAttention } from '../../web/lib/attention-node.js';
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
  const weights = [0, 1].map((h) => softmaxRows(matmul(columns(q, 2 * h, 2 * h + 2),
      transpose(columns(k, 2 * h, 2 * h + 2)))
    .map((row) => row.map((s) => s / Math.sqrt(2)))));
  const heads = weights.map((w, h) => matmul(w, columns(v, 2 * h, 2 * h + 2)));
  const concat = heads[0].map((row, i) => [...row, ...heads[1][i]]);
  return { weights, output: addRow(matmul(concat, P.wo), P.bo) };
}
const ffnHidden = (x) => addRow(matmul(x, P.w1), P.b1).map((row) => row.map((h) => Math.max(0, h)));
const ffn = (hidden) => addRow(matmul(hidden, P.w2), P.b2);

// ---- Reading the page ----
const box = (id) => `${ROOT} .aw-block-node[data-step="${id}"]`;
const card = (id) => `${ROOT} .aw-block-stage[data-step="${id}"]`;

/** Opens a stage by clicking its box, as a learner does, and waits for its card. */
async function openStage(page, id) {
  if (await page.getAttribute(box(id), 'aria-expanded') !== 'true') await page.click(box(id));
  await page.waitForSelector(`${card(id)}:visible`);
}
async function shownMatrix(page, name) {
  const values = await page.$$eval(`${ROOT} .aw-block-stage:not([hidden]) figure[data-matrix="${name}"] tbody tr, ${ROOT} .aw-block-gradients figure[data-matrix="${name}"] tbody tr`,
    (rows) => rows.map((row) => [...row.querySelectorAll('td [data-value]')].map((span) => span.dataset.value)));
  assert.ok(values.length > 0, `${name} is on screen`);
  return values.map((row) => row.map(parseShown));
}
/** A stage's matrix, shown by opening its box. */
async function stageMatrix(page, id, name) {
  await openStage(page, id);
  return shownMatrix(page, name);
}
async function heatmap(page, title) {
  const labels = await page.$$eval(`${ROOT} figure.aw-heatmap:has(figcaption:text-is("${title}")) .aw-heat-cell`,
    (cells) => cells.map((cell) => [Number(cell.dataset.row), Number(cell.dataset.col), cell.getAttribute('aria-label')]));
  const values = [];
  for (const [i, j, label] of labels) (values[i] ??= [])[j] = labelValue(label);
  return values;
}
/** The diagram's boxes, top to bottom on screen: step id, title, shape line, whether it is open. */
const boxes = (page) => page.$$eval(`${ROOT} .aw-block-node`, (nodes) => nodes
  .map((node) => ({ node, top: node.getBoundingClientRect().top }))
  .sort((a, b) => a.top - b.top)
  .map(({ node }) => ({
    id: node.dataset.step,
    title: node.querySelector('.aw-block-node-title').textContent,
    shape: node.querySelector('.aw-block-node-shape').textContent,
    open: node.getAttribute('aria-expanded'),
  })));
/**
 * The skip arrows as drawn: for each, the boxes its top and bottom ends
 * are level with, and whether it runs to the left of the boxes.
 */
const skipArrows = (page) => page.$$eval(`${ROOT} .aw-block-skip`, (skips) => {
  const nodes = [...skips[0].parentElement.querySelectorAll('.aw-block-node')];
  const levelWith = (y) => nodes.find((node) => {
    const r = node.getBoundingClientRect();
    return y > r.top && y < r.bottom;
  })?.dataset.step ?? null;
  return skips.map((skip) => {
    const r = skip.getBoundingClientRect();
    return { from: levelWith(r.top), to: levelWith(r.bottom),
        left: r.right <= nodes[0].getBoundingClientRect().left + 1 };
  });
});
/** The engine's steps for a state, each as the diagram should show it: id, title, shape. */
function engineBoxes(state) {
  const problem = blockProblem(example, state);
  const { result, steps } = engine.walkthrough(problem);
  return steps.steps.map((step) => {
    const shows = step.tables[0].tensor;
    const values = result[shows] ?? problem[shows];
    return { id: step.id, title: `${step.number}. ${step.title}`, shape: `${shows}: ${values.length} \u00d7 ${values[0].length}` };
  });
}

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

test('post-norm: the diagram shows the engine\u2019s steps in order with their shapes and skip arrows, and each box opens values that match attention, sums, LayerNorm and the FFN by hand', async () => {
  session.clear();
  const page = await openBlock();
  const shown = await boxes(page);
  assert.deepEqual(shown.map(({ id, title, shape }) => ({ id, title, shape })), engineBoxes({ norm: 'post', gradients: false, seed: 1 }));
  assert.deepEqual(shown.map((b) => b.title), [
    '1. The token vectors', '2. Multi-head attention', '3. Residual: sum1 = x + attention', '4. LayerNorm 1',
    '5. Feed-forward: hidden layer', '6. Feed-forward: back to d_model', '7. Residual: sum2 = ln1 + ffn', '8. LayerNorm 2: the output',
  ]);
  assert.deepEqual(shown.map((b) => b.shape), ['x: 3 \u00d7 4', 'attention: 3 \u00d7 4', 'sum1: 3 \u00d7 4', 'ln1: 3 \u00d7 4',
    'ffnHidden: 3 \u00d7 8', 'ffn: 3 \u00d7 4', 'sum2: 3 \u00d7 4', 'ln2: 3 \u00d7 4']);
  // Each residual sum adds back the input of the sub-layer before it.
  assert.deepEqual(await skipArrows(page), [{ from: 'inputs', to: 'sum1', left: true }, { from: 'ln1', to: 'sum2', left: true }]);
  // The first stage is open to begin with; only its card is on screen.
  assert.deepEqual(shown.map((b) => b.open), ['true', 'false', 'false', 'false', 'false', 'false', 'false', 'false']);
  assert.deepEqual(await page.$$eval(`${ROOT} .aw-block-stage`, (items) => items.filter((item) => item.checkVisibility()).map((item) => item.dataset.step)), ['inputs']);
  assert.deepEqual(await page.$$eval(`${card('inputs')} tbody th`, (ths) => ths.map((th) => th.textContent)), ['cat', 'sat', 'mat']);
  assert.equal(await page.textContent(`${card('inputs')} .aw-matrix-title`), 'x (3 \u00d7 4: n \u00d7 d_model)');

  const x = await shownMatrix(page, 'x');
  assert.deepEqual(x, [[1, 0.5, 0.2, 0.8], [0.3, 0.9, 0.1, 0.4], [0.6, 0.2, 0.7, 0.3]], 'x of tutorial 001');
  const mha = multiHead(x);
  const attention = await stageMatrix(page, 'attention', 'attention');
  assert.equal(await page.getAttribute(box('inputs'), 'aria-expanded'), 'false', 'opening a box closes the one before');
  assert.equal(await page.isVisible(card('inputs')), false);
  assertClose(await heatmap(page, 'Head 1: attention weights'), mha.weights[0], 'head 1 weights');
  assertClose(await heatmap(page, 'Head 2: attention weights'), mha.weights[1], 'head 2 weights');
  assertClose(attention, mha.output, 'attention');
  const sum1 = await stageMatrix(page, 'sum1', 'sum1');
  assertClose(sum1, add(x, attention), 'sum1 = x + attention');
  // The open box is marked, and so are the boxes whose output it reads.
  assert.deepEqual(await page.$$eval(`${ROOT} .aw-block-node.aw-block-source`, (nodes) => nodes.map((n) => n.dataset.step)), ['inputs', 'attention']);
  const ln1 = await stageMatrix(page, 'ln1', 'ln1');
  assertClose(ln1, layerNorm(sum1, P.gamma1, P.beta1), 'ln1 = LayerNorm(sum1)');
  ln1.forEach((row) => assert.ok(Math.abs(row.reduce((a, b) => a + b, 0)) < 1e-12, 'each LayerNorm row has mean 0'));
  const hidden = await stageMatrix(page, 'ffn-hidden', 'ffnHidden');
  assertClose(hidden, ffnHidden(ln1), 'ReLU(ln1 W1 + b1)');
  const out = await stageMatrix(page, 'ffn', 'ffn');
  assertClose(out, ffn(hidden), 'hidden W2 + b2');
  const sum2 = await stageMatrix(page, 'sum2', 'sum2');
  assertClose(sum2, add(ln1, out), 'sum2 = ln1 + ffn');
  assertClose(await stageMatrix(page, 'ln2', 'ln2'), layerNorm(sum2, P.gamma2, P.beta2), 'ln2 = LayerNorm(sum2)');

  // The residual's sums, entry by entry, as the engine spelled them.
  await openStage(page, 'sum1');
  await page.click(`${card('sum1')} summary`);
  const first = await page.textContent(`${card('sum1')} .aw-arith`);
  assert.match(first, /^sum1\[cat, 1\] = 1 \+ \S+ = \S+$/);
  await page.close();
  session.assertQuiet();
});

test('pre-norm: choosing it redraws the diagram with LayerNorm before each sub-layer and the skips around both', async () => {
  session.clear();
  const page = await openBlock();
  await page.selectOption(`${ROOT} [data-control="norm"] select`, 'pre');
  const shown = await boxes(page);
  assert.deepEqual(shown.map(({ id, title, shape }) => ({ id, title, shape })), engineBoxes({ norm: 'pre', gradients: false, seed: 1 }));
  assert.deepEqual(shown.map((b) => b.title), [
    '1. The token vectors', '2. LayerNorm 1', '3. Multi-head attention of ln1', '4. Residual: sum1 = x + attention',
    '5. LayerNorm 2', '6. Feed-forward: hidden layer', '7. Feed-forward: back to d_model', '8. Residual: sum2 = sum1 + ffn',
  ]);
  assert.deepEqual(await skipArrows(page), [{ from: 'inputs', to: 'sum1', left: true }, { from: 'sum1', to: 'sum2', left: true }]);
  const x = await stageMatrix(page, 'inputs', 'x');
  const ln1 = await stageMatrix(page, 'ln1', 'ln1');
  assertClose(ln1, layerNorm(x, P.gamma1, P.beta1), 'ln1 = LayerNorm(x)');
  const attention = await stageMatrix(page, 'attention', 'attention');
  assertClose(attention, multiHead(ln1).output, 'attention of ln1');
  const sum1 = await stageMatrix(page, 'sum1', 'sum1');
  assertClose(sum1, add(x, attention), 'sum1 = x + attention');
  const ln2 = await stageMatrix(page, 'ln2', 'ln2');
  assertClose(ln2, layerNorm(sum1, P.gamma2, P.beta2), 'ln2 = LayerNorm(sum1)');
  assertClose(await stageMatrix(page, 'sum2', 'sum2'), add(sum1, ffn(ffnHidden(ln2))), 'sum2 = sum1 + FFN(ln2)');
  assert.deepEqual(await page.evaluate(() => window.awWidgets.block.getState()), { norm: 'pre', gradients: false, seed: 1, stage: 'sum2' });
  await page.close();
  session.assertQuiet();
});

test('the boxes work from the keyboard: Enter and Space open and close a stage, and Tab goes from a box to its matrices, then on', async () => {
  session.clear();
  const page = await openBlock();
  const focused = () => page.evaluate(() => ({
    box: document.activeElement.closest('.aw-block-node')?.dataset.step ?? null,
    card: document.activeElement.closest('.aw-block-stage')?.dataset.step ?? null,
  }));
  await page.focus(box('inputs'));
  await page.keyboard.press('Enter');
  assert.equal(await page.getAttribute(box('inputs'), 'aria-expanded'), 'false', 'Enter closes the open stage');
  assert.equal(await page.isVisible(card('inputs')), false);
  await page.keyboard.press('Tab');
  assert.deepEqual(await focused(), { box: 'attention', card: null }, 'with no stage open, Tab goes from box to box');
  await page.keyboard.press('Enter');
  await page.waitForSelector(`${card('attention')}:visible`);
  assert.equal(await page.getAttribute(box('attention'), 'aria-expanded'), 'true');
  assert.deepEqual(await focused(), { box: 'attention', card: null }, 'focus stays on the box');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Tab');
  assert.deepEqual(await focused(), { box: 'sum1', card: null });
  await page.keyboard.press('Space');
  await page.waitForSelector(`${card('sum1')}:visible`);
  assertClose(await shownMatrix(page, 'sum1'), engine.run(blockProblem(example, { norm: 'post', gradients: false, seed: 1 })).sum1, 'sum1 as the engine has it');
  assert.equal(await page.getAttribute(box('sum1'), 'aria-controls'), await page.getAttribute(card('sum1'), 'id'));
  await page.keyboard.press('Tab');
  assert.deepEqual(await focused(), { box: null, card: 'sum1' }, 'Tab goes on into the open stage\u2019s matrices');
  assert.deepEqual(await page.$$eval(`${ROOT} .aw-block-stage`, (items) => items.filter((item) => item.checkVisibility()).map((item) => item.dataset.step)), ['sum1']);
  await page.close();
  session.assertQuiet();
});

test('an open stage\u2019s card sits beside the diagram at 1440 px and right under its box at 375 px', async () => {
  session.clear();
  const page = await session.newPage();
  for (const width of [1440, 375]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(session.url('index.html#block'));
    await page.waitForSelector('html[data-ready="true"]');
    await session.mountSections(page);
    await openStage(page, 'ln1');
    const [node, next, item] = await Promise.all([box('ln1'), box('ffn-hidden'), card('ln1')]
      .map((selector) => page.$eval(selector, (element) => element.getBoundingClientRect().toJSON())));
    if (width === 1440) {
      assert.ok(item.left >= node.right, `the card (left ${item.left}) is right of the box (right ${node.right})`);
    } else {
      assert.ok(item.top >= node.bottom && item.bottom <= next.top, `the card (${item.top}\u2013${item.bottom}) is between its box and the next`);
      assert.ok(item.right <= width, 'and within the screen');
    }
  }
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
  const loss = (x) => engine.run({ ...forward, x }).output
    .reduce((sum, row, i) => sum + row.reduce((s, y, j) => s + y * dO[i][j], 0), 0);
  const h = 1e-6;
  const numeric = example.x.map((row, i) => row.map((_, j) => {
    const shifted = (delta) => example.x
      .map((r, a) => r.map((value, b) => (a === i && b === j ? value + delta : value)));
    return (loss(shifted(h)) - loss(shifted(-h))) / (2 * h);
  }));
  assertClose(await shownMatrix(page, 'gradX'), numeric, 'gradX against central differences', 1e-6);

  const ln2 = await stageMatrix(page, 'ln2', 'ln2');
  const columnSums = (m) => [m[0].map((_, j) => m.reduce((sum, row) => sum + row[j], 0))];
  assertClose(await shownMatrix(page, 'gradBeta2'), columnSums(dO), 'dβ2 = column sums of dO');
  assertClose(await shownMatrix(page, 'gradGamma2'), columnSums(dO.map((row, i) => row.map((d, j) => d * ln2[i][j]))), 'dγ2 = column sums of dO ∘ ln2');
  const gradBk = (await shownMatrix(page, 'gradBk'))[0];
  gradBk.forEach((value) => assert.ok(Math.abs(value) < 1e-12, `a key bias shifts a query's scores equally, so its gradient is 0: ${value}`));
  const names = await page.$$eval(`${ROOT} .aw-block-gradients figure`, (figures) => figures.map((f) => f.dataset.matrix));
  assert.deepEqual(names, ['dO', 'gradX', 'gradWq', 'gradWk', 'gradWv', 'gradWo', 'gradBq', 'gradBk', 'gradBv', 'gradBo',
    'gradGamma1', 'gradBeta1', 'gradW1', 'gradB1', 'gradW2', 'gradB2', 'gradGamma2', 'gradBeta2']);
  // A bias's one row is headed by its name: no empty row header for a screen reader.
  const emptyHeaders = await page.$$eval(`${ROOT} .aw-block-gradients th[scope="row"]`,
    (cells) => cells.filter((cell) => cell.textContent.trim() === '').map((cell) => cell.closest('figure').dataset.matrix));
  assert.deepEqual(emptyHeaders, []);

  // The state travels, e.g. through "Embed this".
  assert.deepEqual(await page.evaluate(() => window.awWidgets.block.getState()), { norm: 'post', gradients: true, seed: 1, stage: 'ln2' });
  await page.click(`${ROOT} button:text-is("Embed this")`);
  const code = await page.inputValue(`${ROOT} textarea.aw-embed-iframe`);
  const address = new URL(/src="([^"]+)"/.exec(code)[1].replaceAll('&amp;', '&'));
  assert.equal(address.searchParams.get('widget'), 'block');
  assert.deepEqual(JSON.parse(address.searchParams.get('v')), { norm: 'post', gradients: true, seed: 1, stage: 'ln2' });
  await page.close();
  session.assertQuiet();
});
