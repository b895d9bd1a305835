// Touching the mechanism, as a learner does: the query dragged on the plane
// with the mouse, with a finger on a phone and with the arrow keys; the
// temperature slider moved with the keyboard; the walkthrough and the
// multi-head section with attention drawn as lines between the tokens.
// After each move the test reads what the page shows (the points' labels,
// the table, the output point, the lines) and checks it against values it
// computes itself: scores q·kᵢ, a softmax of the scores divided by τ, the
// output Σ wᵢvᵢ.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { heatmapValues, parseShown, startSession } from './harness.mjs';
import { loadAttention } from '../../web/lib/attention-node.js';
import { inputsFor as multiheadInputs } from '../../web/widgets/multihead.js';

const PLANE = '[data-section="plane"]';
const SQRT2 = Math.sqrt(2);

let session;

before(async () => {
  session = await startSession({ viewport: { width: 1440, height: 900 } });
});

after(async () => {
  await session?.close();
});

async function openPage(path = 'index.html') {
  const page = await session.open(path);
  await page.waitForSelector('html[data-ready="true"]');
  return session.mountSections(page);
}

// ---- What the test computes on its own ----

const dot = (a, b) => a.reduce((sum, x, i) => sum + x * b[i], 0);

function softmax(xs) {
  const top = Math.max(...xs);
  const exps = xs.map((x) => Math.exp(x - top));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
}

function attention(q, keys, values, temperature) {
  const scores = keys.map((k) => dot(q, k));
  const weights = softmax(scores.map((s) => s / temperature));
  const output = [0, 1].map((c) => weights.reduce((sum, w, i) => sum + w * values[i][c], 0));
  return { scores, weights, output };
}

function assertNear(actual, expected, message, tolerance = 1e-12) {
  assert.equal(actual.length, expected.length, `${message}: ${actual.length} numbers, expected ${expected.length}`);
  actual.forEach((a, i) => assert.ok(Math.abs(a - expected[i]) <= tolerance * Math.max(1, Math.abs(expected[i])),
    `${message}[${i}]: shown ${a}, expected ${expected[i]}`));
}

/** Three decimals with a typographic minus, as the page shows numbers. */
const shown3 = (x) => {
  const text = x.toFixed(3);
  return /^-0\.000$/.test(text) ? '0.000' : text.replace('-', '\u2212');
};

// ---- What the page shows ----

/** "(1.500, −0.250)" -> [1.5, -0.25] */
const parsePair = (text) => {
  const match = /\(([^,]+), ([^)]+)\)/.exec(text);
  assert.ok(match, `no coordinates in ${JSON.stringify(text)}`);
  return [parseShown(match[1]), parseShown(match[2])];
};

/** The positions, scores, weights and output as the plane section shows them. */
async function readPlane(page) {
  const shown = await page.evaluate((root) => {
    const section = document.querySelector(root);
    const cells = (field) => [...section.querySelectorAll(`td[data-field="${field}"]`)];
    const numbers = (field) => cells(field).map((td) => {
      const span = td.querySelector('[data-value]');
      return { text: span.textContent, value: span.dataset.value };
    });
    return {
      q: section.querySelector('[data-point="q"]').getAttribute('aria-label'),
      k: cells('k').map((td) => td.textContent),
      v: cells('v').map((td) => td.textContent),
      scores: numbers('score'),
      scaled: numbers('scaled'),
      weights: numbers('weight'),
      output: [...section.querySelectorAll('[data-field="output"] [data-value]')].map((span) => ({ text: span.textContent, value: span.dataset.value })),
      temperature: section.querySelector('[data-control="temperature"] output').textContent,
    };
  }, PLANE);
  return {
    ...shown,
    q: parsePair(shown.q),
    k: shown.k.map(parsePair),
    v: shown.v.map(parsePair),
  };
}

