// One home per number: a step shows its numbers in one view at a time (its
// figure, the matrices, the heatmaps, the attention lines or its every
// equation), chosen with tabs that a keyboard works and that hold while
// stepping; the overview strip above is a map, its squares named, not
// numbered. And a number being typed into a matrix's cell stays where it is
// typed while the step's figure lands.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WEB_ROOT, startSession } from './harness.mjs';
import { loadAttention } from '../../web/lib/attention-node.js';

let presets;
let engine;

before(async () => {
  presets = JSON.parse(await readFile(join(WEB_ROOT, 'presets.json'), 'utf8'));
  engine = await loadAttention();
});

const presetInput = (id) => presets.presets.find((preset) => preset.id === id).input;
// The engine's own step ids, independent of the page's reading of them.
const stepIds = (input) => engine.walkthrough(input).steps.steps.map((step) => step.id);

const W = '#walkthrough';
const landed = (page) => page.waitForSelector(`${W} .aw-fig:not([data-moving])`, { state: 'attached' });

/**
 * Every decimal number written on screen in the walkthrough's views and its
 * overview, with the view it is in: { view, text }. The step's sentence and
 * formula are prose, and an erratum quotes the tutorial's number against
 * the engine's: neither is a view. Form fields (the editor) hold values,
 * not text.
 */
function visibleNumbers(page) {
  return page.$$eval(`${W} .aw-view-panel, ${W} .aw-overview`, (boxes) => boxes.flatMap((box) => {
    const view = box.dataset.view ?? 'overview';
    const walker = box.ownerDocument.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    const numbers = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const element = node.parentElement;
      const style = getComputedStyle(element);
      if (!element.checkVisibility({ visibilityProperty: true }) || style.visibility === 'hidden') continue;
      for (const match of node.textContent.matchAll(/-?\d+\.\d+/g)) numbers.push({ view, text: match[0] });
    }
    return numbers;
  }));
}

/** Asserts that every number on screen is in one view only, and returns that view. */
async function assertOneHome(page, where) {
  const numbers = await visibleNumbers(page);
  assert.ok(numbers.length > 0, `${where}: numbers on screen`);
  const views = new Set(numbers.map(({ view }) => view));
  assert.equal(views.size, 1, `${where}: numbers in ${[...views].join(', ')}`);
  return [...views][0];
}

async function chooseView(page, name) {
  await page.locator(`${W} [role="tab"][data-view="${name}"]`).click();
  await page.waitForSelector(`${W} [role="tabpanel"][data-view="${name}"]:not([hidden]):not(.aw-view-off)`);
}

// Goes to the step with id `id` with the scrubber, as a keyboard does, and waits for it to land.
async function goTo(page, ids, id) {
  const index = ids.indexOf(id);
  assert.ok(index >= 0, `the engine has a step ${id}`);
  await page.locator(`${W} .aw-scrubber`).focus();
  await page.keyboard.press('Home');
  for (let step = 0; step < index; step += 1) await page.keyboard.press('ArrowRight');
  await page.locator(`${W} .aw-counter`).filter({ hasText: new RegExp(`^${index + 1} /`) }).waitFor();
  await landed(page);
}

test('at each step of cat sat mat every number on screen is in the figure only, each other view shows its own, and the strip names its squares', async () => {
  const input = presetInput('cat-sat-mat');
  const ids = stepIds(input);
  const session = await startSession({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await session.openReady('index.html?preset=cat-sat-mat');
    const picked = [ids.find((id) => id.startsWith('score-')), 'scale', ids.find((id) => id.startsWith('softmax-')),
      ids.find((id) => id.startsWith('output-')), 'done'];
    for (const id of picked) {
      await goTo(page, ids, id);
      assert.equal(await assertOneHome(page, `step ${id}`), 'figure', `step ${id} shows its figure first`);
    }
    // The scaling: 0.965 (s[cat, cat] = 1.930 / √4) in the figure, then in
    // the matrices, the heatmap (to two places), never two at once.
    await goTo(page, ids, 'scale');
    const scaled = (input.q[0].reduce((sum, q, t) => sum + q * input.k[0][t], 0) / 2);
    const fig = await visibleNumbers(page);
    assert.ok(fig.some(({ text }) => text === scaled.toFixed(3)), `the figure shows ${scaled.toFixed(3)}`);
    for (const [view, places] of [['matrices', 3], ['heatmaps', 2], ['equations', 3]]) {
      await chooseView(page, view);
      assert.equal(await assertOneHome(page, `scale, ${view}`), view);
      assert.ok((await visibleNumbers(page)).some(({ text }) => text === scaled.toFixed(places)),
          `${view} shows ${scaled.toFixed(places)}`);
    }
    // The strip above is a map: no numbers on it (none were found above),
    // each square named with the step that computes it.
    const names = await page.$$eval(`${W} .aw-overview rect title`, (titles) => titles.map((title) => title.textContent));
    assert.ok(names.includes('Q[sat, 1]: given'));
    assert.ok(names.includes(`Q\u00b7K\u1d40 \u2192 scaled[sat, mat]: computed at step ${ids.indexOf('scale') + 1}`));
    assert.ok(names.includes(`weights[mat, cat]: computed at step ${ids.indexOf('softmax-others') + 1}`));
    // The choice holds while stepping: the next step opens in the equations too.
    await page.locator(`${W} .aw-scrubber`).focus();
    await page.keyboard.press('ArrowRight');
    await landed(page);
    assert.equal(await page.getAttribute(`${W} [role="tab"][data-view="equations"]`, 'aria-selected'), 'true');
    assert.equal(await assertOneHome(page, 'the step after the scaling'), 'equations');
    session.assertQuiet();
  } finally {
    await session.close();
  }
});

test('the views are tabs a keyboard moves along with the arrow keys, and a softmax example has no lines to offer', async () => {
  const input = presetInput('softmax-1-2-3');
  const ids = stepIds({ kind: 'softmax', ...input });
  const session = await startSession();
  try {
    const page = await session.openReady('index.html?preset=softmax-1-2-3');
    // Every step has one home for its numbers: its figure where it has one
    // (the row's softmax, the summary), else its matrices.
    for (const id of ids.slice(1)) {
      await goTo(page, ids, id);
      const home = await assertOneHome(page, `softmax step ${id}`);
      if (['sum-0', 'done'].includes(id)) assert.equal(home, 'figure', `step ${id} shows its figure`);
    }
    await goTo(page, ids, 'sum-0');
    const tabs = page.locator(`${W} [role="tablist"] [role="tab"]`);
    const offered = await tabs.evaluateAll((all) => all.filter((tab) => !tab.hidden).map((tab) => tab.dataset.view));
    assert.deepEqual(offered, ['figure', 'matrices', 'heatmaps', 'equations']);
    await page.locator(`${W} [role="tab"][aria-selected="true"]`).focus();
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.evaluate(() => document.activeElement.dataset.view), 'matrices');
    assert.equal(await assertOneHome(page, 'softmax, matrices'), 'matrices');
    await page.keyboard.press('ArrowRight');
    assert.equal(await assertOneHome(page, 'softmax, heatmaps'), 'heatmaps');
    await page.keyboard.press('Home');
    assert.equal(await assertOneHome(page, 'softmax, figure again'), 'figure');
    session.assertQuiet();
  } finally {
    await session.close();
  }
});

