// Embedding and exporting, as a course site uses them: a host page on a
// second origin (another port) with hostile CSS embeds a widget by iframe
// (embed.html, sized by its height messages) and by the custom element (one
// script tag from the first origin); the "Embed this" snippets taken from
// the page show the same view on that origin; "Copy as Markdown" copies
// exactly what `build/attn --format markdown` prints for the same input; the
// heatmaps download as SVG and PNG. Nothing leaves the two local origins.
// Needs web/dist/ (make element) and build/attn (make).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadAttention } from '../../web/lib/attention-node.js';
import { presetInput } from '../../web/presets.js';
import { REPO, WEB_ROOT, startHost, startSession } from './harness.mjs';

const ATTN = join(REPO, 'build', 'attn');
const FIXTURES = join(REPO, 'tests', 'browser', 'fixtures');

let session;
let host;

const hostUrl = (name) => host.url(name);

before(async () => {
  session = await startSession({ viewport: { width: 1100, height: 900 } });
  const fixture = await readFile(join(FIXTURES, 'host.html'), 'utf8');
  host = await startHost(session, { 'host.html': fixture.replaceAll('WIDGET_ORIGIN', session.origin) });
});

after(async () => {
  await session?.close();
  await host?.close();
});

/** A host page from the second origin, loaded. */
async function openHost(name) {
  const page = await session.newPage();
  const response = await page.goto(hostUrl(name));
  assert.ok(response.ok(), `GET ${name}: HTTP ${response.status()}`);
  return page;
}

/** A page of the first origin whose clipboard writes are recorded in window.copied. */
async function openWithClipboard(path) {
  const page = await session.newPage();
  await page.addInitScript(() => {
    window.copied = [];
    Object.defineProperty(navigator, 'clipboard', {
      value: { writeText: async (text) => { window.copied.push(text); } },
    });
  });
  await page.goto(session.url(path));
  await page.waitForSelector('html[data-ready="true"]');
  return page;
}

async function iframeHeights(page) {
  return page.evaluate(() => {
    const frame = document.getElementById('frame');
    const last = window.heightMessages.at(-1);
    return { applied: frame.getBoundingClientRect().height, reported: last?.height, id: last?.id };
  });
}

async function innerScroll(frame) {
  return frame.evaluate(() => ({
    scrollHeight: document.documentElement.scrollHeight,
    clientHeight: document.documentElement.clientHeight,
  }));
}

// The embed's frame, once its iframe is in the page (page.frame() would give
// null while the iframe is still being attached).
async function embeddedFrame(page) {
  const iframe = await page.waitForSelector('iframe');
  return iframe.contentFrame();
}

test('an embed with only the player, asked for an example that does not exist, says so and shows the default', async () => {
  const page = await session.open('embed.html?widget=walkthrough&preset=cat-sat-matt&controls=player&layout=compact');
  await page.waitForSelector('html[data-ready="true"]');
  const message = page.locator('.aw-head .aw-message');
  assert.equal(await message.isVisible(), true);
  assert.match(await message.textContent(), /^There is no example called \u201ccat-sat-matt\u201d; showing \u201c/);
  assert.equal(await page.locator('.aw-preset').isVisible(), false, 'the menu stays hidden');
  await page.close();
});

test('an embed asked for a step past the example\u2019s last shows the last one and says so', async () => {
  const page = await session.open('embed.html?widget=walkthrough&preset=cat-sat-mat&step=40&controls=player');
  await page.waitForSelector('html[data-ready="true"]');
  const [shown, count] = (await page.locator('.aw-counter').textContent()).split(' / ').map(Number);
  assert.equal(shown, count);
  assert.equal(await page.locator('.aw-head .aw-message').textContent(),
    `There is no step 40: this example has steps 1 to ${count}; showing step ${count}.`);
  await page.close();
});

