// End-to-end tests of the section widgets (masks, why scale, multi-head,
// self vs cross attention, Bahdanau vs Luong, efficient variants) on the
// page in headless Chromium: each renders; changing a control
// shows the engine's new values; flipping a mask cell renormalises its row;
// the page stays quiet (no console errors, nothing off origin).
//
// Expected numbers come from the engine (web/lib/attention.js) run here in
// Node on the same seeded inputs, which the widgets export.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { heatmapValues, parseShown, startSession } from './harness.mjs';
import { loadAttention } from '../../web/lib/attention-node.js';
import { inputsFor as maskInputs } from '../../web/widgets/masks.js';
import { inputsFor as scalingInputs } from '../../web/widgets/scaling.js';
import { inputsFor as multiheadInputs } from '../../web/widgets/multihead.js';
import { inputsFor as efficientInputs } from '../../web/widgets/efficient.js';
import { problemFor as onlineProblem } from '../../web/widgets/online.js';
import { DECODER_VECTORS, ENCODER_VECTORS } from '../../web/widgets/cross-attention.js';
import { handParameters, randomParameters } from '../../web/widgets/alignment.js';

const PAGE = 'index.html';
const SECTIONS = ['plane', 'scaling', 'masks', 'multihead', 'cross', 'alignment', 'block', 'efficient', 'online', 'trainer', 'model'];

let engine;
let session;

before(async () => {
  engine = await loadAttention();
  session = await startSession();
});

after(async () => {
  await session?.close();
});

async function openPage() {
  const page = await session.open(PAGE);
  await page.waitForSelector('html[data-ready="true"]');
  return session.mountSections(page);
}


/** The full-precision values of the number spans inside every element matching selector. */
async function shownNumbers(page, selector) {
  const texts = await page.$$eval(selector, (cells) => cells.map((cell) => (cell.querySelector('[data-value]') ?? cell).dataset.value));
  return texts.map(parseShown);
}

const heatmapTitled = (section, title) => `[data-section="${section}"] figure.aw-heatmap:has(figcaption:text-is("${title}"))`;

function assertClose(actual, expected, message, relative = 1e-12) {
  const a = actual.flat(Infinity);
  const e = expected.flat(Infinity);
  assert.equal(a.length, e.length, `${message}: ${a.length} values shown, ${e.length} expected`);
  a.forEach((value, i) => {
    assert.ok(Number.isFinite(value) || value === e[i], `${message}[${i}]: shown ${value}`);
    const tolerance = relative * Math.max(1, Math.abs(e[i]));
    assert.ok(value === e[i] || Math.abs(value - e[i]) <= tolerance, `${message}[${i}]: shown ${value}, engine ${e[i]}`);
  });
}

async function setRange(page, selector, value) {
  await page.$eval(selector, (input, next) => {
    input.value = String(next);
    input.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);
}

const causalPattern = (n) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => j <= i));

test('every section renders its title, controls and heatmaps, and the page stays quiet', async () => {
  session.clear();
  const page = await openPage();
  // The trainer draws its heads when its worker has built the model.
  await page.waitForFunction(() => document.querySelectorAll('[data-section="trainer"] .aw-heatmap').length > 0);
  const sections = await page.$$eval('.aw-section', (roots) => roots.map((root) => ({
    name: root.dataset.section,
    // On the page the chapter's heading names the section (the widget's own title is for embeds).
    title: document.getElementById(root.getAttribute('aria-labelledby'))?.textContent ?? '',
    heatmaps: root.querySelectorAll('.aw-heatmap').length,
    messages: [...root.querySelectorAll('.aw-message')].filter((m) => !m.hidden).map((m) => m.textContent),
  })));
  assert.deepEqual(sections.map((s) => s.name), SECTIONS);
  for (const section of sections) {
    assert.ok(section.title.length > 0, `${section.name} has a title`);
    assert.deepEqual(section.messages, [], `${section.name} shows no engine error`);
  }
  const heatmaps = Object.fromEntries(sections.map((s) => [s.name, s.heatmaps]));
  assert.deepEqual(heatmaps, { plane: 0, masks: 2, scaling: 2, multihead: 2, cross: 3, alignment: 4, efficient: 3,
      online: 0, block: 2, trainer: 2, model: 0 });
  await page.close();
  session.assertQuiet();
});

