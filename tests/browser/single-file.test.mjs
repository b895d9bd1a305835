// build/attention.html (`make single`, scripts/build-single.mjs) opened from
// disk in headless Chromium with every request that is not file:, data: or
// blob: refused: it starts, shows the engine's exact numbers for a
// tutorial's example, steps and plays, typesets its formulas without KaTeX,
// logs no error and stays under its budget (scripts/build-single.mjs).
//
// Run `make single` first (`make test-single` does both).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH, REPO } from './harness.mjs';

// scripts/build-single.mjs's budget, which refuses to write a larger file.
const BUDGET_BYTES = 400 * 1024;

const SINGLE_FILE = join(REPO, 'build', 'attention.html');
const PRESET = 'three-tokens';
const VECTOR = 't000-three-tokens-dk2';
const LOCAL_SCHEMES = ['file:', 'data:', 'blob:', 'about:'];

let profile;
let context;
const problems = [];
const requested = [];

before(async () => {
  await stat(SINGLE_FILE).catch(() => {
    throw new Error('build/attention.html is missing: run `make single` first');
  });
  profile = await mkdtemp(join(tmpdir(), 'aw-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    args: [...CHROMIUM_ARGS],
    viewport: { width: 1280, height: 900 },
  });
  context.on('page', (page) => {
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    requested.push(url);
    if (LOCAL_SCHEMES.some((scheme) => url.startsWith(scheme))) return route.continue();
    problems.push(`request off disk: ${url}`);
    return route.abort('blockedbyclient');
  });
  // Its blank page stays open: a page opens faster beside another (harness.mjs).
});

after(async () => {
  await context?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

async function openSingleFile(query) {
  const page = await context.newPage();
  await page.goto(`${pathToFileURL(SINGLE_FILE).href}${query}`);
  await page.waitForSelector('html[data-ready="true"]');
  return page;
}

// The walkthrough's own controls: the sections below it have players too.
const counter = (page) => page.textContent('#walkthrough .aw-counter');

/** [row][column] of the shown weights: null where the step has not computed one yet. */
const shownWeights = (page) => page.$$eval('#walkthrough [data-matrix="weights"]:not([hidden]) tbody tr',
  (rows) => rows.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.querySelector('.aw-num')?.textContent ?? null)));

test(`the file is under its budget of ${BUDGET_BYTES / 1024} KiB, fonts and engine included`, async () => {
  const { size } = await stat(SINGLE_FILE);
  assert.ok(size < BUDGET_BYTES, `build/attention.html is ${size} bytes`);
});

test('from disk with no network it shows the engine\u2019s exact weights for tutorial 000', async () => {
  const vectors = JSON.parse(await readFile(join(REPO, 'tests/vectors/tutorials.json'), 'utf8'));
  const exact = vectors.find((vector) => vector.id === VECTOR).expected.weights;
  const page = await openSingleFile(`?preset=${PRESET}`);
  const [, total] = (await counter(page)).split(' / ').map(Number);
  await page.goto(`${pathToFileURL(SINGLE_FILE).href}?preset=${PRESET}&step=${total}`);
  await page.waitForSelector('html[data-ready="true"]');
  assert.equal(await counter(page), `${total} / ${total}`);
  const weights = await shownWeights(page);
  assert.equal(weights.length, exact.length, 'every row of weights is shown at the last step');
  weights.forEach((row, i) => row.forEach((text, j) => {
    assert.equal(text, exact[i][j].toFixed(3), `weights[${i}][${j}]`);
  }));
  await page.close();
});

test('stepping forward moves to the next step, and play advances on its own', async () => {
  const page = await openSingleFile(`?preset=${PRESET}&step=1`);
  const [first, total] = (await counter(page)).split(' / ').map(Number);
  assert.equal(first, 1);
  const firstTitle = await page.textContent('#walkthrough .aw-step-title');
  await page.click('#walkthrough .aw-forward');
  assert.equal(await counter(page), `2 / ${total}`);
  assert.notEqual(await page.textContent('#walkthrough .aw-step-title'), firstTitle);
  assert.match(page.url(), /[?&]step=2(&|$)/, 'the address follows the step from file:// too');
  await page.click('#walkthrough .aw-play');
  await page.waitForFunction(() => document.querySelector('#walkthrough .aw-counter').textContent.startsWith('3 /'));
  await page.close();
});

