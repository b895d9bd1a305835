// "Watch attention learn" on the page, driven as a learner would: Train
// runs the engine's trainer in a Web Worker until the held-out example is
// predicted reversed, a head shows the anti-diagonal, a typed sequence of
// one's own comes back reversed; every head starts uniform; the pace
// shows each step alone while the heads form and several at a time once
// nothing changes; the timeline replays a recorded step (by keyboard, by a
// drag, while training goes on) and Live follows training again; training
// pauses off screen; Step one batch takes exactly one step; the comparison without scaling draws a
// second curve; bad tokens get a message beside the field; at 1440 x 900
// the curves, the example and the heads share one screen, on a phone the
// curves and the heads do, and no text is under 11 px. What is right
// is computed here: the reverse of the tokens the page shows, and the
// weights of a trainer run here, in Node, with the same seed to the step
// replayed (training is deterministic for a seed).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { heatmapValues, startSession } from './harness.mjs';
import { loadAttention } from '../../web/lib/attention-node.js';
import { SHOWN_EXAMPLE } from '../../web/lib/trainer-session.js';

const ROOT = '#trainer [data-section="trainer"]';
let session;

before(async () => {
  session = await startSession();
});

after(async () => {
  await session?.close();
});

async function openTrainer() {
  const page = await session.openReady('index.html#trainer');
  await page.waitForSelector('#trainer-widget[data-mounted="true"]');
  await page.waitForFunction((root) => /Step 0 /.test(document.querySelector(`${root} .aw-trainer-status`)?.textContent ?? ''), ROOT);
  return page;
}

const statusText = (page) => page.textContent(`${ROOT} .aw-trainer-status`);
const TIMELINE = `${ROOT} [data-control="timeline"] input`;
const HEAD = (k) => `${ROOT} .aw-trainer-heads figure.aw-heatmap:nth-of-type(${k})`;

/** Waits until the status line matches pattern; returns its match. */
async function statusMatching(page, pattern) {
  await page.waitForFunction(([root, source]) => new RegExp(source).test(document.querySelector(`${root} .aw-trainer-status`).textContent),
                             [ROOT, pattern.source]);
  return pattern.exec(await statusText(page));
}

/** Trains at full speed until the trainer pauses at its budget of 150 steps. */
async function trainToBudget(page) {
  await page.selectOption(`${ROOT} [data-control="speed"] select`, 'full');
  await page.click(`${ROOT} .aw-train`);
  await statusMatching(page, /^Step 150 \(budget 150\)/);
  await page.waitForFunction((root) => document.querySelector(`${root} .aw-train`).textContent === 'Train', ROOT);
}

// The default settings ("reverse", seed 1) trained here to a given step.
let engine;
async function reverseAt(step) {
  engine ??= await loadAttention();
  const trainer = engine.createTrainer({ task: 'reverse', seed: 1 });
  if (step > 0) trainer.step(step);
  const example = trainer.example(SHOWN_EXAMPLE);
  const { predicted, attention } = trainer.predict(example.tokens);
  const heldOut = trainer.evaluate();
  trainer.dispose();
  return { predicted, attention, heldOut };
}

/** Asserts that the page shows exactly the weights and predictions of "reverse" at `step`. */
async function assertShowsStep(page, step) {
  const expected = await reverseAt(step);
  assert.deepEqual(await heatmapValues(page, HEAD(1)), expected.attention[0][0], `step ${step}: head 1's weights`);
  assert.deepEqual(await heatmapValues(page, HEAD(2)), expected.attention[0][1], `step ${step}: head 2's weights`);
  assert.deepEqual((await predictionTable(page)).Model, expected.predicted.map(String), `step ${step}: the predictions`);
  assert.match(await statusText(page), new RegExp(`held-out accuracy ${(100 * expected.heldOut.accuracy).toFixed(1)}%$`));
}