test('masks: the inspected row shows the engine\u2019s weights, and flipping a cell (click or keyboard) renormalises it', async () => {
  session.clear();
  const page = await openPage();
  const root = '[data-section="masks"]';
  const inputs = maskInputs(7);
  const row = 2; // the default inspected row
  const afterWeights = () => shownNumbers(page, `${root} td[data-field="weight-after"]`);

  const causal = engine.scaledDotProduct({ ...inputs, mask: 'causal' });
  const open = engine.scaledDotProduct({ ...inputs });
  assertClose(await afterWeights(), causal.weights[row], 'causal row');
  assertClose(await shownNumbers(page, `${root} td[data-field="weight-before"]`), open.weights[row], 'unmasked row');
  assertClose(await heatmapValues(page, heatmapTitled('masks', 'Weights with this mask')), causal.weights, 'masked heatmap');

  // Block key 0 for the inspected row by clicking its cell.
  await page.click(`${root} .aw-mask-cell[data-row="${row}"][data-col="0"]`);
  const custom = causalPattern(6);
  custom[row][0] = false;
  const flipped = engine.scaledDotProduct({ ...inputs, mask: custom });
  const shown = await afterWeights();
  assertClose(shown, flipped.weights[row], 'row after flipping key 0');
  assert.equal(shown[0], 0);
  assert.ok(Math.abs(shown.reduce((a, b) => a + b, 0) - 1) < 1e-12, 'the kept weights sum to 1 again');
  assert.notEqual(shown[1], causal.weights[row][1], 'the kept weights changed');
  assert.equal(await page.textContent(`${root} .aw-mask-cell[data-row="${row}"][data-col="0"]`), '\u2715');
  assert.equal(await page.$eval(`${root} [data-control="base"] select`, (select) => select.value), 'custom');

  // Flip it back from the keyboard.
  await page.focus(`${root} .aw-mask-cell[data-row="${row}"][data-col="0"]`);
  await page.keyboard.press('Enter');
  assertClose(await afterWeights(), causal.weights[row], 'row after flipping back');

  // Key padding: only the first 2 keys are real.
  await setRange(page, `${root} [data-control="keyLength"] input`, 2);
  const padded = engine.scaledDotProduct({ ...inputs, mask: causalPattern(6), keyLength: 2 });
  assertClose(await afterWeights(), padded.weights[row], 'row with keyLength 2');
  assert.equal(await page.$eval(`${root} [data-control="padding"] input`, (box) => box.checked), true);

  // A fully masked row: the engine gives zeros; −1e9 everywhere gives uniform weights.
  await page.click(`${root} button:text-is("Mask every key of this row")`);
  assert.deepEqual(await afterWeights(), [0, 0, 0, 0, 0, 0]);
  assert.match(await page.textContent(`${root} .aw-mask-empty`), /every key is masked for: sat \(row 3\)/);
  const uniform = engine.softmax({ x: [Array(6).fill(-1e9)], scale: 0.5 }).weights[0];
  assertClose(await shownNumbers(page, `${root} td[data-field="finite-all"]`), uniform, '-1e9 row');
  assert.deepEqual(await shownNumbers(page, `${root} td[data-field="masked-all"]`), [0, 0, 0, 0, 0, 0]);
  await page.close();
  session.assertQuiet();
});

test('why scale: the d_k slider shows the engine\u2019s weights for new random Q, K, and the tutorial examples carry their errata', async () => {
  session.clear();
  const page = await openPage();
  const root = '[data-section="scaling"]';
  await setRange(page, `${root} [data-control="dk"] input`, 2); // d_k = 8
  assert.equal(await page.textContent(`${root} [data-control="dk"] output`), '8');
  const inputs = scalingInputs(8, 3);
  const scaled = engine.scaledDotProduct({ ...inputs, scale: true });
  const unscaled = engine.scaledDotProduct({ ...inputs, scale: false });
  assertClose(await heatmapValues(page, heatmapTitled('scaling', 'Weights, softmax(QK\u1d40 / \u221ad_k)')), scaled.weights, 'scaled weights');
  assertClose(await heatmapValues(page, heatmapTitled('scaling', 'Weights, softmax(QK\u1d40)')), unscaled.weights, 'unscaled weights');

  const smallGap = `${root} [data-example="t001-small-gap"]`;
  assertClose(await shownNumbers(page, `${smallGap} td[data-field="weights"]`), engine.softmax({ x: [2, 0.5, 0.5, 0.5] }).weights, 'softmax [2, .5, .5, .5]');
  assert.equal((await page.$$(`${smallGap} td[data-erratum]`)).length, 4);
  const scaledExample = `${root} [data-example="t003-scaled"]`;
  const exact = engine.softmax({ x: [100, 95, 5, 3], scale: 0.125 });
  assertClose(await shownNumbers(page, `${scaledExample} td[data-field="scaled"]`), exact.scaled, 'scaled [100, 95, 5, 3]');
  assert.equal((await page.$$(`${scaledExample} td[data-erratum]`)).length, 4, 'the printed weights are all off; the printed scaled row is not');
  assert.equal((await page.$$(`${root} [data-example="t002-small"] td[data-erratum]`)).length, 0);
  await page.close();
  session.assertQuiet();
});