/** Checks every number of the section against the test's own computation at temperature τ. */
function assertPlaneShows(shown, temperature, message) {
  const expected = attention(shown.q, shown.k, shown.v, temperature);
  const values = (list) => list.map((item) => parseShown(item.value));
  assertNear(values(shown.scores), expected.scores, `${message}: scores`);
  assertNear(values(shown.scaled), expected.scores.map((s) => s / temperature), `${message}: scores ÷ τ`);
  assertNear(values(shown.weights), expected.weights, `${message}: weights`);
  assertNear(values(shown.output), expected.output, `${message}: output`);
  assert.deepEqual(shown.weights.map((w) => w.text), expected.weights.map(shown3), `${message}: weights to 3 decimals`);
  assert.deepEqual(shown.output.map((w) => w.text), expected.output.map(shown3), `${message}: output to 3 decimals`);
  return expected;
}

/** The centre of a point on screen, in CSS pixels of the viewport. */
async function centreOf(page, selector) {
  const box = await page.locator(`${PLANE} ${selector} .aw-plane-dot`).boundingBox();
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

/** Screen pixels per plane unit, from two points whose coordinates the page states. */
async function pixelsPerUnit(page, shown) {
  const q = await centreOf(page, '[data-point="q"]');
  const k1 = await centreOf(page, '[data-point="k1"]');
  return {
    x: (k1.x - q.x) / (shown.k[0][0] - shown.q[0]),
    y: (k1.y - q.y) / (shown.k[0][1] - shown.q[1]),
  };
}

/** Is the point inside (or on) the convex polygon drawn as `points`? */
function insidePolygon([px, py], polygon) {
  const sides = polygon.map(([x1, y1], i) => {
    const [x2, y2] = polygon[(i + 1) % polygon.length];
    return (x2 - x1) * (py - y1) - (y2 - y1) * (px - x1);
  });
  return sides.every((s) => s >= -1e-9) || sides.every((s) => s <= 1e-9);
}

async function drawnOutputAndHull(page) {
  return page.evaluate((root) => {
    const section = document.querySelector(root);
    const hull = section.querySelector('.aw-plane-hull').getAttribute('points').trim().split(/\s+/).map((pair) => pair.split(',').map(Number));
    const [, x, y] = /translate\(([^ ]+) ([^)]+)\)/.exec(section.querySelector('[data-point="output"]').getAttribute('transform'));
    return { hull, output: [Number(x), Number(y)] };
  }, PLANE);
}

test('dragging the query with the mouse moves it under the pointer, and the scores, weights and output follow: the softmax of q·kᵢ / √2 and Σ wᵢvᵢ, inside the hull of the values', async () => {
  session.clear();
  const page = await openPage();
  await page.locator(PLANE).scrollIntoViewIfNeeded();
  const start = await readPlane(page);
  assert.deepEqual(start.q, [1, 0.5]);
  assertPlaneShows(start, SQRT2, 'at the start');
  assert.match(start.temperature, /1\.414/);

  // Take the query by its centre and move it to (−0.5, 2), in ten moves.
  const scale = await pixelsPerUnit(page, start);
  const from = await centreOf(page, '[data-point="q"]');
  const target = [-0.5, 2];
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(from.x + (target[0] - 1) * scale.x, from.y + (target[1] - 0.5) * scale.y, { steps: 10 });
  await page.mouse.up();

  const moved = await readPlane(page);
  assertNear(moved.q, target, 'the query is where it was dropped', 0.02);
  assert.deepEqual(moved.k, start.k, 'the keys stayed where they were');
  const expected = assertPlaneShows(moved, SQRT2, 'after the drag');
  // k2 = (−1, 1.5) points the way the query now points: it takes the most weight.
  assert.equal(expected.weights.indexOf(Math.max(...expected.weights)), 1);

  const drawn = await drawnOutputAndHull(page);
  assert.ok(drawn.hull.length >= 3, 'the hull of the values is drawn');
  assert.ok(insidePolygon(drawn.output, drawn.hull), `the output ${drawn.output} is inside the hull ${JSON.stringify(drawn.hull)}`);
  // The state carries the positions, for the embed and its snippets.
  const state = await page.evaluate(() => window.awWidgets.plane.getState());
  assert.deepEqual(state.q, moved.q);
  await page.close();
  session.assertQuiet();
});

