// The walkthrough before its engine and without one: the first screen shows
// its figure and numbers while the WebAssembly engine is still on its way
// (held here until the figure is seen), the engine takes over when it
// arrives, and with WebAssembly off every example reads step by step from
// the build (web/dist/walkthroughs/, written by the native engine), its
// controls that need the engine held with a message saying why.
//
// Expected numbers come from the WebAssembly engine (web/lib/attention.js)
// loaded in Node, run on each example's input here in the test.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadAttention } from '../../web/lib/attention-node.js';
import { problemFromPreset, walkthroughPresets } from '../../web/widgets/walkthrough-problem.js';
import { engineInput } from '../../web/widgets/walkthrough-steps.js';
import { WEB_ROOT, parseShown, startSession } from './harness.mjs';

let engine;
let presets;
let session;

before(async () => {
  engine = await loadAttention();
  presets = JSON.parse(await readFile(join(WEB_ROOT, 'presets.json'), 'utf8'));
  session = await startSession();
});

after(async () => {
  await session?.close();
});

function withoutWasm() {
  delete globalThis.WebAssembly;
}

const W = '#walkthrough';

// Every number of an equation, at every node: the values its line may show.
function valuesOf(node, into = []) {
  if (node.v !== undefined) into.push(node.v);
  for (const arg of node.args ?? []) valuesOf(arg, into);
  return into;
}

async function openWithoutWasm(query = '') {
  const page = await session.newPage();
  await page.addInitScript(withoutWasm);
  await page.goto(session.url(`index.html${query}`));
  await page.waitForSelector('html[data-ready="unable"]');
  await page.waitForSelector(`${W} .aw-step-title`);
  return page;
}

// "Change the numbers", open from the start except on a phone.
async function openEditor(page) {
  if (await page.locator(`${W} .aw-edit`).getAttribute('open') === null) await page.locator(`${W} .aw-edit > summary`).click();
}

// What the walkthrough shows at step `counter` ("2 / 9"), once it shows it:
// its title, sentence, each equation's label and numbers, and whether it
// has a figure and its equations listed (the Equations view chosen).
const readStep = async (page, counter) => (await page.waitForFunction(([w, text]) => {
  if (document.querySelector(`${w} .aw-counter`).textContent !== text) return null;
  return {
    title: document.querySelector(`${w} .aw-step-title`).textContent,
    text: document.querySelector(`${w} .aw-step-text`).textContent,
    equations: [...document.querySelectorAll(`${w} .aw-step-lines .aw-arith`)].map((line) => ({
      label: line.querySelector('.aw-eq-label').textContent,
      numbers: [...line.querySelectorAll('.aw-num')].map((number) => number.dataset.value),
    })),
    figure: Boolean(document.querySelector(`${w} .aw-visuals .aw-fig`)),
    listed: document.querySelector(`${w} [role="tab"][data-view="equations"]`).getAttribute('aria-selected') === 'true',
  };
}, [W, counter])).jsonValue();

test('with WebAssembly off every example reads step by step: each step\u2019s title, sentence and numbers are the engine\u2019s', async () => {
  const page = await openWithoutWasm();
  for (const preset of walkthroughPresets(presets)) {
    await page.selectOption(`${W} .aw-preset`, preset.id);
    const { steps } = engine.steps(engineInput(problemFromPreset(preset)));
    // Every example's controls that need the engine are held, each saying why, and take no input.
    await page.waitForFunction((w) => [...document.querySelectorAll(`${w} .aw-edit .aw-cell-input`)]
      .every((input) => input.closest('[inert]')), W);
    assert.equal(await page.locator(`${W} .aw-needs-engine`).count(), 3, `${preset.id}: the held controls say why`);
    // Step forward with the keyboard, from the player's Step button.
    await page.focus(`${W} .aw-forward`);
    for (const [index, step] of steps.entries()) {
      const where = `${preset.id} step ${index + 1}`;
      if (index > 0) await page.keyboard.press('Enter');
      const counter = `${index + 1} / ${steps.length}`;
      let shown = await readStep(page, counter);
      const equations = step.equations ?? [];
      if (equations.length > 0 && !shown.listed) {
        // Every equation of the step, one click away; the choice holds while stepping.
        await page.locator(`${W} [role="tab"][data-view="equations"]`).click();
        await page.focus(`${W} .aw-forward`);
        shown = await readStep(page, counter);
      }
      assert.equal(shown.title, `${index + 1}. ${step.title}`, `${where}: title`);
      assert.equal(shown.text, step.text.join(' '), `${where}: sentence`);
      assert.deepEqual(shown.equations.map((equation) => equation.label), equations.map((equation) => equation.label),
        `${where}: every equation`);
      shown.equations.forEach((equation, e) => {
        const values = equations[e].chain.flatMap((node) => valuesOf(node));
        assert.ok(equation.numbers.length > 0, `${where}: ${equation.label} shows its numbers`);
        for (const number of equation.numbers) {
          assert.ok(values.includes(parseShown(number)), `${where}: ${equation.label} shows ${number}, not the engine's`);
        }
      });
      if (equations.length > 0) assert.ok(shown.figure, `${where}: a figure`);
    }
  }
  await page.close();
  session.assertQuiet();
});

