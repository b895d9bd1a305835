// End-to-end tests of the walkthrough widget in headless Chromium: every
// preset steps from start to end showing the engine's values, edits flow
// downstream, the address reproduces a view, errata appear, bad entries are
// caught, keyboard-only stepping works, and the page stays quiet (no console
// errors, no request leaving its origin).
//
// Expected numbers come from the same engine (web/lib/attention.js) loaded
// in Node, run on each preset's input here in the test.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadAttention } from '../../web/lib/attention-node.js';
import { presetInput } from '../../web/presets.js';
import { equationText } from '../../web/ui/equation.js';
import { canShowBackward, engineInput } from '../../web/widgets/walkthrough-steps.js';
import { dimsOf, problemFromPreset, resized } from '../../web/widgets/walkthrough-problem.js';
import { REPO, WEB_ROOT, startSession } from './harness.mjs';

let engine;
let presets;
let vectors;
let session;

before(async () => {
  engine = await loadAttention();
  presets = JSON.parse(await readFile(join(WEB_ROOT, 'presets.json'), 'utf8'));
  vectors = JSON.parse(await readFile(join(REPO, 'tests/vectors/tutorials.json'), 'utf8'));
  session = await startSession();
});

after(async () => {
  await session?.close();
});

// The presets the walkthrough animates (other sections have their own widgets).
const MODES = ['projections', 'qkv', 'scores', 'softmax', 'weightedSum'];
const walkthroughPresets = () => presets.presets.filter((preset) => MODES.includes(preset.mode)
  && !(preset.mode === 'projections' && preset.input.numHeads > 1));
const parseShown = (text) => Number(text.replace(/\u2212/g, '-').replace('\u221e', 'Infinity'));
const asMatrix = (value) => (Array.isArray(value) && !Array.isArray(value[0]) ? [value] : value);

// The engine's numbers for each matrix the page can show, by the page's names.
function expectedMatrices(preset, input = presetInput(preset)) {
  const result = engine.run(input);
  const { kind } = input;
  if (kind === 'multiHead') {
    const head = result.heads[0];
    return {
      x: input.x, wq: input.wq, wk: input.wk, wv: input.wv, q: result.q, k: result.k, v: result.v,
      scores: head.scores, scaled: head.scaled, weights: head.weights, output: head.output,
    };
  }
  if (kind === 'softmax') {
    return { input: asMatrix(input.x), scaled: asMatrix(result.scaled), exp: asMatrix(result.exp),
        weights: asMatrix(result.weights) };
  }
  if (kind === 'weightedSum') return { weights: input.weights, v: input.v, output: result.output };
  return { q: input.q, k: input.k, v: input.v, scores: input.scores ?? result.scores, ...result };
}

/** In the page: every visible matrix cell, the step counter, title and arithmetic, and the address. */
function readShown() {
  const matrices = {};
  for (const figure of document.querySelectorAll('#walkthrough .aw-matrix:not([hidden])')) {
    matrices[figure.dataset.matrix] = [...figure.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => {
      const number = td.querySelector('.aw-num');
      return number ? { text: number.textContent, full: number.dataset.value } : null;
    }));
  }
  return {
    matrices,
    counter: document.querySelector('#walkthrough .aw-counter').textContent,
    title: document.querySelector('#walkthrough .aw-step-title').textContent,
    lines: [...document.querySelectorAll('#walkthrough .aw-step-lines .aw-num')].map((n) => n.dataset.value),
    search: window.location.search,
  };
}

// What the step shows once its figure has landed (its results show their numbers then).
async function shownState(page) {
  await page.waitForSelector('#walkthrough .aw-fig:not([data-moving])', { state: 'attached' });
  const { search: _search, ...shown } = await page.evaluate(readShown);
  return shown;
}

// Chooses the Equations view (a choice that holds while stepping), then
// clicks "step forward" count - 1 times inside the page (a DOM click each)
// and reads what every step shows: one round trip for the whole walk.
async function walkAllSteps(page, count) {
  return page.evaluate(`(() => {
    const read = ${readShown.toString()};
    document.querySelector('#walkthrough [role="tab"][data-view="equations"]').click();
    const forward = document.querySelector('#walkthrough .aw-forward');
    const states = [read()];
    for (let i = 1; i < ${count}; i++) { forward.click(); states.push(read()); }
    return states;
  })()`);
}

function threeDecimals(value) {
  if (value === -Infinity) return '\u2212\u221e';
  const text = value.toFixed(3);
  if (/^-0\.0+$/.test(text)) return text.slice(1);
  return text.replace('-', '\u2212');
}

function assertMatricesMatch(shown, expected, where) {
  assert.ok(Object.keys(shown.matrices).length > 0, `${where}: no matrix shown`);
  for (const [name, rows] of Object.entries(shown.matrices)) {
    const want = expected[name];
    assert.ok(want, `${where}: unexpected matrix ${name}`);
    rows.forEach((row, i) => row.forEach((cell, j) => {
      if (cell === null) return; // not computed yet at this step
      const exact = want[i][j] === null ? -Infinity : want[i][j];
      assert.equal(parseShown(cell.full), exact, `${where}: ${name}[${i}][${j}] full precision`);
      // Results show three decimals; inputs show as typed (trailing zeros dropped).
      const fixed = threeDecimals(exact);
      const trimmed = fixed.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
      assert.ok([fixed, trimmed].includes(cell.text), `${where}: ${name}[${i}][${j}] shows ${cell.text}, engine ${exact}`);
    }));
  }
}