test('the arrow keys move the focused query by 0.1, or 0.5 with Shift; its label reads the new coordinates and the weights follow', async () => {
  session.clear();
  const page = await openPage();
  // Reach the query from the reset button with Tab, past the four keys.
  await page.locator(`${PLANE} button:text-is("Back to the start")`).click();
  for (let i = 0; i < 5; i++) await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.point), 'q');
  // The focus is visible: the ring around the point is drawn.
  const ring = await page.$eval(`${PLANE} [data-point="q"] .aw-plane-ring`, (node) => getComputedStyle(node).stroke);
  assert.equal(ring, 'rgb(224, 123, 0)');

  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('Shift+ArrowDown');
  const shown = await readPlane(page);
  assert.deepEqual(shown.q, [1.3, 0.1]);
  assert.equal(await page.getAttribute(`${PLANE} [data-point="q"]`, 'aria-label'), 'the query q at (1.300, 0.100)');
  assertPlaneShows(shown, SQRT2, 'after the arrow keys');

  // A key moves the same way: k3 from (0.5, −1.5) to (0.5, −1).
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Shift+Tab');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.point), 'k3');
  await page.keyboard.press('Shift+ArrowUp');
  const keyMoved = await readPlane(page);
  assert.deepEqual(keyMoved.k[2], [0.5, -1]);
  assertPlaneShows(keyMoved, SQRT2, 'after moving k3');
  await page.close();
  session.assertQuiet();
});

test('moved onto a key with the keys, the query keeps its name apart from the key\u2019s', async () => {
  session.clear();
  const page = await openPage();
  await page.focus(`${PLANE} [data-point="q"]`);
  // The Try this steps: four Shift+← and two Shift+↑ bring q onto k2.
  for (let i = 0; i < 4; i++) await page.keyboard.press('Shift+ArrowLeft');
  for (let i = 0; i < 2; i++) await page.keyboard.press('Shift+ArrowUp');
  const labels = await page.$$eval(`${PLANE} svg.aw-plane-svg:first-of-type .aw-plane-label`, (texts) => texts.map((text) => {
    const box = text.getBoundingClientRect();
    return { name: text.textContent, left: box.left, right: box.right, top: box.top, bottom: box.bottom };
  }));
  assert.ok(labels.some(({ name }) => name === 'q') && labels.some(({ name }) => name === 'k2'));
  labels.forEach((a, i) => labels.slice(i + 1).forEach((b) => assert.ok(
    a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top, `${a.name} and ${b.name} overlap`)));
  await page.close();
  session.assertQuiet();
});

test('the temperature slider divides the scores by τ: at 0.25 the weights sharpen, at 10 they flatten, each the softmax of the scores ÷ τ', async () => {
  session.clear();
  const page = await openPage();
  const slider = page.locator(`${PLANE} [data-control="temperature"] input`);
  await slider.focus();
  const standard = await readPlane(page);
  const atStandard = assertPlaneShows(standard, SQRT2, 'τ = √2');
  assert.match(await page.textContent(`${PLANE} .aw-plane-standard`), /√d_k/);

  // Four steps down: 1, 0.75, 0.5, 0.25.
  for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowLeft');
  const cold = await readPlane(page);
  assert.equal(cold.temperature, '0.25');
  const sharp = assertPlaneShows(cold, 0.25, 'τ = 0.25');
  assert.ok(Math.max(...sharp.weights) > Math.max(...atStandard.weights), 'a lower temperature gives a larger top weight');

  await page.keyboard.press('End');
  const hot = await readPlane(page);
  assert.equal(hot.temperature, '10');
  const flat = assertPlaneShows(hot, 10, 'τ = 10');
  assert.ok(Math.max(...flat.weights) < Math.max(...atStandard.weights), 'a higher temperature gives a smaller top weight');
  assert.ok(Math.max(...flat.weights) - Math.min(...flat.weights) < 0.15, `nearly equal weights at τ = 10: ${flat.weights}`);
  assert.equal((await page.evaluate(() => window.awWidgets.plane.getState())).temperature, 10);
  await page.close();
  session.assertQuiet();
});

