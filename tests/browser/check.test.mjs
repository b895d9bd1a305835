// "Check your own numbers" in headless Chromium: a learner pastes or types
// the tables they computed for tutorial 000's three tokens (Q = K, d_k = 2),
// and the page says which numbers differ and why, at the box, in the
// errata list and on the steps; the address keeps the texts. Expected
// numbers are computed here in plain JavaScript from the example's Q and K.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startSession } from './harness.mjs';

const Q = [[1, 0], [0, 1], [1, 1]];
const K = Q;
const scores = Q.map((q) => K.map((k) => q[0] * k[0] + q[1] * k[1]));
const softmax = (row) => {
  const top = Math.max(...row);
  const e = row.map((x) => Math.exp(x - top));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
};
const exactWeights = scores.map((row) => softmax(row.map((x) => x / Math.SQRT2)));
// The slip: the softmax of the scores, not divided by √d_k = √2.
const unscaledWeights = scores.map(softmax);

let session;
before(async () => { session = await startSession(); });
after(async () => { await session?.close(); });

async function open(query) {
  const page = await session.open(`index.html${query}`);
  await page.waitForSelector('html[data-ready="true"]');
  const summary = page.locator('#walkthrough .aw-check-summary');
  await summary.scrollIntoViewIfNeeded();
  if (!(await page.locator('#walkthrough .aw-check').evaluate((box) => box.open))) await summary.click();
  return page;
}

const markdownTable = (rows) => ['| | a | b | c |', '|---|---|---|---|',
  ...rows.map((row, i) => `| ${'abc'[i]} | ${row.map((x) => x.toFixed(3)).join(' | ')} |`)].join('\n');

test('pasted weights computed without dividing by √d_k are named as that slip, on the list and at their steps', async () => {
  const page = await open('?preset=three-tokens');
  await page.selectOption('#walkthrough .aw-check-field', 'weights');
  await page.click('#walkthrough .aw-check-text');
  // A paste arrives as one insertion of text.
  await page.keyboard.insertText(markdownTable(unscaledWeights));
  const differing = unscaledWeights
    .flatMap((row, i) => row.filter((x, j) => Math.abs(Number(x.toFixed(3)) - exactWeights[i][j]) > 0.0005 + 1e-12));
  assert.ok(differing.length > 0);
  const summary = page.locator('#walkthrough .aw-check-verdict-title');
  await assert.doesNotReject(summary.filter({ hasText: `Your numbers: ${differing.length} of them differ` }).waitFor());
  const causes = await page.$$eval('#walkthrough .aw-errata-cause', (ps) => ps.map((p) => p.textContent));
  assert.deepEqual(causes, ['The numbers printed for weights are what the computation gives without dividing the scores by \u221ad_k = 1.4142.']);
  const items = await page.$$eval('#walkthrough .aw-errata-items li', (lis) => lis.map((li) => li.textContent));
  assert.equal(items.length, differing.length);
  assert.ok(items.every((text) => text.includes('you wrote')), items.join('\n'));
  assert.match(items[0], new RegExp(`you wrote ${unscaledWeights[0][0].toFixed(3)}; the exact value is ${exactWeights[0][0].toFixed(3)}`));
  await page.locator('#walkthrough .aw-errata-items li button').first().click();
  assert.ok((await page.locator('#walkthrough .aw-step-errata .aw-erratum').count()) > 0, 'the step shows its erratum');
  assert.equal(await page.textContent('#walkthrough .aw-check-error'), '');
  await page.close();
});

test('on a wide screen the box sits beside the open editor, not under it: a click at its right edge types into it', async () => {
  const page = await open('?preset=three-tokens');
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.locator('#walkthrough .aw-check-text').scrollIntoViewIfNeeded();
  const box = await page.locator('#walkthrough .aw-check-text').boundingBox();
  const editor = await page.locator('#walkthrough .aw-edit').boundingBox();
  assert.ok(box.x + box.width <= editor.x, `the box ends at ${box.x + box.width}, the editor starts at ${editor.x}`);
  await page.mouse.click(box.x + box.width - 8, box.y + 10);
  await page.keyboard.type('0.1');
  assert.equal(await page.inputValue('#walkthrough .aw-check-text'), '0.1');
  await page.close();
});