async function open(query) {
  const page = await session.open(`index.html${query}`);
  await page.waitForSelector('html[data-ready="true"]');
  return page;
}

async function stepCount(page) {
  return Number(await page.getAttribute('#walkthrough .aw-scrubber', 'max')) + 1;
}

test('every preset steps from start to end showing the engine\u2019s values', async () => {
  for (const preset of walkthroughPresets()) {
    const page = await open(`?preset=${encodeURIComponent(preset.id)}&step=1`);
    const expected = expectedMatrices(preset);
    const count = await stepCount(page);
    assert.ok(count >= 3, `${preset.id}: only ${count} steps`);
    const states = await walkAllSteps(page, count);
    states.forEach((shown, index) => {
      const step = index + 1;
      assert.equal(shown.counter, `${step} / ${count}`, `${preset.id}: counter`);
      assert.ok(shown.title.startsWith(`${step}. `), `${preset.id}: title ${shown.title}`);
      assertMatricesMatch(shown, expected, `${preset.id} step ${step}`);
      for (const value of shown.lines) {
        const number = parseShown(value);
        assert.ok(Number.isFinite(number) || number === -Infinity, `${preset.id}: line value ${value}`);
      }
      assert.match(shown.search, new RegExp(`step=${step}(&|$)`), `${preset.id}: address follows the step`);
    });
    await page.close();
  }
});

// The cells of a tensor that a step of the engine's list reads, [i, j] by
// its region (rows, one cell, or all of it); the page's name of the tensor:
// a softmax's x is its "input", a head's tensors are the page's.
function readCells(region, shape, mode) {
  const name = mode === 'softmax' && region.name === 'x' ? 'input' : region.name.replace(/^heads\.0\./, '');
  const [rows, cols] = shape;
  if (region.cell) return { name, cells: [region.cell.length === 1 ? [0, region.cell[0]] : region.cell] };
  const [first, last] = region.rows ?? [0, rows - 1];
  const cells = [];
  for (let i = first; i <= last; i++) for (let j = 0; j < cols; j++) cells.push([i, j]);
  return { name, cells };
}

// Per-row and per-product numbers the steps read, which the page shows in
// the figure and the equations, not as a matrix.
const NOT_MATRICES = new Set(['max', 'sum', 'terms']);

test('at every step of every preset, forward and backward, the matrices the step reads are on screen with their numbers', async () => {
  for (const preset of walkthroughPresets()) {
    const problem = problemFromPreset(preset);
    for (const backward of canShowBackward(problem) ? [false, true] : [false]) {
      const input = engineInput({ ...problem, backward });
      const { steps } = engine.walkthrough(input, { equations: false }).steps;
      const page = await open(`?preset=${encodeURIComponent(preset.id)}${backward ? '&backward=1' : ''}&step=1`);
      const count = await stepCount(page);
      assert.equal(count, steps.length, `${preset.id}: the page has the engine's steps`);
      const states = await walkAllSteps(page, count);
      states.forEach((shown, index) => {
        const where = `${preset.id}${backward ? ' (backward)' : ''} step ${index + 1}, ${steps[index].id}`;
        for (const region of steps[index].regions.filter((r) => !r.produces && !NOT_MATRICES.has(r.name))) {
          const { name } = readCells(region, [0, 0], problem.mode);
          const rows = shown.matrices[name];
          assert.ok(rows, `${where}: ${name}, which the step reads, is not on screen`);
          for (const [i, j] of readCells(region, [rows.length, rows[0].length], problem.mode).cells) {
            assert.ok(rows[i][j], `${where}: ${name}[${i}][${j}], which the step reads, shows no number`);
          }
        }
      });
      // Past the last step nothing is left to compute: once its figure has
      // landed, the overview has no empty cell.
      await page.waitForSelector('#walkthrough .aw-fig:not([data-moving])', { state: 'attached' });
      assert.equal(await page.locator('#walkthrough .aw-overview-future').count(), 0,
        `${preset.id}: the overview's cells are all filled in at the last step`);
      await page.close();
    }
  }
});

