// The walkthrough's moving figure, read off the screen: each product of a
// score and their sum, the softmax's exponentials becoming weights that
// stack to 1, an output row as its weighted value rows stacked; the cells a
// hovered cell came from; the stages strip; reduced motion. Expected values
// are computed here from the preset's numbers, independently of the engine.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO, WEB_ROOT, startSession } from './harness.mjs';

let still; // reduced motion: the figure rests in its final state
let moving;
let input;
let vectors;

before(async () => {
  const presets = JSON.parse(await readFile(join(WEB_ROOT, 'presets.json'), 'utf8'));
  input = presets.presets.find((preset) => preset.id === 'cat-sat-mat').input;
  vectors = JSON.parse(await readFile(join(REPO, 'tests/vectors/tutorials.json'), 'utf8'));
  still = await startSession({ reducedMotion: 'reduce' });
  moving = await startSession({ reducedMotion: 'no-preference' });
});

after(async () => {
  await still?.close();
  await moving?.close();
});

const open = (session, query) => session.openReady(`index.html${query}`);

const dot = (a, b) => a.reduce((sum, x, t) => sum + x * b[t], 0);
// Lengths are read back from CSS, which keeps six significant digits.
const close = (actual, expected, what) => assert.ok(Math.abs(actual - expected) <= 5e-6, `${what}: ${actual} is not ${expected}`);
const shown3 = (x) => x.toFixed(3);

// The walkthrough's one scale: the largest value its figures draw (the scores, here).
const largestScore = () => Math.max(...input.q.flatMap((q) => input.k.map((k) => dot(q, k))));

function softmaxRow(i) {
  const scaled = input.k.map((key) => dot(input.q[i], key) / Math.sqrt(input.q[0].length));
  const exps = scaled.map((s) => Math.exp(s - Math.max(...scaled)));
  const sum = exps.reduce((a, b) => a + b, 0);
  return { exps, sum, weights: exps.map((e) => e / sum) };
}

// The resting length of every bar in `selector`, as the page computes it.
const lengths = (page, selector) => page.$$eval(selector, (bars) => bars.map((bar) => Number(getComputedStyle(bar).getPropertyValue('--len'))));

test('a score step shows each product of the query and key entries as a bar, then their sum as the score, all on one scale', async () => {
  const page = await open(still, '?preset=cat-sat-mat&step=2');
  const products = input.q[0].map((x, t) => x * input.k[0][t]);
  const score = dot(input.q[0], input.k[0]);
  const rows = await page.$$eval('#walkthrough .aw-fig-dot .aw-fig-row:not(.aw-fig-total) .aw-fig-term', (nodes) => nodes.map((n) => n.textContent));
  assert.deepEqual(rows, products.map((p, t) => `${shown3(input.q[0][t])} \u00d7 ${shown3(input.k[0][t])} = ${shown3(p)}`));
  // Every product is positive: each bar is its product over the walkthrough's largest score, the
  // track's length; laid end to end they are the score.
  const bars = await lengths(page, '#walkthrough .aw-fig-dot .aw-fig-row:not(.aw-fig-total) .aw-fig-bar');
  bars.forEach((length, t) => close(length, products[t] / largestScore(), `product ${t + 1}'s bar`));
  const pieces = await lengths(page, '#walkthrough .aw-fig-total .aw-fig-piece');
  close(pieces.reduce((a, b) => a + b, 0), score / largestScore(), 'the stacked products');
  assert.equal(await page.textContent('#walkthrough .aw-fig-total .aw-fig-result'), `= ${shown3(score)}`);
  // Measured on screen: the sum's bar is as much longer than a product's as its value is larger.
  const widths = (selector) => page.$$eval(selector,
      (nodes) => nodes.map((node) => node.getBoundingClientRect().width));
  const productWidths = await widths('#walkthrough .aw-fig-dot .aw-fig-row:not(.aw-fig-total) .aw-fig-bar');
  const sumWidth = (await widths('#walkthrough .aw-fig-total .aw-fig-piece')).reduce((a, b) => a + b, 0);
  productWidths.forEach((width, t) => assert.ok(Math.abs(width / sumWidth - products[t] / score) < 0.01,
    `product ${t + 1} is ${width} px against the sum's ${sumWidth} px; ${shown3(products[t])} against ${shown3(score)}`));
  await page.close();
});