test('on a phone the planes fit the screen and a finger drags the query without scrolling the page', async () => {
  session.clear();
  const page = await session.newPage();
  await page.setViewportSize({ width: 375, height: 740 });
  await page.goto(session.url('index.html'));
  await page.waitForSelector('html[data-ready="true"]');
  await session.mountSections(page);
  await page.locator(`${PLANE} .aw-plane-svg`).first().scrollIntoViewIfNeeded();
  const widths = await page.$$eval(`${PLANE} .aw-plane-svg`, (svgs) => svgs.map((svg) => svg.getBoundingClientRect().right));
  assert.ok(widths.every((right) => right <= 375), `the planes end inside the screen: ${widths}`);
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 375, 'no sideways scrolling');

  const start = await readPlane(page);
  const scale = await pixelsPerUnit(page, start);
  const from = await centreOf(page, '[data-point="q"]');
  const scrolled = await page.evaluate(() => window.scrollY);
  // A real touch sequence, as the screen sends it (pointer events of type touch).
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 1 });
  const touch = (type, x, y) => cdp.send('Input.dispatchTouchEvent', { type, touchPoints: type === 'touchEnd' ? [] : [{ x, y }] });
  const to = { x: from.x + (0 - 1) * scale.x, y: from.y + (-1 - 0.5) * scale.y }; // to (0, −1)
  await touch('touchStart', from.x, from.y);
  for (let i = 1; i <= 8; i++) await touch('touchMove', from.x + ((to.x - from.x) * i) / 8, from.y + ((to.y - from.y) * i) / 8);
  await touch('touchEnd');

  const moved = await readPlane(page);
  assertNear(moved.q, [0, -1], 'the finger took the query to (0, −1)', 0.03);
  assert.equal(await page.evaluate(() => window.scrollY), scrolled, 'the page did not scroll under the finger');
  assertPlaneShows(moved, SQRT2, 'after the touch drag');
  await page.close();
  session.assertQuiet();
});

test('the plane embeds with its state (positions and temperature) in an iframe, from v=, and in the custom element, from values=', async () => {
  session.clear();
  const state = { q: [-1, 1], k: [[1, 0], [0, 1], [-1, 0]], v: [[2, 2], [-2, 2], [0, -2]], temperature: 0.5 };
  const json = JSON.stringify(state);
  const page = await openPage(`embed.html?widget=plane&v=${encodeURIComponent(json)}`);
  const shown = await readPlane(page);
  assert.deepEqual({ q: shown.q, k: shown.k, v: shown.v }, { q: state.q, k: state.k, v: state.v });
  assert.equal(shown.temperature, '0.5');
  assertPlaneShows(shown, 0.5, 'in the iframe embed');
  assert.deepEqual(await page.evaluate(() => window.awWidget.getState()), state);
  await page.close();

  // The element, on a page of the same server (its script and engine come from web/dist/).
  const host = await session.newPage();
  const hostUrl = session.url('touch-host.html');
  await host.route(hostUrl, (route) => route.fulfill({
    contentType: 'text/html',
    body: `<!doctype html><title>host</title><script src="dist/attention-walkthrough.js"></script>
      <attention-walkthrough widget="plane" values='${json}'></attention-walkthrough>`,
  }));
  await host.goto(hostUrl);
  await host.waitForSelector('attention-walkthrough[data-ready="true"]');
  // Playwright's CSS selectors pierce the open shadow root.
  const inElement = await host.$$eval(`${PLANE} td[data-field="weight"] [data-value]`, (spans) => spans.map((span) => Number(span.dataset.value)));
  assertNear(inElement, attention(state.q, state.k, state.v, 0.5).weights, 'weights in the element');
  assert.deepEqual(await host.evaluate(() => document.querySelector('attention-walkthrough').widget.getState()), state);
  await host.close();
  session.assertQuiet();
});

// ---- Attention as lines ----

/** Each line's weight, width and opacity, by [query][key]. */
async function lines(page, figure) {
  const drawn = await page.$$eval(`${figure} .aw-token-line`, (nodes) => nodes.map((line) => ({
    row: Number(line.dataset.row), col: Number(line.dataset.col),
    width: Number(line.getAttribute('stroke-width')), opacity: Number(line.getAttribute('stroke-opacity')),
  })));
  const grid = [];
  for (const line of drawn) (grid[line.row] ??= [])[line.col] = line;
  return grid;
}

