// What Play shows, as a learner meets it: pressed on a fresh first screen,
// the step's figure and its numbers come into the view under the player
// (on a laptop and on a phone); and a step's results show their numbers in
// the matrices, heatmaps and overview only once the figure's movement that
// computes them has landed (the figure's own data-moving state, watched
// frame by frame), at 1× and at 4×.
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
  input = presets.presets.find((preset) => preset.id === 'cat-sat-mat').input;
});

const dot = (a, b) => a.reduce((sum, x, t) => sum + x * b[t], 0);
// The row of cat's weights: its scores over √d_k, through the softmax.
function catWeights() {
  const scaled = input.k.map((key) => dot(input.q[0], key) / Math.sqrt(input.q[0].length));
  const exps = scaled.map((x) => Math.exp(x - Math.max(...scaled)));
  return exps.map((e) => e / exps.reduce((a, b) => a + b, 0));
}

const counterAt = (page, step) => page.waitForFunction(
  (n) => document.querySelector('#walkthrough .aw-counter').textContent.startsWith(`${n} /`), step);

for (const viewport of [{ width: 1440, height: 900 }, { width: 375, height: 812 }]) {
  test(`at ${viewport.width} × ${viewport.height} Play on the first screen brings the step's figure and its numbers into view`, async () => {
    const session = await startSession({ viewport });
    try {
      const page = await session.openReady('index.html');
      await page.locator('#walkthrough .aw-play').click();
      await counterAt(page, 2);
      // Paused on the first score step (the figure still lands): what is on screen now is what Play brought.
      // By the key, on the Play button the click focused: a second click would scroll the view to the
      // sticky button first, as no person's click does.
      await page.keyboard.press('Space');
      await page.waitForSelector('#walkthrough .aw-play[aria-label="Play"]');
      await page.waitForSelector('#walkthrough .aw-fig[data-kind="dot"]:not([data-moving])');
      const box = await page.evaluate(() => {
        const figure = document.querySelector('#walkthrough .aw-fig').getBoundingClientRect();
        const player = document.querySelector('#walkthrough .aw-player').getBoundingClientRect();
        const bar = document.querySelector('.path-bar')?.getBoundingClientRect().top ?? window.innerHeight;
        return { top: figure.top, bottom: figure.bottom, playerTop: player.top, playerBottom: player.bottom, bar };
      });
      assert.ok(box.playerTop >= 0 && box.playerBottom <= box.top,
                `the player (${Math.round(box.playerTop)}–${Math.round(box.playerBottom)} px) is on screen above the figure`);
      assert.ok(box.bottom <= box.bar, `the figure (${Math.round(box.top)}–${Math.round(box.bottom)} px) ends above the path bar at ${Math.round(box.bar)}`);
      // Its numbers: each product of q[cat] and k[cat], and their sum, the score.
      const figure = page.locator('#walkthrough .aw-fig');
      const products = input.q[0].map((x, t) => (x * input.k[0][t]).toFixed(3));
      assert.deepEqual(await figure.locator('.aw-fig-term').evaluateAll((terms) => terms.map((t) => t.textContent.split('= ')[1])),
                       products);
      assert.equal(await figure.locator('.aw-fig-result').textContent(), `= ${dot(input.q[0], input.k[0]).toFixed(3)}`);
      assert.ok(await figure.locator('.aw-fig-result').isVisible());
      session.assertQuiet();
    } finally {
      await session.close();
    }
  });
}

/**
 * Steps forward from `step` (counted from 1) at `speed` and watches every
 * frame until the figure has landed: whether it moves, and the numbers the
 * result cells `[view, name, i, j]` show (null while a cell shows none).
 */