/** The table's rows by their heading: Position, Input, Target, Model. */
async function predictionTable(page) {
  return page.$$eval(`${ROOT} .aw-trainer-table tr`, (rows) => Object.fromEntries(rows.map((row) => [
    row.querySelector('th').textContent, [...row.querySelectorAll('td')].map((cell) => cell.textContent),
  ])));
}

test('Train at full speed runs in a worker until the held-out example comes back reversed and a head attends along the anti-diagonal', async () => {
  const page = await openTrainer();
  assert.equal(await page.inputValue(`${ROOT} [data-control="task"] select`), 'reverse');
  await page.selectOption(`${ROOT} [data-control="speed"] select`, 'full');
  const stepButton = async () => (await page.locator(`${ROOT} .aw-train-step`).boundingBox()).x;
  const before = await stepButton();
  await page.click(`${ROOT} .aw-train`);
  assert.equal(await page.textContent(`${ROOT} .aw-train`), 'Pause');
  assert.equal(await stepButton(), before, 'Pause takes Train\u2019s width: the next button stays put');
  await page.waitForFunction((root) => /held-out accuracy (99\.\d|100\.0)%/.test(document.querySelector(`${root} .aw-trainer-status`).textContent), ROOT);
  assert.equal(await page.getAttribute(ROOT, 'data-runs-in'), 'worker');
  const table = await predictionTable(page);
  assert.deepEqual(table.Model, [...table.Input].reverse(), 'the model reverses the example');
  assert.deepEqual(table.Target, [...table.Input].reverse());
  const n = table.Input.length;
  const count = await page.locator(`${ROOT} .aw-trainer-heads figure.aw-heatmap`).count();
  const heads = [];
  for (let k = 1; k <= count; k++) heads.push(await heatmapValues(page, HEAD(k)));
  assert.equal(heads.length, 2, 'one layer of two heads');
  const onMirror = heads.map((weights) => weights.reduce((sum, row, i) => sum + row[n - 1 - i], 0) / n);
  assert.ok(Math.max(...onMirror) > 0.9, `a head puts over 0.9 of each query on the mirrored position on average: ${onMirror}`);

  // A sequence of the learner's own, typed and entered.
  await page.fill(`${ROOT} .aw-trainer-own-input`, '1 2 3 4 5 6 7 8');
  await page.press(`${ROOT} .aw-trainer-own-input`, 'Enter');
  await page.waitForFunction((root) => document.querySelector(`${root} .aw-trainer-example-title`).textContent.startsWith('Your own'), ROOT);
  assert.deepEqual((await predictionTable(page)).Model, ['8', '7', '6', '5', '4', '3', '2', '1']);
  await page.click(`${ROOT} .aw-trainer-own-back`);
  assert.match(await page.textContent(`${ROOT} .aw-trainer-example-title`), /Held-out example 1/);
  await page.close();
  session.assertQuiet();
});

test('the speed sets the pace: Normal by default, and at Slow every report moves training by exactly one step until Pause', async () => {
  const page = await openTrainer();
  const speeds = await page.$$eval(`${ROOT} [data-control="speed"] option`, (options) => options.map((option) => option.textContent));
  assert.deepEqual(speeds, ['Slow', 'Normal', 'Fast', 'Full speed']);
  assert.equal(await page.inputValue(`${ROOT} [data-control="speed"] select`), 'normal');
  await page.selectOption(`${ROOT} [data-control="speed"] select`, 'slow');
  // Every status line the page shows, as it shows it.
  await page.evaluate((root) => {
    const status = document.querySelector(`${root} .aw-trainer-status`);
    window.seenSteps = [];
    new MutationObserver(() => window.seenSteps.push(Number(/^Step (\d+)/.exec(status.textContent)?.[1])))
      .observe(status, { childList: true, characterData: true, subtree: true });
  }, ROOT);
  await page.click(`${ROOT} .aw-train`);
  await statusMatching(page, /^Step [4-9] /);
  // The line changes at each report, but a screen reader hears none of them
  // while training: it is not live, and its live copy still says step 0.
  assert.equal(await page.getAttribute(`${ROOT} .aw-trainer-status`, 'aria-live'), null);
  const said = page.locator(`${ROOT} .aw-trainer-said[role="status"]`);
  assert.match(await said.textContent(), /^Step 0 /);
  await page.click(`${ROOT} .aw-train`);
  assert.equal(await page.textContent(`${ROOT} .aw-train`), 'Train');
  const seen = [...new Set(await page.evaluate(() => window.seenSteps))];
  assert.deepEqual(seen, seen.map((_, k) => k), `from step 0, one step a report: ${seen}`);
  // Paused, where it stopped is read out once.
  assert.equal(await said.textContent(), await page.textContent(`${ROOT} .aw-trainer-status`));
  await page.close();
});