test('products of both signs are drawn from one zero line, and the score as its own bar on their scale', async () => {
  // Step 2 (score of cat against cat) after q[cat, 1] becomes −1: products −1, 0.25, 0.04, 0.64.
  const page = await open(still, `?preset=cat-sat-mat&step=2&v=${encodeURIComponent(JSON.stringify({ mode: 'qkv', fields: { q: [[-1, 0.5, 0.2, 0.8], ...input.q.slice(1)], k: input.k, v: input.v }, tokens: ['cat', 'sat', 'mat'] }))}`);
  assert.equal(await page.textContent('#walkthrough .aw-fig-total .aw-fig-result'), '= \u22120.070');
  const products = [-1, 0.5, 0.2, 0.8].map((x, t) => x * input.k[0][t]);
  const span = products.reduce((s, p) => s + Math.abs(p), 0);
  const zero = 1 / span; // the negative part, left of the zero line
  const placed = await page.$$eval('#walkthrough .aw-fig-dot .aw-fig-row:not(.aw-fig-total) .aw-fig-bar', (nodes) => nodes.map((node) => {
    const style = getComputedStyle(node);
    return [Number(style.getPropertyValue('--pos')), Number(style.getPropertyValue('--len'))];
  }));
  placed.forEach(([pos, len], t) => {
    close(len, Math.abs(products[t]) / span, `product ${t + 1}'s length`);
    close(products[t] < 0 ? pos + len : pos, zero, `product ${t + 1} starts at the zero line`);
  });
  const net = await page.$eval('#walkthrough .aw-fig-total .aw-fig-net', (node) => {
    const style = getComputedStyle(node);
    return [Number(style.getPropertyValue('--pos')), Number(style.getPropertyValue('--len'))];
  });
  const score = products.reduce((a, b) => a + b, 0);
  assert.ok(score < 0);
  close(net[0] + net[1], zero, 'the negative score ends at the zero line');
  close(net[1], Math.abs(score) / span, 'the score\u2019s length');
  await page.close();
});

test('a softmax step shows the exponentials, then the weights they become, stacked to exactly 1', async () => {
  const page = await open(still, '?preset=cat-sat-mat&step=5');
  const { exps, sum, weights } = softmaxRow(0);
  const columns = page.locator('#walkthrough .aw-fig-column');
  assert.equal(await columns.count(), 3);
  assert.deepEqual(await page.$$eval('#walkthrough .aw-fig-before', (n) => n.map((x) => x.textContent)), exps.map(shown3));
  assert.deepEqual(await page.$$eval('#walkthrough .aw-fig-after', (n) => n.map((x) => x.textContent)), weights.map(shown3));
  assert.deepEqual(await page.$$eval('#walkthrough .aw-fig-key', (n) => n.map((x) => x.textContent)), ['cat', 'sat', 'mat']);
  // Bars rest at the weights, on the scale of the largest exponential (1).
  const bars = await lengths(page, '#walkthrough .aw-fig-column .aw-fig-bar');
  bars.forEach((length, j) => close(length, weights[j], `weight ${j + 1}'s bar`));
  // Stacked, the weights are 1 on a track drawn over the exponentials' sum (longer than 1).
  const pieces = await lengths(page, '#walkthrough .aw-fig-total .aw-fig-piece');
  close(pieces.reduce((a, b) => a + b, 0), 1 / sum, 'the stacked weights');
  assert.equal(await page.textContent('#walkthrough .aw-fig-total .aw-fig-result'), `sum ${shown3(sum)} \u2192 1`);
  await page.close();
});