test('formulas are typeset as MathML without KaTeX, and nothing is fetched', async () => {
  const page = await openSingleFile(`?preset=${PRESET}&step=1`);
  const formula = page.locator('#walkthrough .aw-step-formula .aw-math').first();
  assert.equal(await formula.locator('math').count(), 1, 'the step formula is MathML');
  assert.ok((await formula.boundingBox()).height > 0, 'the formula takes space on the page');
  const leftAsTex = await page.$$eval('.aw-math', (elements) => elements
    .filter((element) => !element.querySelector('math')).map((element) => element.dataset.tex));
  assert.deepEqual(leftAsTex, [], 'every formula on the page was typeset by the build');
  await page.close();
  assert.deepEqual(requested.filter((url) => !url.startsWith('file:')), [], 'only the file itself was read');
  assert.deepEqual(problems, [], 'no console error, uncaught error or request off disk');
});

test('shown through an iframe\u2019s srcdoc, the one file steps without an error', async () => {
  const html = await readFile(SINGLE_FILE, 'utf8');
  const page = await context.newPage();
  await page.setContent('<iframe id="slide" style="width:1200px;height:800px;border:0"></iframe>');
  // A document in srcdoc has origin "null" and cannot change its address.
  await page.$eval('#slide', (frame, source) => { frame.srcdoc = source; }, html);
  const frame = await (await page.waitForSelector('#slide')).contentFrame();
  await frame.waitForSelector('html[data-ready="true"]');
  const before = await frame.textContent('#walkthrough .aw-counter');
  await frame.locator('#walkthrough .aw-forward').click();
  await frame.locator('#walkthrough .aw-forward').click();
  const after = await frame.textContent('#walkthrough .aw-counter');
  assert.equal(Number(after.split(' / ')[0]), Number(before.split(' / ')[0]) + 2);
  assert.deepEqual(problems, []);
  await page.close();
});

