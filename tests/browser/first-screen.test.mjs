// What a learner meets first: the promise, the overview of the whole
// computation and the player within the first screen on a laptop and a
// phone; the overview filling in as the player steps (as many score cells
// as the engine's step list has computed) and jumping to a stage; a number
// of Q, K or V changed where it stands in the step's matrices, with a bad
// entry marked at its cell while the grid keeps its columns; and, on a wide
// screen, the editor beside the step.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WEB_ROOT, startSession } from './harness.mjs';
import { loadAttention } from '../../web/lib/attention-node.js';

let presets;
let engineSteps;

before(async () => {
  presets = JSON.parse(await readFile(join(WEB_ROOT, 'presets.json'), 'utf8'));
  const engine = await loadAttention();
  const input = presets.presets.find((preset) => preset.id === 'cat-sat-mat').input;
  // The engine's own step list, independent of the page's reading of it.
  engineSteps = engine.walkthrough({ kind: 'scaledDotProduct', ...input }).steps.steps.map((step) => step.id);
});

// A step's results show their numbers once its figure has landed.
const landed = (page) => page.waitForSelector('#walkthrough .aw-fig:not([data-moving])', { state: 'attached' });

const shownStep = async (page) => Number((await page.textContent('#walkthrough .aw-counter')).split(' / ')[0]);

// The score cells the overview has coloured (a fill), of its scores grid.
const filledScores = (page) => page.locator('#walkthrough .aw-overview-grid[data-matrix="scaled"] rect[fill]').count();

for (const viewport of [{ width: 1440, height: 900 }, { width: 375, height: 812 }]) {
  test(`at ${viewport.width} × ${viewport.height} the promise, the overview and the player are on the first screen`, async () => {
    const session = await startSession({ viewport });
    try {
      const page = await session.openReady('index.html');
      // Above the path bar fixed at the bottom of the view.
      const bottom = (await page.locator('.path-bar').boundingBox())?.y ?? viewport.height;
      for (const selector of ['.lede', '#walkthrough .aw-overview', '#walkthrough .aw-play', '#walkthrough .aw-preset']) {
        const box = await page.locator(selector).boundingBox();
        assert.ok(box, `${selector} is shown`);
        assert.ok(box.y >= 0 && box.y + box.height <= bottom,
                  `${selector} spans ${Math.round(box.y)}–${Math.round(box.y + box.height)} px, above ${Math.round(bottom)}`);
      }
      // Every stage of the computation is in the overview: inputs, scores, weights, output.
      assert.deepEqual(await page.locator('#walkthrough .aw-overview-title').evaluateAll((all) => all.map((b) => b.firstChild.textContent)),
                       ['Q, K, V', 'Scores, scaled', 'Weights', 'Output']);
      // Nothing that was on screen moved while the engine loaded and the walkthrough took its place.
      const shifts = await page.evaluate(() => {
        const observer = new PerformanceObserver(() => {});
        // The buffered entries are in the observer's buffer as soon as it observes.
        observer.observe({ type: 'layout-shift', buffered: true });
        const entries = observer.takeRecords().filter((entry) => !entry.hadRecentInput);
        observer.disconnect();
        return entries.map((entry) => ({ value: entry.value, moved: entry.sources.map((source) => source.node?.className ?? '?') }));
      });
      assert.ok(shifts.reduce((sum, shift) => sum + shift.value, 0) < 0.01, JSON.stringify(shifts));
      session.assertQuiet();
    } finally {
      await session.close();
    }
  });
}