function assertLinesFollow(grid, weights, message) {
  assert.equal(grid.length, weights.length, `${message}: one row of lines per query`);
  weights.forEach((row, i) => row.forEach((w, j) => {
    assert.ok(Math.abs(grid[i][j].width - 8 * w) < 1e-9, `${message}: line ${i}→${j} is ${grid[i][j].width} wide for weight ${w}`);
    assert.ok(Math.abs(grid[i][j].opacity - w) < 1e-9, `${message}: line ${i}→${j} has opacity ${grid[i][j].opacity} for weight ${w}`);
  }));
}

test('the walkthrough draws attention as lines only from the step that computes the weights: then each line is 8 × its weight wide and its weight opaque', async () => {
  session.clear();
  const page = await openPage('index.html?preset=cat-sat-mat&step=1');
  const figure = '#walkthrough .aw-token-lines';
  const catSatMat = [[1, 0.5, 0.2, 0.8], [0.3, 0.9, 0.1, 0.4], [0.6, 0.2, 0.7, 0.3]]; // Q = K, d_k = 4
  const expected = catSatMat.map((q) => softmax(catSatMat.map((k) => dot(q, k) / 2)));

  await page.getByRole('tab', { name: 'Lines' }).click();
  assert.equal(await page.isVisible(figure), true);
  const none = await lines(page, figure);
  assert.ok(none.flat().every((line) => line.width === 0 && line.opacity === 0), 'no line at step 1: no weight is computed yet');

  // Step forward with the player; a row's lines appear with its row of weights in the heatmap.
  const counter = page.locator('#walkthrough .aw-counter');
  for (;;) {
    const step = await counter.textContent();
    // A row's weights and lines show together, once the step's figure has landed.
    await page.waitForSelector('#walkthrough .aw-fig:not([data-moving])', { state: 'attached' });
    const rowsShown = await page.$$eval('#walkthrough figure.aw-heatmap:has(figcaption:text-is("Attention weights")) .aw-heat-cell', (cells) => {
      const shown = [];
      for (const cell of cells) if (!cell.classList.contains('aw-heat-future')) shown[cell.dataset.row] = true;
      return [0, 1, 2].map((i) => Boolean(shown[i]));
    });
    const grid = await lines(page, figure);
    rowsShown.forEach((rowShown, i) => {
      if (rowShown) assertLinesFollow([grid[i]], [expected[i]], `step ${step}, row ${i}`);
      else assert.ok(grid[i].every((line) => line.width === 0), `row ${i} has no lines before its weights are computed`);
    });
    const [at, of] = (await counter.textContent()).split(' / ').map(Number);
    if (at === of) break;
    await page.locator('#walkthrough .aw-forward').click();
  }
  assertLinesFollow(await lines(page, figure), expected, 'at the last step');
  const label = await page.getAttribute(`${figure} svg`, 'aria-label');
  assert.match(label, /cat weighs cat most \(0\.433\)/);
  await page.close();
  session.assertQuiet();
});

test('multi-head attention draws every head\u2019s weights as lines beside its heatmap', async () => {
  session.clear();
  const engine = await loadAttention();
  const page = await openPage();
  // To step 3, "Every head attends on its own", with the section's player.
  await page.locator('#multihead .aw-forward').click();
  await page.locator('#multihead .aw-forward').click();
  assert.match(await page.textContent('#multihead .aw-mh-step'), /^3\. Every head attends on its own/);
  const result = engine.multiHead({ ...multiheadInputs(5), numHeads: 2 });
  for (const h of [0, 1]) {
    const box = `#multihead .aw-mh-head[data-head="${h}"]`;
    assert.equal(await page.isVisible(`${box} .aw-token-lines`), true, `head ${h + 1} shows its lines`);
    const heat = await heatmapValues(page, `${box} figure.aw-heatmap`);
    assertLinesFollow(await lines(page, `${box} .aw-token-lines`), result.heads[h].weights, `head ${h + 1}`);
    const weights = result.heads[h].weights;
    heat.forEach((row, i) => row.forEach((value, j) => assert.ok(Math.abs(value - weights[i][j]) < 1e-12)));
  }
  await page.close();
  session.assertQuiet();
});