test('every head starts uniform, and the pace shows each step alone while the heads form and several at a time once they have', async () => {
  const page = await openTrainer();
  // Step 0: every weight is 1/8, no head peaked by chance.
  for (const k of [1, 2]) {
    for (const row of await heatmapValues(page, HEAD(k))) assert.deepEqual(row, Array(8).fill(0.125), `head ${k} at step 0`);
  }
  await page.selectOption(`${ROOT} [data-control="speed"] select`, 'fast');
  // Every status line the page shows: its step and held-out accuracy.
  await page.evaluate((root) => {
    const status = document.querySelector(`${root} .aw-trainer-status`);
    window.seen = [];
    new MutationObserver(() => {
      const [, step, accuracy] = /^Step (\d+) .* held-out accuracy ([\d.]+)%$/.exec(status.textContent) ?? [];
      if (step) window.seen.push([Number(step), Number(accuracy)]);
    }).observe(status, { childList: true, characterData: true, subtree: true });
  }, ROOT);
  await page.click(`${ROOT} .aw-train`);
  await statusMatching(page, /^Step 150 \(budget 150\)/);
  const seen = await page.evaluate(() => window.seen);
  const moves = seen.slice(1).map(([step], k) => ({ from: seen[k], by: step - seen[k][0] }));
  const forming = moves.filter(({ from: [, accuracy] }) => accuracy < 99);
  assert.ok(forming.length >= 10 && forming.every(({ by }) => by === 1), `one step a report below 99%: ${JSON.stringify(forming)}`);
  assert.ok(moves.some(({ by }) => by > 1), 'several steps a report once little changes');
  await page.close();
});