test('"Copy as Markdown" ends with the errata of the pasted numbers, in the learner\u2019s words', async () => {
  const page = await session.newPage();
  await page.addInitScript(() => {
    window.copied = [];
    Object.defineProperty(navigator, 'clipboard', { value: { writeText: async (text) => { window.copied.push(text); } } });
  });
  const typed = '0.40 0.20 0.40\n0.25 0.50 0.25\n0.25 0.25 0.50';
  await page.goto(session.url(`index.html?preset=three-tokens&check=${encodeURIComponent(JSON.stringify({ weights: typed }))}`));
  await page.waitForSelector('html[data-ready="true"]');
  await page.locator('#walkthrough .aw-copy-markdown').click();
  await page.waitForFunction(() => window.copied.length === 1);
  const copied = await page.evaluate(() => window.copied[0]);
  assert.match(copied, /\n## Errata: 3 of your printed values differ from the exact ones\n/);
  assert.equal(copied.split('\n').filter((line) => line.startsWith('- ') && line.includes(': you wrote ')).length, 3);
  await page.close();
});

test('an embed given the pasted numbers in its address (check=) checks them, with no notice that check is not an option', async () => {
  const typed = '0.40 0.20 0.40\n0.25 0.50 0.25\n0.25 0.25 0.50';
  const page = await session.open(`embed.html?widget=walkthrough&preset=three-tokens&check=${encodeURIComponent(JSON.stringify({ weights: typed }))}`);
  await page.waitForSelector('html[data-ready="true"]');
  await page.locator('.aw-check-verdict-title').filter({ hasText: 'Your numbers: 3 of them differ' }).waitFor();
  assert.deepEqual(await page.locator('.aw-message[role="status"]:visible').allTextContents(), []);
  await page.close();
});

test('a paste it cannot read gets a message at the box naming its line and column', async () => {
  const page = await open('?preset=three-tokens');
  await page.selectOption('#walkthrough .aw-check-field', 'weights');
  await page.click('#walkthrough .aw-check-text');
  const text = '\\begin{bmatrix}\n0.401 & 0.198 & 0.401 \\\\\n0.198 & 0,401 & 0.401 \\\\\n0.248 & 0.248 & 0.503\n\\end{bmatrix}';
  await page.keyboard.insertText(text);
  const column = text.split('\n')[2].indexOf('0,401') + 1;
  const error = page.locator('#walkthrough .aw-check-error');
  await assert.doesNotReject(error.filter({ hasText: `line 3, column ${column}: "0,401" has a decimal comma, but "0.401" (line 2) has a `
    + 'decimal point: write every number with the same one' }).waitFor());
  // The box's description; read out once the learner leaves the box, not at every key.
  assert.equal(await page.locator('#walkthrough .aw-check-text').getAttribute('aria-describedby'), await error.getAttribute('id'));
  const said = page.locator('#walkthrough .aw-check [role="status"]');
  assert.equal(await said.textContent(), '');
  await page.keyboard.press('Tab');
  assert.equal(await said.textContent(), await error.textContent());
  // Mended, the same table holds: every number is the exact one rounded.
  const box = page.locator('#walkthrough .aw-check-text');
  await box.fill('');
  // Pasted, as the first table was: typed key by key, each key a check, it
  // outlasted an action's time limit on a busy machine.
  await page.keyboard.insertText(text.replace('0,401', '0.401'));
  await assert.doesNotReject(page.locator('#walkthrough .aw-check-verdict-title')
    .filter({ hasText: 'Your numbers: every number you wrote agrees' }).waitFor());
  assert.equal(await error.textContent(), '');
  await page.keyboard.press('Tab');
  assert.equal(await said.textContent(), 'Your numbers: every number you wrote agrees');
  await page.close();
});

test('only results can be checked, and a table of the wrong shape is refused at the box', async () => {
  const page = await open('?preset=three-tokens');
  const options = await page.$$eval('#walkthrough .aw-check-field option', (os) => os.map((o) => o.value));
  assert.deepEqual(options, ['scores', 'scaled', 'weights', 'output'], 'Q, K and V are the example\u2019s inputs');
  await page.selectOption('#walkthrough .aw-check-field', 'weights');
  await page.locator('#walkthrough .aw-check-text').pressSequentially('0.5 0.5\n0.5 0.5');
  await assert.doesNotReject(page.locator('#walkthrough .aw-check-error')
    .filter({ hasText: 'printed.weights: expected 3x3 (as weights), got 2x2' }).waitFor());
  assert.equal(await page.textContent('#walkthrough .aw-check-verdict-title'), 'Your numbers: not checked');
  await page.close();
});

test('the address keeps typed numbers: reopened, the page shows them and their errata again', async () => {
  const page = await open('?preset=three-tokens');
  await page.selectOption('#walkthrough .aw-check-field', 'weights');
  const typed = '0.40 0.20 0.40\n0.25 0.50 0.25\n0.25 0.25 0.50';
  await page.locator('#walkthrough .aw-check-text').pressSequentially(typed);
  const summary = page.locator('#walkthrough .aw-check-verdict-title');
  await assert.doesNotReject(summary.filter({ hasText: 'Your numbers: 3 of them differ' }).waitFor());
  await page.waitForFunction(() => new URL(window.location.href).searchParams.has('check'));
  const url = new URL(page.url());
  assert.deepEqual(JSON.parse(url.searchParams.get('check')), { weights: typed });
  const again = await open(url.search);
  assert.equal(await again.inputValue('#walkthrough .aw-check-text'), typed);
  assert.match(await again.textContent('#walkthrough .aw-check-verdict-title'), /Your numbers: 3 of them differ/);
  await again.close();
  await page.close();
});

test('an embed carries the numbers to check, as the page\u2019s embed snippet writes them', async () => {
  const { stateToParams } = await import('../../web/ui/embed-button.js');
  const typed = '0.40 0.20 0.40\n0.25 0.50 0.25\n0.25 0.25 0.50';
  const params = stateToParams('walkthrough', { preset: 'three-tokens', step: 0, check: { weights: typed } });
  assert.deepEqual(JSON.parse(params.check), { weights: typed });
  const page = await session.open(`embed.html?${new URLSearchParams({ widget: 'walkthrough', ...params })}`);
  await page.waitForSelector('html[data-ready="true"]');
  assert.equal(await page.inputValue('.aw-check-text'), typed);
  assert.match(await page.textContent('.aw-check-verdict-title'), /Your numbers: 3 of them differ/);
  await page.close();
});

test('the verdict is right under the pasted numbers and scrolled into view, at 1440 and at 375 px', async () => {
  for (const [width, height] of [[1440, 900], [375, 812]]) {
    const page = await open('?preset=three-tokens');
    await page.setViewportSize({ width, height });
    await page.selectOption('#walkthrough .aw-check-field', 'weights');
    // The box at the bottom of the screen, where a learner types into it.
    await page.locator('#walkthrough .aw-check-text').evaluate((area) => {
      const { bottom } = area.getBoundingClientRect();
      window.scrollBy(0, bottom - window.innerHeight + 4);
    });
    await page.click('#walkthrough .aw-check-text');
    await page.keyboard.insertText(markdownTable(unscaledWeights));
    const title = page.locator('#walkthrough .aw-check-verdict-title');
    await title.filter({ hasText: /Your numbers: \d+ of them differ/ }).waitFor();
    const area = await page.locator('#walkthrough .aw-check-text').boundingBox();
    const said = await title.boundingBox();
    assert.ok(said.y >= area.y + area.height && said.y - (area.y + area.height) < 60,
      `${width} px: the verdict starts at ${said.y}, the box ends at ${area.y + area.height}`);
    assert.ok(said.y >= 0 && said.y + said.height <= height, `${width} px: the verdict at ${said.y} is off the screen`);
    assert.equal(await page.locator('#walkthrough .aw-errata').isVisible(), false, 'one verdict, at the box');
    await page.close();
  }
});

test('decimal commas throughout are read as decimals; the table checks clean', async () => {
  const page = await open('?preset=three-tokens');
  await page.selectOption('#walkthrough .aw-check-field', 'weights');
  await page.click('#walkthrough .aw-check-text');
  await page.keyboard.insertText(exactWeights.map((row) => row.map((x) => x.toFixed(3).replace('.', ',')).join(' '))
    .join('\n'));
  await assert.doesNotReject(page.locator('#walkthrough .aw-check-verdict-title')
    .filter({ hasText: 'Your numbers: every number you wrote agrees' }).waitFor());
  assert.equal(await page.textContent('#walkthrough .aw-check-error'), '');
  await page.close();
});

// Each result table of the walkthrough as build/attn prints it in Markdown,
// LaTeX and text, caption and all, pasted back into the box for it.
test('every table the engine writes for the example, in every format, pastes back and checks clean', async () => {
  const { engineTables } = await import('./engine-tables.mjs');
  const presets = JSON.parse(readFileSync(new URL('../../web/presets.json', import.meta.url), 'utf8')).presets;
  for (const id of ['three-tokens', 'causal-scores']) {
    const page = await open(`?preset=${id}`);
    const fields = await page.$$eval('#walkthrough .aw-check-field option', (os) => os.map((o) => o.value));
    const tables = engineTables(presets.find((preset) => preset.id === id).input)
      .map((table) => ({ ...table, field: table.name === 'S' ? 'scores' : table.name }))
      .filter((table) => fields.includes(table.field));
    assert.ok(tables.length >= 3 * (fields.length - 1), `${id}: ${tables.length} tables for ${fields}`);
    const box = page.locator('#walkthrough .aw-check-text');
    const verdict = page.locator('#walkthrough .aw-check-verdict-title');
    for (const { format, field, text } of tables) {
      await page.selectOption('#walkthrough .aw-check-field', field);
      await box.fill(text);
      const said = await verdict.filter({ hasText: /^Your numbers: / }).textContent();
      assert.equal(said, 'Your numbers: every number you wrote agrees',
        `${id}, ${format} ${field}: ${await page.textContent('#walkthrough .aw-check-error')}\n${text}`);
      await box.fill('');
    }
    await page.close();
  }
});

test('nothing went wrong on the page', () => {
  session.assertQuiet();
});