test('a number typed into a cell of Q while the step\u2019s figure moves stays in its cell as the figure lands, then applies', async () => {
  const input = presetInput('cat-sat-mat');
  const ids = stepIds(input);
  const index = ids.indexOf('score-others');
  const session = await startSession();
  try {
    // Opened a step before the other dot products (sat against mat among
    // them). The test then stops the page's animation clock (DevTools'
    // Animation domain), so that the figure surely still moves while the
    // cell is open however slow the machine; the learner's hands do the rest.
    const page = await session.openReady(`index.html?preset=cat-sat-mat&step=${index}`);
    await landed(page);
    const clock = await page.context().newCDPSession(page);
    await clock.send('Animation.enable');
    await clock.send('Animation.setPlaybackRate', { playbackRate: 0 });
    await page.locator(`${W} .aw-scrubber`).focus();
    await page.keyboard.press('ArrowRight');
    await page.waitForSelector(`${W} .aw-fig[data-kind="repeats"][data-moving]`, { state: 'attached' });
    await chooseView(page, 'matrices');
    const cell = page.locator(`${W} [data-matrix="q"] td[data-row="1"][data-col="0"]`);
    await cell.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('2');
    assert.ok(await page.$(`${W} .aw-fig[data-moving]`), 'the figure is still moving');
    await clock.send('Animation.setPlaybackRate', { playbackRate: 1 });
    await landed(page);
    // Landed: the cell is still open, focused, with what was typed, and typing goes on in it.
    const open = cell.locator('input');
    assert.equal(await open.inputValue(), '2');
    assert.equal(await open.evaluate((node) => node === document.activeElement), true);
    await page.keyboard.type('.5');
    await page.keyboard.press('Enter');
    // s[sat, mat] with q[sat, 1] = 2.5, against mat's key.
    const q = input.q[1].map((value, t) => (t === 0 ? 2.5 : value));
    const expected = q.reduce((sum, value, t) => sum + value * input.k[2][t], 0);
    const score = page.locator(`${W} [data-matrix="scores"] td[data-row="1"][data-col="2"]`);
    await score.filter({ hasText: expected.toFixed(3) }).waitFor();
    assert.equal((await cell.textContent()).trim(), '2.5');
    session.assertQuiet();
  } finally {
    await session.close();
  }
});

test('the view chosen is kept in the address, and following that link opens the same step in the same view', async () => {
  const input = presetInput('cat-sat-mat');
  const ids = stepIds(input);
  const session = await startSession();
  try {
    const page = await session.openReady('index.html?preset=cat-sat-mat');
    await goTo(page, ids, 'scale');
    await chooseView(page, 'heatmaps');
    await page.waitForFunction(() => new URLSearchParams(window.location.search).get('view') === 'heatmaps');
    const link = new URL(page.url());
    assert.equal(link.searchParams.get('step'), String(ids.indexOf('scale') + 1));
    const again = await session.openReady(link.pathname.slice(1) + link.search);
    await again.waitForSelector(`${W} [role="tabpanel"][data-view="heatmaps"]:not([hidden])`);
    assert.equal(await again.getAttribute(`${W} [role="tab"][data-view="heatmaps"]`, 'aria-selected'), 'true');
    assert.equal(await assertOneHome(again, 'the linked step'), 'heatmaps');
    assert.match(await again.textContent(`${W} .aw-counter`), new RegExp(`^${ids.indexOf('scale') + 1} /`));
    // Back to the figure: the address drops the view, as it names only what differs.
    await again.locator(`${W} [role="tab"][data-view="figure"]`).click();
    await again.waitForFunction(() => !new URLSearchParams(window.location.search).has('view'));
    // A view that does not exist is named in the message line, and the figure shows.
    const wrong = await session.openReady('index.html?preset=cat-sat-mat&step=2&view=table');
    assert.match(await wrong.textContent(`${W} .aw-message`), /no view called \u201ctable\u201d; the views are figure, matrices/);
    assert.equal(await wrong.getAttribute(`${W} [role="tab"][data-view="figure"]`, 'aria-selected'), 'true');
    session.assertQuiet();
  } finally {
    await session.close();
  }
});
