// The walkthrough on a phone (375 × 740): a compact player that stays in
// reach while the step scrolls by, the editor closed until asked for, and
// numbers large enough to read.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSession } from './harness.mjs';

let session;

before(async () => {
  session = await startSession({ viewport: { width: 375, height: 740 }, reducedMotion: 'reduce' });
});

after(async () => {
  await session?.close();
});

const open = (query) => session.openReady(`index.html${query}`);

const box = (page, selector) => page.locator(selector).first().evaluate((node) => {
  const { top, bottom, height } = node.getBoundingClientRect();
  return { top, bottom, height };
});

test('on a phone the player is one compact bar that stays at the top while the step scrolls by', async () => {
  const page = await open('?preset=cat-sat-mat&step=6');
  await page.locator('#walkthrough .aw-play').scrollIntoViewIfNeeded();
  await page.click('#walkthrough .aw-forward');
  assert.equal(await page.textContent('#walkthrough .aw-counter'), '7 / 9');
  const player = await box(page, '#walkthrough .aw-player');
  assert.ok(player.height <= 110, `the player is ${player.height} px tall`);
  // The buttons and the speed share the first line.
  const [play, speed] = await Promise.all([box(page, '#walkthrough .aw-play'), box(page, '#walkthrough .aw-speed')]);
  assert.ok(Math.abs(play.top - speed.top) < 12, `play at ${play.top}, speed at ${speed.top}`);
  // Scrolled down to the step's figure, the player is still on screen, at the top.
  await page.locator('#walkthrough .aw-fig').scrollIntoViewIfNeeded();
  await page.mouse.wheel(0, 300);
  await page.waitForFunction(() => document.querySelector('#walkthrough .aw-player-slot').getBoundingClientRect().top <= 1);
  const stuck = await box(page, '#walkthrough .aw-player-slot');
  assert.ok(stuck.top >= -1 && stuck.top <= 1, `the player's top is at ${stuck.top}`);
  await page.click('#walkthrough .aw-forward');
  assert.equal(await page.textContent('#walkthrough .aw-counter'), '8 / 9');
  await page.close();
});

for (const [where, url, root] of [['the page', 'index.html?preset=cat-sat-mat&step=4', '#walkthrough'],
                                  ['a compact embed', 'embed.html?widget=walkthrough&preset=cat-sat-mat&step=4&layout=compact', 'body']])
  test(`on a phone the example's notes in ${where} start below the player, none of their first line behind it`, async () => {
    const page = await session.openReady(url);
    const notes = await box(page, `${root} .aw-notes`);
    const player = await box(page, `${root} .aw-player-slot`);
    assert.ok(notes.height > 0, 'the notes are shown');
    assert.ok(notes.top >= player.bottom - 0.5, `the notes start at ${notes.top}, the player ends at ${player.bottom}`);
    assert.match(await page.textContent(`${root} .aw-notes`), /^Three words with 4-dimensional embeddings/);
    await page.close();
  });

test('on a phone Shift+Tab back through the walkthrough never leaves the focused control behind the player', async () => {
  const page = await open('?preset=cat-sat-mat&step=1');
  await page.focus('#walkthrough .chapter-next a');
  const hidden = [];
  for (let k = 0; k < 30; k++) {
    await page.keyboard.press('Shift+Tab');
    const seen = await page.evaluate(() => {
      const focused = document.activeElement.getBoundingClientRect();
      const slot = document.querySelector('#walkthrough .aw-player-slot');
      const player = slot.getBoundingClientRect();
      const name = document.activeElement.textContent.trim().slice(0, 30);
      const inPlayer = slot.contains(document.activeElement);
      return { name, top: focused.top, playerTop: player.top, playerBottom: player.bottom, inPlayer };
    });
    // Only while the player is stuck at the top can it cover anything; its own controls it shows.
    if (!seen.inPlayer && seen.playerTop <= 1 && seen.top < seen.playerBottom - 1) hidden.push(`${seen.name} at ${seen.top}`);
  }
  assert.deepEqual(hidden, []);
  await page.close();
});

test('on a phone stepping on from the first step leaves the player where it was, however long the caption above it', async () => {
  const page = await open('?preset=cat-sat-mat&step=0');
  await page.locator('#walkthrough .aw-forward').scrollIntoViewIfNeeded();
  const before = await box(page, '#walkthrough .aw-player');
  for (let k = 0; k < 4; k++) {
    await page.click('#walkthrough .aw-forward');
    const caption = await page.$eval('#walkthrough .aw-overview-caption', (node) => node.textContent);
    const after = await box(page, '#walkthrough .aw-player');
    assert.ok(Math.abs(after.top - before.top) < 1, `after "${caption}" the player moved from ${before.top} to ${after.top}`);
  }
  assert.equal(await page.textContent('#walkthrough .aw-counter'), '5 / 9');
  await page.close();
});