test('after training, the timeline replays a recorded step exactly, by keyboard and by a drag, and Live shows the latest again', async () => {
  const page = await openTrainer();
  assert.equal(await page.isDisabled(TIMELINE), true, 'nothing to replay before training');
  await trainToBudget(page);
  assert.equal(await page.getAttribute(`${ROOT} .aw-trainer-live`, 'aria-pressed'), 'true');
  assert.equal(await page.inputValue(TIMELINE), '150', 'one position a step, at the latest');

  await page.focus(TIMELINE);
  await page.keyboard.press('Home');
  await statusMatching(page, /^Replaying step 0 \(training is at step 150\) · held-out loss/);
  await assertShowsStep(page, 0);
  for (let k = 0; k < 17; k++) await page.keyboard.press('ArrowRight');
  await statusMatching(page, /^Replaying step 17 \(training is at step 150\) · batch loss /);
  await assertShowsStep(page, 17);
  assert.equal(await page.textContent(`${ROOT} [data-control="timeline"] output`), 'step 17 of 150');
  assert.equal(await page.getAttribute(`${ROOT} .aw-trainer-live`, 'aria-pressed'), 'false');
  assert.match(await page.textContent(`${ROOT} .aw-trainer-example-title`), /^Held-out example 1 at step 17:/);
  // A marker on both curves at step 17 of the 150 across the plot.
  const markers = await page.$$eval(`${ROOT} .aw-line-chart svg`, (charts) => charts.map((svg) => {
    const frame = svg.querySelector('.aw-chart-frame');
    const marker = svg.querySelector('.aw-chart-marker');
    return { visibility: marker.getAttribute('visibility'), x: Number(marker.getAttribute('x1')), left: Number(frame.getAttribute('x')), width: Number(frame.getAttribute('width')) };
  }));
  for (const { visibility, x, left, width } of markers) {
    assert.equal(visibility, 'visible');
    assert.ok(Math.abs(x - (left + (width * 17) / 150)) < 0.06, `the marker at step 17: x = ${x}`);
  }
  // The legends give the values at step 17 too, not the latest.
  const keys = await page.$$eval(`${ROOT} .aw-chart-key`, (items) => items.map((item) => item.textContent));
  assert.ok(keys.every((key) => / at step 17$/.test(key)), keys.join(' | '));

  // A drag along the track, from a fifth of the way to three fifths.
  const box = await page.locator(TIMELINE).boundingBox();
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width * 0.2, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.6, y, { steps: 8 });
  await page.mouse.up();
  const [, dragged] = await statusMatching(page, /^Replaying step (\d+) /);
  assert.ok(Math.abs(Number(dragged) - 90) <= 6, `three fifths of 150 steps: ${dragged}`);
  assert.equal(await page.inputValue(TIMELINE), dragged);
  await assertShowsStep(page, Number(dragged));

  await page.click(`${ROOT} .aw-trainer-live`);
  await statusMatching(page, /^Step 150 \(budget 150\)/);
  assert.equal(await page.getAttribute(`${ROOT} .aw-trainer-live`, 'aria-pressed'), 'true');
  assert.equal(await page.inputValue(TIMELINE), '150');
  assert.deepEqual(await page.$$eval(`${ROOT} .aw-chart-marker`, (lines) => lines.map((line) => line.getAttribute('visibility'))), ['hidden', 'hidden']);
  assert.ok((await page.$$eval(`${ROOT} .aw-chart-key`, (items) => items.map((item) => item.textContent))).every((key) => / at step 150$/.test(key)));
  await assertShowsStep(page, 150);
  await page.close();
  session.assertQuiet();
});

test('while training goes on, a replayed step stays on screen exactly as recorded, and Live follows training again to its end', async () => {
  const page = await openTrainer();
  await page.selectOption(`${ROOT} [data-control="speed"] select`, 'fast');
  await page.click(`${ROOT} .aw-train`);
  await statusMatching(page, /^Step (\d{2,}) /);
  await page.focus(TIMELINE);
  for (let k = 0; k < 3; k++) await page.keyboard.press('ArrowLeft');
  const replayed = Number(await page.inputValue(TIMELINE)); // below 256 steps every step is recorded
  await statusMatching(page, new RegExp(`^Replaying step ${replayed} `));
  // Training goes on underneath: ten steps more.
  await page.waitForFunction(([root, step]) => Number(/training is at step (\d+)/.exec(document.querySelector(`${root} .aw-trainer-status`).textContent)?.[1]) >= step,
                             [ROOT, replayed + 10]);
  assert.match(await statusText(page), new RegExp(`^Replaying step ${replayed} `));
  assert.equal(await page.inputValue(TIMELINE), String(replayed), 'the timeline grows; its thumb stays on the step replayed');
  await assertShowsStep(page, replayed);

  // Live follows training again, to where it stops by itself: its budget.
  await page.click(`${ROOT} .aw-trainer-live`);
  await statusMatching(page, /^Step \d+ \(budget 150\)/);
  await statusMatching(page, /^Step 150 \(budget 150\)/);
  await page.waitForFunction((root) => document.querySelector(`${root} .aw-train`).textContent === 'Train', ROOT);
  assert.equal(await page.inputValue(TIMELINE), '150', 'the thumb at the latest step');
  await assertShowsStep(page, 150);
  await page.close();
});