test('an unscaled softmax shows its input at the step that reads it, in the iframe, the element and ae.show\u2019s script', async () => {
  const presets = JSON.parse(await readFile(join(WEB_ROOT, 'presets.json'), 'utf8'));
  const engine = await loadAttention();
  const exact = engine.run(presetInput(presets.presets.find((preset) => preset.id === 'softmax-100-95'))).scaled;
  const page = await session.newPage();
  const shownInput = async (shown) => {
    const matrix = shown.locator('[data-matrix="scaled"].aw-matrix');
    await matrix.waitFor();
    return matrix.locator('.aw-num').evaluateAll((cells) => cells.map((cell) => Number(cell.dataset.value)));
  };
  await page.goto(session.url('embed.html?widget=walkthrough&preset=softmax-100-95&step=2'));
  await page.waitForSelector('html[data-ready="true"]');
  assert.equal(await page.locator('.aw-step-title').textContent(), '2. The largest entry');
  assert.deepEqual(await shownInput(page), exact, 'in the iframe\u2019s page');
  const element = '<attention-walkthrough preset="softmax-100-95" step="2"></attention-walkthrough>';
  await page.setContent(`<script src="${session.url('dist/attention-walkthrough.js')}"></script>${element}`);
  await page.waitForSelector('attention-walkthrough[data-ready="true"]');
  assert.deepEqual(await shownInput(page), exact, 'in the element');
  await page.close();
  // ae.show writes the element and the notebook build of its script, inline, into a cell of a page of its own.
  const notebook = await readFile(join(WEB_ROOT, 'dist', 'attention-notebook.js'), 'utf8');
  const cell = await openHostWith('notebook-cell.html', `<!doctype html><title>A notebook</title>${element}<script>${notebook}</script>`);
  await cell.waitForSelector('attention-walkthrough[data-ready="true"]');
  assert.deepEqual(await shownInput(cell), exact, 'in the element, by the notebook\u2019s script');
  await cell.close();
  session.assertQuiet();
});

test('an iframe on another origin shows the widget at its step, steps, and takes the height of its content', async () => {
  const page = await openHost('host.html');
  const frame = await embeddedFrame(page);
  await frame.waitForSelector('html[data-ready="true"]');
  const counter = frame.locator('.aw-counter');
  assert.match(await counter.textContent(), /^2 \/ \d+$/);
  await frame.locator('.aw-forward').click();
  assert.match(await counter.textContent(), /^3 \/ \d+$/);

  // The host applied the reported height: the iframe shows all of it, no scrollbar.
  await page.waitForFunction(() => window.heightMessages.length > 0
    && Math.abs(document.getElementById('frame').getBoundingClientRect().height - window.heightMessages.at(-1).height) < 1);
  const first = await iframeHeights(page);
  assert.equal(first.id, 'frame-1');
  assert.ok(first.reported > 300, `reported ${first.reported} px, more than the snippet's first 300 px`);
  let inside = await innerScroll(frame);
  assert.ok(inside.scrollHeight <= inside.clientHeight, `no inner scrollbar: ${JSON.stringify(inside)}`);

  // Six tokens instead of three: taller matrices and heatmaps, a taller iframe.
  const tokens = frame.locator('.aw-size-input').first();
  await tokens.fill('6');
  await tokens.dispatchEvent('change');
  await page.waitForFunction((before) => window.heightMessages.at(-1).height > before
    && Math.abs(document.getElementById('frame').getBoundingClientRect().height - window.heightMessages.at(-1).height) < 1,
  first.reported);
  const second = await iframeHeights(page);
  assert.ok(second.applied > first.applied, `grew from ${first.applied} to ${second.applied} px`);
  inside = await innerScroll(frame);
  assert.ok(inside.scrollHeight <= inside.clientHeight, `no inner scrollbar after growing: ${JSON.stringify(inside)}`);
  // Only changes are reported: no two messages in a row with the same height.
  const heights = await page.evaluate(() => window.heightMessages.map((m) => m.height));
  assert.ok(heights.every((h, i) => i === 0 || h !== heights[i - 1]), `heights ${heights}`);
  await page.close();
  session.assertQuiet();
});

