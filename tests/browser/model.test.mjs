// "Attention in a real model" on the page, driven as a learner would: the
// chapter fetches the model only when it is opened; text typed key by key
// gives the next byte's ten likeliest values and every head's weights, and
// the temperature slider moved by keys changes the probabilities; the grid
// is 2 layers × 4 heads, all on one 1440 × 900 screen; pointing at a cell or
// moving through a head with the arrow keys names the exact weight; a click
// on a head opens it in the walkthrough on the text. What is
// right is the engine's own run in Node on models/kjv-genesis, the file the
// page serves a copy of.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { REPO, heatmapValues, startSession } from './harness.mjs';
import { loadAttention } from '../../web/lib/attention-node.js';

const ROOT = '#model [data-section="model"]';
const MODEL_FILE = 'dist/models/kjv-genesis/model.safetensors';
let session;
let attn;
let model;

before(async () => {
  session = await startSession({ viewport: { width: 1440, height: 900 } });
  attn = await loadAttention();
  model = attn.model(join(REPO, 'models', 'kjv-genesis'));
});

after(async () => {
  model?.dispose();
  await session?.close();
});

/** The ten likeliest next bytes after text at temperature t, as the page writes them. */
function expectedTop(text, t) {
  const { logits } = model.run({ text });
  const { weights } = attn.softmax({ x: logits[logits.length - 1], scale: 1 / t });
  const top = weights.map((p, id) => [p, id]).sort((a, b) => b[0] - a[0] || a[1] - b[1]).slice(0, 10);
  const labels = model.labels({ ids: top.map(([, id]) => id) });
  return top.map(([p], k) => [labels[k], `${(p * 100).toPrecision(4)}%`]);
}

const shownTop = (page) => page.$$eval(`${ROOT} .aw-model-top tbody tr`, (rows) => rows.map((row) => [
  row.querySelector('.aw-model-byte').textContent, row.querySelector('.aw-model-p').textContent,
]));

async function openChapter() {
  const page = await session.openReady('index.html#model');
  await page.waitForSelector(`${ROOT}[data-ready="true"]`);
  return page;
}

/** Which of the text's tokens are marked as the one reading and the one read, by index. */
const markedTokens = (page) => page.$$eval(`${ROOT} .aw-model-token`, (chips) => Object.fromEntries(
  ['query', 'key'].map((role) => [role, chips.findIndex((chip) => chip.dataset.role === role)]),
));

/** Replaces the text with `text`, typed key by key. */
async function typeText(page, text) {
  await page.click(`${ROOT} .aw-model-text`);
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Backspace');
  await page.keyboard.type(text);
}

test('the model is fetched only when its chapter is opened', async () => {
  const page = await session.newPage();
  const requested = [];
  page.on('request', (request) => requested.push(new URL(request.url()).pathname));
  await page.goto(session.url('index.html'));
  await page.waitForSelector('html[data-ready="true"]');
  assert.ok(!requested.some((path) => path.endsWith('model.safetensors')), 'no model before the chapter');
  assert.ok(!requested.some((path) => /\/lib\/attention(-relaxed|-scalar)?\.wasm$/.test(path)),
            'nor the engine with the model (the page runs attention-page.wasm)');
  await page.click('.path-bar a[href="#model"]');
  await page.waitForSelector(`${ROOT}[data-ready="true"]`);
  assert.ok(requested.includes(`/${MODEL_FILE}`), `the chapter fetched ${MODEL_FILE}`);
  await page.close();
  session.assertQuiet();
});

test('typed text gives the engine\u2019s ten likeliest next bytes, and the temperature keys change them', async () => {
  const page = await openChapter();
  const text = 'And God said, Let there be ligh';
  await typeText(page, text);
  await page.waitForFunction(([root, n]) => document.querySelectorAll(`${root} .aw-model-token`).length === n,
                             [ROOT, text.length]);
  const tokens = await page.$$eval(`${ROOT} .aw-model-token`, (nodes) => nodes.map((node) => node.textContent));
  assert.deepEqual(tokens, model.labels({ text }));
  assert.deepEqual(await shownTop(page), expectedTop(text, 1));
  assert.equal((await shownTop(page))[0][0], 't', 'the model knows its Genesis');

  const slider = `${ROOT} [data-control="temperature"] input`;
  await page.focus(slider);
  for (let k = 0; k < 5; k++) await page.keyboard.press('ArrowRight');
  assert.equal(await page.inputValue(slider), '1.5');
  assert.deepEqual(await shownTop(page), expectedTop(text, 1.5));
  await page.keyboard.press('Home');
  assert.equal(await page.inputValue(slider), '0.1');
  const cold = await shownTop(page);
  assert.deepEqual(cold, expectedTop(text, 0.1));
  assert.notDeepEqual(cold, expectedTop(text, 1.5), 'the temperature changed the probabilities');

  // A non-ASCII character is its UTF-8 bytes, each a token.
  await typeText(page, '\u00e9t\u00e9');
  await page.waitForFunction((root) => document.querySelectorAll(`${root} .aw-model-token`).length === 5, ROOT);
  assert.deepEqual(await shownTop(page), expectedTop('\u00e9t\u00e9', 0.1));
  await page.close();
  session.assertQuiet();
});