// The steps of a Markdown walkthrough: title, prose and each equation's
// label and numbers, with Markdown's backslash escapes undone.
function markdownSteps(markdown) {
  const unescape = (text) => text.replace(/\\([\\`*_[\]<>|#&~])/g, '$1');
  const number = (text) => (/\u221e/.test(text) ? -Infinity : Number(text.replace('\u2212', '-')));
  return markdown.split(/^#{2,4} Step \d+\. /m).slice(1).map((block) => {
    const [heading, ...lines] = block.replace(/```math\n[\s\S]*?\n```/g, '').split('\n');
    const prose = lines.filter((line) => line && !/^(- |\||\*\*|```|\\|[a-z_{}]+ *=|\(.*\)$)/.test(line) && !line.startsWith('  '));
    // A step of repeats names each repeat above its equations: "Score of sat against mat:".
    const paragraphs = prose.filter((line) => !line.endsWith(':'));
    const repeats = prose.filter((line) => line.endsWith(':')).map((line) => unescape(line.slice(0, -1)));
    const equations = lines.filter((line) => line.startsWith('- ')).map((line) => {
      const [, label, body] = /^- (.*?) = `(.*)`$/.exec(line);
      return { label: unescape(label), numbers: [...body.matchAll(/[-\u2212]\u221e|[-\u2212]?\d+(?:\.\d+)?(?:e[-+]\d+)?/g)].map(([n]) => number(n)) };
    });
    return { title: unescape(heading), text: paragraphs.map(unescape).join(' '), equations, repeats };
  });
}

test('what the Markdown export says at step n is what the page shows at step n, for every preset', async () => {
  for (const preset of walkthroughPresets()) {
    const page = await open(`?preset=${encodeURIComponent(preset.id)}&step=1`);
    const count = await stepCount(page);
    const shown = await page.evaluate(`(() => {
      document.querySelector('#walkthrough [role="tab"][data-view="equations"]').click();
      const forward = document.querySelector('#walkthrough .aw-forward');
      const read = () => ({
        title: document.querySelector('#walkthrough .aw-step-title').textContent.replace(/^\\d+\\. /, ''),
        text: document.querySelector('#walkthrough .aw-step-text').textContent,
        repeats: [...document.querySelectorAll('#walkthrough .aw-fig-repeat > summary .aw-fig-what')].map((n) => n.textContent),
        equations: [...document.querySelectorAll('#walkthrough .aw-step-lines .aw-arith')].map((line) => ({
          label: line.querySelector('.aw-eq-label').textContent,
          numbers: [...line.querySelectorAll('.aw-num')].map((n) => n.dataset.value),
        })),
      });
      const states = [read()];
      for (let i = 1; i < ${count}; i++) { forward.click(); states.push(read()); }
      return { states, input: window.awWidgets.walkthrough.exportInput() };
    })()`);
    const markdown = markdownSteps(engine.format(shown.input, 'markdown'));
    assert.equal(markdown.length, count, `${preset.id}: the Markdown has ${markdown.length} steps, the page ${count}`);
    shown.states.forEach((state, n) => {
      const where = `${preset.id} step ${n + 1}`;
      const md = markdown[n];
      assert.equal(state.title, md.title, `${where}: title`);
      assert.equal(state.text, md.text, `${where}: sentence`);
      assert.deepEqual(state.repeats, md.repeats, `${where}: the repeats, each by its name`);
      assert.equal(state.equations.length, md.equations.length, `${where}: every equation`);
      state.equations.forEach((equation, e) => {
        assert.equal(equation.label, md.equations[e].label, `${where}: equation ${e + 1}`);
        const numbers = equation.numbers.map(parseShown);
        assert.equal(numbers.length, md.equations[e].numbers.length, `${where}: ${equation.label} has as many numbers`);
        // Markdown rounds to 4 decimals; the page keeps the full value behind its 3.
        numbers.forEach((full, k) => {
          const printed = md.equations[e].numbers[k];
          const close = Number.isFinite(full)
            ? Math.abs(full - printed) <= 5e-5 * Math.max(1, Math.abs(full)) : full === printed;
          assert.ok(close, `${where}: ${equation.label} number ${k + 1}: Markdown ${printed}, page ${full}`);
        });
      });
    });
    await page.close();
  }
});

test('the arithmetic of a score step is the dot product of the highlighted rows', async () => {
  const preset = walkthroughPresets().find((p) => p.mode === 'qkv');
  const page = await open(`?preset=${preset.id}&step=3`); // step 3: the other dot products, score[0][1] first
  await page.getByRole('tab', { name: /Equations/ }).click();
  const lines = await page.$$eval('#walkthrough .aw-step-lines .aw-arith', (nodes) => nodes.map((n) => [...n.querySelectorAll('.aw-num')].map((x) => x.dataset.value)));
  const numbers = lines[0].map(parseShown);
  const { q, k } = preset.input;
  const result = engine.run(preset.input);
  const factors = q[0].flatMap((x, t) => [x, k[1][t]]);
  assert.deepEqual(numbers.slice(0, -1), factors);
  assert.equal(numbers.at(-1), result.scores[0][1]);
  // Every query row has a score among them.
  const highlighted = await page.$$eval('[data-matrix="q"] td.aw-in', (tds) => tds.map((td) => td.dataset.row));
  assert.deepEqual([...new Set(highlighted)], q.map((_, i) => String(i)));
  await page.close();
});