test('the custom element on another origin keeps its own look under hostile CSS, and steps', async () => {
  const page = await openHost('host.html');
  const element = page.locator('#element');
  await page.waitForSelector('#element[data-ready="true"]');
  const counter = element.locator('.aw-counter');
  assert.match(await counter.textContent(), /^2 \/ \d+$/);
  await element.locator('.aw-forward').click();
  // Under load the counter may follow the click a moment later: wait for it (the assertion says what it shows).
  await counter.filter({ hasText: /^3 \/ \d+$/ }).waitFor().catch(() => {});
  assert.match(await counter.textContent(), /^3 \/ \d+$/);

  const looks = await page.evaluate(() => {
    const el = document.getElementById('element');
    const root = el.shadowRoot.querySelector('.aw-root');
    const button = el.shadowRoot.querySelector('.aw-forward');
    const style = getComputedStyle(root);
    const heading = getComputedStyle(el.shadowRoot.querySelector('.aw-step-title'));
    return {
      inShadow: root.getRootNode() === el.shadowRoot,
      display: getComputedStyle(el).display,
      font: style.fontFamily,
      fontStyle: style.fontStyle,
      transform: heading.textTransform,
      spacing: heading.letterSpacing,
      background: style.backgroundColor,
      buttonSizing: getComputedStyle(button).boxSizing,
      buttonBorder: getComputedStyle(button).borderTopStyle,
      shown: [...el.shadowRoot.querySelectorAll('.aw-player-slot, .aw-edit, .aw-export, .aw-embed-btn, .aw-errata, .aw-head')]
        .filter((node) => getComputedStyle(node).display !== 'none').map((node) => node.className),
      width: root.getBoundingClientRect().width,
    };
  });
  assert.equal(looks.inShadow, true);
  assert.equal(looks.display, 'block');
  assert.match(looks.font, /system-ui/);
  assert.doesNotMatch(looks.font, /Comic/);
  assert.equal(looks.fontStyle, 'normal');
  assert.equal(looks.transform, 'none');
  assert.equal(looks.spacing, 'normal');
  assert.equal(looks.background, 'rgb(22, 27, 34)', 'theme="dark"');
  assert.equal(looks.buttonSizing, 'border-box');
  assert.equal(looks.buttonBorder, 'solid');
  assert.deepEqual(looks.shown, ['aw-player-slot', 'aw-edit'], 'controls="player,editor" shows just those');
  assert.ok(looks.width > 500, `the element fills its column (${looks.width} px)`);

  // Ours does not leak out: a host element with our class names keeps the host's look.
  const leaked = await page.evaluate(() => {
    const probe = document.createElement('div');
    probe.className = 'aw-root aw-message aw-btn';
    probe.textContent = 'host text';
    document.body.append(probe);
    const style = getComputedStyle(probe);
    const result = { font: style.fontFamily, radius: style.borderTopLeftRadius, leftBorder: style.borderLeftWidth };
    probe.remove();
    return result;
  });
  assert.match(leaked.font, /Comic/);
  assert.equal(leaked.radius, '0px');
  assert.equal(leaked.leftBorder, '2px', 'the host\u2019s dashed 2 px border, not our 4 px message bar');
  await page.close();
  session.assertQuiet();
});