test('"Embed this" in the one file links to this view of it, and gives the snippets once told where the explorer is served', async () => {
  const page = await openSingleFile('?preset=cat-sat-mat&step=3');
  await page.click('#walkthrough .aw-embed-btn');
  const dialog = page.locator('#walkthrough .aw-embed-dialog');
  assert.match(await dialog.locator('.aw-message').textContent(), /This page is one file/);
  assert.equal(await dialog.locator('.aw-embed-link').inputValue(), 'attention.html?preset=cat-sat-mat&step=3#walkthrough');
  assert.match(await dialog.locator('.aw-embed-iframe').inputValue(), /^Give the address where the explorer is served/);
  await dialog.locator('.aw-embed-served').fill('https://course.example/attention');
  assert.match(await dialog.locator('.aw-embed-iframe').inputValue(),
    /src="https:\/\/course\.example\/attention\/embed\.html\?widget=walkthrough&amp;preset=cat-sat-mat&amp;step=3/);
  assert.match(await dialog.locator('.aw-embed-element').inputValue(), /src="https:\/\/course\.example\/attention\/dist\/attention-walkthrough\.js"/);
  await page.close();
});

test('the trainer in the one file trains on the page itself, since no worker starts from a file', async () => {
  const page = await openSingleFile('#trainer');
  await page.locator('#trainer-widget').scrollIntoViewIfNeeded();
  await page.waitForSelector('#trainer-widget[data-mounted="true"]');
  await page.click('#trainer .aw-train-step');
  await page.waitForFunction(() => /^Step 1 \(budget 150\) · batch loss \d/.test(document.querySelector('#trainer .aw-trainer-status')?.textContent ?? ''));
  assert.equal(await page.getAttribute('#trainer [data-section="trainer"]', 'data-runs-in'), 'page');
  await page.close();
});

test('the model\u2019s chapter in the one file says that the model is only in the served page', async () => {
  const page = await openSingleFile('#model');
  await page.locator('#model-widget').scrollIntoViewIfNeeded();
  await page.waitForSelector('#model-widget[data-mounted="true"]');
  await page.waitForFunction(() => /could not load/.test(document.querySelector('#model .aw-model-loading')?.textContent ?? ''));
  assert.equal(await page.textContent('#model .aw-model-loading'),
               'The model could not load: this one-file copy of the page carries no model; the served page runs it');
  await page.close();
});

// A log axis's tick as a number: "0.1", "1000", or "10⁵" and "10⁻⁴".
const SUPERSCRIPTS = '\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079';
function tickValue(label) {
  const power = /^10([\u207b]?)([\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+)$/.exec(label);
  if (!power) return Number(label);
  const exponent = Number([...power[2]].map((c) => SUPERSCRIPTS.indexOf(c)).join(''));
  return 10 ** (power[1] ? -exponent : exponent);
}

test('the long sequences in the one file are measured on the page, since no worker starts from a file, and it says so', async () => {
  problems.length = 0;
  const page = await openSingleFile('#efficient');
  await page.locator('#efficient-widget').scrollIntoViewIfNeeded();
  await page.waitForSelector('#efficient-widget[data-mounted="true"]');
  const section = '#efficient [data-section="efficient"]';
  await page.click(`${section} button:text-is("Measure long sequences")`);
  assert.match(await page.textContent(`${section} .aw-long-on-page`), /cannot start a Web Worker .* run on the page itself/);
  assert.equal(await page.isVisible(`${section} .aw-long-on-page`), true);
  // About 20 measurements of a quarter of a second or more each.
  await page.waitForFunction((root) => /^(Done|The measurement stopped)/.test(document.querySelector(`${root} .aw-timing-progress`).textContent),
    section, { timeout: 240_000 });
  assert.match(await page.textContent(`${section} .aw-timing-progress`), /^Done\./);
  const rows = await page.$$eval(`${section} .aw-long tbody tr`, (trs) => trs.map((tr) => [tr.dataset.t, ...[...tr.querySelectorAll('td')].map((td) => td.textContent)]));
  assert.deepEqual(rows.map(([T]) => Number(T)), [256, 512, 1024, 2048, 4096, 8192, 16384]);
  const MB = 1024 * 1024;
  for (const [T, ...cells] of rows) {
    const t = Number(T);
    const figures = cells.filter((text) => !text.startsWith('not run')).map(Number);
    figures.forEach((value) => assert.ok(Number.isFinite(value) && value > 0, `T = ${t}: ${cells}`));
    if (t <= 4096) {
      // full: ms, MB; online: ms, MB; linear: ms, MB. Full attention holds its T × T float32 weights.
      assert.equal(figures.length, 6, `T = ${t}: ${cells}`);
      assert.ok(figures[1] >= (4 * t * t) / MB * 0.999, `T = ${t}: full attention holds ${figures[1]} MB, its weights alone ${(4 * t * t) / MB}`);
      assert.ok(figures[3] < figures[1], `T = ${t}: online attention holds less than full`);
    } else {
      assert.match(cells[0], /^not run: the weights alone would take \d+ MB$/);
      assert.equal(figures.length, 4, `T = ${t}: ${cells}`);
    }
  }
  // The time chart ticks each power of ten, from below the fastest call to above the slowest.
  const ticks = (await page.$$eval(`${section} .aw-line-chart:first-of-type .aw-chart-tick[text-anchor="end"]`,
    (texts) => texts.map((t) => t.textContent))).map(tickValue);
  const exponents = ticks.map(Math.log10);
  exponents.forEach((e, k) => assert.ok(Math.abs(e - Math.round(e)) < 1e-9 &&
      (k === 0 || Math.round(e) === Math.round(exponents[k - 1]) + 1),
    `the y ticks ${ticks} are consecutive powers of ten`));
  const ms = rows.flatMap(([, ...cells]) => (cells[0].startsWith('not run') ? [cells[1], cells[3]] : [cells[0], cells[2], cells[4]])).map(Number);
  assert.ok(ticks[0] <= Math.min(...ms) && ticks.at(-1) >= Math.max(...ms), `ticks ${ticks} span ${Math.min(...ms)} to ${Math.max(...ms)} ms`);
  assert.deepEqual(problems, [], 'no error on the way');
  await page.close();
});