test('a score step shows each product once, and its equation only in the Equations view, a choice that holds while stepping', async () => {
  const page = await open('?preset=cat-sat-mat&step=2');
  const { q, k } = presets.presets.find((p) => p.id === 'cat-sat-mat').input;
  const products = q[0].map((x, t) => `${x.toFixed(3)} \u00d7 ${k[0][t].toFixed(3)} = ${(x * k[0][t]).toFixed(3)}`);
  const visibleText = () => page.locator('#walkthrough .aw-stage').innerText();
  const tab = page.getByRole('tab', { name: /Equations/ });
  assert.equal(await tab.getAttribute('aria-selected'), 'false');
  assert.equal(await tab.textContent(), 'Equations (1)');
  let text = await visibleText();
  for (const product of products) assert.equal(text.split(product).length - 1, 1, `${product} once on screen`);
  assert.equal(await page.locator('#walkthrough .aw-step-lines').isVisible(), false);
  assert.doesNotMatch(text, /S\[cat, cat\] =/, 'the equation is not listed');
  await tab.click();
  assert.equal(await tab.getAttribute('aria-selected'), 'true');
  assert.equal(await page.locator('#walkthrough [role="tabpanel"]:not([hidden]) .aw-step-lines').count(), 1);
  assert.equal(await tab.getAttribute('aria-controls'),
      await page.locator('#walkthrough .aw-step-lines').evaluate((lines) => lines.closest('[role="tabpanel"]').id));
  text = await visibleText();
  assert.match(text, /S\[cat, cat\] = 1 \u00d7 1 \+ 0\.5 \u00d7 0\.5 \+ 0\.2 \u00d7 0\.2 \+ 0\.8 \u00d7 0\.8 = 1\.930/);
  for (const product of products) assert.equal(text.split(product).length - 1, 0, `${product} not in the figure, now hidden`);
  // Stepping on keeps the view: the scaling step lists its nine equations.
  await page.click('#walkthrough .aw-stage-button:text-is("Scale")');
  assert.equal(await tab.getAttribute('aria-selected'), 'true');
  assert.equal(await tab.textContent(), 'Equations (9)');
  assert.equal(await page.locator('#walkthrough .aw-step-lines .aw-arith').count(), 9);
  await page.getByRole('tab', { name: 'Figure' }).click();
  await page.click('#walkthrough .aw-back');
  assert.equal(await tab.getAttribute('aria-selected'), 'false');
  assert.equal(await page.locator('#walkthrough .aw-step-lines .aw-arith').count(), 0);
  await page.close();
});

test('the Markdown and LaTeX copied from the page hold every equation of a step, though the page lists none', async () => {
  const page = await session.newPage();
  await page.addInitScript(() => {
    window.copied = [];
    Object.defineProperty(navigator, 'clipboard', { value: { writeText: async (text) => { window.copied.push(text); } } });
  });
  await page.goto(`${session.origin}/index.html?preset=cat-sat-mat&step=4`);
  await page.waitForSelector('html[data-ready="true"]');
  assert.equal(await page.locator('#walkthrough .aw-step-lines .aw-arith').count(), 0);
  const { q, k } = presets.presets.find((p) => p.id === 'cat-sat-mat').input;
  // Every score ÷ √4, as the exports print them (shortest, 4 decimals at most).
  const dot = (a, b) => a.reduce((sum, x, t) => sum + x * b[t], 0);
  const scaled = q.flatMap((row) => k.map((key) => Number((dot(row, key) / 2).toFixed(4))));
  for (const [button, equation] of [['.aw-copy-markdown', /^- scaled\\\[.*\\\] = `.* ÷ √4 = (\S+)`$/], ['.aw-copy-latex', /^\\item scaled\[.*\] = \$.*\\sqrt\{4\} = (\S+)\$$/]]) {
    await page.evaluate(() => { window.copied.length = 0; });
    await page.click(`#walkthrough ${button}`);
    await page.waitForFunction(() => window.copied.length === 1);
    const copied = await page.evaluate(() => window.copied[0]);
    const step = copied.slice(copied.indexOf('Step 4.'), copied.indexOf('Step 5.'));
    const values = step.split('\n').map((line) => equation.exec(line)).filter(Boolean).map((match) => Number(match[1]));
    assert.deepEqual(values, scaled, `${button}: the nine scaled scores`);
  }
  await page.close();
});

test('editing a cell recomputes every downstream value and keeps the step', async () => {
  const preset = walkthroughPresets().find((p) => p.mode === 'qkv');
  const page = await open(`?preset=${preset.id}&step=1`);
  const count = await stepCount(page);
  const step = count - 1; // an output row: weights, V and output on screen
  await page.goto(`${session.origin}/index.html?preset=${preset.id}&step=${step}`);
  await page.waitForSelector('html[data-ready="true"]');
  const cell = page.locator('#walkthrough .aw-editor').filter({ hasText: 'Q' }).first().locator('input').first();
  await cell.fill('2.5');
  const q = structuredClone(preset.input.q);
  q[0][0] = 2.5;
  const expected = expectedMatrices(preset, { ...preset.input, q });
  const shown = await shownState(page);
  assert.equal(shown.counter, `${step} / ${count}`);
  assertMatricesMatch(shown, expected, 'after the edit');
  const heat = await page.$$eval('#walkthrough .aw-heatmap:not([hidden]) .aw-heat-cell', (cells) => cells.map((c) => c.getAttribute('aria-label')));
  assert.ok(heat.some((label) => label.includes(String(expected.weights[0][0]))), 'heatmap shows the new weights');
  assert.match(await page.textContent('#walkthrough .aw-errata-summary'), /not for edited inputs/);
  // The matrices off screen at the edit show its values when a step shows them.
  const earlier = await page.evaluate(`(() => {
    const read = ${readShown.toString()};
    const back = document.querySelector('#walkthrough .aw-back');
    const states = [];
    for (let i = 1; i < ${step}; i++) { back.click(); states.push(read()); }
    return states;
  })()`);
  assert.equal(earlier.at(-1).counter, `1 / ${count}`);
  for (const state of earlier) assertMatricesMatch(state, expected, `after the edit, at step ${state.counter}`);
  await page.close();
});