test('at 1440 x 900, with the section\u2019s heading at the top, the curves, the example\u2019s predictions and every head are on screen; at 375 the curves and the heads share one screen; no text is under 11 px', async () => {
  const page = await openTrainer();
  // Where each part is once the heading is scrolled to the top, by name.
  const onScreen = async () => {
    // The chapter's heading on the page (a widget's own title where it stands alone).
    await page.evaluate((root) => {
      const heading = document.querySelector(root).closest('.page-section')?.querySelector('h2') ?? document.querySelector(`${root} .aw-section-title`);
      window.scrollBy(0, heading.getBoundingClientRect().top);
    }, ROOT);
    return page.evaluate((root) => {
      const parts = { timeline: '.aw-trainer-timeline', accuracy: '.aw-line-chart', loss: '.aw-line-chart + .aw-line-chart', table: '.aw-trainer-table',
                      head1: '.aw-trainer-heads .aw-heatmap', head2: '.aw-trainer-heads .aw-heatmap + .aw-heatmap' };
      return Object.fromEntries(Object.entries(parts).map(([name, selector]) => {
        const { top, bottom, left, right } = document.querySelector(`${root} ${selector}`).getBoundingClientRect();
        return [name, { top, bottom, left, right }];
      }));
    }, ROOT);
  };
  // Every text shown in the section drawn under 11 px on screen (an SVG's text at its drawn scale).
  const smallTexts = () => page.evaluate((root) => [...document.querySelectorAll(`${root} *`)].filter((element) => {
    const text = [...element.childNodes].some((node) => node.nodeType === Node.TEXT_NODE && node.textContent.trim());
    return text && element.getClientRects().length > 0 && getComputedStyle(element).visibility !== 'hidden';
  }).map((element) => {
    const svg = element.ownerSVGElement;
    const scale = svg ? svg.getBoundingClientRect().width / svg.viewBox.baseVal.width : 1;
    const size = parseFloat(getComputedStyle(element).fontSize) * scale;
    return [element.textContent.trim().slice(0, 24), Number(size.toFixed(1))];
  }).filter(([, size]) => size < 11), ROOT);
  await page.setViewportSize({ width: 1440, height: 900 });
  const wide = await onScreen();
  for (const [name, box] of Object.entries(wide)) assert.ok(box.top >= 0 && box.bottom <= 900 && box.right <= 1440, `${name} fits 1440 x 900: ${JSON.stringify(box)}`);
  assert.ok(wide.head1.left > wide.loss.right && wide.head1.left > wide.table.right, 'the heads beside the curves and the example');
  assert.ok(Math.abs(wide.head1.top - wide.head2.top) < 1 && wide.head2.left > wide.head1.right, 'the heads side by side');

  assert.deepEqual(await smallTexts(), [], 'at 1440 px');

  await page.setViewportSize({ width: 375, height: 812 });
  const narrow = await onScreen();
  assert.ok(narrow.accuracy.bottom <= narrow.loss.top && narrow.loss.bottom <= narrow.head1.top
    && narrow.head2.bottom <= narrow.table.top, 'the curves, then the heads, then the example');
  assert.ok(Math.abs(narrow.head1.top - narrow.head2.top) < 1 && narrow.head2.left > narrow.head1.right, 'the heads side by side');
  assert.ok(narrow.head2.bottom - narrow.accuracy.top <= 812, `the curves and the heads in one screen: ${narrow.accuracy.top} to ${narrow.head2.bottom}`);
  for (const [name, box] of Object.entries(narrow)) assert.ok(box.left >= 0 && box.right <= 375, `${name} fits 375 px across: ${JSON.stringify(box)}`);
  assert.deepEqual(await smallTexts(), [], 'at 375 px');
  await page.close();
});

test('Pause and Train again at once (a double click): training goes on and the button still offers Pause', async () => {
  const page = await openTrainer();
  await page.selectOption(`${ROOT} [data-control="speed"] select`, 'fast');
  await page.click(`${ROOT} .aw-train`);
  const [, before] = await statusMatching(page, /^Step ([1-9]\d*) /);
  await page.dblclick(`${ROOT} .aw-train`);
  // The report of the Pause arrives after Train was pressed again: it is not the last word.
  await page.waitForFunction(([root, step]) => Number(/^Step (\d+)/.exec(document.querySelector(`${root} .aw-trainer-status`).textContent)?.[1]) >= step,
                             [ROOT, Number(before) + 15]);
  assert.equal(await page.textContent(`${ROOT} .aw-train`), 'Pause');
  // Its name says what it does, so it is not also a toggle ("Pause, pressed").
  assert.equal(await page.getAttribute(`${ROOT} .aw-train`, 'aria-pressed'), null);
  await page.click(`${ROOT} .aw-train`);
  await page.close();
});

