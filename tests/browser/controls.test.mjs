// The walkthrough's controls used as people use them, with real input
// events: the step scrubber by mouse and keys, the size fields and the
// random fill on every square preset, an engine error shown next to the
// control that caused it, and heatmaps that show a cell only once the step
// that computes it has come.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WEB_ROOT, startSession } from './harness.mjs';

let session;
let presets;

before(async () => {
  presets = JSON.parse(await readFile(join(WEB_ROOT, 'presets.json'), 'utf8'));
  session = await startSession();
});

after(async () => {
  await session?.close();
});

const open = (query) => session.openReady(`index.html${query}`);

const shownStep = async (page) => Number((await page.textContent('#walkthrough .aw-counter')).split(' / ')[0]);
const stepCount = async (page) => Number((await page.textContent('#walkthrough .aw-counter')).split(' / ')[1]);

test('the scrubber moves the step by a click on its track and by Home, End and the arrow keys', async () => {
  const page = await open('?preset=cat-sat-mat&step=1');
  const count = await stepCount(page);
  const track = await page.locator('#walkthrough .aw-scrubber').boundingBox();
  // A click at the track's right end, then near its middle.
  await page.mouse.click(track.x + track.width - 2, track.y + track.height / 2);
  assert.equal(await shownStep(page), count);
  await page.mouse.click(track.x + track.width / 2, track.y + track.height / 2);
  const middle = await shownStep(page);
  assert.ok(Math.abs(middle - (count + 1) / 2) <= 1.5, `a click in the middle shows step ${middle} of ${count}`);
  // A drag from there to the left end.
  await page.mouse.move(track.x + track.width / 2, track.y + track.height / 2);
  await page.mouse.down();
  await page.mouse.move(track.x + 1, track.y + track.height / 2, { steps: 5 });
  await page.mouse.up();
  assert.equal(await shownStep(page), 1);
  await page.keyboard.press('End');
  assert.equal(await shownStep(page), count);
  await page.keyboard.press('Home');
  assert.equal(await shownStep(page), 1);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.equal(await shownStep(page), 3);
  assert.match(page.url(), /step=3(&|$)/);
  await page.close();
});

test('a link to a step the example does not have opens the nearest step and says which', async () => {
  const page = await open('?preset=cat-sat-mat&step=99');
  const count = await stepCount(page);
  assert.equal(await shownStep(page), count);
  const message = page.locator('#walkthrough .aw-head .aw-message');
  assert.equal(await message.textContent(),
    `There is no step 99: this example has steps 1 to ${count}; showing step ${count}.`);
  assert.match(page.url(), new RegExp(`step=${count}(&|$)`), 'the address names the step shown');
  await page.goto(session.url('index.html?preset=cat-sat-mat&step=0'));
  await page.waitForSelector('html[data-ready="true"]');
  assert.equal(await shownStep(page), 1);
  assert.equal(await message.textContent(), `There is no step 0: this example has steps 1 to ${count}; showing step 1.`);
  await page.goto(session.url('index.html?preset=cat-sat-mat&step=last'));
  await page.waitForSelector('html[data-ready="true"]');
  assert.equal(await shownStep(page), 1);
  assert.equal(await message.textContent(), 'step \u201clast\u201d is not a step number (they count from 1); showing step 1.');
  await page.close();
});

test('the multi-head section\u2019s scrubber moves its step too', async () => {
  const page = await session.mountSections(await open(''));
  const scrubber = page.locator('#multihead .aw-scrubber');
  await scrubber.scrollIntoViewIfNeeded();
  await scrubber.focus();
  await page.keyboard.press('End');
  const counter = await page.textContent('#multihead .aw-counter');
  const [shown, total] = counter.split(' / ');
  assert.equal(shown, total);
  await page.close();
});

// The presets whose queries and keys are the same tokens.
const squarePresets = () => presets.presets.filter((preset) => ['qkv', 'scores', 'projections'].includes(preset.mode)
  && !(preset.input.numHeads > 1) && (preset.input.q ?? preset.input.scores ?? preset.input.x)?.length
    === (preset.input.k ?? preset.input.scores?.[0] ?? preset.input.x)?.length);

test('on every square preset the token count and the random fill change the problem', async () => {
  const list = squarePresets();
  assert.ok(list.length >= 4, `only ${list.length} square presets`);
  for (const preset of list) {
    const page = await open(`?preset=${preset.id}&step=1`);
    const size = page.locator('#walkthrough .aw-size', { hasText: 'Tokens (T)' }).locator('input');
    const before = Number(await size.inputValue());
    await size.fill(String(before + 1));
    await size.press('Enter');
    const rows = await page.locator('#walkthrough .aw-editor').first().locator('tbody tr').count();
    assert.equal(rows, before + 1, `${preset.id}: the first editor has ${before + 1} rows`);
    assert.equal(await page.textContent('#walkthrough .aw-edit-error'), '', `${preset.id}: no error`);
    assert.ok(!(await page.isVisible('#walkthrough .aw-head .aw-message')), `${preset.id}: no message at the top`);
    const first = page.locator('#walkthrough .aw-editor input').first();
    const old = await first.inputValue();
    await page.click('#walkthrough .aw-fill');
    const filled = await page.locator('#walkthrough .aw-editor input').evaluateAll((inputs) => inputs.map((input) => input.value));
    assert.ok(filled.some((value) => value !== '0' && value !== old), `${preset.id}: random numbers in the editor`);
    assert.equal(await page.textContent('#walkthrough .aw-edit-error'), '', `${preset.id}: no error after the fill`);
    await page.close();
  }
});