test('chapter 1\u2019s \u201cTry this\u201d speaks of its example only while that example\u2019s own numbers are shown, and Reset to the example brings it back', async () => {
  const page = await open('?preset=cat-sat-mat&step=2');
  const tries = page.locator('#walkthrough .try-this li');
  const elsewhere = page.locator('#walkthrough .try-this-elsewhere');
  await tries.first().waitFor();
  assert.match(await tries.first().textContent(), /cat/);
  assert.equal(await elsewhere.isVisible(), false);

  // Change the numbers is open on a wide screen.
  await page.locator('#walkthrough .aw-editor').filter({ hasText: 'Q' }).first().locator('input').first().fill('2');
  await elsewhere.waitFor();
  assert.match(await elsewhere.textContent(), /^The tries for this chapter follow the example \u201ccat sat mat\u201d with its own numbers/);
  assert.equal(await tries.first().isVisible(), false);

  // Reset to the example: its own numbers again, and the address drops the edited ones.
  await page.click('#walkthrough .aw-reset');
  await tries.first().waitFor();
  assert.equal(await elsewhere.isVisible(), false);
  await page.waitForFunction(() => !new URLSearchParams(location.search).has('v'));

  await page.selectOption('#walkthrough .aw-preset-label select', 'three-tokens');
  await elsewhere.waitFor();
  await page.close();
});

test('the address reproduces a view, including edited values', async () => {
  const preset = walkthroughPresets().find((p) => p.mode === 'projections') ?? walkthroughPresets()[0];
  const page = await open(`?preset=${preset.id}&step=4`);
  assert.equal((await shownState(page)).counter.split(' / ')[0], '4');
  const labels = page.locator('#walkthrough .aw-token-input');
  await labels.first().fill('hello');
  const firstEditor = page.locator('#walkthrough .aw-editor input').first();
  await firstEditor.fill('0.25');
  await page.click('#walkthrough .aw-forward');
  const url = page.url();
  assert.match(url, /[?&]v=/);
  const before = await shownState(page);
  const again = await session.newPage();
  await again.goto(url);
  await again.waitForSelector('html[data-ready="true"]');
  assert.deepEqual(await shownState(again), before);
  assert.equal(await again.inputValue('#walkthrough .aw-token-input'), 'hello');
  await again.close();
  await page.close();
});

test('a step past the end shows the last step; an unknown preset says so and shows the default; a multi-head preset points to its section', async () => {
  const preset = walkthroughPresets()[0];
  const page = await open(`?preset=${preset.id}&step=9999`);
  const count = await stepCount(page);
  assert.equal((await shownState(page)).counter, `${count} / ${count}`);
  assert.match(page.url(), new RegExp(`step=${count}(&|$)`));
  await page.goto(`${session.origin}/index.html?preset=no-such-example&step=2`);
  await page.waitForSelector('html[data-ready="true"]');
  assert.match(await page.textContent('#walkthrough .aw-message'), /no example called \u201cno-such-example\u201d/);
  assert.equal(await page.inputValue('#walkthrough .aw-preset'), presets.default);
  await page.goto(`${session.origin}/index.html?preset=shapes-512-8`);
  await page.waitForSelector('html[data-ready="true"]');
  assert.match(await page.textContent('#walkthrough .aw-message'), /it is shown in the Multi-head attention section below/);
  await page.close();
});

test('errata appear on their step and in the preset\u2019s list', async () => {
  const handled = /^(heads\.0\.)?(scores|scaled|weights|output|weightsPercent)$|^(output|terms|exp|sum)_row\d+$|^terms$/;
  for (const vector of vectors.filter((v) => v.errata?.length)) {
    const preset = walkthroughPresets().find((p) => JSON.stringify(p.input) === JSON.stringify(vector.input));
    if (!preset) continue;
    const page = await open(`?preset=${preset.id}`);
    const items = await page.$$eval('#walkthrough .aw-errata-items li', (lis) => lis.map((li) => li.textContent));
    const shown = vector.errata.filter((e) => handled.test(e.field));
    // The one-head vector prints its output twice (head 1's and, through
    // W_O = I, the final one); the page lists it once.
    const distinct = new Set(shown.map((e) => `${e.field.replace(/^heads\.0\./, '')}${JSON.stringify(e.index)}`));
    assert.equal(items.length, distinct.size, `${preset.id}: ${items.length} errata listed, ${distinct.size} expected`);
    for (const erratum of shown) {
      const sentence = `the exact value is ${threeDecimals(erratum.exact)}`;
      assert.ok(items.some((text) => text.includes('the tutorial prints') && text.includes(sentence)),
                `${preset.id}: erratum ${erratum.field}${JSON.stringify(erratum.index)} listed`);
    }
    if (items.length > 0) {
      await page.evaluate(() => document.querySelector('#walkthrough .aw-errata-items li button').click());
      // A misprint as a callout, a rounding difference in the step's quiet line.
      assert.ok((await page.$$('#walkthrough .aw-step-errata :is(.aw-erratum, .aw-rounding)')).length > 0, `${preset.id}: the step shows its erratum`);
    }
    await page.close();
  }
});