test('training pauses while the section is off screen and goes on when it comes back', async () => {
  const page = await openTrainer();
  await page.selectOption(`${ROOT} [data-control="speed"] select`, 'slow');
  await page.click(`${ROOT} .aw-train`);
  await statusMatching(page, /^Step [1-9]/);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForFunction((root) => document.querySelector(`${root} .aw-train`).textContent === 'Train', ROOT);
  const [, paused] = await statusMatching(page, /^Step (\d+)/);
  await page.locator(`${ROOT} .aw-trainer-status`).scrollIntoViewIfNeeded();
  await page.waitForFunction((root) => document.querySelector(`${root} .aw-train`).textContent === 'Pause', ROOT);
  await page.waitForFunction(([root, step]) => Number(/^Step (\d+)/.exec(document.querySelector(`${root} .aw-trainer-status`).textContent)?.[1]) > step,
                             [ROOT, Number(paused)]);
  await page.click(`${ROOT} .aw-train`);
  await page.close();
});

test('Step one batch takes exactly one step each time it is pressed', async () => {
  const page = await openTrainer();
  for (const expected of [1, 2, 3]) {
    await page.click(`${ROOT} .aw-train-step`);
    await page.waitForFunction(([root, step]) => document.querySelector(`${root} .aw-trainer-status`).textContent.startsWith(`Step ${step} `), [ROOT, expected]);
  }
  assert.match(await statusText(page), /^Step 3 \(budget 150\) · batch loss \d/);
  assert.match(await page.getAttribute(`${ROOT} .aw-line-chart svg`, 'aria-label'), /at step 3$/);
  await page.close();
});

test('tokens that are not in the vocabulary get a message beside the field, and the example stays', async () => {
  const page = await openTrainer();
  await page.fill(`${ROOT} .aw-trainer-own-input`, '1 2 x');
  await page.click(`${ROOT} .aw-trainer-own-run`);
  assert.equal(await page.textContent(`${ROOT} .aw-trainer-own [role="alert"]`), '\u201cx\u201d is not a token: tokens are whole numbers from 0 to 9.');
  assert.equal(await page.getAttribute(`${ROOT} .aw-trainer-own-input`, 'aria-invalid'), 'true');
  await page.fill(`${ROOT} .aw-trainer-own-input`, '1 2 3 4 5 6 7 8 9');
  await page.click(`${ROOT} .aw-trainer-own-run`);
  assert.equal(await page.textContent(`${ROOT} .aw-trainer-own [role="alert"]`), 'Type 1 to 8 tokens, separated by spaces.');
  assert.match(await page.textContent(`${ROOT} .aw-trainer-example-title`), /Held-out example 1/);
  await page.close();
});

test('training without scaling side by side draws a second, dashed curve from its own run', async () => {
  const page = await openTrainer();
  await page.click(`${ROOT} .aw-trainer-settings summary`);
  await page.check(`${ROOT} [data-control="compare"] input`);
  await page.click(`${ROOT} .aw-train-step`);
  await page.waitForFunction((root) => document.querySelectorAll(`${root} .aw-line-chart:first-child .aw-chart-key`).length === 2
    && [...document.querySelectorAll(`${root} .aw-line-chart:first-child .aw-chart-key`)].every((key) => / at step 1$/.test(key.textContent)), ROOT);
  const keys = await page.$$eval(`${ROOT} .aw-line-chart:first-child .aw-chart-key`, (items) => items.map((item) => [item.textContent, item.dataset.dashed]));
  assert.match(keys[0][0], /^scaled by 1\/√d_head: /);
  assert.match(keys[1][0], /^unscaled: /);
  assert.deepEqual(keys.map(([, dashed]) => dashed), ['false', 'true']);
  await page.close();
});