test('the tutorials\u2019 claims appear where they belong, those that fail marked, and "often exceed \u00b124" is counted on the engine\u2019s scores', async () => {
  session.clear();
  const page = await openPage();
  const claims = JSON.parse(await readFile(new URL('../../web/presets.json', import.meta.url), 'utf8')).claims;
  const sectionOf = { masks: 'masks', scaling: 'scaling', multihead: 'multihead', 'cross-attention': 'cross', efficient: 'efficient' };
  for (const [place, section] of Object.entries(sectionOf)) {
    const here = claims.filter((claim) => claim.shownIn === place);
    const shown = await page.$$eval(`[data-section="${section}"] .aw-claim`, (items) => items.map((item) => [item.dataset.claim, item.classList.contains('aw-claim-fails'), item.textContent]));
    assert.deepEqual(shown.map(([id, fails]) => [id, fails]), here.map((claim) => [claim.id, !claim.holds]), `${place}: its claims`);
    for (const [id, fails, text] of shown) assert.match(text, fails ? /Does not hold: / : /Holds[.:]/, id);
  }
  assert.match(await page.textContent('[data-section="efficient"] [data-claim="c002-attention-memory-estimate"]'), /3\.22 GB/);

  const root = '[data-section="scaling"]';
  const outside = `${root} .aw-stat:has(.aw-stat-label:text-is("unscaled scores outside [\u221224, 24]")) .aw-stat-value`;
  const spread = `${root} .aw-stat:has(.aw-stat-label:text-is("spread of QK\u1d40 / \u221ad_k")) .aw-stat-value`;
  const prompt = await page.textContent('#scaling .try-this');
  for (const [index, dk] of [[5, 64], [8, 512]]) {
    await setRange(page, `${root} [data-control="dk"] input`, index);
    const scores = engine.scaledDotProduct({ ...scalingInputs(dk, 3), scale: false }).scores.flat();
    assert.equal(Number(await page.textContent(outside)), scores.filter((x) => Math.abs(x) > 24).length, `d_k = ${dk}`);
    // The prompt's "0.98 at 64, 0.99 at 512" is what the page shows, and the standard deviation of the scaled scores.
    const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
    const sd = Math.sqrt(scores.reduce((a, x) => a + (x - mean) ** 2, 0) / scores.length) / Math.sqrt(dk);
    const shown = await page.textContent(spread);
    assert.ok(Math.abs(Number(shown) - sd) <= 0.005 + 1e-9, `d_k = ${dk}: shown ${shown}, computed ${sd}`);
    assert.ok(prompt.includes(`${shown} at ${dk}`), `the prompt says ${shown} at ${dk}`);
  }
  await page.close();
  session.assertQuiet();
});