test('every layer and head is a heatmap in a 2 × 4 grid on one screen, each cell naming its exact weight', async () => {
  const page = await openChapter();
  const text = 'In the beginning';
  await typeText(page, text);
  await page.waitForFunction(([root, n]) => document.querySelectorAll(`${root} .aw-model-token`).length === n,
                             [ROOT, text.length]);
  const { attention } = model.run({ text });
  const labels = model.labels({ text });
  await page.locator(`${ROOT} .aw-model-grid`).scrollIntoViewIfNeeded();
  const boxes = await page.$$eval(`${ROOT} .aw-model-canvas`, (canvases) => canvases.map((canvas) => {
    const box = canvas.getBoundingClientRect();
    return { layer: canvas.dataset.layer, head: canvas.dataset.head, x: box.left, top: box.top, bottom: box.bottom };
  }));
  assert.equal(boxes.length, 8);
  assert.equal(new Set(boxes.map((box) => box.top)).size, 2, 'two rows: the layers');
  assert.equal(new Set(boxes.map((box) => box.x)).size, 4, 'four columns: the heads');
  const captions = await page.$$eval(`${ROOT} .aw-model-head figcaption`, (nodes) => nodes.map((node) => node.textContent));
  assert.deepEqual(captions, [1, 2].flatMap((l) => [1, 2, 3, 4].map((h) => `Layer ${l}, head ${h}`)));
  const top = Math.min(...boxes.map((box) => box.top));
  const bottom = Math.max(...boxes.map((box) => box.bottom));
  assert.ok(bottom - top <= 900 && top >= 0 && bottom <= 900, `all eight heads on one screen (${top} to ${bottom} px)`);

  // The pointer on layer 2, head 3, at query 10 and key 5.
  const n = text.length;
  const canvas = page.locator(`${ROOT} .aw-model-canvas[data-layer="1"][data-head="2"]`);
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + ((4 + 0.5) / n) * box.width, box.y + ((9 + 0.5) / n) * box.height);
  const detail = `${ROOT} .aw-model-detail`;
  await page.waitForFunction((selector) => document.querySelector(selector).dataset.query === '9', detail);
  assert.equal(await page.textContent(detail), `Layer 2, head 3: \u201c${labels[9]}\u201d (token 10) attends to `
    + `\u201c${labels[4]}\u201d (token 5) with weight ${attention[1][2][9][4]}.`);
  assert.deepEqual(await markedTokens(page), { query: 9, key: 4 }, 'the two tokens are marked in the text\u2019s tokens');

  // The keyboard: layer 1, head 1 focused, then down twice and right once.
  await page.focus(`${ROOT} .aw-model-canvas[data-layer="0"][data-head="0"]`);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.textContent(detail), `Layer 1, head 1: \u201c${labels[2]}\u201d (token 3) attends to `
    + `\u201c${labels[1]}\u201d (token 2) with weight ${attention[0][0][2][1]}.`);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.textContent(detail), `Layer 1, head 1: \u201c${labels[2]}\u201d (token 3) cannot read `
    + `\u201c${labels[3]}\u201d (token 4), which comes after it (weight 0).`);
  await page.close();
  session.assertQuiet();
});