test('on a phone the editor is closed until asked for, and opens with a tap on its title', async () => {
  const page = await open('?preset=cat-sat-mat&step=1');
  const editor = page.locator('#walkthrough .aw-edit');
  assert.equal(await editor.evaluate((details) => details.open), false);
  assert.equal(await page.locator('#walkthrough .aw-cell-input').first().isVisible(), false);
  await page.locator('#walkthrough .aw-edit-summary').click();
  assert.equal(await editor.evaluate((details) => details.open), true);
  const cell = page.locator('#walkthrough .aw-cell-input').first();
  assert.equal(await cell.isVisible(), true);
  await cell.fill('2');
  await cell.press('Tab');
  // Q's first entry is now 2: the score of cat against cat is 2·1 + 0.5·0.5 + 0.2·0.2 + 0.8·0.8.
  // The page writes an edit into its address when it is idle.
  await page.waitForFunction(() => /[?&]v=/.test(window.location.search));
  await page.goto(page.url().replace(/step=\d+/, 'step=2'));
  await page.waitForSelector('html[data-ready="true"]');
  assert.match(await page.textContent('#walkthrough .aw-fig-total'), /= 2\.930/);
  await page.close();
});

for (const [preset, step] of [['cat-sat-mat', 18], ['it-animal', 36]]) test(`on a phone every number in the matrices and heatmaps of ${preset} is at least 12 px tall`, async () => {
  const page = await open(`?preset=${preset}&step=${step}`);
  await page.getByRole('tab', { name: 'Matrices' }).click();
  const sizes = await page.$$eval('#walkthrough .aw-grid td', (cells) => cells
    .filter((cell) => cell.checkVisibility())
    .map((cell) => Number.parseFloat(getComputedStyle(cell).fontSize)));
  assert.ok(sizes.length > 0 && sizes.every((size) => size >= 12), `cell font sizes ${sizes}`);
  // Heatmap numbers are SVG text, scaled with their figure: measure what is drawn.
  await page.getByRole('tab', { name: 'Heatmaps' }).click();
  const drawn = await page.$$eval('#walkthrough .aw-heat-value', (texts) => texts
    .filter((text) => text.textContent !== '' && text.checkVisibility())
    .map((text) => {
      const svg = text.ownerSVGElement;
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width || 1;
      return Number.parseFloat(getComputedStyle(text).fontSize) * scale;
    }));
  assert.ok(drawn.length > 0 && drawn.every((size) => size >= 12), `heatmap numbers drawn at ${drawn}`);
  // What is wider than the screen scrolls inside its box, not the page.
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 375);
  await page.close();
});

// What is drawn at the middle of the player's scrubber and of its step
// counter: themselves, or what covers them.
const uncovered = (page) => page.evaluate(() => ['.aw-scrubber', '.aw-counter'].map((selector) => {
  const control = document.querySelector(`#walkthrough ${selector}`);
  const { left, top, width, height } = control.getBoundingClientRect();
  const there = document.elementFromPoint(left + width / 2, top + height / 2);
  return control.contains(there) ? null : `${selector} under ${there?.className || there?.tagName}`;
}).filter(Boolean));

test('at 375 × 812 nothing covers the player\u2019s scrubber or step counter, on the first screen or scrolled on', async () => {
  const page = await session.newPage();
  await page.setViewportSize({ width: 375, height: 812 });
  await page.goto(session.url('index.html'));
  await page.waitForSelector('html[data-ready="true"]');
  // On the first screen the player sits where the path bar rests: the bar gives way.
  await page.waitForFunction(() => document.documentElement.hasAttribute('data-path-away'));
  assert.deepEqual(await uncovered(page), []);
  const counter = await box(page, '#walkthrough .aw-counter');
  assert.ok(counter.bottom <= 812, `the counter ends at ${counter.bottom}`);
  // Scrolled on, the player stays at the top and the bar is back at the bottom.
  await page.mouse.wheel(0, 600);
  await page.waitForFunction(() => !document.documentElement.hasAttribute('data-path-away'));
  // Back in place (it slides, unless motion is reduced).
  await page.waitForFunction(() => Math.abs(document.querySelector('.path-bar').getBoundingClientRect().bottom - 812) < 1);
  assert.deepEqual(await uncovered(page), []);
  // A key that reaches the bar brings it back wherever the player is.
  await page.mouse.wheel(0, -600);
  await page.waitForFunction(() => document.documentElement.hasAttribute('data-path-away'));
  await page.focus('.path-bar a');
  await assert.doesNotReject(page.waitForFunction(
    () => Math.abs(document.querySelector('.path-bar').getBoundingClientRect().bottom - 812) < 1), 'the focused bar is in view');
  await page.close();
});