test('every bar of the walkthrough is on one scale, kept from step to step, its unit marked under each figure', async () => {
  const { weights } = softmaxRow(0);
  // Pixels per unit of each bar at rest, read off the screen: [px, value] pairs per step.
  const measured = [];
  const pairs = async (page, selector, values, side) => {
    const sizes = await page.$$eval(selector,
        (bars, along) => bars.map((bar) => bar.getBoundingClientRect()[along]), side);
    assert.equal(sizes.length, values.length, selector);
    sizes.forEach((size, k) => measured.push({ what: `${selector} ${k + 1}`, perUnit: size / values[k] }));
  };
  for (const [step, i, j] of [[2, 0, 0], [3, 1, 2]]) {
    const page = await open(still, `?preset=cat-sat-mat&step=${step}`);
    // Step 3 gathers the other dot products: the line of sat against mat (the fifth) is its products end to end.
    const at = step === 2 ? '#walkthrough .aw-fig-dot' : '#walkthrough .aw-fig-repeat:nth-child(5)';
    const products = input.q[i].map((x, t) => x * input.k[j][t]);
    if (step === 2) await pairs(page, `${at} .aw-fig-row:not(.aw-fig-total) .aw-fig-bar`, products, 'width');
    const sum = (await page.$$eval(`${at} .aw-fig-piece`, (nodes) => nodes
      .reduce((total, node) => total + node.getBoundingClientRect().width, 0)));
    measured.push({ what: `the sum at step ${step}`, perUnit: sum / dot(input.q[i], input.k[j]) });
    await pairs(page, '#walkthrough .aw-fig-unit-bar', [1], 'width');
    assert.match(await page.textContent('#walkthrough .aw-fig-unit'),
                 /^ = 1 \(one scale for every bar of this walkthrough\)$/);
    await page.close();
  }
  const page = await open(still, '?preset=cat-sat-mat&step=5');
  await pairs(page, '#walkthrough .aw-fig-column .aw-fig-bar', weights, 'height');
  await page.close();
  const [first] = measured;
  assert.ok(first.perUnit > 20, `a unit is ${first.perUnit} px`);
  for (const { what, perUnit } of measured) {
    assert.ok(Math.abs(perUnit - first.perUnit) < 1, `${what}: ${perUnit} px per unit, against ${first.perUnit}`);
  }
});

test('an output step shows each value row scaled by its weight, stacked into the output row', async () => {
  const page = await open(still, '?preset=cat-sat-mat&step=7');
  const { weights } = softmaxRow(0);
  const output = input.v[0].map((_, d) => weights.reduce((sum, w, j) => sum + w * input.v[j][d], 0));
  const labels = await page.$$eval('#walkthrough .aw-fig-vector:not(.aw-fig-total) .aw-fig-what', (n) => n.map((x) => x.textContent));
  assert.deepEqual(labels, ['cat', 'sat', 'mat'].map((token, j) => `${shown3(weights[j])} \u00d7 v[${token}]`));
  const totals = await page.$$eval('#walkthrough .aw-fig-vector.aw-fig-total .aw-fig-result', (n) => n.map((x) => x.textContent));
  assert.deepEqual(totals, output.map(shown3));
  // Every entry's stack is as tall as the output entry, on the figure's one scale.
  const stacks = await page.$$eval('#walkthrough .aw-fig-total .aw-fig-stack', (tracks) => tracks.map((track) =>
    [...track.querySelectorAll('.aw-fig-piece')].reduce((sum, bar) => sum + Number(getComputedStyle(bar).getPropertyValue('--len')), 0)));
  const largest = Math.max(...input.v.flat(), ...output);
  stacks.forEach((height, d) => close(height, output[d] / largest, `entry ${d + 1}'s stack`));
  await page.close();
});

test('the scaling step shows the bar of each score shrinking to the scaled score', async () => {
  const page = await open(still, '?preset=cat-sat-mat&step=4');
  assert.equal(await page.textContent('#walkthrough .aw-step-title'), '4. Divide by \u221ad_k = \u221a4');
  const scores = input.q.flatMap((q) => input.k.map((k) => dot(q, k)));
  assert.deepEqual(await page.$$eval('#walkthrough .aw-fig-term', (n) => n.map((x) => x.textContent)),
    scores.map((s) => `${shown3(s)} \u00f7 \u221a4.000 = ${shown3(s / 2)}`));
  const largest = Math.max(...scores);
  const bars = await lengths(page, '#walkthrough .aw-fig-bar');
  bars.forEach((length, k) => close(length, scores[k] / 2 / largest, `scaled score ${k + 1}'s bar`));
  await page.close();
});