// The errata of a vector of tests/vectors, each with its cause found from
// that file alone: a rounding difference is printed within one unit of the
// last printed digit of the exact value rounded to those decimals, and
// follows no misprint of an earlier stage of its row (a weight in percent
// restates its weight, and takes its weight's cause); everything else is a misprint.
const STAGES = { scores: 0, scaled: 1, exp: 2, sum: 2, weights: 2, weightsPercent: 2, terms: 3, output: 3 };
function causesFromVector(vector) {
  const decimalsOf = (field, index) => {
    const table = vector.printedDecimals;
    let found = typeof table === 'number' ? table : table[field] ?? table[field.replace(/^heads\.0\./, '')];
    for (const k of index) found = Array.isArray(found) ? found[k] : found;
    return found;
  };
  const seen = new Map();
  for (const erratum of vector.errata) {
    const field = erratum.field.replace(/^heads\.0\./, '');
    const key = `${field}${JSON.stringify(erratum.index)}`;
    if (seen.has(key)) continue;
    const rowKey = /^(\w+)_row(\d+)$/.exec(field);
    const name = rowKey ? rowKey[1] : field;
    const row = rowKey ? Number(rowKey[2]) : erratum.index.length > 1 ? erratum.index[0] : 0;
    const unit = 10 ** -decimalsOf(erratum.field, erratum.index);
    // One unit off, and from an exact value within 5% of its size of the rounding boundary (tests/vectors/README.md).
    const within = Math.abs(erratum.printed - erratum.exactRounded) <= unit + 1e-12
      && Math.abs(erratum.printed - erratum.exact) - unit / 2 <= 0.05 * Math.abs(erratum.exact) + 1e-12;
    seen.set(key, { name, row, stage: STAGES[name], within, index: erratum.index });
  }
  const items = [...seen.values()];
  const misprintStage = new Map();
  for (const item of items) {
    if (item.within || item.name === 'weightsPercent') continue;
    misprintStage.set(item.row, Math.min(misprintStage.get(item.row) ?? Infinity, item.stage));
  }
  const restatesErratum = (item) => item.name === 'weightsPercent'
    && items.some((other) => other.name === 'weights' && JSON.stringify(other.index) === JSON.stringify(item.index));
  return items.map((item) => ({ ...item,
    cause: item.within && !restatesErratum(item) && !((misprintStage.get(item.row) ?? Infinity) < item.stage) ? 'rounding' : 'misprint' }));
}

test('a step shows its misprints as callouts and its rounding differences as one quiet line, counted as tests/vectors counts them', async () => {
  const handled = /^(heads\.0\.)?(scores|scaled|weights|output|weightsPercent)$|^(output|terms|exp|sum)_row\d+$|^terms$/;
  let checked = 0;
  for (const vector of vectors.filter((v) => v.errata?.length)) {
    const preset = walkthroughPresets().find((p) => JSON.stringify(p.input) === JSON.stringify(vector.input));
    if (!preset) continue;
    const causes = causesFromVector({ ...vector, errata: vector.errata.filter((e) => handled.test(e.field)) });
    const page = await open(`?preset=${preset.id}&step=1`);
    const count = await stepCount(page);
    const perStep = await page.evaluate(`(() => {
      const forward = document.querySelector('#walkthrough .aw-forward');
      const read = () => ({
        callouts: document.querySelectorAll('#walkthrough .aw-step-errata > .aw-erratum').length,
        rounding: document.querySelector('#walkthrough .aw-step-errata .aw-rounding-summary')?.textContent ?? '',
      });
      const states = [read()];
      for (let i = 1; i < ${count}; i++) { forward.click(); states.push(read()); }
      return states;
    })()`);
    let rounding = 0;
    let callouts = 0;
    perStep.forEach((state, n) => {
      if (state.rounding) {
        const match = /^(\d+) last-digit rounding differences?$/.exec(state.rounding);
        assert.ok(match, `${preset.id} step ${n + 1}: ${state.rounding}`);
        rounding += Number(match[1]);
      }
      callouts += state.callouts;
    });
    assert.equal(rounding, causes.filter((c) => c.cause === 'rounding').length, `${preset.id}: rounding differences`);
    assert.equal(callouts, causes.filter((c) => c.cause === 'misprint').length, `${preset.id}: misprints`);
    checked += rounding;
    if (preset.id === 'cat-sat-mat') {
      // The output row of cat: two outputs and two products printed a digit off, no misprint.
      assert.deepEqual(perStep[6], { callouts: 0, rounding: '4 last-digit rounding differences' });
      assert.deepEqual(perStep[2], { callouts: 2, rounding: '' }, 'each misprinted score stays a callout of its own');
    }
    if (preset.id === 'three-tokens') assert.deepEqual(perStep[5], { callouts: 1, rounding: '5 last-digit rounding differences' });
    await page.close();
  }
  assert.ok(checked >= 10, `only ${checked} rounding differences checked`);
  // The quiet line opens to list them, with what rounding means.
  const page = await open('?preset=cat-sat-mat&step=7');
  const line = page.locator('#walkthrough .aw-rounding');
  assert.equal(await line.locator('li').first().isVisible(), false);
  await line.locator('summary').click();
  assert.equal(await line.locator('li').count(), 4);
  assert.match(await line.textContent(), /output\[cat\]\[2\]: the tutorial prints 0\.530; the exact value is 0\.529\./);
  assert.match(await line.textContent(), /rounded to the printed decimals give or take one unit in the last digit/);
  await page.close();
});