test('the overview fills in the first score at its step and the other eight at theirs as the player goes forward', async () => {
  const session = await startSession();
  try {
    const page = await session.openReady('index.html?preset=cat-sat-mat&step=1');
    assert.equal(await filledScores(page), 0, 'nothing is computed at step 1');
    const forward = page.locator('#walkthrough .aw-forward');
    // The first score's step computes one cell, the step of the other dot products the other eight.
    const cells = (id) => (id === 'score-others' ? 8 : Number(id.startsWith('score-')));
    for (let step = 2; step <= 5; step += 1) {
      await forward.click();
      assert.equal(await shownStep(page), step);
      await landed(page);
      const expected = engineSteps.slice(0, step).reduce((sum, id) => sum + cells(id), 0);
      assert.equal(await filledScores(page), expected, `step ${step} (${engineSteps[step - 1]})`);
    }
    // The current step's cell is outlined, and its stage lit.
    await page.locator('#walkthrough .aw-scrubber').focus();
    await page.keyboard.press('Home');
    await forward.click();
    assert.equal(await page.locator('#walkthrough .aw-overview-now').count(), 1);
    const current = page.locator('#walkthrough .aw-overview-title[aria-current="step"]');
    assert.match(await current.textContent(), /^Scores, scaled \(being computed; go to step 2\)$/);
    assert.ok(await current.evaluate((button) => button.closest('.aw-overview-stage').classList.contains('aw-overview-active')));
    session.assertQuiet();
  } finally {
    await session.close();
  }
});

test('clicking a stage of the overview goes to its first step', async () => {
  const session = await startSession();
  try {
    const page = await session.openReady('index.html?preset=cat-sat-mat&step=1');
    await page.locator('#walkthrough .aw-overview-stage', { hasText: 'Weights' }).click();
    assert.equal(await shownStep(page), engineSteps.findIndex((id) => id.startsWith('softmax-')) + 1);
    // The title is a button: focused and Enter, as a keyboard does.
    await page.locator('#walkthrough .aw-overview-title', { hasText: 'Output' }).focus();
    await page.keyboard.press('Enter');
    assert.equal(await shownStep(page), engineSteps.findIndex((id) => id.startsWith('output-')) + 1);
    // The lines appear with the weights: every query's lines by the output steps.
    const lines = page.locator('#walkthrough .aw-overview-lines line');
    assert.equal(await lines.count(), 9);
    for (const opacity of await lines.evaluateAll((all) => all.map((line) => Number(line.getAttribute('stroke-opacity'))))) {
      assert.ok(opacity > 0.2, 'every weight of cat sat mat is above 0 and drawn');
    }
    session.assertQuiet();
  } finally {
    await session.close();
  }
});

test('a number of Q changed in the step\u2019s matrices runs through the engine and the editor follows', async () => {
  const session = await startSession();
  try {
    const page = await session.openReady('index.html?preset=cat-sat-mat&step=1');
    await page.getByRole('tab', { name: 'Matrices' }).click();
    const cell = page.locator('#walkthrough .aw-mats [data-matrix="q"] td[data-row="1"][data-col="0"]');
    await cell.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('2');
    await page.keyboard.press('Enter');
    assert.equal((await cell.textContent()).trim(), '2');
    assert.equal(await page.inputValue('#walkthrough .aw-edit .aw-editor:first-of-type tbody tr:nth-child(2) td:nth-child(2) input'), '2');
    // s[sat, mat] = 2·0.6 + 0.9·0.2 + 0.1·0.7 + 0.4·0.3 = 1.57, on its step (the other dot products).
    const scoreStep = engineSteps.indexOf('score-others') + 1;
    await page.locator('#walkthrough .aw-scrubber').focus();
    await page.keyboard.press('Home');
    for (let step = 1; step < scoreStep; step += 1) await page.keyboard.press('ArrowRight');
    const score = page.locator('#walkthrough .aw-mats [data-matrix="scores"] td[data-row="1"][data-col="2"]');
    // That step's own figure (its repeats) landed, not the one before it.
    await page.waitForSelector('#walkthrough .aw-fig[data-kind="repeats"]:not([data-moving])', { state: 'attached' });
    assert.equal((await score.textContent()).trim(), '1.570');
    assert.match(page.url(), /[?&]v=/, 'the edit is in the address');
    session.assertQuiet();
  } finally {
    await session.close();
  }
});