test('multi-head: choosing 4 heads and stepping to the concat and W_O shows the engine\u2019s matrices', async () => {
  session.clear();
  const page = await openPage();
  const root = '[data-section="multihead"]';
  await page.selectOption(`${root} [data-control="numHeads"] select`, '4');
  const result = engine.multiHead({ ...multiheadInputs(5), numHeads: 4 });
  assert.equal((await page.$$(`${root} .aw-mh-head`)).length, 4);
  for (let i = 0; i < 3; i++) await page.click(`${root} button[aria-label="Step forward"]`);
  assert.match(await page.textContent(`${root} .aw-mh-step`), /^4\. Concatenate/);
  const concat = await shownNumbers(page, `${root} figure[data-matrix="Concat"] tbody td`);
  assertClose(concat, result.concat, 'concat');
  assert.equal(await page.$eval(`${root} figure[data-matrix="Concat"] tbody td`, (td) => td.className), 'aw-head-0');
  assertClose(await shownNumbers(page, `${root} figure[data-matrix="head 3 output"] tbody td`), result.heads[2].output, 'head 3 output');
  await page.focus(`${root} button[aria-label="Step forward"]`);
  await page.keyboard.press('Enter');
  assert.match(await page.textContent(`${root} .aw-mh-step`), /^5\. Mix the heads/);
  assertClose(await shownNumbers(page, `${root} figure[data-matrix="Output"] tbody td`), result.output, 'output');
  await page.close();
  session.assertQuiet();
});

test('self vs cross attention: chat looks at cat, and editing a vector recomputes the cross-attention', async () => {
  session.clear();
  const page = await openPage();
  const root = '[data-section="cross"]';
  const cross = engine.scaledDotProduct({ q: DECODER_VECTORS, k: ENCODER_VECTORS, v: ENCODER_VECTORS });
  assert.match(await page.textContent(`${root} li[data-query="1"]`), /^chat → cat/);
  assertClose(await shownNumbers(page, `${root} li[data-query="1"]`), [cross.weights[1][1]], 'chat → cat');
  const decoderSelf = engine.scaledDotProduct({ q: DECODER_VECTORS, k: DECODER_VECTORS, v: DECODER_VECTORS, mask: 'causal' });
  assertClose(await heatmapValues(page, heatmapTitled('cross', 'Decoder self-attention (French \u2192 French)')), decoderSelf.weights, 'decoder self');

  // Take the "cat" feature away from the English "cat".
  await page.click(`${root} summary`);
  await page.fill(`${root} input[aria-label="encoder vector, row cat, column cat"]`, '0');
  const encoder = ENCODER_VECTORS.map((row) => row.slice());
  encoder[1][1] = 0;
  const edited = engine.scaledDotProduct({ q: DECODER_VECTORS, k: encoder, v: encoder });
  assertClose(await heatmapValues(page, heatmapTitled('cross', 'Cross-attention (French queries \u2192 English keys)')), edited.weights, 'edited cross');
  assert.doesNotMatch(await page.textContent(`${root} li[data-query="1"]`), /^chat → cat/);
  await page.close();
  session.assertQuiet();
});

test('Bahdanau vs Luong: the compared row shows each method\u2019s engine weights, for hand-set and random parameters', async () => {
  session.clear();
  const page = await openPage();
  const root = '[data-section="alignment"]';
  await page.selectOption(`${root} [data-control="row"] select`, '3');
  const query = DECODER_VECTORS;
  const keys = ENCODER_VECTORS;
  const check = async (params, label) => {
    const expected = {
      additive: engine.additive({ query, keys, ...params.additive }),
      dot: engine.luong({ query, keys, method: 'dot' }),
      general: engine.luong({ query, keys, method: 'general', ...params.general }),
      concat: engine.luong({ query, keys, method: 'concat', ...params.concat }),
    };
    for (const [method, result] of Object.entries(expected)) {
      assertClose(await shownNumbers(page, `${root} td[data-method="${method}"]`), result.weights[3], `${label} ${method}`);
    }
  };
  await check(handParameters(), 'hand-set');
  await page.selectOption(`${root} [data-control="params"] select`, 'random');
  await check(randomParameters(11), 'random');
  await page.close();
  session.assertQuiet();
});