test('each example lists the tutorial\u2019s other claims about it, and the list follows the example', async () => {
  const claimsOf = (id) => presets.claims.filter((claim) => claim.shownIn === `preset:${id}`).map((claim) => claim.id);
  const shownClaims = (page) => page.$$eval('#walkthrough .aw-claims-slot .aw-claim', (items) => items.map((item) => item.dataset.claim));
  const page = await open('?preset=three-tokens');
  assert.deepEqual(await shownClaims(page), claimsOf('three-tokens'));
  assert.match(await page.textContent('#walkthrough [data-claim="c000-printed-weights-rows-sum-to-one"]'), /Does not hold: the second row of the printed weights, 0\.21 \+ 0\.39 \+ 0\.39, sums to 0\.99\./);
  await page.selectOption('#walkthrough .aw-preset', 'practical-rows');
  assert.deepEqual(await shownClaims(page), claimsOf('practical-rows'));
  await page.selectOption('#walkthrough .aw-preset', 'softmax-1-2-3');
  assert.deepEqual(await shownClaims(page), []);
  assert.equal(await page.$$eval('#walkthrough .aw-claims', (boxes) => boxes.length), 0);
  await page.close();
});

test('a bad entry shows its message at the cell and keeps the last good state', async () => {
  const preset = walkthroughPresets().find((p) => p.mode === 'qkv');
  const page = await open(`?preset=${preset.id}&step=2`);
  const before = await shownState(page);
  const cell = page.locator('#walkthrough .aw-editor input').first();
  await cell.fill('abc');
  assert.match(await page.textContent('#walkthrough .aw-cell-error'), /\u201cabc\u201d is not a number/);
  assert.equal(await cell.getAttribute('aria-invalid'), 'true');
  assert.deepEqual(await shownState(page), before);
  await cell.fill('');
  assert.match(await page.textContent('#walkthrough .aw-cell-error'), /Empty/);
  assert.deepEqual(await shownState(page), before);
  const size = page.locator('#walkthrough .aw-size-input').first();
  await size.fill('0');
  await size.press('Enter');
  await size.dispatchEvent('change');
  assert.match(await page.textContent('#walkthrough .aw-field-error'), /whole number from 1/);
  assert.deepEqual(await shownState(page), before);
  await cell.fill('1');
  assert.equal(await page.$('#walkthrough .aw-cell-error'), null);
  await page.click('#walkthrough .aw-forward');
  assert.equal((await shownState(page)).counter.split(' / ')[0], '3');
  await page.close();
});

test('keyboard alone steps through the walkthrough', async () => {
  const page = await open(`?preset=${walkthroughPresets()[0].id}&step=1`);
  let focused = '';
  for (let i = 0; i < 40 && !focused.includes('aw-forward'); i++) {
    await page.keyboard.press('Tab');
    focused = await page.evaluate(() => document.activeElement?.className ?? '');
  }
  assert.ok(focused.includes('aw-forward'), 'Tab reaches the step-forward button');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Space');
  assert.equal((await shownState(page)).counter.split(' / ')[0], '3');
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Enter'); // step back
  assert.equal((await shownState(page)).counter.split(' / ')[0], '2');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, 'none', 'the focused control shows its focus');

  // Arrow keys move between the cells of a matrix editor and of a heatmap.
  await page.focus('#walkthrough .aw-editor input');
  await page.keyboard.press('ArrowDown');
  assert.match(await page.evaluate(() => document.activeElement.id), /-1-0$/);
  await page.keyboard.press('End');
  await page.keyboard.press('ArrowRight');
  assert.match(await page.evaluate(() => document.activeElement.id), /-1-1$/);
  // The Heatmaps view, two tabs on from the Figure with the arrow keys.
  await page.focus('#walkthrough [role="tab"][aria-selected="true"]');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Heatmaps');
  await page.focus('#walkthrough .aw-heatmap:not([hidden]) .aw-heat-cell[tabindex="0"]');
  await page.keyboard.press('ArrowRight');
  const focusedCell = await page.evaluate(() => [document.activeElement.dataset.row,
      document.activeElement.dataset.col]);
  assert.deepEqual(focusedCell, ['0', '1']);
  // It names the cell; its value only once the step that computes it has come.
  assert.match(await page.textContent('#walkthrough .aw-heatmap-detail'), /query \S+, key \S+(: not computed yet| = )/);
  await page.close();
});