test('an input the engine refuses is reported at the cell typed in, and the last good state stays', async () => {
  const page = await open('?preset=cat-sat-mat&step=2');
  // Q[cat][1] = 1e300 is fine; K[cat][1] = 1e300 too makes their dot product overflow.
  const typeInto = async (editor) => {
    const cell = page.locator('#walkthrough .aw-editor').nth(editor).locator('input').first();
    await cell.fill('1e300');
    await cell.press('Enter');
  };
  await typeInto(0);
  assert.equal(await page.textContent('#walkthrough .aw-edit-error'), '');
  const before = await page.textContent('#walkthrough .aw-fig');
  await typeInto(1);
  const error = page.locator('#walkthrough .aw-editor').nth(1).locator('.aw-cell-error');
  assert.match(await error.textContent(), /could not use this input \(.*overflow/i);
  assert.ok(await error.isVisible());
  assert.equal(await page.locator('#walkthrough .aw-editor').nth(1).locator('input').first().getAttribute('aria-invalid'), 'true');
  assert.equal(await page.textContent('#walkthrough .aw-fig'), before);
  await page.close();
});

test('a heatmap shows a cell only from the step that computes it', async () => {
  const page = await open('?preset=cat-sat-mat&step=1');
  const futureWeights = () => page.$$eval('#walkthrough .aw-heatmap:last-of-type .aw-heat-cell.aw-heat-future', (cells) => cells.length);
  assert.equal(await futureWeights(), 9, 'no weight is known at step 1');
  const labels = await page.$$eval('#walkthrough .aw-heatmap:last-of-type .aw-heat-cell', (cells) => cells.map((c) => c.getAttribute('aria-label')));
  assert.ok(labels.every((label) => label.endsWith('not computed yet')), 'nor said to a screen reader');
  // The softmax of the first row is step 5: its three weights appear once its figure has landed, the rest do not.
  const landed = () => page.waitForSelector('#walkthrough .aw-fig:not([data-moving])', { state: 'attached' });
  await page.goto(`${session.origin}/index.html?preset=cat-sat-mat&step=5`);
  await page.waitForSelector('html[data-ready="true"]');
  await landed();
  assert.equal(await futureWeights(), 6);
  await page.goto(`${session.origin}/index.html?preset=cat-sat-mat&step=6`);
  await page.waitForSelector('html[data-ready="true"]');
  await landed();
  assert.equal(await futureWeights(), 0);
  session.assertQuiet();
  await page.close();
});

test('a control of Change the numbers that rebuilds the panel keeps the keyboard focus', async () => {
  const page = await open('?preset=cat-sat-mat&step=1');
  await page.locator('#walkthrough .aw-edit').evaluate((panel) => { panel.open = true; });
  const focused = () => page.evaluate(() => {
    const control = document.activeElement;
    return { tag: control.tagName, text: control.textContent, label: control.labels?.[0]?.textContent.trim() ?? null,
             value: control.value ?? null, checked: control.checked ?? null, connected: control.isConnected };
  });
  const panel = page.locator('#walkthrough .aw-edit');
  await panel.getByRole('button', { name: 'Fill with random numbers' }).focus();
  await page.keyboard.press('Enter');
  assert.deepEqual(await focused(), { tag: 'BUTTON', text: 'Fill with random numbers', label: null, value: '', checked: null,
                                      connected: true });
  await panel.getByLabel('Tokens (T)').focus();
  await page.keyboard.press('ArrowUp');
  assert.deepEqual(await focused(), { tag: 'INPUT', text: '', label: 'Tokens (T)', value: '4', checked: false, connected: true });
  const queries = () => page.locator('#walkthrough .aw-mats [data-matrix="q"] tbody tr').count();
  assert.equal(await queries(), 4, 'four tokens: four queries');
  await panel.getByLabel('Enter the scores directly').focus();
  await page.keyboard.press('Space');
  const radio = await focused();
  assert.equal(radio.value, 'scores');
  assert.equal(radio.checked, true);
  await panel.getByRole('button', { name: 'Reset to the example' }).focus();
  await page.keyboard.press('Enter');
  assert.equal((await focused()).text, 'Reset to the example');
  assert.equal(await stepCount(page), 9, 'the example again');
  await page.close();
});