test('with WebAssembly off the controls that need the engine say why and take no input', async () => {
  const page = await openWithoutWasm('?preset=cat-sat-mat&step=2');
  const note = await page.locator('#walkthrough .aw-built-note').textContent();
  assert.match(note, /WebAssembly is turned off/);
  for (const control of ['.aw-edit', '.aw-check', '.aw-export']) {
    const box = page.locator(`${W} ${control}`);
    assert.match(await box.locator('.aw-needs-engine').textContent(), /needs the engine.*WebAssembly is turned off/,
      `${control} says why`);
  }
  // Typing into the editor's first cell does nothing: it cannot take the focus.
  await openEditor(page);
  const cell = page.locator(`${W} .aw-edit .aw-cell-input`).first();
  const before = await cell.inputValue();
  await cell.scrollIntoViewIfNeeded();
  await cell.click({ force: true });
  await page.keyboard.type('9');
  assert.equal(await cell.inputValue(), before);
  await page.locator(`${W} .aw-copy-markdown`).click({ force: true });
  assert.equal(await page.locator(`${W} .aw-export > .aw-export-status`).textContent(), '');
  // A number of Q clicked in the matrices says why it cannot change there, where it was clicked.
  await page.locator(`${W} [role="tab"][data-view="matrices"]`).click();
  const q = page.locator(`${W} .aw-mats [data-matrix="q"] td[data-row="0"][data-col="0"]`);
  await q.click();
  await page.keyboard.type('2');
  await page.keyboard.press('Enter');
  await page.waitForSelector(`${W} .aw-mats [data-matrix="q"] .aw-cell-error`);
  assert.match(await page.locator(`${W} .aw-mats [data-matrix="q"] .aw-cell-error`).textContent(),
    /needs the engine/);
  // The other chapters say why they cannot run, and point to the walkthrough.
  const messages = await page.locator('.widget-slot:not(#walkthrough-widget) .aw-failure').allTextContents();
  assert.equal(messages.length, await page.locator('.widget-slot:not(#walkthrough-widget)').count());
  for (const text of messages) assert.match(text, /WebAssembly turned off.*walkthrough of chapter 1/);
  await page.close();
  session.assertQuiet();
});

test('the first screen shows its figure and numbers while the engine is still on its way, and the engine takes over', async () => {
  const page = await session.newPage();
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  const engines = [];
  await page.route('**/*.wasm', async (route) => {
    engines.push(route.request().url());
    await held;
    await route.continue();
  });
  await page.goto(session.url('index.html?preset=cat-sat-mat&step=2'));
  // Step 2, s[cat, cat] = q_cat · k_cat: its figure's total, from the build.
  const input = engineInput(problemFromPreset(presets.presets.find((preset) => preset.id === 'cat-sat-mat')));
  const [equation] = engine.stepEquations(input, 2);
  const total = page.locator(`${W} .aw-visuals .aw-fig .aw-fig-total .aw-fig-result`);
  await total.waitFor();
  const expected = equation.chain.at(-1).v;
  await page.waitForFunction(([selector, text]) => document.querySelector(selector)?.textContent === text,
    [`${W} .aw-visuals .aw-fig .aw-fig-total .aw-fig-result`, `= ${expected.toFixed(3)}`]);
  assert.ok(engines.length > 0, 'the engine was asked for');
  assert.equal(await page.evaluate(() => document.documentElement.dataset.ready), 'built');
  // Held, the controls that need the engine say so.
  assert.match(await page.locator(`${W} .aw-edit .aw-needs-engine`).textContent(), /once the engine has loaded/);
  release();
  await page.waitForSelector('html[data-ready="true"]');
  assert.equal(await page.locator(`${W} .aw-needs-engine`).count(), 0);
  // The engine's: an edit of Q recomputes the score at once.
  await openEditor(page);
  const cell = page.locator(`${W} .aw-edit .aw-cell-input`).first();
  await cell.fill('2');
  await cell.press('Enter');
  const edited = engine.stepEquations({ ...input, q: [[2, ...input.q[0].slice(1)], ...input.q.slice(1)] }, 2)[0];
  await page.waitForFunction(([selector, text]) => document.querySelector(selector)?.textContent === text,
    [`${W} .aw-visuals .aw-fig .aw-fig-total .aw-fig-result`, `= ${edited.chain.at(-1).v.toFixed(3)}`]);
  await page.close();
  session.assertQuiet();
});

test('index.html preloads the build of the example the first screen shows', async () => {
  const html = await readFile(join(WEB_ROOT, 'index.html'), 'utf8');
  assert.ok(html.includes(`<link rel="preload" href="dist/walkthroughs/${presets.default}.json" as="fetch" crossorigin>`));
});