test('hovering a computed heatmap cell shows how the engine computed it, at the editor\u2019s largest size too', async () => {
  const preset = walkthroughPresets().find((p) => p.id === 'cat-sat-mat');
  const page = await open(`?preset=${preset.id}&step=999`);
  await page.locator('#walkthrough').getByRole('tab', { name: 'Heatmaps' }).click();
  // The engine's own equation for the cell, from its whole step list, as the page writes equations as text.
  const expectedHow = async (problem, name, i, j) => {
    const steps = engine.walkthrough(engineInput(problem)).steps.steps;
    const equation = steps.flatMap((step) => step.equations ?? [])
      .findLast(({ chain }) => String(chain.at(-1).ref) === String([name, i, j]));
    return equationText(equation, { isInput: (ref) => Boolean(ref) && ['q', 'k', 'v'].includes(ref[0]) });
  };
  const hover = async (name, i, j) => {
    const cell = page.locator(`#walkthrough [data-matrix="${name}"] .aw-heat-cell[data-row="${i}"][data-col="${j}"]`);
    await cell.hover();
    return { label: await cell.getAttribute('aria-label'), detail: await page.textContent('#walkthrough .aw-heatmap-detail') };
  };
  let problem = problemFromPreset(preset);
  const check = async (cells) => {
    for (const [name, i, j] of cells) {
      const { label, detail } = await hover(name, i, j);
      assert.equal(detail, `${label}. ${await expectedHow(problem, name, i, j)}`, `${name}[${i}][${j}]`);
      // Read as the page shows numbers, then exactly: "= 0.277 (exactly 0.2772468087523051)", but "= 0.54".
      const exact = engine.run({ ...engineInput(problem) })[name][i][j];
      const minus = (text) => text.replace('-', '\u2212');
      const read = Number(exact.toFixed(3)) === exact ? minus(String(exact))
        : `${minus(exact.toFixed(3))} (exactly ${minus(String(exact))})`;
      assert.ok(label.endsWith(` = ${read}`), `${name}[${i}][${j}]: ${label}`);
    }
  };
  await check([['weights', 1, 2], ['scaled', 2, 0]]);
  // The editor's largest size, as a learner sets it, one size at a time.
  for (const [label, key, size] of [['Tokens (T)', 'T', 12], ['d_k', 'dk', 16], ['d_v', 'dv', 16]]) {
    const field = page.locator('#walkthrough label.aw-size', { hasText: label }).locator('input');
    await field.fill(String(size));
    await field.press('Enter');
    problem = resized(problem, { ...dimsOf(problem), [key]: size });
  }
  await page.waitForSelector('#walkthrough [data-matrix="weights"] .aw-heat-cell[data-row="11"][data-col="11"]');
  await check([['weights', 11, 3], ['scaled', 7, 10], ['weights', 0, 0]]);
  await page.close();
});

test('playback pauses while the animation is off screen and resumes when it is back', async () => {
  const page = await open(`?preset=${walkthroughPresets()[0].id}&step=1`);
  await page.setViewportSize({ width: 1280, height: 600 });
  // Playing starts in view, whatever the height of the page's header.
  await page.evaluate(() => document.querySelector('#walkthrough .aw-stage').scrollIntoView());
  await page.click('#walkthrough .aw-play');
  assert.equal(await page.getAttribute('#walkthrough .aw-play', 'aria-label'), 'Pause');
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await page.waitForFunction(() => document.querySelector('#walkthrough .aw-play').getAttribute('aria-label') === 'Play');
  await page.evaluate(() => document.querySelector('#walkthrough .aw-stage').scrollIntoView());
  await page.waitForFunction(() => document.querySelector('#walkthrough .aw-play').getAttribute('aria-label') === 'Pause');
  await page.click('#walkthrough .aw-play');
  assert.equal(await page.getAttribute('#walkthrough .aw-play', 'aria-label'), 'Play');
  await page.close();
});

test('with prefers-reduced-motion the steps change without transitions', async () => {
  const page = await session.newPage();
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(`${session.origin}/index.html?preset=${walkthroughPresets()[0].id}&step=2`);
  await page.waitForSelector('html[data-ready="true"]');
  const durations = await page.$$eval('#walkthrough .aw-matrix:not([hidden]) td', (tds) => tds.map((td) => getComputedStyle(td).transitionDuration));
  assert.ok(durations.length > 0 && durations.every((d) => d === '0s'), durations.join());
  await page.close();
});

test('no console errors and no request leaves the origin', () => {
  session.assertQuiet();
});
