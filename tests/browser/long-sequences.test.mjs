// The "Cheaper attention" section's long sequences, driven as a learner
// does in headless Chromium under the page's Content-Security-Policy:
// Measure starts one core's measurements and then the same online
// attention on one worker per core (the pool of web/lib/parallel.js), Stop
// ends it, keeping what was measured, and Measure starts again from the
// shortest. Times are only checked to be times (never for speed).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSession } from './harness.mjs';

const ROOT = '[data-section="efficient"] .aw-long';
let session;

before(async () => {
  session = await startSession();
});

after(async () => {
  await session?.close();
});

const rowsShown = (page) => page.$$eval(`${ROOT} tbody tr`, (rows) => rows.map((row) => ({
  T: Number(row.dataset.t), cells: [...row.querySelectorAll('td')].map((td) => td.textContent),
})));

test('long sequences are measured on one core and on a worker per core, Stop ends it keeping the figures, and Measure starts over', async () => {
  session.clear();
  const page = await session.openReady('index.html#efficient');
  await session.mountSections(page);
  const cores = await page.evaluate(() => Math.min(navigator.hardwareConcurrency, 8));
  assert.ok(cores > 1, `this test needs a device with more than one core, Chromium reports ${cores}`);
  const measure = page.getByRole('button', { name: 'Measure long sequences' });
  const stop = page.locator(ROOT).getByRole('button', { name: 'Stop' });
  // aria-disabled, not disabled: the button pressed keeps the keyboard focus.
  assert.equal(await stop.getAttribute('aria-disabled'), 'true', 'nothing to stop before a measurement');
  assert.match(await page.textContent(`${ROOT} .aw-long-cores`), new RegExp(`split into ${cores} blocks, one per worker`));

  await measure.focus();
  await page.keyboard.press('Enter');
  assert.equal(await measure.getAttribute('aria-disabled'), 'true');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Measure long sequences');
  // T = 256 measured both ways: its workers' time and how much faster it was.
  await page.waitForFunction((root) => {
    const row = document.querySelector(`${root} tbody tr[data-t="256"]`);
    const ratio = row?.querySelectorAll('td')[7];
    return Boolean(ratio && ratio.textContent !== '');
  }, ROOT, { timeout: 120_000 });
  const headers = await page.$$eval(`${ROOT} thead th`, (cells) => cells.map((cell) => cell.textContent));
  assert.deepEqual(headers.slice(-2), [`online, ${cores} workers: ms`, 'as fast as one core']);
  const [first] = await rowsShown(page);
  const [, , onlineMs, , , , workersMs, ratio] = first.cells;
  assert.ok(Number(onlineMs) > 0 && Number(workersMs) > 0, `T = 256: ${first.cells}`);
  assert.match(ratio, /^\d+\.\d\d\u00d7$/);
  // One core's time over the workers', both shown to about three figures.
  assert.ok(Math.abs(Number(ratio.slice(0, -1)) - Number(onlineMs) / Number(workersMs)) <= 0.05 * Number(ratio.slice(0, -1)), `T = 256: ${first.cells}`);
  assert.match(await page.getAttribute(`${ROOT} .aw-line-chart svg`, 'aria-label'), new RegExp(`online on ${cores} workers \\(query rows split\\): [\\d.]+ ms at T = 256`));

  await stop.focus();
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Stop');
  assert.match(await page.textContent(`${ROOT} [role="status"]`), /^Stopped at T = [\d,]+\. What was measured stays;/);
  assert.equal(await stop.getAttribute('aria-disabled'), 'true');
  assert.equal(await measure.getAttribute('aria-disabled'), 'false');
  const kept = await rowsShown(page);
  assert.deepEqual(kept[0], first, 'the figures measured stay on screen');
  // Whatever the workers were computing when stopped never reaches the table.
  const status = await page.textContent(`${ROOT} [role="status"]`);
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  assert.equal(await page.textContent(`${ROOT} [role="status"]`), status);

  await measure.click();
  assert.equal(await page.textContent(`${ROOT} [role="status"]`), 'Measuring T = 256\u2026');
  assert.deepEqual(await rowsShown(page), [], 'a new measurement starts from an empty table');
  await stop.click();
  await page.close();
  session.assertQuiet();
});