test('a head opens in the walkthrough: its queries, keys and values on the example, whose weights are the head\u2019s, then back through the backward pass', async () => {
  const page = await openTrainer();
  for (let k = 1; k <= 3; k++) {
    await page.click(`${ROOT} .aw-train-step`);
    await page.waitForFunction(([root, step]) => document.querySelector(`${root} .aw-trainer-status`).textContent.startsWith(`Step ${step} `), [ROOT, k]);
  }
  const headWeights = await heatmapValues(page, `${ROOT} .aw-trainer-heads figure.aw-heatmap:nth-of-type(2)`);
  const { Input: tokens } = await predictionTable(page);
  await page.click(`${ROOT} .aw-trainer-open-head >> nth=1`);
  await page.waitForFunction(() => /[?&]backward=1/.test(window.location.search) && /[?&]v=/.test(window.location.search));
  // The walkthrough now holds that head: its rows are the example's tokens,
  // and the weights it computes are the ones the trainer drew.
  const shown = await page.evaluate(() => window.awWidgets.walkthrough.getState());
  assert.equal(shown.backward, true);
  assert.deepEqual(shown.values.tokens, tokens.map((token, i) => `${i + 1}:${token}`));
  assert.equal(shown.values.fields.q.length, tokens.length);
  assert.equal(shown.values.fields.q[0].length, 16, 'd_model 32 / 2 heads');
  // Not the example's numbers: the line under the menu says so, its notes are gone, and focus came along.
  assert.match(await page.textContent('#walkthrough .aw-source'), /^Not the example’s numbers/);
  assert.equal(await page.textContent('#walkthrough .aw-notes'), '');
  assert.equal(await page.locator('#walkthrough .aw-claims-slot').isHidden(), true, 'the tutorial\u2019s claims are about its numbers');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'walkthrough-title');
  await page.keyboard.press('Tab');
  assert.ok(await page.evaluate(() => document.getElementById('walkthrough').contains(document.activeElement)), 'Tab goes on in the walkthrough');
  await page.locator('#walkthrough .aw-stage-button', { hasText: 'Weights \u00b7 V' }).click();
  await page.locator('#walkthrough').getByRole('tab', { name: 'Heatmaps' }).click();
  const weights = await heatmapValues(page, '#walkthrough figure.aw-heatmap:has(figcaption:text-is("Attention weights"))');
  weights.forEach((row, i) => row.forEach((w, j) => assert.ok(Math.abs(w - headWeights[i][j]) < 1e-12, `weight [${i}][${j}]`)));
  assert.equal(await page.locator('#walkthrough .aw-stage-button', { hasText: 'dQ' }).count(), 1, 'the stages go on into the backward pass');
  await page.close();
});

test('the address keeps the trainer\u2019s task and settings, and opening it again restores them', async () => {
  const page = await openTrainer();
  await page.selectOption(`${ROOT} [data-control="task"] select`, 'previousToken');
  await page.click(`${ROOT} .aw-trainer-settings summary`);
  await page.selectOption(`${ROOT} [data-control="heads"] select`, '4');
  await page.waitForFunction(() => /[?&]trainer=/.test(window.location.search));
  const trainer = JSON.parse(new URL(page.url()).searchParams.get('trainer'));
  assert.equal(trainer.task, 'previousToken');
  assert.equal(trainer.heads, 4);
  const again = await session.openReady(`index.html${new URL(page.url()).search}#trainer`);
  await again.waitForSelector('#trainer-widget[data-mounted="true"]');
  assert.equal(await again.inputValue(`${ROOT} [data-control="task"] select`), 'previousToken');
  await again.waitForFunction((root) => document.querySelectorAll(`${root} .aw-trainer-heads figure.aw-heatmap`).length === 4, ROOT);
  assert.match(await again.textContent(`${ROOT} .aw-trainer-task`), /token just before it/);
  await again.close();
  await page.close();
});