test('the first step pictures each token\u2019s query, key and value as bars, on one scale', async () => {
  const page = await open(still, '?preset=cat-sat-mat&step=1');
  assert.equal(await page.getAttribute('#walkthrough .aw-fig', 'data-kind'), 'inputs');
  const blocks = await page.$$eval('#walkthrough .aw-fig-block', (nodes) => nodes.map((block) => ({
    tensor: block.dataset.tensor,
    tokens: [...block.querySelectorAll('.aw-fig-token')].map((n) => n.textContent),
    names: [...block.querySelectorAll('.aw-fig-strip')].map((n) => n.getAttribute('aria-label')),
  })));
  const largest = Math.max(...[input.q, input.k, input.v].flat(2).map(Math.abs));
  assert.deepEqual(blocks.map((b) => b.tensor), ['q', 'k', 'v']);
  for (const block of blocks) {
    assert.deepEqual(block.tokens, ['cat', 'sat', 'mat']);
    assert.deepEqual(block.names, input[block.tensor].map((row, i) => `${block.tensor}[${block.tokens[i]}]: ${row.map(shown3).join(', ')}`));
    const bars = await lengths(page, `#walkthrough .aw-fig-block[data-tensor="${block.tensor}"] .aw-fig-bar`);
    bars.forEach((length, n) => close(length, Math.abs(input[block.tensor].flat()[n]) / largest, `${block.tensor} entry ${n + 1}`));
  }
  await page.close();
});

// The summary's tables as drawn: each one's column, caption, column labels
// and rows (the row's token and each cell's value, number shown, font size,
// the printed number struck through under it and whether it is outlined).
const readSummary = (page) => page.$$eval('#walkthrough .aw-fig-summary-table', (tables) => tables.map((table) => ({
  column: table.dataset.column,
  title: table.caption.textContent,
  labels: [...table.tHead.querySelectorAll('th')].map((th) => th.textContent),
  rows: [...table.tBodies[0].rows].map((tr) => ({
    token: tr.querySelector('th').textContent,
    cells: [...tr.querySelectorAll('td')].map((td) => ({
      value: Number(td.dataset.value),
      shown: td.querySelector('.aw-num').textContent,
      px: parseFloat(getComputedStyle(td.querySelector('.aw-num')).fontSize),
      printed: td.querySelector('.aw-fig-printed')?.lastChild.textContent ?? null,
      marked: td.classList.contains('aw-fig-misprint'),
      masked: td.classList.contains('aw-fig-masked'),
    })),
  })),
})));

test('the last step sums the computation up: every token named, every weight and output with its number, the tutorial\u2019s misprints outlined with what it printed, its rounding differences not', async () => {
  const page = await open(still, '?preset=cat-sat-mat&step=9');
  assert.equal(await page.getAttribute('#walkthrough .aw-fig', 'data-kind'), 'summary');
  const tokens = ['cat', 'sat', 'mat'];
  const expected = { weights: [0, 1, 2].map((i) => softmaxRow(i).weights) };
  expected.output = expected.weights.map((row) => input.v[0].map((_, d) =>
    row.reduce((sum, w, j) => sum + w * input.v[j][d], 0)));
  const tables = await readSummary(page);
  assert.deepEqual(tables.map((table) => [table.column, table.title]), [['weights', 'Weights'], ['output', '\u2192\u00a0Output']]);
  assert.deepEqual(tables[0].labels, tokens, 'the weights\u2019 columns are the keys');
  assert.deepEqual(tables[1].labels, ['1', '2', '3', '4']);
  // From tests/vectors: the misprinted scores of sat and mat carry into their
  // weights and outputs; the row of cat has only rounding differences.
  const vector = vectors.find((v) => v.id === 't001-cat-sat-mat');
  const printedWrong = (field) => new Set(vector.errata.filter((e) => e.field === field).map((e) => e.index.join(',')));
  const misprintedRows = new Set(vector.errata.filter((e) => e.field === 'scores').map((e) => e.index[0]));
  assert.deepEqual([...misprintedRows].sort(), [1, 2]);
  assert.ok(printedWrong('output').has('0,1'), 'the tutorial prints output[cat][2] a digit off');
  for (const table of tables) {
    assert.deepEqual(table.rows.map((row) => row.token), tokens, `${table.column}: a row per token, named`);
    table.rows.forEach((row, i) => row.cells.forEach((cell, j) => {
      const where = `${table.column}[${i}][${j}]`;
      close(cell.value, expected[table.column][i][j], where);
      assert.equal(cell.shown, shown3(expected[table.column][i][j]), `${where} shows its number`);
      assert.ok(cell.px >= 11, `${where}: its number is ${cell.px} px`);
      const misprint = misprintedRows.has(i) && printedWrong(table.column).has(`${i},${j}`);
      assert.equal(cell.marked, misprint, `${where} outlined`);
      const printed = vector.printed[table.column][i][j];
      assert.equal(cell.printed, misprint ? printed.toFixed(vector.printedDecimals[table.column]) : null,
        `${where}: the printed number under it`);
    }));
  }
  assert.match(await page.textContent('#walkthrough .aw-fig-marked'),
    /The first slip is scores\[sat\]\[mat\] at step 3, Score of sat against mat;/);
  await page.close();
});