test('a click on a head opens it in the walkthrough on the text, whose weights are the head\u2019s', async () => {
  const page = await openChapter();
  const text = 'God saw';
  await typeText(page, text);
  await page.waitForFunction(([root, n]) => document.querySelectorAll(`${root} .aw-model-token`).length === n,
                             [ROOT, text.length]);
  await page.click(`${ROOT} .aw-model-canvas[data-layer="1"][data-head="2"]`);
  await page.waitForFunction(() => /[?&]v=/.test(window.location.search));
  const shown = await page.evaluate(() => window.awWidgets.walkthrough.getState());
  assert.match(await page.textContent('#walkthrough .aw-source'), /^Not the example\u2019s numbers/);
  const { q, k, v } = model.head(1, 2, { text });
  assert.deepEqual(shown.values.tokens, model.labels({ text }));
  assert.deepEqual(shown.values.fields, { q, k, v, mask: 'causal' });
  assert.equal(await page.evaluate(() => document.activeElement.id), 'walkthrough-title');
  await page.locator('#walkthrough .aw-stage-button', { hasText: 'Weights \u00b7 V' }).click();
  await page.locator('#walkthrough').getByRole('tab', { name: 'Heatmaps' }).click();
  const weights = await heatmapValues(page, '#walkthrough figure.aw-heatmap:has(figcaption:text-is("Attention weights"))');
  const { attention } = model.run({ text });
  weights.forEach((row, i) => row.forEach((w, j) => {
    assert.ok(Math.abs(w - attention[1][2][i][j]) < 1e-12, `weight [${i}][${j}]: ${w} and ${attention[1][2][i][j]}`);
  }));
  await page.close();
  session.assertQuiet();
});

test('on a phone a tap on a head names the cell tapped, and a button under it opens the head in the walkthrough',
     async () => {
  const page = await session.newPage();
  await page.setViewportSize({ width: 375, height: 812 });
  await page.goto(session.url('index.html#model'));
  await page.waitForSelector(`${ROOT}[data-ready="true"]`);
  const text = 'Let there be';
  await typeText(page, text);
  await page.waitForFunction(([root, n]) => document.querySelectorAll(`${root} .aw-model-token`).length === n,
                             [ROOT, text.length]);
  const { attention } = model.run({ text });
  const labels = model.labels({ text });
  const canvas = page.locator(`${ROOT} .aw-model-canvas[data-layer="0"][data-head="1"]`);
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const n = text.length;
  // Real taps, as the screen sends them (pointer events of type touch): on query 7 and key 3.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 1 });
  const tap = async (x, y) => {
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x, y }] });
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  };
  await tap(box.x + ((3 + 0.5) / n) * box.width, box.y + ((7 + 0.5) / n) * box.height);
  const open = page.locator(`${ROOT} .aw-model-open-head`);
  await open.waitFor();
  assert.equal(await page.textContent(`${ROOT} .aw-model-detail`), `Layer 1, head 2: \u201c${labels[7]}\u201d (token 8) `
    + `attends to \u201c${labels[3]}\u201d (token 4) with weight ${attention[0][1][7][3]}.`);
  assert.ok(!new URL(page.url()).searchParams.has('v'), 'the tap stayed in the chapter');
  assert.equal(await open.textContent(), 'Open layer 1, head 2 in the walkthrough');
  const button = await open.boundingBox();
  await tap(button.x + button.width / 2, button.y + button.height / 2);
  await page.waitForFunction(() => /[?&]v=/.test(window.location.search));
  const shown = await page.evaluate(() => window.awWidgets.walkthrough.getState());
  const { q, k, v } = model.head(0, 1, { text });
  assert.deepEqual(shown.values.fields, { q, k, v, mask: 'causal' });
  await page.close();
  session.assertQuiet();
});

test('a head of a text longer than the walkthrough takes says so under the heads', async () => {
  const page = await openChapter();
  await typeText(page, 'In the beginning God');
  await page.waitForFunction((root) => document.querySelectorAll(`${root} .aw-model-token`).length === 20, ROOT);
  await page.focus(`${ROOT} .aw-model-canvas[data-layer="0"][data-head="3"]`);
  await page.keyboard.press('Enter');
  assert.equal(await page.textContent(`${ROOT} .aw-model-open`), 'The walkthrough follows up to 16 tokens, and this '
    + 'text has 20: shorten it to open layer 1, head 4 there.');
  assert.ok(!new URL(page.url()).searchParams.has('v'), 'the walkthrough kept its example\u2019s numbers');
  await page.close();
  session.assertQuiet();
});

test('an empty text and one too long for the heatmaps each get a message where the learner types', async () => {
  const page = await openChapter();
  await typeText(page, '');
  const message = `${ROOT} .aw-model-body > .aw-message`;
  await page.waitForSelector(`${message}:not([hidden])`);
  assert.match(await page.textContent(message), /Type some text/);
  await typeText(page, 'x'.repeat(65));
  await page.waitForFunction((selector) => /65 bytes/.test(document.querySelector(selector).textContent), message);
  assert.match(await page.textContent(message), /up to 64/);
  await page.keyboard.press('Backspace');
  await page.waitForSelector(`${message}[hidden]`, { state: 'attached' });
  assert.deepEqual(await shownTop(page), expectedTop('x'.repeat(64), 1));
  await page.close();
  session.assertQuiet();
});