test('"Embed this" gives snippets that show the same view, edits included, on a blank page of another origin', async () => {
  const page = await openWithClipboard('index.html?preset=cat-sat-mat&step=1');
  const walkthrough = page.locator('#walkthrough');
  const cell = walkthrough.locator('.aw-cell-input').first();
  await cell.fill('2.5');
  for (let i = 0; i < 4; i++) await walkthrough.locator('.aw-forward').click();
  const counterText = await walkthrough.locator('.aw-counter').textContent();
  const state = await page.evaluate(() => window.awWidgets.walkthrough.getState());
  assert.ok(state.values, 'the edit is part of the state');

  const opener = walkthrough.locator('.aw-embed-btn');
  await opener.click();
  const dialog = walkthrough.locator('.aw-embed-dialog');
  assert.equal(await dialog.evaluate((d) => d.open), true);
  assert.equal(await page.evaluate(() => document.activeElement.classList.contains('aw-embed-iframe')), true, 'focus moved into the dialog');
  const iframeSnippet = await dialog.locator('.aw-embed-iframe').inputValue();
  const elementSnippet = await dialog.locator('.aw-embed-element').inputValue();
  await dialog.locator('.aw-embed-copy').first().click();
  assert.deepEqual(await page.evaluate(() => window.copied), [iframeSnippet]);
  await page.keyboard.press('Escape');
  assert.equal(await dialog.evaluate((d) => d.open), false, 'Escape closes the dialog');
  assert.equal(await opener.evaluate((b) => b === document.activeElement), true, 'focus is back on the button');

  await host.write('pasted-iframe.html', `<!doctype html><title>pasted</title>\n${iframeSnippet}\n`);
  await host.write('pasted-element.html', `<!doctype html><title>pasted</title>\n${elementSnippet}\n`);

  const framed = await openHost('pasted-iframe.html');
  const frame = await embeddedFrame(framed);
  await frame.waitForSelector('html[data-ready="true"]');
  assert.equal(await frame.locator('.aw-counter').textContent(), counterText);
  assert.deepEqual(await frame.evaluate(() => window.awWidget.getState()), state);
  // The snippet's default compact layout: 640 px, which the iframe already has.
  assert.equal(await frame.evaluate(() => document.querySelector('.aw-root').dataset.awLayout), 'compact');
  assert.equal(await framed.evaluate(() => document.querySelector('iframe').getBoundingClientRect().height), 640);
  await framed.close();

  const custom = await openHost('pasted-element.html');
  await custom.waitForSelector('attention-walkthrough[data-ready="true"]');
  assert.equal(await custom.locator('attention-walkthrough .aw-counter').textContent(), counterText);
  // The element counts steps from 1, as its step attribute does.
  assert.deepEqual(await custom.evaluate(() => document.querySelector('attention-walkthrough').widget.getState()), { ...state, step: state.step + 1 });
  await custom.evaluate(() => {
    const { widget } = document.querySelector('attention-walkthrough');
    widget.setState({ ...widget.getState(), step: 2 });
  });
  assert.match(await custom.locator('attention-walkthrough .aw-counter').textContent(), /^2 \//);
  await custom.close();

  // A section's whole state travels the same way.
  await session.mountSections(page);
  const masks = page.locator('#masks');
  await masks.locator('.aw-mask-cell[data-row="3"][data-col="1"]').click();
  const masksState = await page.evaluate(() => window.awWidgets.masks.getState());
  await masks.locator('.aw-embed-btn').click();
  const masksSnippet = await masks.locator('.aw-embed-element').inputValue();
  await page.keyboard.press('Escape');
  await host.write('pasted-masks.html', `<!doctype html><title>pasted</title>\n${masksSnippet}\n`);
  const masksPage = await openHost('pasted-masks.html');
  await masksPage.waitForSelector('attention-walkthrough[data-ready="true"]');
  assert.deepEqual(await masksPage.evaluate(() => document.querySelector('attention-walkthrough').widget.getState()), masksState);
  await masksPage.close();
  await page.close();
  session.assertQuiet();
});

test('the embed options (theme, autoplay, controls shown) rewrite both snippets, and the pasted embeds follow them', async () => {
  const page = await openWithClipboard('index.html?preset=causal-scores&step=3');
  const walkthrough = page.locator('#walkthrough');
  await walkthrough.locator('.aw-embed-btn').click();
  const dialog = walkthrough.locator('.aw-embed-dialog');
  assert.match(await dialog.locator('.aw-embed-element').inputValue(), / layout="compact" controls="player"/, 'compact, the player only, by default');
  await dialog.locator('.aw-embed-layout').selectOption('full');
  const plain = await dialog.locator('.aw-embed-element').inputValue();
  assert.doesNotMatch(plain, /layout=|theme=|controls=|autoplay=/, 'the full layout with everything adds no attribute');

  await dialog.locator('.aw-embed-theme').selectOption('dark');
  await dialog.locator('.aw-embed-control[value="editor"]').uncheck();
  await dialog.locator('.aw-embed-control[value="errata"]').uncheck();
  await dialog.locator('.aw-embed-autoplay').check();
  await dialog.locator('.aw-embed-autoplay').uncheck();
  const elementSnippet = await dialog.locator('.aw-embed-element').inputValue();
  const iframeSnippet = await dialog.locator('.aw-embed-iframe').inputValue();
  assert.match(elementSnippet, / controls="preset,player,export,embed" theme="dark"/);
  assert.match(iframeSnippet, /&amp;controls=preset%2Cplayer%2Cexport%2Cembed&amp;theme=dark"/);
  assert.doesNotMatch(elementSnippet + iframeSnippet, /autoplay/);
  await dialog.locator('.aw-embed-autoplay').check();
  assert.match(await dialog.locator('.aw-embed-element').inputValue(), / autoplay="1"/);
  for (const box of await dialog.locator('.aw-embed-control').all()) await box.uncheck();
  assert.match(await dialog.locator('.aw-embed-element').inputValue(), / controls="none"/);
  await page.keyboard.press('Escape');
  await page.close();

  // The widget's root in a page (inside the custom element's shadow root, or the iframe's document).
  const rootLook = (frameOrPage) => frameOrPage.evaluate(() => {
    const root = (document.querySelector('attention-walkthrough')?.shadowRoot ?? document).querySelector('.aw-root');
    return {
      theme: root.dataset.awTheme,
      hide: root.dataset.awHide,
      editor: root.querySelector('.aw-edit').checkVisibility(),
      player: root.querySelector('.aw-player-slot').checkVisibility(),
    };
  });
  await host.write('options-element.html', `<!doctype html><title>pasted</title>\n${elementSnippet}\n`);
  await host.write('options-iframe.html', `<!doctype html><title>pasted</title>\n${iframeSnippet}\n`);
  const expected = { theme: 'dark', hide: 'editor errata', editor: false, player: true };

  const custom = await openHost('options-element.html');
  await custom.waitForSelector('attention-walkthrough[data-ready="true"]');
  assert.deepEqual(await rootLook(custom), expected);
  await custom.close();

  const framed = await openHost('options-iframe.html');
  const frame = await embeddedFrame(framed);
  await frame.waitForSelector('html[data-ready="true"]');
  assert.deepEqual(await rootLook(frame), expected);
  await framed.close();
  session.assertQuiet();
});

function cli(format, input) {
  return execFileSync(ATTN, ['--format', format], { input: JSON.stringify(input), encoding: 'utf8' });
}

test('"Copy as Markdown" copies what build/attn --format markdown prints for the same input, then the errata the page lists', async () => {
  const presets = ['cat-sat-mat', 'causal-scores', 'softmax-100-95', 'weighted-values', 'cat-sat-mat-projections', 'cross-attention'];
  const page = await openWithClipboard(`index.html?preset=${presets[0]}`);
  const walkthrough = page.locator('#walkthrough');
  for (const preset of presets) {
    await walkthrough.locator('.aw-preset').selectOption(preset);
    await page.evaluate(() => { window.copied.length = 0; });
    await walkthrough.locator('.aw-copy-markdown').click();
    await page.waitForFunction(() => window.copied.length === 1);
    const [copied, input] = await page.evaluate(() => [window.copied[0], window.awWidgets.walkthrough.exportInput()]);
    const engineText = cli('markdown', input);
    assert.equal(copied.slice(0, engineText.length), engineText, `${preset}: page and CLI Markdown`);
    // What follows is the page's errata list: one item per erratum it shows.
    const listed = await walkthrough.locator('.aw-errata-items li').count();
    const rest = copied.slice(engineText.length);
    if (listed === 0) assert.equal(rest, '', `${preset} has no errata`);
    else {
      assert.match(rest, new RegExp(`^\\n## Errata: ${listed} of the tutorial\u2019s printed values differ`));
      assert.equal(rest.split('\n').filter((line) => line.startsWith('- ')).length, listed);
    }
    if (preset === 'cat-sat-mat') {
      assert.ok(rest.includes('- scores\\[sat\\]\\[mat\\]: the tutorial prints 0.65; the exact value is 0.550. (step 3, Score of sat against mat)'), rest);
    }
    assert.match(await walkthrough.locator('.aw-export .aw-export-status').textContent(), /Markdown copied/);
  }
  await page.close();
  session.assertQuiet();
});

test('"Copy as LaTeX" copies what build/attn --format latex prints, then the errata', async (t) => {
  if (spawnSync(ATTN, ['--format', 'latex'], { input: '{"kind":"softmax","x":[1,2]}' }).status !== 0) {
    t.skip('build/attn has no LaTeX format yet');
    return;
  }
  const page = await openWithClipboard('index.html?preset=cat-sat-mat');
  const walkthrough = page.locator('#walkthrough');
  await walkthrough.locator('.aw-copy-latex').click();
  await page.waitForFunction(() => window.copied.length === 1);
  const [copied, input] = await page.evaluate(() => [window.copied[0], window.awWidgets.walkthrough.exportInput()]);
  const engineText = cli('latex', input);
  assert.equal(copied.slice(0, engineText.length), engineText);
  const rest = copied.slice(engineText.length);
  assert.match(rest, /^\n\\subsubsection\*\{Errata: \d+ of the tutorial's printed values differ from the exact ones\}/);
  assert.ok(rest.includes('  \\item scores[sat][mat]: the tutorial prints 0.65; the exact value is 0.550. (step 3, Score of sat against mat)'), rest);
  assert.equal(rest.split('\\begin{itemize}').length, rest.split('\\end{itemize}').length);
  await page.close();
  session.assertQuiet();
});

test('each heatmap downloads as an SVG with its styles inlined and as a PNG', async () => {
  const page = await session.open('index.html?preset=cat-sat-mat&step=5');
  await page.waitForSelector('html[data-ready="true"]');
  await page.getByRole('tab', { name: 'Heatmaps' }).click();
  const figure = page.locator('#walkthrough .aw-heatmap').filter({ hasText: 'Attention weights' });
  const [svgDownload] = await Promise.all([page.waitForEvent('download'), figure.getByRole('button', { name: 'Download SVG of Attention weights', exact: true }).click()]);
  assert.equal(svgDownload.suggestedFilename(), 'attention-weights.svg');
  const svg = await readFile(await svgDownload.path(), 'utf8');
  assert.match(svg, /^<svg[^>]* xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(svg, /style="fill: ?rgb\(/, 'computed fills inlined');
  assert.doesNotMatch(svg, /class="/);
  const [pngDownload] = await Promise.all([page.waitForEvent('download'), figure.getByRole('button', { name: 'Download PNG of Attention weights', exact: true }).click()]);
  assert.equal(pngDownload.suggestedFilename(), 'attention-weights.png');
  const png = await readFile(await pngDownload.path());
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const width = png.readUInt32BE(16);
  const svgWidth = Number(/width="(\d+(?:\.\d+)?)"/.exec(svg)[1]);
  assert.equal(width, Math.round(svgWidth * 2), 'drawn at twice the size');
  await page.close();
  session.assertQuiet();
});

// A page of the second origin holding `html`, loaded (for hosts a test writes).
async function openHostWith(name, html) {
  await host.write(name, html.replaceAll('WIDGET_ORIGIN', session.origin));
  return openHost(name);
}

test('an iframe sandboxed with allow-scripts only still takes the height of its content', async () => {
  const fixture = await readFile(join(FIXTURES, 'host.html'), 'utf8');
  const page = await openHostWith('sandboxed.html', fixture.replace('<iframe id="frame"', '<iframe id="frame" sandbox="allow-scripts"'));
  const frame = await embeddedFrame(page);
  await frame.waitForSelector('html[data-ready="true"]');
  // The iframe's origin is "null", and so is its messages': the listener knows it by its window.
  await page.waitForFunction(() => window.heightMessages.length > 0
    && Math.abs(document.getElementById('frame').getBoundingClientRect().height - window.heightMessages.at(-1).height) < 1);
  const { applied } = await iframeHeights(page);
  assert.ok(applied > 300, `the iframe grew to ${applied} px`);
  await page.close();
});

test('keys typed inside the custom element do not reach the host page\u2019s own key handlers', async () => {
  const fixture = await readFile(join(FIXTURES, 'host.html'), 'utf8');
  // A slide deck's handler: arrows and Space change the slide.
  const deck = '<script>window.hostKeys = []; document.addEventListener("keydown", function (e) { window.hostKeys.push(e.key); });</script>';
  const page = await openHostWith('deck.html', fixture.replace('</body>', `${deck}</body>`));
  await page.waitForSelector('#element[data-ready="true"]');
  const element = page.locator('#element');
  const cell = element.locator('.aw-editor input').first();
  await cell.click();
  await cell.press('Control+a');
  await page.keyboard.type('0.5');
  assert.equal(await cell.inputValue(), '0.5', 'the cell took every key, the point too');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press(' ');
  await element.locator('.aw-scrubber').focus();
  await page.keyboard.press('ArrowRight');
  assert.match(await element.locator('.aw-counter').textContent(), /^3 \/ \d+$/);
  assert.deepEqual(await page.evaluate(() => window.hostKeys), [], 'the host saw none of them');
  // Outside the element the host still gets its keys.
  await page.locator('h1').click();
  await page.keyboard.press('ArrowRight');
  assert.deepEqual(await page.evaluate(() => window.hostKeys), ['ArrowRight']);
  await page.close();
});

test('the compact embed keeps one height at every step, fits a 1280 × 720 slide, and needs no script to be sized', async () => {
  const page = await openWithClipboard('index.html?preset=cat-sat-mat&step=1');
  const walkthrough = page.locator('#walkthrough');
  await walkthrough.locator('.aw-embed-btn').click();
  const iframeSnippet = await walkthrough.locator('.aw-embed-iframe').inputValue();
  const elementSnippet = await walkthrough.locator('.aw-embed-element').inputValue();
  await page.close();
  // A slide: 1280 × 720, the iframe alone, its sizing script stripped by the host.
  const tagOnly = iframeSnippet.slice(0, iframeSnippet.indexOf('<script>'));
  await host.write('slide.html', `<!doctype html><title>slide</title><body style="margin:0">\n${tagOnly}\n</body>\n`);
  const slide = await session.newPage();
  await slide.setViewportSize({ width: 1280, height: 720 });
  await slide.goto(hostUrl('slide.html'));
  const frame = await embeddedFrame(slide);
  await frame.waitForSelector('html[data-ready="true"]');
  const count = Number((await frame.locator('.aw-counter').textContent()).split(' / ')[1]);
  const heights = new Set();
  for (let step = 1; step <= count; step++) {
    const box = await frame.evaluate(() => ({
      content: Math.ceil(document.getElementById('embed').getBoundingClientRect().height),
      scroll: document.documentElement.scrollHeight,
      client: document.documentElement.clientHeight,
    }));
    heights.add(box.content);
    assert.ok(box.scroll <= box.client, `step ${step}: nothing hidden below the iframe (${JSON.stringify(box)})`);
    if (step < count) await frame.locator('.aw-forward').click();
  }
  assert.deepEqual([...heights], [640], 'one height at every step');
  assert.equal(await slide.evaluate(() => document.querySelector('iframe').getBoundingClientRect().height), 640);
  // What shows: the player, the stages and the step; not the editor, the errata or the buttons.
  const shown = await frame.evaluate(() => ['.aw-player-slot', '.aw-stages', '.aw-stage', '.aw-edit', '.aw-errata', '.aw-share']
    .map((selector) => document.querySelector(selector).checkVisibility()));
  assert.deepEqual(shown, [true, true, true, false, false, false]);
  await slide.close();

  // The custom element in the compact layout: the same one height.
  await host.write('slide-element.html', `<!doctype html><title>slide</title>\n${elementSnippet}\n`);
  const custom = await openHost('slide-element.html');
  await custom.waitForSelector('attention-walkthrough[data-ready="true"]');
  const element = custom.locator('attention-walkthrough');
  const elementHeights = new Set();
  for (let step = 1; step <= count; step++) {
    elementHeights.add(Math.round((await element.boundingBox()).height));
    if (step < count) await element.locator('.aw-forward').click();
  }
  assert.equal(elementHeights.size, 1, `heights ${[...elementHeights]}`);
  await custom.close();
  session.assertQuiet();
});