test('an erratum in a step of repeats names its repeat, and following it opens that repeat onto its figure', async () => {
  const page = await open(still, '?preset=cat-sat-mat');
  const errata = page.locator('#walkthrough .aw-errata');
  await errata.locator('summary').first().click();
  const item = errata.locator('.aw-errata-items li').filter({ hasText: /^scores\[sat\]\[mat\]:/ });
  const go = item.getByRole('button');
  assert.equal(await go.textContent(), 'Go to step 3, Score of sat against mat');
  await go.click();
  await page.locator('#walkthrough .aw-counter').filter({ hasText: /^3 \// }).waitFor();
  // The repeat of sat against mat is open, drawn as its own dot product: q[sat] · k[mat] = 0.550, not the 0.65 printed.
  const opened = page.locator('#walkthrough .aw-fig-repeat[open]');
  assert.equal(await opened.count(), 1);
  assert.equal(await opened.locator('summary .aw-fig-what').textContent(), 'Score of sat against mat');
  assert.ok(await opened.evaluate((repeat) => {
    const { top, bottom } = repeat.getBoundingClientRect();
    return top >= 0 && bottom <= window.innerHeight;
  }), 'the repeat opened is in view, not where the errata list was');
  await opened.locator('.aw-fig-repeat-body .aw-fig-bar').first().waitFor({ state: 'attached' });
  const [q, k] = [input.q[1], input.k[2]];
  const dot = q.reduce((sum, x, t) => sum + x * k[t], 0);
  assert.match(await opened.locator('.aw-fig-repeat-body').textContent(), new RegExp(dot.toFixed(3).replace('.', '\\.')));
  assert.equal(await page.getAttribute('#walkthrough [role="tab"][data-view="figure"]', 'aria-selected'), 'true');
  await page.close();
});

test('the summary of a causal example hatches each masked key, and a softmax\u2019s shows its input then its weights', async () => {
  let page = await open(still, '?preset=causal-scores&step=99');
  const [weights] = await readSummary(page);
  assert.deepEqual(weights.rows.map((row) => row.cells.map((cell) => cell.masked)),
    [0, 1, 2, 3].map((i) => [0, 1, 2, 3].map((j) => j > i)));
  await page.close();
  page = await open(still, '?preset=softmax-1-2-3&step=99');
  const tables = await readSummary(page);
  assert.deepEqual(tables.map((table) => table.title), ['Input x', '\u2192\u00a0Weights']);
  assert.deepEqual(tables[0].rows[0].cells.map((cell) => cell.shown), ['1', '2', '3'], 'the input as typed');
  const exps = [1, 2, 3].map((x) => Math.exp(x - 3));
  const sum = exps.reduce((a, b) => a + b, 0);
  tables[1].rows[0].cells.forEach((cell, j) => {
    close(cell.value, exps[j] / sum, `weight ${j + 1}`);
    assert.equal(cell.shown, shown3(exps[j] / sum), `weight ${j + 1} shows its number`);
  });
  await page.close();
});

test('hovering a computed cell lights exactly the cells it was computed from', async () => {
  let page = await open(still, '?preset=cat-sat-mat&step=9');
  const lit = () => page.$$eval('#walkthrough .aw-src', (nodes) => nodes.map((node) =>
    `${node.closest('[data-matrix]').dataset.matrix}[${node.dataset.row}][${node.dataset.col}]`).sort());
  // A weight of "sat" comes from the whole scaled row of "sat".
  await page.getByRole('tab', { name: 'Heatmaps' }).click();
  await page.hover('#walkthrough [data-matrix="weights"] .aw-heat-cell[data-row="1"][data-col="2"]');
  assert.deepEqual(await lit(), ['scaled[1][0]', 'scaled[1][1]', 'scaled[1][2]']);
  await page.close();
  // Entry 2 of the output of "mat", on the step that computes it: the weights
  // of "mat" and entry 2 of every value row, in the matrices (the heatmaps,
  // another view, are not on screen).
  page = await open(still, '?preset=cat-sat-mat&step=8');
  await page.getByRole('tab', { name: 'Matrices' }).click();
  await page.hover('#walkthrough [data-matrix="output"] td[data-row="2"][data-col="1"]');
  assert.deepEqual(await lit(), ['v[0][1]', 'v[1][1]', 'v[2][1]', 'weights[2][0]', 'weights[2][1]', 'weights[2][2]'].sort());
  await page.close();
});

test('the stages strip names the stage of the step and jumps to a stage by a click', async () => {
  const page = await open(still, '?preset=cat-sat-mat&step=3');
  const current = () => page.textContent('#walkthrough .aw-stage-button[aria-current="step"]');
  assert.deepEqual(await page.$$eval('#walkthrough .aw-stage-button', (n) => n.map((x) => x.textContent)),
    ['Inputs', 'Q\u00b7K\u1d40', 'Scale', 'Softmax', 'Weights \u00b7 V', 'Result']);
  assert.equal(await current(), 'Q\u00b7K\u1d40');
  await page.click('#walkthrough .aw-stage-button:text-is("Softmax")');
  assert.equal(await page.textContent('#walkthrough .aw-step-title'), '5. Softmax of the row of cat');
  assert.equal(await current(), 'Softmax');
  assert.match(page.url(), /step=5(&|$)/);
  await page.close();
});

test('the figure moves unless the learner asks for reduced motion', async () => {
  const animationOf = (page) => page.$eval('#walkthrough .aw-fig-bar', (bar) => getComputedStyle(bar).animationName);
  const calm = await open(still, '?preset=cat-sat-mat&step=5');
  assert.equal(await animationOf(calm), 'none');
  await calm.close();
  const lively = await open(moving, '?preset=cat-sat-mat&step=5');
  assert.equal(await animationOf(lively), 'aw-fig-move');
  await lively.close();
});

test('an edit shows the figure\u2019s new numbers at once, and the next step moves again', async () => {
  const page = await open(moving, '?preset=cat-sat-mat&step=2');
  const animationOf = () => page.$eval('#walkthrough .aw-fig-bar', (bar) => getComputedStyle(bar).animationName);
  assert.equal(await animationOf(), 'aw-fig-move');
  // q[0][0], the first entry of the query this step multiplies by k[0].
  await page.locator('#walkthrough .aw-editor').filter({ hasText: 'Q' }).first().locator('input').nth(0).fill('2.5');
  const query = [2.5, ...input.q[0].slice(1)];
  const products = query.map((x, t) => x * input.k[0][t]);
  assert.deepEqual(await page.$$eval('#walkthrough .aw-fig-dot .aw-fig-row:not(.aw-fig-total) .aw-fig-term', (nodes) => nodes.map((n) => n.textContent)),
    products.map((p, t) => `${shown3(query[t])} \u00d7 ${shown3(input.k[0][t])} = ${shown3(p)}`));
  assert.equal(await animationOf(), 'none', 'the edit does not replay the movement');
  // On the edited walkthrough's one scale: its largest score.
  const edited = [query, input.q[1], input.q[2]];
  const scale = Math.max(...edited.flatMap((q) => input.k.map((k) => dot(q, k))));
  const bars = await lengths(page, '#walkthrough .aw-fig-dot .aw-fig-row:not(.aw-fig-total) .aw-fig-bar');
  bars.forEach((length, t) => close(length, Math.abs(products[t]) / scale, `product ${t + 1}'s bar after the edit`));
  await page.locator('#walkthrough .aw-forward').click();
  assert.equal(await animationOf(), 'aw-fig-move', 'a new step moves');
  await page.close();
});

test('a figure of a softmax-only example shows its entries by name', async () => {
  let page = await open(still, '?preset=softmax-1-2-3');
  const count = Number((await page.textContent('#walkthrough .aw-counter')).split(' / ')[1]);
  await page.close();
  // Its last step before the end divides each exponential by their sum.
  page = await open(still, `?preset=softmax-1-2-3&step=${count - 1}`);
  const exps = [1, 2, 3].map((x) => Math.exp(x - 3));
  const sum = exps.reduce((a, b) => a + b, 0);
  assert.deepEqual(await page.$$eval('#walkthrough .aw-fig-after', (n) => n.map((e) => e.textContent)), exps.map((e) => shown3(e / sum)));
  assert.equal(await page.textContent('#walkthrough .aw-fig-total .aw-fig-result'), `sum ${shown3(sum)} \u2192 1`);
  await page.close();
});

test('a masked key shows in the softmax figure as masked, with weight 0, outside the stack', async () => {
  // causal-scores, unscaled: row 2 sees keys 1 and 2 only; its softmax is the first of the other rows, opened.
  const page = await open(still, '?preset=causal-scores&step=5');
  await page.locator('#walkthrough .aw-fig-repeat summary').first().click();
  await page.waitForSelector('#walkthrough .aw-fig-repeat-body .aw-fig-softmax');
  const [a, b] = [1.5, 3.2].map((s) => Math.exp(s - 3.2));
  const weights = [a / (a + b), b / (a + b)];
  assert.deepEqual(await page.$$eval('#walkthrough .aw-fig-after', (n) => n.map((x) => x.textContent)),
    [...weights.map(shown3), '0.000', '0.000']);
  assert.deepEqual(await page.$$eval('#walkthrough .aw-fig-before', (n) => n.map((x) => x.textContent)),
    [shown3(a), shown3(b), 'masked', 'masked']);
  assert.equal(await page.locator('#walkthrough .aw-fig-column.aw-fig-masked').count(), 2);
  const pieces = await lengths(page, '#walkthrough .aw-fig-total .aw-fig-piece');
  assert.equal(pieces.length, 2);
  // Stacked to 1, on a track drawn over the exponentials' sum.
  close(pieces[0] + pieces[1], 1 / (a + b), 'the stacked weights of the keys it sees');
  await page.close();
});

// Plays from `from` until the title reads step `until`, recording from the
// page, at every change of step, whether each animation of the figure of the
// step before had finished (its `finished` promise had resolved) and at what
// playbackRate it ran.
async function playRecording(page, speed, from, until) {
  await page.selectOption('#walkthrough .aw-speed select', String(speed));
  await page.evaluate(() => {
    const figure = document.querySelector('#walkthrough .aw-fig');
    const title = document.querySelector('#walkthrough .aw-step-title');
    const log = [];
    window.awPlayLog = log;
    const record = () => {
      const animations = figure.getAnimations({ subtree: true });
      const entry = { title: title.textContent, animations: animations.length,
          rates: animations.map((a) => a.playbackRate), finished: 0 };
      for (const animation of animations) animation.finished.then(() => { entry.finished += 1; }, () => {});
      // What the step being left had finished, at the moment it was left.
      const left = log.at(-1);
      if (left) left.finishedWhenLeft = left.finished;
      log.push(entry);
    };
    new MutationObserver(record).observe(title, { childList: true, characterData: true, subtree: true });
    record();
  });
  assert.match(await page.textContent('#walkthrough .aw-step-title'), new RegExp(`^${from}\\. `));
  await page.click('#walkthrough .aw-play');
  await page.waitForFunction((n) => document.querySelector('#walkthrough .aw-step-title').textContent.startsWith(`${n}. `), until, { timeout: 60000 });
  await page.click('#walkthrough .aw-play');
  return page.evaluate(() => window.awPlayLog);
}

for (const [speed, from, until] of [[1, 2, 5], [2, 5, 9]]) {
  test(`at ${speed}\u00d7 Play moves on only once the step\u2019s figure has stopped moving, its movement at ${speed}\u00d7`, async () => {
    const page = await open(moving, `?preset=cat-sat-mat&step=${from}`);
    const log = await playRecording(page, speed, from, until);
    // The steps left on the way to `until` (on a loaded machine Play may have moved on again before the pause).
    const left = log.slice(0, until - from);
    assert.deepEqual(left.map((entry) => Number.parseInt(entry.title, 10)),
        Array.from({ length: until - from }, (_, k) => from + k));
    for (const entry of left) {
      assert.ok(entry.animations > 0, `${entry.title}: the figure moved`);
      assert.equal(entry.finishedWhenLeft, entry.animations, `${entry.title}: ${entry.finishedWhenLeft} of ${entry.animations} animations had finished when Play moved on`);
      assert.ok(entry.rates.every((rate) => rate === speed), `${entry.title}: played at ${entry.rates.join(', ')}`);
    }
    await page.close();
  });
}