test('a bad entry in the matrices is marked at its cell and the grid keeps its columns', async () => {
  const session = await startSession();
  try {
    const page = await session.openReady('index.html?preset=cat-sat-mat&step=1');
    await page.getByRole('tab', { name: 'Matrices' }).click();
    const grid = page.locator('#walkthrough .aw-mats [data-matrix="k"] table');
    const columns = () => grid.locator('thead th').evaluateAll((all) => all.map((th) => Math.round(th.getBoundingClientRect().x)));
    const before = await columns();
    const cell = grid.locator('td[data-row="2"][data-col="3"]');
    await cell.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('abc');
    await page.keyboard.press('Enter');
    const input = cell.locator('input');
    assert.equal(await input.getAttribute('aria-invalid'), 'true');
    // Each message waited for: the cell's check answers after the key, not with it.
    await cell.locator('.aw-cell-error').filter({ hasText: '\u201cabc\u201d is not a number' }).waitFor();
    assert.deepEqual(await columns(), before, 'the columns stay where they were');
    // A number written right but past what a double holds is named as too large.
    await page.keyboard.press('Control+A');
    await page.keyboard.type('1e999');
    await page.keyboard.press('Enter');
    await cell.locator('.aw-cell-error')
      .filter({ hasText: '\u201c1e999\u201d is too large: numbers here stay below about 1.8 \u00d7 10\u00b3\u2070\u2078' })
      .waitFor();
    // Escape gives up: the example's own number again, nothing changed.
    await page.keyboard.press('Escape');
    assert.equal((await cell.textContent()).trim(), '0.3');
    assert.doesNotMatch(page.url(), /[?&]v=/);
    // The same in the editor panel's grid of K.
    const panel = page.locator('#walkthrough .aw-edit .aw-editor').nth(1).locator('table');
    const panelColumns = () => panel.locator('thead th').evaluateAll((all) => all.map((th) => Math.round(th.getBoundingClientRect().x)));
    const panelInput = panel.locator('tbody tr:nth-child(3) td:nth-child(5) input');
    await panelInput.click(); // scrolls the panel to the cell first, if it must
    const panelBefore = await panelColumns();
    await page.keyboard.press('End');
    await page.keyboard.type('x');
    await panel.locator('.aw-cell-error').filter({ hasText: '\u201c0.3x\u201d is not a number' }).waitFor();
    assert.equal(await panelInput.getAttribute('aria-invalid'), 'true');
    assert.deepEqual(await panelColumns(), panelBefore, 'the panel\u2019s columns stay too');
    // A number the engine refuses (scores that overflow) is named at the cell typed in, not off screen.
    await page.keyboard.press('Control+A');
    await page.keyboard.type('0.3');
    const qInput = page.locator('#walkthrough .aw-edit .aw-editor').nth(0).locator('tbody tr:nth-child(1) td:nth-child(2) input');
    const kInput = panel.locator('tbody tr:nth-child(1) td:nth-child(2) input');
    for (const input of [qInput, kInput]) {
      await input.click();
      await page.keyboard.press('Control+A');
      await page.keyboard.type('1e200');
    }
    const kCell = panel.locator('tbody tr:nth-child(1) td:nth-child(2)');
    assert.match(await kCell.locator('.aw-cell-error').textContent(), /overflow/);
    assert.equal(await kInput.getAttribute('aria-invalid'), 'true');
    session.assertQuiet();
  } finally {
    await session.close();
  }
});

test('at 1440 px the editor sits beside the step, at 1000 px below it', async () => {
  for (const [width, beside] of [[1440, true], [1000, false]]) {
    const session = await startSession({ viewport: { width, height: 900 } });
    try {
      const page = await session.openReady('index.html?preset=cat-sat-mat&step=1');
      const stage = await page.locator('#walkthrough .aw-stage').boundingBox();
      const editor = await page.locator('#walkthrough .aw-edit').boundingBox();
      if (beside) {
        assert.ok(editor.x >= stage.x + stage.width, `the editor (x = ${editor.x}) is right of the step (ends at ${stage.x + stage.width})`);
        assert.ok(Math.abs(editor.y - stage.y) < 2, 'and level with it');
      } else {
        assert.ok(editor.y >= stage.y + stage.height, 'the editor is below the step');
      }
    } finally {
      await session.close();
    }
  }
});