async function watchStep(page, step, cells) {
  const frames = page.evaluate((watched) => new Promise((resolve) => {
    const figure = document.querySelector('#walkthrough .aw-fig');
    const shown = ([where, name, i, j]) => {
      if (where === 'overview') {
        // The overview draws a 3 × 3 grid of rects, row by row.
        const rect = document.querySelectorAll(`#walkthrough .aw-overview-grid[data-matrix="${name}"] rect`)[i * 3 + j];
        return rect?.hasAttribute('fill') ? 'filled' : null;
      }
      const box = where === 'heatmap' ? '.aw-heatmaps' : '.aw-mats';
      const cell = document.querySelector(`#walkthrough ${box} [data-matrix="${name}"] [data-row="${i}"][data-col="${j}"]`);
      // A view not chosen (a hidden tab panel) still holds what it would show.
      if (!cell || cell.closest('[hidden]:not([role="tabpanel"])') || cell.matches('.aw-future, .aw-heat-future')) return null;
      const number = cell.textContent.match(/-?\d+\.\d+/);
      return number ? number[0] : null;
    };
    const seen = [];
    let moved = false;
    const frame = () => {
      const moving = figure.dataset.moving === 'true';
      seen.push({ moving, values: watched.map(shown) });
      moved ||= moving;
      if (moved && !moving) resolve(seen);
      else requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  }), cells);
  await page.locator('#walkthrough .aw-forward').click();
  await counterAt(page, step + 1);
  return frames;
}

for (const speed of ['1', '4']) {
  test(`at ${speed}× no score or weight shows its number before the figure's movement that computes it lands`, async () => {
    const session = await startSession();
    try {
      for (const { step, cells, expected } of [
        // Step 2 computes the score of cat against cat; step 3 the other eight; step 5 the softmax of cat's row.
        { step: 1, cells: [['matrix', 'scores', 0, 0]], expected: [dot(input.q[0], input.k[0]).toFixed(3)] },
        {
          step: 2,
          cells: [['matrix', 'scores', 1, 2], ['matrix', 'scores', 2, 1]],
          expected: [dot(input.q[1], input.k[2]).toFixed(3), dot(input.q[2], input.k[1]).toFixed(3)],
        },
        {
          step: 4,
          cells: [0, 1, 2].flatMap((j) => [['matrix', 'weights', 0, j], ['heatmap', 'weights', 0, j], ['overview', 'weights', 0, j]]),
          expected: catWeights().flatMap((w) => [w.toFixed(3), w.toFixed(2), 'filled']),
        },
      ]) {
        const page = await session.openReady(`index.html?preset=cat-sat-mat&step=${step}`);
        await page.locator('#walkthrough .aw-speed select').selectOption(speed);
        await page.locator('#walkthrough .aw-stage').scrollIntoViewIfNeeded();
        await page.waitForSelector('#walkthrough .aw-fig:not([data-moving])', { state: 'attached' });
        const frames = await watchStep(page, step, cells);
        const moving = frames.filter((frame) => frame.moving);
        assert.ok(moving.length > 0, 'the figure moved');
        for (const frame of moving) assert.deepEqual(frame.values, cells.map(() => null), `step ${step + 1} while moving`);
        assert.deepEqual(frames.at(-1).values, expected, `step ${step + 1} once landed`);
        await page.close();
      }
      session.assertQuiet();
    } finally {
      await session.close();
    }
  });
}

test('a heatmap\u2019s colour scale prints no end that only cells still to be computed hold', async () => {
  const session = await startSession({ reducedMotion: 'reduce' });
  try {
    const largest = Math.max(...input.q.flatMap((q) => input.k.map((k) => dot(q, k)))) / Math.sqrt(input.q[0].length);
    const top = (page) => page.locator('#walkthrough .aw-heatmaps [data-matrix="scaled"] .aw-legend-end').last();
    // Step 3 has computed scores, none scaled yet; step 4 scales them all.
    let page = await session.openReady('index.html?preset=cat-sat-mat&step=3');
    await page.getByRole('tab', { name: 'Heatmaps' }).click();
    assert.equal(await top(page).isVisible(), false, 'the largest scaled score is not printed at step 3');
    assert.doesNotMatch(await page.locator('#walkthrough .aw-heatmaps [data-matrix="scaled"] .aw-legend')
      .getAttribute('aria-label'), /\d\.\d\d \(yellow\)/);
    await page.close();
    page = await session.openReady('index.html?preset=cat-sat-mat&step=4');
    await page.getByRole('tab', { name: 'Heatmaps' }).click();
    assert.equal(await top(page).isVisible(), true, 'printed once computed');
    assert.ok(Math.abs(Number(await top(page).textContent()) - largest) <= 0.005 + 1e-9);
    await page.close();
    session.assertQuiet();
  } finally {
    await session.close();
  }
});