test('efficient variants: the window slider changes the computed cells as the engine masks them, and long sequences are measured in a worker while the page stays usable', async () => {
  session.clear();
  const page = await openPage();
  const root = '[data-section="efficient"]';
  assert.equal(await page.$$eval(`${root} .aw-long tbody tr`, (rows) => rows.length), 0, 'no measurement before the button');
  await setRange(page, `${root} [data-control="window"] input`, 1);
  const local = engine.scaledDotProduct({ ...efficientInputs(12, 21), window: 1 });
  const computed = local.scaled.flat().filter((value) => value !== -Infinity).length;
  assert.equal(await page.textContent(`${root} [data-count="local"]`), `computes ${computed} of 144 query\u2013key scores`);
  assertClose(await heatmapValues(page, `${root} [data-variant="local"] figure`), local.scaled, 'local scaled scores');
  assert.equal(await page.$$eval(`${root} [data-variant="local"] .aw-heat-cell rect[fill^="url("]`, (rects) => rects.length), 144 - computed,
    'the cells outside the window are drawn as not computed');

  await setRange(page, `${root} [data-control="T"] input`, 6);
  const strided = engine.scaledDotProduct({ ...efficientInputs(6, 21), stride: 4 });
  assertClose(await heatmapValues(page, `${root} [data-variant="strided"] figure`), strided.scaled, 'strided scaled scores, T = 6');

  // The measurement is never checked for speed, only for what it reports:
  // every size, memory that agrees with what each method must hold, and a
  // page that answers while the worker measures.
  await page.getByRole('button', { name: 'Measure long sequences' }).click();
  await setRange(page, `${root} [data-control="T"] input`, 5);
  assert.equal(await page.textContent(`${root} [data-count="full"]`), 'computes 25 of 25 query\u2013key scores', 'the section answers during the measurement');
  await page.waitForSelector(`${root} .aw-long [role="status"]:has-text("Done.")`, { timeout: 180000 });
  const table = await page.$$eval(`${root} .aw-long tbody tr`, (rows) => rows.map((row) => ({
    T: Number(row.dataset.t), cells: [...row.querySelectorAll('td')].map((td) => td.textContent),
  })));
  assert.deepEqual(table.map((row) => row.T), [256, 512, 1024, 2048, 4096, 8192, 16384]);
  const MB = 1024 * 1024;
  const d = 32;
  for (const { T, cells } of table) {
    const full = T <= 4096;
    const [fullMs, fullMb, onlineMs, onlineMb, linearMs, linearMb] = full ? cells : ['', '', ...cells.slice(1)];
    for (const value of full ? [fullMs, onlineMs, linearMs] : [onlineMs, linearMs]) assert.ok(Number(value) > 0, `T ${T}: ${cells}`);
    // Each holds q, k, v and the output (4·T·d bytes each); full also the T × T weights.
    assert.ok(Number(onlineMb) * MB >= 0.99 * 16 * T * d && Number(linearMb) * MB >= 0.99 * 16 * T * d, `T ${T}: ${cells}`);
    if (full) assert.ok(Number(fullMb) * MB >= 0.99 * 4 * T * T, `T ${T}: full holds its weights: ${cells}`);
    else assert.equal(cells[0], `not run: the weights alone would take ${(4 * T * T) / MB} MB`);
  }
  const longest = table.at(-1).cells;
  assert.ok(Number(longest[2]) < 16, `online attention at T = 16384 holds ${longest[2]} MB`);
  assert.match(await page.getAttribute(`${root} .aw-long .aw-line-chart svg`, 'aria-label'), /online \(tiled, running max and sum\): [\d.]+ ms at T = 16384/);
  await page.close();
  session.assertQuiet();
});

/** The online softmax of row i over the keys of the first `tiles` tiles, in
 * plain float64: [max, sum, e^(s − max) per key]. */
function softmaxSoFar({ q, k }, i, keysSeen) {
  const scores = k.slice(0, keysSeen).map((key) => (q[i][0] * key[0] + q[i][1] * key[1]) / Math.SQRT2);
  const max = Math.max(...scores);
  const exps = scores.map((s) => Math.exp(s - max));
  return { max, sum: exps.reduce((a, b) => a + b, 0), exps };
}

