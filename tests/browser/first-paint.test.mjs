// The walkthrough's first screen is in index.html, drawn at build time from
// the native engine's build of the default example
// (scripts/build-first-screen.mjs): it reads with no script at all, at a
// desktop's width and a phone's, and the live walkthrough takes its place
// without a frame that lacks the figure and without moving anything.
//
// Expected numbers come from the WebAssembly engine (web/lib/attention.js)
// loaded in Node, run on the default example's input here in the test.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadAttention } from '../../web/lib/attention-node.js';
import { problemFromPreset } from '../../web/widgets/walkthrough-problem.js';
import { engineInput } from '../../web/widgets/walkthrough-steps.js';
import { WEB_ROOT, parseShown, startSession } from './harness.mjs';

let session;
let input;
let outline;

before(async () => {
  const engine = await loadAttention();
  const presets = JSON.parse(await readFile(join(WEB_ROOT, 'presets.json'), 'utf8'));
  input = engineInput(problemFromPreset(presets.presets.find((preset) => preset.id === presets.default)));
  outline = engine.walkthrough(input, { equations: false }).steps;
  session = await startSession();
});

after(async () => {
  await session?.close();
});

// What the first screen on show reads: its step's title and sentence, the
// numbers of Q in its matrix and in its figure's bars, and its counter.
const readFirstScreen = (page) => page.evaluate(() => {
  const shown = [...document.querySelectorAll('.aw-first-screen')].filter((copy) => copy.checkVisibility());
  if (shown.length !== 1) return { shown: shown.length };
  const [copy] = shown;
  return {
    shown: 1,
    width: copy.dataset.width,
    title: copy.querySelector('.aw-step-title').textContent,
    text: copy.querySelector('.aw-step-text').textContent,
    counter: copy.querySelector('.aw-counter').textContent,
    matrix: [...copy.querySelectorAll('.aw-mats [data-matrix="q"] tbody td')].map((td) => td.textContent),
    bars: [...copy.querySelectorAll('.aw-fig [data-tensor="q"] [data-value]')].map((bar) => bar.dataset.value),
    figure: copy.querySelector('.aw-view-figure .aw-fig').checkVisibility(),
  };
});

for (const [width, viewport] of [['wide', { width: 1440, height: 900 }], ['phone', { width: 375, height: 812 }]]) {
  test(`with no script running, the page at ${viewport.width} px shows the default example's first step with the engine's numbers`, async () => {
    const context = await session.context.browser().newContext({ javaScriptEnabled: false, viewport });
    try {
      const page = await context.newPage();
      await page.goto(session.url('index.html'));
      const screen = await readFirstScreen(page);
      const [first] = outline.steps;
      assert.equal(screen.shown, 1, 'one copy of the first screen shows');
      assert.equal(screen.width, width);
      assert.equal(screen.title, `1. ${first.title}`);
      assert.equal(screen.text, first.text.join(' '));
      assert.equal(screen.counter, `1 / ${outline.steps.length}`);
      assert.ok(screen.figure, 'the step\u2019s figure is on show');
      assert.deepEqual(screen.bars.map(Number), input.q.flat(), 'the figure\u2019s bars are Q\u2019s numbers');
      if (width === 'wide') assert.deepEqual(screen.matrix.map(parseShown), input.q.flat(), 'Q\u2019s matrix shows its numbers');
    } finally {
      await context.close();
    }
  });
}

// Every frame from the first: whether it had the step's figure, and the
// layout shifts inside the walkthrough (what moved), until the walkthrough
// drawn from the build has taken the first screen's place.
function recordFrames() {
  window.__frames = [];
  window.__shifts = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const moved = entry.sources?.filter((source) => source.node?.closest?.('#walkthrough-widget')) ?? [];
      if (moved.length > 0) window.__shifts.push(moved.map((source) => source.node.className).join(', '));
    }
  }).observe({ type: 'layout-shift', buffered: true });
  const frame = () => {
    const figure = document.querySelector('#walkthrough-widget .aw-view-figure .aw-fig');
    window.__frames.push(Boolean(figure?.checkVisibility()));
    if (!document.documentElement.dataset.ready) requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}

test('the live walkthrough takes the first screen\u2019s place with its figure in every frame and nothing moved', async () => {
  // A first visit: a tab of its own, not one the harness kept from an earlier
  // test, whose renderer has the page's fonts already (then the overview's
  // stages shifted once as the takeover drew them: a warm tab's case, open).
  const page = await session.context.newPage();
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.addInitScript(recordFrames);
  // The engine held back: the takeover is the walkthrough drawn from the build.
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await page.route('**/*.wasm', async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(session.url('index.html'));
  await page.waitForSelector('html[data-ready="built"]');
  await page.waitForSelector('.aw-first-screen', { state: 'detached' });
  const { frames, shifts } = await page.evaluate(() => ({ frames: window.__frames, shifts: window.__shifts }));
  // The frames before the parser reaches the first screen may show the page's top alone.
  const from = frames.indexOf(true);
  assert.ok(from >= 0, 'a frame with the figure');
  assert.deepEqual(frames.slice(from).filter((had) => !had), [], `a frame without the figure: ${frames.join(' ')}`);
  assert.deepEqual(shifts, [], 'no layout shift in the walkthrough');
  release();
  await page.waitForSelector('html[data-ready="true"]');
  // The live walkthrough's own step, in the place the first screen held.
  assert.equal(await page.locator('#walkthrough .aw-step-title').textContent(), `1. ${outline.steps[0].title}`);
  await page.close();
  session.assertQuiet();
});

test('an address that asks for another example or step never shows the default\u2019s first screen', async () => {
  for (const query of ['?preset=it-animal', '?preset=cat-sat-mat&step=5', `?v=${encodeURIComponent('{"q":[[1]]}')}`]) {
    const page = await session.newPage();
    // The page's scripts never run here: what the first paint would show stays.
    await page.route('**/dist/page/app.js', (route) => route.abort());
    await page.goto(session.url(`index.html${query}`));
    assert.equal((await readFirstScreen(page)).shown, 0, query);
    await page.close();
  }
  session.clear();
});