test('online softmax: each tile\u2019s bars are e^(s \u2212 m), earlier ones shrink by e^(m \u2212 m\u2032), and it ends on the plain softmax\u2019s output', async () => {
  session.clear();
  const page = await openPage();
  const root = page.locator('[data-section="online"]');
  await root.scrollIntoViewIfNeeded();
  const problem = onlineProblem({ tile: 2, seed: 3 });
  const forward = root.getByRole('button', { name: 'Step forward' });
  const bars = () => root.locator('.aw-online-bar').evaluateAll((rects) => rects.map((rect) => ({
    key: Number(rect.dataset.key), value: Number(rect.dataset.value), shown: !rect.classList.contains('aw-online-hidden'),
  })));
  const readoutNumbers = async () => (await root.locator('.aw-online-readout').textContent()).match(/m = (\S+), \u2113 = (\S+) /).slice(1).map(parseShown);

  await forward.click(); // tile 1: keys 1 and 2
  const first = softmaxSoFar(problem, 0, 2);
  assert.deepEqual((await bars()).filter((bar) => bar.shown).map((bar) => bar.key), [0, 1], 'only the first tile\u2019s keys have bars');
  assertClose((await bars()).filter((bar) => bar.shown).map((bar) => bar.value), first.exps, 'e^(s \u2212 m) of tile 1');
  assertClose(await readoutNumbers(), [first.max, first.sum].map((x) => Number(x.toFixed(3))), 'm and l after tile 1', 5e-4);

  await forward.click(); // tile 2: keys 3 and 4
  const second = softmaxSoFar(problem, 0, 4);
  const shown = (await bars()).filter((bar) => bar.shown);
  assert.deepEqual(shown.map((bar) => bar.key), [0, 1, 2, 3]);
  assertClose(shown.filter((bar) => bar.key >= 2).map((bar) => bar.value), second.exps.slice(2), 'e^(s \u2212 m\u2032) of tile 2');
  const transform = await root.locator('.aw-online-tile[data-tile="0"]').evaluate((group) => group.style.transform);
  assertClose([Number(/scaleY\((\S+)\)/.exec(transform)[1])], [Math.exp(first.max - second.max)],
    'the first tile\u2019s bars scaled by e^(m \u2212 m\u2032) (CSS keeps six digits)', 1e-5);
  assertClose(await readoutNumbers(), [second.max, second.sum].map((x) => Number(x.toFixed(3))), 'm and l after tile 2', 5e-4);
  assert.match(await root.locator('.aw-online-equations').textContent(), /^s\[The, sat\]/);

  // Another query: its own equations and bars.
  await root.getByLabel('Query').selectOption({ label: '3. sat' });
  assert.match(await root.locator('.aw-online-equations').textContent(), /^s\[sat, sat\]/);
  assertClose((await bars()).filter((bar) => bar.key >= 2 && bar.shown).map((bar) => bar.value), softmaxSoFar(problem, 2, 4).exps.slice(2), 'sat\u2019s tile 2');

  // One tile per key: six tiles, then divide and compare.
  await root.locator('[data-control="tile"] input').press('Home');
  await root.locator('.aw-player input[type="range"]').press('End');
  assert.match(await root.locator('.aw-online-title').textContent(), /^Step 9 of 9: The same output as the plain softmax/);
  const plain = engine.scaledDotProduct({ q: problem.q, k: problem.k, v: problem.v }).output;
  const online = engine.onlineSoftmax({ ...problem, tile: 1 });
  assertClose(online.plainOutput, plain, 'the section\u2019s plain output is scaledDotProduct\u2019s');
  assertClose(online.output, plain, 'online equals plain', 1e-14);
  await page.close();
  session.assertQuiet();
});

test('setState reproduces a view, and getState reads it back', async () => {
  session.clear();
  const page = await openPage();
  const states = await page.evaluate(() => {
    const { masks, efficient, multihead, scaling } = window.awWidgets;
    masks.setState({ base: 'none', row: 0 });
    efficient.setState({ T: 8, window: 0 });
    multihead.setState({ numHeads: 8, step: 99 });
    scaling.setState({ dk: 3 }); // not a choice: falls back to 64
    return { masks: masks.getState(), efficient: efficient.getState(), multihead: multihead.getState(),
        scaling: scaling.getState() };
  });
  assert.equal(states.masks.base, 'none');
  assert.deepEqual(states.efficient, { T: 8, window: 0, stride: 4, seed: 21 });
  assert.deepEqual(states.multihead, { numHeads: 8, seed: 5, step: 4 }, 'a step past the end shows the last step');
  assert.equal(states.scaling.dk, 64);
  const open = engine.scaledDotProduct({ ...maskInputs(7) });
  assertClose(await shownNumbers(page, '[data-section="masks"] td[data-field="weight-after"]'), open.weights[0], 'unmasked row 0');
  assert.equal(await page.textContent('[data-section="efficient"] [data-count="local"]'), 'computes 8 of 64 query\u2013key scores');
  assert.match(await page.textContent('[data-section="multihead"] .aw-mh-step'), /^5\. /);
  await page.close();
  session.assertQuiet();
});
